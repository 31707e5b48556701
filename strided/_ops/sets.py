"""Set functions (unique_*, isin): compositions over sort, argsort, searchsorted and indexing.

NaNs are distinct from each other (NaN != NaN), so every NaN is its own unique value, as the
standard requires.  All of these have data-dependent output sizes and refuse meta arrays.
"""

from __future__ import annotations

from typing import NamedTuple

from .. import _dtypes as dt
from .._array import Array
from .._grad_state import Mode
from ..dispatch import Plan, _in_graph_args, declare
from .core import (
    astype_to,
    check_dtype,
    empty_on,
    is_scalar,
    same_device,
    scalar_array,
    to_array,
)
from .creation import full
from .elementwise import equal, isnan, logical_not, not_equal, subtract
from .manipulation import concat, reshape
from .reduction import any as any_
from .reduction import count_nonzero
from .searching import (
    ISIN_SORTED,
    _data_dependent,
    argsort,
    nonzero,
    searchsorted,
    sort,
    take,
)

__all__ = ["unique_all", "unique_counts", "unique_inverse", "unique_values", "isin"]


class UniqueAllResult(NamedTuple):
    values: Array
    indices: Array
    inverse_indices: Array
    counts: Array


class UniqueCountsResult(NamedTuple):
    values: Array
    counts: Array


class UniqueInverseResult(NamedTuple):
    values: Array
    inverse_indices: Array


def _unique(op: str, x: Array, need_order: bool = True):
    """(x, values, first indices, starts, order, counts) of the flattened ``x``; without
    ``need_order`` the values are sorted directly (no argsort, no gather) and the first
    indices and order are None."""
    x = to_array(x, op)
    _data_dependent(op, x)
    flat = x if len(x._shape) == 1 else reshape(x, (-1,))
    n = flat._shape[0]
    if need_order:
        order = argsort(flat) if n else empty_on((0,), dt.int64, x._device)
        ordered = take(flat, order)
    else:
        order, ordered = None, sort(flat)
    # a new value starts where the sorted values change (NaN != NaN: each NaN starts one)
    first = full((min(n, 1),), True, device=x._device)
    starts = concat([first, not_equal(ordered[1:], ordered[:-1])]) if n else first
    (start_pos,) = nonzero(starts) if n else (empty_on((0,), dt.int64, x._device),)
    values = take(ordered, start_pos)
    ends = concat([start_pos[1:], full((min(n, 1),), n, dtype=dt.int64, device=x._device)])
    counts = subtract(ends, start_pos)
    first_indices = take(order, start_pos) if need_order else None
    return x, values, first_indices, starts, order, counts


def _unique_runs_rule(ordered: Array, order: Array | None = None, /) -> Plan:
    """The runs of equal values of the sorted 1-D ``ordered`` (NaN != NaN: each NaN its own
    run): each run's value and length; with ``order``, the stable argsort that sorted them,
    also each run's first index (order's first of the run) and every element's run at its
    own place (the inverse), in the order values, first indices, counts, inverse.  Its kernel
    fills them in one pass."""
    n = ordered._shape[0]
    runs = int(count_nonzero(not_equal(ordered[1:], ordered[:-1]))) + 1 if n else 0
    i = dt.int64
    if order is None:
        return Plan(ordered._device, [((runs,), ordered._dtype), ((runs,), i)], (ordered,))
    outputs = [((runs,), ordered._dtype), ((runs,), i), ((runs,), i), ((n,), i)]
    return Plan(ordered._device, outputs, (ordered, order))


#: unique_all's values, first indices, counts and inverse in one pass after its argsort, where
#: a dozen compositions ran (4096 float64 with 100 values: 124 -> ~55 us; PyTorch's unique
#: ~50); untracked calls on a device with the kernel (cpu), the composition otherwise
UNIQUE_RUNS = declare("unique_runs", "sets", rule=_unique_runs_rule)


def _fused_runs(x: Array, need_order: bool = True):
    """(values, first indices, counts, inverse) of the flattened ``x`` by UNIQUE_RUNS (without
    ``need_order``: (values, counts) of the sorted values, no argsort), or None where it does
    not apply (0-d, a device without the kernel; a tracked x records the composition)."""
    if (
        not x._shape
        or x._device.type not in UNIQUE_RUNS.kernels
        or (Mode.enabled and _in_graph_args((x,)))
    ):
        return None
    flat = reshape(x, (-1,))
    if not need_order:
        return UNIQUE_RUNS.call(sort(flat))
    order = argsort(flat)
    values, first, counts, inverse = UNIQUE_RUNS.call(take(flat, order), order)
    return values, first, counts, reshape(inverse, x._shape)


def _inverse(x: Array, starts: Array, order: Array) -> Array:
    from .reduction import cumulative_sum

    n = order._shape[0]
    group = subtract(cumulative_sum(astype_to(starts, dt.int64)), 1) if n else order
    inverse = empty_on((n,), dt.int64, x._device)
    if n:
        inverse[order] = group  # scatter: element order[i] belongs to group[i]
    return reshape(inverse, x._shape)


def unique_values(x: Array, /) -> Array:
    """The unique elements of ``x``, sorted (each NaN counts once)."""
    x = to_array(x, "unique_values")
    _data_dependent("unique_values", x)
    if (fused := _fused_runs(x, need_order=False)) is not None:
        return fused[0]  # (the runs' one pass: 4096 int32 43 -> ~28 us)
    ordered = sort(x if len(x._shape) == 1 else reshape(x, (-1,)))
    if ordered._shape[0] < 2:
        return ordered
    # the first value, then each that differs from the one before it (NaN != NaN: every NaN),
    # selected by one boolean mask (no positions, no gather: 4096 float32 82 -> ~50 us)
    rest = ordered[1:]
    return concat([ordered[:1], rest[not_equal(rest, ordered[:-1])]])


def unique_counts(x: Array, /) -> UniqueCountsResult:
    """Unique elements of ``x`` and how often each occurs."""
    x = to_array(x, "unique_counts")
    _data_dependent("unique_counts", x)
    if (fused := _fused_runs(x, need_order=False)) is not None:
        return UniqueCountsResult(*fused)  # (4096 float64: 66 -> ~40 us)
    _, values, _, _, _, counts = _unique("unique_counts", x, need_order=False)
    return UniqueCountsResult(values, counts)


def unique_inverse(x: Array, /) -> UniqueInverseResult:
    """Unique elements of ``x`` and, for every element, the index of its value among them."""
    x = to_array(x, "unique_inverse")
    _data_dependent("unique_inverse", x)
    if (fused := _fused_runs(x)) is not None:
        # (faster than the searchsorted route below too: 4096 float32 75 -> ~48 us)
        return UniqueInverseResult(fused[0], fused[3])
    if x._dtype.kind in dt.INTEGER_KINDS or (x._dtype.kind == dt.REAL and not bool(any_(isnan(x)))):
        # without NaNs (each of which is its own value) an element's index among the sorted
        # unique values is where it would be inserted among them: no argsort, gather or
        # scatter (4096 float32: 180 -> ~80 us)
        values = unique_values(x)
        return UniqueInverseResult(values, searchsorted(values, x))
    x, values, _, starts, order, _ = _unique("unique_inverse", x)
    return UniqueInverseResult(values, _inverse(x, starts, order))


def unique_all(x: Array, /) -> UniqueAllResult:
    """Unique values, first-occurrence indices, inverse indices and counts."""
    x = to_array(x, "unique_all")
    _data_dependent("unique_all", x)
    if (fused := _fused_runs(x)) is not None:
        values, first, counts, inverse = fused
        return UniqueAllResult(values, first, inverse, counts)
    x, values, first, starts, order, counts = _unique("unique_all", x)
    return UniqueAllResult(values, first, _inverse(x, starts, order), counts)


def isin(x1, x2, /, *, invert: bool = False) -> Array:
    """True where an element of ``x1`` equals some element of ``x2`` (scalars allowed)."""
    if not isinstance(x1, Array) and not isinstance(x2, Array):
        raise TypeError("isin: at least one of x1 and x2 must be a strided array")
    like = x1 if isinstance(x1, Array) else x2
    if is_scalar(x1):
        x1 = scalar_array(x1, dt.scalar_dtype(x1, like._dtype), like._device, "isin")
    if is_scalar(x2):
        x2 = scalar_array(x2, dt.scalar_dtype(x2, like._dtype), like._device, "isin")
    x1, x2 = to_array(x1, "isin"), to_array(x2, "isin")
    same_device("isin", x1, x2)
    d = dt.promote(x1._dtype, x2._dtype)
    # numeric only, as tests/test_dtype_sweep.py declares (NumPy accepts bool; the standard
    # leaves it open), and the same on every device
    check_dtype("isin", d, "numeric")
    haystack = sort(reshape(astype_to(x2, d), (-1,)))
    needles = astype_to(x1, d)
    n = haystack._shape[0]
    if d.kind == dt.COMPLEX:
        # no ordering for searchsorted: compare every pair (the standard asks only for integers)
        from .elementwise import equal as eq
        from .reduction import any as any_

        found = any_(eq(needles[..., None], haystack), axis=-1)
    elif n == 0:
        found = full(x1._shape, False, device=x1._device)
    elif x1._device.type in ISIN_SORTED.kernels:
        found = ISIN_SORTED.call(needles, haystack)
    else:
        pos = searchsorted(haystack, needles)
        clipped = subtract(pos, astype_to(equal(pos, n), dt.int64))  # n -> n - 1
        candidates = reshape(take(haystack, reshape(clipped, (-1,))), x1._shape)
        found = equal(candidates, needles)
    return logical_not(found) if invert else found
