"""Autograd extension points and the as_strided backward: ``strided.autograd.Function``,
``register_hook``, ``retain_grad``, per-thread grad mode, and as_strided over overlapping
windows.  PyTorch (where installed) is the oracle; every test also asserts values of its own."""

from __future__ import annotations

import numpy as np
import pytest

import strided as xp
from strided._ops.manipulation import as_strided
from strided.autograd import grad, gradcheck, gradgradcheck
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
