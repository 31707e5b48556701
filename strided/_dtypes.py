"""Data types: the 13 dtype objects of the array API standard, their categories, and promotion.

A dtype is a singleton :class:`DType`; equality is identity.  Each carries the NumPy dtype used for
CPU buffers and interchange.  Promotion follows the standard's table; across kinds (bool with a
number, integer with floating point, real with complex) strided promotes as PyTorch does, to the
dtype of the "higher" kind, keeping that operand's precision.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = [
    "DType",
    "bool",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "float32",
    "float64",
    "complex64",
    "complex128",
]

_builtin_bool = bool

# kind names double as the isdtype() category names for the single-kind cases
BOOL = "bool"
SIGNED = "signed integer"
UNSIGNED = "unsigned integer"
REAL = "real floating"
COMPLEX = "complex floating"


class DType:
    """A strided data type (e.g. ``strided.float32``)."""

    __slots__ = ("name", "kind", "bits", "numpy", "_rank")

    def __init__(self, name: str, kind: str, bits: int, rank: int):
        self.name = name
        self.kind = kind
        self.bits = bits
        self.numpy = np.dtype(name)
        self._rank = rank

    def __repr__(self) -> str:
        return f"strided.{self.name}"

    __str__ = __repr__

    def __reduce__(self):
        return (_by_name.__getitem__, (self.name,))

    @property
    def itemsize(self) -> int:
        return self.numpy.itemsize


bool = DType("bool", BOOL, 8, 0)  # noqa: A001 - the standard's name
int8 = DType("int8", SIGNED, 8, 1)
int16 = DType("int16", SIGNED, 16, 2)
int32 = DType("int32", SIGNED, 32, 3)
int64 = DType("int64", SIGNED, 64, 4)
uint8 = DType("uint8", UNSIGNED, 8, 1)
uint16 = DType("uint16", UNSIGNED, 16, 2)
uint32 = DType("uint32", UNSIGNED, 32, 3)
uint64 = DType("uint64", UNSIGNED, 64, 4)
float32 = DType("float32", REAL, 32, 5)
float64 = DType("float64", REAL, 64, 6)
complex64 = DType("complex64", COMPLEX, 64, 7)
complex128 = DType("complex128", COMPLEX, 128, 8)

ALL_DTYPES: tuple[DType, ...] = (
    bool,
    int8,
    int16,
    int32,
    int64,
    uint8,
    uint16,
    uint32,
    uint64,
    float32,
    float64,
    complex64,
    complex128,
)
_by_name = {d.name: d for d in ALL_DTYPES}
_by_numpy = {d.numpy: d for d in ALL_DTYPES}

default_int = int64
default_uint = uint64
default_float = float64
default_complex = complex128
default_index = int64

INTEGER_KINDS = frozenset({SIGNED, UNSIGNED})
FLOAT_KINDS = frozenset({REAL, COMPLEX})
NUMERIC_KINDS = frozenset({SIGNED, UNSIGNED, REAL, COMPLEX})

# dtype categories used by op declarations ("which dtypes does this op accept")
CATEGORIES: dict[str, frozenset[str]] = {
    "bool": frozenset({BOOL}),
    "integer": INTEGER_KINDS,
    "integer or boolean": INTEGER_KINDS | {BOOL},
    "real floating": frozenset({REAL}),
    "complex floating": frozenset({COMPLEX}),
    "floating": FLOAT_KINDS,
    "real numeric": frozenset({SIGNED, UNSIGNED, REAL}),
    "numeric": NUMERIC_KINDS,
    "real": frozenset({BOOL, SIGNED, UNSIGNED, REAL}),
    "any": frozenset({BOOL, SIGNED, UNSIGNED, REAL, COMPLEX}),
}


def from_numpy(dt: np.dtype) -> DType:
    """The strided dtype for a NumPy dtype; TypeError if the standard has no such dtype."""
    dt = np.dtype(dt)
    try:
        return _by_numpy[dt.newbyteorder("=") if dt.byteorder not in "=|" else dt]
    except KeyError:
        raise TypeError(f"NumPy dtype {dt} has no strided equivalent") from None


def as_dtype(obj) -> DType:
    """Accept a strided dtype, a dtype name, or a NumPy dtype/scalar type."""
    if isinstance(obj, DType):
        return obj
    if isinstance(obj, str) and obj in _by_name:
        return _by_name[obj]
    if obj is float:
        return default_float
    if obj is int:
        return default_int
    if obj is complex:
        return default_complex
    if obj is _builtin_bool:
        return bool
    try:
        return from_numpy(np.dtype(obj))
    except TypeError:
        raise TypeError(f"{obj!r} is not a strided dtype") from None


def real_of(d: DType) -> DType:
    """float32 for complex64, float64 for complex128, d itself otherwise."""
    if d is complex64:
        return float32
    if d is complex128:
        return float64
    return d


def complex_of(d: DType) -> DType:
    """complex64 for float32 (and smaller), complex128 otherwise."""
    if d.kind == COMPLEX:
        return d
    return complex64 if d is float32 else complex128


def _promote(a: DType, b: DType) -> DType:
    if a is b:
        return a
    ka, kb = a.kind, b.kind
    if ka == kb:
        return a if a._rank >= b._rank else b
    if ka in INTEGER_KINDS and kb in INTEGER_KINDS:
        s, u = (a, b) if ka == SIGNED else (b, a)
        if s.bits > u.bits:
            return s
        if u.bits < 64:
            return _by_name[f"int{2 * u.bits}"]
        raise TypeError(f"{a} and {b} have no common dtype: int64 cannot hold every uint64 value")
    # across kinds: bool < integers < real floating < complex floating
    order = {BOOL: 0, SIGNED: 1, UNSIGNED: 1, REAL: 2, COMPLEX: 3}
    lo, hi = (a, b) if order[ka] < order[kb] else (b, a)
    if hi.kind == COMPLEX and lo.kind == REAL:
        return complex128 if (lo is float64 or hi is complex128) else complex64
    return hi


_PROMOTION: dict[tuple[DType, DType], DType] = {}
for _a in ALL_DTYPES:
    for _b in ALL_DTYPES:
        try:
            _PROMOTION[_a, _b] = _promote(_a, _b)
        except TypeError:
            pass


def promote(a: DType, b: DType) -> DType:
    """The promoted dtype of two dtypes; TypeError where no promotion exists."""
    try:
        return _PROMOTION[a, b]
    except KeyError:
        raise TypeError(f"no type promotion exists for {a} and {b}") from None


def scalar_dtype(value, like: DType | None) -> DType:
    """The dtype a Python scalar takes in an operation with an array of dtype ``like``.

    Follows the 2024.12 rules: a scalar adopts the array's dtype when its kind fits (bool with bool,
    int with integer/floating, float with floating, complex with complex floating); otherwise it
    takes its own default dtype and ordinary promotion applies.
    """
    t = type(value)
    if like is not None:
        k = like.kind
        if t is _builtin_bool or isinstance(value, np.bool_):
            if k == BOOL or k in NUMERIC_KINDS:
                return like
        elif isinstance(value, int):
            if k in NUMERIC_KINDS:
                return like
        elif isinstance(value, float):
            if k in FLOAT_KINDS:
                return like
        elif isinstance(value, complex):
            if k == COMPLEX:
                return like
            if k == REAL:
                return complex_of(like)
    if t is _builtin_bool or isinstance(value, np.bool_):
        return bool
    if isinstance(value, int):
        return default_int
    if isinstance(value, float):
        return default_float
    if isinstance(value, complex):
        return default_complex
    raise TypeError(f"{type(value).__name__} is not a Python scalar strided can use")


@dataclass(frozen=True)
class finfo_object:
    """Machine limits of a floating-point dtype (the standard's ``finfo`` result)."""

    bits: int
    eps: float
    max: float
    min: float
    smallest_normal: float
    dtype: DType


@dataclass(frozen=True)
class iinfo_object:
    """Machine limits of an integer dtype (the standard's ``iinfo`` result)."""

    bits: int
    max: int
    min: int
    dtype: DType
