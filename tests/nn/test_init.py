"""nn.init: fans and gains against PyTorch, the distributions' moments and bounds against the
formulas, generator reproducibility, meta (nothing done) and in-place semantics."""

import math

import numpy as np
import pytest
import torch

import strided as xp
import strided.nn as nn
from strided.nn import init
from strided.random import Generator


@pytest.mark.parametrize("shape", [(7, 5), (8, 3, 3), (6, 4, 3, 2), (2, 9, 1, 1, 3)])
def test_fans_match_torch(shape):
    a = xp.zeros(shape, dtype=xp.float32)
    assert init._calculate_fan_in_and_fan_out(a) == torch.nn.init._calculate_fan_in_and_fan_out(
        torch.zeros(shape)
    )


def test_fan_errors():
    with pytest.raises(ValueError, match="fewer than 2"):
        init._calculate_fan_in_and_fan_out(xp.zeros((3,)))
    with pytest.raises(ValueError, match="fan_in, fan_out"):
        init.kaiming_uniform_(xp.zeros((3, 3)), mode="fan_avg")


@pytest.mark.parametrize(
    "nl,param",
    [("linear", None), ("conv2d", None), ("sigmoid", None), ("tanh", None), ("relu", None),
     ("leaky_relu", None), ("leaky_relu", 0.2), ("leaky_relu", math.sqrt(5)), ("selu", None)],
)  # fmt: skip
def test_gain_matches_torch(nl, param):
    assert init.calculate_gain(nl, param) == pytest.approx(torch.nn.init.calculate_gain(nl, param))


def test_gain_unknown():
    with pytest.raises(ValueError, match="Unsupported nonlinearity"):
        init.calculate_gain("swish")


def _stats(a):
    v = np.asarray(a, dtype=np.float64)
    return v.mean(), v.std(), v.min(), v.max()


def test_uniform_family_bounds_and_moments():
    g = Generator().manual_seed(0)
    w = nn.Parameter(xp.zeros((400, 300), dtype=xp.float32))
    fan_in, fan_out = 300, 400
    for fill, bound in [
        (lambda t: init.uniform_(t, -0.5, 1.5, generator=g), None),
        (lambda t: init.xavier_uniform_(t, gain=2.0, generator=g),
         2.0 * math.sqrt(6 / (fan_in + fan_out))),
        (lambda t: init.kaiming_uniform_(t, a=math.sqrt(5), generator=g),
         math.sqrt(3) * math.sqrt(2 / 6) / math.sqrt(fan_in)),
        (lambda t: init.kaiming_uniform_(t, mode="fan_out", nonlinearity="relu", generator=g),
         math.sqrt(3) * math.sqrt(2) / math.sqrt(fan_out)),
    ]:  # fmt: skip
        assert fill(w) is w
        mean, std, lo, hi = _stats(w)
        a, b = (-0.5, 1.5) if bound is None else (-bound, bound)
        assert a <= lo and hi < b
        assert lo < a + 0.01 * (b - a) and hi > b - 0.01 * (b - a)
        assert abs(mean - (a + b) / 2) < 0.01 * (b - a)
        assert std == pytest.approx((b - a) / math.sqrt(12), rel=0.01)
    assert w.is_leaf and w.requires_grad and w.grad_fn is None


def test_normal_family_moments():
    g = Generator().manual_seed(1)
    w = xp.zeros((500, 200), dtype=xp.float64)
    for fill, mean, std in [
        (lambda t: init.normal_(t, 0.5, 2.0, generator=g), 0.5, 2.0),
        (lambda t: init.xavier_normal_(t, generator=g), 0.0, math.sqrt(2 / 700)),
        (lambda t: init.kaiming_normal_(t, nonlinearity="relu", generator=g), 0.0,
         math.sqrt(2 / 200)),
        (lambda t: init.kaiming_normal_(t, mode="fan_out", generator=g), 0.0,
         math.sqrt(2 / (1 + 0.0)) / math.sqrt(500)),
    ]:  # fmt: skip
        fill(w)
        m, s, _, _ = _stats(w)
        assert abs(m - mean) < 0.02 * std + 1e-12 + 0.01 * abs(mean)
        assert s == pytest.approx(std, rel=0.02)


def test_trunc_normal_bounds_and_std():
    w = xp.zeros((100_000,), dtype=xp.float32)
    init.trunc_normal_(w, mean=0.0, std=1.0, a=-1.0, b=1.0, generator=Generator().manual_seed(2))
    _, s, lo, hi = _stats(w)
    assert lo >= -1 and hi <= 1
    t = torch.empty(1_000_000)
    torch.nn.init.trunc_normal_(t, a=-1.0, b=1.0)
    assert s == pytest.approx(t.std().item(), rel=0.02)
    init.trunc_normal_(w, mean=3.0, std=0.02, a=2.96, b=3.04)
    _, _, lo, hi = _stats(w)
    assert lo >= 2.96 - 1e-6 and hi <= 3.04 + 1e-6


def test_orthogonal():
    for shape in [(6, 4), (4, 6), (3, 2, 2, 2)]:
        w = xp.zeros(shape, dtype=xp.float64)
        init.orthogonal_(w, gain=2.0, generator=Generator().manual_seed(3))
        m = np.asarray(w).reshape(shape[0], -1)
        if m.shape[0] >= m.shape[1]:
            np.testing.assert_allclose(m.T @ m, 4 * np.eye(m.shape[1]), atol=1e-10)
        else:
            np.testing.assert_allclose(m @ m.T, 4 * np.eye(m.shape[0]), atol=1e-10)


def test_constants_eye_dirac():
    w = xp.zeros((3, 4), dtype=xp.float32)
    init.constant_(w, 2.5)
    assert np.all(np.asarray(w) == 2.5)
    init.ones_(w)
    assert np.all(np.asarray(w) == 1)
    init.zeros_(w)
    assert np.all(np.asarray(w) == 0)
    init.eye_(w)
    np.testing.assert_array_equal(np.asarray(w), np.eye(3, 4))
    with pytest.raises(ValueError, match="2 dimensions"):
        init.eye_(xp.zeros((2, 2, 2)))
    c = xp.zeros((4, 2, 3, 3), dtype=xp.float32)
    tc = torch.zeros(4, 2, 3, 3)
    init.dirac_(c, groups=2)
    torch.nn.init.dirac_(tc, groups=2)
    np.testing.assert_array_equal(np.asarray(c), tc.numpy())


def test_generator_reproducible():
    a = xp.zeros((5, 5), dtype=xp.float32)
    b = xp.zeros((5, 5), dtype=xp.float32)
    init.kaiming_uniform_(a, generator=Generator().manual_seed(9))
    init.kaiming_uniform_(b, generator=Generator().manual_seed(9))
    np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def test_meta_does_nothing():
    g = Generator().manual_seed(4)
    state = g.get_state()
    m = xp.empty((5, 3), dtype=xp.float32, device="meta")
    for fill in (init.uniform_, init.normal_, init.xavier_uniform_, init.kaiming_normal_,
                 init.orthogonal_, init.trunc_normal_):  # fmt: skip
        assert fill(m, generator=g) is m
    assert init.zeros_(m) is m and init.eye_(m) is m
    assert g.get_state() == state
