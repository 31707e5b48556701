"""Searching (argmax, argmin, nonzero, searchsorted), sorting (sort, argsort) and indexing
(take, take_along_axis, integer-array and boolean-mask indexing of arrays)."""

from __future__ import annotations

import operator

from .. import _dtypes as dt
from .._array import Array
from .._errors import names_its_errors
from .._grad_state import Mode
from .._layout import dense_order
from .._shapes import broadcast_shapes, contiguous_strides, normalize_axis
from ..dispatch import Plan, composite, declare
from . import elementwise as _ew
from .core import (
    FILL,
    astype_to,
    check_dtype,
    copy_of,
    data_dependent,
    empty_on,
    is_scalar,
    run,
    same_device,
    stored_scalar,
    to_array,
)
from .creation import ARANGE
from .manipulation import (
    _remember_wide_copy,
    _wide_copy,
    broadcast_to,
    drop_leading_ones,
    expand_dims,
    reshape,
)
from .reduction import count_nonzero, cumulative_sum
from .reduction import min as min_
from .reduction import sum as sum_

__all__ = [
    "argmax",
    "argmin",
    "nonzero",
    "repeat",
    "searchsorted",
    "sort",
    "argsort",
    "take",
    "take_along_axis",
]

_data_dependent = data_dependent


def _argreduce_rule(name: str):
    def rule(x, /, *, axis=None, keepdims=False) -> Plan:
        x = to_array(x, name)
        check_dtype(name, x._dtype, "real numeric")
        if axis is None:
            if x.size == 0:
                raise ValueError(f"{name}: the array of shape {x._shape} is empty")
            shape = (1,) * x.ndim if keepdims else ()
        else:
            axis = normalize_axis(axis, x.ndim, name)
            if x._shape[axis] == 0:
                raise ValueError(f"{name}: axis {axis} of shape {x._shape} is empty")
            if keepdims:
                shape = x._shape[:axis] + (1,) + x._shape[axis + 1 :]
            else:
                shape = x._shape[:axis] + x._shape[axis + 1 :]
        return Plan(x._device, (shape, dt.default_index), (x,), None, {"axis": axis})

    return rule


ARGMAX = declare("argmax", "argreduce", "real numeric", rule=_argreduce_rule("argmax"))
ARGMIN = declare("argmin", "argreduce", "real numeric", rule=_argreduce_rule("argmin"))


def _argreduce_key(x, /, *, axis=None, keepdims=False):
    """What argmax's and argmin's rule depends on (None: not memoized); and x's strides, so that
    each layout keeps its own dense lane (a vector and every other element of one alternating)."""
    if x.__class__ is not Array:
        return None
    return (x._dtype, x._shape, x._strides, axis, keepdims)


ARGMAX.memoize(_argreduce_key)
ARGMIN.memoize(_argreduce_key)


@names_its_errors
def argmax(x: Array, /, *, axis: int | None = None, keepdims: bool = False) -> Array:
    """Index of the first maximum along ``axis`` (of the flattened array when None)."""
    return ARGMAX.call(x, axis=axis, keepdims=keepdims)


@names_its_errors
def argmin(x: Array, /, *, axis: int | None = None, keepdims: bool = False) -> Array:
    """Index of the first minimum along ``axis`` (of the flattened array when None)."""
    return ARGMIN.call(x, axis=axis, keepdims=keepdims)


def _nonzero_rule(x, /) -> Plan:
    x = to_array(x, "nonzero")
    if x.ndim == 0:
        raise ValueError("nonzero: zero-dimensional arrays are not allowed")
    data_dependent("nonzero", x)
    count = int(count_nonzero(x))
    return Plan(
        x._device,
        ((x.ndim, count), dt.default_index),
        (x,),
        (dt.bool,),
        # (each row of the fresh C-ordered coordinates as a view: no indexing per row)
        finish=lambda coords: tuple(
            coords._view((count,), (1,), coords._offset + d * count) for d in range(x.ndim)
        ),
    )


NONZERO = declare("nonzero", "nonzero", rule=_nonzero_rule)


@names_its_errors
def nonzero(x: Array, /) -> tuple[Array, ...]:
    """Indices of the nonzero elements, one int64 array per dimension, in C order."""
    return NONZERO.call(x)


def _compaction(device, mask: Array, dtype: dt.DType, inputs: tuple, params: dict) -> Plan:
    """The plan of a kernel that compacts the elements where ``mask`` is True (branch-free: it
    writes every position and keeps the selected ones), so its output has one spare element;
    the result is the first ``count``."""
    count = int(count_nonzero(mask))
    return Plan(
        device,
        ((count + 1,), dtype),
        inputs,
        None,
        params,
        finish=lambda out: out._view((count,), (1,), out._offset),
    )


def _mask_offsets_rule(mask, /, *, strides: tuple, offset: int) -> Plan:
    data_dependent("boolean indexing", mask)
    params = {"strides": strides, "offset": offset}
    return _compaction(mask._device, mask, dt.default_index, (mask,), params)


# the element offsets, in an array of the given strides and offset, that a boolean mask selects
# (C order): x[mask] in one pass instead of nonzero's coordinates scaled and summed per axis
MASK_OFFSETS = declare("mask_offsets", "nonzero", rule=_mask_offsets_rule)


def _mask_select_rule(x, mask, /) -> Plan:
    data_dependent("boolean indexing", x)
    return _compaction(x._device, mask, x._dtype, (x, mask), {})


# x[mask] for a mask of x's own shape: the selected elements themselves in one pass (no offsets
# array and no second gather); the device's kernel where it has one, else MASK_OFFSETS + GATHER
MASK_SELECT = declare("mask_select", "take", rule=_mask_select_rule)


def _searchsorted_rule(x1, x2, /, *, side="left") -> Plan:
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
    check_dtype("searchsorted", x2._dtype, "real numeric")
    same_device("searchsorted", x1, x2)
    d = dt.promote(x1._dtype, x2._dtype)
    params = {"right": side == "right"}
    return Plan(x1._device, (x2._shape, dt.default_index), (x1, x2), d, params)


def _isin_sorted_rule(x, haystack, /) -> Plan:
    """Whether each element of ``x`` is among the values of the sorted 1-D ``haystack`` of x's
    dtype (isin checks and prepares both): a bool of x's shape."""
    return Plan(x._device, (x._shape, dt.bool), (x, haystack), None, {})


#: isin's membership test in one pass (the composition searchsorted, clip, take, equal makes
#: four temporaries of x's size); a device without the kernel takes the composition
ISIN_SORTED = declare("isin_sorted", "searchsorted", "real numeric", rule=_isin_sorted_rule)
ISIN_SORTED.memoize(
    lambda x, h, /: (
        (x._dtype, x._shape, h._shape) if x.__class__ is Array and h.__class__ is Array else None
    )
)


SEARCHSORTED = declare("searchsorted", "searchsorted", "real numeric", rule=_searchsorted_rule)
SEARCHSORTED.memoize(
    lambda x1, x2, /, *, side="left": (
        (x1._dtype, x1._shape, x2._dtype, x2._shape, side)
        if x1.__class__ is Array and x2.__class__ is Array and type(side) is str
        else None
    )
)


def searchsorted(x1: Array, x2, /, *, side: str = "left", sorter: Array | None = None) -> Array:
    """Insertion points of ``x2`` into the sorted 1-D ``x1`` (``side``: 'left' or 'right')."""
    if sorter is not None:
        x1 = take(to_array(x1, "searchsorted"), sorter)
    return SEARCHSORTED.call(x1, x2, side=side)


def _sort_rule(name: str, index: bool):
    def rule(x, /, *, axis=-1, descending=False, stable=True) -> Plan:
        x = to_array(x, name)
        if x.ndim == 0:
            raise ValueError(f"{name}: zero-dimensional arrays cannot be sorted")
        axis = normalize_axis(axis, x.ndim, name)
        out = dt.default_index if index else x._dtype
        params = {"axis": axis, "descending": bool(descending)}
        return Plan(x._device, (x._shape, out), (x,), None, params)

    return rule


# any dtype: bool sorts False first, complex lexicographically (real, then imaginary), as NumPy
SORT = declare("sort", "sort", "any", rule=_sort_rule("sort", False))
ARGSORT = declare("argsort", "sort", "any", rule=_sort_rule("argsort", True))


def _sort_memo_key(x, /, *, axis=-1, descending=False, stable=True):
    if x.__class__ is Array and type(axis) is int and type(descending) is bool:
        return (x._dtype, x._shape, axis, descending)
    return None


SORT.memoize(_sort_memo_key)
ARGSORT.memoize(_sort_memo_key)


@names_its_errors
def sort(x: Array, /, *, axis: int = -1, descending: bool = False, stable: bool = True) -> Array:
    """A sorted copy of ``x`` along ``axis`` (NaN last ascending, first descending; complex
    numbers by real part, then imaginary part)."""
    return SORT.call(x, axis=axis, descending=descending, stable=stable)


@names_its_errors
def argsort(x: Array, /, *, axis: int = -1, descending: bool = False, stable: bool = True) -> Array:
    """Indices that sort ``x`` along ``axis``; always stable (equal elements keep their order)."""
    return ARGSORT.call(x, axis=axis, descending=descending, stable=stable)


def _check_indices(op: str, indices: Array) -> None:
    if indices._dtype.kind not in dt.INTEGER_KINDS:
        raise TypeError(f"{op}: indices must have an integer dtype, got {indices._dtype.name}")


def _take_rule(x, indices, /, *, axis=None) -> Plan:
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
    return Plan(x._device, (shape, x._dtype), (x, indices), (None, dt.int64), {"axis": axis})


def _take_along_axis_rule(x, indices, /, *, axis=-1) -> Plan:
    x, indices = to_array(x, "take_along_axis"), to_array(indices, "take_along_axis")
    same_device("take_along_axis", x, indices)
    _check_indices("take_along_axis", indices)
    if x.ndim != indices.ndim or x.ndim == 0:
        raise ValueError(
            f"take_along_axis: x and indices need the same number (>= 1) of dimensions, got "
            f"shapes {x._shape} and {indices._shape}"
        )
    axis = normalize_axis(axis, x.ndim, "take_along_axis")
    rest = x._shape[:axis] + x._shape[axis + 1 :]
    irest = indices._shape[:axis] + indices._shape[axis + 1 :]
    rows = broadcast_shapes(rest, irest, op="take_along_axis")
    shape = rows[:axis] + (indices._shape[axis],) + rows[axis:]
    return Plan(x._device, (shape, x._dtype), (x, indices), (None, dt.int64), {"axis": axis})


TAKE = declare("take", "take", rule=_take_rule)
TAKE.memoize(
    lambda x, indices, /, *, axis=None: (
        (x._dtype, x._shape, indices._dtype, indices._shape, axis)
        if x.__class__ is Array and indices.__class__ is Array
        else None
    )
)
TAKE_ALONG_AXIS = declare("take_along_axis", "take", rule=_take_along_axis_rule)
TAKE_ALONG_AXIS.memoize(
    lambda x, indices, /, *, axis=-1: (
        (x._dtype, x._shape, indices._dtype, indices._shape, axis)
        if x.__class__ is Array and indices.__class__ is Array and type(axis) is int
        else None
    )
)


def _gather_rule(x, offsets, /, *, trailing_strides) -> Plan:
    trailing = x._shape[x.ndim - len(trailing_strides) :]
    params = {"trailing_strides": trailing_strides}
    return Plan(x._device, (offsets._shape + trailing, x._dtype), (x, offsets), None, params)


# integer-array indexing: the rows of x at element offsets
GATHER = declare("gather", "take", rule=_gather_rule)
# writes into an existing array (run on the target, no allocation): assignment and accumulation
# through element offsets (the latter is gather's VJP)
SCATTER = declare("scatter", "write")
SCATTER_ADD = declare("scatter_add", "write")
# x[mask] = scalar for a mask laid out like x, densely: one pass in memory order (a device
# without the kernel takes the mask's offsets and SCATTER)
MASK_FILL = declare("mask_fill", "write")
# run-length decoding into an existing array: x's elements along an axis each repeated counts[i]
# times (repeat with per-element counts; of arange, its gather index; a device without the
# kernel composes the index)
REPEAT_COUNTS = declare("repeat_counts", "write")


@names_its_errors
def take(x: Array, indices: Array, /, *, axis: int | None = None) -> Array:
    """Elements of ``x`` at ``indices`` (1-D, negative counts from the end) along ``axis``."""
    return TAKE.call(x, indices, axis=axis)


@names_its_errors
def take_along_axis(x: Array, indices: Array, /, *, axis: int = -1) -> Array:
    """``x`` gathered along ``axis`` by ``indices`` of the same rank (other dims broadcast)."""
    return TAKE_ALONG_AXIS.call(x, indices, axis=axis)


def _normalize_index_rule(k, /, *, size, axis) -> Plan:
    k = to_array(k, "__getitem__")
    if k._dtype.kind not in dt.INTEGER_KINDS:
        raise IndexError(f"array indices must be integers, got dtype {k._dtype.name}")
    return Plan(k._device, (k._shape, dt.int64), (k,), dt.int64, {"size": size, "axis": axis})


# integer indices with negative ones counted from the end; IndexError (from the kernel, which
# sees the values) where one is out of bounds for an axis of ``size``
NORMALIZE_INDEX = declare("normalize_index", "index", rule=_normalize_index_rule)


def _element_offsets(x: Array, key: tuple) -> tuple[Array | None, tuple, tuple]:
    """Element offsets selected by integer-array/int ``key`` on the leading dims of ``x``.

    Returns (offsets array, its broadcast shape, trailing shape); offsets is None on meta.
    """
    from .creation import asarray

    if len(key) > x.ndim:
        raise IndexError(
            f"too many indices for array: array is {x.ndim}-dimensional, but {len(key)} were "
            "indexed"
        )
    index_arrays = []
    for k in key:
        if not isinstance(k, Array):
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
    offsets = None
    for d, k in enumerate(index_arrays):
        k = NORMALIZE_INDEX(k, size=x._shape[d], axis=d)  # (a fresh array)
        stride = x._strides[d]
        term = k if stride == 1 else _ew.multiply(k, stride)
        offsets = term if offsets is None else _ew.add(offsets, term)
    # a fresh dense array of bshape, without the calls that would change nothing (x[order] = g
    # into a contiguous x: one index array of unit stride at offset 0)
    if offsets._shape != bshape:
        offsets = copy_of(broadcast_to(offsets, bshape))
    if x._offset:
        offsets = _ew.add(offsets, x._offset)
    return offsets, bshape, trailing


def _dense_trailing(x: Array, nkey: int) -> Array:
    """``x`` itself when its trailing (unindexed) dims fit a rank-2 kernel, else a dense copy."""
    return x if x.ndim - nkey <= 2 else copy_of(x)


def index_with_arrays(x: Array, key: tuple) -> Array:
    """``x[key]`` for a key of integer arrays and integers (broadcast together) indexing the
    leading dimensions; the remaining dimensions are kept whole."""
    k = key[0]
    if (
        len(key) == 1
        and isinstance(k, Array)
        and k.ndim == 1
        and k._dtype in (dt.int64, dt.int32)
        and x.ndim >= 1
    ):
        # one 1-D index array: take along axis 0 in one fused pass (bounds check + gather),
        # instead of normalising, scaling and offsetting the indices into a fresh array first
        try:
            return TAKE.call(x, k, axis=0)
        except IndexError as e:
            raise IndexError(f"__getitem__: {str(e).removeprefix('take: ')}") from None
    x = _dense_trailing(x, len(key))
    offsets, bshape, trailing = _element_offsets(x, key)
    return GATHER.call(x, offsets, trailing_strides=x._strides[len(key) :])


def assign_with_arrays(x: Array, key: tuple, value) -> None:
    """``x[key] = value`` for a key of integer arrays and integers (see index_with_arrays)."""
    from .creation import asarray

    offsets, bshape, trailing = _element_offsets(x, key)
    if is_scalar(value):  # checked here so that the error names __setitem__, not asarray
        stored_scalar("__setitem__", value, x._dtype)
    value = value if isinstance(value, Array) else asarray(value, dtype=x._dtype, device=x._device)
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
    shape = bshape + trailing
    if (
        value._dtype is x._dtype
        and value._shape == shape
        and value._strides == contiguous_strides(shape)
        and value._buf is not x._buf
    ):
        dense = value  # already what the kernel reads, in other memory than x's: no copy
    else:
        dense = copy_of(astype_to(broadcast_to(value, shape), x._dtype))
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


def repeat(x: Array, repeats, /, *, axis: int | None = None) -> Array:
    """Each element of ``x`` repeated ``repeats`` times along ``axis`` (flattened when None).

    An int ``repeats`` is a broadcast and a copy; an array of per-element counts makes the output
    size depend on values, so it is refused on meta.
    """
    key = None
    if type(repeats) is int and (axis is None or type(axis) is int):
        key, out = _wide_copy("repeat", x, (repeats,) if axis is None else (repeats, axis))
        if out is not None:
            return out
    x = to_array(x, "repeat")
    source = x
    if axis is None:
        x, axis = reshape(x, (-1,)), 0
    axis = normalize_axis(axis, x.ndim, "repeat")
    n = x._shape[axis]
    if isinstance(repeats, Array):
        data_dependent("repeat", repeats)
        if repeats._dtype.kind not in dt.INTEGER_KINDS:
            raise TypeError(f"repeat: repeats must be an integer array, got {repeats._dtype.name}")
        if repeats.ndim > 1 or (repeats.ndim == 1 and repeats._shape[0] not in (1, n)):
            raise ValueError(
                f"repeat: repeats of shape {repeats._shape} do not match the {n} elements along "
                f"axis {axis} of an array of shape {x._shape}"
            )
        # the runs written in one pass (a slice and a concat per element took 13 ms for 1000
        # elements, NumPy 0.08; now 0.07)
        return _repeat_counts(x, broadcast_to(repeats, (n,)), axis)
    r = operator.index(repeats)
    if r < 0:
        raise ValueError(f"repeat: repeats must be non-negative, got {r}")
    shape = x._shape
    expanded = expand_dims(x, axis + 1)
    wide = broadcast_to(expanded, shape[: axis + 1] + (r,) + shape[axis + 1 :])
    out = reshape(wide, shape[:axis] + (n * r,) + shape[axis + 1 :])
    return _remember_wide_copy(key, source, wide, out)


def _checked_counts(op: str, counts: Array) -> tuple[Array, int]:
    """``counts`` as int64 (a 1-D integer array off meta: its caller refused meta), checked
    non-negative (ValueError naming ``op`` otherwise), and their sum: the length of the
    result."""
    counts = astype_to(counts, dt.int64)
    if not counts._shape[0]:
        return counts, 0
    low = int(min_(counts))
    if low < 0:
        raise ValueError(f"{op}: repeats must be non-negative, got {low}")
    return counts, int(sum_(counts))


def _repeat_counts(x: Array, counts: Array, axis: int) -> Array:
    """``x`` with its i-th element along ``axis`` repeated ``counts[i]`` times (a 1-D integer
    array as long as that axis): one pass of the device's kernel into the result where nothing
    records, else a gather by the run-length index (take carries the gradient)."""
    counts, total = _checked_counts("repeat", counts)
    device = x._device
    shape = x._shape[:axis] + (total,) + x._shape[axis + 1 :]
    has_kernel = device.type in REPEAT_COUNTS.kernels
    if has_kernel and counts._strides != (1,):
        counts = copy_of(counts)  # (a broadcast count: the kernel reads one per element)
    base = x._base
    tracked = Mode.enabled and (x._ag is not None or (base is not None and base._ag is not None))
    if has_kernel and total and not tracked:
        if not x.is_contiguous():
            x = copy_of(x)
        out = empty_on(shape, x._dtype, device)
        return run(REPEAT_COUNTS, out, x, counts, axis=axis)
    if not total:
        return take(x, empty_on((0,), dt.int64, device), axis=axis)
    if has_kernel:
        n = counts._shape[0]
        positions = run(ARANGE, empty_on((n,), dt.int64, device), start=0, step=1)
        index = run(REPEAT_COUNTS, empty_on((total,), dt.int64, device), positions, counts, axis=0)
    else:
        # a mark at each run's first position (runs of zero share the next one's), their
        # running count less one
        n = counts._shape[0]
        ends = cumulative_sum(counts)
        marks = run(FILL, empty_on((total + 1,), dt.int64, device), 0)
        ones = run(FILL, empty_on((n,), dt.int64, device), 1)
        marks = index_add(marks, ones, (_ew.subtract(ends, counts),))
        index = _ew.subtract(cumulative_sum(marks[:total]), 1)
    return take(x, index, axis=axis)


@composite("index_add", 2)
def index_add(x: Array, values: Array, /, key) -> Array:
    """A copy of ``x`` with ``values`` added at the advanced index ``key``; repeated indices
    accumulate (the backward of integer-array and boolean indexing, take and take_along_axis)."""
    x, values = to_array(x, "index_add"), to_array(values, "index_add")
    out = copy_of(x)
    key = _array_key(out, key)
    offsets, bshape, trailing = _element_offsets(out, key)
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
    masks = [k for k in key if isinstance(k, Array) and k._dtype is dt.bool]
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


@composite("getitem_arrays", 1)
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
        if mask._shape == x._shape and x._device.type in MASK_SELECT.kernels:
            return MASK_SELECT.call(x, mask)
        if mask._shape == x._shape[: mask.ndim] and x._device.type in MASK_OFFSETS.kernels:
            _data_dependent("boolean indexing", x)
            x = _dense_trailing(x, mask.ndim)
            offsets = MASK_OFFSETS.call(mask, strides=x._strides[: mask.ndim], offset=x._offset)
            return GATHER.call(x, offsets, trailing_strides=x._strides[mask.ndim :])
        return index_with_arrays(x, mask_to_key(x, mask))
    return index_with_arrays(x, key)


def getitem_array_key(x: Array, key) -> Array:
    """``x[key]`` where ``key`` holds arrays: what ``Array.__getitem__`` calls.  The commonest
    cases, an untracked ``x`` indexed by one 1-D int64/int32 array on its device or by a
    boolean mask of its shape, go straight to ``take`` along axis 0 or the mask's compaction
    (the composite's layers cost about 2 us of a 4096-element gather)."""
    if (
        key.__class__ is Array
        and x._shape
        and key._device is x._device
        and x._ag is None
        and (x._base is None or x._base._ag is None)
    ):
        if key._dtype in _ROW_INDEX_DTYPES and len(key._shape) == 1:
            try:
                return TAKE.call(x, key, axis=0)
            except IndexError as e:
                raise IndexError(f"__getitem__: {str(e).removeprefix('take: ')}") from None
        if (
            key._dtype is dt.bool
            and key._shape == x._shape
            and x._device.type in MASK_SELECT.kernels
        ):
            # a boolean mask of x's own shape: the compaction itself (4096 float32: the
            # composite's layers were ~1.5 us of ~9.7)
            return MASK_SELECT.call(x, key)
    return getitem_arrays(x, key)


_ROW_INDEX_DTYPES = (dt.int64, dt.int32)


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
        if (
            mask._shape == x._shape
            and is_scalar(value)
            and mask._strides == x._strides
            and x._device.type in MASK_FILL.kernels
            and (
                x._strides == contiguous_strides(x._shape)
                or dense_order(x._shape, x._strides) is not None
            )
        ):
            v = stored_scalar("__setitem__", value, x._dtype)
            _data_dependent("boolean indexing", x)  # (as every mask: meta refuses it)
            run(MASK_FILL, x, mask, value=v)
            return
        key = mask_to_key(x, mask)
    assign_with_arrays(x, key, value)
