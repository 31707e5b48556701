"""Reductions (sum, prod, max, min, any, all, mean) and cumulative scans."""

from __future__ import annotations

import operator

from .. import _dtypes as dt
from .._array import Array
from .._errors import names_its_errors
from .._shapes import normalize_axes, normalize_axis
from .._shapes import prod as shape_prod
from ..dispatch import Plan, declare
from .core import astype_to, check_dtype, to_array
from .elementwise import PRIMS as _ELEMENTWISE

__all__ = [
    "sum",
    "prod",
    "max",
    "min",
    "any",
    "all",
    "mean",
    "var",
    "std",
    "count_nonzero",
    "cumulative_sum",
    "cumulative_prod",
]

# name: (accepted dtypes, result rule): "accumulate" widens integers to the default (u)int64
_REDUCTIONS = {
    "sum": ("numeric", "accumulate"),
    "prod": ("numeric", "accumulate"),
    "max": ("real numeric", "same"),
    "min": ("real numeric", "same"),
    "any": ("any", "bool"),
    "all": ("any", "bool"),
    # the elements that are True as bools (nonzero; either part of a complex number), counted
    # in the default integer: count_nonzero's reduction, one pass over any dtype (no bool copy)
    "count_true": ("any", "count"),
}


def _accumulator(d: dt.DType, dtype) -> dt.DType:
    """The standard's result dtype for sum/prod/cumulative_* of ``d`` when ``dtype`` is None."""
    if dtype is not None:
        return dt.as_dtype(dtype)
    if d.kind == dt.UNSIGNED:
        return dt.default_uint
    if d.kind in (dt.SIGNED, dt.BOOL):
        return dt.default_int
    return d


_WIDENED_KINDS = (dt.BOOL, dt.SIGNED, dt.UNSIGNED)


def _reduction_rule(prim):
    name, accepts, result = prim.name, prim.accepts, prim.result
    no_identity = name in ("max", "min")

    def rule(x, /, *, axis=None, keepdims=False, dtype=None):
        x = to_array(x, name)
        check_dtype(name, x._dtype, accepts)
        axes = normalize_axes(axis, x.ndim, name)
        if result == "accumulate":
            out_dtype = compute = _accumulator(x._dtype, dtype)
            if dtype is None and x._dtype.kind in _WIDENED_KINDS:
                # bool and integers accumulate in the default integer without a widened copy:
                # every backend's kernels read the narrow input and add in the output's dtype
                compute = None
        elif result == "bool":
            out_dtype, compute = dt.bool, x._dtype
        elif result == "count":  # the kernels read any input as it is
            out_dtype, compute = dt.default_int, None
        else:
            out_dtype = compute = x._dtype
        if no_identity and shape_prod(x._shape[a] for a in axes) == 0:
            raise ValueError(
                f"{name}: zero-size reduction over axes {axes} of shape {x._shape} has no identity"
            )
        if keepdims:
            shape = tuple(1 if i in axes else s for i, s in enumerate(x._shape))
        else:
            shape = tuple(s for i, s in enumerate(x._shape) if i not in axes)
        return Plan(
            x._device, (shape, out_dtype), (x,), compute, {"axes": axes, "keepdims": keepdims}
        )

    return rule


def _reduction_key(x, /, *, axis=None, keepdims=False, dtype=None):
    """What a reduction's rule depends on (None: not memoized)."""
    if x.__class__ is not Array or type(axis) is list:
        return None
    # strides too: a plan's one-call kernel is made for its input's layout (a transpose gets
    # its own, reading its memory as one run)
    return (x._dtype, x._shape, x._strides, axis, keepdims, dtype)


PRIMS = {n: declare(n, "reduction", a, r) for n, (a, r) in _REDUCTIONS.items()}
for _p in PRIMS.values():
    _p.rule = _reduction_rule(_p)
    _p.memoize(_reduction_key)


def _scan_rule(prim, identity):
    name = prim.name

    def rule(x, /, *, axis=None, dtype=None, include_initial=False):
        x = to_array(x, name)
        check_dtype(name, x._dtype, prim.accepts)
        if x.ndim == 0:
            raise ValueError(f"{name}: needs an array with at least one dimension")
        if axis is None:
            if x.ndim > 1:
                raise ValueError(f"{name}: axis is required for {x.ndim}-D input")
            axis = 0
        axis = normalize_axis(operator.index(axis), x.ndim, name)
        d = _accumulator(x._dtype, dtype)
        shape = list(x._shape)
        if include_initial:
            shape[axis] += 1
        params = {"axis": axis, "initial": identity if include_initial else None}
        # bool and integers accumulate in the default integer without a widened copy, as in
        # the reductions: the kernels read the narrow input (int32 cumulative_sum of 4096
        # elements: the copy was two thirds of the time)
        compute = None if dtype is None and x._dtype.kind in _WIDENED_KINDS else d
        # a dense non-C x (a transpose) gives a result in its layout, as PyTorch's: the scan
        # then runs across rows that are contiguous in both (4096 float64 transposed: 15 -> 3 us)
        return Plan(x._device, (tuple(shape), d), (x,), compute, params, follow=True)

    return rule


SCANS = {n: declare(f"cumulative_{n}", "scan", "numeric", "accumulate") for n in ("sum", "prod")}
SCANS["sum"].rule = _scan_rule(SCANS["sum"], 0)
SCANS["prod"].rule = _scan_rule(SCANS["prod"], 1)


def _scan_key(x, /, *, axis=None, dtype=None, include_initial=False):
    """What a scan's rule depends on (None: not memoized); the strides too, as the result
    follows a dense layout."""
    if x.__class__ is not Array:
        return None
    return (x._dtype, x._shape, x._strides, axis, dtype, include_initial)


for _p in SCANS.values():
    _p.memoize(_scan_key)


# the public functions call their primitives' call methods directly (a shared helper looking
# the primitive up by name, then calling the instance, cost ~0.3 us of a 4096-element max's 1.9)
_SUM, _PROD, _MAX, _MIN, _ANY, _ALL, _COUNT_TRUE = (
    PRIMS[n] for n in ("sum", "prod", "max", "min", "any", "all", "count_true")
)
_DIVIDE = _ELEMENTWISE["divide"]


def sum(x: Array, /, *, axis=None, dtype=None, keepdims: bool = False) -> Array:
    """Sum over ``axis`` (all axes by default); integers accumulate in (u)int64."""
    if dtype is None:
        return _SUM.call(x, axis=axis, keepdims=keepdims)
    return _SUM.call(x, axis=axis, keepdims=keepdims, dtype=dtype)


def prod(x: Array, /, *, axis=None, dtype=None, keepdims: bool = False) -> Array:
    """Product over ``axis`` (all axes by default); integers accumulate in (u)int64."""
    if dtype is None:
        return _PROD.call(x, axis=axis, keepdims=keepdims)
    return _PROD.call(x, axis=axis, keepdims=keepdims, dtype=dtype)


def max(x: Array, /, *, axis=None, keepdims: bool = False) -> Array:
    """Maximum over ``axis``; NaN propagates; empty reductions raise ValueError."""
    return _MAX.call(x, axis=axis, keepdims=keepdims)


def min(x: Array, /, *, axis=None, keepdims: bool = False) -> Array:
    """Minimum over ``axis``; NaN propagates; empty reductions raise ValueError."""
    return _MIN.call(x, axis=axis, keepdims=keepdims)


def any(x: Array, /, *, axis=None, keepdims: bool = False) -> Array:
    """True where any element over ``axis`` is nonzero."""
    return _ANY.call(x, axis=axis, keepdims=keepdims)


def all(x: Array, /, *, axis=None, keepdims: bool = False) -> Array:
    """True where every element over ``axis`` is nonzero."""
    return _ALL.call(x, axis=axis, keepdims=keepdims)


def mean(x: Array, /, *, axis=None, keepdims: bool = False) -> Array:
    """Arithmetic mean over ``axis`` (a composition: sum / count); integers give float64."""
    if x.__class__ is not Array:
        x = to_array(x, "mean")
    if x._dtype.kind not in dt.FLOAT_KINDS:
        check_dtype("mean", x._dtype, "numeric")
        x = astype_to(x, dt.default_float)
    total = _SUM.call(x, axis=axis, keepdims=keepdims)
    kept = shape_prod(total._shape)
    # the count of reduced elements; none: the standard's NaN (an empty result divides anything)
    # (the shapes' products and the primitive's call method: 4096 float32 3.1 -> ~3.0 us)
    n = shape_prod(x._shape) // kept if kept else 1
    return _DIVIDE.call(total, float(n) if n else float("nan"))


_CUMSUM, _CUMPROD = SCANS["sum"], SCANS["prod"]


@names_its_errors
def cumulative_sum(x: Array, /, *, axis=None, dtype=None, include_initial: bool = False) -> Array:
    """Cumulative sum along ``axis`` (optional for 1-D input)."""
    return _CUMSUM.call(x, axis=axis, dtype=dtype, include_initial=include_initial)


@names_its_errors
def cumulative_prod(x: Array, /, *, axis=None, dtype=None, include_initial: bool = False) -> Array:
    """Cumulative product along ``axis`` (optional for 1-D input)."""
    return _CUMPROD.call(x, axis=axis, dtype=dtype, include_initial=include_initial)


def _var_rule(x, /, *, axis=None, correction: float = 0.0, keepdims: bool = False, root=False):
    op = "std" if root else "var"
    x = to_array(x, op)
    check_dtype(op, x._dtype, "floating")
    axes = normalize_axes(axis, x.ndim, op)
    if isinstance(correction, bool) or not isinstance(correction, (int, float)):
        raise TypeError(f"{op}: correction must be a real number, got {type(correction).__name__}")
    if keepdims:
        shape = tuple(1 if i in axes else s for i, s in enumerate(x._shape))
    else:
        shape = tuple(s for i, s in enumerate(x._shape) if i not in axes)
    out_dtype = dt.real_of(x._dtype)
    params = {"axes": axes, "keepdims": keepdims, "correction": float(correction), "root": root}
    return Plan(x._device, (shape, out_dtype), (x,), None, params)


def _var_key(x, /, *, axis=None, correction=0.0, keepdims=False, root=False):
    """What var's rule depends on (None: not memoized)."""
    if x.__class__ is not Array or type(axis) is list or type(correction) not in (int, float):
        return None
    return (x._dtype, x._shape, axis, keepdims, correction, root is True)


# one primitive, both passes of the two-pass algorithm in one kernel where the backend has one
# (six calls and three temporaries as a composition); ``root=True`` is std, the square root
# taken in the same kernel
VAR = declare("var", "moment", "floating", rule=_var_rule)
VAR.memoize(_var_key)


@names_its_errors
def var(x: Array, /, *, axis=None, correction: float = 0.0, keepdims: bool = False) -> Array:
    """Variance over ``axis``: sum(|x - mean|**2) / (N - correction); NaN where N - correction
    <= 0 (NumPy divides by zero and gives inf)."""
    return VAR.call(x, axis=axis, correction=correction, keepdims=keepdims)


def std(x: Array, /, *, axis=None, correction: float = 0.0, keepdims: bool = False) -> Array:
    """Standard deviation over ``axis``: sqrt(var), in var's kernel."""
    return VAR.call(x, axis=axis, correction=correction, keepdims=keepdims, root=True)


def count_nonzero(x: Array, /, *, axis=None, keepdims: bool = False) -> Array:
    """Number of nonzero elements over ``axis`` (default integer dtype)."""
    return _COUNT_TRUE.call(to_array(x, "count_nonzero"), axis=axis, keepdims=keepdims)
