"""Variance in one kernel: both passes of the two-pass algorithm over each dense run.

``var`` as a composition (mean, subtract, multiply, sum, divide) made six dispatcher calls and
three temporaries: 30 us for 4096 float32 elements where PyTorch takes 10, and 0.7 ms for 1M
(two reads of the input suffice).  Here each run of ``n`` dense elements (one per output
element) is read twice: its mean, then the sum of squared deviations from it, divided by
``n - correction``.  The summations use the same reassociating vectorised loops as ``sum``.

A single long run (a full reduction) is cut into fixed segments of ``SEGMENT`` elements whose
partial sums are added in order, so the result does not depend on how many threads run.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

_ROW = dict(nogil=True, error_model="numpy", fastmath={"reassoc", "contract"})
_OPTS = dict(_ROW, cache=True)

#: elements per task of a parallel full reduction (kernels.SEGMENT)
SEGMENT = 1 << 14


@njit(**_ROW)
def _total(a, lo, hi, zero):
    """sum of a[lo:hi].  The loops index a slice from 0: a[k] with k from a signed ``lo`` is
    wrapped for negative k by numba, which kept LLVM from vectorising (1M float32 var: 920 us
    on one thread, NumPy 470)."""
    run = a[lo:hi]
    acc = zero
    for k in range(run.size):
        acc += run[k]
    return acc


@njit(**_ROW)
def _squares(a, lo, hi, mean, rzero):
    """sum |a[k] - mean|^2 over [lo, hi) (real for complex a)."""
    run = a[lo:hi]
    acc = rzero
    for k in range(run.size):
        d = run[k] - mean
        acc += (d * np.conj(d)).real
    return acc


@njit(**_ROW)
def _finish(squares, dof, root):
    """The variance from the sum of squared deviations, or its square root (std)."""
    v = squares / dof
    return np.sqrt(v) if root else v


@njit(**_OPTS)
def var_rows(o, x, xo, kept, n, zero, rzero, count, dof, root):
    """o[i] = var of x[xo + i n : xo + (i + 1) n] for i < kept (its square root with ``root``):
    ``count`` is n and ``dof`` n - correction (NaN where that is not positive), both in o's
    dtype."""
    for i in range(kept):
        lo = xo + i * n
        mean = _total(x, lo, lo + n, zero) / count
        o[i] = _finish(_squares(x, lo, lo + n, mean, rzero), dof, root)


@njit(parallel=True, **_OPTS)
def var_rows_p(o, x, xo, kept, n, zero, rzero, count, dof, root):
    """var_rows with the rows shared among the threads (each row is one thread's)."""
    for i in prange(kept):
        lo = xo + i * n
        mean = _total(x, lo, lo + n, zero) / count
        o[i] = _finish(_squares(x, lo, lo + n, mean, rzero), dof, root)


@njit(parallel=True, **_OPTS)
def var_long_p(o, x, xo, n, zero, rzero, count, dof, root):
    """o[0] = var of x[xo : xo + n], one run cut into SEGMENT-element tasks."""
    nseg = (n + SEGMENT - 1) // SEGMENT
    totals = np.empty(nseg, x.dtype)
    for t in prange(nseg):
        lo = xo + t * SEGMENT
        totals[t] = _total(x, lo, min(lo + SEGMENT, xo + n), zero)
    total = zero
    for t in range(nseg):  # in order: the same bits for any number of threads
        total += totals[t]
    mean = total / count
    squares = np.empty(nseg, o.dtype)
    for t in prange(nseg):
        lo = xo + t * SEGMENT
        squares[t] = _squares(x, lo, min(lo + SEGMENT, xo + n), mean, rzero)
    ss = rzero
    for t in range(nseg):
        ss += squares[t]
    o[0] = _finish(ss, dof, root)


@njit(**_ROW)
def _cols(o, x, xo, kept, c0, c1, n, zero, rzero, count, dof, root):
    """o[j] = var over r < n of x[xo + r kept + j] for j in [c0, c1): the rows are dense
    across j, so each pass adds one row to every column's sum (vectorised across columns)."""
    w = c1 - c0
    means = np.empty(w, x.dtype)
    for j in range(w):
        means[j] = zero
    for r in range(n):
        row = x[xo + r * kept + c0 : xo + r * kept + c1]
        for j in range(w):
            means[j] += row[j]
    for j in range(w):
        means[j] = means[j] / count
    squares = np.empty(w, o.dtype)
    for j in range(w):
        squares[j] = rzero
    for r in range(n):
        row = x[xo + r * kept + c0 : xo + r * kept + c1]
        for j in range(w):
            d = row[j] - means[j]
            squares[j] += (d * np.conj(d)).real
    for j in range(w):
        o[c0 + j] = _finish(squares[j], dof, root)


#: columns per task of var_cols_p (each column's sums run in one task, in row order)
COLUMNS = 1 << 10


@njit(**_OPTS)
def var_cols(o, x, xo, kept, n, zero, rzero, count, dof, root):
    """var over the leading run of a layout whose kept elements are dense and innermost: x[xo +
    r kept + j] is element r of output j's run (a transposed matrix reduced along its rows)."""
    for b in range((kept + COLUMNS - 1) // COLUMNS):
        _col_block(o, x, xo, kept, b, n, zero, rzero, count, dof, root)


@njit(parallel=True, **_OPTS)
def var_cols_p(o, x, xo, kept, n, zero, rzero, count, dof, root):
    """var_cols with the column blocks shared among the threads."""
    for b in prange((kept + COLUMNS - 1) // COLUMNS):
        _col_block(o, x, xo, kept, b, n, zero, rzero, count, dof, root)


@njit(**_ROW)
def _col_block(o, x, xo, kept, b, n, zero, rzero, count, dof, root):
    c0 = b * COLUMNS
    _cols(o, x, xo, kept, c0, min(c0 + COLUMNS, kept), n, zero, rzero, count, dof, root)


# -- dot products of dense runs (vecdot, the euclidean norm) -------------------------------------


@njit(**_ROW)
def _dot(a, alo, b, blo, n, zero):
    """sum a[alo + k] b[blo + k] over k < n (a vectorised, reassociating loop, as sum's); a run
    with itself (a norm's) loads each element once: 1M float64 66 -> 49 us (BLAS ddot 64)."""
    ra = a[alo : alo + n]
    acc = zero
    if alo == blo and a.ctypes.data == b.ctypes.data:
        for k in range(n):
            v = ra[k]
            acc += v * v
        return acc
    rb = b[blo : blo + n]
    for k in range(n):
        acc += ra[k] * rb[k]
    return acc


@njit(**_OPTS)
def dot_rows(o, a, ao, b, bo, kept, n, zero, root):
    """o[i] = the dot product of the i-th runs of n elements of a (from ao) and b (from bo),
    or its square root with ``root`` (the euclidean norm of a run with itself)."""
    for i in range(kept):
        d = _dot(a, ao + i * n, b, bo + i * n, n, zero)
        o[i] = np.sqrt(d) if root else d


@njit(parallel=True, **_OPTS)
def dot_rows_p(o, a, ao, b, bo, kept, n, zero, root):
    """dot_rows with the rows shared among the threads."""
    for i in prange(kept):
        d = _dot(a, ao + i * n, b, bo + i * n, n, zero)
        o[i] = np.sqrt(d) if root else d


@njit(parallel=True, **_OPTS)
def dot_long_p(o, a, ao, b, bo, n, zero, root):
    """o[0] = the dot product of one long run (its square root with ``root``), cut into
    SEGMENT-element tasks whose partial sums are added in order (the same bits for any number
    of threads)."""
    nseg = (n + SEGMENT - 1) // SEGMENT
    partial = np.empty(nseg, o.dtype)
    for t in prange(nseg):
        lo = t * SEGMENT
        partial[t] = _dot(a, ao + lo, b, bo + lo, min(SEGMENT, n - lo), zero)
    total = zero
    for t in range(nseg):
        total += partial[t]
    o[0] = np.sqrt(total) if root else total
