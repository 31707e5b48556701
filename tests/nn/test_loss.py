"""Loss functions and loss modules against PyTorch: every reduction and option, forward values
and the gradients of input (and target where PyTorch has one), extreme values, meta runs and
error messages."""

import warnings
from functools import partial

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import strided as xp
import strided.nn as nn
from strided.nn import _functional_loss as F

RTOL, ATOL = 1e-4, 1e-5
REDUCTIONS = ["none", "mean", "sum"]


def _rng(seed=0):
    return np.random.default_rng(seed)


def _check(fn, tfn, arrays, grads, rtol=RTOL, atol=ATOL, seed=0):
    """Run ``fn`` on strided copies and ``tfn`` on torch copies of ``arrays``; compare the
    results and the gradients of the arrays whose ``grads`` flag is set."""
    rng = _rng(seed)
    s = [None if a is None else xp.asarray(a, requires_grad=bool(g)) for a, g in zip(arrays, grads)]
    t = [
        None if a is None else torch.tensor(a, requires_grad=bool(g)) for a, g in zip(arrays, grads)
    ]
    y, ty = fn(*s), tfn(*t)
    assert y.shape == tuple(ty.shape)
    assert str(y.dtype).split(".")[-1] == str(ty.dtype).split(".")[-1]
    np.testing.assert_allclose(np.asarray(y), ty.detach().numpy(), rtol=rtol, atol=atol)
    if not any(grads):
        return
    g = rng.standard_normal(tuple(ty.shape)).astype(ty.detach().numpy().dtype)
    y.backward(xp.asarray(g))
    ty.backward(torch.tensor(g))
    for a, ta, flag in zip(s, t, grads):
        if flag:
            assert a.grad is not None
            np.testing.assert_allclose(np.asarray(a.grad), ta.grad.numpy(), rtol=rtol, atol=atol)


# ----------------------------------------------------------------------------- cross entropy


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("smoothing", [0.0, 0.25])
@pytest.mark.parametrize("weighted", [False, True])
def test_cross_entropy_class_indices(reduction, smoothing, weighted):
    rng = _rng(1)
    x = rng.standard_normal((6, 4)).astype(np.float32) * 3
    t = rng.integers(0, 4, 6)
    t[2] = -100  # ignored
    w = (rng.random(4) + 0.5).astype(np.float32) if weighted else None
    kw = dict(reduction=reduction, label_smoothing=smoothing)
    _check(
        lambda a, b, c: F.cross_entropy(a, b, c, **kw),
        lambda a, b, c: TF.cross_entropy(a, b, c, **kw),
        [x, t, w],
        [1, 0, 0],
    )


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_cross_entropy_spatial_custom_ignore_float64(reduction):
    rng = _rng(2)
    x = rng.standard_normal((2, 3, 4, 2))
    t = rng.integers(0, 3, (2, 4, 2))
    w = rng.random(3) + 0.5
    kw = dict(reduction=reduction, ignore_index=1, label_smoothing=0.1)
    _check(
        lambda a, b, c: F.cross_entropy(a, b, c, **kw),
        lambda a, b, c: TF.cross_entropy(a, b, c, **kw),
        [x, t, w],
        [1, 0, 0],
        rtol=1e-10,
        atol=1e-12,
    )


def test_cross_entropy_unbatched_and_non_contiguous():
    rng = _rng(3)
    x = rng.standard_normal(5).astype(np.float32)
    for red in REDUCTIONS:
        _check(
            partial(F.cross_entropy, reduction=red),
            partial(TF.cross_entropy, reduction=red),
            [x, np.array(3)],
            [1, 0],
        )
    # a transposed (C, N) buffer read as (N, C)
    base = rng.standard_normal((4, 6)).astype(np.float32)
    t = rng.integers(0, 4, 6)
    s = xp.asarray(base, requires_grad=True)
    ts = torch.tensor(base, requires_grad=True)
    y = F.cross_entropy(s.T, xp.asarray(t))
    ty = TF.cross_entropy(ts.T, torch.tensor(t))
    np.testing.assert_allclose(float(y), float(ty.detach()), rtol=RTOL)
    y.backward()
    ty.backward()
    np.testing.assert_allclose(np.asarray(s.grad), ts.grad.numpy(), rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("smoothing", [0.0, 0.3])
def test_cross_entropy_probabilities(reduction, smoothing):
    rng = _rng(4)
    x = rng.standard_normal((5, 4, 2)).astype(np.float32)
    p = rng.random((5, 4, 2)).astype(np.float32)
    p /= p.sum(1, keepdims=True)
    w = (rng.random(4) + 0.5).astype(np.float32)
    kw = dict(reduction=reduction, label_smoothing=smoothing)
    _check(
        lambda a, b, c: F.cross_entropy(a, b, c, **kw),
        lambda a, b, c: TF.cross_entropy(a, b, c, **kw),
        [x, p, w],
        [1, 1, 0],
    )


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_cross_entropy_all_targets_ignored(reduction):
    x = _rng(16).standard_normal((3, 4)).astype(np.float32)
    t = np.array([-100, -100, -100])
    w = np.ones(4, dtype=np.float32)
    for smoothing in (0.0, 0.2):
        kw = dict(reduction=reduction, label_smoothing=smoothing)
        _check(partial(F.cross_entropy, **kw), partial(TF.cross_entropy, **kw), [x, t], [1, 0])
        _check(
            partial(F.cross_entropy, **kw), partial(TF.cross_entropy, **kw), [x, t, w], [1, 0, 0]
        )


def test_cross_entropy_is_stable_for_huge_logits():
    x = np.array([[1000.0, -1000.0, 0.0], [-1e30, 1e30, 5.0]], dtype=np.float32)
    t = np.array([1, 1])
    _check(F.cross_entropy, TF.cross_entropy, [x, t], [1, 0])


def test_cross_entropy_gradcheck_float64():
    rng = _rng(5)
    x = xp.asarray(rng.standard_normal((4, 3)), requires_grad=True)
    t = xp.asarray(np.array([0, 2, -100, 1]))
    w = xp.asarray(rng.random(3) + 0.5)

    def fn(a):
        return F.cross_entropy(a, t, w, label_smoothing=0.2)

    assert xp.autograd.gradcheck(fn, (x,))
    assert xp.autograd.gradgradcheck(fn, (x,))


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_nll_loss(reduction):
    rng = _rng(6)
    x = np.log(rng.dirichlet(np.ones(4), size=(5, 3)).transpose(0, 2, 1)).astype(np.float32)
    t = rng.integers(0, 4, (5, 3))
    t[0, 1] = 2
    w = (rng.random(4) + 0.5).astype(np.float32)
    for ignore in (-100, 2):
        kw = dict(reduction=reduction, ignore_index=ignore)
        _check(
            partial(F.nll_loss, **kw),
            partial(TF.nll_loss, **kw),
            [x, t, w],
            [1, 0, 0],
        )
        _check(
            partial(F.nll_loss, **kw),
            partial(TF.nll_loss, **kw),
            [x[:, :, 0], t[:, 0]],
            [1, 0],
        )


@pytest.mark.filterwarnings("ignore:.*size_average and reduce")
def test_legacy_size_average_and_reduce():
    rng = _rng(7)
    x = rng.standard_normal((4, 3)).astype(np.float32)
    t = rng.integers(0, 3, 4)
    for sa, rd in [(False, None), (None, False), (True, True), (False, True)]:
        _check(
            partial(F.cross_entropy, size_average=sa, reduce=rd),
            partial(TF.cross_entropy, size_average=sa, reduce=rd),
            [x, t],
            [1, 0],
        )
        y = rng.standard_normal((4, 3)).astype(np.float32)
        _check(
            partial(F.mse_loss, size_average=sa, reduce=rd),
            partial(TF.mse_loss, size_average=sa, reduce=rd),
            [x, y],
            [1, 1],
        )


# ----------------------------------------------------------------------------- binary


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_binary_cross_entropy(reduction):
    rng = _rng(8)
    x = rng.random((4, 3)).astype(np.float32) * 0.98 + 0.01
    t = rng.random((4, 3)).astype(np.float32)
    w = (rng.random(3) + 0.5).astype(np.float32)  # broadcast over the batch
    _check(
        lambda a, b, c: F.binary_cross_entropy(a, b, c, reduction=reduction),
        lambda a, b, c: TF.binary_cross_entropy(a, b, c, reduction=reduction),
        [x, t, w],
        [1, 1, 0],
    )


def test_binary_cross_entropy_clamps_logs_at_minus_100():
    x = np.array([0.0, 1.0, 0.0, 1.0, 1e-30, 0.5], dtype=np.float32)
    t = np.array([1.0, 0.0, 0.0, 1.0, 1.0, 0.5], dtype=np.float32)
    _check(
        lambda a, b: F.binary_cross_entropy(a, b, reduction="none"),
        lambda a, b: TF.binary_cross_entropy(a, b, reduction="none"),
        [x, t],
        [0, 0],
    )
    assert np.isfinite(np.asarray(F.binary_cross_entropy(xp.asarray(x), xp.asarray(t))))


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_binary_cross_entropy_with_logits(reduction):
    rng = _rng(9)
    x = (rng.standard_normal((5, 3)) * 4).astype(np.float32)
    x[0] = [100.0, -100.0, 0.0]  # no overflow
    t = rng.random((5, 3)).astype(np.float32)
    w = (rng.random((5, 1)) + 0.5).astype(np.float32)
    pw = (rng.random(3) + 0.5).astype(np.float32)
    for weight, pos in ((None, None), (w, None), (None, pw), (w, pw)):
        _check(
            lambda a, b, c, d: F.binary_cross_entropy_with_logits(
                a, b, c, reduction=reduction, pos_weight=d
            ),
            lambda a, b, c, d: TF.binary_cross_entropy_with_logits(
                a, b, c, reduction=reduction, pos_weight=d
            ),
            [x, t, weight, pos],
            [1, 1, 0, 0],
        )


def test_bce_gradcheck_float64_including_weights():
    rng = _rng(10)
    x = xp.asarray(rng.standard_normal((3, 2)), requires_grad=True)
    t = xp.asarray(rng.random((3, 2)), requires_grad=True)
    w = xp.asarray(rng.random((3, 2)) + 0.5, requires_grad=True)
    pw = xp.asarray(rng.random(2) + 0.5, requires_grad=True)

    def fn(a, b, c, d):
        return F.binary_cross_entropy_with_logits(a, b, c, pos_weight=d)

    assert xp.autograd.gradcheck(fn, (x, t, w, pw))
    assert xp.autograd.gradgradcheck(fn, (x, t, w, pw))
    p = xp.asarray(rng.random((3, 2)) * 0.8 + 0.1, requires_grad=True)
    assert xp.autograd.gradcheck(lambda a, b, c: F.binary_cross_entropy(a, b, c), (p, t, w))


# ----------------------------------------------------------------------------- regression


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_regression_losses(reduction):
    rng = _rng(11)
    x = rng.standard_normal((4, 5)).astype(np.float32) * 2
    y = rng.standard_normal((4, 5)).astype(np.float32)
    cases = [
        (F.mse_loss, TF.mse_loss, {}),
        (F.l1_loss, TF.l1_loss, {}),
        (F.smooth_l1_loss, TF.smooth_l1_loss, {}),
        (F.smooth_l1_loss, TF.smooth_l1_loss, {"beta": 0.5}),
        (F.smooth_l1_loss, TF.smooth_l1_loss, {"beta": 0.0}),
        (F.huber_loss, TF.huber_loss, {"delta": 2.0}),
    ]
    for fn, tfn, kw in cases:
        _check(
            partial(fn, reduction=reduction, **kw),
            partial(tfn, reduction=reduction, **kw),
            [x, y],
            [1, 1],
        )
    w = (rng.random((4, 5)) + 0.5).astype(np.float32)
    for fn, tfn in ((F.mse_loss, TF.mse_loss), (F.l1_loss, TF.l1_loss)):
        _check(
            lambda a, b, c, fn=fn: fn(a, b, reduction=reduction, weight=c),
            lambda a, b, c, tfn=tfn: tfn(a, b, reduction=reduction, weight=c),
            [x, y, w],
            [1, 1, 0],
        )


def test_regression_broadcast_warns_like_torch():
    x = np.ones((3, 1), dtype=np.float32)
    y = np.arange(3, dtype=np.float32)
    with pytest.warns(UserWarning, match="different to the input size"):
        out = F.mse_loss(xp.asarray(x), xp.asarray(y))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = TF.mse_loss(torch.tensor(x), torch.tensor(y))
    np.testing.assert_allclose(float(out), float(expected), rtol=RTOL)


# ----------------------------------------------------------------------------- KL


@pytest.mark.parametrize("reduction", REDUCTIONS + ["batchmean"])
@pytest.mark.parametrize("log_target", [False, True])
def test_kl_div(reduction, log_target):
    rng = _rng(12)
    x = np.log(rng.dirichlet(np.ones(5), size=3)).astype(np.float32)
    p = rng.dirichlet(np.ones(5), size=3).astype(np.float32)
    p[0, 1] = 0.0  # 0 * log 0 = 0
    target = np.log(p + 1e-3).astype(np.float32) if log_target else p
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # both warn about 'mean'
        _check(
            lambda a, b: F.kl_div(a, b, reduction=reduction, log_target=log_target),
            lambda a, b: TF.kl_div(a, b, reduction=reduction, log_target=log_target),
            [x, target],
            [1, int(log_target)],
        )


def test_kl_div_target_gradient():
    rng = _rng(13)
    x = np.log(rng.dirichlet(np.ones(4), size=2)).astype(np.float32)
    p = rng.dirichlet(np.ones(4), size=2).astype(np.float32)
    _check(
        lambda a, b: F.kl_div(a, b, reduction="batchmean"),
        lambda a, b: TF.kl_div(a, b, reduction="batchmean"),
        [x, p],
        [1, 1],
    )


# ----------------------------------------------------------------------------- modules


def test_loss_modules_match_torch():
    rng = _rng(14)
    x = rng.standard_normal((6, 3)).astype(np.float32)
    t = rng.integers(0, 3, 6)
    y = rng.random((6, 3)).astype(np.float32)
    w = (rng.random(3) + 0.5).astype(np.float32)
    cases = [
        ("MSELoss", {}, x, y),
        ("L1Loss", {"reduction": "sum"}, x, y),
        ("SmoothL1Loss", {"beta": 0.3}, x, y),
        ("HuberLoss", {"delta": 0.5}, x, y),
        ("CrossEntropyLoss", {"label_smoothing": 0.1, "ignore_index": 1}, x, t),
        ("CrossEntropyLoss", {"weight": w, "reduction": "none"}, x, t),
        ("NLLLoss", {"weight": w}, x, t),
        ("BCELoss", {"weight": w}, 1 / (1 + np.exp(-x)), y),
        ("BCEWithLogitsLoss", {"pos_weight": w, "weight": w}, x, y),
        ("KLDivLoss", {"reduction": "batchmean", "log_target": False}, x, y),
    ]
    for name, kw, a, b in cases:
        skw = {k: xp.asarray(v) if isinstance(v, np.ndarray) else v for k, v in kw.items()}
        tkw = {k: torch.tensor(v) if isinstance(v, np.ndarray) else v for k, v in kw.items()}
        m, tm = getattr(nn, name)(**skw), getattr(torch.nn, name)(**tkw)
        assert repr(m) == repr(tm)
        assert list(m.state_dict()) == list(tm.state_dict())
        _check(m, tm, [a, b], [1, 0])


@pytest.mark.filterwarnings("ignore:.*size_average and reduce")
def test_legacy_module_arguments():
    assert nn.MSELoss(size_average=False).reduction == "sum"
    assert nn.CrossEntropyLoss(reduce=False).reduction == "none"
    assert nn.NLLLoss(size_average=True, reduce=True).reduction == "mean"


# ----------------------------------------------------------------------------- meta


def test_losses_on_meta_match_cpu():
    rng = _rng(15)
    x = rng.standard_normal((4, 3, 2)).astype(np.float32)
    t = rng.integers(0, 3, (4, 2))
    p = rng.random((4, 3, 2)).astype(np.float32)
    w = np.ones(3, dtype=np.float32)
    calls = [
        (F.cross_entropy, (x, t), {"weight": w, "label_smoothing": 0.1}),
        (F.cross_entropy, (x, p), {}),
        (F.nll_loss, (x, t), {"reduction": "none"}),
        (F.binary_cross_entropy, (p, p), {}),
        (F.binary_cross_entropy_with_logits, (x, p), {"pos_weight": np.ones((3, 1), np.float32)}),
        (F.mse_loss, (x, p), {"reduction": "none"}),
        (F.l1_loss, (x, p), {}),
        (F.smooth_l1_loss, (x, p), {"reduction": "sum"}),
        (F.kl_div, (x, p), {"reduction": "batchmean"}),
    ]
    for fn, args, kw in calls:
        out = {}
        for dev in ("cpu", "meta"):
            a0 = xp.asarray(args[0], device=dev, requires_grad=True)
            rest = [xp.asarray(a, device=dev) for a in args[1:]]
            skw = {
                k: xp.asarray(v, device=dev) if isinstance(v, np.ndarray) else v
                for k, v in kw.items()
            }
            y = fn(a0, *rest, **skw)
            xp.sum(y).backward()
            assert y.device == dev and a0.grad.device == dev
            out[dev] = (y.shape, y.dtype, a0.grad.shape, a0.grad.dtype)
        assert out["cpu"] == out["meta"], fn.__name__


# ----------------------------------------------------------------------------- errors


def test_target_errors_name_the_loss_shapes_and_dtypes():
    x = xp.ones((4, 3))
    with pytest.raises(
        ValueError, match=r"cross_entropy: a floating-point target.*\(4, 3\).*\(4,\)"
    ):
        F.cross_entropy(x, xp.ones(4))
    with pytest.raises(IndexError, match=r"cross_entropy: target 3 is out of bounds for 3 classes"):
        F.cross_entropy(x, xp.asarray([0, 1, 3, 2]))
    with pytest.raises(IndexError, match=r"nll_loss: target -1 is out of bounds"):
        F.nll_loss(x, xp.asarray([0, -1, 1, 2]))
    F.cross_entropy(x, xp.asarray([0, -100, 1, 2]))  # the ignored index is fine
    with pytest.raises(
        ValueError, match=r"cross_entropy: expected a class-index target of shape \(4,\)"
    ):
        F.cross_entropy(x, xp.asarray([0, 1]))
    with pytest.raises(
        TypeError, match="cross_entropy: expected a class-index target of an integer"
    ):
        F.cross_entropy(x, xp.ones(4, dtype=xp.bool))
    with pytest.raises(TypeError, match="nll_loss: expected a class-index target of an integer"):
        F.nll_loss(x, xp.ones(4))
    with pytest.raises(ValueError, match=r"cross_entropy: weight of shape \(2,\)"):
        F.cross_entropy(x, xp.asarray([0, 1, 2, 0]), weight=xp.ones(2))
    with pytest.raises(TypeError, match="mse_loss: expected a floating-point target"):
        F.mse_loss(x, xp.ones((4, 3), dtype=xp.int64))
    with pytest.raises(TypeError, match="cross_entropy: expected a real floating-point input"):
        F.cross_entropy(xp.ones((4, 3), dtype=xp.int64), xp.asarray([0, 1, 2, 0]))
    with pytest.raises(ValueError, match=r"binary_cross_entropy: target of shape \(4,\)"):
        F.binary_cross_entropy(x * 0.5, xp.ones(4))
    with pytest.raises(ValueError, match="binary_cross_entropy: all elements of input"):
        F.binary_cross_entropy(x * 2, x)
    with pytest.raises(ValueError, match="binary_cross_entropy_with_logits: target of shape"):
        F.binary_cross_entropy_with_logits(x, xp.ones((3, 4)))
    with pytest.raises(ValueError, match="'avg' is not a valid value for reduction"):
        F.l1_loss(x, x, reduction="avg")
    with pytest.raises(ValueError, match="batchmean"):
        F.mse_loss(x, x, reduction="batchmean")
    with pytest.raises(ValueError, match="label_smoothing must be between"):
        F.cross_entropy(x, xp.asarray([0, 1, 2, 0]), label_smoothing=1.5)
    with pytest.raises(IndexError, match="CrossEntropyLoss|cross_entropy"):
        nn.CrossEntropyLoss()(x, xp.asarray([0, 1, 7, 2]))
    # shapes are checked on meta too (values are not known there)
    with pytest.raises(ValueError, match="cross_entropy: expected a class-index target"):
        F.cross_entropy(xp.ones((4, 3), device="meta"), xp.zeros(2, dtype=xp.int64, device="meta"))
