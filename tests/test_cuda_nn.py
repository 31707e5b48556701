"""The convolution and pooling primitives on the cuda device without a GPU (host execution of
``kernels/nn.cu`` through the real launch code, ``backends/cuda/_nn.py``), compared with the cpu
backend: forward values and every gradient through ``strided.nn.functional`` and autograd, over
strides, asymmetric and "same" padding, dilation, groups, ceil mode, the average-pooling divisor
rules, NaN in max pooling, non-contiguous inputs, both float dtypes and empty batches."""

from __future__ import annotations

import numpy as np
import pytest

import strided as xp
import strided.nn.functional as F

from .cuda_cases import HOST_EXECUTION_MARKS

pytestmark = [*HOST_EXECUTION_MARKS, pytest.mark.usefixtures("cuda_host")]

TOL = {np.float32: dict(rtol=2e-5, atol=2e-5), np.float64: dict(rtol=1e-12, atol=1e-12)}


def _host(x) -> np.ndarray:
    return np.asarray(x.to_device("cpu"))


def _leaf(a, device, layout):
    x = xp.asarray(a, device=device)
    if a.ndim < 2:
        pass
    elif layout == "transposed":  # the same values stored with the last two axes swapped
        x = xp.matrix_transpose(xp.asarray(np.ascontiguousarray(a.swapaxes(-1, -2)), device=device))
    elif layout == "strided":
        big = np.zeros(a.shape[:-1] + (2 * a.shape[-1],), a.dtype)
        big[..., ::2] = a
        x = xp.asarray(big, device=device)[..., ::2]
    x.requires_grad_()
    return x


def _run(fn, arrays, device, layout, seed=3):
    """fn's result and the gradients of every array for a fixed upstream gradient, as NumPy."""
    leaves = [None if a is None else _leaf(a, device, layout) for a in arrays]
    y = fn(*leaves)
    outs = y if isinstance(y, tuple) else (y,)
    g = np.random.default_rng(seed).standard_normal(outs[0].shape).astype(arrays[0].dtype)
    xp.sum(outs[0] * xp.asarray(g, device=device)).backward()
    host = [(_host(o) if o.dtype != xp.int64 else _host(o)) for o in outs]
    return host, [None if v is None else _host(v.grad) for v in leaves]


def _compare(fn, arrays, layout="contiguous"):
    dtype = arrays[0].dtype.type
    want_y, want_g = _run(fn, arrays, "cpu", layout)
    got_y, got_g = _run(fn, arrays, "cuda", layout)
    for w, g in zip(want_y, got_y):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_allclose(g, w, **TOL[dtype])
    for w, g in zip(want_g, got_g):
        if w is not None:
            np.testing.assert_allclose(g, w, **TOL[dtype])


def _rand(shape, dtype, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


CONV_CASES = [
    # (x shape, w shape, stride, padding, dilation, groups, bias)
    ((2, 3, 7, 6), (4, 3, 3, 3), 1, 0, 1, 1, True),
    ((2, 4, 8, 9), (6, 2, 3, 2), (2, 1), (1, 2), 1, 2, True),
    ((1, 3, 9, 9), (3, 1, 3, 3), 2, 2, (2, 1), 3, False),
    ((3, 2, 5, 5), (5, 2, 2, 2), 1, "same", 1, 1, True),  # even kernel: asymmetric padding
    ((2, 2, 4, 4), (3, 2, 1, 1), 1, 0, 1, 1, False),
    ((0, 3, 5, 5), (2, 3, 3, 3), 1, 1, 1, 1, True),  # an empty batch
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("case", CONV_CASES, ids=lambda c: f"{c[0]}-{c[1]}-g{c[5]}")
@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
def test_conv2d_forward_and_gradients_match_cpu(case, dtype, layout):
    xs, ws, stride, padding, dilation, groups, bias = case
    arrays = [_rand(xs, dtype, 1), _rand(ws, dtype, 2), _rand(ws[:1], dtype, 3) if bias else None]

    def fn(x, w, b):
        return F.conv2d(x, w, b, stride=stride, padding=padding, dilation=dilation, groups=groups)

    _compare(fn, arrays, layout)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_conv_transpose2d_and_fold_unfold_match_cpu(dtype):
    x, w = _rand((2, 4, 5, 6), dtype, 1), _rand((4, 3, 3, 2), dtype, 2)
    _compare(lambda x, w: F.conv_transpose2d(x, w, stride=2, padding=1, groups=1), [x, w])
    a = _rand((2, 3, 6, 7), dtype, 4)
    _compare(lambda a: F.unfold(a, (2, 3), dilation=(1, 2), padding=1, stride=(2, 1)), [a])
    cols = _rand((2, 3 * 2 * 2, 15), dtype, 5)
    _compare(lambda c: F.fold(c, (5, 8), (2, 2), stride=(2, 2), padding=(1, 1)), [cols])


POOL_CASES = [
    # (kernel, stride, padding, dilation, ceil_mode)
    (2, 2, 0, 1, False),
    (3, 2, 1, 1, False),
    (3, (2, 1), (1, 0), (2, 1), True),
    ((2, 3), 1, 0, 1, True),
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("case", POOL_CASES)
@pytest.mark.parametrize("layout", ["contiguous", "strided"])
def test_max_pool2d_values_indices_and_gradient_match_cpu(case, dtype, layout):
    k, s, p, d, ceil = case
    a = _rand((2, 3, 9, 8), dtype, 6)
    a[0, 0, 1, 1] = np.nan  # NaN wins its windows
    a[1, 2, 3:5, 3:5] = 0.5  # ties keep the first position

    def fn(x):
        return F.max_pool2d(x, k, s, p, dilation=d, ceil_mode=ceil, return_indices=True)

    _compare(fn, [a], layout)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("case", POOL_CASES)
@pytest.mark.parametrize("count_include_pad", [True, False])
@pytest.mark.parametrize("divisor", [None, 5])
def test_avg_pool2d_and_gradient_match_cpu(case, dtype, count_include_pad, divisor):
    k, s, p, _, ceil = case
    a = _rand((2, 3, 9, 8), dtype, 7)

    def fn(x):
        return F.avg_pool2d(
            x, k, s, p, ceil_mode=ceil, count_include_pad=count_include_pad,
            divisor_override=divisor,
        )  # fmt: skip

    _compare(fn, [a], "transposed")


def test_a_small_network_trains_the_same_on_cuda_and_cpu():
    """Conv2d + MaxPool2d + AvgPool2d + Linear: three SGD steps give the same weights."""
    import strided.nn as nn
    import strided.optim as optim

    def model_on(device):
        xp.random.manual_seed(0)
        m = nn.Sequential(
            nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(4, 4, 3),
            nn.AvgPool2d(2), nn.Flatten(), nn.Linear(4, 3),
        )  # fmt: skip
        return m.to(device)

    data = _rand((5, 1, 8, 8), np.float32, 9)
    labels = np.array([0, 1, 2, 1, 0])
    params = {}
    for device in ("cpu", "cuda"):
        m = model_on(device)
        opt = optim.SGD(m.parameters(), lr=0.1)
        x = xp.asarray(data, device=device)
        y = xp.asarray(labels, device=device)
        for _ in range(3):
            opt.zero_grad()
            loss = F.cross_entropy(m(x), y)
            loss.backward()
            opt.step()
        params[device] = [_host(p.detach()) for p in m.parameters()]
    for w, g in zip(params["cpu"], params["cuda"]):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("default", ["cpu", "cuda"])
def test_data_loading_of_cuda_tensors_under_either_default_device(default):
    """DataLoader over cuda TensorDatasets (shuffled, with replacement, random_split) gives the
    batches it gives on cpu, whatever the default device: its permutations and draws are host
    lists (with cuda as the default device, randperm used to land on cuda and np.asarray refused
    it: examples/train_digits.py under STRIDED_DEFAULT_DEVICE=cuda failed at its first batch)."""
    from strided.utils.data import DataLoader, RandomSampler, TensorDataset, random_split

    images, labels = np.arange(40.0).reshape(10, 4), np.arange(10) % 3

    def batches(device):
        ds = TensorDataset(xp.asarray(images, device=device), xp.asarray(labels, device=device))
        out = []
        with xp.default_device(default):
            for loader in (
                DataLoader(ds, batch_size=4, shuffle=True, generator=5),
                DataLoader(ds, batch_size=3, sampler=RandomSampler(ds, True, 7, generator=2)),
                DataLoader(random_split(ds, [6, 4], generator=3)[1], batch_size=4),
            ):
                for x, y in loader:
                    assert x.device == y.device == xp.Device(device)
                    out += [_host(x), _host(y)]
        return out

    for got, want in zip(batches("cuda"), batches("cpu"), strict=True):
        np.testing.assert_array_equal(got, want)
