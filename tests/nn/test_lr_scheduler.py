"""strided.optim.lr_scheduler against PyTorch: the learning rates (and cycled momenta) of
every step equal PyTorch's, state dicts resume identically, bad arguments raise."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
from torch.optim import lr_scheduler as tls

import strided as xp
from strided import optim
from strided.optim import lr_scheduler as sls


def _optimizers(kind="SGD"):
    sp = [xp.asarray(np.ones(2, np.float32), requires_grad=True) for _ in range(2)]
    tp = [torch.ones(2, requires_grad=True) for _ in range(2)]
    if kind == "SGD":
        kw = dict(lr=0.1, momentum=0.9)
        groups = lambda ps: [{"params": [ps[0]]}, {"params": [ps[1]], "lr": 0.03}]  # noqa: E731
    elif kind == "Adam":
        kw = dict(lr=0.01, betas=(0.9, 0.99))
        groups = lambda ps: [{"params": [ps[0]]}, {"params": [ps[1]], "lr": 0.5}]  # noqa: E731
    else:
        kw = dict(lr=0.1)
        groups = lambda ps: [{"params": ps}]  # noqa: E731
    return getattr(optim, kind)(groups(sp), **kw), getattr(torch.optim, kind)(groups(tp), **kw)


# each entry: (scheduler name, kwargs builder taking the module of schedulers, steps)
SCHEDULES = {
    "step": ("StepLR", lambda m, o: dict(step_size=3, gamma=0.5), 12),
    "multistep": ("MultiStepLR", lambda m, o: dict(milestones=[2, 5, 5, 9], gamma=0.3), 12),
    "exponential": ("ExponentialLR", lambda m, o: dict(gamma=0.87), 10),
    "cosine": ("CosineAnnealingLR", lambda m, o: dict(T_max=5, eta_min=0.001), 23),
    "cosine-zero-min": ("CosineAnnealingLR", lambda m, o: dict(T_max=7), 16),
    "linear": ("LinearLR", lambda m, o: dict(start_factor=0.25, total_iters=4), 8),
    "linear-down": (
        "LinearLR",
        lambda m, o: dict(start_factor=1.0, end_factor=0.1, total_iters=6),
        9,
    ),
    "linear-default": ("LinearLR", lambda m, o: dict(), 8),
    "onecycle-cos": ("OneCycleLR", lambda m, o: dict(max_lr=[1.0, 0.2], total_steps=20), 20),
    "onecycle-linear": (
        "OneCycleLR",
        lambda m, o: dict(
            max_lr=0.5, epochs=3, steps_per_epoch=5, anneal_strategy="linear", pct_start=0.4
        ),
        15,
    ),
    "onecycle-three-phase": (
        "OneCycleLR",
        lambda m, o: dict(
            max_lr=0.8, total_steps=17, three_phase=True, div_factor=10.0, final_div_factor=100.0
        ),
        17,
    ),
    "onecycle-no-momentum": (
        "OneCycleLR",
        lambda m, o: dict(max_lr=0.3, total_steps=10, cycle_momentum=False, base_momentum=0.5),
        10,
    ),
}


def _momentum(opt):
    return [g["betas"][0] if "betas" in g else g.get("momentum") for g in opt.param_groups]


def _run(name, kwargs, steps, kind):
    so, to = _optimizers(kind)
    ss = getattr(sls, name)(so, **kwargs(sls, so))
    ts = getattr(tls, name)(to, **kwargs(tls, to))
    assert ss.get_last_lr() == ts.get_last_lr()
    for _ in range(steps - 1):
        to.step()
        so.step()
        ss.step()
        ts.step()
        assert ss.get_last_lr() == pytest.approx(ts.get_last_lr(), rel=1e-15, abs=0)
        assert [g["lr"] for g in so.param_groups] == ss.get_last_lr()
        assert _momentum(so) == pytest.approx(_momentum(to), rel=1e-15)
    return so, ss, to, ts


@pytest.mark.parametrize("key", list(SCHEDULES))
def test_learning_rates_match_torch_step_by_step(key):
    name, kwargs, steps = SCHEDULES[key]
    _run(name, kwargs, steps, "SGD")


@pytest.mark.parametrize("key", ["onecycle-cos", "onecycle-three-phase", "cosine", "step"])
def test_with_adam_betas(key):
    name, kwargs, steps = SCHEDULES[key]
    so, ss, to, ts = _run(name, kwargs, steps, "Adam")
    if name == "OneCycleLR":
        assert so.param_groups[0]["betas"][1] == 0.99


def _sequential(m, so, which):
    if which == 0:
        a = m.LinearLR(so, start_factor=0.1, total_iters=3)
        b = m.CosineAnnealingLR(so, T_max=6, eta_min=0.01)
        return m.SequentialLR(so, [a, b], milestones=[3])
    a = m.ExponentialLR(so, gamma=0.9)
    b = m.StepLR(so, step_size=2, gamma=0.5)
    c = m.LinearLR(so, start_factor=0.5, total_iters=2)
    return m.SequentialLR(so, [a, b, c], milestones=[2, 6])


@pytest.mark.parametrize("which", [0, 1])
def test_sequential_lr(which):
    so, to = _optimizers()
    ss = _sequential(sls, so, which)
    ts = _sequential(tls, to, which)
    assert ss.get_last_lr() == ts.get_last_lr()
    for _ in range(12):
        to.step()
        so.step()
        ss.step()
        ts.step()
        assert ss.get_last_lr() == pytest.approx(ts.get_last_lr(), rel=1e-15, abs=0)
        assert [g["lr"] for g in so.param_groups] == pytest.approx(
            [g["lr"] for g in to.param_groups], rel=1e-15
        )


@pytest.mark.parametrize("key", ["step", "cosine", "onecycle-cos", "linear"])
def test_state_dict_resumes(key):
    name, kwargs, steps = SCHEDULES[key]
    so, ss, to, ts = _run(name, kwargs, steps // 2, "SGD")
    sd = ss.state_dict()
    assert "optimizer" not in sd and sd["last_epoch"] == ts.state_dict()["last_epoch"]
    # a new optimizer + scheduler pair restored from the state dicts continues identically
    # (PyTorch's order: build both, then load the optimizer's state, then the scheduler's)
    so2, _ = _optimizers()
    ss2 = getattr(sls, name)(so2, **kwargs(sls, so2))
    so2.load_state_dict(so.state_dict())
    ss2.load_state_dict(sd)
    for _ in range(steps - steps // 2 - 1):
        ts.step()
        ss2.step()
        assert ss2.get_last_lr() == pytest.approx(ts.get_last_lr(), rel=1e-15, abs=0)


def test_sequential_state_dict():
    so, _ = _optimizers()
    ss = _sequential(sls, so, 0)
    for _ in range(4):
        so.step()
        ss.step()
    sd = ss.state_dict()
    assert len(sd["_schedulers"]) == 2 and "optimizer" not in sd["_schedulers"][0]
    so2, to = _optimizers()
    ts = _sequential(tls, to, 0)
    for _ in range(4):
        to.step()
        ts.step()
    ss2 = _sequential(sls, so2, 0)
    so2.load_state_dict(so.state_dict())
    ss2.load_state_dict(sd)
    for _ in range(5):
        to.step()
        ss2.step()
        ts.step()
        assert ss2.get_last_lr() == pytest.approx(ts.get_last_lr(), rel=1e-15, abs=0)


def test_step_with_epoch_uses_the_closed_form():
    for name, kw in [
        ("StepLR", dict(step_size=2, gamma=0.5)),
        ("CosineAnnealingLR", dict(T_max=10)),
        ("ExponentialLR", dict(gamma=0.5)),
        ("MultiStepLR", dict(milestones=[1, 3])),
        ("LinearLR", dict(total_iters=4)),
    ]:
        so, to = _optimizers()
        ss = getattr(sls, name)(so, **kw)
        ts = getattr(tls, name)(to, **kw)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ss.step(7)
            ts.step(7)
        assert ss.get_last_lr() == pytest.approx(ts.get_last_lr(), rel=1e-15)


def test_errors():
    so, _ = _optimizers()
    with pytest.raises(TypeError, match="not an Optimizer"):
        sls.StepLR(object(), step_size=1)
    with pytest.raises(ValueError, match="factor"):
        sls.LinearLR(so, start_factor=0)
    with pytest.raises(ValueError, match="factor"):
        sls.LinearLR(so, end_factor=1.5)
    with pytest.raises(ValueError, match="total_steps"):
        sls.OneCycleLR(so, max_lr=0.1, total_steps=0)
    with pytest.raises(ValueError, match="total_steps OR"):
        sls.OneCycleLR(so, max_lr=0.1)
    with pytest.raises(ValueError, match="pct_start"):
        sls.OneCycleLR(so, max_lr=0.1, total_steps=5, pct_start=1.5)
    with pytest.raises(ValueError, match="anneal_strategy"):
        sls.OneCycleLR(so, max_lr=0.1, total_steps=5, anneal_strategy="exp")
    ada, _ = _optimizers("Adagrad")
    with pytest.raises(ValueError, match="momentum"):
        sls.OneCycleLR(ada, max_lr=0.1, total_steps=5)
    s = sls.OneCycleLR(so, max_lr=0.1, total_steps=3)
    so.step()
    s.step()
    s.step()
    s.step()
    with pytest.raises(ValueError, match="total"):
        s.step()
    so2, _ = _optimizers()
    with pytest.raises(KeyError, match="initial_lr"):
        sls.StepLR(so2, step_size=2, last_epoch=3)
    a = sls.StepLR(so2, step_size=2)
    with pytest.raises(ValueError, match="milestones"):
        sls.SequentialLR(so2, [a], milestones=[2])
    other, _ = _optimizers()
    with pytest.raises(ValueError, match="same optimizer"):
        sls.SequentialLR(so2, [a, sls.StepLR(other, step_size=2)], milestones=[2])


def test_warns_when_stepped_before_the_optimizer():
    so, _ = _optimizers()
    s = sls.StepLR(so, step_size=2)
    with pytest.warns(UserWarning, match="before `optimizer.step\\(\\)`"):
        s.step()
    so2, _ = _optimizers()
    s2 = sls.StepLR(so2, step_size=2)
    so2.step()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        s2.step()


class _Warmup:
    """A callable object with state (its attributes go into the state dict, as in PyTorch)."""

    def __init__(self, n):
        self.n = n

    def __call__(self, epoch):
        return min(1.0, (epoch + 1) / self.n)


MORE = {
    "lambda": ("LambdaLR", lambda m, o: dict(lr_lambda=lambda e: 0.95**e), 9),
    "lambda-per-group": (
        "LambdaLR",
        lambda m, o: dict(lr_lambda=[_Warmup(4), lambda e: 1.0 / (e + 1)]),
        9,
    ),
    "multiplicative": ("MultiplicativeLR", lambda m, o: dict(lr_lambda=lambda e: 0.9), 8),
    "constant": ("ConstantLR", lambda m, o: dict(factor=0.5, total_iters=3), 7),
    "polynomial": ("PolynomialLR", lambda m, o: dict(total_iters=6, power=2.0), 9),
}


@pytest.mark.parametrize("key", list(MORE))
def test_more_schedulers_match_torch(key):
    name, kwargs, steps = MORE[key]
    _run(name, kwargs, steps, "SGD")


def test_lambda_state_dict_keeps_callable_objects_state():
    so, _ = _optimizers()
    fn = _Warmup(4)
    s = sls.LambdaLR(so, lr_lambda=[fn, lambda e: 1.0])
    sd = s.state_dict()
    assert sd["lr_lambdas"] == [{"n": 4}, None]
    fn2 = _Warmup(9)
    so2, _ = _optimizers()
    s2 = sls.LambdaLR(so2, lr_lambda=[fn2, lambda e: 1.0])
    s2.load_state_dict(sd)
    assert fn2.n == 4


def test_chained_scheduler():
    so, to = _optimizers()
    ss = sls.ChainedScheduler(
        [sls.ConstantLR(so, factor=0.5, total_iters=2), sls.ExponentialLR(so, gamma=0.9)]
    )
    ts = tls.ChainedScheduler(
        [tls.ConstantLR(to, factor=0.5, total_iters=2), tls.ExponentialLR(to, gamma=0.9)]
    )
    assert ss.get_last_lr() == ts.get_last_lr()
    for _ in range(6):
        so.step()
        to.step()
        ss.step()
        ts.step()
        assert ss.get_last_lr() == pytest.approx(ts.get_last_lr(), rel=1e-15, abs=0)


@pytest.mark.parametrize(
    "kw",
    [
        dict(),
        dict(mode="max", factor=0.5, patience=1, threshold_mode="abs", threshold=0.01),
        dict(patience=0, cooldown=2, min_lr=[0.05, 0.001]),
    ],
)
def test_reduce_lr_on_plateau(kw):
    so, to = _optimizers()
    ss = sls.ReduceLROnPlateau(so, **kw)
    ts = tls.ReduceLROnPlateau(to, **kw)
    metrics = [1.0, 0.9, 0.95, 0.95, 0.96, 0.89, 0.9, 0.9, 0.9, 1.2] * 3
    for m in metrics:
        so.step()
        to.step()
        ss.step(m)
        ts.step(m)
        assert ss.get_last_lr() == ts.get_last_lr()
        assert ss.num_bad_epochs == ts.num_bad_epochs
    sd = ss.state_dict()
    assert "optimizer" not in sd and sd["best"] == ts.state_dict()["best"]
    with pytest.raises(ValueError, match="factor"):
        sls.ReduceLROnPlateau(so, factor=1.0)
    with pytest.raises(ValueError, match="mode"):
        sls.ReduceLROnPlateau(so, mode="middle")
