"""The dispatcher's hot path: allocate on a device, coerce operands, run a primitive's kernel.

Everything here is device-independent.  The order of work for every primitive is:
validate (devices, dtype category) -> shape and dtype rules -> allocate -> cast inputs -> kernel.
On ``meta`` the last two steps are skipped: the rules are the whole computation.
"""

from __future__ import annotations

import numpy as np

from .. import _dtypes as dt
from .._array import Array
from .._device import Device, as_device
from .._shapes import broadcast_shapes
from ..dispatch import COPY, EMPTY, FILL, Plan, Primitive, allocate, declare  # noqa: F401

_CATEGORIES = dt.CATEGORIES

#: A fresh C-contiguous array on a device (the dispatcher's allocation step).
empty_on = allocate


def run(prim: Primitive, out: Array, *inputs, **params) -> Array:
    """Call ``prim``'s kernel on an existing output ``out`` (nothing on meta) and return ``out``:
    for compositions that fill parts of one result (concat, scans with an initial value)."""
    dev = out._device
    if dev.type != "meta":
        prim.kernel(dev.type)(out, *inputs, **params)
    return out


def data_dependent(op: str, x: Array) -> None:
    """The rule of an operation whose output size depends on values: it refuses meta arrays."""
    if x._device.type == "meta":
        raise ValueError(
            f"{op}: the output size depends on the values of the input, which a meta array does "
            f"not have (shape {x._shape}, dtype {x._dtype.name})"
        )


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


def _copy_rule(x, /, *, dtype=None, order: str = "C") -> Plan:
    x = to_array(x, "copy")
    out = (x._shape, x._dtype if dtype is None else dtype)
    return Plan(x._device, out, (x,), follow=order == "K")


# ``COPY(x, dtype=...)`` is a fresh C-contiguous copy (with a cast); with ``order="K"`` a dense
# ``x`` keeps its memory order (``astype``, as NumPy's); ``run(COPY, view, x)`` writes ``x``
# into an existing view (assignment, concat)
COPY.rule = _copy_rule
COPY.memoize(
    lambda x, /, *, dtype=None, order="C": (
        (x._dtype, x._shape, x._strides, dtype, order) if x.__class__ is Array else None
    )
)


def astype_to(x: Array, dtype: dt.DType) -> Array:
    """``x`` converted to ``dtype`` (``x`` itself when it already has it)."""
    if x._dtype is dtype:
        return x
    return COPY.call(x, dtype=dtype)


_INT_RANGES: dict = {}  # integer dtype -> (min, max) as Python ints (np.iinfo costs ~1 us)


def check_int_range(op: str, value, dtype: dt.DType) -> None:
    """OverflowError when a Python int does not fit an integer ``dtype``."""
    if dtype.kind in dt.INTEGER_KINDS and isinstance(value, int) and not isinstance(value, bool):
        limits = _INT_RANGES.get(dtype)
        if limits is None:
            info = np.iinfo(dtype.numpy)
            limits = _INT_RANGES[dtype] = (int(info.min), int(info.max))
        if not limits[0] <= value <= limits[1]:
            raise OverflowError(
                f"{op}: Python int {value} is out of range for an array of dtype {dtype.name}"
            )


_STORABLE: set = set()  # (Python scalar type, dtype) pairs whose kinds were found to fit


def check_scalar_fits(op: str, value, dtype: dt.DType) -> None:
    """TypeError/OverflowError unless a Python scalar can be stored in an array of ``dtype``."""
    key = (type(value), dtype)
    if key not in _STORABLE:  # (the kind rule depends on the type alone: asked once per pair)
        if dt.promote(dtype, dt.scalar_dtype(value, dtype)) is not dtype:
            raise TypeError(
                f"{op}: cannot store a Python {type(value).__name__} ({value!r}) in an array "
                f"of dtype {dtype.name}"
            )
        _STORABLE.add(key)
    check_int_range(op, value, dtype)


def stored_scalar(op: str, value, dtype: dt.DType):
    """A scalar ``value`` (Python or NumPy) as the Python scalar a write of it stores, checked to
    fit ``dtype`` (TypeError/OverflowError naming ``op`` otherwise)."""
    v = value if isinstance(value, (bool, int, float, complex)) else value.item()
    check_scalar_fits(op, v, dtype)
    return v


def copy_of(x: Array) -> Array:
    """A fresh C-contiguous copy of ``x`` on its device."""
    return COPY.call(x)


def scalar_array(value, dtype: dt.DType, device: Device, op: str) -> Array:
    """A 0-d array holding a Python scalar, checked against ``dtype``'s range."""
    check_int_range(op, value, dtype)
    return run(FILL, empty_on((), dtype, device), value)


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
    arrays = [a for a in args if isinstance(a, Array)]
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
        if isinstance(a, Array):
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


def elementwise_rule(prim: Primitive):
    """The rule of an elementwise primitive: dtype category, promotion (Python scalars take their
    dtype from the arrays they meet, 2024.12 rules, and reach the kernel as Python scalars),
    broadcasting, and the (compute, result) dtype pair from the primitive's table."""
    table = _dtype_table(prim)
    name = prim.name
    accepts = prim.accepts

    def rule(*args):
        if len(args) == 2:
            x1, x2 = args
            if isinstance(x1, Array):
                if isinstance(x2, Array):  # the hot path: two arrays
                    device = x1._device
                    if x2._device is not device and x2._device != device:
                        same_device(name, x1, x2)
                    d1, d2 = x1._dtype, x2._dtype
                    if table[d1] is None or table[d2] is None:
                        check_dtype(name, d2 if table[d1] is not None else d1, accepts)
                    d = d1 if d1 is d2 else dt.promote(d1, d2)
                    s1, s2 = x1._shape, x2._shape
                    shape = s1 if s1 == s2 else broadcast_shapes(s1, s2, op=name)
                    compute, out_dtype = table[d]
                    return Plan(device, (shape, out_dtype), args, compute, follow=True)
                if type(x2) in _PY_SCALARS:
                    return _scalar_plan(x1, x2, args)
            elif type(x1) in _PY_SCALARS and isinstance(x2, Array):
                return _scalar_plan(x2, x1, args)
        elif len(args) == 1 and isinstance(args[0], Array):
            x = args[0]
            d = x._dtype
            if table[d] is None:
                check_dtype(name, d, accepts)
            compute, out_dtype = table[d]
            return Plan(x._device, (x._shape, out_dtype), args, compute, follow=True)
        arrays, device = coerce_operands(name, args)
        d = arrays[0]._dtype
        for a in arrays:
            if table[a._dtype] is None:
                check_dtype(name, a._dtype, accepts)
            if a._dtype is not d:
                d = dt.promote(d, a._dtype)
        shape = broadcast_shapes(*(a._shape for a in arrays), op=name)
        compute, out_dtype = table[d]
        return Plan(device, (shape, out_dtype), arrays, compute, follow=True)

    def _scalar_plan(arr: Array, value, args) -> Plan:
        d = arr._dtype
        sd = dt.scalar_dtype(value, d)
        if table[d] is None or table[sd] is None:
            check_dtype(name, d if table[d] is None else sd, accepts)
        if sd is not d:
            d = dt.promote(d, sd)
        check_int_range(name, value, sd)
        compute, out_dtype = table[d]
        return Plan(arr._device, (arr._shape, out_dtype), args, compute, follow=True)

    return rule


def to_array(x, op: str) -> Array:
    if isinstance(x, Array):
        return x
    raise TypeError(f"{op}: expected a strided array, got {type(x).__name__}")


def resolve_device(device, like: Array | None = None) -> Device:
    if device is None and like is not None:
        return like._device
    return as_device(device)
