"""strided.optim against PyTorch: the same initial values and gradients fed to both, several
steps compared parameter by parameter, for every option that changes the update; state dicts,
parameter groups, zero_grad, validation and meta parameters."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import strided as xp
from strided import optim
from strided.autograd import no_grad

RNG = np.random.default_rng(1234)
SHAPES = [(5, 4), (4,)]
STEPS = 5

CASES = [
    ("SGD", dict(lr=0.1)),
    ("SGD", dict(lr=0.1, momentum=0.9)),
    ("SGD", dict(lr=0.1, momentum=0.9, dampening=0.3, weight_decay=0.05)),
    ("SGD", dict(lr=0.05, momentum=0.8, nesterov=True, weight_decay=0.1)),
    ("SGD", dict(lr=0.1, momentum=0.5, maximize=True)),
    ("Adam", dict()),
    ("Adam", dict(lr=0.01, amsgrad=True)),
    ("Adam", dict(lr=0.02, weight_decay=0.1, maximize=True)),
    ("Adam", dict(lr=0.02, betas=(0.3, 0.6), eps=1e-3)),  # lerp weight >= 0.5
    ("Adam", dict(lr=0.02, weight_decay=0.1, decoupled_weight_decay=True, amsgrad=True)),
    ("AdamW", dict(lr=0.01)),
    ("AdamW", dict(lr=0.01, weight_decay=0.2, amsgrad=True, maximize=True)),
    ("RMSprop", dict()),
    ("RMSprop", dict(lr=0.01, centered=True)),
    ("RMSprop", dict(lr=0.01, momentum=0.7, weight_decay=0.1)),
    ("RMSprop", dict(lr=0.01, alpha=0.3, centered=True, momentum=0.5, maximize=True)),
    ("Adagrad", dict()),
    ("Adagrad", dict(lr=0.1, lr_decay=0.05, weight_decay=0.1)),
    ("Adagrad", dict(lr=0.1, initial_accumulator_value=0.3, eps=1e-4, maximize=True)),
]


def _ids(case):
    name, kw = case
    return name + "-" + "-".join(f"{k}={v}" for k, v in kw.items())


def _pair(shapes=SHAPES, dtype=np.float32):
    """The same initial values as strided and torch leaves."""
    init = [RNG.standard_normal(s).astype(dtype) for s in shapes]
    sp = [xp.asarray(a.copy(), requires_grad=True) for a in init]
    tp = [torch.tensor(a, requires_grad=True) for a in init]
    return sp, tp


def _feed(sp, tp, dtype=np.float32):
    for s, t in zip(sp, tp):
        g = RNG.standard_normal(s.shape).astype(dtype)
        s.grad = xp.asarray(g)
        t.grad = torch.tensor(g)


def _grads(sp):
    for s in sp:
        s.grad = xp.asarray(RNG.standard_normal(s.shape).astype(np.float32))


def _close(sp, tp, rtol=2e-5, atol=1e-6):
    for s, t in zip(sp, tp):
        np.testing.assert_allclose(np.asarray(s), t.detach().numpy(), rtol=rtol, atol=atol)


@pytest.mark.parametrize("fused", [None, False], ids=["fused", "namespace"])
@pytest.mark.parametrize("case", CASES, ids=_ids)
def test_steps_match_torch(case, fused):
    name, kw = case
    sp, tp = _pair()
    so = getattr(optim, name)(sp, fused=fused, **kw)
    to = getattr(torch.optim, name)(tp, **kw)
    for _ in range(STEPS):
        _feed(sp, tp)
        so.step()
        to.step()
        _close(sp, tp)
    # the state has PyTorch's entries, with the same values
    for s, t in zip(sp, tp):
        ss, ts = so.state[s], to.state[t]
        assert list(ss) == list(ts)
        for k in ts:
            if k == "step":
                assert ss[k] == float(ts[k])
            elif ts[k] is not None:
                np.testing.assert_allclose(np.asarray(ss[k]), ts[k].numpy(), rtol=2e-5, atol=1e-6)


@pytest.mark.parametrize(
    "case",
    [CASES[3], CASES[7], CASES[9], CASES[15], CASES[17]],
    ids=_ids,
)
@pytest.mark.parametrize("fused", [None, False], ids=["fused", "namespace"])
def test_float64_steps_match_torch(case, fused):
    name, kw = case
    sp, tp = _pair(dtype=np.float64)
    so = getattr(optim, name)(sp, fused=fused, **kw)
    to = getattr(torch.optim, name)(tp, **kw)
    for _ in range(STEPS):
        _feed(sp, tp, np.float64)
        so.step()
        to.step()
    for s in sp:
        assert s.dtype == xp.float64
    _close(sp, tp, rtol=1e-12, atol=1e-14)


def test_fused_and_namespace_paths_agree_exactly_for_sgd():
    # SGD's fused loop computes exactly the namespace's float32 operations
    init = RNG.standard_normal((7, 3)).astype(np.float32)
    grads = [RNG.standard_normal((7, 3)).astype(np.float32) for _ in range(4)]
    out = []
    for fused in (None, False):
        p = xp.asarray(init.copy(), requires_grad=True)
        o = optim.SGD([p], lr=0.1, momentum=0.9, weight_decay=0.01, nesterov=True, fused=fused)
        for g in grads:
            p.grad = xp.asarray(g)
            o.step()
        out.append(np.asarray(p).copy())
    np.testing.assert_array_equal(out[0], out[1])


def test_gradients_from_the_same_loss_with_closure():
    w0 = RNG.standard_normal((3, 4)).astype(np.float32)
    x0 = RNG.standard_normal((4, 6)).astype(np.float32)
    y0 = RNG.standard_normal((3, 6)).astype(np.float32)
    sw = xp.asarray(w0.copy(), requires_grad=True)
    tw = torch.tensor(w0, requires_grad=True)
    sx, sy = xp.asarray(x0), xp.asarray(y0)
    tx, ty = torch.tensor(x0), torch.tensor(y0)
    so = optim.Adam([sw], lr=0.05)
    to = torch.optim.Adam([tw], lr=0.05)

    def s_closure():
        so.zero_grad()
        loss = xp.sum((xp.matmul(sw, sx) - sy) ** 2)
        loss.backward()
        return loss

    def t_closure():
        to.zero_grad()
        loss = ((tw @ tx - ty) ** 2).sum()
        loss.backward()
        return loss

    for _ in range(6):
        with no_grad():  # the closure re-enables gradients
            sl = so.step(s_closure)
        tl = to.step(t_closure)
        np.testing.assert_allclose(float(sl), tl.item(), rtol=1e-4)
        _close([sw], [tw], rtol=1e-4, atol=1e-5)
    assert sw.is_leaf and sw.grad_fn is None and sw.requires_grad


def test_param_groups_and_changing_lr():
    sp, tp = _pair([(3, 3), (3,), (2, 2)])
    so = optim.SGD(
        [{"params": sp[:2]}, {"params": sp[2:], "lr": 0.5, "momentum": 0.9}], lr=0.1, momentum=0.3
    )
    to = torch.optim.SGD(
        [{"params": tp[:2]}, {"params": tp[2:], "lr": 0.5, "momentum": 0.9}], lr=0.1, momentum=0.3
    )
    assert so.param_groups[1]["lr"] == 0.5 and so.param_groups[0]["momentum"] == 0.3
    for _ in range(4):
        _feed(sp, tp)
        so.step()
        to.step()
        for og in (so.param_groups, to.param_groups):
            og[0]["lr"] *= 0.5  # what a scheduler does between steps
        _close(sp, tp)
    # add_param_group
    extra = xp.asarray(np.ones(2, np.float32), requires_grad=True)
    so.add_param_group({"params": [extra], "lr": 1.0})
    assert so.param_groups[2]["momentum"] == 0.3
    with pytest.raises(ValueError, match="more than one parameter group"):
        so.add_param_group({"params": [sp[0]]})


def test_named_parameters_and_parameters_without_grad():
    sp, tp = _pair()
    so = optim.Adam([("w", sp[0]), ("b", sp[1])], lr=0.1)
    assert so.param_groups[0]["param_names"] == ["w", "b"]
    to = torch.optim.Adam(tp, lr=0.1)
    sp[0].grad = xp.asarray(np.ones(SHAPES[0], np.float32))
    tp[0].grad = torch.ones(SHAPES[0])
    before = np.asarray(sp[1]).copy()
    so.step()
    to.step()
    _close(sp, tp)
    np.testing.assert_array_equal(np.asarray(sp[1]), before)  # no grad: untouched, no state
    assert sp[1] not in so.state or len(so.state[sp[1]]) == 0


def _torch_sd_to_strided(sd):
    return {
        "state": {
            k: {
                n: (xp.asarray(v.numpy()) if isinstance(v, torch.Tensor) else v)
                for n, v in s.items()
            }
            for k, s in sd["state"].items()
        },
        "param_groups": [dict(g) for g in sd["param_groups"]],
    }


@pytest.mark.parametrize("case", [CASES[2], CASES[6], CASES[11], CASES[15], CASES[17]], ids=_ids)
def test_state_dict_round_trip_continues_identically(case):
    name, kw = case
    sp, tp = _pair()
    so = getattr(optim, name)(sp, **kw)
    to = getattr(torch.optim, name)(tp, **kw)
    for _ in range(3):
        _feed(sp, tp)
        so.step()
        to.step()
    sd = so.state_dict()
    tsd = to.state_dict()
    # PyTorch's layout: parameters numbered in order, groups listing indices
    assert sorted(sd["state"]) == sorted(tsd["state"]) == [0, 1]
    assert sd["param_groups"][0]["params"] == tsd["param_groups"][0]["params"] == [0, 1]
    for key, value in tsd["param_groups"][0].items():
        if key not in ("foreach", "fused", "differentiable", "capturable"):
            got = sd["param_groups"][0][key]
            assert got == value or (isinstance(value, tuple) and tuple(got) == value), key
    for i in (0, 1):
        assert list(sd["state"][i]) == list(tsd["state"][i])

    # a copy of the parameters with a fresh optimizer loading the state dict
    sp2 = [xp.asarray(np.asarray(p).copy(), requires_grad=True) for p in sp]
    so2 = getattr(optim, name)(sp2, **kw)
    so2.load_state_dict(sd)
    # and a third one loading PyTorch's own state dict (converted to strided arrays)
    sp3 = [xp.asarray(np.asarray(p).copy(), requires_grad=True) for p in sp]
    so3 = getattr(optim, name)(sp3, **kw)
    so3.load_state_dict(_torch_sd_to_strided(tsd))
    # or PyTorch's own state dict as it is (its tensors are converted on load)
    sp4 = [xp.asarray(np.asarray(p).copy(), requires_grad=True) for p in sp]
    so4 = getattr(optim, name)(sp4, **kw)
    so4.load_state_dict(tsd)
    for _ in range(3):
        grads = [RNG.standard_normal(s).astype(np.float32) for s in SHAPES]
        for ps in (sp, sp2, sp3, sp4):
            for p, g in zip(ps, grads):
                p.grad = xp.asarray(g)
        for t, g in zip(tp, grads):
            t.grad = torch.tensor(g)
        so.step()
        so2.step()
        so3.step()
        so4.step()
        to.step()
        for a, b in zip(sp, sp2):
            np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
        _close(sp3, tp)
        _close(sp4, tp)
        _close(sp, tp)


def test_load_state_dict_copies_and_checks_sizes():
    sp, _ = _pair()
    so = optim.Adam(sp, lr=0.1)
    _grads(sp)
    so.step()
    sd = so.state_dict()
    so2 = optim.Adam([xp.asarray(np.asarray(p).copy(), requires_grad=True) for p in sp])
    so2.load_state_dict(sd)
    assert so2.param_groups[0]["lr"] == 0.1
    p2 = so2.param_groups[0]["params"][0]
    assert so2.state[p2]["exp_avg"] is not sd["state"][0]["exp_avg"]  # copied
    with pytest.raises(ValueError, match="number of parameter groups"):
        optim.Adam([{"params": [sp[0]]}, {"params": [sp[1]]}]).load_state_dict(sd)
    with pytest.raises(ValueError, match="doesn't match the size"):
        optim.Adam([sp[0]]).load_state_dict(sd)


def test_zero_grad():
    sp, _ = _pair()
    so = optim.SGD(sp, lr=0.1)
    _grads(sp)
    so.zero_grad(set_to_none=False)
    for p in sp:
        assert p.grad is not None and not np.any(np.asarray(p.grad))
    so.zero_grad()
    assert all(p.grad is None for p in sp)


def test_step_is_in_place_and_not_recorded():
    for fused in (None, False):
        p = xp.asarray(np.ones((3, 2), np.float32), requires_grad=True)
        o = optim.Adam([p], lr=0.1, fused=fused)
        y = xp.sum(p * p)  # saves p for backward
        p.grad = xp.asarray(np.ones((3, 2), np.float32))
        buf = p._buf
        o.step()
        assert p._buf is buf  # same memory, new values
        assert p.is_leaf and p.grad_fn is None
        assert not np.allclose(np.asarray(p), 1.0)
        # PyTorch refuses a backward through values changed in place; so does strided
        with pytest.raises(RuntimeError):
            y.backward()


def test_non_contiguous_parameter():
    base = RNG.standard_normal((4, 6)).astype(np.float32)
    sp = xp.asarray(base.copy())[:, ::2]  # a strided view as the parameter
    sp.requires_grad_()
    tp = torch.tensor(base.copy())[:, ::2].clone().requires_grad_()
    so = optim.RMSprop([sp], lr=0.01, momentum=0.5, centered=True)
    to = torch.optim.RMSprop([tp], lr=0.01, momentum=0.5, centered=True)
    for _ in range(3):
        g = RNG.standard_normal((4, 3)).astype(np.float32)
        sp.grad = xp.asarray(g).T.T
        tp.grad = torch.tensor(g)
        so.step()
        to.step()
    _close([sp], [tp])


@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad"])
def test_meta_parameters(name):
    kw = {"SGD": dict(lr=0.1, momentum=0.9), "RMSprop": dict(momentum=0.5, centered=True)}.get(
        name, {}
    )
    if name == "Adam":
        kw = dict(amsgrad=True)
    p = xp.zeros((1000, 1000), dtype=xp.float32, device="meta")
    p.requires_grad_()
    q = xp.zeros((7,), dtype=xp.float64, device="meta")
    q.requires_grad_()
    o = getattr(optim, name)([p, q], **kw)
    for _ in range(2):
        p.grad = xp.ones((1000, 1000), dtype=xp.float32, device="meta")
        q.grad = xp.ones((7,), dtype=xp.float64, device="meta")
        o.step()
    ts = getattr(torch.optim, name)([torch.zeros(1, requires_grad=True)], **kw)
    ts.param_groups[0]["params"][0].grad = torch.ones(1)
    ts.step()
    expected = [k for k in ts.state[ts.param_groups[0]["params"][0]] if k != "step"]
    for x in (p, q):
        assert x.device.type == "meta"
        st = o.state[x]
        assert [k for k in st if k != "step"] == expected
        for k in expected:
            assert st[k].shape == x.shape and st[k].dtype == x.dtype and st[k].device == x.device


def test_validation_matches_torch():
    p = xp.asarray(np.ones(3, np.float32), requires_grad=True)
    bad = [
        ("SGD", dict(lr=-0.1), "-0.1"),
        ("SGD", dict(momentum=-1.0), "-1.0"),
        ("SGD", dict(weight_decay=-0.5), "-0.5"),
        ("SGD", dict(nesterov=True), "Nesterov"),
        ("SGD", dict(momentum=0.9, dampening=0.1, nesterov=True), "Nesterov"),
        ("Adam", dict(lr=-1e-3), "-0.001"),
        ("Adam", dict(eps=-1.0), "-1.0"),
        ("Adam", dict(betas=(1.0, 0.9)), "index 0: 1.0"),
        ("Adam", dict(betas=(0.9, -0.1)), "index 1: -0.1"),
        ("AdamW", dict(weight_decay=-0.01), "-0.01"),
        ("RMSprop", dict(alpha=-0.5), "-0.5"),
        ("RMSprop", dict(momentum=-0.5), "-0.5"),
        ("Adagrad", dict(lr_decay=-1.0), "-1.0"),
        ("Adagrad", dict(initial_accumulator_value=-1.0), "-1.0"),
    ]
    for name, kw, text in bad:
        with pytest.raises(ValueError, match=text):
            getattr(optim, name)([p], **kw)
        with pytest.raises(ValueError):
            getattr(torch.optim, name)([torch.ones(3, requires_grad=True)], **kw)
    with pytest.raises(ValueError, match="empty parameter list"):
        optim.SGD([], lr=0.1)
    with pytest.raises(TypeError, match="iterable"):
        optim.SGD(p, lr=0.1)
    with pytest.raises(TypeError, match="strided arrays"):
        optim.SGD([np.ones(3)], lr=0.1)
    with pytest.raises(ValueError, match="non-leaf"):
        optim.SGD([p * 2], lr=0.1)
    with pytest.raises(TypeError, match="complex64"):
        optim.Adam([xp.asarray(np.ones(2, np.complex64), requires_grad=True)])
    with pytest.raises(TypeError, match="int64"):
        optim.Adam([xp.asarray(np.ones(2, np.int64))])
    with pytest.raises(ValueError, match="twice"):
        optim.SGD([p, p], lr=0.1)
    o = optim.SGD([p], lr=0.1)
    p.grad = xp.ones(3, dtype=xp.float64)
    with pytest.raises(RuntimeError, match="does not match its parameter"):
        o.step()


class _TwoLayer(xp.nn.Module):
    """A small MLP made of Parameters (the layers' own tests live with nn)."""

    def __init__(self, w1, b1, w2):
        super().__init__()
        self.w1 = xp.nn.Parameter(xp.asarray(w1.copy()))
        self.b1 = xp.nn.Parameter(xp.asarray(b1.copy()))
        self.w2 = xp.nn.Parameter(xp.asarray(w2.copy()))

    def forward(self, x):
        h = xp.matmul(x, xp.matrix_transpose(self.w1)) + self.b1
        return xp.matmul(xp.maximum(h, 0.0), xp.matrix_transpose(self.w2))


@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad"])
def test_training_a_module_matches_torch(name):
    w1 = RNG.standard_normal((8, 5)).astype(np.float32) * 0.5
    b1 = RNG.standard_normal(8).astype(np.float32) * 0.1
    w2 = RNG.standard_normal((3, 8)).astype(np.float32) * 0.5
    x = RNG.standard_normal((16, 5)).astype(np.float32)
    y = RNG.standard_normal((16, 3)).astype(np.float32)
    model = _TwoLayer(w1, b1, w2)
    tw = [torch.tensor(a, requires_grad=True) for a in (w1, b1, w2)]
    kw = {"SGD": dict(lr=0.05, momentum=0.9)}.get(name, dict(lr=0.01))
    so = getattr(optim, name)(model.parameters(), **kw)  # a generator, as in PyTorch
    to = getattr(torch.optim, name)(tw, **kw)
    assert all(isinstance(p, xp.nn.Parameter) for p in so.param_groups[0]["params"])
    sx, sy, tx, ty = xp.asarray(x), xp.asarray(y), torch.tensor(x), torch.tensor(y)
    for _ in range(5):
        so.zero_grad()
        to.zero_grad()
        loss = xp.mean((model(sx) - sy) ** 2)
        loss.backward()
        h = torch.relu(tx @ tw[0].T + tw[1])
        tl = ((h @ tw[2].T - ty) ** 2).mean()
        tl.backward()
        so.step()
        to.step()
        np.testing.assert_allclose(float(loss), tl.item(), rtol=1e-4)
    _close([model.w1, model.b1, model.w2], tw, rtol=1e-4, atol=1e-5)
    assert all(isinstance(p, xp.nn.Parameter) and p.is_leaf for p in model.parameters())


def test_step_hooks():
    p = xp.asarray(np.ones(3, np.float32), requires_grad=True)
    o = optim.SGD([p], lr=0.5)
    calls = []
    h1 = o.register_step_pre_hook(lambda opt, a, k: calls.append(("pre", opt is o)))
    o.register_step_post_hook(lambda opt, a, k: calls.append(("post", float(p[0]))))
    p.grad = xp.ones(3, dtype=xp.float32)
    o.step()
    assert calls == [("pre", True), ("post", 0.5)]
    h1.remove()
    o.step()
    assert calls[-1] == ("post", 0.0) and len(calls) == 3


def test_state_of_the_wrong_shape_is_refused():
    sp, _ = _pair()
    o = optim.Adam(sp)
    _grads(sp)
    o.step()
    sd = o.state_dict()
    sd["state"][0]["exp_avg"] = xp.zeros((4, 5), dtype=xp.float32)  # (5, 4) parameter
    with pytest.raises(ValueError, match="exp_avg"):
        optim.Adam(sp).load_state_dict(sd)
    # state set by hand with a wrong shape never reaches the fused loop (which would index past
    # it): the namespace path raises instead
    o.state[sp[1]]["exp_avg_sq"] = xp.zeros((2,), dtype=xp.float32)
    _grads(sp)
    with pytest.raises(ValueError):
        o.step()


@pytest.mark.parametrize("fused", [None, False], ids=["fused", "namespace"])
def test_non_finite_gradients_propagate_as_in_torch(fused):
    sp, tp = _pair([(6,)])
    so = optim.Adam(sp, lr=0.1, amsgrad=True, fused=fused)
    to = torch.optim.Adam(tp, lr=0.1, amsgrad=True)
    grads = [
        np.array([1, 2, 3, 4, 5, 6], np.float32),
        np.array([np.nan, 1, np.inf, -np.inf, 0, 1], np.float32),
        np.array([1, 1, 1, 1, 1, 1], np.float32),
    ]
    for g in grads:
        sp[0].grad = xp.asarray(g)
        tp[0].grad = torch.tensor(g)
        so.step()
        to.step()
        np.testing.assert_array_equal(np.isnan(np.asarray(sp[0])), tp[0].detach().isnan().numpy())
        _close(sp, tp)
        st, tt = so.state[sp[0]], to.state[tp[0]]
        np.testing.assert_array_equal(
            np.isnan(np.asarray(st["max_exp_avg_sq"])), tt["max_exp_avg_sq"].isnan().numpy()
        )


def test_subclass_step_calling_super_runs_hooks_once():
    class Clipped(optim.SGD):
        def step(self, closure=None):
            for p in self.param_groups[0]["params"]:
                p.grad = xp.clip(p.grad, -1.0, 1.0)
            return super().step(closure)

    p = xp.asarray(np.zeros(2, np.float32), requires_grad=True)
    o = Clipped([p], lr=1.0)
    calls = []
    o.register_step_post_hook(lambda *a: calls.append(1))
    p.grad = xp.asarray(np.array([5.0, -0.5], np.float32))
    o.step()
    assert calls == [1]
    np.testing.assert_array_equal(np.asarray(p), [-1.0, 0.5])
