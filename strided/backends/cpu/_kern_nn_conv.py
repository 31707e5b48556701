"""numba kernels of the convolution and pooling primitives (``strided._ops.nn_conv``).

Every kernel works on C-contiguous buffers that start at element 0 (the wrappers in
``_nn_conv.py`` slice or copy): an image batch is ``N*C`` planes of ``H*W`` elements, and the
work is split over planes with ``prange`` (no two planes write the same output element, so the
scatter-style kernels need no atomics).  Inside a plane, rows are sliced out of the buffer before
the inner loops so that numba indexes them from 0 (computed signed offsets into the whole buffer
keep the loops from vectorising).
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


@njit(parallel=True, **_OPTS)
def im2col(o, x, planes, H, W, kh, kw, dh, dw, pt, pl, sh, sw, OH, OW):
    """``o`` (N, C*kh*kw, OH*OW) from ``x`` (N, C, H, W): PyTorch's ``unfold`` layout, where
    padding reads as zeros."""
    L = OH * OW
    block = kh * kw * L
    for p in prange(planes):
        src = x[p * H * W : (p + 1) * H * W]
        dst = o[p * block : (p + 1) * block]
        for ki in range(kh):
            for kj in range(kw):
                offw = kj * dw - pl
                lo, hi = _valid_cols(offw, sw, W, OW)
                r0 = (ki * kw + kj) * L
                for oh in range(OH):
                    ih = oh * sh - pt + ki * dh
                    row = dst[r0 + oh * OW : r0 + (oh + 1) * OW]
                    if ih < 0 or ih >= H:
                        row[:] = 0
                        continue
                    line = src[ih * W : (ih + 1) * W]
                    for ow in range(lo):
                        row[ow] = 0
                    if sw == 1:
                        row[lo:hi] = line[lo + offw : hi + offw]
                    else:
                        for ow in range(lo, hi):
                            row[ow] = line[ow * sw + offw]
                    for ow in range(hi, OW):
                        row[ow] = 0


@njit(parallel=True, **_OPTS)
def col2im(o, c, planes, H, W, kh, kw, dh, dw, pt, pl, sh, sw, OH, OW):
    """The adjoint of :func:`im2col`: ``o`` (N, C, H, W) accumulates every column entry of ``c``
    (N, C*kh*kw, OH*OW) at the input position it was read from (padding is dropped)."""
    L = OH * OW
    block = kh * kw * L
    for p in prange(planes):
        dst = o[p * H * W : (p + 1) * H * W]
        dst[:] = 0
        src = c[p * block : (p + 1) * block]
        for ki in range(kh):
            for kj in range(kw):
                offw = kj * dw - pl
                lo, hi = _valid_cols(offw, sw, W, OW)
                r0 = (ki * kw + kj) * L
                for oh in range(OH):
                    ih = oh * sh - pt + ki * dh
                    if ih < 0 or ih >= H:
                        continue
                    row = src[r0 + oh * OW : r0 + (oh + 1) * OW]
                    line = dst[ih * W : (ih + 1) * W]
                    if sw == 1:
                        line[lo + offw : hi + offw] += row[lo:hi]
                    else:
                        for ow in range(lo, hi):
                            line[ow * sw + offw] += row[ow]


@njit(parallel=True, **_OPTS)
def max_pool2d(o, idx, x, planes, H, W, kh, kw, sh, sw, ph, pw, dh, dw, OH, OW):
    """Window maxima of each plane and their flat positions ``ih*W + iw`` in the plane
    (PyTorch's ``return_indices``); padding never wins, NaN always does (the last one)."""
    L = OH * OW
    for p in prange(planes):
        src = x[p * H * W : (p + 1) * H * W]
        out = o[p * L : (p + 1) * L]
        ind = idx[p * L : (p + 1) * L]
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
                    line = src[ih * W : (ih + 1) * W]
                    for iw in range(ws, we, dw):
                        v = line[iw]
                        if v > best or v != v:
                            best = v
                            at = ih * W + iw
                out[oh * OW + ow] = best
                ind[oh * OW + ow] = at


@njit(parallel=True, **_OPTS)
def max_pool2d_backward(o, g, idx, planes, HW, L):
    """``o`` (planes of ``HW``) accumulates each gradient entry at the position its maximum
    came from."""
    for p in prange(planes):
        dst = o[p * HW : (p + 1) * HW]
        dst[:] = 0
        gp = g[p * L : (p + 1) * L]
        ip = idx[p * L : (p + 1) * L]
        for j in range(L):
            dst[ip[j]] += gp[j]


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


@njit(parallel=True, **_OPTS)
def avg_pool2d(o, x, planes, H, W, kh, kw, sh, sw, ph, pw, OH, OW, count_include_pad, divisor):
    L = OH * OW
    for p in prange(planes):
        src = x[p * H * W : (p + 1) * H * W]
        out = o[p * L : (p + 1) * L]
        for oh in range(OH):
            for ow in range(OW):
                hs, he, ws, we, d = _avg_window(
                    oh, ow, H, W, kh, kw, sh, sw, ph, pw, count_include_pad, divisor
                )
                acc = 0.0  # float64 accumulation, also for float32 data
                if hs >= he or ws >= we:
                    out[oh * OW + ow] = 0
                    continue
                for ih in range(hs, he):
                    line = src[ih * W : (ih + 1) * W]
                    for iw in range(ws, we):
                        acc += line[iw]
                out[oh * OW + ow] = acc / d


@njit(parallel=True, **_OPTS)
def avg_pool2d_backward(
    o, g, planes, H, W, kh, kw, sh, sw, ph, pw, OH, OW, count_include_pad, divisor
):
    """The adjoint of :func:`avg_pool2d`: each window's gradient spread over the window."""
    L = OH * OW
    for p in prange(planes):
        dst = o[p * H * W : (p + 1) * H * W]
        dst[:] = 0
        gp = g[p * L : (p + 1) * L]
        for oh in range(OH):
            for ow in range(OW):
                hs, he, ws, we, d = _avg_window(
                    oh, ow, H, W, kh, kw, sh, sw, ph, pw, count_include_pad, divisor
                )
                if hs >= he or ws >= we:
                    continue
                v = gp[oh * OW + ow] / d
                for ih in range(hs, he):
                    line = dst[ih * W : (ih + 1) * W]
                    for iw in range(ws, we):
                        line[iw] += v
