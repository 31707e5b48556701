"""nn.utils: clip_grad_norm_ / clip_grad_value_ / parameters_to_vector / vector_to_parameters
against PyTorch."""

import numpy as np
import pytest
import torch

import strided as xp
import strided.nn as nn
from strided.nn.utils import (
    clip_grad_norm_,
    clip_grad_value_,
    parameters_to_vector,
    vector_to_parameters,
)


def _pairs(scale=1.0, seed=0):
    rng = np.random.default_rng(seed)
    shapes = [(3, 4), (4,), (2, 2, 2)]
    sp, tp = [], []
    for s in shapes:
        v = rng.standard_normal(s).astype(np.float32)
        g = (rng.standard_normal(s) * scale).astype(np.float32)
        p = nn.Parameter(xp.asarray(v))
        p.grad = xp.asarray(g)
        t = torch.nn.Parameter(torch.tensor(v))
        t.grad = torch.tensor(g)
        sp.append(p)
        tp.append(t)
    return sp, tp


@pytest.mark.parametrize("norm_type", [2.0, 1, 3.5, float("inf")])
@pytest.mark.parametrize("max_norm", [0.5, 1e3])
def test_clip_grad_norm_matches_torch(norm_type, max_norm):
    sp, tp = _pairs()
    ns = clip_grad_norm_(sp, max_norm, norm_type=norm_type)
    nt = torch.nn.utils.clip_grad_norm_(tp, max_norm, norm_type=norm_type)
    assert ns.shape == () and ns.dtype == xp.float32
    np.testing.assert_allclose(float(ns), nt.item(), rtol=1e-5)
    for p, t in zip(sp, tp):
        np.testing.assert_allclose(np.asarray(p.grad), t.grad.numpy(), rtol=1e-5, atol=1e-7)


def test_clip_grad_norm_nonfinite_and_single_and_empty():
    sp, _ = _pairs()
    sp[0].grad = xp.asarray(np.full((3, 4), np.inf, dtype=np.float32))
    with pytest.raises(RuntimeError, match="non-finite"):
        clip_grad_norm_(sp, 1.0, error_if_nonfinite=True)
    p = nn.Parameter(xp.asarray([3.0, 4.0]))
    p.grad = xp.asarray([3.0, 4.0])
    assert float(clip_grad_norm_(p, 1.0)) == pytest.approx(5.0)
    np.testing.assert_allclose(np.asarray(p.grad), [0.6, 0.8], rtol=1e-5)
    assert float(clip_grad_norm_([nn.Parameter(xp.ones(2))], 1.0)) == 0.0


def test_clip_grad_value_matches_torch():
    sp, tp = _pairs(scale=3.0)
    clip_grad_value_(sp, 1.5)
    torch.nn.utils.clip_grad_value_(tp, 1.5)
    for p, t in zip(sp, tp):
        np.testing.assert_array_equal(np.asarray(p.grad), t.grad.numpy())


def test_parameters_vector_roundtrip():
    sm, tm = nn.Linear(3, 2), torch.nn.Linear(3, 2)
    sm.load_state_dict({k: v.detach().numpy() for k, v in tm.state_dict().items()})
    vs = parameters_to_vector(sm.parameters())
    vt = torch.nn.utils.parameters_to_vector(tm.parameters())
    np.testing.assert_array_equal(np.asarray(vs), vt.detach().numpy())
    xp.sum(vs * 2).backward()  # differentiable
    assert np.all(np.asarray(sm.weight.grad) == 2)
    new = np.arange(8, dtype=np.float32)
    w = sm.weight
    vector_to_parameters(xp.asarray(new), sm.parameters())
    torch.nn.utils.vector_to_parameters(torch.tensor(new), tm.parameters())
    assert sm.weight is w and sm.weight.requires_grad
    np.testing.assert_array_equal(np.asarray(sm.weight), tm.weight.detach().numpy())
    np.testing.assert_array_equal(np.asarray(sm.bias), tm.bias.detach().numpy())
    with pytest.raises(ValueError, match="8 elements"):
        vector_to_parameters(xp.zeros(5), sm.parameters())
    with pytest.raises(TypeError):
        vector_to_parameters(np.zeros(8), sm.parameters())


def test_meta_clip():
    p = nn.Parameter(xp.empty((3,), device="meta"))
    p.grad = xp.empty((3,), device="meta")
    n = clip_grad_norm_([p], 1.0, error_if_nonfinite=True)
    assert n.shape == () and n.device.type == "meta"
    clip_grad_value_([p], 1.0)
