"""Arithmetic kernels for one case the generated loops serve slowly: a large dense small-integer
array floor-divided by a Python int.

An integer division per element does not vectorise (x86 has no SIMD integer divide) and costs
about 1.4 ns per int32 element; NumPy precomputes a multiplier (libdivide) and runs 0.1 ns.
Here the quotient is computed in float64, which is exact for operands of up to 32 bits:

    x = k d - r with 0 < r < |d| (x / d just below the integer k): float64 rounds x / d by at
    most |k| 2^-53, and |k| 2^-53 < 1 / |d| <= r / |d| because |k d| <= |x| + |d| < 2^33 < 2^53,
    so the rounded quotient stays below k and floor() gives k - 1; where x / d is an integer
    the division is exact.  Hence floor(float64(x) / float64(d)) == x // d for every int32,
    uint32, int16, uint16, int8 and uint8 x and d, d not 0.

d == -1 (INT_MIN // -1 wraps around in NumPy; the float quotient would not fit) and d == 0 stay
with the generic loop.  Float division vectorises (8 lanes per AVX-512 instruction).
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

_OPTS = dict(cache=True, nogil=True, error_model="numpy")

#: elements per parallel task
_SEG = 1 << 15


@njit(**_OPTS)
def _fdiv_run(o, x, n, d):
    df = np.float64(d)
    for k in range(n):
        o[k] = np.floor(np.float64(x[k]) / df)


@njit(parallel=True, **_OPTS)
def floor_divide_scalar_int(o, x, xo, n, d):
    """o[k] = x[xo + k] // d for a nonzero d other than -1 (see the module's docstring)."""
    nseg = (n + _SEG - 1) // _SEG
    for t in prange(nseg):
        k0 = t * _SEG
        k1 = min(k0 + _SEG, n)
        _fdiv_run(o[k0:k1], x[xo + k0 : xo + k1], k1 - k0, d)


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
    floor_divide_scalar_int(out._buf, x1._buf, x1._offset, n, np.int64(x2))
    return True
