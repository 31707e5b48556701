"""Core layers and functional ops against PyTorch: the same weights and inputs (contiguous and
not), forward values and every gradient (inputs and parameters), default initialisation, meta
runs, dropout statistics and error messages."""

import math

import numpy as np
import pytest
import torch

import strided as xp
import strided.nn as nn
import strided.nn.functional as F

TOL = {np.float32: dict(rtol=1e-4, atol=1e-5), np.float64: dict(rtol=1e-10, atol=1e-12)}


def _rand(shape, dtype=np.float32, seed=0, scale=1.0):
    return (np.random.default_rng(seed).standard_normal(shape) * scale).astype(dtype)


def _pair(a, transpose=False):
    """(strided leaf, torch leaf) with the same values; ``transpose`` gives both a transposed
    (non-contiguous) layout of the same logical array."""
    if transpose:
        s = xp.asarray(np.ascontiguousarray(a.swapaxes(-1, -2)))
        s = xp.matrix_transpose(s)
        s_leaf = s
    else:
        s_leaf = xp.asarray(a)
    s_leaf.requires_grad_()
    t = torch.tensor(a, requires_grad=True)
    return s_leaf, t


def _close(s, t, dtype=np.float32, scale=1.0):
    tol = TOL[dtype]
    np.testing.assert_allclose(
        np.asarray(s), t.detach().numpy(), rtol=tol["rtol"], atol=tol["atol"] * scale
    )


def _copy_params(sm, tm):
    sm.load_state_dict({k: v.detach().numpy() for k, v in tm.state_dict().items()})


def _backward_both(ys, yt, seed=1):
    g = _rand(tuple(yt.shape), yt.detach().numpy().dtype, seed=seed)
    xp.sum(ys * xp.asarray(g)).backward()
    (yt * torch.tensor(g)).sum().backward()


# -- Linear / Bilinear ----------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape,transpose", [((5, 7), False), ((7, 5), True), ((2, 3, 7), False)])
def test_linear_matches_torch(dtype, shape, transpose):
    tm = torch.nn.Linear(7, 4).to(torch.float64 if dtype == np.float64 else torch.float32)
    sm = nn.Linear(7, 4, dtype=xp.float64 if dtype == np.float64 else None)
    _copy_params(sm, tm)
    a = _rand(shape if not transpose else (5, 7), dtype)
    xs, xt = _pair(a, transpose)
    if transpose:
        assert not xs.is_contiguous()
    ys, yt = sm(xs), tm(xt)
    assert ys.shape == tuple(yt.shape) and ys.dtype == sm.weight.dtype
    _close(ys, yt, dtype)
    _backward_both(ys, yt)
    _close(xs.grad, xt.grad, dtype)
    _close(sm.weight.grad, tm.weight.grad, dtype, scale=10)
    _close(sm.bias.grad, tm.bias.grad, dtype, scale=10)


def test_linear_no_bias_1d_and_functional():
    tm = torch.nn.Linear(3, 2, bias=False)
    sm = nn.Linear(3, 2, bias=False)
    _copy_params(sm, tm)
    assert sm.bias is None and list(sm.state_dict()) == ["weight"]
    a = _rand((3,))
    xs, xt = _pair(a)
    ys, yt = sm(xs), tm(xt)
    assert ys.shape == (2,)
    _close(ys, yt)
    _backward_both(ys, yt)
    _close(xs.grad, xt.grad)
    _close(sm.weight.grad, tm.weight.grad)
    w = _rand((2, 3), seed=3)
    b = _rand((2,), seed=4)
    _close(
        F.linear(xp.asarray(a), xp.asarray(w), xp.asarray(b)),
        torch.nn.functional.linear(torch.tensor(a), torch.tensor(w), torch.tensor(b)),
    )


def test_linear_errors_name_layer_and_shapes():
    m = nn.Linear(784, 256)
    with pytest.raises(RuntimeError, match=r"Linear\(in_features=784.*\(64, 100\).*784"):
        m(xp.zeros((64, 100), dtype=xp.float32))
    with pytest.raises(TypeError, match=r"Linear.*float64.*float32"):
        m(xp.zeros((2, 784), dtype=xp.float64))
    with pytest.raises(RuntimeError, match=r"linear.*\(3, 5\).*in_features is 4"):
        F.linear(xp.zeros((3, 5)), xp.zeros((2, 4)))


def test_linear_default_init_like_torch():
    torch.manual_seed(0)
    tm = torch.nn.Linear(300, 200)
    sm = nn.Linear(300, 200)
    bound = 1 / math.sqrt(300)
    for name in ("weight", "bias"):
        s = np.asarray(getattr(sm, name))
        t = getattr(tm, name).detach().numpy()
        assert s.dtype == t.dtype == np.float32
        assert np.abs(s).max() <= bound and np.abs(t).max() <= bound
        assert np.abs(s).max() > 0.95 * bound
        assert s.std() == pytest.approx(t.std(), rel=0.1 if name == "weight" else 0.3)
    assert repr(sm) == repr(tm)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_bilinear_matches_torch(dtype):
    tdt = torch.float64 if dtype == np.float64 else torch.float32
    tm = torch.nn.Bilinear(3, 4, 5).to(tdt)
    sm = nn.Bilinear(3, 4, 5, dtype=xp.float64 if dtype == np.float64 else None)
    _copy_params(sm, tm)
    x1s, x1t = _pair(_rand((2, 6, 3), dtype, seed=5))
    x2s, x2t = _pair(_rand((2, 6, 4), dtype, seed=6))
    ys, yt = sm(x1s, x2s), tm(x1t, x2t)
    _close(ys, yt, dtype, scale=10)
    _backward_both(ys, yt)
    for s, t in [(x1s, x1t), (x2s, x2t), (sm.weight, tm.weight), (sm.bias, tm.bias)]:
        _close(s.grad, t.grad, dtype, scale=10)
    assert repr(sm) == repr(tm)


# -- activations ----------------------------------------------------------------------------------
ACTS = [
    ("relu", F.relu, torch.relu),
    ("gelu", F.gelu, torch.nn.functional.gelu),
    ("gelu_tanh", lambda x: F.gelu(x, approximate="tanh"),
     lambda x: torch.nn.functional.gelu(x, approximate="tanh")),
    ("silu", F.silu, torch.nn.functional.silu),
    ("sigmoid", F.sigmoid, torch.sigmoid),
    ("tanh", F.tanh, torch.tanh),
    ("leaky_relu", lambda x: F.leaky_relu(x, 0.2),
     lambda x: torch.nn.functional.leaky_relu(x, 0.2)),
    ("elu", F.elu, torch.nn.functional.elu),
    ("softplus", F.softplus, torch.nn.functional.softplus),
    ("logsigmoid", F.logsigmoid, torch.nn.functional.logsigmoid),
    ("hardtanh", F.hardtanh, torch.nn.functional.hardtanh),
    ("relu6", F.relu6, torch.nn.functional.relu6),
    ("mish", F.mish, torch.nn.functional.mish),
    ("softmax0", lambda x: F.softmax(x, 0), lambda x: torch.softmax(x, 0)),
    ("softmax-1", lambda x: F.softmax(x, dim=-1), lambda x: torch.softmax(x, -1)),
    ("log_softmax1", lambda x: F.log_softmax(x, 1), lambda x: torch.log_softmax(x, 1)),
    ("softmin", lambda x: F.softmin(x, 1), lambda x: torch.nn.functional.softmin(x, 1)),
    ("hardsigmoid", F.hardsigmoid, torch.nn.functional.hardsigmoid),
    ("hardswish", F.hardswish, torch.nn.functional.hardswish),
    ("glu0", lambda x: F.glu(x, 0), lambda x: torch.nn.functional.glu(x, 0)),
    ("glu", F.glu, torch.nn.functional.glu),
    ("selu", F.selu, torch.nn.functional.selu),
    ("celu", lambda x: F.celu(x, 0.5), lambda x: torch.nn.functional.celu(x, 0.5)),
    ("softsign", F.softsign, torch.nn.functional.softsign),
    ("tanhshrink", F.tanhshrink, torch.nn.functional.tanhshrink),
    ("threshold", lambda x: F.threshold(x, 0.1, -2.0),
     lambda x: torch.nn.functional.threshold(x, 0.1, -2.0)),
]  # fmt: skip


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name,fs,ft", ACTS, ids=[a[0] for a in ACTS])
def test_activation_matches_torch(name, fs, ft, dtype):
    a = _rand((4, 6), dtype, seed=7, scale=3.0)
    a[0, :3] = [40.0, -40.0, 0.0]  # saturated regions and the kink
    a[1, :2] = [100.0, -100.0]
    xs, xt = _pair(a, transpose=dtype == np.float64)  # float64 runs on a non-contiguous layout
    ys, yt = fs(xs), ft(xt)
    assert ys.shape == tuple(yt.shape) and ys.dtype == xs.dtype
    assert np.all(np.isfinite(np.asarray(ys)))
    _close(ys, yt, dtype)
    _backward_both(ys, yt)
    if name == "hardsigmoid" and dtype == np.float64:
        # torch's float64 hardsigmoid backward multiplies by the float32 constant 1.0f / 6.0f
        np.testing.assert_allclose(np.asarray(xs.grad), xt.grad.numpy(), rtol=1e-7)
        return
    _close(xs.grad, xt.grad, dtype)


def test_log_softmax_is_stable():
    a = np.array([[1000.0, 0.0, -1000.0], [1e4, 1e4, 1e4]], dtype=np.float32)
    xs, xt = _pair(a)
    ys, yt = F.log_softmax(xs, dim=1), torch.log_softmax(xt, 1)
    _close(ys, yt)
    _backward_both(ys, yt)
    _close(xs.grad, xt.grad)
    assert np.all(np.isfinite(np.asarray(F.softmax(xp.asarray(a), dim=1))))


ACT_MODULES = [
    (nn.ReLU(), torch.nn.ReLU()), (nn.GELU(), torch.nn.GELU()),
    (nn.GELU("tanh"), torch.nn.GELU("tanh")), (nn.SiLU(), torch.nn.SiLU()),
    (nn.Tanh(), torch.nn.Tanh()), (nn.Sigmoid(), torch.nn.Sigmoid()),
    (nn.Softmax(dim=1), torch.nn.Softmax(dim=1)), (nn.LogSoftmax(dim=1), torch.nn.LogSoftmax(1)),
    (nn.LeakyReLU(0.1), torch.nn.LeakyReLU(0.1)), (nn.ELU(), torch.nn.ELU()),
    (nn.Softplus(), torch.nn.Softplus()), (nn.ReLU6(), torch.nn.ReLU6()),
    (nn.Hardtanh(), torch.nn.Hardtanh()), (nn.Mish(), torch.nn.Mish()),
    (nn.LogSigmoid(), torch.nn.LogSigmoid()), (nn.Softmin(1), torch.nn.Softmin(1)),
    (nn.Hardsigmoid(), torch.nn.Hardsigmoid()), (nn.Hardswish(), torch.nn.Hardswish()),
    (nn.GLU(), torch.nn.GLU()), (nn.SELU(), torch.nn.SELU()), (nn.CELU(2.0), torch.nn.CELU(2.0)),
    (nn.Softsign(), torch.nn.Softsign()), (nn.Tanhshrink(), torch.nn.Tanhshrink()),
    (nn.Threshold(0.2, 1.0), torch.nn.Threshold(0.2, 1.0)), (nn.PReLU(), torch.nn.PReLU()),
]  # fmt: skip


@pytest.mark.parametrize("sm,tm", ACT_MODULES, ids=[type(m[1]).__name__ for m in ACT_MODULES])
def test_activation_modules(sm, tm):
    assert repr(sm) == repr(tm)
    a = _rand((3, 6), seed=8)
    ys = sm(xp.asarray(a))
    _close(ys, tm(torch.tensor(a)))
    y = sm.to("meta")(xp.empty((3, 6), dtype=xp.float32, device="meta"))
    assert y.shape == ys.shape and y.device.type == "meta"


@pytest.mark.parametrize("channels", [1, 4])
def test_prelu_matches_torch(channels):
    tm, sm = torch.nn.PReLU(channels), nn.PReLU(channels)
    assert repr(sm) == repr(tm) and list(sm.state_dict()) == ["weight"]
    with torch.no_grad():
        tm.weight.copy_(torch.linspace(0.1, 0.4, channels))
    _copy_params(sm, tm)
    xs, xt = _pair(_rand((2, 4, 3), seed=9))
    ys, yt = sm(xs), tm(xt)
    _close(ys, yt)
    _backward_both(ys, yt)
    _close(xs.grad, xt.grad)
    _close(sm.weight.grad, tm.weight.grad)
    with pytest.raises(RuntimeError, match="prelu"):
        nn.PReLU(3)(xp.ones((2, 4)))


def test_glu_odd_dimension():
    with pytest.raises(RuntimeError, match="Halving dimension must be even"):
        F.glu(xp.ones((2, 3)))


def test_relu_inplace_and_gelu_arg():
    x = xp.asarray([-1.0, 2.0])
    assert F.relu(x, inplace=True) is x
    np.testing.assert_array_equal(np.asarray(x), [0.0, 2.0])
    with pytest.raises(ValueError, match="approximate"):
        F.gelu(x, approximate="fast")
    with pytest.raises(IndexError, match="Dimension out of range"):
        F.softmax(x, dim=2)


# -- dropout --------------------------------------------------------------------------------------
def test_dropout_statistics_and_gradient():
    xp.random.manual_seed(0)
    x = xp.ones((200, 500), dtype=xp.float32, requires_grad=True)
    y = F.dropout(x, p=0.3)
    v = np.asarray(y)
    zero_frac = np.mean(v == 0)
    assert abs(zero_frac - 0.3) < 0.01
    np.testing.assert_allclose(np.unique(v), [0.0, 1 / 0.7], rtol=1e-6)
    assert abs(v.mean() - 1.0) < 0.02
    xp.sum(y).backward()
    np.testing.assert_array_equal(np.asarray(x.grad), v)  # d/dx = the scaled mask
    assert F.dropout(x, 0.3, training=False) is x
    assert np.all(np.asarray(F.dropout(x, 1.0)) == 0)
    assert F.dropout(x, 0.0) is x


def test_dropout_modules_train_eval():
    xp.random.manual_seed(2)
    m = nn.Dropout(0.5)
    assert repr(m) == repr(torch.nn.Dropout(0.5))
    x = xp.ones((1000,), dtype=xp.float32)
    assert abs(np.mean(np.asarray(m(x)) == 0) - 0.5) < 0.06
    m.eval()
    assert m(x) is x
    with pytest.raises(ValueError, match="between 0 and 1, but got 1.5"):
        nn.Dropout(1.5)
    with pytest.raises(ValueError, match="between 0 and 1"):
        F.dropout(x, -0.1)


def test_dropout2d_zeroes_whole_channels():
    xp.random.manual_seed(1)
    x = xp.ones((8, 64, 3, 3), dtype=xp.float32)
    v = np.asarray(nn.Dropout2d(0.25)(x))
    per_channel = v.reshape(8, 64, 9)
    assert np.all((per_channel == 0).all(-1) | (per_channel == per_channel[..., :1]).all(-1))
    assert abs(np.mean(per_channel[..., 0] == 0) - 0.25) < 0.07
    np.testing.assert_allclose(per_channel.max(), 1 / 0.75, rtol=1e-6)
    with pytest.raises(RuntimeError, match="dropout2d.*shape \\(3, 3\\)"):
        F.dropout2d(xp.ones((3, 3)))
    y = F.dropout2d(xp.empty((2, 3, 4, 4), device="meta"))
    assert y.shape == (2, 3, 4, 4) and y.device.type == "meta"


# -- embedding / one_hot --------------------------------------------------------------------------
@pytest.mark.parametrize("padding_idx", [None, 1, -1])
def test_embedding_matches_torch(padding_idx):
    tm = torch.nn.Embedding(6, 3, padding_idx=padding_idx)
    sm = nn.Embedding(6, 3, padding_idx=padding_idx)
    assert repr(sm) == repr(tm)
    if padding_idx is not None:
        assert np.all(np.asarray(sm.weight)[padding_idx] == 0)
    _copy_params(sm, tm)
    idx = np.array([[0, 1, 5], [1, 1, 2]])
    ys, yt = sm(xp.asarray(idx)), tm(torch.tensor(idx))
    assert ys.shape == (2, 3, 3)
    _close(ys, yt)
    _backward_both(ys, yt)
    _close(sm.weight.grad, tm.weight.grad)


def test_embedding_max_norm_and_errors():
    tm = torch.nn.Embedding(5, 4, max_norm=1.0)
    sm = nn.Embedding(5, 4, max_norm=1.0)
    _copy_params(sm, tm)
    idx = np.array([0, 2, 2])
    _close(sm(xp.asarray(idx)), tm(torch.tensor(idx)))
    _close(sm.weight, tm.weight)  # the looked-up rows were renormalised in place
    with pytest.raises(IndexError, match=r"Embedding\(5, 4.*index 5 is out of range"):
        sm(xp.asarray([5]))
    with pytest.raises(TypeError, match="integer"):
        sm(xp.asarray([0.0]))
    pre = nn.Embedding.from_pretrained(xp.asarray(np.eye(3, dtype=np.float32)))
    assert not pre.weight.requires_grad
    np.testing.assert_array_equal(np.asarray(pre(xp.asarray([2]))), [[0, 0, 1]])


def test_one_hot_matches_torch():
    idx = np.array([[0, 3], [2, 1]])
    s, t = F.one_hot(xp.asarray(idx)), torch.nn.functional.one_hot(torch.tensor(idx))
    assert s.dtype == xp.int64
    np.testing.assert_array_equal(np.asarray(s), t.numpy())
    np.testing.assert_array_equal(
        np.asarray(F.one_hot(xp.asarray(idx), 6)), torch.nn.functional.one_hot(torch.tensor(idx), 6)
    )
    with pytest.raises(RuntimeError, match="non-negative"):
        F.one_hot(xp.asarray([-1, 0]), 3)
    with pytest.raises(RuntimeError, match="smaller than num_classes"):
        F.one_hot(xp.asarray([3]), 3)
    assert F.one_hot(xp.empty((4,), dtype=xp.int64, device="meta"), 5).shape == (4, 5)


# -- flatten / containers -------------------------------------------------------------------------
@pytest.mark.parametrize("args", [(), (0, -1), (1, 2), (-3, -2)])
def test_flatten_matches_torch(args):
    a = _rand((2, 3, 4, 5))
    s, t = nn.Flatten(*args), torch.nn.Flatten(*args)
    assert repr(s) == repr(t)
    assert s(xp.asarray(a)).shape == tuple(t(torch.tensor(a)).shape)


def test_unflatten_matches_torch():
    a = _rand((2, 12, 5))
    for size in [(3, 4), (2, -1), [4, 3]]:
        s, t = nn.Unflatten(1, size), torch.nn.Unflatten(1, size)
        np.testing.assert_array_equal(np.asarray(s(xp.asarray(a))), t(torch.tensor(a)).numpy())
    with pytest.raises(RuntimeError, match="Unflatten"):
        nn.Unflatten(1, (5, 5))(xp.asarray(a))


def _mlp(lib):
    n = lib.nn if lib is torch else nn
    return n.Sequential(
        n.Flatten(), n.Linear(12, 8), n.ReLU(), n.Dropout(0.1), n.Linear(8, 3), n.LogSoftmax(1)
    )


def test_sequential_mlp_matches_torch():
    tm, sm = _mlp(torch), _mlp(xp)
    tm.eval()
    sm.eval()
    assert repr(sm) == repr(tm)
    assert list(sm.state_dict()) == list(tm.state_dict())
    _copy_params(sm, tm)
    xs, xt = _pair(_rand((4, 3, 4)))
    ys, yt = sm(xs), tm(xt)
    _close(ys, yt)
    _backward_both(ys, yt)
    _close(xs.grad, xt.grad)
    for p, q in zip(sm.parameters(), tm.parameters()):
        _close(p.grad, q.grad)


def test_sequential_api():
    s = nn.Sequential(nn.ReLU(), nn.Tanh(), nn.Sigmoid())
    assert len(s) == 3 and isinstance(s[1], nn.Tanh) and isinstance(s[-1], nn.Sigmoid)
    sub = s[1:]
    assert isinstance(sub, nn.Sequential) and list(sub._modules) == ["1", "2"]
    assert [type(m).__name__ for m in s] == ["ReLU", "Tanh", "Sigmoid"]
    s.append(nn.Identity())
    assert list(s._modules) == ["0", "1", "2", "3"]
    del s[0]
    assert list(s._modules) == ["0", "1", "2"] and isinstance(s[0], nn.Tanh)
    s[0] = nn.ReLU()
    assert isinstance(s[0], nn.ReLU)
    with pytest.raises(IndexError):
        s[5]
    from collections import OrderedDict

    named = nn.Sequential(OrderedDict([("fc", nn.Linear(2, 2)), ("act", nn.ReLU())]))
    assert [n for n, _ in named.named_parameters()] == ["fc.weight", "fc.bias"]


def test_module_list_and_dict():
    ml = nn.ModuleList([nn.Linear(2, 2) for _ in range(3)])
    ml.append(nn.ReLU())
    tl = torch.nn.ModuleList([torch.nn.Linear(2, 2) for _ in range(3)])
    tl.append(torch.nn.ReLU())
    assert repr(ml) == repr(tl)
    assert list(ml.state_dict()) == list(tl.state_dict())
    assert len(ml) == 4 and isinstance(ml[-1], nn.ReLU) and len(ml[:2]) == 2
    ml.insert(0, nn.Tanh())
    assert isinstance(ml[0], nn.Tanh) and len(ml) == 5
    md = nn.ModuleDict({"a": nn.Linear(2, 3), "b": nn.ReLU()})
    td = torch.nn.ModuleDict({"a": torch.nn.Linear(2, 3), "b": torch.nn.ReLU()})
    assert repr(md) == repr(td) and list(md) == ["a", "b"] and "a" in md
    assert list(md.state_dict()) == list(td.state_dict())
    # deleting by index and by slice renumbers the rest as PyTorch does
    for container, tcontainer in ((nn.ModuleList, torch.nn.ModuleList), (nn.Sequential, None)):
        mods = [nn.Linear(i + 1, 1) for i in range(5)]
        tmods = [torch.nn.Linear(i + 1, 1) for i in range(5)]
        ours = container(mods) if container is nn.ModuleList else container(*mods)
        theirs = torch.nn.ModuleList(tmods) if tcontainer else torch.nn.Sequential(*tmods)
        for idx in (1, slice(0, 3, 2), -1):
            del ours[idx]
            del theirs[idx]
        assert list(ours._modules) == list(theirs._modules)
        assert [m.in_features for m in ours] == [m.in_features for m in theirs]
    pl = nn.ParameterList([xp.ones(2), nn.Parameter(xp.zeros(3))])
    assert all(isinstance(p, nn.Parameter) for p in pl) and len(list(pl.parameters())) == 2


# -- meta -----------------------------------------------------------------------------------------
def _meta_vs_cpu(build, *inputs):
    """Run ``build()`` on cpu and on meta with the same input shapes: outputs and every
    gradient have equal shapes and dtypes."""
    res = []
    for dev in ("cpu", "meta"):
        xp.random.manual_seed(0)
        m = build(dev)
        xs = [
            xp.asarray(a).to_device(dev).requires_grad_()
            if a.dtype.kind == "f"
            else xp.asarray(a).to_device(dev)
            for a in inputs
        ]
        y = m(*xs)
        xp.sum(y).backward()
        res.append(
            (
                (y.shape, y.dtype),
                [(x.grad.shape, x.grad.dtype) for x in xs if x.requires_grad],
                [(p.grad.shape, p.grad.dtype, p.device.type) for p in m.parameters()],
            )
        )
    assert res[0][0] == res[1][0] and res[0][1] == res[1][1]
    assert [r[:2] for r in res[0][2]] == [r[:2] for r in res[1][2]]
    assert all(r[2] == "meta" for r in res[1][2])


@pytest.mark.parametrize(
    "build,inputs",
    [
        (lambda d: nn.Linear(5, 3, device=d), [_rand((4, 5))]),
        (lambda d: nn.Bilinear(2, 3, 4, device=d), [_rand((5, 2)), _rand((5, 3))]),
        (lambda d: nn.Embedding(7, 3, padding_idx=0, device=d), [np.array([[1, 2], [0, 6]])]),
        (lambda d: _mlp(xp).to(d), [_rand((4, 3, 4))]),
        (lambda d: nn.Sequential(nn.Linear(4, 6, device=d), nn.GELU(), nn.Dropout(0.2),
                                 nn.SiLU(), nn.Softmax(-1)), [_rand((2, 4))]),
        (lambda d: nn.Sequential(nn.Unflatten(1, (2, 3)), nn.Dropout2d(0.5), nn.Identity(),
                                 nn.Flatten(), nn.Linear(6, 2, device=d)), [_rand((2, 6, 1))]),
        (lambda d: nn.Sequential(nn.Embedding(9, 4, device=d), nn.Flatten(0, 1),
                                 nn.PReLU(device=d), nn.LogSoftmax(1)), [np.array([[1, 8]])]),
    ],
)  # fmt: skip
def test_layers_on_meta(build, inputs):
    _meta_vs_cpu(build, *inputs)


def test_meta_module_build_is_lazy():
    m = nn.Linear(100_000, 50_000, device="meta")  # 5e9 parameters: no memory, no draws
    assert m.weight.shape == (50_000, 100_000) and m.weight.device.type == "meta"
    y = m(xp.empty((8, 100_000), dtype=xp.float32, device="meta"))
    assert y.shape == (8, 50_000)


# -- hand-written backwards against finite differences (float64), second order too -------------
def _f64(shape, seed):
    return xp.asarray(_rand(shape, np.float64, seed=seed), requires_grad=True)


@pytest.mark.parametrize(
    "fn,shapes",
    [
        (lambda x, w, b: F.linear(x, w, b), [(3, 4), (2, 4), (2,)]),
        (lambda x, w: F.linear(x, w), [(2, 3, 4), (5, 4)]),
        (lambda x: F.log_softmax(x, dim=0), [(3, 4)]),
        (lambda x: F.softmax(x, dim=1), [(3, 4)]),
        (lambda x: F.gelu(x, approximate="tanh"), [(5,)]),
        (lambda x: F.gelu(x), [(5,)]),
        (lambda x: F.sigmoid(x), [(5,)]),
        (lambda x: F.silu(x), [(5,)]),
        (lambda x: F.hardtanh(x, -0.5, 0.5), [(5,)]),
        (lambda x1, x2, w: F.bilinear(x1, x2, w), [(2, 3), (2, 2), (4, 3, 2)]),
    ],
)
def test_gradcheck(fn, shapes):
    args = [_f64(s, i) for i, s in enumerate(shapes)]
    assert xp.autograd.gradcheck(fn, tuple(args))
    if len(shapes) <= 2 and shapes[0] != (5,):
        assert xp.autograd.gradgradcheck(fn, tuple(args))


def test_embedding_gradcheck():
    w = _f64((5, 3), 0)
    idx = xp.asarray([[0, 4], [4, 2]])
    assert xp.autograd.gradcheck(lambda w: F.embedding(idx, w), (w,))  # padding: vs torch


def test_frozen_linear_computes_only_input_grad():
    m = nn.Linear(3, 2).requires_grad_(False)
    x = xp.asarray(_rand((4, 3)), requires_grad=True)
    xp.sum(m(x)).backward()
    assert x.grad is not None and m.weight.grad is None and m.bias.grad is None
    y = m(xp.asarray(_rand((4, 3))))
    assert not y.requires_grad


@pytest.mark.parametrize(
    "fs,ft,shapes",
    [
        (lambda x: F.normalize(x), lambda x: torch.nn.functional.normalize(x), [(3, 4)]),
        (lambda x: F.normalize(x, p=1.0, dim=0),
         lambda x: torch.nn.functional.normalize(x, p=1.0, dim=0), [(3, 4)]),
        (lambda a, b: F.cosine_similarity(a, b),
         lambda a, b: torch.nn.functional.cosine_similarity(a, b), [(3, 4), (3, 4)]),
        (lambda a, b: F.cosine_similarity(a, b, dim=-1),
         lambda a, b: torch.nn.functional.cosine_similarity(a, b, dim=-1), [(2, 3, 4), (1, 4)]),
        (lambda a, b: F.pairwise_distance(a, b),
         lambda a, b: torch.nn.functional.pairwise_distance(a, b), [(3, 4), (3, 4)]),
        (lambda a, b: F.pairwise_distance(a, b, p=3.0, keepdim=True),
         lambda a, b: torch.nn.functional.pairwise_distance(a, b, p=3.0, keepdim=True),
         [(3, 4), (3, 4)]),
    ],
)  # fmt: skip
def test_distances_match_torch(fs, ft, shapes):
    pairs = [_pair(_rand(s, np.float64, seed=i)) for i, s in enumerate(shapes)]
    ys, yt = fs(*[p[0] for p in pairs]), ft(*[p[1] for p in pairs])
    assert ys.shape == tuple(yt.shape)
    _close(ys, yt, np.float64)
    _backward_both(ys, yt)
    for s, t in pairs:
        _close(s.grad, t.grad, np.float64)
