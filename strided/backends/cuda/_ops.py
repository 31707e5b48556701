"""The elementwise primitives as CUDA C: one functor per operation.

Each entry is ``name -> (arity, compute dtypes, body)``.  The body is the C++ of
``template <class O, class T> static O f(T a[, T b])``: ``T`` is the compute dtype (inputs are
cast to it by the dispatcher), ``O`` the output dtype.  The standard's special cases follow the
cpu backend's scalar functions (``backends/cpu/_scalar.py``); ``if constexpr`` picks the integer,
floating or complex branch at compile time.

Compute dtypes are groups of dtype names: an operation whose rule computes in a dtype that is not
listed has no cuda instantiation yet and raises NotImplementedError naming it.
"""

from __future__ import annotations

INT = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")
REAL_FLOAT = ("float32", "float64")
COMPLEX = ("complex64", "complex128")
REAL = INT + REAL_FLOAT
NUMERIC = REAL + COMPLEX
FLOAT = REAL_FLOAT + COMPLEX
BOOL = ("bool",)
ANY = BOOL + NUMERIC
INT_BOOL = BOOL + INT

# result kinds: the output dtype for a compute dtype (as the primitives' rules decide it)
_PREDICATES = {
    "isnan", "isinf", "isfinite", "signbit", "equal", "not_equal", "less", "less_equal",
    "greater", "greater_equal",
}  # fmt: skip
_REAL_RESULT = {"abs", "real", "imag"}


def output_dtype(name: str, compute: str) -> str:
    """The output dtype name of elementwise ``name`` computed in ``compute``."""
    if name in _PREDICATES:
        return "bool"
    if name in _REAL_RESULT and compute in COMPLEX:
        return {"complex64": "float32", "complex128": "float64"}[compute]
    return compute


def _math1(fn: str, cx: str | None = None) -> tuple:
    """A math function of real floats, and of complex numbers where ``cx`` is the complex body."""
    if cx is None:
        return (1, REAL_FLOAT, f"return sm_{fn}(a);")
    return (1, FLOAT, f"if constexpr (is_cplx<T>::value) {{ {cx} }} else return sm_{fn}(a);")


_LN2 = "0.693147180559945309417232121458176568"
_LN10 = "2.30258509299404568401799145468436421"


_FLOOR_DIVIDE = """
if constexpr (is_flt<T>::value) {
    // NumPy's divmod: floor(a / b) alone is off by one where a / b rounds onto an integer
    if (b == 0 || !sm_isfinite(a) || !sm_isfinite(b)) return a / b;
    T mod = sm_fmod(a, b), div = (a - mod) / b;
    if (mod != 0 && ((b < 0) != (mod < 0))) div -= 1;
    if (div == 0) return sm_copysign(div - div, a / b);
    T fl = sm_floor(div);
    if (div - fl > (T)0.5) fl += 1;
    return fl;
} else {
    if (b == 0) return 0;
    if constexpr (is_signed_int<T>::value) {
        if (b == -1) return (T)(0 - a);  // no INT_MIN / -1 trap; wraps like NumPy
        T q = a / b;
        if (a % b != 0 && ((a < 0) != (b < 0))) q -= 1;
        return q;
    } else {
        return a / b;
    }
}"""

_REMAINDER = """
if constexpr (is_flt<T>::value) {
    // the result takes the divisor's sign, zero included (0 % -3 is -0)
    T mod = sm_fmod(a, b);
    if (b == 0) return mod;
    if (mod != 0) {
        if ((b < 0) != (mod < 0)) mod += b;
    } else {
        mod = sm_copysign(mod - mod, b);
    }
    return mod;
} else {
    if (b == 0) return 0;
    if constexpr (is_signed_int<T>::value) {
        if (b == -1) return 0;
        T r = a % b;
        if (r != 0 && ((r < 0) != (b < 0))) r += b;
        return r;
    } else {
        return a % b;
    }
}"""

_POW = """
if constexpr (is_cplx<T>::value) {
    return cx_pow(a, b);
} else if constexpr (is_flt<T>::value) {
    return sm_pow(a, b);
} else {
    // repeated squaring in the operands' own width: wraps around like NumPy
    if constexpr (is_signed_int<T>::value) { if (b < 0) return 0; }
    T result = 1, base = a, e = b;
    while (e > 0) {
        if (e & 1) result = (T)(result * base);
        base = (T)(base * base);
        e = (T)(e >> 1);
    }
    return result;
}"""

_SIGN = """
if constexpr (is_cplx<T>::value) {
    if (a.re == 0 && a.im == 0) return T{0, 0};
    auto m = sm_hypot(a.re, a.im);
    return T{a.re / m, a.im / m};
} else if constexpr (is_flt<T>::value) {
    if (a != a) return a;
    return (T)((a > 0) - (a < 0));
} else {
    return (T)((a > 0) - (a < 0));
}"""

_LOGADDEXP = """
if (a == b) return a + (T)0.693147180559945309417232121458176568;  // infinities included
T d = a - b;
if (d > 0) return a + sm_log1p(sm_exp(-d));
if (d <= 0) return b + sm_log1p(sm_exp(d));
return d;  // NaN"""

_LSHIFT = """
if (b < 0 || b >= (T)(8 * sizeof(T))) return 0;  // every bit shifted out
return (T)(a << b);"""

_RSHIFT = """
if (b < 0 || b >= (T)(8 * sizeof(T))) return (T)(a < 0 ? -1 : 0);  // sign fill
return (T)(a >> b);"""

OPS: dict[str, tuple[int, tuple, str]] = {
    "abs": (1, NUMERIC, """
        if constexpr (is_cplx<T>::value) return sm_hypot(a.re, a.im);
        else if constexpr (is_flt<T>::value) return sm_fabs(a);
        else return a < 0 ? (T)(0 - a) : a;"""),
    "negative": (1, NUMERIC, "if constexpr (is_cplx<T>::value) return -a; else return (T)(0 - a);"),
    "positive": (1, NUMERIC, "return a;"),
    "square": (1, NUMERIC, "return (T)(a * a);"),
    "sign": (1, NUMERIC, _SIGN),
    "reciprocal": (1, FLOAT, "return one<T>() / a;"),
    "add": (2, NUMERIC, "return (T)(a + b);"),
    "subtract": (2, NUMERIC, "return (T)(a - b);"),
    "multiply": (2, NUMERIC, "return (T)(a * b);"),
    "divide": (2, FLOAT, "return a / b;"),
    "floor_divide": (2, REAL, _FLOOR_DIVIDE),
    "remainder": (2, REAL, _REMAINDER),
    "pow": (2, NUMERIC, _POW),
    "maximum": (2, REAL, "return (a > b || a != a) ? a : b;"),
    "minimum": (2, REAL, "return (a < b || a != a) ? a : b;"),
    "exp": _math1("exp", "return cx_exp(a);"),
    "expm1": _math1("expm1", "return cx_expm1(a);"),
    "log": _math1("log", "return cx_log(a);"),
    "log1p": _math1("log1p", "return cx_log1p(a);"),
    "log2": _math1("log2", f"return cx_log_base(a, {_LN2});"),
    "log10": _math1("log10", f"return cx_log_base(a, {_LN10});"),
    "sqrt": _math1("sqrt", "return cx_sqrt(a);"),
    "logaddexp": (2, REAL_FLOAT, _LOGADDEXP),
    "hypot": (2, REAL_FLOAT, "return sm_hypot(a, b);"),
    "sin": _math1("sin", "return cx_sin(a);"),
    "cos": _math1("cos", "return cx_cos(a);"),
    "tan": _math1("tan", "return cx_tan(a);"),
    "asin": _math1("asin", "return cx_asin(a);"),
    "acos": _math1("acos", "return cx_acos(a);"),
    "atan": _math1("atan", "return cx_atan(a);"),
    "atan2": (2, REAL_FLOAT, "return sm_atan2(a, b);"),
    "sinh": _math1("sinh", "return cx_sinh(a);"),
    "cosh": _math1("cosh", "return cx_cosh(a);"),
    "tanh": _math1("tanh", "return cx_tanh(a);"),
    "asinh": _math1("asinh", "return cx_asinh(a);"),
    "acosh": _math1("acosh", "return cx_acosh(a);"),
    "atanh": _math1("atanh", "return cx_atanh(a);"),
    "floor": (1, REAL, "if constexpr (is_flt<T>::value) return sm_floor(a); else return a;"),
    "ceil": (1, REAL, "if constexpr (is_flt<T>::value) return sm_ceil(a); else return a;"),
    "trunc": (1, REAL, "if constexpr (is_flt<T>::value) return sm_trunc(a); else return a;"),
    "round": (1, NUMERIC, """
        if constexpr (is_cplx<T>::value) return T{sm_rint(a.re), sm_rint(a.im)};
        else if constexpr (is_flt<T>::value) return sm_rint(a);  // half to even
        else return a;"""),
    "copysign": (2, REAL_FLOAT, "return sm_copysign(a, b);"),
    "nextafter": (2, REAL_FLOAT, "return sm_nextafter(a, b);"),
    "signbit": (1, REAL, """
        if constexpr (is_flt<T>::value) return sm_signbit(a);
        else return a < 0;"""),
    "isnan": (1, NUMERIC, """
        if constexpr (is_int<T>::value) return false; else return sm_isnan(a);"""),
    "isinf": (1, NUMERIC, """
        if constexpr (is_int<T>::value) return false; else return sm_isinf(a);"""),
    "isfinite": (1, NUMERIC, """
        if constexpr (is_int<T>::value) return true; else return sm_isfinite(a);"""),
    "conj": (1, NUMERIC, "if constexpr (is_cplx<T>::value) return T{a.re, -a.im}; else return a;"),
    "real": (1, NUMERIC, "if constexpr (is_cplx<T>::value) return a.re; else return a;"),
    "imag": (1, NUMERIC, "if constexpr (is_cplx<T>::value) return a.im; else return (T)0;"),
    "equal": (2, ANY, "return a == b;"),
    "not_equal": (2, ANY, "return a != b;"),
    "less": (2, REAL, "return a < b;"),
    "less_equal": (2, REAL, "return a <= b;"),
    "greater": (2, REAL, "return a > b;"),
    "greater_equal": (2, REAL, "return a >= b;"),
    "logical_and": (2, BOOL, "return a && b;"),
    "logical_or": (2, BOOL, "return a || b;"),
    "logical_xor": (2, BOOL, "return a != b;"),
    "logical_not": (1, BOOL, "return !a;"),
    "bitwise_and": (2, INT_BOOL, "return (T)(a & b);"),
    "bitwise_or": (2, INT_BOOL, "return (T)(a | b);"),
    "bitwise_xor": (2, INT_BOOL, "return (T)(a ^ b);"),
    "bitwise_invert": (1, INT_BOOL,
                       "if constexpr (is_bool<T>::value) return !a; else return (T)~a;"),
    "bitwise_left_shift": (2, INT, _LSHIFT),
    "bitwise_right_shift": (2, INT, _RSHIFT),
}  # fmt: skip


def functor(name: str) -> str:
    """The C++ functor ``op_<name>`` of an elementwise operation."""
    arity, _, body = OPS[name]
    params = "T a" if arity == 1 else "T a, T b"
    return (
        f"struct op_{name} {{\n"
        f"    template <class O, class T> __device__ static inline O f({params}) {{\n"
        f"        {body.strip()}\n"
        f"    }}\n"
        f"}};\n"
    )


#: the copy/cast functor (copy, astype, fill): NumPy's conversions
CAST = (
    "struct op_cast {\n"
    "    template <class O, class T> __device__ static inline O f(T a) { return cvt<O>(a); }\n"
    "};\n"
)
