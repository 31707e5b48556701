"""matmul vs NumPy: float (BLAS) and integer kernels, batches with broadcasting, 1-D promotion,
non-contiguous operands, meta shapes and errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import strided as xp
from strided import _dtypes as sdt

from .strategies import LAYOUTS, in_layout, seeds, values

NUMERIC = [d for d in sdt.ALL_DTYPES if d.kind in sdt.NUMERIC_KINDS]


@pytest.mark.parametrize("d", NUMERIC, ids=lambda d: d.name)
@settings(max_examples=10, deadline=None)
@given(data=st.data(), rng=seeds())
def test_matmul_values(d, data, rng):
    m, k, n = (data.draw(st.integers(1, 6)) for _ in range(3))
    batch_a = data.draw(st.sampled_from([(), (2,), (1,), (3, 2)]))
    batch_b = data.draw(st.sampled_from([(), (2,), (1,)])) if len(batch_a) < 2 else (1, 2)
    a_np, a = in_layout(
        values(rng, batch_a + (m, k), d, int_domain=(-5, 5)), data.draw(st.sampled_from(LAYOUTS))
    )
    b_np, b = in_layout(
        values(rng, batch_b + (k, n), d, int_domain=(-5, 5)), data.draw(st.sampled_from(LAYOUTS))
    )
    got = a @ b
    want = np.matmul(a_np, b_np)
    assert got.dtype is d and got.shape == want.shape
    tol = 1e-4 if d in (sdt.float32, sdt.complex64) else 1e-10
    np.testing.assert_allclose(np.asarray(got), want, rtol=tol, atol=tol)


@pytest.mark.parametrize(
    "sa,sb",
    [
        ((3,), (3,)),
        ((3,), (3, 4)),
        ((2, 3), (3,)),
        ((5, 2, 3), (3,)),
        ((3,), (5, 3, 2)),
        ((2, 0), (0, 3)),
    ],
)
def test_matmul_vector_promotion(sa, sb):
    rng = np.random.default_rng(0)
    a_np, b_np = rng.standard_normal(sa), rng.standard_normal(sb)
    got = xp.matmul(xp.asarray(a_np), xp.asarray(b_np))
    want = np.matmul(a_np, b_np)
    assert got.shape == want.shape
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12, atol=1e-12)
    meta = xp.matmul(xp.empty(sa, device="meta"), xp.empty(sb, device="meta"))
    assert meta.shape == want.shape


def test_matmul_mixed_dtypes_and_large_blas():
    rng = np.random.default_rng(1)
    a_np = rng.standard_normal((70, 90)).astype(np.float32)
    b_np = rng.integers(-3, 3, size=(90, 40)).astype(np.int16)
    got = xp.asarray(a_np) @ xp.asarray(b_np)
    assert got.dtype is xp.float32
    np.testing.assert_allclose(np.asarray(got), a_np @ b_np.astype(np.float32), rtol=1e-4)
    big = rng.standard_normal((300, 200))
    np.testing.assert_allclose(
        np.asarray(xp.asarray(big).T @ xp.asarray(big)), big.T @ big, rtol=1e-10
    )


def test_matmul_errors_name_op_and_shapes():
    with pytest.raises(ValueError, match=r"matmul.*\(2, 3\).*\(4, 5\)"):
        xp.zeros((2, 3)) @ xp.zeros((4, 5))
    with pytest.raises(ValueError, match=r"matmul.*\(2, 3\).*\(4, 5\)"):
        xp.zeros((2, 3), device="meta") @ xp.zeros((4, 5), device="meta")
    with pytest.raises(ValueError, match="matmul"):
        xp.matmul(xp.asarray(1.0), xp.zeros(3))
    with pytest.raises(TypeError, match="matmul.*bool"):
        xp.matmul(xp.zeros((2, 2), dtype=xp.bool), xp.zeros((2, 2), dtype=xp.bool))
    with pytest.raises(ValueError, match="matmul"):
        xp.zeros((2, 3, 4)) @ xp.zeros((5, 4, 2))


def test_meta_matmul_of_huge_matrices():
    a = xp.ones((10**6, 2 * 10**6), device="meta")
    b = xp.ones((2 * 10**6, 3 * 10**6), device="meta")
    c = a @ b
    assert c.shape == (10**6, 3 * 10**6) and c.dtype is xp.float64 and c.device == "meta"


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex128])
def test_blas_products_planned_per_layout_read_each_operands_offset(dtype):
    """A float product of 2-D operands above the small-kernel size keeps a BLAS lane in its
    memoized plan (views of the operands made as planned): row-major and transposed operands,
    and views of the same layouts at other offsets, give NumPy's products."""
    from strided import dispatch

    rng = np.random.default_rng(6)
    big = (rng.standard_normal((40, 30)) + (1j if dtype is np.complex128 else 0)).astype(dtype)
    s = xp.asarray(big)
    rtol = 1e-5 if dtype is np.float32 else 1e-12
    for _ in range(2):
        for r in (0, 3, 7):
            a, an = s[r : r + 20], big[r : r + 20]  # (20, 30), row-major at offset r * 30
            b, bn = s[r + 1 : r + 31].T, big[r + 1 : r + 31].T  # (30, 30), transposed
            np.testing.assert_allclose(np.asarray(a @ b), an @ bn, rtol=rtol, atol=rtol)
            np.testing.assert_allclose(np.asarray(b.T @ a.T), bn.T @ an.T, rtol=rtol, atol=rtol)
    spec = dispatch.primitive("matmul")._plans[(s.dtype, s.dtype, (20, 30), (30, 30))]
    assert spec[8] is not None  # the BLAS lane is part of the plan


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex128, np.int8, np.int64])
def test_small_batched_products_over_threads_match_numpy(dtype):
    """Several batches of small products (``kernels.SMALL_MATMUL_ROWS``) are dot products in
    registers, chunks of rows over threads when large; integer matrix-vector products too.
    NumPy's values (integers exactly, int8 wrapping as NumPy's), broadcast and transposed
    batches included, and the same bits on one thread or two."""
    import numba

    from strided.backends.cpu.kernels import SMALL_MATMUL_ROWS

    rng = np.random.default_rng(11)

    def make(shape):
        if np.dtype(dtype).kind in "iu":
            return rng.integers(-100, 100, shape).astype(dtype)
        v = rng.standard_normal(shape)
        return (v + 1j * rng.standard_normal(shape) if dtype is np.complex128 else v).astype(dtype)

    # (floats: products of at most 3 terms; of more, a stack this large is NumPy's matmul)
    a, b = make((6000, 4, 3)), make((6000, 3, 2))
    at = make((6000, 3, 4))
    mat, vec = make((2, 3000, 5)), make((5,))
    sa, sb, sat = xp.asarray(a), xp.asarray(b), xp.asarray(at)
    cases = [
        (a, b, sa, sb),  # 18000 rows: over threads
        (a[:7], b[:7], sa[:7], sb[:7]),  # one thread
        (a[1:8], b[2:9], sa[1:8], sb[2:9]),  # views at offsets (the remembered lane's second call)
        (a, b[:1], sa, sb[:1]),  # b's batch broadcast
        (np.swapaxes(at, -1, -2), b, xp.permute_dims(sat, (0, 2, 1)), sb),  # transposed
        (mat, vec, xp.asarray(mat), xp.asarray(vec)),  # an integer matrix-vector product
    ]
    assert 4 * 3 * 2 <= SMALL_MATMUL_ROWS
    before = numba.get_num_threads()
    try:
        for an, bn, s1, s2 in cases:
            results = []
            for threads in (1, min(2, numba.config.NUMBA_NUM_THREADS)):
                numba.set_num_threads(threads)
                results.append(np.asarray(xp.matmul(s1, s2)))
            want = np.matmul(an, bn)
            if np.dtype(dtype).kind in "iu":
                np.testing.assert_array_equal(results[0], want)
            else:
                tol = 1e-5 if dtype is np.float32 else 1e-12
                np.testing.assert_allclose(results[0], want, rtol=tol, atol=tol)
            np.testing.assert_array_equal(results[0], results[1])
    finally:
        numba.set_num_threads(before)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex128])
def test_float_stacks_of_four_terms_or_more_are_numpys_matmul(dtype):
    """Stacks of float products of 4 or more terms (but few small ones), and stacks times
    vectors, run NumPy's matmul on views of the operands: NumPy's bits, for broadcast,
    transposed, stepped, reversed and offset operands, non-finite values, the planned lane's
    later calls and the general path (mixed dtypes, cast first)."""
    from strided.backends.cpu import _ROWS_FLOAT_MAX, _rows_serve

    rng = np.random.default_rng(5)

    def make(shape):
        v = rng.standard_normal(shape)
        return (v + 1j * rng.standard_normal(shape) if dtype is np.complex128 else v).astype(dtype)

    a, b, at = make((40, 6, 8)), make((40, 8, 5)), make((40, 8, 6))
    a[3, 2, 1], b[7, 0, 4], a[9, 5, 7] = np.inf, np.nan, -np.inf  # as NumPy's loop has them
    sa, sb, sat = xp.asarray(a), xp.asarray(b), xp.asarray(at)
    assert not _rows_serve(np.dtype(dtype), 6, 8, 5, 40) and 40 * 6 * 8 * 5 >= _ROWS_FLOAT_MAX
    cases = [
        (a, b, sa, sb),
        (a[1:9], b[2:10], sa[1:9], sb[2:10]),  # the planned lane again, at other offsets
        (a[:, None], b[None, :3], sa[:, None], sb[None, :3]),  # broadcast batches
        (np.swapaxes(at, -1, -2), b, sat.mT, sb),  # column-major matrices
        (a[::2], b[::-2], sa[::2], sb[::-2]),  # stepped and reversed batches
        (a[:, :, ::2], b[:, ::2], sa[:, :, ::2], sb[:, ::2]),  # stepped columns and rows
        (a, b[5, :, 1], sa, sb[5, :, 1]),  # a stack times a (stepped) vector
        (b[3, :, 2][:6], a[2:], sb[3, :, 2][:6], sa[2:]),  # a vector times a stack
        (a[:3, :2, :4], at[0, :4, 0], sa[:3, :2, :4], sat[0, :4, 0]),  # small ones too
    ]
    for an, bn, s1, s2 in cases:
        with np.errstate(all="ignore"):
            want = np.matmul(an, bn)
        for _ in range(2):  # the planned lane on its second call
            with warnings.catch_warnings():
                warnings.simplefilter("error")  # NumPy's warnings stay inside the kernel
                got = np.asarray(xp.matmul(s1, s2))
            np.testing.assert_array_equal(got, want)
    from strided._ops.linalg import MATMUL

    lanes = {spec[8].__qualname__.split(".")[0] for spec in MATMUL._plans.values() if spec[8]}
    assert "_batched_numpy_dense" in lanes  # the planned lane served these calls
    # a few small products stay dot products in registers (NumPy's values, not its bits)
    assert _rows_serve(np.dtype(dtype), 4, 4, 4, 2)
    got = xp.matmul(sa[:2, :4, :4], sb[:2, :4, :4])
    np.testing.assert_allclose(np.asarray(got), np.matmul(a[:2, :4, :4], b[:2, :4, :4]), rtol=1e-5)
    # operands of two dtypes: cast first, then the general path
    low = np.complex64 if dtype is np.complex128 else np.float32
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = xp.matmul(xp.asarray(a.astype(low)), sb)
    with np.errstate(all="ignore"):
        want = np.matmul(a.astype(low), b)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype", [np.float32, np.complex128])
def test_a_stack_times_one_matrix_is_one_product_of_its_rows(dtype):
    """A C-order stack times one 2-D matrix (``x @ W``, ``x @ W.T``) is one BLAS product of all
    the stack's rows; views at an offset, and stacks that are not C-order (the batched route),
    give NumPy's values too."""
    rng = np.random.default_rng(12)
    x = (rng.standard_normal((5, 41, 30)) + (1j if dtype is np.complex128 else 0)).astype(dtype)
    w = rng.standard_normal((20, 30)).astype(dtype)
    sx, sw = xp.asarray(x), xp.asarray(w)
    tol = 1e-5 if dtype is np.float32 else 1e-12
    for a, an in ((sx, x), (sx[1:], x[1:]), (sx[:, ::2], x[:, ::2]), (sx[:, :, :20], x[:, :, :20])):
        k = an.shape[-1]
        for b, bn in ((sw.T[:k], w.T[:k]), (xp.asarray(w.T[:k].copy()), w.T[:k])):
            got = np.asarray(xp.matmul(a, b))
            np.testing.assert_allclose(got, np.matmul(an, bn), rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", [np.float32, np.complex128, np.int32])
def test_matrix_vector_products_like_numpy(dtype):
    """A matrix times a vector and a vector times a matrix (BLAS's gemv for floats; dense runs
    dotted for integers): row- and column-major matrices, vectors at an offset, a stepped
    vector (the general route) and a single column, as NumPy computes them."""
    rng = np.random.default_rng(13)
    big = rng.standard_normal((60, 50)) * 10
    big = (big + 1j * big[::-1] if dtype is np.complex128 else big).astype(dtype)
    s = xp.asarray(big)
    line = big.reshape(-1)[:200].copy()  # stepped vectors come from here
    ls = xp.asarray(line)
    tol = 1e-4 if dtype is np.float32 else 1e-10
    mats = [(big[:40], s[:40]), (big[:40, :40].T, s[:40, :40].T), (big[5:45, 3:4], s[5:45, 3:4])]
    for mn, ms in mats:
        rows, cols = mn.shape
        vecs_right = [(line[3 : 3 + cols], ls[3 : 3 + cols]),
                      (line[: 2 * cols : 2], ls[: 2 * cols : 2])]  # fmt: skip
        vecs_left = [(line[7 : 7 + rows], ls[7 : 7 + rows]),
                     (line[: 2 * rows : 2], ls[: 2 * rows : 2])]  # fmt: skip
        for vn, vs in vecs_right:
            np.testing.assert_allclose(np.asarray(ms @ vs), mn @ vn, rtol=tol, atol=tol)
        for vn, vs in vecs_left:
            np.testing.assert_allclose(np.asarray(vs @ ms), vn @ mn, rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", [np.float32, np.complex128])
def test_blocks_of_a_wider_matrix_go_to_blas_with_their_leading_dimension(dtype, monkeypatch):
    """Blocks of a wider matrix (x[:30, :32]) and their transposes, in products small enough
    for one BLAS thread: BLAS reads them in place with the leading dimension (NumPy's matmul:
    its dot would copy them), as products, matrix-vector and vector-matrix products,
    non-finite values included without NumPy warnings; NumPy's values."""
    import strided.backends.cpu as cpu

    routes = []

    def spy(name):
        f = getattr(cpu, name)
        return lambda x, y, out: routes.append(name) or f(x, y, out)

    for name in ("_blas_dot", "_blas_matmul"):
        monkeypatch.setattr(cpu, name, spy(name))
    rng = np.random.default_rng(8)
    big = rng.standard_normal((120, 130)).astype(dtype)
    big[5, 9] = np.inf
    s = xp.asarray(big)
    # (at most 32 x 30 x 32 multiply-adds: on one thread in OpenBLAS for complex products too)
    a, sa = big[:30, :32], s[:30, :32]  # 30 x 32, rows 130 apart
    at, sat = big[:32, :30].T, s[:32, :30].mT  # 30 x 32, the transpose of a block
    b, sb = big[3:35, 7:37], s[3:35, 7:37]  # 32 x 30
    v, sv = big[100, :32], s[100, :32]  # contiguous rows of the wider matrix
    w, sw = big[110, :30], s[110, :30]
    cases = [(a, b, sa, sb), (at, b, sat, sb), (b, a, sb, sa), (b, at, sb, sat)]
    cases += [(a, v, sa, sv), (at, v, sat, sv), (w, a, sw, sa), (w, at, sw, sat)]
    for x, y, sx, sy in cases:
        with np.errstate(all="ignore"):
            want = np.matmul(x, y)
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # NumPy's warnings stay inside the kernel
            routes.clear()
            got = np.asarray(xp.matmul(sx, sy))
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
        assert routes == ["_blas_matmul"], routes


def test_blas_calls_are_quiet_and_leave_the_callers_error_state():
    """BLAS's floating-point flags stay inside the call (no warning, nor an error under the
    caller's ``errstate(all="raise")``), and the caller's error state holds afterwards, also
    after a call that failed."""
    from strided.backends.cpu import _blas_dot, _blas_matmul

    a = np.ones((64, 64))
    a[0, 0], a[3, 3] = np.inf, -np.inf
    want_state = np.geterr()
    with np.errstate(all="raise"):
        got = np.asarray(xp.asarray(a) @ xp.asarray(a))
        with pytest.raises(FloatingPointError):
            np.add(np.array(np.inf), np.array(-np.inf))  # the caller's state, back
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(got, a @ a)
    for call in (_blas_dot, _blas_matmul):
        with pytest.raises(ValueError):
            call(np.ones((2, 3)), np.ones((2, 3)), np.empty((2, 3)))
        assert np.geterr() == want_state


@pytest.mark.parametrize("dtype", [np.float64, np.complex64])
def test_threaded_products_and_lapack_run_in_scipys_blas_library(dtype, monkeypatch):
    """Products that OpenBLAS runs on threads (matrices, a block of a wider matrix, stacks, one
    broadcast, a matrix and a vector on either side, a row or a column of results (gemv, or a
    dot for one), alone or stacked, in a planned lane too) and the LAPACK
    calls of large matrices (one, or a stack) go through SciPy's library, the one of strided's
    other BLAS calls: NumPy's dot, matmul and linalg gufuncs are never called (two OpenBLAS
    thread pools alternating slowed a loop of inv and a product 20x).  NumPy's values."""
    import strided.backends.cpu as cpu
    from strided.backends.cpu import _linalg as cpu_linalg

    def refuse(*args, **kw):
        raise AssertionError("NumPy's BLAS or LAPACK was called")

    rng = np.random.default_rng(12)

    def mk(shape):
        r = rng.standard_normal(shape)
        return (r + 1j * rng.standard_normal(shape) if dtype == np.complex64 else r).astype(dtype)

    n = 140
    big = mk((n + 10, n + 20))
    m1, m2, vec = mk((n, n)), mk((n, n)), mk((n,))
    stack1, stack2 = mk((3, 100, 110)), mk((3, 110, 100))
    spd = (m1 @ m1.conj().T + n * np.eye(n)).astype(dtype)
    pairs = [(m1, m2), (m1.T, m2), (big[:n, :n], m2), (m1, vec), (vec, m1), (stack1, stack2),
             (stack1, stack2[:1]), (stack1, mk((110,))), (mk((100,)), stack1),
             (mk((1, 10000)), mk((10000, 1))), (mk((1, 10000)), mk((10000, 3))),
             (mk((3, 10000)), mk((10000, 1))), (mk((2, 1, 10000)), mk((2, 10000, 3))),
             (mk((2, 3, 10000)), mk((1, 10000, 1)))]  # fmt: skip
    with np.errstate(all="ignore"):
        want_products = [x @ y for x, y in pairs]
        want_linalg = [np.linalg.inv(m1), np.linalg.solve(m1, m2), np.linalg.eigvalsh(spd),
                       np.linalg.svd(m1, compute_uv=False), np.linalg.det(m1),
                       np.linalg.slogdet(m1)[1], np.linalg.cholesky(spd),
                       np.linalg.inv(np.stack([spd, spd]))]  # fmt: skip
    for name in ("_blas_dot", "_blas_matmul"):
        monkeypatch.setattr(cpu, name, refuse)
    monkeypatch.setattr(cpu_linalg, "_numpy", refuse)
    tol = 2e-3 if dtype == np.complex64 else 1e-9
    for (x, y), want in zip(pairs, want_products):
        sx = xp.asarray(big)[:n, :n] if x is pairs[2][0] else xp.asarray(x)
        if x is pairs[1][0]:
            sx = xp.asarray(m1).mT
        for _ in range(2):  # (the second call through the planned lane)
            got = np.asarray(xp.matmul(sx, xp.asarray(y)))
            np.testing.assert_allclose(got, want, rtol=tol, atol=tol * n)
    # a matrix by a column of a wider matrix (no contiguous view for BLAS: the kernels' loop)
    wide, rows = mk((10000, 5)), mk((3, 10000))
    for _ in range(2):
        got = np.asarray(xp.matmul(xp.asarray(rows), xp.asarray(wide)[:, 1:2]))
        np.testing.assert_allclose(got, rows @ wide[:, 1:2], rtol=tol, atol=tol * n)
    L = xp.linalg
    s1, s2, sspd = xp.asarray(m1), xp.asarray(m2), xp.asarray(spd)
    got_linalg = [L.inv(s1), L.solve(s1, s2), L.eigvalsh(sspd), L.svdvals(s1), L.det(s1),
                  L.slogdet(s1)[1], L.cholesky(sspd), L.inv(xp.stack([sspd, sspd]))]  # fmt: skip
    for got, want in zip(got_linalg, want_linalg):
        got = np.asarray(got)
        assert got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=100 * tol, atol=100 * tol)
