"""Index kernels: gathers (take, take_along_axis, integer-array indexing), sorting rows,
searchsorted and nonzero (argmax/argmin are generated: ``kernels.argreduce``).  Operands arrive
as 1-D buffers with element offsets and strides, like every CPU kernel; the outputs are fresh
C-contiguous buffers."""

from __future__ import annotations

import numpy as np
from numba import config, njit, prange

from . import _vmath as V

_OPTS = dict(cache=True, nogil=True, error_model="numpy")


@njit(**_OPTS)
def _first_bad_index(idx, io, i_s, n_idx, n_ax):
    """The first position of an index outside [-n_ax, n_ax), or -1."""
    for j in range(n_idx):
        k = idx[io + j * i_s]
        if k < -n_ax or k >= n_ax:
            return j
    return -1


#: columns per tile when the rows taken are strided (a transposed array): the tile's elements of
#: consecutive rows share cache lines, so one pass over the indices per tile reads each line once
#: (take of 1000 random rows of a transposed 1000x1000 float64: 3.4 -> 1.2 ms, NumPy 2.0)
TAKE_TILE = 32
#: below this many bytes between the first and last element of x the strided rows are copied
#: one after another instead (x stays in L2 either way, and the tiles' short inner loops cost
#: more than they save: 64 rows of a transposed 64x64 int32, 4.2 -> 1.8 us)
TAKE_UNTILED_SPAN = 1 << 18


@njit(**_OPTS)
def _take_block(o, x, xo, s_pre, s_ax, s_post, idx, io, i_s, p, j0, j1, n_idx, n_post, n_ax):
    """Rows j0..j1 of o[p] = x[p, idx[j], :] (indices already checked)."""
    if n_post == 1:  # single elements (columns of a matrix): one gather along the row
        row = o[p * n_idx : (p + 1) * n_idx]
        _take1_run(row, x, xo + p * s_pre, s_ax, idx, io, i_s, j0, j1, n_ax)
        return
    if s_post == 1:  # dense rows: a straight copy each (vectorised; unsigned positions, no
        # slices: rows of 50 int8 5.3 -> 4.8 us for 1400)
        for j in range(j0, j1):
            k = idx[io + j * i_s]
            k = k + n_ax if k < 0 else k
            src = xo + p * s_pre + k * s_ax
            dst = (p * n_idx + j) * n_post
            for q in range(n_post):
                o[np.uint64(dst + q)] = x[np.uint64(src + q)]
        return
    # (positions as unsigned: the indices are checked, and numba adds no negative-index test)
    if (n_ax * abs(s_ax) + n_post * abs(s_post)) * x.itemsize < TAKE_UNTILED_SPAN:
        for j in range(j0, j1):
            k = idx[io + j * i_s]
            k = k + n_ax if k < 0 else k
            src = xo + p * s_pre + k * s_ax
            orow = o[(p * n_idx + j) * n_post :]
            for q in range(n_post):
                orow[q] = x[np.uint64(src + q * s_post)]
        return
    for q0 in range(0, n_post, TAKE_TILE):
        q1 = min(q0 + TAKE_TILE, n_post)
        for j in range(j0, j1):
            k = idx[io + j * i_s]
            k = k + n_ax if k < 0 else k
            src = xo + p * s_pre + k * s_ax
            dst = (p * n_idx + j) * n_post
            for q in range(q0, q1):
                o[np.uint64(dst + q)] = x[np.uint64(src + q * s_post)]


@njit(**_OPTS)
def _take1_run(o, x, xo, s_ax, idx, io, i_s, j0, j1, n_ax):
    """o[j] = x[xo + idx[io + j i_s] s_ax] for j in j0..j1 (negative indices from the end);
    returns the first out-of-range position or -1."""
    if i_s == 1:
        # unit-stride indices: a vectorised test for bad ones, then a gather loop with no early
        # exit and no branch, which LLVM vectorises (4096 float32: 5.3 -> 3.6 us; 1M float64 on
        # one thread 11 -> 4.6 ms, NumPy 6.4)
        if j1 <= j0:
            return -1
        iseg = idx[io + j0 : io + j1]
        # the indices' least and greatest (vectorised minimum and maximum: faster than
        # or-ing two compares per index, and they tell whether any index is negative)
        lo = iseg[0]
        hi = lo
        for j in range(j1 - j0):
            k = iseg[j]
            lo = min(lo, k)
            hi = max(hi, k)
        if lo < -n_ax or hi >= n_ax:
            return j0 + _first_bad_index(iseg, 0, 1, j1 - j0, n_ax)
        # the checked positions index as unsigned: no wraparound test of their own per element,
        # and none from the end at all when no index is negative (4096 float32 from int64
        # indices: 2.9 -> 2.0 us, 2.6 -> 2.0 with non-negative ones)
        oseg = o[j0:j1]
        if s_ax == 1:
            xseg = x[xo : xo + n_ax]
            if lo >= 0:
                for j in range(j1 - j0):
                    oseg[j] = xseg[np.uint64(iseg[j])]
            else:
                for j in range(j1 - j0):
                    k = iseg[j]
                    oseg[j] = xseg[np.uint64(k + n_ax if k < 0 else k)]
        else:
            for j in range(j1 - j0):
                k = iseg[j]
                oseg[j] = x[np.uint64(xo + (k + n_ax if k < 0 else k) * s_ax)]
        return -1
    # strided indices: check and copy in one pass (an inner loop of length one and a separate
    # checking pass cost 4x here)
    for j in range(j0, j1):
        k = idx[io + j * i_s]
        if k < 0:
            k += n_ax
        if k < 0 or k >= n_ax:
            return j
        o[j] = x[xo + k * s_ax]
    return -1


@njit(**_OPTS)
def _take_columns(o, x, xo, s_pre, s_ax, idx, io, i_s, p0, p1, n_idx, n_ax):
    """o[p, j] = x[p, idx[j]] for the rows p0..p1 (indices already checked): each index's
    offset worked out once, then each row a gather by them (columns of a matrix, and the
    elements of rows too short for a copy per index: 100000 x 10 float64 by 10 indices
    3.3 -> ~0.2 ms, NumPy 0.6)."""
    off = np.empty(n_idx, np.int64)
    for j in range(n_idx):
        k = idx[io + j * i_s]
        off[j] = (k + n_ax if k < 0 else k) * s_ax
    for p in range(p0, p1):
        base = xo + p * s_pre
        dst = p * n_idx
        for j in range(n_idx):
            o[np.uint64(dst + j)] = x[np.uint64(base + off[j])]


@njit(**_OPTS)
def take3(o, x, xo, s_pre, s_ax, s_post, idx, io, i_s, n_pre, n_idx, n_post, n_ax):
    """o[p, j, q] = x[p, idx[j], q] with negative indices counted from the end.

    Returns the first out-of-range index position, or -1 when every index was valid.
    """
    if n_pre == 1 and n_post == 1:
        return _take1_run(o, x, xo, s_ax, idx, io, i_s, 0, n_idx, n_ax)
    bad = _first_bad_index(idx, io, i_s, n_idx, n_ax)
    if bad >= 0:
        return bad
    if n_post == 1:
        _take_columns(o, x, xo, s_pre, s_ax, idx, io, i_s, 0, n_pre, n_idx, n_ax)
        return -1
    for p in range(n_pre):
        _take_block(o, x, xo, s_pre, s_ax, s_post, idx, io, i_s, p, 0, n_idx, n_idx, n_post, n_ax)
    return -1


@njit(parallel=True, **_OPTS)
def take3_p(o, x, xo, s_pre, s_ax, s_post, idx, io, i_s, n_pre, n_idx, n_post, n_ax, parts):
    """:func:`take3` of rows or of columns (``n_post > 1`` or ``n_pre > 1``) over threads:
    ``parts`` chunks of the indices for each of the ``n_pre`` leading positions."""
    bad = _first_bad_index(idx, io, i_s, n_idx, n_ax)
    if bad >= 0:
        return bad
    if n_post == 1 and n_pre >= parts:  # columns: chunks of rows
        rows = (n_pre + parts - 1) // parts
        for t in prange(parts):
            p0 = min(t * rows, n_pre)
            p1 = min(p0 + rows, n_pre)
            _take_columns(o, x, xo, s_pre, s_ax, idx, io, i_s, p0, p1, n_idx, n_ax)
        return -1
    chunk = (n_idx + parts - 1) // parts
    for t in prange(n_pre * parts):
        p = t // parts
        j0 = min((t - p * parts) * chunk, n_idx)
        j1 = min(j0 + chunk, n_idx)
        _take_block(o, x, xo, s_pre, s_ax, s_post, idx, io, i_s, p, j0, j1, n_idx, n_post, n_ax)
    return -1


@njit(parallel=True, **_OPTS)
def take1_p(o, x, xo, s_ax, idx, io, i_s, n_idx, n_ax, parts):
    """:func:`take3` of single elements (``n_pre == n_post == 1``) in ``parts`` chunks over
    threads; returns the first out-of-range index position (the smallest over the chunks) or -1."""
    chunk = (n_idx + parts - 1) // parts
    first_bad = np.full(parts, -1, np.int64)
    for p in prange(parts):
        j0 = min(p * chunk, n_idx)
        j1 = min(j0 + chunk, n_idx)
        first_bad[p] = _take1_run(o, x, xo, s_ax, idx, io, i_s, j0, j1, n_ax)
    for p in range(parts):
        if first_bad[p] >= 0:
            return first_bad[p]
    return -1


@njit(**_OPTS)
def first_flat_index_of(x, xo, n, v, strides, c_strides):
    """The smallest C-order flat index among the elements of a dense block x[xo : xo + n] that
    equal v (are NaN, for a NaN v), where an element's memory position decomposes into
    coordinates by ``strides`` (decreasing) and those weigh ``c_strides``.  Blocks of 256 are
    tested by a vectorised count first; only blocks holding v are walked."""
    best = -1
    is_nan = v != v
    for c0 in range(0, n, 256):
        ch = x[xo + c0 : xo + min(c0 + 256, n)]
        if (V.count_nan(ch) if is_nan else V.count_equal(ch, v)) == 0:
            continue
        for r in range(ch.shape[0]):
            w = ch[r]
            if (w != w) if is_nan else (w == v):
                rest = c0 + r
                flat = 0
                for d in range(strides.shape[0]):
                    i = rest // strides[d]
                    rest -= i * strides[d]
                    flat += i * c_strides[d]
                if best < 0 or flat < best:
                    best = flat
    return best


@njit(**_OPTS)
def _argreduce_columns(o, x, xo, sr, j0, j1, nr, find_max):
    """o[j] = the first r of the max (min) of x[xo + r * sr + j] over r, for j in j0..j1: rows
    read whole (unit stride along j), the best value and its row kept per column with selects
    (vectorised); a NaN wins at its first row, as in NumPy."""
    n = j1 - j0
    best = x[xo + j0 : xo + j1].copy()
    at = np.zeros(n, np.int64)
    for r in range(1, nr):
        row = x[xo + r * sr + j0 : xo + r * sr + j1]
        for j in range(n):
            v = row[j]
            b = best[j]
            better = (v > b) if find_max else (v < b)
            take = better | ((v != v) & (b == b))
            best[j] = v if take else b
            at[j] = r if take else at[j]
    for j in range(n):
        o[j0 + j] = at[j]


@njit(**_OPTS)
def argreduce_columns(o, x, xo, sr, nk, nr, find_max):
    """argmax/argmin along a strided axis of an array whose one kept axis has unit stride (a
    transposed matrix reduced along its rows): every row of memory read once, in column blocks
    that stay in cache."""
    for j0 in range(0, nk, 1024):
        _argreduce_columns(o, x, xo, sr, j0, min(j0 + 1024, nk), nr, find_max)


@njit(parallel=True, **_OPTS)
def argreduce_columns_p(o, x, xo, sr, nk, nr, find_max):
    """:func:`argreduce_columns` with its column blocks over threads."""
    nb = (nk + 1023) // 1024
    for b in prange(nb):
        _argreduce_columns(o, x, xo, sr, b * 1024, min(b * 1024 + 1024, nk), nr, find_max)


#: argreduce_narrow_cols serves matrices narrower than this many columns
ARG_NARROW = 32


@njit(**_OPTS)
def _arg_narrow_chunks(best, at, x, xo, width, c0, c1, find_max):
    """best[i], at[i]: the best of x[xo + c width + i] over the chunks c in c0..c1 (and what
    best held before) and its chunk, a NaN winning at its first chunk; selects, vectorised
    along the chunk."""
    for c in range(c0, c1):
        p = xo + c * width
        for i in range(width):
            v = x[np.uint64(p + i)]
            b = best[i]
            better = (v > b) if find_max else (v < b)
            take = better | ((v != v) & (b == b))
            best[i] = v if take else b
            at[i] = c if take else at[i]


@njit(**_OPTS)
def _arg_narrow_finish(o, best, at, x, xo, nk, nr, reps, tail, find_max):
    """o[j]: column j's first best row, from the ``reps`` chunk positions of column j in
    best/at (row at * reps + q) and the rows from ``tail`` on (after the last whole chunk)."""
    for j in range(nk):
        bv = best[j]
        br = at[j] * reps
        for q in range(1, reps):
            v = best[q * nk + j]
            r = at[q * nk + j] * reps + q
            if bv != bv:  # a NaN already: only an earlier NaN replaces it
                if v != v and r < br:
                    br = r
            elif v != v or ((v > bv) if find_max else (v < bv)) or (v == bv and r < br):
                bv, br = v, r
        for r in range(tail, nr):
            v = x[xo + r * nk + j]
            if bv == bv and (v != v or ((v > bv) if find_max else (v < bv))):
                bv, br = v, r
        o[j] = br


@njit(**_OPTS)
def argreduce_narrow_cols(o, x, xo, nk, nr, find_max):
    """argmax/argmin along axis 0 of a C-order (nr, nk) matrix of few columns (nk <
    ARG_NARROW): the rows read as one long run in chunks of ``reps`` rows (about 64 elements),
    each chunk element's best kept with selects, then each column's first best row from its
    positions (100000 x 3 float32: 474 -> ~60 us, NumPy 105; a row at a time was a short
    loop per row)."""
    reps = max(1, 64 // nk)
    width = nk * reps
    chunks = nr // reps
    best = np.empty(width, x.dtype)
    at = np.zeros(width, np.int64)
    if chunks:
        best[:] = x[xo : xo + width]
        _arg_narrow_chunks(best, at, x, xo, width, 1, chunks, find_max)
        _arg_narrow_finish(o, best, at, x, xo, nk, nr, reps, chunks * reps, find_max)
    else:  # fewer rows than a chunk: row 0, then the others one by one
        best[:nk] = x[xo : xo + nk]
        _arg_narrow_finish(o, best, at, x, xo, nk, nr, 1, 1, find_max)


@njit(parallel=True, **_OPTS)
def argreduce_narrow_cols_p(o, x, xo, nk, nr, find_max):
    """argreduce_narrow_cols with the chunks cut into tasks of about 2**14 elements, each
    task's bests combined in task order (earlier tasks win ties: the bits of one thread)."""
    reps = max(1, 64 // nk)
    width = nk * reps
    chunks = nr // reps
    if chunks < 2:  # (not a size the caller sends here)
        argreduce_narrow_cols(o, x, xo, nk, nr, find_max)
        return
    per_task = max(1, (1 << 14) // width)
    tasks = (chunks + per_task - 1) // per_task
    bests = np.empty((tasks, width), x.dtype)
    ats = np.zeros((tasks, width), np.int64)
    for t in prange(tasks):
        c0 = t * per_task
        bests[t] = x[xo + c0 * width : xo + (c0 + 1) * width]
        for i in range(width):
            ats[t, i] = c0
        _arg_narrow_chunks(bests[t], ats[t], x, xo, width, c0 + 1,
                           min(c0 + per_task, chunks), find_max)  # fmt: skip
    best, at = bests[0].copy(), ats[0].copy()
    for t in range(1, tasks):
        for i in range(width):
            v, b = bests[t, i], best[i]
            if ((v > b) if find_max else (v < b)) or ((v != v) and (b == b)):
                best[i], at[i] = v, ats[t, i]
    _arg_narrow_finish(o, best, at, x, xo, nk, nr, reps, chunks * reps, find_max)


@njit(**_OPTS)
def take_rows(o, x, xo, xr, xa, idx, io, ir, ia, n_rows, n_idx, n_ax):
    """o[r, j] = x[r, idx[r, j]] (take_along_axis with the axis last); returns -1 or a bad row."""
    for r in range(n_rows):
        for j in range(n_idx):
            k = idx[io + r * ir + j * ia]
            if k < 0:
                k += n_ax
            if k < 0 or k >= n_ax:
                return r
            o[r * n_idx + j] = x[xo + r * xr + k * xa]
    return -1


@njit(**_OPTS)
def gather_blocks(o, x, bases, t0, t1, s0, s1):
    """o[i, a, b] = x[bases[i] + a * s0 + b * s1]: integer-array indexing with trailing dims."""
    block = t0 * t1
    if block == 1:  # single elements (a boolean mask over every axis, x[i] of a 1-D x)
        for i in range(bases.shape[0]):
            o[i] = x[bases[i]]
        return
    for i in range(bases.shape[0]):
        for a in range(t0):
            for b in range(t1):
                o[i * block + a * t1 + b] = x[bases[i] + a * s0 + b * s1]


@njit(**_OPTS)
def sort_rows(o, x, xo, xr, xa, n_rows, n, descending):
    """Sort each row of x (rows along the last axis) into the contiguous output."""
    row = np.empty(n, dtype=x.dtype)
    for r in range(n_rows):
        for k in range(n):
            row[k] = x[xo + r * xr + k * xa]
        s = np.sort(row)
        if descending:
            # NaNs sort last ascending; descending puts them first, like reversing NumPy's sort
            for k in range(n):
                o[r * n + k] = s[n - 1 - k]
        else:
            for k in range(n):
                o[r * n + k] = s[k]


@njit(**_OPTS)
def argsort_rows(o, x, xo, xr, xa, n_rows, n, descending):
    """Stable argsort of each row; descending keeps equal elements in their original order."""
    row = np.empty(n, dtype=x.dtype)
    for r in range(n_rows):
        if descending:
            # stable descending = reverse of the stable ascending sort of the reversed row
            for k in range(n):
                row[k] = x[xo + r * xr + (n - 1 - k) * xa]
            order = np.argsort(row, kind="mergesort")
            for k in range(n):
                o[r * n + k] = n - 1 - order[n - 1 - k]
        else:
            for k in range(n):
                row[k] = x[xo + r * xr + k * xa]
            order = np.argsort(row, kind="mergesort")
            for k in range(n):
                o[r * n + k] = order[k]


#: what the radix kernels' ``kind`` says the bits are
RADIX_UNSIGNED, RADIX_SIGNED, RADIX_FLOAT = 0, 1, 2


@njit(**_OPTS)
def _radix_constants(x):
    """[top bit, +inf's bits, all ones, 255, then the shift of each byte] in ``x``'s unsigned
    dtype, so that the key arithmetic never mixes signed and unsigned integers (numba would
    widen those to float)."""
    width = x.itemsize
    c = np.zeros(4 + width, x.dtype)
    c[0] = 1
    c[1] = 8 * width - 1
    c[2] = 0
    c[3] = 23 if width == 4 else 52  # the fraction bits of float32 / float64
    top = c[0] << c[1]
    ones = ~c[2]
    c[1] = ((ones >> c[0]) >> c[3]) << c[3]  # +inf: exponent all ones, fraction zero
    c[0] = top
    c[2] = ones
    c[3] = 255
    for p in range(width):
        c[4 + p] = 8 * p
    return c


@njit(**_OPTS)
def _float_key(u, top, inf, ones, descending):
    """The order-preserving unsigned key of the float bits ``u`` (selects, no branches: the
    signs of random data would defeat a predictor): NaN of either sign the largest key, -0.0
    keyed as +0.0; complemented for ``descending``."""
    mag = u & ~top
    k = u ^ (ones if (u & top) != 0 else top)
    k = ones if mag > inf else k
    k = top if mag == 0 else k
    return ~k if descending else k


@njit(**_OPTS)
def _radix_keys(keys, x, base, xa, kind, c, descending):
    """keys[i]: the order-preserving unsigned key of the element bits x[base + i xa] (selects,
    no branches: the signs of random data would defeat a predictor).  NaN of either sign is the
    largest key and -0.0 has +0.0's, so equal values are equal keys and the stable passes keep
    them in input order; ``descending`` complements the keys.  (No counting here: the loop of
    selects alone vectorises, 4096 float64 9.8 -> ~2 us; the sorted keys give the counts.)"""
    top, inf, ones = c[0], c[1], c[2]
    n = keys.size
    if kind == RADIX_FLOAT:
        for i in range(n):
            keys[i] = _float_key(x[base + i * xa], top, inf, ones, descending)
    elif kind == RADIX_SIGNED:
        for i in range(n):
            k = x[base + i * xa] ^ top
            keys[i] = ~k if descending else k
    else:
        for i in range(n):
            k = x[base + i * xa]
            keys[i] = ~k if descending else k


@njit(**_OPTS)
def _count_bytes(hist, p, k, m, s1, s2, s3, one):
    """hist[p + j] counts byte j of the low 32 bits of k (j < 4)."""
    hist[p, k & m] += one
    hist[p + 1, (k >> s1) & m] += one
    hist[p + 2, (k >> s2) & m] += one
    hist[p + 3, (k >> s3) & m] += one


@njit(**_OPTS)
def _radix_histograms(keys, hist, c):
    """hist[p, b]: how many keys have b as their byte p (one pass for all bytes, unrolled)."""
    hist[:] = 0
    m = c[3]
    one = np.uint64(1)  # (uint64 + an int literal would be float64 in numba)
    s1, s2, s3 = c[5], c[6], c[7]
    if keys.itemsize == 4:
        for i in range(keys.size):
            _count_bytes(hist, 0, keys[i], m, s1, s2, s3, one)
    else:
        s4 = c[8]
        for i in range(keys.size):
            k = keys[i]
            _count_bytes(hist, 0, k, m, s1, s2, s3, one)
            _count_bytes(hist, 4, k >> s4, m, s1, s2, s3, one)


@njit(**_OPTS)
def _radix_passes(keys, tmp, idx, idx_tmp, hist, c, with_idx):
    """Stable LSD passes over ``keys`` (moving ``idx`` along when ``with_idx``), a byte each from
    the lowest, bucket starts from the histograms ``hist``; a byte all keys share is skipped.
    Returns the pair of arrays holding the sorted keys and indices."""
    n = keys.size
    m255 = c[3]
    one = np.uint64(1)  # (uint64 + an int literal would be float64 in numba)
    src, dst, isrc, idst = keys, tmp, idx, idx_tmp
    for p in range(hist.shape[0]):
        h = hist[p]
        shift = c[4 + p]
        if h[(src[0] >> shift) & m255] == n:  # (n >= 1: a row of the caller's)
            continue  # one bucket: this pass would move nothing
        _exclusive_starts(h)  # (unsigned, as the histograms: no wraparound test per index)
        if with_idx:
            for i in range(n):
                k = src[i]
                d = (k >> shift) & m255
                j = h[d]
                dst[j] = k
                idst[j] = isrc[i]
                h[d] = j + one
        else:
            for i in range(n):
                k = src[i]
                d = (k >> shift) & m255
                j = h[d]
                dst[j] = k
                h[d] = j + one
        src, dst = dst, src
        isrc, idst = idst, isrc
    return src, isrc


@njit(**_OPTS)
def radix_sort_rows(o, x, xo, xr, xa, n_rows, n, kind, descending):
    """Sort each row of ``x`` (unsigned views of 4- or 8-byte elements whose bits ``kind``
    describes) into the contiguous ``o``: NaNs last and, with the zeros, in input order (the
    bits a stable sort gives); descending is the ascending row reversed, as NumPy's sort
    reversed."""
    c = _radix_constants(x)
    top, ones = c[0], c[2]
    keys, tmp = np.empty(n, x.dtype), np.empty(n, x.dtype)
    no_idx = np.empty(0, np.int64)
    hist = np.empty((x.itemsize, 256), np.uint64)
    for r in range(n_rows):
        base = xo + r * xr
        _radix_keys(keys, x, base, xa, kind, c, False)
        _radix_histograms(keys, hist, c)
        src, _ = _radix_passes(keys, tmp, no_idx, no_idx, hist, c, False)
        below_zero = zeros = nans = 0
        if kind == RADIX_FLOAT:
            # negative values, zeros (+0.0's key, ``top``) and NaNs (all ones): found in the
            # sorted keys
            below_zero = np.searchsorted(src, top)
            zeros = np.searchsorted(src, top, side="right") - below_zero
            nans = n - np.searchsorted(src, ones)
        row = o[r * n : (r + 1) * n]
        if kind == RADIX_FLOAT:
            for i in range(n):
                k = src[i]
                row[i] = k ^ (top if k & top else ones)
        elif kind == RADIX_SIGNED:
            for i in range(n):
                row[i] = src[i] ^ top
        else:
            row[:] = src
        if zeros or nans:  # the input's own zeros and NaNs, in its order
            inf = c[1]
            z, q = below_zero, n - nans
            for i in range(n):
                u = x[base + i * xa]
                mag = u & ~top
                if mag == 0:
                    row[z] = u
                    z += 1
                elif mag > inf:
                    row[q] = u
                    q += 1
        if descending:
            row[:] = row[::-1].copy()


@njit(**_OPTS)
def radix_argsort_rows(o, x, xo, xr, xa, n_rows, n, kind, descending):
    """Stable argsort of each row of ``x`` (as :func:`radix_sort_rows`) into the contiguous int64
    ``o``: equal elements (-0.0 and +0.0 equal, every NaN equal and last) keep their order;
    descending sorts the complemented keys, so NaNs come first and ties stay in order."""
    c = _radix_constants(x)
    keys, tmp = np.empty(n, x.dtype), np.empty(n, x.dtype)
    idx, idx_tmp = np.empty(n, np.int64), np.empty(n, np.int64)
    hist = np.empty((x.itemsize, 256), np.uint64)
    for r in range(n_rows):
        _radix_keys(keys, x, xo + r * xr, xa, kind, c, descending)
        _radix_histograms(keys, hist, c)
        for i in range(n):
            idx[i] = i
        _, order = _radix_passes(keys, tmp, idx, idx_tmp, hist, c, True)
        o[r * n : (r + 1) * n] = order


@njit(**_OPTS)
def _complex_row_order(keys, tmp, idx, idx_tmp, hist, c, x, base, xa, descending):
    """The stable order of one complex row (``x``: unsigned bits of its float components, the
    element at base + i xa its real part, the next its imaginary part) by real then imaginary
    part, as the radix keys order each (NaN last, -0.0 equal to +0.0; complemented for
    descending): LSD passes over the imaginary keys, then over the real keys gathered in that
    order.  Returns the array holding the order."""
    n = keys.size
    top, inf, ones = c[0], c[1], c[2]
    _radix_keys(keys, x, base + 1, xa, RADIX_FLOAT, c, descending)
    _radix_histograms(keys, hist, c)
    for i in range(n):
        idx[i] = i
    _, order = _radix_passes(keys, tmp, idx, idx_tmp, hist, c, True)
    for i in range(n):  # the real parts' keys in that order (``idx`` := the order, if not it)
        j = order[i]
        keys[i] = _float_key(x[base + j * xa], top, inf, ones, descending)
        idx[i] = j
    _radix_histograms(keys, hist, c)
    _, order = _radix_passes(keys, tmp, idx, idx_tmp, hist, c, True)
    return order


@njit(**_OPTS)
def radix_complex_sort_rows(o, values, x, xo, xr, xa, n_rows, n, descending):
    """Stable argsort of each complex row of ``x`` into the contiguous int64 ``o``, by real then
    imaginary part (:func:`_complex_row_order`), and, unless ``values`` is empty, the elements
    in that order into it (a sort: ``o`` then only needs one row).  ``x`` and ``values`` hold
    the unsigned bits of the float components (copied bit for bit), offsets and strides counted
    in components.  1M complex128 in one row: ~60 ms, where NumPy's stable argsort takes ~140
    (its unstable sort ~87)."""
    c = _radix_constants(x)
    keys, tmp = np.empty(n, x.dtype), np.empty(n, x.dtype)
    idx, idx_tmp = np.empty(n, np.int64), np.empty(n, np.int64)
    hist = np.empty((x.itemsize, 256), np.uint64)
    sorting = values.size > 0
    for r in range(n_rows):
        base = xo + r * xr
        order = _complex_row_order(keys, tmp, idx, idx_tmp, hist, c, x, base, xa, descending)
        if sorting:
            p = 2 * r * n
            for i in range(n):
                at = base + order[i] * xa
                values[p + 2 * i] = x[at]
                values[p + 2 * i + 1] = x[at + 1]
        else:
            o[r * n : (r + 1) * n] = order


@njit(**_OPTS)
def _small_key(x, i, bias, top, descending):
    """The counting sorts' key of x[i]: the element plus ``bias`` (0 .. top), complemented
    (``top`` - key) for descending."""
    k = np.int32(x[i]) + bias
    return top - k if descending else k


@njit(**_OPTS)
def small_key_sort_rows(o, x, xo, xr, xa, n_rows, n, bias, descending):
    """Sort each row of ``x`` (1- or 2-byte integers; bool viewed as uint8) into the contiguous
    ``o`` by counting: a histogram of the keys (element + ``bias``), then each key's run of
    equal values written in key order.  One pass over the input: 1M int8 in ~1 ms, where a
    comparison sort takes ~13.  The histogram has one bin per possible key (256 or 65536), so
    rows shorter than that go to the comparison sorts (the caller decides)."""
    top = np.int32((1 << (8 * x.itemsize)) - 1)
    counts = np.empty(top + 1, np.int64)
    no_keys = np.empty(0, np.uint16)
    for r in range(n_rows):
        base = xo + r * xr
        counts[:] = 0
        if x.itemsize == 1:
            _small_key_counts(counts, no_keys, x, base, xa, n, bias, top, False)
        else:
            for i in range(n):
                counts[_small_key(x, base + i * xa, bias, top, False)] += 1
        p = r * n
        for b in range(top + 1):
            k = top - b if descending else b
            c = counts[k]
            if c:
                o[p : p + c] = k - bias
                p += c


@njit(**_OPTS)
def _small_key_counts(counts, keys, x, base, xa, n, bias, top, descending):
    """counts[k] += how many of the row's 1-byte keys (``_small_key``) are k, also stored in
    ``keys`` unless it is empty.  The counts go to four tables in turn, summed at the end (data
    with few distinct values would make every increment wait for the one before in a single
    table)."""
    quad = np.zeros((4, 256), np.int64)
    store = keys.size > 0
    head = n - n % 4
    for i in range(0, head, 4):
        k0 = _small_key(x, base + i * xa, bias, top, descending)
        k1 = _small_key(x, base + (i + 1) * xa, bias, top, descending)
        k2 = _small_key(x, base + (i + 2) * xa, bias, top, descending)
        k3 = _small_key(x, base + (i + 3) * xa, bias, top, descending)
        if store:
            keys[i], keys[i + 1], keys[i + 2], keys[i + 3] = k0, k1, k2, k3
        quad[0, k0] += 1
        quad[1, k1] += 1
        quad[2, k2] += 1
        quad[3, k3] += 1
    for i in range(head, n):
        k = _small_key(x, base + i * xa, bias, top, descending)
        if store:
            keys[i] = k
        quad[0, k] += 1
    for b in range(256):
        counts[b] += quad[0, b] + quad[1, b] + quad[2, b] + quad[3, b]


@njit(**_OPTS)
def _small_key_histograms(keys, hist, x, base, xa, n, bias, top, descending):
    """keys[i] := the row's ``_small_key``s; hist[p, b]: how many of them have b as their byte
    p."""
    hist[:] = 0
    if x.itemsize == 1:
        _small_key_counts(hist[0], keys, x, base, xa, n, bias, top, descending)
    else:
        for i in range(n):
            k = _small_key(x, base + i * xa, bias, top, descending)
            keys[i] = k
            hist[0, k & 255] += 1
            hist[1, k >> 8] += 1


@njit(**_OPTS)
def _exclusive_starts(h):
    """h[b] := how many keys fall in the buckets below b (the counts turned into each bucket's
    first output position)."""
    start = h[0] - h[0]
    for b in range(256):
        c = h[b]
        h[b] = start
        start += c


@njit(**_OPTS)
def small_key_argsort_rows(o, x, xo, xr, xa, n_rows, n, bias, descending):
    """Stable argsort of each row of ``x`` (1- or 2-byte integers; bool viewed as uint8) into
    the contiguous int64 ``o``: stable LSD counting passes over the key's bytes (one for 1-byte
    keys; two for 2-byte keys, the high one skipped when every key shares it), equal elements in
    input order also when descending (which sorts the complemented keys).  1M int8 ~3 ms, where
    packing keys and positions into uint64 and sorting those took ~55."""
    top = np.int32((1 << (8 * x.itemsize)) - 1)
    hist = np.empty((x.itemsize, 256), np.int64)
    keys = np.empty(n, np.uint16)
    first = np.empty(n, np.int64)
    for r in range(n_rows):
        base = xo + r * xr
        row = o[r * n : (r + 1) * n]
        _small_key_histograms(keys, hist, x, base, xa, n, bias, top, descending)
        low = hist[0]
        two = x.itemsize == 2 and hist[1, keys[0] >> 8] != n  # (n >= 1: a row of the caller's)
        target = first if two else row
        _exclusive_starts(low)
        for i in range(n):  # by the low byte (the only one for 1-byte keys)
            d = keys[i] & 255
            j = low[d]
            target[j] = i
            low[d] = j + 1
        if two:  # then stably by the high byte
            high = hist[1]
            _exclusive_starts(high)
            for i in range(n):
                e = first[i]
                d = keys[e] >> 8
                j = high[d]
                row[j] = e
                high[d] = j + 1


@njit(**_OPTS)
def _merge_split(a, b, k):
    """How many of the first ``k`` elements of the merge of the sorted ``a`` and ``b`` come from
    ``a`` (ties taken from ``a`` first, as ``merge_sorted_run`` does): a binary search along the
    merge path, so each thread can start its part of the output without the others."""
    lo, hi = max(0, k - b.size), min(k, a.size)
    while lo < hi:
        i = (lo + hi) // 2
        if b[k - i - 1] < a[i]:
            hi = i
        else:
            lo = i + 1
    return lo


@njit(**_OPTS)
def _merge_tail(a, b, out, k, k1, i, j):
    """out[k:k1] of the merge, from a[i] and b[j] on (the few elements the paired loop leaves)."""
    while k < k1 and i < a.size and j < b.size:
        if b[j] < a[i]:
            out[k] = b[j]
            j += 1
        else:
            out[k] = a[i]
            i += 1
        k += 1
    while k < k1 and i < a.size:
        out[k] = a[i]
        i += 1
        k += 1
    while k < k1 and j < b.size:
        out[k] = b[j]
        j += 1
        k += 1


@njit(**_OPTS)
def merge_sorted_run(a, b, out, p, r):
    """out[p:r] of the merge of the sorted, NaN-free ``a`` and ``b`` (ties from ``a`` first).

    Branch-free: which input an element comes from is a coin toss on random data, so each step
    selects and moves one cursor.  Each step's loads wait for the previous compare, so the range
    is merged as two independent halves in one loop (two dependency chains: ~2 ns per element
    instead of ~4.5 here).  The bits do not depend on how the output is cut into runs."""
    q = (p + r) // 2
    i1 = _merge_split(a, b, p)
    j1, k1 = p - i1, p
    i2 = _merge_split(a, b, q)
    j2, k2 = q - i2, q
    na, nb = a.size, b.size
    while True:
        steps = min(na - i1, nb - j1, q - k1, na - i2, nb - j2, r - k2)
        if steps <= 0:
            break
        for _ in range(steps):  # no cursor can run out within these steps
            x1, y1, x2, y2 = a[i1], b[j1], a[i2], b[j2]
            from_b1, from_b2 = y1 < x1, y2 < x2
            out[k1] = y1 if from_b1 else x1
            out[k2] = y2 if from_b2 else x2
            j1 += from_b1
            i1 += not from_b1
            j2 += from_b2
            i2 += not from_b2
            k1 += 1
            k2 += 1
    _merge_tail(a, b, out, k1, q, i1, j1)
    _merge_tail(a, b, out, k2, r, i2, j2)


@njit(**_OPTS)
def _searchsorted_block(o, a, v, i0, i1, right):
    """o[i] = insertion point of v[i] in the sorted 1-D a for i in [i0, i1) (NaN sorts last, as
    in NumPy).  A short a (up to _COUNTED_SORTED values: bin edges, unique values) is
    counted: for each of its values, one vectorised pass adds (a[j] before v[i]) to every query
    of the block, instead of a binary search per query (1M queries into 20 values 17 -> ~2 ms
    on one thread).  A longer one is searched by groups of queries in lockstep
    (:func:`_search_group`)."""
    n = a.shape[0]
    # a NaN query goes after every number (left) or after everything (right): the first NaN
    # of a (NaNs sort last) by a binary search
    lo, hi = 0, n
    while lo < hi:
        mid = (lo + hi) >> 1
        if a[mid] == a[mid]:
            lo = mid + 1
        else:
            hi = mid
    nan_at = n if right else lo
    if n <= _COUNTED_SORTED:
        # counted in int32 (16 lanes a vector; the plain comparison already puts a NaN of a
        # after a number): 4096 queries into 50 float32 values 20.5 -> 11.7 us, into 8 3.7 ->
        # 2.3
        m = i1 - i0
        vs = v[i0:i1]
        counts = np.zeros(m, np.int32)
        for j in range(n):
            aj = a[j]
            if right:
                for i in range(m):
                    counts[i] += np.int32(aj <= vs[i])
            else:
                for i in range(m):
                    counts[i] += np.int32(aj < vs[i])
        seg = o[i0:i1]
        for i in range(m):
            x = vs[i]
            seg[i] = counts[i] if x == x else nan_at
        return
    base = np.empty(_SEARCH_GROUP, np.int64)
    for g0 in range(i0, i1, _SEARCH_GROUP):
        g1 = min(g0 + _SEARCH_GROUP, i1)
        _search_group(o[g0:g1], a, v[g0:g1], right, nan_at, base)


@njit(**_OPTS)
def _search_group(o, a, vs, right, nan_at, base):
    """Insertion points of the queries ``vs`` into the sorted a (at least two values), searched
    in lockstep: every query halves the same range length each step (the branch-free lower
    bound: base += half where a[base + half] is before the query), so each step is one pass
    over the group whose loads do not wait on one another, where one search at a time waits on
    each load (4096 sorted float32, 1000 queries: 13.7 -> 8.9 us; 4096 queries into 128
    values, counted: 78 -> 38).  For a number the plain comparison already puts NaNs of a
    after it; a NaN query takes ``nan_at``."""
    m = vs.shape[0]
    for j in range(m):
        base[j] = 0
    length = a.shape[0]
    while length > 1:
        half = length >> 1
        for j in range(m):
            b = base[j]
            mv = a[b + half]
            base[j] = b + half if ((mv <= vs[j]) if right else (mv < vs[j])) else b
        length -= half
    for j in range(m):
        x = vs[j]
        b = base[j]
        mv = a[b]
        found = b + ((mv <= x) if right else (mv < x))
        o[j] = found if x == x else nan_at


@njit(**_OPTS)
def _isin_block(o, a, v, i0, i1, pos):
    """o[i] = 1 where v[i] equals a value of the sorted 1-D a, else 0, for i in [i0, i1): a
    short a is compared whole (one vectorised pass per value of a: 4x faster than its insertion
    points and a gather), a long one searched (:func:`_searchsorted_block`, into ``pos``), then
    one compare each.  NaN equals nothing."""
    n = a.shape[0]
    m = i1 - i0
    seg = o[i0:i1]
    vs = v[i0:i1]
    if n <= _SMALL_SORTED:
        for i in range(m):
            seg[i] = 0
        for j in range(n):
            aj = a[j]
            for i in range(m):
                seg[i] |= vs[i] == aj
        return
    _searchsorted_block(pos, a, vs, 0, m, False)
    for i in range(m):
        p = pos[i]
        seg[i] = p < n and a[min(p, n - 1)] == vs[i]


@njit(**_OPTS)
def isin_sorted(o, a, v):
    """o[i] = whether v[i] is among the values of the sorted 1-D a (o: bytes)."""
    q = v.shape[0]
    pos = np.empty(_QUERY_BLOCK, np.int64)
    for i0 in range(0, q, _QUERY_BLOCK):
        _isin_block(o, a, v, i0, min(i0 + _QUERY_BLOCK, q), pos)


@njit(parallel=True, **_OPTS)
def isin_sorted_p(o, a, v):
    """:func:`isin_sorted` with blocks of the queries over threads."""
    q = v.shape[0]
    for b in prange((q + _QUERY_BLOCK - 1) // _QUERY_BLOCK):
        i0 = b * _QUERY_BLOCK
        pos = np.empty(_QUERY_BLOCK, np.int64)
        _isin_block(o, a, v, i0, min(i0 + _QUERY_BLOCK, q), pos)


@njit(**_OPTS)
def isin_table(o, a, v, parts):
    """o[i] = whether v[i] is among the values of the sorted 1-D integer a, through a table of
    a's range (NumPy's "table" kind): one bool per value from a[0] to a[-1], then one lookup per
    query, over ``parts`` runs of the queries on threads (1 below the parallel size).  The
    caller checks that the range is small; differences are taken in int64 after the range test
    (modular for uint64: exact there)."""
    lo, hi = a[0], a[-1]
    table = np.zeros(np.int64(hi) - np.int64(lo) + 1, np.bool_)
    for j in range(a.shape[0]):
        table[np.int64(a[j]) - np.int64(lo)] = True
    q = v.shape[0]
    if parts == 1:
        _isin_table_run(o, table, lo, hi, v, 0, q)
    else:
        _isin_table_parts(o, table, lo, hi, v, q, parts)


@njit(**_OPTS)
def _isin_table_run(o, table, lo, hi, v, i0, i1):
    for i in range(i0, i1):
        x = v[i]
        o[i] = x >= lo and x <= hi and table[np.int64(x) - np.int64(lo)]


@njit(parallel=True, **_OPTS)
def _isin_table_parts(o, table, lo, hi, v, q, parts):
    chunk = (q + parts - 1) // parts
    for p in prange(parts):
        _isin_table_run(o, table, lo, hi, v, min(p * chunk, q), min(p * chunk + chunk, q))


#: isin compares sorted arrays up to this long whole rather than searching them
_SMALL_SORTED = 128
#: searchsorted counts sorted arrays up to this long rather than searching them (4096 queries,
#: counted against searched: 50 float32 values 11.7 against 20.5 us, 128 24.5 against 23.8,
#: 256 56 against 25; float64 50 values 17 against 20.5, 128 33 against 24)
_COUNTED_SORTED = 64
#: queries searched in lockstep (see _search_group)
_SEARCH_GROUP = 64
#: queries per block of the counting pass (its slice of o and v stays in L1)
_QUERY_BLOCK = 1024


@njit(**_OPTS)
def searchsorted(o, a, v, right):
    """o[i] = insertion point of v[i] in the sorted 1-D a (NaN sorts last, as in NumPy)."""
    q = v.shape[0]
    for i0 in range(0, q, _QUERY_BLOCK):
        _searchsorted_block(o, a, v, i0, min(i0 + _QUERY_BLOCK, q), right)


@njit(parallel=True, **_OPTS)
def searchsorted_p(o, a, v, right):
    """:func:`searchsorted` with blocks of the queries over threads."""
    q = v.shape[0]
    for b in prange((q + _QUERY_BLOCK - 1) // _QUERY_BLOCK):
        i0 = b * _QUERY_BLOCK
        _searchsorted_block(o, a, v, i0, min(i0 + _QUERY_BLOCK, q), right)


LAUNCHED_THREADS = config.NUMBA_NUM_THREADS  # the most threads a parallel loop can use


@njit(parallel=True, **_OPTS)
def searchsorted_parts(o, a, v, right, parts):
    """:func:`searchsorted` of up to a few ten thousand queries: the queries in ``parts`` equal
    runs over threads, each counted or searched by blocks as :func:`searchsorted` does (4096
    sorted float32, 1000 queries: 12.7 -> 8.1 us on two)."""
    q = v.shape[0]
    chunk = (q + parts - 1) // parts
    for p in prange(parts):
        end = min(p * chunk + chunk, q)
        for i0 in range(min(p * chunk, q), end, _QUERY_BLOCK):
            _searchsorted_block(o, a, v, i0, min(i0 + _QUERY_BLOCK, end), right)


@njit(**_OPTS)
def nonzero_coords(o, x, shape, count):
    """Coordinates (ndim, count) of the nonzero elements of the contiguous x, C order.

    Branch-free: each element's coordinates are written at the next free slot, which advances
    only past a nonzero element (a branch mispredicts half the time on random data: 1M float32
    with half zeros 3.6 -> 0.5 ms), up to the last nonzero element, so that no write lands past
    the output; the leading coordinates come from an odometer over the rows, not divisions."""
    if count == 0:
        return
    last = x.shape[0] - 1
    while x[last] == 0:
        last -= 1
    nd = shape.shape[0]
    c = 0
    if nd == 1:
        for flat in range(last + 1):
            o[c] = flat
            c += x[flat] != 0
        return
    inner = shape[nd - 1]
    idx = np.zeros(nd, np.int64)
    start = 0
    tail = (nd - 1) * count
    while start <= last:
        for j in range(min(inner, last + 1 - start)):
            for d in range(nd - 1):
                o[d * count + c] = idx[d]
            o[tail + c] = j
            c += x[start + j] != 0
        start += inner
        d = nd - 2
        while d >= 0:
            idx[d] += 1
            if idx[d] < shape[d]:
                break
            idx[d] = 0
            d -= 1


@njit(**_OPTS)
def count_true_words(words, tail):
    """The True elements of a bool array read as 8-byte ``words`` (each byte 0 or 1) and its
    last ``tail`` bytes: a multiply sums a word's bytes into its top byte (vectorised; 1M
    elements in about half of NumPy's time, on one thread)."""
    ones = np.uint64(0x0101010101010101)
    acc = np.uint64(0)
    for i in range(words.size):
        acc += (words[i] * ones) >> np.uint64(56)
    count = np.int64(acc)
    for i in range(tail.size):
        count += tail[i]
    return count


@njit(**_OPTS)
def _next_row(idx, shape, mstrides, xstrides, mpos, xpos):
    """Advance the odometer ``idx`` over all but the last dimension by one row: the mask's and
    x's positions of the next row's first element."""
    d = shape.shape[0] - 2
    while d >= 0:
        idx[d] += 1
        mpos += mstrides[d]
        xpos += xstrides[d]
        if idx[d] < shape[d]:
            break
        mpos -= mstrides[d] * shape[d]
        xpos -= xstrides[d] * shape[d]
        idx[d] = 0
        d -= 1
    return mpos, xpos


@njit(**_OPTS)
def mask_select(o, x, xo, xstrides, m, mo, mstrides, shape):
    """The elements of ``x`` (any strides) where the mask ``m`` of the same shape (any strides)
    is True, in C order, into ``o``; ``o`` holds one element more than there are True elements
    (every element is written, the branch-free way: the mask is unpredictable)."""
    nd = shape.shape[0]
    idx = np.zeros(nd, np.int64)
    n_inner = shape[nd - 1]
    rows = 1
    for d in range(nd - 1):
        rows *= shape[d]
    inner_m, inner_x = mstrides[nd - 1], xstrides[nd - 1]
    c = 0
    mpos, xpos = mo, xo
    for _ in range(rows):
        if inner_m == 1 and inner_x == 1:
            mrow = m[mpos : mpos + n_inner].view(np.uint8)
            xrow = x[xpos : xpos + n_inner]
            for k in range(n_inner):
                o[c] = xrow[k]
                c += mrow[k]
        else:
            for k in range(n_inner):
                o[c] = x[xpos + k * inner_x]
                c += 1 if m[mpos + k * inner_m] else 0
        mpos, xpos = _next_row(idx, shape, mstrides, xstrides, mpos, xpos)


@njit(**_OPTS)
def _any_of_64(words, b):
    """Whether block ``b`` of 64 bools (as eight uint64 words) holds a True one."""
    w = b * 8
    return (words[w] | words[w + 1] | words[w + 2] | words[w + 3] | words[w + 4]
            | words[w + 5] | words[w + 6] | words[w + 7]) != 0  # fmt: skip


@njit(**_OPTS)
def nonzero_flat(o, m, count):
    """The positions of the True elements of the 1-D bool ``m`` (``count`` of them) into
    ``o``: blocks of 64 with none skipped whole, the others compacted branch-free, as in
    :func:`mask_select_flat`; the elements after the last True one are not visited (a
    branch-free write there would land past ``o``)."""
    if count == 0:
        return
    mb = m.view(np.uint8)
    end = m.shape[0]
    while mb[end - 1] == 0:
        end -= 1
    nb = end // 64  # (the blocks wholly before the last True element)
    mw = mb[: nb * 64].view(np.uint64)
    c = 0
    for b in range(nb):
        if _any_of_64(mw, b):
            base = b * 64
            ms = mb[base : base + 64]
            oc = o[c:]
            k_c = 0
            for k in range(64):
                oc[k_c] = base + k
                k_c += ms[k]
            c += k_c
    for k in range(nb * 64, end):
        o[c] = k
        c += mb[k]


@njit(**_OPTS)
def mask_select_flat(o, x, m):
    """The elements of the 1-D ``x`` where the bool ``m`` (as long) is True, in order, into
    ``o`` (one element longer than there are True elements, as :func:`mask_select`'s): blocks of
    64 with no True element are skipped whole (one test of eight words), the others compacted
    branch-free (4096 float32 with 1% True: 1.7 -> 1.0 us, half True: the same ~2 us)."""
    mb = m.view(np.uint8)
    n = x.shape[0]
    nb = n // 64
    mw = mb[: nb * 64].view(np.uint64)
    c = 0
    for b in range(nb):
        if _any_of_64(mw, b):
            xs = x[b * 64 : b * 64 + 64]
            ms = mb[b * 64 : b * 64 + 64]
            oc = o[c:]
            k_c = 0
            for k in range(64):
                oc[k_c] = xs[k]
                k_c += ms[k]
            c += k_c
    for k in range(nb * 64, n):
        o[c] = x[k]
        c += mb[k]


@njit(**_OPTS)
def _triangle_run(o, x, xo, sb, sr, sc, n, m, k, lower, lo, hi):
    """Rows lo..hi (of all the matrices' rows, n per matrix) of tril/triu into o (C order):
    copies through slices from 0 and slice fills (64 x 64 float64 1.8 -> 1.0 us)."""
    for r in range(lo, hi):
        b, i = r // n, r % n
        cut = i + k + 1 if lower else i + k  # lower keeps columns < cut, upper those >= cut
        cut = min(max(cut, 0), m)
        px = xo + b * sb + i * sr
        row = o[r * m : (r + 1) * m]
        if lower:
            if sc == 1:
                src = x[px : px + cut]
                for j in range(cut):
                    row[j] = src[j]
            else:
                for j in range(cut):
                    row[j] = x[px + j * sc]
            row[cut:] = 0
        else:
            row[:cut] = 0
            dst = row[cut:]
            if sc == 1:
                src = x[px + cut : px + m]
                for j in range(m - cut):
                    dst[j] = src[j]
            else:
                for j in range(m - cut):
                    dst[j] = x[px + (cut + j) * sc]


@njit(**_OPTS)
def triangle_rows(o, x, xo, sb, sr, sc, n, m, k, lower, rows):
    """tril (``lower``: columns j <= i + k kept) or triu (j >= i + k) of the matrices of x
    (from xo: matrices sb apart, rows sr, columns sc) into o, C-ordered, zeros elsewhere."""
    _triangle_run(o, x, xo, sb, sr, sc, n, m, k, lower, 0, rows)


@njit(parallel=True, **_OPTS)
def triangle_rows_p(o, x, xo, sb, sr, sc, n, m, k, lower, rows):
    """triangle_rows with the rows shared among the threads."""
    seg = max(1, (1 << 14) // max(m, 1))
    nseg = (rows + seg - 1) // seg
    for t in prange(nseg):
        _triangle_run(o, x, xo, sb, sr, sc, n, m, k, lower, t * seg, min((t + 1) * seg, rows))


@njit(**_OPTS)
def unique_runs(values, counts, first, inverse, ordered, order, n):
    """The runs of equal values of the sorted ``ordered`` (n elements; NaN != NaN starts a run
    at every NaN): each run's value and length, and where ``order`` (the stable argsort that
    sorted them) is not empty each run's first index (order's first of the run: the smallest)
    and ``inverse[order[i]]`` = the run of element i."""
    with_order = order.shape[0] > 0
    g = -1
    start = 0
    for i in range(n):
        v = ordered[i]
        if i == 0 or v != ordered[i - 1]:
            if g >= 0:
                counts[g] = i - start
            g += 1
            values[g] = v
            if with_order:
                first[g] = order[i]
            start = i
        if with_order:
            inverse[order[i]] = g
    if g >= 0:
        counts[g] = n - start


@njit(**_OPTS)
def copy_blocks(o, x, xo, table):
    """Rank-3 blocks of x copied into o in one call, a row of ``table`` each: (o's offset, its
    three strides, the block's offset from xo, its three strides, the three counts).  Inner
    runs dense on both sides copy as slices from 0 (vectorised).  (roll's blocks: the four
    quarters of ifftshift of 64 x 64 in one call instead of four.)"""
    for b in range(table.shape[0]):
        oo, o0, o1, o2 = table[b, 0], table[b, 1], table[b, 2], table[b, 3]
        xd, s0, s1, s2 = xo + table[b, 4], table[b, 5], table[b, 6], table[b, 7]
        n0, n1, n2 = table[b, 8], table[b, 9], table[b, 10]
        for i in range(n0):
            for j in range(n1):
                po = oo + i * o0 + j * o1
                px = xd + i * s0 + j * s1
                if o2 == 1 and s2 == 1:
                    dst = o[po : po + n2]
                    src = x[px : px + n2]
                    for k in range(n2):
                        dst[k] = src[k]
                else:
                    for k in range(n2):
                        o[po + k * o2] = x[px + k * s2]


@njit(**_OPTS)
def join_two(o, a, ao, na, b, bo, nb):
    """o[:na] = a[ao : ao + na], o[na : na + nb] = b[bo : bo + nb]: a concat of two dense parts
    of o's dtype in one call (loops over slices from 0: vectorised, no per-element index
    arithmetic; 4096 + 4096 float32 0.7 us against two copy calls' 1.4)."""
    oa = o[:na]
    sa = a[ao : ao + na]
    for i in range(na):
        oa[i] = sa[i]
    ob = o[na : na + nb]
    sb = b[bo : bo + nb]
    for i in range(nb):
        ob[i] = sb[i]


@njit(**_OPTS)
def _repeat_block(o, oo, os2, a, ao, as2, r, k0, k1):
    """o[oo + k*os2 + q] = a[ao + k*as2] for q < r, k0 <= k < k1: each element of a run
    written r times side by side (the copy of a broadcast such as repeat(x, 4)'s), the common
    counts unrolled (a loop of an unknown 2-4 iterations per element runs at half the speed)."""
    if r == 2:
        for k in range(k0, k1):
            v, b = a[ao + k * as2], oo + k * os2
            o[b] = v
            o[b + 1] = v
    elif r == 3:
        for k in range(k0, k1):
            v, b = a[ao + k * as2], oo + k * os2
            o[b] = v
            o[b + 1] = v
            o[b + 2] = v
    elif r == 4:
        for k in range(k0, k1):
            v, b = a[ao + k * as2], oo + k * os2
            o[b] = v
            o[b + 1] = v
            o[b + 2] = v
            o[b + 3] = v
    else:
        for k in range(k0, k1):
            v, b = a[ao + k * as2], oo + k * os2
            for q in range(r):
                o[b + q] = v


@njit(**_OPTS)
def repeat_runs(o, oo, os0, os2, a, ao, as0, as2, n0, r, n2):
    """o[oo + i*os0 + q + k*os2] = a[ao + i*as0 + k*as2] over i < n0, q < r, k < n2: the copy
    of an operand broadcast along the output's unit-stride dimension of short extent r, written
    in memory order (the rank-3 copy ran it as r strided passes over the output or as n2 inner
    loops of r: repeat(x, 4) of 250000 float64 575-1250 us against NumPy's 380-420)."""
    for i in range(n0):
        _repeat_block(o, oo + i * os0, os2, a, ao + i * as0, as2, r, 0, n2)


@njit(parallel=True, **_OPTS)
def repeat_runs_p(o, oo, os0, os2, a, ao, as0, as2, n0, r, n2, parts):
    """:func:`repeat_runs` in ``parts`` chunks of each run over threads."""
    chunk = (n2 + parts - 1) // parts
    for t in prange(n0 * parts):
        i = t // parts
        k0 = min((t - i * parts) * chunk, n2)
        _repeat_block(o, oo + i * os0, os2, a, ao + i * as0, as2, r, k0, min(k0 + chunk, n2))


@njit(parallel=True, **_OPTS)
def deinterleave_p(o, pairs, shift, rows, n, row_step, parts):
    """o[r * n + k] = pairs[r * row_step + k] >> shift, truncated to o's width, for ``rows``
    rows of n, each in ``parts`` chunks, over threads: every other element of rows of 1-, 2- or
    4-byte elements read as the low (shift 0) or high halves of unsigned integers twice as
    wide, so the loads are contiguous vectors where a stepped loop's are scalar or gathers (1M
    float32 from x[::2]: 155 -> ~70 us, NumPy 270)."""
    chunk = (n + parts - 1) // parts
    for t in prange(rows * parts):
        r = t // parts
        k0 = min((t - r * parts) * chunk, n)
        k1 = min(k0 + chunk, n)
        ob = o[r * n + k0 : r * n + k1]
        pb = pairs[r * row_step + k0 : r * row_step + k1]
        for k in range(k1 - k0):
            ob[k] = pb[k] >> shift


@njit(**_OPTS)
def mask_fill(x, xo, m, mo, n, v):
    """x[xo + i] = v where m[mo + i], for n elements of an x and a mask laid out alike and densely
    (x[mask] = scalar): every element written, kept or replaced by a select (vectorised; a
    branch per element would not be)."""
    xs = x[xo : xo + n]
    ms = m[mo : mo + n].view(np.uint8)
    for i in range(n):
        xs[i] = v if ms[i] else xs[i]


@njit(parallel=True, **_OPTS)
def mask_fill_p(x, xo, m, mo, n, v, parts):
    """:func:`mask_fill` in ``parts`` chunks over threads."""
    chunk = (n + parts - 1) // parts
    for p in prange(parts):
        i0 = min(p * chunk, n)
        mask_fill(x, xo + i0, m, mo + i0, min(i0 + chunk, n) - i0, v)


@njit(**_OPTS)
def mask_offsets(o, m, mo, mstrides, shape, xstrides, xo):
    """Element offsets ``xo + sum(i_d * xstrides[d])`` of the True elements of the mask ``m``
    (any strides), in C order of the index ``i``: one pass, an odometer instead of divisions.
    ``o`` holds one element more than there are True elements (it is written unconditionally)."""
    nd = shape.shape[0]
    idx = np.zeros(nd, np.int64)
    total = 1
    for d in range(nd):
        total *= shape[d]
    c = 0
    mpos = mo
    xpos = xo
    inner_m = mstrides[nd - 1]
    inner_x = xstrides[nd - 1]
    n_inner = shape[nd - 1]
    for _ in range(total // n_inner):
        if inner_m == 1:
            # a unit-stride mask row: through a slice, its bytes read as uint8 (no bounds or
            # stride arithmetic per element; 4096 elements 9 -> ~3 us)
            row = m[mpos : mpos + n_inner].view(np.uint8)
            for k in range(n_inner):
                o[c] = xpos + k * inner_x
                c += row[k]
        else:
            mp = mpos
            xp = xpos
            for _k in range(n_inner):
                # branch-free (the mask is unpredictable): o has one spare element for the
                # last write
                o[c] = xp
                c += 1 if m[mp] else 0
                mp += inner_m
                xp += inner_x
        mpos, xpos = _next_row(idx, shape, mstrides, xstrides, mpos, xpos)


@njit(**_OPTS)
def normalize_indices(o, k, size):
    """o = k with negative indices counted from ``size`` (one pass); the position of the first
    index outside [-size, size), or -1 when every one is in bounds (then o is written)."""
    n = k.shape[0]
    bad = n
    for i in range(n):
        v = k[i]
        bad = min(bad, i if (v < -size) | (v >= size) else n)
        o[i] = v + size if v < 0 else v
    return bad if bad < n else -1


@njit(**_OPTS)
def scatter_blocks(x, bases, v, t0, t1, s0, s1):
    """x[bases[i] + a * s0 + b * s1] = v[i, a, b]: assignment through integer/boolean indices."""
    block = t0 * t1
    if block == 1:  # single elements (x[order] = g of a 1-D x: 4096 elements 12 -> ~3 us)
        for i in range(bases.shape[0]):
            x[bases[i]] = v[i]
        return
    for i in range(bases.shape[0]):
        for a in range(t0):
            for b in range(t1):
                x[bases[i] + a * s0 + b * s1] = v[i * block + a * t1 + b]


@njit(**_OPTS)
def repeat_counted(o, x, x0, counts, c0, n, outer, inner, total):
    """o[a, j, b] = x[x0 + (a * n + i) * inner + b] at the counts[c0 + i] positions j of the
    i-th run along the middle axis, in order (run-length decoding: repeat with per-element
    counts; o C-ordered (outer, total, inner), x dense)."""
    for a in range(outer):
        j = a * total * inner
        end = j + total * inner
        for i in range(n):
            src = x0 + (a * n + i) * inner
            c = counts[c0 + i]
            if inner == 1:
                v = x[src]
                if j + c + 16 > end:  # (the last runs: exactly their elements)
                    for k in range(c):
                        o[j + k] = v
                elif c <= 4:
                    # four stores whatever the count (the next runs overwrite the extra ones):
                    # no branch on each count, which random short counts mispredict (1M
                    # elements repeated 0-3 times: 8.9 -> 2.2 ms, NumPy 6.1)
                    o[j] = v
                    o[j + 1] = v
                    o[j + 2] = v
                    o[j + 3] = v
                elif c <= 64:
                    for k in range(0, c, 16):
                        for q in range(16):  # (a constant count: unrolled, vector stores)
                            o[j + k + q] = v
                else:
                    o[j : j + c] = v  # (a long run at once: the slice's set-up is paid back)
                j += c
                continue
            for _ in range(c):
                o[j : j + inner] = x[src : src + inner]
                j += inner


@njit(**_OPTS)
def scatter_add_blocks(x, bases, v, t0, t1, s0, s1):
    """x[bases[i] + a * s0 + b * s1] += v[i, a, b]: repeated indices accumulate (serial)."""
    block = t0 * t1
    if block == 1:  # single elements
        for i in range(bases.shape[0]):
            x[bases[i]] += v[i]
        return
    for i in range(bases.shape[0]):
        for a in range(t0):
            for b in range(t1):
                x[bases[i] + a * s0 + b * s1] += v[i * block + a * t1 + b]
