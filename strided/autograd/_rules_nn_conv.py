"""Backward rules of the convolution and pooling primitives (``strided._ops.nn_conv``).

Each primitive's adjoint is another primitive of the set (im2col <-> col2im, average pooling and
its backward), and max pooling's backward scatters by the saved indices, whose own backward is a
gather; so these rules are differentiable again (``create_graph=True``) on every device.
"""

from __future__ import annotations

from .. import _namespace as _xp
from .._ops import nn_conv as _nc
from ._rules import attach, rule


@rule("im2col", inputs=False)
def _im2col(ctx, g):
    p = ctx.params
    hw = ctx.input_meta[0][0][2:]
    if p.get("channels_first"):
        g = _xp.permute_dims(g, (1, 0, 2))  # a view: col2im reads rows at any stride
    return (_nc.col2im(g, hw, p["kernel_size"], p["dilation"], p["padding"], p["stride"]),)


@rule("col2im", inputs=False)
def _col2im(ctx, g):
    p = ctx.params
    return (_nc.im2col(g, p["kernel_size"], p["dilation"], p["padding"], p["stride"]),)


@rule("max_pool2d", inputs=False, output=True)
def _max_pool2d(ctx, g, g_indices=None):
    if g is None:
        return (None,)
    indices = ctx.outputs[1]
    return (_nc.max_pool2d_backward(g, indices, ctx.input_meta[0][0][2:]),)


@rule("max_pool2d_backward", inputs=True)
def _max_pool2d_backward(ctx, g):
    # the gradient's gradient reads g at the positions the maxima came from
    xp = _xp
    _, indices = ctx.inputs
    n, c, oh, ow = indices.shape
    flat = xp.reshape(g, (n, c, g.shape[2] * g.shape[3]))
    picked = xp.take_along_axis(flat, xp.reshape(indices, (n, c, oh * ow)), axis=-1)
    return (xp.reshape(picked, (n, c, oh, ow)), None)


@rule("avg_pool2d", inputs=False)
def _avg_pool2d(ctx, g):
    return (_nc.avg_pool2d_backward(g, ctx.input_meta[0][0][2:], **ctx.params),)


@rule("avg_pool2d_backward", inputs=False)
def _avg_pool2d_backward(ctx, g):
    p = dict(ctx.params)
    del p["input_hw"]
    return (_nc.avg_pool2d(g, **p),)


def _conv_params(ctx) -> dict:
    p = ctx.params
    return {k: p[k] for k in ("stride", "padding", "dilation", "groups")}


@rule("conv2d", inputs=True)
def _conv2d(ctx, g):
    x, w = ctx.inputs[:2]
    p = _conv_params(ctx)
    gx = _nc.conv2d_input_grad(g, w, x.shape[2:], **p) if ctx.edges[0] is not None else None
    gw = _nc.conv2d_weight_grad(x, g, w.shape[2:], **p) if ctx.edges[1] is not None else None
    if len(ctx.inputs) == 2:
        return (gx, gw)
    # the bias's gradient: the output gradient summed over images and positions
    gb = _xp.sum(g, axis=(0, 2, 3)) if ctx.edges[2] is not None else None
    return (gx, gw, gb)


@rule("conv2d_input_grad", inputs=True)
def _conv2d_input_grad(ctx, u):
    # <u, input_grad(g, w)> = <conv2d(u, w), g>: linear in g and in w
    g, w = ctx.inputs
    p = _conv_params(ctx)
    dg = _nc.conv2d(u, w, **p) if ctx.edges[0] is not None else None
    dw = _nc.conv2d_weight_grad(u, g, w.shape[2:], **p) if ctx.edges[1] is not None else None
    return (dg, dw)


@rule("conv2d_weight_grad", inputs=True)
def _conv2d_weight_grad(ctx, u):
    # <u, weight_grad(x, g)> = <conv2d(x, u), g>
    x, g = ctx.inputs
    p = _conv_params(ctx)
    dx = _nc.conv2d_input_grad(g, u, x.shape[2:], **p) if ctx.edges[0] is not None else None
    dg = _nc.conv2d(x, u, **p) if ctx.edges[1] is not None else None
    return (dx, dg)


attach()  # fill the primitives' vjp slots (the main rules attached before these existed)
