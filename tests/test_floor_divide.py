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
