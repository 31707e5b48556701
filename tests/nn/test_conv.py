"""Convolutions, unfold/fold, pad and interpolate against PyTorch: the same weights and inputs
(contiguous and not), forward values and every gradient (input, weight, bias), float32 and
float64, the layers' parameter shapes and default initialisation, meta runs, second derivatives
and error messages."""

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import strided as xp
import strided.nn as nn
import strided.nn.functional as F

TOL = {np.float32: dict(rtol=1e-4, atol=1e-4), np.float64: dict(rtol=1e-10, atol=1e-10)}


def _rand(shape, dtype=np.float64, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def _leaf(a, layout="contiguous"):
    """A strided leaf requiring grad with the values of ``a`` in the given memory layout."""
    if layout == "transposed":  # the last two axes stored swapped
        s = xp.matrix_transpose(xp.asarray(np.ascontiguousarray(a.swapaxes(-1, -2))))
    elif layout == "strided":  # every second element of a larger buffer
        big = np.zeros(a.shape[:-1] + (2 * a.shape[-1],), a.dtype)
        big[..., ::2] = a
        s = xp.asarray(big)[..., ::2]
    elif layout == "channels_last":
        s = xp.permute_dims(xp.asarray(np.ascontiguousarray(np.moveaxis(a, 1, -1))), (0, 3, 1, 2))
    else:
        s = xp.asarray(a)
    assert np.array_equal(np.asarray(s), a)
    s.requires_grad_()
    return s


def _check(fs, ft, arrays, dtype=np.float64, layouts=None, seed=7, tol=None):
    """Run ``fs`` on strided leaves and ``ft`` on torch leaves (None entries pass through);
    compare the forward values and the gradients of every array for a random upstream
    gradient."""
    layouts = layouts or ["contiguous"] * len(arrays)
    s_args = [None if a is None else _leaf(a.astype(dtype), lay) for a, lay in zip(arrays, layouts)]
    t_args = [
        None if a is None else torch.tensor(a.astype(dtype), requires_grad=True) for a in arrays
    ]
    ys, yt = fs(*s_args), ft(*t_args)
    assert ys.shape == tuple(yt.shape)
    assert ys.dtype == (xp.float32 if dtype == np.float32 else xp.float64)
    tol = tol or TOL[dtype]
    np.testing.assert_allclose(np.asarray(ys), yt.detach().numpy(), **tol)
    g = _rand(tuple(yt.shape), dtype, seed)
    xp.sum(ys * xp.asarray(g)).backward()
    (yt * torch.tensor(g)).sum().backward()
    for i, (s, t) in enumerate(zip(s_args, t_args)):
        if s is None:
            continue
        assert s.grad is not None, f"argument {i} got no gradient"
        np.testing.assert_allclose(
            np.asarray(s.grad), t.grad.numpy(), err_msg=f"gradient of argument {i}", **tol
        )


# -- conv2d ----------------------------------------------------------------------------------------
CONV2D = [
    # x shape, weight shape, bias, kwargs
    ((2, 3, 7, 6), (4, 3, 3, 3), True, {}),
    ((2, 3, 7, 6), (4, 3, 3, 3), True, dict(padding=1)),
    ((2, 3, 7, 6), (4, 3, 3, 2), False, dict(stride=2, padding=(1, 0))),
    ((1, 4, 9, 8), (6, 2, 3, 3), True, dict(stride=(2, 1), padding=2, dilation=(2, 1), groups=2)),
    ((2, 4, 6, 6), (4, 1, 3, 3), True, dict(padding=1, groups=4)),  # depthwise
    ((2, 3, 6, 7), (5, 3, 4, 2), True, dict(padding="same")),  # even kernel: asymmetric padding
    ((2, 3, 6, 7), (5, 3, 3, 3), True, dict(padding="same", dilation=2)),
    ((2, 3, 6, 7), (5, 3, 3, 3), True, dict(padding="valid")),
    ((3, 5, 4, 4), (2, 5, 1, 1), True, {}),  # 1x1
    ((2, 2, 5, 5), (3, 2, 5, 5), True, {}),  # kernel the size of the input
    ((2, 2, 8, 9), (3, 2, 3, 3), True, dict(stride=3, padding=1, dilation=2)),
    # tiny images: the cpu kernels multiply by the matrix of each output row (also 7x6 above)
    ((3, 4, 4, 4), (5, 4, 3, 3), True, dict(padding=1)),
    ((2, 3, 3, 4), (4, 3, 3, 3), True, dict(stride=2, padding=(1, 2))),
    ((2, 2, 4, 4), (3, 2, 3, 3), False, dict(padding=2, dilation=2)),
    ((2, 3, 3, 3), (2, 3, 2, 2), True, dict(padding="same")),
    # 3x3 stride 1 with >= 16 channels: Winograd F(2x2, 3x3) kernels (odd sizes: partial tiles)
    ((2, 16, 7, 9), (16, 16, 3, 3), True, dict(padding=1)),
    ((2, 16, 6, 5), (20, 16, 3, 3), False, dict(padding=(0, 2))),
    ((1, 17, 8, 8), (16, 17, 3, 3), True, {}),
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("xs,ws,bias,kw", CONV2D)
def test_conv2d_matches_torch(xs, ws, bias, kw, dtype):
    arrays = [_rand(xs), _rand(ws, seed=1), _rand((ws[0],), seed=2) if bias else None]
    _check(
        lambda x, w, b: F.conv2d(x, w, b, **kw),
        lambda x, w, b: TF.conv2d(x, w, b, **kw),
        arrays,
        dtype,
    )


@pytest.mark.parametrize("layout", ["transposed", "strided", "channels_last"])
def test_conv2d_non_contiguous_input_and_weight(layout):
    # 12x11: the im2col kernels (test_conv2d_tiny_image_non_contiguous covers the small-image ones)
    arrays = [_rand((2, 3, 12, 11)), _rand((4, 3, 3, 3), seed=1), _rand((4,), seed=2)]
    _check(
        lambda x, w, b: F.conv2d(x, w, b, stride=(1, 2), padding=1),
        lambda x, w, b: TF.conv2d(x, w, b, stride=(1, 2), padding=1),
        arrays,
        layouts=[layout, layout, "contiguous"],
    )


def test_broadcast_inputs():
    # stride-0 layouts (an expanded row, plane or batch): the kernels must not read them as dense
    w = _rand((4, 3, 3, 3), seed=1)
    for shape in [(1, 1, 1, 6), (1, 3, 5, 1), (1, 1, 1, 1)]:
        a = _rand(shape)
        xs = xp.broadcast_to(xp.asarray(a), (2, 3, 5, 6))
        xt = torch.tensor(a).expand(2, 3, 5, 6)
        ys = F.conv2d(xs, xp.asarray(w), padding=1)
        yt = TF.conv2d(xt, torch.tensor(w), padding=1)
        np.testing.assert_allclose(np.asarray(ys), yt.numpy(), **TOL[np.float64])
    c = _rand((1, 12, 1))
    ys = F.fold(xp.broadcast_to(xp.asarray(c), (2, 12, 20)), (5, 6), 2)
    yt = TF.fold(torch.tensor(c).expand(2, 12, 20), (5, 6), 2)
    np.testing.assert_allclose(np.asarray(ys), yt.numpy(), **TOL[np.float64])


def test_conv2d_unbatched_input():
    arrays = [_rand((3, 6, 5)), _rand((4, 3, 3, 3), seed=1), _rand((4,), seed=2)]
    _check(
        lambda x, w, b: F.conv2d(x, w, b, padding=1),
        lambda x, w, b: TF.conv2d(x, w, b, padding=1),
        arrays,
    )


def test_conv2d_chain_with_parallel_kernels():
    # large enough for the multi-threaded kernels (and a strided view between the layers)
    arrays = [
        _rand((8, 3, 20, 20)),
        _rand((16, 3, 3, 3), seed=1),
        _rand((16,), seed=2),
        _rand((8, 16, 3, 3), seed=3),
    ]

    def fs(x, w1, b1, w2):
        return F.conv2d(xp.maximum(F.conv2d(x, w1, b1, padding=1), 0.0), w2, stride=2)

    def ft(x, w1, b1, w2):
        return TF.conv2d(torch.relu(TF.conv2d(x, w1, b1, padding=1)), w2, stride=2)

    _check(fs, ft, arrays, np.float32)


@pytest.mark.parametrize("threads", [1, 2])
def test_conv2d_large(threads):
    # 32x288x1024 multiply-adds per image: with one thread the serial kernels hand these products
    # to BLAS; with more, the kernels run over chunks of images in parallel.  The parallel
    # kernels are the same code for both float types: float32 alone there (compiling them for
    # float64 too cost ~25 s of a cold make test)
    import numba

    arrays = [_rand((3, 32, 32, 32)), _rand((32, 32, 3, 3), seed=1), _rand((32,), seed=2)]
    before = numba.get_num_threads()
    numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))
    cases = ((np.float32, dict(rtol=1e-3, atol=2e-3)), (np.float64, None))
    try:
        for dtype, tol in cases if threads == 1 else cases[:1]:
            # float32 weight gradients sum 3072 products: rounding reaches ~3e-4
            _check(
                lambda x, w, b: F.conv2d(x, w, b, padding=1),
                lambda x, w, b: TF.conv2d(x, w, b, padding=1),
                arrays,
                dtype,
                tol=tol,
            )
    finally:
        numba.set_num_threads(before)


def test_conv2d_second_derivatives():
    x = xp.asarray(_rand((1, 2, 5, 4)), requires_grad=True)
    w = xp.asarray(_rand((3, 2, 2, 3), seed=1), requires_grad=True)
    assert xp.autograd.gradgradcheck(lambda x, w: F.conv2d(x, w, stride=(2, 1), padding=1), (x, w))


def test_conv2d_second_derivatives_with_bias_on_a_tiny_image():
    # the bias is part of the conv2d primitive; a 3x3 image takes the dense-matrix kernels
    x = xp.asarray(_rand((2, 2, 3, 3)), requires_grad=True)
    w = xp.asarray(_rand((3, 2, 3, 3), seed=1), requires_grad=True)
    b = xp.asarray(_rand((3,), seed=2), requires_grad=True)
    assert xp.autograd.gradgradcheck(lambda x, w, b: F.conv2d(x, w, b, padding=1), (x, w, b))


@pytest.mark.parametrize("layout", ["transposed", "strided", "channels_last"])
def test_conv2d_tiny_image_non_contiguous(layout):
    arrays = [_rand((3, 4, 4, 4)), _rand((6, 4, 3, 3), seed=1), _rand((6,), seed=2)]
    _check(
        lambda x, w, b: F.conv2d(x, w, b, padding=1),
        lambda x, w, b: TF.conv2d(x, w, b, padding=1),
        arrays,
        layouts=[layout, layout, "contiguous"],
    )


# -- conv1d --------------------------------------------------------------------------------------
CONV1D = [
    ((2, 3, 9), (4, 3, 3), True, {}),
    ((2, 4, 9), (6, 2, 3), True, dict(stride=2, padding=2, dilation=2, groups=2)),
    ((2, 3, 8), (4, 3, 4), False, dict(padding="same")),
    ((3, 9), (4, 3, 3), True, dict(padding=1)),  # unbatched
]


@pytest.mark.parametrize("xs,ws,bias,kw", CONV1D)
def test_conv1d_matches_torch(xs, ws, bias, kw):
    arrays = [_rand(xs), _rand(ws, seed=1), _rand((ws[0],), seed=2) if bias else None]
    _check(
        lambda x, w, b: F.conv1d(x, w, b, **kw), lambda x, w, b: TF.conv1d(x, w, b, **kw), arrays
    )


# -- transposed convolutions ---------------------------------------------------------------------
CONVT2D = [
    ((2, 4, 5, 4), (4, 3, 3, 3), True, {}),
    ((2, 4, 5, 4), (4, 3, 3, 2), True, dict(stride=2, padding=1, output_padding=1)),
    ((2, 4, 5, 4), (4, 2, 3, 3), False, dict(stride=(2, 3), padding=(0, 1), groups=2)),
    ((1, 2, 4, 4), (2, 3, 3, 3), True, dict(stride=1, padding=2, dilation=2, output_padding=1)),
    ((4, 5, 4), (4, 3, 2, 2), True, dict(stride=2)),  # unbatched
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("xs,ws,bias,kw", CONVT2D)
def test_conv_transpose2d_matches_torch(xs, ws, bias, kw, dtype):
    cout = ws[1] * kw.get("groups", 1)
    arrays = [_rand(xs), _rand(ws, seed=1), _rand((cout,), seed=2) if bias else None]
    _check(
        lambda x, w, b: F.conv_transpose2d(x, w, b, **kw),
        lambda x, w, b: TF.conv_transpose2d(x, w, b, **kw),
        arrays,
        dtype,
    )


def test_conv_transpose1d_matches_torch():
    arrays = [_rand((2, 4, 6)), _rand((4, 3, 3), seed=1), _rand((3,), seed=2)]
    kw = dict(stride=3, padding=1, output_padding=2)
    _check(
        lambda x, w, b: F.conv_transpose1d(x, w, b, **kw),
        lambda x, w, b: TF.conv_transpose1d(x, w, b, **kw),
        arrays,
    )


# -- layers --------------------------------------------------------------------------------------
def _copy_params(sm, tm):
    sm.load_state_dict({k: v.detach().numpy() for k, v in tm.state_dict().items()})


@pytest.mark.parametrize(
    "name,args,kwargs,xshape",
    [
        ("Conv2d", (3, 6, 3), dict(padding=1, stride=2), (2, 3, 7, 7)),
        ("Conv2d", (4, 6, (3, 2)), dict(groups=2, bias=False, dilation=2), (2, 4, 8, 7)),
        ("Conv2d", (3, 4, 4), dict(padding="same"), (2, 3, 5, 6)),
        ("Conv1d", (3, 5, 3), dict(padding=1), (2, 3, 9)),
        ("ConvTranspose2d", (4, 6, 3), dict(stride=2, output_padding=1, groups=2), (2, 4, 4, 5)),
        ("ConvTranspose1d", (3, 2, 4), dict(stride=2, padding=1), (2, 3, 6)),
    ],
)
def test_layers_match_torch(name, args, kwargs, xshape):
    torch.manual_seed(0)
    tm = getattr(torch.nn, name)(*args, **kwargs)
    sm = getattr(nn, name)(*args, **kwargs)
    assert [(k, tuple(v.shape)) for k, v in tm.state_dict().items()] == [
        (k, v.shape) for k, v in sm.state_dict().items()
    ]
    assert sm.weight.dtype == xp.float32
    _copy_params(sm, tm)
    a = _rand(xshape, np.float32)
    xs, xt = _leaf(a), torch.tensor(a, requires_grad=True)
    ys, yt = sm(xs), tm(xt)
    np.testing.assert_allclose(np.asarray(ys), yt.detach().numpy(), **TOL[np.float32])
    g = _rand(tuple(yt.shape), np.float32, 3)
    xp.sum(ys * xp.asarray(g)).backward()
    (yt * torch.tensor(g)).sum().backward()
    np.testing.assert_allclose(np.asarray(xs.grad), xt.grad.numpy(), **TOL[np.float32])
    for (k, p), (_, q) in zip(sm.named_parameters(), tm.named_parameters()):
        np.testing.assert_allclose(np.asarray(p.grad), q.grad.numpy(), err_msg=k, **TOL[np.float32])
    assert repr(sm) == repr(tm)


@pytest.mark.parametrize(
    "layer,fan_in", [(lambda: nn.Conv2d(4, 64, 3, groups=2), 18), (lambda: nn.Conv1d(5, 64, 4), 20)]
)
def test_default_initialisation_is_kaiming_uniform(layer, fan_in):
    xp.random.manual_seed(0)
    m = layer()
    bound = 1 / math.sqrt(fan_in)  # kaiming_uniform_(a=sqrt(5)) and the bias both give this
    w, b = np.asarray(m.weight), np.asarray(m.bias)
    assert np.abs(w).max() <= bound and np.abs(b).max() <= bound
    # uniform over the whole range: the spread of the samples reaches close to the bounds
    assert w.max() > 0.9 * bound and w.min() < -0.9 * bound
    assert abs(w.std() - bound / math.sqrt(3)) < 0.1 * bound


def test_conv_transpose_output_size_argument():
    tm = torch.nn.ConvTranspose2d(2, 3, 3, stride=2, padding=1)
    sm = nn.ConvTranspose2d(2, 3, 3, stride=2, padding=1)
    _copy_params(sm, tm)
    a = _rand((1, 2, 4, 4), np.float32)
    ys = sm(xp.asarray(a), output_size=(8, 8))
    yt = tm(torch.tensor(a), output_size=(8, 8))
    np.testing.assert_allclose(np.asarray(ys), yt.detach().numpy(), **TOL[np.float32])


# -- meta ------------------------------------------------------------------------------------------
def test_layers_and_gradients_on_meta_match_cpu_shapes():
    net = nn.Sequential(
        nn.Conv2d(3, 8, 3, padding=1),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Conv2d(8, 4, 3, stride=2, groups=4, bias=False),
        nn.ConvTranspose2d(4, 2, 2, stride=2),
    )
    meta = nn.Sequential(
        nn.Conv2d(3, 8, 3, padding=1, device="meta"),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Conv2d(8, 4, 3, stride=2, groups=4, bias=False, device="meta"),
        nn.ConvTranspose2d(4, 2, 2, stride=2, device="meta"),
    )
    x = xp.asarray(_rand((2, 3, 12, 12), np.float32))
    xm = xp.empty((2, 3, 12, 12), dtype=xp.float32, device="meta")
    y, ym = net(x), meta(xm)
    assert ym.device.type == "meta" and (ym.shape, ym.dtype) == (y.shape, y.dtype)
    xp.sum(y).backward()
    xp.sum(ym).backward()
    for p, q in zip(net.parameters(), meta.parameters()):
        assert q.grad.device.type == "meta" and (q.grad.shape, q.grad.dtype) == (
            p.grad.shape,
            p.grad.dtype,
        )


@pytest.mark.parametrize(
    "fn",
    [
        lambda x: F.conv1d(x[:, :, 0], xp.empty((5, 3, 2), device=x.device)),
        lambda x: F.unfold(x, 3, padding=1),
        lambda x: F.fold(F.unfold(x, 2), (6, 7), 2),
        lambda x: F.pad(x, (1, 2, 0, 3)),
        lambda x: F.pad(x, (1, 2, 3, 1), mode="reflect"),
        lambda x: F.interpolate(x, scale_factor=2, mode="bilinear"),
        lambda x: F.interpolate(x, size=(3, 9)),
        lambda x: F.adaptive_avg_pool2d(x, (4, 5)),
    ],
)
def test_functional_on_meta_matches_cpu(fn):
    x = xp.asarray(_rand((2, 3, 6, 7)))
    xm = xp.empty((2, 3, 6, 7), device="meta")
    y, ym = fn(x), fn(xm)
    assert (ym.shape, ym.dtype, ym.device.type) == (y.shape, y.dtype, "meta")


# -- unfold / fold / pad / interpolate -----------------------------------------------------------
@pytest.mark.parametrize(
    "kw",
    [dict(kernel_size=3), dict(kernel_size=(2, 3), dilation=(2, 1), padding=1, stride=(1, 2))],
)
def test_unfold_and_fold_match_torch(kw):
    _check(lambda x: F.unfold(x, **kw), lambda x: TF.unfold(x, **kw), [_rand((2, 3, 7, 6))])
    cols = TF.unfold(torch.zeros(2, 3, 7, 6), **kw).shape
    _check(
        lambda c: F.fold(c, (7, 6), **kw),
        lambda c: TF.fold(c, (7, 6), **kw),
        [_rand(tuple(cols))],
        layouts=["transposed"],
    )


@pytest.mark.parametrize(
    "pad,mode,value",
    [
        ((1, 2), "constant", None),
        ((1, 2, -1, 3), "constant", 2.5),
        ((0, 0, 1, 1, 2, 0), "constant", None),
        ((2, 1, 1, 3), "reflect", None),
        ((2, 1, 1, 3), "replicate", None),
        ((2, 1, 1, 3), "circular", None),
        ((3, 0, 0, 2), "replicate", None),
    ],
)
def test_pad_matches_torch(pad, mode, value):
    kw = {} if value is None else {"value": value}
    _check(
        lambda x: F.pad(x, pad, mode=mode, **kw),
        lambda x: TF.pad(x, pad, mode=mode, **kw),
        [_rand((2, 3, 5, 6))],
        layouts=["transposed"],
    )


@pytest.mark.parametrize(
    "kw",
    [
        dict(size=(9, 4)),
        dict(scale_factor=2),
        dict(scale_factor=(1.5, 0.6)),
        dict(size=(7, 11), mode="nearest-exact"),
        dict(size=(9, 4), mode="bilinear"),
        dict(scale_factor=1.7, mode="bilinear", align_corners=True),
        dict(size=(3, 4), mode="bilinear", align_corners=False),
        dict(scale_factor=(2, 0.5), mode="bilinear"),
        dict(size=(3, 2), mode="area"),
    ],
)
def test_interpolate_matches_torch(kw):
    _check(
        lambda x: F.interpolate(x, **kw), lambda x: TF.interpolate(x, **kw), [_rand((2, 3, 5, 6))]
    )


def test_interpolate_linear_1d_matches_torch():
    kw = dict(size=11, mode="linear", align_corners=False)
    _check(lambda x: F.interpolate(x, **kw), lambda x: TF.interpolate(x, **kw), [_rand((2, 3, 5))])


# -- errors ----------------------------------------------------------------------------------------
def test_wrong_channel_count_names_the_layer_and_shapes():
    m = nn.Conv2d(3, 8, 3)
    x = xp.zeros((2, 4, 8, 8), dtype=xp.float32)
    with pytest.raises(RuntimeError, match=r"Conv2d\(3, 8.*3 channels.*\(2, 4, 8, 8\)"):
        m(x)
    w = xp.zeros((8, 3, 3, 3), dtype=xp.float32)
    with pytest.raises(RuntimeError, match=r"conv2d: .*weight of size \[8, 3, 3, 3\].*4 channels"):
        F.conv2d(x, w)


def test_kernel_larger_than_padded_input():
    with pytest.raises(RuntimeError, match=r"Conv2d.*\(4, 4\).*\(5, 5\).*kernel size"):
        nn.Conv2d(1, 1, 5)(xp.zeros((1, 1, 4, 4), dtype=xp.float32))
    with pytest.raises(RuntimeError, match="conv1d.*kernel size"):
        F.conv1d(xp.zeros((1, 1, 2)), xp.zeros((1, 1, 5)), padding=1)
    with pytest.raises(RuntimeError, match=r"unfold.*\(4, 4\)"):
        F.unfold(xp.zeros((1, 1, 4, 4)), 5)


def test_groups_must_divide_channels():
    with pytest.raises(ValueError, match=r"Conv2d: in_channels \(3\).*groups \(2\)"):
        nn.Conv2d(3, 4, 3, groups=2)
    with pytest.raises(ValueError, match=r"ConvTranspose2d: out_channels \(5\).*groups \(2\)"):
        nn.ConvTranspose2d(4, 5, 3, groups=2)
    with pytest.raises(RuntimeError, match=r"conv2d: out_channels \(5.*groups \(2\)"):
        F.conv2d(xp.zeros((1, 4, 5, 5)), xp.zeros((5, 2, 3, 3)), groups=2)


def test_argument_errors():
    x = xp.zeros((1, 2, 5, 5))
    w = xp.zeros((3, 2, 3, 3))
    with pytest.raises(RuntimeError, match="same.*strided"):
        F.conv2d(x, w, padding="same", stride=2)
    with pytest.raises(ValueError, match="invalid padding string"):
        F.conv2d(x, w, padding="full")
    with pytest.raises(TypeError, match="conv2d.*float64.*float32"):
        F.conv2d(x, xp.zeros((3, 2, 3, 3), dtype=xp.float32))
    with pytest.raises(TypeError, match="conv2d.*real floating"):
        F.conv2d(xp.zeros((1, 2, 5, 5), dtype=xp.int64), w)
    with pytest.raises(ValueError, match=r"conv2d: expected a 3-D \(unbatched\) or 4-D"):
        F.conv2d(xp.zeros((2, 5, 5)[:1]), w)
    with pytest.raises(NotImplementedError, match="padding_mode='circular'"):
        nn.Conv2d(2, 3, 3, padding_mode="circular")
    with pytest.raises(RuntimeError, match="output padding must be smaller"):
        F.conv_transpose2d(x, xp.zeros((2, 3, 3, 3)), stride=2, output_padding=2)
    with pytest.raises(RuntimeError, match="fold.*sliding blocks"):
        F.fold(xp.zeros((1, 9, 10)), (5, 5), 3)
    with pytest.raises(RuntimeError, match="pad.*reflect"):
        F.pad(x, (5, 5), mode="reflect")


def test_conv_kernels_run_blas_on_one_thread_and_restore_the_pools():
    # the BLAS thread policy (backends/cpu/_blas_threads.py): one thread inside the kernels,
    # the user's pool sizes before and after
    threadpoolctl = pytest.importorskip("threadpoolctl")
    from strided.backends.cpu import _blas_threads

    x = xp.asarray(_rand((2, 16, 6, 6), np.float32))
    w = xp.asarray(_rand((16, 16, 3, 3), np.float32, seed=1), requires_grad=True)
    with threadpoolctl.threadpool_limits(2, user_api="blas"):
        pools = threadpoolctl.ThreadpoolController().select(user_api="blas").lib_controllers

        def sizes():
            return [p.get_num_threads() for p in pools]

        before = sizes()
        saved = _blas_threads.one_thread()
        assert all(n == 1 for n in sizes())
        _blas_threads.restore(saved)
        assert sizes() == before
        xp.sum(F.conv2d(x, w, padding=1)).backward()
        assert sizes() == before
    assert w.grad is not None
