"""Nothing is lost, nothing is kept: small operations do not leak (a short version of
``benchmarks/bench_memory.py``), and backward frees the tape unless ``retain_graph``."""

from __future__ import annotations

import gc
import os
import sys
import weakref

import numpy as np
import pytest

import strided as xp

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from benchmarks.bench_memory import grad_ops, plain_ops, rss_mb  # noqa: E402

pytestmark = pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="needs /proc")


@pytest.mark.parametrize("fn", [plain_ops, grad_ops], ids=["plain", "gradients"])
def test_small_operations_keep_rss_flat(fn):
    fn(5_000)  # warm-up
    gc.collect()
    before = rss_mb()
    fn(20_000)
    gc.collect()
    grown = rss_mb() - before
    # 20k ops leaking one 8-byte buffer (+ its ~100-byte ndarray) each would be +2 MB; NumPy's
    # and the allocator's own caches move a fraction of that
    assert grown < 2.0, f"RSS grew by {grown:.2f} MiB over 20,000 operations"


def test_a_leak_would_be_seen():
    """The measure works: keeping 20,000 small arrays alive shows up."""
    gc.collect()
    before = rss_mb()
    kept = [xp.ones((16,)) * 2.0 for _ in range(20_000)]
    assert rss_mb() - before > 2.0
    del kept


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
