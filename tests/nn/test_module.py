"""nn.Module and nn.Parameter: registration, iteration, modes, state dicts, hooks, conversion,
checked against PyTorch's behaviour for the same architecture."""

import copy

import numpy as np
import pytest
import torch

import strided as xp
import strided.nn as nn


def _p(*shape):
    return nn.Parameter(xp.ones(shape, dtype=xp.float32))


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = _p(3, 2)
        self.register_buffer("running", xp.zeros((3,), dtype=xp.float32))
        self.register_buffer("scratch", xp.zeros((1,), dtype=xp.float32), persistent=False)
        self.bias = _p(3)

    def forward(self, x):
        return x @ self.weight.T + self.bias


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = Block()
        self.scale = _p(1)
        self.b = Block()
        self.steps = nn.Buffer(xp.zeros((), dtype=xp.int64))

    def forward(self, x):
        return self.b(self.a(x)[:, :2]) * self.scale


class TBlock(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.ones(3, 2))
        self.register_buffer("running", torch.zeros(3))
        self.register_buffer("scratch", torch.zeros(1), persistent=False)
        self.bias = torch.nn.Parameter(torch.ones(3))


class TNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = TBlock()
        self.scale = torch.nn.Parameter(torch.ones(1))
        self.b = TBlock()
        self.register_buffer("steps", torch.zeros((), dtype=torch.int64))


def test_parameter_basics():
    p = nn.Parameter(xp.asarray([1.0, 2.0]))
    assert isinstance(p, xp.Array) and isinstance(p, nn.Parameter)
    assert p.requires_grad and p.is_leaf
    assert repr(p).startswith("Parameter containing:\n")
    assert not nn.Parameter(xp.ones(2), requires_grad=False).requires_grad
    assert type(p * 2) is xp.Array
    assert nn.Parameter().shape == (0,)
    q = copy.deepcopy(p)
    assert isinstance(q, nn.Parameter) and np.array_equal(np.asarray(q), [1.0, 2.0])
    with pytest.raises(TypeError, match="Parameter"):
        nn.Parameter([1.0, 2.0])


def test_names_and_order_match_torch():
    m, t = Net(), TNet()
    assert list(m.state_dict()) == list(t.state_dict())
    assert [n for n, _ in m.named_parameters()] == [n for n, _ in t.named_parameters()]
    assert [n for n, _ in m.named_buffers()] == [n for n, _ in t.named_buffers()]
    assert [n for n, _ in m.named_modules()] == [n for n, _ in t.named_modules()]
    assert [n for n, _ in m.named_children()] == [n for n, _ in t.named_children()]
    assert [n for n, _ in m.named_parameters(prefix="p", recurse=False)] == [
        n for n, _ in t.named_parameters(prefix="p", recurse=False)
    ]
    assert len(list(m.parameters())) == 5 and len(list(m.modules())) == 3
    assert m.get_submodule("a") is m.a and m.get_parameter("b.bias") is m.b.bias
    assert m.get_buffer("a.running") is m.a.running
    assert "weight" in dir(m.a) and "running" in dir(m.a)


def test_shared_parameters_once():
    m = Net()
    m.b.weight = m.a.weight
    assert len(list(m.parameters())) == 4
    assert len(list(m.named_parameters(remove_duplicate=False))) == 5
    t = TNet()
    t.b.weight = t.a.weight
    assert list(m.state_dict()) == list(t.state_dict())


def test_setattr_rules():
    m = Block()
    with pytest.raises(TypeError, match="parameter 'weight'"):
        m.weight = xp.ones((3, 2))
    m.weight = None
    assert m.weight is None and "weight" not in m.state_dict()
    m.running = xp.ones(3)
    assert "running" in m.state_dict()
    with pytest.raises(TypeError, match="buffer"):
        m.running = 3
    m.child = nn.Module()
    assert "child" in m._modules
    with pytest.raises(TypeError, match="child module"):
        m.child = 5
    del m.child
    assert "child" not in m._modules
    with pytest.raises(KeyError, match="already exists"):
        m.register_buffer("bias", xp.ones(1))
    with pytest.raises(KeyError, match=r"\."):
        m.register_parameter("a.b", None)
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        m.nope  # noqa: B018

    class Early(nn.Module):
        def __init__(self):
            self.w = _p(1)

    with pytest.raises(AttributeError, match="before Module.__init__"):
        Early()


def test_train_eval_apply_requires_grad_zero_grad():
    m = Net()
    assert m.training and m.a.training
    assert m.eval() is m and not m.b.training
    m.train()
    assert m.b.training
    with pytest.raises(ValueError):
        m.train("no")
    seen = []
    m.apply(lambda mod: seen.append(type(mod).__name__))
    assert seen == ["Block", "Block", "Net"]
    y = xp.sum(m(xp.ones((4, 2), dtype=xp.float32)))
    y.backward()
    assert all(p.grad is not None for p in m.parameters())
    m.zero_grad(set_to_none=False)
    assert all(np.all(np.asarray(p.grad) == 0) for p in m.parameters())
    m.zero_grad()
    assert all(p.grad is None for p in m.parameters())
    m.requires_grad_(False)
    assert not any(p.requires_grad for p in m.parameters())


def test_state_dict_roundtrip_and_strict_errors():
    m = Net()
    t = TNet()
    torch.manual_seed(0)
    with torch.no_grad():
        for p in t.parameters():
            p.normal_()
    sd = {k: v.numpy() for k, v in t.state_dict().items()}
    res = m.load_state_dict(sd)
    assert res.missing_keys == [] and res.unexpected_keys == []
    assert repr(res) == "<All keys matched successfully>"
    for k, v in m.state_dict().items():
        np.testing.assert_array_equal(np.asarray(v), sd[k])
        assert not v.requires_grad
    assert m.state_dict(keep_vars=True)["a.weight"] is m.a.weight
    # state dict values share memory
    sd2 = m.state_dict()
    with xp.autograd.no_grad():
        m.a.bias[...] = 7.0
    assert np.all(np.asarray(sd2["a.bias"]) == 7.0)

    bad = dict(sd)
    del bad["a.weight"]
    bad["extra"] = np.zeros(1)
    tbad = {k: torch.as_tensor(v) for k, v in bad.items()}
    with pytest.raises(RuntimeError) as e:
        t.load_state_dict(tbad)
    with pytest.raises(RuntimeError) as e2:
        m.load_state_dict(bad)
    assert 'Missing key(s) in state_dict: "a.weight"' in str(e2.value)
    assert 'Unexpected key(s) in state_dict: "extra"' in str(e2.value)
    assert str(e2.value).split(":", 1)[1] == str(e.value).split(":", 1)[1]
    r = m.load_state_dict(bad, strict=False)
    rt = t.load_state_dict(tbad, strict=False)
    assert (r.missing_keys, r.unexpected_keys) == (rt.missing_keys, rt.unexpected_keys)
    wrong = dict(sd)
    wrong["b.bias"] = np.zeros(4, dtype=np.float32)
    with pytest.raises(RuntimeError, match=r"size mismatch for b.bias"):
        m.load_state_dict(wrong, strict=False)


def test_forward_hooks():
    m = Block()
    calls = []

    def pre(mod, args):
        calls.append("pre")
        return (args[0] * 2,)

    def post(mod, args, out):
        calls.append("post")
        return out + 1

    def post_kw(mod, args, kwargs, out):
        calls.append(("kw", tuple(kwargs)))

    h1 = m.register_forward_pre_hook(pre)
    h2 = m.register_forward_hook(post)
    h3 = m.register_forward_hook(post_kw, with_kwargs=True, prepend=True)
    x = xp.ones((1, 2), dtype=xp.float32)
    out = np.asarray(m(x))
    np.testing.assert_allclose(out, np.full((1, 3), 6.0))
    assert calls == ["pre", ("kw", ()), "post"]
    for h in (h1, h2, h3):
        h.remove()
    np.testing.assert_allclose(np.asarray(m(x)), np.full((1, 3), 3.0))
    with m.register_forward_pre_hook(lambda mod, a, k: ((a[0] * 0,), k), with_kwargs=True):
        np.testing.assert_allclose(np.asarray(m(x)), np.full((1, 3), 1.0))
    np.testing.assert_allclose(np.asarray(m(x)), np.full((1, 3), 3.0))


def test_to_dtype_and_device():
    m = Net()
    w = m.a.weight
    assert m.to(xp.float64) is m
    assert m.a.weight is w and w.dtype == xp.float64 and w.requires_grad
    assert m.a.running.dtype == xp.float64
    assert m.steps.dtype == xp.int64  # only floating point changes dtype
    m.to(dtype=xp.float32)
    assert w.dtype == xp.float32
    m.to("meta")
    assert w.device.type == "meta" and m.a.running.device.type == "meta"
    y = m(xp.ones((4, 2), dtype=xp.float32, device="meta"))
    assert y.shape == (4, 3) and y.device.type == "meta"
    with pytest.raises(NotImplementedError, match="meta"):
        m.to("cpu")
    m.to_empty(device="cpu")
    assert w.device.type == "cpu" and w.shape == (3, 2)


def test_repr_like_torch():
    class Leaf(nn.Module):
        def extra_repr(self):
            return "in=2, out=3"

    class TLeaf(torch.nn.Module):
        def extra_repr(self):
            return "in=2, out=3"

    TLeaf.__name__ = "Leaf"  # the same class name on both sides

    m, t = nn.Module(), torch.nn.Module()
    m.x, t.x = Leaf(), TLeaf()
    m.y, t.y = nn.Module(), torch.nn.Module()
    m.y.z, t.y.z = Leaf(), TLeaf()
    assert repr(m) == repr(t)
    assert repr(Leaf()) == repr(TLeaf())


def test_forward_missing():
    with pytest.raises(NotImplementedError, match="forward"):
        nn.Module()(1)


def test_global_hooks_and_always_call():
    seen = []
    h1 = nn.register_module_forward_pre_hook(lambda m, a: seen.append(("pre", type(m).__name__)))
    h2 = nn.register_module_forward_hook(lambda m, a, o: seen.append(("post", type(m).__name__)))
    try:
        Block()(xp.ones((1, 2), dtype=xp.float32))
    finally:
        h1.remove()
        h2.remove()
    assert seen == [("pre", "Block"), ("post", "Block")]
    Block()(xp.ones((1, 2), dtype=xp.float32))
    assert len(seen) == 2

    class Boom(nn.Module):
        def forward(self, x):
            raise ValueError("boom")

    outs = []
    b = Boom()
    b.register_forward_hook(lambda m, a, o: outs.append(o), always_call=True)
    b.register_forward_hook(lambda m, a, o: outs.append("never"))
    with pytest.raises(ValueError, match="boom"):
        b(1)
    assert outs == [None]
