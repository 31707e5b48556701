"""Outputs of elementwise maps keep their operands' memory order (NumPy's order='K') when the
operands share one dense layout, and values stay NumPy's whatever the order; real and conj of a
real array are the array itself (views under autograd)."""

from __future__ import annotations

import numpy as np
import pytest

import strided as xp
import strided.autograd as ag
from strided.backends.cpu.kernels import PARALLEL_THRESHOLD

# (shape, axes of the permutation): transposes of 2-, 3- and 4-d arrays, small and large enough
# for the parallel kernels (>= 65536 elements)
PERMUTED = [
    ((5, 7), (1, 0)),
    ((3, 4, 5), (2, 0, 1)),
    ((2, 3, 4, 5), (3, 1, 2, 0)),
    ((300, 400), (1, 0)),
]


def _permuted(a: np.ndarray, axes):
    return np.transpose(a, axes), xp.permute_dims(xp.asarray(a), axes)


def _order(strides) -> list:
    """The axes sorted from the fastest-varying in memory to the slowest."""
    return sorted(range(len(strides)), key=lambda i: strides[i])


def _check(ours, ref: np.ndarray, rtol: float = 0.0) -> None:
    got = np.asarray(ours)
    np.testing.assert_allclose(got, ref, rtol=rtol, atol=0)
    assert _order(ours._strides) == _order([s // ref.itemsize for s in ref.strides])
    # dense: the output occupies exactly size elements
    assert ours._buf.size == ref.size


@pytest.mark.parametrize("shape,axes", PERMUTED)
def test_unary_binary_scalar_and_comparison_outputs_follow_the_operands_order(shape, axes):
    rng = np.random.default_rng(0)
    a, x = _permuted(rng.standard_normal(shape).astype(np.float32), axes)
    b, y = _permuted(rng.standard_normal(shape).astype(np.float32), axes)
    _check(xp.exp(x), np.exp(a), rtol=4e-7)  # within 2 ulp of NumPy's float32 exp
    _check(x + y, a + b)
    _check(x * 2.5, a * np.float32(2.5))
    if a.size >= PARALLEL_THRESHOLD:
        # the parallel kernels get the order the dispatcher chose like the serial ones: three of
        # them show it (each further one cost ~2 s of compilation in a cold make test)
        return
    _check(xp.negative(x), -a)
    _check(1.5 - x, np.float32(1.5) - a)
    _check(x < y, a < b)
    _check(xp.logical_and(x > 0, y > 0), np.logical_and(a > 0, b > 0))
    _check(xp.where(x > 0, x, y), np.where(a > 0, a, b))
    _check(xp.astype(x, xp.float64), a.astype(np.float64))
    _check(xp.clip(x, -0.5, 0.5), np.clip(a, np.float32(-0.5), np.float32(0.5)))


@pytest.mark.parametrize("shape,axes", PERMUTED)
def test_mixed_dtypes_cast_in_the_operands_order(shape, axes):
    rng = np.random.default_rng(1)
    a, x = _permuted(rng.integers(-5, 5, shape).astype(np.int32), axes)
    b, y = _permuted(rng.standard_normal(shape), axes)
    _check(xp.astype(x, xp.float64) * y, a.astype(np.float64) * b)


def test_mixed_layouts_give_c_order_and_numpy_values():
    rng = np.random.default_rng(2)
    a = rng.standard_normal((6, 6))
    x = xp.asarray(a)
    out = x + xp.permute_dims(x, (1, 0))
    np.testing.assert_array_equal(np.asarray(out), a + a.T)
    assert out._strides == (6, 1)
    # a broadcast row does not vote; the transposed operand decides
    row = xp.asarray(a[0])
    t = xp.permute_dims(x, (1, 0))
    np.testing.assert_array_equal(np.asarray(t + row), a.T + a[0])
    # negative strides and gaps keep C order
    flipped = xp.flip(x, axis=0)
    assert (flipped * 2.0)._strides == (6, 1)
    np.testing.assert_array_equal(np.asarray(flipped * 2.0), a[::-1] * 2)
    gaps = x[:, ::2]
    assert (gaps * 2.0)._strides == (3, 1)


def test_transposed_results_reshape_and_export_correctly():
    a = np.arange(24.0).reshape(4, 6)
    t = xp.permute_dims(xp.asarray(a), (1, 0)) * 1.0
    assert t._strides != (4, 1)
    np.testing.assert_array_equal(np.asarray(xp.reshape(t, (-1,))), a.T.reshape(-1))
    np.testing.assert_array_equal(np.from_dlpack(t), a.T)


def test_gradients_through_transposed_maps_match_numpy():
    a = np.random.default_rng(3).standard_normal((5, 4))
    x = xp.asarray(a).requires_grad_()
    t = xp.permute_dims(x, (1, 0))
    y = xp.sum(xp.exp(t) * t)
    y.backward()
    np.testing.assert_allclose(np.asarray(x.grad), np.exp(a) * (1 + a), rtol=1e-12)


@pytest.mark.parametrize("fn", [xp.real, xp.conj])
@pytest.mark.parametrize("dtype", [xp.float32, xp.float64, xp.int32, xp.uint8])
def test_real_and_conj_of_real_arrays_are_views(fn, dtype):
    a = np.arange(12).reshape(3, 4).astype(dtype.name)
    x = xp.asarray(a)
    out = fn(x)
    # x itself: no copy and no new object (what a view would give, without its cost)
    assert out is x and out.dtype == x.dtype
    np.testing.assert_array_equal(np.asarray(out), a)
    t = fn(xp.permute_dims(x, (1, 0)))
    np.testing.assert_array_equal(np.asarray(t), a.T)


def test_real_and_conj_of_complex_arrays_compute_and_gradients_flow():
    z = np.array([1 + 2j, -3.5 - 0.5j])
    np.testing.assert_array_equal(np.asarray(xp.real(xp.asarray(z))), z.real)
    np.testing.assert_array_equal(np.asarray(xp.conj(xp.asarray(z))), z.conj())
    x = xp.asarray(np.array([1.0, 2.0, 3.0])).requires_grad_()
    xp.sum(xp.real(x) * 2.0 + xp.conj(x) * x).backward()
    np.testing.assert_allclose(np.asarray(x.grad), 2.0 + 2 * np.array([1.0, 2.0, 3.0]))
    with ag.no_grad():
        assert xp.real(x) is x
    view = xp.real(x)  # x records gradients: a view the tape sees, sharing x's memory
    assert view is not x and view._buf is x._buf
    with pytest.raises(TypeError, match="real"):
        xp.real(xp.asarray([True]))


@pytest.mark.parametrize("shape,axes", PERMUTED)
def test_scans_follow_a_dense_layout_like_numpy(shape, axes):
    """cumulative_sum/prod of a permuted array: NumPy's bits in the input's memory order (the
    scan then runs across contiguous rows); repeated calls and include_initial too."""
    rng = np.random.default_rng(6)
    a, x = _permuted(rng.uniform(0.5, 1.5, shape), axes)
    for axis in range(len(shape)):
        for _ in range(2):
            _check(xp.cumulative_sum(x, axis=axis), np.cumsum(a, axis=axis))
            _check(xp.cumulative_prod(x, axis=axis), np.cumprod(a, axis=axis))
        got = xp.cumulative_sum(x, axis=axis, include_initial=True)
        zero = np.zeros_like(np.take(a, [0], axis=axis))
        np.testing.assert_array_equal(
            np.asarray(got), np.concatenate([zero, np.cumsum(a, axis=axis)], axis=axis)
        )


def test_positive_still_copies():
    x = xp.asarray(np.arange(4.0))
    y = +x
    y += 1.0
    np.testing.assert_array_equal(np.asarray(x), np.arange(4.0))


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_concat_of_transposed_inputs_keeps_their_order_like_numpy(axis):
    rng = np.random.default_rng(4)
    a = rng.standard_normal((6, 5)).astype(np.float32)
    b = rng.standard_normal((6, 5)).astype(np.float32)
    x, y = (xp.permute_dims(xp.asarray(v), (1, 0)) for v in (a, b))
    _check(xp.concat([x, y], axis=axis), np.concatenate([a.T, b.T], axis=axis))
    # one C-ordered input among them: C order, values unchanged
    mixed = xp.concat([x, xp.asarray(np.ascontiguousarray(b.T))], axis=axis)
    np.testing.assert_array_equal(np.asarray(mixed), np.concatenate([a.T, b.T], axis=axis))
    assert mixed._strides == (mixed.shape[1], 1)


def test_small_concats_repeated_over_parts_and_layouts_match_numpy():
    """A small concat's plan is reused by later calls with inputs laid out alike: two dense
    parts in one call (join_two), at other offsets of the same arrays, with an empty part, a
    part of another dtype (cast), three parts, and transposed parts; NumPy's values each time."""
    rng = np.random.default_rng(17)
    a = rng.standard_normal((8, 5)).astype(np.float32)
    b = rng.standard_normal((8, 5)).astype(np.float32)
    sa, sb = xp.asarray(a), xp.asarray(b)
    for _ in range(2):
        for i in range(3):  # rows at other offsets: one plan
            got = xp.concat([sa[i], sb[i + 1]])
            np.testing.assert_array_equal(np.asarray(got), np.concatenate([a[i], b[i + 1]]))
            got = xp.concat([sa[i : i + 2], sb[i : i + 3]], axis=0)
            np.testing.assert_array_equal(
                np.asarray(got), np.concatenate([a[i : i + 2], b[i : i + 3]])
            )
        np.testing.assert_array_equal(np.asarray(xp.concat([sa[:0], sb])), b)
        i16 = xp.asarray(np.arange(5, dtype=np.int16))
        np.testing.assert_array_equal(
            np.asarray(xp.concat([sa[0], i16])),
            np.concatenate([a[0], np.arange(5, dtype=np.int16)]),
        )
        np.testing.assert_array_equal(
            np.asarray(xp.concat([sa, sb, sa])), np.concatenate([a, b, a])
        )
        np.testing.assert_array_equal(
            np.asarray(xp.concat([sa.T, sb.T], axis=1)), np.concatenate([a.T, b.T], axis=1)
        )


def test_where_calls_repeated_over_layouts_and_scalars_match_numpy():
    """where's memoized plans: each layout and scalar gets its own (the result follows a shared
    dense order), and an int scalar's range is checked on every call."""
    rng = np.random.default_rng(5)
    c = rng.random((6, 8)) < 0.5
    a = rng.standard_normal((6, 8)).astype(np.float32)
    b = rng.integers(-5, 5, (6, 8)).astype(np.int8)
    for _ in range(3):  # the first call plans, the later ones reuse the plan
        for cc, aa in ((c, a), (c.T, a.T), (c[:, ::2], a[:, ::2]), (c.T.copy(), a.T)):
            got = xp.where(xp.asarray(cc), xp.asarray(aa), xp.asarray(aa) * 2)
            np.testing.assert_array_equal(np.asarray(got), np.where(cc, aa, aa * 2))
        got = xp.where(xp.asarray(c), xp.asarray(b), 7)
        np.testing.assert_array_equal(np.asarray(got), np.where(c, b, np.int8(7)))
        assert got.dtype == xp.int8
        with pytest.raises((OverflowError, TypeError, ValueError)):
            xp.where(xp.asarray(c), xp.asarray(b), 1000)
        at = xp.asarray(a).T
        assert xp.where(xp.asarray(c).T, at, at)._strides == at._strides  # follows the order
        got = xp.where(xp.asarray(c), 1.5, xp.asarray(a))
        np.testing.assert_array_equal(np.asarray(got), np.where(c, np.float32(1.5), a))


@pytest.mark.parametrize("shape", [(6, 8), (300, 301)])
@pytest.mark.parametrize("dtype", ["float32", "int8", "bool", "complex128"])
def test_where_with_python_scalars_over_layouts_and_sizes_matches_numpy(shape, dtype):
    """where with a Python scalar for x1, x2 or both: the scalar read once and a vector select
    (small calls memoized, 300x301 over threads), the strided loop for other layouts; NumPy's
    values on every repeat of each call."""
    rng = np.random.default_rng(9)
    c = rng.random(shape) < 0.5
    a = (rng.standard_normal(shape) * 50).astype(dtype)
    s1, s2 = {"int8": (7, -3), "bool": (True, False), "complex128": (1 + 2j, -0.5)}.get(
        dtype, (1.5, -2.25)
    )
    one = np.dtype(dtype).type
    for _ in range(2):  # the second round runs the memoized plans
        for cc, aa in ((c, a), (c.T, a.T), (c[:, ::2], a[:, ::2])):
            cs, as_ = xp.asarray(cc), xp.asarray(aa)
            if cc is not c:  # the transposes and steps as views of strided arrays
                cs = xp.asarray(c).T if cc.shape == c.T.shape else xp.asarray(c)[:, ::2]
                as_ = xp.asarray(a).T if cc.shape == c.T.shape else xp.asarray(a)[:, ::2]
            for x1, x2, w1, w2 in ((s1, as_, one(s1), aa), (as_, s2, aa, one(s2))):
                got = xp.where(cs, x1, x2)
                assert got.dtype == as_.dtype
                np.testing.assert_array_equal(np.asarray(got), np.where(cc, w1, w2))
            both = xp.where(cs, s1, s2)
            np.testing.assert_array_equal(np.asarray(both), np.where(cc, s1, s2))


@pytest.mark.parametrize("n", [50, 30000])
def test_maps_with_a_short_inner_dimension_match_numpy(n):
    """Maps whose innermost dimension is short (N x 3 points plus a row, a column slice, repeat's
    copy of a broadcast, a (N, 1, 2) broadcast, where and clip on such layouts) run the long
    dimension innermost: NumPy's values, small and threaded sizes."""
    rng = np.random.default_rng(n)
    pts = rng.standard_normal((n, 3)).astype(np.float32)
    row = rng.standard_normal(3).astype(np.float32)
    p, r = xp.asarray(pts), xp.asarray(row)
    np.testing.assert_array_equal(np.asarray(p + r), pts + row)
    np.testing.assert_array_equal(np.asarray(r * p), row * pts)
    np.testing.assert_array_equal(np.asarray(xp.asarray(p[:, :2], copy=True)), pts[:, :2])
    np.testing.assert_array_equal(np.asarray(xp.asarray(p[::2, 1:], copy=True)), pts[::2, 1:])
    v = pts[:, 0].copy()
    np.testing.assert_array_equal(np.asarray(xp.repeat(xp.asarray(v), 3)), np.repeat(v, 3))
    pair = rng.standard_normal((n, 1, 2))
    np.testing.assert_array_equal(
        np.asarray(xp.asarray(pair) - xp.asarray(pair[:4, 0])), pair - pair[:4, 0]
    )
    c = pts > 0
    np.testing.assert_array_equal(np.asarray(xp.where(xp.asarray(c), p, r)), np.where(c, pts, row))
    got = xp.clip(p, xp.asarray(-row), xp.asarray(np.abs(row)))
    np.testing.assert_array_equal(np.asarray(got), np.clip(pts, -row, np.abs(row)))


def test_small_broadcasting_binary_ops_reuse_their_plans_like_numpy():
    """A small binary op whose operands broadcast (a row, a column, a 3-D slab, a transposed or
    stepped operand) plans its loop call once per shapes and strides; later calls with other
    offsets (other rows of the same array) and other layouts still give NumPy's values."""
    rng = np.random.default_rng(21)
    m = rng.standard_normal((6, 8)).astype(np.float32)
    t3 = rng.standard_normal((3, 6, 8)).astype(np.float32)
    s, s3 = xp.asarray(m), xp.asarray(t3)
    st = xp.asarray(np.ascontiguousarray(m.T)).T  # m's values, transposed layout
    cases = []
    for i in (0, 3, 5):  # the same layout at other offsets: one plan, offsets per call
        cases.append((s, s[i], m, m[i]))
        cases.append((s, s[:, i : i + 1], m, m[:, i : i + 1]))
    cases += [(st, s[2], m, m[2]), (s[:, ::2], s[1, ::2], m[:, ::2], m[1, ::2])]
    cases += [
        (s3, s, t3, m),
        (s3, s[1:2], t3, m[1:2]),
        (s3[:, :, ::2], s[:, ::2], t3[:, :, ::2], m[:, ::2]),
    ]
    for _ in range(2):
        for a, b, an, bn in cases:
            for fn, ref in ((xp.subtract, np.subtract), (xp.multiply, np.multiply)):
                np.testing.assert_array_equal(np.asarray(fn(a, b)), ref(an, bn))
                np.testing.assert_array_equal(np.asarray(fn(b, a)), ref(bn, an))
            np.testing.assert_array_equal(np.asarray(xp.less(a, b)), np.less(an, bn))


def test_broadcasting_binary_ops_take_the_memoized_broadcast_lane_like_numpy():
    """Two small arrays of different shapes: the op's memoized plan keeps the backend's
    broadcasting kernel (planned per pair of strides), which serves rows and columns of other
    offsets, either order, integer ops whose kernels wrap the loop (floor_divide, pow), and
    steps aside for a layout that takes more than one loop call."""
    from strided import dispatch

    rng = np.random.default_rng(5)
    m = rng.integers(1, 9, (6, 8)).astype(np.int32)
    s = xp.asarray(m)
    ops = [
        (xp.subtract, np.subtract),
        (xp.floor_divide, np.floor_divide),
        (xp.pow, np.power),
        (xp.maximum, np.maximum),
    ]
    for _ in range(2):
        for i in (0, 2, 5):
            for fn, ref in ops:
                np.testing.assert_array_equal(np.asarray(fn(s, s[i])), ref(m, m[i]))
                np.testing.assert_array_equal(np.asarray(fn(s[i], s)), ref(m[i], m))
                col, coln = s[:, i : i + 1], m[:, i : i + 1]
                np.testing.assert_array_equal(np.asarray(fn(s, col)), ref(m, coln))
    spec = dispatch.primitive("subtract")._specs[(xp.int32, xp.int32, (6, 8), (8,))]
    assert spec[8] is not None  # the broadcasting kernel is part of the plan
    # a (2, 3, 4, 5) stepped slab against a row: more than one loop call, the general route
    big = rng.integers(1, 9, (4, 6, 8, 10)).astype(np.int32)
    sb = xp.asarray(big)
    for _ in range(2):
        got = xp.subtract(sb[::2, ::2, ::2, ::2], sb[0, 0, 0, ::2])
        np.testing.assert_array_equal(np.asarray(got), big[::2, ::2, ::2, ::2] - big[0, 0, 0, ::2])


@pytest.mark.parametrize("n", [5, 300, 4097])
@pytest.mark.parametrize("dtype", ["float32", "int16"])
def test_small_stepped_vectors_run_in_one_loop_call_like_numpy(n, dtype):
    """Vectors at a step (x[::2], x[::-3], a broadcast element) through unary ops, with another
    vector or a Python scalar on either side: the serial loop takes their steps (the loop for a
    constant operand, which reads the other at unit stride, only where that one is dense)."""
    rng = np.random.default_rng(n)
    base = rng.integers(-20, 20, 4 * n + 3).astype(dtype)
    s = xp.asarray(base)
    views = [(base[1::2][:n], s[1::2][:n]), (base[::-3][:n], s[::-3][:n]),
             (np.broadcast_to(base[5:6], (n,)), xp.broadcast_to(s[5:6], (n,))),
             (base[2 : 2 + n], s[2 : 2 + n])]  # fmt: skip
    for a, sa in views:
        for name in ("abs", "negative", "square", "isnan"):
            np.testing.assert_array_equal(np.asarray(getattr(xp, name)(sa)), getattr(np, name)(a))
        for b, sb in views:
            for name in ("add", "subtract", "maximum", "less"):
                want = getattr(np, name)(a, b)
                np.testing.assert_array_equal(np.asarray(getattr(xp, name)(sa, sb)), want)
        for name in ("subtract", "multiply", "greater_equal"):
            f, g = getattr(xp, name), getattr(np, name)
            np.testing.assert_array_equal(np.asarray(f(sa, 3)), g(a, np.asarray(3, dtype)))
            np.testing.assert_array_equal(np.asarray(f(3, sa)), g(np.asarray(3, dtype), a))


@pytest.mark.parametrize("one", [(), (1,), (1, 1), (1, 1, 1)])
def test_binary_ops_with_a_one_element_operand_match_numpy(one):
    """An operand of one element (0-d, (1, 1), ...) broadcast like a scalar, on either side."""
    rng = np.random.default_rng(8)
    a = rng.standard_normal((5, 7)).astype(np.float32)
    b = np.asarray(rng.standard_normal(one).astype(np.float32) + 2.0)
    for fn, ref in ((xp.subtract, np.subtract), (xp.divide, np.divide), (xp.pow, np.power)):
        for x, y in ((a, b), (b, a), (a.T, b)):
            got = fn(xp.asarray(x), xp.asarray(y))
            want = ref(np.abs(x) if ref is np.power else x, y)
            if ref is np.power:
                got = fn(xp.abs(xp.asarray(x)), xp.asarray(y))
            assert got.shape == want.shape
            np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6)


@pytest.mark.parametrize("shape,axes", [((6, 8), (1, 0)), ((3, 4, 5), (2, 0, 1))])
def test_astype_and_c_copies_of_permuted_arrays_alternate_like_numpy(shape, axes):
    """astype of a permuted dense array keeps its order (one flat pass over memory, memoized for
    that layout) and a C copy of the same array is C-ordered, whichever of the two plans was
    made first and however often they alternate: both equal NumPy's astype/copy."""
    rng = np.random.default_rng(14)
    a, x = _permuted(rng.integers(-50, 50, shape).astype(np.int32), axes)
    for _ in range(3):
        for to in (xp.float32, xp.int32, xp.float64):
            got = xp.astype(x, to)
            _check(got, a.astype(to.name))
            if to is not xp.int32:  # (astype to its own dtype returns x itself)
                assert got._strides == x._strides
            c = xp.asarray(x, copy=True)
            assert c._strides == tuple(
                np.ascontiguousarray(a).strides[i] // 4 for i in range(a.ndim)
            )
            np.testing.assert_array_equal(np.asarray(c), a)


_REPEAT_CASES = [
    (n, dtype)
    for dtype in (np.bool_, np.int8, np.int64, np.float32, np.complex128)
    for n in (7, 1000, 70001)
    if n < 70001 or dtype in (np.bool_, np.float32)  # (threaded: two dtypes' compiles suffice)
]


@pytest.mark.parametrize("n,dtype", _REPEAT_CASES)
def test_copies_of_an_operand_repeated_along_a_short_unit_stride_dimension_match_numpy(n, dtype):
    """repeat(x, r) for r of 1-6 (the repeat kernels' unrolled counts and the general loop), of
    strided and reversed vectors and along an axis of a 2-D array, a column broadcast to (n, 3)
    copied, and a cast of such a broadcast (the rank-3 copy): NumPy's values at small sizes and
    the threaded one."""
    rng = np.random.default_rng(n)
    v = (rng.standard_normal(2 * n) * 50).astype(dtype)
    x = xp.asarray(v)
    for r in range(1, 7):
        np.testing.assert_array_equal(np.asarray(xp.repeat(x, r)), np.repeat(v, r))
        np.testing.assert_array_equal(np.asarray(xp.repeat(x[::2], r)), np.repeat(v[::2], r))
        np.testing.assert_array_equal(np.asarray(xp.repeat(x[::-3], r)), np.repeat(v[::-3], r))
    m = v[: 2 * (n // 2)].reshape(2, -1)
    for axis in (0, 1):
        got = xp.repeat(xp.asarray(m), 3, axis=axis)
        np.testing.assert_array_equal(np.asarray(got), np.repeat(m, 3, axis=axis))
    col = xp.broadcast_to(x[:n, None], (n, 3))
    np.testing.assert_array_equal(
        np.asarray(xp.asarray(col, copy=True)), np.repeat(v[:n, None], 3, 1)
    )
    target = np.complex64 if dtype is np.complex128 else np.float64
    wide = xp.astype(col, getattr(xp, np.dtype(target).name))
    np.testing.assert_array_equal(np.asarray(wide), np.repeat(v[:n, None], 3, 1).astype(target))


def test_c_order_strides_remembered_or_computed_are_numpys():
    """C-order strides (in elements) of shapes with zeros and ones, as a tuple (remembered
    after the first call) or a list (computed each time): NumPy's strides over the itemsize,
    with a zero-length axis stepping as if it had length one."""
    from strided._shapes import contiguous_strides

    for shape in ((), (7,), (2, 3), (4, 1, 5), (3, 0, 2), (2, 3, 4, 5)):
        want = tuple(s // 8 for s in np.empty([max(d, 1) for d in shape]).strides)
        for _ in range(2):
            assert contiguous_strides(shape) == want
            assert contiguous_strides(list(shape)) == want


@pytest.mark.parametrize("n", [1, 5, 300])
@pytest.mark.parametrize("dtype", ["float32", "int16"])
def test_stepped_vectors_take_the_backends_stepped_loop(n, dtype, monkeypatch):
    """A vector at another step (x[::2], x[::-3]) with a vector or a Python scalar, or alone,
    goes from the dispatcher straight to the backend's stepped loop (``dense.stepped``) on every
    call, first and repeated: a C-ordered result with NumPy's values."""
    from strided import dispatch

    rng = np.random.default_rng(n)
    base = rng.integers(-20, 20, 4 * n + 3).astype(dtype)
    s = xp.asarray(base)
    d = getattr(xp, dtype)
    calls = {"add": (s[1::2][:n], s[::-3][:n]), "multiply": (s[::2][:n], 3),
             "subtract": (3, s[::-3][:n]), "negative": (s[::2][:n],)}  # fmt: skip
    for name, args in calls.items():
        fn, ref = getattr(xp, name), getattr(np, name)
        np_args = [np.asarray(a) if isinstance(a, xp.Array) else np.asarray(a, dtype) for a in args]
        fn(*args)  # (the rule's first call remembers the spec)
        # the memoized spec's key: each operand's dtype (a scalar's type), then the arrays' shapes
        key = tuple(d if isinstance(a, xp.Array) else type(a) for a in args) + tuple(
            a.shape for a in args if isinstance(a, xp.Array)
        )
        dense = dispatch.primitive(name)._specs[key][7]
        seen = []

        def spy(*a, f=dense.stepped, seen=seen):
            seen.append(a)
            return f(*a)

        monkeypatch.setattr(dense, "stepped", spy)
        for _ in range(3):
            got = fn(*args)
            np.testing.assert_array_equal(np.asarray(got), ref(*np_args), err_msg=name)
            assert got._strides == (1,) and got._offset == 0
        assert len(seen) == 3, name
