"""Shape and stride arithmetic shared by every device (pure Python, on the hot path)."""

from __future__ import annotations

import operator

__all__ = [
    "contiguous_strides",
    "broadcast_shapes",
    "broadcast_strides",
    "normalize_axis",
    "normalize_axes",
    "reshape_strides",
    "prod",
    "is_c_contiguous",
]


def prod(shape) -> int:
    n = 1
    for s in shape:
        n *= s
    return n


#: shape -> its C-order strides, for the shapes that recur (bounded)
_C_STRIDES: dict = {}


def contiguous_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    """C-order strides (in elements) of a dense array of ``shape``."""
    tupled = type(shape) is tuple  # (a list is computed each time: it cannot be a key)
    if tupled:
        strides = _C_STRIDES.get(shape)
        if strides is not None:
            return strides
    acc, out = 1, []
    for s in reversed(shape):
        out.append(acc)
        acc *= s if s > 0 else 1
    strides = tuple(reversed(out))
    if tupled and len(_C_STRIDES) < 4096:
        _C_STRIDES[shape] = strides
    return strides


def is_c_contiguous(shape, strides) -> bool:
    acc = 1
    for s, st in zip(reversed(shape), reversed(strides)):
        if s == 0:
            return True
        if s != 1 and st != acc:
            return False
        acc *= s
    return True


#: shapes -> their broadcast shape, for shapes that broadcast (a few hundred kinds of call
#: recur in a program; working it out costs ~1 us, the lookup ~0.1)
_BROADCAST: dict = {}


def broadcast_shapes(*shapes: tuple[int, ...], op: str = "broadcast_shapes") -> tuple[int, ...]:
    """The broadcast shape of ``shapes``; ValueError naming ``op`` and the shapes otherwise."""
    if len(shapes) == 2:
        a, b = shapes
        if a == b:
            return a
    try:
        out = _BROADCAST.get(shapes)
    except TypeError:  # a shape given as a list: worked out, not remembered
        return _broadcast(shapes, op)
    if out is None:
        out = _broadcast(shapes, op)
        if len(_BROADCAST) >= 1024:
            _BROADCAST.clear()
        _BROADCAST[shapes] = out
    return out


def _broadcast(shapes, op: str) -> tuple[int, ...]:
    ndim = max((len(s) for s in shapes), default=0)
    out = [1] * ndim
    for s in shapes:
        off = ndim - len(s)
        for i, d in enumerate(s):
            o = out[off + i]
            if o == 1:
                out[off + i] = d
            elif d != 1 and d != o:
                raise ValueError(
                    f"{op}: shapes {', '.join(str(tuple(x)) for x in shapes)} cannot be broadcast "
                    "together"
                )
    return tuple(out)


def broadcast_strides(shape, strides, to_shape) -> tuple[int, ...]:
    """Strides that view an array of ``shape``/``strides`` as ``to_shape`` (0 on broadcast dims)."""
    off = len(to_shape) - len(shape)
    out = [0] * off
    for s, st in zip(shape, strides):
        out.append(st if s != 1 else 0)
    return tuple(out)


def normalize_axis(axis, ndim: int, op: str) -> int:
    try:
        axis = operator.index(axis)
    except TypeError:
        raise TypeError(f"{op}: axis must be an integer, got {type(axis).__name__}") from None
    if not -ndim <= axis < ndim:
        raise IndexError(f"{op}: axis {axis} is out of bounds for an array of {ndim} dimensions")
    return axis + ndim if axis < 0 else axis


def normalize_axes(axis, ndim: int, op: str) -> tuple[int, ...]:
    """Sorted, unique, non-negative axes; None means all of them."""
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, (tuple, list)):
        axes = tuple(normalize_axis(a, ndim, op) for a in axis)
        if len(set(axes)) != len(axes):
            raise ValueError(f"{op}: repeated axis in {tuple(axis)}")
        return tuple(sorted(axes))
    return (normalize_axis(axis, ndim, op),)


def reshape_strides(shape, strides, new_shape) -> tuple[int, ...] | None:
    """Strides viewing ``shape``/``strides`` as ``new_shape`` without a copy, or None if impossible.

    Groups of old dimensions that are contiguous with each other can be split and merged freely
    (the algorithm NumPy calls attempt_nocopy_reshape).
    """
    if prod(shape) == 0 or not new_shape:
        return contiguous_strides(new_shape)
    old = [(s, st) for s, st in zip(shape, strides) if s != 1]
    new_dims = list(new_shape)
    out = [0] * len(new_dims)
    oi = ni = 0
    no, nn = len(old), len(new_dims)
    while oi < no and ni < nn:
        np_, op_ = new_dims[ni], old[oi][0]
        nj, oj = ni + 1, oi + 1
        while np_ != op_:
            if np_ < op_:
                np_ *= new_dims[nj]
                nj += 1
            else:
                op_ *= old[oj][0]
                oj += 1
        for k in range(oi, oj - 1):
            if old[k][1] != old[k + 1][0] * old[k + 1][1]:
                return None
        out[nj - 1] = old[oj - 1][1]
        for k in range(nj - 1, ni, -1):
            out[k - 1] = out[k] * new_dims[k]
        ni, oi = nj, oj
    # trailing size-1 dimensions of the new shape
    last = out[ni - 1] if ni > 0 else 1
    for k in range(ni, nn):
        out[k] = last
    return tuple(out)
