"""max/min/argmax/argmin/any/all on contiguous rows: the vectorised row reductions of
``backends/cpu/_vmath.py`` (integer keys for floats, a separate NaN reduction, chunked early exit)
against NumPy, at the positions where such code goes wrong: NaN or the answer in the first, a middle
or the last element or chunk, ties, infinities, signed zeros, every integer width, the parallel
full reduction and one or two threads."""

from __future__ import annotations

import re

import numpy as np
import pytest

import strided as xp

RNG = np.random.default_rng(7)
SIZES = [1, 7, 256, 257, 5000, 300_001]  # the last one runs the parallel full reduction
FLOATS = [np.float32, np.float64]
INTS = [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64]


def _same(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype or want.dtype.kind in "iu"
    if want.dtype.kind == "f":
        np.testing.assert_array_equal(got, want)  # NaN == NaN here
    else:
        assert np.array_equal(got, want), (got, want)


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("dtype", FLOATS)
def test_float_max_min_argmax_argmin(n, dtype):
    base = RNG.standard_normal(n).astype(dtype)
    cases = [base]
    for pos in {0, n // 2, n - 1}:
        for v in (np.nan, np.inf, -np.inf):
            a = base.copy()
            a[pos] = v
            cases.append(a)
        if n > 3:
            a = base.copy()
            a[pos] = np.nan
            a[(pos + 1) % n] = np.nan  # the first of two NaNs wins
            cases.append(a)
    cases.append(np.full(n, 2.5, dtype))  # all equal: index 0
    cases.append(-np.abs(base))
    for a in cases:
        s = xp.asarray(a)
        _same(xp.max(s), np.max(a))
        _same(xp.min(s), np.min(a))
        _same(xp.argmax(s), np.argmax(a))
        _same(xp.argmin(s), np.argmin(a))


@pytest.mark.parametrize("dtype", INTS)
def test_integer_max_min_argmax_argmin(dtype):
    # past the parallel threshold for a narrow signed and a wide unsigned dtype only: the
    # parallel loops are the same code for each (compiling them for all eight cost ~15 s of a
    # cold make test); every dtype runs the serial loops over long rows
    info = np.iinfo(dtype)
    for n in (1, 300, 60_000) + ((70_000,) if dtype in (np.int8, np.uint64) else ()):
        a = RNG.integers(info.min, info.max, n, dtype=dtype, endpoint=True)
        a[n // 3] = info.max
        a[n // 2] = info.min
        s = xp.asarray(a)
        _same(xp.max(s), np.max(a))
        _same(xp.min(s), np.min(a))
        _same(xp.argmax(s), np.argmax(a))
        _same(xp.argmin(s), np.argmin(a))


def test_signed_zeros_compare_equal():
    a = np.array([-0.0, 0.0, -0.0, -1.0], np.float64)
    assert float(xp.max(xp.asarray(a))) == 0.0
    assert int(xp.argmax(xp.asarray(a))) == 0
    assert int(xp.argmin(xp.asarray(a[:3]))) == 0


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_rows_and_axes(dtype):
    a = RNG.standard_normal((37, 301)).astype(dtype)
    a[5, 100] = np.nan
    a[9, 0] = np.nan
    s = xp.asarray(a)
    for axis in (0, 1):
        _same(xp.max(s, axis=axis), np.max(a, axis=axis))
        _same(xp.min(s, axis=axis), np.min(a, axis=axis))
        _same(xp.argmax(s, axis=axis), np.argmax(a, axis=axis))
        _same(xp.argmin(s, axis=axis), np.argmin(a, axis=axis))
        _same(xp.max(s.T, axis=axis), np.max(a.T, axis=axis))
        _same(xp.argmin(s.T, axis=axis), np.argmin(a.T, axis=axis))


@pytest.mark.parametrize("n", [1, 2047, 2048, 2049, 10_000, 300_001])
@pytest.mark.parametrize("dtype", [np.bool_, np.float32, np.int64])
def test_any_all_answer_in_every_chunk(n, dtype):
    for pos in sorted({0, n // 2, 2048 % n, n - 1}):
        zeros = np.zeros(n, dtype)
        ones = np.ones(n, dtype)
        z1 = zeros.copy()
        z1[pos] = 1
        o1 = ones.copy()
        o1[pos] = 0
        for a in (zeros, ones, z1, o1):
            s = xp.asarray(a)
            assert bool(xp.any(s)) == bool(np.any(a)), (pos, a[pos])
            assert bool(xp.all(s)) == bool(np.all(a)), (pos, a[pos])
    a = RNG.random((13, 4097)) < 0.001
    for axis in (0, 1, None):
        np.testing.assert_array_equal(np.asarray(xp.any(xp.asarray(a), axis=axis)), a.any(axis))
        np.testing.assert_array_equal(np.asarray(xp.all(xp.asarray(~a), axis=axis)), (~a).all(axis))


def test_any_all_nan_counts_as_true():
    a = np.zeros(5000)
    a[4000] = np.nan
    assert bool(xp.any(xp.asarray(a)))
    assert not bool(xp.all(xp.asarray(a)))


@pytest.mark.parametrize("op", ["max", "min", "argmax", "any"])
def test_one_or_two_threads_identical(op):
    import numba

    a = RNG.standard_normal(1_000_003)
    if op == "any":
        a = a > 4.5
    s = xp.asarray(a)
    two = np.asarray(getattr(xp, op)(s))
    before = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = np.asarray(getattr(xp, op)(s))
    finally:
        numba.set_num_threads(before)
    np.testing.assert_array_equal(one, two)
    np.testing.assert_array_equal(two, getattr(np, op)(a))


@pytest.mark.parametrize("dtype", INTS)
@pytest.mark.parametrize("view", ["contiguous", "transposed", "reversed-strided"])
@pytest.mark.parametrize("axis", [None, 0, 1])
def test_narrow_integers_accumulate_in_the_default_integer(dtype, view, axis):
    """sum/prod of narrow integers read the input as it is and add in int64/uint64 (no widened
    copy): wrap-around, dtype and values as NumPy's, in every layout, and at the parallel size
    for a signed and an unsigned one (the same kernels for each dtype: compiling the parallel
    ones for all eight cost ~13 s of a cold make test)."""
    info = np.iinfo(dtype)
    for shape in ((37, 53), (700, 800)) if dtype in (np.int8, np.uint32) else ((37, 53),):
        a = RNG.integers(max(info.min, -100), min(info.max, 100), shape, endpoint=True)
        a = a.astype(dtype)
        a = {"contiguous": a, "transposed": a.T, "reversed-strided": a[::-1, ::2]}[view]
        for f, ref in ((xp.sum, np.sum), (xp.prod, np.prod)):
            got = f(xp.asarray(a), axis=axis)
            want = ref(a, axis=axis)
            assert got.dtype.name == want.dtype.name
            _same(got, want)


@pytest.mark.parametrize("perm", [(1, 0, 2), (2, 0, 1), (2, 1, 0)])
@pytest.mark.parametrize("name", ["sum", "prod", "max", "min", "any", "all"])
def test_full_reduction_of_a_permuted_dense_array_reads_one_run(name, perm):
    """Every axis of an array dense in another axis order is reduced as one run over its
    memory (the fast path of contiguous arrays): NumPy's values, keepdims included, also after
    the same shape was reduced in C order (plans are kept per layout)."""
    rng = np.random.default_rng(5)
    a = rng.uniform(0.5, 1.5, (6, 5, 7))
    if name in ("any", "all"):
        a = a > 0.7
    want = getattr(np, name)(np.transpose(a, perm))
    c = xp.asarray(np.ascontiguousarray(np.transpose(a, perm)))
    t = xp.permute_dims(xp.asarray(a), perm)
    for x in (c, t, c, t):
        got = getattr(xp, name)(x)
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-13)
        kept = np.asarray(getattr(xp, name)(x, keepdims=True))
        assert kept.shape == (1, 1, 1)
    flipped = xp.flip(t, axis=0)  # negative strides: the general path
    np.testing.assert_allclose(np.asarray(getattr(xp, name)(flipped)), want, rtol=1e-13)


def test_reduction_remembers_the_plan_of_the_layout_it_just_reduced():
    """The remembered last call (Reduction._last) follows the layout: after a transpose of the
    same shape, a C-order array gets its own one-call plan back (not the transpose's general
    path), which the memo key, holding strides, is what finds."""
    from strided._ops.reduction import PRIMS

    a = np.random.default_rng(3).standard_normal((16, 8))
    x = xp.asarray(a)
    for y, want in ((x.mT, a.T), (x, a), (x.mT, a.T), (x, a)):
        np.testing.assert_allclose(float(xp.sum(y)), want.sum(), rtol=1e-12)
        np.testing.assert_allclose(float(xp.sum(y)), want.sum(), rtol=1e-12)
        spec = PRIMS["sum"]._last[5]
        assert spec is not None and spec[9] == (y._strides,), "the last plan is another layout's"


@pytest.mark.parametrize("lane", ["float", "double"])
def test_variance_passes_vectorise(lane):
    """var/std's two passes (``_kern_moment._total``/``_squares``) compile to vector loads: they
    once indexed the input from a signed offset, which numba wraps for negative indices, and LLVM
    read it with gathers, ~10x slower (1M float32 var: 0.7-0.9 ms, NumPy 0.5, now 0.07)."""
    from numba import njit

    from strided.backends.cpu import _kern_moment as M

    dtype = np.float32 if lane == "float" else np.float64
    rows = njit(error_model="numpy")(M.var_rows.py_func)  # a fresh, inspectable compilation
    x = RNG.standard_normal(3000).astype(dtype)
    o = np.empty(3, dtype)
    f = dtype
    rows(o, x, 0, 3, 1000, f(0), f(0), f(1000), f(999), False)
    np.testing.assert_allclose(o, np.var(x.reshape(3, 1000), axis=1, ddof=1), rtol=1e-5)
    llvm = rows.inspect_llvm(rows.signatures[0])
    assert re.search(rf"load <\d+ x {lane}>", llvm), "no vector loads"
    assert "gather" not in llvm


def _spanned(n: int, step: int, dtype, between, values=None):
    """(the buffer, the view of its every ``step``-th element, the same view in strided): ``n``
    values of ``dtype`` from the second element (from the one before last when ``step`` < 0),
    the elements between them ``between``."""
    buf = np.full(n * abs(step) + 2, between, dtype=dtype)
    view = buf[1::step][:n] if step > 0 else buf[-2::step][:n]
    if values is None:
        values = RNG.integers(-3, 4, n) if np.dtype(dtype).kind in "iub" else RNG.standard_normal(n)
    view[...] = np.asarray(values).astype(dtype)
    sbuf = xp.asarray(buf)
    sv = (sbuf[1::step] if step > 0 else sbuf[-2::step])[:n]
    assert sv._strides == (step,)
    return buf, view, sv


@pytest.mark.parametrize("step", [2, 3, 16, 17, -2, -5])
@pytest.mark.parametrize("n", [255, 256, 1000, 4097, 300_001])
def test_strided_runs_read_as_spans_ignore_the_elements_between(n, step):
    # steps of at most 16 from runs of 256 read their whole span (_vmath.SPAN_*); the elements
    # between the wanted ones are NaN, an infinity or a nonzero: one let through would show
    import strided.backends.cpu._vmath as V

    assert V.SPAN_STEP == 16 and V.SPAN_MIN == 256  # the steps and lengths above straddle them
    for dtype, between in ((np.float32, np.nan), (np.float64, -np.inf), (np.int64, 7)):
        _, view, sv = _spanned(n, step, dtype, between)
        _same(xp.max(sv), np.max(view))
        _same(xp.min(sv), np.min(view))
        want = np.sum(view.astype(np.float64 if dtype != np.int64 else np.int64))
        scale = float(np.abs(view.astype(np.float64)).sum())  # float32's rounding of the terms
        np.testing.assert_allclose(float(xp.sum(sv)), float(want), rtol=0, atol=1e-6 * scale)
        assert int(xp.count_nonzero(sv)) == np.count_nonzero(view)
        _, view, sv = _spanned(n, step, dtype, between, values=1 + (RNG.random(n) < 20 / n))
        _same(xp.prod(sv), np.prod(view))  # a power of two: exact in any order
    for pos in {0, n // 2, n - 1}:  # a NaN among the wanted elements propagates
        values = RNG.standard_normal(n)
        values[pos] = np.nan
        _, _, sv = _spanned(n, step, np.float64, 0.0, values)
        for name in ("max", "min", "sum"):
            assert np.isnan(float(getattr(xp, name)(sv))), (name, pos)


@pytest.mark.parametrize("step", [2, 7, -3])
@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.float32])
def test_strided_any_all_decide_in_every_block(step, dtype):
    n = 5000  # blocks of 64 wanted elements, and a tail
    for between in (0, 1):
        _, _, sv = _spanned(n, step, dtype, between, np.zeros(n))
        assert bool(xp.any(sv)) is False  # nonzero elements between the wanted ones do not count
        _, _, sv = _spanned(n, step, dtype, between, np.ones(n))
        assert bool(xp.all(sv)) is True  # nor zero ones
        for pos in (0, 63, 64, 2500, n - 65, n - 1):
            values = np.zeros(n)
            values[pos] = 1
            _, _, sv = _spanned(n, step, dtype, between, values)
            assert bool(xp.any(sv)) is True, (pos, between)
            _, _, sv = _spanned(n, step, dtype, between, 1 - values)
            assert bool(xp.all(sv)) is False, (pos, between)


def test_strided_reductions_along_rows_read_spans():
    a = RNG.standard_normal((300, 2001)).astype(np.float32)
    a[:, 1::2] = np.inf  # between the wanted columns
    s = xp.asarray(a)
    for axis in (1, None):
        want = np.sum(a[:, ::2], axis=axis, dtype=np.float64)
        np.testing.assert_allclose(np.asarray(xp.sum(s[:, ::2], axis=axis)), want, rtol=1e-4)
        _same(xp.max(s[:, ::2], axis=axis), np.max(a[:, ::2], axis=axis))


def test_the_plan_reads_spans_only_for_short_steps_over_long_runs():
    from strided.backends.cpu import _generated_kernels as G
    from strided.backends.cpu.kernels import _reduce_plan

    def serial_loop(step, n):
        return _reduce_plan("sum", (n,), (), (step,), (0,))[1]

    assert serial_loop(2, 256) is G.sum_span_s
    assert serial_loop(16, 300) is G.sum_span_s
    assert serial_loop(2, 255) is G.sum_inner_s  # short runs: no span
    assert serial_loop(17, 300) is G.sum_inner_s  # wide steps: every element its own line
    assert serial_loop(1, 300) is G.sum_inner_s


@pytest.mark.parametrize("step", [2, 5, 16])
@pytest.mark.parametrize("n", [300, 1027, 300_001])  # chunks of 513 and a tail; the parallel run
def test_strided_argmax_argmin_read_spans(n, step):
    for dtype, between in ((np.float32, np.nan), (np.float64, np.inf), (np.int16, 9)):
        values = RNG.integers(-3, 4, n)  # many ties: the first index must win
        for where in sorted({0, 512 % n, 513 % n, n // 2, n - 1}):
            v = values.copy()
            v[where] = 5
            v[(where + 600) % n] = 5  # a tie later (or earlier): the first one wins
            v[(where + 7) % n] = -5
            _, view, sv = _spanned(n, step, dtype, between, v)
            assert int(xp.argmax(sv)) == np.argmax(view), (dtype, where)
            assert int(xp.argmin(sv)) == np.argmin(view), (dtype, where)
            assert int(xp.argmax(sv[None, :], axis=1)[0]) == np.argmax(view)
        if dtype != np.int16:
            for where in sorted(
                {0, 513 % n, n - 1}
            ):  # the first NaN among the wanted elements wins
                v = values.astype(np.float64)
                v[where] = np.nan
                v[(where + 1000) % n] = np.nan
                _, view, sv = _spanned(n, step, dtype, 0, v)
                assert int(xp.argmax(sv)) == np.argmax(view) == min(where, (where + 1000) % n)
                assert int(xp.argmin(sv)) == np.argmin(view)


@pytest.mark.parametrize("step", [-1, -3, 20, 2])
@pytest.mark.parametrize("n", [5, 200, 70_000])
def test_argmax_of_a_stepped_vector_reads_it_in_place(n, step):
    # any step, reversed ones too, short and long runs: the flat index is the position in the run
    a = RNG.integers(-50, 50, n * abs(step) + 1).astype(np.float64)
    a[RNG.integers(0, a.size, 3)] = 60.0  # ties
    view = a[::step][:n]
    s = xp.asarray(a)[::step][:n]
    for _ in range(2):  # the second call takes the memoized dense lane
        assert int(xp.argmax(s)) == np.argmax(view)
        assert int(xp.argmin(s)) == np.argmin(view)


@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.bool_])
@pytest.mark.parametrize("shape", [(40, 30), (700, 400)])  # one call; column blocks over threads
def test_reductions_over_rows_of_stepped_columns(shape, dtype):
    # the outer loops' rows read with a step (unsigned indices): every reduction along axis 0
    # of x[:, ::2] and x[::2, ::3] against NumPy
    a = (RNG.standard_normal(shape) * 5).astype(dtype)
    s = xp.asarray(a)
    for sl in ((slice(None), slice(None, None, 2)), (slice(None, None, 2), slice(1, None, 3))):
        view, sview = a[sl], s[sl]
        names = ["any", "all", "count_nonzero"]
        if dtype != np.bool_:
            names += ["max", "min", "sum", "prod"]
        for name in names:
            rows = slice(0, 12) if name == "prod" else slice(None)  # (products stay finite)
            got = np.asarray(getattr(xp, name)(sview[rows], axis=0))
            want = getattr(np, name)(view[rows], axis=0)
            if name in ("sum", "prod") and dtype == np.float32:
                np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-3)
            else:
                np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", [np.float32, np.int32])
def test_flat_argmax_of_large_stepped_matrices_reads_rows_in_place(dtype):
    # a large 2-D view that is not dense: each row's answer, then the first row holding the
    # best value (or a NaN); ties within and across rows go to the first in C order
    a = RNG.integers(-20, 20, (900, 450)).astype(dtype)
    a[600, 7] = a[123, 380] = a[123, 390] = 50  # ties: row 123's first in the views below
    a[10, 11] = a[650, 3] = -50
    step = slice(None, None, 2)
    views = [(step, slice(None)), (slice(None), step), (slice(1, None, 2), slice(None, None, 3)),
             (slice(None, None, -1), step)]  # fmt: skip
    s = xp.asarray(a)
    for sl in views:
        assert s[sl].size >= 65536  # (the parallel size: smaller views are copied first)
        assert int(xp.argmax(s[sl])) == np.argmax(a[sl]), sl
        assert int(xp.argmin(s[sl])) == np.argmin(a[sl]), sl
    if dtype == np.float32:
        b = a.copy()
        b[500, 20] = b[200, 30] = np.nan  # the first NaN in C order wins, in either view
        sb = xp.asarray(b)
        for sl in views:
            assert int(xp.argmax(sb[sl])) == np.argmax(b[sl]), sl
            assert int(xp.argmin(sb[sl])) == np.argmin(b[sl]), sl


@pytest.mark.parametrize(
    "dtype,ops,shapes",
    [
        # over threads for float64 alone (each op and dtype compiles its loops)
        (np.float64, ("sum", "prod", "max", "min", "count_nonzero", "mean"),
         [(42, 3), (1000, 5), (203, 31), (300001, 3), (70003, 7)]),
        (np.int32, ("sum", "max"), [(1001, 3), (130, 2)]),
        (np.bool_, ("count_nonzero",), [(999, 4)]),
    ],
)  # fmt: skip
def test_few_columns_reduced_over_their_rows_as_one_long_run(dtype, ops, shapes):
    """A dense block of fewer than 32 columns reduced along its rows (axis 0 of a C matrix, or
    the leading axes of a 3-D one) runs the narrow loops: the rows in chunks of about 64
    elements, the rows after the last chunk added at the end.  NumPy's values (NaN propagated
    by max and min), the same bits on one thread or two, and the plan is the narrow one."""
    import numba

    from strided.backends.cpu import kernels

    rng = np.random.default_rng(31)
    before = numba.get_num_threads()
    try:
        for shape in shapes:
            if dtype == np.bool_:
                a = rng.random(shape) > 0.4
            elif dtype == np.int32:
                a = rng.integers(-1000, 1000, shape).astype(dtype)
            else:  # (values near 1: a product of thousands stays in range)
                a = np.exp(rng.standard_normal(shape) * 0.01)
                a[shape[0] // 2, 1] = np.nan  # one column's max and min are NaN
            s = xp.asarray(a)
            plan = kernels._reduce_plan("sum", shape, (1,), (shape[1], 1), (0,))
            assert plan[0] == "narrow"
            views = [(s, a, 0)]
            if shape[0] % 2 == 0:  # the same block as a 3-D array over its two leading axes
                views.append((xp.reshape(s, (2, -1, shape[1])), a.reshape(2, -1, shape[1]), (0, 1)))
            for sv, v, axis in views:
                for op in ops:
                    want = getattr(np, op)(v, axis=axis)
                    bits = []
                    for threads in (1, min(2, numba.config.NUMBA_NUM_THREADS)):
                        numba.set_num_threads(threads)
                        got = np.asarray(getattr(xp, op)(sv, axis=axis))
                        if dtype == np.float64 and op in ("sum", "prod", "mean"):
                            np.testing.assert_allclose(got, want, rtol=1e-12)
                        else:
                            np.testing.assert_array_equal(got, want, err_msg=f"{op} {shape}")
                        bits.append(got.tobytes())
                    assert bits[0] == bits[1], (op, shape)
    finally:
        numba.set_num_threads(before)
