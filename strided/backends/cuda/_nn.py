"""cuda kernels of the convolution and pooling primitives (``strided._ops.nn_conv``).

The CUDA C is in ``kernels/nn.cu``: im2col/col2im and max/average pooling with their backward
passes.  A convolution is im2col and one batched matrix product over (image, group) through the
backend's matmul (cuBLAS on a GPU, the tiled kernel on host execution), plus the bias; its input
gradient is the transposed product and col2im; its weight gradient one product per group over
all images at once, on columns laid out channels-first (C*kh*kw, N*L) so no sum over images is
left.  The signatures are the cpu kernels' (``backends/cpu/_nn_conv.py``); outputs are fresh and
dense, inputs may have any strides.
"""

from __future__ import annotations

import numpy as np

from ..._array import Array
from . import _sources
from ._runtime import runtime


def _launch(name: str, dtype, total: int, args: tuple) -> None:
    from . import BLOCK, _function, _grid

    if total:
        fn = _function(_sources.nn(), f"{name}<{_sources.CTYPE[dtype.name]}>")
        fn((_grid(total),), (BLOCK,), args)


def _start(a):
    """``a``'s buffer from its first element (a view: kernels index from 0)."""
    return a._buf[a._offset :] if a._offset else a._buf


def _dense(a):
    """A buffer holding ``a``'s elements in C order from element 0 (a copy unless they are)."""
    from . import _c_strides, _dense_copy

    if a._strides == _c_strides(a._shape) or a.size <= 1:
        return _start(a)
    return _dense_copy(a, list(range(len(a._shape))))


def _view(buf, shape, strides, offset, like) -> Array:
    return Array._new(buf, tuple(shape), tuple(strides), offset, like._dtype, like._device)


def _fresh(shape, like) -> Array:
    from . import _c_strides

    size = 1
    for n in shape:
        size *= n
    return _view(runtime().empty(size, like._dtype.numpy), shape, _c_strides(shape), 0, like)


# -- im2col / col2im ------------------------------------------------------------------------------
def _im2col_into(out_buf, x, kernel_size, dilation, padding, stride, channels_first, out_hw):
    n, c, h, w = x._shape
    (kh, kw), (dh, dw), (pt, _, pl, _), (sh, sw), (oh, ow) = (
        kernel_size, dilation, padding, stride, out_hw
    )  # fmt: skip
    total = n * c * kh * kw * oh * ow
    _launch("im2col", x._dtype, total, (out_buf, x._buf, x._offset, *x._strides, n, c, h, w, kh,
            kw, dh, dw, pt, pl, sh, sw, oh, ow, np.bool_(channels_first)))  # fmt: skip


def im2col_cuda(out, x, *, kernel_size, dilation, padding, stride, channels_first, out_hw):
    _im2col_into(out._buf, x, kernel_size, dilation, padding, stride, channels_first, out_hw)


def _col2im_into(out, cols, kernel_size, dilation, padding, stride, out_hw):
    n, c, h, w = out._shape
    (kh, kw), (dh, dw), (pt, _, pl, _), (sh, sw), (oh, ow) = (
        kernel_size, dilation, padding, stride, out_hw
    )  # fmt: skip
    _launch("col2im", out._dtype, n * c * h * w, (out._buf, cols._buf, cols._offset,
            *cols._strides, n, c, h, w, kh, kw, dh, dw, pt, pl, sh, sw, oh, ow))  # fmt: skip


def col2im_cuda(out, cols, *, output_size, kernel_size, dilation, padding, stride, out_hw):
    _col2im_into(out, cols, kernel_size, dilation, padding, stride, out_hw)


# -- pooling --------------------------------------------------------------------------------------
def max_pool2d_cuda(outs, x, *, kernel_size, stride, padding, dilation, out_hw):
    values, indices = outs
    n, c, h, w = x._shape
    (kh, kw), (sh, sw), (ph, pw), (dh, dw), (oh, ow) = (
        kernel_size, stride, padding, dilation, out_hw
    )  # fmt: skip
    _launch("max_pool", x._dtype, n * c * oh * ow, (values._buf, indices._buf, _dense(x), n * c,
            h, w, kh, kw, sh, sw, ph, pw, dh, dw, oh, ow))  # fmt: skip


def max_pool2d_backward_cuda(out, g, indices, *, input_hw):
    n, c, h, w = out._shape
    length = g._shape[2] * g._shape[3]
    _launch("max_pool_backward", out._dtype, n * c,
            (out._buf, _dense(g), _dense(indices), n * c, h * w, length))  # fmt: skip


def avg_pool2d_cuda(
    out, x, *, kernel_size, stride, padding, count_include_pad, divisor_override, out_hw
):
    n, c, h, w = x._shape
    (kh, kw), (sh, sw), (ph, pw), (oh, ow) = kernel_size, stride, padding, out_hw
    _launch("avg_pool", x._dtype, n * c * oh * ow, (out._buf, _dense(x), n * c, h, w, kh, kw, sh,
            sw, ph, pw, oh, ow, np.bool_(count_include_pad), divisor_override))  # fmt: skip


def avg_pool2d_backward_cuda(
    out, g, *, input_hw, kernel_size, stride, padding, count_include_pad, divisor_override, out_hw
):
    n, c, h, w = out._shape
    (kh, kw), (sh, sw), (ph, pw), (oh, ow) = kernel_size, stride, padding, out_hw
    _launch("avg_pool_backward", out._dtype, n * c * h * w, (out._buf, _dense(g), n * c, h, w, kh,
            kw, sh, sw, ph, pw, oh, ow, np.bool_(count_include_pad), divisor_override))  # fmt: skip


# -- convolution ----------------------------------------------------------------------------------
def _matmul(out, a, b, batch_shape) -> None:
    from . import matmul_cuda

    matmul_cuda(out, a, b, batch_shape=batch_shape)


def _geometry(x_shape, w_shape, groups):
    n, c = x_shape[:2]
    o, cg, kh, kw = w_shape
    return n, c, o, cg, kh, kw, groups, o // groups, cg * kh * kw


def conv2d_cuda(out, x, w, b=None, *, stride, padding, dilation, groups, out_hw):
    n, c, o, cg, kh, kw, g, og, kg = _geometry(x._shape, w._shape, groups)
    length = out_hw[0] * out_hw[1]
    if not out.size:
        return
    cols = _fresh((n, c * kh * kw, length), x)
    _im2col_into(cols._buf, x, (kh, kw), dilation, padding, stride, False, out_hw)
    wd = _dense(w)
    # out[n, g] (og, L) = W[g] (og, kg) @ cols[n, g] (kg, L), over batches (n, g)
    lhs = _view(wd, (1, g, og, kg), (0, og * kg, kg, 1), 0, w)
    rhs = _view(cols._buf, (n, g, kg, length), (g * kg * length, kg * length, length, 1), 0, x)
    res = _view(out._buf, (n, g, og, length), (o * length, og * length, length, 1), 0, out)
    _matmul(res, lhs, rhs, (n, g))
    if b is not None:  # out += bias per output channel (the map kernel runs in place)
        from . import kernel_for

        bias = _view(b._buf, (o, 1, 1), (b._strides[0], 0, 0), b._offset, b)
        kernel_for("add", "binary")(out, out, bias)


def conv2d_input_grad_cuda(out, gr, w, *, input_hw, stride, padding, dilation, groups, out_hw=None):
    n = gr._shape[0]
    o, cg, kh, kw = w._shape
    g, og, kg = groups, o // groups, cg * kh * kw
    c = cg * g
    oh, ow = gr._shape[2:]
    length = oh * ow
    if not out.size:
        return
    if not length:  # nothing reaches the input
        from . import fill_cuda

        fill_cuda(out, 0)
        return
    wd, gd = _dense(w), _dense(gr)
    # cols[n, g] (kg, L) = W[g]^T (kg, og) @ grad[n, g] (og, L)
    lhs = _view(wd, (1, g, kg, og), (0, og * kg, 1, kg), 0, w)
    rhs = _view(gd, (n, g, og, length), (o * length, og * length, length, 1), 0, gr)
    cols = _fresh((n, g, kg, length), gr)
    _matmul(cols, lhs, rhs, (n, g))
    cols3 = _view(cols._buf, (n, c * kh * kw, length), (c * kh * kw * length, length, 1), 0, gr)
    _col2im_into(out, cols3, (kh, kw), dilation, padding, stride, (oh, ow))


def conv2d_weight_grad_cuda(out, x, gr, *, kernel_size, stride, padding, dilation, groups):
    n, c = x._shape[:2]
    o = gr._shape[1]
    kh, kw = kernel_size
    g, og, cg = groups, o // groups, c // groups
    kg = cg * kh * kw
    oh, ow = gr._shape[2:]
    nl = n * oh * ow
    if not out.size:
        return
    if not nl:  # no output positions: a zero gradient
        from . import fill_cuda

        fill_cuda(out, 0)
        return
    from . import _dense_copy

    # columns channels-first (C*kh*kw, N*L) and the gradient as (O, N*L): one product per group
    # sums over every image and position at once
    cols = _fresh((c * kh * kw, n, oh * ow), x)
    _im2col_into(cols._buf, x, (kh, kw), dilation, padding, stride, True, (oh, ow))
    g_t = _dense_copy(gr, [1, 0, 2, 3])  # (O, N, OH, OW)
    # dW[g] (og, kg) = grad_t[g] (og, NL) @ cols[g]^T (NL, kg)
    lhs = _view(g_t, (g, og, nl), (og * nl, nl, 1), 0, gr)
    rhs = _view(cols._buf, (g, nl, kg), (kg * nl, 1, nl), 0, x)
    res = _view(out._buf, (g, og, kg), (og * kg, kg, 1), 0, out)
    _matmul(res, lhs, rhs, (g,))


KERNELS = {
    "im2col": im2col_cuda,
    "col2im": col2im_cuda,
    "max_pool2d": max_pool2d_cuda,
    "max_pool2d_backward": max_pool2d_backward_cuda,
    "avg_pool2d": avg_pool2d_cuda,
    "avg_pool2d_backward": avg_pool2d_backward_cuda,
    "conv2d": conv2d_cuda,
    "conv2d_input_grad": conv2d_input_grad_cuda,
    "conv2d_weight_grad": conv2d_weight_grad_cuda,
}
