"""numba kernels of the convolution and pooling primitives (``strided._ops.nn_conv``).

The kernels work on buffers that start at element 0 (the wrappers in ``_nn_conv.py`` slice or
copy): an image batch is ``N*C`` dense planes of ``H*W`` elements (im2col's planes, and the rows
of its columns, may lie anywhere in their buffers).  Each kernel is a per-plane body inlined
into two drivers: a serial loop (``*_s``) for small batches, and a ``prange`` over planes
(``*_p``) for large ones (no two planes write the same output element, so the scatter-style
kernels need no atomics).  Only the driver a call needs is compiled.

Rows of small images are 4-8 elements long, so per-row work (array slicing) would dominate:
indices are computed directly, and only long unit-stride rows are copied as slices (which
vectorise).
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

_OPTS = dict(cache=True, nogil=True, error_model="numpy")
_LONG_ROW = 16  # rows at least this long are copied as slices


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
def _im2col_plane(p, o, osn, osr, x, xsn, xsc, C, H, W, kh, kw, dh, dw, pt, pl, sh, sw, OH, OW):
    n = p // C
    c = p - n * C
    xb = n * xsn + c * xsc
    kk = kh * kw
    for ki in range(kh):
        for kj in range(kw):
            offw = kj * dw - pl
            lo, hi = _valid_cols(offw, sw, W, OW)
            base = n * osn + (c * kk + ki * kw + kj) * osr
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
                if sw == 1 and hi - lo >= _LONG_ROW:
                    o[r + lo : r + hi] = x[src + lo : src + hi]
                else:
                    for ow in range(lo, hi):
                        o[r + ow] = x[src + ow * sw]
                for ow in range(hi, OW):
                    o[r + ow] = 0


@njit(**_OPTS)
def im2col_s(o, osn, osr, x, xsn, xsc, N, C, H, W, kh, kw, dh, dw, pt, pl, sh, sw, OH, OW):
    """Columns of PyTorch's ``unfold``: entry (n, (c*kh + ki)*kw + kj, oh*OW + ow) of ``o``,
    at ``n*osn + row*osr + l``, is ``x[n, c, oh*sh - pt + ki*dh, ow*sw - pl + kj*dw]`` (zero in
    the padding).  Image (n, c) starts at ``n*xsn + c*xsc`` and is a dense (H, W) plane."""
    for p in range(N * C):
        _im2col_plane(p, o, osn, osr, x, xsn, xsc, C, H, W, kh, kw, dh, dw, pt, pl, sh, sw, OH, OW)


@njit(parallel=True, **_OPTS)
def im2col_p(o, osn, osr, x, xsn, xsc, N, C, H, W, kh, kw, dh, dw, pt, pl, sh, sw, OH, OW):
    """:func:`im2col_s` over planes in parallel."""
    for p in prange(N * C):
        _im2col_plane(p, o, osn, osr, x, xsn, xsc, C, H, W, kh, kw, dh, dw, pt, pl, sh, sw, OH, OW)


@njit(inline="always")
def _col2im_plane(p, o, c, csn, csr, C, H, W, kh, kw, dh, dw, pt, pl, sh, sw, OH, OW):
    n = p // C
    ch = p - n * C
    ob = p * H * W
    for i in range(H * W):
        o[ob + i] = 0
    kk = kh * kw
    for ki in range(kh):
        for kj in range(kw):
            offw = kj * dw - pl
            lo, hi = _valid_cols(offw, sw, W, OW)
            base = n * csn + (ch * kk + ki * kw + kj) * csr
            for oh in range(OH):
                ih = oh * sh - pt + ki * dh
                if ih < 0 or ih >= H:
                    continue
                r = base + oh * OW
                dst = ob + ih * W + offw
                if sw == 1 and hi - lo >= _LONG_ROW:
                    o[dst + lo : dst + hi] += c[r + lo : r + hi]
                else:
                    for ow in range(lo, hi):
                        o[dst + ow * sw] += c[r + ow]


@njit(**_OPTS)
def col2im_s(o, c, csn, csr, N, C, H, W, kh, kw, dh, dw, pt, pl, sh, sw, OH, OW):
    """The adjoint of :func:`im2col_s`: the dense images ``o`` (N, C, H, W) accumulate every
    column entry (at ``n*csn + row*csr + l`` in ``c``) at the position it was read from
    (entries read from the padding are dropped)."""
    for p in range(N * C):
        _col2im_plane(p, o, c, csn, csr, C, H, W, kh, kw, dh, dw, pt, pl, sh, sw, OH, OW)


@njit(parallel=True, **_OPTS)
def col2im_p(o, c, csn, csr, N, C, H, W, kh, kw, dh, dw, pt, pl, sh, sw, OH, OW):
    """:func:`col2im_s` over planes in parallel."""
    for p in prange(N * C):
        _col2im_plane(p, o, c, csn, csr, C, H, W, kh, kw, dh, dw, pt, pl, sh, sw, OH, OW)


# -- max pooling ---------------------------------------------------------------------------------
@njit(inline="always")
def _max_pool_plane(p, o, idx, x, H, W, kh, kw, sh, sw, ph, pw, dh, dw, OH, OW):
    xb = p * H * W
    ob = p * OH * OW
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
