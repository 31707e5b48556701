"""Searching (argmax, argmin, nonzero, searchsorted), sorting (sort, argsort) and indexing
(take, take_along_axis, integer-array and boolean-mask indexing of arrays)."""

from __future__ import annotations

import operator

from .. import _dtypes as dt
from .._array import Array
from .._shapes import broadcast_shapes, normalize_axis, prod
from .._tape import differentiable
from ..dispatch import declare
from .core import (
    astype_to,
    check_dtype,
    check_scalar_fits,
    copy_of,
    empty_on,
    is_scalar,
    run,
    same_device,
    to_array,
)
from .manipulation import broadcast_to, expand_dims, moveaxis, reshape

__all__ = [
    "argmax",
    "argmin",
    "nonzero",
    "searchsorted",
    "sort",
    "argsort",
    "take",
    "take_along_axis",
]

ARGMAX = declare("argmax", "argreduce", "real numeric")
ARGMIN = declare("argmin", "argreduce", "real numeric")
NONZERO = declare("nonzero", "nonzero")
SEARCHSORTED = declare("searchsorted", "searchsorted", "real numeric")
# any dtype: bool sorts False first, complex lexicographically (real, then imaginary), as NumPy
SORT = declare("sort", "sort", "any")
ARGSORT = declare("argsort", "sort", "any")
TAKE = declare("take", "take")
TAKE_ALONG_AXIS = declare("take_along_axis", "take")
GATHER = declare("gather", "take")  # integer-array indexing: rows at element offsets
SCATTER = declare("scatter", "take")  # assignment through integer-array indices
SCATTER_ADD = declare("scatter_add", "take")  # accumulation through indices (gather's VJP)


def _data_dependent(op: str, x: Array) -> None:
    if x._device.type == "meta":
        raise ValueError(
            f"{op}: the output size depends on the values of the input, which a meta array does "
            f"not have (shape {x._shape}, dtype {x._dtype.name})"
        )


def _argreduce(prim, x, axis, keepdims) -> Array:
    x = to_array(x, prim.name)
    check_dtype(prim.name, x._dtype, prim.accepts)
    if axis is None:
        flat = reshape(x, (-1,))
        r = _argreduce(prim, flat, 0, False)
        return reshape(r, (1,) * x.ndim) if keepdims else r
    axis = normalize_axis(axis, x.ndim, prim.name)
    if x._shape[axis] == 0:
        raise ValueError(f"{prim.name}: axis {axis} of shape {x._shape} is empty")
    kept = x._shape[:axis] + x._shape[axis + 1 :]
    out = empty_on(kept, dt.default_index, x._device)
    run(prim, out, moveaxis(x, axis, -1))
    if keepdims:
        out = expand_dims(out, axis)
    return out


def argmax(x: Array, /, *, axis: int | None = None, keepdims: bool = False) -> Array:
    """Index of the first maximum along ``axis`` (of the flattened array when None)."""
    return _argreduce(ARGMAX, x, axis, keepdims)


def argmin(x: Array, /, *, axis: int | None = None, keepdims: bool = False) -> Array:
    """Index of the first minimum along ``axis`` (of the flattened array when None)."""
    return _argreduce(ARGMIN, x, axis, keepdims)


def nonzero(x: Array, /) -> tuple[Array, ...]:
    """Indices of the nonzero elements, one int64 array per dimension, in C order."""
    from .reduction import count_nonzero

    x = to_array(x, "nonzero")
    if x.ndim == 0:
        raise ValueError("nonzero: zero-dimensional arrays are not allowed")
    _data_dependent("nonzero", x)
    count = int(count_nonzero(x))
    coords = empty_on((x.ndim, count), dt.default_index, x._device)
    run(NONZERO, coords, astype_to(x, dt.bool) if x._dtype is not dt.bool else x)
    return tuple(coords[d] for d in range(x.ndim))


def searchsorted(x1: Array, x2, /, *, side: str = "left", sorter: Array | None = None) -> Array:
    """Insertion points of ``x2`` into the sorted 1-D ``x1`` (``side``: 'left' or 'right')."""
    x1 = to_array(x1, "searchsorted")
    if x1.ndim != 1:
        raise ValueError(f"searchsorted: x1 must be 1-D, got shape {x1._shape}")
    if side not in ("left", "right"):
        raise ValueError(f"searchsorted: side must be 'left' or 'right', got {side!r}")
    check_dtype("searchsorted", x1._dtype, "real numeric")
    if is_scalar(x2):
        from .core import scalar_array

        x2 = scalar_array(x2, dt.scalar_dtype(x2, x1._dtype), x1._device, "searchsorted")
    x2 = to_array(x2, "searchsorted")
    same_device("searchsorted", x1, x2)
    check_dtype("searchsorted", x2._dtype, "real numeric")
    d = dt.promote(x1._dtype, x2._dtype)
    if sorter is not None:
        x1 = take(x1, sorter)
    out = empty_on(x2._shape, dt.default_index, x1._device)
    return run(SEARCHSORTED, out, astype_to(x1, d), astype_to(x2, d), right=side == "right")


def _sort(prim, x, axis, descending) -> Array:
    x = to_array(x, prim.name)
    check_dtype(prim.name, x._dtype, prim.accepts)
    if x.ndim == 0:
        raise ValueError(f"{prim.name}: zero-dimensional arrays cannot be sorted")
    axis = normalize_axis(axis, x.ndim, prim.name)
    moved = moveaxis(x, axis, -1)
    out = empty_on(moved._shape, x._dtype if prim is SORT else dt.default_index, x._device)
    run(prim, out, moved, descending=bool(descending))
    return moveaxis(out, -1, axis)


@differentiable("sort", 1)
def sort(x: Array, /, *, axis: int = -1, descending: bool = False, stable: bool = True) -> Array:
    """A sorted copy of ``x`` along ``axis`` (NaN last ascending, first descending; complex
    numbers by real part, then imaginary part)."""
    return _sort(SORT, x, axis, descending)


def argsort(x: Array, /, *, axis: int = -1, descending: bool = False, stable: bool = True) -> Array:
    """Indices that sort ``x`` along ``axis``; always stable (equal elements keep their order)."""
    return _sort(ARGSORT, x, axis, descending)


def _check_indices(op: str, indices: Array) -> None:
    if indices._dtype.kind not in dt.INTEGER_KINDS:
        raise TypeError(f"{op}: indices must have an integer dtype, got {indices._dtype.name}")


@differentiable("take", 2)
def take(x: Array, indices: Array, /, *, axis: int | None = None) -> Array:
    """Elements of ``x`` at ``indices`` (1-D, negative counts from the end) along ``axis``."""
    x, indices = to_array(x, "take"), to_array(indices, "take")
    same_device("take", x, indices)
    _check_indices("take", indices)
    if indices.ndim != 1:
        raise ValueError(f"take: indices must be 1-D, got shape {indices._shape}")
    if axis is None:
        if x.ndim != 1:
            raise ValueError(f"take: axis is required for {x.ndim}-D input")
        axis = 0
    axis = normalize_axis(axis, x.ndim, "take")
    shape = x._shape[:axis] + indices._shape + x._shape[axis + 1 :]
    out = empty_on(shape, x._dtype, x._device)
    if x._device.type != "meta":
        n = x._shape[axis]
        pre, post = prod(x._shape[:axis]), prod(x._shape[axis + 1 :])
        x3 = reshape(x, (pre, n, post))
        run(TAKE, out, x3, astype_to(indices, dt.int64))
    return out


@differentiable("take_along_axis", 2)
def take_along_axis(x: Array, indices: Array, /, *, axis: int = -1) -> Array:
    """``x`` gathered along ``axis`` by ``indices`` of the same rank (other dims broadcast)."""
    x, indices = to_array(x, "take_along_axis"), to_array(indices, "take_along_axis")
    same_device("take_along_axis", x, indices)
    _check_indices("take_along_axis", indices)
    if x.ndim != indices.ndim or x.ndim == 0:
        raise ValueError(
            f"take_along_axis: x and indices need the same number (>= 1) of dimensions, got "
            f"shapes {x._shape} and {indices._shape}"
        )
    axis = normalize_axis(axis, x.ndim, "take_along_axis")
    xm, im = moveaxis(x, axis, -1), moveaxis(indices, axis, -1)
    rows = broadcast_shapes(xm._shape[:-1], im._shape[:-1], op="take_along_axis")
    xm = broadcast_to(xm, rows + xm._shape[-1:])
    im = broadcast_to(im, rows + im._shape[-1:])
    out = empty_on(im._shape, x._dtype, x._device)
    if x._device.type != "meta":
        r = prod(rows)
        run(
            TAKE_ALONG_AXIS,
            out,
            reshape(xm, (r, xm._shape[-1])),
            reshape(astype_to(im, dt.int64), (r, im._shape[-1])),
        )
    return moveaxis(out, -1, axis)


def _element_offsets(x: Array, key: tuple) -> tuple[Array | None, tuple, tuple]:
    """Element offsets selected by integer-array/int ``key`` on the leading dims of ``x``.

    Returns (offsets array, its broadcast shape, trailing shape); offsets is None on meta.
    """
    from .creation import asarray
    from .elementwise import add, greater_equal, less, logical_or, multiply
    from .manipulation import where
    from .reduction import any as any_

    if len(key) > x.ndim:
        raise IndexError(
            f"too many indices for array: array is {x.ndim}-dimensional, but {len(key)} were "
            "indexed"
        )
    index_arrays = []
    for k in key:
        if type(k) is not Array:
            try:
                k = operator.index(k)
            except TypeError:
                raise IndexError(
                    f"index {k!r}: integer-array indices combine only with integers"
                ) from None
            k = asarray(k, device=x._device)
        elif k._dtype.kind not in dt.INTEGER_KINDS:
            raise IndexError(f"array indices must be integers, got dtype {k._dtype.name}")
        index_arrays.append(astype_to(k, dt.int64))
    same_device("__getitem__", x, *index_arrays)
    bshape = broadcast_shapes(*(a._shape for a in index_arrays), op="__getitem__")
    trailing = x._shape[len(key) :]
    if x._device.type == "meta":
        return None, bshape, trailing
    offsets = None
    for d, k in enumerate(index_arrays):
        n = x._shape[d]
        k = where(less(k, 0), add(k, n), k)
        if bool(any_(logical_or(less(k, 0), greater_equal(k, n)))):
            raise IndexError(f"index out of bounds for axis {d} with size {n}")
        term = multiply(k, x._strides[d])
        offsets = term if offsets is None else add(offsets, term)
    offsets = copy_of(add(broadcast_to(offsets, bshape), x._offset))
    return offsets, bshape, trailing


def _dense_trailing(x: Array, nkey: int) -> Array:
    """``x`` itself when its trailing (unindexed) dims fit a rank-2 kernel, else a dense copy."""
    return x if x.ndim - nkey <= 2 else copy_of(x)


def index_with_arrays(x: Array, key: tuple) -> Array:
    """``x[key]`` for a key of integer arrays and integers (broadcast together) indexing the
    leading dimensions; the remaining dimensions are kept whole."""
    x = _dense_trailing(x, len(key))
    offsets, bshape, trailing = _element_offsets(x, key)
    out = empty_on(bshape + trailing, x._dtype, x._device)
    if offsets is None:
        return out
    return run(GATHER, out, x, offsets, trailing_strides=x._strides[len(key) :])


def assign_with_arrays(x: Array, key: tuple, value) -> None:
    """``x[key] = value`` for a key of integer arrays and integers (see index_with_arrays)."""
    from .creation import asarray
    from .manipulation import drop_leading_ones

    offsets, bshape, trailing = _element_offsets(x, key)
    if is_scalar(value):  # checked here so that the error names __setitem__, not asarray
        v = value if isinstance(value, (bool, int, float, complex)) else value.item()
        check_scalar_fits("__setitem__", v, x._dtype)
    value = value if type(value) is Array else asarray(value, dtype=x._dtype, device=x._device)
    if dt.promote(x._dtype, value._dtype) is not x._dtype:
        raise TypeError(
            f"__setitem__: cannot store dtype {value._dtype.name} in an array of dtype "
            f"{x._dtype.name}"
        )
    value = drop_leading_ones(value, len(bshape) + len(trailing))
    if broadcast_shapes(value._shape, bshape + trailing, op="__setitem__") != bshape + trailing:
        raise ValueError(
            f"__setitem__: value of shape {value._shape} cannot be broadcast to the selection's "
            f"shape {bshape + trailing}"
        )
    if offsets is None:
        return
    dense = copy_of(astype_to(broadcast_to(value, bshape + trailing), x._dtype))
    run(SCATTER, x, offsets, dense, trailing_strides=x._strides[len(key) :])


def _array_key(x: Array, key) -> tuple:
    """An advanced index as a key of integer arrays (a boolean mask becomes its coordinates)."""
    kind, key = _split_key(x, key)
    if kind == "mask":
        mask = key[0]
        if mask.ndim == 0:
            raise IndexError("index_add: a 0-d boolean index is not supported")
        return mask_to_key(x, mask)
    return key


@differentiable("index_add", 2)
def index_add(x: Array, values: Array, /, key) -> Array:
    """A copy of ``x`` with ``values`` added at the advanced index ``key``; repeated indices
    accumulate (the backward of integer-array and boolean indexing, take and take_along_axis)."""
    x, values = to_array(x, "index_add"), to_array(values, "index_add")
    out = copy_of(x)
    key = _array_key(out, key)
    offsets, bshape, trailing = _element_offsets(out, key)
    if offsets is None:
        return out
    dense = copy_of(astype_to(broadcast_to(values, bshape + trailing), x._dtype))
    run(SCATTER_ADD, out, offsets, dense, trailing_strides=out._strides[len(key) :])
    return out


def mask_to_key(x: Array, mask: Array) -> tuple:
    """The integer-array key equivalent to the boolean ``mask`` over ``x``'s leading dims."""
    lead = x._shape[: mask.ndim]
    if (
        mask.ndim <= x.ndim
        and 0 in mask._shape
        and all(m in (n, 0) for m, n in zip(mask._shape, lead))
    ):
        # an empty mask selects nothing, whatever the sizes of the dimensions it spans
        return tuple(empty_on((0,), dt.default_index, x._device) for _ in lead)
    if mask._shape != lead:
        raise IndexError(
            f"boolean index of shape {mask._shape} does not match the array's leading dimensions "
            f"{x._shape[: mask.ndim]}"
        )
    _data_dependent("boolean indexing", x)
    return nonzero(mask) if mask.ndim else ()


def _split_key(x: Array, key) -> tuple[str, tuple]:
    """Classify an advanced index: ('mask', (mask,)) or ('arrays', key)."""
    key = key if type(key) is tuple else (key,)
    masks = [k for k in key if type(k) is Array and k._dtype is dt.bool]
    if masks:
        if len(key) != 1:
            raise IndexError(
                "a boolean array index must be the only index (the standard's boolean indexing)"
            )
        return "mask", key
    for k in key:
        if isinstance(k, slice) or k is None or k is Ellipsis:
            raise IndexError(
                "integer-array indices combine only with integers, not with slices, None or "
                "'...' (the standard's integer-array indexing)"
            )
    return "arrays", key


@differentiable("getitem_arrays", 1)
def getitem_arrays(x: Array, key) -> Array:
    """``x[key]`` with a boolean mask or integer arrays in ``key``."""
    kind, key = _split_key(x, key)
    if kind == "mask":
        mask = key[0]
        same_device("__getitem__", x, mask)
        if mask.ndim == 0:
            _data_dependent("boolean indexing", x)
            return (
                expand_dims(x, 0) if bool(mask) else empty_on((0,) + x._shape, x._dtype, x._device)
            )
        return index_with_arrays(x, mask_to_key(x, mask))
    return index_with_arrays(x, key)


def setitem_arrays(x: Array, key, value) -> None:
    """``x[key] = value`` with a boolean mask or integer arrays in ``key``."""
    kind, key = _split_key(x, key)
    if kind == "mask":
        mask = key[0]
        same_device("__setitem__", x, mask)
        if mask.ndim == 0:
            from .manipulation import assign

            # a 0-d mask adds a dimension of size 1: True selects all of x, False nothing
            target = x._view((1,) + x._shape, (0,) + x._strides, x._offset)
            if mask._device.type != "meta" and not bool(mask):  # meta: checked as if True
                target = target._view((0,) + x._shape, (0,) + x._strides, x._offset)
            assign(target, value)
            return
        key = mask_to_key(x, mask)
    assign_with_arrays(x, key, value)
