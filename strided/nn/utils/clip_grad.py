"""Gradient clipping (PyTorch's ``torch.nn.utils.clip_grad_norm_`` / ``clip_grad_value_``)."""

from __future__ import annotations

import math
from collections.abc import Iterable

from ... import _namespace as xp
from ..._array import Array
from ..._grad_state import Mode

__all__ = ["clip_grad_norm_", "clip_grad_value_", "get_total_norm", "clip_grads_with_norm_"]


def _params(parameters) -> list[Array]:
    if isinstance(parameters, Array):
        return [parameters]
    return list(parameters)


def _grads(parameters) -> list[Array]:
    return [p.grad for p in _params(parameters) if p.grad is not None]


def _write(g: Array, value: Array) -> None:
    """``g[...] = value`` unrecorded (gradients are data here, as under no_grad)."""
    prev = Mode.enabled
    Mode.enabled = False
    try:
        g[...] = value
    finally:
        Mode.enabled = prev


def get_total_norm(
    tensors: Iterable[Array] | Array,
    norm_type: float = 2.0,
    error_if_nonfinite: bool = False,
    foreach=None,
) -> Array:
    """The ``norm_type`` norm of all ``tensors`` together (as one concatenated vector)."""
    ts = _params(tensors)
    norm_type = float(norm_type)
    if not ts:
        return xp.asarray(0.0, dtype=xp.float32)
    prev = Mode.enabled
    Mode.enabled = False
    try:
        norms = [xp.linalg.vector_norm(t, ord=norm_type) for t in ts]
        dtype = xp.result_type(*norms) if len(norms) > 1 else norms[0].dtype
        stacked = xp.stack([xp.astype(n, dtype) for n in norms])
        total = xp.linalg.vector_norm(stacked, ord=norm_type)
    finally:
        Mode.enabled = prev
    if error_if_nonfinite and total.device.type != "meta" and not math.isfinite(float(total)):
        raise RuntimeError(
            f"The total norm of order {norm_type} for gradients from `parameters` is "
            "non-finite, so it cannot be clipped. To disable this error and scale the gradients "
            "by the non-finite norm anyway, set `error_if_nonfinite=False`"
        )
    return total


def clip_grads_with_norm_(
    parameters: Iterable[Array] | Array, max_norm: float, total_norm: Array, foreach=None
) -> None:
    """Scale the gradients in place by min(1, max_norm / (total_norm + 1e-6))."""
    grads = _grads(parameters)
    if not grads:
        return
    prev = Mode.enabled
    Mode.enabled = False
    try:
        coef = xp.clip(float(max_norm) / (total_norm + 1e-6), max=1.0)
        for g in grads:
            _write(g, g * xp.astype(coef, g.dtype))
    finally:
        Mode.enabled = prev


def clip_grad_norm_(
    parameters: Iterable[Array] | Array,
    max_norm: float,
    norm_type: float = 2.0,
    error_if_nonfinite: bool = False,
    foreach=None,
) -> Array:
    """Scale the gradients of ``parameters`` in place so that their total ``norm_type`` norm
    (``inf`` for the max-abs norm) is at most ``max_norm``; returns the total norm before
    clipping (a 0-d array).  ``error_if_nonfinite``: raise if that norm is NaN or infinite."""
    params = _params(parameters)
    grads = _grads(params)
    if not grads:
        return xp.asarray(0.0, dtype=xp.float32)
    total = get_total_norm(grads, norm_type, error_if_nonfinite, foreach)
    clip_grads_with_norm_(params, max_norm, total, foreach)
    return total


def clip_grad_value_(parameters: Iterable[Array] | Array, clip_value: float, foreach=None) -> None:
    """Clamp every gradient of ``parameters`` in place to [-clip_value, clip_value]."""
    v = float(clip_value)
    prev = Mode.enabled
    Mode.enabled = False
    try:
        for g in _grads(parameters):
            _write(g, xp.clip(g, -v, v))
    finally:
        Mode.enabled = prev
