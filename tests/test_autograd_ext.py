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
    Function,
    grad,
    gradcheck,
    gradgradcheck,
    is_grad_enabled,
    no_grad,
    once_differentiable,
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
@pytest.mark.parametrize(
    # torch.as_strided takes no negative strides: those windows are checked by gradcheck above
    "name",
    sorted(n for n, (_, _, strides, _) in WINDOWS.items() if all(s >= 0 for s in strides)),
)
def test_as_strided_gradients_agree_with_pytorch(name):
    in_shape, shape, strides, offset = WINDOWS[name]
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


# -- autograd.Function --------------------------------------------------------------------------
class Exp(Function):
    @staticmethod
    def forward(ctx, x):
        y = xp.exp(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return g * y


class Cube(Function):
    """x**3 with a scale that is not an array and a keyword flag: both pass through."""

    @staticmethod
    def forward(ctx, x, scale, *, negate=False):
        ctx.save_for_backward(x)
        ctx.scale = scale * (-1 if negate else 1)
        return ctx.scale * x * x * x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * 3 * ctx.scale * x * x, None


class LinearTanh(Function):
    """Two outputs: z = x @ w.T + b and a = tanh(z)."""

    @staticmethod
    def forward(ctx, x, w, b):
        z = x @ w.mT + b
        a = xp.tanh(z)
        ctx.save_for_backward(x, w, a)
        return z, a

    @staticmethod
    def backward(ctx, gz, ga):
        x, w, a = ctx.saved_tensors
        gz = gz + ga * (1 - a * a)
        gx = gz @ w if ctx.needs_input_grad[0] else None
        gw = gz.mT @ x if ctx.needs_input_grad[1] else None
        gb = xp.sum(gz, axis=0) if ctx.needs_input_grad[2] else None
        return gx, gw, gb


def _torch_functions():
    class TExp(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            y = torch.exp(x)
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, g):
            (y,) = ctx.saved_tensors
            return g * y

    class TLinearTanh(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, w, b):
            z = x @ w.mT + b
            a = torch.tanh(z)
            ctx.save_for_backward(x, w, a)
            return z, a

        @staticmethod
        def backward(ctx, gz, ga):
            x, w, a = ctx.saved_tensors
            gz = gz + ga * (1 - a * a)
            return gz @ w, gz.mT @ x, gz.sum(0)

    return TExp, TLinearTanh


def test_function_exp_values_gradients_and_node():
    host = RNG.standard_normal(5)
    x = leaf(host)
    y = Exp.apply(x)
    assert y.requires_grad and not y.is_leaf
    assert "ExpBackward" in repr(y.grad_fn)
    close(y, np.exp(host))
    xp.sum(y * y).backward()
    close(x.grad, 2 * np.exp(2 * host))


def test_function_gradcheck_and_gradgradcheck():
    x = leaf(RNG.standard_normal((2, 3)))
    assert gradcheck(Exp.apply, [x])
    assert gradgradcheck(Exp.apply, [x])
    assert gradcheck(lambda a: Cube.apply(a, 0.5, negate=True), [x])
    assert gradgradcheck(lambda a: Cube.apply(a, 0.5), [x])
    w = leaf(RNG.standard_normal((4, 3)))
    b = leaf(RNG.standard_normal(4))
    assert gradcheck(LinearTanh.apply, [x, w, b])
    assert gradgradcheck(LinearTanh.apply, [x, w, b])


def test_function_double_backward_through_a_differentiable_backward():
    x = leaf([0.5, -1.0, 2.0])
    (g,) = grad(xp.sum(Cube.apply(x, 2.0)), x, create_graph=True)
    assert g.requires_grad
    close(g, 6 * np.array([0.25, 1.0, 4.0]))
    (h,) = grad(xp.sum(g), x)
    close(h, 12 * np.array([0.5, -1.0, 2.0]))


@needs_torch
def test_function_agrees_with_torch_autograd_function():
    TExp, TLinearTanh = _torch_functions()
    hx, hw, hb = RNG.standard_normal((3, 2)), RNG.standard_normal((4, 2)), RNG.standard_normal(4)
    gz, ga = RNG.standard_normal((3, 4)), RNG.standard_normal((3, 4))
    ours = [leaf(h) for h in (hx, hw, hb)]
    theirs = [torch.tensor(h, requires_grad=True) for h in (hx, hw, hb)]
    z, a = LinearTanh.apply(*ours)
    tz, ta = TLinearTanh.apply(*theirs)
    close(z, tz.detach().numpy())
    close(a, ta.detach().numpy())
    loss = xp.sum(Exp.apply(z) * xp.asarray(gz)) + xp.sum(a * xp.asarray(ga))
    tloss = (TExp.apply(tz) * torch.tensor(gz)).sum() + (ta * torch.tensor(ga)).sum()
    loss.backward()
    tloss.backward()
    for o, t in zip(ours, theirs):
        close(o.grad, t.grad.numpy())
    # one output unused: backward gets zeros for it, in both
    for o, t in zip(ours, theirs):
        o.grad, t.grad = None, None
    xp.sum(LinearTanh.apply(*ours)[1]).backward()
    TLinearTanh.apply(*theirs)[1].sum().backward()
    for o, t in zip(ours, theirs):
        close(o.grad, t.grad.numpy())


def test_function_needs_input_grad_and_none_gradients():
    x = leaf(RNG.standard_normal((3, 2)))
    w = xp.asarray(RNG.standard_normal((4, 2)))  # a constant
    b = leaf(RNG.standard_normal(4))
    seen = {}

    class Probe(LinearTanh):
        @staticmethod
        def backward(ctx, gz, ga):
            seen["needs"] = ctx.needs_input_grad
            return LinearTanh.backward(ctx, gz, ga)

    z, a = Probe.apply(x, w, b)
    xp.sum(z + a).backward()
    assert seen["needs"] == (True, False, True)
    assert w.grad is None and x.grad is not None and b.grad is not None
    assert Probe.apply(x, w, b)[0].requires_grad
    # non-array arguments count as not needing a gradient
    ctxs = []

    class Keep(Function):
        @staticmethod
        def forward(ctx, x, n):
            ctxs.append(ctx)
            return x * n

        @staticmethod
        def backward(ctx, g):
            return g * 2, None

    Keep.apply(x, 2)
    assert ctxs[-1].needs_input_grad == (True, False)


def test_function_forward_runs_without_recording():
    inside = {}

    class Spy(Function):
        @staticmethod
        def forward(ctx, x):
            inside["enabled"] = is_grad_enabled()
            t = x * 2
            inside["tracked"] = t.requires_grad
            return t + 1

        @staticmethod
        def backward(ctx, g):
            return g * 2

    x = leaf([1.0, 2.0])
    y = Spy.apply(x)
    assert inside == {"enabled": False, "tracked": False}
    assert is_grad_enabled() and y.requires_grad
    with no_grad():
        assert not Spy.apply(x).requires_grad
    assert not Spy.apply(xp.asarray([1.0])).requires_grad  # no input requires grad


def test_function_mark_non_differentiable_integer_outputs_and_materialized_grads():
    seen = {}

    class SortWithIndex(Function):
        @staticmethod
        def forward(ctx, x):
            order = xp.argsort(x)
            ranks = xp.astype(order, xp.float64)
            ctx.mark_non_differentiable(ranks)
            ctx.save_for_backward(order)
            return xp.take(x, order), order, ranks

        @staticmethod
        def backward(ctx, g, g_order, g_ranks):
            seen["g_ranks"] = np.asarray(g_ranks)
            seen["g_order"] = g_order
            (order,) = ctx.saved_tensors
            return _scatter(g, order)

    def _scatter(g, order):
        return xp.take(g, xp.argsort(order))

    x = leaf([3.0, 1.0, 2.0])
    s, order, ranks = SortWithIndex.apply(x)
    assert s.requires_grad
    assert not order.requires_grad and not ranks.requires_grad  # int64, and marked
    xp.sum(s * xp.asarray([1.0, 10.0, 100.0])).backward()
    close(x.grad, [100.0, 1.0, 10.0])
    close(seen["g_ranks"], [0.0, 0.0, 0.0])  # materialized as zeros
    assert seen["g_order"].dtype == xp.int64

    class NoMaterialize(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(False)
            return x * 2, x * 3

        @staticmethod
        def backward(ctx, g1, g2):
            seen["g2"] = g2
            return g1 * 2

    a, _ = NoMaterialize.apply(x)
    xp.sum(a).backward()
    assert seen["g2"] is None


def test_function_saved_tensors_are_version_checked_and_released():
    x = leaf([1.0, 2.0])
    t = x * 1
    y = xp.sum(Exp.apply(t))
    u = t * 1
    z = xp.sum(Cube.apply(u, 1.0))
    with no_grad():
        u[0] = 5.0  # changes an array Cube saved
    with pytest.raises(RuntimeError, match="modified in place"):
        z.backward()
    y.backward(retain_graph=True)
    y.backward()  # retained once: a second pass works
    close(x.grad, 2 * np.exp([1.0, 2.0]))
    with pytest.raises(RuntimeError, match="second time"):
        y.backward()


def test_function_saved_arrays_are_freed_by_backward():
    import gc
    import weakref

    x = leaf([1.0, 2.0])
    y = Exp.apply(x * 1)  # saves its own output: y -> node -> saved y until backward
    probe = weakref.ref(y)
    loss = xp.sum(y)
    del y
    gc.collect()
    assert probe() is not None  # kept for backward
    gc.disable()  # released by reference counting alone: no cycle through ctx keeps it
    try:
        loss.backward()
        assert probe() is None
    finally:
        gc.enable()


def test_function_returning_an_input_and_views_of_inputs():
    class Identity(Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 3

    class Head(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.n = x.shape[0]
            return x[:2]

        @staticmethod
        def backward(ctx, g):
            return xp.concat([g, xp.zeros((ctx.n - 2,), dtype=g.dtype)])

    x = leaf([1.0, 2.0, 3.0])
    y = Identity.apply(x)
    assert y is not x and x.is_leaf and not y.is_leaf
    h = Head.apply(x)
    close(h, [1.0, 2.0])
    xp.sum(y).backward()
    xp.sum(h * 10).backward()
    close(x.grad, [13.0, 13.0, 3.0])


def test_function_setup_context_style():
    class Square(Function):
        @staticmethod
        def forward(x):
            return x * x

        @staticmethod
        def setup_context(ctx, inputs, output):
            (x,) = inputs
            ctx.save_for_backward(x)

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 2 * g * x

    x = leaf([1.0, -2.0, 0.5])
    assert gradcheck(Square.apply, [x])
    xp.sum(Square.apply(x)).backward()
    close(x.grad, [2.0, -4.0, 1.0])


def test_function_once_differentiable_records_nothing():
    class ExpOnce(Exp):
        @staticmethod
        @once_differentiable
        def backward(ctx, g):
            (y,) = ctx.saved_tensors
            assert not is_grad_enabled()
            return g * y

    x = leaf([0.0, 1.0])
    (g,) = grad(xp.sum(ExpOnce.apply(x)), x, create_graph=True)
    close(g, np.exp([0.0, 1.0]))
    assert not g.requires_grad


def test_function_errors_like_pytorch():
    x = leaf([1.0, 2.0])

    def make(backward_result):
        class Bad(Function):
            @staticmethod
            def forward(ctx, x, n):
                return x * n

            @staticmethod
            def backward(ctx, g):
                return backward_result(g)

        return Bad

    with pytest.raises(RuntimeError, match="incorrect number of gradients"):
        xp.sum(make(lambda g: g).apply(x, 2)).backward()
    with pytest.raises(RuntimeError, match="not an array"):
        xp.sum(make(lambda g: (g, g)).apply(x, 2)).backward()
    with pytest.raises(RuntimeError, match="invalid gradient at index 0"):
        xp.sum(make(lambda g: (xp.sum(g) * xp.ones((3,)), None)).apply(x, 2)).backward()
    # extra trailing Nones are accepted, as in PyTorch; a broadcastable gradient is summed
    xp.sum(make(lambda g: (xp.ones((3, 2)), None, None)).apply(x, 2)).backward()
    close(x.grad, [3.0, 3.0])
    with pytest.raises(TypeError, match="apply"):
        Exp()
    with pytest.raises(TypeError, match="save_for_backward"):

        class SavesANumber(Exp):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(3.0)
                return x

        SavesANumber.apply(x)


def test_function_on_meta():
    x = xp.ones((64, 32), device="meta", requires_grad=True)
    w = xp.ones((16, 32), device="meta", requires_grad=True)
    b = xp.ones((16,), device="meta", requires_grad=True)
    z, a = LinearTanh.apply(x, w, b)
    assert z.shape == a.shape == (64, 16) and z.device == xp.Device("meta")
    loss = xp.sum(Exp.apply(a))
    (gx,) = grad(loss, x, create_graph=True)
    assert gx.shape == x.shape and gx.device == xp.Device("meta") and gx.requires_grad
    loss2 = xp.sum(Exp.apply(LinearTanh.apply(x, w, b)[1]))
    loss2.backward()
    for p in (x, w, b):
        assert p.grad.shape == p.shape and p.grad.device == xp.Device("meta")


# -- register_hook and retain_grad --------------------------------------------------------------
def test_hooks_on_leaves_and_non_leaves_see_and_replace_gradients():
    x = leaf([1.0, 2.0, 3.0])
    calls = []
    x.register_hook(lambda g: calls.append(("x", np.asarray(g).copy())))
    x.register_hook(lambda g: g * 10)  # runs second: sees the first hook's result (unchanged)
    y = x * 2
    y.retain_grad()
    y.register_hook(lambda g: g + 1)
    z = y * 1 + x * 3  # x used twice: its hooks see the sum, once
    xp.sum(z).backward()
    close(y.grad, [2.0, 2.0, 2.0])  # retain_grad stores the gradient after the hooks
    close(x.grad, [70.0, 70.0, 70.0])  # (2 * 2 + 3) * 10
    assert len(calls) == 1
    close(calls[0][1], [7.0, 7.0, 7.0])


def test_hook_handles_remove_and_work_as_context_managers():
    x = leaf([1.0, 2.0])
    handle = x.register_hook(lambda g: g * 0)
    handle.remove()
    handle.remove()  # harmless
    with x.register_hook(lambda g: g * 5):
        xp.sum(x * 1).backward()
    close(x.grad, [5.0, 5.0])
    xp.sum(x * 1).backward()
    close(x.grad, [6.0, 6.0])
    y = x * 2
    h = y.register_hook(lambda g: g * 100)
    h.remove()
    x.grad = None
    xp.sum(y).backward()
    close(x.grad, [2.0, 2.0])


def test_hooks_apply_to_autograd_grad_and_to_the_output_itself():
    x = leaf([1.0, 2.0])
    x.register_hook(lambda g: g * 10)
    (g,) = grad(xp.sum(x * 2), x)
    close(g, [20.0, 20.0])
    assert x.grad is None
    y = x * 3
    y.register_hook(lambda g: g * 2)
    (gy,) = grad(xp.sum(y), y)  # a non-leaf captured input: after its hooks
    close(gy, [2.0, 2.0])
    y.backward(xp.asarray([1.0, 1.0]))  # the hook of the output itself runs too
    close(x.grad, [60.0, 60.0])


def test_hooks_are_recorded_under_create_graph():
    x = leaf([1.0, 2.0])
    y = x * x
    y.register_hook(lambda g: g * x)  # a hook written with differentiable operations
    (g,) = grad(xp.sum(y), x, create_graph=True)  # 2 x * x
    close(g, [2.0, 8.0])
    (h,) = grad(xp.sum(g), x)  # d(2 x^2) = 4 x
    close(h, [4.0, 8.0])


def test_hook_errors():
    with pytest.raises(RuntimeError, match="does not require grad"):
        xp.asarray([1.0]).register_hook(lambda g: g)
    x = leaf([1.0, 2.0])
    x.register_hook(lambda g: xp.sum(g))
    with pytest.raises(RuntimeError, match="changed the size"):
        xp.sum(x * 2).backward()
    x = leaf([1.0, 2.0])
    x.register_hook(lambda g: xp.astype(g, xp.float32))
    with pytest.raises(RuntimeError, match="changed the type"):
        xp.sum(x * 2).backward()


def test_hook_result_is_not_aliased_by_dot_grad():
    x = leaf([1.0, 2.0])
    kept = xp.asarray([7.0, 7.0])
    x.register_hook(lambda g: kept)
    xp.sum(x * 2).backward()
    close(x.grad, [7.0, 7.0])
    with no_grad():
        x.grad[0] = 0.0
    close(kept, [7.0, 7.0])


def test_retain_grad_semantics():
    with pytest.raises(RuntimeError, match="does not require grad"):
        xp.asarray([1.0]).retain_grad()
    x = leaf([1.0, 2.0])
    x.retain_grad()  # a no-op on leaves
    assert x.is_leaf and not x.retains_grad
    y = x * 2
    assert not y.retains_grad
    y.retain_grad()
    assert y.retains_grad
    g = xp.asarray([1.0, 1.0])
    y.backward(g, retain_graph=True)
    assert y.grad is not g  # a copy, as PyTorch's clone
    with no_grad():
        g[0] = 5.0
    close(y.grad, [1.0, 1.0])
    y.backward(xp.asarray([1.0, 3.0]))  # accumulates, like a leaf's
    close(y.grad, [2.0, 4.0])
    close(x.grad, [4.0, 8.0])
    z = x * 3
    z.retain_grad()
    (gx,) = grad(xp.sum(z), x)  # autograd.grad leaves every .grad alone
    close(gx, [3.0, 3.0])
    assert z.grad is None
    close(x.grad, [4.0, 8.0])


def test_autograd_grad_runs_only_the_nodes_leading_to_its_inputs():
    x = leaf([1.0, 2.0])
    w = leaf([3.0, 4.0])
    y = xp.nextafter(x, 10.0)  # its backward raises
    z = xp.sum(y * w)
    (gw,) = grad(z, w, retain_graph=False)
    close(gw, np.nextafter([1.0, 2.0], 10.0))
    t = x * 2
    u = xp.sum(t * t)
    (gt,) = grad(u, t)  # t's own node does not run, so it is not released
    close(gt, [4.0, 8.0])
    (gx,) = grad(xp.sum(t * 5), x)
    close(gx, [10.0, 10.0])


def test_inplace_writes_move_retain_grad_and_keep_hooks_on_the_old_contents():
    x = leaf([1.0, 1.0, 1.0])
    y = x * 2
    y.retain_grad()
    seen = []
    y.register_hook(lambda g: seen.append(("before", np.asarray(g).copy())))
    y[:2] = x[:2] * 3  # recorded write: y now has a new history
    y.register_hook(lambda g: seen.append(("after", np.asarray(g).copy())))
    xp.sum(y * 5).backward()
    close(y.grad, [5.0, 5.0, 5.0])  # the gradient of y as it is now
    assert [s[0] for s in seen] == ["after", "before"]
    close(seen[0][1], [5.0, 5.0, 5.0])
    close(seen[1][1], [0.0, 0.0, 5.0])  # the gradient of y's former contents
    close(x.grad, [15.0, 15.0, 10.0])
    # a view of an array written in place gets a new history lazily: its retain_grad moves too
    x = leaf([1.0, 1.0, 1.0, 1.0])
    y = x * 2
    v = y[:2]
    v.retain_grad()
    y[:] = x * 3
    xp.sum(v * 7).backward()
    close(v.grad, [7.0, 7.0])
    close(x.grad, [21.0, 21.0, 0.0, 0.0])


@needs_torch
def test_hooks_and_retain_grad_agree_with_pytorch():
    host = RNG.standard_normal(4)

    def run(m, x):
        log = []
        x.register_hook(lambda g: g * 3)
        y = x * x
        y.retain_grad()
        y.register_hook(lambda g: log.append(g * 1))
        v = y[1:3]
        v.retain_grad()
        h = v.register_hook(lambda g: g + 1)
        w = v * 2
        w.register_hook(lambda g: g * 0.5)
        h.remove()
        loss = (w * w).sum() if m is torch else xp.sum(w * w)
        loss = loss + ((y**3).sum() if m is torch else xp.sum(y**3))
        loss.backward()
        return x.grad, y.grad, v.grad, log[0]

    ours = run(xp, leaf(host))
    theirs = run(torch, torch.tensor(host, requires_grad=True))
    for o, t in zip(ours, theirs):
        close(o, t.detach().numpy())
