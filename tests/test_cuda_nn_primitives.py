"""The cuda kernels of the convolution and pooling primitives (``backends/cuda/_nn.py``,
``kernels/nn.cu``) on host execution (and on a GPU where there is one), against the cpu backend
(the oracle): every primitive called directly with its own parameters (asymmetric and negative
end padding, dilation, groups, ceil_mode, count_include_pad, divisor_override, NaN, -inf and
ties in max pooling, layouts that are not contiguous, empty batches and channels, float32 and
float64), then whole models through ``strided.nn`` and autograd."""

from __future__ import annotations

import numpy as np
import pytest

import strided as xp
import strided.nn as nn
import strided.nn.functional as F
from strided import _device
from strided._ops import nn_conv as nc

from .cuda_cases import CUDA_INSTALLED, HAVE_CUPY, HAVE_GXX, NO_CUPY

pytestmark = pytest.mark.skipif(not (HAVE_CUPY and CUDA_INSTALLED), reason=NO_CUPY)
HAVE_GPU = HAVE_CUPY and CUDA_INSTALLED and _device._gpu_count() > 0
# host execution everywhere; the real device too where there is one (marked gpu)
RUNTIMES = [
    pytest.param("host", marks=pytest.mark.skipif(not HAVE_GXX, reason="host execution needs "
                                                  "g++ (C++17) on PATH")),
] + ([pytest.param("gpu", marks=pytest.mark.gpu)] if HAVE_GPU else [])  # fmt: skip

TOL = {"float32": dict(rtol=2e-5, atol=2e-5), "float64": dict(rtol=1e-12, atol=1e-12)}
DTYPES = ("float32", "float64")
LAYOUTS = ("contiguous", "strided", "channels_last", "flipped")


@pytest.fixture(autouse=True, params=RUNTIMES)
def cuda_runtime(request):
    from strided.backends.cuda import host_execution

    with host_execution(request.param == "host") as rt:
        yield rt


def _rand(shape, dtype, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def _on(a: np.ndarray, device: str, layout: str = "contiguous"):
    """An array on ``device`` holding the values of ``a`` in the given memory layout."""
    if layout == "strided":  # every second element of a larger buffer along the last axis
        big = np.zeros(a.shape[:-1] + (2 * a.shape[-1],), a.dtype)
        big[..., ::2] = a
        s = xp.asarray(big, device=device)[..., ::2]
    elif layout == "channels_last" and a.ndim == 4:
        s = xp.asarray(np.ascontiguousarray(np.moveaxis(a, 1, -1)), device=device)
        s = xp.permute_dims(s, (0, 3, 1, 2))
    elif layout == "transposed":  # the last two axes stored swapped
        s = xp.asarray(np.ascontiguousarray(a.swapaxes(-1, -2)), device=device)
        s = xp.matrix_transpose(s)
    elif layout == "flipped":  # negative strides on the last two axes
        s = xp.asarray(np.ascontiguousarray(a[..., ::-1, ::-1]), device=device)[..., ::-1, ::-1]
    else:
        s = xp.asarray(a, device=device)
    return s


def _host(x) -> np.ndarray:
    return np.asarray(x.to_device("cpu"))


def _agree(fn, arrays, layouts=None, exact=()):
    """``fn`` of the arrays on cpu and on cuda (in ``layouts``, then contiguous): the same
    results, outputs listed in ``exact`` bit for bit (NaN where cpu has NaN)."""
    layouts = list(layouts or []) + ["contiguous"] * (len(arrays) - len(layouts or []))
    want = fn(*[_on(a, "cpu") for a in arrays])
    got = fn(*[_on(a, "cuda", lay) for a, lay in zip(arrays, layouts)])
    want = want if isinstance(want, tuple) else (want,)
    got = got if isinstance(got, tuple) else (got,)
    assert len(got) == len(want)
    for k, (g, w) in enumerate(zip(got, want)):
        assert g.device.type == "cuda"
        assert (g.shape, g.dtype) == (w.shape, w.dtype), k
        gh, wh = _host(g), np.asarray(w)
        if k in exact or wh.dtype.kind != "f":
            np.testing.assert_array_equal(gh, wh, err_msg=f"output {k}")
        else:
            np.testing.assert_allclose(gh, wh, err_msg=f"output {k}", **TOL[wh.dtype.name])
    return got


# -- convolutions ---------------------------------------------------------------------------------
# (x shape, w shape, stride, padding (top, bottom, left, right), dilation, groups, bias)
CONV_CASES = {
    "3x3-same": ((2, 3, 8, 8), (4, 3, 3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 1, True),
    "asym-dil-groups": ((2, 4, 9, 7), (6, 2, 3, 2), (2, 1), (1, 0, 2, 1), (1, 2), 2, True),
    "depthwise": ((1, 6, 5, 6), (6, 1, 3, 3), (1, 2), (0, 2, 1, 0), (2, 1), 6, False),
    "1x1": ((3, 2, 4, 5), (5, 2, 1, 1), (1, 1), (0, 0, 0, 0), (1, 1), 1, True),
    "even-same": ((2, 3, 6, 6), (4, 3, 2, 2), (1, 1), (0, 1, 0, 1), (1, 1), 1, False),
    "tiles": ((2, 5, 10, 11), (20, 5, 3, 3), (1, 2), (1, 1, 0, 2), (1, 1), 1, True),
    "strided-big": ((2, 4, 13, 12), (6, 2, 4, 3), (3, 2), (2, 1, 1, 1), (1, 2), 2, True),
    "empty-batch": ((0, 3, 5, 5), (4, 3, 3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 1, True),
    "no-channels": ((2, 0, 5, 5), (4, 0, 3, 3), (1, 1), (0, 0, 0, 0), (1, 1), 1, True),
}


def _conv_arrays(case, dtype):
    xs, ws, stride, pad, dil, groups, bias = CONV_CASES[case]
    x, w = _rand(xs, dtype, 1), _rand(ws, dtype, 2)
    b = _rand(ws[:1], dtype, 3) if bias else None
    return x, w, b, stride, pad, dil, groups


def _layout_for(case: str) -> str:
    return LAYOUTS[sorted(CONV_CASES).index(case) % len(LAYOUTS)]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", sorted(CONV_CASES))
def test_conv2d(case, dtype):
    x, w, b, stride, pad, dil, groups = _conv_arrays(case, dtype)
    lay = _layout_for(case)
    if b is None:
        _agree(lambda x, w: nc.conv2d(x, w, stride, pad, dil, groups), [x, w], [lay, "transposed"])
    else:
        _agree(lambda x, w, b: nc.conv2d(x, w, stride, pad, dil, groups, b), [x, w, b],
               [lay, "contiguous", "strided"])  # fmt: skip


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", sorted(CONV_CASES))
def test_conv2d_gradients(case, dtype):
    x, w, _, stride, pad, dil, groups = _conv_arrays(case, dtype)
    y = nc.conv2d(xp.asarray(x), xp.asarray(w), stride, pad, dil, groups)
    g = _rand(y.shape, dtype, 4)
    lay = _layout_for(case)
    _agree(
        lambda g, w: nc.conv2d_input_grad(g, w, x.shape[2:], stride, pad, dil, groups),
        [g, w], [lay, "strided"],
    )  # fmt: skip
    _agree(
        lambda x, g: nc.conv2d_weight_grad(x, g, w.shape[2:], stride, pad, dil, groups),
        [x, g], [lay, "channels_last"],
    )  # fmt: skip


def test_transposed_convolution_with_negative_end_padding():
    """conv_transpose2d with output padding: the input gradient's bottom/right padding is
    negative."""
    for dtype in DTYPES:
        x, w = _rand((2, 4, 5, 4), dtype, 1), _rand((4, 3, 3, 2), dtype, 2)
        b = _rand(6, dtype, 3)
        _agree(
            lambda x, w, b: F.conv_transpose2d(x, w, b, stride=(2, 3), padding=(1, 0),
                                               output_padding=(1, 2), groups=2),
            [x, w, b], ["flipped", "contiguous", "contiguous"],
        )  # fmt: skip


# -- im2col / col2im ------------------------------------------------------------------------------
# (x shape, kernel, dilation, padding (t, b, l, r), stride)
UNFOLD_CASES = [
    ((2, 3, 7, 9), (2, 3), (2, 1), (1, 1, 1, 1), (1, 2)),
    ((1, 2, 6, 5), (3, 3), (1, 1), (0, 2, 1, 0), (2, 1)),
    ((2, 1, 4, 4), (1, 1), (1, 1), (0, 0, 0, 0), (1, 1)),
    ((3, 2, 8, 6), (2, 2), (3, 2), (2, 0, 0, 3), (3, 2)),
    ((0, 2, 5, 5), (2, 2), (1, 1), (0, 0, 0, 0), (1, 1)),
]


@pytest.mark.parametrize("channels_first", [False, True])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("k", range(len(UNFOLD_CASES)))
def test_im2col_and_col2im(k, dtype, channels_first):
    xs, kernel, dil, pad, stride = UNFOLD_CASES[k]
    x = _rand(xs, dtype, k)
    lay = LAYOUTS[k % len(LAYOUTS)]
    (cols,) = _agree(
        lambda x: nc.im2col(x, kernel, dil, pad, stride, channels_first), [x], [lay], exact=(0,)
    )
    c = _host(cols)
    if channels_first:
        c = np.ascontiguousarray(c.transpose(1, 0, 2))
    _agree(lambda c: nc.col2im(c, xs[2:], kernel, dil, pad, stride), [c], [lay])


# -- pooling -------------------------------------------------------------------------------------
# (x shape, kernel, stride, padding, dilation, ceil_mode)
MAX_CASES = [
    ((2, 3, 7, 8), (3, 3), (2, 2), (1, 1), (1, 1), True),
    ((2, 3, 8, 8), (2, 2), (2, 2), (0, 0), (1, 1), False),
    ((1, 2, 9, 10), (3, 2), (2, 3), (1, 1), (2, 3), True),
    ((2, 2, 6, 7), (3, 3), (1, 1), (1, 1), (1, 1), False),
    ((1, 3, 5, 5), (1, 1), (2, 2), (0, 0), (1, 1), True),
    ((2, 1, 11, 9), (4, 3), (3, 2), (2, 1), (2, 2), True),
    ((0, 3, 6, 6), (2, 2), (2, 2), (0, 0), (1, 1), False),
]


def _pool_input(xs, dtype, seed, kind):
    x = _rand(xs, dtype, seed)
    if kind == "ties":  # few distinct values: the first position of a tie wins
        x = np.random.default_rng(seed).integers(0, 3, size=xs).astype(dtype)
    elif kind == "special" and x.size:  # NaN (the last one wins), -inf windows
        flat = x.reshape(-1)
        flat[:: max(1, flat.size // 7)] = np.nan
        flat[1 :: max(1, flat.size // 5)] = np.nan
        x[..., :3, :3] = -np.inf
    return x


@pytest.mark.parametrize("kind", ["normal", "ties", "special"])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("k", range(len(MAX_CASES)))
def test_max_pool2d_and_backward(k, dtype, kind):
    xs, kernel, stride, pad, dil, ceil = MAX_CASES[k]
    x = _pool_input(xs, dtype, k, kind)
    lay = LAYOUTS[(k + DTYPES.index(dtype)) % len(LAYOUTS)]
    values, indices = _agree(
        lambda x: nc.max_pool2d_with_indices(x, kernel, stride, pad, dil, ceil), [x], [lay],
        exact=(0, 1),
    )  # fmt: skip
    g = _rand(values.shape, dtype, 5)
    idx = _host(indices)
    _agree(lambda g, i: nc.max_pool2d_backward(g, i, xs[2:]), [g, idx], [lay, lay])


# (x shape, kernel, stride, padding, ceil_mode, count_include_pad, divisor_override)
AVG_CASES = [
    ((2, 3, 7, 8), (3, 3), (2, 2), (1, 1), True, True, None),
    ((2, 3, 7, 8), (3, 3), (2, 2), (1, 1), True, False, None),
    ((2, 3, 7, 8), (3, 2), (2, 1), (1, 1), True, False, 5),
    ((1, 2, 6, 6), (2, 2), (2, 2), (0, 0), False, True, None),
    ((2, 2, 6, 7), (3, 3), (1, 1), (1, 1), False, False, None),
    ((1, 2, 10, 9), (4, 3), (3, 2), (2, 1), True, True, 7),
    ((0, 3, 6, 6), (2, 2), (2, 2), (0, 0), True, False, None),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("k", range(len(AVG_CASES)))
def test_avg_pool2d_and_backward(k, dtype):
    xs, kernel, stride, pad, ceil, cip, div = AVG_CASES[k]
    x = _rand(xs, dtype, k)
    lay = LAYOUTS[(k + DTYPES.index(dtype)) % len(LAYOUTS)]
    (y,) = _agree(lambda x: nc.avg_pool2d(x, kernel, stride, pad, ceil, cip, div), [x], [lay])
    g = _rand(y.shape, dtype, 5)
    _agree(
        lambda g: nc.avg_pool2d_backward(g, xs[2:], kernel, stride, pad, ceil, cip, div),
        [g], [LAYOUTS[(k + 1) % len(LAYOUTS)]],
    )  # fmt: skip


def test_max_pool_nan_and_first_tie_positions():
    """The rule itself, not only agreement: NaN wins (the last NaN of the window), ties keep
    the first position, padding never wins."""
    a = np.array([[[[1.0, 5.0, 5.0], [np.nan, np.nan, 2.0], [-np.inf, -np.inf, -np.inf]]]])
    x = xp.asarray(a, device="cuda")
    v, i = nc.max_pool2d_with_indices(x, (2, 2), (1, 1), (1, 1), (1, 1), False)
    v, i = _host(v), _host(i)
    assert i[0, 0, 0].tolist() == [0, 1, 1, 2]  # 5 ties 5 in the third window: the first
    assert np.isnan(v[0, 0, 1, 0]) and i[0, 0, 1, 0] == 3
    assert np.isnan(v[0, 0, 1, 1]) and i[0, 0, 1, 1] == 4  # the last NaN of its window
    assert i[0, 0, 3, 0] == 6 and v[0, 0, 3, 0] == -np.inf  # all -inf: the first in the input


# -- through strided.nn and autograd --------------------------------------------------------------
def _model(dtype):
    xp_dtype = getattr(xp, dtype)
    return nn.Sequential(
        nn.Conv2d(3, 8, 3, padding=1, dtype=xp_dtype),
        nn.ReLU(),
        nn.MaxPool2d(2, ceil_mode=True),
        nn.Conv2d(8, 6, 3, stride=2, padding=(1, 0), groups=2, dtype=xp_dtype),
        nn.AvgPool2d(2, stride=1, padding=1, count_include_pad=False),
        nn.Conv2d(6, 4, 2, dilation=2, bias=False, dtype=xp_dtype),
        nn.Flatten(),
    )


@pytest.mark.parametrize("dtype", DTYPES)
def test_model_loss_and_gradients_agree(dtype):
    model = _model(dtype)
    x_np = _rand((3, 3, 11, 10), dtype, 9)
    results = {}
    for dev in ("cpu", "cuda"):
        m = model.to(dev)
        for p in m.parameters():
            p.grad = None
        x = _on(x_np, dev, "channels_last" if dev == "cuda" else "contiguous")
        x.requires_grad_()
        y = m(x)
        target = xp.asarray(np.linspace(-1, 1, y.shape[1] * y.shape[0]).reshape(y.shape),
                            dtype=y.dtype, device=dev)  # fmt: skip
        loss = F.mse_loss(y, target)
        loss.backward()
        results[dev] = (
            float(loss),
            _host(y),
            _host(x.grad),
            [_host(p.grad) for p in m.parameters()],
        )
    (lc, yc, gc, pc), (lg, yg, gg, pg) = results["cpu"], results["cuda"]
    tol = TOL[dtype]
    np.testing.assert_allclose(lg, lc, **tol)
    np.testing.assert_allclose(yg, yc, **tol)
    np.testing.assert_allclose(gg, gc, **tol)
    assert len(pg) == len(pc) == 5
    for a, b in zip(pg, pc):
        np.testing.assert_allclose(a, b, **tol)


def test_functional_pooling_gradients_agree():
    x_np = _pool_input((2, 3, 9, 8), "float64", 3, "ties")
    grads = []
    for dev in ("cpu", "cuda"):
        x = _on(x_np, dev, "flipped" if dev == "cuda" else "contiguous")
        x.requires_grad_()
        y = F.max_pool2d(x, 3, 2, 1, dilation=(1, 2), ceil_mode=True) * 2.0
        z = F.avg_pool2d(x, (3, 2), (1, 2), 1, ceil_mode=True, divisor_override=4)
        u = F.fold(F.unfold(x, (2, 3), padding=(1, 0), stride=(2, 1)), (9, 8), (2, 3),
                   padding=(1, 0), stride=(2, 1))  # fmt: skip
        (xp.sum(y * y) + xp.sum(z) + xp.sum(u * u)).backward()
        grads.append(_host(x.grad))
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-12, atol=1e-12)


def test_rules_reject_bad_input_on_cuda():
    x = xp.asarray(np.zeros((1, 2, 3, 3)), device="cuda")
    with pytest.raises(ValueError, match="too small"):
        nc.max_pool2d_with_indices(x, (5, 5), (1, 1), (0, 0), (1, 1), False)
    with pytest.raises(TypeError, match="real floating"):
        nc.avg_pool2d(xp.astype(x, xp.int32), (2, 2), (1, 1), (0, 0), False, True, None)
    with pytest.raises(ValueError, match="do not match"):
        nc.conv2d(x, xp.asarray(np.zeros((2, 3, 1, 1)), device="cuda"), (1, 1), (0,) * 4,
                  (1, 1), 1)  # fmt: skip
