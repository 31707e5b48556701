"""Pooling against PyTorch: max and average pooling (1-D and 2-D, stride, padding, dilation,
ceil_mode, count_include_pad, divisor_override, return_indices), adaptive pooling, the layers,
NaN handling, meta runs, second derivatives and error messages."""

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import strided as xp
import strided.nn as nn
import strided.nn.functional as F

from .test_conv import _check, _rand

MAX2D = [
    dict(kernel_size=2),
    dict(kernel_size=3, stride=2, padding=1),
    dict(kernel_size=3, stride=2, padding=1, ceil_mode=True),
    dict(kernel_size=(2, 3), stride=(1, 2), dilation=(2, 1), padding=(1, 1)),
    dict(kernel_size=2, stride=3, ceil_mode=True),
    dict(kernel_size=(3, 1), stride=1),
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("kw", MAX2D)
def test_max_pool2d_matches_torch(kw, dtype):
    _check(
        lambda x: F.max_pool2d(x, **kw),
        lambda x: TF.max_pool2d(x, **kw),
        [_rand((2, 3, 7, 8))],
        dtype,
    )


@pytest.mark.parametrize("kw", MAX2D[:4])
def test_max_pool2d_indices_match_torch(kw):
    a = _rand((2, 3, 7, 8))
    ys, idx = F.max_pool2d(xp.asarray(a), return_indices=True, **kw)
    yt, tidx = TF.max_pool2d(torch.tensor(a), return_indices=True, **kw)
    assert idx.dtype == xp.int64
    np.testing.assert_array_equal(np.asarray(idx), tidx.numpy())
    np.testing.assert_array_equal(np.asarray(ys), yt.numpy())


def test_max_pool_non_contiguous_and_unbatched():
    kw = dict(kernel_size=3, stride=2, padding=1)
    _check(
        lambda x: F.max_pool2d(x, **kw),
        lambda x: TF.max_pool2d(x, **kw),
        [_rand((2, 3, 7, 8))],
        layouts=["transposed"],
    )
    _check(lambda x: F.max_pool2d(x, **kw), lambda x: TF.max_pool2d(x, **kw), [_rand((3, 7, 8))])


def test_max_pool_large_batch_parallel_kernels():
    kw = dict(kernel_size=2)
    _check(
        lambda x: F.max_pool2d(x, **kw),
        lambda x: TF.max_pool2d(x, **kw),
        [_rand((8, 16, 32, 32))],
        np.float32,
    )


def test_max_pool_nan_and_inf():
    a = np.array([[[[1.0, np.nan, 3.0, 0.0], [-np.inf, -np.inf, 2.0, 5.0]]]])
    ys, idx = F.max_pool2d(xp.asarray(a), 2, return_indices=True)
    yt, tidx = TF.max_pool2d(torch.tensor(a), 2, return_indices=True)
    np.testing.assert_array_equal(np.asarray(ys), yt.numpy())
    np.testing.assert_array_equal(np.asarray(idx), tidx.numpy())
    b = np.full((1, 1, 2, 2), -np.inf)
    ys, idx = F.max_pool2d(xp.asarray(b), 2, return_indices=True)
    yt, tidx = TF.max_pool2d(torch.tensor(b), 2, return_indices=True)
    np.testing.assert_array_equal(np.asarray(idx), tidx.numpy())


@pytest.mark.parametrize(
    "kw",
    [
        dict(kernel_size=2),
        dict(kernel_size=3, stride=2, padding=1, dilation=2),
        dict(kernel_size=4, stride=3, padding=2, ceil_mode=True),
    ],
)
def test_max_pool1d_matches_torch(kw):
    _check(lambda x: F.max_pool1d(x, **kw), lambda x: TF.max_pool1d(x, **kw), [_rand((2, 3, 11))])
    a = _rand((2, 3, 11))
    _, idx = F.max_pool1d(xp.asarray(a), return_indices=True, **kw)
    _, tidx = TF.max_pool1d(torch.tensor(a), return_indices=True, **kw)
    np.testing.assert_array_equal(np.asarray(idx), tidx.numpy())


AVG2D = [
    dict(kernel_size=2),
    dict(kernel_size=3, stride=2, padding=1),
    dict(kernel_size=3, stride=2, padding=1, count_include_pad=False),
    dict(kernel_size=3, stride=2, padding=1, ceil_mode=True),
    dict(kernel_size=3, stride=2, padding=1, ceil_mode=True, count_include_pad=False),
    dict(kernel_size=(2, 3), stride=(3, 1), padding=(1, 1), ceil_mode=True, divisor_override=4),
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("kw", AVG2D)
def test_avg_pool2d_matches_torch(kw, dtype):
    _check(
        lambda x: F.avg_pool2d(x, **kw),
        lambda x: TF.avg_pool2d(x, **kw),
        [_rand((2, 3, 7, 8))],
        dtype,
        layouts=["strided"],
    )


@pytest.mark.parametrize(
    "kw", [dict(kernel_size=3), dict(kernel_size=4, stride=2, padding=2, ceil_mode=True,
                                     count_include_pad=False)]
)  # fmt: skip
def test_avg_pool1d_matches_torch(kw):
    _check(lambda x: F.avg_pool1d(x, **kw), lambda x: TF.avg_pool1d(x, **kw), [_rand((2, 3, 11))])


@pytest.mark.parametrize("size", [(2, 4), (3, 5), 1, (None, 3), (9, 10)])
def test_adaptive_avg_pool2d_matches_torch(size):
    _check(
        lambda x: F.adaptive_avg_pool2d(x, size),
        lambda x: TF.adaptive_avg_pool2d(x, size),
        [_rand((2, 3, 8, 7))],
    )


def test_adaptive_pool_1d_and_max_match_torch():
    _check(
        lambda x: F.adaptive_avg_pool1d(x, 4),
        lambda x: TF.adaptive_avg_pool1d(x, 4),
        [_rand((2, 3, 9))],
    )
    _check(
        lambda x: F.adaptive_max_pool2d(x, (2, 4)),
        lambda x: TF.adaptive_max_pool2d(x, (2, 4)),
        [_rand((2, 3, 8, 8))],
    )


def test_pooling_second_derivatives():
    x = xp.asarray(_rand((1, 2, 5, 6)), requires_grad=True)
    assert xp.autograd.gradgradcheck(lambda x: F.max_pool2d(x, 2, 1) * 1.5, (x,))
    assert xp.autograd.gradgradcheck(lambda x: F.avg_pool2d(x, 3, 2, 1, ceil_mode=True), (x,))


@pytest.mark.parametrize(
    "name,args,kwargs,xshape",
    [
        ("MaxPool2d", (3,), dict(stride=2, padding=1, ceil_mode=True), (2, 3, 9, 8)),
        ("MaxPool1d", (2,), {}, (2, 3, 9)),
        ("AvgPool2d", (3,), dict(stride=2, padding=1, count_include_pad=False), (2, 3, 9, 8)),
        ("AvgPool1d", (3,), dict(stride=2), (2, 3, 9)),
        ("AdaptiveAvgPool2d", ((3, 2),), {}, (2, 3, 9, 8)),
        ("AdaptiveAvgPool1d", (4,), {}, (2, 3, 9)),
    ],
)
def test_pooling_layers_match_torch(name, args, kwargs, xshape):
    sm, tm = getattr(nn, name)(*args, **kwargs), getattr(torch.nn, name)(*args, **kwargs)
    _check(sm, tm, [_rand(xshape, np.float32)], np.float32)
    assert repr(sm) == repr(tm)


def test_max_pool_layer_return_indices():
    a = _rand((1, 2, 6, 6))
    ys, idx = nn.MaxPool2d(2, return_indices=True)(xp.asarray(a))
    yt, tidx = torch.nn.MaxPool2d(2, return_indices=True)(torch.tensor(a))
    np.testing.assert_array_equal(np.asarray(idx), tidx.numpy())


@pytest.mark.parametrize(
    "fn",
    [
        lambda x: F.max_pool2d(x, 3, 2, 1, ceil_mode=True),
        lambda x: F.max_pool2d(x, 2, return_indices=True)[1],
        lambda x: F.avg_pool2d(x, 3, 2, 1),
        lambda x: F.max_pool1d(x[:, :, 0], 2),
        lambda x: F.adaptive_avg_pool2d(x, (3, 2)),
    ],
)
def test_pooling_on_meta_matches_cpu(fn):
    x = xp.asarray(_rand((2, 3, 7, 8)), requires_grad=True)
    xm = xp.empty((2, 3, 7, 8), device="meta")
    xm.requires_grad_()
    y, ym = fn(x), fn(xm)
    assert (ym.shape, ym.dtype, ym.device.type) == (y.shape, y.dtype, "meta")
    if y.dtype == xp.float64:
        xp.sum(ym).backward()
        assert (xm.grad.shape, xm.grad.device.type) == (x.shape, "meta")


def test_pooling_errors_name_the_layer_and_shapes():
    x = xp.zeros((1, 2, 3, 3))
    with pytest.raises(RuntimeError, match=r"MaxPool2d\(kernel_size=4.*\(1, 2, 3, 3\).*too small"):
        nn.MaxPool2d(4)(x)
    with pytest.raises(RuntimeError, match="max_pool2d: pad should be at most half"):
        F.max_pool2d(x, 2, padding=2)
    with pytest.raises(RuntimeError, match="avg_pool2d: pad should be at most half"):
        F.avg_pool2d(x, 2, padding=2)
    with pytest.raises(ValueError, match=r"avg_pool1d: expected a 2-D \(unbatched\) or 3-D"):
        F.avg_pool1d(x, 2)
    with pytest.raises(TypeError, match="max_pool2d.*real floating"):
        F.max_pool2d(xp.zeros((1, 2, 3, 3), dtype=xp.int32), 2)
    with pytest.raises(RuntimeError, match="divisor must be not zero"):
        F.avg_pool2d(x, 2, divisor_override=0)
