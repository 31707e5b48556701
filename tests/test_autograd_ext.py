"""Autograd extension points and the as_strided backward: ``strided.autograd.Function``,
``register_hook``, ``retain_grad``, per-thread grad mode, and as_strided over overlapping
windows.  PyTorch (where installed) is the oracle; every test also asserts values of its own."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import strided as xp
from strided._ops.manipulation import as_strided
from strided.autograd import (
    grad,
    gradcheck,
    gradgradcheck,
    is_grad_enabled,
    no_grad,
    set_grad_enabled,
)
from strided.autograd._rules import _windows_disjoint

try:
    import torch
except ImportError:  # the optional 'torch' extra
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="PyTorch (optional) is not installed")

RNG = np.random.default_rng(99)


def leaf(host):
    return xp.asarray(np.asarray(host, dtype=np.float64), requires_grad=True)


def close(a, b, rtol=1e-12, atol=1e-12):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=rtol, atol=atol)


# -- as_strided backward ---------------------------------------------------------------------------
# (input shape, window shape, window strides, offset): sliding windows that overlap, and not
WINDOWS = {
    "1d_overlapping_pairs": ((5,), (4, 2), (1, 1), 0),
    "1d_overlapping_triples_offset": ((8,), (3, 3), (2, 1), 1),
    "1d_disjoint_with_gaps": ((6,), (2, 2), (3, 1), 0),
    "1d_broadcast_stride0": ((4,), (3, 2), (0, 1), 1),
    "1d_negative_stride_overlapping": ((4,), (3, 2), (-1, 1), 2),
    "2d_sliding_3x3_patches": ((4, 5), (2, 3, 3, 3), (5, 1, 5, 1), 0),
    "2d_strided_2x2_patches_overlapping": ((5, 5), (2, 2, 3, 3), (10, 2, 5, 1), 0),
    "2d_disjoint_2x2_blocks": ((4, 4), (2, 2, 2, 2), (8, 2, 4, 1), 0),
    "2d_disjoint_unprovable": ((2, 6), (2, 3), (4, 3), 0),  # offsets 0 3 6 4 7 10
}


def _window_counts(n, shape, strides, offset):
    """How many window positions read each element (the gradient of the window's sum)."""
    counts = np.zeros(n)
    for idx in np.ndindex(*shape):
        counts[offset + sum(i * s for i, s in zip(idx, strides))] += 1
    return counts


@pytest.mark.parametrize("name", sorted(WINDOWS))
def test_as_strided_gradient_accumulates_over_every_window(name):
    in_shape, shape, strides, offset = WINDOWS[name]
    x = leaf(RNG.standard_normal(in_shape))
    xp.sum(as_strided(x, shape, strides, offset)).backward()
    n = int(np.prod(in_shape))
    close(x.grad, _window_counts(n, shape, strides, offset).reshape(in_shape))


def test_as_strided_overlapping_pairs_example_from_the_issue():
    x = xp.arange(5.0, dtype=xp.float64).requires_grad_()
    xp.sum(as_strided(x, (4, 2), (1, 1), 0)).backward()
    close(x.grad, [1.0, 2.0, 2.0, 2.0, 1.0])


@pytest.mark.parametrize("name", sorted(WINDOWS))
def test_as_strided_gradcheck_and_gradgradcheck(name):
    in_shape, shape, strides, offset = WINDOWS[name]
    x = leaf(RNG.standard_normal(in_shape))
    w = xp.asarray(RNG.standard_normal(shape))
    assert gradcheck(lambda a: as_strided(a, shape, strides, offset) * w, [x])
    # squared: the first-order gradient depends on x, so its own backward (the accumulation)
    # is differentiated by gradgradcheck
    assert gradgradcheck(lambda a: as_strided(a, shape, strides, offset) ** 2 * w, [x])


def test_as_strided_gradcheck_on_a_transposed_input():
    # as_strided reads the input's elements in C order, whatever its layout
    x = xp.asarray(RNG.standard_normal((5, 4))).mT.requires_grad_()
    assert not x.is_contiguous()
    assert gradcheck(lambda a: as_strided(a, (3, 2, 2, 2), (4, 1, 4, 1), 1) ** 2, [x])


def test_as_strided_backward_is_recorded_under_create_graph():
    x = leaf([0.5, -1.0, 2.0, 3.0, 1.5])
    (g,) = grad(xp.sum(as_strided(x, (4, 2), (1, 1), 0) ** 2), x, create_graph=True)
    assert g.requires_grad
    close(g, 2 * np.array([1, 2, 2, 2, 1]) * np.asarray(x.detach()))
    (h,) = grad(xp.sum(g), x)
    close(h, 2 * np.array([1, 2, 2, 2, 1]))


@needs_torch
@pytest.mark.parametrize("name", sorted(WINDOWS))
def test_as_strided_gradients_agree_with_pytorch(name):
    in_shape, shape, strides, offset = WINDOWS[name]
    if any(s < 0 for s in strides):
        pytest.skip("torch.as_strided takes no negative strides")
    host = RNG.standard_normal(in_shape)
    weights = RNG.standard_normal(shape)
    x = leaf(host)
    t = torch.tensor(host, requires_grad=True)
    xp.sum(as_strided(x, shape, strides, offset) ** 2 * xp.asarray(weights)).backward()
    (torch.as_strided(t, shape, strides, offset) ** 2 * torch.tensor(weights)).sum().backward()
    close(x.grad, t.grad.numpy())


def test_as_strided_backward_on_meta():
    x = xp.ones((64, 64), device="meta", dtype=xp.float32, requires_grad=True)
    windows = as_strided(x, (62, 62, 3, 3), (64, 1, 64, 1), 0)  # overlapping 3x3 patches
    (g,) = grad(xp.sum(windows * windows), x, create_graph=True)
    assert g.shape == (64, 64) and g.dtype == xp.float32 and g.device == xp.Device("meta")
    assert g.requires_grad
    (h,) = grad(xp.sum(g), x)
    assert h.shape == (64, 64) and h.device == xp.Device("meta")


def test_window_disjointness_test():
    assert _windows_disjoint((4, 2), (2, 1))
    assert _windows_disjoint((2, 2, 2, 2), (8, 2, 4, 1))
    assert _windows_disjoint((3, 0), (0, 0))  # nothing is read
    assert _windows_disjoint((1, 5), (0, 1))
    assert not _windows_disjoint((4, 2), (1, 1))
    assert not _windows_disjoint((3,), (0,))
    assert not _windows_disjoint((3, 2), (-1, 1))


# -- grad mode per thread --------------------------------------------------------------------------
def _in_thread(fn):
    """Run ``fn`` in a new thread; return what it returned (or raise what it raised)."""
    box = {}

    def target():
        try:
            box["value"] = fn()
        except BaseException as e:  # re-raised in the calling thread
            box["error"] = e

    t = threading.Thread(target=target)
    t.start()
    t.join(30)
    assert not t.is_alive()
    if "error" in box:
        raise box["error"]
    return box["value"]


def test_no_grad_in_one_thread_leaves_other_threads_recording():
    x = leaf([1.0, 2.0])
    entered, release = threading.Event(), threading.Event()
    seen = {}

    def worker():
        with no_grad():
            entered.set()
            assert release.wait(30)
            seen["worker_enabled"] = is_grad_enabled()
            seen["worker_recorded"] = (x * 2).requires_grad

    t = threading.Thread(target=worker)
    t.start()
    try:
        assert entered.wait(30)
        # the worker is inside no_grad() right now; this thread still records
        enabled_here = is_grad_enabled()
        y = x * 3
    finally:
        release.set()
        t.join(30)
    assert enabled_here
    assert y.requires_grad and y.grad_fn is not None
    assert seen == {"worker_enabled": False, "worker_recorded": False}
    assert is_grad_enabled()


def test_new_threads_start_with_grad_mode_on_and_switches_stay_in_their_thread():
    x = leaf([1.0, 2.0])
    with no_grad():
        assert not is_grad_enabled()
        assert _in_thread(lambda: (is_grad_enabled(), (x * 2).requires_grad)) == (True, True)
        assert not (x * 2).requires_grad
    set_grad_enabled(False)  # the plain-call form switches this thread only
    try:
        assert _in_thread(is_grad_enabled)
        assert not is_grad_enabled()
    finally:
        set_grad_enabled(True)
    assert is_grad_enabled()


def test_backward_with_create_graph_in_a_thread_leaves_this_threads_mode_alone():
    x = leaf([1.0, 2.0, 3.0])
    y = xp.sum(x**3)

    def second_derivative():
        (g,) = grad(y, x, create_graph=True)
        return grad(xp.sum(g), x)[0]

    with no_grad():
        h = _in_thread(second_derivative)  # the engine turns recording on in its own thread
        assert not is_grad_enabled()
    close(h, 6 * np.array([1.0, 2.0, 3.0]))


def test_threads_record_and_differentiate_concurrently():
    def work(seed):
        rng = np.random.default_rng(seed)
        host = rng.standard_normal(50)
        a = leaf(host)
        for i in range(20):
            if i % 2:
                with no_grad():
                    a.grad = None
            xp.sum(xp.sin(a) * a).backward()
        return host, np.asarray(a.grad)

    results = []
    threads = [threading.Thread(target=lambda s=s: results.append(work(s))) for s in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert len(results) == 4
    for host, g in results:
        # the last backward ran after a reset (i = 19 is odd), so .grad holds one gradient
        close(g, np.cos(host) * host + np.sin(host))
