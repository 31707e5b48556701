"""Differential fuzzing: random programs of 1-5 operations, run on cpu, on meta and in NumPy.

A *program* is plain data (JSON): a few input arrays (shape, dtype, memory layout, value kind, value
seed) and a chain of steps ``(op name, raw integers)``.  The raw integers are resolved against the
array a step receives (an axis is ``raw % (ndim + 1) - 1``...), so any program is valid to run and
a shrinker that lowers the integers towards 0 simplifies the call.  Each step checks:

* cpu against NumPy (the oracle) where the standard pins the result: shape, dtype and values;
* cpu against meta: shape, dtype, and the type of an exception;
* every exception is one the namespace may raise and names the function called.

Programs run in a worker *process* (``Worker``) so that a crash (a segfault, an abort) becomes a
report carrying a runnable reproducer instead of killing the run.  ``tests/test_fuzz.py`` draws
programs with hypothesis (shrinking included); ``python -m tests.fuzz_programs`` is the long run
(``make fuzz``): ``--examples N --seed S --workers W`` (or FUZZ_EXAMPLES/FUZZ_SEED/FUZZ_WORKERS)
generates programs with NumPy's RNG, tallies every failure and prints a reproducer for each kind.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time
import traceback
from dataclasses import dataclass

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

DTYPES = (
    "bool",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "float32",
    "float64",
    "complex64",
    "complex128",
)
LAYOUTS = ("contiguous", "transposed", "sliced", "negative", "broadcast")
VALUE_KINDS = ("small", "small", "wide", "edge", "mixed")
ALLOWED = (TypeError, ValueError, IndexError, OverflowError, RuntimeError, NotImplementedError)


# -- generating programs: one generator, two sources of choices ------------------------------------
class RngChooser:
    """Choices from NumPy's RNG (the long run)."""

    def __init__(self, rng: np.random.Generator):
        self.rng = rng

    def integer(self, lo: int, hi: int) -> int:
        return int(self.rng.integers(lo, hi + 1))


class DataChooser:
    """Choices drawn through hypothesis (``st.data()``), so failures shrink."""

    def __init__(self, data):
        from hypothesis import strategies as st

        self.data, self.st = data, st

    def integer(self, lo: int, hi: int) -> int:
        return self.data.draw(self.st.integers(lo, hi))


def _pick(ch, seq):
    return seq[ch.integer(0, len(seq) - 1)]


def random_input(ch) -> dict:
    ndim = ch.integer(0, 4)
    shape = [ch.integer(1, 4) for _ in range(ndim)]
    if ndim and ch.integer(0, 9) == 0:
        shape[ch.integer(0, ndim - 1)] = 0  # zero-size
    return {
        "shape": shape,
        "dtype": _pick(ch, DTYPES),
        "layout": _pick(ch, LAYOUTS),
        "values": _pick(ch, VALUE_KINDS),
        "seed": ch.integer(0, 2**16),
    }


def random_program(ch, max_steps: int = 5) -> dict:
    inputs = [random_input(ch) for _ in range(ch.integer(1, 2))]
    steps = []
    for _ in range(ch.integer(1, max_steps)):
        op = _pick(ch, OP_NAMES)
        steps.append([op, [ch.integer(0, 2**10) for _ in range(6)]])
    return {"inputs": inputs, "steps": steps}


# -- building inputs -------------------------------------------------------------------------------
def make_values(spec: dict) -> np.ndarray:
    rng = np.random.default_rng(spec["seed"])
    shape, d = tuple(spec["shape"]), np.dtype(spec["dtype"])
    kind = spec["values"]
    if d.kind == "b":
        return rng.integers(0, 2, size=shape).astype(bool)
    if d.kind in "iu":
        info = np.iinfo(d)
        if kind == "small":
            lo, hi = max(info.min, -9), min(info.max, 9)
            return rng.integers(lo, hi + 1, size=shape).astype(d)
        if kind == "wide":
            return rng.integers(info.min, info.max, size=shape, dtype=d, endpoint=True)
        edge = np.array([info.min, info.max, 0, 1, info.max - 1, info.min + 1], dtype=d)
        out = rng.choice(edge, size=shape)
        if kind == "mixed":
            small = rng.integers(max(info.min, -9), min(info.max, 9) + 1, size=shape).astype(d)
            out = np.where(rng.integers(0, 2, size=shape).astype(bool), out, small)
        return out.astype(d)
    real = np.dtype(d.char.lower() if d.kind == "f" else ("f" if d.itemsize == 8 else "d"))
    fi = np.finfo(real)

    def part():
        if kind == "small":
            return np.round(rng.uniform(-4, 4, size=shape), 2)
        if kind == "wide":
            return rng.standard_normal(size=shape) * 10.0 ** rng.integers(-30, 30, size=shape)
        edge = np.array(
            [
                np.nan,
                np.inf,
                -np.inf,
                0.0,
                -0.0,
                fi.max,
                -fi.max,
                fi.tiny,
                fi.smallest_subnormal,
                1.0,
                -1.0,
                0.5,
            ],
            dtype=real,
        )
        out = rng.choice(edge, size=shape)
        if kind == "mixed":
            out = np.where(
                rng.integers(0, 2, size=shape).astype(bool), out, rng.uniform(-3, 3, shape)
            )
        return out

    with np.errstate(all="ignore"):
        if d.kind == "c":
            return (part().astype(real) + 1j * part().astype(real)).astype(d)
        return part().astype(d)


def in_layout(xp, a: np.ndarray, layout: str, device: str):
    """``(values, array)``: ``a`` in ``layout`` on ``device`` (``broadcast`` repeats a[:1])."""
    dev = device
    if device == "meta":

        def put(v):
            return xp.empty(v.shape, dtype=getattr(xp, v.dtype.name), device="meta")
    else:

        def put(v):
            return xp.asarray(v.copy(), device=dev)

    if layout == "contiguous" or a.ndim == 0:
        return a, put(a)
    if layout == "transposed":
        rev = tuple(range(a.ndim - 1, -1, -1))
        return a, xp.permute_dims(put(np.ascontiguousarray(a.transpose())), rev)
    if layout == "sliced":
        big = np.zeros(tuple(2 * s + 1 for s in a.shape), dtype=a.dtype)
        key = tuple(slice(1, None, 2) for _ in a.shape)
        big[key] = a
        return a, put(big)[key]
    if layout == "negative":
        key = tuple(slice(None, None, -1) for _ in a.shape)
        return a, put(np.ascontiguousarray(a[key]))[key]
    if layout == "broadcast":
        row = a[:1]
        return np.broadcast_to(row, a.shape).copy(), xp.broadcast_to(put(row), a.shape)
    raise ValueError(layout)


# -- the operations --------------------------------------------------------------------------------
@dataclass
class Call:
    """One resolved step: ``fn`` runs it on a strided array, ``ref`` on NumPy values (None: the
    standard leaves the values open, so only shape, dtype and cpu/meta agreement are checked)."""

    code: str  # Python source with {x} for the input
    fn: object
    ref: object = None
    tol: float = 0.0  # relative tolerance of floating results (0: exact)
    atol_scale: float = 0.0  # absolute tolerance as a multiple of max |input| (sums, products)
    names: tuple = ()  # function names an error message may start with
    inplace: bool = False  # fn mutates a copy of x and returns it
    open_if: object = None  # f(input values) -> reason: a mismatch there is a known open issue
    alt_ref: object = None  # a second reference (NumPy in a wider precision): either may match


def _axis(x, raw, allow_none=True, bad=True):
    """An axis for ``x`` from a raw integer: None, in range (negative too) or, rarely, invalid."""
    nd = x.ndim
    r = raw % 16
    if allow_none and r == 0:
        return None
    if bad and r == 15:
        return nd + raw % 3  # out of range: an IndexError on every device
    if nd == 0:
        return None if allow_none else 0
    a = raw % nd
    return a - nd if raw % 2 else a


def _np_dtype(x):
    return np.dtype(x.dtype.name)


_UFUNC = {
    "acos": "arccos",
    "asin": "arcsin",
    "atan": "arctan",
    "atan2": "arctan2",
    "acosh": "arccosh",
    "asinh": "arcsinh",
    "atanh": "arctanh",
    "pow": "power",
    "bitwise_invert": "invert",
    "bitwise_left_shift": "left_shift",
    "bitwise_right_shift": "right_shift",
}
_EXACT = {
    "abs",
    "negative",
    "positive",
    "square",
    "sign",
    "add",
    "subtract",
    "multiply",
    "floor",
    "ceil",
    "trunc",
    "round",
    "signbit",
    "isnan",
    "isinf",
    "isfinite",
    "conj",
    "real",
    "imag",
    "equal",
    "not_equal",
    "less",
    "less_equal",
    "greater",
    "greater_equal",
    "logical_and",
    "logical_or",
    "logical_xor",
    "logical_not",
    "maximum",
    "minimum",
    "bitwise_and",
    "bitwise_or",
    "bitwise_xor",
    "bitwise_invert",
    "copysign",
    "nextafter",
}
# special cases where the standard and NumPy part ways (pow(-inf, 0.5) is +inf in the standard,
# NaN in NumPy; floor_divide(-3, inf) is -0 in the standard, -1 in NumPy)
_NUMPY_DIFFERS = {"pow", "floor_divide", "remainder"}
# rounded in complex arithmetic (an FMA may differ by an ulp)
_COMPLEX_ROUNDED = {"multiply", "square", "sign", "abs", "pow", "divide", "reciprocal"}


def _open(name):
    """Known open mismatches, counted as "open" (not failures): products of non-finite or huge
    values on BLAS (matmul, tensordot), whose order of operations and FMA use decide which NaN or
    infinity comes out, as they do in NumPy (see ``tests/test_complex_special_values.py``)."""

    def reason(*arrays):
        for a in arrays:
            if name in ("floor_divide", "remainder") and a.dtype.kind == "f":
                return "floor of the rounded quotient (NumPy: divmod's exact one)"
            if name in ("matmul", "tensordot") and a.dtype.kind in "fc" and a.size:
                big = np.sqrt(np.finfo(a.real.dtype).max) / 4
                if not np.isfinite(a).all() or (np.abs(a) > big).any():
                    return "BLAS products of non-finite or huge values"
        return None

    return reason


# standard-unspecified integer results: overflowing shifts, division by zero, INT_MIN / -1
_INT_OPEN = {"floor_divide", "remainder", "bitwise_left_shift", "bitwise_right_shift", "pow"}
# a wider type for NumPy's complex results: complex64 -> complex128, complex128 -> long double
_WIDER = {"c": {8: np.complex128, 16: np.clongdouble}}


def _elementwise_ref(name, result, wide=False):
    """NumPy's ``name`` (the oracle), with the standard's complex special cases substituted where
    NumPy does not follow them (``tests/complex_special.py``).  ``wide``: computed in a wider
    precision and rounded back (None where there is none), so results more accurate than NumPy's
    own (no spurious overflow of intermediate steps) match too."""
    from tests.complex_special import apply_special

    ufunc = getattr(np, _UFUNC.get(name, name))

    def ref(*arrays):
        if name in _NUMPY_DIFFERS and any(
            a.dtype.kind in "fc" and not np.isfinite(a).all() for a in arrays
        ):
            if not (name == "pow" and all(a.dtype.kind == "c" for a in arrays)):
                return None  # the standard's special cases, which NumPy does not follow here
        d = [a.dtype for a in arrays]
        if result == "float" and not any(t.kind in "fc" for t in d):
            arrays = [a.astype(np.float64) for a in arrays]  # the standard's default float
        cplx = arrays[0].dtype.kind == "c"
        if wide:
            if not cplx or np.finfo(np.longdouble).nmant < 63:
                return None
            wider = _WIDER["c"][arrays[0].dtype.itemsize]
            with np.errstate(all="ignore"):
                out = ufunc(*[a.astype(wider) for a in arrays])
                if out.dtype.kind == "c":
                    out = out.astype(np.result_type(*arrays))
                elif out.dtype.kind == "f":
                    out = out.astype(arrays[0].real.dtype)
        else:
            with np.errstate(all="ignore"):
                out = ufunc(*arrays)
        if name in ("abs",) and out.dtype.kind == "c":
            out = out.real
        if cplx and len(arrays) == 1:
            out = apply_special(name, arrays[0], out)
            if name == "expm1":
                # expm1(x + 0j) = expm1(x) + 0j: NumPy's exp(x) * sin(0) is NaN once exp(x)
                # overflows
                z = arrays[0]
                real_axis = (z.imag == 0) & np.isfinite(z.real)
                with np.errstate(all="ignore"):
                    out = np.where(real_axis, np.expm1(z.real) + 1j * z.imag, out).astype(out.dtype)
        if cplx and name == "log1p":
            out = _log1p_near_zero(arrays[0], out)
        if cplx and name == "pow" and len(arrays) == 2:
            out = _mask_ill_conditioned_pow(arrays[0], arrays[1], out)
        return out

    return ref


def _log1p_near_zero(z, out):
    """NumPy's complex log1p is log(1 + z), which rounds 1 + z first (log1p(1e-300 + 0j) is 0,
    in long double too); near zero the reference is log|1 + z| = log1p(x (2 + x) + y^2) / 2 and
    atan2(y, 1 + x), from NumPy's real log1p in long double."""
    small = np.isfinite(z) & (np.abs(z.real) < 0.5) & (np.abs(z.imag) < 0.5)
    if not small.any():
        return out
    x = z.real.astype(np.longdouble)
    y = z.imag.astype(np.longdouble)
    with np.errstate(all="ignore"):
        re = 0.5 * np.log1p(x * (2 + x) + y * y)
        im = np.arctan2(y, 1 + x)
        near = (re + 1j * im.astype(np.clongdouble)).astype(out.dtype)
    return np.where(small, near, out).astype(out.dtype)


def _mask_ill_conditioned_pow(x, y, out):
    """x ** y = exp(y log x): where ``|imag(y log x)|`` is so large that the rounding of log(x)
    turns its phase by more than a degree, the result's direction is noise in any implementation:
    those elements are masked (not compared)."""
    with np.errstate(all="ignore"):
        w = np.broadcast_to(y, np.broadcast_shapes(x.shape, y.shape)).astype(np.clongdouble)
        w = w * np.log(np.broadcast_to(x, w.shape).astype(np.clongdouble))
        eps = np.finfo(x.real.dtype).eps
        bad = ~(np.abs(w.imag) * eps * 64 < 0.02)
    if not bad.any():
        return out
    return np.ma.masked_array(out, mask=np.broadcast_to(bad, out.shape))


def _unary(name, result):
    def build(xp, x, raw):
        fn = getattr(xp, name)
        ref = _elementwise_ref(name, result)
        cplx = x.dtype.name.startswith("complex")
        exact = name in _EXACT and not (cplx and name in _COMPLEX_ROUNDED)
        if x.dtype.name in ("float32", "complex64"):
            tol = 0 if exact else 2e-5
        else:
            tol = 0 if exact else 1e-12
        if not exact and cplx:
            tol *= 10
        return Call(
            f"xp.{name}({{x}})",
            fn,
            ref,
            tol,
            names=(name,),
            open_if=_open(name),
            alt_ref=_elementwise_ref(name, result, wide=True) if cplx else None,
        )

    return build


def _binary(name, result):
    def build(xp, x, raw, ref):
        fn = getattr(xp, name)
        cplx = x.dtype.name.startswith("complex")
        exact = name in _EXACT or name in ("floor_divide", "remainder")
        exact = exact and not (cplx and name in _COMPLEX_ROUNDED)
        tol = 0 if exact else (2e-5 if x.dtype.name in ("float32", "complex64") else 1e-12)
        how = raw[0] % 4
        if how == 0:  # x with itself (aliasing operands)
            return Call(
                f"xp.{name}({{x}}, {{x}})",
                lambda a: fn(a, a),
                lambda a: ref(a, a),
                tol,
                names=(name,),
            )
        if how == 1:  # a Python scalar of the array's kind
            kind = x.dtype.name
            if kind == "bool":
                s = bool(raw[1] % 2)
            elif "int" in kind:
                s = raw[1] % 5 + (0 if "uint" in kind else -2)
            elif "complex" in kind:
                s = complex(raw[1] % 7 - 3, 0.5)
            else:
                s = [0.5, -2.0, 0.0, float("inf"), float("nan"), -0.0, 3.0][raw[1] % 7]

            def sref(a, s=s):
                return ref(a, np.asarray(s, dtype=a.dtype))

            return Call(f"xp.{name}({{x}}, {s!r})", lambda a: fn(a, s), sref, tol, names=(name,))
        if how == 2:  # scalar first
            s = 2 if "int" in x.dtype.name else (True if x.dtype.name == "bool" else 1.5)

            def sref(a, s=s):
                return ref(np.asarray(s, dtype=a.dtype), a)

            return Call(f"xp.{name}({s!r}, {{x}})", lambda a: fn(s, a), sref, tol, names=(name,))
        # a reversed (negative-stride) view of x along its last axis, or a 0-d slice
        if x.ndim == 0:
            return Call(
                f"xp.{name}({{x}}, {{x}})",
                lambda a: fn(a, a),
                lambda a: ref(a, a),
                tol,
                names=(name,),
            )
        return Call(
            f"xp.{name}({{x}}, xp.flip({{x}}, axis=-1))",
            lambda a: fn(a, xp.flip(a, axis=-1)),
            lambda a: ref(a, np.flip(a, axis=-1)),
            tol,
            names=(name,),
        )

    def build_open(xp, x, raw):
        call = build(xp, x, raw, _elementwise_ref(name, result))
        if x.dtype.name.startswith("complex"):
            call.alt_ref = build(xp, x, raw, _elementwise_ref(name, result, wide=True)).ref
        call.open_if = _open(name)
        return call

    return build_open


def _reduction(name):
    def build(xp, x, raw):
        axis = _axis(x, raw[0])
        if raw[1] % 5 == 0 and x.ndim >= 2:
            axis = (0, x.ndim - 1)
        keepdims = bool(raw[2] % 2)
        fn = getattr(xp, name)
        npf = {
            "sum": np.sum,
            "prod": np.prod,
            "max": np.max,
            "min": np.min,
            "any": np.any,
            "all": np.all,
            "mean": np.mean,
        }[name]
        kw = f"axis={axis!r}, keepdims={keepdims}"
        fl = x.dtype.name in ("float32", "complex64")
        tol = 0 if name in ("max", "min", "any", "all") else (1e-4 if fl else 1e-11)

        def ref(a):
            with np.errstate(all="ignore"):
                if name in ("sum", "prod") and a.dtype.kind in "biu":
                    dtype = np.uint64 if a.dtype.kind == "u" else np.int64
                    return npf(a, axis=axis, keepdims=keepdims, dtype=dtype)
                if name == "mean" and a.dtype.kind in "biu":
                    a = a.astype(np.float64)
                return npf(a, axis=axis, keepdims=keepdims)

        if name in ("max", "min"):

            def ref2(a):
                n = (
                    a.size
                    if axis is None
                    else int(
                        np.prod([a.shape[i] for i in ((axis,) if isinstance(axis, int) else axis)])
                    )
                )
                if n == 0:
                    raise ValueError("empty")
                return ref(a)

            r = ref2
        else:
            r = ref
        scale = 0.0 if name in ("max", "min", "any", "all") else 4.0 * (1e-4 if fl else 1e-11)
        if name == "prod":
            r = ref if _np_dtype(x).kind not in "fc" else None  # rounding order: open
        return Call(
            f"xp.{name}({{x}}, {kw})",
            lambda a: fn(a, axis=axis, keepdims=keepdims),
            r,
            tol,
            atol_scale=scale,
            names=(name,),
            open_if=_overflow_order if name in ("sum", "mean") else None,
        )

    return build


def _overflow_order(a):
    """Sums of infinities and values that overflow: the result (inf or NaN) depends on the order
    of the additions, which the standard leaves to the implementation.  Two huge finite values
    are enough: max + max - max is inf added left to right, max in another order."""
    if a.dtype.kind in "fc" and a.size:
        with np.errstate(all="ignore"):
            finite = np.isfinite(a)
            huge = int((np.abs(a[finite]) > np.finfo(a.real.dtype).max / 4).sum())
            if huge >= 2 or (huge and not finite.all()):
                return "summation order with infinities and overflow"
    return None


def _var(name):
    def build(xp, x, raw):
        axis = _axis(x, raw[0])
        correction = [0, 1, 0.5, 3][raw[1] % 4]
        keepdims = bool(raw[2] % 2)
        fn = getattr(xp, name)
        fl = x.dtype.name in ("float32", "complex64")

        def ref(a):
            n = a.size if axis is None else a.shape[axis]
            with np.errstate(all="ignore"):
                r = getattr(np, name)(a, axis=axis, ddof=correction, keepdims=keepdims)
            if n - correction <= 0:
                r = np.full_like(r, np.nan)
            return r

        return Call(
            f"xp.{name}({{x}}, axis={axis!r}, correction={correction!r}, keepdims={keepdims})",
            lambda a: fn(a, axis=axis, correction=correction, keepdims=keepdims),
            ref,
            1e-3 if fl else 1e-9,
            atol_scale=1e-3 if fl else 1e-9,
            names=(name,),
        )

    return build


def _scan(name):
    def build(xp, x, raw):
        axis = _axis(x, raw[0], allow_none=x.ndim <= 1)
        incl = bool(raw[1] % 2)
        fn = getattr(xp, name)
        fl = x.dtype.name in ("float32", "complex64")

        def ref(a):
            ax = 0 if axis is None else axis
            if a.ndim == 0:
                raise ValueError("0-d")
            dtype = None
            if a.dtype.kind in "biu":
                dtype = np.uint64 if a.dtype.kind == "u" else np.int64
            f = np.cumsum if name == "cumulative_sum" else np.cumprod
            with np.errstate(all="ignore"):
                r = f(a, axis=ax, dtype=dtype)
            if incl:
                shape = list(r.shape)
                shape[ax] = 1
                first = np.full(shape, 0 if name == "cumulative_sum" else 1, dtype=r.dtype)
                r = np.concatenate([first, r], axis=ax)
            return r

        open_ = name == "cumulative_prod" and _np_dtype(x).kind in "fc"
        return Call(
            f"xp.{name}({{x}}, axis={axis!r}, include_initial={incl})",
            lambda a: fn(a, axis=axis, include_initial=incl),
            None if open_ else ref,
            1e-4 if fl else 1e-11,
            atol_scale=1e-4 if fl else 1e-11,
            names=(name,),
        )

    return build


def _argreduce(name):
    def build(xp, x, raw):
        axis = _axis(x, raw[0])
        keepdims = bool(raw[1] % 2)
        fn = getattr(xp, name)

        def ref(a):
            if a.size == 0 and axis is None or axis is not None and a.shape[axis] == 0:
                raise ValueError("empty")
            return getattr(np, name)(a, axis=axis, keepdims=keepdims)

        return Call(
            f"xp.{name}({{x}}, axis={axis!r}, keepdims={keepdims})",
            lambda a: fn(a, axis=axis, keepdims=keepdims),
            ref,
            names=(name,),
        )

    return build


def _sort(name):
    def build(xp, x, raw):
        axis = _axis(x, raw[0], allow_none=False)
        desc = bool(raw[1] % 2)
        fn = getattr(xp, name)

        def ref(a):
            if a.ndim == 0:
                raise ValueError("0-d")
            if name == "sort":
                s = np.sort(a, axis=axis, kind="stable")
                return np.flip(s, axis=axis) if desc else s
            if not desc:
                return np.argsort(a, axis=axis, kind="stable")
            o = np.argsort(np.flip(a, axis=axis), axis=axis, kind="stable")
            return a.shape[axis] - 1 - np.flip(o, axis=axis)

        return Call(
            f"xp.{name}({{x}}, axis={axis!r}, descending={desc})",
            lambda a: fn(a, axis=axis, descending=desc),
            ref,
            names=(name,),
        )

    return build


def _view_ops(xp, x, raw):
    """A random view: basic indexing with steps (negative too), permute_dims, flip, reshape..."""
    nd = x.ndim
    k = raw[0] % 7
    if k == 0 and nd:
        key = []
        for d in range(nd):
            r = raw[1 + d % 5] >> d
            n = x.shape[d]
            c = r % 4
            if c == 0:
                key.append(slice(None, None, -1 - (r >> 2) % 2))
            elif c == 1 and n:
                key.append((r >> 2) % n - (n if r % 8 >= 4 else 0))
            elif c == 2:
                key.append(slice((r >> 2) % 3, None, 1 + (r >> 4) % 2))
            else:
                key.append(slice(None))
        key = tuple(key)
        return Call(f"{{x}}[{key!r}]", lambda a: a[key], lambda a: a[key], names=("__getitem__",))
    if k == 1:
        perm = tuple(np.random.default_rng(raw[1]).permutation(nd).tolist())
        return Call(
            f"xp.permute_dims({{x}}, {perm!r})",
            lambda a: xp.permute_dims(a, perm),
            lambda a: np.transpose(a, perm),
            names=("permute_dims",),
        )
    if k == 2:
        axis = _axis(x, raw[1])
        return Call(
            f"xp.flip({{x}}, axis={axis!r})",
            lambda a: xp.flip(a, axis=axis),
            lambda a: np.flip(a, axis=axis),
            names=("flip",),
        )
    if k == 3:
        shapes = [(-1,), (x.size,), tuple(reversed(x.shape)), (1,) + tuple(x.shape), (2, -1)]
        shape = shapes[raw[1] % len(shapes)]
        return Call(
            f"xp.reshape({{x}}, {shape!r})",
            lambda a: xp.reshape(a, shape),
            lambda a: np.reshape(a, shape),
            names=("reshape",),
        )
    if k == 4:
        axis = raw[1] % (nd + 1) - (nd + 1 if raw[2] % 2 else 0)
        return Call(
            f"xp.expand_dims({{x}}, axis={axis!r})",
            lambda a: xp.expand_dims(a, axis=axis),
            lambda a: np.expand_dims(a, axis),
            names=("expand_dims",),
        )
    if k == 5:
        shape = (raw[1] % 3 + 1,) + tuple(x.shape)
        return Call(
            f"xp.broadcast_to({{x}}, {shape!r})",
            lambda a: xp.broadcast_to(a, shape),
            lambda a: np.broadcast_to(a, shape),
            names=("broadcast_to",),
        )
    axis = _axis(x, raw[1], allow_none=False)
    shift = raw[2] % 7 - 3
    return Call(
        f"xp.roll({{x}}, {shift}, axis={axis!r})",
        lambda a: xp.roll(a, shift, axis=axis),
        lambda a: np.roll(a, shift, axis=axis),
        names=("roll",),
    )


def _copy_ops(xp, x, raw):
    k = raw[0] % 6
    nd = x.ndim
    if k == 0:
        d = DTYPES[raw[1] % len(DTYPES)]
        src, _dst = x.dtype.name, d

        def ref(a):
            with np.errstate(all="ignore"):
                return a.astype(d)

        # float -> int of NaN/inf/out-of-range and complex -> real are not pinned
        pinned = not (
            src.startswith(("float", "complex")) and not d.startswith(("float", "complex"))
        )
        pinned = pinned and not (src.startswith("complex") and not d.startswith("complex"))
        return Call(
            f"xp.astype({{x}}, xp.{d})",
            lambda a: xp.astype(a, getattr(xp, d)),
            ref if pinned else None,
            names=("astype",),
        )
    if k == 1:
        axis = _axis(x, raw[1], allow_none=False)
        return Call(
            f"xp.concat([{{x}}, {{x}}], axis={axis!r})",
            lambda a: xp.concat([a, a], axis=axis),
            lambda a: np.concatenate([a, a], axis=axis),
            names=("concat",),
        )
    if k == 2:
        axis = raw[1] % (nd + 1)
        return Call(
            f"xp.stack([{{x}}, {{x}}], axis={axis!r})",
            lambda a: xp.stack([a, a], axis=axis),
            lambda a: np.stack([a, a], axis=axis),
            names=("stack",),
        )
    if k == 3:
        reps = tuple(raw[1 + i] % 3 for i in range(min(nd, 3)))
        return Call(
            f"xp.tile({{x}}, {reps!r})",
            lambda a: xp.tile(a, reps),
            lambda a: np.tile(a, reps),
            names=("tile",),
        )
    if k == 4:
        n = raw[1] % 3
        axis = -1 if nd else None
        if axis is None:
            return Call("xp.diff({x})", lambda a: xp.diff(a), None, names=("diff",))
        return Call(
            f"xp.diff({{x}}, n={n}, axis=-1)",
            lambda a: xp.diff(a, n=n, axis=-1),
            None if x.dtype.name == "bool" else (lambda a: _np_diff(a, n)),
            names=("diff",),
        )
    r = raw[1] % 3
    axis = _axis(x, raw[2])
    return Call(
        f"xp.repeat({{x}}, {r}, axis={axis!r})",
        lambda a: xp.repeat(a, r, axis=axis),
        lambda a: np.repeat(a, r, axis=axis),
        names=("repeat",),
    )


def _np_diff(a, n):
    with np.errstate(all="ignore"):
        return np.diff(a, n=n, axis=-1)


def _index_ops(xp, x, raw):
    k = raw[0] % 7
    nd = x.ndim
    if k == 0 and nd:
        n = x.shape[0]
        idx = [(r % (2 * n + 1)) - n if n else r % 2 for r in raw[1:4]][: raw[4] % 4]
        idx_np = np.asarray(idx, dtype=np.int64)

        def ref(a):
            if any(i < -a.shape[0] or i >= a.shape[0] for i in idx):
                raise IndexError("out of bounds")
            return np.take(a, idx_np, axis=0)

        return Call(
            f"xp.take({{x}}, xp.asarray({idx!r}, dtype=xp.int64), axis=0)",
            lambda a: xp.take(a, xp.asarray(idx, dtype=xp.int64, device=a.device), axis=0),
            ref,
            names=("take",),
        )
    if k == 1:  # a boolean mask (data-dependent: meta refuses)

        def fn(a):
            return a[xp.greater(xp.real(a), 0) if a.dtype != xp.bool else a]

        def ref(a):
            return a[np.real(a) > 0 if a.dtype != bool else a]

        return Call("{x}[mask of real({x}) > 0]", fn, ref, names=("__getitem__", "boolean"))
    if k == 2:

        def fn(a):
            c = xp.greater(xp.real(a), 0) if a.dtype != xp.bool else a
            return xp.where(c, a, xp.flip(a))

        def ref(a):
            c = np.real(a) > 0 if a.dtype != bool else a
            return np.where(c, a, np.flip(a))

        return Call("xp.where(real({x}) > 0, {x}, xp.flip({x}))", fn, ref, names=("where",))
    if k == 3:  # setitem into a copy, basic index, a scalar or an array value

        def fn(a):
            y = xp.asarray(a, copy=True)
            if y.ndim:
                y[..., :1] = y[..., -1:]
            else:
                y[...] = y
            return y

        def ref(a):
            y = a.copy()
            if y.ndim:
                y[..., :1] = y[..., -1:]
            return y

        return Call("y = copy({x}); y[..., :1] = y[..., -1:]", fn, ref, names=("__setitem__",))
    if k == 4 and nd:  # integer-array setitem with repeated indices
        n = x.shape[0]
        idx = [r % n for r in raw[1:3]] if n else []

        def fn(a):
            y = xp.asarray(a, copy=True)
            key = xp.asarray(idx, dtype=xp.int64, device=a.device)
            y[key] = y[xp.zeros((len(idx),), dtype=xp.int64, device=a.device)] if n else y[key]
            return y

        def ref(a):
            y = a.copy()
            if n:
                y[np.asarray(idx)] = y[np.zeros(len(idx), dtype=np.int64)]
            return y

        return Call(f"y = copy({{x}}); y[{idx!r}] = y[[0, 0]]", fn, ref, names=("__setitem__",))
    if k == 5 and x.ndim == 1:
        v = [(r % 9) - 4 for r in raw[1:4]]
        side = "left" if raw[4] % 2 else "right"

        def fn(a):
            s = xp.sort(a)
            return xp.searchsorted(s, xp.asarray(v, dtype=a.dtype, device=a.device), side=side)

        def ref(a):
            if a.dtype.kind in "bc":
                raise TypeError("not real")
            return np.searchsorted(np.sort(a), np.asarray(v).astype(a.dtype), side=side)

        return Call(
            f"xp.searchsorted(xp.sort({{x}}), xp.asarray({v!r}), side={side!r})",
            fn,
            ref,
            names=("searchsorted", "sort", "asarray"),
        )
    if k == 6:

        def fn(a):
            return xp.isin(a, xp.flip(a) if a.ndim else a, invert=bool(raw[1] % 2))

        def ref(a):
            return np.isin(a, a, invert=bool(raw[1] % 2))

        return Call("xp.isin({x}, xp.flip({x}))", fn, ref, names=("isin",))
    return _view_ops(xp, x, raw)


def _widened(ref):
    """``ref`` computed on operands in a wider float type and rounded back (None for other
    dtypes): NumPy's long double and complex long double products run outside BLAS, without
    BLAS's overflow of intermediate products or its alpha scaling (``inf * 0``)."""
    wider = {"f": {4: np.float64, 8: np.longdouble}, "c": {8: np.complex128, 16: np.clongdouble}}

    def alt(a):
        if a.dtype.kind not in "fc" or np.finfo(np.longdouble).nmant < 63:
            return None
        with np.errstate(all="ignore"):
            return np.asarray(ref(a.astype(wider[a.dtype.kind][a.dtype.itemsize]))).astype(a.dtype)

    return alt


def _linalg_ops(xp, x, raw):
    k = raw[0] % 3
    fl = x.dtype.name in ("float32", "complex64")
    tol = 1e-4 if fl else 1e-10
    if k == 0:
        return Call(
            "xp.matmul({x}, xp.matrix_transpose({x}))",
            lambda a: xp.matmul(a, xp.matrix_transpose(a)),
            lambda a: _np_matmul(a, np.swapaxes(a, -1, -2) if a.ndim >= 2 else a),
            tol,
            atol_scale=tol * 8,
            names=("matmul", "matrix_transpose"),
            open_if=_open("matmul"),
            alt_ref=_widened(lambda a: _np_matmul(a, np.swapaxes(a, -1, -2) if a.ndim >= 2 else a)),
        )
    if k == 1:
        axes = raw[1] % 3

        def ref(a):
            if a.dtype.kind == "b":
                raise TypeError("bool")
            return _np_tensordot(a, a, axes)

        return Call(
            f"xp.tensordot({{x}}, {{x}}, axes={axes})",
            lambda a: xp.tensordot(a, a, axes=axes),
            ref,
            tol,
            atol_scale=tol * 8,
            names=("tensordot",),
            open_if=_open("tensordot"),
            alt_ref=_widened(ref),
        )
    lo, hi = [(-1, 1), (0, None), (None, 0.5), (2, -2)][raw[1] % 4]

    def ref(a):
        if a.dtype.kind == "c":
            raise TypeError("complex")
        lo_, hi_ = lo, hi
        if a.dtype.kind in "iub":
            lo_ = None if lo is None else int(lo)
            hi_ = None if hi is None else int(hi)
        out = a
        with np.errstate(all="ignore"):
            if lo_ is not None:
                out = np.maximum(out, np.asarray(lo_).astype(a.dtype))
            if hi_ is not None:
                out = np.minimum(out, np.asarray(hi_).astype(a.dtype))
        return out.astype(a.dtype)

    return Call(
        f"xp.clip({{x}}, {lo!r}, {hi!r})",
        lambda a: xp.clip(a, lo, hi),
        ref if _np_dtype(x).kind not in "biu" or not isinstance(hi, float) else None,
        names=("clip",),
    )


def _more_ops(xp, x, raw):
    """Data-dependent and remaining shape functions: unique_*, nonzero, count_nonzero,
    take_along_axis, squeeze, moveaxis, unstack, vecdot, boolean-mask setitem."""
    k = raw[0] % 9
    nd = x.ndim
    if k == 0:
        return Call("xp.unique_values({x})", xp.unique_values, _np_unique, names=("unique_values",))
    if k == 1:

        def fn(a):
            return xp.unique_counts(a).counts

        def ref(a):
            if a.dtype.kind in "fc" and np.isnan(a).any():
                return None  # every NaN is its own value: NumPy 2 groups them
            return np.unique_counts(a).counts

        return Call("xp.unique_counts({x}).counts", fn, ref, names=("unique_counts",))
    if k == 2:

        def fn(a):
            return xp.stack(xp.nonzero(a)) if a.ndim else xp.nonzero(a)

        def ref(a):
            if a.ndim == 0:
                raise ValueError("0-d")
            return np.stack(np.nonzero(a)).astype(np.int64)

        return Call("xp.stack(xp.nonzero({x}))", fn, ref, names=("nonzero", "stack"))
    if k == 3:
        axis = _axis(x, raw[1])
        keep = bool(raw[2] % 2)

        def ref(a):
            return np.asarray(np.count_nonzero(a, axis=axis, keepdims=keep), dtype=np.int64)

        return Call(
            f"xp.count_nonzero({{x}}, axis={axis!r}, keepdims={keep})",
            lambda a: xp.count_nonzero(a, axis=axis, keepdims=keep),
            ref,
            names=("count_nonzero",),
        )
    if k == 4 and nd:
        axis = _axis(x, raw[1], allow_none=False)

        def fn(a):
            return xp.take_along_axis(a, xp.argsort(a, axis=axis), axis=axis)

        def ref(a):
            return np.take_along_axis(a, np.argsort(a, axis=axis, kind="stable"), axis=axis)

        return Call(
            f"xp.take_along_axis({{x}}, xp.argsort({{x}}, axis={axis}), axis={axis})",
            fn,
            ref,
            names=("take_along_axis", "argsort"),
        )
    if k == 5:
        ones = tuple(i for i, n in enumerate(x.shape) if n == 1)
        axis = ones[: 1 + raw[1] % 2] if ones and raw[2] % 4 else (raw[1] % max(nd, 1),)
        return Call(
            f"xp.squeeze({{x}}, axis={axis!r})",
            lambda a: xp.squeeze(a, axis=axis),
            lambda a: np.squeeze(a, axis=axis),
            names=("squeeze",),
        )
    if k == 6:
        src, dst = raw[1] % (nd + 1) - 1, raw[2] % (nd + 1) - 1
        return Call(
            f"xp.moveaxis({{x}}, {src}, {dst})",
            lambda a: xp.moveaxis(a, src, dst),
            lambda a: np.moveaxis(a, src, dst),
            names=("moveaxis",),
        )
    if k == 7:
        fl = x.dtype.name in ("float32", "complex64")
        tol = 1e-4 if fl else 1e-10

        def ref(a):
            if a.ndim == 0 or a.dtype.kind == "b":
                raise TypeError("no")
            with np.errstate(all="ignore"):
                return np.vecdot(a, np.flip(a, axis=-1))

        return Call(
            "xp.vecdot({x}, xp.flip({x}, axis=-1))",
            lambda a: xp.vecdot(a, xp.flip(a, axis=-1)),
            ref,
            tol,
            atol_scale=tol * 8,
            names=("vecdot", "flip"),
            open_if=_open("matmul"),
            alt_ref=_widened(ref),
        )

    def fn(a):
        y = xp.asarray(a, copy=True)
        floating = xp.isdtype(y.dtype, ("real floating", "complex floating"))
        y[xp.isnan(xp.real(y)) if floating else y != y] = 0
        return y

    def ref(a):
        y = a.copy()
        y[np.isnan(np.real(y)) if y.dtype.kind in "fc" else y != y] = 0
        return y

    return Call("y = copy({x}); y[mask] = 0", fn, ref, names=("__setitem__",))


def _np_unique(a):
    if a.dtype.kind in "fc" and np.isnan(a).any():
        return None
    return np.unique(a.reshape(-1))


def _np_matmul(a, b):
    if a.ndim == 0 or a.dtype.kind == "b":
        raise TypeError("no")
    with np.errstate(all="ignore"):
        return np.matmul(a, b)


def _np_tensordot(a, b, axes):
    with np.errstate(all="ignore"):
        return np.tensordot(a, b, axes=axes)


def _op_table():
    from strided._ops.elementwise import ELEMENTWISE

    ops = {}
    for name, (arity, _accepts, result, _doc) in ELEMENTWISE.items():
        ops[name] = (_unary if arity == 1 else _binary)(name, result)
    for name in ("sum", "prod", "max", "min", "any", "all", "mean"):
        ops[name] = _reduction(name)
    for name in ("var", "std"):
        ops[name] = _var(name)
    for name in ("cumulative_sum", "cumulative_prod"):
        ops[name] = _scan(name)
    for name in ("argmax", "argmin"):
        ops[name] = _argreduce(name)
    for name in ("sort", "argsort"):
        ops[name] = _sort(name)
    # the non-elementwise groups weigh more: they exercise layouts and shapes
    for i in range(6):
        ops[f"view{i}"] = _view_ops
        ops[f"index{i}"] = _index_ops
    for i in range(3):
        ops[f"more{i}"] = _more_ops
        ops[f"copy{i}"] = _copy_ops
        ops[f"linalg{i}"] = _linalg_ops
    return ops


OPS = _op_table()
OP_NAMES = sorted(OPS)
TEST_ONLY_OPS = ("__crash__", "__wrong__")


# -- running a program (inside the worker) ---------------------------------------------------------
class Failure(Exception):
    def __init__(self, kind: str, detail: str):
        super().__init__(f"{kind}: {detail}")
        self.kind, self.detail = kind, detail


def _to_np(x):
    return np.asarray(x)


def _compare(step: int, call: Call, want: np.ndarray, got, x_np: np.ndarray) -> None:
    try:
        _compare_values(step, call, _unmask(want, got), got, x_np)
    except Failure as f:
        if call.alt_ref is not None:
            try:
                alt = call.alt_ref(x_np)
            except Exception:
                alt = None
            if alt is not None:
                try:
                    _compare_values(step, call, _unmask(alt, got), got, x_np)
                    return  # as NumPy computes it in a wider precision
                except Failure:
                    pass
        reason = call.open_if(x_np) if call.open_if is not None else None
        if reason:
            raise Failure("open", f"{f.detail} [{reason}]") from None
        raise


def _unmask(want, got):
    """A masked reference element (values no implementation pins, such as the direction of an
    ill-conditioned power) takes the cpu value: only shape and dtype are checked there."""
    if not isinstance(want, np.ma.MaskedArray):
        return want
    got_np = np.asarray(got)
    if got_np.shape != want.shape or got_np.dtype != want.dtype:
        return want.data
    return np.where(np.ma.getmaskarray(want), got_np, want.data)


def _compare_values(step: int, call: Call, want: np.ndarray, got, x_np: np.ndarray) -> None:
    got_np = np.asarray(got)
    want = np.asarray(want)
    where = f"step {step} ({call.code})"
    if got_np.shape != want.shape:
        raise Failure("mismatch", f"{where}: shape {got_np.shape}, NumPy {want.shape}")
    if got_np.dtype != want.dtype:
        raise Failure("mismatch", f"{where}: dtype {got_np.dtype}, NumPy {want.dtype}")
    if want.size == 0:
        return
    if want.dtype.kind in "biu" or (call.tol == 0 and call.atol_scale == 0):
        same = (got_np == want) | _both_nan(got_np, want)
        if want.dtype.kind in "fc":
            # -0.0 and 0.0 compare equal; the standard pins signed zeros only for some functions
            pass
        if not np.all(same):
            bad = np.argwhere(~same)[0]
            raise Failure(
                "mismatch",
                f"{where}: at {tuple(bad)} got {got_np[tuple(bad)]!r}, NumPy {want[tuple(bad)]!r}",
            )
        return
    finite_in = x_np[np.isfinite(x_np)] if x_np.dtype.kind in "fc" else x_np
    scale = float(np.max(np.abs(finite_in))) if finite_in.size else 0.0
    n = max(x_np.size, 1)
    atol = call.atol_scale * scale * n if call.atol_scale else 0.0
    if want.dtype.kind == "c":
        # complex results: errors relative to the modulus (a small component of a large number
        # carries the large number's rounding)
        with np.errstate(all="ignore"):
            fin = np.isfinite(want) & np.isfinite(got_np)
            err = np.abs(got_np - want)
            ok = ~fin | (err <= call.tol * np.abs(want) + atol) | (got_np == want)
            ok |= _both_nan(got_np.real, want.real) & _both_nan(got_np.imag, want.imag)
            # a non-finite result: NaN anywhere on both sides, or part by part (infinities
            # equal, a finite part within the tolerance of its own magnitude)
            parts = np.ones(want.shape, bool)
            for g, w in ((got_np.real, want.real), (got_np.imag, want.imag)):
                both_fin = np.isfinite(g) & np.isfinite(w)
                parts &= (g == w) | (both_fin & (np.abs(g - w) <= call.tol * np.abs(w) + atol))
            ok &= fin | (got_np == want) | (np.isnan(got_np) & np.isnan(want)) | parts
        if not np.all(ok):
            bad = tuple(np.argwhere(~ok)[0])
            raise Failure(
                "mismatch",
                f"{where}: at {bad} got {got_np[bad]!r}, NumPy {want[bad]!r} "
                f"(rtol {call.tol} of the modulus, atol {atol:g})",
            )
        return
    for part in ("real",):
        g, w = getattr(got_np, part), getattr(want, part)
        with np.errstate(all="ignore"):
            close = np.isclose(g, w, rtol=call.tol, atol=atol, equal_nan=True) | (g == w)
        if not np.all(close):
            bad = tuple(np.argwhere(~close)[0])
            raise Failure(
                "mismatch",
                f"{where}: at {bad} got {got_np[bad]!r}, NumPy {want[bad]!r} "
                f"(rtol {call.tol}, atol {atol:g})",
            )


def _both_nan(a, b):
    if a.dtype.kind not in "fc":
        return np.zeros(a.shape, bool)
    return np.isnan(a) & np.isnan(b)


def _check_error(step: int, call: Call, e: BaseException) -> None:
    if not isinstance(e, ALLOWED):
        raise Failure(
            "internal",
            f"step {step} ({call.code}) raised {type(e).__module__}.{type(e).__name__}: {e}",
        )
    msg = str(e)
    names = call.names
    if (
        names
        and not any(n in msg for n in names)
        and not msg.startswith(
            ("too many indices", "index ", "boolean index", "integer-array", "array indices")
        )
    ):
        raise Failure(
            "naming",
            f"step {step} ({call.code}): {type(e).__name__}({msg!r}) names none of {names}",
        )


def _outcome(e) -> str:
    return f"raised {type(e).__name__}: {e}" if e is not None else "ok"


def _value_dependent(e: BaseException) -> bool:
    """Errors only the values can raise: meta, which has none, rightly does not."""
    msg = str(e)
    return (isinstance(e, IndexError) and "out of bounds" in msg) or type(e).__name__ == (
        "LinAlgError"
    )


def _known_meta_gap(e: BaseException) -> bool:
    """cpu/meta disagreements owned elsewhere (reported as "known", not as failures).  None is
    left: the rules are the meta device, so every disagreement is a failure."""
    return False


def _build(xp, name: str, x, raw):
    if name == "__crash__":
        import ctypes

        return Call("crash()", lambda a: ctypes.string_at(0), None)
    if name == "__wrong__":
        return Call(
            "xp.negative({x}) vs +x", lambda a: xp.negative(a), lambda a: a, names=("negative",)
        )
    return OPS[name](xp, x, raw)


_GUARD_PAD = 8
_guarded: list = []


def guard_allocations() -> None:
    """Allocate every CPU buffer between canaries (checked after each step by ``run_program``):
    a kernel writing outside its output is reported at the step that did it, with its program,
    instead of corrupting the heap and crashing some later program."""
    from strided import dispatch

    original = dispatch.kernel("empty", "cpu")
    if getattr(original, "guarded", False):
        return

    def empty_guarded(size, dtype):
        big = original(size + 2 * _GUARD_PAD, dtype)
        big.view(np.uint8)[:] = 0xA5
        _guarded.append((big, size))
        return big[_GUARD_PAD : _GUARD_PAD + size]

    empty_guarded.guarded = True
    dispatch.register("empty", "cpu")(empty_guarded)


def _check_canaries(step: int, code: str) -> None:
    bad = []
    for big, size in _guarded:
        raw = big.view(np.uint8)
        n = _GUARD_PAD * big.itemsize
        if not ((raw[:n] == 0xA5).all() and (raw[n + size * big.itemsize :] == 0xA5).all()):
            bad.append(f"{size} x {big.dtype}")
    _guarded.clear()
    if bad:
        raise Failure("bounds", f"step {step} ({code}) wrote outside its output ({bad[0]})")


def run_program(program: dict) -> dict:
    """Run ``program``; returns ``{"status": "ok"}`` or ``{"status": kind, "detail": ...}``.
    ``"code"`` holds the reproducer."""
    import strided as xp

    code = [reproducer_header(program)]
    try:
        vals = [make_values(s) for s in program["inputs"]]
        cpu, meta, np_in = [], [], []
        for s, v in zip(program["inputs"], vals):
            a, x = in_layout(xp, v, s["layout"], "cpu")
            _, m = in_layout(xp, v, s["layout"], "meta")
            np_in.append(a)
            cpu.append(x)
            meta.append(m)
        x, m, a = cpu[0], meta[0], np_in[0]
        meta_alive = True
        for i, (name, raw) in enumerate(program["steps"]):
            if i and len(cpu) > 1 and raw[5] % 3 == 0:  # switch to the other input for a step
                x, m, a = cpu[i % len(cpu)], meta[i % len(cpu)], np_in[i % len(cpu)]
            call = _build(xp, name, x, raw)
            code.append(f"# step {i}: {name} {raw}\nx = " + call.code.format(x="x"))
            err = got = None
            _guarded.clear()
            try:
                got = call.fn(x)
            except Exception as e:  # checked below
                err = e
            _check_canaries(i, call.code)
            if err is not None:
                _check_error(i, call, err)
            merr = mgot = None
            if meta_alive:
                try:
                    mgot = call.fn(m)
                except Exception as e:
                    merr = e
                if merr is not None:
                    _check_error(i, call, merr)
                    if "meta" in str(merr) or "depends on the values" in str(merr):
                        meta_alive = False  # data-dependent: meta cannot follow
                        merr = None
                        if err is not None:
                            return {"status": "ok", "code": "\n".join(code)}
                if meta_alive and err is not None and merr is None and _value_dependent(err):
                    pass  # meta has no values to check: an index out of bounds, a singular matrix
                elif meta_alive and err is not None and merr is None and _known_meta_gap(err):
                    raise Failure("known", f"step {i} ({call.code}): {err}")
                elif meta_alive:
                    if (err is None) != (merr is None) or (
                        err is not None and type(err) is not type(merr)
                    ):
                        raise Failure(
                            "meta",
                            f"step {i} ({call.code}): cpu {_outcome(err)}, meta {_outcome(merr)}",
                        )
                    if err is None and (mgot.shape != got.shape or mgot.dtype != got.dtype):
                        raise Failure(
                            "meta",
                            f"step {i} ({call.code}): cpu {got.shape} {got.dtype}, meta "
                            f"{mgot.shape} {mgot.dtype}",
                        )
            if err is not None:
                return {"status": "ok", "code": "\n".join(code)}  # an error ends the program
            if call.ref is not None:
                try:
                    want = call.ref(a)  # None: the standard leaves these values open
                except Exception:
                    want = None  # NumPy refuses: only the checks above apply
                if want is not None:
                    _compare(i, call, want, got, a)
            # the next step starts from the cpu result on both sides: each step is compared on
            # identical inputs, so rounding differences do not compound
            x, m, a = got, mgot, np.asarray(got).copy()
    except Failure as f:
        return {"status": f.kind, "detail": f.detail, "code": "\n".join(code)}
    except Exception as e:  # the harness itself (building inputs): report, never hide
        return {
            "status": "harness",
            "detail": "".join(traceback.format_exception_only(type(e), e)).strip(),
            "code": "\n".join(code),
        }
    return {"status": "ok"}


def reproducer_header(program: dict) -> str:
    lines = [
        "import numpy as np, strided as xp",
        "from tests.fuzz_programs import make_values, in_layout, run_program",
        f"program = {json.dumps(program)}",
        "print(run_program(program))  # or step by step:",
    ]
    for k, s in enumerate(program["inputs"]):
        lines.append(
            f"_, x{k} = in_layout(xp, make_values({json.dumps(s)}), {s['layout']!r}, 'cpu')"
            f"  # {s['dtype']} {tuple(s['shape'])}"
        )
    lines.append("x = x0")
    return "\n".join(lines)


def worker_main() -> None:
    """Read programs (JSON lines) on stdin, write results (JSON lines) on stdout."""
    import warnings

    warnings.simplefilter("ignore")  # NumPy's RuntimeWarnings from the reference values
    import strided  # noqa: F401  (registers the kernels the guard wraps)

    guard_allocations()
    out = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)  # anything else printed goes to stderr
    for line in sys.stdin:
        result = run_program(json.loads(line))
        out.write(json.dumps(result) + "\n")
        out.flush()


# -- the parent side: a worker process that may die ------------------------------------------------
class Worker:
    """One worker process running programs one at a time; restarted after a crash or a hang."""

    def __init__(self, timeout: float = 600.0):  # a cold numba cache compiles in the worker
        self.timeout = timeout
        self.proc = None

    def _start(self):
        env = dict(os.environ)
        env.setdefault("SCIPY_ARRAY_API", "1")
        env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tests.fuzz_programs", "--worker"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            cwd=ROOT,
            env=env,
            text=True,
        )

    def run(self, program: dict) -> dict:
        if self.proc is None or self.proc.poll() is not None:
            self._start()
        p = self.proc
        try:
            p.stdin.write(json.dumps(program) + "\n")
            p.stdin.flush()
        except BrokenPipeError:
            pass
        ready, _, _ = select.select([p.stdout], [], [], self.timeout)
        line = p.stdout.readline() if ready else ""
        if line:
            return json.loads(line)
        hang = not ready  # ready with no line: the worker closed its output, it died
        if hang:
            p.kill()
        try:
            code = p.wait(60)
        except subprocess.TimeoutExpired:
            p.kill()
            code = p.wait()
        self.proc = None
        return {
            "status": "hang" if hang else "crash",
            "detail": f"worker {'timed out' if hang else 'died'} (exit code {code})",
            "code": reproducer_header(program),
        }

    def close(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.stdin.close()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None


# -- the long run ----------------------------------------------------------------------------------
def long_run(examples: int, seed: int, workers: int, show: int = 3) -> dict:
    """Run ``examples`` programs from ``seed`` over ``workers`` worker processes; print a summary
    with up to ``show`` reproducers per kind of failure; return the counts."""
    import threading

    rng = np.random.default_rng(seed)
    programs = [random_program(RngChooser(rng)) for _ in range(examples)]
    results: list = [None] * examples
    lock = threading.Lock()
    nxt = [0]
    t0 = time.time()

    def loop():
        w = Worker()
        try:
            while True:
                with lock:
                    i = nxt[0]
                    nxt[0] += 1
                if i >= examples:
                    return
                results[i] = w.run(programs[i])
                if i % 500 == 0:
                    print(f"  {i}/{examples} programs, {time.time() - t0:.0f} s", flush=True)
        finally:
            w.close()

    threads = [threading.Thread(target=loop) for _ in range(workers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    counts: dict = {}
    seen: dict = {}
    for r in results:
        counts[r["status"]] = counts.get(r["status"], 0) + 1
        if r["status"] != "ok":
            key = (r["status"], _signature(r["detail"]))
            seen.setdefault(key, []).append(r)
    print(f"fuzz: {examples} programs (seed {seed}) in {time.time() - t0:.0f} s: {counts}")
    shown: dict = {}
    for (kind, _sig), rs in sorted(seen.items(), key=lambda kv: -len(kv[1])):
        if shown.get(kind, 0) >= show:
            continue
        shown[kind] = shown.get(kind, 0) + 1
        print(f"\n== {kind} x{len(rs)}: {rs[0]['detail']}\n{rs[0]['code']}")
    print(f"\ndistinct failure signatures: {len(seen)}")
    return counts


def _signature(detail: str) -> str:
    """A failure's kind without its numbers and values, to group repeats."""
    import re

    d = re.sub(r"step \d+ ", "", detail)
    d = re.sub(r"\(.*?\)", "()", d, count=1)
    return re.sub(r"[-+]?\d[\d.e+-]*", "#", d)[:120]


def main(argv=None) -> int:
    import argparse

    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--examples", type=int, default=int(os.environ.get("FUZZ_EXAMPLES", 20000)))
    p.add_argument("--seed", type=int, default=int(os.environ.get("FUZZ_SEED", 0)))
    p.add_argument("--workers", type=int, default=int(os.environ.get("FUZZ_WORKERS", 2)))
    p.add_argument("--show", type=int, default=3, help="reproducers shown per kind of failure")
    args = p.parse_args(argv)
    if args.worker:
        worker_main()
        return 0
    counts = long_run(args.examples, args.seed, args.workers, args.show)
    return 0 if set(counts) <= {"ok", "known", "open"} else 1


if __name__ == "__main__":
    sys.exit(main())
