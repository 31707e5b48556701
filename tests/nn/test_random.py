"""strided.random: reproducibility, distributions, dtypes, meta and argument checks."""

import numpy as np
import pytest

import strided as xp
from strided import random as sr


def test_seed_reproducible_and_state_roundtrip():
    g = sr.Generator().manual_seed(123)
    a = np.asarray(sr.randn(5, generator=g))
    g.manual_seed(123)
    b = np.asarray(sr.randn(5, generator=g))
    assert np.array_equal(a, b)
    state = g.get_state()
    c = np.asarray(sr.rand(4, generator=g))
    g.set_state(state)
    assert np.array_equal(c, np.asarray(sr.rand(4, generator=g)))
    assert g.initial_seed() == 123
    sr.manual_seed(7)
    d = np.asarray(sr.rand(3))
    sr.manual_seed(7)
    assert np.array_equal(d, np.asarray(sr.rand(3)))
    assert sr.initial_seed() == 7
    s = g.seed()
    assert g.initial_seed() == s


def test_shapes_and_dtypes():
    assert sr.rand(2, 3).shape == (2, 3) and sr.rand((2, 3)).dtype == xp.float32
    assert sr.randn([4], dtype=xp.float64).dtype == xp.float64
    r = sr.randint(3, 9, (200,))
    v = np.asarray(r)
    assert r.dtype == xp.int64 and v.min() >= 3 and v.max() < 9
    assert np.asarray(sr.randint(5, (100,))).max() < 5
    p = np.asarray(sr.randperm(10))
    assert sorted(p.tolist()) == list(range(10))
    assert sr.randn(2, 3, requires_grad=True).requires_grad


def test_distributions():
    g = sr.Generator().manual_seed(0)
    n = 200_000
    u = np.asarray(sr.rand(n, generator=g))
    assert u.min() >= 0 and u.max() < 1 and abs(u.mean() - 0.5) < 0.005
    z = np.asarray(sr.normal(2.0, 3.0, (n,), generator=g))
    assert abs(z.mean() - 2.0) < 0.05 and abs(z.std() - 3.0) < 0.05
    w = np.asarray(sr.uniform(-2.0, 4.0, (n,), generator=g))
    assert w.min() >= -2 and w.max() < 4 and abs(w.mean() - 1.0) < 0.03
    b = np.asarray(sr.bernoulli(0.3, (n,), generator=g))
    assert set(np.unique(b)) <= {0.0, 1.0} and abs(b.mean() - 0.3) < 0.01
    probs = xp.asarray([0.0, 1.0, 0.0, 1.0], dtype=xp.float64)
    bb = sr.bernoulli(probs, generator=g)
    assert bb.dtype == xp.float64 and np.array_equal(np.asarray(bb), [0, 1, 0, 1])


def test_meta_draws_nothing():
    g = sr.Generator().manual_seed(1)
    state = g.get_state()
    for x in (
        sr.rand(2, 3, device="meta", generator=g),
        sr.randn(4, device="meta", generator=g),
        sr.randint(0, 4, (3,), device="meta", generator=g),
        sr.randperm(5, device="meta", generator=g),
    ):
        assert x.device.type == "meta"
    assert sr.randint(0, 4, (3,), device="meta").shape == (3,)
    assert g.get_state() == state
    m = xp.empty((3,), device="meta")
    assert sr.uniform_(m) is m


def test_in_place_fill_keeps_leaf():
    x = xp.zeros((100,), dtype=xp.float32, requires_grad=True)
    sr.uniform_(x, -1.0, 1.0, generator=sr.Generator().manual_seed(3))
    v = np.asarray(x)
    assert x.is_leaf and x.requires_grad and v.min() >= -1 and v.max() < 1 and v.std() > 0.3
    sr.normal_(x, 5.0, 0.0)
    assert np.all(np.asarray(x) == 5.0)


def test_bad_arguments():
    with pytest.raises(ValueError, match="randint"):
        sr.randint(5, 5, (2,))
    with pytest.raises(ValueError, match="bernoulli"):
        sr.bernoulli(1.5, (2,))
    with pytest.raises(TypeError, match="rand"):
        sr.rand(2, dtype=xp.int32)
    with pytest.raises(ValueError, match="negative"):
        sr.randn(-1)
    with pytest.raises(TypeError, match="generator"):
        sr.rand(2, generator=np.random.default_rng())


def test_multinomial():
    g = sr.Generator().manual_seed(5)
    w = xp.asarray([[0.0, 1.0, 3.0], [1.0, 1.0, 0.0]])
    s = sr.multinomial(w, 4000, replacement=True, generator=g)
    assert s.shape == (2, 4000) and s.dtype == xp.int64
    v = np.asarray(s)
    assert not (v[0] == 0).any() and abs(np.mean(v[0] == 2) - 0.75) < 0.03
    assert not (v[1] == 2).any() and abs(np.mean(v[1] == 0) - 0.5) < 0.03
    p = np.asarray(sr.multinomial(xp.ones(5), 5, generator=g))
    assert sorted(p.tolist()) == list(range(5))
    with pytest.raises(RuntimeError, match="without replacement"):
        sr.multinomial(xp.ones(3), 4)
    with pytest.raises(RuntimeError, match="< 0"):
        sr.multinomial(xp.asarray([1.0, -1.0]), 1)
    assert sr.multinomial(xp.empty((3, 4), device="meta"), 2).shape == (3, 2)
