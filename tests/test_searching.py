"""Searching, sorting and indexing vs NumPy: argmax/argmin, sort/argsort (stable, descending),
searchsorted, nonzero, take, take_along_axis, integer-array and boolean-mask indexing (get and
set), from_dlpack; every layout, meta shapes and data-dependent errors."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import strided as xp
from strided import _dtypes as sdt

from .strategies import LAYOUTS, in_layout, seeds, values

REAL = [sdt.int8, sdt.uint16, sdt.int64, sdt.float32, sdt.float64]
nd_shapes = st.lists(st.integers(1, 5), min_size=1, max_size=3).map(tuple)


def _draw(data, rng, dtypes=REAL, shape=None, int_domain=(-4, 4)):
    d = data.draw(st.sampled_from(dtypes), label="dtype")
    shape = shape or data.draw(nd_shapes, label="shape")
    v = values(rng, shape, d, (-3.0, 3.0), int_domain)
    if d.kind == sdt.REAL and data.draw(st.booleans(), label="nan"):
        v.flat[0] = np.nan
    return in_layout(v, data.draw(st.sampled_from(LAYOUTS), label="layout"))


@settings(max_examples=40)
@given(data=st.data(), rng=seeds())
def test_argmax_argmin(data, rng):
    v, a = _draw(data, rng)
    axis = data.draw(st.none() | st.integers(-a.ndim, a.ndim - 1))
    keepdims = data.draw(st.booleans())
    for fn, ref in ((xp.argmax, np.argmax), (xp.argmin, np.argmin)):
        got = fn(a, axis=axis, keepdims=keepdims)
        assert got.dtype is xp.int64
        np.testing.assert_array_equal(np.asarray(got), ref(v, axis=axis, keepdims=keepdims))


def test_argmax_errors_and_meta():
    with pytest.raises(ValueError, match="argmax.*empty"):
        xp.argmax(xp.zeros((0, 3)), axis=0)
    with pytest.raises(TypeError, match="argmin"):
        xp.argmin(xp.zeros(3, dtype=xp.complex64))
    assert xp.argmax(xp.empty((7, 5), device="meta"), axis=1, keepdims=True).shape == (7, 1)


@settings(max_examples=40)
@given(data=st.data(), rng=seeds())
def test_sort_and_argsort_are_stable(data, rng):
    v, a = _draw(data, rng, int_domain=(-2, 2))  # many ties
    axis = data.draw(st.integers(-a.ndim, a.ndim - 1))
    descending = data.draw(st.booleans())
    got_sort = np.asarray(xp.sort(a, axis=axis, descending=descending))
    got_idx = xp.argsort(a, axis=axis, descending=descending)
    assert got_idx.dtype is xp.int64
    if descending:
        # stable descending: sort on the negated key, keeping equal elements in order
        key = -v.astype(np.float64)
        want_idx = np.argsort(key, axis=axis, kind="stable")
        want_sort = np.flip(np.sort(v, axis=axis), axis=axis)
    else:
        want_idx = np.argsort(v, axis=axis, kind="stable")
        want_sort = np.sort(v, axis=axis)
    np.testing.assert_array_equal(got_sort, want_sort)
    if not np.isnan(v.astype(np.float64)).any():
        np.testing.assert_array_equal(np.asarray(got_idx), want_idx)
    taken = xp.take_along_axis(a, got_idx, axis=axis)
    np.testing.assert_array_equal(np.asarray(taken), got_sort)


@settings(max_examples=30)
@given(data=st.data(), rng=seeds())
def test_searchsorted(data, rng):
    d = data.draw(st.sampled_from([sdt.int16, sdt.float32, sdt.float64]))
    base = np.sort(values(rng, (data.draw(st.integers(0, 8)),), d))
    probe = values(rng, data.draw(nd_shapes), d)
    side = data.draw(st.sampled_from(["left", "right"]))
    _, x1 = in_layout(base, data.draw(st.sampled_from(["contiguous", "sliced", "negative"])))
    got = xp.searchsorted(x1, xp.asarray(probe), side=side)
    np.testing.assert_array_equal(np.asarray(got), np.searchsorted(base, probe, side=side))
    order = rng.permutation(base.size)
    shuffled = base[order]
    got = xp.searchsorted(
        xp.asarray(shuffled),
        xp.asarray(probe),
        sorter=xp.asarray(np.argsort(shuffled, kind="stable")),
    )
    np.testing.assert_array_equal(np.asarray(got), np.searchsorted(base, probe))
    assert int(xp.searchsorted(xp.asarray([1.0, 2.0, 3.0]), 2.5)) == 2


@settings(max_examples=30)
@given(data=st.data(), rng=seeds())
def test_nonzero_and_boolean_masks(data, rng):
    v, a = _draw(data, rng, dtypes=[sdt.bool, sdt.int8, sdt.float64], int_domain=(-1, 1))
    got = xp.nonzero(a)
    want = np.nonzero(v)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(np.asarray(g), w)
    mask_nd = data.draw(st.integers(1, a.ndim))
    m_np = rng.integers(0, 2, size=v.shape[:mask_nd]).astype(bool)
    mask = xp.asarray(m_np)
    np.testing.assert_array_equal(np.asarray(a[mask]), v[m_np])
    target_np = v.copy()
    target = xp.asarray(target_np.copy())
    fill = values(rng, (), a.dtype)
    target[mask] = xp.asarray(fill)
    target_np[m_np] = fill
    np.testing.assert_array_equal(np.asarray(target), target_np)


@pytest.mark.parametrize("dtype", ["bool", "int16", "float32", "float64", "complex64"])
@pytest.mark.parametrize("shape", [(1,), (4097,), (7, 13), (3, 5, 70), (300, 400)])
@pytest.mark.parametrize("fill", ["random", "trailing zeros", "leading zeros", "last only"])
def test_nonzero_like_numpy(dtype, shape, fill):
    """nonzero's branch-free pass (a slot per element, advancing past nonzero ones, up to the
    last nonzero element; leading coordinates by odometer): NumPy's coordinates for sparse and
    dense data, zeros at either end, a single nonzero last element, NaN (nonzero) and -0.0
    (zero), in 1 to 3 dimensions."""
    rng = np.random.default_rng(sum(shape) + len(dtype))
    a = rng.standard_normal(shape)
    a[rng.random(shape) < 0.5] = 0.0
    flat = a.reshape(-1)
    if dtype.startswith(("float", "complex")):
        flat[rng.random(flat.size) < 0.05] = np.nan
        flat[rng.random(flat.size) < 0.05] = -0.0
    if fill == "trailing zeros":
        flat[flat.size // 2 :] = 0
    elif fill == "leading zeros":
        flat[: flat.size // 2] = 0
    elif fill == "last only":
        flat[:] = 0
        flat[-1] = 3
    a = a.astype(dtype)
    got = xp.nonzero(xp.asarray(a))
    want = np.nonzero(a)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(np.asarray(g), w)


@settings(max_examples=40)
@given(data=st.data(), rng=seeds())
def test_take_and_integer_array_indexing(data, rng):
    v, a = _draw(data, rng)
    axis = data.draw(st.integers(-a.ndim, a.ndim - 1))
    n = v.shape[axis]
    idx = rng.integers(-n, n, size=data.draw(st.integers(0, 6)))
    got = xp.take(a, xp.asarray(idx), axis=axis)
    np.testing.assert_array_equal(np.asarray(got), np.take(v, idx, axis=axis))
    # integer arrays (broadcast together) and ints on the leading dims
    k = data.draw(st.integers(1, a.ndim))
    key_np = []
    for d in range(k):
        if data.draw(st.booleans(), label=f"int{d}"):
            key_np.append(int(rng.integers(-v.shape[d], v.shape[d])))
        else:
            key_np.append(rng.integers(-v.shape[d], v.shape[d], size=(2, 1) if d % 2 else (3,)))
    if all(isinstance(i, int) for i in key_np):
        key_np[0] = np.asarray(key_np[0])
    key = tuple(xp.asarray(i) if isinstance(i, np.ndarray) else i for i in key_np)
    np.testing.assert_array_equal(np.asarray(a[key]), v[tuple(key_np)])
    target_np, target = v.copy(), xp.asarray(v.copy())
    if v.ndim - k <= 2:
        new = values(rng, np.broadcast_shapes(*[np.shape(i) for i in key_np]), a.dtype)
        for i in (tuple(key_np),):
            target_np[i] = new[(...,) + (None,) * (v.ndim - k)] if v.ndim > k else new
        target[key] = xp.asarray(new[(...,) + (None,) * (v.ndim - k)] if v.ndim > k else new)
        np.testing.assert_array_equal(np.asarray(target), target_np)


@settings(max_examples=30)
@given(data=st.data(), rng=seeds())
def test_take_along_axis(data, rng):
    v, a = _draw(data, rng)
    axis = data.draw(st.integers(-a.ndim, a.ndim - 1))
    shape = list(v.shape)
    shape[axis] = data.draw(st.integers(0, 4))
    idx = rng.integers(-v.shape[axis], v.shape[axis], size=shape)
    got = xp.take_along_axis(a, xp.asarray(idx), axis=axis)
    np.testing.assert_array_equal(np.asarray(got), np.take_along_axis(v, idx, axis=axis))


@pytest.mark.parametrize("descending", [False, True])
def test_complex_and_bool_sort_like_numpy(descending):
    z = np.array([1 + 2j, 1 - 1j, -3 + 0j, 1 + 2j, 0.5j], dtype=np.complex128)
    want = np.sort(z)[::-1] if descending else np.sort(z)
    np.testing.assert_array_equal(np.asarray(xp.sort(xp.asarray(z), descending=descending)), want)
    order = np.asarray(xp.argsort(xp.asarray(z), descending=descending))
    np.testing.assert_array_equal(z[order], want)
    b = np.array([True, False, True, False])
    np.testing.assert_array_equal(np.asarray(xp.sort(xp.asarray(b))), np.sort(b))


@pytest.mark.parametrize("descending", [False, True])
@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_complex_sort_is_stable_and_lexicographic_with_nan_last(dtype, descending):
    """Complex sort and argsort: lexicographic on the real then the imaginary part, NaN last in
    each (NumPy's lexsort of the parts is the oracle), ties (signed zeros too) in input order,
    descending as the ascending order of the reversed row, reversed; along either axis of a
    matrix (also stepped backwards, and one sorted in two halves) and on a long vector."""
    rng = np.random.default_rng(21)
    parts = np.array([-1.0, -0.0, 0.0, 2.0, np.inf, -np.inf, np.nan])
    m = np.empty((40, 33), dtype)  # (the parts set one by one: 1j * inf would make a NaN real)
    m.real, m.imag = rng.choice(parts, m.shape), rng.choice(parts, m.shape)
    m.real[3, :5], m.imag[3, :5] = [0.0, -0.0, 0.0, -0.0, 0.0], [1.0, 1.0, -0.0, 0.0, 1.0]
    long = (rng.integers(0, 5, 3000) + 1j * rng.integers(0, 3, 3000)).astype(dtype)
    # stepped backwards along the rows, and large enough (>= 65,536) to be sorted in two halves
    big = np.empty((256, 600), dtype)
    big.real, big.imag = rng.choice(parts, big.shape), rng.integers(-2, 3, big.shape)
    stepped = big[:, ::-2]

    def oracle(row):  # the stable positions, by the definition of the order
        w = row[::-1] if descending else row
        order = np.lexsort((w.imag, w.real))
        return len(row) - 1 - order[::-1] if descending else order

    for arr, axis in ((m, 1), (m, 0), (long, 0), (stepped, 1), (stepped, 0)):
        rows = np.moveaxis(arr, axis, -1).reshape(-1, arr.shape[axis])
        want = np.stack([oracle(r) for r in rows])
        s = xp.asarray(big)[:, ::-2] if arr is stepped else xp.asarray(arr)
        got = np.asarray(xp.argsort(s, axis=axis, descending=descending))
        got = np.moveaxis(got, axis, -1).reshape(want.shape)
        np.testing.assert_array_equal(got, want)
        values = np.asarray(xp.sort(s, axis=axis, descending=descending))
        values = np.moveaxis(values, axis, -1).reshape(want.shape)
        wanted = np.take_along_axis(rows, want, axis=-1)
        np.testing.assert_array_equal(  # the bits: signed zeros and NaNs where they belong
            np.ascontiguousarray(values).view(np.uint8), np.ascontiguousarray(wanted).view(np.uint8)
        )


def test_index_errors():
    a = xp.zeros((3, 4))
    with pytest.raises(IndexError, match="out of bounds"):
        xp.take(a, xp.asarray([3]), axis=0)
    with pytest.raises(IndexError, match="out of bounds"):
        a[xp.asarray([0, 5]), 0]
    with pytest.raises(IndexError, match="out of bounds"):
        xp.take_along_axis(a, xp.asarray([[4]]), axis=1)
    with pytest.raises(IndexError, match="integers"):
        a[xp.asarray([0.5])]
    with pytest.raises(IndexError, match="boolean index"):
        a[xp.asarray([True, False])]
    assert a[xp.zeros((0, 4), dtype=xp.bool)].shape == (0,)  # an empty mask selects nothing
    assert a[xp.zeros((0,), dtype=xp.bool)].shape == (0, 4)
    with pytest.raises(IndexError, match="only with integers"):
        a[:, xp.asarray([0])]
    with pytest.raises(TypeError, match="take.*integer"):
        xp.take(a, xp.asarray([0.0]), axis=0)
    with pytest.raises(ValueError, match="nonzero"):
        xp.nonzero(xp.asarray(1.0))


@pytest.mark.parametrize("n", [1, 100, 5000, 300_000])
def test_take_of_a_vector_by_indices_of_either_sign(n):
    """The vector gather's lanes: all indices non-negative (read as offsets directly), some
    negative (counted from the end), strided x and indices; an index just out of range at the
    first or the last position names itself."""
    rng = np.random.default_rng(n)
    v = rng.standard_normal(n + 3).astype(np.float32)
    a = xp.asarray(v)
    for x, xv in ((a, v), (a[::2], v[::2])):
        m = xv.shape[0]
        for lo, hi in ((0, m), (-m, 0), (-m, m)):
            idx = rng.integers(lo, hi, n)
            got = xp.take(x, xp.asarray(idx))
            np.testing.assert_array_equal(np.asarray(got), np.take(xv, idx))
            got = xp.take(x, xp.asarray(np.repeat(idx, 2))[::2])
            np.testing.assert_array_equal(np.asarray(got), np.take(xv, idx))
    for bad in (n + 3, -(n + 4)):
        for where in (0, n - 1):
            idx = np.zeros(n, dtype=np.int64)
            idx[where] = bad
            with pytest.raises(IndexError, match=f"index {bad} is out of bounds.*{n + 3}"):
                xp.take(a, xp.asarray(idx))


def test_integer_array_indexing_with_many_trailing_dimensions():
    v = np.arange(2 * 3 * 4 * 5 * 2, dtype=np.float64).reshape(2, 3, 4, 5, 2)
    a = xp.asarray(v)
    idx = np.array([1, 0, 1])
    np.testing.assert_array_equal(np.asarray(a[xp.asarray(idx)]), v[idx])
    t = xp.permute_dims(a, (0, 2, 1, 3, 4))  # trailing block not dense: copied for the gather
    np.testing.assert_array_equal(np.asarray(t[xp.asarray(idx)]), v.transpose(0, 2, 1, 3, 4)[idx])
    a[xp.asarray([0])] = 7.0  # dense trailing block: merges into one run
    v[[0]] = 7.0
    np.testing.assert_array_equal(np.asarray(a), v)
    with pytest.raises(IndexError, match="2-D block"):
        t[xp.asarray([0])] = 1.0


def test_zero_dimensional_boolean_index():
    a = xp.asarray([[1.0, 2.0]])
    assert a[xp.asarray(True)].shape == (1, 1, 2)
    assert a[xp.asarray(False)].shape == (0, 1, 2)
    a[xp.asarray(True)] = 5.0
    assert float(xp.sum(a)) == 10.0


def test_data_dependent_functions_refuse_meta():
    m = xp.empty((4, 5), device="meta")
    for f in (lambda: xp.nonzero(m), lambda: m[xp.empty((4,), dtype=xp.bool, device="meta")]):
        with pytest.raises(ValueError, match="depends on the values"):
            f()
    assert xp.sort(m, axis=0).shape == (4, 5) and xp.argsort(m).dtype is xp.int64
    assert xp.take(m, xp.empty((7,), dtype=xp.int64, device="meta"), axis=1).shape == (4, 7)
    assert m[xp.empty((2, 3), dtype=xp.int64, device="meta")].shape == (2, 3, 5)


def test_from_dlpack():
    n = np.arange(6.0).reshape(2, 3)
    a = xp.from_dlpack(n)
    n[0, 0] = 9.0
    assert float(a[0, 0]) == 9.0  # shared memory
    c = xp.from_dlpack(n, copy=True)
    n[0, 0] = 1.0
    assert float(c[0, 0]) == 9.0
    assert xp.from_dlpack(n, device="meta").device == "meta"
    with pytest.raises(TypeError, match="DLPack"):
        xp.from_dlpack([1, 2])


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64", "uint8", "bool"])
@pytest.mark.parametrize("descending", [False, True])
@pytest.mark.parametrize(
    "shape,axis", [((1000,), 0), ((4, 300), 1), ((300, 4), 0), ((37, 50), 1), ((37, 50), 0)]
)
def test_sort_stable_with_ties_nan_and_signed_zeros(dtype, descending, shape, axis):
    """sort/argsort run on NumPy's fast (unstable) sort; ties, NaNs and -0.0/+0.0 must still
    come out as a stable sort orders them (reference: NumPy's stable sort)."""
    rng = np.random.default_rng(5)
    a = rng.integers(-3, 4, shape).astype(dtype)
    if dtype.startswith("float"):
        a[a == 1] = np.nan
        a[a == -2] = -0.0
        a[a == 2] = np.inf
    if descending:  # stable descending: reverse of the stable ascending sort of the reversed row
        o = np.argsort(np.flip(a, axis), axis=axis, kind="stable")
        want = shape[axis] - 1 - np.flip(o, axis)
    else:
        want = np.argsort(a, axis=axis, kind="stable")
    got = np.asarray(xp.argsort(xp.asarray(a), axis=axis, descending=descending))
    np.testing.assert_array_equal(got, want)
    values = np.asarray(xp.sort(xp.asarray(a), axis=axis, descending=descending))
    ref = np.sort(a, axis=axis, kind="stable")
    ref = np.flip(ref, axis) if descending else ref
    np.testing.assert_array_equal(values, ref)
    if dtype.startswith("float"):  # -0.0 before +0.0 where they were in that order
        np.testing.assert_array_equal(np.signbit(values), np.signbit(ref))


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int16", "uint8"])
def test_large_sorts_on_two_threads_like_numpy(dtype):
    """A long row (at least ``_LONG_SORT``) is sorted in two halves at once and merged by two
    threads; many rows are sorted half on each thread.  Checked against NumPy's stable sort:
    NaN last (with their payloads), -0.0/+0.0 in input order, descending, a stepped view, a few
    long rows along either axis, many rows, rows whose values are mostly one value (all NaN, all
    zero, a constant, already sorted and reversed), and the same bits with one thread or two."""
    import numba

    from strided.backends.cpu import _LONG_SORT

    rng = np.random.default_rng(12)
    n = _LONG_SORT + 4097
    a = (rng.standard_normal(n) * 100).astype(dtype)
    if dtype.startswith("float"):
        for v in (np.nan, -np.nan, 0.0, -0.0, np.inf, -np.inf):
            a[rng.integers(0, n, 500)] = v
    even = a[: 2 * (n // 2)]
    cases = [(a, 0), (a[::-1], 0), (even.reshape(2, -1), 1), (even.reshape(-1, 2), 0)]
    cases += [(even.reshape(-1, 64), 1), (np.sort(a), 0), (np.sort(a)[::-1], 0)]
    cases += [(np.full(n, 7, dtype), 0), (np.where(np.arange(n) % 3 == 0, a, a[0]), 0)]
    if dtype.startswith("float"):
        cases += [(np.full(n, np.nan, dtype), 0), (np.zeros(n, dtype), 0)]
    before = numba.get_num_threads()
    try:
        for arr, axis in cases:
            bits = []
            for threads in (1, min(2, numba.config.NUMBA_NUM_THREADS)):
                numba.set_num_threads(threads)
                ref = np.sort(arr, axis=axis, kind="stable")
                got = np.asarray(xp.sort(xp.asarray(arr), axis=axis))
                np.testing.assert_array_equal(got, ref)
                np.testing.assert_array_equal(np.signbit(got), np.signbit(ref))
                down = np.asarray(xp.sort(xp.asarray(arr), axis=axis, descending=True))
                np.testing.assert_array_equal(down, np.flip(ref, axis))
                bits.append(got.tobytes())
            assert bits[0] == bits[1]
        stepped = np.asarray(xp.sort(xp.asarray(a)[::3]))
        np.testing.assert_array_equal(stepped, np.sort(a[::3], kind="stable"))
    finally:
        numba.set_num_threads(before)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "uint8", "bool", "complex64"])
@pytest.mark.parametrize(
    "shape,layout",
    [((37,), "C"), ((6, 7), "C"), ((300, 301), "C"), ((6, 7), "transposed")]
    + [((300, 301), "transposed"), ((37,), "stepped"), ((6, 7), "x transposed, mask C")],
)
def test_mask_fill_with_a_scalar_like_numpy(dtype, shape, layout):
    """x[mask] = scalar with a mask of x's shape: one pass in memory order where the mask is
    laid out like a dense x (C or a transpose; over threads for 300x301), the offsets route for
    other layouts.  NumPy's result in each, other elements (NaN payloads included) untouched."""
    from strided._ops.searching import MASK_FILL

    rng = np.random.default_rng(len(shape) * 7 + len(dtype))
    transposed = layout != "C" and len(shape) == 2
    base = (rng.standard_normal(shape[::-1] if transposed else shape) * 50).astype(dtype)
    if dtype.startswith("float"):
        base.ravel()[::11] = np.nan
    x_np, x = (base.T, xp.asarray(base).T) if transposed else (base, xp.asarray(base))
    if layout == "stepped":
        x_np, x = x_np[::2], x[::2]
    m_np = rng.random(x_np.shape) < 0.4
    if layout == "transposed":  # the mask in x's layout (as x > 0 would be)
        mask = xp.asarray(np.ascontiguousarray(m_np.T)).T
    else:
        mask = xp.asarray(m_np)
    value = {"bool": True, "uint8": 200, "int32": -7, "complex64": 1.5 - 2j}.get(dtype, 2.5)
    want = x_np.copy()
    want[m_np] = value
    calls = []
    kernel = MASK_FILL.kernels["cpu"]
    MASK_FILL.kernels["cpu"] = lambda *a, **k: (calls.append(1), kernel(*a, **k))
    try:
        x[mask] = value
    finally:
        MASK_FILL.kernels["cpu"] = kernel
    bits = {1: np.uint8, 4: np.uint32, 8: np.uint64}[want.dtype.itemsize]
    np.testing.assert_array_equal(np.asarray(x).view(bits), want.view(bits))
    assert bool(calls) == (layout in ("C", "transposed"))


def test_mask_fill_errors_and_gradients_like_torch():
    """The one-pass x[mask] = scalar checks the scalar as every write does, and writing into an
    array recorded on the tape gives zero gradient where the write landed (PyTorch's)."""
    torch = pytest.importorskip("torch")
    x = xp.asarray(np.arange(12, dtype=np.int32).reshape(3, 4))
    mask = x > 5
    with pytest.raises(TypeError, match="__setitem__"):
        x[mask] = 1.5
    with pytest.raises(OverflowError):
        x[mask] = 2**40
    v = np.random.default_rng(2).standard_normal((3, 4))
    a = xp.asarray(v, requires_grad=True)
    b = a * 2.0
    b[b > 0] = 0.0
    xp.sum(b * b + b).backward()
    t = torch.tensor(v, requires_grad=True)
    tb = t * 2.0
    tb[tb > 0] = 0.0
    (tb * tb + tb).sum().backward()
    np.testing.assert_allclose(np.asarray(b), tb.detach().numpy())
    np.testing.assert_allclose(np.asarray(a.grad), t.grad.numpy())


def _radix_input(dtype: str, shape, rng) -> np.ndarray:
    """Values that test every key class of the radix sort: extremes of integer dtypes, few
    distinct values (ties), NaN of both signs with payloads, +-0.0, +-inf, subnormals."""
    if dtype.startswith("float"):
        a = (rng.standard_normal(shape) * 10.0 ** rng.integers(-3, 4, shape)).astype(dtype)
        bits = a.view(f"uint{a.itemsize * 8}")
        info = np.finfo(dtype)
        specials = [np.nan, -np.nan, 0.0, -0.0, np.inf, -np.inf, info.smallest_subnormal,
                    -info.smallest_subnormal, info.max, -info.max, 1.0, -1.0]  # fmt: skip
        for v in specials:
            a[rng.random(shape) < 0.02] = v
        payload = rng.random(shape) < 0.01  # NaNs with other payloads, both signs
        bits[payload] = np.array(-np.nan, dtype).view(bits.dtype) | np.array(3, bits.dtype)
        return a
    info = np.iinfo(dtype)
    a = rng.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)
    a[rng.random(shape) < 0.3] = info.min
    a[rng.random(shape) < 0.3] = info.max
    a[rng.random(shape) < 0.2] = 0
    return a


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64", "uint32", "uint64"])
@pytest.mark.parametrize(
    "shape,axis,view",
    [
        ((5000,), 0, None),  # one row
        ((3, 2100), 1, None),  # a few rows, axis last
        ((2100, 3), 0, None),  # axis first: a scratch buffer, then copied into place
        ((70, 1100), 1, None),  # many rows, two threads
        ((1100, 70), 0, None),
        ((2300,), 0, "stepped"),  # a strided row
        ((40, 2048), 1, "transposed"),  # rows of a transpose
    ],
)
def test_radix_sort_and_argsort_like_numpys_stable_sort(dtype, shape, axis, view):
    """Rows of at least ``_RADIX_MIN`` 4- or 8-byte elements are sorted by the LSD radix kernels
    (keys from the bits, a pass per byte).  Reference: NumPy's stable sort, bit for bit: NaN of
    either sign last with payloads in input order, -0.0/+0.0 in input order, descending as the
    reversed ascending sort (values) or the stable descending argsort."""
    from strided.backends.cpu import _RADIX_MIN

    rng = np.random.default_rng(sum(map(ord, dtype)) + len(shape))
    a = _radix_input(dtype, shape if view != "transposed" else shape[::-1], rng)
    if view == "stepped":
        a = _radix_input(dtype, (shape[0] * 2,), rng)
    s = xp.asarray(a)
    if view == "stepped":
        a, s = a[::2], s[::2]
    elif view == "transposed":
        a, s = a.T, s.T
    assert a.shape[axis] >= _RADIX_MIN
    _assert_sorts_like_numpy(a, s, axis, bits=f"uint{a.itemsize * 8}")


def _small_key_input(dtype: str, shape, rng, fill: str) -> np.ndarray:
    """bool or 1-/2-byte integers: the dtype's whole range with its extremes and zero repeated,
    values of one high byte (a 2-byte key's second pass skipped), one value, or two."""
    if dtype == "bool":
        return rng.random(shape) < (0.5 if fill != "constant" else 0.0)
    info = np.iinfo(dtype)
    if fill == "constant":
        return np.full(shape, info.min, dtype)
    if fill == "two values":
        return np.where(rng.random(shape) < 0.5, info.max, 0).astype(dtype)
    if fill == "one high byte":
        return rng.integers(0, 100, shape).astype(dtype)
    a = rng.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)
    a[rng.random(shape) < 0.2] = info.min
    a[rng.random(shape) < 0.2] = info.max
    a[rng.random(shape) < 0.1] = 0
    return a


def _assert_sorts_like_numpy(a: np.ndarray, s, axis: int, bits: str | None = None) -> None:
    """xp.sort and xp.argsort of ``s`` (holding ``a``) against NumPy's stable sort, both ways:
    descending values are the ascending ones reversed, a descending argsort keeps ties in input
    order; values compared as the unsigned ``bits`` where given (NaN payloads, signed zeros)."""
    ref = np.sort(a, axis=axis, kind="stable")
    for descending in (False, True):
        got = np.asarray(xp.sort(s, axis=axis, descending=descending))
        want = np.flip(ref, axis) if descending else ref
        if bits is not None:
            got, want = got.view(bits), want.view(bits)
        np.testing.assert_array_equal(got, want)
        if descending:
            o = np.argsort(np.flip(a, axis), axis=axis, kind="stable")
            want_order = a.shape[axis] - 1 - np.flip(o, axis)
        else:
            want_order = np.argsort(a, axis=axis, kind="stable")
        order = np.asarray(xp.argsort(s, axis=axis, descending=descending))
        np.testing.assert_array_equal(order, want_order)


@pytest.mark.parametrize("dtype", ["bool", "int8", "uint8", "int16", "uint16"])
@pytest.mark.parametrize(
    "shape,axis,view",
    [
        ((20000,), 0, None),  # one row: counted by both sorts (2-byte sort from 16384)
        ((3, 300), 1, None),  # a few rows, axis last
        ((300, 3), 0, None),  # axis first: a scratch buffer, then copied into place
        ((70, 1100), 1, None),  # many rows, two threads
        ((1100, 70), 0, None),
        ((2300,), 0, "stepped"),  # a strided row
        ((40, 130), 1, "transposed"),  # rows of a transpose
    ],
)
@pytest.mark.parametrize("fill", ["full range", "one high byte", "two values", "constant"])
def test_small_key_sort_and_argsort_like_numpys_stable_sort(dtype, shape, axis, view, fill):
    """Rows of bool and 1- or 2-byte integers are sorted by counting their keys
    (``_kern_index.small_key_sort_rows``, ``small_key_argsort_rows``: one stable pass per key
    byte) from ``_SMALL_KEY_SORT_MIN`` / ``_SMALL_KEY_ARGSORT_MIN`` elements.  Reference:
    NumPy's stable sort and argsort."""
    from strided.backends.cpu import _SMALL_KEY_ARGSORT_MIN

    rng = np.random.default_rng(sum(map(ord, dtype + fill)) + len(shape))
    if view == "stepped":
        a = _small_key_input(dtype, (shape[0] * 2,), rng, fill)
        s = xp.asarray(a)[::2]
        a = a[::2]
    elif view == "transposed":
        a = _small_key_input(dtype, shape[::-1], rng, fill)
        s = xp.asarray(a).T
        a = a.T
    else:
        a = _small_key_input(dtype, shape, rng, fill)
        s = xp.asarray(a)
    assert a.shape[axis] >= _SMALL_KEY_ARGSORT_MIN[a.itemsize]
    _assert_sorts_like_numpy(a, s, axis)


@pytest.mark.parametrize("dtype", ["bool", "int8", "uint16"])
def test_small_key_sorts_at_their_thresholds(dtype):
    """Rows one shorter than each counting threshold (the comparison sorts) and at it (the
    counting kernels) give NumPy's stable order; a 2-byte sort's threshold is its own (the
    histogram has 65536 bins)."""
    from strided.backends.cpu import _SMALL_KEY_ARGSORT_MIN, _SMALL_KEY_SORT_MIN

    rng = np.random.default_rng(5)
    size = np.dtype(dtype).itemsize
    for n in sorted({_SMALL_KEY_ARGSORT_MIN[size], _SMALL_KEY_SORT_MIN[size]}):
        for m in (n - 1, n):
            a = _small_key_input(dtype, (2, m), rng, "full range")
            _assert_sorts_like_numpy(a, xp.asarray(a), 1)


def _sort_in_child(queue, values) -> None:
    queue.put(np.asarray(xp.sort(xp.asarray(values))).tobytes())


def test_large_sort_in_a_forked_child():
    """A child forked after the parent's large sort started the sort's helper thread inherits the
    pool without the thread: the child's own large sort must still run (not wait forever)."""
    import multiprocessing

    from strided.backends.cpu import _LONG_SORT

    values = np.random.default_rng(3).standard_normal(_LONG_SORT * 2).astype(np.float32)
    expected = np.sort(values).tobytes()
    assert np.asarray(xp.sort(xp.asarray(values))).tobytes() == expected  # the pool exists now
    ctx = multiprocessing.get_context("fork")
    queue = ctx.Queue()
    child = ctx.Process(target=_sort_in_child, args=(queue, values))
    child.start()
    try:
        got = queue.get(timeout=60)
    finally:
        child.join(timeout=10)
        if child.is_alive():
            child.kill()
    assert got == expected


@pytest.mark.parametrize(
    "shape,mask_ndim", [((6, 7), 2), ((4, 5, 3), 2), ((4, 5, 3), 3), ((5, 2, 3), 1)]
)
@pytest.mark.parametrize("fill", ["random", "none", "all"])
def test_boolean_mask_selects_like_numpy_over_layouts(shape, mask_ndim, fill):
    """x[mask] (one pass from the mask to element offsets) for C-ordered, transposed and flipped
    arrays and masks, with no, some and all elements selected."""
    rng = np.random.default_rng(7)
    a = rng.standard_normal(shape)
    c = {
        "random": rng.random(shape[:mask_ndim]) > 0.5,
        "none": np.zeros(shape[:mask_ndim], bool),
        "all": np.ones(shape[:mask_ndim], bool),
    }[fill]

    def layouts(v: np.ndarray):
        rev = tuple(range(v.ndim))[::-1]
        yield xp.asarray(v), v
        yield xp.permute_dims(xp.asarray(np.ascontiguousarray(v.transpose(rev))), rev), v
        yield xp.flip(xp.asarray(v[::-1]), axis=0), v

    for x, _ in layouts(a):
        for m, _ in layouts(c):
            got = x[m]
            np.testing.assert_array_equal(np.asarray(got), a[c])
            assert got.shape == a[c].shape


def test_repeated_small_takes_reuse_their_plan_for_new_offsets_and_still_check_indices():
    """A small take memoizes its layout and compiled entry: later calls with views at other
    offsets, other index values and another layout give NumPy's results, and an out-of-range
    index on a memoized call is still named."""
    rng = np.random.default_rng(23)
    base = rng.standard_normal(80).astype(np.float32)
    for k in range(4):
        v = base[k : k + 60].reshape(6, 10)
        idx = rng.integers(-10, 10, 7)
        for axis in (1, 0):
            i = idx % 6 - 6 * (idx < 0) if axis == 0 else idx
            got = xp.take(
                xp.reshape(xp.asarray(base)[k : k + 60], (6, 10)), xp.asarray(i), axis=axis
            )
            np.testing.assert_array_equal(np.asarray(got), np.take(v, i, axis=axis))
        got = xp.take(xp.asarray(v).mT, xp.asarray(idx), axis=0)
        np.testing.assert_array_equal(np.asarray(got), np.take(v.T, idx, axis=0))
    with pytest.raises(IndexError, match="take: index 10 is out of bounds for an axis of size 10"):
        xp.take(xp.asarray(v), xp.asarray(np.array([1, 2, 10, 3, 4, 5, 6])), axis=1)


def test_one_index_array_lane_of_getitem():
    """x[i] with one 1-D int64/int32 array takes rows directly (untracked x): NumPy's values for
    negative indices and a transposed x, the error named __getitem__, and a tracked x still
    records (its gradient counts repeated rows, as NumPy's add.at)."""
    rng = np.random.default_rng(29)
    v = rng.standard_normal((6, 5))
    for layout in ("C", "T"):
        a_np = v if layout == "C" else v.T.copy().T
        a = xp.asarray(v) if layout == "C" else xp.asarray(v.T.copy()).mT
        for d in (np.int64, np.int32):
            i = rng.integers(-6, 6, 9).astype(d)
            np.testing.assert_array_equal(np.asarray(a[xp.asarray(i)]), a_np[i])
    with pytest.raises(IndexError, match="^__getitem__: index 6 is out of bounds"):
        xp.asarray(v)[xp.asarray(np.array([0, 6]))]
    x = xp.asarray(v, requires_grad=True)
    i = np.array([1, 1, -1, 3])
    xp.sum(x[xp.asarray(i)]).backward()
    want = np.zeros_like(v)
    np.add.at(want, i, 1.0)
    np.testing.assert_array_equal(np.asarray(x.grad), want)


def test_mask_of_the_whole_shape_selects_in_one_pass():
    """x[mask] with a mask of x's shape runs mask_select (the values in one pass): NumPy's result
    for no, some and all elements selected, in stepped and transposed layouts of both, across
    dtypes; its VJP scatters the gradient back to the selected places."""
    from strided._ops.searching import MASK_SELECT

    rng = np.random.default_rng(31)
    for d in (np.float32, np.int16, np.complex128, np.bool_):
        v = (rng.standard_normal((7, 9)) * 5).astype(d)
        for p in (0.0, 0.4, 1.0):
            c = rng.random((7, 9)) < p
            for x_np, x in ((v, xp.asarray(v)), (v[:, ::2], xp.asarray(v)[:, ::2])):
                for m_np, m in ((c[:, : x_np.shape[1]], xp.asarray(c)[:, : x_np.shape[1]]),):
                    np.testing.assert_array_equal(np.asarray(x[m]), x_np[m_np])
                    np.testing.assert_array_equal(np.asarray(x.mT[m.mT]), x_np.T[m_np.T])
    x = xp.asarray(rng.standard_normal((4, 5)), requires_grad=True)
    c = rng.random((4, 5)) < 0.5
    w = rng.standard_normal(int(c.sum()))
    xp.sum(MASK_SELECT(x, xp.asarray(c)) * xp.asarray(w)).backward()
    want = np.zeros((4, 5))
    want[c] = w
    np.testing.assert_array_equal(np.asarray(x.grad), want)


def test_long_take_over_threads_matches_numpy_and_reports_the_first_bad_index():
    """take of single elements with more than 65,536 indices runs in chunks over threads: the
    values (negative indices included) as NumPy's, and the first out-of-range index named, for
    one thread or two."""
    import numba

    rng = np.random.default_rng(17)
    n = 200_003
    a = rng.standard_normal(n)
    idx = rng.integers(-n, n, n + 5)
    bad = idx.copy()
    bad[150_000], bad[190_000] = 3 * n, -3 * n
    before = numba.get_num_threads()
    try:
        for threads in (1, min(2, numba.config.NUMBA_NUM_THREADS)):
            numba.set_num_threads(threads)
            got = xp.take(xp.asarray(a), xp.asarray(idx))
            np.testing.assert_array_equal(np.asarray(got), np.take(a, idx))
            with pytest.raises(IndexError, match=f"index {3 * n} is out of bounds"):
                xp.take(xp.asarray(a), xp.asarray(bad))
            # a stepped source and stepped indices (the loops with strides)
            m = (n + 1) // 2
            sub_idx = np.clip(idx, -m, m - 1)
            got = xp.take(xp.asarray(a)[::2], xp.asarray(sub_idx)[::2])
            np.testing.assert_array_equal(np.asarray(got), np.take(a[::2], sub_idx[::2]))
            with pytest.raises(IndexError, match=f"index {-3 * n} is out of bounds"):
                xp.take(xp.asarray(a)[::2], xp.asarray(np.where(bad < -n, bad, 0))[::2])
    finally:
        numba.set_num_threads(before)


@pytest.mark.parametrize("rows,cols,n_idx", [(300, 40, 25), (5000, 10, 10), (3, 500, 30000)])
@pytest.mark.parametrize("layout", ["contig", "transposed", "stepped"])
def test_take_of_columns_matches_numpy(rows, cols, n_idx, layout):
    """take along the last axis of a matrix (single elements of many rows: each index's offset
    worked out once, each row gathered; over threads by chunks of rows, or of the indices when
    the rows are fewer than the threads): NumPy's values for C-order, transposed and stepped
    operands, negative indices included, the first out-of-range index named, for one thread or
    two."""
    import numba

    rng = np.random.default_rng(rows + cols)
    if layout == "contig":
        a = rng.standard_normal((rows, cols))
        s = xp.asarray(a)
    elif layout == "transposed":
        a = rng.standard_normal((cols, rows)).T
        s = xp.asarray(a.T).T
    else:
        a = rng.standard_normal((rows, 2 * cols))[:, ::2]
        s = xp.asarray(a.base if a.base is not None else a)[:, ::2]
    idx = rng.integers(-cols, cols, n_idx)
    bad = idx.copy()
    bad[n_idx // 2], bad[-1] = cols + 3, -cols - 9
    before = numba.get_num_threads()
    try:
        for threads in (1, min(2, numba.config.NUMBA_NUM_THREADS)):
            numba.set_num_threads(threads)
            got = xp.take(s, xp.asarray(idx), axis=1)
            np.testing.assert_array_equal(np.asarray(got), np.take(a, idx, axis=1))
            with pytest.raises(IndexError, match=f"index {cols + 3} is out of bounds"):
                xp.take(s, xp.asarray(bad), axis=1)
    finally:
        numba.set_num_threads(before)
    # fewer rows than parts (a machine with more threads than rows): chunks of the indices
    from strided.backends.cpu import _kern_index as ix

    c = np.ascontiguousarray(a[:3])
    for parts in (4, 7):
        o = np.empty(3 * n_idx)
        flat = c.reshape(-1)
        assert ix.take3_p(o, flat, 0, cols, 1, 1, idx, 0, 1, 3, n_idx, 1, cols, parts) == -1
        np.testing.assert_array_equal(o.reshape(3, n_idx), np.take(c, idx, axis=1))
        assert ix.take3_p(o, flat, 0, cols, 1, 1, bad, 0, 1, 3, n_idx, 1, cols, parts) == n_idx // 2


@pytest.mark.parametrize("layout", ["contig", "transposed", "3-d"])
def test_large_take_of_rows_over_threads_matches_numpy(layout):
    """take of rows with more than 65,536 elements runs in chunks over threads (strided rows in
    column tiles): NumPy's values for C-order, transposed and leading-axis layouts, negative
    indices included, the first out-of-range index named, for one thread or two."""
    import numba

    rng = np.random.default_rng(23)
    base = rng.standard_normal((300, 301)).astype(np.float32)
    if layout == "contig":
        a, s, axis = base, xp.asarray(base), 0
    elif layout == "transposed":
        a, s, axis = base.T, xp.asarray(base).T, 0
    else:
        c = rng.standard_normal((3, 200, 150))
        a, s, axis = c.transpose(0, 2, 1), xp.permute_dims(xp.asarray(c), (0, 2, 1)), 1
    # the strided operand has NumPy's layout (strides in elements), so the row kernel sees it
    assert s.strides == tuple(st // a.itemsize for st in a.strides)
    n_ax = a.shape[axis]
    idx = rng.integers(-n_ax, n_ax, 400)
    bad = idx.copy()
    bad[333] = n_ax + 7
    before = numba.get_num_threads()
    try:
        for threads in (1, min(2, numba.config.NUMBA_NUM_THREADS)):
            numba.set_num_threads(threads)
            got = xp.take(s, xp.asarray(idx), axis=axis)
            np.testing.assert_array_equal(np.asarray(got), np.take(a, idx, axis=axis))
            with pytest.raises(IndexError, match=f"index {n_ax + 7} is out of bounds"):
                xp.take(s, xp.asarray(bad), axis=axis)
    finally:
        numba.set_num_threads(before)


@pytest.mark.parametrize("dtype", [np.float64, np.uint8])
@pytest.mark.parametrize("name", ["argmax", "argmin"])
def test_large_argmax_of_other_axis_orders_read_in_place(dtype, name):
    """argmax/argmin over every axis of a large array dense in another axis order (a transpose,
    a permutation) take the winner from memory order, then the smallest C-order index holding
    it: NumPy's answer with many ties (small integers), NaNs first in memory but not in C
    order, and a unique winner."""
    rng = np.random.default_rng(31)
    base = (rng.integers(0, 7, (300, 400)) if dtype in (np.int32, np.uint8) else
            rng.standard_normal((300, 400))).astype(dtype)  # fmt: skip
    cases = [(base, (1, 0))]
    if np.issubdtype(dtype, np.floating):
        nan = base.copy()
        nan[0, 399] = np.nan  # memory position 399, C-order position 399 * 300
        nan[250, 2] = np.nan  # C order: 2 * 300 + 250, the first NaN there
        cases.append((nan, (1, 0)))
    cases.append((rng.integers(0, 5, (40, 50, 60)).astype(dtype), (2, 0, 1)))
    for a, axes in cases:
        s = xp.permute_dims(xp.asarray(a), axes)
        got = int(getattr(xp, name)(s))
        assert got == getattr(np, name)(a.transpose(axes)), (a.shape, axes)
    # a size-1 axis (its stride 0 here) takes no part in the memory-order decomposition
    s = xp.expand_dims(xp.asarray(base).T, axis=1)
    assert s.strides[1] == 0 or s.shape[1] == 1
    assert int(getattr(xp, name)(s)) == getattr(np, name)(np.expand_dims(base.T, 1))


# one float and one integer type: the kernels are the same code for every dtype (compile time)
@pytest.mark.parametrize("dtype", [np.float32, np.int8])
@pytest.mark.parametrize("shape", [(64, 64), (300, 2500), (1, 7), (7, 1)])
def test_argmax_along_a_strided_axis_with_a_unit_stride_kept_axis(dtype, shape):
    """A transposed matrix reduced along its (strided) rows reads whole rows of memory and keeps
    the best value per column with selects: NumPy's answer with ties (the first wins), NaNs (the
    first NaN wins, also after a larger value), keepdims, small and large (threaded) sizes."""
    rng = np.random.default_rng(41)
    floating = np.issubdtype(dtype, np.floating)
    base = (rng.standard_normal(shape) if floating else rng.integers(-3, 4, shape)).astype(dtype)
    if floating and base.size > 10:
        flat = base.reshape(-1)
        flat[rng.integers(0, flat.size, max(3, flat.size // 500))] = np.nan
    a = base.T  # (n, m) with unit stride along axis 0
    s = xp.asarray(base).T
    for name in ("argmax", "argmin"):
        for keepdims in (False, True):
            got = getattr(xp, name)(s, axis=-1, keepdims=keepdims)
            want = getattr(np, name)(a, axis=-1, keepdims=keepdims)
            np.testing.assert_array_equal(np.asarray(got), want)


@pytest.mark.parametrize("dtype", [np.float64, np.int8])
@pytest.mark.parametrize("shape", [(5, 3), (1001, 7), (100003, 3), (40000, 31), (2, 2)])
def test_argmax_along_axis_0_of_few_columns(dtype, shape):
    """A C-order matrix of few columns reduced along axis 0 is read as one long run in chunks of
    rows (``_kern_index.argreduce_narrow_cols``; over threads in tasks combined in order): the
    first best row per column as NumPy's, with ties, NaNs (the first NaN wins, also when a later
    chunk position holds an earlier one), rows after the last whole chunk, and the same
    answer on one thread or two."""
    import numba

    rng = np.random.default_rng(shape[0] + shape[1])
    floating = np.issubdtype(dtype, np.floating)
    a = (rng.standard_normal(shape) if floating else rng.integers(-3, 4, shape)).astype(dtype)
    if floating:
        flat = a.reshape(-1)
        flat[rng.integers(0, flat.size, max(2, flat.size // 700))] = np.nan
        a[:, :2] = np.where(np.isnan(a[:, :2]), 0.5, a[:, :2])
        a[-1, 0] = np.nan  # a column whose only NaN is in the last row
        a[-2:, 1] = np.nan  # and one whose first NaN is followed by another
    s = xp.asarray(a)
    before = numba.get_num_threads()
    try:
        for threads in (1, min(2, numba.config.NUMBA_NUM_THREADS)):
            numba.set_num_threads(threads)
            for name in ("argmax", "argmin"):
                got = getattr(xp, name)(s, axis=0)
                np.testing.assert_array_equal(np.asarray(got), getattr(np, name)(a, axis=0))
    finally:
        numba.set_num_threads(before)


@pytest.mark.parametrize("n", [63, 64, 1023, 1024, 3000])
@pytest.mark.parametrize(
    "fill", ["nan both signs", "signed zeros", "constant", "sorted", "reversed", "two values"]
)
def test_sort_of_degenerate_rows_at_the_radix_threshold(n, fill):
    """Rows around ``_RADIX_ARGSORT_MIN`` and ``_RADIX_MIN`` (NumPy's argsort and sort below,
    the radix kernels from them) whose keys
    collapse (every pass skipped: all NaN, all zeros of either sign, one value) or come
    ordered: NumPy's stable sort and argsort, bit for bit, both directions."""
    rng = np.random.default_rng(n)
    if fill == "nan both signs":
        a = np.where(rng.random(n) < 0.5, np.nan, -np.nan).astype(np.float32)
    elif fill == "signed zeros":
        a = np.where(rng.random(n) < 0.5, 0.0, -0.0)
    elif fill == "constant":
        a = np.full(n, -3.5, np.float32)
    elif fill == "two values":
        a = np.where(rng.random(n) < 0.5, 7, -7).astype(np.int64)
    else:
        a = np.sort(rng.standard_normal(n))
        a = a[::-1].copy() if fill == "reversed" else a
    bits = f"uint{a.itemsize * 8}"
    ref = np.sort(a, kind="stable")
    for descending in (False, True):
        got = np.asarray(xp.sort(xp.asarray(a), descending=descending))
        np.testing.assert_array_equal(got.view(bits), (ref[::-1] if descending else ref).view(bits))
        if descending:
            want = n - 1 - np.argsort(a[::-1], kind="stable")[::-1]
        else:
            want = np.argsort(a, kind="stable")
        np.testing.assert_array_equal(
            np.asarray(xp.argsort(xp.asarray(a), descending=descending)), want
        )


@pytest.mark.parametrize("dtype", ["float32", "float64", "int16"])
@pytest.mark.parametrize("shape", [(3, 4, 300), (2, 3, 4, 5), (70, 1000)])
def test_argmax_plans_per_layout_serve_every_offset_and_axis(dtype, shape):
    """argmax/argmin along an axis plan once per (shape, strides, axis): views of one layout at
    different offsets reuse the plan and must read their own elements; ties (few values), NaNs
    in later 256-element blocks of a row, blocks of rank 2 walked over a 4-D layout, and a
    layout large enough for the threaded loops all agree with NumPy."""
    rng = np.random.default_rng(7)
    big = (2,) + shape[:-1] + (shape[-1] + 3,)
    v = rng.integers(-3, 4, big).astype(dtype)
    if dtype.startswith("float"):
        flat = v.reshape(-1)
        flat[rng.choice(flat.size, max(flat.size // 97, 1), replace=False)] = np.nan
    a = xp.asarray(v)
    for i in (0, 1):
        for start in (0, 3):
            tail = (slice(start, start + shape[-1]),)
            w = v[(i,) + (slice(None),) * (len(shape) - 1) + tail]
            s = a[(i,) + (slice(None),) * (len(shape) - 1) + tail]
            for axis in range(-len(shape), len(shape)):
                for fn, ref in ((xp.argmax, np.argmax), (xp.argmin, np.argmin)):
                    got = np.asarray(fn(s, axis=axis))
                    np.testing.assert_array_equal(got, ref(w, axis=axis), err_msg=f"{axis}")


@pytest.mark.parametrize("n", [7, 4096])
def test_integer_array_writes_like_numpy_bounds_negatives_and_aliasing(n):
    """x[idx] = v through the one-pass index normalisation and the single-element scatter:
    negative indices count from the end, the first out-of-bounds index is named (either
    sign), a value that is a view of x itself is read before any write lands, and values of
    another dtype or shape are converted and broadcast."""
    rng = np.random.default_rng(n)
    ref = np.arange(n, dtype=np.float64)
    x = xp.asarray(ref.copy())
    idx = rng.permutation(n)[: n // 2]
    idx[::3] -= n  # negative spellings of some positions
    vals = rng.standard_normal(idx.size)
    x[xp.asarray(idx)] = xp.asarray(vals)
    ref[idx] = vals
    np.testing.assert_array_equal(np.asarray(x), ref)
    # the value is x's own memory (contiguous, x's dtype and the selection's shape)
    shift = np.arange(1, n // 2 + 1)
    x[xp.asarray(shift)] = x[0 : n // 2]
    ref[shift] = ref[0 : n // 2].copy()
    np.testing.assert_array_equal(np.asarray(x), ref)
    x[xp.asarray(idx.astype(np.int32))] = 2  # a scalar, int32 indices
    ref[idx] = 2
    np.testing.assert_array_equal(np.asarray(x), ref)
    x2 = xp.asarray(np.zeros((n, 3)))
    x2[xp.asarray(idx)] = xp.asarray(np.arange(3.0))  # a row broadcast to every selected row
    r2 = np.zeros((n, 3))
    r2[idx] = np.arange(3.0)
    np.testing.assert_array_equal(np.asarray(x2), r2)
    for bad in (n, -n - 1):
        k = idx.copy()
        k[-1] = bad
        with pytest.raises(
            IndexError, match=f"index {bad} is out of bounds for axis 0 with size {n}"
        ):
            x[xp.asarray(k)] = 1.0


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int16])
@pytest.mark.parametrize("k", [1, 2, 50, 64, 65, 129, 4096])  # counted (<= 64) or searched
@pytest.mark.parametrize("q", [10, 600, 3000, 70_000])  # serial, split in runs, blocks
def test_searchsorted_counted_and_searched_like_numpy(dtype, k, q):
    """Insertion points into short sorted arrays (counted per block of queries) and long ones
    (searched by groups of 64 queries in lockstep: serial, the queries split in runs over
    threads, or in blocks), either side, NaNs in both (NaN sorts last), repeated values."""
    rng = np.random.default_rng(k + q)
    a = np.sort((rng.integers(0, 60, k)).astype(dtype))
    v = rng.integers(-5, 65, q).astype(dtype)
    if np.dtype(dtype).kind == "f":
        a[-max(1, k // 10) :] = np.nan
        v[::7] = np.nan
    for side in ("left", "right"):
        got = xp.searchsorted(xp.asarray(a), xp.asarray(v), side=side)
        np.testing.assert_array_equal(np.asarray(got), np.searchsorted(a, v, side=side))


@pytest.mark.parametrize("n", [1, 63, 64, 65, 1000, 4097])
def test_mask_selection_of_every_density_like_numpy(n):
    """x[mask] and nonzero(mask) for a mask of x's shape: blocks of 64 with no True element
    skipped, the rest compacted; masks empty, sparse, half and full, on contiguous x and mask
    (1-D, 2-D, views at an offset), on strided ones, and x of bool and complex dtype."""
    rng = np.random.default_rng(n)
    v = rng.standard_normal(n + 5)
    for density in (0.0, 0.01, 0.5, 1.0):
        m = rng.random(n + 5) < density
        m[rng.integers(0, n + 5)] = density > 0  # (one True at a random place, when any)
        x, mask = xp.asarray(v), xp.asarray(m)
        for view in (lambda a: a, lambda a: a[3:], lambda a: a[::2],
                     lambda a: xp.reshape(a[: n // 5 * 5], (-1, 5)) if isinstance(a, xp.Array)
                     else a[: n // 5 * 5].reshape(-1, 5)):  # fmt: skip
            got = view(x)[view(mask)]
            np.testing.assert_array_equal(np.asarray(got), view(v)[view(m)])
            for g, w in zip(xp.nonzero(view(mask)), np.nonzero(view(m)), strict=True):
                np.testing.assert_array_equal(np.asarray(g), w)
        for dtype in (np.bool_, np.complex64):
            xv = (v > 0).astype(dtype) if dtype is np.bool_ else (v + 1j * v).astype(dtype)
            np.testing.assert_array_equal(np.asarray(xp.asarray(xv)[xp.asarray(m)]), xv[m])


def test_searchsorted_of_strided_and_multidimensional_operands():
    """x1 a strided view, x2 a transposed 2-D array or a 0-d one: the insertion points of x2's
    elements in x2's shape, as NumPy gives them."""
    rng = np.random.default_rng(5)
    a = np.sort(rng.standard_normal(3000))
    v = rng.standard_normal((40, 30)).T
    got = xp.searchsorted(xp.asarray(a)[::3], xp.permute_dims(xp.asarray(v.T), (1, 0)))
    np.testing.assert_array_equal(np.asarray(got), np.searchsorted(a[::3], v))
    got = xp.searchsorted(xp.asarray(a)[::-1][::-1], xp.asarray(v)[:, 0:1], side="right")
    np.testing.assert_array_equal(np.asarray(got), np.searchsorted(a, v[:, 0:1], side="right"))
    assert int(xp.searchsorted(xp.asarray(a), xp.asarray(v[0, 0]))) == np.searchsorted(a, v[0, 0])


def test_take_along_axis_planned_per_layout_like_numpy():
    """take_along_axis along the last axis plans its rows once per layout: views of one layout at
    other offsets, negative indices, an index row broadcast against x's rows, an out-of-bounds
    index after the plan exists (named, as before), and another axis (the general path) all
    agree with NumPy."""
    rng = np.random.default_rng(4)
    v = rng.standard_normal((12, 40))
    a = xp.asarray(v)
    idx = rng.integers(-30, 30, (5, 30))
    k = xp.asarray(idx)
    for _ in range(2):
        for r in (0, 3, 7):
            got = xp.take_along_axis(a[r : r + 5, 5:35], k, axis=1)
            np.testing.assert_array_equal(
                np.asarray(got), np.take_along_axis(v[r : r + 5, 5:35], idx, axis=1)
            )
            got = xp.take_along_axis(a[r : r + 5, 5:35], k[:1], axis=-1)  # one row for all
            want = np.take_along_axis(v[r : r + 5, 5:35], idx[:1], axis=-1)
            np.testing.assert_array_equal(np.asarray(got), want)
        got = xp.take_along_axis(a[:5, :30].mT, k.mT, axis=0)
        np.testing.assert_array_equal(
            np.asarray(got), np.take_along_axis(v[:5, :30].T, idx.T, axis=0)
        )
    bad = idx.copy()
    bad[2, 3] = 30
    with pytest.raises(IndexError, match="take_along_axis: an index in row 2 is out of bounds"):
        xp.take_along_axis(a[0:5, 5:35], xp.asarray(bad), axis=1)
