"""Tape-based reverse-mode automatic differentiation, with PyTorch's names and semantics.

Operations on arrays that require gradients are recorded on a tape (``strided._tape``); calling
``y.backward()`` or :func:`grad` plays it backwards with the rules in ``_rules.py``.  Because the
rules are written with namespace functions they run on every device, meta included, and
``create_graph=True`` records them in turn (higher derivatives)::

    import strided as xp
    x = xp.asarray([1.0, 2.0, 3.0], requires_grad=True)
    y = xp.sum(x * x)
    y.backward()
    x.grad                       # Array([2., 4., 6.], dtype=float64)

Grad mode is per thread, as in PyTorch: ``no_grad()`` (or ``set_grad_enabled``) in one thread
leaves recording in every other thread alone, and each new thread starts with grad mode on.

Extension points with PyTorch's names: subclass :class:`Function` (static ``forward(ctx, ...)``
and ``backward(ctx, ...)``, called through ``.apply``) to add a differentiable operation written
outside the package; ``x.register_hook(fn)`` sees (and may replace) the gradient reaching ``x``;
``x.retain_grad()`` keeps a non-leaf's gradient in ``.grad``.
"""

from __future__ import annotations

import functools

from .. import _tape
from .._array import OPERATIONS, Array
from .._grad_state import Mode
from . import (
    _rules,  # noqa: F401  (declares every backward rule)
    _rules_nn_conv,  # noqa: F401  (convolution and pooling)
)
from ._check import gradcheck, gradgradcheck
from ._engine import run_backward
from ._function import Function, FunctionCtx, once_differentiable

__all__ = [
    "backward",
    "grad",
    "no_grad",
    "enable_grad",
    "set_grad_enabled",
    "is_grad_enabled",
    "gradcheck",
    "gradgradcheck",
    "Function",
    "FunctionCtx",
    "once_differentiable",
]


def _array_backward(
    self: Array, gradient=None, retain_graph=None, create_graph: bool = False
) -> None:
    """Accumulate d(self)/d(leaf) into every leaf's ``.grad``; ``gradient`` weights a
    non-scalar ``self`` (PyTorch's ``Tensor.backward``)."""
    backward(self, gradient, retain_graph=retain_graph, create_graph=create_graph)


OPERATIONS["backward"] = _array_backward  # what Array.backward calls
OPERATIONS["retain_grad"] = _tape.retain_grad
OPERATIONS["register_hook"] = _tape.register_hook


def is_grad_enabled() -> bool:
    """True when operations are being recorded."""
    return Mode.enabled


class _GradSwitch:
    """Sets grad mode to ``mode`` inside a ``with`` block, or around each call of a decorated
    function."""

    mode = True

    def __enter__(self):
        self.prev = Mode.enabled
        Mode.enabled = self.mode
        return self

    def __exit__(self, *exc) -> None:
        Mode.enabled = self.prev

    def __call__(self, fn):
        mode = self.mode

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            prev = Mode.enabled
            Mode.enabled = mode
            try:
                return fn(*args, **kwargs)
            finally:
                Mode.enabled = prev

        return wrapper


class set_grad_enabled(_GradSwitch):
    """Context manager and decorator that turns recording on or off (``set_grad_enabled(False)``
    also works as a plain call, switching it until switched back)."""

    def __init__(self, mode: bool) -> None:
        self.prev = Mode.enabled
        self.mode = bool(mode)
        Mode.enabled = self.mode  # the switch happens at the call, as in PyTorch

    def __enter__(self):
        return self  # already switched; __exit__ restores the mode from before the call

    def __call__(self, fn):
        Mode.enabled = self.prev  # as a decorator, the switch happens per call instead
        return super().__call__(fn)


class no_grad(_GradSwitch):
    """Context manager and decorator: nothing inside is recorded (inference, optimizer steps)."""

    mode = False


class enable_grad(_GradSwitch):
    """Context manager and decorator: record again inside a ``no_grad`` block."""

    mode = True


def _as_tuple(x) -> tuple:
    if x is None:
        return ()
    return tuple(x) if isinstance(x, (list, tuple)) else (x,)


def _initial_grads(outputs: tuple, grad_outputs, what: str) -> list:
    from .._ops.creation import asarray, ones_like

    given = _as_tuple(grad_outputs) if grad_outputs is not None else (None,) * len(outputs)
    if len(given) != len(outputs):
        raise ValueError(f"{what}: got {len(given)} gradients for {len(outputs)} outputs")
    grads = []
    for out, g in zip(outputs, given):
        if not isinstance(out, Array):
            raise TypeError(f"{what}: outputs must be strided arrays, got {type(out).__name__}")
        if out._ag is None:
            raise RuntimeError(
                f"{what}: an output (shape {out.shape}, dtype {out.dtype.name}) does not require "
                "grad and has no history: nothing to differentiate"
            )
        if g is None:
            if out.size != 1:
                raise RuntimeError(
                    f"{what}: the gradient can be implied only for outputs with one element; "
                    f"pass gradient= for the output of shape {out.shape}"
                )
            g = ones_like(out)
        else:
            g = asarray(g, dtype=out.dtype, device=out.device)
            if g.shape != out.shape:
                raise ValueError(
                    f"{what}: the gradient has shape {g.shape}, but the output has shape "
                    f"{out.shape}"
                )
        grads.append(g)
    return grads


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph: bool = False) -> None:
    """Accumulate the gradients of ``tensors`` (weighted by ``grad_tensors``) into the ``.grad``
    of every leaf they depend on."""
    outputs = _as_tuple(tensors)
    if retain_graph is None:
        retain_graph = create_graph
    grads = _initial_grads(outputs, grad_tensors, "backward")
    run_backward(list(outputs), grads, retain_graph=retain_graph, create_graph=create_graph)


def grad(
    outputs,
    inputs,
    grad_outputs=None,
    retain_graph=None,
    create_graph: bool = False,
    allow_unused: bool = False,
) -> tuple:
    """The gradients of ``outputs`` with respect to each of ``inputs``, as a tuple (``.grad`` is
    left alone).  An input the outputs do not depend on raises unless ``allow_unused``, which
    gives None for it."""
    outs = _as_tuple(outputs)
    ins = _as_tuple(inputs)
    for a in ins:
        if not isinstance(a, Array) or a._ag is None:
            raise RuntimeError("grad: every input must be a strided array that requires grad")
    if retain_graph is None:
        retain_graph = create_graph
    grads = _initial_grads(outs, grad_outputs, "grad")
    results = run_backward(
        list(outs), grads, retain_graph=retain_graph, create_graph=create_graph, capture=list(ins)
    )
    for i, r in enumerate(results):
        if r is None and not allow_unused:
            raise RuntimeError(
                f"grad: input {i} (shape {ins[i].shape}) was not used to compute the outputs; "
                "pass allow_unused=True to get None for it"
            )
    return tuple(results)
