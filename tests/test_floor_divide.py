"""float floor_divide follows NumPy's divmod, also where x / y rounds onto an integer (found by
benchmarks/bench_ops.py's check of every result against NumPy)."""

from __future__ import annotations

import numpy as np
import pytest

import strided as xp


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_floor_divide_matches_numpy(dtype):
    rng = np.random.default_rng(1)
    x = rng.uniform(-10, 10, 200_000).astype(dtype)
    y = rng.uniform(-10, 10, 200_000).astype(dtype)
    x = np.concatenate([x, np.array([-6.2013426, -8.362473, 1.0, -1.0, 0.0, -0.0, 5.0], dtype)])
    y = np.concatenate([y, np.array([0.016625583, 0.076022476, 0.0, 0.0, 3.0, 3.0, -0.0], dtype)])
    with np.errstate(all="ignore"):
        want = np.floor_divide(x, y)
    got = np.asarray(xp.floor_divide(xp.asarray(x), xp.asarray(y)))
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want))


@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "uint8", "uint16", "uint32", "int64"])
def test_large_int_array_by_python_int(dtype):
    """Large arrays over a Python int take the float64 route (exact for <= 32-bit integers):
    every quotient, extremes included, equals NumPy's integer floor division."""
    info = np.iinfo(dtype)
    rng = np.random.default_rng(3)
    a = rng.integers(info.min, info.max, 200_000, endpoint=True).astype(dtype)
    a[:6] = [info.min, info.max, 0, 1, info.min + 1, info.max - 1]
    for d in (1, 2, 3, 7, 1000, -2, -3, -7, -1, int(info.max), int(info.min)):
        if not info.min <= d <= info.max or (d == -1 and info.min == 0):
            continue
        got = np.asarray(xp.asarray(a) // d)
        with np.errstate(all="ignore"):
            want = a // np.array(d, dtype)
        np.testing.assert_array_equal(got, want, err_msg=f"{dtype} // {d}")
