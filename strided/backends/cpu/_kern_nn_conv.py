"""numba kernels of the convolution and pooling primitives (``strided._ops.nn_conv``).

The kernels work on buffers that start at element 0 (the wrappers in ``_nn_conv.py`` slice or
copy): an image batch is ``N*C`` dense planes of ``H*W`` elements (im2col's planes, and the rows
of its columns, may lie anywhere in their buffers).  Each kernel is a per-plane body inlined
into two drivers: a serial loop (``*_s``) for small batches, and a ``prange`` over planes
(``*_p``) for large ones (no two planes write the same output element, so the scatter-style
kernels need no atomics).  Only the driver a call needs is compiled.  The convolutions' drivers
call one per-chunk function instead (``_forward_chunk`` ...): their bodies are large, and numba
compiles a large body inside a ``prange`` several times more slowly than the same function.

Rows of small images are 4-8 elements long, so per-row work (array slicing) would dominate:
indices are computed directly.  A stride-1 tap whose output rows are as long as the input's
("same" padding) reads one shifted run of the plane, copied in one vectorised loop (the columns
that wrap around a row end are fixed afterwards).
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

_OPTS = dict(cache=True, nogil=True, error_model="numpy")


@njit(inline="always")
def _valid_cols(off, step, n_in, n_out):
    """The output positions ``[lo, hi)`` whose input ``o*step + off`` lies in ``[0, n_in)``."""
    if off >= 0:
        lo = 0
    else:
        lo = (-off + step - 1) // step
    last = n_in - 1 - off
    if last < 0:
        hi = 0
    else:
        hi = min(n_out, last // step + 1)
    if lo > hi:
        lo = hi
    return lo, hi


# -- im2col / col2im -----------------------------------------------------------------------------
@njit(inline="always")
def _valid_rows(ki, dh, pt, H, OH):
    """(row offset ih - oh, first and end output rows whose input row lies in [0, H)) of a
    stride-1 kernel row."""
    shift = ki * dh - pt
    return shift, max(0, -shift), min(OH, H - shift)


_SMALL_ROW = 16  # output rows shorter than this go through a precomputed tap map


@njit(inline="always")
def _tap_map(H, W, kh, kw, dh, dw, pt, pl, sh, sw, OH, OW):
    """For each tap and output position, the position read in the plane (-1: padding): small
    planes then cost one lookup per element instead of loop bookkeeping per row."""
    L = OH * OW
    if OW >= _SMALL_ROW:
        return np.empty(0, np.int64)  # large planes use the row loops
    m = np.empty(kh * kw * L, np.int64)
    for ki in range(kh):
        for kj in range(kw):
            t = ki * kw + kj
            for oh in range(OH):
                ih = oh * sh - pt + ki * dh
                for ow in range(OW):
                    iw = ow * sw - pl + kj * dw
                    inside = ih >= 0 and ih < H and iw >= 0 and iw < W
                    m[t * L + oh * OW + ow] = ih * W + iw if inside else -1
    return m


@njit(inline="always")
def _im2col_plane(
    p, o, osn, osr, x, xsn, xsc, C, H, W, kh, kw, dh, dw, pt, pl, sh, sw, OH, OW, tmap
):
    n = p // C
    c = p - n * C
    xb = n * xsn + c * xsc
    kk = kh * kw
    if tmap.size:
        L = OH * OW
        for t in range(kk):
            base = n * osn + (c * kk + t) * osr
            for j in range(L):
                k = tmap[t * L + j]
                o[base + j] = x[xb + k] if k >= 0 else 0
        return
    flat = sh == 1 and sw == 1 and OW == W
    for ki in range(kh):
        for kj in range(kw):
            offw = kj * dw - pl
            lo, hi = _valid_cols(offw, sw, W, OW)
            base = n * osn + (c * kk + ki * kw + kj) * osr
            if flat:
                # stride 1 and rows as long as the input's: the valid rows of this tap are one
                # run of the plane, shifted; copy it whole, then zero the columns that wrapped
                shift, r0, r1 = _valid_rows(ki, dh, pt, H, OH)
                for i in range(base, base + r0 * OW):
                    o[i] = 0
                for i in range(base + max(r1, r0) * OW, base + OH * OW):
                    o[i] = 0
                if r1 <= r0:
                    continue
                src = (r0 + shift) * W + offw  # may start before the plane or end after it
                a = max(0, -src)
                e = min((r1 - r0) * OW, H * W - src)
                dst = o[base + r0 * OW + a : base + r0 * OW + e]
                sx = x[xb + src + a : xb + src + e]
                for i in range(e - a):
                    dst[i] = sx[i]
                for oh in range(r0, r1):
                    r = base + oh * OW
                    for ow in range(lo):
                        o[r + ow] = 0
                    for ow in range(hi, OW):
                        o[r + ow] = 0
                continue
            for oh in range(OH):
                ih = oh * sh - pt + ki * dh
                r = base + oh * OW
                if ih < 0 or ih >= H:
                    for ow in range(OW):
                        o[r + ow] = 0
                    continue
                src = xb + ih * W + offw
                for ow in range(lo):
                    o[r + ow] = 0
                for ow in range(lo, hi):
                    o[r + ow] = x[src + ow * sw]
                for ow in range(hi, OW):
                    o[r + ow] = 0


@njit(**_OPTS)
def im2col_s(o, osn, osr, x, xsn, xsc, N, C, H, W, kh, kw, dh, dw, pt, pl, sh, sw, OH, OW):
    """Columns of PyTorch's ``unfold``: entry (n, (c*kh + ki)*kw + kj, oh*OW + ow) of ``o``,
    at ``n*osn + row*osr + l``, is ``x[n, c, oh*sh - pt + ki*dh, ow*sw - pl + kj*dw]`` (zero in
    the padding).  Image (n, c) starts at ``n*xsn + c*xsc`` and is a dense (H, W) plane."""
    tmap = _tap_map(H, W, kh, kw, dh, dw, pt, pl, sh, sw, OH, OW)
    for p in range(N * C):
        _im2col_plane(
            p, o, osn, osr, x, xsn, xsc, C, H, W, kh, kw, dh, dw, pt, pl, sh, sw, OH, OW, tmap
        )


@njit(parallel=True, **_OPTS)
def im2col_p(o, osn, osr, x, xsn, xsc, N, C, H, W, kh, kw, dh, dw, pt, pl, sh, sw, OH, OW):
    """:func:`im2col_s` over planes in parallel."""
    tmap = _tap_map(H, W, kh, kw, dh, dw, pt, pl, sh, sw, OH, OW)
    for p in prange(N * C):
        _im2col_plane(
            p, o, osn, osr, x, xsn, xsc, C, H, W, kh, kw, dh, dw, pt, pl, sh, sw, OH, OW, tmap
        )


@njit(inline="always")
def _col2im_plane(
    p, o, osn, osc, c, csn, csr, C, H, W, kh, kw, dh, dw, pt, pl, sh, sw, OH, OW, clobber, tmap
):
    n = p // C
    ch = p - n * C
    ob = n * osn + ch * osc
    for i in range(H * W):
        o[ob + i] = 0
    kk = kh * kw
    if tmap.size:
        L = OH * OW
        for t in range(kk):
            base = n * csn + (ch * kk + t) * csr
            for j in range(L):
                k = tmap[t * L + j]
                if k >= 0:
                    o[ob + k] += c[base + j]
        return
    # with a scratch ``c`` (clobber), stride-1 taps add one shifted run of the plane after
    # zeroing the entries of ``c`` that wrap around a row end
    flat = clobber and sh == 1 and sw == 1 and OW == W
    for ki in range(kh):
        for kj in range(kw):
            offw = kj * dw - pl
            lo, hi = _valid_cols(offw, sw, W, OW)
            base = n * csn + (ch * kk + ki * kw + kj) * csr
            if flat:
                shift, r0, r1 = _valid_rows(ki, dh, pt, H, OH)
                if r1 <= r0:
                    continue
                for oh in range(r0, r1):
                    r = base + oh * OW
                    for ow in range(lo):
                        c[r + ow] = 0
                    for ow in range(hi, OW):
                        c[r + ow] = 0
                dst = (r0 + shift) * W + offw
                a = max(0, -dst)
                e = min((r1 - r0) * OW, H * W - dst)
                od = o[ob + dst + a : ob + dst + e]
                cs = c[base + r0 * OW + a : base + r0 * OW + e]
                for i in range(e - a):
                    od[i] += cs[i]
                continue
            for oh in range(OH):
                ih = oh * sh - pt + ki * dh
                if ih < 0 or ih >= H:
                    continue
                r = base + oh * OW
                dst = ob + ih * W + offw
                for ow in range(lo, hi):
                    o[dst + ow * sw] += c[r + ow]


@njit(**_OPTS)
def col2im_s(o, c, csn, csr, N, C, H, W, kh, kw, dh, dw, pt, pl, sh, sw, OH, OW):
    """The adjoint of :func:`im2col_s`: the dense images ``o`` (N, C, H, W) accumulate every
    column entry (at ``n*csn + row*csr + l`` in ``c``) at the position it was read from
    (entries read from the padding are dropped)."""
    tmap = _tap_map(H, W, kh, kw, dh, dw, pt, pl, sh, sw, OH, OW)
    for p in range(N * C):
        _col2im_plane(
            p, o, C * H * W, H * W, c, csn, csr, C, H, W, kh, kw, dh, dw, pt, pl, sh, sw, OH, OW,
            False, tmap,
        )  # fmt: skip


@njit(parallel=True, **_OPTS)
def col2im_p(o, c, csn, csr, N, C, H, W, kh, kw, dh, dw, pt, pl, sh, sw, OH, OW):
    """:func:`col2im_s` over planes in parallel."""
    tmap = _tap_map(H, W, kh, kw, dh, dw, pt, pl, sh, sw, OH, OW)
    for p in prange(N * C):
        _col2im_plane(
            p, o, C * H * W, H * W, c, csn, csr, C, H, W, kh, kw, dh, dw, pt, pl, sh, sw, OH, OW,
            False, tmap,
        )  # fmt: skip


# -- fused convolution: im2col of a chunk of images, then BLAS, chunk after chunk ---------------
# The columns of a few images at a time stay in cache, so neither they nor BLAS's packed copy of
# them go through main memory (a whole batch's columns are C*kh*kw times the input).  Weights
# are (G, O/G, C/G*kh*kw), images and outputs dense (N, C, H, W) / (N, O, OH, OW) buffers.


#: products of at most this many multiply-adds run in the loops below instead of BLAS: a
#: multi-threaded BLAS call on a small product costs more in thread hand-offs than it saves,
#: and on a busy machine its spinning threads stall everything (measured: a digits CNN step
#: went from ~2 ms to ~100+ ms with the machine's other load)
SMALL_GEMM = 1 << 23
_FM = {"reassoc", "contract"}


@njit(fastmath=_FM, **_OPTS)
def _loop_nn(a, b):
    """a (M, K) @ b (K, N), rows of b streamed through each output row (vectorised on N)."""
    m, k = a.shape
    n = b.shape[1]
    c = np.zeros((m, n), dtype=a.dtype)
    for i in range(m):
        ci = c[i]
        for kk in range(k):
            aik = a[i, kk]
            bk = b[kk]
            for j in range(n):
                ci[j] += aik * bk[j]
    return c


@njit(fastmath=_FM, **_OPTS)
def _loop_tn(a, b):
    """a (O, K)^T @ b (O, N)."""
    o, k = a.shape
    n = b.shape[1]
    c = np.zeros((k, n), dtype=a.dtype)
    for kk in range(k):
        ck = c[kk]
        for i in range(o):
            aik = a[i, kk]
            bi = b[i]
            for j in range(n):
                ck[j] += aik * bi[j]
    return c


@njit(fastmath=_FM, **_OPTS)
def _loop_nt(a, b):
    """a (M, N) @ b (K, N)^T: dot products of contiguous rows."""
    m, n = a.shape
    k = b.shape[0]
    c = np.zeros((m, k), dtype=a.dtype)
    for i in range(m):
        ai = a[i]
        for kk in range(k):
            bk = b[kk]
            s = c[i, kk]
            for j in range(n):
                s += ai[j] * bk[j]
            c[i, kk] = s
    return c


@njit(inline="always")
def _move_rows(t, g, n0, m, gi, Og, O, L, gather):
    """Rows gi*Og.. of images n0..n0+m of ``g`` (N, O, L) into ``t`` (Og, m*L) where ``gather``,
    else ``t`` back into them."""
    for i in range(m):
        for o in range(Og):
            a = ((n0 + i) * O + gi * Og + o) * L
            b = (o * m + i) * L
            if gather:
                t[b : b + L] = g[a : a + L]
            else:
                g[a : a + L] = t[b : b + L]


@njit(inline="always")
def _im2col_group(cols, x, xsn, xsc, n0, m, gi, Cg, H, W, kh, kw, dh, dw, pt, pl, sh, sw, OH, OW,
                  tmap):  # fmt: skip
    """im2col of group ``gi`` of images n0..n0+m into ``cols`` (Cg*kh*kw, m*L)."""
    L = OH * OW
    xs = x[n0 * xsn + gi * Cg * xsc :]
    for p in range(m * Cg):
        _im2col_plane(
            p, cols, L, m * L, xs, xsn, xsc, Cg, H, W, kh, kw, dh, dw, pt, pl, sh, sw, OH, OW, tmap
        )


# Per-chunk bodies of the three kernels (``nb`` images from ``n0``), plain functions called by the
# serial loops and by the parallel ones' prange: compiled once, and the parallel kernels stay
# small (a prange around the inlined im2col took numba 7-13 s to compile per kernel and dtype).
# ``blas``: the large products go to BLAS (serial only: see the parallel kernels' comment).


@njit(**_OPTS)
def _forward_chunk(y, x, xsn, xsc, wm, cols, n0, m, C, H, W, O, G, kh, kw, dh, dw, pt, pl, sh, sw,
                   OH, OW, tmap, blas):  # fmt: skip
    L = OH * OW
    Cg = C // G
    Og = O // G
    Kg = Cg * kh * kw
    for gi in range(G):
        _im2col_group(cols, x, xsn, xsc, n0, m, gi, Cg, H, W, kh, kw, dh, dw, pt, pl, sh, sw, OH,
                      OW, tmap)  # fmt: skip
        cm = cols[: Kg * m * L].reshape((Kg, m * L))
        if blas and Og * Kg * m * L > SMALL_GEMM:
            t = np.dot(wm[gi], cm)
        else:
            t = _loop_nn(wm[gi], cm)
        _move_rows(t.reshape(-1), y, n0, m, gi, Og, O, L, False)


@njit(**_OPTS)
def _input_grad_chunk(gx, g, wm, t, n0, m, C, H, W, O, G, kh, kw, dh, dw, pt, pl, sh, sw, OH, OW,
                      tmap, blas):  # fmt: skip
    L = OH * OW
    Cg = C // G
    Og = O // G
    Kg = Cg * kh * kw
    for gi in range(G):
        _move_rows(t, g, n0, m, gi, Og, O, L, True)
        tm = t[: Og * m * L].reshape((Og, m * L))
        if blas and Og * Kg * m * L > SMALL_GEMM:
            cols = np.dot(wm[gi].T, tm).reshape(-1)
        else:
            cols = _loop_tn(wm[gi], tm).reshape(-1)
        gxs = gx[(n0 * C + gi * Cg) * H * W :]
        for p in range(m * Cg):
            _col2im_plane(
                p, gxs, C * H * W, H * W, cols, L, m * L, Cg, H, W, kh, kw, dh, dw, pt, pl,
                sh, sw, OH, OW, True, tmap,
            )  # fmt: skip


@njit(**_OPTS)
def _weight_grad_chunk(gwm, x, xsn, xsc, g, cols, t, n0, m, C, H, W, O, G, kh, kw, dh, dw, pt, pl,
                       sh, sw, OH, OW, tmap, blas, fresh):  # fmt: skip
    """gwm (G, O/G, K) += this chunk's products (= where ``fresh``)."""
    L = OH * OW
    Cg = C // G
    Og = O // G
    Kg = Cg * kh * kw
    if fresh:
        gwm[:] = 0
    for gi in range(G):
        _im2col_group(cols, x, xsn, xsc, n0, m, gi, Cg, H, W, kh, kw, dh, dw, pt, pl, sh, sw, OH,
                      OW, tmap)  # fmt: skip
        _move_rows(t, g, n0, m, gi, Og, O, L, True)
        tm = t[: Og * m * L].reshape((Og, m * L))
        cm = cols[: Kg * m * L].reshape((Kg, m * L))
        if blas and Og * Kg * m * L > SMALL_GEMM:
            gwm[gi] += np.dot(tm, cm.T)
        else:
            gwm[gi] += _loop_nt(tm, cm)


@njit(**_OPTS)
def conv2d_forward(y, x, xsn, xsc, w, N, C, H, W, O, G, kh, kw, dh, dw, pt, pl, sh, sw, OH, OW, nb):
    """``y`` (N, O, OH, OW) = the grouped convolution of ``x`` (image (n, c) a dense plane at
    ``n*xsn + c*xsc``) with ``w``, ``nb`` images per matrix product."""
    Kg = (C // G) * kh * kw
    wm = w.reshape((G, O // G, Kg))
    cols = np.empty(Kg * nb * OH * OW, dtype=y.dtype)
    tmap = _tap_map(H, W, kh, kw, dh, dw, pt, pl, sh, sw, OH, OW)
    for n0 in range(0, N, nb):
        _forward_chunk(y, x, xsn, xsc, wm, cols, n0, min(N - n0, nb), C, H, W, O, G, kh, kw, dh,
                       dw, pt, pl, sh, sw, OH, OW, tmap, True)  # fmt: skip


@njit(**_OPTS)
def conv2d_input_grad(gx, g, w, N, C, H, W, O, G, kh, kw, dh, dw, pt, pl, sh, sw, OH, OW, nb):
    """``gx`` (N, C, H, W) = the adjoint of :func:`conv2d_forward` applied to ``g``
    (N, O, OH, OW): col2im of w^T g, ``nb`` images per matrix product (also the transposed
    convolution)."""
    wm = w.reshape((G, O // G, (C // G) * kh * kw))
    t = np.empty((O // G) * nb * OH * OW, dtype=gx.dtype)
    tmap = _tap_map(H, W, kh, kw, dh, dw, pt, pl, sh, sw, OH, OW)
    for n0 in range(0, N, nb):
        _input_grad_chunk(gx, g, wm, t, n0, min(N - n0, nb), C, H, W, O, G, kh, kw, dh, dw, pt,
                          pl, sh, sw, OH, OW, tmap, True)  # fmt: skip


@njit(**_OPTS)
def conv2d_weight_grad(
    gw, x, xsn, xsc, g, N, C, H, W, O, G, kh, kw, dh, dw, pt, pl, sh, sw, OH, OW, nb
):
    """``gw`` (G, O/G, C/G*kh*kw) = sum over images of g_n im2col(x_n)^T (the gradient of
    :func:`conv2d_forward` with respect to the weight), ``nb`` images per matrix product."""
    L = OH * OW
    Kg = (C // G) * kh * kw
    gw[:] = 0
    gwm = gw.reshape((G, O // G, Kg))
    cols = np.empty(Kg * nb * L, dtype=gw.dtype)
    t = np.empty((O // G) * nb * L, dtype=gw.dtype)
    tmap = _tap_map(H, W, kh, kw, dh, dw, pt, pl, sh, sw, OH, OW)
    for n0 in range(0, N, nb):
        _weight_grad_chunk(gwm, x, xsn, xsc, g, cols, t, n0, min(N - n0, nb), C, H, W, O, G, kh,
                           kw, dh, dw, pt, pl, sh, sw, OH, OW, tmap, True, False)  # fmt: skip


# The same three kernels over chunks of images in parallel, every product in the loops above:
# one thread-pool hand-off per call instead of a multi-threaded BLAS call per chunk (whose
# spinning threads, on a machine busy with other work, made a 64x32x32x32 forward 10-100x
# slower than its single-threaded time; these stay within PyTorch's time there).  With one
# thread the serial kernels (BLAS for the large products) are faster and are used instead.


@njit(parallel=True, **_OPTS)
def conv2d_forward_p(
    y, x, xsn, xsc, w, N, C, H, W, O, G, kh, kw, dh, dw, pt, pl, sh, sw, OH, OW, nb
):
    """:func:`conv2d_forward` over chunks of images in parallel."""
    Kg = (C // G) * kh * kw
    wm = w.reshape((G, O // G, Kg))
    tmap = _tap_map(H, W, kh, kw, dh, dw, pt, pl, sh, sw, OH, OW)
    for ci in prange((N + nb - 1) // nb):
        n0 = ci * nb
        m = min(N - n0, nb)
        cols = np.empty(Kg * m * OH * OW, dtype=y.dtype)
        _forward_chunk(y, x, xsn, xsc, wm, cols, n0, m, C, H, W, O, G, kh, kw, dh, dw, pt, pl,
                       sh, sw, OH, OW, tmap, False)  # fmt: skip


@njit(parallel=True, **_OPTS)
def conv2d_input_grad_p(gx, g, w, N, C, H, W, O, G, kh, kw, dh, dw, pt, pl, sh, sw, OH, OW, nb):
    """:func:`conv2d_input_grad` over chunks of images in parallel."""
    wm = w.reshape((G, O // G, (C // G) * kh * kw))
    tmap = _tap_map(H, W, kh, kw, dh, dw, pt, pl, sh, sw, OH, OW)
    for ci in prange((N + nb - 1) // nb):
        n0 = ci * nb
        m = min(N - n0, nb)
        t = np.empty((O // G) * m * OH * OW, dtype=gx.dtype)
        _input_grad_chunk(gx, g, wm, t, n0, m, C, H, W, O, G, kh, kw, dh, dw, pt, pl, sh, sw, OH,
                          OW, tmap, False)  # fmt: skip


@njit(parallel=True, **_OPTS)
def conv2d_weight_grad_p(
    gw, x, xsn, xsc, g, N, C, H, W, O, G, kh, kw, dh, dw, pt, pl, sh, sw, OH, OW, nb
):
    """:func:`conv2d_weight_grad` over chunks of images in parallel (a partial sum per chunk,
    added up at the end)."""
    L = OH * OW
    Og = O // G
    Kg = (C // G) * kh * kw
    nchunks = (N + nb - 1) // nb
    parts = np.empty((nchunks, G, Og, Kg), dtype=gw.dtype)
    tmap = _tap_map(H, W, kh, kw, dh, dw, pt, pl, sh, sw, OH, OW)
    for ci in prange(nchunks):
        n0 = ci * nb
        m = min(N - n0, nb)
        cols = np.empty(Kg * m * L, dtype=gw.dtype)
        t = np.empty(Og * m * L, dtype=gw.dtype)
        _weight_grad_chunk(parts[ci], x, xsn, xsc, g, cols, t, n0, m, C, H, W, O, G, kh, kw, dh,
                           dw, pt, pl, sh, sw, OH, OW, tmap, False, True)  # fmt: skip
    _sum_parts(gw, parts)


@njit(**_OPTS)
def _sum_parts(gw, parts):
    """gw = the sum of parts[0], parts[1], ... in order (outside the parallel kernel: array
    expressions there become parallel loops of their own, each compiled separately)."""
    flat = parts.reshape((parts.shape[0], -1))
    gw[:] = 0
    for ci in range(flat.shape[0]):
        row = flat[ci]
        for k in range(gw.size):
            gw[k] += row[k]


# -- max pooling ---------------------------------------------------------------------------------
@njit(inline="always")
def _pick(best, at, v, k):
    """(value, position) of the running maximum after ``v`` at ``k``: a larger value or a NaN
    (the last NaN) wins, ties keep the first (PyTorch's rule)."""
    c = (v > best) | (v != v)
    return (v if c else best), (k if c else at)


@njit(inline="always")
def _max_pool_2x2_plane(p, o3, i3, x3, W, sh, sw, OH, OW):
    # the common 2x2 window, always inside the plane: four loads written out, indexed by
    # non-negative loop expressions (no wraparound checks); its own kernel, since inlined beside
    # the general loops (whose running maximum starts as a float64 -inf) it ran ~3x slower on
    # 4x4 and 8x8 planes
    for oh in range(OH):
        r = oh * sh
        for ow in range(OW):
            c = ow * sw
            best, at = x3[p, r, c], r * W + c
            best, at = _pick(best, at, x3[p, r, c + 1], r * W + c + 1)
            best, at = _pick(best, at, x3[p, r + 1, c], (r + 1) * W + c)
            best, at = _pick(best, at, x3[p, r + 1, c + 1], (r + 1) * W + c + 1)
            o3[p, oh, ow] = best
            i3[p, oh, ow] = at


@njit(**_OPTS)
def max_pool2d_2x2_s(o, idx, x, planes, H, W, sh, sw, OH, OW):
    """:func:`max_pool2d_s` of a 2x2 window (no padding or dilation) inside every plane."""
    x3, o3, i3 = (
        x.reshape((planes, H, W)),
        o.reshape((planes, OH, OW)),
        idx.reshape((planes, OH, OW)),
    )
    for p in range(planes):
        _max_pool_2x2_plane(p, o3, i3, x3, W, sh, sw, OH, OW)


@njit(parallel=True, **_OPTS)
def max_pool2d_2x2_p(o, idx, x, planes, H, W, sh, sw, OH, OW):
    """:func:`max_pool2d_2x2_s` over planes in parallel."""
    x3, o3, i3 = (
        x.reshape((planes, H, W)),
        o.reshape((planes, OH, OW)),
        idx.reshape((planes, OH, OW)),
    )
    for p in prange(planes):
        _max_pool_2x2_plane(p, o3, i3, x3, W, sh, sw, OH, OW)


@njit(inline="always")
def _max_pool_plane(p, o, idx, x, H, W, kh, kw, sh, sw, ph, pw, dh, dw, OH, OW):
    xb = p * H * W
    ob = p * OH * OW
    if dh == 1 and dw == 1:
        # plain ranges: a loop with a variable step costs divisions per window
        for oh in range(OH):
            hs = oh * sh - ph
            he = min(hs + kh, H)
            hs = max(hs, 0)
            for ow in range(OW):
                ws = ow * sw - pw
                we = min(ws + kw, W)
                ws = max(ws, 0)
                best = -np.inf
                at = hs * W + ws
                for ih in range(hs, he):
                    r = xb + ih * W
                    for iw in range(ws, we):
                        v = x[r + iw]
                        if v > best or v != v:
                            best = v
                            at = ih * W + iw
                o[ob + oh * OW + ow] = best
                idx[ob + oh * OW + ow] = at
        return
    for oh in range(OH):
        hs = oh * sh - ph
        he = min(hs + (kh - 1) * dh + 1, H)
        while hs < 0:
            hs += dh
        for ow in range(OW):
            ws = ow * sw - pw
            we = min(ws + (kw - 1) * dw + 1, W)
            while ws < 0:
                ws += dw
            best = -np.inf
            at = hs * W + ws
            for ih in range(hs, he, dh):
                for iw in range(ws, we, dw):
                    v = x[xb + ih * W + iw]
                    if v > best or v != v:
                        best = v
                        at = ih * W + iw
            o[ob + oh * OW + ow] = best
            idx[ob + oh * OW + ow] = at


@njit(**_OPTS)
def max_pool2d_s(o, idx, x, planes, H, W, kh, kw, sh, sw, ph, pw, dh, dw, OH, OW):
    """Window maxima of each plane and their flat positions ``ih*W + iw`` in the plane
    (PyTorch's ``return_indices``); padding never wins, NaN always does (the last one)."""
    for p in range(planes):
        _max_pool_plane(p, o, idx, x, H, W, kh, kw, sh, sw, ph, pw, dh, dw, OH, OW)


@njit(parallel=True, **_OPTS)
def max_pool2d_p(o, idx, x, planes, H, W, kh, kw, sh, sw, ph, pw, dh, dw, OH, OW):
    """:func:`max_pool2d_s` over planes in parallel."""
    for p in prange(planes):
        _max_pool_plane(p, o, idx, x, H, W, kh, kw, sh, sw, ph, pw, dh, dw, OH, OW)


@njit(inline="always")
def _max_unpool_plane(p, o, g, idx, HW, L):
    ob = p * HW
    for i in range(HW):
        o[ob + i] = 0
    gb = p * L
    for j in range(L):
        o[ob + idx[gb + j]] += g[gb + j]


@njit(**_OPTS)
def max_pool2d_backward_s(o, g, idx, planes, HW, L):
    """``o`` (planes of ``HW``) accumulates each gradient entry at the position its maximum
    came from."""
    for p in range(planes):
        _max_unpool_plane(p, o, g, idx, HW, L)


@njit(parallel=True, **_OPTS)
def max_pool2d_backward_p(o, g, idx, planes, HW, L):
    """:func:`max_pool2d_backward_s` over planes in parallel."""
    for p in prange(planes):
        _max_unpool_plane(p, o, g, idx, HW, L)


# -- average pooling -----------------------------------------------------------------------------
@njit(inline="always")
def _avg_window(oh, ow, H, W, kh, kw, sh, sw, ph, pw, count_include_pad, divisor):
    """PyTorch's average-pooling window: clipped bounds and the divisor."""
    hs = oh * sh - ph
    ws = ow * sw - pw
    he = min(hs + kh, H + ph)
    we = min(ws + kw, W + pw)
    size = (he - hs) * (we - ws)
    hs = max(hs, 0)
    ws = max(ws, 0)
    he = min(he, H)
    we = min(we, W)
    if divisor != 0:
        d = divisor
    elif count_include_pad:
        d = size
    else:
        d = (he - hs) * (we - ws)
    return hs, he, ws, we, d


@njit(inline="always")
def _avg_pool_plane(p, o, x, H, W, kh, kw, sh, sw, ph, pw, OH, OW, count_include_pad, divisor):
    xb = p * H * W
    ob = p * OH * OW
    for oh in range(OH):
        for ow in range(OW):
            hs, he, ws, we, d = _avg_window(
                oh, ow, H, W, kh, kw, sh, sw, ph, pw, count_include_pad, divisor
            )
            acc = 0.0  # float64 accumulation, also for float32 data
            for ih in range(hs, he):
                for iw in range(ws, we):
                    acc += x[xb + ih * W + iw]
            if hs >= he or ws >= we:
                o[ob + oh * OW + ow] = 0
            else:
                o[ob + oh * OW + ow] = acc / d


@njit(**_OPTS)
def avg_pool2d_s(o, x, planes, H, W, kh, kw, sh, sw, ph, pw, OH, OW, count_include_pad, divisor):
    """Window means with PyTorch's divisors (padded window, window inside the input, or
    ``divisor`` when non-zero)."""
    for p in range(planes):
        _avg_pool_plane(p, o, x, H, W, kh, kw, sh, sw, ph, pw, OH, OW, count_include_pad, divisor)


@njit(parallel=True, **_OPTS)
def avg_pool2d_p(o, x, planes, H, W, kh, kw, sh, sw, ph, pw, OH, OW, count_include_pad, divisor):
    """:func:`avg_pool2d_s` over planes in parallel."""
    for p in prange(planes):
        _avg_pool_plane(p, o, x, H, W, kh, kw, sh, sw, ph, pw, OH, OW, count_include_pad, divisor)


@njit(inline="always")
def _avg_unpool_plane(p, o, g, H, W, kh, kw, sh, sw, ph, pw, OH, OW, count_include_pad, divisor):
    ob = p * H * W
    gb = p * OH * OW
    for i in range(H * W):
        o[ob + i] = 0
    for oh in range(OH):
        for ow in range(OW):
            hs, he, ws, we, d = _avg_window(
                oh, ow, H, W, kh, kw, sh, sw, ph, pw, count_include_pad, divisor
            )
            if hs >= he or ws >= we:
                continue
            v = g[gb + oh * OW + ow] / d
            for ih in range(hs, he):
                for iw in range(ws, we):
                    o[ob + ih * W + iw] += v


@njit(**_OPTS)
def avg_pool2d_backward_s(
    o, g, planes, H, W, kh, kw, sh, sw, ph, pw, OH, OW, count_include_pad, divisor
):
    """The adjoint of :func:`avg_pool2d_s`: each window's gradient spread over the window."""
    for p in range(planes):
        _avg_unpool_plane(p, o, g, H, W, kh, kw, sh, sw, ph, pw, OH, OW, count_include_pad, divisor)


@njit(parallel=True, **_OPTS)
def avg_pool2d_backward_p(
    o, g, planes, H, W, kh, kw, sh, sw, ph, pw, OH, OW, count_include_pad, divisor
):
    """:func:`avg_pool2d_backward_s` over planes in parallel."""
    for p in prange(planes):
        _avg_unpool_plane(p, o, g, H, W, kh, kw, sh, sw, ph, pw, OH, OW, count_include_pad, divisor)


# -- tiny images: the convolution as dense matrices, one per output row ----------------------
# On images of a few pixels (the 4x4 maps deep in a small CNN) im2col costs as much as the
# product and a batch's product is split in chunks.  There a convolution is better written
# with the matrix of its linear map, built from the weights.  Output row oh reads only the
# input rows of its band [lo, hi), so the map is one matrix B_oh (band*C*W, O*OW) per output row
# (the full (C*H*W, O*OH*OW) matrix is block-banded: on a 4x4 image with a 3x3 kernel 6 of its
# 16 row blocks are zero): the forward is A_oh @ B_oh with A_oh the band's input
# rows (N, band*C*W), the input gradient G_oh @ B_oh^T added into the band, the weight gradient
# A_oh^T @ G_oh summed back over the positions each weight occupies.  Each is a few BLAS
# products on small copies (no im2col, col2im or chunking); the wrapper uses them only where
# they cost at most ~2x im2col's multiply-adds.


@njit(inline="always")
def _band(oh, H, kh, dh, pt, sh):
    """The input rows [lo, hi) that output row ``oh`` reads (empty: all padding)."""
    top = oh * sh - pt
    lo = max(0, top)
    hi = min(H, top + (kh - 1) * dh + 1)
    return lo, max(lo, hi)


@njit(inline="always")
def _band_matrix(w, oh, lo, hi, C, W, O, kh, kw, dh, dw, pt, pl, sh, sw, OW):
    """B_oh (band*C*W, O*OW): entry ((ih - lo)*C*W + c*W + iw, o*OW + ow) is the weight that
    output (o, oh, ow) gives input (c, ih, iw) (distinct taps read distinct positions)."""
    CW = C * W
    kk = kh * kw
    bm = np.zeros(((hi - lo) * CW, O * OW), dtype=w.dtype)
    for ki in range(kh):
        ih = oh * sh - pt + ki * dh
        if ih < lo or ih >= hi:
            continue
        for ow in range(OW):
            for kj in range(kw):
                iw = ow * sw - pl + kj * dw
                if iw < 0 or iw >= W:
                    continue
                for c in range(C):
                    row = bm[(ih - lo) * CW + c * W + iw]
                    for o in range(O):
                        row[o * OW + ow] = w[(o * C + c) * kk + ki * kw + kj]
    return bm


@njit(inline="always")
def _band_rows(x4, N, C, W, lo, hi):
    """A (N, band*C*W): the band's input rows of every image, channel by channel."""
    CW = C * W
    a = np.empty((N, (hi - lo) * CW), dtype=x4.dtype)
    for n in range(N):
        for j in range(hi - lo):
            for c in range(C):
                for iw in range(W):
                    a[n, j * CW + c * W + iw] = x4[n, c, lo + j, iw]
    return a


@njit(inline="always")
def _out_row(g4, N, O, oh, OW):
    """G (N, O*OW): output row ``oh`` of every image and channel."""
    go = np.empty((N, O * OW), dtype=g4.dtype)
    for n in range(N):
        for o in range(O):
            for ow in range(OW):
                go[n, o * OW + ow] = g4[n, o, oh, ow]
    return go


@njit(**_OPTS)
def conv2d_forward_dense(y, x, w, N, C, H, W, O, kh, kw, dh, dw, pt, pl, sh, sw, OH, OW):
    """:func:`conv2d_forward` (groups 1) of dense ``x`` (N, C, H, W), row by output row."""
    x4 = x.reshape((N, C, H, W))
    y4 = y.reshape((N, O, OH, OW))
    for oh in range(OH):
        lo, hi = _band(oh, H, kh, dh, pt, sh)
        if hi == lo:
            y4[:, :, oh, :] = 0
            continue
        bm = _band_matrix(w, oh, lo, hi, C, W, O, kh, kw, dh, dw, pt, pl, sh, sw, OW)
        yo = np.dot(_band_rows(x4, N, C, W, lo, hi), bm)
        for n in range(N):
            for o in range(O):
                for ow in range(OW):
                    y4[n, o, oh, ow] = yo[n, o * OW + ow]


@njit(**_OPTS)
def conv2d_input_grad_dense(gx, g, w, N, C, H, W, O, kh, kw, dh, dw, pt, pl, sh, sw, OH, OW):
    """:func:`conv2d_input_grad` (groups 1) of dense ``g`` (N, O, OH, OW): G_oh @ B_oh^T added
    into each output row's band."""
    CW = C * W
    gx4 = gx.reshape((N, C, H, W))
    g4 = g.reshape((N, O, OH, OW))
    gx[:] = 0
    for oh in range(OH):
        lo, hi = _band(oh, H, kh, dh, pt, sh)
        if hi == lo:
            continue
        bm = _band_matrix(w, oh, lo, hi, C, W, O, kh, kw, dh, dw, pt, pl, sh, sw, OW)
        ga = np.dot(_out_row(g4, N, O, oh, OW), bm.T)
        for n in range(N):
            for j in range(hi - lo):
                for c in range(C):
                    for iw in range(W):
                        gx4[n, c, lo + j, iw] += ga[n, j * CW + c * W + iw]


@njit(**_OPTS)
def conv2d_weight_grad_dense(gw, x, g, N, C, H, W, O, kh, kw, dh, dw, pt, pl, sh, sw, OH, OW):
    """:func:`conv2d_weight_grad` (groups 1) of dense ``x`` and ``g``: the gradient of each
    B_oh, A_oh^T @ G_oh, summed over the positions each weight occupies."""
    CW = C * W
    kk = kh * kw
    x4 = x.reshape((N, C, H, W))
    g4 = g.reshape((N, O, OH, OW))
    gw[:] = 0
    for oh in range(OH):
        lo, hi = _band(oh, H, kh, dh, pt, sh)
        if hi == lo:
            continue
        db = np.dot(_band_rows(x4, N, C, W, lo, hi).T, _out_row(g4, N, O, oh, OW))
        for ki in range(kh):
            ih = oh * sh - pt + ki * dh
            if ih < lo or ih >= hi:
                continue
            for ow in range(OW):
                for kj in range(kw):
                    iw = ow * sw - pl + kj * dw
                    if iw < 0 or iw >= W:
                        continue
                    for c in range(C):
                        row = db[(ih - lo) * CW + c * W + iw]
                        for o in range(O):
                            gw[(o * C + c) * kk + ki * kw + kj] += row[o * OW + ow]


# -- 3x3 stride-1 convolutions: Winograd F(2x2, 3x3) --------------------------------------------
# Each 2x2 block of outputs is computed from a 4x4 tile of the (zero-padded) input with 16
# products per channel pair instead of 36: the tiles and the weights are transformed
# (V = B^T d B, U = G g G^T), multiplied elementwise over the 16 positions (16 BLAS products
# (O, C) @ (C, tiles), summing over channels), and transformed back (Y = A^T M A).  On the
# 32-channel layers of a CNN that halves the forward's time, and the input gradient (the same
# convolution of g with the flipped weights) likewise.  The transforms add and subtract only
# (and halve the weights), so float32 results stay within a few ulps of the direct sum.

#: elements of transformed tiles (16 * C * tiles) kept at once: a few hundred KB (in cache)
WINOGRAD_CHUNK = 1 << 17


@njit(inline="always")
def _wg(g0, g1, g2):
    """G @ (g0, g1, g2): the filter transform along one axis (in float64: it runs once per
    filter, and a uniform tuple can be indexed)."""
    return g0 * 1.0, (g0 + g1 + g2) * 0.5, (g0 - g1 + g2) * 0.5, g2 * 1.0


@njit(inline="always")
def _wb(d0, d1, d2, d3):
    """B^T @ (d0, d1, d2, d3): the tile transform along one axis."""
    return d0 - d2, d1 + d2, d2 - d1, d1 - d3


@njit(inline="always")
def _wa(m0, m1, m2, m3):
    """A^T @ (m0, m1, m2, m3): the output transform along one axis."""
    return m0 + m1 + m2, m1 - m2 - m3


@njit(**_OPTS)
def winograd_weights(w, O, C):
    """U (16, O, C): G g G^T of each 3x3 filter g = w[o, c] (``w`` dense (O, C, 3, 3))."""
    u = np.empty((16, O, C), dtype=w.dtype)
    for o in range(O):
        for c in range(C):
            b = (o * C + c) * 9
            # columns of G g, then each row of G g times G^T
            a = _wg(w[b], w[b + 3], w[b + 6])
            e = _wg(w[b + 1], w[b + 4], w[b + 7])
            f = _wg(w[b + 2], w[b + 5], w[b + 8])
            for r in range(4):
                q = _wg(a[r], e[r], f[r])
                for j in range(4):
                    u[4 * r + j, o, c] = q[j]
    return u


@njit(inline="always")
def _winograd_tiles(vf, vb, x4, n, c, H, W, pt, pl, TH, TW, pe, po, hr):
    """V = B^T d B of every 4x4 tile of plane (n, c) of ``x4`` zero-padded by ``pt`` rows and
    ``pl`` columns: value k of tile t goes to ``vf[k, vb + t]``.  Loops index arrays by
    non-negative loop expressions, never slices (a slice per short row costs more than the
    row), so that they vectorise."""
    Hp = 2 * TH + 2
    TW1 = TW + 1
    c0 = max(0, -pl)  # the input columns [c0, c1) lie inside the padded row
    c1 = min(W, 2 * TW1 - pl)
    # the padded plane's even and odd columns: every load below is contiguous along a row of
    # tiles
    pe[:] = 0
    po[:] = 0
    j0 = c0 + (c0 + pl) % 2  # the first input column landing in an even column
    j1 = c0 + 1 - (c0 + pl) % 2  # ... in an odd one
    d0 = (j0 + pl) // 2
    d1 = (j1 + pl) // 2
    ne = max(0, (c1 - j0 + 1) // 2)
    no = max(0, (c1 - j1 + 1) // 2)
    for r in range(max(0, pt), min(Hp, H + pt)):
        ir = r - pt
        for q in range(ne):
            pe[r, d0 + q] = x4[n, c, ir, j0 + 2 * q]
        for q in range(no):
            po[r, d1 + q] = x4[n, c, ir, j1 + 2 * q]
    # along the rows: (d0 - d2, d1 + d2, d2 - d1, d1 - d3) of each tile's columns.  One
    # output array per loop: with more, LLVM gives up proving that they do not overlap and
    # the loop stays scalar
    for r in range(Hp):
        e = pe[r]
        od = po[r]
        h = hr[0, r]
        for tw in range(TW):
            h[tw] = e[tw] - e[tw + 1]
        h = hr[1, r]
        for tw in range(TW):
            h[tw] = od[tw] + e[tw + 1]
        h = hr[2, r]
        for tw in range(TW):
            h[tw] = e[tw + 1] - od[tw]
        h = hr[3, r]
        for tw in range(TW):
            h[tw] = od[tw] - od[tw + 1]
    # down the columns: the same combination of each tile's four rows
    for nu in range(4):
        for th in range(TH):
            r = 2 * th
            t = vb + th * TW
            a = hr[nu, r]
            b = hr[nu, r + 1]
            cc = hr[nu, r + 2]
            d = hr[nu, r + 3]
            v = vf[nu, t : t + TW]
            for tw in range(TW):
                v[tw] = a[tw] - cc[tw]
            v = vf[4 + nu, t : t + TW]
            for tw in range(TW):
                v[tw] = b[tw] + cc[tw]
            v = vf[8 + nu, t : t + TW]
            for tw in range(TW):
                v[tw] = cc[tw] - b[tw]
            v = vf[12 + nu, t : t + TW]
            for tw in range(TW):
                v[tw] = b[tw] - d[tw]


@njit(inline="always")
def _winograd_buffers(dtype, C, K, mT):
    # the 16 planes of transformed tiles (and of products) lie 64 elements further apart than
    # their size: at a power-of-two distance the 16 streams that the transforms write (read)
    # at once fall into the same cache sets (measured: 3-4x slower)
    vf = np.empty((16, C * mT + 64), dtype=dtype)
    mf = np.empty((16, K * mT + 64), dtype=dtype)
    return vf, mf


@njit(**_OPTS)
def conv2d_winograd(y, x, u, N, C, H, W, O, pt, pl, OH, OW, nb):
    """``y`` (N, O, OH, OW) = the convolution of dense ``x`` (N, C, H, W) with the 3x3
    filters whose transforms are ``u`` (:func:`winograd_weights`), stride 1, padding ``pt``
    rows on top and ``pl`` columns on the left (the bottom and right padding follow from OH,
    OW), ``nb`` images at a time."""
    dtype = y.dtype
    TH = (OH + 1) // 2
    TW = (OW + 1) // 2
    T = TH * TW
    x4 = x.reshape((N, C, H, W))
    y4 = y.reshape((N, O, OH, OW))
    pe = np.empty((2 * TH + 2, TW + 1), dtype=dtype)
    po = np.empty_like(pe)
    hr = np.empty((4, 2 * TH + 2, TW), dtype=dtype)
    sr = np.empty((2, 4, TW), dtype=dtype)
    for n0 in range(0, N, nb):
        m = min(N - n0, nb)
        mT = m * T
        vf, mf = _winograd_buffers(dtype, C, O, mT)
        for i in range(m):
            for c in range(C):
                _winograd_tiles(vf, c * mT + i * T, x4, n0 + i, c, H, W, pt, pl, TH, TW, pe, po, hr)
        for k in range(16):
            np.dot(u[k], vf[k, : C * mT].reshape((C, mT)), mf[k, : O * mT].reshape((O, mT)))
        # output transform Y = A^T M A, A^T = ((1, 1, 1, 0), (0, 1, -1, -1)): down the
        # columns into two rows, then along them
        for i in range(m):
            for o in range(O):
                for th in range(TH):
                    t = o * mT + i * T + th * TW
                    for nu in range(4):
                        m0 = mf[nu, t : t + TW]
                        m1 = mf[4 + nu, t : t + TW]
                        m2 = mf[8 + nu, t : t + TW]
                        m3 = mf[12 + nu, t : t + TW]
                        a = sr[0, nu]
                        for tw in range(TW):
                            a[tw] = m0[tw] + m1[tw] + m2[tw]
                        a = sr[1, nu]
                        for tw in range(TW):
                            a[tw] = m1[tw] - m2[tw] - m3[tw]
                    for h in range(min(2, OH - 2 * th)):
                        row = y4[n0 + i, o, 2 * th + h]
                        s0 = sr[h, 0]
                        s1 = sr[h, 1]
                        s2 = sr[h, 2]
                        s3 = sr[h, 3]
                        for tw in range(OW // 2):
                            row[2 * tw] = s0[tw] + s1[tw] + s2[tw]
                            row[2 * tw + 1] = s1[tw] - s2[tw] - s3[tw]
                        if OW % 2:
                            tw = TW - 1
                            row[2 * tw] = s0[tw] + s1[tw] + s2[tw]


@njit(**_OPTS)
def conv2d_winograd_weight_grad(gw, x, g, N, C, H, W, O, pt, pl, OH, OW, nb):
    """``gw`` (O, C, 3, 3): the weight gradient of :func:`conv2d_winograd` for the output
    gradient ``g`` (N, O, OH, OW): its adjoint in the filters, dU_k = sum over tiles of
    (A dY A^T)_k V_k^T (16 BLAS products with the tiles as the inner dimension), then
    G^T dU G per filter."""
    dtype = gw.dtype
    TH = (OH + 1) // 2
    TW = (OW + 1) // 2
    T = TH * TW
    x4 = x.reshape((N, C, H, W))
    g4 = g.reshape((N, O, OH, OW))
    pe = np.empty((2 * TH + 2, TW + 1), dtype=dtype)
    po = np.empty_like(pe)
    hr = np.empty((4, 2 * TH + 2, TW), dtype=dtype)
    z = np.zeros((2, 4, TW), dtype=dtype)
    du = np.zeros((16, O, C), dtype=dtype)
    for n0 in range(0, N, nb):
        m = min(N - n0, nb)
        mT = m * T
        vf, mf = _winograd_buffers(dtype, C, O, mT)
        for i in range(m):
            for c in range(C):
                _winograd_tiles(vf, c * mT + i * T, x4, n0 + i, c, H, W, pt, pl, TH, TW, pe, po, hr)
        # dM = A dY A^T of each tile's 2x2 output gradient (zero past the output's edge):
        # along the rows (y0, y0 + y1, y0 - y1, -y1), then the same down the columns
        for i in range(m):
            for o in range(O):
                for th in range(TH):
                    t = o * mT + i * T + th * TW
                    for h in range(2):
                        oh = 2 * th + h
                        if oh >= OH:
                            z[h] = 0
                            continue
                        for tw in range(OW // 2):
                            y0 = g4[n0 + i, o, oh, 2 * tw]
                            y1 = g4[n0 + i, o, oh, 2 * tw + 1]
                            z[h, 0, tw] = y0
                            z[h, 1, tw] = y0 + y1
                            z[h, 2, tw] = y0 - y1
                            z[h, 3, tw] = -y1
                        if OW % 2:
                            tw = TW - 1
                            y0 = g4[n0 + i, o, oh, 2 * tw]
                            z[h, 0, tw] = y0
                            z[h, 1, tw] = y0
                            z[h, 2, tw] = y0
                            z[h, 3, tw] = 0
                    for nu in range(4):
                        a = z[0, nu]
                        b = z[1, nu]
                        v = mf[nu, t : t + TW]
                        for tw in range(TW):
                            v[tw] = a[tw]
                        v = mf[4 + nu, t : t + TW]
                        for tw in range(TW):
                            v[tw] = a[tw] + b[tw]
                        v = mf[8 + nu, t : t + TW]
                        for tw in range(TW):
                            v[tw] = a[tw] - b[tw]
                        v = mf[12 + nu, t : t + TW]
                        for tw in range(TW):
                            v[tw] = -b[tw]
        for k in range(16):
            vk = vf[k, : C * mT].reshape((C, mT))
            du[k] += np.dot(mf[k, : O * mT].reshape((O, mT)), vk.T)
    # gw = G^T dU G, G^T = ((1, 1/2, 1/2, 0), (0, 1/2, -1/2, 0), (0, 1/2, 1/2, 1))
    gw4 = gw.reshape((O, C, 3, 3))
    e = np.empty((4, 3), dtype=np.float64)
    for o in range(O):
        for c in range(C):
            for r in range(4):  # row r of dU G
                q0 = du[4 * r, o, c]
                q1 = du[4 * r + 1, o, c]
                q2 = du[4 * r + 2, o, c]
                q3 = du[4 * r + 3, o, c]
                e[r, 0] = q0 + 0.5 * (q1 + q2)
                e[r, 1] = 0.5 * (q1 - q2)
                e[r, 2] = 0.5 * (q1 + q2) + q3
            for j in range(3):
                gw4[o, c, 0, j] = e[0, j] + 0.5 * (e[1, j] + e[2, j])
                gw4[o, c, 1, j] = 0.5 * (e[1, j] - e[2, j])
                gw4[o, c, 2, j] = 0.5 * (e[1, j] + e[2, j]) + e[3, j]


@njit(**_OPTS)
def add_bias(y, b, N, O, L):
    """``y`` (N, O, L) += ``b`` (O,) per channel, in place."""
    y3 = y.reshape((N, O, L))
    for n in range(N):
        for o in range(O):
            bo = b[o]
            row = y3[n, o]
            for j in range(L):
                row[j] += bo
