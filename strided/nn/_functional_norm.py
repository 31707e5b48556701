"""Normalisation functions of ``strided.nn.functional``: batch_norm, layer_norm, group_norm,
rms_norm (PyTorch's signatures, defaults and semantics).

Batch and layer normalisation run in every training step, so their normalising core is one
``autograd.Function`` (``_Normalize``) with a hand-written backward: one node on the tape instead
of the dozen that the composition records.  Under ``create_graph=True`` the backward recomputes
the statistics from the saved input with recorded operations, so it can be differentiated again.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from strided._array import Array
from strided.autograd import Function, is_grad_enabled, no_grad

from .. import _namespace as xp

__all__ = ["batch_norm", "layer_norm", "group_norm", "rms_norm"]


def _check_array(fn: str, name: str, a, *, optional: bool = False) -> None:
    if a is None and optional:
        return
    if not isinstance(a, Array):
        raise TypeError(f"{fn}: {name} must be a strided array, got {type(a).__name__}")


def _check_float(fn: str, x: Array) -> None:
    if not xp.isdtype(x.dtype, "real floating"):
        raise TypeError(f"{fn}: expected a real floating-point input, got dtype {x.dtype.name}")


def _stats(x: Array, axes: tuple, eps: float):
    """Biased mean and variance over ``axes`` (kept), the centred input and 1/sqrt(var + eps).

    Sums times 1/n rather than ``xp.mean`` and ``pow(., -0.5)``: fewer operations per call."""
    inv_n = 1.0 / max(math.prod(x.shape[a] for a in axes), 1)
    mean = xp.sum(x, axis=axes, keepdims=True) * inv_n
    xc = x - mean
    var = xp.sum(xc * xc, axis=axes, keepdims=True) * inv_n
    rstd = xp.pow(var + eps, -0.5)
    return mean, var, xc, rstd


def _view(p: Array, shape: tuple) -> Array:
    return p if p.shape == shape else xp.reshape(p, shape)


class _Normalize(Function):
    """``(x - mean) / sqrt(var + eps) * weight + bias`` with the statistics taken over ``axes``.

    ``wshape`` is the shape ``weight``/``bias`` are viewed as to broadcast against ``x``;
    ``waxes`` are the axes the weight gradient is summed over.  ``running`` is None or
    ``(running_mean, running_var, momentum)`` to update in place (batch norm in training).
    """

    @staticmethod
    def forward(ctx, x, weight, bias, axes, wshape, waxes, eps, running):
        mean, var, xc, rstd = _stats(x, axes, eps)
        xhat = xc * rstd
        y = xhat
        if weight is not None:
            y = y * _view(weight, wshape)
        if bias is not None:
            y = y + _view(bias, wshape)
        if running is not None:
            _update_running(x, axes, mean, var, *running)
        ctx.save_for_backward(x, weight, xhat, rstd)
        ctx.args = (axes, wshape, waxes, eps, bias is not None)
        return y

    @staticmethod
    def backward(ctx, gy):
        x, weight, xhat, rstd = ctx.saved_tensors
        axes, wshape, waxes, eps, has_bias = ctx.args
        if is_grad_enabled():
            # create_graph: rebuild the statistics from x with recorded operations so that the
            # gradient below is itself differentiable with respect to x
            _, _, xc, rstd = _stats(x, axes, eps)
            xhat = xc * rstd
        needs = ctx.needs_input_grad
        gx = gw = gb = None
        if needs[0]:
            # rstd * (g - mean(g) - xhat * mean(g * xhat)), the means folded into one scale
            g = gy if weight is None else gy * _view(weight, wshape)
            inv_n = 1.0 / max(math.prod(x.shape[a] for a in axes), 1)
            sg = xp.sum(g, axis=axes, keepdims=True)
            sgx = xp.sum(g * xhat, axis=axes, keepdims=True)
            gx = (g - (xhat * sgx + sg) * inv_n) * rstd
        if weight is not None and needs[1]:
            gw = _view(xp.sum(gy * xhat, axis=waxes), weight.shape)
        if has_bias and needs[2]:
            gb = xp.sum(gy, axis=waxes)
            if weight is not None:
                gb = _view(gb, weight.shape)
        return gx, gw, gb, None, None, None, None, None


def _update_running(x, axes, mean, var, running_mean, running_var, momentum) -> None:
    """PyTorch's running-statistics update: an exponential average with ``momentum`` of the
    batch mean and of the *unbiased* batch variance (written in place, never recorded)."""
    n = math.prod(x.shape[a] for a in axes)
    with no_grad():  # one write per buffer: each in-place operator would be a copy more
        if running_mean is not None:
            m = xp.reshape(mean, running_mean.shape)
            if m.dtype != running_mean.dtype:
                m = xp.astype(m, running_mean.dtype)
            running_mean[...] = running_mean * (1.0 - momentum) + m * momentum
        if running_var is not None:
            v = xp.reshape(var, running_var.shape)
            if v.dtype != running_var.dtype:
                v = xp.astype(v, running_var.dtype)
            unbiased = n / max(n - 1, 1)
            running_var[...] = running_var * (1.0 - momentum) + v * (unbiased * momentum)


def _check_channel_param(fn: str, name: str, p, c: int, x: Array) -> None:
    if p is None:
        return
    _check_array(fn, name, p)
    if p.shape != (c,):
        raise ValueError(
            f"{fn}: {name} of shape {tuple(p.shape)} does not match the {c} channels of the "
            f"input of shape {tuple(x.shape)} (expected ({c},))"
        )


def batch_norm(
    input: Array,
    running_mean: Array | None,
    running_var: Array | None,
    weight: Array | None = None,
    bias: Array | None = None,
    training: bool = False,
    momentum: float = 0.1,
    eps: float = 1e-5,
) -> Array:
    """Batch normalisation over every axis but the channel axis 1 of an ``(N, C, *)`` input
    (PyTorch's ``F.batch_norm``).

    In training the batch statistics normalise the input and, when given, ``running_mean`` and
    ``running_var`` are updated in place: ``running = (1 - momentum) * running + momentum *
    batch`` (the unbiased batch variance for ``running_var``).  Otherwise the running
    statistics normalise the input.
    """
    fn = "batch_norm"
    _check_array(fn, "input", input)
    _check_float(fn, input)
    if input.ndim < 2:
        raise ValueError(
            f"{fn}: expected an input of shape (N, C) or (N, C, *), got shape {tuple(input.shape)}"
        )
    c = input.shape[1]
    for name, p in (
        ("running_mean", running_mean),
        ("running_var", running_var),
        ("weight", weight),
        ("bias", bias),
    ):
        _check_channel_param(fn, name, p, c, input)
    axes = (0,) + tuple(range(2, input.ndim))
    wshape = (c,) + (1,) * (input.ndim - 2)
    if training:
        n = math.prod(input.shape[a] for a in axes)
        if n <= 1:
            raise ValueError(
                f"{fn}: expected more than 1 value per channel when training, got input of "
                f"shape {tuple(input.shape)}"
            )
        running = None
        if running_mean is not None or running_var is not None:
            running = (running_mean, running_var, float(momentum))
        return _Normalize.apply(input, weight, bias, axes, wshape, axes, float(eps), running)
    if running_mean is None or running_var is None:
        raise ValueError(
            f"{fn}: running_mean and running_var must be given in evaluation mode (training=False)"
        )
    # evaluation: an affine map per channel, with scale and shift computed on (C,) vectors
    scale = 1.0 / xp.sqrt(xp.astype(running_var, input.dtype) + eps)
    if weight is not None:
        scale = scale * weight
    shift = -xp.astype(running_mean, input.dtype) * scale
    if bias is not None:
        shift = shift + bias
    return input * xp.reshape(scale, wshape) + xp.reshape(shift, wshape)


def _normalized_shape(fn: str, normalized_shape) -> tuple:
    if isinstance(normalized_shape, int):
        return (normalized_shape,)
    if isinstance(normalized_shape, Sequence) and all(isinstance(s, int) for s in normalized_shape):
        return tuple(normalized_shape)
    raise TypeError(f"{fn}: normalized_shape must be an int or a sequence of ints")


def _check_normalized(fn: str, x: Array, shape: tuple, weight, bias) -> None:
    k = len(shape)
    if k == 0 or x.ndim < k or tuple(x.shape[x.ndim - k :]) != shape:
        raise ValueError(
            f"{fn}: given normalized_shape={list(shape)}, expected input with shape "
            f"[*, {', '.join(map(str, shape))}], but got input of size {list(x.shape)}"
        )
    for name, p in (("weight", weight), ("bias", bias)):
        if p is None:
            continue
        _check_array(fn, name, p)
        if tuple(p.shape) != shape:
            raise ValueError(
                f"{fn}: {name} of shape {tuple(p.shape)} does not match normalized_shape {shape}"
            )


def layer_norm(
    input: Array,
    normalized_shape: int | Sequence[int],
    weight: Array | None = None,
    bias: Array | None = None,
    eps: float = 1e-5,
) -> Array:
    """Layer normalisation over the last ``len(normalized_shape)`` axes (PyTorch's
    ``F.layer_norm``): biased variance, then ``* weight + bias`` elementwise when given."""
    fn = "layer_norm"
    _check_array(fn, "input", input)
    _check_float(fn, input)
    shape = _normalized_shape(fn, normalized_shape)
    _check_normalized(fn, input, shape, weight, bias)
    k = len(shape)
    axes = tuple(range(input.ndim - k, input.ndim))
    waxes = tuple(range(input.ndim - k))
    return _Normalize.apply(input, weight, bias, axes, shape, waxes, float(eps), None)


def group_norm(
    input: Array,
    num_groups: int,
    weight: Array | None = None,
    bias: Array | None = None,
    eps: float = 1e-5,
) -> Array:
    """Group normalisation of an ``(N, C, *)`` input (PyTorch's ``F.group_norm``): the channels
    are split into ``num_groups`` groups, each normalised over its channels and the spatial axes,
    then scaled and shifted per channel."""
    fn = "group_norm"
    _check_array(fn, "input", input)
    _check_float(fn, input)
    if input.ndim < 2:
        raise ValueError(
            f"{fn}: expected an input of shape (N, C, *), got shape {tuple(input.shape)}"
        )
    n, c = input.shape[0], input.shape[1]
    if not isinstance(num_groups, int) or num_groups <= 0 or c % num_groups:
        raise ValueError(
            f"{fn}: expected the number of channels ({c}) of the input of shape "
            f"{tuple(input.shape)} to be divisible by num_groups={num_groups}"
        )
    _check_channel_param(fn, "weight", weight, c, input)
    _check_channel_param(fn, "bias", bias, c, input)
    grouped = xp.reshape(input, (n, num_groups, -1))
    y = _Normalize.apply(grouped, None, None, (2,), (), (), float(eps), None)
    y = xp.reshape(y, input.shape)
    wshape = (c,) + (1,) * (input.ndim - 2)
    if weight is not None:
        y = y * xp.reshape(weight, wshape)
    if bias is not None:
        y = y + xp.reshape(bias, wshape)
    return y


def rms_norm(
    input: Array,
    normalized_shape: int | Sequence[int],
    weight: Array | None = None,
    eps: float | None = None,
) -> Array:
    """Root-mean-square normalisation over the last ``len(normalized_shape)`` axes (PyTorch's
    ``F.rms_norm``): ``x / sqrt(mean(x**2) + eps) * weight``; ``eps=None`` uses the machine
    epsilon of the input's dtype."""
    fn = "rms_norm"
    _check_array(fn, "input", input)
    _check_float(fn, input)
    shape = _normalized_shape(fn, normalized_shape)
    _check_normalized(fn, input, shape, weight, None)
    if eps is None:
        eps = xp.finfo(input.dtype).eps
    axes = tuple(range(input.ndim - len(shape), input.ndim))
    rms = 1.0 / xp.sqrt(xp.mean(input * input, axis=axes, keepdims=True) + eps)
    y = input * rms
    if weight is not None:
        y = y * weight
    return y
