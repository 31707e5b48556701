"""GPT-3 175B on the meta device: build + forward + loss + backward, strided vs PyTorch.

Each library runs in a process of its own (so that peak RSS is that library's, the interpreter
and imports included): the model of ``examples/gpt.py`` with the GPT-3 175B configuration (96
layers, d_model 12288, 96 heads, vocab 50257, context 2048) and a batch of one 2048-token
sequence.  PyTorch runs the same architecture written with torch.nn on ``device="meta"`` when it
is installed.  Also the cost of ``strided.nn.summary`` on it.

Targets (issue 11): strided's build + forward + loss + backward <= 1 s and <= 200 MB peak RSS,
and at least 3x faster than PyTorch's meta device.

    python benchmarks/bench_meta.py [--config gpt3-175b] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import pathlib
import statistics
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent

_STRIDED = """
import json, resource, sys, time
t0 = time.perf_counter()
sys.path.insert(0, {examples!r})
import strided as xp
from gpt import gpt
t1 = time.perf_counter()
model = gpt({config!r}, device="meta")
t2 = time.perf_counter()
tokens = xp.zeros((1, model.context), dtype=xp.int64, device="meta")
loss = model.loss(tokens, tokens)
t3 = time.perf_counter()
loss.backward()
t4 = time.perf_counter()
summary_s = None
if {summary!r}:
    import strided.nn as nn
    t5 = time.perf_counter()
    nn.summary(model, tokens)
    summary_s = time.perf_counter() - t5
print(json.dumps(dict(imports=t1 - t0, build=t2 - t1, forward=t3 - t2, backward=t4 - t3,
                      summary=summary_s,
                      rss_mb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)))
"""

_TORCH = """
import json, math, resource, time
t0 = time.perf_counter()
import torch
import torch.nn as nn
import torch.nn.functional as F
t1 = time.perf_counter()
cfg = {cfg!r}

class Block(nn.Module):
    def __init__(self, d, h):
        super().__init__()
        self.h = h
        self.ln_1 = nn.LayerNorm(d)
        self.c_attn = nn.Linear(d, 3 * d)
        self.c_proj = nn.Linear(d, d)
        self.ln_2 = nn.LayerNorm(d)
        self.c_fc = nn.Linear(d, 4 * d)
        self.c_proj2 = nn.Linear(4 * d, d)

    def forward(self, x):
        b, t, c = x.shape
        qkv = self.c_attn(self.ln_1(x)).view(b, t, 3, self.h, c // self.h).permute(2, 0, 3, 1, 4)
        y = F.scaled_dot_product_attention(qkv[0], qkv[1], qkv[2], is_causal=True)
        x = x + self.c_proj(y.transpose(1, 2).reshape(b, t, c))
        return x + self.c_proj2(F.gelu(self.c_fc(self.ln_2(x)), approximate="tanh"))

class GPT(nn.Module):
    def __init__(self, n_layer, d_model, n_head, vocab_size, context):
        super().__init__()
        self.wte = nn.Embedding(vocab_size, d_model)
        self.wpe = nn.Embedding(context, d_model)
        self.h = nn.ModuleList([Block(d_model, n_head) for _ in range(n_layer)])
        self.ln_f = nn.LayerNorm(d_model)

    def forward(self, tokens):
        t = tokens.shape[1]
        x = self.wte(tokens) + self.wpe(torch.arange(t, device=tokens.device))
        for block in self.h:
            x = block(x)
        return self.ln_f(x) @ self.wte.weight.T

with torch.device("meta"):
    t2 = time.perf_counter()
    model = GPT(**cfg)
    t3 = time.perf_counter()
    tokens = torch.zeros((1, cfg["context"]), dtype=torch.int64)
    logits = model(tokens)
    loss = F.cross_entropy(logits.view(-1, logits.shape[-1]), tokens.view(-1))
    t4 = time.perf_counter()
    loss.backward()
    t5 = time.perf_counter()
print(json.dumps(dict(imports=t1 - t0, build=t3 - t2, forward=t4 - t3, backward=t5 - t4,
                      rss_mb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)))
"""


def _run(code: str) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=False
    )
    if out.returncode:
        raise RuntimeError(out.stderr.strip().splitlines()[-1] if out.stderr else "failed")
    return json.loads(out.stdout.strip().splitlines()[-1])


def _median(runs: list, key: str) -> float:
    return statistics.median(r[key] for r in runs)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default="gpt3-175b")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT / "examples"))
    from gpt import CONFIGS

    cfg = CONFIGS[args.config]
    code = _STRIDED.format(examples=str(ROOT / "examples"), config=args.config, summary=True)
    runs = [_run(code) for _ in range(args.repeat)]
    work = [r["build"] + r["forward"] + r["backward"] for r in runs]
    s_total = statistics.median(work)
    rss = max(r["rss_mb"] for r in runs)
    print(f"{args.config} on meta, batch 1 x {cfg['context']} tokens (median of {args.repeat})")
    print(f"{'':24s} {'build':>8s} {'forward':>8s} {'backward':>9s} {'total':>8s} {'peak RSS':>9s}")
    print(
        f"{'strided':24s} {_median(runs, 'build'):7.3f}s {_median(runs, 'forward'):7.3f}s "
        f"{_median(runs, 'backward'):8.3f}s {s_total:7.3f}s {rss:7.0f}MB"
    )
    print(f"{'strided nn.summary':24s} {_median(runs, 'summary'):7.3f}s (forward + backward, "
          "observed)")  # fmt: skip
    fails = 0
    ok = s_total <= 1.0 and rss <= 200
    fails += not ok
    torch_runs = None
    try:
        import torch  # noqa: F401

        torch_runs = [_run(_TORCH.format(cfg=cfg)) for _ in range(args.repeat)]
    except ImportError:
        print("(PyTorch is not installed: no comparison)")
    if torch_runs:
        t_total = statistics.median(r["build"] + r["forward"] + r["backward"] for r in torch_runs)
        t_rss = max(r["rss_mb"] for r in torch_runs)
        print(
            f"{'torch (meta device)':24s} {_median(torch_runs, 'build'):7.3f}s "
            f"{_median(torch_runs, 'forward'):7.3f}s {_median(torch_runs, 'backward'):8.3f}s "
            f"{t_total:7.3f}s {t_rss:7.0f}MB"
        )
        speedup = t_total / s_total
        fails += speedup < 3
        print(f"speed-up over PyTorch: {speedup:.1f}x (goal >= 3x)")
    print(f"strided: {s_total:.3f} s <= 1 s and {rss:.0f} MB <= 200 MB: {'PASS' if ok else 'FAIL'}")
    print("all targets met" if not fails else f"{fails} target(s) missed")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
