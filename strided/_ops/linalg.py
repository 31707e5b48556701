"""Matrix multiplication (the main namespace's ``matmul``); the linalg extension builds on it."""

from __future__ import annotations

import math

from .. import _dtypes as dt
from .._array import Array
from .._grad_state import Mode
from .._shapes import broadcast_shapes, normalize_axis
from ..dispatch import Plan, _in_graph_args, declare
from . import manipulation as _man
from .core import check_dtype, same_device, to_array

__all__ = ["matmul", "tensordot", "vecdot"]


def _matmul_rule(x1: Array, x2: Array, /) -> Plan:
    a, b = to_array(x1, "matmul"), to_array(x2, "matmul")
    device = same_device("matmul", a, b)
    check_dtype("matmul", a._dtype, "numeric")
    check_dtype("matmul", b._dtype, "numeric")
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError(
            f"matmul: operands must be at least 1-D, got shapes {a._shape} and {b._shape}"
        )
    d = a._dtype if a._dtype is b._dtype else dt.promote(a._dtype, b._dtype)
    # 1-D operands are a row (x1) or a column (x2) whose dimension is dropped from the result
    a_vec, b_vec = a.ndim == 1, b.ndim == 1
    m, k = (1, a._shape[0]) if a_vec else a._shape[-2:]
    k2, n = (b._shape[0], 1) if b_vec else b._shape[-2:]
    if k != k2:
        raise ValueError(
            f"matmul: shapes {a._shape} and {b._shape} are not aligned: "
            f"contracted dimensions {k} and {k2} differ"
        )
    sa, sb = a._shape[:-2], b._shape[:-2]
    batch = sa if sa == sb else broadcast_shapes(sa, sb, op="matmul")
    shape = batch + ((m,) if not a_vec else ()) + ((n,) if not b_vec else ())
    return Plan(device, (shape, d), (a, b), d, {"batch_shape": batch})


MATMUL = declare("matmul", "matmul", "numeric", rule=_matmul_rule)
MATMUL.memoize(
    lambda a, b, /: (
        (a._dtype, b._dtype, a._shape, b._shape)
        if a.__class__ is Array and b.__class__ is Array and a._device is b._device
        else None
    )
)


def matmul(x1: Array, x2: Array, /) -> Array:
    """Matrix product with batch broadcasting; 1-D operands are promoted as in NumPy.

    Floating-point products run on BLAS; integer products on strided's own kernel.
    """
    return MATMUL.call(x1, x2)


def _dot_rule(x1: Array, x2: Array, /, *, axes: tuple, root: bool = False) -> Plan:
    """Dot products of two numeric arrays of one shape and dtype over ``axes`` (sorted), x1
    conjugated, in that dtype (an integer product wraps around, as NumPy's vecdot), or with
    ``root`` the euclidean norms of a floating array (x1 is x2), in its real dtype: the kept
    dimensions in order.  The callers check what the kernel needs."""
    shape = tuple(n for i, n in enumerate(x1._shape) if i not in axes)
    out = dt.real_of(x1._dtype) if root else x1._dtype
    return Plan(x1._device, (shape, out), (x1, x2), None, {"axes": axes, "root": root})


#: sum(conj(x1) * x2) over axes in one pass, without the product's temporary (its square root
#: with root=True: the euclidean norm of x with itself): vecdot of untracked numeric operands of
#: one shape and dtype, and the norm (whose composite records it); a device without the kernel
#: takes the compositions
DOT = declare("dot", "moment", "numeric", rule=_dot_rule)
DOT.memoize(
    lambda a, b, /, *, axes, root=False: (
        (a._dtype, a._shape, axes, root is True)
        if a.__class__ is Array and b.__class__ is Array
        else None
    )
)


def fused_dot(a: Array, b: Array, axes: tuple, root: bool = False) -> Array | None:
    """``DOT(a, b, axes=axes, root=root)`` where it applies (numeric operands of one shape and
    dtype, floating for ``root``, that nothing records, on a device with the kernel), else
    None."""
    if (
        a._dtype is b._dtype
        and a._dtype.kind in (dt.FLOAT_KINDS if root else dt.NUMERIC_KINDS)
        and a._shape == b._shape
        and a._device is b._device
        and a._device.type in DOT.kernels
        and not (Mode.enabled and _in_graph_args((a, b)))
    ):
        return DOT.call(a, b, axes=tuple(sorted(axes)), root=root)
    return None


#: (dtype, shape, device, axis) -> DOT's axes for vecdot of two untracked plain arrays of that
#: kind (numeric, one shape), remembered after the checks pass (64x64 rows 5.6 -> 2.7 us)
_FUSED_VECDOTS: dict = {}


def vecdot(x1: Array, x2: Array, /, *, axis: int = -1) -> Array:
    """Dot products of vectors along ``axis`` (conjugating ``x1``), broadcasting the rest."""
    if x1.__class__ is Array and x2.__class__ is Array and type(axis) is int:
        key = (x1._dtype, x1._shape, x1._device, axis)
        axes = _FUSED_VECDOTS.get(key)
        if (
            axes is not None
            and x2._dtype is x1._dtype
            and x2._shape == x1._shape
            and x2._device is x1._device
            and not (Mode.enabled and _in_graph_args((x1, x2)))
        ):
            return DOT.call(x1, x2, axes=axes)
    a, b = to_array(x1, "vecdot"), to_array(x2, "vecdot")
    check_dtype("vecdot", a._dtype, "numeric")
    check_dtype("vecdot", b._dtype, "numeric")
    ndim = max(a.ndim, b.ndim)
    if not -ndim <= axis < 0 and not 0 <= axis < min(a.ndim, b.ndim):
        raise ValueError(f"vecdot: axis {axis} is out of range for shapes {a.shape} and {b.shape}")
    ax = axis if axis < 0 else axis - min(a.ndim, b.ndim)
    if a.ndim < -ax or b.ndim < -ax or a._shape[ax] != b._shape[ax]:
        raise ValueError(f"vecdot: shapes {a.shape} and {b.shape} differ in size along axis {axis}")
    fused = fused_dot(a, b, (a.ndim + ax,)) if a.ndim == b.ndim else None
    if fused is not None:
        if type(axis) is int and a.__class__ is Array and b.__class__ is Array:
            if len(_FUSED_VECDOTS) >= 1024:
                _FUSED_VECDOTS.clear()
            _FUSED_VECDOTS[(a._dtype, a._shape, a._device, axis)] = (a.ndim + ax,)
        return fused
    from .elementwise import conj, multiply
    from .reduction import sum as sum_

    # the product's dtype, not sum's widened accumulator: vecdot(uint8, uint8) is uint8
    product = multiply(conj(a), b)
    return sum_(product, axis=ax, dtype=product.dtype)


def _is_seq(s) -> bool:
    return isinstance(s, (list, tuple))


#: (x1's shape, x2's shape, int axes) -> tensordot's plan (:func:`_tensordot_plan`), checked once
_TENSORDOT_PLANS: dict = {}


def tensordot(x1: Array, x2: Array, /, *, axes=2) -> Array:
    """Contraction of ``x1`` and ``x2`` over ``axes`` (an int: the last/first ``axes`` axes;
    or a pair of sequences), computed as one matmul of 2-D views or copies."""
    a, b = to_array(x1, "tensordot"), to_array(x2, "tensordot")
    key = (a._shape, b._shape, axes) if type(axes) is int else None
    plan = _TENSORDOT_PLANS.get(key) if key is not None else None
    if plan is None:
        plan = _tensordot_plan(a, b, axes)
        if key is not None:
            if len(_TENSORDOT_PLANS) >= 1024:
                _TENSORDOT_PLANS.clear()
            _TENSORDOT_PLANS[key] = plan
    order_a, matrix_a, order_b, matrix_b, shape = plan
    out = matmul(_as_matrix(a, order_a, matrix_a), _as_matrix(b, order_b, matrix_b))
    return out if out._shape == shape else _man.reshape(out, shape)


def _tensordot_plan(a: Array, b: Array, axes) -> tuple:
    """(axis order of a or None when unchanged, a's 2-D shape, the same of b, the result's
    shape) for tensordot(a, b, axes), the arguments checked."""
    if isinstance(axes, int):
        if axes < 0 or axes > min(a.ndim, b.ndim):
            raise ValueError(f"tensordot: axes={axes} is invalid for shapes {a.shape}, {b.shape}")
        ax_a = list(range(a.ndim - axes, a.ndim))
        ax_b = list(range(axes))
    else:
        ax_a, ax_b = (
            [normalize_axis(ax, nd, "tensordot") for ax in (seq if _is_seq(seq) else [seq])]
            for seq, nd in zip(axes, (a.ndim, b.ndim), strict=True)
        )
        if len(ax_a) != len(ax_b):
            raise ValueError(f"tensordot: axes {axes} pair sequences of different lengths")
    for i, j in zip(ax_a, ax_b):
        if a._shape[i] != b._shape[j]:
            raise ValueError(
                f"tensordot: shapes {a.shape} and {b.shape} differ on contracted axes {i} and {j}"
            )
    free_a = [i for i in range(a.ndim) if i not in ax_a]
    free_b = [j for j in range(b.ndim) if j not in ax_b]
    k = math.prod(a._shape[i] for i in ax_a)
    m = math.prod(a._shape[i] for i in free_a)
    n = math.prod(b._shape[j] for j in free_b)
    order_a, order_b = tuple(free_a + ax_a), tuple(ax_b + free_b)
    return (
        None if order_a == tuple(range(a.ndim)) else order_a,
        (m, k),
        None if order_b == tuple(range(b.ndim)) else order_b,
        (k, n),
        tuple(a._shape[i] for i in free_a) + tuple(b._shape[j] for j in free_b),
    )


def _as_matrix(x: Array, order: tuple | None, shape: tuple) -> Array:
    """``x`` with its axes in ``order`` (None: as they are), reshaped to the 2-D ``shape``; the
    steps that would change nothing are skipped (each costs a primitive call: tensordot of two
    64x64 matrices 26 -> ~14 us, its matmul ~12)."""
    if order is not None:
        x = _man.permute_dims(x, order)
    return x if x._shape == shape else _man.reshape(x, shape)
