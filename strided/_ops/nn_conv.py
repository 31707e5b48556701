"""Primitives behind ``strided.nn``'s convolutions and pooling (not part of the standard).

Six primitives over batches of images laid out (N, C, H, W), every one of them a pair with its
adjoint so that each is the other's backward rule (``strided.autograd._rules_nn_conv``):

* ``im2col`` / ``col2im``: PyTorch's ``unfold``/``fold`` (columns (N, C*kh*kw, OH*OW), or
  (C*kh*kw, N, OH*OW) for a convolution's single matrix product), with
  zero padding given per side (top, bottom, left, right) so that ``padding="same"`` with an even
  kernel needs no copy; a convolution is ``im2col`` followed by a BLAS matrix product;
* ``max_pool2d`` (values and flat indices in each plane) / ``max_pool2d_backward``;
* ``avg_pool2d`` / ``avg_pool2d_backward``.

The rules give the output shapes (so meta runs them all); the CPU kernels are in
``strided/backends/cpu/_nn_conv.py``.  ``strided.nn.functional`` checks user arguments and
names the function the user called before these rules run.
"""

from __future__ import annotations

from .. import _dtypes as dt
from .._array import Array
from ..dispatch import Plan, declare
from .core import same_device, to_array

__all__ = [
    "im2col",
    "col2im",
    "max_pool2d_with_indices",
    "max_pool2d_backward",
    "avg_pool2d",
    "avg_pool2d_backward",
    "conv2d",
    "conv2d_input_grad",
    "conv2d_weight_grad",
    "conv_output_size",
    "pool_output_size",
]


def _check_images(op: str, x: Array, ndim: int = 4) -> None:
    if x._dtype.kind != dt.REAL:
        raise TypeError(f"{op}: expected a real floating-point array, got dtype {x._dtype.name}")
    if x.ndim != ndim:
        raise ValueError(f"{op}: expected a {ndim}-D array, got shape {x._shape}")


def conv_output_size(size: int, k: int, pad_lo: int, pad_hi: int, stride: int, dilation: int):
    """Positions of a ``k``-tap window (dilated) sliding with ``stride`` over ``size`` padded
    elements (may be < 1: the caller raises)."""
    return (size + pad_lo + pad_hi - dilation * (k - 1) - 1) // stride + 1


def pool_output_size(size: int, k: int, pad: int, stride: int, dilation: int, ceil: bool) -> int:
    """PyTorch's pooling output size: with ``ceil_mode`` the last window may hang over the end,
    but it must start inside the input or its left padding."""
    span = size + 2 * pad - dilation * (k - 1) - 1
    out = (span + (stride - 1 if ceil else 0)) // stride + 1
    if ceil and (out - 1) * stride >= size + pad:
        out -= 1
    return out


# -- im2col / col2im -----------------------------------------------------------------------------
def _im2col_rule(x, /, *, kernel_size, dilation, padding, stride, channels_first=False) -> Plan:
    x = to_array(x, "im2col")
    _check_images("im2col", x)
    n, c, h, w = x._shape
    (kh, kw), (dh, dw), (pt, pb, pl, pr), (sh, sw) = kernel_size, dilation, padding, stride
    oh = conv_output_size(h, kh, pt, pb, sh, dh)
    ow = conv_output_size(w, kw, pl, pr, sw, dw)
    if oh < 1 or ow < 1:
        raise ValueError(
            f"im2col: kernel {kernel_size} (dilation {dilation}) is larger than the padded input "
            f"({h + pt + pb}, {w + pl + pr}) of shape {x._shape}"
        )
    params = {
        "kernel_size": (kh, kw),
        "dilation": (dh, dw),
        "padding": (pt, pb, pl, pr),
        "stride": (sh, sw),
        "channels_first": bool(channels_first),
        "out_hw": (oh, ow),
    }
    shape = (c * kh * kw, n, oh * ow) if channels_first else (n, c * kh * kw, oh * ow)
    return Plan(x._device, (shape, x._dtype), (x,), None, params)


def _col2im_rule(cols, /, *, output_size, kernel_size, dilation, padding, stride) -> Plan:
    cols = to_array(cols, "col2im")
    _check_images("col2im", cols, 3)
    n, ck, length = cols._shape
    (h, w), (kh, kw), (dh, dw) = output_size, kernel_size, dilation
    (pt, pb, pl, pr), (sh, sw) = padding, stride
    if ck % (kh * kw):
        raise ValueError(
            f"col2im: expected size of input's dimension 1 ({ck}) to be divisible by the product "
            f"of kernel_size {kernel_size}"
        )
    oh = conv_output_size(h, kh, pt, pb, sh, dh)
    ow = conv_output_size(w, kw, pl, pr, sw, dw)
    if oh < 1 or ow < 1 or oh * ow != length:
        raise ValueError(
            f"col2im: given output_size {output_size}, kernel_size {kernel_size}, dilation "
            f"{dilation}, padding {padding}, stride {stride}, expected size of input's dimension "
            f"2 to match the calculated number of sliding blocks {max(oh, 0)} * {max(ow, 0)} = "
            f"{max(oh, 0) * max(ow, 0)}, but got input of shape {cols._shape}"
        )
    params = {
        "output_size": (h, w),
        "kernel_size": (kh, kw),
        "dilation": (dh, dw),
        "padding": (pt, pb, pl, pr),
        "stride": (sh, sw),
        "out_hw": (oh, ow),
    }
    shape = (n, ck // (kh * kw), h, w)
    return Plan(cols._device, (shape, cols._dtype), (cols,), None, params)


IM2COL = declare("im2col", "nn", "real floating", rule=_im2col_rule)
COL2IM = declare("col2im", "nn", "real floating", rule=_col2im_rule)


def im2col(
    x: Array,
    kernel_size: tuple,
    dilation: tuple,
    padding: tuple,
    stride: tuple,
    channels_first: bool = False,
) -> Array:
    """Sliding blocks of ``x`` (N, C, H, W) as columns (N, C*kh*kw, L), or (C*kh*kw, N, L) with
    ``channels_first`` (what a convolution multiplies in one matrix product); ``padding`` is
    (top, bottom, left, right)."""
    return IM2COL.call(
        x,
        kernel_size=kernel_size,
        dilation=dilation,
        padding=padding,
        stride=stride,
        channels_first=bool(channels_first),
    )


def col2im(
    cols: Array,
    output_size: tuple,
    kernel_size: tuple,
    dilation: tuple,
    padding: tuple,
    stride: tuple,
) -> Array:
    """Sum the columns (N, C*kh*kw, L) back into images (N, C, *output_size): the adjoint of
    :func:`im2col`."""
    return COL2IM.call(
        cols,
        output_size=output_size,
        kernel_size=kernel_size,
        dilation=dilation,
        padding=padding,
        stride=stride,
    )


# -- pooling -------------------------------------------------------------------------------------
def _max_pool_rule(x, /, *, kernel_size, stride, padding, dilation, ceil_mode) -> Plan:
    x = to_array(x, "max_pool2d")
    _check_images("max_pool2d", x)
    n, c, h, w = x._shape
    oh = pool_output_size(h, kernel_size[0], padding[0], stride[0], dilation[0], ceil_mode)
    ow = pool_output_size(w, kernel_size[1], padding[1], stride[1], dilation[1], ceil_mode)
    if oh < 1 or ow < 1:
        raise ValueError(
            f"max_pool2d: given input of shape {x._shape}, the calculated output size "
            f"({oh}, {ow}) is too small"
        )
    params = {
        "kernel_size": tuple(kernel_size),
        "stride": tuple(stride),
        "padding": tuple(padding),
        "dilation": tuple(dilation),
        "out_hw": (oh, ow),
    }
    shape = (n, c, oh, ow)
    return Plan(x._device, [(shape, x._dtype), (shape, dt.int64)], (x,), None, params)


def _max_pool_backward_rule(g, indices, /, *, input_hw) -> Plan:
    g, indices = to_array(g, "max_pool2d_backward"), to_array(indices, "max_pool2d_backward")
    same_device("max_pool2d_backward", g, indices)
    _check_images("max_pool2d_backward", g)
    if indices._shape != g._shape or indices._dtype is not dt.int64:
        raise ValueError(
            f"max_pool2d_backward: indices of shape {indices._shape} and dtype "
            f"{indices._dtype.name} do not match the gradient's shape {g._shape} (int64 expected)"
        )
    shape = g._shape[:2] + tuple(input_hw)
    return Plan(g._device, (shape, g._dtype), (g, indices), None, {"input_hw": tuple(input_hw)})


MAX_POOL2D = declare("max_pool2d", "nn", "real floating", rule=_max_pool_rule)
MAX_POOL2D_BACKWARD = declare(
    "max_pool2d_backward", "nn", "real floating", rule=_max_pool_backward_rule
)


def max_pool2d_with_indices(
    x: Array, kernel_size: tuple, stride: tuple, padding: tuple, dilation: tuple, ceil_mode: bool
) -> tuple[Array, Array]:
    """Window maxima of ``x`` (N, C, H, W) and their flat positions in each (H, W) plane."""
    return MAX_POOL2D.call(
        x,
        kernel_size=kernel_size,
        stride=stride,
        padding=padding,
        dilation=dilation,
        ceil_mode=bool(ceil_mode),
    )


def max_pool2d_backward(g: Array, indices: Array, input_hw: tuple) -> Array:
    """The gradient of max pooling: ``g`` added at ``indices`` in planes of ``input_hw``."""
    return MAX_POOL2D_BACKWARD.call(g, indices, input_hw=tuple(input_hw))


def _avg_params(kernel_size, stride, padding, count_include_pad, divisor_override, out_hw):
    return {
        "kernel_size": tuple(kernel_size),
        "stride": tuple(stride),
        "padding": tuple(padding),
        "count_include_pad": bool(count_include_pad),
        "divisor_override": int(divisor_override or 0),
        "out_hw": tuple(out_hw),
    }


def _avg_pool_rule(
    x, /, *, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override
) -> Plan:
    x = to_array(x, "avg_pool2d")
    _check_images("avg_pool2d", x)
    n, c, h, w = x._shape
    oh = pool_output_size(h, kernel_size[0], padding[0], stride[0], 1, ceil_mode)
    ow = pool_output_size(w, kernel_size[1], padding[1], stride[1], 1, ceil_mode)
    if oh < 1 or ow < 1:
        raise ValueError(
            f"avg_pool2d: given input of shape {x._shape}, the calculated output size "
            f"({oh}, {ow}) is too small"
        )
    params = _avg_params(
        kernel_size, stride, padding, count_include_pad, divisor_override, (oh, ow)
    )
    return Plan(x._device, ((n, c, oh, ow), x._dtype), (x,), None, params)


def _avg_pool_backward_rule(
    g, /, *, input_hw, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override
) -> Plan:
    g = to_array(g, "avg_pool2d_backward")
    _check_images("avg_pool2d_backward", g)
    h, w = input_hw
    oh = pool_output_size(h, kernel_size[0], padding[0], stride[0], 1, ceil_mode)
    ow = pool_output_size(w, kernel_size[1], padding[1], stride[1], 1, ceil_mode)
    if tuple(g._shape[2:]) != (oh, ow):
        raise ValueError(
            f"avg_pool2d_backward: gradient of shape {g._shape} does not match the pooled size "
            f"{(oh, ow)} of an input of size {tuple(input_hw)}"
        )
    params = _avg_params(
        kernel_size, stride, padding, count_include_pad, divisor_override, (oh, ow)
    )
    params["input_hw"] = (h, w)
    shape = g._shape[:2] + (h, w)
    return Plan(g._device, (shape, g._dtype), (g,), None, params)


AVG_POOL2D = declare("avg_pool2d", "nn", "real floating", rule=_avg_pool_rule)
AVG_POOL2D_BACKWARD = declare(
    "avg_pool2d_backward", "nn", "real floating", rule=_avg_pool_backward_rule
)


def avg_pool2d(
    x: Array,
    kernel_size: tuple,
    stride: tuple,
    padding: tuple,
    ceil_mode: bool,
    count_include_pad: bool,
    divisor_override: int | None,
) -> Array:
    """Window means of ``x`` (N, C, H, W) with PyTorch's divisor rules."""
    return AVG_POOL2D.call(
        x,
        kernel_size=tuple(kernel_size),
        stride=tuple(stride),
        padding=tuple(padding),
        ceil_mode=bool(ceil_mode),
        count_include_pad=bool(count_include_pad),
        divisor_override=divisor_override,
    )


def avg_pool2d_backward(
    g: Array,
    input_hw: tuple,
    kernel_size: tuple,
    stride: tuple,
    padding: tuple,
    ceil_mode: bool,
    count_include_pad: bool,
    divisor_override: int | None,
) -> Array:
    """The adjoint of :func:`avg_pool2d`: each window's gradient spread over the input window."""
    return AVG_POOL2D_BACKWARD.call(
        g,
        input_hw=tuple(input_hw),
        kernel_size=tuple(kernel_size),
        stride=tuple(stride),
        padding=tuple(padding),
        ceil_mode=bool(ceil_mode),
        count_include_pad=bool(count_include_pad),
        divisor_override=divisor_override,
    )


# -- the fused convolution -----------------------------------------------------------------------
# conv2d (with an optional bias), its input gradient (also the transposed convolution) and its
# weight gradient: each is linear in each argument and each one's adjoints are the other two
# (the bias's is a sum), so the set is closed under differentiation.  The kernels run im2col
# on a few images at a time and multiply in cache.
def _conv_params(op, stride, padding, dilation, groups) -> dict:
    return {
        "stride": tuple(int(v) for v in stride),
        "padding": tuple(int(v) for v in padding),
        "dilation": tuple(int(v) for v in dilation),
        "groups": int(groups),
    }


def _conv_check(op: str, a: Array, b: Array) -> None:
    same_device(op, a, b)
    _check_images(op, a)
    _check_images(op, b)
    if a._dtype is not b._dtype:
        raise TypeError(f"{op}: dtypes differ: {a._dtype.name} and {b._dtype.name}")


def _conv_out_hw(op, hw, kernel, params) -> tuple:
    (pt, pb, pl, pr), (sh, sw), (dh, dw) = params["padding"], params["stride"], params["dilation"]
    oh = conv_output_size(hw[0], kernel[0], pt, pb, sh, dh)
    ow = conv_output_size(hw[1], kernel[1], pl, pr, sw, dw)
    if oh < 1 or ow < 1:
        raise ValueError(
            f"{op}: kernel {tuple(kernel)} (dilation {params['dilation']}) is larger than the "
            f"padded input {(hw[0] + pt + pb, hw[1] + pl + pr)}"
        )
    return oh, ow


def _conv2d_rule(x, w, b=None, /, *, stride, padding, dilation, groups) -> Plan:
    x, w = to_array(x, "conv2d"), to_array(w, "conv2d")
    _conv_check("conv2d", x, w)
    inputs = (x, w)
    if b is not None:
        b = to_array(b, "conv2d")
        same_device("conv2d", x, b)
        if b._dtype is not x._dtype or b._shape != w._shape[:1]:
            raise ValueError(
                f"conv2d: bias of shape {b._shape} and dtype {b._dtype.name} does not match "
                f"weight of shape {w._shape} and dtype {w._dtype.name} (expected shape "
                f"{w._shape[:1]})"
            )
        inputs = (x, w, b)
    params = _conv_params("conv2d", stride, padding, dilation, groups)
    n, c, h, wd = x._shape
    o, cg = w._shape[:2]
    g = params["groups"]
    if c != cg * g or o % g:
        raise ValueError(
            f"conv2d: input of shape {x._shape} and weight of shape {w._shape} do not match "
            f"with groups={g}"
        )
    oh, ow = _conv_out_hw("conv2d", (h, wd), w._shape[2:], params)
    params["out_hw"] = (oh, ow)
    return Plan(x._device, ((n, o, oh, ow), x._dtype), inputs, None, params)


def _conv2d_input_grad_rule(g, w, /, *, input_hw, stride, padding, dilation, groups) -> Plan:
    op = "conv2d_input_grad"
    g, w = to_array(g, op), to_array(w, op)
    _conv_check(op, g, w)
    params = _conv_params(op, stride, padding, dilation, groups)
    n, o = g._shape[:2]
    groups = params["groups"]
    if w._shape[0] != o or o % groups:
        raise ValueError(
            f"{op}: gradient of shape {g._shape} and weight of shape {w._shape} do not match with "
            f"groups={groups}"
        )
    h, wd = (int(v) for v in input_hw)
    if _conv_out_hw(op, (h, wd), w._shape[2:], params) != g._shape[2:]:
        raise ValueError(
            f"{op}: gradient of shape {g._shape} does not match an input of size {(h, wd)}"
        )
    params["input_hw"] = (h, wd)
    shape = (n, w._shape[1] * groups, h, wd)
    return Plan(g._device, (shape, g._dtype), (g, w), None, params)


def _conv2d_weight_grad_rule(x, g, /, *, kernel_size, stride, padding, dilation, groups) -> Plan:
    op = "conv2d_weight_grad"
    x, g = to_array(x, op), to_array(g, op)
    _conv_check(op, x, g)
    params = _conv_params(op, stride, padding, dilation, groups)
    groups = params["groups"]
    kernel = tuple(int(v) for v in kernel_size)
    n, c = x._shape[:2]
    o = g._shape[1]
    if g._shape[0] != n or c % groups or o % groups:
        raise ValueError(
            f"{op}: input of shape {x._shape} and gradient of shape {g._shape} do not match with "
            f"groups={groups}"
        )
    if _conv_out_hw(op, x._shape[2:], kernel, params) != g._shape[2:]:
        raise ValueError(f"{op}: gradient of shape {g._shape} does not match input {x._shape}")
    params["kernel_size"] = kernel
    shape = (o, c // groups) + kernel
    return Plan(x._device, (shape, x._dtype), (x, g), None, params)


CONV2D = declare("conv2d", "nn", "real floating", rule=_conv2d_rule)
CONV2D_INPUT_GRAD = declare(
    "conv2d_input_grad", "nn", "real floating", rule=_conv2d_input_grad_rule
)
CONV2D_WEIGHT_GRAD = declare(
    "conv2d_weight_grad", "nn", "real floating", rule=_conv2d_weight_grad_rule
)


def conv2d(x: Array, w: Array, stride, padding, dilation, groups, bias=None) -> Array:
    """Grouped 2-D cross-correlation of ``x`` (N, C, H, W) with ``w`` (O, C/groups, kh, kw),
    plus ``bias`` (O,) per output channel when given (added by the kernel: no broadcast add
    and its reduction in the graph); ``padding`` is (top, bottom, left, right)."""
    args = (x, w) if bias is None else (x, w, bias)
    return CONV2D.call(
        *args, stride=tuple(stride), padding=tuple(padding), dilation=tuple(dilation),
        groups=int(groups),
    )  # fmt: skip


def conv2d_input_grad(g: Array, w: Array, input_hw, stride, padding, dilation, groups) -> Array:
    """The adjoint of :func:`conv2d` in its input: ``g`` (N, O, OH, OW) -> (N, C, *input_hw)
    (the transposed convolution)."""
    return CONV2D_INPUT_GRAD.call(
        g, w, input_hw=tuple(input_hw), stride=tuple(stride), padding=tuple(padding),
        dilation=tuple(dilation), groups=int(groups),
    )  # fmt: skip


def conv2d_weight_grad(x: Array, g: Array, kernel_size, stride, padding, dilation, groups):
    """The adjoint of :func:`conv2d` in its weight: sum over the batch of g_n im2col(x_n)^T,
    shaped (O, C/groups, kh, kw)."""
    return CONV2D_WEIGHT_GRAD.call(
        x, g, kernel_size=tuple(kernel_size), stride=tuple(stride), padding=tuple(padding),
        dilation=tuple(dilation), groups=int(groups),
    )  # fmt: skip
