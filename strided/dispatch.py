"""The (op, device) registry.

Every primitive is declared once (see ``strided/_ops``) as a :class:`Primitive`; each backend
registers one kernel per primitive with :func:`register`.  The dispatcher computes the result's
shape and dtype from the primitive's rules, allocates the result on the inputs' device, and calls
the kernel.  On ``meta`` no kernel runs: the rules are the whole computation.

Kernels take the freshly allocated output first, then the inputs (already cast to the compute dtype
and broadcast where the primitive says so), then the primitive's keyword parameters::

    @strided.dispatch.register("add", "cpu")
    def add_cpu(out, x1, x2): ...
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

__all__ = ["Primitive", "register", "registered", "kernel", "primitives", "NOT_DIFFERENTIABLE"]

#: Marker for primitives whose outputs carry no gradient (comparisons, integer results, ...).
NOT_DIFFERENTIABLE = "not differentiable"


@dataclass(eq=False)
class Primitive:
    """One operation, declared once.

    ``kind`` names the family of rules it follows (``unary``, ``binary``, ``reduction``, ``scan``,
    ``matmul``, ``copy``, ``fill``, ``where``, ``creation``); ``accepts`` is the dtype category of
    its inputs (see ``strided._dtypes.CATEGORIES``); ``result`` says how the output dtype follows
    from the (promoted) input dtype; ``vjp`` is the backward rule, filled in by the autograd layer
    (``None`` until then, :data:`NOT_DIFFERENTIABLE` where there is none).
    """

    name: str
    kind: str
    accepts: str = "any"
    result: str = "same"
    vjp: Callable | str | None = None
    params: dict = field(default_factory=dict)


_PRIMITIVES: dict[str, Primitive] = {}
_KERNELS: dict[tuple[str, str], Callable] = {}


def declare(
    name: str, kind: str, accepts: str = "any", result: str = "same", **params
) -> Primitive:
    """Declare a primitive (used by ``strided/_ops``); declaring a name twice is an error."""
    if name in _PRIMITIVES:
        raise ValueError(f"primitive {name!r} is already declared")
    p = Primitive(name, kind, accepts, result, params=params)
    _PRIMITIVES[name] = p
    return p


def primitives() -> dict[str, Primitive]:
    """Every declared primitive, by name."""
    return dict(_PRIMITIVES)


def register(op: str, device: str) -> Callable[[Callable], Callable]:
    """Decorator: register ``fn`` as the kernel of primitive ``op`` on device type ``device``."""
    if device not in ("cpu", "cuda", "meta"):
        raise ValueError(f"unknown device type {device!r}: expected 'cpu', 'cuda' or 'meta'")
    if op not in _PRIMITIVES:
        raise KeyError(f"cannot register a kernel for {op!r}: no such primitive is declared")

    def deco(fn: Callable) -> Callable:
        _KERNELS[op, device] = fn
        return fn

    return deco


def registered() -> frozenset[tuple[str, str]]:
    """The set of (op, device type) pairs that have a kernel."""
    return frozenset(_KERNELS)


def kernel(op: str, device_type: str) -> Callable:
    """The kernel of ``op`` on ``device_type``; a clear error where none is registered."""
    try:
        return _KERNELS[op, device_type]
    except KeyError:
        raise NotImplementedError(
            f"{op}: no kernel is registered for device {device_type!r}"
        ) from None
