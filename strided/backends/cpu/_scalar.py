"""Scalar functions for the CPU kernels, one per elementwise primitive, plus the store-with-cast.

Where NumPy's semantics depend on the dtype (integer vs float vs complex), the function is a numba
``@overload`` that picks an implementation at compile time, so the generated loops stay one source
per op.  All of these are inlined into the loops of ``_generated_kernels.py``.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, types
from numba.extending import overload

from . import _complex as C
from . import _vmath as V

#: the elementwise ops this backend implements (name -> arity), one scalar function each (named
#: ``abs_``, ``pow_``, ``round_`` where the name is a Python builtin); _codegen makes their loops
_BINARY_OPS = (
    "add", "subtract", "multiply", "divide", "floor_divide", "remainder", "pow", "maximum",
    "minimum", "logaddexp", "hypot", "atan2", "copysign", "nextafter", "equal", "not_equal",
    "less", "less_equal", "greater", "greater_equal", "logical_and", "logical_or",
    "logical_xor", "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift",
    "bitwise_right_shift",
)  # fmt: skip
_UNARY_OPS = (
    "abs", "negative", "positive", "square", "sign", "reciprocal", "exp", "expm1", "log",
    "log1p", "log2", "log10", "sqrt", "sin", "cos", "tan", "asin", "acos", "atan", "sinh",
    "cosh", "tanh", "asinh", "acosh", "atanh", "floor", "ceil", "trunc", "round", "signbit",
    "isnan", "isinf", "isfinite", "conj", "real", "imag", "logical_not", "bitwise_invert",
)  # fmt: skip
ELEMENTWISE = {**dict.fromkeys(_UNARY_OPS, 1), **dict.fromkeys(_BINARY_OPS, 2)}

# numba-level inlining costs compile time; LLVM inlines these small functions anyway
_INLINE = {}


def _is_complex(t) -> bool:
    return isinstance(t, types.Complex)


def _is_float(t) -> bool:
    return isinstance(t, types.Float)


def _is_int(t) -> bool:
    return isinstance(t, types.Integer)


def _is_bool(t) -> bool:
    return isinstance(t, types.Boolean)


def _vectorised(vfn, other, arity=1, vfn32=None):
    """A scalar function: ``vfn`` (``_vmath``, vectorisable) for real floats, ``other`` else.

    float32 goes through float64 and is rounded once; ``other`` serves complex input.  The float
    paths are inlined into the loops whatever their size (``_vmath.inlined``), so they vectorise.
    """
    f64 = V.inlined(lambda *ts: vfn, arity)
    if vfn32 is not None:
        f32 = vfn32
    elif arity == 1:

        @njit(**V._OPTS)
        def f32(x):
            return np.float32(f64(np.float64(x)))
    else:

        @njit(**V._OPTS)
        def f32(x, y):
            return np.float32(f64(np.float64(x), np.float64(y)))

    other = njit(**C._C)(other)  # the complex functions' own flags: no FMA contraction

    def pick(*ts):
        if all(t == types.float64 for t in ts):
            return vfn
        if all(t == types.float32 for t in ts):
            return f32
        return other

    return V.inlined(pick, arity)


# -- storing with a cast: what C does implicitly, minus what numba refuses ----------------------
def store(arr, i, x):
    """arr[i] = x, converting x to arr's dtype like NumPy's astype."""


@overload(store, **_INLINE)
def _store(arr, i, x):
    target = arr.dtype
    if _is_bool(target) and not _is_bool(x):

        def impl(arr, i, x):
            arr[i] = x != 0
    elif not _is_complex(target) and _is_complex(x):

        def impl(arr, i, x):
            arr[i] = x.real
    else:

        def impl(arr, i, x):
            arr[i] = x

    return impl


def first_of_pair(lo, hi, mask):
    """``lo``, computed from both elements of a pair as ``lo | (hi & mask)`` on their bits with
    ``mask`` 0 at run time: a loop over every other element (x[::2]) that reads both of each
    pair this way is one interleaved group to LLVM's vectoriser (contiguous vector loads and
    shuffles), where reading ``lo`` alone makes gathers or a scalar loop."""


@overload(first_of_pair, **_INLINE)
def _first_of_pair(lo, hi, mask):
    if _is_float(lo):
        return lambda lo, hi, mask: V._from_bits(V._bits(lo) | (V._bits(hi) & mask), lo)
    if _is_bool(lo):
        return lambda lo, hi, mask: lo | ((hi & mask) != 0)
    if _is_int(lo):
        same = getattr(np, lo.name)  # (the int of lo's width: & with an int64 widens)
        return lambda lo, hi, mask: same(lo | (hi & same(mask)))
    return None


# -- arithmetic ------------------------------------------------------------
@njit(**_INLINE)
def add(x, y):
    return x + y


@njit(**_INLINE)
def subtract(x, y):
    return x - y


@njit(error_model="numpy")
def _mul(x, y):
    return x * y


@njit(error_model="numpy")  # x / 0 is inf or NaN, never ZeroDivisionError
def _div(x, y):
    return x / y


def _complex_or(c128, c64, other):
    """pick for _vmath.inlined: _complex's function for two complex operands of one type (the
    loops inline it, so the branch-free complex multiply and divide vectorise), ``other`` else."""

    def pick(x, y):
        if x == y == types.complex128:
            return c128
        if x == y == types.complex64:
            return c64
        return other

    return pick


multiply = V.inlined(_complex_or(C.multiply128, C.multiply64, _mul), 2)


divide = V.inlined(_complex_or(C.divide128, C.divide64, _div), 2)


@njit(**_INLINE)
def negative(x):
    return -x


@njit(**_INLINE)
def positive(x):
    return x


def _square_generic(x):
    pass


@overload(_square_generic, **_INLINE)
def _square(x):
    return lambda x: x * x


@njit(**V._OPTS)
def _square_other(x):
    return _square_generic(x)


# complex: inlined into the loops (a call left in the loop keeps it scalar: 1M complex64 square
# 640 -> ~220 us), complex64 in double precision without cmul_fast's scaling (see _mul64)
_SQUARE_COMPLEX = {types.complex128: C.square128, types.complex64: C.square64}
square = V.inlined(lambda tx: _SQUARE_COMPLEX.get(tx, _square_other), 1)


@njit(**V._OPTS)
def _abs_real(x):
    return np.abs(x)


_ABS_COMPLEX = {types.complex128: C.abs128, types.complex64: C.abs64}
abs_ = V.inlined(lambda tx: _ABS_COMPLEX.get(tx, _abs_real), 1)


def _floor_divide_generic(x, y):
    pass


def _small_ints(x, y) -> bool:
    """Whether x and y are integers of at most 32 bits: their quotient is exact in float64."""
    return (
        isinstance(x, types.Integer)
        and isinstance(y, types.Integer)
        and max(x.bitwidth, y.bitwidth) <= 32
    )


# floor_divide and remainder of integers of up to 32 bits in float64: x / y rounded to float64
# never crosses an integer (a quotient n - e has e >= 1/|y| and n |y| <= |x| < 2^32, so e/n >
# 2^-32, far above float64's 2^-53), so floor(x / y) is the exact floored quotient, and the
# loop vectorises (x86 has no vector integer division: 4096 int32 16.7 -> 5.9 us).  A zero
# divisor gives 0 (NumPy's result) and INT_MIN // -1 wraps around to INT_MIN, as in NumPy.
@njit(**V._OPTS)
def _floored_quotient(x, y):
    q = np.floor(np.float64(x) / np.float64(y if y != 0 else 1))
    return np.int64(q) if y != 0 else np.int64(0)


@njit(**V._OPTS)
def _floored_remainder(x, y):
    r = np.int64(x) - np.int64(y) * _floored_quotient(x, y)
    return r if y != 0 else np.int64(0)


@overload(_floor_divide_generic, **_INLINE)
def _floor_divide(x, y):
    if _small_ints(x, y):
        to = np.dtype(str(x)).type
        return lambda x, y: to(_floored_quotient(x, y))
    if isinstance(x, types.Integer) and x.signed:

        def impl(x, y):
            if y == -1:
                return -x  # x86 traps on INT_MIN // -1; NumPy wraps around
            return np.floor_divide(x, y)

        return impl
    if _is_float(x):
        return lambda x, y: _floor_divide_libm(x, y)
    return lambda x, y: np.floor_divide(x, y)


@njit(error_model="numpy")
def _floor_divide_libm(x, y):
    """floor_divide of floats through libm's fmod: NumPy's npy_divmod, every case."""
    # NumPy's npy_divmod: floor(x / y) alone is off by one where x / y rounds onto an
    # integer (-6.2013426 // 0.016625583 is -374, float32 x / y is -373.0)
    if y == 0 or not (np.isfinite(x) and np.isfinite(y)):
        # the standard's special cases: an infinite x1 over a finite x2 is +-infinity, a
        # finite x1 over an infinite x2 is +-0 (NumPy gives -1.0 there), NaN propagates
        return x / y
    mod = np.fmod(x, y)
    div = (x - mod) / y
    if mod != 0 and (y < 0) != (mod < 0):
        div -= 1
    if div == 0:
        return np.copysign(div - div, x / y)
    fl = np.floor(div)
    if div - fl > 0.5:
        fl += 1
    return fl


def _remainder_generic(x, y):
    pass


@overload(_remainder_generic, **_INLINE)
def _remainder(x, y):
    if _small_ints(x, y):
        to = np.dtype(str(x)).type
        return lambda x, y: to(_floored_remainder(x, y))
    if isinstance(x, types.Integer) and x.signed:

        def impl(x, y):
            if y == -1:
                return x - x  # avoids the INT_MIN % -1 trap
            return np.remainder(x, y)

        return impl
    if _is_float(x):
        return lambda x, y: _remainder_libm(x, y)
    return lambda x, y: np.remainder(x, y)


@njit(error_model="numpy")
def _remainder_libm(x, y):
    """remainder of floats through libm's fmod: NumPy's divmod, every case."""
    # NumPy's divmod: the result takes the divisor's sign, zero included (0 % -3 is -0)
    mod = np.fmod(x, y)
    if y == 0:
        return mod
    if mod != 0:
        if (y < 0) != (mod < 0):
            mod += y
    else:
        mod = np.copysign(mod - mod, y)
    return mod


@njit(**V._OPTS)
def _floor_divide_other(x, y):
    return _floor_divide_generic(x, y)


@njit(**V._OPTS)
def _remainder_other(x, y):
    return _remainder_generic(x, y)


# floats of one type: _vmath's select-only versions (vectorised), exact where the quotient is
# below 2^52 (2^23); divmod_fix redoes the rest with the libm versions above
_FLOOR_DIVIDE_FLOAT = {types.float32: V.floor_divide_f32, types.float64: V.floor_divide_f64}
_REMAINDER_FLOAT = {types.float32: V.remainder_f32, types.float64: V.remainder_f64}
floor_divide = V.inlined(
    lambda tx, ty: (
        _FLOOR_DIVIDE_FLOAT.get(tx, _floor_divide_other) if tx == ty else _floor_divide_other
    ),
    2,
)
remainder = V.inlined(
    lambda tx, ty: _REMAINDER_FLOAT.get(tx, _remainder_other) if tx == ty else _remainder_other,
    2,
)


def _row_any(pred):
    """``any_(a, ab, as_, b, bb, bs, n)``: whether ``pred(x, y)`` (a branch-free bool) holds for
    any element pair of one row, as an or-reduction that vectorises at full width (unit-stride
    rows and a scalar operand read through slices)."""

    @njit(nogil=True, error_model="numpy")
    def any_(a, ab, as_, b, bb, bs, n):
        hit = False
        if as_ == 1 and bs == 1:
            aseg = a[ab : ab + n]
            bseg = b[bb : bb + n]
            for k in range(n):
                hit = hit | pred(aseg[k], bseg[k])
        elif as_ == 1 and bs == 0:
            aseg = a[ab : ab + n]
            y = b[bb]
            for k in range(n):
                hit = hit | pred(aseg[k], y)
        elif as_ == 0 and bs == 1:
            x = a[ab]
            bseg = b[bb : bb + n]
            for k in range(n):
                hit = hit | pred(x, bseg[k])
        else:
            for k in range(n):
                hit = hit | pred(a[ab + k * as_], b[bb + k * bs])
        return hit

    return any_


_DIVMOD_ANY = {
    types.float32: _row_any(V.divmod_needs_libm_f32),
    types.float64: _row_any(V.divmod_needs_libm_f64),
}
_POW_ANY_F32 = _row_any(V.pow_needs_full_f32)


def divmod_fix(o, ob, os, a, ab, as_, b, bb, bs, n, which):
    """Redo with libm the elements of one row whose quotient is too large for the vectorised
    floor_divide (which 0) or remainder (which 1); nothing for other types.  A vectorised test
    first, so rows without such elements cost one cheap pass."""


@overload(divmod_fix, **_INLINE)
def _divmod_fix(o, ob, os, a, ab, as_, b, bb, bs, n, which):
    if a.dtype != b.dtype or a.dtype not in (types.float32, types.float64):
        return lambda o, ob, os, a, ab, as_, b, bb, bs, n, which: None
    needs = V.divmod_needs_libm_f32 if a.dtype == types.float32 else V.divmod_needs_libm_f64
    any_ = _DIVMOD_ANY[a.dtype]

    def impl(o, ob, os, a, ab, as_, b, bb, bs, n, which):
        if not any_(a, ab, as_, b, bb, bs, n):
            return
        for k in range(n):
            x = a[ab + k * as_]
            y = b[bb + k * bs]
            if needs(x, y):
                if which == 0:
                    o[ob + k * os] = _floor_divide_libm(x, y)
                else:
                    o[ob + k * os] = _remainder_libm(x, y)

    return impl


def pow_fix(o, ob, os, a, ab, as_, b, bb, bs, n):
    """Redo with :func:`_vmath.pow_f32` the elements of one float32 row outside the vectorised
    loop's case (``_vmath.pow_needs_full_f32``: a base <= 0, subnormal, inf or NaN, an exponent
    of 1e30 or more in magnitude, or NaN); nothing for other types.  A vectorised test first,
    so rows without such elements cost one cheap pass."""


@overload(pow_fix, **_INLINE)
def _pow_fix(o, ob, os, a, ab, as_, b, bb, bs, n):
    if not (a.dtype == b.dtype == types.float32):
        return lambda o, ob, os, a, ab, as_, b, bb, bs, n: None

    def impl(o, ob, os, a, ab, as_, b, bb, bs, n):
        if not _POW_ANY_F32(a, ab, as_, b, bb, bs, n):
            return
        for k in range(n):
            x = a[ab + k * as_]
            y = b[bb + k * bs]
            if V.pow_needs_full_f32(x, y):
                o[ob + k * os] = V.pow_f32(x, y)

    return impl


def _pow_generic(x, y):
    pass


@overload(_pow_generic, **_INLINE)
def _pow(x, y):
    if _is_int(x):
        # typed constants: numba types uint64 + int64 as float64, which rounded uint64 powers
        # (3**35) and saturated large ones; every step here stays in an integer type
        one = np.uint64(1) if x.signed is False and x.bitwidth == 64 else 1
        zero = np.uint64(0) if x.signed is False and x.bitwidth == 64 else 0

        def impl(x, y):
            # repeated squaring in the operands' own width: wraps around like NumPy
            result = x - x + one
            base = x
            e = y
            if e < zero:
                return x - x  # NumPy raises for negative integer powers; 0 is never silent here
            while e > zero:
                if e & one:
                    result = result * base
                base = base * base
                e >>= one
            return result

        return impl
    if _is_complex(x) and x == y:
        return lambda x, y: C.power(x, y)
    return lambda x, y: x**y


@njit(**V._OPTS)
def _pow_other(x, y):
    return _pow_generic(x, y)


# float ** float of one type runs _vmath.pow_f32 / pow_f64 (vectorised: the whole function is
# inlined into the loop, which an overload's body is not); integers use repeated squaring
# (float32 runs pow_f32_main, the common case, and the kernels' second pass, pow_fix, the rest)
_POW_FLOAT = {types.float32: V.pow_f32_main, types.float64: V.pow_f64}
pow_ = V.inlined(lambda tx, ty: _POW_FLOAT.get(tx, _pow_other) if tx == ty else _pow_other, 2)


def float_elements(a):
    """Whether the array ``a`` holds real floats: a constant the compiler folds, so a loop can
    take a branch for floats only."""
    pass


@overload(float_elements, **_INLINE)
def _float_elements(a):
    answer = _is_float(a.dtype)
    return lambda a: answer


def maximum(x, y):
    pass


@overload(maximum, **_INLINE)
def _maximum(x, y):
    def impl(x, y):
        if x > y or x != x:  # NaN in x propagates; NaN in y fails the test and propagates too
            return x
        return y

    return impl


def minimum(x, y):
    pass


@overload(minimum, **_INLINE)
def _minimum(x, y):
    def impl(x, y):
        if x < y or x != x:
            return x
        return y

    return impl


def _sign_generic(x):
    pass


def _float_sign(F):
    """sign for one float type as selects (the loop vectorises): +-1, 0 for +-0, NaN kept."""
    one, zero = F(1.0), F(0.0)

    @njit(**V._OPTS)
    def sign_float(x):
        r = one if x > zero else (-one if x < zero else zero)
        return x if x != x else r

    return sign_float


_SIGN_FLOAT = {types.float32: _float_sign(np.float32), types.float64: _float_sign(np.float64)}


@njit(**V._OPTS)
def _sign_other(x):
    return _sign_generic(x)


_SIGN_INLINED = {**_SIGN_FLOAT, types.complex128: C.sign128, types.complex64: C.sign64}
sign = V.inlined(lambda tx: _SIGN_INLINED.get(tx, _sign_other), 1)


@overload(_sign_generic, **_INLINE)
def _sign(x):
    if isinstance(x, types.Integer) and not x.signed:
        return lambda x: (x > 0) * (x - x + 1)
    return lambda x: (x > 0) * (x - x + 1) - (x < 0) * (x - x + 1)


def reciprocal(x):
    pass


@overload(reciprocal, **_INLINE)
def _reciprocal(x):
    if _is_complex(x):
        return lambda x: C.reciprocal(x)
    return lambda x: 1 / x


# -- exponentials and logarithms ------------------------------------------------------------
# numba implements NumPy's ufuncs on scalars, complex included


def sqrt(x):
    pass


@overload(sqrt, **_INLINE)
def _sqrt(x):
    if _is_complex(x):
        return lambda x: C.sqrt(x)
    return lambda x: np.sqrt(x)


# -- exponentials, logarithms, trigonometric and hyperbolic functions ---------------------------
# Real floats use the vectorisable arithmetic of _vmath; complex input runs _complex's functions
# (the standard's special cases, no spurious overflow).
exp = _vectorised(V.exp, lambda x: C.exp(x), vfn32=V.exp_f32)
# the exp kernel's loop: float64 covers |x| <= 708 only, the second pass (_vmath.exp_fix) the rest
exp_main = _vectorised(V.exp_main, lambda x: C.exp(x), vfn32=V.exp_f32)
expm1 = _vectorised(V.expm1, lambda x: C.expm1(x), vfn32=V.expm1_f32)
log = _vectorised(V.log, lambda x: C.log(x), vfn32=V.log_f32)
log1p = _vectorised(V.log1p, lambda x: C.log1p(x), vfn32=V.log1p_f32)
log2 = _vectorised(V.log2, lambda x: C.log2(x), vfn32=V.log2_f32)
log10 = _vectorised(V.log10, lambda x: C.log10(x), vfn32=V.log10_f32)
# the log, log2 and log10 kernels' loops: real floats cover positive normal x only, the
# kernels' second pass (_vmath.log_fix) the rest; log1p's: float64 covers -1 < x < inf, its
# second pass (_vmath.log1p_fix) the rest (float32's function is whole); complex as above
log_main = _vectorised(V.log_main, lambda x: C.log(x), vfn32=V.log_main_f32)
log2_main = _vectorised(V.log2_main, lambda x: C.log2(x), vfn32=V.log2_main_f32)
log10_main = _vectorised(V.log10_main, lambda x: C.log10(x), vfn32=V.log10_main_f32)

#: elements the log kernels' unit-stride rows test at a time (see _chunked_rows; a chunk with a
#: special value costs the selects' ~35 % more, not a second pass)
_ROW_CHUNK = 2048


def _chunked_rows(main, cases: dict):
    """``rows(o, a)``: o[k] = main(a[k]) over unit-stride rows, for the log kernels.  For a
    float type in ``cases`` (type -> (needs, redo)) by chunks: a chunk without an element where
    ``needs`` holds (zeros, negatives, subnormals, inf, NaN) runs ``main``, a chunk with one
    runs ``redo``, the same formula with the special cases as selects (the same bits where
    ``main`` applies): one vector loop per chunk, where a second pass after the loop doubled
    the work on data of both signs (1M float32 log, half negative: 0.47 -> 0.30 ms, NumPy
    0.37; 7.9 ms with a branch per element; float64 1.4 -> 0.56, NumPy 5.2).  Chunks of 2048:
    the per-chunk loop set-up of 256 cost positive data 5-8 %."""

    def rows(o, a):
        pass

    @overload(rows, **_INLINE)
    def _ol(o, a):
        case = cases.get(a.dtype)
        if case is None:

            def plain(o, a):
                for k in range(a.shape[0]):
                    store(o, k, main(a[k]))

            return plain
        needs = V.inlined(lambda t: case[0], 1)
        redo = V.inlined(lambda t: case[1], 1)

        def impl(o, a):
            n = a.shape[0]
            for c0 in range(0, n, _ROW_CHUNK):
                c1 = min(c0 + _ROW_CHUNK, n)
                seg = a[c0:c1]
                out = o[c0:c1]
                hit = False
                for k in range(c1 - c0):
                    hit = hit | needs(seg[k])
                if hit:
                    for k in range(c1 - c0):
                        out[k] = redo(seg[k])
                else:
                    for k in range(c1 - c0):
                        out[k] = main(seg[k])

        return impl

    return rows


def _log_cases(i: int) -> dict:
    return {
        types.float32: (
            V.log_needs_full_f32,
            (V.log_redo_f32, V.log2_redo_f32, V.log10_redo_f32)[i],
        ),
        types.float64: (V.log_needs_full, (V.log_redo, V.log2_redo, V.log10_redo)[i]),
    }


log_rows = _chunked_rows(log_main, _log_cases(0))
log2_rows = _chunked_rows(log2_main, _log_cases(1))
log10_rows = _chunked_rows(log10_main, _log_cases(2))
log1p_main = _vectorised(V.log1p_main, lambda x: C.log1p(x), vfn32=V.log1p_f32)
sin = _vectorised(V.sin, lambda x: C.sin(x), vfn32=V.sin_f32)
cos = _vectorised(V.cos, lambda x: C.cos(x), vfn32=V.cos_f32)
tan = _vectorised(V.tan, lambda x: C.tan(x), vfn32=V.tan_f32)
asin = _vectorised(V.asin, lambda x: C.asin(x), vfn32=V.asin_f32)
acos = _vectorised(V.acos, lambda x: C.acos(x), vfn32=V.acos_f32)
atan = _vectorised(V.atan, lambda x: C.atan(x), vfn32=V.atan_f32)
sinh = _vectorised(V.sinh, lambda x: C.sinh(x), vfn32=V.sinh_f32)
cosh = _vectorised(V.cosh, lambda x: C.cosh(x), vfn32=V.cosh_f32)
tanh = _vectorised(V.tanh, lambda x: C.tanh(x), vfn32=V.tanh_f32)
asinh = _vectorised(V.asinh, lambda x: C.asinh(x), vfn32=V.asinh_f32)
acosh = _vectorised(V.acosh, lambda x: C.acosh(x), vfn32=V.acosh_f32)
atanh = _vectorised(V.atanh, lambda x: C.atanh(x), vfn32=V.atanh_f32)


logaddexp = _vectorised(
    V.logaddexp, lambda x, y: np.logaddexp(x, y), arity=2, vfn32=V.logaddexp_f32
)
hypot = _vectorised(V.hypot, lambda x, y: np.hypot(x, y), arity=2, vfn32=V.hypot_f32)


atan2 = _vectorised(V.atan2, lambda x, y: np.arctan2(x, y), arity=2, vfn32=V.atan2_f32)


@njit(**_INLINE)
def copysign(x, y):
    return np.copysign(x, y)


nextafter = _vectorised(V.nextafter, lambda x, y: np.nextafter(x, y), arity=2, vfn32=V.nextafter)


# -- rounding ------------------------------------------------------------
def _rounding(float_fn):
    def fn(x):
        pass

    @overload(fn, **_INLINE)
    def _ol(x):
        if _is_float(x):
            return float_fn
        if _is_complex(x):
            return lambda x: complex(np.rint(x.real), np.rint(x.imag))
        return lambda x: x

    return fn


floor = _rounding(lambda x: np.floor(x))
ceil = _rounding(lambda x: np.ceil(x))
trunc = _rounding(lambda x: np.trunc(x))
round_ = _rounding(lambda x: np.rint(x))


# -- predicates ------------------------------------------------------------
def _predicate(float_fn, int_value):
    def fn(x):
        pass

    @overload(fn, **_INLINE)
    def _ol(x):
        if _is_float(x):
            return lambda x: float_fn(x)
        if _is_complex(x):
            return lambda x: float_fn(x.real) or float_fn(x.imag)
        return lambda x: int_value

    return fn


@njit(**_INLINE)
def _isnan_f(x):
    return x != x


@njit(**_INLINE)
def _isinf_f(x):
    return x == np.inf or x == -np.inf


isnan = _predicate(_isnan_f, False)
isinf = _predicate(_isinf_f, False)


def isfinite(x):
    pass


@overload(isfinite, **_INLINE)
def _isfinite(x):
    if _is_float(x):
        return lambda x: not (x != x or x == np.inf or x == -np.inf)
    if _is_complex(x):
        return lambda x: (
            not (
                x.real != x.real
                or x.imag != x.imag
                or abs(x.real) == np.inf
                or abs(x.imag) == np.inf
            )
        )
    return lambda x: True


def signbit(x):
    pass


@overload(signbit, **_INLINE)
def _signbit(x):
    if _is_float(x):
        return lambda x: math.copysign(1.0, x) < 0
    return lambda x: x < 0


# -- complex parts ------------------------------------------------------------
def conj(x):
    pass


@overload(conj, **_INLINE)
def _conj(x):
    if _is_complex(x):
        return lambda x: x.conjugate()
    return lambda x: x


def real(x):
    pass


@overload(real, **_INLINE)
def _real(x):
    if _is_complex(x):
        return lambda x: x.real
    return lambda x: x


def real_row(o, a):
    """o[k] = real(a[k]) for the unit-stride rows o and a of one length (real's loops)."""


@overload(real_row, **_INLINE)
def _real_row(o, a):
    if _is_complex(a.dtype):

        def impl(o, a):
            # the real part of a[k + 1] is the imaginary part of the complex number made of
            # a[k]'s imaginary part and a[k + 1]'s real part (a misaligned complex view):
            # LLVM loads those with shuffles, where a[k].real alone becomes a gather
            n = a.shape[0]
            if n == 0:
                return
            o[0] = a[0].real
            parts = a.view(o.dtype)
            shifted = parts[1 : 2 * n - 1].view(a.dtype)
            for k in range(n - 1):
                o[k + 1] = shifted[k].imag

        return impl

    def impl(o, a):
        for k in range(a.shape[0]):
            store(o, k, real(a[k]))

    return impl


def imag(x):
    pass


@overload(imag, **_INLINE)
def _imag(x):
    if _is_complex(x):
        return lambda x: x.imag
    zero = x.cast_python_value(0)  # 0 of x's type: also for NaN and infinity (x - x is NaN)
    return lambda x: zero


# -- comparisons and logic ------------------------------------------------------------
@njit(**_INLINE)
def equal(x, y):
    return x == y


@njit(**_INLINE)
def not_equal(x, y):
    return x != y


@njit(**_INLINE)
def less(x, y):
    return x < y


@njit(**_INLINE)
def less_equal(x, y):
    return x <= y


@njit(**_INLINE)
def greater(x, y):
    return x > y


@njit(**_INLINE)
def greater_equal(x, y):
    return x >= y


@njit(**_INLINE)
def logical_and(x, y):
    return bool(x) and bool(y)


@njit(**_INLINE)
def logical_or(x, y):
    return bool(x) or bool(y)


@njit(**_INLINE)
def logical_xor(x, y):
    return bool(x) != bool(y)


@njit(**_INLINE)
def logical_not(x):
    return not x


# -- bitwise ------------------------------------------------------------
def _bitwise(int_fn, bool_fn):
    def fn(x, y):
        pass

    @overload(fn, **_INLINE)
    def _ol(x, y):
        return bool_fn if _is_bool(x) else int_fn

    return fn


bitwise_and = _bitwise(lambda x, y: x & y, lambda x, y: x and y)
bitwise_or = _bitwise(lambda x, y: x | y, lambda x, y: x or y)
bitwise_xor = _bitwise(lambda x, y: x ^ y, lambda x, y: x != y)


def bitwise_invert(x):
    pass


@overload(bitwise_invert, **_INLINE)
def _invert(x):
    if _is_bool(x):
        return lambda x: not x
    return lambda x: ~x


def bitwise_left_shift(x, y):
    pass


@overload(bitwise_left_shift, **_INLINE)
def _lshift(x, y):
    bits = x.bitwidth

    def impl(x, y):
        if y < 0 or y >= bits:
            return x - x  # NumPy: every bit shifted out
        return x << y

    return impl


def bitwise_right_shift(x, y):
    pass


@overload(bitwise_right_shift, **_INLINE)
def _rshift(x, y):
    bits = x.bitwidth
    if x.signed:

        def impl(x, y):
            if y < 0 or y >= bits:
                return x - x - 1 if x < 0 else x - x  # sign fill
            return x >> y

        return impl

    def impl_u(x, y):
        if y < 0 or y >= bits:
            return x - x
        return x >> y

    return impl_u
