"""CPU kernels of the convolution and pooling primitives (``strided._ops.nn_conv``).

The loops are in ``_kern_nn_conv.py`` (numba, imported on first use); they take C-contiguous
buffers starting at element 0, so an input that is not laid out that way is copied once here.
Outputs come fresh from the dispatcher (dense, offset 0).
"""

from __future__ import annotations

import numpy as np

from . import _blas_threads as _blas

_kern = None
#: work (elements touched) from which a kernel runs over planes in parallel: below it, waking
#: the thread pool costs more than it saves (and on a busy machine much more)
PARALLEL_WORK = 1 << 17


def _k():
    global _kern
    if _kern is None:
        from . import _kern_nn_conv

        _kern = _kern_nn_conv
    return _kern


def _dense(a) -> np.ndarray:
    """``a``'s elements as a C-ordered 1-D buffer: a slice of its buffer when it is contiguous,
    else a copy."""
    size = 1
    for n in a._shape:
        size *= n
    if a.is_contiguous():
        return a._buf[a._offset : a._offset + size]
    isz = a._buf.itemsize
    view = np.lib.stride_tricks.as_strided(
        a._buf[a._offset :], shape=a._shape, strides=tuple(s * isz for s in a._strides)
    )
    return np.ascontiguousarray(view).reshape(-1)


def _strides_or_zero(a) -> tuple:
    """``a``'s strides, 0 on dimensions of size 1 (never stepped along)."""
    return tuple(0 if n == 1 else st for n, st in zip(a._shape, a._strides))


def _planes(x):
    """(buffer from x's first element, stride of n, stride of c) with dense (H, W) planes; a
    copy when x's planes are not dense or a stride is negative."""
    sn, sc, sh, sw = _strides_or_zero(x)
    _, _, h, w = x._shape
    # (a broadcast row or plane, stride 0 over more than one element, is not dense)
    if (w == 1 or sw == 1) and (h == 1 or sh == w) and sn >= 0 and sc >= 0:
        return x._buf[x._offset :], sn, sc
    _, c, h, w = x._shape
    return _dense(x), c * h * w, h * w


def _rows(cols):
    """(buffer from the first element, stride of n, stride of the row) of columns (N, K, L)
    whose rows are dense; a copy otherwise."""
    sn, sr, sl = _strides_or_zero(cols)
    if (cols._shape[2] == 1 or sl == 1) and sn >= 0 and sr >= 0:
        return cols._buf[cols._offset :], sn, sr
    _, k, length = cols._shape
    return _dense(cols), k * length, length


def im2col_cpu(out, x, *, kernel_size, dilation, padding, stride, channels_first, out_hw):
    n, c, h, w = x._shape
    if out._buf.size == 0:
        return
    (kh, kw), (dh, dw), (pt, _, pl, _), (sh, sw), (oh, ow) = (
        kernel_size, dilation, padding, stride, out_hw
    )  # fmt: skip
    length = oh * ow
    # out is (K, N, L) when channels_first (the layout a convolution multiplies in one GEMM)
    osn, osr = (length, n * length) if channels_first else (c * kh * kw * length, length)
    buf, xsn, xsc = _planes(x)
    kern = _k().im2col_p if out._buf.size >= PARALLEL_WORK else _k().im2col_s
    kern(out._buf, osn, osr, buf, xsn, xsc, n, c, h, w, kh, kw, dh, dw, pt, pl, sh, sw, oh, ow)


def col2im_cpu(out, cols, *, output_size, kernel_size, dilation, padding, stride, out_hw):
    n, c, h, w = out._shape
    if out._buf.size == 0:
        return
    (kh, kw), (dh, dw), (pt, _, pl, _), (sh, sw), (oh, ow) = (
        kernel_size, dilation, padding, stride, out_hw
    )  # fmt: skip
    buf, csn, csr = _rows(cols)
    kern = _k().col2im_p if cols.size >= PARALLEL_WORK else _k().col2im_s
    kern(out._buf, buf, csn, csr, n, c, h, w, kh, kw, dh, dw, pt, pl, sh, sw, oh, ow)


def max_pool2d_cpu(outs, x, *, kernel_size, stride, padding, dilation, out_hw):
    values, indices = outs
    n, c, h, w = x._shape
    if values._buf.size == 0:
        return
    (kh, kw), (sh, sw), (ph, pw), (dh, dw), (oh, ow) = (
        kernel_size, stride, padding, dilation, out_hw
    )  # fmt: skip
    work = x.size + values._buf.size * (kh * kw - 1)
    parallel = work >= PARALLEL_WORK
    if (
        kh == 2 and kw == 2 and dh == 1 and dw == 1 and ph == 0 and pw == 0
        and (oh - 1) * sh + 2 <= h and (ow - 1) * sw + 2 <= w
    ):  # fmt: skip
        kern = _k().max_pool2d_2x2_p if parallel else _k().max_pool2d_2x2_s
        kern(values._buf, indices._buf, _dense(x), n * c, h, w, sh, sw, oh, ow)
        return
    kern = _k().max_pool2d_p if parallel else _k().max_pool2d_s
    kern(values._buf, indices._buf, _dense(x), n * c, h, w, kh, kw, sh, sw, ph, pw, dh, dw, oh, ow)


def max_pool2d_backward_cpu(out, g, indices, *, input_hw):
    n, c, h, w = out._shape
    if out._buf.size == 0:
        return
    length = g._shape[2] * g._shape[3]
    kern = (
        _k().max_pool2d_backward_p
        if out._buf.size >= PARALLEL_WORK
        else (_k().max_pool2d_backward_s)
    )
    kern(out._buf, _dense(g), _dense(indices), n * c, h * w, length)


def avg_pool2d_cpu(
    out, x, *, kernel_size, stride, padding, count_include_pad, divisor_override, out_hw
):
    n, c, h, w = x._shape
    if out._buf.size == 0:
        return
    (kh, kw), (sh, sw), (ph, pw), (oh, ow) = kernel_size, stride, padding, out_hw
    work = x.size + out._buf.size * (kh * kw - 1)
    kern = _k().avg_pool2d_p if work >= PARALLEL_WORK else _k().avg_pool2d_s
    kern(
        out._buf, _dense(x), n * c, h, w, kh, kw, sh, sw, ph, pw, oh, ow,
        count_include_pad, divisor_override,
    )  # fmt: skip


def avg_pool2d_backward_cpu(
    out, g, *, input_hw, kernel_size, stride, padding, count_include_pad, divisor_override, out_hw
):
    n, c, h, w = out._shape
    if out._buf.size == 0:
        return
    (kh, kw), (sh, sw), (ph, pw), (oh, ow) = kernel_size, stride, padding, out_hw
    work = out._buf.size + g.size * kh * kw
    kern = _k().avg_pool2d_backward_p if work >= PARALLEL_WORK else _k().avg_pool2d_backward_s
    kern(
        out._buf, _dense(g), n * c, h, w, kh, kw, sh, sw, ph, pw, oh, ow,
        count_include_pad, divisor_override,
    )  # fmt: skip


#: elements of columns (C/G*kh*kw x images*L) a fused convolution multiplies at once: a few
#: hundred KB, so that they stay in cache between im2col and BLAS
CONV_CHUNK = 1 << 17


#: multiply-adds of a convolution from which its kernels run over chunks of images in parallel
#: (when numba has more than one thread)
PARALLEL_CONV = 1 << 24


def _chunk(n, c, g, kernel, out_hw) -> int:
    per_image = (c // g) * kernel[0] * kernel[1] * out_hw[0] * out_hw[1]
    return max(1, min(n, CONV_CHUNK // max(per_image, 1)))


def _conv_kernel(name: str, n, c, o, g, kernel, out_hw):
    """The serial kernel ``name`` or its parallel twin for a convolution this large."""
    k = _k()
    macs = n * (c // g) * o * kernel[0] * kernel[1] * out_hw[0] * out_hw[1]
    if macs >= PARALLEL_CONV:
        import numba

        if numba.get_num_threads() > 1:
            return getattr(k, name + "_p")
    return getattr(k, name)


#: largest matrix (elements) of one output row the tiny-image path builds
DENSE_CONV_MAX = 1 << 20


def _dense_conv(c, h, wd, o, groups, kernel, dilation, out_hw) -> bool:
    """Whether a convolution runs with the matrices of its output rows (``*_dense`` kernels):
    groups 1 and images so small that these cost at most 3x im2col's multiply-adds (each
    output reads its band of at most (kh-1)*dh + 1 rows whole, W columns instead of kw), which
    they repay by skipping im2col, chunking and the output shuffle: 4x4 and 8x8 maps under a
    3x3 kernel, not 16x16; and matrices of a modest size."""
    band = min(h, (kernel[0] - 1) * dilation[0] + 1)
    return (
        groups == 1
        and band * wd <= 3 * kernel[0] * kernel[1]
        and band * c * wd * o * out_hw[1] <= DENSE_CONV_MAX
    )


#: channels (in and out) from which a 3x3 stride-1 convolution runs as Winograd F(2x2, 3x3):
#: with fewer, its 16 small products and the transforms cost more than they save
WINOGRAD_CHANNELS = 16


def _winograd(n, c, o, groups, kernel, stride, dilation, out_hw) -> bool:
    """Whether a convolution runs as Winograd F(2x2, 3x3) (serial: the parallel kernels run
    their own loops)."""
    if not (
        groups == 1 and kernel == (3, 3) and stride == (1, 1) and dilation == (1, 1)
        and min(c, o) >= WINOGRAD_CHANNELS and min(out_hw) >= 4
    ):  # fmt: skip
        return False
    macs = n * c * o * 9 * out_hw[0] * out_hw[1]
    if macs >= PARALLEL_CONV:
        import numba

        return numba.get_num_threads() == 1
    return True


def _run_winograd(y, x, w, n, c, h, wd, o, pt, pl, oh, ow):
    k = _k()
    tiles = ((oh + 1) // 2) * ((ow + 1) // 2)
    nb = max(1, min(n, k.WINOGRAD_CHUNK // (16 * max(c, o) * tiles)))
    u = k.winograd_weights(w, o, c)
    k.conv2d_winograd(y, x, u, n, c, h, wd, o, pt, pl, oh, ow, nb)


def conv2d_cpu(out, x, w, b=None, *, stride, padding, dilation, groups, out_hw):
    saved = _blas.one_thread()  # see _blas_threads: products inside kernels use one thread
    try:
        _conv2d_nobias(out, x, w, stride, padding, dilation, groups, out_hw)
    finally:
        _blas.restore(saved)
    if b is not None and out._buf.size:
        # the bias per output channel, added in place (one pass over the output)
        n, o = out._shape[:2]
        _k().add_bias(out._buf, _dense(b), n, o, out._buf.size // max(n * o, 1))


def _conv2d_nobias(out, x, w, stride, padding, dilation, groups, out_hw):
    n, c, h, wd = x._shape
    if out._buf.size == 0 or x.size == 0:
        if out._buf.size:
            out._buf[:] = 0
        return
    o, _, kh, kw = w._shape
    (sh, sw), (pt, _, pl, _), (dh, dw), (oh, ow) = stride, padding, dilation, out_hw
    if _dense_conv(c, h, wd, o, groups, (kh, kw), dilation, out_hw):
        _k().conv2d_forward_dense(
            out._buf, _dense(x), _dense(w), n, c, h, wd, o, kh, kw, dh, dw, pt, pl, sh, sw,
            oh, ow,
        )  # fmt: skip
        return
    if _winograd(n, c, o, groups, (kh, kw), stride, dilation, out_hw):
        _run_winograd(out._buf, _dense(x), _dense(w), n, c, h, wd, o, pt, pl, oh, ow)
        return
    buf, xsn, xsc = _planes(x)
    nb = _chunk(n, c, groups, (kh, kw), out_hw)
    _conv_kernel("conv2d_forward", n, c, o, groups, (kh, kw), out_hw)(
        out._buf, buf, xsn, xsc, _dense(w), n, c, h, wd, o, groups, kh, kw, dh, dw, pt, pl, sh,
        sw, oh, ow, nb,
    )  # fmt: skip


def conv2d_input_grad_cpu(out, g, w, *, input_hw, stride, padding, dilation, groups, out_hw=None):
    saved = _blas.one_thread()
    try:
        _conv2d_input_grad(out, g, w, input_hw, stride, padding, dilation, groups)
    finally:
        _blas.restore(saved)


def _conv2d_input_grad(out, g, w, input_hw, stride, padding, dilation, groups):
    n, c, h, wd = out._shape
    if out._buf.size == 0:
        return
    o, _, kh, kw = w._shape
    oh, ow = g._shape[2:]
    if g.size == 0 or w.size == 0:
        out._buf[:] = 0
        return
    (sh, sw), (pt, _, pl, _), (dh, dw) = stride, padding, dilation
    if _dense_conv(c, h, wd, o, groups, (kh, kw), dilation, (oh, ow)):
        _k().conv2d_input_grad_dense(
            out._buf, _dense(g), _dense(w), n, c, h, wd, o, kh, kw, dh, dw, pt, pl, sh, sw,
            oh, ow,
        )  # fmt: skip
        return
    if max(padding) <= 2 and _winograd(n, o, c, groups, (kh, kw), stride, dilation, (h, wd)):
        # stride 1: the input gradient is the convolution of g with the flipped filters,
        # (C, O, 3, 3), padded by 2 - the forward's padding
        wf = np.ascontiguousarray(
            _dense(w).reshape(o, c, 3, 3)[:, :, ::-1, ::-1].transpose(1, 0, 2, 3)
        )
        _run_winograd(out._buf, _dense(g), wf.reshape(-1), n, o, oh, ow, c, 2 - pt, 2 - pl, h, wd)
        return
    nb = _chunk(n, c, groups, (kh, kw), (oh, ow))
    _conv_kernel("conv2d_input_grad", n, c, o, groups, (kh, kw), (oh, ow))(
        out._buf, _dense(g), _dense(w), n, c, h, wd, o, groups, kh, kw, dh, dw, pt, pl, sh, sw,
        oh, ow, nb,
    )  # fmt: skip


def conv2d_weight_grad_cpu(out, x, g, *, kernel_size, stride, padding, dilation, groups):
    saved = _blas.one_thread()
    try:
        _conv2d_weight_grad(out, x, g, kernel_size, stride, padding, dilation, groups)
    finally:
        _blas.restore(saved)


def _conv2d_weight_grad(out, x, g, kernel_size, stride, padding, dilation, groups):
    n, c, h, wd = x._shape
    if out._buf.size == 0:
        return
    o = g._shape[1]
    kh, kw = kernel_size
    oh, ow = g._shape[2:]
    if x.size == 0 or g.size == 0:
        out._buf[:] = 0
        return
    (sh, sw), (pt, _, pl, _), (dh, dw) = stride, padding, dilation
    if _dense_conv(c, h, wd, o, groups, (kh, kw), dilation, (oh, ow)):
        _k().conv2d_weight_grad_dense(
            out._buf, _dense(x), _dense(g), n, c, h, wd, o, kh, kw, dh, dw, pt, pl, sh, sw,
            oh, ow,
        )  # fmt: skip
        return
    if _winograd(n, c, o, groups, (kh, kw), stride, dilation, (oh, ow)):
        k = _k()
        nb = max(
            1, min(n, k.WINOGRAD_CHUNK // (16 * max(c, o) * ((oh + 1) // 2) * ((ow + 1) // 2)))
        )
        k.conv2d_winograd_weight_grad(
            out._buf, _dense(x), _dense(g), n, c, h, wd, o, pt, pl, oh, ow, nb
        )
        return
    buf, xsn, xsc = _planes(x)
    nb = _chunk(n, c, groups, (kh, kw), (oh, ow))
    _conv_kernel("conv2d_weight_grad", n, c, o, groups, (kh, kw), (oh, ow))(
        out._buf, buf, xsn, xsc, _dense(g), n, c, h, wd, o, groups, kh, kw, dh, dw, pt, pl, sh,
        sw, oh, ow, nb,
    )  # fmt: skip


KERNELS = {
    "conv2d": conv2d_cpu,
    "conv2d_input_grad": conv2d_input_grad_cpu,
    "conv2d_weight_grad": conv2d_weight_grad_cpu,
    "im2col": im2col_cpu,
    "col2im": col2im_cpu,
    "max_pool2d": max_pool2d_cpu,
    "max_pool2d_backward": max_pool2d_backward_cpu,
    "avg_pool2d": avg_pool2d_cpu,
    "avg_pool2d_backward": avg_pool2d_backward_cpu,
}
