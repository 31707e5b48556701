"""Reductions and cumulative scans vs NumPy: every accepted dtype, any set of axes, keepdims,
every layout, meta agreement, dtype rules, empty reductions."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import strided as xp
from strided import _dtypes as sdt

from .op_table import REDUCTIONS
from .strategies import LAYOUTS, in_layout, nonempty_shapes, seeds, shapes, values

_ACCEPTS = {
    "sum": "numeric",
    "prod": "numeric",
    "max": "real numeric",
    "min": "real numeric",
    "any": "any",
    "all": "any",
}


def _accumulator(d: sdt.DType) -> sdt.DType:
    if d.kind == sdt.UNSIGNED:
        return sdt.uint64
    if d.kind in (sdt.SIGNED, sdt.BOOL):
        return sdt.int64
    return d


def _cases():
    for name in REDUCTIONS:
        kinds = sdt.CATEGORIES[_ACCEPTS[name]]
        for d in sdt.ALL_DTYPES:
            if d.kind in kinds:
                yield pytest.param(name, d, id=f"{name}-{d.name}")


@pytest.mark.parametrize("name,d", list(_cases()))
@settings(max_examples=8, deadline=None)
@given(data=st.data(), rng=seeds())
def test_reduction_values(name, d, data, rng):
    empty_ok = name not in ("max", "min")
    shape = data.draw(shapes if empty_ok else nonempty_shapes, label="shape")
    layout = data.draw(st.sampled_from(LAYOUTS), label="layout")
    axis = data.draw(
        st.none() | st.lists(st.integers(0, max(len(shape) - 1, 0)), unique=True).map(tuple)
        if shape
        else st.none(),
        label="axis",
    )
    keepdims = data.draw(st.booleans(), label="keepdims")
    v = values(
        rng,
        shape,
        d,
        int_domain=(-3, 3) if name == "prod" else (-20, 20),
        domain=(-1.5, 1.5) if name == "prod" else (-5.0, 5.0),
    )
    nv, a = in_layout(v, layout)
    got = getattr(xp, name)(a, axis=axis, keepdims=keepdims)
    out_dtype = {
        "sum": _accumulator(d),
        "prod": _accumulator(d),
        "any": sdt.bool,
        "all": sdt.bool,
    }.get(name, d)
    assert got.dtype is out_dtype
    want = REDUCTIONS[name](
        nv.astype(out_dtype.numpy) if name in ("sum", "prod") else nv, axis=axis, keepdims=keepdims
    )
    want = np.asarray(want).astype(out_dtype.numpy)
    assert got.shape == want.shape
    if d.kind in sdt.FLOAT_KINDS:
        rtol = 1e-4 if d in (sdt.float32, sdt.complex64) else 1e-10
        np.testing.assert_allclose(np.asarray(got), want, rtol=rtol, atol=rtol)
    else:
        np.testing.assert_array_equal(np.asarray(got), want)


@pytest.mark.parametrize("name", ["max", "min"])
def test_max_min_propagate_nan_and_reject_empty(name):
    v = np.array([[1.0, np.nan, 3.0], [4.0, 5.0, 6.0]])
    got = getattr(xp, name)(xp.asarray(v), axis=1)
    np.testing.assert_array_equal(np.asarray(got), getattr(np, name)(v, axis=1))
    with pytest.raises(ValueError, match=name):
        getattr(xp, name)(xp.zeros((0, 3)), axis=0)


def test_sum_dtype_argument_and_empty_identities():
    a = xp.asarray(np.arange(10, dtype=np.int8))
    assert xp.sum(a, dtype=xp.int8).dtype is xp.int8
    assert float(xp.sum(xp.zeros((0,)))) == 0.0
    assert float(xp.prod(xp.zeros((0,)))) == 1.0
    assert bool(xp.all(xp.zeros((0,), dtype=xp.bool)))
    assert not bool(xp.any(xp.zeros((0,), dtype=xp.bool)))


def test_large_reductions_use_every_element():
    rng = np.random.default_rng(0)
    v = rng.standard_normal((300, 700))
    for axis in (None, 0, 1):
        np.testing.assert_allclose(
            np.asarray(xp.sum(xp.asarray(v), axis=axis)), v.sum(axis=axis), rtol=1e-10
        )
        np.testing.assert_allclose(
            np.asarray(xp.sum(xp.asarray(v).T, axis=axis)), v.T.sum(axis=axis), rtol=1e-10
        )


def test_mean():
    v = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    got = xp.mean(xp.asarray(v), axis=(0, 2), keepdims=True)
    assert got.dtype is xp.float32
    np.testing.assert_allclose(np.asarray(got), v.mean(axis=(0, 2), keepdims=True))
    assert xp.mean(xp.asarray(np.arange(4))).dtype is xp.float64


@pytest.mark.parametrize(
    "name,ref", [("cumulative_sum", np.cumsum), ("cumulative_prod", np.cumprod)]
)
@pytest.mark.parametrize(
    "d",
    [sdt.int8, sdt.uint16, sdt.int64, sdt.float32, sdt.float64, sdt.complex128],
    ids=lambda d: d.name,
)
@settings(max_examples=6, deadline=None)
@given(data=st.data(), rng=seeds())
def test_cumulative(name, ref, d, data, rng):
    shape = data.draw(st.lists(st.integers(0, 5), min_size=1, max_size=3).map(tuple))
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    include_initial = data.draw(st.booleans())
    layout = data.draw(st.sampled_from(LAYOUTS))
    nv, a = in_layout(values(rng, shape, d, (-1.5, 1.5), (-3, 3)), layout)
    got = getattr(xp, name)(a, axis=axis, include_initial=include_initial)
    acc = _accumulator(d)
    assert got.dtype is acc
    want = ref(nv.astype(acc.numpy), axis=axis)
    if include_initial:
        init_shape = list(nv.shape)
        init_shape[axis] = 1
        init = np.full(init_shape, 0 if name == "cumulative_sum" else 1, dtype=acc.numpy)
        want = np.concatenate([init, want], axis=axis)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5)


def test_reductions_reject_dtypes():
    with pytest.raises(TypeError, match="cumulative_sum"):
        xp.cumulative_sum(xp.zeros(3, dtype=xp.bool))
    with pytest.raises(TypeError, match="max"):
        xp.max(xp.zeros(3, dtype=xp.complex64))
    with pytest.raises(TypeError, match="sum"):
        xp.sum(xp.zeros(3, dtype=xp.bool, device="meta"))


def test_cumulative_sum_needs_axis_for_nd():
    with pytest.raises(ValueError, match="axis"):
        xp.cumulative_sum(xp.zeros((2, 2)))


@pytest.mark.parametrize("name", list(REDUCTIONS))
def test_reductions_on_meta(name):
    x = xp.empty((10**6, 3, 10**5), dtype=xp.float32, device="meta")
    r = getattr(xp, name)(x, axis=(0, 2), keepdims=True)
    real = getattr(xp, name)(xp.ones((4, 3, 5), dtype=xp.float32), axis=(0, 2), keepdims=True)
    assert r.shape == (1, 3, 1) and r.dtype is real.dtype and r.device == "meta"
    with pytest.raises(IndexError, match=name):
        getattr(xp, name)(x, axis=3)


@pytest.mark.parametrize("dtype", [np.int8, np.uint16])  # signed and unsigned, 8 and 16 bits
@pytest.mark.parametrize("name", ["cumulative_sum", "cumulative_prod"])
def test_narrow_integer_scans_accumulate_in_the_default_integer(dtype, name):
    """Narrow integers are scanned in (u)int64 as the standard says, read in place (no widened
    copy): sums and products past the input type's range are exact, on contiguous and
    transposed operands, along either axis, with and without the initial slot."""
    rng = np.random.default_rng(3)
    info = np.iinfo(dtype)
    hi = info.max if name == "cumulative_sum" else 3
    a = rng.integers(max(info.min, -hi), hi, (37, 29), endpoint=True).astype(dtype)
    acc = np.uint64 if info.min == 0 else np.int64
    np_fn = np.cumsum if name == "cumulative_sum" else np.cumprod
    for arr, s in ((a, xp.asarray(a)), (a.T, xp.asarray(a).T)):
        for axis in (0, 1):
            got = getattr(xp, name)(s, axis=axis)
            want = np_fn(arr.astype(acc), axis=axis)
            assert np.asarray(got).dtype == acc
            np.testing.assert_array_equal(np.asarray(got), want)
            got = np.asarray(getattr(xp, name)(s, axis=axis, include_initial=True))
            first = np.take(got, [0], axis=axis)
            assert (first == (0 if name == "cumulative_sum" else 1)).all()
            np.testing.assert_array_equal(np.delete(got, 0, axis=axis), want)


@pytest.mark.parametrize("d", ["float32", "float64", "complex128"])
def test_var_and_std_of_vectors_at_a_step_match_numpy(d):
    """A short vector at a step (``x[::2]``, ``x[1::-3]``) is copied to unit stride in a scratch
    buffer before the moment loop: the values of NumPy for each step, offset and length (one
    scratch buffer serves calls of several lengths and dtypes in turn)."""
    rng = np.random.default_rng(5)
    v = (rng.standard_normal(3001) * 2 + 1).astype(d)
    if d == "complex128":
        v = v + 1j * rng.standard_normal(3001)
    rtol = 1e-4 if d == "float32" else 1e-11
    s = xp.asarray(v)
    for key in (slice(None, None, 2), slice(1, None, 2), slice(None, None, -3), slice(7, 40, 5)):
        for correction in (0, 1):
            want = np.var(v[key], ddof=correction)
            got = np.asarray(xp.var(s[key], correction=correction))
            np.testing.assert_allclose(got, want, rtol=rtol)
            got = np.asarray(xp.std(s[key], correction=correction))
            np.testing.assert_allclose(got, np.sqrt(want), rtol=rtol)


def test_scratch_buffers_follow_the_length_and_dtype_asked_for():
    from strided.backends.cpu import _scratch

    a = _scratch(100, np.dtype(np.float64), 7)
    assert a.shape == (100,) and a.dtype == np.float64
    assert _scratch(100, np.dtype(np.float64), 7) is a  # the same view again
    assert _scratch(60, np.dtype(np.float64), 7).shape == (60,)  # shorter, the same dtype
    b = _scratch(30, np.dtype(np.float32), 7)
    assert b.shape == (30,) and b.dtype == np.float32
    c = _scratch(1000, np.dtype(np.float64), 7)
    assert c.shape == (1000,) and c.dtype == np.float64
    assert _scratch(5, np.dtype(np.int8), 8).shape == (5,)  # another slot: its own buffer


@pytest.mark.parametrize("d", ["float32", "float64", "complex128"])
def test_var_paths_match_numpy_and_do_not_depend_on_threads(d):
    """var's kernel paths: dense runs reduced serially, many runs shared among threads (one row
    each), one long run cut into fixed segments, dense columns (the reduced axis outermost), a
    layout copied with its reduced axes last; the same bits with one thread or two; correction
    and N - correction <= 0 (NaN).  The parallel loops (the same code for every dtype) are
    compiled for float64 only: each costs 1.5-3 s of a cold ``make test``."""
    import numba

    from strided.backends.cpu.kernels import PARALLEL_THRESHOLD

    rng = np.random.default_rng(3)
    big = 2 * PARALLEL_THRESHOLD  # past the parallel threshold
    cases = [
        ((5, 7), (1,)),
        ((6, 5), (0,)),  # reduced axis outermost: columns
        ((3, 4, 5), (0, 2)),  # not trailing: copied with the reduced axes last
        ((big // 64, 64), (1,)),  # many runs in parallel
        ((big + 3,), None),  # one long run in segments
        ((2, big // 2), (1,)),
        ((big // 64, 64), (0,)),  # columns at the parallel size: one block, serially
        ((big // 2048 + 1, 2053), (0,)),  # columns in blocks shared among threads
    ]
    rtol = 1e-4 if d == "float32" else 1e-11
    for shape, axis in cases:
        if d != "float64" and np.prod(shape) >= PARALLEL_THRESHOLD:
            continue
        v = rng.standard_normal(shape) * 3 + 1
        if d == "complex128":
            v = v + 1j * rng.standard_normal(shape)
        v = v.astype(d)
        for correction in (0, 1.5):
            for layout in (v, v.T) if v.ndim == 2 else (v,):
                ax = axis if layout is v or axis is None else tuple(v.ndim - 1 - a for a in axis)
                want = np.var(layout, axis=ax, ddof=correction)
                before = numba.get_num_threads()
                try:
                    got = []
                    for threads in (1, before):
                        numba.set_num_threads(threads)
                        got.append(np.asarray(xp.var(xp.asarray(layout), axis=ax,
                                                     correction=correction)))  # fmt: skip
                finally:
                    numba.set_num_threads(before)
                assert got[0].dtype == want.dtype
                np.testing.assert_allclose(got[0], want, rtol=rtol)
                np.testing.assert_array_equal(got[0], got[1])
    got = xp.var(xp.asarray(np.ones((4, 1))), axis=1, correction=1, keepdims=True)
    assert got.shape == (4, 1) and bool(xp.all(xp.isnan(got)))
    assert bool(xp.isnan(xp.var(xp.asarray(np.zeros(0)))))
    # nothing reduced, complex too (a complex division by zero raised inside the kernel)
    got = xp.var(xp.asarray(np.zeros((0, 3), complex)), axis=0)
    assert got.dtype is xp.float64 and bool(xp.all(xp.isnan(got)))
    with pytest.raises(TypeError, match="var"):
        xp.var(xp.asarray(np.ones(3)), correction="1")


@pytest.mark.parametrize("name", ["sum", "max"])
def test_few_columns_over_many_rows_in_row_blocks(name):
    """A few columns (fewer than 2048) reduced over many rows (axis 0 of a C array, a transpose
    along its last axis, stepped columns) at the parallel size: the rows in fixed blocks among
    the threads, then the partials and the rows left over.  NumPy's values (max exactly, NaN
    included); the same bits with one thread or two.  float64 only: each parallel loop costs
    seconds of a cold ``make test``."""
    import numba

    from strided.backends.cpu.kernels import _ROW_PARTS, PARALLEL_THRESHOLD, _reduce_plan

    rng = np.random.default_rng(11)
    rows = 4 * PARALLEL_THRESHOLD // 300 + _ROW_PARTS - 1  # rows left over after the blocks
    v = rng.standard_normal((rows, 600))
    v[rows - 1, 7] = np.nan  # in the rows left over
    v[5, 300] = np.nan  # in the first block
    layouts = [(v, 0), (np.ascontiguousarray(v.T).T, 0), (v.T, 1), (v[:, ::2], 0)]
    strides = tuple(st // 8 for st in v.strides)
    assert _reduce_plan(name, v.shape, (1,), strides, (0,))[0] == "rows"
    for layout, axis in layouts:
        want = getattr(np, name)(layout, axis=axis)
        before = numba.get_num_threads()
        try:
            got = []
            for threads in (1, before):
                numba.set_num_threads(threads)
                got.append(np.asarray(getattr(xp, name)(xp.asarray(layout), axis=axis)))
        finally:
            numba.set_num_threads(before)
        if name == "max":
            np.testing.assert_array_equal(got[0], want)
        else:
            np.testing.assert_allclose(got[0], want, rtol=1e-12, atol=1e-12)
        np.testing.assert_array_equal(got[0], got[1])


def test_count_nonzero_counts_past_a_byte_in_int64():
    """count_nonzero adds x != 0 per element into int64, reading any dtype as it is (one pass,
    no bool copy): counts past 127 and 255 along every axis, NaN and -0.0 counted as NumPy
    counts them, bool and complex inputs."""
    rng = np.random.default_rng(4)
    v = rng.standard_normal((250, 200))  # below the parallel size (compile time)
    v[rng.random(v.shape) < 0.1] = 0.0
    v[0, :5] = [np.nan, -0.0, 0.0, np.inf, -np.inf]
    as_int = np.where(np.isfinite(v), v * 100, 7).astype(np.int16)
    for a in (v, v > 0, v.astype(np.complex64), as_int):
        for axis in (None, 0, 1, (0, 1)):
            got = xp.count_nonzero(xp.asarray(a), axis=axis)
            assert got.dtype == xp.int64
            np.testing.assert_array_equal(np.asarray(got), np.count_nonzero(a, axis=axis))


def test_counting_large_non_bool_arrays_adds_partial_counts():
    """A large count in parallel parts (one long run: 64 partial counts; a few columns over
    many rows: one partial row per block) adds its partial counts up, as counts, for one thread
    or two: a transposed float32 array along either axis, whole, stepped."""
    import numba

    from strided.backends.cpu.kernels import PARALLEL_THRESHOLD

    rng = np.random.default_rng(9)
    a = rng.standard_normal(max(4 * PARALLEL_THRESHOLD, 1_000_000) + 4099).astype(np.float32)
    a[rng.random(a.shape) < 0.3] = 0.0
    a[:3] = [np.nan, -0.0, np.inf]
    cols = a[: 1000 * 1000].reshape(1000, 1000)[:, :7]  # few columns, many rows
    before = numba.get_num_threads()
    try:
        for threads in (1, min(2, numba.config.NUMBA_NUM_THREADS)):
            numba.set_num_threads(threads)
            assert int(xp.count_nonzero(xp.asarray(a))) == np.count_nonzero(a)
            assert int(xp.count_nonzero(xp.asarray(a)[::3])) == np.count_nonzero(a[::3])
            c = np.ascontiguousarray(cols)
            for axis in (0, None):
                got = xp.count_nonzero(xp.asarray(c), axis=axis)
                np.testing.assert_array_equal(np.asarray(got), np.count_nonzero(c, axis=axis))
            big = a[: 600 * 1000].reshape(600, 1000)
            got = xp.count_nonzero(xp.asarray(big).T, axis=1)
            np.testing.assert_array_equal(np.asarray(got), np.count_nonzero(big.T, axis=1))
    finally:
        numba.set_num_threads(before)


def test_counting_a_large_bool_array_whole_reads_words():
    """A whole dense bool array at the parallel size is counted eight bytes at a time: views
    starting at any byte, a tail shorter than a word, a transpose, keepdims, and the layouts
    that take the general loops (reversed, stepped) all give NumPy's counts."""
    rng = np.random.default_rng(8)
    flat = rng.random(300_013) < 0.37
    base = xp.asarray(flat)
    for start, n in ((0, 70_001), (1, 70_001), (5, 70_001), (3, 70_006)):
        got = xp.count_nonzero(base[start : start + n])  # (a memoized plan, other offsets)
        assert got.dtype == xp.int64 and int(got) == np.count_nonzero(flat[start : start + n])
    sq = flat[: 300 * 301].reshape(300, 301)
    x = xp.reshape(base[: 300 * 301], (300, 301))
    for arr, want in ((x.mT, sq.T), (xp.flip(x, axis=1), sq[:, ::-1]), (base[::3], flat[::3])):
        assert int(xp.count_nonzero(arr)) == np.count_nonzero(want)
    got = xp.count_nonzero(x, axis=(0, 1), keepdims=True)
    np.testing.assert_array_equal(np.asarray(got), np.count_nonzero(sq, keepdims=True))


def test_any_all_of_long_runs_decide_wherever_the_deciding_element_is():
    """any/all of one long run: up to 2 MB on one thread, beyond it a serial prefix and then
    chunks over threads.  The one deciding element (a False for all, a True for any) at the
    start, just past the prefix, mid-way and last; float input too; one thread or two."""
    import numba

    before = numba.get_num_threads()
    try:
        for threads in (1, min(2, numba.config.NUMBA_NUM_THREADS)):
            numba.set_num_threads(threads)
            for n in (1_000_003, 3_000_017):
                for pos in (None, 3, 8192, 8195, n // 2, n - 1):
                    ones, zeros = np.ones(n, bool), np.zeros(n, bool)
                    if pos is not None:
                        ones[pos], zeros[pos] = False, True
                    assert bool(xp.all(xp.asarray(ones))) is bool(ones.all())
                    assert bool(xp.any(xp.asarray(zeros))) is bool(zeros.any())
            f = np.zeros(300_007)
            f[300_000] = -0.5
            assert bool(xp.any(xp.asarray(f))) and not bool(xp.all(xp.asarray(f)))
            assert not bool(xp.any(xp.asarray(np.zeros(300_007))))
    finally:
        numba.set_num_threads(before)


@pytest.mark.parametrize(
    "name,ref", [("cumulative_sum", np.cumsum), ("cumulative_prod", np.cumprod)]
)
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex128])
def test_scans_along_rows_are_numpys_bits_in_any_row_grouping(name, ref, dtype):
    """Scans along dense rows run four rows side by side (and split rows among threads when
    large); each row still takes its steps in order, so the results are NumPy's row-by-row bits
    exactly: for row counts that are not multiples of four, groups of four that straddle an
    outer axis (rows with a gap between blocks), reversed outer axes, the threaded path, and
    with one or two threads."""
    import numba

    rng = np.random.default_rng(11)

    def case(shape):
        a = rng.standard_normal(shape) * (1.0 if name == "cumulative_sum" else 0.1) + (
            0 if name == "cumulative_sum" else 1
        )
        if dtype is np.complex128:  # (products kept near the unit circle)
            a = a + 1j * rng.standard_normal(shape)
            if name == "cumulative_prod":
                a = a / np.abs(a) * (1 + 0.01 * rng.standard_normal(shape))
        return a.astype(dtype)

    big = case((6, 5, 40))
    cases = [
        case((7, 9)),  # rows 4 + 3
        case((1, 9)),
        case((3, 5, 40)),  # one grid of 15 rows
        big[:, :3, :],  # a gap after every third row: groups straddle the outer axis
        big[::-1, 1:4, :],  # the outer axis reversed
        case((2, 3, 4, 11))[:, ::2],
    ]
    if dtype is np.float64:  # the threaded loop (one dtype: each costs seconds of compiling)
        cases += [case((9, 8000)), case((70, 1500))]
    before = numba.get_num_threads()
    scan = getattr(xp, name)
    for a in cases:
        got = np.asarray(scan(xp.asarray(a), axis=-1))
        if dtype is np.complex128:  # (complex products are not NumPy's bits, FMA or not)
            np.testing.assert_allclose(got, ref(a, axis=-1), rtol=1e-13)
        else:
            np.testing.assert_array_equal(got, ref(a, axis=-1))
        rows = a.reshape(-1, a.shape[-1])  # each row scanned alone: the same bits
        alone = [np.asarray(scan(xp.asarray(rows[i].copy()), axis=-1)) for i in range(len(rows))]
        np.testing.assert_array_equal(got.reshape(rows.shape), np.stack(alone))
        try:
            numba.set_num_threads(1)
            one = np.asarray(getattr(xp, name)(xp.asarray(a), axis=-1))
        finally:
            numba.set_num_threads(before)
        np.testing.assert_array_equal(one, got)


@pytest.mark.parametrize("step", [2, 3])
@pytest.mark.parametrize("dtype", [np.int32, np.float64])
def test_scans_of_stepped_runs_read_them_as_slices(dtype, step):
    # a stepped input into a dense output (the scan loop's stepped-slice branch): NumPy's bits,
    # its order of additions being the same; 1-D, along rows and with the initial slot
    rng = np.random.default_rng(11)
    a = (rng.standard_normal((7, 3001)) * 100).astype(dtype)
    s = xp.asarray(a)
    acc = np.int64 if dtype == np.int32 else dtype
    for name, ref in (("cumulative_sum", np.cumsum), ("cumulative_prod", np.cumprod)):
        cut = slice(None) if name == "cumulative_sum" else slice(0, 40)  # products stay finite
        for view, sview in ((a[2, ::step], s[2, ::step]), (a[:, ::step], s[:, ::step])):
            view, sview = view[..., cut], sview[..., cut]
            got = getattr(xp, name)(sview, axis=-1)
            np.testing.assert_array_equal(np.asarray(got), ref(view.astype(acc), axis=-1))
            got = np.asarray(getattr(xp, name)(sview, axis=-1, include_initial=True))
            np.testing.assert_array_equal(got[..., 1:], ref(view.astype(acc), axis=-1))
