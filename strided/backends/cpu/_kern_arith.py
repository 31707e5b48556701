"""Arithmetic kernels for cases the generated loops serve slowly: a large dense small-integer
array floor-divided by a Python int, a dense float array raised to 2, 0.5, -1 or 1, and a dense
integer array raised to a Python int.

An integer division per element does not vectorise (x86 has no SIMD integer divide) and costs
about 1.4 ns per int32 element; NumPy precomputes a multiplier (libdivide) and runs 0.1 ns.
Here the quotient is computed in float64, which is exact for operands of up to 32 bits:

    x = k d - r with 0 < r < |d| (x / d just below the integer k): float64 rounds x / d by at
    most |k| 2^-53, and |k| 2^-53 < 1 / |d| <= r / |d| because |k d| <= |x| + |d| < 2^33 < 2^53,
    so the rounded quotient stays below k and floor() gives k - 1; where x / d is an integer
    the division is exact.  Hence floor(float64(x) / float64(d)) == x // d for every int32,
    uint32, int16, uint16, int8 and uint8 x and d, d not 0.

d == -1 (INT_MIN // -1 wraps around in NumPy; the float quotient would not fit) and d == 0 stay
with the generic loop.  The loop multiplies by 1/d and corrects the quotient by the exact
remainder (``_fdiv_run``), which vectorises (8 lanes per AVX-512 instruction) and costs less than
a float division per element.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

_OPTS = dict(cache=True, nogil=True, error_model="numpy")

#: elements per parallel task
_SEG = 1 << 15
#: below this many elements the serial loop runs (kernels.PARALLEL_THRESHOLD)
_PARALLEL_MIN = 1 << 16


@njit(**_OPTS)
def _fdiv_run(o, x, xo, n, d):
    """o[k] = x[xo + k] // d by a multiplication: q = floor(x * (1/d)) is within one of the quotient
    (the product's relative error is below 2^-52, so its absolute error below 2^32 2^-52), and
    the remainder x - q d, exact in float64 (|q d| < 2^33), says which way: for d > 0 it must
    lie in [0, d), for d < 0 in (d, 0].  One correction each way, no division (vdivpd costs
    about four times the multiply, compare and select steps).  Both signs in one loop: r and d
    times sign(d) are exact, so s*r < 0 and s*r >= |d| are those two tests."""
    df = np.float64(d)
    inv = 1.0 / df
    s = 1.0 if d > 0 else -1.0
    ad = abs(df)
    xs = x[xo : xo + n]  # (x[xo + k], a signed index, loaded through gathers: 2x slower)
    for k in range(n):
        xf = np.float64(xs[k])
        q = np.floor(xf * inv)
        r = (xf - q * df) * s
        q = q - 1.0 if r < 0.0 else q
        o[k] = q + 1.0 if r >= ad else q


@njit(parallel=True, **_OPTS)
def floor_divide_scalar_int(o, x, xo, n, d):
    """o[k] = x[xo + k] // d for a nonzero d other than -1 (see the module's docstring)."""
    nseg = (n + _SEG - 1) // _SEG
    for t in prange(nseg):
        k0 = t * _SEG
        k1 = min(k0 + _SEG, n)
        _fdiv_run(o[k0:k1], x, xo + k0, k1 - k0, d)


#: dtypes whose values and divisors float64 represents exactly, with quotients that stay exact
SMALL_INT = frozenset({"int8", "int16", "int32", "uint8", "uint16", "uint32"})


def floor_divide_scalar(out, x1, x2) -> bool:
    """Run ``out = x1 // x2`` here when ``x1`` is a dense small-integer array laid out like
    ``out`` and ``x2`` a Python int (not 0 or -1); False when the case is not served here."""
    if type(x2) is not int or x2 == 0 or x2 == -1 or type(x1) in (int, float, bool, complex):
        return False
    if x1._dtype.name not in SMALL_INT or out._dtype is not x1._dtype:
        return False
    if x1._shape != out._shape or x1._strides != out._strides:
        return False
    n = out._buf.size
    if n >= _PARALLEL_MIN:
        floor_divide_scalar_int(out._buf, x1._buf, x1._offset, n, np.int64(x2))
    elif n:
        _fdiv_run(out._buf, x1._buf, x1._offset, n, np.int64(x2))
    return True


# -- x ** c for the exponents that are one correctly rounded operation ---------------------------
@njit(**_OPTS)
def _pow_special_run(o, x, n, which):
    # which: 0 x*x, 1 sqrt (the standard: (-0) ** 0.5 is +0, (-inf) ** 0.5 is +inf), 2 1/x, 3 x
    if which == 0:
        for k in range(n):
            o[k] = x[k] * x[k]
    elif which == 1:
        for k in range(n):
            v = x[k]
            r = np.sqrt(v)
            o[k] = abs(v) if (v == 0 or v == -np.inf) else r
    elif which == 2:
        one = x.dtype.type(1)
        for k in range(n):
            o[k] = one / x[k]
    else:
        for k in range(n):
            o[k] = x[k]


@njit(parallel=True, **_OPTS)
def pow_special(o, x, xo, n, which):
    """o[k] = x[xo + k] ** c for c = 2, 0.5, -1, 1 (``which`` 0-3): one multiply, square root
    or division, each correctly rounded, so at least as accurate as libm's pow."""
    nseg = (n + _SEG - 1) // _SEG
    for t in prange(nseg):
        k0 = t * _SEG
        k1 = min(k0 + _SEG, n)
        _pow_special_run(o[k0:k1], x[xo + k0 : xo + k1], k1 - k0, which)


_POW_WHICH = {2: 0, 0.5: 1, -1: 2, 1: 3}  # 2.0, -1.0 and 1.0 hash like the ints
_INT_KINDS = ("signed integer", "unsigned integer")
_BLOCK = 512


@njit(**_OPTS)
def _ipow_run(o, x, n, e):
    """o[k] = x[k] ** e for an int e >= 0: binary exponentiation with the exponent's bits outside
    the element loops, so each step is one vectorised multiply over a block in cache (the
    generic loop's per-element while loop stays scalar, as NumPy's does); in the array's own
    width, wrapping around like NumPy."""
    one = x.dtype.type(1)
    base = np.empty(min(n, _BLOCK), x.dtype)
    for c0 in range(0, n, _BLOCK):
        m = min(_BLOCK, n - c0)
        ob = o[c0 : c0 + m]
        xb = x[c0 : c0 + m]
        for k in range(m):  # (base read first: o may be x itself, the staged input)
            base[k] = xb[k]
            ob[k] = one
        r = e
        while r > 0:
            if r & 1:
                for k in range(m):
                    ob[k] = ob[k] * base[k]
            r >>= 1
            if r > 0:
                for k in range(m):
                    base[k] = base[k] * base[k]


@njit(parallel=True, **_OPTS)
def ipow(o, x, xo, n, e):
    """:func:`_ipow_run` over segments among the threads."""
    nseg = (n + _SEG - 1) // _SEG
    for t in prange(nseg):
        k0 = t * _SEG
        k1 = min(k0 + _SEG, n)
        _ipow_run(o[k0:k1], x[xo + k0 : xo + k1], k1 - k0, e)


def int_power_exponent(x1, x2) -> bool:
    """Whether ``x1 ** x2`` is an integer array to a Python int power the block loop serves."""
    return type(x2) is int and 0 <= x2 < 2**63 and x1._dtype.kind in _INT_KINDS


def pow_scalar(out, x1, x2, stage=None) -> bool:
    """Run ``out = x1 ** x2`` here when ``x2`` is a Python int/float in (2, 0.5, -1, 1) for real
    floats, or any int in [0, 2^63) for integers, and ``x1`` a dense array laid out like
    ``out``, or another layout (a stepped or broadcast view) that ``stage(out, x1)`` copies into
    ``out`` first, the loops then running in place (1M float64 ``x[::2] ** 2``: libm's pow per
    element, 14.6 ms, against NumPy's 0.64); False when the case is not served here."""
    if type(x2) not in (int, float) or type(x1) in (int, float, bool, complex):
        return False
    if not out._buf.size or out._dtype is not x1._dtype:
        return False
    integer = int_power_exponent(x1, x2)
    which = None if integer else _POW_WHICH.get(x2)
    if not integer and (which is None or x1._dtype.kind != "real floating"):
        return False
    n = out._buf.size
    if x1._shape != out._shape or x1._strides != out._strides:
        # out fresh from the dispatcher: all of its buffer, in one memory order
        if stage is None or out._offset or x1._buf is out._buf or math.prod(out._shape) != n:
            return False
        stage(out, x1)
        x1 = out
    if integer:
        if n < _PARALLEL_MIN:
            _ipow_run(out._buf, x1._buf[x1._offset : x1._offset + n], n, x2)
        else:
            ipow(out._buf, x1._buf, x1._offset, n, x2)
        return True
    if n < _PARALLEL_MIN:  # starting threads costs more than the loop
        _pow_special_run(out._buf, x1._buf[x1._offset : x1._offset + n], n, which)
    else:
        pow_special(out._buf, x1._buf, x1._offset, n, which)
    return True


# -- sequences: arange and linspace written in place, in NumPy's arithmetic ---------------------
_ENTRIES: dict = {}  # (loop, buffer dtype, scalar types) -> the loop's compiled entry point


def _entry(key, loop, args) -> None:
    """``loop(*args)`` through its compiled entry for these argument types (numba's type
    dispatch costs ~1.5 us a call, the whole of a short sequence's time); ``key`` names the
    types (the caller knows which of its arguments vary: a key built from all of them costs
    ~0.5 us)."""
    entry = _ENTRIES.get(key)
    if entry is None:
        loop(*args)
        sig = tuple(loop.typeof_pyval(a) for a in args)
        _ENTRIES[key] = loop.overloads[sig].entry_point
        return
    entry(*args)


@njit(**_OPTS)
def _arange_run(o, oo, lo, hi, start, step):
    """o[oo + i] = start + step * i for i in [lo, hi): int64 arithmetic for int start and step,
    float64 otherwise, stored in o's dtype (NumPy's ``start + step * arange(n)``, cast once)."""
    seg = o[oo + lo : oo + hi]  # (through a slice: o[oo + i] tests a signed index, 4x slower)
    for j in range(hi - lo):
        seg[j] = start + step * (lo + j)


@njit(parallel=True, **_OPTS)
def _arange_p(o, oo, n, start, step):
    nseg = (n + _SEG - 1) // _SEG
    for t in prange(nseg):
        _arange_run(o, oo, t * _SEG, min((t + 1) * _SEG, n), start, step)


def arange_fill(buf, off: int, n: int, start, step) -> None:
    """buf[off : off + n] = start + step * i, in one pass (over threads when long): NumPy's
    values without its three temporaries (1M int32 807 -> ~100 us)."""
    if n < _PARALLEL_MIN:
        key = (_arange_run, buf.dtype, type(start), type(step))  # (off and n: always ints)
        _entry(key, _arange_run, (buf, off, 0, n, start, step))
    else:
        _arange_p(buf, off, n, start, step)


@njit(**_OPTS)
def _linspace_run(o, oo, lo, hi, start, step, delta, div, step_zero):
    """o[oo + i] = i * step + start (float64), or (i / div) * delta + start where the step
    underflows to zero: numpy.linspace's arithmetic, stored in o's dtype."""
    seg = o[oo + lo : oo + hi]
    for j in range(hi - lo):
        fi = np.float64(lo + j)
        seg[j] = (fi / div) * delta + start if step_zero else fi * step + start


@njit(parallel=True, **_OPTS)
def _linspace_p(o, oo, n, start, step, delta, div, step_zero):
    nseg = (n + _SEG - 1) // _SEG
    for t in prange(nseg):
        _linspace_run(o, oo, t * _SEG, min((t + 1) * _SEG, n), start, step, delta, div, step_zero)


def linspace_fill(buf, off: int, n: int, start: float, stop: float, endpoint: bool) -> None:
    """buf[off : off + n] = numpy.linspace(start, stop, n, endpoint) for real start and stop, in
    one pass with the same float64 operations (the last value is stop itself with the
    endpoint)."""
    div = float(n - 1 if endpoint else n)
    delta = stop - start
    if div > 0:
        step = delta / div
        step_zero = step == 0.0
    else:  # one value with the endpoint: start
        step, step_zero = 0.0, False
    if n < _PARALLEL_MIN:
        args = (buf, off, 0, n, start, step, delta, div if div > 0 else 1.0, step_zero)
        _entry((_linspace_run, buf.dtype), _linspace_run, args)  # (the rest: float64, bool)
    else:
        _linspace_p(buf, off, n, start, step, delta, div, step_zero)
    if endpoint and n > 1:
        buf[off + n - 1] = stop


# -- cross products ---------------------------------------------------------------------------
# linalg.cross in one pass (nine elementwise ops and a stack were 2x NumPy's time on 1365
# vectors).  No fastmath: each component is NumPy's a1*b2 - a2*b1, rounded the same way.


@njit(**_OPTS)
def _cross_run(o, oo, a, ao, ar, ae, b, bo, br, be, lo, hi):
    if (
        ar == 3 and ae == 1 and br == 3 and be == 1
    ):  # rows of three in a row: 1365 rows 4.6 -> 2.6 us
        n = hi - lo
        u = a[ao + 3 * lo : ao + 3 * hi].reshape(n, 3)
        v = b[bo + 3 * lo : bo + 3 * hi].reshape(n, 3)
        w = o[oo + 3 * lo : oo + 3 * hi].reshape(n, 3)
        for i in range(n):
            w[i, 0] = u[i, 1] * v[i, 2] - u[i, 2] * v[i, 1]
            w[i, 1] = u[i, 2] * v[i, 0] - u[i, 0] * v[i, 2]
            w[i, 2] = u[i, 0] * v[i, 1] - u[i, 1] * v[i, 0]
        return
    for i in range(lo, hi):
        p = ao + i * ar
        q = bo + i * br
        a0, a1, a2 = a[p], a[p + ae], a[p + 2 * ae]
        b0, b1, b2 = b[q], b[q + be], b[q + 2 * be]
        k = oo + 3 * i
        o[k] = a1 * b2 - a2 * b1
        o[k + 1] = a2 * b0 - a0 * b2
        o[k + 2] = a0 * b1 - a1 * b0


@njit(**_OPTS)
def cross_rows(o, oo, a, ao, ar, ae, b, bo, br, be, rows):
    """o[oo + 3i + j] = the j-th component of the cross product of row i of a (from ao, rows ar
    apart, components ae apart) and row i of b (likewise)."""
    _cross_run(o, oo, a, ao, ar, ae, b, bo, br, be, 0, rows)


@njit(parallel=True, **_OPTS)
def cross_rows_p(o, oo, a, ao, ar, ae, b, bo, br, be, rows):
    """cross_rows with the rows shared among the threads."""
    seg = _SEG // 4
    nseg = (rows + seg - 1) // seg
    for t in prange(nseg):
        _cross_run(o, oo, a, ao, ar, ae, b, bo, br, be, t * seg, min((t + 1) * seg, rows))
