"""``strided.autograd.Function``: differentiable operations defined outside the package.

PyTorch's API::

    class Exp(Function):
        @staticmethod
        def forward(ctx, x):
            y = xp.exp(x)
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, g):
            (y,) = ctx.saved_tensors
            return g * y

    y = Exp.apply(x)

``forward`` runs with grad mode off; when grad mode is on and a positional array argument
requires grad, ``apply`` puts one node on the tape whose rule calls ``backward`` (recorded in
turn under ``create_graph=True``, so a backward written with namespace functions can be
differentiated again).  ``forward`` may return one array or a tuple (non-array items pass
through); ``backward`` returns one gradient (or None) per positional argument of ``forward``.
"""

from __future__ import annotations

import weakref

from .. import _dtypes as dt
from .._array import Array
from .._tape import AutogradMeta, Mode, Rule, _adopt, _node, edge, in_graph, root_of

__all__ = ["Function", "FunctionCtx", "once_differentiable"]


class FunctionCtx:
    """The ``ctx`` passed to ``forward``/``setup_context`` and ``backward``: saves arrays for
    backward and carries any attribute the function sets on it."""

    def __init__(self) -> None:
        self._to_save: tuple = ()
        self._node = None  # weakref of the recorded node, once there is one
        self._non_differentiable: set = set()
        self.materialize_grads = True
        self.needs_input_grad: tuple = ()

    def save_for_backward(self, *tensors) -> None:
        """Keep ``tensors`` (arrays or None) for ``backward``, where ``saved_tensors`` returns
        them; backward refuses to run if one was changed in place in between."""
        for t in tensors:
            if t is not None and not isinstance(t, Array):
                raise TypeError(
                    f"save_for_backward: can only save strided arrays or None, got "
                    f"{type(t).__name__}; keep other values as attributes of ctx"
                )
        self._to_save = tensors

    @property
    def saved_tensors(self) -> tuple:
        """The arrays given to ``save_for_backward``."""
        if self._node is None:
            return self._to_save
        node = self._node()
        if node is None or node.released:
            raise RuntimeError(
                "saved_tensors: trying to backward through the graph a second time (or to read "
                "saved arrays after they were freed); pass retain_graph=True to the first "
                "backward (or autograd.grad) to go through the graph again"
            )
        from ._engine import _check_saved

        _check_saved(node)
        return node.inputs

    def mark_non_differentiable(self, *outputs) -> None:
        """Declare outputs of ``forward`` that get no gradient (their gradient in ``backward``
        is zero, or None without materialized gradients)."""
        self._non_differentiable.update(id(o) for o in outputs)

    def set_materialize_grads(self, value: bool) -> None:
        """With True (the default) ``backward`` gets zeros for outputs that received no
        gradient; with False it gets None for them."""
        self.materialize_grads = bool(value)

    def mark_dirty(self, *arrays) -> None:
        raise NotImplementedError(
            "mark_dirty: in-place custom functions are not supported; return a new array"
        )


def _function_vjp(node, *grads):
    """The rule of every Function node: materialize missing gradients, call the user's
    backward, check what it returns against the forward's arguments."""
    cls, ctx = node.params
    if ctx.materialize_grads:
        from .._ops.creation import zeros

        grads = tuple(
            zeros(m[0], dtype=m[1], device=m[2]) if g is None and m is not None else g
            for g, m in zip(grads, node.output_meta)
        )
    result = cls.backward(ctx, *grads)
    result = tuple(result) if isinstance(result, (tuple, list)) else (result,)
    n = len(node.input_meta)
    name = node.name
    if len(result) < n or any(r is not None for r in result[n:]):
        raise RuntimeError(
            f"function {name} returned an incorrect number of gradients (expected {n}, got "
            f"{len(result)})"
        )
    for i, (g, meta) in enumerate(zip(result, node.input_meta)):
        if g is None:
            continue
        if meta is None:
            raise RuntimeError(
                f"function {name} returned a gradient different than None at position {i + 1}, "
                "but the corresponding forward input was not an array"
            )
        if not isinstance(g, Array):
            raise TypeError(
                f"function {name} returned a {type(g).__name__} as the gradient at index {i}; "
                "gradients must be strided arrays (or None)"
            )
        shape = meta[0]
        if not _expandable(shape, g._shape):
            raise RuntimeError(
                f"function {name} returned an invalid gradient at index {i} - got "
                f"{list(g._shape)} but expected shape compatible with {list(shape)}"
            )
    return result[:n]


def _expandable(shape: tuple, target: tuple) -> bool:
    """True when an array of ``shape`` broadcasts to ``target``."""
    if len(shape) > len(target):
        return False
    return all(s == t or s == 1 for s, t in zip(reversed(shape), reversed(target)))


_RULE = Rule(_function_vjp, save_inputs=False)


class Function:
    """Base class of differentiable operations written by users (PyTorch's
    ``torch.autograd.Function``): subclass it with static ``forward(ctx, *args, **kwargs)`` and
    ``backward(ctx, *grad_outputs)`` (or ``forward(*args)`` plus
    ``setup_context(ctx, inputs, output)``) and call ``Subclass.apply(*args, **kwargs)``.

    Positional arrays are the differentiable inputs; other arguments (and keyword arguments)
    pass through to ``forward`` untouched and get None as their gradient.
    """

    def __init__(self, *args, **kwargs) -> None:
        raise TypeError(
            f"{type(self).__name__}: call {type(self).__name__}.apply(...) instead of creating "
            "an instance (forward and backward are static methods)"
        )

    @staticmethod
    def forward(ctx, *args, **kwargs):
        """Compute the outputs (grad mode is off here)."""
        raise NotImplementedError("Function subclasses must define a static forward()")

    @staticmethod
    def setup_context(ctx, inputs: tuple, output) -> None:
        """Optional: fill ``ctx`` from the inputs and output, for a ``forward`` without ctx."""
        raise NotImplementedError

    @staticmethod
    def backward(ctx, *grad_outputs):
        """One gradient per positional argument of ``forward`` (None where there is none)."""
        raise NotImplementedError("Function subclasses must define a static backward()")

    @classmethod
    def apply(cls, *args, **kwargs):
        ctx = FunctionCtx()
        ctx.needs_input_grad = tuple(isinstance(a, Array) and in_graph(a) for a in args)
        separate = cls.setup_context is not Function.setup_context
        previous = Mode.enabled
        Mode.enabled = False
        try:
            if separate:
                out = cls.forward(*args, **kwargs)
                cls.setup_context(ctx, args, out)
            else:
                out = cls.forward(ctx, *args, **kwargs)
        finally:
            Mode.enabled = previous
        if not (previous and any(ctx.needs_input_grad)):
            return out
        return _record(cls, ctx, args, out)


def _record(cls, ctx: FunctionCtx, args: tuple, out):
    for a in args:
        if isinstance(a, Array) and a._ag is None and a._base is not None:
            _adopt(a)  # a view of memory a recorded write changed since the view was taken
    single = not isinstance(out, tuple)
    outs = [out] if single else list(out)
    inputs = {id(a) for a in args if isinstance(a, Array)}
    roots = {id(root_of(a)) for a in args if isinstance(a, Array)}
    for i, o in enumerate(outs):
        if isinstance(o, Array) and id(o) in inputs:
            # an input returned as it is: the output is a new view of it, with this history
            outs[i] = o._view(o._shape, o._strides, o._offset)
    saved = ctx._to_save
    node = _node(
        f"{cls.__name__}Backward",
        _RULE,
        (cls, ctx),
        tuple(edge(a) if isinstance(a, Array) and a._ag is not None else None for a in args),
        tuple(_meta(a) for a in args),
        tuple(_meta(o) for o in outs),
        inputs=saved,
        saved=[a for a in saved if a is not None],
    )
    ctx._to_save = ()
    ctx._node = weakref.ref(node)
    for i, o in enumerate(outs):
        if (
            not isinstance(o, Array)
            or o._dtype.kind not in dt.FLOAT_KINDS
            or id(o) in ctx._non_differentiable
            or id(out if single else out[i]) in ctx._non_differentiable
        ):
            continue
        if o._base is not None and id(o._base) not in roots:
            o._base = None  # a view of memory forward allocated: its history stays its own
        o._ag = AutogradMeta(node, i, None if o._base is None else o._base._version)
    if single:
        return outs[0]
    return tuple(outs) if type(out) is tuple else type(out)(*outs)  # named tuples keep their type


def _meta(a):
    return (a._shape, a._dtype, a._device) if isinstance(a, Array) else None


def once_differentiable(backward):
    """Decorator for a ``backward`` that is not written with differentiable operations: it
    runs with grad mode off, so ``create_graph=True`` records nothing through it (PyTorch's
    ``torch.autograd.function.once_differentiable``)."""
    import functools

    @functools.wraps(backward)
    def wrapper(ctx, *grads):
        previous = Mode.enabled
        Mode.enabled = False
        try:
            return backward(ctx, *grads)
        finally:
            Mode.enabled = previous

    return wrapper
