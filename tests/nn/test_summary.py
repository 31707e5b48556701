"""strided.nn.summary: FLOPs, parameters and saved activations against closed-form counts, the
same table on cpu and meta, module paths in errors, and GPT-3 175B on meta."""

from __future__ import annotations

import pathlib
import subprocess
import sys

import numpy as np
import pytest

import strided as xp
import strided.nn as nn
import strided.nn.functional as F

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "examples"))

from gpt import CONFIGS, gpt  # noqa: E402


def _row(s, path):
    return next(r for r in s.rows if r.path == path)


@pytest.mark.parametrize("device", ["cpu", "meta"])
@pytest.mark.parametrize("input_grad", [False, True])
def test_linear_flops_and_params(device, input_grad):
    n, fin, fout = 7, 5, 3
    lin = nn.Linear(fin, fout, device=device)
    x = xp.zeros((n, fin), dtype=xp.float32, device=device)
    if input_grad:
        x.requires_grad_()
    s = nn.summary(lin, x, optimizer="sgd-momentum")
    gemm = 2 * n * fin * fout
    assert s.params == s.trainable == fin * fout + fout
    # forward: the GEMM and the bias add; the default loss sums the output (n * fout)
    assert _row(s, "").forward_flops == gemm + n * fout + n * fout
    # backward: dW (a GEMM) and db (a sum over the batch), and dX only when x needs it
    # db sums g over the batch: n * fout additions, or 2 * n * fout as a GEMV with ones
    want = gemm + (gemm if input_grad else 0)
    assert s.backward_flops - want in (n * fout, 2 * n * fout)
    assert s.weight_bytes == s.gradient_bytes == 4 * (fin * fout + fout)
    assert s.optimizer_bytes == 4 * (fin * fout + fout)  # one momentum buffer
    assert s.uncounted == {}


def test_mlp_saved_activations_match_a_hand_count():
    # Linear(a, b) -> ReLU -> Linear(b, c), loss = sum.  Saved for backward: the data x (by the
    # first Linear, for dW), the ReLU's output (by the ReLU, for its mask, and by the second
    # Linear, for dW: one array), and the weights (not activations).  The sum saves nothing.
    n, a, b, c = 4, 6, 8, 3
    model = nn.Sequential(nn.Linear(a, b, device="meta"), nn.ReLU(), nn.Linear(b, c, device="meta"))
    s = nn.summary(model, xp.zeros((n, a), dtype=xp.float32, device="meta"))
    f32 = 4
    by_module = {r.path: r.saved_bytes for r in s.rows}
    assert by_module == {"": (n * a + n * b) * f32, "0": n * a * f32, "1": n * b * f32, "2": 0}
    assert s.saved_bytes == (n * a + n * b) * f32
    assert s.weight_bytes == s.gradient_bytes == (a * b + b + b * c + c) * f32
    assert s.optimizer_bytes == 2 * s.weight_bytes  # AdamW: two moments per parameter
    assert s.peak_bytes == s.weight_bytes + s.gradient_bytes + s.optimizer_bytes + s.saved_bytes


def test_attention_flops_closed_form():
    b, h, t, d = 2, 3, 5, 4
    q = xp.zeros((b, h, t, d), device="meta", requires_grad=True)

    class Attention(nn.Module):
        def forward(self, q):
            return F.scaled_dot_product_attention(q, q, q)

    s = nn.summary(Attention(), q)
    # QK^T and PV: 2 * t * t * d multiply-adds each, per batch and head
    gemms = 2 * (2 * b * h * t * t * d)
    fwd = s.forward_flops
    assert gemms <= fwd <= gemms + 20 * b * h * t * t  # plus softmax and scaling, per score
    assert 2 * gemms <= s.backward_flops <= 2 * gemms + 40 * b * h * t * t


def test_cross_and_triangle_flops_closed_form():
    """The fused cross product counts two products and a difference per output element; a
    triangle (tril/triu) moves memory only: zero, and neither is left uncounted."""
    n = 7

    class Mix(nn.Module):
        def forward(self, u):
            return xp.linalg.cross(u, u * 2.0) + xp.tril(u[:3, :])[0]

    s = nn.summary(Mix(), xp.zeros((n, 3), device="meta"), train=False)
    assert s.uncounted == {}
    # the cross's 3 per element, the two elementwise ops' one each (u * 2, the add)
    assert s.forward_flops == 3 * (n * 3) + n * 3 + n * 3
    # recorded, the composition's steps (products, differences) are counted instead
    s = nn.summary(Mix(), xp.zeros((n, 3), device="meta", requires_grad=True))
    assert s.uncounted == {} and s.forward_flops >= 3 * (n * 3) + n * 3 + n * 3


def test_conv2d_flops_closed_form():
    n, cin, cout, hw, k = 2, 3, 4, 6, 3
    w = nn.Parameter(xp.zeros((cout, cin, k, k), dtype=xp.float32, device="meta"))

    class Conv(nn.Module):
        def __init__(self):
            super().__init__()
            self.w = w

        def forward(self, x):
            return F.conv2d(x, self.w, padding=1)

    s = nn.summary(Conv(), xp.zeros((n, cin, hw, hw), dtype=xp.float32, device="meta"))
    macs = n * hw * hw * cout * cin * k * k
    assert s.params == cout * cin * k * k
    assert 2 * macs <= s.forward_flops <= 2 * macs + 2 * n * cout * hw * hw
    # backward: the weight's gradient (the input needs none), the same multiply-adds
    assert 2 * macs <= s.backward_flops <= 2 * macs + 2 * n * cout * hw * hw
    assert s.uncounted == {}


@pytest.mark.parametrize("config", ["gpt2", "gpt3-xl"])
def test_gpt_flops_match_the_megatron_formula(config):
    cfg = CONFIGS[config]
    model = gpt(config, device="meta")
    tokens = xp.zeros((1, cfg["context"]), dtype=xp.int64, device="meta")
    s = nn.summary(model, tokens, loss=lambda logits: _cross_entropy(logits, tokens))
    L, h, V, S = cfg["n_layer"], cfg["d_model"], cfg["vocab_size"], cfg["context"]
    # params: embeddings, 12 h^2 + 13 h per block, final LayerNorm; the head is tied
    assert s.params == V * h + S * h + L * (12 * h * h + 13 * h) + 2 * h
    megatron = 72 * S * L * h * h * (1 + S / (6 * h) + V / (12 * L * h))
    assert abs(s.flops / megatron - 1) < 0.01
    assert s.uncounted == {}


def _cross_entropy(logits, tokens):
    b, t, v = logits.shape
    return F.cross_entropy(xp.reshape(logits, (b * t, v)), xp.reshape(tokens, (b * t,)))


def test_gpt3_175b_on_meta():
    cfg = CONFIGS["gpt3-175b"]
    model = gpt("gpt3-175b", device="meta")
    tokens = xp.zeros((1, cfg["context"]), dtype=xp.int64, device="meta")
    s = nn.summary(model, tokens, loss=lambda logits: _cross_entropy(logits, tokens))
    assert s.params == 174_604_259_328
    assert abs(s.flops / 2.2044e15 - 1) < 0.01
    # every block costs the same, and the blocks account for most of the FLOPs
    blocks = [r for r in s.rows if r.path.count(".") == 1 and r.path.startswith("h.")]
    assert len(blocks) == 96 and len({r.forward_flops for r in blocks}) == 1
    # backward runs two GEMMs per forward GEMM (elementwise backward rules differ a little)
    assert abs(blocks[0].backward_flops / (2 * blocks[0].forward_flops) - 1) < 0.01
    text = str(s)
    assert "h.95.mlp.c_fc" in text and "peak training memory" in text


def test_table_on_cpu_equals_table_on_meta():
    def build(device):
        return nn.Sequential(
            nn.Linear(6, 8, device=device),
            nn.GELU(),
            nn.LayerNorm(8, device=device),
            nn.Linear(8, 2, device=device),
        )

    x_cpu = xp.asarray(np.ones((3, 6), np.float32))
    cpu = nn.summary(build("cpu"), x_cpu)
    meta = nn.summary(build("meta"), xp.zeros((3, 6), dtype=xp.float32, device="meta"))
    assert cpu.as_dicts() == meta.as_dicts()
    assert (cpu.flops, cpu.saved_bytes, cpu.peak_bytes) == (meta.flops, meta.saved_bytes,
                                                            meta.peak_bytes)  # fmt: skip


def test_unknown_primitives_are_listed_not_counted_as_zero(monkeypatch):
    from strided.nn import _flops

    monkeypatch.setattr(_flops, "_BY_KIND", {k: v for k, v in _flops._BY_KIND.items()
                                             if k != "unary"})  # fmt: skip
    model = nn.Sequential(nn.Linear(4, 4, device="meta"), nn.Tanh())
    s = nn.summary(model, xp.zeros((2, 4), dtype=xp.float32, device="meta"))
    assert "tanh" in s.uncounted
    assert "not counted (no FLOP formula): " in str(s) and "tanh" in str(s)


def test_command_line_prints_the_table():
    out = subprocess.run(
        [sys.executable, "-m", "strided.summary", "examples/gpt.py:gpt", "--config", "tiny",
         "--input", "2,16:int64"],
        capture_output=True, text=True, cwd=ROOT, check=True,
    )  # fmt: skip
    assert "h.1.attn.c_attn" in out.stdout and "FLOPs per step" in out.stdout


def test_forward_errors_name_the_module_path_and_keep_their_type():
    model = gpt("gpt3-175b", device="meta")
    model.h[17].attn.c_proj = nn.Linear(4096, 12288, device="meta")  # the wrong in_features
    tokens = xp.zeros((1, 2048), dtype=xp.int64, device="meta")
    with pytest.raises(RuntimeError) as info:
        model(tokens)
    message = str(info.value)
    assert message.startswith("h.17.attn.c_proj: Linear(in_features=4096")
    assert "(1, 2048, 12288)" in message and "(12288, 4096)" in message


def test_errors_from_inside_a_forward_name_the_innermost_module():
    class Mixer(nn.Module):
        def forward(self, x):
            return xp.matmul(x, xp.ones((3, 5), device=x.device))

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = nn.Sequential(nn.Linear(4, 4, device="meta"), Mixer())

        def forward(self, x):
            return self.body(x)

    with pytest.raises(
        ValueError, match=r"^body\.1 \(Mixer\): matmul: shapes \(2, 4\) and \(3, 5\)"
    ):
        Net()(xp.zeros((2, 4), dtype=xp.float32, device="meta"))


def test_backward_errors_name_the_module_whose_forward_recorded_the_node():
    class Broken(xp.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return xp.matmul(g, xp.ones((3, 5), dtype=g.dtype))  # a shape bug

    class Inner(nn.Module):
        def forward(self, x):
            return Broken.apply(x)

    class Outer(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(4, 4)
            self.inner = Inner()

        def forward(self, x):
            return self.inner(self.lin(x))

    y = Outer()(xp.ones((2, 4), dtype=xp.float32))
    with pytest.raises(ValueError, match=r"^inner \(Inner\): in backward: matmul: shapes"):
        xp.sum(y).backward()


def test_mixed_precision_memory_estimate():
    model = nn.Sequential(nn.Linear(8, 8, device="meta"), nn.ReLU(), nn.Linear(8, 2, device="meta"))
    x = xp.zeros((4, 8), dtype=xp.float32, device="meta")
    native = nn.summary(model, x, optimizer="adamw")
    mixed = nn.summary(model, x, optimizer="adamw", precision="mixed")
    n = native.params
    assert native.weight_bytes + native.gradient_bytes + native.optimizer_bytes == 16 * n
    # 2 (16-bit weights) + 2 (16-bit gradients) + 4 (float32 master) + 8 (two float32 moments)
    assert mixed.weight_bytes + mixed.gradient_bytes + mixed.optimizer_bytes == 16 * n
    assert mixed.weight_bytes == 2 * n and mixed.optimizer_bytes == 12 * n
    assert mixed.saved_bytes * 2 == native.saved_bytes
    with pytest.raises(ValueError, match="precision"):
        nn.summary(model, x, precision="fp8")
