"""The dispatcher's hot path: allocate on a device, coerce operands, run a primitive's kernel.

Everything here is device-independent.  The order of work for every primitive is:
validate (devices, dtype category) -> shape and dtype rules -> allocate -> cast inputs -> kernel.
On ``meta`` the last two steps are skipped: the rules are the whole computation.
"""

from __future__ import annotations

import numpy as np

from .. import _dtypes as dt
from .._array import Array
from .._device import META, Device, as_device
from .._shapes import broadcast_shapes, contiguous_strides, prod
from .._tape import Mode as _MODE
from .._tape import in_graph, record
from ..dispatch import _KERNELS, Primitive, declare

_CATEGORIES = dt.CATEGORIES

# allocation is a primitive too, so that each backend owns its memory
EMPTY = declare("empty", "creation")
COPY = declare("copy", "copy")  # strided copy with cast: astype, asarray, setitem, concat
FILL = declare("fill", "fill")  # write a scalar into a (view of an) array


_STRIDES: dict[tuple, tuple] = {}


def empty_on(shape: tuple, dtype: dt.DType, device: Device) -> Array:
    """A fresh C-contiguous array of ``shape``/``dtype`` on ``device`` (uninitialised)."""
    strides = _STRIDES.get(shape)
    if strides is None:
        strides = contiguous_strides(shape)
        if len(_STRIDES) < 4096:  # small shapes recur; the cache stays bounded
            _STRIDES[shape] = strides
    if device.type == "meta":
        return Array._new(None, shape, strides, 0, dtype, META)
    buf = _KERNELS["empty", device.type](prod(shape), dtype)
    return Array._new(buf, shape, strides, 0, dtype, device)


def run(prim: Primitive, out: Array, *inputs, **params) -> Array:
    """Call ``prim``'s kernel for ``out``'s device (nothing on meta) and return ``out``."""
    dev = out._device
    if dev.type != "meta":
        try:
            kern = _KERNELS[prim.name, dev.type]
        except KeyError:
            raise NotImplementedError(
                f"{prim.name}: no kernel is registered for device {dev.type!r}"
            ) from None
        kern(out, *inputs, **params)
    return out


def same_device(op: str, *arrays: Array) -> Device:
    """The common device of ``arrays``; ValueError naming the op and both devices otherwise."""
    dev = arrays[0]._device
    for a in arrays[1:]:
        if a._device != dev:
            raise ValueError(
                f"{op}: arrays are on different devices ({dev} and {a._device}); "
                "move one with .to_device()"
            )
    return dev


def check_dtype(op: str, d: dt.DType, category: str) -> None:
    if d.kind not in _CATEGORIES[category]:
        raise TypeError(f"{op}: expected an array of {category} dtype, got {d.name}")


def astype_to(x: Array, dtype: dt.DType) -> Array:
    """``x`` converted to ``dtype`` (``x`` itself when it already has it)."""
    if x._dtype is dtype:
        return x
    if _MODE.enabled and in_graph(x):
        return record("astype", astype_to, (x,), {"dtype": dtype})
    return run(COPY, empty_on(x._shape, dtype, x._device), x)


def check_int_range(op: str, value, dtype: dt.DType) -> None:
    """OverflowError when a Python int does not fit an integer ``dtype``."""
    if dtype.kind in dt.INTEGER_KINDS and isinstance(value, int) and not isinstance(value, bool):
        info = np.iinfo(dtype.numpy)
        if not info.min <= value <= info.max:
            raise OverflowError(
                f"{op}: Python int {value} is out of range for an array of dtype {dtype.name}"
            )


def check_scalar_fits(op: str, value, dtype: dt.DType) -> None:
    """TypeError/OverflowError unless a Python scalar can be stored in an array of ``dtype``."""
    if dt.promote(dtype, dt.scalar_dtype(value, dtype)) is not dtype:
        raise TypeError(
            f"{op}: cannot store a Python {type(value).__name__} ({value!r}) in an array of "
            f"dtype {dtype.name}"
        )
    check_int_range(op, value, dtype)


def copy_of(x: Array) -> Array:
    """A fresh C-contiguous copy of ``x`` on its device."""
    if _MODE.enabled and in_graph(x):
        return record("copy", copy_of, (x,), {})
    return run(COPY, empty_on(x._shape, x._dtype, x._device), x)


def scalar_array(value, dtype: dt.DType, device: Device, op: str) -> Array:
    """A 0-d array holding a Python scalar, checked against ``dtype``'s range."""
    check_int_range(op, value, dtype)
    if device.type == "meta":
        return Array._new(None, (), (), 0, dtype, META)
    out = empty_on((), dtype, device)
    return run(FILL, out, value)


_PY_SCALARS = frozenset({bool, int, float, complex})


def is_scalar(x) -> bool:
    return isinstance(x, (bool, int, float, complex, np.bool_, np.number)) and not isinstance(
        x, np.ndarray
    )


def coerce_operands(op: str, args: tuple) -> tuple[list[Array], Device]:
    """Turn the operands of an elementwise op into arrays on one device.

    Python scalars take their dtype from the arrays they meet (2024.12 rules); an operation of
    scalars alone is not allowed.
    """
    arrays = [a for a in args if type(a) is Array]
    if not arrays:
        for a in args:
            if not is_scalar(a):
                raise TypeError(
                    f"{op}: expected strided arrays or Python scalars, got {type(a).__name__}"
                )
        raise TypeError(f"{op}: at least one argument must be a strided array")
    device = same_device(op, *arrays) if len(arrays) > 1 else arrays[0]._device
    if len(arrays) == len(args):
        return list(args), device
    like = arrays[0]._dtype
    for a in arrays[1:]:
        like = dt.promote(like, a._dtype)
    out = []
    for a in args:
        if type(a) is Array:
            out.append(a)
        elif is_scalar(a):
            if isinstance(a, np.generic):
                a = a.item()
            out.append(scalar_array(a, dt.scalar_dtype(a, like), device, op))
        else:
            raise TypeError(
                f"{op}: expected strided arrays or Python scalars, got {type(a).__name__}"
            )
    return out, device


# result rules: (compute dtype, output dtype) from the promoted input dtype
def _rule_same(d):
    return d, d


def _rule_bool(d):
    return d, dt.bool


def _rule_real(d):
    return d, dt.real_of(d)


def _rule_float(d):
    c = d if d.kind in dt.FLOAT_KINDS else dt.default_float
    return c, c


_RULES = {"same": _rule_same, "bool": _rule_bool, "real": _rule_real, "float": _rule_float}


def _dtype_table(prim: Primitive) -> dict:
    """dtype -> (compute dtype, output dtype) for every dtype ``prim`` accepts (None: rejected)."""
    kinds = _CATEGORIES[prim.accepts]
    rule = _RULES[prim.result]
    return {d: (rule(d) if d.kind in kinds else None) for d in dt.ALL_DTYPES}


_NO_PARAMS: dict = {}


def elementwise(prim: Primitive, *args) -> Array:
    """Apply an elementwise primitive: promotion, broadcasting, allocation, cast, kernel."""
    if _MODE.enabled:
        for a in args:
            # in_graph(a), inlined: this loop runs on every elementwise call
            if type(a) is Array and (
                a._ag is not None or a._base is not None and a._base._ag is not None
            ):
                return record(prim.name, prim.params["forward"], args, _NO_PARAMS)
    table = prim.params.get("dtype_table")
    if table is None:
        table = prim.params["dtype_table"] = _dtype_table(prim)
    if len(args) == 2 and type(args[0]) is Array and type(args[1]) is Array:
        x1, x2 = arrays = args  # the hot path: two arrays
        device = x1._device
        if x2._device is not device and x2._device != device:
            same_device(prim.name, x1, x2)
        d1, d2 = x1._dtype, x2._dtype
        if table[d1] is None or table[d2] is None:
            check_dtype(prim.name, d2 if table[d1] is not None else d1, prim.accepts)
        d = d1 if d1 is d2 else dt.promote(d1, d2)
        s1, s2 = x1._shape, x2._shape
        shape = s1 if s1 == s2 else broadcast_shapes(s1, s2, op=prim.name)
    elif len(args) == 2 and (type(args[0]) in _PY_SCALARS or type(args[1]) in _PY_SCALARS):
        # array with a Python scalar: the scalar becomes a 0-d array of the array's dtype
        x1, x2 = args
        arr, value = (x1, x2) if type(x1) is Array else (x2, x1)
        if type(arr) is not Array:
            arrays, device = coerce_operands(prim.name, args)  # raises the right error
        device = arr._device
        d = arr._dtype
        sd = dt.scalar_dtype(value, d)
        if table[d] is None or table[sd] is None:
            check_dtype(prim.name, d if table[d] is None else sd, prim.accepts)
        if sd is not d:
            d = dt.promote(d, sd)
        scalar = scalar_array(value, sd, device, prim.name)
        arrays = (arr, scalar) if arr is x1 else (scalar, arr)
        shape = arr._shape
    elif len(args) == 1 and type(args[0]) is Array:
        arrays = args
        device, d, shape = args[0]._device, args[0]._dtype, args[0]._shape
        if table[d] is None:
            check_dtype(prim.name, d, prim.accepts)
    else:
        arrays, device = coerce_operands(prim.name, args)
        d = arrays[0]._dtype
        for a in arrays:
            if table[a._dtype] is None:
                check_dtype(prim.name, a._dtype, prim.accepts)
            if a._dtype is not d:
                d = dt.promote(d, a._dtype)
        shape = broadcast_shapes(*(a._shape for a in arrays), op=prim.name)
    compute, out_dtype = table[d]
    out = empty_on(shape, out_dtype, device)
    if device.type == "meta":
        return out
    for a in arrays:
        if a._dtype is not compute:
            arrays = [astype_to(a, compute) for a in arrays]
            break
    return run(prim, out, *arrays)


def to_array(x, op: str) -> Array:
    if type(x) is Array:
        return x
    raise TypeError(f"{op}: expected a strided array, got {type(x).__name__}")


def resolve_device(device, like: Array | None = None) -> Device:
    if device is None and like is not None:
        return like._device
    return as_device(device)
