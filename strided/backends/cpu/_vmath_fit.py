"""Development tool (not imported at run time): fit the polynomials of ``_vmath.py``.

Each polynomial interpolates its target function at Chebyshev nodes in 60-digit arithmetic
(mpmath), which comes within a small factor of the minimax error; the coefficients are rounded to
float64 and the error of the rounded polynomial is measured on a dense grid.  Run::

    python -m strided.backends.cpu._vmath_fit

and paste the printed tuples into ``_vmath.py`` (highest degree first, as Horner's rule uses them).
``python -m strided.backends.cpu._vmath_fit --pow-table`` writes ``_vmath_tables.py`` (pow's log).
"""

from __future__ import annotations

import struct
import sys
from pathlib import Path

import mpmath as mp
import numpy as np

mp.mp.dps = 60


def _exp_p(r):  # exp(r) = 1 + r + r^2 P(r)
    return (mp.exp(r) - 1 - r) / r**2


def _log_r(z):  # log((1+s)/(1-s)) = 2s + s z P(z), z = s^2
    s = mp.sqrt(z)
    return (mp.log((1 + s) / (1 - s)) - 2 * s) / (s * z)


def _sin_s(z):  # sin(r) = r + r z P(z)
    r = mp.sqrt(z)
    return (mp.sin(r) - r) / (r * z)


def _cos_c(z):  # cos(r) = 1 - z/2 + z^2 P(z)
    r = mp.sqrt(z)
    return (mp.cos(r) - 1 + z / 2) / z**2


def _atan_p(z):  # atan(t) = t + t z P(z)
    t = mp.sqrt(z)
    return (mp.atan(t) - t) / (t * z)


LN2 = mp.log(2)
TAN_PI_8 = mp.tan(mp.pi / 8)

# name -> (target, interval, degree, full function of the variable and P for the error check)
FITS = {
    "EXP_P": (_exp_p, (-LN2 / 2, LN2 / 2), 9, lambda r, p: (1 + r + r * r * p, mp.exp(r))),
    "LOG_P": (
        _log_r,
        (mp.mpf(0), (3 - 2 * mp.sqrt(2)) ** 2),
        6,
        lambda z, p: (2 * mp.sqrt(z) + mp.sqrt(z) * z * p, 2 * mp.atanh(mp.sqrt(z))),
    ),
    "SIN_P": (
        _sin_s,
        (mp.mpf(0), (mp.pi / 4) ** 2),
        6,
        lambda z, p: (mp.sqrt(z) + mp.sqrt(z) * z * p, mp.sin(mp.sqrt(z))),
    ),
    "COS_P": (
        _cos_c,
        (mp.mpf(0), (mp.pi / 4) ** 2),
        6,
        lambda z, p: (1 - z / 2 + z * z * p, mp.cos(mp.sqrt(z))),
    ),
    "ATAN_P": (
        _atan_p,
        (mp.mpf(0), TAN_PI_8**2),
        10,
        lambda z, p: (mp.sqrt(z) + mp.sqrt(z) * z * p, mp.atan(mp.sqrt(z))),
    ),
}


def _odd_p(f):  # f(a) = a + a z P(z), z = a^2: P(z) = (f(a) / a - 1) / z
    def target(z):
        a = mp.sqrt(z)
        return (f(a) / a - 1) / z

    return target


def _odd_check(f):
    return lambda z, p: (mp.sqrt(z) + mp.sqrt(z) * z * p, f(mp.sqrt(z)))


FITS["SINH_P"] = (_odd_p(mp.sinh), (mp.mpf(0), mp.mpf(1)), 6, _odd_check(mp.sinh))
FITS["ASIN_P"] = (_odd_p(mp.asin), (mp.mpf(0), mp.mpf("0.25")), 12, _odd_check(mp.asin))
# float32 versions (shorter: the error is measured against float64 ulp, print / 2**29 for float32)
# 2^f = 1 + f Q(f) for float32 pow's exp2 (an odd degree: no Chebyshev node at f = 0)
FITS["F_EXP2_Q"] = (
    lambda f: (mp.power(2, f) - 1) / f,
    (mp.mpf("-0.5"), mp.mpf("0.5")),
    5,
    lambda f, p: (1 + f * p, mp.power(2, f)),
)
FITS["F_ATAN_P"] = (FITS["ATAN_P"][0], FITS["ATAN_P"][1], 4, FITS["ATAN_P"][3])
FITS["F_SINH_P"] = (FITS["SINH_P"][0], FITS["SINH_P"][1], 3, FITS["SINH_P"][3])
FITS["F_TANH_P"] = (_odd_p(mp.tanh), (mp.mpf(0), mp.mpf("0.55") ** 2), 4, _odd_check(mp.tanh))
FITS["F_TAN_P"] = (_odd_p(mp.tan), (mp.mpf(0), (mp.pi / 4) ** 2), 6, _odd_check(mp.tan))
FITS["F_ASIN_P"] = (_odd_p(mp.asin), (mp.mpf(0), mp.mpf("0.25")), 4, _odd_check(mp.asin))


def _log_base_p(base):  # log_b(1 + f) = f / ln(b) + f^2 P(f): float32 logs without a division
    c = 1 / mp.log(base)
    return (
        lambda f: (mp.log1p(f) * c - c * f) / f**2,
        (mp.sqrt(mp.mpf("0.5")) - 1, mp.sqrt(2) - 1),
        9,
        lambda f, p: (c * f + f * f * p, mp.log1p(f) * c),
    )


FITS["F_ASINH_P"] = (_odd_p(mp.asinh), (mp.mpf(0), mp.mpf("0.53") ** 2), 5, _odd_check(mp.asinh))
FITS["F_ATANH_P"] = (_odd_p(mp.atanh), (mp.mpf(0), mp.mpf("0.25")), 5, _odd_check(mp.atanh))
FITS["F_LOGE_P"] = _log_base_p(mp.e)
FITS["F_LOG2_P"] = _log_base_p(2)
FITS["F_LOG10_P"] = _log_base_p(10)


def fit(fn, lo, hi, degree):
    """Monomial coefficients (lowest first) interpolating fn at degree+1 Chebyshev nodes."""
    n = degree + 1
    nodes = [
        (lo + hi) / 2 + (hi - lo) / 2 * mp.cos(mp.pi * (2 * k + 1) / (2 * n)) for k in range(n)
    ]
    a = mp.matrix([[x**j for j in range(n)] for x in nodes])
    b = mp.matrix([fn(x) for x in nodes])
    c = mp.lu_solve(a, b)
    return [float(c[j]) for j in range(n)]


def max_rel_error(coeffs, full, lo, hi, points=2000):
    worst = mp.mpf(0)
    for i in range(1, points):
        x = lo + (hi - lo) * i / points
        p = mp.mpf(0)
        for c in reversed(coeffs):
            p = p * x + mp.mpf(c)
        got, want = full(x, p)
        if want:
            worst = max(worst, abs((got - want) / want))
    return worst


def _f2b(x: float) -> int:
    return struct.unpack("<q", struct.pack("<d", x))[0]


def _b2f(i: int) -> float:
    return struct.unpack("<d", struct.pack("<q", i))[0]


def pow_table(off: int = 0x3FE6A00000000000, bits: int = 7):
    """Rows of pow's log table (``_vmath._pow_log``): 1/c and log(c) for each interval of z.

    Each 1/c is the centre's reciprocal moved by at most 2^-20 relative (irrelevant to |r|) until
    -log(1/c) is a float64 to 12 further bits, so the table needs no low part of log(c); the
    interval holding 1.0 gets 1/c = 1 exactly.  Returns (invc, logc, |r| bound).
    """
    n, shift = 1 << bits, 52 - bits
    one = ((_f2b(1.0) - off) >> shift) & (n - 1)
    invc, logc, rmax = [], [], mp.mpf(0)
    for i in range(n):
        lo, hi = _b2f(off + (i << shift)), _b2f(off + ((i + 1) << shift))
        ic = 1.0
        if i != one:
            centre = float(2 / (mp.mpf(lo) + mp.mpf(hi)))
            rng = np.random.default_rng(i)
            while True:
                # a random double near the centre: whole-ulp steps from it would not do, as the
                # centre has few bits and log's residual would cycle through few values
                ic = centre * (1.0 + rng.uniform(-(2.0**-20), 2.0**-20))
                value = -mp.log(mp.mpf(ic))
                if abs(value - float(value)) <= mp.mpf(2) ** -12 * float(
                    np.spacing(abs(float(value)))
                ):
                    break
        invc.append(ic)
        logc.append(float(-mp.log(mp.mpf(ic))))
        rmax = max(rmax, abs(mp.mpf(lo) * ic - 1), abs(mp.mpf(hi) * ic - 1))
    return invc, logc, rmax


def _log1p_q(r):  # log1p(r) = r - r^2/2 + r^3 Q(r)
    return (mp.log1p(r) - r + r * r / 2) / r**3


def write_pow_table(path: Path) -> None:
    invc, logc, rmax = pow_table()
    bound = rmax * mp.mpf("1.02")
    q = fit(_log1p_q, -bound, bound, 7)
    err = max_rel_error(
        q, lambda r, p: (r - r * r / 2 + r**3 * p, mp.log1p(r)), -bound, bound, points=4001
    )
    lines = [
        '"""Generated by ``python -m strided.backends.cpu._vmath_fit --pow-table``: do not edit.',
        "",
        "pow's log table (``_vmath._pow_log``): 1/c and log(c) = -log(1/c) for 128 intervals",
        f"of the reduced argument (|r| <= {mp.nstr(rmax, 6)}), and Q of",
        f"log1p(r) = r - r^2/2 + r^3 Q(r) (relative error {mp.nstr(err, 3)}).",
        '"""',
        "",
        "import numpy as np",
        "",
        "POW_INVC = np.array([" + ", ".join(repr(v) for v in invc) + "])",
        "POW_LOGC = np.array([" + ", ".join(repr(v) for v in logc) + "])",
        "POW_LOG_Q = (" + ", ".join(repr(c) for c in reversed(q)) + ")",
        "",
    ]
    path.write_text("\n".join(lines))


def main() -> None:
    if "--pow-table" in sys.argv:
        write_pow_table(Path(__file__).with_name("_vmath_tables.py"))
        return
    for name, (fn, (lo, hi), degree, full) in FITS.items():
        coeffs = fit(fn, lo, hi, degree)
        err = max_rel_error(coeffs, full, lo, hi)
        ulp = mp.nstr(err / 2**-53, 3)
        print(f"# relative error of the approximation {mp.nstr(err, 3)} ({ulp} ulp)")
        print(f"{name} = (")
        for c in reversed(coeffs):
            print(f"    {c!r},")
        print(")")


if __name__ == "__main__":
    main()
