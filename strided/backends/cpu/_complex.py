"""Complex elementwise functions for the CPU kernels: the standard's special cases, no spurious
overflow or underflow.

Every function here takes the parts of ``z = x + yj`` as float64 and returns a complex128;
complex64 input is widened, computed in double precision and rounded once (``unary``/``binary``
pick this at compile time).  The algorithms:

* special values (infinities, NaN, signed zeros) follow C99 Annex G (G.6), which the array API
  standard lists function by function; they are decided before the finite formulas run;
* products and quotients, without branches so that their loops vectorise: a quotient is Smith's
  on operands scaled to magnitude ~1 by powers of two taken from their exponent bits (exact) and
  scaled back once, which is the unscaled quotient bit for bit wherever that one neither over- nor
  underflows (``1 / (1e308 + 1e308j)`` is ``5e-309 - 5e-309j``, not 0); a product is the textbook
  one wherever its part is finite, elsewhere that part of the product of operands scaled by 2^-600
  (where their finite parts exceed 2^500), scaled back: an overflowed finite product loses to a
  genuine infinity and ``(1e300 + 1e300j)**2`` is ``inf j``; integer powers carry every part's
  exponent separately through the repeated squaring;
* ``log``: ``log(hypot(x, y))``, with ``0.5 * log1p((a - 1)(a + 1) + b * b)`` near ``|z| = 1``
  and power-of-two scaling for huge and subnormal ``|z|``; ``sqrt``: Kahan's
  ``t = sqrt((|x| + |z|) / 2)`` with scaling by powers of 4;
* ``tanh``: Kahan's formulation (``tan``, ``sinh`` and ``sqrt(1 + sinh^2)``, "Branch cuts for
  complex elementary functions", 1987); ``sinh``/``cosh`` beyond ``exp``'s range scale
  ``exp(|x|)`` by a power of two so that ``cosh(x) sin(y)`` stays finite where it is;
* ``asin``/``acos``/``acosh``: Kahan's (1987) formulas through ``sqrt(1 - z)`` and
  ``sqrt(1 + z)``, which need no cancellation-prone step; ``log(2z)`` beyond 2^60 (the relative
  error of that asymptote is below 2^-120) and ``z`` itself below 2^-27; ``atanh``: Kahan's
  ``log1p(4x / |1 - z|^2) / 4`` with ``(log|1 + z| - log|1 - z|) / 2`` near ``z = 1``;
* ``sin``, ``cos``, ``tan``, ``asin``, ``atan``, ``asinh`` through the hyperbolic functions, as
  the standard defines them (``sin(z) = -i sinh(iz)`` ...).

All of it is compiled with ``fastmath=False`` and ``error_model="numpy"``: the kernels are compiled
with FMA contraction, which numba would otherwise pass on to these functions (``x*x - y*y`` as an
FMA gives ``-inf`` for ``(MAX + MAXj)**2``), and the Python error model raises ZeroDivisionError.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, types
from numba.extending import overload

from . import _vmath as V
from ._vmath import _bits, _from_bits

_C = dict(fastmath=False, error_model="numpy")
# inlined in numba IR: the loops of multiply and divide vectorise only without calls
_ALWAYS = dict(_C, inline="always")

INF = math.inf
PI = math.pi
HALF_PI = math.pi / 2
LN2 = math.log(2.0)
INV_LN2 = 1.0 / math.log(2.0)
INV_LN10 = 1.0 / math.log(10.0)
# ln 2 split so that k * LN2_HI is exact for |k| < 2^20 (Cody and Waite's reduction)
LN2_HI = 6.93147180369123816490e-01
LN2_LO = 1.90821492927058770002e-10
BIG = 2.0**500  # beyond this, products and squares of parts may overflow
SMALL = 2.0**-500  # below this, they may underflow
ASYMPTOTIC = 2.0**60  # |z| beyond which asin/acos/... are log(2z) to double precision
UP = 2.0**600
DOWN = 2.0**-600
TINY = 2.0**-27  # |z| below which asin/asinh/atan/atanh(z) round to z


@njit(**_C)
def _fin(v):
    return v - v == 0.0  # False for infinities and NaN


# -- scaled building blocks ------------------------------------------------------------------
@njit(**_C)
def _exp_mul(x, t, e):
    """exp(x) * t * 2^e without the overflow of exp(x) alone (x up to ~1450 with a tiny t)."""
    if x < 709.0:
        return math.ldexp(math.exp(x) * t, e)
    k = 1000 if x < 1400.0 else 2000
    r = (x - k * LN2_HI) - k * LN2_LO
    return math.ldexp(math.exp(r) * t, k + e)


@njit(**_C)
def _log_abs(x, y):
    """log(|x + yj|), accurate near |z| = 1 and for huge and subnormal |z|."""
    a = abs(x)
    b = abs(y)
    if a < b:
        a, b = b, a
    if a > BIG:
        if a == INF:
            return INF  # NaN in the other part too (C99: hypot(inf, nan) is inf)
        return math.log(math.hypot(a * 0.25, b * 0.25)) + 2.0 * LN2
    if a < SMALL:
        # subnormal parts: hypot would round |z| to a few bits; 2^600 is exact
        return math.log(math.hypot(a * 2.0**600, b * 2.0**600)) - 600.0 * LN2
    if 0.5 <= a <= 2.0:
        # |z|^2 - 1 = (a - 1)(a + 1) + b^2: a - 1 is exact here, log1p keeps the small result
        return 0.5 * math.log1p((a - 1.0) * (a + 1.0) + b * b)
    return math.log(math.hypot(a, b))


# -- branch-free scaling (the loops of multiply and divide stay vectorisable) ----------------------
@njit(**_ALWAYS)
def _scale_exp(m):
    """j such that m * 2^j lies in [1, 4) (m >= 0 normal), [2^-51, 1) for subnormal m; 0 for
    infinities and NaN, which stay as they are.  Integer operations on the exponent bits."""
    f = (_bits(m) >> 52) & 0x7FF
    j = 1023 - f
    j = j if j > -1022 else np.int64(-1022)
    return j if f != 0x7FF else np.int64(0)


@njit(**_ALWAYS)
def _fin_abs(v):
    """|v| for finite v, 0 for infinities and NaN (whose scaling changes nothing)."""
    return abs(v) if v - v == 0.0 else 0.0


@njit(**_ALWAYS)
def _p2(k):
    """2^k for an integer k in [-1022, 1023], from the exponent bits."""
    return _from_bits((k + 1023) << 52, 1.0)


@njit(**_ALWAYS)
def _times_p2(v, k):
    """v * 2^k for an integer k in [-2046, 2046], rounded once (in two exact halves, each within
    the normal exponents: k below -2044 is taken as -2044, which gives the same 0 for |v| < 2^900
    and keeps an infinite v infinite)."""
    k = k if k > -2044 else np.int64(-2044)
    h = k >> 1
    return v * _p2(h) * _p2(k - h)


# -- arithmetic -------------------------------------------------------------------------------
@njit(**_ALWAYS)
def cmul_fast(a, b, c, d):
    """(a + bj)(c + dj) without branches: the textbook product, and where a part of it is not
    finite, that part of the product of the operands scaled down by 2^-600 where their finite
    parts exceed 2^500 (exact), scaled back: an overflowed finite product is finite there, and a
    genuine infinity still wins over it ((1e300 + 1e300j)**2 is inf j, not NaN + inf j)."""
    re = a * c - b * d
    im = a * d + b * c
    bx = max(_fin_abs(a), _fin_abs(b)) > BIG
    by = max(_fin_abs(c), _fin_abs(d)) > BIG
    sx = DOWN if bx else 1.0
    sy = DOWN if by else 1.0
    a2, b2, c2, d2 = a * sx, b * sx, c * sy, d * sy
    fx = UP if bx else 1.0
    fy = UP if by else 1.0
    re2 = (a2 * c2 - b2 * d2) * fx * fy
    im2 = (a2 * d2 + b2 * c2) * fx * fy
    # a scaled part is NaN only where the scaling flushed a part 2^974 times smaller than the
    # other to zero and an infinity met it: the textbook value is the better one there
    re = re if (re - re == 0.0) | (re2 != re2) else re2
    im = im if (im - im == 0.0) | (im2 != im2) else im2
    return complex(re, im)


@njit(**_ALWAYS)
def cdiv_fast(a, b, c, d):
    """(a + bj) / (c + dj) without branches: Smith's quotient of the operands scaled to
    magnitude ~1 (exact powers of two), scaled back once, so that nothing over- or underflows on
    the way (1 / (1e308 + 1e308j) is 5e-309 - 5e-309j, not 0).  Where the operands need no
    scaling the result is Smith's quotient bit for bit; a zero divisor gives x / 0 part by part."""
    zero = (c == 0.0) & (d == 0.0)  # x / 0 part by part, unscaled
    jn = _scale_exp(max(_fin_abs(a), _fin_abs(b)))
    jd = _scale_exp(max(_fin_abs(c), _fin_abs(d)))
    jn = np.int64(0) if zero else jn
    jd = np.int64(0) if zero else jd
    sn = _p2(jn)
    sd = _p2(jd)
    a, b, c, d = a * sn, b * sn, c * sd, d * sd
    ac = abs(c)
    ad = abs(d)
    big = ac >= ad
    p = c if big else d
    q = d if big else c
    r = q / p
    t = 1.0 / (p + q * r)
    re = ((a + b * r) if big else (a * r + b)) * t
    im = ((b - a * r) if big else (b * r - a)) * t
    re = a * INF if zero else re  # a / +0 without a second division: +-inf, NaN for 0 and NaN
    im = b * INF if zero else im
    k = jd - jn
    return complex(_times_p2(re, k), _times_p2(im, k))


@njit(**_ALWAYS)
def _smith(a, b, c, d):
    """(a + bj) / (c + dj) by Smith's method; a zero divisor gives x / 0 part by part."""
    ac = abs(c)
    ad = abs(d)
    if ac >= ad:
        if ac == 0.0 and ad == 0.0:
            return complex(a / ac, b / ad)
        r = d / c
        t = 1.0 / (c + d * r)
        return complex((a + b * r) * t, (b - a * r) * t)
    r = c / d
    t = 1.0 / (c * r + d)
    return complex((a * r + b) * t, (b * r - a) * t)


# |z| and z / |z| without branches or libm calls, so that their loops vectorise (libm's hypot a
# call per element: 1M complex128 abs 8.0 ms against NumPy's 0.9).  Both go through the parts
# divided by the larger magnitude, which cannot overflow or underflow: |z| = big sqrt(1 + r^2)
# with r = small / big, NumPy's own formula (its SIMD loop; within 2 ulp); z / |z| =
# (x / big, y / big) / sqrt(1 + r^2), finite for every finite z (MAX + MAX j is r + r j).
@njit(**_ALWAYS)
def cabs_fast(x, y):
    """|x + yj|: inf where a part is infinite (a NaN in the other too, as C99's hypot), NaN
    where a part is NaN, the other part's magnitude where one is zero."""
    a = abs(x)
    b = abs(y)
    big = a if a > b else b  # (a NaN a gives big = b, small = NaN: NaN below)
    small = b if a > b else a
    r = small / (big if big > 0.0 else 1.0)
    h = big * math.sqrt(1.0 + r * r)
    return INF if (a == INF) | (b == INF) else h


@njit(**_ALWAYS)
def csign(x, y):
    """z / |z|: 0 for 0, NaN for NaN parts; along an infinite part its limit (NumPy's choice;
    NaN for two infinite parts)."""
    a = abs(x)
    b = abs(y)
    big = a if a > b else b
    small = b if a > b else a
    d = big if (big > 0.0) & (big < INF) else 1.0
    r = small / d
    s = math.sqrt(1.0 + r * r)
    re = (x / d) / s
    im = (y / d) / s
    xi = a == INF
    yi = b == INF
    re = math.copysign(1.0 if xi else 0.0, x) if xi | yi else re
    im = math.copysign(1.0 if yi else 0.0, y) if xi | yi else im
    both = xi & yi
    nan = (x != x) | (y != y)
    re = x + y if nan else (math.nan if both else re)
    im = x + y if nan else (math.nan if both else im)
    zero = (a == 0.0) & (b == 0.0)
    return complex(0.0 if zero else re, 0.0 if zero else im)


@njit(**_C)
def abs128(z):
    return cabs_fast(z.real, z.imag)


@njit(**_C)
def abs64(z):
    # float32 parts: their squares and sum are exact or rounded once in double precision, where
    # nothing overflows or underflows: one square root, rounded once more to float32
    x = np.float64(z.real)
    y = np.float64(z.imag)
    h = np.float32(math.sqrt(x * x + y * y))
    return np.float32(INF) if (abs(x) == INF) | (abs(y) == INF) else h


@njit(**_C)
def sign128(z):
    return csign(z.real, z.imag)


@njit(**_C)
def sign64(z):
    return np.complex64(csign(np.float64(z.real), np.float64(z.imag)))


@njit(**_C)
def _dot_exp(am, ae, bm, be, cm, ce, dm, de):
    """a*b + c*d for finite parts held as mantissa and exponent (v = m 2^e): returns (m, e)."""
    p = am * bm
    q = cm * dm
    pe = ae + be
    qe = ce + de
    if p == 0.0:
        m, e = math.frexp(q)
        return m, e + qe
    if q == 0.0:
        m, e = math.frexp(p)
        return m, e + pe
    k = max(pe, qe)
    m, e = math.frexp(math.ldexp(p, pe - k) + math.ldexp(q, qe - k))
    return m, e + k


@njit(**_C)
def _cpow_int(a, b, n):
    """(a + bj)^n for 0 < |n| <= 100 by repeated squaring, each part of every intermediate held
    with an exponent of its own (as mantissa and exponent): no part overflows or underflows
    before the end, whatever the other part does (the parts of z^n can differ by 600 orders).
    Non-finite z takes the plain products."""
    if not (_fin(a) and _fin(b)):
        r = _cpow_nat(a, b, abs(n))
        return cdiv_fast(1.0, 0.0, r.real, r.imag) if n < 0 else r
    pr, per = math.frexp(a)
    pi, pei = math.frexp(b)
    rr, rer, ri, rei = 1.0, 0, 0.0, 0
    first = True
    k = abs(n)
    while k > 0:
        if k & 1:
            if first:
                rr, rer, ri, rei = pr, per, pi, pei
                first = False
            else:
                xr, xer = _dot_exp(rr, rer, pr, per, -ri, rei, pi, pei)
                xi, xei = _dot_exp(rr, rer, pi, pei, ri, rei, pr, per)
                rr, rer, ri, rei = xr, xer, xi, xei
        k >>= 1
        if k > 0:
            xr, xer = _dot_exp(pr, per, pr, per, -pi, pei, pi, pei)
            xi, xei = _dot_exp(pr, per, pi, pei, pi, pei, pr, per)
            pr, per, pi, pei = xr, xer, xi, xei
    if n < 0:  # 1 / (r + s j) = (r - s j) / (r^2 + s^2), each part with its own exponent
        dm, de = _dot_exp(rr, rer, rr, rer, ri, rei, ri, rei)
        return complex(math.ldexp(rr / dm, rer - de), math.ldexp(-ri / dm, rei - de))
    return complex(math.ldexp(rr, rer), math.ldexp(ri, rei))


@njit(**_C)
def _cpow_nat(a, b, n):
    """(a + bj)^n for n >= 1 by repeated squaring."""
    k = n
    rr, ri = 1.0, 0.0
    pr, pi = a, b
    first = True  # the first factor is taken as it is: 1 * (inf + inf j) would give NaN
    while k > 0:
        if k & 1:
            if first:
                rr, ri = pr, pi
                first = False
            else:
                t = cmul_fast(rr, ri, pr, pi)
                rr, ri = t.real, t.imag
        k >>= 1
        if k > 0:
            t = cmul_fast(pr, pi, pr, pi)
            pr, pi = t.real, t.imag
    return complex(rr, ri)


@njit(**_C)
def cpow(a, b, c, d):
    """(a + bj) ** (c + dj) = exp((c + dj) log(a + bj)), with NumPy's conventions: x ** 0 is 1,
    0 ** w is 0 for Re(w) > 0 (NaN otherwise), small integer powers by repeated products."""
    if c == 0.0 and d == 0.0:
        return complex(1.0, 0.0)
    if a == 0.0 and b == 0.0:
        if c > 0.0:
            return complex(0.0, 0.0)
        return complex(math.nan, math.nan)
    if d == 0.0 and c == math.floor(c) and abs(c) <= 100.0:
        return _cpow_int(a, b, int(c))
    lr = _log_abs(a, b)
    li = math.atan2(b, a)
    w = cmul_fast(c, d, lr, li)
    return cexp(w.real, w.imag)


# -- exponential and logarithms ---------------------------------------------------------------
@njit(**_C)
def cexp(x, y):
    """exp(x + yj) = exp(x) cis(y) (C99 G.6.3.1)."""
    if y == 0.0:
        return complex(math.exp(x), y)  # NaN x keeps the zero; exp(1e300 + 0j) is inf + 0j
    if not _fin(y):
        if x == INF:
            return complex(x, y - y)
        if x == -INF:
            return complex(0.0, 0.0)
        return complex(y - y, y - y)
    if x != x:
        return complex(x, x)
    c = math.cos(y)
    s = math.sin(y)
    if x > 709.0:  # exp(x) overflows; exp(x) sin(y) may not
        return complex(_exp_mul(x, c, 0), _exp_mul(x, s, 0))
    e = math.exp(x)  # 0 for -inf: 0 cis(y) keeps the signs of cos and sin
    return complex(e * c, e * s)


@njit(**_C)
def cexpm1(x, y):
    """exp(z) - 1, accurate near 0: Re = expm1(x) cos(y) - 2 sin(y/2)^2."""
    if y == 0.0:
        # + 0.0: expm1(-0 + 0j) is exp(-0 + 0j) - 1 = +0 + 0j (the standard's table), not -0
        return complex(math.expm1(x) + 0.0, y)
    if not (_fin(x) and _fin(y)) or x > 700.0:
        e = cexp(x, y)
        return complex(e.real - 1.0, e.imag)
    h = math.sin(0.5 * y)
    return complex(math.expm1(x) * math.cos(y) - 2.0 * h * h, math.exp(x) * math.sin(y))


@njit(**_C)
def clog(x, y):
    """log|z| + arg(z) j (C99 G.6.3.2): atan2 gives every special case's angle."""
    return complex(_log_abs(x, y), math.atan2(y, x))


@njit(**_C)
def clog2(x, y):
    w = clog(x, y)
    return complex(w.real * INV_LN2, w.imag * INV_LN2)


@njit(**_C)
def clog10(x, y):
    w = clog(x, y)
    return complex(w.real * INV_LN10, w.imag * INV_LN10)


@njit(**_C)
def clog1p(x, y):
    """log(1 + z); near z = 0, log|1 + z| = log1p(x (2 + x) + y^2) / 2."""
    if _fin(x) and _fin(y) and abs(x) < 0.5 and abs(y) < 0.5:
        return complex(0.5 * math.log1p(x * (2.0 + x) + y * y), math.atan2(y, 1.0 + x))
    return clog(1.0 + x, y)


@njit(**_C)
def csqrt(x, y):
    """Kahan's square root: t = sqrt((|x| + |z|) / 2); (t, y / 2t) or (|y| / 2t, +-t)."""
    if y == INF or y == -INF:
        return complex(INF, y)
    if x != x:
        return complex(x, x)
    if x == INF:
        return complex(x, y - y if y != y else math.copysign(0.0, y))
    if x == -INF:
        if y != y:
            return complex(y, x)  # NaN + inf j (the sign of the infinity is unspecified)
        return complex(0.0, math.copysign(INF, y))
    if y != y:
        return complex(y, y)
    if x == 0.0 and y == 0.0:
        return complex(0.0, y)
    a = abs(x)
    m = max(a, abs(y))
    scale = 1.0
    if m > BIG:  # sqrt(z) = 2 sqrt(z / 4): |x| + |z| stays finite
        x *= 0.25
        y *= 0.25
        scale = 2.0
    elif m < SMALL:  # subnormal parts: hypot and y / 2t lose bits
        x *= 2.0**600
        y *= 2.0**600
        scale = 2.0**-300
    t = math.sqrt(0.5 * (abs(x) + math.hypot(x, y)))
    if x >= 0.0:
        return complex(t * scale, (0.5 * y / t) * scale)
    return complex((0.5 * abs(y) / t) * scale, math.copysign(t, y) * scale)


# -- hyperbolic and trigonometric functions --------------------------------------------------------
@njit(**_C)
def csinh(x, y):
    """sinh(x) cos(y) + cosh(x) sin(y) j (C99 G.6.2.5)."""
    if _fin(x) and _fin(y):
        if y == 0.0:
            return complex(math.sinh(x), y)
        if abs(x) < 22.0:
            return complex(math.sinh(x) * math.cos(y), math.cosh(x) * math.sin(y))
        # cosh(x) = sinh(|x|) = exp(|x|) / 2 in double precision
        ax = abs(x)
        sx = math.copysign(1.0, x)
        return complex(sx * _exp_mul(ax, math.cos(y), -1), _exp_mul(ax, math.sin(y), -1))
    if x == 0.0:  # y is inf or NaN
        return complex(x, y - y)
    if y == 0.0:  # x is inf or NaN
        return complex(x, y)
    if x == INF or x == -INF:
        if _fin(y):
            return complex(x * math.cos(y), INF * math.sin(y))
        return complex(x, y - y)
    return complex(x + (y - y), x + (y - y))  # NaN + NaN j


@njit(**_C)
def ccosh(x, y):
    """cosh(x) cos(y) + sinh(x) sin(y) j (C99 G.6.2.4)."""
    if _fin(x) and _fin(y):
        if y == 0.0:
            return complex(math.cosh(x), math.copysign(0.0, x) * y)
        if abs(x) < 22.0:
            return complex(math.cosh(x) * math.cos(y), math.sinh(x) * math.sin(y))
        ax = abs(x)
        sx = math.copysign(1.0, x)
        return complex(_exp_mul(ax, math.cos(y), -1), sx * _exp_mul(ax, math.sin(y), -1))
    if x == 0.0:  # y is inf or NaN
        return complex(y - y, 0.0)
    if y == 0.0:  # x is inf or NaN
        return complex(x * x, math.copysign(0.0, x) * y if x == x else y)
    if x == INF or x == -INF:
        if _fin(y):
            return complex(INF * math.cos(y), x * math.sin(y))
        return complex(INF, y - y)
    return complex(x + (y - y), x + (y - y))


@njit(**_C)
def ctanh(x, y):
    """Kahan's tanh: with t = tan(y), s = sinh(x), b = 1 + t^2,
    tanh(z) = (b s sqrt(1 + s^2) + t j) / (1 + b s^2)."""
    if not _fin(x):
        if x != x:
            return complex(x, y if y == 0.0 else x + y)
        return complex(math.copysign(1.0, x), math.copysign(0.0, y))  # the zero follows y
    if not _fin(y):
        return complex(x if x == 0.0 else y - y, y - y)
    if abs(x) >= 22.0:  # tanh(x) is +-1; the imaginary part is 4 sin(y) cos(y) exp(-2|x|)
        e = math.exp(-2.0 * abs(x))
        return complex(math.copysign(1.0, x), 4.0 * math.sin(y) * math.cos(y) * e)
    t = math.tan(y)
    b = 1.0 + t * t
    s = math.sinh(x)
    rho = math.sqrt(1.0 + s * s)
    den = 1.0 + b * s * s
    return complex(b * rho * s / den, t / den)


@njit(**_C)
def csin(x, y):
    w = csinh(-y, x)  # sin(z) = -i sinh(iz)
    return complex(w.imag, -w.real)


@njit(**_C)
def ccos(x, y):
    return ccosh(-y, x)  # cos(z) = cosh(iz)


@njit(**_C)
def ctan(x, y):
    w = ctanh(-y, x)  # tan(z) = -i tanh(iz)
    return complex(w.imag, -w.real)


# -- inverse functions ------------------------------------------------------------------------
@njit(**_C)
def _asin_finite(x, y):
    """Kahan's asin for finite z with TINY <= |z| <= ASYMPTOTIC:
    Re = atan2(x, Re(sqrt(1 - z) sqrt(1 + z))), Im = asinh(Im(conj(sqrt(1 - z)) sqrt(1 + z)))."""
    p = csqrt(1.0 - x, -y)
    q = csqrt(1.0 + x, y)
    re = math.atan2(x, p.real * q.real - p.imag * q.imag)
    im = math.asinh(p.real * q.imag - p.imag * q.real)
    return complex(re, im)


@njit(**_C)
def casinh(x, y):
    """asinh(z) = -i asin(iz) on finite z; C99 G.6.2.2 elsewhere."""
    if x != x:
        if y == 0.0:
            return complex(x, y)
        if y == INF or y == -INF:
            return complex(y, x)
        return complex(x, x)
    if y != y:
        if x == INF or x == -INF:
            return complex(x, y)
        return complex(y, y)
    m = max(abs(x), abs(y))
    if m > ASYMPTOTIC:  # log(2z), infinities included; asinh is odd
        return complex(math.copysign(_log_abs(x, y) + LN2, x), math.atan2(y, abs(x)))
    if m < TINY:
        return complex(x, y)
    w = _asin_finite(-y, x)
    return complex(w.imag, -w.real)


@njit(**_C)
def casin(x, y):
    w = casinh(-y, x)  # asin(z) = -i asinh(iz)
    return complex(w.imag, -w.real)


@njit(**_C)
def cacos(x, y):
    """Kahan's acos: Re = 2 atan2(Re sqrt(1 - z), Re sqrt(1 + z)),
    Im = asinh(Im(conj(sqrt(1 + z)) sqrt(1 - z))); C99 G.6.1.1 elsewhere."""
    if x != x:
        if y == INF or y == -INF:
            return complex(x, -y)
        return complex(x, x)
    if y != y:
        if x == INF or x == -INF:
            return complex(y, x)
        if x == 0.0:
            return complex(HALF_PI, y)
        return complex(y, y)
    m = max(abs(x), abs(y))
    if m > ASYMPTOTIC:  # -i log(2z) in the upper half-plane; conj below
        return complex(math.atan2(abs(y), x), -math.copysign(_log_abs(x, y) + LN2, y))
    if m < TINY:
        return complex(HALF_PI - x, -y)
    p = csqrt(1.0 - x, -y)
    q = csqrt(1.0 + x, y)
    return complex(2.0 * math.atan2(p.real, q.real), math.asinh(q.real * p.imag - q.imag * p.real))


@njit(**_C)
def cacosh(x, y):
    """acosh(z) = +-i acos(z), the sign making the real part non-negative (C99 G.6.2.1)."""
    if x != x and y != y:
        return complex(x, y)
    if y != y:
        if x == INF or x == -INF:
            return complex(INF, y)
        if x == 0.0:
            return complex(y, HALF_PI)
        return complex(y, y)
    w = cacos(x, y)
    if x != x:
        return complex(abs(w.imag), w.real)  # inf + NaN j for y = +-inf, NaN + NaN j else
    if math.copysign(1.0, y) > 0.0:
        return complex(-w.imag, w.real)
    return complex(w.imag, -w.real)


@njit(**_C)
def catanh(x, y):
    """Kahan's atanh: Re = log1p(4x / |1 - z|^2) / 4, or (log|1 + z| - log|1 - z|) / 2 near
    z = 1; Im = atan2(2y, (1 - x)(1 + x) - y^2) / 2; C99 G.6.2.3 elsewhere."""
    if x != x:
        if y == INF or y == -INF:
            return complex(0.0, math.copysign(HALF_PI, y))
        return complex(x, x)
    if y != y:
        if x == 0.0 or x == INF or x == -INF:
            return complex(math.copysign(0.0, x), y)
        return complex(y, y)
    # atanh is odd and conj-symmetric: work on |x|, |y| and put the signs back
    ax = abs(x)
    ay = abs(y)
    m = max(ax, ay)
    if m > ASYMPTOTIC:  # 1/z + i pi/2; Re(1/z) = x / |z|^2, scaled (0 for infinities)
        re = cdiv_fast(1.0, 0.0, ax, ay).real if _fin(m) else 0.0
        return complex(math.copysign(re, x), math.copysign(HALF_PI, y))
    if m < TINY:
        return complex(x, y)
    d = (1.0 - ax) * (1.0 - ax) + ay * ay
    if d > 4.0 * ax:
        re = 0.25 * math.log1p(4.0 * ax / d)
    else:
        re = 0.5 * (_log_abs(1.0 + ax, ay) - _log_abs(1.0 - ax, ay))
    im = 0.5 * math.atan2(2.0 * ay, (1.0 - ax) * (1.0 + ax) - ay * ay)
    return complex(math.copysign(re, x), math.copysign(im, y))


@njit(**_C)
def catan(x, y):
    w = catanh(-y, x)  # atan(z) = -i atanh(iz)
    return complex(w.imag, -w.real)


# -- entry points for the kernels: complex64 in double precision, rounded once -------------------
def unary(core, core64=None):
    """A function of one complex scalar that runs ``core(re, im)`` in double precision
    (``core64`` for complex64 where given)."""
    c64 = core if core64 is None else core64

    def fn(z):
        pass

    @overload(fn, jit_options=_C)
    def _ol(z):
        if z == types.complex128:
            return lambda z: core(z.real, z.imag)
        if z == types.complex64:
            return lambda z: np.complex64(c64(np.float64(z.real), np.float64(z.imag)))
        return None

    return fn


# complex64's exp and log: float32 parts in double precision need no scaling, and _vmath's
# polynomial exp/sin/cos/log/atan2 (within 4 ulp of double, far inside float32's rounding) are
# cheaper than libm's double functions
@njit(**_C)
def _cexp64(x, y):
    if abs(x) < 700.0 and abs(y) <= V.SINCOS_LIMIT:  # False for NaN and the infinities
        e = V.exp(x)
        return complex(e * V.cos(y), e * V.sin(y))
    return cexp(x, y)


@njit(**_C)
def _clog64(x, y):
    # x^2 + y^2 cannot over- or underflow for float32 parts; an infinite part makes |z|
    # infinite, NaN in the other part or not (C99: hypot(inf, nan) is inf)
    r = x * x + y * y
    r = INF if (abs(x) == INF) | (abs(y) == INF) else r
    return complex(0.5 * V.log(r), V.atan2(y, x))


def binary(core):
    """A function of two complex scalars (the same type) over ``core(a, b, c, d)``."""

    def fn(z, w):
        pass

    @overload(fn, jit_options=_C)
    def _ol(z, w):
        if z == types.complex128 and w == types.complex128:
            return lambda z, w: core(z.real, z.imag, w.real, w.imag)
        if z == types.complex64 and w == types.complex64:

            def impl(z, w):
                r = core(np.float64(z.real), np.float64(z.imag), np.float64(w.real),
                         np.float64(w.imag))  # fmt: skip
                return np.complex64(r)

            return impl
        return None

    return fn


@njit(**_ALWAYS)
def _mul64(a, b, c, d):
    # float32 parts: their products cannot overflow or underflow in double precision
    return complex(a * c - b * d, a * d + b * c)


@njit(**_ALWAYS)
def _div64(a, b, c, d):
    return _smith(a, b, c, d)  # float32 parts: no intermediate over- or underflows in double


# multiply and divide: plain njit functions for _scalar to inline into the loops (_vmath.inlined)
@njit(**_C)
def multiply128(z, w):
    return cmul_fast(z.real, z.imag, w.real, w.imag)


@njit(**_C)
def multiply64(z, w):
    r = _mul64(np.float64(z.real), np.float64(z.imag), np.float64(w.real), np.float64(w.imag))
    return np.complex64(r)


@njit(**_C)
def divide128(z, w):
    return cdiv_fast(z.real, z.imag, w.real, w.imag)


@njit(**_C)
def divide64(z, w):
    r = _div64(np.float64(z.real), np.float64(z.imag), np.float64(w.real), np.float64(w.imag))
    return np.complex64(r)


power = binary(cpow)
exp = unary(cexp, _cexp64)
expm1 = unary(cexpm1)
log = unary(clog, _clog64)
log1p = unary(clog1p)
log2 = unary(clog2)
log10 = unary(clog10)
sqrt = unary(csqrt)
sin = unary(csin)
cos = unary(ccos)
tan = unary(ctan)
sinh = unary(csinh)
cosh = unary(ccosh)
tanh = unary(ctanh)
asin = unary(casin)
acos = unary(cacos)
atan = unary(catan)
asinh = unary(casinh)
acosh = unary(cacosh)
atanh = unary(catanh)


@njit(**_C)
def square128(z):
    return cmul_fast(z.real, z.imag, z.real, z.imag)


@njit(**_C)
def square64(z):
    x = np.float64(z.real)
    y = np.float64(z.imag)
    return np.complex64(_mul64(x, y, x, y))


@njit(**_C)
def _reciprocal(x, y):
    return cdiv_fast(1.0, 0.0, x, y)


reciprocal = unary(_reciprocal)
