"""Attention against PyTorch: scaled_dot_product_attention (masks, causal, scale, GQA,
dropout statistics), multi_head_attention_forward, nn.MultiheadAttention and
nn.TransformerEncoderLayer with torch's weights (state_dict), masks, batch_first both ways,
every gradient, meta runs and error messages."""

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import strided as xp
import strided.nn as nn
from strided.nn import _functional_attention as F

RTOL, ATOL = 1e-4, 1e-5


def _rng(seed=0):
    return np.random.default_rng(seed)


def _f32(rng, *shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def _pairs(arrays, grads):
    s = [None if a is None else xp.asarray(a, requires_grad=bool(g)) for a, g in zip(arrays, grads)]
    t = [
        None if a is None else torch.tensor(a, requires_grad=bool(g)) for a, g in zip(arrays, grads)
    ]
    return s, t


def _close(a, t, rtol=RTOL, atol=ATOL):
    """float32 comparison; the absolute tolerance scales with the array's magnitude (entries
    that cancel to ~0, such as the key bias gradient, carry rounding of the large ones)."""
    assert a is not None, "missing gradient"
    expected = t.detach().numpy() if isinstance(t, torch.Tensor) else t
    scale = max(1.0, float(np.nanmax(np.abs(expected)))) if np.size(expected) else 1.0
    np.testing.assert_allclose(np.asarray(a), expected, rtol=rtol, atol=atol * scale)


def _loss(out):
    """A scalar that depends on every output (weights included) in a non-trivial way."""
    outs = out if isinstance(out, tuple) else (out,)
    total = 0
    for i, o in enumerate(outs):
        if o is not None:
            total = total + ((o * o).sum() if isinstance(o, torch.Tensor) else xp.sum(o * o)) * (
                i + 1
            )
    return total


def _check(fn, tfn, arrays, grads, rtol=RTOL, atol=ATOL):
    s, t = _pairs(arrays, grads)
    out, tout = fn(*s), tfn(*t)
    outs = out if isinstance(out, tuple) else (out,)
    touts = tout if isinstance(tout, tuple) else (tout,)
    for o, to in zip(outs, touts):
        if to is None:
            assert o is None
            continue
        assert o.shape == tuple(to.shape)
        _close(o, to, rtol, atol)
    _loss(out).backward()
    _loss(tout).backward()
    for a, ta, g in zip(s, t, grads):
        if g:
            _close(a.grad, ta.grad, rtol, atol)


# ----------------------------------------------------------------------------- SDPA


def test_sdpa_plain_and_scale():
    rng = _rng(1)
    q, k, v = _f32(rng, 2, 3, 4, 8), _f32(rng, 2, 3, 5, 8), _f32(rng, 2, 3, 5, 6)
    _check(F.scaled_dot_product_attention, TF.scaled_dot_product_attention, [q, k, v], [1, 1, 1])
    _check(
        lambda a, b, c: F.scaled_dot_product_attention(a, b, c, scale=0.7),
        lambda a, b, c: TF.scaled_dot_product_attention(a, b, c, scale=0.7),
        [q, k, v],
        [1, 1, 1],
    )


def test_sdpa_causal_and_masks():
    rng = _rng(2)
    q, k, v = _f32(rng, 2, 4, 8), _f32(rng, 2, 5, 8), _f32(rng, 2, 5, 3)
    _check(
        lambda a, b, c: F.scaled_dot_product_attention(a, b, c, is_causal=True),
        lambda a, b, c: TF.scaled_dot_product_attention(a, b, c, is_causal=True),
        [q, k, v],
        [1, 1, 1],
    )
    mask = rng.random((4, 5)) > 0.4
    mask[2] = False  # a query that may attend to nothing: zeros, as PyTorch
    _check(
        F.scaled_dot_product_attention,
        TF.scaled_dot_product_attention,
        [q, k, v, mask],
        [1, 1, 1, 0],
    )
    bias = _f32(rng, 2, 1, 5)  # a float mask, broadcast over queries, with its own gradient
    _check(
        F.scaled_dot_product_attention,
        TF.scaled_dot_product_attention,
        [q, k, v, bias],
        [1, 1, 1, 1],
    )


def test_sdpa_gqa_and_non_contiguous():
    rng = _rng(3)
    q, k, v = _f32(rng, 1, 4, 3, 8), _f32(rng, 1, 2, 5, 8), _f32(rng, 1, 2, 5, 8)
    _check(
        lambda a, b, c: F.scaled_dot_product_attention(a, b, c, enable_gqa=True),
        lambda a, b, c: TF.scaled_dot_product_attention(a, b, c, enable_gqa=True),
        [q, k, v],
        [1, 1, 1],
    )
    # (B, L, H, E) buffers viewed as (B, H, L, E)
    qb, kb = _f32(rng, 2, 3, 2, 4), _f32(rng, 2, 5, 2, 4)
    s, t = _pairs([qb, kb], [1, 1])
    out = F.scaled_dot_product_attention(
        xp.permute_dims(s[0], (0, 2, 1, 3)),
        xp.permute_dims(s[1], (0, 2, 1, 3)),
        xp.permute_dims(s[1], (0, 2, 1, 3)),
    )
    tout = TF.scaled_dot_product_attention(
        t[0].permute(0, 2, 1, 3), t[1].permute(0, 2, 1, 3), t[1].permute(0, 2, 1, 3)
    )
    _close(out, tout)
    _loss(out).backward()
    _loss(tout).backward()
    _close(s[0].grad, t[0].grad)
    _close(s[1].grad, t[1].grad)


def test_sdpa_gradcheck_float64():
    rng = _rng(4)
    q = xp.asarray(rng.standard_normal((2, 3, 4)), requires_grad=True)
    k = xp.asarray(rng.standard_normal((2, 5, 4)), requires_grad=True)
    v = xp.asarray(rng.standard_normal((2, 5, 2)), requires_grad=True)
    m = xp.asarray(rng.standard_normal((3, 5)), requires_grad=True)
    assert xp.autograd.gradcheck(F.scaled_dot_product_attention, (q, k, v, m))
    assert xp.autograd.gradgradcheck(F.scaled_dot_product_attention, (q, k, v, m))


def test_sdpa_dropout_statistics():
    xp.random.manual_seed(0)
    q = xp.zeros((1, 64, 4), dtype=xp.float32)
    k = xp.zeros((1, 64, 4), dtype=xp.float32)
    v = xp.ones((1, 64, 1), dtype=xp.float32)
    # uniform weights 1/64: each output is (kept count) / 64 / (1 - p)
    out = np.asarray(F.scaled_dot_product_attention(q, k, v, dropout_p=0.25))
    assert abs(out.mean() - 1.0) < 0.05
    assert 0.0 < out.std() < 0.2
    full = np.asarray(F.scaled_dot_product_attention(q, k, v, dropout_p=1.0))
    assert (full == 0).all()


# ----------------------------------------------------------------------------- MHA functional

E, H, L, S, N = 8, 2, 4, 5, 3


def _mha_weights(rng, kdim=E, vdim=E):
    return (
        _f32(rng, 3 * E, E, scale=0.3),
        _f32(rng, 3 * E),
        _f32(rng, E, E, scale=0.3),
        _f32(rng, E),
    )


@pytest.mark.parametrize("need_weights", [True, False])
@pytest.mark.parametrize("average", [True, False])
def test_mha_forward_masks(need_weights, average):
    rng = _rng(5)
    w, b, ow, ob = _mha_weights(rng)
    x, kk, vv = _f32(rng, L, N, E), _f32(rng, S, N, E), _f32(rng, S, N, E)
    kpm = rng.random((N, S)) > 0.7
    kpm[:, 0] = False
    am = rng.random((L, S)) > 0.8
    am[:, 1] = False

    def call(mod):
        def f(a, b_, c, w_, bb, o, obb, kp, at):
            return mod.multi_head_attention_forward(
                a, b_, c, E, H, w_, bb, None, None, False, 0.0, o, obb,
                key_padding_mask=kp, need_weights=need_weights, attn_mask=at,
                average_attn_weights=average,
            )  # fmt: skip

        return f

    _check(call(F), call(TF), [x, kk, vv, w, b, ow, ob, kpm, am], [1] * 7 + [0, 0])


def test_mha_forward_float_3d_mask_bias_kv_zero_attn_unbatched():
    rng = _rng(6)
    w, b, ow, ob = _mha_weights(rng)
    x, kk, vv = _f32(rng, L, N, E), _f32(rng, S, N, E), _f32(rng, S, N, E)
    fam = _f32(rng, N * H, L, S)

    def call(mod):
        return lambda a, b_, c, w_, bb, o, obb, m: mod.multi_head_attention_forward(
            a, b_, c, E, H, w_, bb, None, None, False, 0.0, o, obb, attn_mask=m
        )

    _check(call(F), call(TF), [x, kk, vv, w, b, ow, ob, fam], [1] * 8)
    bk, bv = _f32(rng, 1, 1, E), _f32(rng, 1, 1, E)
    kpm = rng.random((N, S)) > 0.6

    def call2(mod):
        return lambda a, b_, c, w_, bb, o, obb, k1, v1, kp: mod.multi_head_attention_forward(
            a, b_, c, E, H, w_, bb, k1, v1, True, 0.0, o, obb, key_padding_mask=kp
        )

    _check(call2(F), call2(TF), [x, kk, vv, w, b, ow, ob, bk, bv, kpm], [1] * 9 + [0])

    def call3(mod):
        return lambda a, b_, c, w_, bb, o, obb: mod.multi_head_attention_forward(
            a, b_, c, E, H, w_, bb, None, None, False, 0.0, o, obb
        )

    _check(call3(F), call3(TF), [x[:, 0], kk[:, 0], vv[:, 0], w, b, ow, ob], [1] * 7)


# ----------------------------------------------------------------------------- modules


def _load(m, tm):
    m.load_state_dict({k: v.detach().numpy() for k, v in tm.state_dict().items()})


def _randomize(tm, rng):
    with torch.no_grad():
        for p in tm.parameters():
            p.copy_(torch.tensor(_f32(rng, *p.shape, scale=0.5)))


def _compare_module(m, tm, inputs, kwargs_s, kwargs_t, grads, mods=None, rtol=RTOL, atol=ATOL):
    """Call ``m``/``tm`` (modules, or callables with ``mods`` the modules) on the same
    inputs; compare outputs, input gradients and every parameter's gradient."""
    s, t = _pairs(inputs, grads)
    out, tout = m(*s, **kwargs_s), tm(*t, **kwargs_t)
    outs = out if isinstance(out, tuple) else (out,)
    touts = tout if isinstance(tout, tuple) else (tout,)
    for o, to in zip(outs, touts):
        if to is None:
            assert o is None
        else:
            assert o.shape == tuple(to.shape)
            _close(o, to, rtol, atol)
    _loss(out).backward()
    _loss(tout).backward()
    for a, ta, g in zip(s, t, grads):
        if g:
            _close(a.grad, ta.grad, rtol, atol)
    mod, tmod = mods if mods is not None else (m, tm)
    tparams = dict(tmod.named_parameters())
    assert len(tparams) == len(list(mod.parameters()))
    for name, p in mod.named_parameters():
        _close(p.grad, tparams[name].grad, rtol, atol)


def test_mha_defaults_match_torch():
    for kw in ({}, {"kdim": 3, "vdim": 5, "add_bias_kv": True}, {"bias": False}):
        m, tm = nn.MultiheadAttention(8, 2, **kw), torch.nn.MultiheadAttention(8, 2, **kw)
        assert repr(m) == repr(tm)
        sd, tsd = m.state_dict(), tm.state_dict()
        assert list(sd) == list(tsd)
        assert [sd[k].shape for k in sd] == [tuple(tsd[k].shape) for k in tsd]
        assert [n for n, _ in m.named_parameters()] == [n for n, _ in tm.named_parameters()]
    m = nn.MultiheadAttention(16, 4)
    w = np.asarray(m.in_proj_weight)
    bound = np.sqrt(6.0 / (16 + 48))  # xavier_uniform_ on (3E, E)
    assert np.abs(w).max() <= bound and w.std() > bound / 3
    assert not np.asarray(m.in_proj_bias).any() and not np.asarray(m.out_proj.bias).any()


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("self_attention", [True, False])
def test_mha_module_with_torch_weights(batch_first, self_attention):
    rng = _rng(7)
    m = nn.MultiheadAttention(E, H, batch_first=batch_first)
    tm = torch.nn.MultiheadAttention(E, H, batch_first=batch_first)
    _randomize(tm, rng)
    _load(m, tm)
    shape_q = (N, L, E) if batch_first else (L, N, E)
    shape_k = (N, S, E) if batch_first else (S, N, E)
    kpm = rng.random((N, S)) > 0.7
    kpm[:, 0] = False
    am = rng.random((L, S)) > 0.7
    am[:, 0] = False
    if self_attention:
        x = _f32(rng, *shape_q)
        kpm = kpm[:, :L]
        am = am[:, :L]

        def run(mod, xx, kp, at):
            return mod(xx, xx, xx, key_padding_mask=kp, attn_mask=at)

        _compare_module(
            lambda *a: run(m, *a),
            lambda *a: run(tm, *a),
            [x, kpm, am],
            {},
            {},
            [1, 0, 0],
            mods=(m, tm),
        )
    else:
        q, k, v = _f32(rng, *shape_q), _f32(rng, *shape_k), _f32(rng, *shape_k)
        kw = dict(average_attn_weights=False)
        _compare_module(m, tm, [q, k, v, kpm], kw, kw, [1, 1, 1, 0])


def test_mha_kdim_vdim_bias_kv_zero_attn_eval_need_weights_false():
    rng = _rng(8)
    kw = dict(kdim=3, vdim=5, add_bias_kv=True, add_zero_attn=True, dropout=0.5)
    m, tm = nn.MultiheadAttention(E, H, **kw), torch.nn.MultiheadAttention(E, H, **kw)
    _randomize(tm, rng)
    _load(m, tm)
    m.eval()
    tm.eval()  # dropout off
    q, k, v = _f32(rng, L, N, E), _f32(rng, S, N, 3), _f32(rng, S, N, 5)
    am = rng.random((L, S)) > 0.7
    opts = dict(attn_mask=None, need_weights=False)
    _compare_module(m, tm, [q, k, v], opts, opts, [1, 1, 1])
    s, t = _pairs([q, k, v, am], [0, 0, 0, 0])
    out, w = m(*s[:3], attn_mask=s[3])
    tout, tw = tm(*t[:3], attn_mask=t[3])
    _close(out, tout)
    _close(w, tw)


def test_mha_unbatched_and_causal_hint():
    rng = _rng(9)
    m, tm = nn.MultiheadAttention(E, H), torch.nn.MultiheadAttention(E, H)
    _randomize(tm, rng)
    _load(m, tm)
    x = _f32(rng, L, E)
    causal = np.triu(np.ones((L, L), dtype=bool), 1)  # True: not allowed

    def run(mod, xx, mask):
        return mod(xx, xx, xx, attn_mask=mask, is_causal=True, need_weights=False)

    _compare_module(
        lambda *a: run(m, *a), lambda *a: run(tm, *a), [x, causal], {}, {}, [1, 0], mods=(m, tm)
    )


def test_mha_dropout_in_training_only():
    xp.random.manual_seed(0)
    m = nn.MultiheadAttention(E, H, dropout=0.5)
    x = xp.asarray(_f32(_rng(10), L, N, E))
    a1, _ = m(x, x, x)
    a2, _ = m(x, x, x)
    assert not np.allclose(np.asarray(a1), np.asarray(a2))
    m.eval()
    e1, w1 = m(x, x, x)
    e2, _ = m(x, x, x)
    np.testing.assert_array_equal(np.asarray(e1), np.asarray(e2))
    np.testing.assert_allclose(np.asarray(w1).sum(-1), 1.0, rtol=1e-5)


@pytest.mark.filterwarnings("ignore:Support for mismatched")
@pytest.mark.parametrize(
    "kw",
    [
        {},
        {"batch_first": True, "norm_first": True},
        {"activation": "gelu", "batch_first": True},
        {"bias": False, "norm_first": True, "layer_norm_eps": 1e-3},
    ],
)
def test_transformer_encoder_layer_with_torch_weights(kw):
    rng = _rng(11)
    m = nn.TransformerEncoderLayer(E, H, dim_feedforward=16, dropout=0.1, **kw)
    tm = torch.nn.TransformerEncoderLayer(E, H, dim_feedforward=16, dropout=0.1, **kw)
    assert repr(m) == repr(tm)
    assert list(m.state_dict()) == list(tm.state_dict())
    _randomize(tm, rng)
    _load(m, tm)
    m.eval()
    tm.eval()
    bf = kw.get("batch_first", False)
    x = _f32(rng, *((N, L, E) if bf else (L, N, E)))
    kpm = rng.random((N, L)) > 0.7
    kpm[:, 0] = False
    mask = _f32(rng, L, L)

    def run(mod, xx, sm, kp):
        return mod(xx, src_mask=sm, src_key_padding_mask=kp)

    _compare_module(
        lambda *a: run(m, *a),
        lambda *a: run(tm, *a),
        [x, mask, kpm],
        {},
        {},
        [1, 0, 0],
        mods=(m, tm),
    )
    # training mode with dropout 0 matches too
    m0 = nn.TransformerEncoderLayer(E, H, dim_feedforward=16, dropout=0.0, **kw)
    tm0 = torch.nn.TransformerEncoderLayer(E, H, dim_feedforward=16, dropout=0.0, **kw)
    _randomize(tm0, rng)
    _load(m0, tm0)
    _compare_module(m0, tm0, [x], {}, {}, [1])


# ----------------------------------------------------------------------------- meta


def test_attention_layers_on_meta_match_cpu():
    def build_and_run(dev):
        m = nn.TransformerEncoderLayer(E, H, dim_feedforward=16, batch_first=True, device=dev)
        mha = nn.MultiheadAttention(E, H, kdim=3, vdim=5, device=dev)
        x = xp.ones((N, L, E), dtype=xp.float32, device=dev, requires_grad=True)
        k = xp.ones((S, N, 3), dtype=xp.float32, device=dev)
        v = xp.ones((S, N, 5), dtype=xp.float32, device=dev)
        kpm = xp.zeros((N, L), dtype=xp.bool, device=dev)
        y = m(x, src_key_padding_mask=kpm)
        q = xp.permute_dims(y, (1, 0, 2))
        out, w = mha(q, k, v, average_attn_weights=False)
        sd = F.scaled_dot_product_attention(q, q, q, is_causal=True)
        xp.sum(out * out + 0.0).backward()
        info = [(out.shape, out.dtype), (w.shape, w.dtype), (sd.shape, sd.dtype)]
        info.append((x.grad.shape, x.grad.dtype))
        info += [(p.grad.shape, p.grad.dtype) for p in m.parameters()]
        info += [(p.grad.shape, p.grad.dtype) for p in mha.parameters()]
        assert out.device == dev and x.grad.device == dev
        return info

    assert build_and_run("cpu") == build_and_run("meta")


# ----------------------------------------------------------------------------- errors


def test_attention_errors():
    q = xp.ones((2, 3, 4))
    with pytest.raises(ValueError, match=r"scaled_dot_product_attention: shapes do not match"):
        F.scaled_dot_product_attention(q, xp.ones((2, 5, 3)), xp.ones((2, 5, 3)))
    with pytest.raises(RuntimeError, match="attn_mask should not be set when is_causal"):
        F.scaled_dot_product_attention(q, q, q, attn_mask=xp.ones((3, 3)), is_causal=True)
    with pytest.raises(ValueError, match=r"attn_mask of shape \(4, 3\) does not broadcast"):
        F.scaled_dot_product_attention(q, q, q, attn_mask=xp.ones((4, 3)))
    with pytest.raises(TypeError, match="only bool and floating-point masks"):
        F.scaled_dot_product_attention(q, q, q, attn_mask=xp.ones((3, 3), dtype=xp.int64))
    m = nn.MultiheadAttention(E, H)
    x = xp.ones((L, N, E), dtype=xp.float32)
    with pytest.raises(ValueError, match=r"was expecting embedding dimension of 8"):
        m(xp.ones((L, N, 6)), xp.ones((L, N, 6)), xp.ones((L, N, 6)))
    with pytest.raises(ValueError, match=r"the shape of the 2D attn_mask is \(3, 3\)"):
        m(x, x, x, attn_mask=xp.ones((3, 3)))
    with pytest.raises(ValueError, match=r"expected key_padding_mask of shape \(3, 4\)"):
        m(x, x, x, key_padding_mask=xp.zeros((3, 5), dtype=xp.bool))
    with pytest.raises(RuntimeError, match="need attn_mask if specifying the is_causal hint"):
        m(x, x, x, is_causal=True)
    with pytest.raises(TypeError, match=r"query of dtype float64 .* differs"):
        m(xp.astype(x, xp.float64), x, x)
    with pytest.raises(ValueError, match="must be divisible by num_heads"):
        nn.MultiheadAttention(10, 3)
    with pytest.raises(RuntimeError, match="activation should be relu/gelu"):
        nn.TransformerEncoderLayer(E, H, activation="tanh")
