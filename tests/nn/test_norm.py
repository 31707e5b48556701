"""Normalisation functions and layers (batch_norm, layer_norm, group_norm, rms_norm;
BatchNorm1d/2d, LayerNorm, GroupNorm, RMSNorm) against PyTorch: same weights, forward values,
every gradient, running statistics over several training steps, evaluation mode, meta runs
and error messages."""

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import strided as xp
import strided.nn as nn
from strided.nn import _functional_norm as F

RTOL, ATOL = 1e-4, 1e-5


def _rng(seed=0):
    return np.random.default_rng(seed)


def _pair(a, requires_grad=True):
    """The same values as a strided array and a torch tensor."""
    a = np.ascontiguousarray(a)
    return xp.asarray(a, requires_grad=requires_grad), torch.tensor(a, requires_grad=requires_grad)


def _close(a, t, rtol=RTOL, atol=ATOL):
    assert a is not None, "missing gradient"
    expected = t.detach().numpy() if isinstance(t, torch.Tensor) else t
    np.testing.assert_allclose(np.asarray(a), expected, rtol=rtol, atol=atol)


def _backward_both(y, ty, rng):
    g = rng.standard_normal(tuple(ty.shape)).astype(ty.detach().numpy().dtype)
    y.backward(xp.asarray(g))
    ty.backward(torch.tensor(g))


def _load_from_torch(module, tmodule):
    module.load_state_dict({k: v.detach().numpy() for k, v in tmodule.state_dict().items()})


def _randomize(tmodule, rng):
    with torch.no_grad():
        for p in tmodule.parameters():
            p.copy_(torch.tensor(rng.standard_normal(tuple(p.shape)).astype(np.float32)))


# ----------------------------------------------------------------------------- functional


@pytest.mark.parametrize("shape,norm", [((4, 3, 5), (5,)), ((2, 3, 4, 2), (4, 2))])
@pytest.mark.parametrize("affine", [True, False])
def test_layer_norm_functional(shape, norm, affine):
    rng = _rng(1)
    x, tx = _pair(rng.standard_normal(shape).astype(np.float32))
    w = tw = b = tb = None
    if affine:
        w, tw = _pair(rng.standard_normal(norm).astype(np.float32))
        b, tb = _pair(rng.standard_normal(norm).astype(np.float32))
    y = F.layer_norm(x, norm, w, b, eps=1e-3)
    ty = TF.layer_norm(tx, norm, tw, tb, eps=1e-3)
    _close(y, ty)
    _backward_both(y, ty, rng)
    _close(x.grad, tx.grad)
    if affine:
        _close(w.grad, tw.grad)
        _close(b.grad, tb.grad)


def test_layer_norm_non_contiguous_and_weight_only():
    rng = _rng(2)
    base = rng.standard_normal((6, 4)).astype(np.float32)
    x, tx = _pair(base)
    w, tw = _pair(rng.standard_normal(6).astype(np.float32))
    y = F.layer_norm(x.T, (6,), w)  # a transposed view
    ty = TF.layer_norm(tx.T, (6,), tw)
    _close(y, ty)
    _backward_both(y, ty, rng)
    _close(x.grad, tx.grad)
    _close(w.grad, tw.grad)


def test_layer_norm_gradcheck_float64():
    rng = _rng(3)
    x = xp.asarray(rng.standard_normal((3, 4)), requires_grad=True)
    w = xp.asarray(rng.standard_normal(4), requires_grad=True)
    b = xp.asarray(rng.standard_normal(4), requires_grad=True)
    fn = lambda a, c, d: F.layer_norm(a, (4,), c, d)  # noqa: E731
    assert xp.autograd.gradcheck(fn, (x, w, b))
    assert xp.autograd.gradgradcheck(fn, (x, w, b))


@pytest.mark.parametrize("shape", [(5, 3), (4, 3, 6), (2, 3, 4, 5)])
def test_batch_norm_functional_training_updates_running_stats(shape):
    rng = _rng(4)
    x, tx = _pair(rng.standard_normal(shape).astype(np.float32) * 2 + 1)
    w, tw = _pair(rng.standard_normal(3).astype(np.float32))
    b, tb = _pair(rng.standard_normal(3).astype(np.float32))
    rm, trm = xp.zeros(3, dtype=xp.float32), torch.zeros(3)
    rv, trv = xp.ones(3, dtype=xp.float32), torch.ones(3)
    y = F.batch_norm(x, rm, rv, w, b, training=True, momentum=0.3, eps=1e-4)
    ty = TF.batch_norm(tx, trm, trv, tw, tb, training=True, momentum=0.3, eps=1e-4)
    _close(y, ty)
    _close(rm, trm)
    _close(rv, trv)  # unbiased batch variance
    _backward_both(y, ty, rng)
    for a, t in ((x, tx), (w, tw), (b, tb)):
        _close(a.grad, t.grad)


def test_batch_norm_functional_eval_and_no_affine():
    rng = _rng(5)
    x, tx = _pair(rng.standard_normal((4, 3, 2)).astype(np.float32))
    w, tw = _pair(rng.standard_normal(3).astype(np.float32))
    b, tb = _pair(rng.standard_normal(3).astype(np.float32))
    rm = rng.standard_normal(3).astype(np.float32)
    rv = rng.random(3).astype(np.float32) + 0.5
    y = F.batch_norm(x, xp.asarray(rm), xp.asarray(rv), w, b, training=False)
    ty = TF.batch_norm(tx, torch.tensor(rm), torch.tensor(rv), tw, tb, training=False)
    _close(y, ty)
    _backward_both(y, ty, rng)
    for a, t in ((x, tx), (w, tw), (b, tb)):
        _close(a.grad, t.grad)
    # no affine, no running stats: batch statistics only
    x2, tx2 = _pair(rng.standard_normal((5, 3)).astype(np.float32))
    y2 = F.batch_norm(x2, None, None, training=True)
    ty2 = TF.batch_norm(tx2, None, None, training=True)
    _close(y2, ty2)
    _backward_both(y2, ty2, rng)
    _close(x2.grad, tx2.grad)


def test_batch_norm_gradcheck_float64():
    rng = _rng(6)
    x = xp.asarray(rng.standard_normal((4, 2, 3)), requires_grad=True)
    w = xp.asarray(rng.standard_normal(2), requires_grad=True)
    b = xp.asarray(rng.standard_normal(2), requires_grad=True)
    fn = lambda a, c, d: F.batch_norm(a, None, None, c, d, training=True)  # noqa: E731
    assert xp.autograd.gradcheck(fn, (x, w, b))
    assert xp.autograd.gradgradcheck(fn, (x, w, b))


@pytest.mark.parametrize("groups", [1, 2, 4])
def test_group_norm_functional(groups):
    rng = _rng(7)
    x, tx = _pair(rng.standard_normal((3, 4, 5)).astype(np.float32))
    w, tw = _pair(rng.standard_normal(4).astype(np.float32))
    b, tb = _pair(rng.standard_normal(4).astype(np.float32))
    y = F.group_norm(x, groups, w, b, eps=1e-3)
    ty = TF.group_norm(tx, groups, tw, tb, eps=1e-3)
    _close(y, ty)
    _backward_both(y, ty, rng)
    for a, t in ((x, tx), (w, tw), (b, tb)):
        _close(a.grad, t.grad)


@pytest.mark.parametrize("eps", [None, 1e-2])
def test_rms_norm_functional(eps):
    rng = _rng(8)
    x, tx = _pair(rng.standard_normal((3, 2, 4)).astype(np.float32))
    w, tw = _pair(rng.standard_normal((2, 4)).astype(np.float32))
    y = F.rms_norm(x, (2, 4), w, eps=eps)
    ty = TF.rms_norm(tx, (2, 4), tw, eps=eps)
    _close(y, ty)
    _backward_both(y, ty, rng)
    _close(x.grad, tx.grad)
    _close(w.grad, tw.grad)


def test_float64_values():
    rng = _rng(9)
    a = rng.standard_normal((3, 4, 5))
    x, tx = _pair(a)
    _close(F.layer_norm(x, (5,)), TF.layer_norm(tx, (5,)), rtol=1e-12, atol=1e-12)
    _close(F.group_norm(x, 2), TF.group_norm(tx, 2), rtol=1e-12, atol=1e-12)
    _close(F.rms_norm(x, (5,)), TF.rms_norm(tx, (5,)), rtol=1e-12, atol=1e-12)
    _close(
        F.batch_norm(x, None, None, training=True),
        TF.batch_norm(tx, None, None, training=True),
        rtol=1e-12,
        atol=1e-12,
    )


# ----------------------------------------------------------------------------- modules


def test_module_defaults_names_and_repr_match_torch():
    pairs = [
        (nn.LayerNorm(4), torch.nn.LayerNorm(4)),
        (
            nn.LayerNorm((2, 3), elementwise_affine=False),
            torch.nn.LayerNorm((2, 3), elementwise_affine=False),
        ),
        (nn.LayerNorm(4, bias=False), torch.nn.LayerNorm(4, bias=False)),
        (nn.GroupNorm(2, 4), torch.nn.GroupNorm(2, 4)),
        (nn.GroupNorm(2, 4, affine=False), torch.nn.GroupNorm(2, 4, affine=False)),
        (nn.GroupNorm(2, 4, bias=False), torch.nn.GroupNorm(2, 4, bias=False)),
        (nn.RMSNorm(4), torch.nn.RMSNorm(4)),
        (nn.RMSNorm([2, 4], eps=1e-3), torch.nn.RMSNorm([2, 4], eps=1e-3)),
        (nn.BatchNorm1d(3), torch.nn.BatchNorm1d(3)),
        (
            nn.BatchNorm2d(3, momentum=None, affine=False),
            torch.nn.BatchNorm2d(3, momentum=None, affine=False),
        ),
        (
            nn.BatchNorm2d(3, track_running_stats=False),
            torch.nn.BatchNorm2d(3, track_running_stats=False),
        ),
        (nn.BatchNorm1d(3, bias=False), torch.nn.BatchNorm1d(3, bias=False)),
    ]
    for m, tm in pairs:
        assert repr(m) == repr(tm)
        sd, tsd = m.state_dict(), tm.state_dict()
        assert list(sd) == list(tsd)
        for k in sd:
            assert sd[k].shape == tuple(tsd[k].shape)
            assert str(sd[k].dtype).split(".")[-1] == str(tsd[k].dtype).split(".")[-1]
            np.testing.assert_array_equal(np.asarray(sd[k]), tsd[k].numpy())
        assert [n for n, _ in m.named_parameters()] == [n for n, _ in tm.named_parameters()]


@pytest.mark.parametrize(
    "make,shape",
    [
        (lambda M: M.LayerNorm((3, 4), eps=1e-3), (2, 5, 3, 4)),
        (lambda M: M.LayerNorm(4, bias=False), (3, 4)),
        (lambda M: M.GroupNorm(3, 6), (2, 6, 3, 2)),
        (lambda M: M.RMSNorm(4), (2, 3, 4)),
    ],
)
def test_norm_modules_with_torch_weights(make, shape):
    rng = _rng(10)
    m, tm = make(nn), make(torch.nn)
    _randomize(tm, rng)
    _load_from_torch(m, tm)
    x, tx = _pair(rng.standard_normal(shape).astype(np.float32))
    y, ty = m(x), tm(tx)
    _close(y, ty)
    _backward_both(y, ty, rng)
    _close(x.grad, tx.grad)
    for (n, p), (tn, tp) in zip(m.named_parameters(), tm.named_parameters()):
        assert n == tn
        _close(p.grad, tp.grad)


@pytest.mark.parametrize(
    "cls,shape,kw",
    [
        ("BatchNorm1d", (6, 3), {}),
        ("BatchNorm1d", (4, 3, 5), {"momentum": None}),
        ("BatchNorm2d", (4, 3, 2, 3), {"eps": 1e-3, "momentum": 0.25}),
        ("BatchNorm2d", (2, 3, 3, 2), {"affine": False}),
    ],
)
def test_batchnorm_running_stats_over_steps_then_eval(cls, shape, kw):
    rng = _rng(11)
    m, tm = getattr(nn, cls)(3, **kw), getattr(torch.nn, cls)(3, **kw)
    _randomize(tm, rng)
    _load_from_torch(m, tm)
    for step in range(3):
        a = (rng.standard_normal(shape) * (step + 1) + step).astype(np.float32)
        x, tx = _pair(a)
        y, ty = m(x), tm(tx)
        _close(y, ty)
        _backward_both(y, ty, rng)
        _close(x.grad, tx.grad)
        for p, tp in zip(m.parameters(), tm.parameters()):
            _close(p.grad, tp.grad)
            p.grad = None
            tp.grad = None
        _close(m.running_mean, tm.running_mean)
        _close(m.running_var, tm.running_var)
        assert int(m.num_batches_tracked) == int(tm.num_batches_tracked) == step + 1
    m.eval()
    tm.eval()
    x, tx = _pair(rng.standard_normal(shape).astype(np.float32))
    y, ty = m(x), tm(tx)
    _close(y, ty)
    _backward_both(y, ty, rng)
    _close(x.grad, tx.grad)
    for p, tp in zip(m.parameters(), tm.parameters()):
        _close(p.grad, tp.grad)
    # evaluation leaves the running statistics alone
    _close(m.running_mean, tm.running_mean)
    assert int(m.num_batches_tracked) == 3


def test_batchnorm_channels_last_view():
    # an (N, H, W, C) buffer seen as (N, C, H, W): strides that are not C-contiguous
    rng = _rng(15)
    m, tm = nn.BatchNorm2d(3), torch.nn.BatchNorm2d(3)
    _randomize(tm, rng)
    _load_from_torch(m, tm)
    x, tx = _pair(rng.standard_normal((2, 4, 5, 3)).astype(np.float32))
    y = m(xp.permute_dims(x, (0, 3, 1, 2)))
    ty = tm(tx.permute(0, 3, 1, 2))
    _close(y, ty)
    _backward_both(y, ty, rng)
    _close(x.grad, tx.grad)
    _close(m.weight.grad, tm.weight.grad)
    _close(m.running_var, tm.running_var)


def test_batchnorm_without_running_stats_uses_batch_stats_in_eval():
    rng = _rng(12)
    m = nn.BatchNorm2d(3, track_running_stats=False)
    tm = torch.nn.BatchNorm2d(3, track_running_stats=False)
    assert m.running_mean is None and m.num_batches_tracked is None
    for mode in ("train", "eval"):
        getattr(m, mode)()
        getattr(tm, mode)()
        x, tx = _pair(rng.standard_normal((2, 3, 2, 2)).astype(np.float32))
        y, ty = m(x), tm(tx)
        _close(y, ty)
        _backward_both(y, ty, rng)
        _close(x.grad, tx.grad)


def test_batchnorm_reset_and_load_old_state_dict():
    rng = _rng(13)
    m = nn.BatchNorm1d(3)
    m(xp.asarray(rng.standard_normal((4, 3)).astype(np.float32)))
    assert int(m.num_batches_tracked) == 1
    m.reset_running_stats()
    np.testing.assert_array_equal(np.asarray(m.running_mean), np.zeros(3))
    np.testing.assert_array_equal(np.asarray(m.running_var), np.ones(3))
    assert int(m.num_batches_tracked) == 0
    # a state dict without num_batches_tracked (PyTorch before version 2) still loads
    sd = {k: v for k, v in torch.nn.BatchNorm1d(3).state_dict().items()}
    del sd["num_batches_tracked"]
    m.load_state_dict({k: v.numpy() for k, v in sd.items()})


def test_batchnorm_momentum_none_is_cumulative_average():
    rng = _rng(14)
    m = nn.BatchNorm1d(2, momentum=None)
    batches = [rng.standard_normal((5, 2)).astype(np.float32) + i for i in range(4)]
    for b in batches:
        m(xp.asarray(b))
    # the running mean is the plain average of the batch means
    np.testing.assert_allclose(
        np.asarray(m.running_mean), np.mean([b.mean(0) for b in batches], axis=0), rtol=1e-5
    )
    np.testing.assert_allclose(
        np.asarray(m.running_var),
        np.mean([b.var(0, ddof=1) for b in batches], axis=0),
        rtol=1e-5,
    )


def test_modules_float64_and_to():
    m = nn.LayerNorm(4, dtype=xp.float64)
    assert m.weight.dtype == xp.float64
    bn = nn.BatchNorm1d(3, dtype=xp.float64)
    assert bn.running_mean.dtype == xp.float64 and bn.num_batches_tracked.dtype == xp.int64
    x = xp.asarray(np.random.default_rng(0).standard_normal((4, 3)))
    tb = torch.nn.BatchNorm1d(3).double()
    _close(bn(x), tb(torch.tensor(np.asarray(x))), rtol=1e-12, atol=1e-12)
    _close(bn.running_var, tb.running_var, rtol=1e-12, atol=1e-12)


# ----------------------------------------------------------------------------- meta


@pytest.mark.parametrize(
    "make,shape",
    [
        (lambda: nn.LayerNorm(4), (2, 3, 4)),
        (lambda: nn.GroupNorm(2, 4), (2, 4, 3)),
        (lambda: nn.RMSNorm(4), (3, 4)),
        (lambda: nn.BatchNorm1d(4), (5, 4)),
        (lambda: nn.BatchNorm2d(4), (2, 4, 3, 3)),
        (lambda: nn.BatchNorm1d(4, momentum=None), (3, 4, 2)),
    ],
)
@pytest.mark.parametrize("train", [True, False])
def test_meta_matches_cpu(make, shape, train):
    results = {}
    for dev in ("cpu", "meta"):
        m = make().to(device=dev)
        m.train(train)
        x = xp.ones(shape, dtype=xp.float32, device=dev, requires_grad=True)
        y = m(x)
        xp.sum(y * y).backward()
        grads = [(p.grad.shape, p.grad.dtype) for p in m.parameters()]
        bufs = [(b.shape, b.dtype) for b in m.buffers()]
        results[dev] = (y.shape, y.dtype, x.grad.shape, x.grad.dtype, grads, bufs)
        assert y.device == dev and x.grad.device == dev
    assert results["cpu"] == results["meta"]


# ----------------------------------------------------------------------------- errors


def test_errors_name_the_layer_and_shapes():
    with pytest.raises(
        ValueError, match=r"BatchNorm2d: expected input with 3 channels.*\(2, 4, 5, 5\)"
    ):
        nn.BatchNorm2d(3)(xp.ones((2, 4, 5, 5)))
    with pytest.raises(ValueError, match=r"BatchNorm2d: expected 4D input.*\(2, 3\)"):
        nn.BatchNorm2d(3)(xp.ones((2, 3)))
    with pytest.raises(ValueError, match=r"BatchNorm1d: expected 2D or 3D input"):
        nn.BatchNorm1d(3)(xp.ones((2, 3, 4, 4)))
    with pytest.raises(ValueError, match="more than 1 value per channel"):
        nn.BatchNorm1d(3)(xp.ones((1, 3)))
    nn.BatchNorm1d(3).eval()(xp.ones((1, 3)))  # fine in evaluation
    with pytest.raises(ValueError, match=r"layer_norm: given normalized_shape=\[5\].*\[2, 4\]"):
        nn.LayerNorm(5)(xp.ones((2, 4)))
    with pytest.raises(ValueError, match=r"GroupNorm: expected input of shape \(N, 6, \*\)"):
        nn.GroupNorm(2, 6)(xp.ones((2, 4, 3)))
    with pytest.raises(ValueError, match="divisible by num_groups"):
        nn.GroupNorm(4, 6)
    with pytest.raises(ValueError, match="group_norm: expected the number of channels"):
        F.group_norm(xp.ones((2, 6, 3)), 4)
    with pytest.raises(TypeError, match="layer_norm: expected a real floating-point input"):
        F.layer_norm(xp.ones((2, 4), dtype=xp.int64), (4,))
    with pytest.raises(ValueError, match=r"batch_norm: weight of shape \(4,\)"):
        F.batch_norm(xp.ones((2, 3)), None, None, xp.ones(4), training=True)
    with pytest.raises(ValueError, match="running_mean and running_var must be given"):
        F.batch_norm(xp.ones((2, 3)), None, None, training=False)
    # the meta device raises the same errors
    with pytest.raises(ValueError, match="BatchNorm2d: expected input with 3 channels"):
        nn.BatchNorm2d(3, device="meta")(xp.ones((2, 4, 5, 5), device="meta"))
