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
