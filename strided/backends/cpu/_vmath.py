"""Transcendental functions written as plain arithmetic, so numba's loops vectorise them.

A numba loop over ``np.exp``/``np.tanh``/... calls scalar libm for every element (~15 ns per
element, no SIMD; the llvmlite wheels have no SVML).  The functions here use only arithmetic,
compares, ``sqrt``/``rint`` (LLVM intrinsics with vector forms) and integer bit operations: range
reduction, a polynomial (coefficients fitted by ``_vmath_fit.py``), the exponent built from integer
bits, and special cases chosen with selects, not branches.  LLVM inlines them into the loops of
``_generated_kernels.py`` and vectorises the loops.

float64 results are within 4 ulp of a long-double reference (``ULP_BOUND`` in
``tests/test_transcendentals.py``; measured maxima 1.0-3.7 ulp).  Most functions also have a
float32 version (see "float32 in float32" below, 1-3 ulp).  The standard's special cases
(signed zeros, infinities, NaN) hold: each function ends with selects for them.

sin, cos and tan reduce ``|x| <= SINCOS_LIMIT`` with a three-part pi/2 (exact products); larger
arguments need a long reduction, which the kernels leave to libm in a second pass over the row
(``sincos_fix``), so the main loop stays branch-free.

Compiled with ``fastmath={"contract"}`` only (FMA contraction): no reassociation, which would undo
the compensated steps (Cody-Waite reduction, the log1p correction), and no nnan/ninf.
"""

from __future__ import annotations

import functools

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic, overload

from ._vmath_tables import POW_INVC, POW_LOG_Q, POW_LOGC

_OPTS = dict(fastmath={"contract"}, error_model="numpy")


def inlined(pick, arity: int):
    """A numba intrinsic that calls ``pick(*arg_types)`` (an njit function) inlined.

    LLVM inlines a call only below a size threshold, and a loop that keeps a call does not
    vectorise; these functions are over it.  numba's own ``inline="always"`` inlines at the IR
    level and re-types the body at every call site (5-10x the compile time), so this places
    LLVM's ``alwaysinline`` on the call instead.  ``pick`` returns None to reject the types.
    """

    def typer(*arg_types):
        disp = pick(*arg_types)
        if disp is None:
            return None
        disp.compile(arg_types)
        sig = disp.overloads[arg_types].signature.return_type(*arg_types)

        def codegen(context, builder, signature, args):
            cres = disp.overloads[signature.args]
            context.add_linking_libs([cres.library])
            # the loop calling this may use 512-bit vectors where the CPU has them (LLVM prefers
            # 256 on AVX-512 CPUs): these functions are arithmetic-bound, 1.2-1.7x faster so
            set.add(builder.function.attributes, '"prefer-vector-width"="512"')
            fn = context.declare_function(builder.module, cres.fndesc)
            _, res = context.call_conv.call_function(
                builder, fn, signature.return_type, signature.args, args, attrs=("alwaysinline",)
            )
            return res

        return sig, codegen

    if arity == 1:

        @intrinsic
        def call1(typingctx, x):
            return typer(x)

        return call1

    @intrinsic
    def call2(typingctx, x, y):
        return typer(x, y)

    return call2


@intrinsic
def _bits(typingctx, x):
    """The IEEE bits of a float32/float64 as an int32/int64 (a bitcast)."""
    if not isinstance(x, types.Float):
        return None
    ity = types.int32 if x.bitwidth == 32 else types.int64

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], context.get_value_type(ity))

    return ity(x), codegen


@intrinsic
def _from_bits(typingctx, i, like):
    """The float of ``like``'s type whose bits are the low bits of the integer ``i``."""
    if not (isinstance(i, types.Integer) and isinstance(like, types.Float)):
        return None
    ity = types.int32 if like.bitwidth == 32 else types.int64

    def codegen(context, builder, signature, args):
        v = context.cast(builder, args[0], i, ity)
        return builder.bitcast(v, context.get_value_type(like))

    return like(i, like), codegen


@intrinsic
def _fma(typingctx, a, b, c):
    """a * b + c rounded once (LLVM's fma: one instruction where the CPU has FMA, vectorised)."""
    if not (isinstance(a, types.Float) and a == b == c):
        return None

    def codegen(context, builder, signature, args):
        t = args[0].type
        fn = builder.module.declare_intrinsic("llvm.fma", [t], ir.FunctionType(t, [t, t, t]))
        return builder.call(fn, args)

    return a(a, b, c), codegen


@njit(**_OPTS)
def _fast_two_sum(a, b):
    """(s, e) with s + e == a + b exactly, for |a| >= |b| or a == 0."""
    s = a + b
    return s, b - (s - a)


INF = np.inf
NAN = np.nan
LN2 = 0.6931471805599453
LN2_HI = 6.93147180369123816490e-01  # 32 bits: k * LN2_HI is exact for |k| < 2**20
LN2_LO = 1.90821492927058770002e-10
INV_LN2 = 1.4426950408889634
INV_LN10 = 0.4342944819032518
LOG10_2_HI = 3.01029995663611771306e-01  # 33 bits
LOG10_2_LO = 3.69423907715893078616e-13
PI = 3.141592653589793
PI_LO = 1.2246467991473532e-16
PIO2 = 1.5707963267948966
PIO2_LO = 6.123233995736766e-17
PIO4 = 0.7853981633974483
PIO4_LO = 3.061616997868383e-17
TAN_PI_8 = 0.41421356237309503
# pi/2 in three parts of 33, 33 and 53 bits (FreeBSD's __rem_pio2): n * part is exact for
# |n| < 2**20, so the reduction below loses nothing for |x| <= SINCOS_LIMIT
PIO2_1 = 1.57079632673412561417e00
PIO2_2 = 6.07710050630396597660e-11
PIO2_3 = 2.02226624879595063154e-21
INV_PIO2 = 6.36619772367581382433e-01
SINCOS_LIMIT = 1.0e6

# Polynomials from _vmath_fit.py (highest degree first); relative error of each approximation
# 0.01-0.15 ulp on its interval.
EXP_P = (
    2.5100375832561234e-08,
    2.7620075879983367e-07,
    2.7557268480310024e-06,
    2.4801521322368692e-05,
    0.00019841269863040545,
    0.0013888888917196719,
    0.008333333333330065,
    0.041666666666624164,
    0.16666666666666669,
    0.5000000000000001,
)
EXP_PE = EXP_P[1::2]  # EXP_P's even powers (highest first), for exp(r) and exp(-r)
EXP_PO = EXP_P[0::2]  # its odd powers
LOG_P = (
    0.14616449685043406,
    0.15331721600556042,
    0.18182889125261723,
    0.2222221113479508,
    0.28571428625975487,
    0.39999999999899505,
    0.666666666666667,
)
SIN_P = (
    -7.586697117706918e-13,
    1.6058531618986147e-10,
    -2.5052106232447578e-08,
    2.7557319219339167e-06,
    -0.00019841269841265065,
    0.008333333333333331,
    -0.16666666666666666,
)
COS_P = (
    4.7458719020432915e-14,
    -1.1470460887609959e-11,
    2.087675579108042e-09,
    -2.7557319221402824e-07,
    2.4801587301584645e-05,
    -0.0013888888888888887,
    0.041666666666666664,
)
ATAN_P = (
    -0.01917688711906226,
    0.03923165829558719,
    -0.0508544973794026,
    0.0585814891280221,
    -0.06664511447381948,
    0.07692183190826087,
    -0.09090904578123903,
    0.11111111015256361,
    -0.14285714284666542,
    0.1999999999999552,
    -0.3333333333333333,
)
# asin(a) = a + a z P(z) on |a| <= 1/2 (error 0.05 ulp)
ASIN_P = (
    0.028757851367421566,
    -0.014851887071247204,
    0.01740087944269402,
    0.005457506718640358,
    0.01032281435018578,
    0.011479177415184906,
    0.013971212973552933,
    0.017352392720869973,
    0.02237217294214989,
    0.030381944138531247,
    0.04464285714635543,
    0.07499999999998433,
    0.16666666666666669,
)


@njit(**_OPTS)
def _horner(c, x):
    p = c[0]
    for i in range(1, len(c)):
        p = p * x + c[i]
    return p


@njit(**_OPTS)
def _pow2(k):
    """2**k for an integral float64 k in [-1022, 1023], from the exponent bits."""
    return _from_bits((np.int64(k) + 1023) << 52, 1.0)


# -- exp family ---------------------------------------------------------------------------------
@njit(**_OPTS)
def _exp_reduce(x):
    """(k, r, q) with x = k ln2 + r, |r| <= ln2/2, and exp(r) - 1 = r + q (q = r^2 P(r)).

    x must be finite and within [-1100, 1100] (callers clamp; NaN is mapped inside the range).
    """
    k = np.rint(x * INV_LN2)
    r = x - k * LN2_HI
    r = r - k * LN2_LO
    return k, r, r * r * _horner(EXP_P, r)


@njit(**_OPTS)
def _clamp(x, lo, hi):
    """x limited to [lo, hi]; NaN maps to lo (the caller restores NaN at the end)."""
    x = x if x > lo else lo
    return x if x < hi else hi


@njit(**_OPTS)
def _scale(v, k):
    """v * 2**k for integral k in [-2000, 2000], rounding once (subnormal results included)."""
    h = np.rint(k * 0.5 - 0.25)  # floor(k / 2) for integral k
    return v * _pow2(h) * _pow2(k - h)


@njit(**_OPTS)
def exp(x):
    k, r, q = _exp_reduce(_clamp(x, -746.0, 710.0))
    res = _scale(1.0 + (r + q), k)
    return res if x == x else x


#: float64 exp's loop function covers |x| <= EXP_MAIN_LIMIT (results normal, 2^k a valid
#: exponent): the kernel's second pass (exp_fix) redoes the rest, NaN and inf included
EXP_MAIN_LIMIT = 708.0


@njit(**_OPTS)
def exp_main(x):
    """float64 exp for |x| <= EXP_MAIN_LIMIT: 2^k added to the exponent bits of exp(r), no
    two-step scale for subnormal results and no NaN select (24 -> 19 vector instructions per
    8 elements); x is clamped only to keep k a defined integer."""
    k, r, q = _exp_reduce(_clamp(x, -EXP_MAIN_LIMIT, EXP_MAIN_LIMIT))
    p = 1.0 + (r + q)
    return _from_bits(_bits(p) + (np.int64(k) << np.int64(52)), p)


@njit(**_OPTS)
def _expm1_finite(x):
    """expm1 for x already clamped to [-60, 710]."""
    k, r, q = _exp_reduce(x)
    em1 = r + q  # expm1(r), accurate relative to r
    small = k if k < 60.0 else 60.0
    s = _pow2(small)
    mid = s * em1 + (s - 1.0)  # 2^k (expm1(r) + 1) - 1 without cancellation for moderate k
    big = _scale(em1 + 1.0, k) - 1.0  # k > 53: the -1 is below the last bit
    res = big if k > 53.0 else mid
    return em1 if k == 0.0 else res


@njit(**_OPTS)
def expm1(x):
    res = _expm1_finite(_clamp(x, -60.0, 710.0))
    return res if (x == x and x != 0.0) else x


# sinh(a) = a + a z P(z), z = a^2, on [0, 1] (_vmath_fit.py's Chebyshev fit: 0.08 ulp)
SINH_P = (
    7.746178593018827e-13,
    1.6057679623801638e-10,
    2.5052117695907823e-08,
    2.7557319191381816e-06,
    0.00019841269841324198,
    0.008333333333333299,
    0.16666666666666666,
)


@njit(**_OPTS)
def _exp_pm(a):
    """float64 :func:`_exp_pm_f32`: EXP_P's even and odd halves (a fit on an interval symmetric
    about 0), scales normal for k <= 1026 (0 <= a <= 711), the second one's k capped at 1000."""
    k = np.rint(a * INV_LN2)
    r = (a - k * LN2_HI) - k * LN2_LO
    z = r * r
    pe = _horner(EXP_PE, z)
    po = r * _horner(EXP_PO, z)
    ep = 1.0 + (r + z * (pe + po))
    em = 1.0 + (z * (pe - po) - r)
    ki = np.int64(k)
    up = _from_bits((ki + np.int64(1021)) << np.int64(52), a)
    down = _from_bits((np.int64(1021) - min(ki, np.int64(1000))) << np.int64(52), a)
    return ep * up, em * down


@njit(**_OPTS)
def sinh(x):
    a = abs(x)
    z = a * a
    res_small = a + a * z * _horner(SINH_P, z)
    p, m = _exp_pm(a if a < 711.0 else 711.0)
    res = res_small if a < 1.0 else (p - m) * 2.0  # no cancellation from 1
    res = np.copysign(res, x)
    return res if (x == x and x != 0.0) else x


@njit(**_OPTS)
def cosh(x):
    """(exp|x| + exp(-|x|)) / 2 from :func:`_exp_pm`: no division."""
    a = abs(x)
    p, m = _exp_pm(a if a < 711.0 else 711.0)
    res = (p + m) * 2.0
    return res if x == x else x


@njit(**_OPTS)
def tanh(x):
    a = abs(x)
    ac = _clamp(a, 0.0, 20.0)  # tanh rounds to 1 from |x| = 19.1 on
    # |x| < 1: -t / (t + 2) with t = expm1(-2|x|); otherwise 1 - 2 / (expm1(2|x|) + 2)
    lt1 = ac < 1.0
    k, r, q = _exp_reduce(-2.0 * ac if lt1 else 2.0 * ac)
    # expm1 = 2^k (expm1(r) + 1) - 1 for k in [-3, 58]: exact 2^k - 1 up to k = 53, and past
    # it the -1 is below the last bit (no second, scaled form and select as in expm1)
    s = _pow2(k)
    t = s * (r + q) + (s - 1.0)
    res = -t / (t + 2.0) if lt1 else 1.0 - 2.0 / (t + 2.0)
    res = np.copysign(res, x)
    return res if (x == x and x != 0.0) else x


# -- pow (float32) -------------------------------------------------------------------------------
#: pow's log: x = 2^k z, z in [POW_OFF, 2 POW_OFF), table row from z's top 7 mantissa bits
POW_OFF = 0x3FE6A00000000000


@njit(**_OPTS)
def _pow_row(a):
    """(row, k, z) with a = 2^k z, z in [POW_OFF, 2 POW_OFF), row = z's top 7 mantissa bits, for
    a positive normal float64 a."""
    ix = _bits(a)
    tmp = ix - POW_OFF
    ke = tmp >> 52
    return (tmp >> 45) & 127, ke, _from_bits(ix - (ke << 52), a)


@njit(**_OPTS)
def _pow_log(a):
    """log(a) as hi + lo (about 2^-66 relative) for positive finite a, subnormals included.

    log(a) = k ln2 + log(c) + log1p(r), r = z/c - 1: the table holds 1/c for 128 intervals of z
    (chosen so that -log(1/c) is a float64 to 12 further bits, which leaves no low part) and
    log(c); z/c - 1 is exact (an fma product and Sterbenz), |r| < 2^-7, so the short polynomial
    and the exact square of r keep every rounding error below 2^-66 relative.
    """
    tiny = a < 2.2250738585072014e-308
    a = a * 4503599627370496.0 if tiny else a  # subnormals: scale by 2^52 first
    i, ke, z = _pow_row(a)
    k = np.float64(ke) - (52.0 if tiny else 0.0)
    invc = POW_INVC[i]
    p = z * invc
    p_lo = _fma(z, invc, -p)  # z * invc == p + p_lo exactly
    r = p - 1.0
    ar = -0.5 * r
    ar2 = r * ar
    ar2_lo = _fma(r, ar, -ar2)  # -r^2/2 == ar2 + ar2_lo exactly
    t1, e1 = _fast_two_sum(k * LN2_HI, POW_LOGC[i])  # k * LN2_HI is exact
    t2, e2 = _fast_two_sum(t1, r)
    hi, e3 = _fast_two_sum(t2, ar2)
    tail = r * r * r * _horner(POW_LOG_Q, r)
    lo = k * LN2_LO + (e1 + e2 + e3 + ar2_lo) + p_lo * (1.0 - r) + tail
    return hi, lo


def _pow_signs_for(F):
    """The standard's pow special cases on top of r = |x| ** y, for one float type ``F``: the
    sign for a negative (or -0) base and an odd integer exponent, NaN for a finite negative base
    and a non-integer exponent, 1 for y == 0, x == 1 and (-1) ** +-inf."""
    zero, half, one, inf, nan = F(0.0), F(0.5), F(1.0), F(np.inf), F(np.nan)

    @njit(**_OPTS)
    def signs(x, y, r):
        whole = np.rint(y) == y  # +-inf counts as an even integer, NaN as no integer
        h = y * half
        odd = whole and np.rint(h) != h
        r = -r if (_bits(x) < 0 and odd) else r
        r = nan if (x < zero and x > -inf and not whole) else r
        unit = y == zero or x == one or (x == -one and abs(y) == inf)
        return one if unit else r

    return signs


_pow_signs = _pow_signs_for(np.float64)
_pow_signs_f32 = _pow_signs_for(np.float32)


@njit(**_OPTS)
def pow_f64(x, y):
    """x**y for float64: exp(y log|x|) with log|x| in double-double (``_pow_log``) and the
    product's low part carried into exp's reduced argument: within 1.3 ulp of the exact power
    (measured over wide random samples, subnormal and near-overflow results included)."""
    a = abs(x)
    hi, lo = _pow_log(_clamp(a, 5e-324, 1.7976931348623157e308))
    ehi = y * hi
    ts = y * _log_special(a, hi)  # +-inf / NaN where |x| is 0, inf or NaN or y is infinite
    finite = ts - ts == 0.0
    t = _clamp(ehi, -746.0, 710.0)
    elo = _fma(y, hi, -ehi) + y * lo
    elo = elo if (finite and t == ehi) else 0.0  # clamped: the result is 0 or inf anyway
    k, rr, _ = _exp_reduce(t)  # (its polynomial is for rr alone: redone with the low part)
    rr = rr + elo
    res = _scale(1.0 + (rr + rr * rr * _horner(EXP_P, rr)), k)
    res = res if finite else (0.0 if ts < 0.0 else ts)
    return _pow_signs(x, y, res)


# -- fmod, floor_divide, remainder -------------------------------------------------------------
def _divmod_functions(F, limit: float):
    """fmod, floor_divide and remainder for one float type ``F`` written as selects, exact where
    |x| < limit |y| (limit = 2^52 for float64, 2^23 for float32: the truncated quotient is then
    the true one or one more, x - q y comes from one fma exactly, and a negative result is
    corrected by adding |y|, exactly).  ``needs_libm(x, y)`` marks the other finite elements,
    which the kernels' second pass (``_scalar.divmod_fix``) redoes with libm's fmod; the results
    are NumPy's (npy_divmod), bit for bit."""
    zero, one, half, lim, inf = F(0.0), F(1.0), F(0.5), F(limit), F(np.inf)

    @njit(**_OPTS)
    def fmod(x, y):
        ax = abs(x)
        ay = abs(y)
        q = np.trunc(ax / ay)
        r = _fma(-q, ay, ax)
        r = r + ay if r < zero else r
        r = np.copysign(r, x)
        r = x if (ay == inf and ax < inf) else r
        # NaN as libm makes it, (x y) / (x y): the CPU's default NaN, or the NaN operand's own
        return (x * y) / (x * y) if (y == zero or not ax < inf or y != y) else r

    @njit(**_OPTS)
    def needs_libm(x, y):
        ax = abs(x)
        return (ax >= lim * abs(y)) & (ax < inf) & (y != zero)

    @njit(**_OPTS)
    def floor_divide(x, y):
        q = x / y
        mod = fmod(x, y)
        div = (x - mod) / y
        div = div - one if (mod != zero and (y < zero) != (mod < zero)) else div
        fl = np.floor(div)
        fl = fl + one if div - fl > half else fl
        res = np.copysign(zero, q) if div == zero else fl
        # the standard's special cases: x / y (inf over finite, finite over inf, NaN)
        return q if (y == zero or not (abs(x) < inf and abs(y) < inf)) else res

    @njit(**_OPTS)
    def remainder(x, y):
        mod = fmod(x, y)
        res = mod + y if (mod != zero and (y < zero) != (mod < zero)) else mod
        res = np.copysign(zero, y) if mod == zero else res
        return mod if y == zero else res

    return fmod, needs_libm, floor_divide, remainder


fmod_f64, divmod_needs_libm_f64, floor_divide_f64, remainder_f64 = _divmod_functions(
    np.float64, 2.0**52
)
fmod_f32, divmod_needs_libm_f32, floor_divide_f32, remainder_f32 = _divmod_functions(
    np.float32, 2.0**23
)


# -- log family ---------------------------------------------------------------------------------
@njit(**_OPTS)
def _log_parts(x):
    """(e, f, lf) with x = 2^e (1 + f), sqrt(2)/2 <= 1 + f < sqrt(2), lf = log(1 + f).

    x must be positive and finite (callers select the special cases afterwards).
    """
    tiny = x < 2.2250738585072014e-308
    e, f, lf = _log_main_parts(x * 18014398509481984.0 if tiny else x)  # subnormals: 2^54 x
    return e - (54.0 if tiny else 0.0), f, lf


@njit(**_OPTS)
def _log1p_small(f):
    """log(1 + f) for sqrt(2)/2 - 1 <= f < sqrt(2) - 1 (FreeBSD's k_log1p formulation)."""
    s = f / (2.0 + f)
    z = s * s
    hfsq = 0.5 * f * f
    big_r = z * _horner(LOG_P, z)
    return f - (hfsq - s * (hfsq + big_r))


@njit(**_OPTS)
def _log_special(x, res):
    """The result for x <= 0, inf and NaN; ``res`` elsewhere."""
    ok = x > 0.0 and x < INF
    special = -INF if x == 0.0 else (NAN if x < 0.0 else x)
    return res if ok else special


@njit(**_OPTS)
def log(x):
    e, f, lf = _log_parts(_clamp(x, 5e-324, 1.7976931348623157e308))
    return _log_special(x, e * LN2_HI + (lf + e * LN2_LO))


@njit(**_OPTS)
def log2(x):
    e, f, lf = _log_parts(_clamp(x, 5e-324, 1.7976931348623157e308))
    return _log_special(x, e + lf * INV_LN2)


@njit(**_OPTS)
def log10(x):
    e, f, lf = _log_parts(_clamp(x, 5e-324, 1.7976931348623157e308))
    return _log_special(x, e * LOG10_2_HI + (e * LOG10_2_LO + lf * INV_LN10))


@njit(**_OPTS)
def _log1p_finite(x):
    """log1p for x > -1 finite (the callers select the special cases)."""
    u = 1.0 + x  # normal: at least 2^-53
    e, f, lf = _log_main_parts(u)
    # the rounding error of 1 + x, as a relative correction to log(u)
    c = (1.0 - (u - x)) if u >= 2.0 else (x - (u - 1.0))
    c = 0.0 if u >= 9007199254740992.0 else c / u
    return e * LN2_HI + (lf + (c + e * LN2_LO))


@njit(**_OPTS)
def log1p(x):
    res = _log1p_finite(_clamp(x, -0.9999999999999999, 1.7976931348623157e308))
    ok = x > -1.0 and x < INF
    special = -INF if x == -1.0 else (NAN if x < -1.0 else x)
    res = res if ok else special
    return x if x == 0.0 else res


# log, log2, log10 and log1p in float64 run in two passes, as exp and the float32 logs do: the
# loop's functions below take positive normal finite x (log1p: -1 < x < inf), with no clamps,
# no subnormal scaling and no special-case selects (1.15 against 2.1 ns per element in an inlined
# loop), and the kernels' second pass (log_fix, log1p_fix) redoes the rest with the functions
# above.  On their domain they give the full functions' bits: those reduce through the same
# _log_main_parts (m = 1 + f in [sqrt(1/2), sqrt 2) from the exponent bits, f exact).
SQRT_HALF_BITS64 = 0x3FE6A09E667F3BCD  # float64 sqrt(1/2) (SQRT_HALF_BITS: float32)


@njit(**_OPTS)
def _log_main_parts(x):
    """(e, f, log(1 + f)) with x = 2^e (1 + f), 1 + f in [sqrt(1/2), sqrt 2), for positive
    normal finite x (f exact)."""
    ix = _bits(x)
    ei = (ix - SQRT_HALF_BITS64) >> 52
    f = _from_bits(ix - (ei << 52), x) - 1.0
    return np.float64(ei), f, _log1p_small(f)


@njit(**_OPTS)
def log_main(x):
    e, f, lf = _log_main_parts(x)
    return e * LN2_HI + (lf + e * LN2_LO)


@njit(**_OPTS)
def log2_main(x):
    e, f, lf = _log_main_parts(x)
    return e + lf * INV_LN2


@njit(**_OPTS)
def log10_main(x):
    e, f, lf = _log_main_parts(x)
    return e * LOG10_2_HI + (e * LOG10_2_LO + lf * INV_LN10)


# the loop functions' formulas for any x (a subnormal scaled by 2^54 first, exactly; the special
# cases as selects): what the log kernels' chunks holding such an x run instead (_scalar's
# chunked rows), the same bits as log_main and co. wherever those apply
TWO54 = 2.0**54


@njit(**_OPTS)
def _log_parts_any(x):
    sub = x < 2.2250738585072014e-308  # (negative x too: their result is replaced)
    e, f, lf = _log_main_parts(x * TWO54 if sub else x)
    return e - (54.0 if sub else 0.0), f, lf


@njit(**_OPTS)
def log_redo(x):
    e, f, lf = _log_parts_any(x)
    return _log_special(x, e * LN2_HI + (lf + e * LN2_LO))


@njit(**_OPTS)
def log2_redo(x):
    e, f, lf = _log_parts_any(x)
    return _log_special(x, e + lf * INV_LN2)


@njit(**_OPTS)
def log10_redo(x):
    e, f, lf = _log_parts_any(x)
    return _log_special(x, e * LOG10_2_HI + (e * LOG10_2_LO + lf * INV_LN10))


@njit(**_OPTS)
def log1p_main(x):
    res = _log1p_finite(x)
    return x if x == 0.0 else res  # -0 keeps its sign


@njit(**_OPTS)
def log_needs_full(x):
    """Whether float64 x is outside log_main's case (positive, normal, finite)."""
    return not ((x >= 2.2250738585072014e-308) & (x < INF))


@njit(**_OPTS)
def log1p_needs_full(x):
    """Whether float64 x is outside log1p_main's case (-1 < x < inf)."""
    return not ((x > -1.0) & (x < INF))


# exp and log1p inlined into logaddexp (a loop keeping a call does not vectorise)
_exp_inlined = inlined(lambda t: exp, 1)
_log1p_inlined = inlined(lambda t: log1p, 1)


@njit(**_OPTS)
def logaddexp(x, y):
    """log(exp(x) + exp(y)) as NumPy computes it: the larger argument plus log1p(exp(-|x - y|)),
    and x + log(2) where x == y (which also gives +-inf for equal infinities); NaN propagates
    through x - y."""
    m = x if x > y else y
    res = m + _log1p_inlined(_exp_inlined(-abs(x - y)))
    return x + LN2 if x == y else res


_exp_f32_inlined = inlined(lambda t: exp_f32, 1)
_log1p_f32_inlined = inlined(lambda t: log1p_f32, 1)


@njit(**_OPTS)
def logaddexp_f32(x, y):
    """:func:`logaddexp` in float32 arithmetic: within 6 float32 ulp of the larger of |x|, |y|
    and the result (measured 5.1; exp_f32 and log1p_f32 are within 2 ulp)."""
    m = x if x > y else y
    res = m + _log1p_f32_inlined(_exp_f32_inlined(-abs(x - y)))
    return x + F(LN2) if x == y else res


@njit(**_OPTS)
def hypot(x, y):
    """sqrt(x*x + y*y) without overflow or underflow: the larger magnitude times
    sqrt(1 + r*r), r = smaller / larger (within 1.5 ulp); an infinite argument gives +inf even
    beside NaN (IEEE and C99), two zeros give +0."""
    ax, ay = abs(x), abs(y)
    big = ax if ax > ay else ay
    small = ay if ax > ay else ax
    r = small / big
    res = big * np.sqrt(1.0 + r * r)
    res = big if small == 0.0 else res  # also 0 / 0 for two zeros
    res = res if (x == x and y == y) else x + y  # NaN
    return INF if (ax == INF or ay == INF) else res


@njit(**_OPTS)
def hypot_f32(x, y):
    """float32 hypot in double precision: no overflow is possible and the one rounding at the end
    gives the correctly rounded result but for double rounding (within 0.5 ulp + 2**-29)."""
    xd, yd = np.float64(x), np.float64(y)
    res = np.float32(np.sqrt(xd * xd + yd * yd))
    return F_INF if (abs(x) == F_INF or abs(y) == F_INF) else res


@njit(**_OPTS)
def nextafter(x, y):
    """The next representable value after x toward y, by integer steps on the IEEE bits (float32
    or float64): a sign-magnitude float moves away from zero when its bits as an integer grow;
    from zero the smallest subnormal with y's sign; y itself where x == y (C's rule, so
    nextafter(-0.0, +0.0) is +0.0); NaN in, NaN out."""
    i = _bits(x)
    away = (y > x) == (x > 0)
    res = _from_bits(i + 1 if away else i - 1, x)
    res = np.copysign(_from_bits(1, x), y) if x == 0 else res
    res = y if x == y else res
    return x + y if (x != x or y != y) else res


# -- trigonometric ------------------------------------------------------------------------------
@njit(**_OPTS)
def _sincos(x):
    """(sin(x), cos(x)) for |x| <= SINCOS_LIMIT; NaN for inf and NaN."""
    n = np.rint(x * INV_PIO2)
    r = x - n * PIO2_1
    r = r - n * PIO2_2
    r = r - n * PIO2_3
    z = r * r
    s = r + r * z * _horner(SIN_P, z)
    c = 1.0 - 0.5 * z + z * z * _horner(COS_P, z)
    q = n - 4.0 * np.floor(n * 0.25)  # quadrant 0..3 (n mod 4)
    sn = c if (q == 1.0 or q == 3.0) else s
    cs = s if (q == 1.0 or q == 3.0) else c
    sn = -sn if q >= 2.0 else sn
    cs = -cs if (q == 1.0 or q == 2.0) else cs
    return sn, cs


@njit(**_OPTS)
def sin(x):
    s, c = _sincos(x)
    return x if x == 0.0 else s


@njit(**_OPTS)
def cos(x):
    s, c = _sincos(x)
    return c


@njit(**_OPTS)
def tan(x):
    s, c = _sincos(x)
    return x if x == 0.0 else s / c


@njit(**_OPTS)
def _atan01(t):
    """atan(t) for 0 <= t <= 1 (or NaN): below tan(pi/8) directly, above via (t-1)/(t+1)."""
    hi = t > TAN_PI_8
    u = (t - 1.0) / (t + 1.0) if hi else t
    z = u * u
    p = u * z * _horner(ATAN_P, z)
    return (PIO4 + (PIO4_LO + (u + p))) if hi else u + p


@njit(**_OPTS)
def atan2(y, x):
    ay = abs(y)
    ax = abs(x)
    swap = ay > ax
    num = ax if swap else ay
    den = ay if swap else ax
    r = _atan01(num / den)
    r = r if not (ay == INF and ax == INF) else PIO4
    r = r if not (ay == 0.0 and ax == 0.0) else 0.0
    # fold back: pi/2 - r above the diagonal, pi - r for x < 0 (pi/2 + r for both)
    neg_x = np.copysign(1.0, x) < 0.0  # -0.0 included
    lo = (PIO2_LO + r) if neg_x else (PIO2_LO - r)
    r_swap = PIO2 + lo
    r_neg = PI + (PI_LO - r)
    r = r_swap if swap else (r_neg if neg_x else r)
    return np.copysign(r, y)


@njit(**_OPTS)
def atan(x):
    return atan2(x, 1.0)


def _asin_functions(F, poly, pio2, pio2_lo, pi, pi_lo):
    """asin and acos for one float type ``F`` from the polynomial asin(a) = a + a z P(z), z = a^2
    on |a| <= 1/2; above, asin|x| = pi/2 - 2p with p = asin(sqrt((1 - |x|) / 2)) (the argument
    exact by Sterbenz): one sqrt, no division (atan2(x, sqrt(1 - x^2)) needs two).  NaN for
    |x| > 1 comes from the sqrt of a negative number."""
    half, one, zero = F(0.5), F(1.0), F(0.0)
    pio2, pio2_lo, pi, pi_lo = F(pio2), F(pio2_lo), F(pi), F(pi_lo)

    @njit(**_OPTS)
    def parts(x):
        a = abs(x)
        big = a > half
        z = half * (one - a) if big else a * a
        s = np.sqrt(z) if big else a
        return big, s + s * z * _horner(poly, z)

    @njit(**_OPTS)
    def asin(x):
        big, p = parts(x)
        r = (pio2 + (pio2_lo - (p + p))) if big else p
        return np.copysign(r, x)

    @njit(**_OPTS)
    def acos(x):
        """pi/2 - asin(x) for |x| <= 1/2, 2p for x > 1/2, pi - 2p for x < -1/2."""
        big, p = parts(x)
        small = pio2 + (pio2_lo - np.copysign(p, x))
        return small if not big else ((p + p) if x > zero else pi + (pi_lo - (p + p)))

    return asin, acos


asin, acos = _asin_functions(np.float64, ASIN_P, PIO2, PIO2_LO, PI, PI_LO)


# -- inverse hyperbolic -------------------------------------------------------------------------
BIG = 18014398509481984.0  # 2^54: above it, x + 1 == x to the last bit


@njit(**_OPTS)
def asinh(x):
    a = abs(x)
    ac = a if a < BIG else 1.0
    w = ac + ac * ac / (1.0 + np.sqrt(1.0 + ac * ac))
    huge = a >= BIG
    res = _log1p_finite(a if huge else w) + (LN2 if huge else 0.0)
    res = res if a < INF else a
    res = np.copysign(res, x)
    return res if (x == x and x != 0.0) else x


@njit(**_OPTS)
def acosh(x):
    t = x - 1.0
    tc = _clamp(t, 0.0, BIG)
    w = tc + np.sqrt(tc * (tc + 2.0))
    huge = x >= BIG
    res = _log1p_finite(x if huge else w) + (LN2 if huge else 0.0)
    res = res if x < INF else x
    return res if x >= 1.0 else (x if x != x else NAN)


@njit(**_OPTS)
def atanh(x):
    a = abs(x)
    ac = _clamp(a, 0.0, 0.9999999999999999)
    t = ac + ac
    arg = t + t * ac / (1.0 - ac) if ac < 0.5 else t / (1.0 - ac)
    res = 0.5 * _log1p_finite(arg)
    res = res if a < 1.0 else (INF if a == 1.0 else NAN)
    res = np.copysign(res, x)
    return res if (x == x and x != 0.0) else x


# -- float32 in float32 -------------------------------------------------------------------------
# The exp and log families are the activations and losses of nn training, and NumPy runs them in
# float32 SIMD; widening to float64 halves the vector width, so they have float32 versions: the
# same algorithms with float32 constants and shorter polynomials (Taylor terms; truncation error
# below 0.1 ulp): exp/log/log10/log1p within 1 ulp (log2 1.02), expm1/sin/cos/sinh/cosh/asinh/
# atanh 2 ulp, tanh/acosh/atan/atan2 2.5 ulp, tan/asin 3 ulp (measured in
# tests/test_transcendentals.py; the logs over every positive normal float32, log1p/sin/cos/tan/
# asin/acos/asinh/acosh/atanh/cosh over every float32 input in their domain).
F = np.float32
F_INV_LN2 = F(1.4426950408889634)
F_LN2_HI = F(0.693359375)  # 9 bits: k * F_LN2_HI is exact
F_LN2_LO = F(-2.12194440e-4)
F_EXP_P = tuple(F(1.0 / c) for c in (5040.0, 720.0, 120.0, 24.0, 6.0, 2.0))
F_LOG_P = tuple(F(2.0 / c) for c in (11.0, 9.0, 7.0, 5.0, 3.0))
F_SQRT2 = F(1.4142135623730951)
F_INV_LN10 = F(0.4342944819032518)
F_LOG10_2_HI = F(3.00781250e-01)  # 7 bits
F_LOG10_2_LO = F(2.48745663981195213739e-04)
F_ONE = F(1.0)
F_TWO = F(2.0)
F_HALF = F(0.5)
F_ZERO = F(0.0)
F_INF = F(np.inf)
F_NAN = F(np.nan)


@njit(**_OPTS)
def _exp_reduce_f32(x):
    k = np.rint(x * F_INV_LN2)
    r = x - k * F_LN2_HI
    r = r - k * F_LN2_LO
    return k, r, r * r * _horner(F_EXP_P, r)


@njit(**_OPTS)
def _scale_f32(v, k):
    """v * 2**k for integral float32 k in [-300, 300], rounding once."""
    ki = np.int32(k)
    h = ki >> 1
    return v * _from_bits((h + 127) << 23, v) * _from_bits((ki - h + 127) << 23, v)


@njit(**_OPTS)
def _clamp_f32(x, lo, hi):
    x = x if x > lo else lo
    return x if x < hi else hi


@njit(**_OPTS)
def exp_f32(x):
    k, r, q = _exp_reduce_f32(_clamp_f32(x, F(-104.0), F(89.0)))
    res = _scale_f32(F_ONE + (r + q), k)
    return res if x == x else x


@njit(**_OPTS)
def _expm1_finite_f32(x):
    """expm1 for float32 x already clamped to [-20, 89] (k in [-29, 128]): 2^min(k, 100) and
    2^(k - 1) straight from exponent bits (normal float32s there; powers of two scale exactly,
    so the same bits as two-step scaling, in fewer instructions)."""
    k, r, q = _exp_reduce_f32(x)
    em1 = r + q
    ki = np.int32(k)
    s = _from_bits((min(ki, np.int32(100)) + np.int32(127)) << np.int32(23), x)
    mid = s * em1 + (s - F_ONE)
    big = (em1 + F_ONE) * _from_bits((ki + np.int32(126)) << np.int32(23), x) * F_TWO - F_ONE
    res = big if k > F(24.0) else mid
    return em1 if k == F_ZERO else res


@njit(**_OPTS)
def expm1_f32(x):
    res = _expm1_finite_f32(_clamp_f32(x, F(-20.0), F(89.0)))
    return res if (x == x and x != F_ZERO) else x


# tanh(a) = a + a z P(z), z = a^2, on [0, 0.55] (from _vmath_fit.py's Chebyshev fit: 0.06 float32
# ulp); above, 1 - 2 / (exp(2a) + 1)
F_TANH_P = tuple(
    F(c)
    for c in (
        -0.00661022774875164,
        0.021309388801455498,
        -0.05390942841768265,
        0.13333113491535187,
        -0.3333333134651184,
    )
)


@njit(**_OPTS)
def tanh_f32(x):
    a = abs(x)
    z = a * a
    small = a + a * z * _horner(F_TANH_P, z)
    # exp(2a) for 2a in [0, 20] (tanh(10) is 1 in float32): no clamping inside, and 2^k with
    # k <= 29 is one normal float32, so one scaling multiply (the same bits as exp_f32's two;
    # 1M elements: 1.2 -> 0.93 ms on one thread)
    t = (a if a < F(10.0) else F(10.0)) * F_TWO
    k, r, q = _exp_reduce_f32(t)
    e = (F_ONE + (r + q)) * _from_bits((np.int32(k) + np.int32(127)) << np.int32(23), x)
    res = small if a < F(0.55) else F_ONE - F_TWO / (e + F_ONE)
    res = np.copysign(res, x)
    return res if x == x else x  # (+-0 come through the polynomial as themselves)


# sinh(a) = a + a z P(z), z = a^2, on [0, 1] (_vmath_fit.py's Chebyshev fit: 0.003 float32 ulp)
F_SINH_P = tuple(
    F(c)
    for c in (
        2.806280235745362e-06,
        0.00019838102161884308,
        0.008333339355885983,
        0.1666666716337204,
    )
)


# exp(r) = 1 + r + r^2 P(r) with P's even and odd parts apart (F_EXP_P's Taylor terms), so one
# reduction gives exp(r) and exp(-r) without a division
F_EXP_PE = tuple(F(1.0 / c) for c in (720.0, 24.0, 2.0))
F_EXP_PO = tuple(F(1.0 / c) for c in (5040.0, 120.0, 6.0))


@njit(**_OPTS)
def _exp_pm_f32(a):
    """(2^(k - 2) exp(r), 2^(-k - 2) exp(-r)) for 0 <= a <= 90, a = k ln2 + r: both exponentials
    from one reduction and the even and odd halves of one polynomial, no division; the scales
    from bits are normal float32s for k <= 130 (the second one's k capped at 100, where its
    term is below the first one's ulp), so (A + B) 2 and (A - B) 2 overflow only at cosh's and
    sinh's own limit 89.4 (2^128 is inf)."""
    k = np.rint(a * F_INV_LN2)
    r = (a - k * F_LN2_HI) - k * F_LN2_LO
    z = r * r
    pe = _horner(F_EXP_PE, z)
    po = r * _horner(F_EXP_PO, z)
    ep = F_ONE + (r + z * (pe + po))
    em = F_ONE + (z * (pe - po) - r)
    ki = np.int32(k)
    up = _from_bits((ki + np.int32(125)) << np.int32(23), a)
    down = _from_bits((np.int32(125) - min(ki, np.int32(100))) << np.int32(23), a)
    return ep * up, em * down


@njit(**_OPTS)
def cosh_f32(x):
    """(exp|x| + exp(-|x|)) / 2 from :func:`_exp_pm_f32`."""
    a = abs(x)
    p, m = _exp_pm_f32(a if a < F(90.0) else F(90.0))
    res = (p + m) * F_TWO
    return res if x == x else x


@njit(**_OPTS)
def sinh_f32(x):
    """|x| + |x| z P(z) below 1, else (exp|x| - exp(-|x|)) / 2 from :func:`_exp_pm_f32` (no
    cancellation from 1: exp(-2) is 0.14); the sign copied."""
    a = abs(x)
    z = a * a
    res_small = a + a * z * _horner(F_SINH_P, z)
    p, m = _exp_pm_f32(a if a < F(90.0) else F(90.0))
    res = res_small if a < F_ONE else (p - m) * F_TWO
    res = np.copysign(res, x)
    return res if (x == x and x != F_ZERO) else x


@njit(**_OPTS)
def _log_parts_f32(x):
    """(e, lf) with x = 2^e (1 + f), lf = log(1 + f), for positive finite float32 x."""
    tiny = x < F(1.17549435e-38)
    xs = x * F(8388608.0) if tiny else x  # subnormals: scale by 2^23 first
    bits = _bits(xs)
    e = F((bits >> 23) - 127) - (F(23.0) if tiny else F_ZERO)
    m = _from_bits((bits & 0x007FFFFF) | 0x3F800000, x)
    hi = m > F_SQRT2
    m = m * F_HALF if hi else m
    e = e + F_ONE if hi else e
    f = m - F_ONE
    s = f / (F_TWO + f)
    z = s * s
    hfsq = F_HALF * f * f
    big_r = z * _horner(F_LOG_P, z)
    return e, f - (hfsq - s * (hfsq + big_r))


@njit(**_OPTS)
def _log_special_f32(x, res):
    ok = x > F_ZERO and x < F_INF
    special = -F_INF if x == F_ZERO else (F_NAN if x < F_ZERO else x)
    return res if ok else special


@njit(**_OPTS)
def log_f32(x):
    e, lf = _log_parts_f32(_clamp_f32(x, F(1e-45), F(3.4028235e38)))
    return _log_special_f32(x, e * F_LN2_HI + (lf + e * F_LN2_LO))


@njit(**_OPTS)
def log2_f32(x):
    e, lf = _log_parts_f32(_clamp_f32(x, F(1e-45), F(3.4028235e38)))
    return _log_special_f32(x, e + lf * F_INV_LN2)


@njit(**_OPTS)
def log10_f32(x):
    e, lf = _log_parts_f32(_clamp_f32(x, F(1e-45), F(3.4028235e38)))
    return _log_special_f32(x, e * F_LOG10_2_HI + (e * F_LOG10_2_LO + lf * F_INV_LN10))


# log, log2 and log10 in float32 run in two passes, as pow does: the loop's function covers
# positive normal finite x (no clamps, no subnormal scaling, no special-case selects, no
# division: 23-27 vector instructions for 16 elements instead of 44-47), and the kernels'
# second pass (log_fix) redoes zeros, negatives, subnormals, inf and NaN with the functions
# above.  x = 2^e m, m in [sqrt(1/2), sqrt 2), f = m - 1 (exact), log_b(m) = f / ln(b) + f^2
# P_b(f) with f / ln(b) in two parts (fma); measured over every positive normal float32:
# log 0.84, log2 1.02, log10 0.89 ulp (the functions above: 0.84, 1.67, 1.93; NumPy 2.4's
# own float32 loops: 3.7, 2.1, 3.3 on 8M samples).
# from _vmath_fit.py (F_LOGE_P): approximation error 0.021 float32 ulp
F_LOGE_P = tuple(
    F(c)
    for c in (
        0.06769024113816001,
        -0.11557287882015821,
        0.1181213614232965,
        -0.12420814467908906,
        0.1423231785955222,
        -0.16667536772428632,
        0.2000144672220023,
        -0.25000010940100675,
        0.333333227936071,
        -0.4999999994349637,
    )
)
# from _vmath_fit.py (F_LOG2_P): approximation error 0.021 float32 ulp
F_LOG2_P = tuple(
    F(c)
    for c in (
        0.09765637520660156,
        -0.16673641913510337,
        0.17041310234844279,
        -0.17919447436654068,
        0.20532894396331416,
        -0.24046172645417227,
        0.28855987996723087,
        -0.36067391805453075,
        0.4808981949068801,
        -0.7213475196293067,
    )
)
# from _vmath_fit.py (F_LOG10_P): approximation error 0.021 float32 ulp
F_LOG10_P = tuple(
    F(c)
    for c in (
        0.029397498205003387,
        -0.05019266352926792,
        0.05129945546103731,
        -0.05394291184156912,
        0.061810171110966296,
        -0.07238619247185292,
        0.08686517941533443,
        -0.1085736679880665,
        0.14476478152763453,
        -0.21714724070623376,
    )
)
F_INV_LN2_HI = F(1.4426950408889634)
F_INV_LN2_LO = F(1.4426950408889634 - 1.4426950216293335)  # 1/ln2 - F_INV_LN2_HI
F_INV_LN10_LO = F(0.4342944819032518 - 0.4342944920063019)  # 1/ln10 - F_INV_LN10
F_MIN_NORMAL = F(1.1754943508222875e-38)
SQRT_HALF_BITS = np.int32(0x3F3504F3)  # float32 sqrt(1/2): mantissas reduce to [sqrt(1/2), sqrt 2)


@njit(**_OPTS)
def _log_main_parts_f32(x):
    """(e, f) with x = 2^e (1 + f), 1 + f in [sqrt(1/2), sqrt 2), for positive normal finite
    float32 x (f exact; e an int32)."""
    ix = _bits(x)
    # int32 throughout (numba widens int32 arithmetic to int64, which would split the vectors)
    e = np.int32(np.int32(ix - SQRT_HALF_BITS) >> np.int32(23))
    m = _from_bits(np.int32(ix - np.int32(e << np.int32(23))), x)
    return e, m - F_ONE


@njit(**_OPTS)
def _log_sum_f32(e, f, lo):
    """e ln2 + log(1 + f) + lo, lo small (e ln2's low part, and a correction)."""
    return e * F_LN2_HI + (f + (f * f * _horner(F_LOGE_P, f) + lo))


@njit(**_OPTS)
def _log_base_f32(f, c_hi, c_lo, poly):
    """log_b(1 + f) as hi + lo: f c_hi exactly in two parts, f c_lo and f^2 P_b(f) added to
    the low one."""
    p = f * c_hi
    return p, (_fma(f, c_hi, -p) + f * c_lo) + f * f * _horner(poly, f)


@njit(**_OPTS)
def log_main_f32(x):
    ei, f = _log_main_parts_f32(x)
    e = F(ei)
    return _log_sum_f32(e, f, e * F_LN2_LO)


@njit(**_OPTS)
def log2_main_f32(x):
    ei, f = _log_main_parts_f32(x)
    p, lo = _log_base_f32(f, F_INV_LN2_HI, F_INV_LN2_LO, F_LOG2_P)
    return F(ei) + (p + lo)


@njit(**_OPTS)
def log10_main_f32(x):
    ei, f = _log_main_parts_f32(x)
    e = F(ei)
    p, lo = _log_base_f32(f, F_INV_LN10, F_INV_LN10_LO, F_LOG10_P)
    return e * F_LOG10_2_HI + (p + (lo + e * F_LOG10_2_LO))


# float32 log, log2 and log10 for any x: the loop functions' formulas, a subnormal scaled by 2^24
# first (exact) and the special cases as selects, the same bits as those where they apply: what
# the log kernels' chunks holding such an x run instead (_scalar's chunked rows), at the loop
# functions' cost plus the selects, where the functions above clamp and scale every element
F_TWO24 = F(16777216.0)


@njit(**_OPTS)
def _log_parts_any_f32(x):
    sub = x < F_MIN_NORMAL  # (negative x too: their result is replaced)
    ei, f = _log_main_parts_f32(x * F_TWO24 if sub else x)
    return F(ei - (np.int32(24) if sub else np.int32(0))), f


@njit(**_OPTS)
def log_redo_f32(x):
    e, f = _log_parts_any_f32(x)
    return _log_special_f32(x, _log_sum_f32(e, f, e * F_LN2_LO))


@njit(**_OPTS)
def log2_redo_f32(x):
    e, f = _log_parts_any_f32(x)
    p, lo = _log_base_f32(f, F_INV_LN2_HI, F_INV_LN2_LO, F_LOG2_P)
    return _log_special_f32(x, e + (p + lo))


@njit(**_OPTS)
def log10_redo_f32(x):
    e, f = _log_parts_any_f32(x)
    p, lo = _log_base_f32(f, F_INV_LN10, F_INV_LN10_LO, F_LOG10_P)
    return _log_special_f32(x, e * F_LOG10_2_HI + (p + (lo + e * F_LOG10_2_LO)))


@njit(**_OPTS)
def log_needs_full_f32(x):
    """Whether x is outside the loop functions' case (positive, normal, finite): a bool from
    bitwise operations on the compares, so the second pass's test vectorises."""
    return not ((x >= F_MIN_NORMAL) & (x < F_INF))


def log_fix(o, ob, os, a, ab, as_, n, which):
    """Redo with the full log, log2 or log10 (which: 0, 1, 2) the elements of one float32 or
    float64 row outside the loop functions' case (``log_needs_full_f32``, ``log_needs_full``);
    nothing for other types.  A vectorised test first, so rows without such elements cost one
    cheap pass."""


def log1p_fix(o, ob, os, a, ab, as_, n, which):
    """Redo with :func:`log1p` the elements of one float64 row outside :func:`log1p_main`'s case
    (``log1p_needs_full``); nothing for other types (float32's loop function is whole)."""


def _log_full_for(log_e, log_2, log_10):
    """The second pass's full function of one width: log, log2 or log10 (which: 0, 1, 2)."""

    @njit(**_OPTS)
    def full(v, which):
        if which == 0:
            return log_e(v)
        if which == 1:
            return log_2(v)
        return log_10(v)

    return full


@njit(**_OPTS)
def _log1p_full(v, which):
    return log1p(v)


def _fix_for(cases: dict):
    """The overload of a second pass: for rows of a float dtype in ``cases`` (numba type ->
    (needs, redo) or (needs, redo, branch-free redo or None, rows done)) ``_row_fix``, nothing
    for others."""
    made = {}

    def ol(o, ob, os, a, ab, as_, n, which):
        case = cases.get(a.dtype)
        if case is None:
            return lambda o, ob, os, a, ab, as_, n, which: None
        if a.dtype not in made:
            made[a.dtype] = _row_fix(*case)
        return made[a.dtype]

    return ol


overload(log_fix, inline="always")(
    _fix_for(
        {
            # (unit-stride rows: the kernels' chunked rows did them, _scalar.log_rows)
            types.float32: (
                log_needs_full_f32,
                _log_full_for(log_f32, log2_f32, log10_f32),
                None,
                True,
            ),
            types.float64: (log_needs_full, _log_full_for(log, log2, log10), None, True),
        }
    )
)
overload(log1p_fix, inline="always")(
    _fix_for({types.float64: (log1p_needs_full, _log1p_full, log1p)})
)


# pow in float32: log2|x| in double-float32, y times it in double-float32, exp2 of that
# 2^f = 1 + f Q(f) on |f| <= 1/2 (from _vmath_fit.py, F_EXP2_Q): error 2^-27.6
F_EXP2_Q = tuple(
    F(c)
    for c in (
        0.0001545316294512069,
        0.0013390863364671234,
        0.009618082557277852,
        0.05550357114219078,
        0.24022650760568126,
        0.6931471880262288,
    )
)
F_POW_Y_MAIN = F(1e30)  # below it y log2 x is finite for every finite x
F_TWO23 = F(8388608.0)


@njit(**_OPTS)
def _log2_df_f32(a, e_offset):
    """log2(a) - e_offset as hi + lo float32s (about 2^-31 relative) for normal finite a > 0:
    a = 2^e m with m in [sqrt(1/2), sqrt 2), log(m) = 2 atanh(s), s = (m - 1)/(m + 1) carried
    with its low part (m + 1 exactly as u + ulo, the quotient's remainder by fma), 2s times 1/ln2
    in two parts."""
    ix = _bits(a)
    # int32 throughout (numba widens int32 arithmetic to int64, which would split the vectors)
    e = np.int32(np.int32(ix - SQRT_HALF_BITS) >> np.int32(23))
    m = _from_bits(np.int32(ix - np.int32(e << np.int32(23))), a)
    ef = F(e) - e_offset
    f = m - F_ONE  # exact
    u = m + F_ONE
    ulo = m - (u - F_ONE)  # exact: m + 1 == u + ulo
    rcp = F_ONE / u
    s = f * rcp
    slo = (_fma(-s, u, f) - s * ulo) * rcp
    z = s * s
    c = F_TWO * slo + s * z * _horner(F_LOG_P, z)  # log(m) = 2s + c
    t2 = F_TWO * s
    h = t2 * F_INV_LN2_HI
    hl = _fma(t2, F_INV_LN2_HI, -h) + (t2 * F_INV_LN2_LO + c * F_INV_LN2_HI)
    lh, ll = _fast_two_sum(ef, h)  # |ef| >= 1 > |h|, or ef == 0
    return _fast_two_sum(lh, ll + hl)


@njit(**_OPTS)
def _exp2_df_f32(y, lh, ll):
    """(2^(y (lh + ll)), y (lh + ll) rounded): the product in double-float32, then 2^k 2^f with
    |f| <= 1/2 (a polynomial within 2^-27.6); beyond float32's range the result is inf or 0."""
    th = y * lh
    tl = _fma(y, lh, -th) + y * ll
    tc = _clamp_f32(th, F(-160.0), F(140.0))
    k = np.rint(tc)
    # |tl| <= 2^-17 where th is in range; a clamped th (the result is 0 or inf) may carry a huge
    # tl, which must not reach the polynomial
    fr = (tc - k) + _clamp_f32(tl, F(-1e-4), F(1e-4))
    return _scale_f32(F_ONE + fr * _horner(F_EXP2_Q, fr), k), th


@njit(**_OPTS)
def pow_f32_main(x, y):
    """x**y for the common float32 case, x normal, positive and finite, |y| < 1e30 (so y log2 x
    is finite): the loop's function (66 vector instructions for 16 elements).  Every other
    element (x <= 0, subnormal, inf or NaN; y huge, inf or NaN) is redone by the kernels'
    second pass with :func:`pow_f32` (``_scalar.pow_fix``).  x == 1 and y == 0 give 1
    exactly here."""
    lh, ll = _log2_df_f32(x, F_ZERO)
    return _exp2_df_f32(y, lh, ll)[0]


@njit(**_OPTS)
def pow_needs_full_f32(x, y):
    """Whether x**y is outside :func:`pow_f32_main`'s case (a bool from bitwise operations on
    the compares, no branches, so the kernels' test of a row vectorises)."""
    return not ((x >= F_MIN_NORMAL) & (x < F_INF) & (abs(y) < F_POW_Y_MAIN))


@njit(**_OPTS)
def pow_f32(x, y):
    """x**y in float32 arithmetic, every case: within 1.5 ulp (measured 1.02 over 12M samples
    with |y log2 x| up to 128; NumPy 2.4's own float32 power: 1.31 on the same), subnormal
    results within one 2^-149.  Subnormal bases are scaled by 2^23 first; 0, inf and NaN bases
    take log2 = -inf, inf and NaN; the standard's special cases follow with selects
    (``_pow_signs_f32``)."""
    ax = abs(x)
    sub = ax < F_MIN_NORMAL
    lh, ll = _log2_df_f32(ax * F_TWO23 if sub else ax, F(23.0) if sub else F_ZERO)
    finite = ax > F_ZERO and ax < F_INF
    lh = lh if finite else (-F_INF if ax == F_ZERO else ax)
    ll = ll if finite else F_ZERO
    r, th = _exp2_df_f32(y, lh, ll)
    r = r if abs(th) < F_INF else (F_INF if th > F_ZERO else F_ZERO)
    r = r if th == th else th
    return _pow_signs_f32(x, y, r)


F_LN2 = F(0.6931471805599453)
F_HUGE = F(1e18)  # below it x^2 + 1 and x^2 - 1 are finite
# from _vmath_fit.py (F_ASINH_P): approximation error 0.007 float32 ulp on |a| <= 0.53
F_ASINH_P = tuple(
    F(c)
    for c in (
        0.00932702245448695,
        -0.02016108649481947,
        0.030080131803613686,
        -0.044623648122012104,
        0.07499954499754184,
        -0.1666666648971582,
    )
)
F_ASINH_SMALL = F(0.53)  # asinh(0.53) > 1/2: the log's error counts in ulps of [1/2, 1)
# from _vmath_fit.py (F_ATANH_P): approximation error 0.075 float32 ulp on |a| <= 1/2
F_ATANH_P = tuple(
    F(c)
    for c in (
        0.15751780259152603,
        0.06493489567669346,
        0.11469875161618762,
        0.1426397985264627,
        0.2000047330953935,
        0.3333333168479454,
    )
)
F_RCP_M = (F(-1.0), F(1.0), F(-1.0), F(1.0))  # 1/(1 + f) = 1 - f + f^2 - f^3 within 2 %


@njit(**_OPTS)
def _log_df_f32(v, vlo):
    """log(v + vlo) for positive normal finite v and |vlo| <= ulp(v) (a sum carried in two
    parts): log(v) as in :func:`log_main_f32` plus vlo / v = vlo 2^-e / m, 1/m from a cubic
    (vlo is a rounding error, so 2 % of it is far below an ulp).  No division."""
    ei, f = _log_main_parts_f32(v)
    e = F(ei)
    sc = max(np.int32(np.int32(127) - ei), np.int32(1))  # v >= 2^127: 2^-126 (vlo is 0 there)
    corr = vlo * _from_bits(np.int32(sc << np.int32(23)), v) * _horner(F_RCP_M, f)
    return _log_sum_f32(e, f, corr + e * F_LN2_LO)


@njit(**_OPTS)
def log1p_f32(x):
    """log(u + c) with u = 1 + x rounded and c its exact rounding error (the two cases of
    Sterbenz's lemma), through :func:`_log_df_f32`: no division (the s = f/(2 + f) form
    had two); tiny x gives u = 1, c = x, so x itself."""
    xc = _clamp_f32(x, F(-0.99999994), F(3.4028235e38))
    u = F_ONE + xc
    c = (F_ONE - (u - xc)) if u >= F_TWO else (xc - (u - F_ONE))
    res = _log_df_f32(u, c)
    ok = x > -F_ONE and x < F_INF
    special = -F_INF if x == -F_ONE else (F_NAN if x < -F_ONE else x)
    res = res if ok else special
    return x if x == F_ZERO else res


# asinh, acosh and atanh without the division of the log1p forms: over every float32 input in
# the domain 1.51, 2.10, 1.32 ulp (the log1p forms, on 3M samples: 1.90, 2.88, 1.94), 25-36 %
# faster
@njit(**_OPTS)
def asinh_f32(x):
    """asinh|x| = |x| + |x| z P(z) for |x| < 0.53, else log(v + vlo) with v + vlo = |x| +
    sqrt(x^2 + 1) exactly (fast two-sum), log|x| + ln 2 from 1e18; the sign copied."""
    a = abs(x)
    z = a * a
    small = a + a * z * _horner(F_ASINH_P, z)
    huge = a >= F_HUGE
    s = np.sqrt(z + F_ONE)
    v = a + s
    vlo = (s - v) + a
    big = _log_df_f32(a if huge else v, F_ZERO if huge else vlo) + (F_LN2 if huge else F_ZERO)
    res = small if a < F_ASINH_SMALL else big
    res = res if a < F_INF else a
    return np.copysign(res, x) if x == x else x


@njit(**_OPTS)
def acosh_f32(x):
    """log(v + vlo) with v + vlo = x + sqrt((x - 1)(x + 1)) exactly (x - 1 exact near 1),
    log x + ln 2 from 1e18; NaN below 1."""
    t = x - F_ONE
    s = np.sqrt(t * (t + F_TWO))
    v = x + s
    vlo = (x - v) + s
    huge = x >= F_HUGE
    res = _log_df_f32(x if huge else v, F_ZERO if huge else vlo) + (F_LN2 if huge else F_ZERO)
    res = res if x < F_INF else x
    return res if x >= F_ONE else (x if x != x else F_NAN)


@njit(**_OPTS)
def atanh_f32(x):
    """atanh|x| = |x| + |x| z P(z) for |x| < 1/2, else log((1 + |x|) / (1 - |x|)) / 2 (1 - |x|
    exact there); inf at 1, NaN beyond; the sign copied."""
    a = abs(x)
    z = a * a
    small = a + a * z * _horner(F_ATANH_P, z)
    big = F_HALF * log_main_f32((F_ONE + a) / (F_ONE - a))
    res = small if a < F_HALF else big
    res = res if a < F_ONE else (F_INF if a == F_ONE else F_NAN)
    return np.copysign(res, x) if x == x else x


# from _vmath_fit.py (F_ATAN_P): approximation error 0.04 float32 ulp
F_ATAN_P = tuple(
    F(c)
    for c in (
        -0.06451928208121749,
        0.10743731490791084,
        -0.1426395559798464,
        0.19999540483648964,
        -0.3333333176116852,
    )
)
F_TAN_PI_8 = F(0.41421356237309503)
F_PIO4 = F(0.7853981633974483)
F_PIO4_LO = F(-2.1855695e-08)  # pi/4 - float32(pi/4)
F_PIO2 = F(1.5707963267948966)
F_PIO2_LO = F(-4.371139e-08)
F_PI = F(3.141592653589793)
F_PI_LO = F(-8.742278e-08)


@njit(**_OPTS)
def atan2_f32(y, x):
    """atan2 in float32: the float64 algorithm (see ``atan2``) with float32 constants."""
    ay = abs(y)
    ax = abs(x)
    swap = ay > ax
    t = (ax if swap else ay) / (ay if swap else ax)
    hi = t > F_TAN_PI_8
    u = (t - F_ONE) / (t + F_ONE) if hi else t
    z = u * u
    p = u * z * _horner(F_ATAN_P, z)
    r = (F_PIO4 + (F_PIO4_LO + (u + p))) if hi else u + p
    r = r if not (ay == F_INF and ax == F_INF) else F_PIO4
    r = r if not (ay == F_ZERO and ax == F_ZERO) else F_ZERO
    neg_x = np.copysign(F_ONE, x) < F_ZERO
    lo = (F_PIO2_LO + r) if neg_x else (F_PIO2_LO - r)
    r = (F_PIO2 + lo) if swap else ((F_PI + (F_PI_LO - r)) if neg_x else r)
    return np.copysign(r, y)


@njit(**_OPTS)
def atan_f32(x):
    return atan2_f32(x, F_ONE)


# from _vmath_fit.py (F_ASIN_P): approximation error 0.28 float32 ulp on |a| <= 1/2
F_ASIN_P = tuple(
    F(c)
    for c in (
        0.038085023561092654,
        0.026554542206161328,
        0.04500138006991017,
        0.07498855072600821,
        0.16666672414795305,
    )
)


asin_f32, acos_f32 = _asin_functions(F, F_ASIN_P, F_PIO2, F_PIO2_LO, F_PI, F_PI_LO)


F_SIN_P = tuple(F(c) for c in (1.0 / 362880.0, -1.0 / 5040.0, 1.0 / 120.0, -1.0 / 6.0))
F_COS_P = tuple(F(c) for c in (-1.0 / 3628800.0, 1.0 / 40320.0, -1.0 / 720.0, 1.0 / 24.0))
# from _vmath_fit.py (F_TAN_P): approximation error 0.07 float32 ulp on |r| <= pi/4
F_TAN_P = tuple(
    F(c)
    for c in (
        0.003843139779255223,
        0.0011853216520677635,
        0.00996214699884352,
        0.021621127411513202,
        0.053994464722099254,
        0.13333230944682223,
        0.33333333979455765,
    )
)
F_INV_PIO2 = F(0.6366197723675814)
# pi/2 in three float32 parts (the last one rounded from the exact remainder): with fma, x - n
# PIO2_1 is exact and the other two steps round once each, so |x| <= F_SINCOS_LIMIT (NumPy's
# bound for the same reduction) reduces to within a float32 rounding of the true r
F_PIO2_1 = F(1.5707963705062866)
F_PIO2_2 = F(-4.371138828673793e-08)
F_PIO2_3 = F(-1.7151245100058819e-15)
F_SINCOS_LIMIT = F(71476.0625)


@njit(**_OPTS)
def _reduce_pio2_f32(x):
    """(n, r) with x = n pi/2 + r, |r| <= about pi/4, in float32 for |x| <= F_SINCOS_LIMIT."""
    n = np.rint(x * F_INV_PIO2)
    r = _fma(-n, F_PIO2_1, x)
    r = _fma(-n, F_PIO2_2, r)
    return n, _fma(-n, F_PIO2_3, r)


@njit(**_OPTS)
def _sincos_f32(x):
    """(sin(x), cos(x)) for float32 |x| <= F_SINCOS_LIMIT, all in float32 (16 lanes a vector)."""
    n, r = _reduce_pio2_f32(x)
    z = r * r
    s = r + r * z * _horner(F_SIN_P, z)
    c = F_ONE - F_HALF * z + z * z * _horner(F_COS_P, z)
    q = np.int32(n) & 3  # quadrant (n mod 4, also for negative n)
    odd = (q & 1) == 1
    sn = c if odd else s
    cs = s if odd else c
    sn = -sn if q >= 2 else sn
    cs = -cs if (q == 1 or q == 2) else cs
    return sn, cs


@njit(**_OPTS)
def sin_f32(x):
    s, c = _sincos_f32(x)
    return x if x == F_ZERO else s


@njit(**_OPTS)
def cos_f32(x):
    s, c = _sincos_f32(x)
    return c


@njit(**_OPTS)
def tan_f32(x):
    """tan in float32: tan(r) = r + r z P(z) on the reduced argument, -1/tan(r) in odd
    quadrants (measured 2.91 ulp over every float32 with |x| <= F_SINCOS_LIMIT; NumPy's own
    float32 tan: 3.5 ulp)."""
    n, r = _reduce_pio2_f32(x)
    z = r * r
    t = r + r * z * _horner(F_TAN_P, z)
    t = -F_ONE / t if (np.int32(n) & 1) == 1 else t
    return x if x == F_ZERO else t


# -- the second pass of sin/cos/tan over a row -----------------------------------------------
def sincos_fix(o, ob, os, a, ab, as_, n, which):
    """Redo with libm the elements of one row beyond the vectorised reduction's range (|x| >
    SINCOS_LIMIT for float64, F_SINCOS_LIMIT for float32; which: 0 sin, 1 cos, 2 tan).  A
    vectorised test first, so rows without such elements cost one cheap pass.  Real rows
    only: complex rows never take the reduction (their values come from _complex)."""


def exp_fix(o, ob, os, a, ab, as_, n, which):
    """Redo with :func:`exp` the elements of one float64 row outside :func:`exp_main`'s range
    (|x| > EXP_MAIN_LIMIT, NaN); nothing for other types (float32's loop function is whole)."""


@njit(**_OPTS)
def _beyond_exp_main(v):
    return not abs(v) <= EXP_MAIN_LIMIT


@njit(**_OPTS)
def _exp_full(v, which):
    return exp(v)


overload(exp_fix, inline="always")(_fix_for({types.float64: (_beyond_exp_main, _exp_full, exp)}))


@njit(**_OPTS)
def _beyond_sincos_f32(v):
    return abs(v) > F_SINCOS_LIMIT  # NaN: no (the vectorised NaN stands)


@njit(**_OPTS)
def _beyond_sincos(v):
    return abs(v) > SINCOS_LIMIT


@njit(**_OPTS)
def _sincos_libm(v, which):
    if which == 0:
        return np.sin(v)
    if which == 1:
        return np.cos(v)
    return np.tan(v)


overload(sincos_fix, inline="always")(
    _fix_for(
        {
            types.float32: (_beyond_sincos_f32, _sincos_libm),
            types.float64: (_beyond_sincos, _sincos_libm),
        }
    )
)


#: elements the chunked second pass tests at a time (a chunk with one to redo is redone whole)
_FIX_CHUNK = 256


def _unit_fix(needs, redo):
    """The second pass over unit-stride rows for a branch-free ``redo(x)``: by chunks, a chunk
    holding an element where ``needs(x)`` is redone whole and the results selected, both loops
    vectorised, instead of a branch and a call per element, which mispredicts on mixed data
    (1M float64 log1p of normal samples, 16 % of them below -1: 2.1 -> 1.1 ms)."""
    needs_i = inlined(lambda t: needs, 1)
    redo_i = inlined(lambda t: redo, 1)

    @njit(**_OPTS)
    def fix(o, a, n):
        for c0 in range(0, n, _FIX_CHUNK):
            c1 = min(c0 + _FIX_CHUNK, n)
            seg = a[c0:c1]
            out = o[c0:c1]
            hit = False
            for k in range(c1 - c0):
                hit = hit | needs_i(seg[k])
            if hit:
                for k in range(c1 - c0):
                    v = seg[k]
                    r = redo_i(v)
                    out[k] = r if needs_i(v) else out[k]

    return fix


def _row_fix(needs, redo, unit_redo=None, rows_done=False):
    """The implementation of a unary kernel's second pass over one row (``sincos_fix``,
    ``log_fix``): the elements where ``needs(x)`` (a branch-free bool) holds get ``redo(x,
    which)``.  The row is tested first with an or-reduction (vectorised at full width where the
    row has unit stride; a count would accumulate 4 lanes wide), so rows without such elements
    cost one cheap pass.  ``unit_redo``: ``redo`` without branches (for a single ``which``), with
    which unit-stride rows take :func:`_unit_fix`; ``rows_done``: the loop itself finished
    unit-stride rows (nothing to redo there)."""
    unit = None if unit_redo is None else _unit_fix(needs, unit_redo)
    has_unit = unit is not None

    def impl(o, ob, os, a, ab, as_, n, which):
        if rows_done and as_ == 1 and os == 1:
            return
        if has_unit and as_ == 1 and os == 1:
            unit(o[ob : ob + n], a[ab : ab + n], n)
            return
        hit = False
        if as_ == 1:  # a unit-stride row: a slice, so the test vectorises
            seg = a[ab : ab + n]
            for k in range(n):
                hit = hit | needs(seg[k])
        else:
            for k in range(n):
                hit = hit | needs(a[ab + k * as_])
        if not hit:
            return
        for k in range(n):
            v = a[ab + k * as_]
            if needs(v):
                o[ob + k * os] = redo(v, which)

    return impl


# -- reductions ----------------------------------------------------------------------------------
@functools.cache  # (one set per width and direction: compiled once)
def _float_keys(width: int, find_max: bool):
    """(start, step, finish) of a float max/min reduced as integers: the IEEE bits mapped to a
    key that orders like the values (negative numbers with their magnitude bits flipped; the
    map is its own inverse), and the largest magnitude bits kept beside it to detect NaN.
    Typed constants and a cast after every operation: numba widens int32 arithmetic to int64,
    which would halve float32's lanes (argmax float32 ran at float64's speed)."""
    ity = np.int32 if width == 32 else np.int64
    mask = ity((1 << (width - 1)) - 1)
    inf_bits = ity(0x7F800000 if width == 32 else 0x7FF0000000000000)
    shift = ity(width - 1)

    @njit(**_OPTS)
    def key(i):
        return ity(i ^ ity(ity(i >> shift) & mask))

    @njit(**_OPTS)
    def start(acc):
        i = _bits(acc)
        return key(i), ity(i & mask)

    @njit(**_OPTS)
    def step(best, mag, i):
        k = key(i)
        return (max(best, k) if find_max else min(best, k)), max(mag, ity(i & mask))

    @njit(**_OPTS)
    def finish(best, mag, acc):
        res = _from_bits(key(best), acc)
        if mag > inf_bits:
            res = (res - res) / (res - res)  # NaN, in acc's dtype
        return res

    return start, step, finish


def _minmax_row(find_max: bool):
    """acc combined with every element of the contiguous 1-D ``seg`` (NaN propagates).

    Float compares in a reduction vectorise only with the nnan flag, which would break NaN
    propagation; so floats are reduced as integers: the IEEE bits mapped to a key that orders like
    the values (negative numbers with their magnitude bits flipped), and NaN detected by a second
    integer reduction of the magnitude bits.  Integer min/max reductions vectorise.
    """

    def row(acc, seg):
        pass

    @overload(row, jit_options=dict(_OPTS))
    def _ol(acc, seg):
        if isinstance(seg.dtype, types.Float):
            if acc != seg.dtype:
                return None
            start, step, finish = _float_keys(seg.dtype.bitwidth, find_max)

            def impl(acc, seg):
                best, mag = start(acc)
                for r in range(seg.shape[0]):
                    best, mag = step(best, mag, _bits(seg[r]))
                return finish(best, mag, acc)

            return impl

        def impl_int(acc, seg):
            for r in range(seg.shape[0]):
                acc = max(acc, seg[r]) if find_max else min(acc, seg[r])
            return acc

        return impl_int

    return row


max_row = _minmax_row(True)
min_row = _minmax_row(False)

#: a reduction's strided run with a step of at most SPAN_STEP elements reads its whole span
#: contiguously, SPAN_W elements of interest a block, the others masked out (a run of
#: scattered loads does not vectorise: 1M float32 at step 2 summed in 520 us on one thread,
#: the span in 178; NumPy 160), from runs of SPAN_MIN elements
SPAN_STEP = 16
SPAN_W = 64
SPAN_MIN = 256
#: row ``st``: True at the elements of interest of a block of ``st * SPAN_W`` (a constant table,
#: not a mask made per call)
SPAN_KEEP = np.zeros((SPAN_STEP + 1, SPAN_STEP * SPAN_W), dtype=np.bool_)
for _st in range(1, SPAN_STEP + 1):
    SPAN_KEEP[_st, : _st * SPAN_W : _st] = True


def _minmax_span(find_max: bool):
    """acc combined with the ``n`` elements ``a[b0 + r * st]`` (1 < st <= SPAN_STEP, NaN
    propagates): the contiguous span in blocks, as ``_minmax_row`` (floats as integer keys), the
    elements between the wanted ones replaced by the run's first element, which changes no
    maximum or minimum.  The elements past the last whole block one by one."""

    def span(acc, a, b0, st, n):
        pass

    @overload(span, jit_options=dict(_OPTS))
    def _ol(acc, a, b0, st, n):
        if isinstance(a.dtype, types.Float):
            if acc != a.dtype:
                return None
            start, step, finish = _float_keys(a.dtype.bitwidth, find_max)

            def impl(acc, a, b0, st, n):
                span_len = st * SPAN_W
                keep = SPAN_KEEP[st, :span_len]
                full = ((n - 1) * st + 1) // span_len
                best, mag = start(acc)
                first = _bits(a[b0])
                for blk in range(full):
                    seg = a[b0 + blk * span_len : b0 + (blk + 1) * span_len]
                    for j in range(span_len):
                        best, mag = step(best, mag, _bits(seg[j]) if keep[j] else first)
                for r in range(full * SPAN_W, n):
                    best, mag = step(best, mag, _bits(a[b0 + r * st]))
                return finish(best, mag, acc)

            return impl

        def impl_int(acc, a, b0, st, n):
            span_len = st * SPAN_W
            keep = SPAN_KEEP[st, :span_len]
            full = ((n - 1) * st + 1) // span_len
            first = a[b0]
            for blk in range(full):
                seg = a[b0 + blk * span_len : b0 + (blk + 1) * span_len]
                for j in range(span_len):
                    x = seg[j] if keep[j] else first
                    acc = max(acc, x) if find_max else min(acc, x)
            for r in range(full * SPAN_W, n):
                x = a[b0 + r * st]
                acc = max(acc, x) if find_max else min(acc, x)
            return acc

        return impl_int

    return span


max_span = _minmax_span(True)
min_span = _minmax_span(False)

#: elements per chunk between the early-exit checks of any/all
EXIT_CHUNK = 2048


@njit(**_OPTS)
def _max_u8(ch):
    m = np.uint8(0)
    for r in range(ch.shape[0]):
        m = max(m, ch[r])
    return m


@njit(**_OPTS)
def _min_u8(ch):
    m = np.uint8(1)
    for r in range(ch.shape[0]):
        m = min(m, ch[r])
    return m


@njit(**_OPTS)
def _count_nonzero(ch):
    cnt = 0
    for r in range(ch.shape[0]):
        cnt += ch[r] != 0
    return cnt


@njit(**_OPTS)
def first_equal(ch, m):
    """The first index of ``m`` in the contiguous ``ch`` (its length when absent): a branch-free
    index minimum, so it vectorises (half the time of a count then a scan)."""
    n = ch.shape[0]
    at = n
    for r in range(n):
        at = min(at, r if ch[r] == m else n)
    return at


@njit(**_OPTS)
def first_nan(ch):
    """The first index of a NaN in the contiguous ``ch`` (its length when there is none)."""
    n = ch.shape[0]
    at = n
    for r in range(n):
        at = min(at, r if ch[r] != ch[r] else n)
    return at


@njit(**_OPTS)
def count_nan(ch):
    cnt = 0
    for r in range(ch.shape[0]):
        cnt += ch[r] != ch[r]
    return cnt


@njit(**_OPTS)
def count_equal(ch, m):
    cnt = 0
    for r in range(ch.shape[0]):
        cnt += ch[r] == m
    return cnt


def _any_all_row(is_any: bool):
    """acc or any(seg != 0) (acc and all(seg != 0)), deciding after each chunk of the row.

    The chunks are reduced without a branch (a vectorised max/min of the bool bytes, or a count
    of the nonzero elements), so a row stops within EXIT_CHUNK elements of its answer.
    """

    def row(acc, seg):
        pass

    @overload(row, jit_options=dict(_OPTS))
    def _ol(acc, seg):
        if isinstance(seg.dtype, types.Boolean):

            def impl(acc, seg):
                if acc == is_any:
                    return acc
                u = seg.view(np.uint8)
                for c0 in range(0, u.shape[0], EXIT_CHUNK):
                    ch = u[c0 : c0 + EXIT_CHUNK]
                    if (_max_u8(ch) != 0) if is_any else (_min_u8(ch) == 0):
                        return is_any
                return not is_any

            return impl

        def impl_other(acc, seg):
            if acc == is_any:
                return acc
            for c0 in range(0, seg.shape[0], EXIT_CHUNK):
                ch = seg[c0 : c0 + EXIT_CHUNK]
                cnt = _count_nonzero(ch)
                if (cnt != 0) if is_any else (cnt != ch.shape[0]):
                    return is_any
            return not is_any

        return impl_other

    return row


any_row = _any_all_row(True)
all_row = _any_all_row(False)


#: blocks of a strided any/all reduced between its decisions (a count decided per block ran 1M
#: bools at step 2 in 277 us, NumPy 277; an or-reduction over 16 blocks in 99)
_SPAN_EXIT_BLOCKS = 16


def _any_all_span(is_any: bool):
    """acc or any(a[b0 + r * st] != 0) for r < n (1 < st <= SPAN_STEP; ``all`` likewise): the
    contiguous span in blocks of SPAN_W wanted elements, a masked or-reduction over every
    _SPAN_EXIT_BLOCKS blocks deciding (a run stops within those blocks of its answer)."""

    def span(acc, a, b0, st, n):
        pass

    @overload(span, jit_options=dict(_OPTS))
    def _ol(acc, a, b0, st, n):
        is_bool = isinstance(a.dtype, types.Boolean)

        def impl(acc, a, b0, st, n):
            if acc == is_any:
                return acc
            u = a.view(np.uint8) if is_bool else a
            span_len = st * SPAN_W
            keep = SPAN_KEEP[st, :span_len]
            full = ((n - 1) * st + 1) // span_len
            for g0 in range(0, full, _SPAN_EXIT_BLOCKS):
                g1 = min(g0 + _SPAN_EXIT_BLOCKS, full)
                hit = False  # a wanted nonzero element (any) or zero one (all): decided
                for blk in range(g0, g1):
                    seg = u[b0 + blk * span_len : b0 + (blk + 1) * span_len]
                    for j in range(span_len):
                        hit |= keep[j] & ((seg[j] != 0) if is_any else (seg[j] == 0))
                if hit:
                    return is_any
            for r in range(full * SPAN_W, n):
                if (u[b0 + r * st] != 0) == is_any:
                    return is_any
            return not is_any

        return impl

    return span


any_span = _any_all_span(True)
all_span = _any_all_span(False)
