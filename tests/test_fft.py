"""The fft extension vs NumPy: all 14 functions, every accepted dtype, every memory layout, the
n/s/axes/norm parameters (padding and truncation included), meta agreement, and clear errors.

The three primitives behind them (``fft_c2c``, ``fft_r2c``, ``fft_c2r``) are reached through
the public functions."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import strided as xp
from strided import _dtypes as sdt

from .strategies import LAYOUTS, in_layout, seeds, values

COMPLEX = [sdt.complex64, sdt.complex128]
REAL = [sdt.float32, sdt.float64]
FLOATING = REAL + COMPLEX
NORMS = ("backward", "ortho", "forward")

# name -> (accepted dtypes, result dtype from the input dtype)
FUNCS = {
    "fft": (COMPLEX, lambda d: d),
    "ifft": (COMPLEX, lambda d: d),
    "fftn": (COMPLEX, lambda d: d),
    "ifftn": (COMPLEX, lambda d: d),
    "rfft": (REAL, sdt.complex_of),
    "irfft": (COMPLEX, sdt.real_of),
    "rfftn": (REAL, sdt.complex_of),
    "irfftn": (COMPLEX, sdt.real_of),
    "hfft": (COMPLEX, sdt.real_of),
    "ihfft": (REAL, sdt.complex_of),
    "fftshift": (FLOATING, lambda d: d),
    "ifftshift": (FLOATING, lambda d: d),
}

SHAPE = (4, 5, 6)

# (function, keyword arguments) pairs: n/s padding (>) and truncation (<), axes, norm modes
CALLS = [
    ("fft", {}),
    ("fft", {"n": 9, "norm": "ortho"}),
    ("fft", {"n": 3, "axis": 0, "norm": "forward"}),
    ("ifft", {"axis": 1}),
    ("ifft", {"n": 8, "axis": -3, "norm": "ortho"}),
    ("ifft", {"n": 2, "norm": "forward"}),
    ("fftn", {}),
    ("fftn", {"s": (3, 7), "axes": (2, 0), "norm": "ortho"}),
    ("fftn", {"s": (-1, 2), "axes": (1, 2), "norm": "forward"}),
    ("fftn", {"axes": (1,)}),
    ("ifftn", {}),
    ("ifftn", {"s": (6, 3, 5), "axes": (0, 1, 2), "norm": "forward"}),
    ("ifftn", {"axes": (-1, 0), "norm": "ortho"}),
    ("rfft", {}),
    ("rfft", {"n": 11, "axis": 1, "norm": "ortho"}),
    ("rfft", {"n": 4, "axis": 0, "norm": "forward"}),
    ("irfft", {}),
    ("irfft", {"n": 9, "axis": 1, "norm": "ortho"}),
    ("irfft", {"n": 4, "axis": 0, "norm": "forward"}),
    ("rfftn", {}),
    ("rfftn", {"s": (5, 3), "axes": (2, 0), "norm": "ortho"}),
    ("rfftn", {"s": (-1, 9), "axes": (0, 1), "norm": "forward"}),
    ("irfftn", {}),
    ("irfftn", {"s": (7, 3), "axes": (2, 0), "norm": "ortho"}),
    ("irfftn", {"s": (2, -1), "axes": (1, 2), "norm": "forward"}),
    ("irfftn", {"axes": (2, 0)}),
    ("rfftn", {"axes": (0,), "norm": "ortho"}),
    ("hfft", {}),
    ("hfft", {"n": 7, "axis": 0, "norm": "ortho"}),
    ("hfft", {"n": 12, "axis": 1, "norm": "forward"}),
    ("ihfft", {}),
    ("ihfft", {"n": 9, "axis": 0, "norm": "ortho"}),
    ("ihfft", {"n": 3, "norm": "forward"}),
    ("fftshift", {}),
    ("fftshift", {"axes": 1}),
    ("fftshift", {"axes": (0, -1)}),
    ("ifftshift", {}),
    ("ifftshift", {"axes": (2,)}),
]


def _numpy_kwargs(x_shape, kwargs):
    """The same call for NumPy: -1 entries of s spelled out (irfftn's last one as 2*(m-1))."""
    kw = dict(kwargs)
    if kw.get("s") is not None:
        s = list(kw["s"])
        axes = [a % len(x_shape) for a in kw["axes"]]
        for i, (v, a) in enumerate(zip(s, axes)):
            if v == -1:
                s[i] = x_shape[a]
        kw["s"] = tuple(s)
    return kw


def _irfftn_s_fix(name, x_shape, kwargs):
    if name == "irfftn" and kwargs.get("s") is not None and kwargs["s"][-1] == -1:
        kw = dict(kwargs)
        s = list(kw["s"])
        s[-1] = 2 * (x_shape[kw["axes"][-1] % len(x_shape)] - 1)
        kw["s"] = tuple(s)
        return kw
    return _numpy_kwargs(x_shape, kwargs)


def _check(got: xp.Array, want: np.ndarray, d_out: sdt.DType):
    assert got.dtype is d_out
    assert got.shape == want.shape
    g = np.asarray(got)
    tol = 2e-5 if d_out in (sdt.float32, sdt.complex64) else 1e-12
    scale = max(1.0, float(np.abs(want).max(initial=0.0)))
    np.testing.assert_allclose(g, want, rtol=tol, atol=tol * scale)


def _run(name, d, layout, kwargs, shape=SHAPE, seed=0):
    rng = np.random.default_rng(seed)
    v, a = in_layout(values(rng, shape, d, (-2.0, 2.0)), layout)
    got = getattr(xp.fft, name)(a, **kwargs)
    want = getattr(np.fft, name)(v, **_irfftn_s_fix(name, shape, kwargs))
    _check(got, want, FUNCS[name][1](d))
    # meta runs the same rules: same shape and dtype, no data
    m = getattr(xp.fft, name)(xp.empty(shape, dtype=d, device="meta"), **kwargs)
    assert m.device == xp.Device("meta")
    assert (m.shape, m.dtype) == (got.shape, got.dtype)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("name", sorted(FUNCS))
def test_every_function_every_dtype_every_layout(name, layout):
    for d in FUNCS[name][0]:
        _run(name, d, layout, {})


@pytest.mark.parametrize("name,kwargs", CALLS, ids=[f"{n}-{i}" for i, (n, _) in enumerate(CALLS)])
def test_parameters_against_numpy(name, kwargs):
    # n/s padding and truncation, axes, norm: each dtype on a non-contiguous layout
    for i, d in enumerate(FUNCS[name][0]):
        _run(name, d, ("transposed", "negative", "sliced")[i % 3], kwargs, seed=i)


@pytest.mark.parametrize("norm", NORMS)
def test_round_trips(norm):
    rng = np.random.default_rng(1)
    c = xp.asarray(values(rng, (3, 8), sdt.complex128))
    r = xp.asarray(values(rng, (3, 7), sdt.float64))

    def close(a, b):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), atol=1e-12)

    close(xp.fft.ifft(xp.fft.fft(c, norm=norm), norm=norm), c)
    close(xp.fft.ifftn(xp.fft.fftn(c, norm=norm), norm=norm), c)
    close(xp.fft.irfft(xp.fft.rfft(r, norm=norm), n=7, norm=norm), r)
    close(xp.fft.irfftn(xp.fft.rfftn(r, norm=norm), s=(3, 7), axes=(0, 1), norm=norm), r)
    close(xp.fft.hfft(xp.fft.ihfft(r, norm=norm), n=7, norm=norm), r)
    close(xp.fft.ifftshift(xp.fft.fftshift(r)), r)


@settings(max_examples=25)
@given(
    data=st.data(),
    rng=seeds(),
    shape=st.lists(st.integers(1, 6), min_size=1, max_size=3).map(tuple),
)
def test_hypothesis_layouts_sizes_and_norms(data, rng, shape):
    d = data.draw(st.sampled_from(COMPLEX), label="dtype")
    v, a = in_layout(values(rng, shape, d), data.draw(st.sampled_from(LAYOUTS), label="layout"))
    axis = data.draw(st.integers(-len(shape), len(shape) - 1), label="axis")
    n = data.draw(st.none() | st.integers(1, 9), label="n")
    norm = data.draw(st.sampled_from(NORMS), label="norm")
    for name in ("fft", "ifft", "hfft"):
        if name == "hfft" and n is None and shape[axis] < 2:
            continue
        got = getattr(xp.fft, name)(a, n=n, axis=axis, norm=norm)
        want = getattr(np.fft, name)(v, n=n, axis=axis, norm=norm)
        _check(got, want, FUNCS[name][1](d))
    re = np.ascontiguousarray(v.real)
    for name in ("rfft", "ihfft"):
        got = getattr(xp.fft, name)(xp.real(a), n=n, axis=axis, norm=norm)
        want = getattr(np.fft, name)(re, n=n, axis=axis, norm=norm)
        _check(got, want, sdt.complex_of(sdt.real_of(d)))


def test_large_batched_transforms_use_threads():
    # over the threading threshold, with many lines: scipy's workers split the batch
    rng = np.random.default_rng(2)
    v = values(rng, (300, 256), sdt.complex128)
    a = xp.asarray(v)
    _check(xp.fft.fft(a, axis=0), np.fft.fft(v, axis=0), sdt.complex128)
    _check(xp.fft.rfft(xp.real(a)), np.fft.rfft(v.real), sdt.complex128)
    _check(xp.fft.irfft(a.mT, n=600), np.fft.irfft(v.T, n=600), sdt.float64)


def test_empty_batches_and_padding_an_empty_axis():
    got = xp.fft.fft(xp.zeros((0, 4), dtype=xp.complex64))
    assert (got.shape, got.dtype) == ((0, 4), xp.complex64)
    assert xp.fft.rfftn(xp.zeros((3, 0, 4)), axes=(2,)).shape == (3, 0, 3)
    np.testing.assert_array_equal(np.asarray(xp.fft.fft(xp.zeros(0, dtype=xp.complex128), n=3)), 0)
    # an empty axes list transforms nothing: a copy
    x = xp.asarray([1 + 2j, 3j])
    y = xp.fft.fftn(x, axes=())
    np.testing.assert_array_equal(np.asarray(y), np.asarray(x))


@pytest.mark.parametrize("name", ["fftfreq", "rfftfreq"])
def test_frequencies(name):
    for n in (1, 2, 7, 10):
        for d in (1.0, 0.25, 3):
            for dtype in (None, xp.float32, xp.float64):
                got = getattr(xp.fft, name)(n, d=d, dtype=dtype)
                want = getattr(np.fft, name)(n, d=d)
                out_dtype = xp.float64 if dtype is None else dtype
                _check(got, want.astype(out_dtype.numpy), out_dtype)
    m = getattr(xp.fft, name)(9, dtype=xp.float32, device="meta")
    assert (m.shape, m.dtype, m.device) == (
        (9 if name == "fftfreq" else 5,),
        xp.float32,
        xp.Device("meta"),
    )
    with xp.default_device("meta"):
        assert getattr(xp.fft, name)(4).device == xp.Device("meta")
    assert getattr(xp.fft, name)(4, device="cpu").device == xp.Device("cpu")


@pytest.mark.parametrize("name", ["fftfreq", "rfftfreq"])
def test_frequencies_are_numpys_to_the_bit_and_through_the_reported_composition(name):
    from strided import dispatch

    # NumPy multiplies integers by 1/(n d): the same values, signs of zero included (d < 0)
    for n in (1, 2, 3, 8, 9, 4096, 70_001):
        for d in (1.0, 0.1, -0.3, 7.0, -2.5):
            want = getattr(np.fft, name)(n, d=d)
            for observed in (False, True):
                if observed:
                    calls = []
                    with dispatch.observe(lambda prim, *rest, calls=calls: calls.append(prim.name)):
                        got = np.asarray(getattr(xp.fft, name)(n, d=d))
                    assert "arange" in calls
                else:
                    got = np.asarray(getattr(xp.fft, name)(n, d=d))
                np.testing.assert_array_equal(got, want)
                np.testing.assert_array_equal(np.signbit(got), np.signbit(want))


REJECTED = [
    ("ifft", sdt.int32, "floating"),
    ("ifftn", sdt.bool, "floating"),
    ("rfft", sdt.complex128, "real floating"),
    ("irfft", sdt.float64, "complex floating"),
    ("rfftn", sdt.int64, "real floating"),
    ("irfftn", sdt.float32, "complex floating"),
    ("hfft", sdt.float64, "complex floating"),
    ("ihfft", sdt.complex64, "real floating"),
    ("fftshift", sdt.int16, "floating"),
    ("ifftshift", sdt.bool, "floating"),
]


@pytest.mark.parametrize("name", ["fft", "ifft", "fftn", "ifftn"])
@pytest.mark.parametrize("d", [sdt.float32, sdt.float64])
def test_complex_transforms_promote_real_input(name, d):
    a = np.arange(12.0).reshape(3, 4).astype(d.numpy)[:, ::-1]
    got = getattr(xp.fft, name)(xp.asarray(a))
    want = getattr(np.fft, name)(a)
    assert got.dtype == sdt.complex_of(d)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-4)
    meta = getattr(xp.fft, name)(xp.zeros((3, 4), dtype=d, device="meta"))
    assert meta.dtype == got.dtype and meta.shape == got.shape


@pytest.mark.parametrize("name,d,category", REJECTED)
def test_rejected_dtypes_name_the_function(name, d, category):
    for device in ("cpu", "meta"):
        x = xp.zeros((4,), dtype=d, device=device)
        with pytest.raises(TypeError, match=f"fft.{name}: expected an array of {category} dtype, "
                           f"got {d.name}"):  # fmt: skip
            getattr(xp.fft, name)(x)


@pytest.mark.parametrize("device", ["cpu", "meta"])
def test_bad_parameters_raise_value_errors(device):
    c = xp.zeros((3, 4), dtype=xp.complex128, device=device)
    r = xp.zeros((3, 4), dtype=xp.float64, device=device)
    bad = [
        (lambda: xp.fft.fft(c, norm="none"), "fft.fft: norm must be"),
        (lambda: xp.fft.ifftn(c, norm=None), "fft.ifftn: norm must be"),
        (lambda: xp.fft.fft(c, n=0), "fft.fft: invalid number of data points n=0"),
        (lambda: xp.fft.rfft(r, n=-2), "fft.rfft: invalid number of data points n=-2"),
        (lambda: xp.fft.ifft(c, axis=2), "fft.ifft: axis 2 is out of bounds"),
        (lambda: xp.fft.hfft(c, axis=-3), "fft.hfft: axis -3 is out of bounds"),
        (lambda: xp.fft.fftn(c, s=(2, 2)), "fft.fftn: s was given without axes"),
        (lambda: xp.fft.rfftn(r, s=(2,), axes=(0, 1)), "fft.rfftn: s .* same length"),
        (lambda: xp.fft.irfftn(c, axes=(1, -1)), "fft.irfftn: axes .* repeat an axis"),
        (lambda: xp.fft.fftn(c, s=(0, 2), axes=(0, 1)), "fft.fftn: invalid size 0 in s"),
        (lambda: xp.fft.rfftn(r, axes=()), "fft.rfftn: axes must name at least one axis"),
        (lambda: xp.fft.irfft(c[:, :1]), "fft.irfft: the default output length"),
        (lambda: xp.fft.fft(c[:, :0]), "fft.fft: invalid number of data points n=0"),
        (lambda: xp.fft.fftshift(r, axes=(0, 0)), "fft.fftshift: axes .* repeat an axis"),
        (lambda: xp.fft.ifftshift(r, axes=5), "fft.ifftshift: axis 5 is out of bounds"),
        (lambda: xp.fft.fftfreq(0, device=device), "fft.fftfreq: the window length n"),
        (lambda: xp.fft.rfftfreq(4, d=0, device=device), "fft.rfftfreq: the sample spacing"),
    ]
    for fn, msg in bad:
        with pytest.raises(ValueError, match=msg):
            fn()
    with pytest.raises(ValueError, match="fft.fft: axis -1 is out of bounds"):
        xp.fft.fft(xp.asarray(1j, device=device))


def test_bad_argument_types_raise_type_errors():
    c = xp.zeros((4,), dtype=xp.complex64)
    bad = [
        (lambda: xp.fft.fft(np.zeros(4, complex)), "fft: expected a strided array"),
        (lambda: xp.fft.fft(c, n=2.0), "fft.fft: n must be an integer"),
        (lambda: xp.fft.ifft(c, n=True), "fft.ifft: n must be an integer"),
        (lambda: xp.fft.fft(c, axis=0.5), "fft.fft: axis must be an integer"),
        (lambda: xp.fft.fftn(c, axes=0), "fft.fftn: axes must be a sequence of ints"),
        (lambda: xp.fft.fftn(c, s=4, axes=(0,)), "fft.fftn: s must be a sequence of ints"),
        (lambda: xp.fft.fftfreq(4.0), "fft.fftfreq: n must be an integer"),
        (lambda: xp.fft.fftfreq(4, d="1"), "fft.fftfreq: d must be a real number"),
        (lambda: xp.fft.rfftfreq(4, dtype=xp.complex64), "fft.rfftfreq: dtype must be a real"),
        (lambda: xp.fft.fftfreq(4, dtype=xp.int32), "fft.fftfreq: dtype must be a real"),
    ]
    for fn, msg in bad:
        with pytest.raises(TypeError, match=msg):
            fn()


def test_namespace_and_signatures():
    import inspect

    assert sorted(xp.fft.__all__) == sorted([*FUNCS, "fftfreq", "rfftfreq"])
    for name in xp.fft.__all__:
        fn = getattr(xp.fft, name)
        assert fn.__doc__
        first = next(iter(inspect.signature(fn).parameters.values()))
        assert first.kind is inspect.Parameter.POSITIONAL_ONLY

    def plain(fn):
        params = inspect.signature(fn).parameters.values()
        return str(inspect.Signature([p.replace(annotation=p.empty) for p in params]))

    assert plain(xp.fft.fft) == "(x, /, *, n=None, axis=-1, norm='backward')"
    assert plain(xp.fft.irfftn) == "(x, /, *, s=None, axes=None, norm='backward')"
    assert plain(xp.fft.fftfreq) == "(n, /, *, d=1.0, dtype=None, device=None)"
    assert plain(xp.fft.fftshift) == "(x, /, *, axes=None)"


def test_scipy_fft_dispatches_to_strided():
    # SciPy's array-API aware fft (SCIPY_ARRAY_API=1, set in conftest) calls strided.fft
    import os

    if os.environ.get("SCIPY_ARRAY_API") != "1":
        pytest.skip("SCIPY_ARRAY_API=1 must be set before SciPy is imported")
    import scipy.fft

    v = np.random.default_rng(3).standard_normal((3, 8))
    x = xp.asarray(v)
    for name in ("rfft", "fftn", "fftshift"):
        got = getattr(scipy.fft, name)(x)
        assert isinstance(got, xp.Array)
        np.testing.assert_allclose(np.asarray(got), getattr(np.fft, name)(v), atol=1e-12)


def test_cpu_kernels_call_pocketfft_directly_and_the_public_route_agrees(monkeypatch):
    """The CPU kernels call scipy.fft's compiled pocketfft module (checked against the public
    functions on first use); where that check fails they run the public functions.  Both
    routes give NumPy's values for every call of CALLS (both dtypes, a strided layout) and for
    a batch large enough to use threads."""
    from strided.backends.cpu import _fft

    _fft._scipy_fft()
    assert _fft._pp is not False  # this scipy's module passed the check: the direct route runs
    for route in ("direct", "public"):
        if route == "public":
            monkeypatch.setattr(_fft, "_pp", False)
        for name, kwargs in CALLS:
            for i, d in enumerate(FUNCS[name][0]):
                _run(name, d, ("negative", "transposed")[i % 2], kwargs, seed=i)
        v = values(np.random.default_rng(4), (260, 256), sdt.complex64)
        _check(xp.fft.ifft(xp.asarray(v), axis=0, norm="ortho"),
               np.fft.ifft(v, axis=0, norm="ortho"), sdt.complex64)  # fmt: skip


def _exact(name: str, v: np.ndarray, **kwargs) -> np.ndarray:
    """scipy.fft's ``name`` of ``v`` in long double: a reference a few bits better than the
    float64 transform being checked."""
    import scipy.fft

    wide = np.clongdouble if v.dtype.kind == "c" else np.longdouble
    return getattr(scipy.fft, name)(v.astype(wide), **kwargs)


@pytest.mark.parametrize("n", [4096, 4097, 4099, 6000, 1 << 17])
def test_long_single_lines_in_four_steps(n):
    """A single line of at least FOUR_STEP_MIN points is transformed as n1 x n2 batches with
    twiddles between (4099 is prime: one call): within 4 ulp of the largest magnitude of the
    long double result (measured up to 2.3, the one-call route 2.4), both directions and every
    norm, contiguous, reversed, a row and a column of a 2-D array; 1 << 17 points run the
    batches on threads.  The twiddle tables kept stay few."""
    from strided.backends.cpu import _fft

    assert n < 1 << 17 or n >= _fft.PARALLEL_THRESHOLD
    rng = np.random.default_rng(n)
    for d in COMPLEX:
        v = values(rng, (n,), d)
        wide = np.zeros((3, n), dtype=v.dtype)
        wide[1] = v
        col = xp.asarray(np.ascontiguousarray(wide.T))[:, 1:2]
        for name in ("fft", "ifft"):
            for norm in NORMS:
                want = _exact(name, v, norm=norm)
                tol = 4 * np.finfo(v.dtype).eps * np.abs(want).max()
                for a, axis in (
                    (xp.asarray(v), -1),
                    (xp.flip(xp.asarray(v[::-1])), -1),
                    (xp.asarray(wide)[1:2], -1),
                    (col, 0),
                ):
                    got = np.asarray(getattr(xp.fft, name)(a, axis=axis, norm=norm)).reshape(-1)
                    assert got.dtype == v.dtype
                    np.testing.assert_allclose(got, want, rtol=0, atol=tol)
        # the four steps ran (their twiddles are kept) unless n is prime
        ran = any(
            type(k[0]) is int and k[0] * k[1] == n and k[2] == v.dtype for k in _fft._TWIDDLES
        )
        assert ran == (n != 4099)
    assert len(_fft._TWIDDLES) <= 8
    assert sum(t.nbytes for t in _fft._TWIDDLES.values()) <= _fft._TWIDDLE_BYTES


@pytest.mark.parametrize("n", [8192, 8194, 9001, 2 * 4099, 1 << 17])
def test_long_real_lines_through_half_length_complex_transforms(n):
    """rfft and irfft of a single line of at least 2 * FOUR_STEP_MIN real points run as the
    half-length complex transform of the even and odd samples (in four steps) with the halves
    split or joined after: within 4 ulp (rfft) or 6 (irfft) of the largest magnitude of the
    long double result, every norm, a contiguous vector (also from an odd offset: its pairs
    not aligned as complex) and a column; the zero and Nyquist terms of rfft exactly real and
    irfft ignoring their imaginary parts, as NumPy's.  Odd n, a prime half (2 * 4099) and a
    strided vector take the one-call route: same bounds."""
    from strided.backends.cpu import _fft

    rng = np.random.default_rng(n)
    half_route = n % 2 == 0 and n != 2 * 4099
    for d in REAL:
        v = values(rng, (n,), d)
        cd = sdt.complex_of(d)
        spectrum = np.fft.rfft(v.astype(np.float64)) * (1 + 0.25j)
        spectrum[0] += 0.5j
        spectrum[-1] -= 0.75j
        spec = spectrum.astype(cd.numpy)
        for norm in NORMS:
            want = _exact("rfft", v, norm=norm)
            tol = 4 * np.finfo(v.dtype).eps * np.abs(want).max()
            stretched = xp.asarray(np.repeat(v, 2))[::2]
            shifted = xp.asarray(np.concatenate([v[:1], v]))[1:]  # (its pairs not 2-aligned)
            for a, axis in (
                (xp.asarray(v), -1),
                (xp.asarray(v[:, None]), 0),
                (stretched, 0),
                (shifted, 0),
            ):
                got = np.asarray(xp.fft.rfft(a, axis=axis, norm=norm)).reshape(-1)
                np.testing.assert_allclose(got, want, rtol=0, atol=tol)
                assert got[0].imag == 0 and (n % 2 or got[-1].imag == 0)
            want_back = _exact("irfft", spec, n=n, norm=norm)
            # (irfft's error against its largest output: up to 4.4 ulp by either route)
            tol = 6 * np.finfo(v.dtype).eps * np.abs(want_back).max()
            for a, axis in ((xp.asarray(spec), -1), (xp.asarray(spec[:, None]), 0)):
                got = np.asarray(xp.fft.irfft(a, n=n, axis=axis, norm=norm)).reshape(-1)
                assert got.dtype == d.numpy
                np.testing.assert_allclose(got, want_back, rtol=0, atol=tol)
        ran = any(k[0] == "half" and k[1] == n // 2 and k[2] == cd.numpy for k in _fft._TWIDDLES)
        assert ran == half_route
    assert len(_fft._TWIDDLES) <= 8


def test_twiddle_tables_kept_stay_within_their_bound(monkeypatch):
    """The four-step transforms' tables are kept up to 8 of them and _TWIDDLE_BYTES together:
    with a bound of 40,000 bytes a 4096-point complex64 table (32 KB) is kept, and an
    8192-point one (64 KB) replaces it (kept alone); values stay NumPy's."""
    from strided.backends.cpu import _fft

    monkeypatch.setattr(_fft, "_TWIDDLE_BYTES", 40_000)
    monkeypatch.setattr(_fft, "_TWIDDLES", {})
    rng = np.random.default_rng(8)
    for n, kept in ((4096, 1), (8192, 1), (4096, 1)):
        v = values(rng, (n,), sdt.complex64)
        _check(xp.fft.fft(xp.asarray(v)), np.fft.fft(v), sdt.complex64)
        assert len(_fft._TWIDDLES) == kept
        assert [t.size for t in _fft._TWIDDLES.values()] == [n]


def test_a_pocketfft_module_that_disagrees_is_not_used(monkeypatch):
    """The first-use check turns the direct route down when the public functions and the
    compiled module disagree (here: a public ifft that conjugates) or the module is missing."""
    import sys

    import scipy.fft

    from strided.backends.cpu import _fft

    assert _fft._checked_pocketfft(scipy.fft) is not False

    class Disagreeing:
        rfft, hfft = staticmethod(scipy.fft.rfft), staticmethod(scipy.fft.hfft)

        @staticmethod
        def ifft(x):
            return np.conj(scipy.fft.ifft(x))

    assert _fft._checked_pocketfft(Disagreeing) is False
    # the module gone (an import of it then fails)
    monkeypatch.delattr(sys.modules["scipy.fft._pocketfft"], "pypocketfft")
    monkeypatch.setitem(sys.modules, "scipy.fft._pocketfft.pypocketfft", None)
    assert _fft._checked_pocketfft(scipy.fft) is False


def test_cpu_kernels_take_over_results_laid_out_as_their_output_else_copy():
    """The CPU FFT kernels keep scipy's result as the output's memory when it is laid out as the
    output (C order, the output's dtype and shape) and copy it otherwise (a Fortran-ordered or a
    strided result): the output holds the result's values either way."""
    from strided.backends.cpu import _memory

    rng = np.random.default_rng(3)
    want = rng.standard_normal((4, 6))
    for res in (want.copy(), np.asfortranarray(want), np.repeat(want, 2, axis=1)[:, ::2]):
        out = xp.empty((4, 6))
        _memory.adopt(out, res)
        np.testing.assert_array_equal(np.asarray(out), want)
        assert np.shares_memory(np.asarray(out), res) == res.flags.c_contiguous


def test_shifts_of_vectors_and_matrices_of_odd_and_even_lengths():
    """fftshift and ifftshift (which differ on odd lengths) of vectors of every length from 1 to
    9, through roll's remembered plan on repeated calls, and of matrices with either axis odd,
    all axes or one: NumPy's values."""
    for _ in range(2):
        for n in range(1, 10):
            v = np.arange(n, dtype=np.float32) * 1.5
            for name in ("fftshift", "ifftshift"):
                got = getattr(xp.fft, name)(xp.asarray(v))
                np.testing.assert_array_equal(np.asarray(got), getattr(np.fft, name)(v))
    m = np.arange(35, dtype=np.float64).reshape(5, 7)
    for name in ("fftshift", "ifftshift"):
        for axes in (None, 0, 1, (1, 0), [-1]):
            got = getattr(xp.fft, name)(xp.asarray(m), axes=axes)
            np.testing.assert_array_equal(np.asarray(got), getattr(np.fft, name)(m, axes=axes))
