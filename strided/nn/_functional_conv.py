"""Convolutions, pooling, padding, unfold/fold and interpolation (``strided.nn.functional``).

PyTorch's names, signatures, defaults and semantics.  A convolution is ``im2col`` (a numba
kernel writing PyTorch's ``unfold`` layout) followed by one BLAS matrix product per image, and
its backward is two more products and ``col2im``: all of them primitives with backward rules,
so every function here is differentiable (twice) and runs on ``meta`` (shapes and dtypes only).
Pooling has its own kernels; adaptive pooling and bilinear interpolation are separable linear
maps, applied as two small matrix products.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from .. import _dtypes as dt
from .. import _namespace as xp
from .._array import Array
from .._ops import nn_conv as _nc

__all__ = [
    "conv1d",
    "conv2d",
    "conv_transpose1d",
    "conv_transpose2d",
    "max_pool1d",
    "max_pool2d",
    "avg_pool1d",
    "avg_pool2d",
    "adaptive_avg_pool1d",
    "adaptive_avg_pool2d",
    "adaptive_max_pool2d",
    "pad",
    "unfold",
    "fold",
    "interpolate",
]


# -- argument handling ---------------------------------------------------------------------------
def _tuple(value, n: int, what: str, op: str) -> tuple:
    """``value`` (an int or a sequence of ``n`` ints) as an ``n``-tuple of Python ints."""
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        return (int(value),) * n
    try:
        t = tuple(int(v) for v in value)
    except TypeError:
        raise TypeError(
            f"{op}: {what} must be an int or a tuple of {n} ints, got {value!r}"
        ) from None
    if len(t) == 1:
        return t * n
    if len(t) != n:
        raise ValueError(f"{op}: {what} must be an int or a tuple of {n} ints, got {value!r}")
    return t


def _positive(t: tuple, what: str, op: str) -> None:
    if any(v <= 0 for v in t):
        raise RuntimeError(f"{op}: {what} must be positive, got {t}")


def _check_array(x, what: str, op: str) -> Array:
    if not isinstance(x, Array):
        raise TypeError(f"{op}: {what} must be a strided array, got {type(x).__name__}")
    if x._dtype.kind != dt.REAL:
        raise TypeError(
            f"{op}: expected a real floating-point {what}, got dtype {x._dtype.name} "
            f"(shape {x._shape})"
        )
    return x


def _batched(x: Array, spatial: int, op: str) -> tuple[Array, bool]:
    """``x`` with a batch dimension (added for unbatched input) and whether one was added."""
    if x.ndim == spatial + 2:
        return x, False
    if x.ndim == spatial + 1:
        return xp.expand_dims(x, axis=0), True
    names = {1: "(N, C, L) or (C, L)", 2: "(N, C, H, W) or (C, H, W)"}[spatial]
    raise ValueError(
        f"{op}: expected a {spatial + 1}-D (unbatched) or {spatial + 2}-D (batched) input "
        f"{names}, got shape {x._shape}"
    )


def _unbatch(y: Array, added: bool) -> Array:
    return xp.squeeze(y, axis=0) if added else y


def _same_dtype(op: str, x: Array, *others) -> None:
    for name, a in others:
        if a is not None and a._dtype is not x._dtype:
            raise TypeError(
                f"{op}: input ({x._dtype.name}) and {name} ({a._dtype.name}) must have the same "
                "dtype"
            )


# -- convolutions --------------------------------------------------------------------------------
def _conv_padding(padding, kernel, dilation, stride, n: int, op: str) -> tuple:
    """Per-side padding ((lo, hi) for each spatial dim) from an int, tuple, 'valid' or 'same'."""
    if isinstance(padding, str):
        if padding == "valid":
            return ((0, 0),) * n
        if padding == "same":
            if any(s != 1 for s in stride):
                raise RuntimeError(
                    f"{op}: padding='same' is not supported for strided convolutions"
                )
            # PyTorch puts the odd element of the total padding at the end
            total = [d * (k - 1) for d, k in zip(dilation, kernel)]
            return tuple((t // 2, t - t // 2) for t in total)
        raise ValueError(
            f"{op}: invalid padding string {padding!r}, should be one of {{'valid', 'same'}}"
        )
    p = _tuple(padding, n, "padding", op)
    if any(v < 0 for v in p):
        raise RuntimeError(f"{op}: negative padding is not supported, got {p}")
    return tuple((v, v) for v in p)


def _conv_nd(x, weight, bias, stride, padding, dilation, groups, n: int, op: str) -> Array:
    """N-d convolution (n = 1 or 2) through im2col and a matrix product."""
    x = _check_array(x, "input", op)
    weight = _check_array(weight, "weight", op)
    if bias is not None:
        bias = _check_array(bias, "bias", op)
    _same_dtype(op, x, ("weight", weight), ("bias", bias))
    if weight.ndim != n + 2:
        raise ValueError(
            f"{op}: expected a {n + 2}-D weight (out_channels, in_channels/groups, "
            f"{'kH, kW' if n == 2 else 'kW'}), got shape {weight._shape}"
        )
    x, added = _batched(x, n, op)
    groups = int(groups)
    if groups < 1:
        raise RuntimeError(f"{op}: non-positive groups is not supported, got {groups}")
    out_c, cin_g = weight._shape[:2]
    kernel = weight._shape[2:]
    if out_c % groups:
        raise RuntimeError(
            f"{op}: out_channels ({out_c}, weight of shape {weight._shape}) must be divisible by "
            f"groups ({groups})"
        )
    in_c = x._shape[1]
    if in_c != cin_g * groups:
        raise RuntimeError(
            f"{op}: given groups={groups}, weight of size {list(weight._shape)}, expected "
            f"input{list(x._shape)} to have {cin_g * groups} channels, but got {in_c} channels "
            "instead"
        )
    if bias is not None and bias._shape != (out_c,):
        raise RuntimeError(
            f"{op}: expected bias of shape ({out_c},) for weight of shape {weight._shape}, got "
            f"{bias._shape}"
        )
    stride = _tuple(stride, n, "stride", op)
    dilation = _tuple(dilation, n, "dilation", op)
    _positive(stride, "stride", op)
    _positive(dilation, "dilation", op)
    pads = _conv_padding(padding, kernel, dilation, stride, n, op)
    spatial = x._shape[2:]
    for size, k, d, (lo, hi) in zip(spatial, kernel, dilation, pads):
        if size + lo + hi < d * (k - 1) + 1:
            padded = tuple(s + a + b for s, (a, b) in zip(spatial, pads))
            eff = tuple(d_ * (k_ - 1) + 1 for d_, k_ in zip(dilation, kernel))
            raise RuntimeError(
                f"{op}: calculated padded input size per channel {padded} (input of shape "
                f"{x._shape}) is smaller than the (dilated) kernel size {eff}: kernel size can't "
                "be greater than actual input size"
            )
    if n == 1:  # a row of a 2-D image
        x = xp.expand_dims(x, axis=2)
        weight4 = xp.expand_dims(weight, axis=2)
        kernel, stride, dilation, pads = (
            (1,) + kernel,
            (1,) + stride,
            (1,) + dilation,
            ((0, 0),) + pads,
        )
    else:
        weight4 = weight
    (pt, pb), (pl, pr) = pads
    # one fused primitive (bias included): im2col of a few images at a time, multiplied by BLAS
    # in cache
    y = _nc.conv2d(x, weight4, stride, (pt, pb, pl, pr), dilation, groups, bias)
    if n == 1:
        y = xp.squeeze(y, axis=2)
    return _unbatch(y, added)


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1) -> Array:
    """1-D convolution (cross-correlation) of ``input`` (N, C_in, L) with ``weight``
    (C_out, C_in/groups, kW); ``padding`` is an int, a 1-tuple, ``'valid'`` or ``'same'``."""
    return _conv_nd(input, weight, bias, stride, padding, dilation, groups, 1, "conv1d")


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1) -> Array:
    """2-D convolution (cross-correlation) of ``input`` (N, C_in, H, W) with ``weight``
    (C_out, C_in/groups, kH, kW) plus ``bias`` (C_out,); ``padding`` is an int, a pair,
    ``'valid'`` or ``'same'`` (stride 1 only)."""
    return _conv_nd(input, weight, bias, stride, padding, dilation, groups, 2, "conv2d")


def _conv_transpose_nd(
    x, weight, bias, stride, padding, output_padding, groups, dilation, n: int, op: str,
    output_size=None,
) -> Array:  # fmt: skip
    """The adjoint of the convolution: a matrix product into columns, summed by col2im."""
    x = _check_array(x, "input", op)
    weight = _check_array(weight, "weight", op)
    if bias is not None:
        bias = _check_array(bias, "bias", op)
    _same_dtype(op, x, ("weight", weight), ("bias", bias))
    if weight.ndim != n + 2:
        raise ValueError(
            f"{op}: expected a {n + 2}-D weight (in_channels, out_channels/groups, "
            f"{'kH, kW' if n == 2 else 'kW'}), got shape {weight._shape}"
        )
    x, added = _batched(x, n, op)
    groups = int(groups)
    if groups < 1:
        raise RuntimeError(f"{op}: non-positive groups is not supported, got {groups}")
    in_c, cout_g = weight._shape[:2]
    kernel = weight._shape[2:]
    if x._shape[1] != in_c:
        raise RuntimeError(
            f"{op}: given transposed=1, weight of size {list(weight._shape)}, expected "
            f"input{list(x._shape)} to have {in_c} channels, but got {x._shape[1]} channels "
            "instead"
        )
    if in_c % groups:
        raise RuntimeError(
            f"{op}: in_channels ({in_c}, weight of shape {weight._shape}) must be divisible by "
            f"groups ({groups})"
        )
    out_c = cout_g * groups
    if bias is not None and bias._shape != (out_c,):
        raise RuntimeError(
            f"{op}: expected bias of shape ({out_c},) for weight of shape {weight._shape}, got "
            f"{bias._shape}"
        )
    stride = _tuple(stride, n, "stride", op)
    dilation = _tuple(dilation, n, "dilation", op)
    pad = _tuple(padding, n, "padding", op)
    _positive(stride, "stride", op)
    _positive(dilation, "dilation", op)
    if any(p < 0 for p in pad):
        raise RuntimeError(f"{op}: negative padding is not supported, got {pad}")
    spatial = x._shape[2:]
    base = tuple(
        (s - 1) * st - 2 * p + d * (k - 1) + 1
        for s, st, p, d, k in zip(spatial, stride, pad, dilation, kernel)
    )
    if output_size is not None:
        size = tuple(int(v) for v in output_size)[-n:]
        out_pad = tuple(s - b for s, b in zip(size, base))
        if any(not 0 <= op_ < max(st, d) for op_, st, d in zip(out_pad, stride, dilation)):
            raise RuntimeError(
                f"{op}: requested an output size of {size}, but valid sizes range from {base} to "
                f"{tuple(b + max(st, d) - 1 for b, st, d in zip(base, stride, dilation))} "
                f"(for an input of shape {x._shape})"
            )
    else:
        out_pad = _tuple(output_padding, n, "output_padding", op)
        for op_, st, d in zip(out_pad, stride, dilation):
            if not (op_ < st or op_ < d) or op_ < 0:
                raise RuntimeError(
                    f"{op}: output padding must be smaller than either stride or dilation, got "
                    f"output_padding={out_pad}, stride={stride}, dilation={dilation}"
                )
    out_hw = tuple(b + o for b, o in zip(base, out_pad))
    if any(s < 1 for s in out_hw):
        raise RuntimeError(
            f"{op}: the calculated output size {out_hw} for an input of shape {x._shape} and a "
            f"weight of shape {weight._shape} is too small"
        )
    if n == 1:
        x = xp.expand_dims(x, axis=2)
        weight = xp.expand_dims(weight, axis=2)
        kernel, stride, dilation = (1,) + kernel, (1,) + stride, (1,) + dilation
        pad, out_pad, out_hw = (0,) + pad, (0,) + out_pad, (1,) + out_hw
    # the transposed convolution is the convolution's input gradient; output padding lengthens
    # the output at the end, so the end's padding shrinks by as much
    pads = (pad[0], pad[0] - out_pad[0], pad[1], pad[1] - out_pad[1])
    y = _nc.conv2d_input_grad(x, weight, out_hw, stride, pads, dilation, groups)
    if n == 1:
        y = xp.squeeze(y, axis=2)
    if bias is not None:
        y = y + xp.reshape(bias, (out_c,) + (1,) * n)
    return _unbatch(y, added)


def conv_transpose1d(
    input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1
) -> Array:
    """1-D transposed convolution of ``input`` (N, C_in, L) with ``weight``
    (C_in, C_out/groups, kW)."""
    return _conv_transpose_nd(
        input, weight, bias, stride, padding, output_padding, groups, dilation, 1,
        "conv_transpose1d",
    )  # fmt: skip


def conv_transpose2d(
    input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1
) -> Array:
    """2-D transposed convolution ("deconvolution") of ``input`` (N, C_in, H, W) with
    ``weight`` (C_in, C_out/groups, kH, kW): the gradient of conv2d with respect to its input."""
    return _conv_transpose_nd(
        input, weight, bias, stride, padding, output_padding, groups, dilation, 2,
        "conv_transpose2d",
    )  # fmt: skip


# -- pooling -------------------------------------------------------------------------------------
def _pool_args(kernel_size, stride, padding, dilation, n: int, op: str) -> tuple:
    kernel = _tuple(kernel_size, n, "kernel_size", op)
    stride = (
        kernel
        if stride is None or (not isinstance(stride, int) and len(stride) == 0)
        else (_tuple(stride, n, "stride", op))
    )
    pad = _tuple(padding, n, "padding", op)
    dil = _tuple(dilation, n, "dilation", op)
    _positive(kernel, "kernel_size", op)
    _positive(stride, "stride", op)
    _positive(dil, "dilation", op)
    return kernel, stride, pad, dil


def _check_pool_input(x: Array, spatial: tuple, kernel, pad, dil, ceil_mode, stride, op: str):
    for k, p, d in zip(kernel, pad, dil):
        if p < 0 or p > (d * (k - 1) + 1) // 2:
            raise RuntimeError(
                f"{op}: pad should be at most half of effective kernel size, but got "
                f"pad={pad}, kernel_size={kernel} and dilation={dil}"
            )
    outs = tuple(
        _nc.pool_output_size(s, k, p, st, d, ceil_mode)
        for s, k, p, st, d in zip(spatial, kernel, pad, stride, dil)
    )
    if any(o < 1 for o in outs) or 0 in spatial:
        raise RuntimeError(
            f"{op}: given input of shape {x._shape}, kernel_size={kernel}, stride={stride}, "
            f"padding={pad}, dilation={dil}: the calculated output size {outs} is too small"
        )


def _max_pool(x, kernel_size, stride, padding, dilation, ceil_mode, return_indices, n, op):
    x = _check_array(x, "input", op)
    x, added = _batched(x, n, op)
    kernel, stride, pad, dil = _pool_args(kernel_size, stride, padding, dilation, n, op)
    _check_pool_input(x, x._shape[2:], kernel, pad, dil, ceil_mode, stride, op)
    if n == 1:
        x4 = xp.expand_dims(x, axis=2)
        kernel, stride, pad, dil = (1,) + kernel, (1,) + stride, (0,) + pad, (1,) + dil
    else:
        x4 = x
    values, indices = _nc.max_pool2d_with_indices(x4, kernel, stride, pad, dil, ceil_mode)
    if n == 1:
        values, indices = xp.squeeze(values, axis=2), xp.squeeze(indices, axis=2)
    values, indices = _unbatch(values, added), _unbatch(indices, added)
    return (values, indices) if return_indices else values


def max_pool1d(
    input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False
):
    """1-D max pooling over (N, C, L); ``stride`` defaults to ``kernel_size``; with
    ``return_indices`` also the position of each maximum along L."""
    return _max_pool(
        input, kernel_size, stride, padding, dilation, ceil_mode, return_indices, 1, "max_pool1d"
    )


def max_pool2d(
    input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False
):
    """2-D max pooling over (N, C, H, W); ``stride`` defaults to ``kernel_size``; with
    ``return_indices`` also the flat position ``h * W + w`` of each maximum in its plane."""
    return _max_pool(
        input, kernel_size, stride, padding, dilation, ceil_mode, return_indices, 2, "max_pool2d"
    )


def _avg_pool(x, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor, n, op):
    x = _check_array(x, "input", op)
    x, added = _batched(x, n, op)
    kernel, stride, pad, _ = _pool_args(kernel_size, stride, padding, 1, n, op)
    for k, p in zip(kernel, pad):
        if p < 0 or p > k // 2:
            raise RuntimeError(
                f"{op}: pad should be at most half of kernel size, but got pad={pad} and "
                f"kernel_size={kernel}"
            )
    _check_pool_input(x, x._shape[2:], kernel, pad, (1,) * n, ceil_mode, stride, op)
    if divisor is not None and int(divisor) == 0:
        raise RuntimeError(f"{op}: divisor must be not zero")
    if n == 1:
        x4 = xp.expand_dims(x, axis=2)
        kernel, stride, pad = (1,) + kernel, (1,) + stride, (0,) + pad
    else:
        x4 = x
    y = _nc.avg_pool2d(x4, kernel, stride, pad, ceil_mode, count_include_pad, divisor)
    if n == 1:
        y = xp.squeeze(y, axis=2)
    return _unbatch(y, added)


def avg_pool1d(
    input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True
) -> Array:
    """1-D average pooling over (N, C, L); ``stride`` defaults to ``kernel_size``."""
    return _avg_pool(
        input, kernel_size, stride, padding, ceil_mode, count_include_pad, None, 1, "avg_pool1d"
    )


def avg_pool2d(
    input,
    kernel_size,
    stride=None,
    padding=0,
    ceil_mode=False,
    count_include_pad=True,
    divisor_override=None,
) -> Array:
    """2-D average pooling over (N, C, H, W) with PyTorch's divisors: the padded window size
    (``count_include_pad``), the part inside the input, or ``divisor_override``."""
    return _avg_pool(
        input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override, 2,
        "avg_pool2d",
    )  # fmt: skip


def _adaptive_matrix(n_in: int, n_out: int, dtype, device) -> Array:
    """(n_out, n_in) averaging matrix of adaptive pooling: row i averages
    [floor(i*n_in/n_out), ceil((i+1)*n_in/n_out))."""
    m = np.zeros((n_out, n_in))
    for i in range(n_out):
        lo = (i * n_in) // n_out
        hi = -((-(i + 1) * n_in) // n_out)
        m[i, lo:hi] = 1.0 / (hi - lo)
    return xp.asarray(m.astype(dtype.numpy), device=device)


def _adaptive_sizes(output_size, spatial: tuple, op: str) -> tuple:
    n = len(spatial)
    if isinstance(output_size, numbers.Integral) or output_size is None:
        output_size = (output_size,) * n
    sizes = tuple(spatial[i] if s is None else int(s) for i, s in enumerate(output_size))
    if len(sizes) != n:
        raise ValueError(f"{op}: output_size must be an int or a {n}-tuple, got {output_size!r}")
    if any(s < 0 for s in sizes):
        raise ValueError(f"{op}: output_size must be non-negative, got {sizes}")
    return sizes


def adaptive_avg_pool2d(input, output_size) -> Array:
    """Average pooling to a fixed (H_out, W_out) (``None`` keeps a size): windows
    [floor(i*H/H_out), ceil((i+1)*H/H_out)), as PyTorch."""
    op = "adaptive_avg_pool2d"
    x = _check_array(input, "input", op)
    x, added = _batched(x, 2, op)
    h, w = x._shape[2:]
    oh, ow = _adaptive_sizes(output_size, (h, w), op)
    if 0 in (h, w):
        raise RuntimeError(
            f"{op}: expected non-empty spatial dimensions, got input shape {x._shape}"
        )
    if oh and ow and h % oh == 0 and w % ow == 0:
        kernel = (h // oh, w // ow)
        y = _nc.avg_pool2d(x, kernel, kernel, (0, 0), False, True, None)
    else:
        mh = _adaptive_matrix(h, oh, x._dtype, x._device)
        mw = _adaptive_matrix(w, ow, x._dtype, x._device)
        y = xp.matmul(xp.matmul(mh, x), xp.matrix_transpose(mw))
    return _unbatch(y, added)


def adaptive_avg_pool1d(input, output_size) -> Array:
    """Average pooling of (N, C, L) to a fixed length."""
    op = "adaptive_avg_pool1d"
    x = _check_array(input, "input", op)
    x, added = _batched(x, 1, op)
    (n_out,) = _adaptive_sizes(output_size, x._shape[2:], op)
    m = _adaptive_matrix(x._shape[2], n_out, x._dtype, x._device)
    return _unbatch(xp.matmul(x, xp.matrix_transpose(m)), added)


def adaptive_max_pool2d(input, output_size, return_indices=False):
    """Max pooling to a fixed (H_out, W_out) where the windows are regular (input size a
    multiple of the output size); other sizes raise NotImplementedError."""
    op = "adaptive_max_pool2d"
    x = _check_array(input, "input", op)
    h, w = x._shape[-2:]
    oh, ow = _adaptive_sizes(output_size, (h, w), op)
    if not (oh and ow and h % oh == 0 and w % ow == 0):
        raise NotImplementedError(
            f"{op}: only output sizes that divide the input size are supported, got input shape "
            f"{x._shape} and output_size {(oh, ow)}"
        )
    kernel = (h // oh, w // ow)
    return _max_pool(x, kernel, kernel, 0, 1, False, return_indices, 2, op)


# -- padding -------------------------------------------------------------------------------------
def _pad_indices(n: int, lo: int, hi: int, mode: str, op: str) -> np.ndarray:
    """Source positions of a padded axis of size ``n`` (``lo``/``hi`` >= 0)."""
    i = np.arange(-lo, n + hi)
    if mode == "reflect":
        if lo >= n or hi >= n:
            raise RuntimeError(
                f"{op}: padding size should be less than the corresponding input dimension, but "
                f"got padding ({lo}, {hi}) for a dimension of size {n} (mode 'reflect')"
            )
        i = np.abs(i)
        i = np.where(i > n - 1, 2 * (n - 1) - i, i)
    elif mode == "replicate":
        if n == 0:
            raise RuntimeError(f"{op}: cannot replicate-pad an empty dimension")
        i = np.clip(i, 0, n - 1)
    else:  # circular
        if lo > n or hi > n:
            raise RuntimeError(
                f"{op}: padding value causes wrapping around more than once: padding ({lo}, {hi}) "
                f"for a dimension of size {n}"
            )
        i = np.mod(i, n)
    return i


def pad(input, pad, mode="constant", value=None) -> Array:
    """Pad the last ``len(pad) // 2`` dimensions: ``pad`` = (left_last, right_last,
    left_second_last, ...).  Modes: ``'constant'`` (``value``, default 0; negative pads crop),
    ``'reflect'``, ``'replicate'``, ``'circular'``."""
    op = "pad"
    if not isinstance(input, Array):
        raise TypeError(f"{op}: input must be a strided array, got {type(input).__name__}")
    x = input
    pads = tuple(int(p) for p in pad)
    if len(pads) % 2 or len(pads) // 2 > x.ndim:
        raise ValueError(
            f"{op}: padding length must be even and at most twice the number of dimensions "
            f"({x.ndim}), got {len(pads)} (pad={pads})"
        )
    nd = len(pads) // 2
    pairs = [(pads[2 * i], pads[2 * i + 1]) for i in range(nd)]  # last dim first
    if mode == "constant":
        # negative padding crops: a view
        key = [slice(None)] * x.ndim
        for i, (lo, hi) in enumerate(pairs):
            d = x.ndim - 1 - i
            key[d] = slice(max(-lo, 0), x._shape[d] - max(-hi, 0))
        x = x[tuple(key)]
        if all(lo <= 0 and hi <= 0 for lo, hi in pairs):
            return x if x is not input else x[...]
        shape = list(x._shape)
        key = [slice(None)] * x.ndim
        for i, (lo, hi) in enumerate(pairs):
            d = x.ndim - 1 - i
            lo, hi = max(lo, 0), max(hi, 0)
            shape[d] += lo + hi
            key[d] = slice(lo, lo + x._shape[d])
        fill = 0 if value is None else value
        out = xp.full(tuple(shape), fill, dtype=x._dtype, device=x._device)
        out[tuple(key)] = x
        return out
    if mode not in ("reflect", "replicate", "circular"):
        raise ValueError(
            f"{op}: unsupported padding mode {mode!r}; expected 'constant', 'reflect', "
            "'replicate' or 'circular'"
        )
    if value not in (None, 0, 0.0):
        raise ValueError(f"{op}: padding mode {mode!r} doesn't take in value argument")
    if x.ndim < nd + 1:
        raise RuntimeError(
            f"{op}: {mode} padding of {nd} dimension(s) needs a {nd + 1}-D or {nd + 2}-D input, "
            f"got shape {x._shape}"
        )
    for i, (lo, hi) in enumerate(pairs):
        d = x.ndim - 1 - i
        if mode == "circular" and (lo < 0 or hi < 0):
            # negative circular padding crops first
            x = x[(slice(None),) * d + (slice(max(-lo, 0), x._shape[d] - max(-hi, 0)),)]
            lo, hi = max(lo, 0), max(hi, 0)
        elif lo < 0 or hi < 0:
            raise RuntimeError(f"{op}: negative padding is not supported in mode {mode!r}")
        if lo == hi == 0:
            continue
        idx = _pad_indices(x._shape[d], lo, hi, mode, op)
        x = xp.take(x, xp.asarray(idx, dtype=xp.int64, device=x._device), axis=d)
    return x


# -- unfold / fold -------------------------------------------------------------------------------
def unfold(input, kernel_size, dilation=1, padding=0, stride=1) -> Array:
    """Sliding blocks of ``input`` (N, C, H, W) as columns (N, C*kH*kW, L), PyTorch's layout
    (channel-major, then kernel row, then kernel column)."""
    op = "unfold"
    x = _check_array(input, "input", op)
    if x.ndim not in (3, 4):
        raise ValueError(
            f"{op}: expected a 3-D (unbatched) or 4-D (batched) input, got shape {x._shape}"
        )
    x, added = _batched(x, 2, op)
    k = _tuple(kernel_size, 2, "kernel_size", op)
    d = _tuple(dilation, 2, "dilation", op)
    p = _tuple(padding, 2, "padding", op)
    s = _tuple(stride, 2, "stride", op)
    _positive(k, "kernel_size", op)
    _positive(d, "dilation", op)
    _positive(s, "stride", op)
    if any(v < 0 for v in p):
        raise RuntimeError(f"{op}: padding must be non-negative, got {p}")
    h, w = x._shape[2:]
    oh = _nc.conv_output_size(h, k[0], p[0], p[0], s[0], d[0])
    ow = _nc.conv_output_size(w, k[1], p[1], p[1], s[1], d[1])
    if oh < 1 or ow < 1:
        raise RuntimeError(
            f"{op}: given input with spatial size {(h, w)}, kernel_size={k}, dilation={d}, "
            f"padding={p}, calculated shape of the array of sliding blocks as ({oh}, {ow}), but "
            "its components must be at least one"
        )
    y = _nc.im2col(x, k, d, (p[0], p[0], p[1], p[1]), s)
    return _unbatch(y, added)


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1) -> Array:
    """Sum sliding blocks (N, C*kH*kW, L) back into images (N, C, *output_size): the adjoint
    of :func:`unfold`."""
    op = "fold"
    x = _check_array(input, "input", op)
    if x.ndim not in (2, 3):
        raise ValueError(
            f"{op}: expected a 2-D (unbatched) or 3-D (batched) input, got shape {x._shape}"
        )
    added = x.ndim == 2
    if added:
        x = xp.expand_dims(x, axis=0)
    size = _tuple(output_size, 2, "output_size", op)
    k = _tuple(kernel_size, 2, "kernel_size", op)
    d = _tuple(dilation, 2, "dilation", op)
    p = _tuple(padding, 2, "padding", op)
    s = _tuple(stride, 2, "stride", op)
    _positive(k, "kernel_size", op)
    _positive(d, "dilation", op)
    _positive(s, "stride", op)
    if x._shape[1] % (k[0] * k[1]):
        raise RuntimeError(
            f"{op}: expected size of input's dimension 1 to be divisible by the product of "
            f"kernel_size, but got input.size(1)={x._shape[1]} and kernel_size={k}"
        )
    oh = _nc.conv_output_size(size[0], k[0], p[0], p[0], s[0], d[0])
    ow = _nc.conv_output_size(size[1], k[1], p[1], p[1], s[1], d[1])
    if oh < 1 or ow < 1 or oh * ow != x._shape[2]:
        raise RuntimeError(
            f"{op}: given output_size={size}, kernel_size={k}, dilation={d}, padding={p}, "
            f"stride={s}, expected size of input's dimension 2 to match the calculated number of "
            f"sliding blocks {max(oh, 0)} * {max(ow, 0)} = {max(oh, 0) * max(ow, 0)}, but got "
            f"input of shape {x._shape}"
        )
    y = _nc.col2im(x, size, k, d, (p[0], p[0], p[1], p[1]), s)
    return _unbatch(y, added)


# -- interpolation -------------------------------------------------------------------------------
def _interp_sizes(x: Array, size, scale_factor, n: int, op: str) -> tuple[tuple, tuple]:
    spatial = x._shape[2:]
    if (size is None) == (scale_factor is None):
        raise ValueError(f"{op}: exactly one of size and scale_factor must be given")
    if size is not None:
        out = _tuple(size, n, "size", op)
        scales = (None,) * n
    else:
        if isinstance(scale_factor, numbers.Real):
            scales = (float(scale_factor),) * n
        else:
            scales = tuple(float(s) for s in scale_factor)
            if len(scales) != n:
                raise ValueError(
                    f"{op}: scale_factor must have {n} entries for input of shape {x._shape}, "
                    f"got {scale_factor!r}"
                )
        if any(s <= 0 for s in scales):
            raise ValueError(f"{op}: scale_factor must be positive, got {scale_factor!r}")
        out = tuple(int(math.floor(s * f)) for s, f in zip(spatial, scales))
    if any(o <= 0 for o in out):
        raise RuntimeError(
            f"{op}: input of shape {x._shape} gives a non-positive output size {out}"
        )
    return out, scales


def _nearest_index(n_in: int, n_out: int, scale, exact: bool) -> np.ndarray:
    # PyTorch computes these in single precision
    f32 = np.float32
    s = f32(1.0 / scale) if scale is not None and scale > 0 else f32(n_in) / f32(n_out)
    o = np.arange(n_out, dtype=f32)
    if exact:
        src = np.floor((o + f32(0.5)) * s)
    else:
        if n_out == n_in:
            return np.arange(n_out)
        if n_out == 2 * n_in:
            return np.arange(n_out) >> 1
        src = np.floor(o * s)
    return np.minimum(src.astype(np.int64), n_in - 1)


def _linear_matrix(n_in: int, n_out: int, scale, align_corners: bool, dtype, device) -> Array:
    """(n_out, n_in) matrix of 1-D linear interpolation, PyTorch's source-index rule."""
    if align_corners:
        s = (n_in - 1) / (n_out - 1) if n_out > 1 else 0.0
        src = np.arange(n_out) * s
    else:
        s = 1.0 / scale if scale is not None and scale > 0 else n_in / n_out
        src = np.maximum((np.arange(n_out) + 0.5) * s - 0.5, 0.0)
    i0 = np.minimum(np.floor(src).astype(np.int64), n_in - 1)
    i1 = np.minimum(i0 + 1, n_in - 1)
    lam = src - i0
    m = np.zeros((n_out, n_in))
    rows = np.arange(n_out)
    np.add.at(m, (rows, i0), 1.0 - lam)
    np.add.at(m, (rows, i1), lam)
    return xp.asarray(m.astype(dtype.numpy), device=device)


def interpolate(
    input,
    size=None,
    scale_factor=None,
    mode="nearest",
    align_corners=None,
    recompute_scale_factor=None,
    antialias=False,
) -> Array:
    """Resize (N, C, L) or (N, C, H, W) to ``size`` or by ``scale_factor``.  Modes:
    ``'nearest'``, ``'nearest-exact'``, ``'linear'`` (3-D), ``'bilinear'`` (4-D, with
    ``align_corners``), ``'area'`` (adaptive average pooling)."""
    op = "interpolate"
    x = _check_array(input, "input", op)
    if x.ndim not in (3, 4):
        raise NotImplementedError(
            f"{op}: only 3-D (N, C, L) and 4-D (N, C, H, W) inputs are supported, got shape "
            f"{x._shape}"
        )
    if antialias:
        raise NotImplementedError(f"{op}: antialias=True is not supported")
    n = x.ndim - 2
    linear = {"linear": 1, "bilinear": 2}
    if mode in linear:
        if linear[mode] != n:
            raise ValueError(
                f"{op}: mode {mode!r} expects a {linear[mode] + 2}-D input, got shape {x._shape}"
            )
    elif mode not in ("nearest", "nearest-exact", "area"):
        raise NotImplementedError(
            f"{op}: mode {mode!r} is not supported (nearest, nearest-exact, linear, bilinear, area)"
        )
    elif align_corners is not None:
        raise ValueError(
            f"{op}: align_corners option can only be set with the interpolating modes: linear | "
            "bilinear | bicubic | trilinear"
        )
    out, scales = _interp_sizes(x, size, scale_factor, n, op)
    if recompute_scale_factor:
        scales = (None,) * n
    if mode == "area":
        if n == 2:
            return adaptive_avg_pool2d(x, out)
        return adaptive_avg_pool1d(x, out)
    spatial = x._shape[2:]
    if mode in ("nearest", "nearest-exact"):
        y = x
        for i in range(n):
            idx = _nearest_index(spatial[i], out[i], scales[i], mode == "nearest-exact")
            if idx.shape[0] == spatial[i] and (idx == np.arange(spatial[i])).all():
                continue
            y = xp.take(y, xp.asarray(idx, dtype=xp.int64, device=x._device), axis=2 + i)
        return y
    ac = bool(align_corners)
    mats = [
        _linear_matrix(spatial[i], out[i], scales[i], ac, x._dtype, x._device) for i in range(n)
    ]
    if n == 1:
        return xp.matmul(x, xp.matrix_transpose(mats[0]))
    return xp.matmul(xp.matmul(mats[0], x), xp.matrix_transpose(mats[1]))
