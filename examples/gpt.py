"""A GPT-2/3-style decoder written with strided.nn, and its configurations up to GPT-3 175B.

Token and position embeddings, pre-LayerNorm blocks of causal self-attention and a 4x GELU MLP,
a final LayerNorm and an output head tied to the token embedding (GPT-2's architecture, which
GPT-3 keeps up to its sparse attention layers)::

    import strided as xp
    from examples.gpt import GPT, CONFIGS

    model = GPT(**CONFIGS["gpt3-175b"], device="meta")        # 175B parameters, no memory
    tokens = xp.zeros((1, 2048), dtype=xp.int64, device="meta")
    loss = model.loss(tokens, tokens)
    loss.backward()                                             # shapes checked end to end

    python examples/gpt.py --config gpt3-175b                   # build + forward + backward on meta
"""

from __future__ import annotations

import argparse
import math
import time

import strided as xp
import strided.nn as nn
import strided.nn.functional as F

#: The GPT-2 and GPT-3 sizes (GPT-3 paper, table 2.1; GPT-2's released models).
CONFIGS: dict[str, dict] = {
    "gpt2": dict(n_layer=12, d_model=768, n_head=12, vocab_size=50257, context=1024),
    "gpt2-medium": dict(n_layer=24, d_model=1024, n_head=16, vocab_size=50257, context=1024),
    "gpt2-large": dict(n_layer=36, d_model=1280, n_head=20, vocab_size=50257, context=1024),
    "gpt2-xl": dict(n_layer=48, d_model=1600, n_head=25, vocab_size=50257, context=1024),
    "gpt3-small": dict(n_layer=12, d_model=768, n_head=12, vocab_size=50257, context=2048),
    "gpt3-xl": dict(n_layer=24, d_model=2048, n_head=16, vocab_size=50257, context=2048),
    "gpt3-13b": dict(n_layer=40, d_model=5120, n_head=40, vocab_size=50257, context=2048),
    "gpt3-175b": dict(n_layer=96, d_model=12288, n_head=96, vocab_size=50257, context=2048),
    # small enough to train on a laptop CPU, for tests
    "tiny": dict(n_layer=2, d_model=32, n_head=4, vocab_size=101, context=16),
}


class CausalSelfAttention(nn.Module):
    """Multi-head self-attention with a causal mask; one fused projection for q, k and v."""

    def __init__(self, d_model: int, n_head: int, dropout: float = 0.0, device=None, dtype=None):
        super().__init__()
        if d_model % n_head:
            raise ValueError(f"d_model ({d_model}) must be divisible by n_head ({n_head})")
        self.n_head = n_head
        self.dropout = dropout
        self.c_attn = nn.Linear(d_model, 3 * d_model, device=device, dtype=dtype)
        self.c_proj = nn.Linear(d_model, d_model, device=device, dtype=dtype)

    def forward(self, x):
        b, t, c = x.shape
        h = self.n_head
        qkv = xp.reshape(self.c_attn(x), (b, t, 3, h, c // h))
        qkv = xp.permute_dims(qkv, (2, 0, 3, 1, 4))  # (3, b, h, t, head)
        q, k, v = qkv[0], qkv[1], qkv[2]
        y = F.scaled_dot_product_attention(
            q, k, v, is_causal=True, dropout_p=self.dropout if self.training else 0.0
        )
        y = xp.reshape(xp.permute_dims(y, (0, 2, 1, 3)), (b, t, c))
        return self.c_proj(y)


class MLP(nn.Module):
    """The 4x feed-forward block with GELU (tanh approximation, as GPT-2)."""

    def __init__(self, d_model: int, device=None, dtype=None):
        super().__init__()
        self.c_fc = nn.Linear(d_model, 4 * d_model, device=device, dtype=dtype)
        self.gelu = nn.GELU(approximate="tanh")
        self.c_proj = nn.Linear(4 * d_model, d_model, device=device, dtype=dtype)

    def forward(self, x):
        return self.c_proj(self.gelu(self.c_fc(x)))


class Block(nn.Module):
    """Pre-LayerNorm transformer block: x + attn(ln(x)), then x + mlp(ln(x))."""

    def __init__(self, d_model: int, n_head: int, dropout: float = 0.0, device=None, dtype=None):
        super().__init__()
        self.ln_1 = nn.LayerNorm(d_model, device=device, dtype=dtype)
        self.attn = CausalSelfAttention(d_model, n_head, dropout, device=device, dtype=dtype)
        self.ln_2 = nn.LayerNorm(d_model, device=device, dtype=dtype)
        self.mlp = MLP(d_model, device=device, dtype=dtype)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Module):
    """The decoder: ``GPT(n_layer, d_model, n_head, vocab_size, context)``; ``forward(tokens)``
    gives logits of shape (batch, time, vocab_size)."""

    def __init__(
        self,
        n_layer: int,
        d_model: int,
        n_head: int,
        vocab_size: int,
        context: int,
        dropout: float = 0.0,
        device=None,
        dtype=None,
    ):
        super().__init__()
        self.context = context
        self.wte = nn.Embedding(vocab_size, d_model, device=device, dtype=dtype)
        self.wpe = nn.Embedding(context, d_model, device=device, dtype=dtype)
        self.drop = nn.Dropout(dropout)
        self.h = nn.ModuleList(
            [Block(d_model, n_head, dropout, device=device, dtype=dtype) for _ in range(n_layer)]
        )
        self.ln_f = nn.LayerNorm(d_model, device=device, dtype=dtype)
        # GPT-2's initialisation: N(0, 0.02), residual projections scaled by 1/sqrt(2 n_layer)
        for name, p in self.named_parameters():
            if name.endswith("weight") and p.ndim == 2:
                std = 0.02 / math.sqrt(2 * n_layer) if name.endswith("c_proj.weight") else 0.02
                nn.init.normal_(p, 0.0, std)
            elif name.endswith("bias"):
                nn.init.zeros_(p)

    def forward(self, tokens):
        b, t = tokens.shape
        if t > self.context:
            raise ValueError(
                f"GPT: a sequence of {t} tokens is longer than the context, {self.context}"
            )
        pos = xp.arange(t, dtype=xp.int64, device=tokens.device)
        x = self.drop(self.wte(tokens) + self.wpe(pos))
        for block in self.h:
            x = block(x)
        x = self.ln_f(x)
        return x @ self.wte.weight.mT  # the head shares the token embedding

    def loss(self, tokens, targets):
        """Mean next-token cross-entropy of ``tokens`` against ``targets`` (same shape)."""
        logits = self(tokens)
        b, t, v = logits.shape
        return F.cross_entropy(xp.reshape(logits, (b * t, v)), xp.reshape(targets, (b * t,)))


def gpt(config: str = "gpt3-175b", device=None, dtype=None, **overrides) -> GPT:
    """The model of a named configuration (``CONFIGS``), with any field overridden:
    ``gpt("gpt2", n_layer=4)``.  The factory ``python -m strided.summary`` calls."""
    if config not in CONFIGS:
        raise ValueError(
            f"gpt: unknown configuration {config!r}; expected one of {sorted(CONFIGS)}"
        )
    return GPT(**{**CONFIGS[config], **overrides}, device=device, dtype=dtype)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default="gpt3-175b", choices=sorted(CONFIGS))
    parser.add_argument("--device", default="meta")
    parser.add_argument("--batch", type=int, default=1)
    args = parser.parse_args(argv)
    cfg = CONFIGS[args.config]
    t0 = time.perf_counter()
    model = GPT(**cfg, device=args.device)
    t1 = time.perf_counter()
    tokens = xp.zeros((args.batch, cfg["context"]), dtype=xp.int64, device=args.device)
    loss = model.loss(tokens, tokens)
    t2 = time.perf_counter()
    loss.backward()
    t3 = time.perf_counter()
    n = sum(p.size for p in model.parameters())
    print(f"{args.config}: {n:,} parameters on {args.device}")
    print(f"build {t1 - t0:.3f} s, forward + loss {t2 - t1:.3f} s, backward {t3 - t2:.3f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
