"""Complex elementwise functions at non-finite, subnormal and huge inputs (issue 13).

* The standard's special cases (its tables, transcribed in ``tests/complex_special.py``; C99 Annex
  G) hold for every complex function that has them, in complex64 and complex128, the symmetries
  the standard states (``f(conj(z)) == conj(f(z))``, odd functions) included.
* Elsewhere NumPy is the oracle: the result matches NumPy, or NumPy computed in a wider precision
  (complex long double; complex128 for complex64) and rounded back, which is how results that NumPy
  spoils by overflowing intermediate steps (``1 / (1e308 + 1e308j)`` is ``-0j`` in NumPy) are
  checked.
* Regressions found by the differential fuzzer, each with its exact value.

What stays open: matmul/tensordot/vecdot of non-finite or huge values.  BLAS (NumPy's and ours)
and the compiled small-product loop sum products in an order of their own, with FMAs, and scale by
``alpha`` (``inf * 0``), so which NaN or infinity comes out is the library's choice; the fuzzer
counts those as "open" (``tests/fuzz_programs.py``: ``_open``).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import strided as xp

from .complex_special import DERIVED, FUNCTIONS, TABLES, matches, special_value
from .fuzz_programs import _elementwise_ref

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

INF, NAN = math.inf, math.nan
MAX = 1.7976931348623157e308
WIDE_OK = np.finfo(np.longdouble).nmant >= 63
NP = {
    "asin": "arcsin",
    "acos": "arccos",
    "atan": "arctan",
    "asinh": "arcsinh",
    "acosh": "arccosh",
    "atanh": "arctanh",
    "pow": "power",
}
UNARY = sorted(FUNCTIONS + ("reciprocal", "square"))
EDGE = [
    0.0,
    -0.0,
    1.0,
    -1.0,
    0.5,
    -2.5,
    3.0,
    INF,
    -INF,
    NAN,
    5e-324,
    -5e-324,
    2.2250738585072014e-308,
    1e-300,
    1e300,
    -1e300,
    MAX,
    -MAX,
    3e38,
    1e-45,
]
GRID = np.array([complex(a, b) for a in EDGE for b in EDGE])
DTYPES = ["complex64", "complex128"]


def _grid(dtype):
    with np.errstate(over="ignore"):
        return GRID.astype(dtype)


def _extreme(dtype, n=3000, seed=13):
    """Random values over the whole exponent range, parts of unrelated magnitudes."""
    rng = np.random.default_rng(seed)
    hi, lo = (307, -323) if dtype == "complex128" else (38, -45)
    re = rng.standard_normal(n) * 10.0 ** rng.integers(lo, hi, n).astype(float)
    im = rng.standard_normal(n) * 10.0 ** rng.integers(lo, hi, n).astype(float)
    re = np.where(rng.integers(0, 4, n) == 0, rng.uniform(-3, 3, n), re)
    im = np.where(rng.integers(0, 4, n) == 0, rng.uniform(-3, 3, n), im)
    with np.errstate(over="ignore"):
        return (re + 1j * im).astype(dtype)


def _call(name, *arrays):
    return np.asarray(getattr(xp, name)(*[xp.asarray(a) for a in arrays]))


# -- the standard's tables --------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", FUNCTIONS)
def test_standard_special_cases(name, dtype):
    z = _grid(dtype)
    got = _call(name, z)
    rtol = 4e-16 if dtype == "complex128" else 1.2e-7
    checked, bad = 0, []
    for v, g in zip(z.tolist(), got.tolist()):
        want = special_value(name, v)
        if want is None:
            continue
        checked += 1
        if not matches(g, want, rtol):
            bad.append(f"{name}({v!r}) = {g!r}, the standard: {want!r}")
    assert not bad, f"{len(bad)} of {checked}: " + "; ".join(bad[:8])
    assert checked >= 20


def test_tables_cover_the_standard():
    # every complex function with special cases in the standard has its table or definition here
    assert set(TABLES) | set(DERIVED) | {"abs"} == set(FUNCTIONS)
    assert len(FUNCTIONS) == 21
    # spot checks of the transcription, straight from the standard's text
    assert special_value("exp", complex(-INF, INF)) == (0.0, 0.0)
    assert special_value("expm1", complex(-INF, NAN))[0] == -1.0
    assert special_value("log", complex(-0.0, 0.0)) == (-INF, math.pi)
    assert special_value("acos", complex(1.5, INF)) == (math.pi / 2, -INF)
    assert special_value("sqrt", complex(NAN, INF)) == (INF, INF)
    assert special_value("tanh", complex(0.0, INF))[0] == 0.0
    assert special_value("sin", complex(0.0, 2.0)) is None  # a finite value: not a special case


_CONJ = ["exp", "expm1", "log", "log1p", "log2", "log10", "sqrt", "sin", "cos", "tan", "sinh"]
_CONJ += ["cosh", "tanh", "asin", "acos", "atan", "asinh", "acosh", "atanh"]


def _same(a, b):
    """Equal parts, NaN matching NaN, zeros with their signs."""
    out = np.ones(a.shape, bool)
    for p, q in ((a.real, b.real), (a.imag, b.imag)):
        out &= (np.isnan(p) & np.isnan(q)) | ((p == q) & (np.signbit(p) == np.signbit(q)))
    return out


def _finite(dtype):
    # the symmetries on finite inputs (zeros of both signs, subnormal and huge parts included):
    # at infinities the standard leaves the signs of many results unspecified
    z = np.concatenate([_grid(dtype), _extreme(dtype, 500)])
    return z[np.isfinite(z)]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", _CONJ)
def test_conjugate_symmetry(name, dtype):
    z = _finite(dtype)
    same = _same(_call(name, np.conj(z)), np.conj(_call(name, z)))
    assert same.all(), f"{name}: conj(f(z)) != f(conj(z)) at {z[~same][:5]}"


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", ["asinh", "atanh", "sinh", "tanh", "asin", "atan", "sin", "tan"])
def test_odd_functions(name, dtype):
    z = _finite(dtype)
    same = _same(_call(name, -z), -_call(name, z))
    assert same.all(), f"{name}: f(-z) != -f(z) at {z[~same][:5]}"


# -- NumPy elsewhere -------------------------------------------------------------------------------
def _close(got, want, rtol):
    """Finite results within rtol of the modulus; a non-finite one NaN on both sides or part by
    part (infinities equal, a finite part within rtol of itself)."""
    with np.errstate(all="ignore"):
        if got.dtype.kind != "c":
            return (
                (np.abs(got - want) <= rtol * np.abs(want))
                | (got == want)
                | (np.isnan(got) & np.isnan(want))
            )
        fin = np.isfinite(got) & np.isfinite(want)
        ok = fin & (np.abs(got - want) <= rtol * np.abs(want))
        parts = np.ones(got.shape, bool)
        for g, w in ((got.real, want.real), (got.imag, want.imag)):
            parts &= (g == w) | (np.isnan(g) & np.isnan(w))
            parts |= np.isfinite(g) & np.isfinite(w) & (np.abs(g - w) <= rtol * np.abs(w))
        return ok | (~fin & (parts | (np.isnan(got) & np.isnan(want))))


def _check_against_numpy(name, arrays, rtol):
    got = _call(name, *arrays)
    want = _elementwise_ref(name, "float")(*arrays)
    ok = _close(got, np.ma.getdata(want), rtol)
    if WIDE_OK:
        ok |= _close(got, np.ma.getdata(_elementwise_ref(name, "float", wide=True)(*arrays)), rtol)
    if isinstance(want, np.ma.MaskedArray):
        ok |= np.ma.getmaskarray(want)
    i = np.flatnonzero(~ok)
    assert ok.all(), (
        f"{name}: {i.size} differ from NumPy: {[a[i[:5]] for a in arrays]} -> {got[i[:5]]}"
    )


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", UNARY)
def test_unary_matches_numpy_at_edge_and_extreme_values(name, dtype):
    z = np.concatenate([_grid(dtype), _extreme(dtype)])
    _check_against_numpy(name, [z], 1e-12 if dtype == "complex128" else 2e-6)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", ["divide", "multiply", "pow", "add", "subtract"])
def test_binary_matches_numpy_at_edge_and_extreme_values(name, dtype):
    a = np.concatenate([np.repeat(_grid(dtype)[::7], 7)[: GRID.size], _extreme(dtype, seed=1)])
    b = np.concatenate([np.tile(_grid(dtype)[::7], 7)[: GRID.size], _extreme(dtype, seed=2)])
    if name == "pow":  # small integer exponents take NumPy's repeated products
        k = np.random.default_rng(3).integers(-4, 5, b.size)
        b = np.where(np.arange(b.size) % 3 == 0, k, b).astype(dtype)
    _check_against_numpy(name, [a, b], 1e-12 if dtype == "complex128" else 2e-6)


# -- regressions ---------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["asin", "acos", "acosh", "asinh", "atan", "atanh"])
def test_inverse_functions_of_subnormal_parts_do_not_divide_by_zero(name):
    # asin(1 + 5e-324j) raised ZeroDivisionError, then returned 0j
    z = np.array([1 + 5e-324j, -1 + 5e-324j, 5e-324 + 1j, 5e-324j, 1 - 5e-324j])
    got = _call(name, z)
    want = getattr(np, NP[name])(z)
    np.testing.assert_allclose(got, want, rtol=1e-15, atol=0)
    assert _call(name, z[:1])[0] == got[0]  # a single element (the small-array path)


def test_reciprocal_and_divide_scale_huge_and_tiny_operands():
    z = np.array([1e308 + 1e308j, MAX + MAX * 1j, 5e-324 + 5e-324j, 1e-310 - 3e-310j])
    got = _call("reciprocal", z)
    np.testing.assert_allclose(got[:2], [5e-309 - 5e-309j, 2.781342323134e-309 * (1 - 1j)], 1e-12)
    assert np.isinf(got[2].real) and np.isinf(got[2].imag)  # 1 / (5e-324 (1 + 1j)) overflows
    np.testing.assert_allclose(got[3], 1 / complex(1e-310, -3e-310), rtol=1e-9)
    # NumPy: -0j, nan+0j
    assert _call("divide", z[:1], z[:1])[0] == 1
    q = _call("divide", np.array([1e-300 + 1e-300j]), np.array([5e-324 + 5e-324j]))
    np.testing.assert_allclose(q, [1e-300 / 5e-324], rtol=1e-12)  # NumPy: inf + NaN j
    # complex64 divides in double precision: no overflow of float32 intermediates
    f = np.array([3e38 + 3e38j], np.complex64)
    assert _call("divide", f, f)[0] == 1
    np.testing.assert_allclose(_call("reciprocal", f)[0], np.complex64(1 / (3e38 + 3e38j)))


def test_logarithms_of_subnormal_and_huge_values():
    z = np.array([5e-324 + 5e-324j, MAX + MAX * 1j, 1e308 + MAX * 1j, 5e-324 + 0j])
    want = np.log(z.astype(np.clongdouble)).astype(np.complex128) if WIDE_OK else np.log(z)
    np.testing.assert_allclose(_call("log", z), want, rtol=1e-15)
    assert _call("log", z)[0].real == pytest.approx(-744.0934983311013, rel=1e-15)  # was -744.44
    np.testing.assert_allclose(_call("log2", z), want / np.log(2), rtol=1e-15)
    np.testing.assert_allclose(_call("log10", z), want / np.log(10), rtol=1e-15)
    # log1p: no spurious infinity (NumPy: inf + 0.785j)
    np.testing.assert_allclose(_call("log1p", z[1:3]), want[1:3], rtol=1e-15)


def test_sqrt_of_huge_and_subnormal_values():
    z = np.array([1e308 + 1e308j, -1e308 + 1e308j, 5e-324 + 5e-324j, -5e-324 - 5e-324j])
    want = np.sqrt(z.astype(np.clongdouble)).astype(np.complex128) if WIDE_OK else np.sqrt(z)
    np.testing.assert_allclose(_call("sqrt", z), want, rtol=1e-15)
    f = np.array([3 + 3e38j, 3e38 + 3e38j, 1e-45 + 1e-45j], np.complex64)
    np.testing.assert_allclose(_call("sqrt", f), np.sqrt(f.astype(np.complex128)), rtol=1e-7)


def test_trigonometric_functions_of_huge_imaginary_parts():
    # the libm second pass of sin/cos/tan overwrote complex results with NaN
    z = np.array([1e308j, -1e308j, 1000j, 1e-300 + 720j])
    np.testing.assert_array_equal(_call("sin", z)[:2], [complex(0, INF), complex(0, -INF)])
    np.testing.assert_array_equal(_call("cos", z)[:2], [complex(INF, -0.0), complex(INF, 0.0)])
    np.testing.assert_array_equal(_call("tan", z)[:3], [1j, -1j, 1j])
    want = np.sin(z.astype(np.clongdouble)).astype(np.complex128) if WIDE_OK else np.sin(z)
    got = _call("sin", z)[3]  # sin(1e-300) cosh(720) = 1e12 + inf j: finite beyond exp's range
    assert got.real == pytest.approx(want[3].real, rel=1e-14) and got.imag == INF


def test_exp_and_expm1_keep_a_zero_imaginary_part():
    z = np.array([1e308 + 0j, complex(1000, -0.0), -1e308 + 0j])
    for name in ("exp", "expm1"):
        got = _call(name, z)
        assert np.isinf(got[0].real) and got[0].imag == 0  # NumPy's expm1: inf + NaN j
        assert np.signbit(got[1].imag)
    # exp(x) overflows, cis(y) brings it back: finite (complex64 in double precision)
    f = np.array([89 + 1e-30j], np.complex64)
    got = _call("exp", f)[0]
    assert np.isinf(got.real) and got.imag == pytest.approx(math.exp(89) * 1e-30, rel=1e-6)


@pytest.mark.parametrize("dtype", DTYPES)
def test_pow_with_a_zero_base(dtype):
    base = np.zeros(6, dtype)
    expo = np.array([2 + 1j, -2 + 1j, 0, 1j, 0.5, -1], dtype)
    got = _call("pow", base, expo)
    np.testing.assert_array_equal(got, np.power(base, expo))  # 0, nan, 1, nan, 0, nan
    assert got[0] == 0 and got[2] == 1 and np.isnan(got[1]) and np.isnan(got[5])


def test_abs_hypot_and_sign_of_huge_and_subnormal_values():
    z = np.array([1e308 + 1e308j, MAX + MAX * 1j, 5e-324 + 5e-324j, 3e-320 - 4e-320j])
    np.testing.assert_allclose(_call("abs", z)[:1], [1.4142135623730951e308], rtol=1e-15)
    assert np.isinf(_call("abs", z)[1])  # |z| itself overflows
    h = np.array([1e308, MAX, 5e-324])
    np.testing.assert_array_equal(_call("hypot", h, h), np.hypot(h, h))
    s = _call("sign", z)
    r = math.sqrt(0.5)
    np.testing.assert_allclose(s, [r + r * 1j, r + r * 1j, r + r * 1j, 0.6 - 0.8j], rtol=1e-15)
    # NumPy: 0+1j for MAX+MAX j, 1+1j for 5e-324+5e-324j
    f = np.array([2e38 + 1e38j], np.complex64)
    assert _call("abs", f)[0] == pytest.approx(2.236068e38, rel=1e-7)


def test_products_whose_parts_overflow():
    # ac - bd with both products overflowing: 0, not NaN or an FMA's infinity
    z = np.array([1e300 + 1e300j, 1e200 - 3e200j])
    w = np.array([1e300 + 1e300j, 1e200 + 1e200j])
    np.testing.assert_array_equal(_call("multiply", z, w), [complex(0, INF), complex(INF, -INF)])
    np.testing.assert_array_equal(_call("square", z[:1]), [complex(0, INF)])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_real_and_imag_of_real_non_finite_values(dtype):
    x = np.array([NAN, INF, -INF, -0.0, 2.5], dtype)
    np.testing.assert_array_equal(_call("imag", x), np.imag(x))  # zeros (was NaN for NaN, inf)
    assert not np.signbit(_call("imag", x)).any()
    np.testing.assert_array_equal(_call("real", x), np.real(x))
    assert _call("imag", x).dtype == x.dtype


@pytest.mark.parametrize("name", ["multiply", "divide", "pow", "exp", "log", "sqrt", "sin", "tan"])
def test_large_arrays_agree_with_small_ones(name):
    # arrays past the parallel threshold run other loops (segments, strided rows); the special
    # values and the scaled multiply/divide must come out the same there, bit for bit
    z = np.tile(GRID, 180)  # 72,000 elements
    w = np.roll(z, 7)
    args = [z, w] if name in ("multiply", "divide", "pow") else [z]
    big = _call(name, *args)
    small = _call(name, *[a[: GRID.size] for a in args])
    assert big.size > 65536
    same = _same(big[: GRID.size], small)
    assert same.all(), f"{name}: {np.flatnonzero(~same)[:5]}"
    strided_in = [a[::-1] for a in args]  # negative strides: the gathered-row loops
    back = _call(name, *strided_in)[::-1]
    same = _same(back, big)
    assert same.all(), f"{name} (reversed): {np.flatnonzero(~same)[:5]}"


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_expm1_of_signed_zeros_is_positive_zero(dtype):
    """expm1(±0 ± 0j) = exp(±0 ± 0j) - 1 = +0 ± 0j: the real part is +0 (what the official suite
    checks), whatever the sign of the real zero; the imaginary zero keeps its sign."""
    z = np.array([complex(-0.0, 0.0), complex(-0.0, -0.0), complex(0.0, -0.0)], dtype=dtype)
    got = np.asarray(xp.expm1(xp.asarray(z)))
    assert (got == 0).all()
    assert not np.signbit(got.real).any()
    assert list(np.signbit(got.imag)) == [False, True, True]


def _ulps(got, ref, real_dtype):
    """|got - ref| in units of the last place of ``ref`` rounded to ``real_dtype`` (at least the
    smallest subnormal), ``ref`` in long double."""
    spacing = np.abs(np.spacing(ref.astype(real_dtype))).astype(np.longdouble)
    spacing = np.maximum(spacing, np.longdouble(np.finfo(real_dtype).smallest_subnormal))
    return np.abs(got.astype(np.longdouble) - ref) / spacing


@pytest.mark.parametrize(
    "dtype,real,abs_ulps,sign_ulps",
    [("complex128", np.float64, 2.0, 3.0), ("complex64", np.float32, 0.5 + 1e-3, 0.5 + 1e-3)],
)
def test_abs_and_sign_within_their_ulp_bounds_over_every_magnitude(
    dtype, real, abs_ulps, sign_ulps
):
    """|z| and z / |z| are computed without branches or libm calls (their loops vectorise):
    |z| = big * sqrt(1 + (small / big)^2), NumPy's SIMD formula, within 2 ulp for complex128;
    complex64 in double precision, rounded once (0.5 ulp, double rounding aside); the sign's
    parts within 3 ulp (0.5 for complex64), against long double, over parts from the smallest
    subnormal to the largest finite value and ratios up to 2^80 between them."""
    rng = np.random.default_rng(8)
    n = 60_000  # (the serial loops: the threaded ones run the same function)
    info = np.finfo(real)
    lo, hi = np.log2(float(info.smallest_subnormal)), np.log2(float(info.max)) - 0.01
    e1 = rng.uniform(lo, hi, n)
    e2 = np.clip(e1 + rng.uniform(-80, 80, n), lo, hi)
    z = np.empty(n, dtype)
    z.real = (np.exp2(e1) * rng.choice([-1, 1], n)).astype(real)
    z.imag = (np.exp2(e2) * rng.choice([-1, 1], n)).astype(real)
    z[: n // 4] = rng.standard_normal(n // 4) + 1j * rng.standard_normal(n // 4)  # near |z| = 1
    wide = z.astype(np.clongdouble)
    magnitude = np.abs(wide)
    finite = magnitude < np.longdouble(info.max)  # |z| itself may overflow
    got = _call("abs", z)
    assert _ulps(got[finite], magnitude[finite], real).max() <= abs_ulps
    assert np.isinf(got[~finite]).all()
    unit = wide / magnitude
    sign = _call("sign", z)
    assert _ulps(sign.real, unit.real, real).max() <= sign_ulps
    assert _ulps(sign.imag, unit.imag, real).max() <= sign_ulps
