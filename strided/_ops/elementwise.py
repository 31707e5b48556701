"""Elementwise primitives, declared once as data: name -> (arity, accepted dtypes, result rule).

Result rules: ``same`` (the promoted input dtype), ``bool`` (comparisons and predicates), ``real``
(the real dtype of a complex input, as for ``abs``), ``float`` (integers are computed in the default
floating-point dtype, as NumPy and PyTorch do for ``divide``, ``exp``, ``sqrt``, ...).
"""

from __future__ import annotations

from .. import _dtypes as dt
from .._array import Array
from ..dispatch import declare
from .core import elementwise_rule

# name: (arity, accepted dtype category, result rule, one-line description)
ELEMENTWISE: dict[str, tuple[int, str, str, str]] = {
    # arithmetic
    "abs": (1, "numeric", "real", "Absolute value (magnitude for complex input)."),
    "negative": (1, "numeric", "same", "Numerical negative, -x."),
    "positive": (1, "numeric", "same", "Numerical positive, +x."),
    "square": (1, "numeric", "same", "x * x."),
    "sign": (1, "numeric", "same", "Sign of x (x / |x| for complex)."),
    "reciprocal": (1, "numeric", "float", "1 / x."),
    "add": (2, "numeric", "same", "x1 + x2."),
    "subtract": (2, "numeric", "same", "x1 - x2."),
    "multiply": (2, "numeric", "same", "x1 * x2."),
    "divide": (2, "numeric", "float", "True division x1 / x2."),
    "floor_divide": (2, "real numeric", "same", "Floor division, rounding toward -inf."),
    "remainder": (2, "real numeric", "same", "Remainder with the sign of the divisor."),
    "pow": (2, "numeric", "same", "x1 raised to x2."),
    "maximum": (2, "real numeric", "same", "Elementwise maximum (NaN propagates)."),
    "minimum": (2, "real numeric", "same", "Elementwise minimum (NaN propagates)."),
    # exponentials, logarithms, powers
    "exp": (1, "numeric", "float", "e raised to x."),
    "expm1": (1, "numeric", "float", "exp(x) - 1, accurate for small x."),
    "log": (1, "numeric", "float", "Natural logarithm."),
    "log1p": (1, "numeric", "float", "log(1 + x), accurate for small x."),
    "log2": (1, "numeric", "float", "Base-2 logarithm."),
    "log10": (1, "numeric", "float", "Base-10 logarithm."),
    "sqrt": (1, "numeric", "float", "Square root."),
    "logaddexp": (2, "real numeric", "float", "log(exp(x1) + exp(x2))."),
    "hypot": (2, "real numeric", "float", "sqrt(x1**2 + x2**2) without overflow."),
    # trigonometric and hyperbolic
    "sin": (1, "numeric", "float", "Sine."),
    "cos": (1, "numeric", "float", "Cosine."),
    "tan": (1, "numeric", "float", "Tangent."),
    "asin": (1, "numeric", "float", "Inverse sine."),
    "acos": (1, "numeric", "float", "Inverse cosine."),
    "atan": (1, "numeric", "float", "Inverse tangent."),
    "atan2": (2, "real numeric", "float", "Inverse tangent of x1 / x2, quadrant-aware."),
    "sinh": (1, "numeric", "float", "Hyperbolic sine."),
    "cosh": (1, "numeric", "float", "Hyperbolic cosine."),
    "tanh": (1, "numeric", "float", "Hyperbolic tangent."),
    "asinh": (1, "numeric", "float", "Inverse hyperbolic sine."),
    "acosh": (1, "numeric", "float", "Inverse hyperbolic cosine."),
    "atanh": (1, "numeric", "float", "Inverse hyperbolic tangent."),
    # rounding and floating-point bits
    "floor": (1, "real numeric", "same", "Round toward -inf."),
    "ceil": (1, "real numeric", "same", "Round toward +inf."),
    "trunc": (1, "real numeric", "same", "Round toward zero."),
    "round": (1, "numeric", "same", "Round half to even."),
    "copysign": (2, "real numeric", "float", "|x1| with the sign of x2."),
    "nextafter": (2, "real floating", "same", "Next representable value after x1 toward x2."),
    "signbit": (1, "real numeric", "bool", "True where the sign bit is set."),
    "isnan": (1, "numeric", "bool", "True where x is NaN."),
    "isinf": (1, "numeric", "bool", "True where x is +-infinity."),
    "isfinite": (1, "numeric", "bool", "True where x is finite."),
    # complex parts
    "conj": (1, "numeric", "same", "Complex conjugate."),
    "real": (1, "numeric", "real", "Real part."),
    "imag": (1, "numeric", "real", "Imaginary part."),
    # comparisons
    "equal": (2, "any", "bool", "x1 == x2."),
    "not_equal": (2, "any", "bool", "x1 != x2."),
    "less": (2, "real numeric", "bool", "x1 < x2."),
    "less_equal": (2, "real numeric", "bool", "x1 <= x2."),
    "greater": (2, "real numeric", "bool", "x1 > x2."),
    "greater_equal": (2, "real numeric", "bool", "x1 >= x2."),
    # logical
    "logical_and": (2, "bool", "same", "Logical AND."),
    "logical_or": (2, "bool", "same", "Logical OR."),
    "logical_xor": (2, "bool", "same", "Logical XOR."),
    "logical_not": (1, "bool", "same", "Logical NOT."),
    # bitwise
    "bitwise_and": (2, "integer or boolean", "same", "Bitwise AND."),
    "bitwise_or": (2, "integer or boolean", "same", "Bitwise OR."),
    "bitwise_xor": (2, "integer or boolean", "same", "Bitwise XOR."),
    "bitwise_invert": (1, "integer or boolean", "same", "Bitwise NOT (logical NOT for bool)."),
    "bitwise_left_shift": (2, "integer", "same", "x1 << x2 (0 once the shift reaches the width)."),
    "bitwise_right_shift": (2, "integer", "same", "x1 >> x2, arithmetic for signed integers."),
}

PRIMS = {
    name: declare(name, "unary" if arity == 1 else "binary", accepts, result)
    for name, (arity, accepts, result, _) in ELEMENTWISE.items()
}
for _prim in PRIMS.values():
    _prim.rule = elementwise_rule(_prim)


# real and conj of a real-valued array are the array itself: they return a view instead of a
# copy (1000x NumPy's time at 1M elements as a copy; NumPy's real returns a view too).  positive
# keeps copying: ``y = +x; y += 1`` must not change x, as in NumPy.
_VIEW_OF_REAL = frozenset({"real", "conj"})
_REAL_KINDS = frozenset({dt.SIGNED, dt.UNSIGNED, dt.REAL})


def _make(name: str):
    arity, accepts, result, what = ELEMENTWISE[name]
    prim = PRIMS[name]
    if name in _VIEW_OF_REAL:

        def fn(x, /):
            if isinstance(x, Array) and x._dtype.kind in _REAL_KINDS:
                return x[...]  # a real array is its own real part and conjugate: a view
            return prim(x)

        params = "x : Array\n"
        what += (
            " A real-valued input gives a view of it (no copy), as NumPy's ``x.real`` and "
            "PyTorch's ``conj`` do."
        )
    elif arity == 1:

        def fn(x, /):
            return prim(x)

        params = "x : Array\n"
    else:

        def fn(x1, x2, /):
            return prim(x1, x2)

        params = "x1, x2 : Array or Python scalar (at least one an array)\n"
    fn.__name__ = fn.__qualname__ = name
    fn.__module__ = "strided"
    fn.__doc__ = (
        f"{what}\n\nParameters\n----------\n{params}\n"
        f"Accepts {accepts} dtypes; the result dtype is "
        + {
            "same": "the promoted input dtype.",
            "bool": "bool.",
            "real": "the real dtype matching the input (float32 for complex64, ...).",
            "float": "the promoted input dtype, or the default float dtype for integers.",
        }[result]
    )
    return fn


for _name in ELEMENTWISE:
    globals()[_name] = _make(_name)


def clip(x, /, min=None, max=None):
    """Clamp ``x`` to ``[min, max]`` (either bound may be None, a scalar or an array).

    A composition of ``maximum`` and ``minimum``, so NaN in ``x`` or a bound propagates; the result
    keeps ``x``'s dtype and takes the broadcast shape of all three.
    """
    from .core import astype_to, copy_of, to_array

    x = to_array(x, "clip")
    out = x
    if min is not None:
        out = PRIMS["maximum"](out, min)
    if max is not None:
        out = PRIMS["minimum"](out, max)
    if out is x:
        return copy_of(x)
    return astype_to(out, x._dtype)


__all__ = [*ELEMENTWISE, "clip"]
