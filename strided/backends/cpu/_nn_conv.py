"""CPU kernels of the convolution and pooling primitives (``strided._ops.nn_conv``).

The loops are in ``_kern_nn_conv.py`` (numba, imported on first use); they take C-contiguous
buffers starting at element 0, so an input that is not laid out that way is copied once here.
Outputs come fresh from the dispatcher (dense, offset 0).
"""

from __future__ import annotations

import numpy as np

_kern = None


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


def im2col_cpu(out, x, *, kernel_size, dilation, padding, stride, out_hw):
    n, c, h, w = x._shape
    if out._buf.size == 0:
        return
    (kh, kw), (dh, dw), (pt, _, pl, _), (sh, sw), (oh, ow) = (
        kernel_size, dilation, padding, stride, out_hw
    )  # fmt: skip
    _k().im2col(out._buf, _dense(x), n * c, h, w, kh, kw, dh, dw, pt, pl, sh, sw, oh, ow)


def col2im_cpu(out, cols, *, output_size, kernel_size, dilation, padding, stride, out_hw):
    n, c, h, w = out._shape
    if out._buf.size == 0:
        return
    (kh, kw), (dh, dw), (pt, _, pl, _), (sh, sw), (oh, ow) = (
        kernel_size, dilation, padding, stride, out_hw
    )  # fmt: skip
    _k().col2im(out._buf, _dense(cols), n * c, h, w, kh, kw, dh, dw, pt, pl, sh, sw, oh, ow)


def max_pool2d_cpu(outs, x, *, kernel_size, stride, padding, dilation, out_hw):
    values, indices = outs
    n, c, h, w = x._shape
    if values._buf.size == 0:
        return
    (kh, kw), (sh, sw), (ph, pw), (dh, dw), (oh, ow) = (
        kernel_size, stride, padding, dilation, out_hw
    )  # fmt: skip
    _k().max_pool2d(
        values._buf, indices._buf, _dense(x), n * c, h, w, kh, kw, sh, sw, ph, pw, dh, dw, oh, ow
    )


def max_pool2d_backward_cpu(out, g, indices, *, input_hw):
    n, c, h, w = out._shape
    if out._buf.size == 0:
        return
    length = g._shape[2] * g._shape[3]
    _k().max_pool2d_backward(out._buf, _dense(g), _dense(indices), n * c, h * w, length)


def avg_pool2d_cpu(
    out, x, *, kernel_size, stride, padding, count_include_pad, divisor_override, out_hw
):
    n, c, h, w = x._shape
    if out._buf.size == 0:
        return
    (kh, kw), (sh, sw), (ph, pw), (oh, ow) = kernel_size, stride, padding, out_hw
    _k().avg_pool2d(
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
    _k().avg_pool2d_backward(
        out._buf, _dense(g), n * c, h, w, kh, kw, sh, sw, ph, pw, oh, ow,
        count_include_pad, divisor_override,
    )  # fmt: skip


KERNELS = {
    "im2col": im2col_cpu,
    "col2im": col2im_cpu,
    "max_pool2d": max_pool2d_cpu,
    "max_pool2d_backward": max_pool2d_backward_cpu,
    "avg_pool2d": avg_pool2d_cpu,
    "avg_pool2d_backward": avg_pool2d_backward_cpu,
}
