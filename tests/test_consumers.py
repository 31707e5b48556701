"""Drop-in with real consumers: scikit-learn (array_api_dispatch=True) and SciPy's array-API
aware functions accept strided arrays and return strided arrays with NumPy's values."""

from __future__ import annotations

import os

import numpy as np
import pytest

import strided as xp

sklearn = pytest.importorskip("sklearn")
pytest.importorskip("array_api_compat")
scipy = pytest.importorskip("scipy")
if os.environ.get("SCIPY_ARRAY_API") != "1":  # conftest sets it before SciPy is imported
    pytest.skip("SCIPY_ARRAY_API=1 must be set before SciPy is imported", allow_module_level=True)

from scipy import special, stats  # noqa: E402
from sklearn import metrics, preprocessing  # noqa: E402

RNG = np.random.default_rng(0)
X_NP = RNG.standard_normal((25, 4)) * [1.0, 10.0, 0.1, 3.0] + [0.0, 5.0, -1.0, 2.0]


@pytest.fixture(autouse=True)
def array_api_dispatch():
    with sklearn.config_context(array_api_dispatch=True):
        yield


@pytest.mark.parametrize(
    "estimator",
    [
        preprocessing.StandardScaler,
        preprocessing.MinMaxScaler,
        preprocessing.MaxAbsScaler,
        preprocessing.Normalizer,
    ],
)
def test_sklearn_preprocessing_round_trip(estimator):
    got = estimator().fit_transform(xp.asarray(X_NP))
    assert isinstance(got, xp.Array) and got.device == "cpu"
    with sklearn.config_context(array_api_dispatch=False):
        want = estimator().fit_transform(X_NP)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize(
    "metric", ["r2_score", "mean_squared_error", "mean_absolute_error", "max_error"]
)
def test_sklearn_metrics(metric):
    y, p = RNG.standard_normal(40), RNG.standard_normal(40)
    got = getattr(metrics, metric)(xp.asarray(y), xp.asarray(p))
    with sklearn.config_context(array_api_dispatch=False):
        want = getattr(metrics, metric)(y, p)
    assert float(got) == pytest.approx(want, rel=1e-12)


@pytest.mark.parametrize(
    "name,fn",
    [
        ("logsumexp", lambda m, x: m.logsumexp(x, axis=1)),
        ("softmax", lambda m, x: m.softmax(x, axis=1)),
        ("zscore", lambda m, x: m.zscore(x, axis=0)),
        ("moment", lambda m, x: m.moment(x, order=3, axis=0)),
        ("skew", lambda m, x: m.skew(x, axis=0)),
    ],
)
def test_scipy_array_api_functions(name, fn):
    module = special if name in ("logsumexp", "softmax") else stats
    got = fn(module, xp.asarray(X_NP))
    assert isinstance(got, xp.Array)
    np.testing.assert_allclose(np.asarray(got), fn(module, X_NP), rtol=1e-10, atol=1e-12)
