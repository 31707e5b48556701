"""The ``linalg`` extension vs NumPy: every function, every accepted dtype, batched and
non-contiguous input (transposed, sliced, negative strides, broadcast batches), meta agreement,
rejected dtypes, shape errors and LinAlgError; the three CPU routes (NumPy's gufuncs for
stacks, LAPACK called directly for one small matrix, SciPy's single-precision drivers for large
matrices)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import strided as xp
from strided import _dtypes as sdt
from strided.backends.cpu import _linalg as cpu_linalg

from .strategies import LAYOUTS, in_layout, seeds, values

L = xp.linalg
FLOATS = [sdt.float32, sdt.float64, sdt.complex64, sdt.complex128]
SINGLE = (sdt.float32, sdt.complex64)


def _tol(d) -> float:
    """The tolerance for dtype ``d`` (or ``d`` itself when it is already a tolerance)."""
    if isinstance(d, float):
        return d
    return 2e-4 if d in SINGLE else 1e-10


# -- inputs ---------------------------------------------------------------------------------------
def _general(rng, shape, d):
    return values(rng, shape, d, (-2.0, 2.0))


def _invertible(rng, shape, d):
    n = shape[-1]
    return (values(rng, shape, d, (-1.0, 1.0)) + 2 * n * np.eye(n)).astype(d.numpy)


def _hermitian(rng, shape, d):
    a = values(rng, shape, d, (-2.0, 2.0))
    return ((a + np.conj(np.swapaxes(a, -1, -2))) / 2).astype(d.numpy)


def _positive_definite(rng, shape, d):
    a = values(rng, shape, d, (-1.0, 1.0))
    n = shape[-1]
    return (a @ np.conj(np.swapaxes(a, -1, -2)) + n * np.eye(n)).astype(d.numpy)


# -- checks of non-unique results (by the properties that define them) ----------------------------
def _close(got, want, d, scale=1.0):
    tol = _tol(d) * max(scale, 1.0)
    np.testing.assert_allclose(np.asarray(got), want, rtol=tol, atol=tol)


def _ct(a):
    return np.conj(np.swapaxes(a, -1, -2))


def _check_eigh(x, res, d):
    w, v = np.asarray(res.eigenvalues), np.asarray(res.eigenvectors)
    _close(w, np.linalg.eigvalsh(x.astype(np.complex128)), d, 10)
    _close(v @ (w[..., :, None] * _ct(v)), x, d, 10)
    _close(_ct(v) @ v, np.broadcast_to(np.eye(x.shape[-1]), v.shape), d, 10)


def _same_eigenvalues(got, want, d):
    """Equal as multisets (the order is unspecified): each value is near one of the other's."""
    got, want = np.asarray(got), np.asarray(want)
    tol = _tol(d) * 10 * max(1.0, float(np.max(np.abs(want), initial=1.0)))
    dist = np.abs(got[..., :, None] - want[..., None, :])
    assert np.all(dist.min(axis=-1) <= tol) and np.all(dist.min(axis=-2) <= tol), (got, want)


def _check_eig(x, res, d):
    w, v = np.asarray(res.eigenvalues), np.asarray(res.eigenvectors)
    _close(x @ v, v * w[..., None, :], d, 10)
    _same_eigenvalues(w, np.linalg.eigvals(x.astype(np.complex128)), d)


def _check_svd(x, res, d, full):
    u, s, vh = (np.asarray(r) for r in res)
    k = min(x.shape[-2:])
    _close(s, np.linalg.svd(x.astype(np.complex128), compute_uv=False), d, 10)
    _close((u[..., :, :k] * s[..., None, :]) @ vh[..., :k, :], x, d, 10)
    _close(
        _ct(u) @ u, np.broadcast_to(np.eye(u.shape[-1]), u.shape[:-2] + (u.shape[-1],) * 2), d, 10
    )
    _close(vh @ _ct(vh), np.broadcast_to(np.eye(vh.shape[-2]), vh.shape[:-1] + vh.shape[-2:-1]), d)
    assert u.shape[-1] == (x.shape[-2] if full else k)


def _check_qr(x, res, d, mode):
    q, r = np.asarray(res.Q), np.asarray(res.R)
    _close(q @ r, x, d, 10)
    _close(_ct(q) @ q, np.broadcast_to(np.eye(q.shape[-1]), q.shape[:-2] + (q.shape[-1],) * 2), d)
    np.testing.assert_array_equal(r, np.triu(r))


def _values(ref):
    """Compare every output with NumPy's ``ref`` (outputs that are unique)."""

    def check(x, res, d):
        got = res if isinstance(res, tuple) else (res,)
        with np.errstate(all="ignore"):
            want = ref(x)
        want = want if isinstance(want, tuple) else (want,)
        for g, w in zip(got, want):
            _close(g, w, d, float(np.max(np.abs(w), initial=1.0)))

    return check


@dataclass
class Case:
    name: str
    fn: Callable  # strided array -> result
    check: Callable  # (numpy input, result, dtype) -> None
    make: Callable = _general
    shape: tuple = (2, 4, 4)
    accepts: str = "floating"
    outputs: tuple = ()  # named-tuple fields

    @property
    def function(self) -> str:
        """The public function's name (error messages name it)."""
        return self.name.split("_")[0] if self.name.startswith(_VARIANTS) else self.name


_VARIANTS = ("cholesky_", "solve_", "svd_", "qr_", "matrix_power_", "matrix_norm_")


CASES = [
    Case("cholesky", L.cholesky, _values(np.linalg.cholesky), _positive_definite),
    Case(
        "cholesky_upper",
        lambda a: L.cholesky(a, upper=True),
        _values(lambda x: _ct(np.linalg.cholesky(x))),
        _positive_definite,
    ),
    Case("inv", L.inv, _values(np.linalg.inv), _invertible),
    Case("det", L.det, _values(np.linalg.det), _invertible),
    Case(
        "slogdet",
        L.slogdet,
        _values(lambda x: tuple(np.linalg.slogdet(x))),
        _invertible,
        outputs=("sign", "logabsdet"),
    ),
    Case(
        "solve",
        lambda a: L.solve(a, a[..., :2]),
        _values(lambda x: np.linalg.solve(x, x[..., :2])),
        _invertible,
    ),
    Case(
        "solve_vector",
        lambda a: L.solve(a, a[0, 0]),
        _values(lambda x: np.linalg.solve(x, x[0, 0][..., None])[..., 0]),
        _invertible,
    ),
    Case("eigh", L.eigh, _check_eigh, _hermitian, outputs=("eigenvalues", "eigenvectors")),
    Case("eigvalsh", L.eigvalsh, _values(np.linalg.eigvalsh), _hermitian),
    Case("eig", L.eig, _check_eig, _invertible, outputs=("eigenvalues", "eigenvectors")),
    Case(
        "eigvals",
        L.eigvals,
        lambda x, r, d: _same_eigenvalues(r, np.linalg.eigvals(x), d),
        _invertible,
    ),
    Case(
        "svd",
        L.svd,
        lambda x, r, d: _check_svd(x, r, d, True),
        shape=(2, 5, 3),
        outputs=("U", "S", "Vh"),
    ),
    Case(
        "svd_reduced",
        lambda a: L.svd(a, full_matrices=False),
        lambda x, r, d: _check_svd(x, r, d, False),
        shape=(2, 3, 5),
    ),
    Case(
        "svdvals", L.svdvals, _values(lambda x: np.linalg.svd(x, compute_uv=False)), shape=(2, 3, 5)
    ),
    Case(
        "qr",
        L.qr,
        lambda x, r, d: _check_qr(x, r, d, "reduced"),
        shape=(2, 5, 3),
        outputs=("Q", "R"),
    ),
    Case(
        "qr_complete",
        lambda a: L.qr(a, mode="complete"),
        lambda x, r, d: _check_qr(x, r, d, "complete"),
        shape=(2, 5, 3),
    ),
    Case("pinv", L.pinv, _values(np.linalg.pinv), shape=(2, 5, 3)),
    Case(
        "matrix_rank",
        L.matrix_rank,
        _values(np.linalg.matrix_rank),
        lambda rng, s, d: np.repeat(values(rng, s[:-1] + (1,), d, (-2.0, 2.0)), s[-1], axis=-1),
        shape=(2, 4, 3),
    ),
    Case(
        "matrix_power",
        lambda a: L.matrix_power(a, 3),
        _values(lambda x: np.linalg.matrix_power(x, 3)),
    ),
    Case(
        "matrix_power_negative",
        lambda a: L.matrix_power(a, -2),
        _values(lambda x: np.linalg.matrix_power(x, -2)),
        _invertible,
    ),
    Case(
        "matrix_norm",
        L.matrix_norm,
        _values(lambda x: np.linalg.norm(x, axis=(-2, -1))),
        shape=(2, 3, 5),
    ),
    Case(
        "matrix_norm_2",
        lambda a: L.matrix_norm(a, ord=2, keepdims=True),
        _values(lambda x: np.linalg.norm(x, ord=2, axis=(-2, -1), keepdims=True)),
        shape=(2, 3, 5),
    ),
    Case(
        "vector_norm",
        lambda a: L.vector_norm(a, axis=(0, 2), ord=3),
        _values(lambda x: np.sum(np.abs(x) ** 3, axis=(0, 2)) ** (1 / 3)),
    ),
    Case(
        "trace",
        lambda a: L.trace(a, offset=1),
        _values(lambda x: np.trace(x, offset=1, axis1=-2, axis2=-1)),
        shape=(2, 3, 4),
        accepts="numeric",
    ),
    Case(
        "diagonal",
        lambda a: L.diagonal(a, offset=-1),
        _values(lambda x: np.diagonal(x, offset=-1, axis1=-2, axis2=-1)),
        shape=(2, 4, 3),
        accepts="any",
    ),
    Case(
        "cross",
        lambda a: L.cross(a, a[..., ::-1, :], axis=-2),
        _values(lambda x: np.cross(x, x[..., ::-1, :], axis=-2)),
        shape=(2, 3, 4),
        accepts="numeric",
    ),
    Case(
        "outer",
        lambda a: L.outer(a[0, 0], a[1, :, 1]),
        _values(lambda x: np.outer(x[0, 0], x[1, :, 1])),
        shape=(2, 3, 4),
        accepts="numeric",
    ),
]


def _small_ints(rng, shape, d):
    return values(rng, shape, d, int_domain=(0, 3) if d.kind == sdt.UNSIGNED else (-3, 3))


def _accepted(case):
    kinds = sdt.CATEGORIES[case.accepts]
    return [d for d in sdt.ALL_DTYPES if d.kind in kinds]


def _run(case: Case, d: sdt.DType, layout: str):
    rng = np.random.default_rng(sum(map(ord, case.name)))
    make = case.make if d.kind in sdt.FLOAT_KINDS else _small_ints
    v, a = in_layout(make(rng, case.shape, d), layout)
    res = case.fn(a)
    for r in res if isinstance(res, tuple) else (res,):
        assert r.device == xp.Device("cpu")
    case.check(v, res, d)
    return a, res


def _meta_agrees(case: Case, a, res):
    meta = case.fn(xp.empty(a.shape, dtype=a.dtype, device="meta"))
    got = res if isinstance(res, tuple) else (res,)
    want = meta if isinstance(meta, tuple) else (meta,)
    assert type(meta) is type(res) and len(want) == len(got)
    for m, g in zip(want, got):
        assert (m.shape, m.dtype, m.device) == (g.shape, g.dtype, xp.Device("meta"))


def _dtype_params():
    for case in CASES:
        for d in _accepted(case):
            yield pytest.param(case, d, id=f"{case.name}-{d.name}")


@pytest.mark.parametrize("case,d", list(_dtype_params()))
def test_every_accepted_dtype_against_numpy_and_meta(case: Case, d: sdt.DType):
    """A transposed (non-contiguous) batched input; result dtypes keep the input's precision."""
    a, res = _run(case, d, "transposed")
    for r in res if isinstance(res, tuple) else (res,):
        if case.name == "matrix_rank":
            assert r.dtype is xp.int64
        elif d.kind in sdt.FLOAT_KINDS:  # float32 in, float32 (or complex64) out
            assert sdt.real_of(r.dtype) is sdt.real_of(d), (case.name, d, r.dtype)
    if case.outputs:
        assert type(res).__name__.endswith("Result") and res._fields == case.outputs
        for name, r in zip(case.outputs, res):
            assert getattr(res, name) is r
    _meta_agrees(case, a, res)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_every_layout(case: Case, layout: str):
    _run(case, sdt.float64, layout)


def _rejected_params():
    for case in CASES:
        for d in sdt.ALL_DTYPES:
            if d.kind not in sdt.CATEGORIES[case.accepts]:
                yield pytest.param(case, d, id=f"{case.name}-{d.name}")


@pytest.mark.parametrize("case,d", list(_rejected_params()))
def test_rejected_dtypes_raise_type_error(case: Case, d: sdt.DType):
    for device in ("cpu", "meta"):
        a = xp.zeros(case.shape, dtype=d, device=device)
        with pytest.raises(TypeError, match=f"{case.function}.*{d.name}"):
            case.fn(a)


# -- the result types and results the spec describes ----------------------------------------------
def test_namespace_has_the_25_functions_and_aliases():
    names = """cholesky cross det diagonal eig eigh eigvals eigvalsh inv matmul matrix_norm
    matrix_power matrix_rank matrix_transpose outer pinv qr slogdet solve svd svdvals tensordot
    trace vecdot vector_norm""".split()
    assert sorted(L.__all__) == sorted(names + ["LinAlgError"])
    for n in names:
        assert callable(getattr(L, n)) and getattr(L, n).__doc__
    assert L.matmul is xp.matmul and L.tensordot is xp.tensordot and L.vecdot is xp.vecdot
    assert L.matrix_transpose is xp.matrix_transpose
    assert issubclass(L.LinAlgError, ValueError)


@pytest.mark.parametrize("shape", [(0, 0), (3, 0, 0), (0, 3, 3)])
def test_empty_square_matrices(shape):
    a = xp.zeros(shape)
    n = np.zeros(shape)
    np.testing.assert_array_equal(np.asarray(L.det(a)), np.linalg.det(n))  # det of 0x0 is 1
    sign, logabsdet = L.slogdet(a)
    want = np.linalg.slogdet(n)
    np.testing.assert_array_equal(np.asarray(sign), want[0])
    np.testing.assert_array_equal(np.asarray(logabsdet), want[1])
    for fn in (L.inv, L.cholesky, L.eigvalsh, L.eigvals, L.svdvals, L.pinv, L.matrix_rank):
        r = fn(a)
        assert r.shape == fn(xp.empty(shape, device="meta")).shape
    assert L.eigh(a).eigenvectors.shape == shape and L.qr(a).Q.shape == shape


@pytest.mark.parametrize("shape", [(3, 0), (0, 3), (2, 4, 0)])
def test_empty_rectangular_matrices(shape):
    a = xp.zeros(shape)
    for full in (True, False):
        u, s, vh = L.svd(a, full_matrices=full)
        nu, ns, nvh = np.linalg.svd(np.zeros(shape), full_matrices=full)
        assert (u.shape, s.shape, vh.shape) == (nu.shape, ns.shape, nvh.shape)
    assert L.pinv(a).shape == shape[:-2] + shape[-1:] + shape[-2:-1]
    np.testing.assert_array_equal(np.asarray(L.matrix_rank(a)), np.zeros(shape[:-2]))
    assert float(xp.sum(L.matrix_norm(a))) == 0.0


def test_singular_matrices_raise_linalg_error_naming_function_and_matrix():
    stack = xp.asarray(np.stack([np.eye(3), np.ones((3, 3)), np.eye(3)]))
    with pytest.raises(
        L.LinAlgError, match=r"inv: the matrix is singular \(at batch index \(1,\)\)"
    ):
        L.inv(stack)
    with pytest.raises(L.LinAlgError, match="solve: the matrix is singular"):
        L.solve(stack, xp.ones(3))
    with pytest.raises(L.LinAlgError, match="matrix_power: .*singular"):
        L.matrix_power(stack, -1)
    with pytest.raises(L.LinAlgError, match=r"cholesky: .*not positive definite.*\(1,\)"):
        L.cholesky(stack)
    with pytest.raises(ValueError):  # LinAlgError is a ValueError, as NumPy's
        L.inv(xp.zeros((2, 2)))
    with pytest.raises(L.LinAlgError, match="eig"):
        L.eigvals(xp.asarray([[np.nan, 1.0], [1.0, 1.0]]))
    # singular is not an error for the determinant
    sign, logabsdet = L.slogdet(stack)
    assert np.asarray(sign)[1] == 0 and np.asarray(logabsdet)[1] == -np.inf
    assert float(L.det(stack)[1]) == 0.0


@pytest.mark.parametrize("device", ["cpu", "meta"])
def test_shape_errors_name_function_and_shapes(device):
    z = xp.zeros
    cases = [
        (lambda: L.inv(z((2, 3), device=device)), r"inv.*square.*\(2, 3\)"),
        (lambda: L.det(z((3,), device=device)), r"det.*at least 2.*\(3,\)"),
        (lambda: L.eigh(z((4, 2, 3), device=device)), r"eigh.*\(4, 2, 3\)"),
        (lambda: L.svd(z((3,), device=device)), r"svd.*\(3,\)"),
        (lambda: L.solve(z((3, 3), device=device), z((4,), device=device)), r"solve.*\(4,\)"),
        (
            lambda: L.solve(z((2, 3, 3), device=device), z((3, 3, 1), device=device)),
            r"solve.*\(2, 3, 3\).*\(3, 3, 1\)",
        ),
        (lambda: L.qr(z((3, 3), device=device), mode="r"), "qr.*mode"),
        (lambda: L.cross(z((3,), device=device), z((4,), device=device)), r"cross.*\(4,\)"),
        (lambda: L.cross(z((2, 3), device=device), z((3, 3), device=device)), "cross"),
        (lambda: L.cross(z((3,), device=device), z((3,), device=device), axis=-2), "cross.*axis"),
        (lambda: L.outer(z((2, 2), device=device), z((2,), device=device)), r"outer.*\(2, 2\)"),
        (lambda: L.matrix_norm(z((3, 3), device=device), ord=3), "matrix_norm.*ord"),
        (lambda: L.vector_norm(z((3,), device=device), ord="fro"), "vector_norm.*ord"),
        (lambda: L.trace(z((3,), device=device)), r"trace.*\(3,\)"),
        (lambda: L.diagonal(z((3,), device=device)), r"diagonal.*\(3,\)"),
    ]
    for fn, pattern in cases:
        with pytest.raises(ValueError, match=pattern):
            fn()
    with pytest.raises(IndexError, match="vector_norm.*axis 1"):  # as every reduction
        L.vector_norm(z((3,), device=device), axis=1)
    with pytest.raises(TypeError, match="matrix_power.*integer"):
        L.matrix_power(z((2, 2), device=device), 1.5)
    with pytest.raises(ValueError, match="different devices"):
        L.solve(z((2, 2)), z((2,), device="meta"))


# -- function-specific semantics ------------------------------------------------------------------
@pytest.mark.parametrize(
    "sa,sb",
    [
        ((3, 3), (3,)),
        ((2, 3, 3), (3,)),
        ((3, 3), (3, 2)),
        ((2, 3, 3), (1, 3, 4)),
        ((1, 3, 3), (5, 3, 1)),
    ],
)
def test_solve_broadcasting_follows_2024_12(sa, sb):
    rng = np.random.default_rng(3)
    a = _invertible(rng, sa, sdt.float64)
    b = rng.standard_normal(sb)
    got = L.solve(xp.asarray(a), xp.asarray(b))
    if len(sb) == 1:
        want = np.linalg.solve(a, np.broadcast_to(b[:, None], a.shape[:-1] + (1,)))[..., 0]
    else:
        want = np.linalg.solve(a, b)
    assert got.shape == want.shape
    _close(got, want, sdt.float64)
    meta = L.solve(xp.empty(sa, device="meta"), xp.empty(sb, device="meta"))
    assert meta.shape == want.shape


def test_solve_promotes_mixed_dtypes():
    a32 = xp.asarray(np.eye(2, dtype=np.float32) * 2)
    assert L.solve(a32, xp.ones(2, dtype=xp.float64)).dtype is xp.float64
    assert L.solve(a32, xp.ones(2, dtype=xp.complex64)).dtype is xp.complex64
    assert L.solve(a32, xp.ones(2, dtype=xp.float32)).dtype is xp.float32


@pytest.mark.parametrize("n", [-3, -1, 0, 1, 2, 5])
def test_matrix_power(n):
    rng = np.random.default_rng(n + 10)
    v = _invertible(rng, (2, 3, 3), sdt.float64) / 4
    a = xp.asarray(v)
    got = L.matrix_power(a, n)
    _close(got, np.linalg.matrix_power(v, n), sdt.float64, 10)
    assert got is not a and got.shape == v.shape
    assert L.matrix_power(xp.empty((2, 3, 3), device="meta"), n).shape == v.shape


@pytest.mark.parametrize("ord", [2, 1, 0, -1, -2, float("inf"), float("-inf"), 3, 0.5, -1.5, 2.5])
@pytest.mark.parametrize("axis", [None, 1, -1, (0, 2), (2, 0), ()])
def test_vector_norm_orders_and_axes(ord, axis):
    rng = np.random.default_rng(5)
    v = rng.standard_normal((3, 4, 2))
    v[0, 0, 0] = 0.0  # ord=0 counts nonzeros; negative orders meet a zero
    ax = tuple(range(3)) if axis is None else (axis if isinstance(axis, tuple) else (axis,))
    ax = tuple(sorted(a % 3 for a in ax))
    moved = np.moveaxis(v, ax, tuple(range(-len(ax), 0)))
    flat = moved.reshape(moved.shape[: 3 - len(ax)] + (-1,))
    with np.errstate(divide="ignore"):
        want = np.linalg.norm(flat if ax else v[..., None], ord=ord, axis=-1)
    for keepdims in (False, True):
        got = L.vector_norm(xp.asarray(v), axis=axis, keepdims=keepdims, ord=ord)
        w = np.expand_dims(want, ax) if keepdims and ax else want
        assert got.shape == w.shape and got.dtype is xp.float64
        _close(got, w, sdt.float64)
        meta = L.vector_norm(
            xp.empty((3, 4, 2), device="meta"), axis=axis, keepdims=keepdims, ord=ord
        )
        assert meta.shape == w.shape


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(
    "shape,axis",
    [
        ((1500, 1100), 0),  # leading runs, wide: column blocks over threads
        ((300, 90), 0),  # leading runs, one thread
        ((70000, 3), 0),  # few columns: one long run in chunks, tasks' sums in order
        ((1001, 7), 0),  # few columns, a tail of rows after the last chunk
        ((2, 3, 5), (0, 1)),  # two leading axes
        ((30000, 5), 1),  # short trailing runs over threads
        ((300, 5), 1),  # short trailing runs, one thread
        ((40, 300), 1),  # long trailing runs
    ],
)
def test_fused_dot_and_norm_along_any_layout_match_numpy(dtype, shape, axis):
    """vecdot and the euclidean norm in one pass (``_kern_moment``): reduced axes outermost
    (rows added to columns' sums; few columns as one long run), short and long trailing runs,
    serial and over threads.  NumPy's values, and the same bits on one thread or two."""
    import numba

    rng = np.random.default_rng(len(shape) + shape[0])
    a = rng.standard_normal(shape).astype(dtype)
    b = rng.standard_normal(shape).astype(dtype)
    sa, sb = xp.asarray(a), xp.asarray(b)
    ax = axis if isinstance(axis, tuple) else (axis,)
    want_dot = np.sum(a.astype(np.float64) * b, axis=ax)
    want_norm = np.sqrt(np.sum(a.astype(np.float64) ** 2, axis=ax))
    tol = 1e-4 if dtype is np.float32 else 1e-11
    before = numba.get_num_threads()
    try:
        got = []
        for threads in (1, min(2, numba.config.NUMBA_NUM_THREADS)):
            numba.set_num_threads(threads)
            norm = np.asarray(L.vector_norm(sa, axis=axis))
            dot = np.asarray(xp.vecdot(sa, sb, axis=axis)) if len(ax) == 1 else None
            got.append((norm, dot))
            np.testing.assert_allclose(norm, want_norm, rtol=tol)
            if dot is not None:
                np.testing.assert_allclose(dot, want_dot, rtol=tol, atol=tol * shape[axis])
        np.testing.assert_array_equal(got[0][0], got[1][0])
        if got[0][1] is not None:
            np.testing.assert_array_equal(got[0][1], got[1][1])
    finally:
        numba.set_num_threads(before)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("step", [2, 16, 17, -2])
@pytest.mark.parametrize("n", [5, 4097, 300_001])
def test_dot_and_norm_of_stepped_vectors_read_spans(n, step, dtype):
    """vecdot and the norm of two vectors of one step: steps up to 16 read the runs' whole
    spans (``_kern_moment.dot_span``; infinities and NaN between the wanted elements must not
    leak in), others a copy; small ones through the planned lane (called twice), large ones in
    tasks over threads with the same bits on one thread or two."""
    import numba

    rng = np.random.default_rng(n + step)
    buf_a = np.full(n * abs(step) + 3, np.inf, dtype)
    buf_b = np.full(n * abs(step) + 3, np.nan, dtype)
    pick = slice(1, None, step) if step > 0 else slice(-2, None, step)
    a, b = buf_a[pick][:n], buf_b[pick][:n]
    a[...] = rng.standard_normal(n)
    b[...] = rng.standard_normal(n)
    sa, sb = xp.asarray(buf_a)[pick][:n], xp.asarray(buf_b)[pick][:n]
    want_dot = np.sum(a.astype(np.float64) * b)
    want_norm = np.sqrt(np.sum(a.astype(np.float64) ** 2))
    tol = 1e-4 if dtype is np.float32 else 1e-11
    before = numba.get_num_threads()
    try:
        got = []
        for threads in (1, min(2, numba.config.NUMBA_NUM_THREADS), 1):
            numba.set_num_threads(threads)
            got.append((float(xp.vecdot(sa, sb)), float(L.vector_norm(sa))))
            np.testing.assert_allclose(got[-1][0], want_dot, rtol=tol, atol=tol * np.sqrt(n))
            np.testing.assert_allclose(got[-1][1], want_norm, rtol=tol)
        assert got[0] == got[1] == got[2]
    finally:
        numba.set_num_threads(before)


def _integer_or_complex(rng, shape, dtype):
    if np.dtype(dtype).kind == "c":
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    info = np.iinfo(dtype)  # the whole range: products and sums wrap around
    return rng.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)


#: vecdot layouts by DOT's loops: (shape, axis, step along the only axis of a vector or None)
_DOT_SERIAL = [((300, 90), 0, None), ((1001, 7), 0, None), ((300, 5), 1, None),
               ((40, 300), 1, None), ((4097,), 0, 2)]  # fmt: skip
_DOT_PARALLEL = [((60, 1500), 0, None), ((70000, 3), 0, None), ((30000, 5), 1, None),
                 ((70000,), 0, None), ((300001,), 0, -2)]  # fmt: skip


@pytest.mark.parametrize(
    "dtype,layouts",
    [(np.complex128, _DOT_SERIAL + _DOT_PARALLEL), (np.int32, _DOT_SERIAL),
     (np.uint64, _DOT_SERIAL), (np.complex64, _DOT_SERIAL)],
)  # fmt: skip
def test_fused_dot_of_integers_and_complex_like_numpy(dtype, layouts):
    """vecdot of integer and complex operands runs the fused dot too: x1 conjugated, integer
    sums wrapping around in the operands' dtype (NumPy's vecdot, to the bit for integers),
    over the loops' layouts (leading runs wide and narrow, short and long trailing runs, a
    stepped vector; over threads for complex128 alone: each dtype compiles them, ~2 s each of
    a cold make test), the same bits on one thread or two."""
    import numba

    from strided._ops.linalg import DOT

    rng = np.random.default_rng(np.dtype(dtype).itemsize)
    calls = []
    kernel = DOT.kernels["cpu"]
    DOT.kernels["cpu"] = lambda *args, **kw: (calls.append(1), kernel(*args, **kw))
    before = numba.get_num_threads()
    try:
        for shape, axis, step in layouts:
            buf_a = _integer_or_complex(rng, shape if step is None else (shape[0] * 2,), dtype)
            buf_b = _integer_or_complex(rng, buf_a.shape, dtype)
            pick = slice(None) if step is None else slice(None, None, step)
            a, b = buf_a[pick], buf_b[pick]
            sa, sb = xp.asarray(buf_a)[pick], xp.asarray(buf_b)[pick]
            want = np.vecdot(a, b, axis=axis)
            bits = []
            for threads in (1, min(2, numba.config.NUMBA_NUM_THREADS)):
                numba.set_num_threads(threads)
                got = np.asarray(xp.vecdot(sa, sb, axis=axis))
                assert got.dtype == want.dtype
                if np.dtype(dtype).kind == "c":  # rounding relative to the terms' magnitudes
                    scale = np.vecdot(np.abs(a), np.abs(b), axis=axis)
                    tol = 1e-5 if dtype == np.complex64 else 1e-13
                    assert np.all(np.abs(got - want) <= tol * scale), (shape, axis, step)
                else:
                    np.testing.assert_array_equal(got, want, err_msg=f"{shape} {axis} {step}")
                bits.append(got.tobytes())
            assert bits[0] == bits[1], (shape, axis, step)
    finally:
        numba.set_num_threads(before)
        DOT.kernels["cpu"] = kernel
    assert len(calls) == 2 * len(layouts)


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_complex_norms_by_the_fused_dot_like_numpy(dtype):
    """The 2-norm of a complex array runs the fused dot over its real and imaginary parts (a
    trailing pair axis; columns of their own where the reduced axes are outermost; a copy for
    other layouts): NumPy's values and real dtype over those layouts (also empty, transposed,
    stepped and over threads), the same bits on one thread or two, matrix_norm too."""
    import numba

    from strided._ops.linalg import DOT

    rng = np.random.default_rng(5)
    cases = [((4096,), None), ((64, 64), 1), ((64, 64), 0), ((70000, 3), 0), ((300, 301), 1),
             ((3, 4, 5), (0, 2)), ((2, 3, 5), (0, 1)), ((0, 4), 0), ((4, 0), 0), ((1000, 500), 0),
             ((200001,), None)]  # fmt: skip
    before = numba.get_num_threads()
    rtol = 1e-5 if dtype == np.complex64 else 1e-13
    try:  # (no spy on the kernel here: a wrapped kernel has no dense lane)
        for shape, axis in cases:
            x = (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
            s = xp.asarray(x)
            views = [(s, x), (s[1:], x[1:])]  # (the second at an offset, in the first's lane)
            if len(shape) == 2:
                views.append((s.mT, x.T))
            elif len(shape) == 1:
                views.append((s[::3], x[::3]))
            for sv, v in views:
                want = np.linalg.vector_norm(v, axis=axis)
                bits = []
                for threads in (1, min(2, numba.config.NUMBA_NUM_THREADS)):
                    numba.set_num_threads(threads)
                    got = np.asarray(L.vector_norm(sv, axis=axis))
                    assert got.dtype == want.dtype
                    np.testing.assert_allclose(got, want, rtol=rtol, err_msg=f"{shape} {axis}")
                    bits.append(got.tobytes())
                assert bits[0] == bits[1], (shape, axis)
            if len(shape) == 2:
                got = np.asarray(L.matrix_norm(s, keepdims=True))
                np.testing.assert_allclose(got, np.linalg.matrix_norm(x, keepdims=True), rtol=rtol)
    finally:
        numba.set_num_threads(before)
    calls = []
    kernel = DOT.kernels["cpu"]
    DOT.kernels["cpu"] = lambda *args, **kw: (calls.append(1), kernel(*args, **kw))
    try:
        L.vector_norm(xp.asarray(np.ones((5, 6), dtype)), axis=0)
    finally:
        DOT.kernels["cpu"] = kernel
    assert len(calls) == 1


def test_vector_norm_complex_keeps_precision():
    v = (np.arange(6) - 2.5 + 1j).astype(np.complex64)
    got = L.vector_norm(xp.asarray(v))
    assert got.dtype is xp.float32
    np.testing.assert_allclose(float(got), np.linalg.norm(v), rtol=1e-6)


@pytest.mark.parametrize("ord", ["fro", "nuc", 1, -1, 2, -2, float("inf"), float("-inf")])
@pytest.mark.parametrize("d", [sdt.float32, sdt.complex128])
def test_matrix_norm_orders(ord, d):
    rng = np.random.default_rng(6)
    v = values(rng, (2, 3, 4), d)
    for keepdims in (False, True):
        got = L.matrix_norm(xp.asarray(v), ord=ord, keepdims=keepdims)
        want = np.linalg.norm(v, ord=ord, axis=(-2, -1), keepdims=keepdims)
        assert got.shape == want.shape and got.dtype is sdt.real_of(d)
        _close(got, want, d, 10)


def test_pinv_and_matrix_rank_rtol():
    rng = np.random.default_rng(7)
    u = np.linalg.qr(rng.standard_normal((2, 4, 4)))[0]
    s = np.array([[1.0, 1e-3, 1e-6, 0.0], [1.0, 0.5, 1e-9, 0.0]])
    v = (u * s[:, None, :]) @ np.swapaxes(u, -1, -2)
    a = xp.asarray(v)
    np.testing.assert_array_equal(np.asarray(L.matrix_rank(a)), [3, 3])
    np.testing.assert_array_equal(np.asarray(L.matrix_rank(a, rtol=1e-4)), [2, 2])
    rtol = xp.asarray([1e-2, 1e-2])
    np.testing.assert_array_equal(np.asarray(L.matrix_rank(a, rtol=rtol)), [1, 2])
    assert L.matrix_rank(a).dtype is xp.int64
    for r in (None, 1e-4):
        want = np.linalg.pinv(v, rcond=r if r is not None else 4 * np.finfo(float).eps)
        _close(L.pinv(a, rtol=r), want, sdt.float64, 1e9)
    assert L.pinv(a, rtol=rtol).shape == (2, 4, 4)
    with pytest.raises(TypeError, match="matrix_rank"):
        L.matrix_rank(a, rtol=xp.asarray([1, 2]))


@pytest.mark.parametrize("offset", [-5, -2, 0, 1, 3, 7])
def test_diagonal_is_a_view_and_trace_dtype(offset):
    v = np.arange(2 * 3 * 4, dtype=np.int16).reshape(2, 3, 4)
    a = xp.asarray(v)
    d = L.diagonal(a, offset=offset)
    np.testing.assert_array_equal(np.asarray(d), np.diagonal(v, offset, -2, -1))
    if d.size:
        assert d._buf is a._buf  # a view, no copy
    t = L.trace(a, offset=offset)
    assert t.dtype is xp.int64  # small integers accumulate in the default integer dtype
    np.testing.assert_array_equal(np.asarray(t), np.trace(v, offset, axis1=-2, axis2=-1))
    assert L.trace(a, offset=offset, dtype=xp.float32).dtype is xp.float32
    assert L.trace(xp.asarray(v, dtype=xp.uint8)).dtype is xp.uint64
    assert L.trace(xp.asarray(v, dtype=xp.float32)).dtype is xp.float32
    assert L.diagonal(xp.empty((2, 3, 4), device="meta"), offset=offset).shape == d.shape


@pytest.mark.parametrize(
    "sa,sb,axis",
    [((3,), (3,), -1), ((4, 3), (1, 3), -1), ((3, 5), (2, 3, 1), -2), ((2, 3, 2), (3, 2), -2)],
)
def test_cross_broadcasting_and_integers(sa, sb, axis):
    rng = np.random.default_rng(8)
    a = rng.integers(-5, 5, size=sa).astype(np.int32)
    b = rng.integers(-5, 5, size=sb).astype(np.int8)
    got = L.cross(xp.asarray(a), xp.asarray(b), axis=axis)
    want = np.cross(a, b.astype(np.int32), axis=axis)
    assert got.dtype is xp.int32
    np.testing.assert_array_equal(np.asarray(got), want)
    meta = L.cross(
        xp.empty(sa, dtype=xp.int32, device="meta"),
        xp.empty(sb, dtype=xp.int8, device="meta"),
        axis=axis,
    )
    assert meta.shape == want.shape and meta.dtype is xp.int32


def test_outer_promotes_and_is_exact():
    a = xp.asarray([1, 2, 3], dtype=xp.int8)
    b = xp.asarray([0.5, -1.0], dtype=xp.float32)
    got = L.outer(a, b)
    assert got.dtype is xp.float32 and got.shape == (3, 2)
    np.testing.assert_array_equal(np.asarray(got), np.outer([1, 2, 3], [0.5, -1.0]))


# -- the SciPy route: large matrices ---------------------------------------------------------------
BIG = 130  # 130**3 > DIRECT_MAX_WORK


@pytest.mark.parametrize("d", SINGLE, ids=lambda d: d.name)
def test_large_single_precision_matrices_take_the_scipy_route(d):
    assert BIG**3 > cpu_linalg.DIRECT_MAX_WORK
    rng = np.random.default_rng(9)
    a = _invertible(rng, (2, BIG, BIG), d)
    h = _hermitian(rng, (BIG, BIG), d)
    p = _positive_definite(rng, (BIG, BIG), d)
    big = 1e-3 * BIG  # float32 error grows with the size
    _, x = in_layout(a, "transposed")
    for fn, check in [
        (L.inv, _values(np.linalg.inv)),
        (lambda m: L.solve(m, m[..., :3]), _values(lambda m: np.linalg.solve(m, m[..., :3]))),
        (L.svdvals, _values(lambda m: np.linalg.svd(m, compute_uv=False))),
        (lambda m: L.svd(m, full_matrices=False), lambda v, r, dd: _check_svd(v, r, dd, False)),
        (L.qr, lambda v, r, dd: _check_qr(v, r, dd, "reduced")),
        (L.eig, _check_eig),
    ]:
        res = fn(x)
        for r in res if isinstance(res, tuple) else (res,):
            assert r.dtype in (d, sdt.real_of(d), sdt.complex_of(d))
        check(a.astype(np.complex128 if d.kind == sdt.COMPLEX else np.float64), res, big)
    _check_eigh(h.astype(np.complex128), L.eigh(xp.asarray(h)), big)
    _close(L.eigvalsh(xp.asarray(h)), np.linalg.eigvalsh(h.astype(np.complex128)), big, 10)
    low = np.asarray(L.cholesky(xp.asarray(p)))
    _close(low @ _ct(low), p, big, 10)
    np.testing.assert_array_equal(low, np.tril(low))
    up = np.asarray(L.cholesky(xp.asarray(p), upper=True))
    np.testing.assert_array_equal(up, np.triu(up))
    singular = np.stack([a[0], np.zeros_like(a[0])])
    with pytest.raises(L.LinAlgError, match=r"inv: .*\(1,\)"):
        L.inv(xp.asarray(singular))
    with pytest.raises(L.LinAlgError, match="cholesky"):
        L.cholesky(xp.asarray(-p))


# -- random batch shapes and layouts --------------------------------------------------------------
@settings(max_examples=15, deadline=None)
@given(
    data=st.data(),
    rng=seeds(),
    batch=st.sampled_from([(), (1,), (3,), (2, 2), (0,)]),
    n=st.integers(1, 5),
)
def test_random_batches_and_layouts(data, rng, batch, n):
    d = data.draw(st.sampled_from(FLOATS))
    layout = data.draw(st.sampled_from(LAYOUTS if batch and batch[0] > 1 else LAYOUTS[:4]))
    v, a = in_layout(_invertible(rng, batch + (n, n), d), layout)
    _close(L.inv(a), np.linalg.inv(v), d, 10)
    _close(L.det(a), np.linalg.det(v), d, float(np.max(np.abs(np.linalg.det(v)), initial=1.0)))
    _check_svd(v, L.svd(a), d, True)
    h = (v + _ct(v)) / 2
    _, ha = in_layout(h, layout)
    _check_eigh(h, L.eigh(ha), d)


@pytest.mark.parametrize("d", [sdt.float64, sdt.complex128], ids=lambda d: d.name)
def test_large_inverse_in_double_precision_takes_getri(d):
    rng = np.random.default_rng(10)
    a = _invertible(rng, (2, BIG, BIG), d)
    _close(L.inv(xp.asarray(a)), np.linalg.inv(a), d, 10)
    with pytest.raises(L.LinAlgError, match=r"inv: the matrix is singular \(at batch index \(1,\)"):
        L.inv(xp.asarray(np.stack([a[0], np.zeros_like(a[0])])))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(
    "shape,axis,layout",
    [
        ((4096,), -1, "C"),
        ((70000,), -1, "C"),  # one long run: segments over threads
        ((64, 64), -1, "C"),
        ((300, 301), -1, "C"),  # many rows over threads
        ((30, 40), 0, "C"),  # the reduced axis first: copied with it last
        ((30, 40), -1, "transposed"),
        ((3, 4, 50), 1, "C"),
    ],
)
def test_fused_dot_of_vecdot_and_vector_norm_like_numpy(dtype, shape, axis, layout):
    """vecdot of untracked real floating operands of one shape, and the euclidean norm, run the
    fused dot (one pass, no product temporary): NumPy's values over layouts, axes and sizes,
    the same bits with one thread or two, and the kernel did run."""
    import numba

    from strided._ops.linalg import DOT

    rng = np.random.default_rng(len(shape) + shape[-1])
    a = rng.standard_normal(shape).astype(dtype)
    b = rng.standard_normal(shape).astype(dtype)
    sa, sb = xp.asarray(a), xp.asarray(b)
    if layout == "transposed":
        a, b = a.T, b.T
        sa, sb = sa.T, sb.T
    # a sum's rounding: relative to the terms' scale (sqrt(n) for unit normal terms)
    n = shape[axis]
    rtol = 2e-5 if dtype == np.float32 else 1e-12
    atol = rtol * np.sqrt(n)
    calls = []
    kernel = DOT.kernels["cpu"]
    DOT.kernels["cpu"] = lambda *args, **kw: (calls.append(1), kernel(*args, **kw))
    before = numba.get_num_threads()
    try:
        bits = []
        for threads in (1, min(2, numba.config.NUMBA_NUM_THREADS)):
            numba.set_num_threads(threads)
            got = xp.vecdot(sa, sb, axis=axis)
            want = np.vecdot(a, b, axis=axis)
            np.testing.assert_allclose(np.asarray(got), want, rtol=rtol, atol=atol)
            norm = xp.linalg.vector_norm(sa, axis=axis, keepdims=True)
            want = np.linalg.vector_norm(a, axis=axis, keepdims=True)
            assert norm.shape == want.shape
            np.testing.assert_allclose(np.asarray(norm), want, rtol=rtol)
            whole = xp.linalg.vector_norm(sa)
            np.testing.assert_allclose(float(whole), np.linalg.vector_norm(a), rtol=rtol)
            bits.append(np.asarray(got).tobytes() + np.asarray(whole).tobytes())
        assert bits[0] == bits[1]
    finally:
        numba.set_num_threads(before)
        DOT.kernels["cpu"] = kernel
    assert len(calls) == 6


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_fused_dot_dense_lane_reads_each_views_own_offset(dtype):
    """Small operands whose reduced axes are dense runs take DOT's dense lane, planned once per
    layout: views of that layout at other offsets (rows of a larger matrix, a vector's tails)
    must read their own elements."""
    from strided._ops.linalg import DOT

    rng = np.random.default_rng(11)
    m = rng.standard_normal((12, 50)).astype(dtype)
    v = rng.standard_normal(300).astype(dtype)
    sm, sv = xp.asarray(m), xp.asarray(v)
    rtol = 2e-5 if dtype == np.float32 else 1e-12
    for lo in (0, 1, 5):
        got = xp.vecdot(sm[lo : lo + 6], sm[lo + 1 : lo + 7])
        want = np.vecdot(m[lo : lo + 6], m[lo + 1 : lo + 7])
        np.testing.assert_allclose(np.asarray(got), want, rtol=rtol, atol=rtol * 8)
        norm = xp.linalg.vector_norm(sv[lo : lo + 200])
        np.testing.assert_allclose(float(norm), np.linalg.vector_norm(v[lo : lo + 200]), rtol=rtol)
    key = (xp.float32 if dtype == np.float32 else xp.float64, (6, 50), (1,), False)
    assert DOT._plans[key][8] is not None  # the plan has the dense lane


def test_vector_norm_lane_after_untracked_calls_keeps_records_observers_and_errors():
    """Once an untracked 2-norm's checks are remembered, a tracked input of the same kind still
    records the composite (PyTorch's gradient), an observer still sees it, keepdims and views
    at other offsets give NumPy's values, and a non-number ord is still refused."""
    import torch

    from strided import dispatch

    rng = np.random.default_rng(3)
    v = rng.standard_normal((5, 40))
    a = xp.asarray(v)
    for _ in range(2):  # the second call takes the lane
        for axis, keepdims in ((None, False), (1, True), ((0, 1), True), (-1, False)):
            got = xp.linalg.vector_norm(a[1:4], axis=axis, keepdims=keepdims)
            want = np.linalg.vector_norm(v[1:4], axis=axis, keepdims=keepdims)
            assert got.shape == want.shape
            np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12)
            got = xp.linalg.vector_norm(a[2:5], axis=axis, keepdims=keepdims)
            want = np.linalg.vector_norm(v[2:5], axis=axis, keepdims=keepdims)
            np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12)
    x = xp.asarray(v[1:4].copy(), requires_grad=True)
    xp.sum(xp.linalg.vector_norm(x, axis=1, keepdims=True)).backward()
    t = torch.tensor(v[1:4], requires_grad=True)
    torch.linalg.vector_norm(t, dim=1, keepdim=True).sum().backward()
    np.testing.assert_allclose(np.asarray(x.grad), t.grad.numpy(), rtol=1e-12)
    calls = []
    with dispatch.observe(lambda prim, args, params, out, depth: calls.append((prim.name, depth))):
        xp.linalg.vector_norm(a[1:4], axis=1, keepdims=True)
    assert ("euclidean_norm", 0) in calls
    with pytest.raises(ValueError, match="vector_norm"):
        xp.linalg.vector_norm(a[1:4], ord=xp.asarray(2.0))


def test_matrix_norm_fro_lane_reads_views_and_still_records():
    """matrix_norm's Frobenius norm takes vector_norm's remembered lane over the last two
    axes: stacks and views at other offsets, keepdims, and a tracked input still recording
    PyTorch's gradient; another ord of the same array is still the general path."""
    import torch

    rng = np.random.default_rng(6)
    v = rng.standard_normal((4, 5, 6)).astype(np.float32)
    a = xp.asarray(v)
    for _ in range(2):
        for lo in (0, 1):
            for keepdims in (False, True):
                got = xp.linalg.matrix_norm(a[lo : lo + 3], keepdims=keepdims)
                want = np.linalg.matrix_norm(v[lo : lo + 3], keepdims=keepdims)
                assert got.shape == want.shape
                np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6)
    np.testing.assert_allclose(
        np.asarray(xp.linalg.matrix_norm(a[:3], ord=1)), np.linalg.matrix_norm(v[:3], ord=1)
    )
    x = xp.asarray(v[:3].astype(np.float64), requires_grad=True)
    xp.linalg.matrix_norm(xp.asarray(v[:3].astype(np.float64)))  # the lane remembered
    xp.sum(xp.linalg.matrix_norm(x) * 3.0).backward()
    t = torch.tensor(v[:3].astype(np.float64), requires_grad=True)
    (torch.linalg.matrix_norm(t) * 3.0).sum().backward()
    np.testing.assert_allclose(np.asarray(x.grad), t.grad.numpy(), rtol=1e-12)


def test_vecdot_lane_after_untracked_calls_checks_its_operands():
    """Once an untracked vecdot's checks are remembered, a second operand of another dtype or
    shape, or a tracked operand, takes the general path (promotion, broadcasting, recording)."""
    import torch

    rng = np.random.default_rng(4)
    v, w = rng.standard_normal((2, 6, 9))
    a, b = xp.asarray(v), xp.asarray(w)
    for _ in range(2):
        np.testing.assert_allclose(np.asarray(xp.vecdot(a, b)), np.vecdot(v, w), rtol=1e-12)
    b32 = xp.asarray(w.astype(np.float32))
    got = xp.vecdot(a, b32)
    assert got.dtype == xp.float64
    np.testing.assert_allclose(np.asarray(got), np.vecdot(v, w.astype(np.float32)), rtol=1e-12)
    row = xp.asarray(w[0])
    np.testing.assert_allclose(np.asarray(xp.vecdot(a, row)), np.vecdot(v, w[0]), rtol=1e-12)
    x = xp.asarray(v, requires_grad=True)
    xp.sum(xp.vecdot(x, b)).backward()
    t = torch.tensor(v, requires_grad=True)
    torch.linalg.vecdot(t, torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(np.asarray(x.grad), t.grad.numpy(), rtol=1e-12)


def test_vecdot_and_norm_gradients_still_flow_like_torch():
    """Recorded operands take vecdot's composition and the norm's own rule (the fused dot runs
    only untracked): PyTorch's gradients, the norm's zero subgradient at 0 included."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(4)
    a_n, b_n = rng.standard_normal((5, 7)), rng.standard_normal((5, 7))
    a_n[2] = 0.0
    a, b = xp.asarray(a_n, requires_grad=True), xp.asarray(b_n, requires_grad=True)
    loss = xp.sum(xp.vecdot(a, b) * 3.0) + xp.sum(xp.linalg.vector_norm(a, axis=-1))
    loss.backward()
    ta, tb = torch.tensor(a_n, requires_grad=True), torch.tensor(b_n, requires_grad=True)
    tl = (torch.linalg.vecdot(ta, tb) * 3.0).sum() + torch.linalg.vector_norm(ta, dim=-1).sum()
    tl.backward()
    np.testing.assert_allclose(np.asarray(a.grad), ta.grad.numpy(), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(b.grad), tb.grad.numpy(), rtol=1e-12)


def test_tensordot_plans_per_shapes_and_axes_and_still_checks():
    """tensordot remembers its checked plan per (shapes, int axes): repeated calls with other
    int axes, views at other offsets and permuted operands give NumPy's values, a mismatch is
    refused every time, and a tracked operand still gets PyTorch's gradient."""
    import torch

    rng = np.random.default_rng(5)
    a_n, b_n = rng.standard_normal((4, 3, 3)), rng.standard_normal((3, 3, 5))
    a, b = xp.asarray(a_n), xp.asarray(b_n)
    for _ in range(2):  # the second round takes the remembered plans
        for axes in (0, 1, 2):
            got = xp.tensordot(a, b, axes=axes)
            np.testing.assert_allclose(np.asarray(got), np.tensordot(a_n, b_n, axes), rtol=1e-12)
        m = xp.asarray(a_n[0])
        for x, x_n in ((m, a_n[0]), (a[1], a_n[1]), (xp.matrix_transpose(m), a_n[0].T)):
            got = xp.tensordot(x, x, axes=1)
            np.testing.assert_allclose(np.asarray(got), x_n @ x_n, rtol=1e-12)
        got = xp.tensordot(a, b, axes=([1, 2], [1, 0]))
        want = np.tensordot(a_n, b_n, axes=([1, 2], [1, 0]))
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12)
        with pytest.raises(ValueError, match="tensordot"):
            xp.tensordot(a, xp.asarray(b_n[:2]), axes=1)
        with pytest.raises(ValueError, match="tensordot"):
            xp.tensordot(a, b, axes=4)
    x = xp.asarray(a_n, requires_grad=True)
    xp.sum(xp.tensordot(x, b, axes=2) ** 2).backward()
    t = torch.tensor(a_n, requires_grad=True)
    (torch.tensordot(t, torch.tensor(b_n), dims=2) ** 2).sum().backward()
    np.testing.assert_allclose(np.asarray(x.grad), t.grad.numpy(), rtol=1e-12)


def test_trace_and_outer_lanes_match_numpy_record_and_report():
    """trace and outer build their views directly for untracked plain arrays: NumPy's values for
    offsets, strided and reversed operands; a tracked operand still gets PyTorch's gradient and
    an observer still sees the calls."""
    import torch

    from strided import dispatch

    rng = np.random.default_rng(6)
    m_n = rng.standard_normal((7, 9))
    m = xp.asarray(m_n)
    for offset in (-3, 0, 2, 9):
        got = xp.linalg.trace(m[::2], offset=offset)
        np.testing.assert_allclose(float(got), np.trace(m_n[::2], offset=offset), rtol=1e-12)
    got = xp.linalg.trace(xp.asarray(np.arange(12, dtype=np.int32).reshape(3, 4)), dtype=xp.int64)
    assert got.dtype == xp.int64 and int(got) == np.trace(np.arange(12).reshape(3, 4))
    for u, v, u_n, v_n in (
        (m[0], m[1, ::2], m_n[0], m_n[1, ::2]),
        (m[2, ::-1], m[:, 3], m_n[2, ::-1], m_n[:, 3]),
    ):
        np.testing.assert_array_equal(np.asarray(xp.linalg.outer(u, v)), np.outer(u_n, v_n))
    x = xp.asarray(m_n, requires_grad=True)
    (xp.linalg.trace(x, offset=1) + xp.sum(xp.linalg.outer(x[0], x[1]))).backward()
    t = torch.tensor(m_n, requires_grad=True)
    (torch.diagonal(t, offset=1).sum() + torch.outer(t[0], t[1]).sum()).backward()
    np.testing.assert_allclose(np.asarray(x.grad), t.grad.numpy(), rtol=1e-12)
    calls = []
    with dispatch.observe(lambda prim, args, params, out, depth: calls.append(prim.name)):
        xp.linalg.trace(m)
        xp.linalg.outer(m[0], m[1])
    assert "diagonal" in calls and calls.count("expand_dims") == 2


# -- one matrix: the direct LAPACK route ----------------------------------------------------------
def _single_params():
    for case in CASES:
        if case.name in ("outer", "solve_vector", "vector_norm", "cross", "trace", "diagonal"):
            continue  # (no LAPACK, or calls that index a batch)
        for d in FLOATS:
            yield pytest.param(case, d, id=f"{case.name}-{d.name}")


@pytest.mark.parametrize("layout", ["contiguous", "transposed", "negative"])
@pytest.mark.parametrize("case,d", list(_single_params()))
def test_single_matrices_take_the_direct_route_like_numpy(case: Case, d: sdt.DType, layout):
    """One matrix (no batch) calls its LAPACK driver directly: the same checks against NumPy as
    a stack, in every floating dtype, C-ordered and transposed."""
    assert cpu_linalg._direct(np.empty(case.shape[1:]))
    rng = np.random.default_rng(sum(map(ord, case.name)) + 1)
    v, a = in_layout(case.make(rng, case.shape[1:], d), layout)
    case.check(v, case.fn(a), d)


@pytest.mark.parametrize("d", FLOATS, ids=lambda d: d.name)
@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (4, 4), (1, 6)])
def test_single_matrix_factorizations_shapes_triangles_and_failures(d, shape):
    """The direct route's shapes for tall, wide and square matrices (svd with and without full
    matrices, both qr modes), strictly triangular Cholesky factors and R, only the lower
    triangle read by eigh, eigvalsh and cholesky (as NumPy), and NumPy's LinAlgError on a
    singular or indefinite matrix."""
    rng = np.random.default_rng(11)
    v = _general(rng, shape, d)
    x = xp.asarray(v)
    for full in (True, False):
        _check_svd(v, L.svd(x, full_matrices=full), d, full)
        u, s, vh = L.svd(x, full_matrices=full)
        nu, ns, nvh = np.linalg.svd(v, full_matrices=full)
        assert (u.shape, s.shape, vh.shape) == (nu.shape, ns.shape, nvh.shape)
    for mode in ("reduced", "complete"):
        q, r = L.qr(x, mode=mode)
        nq, nr = np.linalg.qr(v, mode=mode)
        assert (q.shape, r.shape) == (nq.shape, nr.shape)
        _check_qr(v, L.qr(x, mode=mode), d, mode)
    if shape[0] != shape[1]:
        return
    a = _invertible(rng, shape, d)
    b = _general(rng, shape[:1] + (3,), d)
    for rhs, ref in ((b[:, 0], b[:, 0]), (b[:, ::-1], b[:, ::-1]), (b[:, :0], b[:, :0])):
        got = L.solve(xp.asarray(a), xp.asarray(b)[:, 0] if rhs.ndim == 1 else xp.asarray(rhs))
        assert got.shape == rhs.shape
        _close(got, np.linalg.solve(a.astype(np.complex128), ref), d, 10)
    p = _positive_definite(rng, shape, d)
    lopsided = p + np.triu(np.full(shape, 7.0, p.dtype), 1)  # upper triangle not the lower's
    low, up = (
        np.asarray(L.cholesky(xp.asarray(lopsided))),
        np.asarray(L.cholesky(xp.asarray(lopsided), upper=True)),
    )
    np.testing.assert_array_equal(low, np.tril(low))
    np.testing.assert_array_equal(up, np.triu(up))
    _close(low, np.linalg.cholesky(lopsided.astype(np.complex128)), d, 10)
    _close(up, _ct(np.linalg.cholesky(lopsided.astype(np.complex128))), d, 10)
    _close(
        L.eigvalsh(xp.asarray(lopsided)), np.linalg.eigvalsh(lopsided.astype(np.complex128)), d, 10
    )
    w, _ = L.eigh(xp.asarray(lopsided))
    _close(w, np.linalg.eigvalsh(lopsided.astype(np.complex128)), d, 10)
    with pytest.raises(L.LinAlgError, match="cholesky: the matrix is not positive definite"):
        L.cholesky(xp.asarray(-p))
    singular = np.zeros(shape, v.dtype)
    for fn, name in ((L.inv, "inv"), (lambda m: L.solve(m, m[:, :1]), "solve")):
        with pytest.raises(L.LinAlgError, match=f"{name}: the matrix is singular"):
            fn(xp.asarray(singular))


@pytest.mark.parametrize("n", [4, 70])
def test_single_matrices_with_non_finite_values_behave_as_numpy(n):
    """NaN and inf matrices through the direct route (4 x 4) and SciPy's (70 x 70): where
    LAPACK reports a failure the call falls back to NumPy's gufunc, so each function raises or
    returns NaNs as NumPy does."""
    nan = np.full((n, n), np.nan)
    inf = np.eye(n)
    inf[1, 2] = np.inf
    for m in (nan, inf):
        for fn, ref in (
            (L.cholesky, np.linalg.cholesky),
            (L.inv, np.linalg.inv),
            (L.eigvalsh, np.linalg.eigvalsh),
            (L.svdvals, lambda a: np.linalg.svd(a, compute_uv=False)),
            (lambda a: L.qr(a)[1], lambda a: np.linalg.qr(a)[1]),
            (lambda a: L.solve(a, a[:, :1]), lambda a: np.linalg.solve(a, a[:, :1])),
            (L.eigvals, np.linalg.eigvals),
            (L.det, np.linalg.det),
            (lambda a: L.slogdet(a)[1], lambda a: np.linalg.slogdet(a)[1]),
        ):
            try:
                with np.errstate(all="ignore"):
                    want = ref(m)
            except np.linalg.LinAlgError:
                with pytest.raises(L.LinAlgError):
                    fn(xp.asarray(m))
                continue
            got = np.asarray(fn(xp.asarray(m)))
            np.testing.assert_array_equal(np.isnan(got), np.isnan(want))


@pytest.mark.parametrize("n", [64, 4096, 70000])
def test_dot_of_a_run_with_itself_and_with_its_neighbour_in_one_buffer(n):
    """The dot kernel loads a run once when both operands are the same memory (a norm, vecdot of
    x with itself) and twice otherwise, also for two runs of one buffer at different offsets:
    NumPy's values every way, serial and threaded."""
    rng = np.random.default_rng(n)
    v = rng.standard_normal(n + 1)
    x = xp.asarray(v)
    for got, want in (
        (xp.vecdot(x, x), v @ v),
        (xp.vecdot(x[1:], x[1:]), v[1:] @ v[1:]),
        (xp.vecdot(x[:-1], x[1:]), v[:-1] @ v[1:]),
        (xp.vecdot(x[1:], x[:-1]), v[1:] @ v[:-1]),
        (xp.linalg.vector_norm(x[1:]), np.sqrt(v[1:] @ v[1:])),
    ):
        np.testing.assert_allclose(float(got), want, rtol=1e-12)


def test_diagonal_views_of_untracked_arrays_match_numpy_and_share_memory():
    """diagonal makes the view of an untracked plain array itself (its geometry remembered per
    layout): NumPy's values for every offset (empty ones included) of stacks, transposed and
    stepped matrices and one layout at other offsets, sharing memory;
    a bool offset is still refused and a tracked input still gets PyTorch's gradient."""
    import torch

    rng = np.random.default_rng(12)
    t3 = rng.standard_normal((3, 4, 5))
    s3 = xp.asarray(t3)
    for a in (s3, xp.permute_dims(s3, (0, 2, 1)), s3[:, ::2, ::-1], s3[0]):
        for offset in range(-6, 7):
            got = xp.linalg.diagonal(a, offset=offset)
            want = np.diagonal(np.asarray(a), offset=offset, axis1=-2, axis2=-1)
            np.testing.assert_array_equal(np.asarray(got), want)
            if got.size:
                assert np.shares_memory(np.asarray(got), np.asarray(a))
    for i in range(3):  # one layout at other offsets: the remembered geometry moves with them
        for offset in (-1, 0, 2):
            got = xp.linalg.diagonal(s3[i, 1:], offset=offset)
            np.testing.assert_array_equal(np.asarray(got), np.diagonal(t3[i, 1:], offset))
    m = xp.asarray(t3[0])
    got = xp.linalg.diagonal(m.mT, offset=1)
    np.testing.assert_array_equal(np.asarray(got), np.diagonal(t3[0].T, 1))
    got = xp.linalg.diagonal(m[::2, ::-1])
    np.testing.assert_array_equal(np.asarray(got), np.diagonal(t3[0][::2, ::-1]))
    with pytest.raises(TypeError, match="diagonal"):
        xp.linalg.diagonal(m, offset=True)
    x = xp.asarray(t3, requires_grad=True)
    xp.sum(xp.linalg.diagonal(x, offset=-1) ** 2).backward()
    t = torch.tensor(t3, requires_grad=True)
    (torch.diagonal(t, offset=-1, dim1=-2, dim2=-1) ** 2).sum().backward()
    np.testing.assert_allclose(np.asarray(x.grad), t.grad.numpy(), rtol=1e-12)


@pytest.mark.parametrize("d", FLOATS, ids=lambda d: d.name)
def test_spectral_drivers_route_by_size(d):
    """Eigen- and singular value problems of one 40 x 40 matrix go to LAPACK directly in any
    precision, a 70 x 70 one through SciPy's drivers; either way NumPy's results."""
    rng = np.random.default_rng(13)
    g = _general(rng, (40, 40), d)
    h = (g + _ct(g)) / 2
    assert cpu_linalg._direct(g) and not cpu_linalg._scipy_route(g)
    big = _general(rng, (70, 70), d)
    assert not cpu_linalg._direct(big) and cpu_linalg._scipy_route(big)
    _close(L.svdvals(xp.asarray(big)), np.linalg.svd(big, compute_uv=False), d, 100)
    _check_eigh(h, L.eigh(xp.asarray(h)), d)
    _check_svd(g, L.svd(xp.asarray(g)), d, True)
    _close(L.svdvals(xp.asarray(g)), np.linalg.svd(g, compute_uv=False), d, 10)


_CROSS_DTYPES = [np.float32, np.float64, np.int8, np.uint16, np.int64, np.complex128]
_CROSS_CASES = [
    ((1365, 3), (1365, 3), -1, "C"),
    ((3, 500), (3, 500), 0, "C"),
    ((2, 400, 3), (400, 3), -1, "transposed"),  # rows that do not step evenly: a copy
    ((4, 5, 3), (3,), -1, "sliced"),
    ((1, 3), (7, 3), -1, "C"),
    ((0, 3), (0, 3), -1, "C"),
]


@pytest.mark.parametrize(
    "dtype,shape_a,shape_b,axis,layout",
    [(d, *case) for d in _CROSS_DTYPES for case in _CROSS_CASES]
    # the threaded loop: one float and one integer dtype (its code is the same for all; each
    # dtype is another ~2 s of compiling in a cold make test)
    + [(d, (30000, 3), (30000, 3), -1, "C") for d in (np.float64, np.int8)],
)
def test_fused_cross_like_numpy(dtype, shape_a, shape_b, axis, layout):
    """linalg.cross of untracked operands runs the fused kernel (one pass): NumPy's values, bit
    for bit for real dtypes (the same products and differences, no contraction; integers wrap
    alike; NumPy's complex products use FMA: within rounding there), over
    broadcasting, axes and layouts, and the same bits with one thread or two."""
    import numba

    from strided._ops.linalg_ext import CROSS

    rng = np.random.default_rng(len(shape_a) + shape_a[0])
    d = getattr(sdt, np.dtype(dtype).name)
    a, b = values(rng, shape_a, d, int_domain=(-100, 100)), values(rng, shape_b, d)
    if layout == "transposed":
        a = np.ascontiguousarray(np.swapaxes(a, 0, 1)).swapaxes(0, 1)
    elif layout == "sliced":
        a = np.concatenate([a, a], axis=1)[:, ::2]
    calls = []
    kernel = CROSS.kernels["cpu"]
    CROSS.kernels["cpu"] = lambda *args, **kw: (calls.append(1), kernel(*args, **kw))
    CROSS.forget()
    before = numba.get_num_threads()
    try:
        bits = []
        for threads in (1, min(2, numba.config.NUMBA_NUM_THREADS)):
            numba.set_num_threads(threads)
            with np.errstate(all="ignore"):
                want = np.linalg.cross(a, b, axis=axis)
            got = np.asarray(xp.linalg.cross(xp.asarray(a), xp.asarray(b), axis=axis))
            assert got.dtype == want.dtype and got.shape == want.shape
            if want.dtype.kind == "c":  # NumPy's complex multiply contracts with FMA
                np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-13)
            else:
                np.testing.assert_array_equal(got, want)
            bits.append(got.tobytes())
        assert bits[0] == bits[1]
    finally:
        numba.set_num_threads(before)
        CROSS.kernels["cpu"] = kernel
        CROSS.forget()
    assert len(calls) == 2


def test_fused_cross_dense_lane_reads_each_views_own_offset_and_steps_aside():
    """Small stacks of vectors take CROSS's dense lane, planned once per layout: views of that
    layout at other offsets must read their own rows; mixed dtypes promote as the standard
    says; a tracked input records the composition (its gradient is PyTorch's); and bad input
    names the op."""
    torch = pytest.importorskip("torch")
    from strided._ops.linalg_ext import CROSS

    rng = np.random.default_rng(5)
    m = rng.standard_normal((40, 3))
    sm = xp.asarray(m)
    for lo in (0, 1, 7):
        got = xp.linalg.cross(sm[lo : lo + 20], sm[lo + 2 : lo + 22])
        np.testing.assert_array_equal(
            np.asarray(got), np.linalg.cross(m[lo : lo + 20], m[lo + 2 : lo + 22])
        )
    assert CROSS._plans[(xp.float64, (20, 3), xp.float64, (20, 3))][8] is not None
    i8, u8 = np.array([1, -2, 3], np.int8), np.array([200, 7, 9], np.uint8)
    got = xp.linalg.cross(xp.asarray(i8), xp.asarray(u8))
    assert got.dtype == xp.int16
    np.testing.assert_array_equal(np.asarray(got), np.linalg.cross(i8, u8.astype(np.int16)))

    xp.linalg.cross(xp.asarray(m[:4]), xp.asarray(m[4:8]), axis=1)  # the checks remembered
    a, b = xp.asarray(m[:4], requires_grad=True), xp.asarray(m[4:8], requires_grad=True)
    calls = []
    kernel = CROSS.kernels["cpu"]
    CROSS.kernels["cpu"] = lambda *args, **kw: (calls.append(1), kernel(*args, **kw))
    CROSS.forget()
    try:
        xp.sum(xp.linalg.cross(a, b, axis=1) * xp.asarray(m[8:12])).backward()
    finally:
        CROSS.kernels["cpu"] = kernel
        CROSS.forget()
    assert len(calls) == 0
    ta, tb = torch.tensor(m[:4], requires_grad=True), torch.tensor(m[4:8], requires_grad=True)
    (torch.linalg.cross(ta, tb, dim=1) * torch.tensor(m[8:12])).sum().backward()
    np.testing.assert_allclose(np.asarray(a.grad), ta.grad.numpy(), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(b.grad), tb.grad.numpy(), rtol=1e-12)
    with pytest.raises(ValueError, match=r"^cross: .*size 3"):
        xp.linalg.cross(sm[:, :2], sm[:, :2])
    with pytest.raises(ValueError, match=r"^cross: "):
        xp.linalg.cross(sm[:4], sm[:5])
    with pytest.raises(TypeError, match=r"cross"):
        xp.linalg.cross(xp.asarray(m[:2] > 0), xp.asarray(m[:2] > 0))
