"""unique_*, isin, tensordot and vecdot (compositions) vs NumPy."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import strided as xp
from strided import _dtypes as sdt

from .strategies import LAYOUTS, in_layout, seeds, values

shapes = st.lists(st.integers(0, 4), min_size=1, max_size=3).map(tuple)


@settings(max_examples=40)
@given(data=st.data(), rng=seeds())
def test_unique_functions(data, rng):
    d = data.draw(st.sampled_from([sdt.int8, sdt.uint32, sdt.float64, sdt.bool, sdt.complex64]))
    v = values(rng, data.draw(shapes), d, (-2.0, 2.0), (-3, 3))
    if d in (sdt.float64, sdt.complex64):
        v = np.round(v)
        if v.size and data.draw(st.booleans()):
            v.flat[0] = np.nan
    v, a = in_layout(v, data.draw(st.sampled_from(LAYOUTS)))
    res = xp.unique_all(a)
    want_vals, want_idx, want_inv, want_counts = np.unique(
        v, return_index=True, return_inverse=True, return_counts=True, equal_nan=False
    )
    np.testing.assert_array_equal(np.asarray(res.values), want_vals)
    np.testing.assert_array_equal(np.asarray(res.counts), want_counts)
    np.testing.assert_array_equal(np.asarray(res.inverse_indices), want_inv.reshape(v.shape))
    # first occurrences: the values at those indices are the unique values
    np.testing.assert_array_equal(v.reshape(-1)[np.asarray(res.indices)], want_vals)
    np.testing.assert_array_equal(np.asarray(xp.unique_values(a)), want_vals)
    vals, counts = xp.unique_counts(a)
    np.testing.assert_array_equal(np.asarray(counts), want_counts)
    vals, inv = xp.unique_inverse(a)
    assert inv.shape == v.shape and inv.dtype is xp.int64
    np.testing.assert_array_equal(np.asarray(vals), want_vals)
    np.testing.assert_array_equal(np.asarray(inv), want_inv.reshape(v.shape))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64])
def test_unique_of_long_arrays_agree_across_functions_and_with_numpy(dtype):
    """unique_values and unique_counts sort the values directly, unique_all and unique_inverse
    through argsort (rows this long take the radix kernels): the same values bit for bit (the
    first of equal -0.0/+0.0 in input order), every NaN its own value, NumPy's values and
    counts."""
    rng = np.random.default_rng(7)
    v = rng.integers(-40, 40, 5000).astype(dtype)
    if np.dtype(dtype).kind == "f":
        v[rng.random(5000) < 0.05] = np.nan
        v[rng.random(5000) < 0.05] = -0.0
    a = xp.asarray(v)
    full = xp.unique_all(a)
    vals, counts = xp.unique_counts(a)
    only = xp.unique_values(a)
    bits = f"uint{np.dtype(dtype).itemsize * 8}"
    for got in (vals, only):
        np.testing.assert_array_equal(
            np.asarray(got).view(bits), np.asarray(full.values).view(bits)
        )
    np.testing.assert_array_equal(np.asarray(counts), np.asarray(full.counts))
    want_vals, want_counts = np.unique(v, return_counts=True, equal_nan=False)
    np.testing.assert_array_equal(np.asarray(only), want_vals)
    np.testing.assert_array_equal(np.asarray(counts), want_counts)
    np.testing.assert_array_equal(v[np.asarray(full.indices)], want_vals)


def test_unique_all_runs_in_one_pass_untracked_and_composes_when_tracked():
    """unique_all and unique_inverse of an untracked array run the unique_runs kernel once
    after the argsort (unique_counts and unique_values after a sort): NumPy's values, first
    indices, counts and inverse over dtypes, 2-D and strided inputs, NaNs each their own
    value; a tracked input takes the composition (whose values carry a gradient), with the
    same answer."""
    from strided._ops.sets import UNIQUE_RUNS

    rng = np.random.default_rng(21)
    calls = []
    kernel = UNIQUE_RUNS.kernels["cpu"]
    UNIQUE_RUNS.kernels["cpu"] = lambda *a, **k: (calls.append(1), kernel(*a, **k))
    try:
        for dtype in (np.float64, np.float32, np.int16, np.uint8, np.bool_, np.complex64):
            v = rng.integers(0, 9, (12, 10)).astype(dtype)
            for x_n in (v, v[::2, 1::3], v.T):
                got = xp.unique_all(xp.asarray(x_n))
                vals, idx, inv, counts = np.unique(
                    x_n, return_index=True, return_inverse=True, return_counts=True
                )
                np.testing.assert_array_equal(np.asarray(got.values), vals)
                np.testing.assert_array_equal(np.asarray(got.indices), idx)
                np.testing.assert_array_equal(
                    np.asarray(got.inverse_indices), inv.reshape(x_n.shape)
                )
                np.testing.assert_array_equal(np.asarray(got.counts), counts)
        w = rng.integers(0, 5, 40).astype(np.float64)
        w[[3, 17, 30]] = np.nan
        vals, inv = xp.unique_inverse(xp.asarray(w))
        got_vals = np.asarray(vals)
        assert np.isnan(got_vals).sum() == 3  # every NaN its own value
        np.testing.assert_array_equal(got_vals[np.asarray(inv)], w)  # each element's own value
        assert len(calls) == 6 * 3 + 1
        xp.unique_inverse(xp.asarray(w[~np.isnan(w)]))  # (without NaNs too)
        assert len(calls) == 6 * 3 + 2
        # unique_counts and unique_values: the runs of the sorted values, no argsort
        v = rng.integers(0, 6, (9, 7)).astype(np.float32)
        v[2, 3] = v[5, 1] = np.nan
        for x_n in (v, v.T[::2]):
            vals, counts = xp.unique_counts(xp.asarray(x_n))
            want_vals, want_counts = np.unique(x_n, return_counts=True, equal_nan=False)
            np.testing.assert_array_equal(np.asarray(vals), want_vals)
            np.testing.assert_array_equal(np.asarray(counts), want_counts)
            np.testing.assert_array_equal(np.asarray(xp.unique_values(xp.asarray(x_n))), want_vals)
        assert len(calls) == 6 * 3 + 6
        x = xp.asarray(w, requires_grad=True)
        res = xp.unique_all(x)
        assert len(calls) == 6 * 3 + 6
        xp.sum(res.values[:-3] * 2.0).backward()
        np.testing.assert_array_equal(
            np.asarray(res.counts), np.asarray(xp.unique_all(xp.asarray(w)).counts)
        )
        assert float(xp.sum(x.grad)) == 2.0 * 5
    finally:
        UNIQUE_RUNS.kernels["cpu"] = kernel


@pytest.mark.parametrize("name", ["unique_values", "unique_counts", "unique_inverse", "unique_all"])
@pytest.mark.parametrize("dtype", ["float32", "int16"])
def test_set_functions_refuse_meta(name, dtype):
    with pytest.raises(ValueError, match=f"{name}: .*depends on the values"):
        getattr(xp, name)(xp.empty(3, dtype=getattr(xp, dtype), device="meta"))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.uint8])
def test_unique_inverse_with_and_without_nans_like_numpy(dtype):
    """Without NaNs the inverse is each element's place among the sorted unique values
    (searchsorted); with NaNs (each its own value) the argsort route: both NumPy's answer,
    over a 2-D input, signed zeros and repeated values."""
    rng = np.random.default_rng(3)
    v = rng.integers(0, 40, (30, 50)).astype(dtype)
    if dtype in (np.float32, np.float64):
        v[0, :5] = -0.0
        v[1, :5] = 0.0
    cases = [v]
    if dtype in (np.float32, np.float64):
        w = v.copy()
        w[2, 3] = w[7, 1] = np.nan
        cases.append(w)
    for c in cases:
        vals, inv = xp.unique_inverse(xp.asarray(c))
        want_vals, want_inv = np.unique(c, return_inverse=True, equal_nan=False)
        np.testing.assert_array_equal(np.asarray(vals), want_vals)
        np.testing.assert_array_equal(np.asarray(inv), want_inv.reshape(c.shape))


@settings(max_examples=40)
@given(data=st.data(), rng=seeds())
def test_isin(data, rng):
    d = data.draw(st.sampled_from([sdt.int16, sdt.int64, sdt.float32]))
    v1 = values(rng, data.draw(shapes), d, (-3, 3), (-5, 5))
    v2 = values(rng, data.draw(shapes), d, (-3, 3), (-5, 5))
    if d is sdt.float32:
        v1, v2 = np.round(v1), np.round(v2)
    invert = data.draw(st.booleans())
    got = xp.isin(xp.asarray(v1), xp.asarray(v2), invert=invert)
    assert got.dtype is xp.bool
    np.testing.assert_array_equal(np.asarray(got), np.isin(v1, v2, invert=invert))
    assert bool(xp.isin(2, xp.asarray([1, 2]))) and not bool(xp.isin(xp.asarray(3), 2))


@settings(max_examples=40)
@given(data=st.data(), rng=seeds())
def test_tensordot(data, rng):
    d = data.draw(st.sampled_from([sdt.int32, sdt.float64, sdt.complex64]))
    k = data.draw(st.integers(0, 2))
    contracted = tuple(data.draw(st.integers(1, 3)) for _ in range(k))
    free_a = tuple(data.draw(st.lists(st.integers(1, 3), max_size=2)))
    free_b = tuple(data.draw(st.lists(st.integers(1, 3), max_size=2)))
    va = values(rng, free_a + contracted, d, int_domain=(-3, 3))
    vb = values(rng, contracted + free_b, d, int_domain=(-3, 3))
    _, a = in_layout(va, data.draw(st.sampled_from(LAYOUTS[:4])))
    _, b = in_layout(vb, data.draw(st.sampled_from(LAYOUTS[:4])))
    got = xp.tensordot(a, b, axes=k)
    np.testing.assert_allclose(np.asarray(got), np.tensordot(va, vb, axes=k), rtol=1e-5)
    if k:
        axes = (list(range(len(free_a), va.ndim)), list(range(k)))
        got = xp.tensordot(a, b, axes=axes)
        np.testing.assert_allclose(np.asarray(got), np.tensordot(va, vb, axes=axes), rtol=1e-5)


@pytest.mark.parametrize("d", [sdt.int16, sdt.float32, sdt.complex128], ids=lambda d: d.name)
def test_vecdot(d):
    rng = np.random.default_rng(0)
    va, vb = values(rng, (2, 3, 4), d), values(rng, (3, 4), d)
    for axis in (-1, -2):
        got = xp.vecdot(xp.asarray(va), xp.asarray(vb), axis=axis)
        assert got.dtype is d
        want = np.sum(np.conj(va) * vb, axis=axis)
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5)
    with pytest.raises(ValueError, match="vecdot"):
        xp.vecdot(xp.zeros((2, 3)), xp.zeros((2, 4)))
    assert xp.tensordot(
        xp.empty((5, 6), device="meta"), xp.empty((6, 7), device="meta"), axes=1
    ).shape == (5, 7)


@pytest.mark.parametrize(
    "dtype", [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64]
)
def test_isin_of_integers_in_a_small_range_looks_them_up_in_a_table(dtype, monkeypatch):
    """Integers whose haystack (longer than the whole-compare limit) spans a small range are
    looked up in a table of that range: NumPy's answer at the ends of the range, below and above
    it, for negative ranges, a range at the top of uint64 (differences taken modulo 2**64) and
    of int64, serially (and over threads for int32), and with invert; a wide range is searched
    instead."""
    import strided.backends.cpu._kern_index as ix

    tables = []
    monkeypatch.setattr(ix, "isin_table", lambda *a, f=ix.isin_table: (tables.append(1), f(*a)))
    info = np.iinfo(dtype)
    rng = np.random.default_rng(np.dtype(dtype).itemsize)
    width = min(400, (int(info.max) - int(info.min)) // 2)
    for lo in sorted(
        {int(info.min), int(info.max) - width + 1, (int(info.min) + int(info.max)) // 2}
    ):
        h = rng.integers(lo, lo + width, 300, dtype=dtype)
        h[0], h[1] = lo, lo + width - 1  # the range's ends
        # (over threads for int32 alone: the parallel loop, the same code for every dtype,
        # costs ~2 s of a cold make test to compile per dtype)
        for n in (1000, 70_001) if dtype is np.int32 else (1000,):
            x = rng.integers(max(int(info.min), lo - 50), min(int(info.max), lo + width + 50), n,
                             dtype=dtype, endpoint=True)  # fmt: skip
            tables.clear()
            got = np.asarray(xp.isin(xp.asarray(x), xp.asarray(h)))
            np.testing.assert_array_equal(got, np.isin(x, h), err_msg=f"{lo} {n}")
            got = np.asarray(xp.isin(xp.asarray(x), xp.asarray(h), invert=True))
            np.testing.assert_array_equal(got, np.isin(x, h, invert=True))
            assert len(tables) == 2
    if info.max - info.min > 10**8:  # a haystack spread over a wide range: searched
        h = np.linspace(info.min // 2, info.max // 2, 300).astype(dtype)
        x = np.concatenate([h[::3], h[::7] + 1]).astype(dtype)
        tables.clear()
        np.testing.assert_array_equal(np.asarray(xp.isin(xp.asarray(x), xp.asarray(h))),
                                      np.isin(x, h))  # fmt: skip
        assert tables == []


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.uint8])
@pytest.mark.parametrize("n", [1, 4096, 70_000])  # serial and threaded
@pytest.mark.parametrize("k", [1, 20, 128, 129, 3000])  # compared whole (<= 128) or searched
def test_isin_one_pass_membership_like_numpy(dtype, n, k):
    """isin's fused membership kernel: NumPy's answer for short and long haystacks, NaNs in
    either (NaN is in nothing), signed zeros (equal), a transposed x1, invert, and the kernel
    ran (not the composition)."""
    from strided._ops.searching import ISIN_SORTED

    rng = np.random.default_rng(n + k)
    x = (rng.random(n) * 200).astype(dtype)
    h = (rng.random(k) * 200).astype(dtype)
    if np.dtype(dtype).kind == "f":
        x[::11] = np.nan
        h[0] = np.nan
        x[1::13] = -0.0
        h[-1] = 0.0
    calls = []
    kernel = ISIN_SORTED.kernels["cpu"]
    ISIN_SORTED.kernels["cpu"] = lambda *a, **kw: (calls.append(1), kernel(*a, **kw))
    ISIN_SORTED.forget()
    try:
        np.testing.assert_array_equal(
            np.asarray(xp.isin(xp.asarray(x), xp.asarray(h))), np.isin(x, h)
        )
        got = xp.isin(xp.asarray(h), xp.asarray(x), invert=True)
        np.testing.assert_array_equal(np.asarray(got), np.isin(h, x, invert=True))
        if n >= 4096:
            m = x[: (n // 64) * 64].reshape(-1, 64)
            got = xp.isin(xp.asarray(np.ascontiguousarray(m.T)).T, xp.asarray(h))
            np.testing.assert_array_equal(np.asarray(got), np.isin(m, h))
    finally:
        ISIN_SORTED.kernels["cpu"] = kernel
        ISIN_SORTED.forget()
    assert calls
