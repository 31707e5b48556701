"""The CPU backend itself: generated loops are current, layouts of every rank and direction,
serial and parallel paths agree with NumPy."""

from __future__ import annotations

import numpy as np
import pytest

import strided as xp
from strided._layout import simplify, split_outer
from strided.backends.cpu import _codegen, kernels


def test_generated_kernels_are_current():
    assert _codegen.TARGET.read_text() == _codegen.generate(), (
        "strided/backends/cpu/_generated_kernels.py is stale: run "
        "python -m strided.backends.cpu._codegen"
    )


def test_simplify_merges_contiguous_and_flips_reversed_axes():
    assert simplify((2, 3, 4), [(12, 4, 1), (12, 4, 1)]) == ((24,), [(1,), (1,)], [0, 0])
    shape, strides, offsets = simplify((3, 4), [(4, 1), (1, 3)])
    assert shape == (3, 4) and strides == [(4, 1), (1, 3)]
    shape, strides, offsets = simplify((5,), [(-1,), (-1,)], [4, 4])
    assert shape == (5,) and strides == [(1,), (1,)] and offsets == [0, 0]
    assert simplify((2, 0, 3), [(0, 3, 1)])[0] is None
    assert simplify((1, 1), [(5, 7)])[0] == ()


def test_split_outer_visits_every_block_once():
    shape, strides = (2, 3, 2, 2, 5), [(60, 20, 10, 5, 1)]
    seen = []
    for offs, inner, _ in split_outer(shape, strides, [0], 3):
        assert inner == (2, 2, 5)
        seen.append(offs[0])
    assert sorted(seen) == [i * 60 + j * 20 for i in range(2) for j in range(3)]


@pytest.mark.parametrize("layout", ["c", "f", "negative", "5d-noncontiguous"])
def test_large_arrays_take_the_parallel_path(layout):
    rng = np.random.default_rng(0)
    base = rng.standard_normal((300, 400))
    if layout == "c":
        a_np = base
    elif layout == "f":
        a_np = np.asfortranarray(base)
    elif layout == "negative":
        a_np = base[::-1, ::-1]
    else:
        a_np = rng.standard_normal((4, 3, 20, 5, 60))[:, ::2, :, ::-1, ::3]
    assert a_np.size >= kernels.PARALLEL_THRESHOLD or layout == "5d-noncontiguous"
    a = xp.asarray(a_np)
    np.testing.assert_allclose(np.asarray(a * 2.0 + a), a_np * 3.0)
    np.testing.assert_allclose(np.asarray(xp.exp(a)), np.exp(a_np), rtol=1e-13)
    np.testing.assert_allclose(np.asarray(xp.where(a > 0, a, 0.0)), np.maximum(a_np, 0.0))
    for axis in (None, 0, -1, (0, -1)):
        np.testing.assert_allclose(
            np.asarray(xp.sum(a, axis=axis)), a_np.sum(axis=axis), rtol=1e-10, atol=1e-10
        )
        np.testing.assert_array_equal(np.asarray(xp.max(a, axis=axis)), a_np.max(axis=axis))
    np.testing.assert_allclose(
        np.asarray(xp.cumulative_sum(a, axis=1)), np.cumsum(a_np, axis=1), rtol=1e-12
    )


def test_full_reduction_of_a_long_run_uses_partials_correctly():
    n = 4 * kernels.PARALLEL_THRESHOLD + 13  # not a multiple of the number of partials
    v = np.arange(n, dtype=np.float64)
    assert float(xp.sum(xp.asarray(v))) == v.sum()
    assert float(xp.max(xp.asarray(v))) == n - 1
    assert float(xp.min(xp.asarray(v[::-1]))) == 0
    w = v.copy()
    w[n // 3] = np.nan
    assert np.isnan(float(xp.max(xp.asarray(w))))
    i = np.arange(n, dtype=np.int64) % 7
    assert int(xp.sum(xp.asarray(i))) == int(i.sum())


def test_integer_floor_divide_by_minus_one_does_not_trap():
    x = xp.asarray(np.array([np.iinfo(np.int64).min, 7], dtype=np.int64))
    got = np.asarray(x // -1)
    assert got[1] == -7 and got[0] == np.iinfo(np.int64).min  # wraps around, like NumPy
    assert np.asarray(x % -1).tolist() == [0, 0]


def test_the_backend_implements_every_elementwise_primitive_with_its_arity():
    """The CPU backend lists its elementwise ops itself (it does not import the op layer); the
    list must match the primitives the op layer declares."""
    from strided._ops.elementwise import ELEMENTWISE
    from strided.backends.cpu import _codegen

    assert _codegen.elementwise_ops() == {n: row[0] for n, row in ELEMENTWISE.items()}


@pytest.mark.parametrize("dtype", ["int8", "int32", "uint16", "int64"])
@pytest.mark.parametrize("name", ["isnan", "isinf", "isfinite"])
def test_isnan_family_of_large_integer_arrays_is_a_fill(name, dtype):
    """Large integer inputs take a fill (never NaN or infinite) instead of a loop; same values
    as NumPy, also for a transposed input."""
    a = np.arange(200_000, dtype=dtype).reshape(400, 500)
    for x, ref in ((xp.asarray(a), a), (xp.asarray(a).T, a.T)):
        got = np.asarray(getattr(xp, name)(x))
        want = getattr(np, name)(ref)
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize(
    "n", [0, 1, 7, kernels.PARALLEL_THRESHOLD - 1, kernels.PARALLEL_THRESHOLD + 5]
)
def test_fill_of_a_dense_run_writes_exactly_its_elements(n):
    """kernels.fill's flat lane (a dense run at an offset, serial and threaded) writes the run
    and nothing around it; a strided run takes the general map with the same result."""
    for dtype, value in (("float64", 2.5), ("bool", True), ("int16", -3), ("complex64", 1j)):
        buf = np.zeros(n + 10, dtype)
        kernels.fill((buf, 4, (1,)), (n,), value)
        want = np.zeros(n + 10, dtype)
        want[4 : 4 + n] = value
        np.testing.assert_array_equal(buf, want)
        cols = max(n // 3, 1)  # a (3, cols) block laid out transposed: dense in another order
        block = np.zeros(3 * cols + 4, dtype)
        kernels.fill((block, 2, (1, 3)), (3, cols), value)
        want = np.zeros(3 * cols + 4, dtype)
        want[2 : 2 + 3 * cols] = value
        np.testing.assert_array_equal(block, want)
        for step in (3, -2):  # one strided run, either direction (eye's diagonal)
            line = np.zeros(abs(step) * n + 6, dtype)
            start = 2 if step > 0 else 2 + abs(step) * (n - 1)
            kernels.fill((line, start, (step,)), (n,), value)
            want = np.zeros(abs(step) * n + 6, dtype)
            if n:
                want[2 : 2 + abs(step) * (n - 1) + 1 : abs(step)] = value
            np.testing.assert_array_equal(line, want)
        rows = max(n // 5, 1)
        grid = np.zeros((rows, 7), dtype)  # (rows, 5) of a (rows, 7) grid: not one dense run
        kernels.fill((grid.reshape(-1), 1, (7, 1)), (rows, 5), value)
        want = np.zeros((rows, 7), dtype)
        want[:, 1:6] = value
        np.testing.assert_array_equal(grid, want)


@pytest.mark.parametrize(
    "n", [0, 1, 7, kernels.PARALLEL_THRESHOLD - 1, kernels.PARALLEL_THRESHOLD + 5]
)
def test_fill_of_a_whole_buffer_or_a_vector_view_writes_exactly_its_elements(n):
    """The fills by ndarray.fill: kernels.fill of a dense run that is its whole buffer (1-D
    and 2-D), and the backend's fill of a 1-D array that is a whole buffer, a part of one or a
    stepped view of one (eye's diagonal); the elements around a view keep their values."""
    from strided.backends.cpu import fill_cpu

    for dtype, value in (("float32", 2.5), ("bool", True), ("uint64", 2**64 - 1), ("int8", -3)):
        buf = np.zeros(n, dtype)
        kernels.fill((buf, 0, (1,)), (n,), value)
        np.testing.assert_array_equal(buf, np.full(n, value, dtype))
        rows = max(n // 4, 1)
        grid = np.zeros(rows * 4, dtype)
        kernels.fill((grid, 0, (4, 1)), (rows, 4), value)
        np.testing.assert_array_equal(grid, np.full(rows * 4, value, dtype))
        whole = xp.zeros(n, dtype=getattr(xp, dtype))
        fill_cpu(whole, value)
        np.testing.assert_array_equal(np.asarray(whole), np.full(n, value, dtype))
        for start, step in ((0, 1), (5, 1), (2, 3), (0, 7)):
            base = np.arange(step * n + 9).astype(dtype)
            x = xp.asarray(base.copy())
            view = x[start : start + step * n : step]
            assert view.shape == (n,)
            fill_cpu(view, value)
            want = base.copy()
            want[start : start + step * n : step] = value
            np.testing.assert_array_equal(np.asarray(x), want)


@pytest.mark.parametrize("dtype", [np.float32, np.int64])
def test_c_ordered_copy_of_a_transpose_matches_numpy(dtype):
    """A dense array in another memory order (a transpose, a permutation) copied in C order
    (``asarray(copy=True)``, ``reshape``) runs the copy's planned transposing lane, and
    ``astype`` (order "K") keeps the input's order: NumPy's values and strides, twice (the
    planned lane is kept per layout), and views of that layout at other offsets (matrices of
    a stack) read their own elements."""
    rng = np.random.default_rng(3)
    stack = rng.integers(-1000, 1000, (3, 40, 24)).astype(dtype)
    s = xp.asarray(stack)
    for _ in range(2):
        for i in range(3):
            for got, want in (
                (xp.asarray(s[i].mT, copy=True), stack[i].T.copy()),
                (xp.reshape(s[i].mT, (-1,)), stack[i].T.reshape(-1)),
                (xp.asarray(xp.permute_dims(s, (2, 0, 1)), copy=True),
                 np.transpose(stack, (2, 0, 1)).copy()),
            ):  # fmt: skip
                np.testing.assert_array_equal(np.asarray(got), want)
                itemsize = np.dtype(dtype).itemsize
                assert got.strides == tuple(st // itemsize for st in want.strides)
            kept = xp.astype(s[i].mT, s.dtype, copy=True)  # order "K": the transpose's layout
            np.testing.assert_array_equal(np.asarray(kept), stack[i].T)
            assert kept.strides == (1, 24)


@pytest.mark.parametrize(
    "n", [1, 7, kernels.PARALLEL_THRESHOLD - 1, kernels.PARALLEL_THRESHOLD + 5]
)
def test_copy_between_vectors_of_any_steps(n):
    """The backend's copy of one vector into another (x[a:b] = y, x[::2] = y[::-3], a cast on
    the way, a broadcast element): each target element gets its source element, the elements
    between the target's steps keep their values."""
    from strided.backends.cpu import copy_cpu

    src = np.arange(1, 3 * n + 1, dtype=np.float64)
    pairings = [(1, 1, "float64"), (2, 2, "float64"), (3, -2, "float64"), (-1, 1, "float32"),
                (1, 0, "int16"), (2, 1, "int64")]  # fmt: skip
    for out_step, x_step, x_dtype in pairings:
        base = np.full(3 * n + 4, -1.0)
        target = xp.asarray(base.copy())
        t_view = target[::out_step][:n] if out_step > 0 else target[n - 1 :: out_step]
        source = xp.asarray(src.astype(x_dtype))
        if x_step:
            s_view = source[::x_step][:n]
        else:
            s_view = xp.broadcast_to(source[:1], (n,))
        assert t_view.shape == s_view.shape == (n,)
        copy_cpu(t_view, s_view)
        want = base.copy()
        w_view = want[::out_step][:n] if out_step > 0 else want[n - 1 :: out_step]
        w_view[...] = np.asarray(s_view).astype(np.float64)
        np.testing.assert_array_equal(np.asarray(target), want)


@pytest.mark.parametrize("dtype", ["bool", "int8", "uint16", "float32", "int32", "float64"])
def test_every_other_element_of_a_long_vector_is_read_as_halves_of_pairs(dtype, monkeypatch):
    """x[::2] and x[:, ::2] of 1-, 2- and 4-byte elements copied as the low or high halves of
    unsigned pairs (an even or odd offset), its last element ending the buffer or not; 8-byte
    elements take the copy loop.  A step-2 operand of any elementwise op is staged through that
    copy (the op then runs on unit strides), imag's operand is not (never read for a real
    array)."""
    import strided.backends.cpu as cpu

    calls = []

    def spy(out, x, f=cpu._deinterleave):
        calls.append(f(out, x))
        return calls[-1]

    monkeypatch.setattr(cpu, "_deinterleave", spy)
    n = kernels.PARALLEL_THRESHOLD + 11  # odd: [::2] of it ends at the buffer's last element
    for size in (2 * n, 2 * n - 1, 2 * n + 2):
        src = np.random.default_rng(size).integers(-50, 50, size).astype(dtype)
        src = src > 0 if dtype == "bool" else src  # (half of each)
        s = xp.asarray(src)
        for start in (0, 1, 2):
            calls.clear()
            np.testing.assert_array_equal(
                np.asarray(xp.asarray(s[start::2], copy=True)), src[start::2]
            )
            assert calls == [np.dtype(dtype).itemsize <= 4], (size, start)
    # every other column of a matrix: rows at step 2 (an odd width: rows of alternate halves,
    # the copy loop), the last one ending the buffer or not
    for rows, width in ((900, 440), (3, 2 * n), (n, 4), (400, 441)):
        m = np.random.default_rng(rows).integers(-50, 50, (rows, width)).astype(dtype)
        m = m > 0 if dtype == "bool" else m
        sm = xp.asarray(m)
        for part in (np.s_[:, ::2], np.s_[:, 1::2], np.s_[1::3, 2::2]):
            calls.clear()
            got = np.asarray(xp.asarray(sm[part], copy=True))
            np.testing.assert_array_equal(got, m[part])
            served = np.dtype(dtype).itemsize <= 4 and width % 2 == 0
            served = served and m[part].size >= kernels.PARALLEL_THRESHOLD
            assert (True in calls) == served, (rows, width, part)
    if dtype in ("float32", "int32"):
        calls.clear()
        np.testing.assert_array_equal(np.asarray(xp.abs(sm[:, 1::2])), np.abs(m[:, 1::2]))
        assert calls == [False]  # (an odd width)
        calls.clear()
        # (remainder: an op without the loops that read vectors at step 2 as pairs)
        seven = np.asarray(7, dtype)
        for part in (np.s_[1::2], np.s_[::2]):
            got = np.asarray(xp.remainder(s[part], 7))
            np.testing.assert_array_equal(got, np.remainder(src[part], seven))
        assert calls == [True, True]
        calls.clear()
        np.testing.assert_array_equal(np.asarray(xp.imag(s[::2])), np.zeros_like(src[::2]))
        assert calls == []


#: (op, arity, dtypes) of the pair-loop cases: every kind of element first_of_pair reads (and
#: outputs of another dtype), few ops (each op and dtype compiles two loops of one template)
_PAIR_CASES = [("negative", 1, ["int8", "uint64", "float32", "float64"]),
               ("isnan", 1, ["float64"]), ("logical_not", 1, ["bool"]),
               ("subtract", 2, ["int8", "uint64", "float32", "float64"]),
               ("less", 2, ["float32"]), ("logical_xor", 2, ["bool"])]  # fmt: skip


@pytest.mark.parametrize("n", [kernels.PARALLEL_THRESHOLD + 11, 1500])
@pytest.mark.parametrize("dtype", ["bool", "int8", "uint64", "float32", "float64"])
def test_vectors_at_step_2_are_read_as_pairs(n, dtype, monkeypatch):
    """Unary and binary ops of vectors at step 2 (x[::2], x[1::2]; with each other or a Python
    scalar on either side) run the loops that read both elements of each pair (``{op}_2``
    serial, ``{op}_2p`` parallel from the parallel size), the last element ending its buffer or
    not: the values of the same op on contiguous copies, bit for bit."""
    import strided.backends.cpu as cpu

    served = []

    def spy(name, out, inputs, f=cpu._pairs_run):
        served.append(f(name, out, inputs))
        return served[-1]

    monkeypatch.setattr(cpu, "_pairs_run", spy)
    rng = np.random.default_rng(n)
    kind = np.dtype(dtype).kind
    for size in (2 * n, 2 * n - 1):
        src = rng.integers(-9, 9, size) if kind != "f" else rng.standard_normal(size) * 4
        if kind == "f":
            src[::7], src[3::11], src[5::13] = np.nan, np.inf, -0.0
        src = src.astype(dtype) if dtype != "bool" else src > 0
        s = xp.asarray(src)
        m = (size - 1) // 2  # (the even elements end the buffer when size is odd, else the odd)
        vectors = [s[::2][-m:], s[1::2][-m:]]
        three, two = (True, False) if dtype == "bool" else (3, 2)  # (scalars of the array's kind)
        for name, arity, dtypes in _PAIR_CASES:
            if dtype not in dtypes:
                continue
            fn = getattr(xp, name)
            x, y = vectors
            operands = [(x,), (y,)] if arity == 1 else [(x, y), (y, x), (y, three), (two, x)]
            for args in operands:
                dense = [xp.asarray(np.asarray(a)) if isinstance(a, xp.Array) else a for a in args]
                want = np.asarray(fn(*dense))
                served.clear()
                got = fn(*args)
                np.testing.assert_array_equal(np.asarray(got), want, err_msg=f"{name} {args}")
                assert served == ([True] if n >= kernels.PARALLEL_THRESHOLD else []), name
            if n < kernels.PARALLEL_THRESHOLD:  # the serial pair loop ran for this dtype
                loop = getattr(kernels.G, f"{name}_2")
                assert any(str(sig[1].dtype) == src.dtype.name for sig in loop.signatures), name


@pytest.mark.parametrize("n", [kernels.PARALLEL_THRESHOLD + 5, 1500, 7])
def test_a_broadcast_element_at_step_2_is_not_read_as_pairs(n):
    """A one-element operand whose stride is 2 (``x[::2][:1]``) broadcast against vectors at
    step 2 (a binary op, where's condition or value, clip's bound) is one element, not a vector
    of pairs: NumPy's values at the parallel size, from 1024 elements and below; clip of a 0-d
    array with a (1,)-shaped bound (the conformance suite's case)."""
    src = np.arange(2 * n + 4, dtype=np.float32)
    s = xp.asarray(src)
    one, one_n = s[::2][:1], src[::2][:1]
    assert one._strides == (2,)
    x, xn = s[1::2][:n], src[1::2][:n]
    np.testing.assert_array_equal(np.asarray(x + one), xn + one_n)
    np.testing.assert_array_equal(np.asarray(one * x), one_n * xn)
    np.testing.assert_array_equal(np.asarray(xp.where(x > 5, x, one)), np.where(xn > 5, xn, one_n))
    got = xp.where(s[::2][:1] > 0, x, s[::2][:n])
    np.testing.assert_array_equal(np.asarray(got), np.where(one_n > 0, xn, src[::2][:n]))
    np.testing.assert_array_equal(np.asarray(xp.clip(x, one, 50)), np.clip(xn, one_n, 50))
    zero_d = xp.asarray(np.uint8(0))
    got = xp.clip(zero_d, min=xp.asarray(np.array([0], np.uint8)))
    np.testing.assert_array_equal(np.asarray(got), np.array([0], np.uint8))


def test_staged_operands_reuse_one_buffer_per_thread_and_operand():
    """Staging buffers are kept per thread and operand slot (a fresh one each call paid its page
    faults), never shared by two operands of a call or by two threads; large ones are not kept."""
    import threading

    import strided.backends.cpu as cpu

    f32 = np.dtype(np.float32)
    first = cpu._scratch(1000, f32, 0)
    assert cpu._scratch(800, f32, 0).base is first.base  # the same memory, reused
    assert cpu._scratch(1000, f32, 1).base is not first.base  # another operand, its own
    assert cpu._scratch(1000, np.dtype(np.int8), 0).base is first.base  # (any dtype)
    big = cpu._SCRATCH_MAX // 4 + 1
    big1, big2 = cpu._scratch(big, f32, 0), cpu._scratch(big, f32, 0)
    assert big1.base is None and big2 is not big1  # buffers of their own, not kept
    other = []
    worker = threading.Thread(target=lambda: other.append(cpu._scratch(1000, f32, 0).base))
    worker.start()
    worker.join()
    assert other[0] is not first.base
    # two staged operands of one call in two slots, and values right on every thread
    a = np.random.default_rng(3).standard_normal((3, 200_000)).astype(np.float32)
    s = xp.asarray(a)
    want = np.power(np.abs(a[0, ::2]), a[1, 1::2])
    results = []

    def run():
        results.append(np.asarray(xp.pow(xp.abs(s[0, ::2]), s[1, 1::2])))

    threads = [threading.Thread(target=run) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 4  # (a thread that raised appended nothing)
    for got in results + [np.asarray(xp.pow(xp.abs(s[0, ::2]), s[1, 1::2]))]:
        np.testing.assert_allclose(got, want, rtol=4e-6)


def test_generated_loops_become_dispatchers_once_on_first_lookup():
    import threading

    from numba.core.registry import CPUDispatcher

    G = kernels.G
    with pytest.raises(AttributeError, match="no_such_loop_s"):
        _ = G.no_such_loop_s
    assert getattr(G, "positive_sb", None) is None  # unary ops have no broadcast kernel
    name = "bitwise_xor_p"  # rarely used elsewhere: likely not made yet in this process
    seen = []
    threads = [threading.Thread(target=lambda: seen.append(getattr(G, name))) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(seen) == 4 and all(s is seen[0] for s in seen)
    assert isinstance(seen[0], CPUDispatcher) and G.bitwise_xor_p is seen[0]


def test_small_fast_paths_match_numpy_in_every_layout():
    """The per-call fast paths that skip layout planning: a 1-D slice with a step copied (into
    a dense array and into another stepped slice), reductions of a transpose or over axis 0
    (the memoized plan's one call; the second call of a layout takes it), scans of C-ordered
    rows along the last axis, of int32 input widened to int64."""
    a = np.arange(40, dtype=np.float32) * 1.5 - 7
    x = xp.asarray(a)
    for sl in (slice(None, None, 2), slice(None, None, -3), slice(3, 37, 4), slice(39, None, -1)):
        np.testing.assert_array_equal(np.asarray(xp.asarray(x[sl], copy=True)), a[sl])
        y = xp.zeros(80, dtype=xp.float32)
        y[1 : 1 + 2 * len(a[sl]) : 2] = x[sl]
        want = np.zeros(80, np.float32)
        want[1 : 1 + 2 * len(a[sl]) : 2] = a[sl]
        np.testing.assert_array_equal(np.asarray(y), want)
    m = np.random.default_rng(1).standard_normal((12, 9))
    for v in (m, m.T, m[::-1, ::2]):
        for name in ("sum", "max", "min", "prod"):
            for axis, keepdims in ((0, False), (1, True), (-1, False)):
                for _ in range(2):
                    got = getattr(xp, name)(xp.asarray(v), axis=axis, keepdims=keepdims)
                    want = getattr(np, name)(v, axis=axis, keepdims=keepdims)
                    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12)
    ints = np.arange(24, dtype=np.int32).reshape(4, 6) - 9
    for _ in range(2):
        got = xp.cumulative_sum(xp.asarray(ints), axis=1)
        assert got.dtype is xp.int64
        np.testing.assert_array_equal(np.asarray(got), np.cumsum(ints, axis=1))
        np.testing.assert_allclose(
            np.asarray(xp.cumulative_prod(xp.asarray(m), axis=-1)), np.cumprod(m, axis=-1)
        )
    # a cast keeps a transpose's layout: both dense in one memory order, one flat copy
    t = np.random.default_rng(2).standard_normal((5, 7, 3))
    for perm in ((1, 0, 2), (2, 1, 0), (0, 2, 1)):
        v = xp.permute_dims(xp.asarray(t), perm)
        for d in (xp.float32, xp.int32, xp.float64):
            got = xp.astype(v, d)
            want = np.transpose(t, perm).astype(np.dtype(d.name))
            np.testing.assert_array_equal(np.asarray(got), want)
        reversed_view = xp.flip(v, axis=0)  # negative strides: not a flat copy
        np.testing.assert_array_equal(
            np.asarray(xp.astype(reversed_view, xp.float32)),
            np.flip(np.transpose(t, perm), axis=0).astype(np.float32),
        )
    # copies of other small layouts (the memoized plan's one call): stepped, reversed, broadcast
    for view, want in (
        (xp.asarray(t)[1::2, ::-3], t[1::2, ::-3]),
        (
            xp.permute_dims(xp.asarray(t), (2, 0, 1))[:, 1:, ::2],
            np.transpose(t, (2, 0, 1))[:, 1:, ::2],
        ),
        (xp.broadcast_to(xp.asarray(t[0, :, :1]), (7, 3)), np.broadcast_to(t[0, :, :1], (7, 3))),
    ):
        for _ in range(2):
            np.testing.assert_array_equal(np.asarray(xp.asarray(view, copy=True)), want)
    # scans of other small layouts (the memoized plan's one call): a transpose, reversed rows
    for view, want in ((xp.asarray(m).T, m.T), (xp.asarray(m)[:, ::-1], m[:, ::-1])):
        for axis in (0, 1):
            for _ in range(2):
                got = xp.cumulative_sum(view, axis=axis)
                np.testing.assert_allclose(np.asarray(got), np.cumsum(want, axis=axis))
