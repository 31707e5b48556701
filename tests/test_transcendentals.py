"""Accuracy of the vectorised transcendental functions (``backends/cpu/_vmath.py``).

float64 results are compared with NumPy evaluated in long double (x87 80-bit: 11 more bits than
float64, so a reference error well below 0.01 ulp) over wide ranges of inputs, and must stay within
``ULP_BOUND`` ulp.  float32 results are compared with NumPy's float64 result and must stay
within ``F32_ULP_BOUND`` (1 ulp where not listed).  Special values (signed zeros, infinities,
NaN, subnormals, the largest finite numbers) must match NumPy exactly, sign of zero included,
as the standard's special cases require.  The large-argument path of sin/cos/tan, transposed
operands, the parallel kernels (1 or 2 threads, identical results) and the vectorisation of the
loops are checked too.
"""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

import strided as xp
from strided.backends.cpu.kernels import PARALLEL_THRESHOLD

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

LONG_DOUBLE_OK = np.finfo(np.longdouble).nmant >= 63

# measured maximum over these tests: 3.7 ulp (tan), 2.1 (asin); see the module docstring
ULP_BOUND = 4.0

# float32 computed in float32 (measured maxima over 1M+ inputs: exp 0.96, expm1 1.62,
# sinh 1.55, atan 2.04, tanh 1.46, atan2 2.40 ulp; over every positive normal float32 input:
# log 0.84, log2 1.02, log10 0.89; over every float32 input in the domain: log1p 0.88,
# asinh 1.51, acosh 2.10, atanh 1.32, cosh 1.55, and (sin/cos/tan up to the vectorised
# reduction's limit 71476.0625, beyond it libm) sin 1.56, cos 1.58, tan 2.91, asin 2.50, acos
# 1.34 ulp.  NumPy 2.4's own float32 tan and asin: 3.5 and 3.1 ulp; log, log2, log10: 3.7, 2.1,
# 3.3 on 8M samples)
F32_ULP_BOUND = {
    "log2": 1.05,
    "expm1": 2.0,
    "sin": 2.0,
    "cos": 2.0,
    "cosh": 2.0,
    "sinh": 2.0,
    "tanh": 2.5,
    "asinh": 2.0,
    "acosh": 2.5,
    "atanh": 2.0,
    "atan": 2.5,
    "tan": 3.0,
    "asin": 3.0,
    "acos": 2.0,
}

NP = {
    "asin": "arcsin",
    "acos": "arccos",
    "atan": "arctan",
    "asinh": "arcsinh",
    "acosh": "arccosh",
    "atanh": "arctanh",
}

RNG = np.random.default_rng(20261123)


def _uniform(lo, hi, n=20000):
    return RNG.uniform(lo, hi, n)


def _logspace(lo, hi, n=20000, signed=True):
    a = np.exp(RNG.uniform(np.log(lo), np.log(hi), n))
    return np.concatenate([a, -a]) if signed else a


# name -> input sets covering the domain (wide ranges, tiny and huge magnitudes)
DOMAINS = {
    "exp": [_uniform(-745.1, 709.7), _uniform(-1, 1), _logspace(1e-300, 1e-3)],
    "expm1": [_uniform(-60, 709.7), _uniform(-1, 1), _logspace(1e-300, 1e-3)],
    "log": [_logspace(1e-320, 1e308, signed=False), _uniform(0.5, 2)],
    "log2": [_logspace(1e-320, 1e308, signed=False), _uniform(0.5, 2)],
    "log10": [_logspace(1e-320, 1e308, signed=False), _uniform(0.5, 2)],
    "log1p": [_uniform(-1, 10), _logspace(1e-300, 1e300, signed=False), -_logspace(1e-300, 0.99)],
    "sin": [_uniform(-10, 10), _uniform(-1e6, 1e6), _logspace(1e-300, 1)],
    "cos": [_uniform(-10, 10), _uniform(-1e6, 1e6), _logspace(1e-300, 1)],
    "tan": [_uniform(-10, 10), _uniform(-1e6, 1e6), _logspace(1e-300, 1)],
    "sinh": [_uniform(-710.4, 710.4), _uniform(-2, 2), _logspace(1e-300, 1)],
    "cosh": [_uniform(-710.4, 710.4), _uniform(-2, 2)],
    "tanh": [_uniform(-25, 25), _uniform(-2, 2), _logspace(1e-300, 1)],
    "asin": [_uniform(-1, 1), _logspace(1e-300, 1)],
    "acos": [_uniform(-1, 1), _logspace(1e-300, 1)],
    "atan": [_uniform(-10, 10), _logspace(1e-300, 1e300)],
    "asinh": [_uniform(-10, 10), _logspace(1e-300, 1e300)],
    "acosh": [_uniform(1, 10), _logspace(1, 1e300, signed=False)],
    "atanh": [_uniform(-1, 1), _logspace(1e-300, 1)],
}

SPECIALS = np.array(
    [
        0.0,
        -0.0,
        np.inf,
        -np.inf,
        np.nan,
        5e-324,
        -5e-324,
        2.2250738585072014e-308,
        -2.2250738585072014e-308,
        1.7976931348623157e308,
        -1.7976931348623157e308,
        1.0,
        -1.0,
        0.5,
        -0.5,
        2.0,
        709.78,
        710.5,
        -745.2,
        -750.0,
        1e6,
        1e22,
        -1e300,
    ]
)


def _np(name):
    return getattr(np, NP.get(name, name))


def _serial(name, *args):
    """``xp.name`` over NumPy arrays in chunks below the parallel threshold: the accuracy tests
    check the math, which the serial and the parallel loops share (that the parallel loops
    give the same bits is test_parallel_kernels_match_serial_and_threads'; compiling each
    function's parallel loop for these samples cost ~45 s of a cold make test)."""
    fn, chunk = getattr(xp, name), PARALLEL_THRESHOLD // 2
    starts = range(0, args[0].size, chunk)
    parts = [fn(*[xp.asarray(a[i : i + chunk]) for a in args]) for i in starts]
    return np.concatenate([np.asarray(p) for p in parts])


def _ulp_errors(got: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """|got - ref| in units of the float64 spacing at ref (ref in long double)."""
    r64 = ref.astype(np.float64)
    spacing = np.spacing(np.abs(r64))
    spacing[spacing == 0] = 5e-324
    err = np.abs(got.astype(np.longdouble) - ref) / spacing.astype(np.longdouble)
    same = (got == r64) | (np.isnan(got) & np.isnan(r64))
    return np.where(same, 0.0, err.astype(np.float64))


@pytest.mark.skipif(not LONG_DOUBLE_OK, reason="needs 80-bit long double for the reference")
@pytest.mark.parametrize("name", sorted(DOMAINS))
def test_float64_ulp_bound(name):
    x = np.concatenate(DOMAINS[name])
    got = _serial(name, x)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = _np(name)(x.astype(np.longdouble))
    err = _ulp_errors(got, ref)
    worst = int(np.argmax(err))
    assert err[worst] <= ULP_BOUND, f"{name}({x[worst]!r}) = {got[worst]!r}, {err[worst]:.2f} ulp"


@pytest.mark.parametrize("name", sorted(DOMAINS))
def test_float32_within_one_ulp(name):
    x = np.concatenate(DOMAINS[name]).astype(np.float32)
    got = _serial(name, x)
    assert got.dtype == np.float32
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref64 = _np(name)(x.astype(np.float64))
    ref = ref64.astype(np.float32)
    same = (got == ref) | (np.isnan(got) & np.isnan(ref))
    err = np.abs(got.astype(np.float64) - ref64) / np.spacing(np.abs(ref)).astype(np.float64)
    err = np.where(same, 0.0, err)
    worst = int(np.argmax(err))
    bound = F32_ULP_BOUND.get(name, 1.0)
    assert err[worst] <= bound, f"{name}({x[worst]!r}) = {got[worst]!r}, {err[worst]:.2f} ulp"


def _same_bits(got, want):
    """Equal values with equal signs of zero, NaN where NaN."""
    nan = np.isnan(want)
    return (np.isnan(got) == nan) & (nan | ((got == want) & (np.signbit(got) == np.signbit(want))))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", sorted(DOMAINS))
def test_special_values(name, dtype):
    x = SPECIALS.astype(dtype)
    got = np.asarray(getattr(xp, name)(xp.asarray(x)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = _np(name)(x)
    # exact where the value is special (zero, infinite, NaN, a bound of the domain); within the
    # ulp bound elsewhere
    special = (want == 0) | ~np.isfinite(want) | (np.abs(want) == 1) | ~np.isfinite(x) | (x == 0)
    ok = _same_bits(got, want)
    assert ok[special].all(), (x[special][~ok[special]], got[special][~ok[special]])
    close = np.abs(got - want) <= ULP_BOUND * np.spacing(np.abs(want).astype(dtype))
    assert (close | ok | special).all(), (x[~(close | ok)], got[~(close | ok)])


def test_atan2_special_values():
    v = np.array([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 5e-324, 1e308])
    y, x = np.meshgrid(v, v, indexing="ij")
    y, x = y.ravel(), x.ravel()
    for dtype in (np.float32, np.float64):
        yd, xd = y.astype(dtype), x.astype(dtype)
        got = np.asarray(xp.atan2(xp.asarray(yd), xp.asarray(xd)))
        want = np.arctan2(yd, xd)
        close = np.abs(got - want) <= 2 * np.spacing(np.abs(want))
        ok = _same_bits(got, want) | (close & (np.signbit(got) == np.signbit(want)))
        assert ok.all(), list(zip(yd[~ok], xd[~ok], got[~ok], want[~ok]))


def test_atan2_ulp_bound():
    y = np.concatenate([_uniform(-10, 10), _logspace(1e-300, 1e300)])
    x = np.concatenate([_uniform(-10, 10), RNG.permutation(_logspace(1e-300, 1e300))])
    got = np.asarray(xp.atan2(xp.asarray(y), xp.asarray(x)))
    if LONG_DOUBLE_OK:
        ref = np.arctan2(y.astype(np.longdouble), x.astype(np.longdouble))
        assert _ulp_errors(got, ref).max() <= ULP_BOUND
    y32, x32 = y.astype(np.float32), x.astype(np.float32)
    got32 = np.asarray(xp.atan2(xp.asarray(y32), xp.asarray(x32)))
    ref64 = np.arctan2(y32.astype(np.float64), x32.astype(np.float64))
    ref32 = ref64.astype(np.float32)
    err = np.abs(got32 - ref64) / np.spacing(np.abs(ref32)).astype(np.float64)
    assert np.where(got32 == ref32, 0.0, err).max() <= 3.0


@pytest.mark.parametrize("name", ["sin", "cos", "tan"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_large_arguments_of_sin_cos_tan(name, dtype):
    # beyond _vmath.SINCOS_LIMIT the kernels redo the element with libm (a long reduction)
    x = np.concatenate([_logspace(1e5, 3e38 if dtype == np.float32 else 1e308), [1e6, -1e6]])
    x = x.astype(dtype)
    got = np.asarray(getattr(xp, name)(xp.asarray(x)))
    want = _np(name)(x.astype(np.float64)).astype(dtype)
    np.testing.assert_allclose(got, want, rtol=4 * np.finfo(dtype).eps, atol=0)
    # strided and transposed operands take the general loop, with the same second pass
    sq = x[: 100 * 100].reshape(100, 100)
    got_t = np.asarray(getattr(xp, name)(xp.asarray(sq).T))
    np.testing.assert_array_equal(got_t, np.asarray(getattr(xp, name)(xp.asarray(sq.T.copy()))))


@pytest.mark.parametrize(
    "name, dtype",
    [(n, np.float64) for n in ("exp", "log1p", "tanh", "sin", "atan2")] + [("sin", np.float32)],
)
def test_parallel_kernels_match_serial_and_threads(name, dtype):
    import numba

    n = 300_000  # above the parallel threshold
    x = RNG.uniform(0.01, 0.99, n) * (1e7 if name == "sin" else 1.0)  # sin: some large ones
    x = x.astype(dtype)
    args = [xp.asarray(x)] + ([xp.asarray(x[::-1].copy())] if name == "atan2" else [])
    fn = getattr(xp, name)
    full = np.asarray(fn(*args))
    small = np.concatenate(
        [np.asarray(fn(*[a[i : i + 1000] for a in args])) for i in (0, n - 1000)]
    )
    np.testing.assert_array_equal(small, np.concatenate([full[:1000], full[n - 1000 :]]))
    before = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = np.asarray(fn(*args))
    finally:
        numba.set_num_threads(before)
    np.testing.assert_array_equal(one, full)


@pytest.mark.parametrize(
    "name, dtype",
    [
        ("tan", np.float64),
        ("log1p", np.float64),
        ("asinh", np.float64),
        ("atan2", np.float64),
        ("tan", np.float32),  # sin/cos share its reduction
        ("asin", np.float32),  # acos shares its polynomial
    ],
)
def test_loops_vectorise(name, dtype):
    """The scalar functions inline into a loop that LLVM vectorises (no call left in it); the
    float32 versions in float32 vectors (widening to double would halve the lanes)."""
    from numba import njit

    from strided.backends.cpu import _scalar as S

    fn = getattr(S, name)
    if name == "atan2":

        @njit(error_model="numpy")
        def loop(o, a):
            for i in range(a.shape[0]):
                o[i] = fn(a[i], a[i])
    else:

        @njit(error_model="numpy")
        def loop(o, a):
            for i in range(a.shape[0]):
                o[i] = fn(a[i])

    a = np.linspace(0.1, 0.9, 64).astype(dtype)
    o = np.empty_like(a)
    loop(o, a)
    llvm = loop.inspect_llvm(loop.signatures[0])
    lane = "double" if dtype == np.float64 else "float"
    assert re.search(rf"<\d+ x {lane}>", llvm), f"{name}: the loop did not vectorise"
    if dtype == np.float32:
        assert not re.search(r"<\d+ x double>", llvm), f"{name}: float32 widened to double"
    np.testing.assert_allclose(
        o,
        np.asarray(getattr(xp, name)(*([xp.asarray(a)] * (1 + (name == "atan2"))))),
        rtol=4 * np.finfo(dtype).eps,
    )


def test_pow_float32_accuracy_and_special_values():
    """float32 ** float32 in float32 arithmetic (_vmath.pow_f32): within 1.5 ulp of the float64
    power (measured 1.02; NumPy 2.4's own float32 power: 1.31), including |y log2 x| near 128
    where the double-float32 product matters most; subnormal results within one 2^-149;
    NumPy's special cases."""
    n = 100_000
    x = np.concatenate(
        [
            RNG.uniform(0, 3, n),
            RNG.uniform(-5, 5, n),
            np.exp(RNG.uniform(-80, 80, n)),
            RNG.uniform(0.9, 1.1, n),
            np.exp(RNG.uniform(-100, 88, n)),
        ]
    ).astype(np.float32)
    y = np.concatenate(
        [
            RNG.uniform(-10, 10, n),
            RNG.integers(-20, 20, n),
            RNG.uniform(-1.5, 1.5, n),
            RNG.uniform(-1000, 1000, n),
            RNG.uniform(-1.2, 1.2, n),
        ]
    ).astype(np.float32)
    got = np.asarray(xp.pow(xp.asarray(x), xp.asarray(y)))
    with np.errstate(all="ignore"):
        ref = np.power(x.astype(np.float64), y.astype(np.float64))
    normal = np.isfinite(ref) & (np.abs(ref) < 3.4e38) & (np.abs(ref) > 1.2e-38)
    spacing = np.spacing(np.abs(ref[normal]).astype(np.float32)).astype(np.float64)
    assert (np.abs(got[normal] - ref[normal]) / spacing).max() <= 1.5
    sub = (np.abs(ref) <= 1.2e-38) & (ref != 0)
    assert sub.sum() > 1000
    assert (np.abs(got[sub] - ref[sub]) / 2.0**-149).max() <= 1.0
    np.testing.assert_array_equal(np.isnan(got), np.isnan(ref))
    sp = [0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 2.0, -2.0, 0.5, -0.5, 3.0, -3.0]
    sp = np.array(sp + [1e-45, -1e-45, 3e38, -3e38], np.float32)
    a, b = (v.ravel() for v in np.meshgrid(sp, sp))
    got = np.asarray(xp.pow(xp.asarray(a), xp.asarray(b)))
    with np.errstate(all="ignore"):
        want = np.power(a, b)
    same = _same_bits(got, want) | (np.isnan(got) & np.isnan(want))
    close = np.isfinite(want) & (np.abs(got - want) <= np.spacing(np.abs(want)))
    ok = same | (close & (np.signbit(got) == np.signbit(want)))
    assert ok.all(), list(zip(a[~ok], b[~ok], got[~ok], want[~ok]))


_LOG_SPECIALS = {
    np.float32: [0.0, -0.0, np.inf, -np.inf, np.nan, -2.0, 1e-45, 3e-39, -1e-45, 1.0, 3.4028235e38],
    np.float64: [
        0.0,
        -0.0,
        np.inf,
        -np.inf,
        np.nan,
        -2.0,
        5e-324,
        1e-310,
        -5e-324,
        1.0,
        1.7976931348623157e308,
        -1.0,
        -0.5,
        2.2250738585072014e-308,
    ],
}


@pytest.mark.parametrize(
    "name, dtype",
    [(n, np.float32) for n in ("log", "log2", "log10")]
    + [(n, np.float64) for n in ("log", "log2", "log10", "log1p")],
)
def test_logs_second_pass_on_every_kernel_path(name, dtype):
    """log, log2 and log10 take positive normal finite x in the loop (float64 log1p: -1 < x <
    inf); the second pass (``_vmath.log_fix``, ``log1p_fix``) redoes zeros, negatives,
    subnormals, inf and NaN (log1p: x <= -1, inf, NaN).  Specials scattered through large
    (parallel) and small (serial) arrays, contiguous, transposed (the gathered loop) and
    broadcast give NumPy's results (the same bits where special, within the stated bound
    elsewhere), for one thread or two alike."""
    import numba

    rng = np.random.default_rng(8)
    specials = np.array(_LOG_SPECIALS[dtype], dtype)
    # the parallel loops for log (and float64 log1p, compiled by the test above) only: their
    # second pass is the same template for all, and each parallel loop costs seconds of a cold
    # make test
    n = 300 if name in ("log", "log1p") else 200
    wide = 80.0 if dtype == np.float32 else 700.0
    x = np.exp(rng.uniform(-wide, wide, (n, n))).astype(dtype)
    if name == "log1p":
        x[::3] = rng.uniform(-1.0, 1.0, x[::3].shape)
    x.flat[rng.integers(0, n * n, 500)] = rng.choice(specials, 500)
    f, g = getattr(xp, name), getattr(np, name)

    def check(got, a):
        got = np.asarray(got)
        with np.errstate(all="ignore"):
            want = g(a)
            ref = g(a.astype(np.longdouble if dtype == np.float64 else np.float64))
        same = (got == want) | (np.isnan(got) & np.isnan(want))
        finite = np.isfinite(want) & (want != 0)
        err = np.abs(got.astype(ref.dtype) - ref) / np.spacing(np.abs(want)).astype(ref.dtype)
        sign = (np.signbit(got) == np.signbit(want)) | np.isnan(want)
        bound = F32_ULP_BOUND.get(name, 1.0) if dtype == np.float32 else ULP_BOUND
        ok = np.where(finite, err <= bound, same & sign)
        assert ok.all(), list(zip(a[~ok], got[~ok], want[~ok]))[:5]

    before = numba.get_num_threads()
    try:
        results = []
        for threads in (1, min(2, numba.config.NUMBA_NUM_THREADS)):
            numba.set_num_threads(threads)
            for a in (x, x[:40, :40]):
                got = f(xp.asarray(a))
                check(got, a)
                check(f(xp.asarray(a).T), a.T)
                results.append(np.asarray(got))
            for v in (0.0, -1.0, specials[6], 2.5):  # one value broadcast along the rows
                col = np.full((n, 1), v, dtype)
                b = np.broadcast_to(col, (n, n))
                check(f(xp.broadcast_to(xp.asarray(col), (n, n))), b)
        np.testing.assert_array_equal(results[0], results[2])
    finally:
        numba.set_num_threads(before)


def test_pow_float32_second_pass_on_every_kernel_path():
    """float32 pow's loop handles positive normal bases and |y| < 1e30 only; the second pass
    (``_scalar.pow_fix``) redoes the rest.  Specials scattered through large (parallel) and
    small (serial) arrays, contiguous, transposed and with a scalar exponent or base, give
    NumPy's results (within one spacing where finite), for one thread or two alike."""
    import numba

    rng = np.random.default_rng(5)
    specials = np.array(
        [0.0, -0.0, np.inf, -np.inf, np.nan, -2.0, -0.5, 1e-45, -1e-45, 1.0, 3e38, 2e30, -2e30],
        np.float32,
    )
    n = 300
    x = rng.uniform(0.1, 4.0, (n, n)).astype(np.float32)
    y = rng.uniform(-6.0, 6.0, (n, n)).astype(np.float32)
    x.flat[rng.integers(0, n * n, 500)] = rng.choice(specials, 500)
    y.flat[rng.integers(0, n * n, 500)] = rng.choice(np.concatenate([specials, [2.0, 3.0]]), 500)

    def check(got, want):
        got, want = np.asarray(got), np.asarray(want)
        same = (got == want) | (np.isnan(got) & np.isnan(want))
        close = np.isfinite(want) & (np.abs(got - want) <= np.spacing(np.abs(want)))
        ok = (same | close) & ((np.signbit(got) == np.signbit(want)) | np.isnan(want))
        assert ok.all(), list(zip(*np.nonzero(~ok)))[:5]

    before = numba.get_num_threads()
    try:
        results = []
        for threads in (1, min(2, numba.config.NUMBA_NUM_THREADS)):
            numba.set_num_threads(threads)
            with np.errstate(all="ignore"):
                for a, b in ((x, y), (x[:40, :40], y[:40, :40])):
                    got = xp.pow(xp.asarray(a), xp.asarray(b))
                    check(got, np.power(a, b))
                    got_t = xp.pow(xp.asarray(a).T, xp.asarray(b).T)
                    check(got_t, np.power(a.T, b.T))
                    results.append(np.asarray(got))
                check(xp.pow(xp.asarray(x), -3e38), np.power(x, np.float32(-3e38)))
                check(xp.pow(xp.asarray(x), 2.5), np.power(x, np.float32(2.5)))
                check(xp.pow(-2.0, xp.asarray(y)), np.power(np.float32(-2.0), y))
        np.testing.assert_array_equal(results[0], results[2])
    finally:
        numba.set_num_threads(before)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_pow_loop_vectorises(dtype):
    from numba import njit

    from strided.backends.cpu import _scalar as S

    fn = S.pow_

    @njit(error_model="numpy")
    def loop(o, a):
        for i in range(a.shape[0]):
            o[i] = fn(a[i], a[i])

    a = np.linspace(0.1, 0.9, 64).astype(dtype)
    o = np.empty_like(a)
    loop(o, a)
    llvm = loop.inspect_llvm(loop.signatures[0])
    lane = "double" if dtype == np.float64 else "float"
    assert re.search(rf"<\d+ x {lane}>", llvm), f"pow {dtype.__name__}: the loop did not vectorise"
    if dtype == np.float32:  # float32 pow stays in float32 vectors (16 lanes, not 8)
        assert not re.search(r"<\d+ x double>", llvm)
    np.testing.assert_allclose(o, a**a, rtol=4e-7 if dtype == np.float32 else 1e-15)


def _pow_cases(n):
    """(x, y) float64 samples over the ranges where pow is hard: moderate, near 1 with huge
    exponents, huge and tiny bases, results near overflow and underflow, subnormal bases."""
    x = [
        RNG.uniform(0.01, 100, n),
        1 + RNG.uniform(-1e-3, 1e-3, n),
        np.exp(RNG.uniform(-700, 700, n)),
    ]
    y = [RNG.uniform(-50, 50, n), RNG.uniform(-1e5, 1e5, n), RNG.uniform(-1, 1, n)]
    edge = RNG.uniform(1.5, 3, n)
    x += [edge, edge, RNG.uniform(0, 1, n) * 1e-310, -RNG.uniform(0.1, 10, n)]
    y += [
        709.7 / np.log(edge) * RNG.uniform(0.9, 1.0, n),
        -744.0 / np.log(edge) * RNG.uniform(0.9, 1.0, n),
    ]
    y += [RNG.uniform(-1, 1, n), RNG.integers(-60, 60, n).astype(np.float64)]
    return np.concatenate(x), np.concatenate(y)


def test_pow_float64_ulp_bound_and_special_values():
    """float64 ** float64 (_vmath.pow_f64: a double-double log from a 128-row table, exp with
    the low part carried): within ULP_BOUND of a long-double reference (measured 1.3 ulp) on
    normal results, within one subnormal step below; NumPy's special values exactly."""
    x, y = _pow_cases(40_000)
    got = np.asarray(xp.pow(xp.asarray(x), xp.asarray(y)))
    with np.errstate(all="ignore"):
        ref = np.power(x.astype(np.longdouble), y.astype(np.longdouble))
        want = np.power(x, y)
    ref64 = ref.astype(np.float64)
    normal = np.isfinite(ref64) & (np.abs(ref64) >= np.finfo(np.float64).tiny)
    assert normal.sum() > 200_000
    err = _ulp_errors(got[normal], ref[normal])
    worst = int(np.argmax(err))
    assert err[worst] <= ULP_BOUND, (x[normal][worst], y[normal][worst], err[worst])
    sub = ~normal & np.isfinite(ref64)
    assert np.all(np.abs(got[sub] - want[sub]) <= 5e-324), "subnormal results"
    big = ~np.isfinite(ref64) & ~np.isnan(ref64)
    np.testing.assert_array_equal(got[big], want[big])
    sp = [0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 2.0, -2.0, 0.5, -0.5, 3.0, -3.0, 2.5]
    sp = np.array(sp + [5e-324, -5e-324, 1e-310, 1.7e308, -1.7e308, 1e300, -1e300])
    a, b = (v.ravel() for v in np.meshgrid(sp, sp))
    got = np.asarray(xp.pow(xp.asarray(a), xp.asarray(b)))
    with np.errstate(all="ignore"):
        want = np.power(a, b)
    same = _same_bits(got, want) | (np.isnan(got) & np.isnan(want))
    close = np.isfinite(want) & (np.abs(got - want) <= 2 * np.spacing(np.abs(want)))
    ok = same | (close & (np.signbit(got) == np.signbit(want)))
    assert ok.all(), list(zip(a[~ok], b[~ok], got[~ok], want[~ok]))
    # a Python scalar exponent takes the same function
    got = np.asarray(xp.pow(xp.asarray(x[:1000]), 2.75))
    assert _ulp_errors(got, np.power(x[:1000].astype(np.longdouble), 2.75)).max() <= ULP_BOUND


def test_pow_log_table_holds_what_pow_f64_assumes():
    """Each row's -log(1/c) is exact to 12 bits beyond float64 (so no low part is stored), 1/c
    is 1 on the row holding 1.0, and every z of a row gives |z/c - 1| <= 2^-7."""
    from strided.backends.cpu import _vmath as V
    from strided.backends.cpu._vmath_tables import POW_INVC, POW_LOGC

    invc = POW_INVC.astype(np.longdouble)
    err = np.abs(-np.log(invc) - POW_LOGC.astype(np.longdouble))
    assert np.all(err <= np.spacing(np.abs(POW_LOGC)) * 2.0**-11 + 1e-30)
    rows = np.arange(128, dtype=np.int64)
    lo = ((rows << 45) + V.POW_OFF).view(np.float64)
    hi = (((rows + 1) << 45) + V.POW_OFF - 1).view(np.float64)
    assert max(np.abs(lo * POW_INVC - 1).max(), np.abs(hi * POW_INVC - 1).max()) <= 2.0**-7 * 1.001
    one = ((np.float64(1.0).view(np.int64) - V.POW_OFF) >> 45) & 127
    assert POW_INVC[one] == 1.0 and POW_LOGC[one] == 0.0


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [100, 200_000])
def test_pow_by_two_half_minus_one_and_one(dtype, n):
    """x ** 2, ** 0.5, ** -1 and ** 1 with a Python scalar are one IEEE operation each (x * x,
    sqrt, 1 / x, x: correctly rounded), with the standard's special cases: (-0) ** 0.5 is +0 and
    (-inf) ** 0.5 is +inf (NumPy's sqrt shortcut gives -0 and NaN there)."""
    sp = [0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 2.0, -2.0, 0.5, -0.5, 1e-30, 3e38]
    a = np.concatenate([np.array(sp), RNG.uniform(-10, 10, n)]).astype(dtype)
    with np.errstate(all="ignore"):
        refs = {
            2: a * a,
            0.5: np.where((a == 0) | (a == -np.inf), np.abs(a), np.sqrt(a)),
            -1: dtype(1) / a,
            1: a,
        }
    s = xp.asarray(a)
    # stepped views: copied into the output first, the same loops then run in place
    views = ((s, slice(None)), (s[::2], slice(None, None, 2)), (s[::-3], slice(None, None, -3)))
    for c, want in refs.items():
        for exponent in (c, float(c)):
            for view, part in views:
                got = np.asarray(xp.pow(view, exponent))
                assert got.dtype == want.dtype
                ok = (got == want[part]) & (np.signbit(got) == np.signbit(want[part]))
                ok |= np.isnan(got) & np.isnan(want[part])
                assert ok.all(), (exponent, part, got[~ok], want[part][~ok])


def test_stepped_and_transposed_bases_take_the_special_loops(monkeypatch):
    # x[::2] ** 2 had run libm's pow per element (1M float64: 14.6 ms, NumPy 0.64)
    import strided.backends.cpu._kern_arith as A

    calls = []

    def counted(f):
        return lambda *args: calls.append(f(*args))

    for name in ("pow_special", "ipow"):
        monkeypatch.setattr(A, name, counted(getattr(A, name)))
    a = RNG.uniform(-3, 3, (300, 800))
    s = xp.asarray(a)
    np.testing.assert_array_equal(np.asarray(s[:, ::2] ** 2), a[:, ::2] ** 2)
    with np.errstate(invalid="ignore"):
        np.testing.assert_array_equal(np.asarray(xp.pow(s[::3].T, 0.5)), np.sqrt(a[::3].T))
    i = xp.asarray(a.astype(np.int32))
    np.testing.assert_array_equal(np.asarray(i[::-1, ::3] ** 3), a.astype(np.int32)[::-1, ::3] ** 3)
    assert len(calls) == 3


@pytest.mark.parametrize(
    "dtype,n",
    [("int8", 100), ("uint8", 1000), ("int32", 100), ("uint32", 1000), ("int64", 100)]
    + [("int32", 200_000)],  # the parallel loop (the same code for every dtype: compile time)
)
def test_integer_array_to_a_python_int_power(dtype, n):
    """An integer array to a Python int power (the block loop of _kern_arith: the exponent's bits
    outside the element loops), serial and parallel sizes: NumPy's values, wrapping around in
    the dtype's width, 0 and 1 included; a transposed operand (the generic loop) agrees."""
    info = np.iinfo(dtype)
    a = RNG.integers(max(info.min, -60), 60, n).astype(dtype)
    for exponent in (0, 1, 2, 3, 5, 13, 64, 127, 2**40 + 1):
        if exponent > info.max:
            continue
        with np.errstate(all="ignore"):
            want = a**exponent
        got = np.asarray(xp.pow(xp.asarray(a), exponent))
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want, err_msg=f"{dtype} ** {exponent}")
    square = a[: (n // 20) * 20].reshape(20, -1)
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(np.asarray(xp.asarray(square).T ** 7), square.T**7)
        # a stepped base: copied into the output, then raised there in place
        np.testing.assert_array_equal(np.asarray(xp.asarray(a)[::-2] ** 5), a[::-2] ** 5)


def _scaled_error(got, ref, scale, dtype) -> float:
    """|got - ref| in ulp of ``scale`` (dtype's ulp)."""
    ok = np.isfinite(ref)
    unit = np.spacing(np.abs(scale[ok]).astype(dtype)).astype(np.float64)
    return float((np.abs(got[ok].astype(np.float64) - ref[ok]) / unit).max())


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_logaddexp_and_hypot_accuracy_and_special_values(dtype):
    """logaddexp: within 6 ulp of max(|x|, |y|, |result|) in float32 and 3 in float64 (the
    formula's own cancellation near zero, which NumPy's has too); hypot within 2 ulp (float64)
    and 1 ulp (float32, computed in double).  Special values as NumPy's."""
    rng = np.random.default_rng(11)
    for scale in (1e-3, 1.0, 30.0, 1e4):
        a = (rng.standard_normal(200_000) * scale).astype(dtype)
        b = (rng.standard_normal(200_000) * scale).astype(dtype)
        wide_a, wide_b = a.astype(np.longdouble), b.astype(np.longdouble)
        ref = np.logaddexp(wide_a, wide_b).astype(np.float64)
        got = _serial("logaddexp", a, b)
        size = np.maximum(np.maximum(np.abs(a), np.abs(b)).astype(np.float64), np.abs(ref))
        assert _scaled_error(got, ref, size, dtype) <= (6.0 if dtype == np.float32 else 3.0)
        ref = np.hypot(wide_a, wide_b).astype(np.float64)
        got = _serial("hypot", a, b)
        assert _scaled_error(got, ref, ref, dtype) <= (1.0 if dtype == np.float32 else 2.0)
    tiny = np.finfo(dtype).smallest_subnormal
    big = np.finfo(dtype).max
    sp = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, tiny, big, -big], dtype)
    x, y = (m.ravel() for m in np.meshgrid(sp, sp))
    for fn, ref_fn in ((xp.hypot, np.hypot), (xp.logaddexp, np.logaddexp)):
        got = np.asarray(fn(xp.asarray(x), xp.asarray(y)))
        want = ref_fn(x, y)
        assert np.array_equal(np.isnan(got), np.isnan(want))
        finite = np.isfinite(want)
        assert np.array_equal(got[~finite & ~np.isnan(want)], want[~finite & ~np.isnan(want)])
        np.testing.assert_allclose(got[finite], want[finite], rtol=4 * np.finfo(dtype).eps)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", ["log", "log2", "log10"])
def test_log_rows_redo_special_chunks_in_vector_loops_with_the_same_bits(name, dtype):
    """The log kernels' unit-stride rows (``_scalar.log_rows`` and co.) go by chunks: a chunk
    holding a zero, a negative, a subnormal, inf or NaN runs the loop's formula with the
    special cases as selects instead of a branch and a call per element (16 ms for 1M float32
    half negative on one thread).  Both loops vectorise without a call; the specials are
    NumPy's, and every other element has the bits it has in a chunk without specials."""
    from numba import njit

    from strided.backends.cpu import _scalar as S

    rows = getattr(S, f"{name}_rows")

    @njit(error_model="numpy")
    def run(o, a):
        rows(o, a)

    rng = np.random.default_rng(3)
    clean = np.exp(rng.uniform(-20, 20, 5000)).astype(dtype)  # (chunks of 2048: all hit below)
    mixed = clean.copy()
    tiny = np.finfo(dtype).smallest_subnormal
    mixed[::97] = 0.0
    mixed[5::89] = -clean[5::89]
    mixed[7::501] = np.resize(np.array([np.inf, np.nan, tiny, -np.inf], dtype), 10)
    got_clean, got_mixed = np.empty_like(clean), np.empty_like(mixed)
    run(got_clean, clean)
    run(got_mixed, mixed)
    same = mixed == clean
    np.testing.assert_array_equal(got_mixed[same], got_clean[same])
    with np.errstate(all="ignore"):
        want = getattr(np, name)(mixed)
    special = ~same & ~((mixed > 0) & (mixed < np.inf))
    np.testing.assert_array_equal(got_mixed[special], want[special])
    sub = mixed == tiny
    np.testing.assert_allclose(got_mixed[sub], want[sub], rtol=4 * np.finfo(dtype).eps)
    np.testing.assert_allclose(got_clean, getattr(np, name)(clean), rtol=4 * np.finfo(dtype).eps)
    llvm = run.inspect_llvm(run.signatures[0])
    lane = "double" if dtype == np.float64 else "float"
    assert len(re.findall(rf"<\d+ x {lane}>", llvm)) > 10, "the loops did not vectorise"
    # (the rows function itself is called once per row; no _vmath function from its loops)
    assert not re.search(r"call [^\n]*@\"?_ZN7strided8backends3cpu6_vmath", llvm), "a call left"


def test_second_pass_by_chunks_vectorises():
    """float64 log1p's second pass on unit-stride rows (``_vmath._unit_fix``) tests 256
    elements at a time and redoes a chunk holding x <= -1, inf or NaN whole, selecting the
    redone values: its loops vectorise, the redone values are NumPy's, the others are kept."""
    from strided.backends.cpu import _vmath as V

    fix = V._unit_fix(V.log1p_needs_full, V.log1p)
    x = np.random.default_rng(4).uniform(-3, 3, 1000)
    main = x + 100.0  # what a main pass left: wrong exactly where needs() holds
    fix(main, x, x.size)
    redone = x <= -1
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(main[redone], np.log1p(x[redone]))
    np.testing.assert_array_equal(main[~redone], x[~redone] + 100.0)
    llvm = fix.inspect_llvm(fix.signatures[0])
    assert re.search(r"<\d+ x double>", llvm), "the redo loop did not vectorise"


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_stepped_operands_of_simd_ops_are_staged_through_unit_strides(dtype, monkeypatch):
    """pow/atan2/hypot/logaddexp/sqrt/reciprocal/sign/floor_divide/remainder copy a stepped or
    transposed operand into the output's layout first (their SIMD loops need unit strides): the
    values are the contiguous kernel's to the bit, and NumPy's within the ops' bounds."""
    import strided.backends.cpu as cpu

    staged = []

    def spy(out, inputs, any_layout, f=cpu._staged_operands):
        result = f(out, inputs, any_layout)
        copies = [b for a, b in zip(inputs, result) if a is not b]
        assert all(b._strides == out._strides for b in copies)  # laid out like the output
        staged.append(len(copies))
        return result

    monkeypatch.setattr(cpu, "_staged_operands", spy)
    # (sizes from _STAGE_MIN, under the parallel size: the serial loops other tests compile)
    a = RNG.uniform(0.1, 3, (40, 60)).astype(dtype)
    b = RNG.uniform(-2, 2, (60, 40)).astype(dtype)
    sa, sb = xp.asarray(a), xp.asarray(b)
    assert cpu._STAGE_MIN <= 1200 < cpu.PARALLEL_THRESHOLD
    cases = {  # op: (strided operands, NumPy's function)
        "pow": ((sa[::2], sb.T[::2]), np.power),
        "atan2": ((sa[:, ::2], 0.5), np.arctan2),
        "hypot": ((sb.T, sa), np.hypot),
        "logaddexp": ((sa[::-1, ::2], sb.T[:, 1::2]), np.logaddexp),
        "sqrt": ((sa[:, ::2],), np.sqrt),
        "reciprocal": ((sb.T[::2],), np.reciprocal),
        "sign": ((sb[::-1].T[:, ::2],), np.sign),
        "floor_divide": ((sa[:, 1::2], sb.T[:, ::2]), np.floor_divide),
        "remainder": ((sb.T[::2], 0.75), np.remainder),
        # the _vmath functions with a second pass over their operand
        "exp": ((sb[:, ::2],), np.exp),
        "log": ((sa[::2],), np.log),
        "log1p": ((sa[:, 1::2],), np.log1p),
        "log2": ((sa[::-1, ::2],), np.log2),
        "log10": ((sa.T[::2],), np.log10),
        "sin": ((sb.T[::2],), np.sin),
        "cos": ((sb[:, ::2],), np.cos),
        "tan": ((sb.T[:, 1::2],), np.tan),
    }
    assert set(cases) == set(cpu._STAGED_OPS)
    for name, (args, numpy_fn) in cases.items():
        staged.clear()
        got = np.asarray(getattr(xp, name)(*args))
        assert staged and staged[0] >= 1, name  # a stepped operand was copied
        dense = [
            xp.asarray(np.ascontiguousarray(np.asarray(x))) if hasattr(x, "shape") else x
            for x in args
        ]
        np.testing.assert_array_equal(got, np.asarray(getattr(xp, name)(*dense)), err_msg=name)
        want = numpy_fn(*[np.asarray(x) if hasattr(x, "shape") else dtype(x) for x in args])
        np.testing.assert_allclose(
            got, want, rtol=4e-6 if dtype == np.float32 else 1e-14, err_msg=name
        )


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_stepped_vectors_of_simd_ops_are_staged_in_the_stepped_loop(dtype, monkeypatch):
    """Vectors at a step through a SIMD op (``_STAGED_OPS``) on the dispatcher's stepped lane,
    from ``_STAGE_MIN`` elements: each stepped operand is copied to unit stride (one copy per
    stepped operand, scalars and dense vectors as they are) and the dense loop runs on the
    copies: the contiguous kernel's values to the bit; below ``_STAGE_MIN`` nothing is copied."""
    import strided.backends.cpu as cpu

    copies = []

    def spy(key, args, f=cpu._copy_call):
        copies.append(args[9])  # the copied operand's step
        return f(key, args)

    n = cpu._STAGE_MIN + 300
    base = RNG.uniform(0.1, 3, 3 * n + 2).astype(dtype)
    s = xp.asarray(base)
    # (steps other than 2: vectors at step 2 take the loops that read them as pairs)
    x, y, dense_vec = s[::3][:n], s[::-2][:n], s[5 : 5 + n]
    cases = [("sqrt", (x,)), ("reciprocal", (y,)), ("sign", (x,)),
             ("pow", (x, y)), ("atan2", (y, dense_vec)), ("hypot", (0.5, x)),
             ("logaddexp", (y, 2.0)), ("floor_divide", (x, y)),
             ("remainder", (0.75, y)), ("exp", (y,)), ("log", (x,)), ("log1p", (y,)),
             ("log2", (x,)), ("log10", (y,)), ("sin", (x,)), ("cos", (y,)),
             ("tan", (x,))]  # fmt: skip
    assert {c[0] for c in cases} == set(cpu._STAGED_OPS)
    monkeypatch.setattr(cpu, "_copy_call", spy)
    for name, args in cases:
        fn = getattr(xp, name)
        contiguous = [xp.asarray(np.asarray(a)) if isinstance(a, xp.Array) else a for a in args]
        want = np.asarray(fn(*contiguous))
        for _ in range(2):  # the rule's first call, then the remembered spec's lane
            copies.clear()
            got = fn(*args)
            np.testing.assert_array_equal(np.asarray(got), want, err_msg=name)
            assert sorted(copies) == sorted(
                a._strides[0] for a in args[:3] if isinstance(a, xp.Array) and a._strides != (1,)
            )
    # floor_divide and remainder stage integer operands too (their contiguous loops vectorise)
    ints = RNG.integers(-99, 99, 3 * n + 2).astype(np.int32)
    ints[ints == 0] = 7
    si = xp.asarray(ints)
    for name in ("floor_divide", "remainder"):
        fn = getattr(xp, name)
        copies.clear()
        got = np.asarray(fn(si[::3][:n], si[::-2][:n]))
        np.testing.assert_array_equal(got, getattr(np, name)(ints[::3][:n], ints[::-2][:n]))
        assert sorted(copies) == [-2, 3], name
    copies.clear()
    short = s[::3][: cpu._STAGE_MIN - 1]
    np.testing.assert_array_equal(
        np.asarray(xp.sqrt(short)), np.sqrt(base[::3][: cpu._STAGE_MIN - 1])
    )
    assert copies == []  # below _STAGE_MIN: the stepped loop itself
