"""The array object: every operator (forward, reflected, in-place) against NumPy, conversions,
repr, interchange with NumPy via __array__ and DLPack, the namespace hook."""

from __future__ import annotations

import operator

import numpy as np
import pytest

import strided as xp

BINARY = [
    "add",
    "sub",
    "mul",
    "truediv",
    "floordiv",
    "mod",
    "pow",
    "and",
    "or",
    "xor",
    "lshift",
    "rshift",
    "eq",
    "ne",
    "lt",
    "le",
    "gt",
    "ge",
]


def _np_pair(name):
    rng = np.random.default_rng(0)
    if name in ("and", "or", "xor", "lshift", "rshift"):
        return rng.integers(0, 7, (3, 4)).astype(np.int32), rng.integers(0, 5, (4,)).astype(
            np.int32
        )
    return rng.uniform(1, 3, (3, 4)), rng.uniform(1, 3, (4,))


@pytest.mark.parametrize("name", BINARY)
def test_binary_operators_forward_and_reflected(name):
    a_np, b_np = _np_pair(name)
    a, b = xp.asarray(a_np), xp.asarray(b_np)
    op = getattr(operator, name if name not in ("and", "or") else name + "_")
    np.testing.assert_allclose(np.asarray(op(a, b)), op(a_np, b_np), rtol=1e-12)
    scalar = 2 if a_np.dtype.kind == "i" else 1.5
    np.testing.assert_allclose(np.asarray(op(a, scalar)), op(a_np, scalar), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(op(scalar, a)), op(scalar, a_np), rtol=1e-12)


@pytest.mark.parametrize(
    "name", [n for n in BINARY if n not in ("eq", "ne", "lt", "le", "gt", "ge")]
)
def test_inplace_operators_write_into_the_array(name):
    a_np, b_np = _np_pair(name)
    a = xp.asarray(a_np.copy())
    view = a[1:]
    before = a
    iop = getattr(operator, "i" + name)
    a = iop(a, xp.asarray(b_np))
    assert a is before
    want = iop(a_np.copy(), b_np)
    np.testing.assert_allclose(np.asarray(a), want, rtol=1e-12)
    np.testing.assert_allclose(np.asarray(view), want[1:], rtol=1e-12)


def test_inplace_refuses_dtype_or_shape_change():
    i = xp.asarray([1, 2, 3])
    with pytest.raises(TypeError, match="__itruediv__"):
        i /= 2
    f = xp.zeros((3,))
    with pytest.raises(ValueError, match="shape"):
        f += xp.zeros((2, 3))


def test_matmul_operators():
    a_np = np.arange(6.0).reshape(2, 3)
    a = xp.asarray(a_np)
    np.testing.assert_allclose(np.asarray(a @ a.mT), a_np @ a_np.T)
    sq = xp.asarray(np.eye(3) * 2)
    s2 = sq
    sq @= sq
    assert sq is s2
    np.testing.assert_allclose(np.asarray(sq), np.eye(3) * 4)


def test_unary_operators():
    a_np = np.array([-1.5, 0.0, 2.0])
    a = xp.asarray(a_np)
    np.testing.assert_array_equal(np.asarray(-a), -a_np)
    np.testing.assert_array_equal(np.asarray(+a), +a_np)
    np.testing.assert_array_equal(np.asarray(abs(a)), abs(a_np))
    i_np = np.array([0, 5, -3], dtype=np.int16)
    np.testing.assert_array_equal(np.asarray(~xp.asarray(i_np)), ~i_np)
    np.testing.assert_array_equal(np.asarray(~xp.asarray([True, False])), [False, True])


def test_operators_with_unsupported_operands():
    a = xp.zeros(3)
    assert (a == None) is False  # noqa: E711 - falls back to identity, like NumPy scalars
    with pytest.raises(TypeError):
        a + "x"
    with pytest.raises(TypeError):
        a @ 2


def test_numpy_on_the_left_defers_to_strided():
    a = xp.asarray([1.0, 2.0])
    r = np.array([1.0, 1.0]) + a
    assert isinstance(r, xp.Array)
    np.testing.assert_array_equal(np.asarray(r), [2.0, 3.0])


def test_scalar_conversions():
    assert bool(xp.asarray(True)) is True and int(xp.asarray(7)) == 7
    assert float(xp.asarray(2.5, dtype=xp.float32)) == 2.5
    assert complex(xp.asarray(1 + 2j)) == 1 + 2j
    assert operator.index(xp.asarray(4, dtype=xp.uint8)) == 4
    assert [10, 20, 30][xp.asarray(1)] == 20
    with pytest.raises(TypeError, match="0-d"):
        bool(xp.zeros(2))
    with pytest.raises(TypeError, match="__index__"):
        operator.index(xp.asarray(1.0))
    with pytest.raises(ValueError):
        int(xp.asarray(float("nan")))


def test_repr_like_numpy_with_summarisation():
    a_np = np.arange(6, dtype=np.float32).reshape(2, 3)
    assert repr(xp.asarray(a_np)) == repr(a_np).replace("array(", "Array(")
    big = repr(xp.zeros((2000, 3000)))
    assert "..." in big and len(big) < 2000 and big.endswith("dtype=float64)")
    assert repr(xp.asarray(3)) == "Array(3, dtype=int64)"
    assert str(xp.asarray([1, 2])) == "[1 2]"


def test_numpy_interchange_is_zero_copy():
    a = xp.zeros((3, 4))
    v = np.asarray(a[:, 1:3])
    v[...] = 5.0
    assert float(xp.sum(a)) == 30.0
    d = np.from_dlpack(a.mT)
    assert d.shape == (4, 3) and d.strides == (8, 32)
    assert a.__dlpack_device__() == (1, 0)
    c = np.from_dlpack(a.__dlpack__(copy=True)) if False else np.asarray(a, copy=True)
    c[0, 0] = -1
    assert float(a[0, 0]) == 0.0
    assert np.asarray(a, dtype=np.float32).dtype == np.float32


def test_array_attributes_and_namespace():
    a = xp.zeros((2, 3, 4), dtype=xp.int16)[:, ::2]
    assert (a.ndim, a.size, a.shape, a.strides, a.dtype) == (3, 16, (2, 2, 4), (12, 8, 1), xp.int16)
    assert a.__array_namespace__() is xp
    with pytest.raises(ValueError, match="api_version"):
        a.__array_namespace__(api_version="1999.01")
    assert len(a) == 2 and [x.shape for x in a] == [(2, 4), (2, 4)]
    with pytest.raises(TypeError, match="Array"):
        xp.Array()
    with pytest.raises(ValueError, match="2-D"):
        _ = a.T


# -- in-place operators written into the array itself (operators._into_self) ----------------------
# From the second call of one (dtype, shape, operand) combination the cpu kernel of +, -, *, /,
# &, |, ^ writes into the target: each case runs three times, against NumPy each time.
_INPLACE_LANE = {
    "add": ("int32", "float64", "complex128"),
    "sub": ("float32",),
    "mul": ("int64", "float64"),
    "truediv": ("float32", "complex128"),
    "and": ("bool",),
    "or": ("int64",),
    "xor": ("int32",),
}
_LANE_CASES = [(name, d) for name, dtypes in _INPLACE_LANE.items() for d in dtypes]
#: the threaded loop (each compiles on first use: a few cases keep a cold test run short)
_THREADED = {("add", "float64"), ("mul", "int64"), ("truediv", "complex128"), ("and", "bool")}
_LANE_SIZES = [(name, d, n) for name, d in _LANE_CASES for n in (7, 4096, 70_001)
               if n < 70_001 or (name, d) in _THREADED]  # fmt: skip


def _lane_values(rng, shape, dtype):
    if dtype == "bool":
        return rng.integers(0, 2, shape).astype(bool)
    if np.dtype(dtype).kind in "iu":
        return rng.integers(1, 9, shape).astype(dtype)
    v = rng.uniform(0.5, 2.0, shape)
    if np.dtype(dtype).kind == "c":
        v = v + 1j * rng.uniform(0.5, 2.0, shape)
    return v.astype(dtype)


def _lane_scalar(dtype):
    kind = np.dtype(dtype).kind
    return {"b": True, "i": 3, "u": 3, "f": 1.25, "c": 1.25 - 0.5j}[kind]


@pytest.mark.parametrize("name,dtype,n", _LANE_SIZES)
def test_inplace_operators_into_self_match_numpy(name, dtype, n):
    rng = np.random.default_rng(n)
    iop = getattr(operator, "i" + name)
    a_np = _lane_values(rng, (n,), dtype)
    b_np = _lane_values(rng, (n,), dtype)
    m_np, row_np = _lane_values(rng, (5, 6), dtype), _lane_values(rng, (6,), dtype)
    a, b = xp.asarray(a_np.copy()), xp.asarray(b_np)
    m, row = xp.asarray(m_np.copy()), xp.asarray(row_np)
    scalar = _lane_scalar(dtype)
    want_a, want_m = a_np.copy(), m_np.copy()
    tol = 1e-5 if dtype in ("float32", "complex64") else 1e-12
    for _ in range(3):
        for got, want, other, other_np in (
            (a, want_a, b, b_np),  # an array laid out like the target
            (a, want_a, scalar, scalar),  # a Python scalar
            (m, want_m, row, row_np),  # a row broadcast along the target
        ):
            before = got
            got = iop(got, other)
            assert got is before
            iop(want, other_np)
            np.testing.assert_allclose(np.asarray(got), want, rtol=tol)
    if name in ("add", "mul", "and", "or"):  # the target itself as the operand
        for _ in range(3):
            a = iop(a, a)
            iop(want_a, want_a)
        np.testing.assert_allclose(np.asarray(a), want_a, rtol=tol)


def test_inplace_operator_with_an_overlapping_operand_reads_the_old_values():
    # operands that share the target's memory other than element for element are read before
    # any write (as NumPy does): the kernel does not write into the target then
    n = 5000
    base_np = np.arange(n + 1, dtype=np.float64)
    want = base_np.copy()
    got_np = base_np.copy()
    a, b = xp.asarray(got_np[1:]), xp.asarray(got_np[:-1])  # two arrays over one NumPy buffer
    for _ in range(3):
        a += b
        want[1:] += want[:-1]
        np.testing.assert_array_equal(np.asarray(a), want[1:])
    r_np = np.arange(n, dtype=np.float64)
    r = xp.asarray(r_np.copy())
    for _ in range(3):
        r += xp.flip(r)  # a reversed view of the same buffer
        r_np += r_np[::-1]
        np.testing.assert_array_equal(np.asarray(r), r_np)


def test_inplace_operators_on_views_and_transposes_write_the_owner():
    a_np = np.arange(12.0).reshape(3, 4)
    a = xp.asarray(a_np.copy())
    want = a_np.copy()
    reshaped = xp.reshape(a, (4, 3))  # all of a's memory, through a view
    for _ in range(3):
        a[::2] += 1.0
        want[::2] += 1.0
        t = a.mT
        t *= 2.0
        want *= 2.0
        reshaped -= 0.5
        want -= 0.5
        np.testing.assert_array_equal(np.asarray(a), want)
        np.testing.assert_array_equal(np.asarray(reshaped), want.reshape(4, 3))


def test_inplace_operator_into_self_bumps_the_version_of_a_saved_array():
    w = xp.asarray([1.0, 2.0, 3.0], requires_grad=True)
    a = xp.asarray([4.0, 5.0, 6.0])
    view = xp.reshape(a, (3, 1))
    a *= 1.0  # (the first call remembers the rule; the next ones write into a)
    view *= 1.0
    z = w * a  # saves a for w's gradient
    a *= 2.0
    with pytest.raises(RuntimeError, match="version"):
        xp.sum(z).backward()
    z = w * a
    view *= 2.0  # the owner's version, through a view of all of it
    with pytest.raises(RuntimeError, match="version"):
        xp.sum(z).backward()


def test_inplace_operator_with_a_tracked_operand_records_the_write():
    """An untracked target and an operand that requires grad (or is a non-leaf, or a view of
    one): the write is recorded (the gradient reaches the operand), also on the calls after
    the first, whose rule result is remembered."""
    import torch

    for k in range(3):
        t = xp.asarray(np.arange(1.0, 5.0), requires_grad=True)
        tt = torch.arange(1.0, 5.0, dtype=torch.float64, requires_grad=True)
        operand, toperand = [(t, tt), (t * 3.0, tt * 3.0), ((t * 2.0)[1:], (tt * 2.0)[1:])][k]
        a = xp.asarray(np.ones(operand.shape))
        ta = torch.ones(toperand.shape, dtype=torch.float64)
        for _ in range(3):
            a += operand
            a -= operand * 0.25
            ta += toperand
            ta -= toperand * 0.25
        xp.sum(a).backward()
        ta.sum().backward()
        np.testing.assert_allclose(np.asarray(a.detach()), ta.detach().numpy())
        np.testing.assert_allclose(np.asarray(t.grad), tt.grad.numpy())


def test_inplace_operators_are_reported_to_observers():
    from strided import dispatch

    a, b = xp.ones(8), xp.ones(8)
    a += b
    calls = []
    with dispatch.observe(lambda prim, args, params, out, depth: calls.append(prim.name)):
        a += b
        a *= 2.0
    assert calls[:1] == ["add"] and "multiply" in calls
    np.testing.assert_array_equal(np.asarray(a), np.full(8, 6.0))


def test_inplace_loops_exist_for_the_ops_the_backend_writes_in_place():
    from strided.backends import cpu
    from strided.backends.cpu import _codegen
    from strided.backends.cpu import _generated_kernels as G
    from strided.dispatch import kernel

    for name in _codegen.elementwise_ops():
        has = hasattr(kernel(name, "cpu"), "into_self")
        assert has == (name in cpu.INPLACE_OPS), name
        assert has == (f"{name}_i" in G._LOOPS and f"{name}_ip" in G._LOOPS), name


def test_inplace_optimizer_step_into_a_parameter_and_grad_mode_still_refuses_a_leaf():
    from strided.nn import Parameter

    p_np = np.linspace(-1.0, 1.0, 4096)
    p = Parameter(xp.asarray(p_np.copy()))
    g_np = np.cos(p_np)
    g = xp.asarray(g_np)
    want = p_np.copy()
    for _ in range(3):
        with xp.autograd.no_grad():  # an optimizer's update: written into p itself
            before = p
            p -= 0.1 * g
            p *= 0.5
            assert p is before and type(p) is Parameter and p.is_leaf
        want -= 0.1 * g_np
        want *= 0.5
        np.testing.assert_allclose(np.asarray(p), want, rtol=1e-12)
        with pytest.raises(RuntimeError, match="leaf"):  # grad mode on: refused every time
            p *= 0.5
    np.testing.assert_allclose(np.asarray(p), want, rtol=1e-12)


@pytest.mark.parametrize("n", [8, 300])  # (300 x 300: the threaded loops)
def test_inplace_operators_with_transposed_and_0d_operands(n):
    rng = np.random.default_rng(n)
    a_np, b_np = rng.standard_normal((n, n)), rng.standard_normal((n, n))
    a, b = xp.asarray(a_np.copy()), xp.asarray(b_np)
    want = a_np.copy()
    for _ in range(3):  # (from the second round on, into the array itself)
        a += b.mT
        want += b_np.T
        a *= xp.asarray(0.5)
        want *= 0.5
        a -= b[0]
        want -= b_np[0]
        np.testing.assert_array_equal(np.asarray(a), want)
