"""Views (reshape, permute_dims, expand_dims, squeeze, broadcast_to, ...) and copies (astype,
concat, stack, assignment), plus ``where``.

Views only compute new shape/strides/offset, so they are the same on every device, meta included.
Copies are compositions over the ``copy`` and ``fill`` primitives.
"""

from __future__ import annotations

import operator

from .. import _dtypes as dt
from .._array import Array
from .._device import as_device
from .._errors import names_its_errors
from .._grad_state import Mode
from .._shapes import (
    broadcast_shapes as broadcast_shapes_rule,
)
from .._shapes import (
    broadcast_strides,
    contiguous_strides,
    normalize_axes,
    normalize_axis,
    prod,
    reshape_strides,
)
from ..dispatch import Plan, _observers, composite, declare, dense_order
from . import elementwise as _ew
from .core import (
    COPY,
    FILL,
    check_int_range,
    copy_of,
    empty_on,
    is_scalar,
    run,
    same_device,
    stored_scalar,
    to_array,
)

__all__ = [
    "reshape",
    "permute_dims",
    "matrix_transpose",
    "expand_dims",
    "squeeze",
    "broadcast_to",
    "broadcast_arrays",
    "concat",
    "stack",
    "astype",
    "where",
    "broadcast_shapes",
    "flip",
    "moveaxis",
    "unstack",
    "roll",
    "tile",
    "diff",
]

WHERE = declare("where", "where")


def _to_device_rule(x, device, /, *, stream=None) -> Plan | Array:
    if not isinstance(x, Array):
        raise TypeError(f"to_device: expected a strided array, got {type(x).__name__}")
    if stream is not None:
        raise ValueError(f"to_device: stream must be None on device {x._device}, got {stream!r}")
    dev = as_device(device)
    if dev == x._device:
        return x
    if x._device.type == "meta" and dev.type != "meta":
        raise RuntimeError(
            f"to_device: a meta array has no data to move to {dev} "
            f"(shape {x._shape}, dtype {x._dtype.name})"
        )
    # the transfer runs on the accelerator's side: its backend knows both its memory and the host's
    side = x._device if dev.type == "cpu" else dev
    return Plan(dev, (x._shape, x._dtype), (x,), kernel_device=side)


TO_DEVICE = declare("to_device", "transfer", rule=_to_device_rule)
# the object sharing an array's memory with other libraries (NumPy's __array__, DLPack, Python
# scalars): each device's backend makes its own; kernel(x) -> that object
EXPORT = declare("export", "interchange")


def export(x: Array):
    """What ``x``'s device shares its memory as (a NumPy view on cpu); meta has none."""
    return EXPORT.kernel(x._device.type)(x)


def to_device(x: Array, device, /, *, stream=None) -> Array:
    """A copy of ``x`` on ``device`` (``x`` itself when it is already there); the backends of the
    two devices move the data (to ``meta``: only shape and dtype move)."""
    return TO_DEVICE.call(x, device, stream=stream)


def _target_shape(x: Array, shape) -> tuple:
    """``shape`` as a tuple of ints with a -1 inferred; ValueError unless it holds x's size."""
    if isinstance(shape, int):
        shape = (shape,)
    shape = tuple(operator.index(s) for s in shape)
    size = x.size
    if shape.count(-1) > 1:
        raise ValueError(f"reshape: only one dimension can be -1, got {shape}")
    if -1 in shape:
        known = prod(s for s in shape if s != -1)
        if known == 0 or size % known:
            raise ValueError(f"reshape: cannot reshape array of shape {x._shape} into {shape}")
        shape = tuple(size // known if s == -1 else s for s in shape)
    if any(s < 0 for s in shape) or prod(shape) != size:
        raise ValueError(f"reshape: cannot reshape array of shape {x._shape} into {shape}")
    return shape


def _plain_ints(arg) -> bool:
    """Whether ``arg`` is an int or a tuple of ints, exactly (no bools, floats or NumPy
    integers): the arguments whose geometry is remembered."""
    if type(arg) is int:
        return True
    if type(arg) is not tuple:
        return False
    for v in arg:
        if type(v) is not int:
            return False
    return True


#: (x's shape, x's strides, the requested shape) -> (the target shape, its strides for a view of
#: x or None): what a reshape works out, once per layout (a reshape costs ~3 us otherwise, twice
#: in reshape(): roll of 4096 elements 20.7 -> 10.3 us)
_RESHAPES: dict = {}


def _reshape_geometry(x: Array, shape) -> tuple:
    """(target shape, view strides or None) of reshaping ``x`` to ``shape`` (a -1 inferred;
    ValueError unless the sizes agree), remembered for hashable requests."""
    # (only plain ints: 2.0 == 2 would find a float's request and skip its TypeError)
    key = (x._shape, x._strides, shape) if _plain_ints(shape) else None
    if key is not None:
        r = _RESHAPES.get(key)
        if r is not None:
            return r
    target = _target_shape(x, shape)
    r = (target, reshape_strides(x._shape, x._strides, target))
    if key is not None:
        if len(_RESHAPES) >= 4096:
            _RESHAPES.clear()
        _RESHAPES[key] = r
    return r


def _reshape_rule(x: Array, /, shape, *, copy=None) -> tuple:
    x = to_array(x, "reshape")
    shape, strides = _reshape_geometry(x, shape)
    if strides is None:
        raise ValueError(
            f"reshape: copy=False, but the layout of shape {x._shape} with strides "
            f"{x._strides} cannot be viewed as {shape}"
        )
    return shape, strides, x._offset


def _permute_dims_geometry(x: Array, axes) -> tuple:
    x = to_array(x, "permute_dims")
    n = x.ndim
    axes = tuple(normalize_axis(a, n, "permute_dims") for a in axes)
    if sorted(axes) != list(range(n)):
        raise ValueError(f"permute_dims: axes {axes} is not a permutation of {n} dimensions")
    return tuple(x._shape[a] for a in axes), tuple(x._strides[a] for a in axes), x._offset


#: (rule, x's shape, x's strides, its argument) -> (shape, strides, change of offset) of a view
#: rule's result for plain int arguments: the checks run once per layout (expand_dims 2.3 ->
#: 1.2 us, broadcast_to 5.3 -> 3.3, linalg.diagonal 1.7 -> ~0.7; stack and repeat are made of
#: them)
_VIEW_GEOMETRY: dict = {}


def _remembered_view(rule):
    """(remembered, plain_view) for a view rule ``rule(x, arg)`` -> (shape, strides, offset).

    ``remembered(x, arg)`` is the rule, remembering shape, strides and the change of offset per
    layout and plain-int argument (the offset follows x's, read per call).  ``plain_view(x, arg)``
    is the view itself, made in one frame, where ``x`` is an untracked plain array (see
    ``_untracked_plain``), or None: the caller then takes the primitive, which records the call
    (squeeze 0.67 -> ~0.54 us, NumPy 0.32: the checks, the lookup and the view were three
    calls; what is left is mostly the view's allocation and its nine slots, ~0.2 us).
    """

    def remember(x, arg, key):
        shape, strides, offset = rule(x, arg)
        if len(_VIEW_GEOMETRY) >= 4096:
            _VIEW_GEOMETRY.clear()
        r = _VIEW_GEOMETRY[key] = (shape, strides, offset - x._offset)
        return r

    def remembered(x, arg):
        # (an int argument, the common one, tested inline: _plain_ints' call is ~0.05 us)
        if x.__class__ is not Array or (type(arg) is not int and not _plain_ints(arg)):
            return rule(x, arg)
        key = (rule, x._shape, x._strides, arg)
        r = _VIEW_GEOMETRY.get(key)
        if r is None:
            r = remember(x, arg, key)
        return r[0], r[1], x._offset + r[2]

    def plain_view(x, arg):
        # (_untracked_plain written out: its call was a third of the lane)
        if x.__class__ is not Array or x._ag is not None or _observers:
            return None
        base = x._base
        if base is not None and base._ag is not None:
            return None
        if type(arg) is not int and not _plain_ints(arg):
            return x._view(*rule(x, arg))
        key = (rule, x._shape, x._strides, arg)
        r = _VIEW_GEOMETRY.get(key)
        if r is None:
            r = remember(x, arg, key)
        return x._view(r[0], r[1], x._offset + r[2])

    return remembered, plain_view


def _expand_dims_geometry(x: Array, axis) -> tuple:
    x = to_array(x, "expand_dims")
    axes = axis if isinstance(axis, tuple) else (axis,)
    n = x.ndim + len(axes)
    positions = normalize_axes(axes, n, "expand_dims")
    shape, strides = list(x._shape), list(x._strides)
    for p in positions:
        shape.insert(p, 1)
        strides.insert(p, 0)
    return tuple(shape), tuple(strides), x._offset


_expand_dims_remembered, _expand_dims_view = _remembered_view(_expand_dims_geometry)
_permute_dims_remembered, _permute_dims_view = _remembered_view(_permute_dims_geometry)


def _expand_dims_rule(x: Array, /, axis=0) -> tuple:
    return _expand_dims_remembered(x, axis)


def _permute_dims_rule(x: Array, /, axes) -> tuple:
    return _permute_dims_remembered(x, axes)  # (3-D: 2.9 -> ~1.1 us; NumPy 0.5)


def _squeeze_geometry(x: Array, axis) -> tuple:
    x = to_array(x, "squeeze")
    axes = normalize_axes(axis, x.ndim, "squeeze")
    for a in axes:
        if x._shape[a] != 1:
            raise ValueError(f"squeeze: axis {a} has size {x._shape[a]}, not 1 (shape {x._shape})")
    keep = [i for i in range(x.ndim) if i not in axes]
    return tuple(x._shape[i] for i in keep), tuple(x._strides[i] for i in keep), x._offset


_squeeze_remembered, _squeeze_view = _remembered_view(_squeeze_geometry)


def _squeeze_rule(x: Array, /, axis) -> tuple:
    return _squeeze_remembered(x, axis)  # (2.6 -> ~1 us; NumPy 0.3)


def _broadcast_to_geometry(x: Array, shape) -> tuple:
    x = to_array(x, "broadcast_to")
    shape = tuple(operator.index(s) for s in shape)
    if any(n < 0 for n in shape):
        raise ValueError(f"broadcast_to: negative dimension in shape {shape}")
    if len(shape) < x.ndim or broadcast_shapes_rule(x._shape, shape, op="broadcast_to") != shape:
        raise ValueError(f"broadcast_to: cannot broadcast shape {x._shape} to {shape}")
    return shape, broadcast_strides(x._shape, x._strides, shape), x._offset


_broadcast_to_remembered, _broadcast_to_view = _remembered_view(_broadcast_to_geometry)


def _broadcast_to_rule(x: Array, /, shape) -> tuple:
    return _broadcast_to_remembered(x, shape)


def _flip_rule(x: Array, /, *, axis=None) -> tuple:
    x = to_array(x, "flip")
    axes = normalize_axes(axis, x.ndim, "flip")
    strides, offset = list(x._strides), x._offset
    for a in axes:
        n = x._shape[a]
        if n > 0:
            offset += (n - 1) * strides[a]
        strides[a] = -strides[a]
    return x._shape, tuple(strides), offset


def _as_strided_rule(x: Array, /, shape, strides, offset) -> tuple:
    x = to_array(x, "as_strided")
    if not x.is_contiguous():
        raise ValueError("as_strided: needs a C-contiguous array (take a copy first)")
    return tuple(shape), tuple(strides), x._offset + offset


RESHAPE = declare("reshape", "view", rule=_reshape_rule)
PERMUTE_DIMS = declare("permute_dims", "view", rule=_permute_dims_rule)
EXPAND_DIMS = declare("expand_dims", "view", rule=_expand_dims_rule)
SQUEEZE = declare("squeeze", "view", rule=_squeeze_rule)
BROADCAST_TO = declare("broadcast_to", "view", rule=_broadcast_to_rule)
FLIP = declare("flip", "view", rule=_flip_rule)
# Array.__getitem__ is the only caller (x is an array): its geometry method is the rule itself
GETITEM = declare("getitem", "view", rule=Array._index_geometry)
AS_STRIDED = declare("as_strided", "view", rule=_as_strided_rule)


def reshape(x: Array, /, shape: tuple[int, ...], *, copy: bool | None = None) -> Array:
    """``x`` with a new shape: a view when the layout allows it, otherwise a copy.

    One dimension may be -1 (inferred).  ``copy=True`` always copies; ``copy=False`` raises
    ValueError when a view is impossible.
    """
    x = to_array(x, "reshape")
    if not copy:
        target, strides = _reshape_geometry(x, shape)
        if strides is not None:
            if _untracked_plain(x):  # (the view made here: 1.4 -> ~0.8 us)
                return x._view(target, strides, x._offset)
            return RESHAPE.call(x, shape=shape)
        if copy is False:
            RESHAPE(x, shape=shape)  # raises: the layout cannot be viewed
    return RESHAPE.call(copy_of(x), shape=shape)


def permute_dims(x: Array, /, axes: tuple[int, ...]) -> Array:
    """A view of ``x`` with its dimensions reordered (``axes`` may be negative)."""
    view = _permute_dims_view(x, axes)  # (the remembered view made here: 1.1 -> ~0.7 us)
    return view if view is not None else PERMUTE_DIMS.call(x, axes=axes)


def matrix_transpose(x: Array, /) -> Array:
    """A view of ``x`` with its last two dimensions swapped."""
    if not isinstance(x, Array):
        x = to_array(x, "matrix_transpose")
    if len(x._shape) < 2:
        raise ValueError(f"matrix_transpose: needs at least 2 dimensions, got shape {x._shape}")
    return x.mT


def expand_dims(x: Array, /, axis: int | tuple[int, ...] = 0) -> Array:
    """A view of ``x`` with size-1 dimensions inserted at ``axis`` (an int or a tuple)."""
    view = _expand_dims_view(x, axis)  # (as permute_dims)
    return view if view is not None else EXPAND_DIMS.call(x, axis=axis)


def squeeze(x: Array, /, axis: int | tuple[int, ...]) -> Array:
    """A view of ``x`` without the size-1 dimensions named by ``axis``."""
    view = _squeeze_view(x, axis)  # (as permute_dims: 0.96 -> ~0.54 us)
    return view if view is not None else SQUEEZE.call(x, axis=axis)


def broadcast_to(x: Array, /, shape: tuple[int, ...]) -> Array:
    """A read-through view of ``x`` broadcast to ``shape`` (stride 0 on repeated dimensions)."""
    view = _broadcast_to_view(x, shape)  # (as permute_dims)
    return view if view is not None else BROADCAST_TO.call(x, shape=shape)


def broadcast_arrays(*arrays: Array) -> tuple[Array, ...]:
    """Views of ``arrays`` broadcast to their common shape."""
    arrays = [to_array(a, "broadcast_arrays") for a in arrays]
    shape = broadcast_shapes_rule(*(a._shape for a in arrays), op="broadcast_arrays")
    return tuple(broadcast_to(a, shape) for a in arrays)


def astype(x: Array, dtype, /, *, copy: bool = True, device=None) -> Array:
    """``x`` converted to ``dtype`` (and moved to ``device`` if given)."""
    x = to_array(x, "astype")
    dtype = dt.as_dtype(dtype)
    if device is not None:
        x = x.to_device(as_device(device))
    if x._dtype is dtype and not copy:
        return x
    return COPY.call(x, dtype=dtype, order="K")  # a transposed x stays transposed, as in NumPy


def _result_dtype(op: str, arrays: list[Array]) -> dt.DType:
    d = arrays[0]._dtype
    for a in arrays[1:]:
        d = dt.promote(d, a._dtype)
    return d


#: (axis, (dtype, shape, strides, device type, device index) of each input) -> (shape, dtype,
#: device, strides, axis, extent along it of each input, the backend's slab writer or None):
#: what a concat of such inputs checked and computed
_CONCAT_PLANS: dict = {}
_CONCAT_PLANS_MAX = 1024


def _concat_key(arrays, axis):
    """The key of :data:`_CONCAT_PLANS` for a call; None where the call is not memoized
    (subclasses, other sequences, a non-int axis) or an input is recorded on the tape."""
    if type(axis) is not int or type(arrays) not in (list, tuple):
        return None
    key = [axis]
    for a in arrays:
        if a.__class__ is not Array:
            return None
        if (a._ag is not None or (a._base is not None and a._base._ag is not None)) and (
            Mode.enabled
        ):
            return None  # (the grad mode, a thread-local, is read only for tracked inputs)
        dev = a._device  # its type and index: a Device's own hash is a Python call
        key.append((a._dtype, a._shape, a._strides, dev.type, dev.index))
    return tuple(key)


def _concat_parts(out: Array, arrays, axis: int, extents) -> Array:
    """Copy each of ``arrays`` into its slab of ``out`` along ``axis``."""
    copy = COPY.kernel(out._device.type)
    start, strides, step = out._offset, out._strides, out._strides[axis]
    for a, n in zip(arrays, extents):
        if n:
            copy(out._view(a._shape, strides, start), a)
        start += n * step
    return out


def _slab_writer(out: Array, arrays, axis: int, extents):
    """The backend's one-call form of :func:`_concat_parts` for later calls with inputs laid out
    as ``arrays`` (``fn(arrays) -> output buffer``), where its copy kernel offers one
    (``kernel.slabs``); None otherwise."""
    if out._device.type == "meta":
        return None
    slabs = getattr(COPY.kernel(out._device.type), "slabs", None)
    if slabs is None:
        return None
    starts, start, step = [], out._offset, out._strides[axis]
    for n in extents:
        starts.append(start)
        start += n * step
    return slabs(out._shape, out._strides, out._dtype, arrays, starts)


@names_its_errors  # (the fast path cannot raise; the primitive's errors say concat)
def concat(arrays, /, *, axis: int | None = 0) -> Array:
    """Join arrays along an existing ``axis`` (``None``: flatten first)."""
    # inputs like an earlier call's, none recorded and no observer: the backend's one-call slab
    # writer straight away, without the primitive's pipeline around the rule (which repeats this
    # lookup; 4096 + 4096 float32, same runs: 4.6-4.9 -> 3.4-3.7 us, PyTorch 2.4)
    key = _concat_key(arrays, axis)
    if key is not None and not _observers:
        plan = _CONCAT_PLANS.get(key)
        if plan is not None and plan[6] is not None:
            shape, d, device, strides, _, _, write = plan
            return Array._new(write(arrays), shape, strides, 0, d, device)
    return _concat(arrays, axis=axis)


@composite("concat", 1)
def _concat(arrays, /, *, axis: int | None = 0) -> Array:
    """The concat primitive's rule (see :func:`concat`)."""
    key = _concat_key(arrays, axis)
    plan = _CONCAT_PLANS.get(key) if key is not None else None
    if plan is not None:  # inputs like an earlier call's: its checks and layout hold
        shape, d, device, strides, ax, extents, write = plan
        if write is not None:
            return Array._new(write(arrays), shape, strides, 0, d, device)
        out = empty_on(shape, d, device, strides)
        return out if device.type == "meta" else _concat_parts(out, arrays, ax, extents)
    arrays = [to_array(a, "concat") for a in arrays]
    if not arrays:
        raise ValueError("concat: needs at least one array")
    device = same_device("concat", *arrays)
    if axis is None:
        arrays = [reshape(a, (-1,)) for a in arrays]
        axis = 0
    ndim = arrays[0].ndim
    if ndim == 0:
        raise ValueError("concat: zero-dimensional arrays cannot be concatenated")
    axis = normalize_axis(axis, ndim, "concat")
    ref = arrays[0]._shape
    outside = ref[:axis] + ref[axis + 1 :]
    for a in arrays[1:]:
        sh = a._shape
        if len(sh) != ndim or sh[:axis] + sh[axis + 1 :] != outside:
            raise ValueError(
                f"concat: shapes {', '.join(str(b._shape) for b in arrays)} differ outside axis "
                f"{axis}"
            )
    d = _result_dtype("concat", arrays)
    shape = list(ref)
    shape[axis] = sum(a._shape[axis] for a in arrays)
    shape = tuple(shape)
    strides = _common_order_strides(shape, arrays)
    extents = tuple(a._shape[axis] for a in arrays)
    out = empty_on(shape, d, device, strides)
    if key is not None:
        if len(_CONCAT_PLANS) >= _CONCAT_PLANS_MAX:
            _CONCAT_PLANS.clear()
        _CONCAT_PLANS[key] = (shape, d, device, out._strides, axis, extents,
                              _slab_writer(out, arrays, axis, extents))  # fmt: skip
    return out if device.type == "meta" else _concat_parts(out, arrays, axis, extents)


concat.primitive = _concat.primitive


def _common_order_strides(shape: tuple, arrays) -> tuple | None:
    """Strides for ``shape`` in the axis order that every one of ``arrays`` is densely laid out
    in, when that order is not C's (NumPy's concatenate keeps transposed inputs transposed, so
    each part is a straight copy); None (C order) otherwise."""
    order = None
    for a in arrays:
        st, sh = a._strides, a._shape
        if st == contiguous_strides(sh) or dense_order(sh, st) is None:
            return None
        # size-1 axes (e.g. stack's new axis) go outermost: their strides say nothing
        mine = tuple(sorted(range(len(st)), key=lambda i: (sh[i] == 1, st[i])))
        if order is None:
            order = mine
        elif mine != order:
            return None
    strides = [0] * len(shape)
    step = 1
    for ax in order:
        strides[ax] = step
        step *= shape[ax]
    return tuple(strides)


#: (axis, then each input's dtype, shape, strides and device) -> concat's writer for stacking
#: untracked plain arrays: it reads each input's buffer at its offset, as it would read the
#: input's expand_dims view (4096 float32, two arrays: 5.4 -> ~2 us; PyTorch 2.2)
_STACK_PLANS: dict = {}


def stack(arrays, /, *, axis: int = 0) -> Array:
    """Join arrays of one shape along a new ``axis``."""
    key = None
    if type(arrays) in (list, tuple) and type(axis) is int:
        key = [axis]
        for a in arrays:
            if not _untracked_plain(a):
                key = None
                break
            key.append((a._dtype, a._shape, a._strides, a._device))
        if key is not None:
            key = tuple(key)
            plan = _STACK_PLANS.get(key)
            if plan is not None:
                shape, d, device, strides, write = plan
                return Array._new(write(arrays), shape, strides, 0, d, device)
    arrays = [to_array(a, "stack") for a in arrays]
    if not arrays:
        raise ValueError("stack: needs at least one array")
    shape = arrays[0]._shape
    for a in arrays[1:]:
        if a._shape != shape:
            raise ValueError(
                "stack: all arrays must have one shape, got "
                + ", ".join(str(b._shape) for b in arrays)
            )
    axis = normalize_axis(axis, len(shape) + 1, "stack")
    parts = [expand_dims(a, axis) for a in arrays]
    out = concat(parts, axis=axis)
    if key is not None:
        writer = _concat_writer(parts, axis)
        if writer is not None:
            if len(_STACK_PLANS) >= 1024:
                _STACK_PLANS.clear()
            _STACK_PLANS[key] = writer
    return out


def getitem_basic(x: Array, key) -> Array:
    """``x[key]`` for a basic index on an array in the graph (``Array.__getitem__`` takes
    other views itself): a view, recorded while grad mode is on."""
    if Mode.enabled:
        return GETITEM.recorded_call((x,), {"key": key})
    return GETITEM.call(x, key=key)


def as_strided(x: Array, /, shape: tuple, strides: tuple, offset: int) -> Array:
    """A window on ``x``'s elements in C order (copied first unless ``x`` is C-contiguous):
    ``shape``/``strides`` in elements, ``offset`` from the first element (autograd's view of a
    region written in place)."""
    c = x if x.is_contiguous() else copy_of(x)
    return AS_STRIDED.call(c, shape=shape, strides=strides, offset=offset)


def drop_leading_ones(value: Array, ndim: int) -> Array:
    """``value`` without the leading size-1 dimensions it has beyond ``ndim`` (a view): NumPy and
    PyTorch accept ``x[i] = v`` with ``v.shape == (1,)`` into a 0-d selection, and SciPy relies
    on it."""
    extra = value.ndim - ndim
    if extra <= 0 or any(n != 1 for n in value._shape[:extra]):
        return value
    return value._view(value._shape[extra:], value._strides[extra:], value._offset)


def assign(target: Array, value) -> None:
    """Write ``value`` (an array broadcastable to ``target``, or a scalar) into the view ``target``.

    The value must convert to ``target``'s dtype without changing kind upward (a float into an int
    array is a TypeError), as the standard's ``__setitem__`` rules require.
    """
    d = target._dtype
    if (
        value.__class__ is Array
        and value._dtype is d
        and value._shape == target._shape
        and value._device is target._device
    ):
        # a plain array of the target's dtype, shape and device (x[:h] = y): nothing to
        # convert, check or broadcast (4096 float32 x[:2048] = y: 4.0 -> 3.0 us)
        if value._buf is target._buf and _spans_overlap(value, target):
            value = copy_of(value)
        run(COPY, target, value)
        return
    if is_scalar(value):
        run(FILL, target, stored_scalar("__setitem__", value, d))
        return
    value = to_array(value, "__setitem__")
    same_device("__setitem__", target, value)
    if dt.promote(d, value._dtype) is not d:
        raise TypeError(
            f"__setitem__: cannot store an array of dtype {value._dtype.name} in an array of dtype "
            f"{d.name} without losing information"
        )
    value = drop_leading_ones(value, target.ndim)
    if broadcast_shapes_rule(value._shape, target._shape, op="__setitem__") != target._shape:
        raise ValueError(
            f"__setitem__: value of shape {value._shape} cannot be broadcast to {target._shape}"
        )
    if value._buf is not None and value._buf is target._buf and _spans_overlap(value, target):
        value = copy_of(value)  # overlapping source and destination
    run(COPY, target, value)


def _element_span(a: Array) -> tuple[int, int]:
    """The first and last buffer positions an array's elements can occupy (it may have none)."""
    lo = hi = a._offset
    for n, st in zip(a._shape, a._strides):
        if st > 0:
            hi += st * (n - 1)
        else:
            lo += st * (n - 1)
    return lo, hi


def _spans_overlap(a: Array, b: Array) -> bool:
    """Whether two views of one buffer may share an element: their spans intersect (x[:h] =
    x[h:] does not, and is copied without a temporary: 1M float32 77 -> 40 us)."""
    if 0 in a._shape or 0 in b._shape:
        return False
    a_lo, a_hi = _element_span(a)
    b_lo, b_hi = _element_span(b)
    return a_lo <= b_hi and b_lo <= a_hi


def _where_rule(condition, x1, x2, /) -> Plan:
    condition = to_array(condition, "where")
    # NumPy scalars as the Python scalars they hold (the kernels take exactly bool, int, float
    # and complex by value; np.float64 is a float subclass)
    x1, x2 = (
        v.item() if is_scalar(v) and type(v) not in (bool, int, float, complex) else v
        for v in (x1, x2)
    )
    if condition._dtype is not dt.bool:
        raise TypeError(f"where: condition must have dtype bool, got {condition._dtype.name}")
    arrays = [a for a in (x1, x2) if isinstance(a, Array)]
    for v in (x1, x2):
        if not isinstance(v, Array) and not is_scalar(v):
            raise TypeError(
                f"where: expected strided arrays or Python scalars, got {type(v).__name__}"
            )
    device = same_device("where", condition, *arrays)
    if not arrays:
        # two Python scalars (the standard wants an array; NumPy and PyTorch accept this): the
        # default dtypes of their kinds, promoted
        d = dt.scalar_dtype(x1, None)
    elif len(arrays) == 1:
        d = arrays[0]._dtype
    else:
        d = dt.promote(x1._dtype, x2._dtype)
    values = []
    for v in (x1, x2):
        if isinstance(v, Array):
            values.append(v)
        elif is_scalar(v):
            sd = dt.scalar_dtype(v, d)
            check_int_range("where", v, sd)
            d = dt.promote(d, sd)
            values.append(v)  # a Python scalar reaches the kernel as itself
        else:
            raise TypeError(
                f"where: expected strided arrays or Python scalars, got {type(v).__name__}"
            )
    shapes = [a._shape for a in (condition, *arrays)]
    shape = broadcast_shapes_rule(*shapes, op="where")
    return Plan(device, (shape, d), (condition, *values), (None, d, d), follow=True)


WHERE.rule = _where_rule


def _where_key(condition, x1, x2, /):
    """What ``where``'s rule depends on (None: not memoized): the arrays' dtypes, shapes and
    strides (a non-C layout is followed, never memoized), the scalars' types (an int's value too:
    its range is checked against the dtype)."""
    key = []
    for v in (condition, x1, x2):
        cls = v.__class__
        if cls is Array:
            key.append((v._dtype, v._shape, v._strides))
        elif cls is float or cls is bool or cls is complex:
            key.append(cls)
        elif cls is int:
            key.append((int, v))
        else:
            return None
    return tuple(key)


WHERE.memoize(_where_key)


@names_its_errors
def where(condition: Array, x1, x2, /) -> Array:
    """Elements of ``x1`` where ``condition`` is True, of ``x2`` elsewhere (scalars allowed)."""
    return WHERE.call(condition, x1, x2)


# -- compositions of views and copies (no kernels of their own) ------------------------------------
def broadcast_shapes(*shapes: tuple[int, ...]) -> tuple[int, ...]:
    """The shape that ``shapes`` broadcast to; ValueError when they are incompatible."""
    shapes = tuple(tuple(operator.index(n) for n in s) for s in shapes)
    for s in shapes:
        if any(n < 0 for n in s):
            raise ValueError(f"broadcast_shapes: negative dimension in shape {s}")
    return broadcast_shapes_rule(*shapes)


#: (x's shape, x's strides, axis) -> (strides, change of offset) of flip's view of an untracked
#: plain array: the rule once per layout (1M float64: 1.59 -> 0.42 us; NumPy 0.44)
_FLIPS: dict = {}


@names_its_errors
def flip(x: Array, /, *, axis: int | tuple[int, ...] | None = None) -> Array:
    """A view of ``x`` with the order of elements reversed along ``axis`` (all axes by default)."""
    # (a tracked call records a node, an observer sees the primitive: FLIP does both;
    # _untracked_plain's test written out, as its call is a tenth of this lane's 0.42 us)
    if x.__class__ is Array and x._ag is None and (axis is None or _plain_ints(axis)):
        base = x._base
        if (base is None or base._ag is None) and not _observers:
            key = (x._shape, x._strides, axis)
            r = _FLIPS.get(key)
            if r is None:
                _, strides, offset = _flip_rule(x, axis=axis)
                if len(_FLIPS) >= 4096:
                    _FLIPS.clear()
                r = _FLIPS[key] = (strides, offset - x._offset)
            return x._view(x._shape, r[0], x._offset + r[1])
    return FLIP.call(x, axis=axis)


#: (rank, source, destination) -> moveaxis's permutation, for plain-int arguments
_MOVEAXIS_ORDERS: dict = {}


def moveaxis(x: Array, source, destination, /) -> Array:
    """A view of ``x`` with axes ``source`` moved to positions ``destination``."""
    x = to_array(x, "moveaxis")
    key = None
    if _plain_ints(source) and _plain_ints(destination):
        key = (len(x._shape), source, destination)
        order = _MOVEAXIS_ORDERS.get(key)
        if order is not None:  # (the checks passed for this rank before: 3.5 -> ~1.5 us)
            return permute_dims(x, order)
    order = _moveaxis_order(x, source, destination)
    if key is not None:
        if len(_MOVEAXIS_ORDERS) >= 1024:
            _MOVEAXIS_ORDERS.clear()
        _MOVEAXIS_ORDERS[key] = order
    return permute_dims(x, order)


def _moveaxis_order(x: Array, source, destination) -> tuple:
    src = source if isinstance(source, tuple) else (source,)
    dst = destination if isinstance(destination, tuple) else (destination,)
    if len(src) != len(dst):
        raise ValueError(
            f"moveaxis: source {source} and destination {destination} differ in length"
        )
    src = [normalize_axis(a, x.ndim, "moveaxis") for a in src]
    dst = [normalize_axis(a, x.ndim, "moveaxis") for a in dst]
    if len(set(src)) != len(src) or len(set(dst)) != len(dst):
        raise ValueError(f"moveaxis: repeated axis in {source} or {destination}")
    order = [a for a in range(x.ndim) if a not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return tuple(order)


def unstack(x: Array, /, *, axis: int = 0) -> tuple[Array, ...]:
    """Views of ``x`` split along ``axis`` (the axis is removed)."""
    x = to_array(x, "unstack")
    if x.ndim == 0:
        raise ValueError("unstack: needs an array with at least one dimension")
    axis = normalize_axis(axis, x.ndim, "unstack")
    if _untracked_plain(x):  # the views made directly (10 of (100, 1000): 16 -> ~3 us)
        shape, strides, offset = x._shape, x._strides, x._offset
        step = strides[axis]
        shape, strides = shape[:axis] + shape[axis + 1 :], strides[:axis] + strides[axis + 1 :]
        n = x._shape[axis]
        # (a broadcast axis steps 0: range refuses that step)
        offsets = range(offset, offset + n * step, step) if step else (offset,) * n
        return x._views(shape, strides, offsets)
    lead = (slice(None),) * axis
    return tuple(x[lead + (i,)] for i in range(x._shape[axis]))


def _untracked_plain(x) -> bool:
    """Whether ``x`` is a plain Array that no gradient records, with nobody observing calls: a
    composition may then skip the pipeline of the views and calls it is made of."""
    if x.__class__ is not Array or x._ag is not None or _observers:
        return False
    base = x._base
    return base is None or base._ag is None


def _concat_writer(parts, axis: int):
    """(shape, dtype, device, strides, write) of concat's memoized plan for ``parts`` along
    ``axis`` (``write(parts)`` returns the result's buffer), or None before concat has run on
    parts like these or where its plan has no one-call writer."""
    key = _concat_key(parts, axis)
    plan = _CONCAT_PLANS.get(key) if key is not None else None
    if plan is None or plan[6] is None:
        return None
    return plan[0], plan[1], plan[2], plan[3], plan[6]


#: (x's dtype, shape, strides, device, shift, axis) -> (shape, dtype, device, strides, write) of
#: a roll's result, ``write(x)`` its buffer: an untracked roll of plain ints is then one call of
#: the backend's block writer (4096 float32 along one axis: 8.3 -> ~1.7 us, PyTorch 2.6;
#: ifftshift of 64 x 64, four blocks: 10.2 -> ~3)
_ROLL_PLANS: dict = {}


def roll(x: Array, /, shift, *, axis=None) -> Array:
    """``x`` shifted along ``axis`` (the flattened array when None), wrapping around."""
    key = None
    if _plain_ints(shift) and (axis is None or _plain_ints(axis)) and _untracked_plain(x):
        key = (x._dtype, x._shape, x._strides, x._device, shift, axis)
        plan = _ROLL_PLANS.get(key)
        if plan is not None:
            shape, d, device, strides, write = plan
            return Array._new(write(x), shape, strides, 0, d, device)
    x = to_array(x, "roll")
    if axis is None:
        if isinstance(shift, tuple):
            raise ValueError("roll: a tuple shift needs a tuple axis")
        if len(x._shape) != 1:
            return reshape(roll(reshape(x, (-1,)), shift, axis=0), x._shape)
        axis = 0  # (a 1-D x is its own flattening: no reshapes around the roll)
    shifts = shift if isinstance(shift, tuple) else (shift,)
    axes = axis if isinstance(axis, tuple) else (axis,)
    if len(shifts) == 1 and len(axes) > 1:
        shifts = shifts * len(axes)
    if len(shifts) != len(axes):
        raise ValueError(f"roll: shift {shift} and axis {axis} differ in length")
    moves = []
    for s, a in zip(shifts, axes):
        a = normalize_axis(a, x.ndim, "roll")
        n = x._shape[a]
        moves.append((a, operator.index(s) % n if n else 0))
    shifted = sum(1 for _, s in moves if s)
    if (
        shifted
        and (key is not None or (shifted > 1 and x.size >= _ROLL_BLOCKS_MIN))
        and _untracked_plain(x)
    ):
        return _roll_blocks(x, moves, key)
    out = x
    for a, s in moves:
        n = x._shape[a]
        if s:
            out = concat([_axis_slice(out, a, n - s, None), _axis_slice(out, a, 0, -s)], axis=a)
    return copy_of(out) if out is x else out


#: from this many elements a roll along several axes with shifts of any kind copies blocks
#: (below, the per-axis concats: 64 x 64 9 us against 20 for the blocks' copy calls); plain
#: int shifts always do, through one remembered call of the backend's block writer
_ROLL_BLOCKS_MIN = 1 << 16


def _roll_blocks(x: Array, moves: list, key=None) -> Array:
    """roll of the untracked plain ``x`` along one or several axes at once (``moves``: (axis,
    shift in [0, n)), an axis repeated adds up): each of the 2**k blocks that the shifted axes
    cut x into copied once into its place in a fresh array, where a concat per axis would copy
    the whole array k times (fftshift of 1000 x 1000 float32: two passes, 174 us against
    NumPy's 142).  With a ``key``, the backend's one-call writer of the blocks (its copy
    kernel's ``blocks``, small arrays) is remembered where it has one."""
    shift = {}
    for a, s in moves:
        n = x._shape[a]
        shift[a] = (shift.get(a, 0) + s) % n if n else 0
    cuts = [(a, s, x._shape[a]) for a, s in shift.items() if s]
    shape, dtype, device = x._shape, x._dtype, x._device
    strides = contiguous_strides(shape)  # the fresh result's (C order)
    blocks, starts = [], []
    for corner in range(1 << len(cuts)):
        src_shape = list(x._shape)
        src_off, dst_off = x._offset, 0
        for i, (a, s, n) in enumerate(cuts):
            if corner >> i & 1:  # [0, n - s) of x lands at [s, n)
                src_shape[a] = n - s
                dst_off += s * strides[a]
            else:  # [n - s, n) of x lands at [0, s)
                src_shape[a] = s
                src_off += (n - s) * x._strides[a]
        blocks.append(x._view(tuple(src_shape), x._strides, src_off))
        starts.append(dst_off)
    writer = None
    if key is not None and device.type != "meta":
        writer = getattr(COPY.kernel(device.type), "blocks", None)
    write = writer(shape, strides, dtype, x, blocks, starts) if writer else None
    if write is not None:
        if len(_ROLL_PLANS) >= 1024:
            _ROLL_PLANS.clear()
        _ROLL_PLANS[key] = (shape, dtype, device, strides, write)
        return Array._new(write(x), shape, strides, 0, dtype, device)
    out = empty_on(shape, dtype, device)
    for block, start in zip(blocks, starts):
        run(COPY, out._view(block._shape, strides, start), block)
    return out


#: (op, x's dtype, shape, strides, device, the op's arguments) -> (shape, strides and offset
#: change of the broadcast view of x, the result's shape and strides) of repeat or tile: an
#: untracked call of plain ints is then that view and one copy (4096 float32: repeat 9.1 -> ~3
#: us, tile 10.7 -> ~3; PyTorch 6.0 / 6.9)
_WIDE_COPIES: dict = {}


def _wide_copy(op: str, x, args):
    """(key, result) of repeat/tile by the plan remembered in :data:`_WIDE_COPIES`: the key is
    None where the call is not remembered (then nothing is), the result None before its first
    call."""
    if not (_untracked_plain(x) and _plain_ints(args)):
        return None, None
    key = (op, x._dtype, x._shape, x._strides, x._device, args)
    plan = _WIDE_COPIES.get(key)
    if plan is None:
        return key, None
    wide_shape, wide_strides, delta, shape, strides = plan
    c = copy_of(x._view(wide_shape, wide_strides, x._offset + delta))
    # the copy is fresh and C-ordered: its buffer is the result's, merged dimensions and all
    return key, Array._new(c._buf, shape, strides, 0, c._dtype, c._device)


def _remember_wide_copy(key, x, wide, out) -> Array:
    """Keep repeat's or tile's plan for ``key``: ``wide`` viewed x's memory and ``out`` is (a
    view of) a fresh C-ordered copy of it (else nothing is kept).  Returns ``out``, copied
    where it is a view of x (repetitions of 1): the result is a new array, as NumPy's."""
    if out._buf is x._buf:
        return copy_of(out)
    if (
        key is not None
        and wide._buf is x._buf
        and out._offset == 0
        and out._strides == contiguous_strides(out._shape)
    ):
        if len(_WIDE_COPIES) >= 1024:
            _WIDE_COPIES.clear()
        _WIDE_COPIES[key] = (
            wide._shape, wide._strides, wide._offset - x._offset, out._shape, out._strides
        )  # fmt: skip
    return out


def tile(x: Array, repetitions: tuple[int, ...], /) -> Array:
    """``x`` repeated ``repetitions[i]`` times along each dimension (a broadcast, then a copy)."""
    key, out = _wide_copy("tile", x, repetitions)
    if out is not None:
        return out
    x = to_array(x, "tile")
    reps = tuple(operator.index(r) for r in repetitions)
    if any(r < 0 for r in reps):
        raise ValueError(f"tile: repetitions must be non-negative, got {reps}")
    nd = max(x.ndim, len(reps))
    reps = (1,) * (nd - len(reps)) + reps
    shape = (1,) * (nd - x.ndim) + x._shape
    base = reshape(x, shape)
    # view each dimension d as (1, d), broadcast the 1 to the repetition count, then merge
    inter = tuple(v for r, s in zip(reps, shape) for v in (1, s))
    wide_shape = tuple(v for r, s in zip(reps, shape) for v in (r, s))
    wide = broadcast_to(reshape(base, inter), wide_shape)
    out = reshape(wide, tuple(r * s for r, s in zip(reps, shape)))
    return _remember_wide_copy(key, x, wide, out)


def diff(x: Array, /, n: int = 1, axis: int = -1, *, prepend=None, append=None) -> Array:
    """The ``n``-th forward difference along ``axis`` (``not_equal`` for bool, as in NumPy).

    The standard makes ``axis`` and ``n`` keyword-only; NumPy and PyTorch also take them
    positionally, in this order (``diff(x, 1)``, as scikit-learn calls it), so strided does too.
    """
    x = to_array(x, "diff")
    if x.ndim == 0:
        raise ValueError("diff: needs an array with at least one dimension")
    axis = normalize_axis(axis, x.ndim, "diff")
    n = operator.index(n)
    if n < 0:
        raise ValueError(f"diff: n must be non-negative, got {n}")
    if prepend is not None or append is not None:
        parts = [p for p in (prepend, x, append) if p is not None]
        x = concat([to_array(p, "diff") for p in parts], axis=axis)
    op = _ew.not_equal if x._dtype is dt.bool else _ew.subtract
    for _ in range(n):
        x = op(_axis_slice(x, axis, 1, None), _axis_slice(x, axis, 0, -1))
    return x


def _axis_slice(x: Array, axis: int, start: int, stop: int | None) -> Array:
    """``x[..., start:stop, ...]`` along ``axis`` (a non-negative ``start``, a non-positive or
    None ``stop``, within x's extent there): for an untracked plain array with nobody observing,
    the view made directly (x[...] costs ~0.9 us of indexing), else through indexing, which
    records or reports it."""
    if _untracked_plain(x):
        shape, strides = x._shape, x._strides
        end = shape[axis] + (stop or 0)
        if 0 <= start <= end:
            return x._view(
                shape[:axis] + (end - start,) + shape[axis + 1 :],
                strides,
                x._offset + start * strides[axis],
            )
    return x[(slice(None),) * axis + (slice(start, stop),)]
