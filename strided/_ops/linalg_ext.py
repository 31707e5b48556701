"""The ``linalg`` extension: decompositions, solvers, norms and friends (``strided.linalg``).

Nine LAPACK-backed operations are primitives, declared here once and given one kernel per device:

==================  ===========================  =============================================
primitive           inputs -> outputs             keyword parameters
==================  ===========================  =============================================
linalg_cholesky     x -> L (or U)                 upper
linalg_inv          x -> inverse                  -
linalg_solve        a, b -> x                     -  (a: (..., M, M), b: (..., M, K), one batch)
linalg_det          x -> det                      -
linalg_slogdet      x -> (sign, logabsdet)        -
linalg_eigh         x -> (eigenvalues[, vectors]) compute_vectors
linalg_eig          x -> (eigenvalues[, vectors]) compute_vectors
linalg_svd          x -> ([U,] S[, Vh])           full_matrices, compute_uv
linalg_qr           x -> (Q, R)                   mode
==================  ===========================  =============================================

Each primitive's rule gives its outputs' shapes and dtypes; the dispatcher allocates them and
calls the kernel (none on meta).  Single-output kernels fill a freshly allocated ``out``.
**Multi-output primitives**
(``linalg_slogdet``, ``linalg_eigh``, ``linalg_eig``, ``linalg_svd``, ``linalg_qr``) receive a
*tuple* of freshly allocated C-contiguous outputs in place of ``out``, in the order of the table,
and fill each of them: ``kernel(outs, *inputs, **params)``.  The tuple
always has the length the parameters imply (``compute_uv=False`` gives ``(S,)``), so a backward
rule can rely on it.  Inputs arrive cast to the compute dtype, with any batch broadcasting already
applied as views, and are never written.  On ``meta`` no kernel runs: the shapes and dtypes
computed here are the result.

Everything else (``det`` aside, which is a primitive for accuracy: the product of the LU
diagonal, not ``sign * exp(logabsdet)``) is a composition of namespace functions: ``eigvalsh``,
``eigvals`` and ``svdvals`` are the primitives without vectors; ``pinv``, ``matrix_rank`` and the
spectral norms use the SVD; ``matrix_power`` uses ``matmul`` (and ``inv`` for negative powers);
``diagonal`` is a strided view; ``trace``, ``outer``, ``cross`` and the norms use elementwise
functions and reductions.
"""

from __future__ import annotations

import math
import numbers
import operator
from typing import NamedTuple

import numpy as np

from .. import _dtypes as dt
from .._array import Array
from .._errors import LinAlgError
from .._grad_state import Mode
from .._shapes import broadcast_shapes, normalize_axes
from ..dispatch import Plan, _in_graph_args, composite, declare
from . import creation as _cr
from . import elementwise as _ew
from . import manipulation as _man
from . import reduction as _red
from .core import astype_to, check_dtype, copy_of, same_device, to_array
from .linalg import DOT, fused_dot, matmul

__all__ = [
    "LinAlgError",
    "EighResult",
    "EigResult",
    "QRResult",
    "SlogdetResult",
    "SVDResult",
    "cholesky",
    "cross",
    "det",
    "diagonal",
    "eig",
    "eigh",
    "eigvals",
    "eigvalsh",
    "inv",
    "matrix_norm",
    "matrix_power",
    "matrix_rank",
    "outer",
    "pinv",
    "qr",
    "slogdet",
    "solve",
    "svd",
    "svdvals",
    "trace",
    "vector_norm",
]


# The LAPACK kernels' rules: their inputs arrive checked and cast by the public functions
def _cholesky_rule(x, /, *, upper=False) -> Plan:
    return Plan(x._device, (x._shape, x._dtype), (x,), None, {"upper": bool(upper)})


def _inv_rule(x, /) -> Plan:
    return Plan(x._device, (x._shape, x._dtype), (x,))


def _det_rule(x, /) -> Plan:
    return Plan(x._device, (x._shape[:-2], x._dtype), (x,))


def _solve_rule(a, b, /) -> Plan:
    return Plan(a._device, (b._shape, a._dtype), (a, b))


def _slogdet_rule(x, /) -> Plan:
    batch, d = x._shape[:-2], x._dtype
    return Plan(x._device, [(batch, d), (batch, dt.real_of(d))], (x,))


def _eigh_rule(x, /, *, compute_vectors=True) -> Plan:
    outs = [(x._shape[:-1], dt.real_of(x._dtype))]
    if compute_vectors:
        outs.append((x._shape, x._dtype))
    return Plan(x._device, outs, (x,), None, {"compute_vectors": compute_vectors})


def _eig_rule(x, /, *, compute_vectors=True) -> Plan:
    c = dt.complex_of(x._dtype)
    outs = [(x._shape[:-1], c)] + ([(x._shape, c)] if compute_vectors else [])
    return Plan(x._device, outs, (x,), None, {"compute_vectors": compute_vectors})


def _svd_rule(x, /, *, full_matrices=True, compute_uv=True) -> Plan:
    *batch, m, n = x._shape
    batch, k, d = tuple(batch), min(m, n), x._dtype
    s = (batch + (k,), dt.real_of(d))
    if not compute_uv:
        outs = [s]
    else:
        ucols, vrows = (m, n) if full_matrices else (k, k)
        outs = [(batch + (m, ucols), d), s, (batch + (vrows, n), d)]
    params = {"full_matrices": bool(full_matrices), "compute_uv": compute_uv}
    return Plan(x._device, outs, (x,), None, params)


def _qr_rule(x, /, *, mode="reduced") -> Plan:
    *batch, m, n = x._shape
    batch, k = tuple(batch), (min(m, n) if mode == "reduced" else m)
    outs = [(batch + (m, k), x._dtype), (batch + (k, n), x._dtype)]
    return Plan(x._device, outs, (x,), None, {"mode": mode})


CHOLESKY = declare("linalg_cholesky", "linalg", "floating", "same", rule=_cholesky_rule)
INV = declare("linalg_inv", "linalg", "floating", "same", rule=_inv_rule)
SOLVE = declare("linalg_solve", "linalg", "floating", "same", rule=_solve_rule)
DET = declare("linalg_det", "linalg", "floating", "same", rule=_det_rule)
SLOGDET = declare("linalg_slogdet", "linalg", "floating", "same", rule=_slogdet_rule)
EIGH = declare("linalg_eigh", "linalg", "floating", "real", rule=_eigh_rule)
EIG = declare("linalg_eig", "linalg", "floating", "complex", rule=_eig_rule)
SVD = declare("linalg_svd", "linalg", "floating", "same", rule=_svd_rule)
QR = declare("linalg_qr", "linalg", "floating", "same", rule=_qr_rule)


class EighResult(NamedTuple):
    eigenvalues: Array
    eigenvectors: Array


class EigResult(NamedTuple):
    eigenvalues: Array
    eigenvectors: Array


class QRResult(NamedTuple):
    Q: Array
    R: Array


class SlogdetResult(NamedTuple):
    sign: Array
    logabsdet: Array


class SVDResult(NamedTuple):
    U: Array
    S: Array
    Vh: Array


# -- argument checks ------------------------------------------------------------------------------
def _matrices(op: str, x, accepts: str = "floating", square: bool = False) -> Array:
    """``x`` checked to be an array of ``accepts`` dtype with at least 2 dimensions (square)."""
    x = to_array(x, op)
    check_dtype(op, x._dtype, accepts)
    if x.ndim < 2:
        raise ValueError(
            f"{op}: expected a matrix or a stack of matrices (at least 2 dimensions), "
            f"got shape {x._shape}"
        )
    if square and x._shape[-1] != x._shape[-2]:
        raise ValueError(
            f"{op}: expected square matrices, got shape {x._shape} "
            f"({x._shape[-2]} rows, {x._shape[-1]} columns)"
        )
    return x


def _int_arg(op: str, name: str, value) -> int:
    if isinstance(value, bool):
        raise TypeError(f"{op}: {name} must be an integer, got bool")
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError(f"{op}: {name} must be an integer, got {type(value).__name__}") from None


# -- the LAPACK-backed functions ------------------------------------------------------------------
@composite("cholesky", 1)
def cholesky(x: Array, /, *, upper: bool = False) -> Array:
    """The lower (``upper=False``) or upper Cholesky factor of Hermitian positive-definite
    matrices; :class:`LinAlgError` when a matrix is not positive definite."""
    x = _matrices("cholesky", x, square=True)
    return CHOLESKY.call(x, upper=bool(upper))


@composite("inv", 1)
def inv(x: Array, /) -> Array:
    """The inverse of each square matrix; :class:`LinAlgError` when one is singular."""
    x = _matrices("inv", x, square=True)
    return INV.call(x)


@composite("det", 1)
def det(x: Array, /) -> Array:
    """The determinant of each square matrix (the product of the LU factorisation's diagonal)."""
    x = _matrices("det", x, square=True)
    return DET.call(x)


@composite("slogdet", 1)
def slogdet(x: Array, /) -> SlogdetResult:
    """``(sign, logabsdet)`` of each determinant; a singular matrix gives ``(0, -inf)``."""
    x = _matrices("slogdet", x, square=True)
    return SlogdetResult(*SLOGDET(x))


@composite("solve", 2)
def solve(x1: Array, x2: Array, /) -> Array:
    """The solution ``X`` of ``x1 @ X = x2``; ``x2`` of shape ``(M,)`` is one vector for every
    matrix of ``x1``, otherwise ``(..., M, K)`` with batch dimensions broadcast against ``x1``'s."""
    a = _matrices("solve", x1, square=True)
    b = to_array(x2, "solve")
    check_dtype("solve", b._dtype, "floating")
    same_device("solve", a, b)
    m = a._shape[-1]
    vector = b.ndim == 1
    if (vector and b._shape[0] != m) or (not vector and (b.ndim < 2 or b._shape[-2] != m)):
        raise ValueError(
            f"solve: x2 of shape {b._shape} does not fit x1 of shape {a._shape}: expected "
            f"shape ({m},) or (..., {m}, K)"
        )
    if vector:
        b = b._view((m, 1), (b._strides[0], 0), b._offset)
    try:
        batch = broadcast_shapes(a._shape[:-2], b._shape[:-2], op="solve")
    except ValueError:
        raise ValueError(
            f"solve: the batch dimensions of x1 {a._shape} and x2 {tuple(x2.shape)} do not "
            "broadcast"
        ) from None
    d = dt.promote(a._dtype, b._dtype)
    k = b._shape[-1]
    a = _man.broadcast_to(astype_to(a, d), batch + (m, m))
    b = _man.broadcast_to(astype_to(b, d), batch + (m, k))
    out = SOLVE.call(a, b)
    if vector:
        out = out._view(batch + (m,), out._strides[:-1], out._offset)
    return out


@composite("eigh", 1)
def eigh(x: Array, /) -> EighResult:
    """Eigenvalues (ascending, real) and orthonormal eigenvectors (columns) of Hermitian/symmetric
    matrices; only the lower triangle is read."""
    x = _matrices("eigh", x, square=True)
    return EighResult(*EIGH(x, compute_vectors=True))


@composite("eigvalsh", 1)
def eigvalsh(x: Array, /) -> Array:
    """The eigenvalues (ascending, real) of Hermitian/symmetric matrices (lower triangle read)."""
    x = _matrices("eigvalsh", x, square=True)
    return EIGH.call(x, compute_vectors=False)[0]


@composite("eig", 1)
def eig(x: Array, /) -> EigResult:
    """Eigenvalues and eigenvectors (columns, unit norm) of general square matrices, complex."""
    x = _matrices("eig", x, square=True)
    return EigResult(*EIG(x, compute_vectors=True))


@composite("eigvals", 1)
def eigvals(x: Array, /) -> Array:
    """The eigenvalues of general square matrices, complex."""
    x = _matrices("eigvals", x, square=True)
    return EIG.call(x, compute_vectors=False)[0]


@composite("svd", 1)
def svd(x: Array, /, *, full_matrices: bool = True) -> SVDResult:
    """``(U, S, Vh)`` with ``x = U @ diag(S) @ Vh`` and ``S`` descending."""
    x = _matrices("svd", x)
    return SVDResult(*SVD(x, full_matrices=bool(full_matrices), compute_uv=True))


@composite("svdvals", 1)
def svdvals(x: Array, /) -> Array:
    """The singular values of each matrix, descending."""
    x = _matrices("svdvals", x)
    return SVD.call(x, full_matrices=False, compute_uv=False)[0]


@composite("qr", 1)
def qr(x: Array, /, *, mode: str = "reduced") -> QRResult:
    """``(Q, R)`` with orthonormal columns in ``Q`` and upper-triangular ``R``; ``mode`` is
    ``'reduced'`` (``K = min(M, N)`` columns of ``Q``) or ``'complete'``."""
    x = _matrices("qr", x)
    if mode not in ("reduced", "complete"):
        raise ValueError(f"qr: mode must be 'reduced' or 'complete', got {mode!r}")
    return QRResult(*QR(x, mode=mode))


# -- compositions ---------------------------------------------------------------------------------
def _diagonal_checked(x: Array, offset) -> tuple:
    x = _matrices("diagonal", x, accepts="any")
    return _diagonal_geometry(x, _int_arg("diagonal", "offset", offset))


def _diagonal_geometry(x: Array, offset: int) -> tuple:
    """(shape, strides, offset) of the ``offset``-th diagonal view of the matrices of ``x``."""
    m, n = x._shape[-2:]
    s0, s1 = x._strides[-2:]
    if offset >= 0:
        size, start = max(0, min(m, n - offset)), offset * s1
    else:
        size, start = max(0, min(m + offset, n)), -offset * s0
    if size == 0:
        start = 0
    return x._shape[:-2] + (size,), x._strides[:-2] + (s0 + s1,), x._offset + start


#: the checks and geometry once per layout and int offset (the view rules' shared memo)
_diagonal_remembered, _diagonal_view = _man._remembered_view(_diagonal_checked)


def _diagonal_rule(x: Array, /, *, offset: int = 0) -> tuple:
    return _diagonal_remembered(x, offset)


DIAGONAL = declare("diagonal", "view", rule=_diagonal_rule)


def diagonal(x: Array, /, *, offset: int = 0) -> Array:
    """The ``offset``-th diagonal of each matrix, as a view (no copy)."""
    view = _diagonal_view(x, offset)  # (the view made here: the primitive would only record it)
    return view if view is not None else DIAGONAL.call(x, offset=offset)


def trace(x: Array, /, *, offset: int = 0, dtype=None) -> Array:
    """The sum of the ``offset``-th diagonal of each matrix (integers accumulate as in ``sum``)."""
    if (
        type(offset) is int
        and x.__class__ is Array
        and len(x._shape) >= 2
        and x._dtype.kind in dt.NUMERIC_KINDS
    ):  # the checks and the view in one place (64x64: ~2.0 us, NumPy 1.9 in the same run)
        view = _diagonal_view(x, offset)
        if view is not None:
            return _red.sum(view, axis=-1, dtype=dtype)
    x = _matrices("trace", x, accepts="numeric")
    return _red.sum(diagonal(x, offset=offset), axis=-1, dtype=dtype)


def outer(x1: Array, x2: Array, /) -> Array:
    """The outer product of two 1-D arrays."""
    if (
        _man._untracked_plain(x1)
        and _man._untracked_plain(x2)
        and len(x1._shape) == 1
        and len(x2._shape) == 1
        and x1._dtype.kind in dt.NUMERIC_KINDS
        and x2._dtype.kind in dt.NUMERIC_KINDS
    ):
        # the checks below in one test, the column and row as bare arrays over the inputs'
        # memory (only multiply reads them: no view bookkeeping; 64 + 64: 3.0-3.2 -> 2.7-2.8 us)
        column = Array._new(
            x1._buf, x1._shape + (1,), x1._strides + (0,), x1._offset, x1._dtype, x1._device
        )
        row = Array._new(
            x2._buf, (1,) + x2._shape, (0,) + x2._strides, x2._offset, x2._dtype, x2._device
        )
        return _ew.multiply(column, row)
    a, b = to_array(x1, "outer"), to_array(x2, "outer")
    check_dtype("outer", a._dtype, "numeric")
    check_dtype("outer", b._dtype, "numeric")
    if a.ndim != 1 or b.ndim != 1:
        raise ValueError(f"outer: expected two 1-D arrays, got shapes {a._shape} and {b._shape}")
    if _man._untracked_plain(a) and _man._untracked_plain(b):
        # the column and row views made here (expand_dims records them: ~1 us each)
        column = a._view(a._shape + (1,), a._strides + (0,), a._offset)
        row = b._view((1,) + b._shape, (0,) + b._strides, b._offset)
        return _ew.multiply(column, row)
    return _ew.multiply(_man.expand_dims(a, axis=-1), _man.expand_dims(b, axis=0))


def _cross_rule(x1: Array, x2: Array, /) -> Plan:
    """Cross products along the last axis (size 3 in both; the leading axes broadcast)."""
    a, b = to_array(x1, "cross"), to_array(x2, "cross")
    device = same_device("cross", a, b)
    check_dtype("cross", a._dtype, "numeric")
    check_dtype("cross", b._dtype, "numeric")
    if a.ndim == 0 or b.ndim == 0 or a._shape[-1] != 3 or b._shape[-1] != 3:
        raise ValueError(
            f"cross: shapes {a._shape} and {b._shape} must both have size 3 along the last axis"
        )
    shape = a._shape if a._shape == b._shape else broadcast_shapes(a._shape, b._shape, op="cross")
    d = a._dtype if a._dtype is b._dtype else dt.promote(a._dtype, b._dtype)
    return Plan(device, (shape, d), (a, b), d)


#: cross products along the last axis in one pass (no VJP: a tracked call takes the composition
#: in ``cross``, whose elementwise steps record their own)
CROSS = declare("cross", "cross", "numeric", rule=_cross_rule)
CROSS.memoize(
    lambda a, b, /: (
        (a._dtype, a._shape, b._dtype, b._shape)
        if a.__class__ is Array and b.__class__ is Array
        else None
    )
)


#: (dtypes, shapes, devices, axis) -> the last-axis form of the axis, for cross calls of two
#: plain arrays whose checks passed and that ran the fused kernel (1365 vectors 7.2 -> ~4.5 us)
_CHECKED_CROSSES: dict = {}


def _cross_along(a: Array, b: Array, axis: int) -> Array:
    """CROSS of ``a`` and ``b`` along the checked negative ``axis`` (moved last and back)."""
    if axis == -1:
        return CROSS.call(a, b)
    out = CROSS.call(_man.moveaxis(a, axis, -1), _man.moveaxis(b, axis, -1))
    return _man.moveaxis(out, -1, axis)


def cross(x1: Array, x2: Array, /, *, axis: int = -1) -> Array:
    """Cross products of 3-element vectors along ``axis`` (negative; other axes broadcast)."""
    key = None
    if x1.__class__ is Array and x2.__class__ is Array and type(axis) is int:
        key = (x1._dtype, x1._shape, x2._dtype, x2._shape, x1._device, x2._device, axis)
        checked = _CHECKED_CROSSES.get(key)
        if checked is not None and not (Mode.enabled and _in_graph_args((x1, x2))):
            return _cross_along(x1, x2, checked)
    a, b = to_array(x1, "cross"), to_array(x2, "cross")
    check_dtype("cross", a._dtype, "numeric")
    check_dtype("cross", b._dtype, "numeric")
    axis = _int_arg("cross", "axis", axis)
    n = min(a.ndim, b.ndim)
    if axis >= 0 and a.ndim == b.ndim:
        axis -= a.ndim  # unambiguous when the ranks agree
    if not -n <= axis <= -1:
        raise ValueError(
            f"cross: axis {axis} is out of range for shapes {a._shape} and {b._shape}: "
            f"expected a negative axis in [{-n}, -1]"
        )
    if a._shape[axis] != 3 or b._shape[axis] != 3:
        raise ValueError(
            f"cross: shapes {a._shape} and {b._shape} must both have size 3 along axis {axis}"
        )
    broadcast_shapes(a._shape, b._shape, op="cross")  # the other axes must broadcast
    if a._device.type in CROSS.kernels and not (Mode.enabled and _in_graph_args((a, b))):
        out = _cross_along(a, b, axis)
        if key is not None:
            if len(_CHECKED_CROSSES) >= 1024:
                _CHECKED_CROSSES.clear()
            _CHECKED_CROSSES[key] = axis
        return out
    u, v = _man.moveaxis(a, axis, -1), _man.moveaxis(b, axis, -1)
    u0, u1, u2 = u[..., 0], u[..., 1], u[..., 2]
    v0, v1, v2 = v[..., 0], v[..., 1], v[..., 2]
    parts = [
        _ew.subtract(_ew.multiply(u1, v2), _ew.multiply(u2, v1)),
        _ew.subtract(_ew.multiply(u2, v0), _ew.multiply(u0, v2)),
        _ew.subtract(_ew.multiply(u0, v1), _ew.multiply(u1, v0)),
    ]
    return _man.stack(parts, axis=axis)


def matrix_power(x: Array, n: int, /) -> Array:
    """``x`` multiplied by itself ``n`` times (by repeated squaring); ``n < 0`` inverts first and
    ``n == 0`` gives identity matrices."""
    x = _matrices("matrix_power", x, square=True)
    n = _int_arg("matrix_power", "n", n)
    if n == 0:
        ident = _cr.eye(x._shape[-1], dtype=x._dtype, device=x._device)
        return copy_of(_man.broadcast_to(ident, x._shape))
    if n < 0:
        try:
            x = inv(x)
        except LinAlgError as e:
            reason = str(e).removeprefix("inv: ")
            raise LinAlgError(f"matrix_power: cannot raise to a negative power: {reason}") from None
        n = -n
    elif n == 1:
        return copy_of(x)
    result, base = None, x
    while True:
        if n & 1:
            result = base if result is None else matmul(result, base)
        n >>= 1
        if not n:
            return result
        base = matmul(base, base)


def _default_rtol(x: Array) -> float:
    return max(x._shape[-2:]) * float(np.finfo(x._dtype.numpy).eps)


def _tolerance(op: str, x: Array, s: Array, rtol) -> Array:
    """``rtol * largest singular value`` for each matrix, shaped ``(..., 1)``."""
    largest = s[..., :1]
    if rtol is None:
        return _ew.multiply(largest, _default_rtol(x))
    if isinstance(rtol, Array):
        check_dtype(op, rtol._dtype, "real floating")
        return _ew.multiply(
            largest, rtol._view(rtol._shape + (1,), rtol._strides + (0,), rtol._offset)
        )
    if isinstance(rtol, bool) or not isinstance(rtol, numbers.Real):
        raise TypeError(f"{op}: rtol must be a float or a real floating array, got {rtol!r}")
    return _ew.multiply(largest, float(rtol))


def matrix_rank(x: Array, /, *, rtol=None) -> Array:
    """The number of singular values larger than ``rtol`` times the largest (default
    ``max(M, N) * eps``), as the default integer dtype."""
    x = _matrices("matrix_rank", x)
    s = svdvals(x)
    if s._shape[-1] == 0:
        shape = x._shape[:-2]
        if isinstance(rtol, Array):
            shape = broadcast_shapes(shape, rtol._shape, op="matrix_rank")
        return _cr.zeros(shape, dtype=dt.default_int, device=x._device)
    big = _ew.greater(s, _tolerance("matrix_rank", x, s, rtol))
    return _man.astype(_red.count_nonzero(big, axis=-1), dt.default_int, copy=False)


def pinv(x: Array, /, *, rtol=None) -> Array:
    """The Moore-Penrose pseudo-inverse from the SVD, singular values at or below ``rtol`` times
    the largest (default ``max(M, N) * eps``) treated as zero."""
    x = _matrices("pinv", x)
    m, n = x._shape[-2:]
    if min(m, n) == 0:
        shape = x._shape[:-2]
        if isinstance(rtol, Array):
            shape = broadcast_shapes(shape, rtol._shape, op="pinv")
        return _cr.zeros(shape + (n, m), dtype=x._dtype, device=x._device)
    u, s, vh = svd(x, full_matrices=False)
    keep = _ew.greater(s, _tolerance("pinv", x, s, rtol))
    s_inv = _man.where(keep, _ew.divide(1.0, _man.where(keep, s, 1.0)), 0.0)
    s_inv = _man.expand_dims(s_inv, axis=-1)
    uh = _man.matrix_transpose(u)
    if x._dtype.kind == dt.COMPLEX:
        uh, vh = _ew.conj(uh), _ew.conj(vh)
    return matmul(_man.matrix_transpose(vh), _ew.multiply(s_inv, uh))


_INF = float("inf")


@composite("euclidean_norm", 1)
def _euclidean_norm(x: Array, /, *, axes: tuple, keepdims: bool) -> Array:
    """sqrt(sum(|x|**2)) over ``axes``; its own unit so that its gradient at 0 is 0 (PyTorch's
    subgradient), not the 0 * inf of the composition."""
    out = fused_dot(x, x, axes, root=True)  # (the composite records; this runs untracked)
    if out is not None:
        return _man.expand_dims(out, axis=axes) if keepdims and axes else out
    a = _ew.abs(x)
    return _ew.sqrt(_red.sum(_ew.multiply(a, a), axis=axes, keepdims=keepdims))


#: (dtype, shape, device, axis) -> the sorted reduced axes of a 2-norm that the fused
#: dot computes (a floating array on a device with the kernel): the checks once per kind of
#: call, then an untracked plain array's norm is one DOT with its root (4096 float32: 7.6 ->
#: ~2.5 us)
_FUSED_NORMS: dict = {}


def _remembered_norm(key, x: Array, keepdims: bool) -> Array | None:
    """The 2-norm of the plain array ``x`` by one DOT with its root where :data:`_FUSED_NORMS`
    holds ``key`` and ``x`` is untracked and unobserved (a tracked x records the composite, an
    observer sees it: the general path), else None."""
    axes = _FUSED_NORMS.get(key)
    if axes is None or not _man._untracked_plain(x):
        return None
    out = DOT.call(x, x, axes=axes, root=True)
    return _man.expand_dims(out, axis=axes) if keepdims and axes else out


def vector_norm(x: Array, /, *, axis=None, keepdims: bool = False, ord=2) -> Array:
    """The ``ord``-norm of ``x`` over ``axis`` (all axes by default; an int or a tuple).

    ``ord`` is any real number or ``±inf``: ``inf``/``-inf`` are the largest/smallest magnitude,
    ``0`` counts nonzero elements, otherwise ``sum(abs(x)**ord)**(1/ord)``.
    """
    key = None
    if type(ord) in (int, float) and ord == 2 and x.__class__ is Array:
        if axis is None or _man._plain_ints(axis):
            key = (x._dtype, x._shape, x._device, axis)
            out = _remembered_norm(key, x, keepdims)
            if out is not None:
                return out
    abs_, pow, astype, count_nonzero = _ew.abs, _ew.pow, _man.astype, _red.count_nonzero
    max_, min_, sum_ = _red.max, _red.min, _red.sum
    x = to_array(x, "vector_norm")
    check_dtype("vector_norm", x._dtype, "floating")
    axes = normalize_axes(axis, x.ndim, "vector_norm")
    if isinstance(ord, bool) or not isinstance(ord, numbers.Real):
        raise ValueError(f"vector_norm: ord must be a real number or ±inf, got {ord!r}")
    real = dt.real_of(x._dtype)
    if ord == 0:
        return astype(count_nonzero(x, axis=axes, keepdims=keepdims), real)
    if ord == 2:
        if key is not None and x._dtype.kind in dt.FLOAT_KINDS and x._device.type in DOT.kernels:
            if len(_FUSED_NORMS) >= 1024:
                _FUSED_NORMS.clear()
            _FUSED_NORMS[key] = tuple(sorted(axes))
        return _euclidean_norm(x, axes=axes, keepdims=keepdims)
    a = abs_(x)
    if ord in (_INF, -_INF):
        if math.prod(x._shape[i] for i in axes) == 0:
            raise ValueError(
                f"vector_norm: ord={ord} of a zero-size vector (shape {x._shape}, axes {axes}) "
                "is undefined"
            )
        return (max_ if ord > 0 else min_)(a, axis=axes, keepdims=keepdims)
    if ord == 1:
        return sum_(a, axis=axes, keepdims=keepdims)
    p = float(ord)
    return pow(sum_(pow(a, p), axis=axes, keepdims=keepdims), 1.0 / p)


def matrix_norm(x: Array, /, *, keepdims: bool = False, ord="fro") -> Array:
    """A norm of each matrix: ``'fro'``, ``'nuc'`` (sum of singular values), ``2``/``-2``
    (largest/smallest singular value), ``1``/``-1`` (max/min column sum of magnitudes) or
    ``inf``/``-inf`` (max/min row sum)."""
    if type(ord) is str and ord == "fro" and x.__class__ is Array:
        # vector_norm over the last two axes, as remembered there (64 x 64: 3.0 -> ~2.4 us)
        out = _remembered_norm((x._dtype, x._shape, x._device, (-2, -1)), x, keepdims)
        if out is not None:
            return out
    x = _matrices("matrix_norm", x)
    if isinstance(ord, str) and ord == "fro":
        return vector_norm(x, axis=(-2, -1), keepdims=keepdims, ord=2)
    m, n = x._shape[-2:]
    if isinstance(ord, str) and ord == "nuc":
        r = _red.sum(svdvals(x), axis=-1)
    elif not isinstance(ord, bool) and ord in (2, -2):
        if min(m, n) == 0:
            raise ValueError(f"matrix_norm: ord={ord} of an empty matrix (shape {x._shape})")
        s = svdvals(x)
        r = s[..., 0] if ord == 2 else s[..., -1]
    elif not isinstance(ord, bool) and ord in (1, -1, _INF, -_INF):
        across, along = (-2, n) if ord in (1, -1) else (-1, m)
        if along == 0:
            raise ValueError(f"matrix_norm: ord={ord} of an empty matrix (shape {x._shape})")
        sums = _red.sum(_ew.abs(x), axis=across)
        r = (_red.max if ord > 0 else _red.min)(sums, axis=-1)
    else:
        raise ValueError(
            f"matrix_norm: ord must be 'fro', 'nuc', 1, -1, 2, -2, inf or -inf, got {ord!r}"
        )
    if keepdims:
        r = _man.expand_dims(r, axis=(-2, -1))
    return r
