"""Views share memory; reshape/permute/expand/squeeze/broadcast; copies (astype, concat, stack,
setitem); where.  Values vs NumPy in every layout."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import strided as xp
from strided import _dtypes as sdt
from strided._ops import manipulation

from .strategies import LAYOUTS, in_layout, seeds, shapes, values

basic_index = st.one_of(
    st.integers(-3, 2),
    st.slices(4),
    st.just(None),
    st.just(Ellipsis),
)


@settings(max_examples=60, deadline=None)
@given(key=st.lists(basic_index, max_size=4).map(tuple), layout=st.sampled_from(LAYOUTS))
def test_basic_indexing_matches_numpy(key, layout):
    v = np.arange(4 * 4 * 4).reshape(4, 4, 4)
    nv, a = in_layout(v, layout)
    if sum(k is Ellipsis for k in key) > 1:
        with pytest.raises(IndexError):
            a[key]
        return
    try:
        want = nv[key]
    except IndexError:
        with pytest.raises(IndexError):
            a[key]
        return
    got = a[key]
    assert got.shape == want.shape
    np.testing.assert_array_equal(np.asarray(got), want)


def test_views_share_memory_with_their_base():
    x = xp.zeros((4, 6))
    v = x[1:, ::-2]
    v[0, 0] = 5.0
    assert float(x[1, 5]) == 5.0
    t = xp.permute_dims(x, (1, 0))
    t[2, 3] = 7.0
    assert float(x[3, 2]) == 7.0
    r = xp.reshape(x, (2, 12))
    r[1, 0] = 9.0
    assert float(x[2, 0]) == 9.0
    e = xp.expand_dims(x, (0, 2))
    assert e.shape == (1, 4, 1, 6)
    e[0, 1, 0, 1] = 3.0
    assert float(x[1, 1]) == 3.0
    assert xp.squeeze(e, (0, 2)).shape == (4, 6)
    assert x.mT.strides == (1, 6) and x.T.shape == (6, 4)


def test_setitem_broadcasts_and_casts():
    x = xp.zeros((3, 4), dtype=xp.float32)
    x[...] = xp.asarray([1, 2, 3, 4], dtype=xp.int8)
    np.testing.assert_array_equal(np.asarray(x), np.tile(np.arange(1, 5), (3, 1)))
    x[1] = 0
    x[:, ::3] = -1.5
    want = np.tile(np.arange(1.0, 5), (3, 1))
    want[1] = 0
    want[:, ::3] = -1.5
    np.testing.assert_array_equal(np.asarray(x), want)
    i = xp.zeros(3, dtype=xp.int32)
    with pytest.raises(TypeError, match="__setitem__"):
        i[0] = 1.5
    with pytest.raises(TypeError, match="__setitem__"):
        i[:] = xp.ones(3, dtype=xp.float32)
    with pytest.raises(ValueError, match="__setitem__"):
        x[0] = xp.ones(3, dtype=xp.float32)


def test_setitem_with_overlapping_source():
    x = xp.arange(10)
    x[1:] = x[:-1]
    np.testing.assert_array_equal(np.asarray(x), [0, 0, 1, 2, 3, 4, 5, 6, 7, 8])


@pytest.mark.parametrize("n", [12, 70000])
def test_setitem_from_views_of_the_same_buffer_like_numpy(n):
    """Writes whose source is a view of the target's own buffer: overlapping ones (shifts both
    ways, a reversal, interleaved steps, a transpose onto itself) read the source before any
    write lands, as NumPy does; disjoint ones (the two halves) copy straight, without a
    temporary.  Small and threaded sizes."""
    h = n // 2
    cases = [
        (lambda a: a[1:], lambda a: a[:-1]),
        (lambda a: a[:-1], lambda a: a[1:]),
        (lambda a: a, lambda a: a[::-1]),
        (lambda a: a[::2], lambda a: a[1::2]),
        (lambda a: a[:h], lambda a: a[h : 2 * h]),
        (lambda a: a[h : 2 * h], lambda a: a[:h]),
        (lambda a: a[: 2 * h : 2], lambda a: a[:h]),
    ]
    for dst, src in cases:
        ref = np.arange(n, dtype=np.float32)
        x = xp.asarray(ref, copy=True)
        dst(x)[...] = src(x)
        dst(ref)[...] = src(ref).copy()
        np.testing.assert_array_equal(np.asarray(x), ref)
    side = 6 if n == 12 else 260
    ref = np.arange(side * side, dtype=np.float64).reshape(side, side)
    x = xp.asarray(ref, copy=True)
    x[...] = x.T
    np.testing.assert_array_equal(np.asarray(x), ref.T)


def test_indexing_errors():
    x = xp.zeros((2, 3))
    with pytest.raises(IndexError, match="out of bounds"):
        x[2]
    with pytest.raises(IndexError, match="too many indices"):
        x[0, 0, 0]
    with pytest.raises(IndexError, match="not an integer"):
        x["a"]


@settings(max_examples=40, deadline=None)
@given(
    shape=st.lists(st.integers(1, 4), min_size=1, max_size=4).map(tuple),
    layout=st.sampled_from(LAYOUTS),
    data=st.data(),
)
def test_reshape_matches_numpy_and_views_when_possible(shape, layout, data):
    v = np.arange(int(np.prod(shape))).reshape(shape)
    nv, a = in_layout(v, layout)
    flat = int(np.prod(shape))
    new = data.draw(st.sampled_from([(flat,), (1, flat), (flat, 1), (-1,), shape[::-1]]))
    got = xp.reshape(a, new)
    np.testing.assert_array_equal(np.asarray(got), nv.reshape(new))
    # NumPy returns a view exactly when no copy is needed: so must we, and copy=False must agree
    try:
        np.asarray(a).reshape(new, copy=False)  # same memory layout as a
        numpy_views = True
    except ValueError:
        numpy_views = False
    if numpy_views:
        assert xp.reshape(a, new, copy=False).shape == nv.reshape(new).shape
    else:
        with pytest.raises(ValueError, match="copy=False"):
            xp.reshape(a, new, copy=False)
    c = xp.reshape(a, new, copy=True)
    c[(0,) * len(c.shape)] = -1
    assert np.asarray(a).flat[0] == nv.flat[0]


def test_reshape_errors():
    with pytest.raises(ValueError, match=r"reshape.*\(2, 3\).*\(4,\)"):
        xp.reshape(xp.zeros((2, 3)), (4,))
    with pytest.raises(ValueError, match="-1"):
        xp.reshape(xp.zeros((2, 3)), (-1, -1))


def test_permute_broadcast_squeeze_errors():
    x = xp.zeros((2, 3))
    with pytest.raises(ValueError, match="permutation"):
        xp.permute_dims(x, (0, 0))
    assert xp.permute_dims(x, (-1, -2)).shape == (3, 2)
    with pytest.raises(ValueError, match="broadcast_to"):
        xp.broadcast_to(x, (3, 3))
    with pytest.raises(ValueError, match="squeeze"):
        xp.squeeze(x, 0)
    b = xp.broadcast_to(xp.asarray([1, 2, 3]), (4, 3))
    assert b.strides == (0, 1)
    p, q = xp.broadcast_arrays(xp.zeros((3, 1)), xp.zeros((1, 4)))
    assert p.shape == q.shape == (3, 4)


@pytest.mark.parametrize("src", sdt.ALL_DTYPES, ids=lambda d: d.name)
def test_astype_every_pair(src):
    rng = np.random.default_rng(3)
    v = values(rng, (3, 5), src, domain=(0.0, 100.0), int_domain=(0, 100))
    _, a = in_layout(v, "transposed")
    for dst in sdt.ALL_DTYPES:
        if src.kind == sdt.COMPLEX and dst.kind != sdt.COMPLEX:
            continue  # complex -> real discards the imaginary part: NumPy warns, not comparable
        got = xp.astype(a, dst)
        assert got.dtype is dst
        np.testing.assert_array_equal(np.asarray(got), v.astype(dst.numpy))
    assert xp.astype(a, src, copy=False) is a


@settings(max_examples=30, deadline=None)
@given(shape=shapes.filter(lambda s: len(s) >= 1), n=st.integers(1, 3), data=st.data(), rng=seeds())
def test_concat_and_stack(shape, n, data, rng):
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    parts_np, parts = [], []
    for _ in range(n):
        s = list(shape)
        s[axis] = data.draw(st.integers(0, 3))
        d = data.draw(st.sampled_from([sdt.int16, sdt.float32, sdt.float64]))
        nv, a = in_layout(values(rng, tuple(s), d), data.draw(st.sampled_from(LAYOUTS)))
        parts_np.append(nv)
        parts.append(a)
    got = xp.concat(parts, axis=axis)
    want = np.concatenate(parts_np, axis=axis)
    assert got.dtype is xp.result_type(*parts)
    np.testing.assert_allclose(np.asarray(got), want.astype(got.dtype.numpy), rtol=1e-6)
    flat = xp.concat(parts, axis=None)
    np.testing.assert_allclose(
        np.asarray(flat), np.concatenate([p.ravel() for p in parts_np]), rtol=1e-6
    )
    same = [parts[0]] * n
    st_got = xp.stack(same, axis=axis)
    np.testing.assert_allclose(
        np.asarray(st_got), np.stack([parts_np[0]] * n, axis=axis), rtol=1e-6
    )


def test_concat_errors():
    with pytest.raises(ValueError, match="concat"):
        xp.concat([xp.zeros((2, 3)), xp.zeros((3, 3))], axis=1)
    with pytest.raises(ValueError, match="different devices.*cpu.*meta"):
        xp.concat([xp.zeros(2), xp.zeros(2, device="meta")])
    with pytest.raises(ValueError, match="stack"):
        xp.stack([xp.zeros(2), xp.zeros(3)])


def test_concat_repeated_calls_reuse_checked_plans_correctly():
    """concat keeps what it checked per input layout: repeated calls give NumPy's results for
    new data, a different layout or dtype gets its own plan, and bad shapes still raise."""
    rng = np.random.default_rng(2)
    for k in range(3):
        a, b = rng.standard_normal((4, 3)), rng.standard_normal((2, 3)).astype(np.float32)
        x, y = xp.asarray(a), xp.asarray(b)
        got = xp.concat([x, y])
        assert got.dtype == xp.float64
        np.testing.assert_array_equal(np.asarray(got), np.concatenate([a, b]))
        t = xp.concat((x.mT, y.mT), axis=1)
        np.testing.assert_array_equal(np.asarray(t), np.concatenate([a.T, b.T], axis=1))
        np.testing.assert_array_equal(np.asarray(xp.concat([x, x], axis=-1)), np.hstack([a, a]))
        with pytest.raises(ValueError, match="concat"):
            xp.concat([x, y], axis=1)
        # parts written flat by the plan's one-call writer: casts, an empty part, and views
        # whose offsets differ from call to call
        i = rng.integers(-9, 9, 7).astype(np.int32)
        v = rng.standard_normal(12)
        parts = [xp.asarray(i), xp.zeros(0, dtype=xp.int8), xp.asarray(v)[k : k + 6]]
        got = xp.concat(parts)
        assert got.dtype == xp.float64
        np.testing.assert_array_equal(np.asarray(got), np.concatenate([i, v[k : k + 6]]))
    m = xp.concat([xp.zeros((4, 3), device="meta")] * 2)
    assert m.shape == (8, 3) and m.device == xp.Device("meta")


@pytest.mark.parametrize(
    "d", [sdt.bool, sdt.int8, sdt.uint32, sdt.float32, sdt.complex128], ids=lambda d: d.name
)
@settings(max_examples=10, deadline=None)
@given(data=st.data(), rng=seeds())
def test_where(d, data, rng):
    shape = data.draw(shapes)
    c_np, c = in_layout(
        rng.integers(0, 2, size=shape).astype(bool), data.draw(st.sampled_from(LAYOUTS))
    )
    a_np, a = in_layout(values(rng, shape, d), data.draw(st.sampled_from(LAYOUTS)))
    b_np, b = in_layout(values(rng, shape[1:], d), data.draw(st.sampled_from(LAYOUTS)))
    got = xp.where(c, a, b)
    assert got.dtype is d
    np.testing.assert_array_equal(np.asarray(got), np.where(c_np, a_np, b_np))


def test_where_with_numpy_scalars_like_python_ones():
    """A NumPy scalar (np.float64 is a float subclass; np.int64, np.bool_ are not) is taken as
    the Python scalar it holds (it reached the kernel as an array-like before: AttributeError)."""
    c_n = np.array([True, False, True, False])
    a_n = np.array([1.5, -2.0, 3.0, 4.5], np.float32)
    c, a = xp.asarray(c_n), xp.asarray(a_n)
    for z in (np.float64(0.5), np.float32(0.5), np.int64(2), np.int8(-3)):
        got = xp.where(c, a, z)
        assert got.dtype is xp.float32
        np.testing.assert_array_equal(np.asarray(got), np.where(c_n, a_n, np.float32(z)))
        np.testing.assert_array_equal(
            np.asarray(xp.where(c, z, a)), np.where(c_n, np.float32(z), a_n)
        )
    got = xp.where(c, xp.asarray(a_n.astype(np.complex64)), np.complex128(1j))
    np.testing.assert_array_equal(np.asarray(got), np.where(c_n, a_n.astype(np.complex64), 1j))
    both = xp.where(c, np.float32(1.5), np.int64(-2))  # as where(c, 1.5, -2)
    np.testing.assert_array_equal(np.asarray(both), np.where(c_n, 1.5, -2.0))
    assert both.dtype is xp.where(c, 1.5, -2).dtype


def test_where_with_scalars_and_errors():
    c = xp.asarray([True, False, True])
    got = xp.where(c, xp.asarray([1.0, 2.0, 3.0], dtype=xp.float32), 0)
    assert got.dtype is xp.float32
    np.testing.assert_array_equal(np.asarray(got), [1, 0, 3])
    with pytest.raises(TypeError, match="where.*bool"):
        xp.where(xp.asarray([1, 0]), xp.zeros(2), xp.zeros(2))
    m = xp.where(
        xp.empty((5, 1), dtype=xp.bool, device="meta"), xp.empty((1, 7), device="meta"), 1.0
    )
    assert m.shape == (5, 7) and m.device == "meta"


def test_view_geometry_remembered_per_layout_keeps_offsets_and_errors():
    """reshape, expand_dims and broadcast_to remember their shape and strides per layout and
    argument: views at other offsets of one layout get their own elements, and a request that
    is invalid (a float, a wrong size, an axis out of range) still raises on every call."""
    base = np.arange(48, dtype=np.float32).reshape(4, 12)
    x = xp.asarray(base)
    for _ in range(2):
        for i in range(4):  # rows at other offsets, one layout
            np.testing.assert_array_equal(
                np.asarray(xp.reshape(x[i], (3, 4))), base[i].reshape(3, 4)
            )
            np.testing.assert_array_equal(np.asarray(xp.reshape(x[i], -1)), base[i])
            np.testing.assert_array_equal(
                np.asarray(xp.expand_dims(x[i], axis=(0, 2))), np.expand_dims(base[i], (0, 2))
            )
            np.testing.assert_array_equal(
                np.asarray(xp.broadcast_to(x[i, :3], (2, 3))), np.broadcast_to(base[i, :3], (2, 3))
            )
        np.testing.assert_array_equal(np.asarray(xp.reshape(x.T, (6, 8))), base.T.reshape(6, 8))
        assert xp.reshape(x, (4, 12)).shape == xp.broadcast_to(x, (4, 12)).shape == (4, 12)
        with pytest.raises(TypeError):  # (after the same request in ints)
            xp.reshape(x, (4.0, 12))
        with pytest.raises(ValueError, match="reshape"):
            xp.reshape(x, (5, 10))
        with pytest.raises((ValueError, IndexError)):
            xp.expand_dims(x, axis=5)
        with pytest.raises(ValueError, match="broadcast_to"):
            xp.broadcast_to(x, (3, 12))
        with pytest.raises(TypeError):
            xp.broadcast_to(x, (4, 12.0))


def test_squeeze_permute_moveaxis_unstack_views_remembered_keep_offsets_and_errors():
    """squeeze, permute_dims and moveaxis remember their geometry (or permutation) per layout
    and argument, unstack and broadcast_arrays make untracked views directly: views at other
    offsets get their own elements, the results share memory, and invalid requests raise on
    every call."""
    base = np.arange(2 * 3 * 4 * 5, dtype=np.float64).reshape(2, 3, 4, 5)
    x = xp.asarray(base.copy())
    for _ in range(2):
        for i in range(2):  # blocks at other offsets, one layout
            xi, bi = x[i : i + 1], base[i : i + 1]
            np.testing.assert_array_equal(np.asarray(xp.squeeze(xi, axis=0)), bi[0])
            np.testing.assert_array_equal(
                np.asarray(xp.permute_dims(xi, (3, 1, 0, 2))), bi.transpose(3, 1, 0, 2)
            )
            np.testing.assert_array_equal(
                np.asarray(xp.moveaxis(xi, (0, -1), (2, 0))), np.moveaxis(bi, (0, -1), (2, 0))
            )
            for axis in (0, 1, -1):
                got = xp.unstack(x[i], axis=axis)
                want = np.unstack(base[i], axis=axis)
                assert len(got) == len(want)
                for g, w in zip(got, want):
                    np.testing.assert_array_equal(np.asarray(g), w)
            row = x[i, 0, 0]
            for g, w in zip(
                xp.broadcast_arrays(row, x[i, :, :1]),
                np.broadcast_arrays(base[i, 0, 0], base[i, :, :1]),
            ):
                np.testing.assert_array_equal(np.asarray(g), w)
        np.testing.assert_array_equal(
            np.asarray(xp.moveaxis(x.mT, 1, 3)), np.moveaxis(base.swapaxes(-1, -2), 1, 3)
        )
        np.testing.assert_array_equal(
            np.asarray(xp.moveaxis(x[0], 1, 2)), np.moveaxis(base[0], 1, 2)
        )
        for a in (x, x[0], x[0, 0]):  # one request at three ranks
            want = np.moveaxis(np.asarray(a), 0, -1)
            np.testing.assert_array_equal(np.asarray(xp.moveaxis(a, 0, -1)), want)
        with pytest.raises(ValueError, match="squeeze"):
            xp.squeeze(x, axis=1)
        with pytest.raises(ValueError, match="permute_dims"):
            xp.permute_dims(x, (0, 1, 1, 2))
        with pytest.raises((ValueError, IndexError)):
            xp.permute_dims(x, (0, 1, 2, 4))
        with pytest.raises(ValueError, match="moveaxis"):
            xp.moveaxis(x, (0, 1), (2, 2))
        with pytest.raises((ValueError, IndexError)):
            xp.moveaxis(x[0], 0, 3)  # (the same request was valid for rank 4)
        with pytest.raises(ValueError, match="broadcast"):
            xp.broadcast_arrays(x, x[:, :2])
    # steps of zero (a broadcast axis) and below zero (a flipped one), and an empty axis
    row = np.arange(5.0)
    for got, want in (
        (xp.broadcast_to(xp.asarray(row), (3, 5)), np.broadcast_to(row, (3, 5))),
        (xp.flip(x[0], axis=1), np.flip(base[0], axis=1)),
        (xp.zeros((0, 3)), np.zeros((0, 3))),
    ):
        for axis in range(want.ndim):
            parts = xp.unstack(got, axis=axis)
            assert len(parts) == want.shape[axis]
            for g, w in zip(parts, np.unstack(want, axis=axis)):
                np.testing.assert_array_equal(np.asarray(g), w)
    # the views write through to x (a version bump through the owner)
    first = xp.unstack(x, axis=1)[0]
    first[...] = -1.0
    base[:, 0] = -1.0
    np.testing.assert_array_equal(np.asarray(x), base)
    flat = xp.reshape(x, (-1,))
    flat[0] = 7.0
    assert float(x[0, 0, 0, 0]) == 7.0


def test_unstack_and_reshape_of_tracked_arrays_still_record():
    w = xp.asarray(np.arange(6.0).reshape(2, 3), requires_grad=True)
    parts = xp.unstack(w, axis=1)
    loss = xp.sum(parts[0] * 1.0) + xp.sum(parts[2] * 3.0) + xp.sum(xp.reshape(w, (6,)) * 2.0)
    loss.backward()
    np.testing.assert_array_equal(np.asarray(w.grad), [[3.0, 2.0, 5.0], [3.0, 2.0, 5.0]])


def test_view_lanes_check_argument_types_and_step_aside_for_tracked_arrays():
    """squeeze, expand_dims, permute_dims, broadcast_to and linalg.diagonal make an untracked
    plain array's view in one frame from geometry remembered per layout and argument: an argument
    equal to a remembered one but not a plain int (a float, a NumPy integer) still raises
    or is read as the rule reads it, and a tracked array, or a view of one, records the
    call (its gradient reaches the leaf)."""
    import torch

    a = np.arange(24.0).reshape(2, 1, 3, 4)
    x = xp.asarray(a)
    calls = (
        (lambda m, t, axis: m.squeeze(t, axis=axis), 1, 1.0),
        (lambda m, t, axis: m.expand_dims(t, axis=axis), 0, 0.0),
        (lambda m, t, axes: m.permute_dims(t, axes), (3, 1, 0, 2), (3.0, 1, 0, 2)),
    )
    for f, good, bad in calls:
        for _ in range(2):  # the second call is served by the remembered geometry
            np.testing.assert_array_equal(np.asarray(f(xp, x, good)), f(np, a, good))
            with pytest.raises(TypeError):
                f(xp, x, bad)
    np.testing.assert_array_equal(
        np.asarray(xp.permute_dims(x, (np.int64(3), 1, 0, 2))), a.transpose(3, 1, 0, 2)
    )
    m = xp.asarray(a[0, 0])
    for _ in range(2):
        np.testing.assert_array_equal(
            np.asarray(xp.linalg.diagonal(m, offset=1)), np.diagonal(a[0, 0], 1)
        )
        with pytest.raises(TypeError):
            xp.linalg.diagonal(m, offset=1.0)
        np.testing.assert_array_equal(
            np.asarray(xp.broadcast_to(m, (2, 3, 4))), np.broadcast_to(a[0, 0], (2, 3, 4))
        )

    w = xp.asarray(a, requires_grad=True)
    tw = torch.tensor(a, requires_grad=True)
    for source, tsource in ((w, tw), (w[:, :, :2], tw[:, :, :2])):  # a leaf and a view of one
        parts = (
            (xp.squeeze(source, axis=1), torch.squeeze(tsource, 1), 1.0),
            (xp.expand_dims(source, axis=0), tsource.unsqueeze(0), 2.0),
            (xp.permute_dims(source, (3, 1, 0, 2)), tsource.permute(3, 1, 0, 2), 3.0),
            (
                xp.broadcast_to(source, (2, 2, 1) + source.shape[2:]),
                tsource.expand(2, 2, 1, *tsource.shape[2:]),
                4.0,
            ),
            (xp.linalg.diagonal(source, offset=1), torch.diagonal(tsource, 1, -2, -1), 5.0),
        )
        loss = sum(xp.sum(p * c) for p, _, c in parts)
        tloss = sum((t * c).sum() for _, t, c in parts)
        w.grad = None
        loss.backward()
        tw.grad = None
        tloss.backward()
        np.testing.assert_allclose(np.asarray(w.grad), tw.grad.numpy())


def test_roll_plans_of_several_axes_read_each_views_own_offset_and_step_aside():
    """A roll of plain int shifts along several axes is planned once per layout (its blocks'
    one-call writer): views of that layout at other offsets roll their own elements, NumPy
    int shifts take the concats, and a tracked input of the same layout still records."""
    import torch

    rng = np.random.default_rng(9)
    whole = rng.standard_normal((12, 11)).astype(np.float32)
    sw = xp.asarray(whole)
    for _ in range(2):
        for lo in (0, 1, 3):
            for shift, axis in (((2, -3), (0, 1)), ((4, 1), (1, 1)), ((1, 2), (1, 0))):
                v = whole[lo : lo + 8, lo : lo + 6]
                got = xp.roll(sw[lo : lo + 8, lo : lo + 6], shift, axis=axis)
                np.testing.assert_array_equal(np.asarray(got), np.roll(v, shift, axis=axis))
            got = xp.fft.ifftshift(sw[lo : lo + 8, lo : lo + 6])
            np.testing.assert_array_equal(
                np.asarray(got), np.fft.ifftshift(whole[lo : lo + 8, lo : lo + 6])
            )
    key = (xp.float32, (8, 6), (11, 1), sw._device, (2, -3), (0, 1))
    assert key in manipulation._ROLL_PLANS
    shift = (np.int64(2), np.int64(-3))
    got = xp.roll(sw[:8, :6], shift, axis=(0, 1))
    np.testing.assert_array_equal(np.asarray(got), np.roll(whole[:8, :6], (2, -3), axis=(0, 1)))
    x = xp.asarray(whole[:8, :6].astype(np.float64), requires_grad=True)
    xp.roll(xp.asarray(whole[:8, :6].astype(np.float64)), (2, -3), axis=(0, 1))
    w = rng.standard_normal((8, 6))
    xp.sum(xp.roll(x, (2, -3), axis=(0, 1)) * xp.asarray(w)).backward()
    tm = torch.tensor(whole[:8, :6].astype(np.float64), requires_grad=True)
    (torch.roll(tm, (2, -3), dims=(0, 1)) * torch.tensor(w)).sum().backward()
    np.testing.assert_array_equal(np.asarray(x.grad), tm.grad.numpy())


def test_roll_along_several_axes_copies_blocks_like_numpy(monkeypatch):
    """roll along several axes of a large untracked array copies each block once into place:
    NumPy's values for 2-D and 3-D arrays, negative and oversized shifts, a repeated axis,
    shifts that cancel, transposed and stepped inputs, empty axes, bool and complex dtypes,
    and fftshift/ifftshift of a matrix; a tracked input still gets PyTorch's gradient."""
    import torch

    rng = np.random.default_rng(8)
    m = rng.standard_normal((7, 10))
    t3 = rng.standard_normal((4, 5, 6))
    cases = [
        (m, (3, -4), (0, 1)),
        (m, (17, 25), (1, 0)),
        (m, (2, 3), (0, 0)),
        (m, (3, -3), (1, 1)),
        (m.T, (1, 2), (0, 1)),
        (m[::2, ::3], (-1, 1), (-2, -1)),
        (t3, (1, 2, 3), (0, 1, 2)),
        (t3, (2, 5), (2, 0)),
        (np.zeros((3, 0, 4)), (1, 2), (0, 2)),
        (m > 0, (2, 5), (0, 1)),
        (m + 1j * m[::-1], (4, 1), (0, 1)),
    ]
    big = rng.standard_normal((300, 301))
    assert big.size >= manipulation._ROLL_BLOCKS_MIN > m.size
    cases += [(big, (3, -4), (0, 1)), (big.T[::-1], (150, 7), (0, 1))]
    for blocks_from in (manipulation._ROLL_BLOCKS_MIN, 0):  # (int shifts: blocks at any size)
        monkeypatch.setattr(manipulation, "_ROLL_BLOCKS_MIN", blocks_from)
        for a, shift, axis in cases:
            got = xp.roll(xp.asarray(a), shift, axis=axis)
            np.testing.assert_array_equal(np.asarray(got), np.roll(a, shift, axis=axis))
        for f in ("fftshift", "ifftshift"):
            for a in (m, big):
                got = getattr(xp.fft, f)(xp.asarray(a))
                np.testing.assert_array_equal(np.asarray(got), getattr(np.fft, f)(a))
    x = xp.asarray(m, requires_grad=True)
    xp.sum(
        xp.roll(x, (2, 3), axis=(0, 1)) * xp.asarray(t3[0, :, :].repeat(2, 0)[:7, :1])
    ).backward()
    tm = torch.tensor(m, requires_grad=True)
    w = torch.tensor(t3[0, :, :].repeat(2, 0)[:7, :1])
    (torch.roll(tm, (2, 3), dims=(0, 1)) * w).sum().backward()
    np.testing.assert_allclose(np.asarray(x.grad), tm.grad.numpy(), rtol=1e-12)


def test_broadcast_shapes_remembered_answers_and_errors_every_call():
    """Broadcast shapes are remembered per tuple of shapes: the same answers as NumPy on every
    call (shapes given as lists too), and a mismatch raises naming the op every time."""
    from strided import _shapes

    cases = [((3, 1), (1, 4)), ((2, 1, 5), (4, 1)), ((), (3,)), ((0, 1), (1, 7)), ((1,), (6, 1))]
    for _ in range(2):
        for a, b in cases:
            assert _shapes.broadcast_shapes(a, b) == np.broadcast_shapes(a, b)
            assert _shapes.broadcast_shapes(a, b, (1,)) == np.broadcast_shapes(a, b, (1,))
        assert _shapes.broadcast_shapes([3, 1], (1, 4)) == (3, 4)
        for op in ("broadcast_arrays", "add"):
            with pytest.raises(ValueError, match=f"^{op}: shapes \\(3, 2\\), \\(4,\\)"):
                _shapes.broadcast_shapes((3, 2), (4,), op=op)
    assert ((2, 1, 5), (4, 1)) in _shapes._BROADCAST
