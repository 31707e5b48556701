"""Functions written as compositions of primitives (no kernels of their own): values vs NumPy in
every layout, meta shapes, errors."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import strided as xp
from strided import _dtypes as sdt

from .strategies import LAYOUTS, in_layout, seeds, values

nd_shapes = st.lists(st.integers(1, 4), min_size=1, max_size=3).map(tuple)
DTYPES = [sdt.int16, sdt.uint8, sdt.float32, sdt.float64, sdt.complex128, sdt.bool]


def _arrays(data, rng, d=None, shape=None):
    d = d or data.draw(st.sampled_from(DTYPES), label="dtype")
    shape = shape if shape is not None else data.draw(nd_shapes, label="shape")
    return in_layout(values(rng, shape, d), data.draw(st.sampled_from(LAYOUTS), label="layout"))


def _same(got, want, rtol=1e-6):
    assert got.shape == want.shape
    if want.dtype.kind in "fc":
        np.testing.assert_allclose(np.asarray(got), want, rtol=rtol, atol=rtol)
    else:
        np.testing.assert_array_equal(np.asarray(got), want)


def test_tril_triu_plans_read_each_views_own_offset_and_record():
    """tril/triu run the triangle primitive, its plan (a one-call writer) kept per layout:
    views of that layout at other offsets give their own triangles, a stack whose matrices do
    not step evenly is copied first, and a tracked input records PyTorch's gradient."""
    import torch

    rng = np.random.default_rng(12)
    whole = rng.standard_normal((10, 12))
    sw = xp.asarray(whole)
    for _ in range(2):
        for lo in (0, 1, 3):
            for fn, ref in ((xp.tril, np.tril), (xp.triu, np.triu)):
                for k in (-1, 0, 2):
                    got = fn(sw[lo : lo + 6, lo : lo + 7], k=k)
                    _same(got, ref(whole[lo : lo + 6, lo : lo + 7], k=k))
    stack = rng.standard_normal((3, 4, 5, 6))
    uneven = np.swapaxes(stack, 0, 1)  # leading axes (4, 3) that do not step as one
    _same(xp.triu(xp.asarray(stack), k=1), np.triu(stack, 1))
    _same(xp.tril(xp.permute_dims(xp.asarray(stack), (1, 0, 2, 3)), k=1), np.tril(uneven, 1))
    x = xp.asarray(whole[:5, :6], requires_grad=True)
    w = rng.standard_normal((5, 6))
    xp.sum((xp.tril(x, k=1) + xp.triu(x, k=-1) * 2.0) * xp.asarray(w)).backward()
    t = torch.tensor(whole[:5, :6], requires_grad=True)
    ((torch.tril(t, 1) + torch.triu(t, -1) * 2.0) * torch.tensor(w)).sum().backward()
    np.testing.assert_array_equal(np.asarray(x.grad), t.grad.numpy())


@settings(max_examples=30)
@given(data=st.data(), rng=seeds())
def test_flip_moveaxis_unstack(data, rng):
    v, a = _arrays(data, rng)
    axis = data.draw(st.none() | st.integers(-a.ndim, a.ndim - 1), label="axis")
    _same(xp.flip(a, axis=axis), np.flip(v, axis=axis))
    src = data.draw(st.integers(-a.ndim, a.ndim - 1))
    dst = data.draw(st.integers(-a.ndim, a.ndim - 1))
    _same(xp.moveaxis(a, src, dst), np.moveaxis(v, src, dst))
    ax = data.draw(st.integers(0, a.ndim - 1))
    parts = xp.unstack(a, axis=ax)
    assert len(parts) == v.shape[ax]
    for p, w in zip(parts, np.moveaxis(v, ax, 0)):
        _same(p, w)


def test_flip_is_a_view():
    a = xp.zeros(4)
    xp.flip(a)[0] = 1.0
    assert float(a[3]) == 1.0


def test_flip_geometry_remembered_per_layout_not_offset():
    # the remembered geometry is (strides, change of offset): views at other offsets of the same
    # layout reuse it and must still read their own elements
    v = np.arange(60.0).reshape(6, 10)
    a = xp.asarray(v)
    for rows in (slice(0, 3), slice(1, 4), slice(3, 6)):
        for axis in (None, 0, 1, (0, 1), -1):
            _same(xp.flip(a[rows, 2:7], axis=axis), np.flip(v[rows, 2:7], axis=axis))
            _same(xp.flip(a[rows, ::-2], axis=axis), np.flip(v[rows, ::-2], axis=axis))
    for bad, err in ((5, IndexError), ((0, 0), ValueError), (1.5, TypeError)):
        for _ in range(2):  # a failed request is not remembered
            with pytest.raises(err, match="flip"):
                xp.flip(a, axis=bad)


def test_flip_of_tracked_array_records_its_gradient():
    import torch

    x = xp.asarray(np.arange(6.0).reshape(2, 3))
    x.requires_grad_()
    w = xp.asarray(np.arange(6.0).reshape(2, 3) + 1.0)
    y = xp.sum(xp.flip(x, axis=1) * w)
    y.backward()
    tx = torch.arange(6.0, dtype=torch.float64).reshape(2, 3).requires_grad_()
    (torch.flip(tx, (1,)) * torch.from_numpy(np.asarray(w))).sum().backward()
    np.testing.assert_array_equal(np.asarray(x.grad), tx.grad.numpy())


def test_roll_stack_diff_lanes_serve_views_at_other_offsets_and_step_aside_when_tracked():
    """roll, stack and diff of untracked plain arrays reuse what their first call worked out
    (concat's writer, the views' geometry): views of the same layout at other offsets give
    NumPy's values; a tracked input afterwards still records (PyTorch's gradients), and an
    observer still sees the primitives they are made of."""
    import torch

    from strided import dispatch

    rng = np.random.default_rng(9)
    v = rng.standard_normal((5, 12))
    a = xp.asarray(v)
    for _ in range(2):
        for r in (0, 1, 3):
            for shift, axis in ((5, None), (-3, 0), (14, -1), (0, 0), (2, 0)):
                rows, rows_n = a[r : r + 2], v[r : r + 2]
                _same(xp.roll(rows, shift, axis=axis), np.roll(rows_n, shift, axis=axis))
                _same(xp.roll(rows[0], shift), np.roll(rows_n[0], shift))
            for axis in (0, 1, -1):
                got = xp.stack([a[r], a[r + 1], a[4 - r]], axis=axis)
                _same(got, np.stack([v[r], v[r + 1], v[4 - r]], axis=axis))
                _same(xp.diff(a[r : r + 2], axis=axis), np.diff(v[r : r + 2], axis=axis))
    x = xp.asarray(v[:2].copy(), requires_grad=True)
    w = xp.asarray(rng.standard_normal((2, 12)))
    w3 = xp.asarray(rng.standard_normal((3, 12)))
    y = xp.sum(xp.roll(x, -3, axis=0) * w) + xp.sum(xp.stack([x[0], x[1], x[0]]) * w3)
    y = y + xp.sum(xp.diff(x, axis=1) * w[:, 1:])
    y.backward()
    t = torch.tensor(v[:2], requires_grad=True)
    tw = torch.from_numpy(np.asarray(w))
    tw3 = torch.from_numpy(np.asarray(w3))
    ty = (torch.roll(t, -3, 0) * tw).sum() + (torch.stack([t[0], t[1], t[0]]) * tw3).sum()
    ty = ty + (torch.diff(t, dim=1) * tw[:, 1:]).sum()
    ty.backward()
    np.testing.assert_allclose(np.asarray(x.grad), t.grad.numpy(), rtol=1e-12)
    calls = []
    with dispatch.observe(lambda prim, args, params, out, depth: calls.append(prim.name)):
        xp.roll(a[1:4], 1, axis=0), xp.stack([a[1], a[2]]), xp.diff(a[1:3])
    assert calls.count("concat") == 2 and "expand_dims" in calls and "subtract" in calls


def test_repeat_and_tile_lanes_and_their_results_are_new_arrays():
    """repeat/tile of untracked plain arrays remember their broadcast view and copy: views of the
    same layout at other offsets give NumPy's values (also axis=None of a stepped view, which
    copies first); repetitions of 1 give a new array, never a view of x (NumPy copies); a
    tracked input after them records (PyTorch's gradients)."""
    import torch

    rng = np.random.default_rng(12)
    v = rng.standard_normal((6, 10))
    a = xp.asarray(v)
    for _ in range(2):
        for r in (0, 2, 4):
            s, sv = a[r : r + 2, 1:9], v[r : r + 2, 1:9]
            for reps, axis in ((3, 0), (2, 1), (1, -1), (4, None), (0, 1)):
                _same(xp.repeat(s, reps, axis=axis), np.repeat(sv, reps, axis=axis))
            _same(xp.repeat(a[r, ::2], 3), np.repeat(v[r, ::2], 3))
            for reps in ((2,), (2, 1), (3, 1, 2), (1,), (1, 1)):
                _same(xp.tile(s, reps), np.tile(sv, reps))
    b = xp.asarray(v.copy())  # (asarray of a NumPy array shares its memory)
    for out in (xp.repeat(b, 1, axis=0), xp.repeat(b[0], 1), xp.tile(b, (1, 1)), xp.tile(b, (1,))):
        out[...] = -1.0
        _same(b, v)  # x is untouched
    plain = xp.asarray(v[:2, :4].copy())
    for _ in range(2):  # remembered for this kind of call
        xp.repeat(plain, 3, axis=0), xp.tile(plain, (3, 1))
    x = xp.asarray(v[:2, :4].copy(), requires_grad=True)
    w = xp.asarray(rng.standard_normal((6, 4)))
    xp.sum(xp.repeat(x, 3, axis=0) * w).backward()
    t = torch.tensor(v[:2, :4], requires_grad=True)
    (torch.repeat_interleave(t, 3, 0) * torch.from_numpy(np.asarray(w))).sum().backward()
    np.testing.assert_allclose(np.asarray(x.grad), t.grad.numpy(), rtol=1e-12)
    x.grad = None
    xp.sum(xp.tile(x, (3, 1)) * w).backward()
    t.grad = None
    (torch.tile(t, (3, 1)) * torch.from_numpy(np.asarray(w))).sum().backward()
    np.testing.assert_allclose(np.asarray(x.grad), t.grad.numpy(), rtol=1e-12)


@settings(max_examples=30)
@given(data=st.data(), rng=seeds())
def test_roll_tile_repeat(data, rng):
    v, a = _arrays(data, rng)
    shift = data.draw(st.integers(-7, 7))
    axis = data.draw(st.none() | st.integers(-a.ndim, a.ndim - 1))
    _same(xp.roll(a, shift, axis=axis), np.roll(v, shift, axis=axis))
    reps = tuple(data.draw(st.lists(st.integers(0, 3), min_size=1, max_size=3)))
    _same(xp.tile(a, reps), np.tile(v, reps))
    r = data.draw(st.integers(0, 3))
    _same(xp.repeat(a, r, axis=axis), np.repeat(v, r, axis=axis))
    ax = data.draw(st.integers(0, a.ndim - 1))
    counts = rng.integers(0, 3, size=v.shape[ax])
    _same(xp.repeat(a, xp.asarray(counts), axis=ax), np.repeat(v, counts, axis=ax))


@pytest.mark.parametrize("kernel", [True, False], ids=["kernel", "composed"])
def test_repeat_with_counts_runs_of_every_length(kernel, monkeypatch):
    """repeat with per-element counts: runs of 0 to 100 (the kernel's four-store, 16-block and
    slice paths, the last runs exact), along each axis of a stack, of 1-, 4- and 16-byte
    elements, in a transposed layout and with one broadcast count; on a device without the
    kernel, the composed run-length index; NumPy's values, and PyTorch's gradient (a tracked
    input gathers by the index)."""
    import torch

    from strided._ops.searching import REPEAT_COUNTS

    if not kernel:
        monkeypatch.delitem(REPEAT_COUNTS.kernels, "cpu")
    rng = np.random.default_rng(7)
    for hi in (4, 20, 101):
        v = rng.standard_normal(3000)
        c = rng.integers(0, hi, 3000)
        c[:5] = 0
        c[-5:] = [0, 1, 3, 0, 2]
        _same(xp.repeat(xp.asarray(v), xp.asarray(c)), np.repeat(v, c))
    cube = rng.standard_normal((5, 6, 7)) + 1j * rng.standard_normal((5, 6, 7))
    for d in (np.int8, np.float64, np.complex128):
        m = cube.astype(d) if d is np.complex128 else cube.real.astype(d)
        for axis in (0, 1, 2):
            c = rng.integers(0, 4, m.shape[axis])
            _same(xp.repeat(xp.asarray(m), xp.asarray(c), axis=axis), np.repeat(m, c, axis=axis))
    mt = xp.matrix_transpose(xp.asarray(cube.real))
    _same(xp.repeat(mt, xp.asarray([3]), axis=1), np.repeat(cube.real.swapaxes(1, 2), 3, axis=1))
    _same(xp.repeat(xp.asarray(cube.real), xp.asarray([0] * 6), axis=1), cube.real[:, :0])
    counts = np.array([2, 0, 3, 1])
    weights = rng.standard_normal(6)
    x = xp.asarray([1.0, 2.0, 3.0, 4.0])
    x.requires_grad_()
    xp.sum(xp.repeat(x, xp.asarray(counts)) * xp.asarray(weights)).backward()
    t = torch.tensor([1.0, 2.0, 3.0, 4.0], dtype=torch.float64, requires_grad=True)
    (
        torch.repeat_interleave(t, torch.from_numpy(counts)) * torch.from_numpy(weights)
    ).sum().backward()
    np.testing.assert_allclose(np.asarray(x.grad), t.grad.numpy(), rtol=1e-12)


@pytest.mark.parametrize(
    "repeats, error, match",
    [
        ([1, -1, 2], ValueError, "non-negative, got -1"),
        ([1, 2], ValueError, r"repeats of shape \(2,\) do not match the 3 elements"),
        ([[1, 2, 3]], ValueError, r"repeats of shape \(1, 3\)"),
        ([1.0, 2.0, 3.0], TypeError, "integer array, got float64"),
    ],
)
def test_repeat_with_counts_refuses_bad_counts(repeats, error, match):
    with pytest.raises(error, match=match):
        xp.repeat(xp.asarray([1.0, 2.0, 3.0]), xp.asarray(repeats))


def test_repeat_with_an_array_is_refused_on_meta():
    with pytest.raises(ValueError, match="depends on the values"):
        xp.repeat(xp.empty(3, device="meta"), xp.empty(3, dtype=xp.int64, device="meta"))
    assert xp.repeat(xp.empty((2, 3), device="meta"), 4, axis=1).shape == (2, 12)


@settings(max_examples=30)
@given(data=st.data(), rng=seeds())
def test_diff(data, rng):
    v, a = _arrays(data, rng, d=data.draw(st.sampled_from([sdt.int16, sdt.float64, sdt.bool])))
    axis = data.draw(st.integers(-a.ndim, a.ndim - 1))
    n = data.draw(st.integers(0, 3))
    _same(xp.diff(a, axis=axis, n=n), np.diff(v, axis=axis, n=n))
    pre = values(rng, v.shape[: axis % v.ndim] + (1,) + v.shape[axis % v.ndim + 1 :], a.dtype)
    _same(xp.diff(a, axis=axis, prepend=xp.asarray(pre)), np.diff(v, axis=axis, prepend=pre))


@pytest.mark.parametrize("d", [sdt.float32, sdt.float64, sdt.complex64], ids=lambda d: d.name)
@settings(max_examples=20)
@given(data=st.data(), rng=seeds())
def test_var_std(d, data, rng):
    v, a = _arrays(data, rng, d=d)
    axis = data.draw(st.none() | st.integers(-a.ndim, a.ndim - 1))
    correction = data.draw(st.sampled_from([0, 1, 0.5]))
    keepdims = data.draw(st.booleans())
    if v.size == 0 or (np.prod(v.shape if axis is None else v.shape[axis]) - correction) <= 0:
        return  # NaN/inf territory: covered by the special-case suite
    want_var = np.var(v, axis=axis, ddof=correction, keepdims=keepdims)
    got = xp.var(a, axis=axis, correction=correction, keepdims=keepdims)
    assert got.dtype is sdt.real_of(d)
    _same(got, want_var, rtol=1e-4)
    _same(
        xp.std(a, axis=axis, correction=correction, keepdims=keepdims),
        np.std(v, axis=axis, ddof=correction, keepdims=keepdims),
        rtol=1e-4,
    )
    with pytest.raises(TypeError, match="var"):
        xp.var(xp.zeros(3, dtype=xp.int32))


@settings(max_examples=20)
@given(data=st.data(), rng=seeds())
def test_count_nonzero(data, rng):
    v, a = _arrays(data, rng)
    axis = data.draw(st.none() | st.integers(-a.ndim, a.ndim - 1))
    got = xp.count_nonzero(a, axis=axis)
    assert got.dtype is xp.int64
    _same(got, np.asarray(np.count_nonzero(v, axis=axis)))


@pytest.mark.parametrize("indexing", ["xy", "ij"])
def test_meshgrid(indexing):
    xs = [np.arange(3.0), np.arange(4.0) * 2, np.arange(2.0) - 1]
    for k in (1, 2, 3):
        got = xp.meshgrid(*[xp.asarray(x) for x in xs[:k]], indexing=indexing)
        want = np.meshgrid(*xs[:k], indexing=indexing)
        for g, w in zip(got, want):
            _same(g, w)
    g = xp.meshgrid(xp.arange(3), xp.arange(2))[0]
    g[0, 0] = 7  # a copy, not a broadcast view
    assert int(g[1, 0]) == 0


@pytest.mark.parametrize("indexing", ["xy", "ij"])
def test_meshgrid_of_strided_views_and_of_tracked_inputs(indexing):
    """Views with other steps and offsets (the views made at once for plain inputs), and
    tracked inputs (the composition of reshape and broadcast_to): gradients as PyTorch's."""
    import torch

    base = np.arange(12.0)
    picks = (slice(None, None, -2), slice(1, 8, 3), slice(2, 4), slice(5, 5))
    whole = xp.asarray(base)
    for k in (2, 3, 4):
        got = xp.meshgrid(*[whole[p] for p in picks[:k]], indexing=indexing)
        want = np.meshgrid(*[base[p] for p in picks[:k]], indexing=indexing)
        assert len(got) == k
        for g, w in zip(got, want):
            _same(g, w)
    a = xp.asarray(np.arange(3.0), requires_grad=True)
    b = xp.asarray(np.arange(4.0) + 1, requires_grad=True)
    ga, gb = xp.meshgrid(a, b[::-1], indexing=indexing)
    w = np.random.default_rng(0).standard_normal(ga.shape)
    (xp.sum(ga * xp.asarray(w)) + xp.sum(gb * gb)).backward()
    ta = torch.arange(3.0, dtype=torch.float64, requires_grad=True)
    tb = torch.tensor(np.arange(4.0) + 1, requires_grad=True)
    tga, tgb = torch.meshgrid(ta, tb.flip(0), indexing=indexing)
    ((tga * torch.tensor(w)).sum() + (tgb * tgb).sum()).backward()
    np.testing.assert_allclose(np.asarray(a.grad), ta.grad.numpy(), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(b.grad), tb.grad.numpy(), rtol=1e-12)


@pytest.mark.parametrize("k", [-2, 0, 1, 5, -(10**30), 10**30])
@pytest.mark.parametrize("d", [sdt.bool, sdt.int8, sdt.float32], ids=lambda d: d.name)
@pytest.mark.parametrize("shape", [(2, 4, 5), (300, 400)])
def test_tril_triu(k, d, shape):
    """tril/triu: NumPy's values for any k (one beyond the matrix keeps all or nothing), in a
    transposed layout, small (the kept mask remembered: each call twice) and large."""
    v = values(np.random.default_rng(abs(k) % 97 + 3), shape, d)
    _, a = in_layout(v, "transposed")
    n, m = shape[-2:]
    for fn, ref in ((xp.tril, np.tril), (xp.triu, np.triu)):
        for _ in range(2):
            got = fn(a, k=k)
            assert got.dtype is d
            _same(got, ref(v, k=max(min(k, m), -n)))
    with pytest.raises(ValueError, match="tril"):
        xp.tril(xp.zeros(3))


@settings(max_examples=30)
@given(data=st.data(), rng=seeds())
def test_clip(data, rng):
    d = data.draw(st.sampled_from([sdt.int16, sdt.float32, sdt.float64]))
    v, a = _arrays(data, rng, d=d)
    lo = data.draw(st.none() | st.just(-2) | st.just("array"))
    hi = data.draw(st.none() | st.just(3) | st.just("array"))
    lo_v = values(rng, v.shape[-1:], d, (-3, 0), (-3, 0)) if lo == "array" else lo
    hi_v = values(rng, v.shape[-1:], d, (1, 4), (1, 4)) if hi == "array" else hi
    got = xp.clip(
        a, xp.asarray(lo_v) if lo == "array" else lo, xp.asarray(hi_v) if hi == "array" else hi
    )
    assert got.dtype is d
    _same(got, np.clip(v, lo_v, hi_v).astype(d.numpy))


def test_clip_propagates_nan_and_broadcast_shapes():
    got = xp.clip(xp.asarray([1.0, np.nan, 5.0]), 2.0, xp.asarray([np.nan, 3.0, 3.0]))
    np.testing.assert_array_equal(np.asarray(got), [np.nan, np.nan, 3.0])
    assert xp.broadcast_shapes((3, 1), (1, 4), (4,)) == (3, 4)
    assert xp.broadcast_shapes() == ()
    with pytest.raises(ValueError, match="broadcast"):
        xp.broadcast_shapes((3,), (4,))


def test_compositions_on_meta():
    m = xp.empty((10**6, 3, 4), device="meta")
    assert xp.flip(m).shape == m.shape and xp.roll(m, 2, axis=1).shape == m.shape
    assert xp.tile(m, (2, 1, 1)).shape == (2 * 10**6, 3, 4)
    assert xp.var(m, axis=0).shape == (3, 4) and xp.std(m).shape == ()
    assert xp.tril(m).shape == m.shape and xp.clip(m, 0.0, 1.0).shape == m.shape
    assert xp.diff(m, axis=0).shape == (10**6 - 1, 3, 4)
    assert xp.count_nonzero(m, axis=(1, 2)).shape == (10**6,)
