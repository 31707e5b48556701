"""Creation functions vs NumPy, dtype defaults, devices, asarray sources and copy semantics."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import strided as xp
from strided import _dtypes as sdt


@pytest.mark.parametrize("d", sdt.ALL_DTYPES, ids=lambda d: d.name)
def test_zeros_ones_full_every_dtype(d):
    for fn, ref in ((xp.zeros, np.zeros), (xp.ones, np.ones)):
        a = fn((2, 3), dtype=d)
        assert a.dtype is d and a.shape == (2, 3)
        np.testing.assert_array_equal(np.asarray(a), ref((2, 3), dtype=d.numpy))
        like = {"zeros": xp.zeros_like, "ones": xp.ones_like}[fn.__name__](a)
        np.testing.assert_array_equal(np.asarray(like), ref((2, 3), dtype=d.numpy))
    v = (
        True
        if d is sdt.bool
        else 1 + 1j
        if d.kind == sdt.COMPLEX
        else 1.5
        if d.kind == sdt.REAL
        else 7
    )
    f = xp.full((4,), v, dtype=d)
    np.testing.assert_array_equal(np.asarray(f), np.full((4,), v, dtype=d.numpy))
    np.testing.assert_array_equal(np.asarray(xp.full_like(f, v)), np.full((4,), v, dtype=d.numpy))
    assert xp.empty((3, 0), dtype=d).shape == (3, 0)
    assert xp.empty_like(f).dtype is d


def test_default_dtypes():
    assert xp.zeros(3).dtype is xp.float64
    assert xp.full((2,), 3).dtype is xp.int64
    assert xp.full((2,), 3.0).dtype is xp.float64
    assert xp.full((2,), True).dtype is xp.bool
    assert xp.full((2,), 1j).dtype is xp.complex128
    assert xp.arange(3).dtype is xp.int64
    assert xp.arange(3.0).dtype is xp.float64
    assert xp.asarray([1, 2]).dtype is xp.int64
    assert xp.asarray([1.0, 2]).dtype is xp.float64
    assert xp.asarray([True]).dtype is xp.bool
    assert xp.asarray(1j).dtype is xp.complex128


@pytest.mark.parametrize(
    "args", [(5,), (2, 9), (2, 9, 3), (10, 0, -3), (0.5, 3.0, 0.5), (5, 1), (-3, 3, 2)]
)
def test_arange(args):
    np.testing.assert_allclose(np.asarray(xp.arange(*args)), np.arange(*args))


@pytest.mark.parametrize("d", [None, xp.float32, xp.int16])
def test_arange_dtype(d):
    got = xp.arange(1, 8, 2, dtype=d)
    assert got.dtype is (d or xp.int64)
    np.testing.assert_array_equal(np.asarray(got), np.arange(1, 8, 2))


@pytest.mark.parametrize("endpoint", [True, False])
@pytest.mark.parametrize("num", [0, 1, 5, 50])
def test_linspace(num, endpoint):
    got = xp.linspace(-1.0, 2.0, num, endpoint=endpoint, dtype=xp.float32)
    assert got.dtype is xp.float32
    np.testing.assert_allclose(
        np.asarray(got), np.linspace(-1, 2, num, endpoint=endpoint, dtype=np.float32), rtol=1e-6
    )


@pytest.mark.parametrize("n", [1, 7, 70_000])  # serial and threaded
def test_arange_and_linspace_sequences_bit_for_bit(n):
    """arange writes start + step * i (int64 arithmetic for ints, float64 otherwise, cast
    once): NumPy's integers exactly, and NumPy's start + step * arange(n) for floats (close to
    np.arange, which steps in the dtype); linspace does numpy.linspace's float64
    operations, so its values are NumPy's bit for bit (the step underflowing to 0 included)."""
    for start, step, d in ((0, 1, "int64"), (-7, 3, "int32"), (250, -1, "int16"), (2, 5, "uint8")):
        got = np.asarray(xp.arange(start, start + step * n, step, dtype=getattr(xp, d)))
        np.testing.assert_array_equal(got, np.arange(start, start + step * n, step, dtype=d))
    for start, step, d in ((0.5, 0.1, "float64"), (-3, 0.7, "float32"), (1e6, -2.5, "float64")):
        got = np.asarray(xp.arange(start, start + step * n, step, dtype=getattr(xp, d)))
        want = (start + step * np.arange(got.size)).astype(d)
        np.testing.assert_array_equal(got, want)
        ref = np.arange(start, start + step * n, step, dtype=d)[: got.size]
        tol = 1e-6 if d == "float32" else 1e-12  # (NumPy's float32 steps accumulate in float32)
        np.testing.assert_allclose(got, ref, rtol=tol, atol=tol * abs(start + step * n))
    cases = [(-1.0, 2.0), (3, -4.5), (0.0, 1e-320), (5.0, 5.0), (1e10, 1e10 + 1)]
    for (start, stop), d, endpoint in itertools.product(cases, ("float64", "float32"), (1, 0)):
        got = xp.linspace(start, stop, n, endpoint=bool(endpoint), dtype=getattr(xp, d))
        want = np.linspace(start, stop, n, endpoint=bool(endpoint), dtype=d)
        np.testing.assert_array_equal(np.asarray(got).view(f"u{want.itemsize}"),
                                      want.view(f"u{want.itemsize}"))  # fmt: skip


@pytest.mark.parametrize(
    "n,m,k", [(3, None, 0), (3, 5, 1), (4, 2, -1), (3, 3, 5), (0, 2, 0), (2, 6, -3), (64, 64, 63)]
)
def test_eye(n, m, k):
    for dtype in (xp.float64, xp.int8, xp.bool):
        got = xp.eye(n, m, k=k, dtype=dtype)
        np.testing.assert_array_equal(np.asarray(got), np.eye(n, m, k=k, dtype=dtype.numpy))
        assert got.dtype == dtype


def test_every_creation_function_takes_requires_grad():
    """PyTorch's ``requires_grad=`` keyword on each creation function (and in its signature):
    True makes a leaf that records, the default records nothing."""
    import inspect

    x = xp.ones((2, 3))
    makers = {
        "empty": lambda **kw: xp.empty((2, 3), **kw),
        "zeros": lambda **kw: xp.zeros((2, 3), **kw),
        "ones": lambda **kw: xp.ones(3, **kw),
        "full": lambda **kw: xp.full((2,), 1.5, **kw),
        "empty_like": lambda **kw: xp.empty_like(x, **kw),
        "zeros_like": lambda **kw: xp.zeros_like(x, **kw),
        "ones_like": lambda **kw: xp.ones_like(x, **kw),
        "full_like": lambda **kw: xp.full_like(x, 2.0, **kw),
        "arange": lambda **kw: xp.arange(0.0, 3.0, **kw),
        "linspace": lambda **kw: xp.linspace(0, 1, 5, **kw),
        "eye": lambda **kw: xp.eye(3, k=1, **kw),
        "asarray": lambda **kw: xp.asarray([1.0, 2.0], **kw),
    }
    for name, make in makers.items():
        assert "requires_grad" in inspect.signature(getattr(xp, name)).parameters, name
        leaf = make(requires_grad=True)
        assert leaf.requires_grad and leaf.is_leaf and leaf.grad_fn is None, name
        assert not make().requires_grad, name
        xp.sum(leaf * 2.0).backward()
        np.testing.assert_array_equal(np.asarray(leaf.grad), np.full(leaf.shape, 2.0), name)


def test_creation_rejects_bad_arguments():
    with pytest.raises(ValueError, match="zeros.*negative"):
        xp.zeros((2, -1))
    with pytest.raises(TypeError, match="full.*float.*int"):
        xp.full((2,), 1.5, dtype=xp.int32)
    with pytest.raises(OverflowError, match="full"):
        xp.full((2,), 300, dtype=xp.uint8)
    with pytest.raises(ValueError, match="arange.*step"):
        xp.arange(0, 5, 0)
    with pytest.raises(TypeError, match="not a strided dtype"):
        xp.zeros(2, dtype="float16")
    with pytest.raises(TypeError, match="eye: k must be an integer"):
        xp.eye(3, k=1.5)
    with pytest.raises(TypeError, match="eye: shape"):
        xp.eye(2.0)
    with pytest.raises(ValueError, match="eye: negative"):
        xp.eye(2, -1)


def test_asarray_from_numpy_is_zero_copy_and_keeps_strides():
    base = np.arange(24, dtype=np.float32).reshape(4, 6)
    view = base[::2, ::-3]
    a = xp.asarray(view)
    np.testing.assert_array_equal(np.asarray(a), view)
    assert a.strides == (12, -3)
    base[0, 5] = -1  # visible through the strided array: same memory
    assert float(a[0, 0]) == -1


def test_asarray_copy_semantics():
    src = np.arange(4.0)
    copied = xp.asarray(src, copy=True)
    src[0] = 99
    assert float(copied[0]) == 0.0
    a = xp.asarray([1, 2, 3])
    assert xp.asarray(a) is a
    b = xp.asarray(a, copy=True)
    b[0] = 10
    assert int(a[0]) == 1
    with pytest.raises(ValueError, match="copy=False"):
        xp.asarray(a, dtype=xp.float32, copy=False)
    with pytest.raises(ValueError, match="copy=False"):
        xp.asarray([1, 2], copy=False)


@pytest.mark.parametrize("big", [False, True])
def test_asarray_of_numpy_arrays_views_or_copies_every_dtype_and_layout(big):
    """A NumPy array of each of strided's dtypes, C-ordered, transposed or reversed: viewed
    (same memory, its values, dtype and strides), or with copy=True copied (NumPy's copy
    below 2 MB, the copy kernel from 2 MB: ``big``); a read-only array is copied once, a
    byte-swapped one converted, and under a meta default device the result is on meta.  (The
    large copies in four dtypes: the lane does not depend on the dtype.)"""
    rng = np.random.default_rng(5)
    dtypes = (sdt.bool, sdt.int32, sdt.float64, sdt.complex64) if big else sdt.ALL_DTYPES
    for d in dtypes:
        n = (1 << 21) // d.numpy.itemsize + 6 if big else 12
        flat = (rng.standard_normal(n) * 50).astype(d.numpy)
        for v in (flat, flat.reshape(2, -1).T, flat[::-1]):
            a = xp.asarray(v)
            assert a.dtype is d and a.shape == v.shape
            assert a.strides == tuple(st // v.itemsize for st in v.strides)
            np.testing.assert_array_equal(np.asarray(a), v)
            assert np.shares_memory(np.asarray(a), v)
            c = xp.asarray(v, copy=True)
            assert c.dtype is d and c.shape == v.shape
            np.testing.assert_array_equal(np.asarray(c), v)
            assert not np.shares_memory(np.asarray(c), v)
    ro = np.arange(6.0)
    ro.flags.writeable = False
    a = xp.asarray(ro)
    a[0] = 5.0  # (its own memory: the read-only array is untouched)
    assert ro[0] == 0.0
    swapped = np.arange(6.0).astype(">f8")
    np.testing.assert_array_equal(np.asarray(xp.asarray(swapped)), np.arange(6.0))
    with xp.default_device("meta"):
        m = xp.asarray(np.arange(6.0))
    assert m.device == xp.Device("meta") and m.shape == (6,)


def test_asarray_sources():
    nested = [[1.5, 2], [3, 4]]
    np.testing.assert_array_equal(np.asarray(xp.asarray(nested)), np.asarray(nested))
    assert xp.asarray(3).shape == () and int(xp.asarray(3)) == 3
    np.testing.assert_array_equal(np.asarray(xp.asarray(bytearray(b"\x01\x02"))), [1, 2])
    dl = np.arange(6).reshape(2, 3)

    class DLPackOnly:
        def __dlpack__(self, **kw):
            return dl.__dlpack__(**kw)

        def __dlpack_device__(self):
            return dl.__dlpack_device__()

    np.testing.assert_array_equal(np.asarray(xp.asarray(DLPackOnly())), dl)
    a = xp.asarray([1, 2], dtype=xp.float32)
    assert a.dtype is xp.float32
    with pytest.raises(TypeError, match="asarray"):
        xp.asarray("abc")
    with pytest.raises(TypeError, match="asarray"):
        xp.asarray([object()])
    with pytest.raises(OverflowError):
        xp.asarray([2**70])


def test_asarray_of_strided_arrays_in_lists():
    a = xp.asarray(1.0)
    np.testing.assert_array_equal(np.asarray(xp.asarray([a, a])), [1.0, 1.0])


def test_creation_on_meta_allocates_nothing():
    big = xp.zeros((10**9, 10**9), device="meta")
    assert big.shape == (10**9, 10**9) and big.device == "meta"
    assert xp.arange(10**12, device="meta").shape == (10**12,)
    assert xp.eye(10**6, device="meta").shape == (10**6, 10**6)
    assert xp.asarray([1, 2, 3], device="meta").shape == (3,)


@pytest.mark.parametrize("n", [7, 64, 300])  # 300 x 300: the threaded fill
def test_zeros_full_and_eye_made_by_the_backend_in_one_step(n, monkeypatch):
    """zeros, zeros_like, full and eye take the cpu backend's one-step buffers (calloc for int
    zeros, an empty buffer filled, the diagonal written at once): NumPy's values and C strides
    for every dtype and k; with the allocator wrapped (a test's canaries, a pool) they use the
    wrapper instead, dirty memory and all."""
    from strided import dispatch

    for d in (xp.float64, xp.float32, xp.int8, xp.uint64, xp.complex128, xp.bool):
        nd = np.dtype(d.name if d is not xp.bool else "bool")
        for got in (xp.zeros((n, n), dtype=d), xp.zeros_like(xp.ones(n * n, dtype=d))):
            np.testing.assert_array_equal(np.asarray(got), np.zeros(got.shape, nd))
            assert got.dtype == d
        value = True if d is xp.bool else (3 if d.kind != "real floating" else -0.0)
        got = xp.full((n, n), value, dtype=d)
        np.testing.assert_array_equal(np.asarray(got), np.full((n, n), value, nd))
        if value == 0:  # -0.0 keeps its sign
            assert np.signbit(np.asarray(got)).all()
        for k in (-n, -3, 0, 1, n // 2, n + 1):
            got = xp.eye(n, n + 2, k=k, dtype=d)
            np.testing.assert_array_equal(np.asarray(got), np.eye(n, n + 2, k=k, dtype=nd))
            assert got._strides == (n + 2, 1) and got._offset == 0
    original = dispatch.kernel("empty", "cpu")
    made = []

    def dirty(size, dtype):
        buf = original(size, dtype)
        buf.view(np.uint8)[:] = 0x5A
        made.append(size)
        return buf

    dispatch.register("empty", "cpu")(dirty)
    try:
        for got, want in (
            (xp.zeros((n, 3)), np.zeros((n, 3))),
            (xp.full((n,), 0, dtype=xp.int32), np.zeros(n, np.int32)),
            (xp.eye(n, k=1), np.eye(n, k=1)),
        ):
            np.testing.assert_array_equal(np.asarray(got), want)
    finally:
        dispatch.register("empty", "cpu")(original)
    assert made == [3 * n, n, n * n]
