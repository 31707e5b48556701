"""float floor_divide follows NumPy's divmod, also where x / y rounds onto an integer (found by
benchmarks/bench_ops.py's check of every result against NumPy)."""

from __future__ import annotations

import re

import numpy as np
import pytest

import strided as xp


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_floor_divide_matches_numpy(dtype):
    rng = np.random.default_rng(1)
    x = rng.uniform(-10, 10, 200_000).astype(dtype)
    y = rng.uniform(-10, 10, 200_000).astype(dtype)
    x = np.concatenate([x, np.array([-6.2013426, -8.362473, 1.0, -1.0, 0.0, -0.0, 5.0], dtype)])
    y = np.concatenate([y, np.array([0.016625583, 0.076022476, 0.0, 0.0, 3.0, 3.0, -0.0], dtype)])
    with np.errstate(all="ignore"):
        want = np.floor_divide(x, y)
    got = np.asarray(xp.floor_divide(xp.asarray(x), xp.asarray(y)))
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want))


@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "uint8", "uint16", "uint32", "int64"])
def test_large_int_array_by_python_int(dtype):
    """Arrays over a Python int take the float64 route (a multiplication by 1/d corrected by
    the exact remainder; exact for <= 32-bit integers): every quotient, extremes and exact
    multiples included, equals NumPy's integer floor division, for the serial loop (60,000
    and 1000 elements) and, for int32, the threaded one (200,000: the same row loop over
    chunks, so one dtype checks the chunking; compiling it per dtype cost ~25 s of make test)."""
    info = np.iinfo(dtype)
    rng = np.random.default_rng(3)
    n = 200_000 if dtype == "int32" else 60_000
    a = rng.integers(info.min, info.max, n, endpoint=True).astype(dtype)
    a[:6] = [info.min, info.max, 0, 1, info.min + 1, info.max - 1]
    for d in (1, 2, 3, 7, 1000, -2, -3, -7, -1, int(info.max), int(info.min), 12345, -12345):
        if not info.min <= d <= info.max or (d == -1 and info.min == 0):
            continue
        for part in (a, a[:1000]):
            got = np.asarray(xp.asarray(part) // d)
            with np.errstate(all="ignore"):
                want = part // np.array(d, dtype)
            np.testing.assert_array_equal(got, want, err_msg=f"{dtype} // {d}")


@pytest.mark.parametrize("dtype", ["int8", "uint16", "int32"])
def test_repeated_small_calls_by_a_python_int_keep_numpys_quotients(dtype):
    """Repeated calls of one shape run a memoized one-call plan (the multiplication route for
    int divisors, the division loop for 0 and -1): each call of an offset view, by every
    divisor in turn, equals NumPy's integer floor division."""
    info = np.iinfo(dtype)
    a = np.random.default_rng(5).integers(info.min, info.max, 1200, endpoint=True).astype(dtype)
    a[7:11] = [info.min, info.max, 0, -1 if info.min else 1]
    x = xp.asarray(a)[7:1007]  # an offset view, dense
    for d in (7, 0, -1, 3, -7, int(info.max), 1):
        if not info.min <= d <= info.max:
            continue
        with np.errstate(all="ignore"):
            want = a[7:1007] // np.array(d, dtype)
        for _ in range(3):
            got = np.asarray(xp.floor_divide(x, d))
            np.testing.assert_array_equal(got, want, err_msg=f"{dtype} // {d}")


def _bits_equal(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    got, want = np.ascontiguousarray(got), np.ascontiguousarray(want)
    raw = got.view(np.uint8).reshape(got.shape + (-1,)) == want.view(np.uint8).reshape(
        want.shape + (-1,)
    )
    return raw.all(-1) | (np.isnan(got) & np.isnan(want))


def _divmod_cases(dtype, n, rng):
    """Operand pairs where the select-only floor_divide and remainder are hardest: exact
    multiples, quotients just below and far above 2^52 (2^23 for float32, which the libm pass
    redoes), operands 60 orders of magnitude apart, subnormals, and every special value."""
    fi = np.finfo(dtype)
    b = np.round(rng.uniform(-20, 20, n))
    xs = [b * rng.integers(-1000, 1000, n), rng.uniform(-1, 1, n) * 2.0 ** rng.integers(15, 70, n)]
    ys = [b, rng.uniform(-3, 3, n)]
    xs.append(rng.standard_normal(n) * 10.0 ** rng.integers(-30, 30, n))
    ys.append(rng.standard_normal(n) * 10.0 ** rng.integers(-30, 30, n))
    sp = [0.0, -0.0, 1.0, -1.0, 2.5, -2.5, np.inf, -np.inf, np.nan, 3.0, 7.0, -7.0, 1e-30]
    sp = np.array(sp + [fi.max, -fi.max, fi.tiny, fi.smallest_subnormal, -fi.smallest_subnormal])
    a, c = (v.ravel() for v in np.meshgrid(sp, sp))
    xs.append(a)
    ys.append(c)
    return np.concatenate(xs).astype(dtype), np.concatenate(ys).astype(dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("size", [5000, 150_000])
def test_vectorised_divmod_is_numpys_bit_for_bit(dtype, size):
    """floor_divide and remainder of floats run as selects over an fma-exact remainder (the
    loops vectorise) with a libm pass for quotients beyond 2^52 (2^23): NumPy's results bit for
    bit on the serial and the threaded kernels, contiguous, transposed and with a scalar; where
    the standard's special cases differ from NumPy (division by zero, infinite operands),
    floor_divide is x1 / x2."""
    x, y = _divmod_cases(dtype, size // 3, np.random.default_rng(7))
    half = (x.size // 2) * 2
    layouts = [(x, y), (x[:half].reshape(2, -1).T, y[:half].reshape(2, -1).T)]
    layouts.append((x, np.asarray(dtype(1.7))))
    for a, b in layouts:
        with np.errstate(all="ignore"):
            q = a / b
            special = (b == 0) | ~np.isfinite(a) | ~np.isfinite(b)
            want_rem = np.remainder(a, b)
            want_fd = np.where(special, q, np.floor_divide(a, b))
        xa, xb = xp.asarray(a), (xp.asarray(b) if b.ndim else float(b))
        got_fd = np.asarray(xp.floor_divide(xa, xb))
        got_rem = np.asarray(xp.remainder(xa, xb))
        assert got_fd.dtype == dtype and got_rem.dtype == dtype
        for got, want, name in ((got_fd, want_fd, "floor_divide"), (got_rem, want_rem, "rem")):
            ok = _bits_equal(got, np.broadcast_to(want, got.shape))
            bad = np.flatnonzero(~ok.ravel())[:3]
            assert ok.all(), (name, [(np.ravel(a)[i], np.ravel(b)[i % b.size]) for i in bad])


@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "uint8", "uint16", "uint32"])
def test_small_int_arrays_divide_exactly_through_float64(dtype):
    """floor_divide and remainder of two arrays of integers up to 32 bits run in float64 (the
    rounded quotient never crosses an integer): every pair equals NumPy's integer division,
    extremes against each other, zero divisors (0, as NumPy gives) and INT_MIN // -1
    (wrapping to INT_MIN), for the serial loop and, for int32, the threaded one."""
    info = np.iinfo(dtype)
    rng = np.random.default_rng(21)
    n = 200_000 if dtype == "int32" else 30_000
    a = rng.integers(info.min, info.max, n, endpoint=True).astype(dtype)
    b = rng.integers(info.min, info.max, n, endpoint=True).astype(dtype)
    b[: n // 3] = rng.integers(max(info.min, -9), 10, n // 3)  # small divisors, zeros among them
    edges = [info.min, info.min + 1, info.max, info.max - 1, 0, 1, 2, 3]
    edges += [-1, -2, -3] if info.min else []
    grid = np.array([(x, y) for x in edges for y in edges], dtype=dtype)
    a, b = np.concatenate([a, grid[:, 0]]), np.concatenate([b, grid[:, 1]])
    with np.errstate(all="ignore"):
        want_q, want_r = np.floor_divide(a, b), np.remainder(a, b)
    for s in (slice(None), slice(0, 5000)):
        x, y = xp.asarray(a[s]), xp.asarray(b[s])
        q, r = np.asarray(xp.floor_divide(x, y)), np.asarray(xp.remainder(x, y))
        assert q.dtype == dtype and r.dtype == dtype
        np.testing.assert_array_equal(q, want_q[s])
        np.testing.assert_array_equal(r, want_r[s])


@pytest.mark.parametrize(
    "a, b, lane",
    [
        (np.linspace(-50, 50, 64), np.linspace(1, 3, 64), "double"),
        (  # integers of up to 32 bits divide in float64
            np.arange(-32, 32, dtype=np.int32),
            np.arange(1, 65, dtype=np.int32) * np.int32(-1) ** np.arange(64, dtype=np.int32),
            "double",
        ),
    ],
)
def test_divmod_loops_vectorise(a, b, lane):
    from numba import njit

    from strided.backends.cpu import _scalar as S

    fd, rem = S.floor_divide, S.remainder

    @njit(error_model="numpy")
    def loop(o, p, a, b):
        for i in range(a.shape[0]):
            o[i] = fd(a[i], b[i])
            p[i] = rem(a[i], b[i])

    o, p = np.empty_like(a), np.empty_like(a)
    loop(o, p, a, b)
    llvm = loop.inspect_llvm(loop.signatures[0])
    assert re.search(rf"<\d+ x {lane}>", llvm), f"{a.dtype} floor_divide/remainder: no vector"
    np.testing.assert_array_equal(o, np.floor_divide(a, b))
    np.testing.assert_array_equal(p, np.remainder(a, b))


def test_the_multiplication_route_vectorises_without_gathers():
    """The Python-int route's loop (``_kern_arith._fdiv_run``) compiles to vector loads; reading
    the input at ``xo + k`` instead of through a slice once made them gathers (2x slower)."""
    from numba import njit

    from strided.backends.cpu import _kern_arith as A

    run = njit(error_model="numpy")(A._fdiv_run.py_func)  # a fresh, inspectable compilation
    x = np.arange(-500, 500, dtype=np.int32)
    o = np.empty(990, np.int32)
    run(o, x, 10, 990, np.int64(-7))
    np.testing.assert_array_equal(o, x[10:] // np.int32(-7))
    llvm = run.inspect_llvm(run.signatures[0])
    assert re.search(r"<\d+ x double>", llvm) and "gather" not in llvm
