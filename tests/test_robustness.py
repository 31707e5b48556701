"""Regressions from differential testing (issue 13): each bug a user or the fuzzer hit, with NumPy
as the oracle, on cpu and (for shapes, dtypes and errors) on meta."""

from __future__ import annotations

import os

import numpy as np
import pytest

import strided as xp

META = "meta"


def _meta(a: np.ndarray) -> xp.Array:
    return xp.empty(a.shape, dtype=getattr(xp, a.dtype.name), device=META)


# -- 1. argmin/argmax wrote past an empty output ---------------------------------------------------
@pytest.mark.parametrize("fn", ["argmin", "argmax"])
@pytest.mark.parametrize(
    "shape,axis",
    [((0, 1, 1, 2), -1), ((0, 3, 4, 2), -1), ((2, 0, 3, 2), 3), ((3, 2, 0, 5), 1), ((0, 2, 3), 2)],
)
def test_argreduce_with_an_empty_kept_axis(fn, shape, axis):
    a = np.zeros(shape)
    want = getattr(np, fn)(a, axis=axis)
    for _ in range(200):  # the out-of-bounds write corrupted the heap within a few hundred calls
        got = getattr(xp, fn)(xp.asarray(a), axis=axis)
    assert got.shape == want.shape and got.dtype == xp.int64
    m = getattr(xp, fn)(_meta(a), axis=axis)
    assert m.shape == want.shape and m.dtype == xp.int64
    # a canary right after the output's buffer is not touched
    big = xp.asarray(np.ones((4, 3, 1, 2)))[:0]
    assert getattr(xp, fn)(big, axis=-1).shape == (0, 3, 1)


# -- 2. asarray of Python ints mixing magnitudes ---------------------------------------------------
def test_asarray_of_large_python_ints_is_exact():
    got = xp.asarray([2**63 + 1, 0], dtype=xp.uint64)
    assert np.asarray(got).tolist() == [2**63 + 1, 0]
    got = xp.asarray([[2**64 - 1], [3]], dtype=xp.uint64)
    assert np.asarray(got).tolist() == [[2**64 - 1], [3]]
    got = xp.asarray([-(2**63), 2**62 + 1], dtype=xp.int64)
    assert np.asarray(got).tolist() == [-(2**63), 2**62 + 1]
    # they must not pass through float64 to a float dtype either way: values stay as NumPy's
    assert np.asarray(xp.asarray([2**63 + 1, 0], dtype=xp.float64)).tolist() == [2.0**63, 0.0]


@pytest.mark.parametrize(
    "obj,dtype",
    [([2**63 + 1, 0], None), ([2**63 + 1, -1], "uint64"), ([2**64, 0], "uint64"), ([300], "uint8")],
)
def test_asarray_of_out_of_range_python_ints_raises(obj, dtype):
    with pytest.raises(OverflowError, match="asarray"):
        xp.asarray(obj, dtype=None if dtype is None else getattr(xp, dtype))


# -- 3. integer power in the integer type ----------------------------------------------------------
@pytest.mark.parametrize("dtype", ["uint64", "int64", "uint32", "int8"])
@pytest.mark.parametrize("e", [0, 1, 35, 40, 63, 64])
def test_integer_power_is_exact(dtype, e):
    base = np.array([3, 2, 7, 1, 0], dtype=dtype)
    want = base**e  # NumPy wraps around in the dtype
    got = xp.asarray(base) ** e
    assert got.dtype == getattr(xp, dtype)
    np.testing.assert_array_equal(np.asarray(got), want)
    got = xp.pow(xp.asarray(base), xp.asarray(np.full(5, e, dtype=dtype)))
    np.testing.assert_array_equal(np.asarray(got), want)


# -- 4. complex square root of huge values ---------------------------------------------------------
@pytest.mark.parametrize(
    "values,dtype",
    [
        (
            [1e308 + 1e308j, -1e308 - 1e308j, 1.7e308 + 0j, -1.7e308 + 1j, 1j * 1.7e308],
            "complex128",
        ),
        ([3 + 3e38j, -3e38 + 1j, 3e38 + 3e38j, 1e-40 + 1e-40j], "complex64"),
    ],
)
def test_complex_sqrt_of_huge_values(values, dtype):
    a = np.array(values, dtype=dtype)
    got = np.asarray(xp.sqrt(xp.asarray(a)))
    want = np.sqrt(a.astype(np.complex128)).astype(dtype)  # NumPy's double-precision answer
    np.testing.assert_allclose(got, want, rtol=4e-7 if dtype == "complex64" else 1e-15)
    assert np.isfinite(got).all()


def test_complex_sqrt_special_values_unchanged():
    a = np.array(
        [complex(np.inf, np.nan), complex(-np.inf, 1), complex(1, np.inf), 0j, complex(-0.0, 0)]
        + [5e-324j, 5e-324 + 0j, -5e-324 + 0j, 1e-310 + 1e-311j],  # sqrt(5e-324j) divided by zero
        dtype=np.complex128,
    )
    got = np.asarray(xp.sqrt(xp.asarray(a)))
    np.testing.assert_allclose(got, np.sqrt(a), rtol=1e-15)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(np.sqrt(a)))
    np.testing.assert_array_equal(np.signbit(got.imag), np.signbit(np.sqrt(a).imag))


# -- 5. var/std with no degrees of freedom ---------------------------------------------------------
@pytest.mark.parametrize("fn", ["var", "std"])
@pytest.mark.parametrize("correction", [2, 3, 2.5])
def test_var_std_without_degrees_of_freedom_is_nan(fn, correction):
    got = getattr(xp, fn)(xp.asarray([1.0, 2.0]), correction=correction)
    assert got.dtype == xp.float64 and np.isnan(float(got))
    got = getattr(xp, fn)(xp.asarray(np.ones((3, 2), np.float32)), axis=1, correction=correction)
    assert got.dtype == xp.float32 and np.isnan(np.asarray(got)).all()
    # with degrees of freedom left, NumPy's value
    x = np.array([1.0, 2.0, 4.0])
    assert float(getattr(xp, fn)(xp.asarray(x), correction=1)) == pytest.approx(
        getattr(np, fn)(x, ddof=1)
    )


# -- 6. setting through a 0-d boolean mask ---------------------------------------------------------
@pytest.mark.parametrize("mask", [True, False])
@pytest.mark.parametrize("value_shape", [(), (1,)])
def test_setitem_through_a_zero_d_boolean_mask(mask, value_shape):
    x = xp.asarray(1.0)
    x[xp.asarray(mask)] = xp.asarray(np.full(value_shape, 7.0))
    want = np.asarray(1.0)
    want[np.asarray(mask)] = np.full(value_shape, 7.0)
    assert float(x) == float(want)
    y = xp.asarray([1.0, 2.0])
    y[xp.asarray(mask)] = xp.asarray([[5.0, 6.0]])  # the selection has shape (1, 2) or (0, 2)
    assert np.asarray(y).tolist() == ([5.0, 6.0] if mask else [1.0, 2.0])
    with pytest.raises(ValueError, match="__setitem__"):
        y[xp.asarray(True)] = xp.asarray([1.0, 2.0, 3.0])


# -- 7. errors name the function the user called ---------------------------------------------------
def test_searchsorted_with_a_complex_value_raises_type_error():
    with pytest.raises(TypeError, match="searchsorted"):
        xp.searchsorted(xp.asarray([1.0, 2.0]), xp.asarray([1 + 1j]))
    with pytest.raises(TypeError, match="searchsorted"):
        xp.searchsorted(xp.asarray([1.0, 2.0]), 1 + 1j)


@pytest.mark.parametrize(
    "name,call",
    [
        ("clip", lambda: xp.clip(xp.asarray([1 + 1j]), 0.0, 1.0)),
        ("clip", lambda: xp.clip(xp.asarray([1.0, 2.0]), xp.asarray([0.0, 1.0, 2.0]))),
        ("std", lambda: xp.std(xp.asarray([1, 2]))),
        ("std", lambda: xp.std(xp.asarray([1.0, 2.0]), axis=3)),
        ("tensordot", lambda: xp.tensordot(xp.asarray([True]), xp.asarray([True]), axes=1)),
        ("tensordot", lambda: xp.tensordot(xp.ones((2, 3)), xp.ones((3, 2)), axes=([5], [0]))),
        ("tensordot", lambda: xp.tensordot(xp.asarray(1.0), xp.asarray(1.0), axes=([0], [0]))),
        ("isin", lambda: xp.isin(xp.asarray([1, 2]), xp.asarray([3], dtype=xp.uint64))),
        ("isin", lambda: xp.isin(xp.asarray([1.0]), xp.asarray([1.0], device=META))),
    ],
)
def test_errors_name_the_function_called(name, call):
    with pytest.raises((TypeError, ValueError, IndexError)) as info:
        call()
    assert str(info.value).startswith(f"{name}:"), str(info.value)


@pytest.mark.parametrize("device", ["cpu", META])
def test_array_index_setitem_errors_name_setitem(device):
    b = xp.ones((3,), dtype=xp.bool, device=device)
    with pytest.raises(TypeError, match="^__setitem__"):
        b[xp.asarray([0, 1], device=device)] = 0
    with pytest.raises(TypeError, match="^__setitem__"):
        xp.ones((3,), dtype=xp.int8, device=device)[xp.asarray([0], device=device)] = 1.5
    x = xp.ones((3,), dtype=xp.int8, device=device)
    x[xp.asarray([0], device=device)] = np.int8(5)  # NumPy scalars are scalars too
    if device == "cpu":
        assert np.asarray(x).tolist() == [5, 1, 1]
    m = xp.asarray(True, device=device)  # a 0-d mask on meta: checked as if True
    with pytest.raises(ValueError, match="__setitem__"):
        xp.ones((2,), device=device)[m] = xp.ones((3,), device=device)


# -- 8. cpu and meta agree -------------------------------------------------------------------------
@pytest.mark.parametrize("device", ["cpu", META])
def test_isin_on_bool_arrays_is_refused_on_every_device(device):
    a = xp.asarray([True, False, True], device=device)
    with pytest.raises(TypeError, match="^isin"):
        xp.isin(a, xp.asarray([True], device=device))
    with pytest.raises(TypeError, match="^isin"):
        xp.isin(a, True)
    got = xp.isin(xp.asarray([1, 2, 3], device=device), xp.asarray([3, 1], device=device))
    assert got.dtype == xp.bool and got.shape == (3,)
    if device == "cpu":
        assert np.asarray(got).tolist() == [True, False, True]


@pytest.mark.parametrize("device", ["cpu", META])
@pytest.mark.parametrize(
    "shape,key,value_shape",
    [((5,), ([0, 1],), (3,)), ((4, 3), ([0, 1], [1, 2]), (2, 2)), ((4, 3), ([0, 2],), (3, 3))],
)
def test_integer_array_setitem_value_must_broadcast(device, shape, key, value_shape):
    x = xp.zeros(shape, device=device)
    k = tuple(xp.asarray(i, device=device) for i in key)
    with pytest.raises(ValueError, match="__setitem__"):
        x[k] = xp.ones(value_shape, device=device)


@pytest.mark.parametrize("fn", ["max", "min"])
def test_max_min_over_an_empty_axis_raise_on_meta_too(fn):
    with pytest.raises(ValueError, match=fn):
        getattr(xp, fn)(xp.zeros((0, 3)), axis=0)
    with pytest.raises(ValueError, match=fn):
        getattr(xp, fn)(xp.zeros((0, 3), device=META), axis=0)


# -- drop-in: values with extra leading size-1 dimensions, positional diff -------------------------
def test_setitem_accepts_extra_leading_size_one_dimensions():
    x = xp.zeros((3,))
    x[1] = xp.asarray([5.0])  # a 0-d selection, a (1,)-shaped value: NumPy and PyTorch accept
    x[:2] = xp.asarray([[[1.0, 2.0]]])
    assert np.asarray(x).tolist() == [1.0, 2.0, 0.0]
    y = xp.zeros((2, 2))
    y[xp.asarray([0, 1]), xp.asarray([1, 0])] = xp.asarray([[7.0, 8.0]])
    assert np.asarray(y).tolist() == [[0.0, 7.0], [8.0, 0.0]]
    with pytest.raises(ValueError, match="__setitem__"):
        x[1] = xp.asarray([5.0, 6.0])
    with pytest.raises(ValueError, match="__setitem__"):
        x[:2] = xp.asarray([[1.0, 2.0], [3.0, 4.0]])
    m = xp.zeros((3,), device=META)
    m[1] = xp.zeros((1, 1), device=META)
    with pytest.raises(ValueError, match="__setitem__"):
        m[1] = xp.zeros((2,), device=META)


def test_setitem_leading_ones_with_autograd():
    w = xp.asarray([1.0, 2.0], requires_grad=True)
    x = xp.zeros((3,))
    x[1] = w[:1] * 3.0
    xp.sum(x * x).backward()
    np.testing.assert_allclose(np.asarray(w.grad), [18.0, 0.0])  # d(9 w0^2)/dw0


def test_diff_takes_n_and_axis_positionally():
    a = np.array([[1.0, 4.0, 9.0, 16.0], [2.0, 3.0, 5.0, 8.0]])
    x = xp.asarray(a)
    np.testing.assert_array_equal(np.asarray(xp.diff(x, 1)), np.diff(a, 1))
    np.testing.assert_array_equal(np.asarray(xp.diff(x, 2, 1)), np.diff(a, 2, 1))
    np.testing.assert_array_equal(np.asarray(xp.diff(x, 1, 0)), np.diff(a, 1, 0))
    np.testing.assert_array_equal(np.asarray(xp.diff(x, n=2, axis=0)), np.diff(a, n=2, axis=0))
    with pytest.raises(TypeError):
        xp.diff(x, 1, 0, None)  # prepend/append stay keyword-only


@pytest.mark.skipif(os.environ.get("SCIPY_ARRAY_API") != "1", reason="needs SCIPY_ARRAY_API=1")
@pytest.mark.parametrize(
    "fn",
    [
        lambda m, x: m.zscore(x),
        lambda m, x: m.zscore(x, axis=None),
        lambda m, x: m.zscore(x, ddof=1),
        lambda m, x: m.gzscore(x),
        lambda m, x: m.variation(x),
    ],
)
def test_scipy_stats_on_one_dimensional_data(fn):
    stats = pytest.importorskip("scipy.stats")
    a = np.array([1.0, 2.0, 4.0, 8.0, 3.0])
    got = fn(stats, xp.asarray(a))
    assert isinstance(got, xp.Array)
    np.testing.assert_allclose(np.asarray(got), fn(stats, a), rtol=1e-12)
