"""Nothing is lost, nothing is kept: small operations do not leak (a short version of
``benchmarks/bench_memory.py``), and backward frees the tape unless ``retain_graph``."""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
import weakref

import numpy as np
import pytest

import strided as xp

pytestmark = pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="needs /proc")


_MEASURE = """
import gc, json, sys
sys.path.insert(0, {root!r})
import strided as xp
from benchmarks.bench_memory import grad_ops, plain_ops, rss_mb
out = {{}}
for name, fn in (("plain", plain_ops), ("gradients", grad_ops)):
    fn(5_000)  # warm-up
    gc.collect()
    before = rss_mb()
    fn(20_000)
    gc.collect()
    out[name] = rss_mb() - before
gc.collect()
before = rss_mb()
kept = [xp.ones((16,)) * 2.0 for _ in range(20_000)]  # the control: a leak of 20,000 arrays
out["control"] = rss_mb() - before
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def growth():
    """RSS growth (MiB) over 20,000 ops, measured in a fresh process: in a test worker that
    already holds a large heap, freed memory would be reused and hide a leak."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    r = subprocess.run(
        [sys.executable, "-c", _MEASURE.format(root=root)],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=root,
    )
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("kind", ["plain", "gradients"])
def test_small_operations_keep_rss_flat(growth, kind):
    # 20k ops leaking one 8-byte buffer (+ its ~100-byte ndarray) each would be +2 MB
    assert growth[kind] < 2.0, f"RSS grew by {growth[kind]:.2f} MiB over 20,000 operations"


def test_a_leak_would_be_seen(growth):
    """The measure works: keeping 20,000 small arrays alive shows up."""
    assert growth["control"] > 2.0, growth


def _graph():
    x = xp.asarray(np.linspace(-1, 1, 1000), requires_grad=True)
    y = xp.exp(x)  # saves its output
    probe = weakref.ref(y)
    node = weakref.ref(y.grad_fn)
    loss = xp.sum(xp.tanh(y) * 2.0)
    del y
    return x, loss, probe, node


def test_backward_frees_the_tape():
    x, loss, probe, node = _graph()
    gc.collect()
    assert probe() is not None  # the graph keeps what it saved until backward
    loss.backward()
    gc.disable()  # freed by reference counting alone: no cycle keeps it
    try:
        assert probe() is None
        del loss
        assert node() is None, "the graph's nodes outlive the output and its backward"
    finally:
        gc.enable()
    assert x.grad is not None and x.grad.shape == x.shape


def test_retain_graph_keeps_the_tape_until_the_last_backward():
    x, loss, probe, node = _graph()
    loss.backward(retain_graph=True)
    gc.collect()
    assert probe() is not None and node() is not None
    first = np.asarray(x.grad).copy()
    loss.backward()  # the graph was kept: a second pass accumulates, then frees it
    np.testing.assert_allclose(np.asarray(x.grad), 2 * first)
    assert probe() is None
    del loss
    gc.collect()
    assert node() is None
