"""The array object's operators and the other operations its methods call.

``Array``'s dunders call these through ``strided._array.OPERATIONS`` (bound by :func:`bind`).
Each operator calls the same primitive as its namespace function; reflected operators swap the
operands; in-place operators compute the result and write it back, refusing a result whose dtype
or shape differs from the target's (as the standard requires).
"""

from __future__ import annotations

import numpy as np

from .._array import _PY_SCALARS, OPERATIONS, Array
from .._grad_state import Mode
from .._tape import setitem
from ..dispatch import _observers
from .core import COPY, is_scalar, run

_BINARY = {
    "add": "add",
    "sub": "subtract",
    "mul": "multiply",
    "truediv": "divide",
    "floordiv": "floor_divide",
    "mod": "remainder",
    "pow": "pow",
    "and": "bitwise_and",
    "or": "bitwise_or",
    "xor": "bitwise_xor",
    "lshift": "bitwise_left_shift",
    "rshift": "bitwise_right_shift",
}
_COMPARE = {
    "eq": "equal",
    "ne": "not_equal",
    "lt": "less",
    "le": "less_equal",
    "gt": "greater",
    "ge": "greater_equal",
}
_UNARY = {"neg": "negative", "pos": "positive", "abs": "abs", "invert": "bitwise_invert"}


def _operand(other):
    """``other`` as an operand (NumPy arrays are viewed zero-copy), or None if unsupported."""
    if isinstance(other, Array) or is_scalar(other):
        return other
    if isinstance(other, np.ndarray):
        from .creation import asarray

        return asarray(other)
    return None


def _write_back(op: str, target, result):
    if result._shape != target._shape:
        raise ValueError(
            f"{op}: the result has shape {result._shape}, but the target array has shape "
            f"{target._shape}; in-place operations cannot broadcast the target"
        )
    if result._dtype is not target._dtype:
        raise TypeError(
            f"{op}: the result has dtype {result._dtype.name}, but the target array has dtype "
            f"{target._dtype.name}; in-place operations cannot change the dtype"
        )
    setitem(target, Ellipsis, result, _copy_into)
    return target


def _copy_into(target, key, result) -> None:
    run(COPY, target, result)


def _into_self(prim, target, other) -> bool:
    """``target op= other`` with the kernel writing into ``target`` itself (one pass, no
    temporary: 1M float64 ``*=`` 236 -> ~75 us, NumPy 113), where that equals computing the
    result and copying it in (``_write_back``): a ``target`` that is all of its memory in C
    order, a write that records nothing (grad mode off, as in an optimizer's step, or neither
    operand tracked; nobody observing calls), a call whose remembered rule result (the second
    such call on) has ``target``'s shape and dtype, and a backend whose kernel for the op can
    write into its first operand (``into_self``, which refuses an operand overlapping
    ``target`` otherwise than element for element).  False: the caller computes and copies.
    (The tests are written out, not calls of ``_in_graph_args``: 4096 float32 ``+=`` 2.4 ->
    ~2.0 us.)"""
    if target._offset or _observers:
        return False
    if Mode.enabled:
        base = target._base
        if target._ag is not None or (base is not None and base._ag is not None):
            return False
        if other.__class__ is Array and (
            other._ag is not None or (other._base is not None and other._base._ag is not None)
        ):
            return False
    spec = prim.memoized(target, other)
    if spec is None or spec[2] is not target._dtype or spec[0] != target._shape:
        return False
    into = getattr(spec[6], "into_self", None)
    if into is None or target._strides != spec[1] or not into(target, other, spec[4]):
        return False
    base = target._base
    (target if base is None else base)._version += 1
    return True


def _binary(prim, dunder: str):
    def fwd(self, other):
        other = _operand(other)
        if other is None:
            return NotImplemented
        return prim.call(self, other)

    def rev(self, other):
        other = _operand(other)
        if other is None:
            return NotImplemented
        return prim.call(other, self)

    def inplace(self, other):
        if other.__class__ is not Array and other.__class__ not in _PY_SCALARS:
            other = _operand(other)
            if other is None:
                return NotImplemented
        if _into_self(prim, self, other):
            return self
        return _write_back(f"__i{dunder}__", self, prim.call(self, other))

    return fwd, rev, inplace


def _matmul_ops():
    from .linalg import matmul

    def fwd(self, other):
        return matmul(self, other) if isinstance(other, Array) else NotImplemented

    def rev(self, other):
        return matmul(other, self) if isinstance(other, Array) else NotImplemented

    def inplace(self, other):
        return _write_back("__imatmul__", self, matmul(self, other))

    return fwd, rev, inplace


def _array_setitem(x, key, value) -> None:
    setitem(x, key, value, Array._write_item)  # (the method itself: no wrapper frame)


def bind() -> None:
    """Bind every operator of the standard's array object, and the other operations Array's
    methods call, in ``strided._array.OPERATIONS``."""
    from .elementwise import PRIMS
    from .manipulation import assign, export, getitem_basic, permute_dims, to_device
    from .searching import getitem_array_key, setitem_arrays

    for dunder, name in _BINARY.items():
        fwd, rev, inplace = _binary(PRIMS[name], dunder)
        for prefix, fn in (("", fwd), ("r", rev), ("i", inplace)):
            fn.__name__ = f"__{prefix}{dunder}__"
            fn.__doc__ = f"``{name}`` as an operator."
            OPERATIONS[fn.__name__] = fn
    for dunder, name in _COMPARE.items():
        fwd = _binary(PRIMS[name], dunder)[0]
        fwd.__name__ = f"__{dunder}__"
        OPERATIONS[fwd.__name__] = fwd
    for dunder, name in _UNARY.items():
        OPERATIONS[f"__{dunder}__"] = PRIMS[name]
    for name in {*_BINARY.values(), *_COMPARE.values()}:
        OPERATIONS[name] = PRIMS[name]  # what the forward operators call with arrays or scalars
    from .linalg import MATMUL

    OPERATIONS["matmul"] = MATMUL
    for prefix, fn in zip(("", "r", "i"), _matmul_ops()):
        OPERATIONS[f"__{prefix}matmul__"] = fn
    OPERATIONS.update(
        getitem=getitem_basic,
        getitem_arrays=getitem_array_key,
        setitem=_array_setitem,
        setitem_arrays=setitem_arrays,
        assign=assign,
        permute_dims=permute_dims,
        to_device=to_device,
        export=export,
    )
