"""Development tool (not imported at run time): fit the polynomials of ``_vmath.py``.

Each polynomial interpolates its target function at Chebyshev nodes in 60-digit arithmetic
(mpmath), which comes within a small factor of the minimax error; the coefficients are rounded to
float64 and the error of the rounded polynomial is measured on a dense grid.  Run::

    python -m strided.backends.cpu._vmath_fit

and paste the printed tuples into ``_vmath.py`` (highest degree first, as Horner's rule uses them).
"""

from __future__ import annotations

import mpmath as mp

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
# float32 versions (shorter: the error is measured against float64 ulp, print / 2**29 for float32)
FITS["F_ATAN_P"] = (FITS["ATAN_P"][0], FITS["ATAN_P"][1], 4, FITS["ATAN_P"][3])


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


def main() -> None:
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
