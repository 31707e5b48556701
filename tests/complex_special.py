"""The array API standard's special cases for complex elementwise functions, as data.

Transcribed from the standard's text (``src/array_api_stubs/_2025_12/elementwise_functions.py`` of
data-apis/array-api, the same as 2024.12), which follows C99 Annex G.  Each table row is
``(class of a, class of b, real part, imaginary part)`` for ``z = a + bj``; the first matching row
wins.  The tables list the upper half-plane (and, for odd and even functions, the right half);
the rest follows from the symmetries the standard and C99 state: ``f(conj(z)) == conj(f(z))``,
``f(-z) == -f(z)`` (sinh, tanh, asinh, atanh) and ``f(-z) == f(z)`` (cosh).  sin, cos, tan, asin,
atan, log2 and log10 are defined through the others, as the standard does.

``special_value(name, z)`` gives the standard's result for one input, or None where the standard
leaves it to the implementation (there, NumPy is the reference).  A part the standard pins only up
to its sign is an ``Either`` value.  ``tests/test_complex_special_values.py`` checks every
function against these tables; ``tests/fuzz_programs.py`` uses them in its NumPy reference.
"""

from __future__ import annotations

import math

import numpy as np

INF = math.inf
NAN = math.nan
PI = math.pi


class Either(float):
    """A result part whose sign the standard leaves unspecified (``±0``, ``±infinity``)."""


def _cis_scaled(scale, minus=0.0):
    # "scale * cis(b) - minus", with IEEE products (+0 * cos(b) keeps the sign of cos(b))
    return lambda a, b: (scale * math.cos(b) - minus, scale * math.sin(b))


_P0, _N0, _E0 = 0.0, -0.0, Either(0.0)
_EINF = Either(INF)

# fmt: off
TABLES = {
    "exp": ("conj", [
        ("0", "+0", 1.0, _P0),
        ("finite", "+inf", NAN, NAN),
        ("finite", "nan", NAN, NAN),
        ("+inf", "+0", INF, _P0),
        ("-inf", "finite", _cis_scaled(0.0)),
        ("+inf", "nonzero finite", _cis_scaled(INF)),
        ("-inf", "+inf", _E0, _E0),
        ("+inf", "+inf", _EINF, NAN),
        ("-inf", "nan", _E0, _E0),
        ("+inf", "nan", _EINF, NAN),
        ("nan", "+0", NAN, _P0),
        ("nan", "nonzero", NAN, NAN),
        ("nan", "nan", NAN, NAN),
    ]),
    "expm1": ("conj", [
        ("0", "+0", _E0, _E0),
        ("finite", "+inf", NAN, NAN),
        ("finite", "nan", NAN, NAN),
        ("+inf", "+0", INF, _P0),
        ("-inf", "finite", _cis_scaled(0.0, 1.0)),
        ("+inf", "nonzero finite", _cis_scaled(INF, 1.0)),
        ("-inf", "+inf", -1.0, _E0),
        ("+inf", "+inf", _EINF, NAN),
        ("-inf", "nan", -1.0, _E0),
        ("+inf", "nan", _EINF, NAN),
        ("nan", "+0", NAN, _P0),
        ("nan", "nonzero", NAN, NAN),
        ("nan", "nan", NAN, NAN),
    ]),
    "log": ("conj", [
        ("-0", "+0", -INF, PI),
        ("+0", "+0", -INF, _P0),
        ("finite", "+inf", INF, PI / 2),
        ("finite", "nan", NAN, NAN),
        ("-inf", "positive finite", INF, PI),
        ("+inf", "positive finite", INF, _P0),
        ("-inf", "+inf", INF, 3 * PI / 4),
        ("+inf", "+inf", INF, PI / 4),
        ("inf", "nan", INF, NAN),
        ("nan", "finite", NAN, NAN),
        ("nan", "+inf", INF, NAN),
        ("nan", "nan", NAN, NAN),
    ]),
    "log1p": ("conj", [
        ("-1", "+0", -INF, _P0),
        ("finite", "+inf", INF, PI / 2),
        ("finite", "nan", NAN, NAN),
        ("-inf", "positive finite", INF, PI),
        ("+inf", "positive finite", INF, _P0),
        ("-inf", "+inf", INF, 3 * PI / 4),
        ("+inf", "+inf", INF, PI / 4),
        ("inf", "nan", INF, NAN),
        ("nan", "finite", NAN, NAN),
        ("nan", "+inf", INF, NAN),
        ("nan", "nan", NAN, NAN),
    ]),
    "sqrt": ("conj", [
        ("0", "+0", _P0, _P0),
        ("any", "+inf", INF, INF),
        ("finite", "nan", NAN, NAN),
        ("-inf", "positive finite", _P0, INF),
        ("+inf", "positive finite", INF, _P0),
        ("-inf", "nan", NAN, _EINF),
        ("+inf", "nan", INF, NAN),
        ("nan", "any", NAN, NAN),
    ]),
    "sinh": ("odd", [
        ("+0", "+0", _P0, _P0),
        ("+0", "+inf", _E0, NAN),
        ("+0", "nan", _E0, NAN),
        ("positive finite", "+inf", NAN, NAN),
        ("positive finite", "nan", NAN, NAN),
        ("+inf", "+0", INF, _P0),
        ("+inf", "positive finite", _cis_scaled(INF)),
        ("+inf", "+inf", _EINF, NAN),
        ("+inf", "nan", _EINF, NAN),
        ("nan", "+0", NAN, _P0),
        ("nan", "nonzero finite", NAN, NAN),
        ("nan", "nan", NAN, NAN),
    ]),
    "cosh": ("even", [
        ("+0", "+0", 1.0, _P0),
        ("+0", "+inf", NAN, _E0),
        ("+0", "nan", NAN, _E0),
        ("nonzero finite", "+inf", NAN, NAN),
        ("nonzero finite", "nan", NAN, NAN),
        ("+inf", "+0", INF, _P0),
        ("+inf", "nonzero finite", _cis_scaled(INF)),
        ("+inf", "+inf", _EINF, NAN),
        ("+inf", "nan", INF, NAN),
        ("nan", "0", NAN, _E0),
        ("nan", "nonzero finite", NAN, NAN),
        ("nan", "nan", NAN, NAN),
    ]),
    "tanh": ("odd", [
        ("+0", "+0", _P0, _P0),
        ("nonzero finite", "+inf", NAN, NAN),
        ("+0", "+inf", _P0, NAN),
        ("nonzero finite", "nan", NAN, NAN),
        ("+0", "nan", _P0, NAN),
        ("+inf", "positive finite", 1.0, _E0),
        ("+inf", "+inf", 1.0, _E0),
        ("+inf", "nan", 1.0, _E0),
        ("nan", "+0", NAN, _P0),
        ("nan", "nonzero", NAN, NAN),
        ("nan", "nan", NAN, NAN),
    ]),
    "acos": ("conj", [
        ("0", "+0", PI / 2, _N0),
        ("0", "nan", PI / 2, NAN),
        ("finite", "+inf", PI / 2, -INF),
        ("nonzero finite", "nan", NAN, NAN),
        ("-inf", "positive finite", PI, -INF),
        ("+inf", "positive finite", _P0, -INF),
        ("-inf", "+inf", 3 * PI / 4, -INF),
        ("+inf", "+inf", PI / 4, -INF),
        ("inf", "nan", NAN, _EINF),
        ("nan", "finite", NAN, NAN),
        ("nan", "+inf", NAN, -INF),
        ("nan", "nan", NAN, NAN),
    ]),
    "acosh": ("conj", [
        ("0", "+0", _P0, PI / 2),
        ("finite", "+inf", INF, PI / 2),
        ("nonzero finite", "nan", NAN, NAN),
        ("+0", "nan", NAN, Either(PI / 2)),
        ("-inf", "positive finite", INF, PI),
        ("+inf", "positive finite", INF, _P0),
        ("-inf", "+inf", INF, 3 * PI / 4),
        ("+inf", "+inf", INF, PI / 4),
        ("inf", "nan", INF, NAN),
        ("nan", "finite", NAN, NAN),
        ("nan", "+inf", INF, NAN),
        ("nan", "nan", NAN, NAN),
    ]),
    "asinh": ("odd", [
        ("+0", "+0", _P0, _P0),
        ("positive finite", "+inf", INF, PI / 2),
        ("finite", "nan", NAN, NAN),
        ("+inf", "positive finite", INF, _P0),
        ("+inf", "+inf", INF, PI / 4),
        ("nan", "+0", NAN, _P0),
        ("nan", "nonzero finite", NAN, NAN),
        ("nan", "+inf", _EINF, NAN),
        ("nan", "nan", NAN, NAN),
    ]),
    "atanh": ("odd", [
        ("+0", "+0", _P0, _P0),
        ("+0", "nan", _P0, NAN),
        ("1", "+0", INF, _P0),
        ("positive finite", "+inf", _P0, PI / 2),
        ("nonzero finite", "nan", NAN, NAN),
        ("+inf", "positive finite", _P0, PI / 2),
        ("+inf", "+inf", _P0, PI / 2),
        ("+inf", "nan", _P0, NAN),
        ("nan", "finite", NAN, NAN),
        ("nan", "+inf", _E0, PI / 2),
        ("nan", "nan", NAN, NAN),
    ]),
    "sign": (None, [
        ("0", "0", _E0, _E0),
        ("nan", "any", NAN, NAN),
        ("any", "nan", NAN, NAN),
    ]),
}
# fmt: on

# the functions the standard defines through others: sin(z) = -1j * sinh(z * 1j) ...
DERIVED = {
    "sin": "sinh",
    "cos": "cosh",
    "tan": "tanh",
    "asin": "asinh",
    "atan": "atanh",
    "log2": "log",
    "log10": "log",
}
FUNCTIONS = tuple(TABLES) + tuple(DERIVED) + ("abs",)


def _is(cls: str, v: float) -> bool:
    if cls == "any":
        return True
    if cls == "nan":
        return v != v
    if cls == "+inf":
        return v == INF
    if cls == "-inf":
        return v == -INF
    if cls == "inf":
        return v in (INF, -INF)
    fin = math.isfinite(v)
    if cls == "finite":
        return fin
    if cls == "nonzero finite":
        return fin and v != 0
    if cls == "positive finite":
        return fin and v > 0
    if cls == "nonzero":
        return v != 0  # NaN and the infinities included
    if cls == "0":
        return v == 0
    if cls == "+0":
        return v == 0 and math.copysign(1.0, v) > 0
    if cls == "-0":
        return v == 0 and math.copysign(1.0, v) < 0
    if cls in ("1", "-1"):
        return v == float(cls)
    raise ValueError(cls)


def _neg(v):
    return Either(-v) if isinstance(v, Either) else -v


def _negative_sign(v: float) -> bool:
    return v == v and math.copysign(1.0, v) < 0


def _table(name: str, a: float, b: float):
    symmetry, rows = TABLES[name]
    if symmetry in ("odd", "even") and _negative_sign(a):
        r = _table(name, -a, -b)
        if r is None or symmetry == "even":
            return r
        return _neg(r[0]), _neg(r[1])
    if symmetry is not None and _negative_sign(b):
        r = _table(name, a, -b)
        return None if r is None else (r[0], _neg(r[1]))
    for ca, cb, *res in rows:
        if _is(ca, a) and _is(cb, b):
            if len(res) == 1:  # a cis(b) expression
                return res[0](a, b)
            return res[0], res[1]
    return None


def special_value(name: str, z: complex):
    """The standard's ``name(z)`` for a special input, as ``(real, imag)`` (``abs``: a float),
    or None where the standard leaves the result to the implementation."""
    a, b = float(z.real), float(z.imag)
    if name == "abs":
        if math.isinf(a) or math.isinf(b):
            return INF
        if a == 0:
            return abs(b)
        if b == 0:
            return abs(a)
        if a != a or b != b:
            return NAN
        return None
    if name in ("sin", "tan", "asin", "atan"):
        # -1j * f(z * 1j): z * 1j = -b + aj, and -1j * (c + dj) = d - cj
        r = _table(DERIVED[name], -b, a)
        return None if r is None else (r[1], _neg(r[0]))
    if name == "cos":
        return _table("cosh", -b, a)
    if name in ("log2", "log10"):
        r = _table("log", a, b)
        if r is None:
            return None
        base = math.log(2.0 if name == "log2" else 10.0)
        return tuple(Either(v / base) if isinstance(v, Either) else v / base for v in r)
    return _table(name, a, b)


def matches(got: complex | float, want, rtol: float = 4e-16) -> bool:
    """Whether ``got`` is the standard's ``want`` (NaN matches any NaN; an ``Either`` part matches
    either sign; finite nonzero parts such as pi/2 within ``rtol``; zeros with their sign)."""
    if not isinstance(want, tuple):
        return _part(float(got), want, rtol)
    return _part(float(got.real), want[0], rtol) and _part(float(got.imag), want[1], rtol)


def _part(g: float, w: float, rtol: float) -> bool:
    if w != w:
        return g != g
    if isinstance(w, Either):
        g, w = abs(g), abs(float(w))
    if w == 0 or math.isinf(w):
        return g == w and math.copysign(1.0, g) == math.copysign(1.0, w)
    return abs(g - w) <= rtol * abs(w)


def apply_special(name: str, z: np.ndarray, want: np.ndarray) -> np.ndarray:
    """``want`` (NumPy's result for ``name(z)``) with the standard's special cases substituted:
    the reference where the standard pins a value NumPy does not follow."""
    if name not in FUNCTIONS or z.dtype.kind != "c":
        return want
    want = np.array(want, copy=True)
    flat_z, flat_w = z.reshape(-1), want.reshape(-1)
    with np.errstate(all="ignore"):
        for i, v in enumerate(flat_z.tolist()):
            a, b = v.real, v.imag
            if math.isfinite(a) and math.isfinite(b) and a != 0 and b != 0 and a not in (1, -1):
                continue  # the standard's special cases all have a zero, +-1 or non-finite part
            s = special_value(name, v)
            if s is None:
                continue
            if isinstance(s, tuple):
                flat_w[i] = complex(float(s[0]), float(s[1]))
            else:
                flat_w[i] = float(s)
    return want
