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

from . import _vmath as V

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
def _put_dot(o, i, d, root):
    """o[i] = d, or its square root with ``root`` (stored apart, not one conditional expression:
    its two arms would unify an integer sum with the float root, losing int64 bits)."""
    if root:
        o[i] = np.sqrt(d)
    else:
        o[i] = d


@njit(**_ROW)
def _dot(a, alo, b, blo, n, zero):
    """sum a[alo + k] b[blo + k] over k < n (a vectorised, reassociating loop, as sum's); a run
    with itself (a norm's) loads each element once: 1M float64 66 -> 49 us (BLAS ddot 64)."""
    ra = a[alo : alo + n]
    acc = zero
    if alo == blo and a.ctypes.data == b.ctypes.data:
        for k in range(n):
            v = ra[k]
            acc += np.conj(v) * v
        return acc
    rb = b[blo : blo + n]
    for k in range(n):
        acc += np.conj(ra[k]) * rb[k]
    return acc


#: runs shorter than this are summed by a plain loop (no slices per run: vecdot of 100000
#: runs of 3 float64 0.98 -> ~0.11 ms, NumPy 0.58)
SHORT_RUN = 16


@njit(**_ROW)
def _dot_short_rows(o, a, ao, b, bo, i0, i1, n, zero, root):
    """o[i] for the runs i0..i1 of n < SHORT_RUN elements each."""
    for i in range(i0, i1):
        pa, pb = ao + i * n, bo + i * n
        d = zero
        for k in range(n):
            d += np.conj(a[np.uint64(pa + k)]) * b[np.uint64(pb + k)]
        _put_dot(o, i, d, root)


@njit(**_OPTS)
def dot_rows(o, a, ao, b, bo, kept, n, zero, root):
    """o[i] = the dot product of the i-th runs of n elements of a (from ao) and b (from bo),
    or its square root with ``root`` (the euclidean norm of a run with itself)."""
    if n < SHORT_RUN:
        _dot_short_rows(o, a, ao, b, bo, 0, kept, n, zero, root)
        return
    for i in range(kept):
        d = _dot(a, ao + i * n, b, bo + i * n, n, zero)
        _put_dot(o, i, d, root)


@njit(parallel=True, **_OPTS)
def dot_rows_p(o, a, ao, b, bo, kept, n, zero, root):
    """dot_rows with the rows shared among the threads (short runs in blocks of rows)."""
    if n < SHORT_RUN:
        per = SEGMENT // n
        for t in prange((kept + per - 1) // per):
            _dot_short_rows(o, a, ao, b, bo, t * per, min(t * per + per, kept), n, zero, root)
        return
    for i in prange(kept):
        d = _dot(a, ao + i * n, b, bo + i * n, n, zero)
        _put_dot(o, i, d, root)


@njit(**_ROW)
def _dot_col_block(o, a, ao, b, bo, kept, blk, n, zero, root):
    """o[j] = the dot product over r < n of a[ao + r kept + j] and b[bo + r kept + j] for the
    columns of block ``blk`` (COLUMNS wide): each row of both added to every column's sum
    (vectorised across columns; each sum in row order, as NumPy's reduction of the product)."""
    c0 = blk * COLUMNS
    w = min(c0 + COLUMNS, kept) - c0
    acc = np.empty(w, o.dtype)
    for j in range(w):
        acc[j] = zero
    same = ao == bo and a.ctypes.data == b.ctypes.data
    for r in range(n):
        ra = a[ao + r * kept + c0 : ao + r * kept + c0 + w]
        if same:
            for j in range(w):
                acc[j] += np.conj(ra[j]) * ra[j]
        else:
            rb = b[bo + r * kept + c0 : bo + r * kept + c0 + w]
            for j in range(w):
                acc[j] += np.conj(ra[j]) * rb[j]
    for j in range(w):
        _put_dot(o, c0 + j, acc[j], root)


@njit(**_OPTS)
def dot_cols(o, a, ao, b, bo, kept, n, zero, root):
    """dot_rows for operands whose reduced elements are outermost and kept ones dense and
    innermost (a C array reduced over its leading axes: vecdot or the norm along axis 0):
    o[j] over a[ao + r kept + j] b[bo + r kept + j], r < n.  (Copying each operand with the
    reduced axes last took 2.5 ms of a 10 x 100000 norm along axis 0; NumPy 0.22-0.58.)"""
    for blk in range((kept + COLUMNS - 1) // COLUMNS):
        _dot_col_block(o, a, ao, b, bo, kept, blk, n, zero, root)


@njit(parallel=True, **_OPTS)
def dot_cols_p(o, a, ao, b, bo, kept, n, zero, root):
    """dot_cols with the column blocks shared among the threads (each column in one task)."""
    for blk in prange((kept + COLUMNS - 1) // COLUMNS):
        _dot_col_block(o, a, ao, b, bo, kept, blk, n, zero, root)


#: dot_cols operands narrower than this are read as one long run (dot_narrow_cols)
NARROW = 32


@njit(**_ROW)
def _narrow_partial(acc, a, ao, b, bo, width, c0, c1):
    """acc[i] += a[ao + c width + i] b[bo + c width + i] for the chunks c0..c1 of ``width``
    elements (vectorised along the chunk: the sums' chains are a chunk apart)."""
    for c in range(c0, c1):
        pa = ao + c * width
        pb = bo + c * width
        for i in range(width):
            acc[i] += np.conj(a[np.uint64(pa + i)]) * b[np.uint64(pb + i)]


@njit(**_ROW)
def _narrow_finish(o, acc, a, ao, b, bo, kept, n, reps, zero, root):
    """o[j] = the sum of acc's elements of column j (acc holds ``reps`` rows of ``kept``) plus
    the rows from ``chunks * reps`` on, its square root with ``root``."""
    for j in range(kept):
        d = zero
        for q in range(reps):
            d += acc[q * kept + j]
        for r in range((n // reps) * reps, n):
            d += np.conj(a[ao + r * kept + j]) * b[bo + r * kept + j]
        _put_dot(o, j, d, root)


@njit(**_OPTS)
def dot_narrow_cols(o, a, ao, b, bo, kept, n, zero, root):
    """dot_cols of few columns (``kept`` < NARROW): the rows read as one long run in chunks of
    ``reps`` rows (about 64 elements), each chunk element added to its own sum, the sums then
    added per column: no chain of additions a row apart, as a sum per column would have
    (100000 x 3 float64 along axis 0: 1.2 ms -> ~0.17, NumPy's strided BLAS dot 0.15)."""
    reps = max(1, 64 // kept)
    width = kept * reps
    acc = np.empty(width, o.dtype)
    for i in range(width):
        acc[i] = zero
    _narrow_partial(acc, a, ao, b, bo, width, 0, n // reps)
    _narrow_finish(o, acc, a, ao, b, bo, kept, n, reps, zero, root)


@njit(parallel=True, **_OPTS)
def dot_narrow_cols_p(o, a, ao, b, bo, kept, n, zero, root):
    """dot_narrow_cols with the chunks cut into tasks of about SEGMENT elements whose partial
    sums are added in task order (the same bits for any number of threads)."""
    reps = max(1, 64 // kept)
    width = kept * reps
    chunks = n // reps
    per_task = max(1, SEGMENT // width)
    tasks = (chunks + per_task - 1) // per_task
    partial = np.zeros((tasks, width), o.dtype)
    for t in prange(tasks):
        c0 = t * per_task
        _narrow_partial(partial[t], a, ao, b, bo, width, c0, min(c0 + per_task, chunks))
    acc = np.empty(width, o.dtype)
    for i in range(width):
        acc[i] = zero
    for t in range(tasks):
        for i in range(width):
            acc[i] += partial[t, i]
    _narrow_finish(o, acc, a, ao, b, bo, kept, n, reps, zero, root)


@njit(**_ROW)
def _dot_span(a, alo, b, blo, st, n, zero):
    """sum a[alo + k st] b[blo + k st] over k < n for a step 1 < st <= _vmath.SPAN_STEP: the runs'
    whole spans in blocks, the products between the wanted elements selected away (scattered
    loads do not vectorise: 1M float64 at step 2 copied first 882 us, NumPy's strided BLAS 158)."""
    span_len = st * V.SPAN_W
    keep = V.SPAN_KEEP[st, :span_len]
    full = ((n - 1) * st + 1) // span_len
    acc = zero
    for blk in range(full):
        lo = blk * span_len
        ra = a[alo + lo : alo + lo + span_len]
        rb = b[blo + lo : blo + lo + span_len]
        for j in range(span_len):
            acc += np.conj(ra[j]) * rb[j] if keep[j] else zero
    for k in range(full * V.SPAN_W, n):
        acc += np.conj(a[alo + k * st]) * b[blo + k * st]
    return acc


@njit(**_OPTS)
def dot_span(o, a, ao, b, bo, st, n, zero, root):
    """o[0] = the dot product of two runs of step ``st`` (its square root with ``root``)."""
    total = _dot_span(a, ao, b, bo, st, n, zero)
    _put_dot(o, 0, total, root)


@njit(**_OPTS, parallel=True)
def dot_span_p(o, a, ao, b, bo, st, n, zero, root):
    """:func:`dot_span` in tasks of SEGMENT wanted elements, their partial sums added in order
    (the same bits for any number of threads)."""
    nseg = (n + SEGMENT - 1) // SEGMENT
    partial = np.empty(nseg, o.dtype)
    for t in prange(nseg):
        lo = t * SEGMENT
        partial[t] = _dot_span(a, ao + lo * st, b, bo + lo * st, st, min(SEGMENT, n - lo), zero)
    total = zero
    for t in range(nseg):
        total += partial[t]
    _put_dot(o, 0, total, root)


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
    _put_dot(o, 0, total, root)
