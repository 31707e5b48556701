"""Matrix multiply kernels: BLAS (through numba's np.dot) for float and complex, a loop for
integers, dot products in registers for small batched matrices.  Batches arrive as per-batch
element offsets, so broadcast batch dimensions cost nothing.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

_OPTS = dict(cache=True, nogil=True, error_model="numpy")


@njit(inline="always")
def _dense(buf, off, s0, s1, rows, cols):
    """A C-contiguous (rows, cols) copy of a strided matrix, or a view when already dense."""
    if s1 == 1 and (s0 == cols or rows == 1):
        return buf[off : off + rows * cols].reshape((rows, cols))
    m = np.empty((rows, cols), dtype=buf.dtype)
    for i in range(rows):
        for j in range(cols):
            m[i, j] = buf[off + i * s0 + j * s1]
    return m


@njit(inline="always")
def _is_f(s0, s1, rows, cols):
    return s0 == 1 and (s1 == rows or cols == 1) and not (rows == 1 and cols == 1)


@njit(inline="always")
def _gemm(a_mat, b_mat, o, off, osm, osn, m, n):
    if osn == 1 and (osm == n or m == 1):
        # BLAS writes straight into the output buffer: no temporary, no copy
        np.dot(a_mat, b_mat, o[off : off + m * n].reshape((m, n)))
    else:
        c = np.dot(a_mat, b_mat)
        for i in range(m):
            for j in range(n):
                o[off + i * osm + j * osn] = c[i, j]


@njit(**_OPTS)
def matmul_blas(o, oo, osm, osn, a, ao, asm, ask, b, bo, bsk, bsn, m, k, n):
    for t in range(oo.shape[0]):
        if k == 0:
            for i in range(m):
                for j in range(n):
                    o[oo[t] + i * osm + j * osn] = 0
            continue
        # column-major operands go to BLAS as transposes of row-major views: no copy
        a_f, b_f = _is_f(asm, ask, m, k), _is_f(bsk, bsn, k, n)
        if a_f and b_f:
            _gemm(
                a[ao[t] : ao[t] + m * k].reshape((k, m)).T,
                b[bo[t] : bo[t] + k * n].reshape((n, k)).T,
                o,
                oo[t],
                osm,
                osn,
                m,
                n,
            )
        elif a_f:
            _gemm(
                a[ao[t] : ao[t] + m * k].reshape((k, m)).T,
                _dense(b, bo[t], bsk, bsn, k, n),
                o,
                oo[t],
                osm,
                osn,
                m,
                n,
            )
        elif b_f:
            _gemm(
                _dense(a, ao[t], asm, ask, m, k),
                b[bo[t] : bo[t] + k * n].reshape((n, k)).T,
                o,
                oo[t],
                osm,
                osn,
                m,
                n,
            )
        else:
            _gemm(
                _dense(a, ao[t], asm, ask, m, k),
                _dense(b, bo[t], bsk, bsn, k, n),
                o,
                oo[t],
                osm,
                osn,
                m,
                n,
            )


@njit(**_OPTS, parallel=True)
def matmul_int(o, oo, osm, osn, a, ao, asm, ask, b, bo, bsk, bsn, m, k, n):
    # i-k-j order: the innermost loop walks a row of b and of the output
    for tm in prange(oo.shape[0] * m):
        t = tm // m
        i = tm - t * m
        ob = oo[t] + i * osm
        for j in range(n):
            o[ob + j * osn] = 0
        for p in range(k):
            x = a[ao[t] + i * asm + p * ask]
            bb = bo[t] + p * bsk
            if osn == 1 and bsn == 1:  # dense rows: vectorised (1000 by 1000 x 1000 int32:
                # 1.04 ms -> ~0.1, NumPy 0.93)
                orow, brow = o[ob : ob + n], b[bb : bb + n]
                for j in range(n):
                    orow[j] += x * brow[j]
            else:
                for j in range(n):
                    o[ob + j * osn] += x * b[bb + j * bsn]


@njit(cache=True, nogil=True, error_model="numpy", fastmath={"reassoc", "contract"})
def matmul_small(o, a, ao, asm, ask, b, bo, bsk, bsn, m, k, n):
    """One small product into a dense (m, n) ``o``: a BLAS call costs more than the arithmetic
    here (used for m * k * n up to SMALL_MATMUL)."""
    for i in range(m):
        for j in range(n):
            o[i * n + j] = 0
        for p in range(k):
            x = a[ao + i * asm + p * ask]
            bb = bo + p * bsk
            for j in range(n):
                o[i * n + j] += x * b[bb + j * bsn]


#: the largest m * k * n that matmul_small serves
SMALL_MATMUL = 16**3


@njit(cache=True, nogil=True, error_model="numpy", fastmath={"reassoc", "contract"})
def matmul_rows(o, oo, osm, osn, a, ao, asm, ask, b, bo, bsk, bsn, m, k, n, r0, r1):
    """Rows r0..r1 of the batches' products, row r being row r % m of batch r // m: each output
    element one dot product summed in a register (small matrices, where a BLAS call per batch
    costs more than its arithmetic, and integer products with one column).  Integers wrap as
    NumPy's do (sums and products modulo 2**bits do not depend on the width in between)."""
    if r1 <= r0:
        return
    zero = np.zeros(1, o.dtype)[0]
    t = r0 // m
    i = r0 - t * m
    for _ in range(r1 - r0):
        ob, ab, bb = oo[t] + i * osm, ao[t] + i * asm, bo[t]
        if k == 3:  # the row of a in registers, no inner loop (3 x 3: 42 -> ~28 ns a product)
            a0, a1, a2 = a[ab], a[ab + ask], a[ab + 2 * ask]
            for j in range(n):
                q = bb + j * bsn
                o[ob + j * osn] = zero + a0 * b[q] + a1 * b[q + bsk] + a2 * b[q + 2 * bsk]
        elif k == 2:
            a0, a1 = a[ab], a[ab + ask]
            for j in range(n):
                q = bb + j * bsn
                o[ob + j * osn] = zero + a0 * b[q] + a1 * b[q + bsk]
        elif ask == 1 and bsk == 1 and n == 1:  # two dense runs: a vectorised dot product
            ra, rb = a[ab : ab + k], b[bb : bb + k]
            acc = zero
            for p in range(k):
                acc += ra[p] * rb[p]
            o[ob] = acc
        else:
            for j in range(n):
                acc = zero
                for p in range(k):
                    acc += a[ab + p * ask] * b[bb + p * bsk + j * bsn]
                o[ob + j * osn] = acc
        i += 1
        if i == m:
            i = 0
            t += 1


@njit(cache=True, nogil=True, error_model="numpy", parallel=True)
def matmul_rows_p(o, oo, osm, osn, a, ao, asm, ask, b, bo, bsk, bsn, m, k, n, parts):
    """:func:`matmul_rows` of every row of every batch, in ``parts`` chunks over threads (each
    element's sum is the same whichever thread computes it)."""
    rows = oo.shape[0] * m
    chunk = (rows + parts - 1) // parts
    for c in prange(parts):
        r0 = min(c * chunk, rows)
        matmul_rows(o, oo, osm, osn, a, ao, asm, ask, b, bo, bsk, bsn, m, k, n, r0,
                    min(r0 + chunk, rows))  # fmt: skip
