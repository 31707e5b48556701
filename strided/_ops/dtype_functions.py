"""Data type functions: astype lives in manipulation; here result_type, can_cast, isdtype,
finfo, iinfo."""

from __future__ import annotations

import numpy as np

from .. import _dtypes as dt
from .._array import Array
from .core import is_scalar

__all__ = ["result_type", "can_cast", "isdtype", "finfo", "iinfo"]

_KIND_NAMES = {
    "bool": frozenset({dt.BOOL}),
    "signed integer": frozenset({dt.SIGNED}),
    "unsigned integer": frozenset({dt.UNSIGNED}),
    "integral": dt.INTEGER_KINDS,
    "real floating": frozenset({dt.REAL}),
    "complex floating": frozenset({dt.COMPLEX}),
    "numeric": dt.NUMERIC_KINDS,
}


def result_type(*arrays_and_dtypes) -> dt.DType:
    """The dtype that results from promoting the given arrays, dtypes and Python scalars."""
    dtypes = [
        a._dtype if isinstance(a, Array) else a for a in arrays_and_dtypes if not is_scalar(a)
    ]
    scalars = [a for a in arrays_and_dtypes if is_scalar(a)]
    if not dtypes:
        raise TypeError("result_type: needs at least one array or dtype")
    d = dt.as_dtype(dtypes[0])
    for other in dtypes[1:]:
        d = dt.promote(d, dt.as_dtype(other))
    for s in scalars:
        d = dt.promote(d, dt.scalar_dtype(s, d))
    return d


def _same_family(a: dt.DType, b: dt.DType) -> bool:
    fa = "b" if a.kind == dt.BOOL else "i" if a.kind in dt.INTEGER_KINDS else "f"
    fb = "b" if b.kind == dt.BOOL else "i" if b.kind in dt.INTEGER_KINDS else "f"
    return fa == fb


def can_cast(from_, to, /) -> bool:
    """True when ``from_`` (a dtype or array) promotes to ``to`` under the standard's table."""
    f = from_._dtype if isinstance(from_, Array) else dt.as_dtype(from_)
    t = dt.as_dtype(to)
    if not _same_family(f, t):
        return False
    try:
        return dt.promote(f, t) is t
    except TypeError:
        return False


def isdtype(dtype, kind) -> bool:
    """True when ``dtype`` is ``kind``: a dtype, a category name, or a tuple of either."""
    if not isinstance(dtype, dt.DType):
        raise TypeError(f"isdtype: expected a strided dtype, got {dtype!r}")
    if isinstance(kind, tuple):
        return any(isdtype(dtype, k) for k in kind)
    if isinstance(kind, dt.DType):
        return dtype is kind
    if isinstance(kind, str):
        try:
            return dtype.kind in _KIND_NAMES[kind]
        except KeyError:
            raise ValueError(
                f"isdtype: unknown kind {kind!r}; expected one of {', '.join(_KIND_NAMES)}"
            ) from None
    raise TypeError(f"isdtype: kind must be a dtype, a string or a tuple, got {kind!r}")


def finfo(type, /) -> dt.finfo_object:
    """Limits of a floating-point dtype (or of an array's dtype)."""
    d = type._dtype if isinstance(type, Array) else dt.as_dtype(type)
    if d.kind not in dt.FLOAT_KINDS:
        raise TypeError(f"finfo: expected a floating-point dtype, got {d.name}")
    info = np.finfo(d.numpy)
    return dt.finfo_object(
        bits=int(info.bits),
        eps=float(info.eps),
        max=float(info.max),
        min=float(info.min),
        smallest_normal=float(info.smallest_normal),
        dtype=dt.real_of(d),
    )


def iinfo(type, /) -> dt.iinfo_object:
    """Limits of an integer dtype (or of an array's dtype)."""
    d = type._dtype if isinstance(type, Array) else dt.as_dtype(type)
    if d.kind not in dt.INTEGER_KINDS:
        raise TypeError(f"iinfo: expected an integer dtype, got {d.name}")
    info = np.iinfo(d.numpy)
    return dt.iinfo_object(bits=int(info.bits), max=int(info.max), min=int(info.min), dtype=d)
