"""Elementwise primitives, declared once as data: name -> (arity, accepted dtypes, result rule).

Result rules: ``same`` (the promoted input dtype), ``bool`` (comparisons and predicates), ``real``
(the real dtype of a complex input, as for ``abs``), ``float`` (integers are computed in the default
floating-point dtype, as NumPy and PyTorch do for ``divide``, ``exp``, ``sqrt``, ...).
"""

from __future__ import annotations

import math

import numpy as np

from .. import _dtypes as dt
from .._array import Array
from .._grad_state import Mode
from .._shapes import broadcast_shapes
from ..dispatch import Plan, _in_graph_args, declare
from .core import astype_to, copy_of, elementwise_rule, to_array

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
            # a real array is its own real part and conjugate: x itself when x is a plain Array
            # and no gradient is recorded (what a view would give, without building one; the
            # attribute tests are _in_graph_args's, inline: this call costs NumPy's x.real,
            # ~0.2 us), else a view through indexing, which the tape and subclasses see
            if x.__class__ is Array:
                if x._dtype.kind in _REAL_KINDS:
                    # (grad mode, a thread-local, is read only for a tracked x)
                    if (x._ag is None and (x._base is None or x._base._ag is None)) or (
                        not Mode.enabled
                    ):
                        return x
                    return x[...]
            elif isinstance(x, Array) and x._dtype.kind in _REAL_KINDS:
                return x[...]
            return prim.call(x)

        params = "x : Array\n"
        what += (
            " A real-valued input is returned as it is, or as a view of it (no copy), as "
            "NumPy's ``x.real`` and PyTorch's ``conj`` do."
        )
    elif arity == 1:

        def fn(x, /):
            return prim.call(x)  # (a method call: no argument tuple to build, unlike prim(x))

        params = "x : Array\n"
    else:

        def fn(x1, x2, /):
            return prim.call(x1, x2)

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


def _clip_rule(x, lo, hi, /) -> Plan:
    # clip() checked the bounds: Python scalars of x's kind, or arrays of x's dtype
    from .core import same_device

    arrays = [a for a in (x, lo, hi) if isinstance(a, Array)]
    device = same_device("clip", *arrays)
    shape = x._shape
    for a in arrays[1:]:
        if a._shape != shape:
            shape = broadcast_shapes(shape, a._shape, op="clip")
    return Plan(device, (shape, x._dtype), (x, lo, hi), None, follow=True)


#: clip in one pass, for bounds of x's own dtype or kind (see clip()); not differentiable itself:
#: clip() composes maximum and minimum when gradients are recorded
CLIP = declare("clip", "clip", "real numeric", "same", rule=_clip_rule)


def _clip_key(x, lo, hi, /):
    key = []
    for v in (x, lo, hi):
        if v.__class__ is Array:
            key.append((v._dtype, v._shape, v._strides))
        else:
            key.append(v.__class__)
    return tuple(key)


CLIP.memoize(_clip_key)


def _fused_bound(x: Array, bound, low: bool):
    """``bound`` as the fused kernel takes it (None: the dtype's extreme), or ``_NOT_FUSED``."""
    d = x._dtype
    cls = bound.__class__
    if cls is float:
        return bound if d.kind == dt.REAL else _NOT_FUSED
    limits = _LIMITS.get(d)
    if limits is None:
        if d.kind in dt.INTEGER_KINDS:
            info = np.iinfo(d.numpy)
            limits = _LIMITS[d] = (int(info.min), int(info.max))
        else:
            limits = _LIMITS[d] = (-math.inf, math.inf)
    if bound is None:
        return limits[0] if low else limits[1]
    if cls is Array:
        return bound if bound._dtype is d and bound._device is x._device else _NOT_FUSED
    if cls is int:
        return bound if limits[0] <= bound <= limits[1] else _NOT_FUSED
    return _NOT_FUSED


_NOT_FUSED = object()
_LIMITS: dict = {}  # dtype -> (lowest, highest): the fused kernel's value for a missing bound


def clip(x, /, min=None, max=None):
    """Clamp ``x`` to ``[min, max]`` (either bound may be None, a scalar or an array).

    NaN in ``x`` or a bound propagates; where ``min > max`` the result is ``max`` (NumPy's
    ``minimum(maximum(x, min), max)``); the result keeps ``x``'s dtype and takes the broadcast
    shape of all three.  Bounds of ``x``'s dtype (or Python scalars of its kind) run one fused
    kernel; other bounds, and calls recording gradients, compose ``maximum`` and ``minimum``.
    """
    x = to_array(x, "clip")
    if (min is not None or max is not None) and x._dtype.kind in _CLIP_KINDS:
        lo, hi = _fused_bound(x, min, True), _fused_bound(x, max, False)
        if lo is not _NOT_FUSED and hi is not _NOT_FUSED:
            # untracked (the bounds are scalars or arrays: only arrays can be tracked); grad
            # mode, a thread-local, is read only when something is
            if (
                not (
                    x._ag is not None
                    or (x._base is not None and x._base._ag is not None)
                    or (lo.__class__ is Array and _in_graph_args((lo,)))
                    or (hi.__class__ is Array and _in_graph_args((hi,)))
                )
                or not Mode.enabled
            ):
                return CLIP.call(x, lo, hi)
    out = x
    if min is not None:
        out = PRIMS["maximum"](out, min)
    if max is not None:
        out = PRIMS["minimum"](out, max)
    if out is x:
        return copy_of(x)
    return astype_to(out, x._dtype)


_CLIP_KINDS = (dt.SIGNED, dt.UNSIGNED, dt.REAL)


__all__ = [*ELEMENTWISE, "clip"]
