"""The op table (an OpInfo in PyTorch's sense): every public function of the namespace, of
``strided.linalg`` and of ``strided.fft``, plus indexing (``getitem``/``setitem``), with

* its NumPy reference (NumPy is the oracle: nothing here is copied from strided's output),
* sample inputs: several shapes (0-d, 1-d, n-d, zero-size where valid), the dtypes it accepts,
  every memory layout (contiguous, transposed, sliced, negative-stride, broadcast/stride-0) and
  keyword variants (axis, keepdims, ...),
* whether it is differentiable, and
* error samples (rejected dtype, bad axis, mismatched shapes, ...): calls the standard says fail.

Samples are NumPy values plus a layout; ``tests/test_meta_agreement.py`` builds the same views on
every device from them.  The elementwise rows keep the fields ``test_elementwise.py`` uses
(``domain``, ``accepts``, ``result`` ...); ``test_completeness.py`` checks that every declared
primitive has a row here or in ``OTHER_OPS``.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

import strided as xp
from strided import _dtypes as sdt
from strided._ops.elementwise import ELEMENTWISE

D = {d.name: d for d in sdt.ALL_DTYPES}
SHORT = {
    "bool": "b",
    "int8": "i8",
    "int16": "i16",
    "int32": "i32",
    "int64": "i64",
    "uint8": "u8",
    "uint16": "u16",
    "uint32": "u32",
    "uint64": "u64",
    "float32": "f32",
    "float64": "f64",
    "complex64": "c64",
    "complex128": "c128",
}
NONCONTIGUOUS = ("transposed", "sliced", "negative", "broadcast")
_LAYOUT_TAG = {"transposed": "T", "sliced": "S", "negative": "N", "broadcast": "B"}


@dataclass
class Sample:
    """One call: NumPy arrays among ``args``/``kwargs`` (also inside lists, tuples and index
    keys) become strided arrays in ``layout`` on the device under test; the reference gets the
    (layout-adjusted) NumPy values."""

    args: tuple
    kwargs: dict = field(default_factory=dict)
    id: str = ""
    layout: str = "contiguous"
    data_dependent: bool = False  # the output shape depends on values: meta must refuse it
    error: type[BaseException] | None = None  # an error sample: cpu must raise this
    check_values: bool = True  # False where NumPy cannot say (e.g. reshape(copy=False) on a view)


@dataclass
class OpInfo:
    name: str
    ref: Callable  # NumPy reference on NumPy arrays
    arity: int = 1
    accepts: str = "any"
    result: str = "same"
    domain: tuple[float, float] = (-5.0, 5.0)  # real values drawn from this interval
    int_domain: tuple[int, int] = (-20, 20)
    nonzero_rhs: bool = False  # integer divisors must be nonzero (results are not comparable)
    rtol: dict = field(default_factory=dict)
    # -- OpInfo proper ----------------------------------------------------------------------------
    gen: Callable | None = None  # rng -> iterable of Sample
    function: Callable | None = None  # what is called (default: the namespace function ``name``)
    differentiable: bool = False  # float inputs that require grad give an output in the graph
    creation: bool = False  # takes ``device=``: the test passes the device instead of arrays
    post: Callable | None = None  # canonicalises outputs (tuple of NumPy arrays) before comparing
    tol: str = "tight"  # "tight" (elementwise), "loose" (reductions, linalg, fft) or "exact"
    check_dtype: bool = True  # compare the result dtype with NumPy's
    check_values: bool = True  # False: compare shapes and dtypes only (empty, empty_like)
    errors: tuple = ()  # error samples (Sample with ``error`` set)
    elementwise: bool = False  # ``ref`` is the raw ufunc; ``reference`` adds the dtype rules

    @property
    def fn(self):
        if self.function is not None:
            return self.function
        obj = xp
        for part in self.name.split("."):
            obj = getattr(obj, part)
        return obj

    @property
    def reference(self) -> Callable:
        """The NumPy function that gives the expected result of a sample."""
        return _elementwise_ref(self) if self.elementwise else self.ref

    def accepted(self) -> list[sdt.DType]:
        kinds = sdt.CATEGORIES[self.accepts]
        return [d for d in sdt.ALL_DTYPES if d.kind in kinds]

    def rejected(self) -> list[sdt.DType]:
        kinds = sdt.CATEGORIES[self.accepts]
        return [d for d in sdt.ALL_DTYPES if d.kind not in kinds]

    def samples(self) -> list[Sample]:
        rng = np.random.default_rng(zlib.crc32(self.name.encode()))
        out = list(self.gen(self, rng)) if self.gen else []
        out += list(self.errors)
        ids = [s.id for s in out]
        assert len(ids) == len(set(ids)), f"{self.name}: duplicate sample ids"
        return out


# -- values and sample ids ------------------------------------------------------------------------


def values(rng, shape, d, domain=(-5.0, 5.0), int_domain=(-20, 20)) -> np.ndarray:
    """Random NumPy values of dtype ``d`` (a name or DType) within the given domains."""
    d = D[d] if isinstance(d, str) else d
    if d.kind == sdt.BOOL:
        return rng.integers(0, 2, size=shape).astype(bool)
    if d.kind in sdt.INTEGER_KINDS:
        info = np.iinfo(d.numpy)
        lo, hi = max(int_domain[0], int(info.min)), min(int_domain[1], int(info.max))
        return rng.integers(lo, hi + 1, size=shape, dtype=np.int64).astype(d.numpy)
    re = rng.uniform(*domain, size=shape)
    if d.kind == sdt.COMPLEX:  # (arithmetic on 0-d arrays gives NumPy scalars: asarray)
        return np.asarray(re + 0.5j * rng.uniform(*domain, size=shape), dtype=d.numpy)
    return re.astype(d.numpy)


def _fmt(v) -> str:
    if isinstance(v, np.ndarray):
        return SHORT[v.dtype.name] + "(" + ",".join(map(str, v.shape)) + ")"
    if isinstance(v, (list, tuple)) and any(isinstance(a, np.ndarray) for a in v):
        return "[" + ",".join(_fmt(a) for a in v) + "]"
    if isinstance(v, slice):
        f = lambda p: "" if p is None else str(p)  # noqa: E731
        return f(v.start) + ":" + f(v.stop) + ("" if v.step is None else ":" + f(v.step))
    if isinstance(v, tuple):
        return "(" + ",".join(_fmt(a) for a in v) + ")"
    if v is Ellipsis:
        return "..."
    if isinstance(v, sdt.DType):
        return SHORT[v.name]
    if isinstance(v, float) and v in (np.inf, -np.inf):
        return "inf" if v > 0 else "-inf"
    return repr(v).replace(" ", "")


def S(*args, layout="contiguous", tag="", **kwargs) -> Sample:
    """A sample whose id is derived from its arguments: ``f64(3,4):T|axis=0``."""
    sid = ",".join(_fmt(a) for a in args)
    if layout != "contiguous":
        sid += ":" + _LAYOUT_TAG[layout]
    if kwargs:
        sid += "|" + ",".join(f"{k}={_fmt(v)}" for k, v in kwargs.items())
    return Sample(args, kwargs, id=sid + tag, layout=layout)


def E(*args, error=Exception, tag="", **kwargs) -> Sample:
    """An error sample: cpu raises ``error``; meta must raise the same exception type."""
    s = S(*args, **kwargs)
    s.error, s.id = error, "ERR:" + s.id + tag
    return s


def DD(*args, **kwargs) -> Sample:
    """A data-dependent sample: cpu computes it, meta refuses with an error naming meta."""
    s = S(*args, **kwargs)
    s.data_dependent = True
    return s


def NV(s: Sample) -> Sample:
    """A sample whose outcome NumPy cannot decide (it depends on strided's memory layout): only
    meta agreement is checked."""
    s.check_values = False
    return s


# -- generators for the common patterns -----------------------------------------------------------

SHAPES = [(), (0,), (5,), (3, 4), (0, 3), (2, 3, 4)]
LAYOUT_SHAPE = (3, 4)


def unary(dtypes, shapes=SHAPES, kws=({},), layout_shape=LAYOUT_SHAPE, layouts=NONCONTIGUOUS):
    """dtypes[0] on every shape x keyword variant and on every layout x keyword variant; the
    other dtypes once (first keyword variant, ``layout_shape``)."""

    def gen(op, rng):
        val = lambda s, d: values(rng, s, d, op.domain, op.int_domain)  # noqa: E731
        for shape in shapes:
            for kw in kws:
                s = S(val(shape, dtypes[0]), **kw)
                # NumPy takes axis 0 or -1 of a 0-d array; the standard has no valid axis there
                yield NV(s) if shape == () and kw.get("axis") is not None else s
        for layout in layouts:
            for kw in kws:
                yield S(val(layout_shape, dtypes[0]), layout=layout, **kw)
        for d in dtypes[1:]:
            yield S(val(layout_shape, d), **kws[0])

    return gen


PAIRS = [((3, 4), (3, 4)), ((3, 4), (4,)), ((3, 1), (1, 4)), ((), (3,)), ((0, 3), (3,))]


def binary(dtypes, pairs=PAIRS, kws=({},), scalar=True, mixed=None):
    """Two broadcastable arrays: dtypes[0] on every shape pair and layout; the other dtypes once
    (dense, one shape: each layout of theirs would be one more kernel compile per op); a Python
    scalar operand on either side; a mixed-dtype pair."""

    def gen(op, rng):
        def val(s, d, rhs=False):
            v = values(rng, s, d, op.domain, op.int_domain)
            if rhs and op.nonzero_rhs and D[d].kind in sdt.INTEGER_KINDS:
                v = np.where(v == 0, np.ones_like(v), v)
            return v

        d0 = dtypes[0]
        for s1, s2 in pairs:
            for kw in kws:
                yield S(val(s1, d0), val(s2, d0, True), **kw)
        for layout in NONCONTIGUOUS:
            yield S(val((3, 4), d0), val((3, 4), d0, True), layout=layout, **kws[0])
        for d in dtypes[1:]:  # dense operands: broadcasting is the dtypes[0] samples' part
            yield S(val((3, 4), d), val((3, 4), d, True), **kws[0])
        if scalar:
            k = D[d0].kind
            c = True if k == sdt.BOOL else 2 if k in sdt.INTEGER_KINDS else 1.5
            yield S(val((3, 4), d0), c, **kws[0])
            yield S(c, val((3, 4), d0, True), **kws[0])
        if mixed:
            yield S(val((3, 4), mixed[0]), val((4,), mixed[1], True), **kws[0])

    return gen


def custom(*fns):
    """Samples from functions ``rng -> iterable of Sample``."""

    def gen(op, rng):
        for f in fns:
            yield from f(rng)

    return gen


def bad_dtypes(dtypes, shapes=((3, 4),), extra=(), **kw):
    """Error samples: the op called on arrays of a rejected dtype raises TypeError."""
    out = []
    for d in dtypes:
        args = [np.zeros(s, dtype=D[d].numpy) for s in shapes] + list(extra)
        out.append(E(*args, error=TypeError, **kw))
    return tuple(out)


def z(shape, d="float64"):
    return np.zeros(shape, dtype=D[d].numpy)


def _r(rng, shape, d="float64", lo=-5.0, hi=5.0):
    return values(rng, shape, d, (lo, hi))


def _spd(rng, shape, d="float64"):
    """Symmetric positive definite matrices (stacks)."""
    a = rng.uniform(-1, 1, size=shape)
    n = shape[-1]
    m = a @ np.swapaxes(a, -1, -2) + n * np.eye(n)
    if D[d].kind == sdt.COMPLEX:
        b = rng.uniform(-1, 1, size=shape) * 0.3
        h = 1j * (b - np.swapaxes(b, -1, -2))  # Hermitian part with zero diagonal
        m = m + h
    return m.astype(D[d].numpy)


def _wellcond(rng, shape, d="float64"):
    """Random square matrices (stacks) that are comfortably invertible."""
    n = shape[-1]
    return (rng.uniform(-1, 1, size=shape) + 2 * n * np.eye(n)).astype(D[d].numpy)


# -- elementwise ----------------------------------------------------------------------------------

_NUMPY_NAME = {
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

_DOMAINS = {
    "log": (0.1, 10.0),
    "log1p": (-0.5, 10.0),
    "log2": (0.1, 10.0),
    "log10": (0.1, 10.0),
    "sqrt": (0.0, 10.0),
    "asin": (-0.99, 0.99),
    "acos": (-0.99, 0.99),
    "atanh": (-0.99, 0.99),
    "acosh": (1.01, 10.0),
    "reciprocal": (0.5, 5.0),
    "exp": (-10.0, 10.0),
    "pow": (0.1, 3.0),
    "tan": (-1.4, 1.4),
}
_INT_DOMAINS = {
    "pow": (0, 4),
    "bitwise_left_shift": (0, 7),
    "bitwise_right_shift": (0, 7),
    "square": (-10, 10),
    "multiply": (-10, 10),
    "exp": (-5, 5),
    "expm1": (-5, 5),
    "log": (1, 50),
    "log1p": (0, 50),
    "log2": (1, 50),
    "log10": (1, 50),
    "sqrt": (0, 50),
    "acosh": (1, 50),
    "asin": (-1, 1),
    "acos": (-1, 1),
    "atanh": (0, 0),
    "reciprocal": (1, 9),
    "sinh": (-5, 5),
    "cosh": (-5, 5),
}
# float results without a useful derivative (or none at all); everything else with a float
# result is differentiable
_EW_NOT_DIFFERENTIABLE = {"nextafter"}


def expected_dtype(op: OpInfo, d: sdt.DType) -> tuple[sdt.DType, sdt.DType]:
    """(compute dtype, result dtype) for an input of dtype ``d``, from the standard's rules."""
    compute = d
    if op.result == "float" and d.kind not in sdt.FLOAT_KINDS:
        compute = sdt.float64
    out = {
        "same": compute,
        "bool": sdt.bool,
        "real": sdt.real_of(compute),
        "float": compute,
    }[op.result]
    return compute, out


def _elementwise_ref(op: OpInfo) -> Callable:
    """The NumPy ufunc evaluated in the compute dtype the standard's rules give (NumPy would
    compute ``sqrt(int8)`` in float16), cast to the standard's result dtype."""
    ufunc = op.ref

    def ref(*args):
        arrays = [a for a in args if isinstance(a, np.ndarray)]
        compute, out = expected_dtype(op, D[np.result_type(*args).name if arrays else "float64"])
        cast = [a.astype(compute.numpy) if isinstance(a, np.ndarray) else a for a in args]
        return np.asarray(ufunc(*cast)).astype(out.numpy)

    return ref


def _preferred(dtypes: list[sdt.DType]) -> list[str]:
    """float64 (or int64, or bool) first, then the others."""
    names = [d.name for d in dtypes]
    for first in ("float64", "int64", "bool"):
        if first in names:
            names.remove(first)
            return [first] + names
    return names


def _elementwise_row(name, arity, accepts, result) -> OpInfo:
    op = OpInfo(
        name,
        getattr(np, _NUMPY_NAME.get(name, name)),
        arity=arity,
        accepts=accepts,
        result=result,
        domain=_DOMAINS.get(name, (-5.0, 5.0)),
        int_domain=_INT_DOMAINS.get(name, (-20, 20)),
        nonzero_rhs=name in ("floor_divide", "remainder", "divide"),
        elementwise=True,
    )
    dts = _preferred(op.accepted())
    if arity == 1:
        op.gen = unary(dts, shapes=[(), (0,), (5,), (3, 4), (2, 0, 3)])
    else:
        ints = [d for d in ("int8", "uint8") if d in dts]
        floats = [d for d in ("float32", "float64") if d in dts]
        op.gen = binary(dts, mixed=ints if len(ints) == 2 else floats if len(floats) == 2 else None)
    rejected = [d.name for d in op.rejected()]
    op.errors = bad_dtypes(sorted(set(rejected[:1] + rejected[-1:])), shapes=[(3, 4)] * arity)
    if arity == 2:
        d0 = dts[0]
        op.errors += (E(z((3, 4), d0), z((3,), d0), error=ValueError, tag=":mismatch"),)
        if "uint8" in dts:  # a Python int the array dtype cannot hold
            op.errors += (E(z((3, 4), "uint8"), 300, error=OverflowError),)
    op.differentiable = (
        result != "bool"
        and sdt.REAL in sdt.CATEGORIES[accepts]
        and name not in _EW_NOT_DIFFERENTIABLE
    )
    op.tol = "exact" if name in EXACT else "tight"
    return op


EXACT = {"floor", "ceil", "trunc", "round", "nextafter", "sign", "copysign", "maximum", "minimum"}

ELEMENTWISE_OPS: list[OpInfo] = [
    _elementwise_row(name, arity, accepts, result)
    for name, (arity, accepts, result, _) in ELEMENTWISE.items()
]

# -- references that need a wrapper ---------------------------------------------------------------


def _cumulative(fn):
    def ref(x, *, axis=None, dtype=None, include_initial=False):
        if axis is None and x.ndim == 1:
            axis = 0
        dt = None if dtype is None else dtype.numpy
        return fn(x, axis=axis, dtype=dt, include_initial=include_initial)

    return ref


def _with_dtype(fn):
    def ref(x, *args, dtype=None, **kw):
        return fn(x, *args, dtype=None if dtype is None else dtype.numpy, **kw)

    return ref


def _var(fn):
    return lambda x, *, axis=None, correction=0.0, keepdims=False: fn(
        x, axis=axis, ddof=correction, keepdims=keepdims
    )


def _sort_ref(x, *, axis=-1, descending=False, stable=True):
    if descending:
        return np.flip(np.sort(np.flip(x, axis), axis=axis, kind="stable"), axis)
    return np.sort(x, axis=axis, kind="stable")


def _argsort_ref(x, *, axis=-1, descending=False, stable=True):
    if not descending:
        return np.argsort(x, axis=axis, kind="stable")
    # stable descending: equal elements keep their order
    n = x.shape[axis]
    idx = np.argsort(np.flip(x, axis), axis=axis, kind="stable")
    return np.flip(n - 1 - idx, axis)


def _take_ref(x, indices, *, axis=None):
    return np.take(x, indices, axis=axis)


def _nonzero_ref(x):
    if x.ndim == 0:
        raise ValueError("nonzero of a 0-d array")
    return np.nonzero(x)


def _unique_post(*kinds):
    """Order every unique_* result by its values (the standard leaves the order open); ``kinds``
    names the outputs after the values: "indices", "inverse" or "counts"."""

    def post(vals, *outs):
        perm = np.argsort(vals, kind="stable")
        res = [vals[perm]]
        for kind, a in zip(kinds, outs):
            if kind == "inverse":
                rank = np.empty_like(perm)
                rank[perm] = np.arange(perm.size)
                res.append(rank[a])
            else:
                res.append(a[perm])
        return tuple(res)

    return post


def _repeat_ref(x, repeats, *, axis=None):
    return np.repeat(x, repeats, axis=axis)


def _getitem(x, key):
    return x[key]


def _setitem(x, key, value):
    x[key] = value
    return x


def _setitem_ref(x, key, value):
    x = x.copy()
    x[key] = value
    return x


_KIND_NAMES = {
    "bool": {sdt.BOOL},
    "signed integer": {sdt.SIGNED},
    "unsigned integer": {sdt.UNSIGNED},
    "integral": {sdt.SIGNED, sdt.UNSIGNED},
    "real floating": {sdt.REAL},
    "complex floating": {sdt.COMPLEX},
    "numeric": {sdt.SIGNED, sdt.UNSIGNED, sdt.REAL, sdt.COMPLEX},
}


def _isdtype_ref(d, kind):
    """The standard's table of kinds."""
    kinds = kind if isinstance(kind, tuple) else (kind,)
    return any(k is d if isinstance(k, sdt.DType) else d.kind in _KIND_NAMES[k] for k in kinds)


def _can_cast_ref(f, t):
    """The standard's casting rule: within a kind, to at least as many bits (signed from
    unsigned: more bits); real to complex of at least twice the bits; nothing across kinds."""
    f = D[f.dtype.name] if isinstance(f, np.ndarray) else f
    bits = lambda d: np.dtype(d.numpy).itemsize * 8  # noqa: E731
    if f.kind == t.kind:
        return bits(t) >= bits(f)
    if (f.kind, t.kind) == (sdt.UNSIGNED, sdt.SIGNED):
        return bits(t) > bits(f)
    if (f.kind, t.kind) == (sdt.REAL, sdt.COMPLEX):
        return bits(t) >= 2 * bits(f)
    return False


def _result_type(*a):
    return xp.result_type(*a)


def _np_dtype(t):
    return t.numpy if isinstance(t, sdt.DType) else t


def _finfo(t):
    f = xp.finfo(t)
    return (f.bits, float(f.eps), float(f.max), float(f.min), float(f.smallest_normal), f.dtype)


def _finfo_ref(t):
    f = np.finfo(_np_dtype(t.dtype if isinstance(t, np.ndarray) else t))
    real = {"complex64": sdt.float32, "complex128": sdt.float64}
    dt = real.get(f.dtype.name, D.get(f.dtype.name))
    return (f.bits, float(f.eps), float(f.max), float(f.min), float(f.smallest_normal), dt)


def _iinfo(t):
    f = xp.iinfo(t)
    return (f.bits, int(f.max), int(f.min), f.dtype)


def _iinfo_ref(t):
    f = np.iinfo(_np_dtype(t.dtype if isinstance(t, np.ndarray) else t))
    return (f.bits, int(f.max), int(f.min), D[f.dtype.name])


def _sign_canon(v, axis):
    """Scale each vector along ``axis`` so that its largest-magnitude entry is real positive."""
    if v.size == 0:
        return v, np.ones(v.shape[:axis] + (1,) + v.shape[axis:][1:], dtype=v.dtype)
    idx = np.argmax(np.abs(v), axis=axis, keepdims=True)
    pick = np.take_along_axis(v, idx, axis=axis)
    phase = np.where(pick == 0, 1, pick / np.where(pick == 0, 1, np.abs(pick)))
    return v / phase, phase


def _eigh_post(w, v):
    return w, _sign_canon(v, -2)[0]


def _svd_post(u, s, vh):
    """Singular vectors are determined up to a phase (and beyond min(m, n) not at all)."""
    k = s.shape[-1]
    u, phase = _sign_canon(u[..., :, :k], -2)  # phase: (..., 1, k)
    return u, s, vh[..., :k, :] * np.swapaxes(phase, -1, -2)


def _qr_post(q, r):
    """Q and R up to the phases of R's diagonal (made real positive); the columns of a complete
    Q beyond min(m, n) are any orthonormal completion."""
    k = min(r.shape[-2:])
    d = np.diagonal(r, axis1=-2, axis2=-1)
    ph = np.where(d == 0, 1, d / np.where(d == 0, 1, np.abs(d)))
    return q[..., :, :k] * ph[..., None, :], r[..., :k, :] * np.conj(ph)[..., :, None]


def _eig_ref(x):
    w, v = np.linalg.eig(x)
    c = np.result_type(x.dtype, np.complex64)
    return w.astype(c), v.astype(c)


def _eig_post(w, v):
    # eigenvectors are determined up to a complex phase and their order is open: compare the
    # eigenvalues only (shapes and dtypes of both are still compared)
    return (np.sort_complex(w),)


def _eigvals_post(w):
    return (np.sort_complex(w),)


def _eigvals_ref(x):
    return _eig_ref(x)[0]


def _matrix_power_ref(x, n):
    return np.linalg.matrix_power(x, n)


def _trace_ref(x, *, offset=0, dtype=None):
    return np.linalg.trace(x, offset=offset, dtype=None if dtype is None else dtype.numpy)


def _astype_ref(x, dtype, *, copy=True):
    return x.astype(dtype.numpy)


def _like(fn):
    def ref(x, *args, dtype=None, **kw):
        return fn(x, *args, dtype=None if dtype is None else dtype.numpy, **kw)

    return ref


def _creation(fn):
    def ref(*args, dtype=None, **kw):
        return fn(*args, dtype=None if dtype is None else dtype.numpy, **kw)

    return ref


def _linspace_ref(start, stop, num, *, dtype=None, endpoint=True):
    return np.linspace(start, stop, num, endpoint=endpoint, dtype=dtype and dtype.numpy)


def _arange_ref(start, stop=None, step=1, *, dtype=None):
    if stop is None:
        start, stop = 0, start
    return np.arange(start, stop, step, dtype=dtype and dtype.numpy)


def _eye_ref(n, m=None, *, k=0, dtype=None):
    return np.eye(n, m, k=k, dtype=dtype.numpy if dtype else np.float64)


def _freq(fn):
    def ref(n, *, d=1.0, dtype=None):
        r = fn(n, d=d)
        return r.astype(dtype.numpy) if dtype else r

    return ref


def _tensordot_ref(a, b, *, axes=2):
    return np.tensordot(a, b, axes=axes)


def _meshgrid_ref(*arrays, indexing="xy"):
    return tuple(np.meshgrid(*arrays, indexing=indexing))


def _from_dlpack_ref(x):
    return np.array(x)


def _where_ref(c, a, b):
    return np.where(c, a, b)


# -- sample generators for the other chapters -----------------------------------------------------

AXES = [
    {},
    {"axis": 0},
    {"axis": -1},
    {"axis": (0, -1)},
    {"axis": ()},
    {"keepdims": True, "axis": 0},
    {"keepdims": True},
]
AXES_NO_TUPLE = [{}, {"axis": 0}, {"axis": -1}, {"keepdims": True, "axis": 0}]


def _chain(gen, extra):
    """``gen``'s samples, then the fixed samples ``extra``."""
    return lambda op, rng: [*gen(op, rng), *extra]


def _reduction(name, ref, dtypes, kws=AXES, rejected=(), diff=True, extra=(), **opt) -> OpInfo:
    return OpInfo(
        name,
        ref,
        gen=_chain(unary(dtypes, kws=kws), extra),
        differentiable=diff,
        tol=opt.pop("tol", "loose"),
        errors=bad_dtypes(rejected)
        + (
            E(z((3, 4)), axis=2, error=Exception, tag=":bad-axis"),
            E(z((3, 4)), axis=(0, 0), error=Exception, tag=":repeated-axis")
            if kws is AXES
            else E(z((3, 4)), axis=-3, error=Exception, tag=":bad-axis"),
        ),
        **opt,
    )


def _cum_samples(rng):
    for shape, axis in [((5,), None), ((0,), None), ((3, 4), 0), ((3, 4), 1), ((0, 3), 0)]:
        yield S(_r(rng, shape, lo=0.5, hi=1.5), axis=axis)
        yield S(_r(rng, shape, lo=0.5, hi=1.5), axis=axis, include_initial=True)
    for layout in NONCONTIGUOUS:
        yield S(_r(rng, (3, 4), lo=0.5, hi=1.5), layout=layout, axis=1)
    yield S(values(rng, (3, 4), "int64", int_domain=(-3, 3)), axis=0)
    yield S(values(rng, (3, 4), "float32", (0.5, 1.5)), axis=0)
    yield S(values(rng, (3, 4), "int8", int_domain=(-3, 3)), axis=0, dtype=xp.float64)


_CUM_ERRORS = (
    E(z((3, 4)), error=Exception, tag=":2d-without-axis"),
    E(z((3, 4)), axis=2, error=Exception),
    E(z(()), axis=0, error=Exception, tag=":0d"),
    E(z((3, 4), "bool"), axis=0, error=TypeError),
)


def _sort_samples(rng):
    for shape in [(5,), (0,), (3, 4), (0, 3), (2, 3, 4)]:
        yield S(_r(rng, shape))
    yield S(_r(rng, (3, 4)), axis=0)
    for layout in NONCONTIGUOUS:
        yield S(_r(rng, (3, 4)), layout=layout, axis=0)
    ties = values(rng, (3, 6), "int64", int_domain=(0, 2))
    yield S(ties, descending=True)
    yield S(ties, axis=0, descending=True, stable=True)
    yield S(values(rng, (3, 4), "float32"))
    yield S(values(rng, (3, 4), "uint16"))
    yield S(values(rng, (3, 4), "bool"), tag=":bool")
    yield S(values(rng, (3, 4), "complex128"))


_SORT_ERRORS = (
    E(z(()), error=Exception, tag=":0d"),
    E(z((3, 4)), axis=2, error=Exception),
)


def _searchsorted_samples(rng):
    x1 = np.sort(_r(rng, (6,)))
    for x2 in (_r(rng, (3, 4)), _r(rng, ()), _r(rng, (0,))):
        yield S(x1, x2)
    yield S(x1, _r(rng, (4,)), side="right")
    yield S(z((0,)), _r(rng, (4,)), tag=":empty-x1")
    for layout in NONCONTIGUOUS:
        yield S(x1, _r(rng, (4,)), layout=layout)
    unsorted = _r(rng, (6,))
    yield S(unsorted, _r(rng, (4,)), sorter=np.argsort(unsorted))
    yield S(np.sort(values(rng, (5,), "int64")), values(rng, (3,), "int64"))
    yield S(np.sort(values(rng, (5,), "float32")), values(rng, (3,), "float32"))


def _take_samples(rng):
    yield S(_r(rng, (5,)), np.array([0, 4, 2, 2]))
    yield S(_r(rng, (3, 4)), np.array([0, 2]), axis=0)
    yield S(_r(rng, (3, 4)), np.array([3, -1, 0]), axis=1)
    yield S(_r(rng, (3, 4)), np.zeros(0, dtype=np.int64), axis=1)
    yield S(_r(rng, (0, 4)), np.array([1, 2]), axis=1)
    yield S(_r(rng, (2, 3, 4)), np.array([1]), axis=-1)
    for layout in NONCONTIGUOUS:
        yield S(_r(rng, (3, 4)), np.array([0, 2, 2]), layout=layout, axis=0)
    yield S(values(rng, (3, 4), "int8"), np.array([1, 0]), axis=1)
    yield S(values(rng, (3, 4), "bool"), np.array([1, 0]), axis=1)


def _take_along_samples(rng):
    yield S(_r(rng, (5,)), np.array([4, 0, 1]))
    yield S(_r(rng, (3, 4)), rng.integers(0, 3, (2, 4)), axis=0)
    yield S(_r(rng, (3, 4)), rng.integers(0, 4, (3, 6)), axis=1)
    yield S(_r(rng, (3, 4)), rng.integers(0, 4, (1, 2)), axis=1, tag=":broadcast-idx")
    yield S(_r(rng, (0, 4)), np.zeros((0, 2), dtype=np.int64), axis=1)
    for layout in NONCONTIGUOUS:
        yield S(_r(rng, (3, 4)), rng.integers(0, 4, (3, 4)), layout=layout, axis=1)
    yield S(values(rng, (3, 4), "int64"), rng.integers(0, 4, (3, 2)), axis=1)


def _nonzero_samples(rng):
    for shape in [(5,), (0,), (3, 4), (0, 3)]:
        yield DD(values(rng, shape, "bool"))
    yield DD(values(rng, (3, 4), "int64", int_domain=(-1, 1)))
    yield DD(_r(rng, (3, 4)), layout="transposed")


def _unique_samples(rng):
    yield DD(values(rng, (7,), "int64", int_domain=(0, 4)))
    yield DD(values(rng, (3, 4), "int64", int_domain=(0, 4)))
    yield DD(values(rng, (0,), "float64"))
    yield DD(values(rng, (3, 4), "float64"), layout="negative")
    yield DD(values(rng, (3, 4), "uint16", int_domain=(0, 4)), layout="transposed")


def _isin_samples(rng):
    a = lambda s: values(rng, s, "int64", int_domain=(0, 6))  # noqa: E731
    yield S(a((3, 4)), a((5,)))
    yield S(a((3, 4)), a((5,)), invert=True)
    yield S(a((0, 3)), a((5,)))
    yield S(a((4,)), a((0,)))
    yield S(a(()), a((3,)))
    for layout in NONCONTIGUOUS:
        yield S(a((3, 4)), a((2, 3)), layout=layout)
    yield S(values(rng, (3, 4), "float64"), values(rng, (5,), "float64"))


def _setitem_samples(rng):
    x = lambda: _r(rng, (3, 4))  # noqa: E731
    yield S(x(), 1, 7.5)
    yield S(x(), (slice(None), 2), _r(rng, (3,)))
    yield S(x(), (slice(None, None, -1), slice(1, 3)), _r(rng, (1, 2)))
    yield S(x(), (Ellipsis, 0), 0.0)
    yield S(x(), (slice(0, 0),), 1.0)
    yield S(_r(rng, (0, 4)), slice(None), _r(rng, (4,)))
    yield S(_r(rng, ()), (), 2.0)
    yield S(x(), np.array([0, 2]), _r(rng, (4,)))
    for layout in ("transposed", "sliced", "negative"):
        yield S(x(), (slice(1, None), 1), _r(rng, (2,)), layout=layout)
    yield S(values(rng, (3, 4), "int64"), (0, slice(None)), 3)
    yield DD(x(), values(rng, (3, 4), "bool"), 1.0)
    yield DD(x(), values(rng, (3,), "bool"), _r(rng, (4,)), tag=":row-mask")


_SETITEM_ERRORS = (
    E(z((0, 4)), 0, 1.0, error=IndexError, tag=":empty-axis"),
    E(
        values(np.random.default_rng(0), (3, 4), "int64"),
        0,
        1.5,
        error=Exception,
        tag=":float-into-int",
    ),  # fmt: skip
    E(z((3, 4)), 3, 1.0, error=IndexError, tag=":out-of-bounds"),
    E(z((3, 4)), (0, 0, 0), 1.0, error=IndexError, tag=":too-many"),
    E(z((3, 4)), slice(None), z((3,)), error=ValueError, tag=":bad-value-shape"),
)


def _getitem_samples(rng):
    x = lambda s=(3, 4, 5): _r(rng, s)  # noqa: E731
    keys = [
        1,
        -1,
        slice(1, None),
        (slice(None, None, -1), 2),
        (Ellipsis, 1),
        (None, 1, Ellipsis, None),
        (),
        (slice(0, 0),),
        (slice(None), slice(4, 1, -2), slice(None, None, 3)),
        np.array([0, 2]),
        (np.array([0, 1]), np.array([2, 0])),
    ]
    for key in keys:
        yield S(x(), key)
    yield S(_r(rng, ()), ())
    yield S(_r(rng, ()), (None, Ellipsis))
    yield S(_r(rng, (0, 4)), (slice(None), 1))
    for layout in NONCONTIGUOUS:
        yield S(x(), (slice(None), slice(1, None), 0), layout=layout)
        yield S(x(), np.array([1, 0]), layout=layout, tag=":int-array")
    yield S(values(rng, (3, 4), "int8"), (1, slice(None, None, -1)))
    yield DD(x(), values(rng, (3, 4, 5), "bool"))
    yield DD(x(), values(rng, (3,), "bool"), tag=":row-mask")
    yield DD(_r(rng, ()), np.array(True), tag=":0d-mask")


_GETITEM_ERRORS = (
    E(z((0, 4)), 0, error=IndexError, tag=":empty-axis"),
    E(z((0, 4)), (slice(None), 4), error=IndexError, tag=":empty-array"),
    E(z((3, 4)), 3, error=IndexError, tag=":out-of-bounds"),
    E(z((3, 4)), (slice(None), -5), error=IndexError, tag=":out-of-bounds-neg"),
    E(z((3, 4)), (0, 0, 0), error=IndexError, tag=":too-many"),
    E(z((3, 4)), (Ellipsis, Ellipsis), error=IndexError, tag=":two-ellipses"),
    E(z((3, 4)), 1.5, error=IndexError, tag=":float-key"),
    # integer arrays mix only with integers in the standard
    E(z((3, 4)), (slice(None), np.array([1, 0])), error=IndexError, tag=":array-and-slice"),
)


def _concat_samples(rng):
    yield S([_r(rng, (2, 3)), _r(rng, (4, 3))])
    yield S([_r(rng, (2, 3)), _r(rng, (2, 0))], axis=1)
    yield S([_r(rng, (2, 3)), _r(rng, (2, 3))], axis=-1)
    yield S([_r(rng, (2, 3)), _r(rng, (3,))], axis=None)
    yield S([_r(rng, (0, 3)), _r(rng, (0, 3))])
    yield S([_r(rng, (3,))])
    for layout in NONCONTIGUOUS:
        yield S([_r(rng, (3, 4)), _r(rng, (3, 4))], layout=layout, axis=1)
    yield S([values(rng, (2, 3), "float32"), _r(rng, (1, 3))], tag=":promote")
    yield S([values(rng, (2, 3), "int8"), values(rng, (1, 3), "uint8")], tag=":promote")
    yield S([values(rng, (2, 3), "bool"), values(rng, (1, 3), "bool")])


_CONCAT_ERRORS = (
    E([z((2, 3)), z((2, 4))], error=ValueError, tag=":mismatch"),
    E([z((2, 3)), z((3,))], error=ValueError, tag=":ndim"),
    E([z(())], error=ValueError, tag=":0d"),
    E([z((2, 3)), z((2, 3))], axis=2, error=Exception),
    E([], error=ValueError, tag=":empty-list"),
)


def _stack_samples(rng):
    yield S([_r(rng, (2, 3)), _r(rng, (2, 3))])
    yield S([_r(rng, (2, 3)), _r(rng, (2, 3))], axis=-1)
    yield S([_r(rng, (2, 3)), _r(rng, (2, 3))], axis=1)
    yield S([_r(rng, ()), _r(rng, ())])
    yield S([_r(rng, (0, 3))] * 3, axis=2)
    for layout in NONCONTIGUOUS:
        yield S([_r(rng, (3, 4)), _r(rng, (3, 4))], layout=layout, axis=1)
    yield S([values(rng, (2, 3), "float32"), _r(rng, (2, 3))], tag=":promote")


_STACK_ERRORS = (
    E([z((2, 3)), z((3, 2))], error=ValueError, tag=":mismatch"),
    E([z((2, 3)), z((2, 3))], axis=3, error=Exception),
    E([], error=ValueError, tag=":empty-list"),
)


def _xyz(rng, f):
    """Samples ``f(x)`` for x in the usual shapes and layouts (x a float64 array)."""
    for shape in [(3, 4), (0, 3), (2, 3, 4)]:
        yield from f(_r(rng, shape))
    for layout in NONCONTIGUOUS:
        for s in f(_r(rng, (3, 4))):
            s.layout, s.id = layout, s.id + ":" + _LAYOUT_TAG[layout]
            yield s


def _mk(name, ref, gen, diff=False, errors=(), **opt) -> OpInfo:
    return OpInfo(name, ref, gen=gen, differentiable=diff, errors=tuple(errors), **opt)


# the dtypes the non-elementwise samples use: the ones the other test modules compile anyway
F, I, B, C = "float64", "int64", "bool", "complex128"

OPS: list[OpInfo] = list(ELEMENTWISE_OPS) + [
    # -- elementwise outside the ELEMENTWISE table ------------------------------------------------
    _mk(
        "clip",
        lambda x, min=None, max=None: np.clip(x, min, max),
        custom(
            lambda rng: (
                [
                    S(_r(rng, (3, 4)), -1.0, 1.0),
                    S(_r(rng, (3, 4)), min=0.0),
                    S(_r(rng, (3, 4)), max=0.0),
                    S(_r(rng, (3, 4)), _r(rng, (4,), lo=-3, hi=-1), _r(rng, (3, 1), lo=1, hi=3)),
                    S(_r(rng, (0, 3)), -1.0, 1.0),
                    S(_r(rng, ()), -1.0, 1.0),
                    S(values(rng, (3, 4), "int64"), -3, 3),
                    S(values(rng, (3, 4), "float32"), -1.0, 1.0),
                ]
                + [S(_r(rng, (3, 4)), -1.0, 1.0, layout=lay) for lay in NONCONTIGUOUS]
            )
        ),
        diff=True,
        tol="exact",
        errors=[E(z((3, 4), C), -1.0, 1.0, error=TypeError)],
    ),
    # -- creation -------------------------------------------------------------------------------
    _mk(
        "arange",
        _arange_ref,
        custom(
            lambda rng: [
                S(5),
                S(0),
                S(2, 11, 3),
                S(5, 0),
                S(5, 0, -2),
                S(0.0, 1.0, 0.25),
                S(5, dtype=xp.float32),
                S(1, 4, dtype=xp.int8),
            ]
        ),
        creation=True,
        errors=[E(0, 5, 0, error=Exception, tag=":zero-step")],
    ),
    _mk(
        "asarray",
        lambda obj, dtype=None, copy=None: np.asarray(obj, dtype=dtype and dtype.numpy),
        custom(
            lambda rng: [
                S([[1.0, 2.0], [3.0, 4.0]]),
                S([1, 2, 3]),
                S([True, False]),
                S(2.5),
                S([]),
                S([[], []]),
                S([1, 2], dtype=xp.float32),
                S([1.5, 2.0j]),
                S(_r(rng, (3, 4)), tag=":array"),
                S(_r(rng, (3, 4)), layout="transposed", tag=":array"),
                S(_r(rng, (3, 4)), dtype=xp.float32, tag=":array"),
            ]
        ),
        creation=True,
        diff=True,  # asarray(x) of an array is x (or a view): its gradient flows
        errors=[E([[1, 2], [3]], error=Exception, tag=":ragged")],
    ),
    *[
        _mk(
            name,
            _creation(getattr(np, name)),
            custom(
                lambda rng, extra=extra: [
                    S(*extra(()), tag=""),
                    S(*extra((3, 4))),
                    S(*extra((0, 3))),
                    S(*extra(5)),
                    S(*extra((2, 3)), dtype=xp.int32),
                    S(*extra((2,), True), dtype=xp.bool),
                    S(*extra((2,)), dtype=xp.complex64),
                ]
            ),
            creation=True,
            check_values=name != "empty",
            errors=[E(*extra((-1, 2)), error=ValueError, tag=":negative")]
            + (
                [E((2,), 1.5, dtype=xp.int32, error=Exception, tag=":float-fill")]
                if name == "full"
                else []
            ),  # fmt: skip
        )
        for name, extra in [
            ("zeros", lambda s, fill=1: (s,)),
            ("ones", lambda s, fill=1: (s,)),
            ("empty", lambda s, fill=1: (s,)),
            ("full", lambda s, fill=1: (s, fill)),
        ]
    ],
    *[
        _mk(
            name,
            _like(getattr(np, name)),
            custom(
                lambda rng, extra=extra: [
                    *_xyz(rng, lambda x: [S(x, *extra)]),
                    S(_r(rng, ()), *extra),
                    S(_r(rng, (3, 4)), *extra, dtype=xp.int32),
                    S(values(rng, (3, 4), "bool"), *[True for _ in extra]),
                    S(values(rng, (2,), "complex64"), *extra),
                ]
            ),
            check_values=name != "empty_like",
        )
        for name, extra in [
            ("zeros_like", ()),
            ("ones_like", ()),
            ("empty_like", ()),
            ("full_like", (2,)),
        ]
    ],
    _mk(
        "eye",
        _eye_ref,
        custom(
            lambda rng: [
                S(3),
                S(3, 5),
                S(4, 2, k=1),
                S(3, k=-2),
                S(0),
                S(3, 0),
                S(3, k=5),
                S(2, dtype=xp.int64),
                S(2, dtype=xp.complex128),
            ]
        ),
        creation=True,
        errors=[E(-1, error=ValueError, tag=":negative")],
    ),
    _mk(
        "linspace",
        _linspace_ref,
        custom(
            lambda rng: [
                S(0.0, 1.0, 5),
                S(0.0, 1.0, 5, endpoint=False),
                S(2, 3, 1),
                S(0.0, 1.0, 0),
                S(-1.0, 1.0, 4, dtype=xp.float32),
                S(0, 1j, 3),
            ]
        ),
        creation=True,
        errors=[E(0.0, 1.0, -1, error=ValueError, tag=":negative")],
    ),
    _mk(
        "meshgrid",
        _meshgrid_ref,
        custom(
            lambda rng: [
                S(_r(rng, (3,)), _r(rng, (4,))),
                S(_r(rng, (3,)), _r(rng, (4,)), indexing="ij"),
                S(_r(rng, (3,)), _r(rng, (0,)), _r(rng, (2,))),
                S(_r(rng, (3,))),
                S(_r(rng, (3,)), _r(rng, (4,)), layout="negative"),
            ]
        ),
        diff=True,
        errors=[
            E(z((3, 2)), z((4,)), error=ValueError, tag=":2d"),
            E(z((3,)), z((4,), "float32"), error=Exception, tag=":dtypes"),
        ],
    ),
    *[
        _mk(
            name,
            getattr(np, name),
            custom(
                lambda rng: [
                    *_xyz(rng, lambda x: [S(x), S(x, k=1), S(x, k=-1)]),
                    S(values(rng, (4, 4), "int64"), k=-10),
                    S(values(rng, (3, 4), "bool")),
                ]
            ),
            diff=True,
            tol="exact",
            errors=[E(z((4,)), error=ValueError, tag=":1d")],
        )
        for name in ("tril", "triu")
    ],
    _mk(
        "from_dlpack",
        _from_dlpack_ref,
        diff=True,  # a strided array comes back as a view sharing its history
        gen=custom(
            lambda rng: [
                *_xyz(rng, lambda x: [S(x)]),
                S(_r(rng, ())),
                S(values(rng, (3, 2), "int32")),
                S(values(rng, (3, 2), "bool")),
            ]
        ),
        tol="exact",
    ),
    # -- data type functions ----------------------------------------------------------------------
    _mk(
        "result_type",
        lambda *a: np.result_type(*[_np_dtype(t) for t in a]),
        custom(
            lambda rng: [
                S(z((2,), "float32"), z((3,), "float64")),
                S(z((2,), "int8"), z((2,), "uint8")),
                S(z((2,), "int8"), xp.int32),
                S(xp.float32, xp.complex64),
                S(z((0,), "bool"), z((2,), "bool")),
                S(z((2,), "float32"), 1.5),
                S(z((2,), "int16"), 3),
            ]
        ),
        function=_result_type,
        errors=[
            E(z((2,), "int64"), z((2,), "uint64"), error=TypeError, tag=":no-promotion"),
        ],
    ),
    _mk(
        "can_cast",
        _can_cast_ref,
        custom(
            lambda rng: [
                S(z((2,), "int8"), xp.int16),
                S(z((2,), "float64"), xp.float32),
                S(xp.uint8, xp.int16),
                S(xp.bool, xp.int8),
                S(xp.int64, xp.float64),
            ]
        ),
        check_dtype=False,
    ),
    _mk(
        "isdtype",
        _isdtype_ref,
        custom(
            lambda rng: [
                S(xp.float32, "real floating"),
                S(xp.int8, ("integral", "bool")),
                S(xp.complex64, xp.complex64),
            ]
        ),
        check_dtype=False,
        errors=[E(xp.float32, "floating point", error=ValueError, tag=":unknown-kind")],
    ),
    _mk(
        "finfo",
        _finfo_ref,
        custom(
            lambda rng: [
                S(xp.float32),
                S(xp.float64),
                S(xp.complex64),
                S(z((2,), "float32"), tag=":array"),
            ]
        ),
        function=_finfo,
        check_dtype=False,
        errors=[E(xp.int32, error=Exception)],
    ),
    _mk(
        "iinfo",
        _iinfo_ref,
        custom(lambda rng: [S(xp.int8), S(xp.uint64), S(z((2,), "int32"), tag=":array")]),
        function=_iinfo,
        check_dtype=False,
        errors=[E(xp.float32, error=Exception)],
    ),
    # -- manipulation -----------------------------------------------------------------------------
    _mk(
        "astype",
        _astype_ref,
        custom(
            lambda rng: [
                *_xyz(rng, lambda x: [S(x, xp.float32), S(x, xp.int32), S(x, xp.complex128)]),
                S(_r(rng, ()), xp.int64),
                S(values(rng, (3, 4), "int64"), xp.float64),
                S(values(rng, (3, 4), "bool"), xp.float32),
                S(values(rng, (3, 4), "uint8"), xp.int8),
                S(_r(rng, (3, 4)), xp.float64, copy=False),
            ]
        ),
        diff=True,
        tol="exact",
    ),
    _mk(
        "broadcast_arrays",
        lambda *a: tuple(np.broadcast_arrays(*a)),
        custom(
            lambda rng: [
                S(_r(rng, (3, 1)), _r(rng, (4,))),
                S(_r(rng, ()), _r(rng, (2, 3))),
                S(_r(rng, (0, 1)), _r(rng, (3,))),
                S(_r(rng, (3, 4))),
                S(_r(rng, (3, 4)), _r(rng, (3, 4)), layout="transposed"),
                S(_r(rng, (3, 4)), values(rng, (4,), "int64")),
            ]
        ),
        diff=True,
        tol="exact",
        errors=[E(z((3,)), z((4,)), error=ValueError)],
    ),
    _mk(
        "broadcast_shapes",
        lambda *s: np.broadcast_shapes(*s),
        custom(lambda rng: [S((3, 1), (4,)), S((), (2, 3)), S((0, 1), (3,)), S((2,))]),
        check_dtype=False,
        errors=[E((3,), (4,), error=ValueError)],
    ),
    _mk(
        "broadcast_to",
        np.broadcast_to,
        custom(
            lambda rng: [
                S(_r(rng, (3, 1)), (2, 3, 4)),
                S(_r(rng, ()), (2, 3)),
                S(_r(rng, (4,)), (0, 4)),
                S(_r(rng, (1,)), (0,)),
                S(_r(rng, (0, 1)), (2, 0, 3)),
                S(_r(rng, (3, 4)), (3, 4)),
                *[S(_r(rng, (1, 4)), (3, 4), layout=lay) for lay in NONCONTIGUOUS],
                S(values(rng, (1, 4), "bool"), (2, 4)),
            ]
        ),
        diff=True,
        tol="exact",
        errors=[
            E(z((3,)), (4,), error=ValueError),
            E(z((2, 3)), (3,), error=ValueError, tag=":fewer-dims"),
        ],
    ),
    _mk(
        "concat",
        lambda arrays, axis=0: np.concat(arrays, axis=axis),
        custom(_concat_samples),
        diff=True,
        tol="exact",
        errors=_CONCAT_ERRORS,
    ),
    _mk(
        "diff",
        lambda x, axis=-1, n=1, prepend=None, append=None: np.diff(
            x,
            n=n,
            axis=axis,
            **({"prepend": prepend} if prepend is not None else {}),
            **({"append": append} if append is not None else {}),
        ),  # fmt: skip
        custom(
            lambda rng: [
                *_xyz(rng, lambda x: [S(x), S(x, axis=0), S(x, n=2)]),
                S(_r(rng, (5,)), n=0),
                S(_r(rng, (3, 4)), n=5, tag=":n>len"),
                S(_r(rng, (3, 4)), prepend=_r(rng, (3, 1)), append=_r(rng, (3, 2))),
                S(values(rng, (3, 4), "int64")),
                S(values(rng, (3, 4), "bool")),
            ]
        ),
        diff=True,
        errors=[
            E(z(()), error=Exception, tag=":0d"),
            E(z((3, 4)), axis=2, error=Exception),
            E(z((3, 4)), prepend=z((2, 1)), error=ValueError, tag=":bad-prepend"),
            E(z((3, 4)), n=-1, error=ValueError),
        ],
    ),
    _mk(
        "expand_dims",
        lambda x, axis=0: np.expand_dims(x, axis),
        custom(
            lambda rng: [
                *_xyz(rng, lambda x: [S(x), S(x, axis=-1), S(x, axis=1), S(x, axis=(0, 2))]),
                S(_r(rng, ()), axis=0),
                S(values(rng, (3,), "int8"), axis=-2),
            ]
        ),
        diff=True,
        tol="exact",
        errors=[
            E(z((3, 4)), axis=3, error=IndexError),
            E(z((3, 4)), axis=-4, error=IndexError),
            E(z((3, 4)), axis=(0, 0), error=ValueError, tag=":repeated"),
        ],
    ),
    _mk(
        "flip",
        lambda x, axis=None: np.flip(x, axis),
        custom(
            lambda rng: [
                *_xyz(rng, lambda x: [S(x), S(x, axis=0), S(x, axis=(0, -1))]),
                S(_r(rng, ())),
                S(values(rng, (3,), "bool")),
            ]
        ),
        diff=True,
        tol="exact",
        errors=[E(z((3, 4)), axis=2, error=Exception)],
    ),
    _mk(
        "matrix_transpose",
        np.matrix_transpose,
        custom(
            lambda rng: [
                *_xyz(rng, lambda x: [S(x)]),
                S(values(rng, (2, 3), "int16")),
            ]
        ),
        diff=True,
        tol="exact",
        errors=[E(z((3,)), error=ValueError, tag=":1d"), E(z(()), error=ValueError, tag=":0d")],
    ),
    _mk(
        "moveaxis",
        np.moveaxis,
        custom(
            lambda rng: [
                S(_r(rng, (2, 3, 4)), 0, -1),
                S(_r(rng, (2, 3, 4)), (0, 1), (2, 0)),
                S(_r(rng, (0, 3)), 1, 0),
                S(_r(rng, (3, 4)), 0, 1, layout="negative"),
            ]
        ),
        diff=True,
        tol="exact",
        errors=[
            E(z((3, 4)), 2, 0, error=Exception),
            E(z((3, 4)), (0, 1), (0,), error=ValueError, tag=":lengths"),
        ],
    ),
    _mk(
        "permute_dims",
        np.permute_dims,
        custom(
            lambda rng: [
                *_xyz(rng, lambda x: [S(x, tuple(range(x.ndim))[::-1])]),
                S(_r(rng, (2, 3, 4)), (1, 2, 0)),
                S(_r(rng, ()), ()),
            ]
        ),
        diff=True,
        tol="exact",
        errors=[
            E(z((3, 4)), (0,), error=ValueError, tag=":too-few"),
            E(z((3, 4)), (0, 0), error=ValueError, tag=":repeated"),
            E(z((3, 4)), (0, 2), error=Exception, tag=":out-of-range"),
        ],
    ),
    _mk(
        "repeat",
        _repeat_ref,
        custom(
            lambda rng: [
                *_xyz(rng, lambda x: [S(x, 2), S(x, 2, axis=0), S(x, 0, axis=-1)]),
                S(_r(rng, ()), 3),
                S(values(rng, (3,), "int64"), 2),
                DD(_r(rng, (3, 4)), np.array([1, 0, 2]), axis=0),
                DD(_r(rng, (4,)), np.array([1, 0, 2, 3])),
                DD(_r(rng, (4,)), np.array(2), tag=":0d-repeats"),
            ]
        ),
        diff=True,
        tol="exact",
        errors=[
            E(z((3, 4)), 2, axis=2, error=Exception),
            E(z((3, 4)), -1, axis=0, error=ValueError, tag=":negative"),
        ],
    ),
    _mk(
        "reshape",
        lambda x, shape, copy=None: np.reshape(x, shape),
        custom(
            lambda rng: [
                *_xyz(rng, lambda x: [S(x, (-1,)), S(x, (x.shape[-1], -1))]),
                S(_r(rng, (3, 4)), (2, 6)),
                S(_r(rng, (3, 4)), (2, -1, 2)),
                S(_r(rng, ()), (1, 1)),
                S(_r(rng, (1,)), ()),
                S(_r(rng, (0, 3)), (3, 0, 5)),
                S(_r(rng, (3, 4)), (12,), copy=True),
                S(_r(rng, (3, 4)), (4, 3), copy=False),
                *[
                    NV(S(_r(rng, (3, 4)), (12,), copy=False, layout=lay))
                    for lay in ("transposed", "sliced", "negative", "broadcast")
                ],
            ]
        ),
        diff=True,
        tol="exact",
        errors=[
            E(z((3, 4)), (5,), error=ValueError, tag=":size"),
            E(z((3, 4)), (-1, -1), error=ValueError, tag=":two-minus-one"),
            E(z((0, 3)), (-1, 0), error=ValueError, tag=":ambiguous"),
        ],
    ),
    _mk(
        "roll",
        lambda x, shift, axis=None: np.roll(x, shift, axis=axis),
        custom(
            lambda rng: [
                *_xyz(rng, lambda x: [S(x, 1), S(x, -2, axis=0), S(x, (1, 2), axis=(0, 1))]),
                S(_r(rng, ()), 3),
                S(_r(rng, (5,)), 7),
            ]
        ),
        diff=True,
        tol="exact",
        errors=[E(z((3, 4)), 1, axis=2, error=Exception)],
    ),
    _mk(
        "squeeze",
        lambda x, axis: np.squeeze(x, axis),
        custom(
            lambda rng: [
                S(_r(rng, (3, 1, 4)), 1),
                S(_r(rng, (1, 3, 1)), (0, -1)),
                S(_r(rng, (1,)), 0),
                S(_r(rng, (0, 1)), 1),
                *[S(_r(rng, (3, 1, 4)), 1, layout=lay) for lay in NONCONTIGUOUS],
            ]
        ),
        diff=True,
        tol="exact",
        errors=[
            E(z((3, 4)), 0, error=ValueError, tag=":not-one"),
            E(z((3, 1)), 2, error=Exception, tag=":out-of-range"),
            E(z((0, 1)), 0, error=ValueError, tag=":size-0"),
        ],
    ),
    _mk(
        "stack",
        lambda a, axis=0: np.stack(a, axis=axis),
        custom(_stack_samples),
        diff=True,
        tol="exact",
        errors=_STACK_ERRORS,
    ),  # fmt: skip
    _mk(
        "tile",
        np.tile,
        custom(
            lambda rng: [
                *_xyz(rng, lambda x: [S(x, (2, 1)), S(x, (2,)), S(x, (1, 2, 3))]),
                S(_r(rng, ()), (3,)),
                S(_r(rng, (3,)), (0,)),
            ]
        ),
        diff=True,
        tol="exact",
    ),
    _mk(
        "unstack",
        lambda x, axis=0: tuple(np.unstack(x, axis=axis)),
        custom(
            lambda rng: [
                *_xyz(rng, lambda x: [S(x), S(x, axis=-1)]),
                S(_r(rng, (3,))),
            ]
        ),
        diff=True,
        tol="exact",
        errors=[E(z(()), error=Exception, tag=":0d"), E(z((3, 4)), axis=2, error=Exception)],
    ),
    _mk(
        "where",
        _where_ref,
        custom(
            lambda rng: [
                S(values(rng, (3, 4), B), _r(rng, (3, 4)), _r(rng, (4,))),
                S(values(rng, (3, 1), B), _r(rng, (1, 4)), 0.0),
                S(values(rng, (), B), 1.0, _r(rng, (2,))),
                S(values(rng, (0, 3), B), _r(rng, (3,)), _r(rng, (3,))),
                *[
                    S(values(rng, (3, 4), B), _r(rng, (3, 4)), _r(rng, (3, 4)), layout=lay)
                    for lay in NONCONTIGUOUS
                ],
                S(values(rng, (3, 4), B), values(rng, (3, 4), I), values(rng, (4,), I)),
                S(values(rng, (3,), B), values(rng, (3,), "float32"), _r(rng, (3,))),
            ]
        ),
        diff=True,
        tol="exact",
        errors=[
            E(z((3,), "float64"), z((3,)), z((3,)), error=TypeError, tag=":float-condition"),
            E(z((3,), "bool"), z((4,)), z((3,)), error=ValueError, tag=":mismatch"),
        ],
    ),
    # -- reductions and statistics ----------------------------------------------------------------
    _reduction(
        "sum",
        _with_dtype(np.sum),
        [F, I, "float32", C],
        rejected=[B],
        extra=[
            S(z((3, 4), "int8"), axis=0, dtype=xp.float64),
            S(z((3, 4), "float32"), dtype=xp.float64),
            S(z((3, 4), "uint8"), axis=1),
        ],
    ),  # fmt: skip
    _reduction("prod", _with_dtype(np.prod), [F, I, "float32", C], rejected=[B]),
    _reduction("max", np.max, [F, I, "float32"], rejected=[B, C], tol="exact"),
    _reduction("min", np.min, [F, I, "float32"], rejected=[B, C], tol="exact"),
    _reduction("mean", np.mean, [F, "float32", C, I], rejected=[B]),
    _reduction("var", _var(np.var), [F, "float32", C], rejected=[I, B]),
    _reduction("std", _var(np.std), [F, "float32", C], rejected=[I, B]),
    _reduction("any", np.any, [B, F, I], diff=False, tol="exact"),
    _reduction("all", np.all, [B, F, I], diff=False, tol="exact"),
    _reduction("count_nonzero", np.count_nonzero, [F, B, I], diff=False, tol="exact"),
    _mk(
        "cumulative_sum",
        _cumulative(np.cumulative_sum),
        custom(_cum_samples),
        diff=True,
        tol="loose",
        errors=_CUM_ERRORS,
    ),  # fmt: skip
    _mk(
        "cumulative_prod",
        _cumulative(np.cumulative_prod),
        custom(_cum_samples),
        diff=True,
        tol="loose",
        errors=_CUM_ERRORS,
    ),  # fmt: skip
    # -- searching and sorting --------------------------------------------------------------------
    *[
        _mk(
            name,
            ref,
            unary([F, I, "float32"], kws=AXES_NO_TUPLE),
            tol="exact",
            errors=[
                E(z((3, 4)), axis=2, error=Exception),
                *bad_dtypes([B, C]),
            ],
        )
        for name, ref in (("argmax", np.argmax), ("argmin", np.argmin))
    ],
    _mk("sort", _sort_ref, custom(_sort_samples), diff=True, tol="exact", errors=_SORT_ERRORS),
    _mk("argsort", _argsort_ref, custom(_sort_samples), tol="exact", errors=_SORT_ERRORS),
    _mk(
        "searchsorted",
        np.searchsorted,
        custom(_searchsorted_samples),
        tol="exact",
        errors=[
            E(z((2, 3)), z((3,)), error=ValueError, tag=":2d-x1"),
            E(z((3,), C), z((3,), C), error=TypeError),
        ],
    ),
    _mk(
        "nonzero",
        _nonzero_ref,
        custom(_nonzero_samples),
        tol="exact",
        errors=[E(z(()), error=ValueError, tag=":0d")],
    ),  # fmt: skip
    _mk(
        "take",
        _take_ref,
        custom(_take_samples),
        diff=True,
        tol="exact",
        errors=[
            E(z((3, 4)), np.array([0]), error=Exception, tag=":2d-without-axis"),
            E(z((3, 4)), np.array([0.0]), axis=0, error=TypeError, tag=":float-indices"),
            E(z((3, 4)), np.array([0]), axis=2, error=Exception),
            E(z((3, 4)), np.zeros((2, 2), dtype=np.int64), axis=0, error=Exception, tag=":2d"),
        ],
    ),
    _mk(
        "take_along_axis",
        np.take_along_axis,
        custom(_take_along_samples),
        diff=True,
        tol="exact",
        errors=[
            E(z((3, 4)), np.zeros((3,), dtype=np.int64), axis=1, error=ValueError, tag=":ndim"),
            E(
                z((3, 4)), np.zeros((2, 4), dtype=np.int64), axis=1, error=ValueError, tag=":shape"
            ),  # fmt: skip
            E(z((3, 4)), np.zeros((3, 4)), axis=1, error=TypeError, tag=":float-indices"),
        ],
    ),
    # -- indexing ---------------------------------------------------------------------------------
    _mk(
        "getitem",
        _getitem,
        custom(_getitem_samples),
        function=_getitem,
        diff=True,
        tol="exact",
        errors=_GETITEM_ERRORS,
    ),  # fmt: skip
    _mk(
        "setitem",
        _setitem_ref,
        custom(_setitem_samples),
        function=_setitem,
        diff=True,
        tol="exact",
        errors=_SETITEM_ERRORS,
    ),  # fmt: skip
    # -- sets -------------------------------------------------------------------------------------
    _mk(
        "isin",
        lambda a, b, invert=False: np.isin(a, b, invert=invert),
        custom(_isin_samples),
        tol="exact",
    ),  # fmt: skip
    _mk(
        "unique_values", np.unique_values, custom(_unique_samples), post=_unique_post(), tol="exact"
    ),  # fmt: skip
    _mk(
        "unique_counts",
        lambda x: tuple(np.unique_counts(x)),
        custom(_unique_samples),
        post=_unique_post("counts"),
        tol="exact",
    ),  # fmt: skip
    _mk(
        "unique_inverse",
        lambda x: tuple(np.unique_inverse(x)),
        custom(_unique_samples),
        post=_unique_post("inverse"),
        tol="exact",
    ),  # fmt: skip
    _mk(
        "unique_all",
        lambda x: tuple(np.unique_all(x)),
        custom(_unique_samples),
        post=_unique_post("indices", "inverse", "counts"),
        tol="exact",
    ),  # fmt: skip
]


# -- linear algebra -------------------------------------------------------------------------------


def _mat_samples(make, shapes=((3, 3), (2, 3, 3), (0, 3, 3), (0, 0), (1, 1)), dtypes=(F,),
                 extra=(), **kw):  # fmt: skip
    """Matrices (or stacks) made by ``make(rng, shape, dtype)``, every layout on a stack;
    ``extra`` positional arguments follow the matrix."""

    def gen(rng):
        for shape in shapes:
            yield S(make(rng, shape), *extra, **kw)
        for layout in NONCONTIGUOUS:
            yield S(make(rng, (2, 3, 3)), *extra, layout=layout, **kw)
        for d in dtypes[1:]:
            yield S(make(rng, (3, 3), d), *extra, **kw)

    return gen


_MAT_ERRORS = (
    E(z((3,)), error=ValueError, tag=":1d"),
    E(z((2, 3)), error=ValueError, tag=":not-square"),
    E(z((3, 3), B), error=TypeError),
)
_LA = dict(tol="loose", errors=_MAT_ERRORS)


def _gen_mat(rng, shape, d="float64"):
    return values(rng, shape, d, (-1.0, 1.0))


def _matmul_samples(rng):
    pairs = [((3, 4), (4, 5)), ((4,), (4,)), ((2, 3, 4), (4, 5)), ((4,), (4, 3)),
             ((3, 4), (4,)), ((2, 1, 3, 4), (5, 4, 2)), ((0, 4), (4, 5)), ((3, 0), (0, 5)),
             ((0,), (0,))]  # fmt: skip
    for a, b in pairs:
        yield S(_r(rng, a), _r(rng, b))
    for layout in NONCONTIGUOUS:
        yield S(_r(rng, (3, 4)), _r(rng, (4, 4)), layout=layout)
    for d in ("float32", "int64", "complex128"):
        yield S(values(rng, (3, 4), d), values(rng, (4, 2), d))
    yield S(values(rng, (3, 4), "float32"), _r(rng, (4, 2)), tag=":promote")


_MATMUL_ERRORS = (
    E(z((3, 4)), z((5, 6)), error=ValueError, tag=":inner"),
    E(z(()), z((3,)), error=ValueError, tag=":0d"),
    E(z((2, 3, 4)), z((3, 4, 5)), error=ValueError, tag=":batch"),
    E(z((3, 4), B), z((4, 2), B), error=TypeError),
)


def _tensordot_samples(rng):
    yield S(_r(rng, (2, 3, 4)), _r(rng, (3, 4, 5)))
    yield S(_r(rng, (2, 3)), _r(rng, (3, 4)), axes=1)
    yield S(_r(rng, (2, 3)), _r(rng, (4,)), axes=0)
    yield S(_r(rng, (2, 3, 4)), _r(rng, (4, 2, 5)), axes=((0, 2), (1, 0)))
    yield S(_r(rng, (0, 3)), _r(rng, (3, 4)), axes=1)
    for layout in NONCONTIGUOUS:
        yield S(_r(rng, (3, 4)), _r(rng, (4, 3)), layout=layout, axes=1)
    yield S(values(rng, (3, 4), I), values(rng, (4, 3), I), axes=1)


def _vecdot_samples(rng):
    yield S(_r(rng, (3, 4)), _r(rng, (4,)))
    yield S(_r(rng, (3, 4)), _r(rng, (3, 4)), axis=0)
    yield S(_r(rng, (2, 1, 4)), _r(rng, (3, 4)))
    yield S(_r(rng, (0, 4)), _r(rng, (4,)))
    yield S(_r(rng, (3, 0)), _r(rng, (3, 0)))
    for layout in NONCONTIGUOUS:
        yield S(_r(rng, (3, 4)), _r(rng, (3, 4)), layout=layout)
    yield S(values(rng, (3, 4), C), values(rng, (3, 4), C))
    yield S(values(rng, (3, 4), I), values(rng, (3, 4), I))


def _cross_samples(rng):
    yield S(_r(rng, (3,)), _r(rng, (3,)))
    yield S(_r(rng, (4, 3)), _r(rng, (3,)))
    yield S(_r(rng, (3, 4)), _r(rng, (3, 4)), axis=0)
    yield S(_r(rng, (0, 3)), _r(rng, (0, 3)))
    for layout in NONCONTIGUOUS:
        yield S(_r(rng, (4, 3)), _r(rng, (4, 3)), layout=layout)
    yield S(values(rng, (2, 3), I), values(rng, (2, 3), I))


def _solve_samples(rng):
    yield S(_wellcond(rng, (3, 3)), _r(rng, (3, 2)))
    yield S(_wellcond(rng, (2, 3, 3)), _r(rng, (2, 3, 1)))
    yield S(_wellcond(rng, (2, 3, 3)), _r(rng, (3, 4)), tag=":broadcast-b")
    yield S(_wellcond(rng, (3, 3)), _r(rng, (3,)), tag=":vector-b")
    yield S(_wellcond(rng, (0, 3, 3)), _r(rng, (0, 3, 2)))
    yield S(_wellcond(rng, (3, 3)), _r(rng, (3, 0)))
    for layout in NONCONTIGUOUS:
        yield S(_wellcond(rng, (2, 3, 3)), _r(rng, (2, 3, 2)), layout=layout)
    yield S(_wellcond(rng, (3, 3), "float32"), values(rng, (3, 2), "float32"))


def _vector_norm_samples(rng):
    for shape in [(5,), (3, 4), (0,), (0, 3), ()]:
        yield S(_r(rng, shape))
    for kw in [{"axis": 0}, {"axis": (0, 1)}, {"keepdims": True}, {"ord": 1}, {"ord": np.inf},
               {"ord": -np.inf}, {"ord": 0}, {"ord": 3, "axis": -1}]:  # fmt: skip
        yield S(_r(rng, (3, 4)), **kw)
    yield NV(S(_r(rng, (0, 3)), ord=np.inf, axis=0, tag=":empty-max"))
    for layout in NONCONTIGUOUS:
        yield S(_r(rng, (3, 4)), layout=layout, axis=1)
    yield S(values(rng, (3, 4), "float32"))
    yield S(values(rng, (3, 4), C), axis=1)


def _matrix_norm_samples(rng):
    for ord_ in ["fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf]:
        yield S(_gen_mat(rng, (2, 3, 4)), ord=ord_)
    yield S(_gen_mat(rng, (3, 3)), keepdims=True)
    yield S(_gen_mat(rng, (0, 3, 3)))
    yield S(_gen_mat(rng, (3, 0)), tag=":empty-fro")
    for layout in NONCONTIGUOUS:
        yield S(_gen_mat(rng, (2, 3, 3)), layout=layout)
    yield S(_gen_mat(rng, (3, 3), "float32"), ord=1)
    yield S(_gen_mat(rng, (3, 3), C))


def _svd_shapes():
    return ((3, 3), (4, 2), (2, 4), (2, 3, 2), (0, 3, 3), (0, 2), (3, 0))


LINALG_OPS: list[OpInfo] = [
    _mk(
        "matmul", np.matmul, custom(_matmul_samples), diff=True, tol="loose", errors=_MATMUL_ERRORS
    ),  # fmt: skip
    _mk(
        "tensordot",
        _tensordot_ref,
        custom(_tensordot_samples),
        diff=True,
        tol="loose",
        errors=[
            E(z((2, 3)), z((4, 5)), axes=1, error=ValueError, tag=":mismatch"),
            E(z((2, 3)), z((3, 4)), axes=3, error=ValueError, tag=":too-many-axes"),
        ],
    ),
    _mk(
        "vecdot",
        lambda a, b, axis=-1: np.vecdot(a, b, axis=axis),
        custom(_vecdot_samples),
        diff=True,
        tol="loose",
        errors=[
            E(z((3, 4)), z((3, 5)), error=ValueError, tag=":mismatch"),
            E(z((3, 4)), z((4,)), axis=-2, error=Exception, tag=":axis"),
        ],
    ),
    _mk(
        "linalg.cholesky",
        lambda x, upper=False: np.linalg.cholesky(x, upper=upper),
        custom(
            _mat_samples(_spd, dtypes=(F, "float32", C)),
            _mat_samples(_spd, shapes=((3, 3),), upper=True),
        ),  # fmt: skip
        diff=True,
        **_LA,
    ),
    _mk(
        "linalg.cross",
        lambda a, b, axis=-1: np.linalg.cross(a, b, axis=axis),
        custom(_cross_samples),
        diff=True,
        tol="loose",
        errors=[
            E(z((2,)), z((2,)), error=ValueError, tag=":size-2"),
            E(z((4, 3)), z((2, 3)), error=ValueError, tag=":mismatch"),
        ],
    ),
    _mk(
        "linalg.det",
        np.linalg.det,
        custom(_mat_samples(_wellcond, dtypes=(F, "float32", C))),
        diff=True,
        **_LA,
    ),  # fmt: skip
    _mk(
        "linalg.diagonal",
        lambda x, offset=0: np.linalg.diagonal(x, offset=offset),
        custom(
            lambda rng: [
                *_xyz(rng, lambda x: [S(x), S(x, offset=1), S(x, offset=-2)]),
                S(_r(rng, (3, 4)), offset=7),
                S(values(rng, (3, 3), I)),
            ]
        ),
        diff=True,
        tol="exact",
        errors=[E(z((3,)), error=ValueError, tag=":1d")],
    ),
    _mk(
        "linalg.eig",
        _eig_ref,
        custom(_mat_samples(_gen_mat, dtypes=(F, "float32", C))),
        post=_eig_post,
        diff=True,
        **_LA,
    ),  # fmt: skip
    _mk(
        "linalg.eigvals",
        _eigvals_ref,
        custom(_mat_samples(_gen_mat, dtypes=(F, C))),
        post=_eigvals_post,
        diff=True,
        **_LA,
    ),  # fmt: skip
    _mk(
        "linalg.eigh",
        lambda x: tuple(np.linalg.eigh(x)),
        custom(_mat_samples(_spd, dtypes=(F, "float32", C))),
        post=_eigh_post,
        diff=True,
        **_LA,
    ),  # fmt: skip
    _mk(
        "linalg.eigvalsh",
        np.linalg.eigvalsh,
        custom(_mat_samples(_spd, dtypes=(F, C))),
        diff=True,
        **_LA,
    ),  # fmt: skip
    _mk(
        "linalg.inv",
        np.linalg.inv,
        custom(_mat_samples(_wellcond, dtypes=(F, "float32", C))),
        diff=True,
        **_LA,
    ),  # fmt: skip
    _mk(
        "linalg.matrix_norm",
        lambda x, keepdims=False, ord="fro": np.linalg.matrix_norm(x, keepdims=keepdims, ord=ord),
        custom(_matrix_norm_samples),
        diff=True,
        tol="loose",
        errors=[
            E(z((3,)), error=ValueError, tag=":1d"),
            E(z((3, 3)), ord=3, error=ValueError, tag=":bad-ord"),
        ],
    ),  # fmt: skip
    _mk(
        "linalg.matrix_power",
        _matrix_power_ref,
        custom(
            _mat_samples(_wellcond, extra=(3,)),
            _mat_samples(_wellcond, shapes=((3, 3), (0, 2, 2)), extra=(0,)),
            _mat_samples(_wellcond, shapes=((3, 3), (2, 3, 3)), extra=(-2,)),
        ),
        diff=True,
        tol="loose",
        errors=[
            E(z((2, 3)), 2, error=ValueError, tag=":not-square"),
            E(z((3, 3), I), 2, error=TypeError),
        ],  # fmt: skip
    ),
    _mk(
        "linalg.matrix_rank",
        lambda x, **kw: np.linalg.matrix_rank(x, **kw),
        custom(
            _mat_samples(_gen_mat, shapes=((3, 3), (4, 2), (2, 3, 3), (0, 3, 3), (3, 0))),
            lambda rng: [
                S(np.ones((3, 3)), tag=":rank-1"),
                S(_gen_mat(rng, (3, 3)), rtol=0.5),
            ],  # fmt: skip
        ),
        tol="exact",
        errors=[E(z((3,)), error=ValueError, tag=":1d")],
    ),
    _mk(
        "linalg.outer",
        np.linalg.outer,
        custom(
            lambda rng: [
                S(_r(rng, (3,)), _r(rng, (4,))),
                S(_r(rng, (0,)), _r(rng, (4,))),
                S(_r(rng, (3,)), _r(rng, (4,)), layout="negative"),
                S(_r(rng, (3,)), _r(rng, (4,)), layout="broadcast"),
                S(values(rng, (3,), I), values(rng, (2,), I)),
            ]
        ),
        diff=True,
        tol="loose",
        errors=[E(z((3, 2)), z((4,)), error=ValueError, tag=":2d")],
    ),
    _mk(
        "linalg.pinv",
        lambda x, **kw: np.linalg.pinv(x, **kw),
        custom(_mat_samples(_gen_mat, shapes=((3, 3), (4, 2), (2, 4), (2, 3, 2), (0, 3, 3)))),
        diff=True,
        tol="loose",
        errors=[E(z((3,)), error=ValueError, tag=":1d")],
    ),
    _mk(
        "linalg.qr",
        lambda x, mode="reduced": tuple(np.linalg.qr(x, mode=mode)),
        custom(
            _mat_samples(_gen_mat, shapes=((3, 3), (4, 2), (2, 4), (2, 3, 2), (0, 3, 3))),
            _mat_samples(_gen_mat, shapes=((4, 2), (2, 4)), mode="complete"),
            lambda rng: [S(values(rng, (3, 3), C))],
        ),
        post=_qr_post,
        diff=True,
        tol="loose",
        errors=[
            E(z((3,)), error=ValueError, tag=":1d"),
            E(z((3, 3)), mode="r", error=ValueError, tag=":bad-mode"),
        ],  # fmt: skip
    ),
    _mk(
        "linalg.slogdet",
        lambda x: tuple(np.linalg.slogdet(x)),
        custom(_mat_samples(_wellcond, dtypes=(F, "float32", C))),
        diff=True,
        **_LA,
    ),
    _mk(
        "linalg.solve",
        np.linalg.solve,
        custom(_solve_samples),
        diff=True,
        tol="loose",
        errors=[
            E(z((3, 3)), z((4, 2)), error=ValueError, tag=":mismatch"),
            E(z((2, 3)), z((2, 1)), error=ValueError, tag=":not-square"),
        ],
    ),
    _mk(
        "linalg.svd",
        lambda x, full_matrices=True: tuple(np.linalg.svd(x, full_matrices=full_matrices)),
        custom(
            _mat_samples(_gen_mat, shapes=_svd_shapes()),
            _mat_samples(_gen_mat, shapes=((4, 2), (2, 3, 2), (0, 2)), full_matrices=False),
        ),
        post=_svd_post,
        diff=True,
        tol="loose",
        errors=[E(z((3,)), error=ValueError, tag=":1d")],
    ),
    _mk(
        "linalg.svdvals",
        np.linalg.svdvals,
        custom(_mat_samples(_gen_mat, shapes=_svd_shapes(), dtypes=(F, C))),
        diff=True,
        tol="loose",
        errors=[E(z((3,)), error=ValueError, tag=":1d")],
    ),  # fmt: skip
    _mk(
        "linalg.trace",
        _trace_ref,
        custom(
            lambda rng: [
                *_xyz(rng, lambda x: [S(x), S(x, offset=1), S(x, offset=-5)]),
                S(values(rng, (3, 3), I)),
                S(values(rng, (3, 3), "int32"), dtype=xp.int32),
                S(values(rng, (3, 3), C)),
            ]
        ),
        diff=True,
        tol="loose",
        errors=[E(z((3,)), error=ValueError, tag=":1d")],
    ),
    _mk(
        "linalg.vector_norm",
        lambda x, axis=None, keepdims=False, ord=2: np.linalg.vector_norm(
            x, axis=axis, keepdims=keepdims, ord=ord
        ),
        custom(_vector_norm_samples),
        diff=True,
        tol="loose",
        errors=[E(z((3, 4)), axis=2, error=Exception), E(z((3,), B), error=TypeError)],
    ),  # fmt: skip
]

# -- fft ------------------------------------------------------------------------------------------


def _fft_samples(real_in, nd=False):
    d0, d1 = ("float64", "float32") if real_in else ("complex128", "complex64")

    def gen(rng):
        v = lambda s, d=d0: values(rng, s, d, (-1.0, 1.0))  # noqa: E731
        for shape in [(8,), (3, 5), (2, 3, 4), (0, 4), (1,)]:
            yield S(v(shape))
        if nd:
            yield S(v((3, 5)), s=(4, 6), axes=(0, 1))
            yield S(v((2, 3, 4)), axes=(0, 2))
            yield S(v((2, 3, 4)), s=(3,), axes=(1,))
        else:
            yield S(v((3, 5)), n=8)
            yield S(v((3, 5)), n=3, axis=0)
        yield S(v((3, 6)), norm="ortho")
        yield S(v((3, 6)), norm="forward")
        for layout in NONCONTIGUOUS:
            yield S(v((4, 6)), layout=layout)
        yield S(v((3, 6), d1))

    return gen


def _fft_errors(real_in, nd=False):
    d = "float64" if real_in else "complex128"
    errs = [
        E(z((3, 4), "int64" if not real_in else "complex128"), error=TypeError),
        E(z((3, 4), d), norm="bad", error=ValueError, tag=":bad-norm"),
    ]
    if nd:
        errs.append(E(z((3, 4), d), s=(0, 4), axes=(0, 1), error=ValueError, tag=":s=0"))
        errs.append(E(z((3, 4), d), s=(4, 4), error=Exception, tag=":s-without-axes"))
        errs.append(E(z((3, 4), d), axes=(0, 0), error=Exception, tag=":repeated-axes"))
    else:
        errs.append(E(z((3, 4), d), n=0, error=ValueError, tag=":n=0"))
        errs.append(E(z((3, 4), d), axis=2, error=Exception))
        errs.append(E(z((0,), d), error=ValueError, tag=":empty-axis"))
    return errs


def _fft_row(name, real_in, nd=False):
    return _mk(
        f"fft.{name}",
        getattr(np.fft, name),
        custom(_fft_samples(real_in, nd)),
        diff=True,
        tol="loose",
        errors=_fft_errors(real_in, nd),
    )


FFT_OPS: list[OpInfo] = [
    _fft_row("fft", False),
    _fft_row("ifft", False),
    _fft_row("fftn", False, nd=True),
    _fft_row("ifftn", False, nd=True),
    _fft_row("rfft", True),
    _fft_row("irfft", False),
    _fft_row("rfftn", True, nd=True),
    _fft_row("irfftn", False, nd=True),
    _fft_row("hfft", False),
    _fft_row("ihfft", True),
    *[
        _mk(
            f"fft.{name}",
            _freq(getattr(np.fft, name)),
            custom(lambda rng: [S(8), S(7, d=0.5), S(1), S(4, dtype=xp.float32)]),
            creation=True,
            tol="loose",
            errors=[E(0, error=Exception, tag=":n=0")],
        )
        for name in ("fftfreq", "rfftfreq")
    ],
    *[
        _mk(
            f"fft.{name}",
            lambda x, axes=None, name=name: getattr(np.fft, name)(x, axes=axes),
            custom(
                lambda rng: [
                    *_xyz(rng, lambda x: [S(x), S(x, axes=0), S(x, axes=(0, -1))]),
                    S(values(rng, (5,), C)),
                ]
            ),
            diff=True,
            tol="exact",
            errors=[E(z((3, 4)), axes=2, error=Exception)],
        )
        for name in ("fftshift", "ifftshift")
    ],
]

OP_TABLE: list[OpInfo] = OPS + LINALG_OPS + FFT_OPS
BY_NAME = {op.name: op for op in OP_TABLE}
assert len(BY_NAME) == len(OP_TABLE), "duplicate op-table names"

# -- samples added across entries -----------------------------------------------------------------
_X = np.random.default_rng(7)
_0D = E(z(()), error=Exception, tag=":0d")  # a 0-d array where the standard needs dimensions
ZERO_D_INVALID = [
    "tril", "triu", "linalg.cholesky", "linalg.det", "linalg.eig", "linalg.eigvals",
    "linalg.eigh", "linalg.eigvalsh", "linalg.inv", "linalg.matrix_norm", "linalg.matrix_rank",
    "linalg.pinv", "linalg.qr", "linalg.slogdet", "linalg.svd", "linalg.svdvals",
    "linalg.diagonal", "linalg.trace", "fft.fft", "fft.ifft", "fft.rfft", "fft.irfft",
    "fft.hfft", "fft.ihfft", "fft.irfftn",
]  # fmt: skip
EXTRA: dict[str, list[Sample]] = {
    "moveaxis": [E(z(()), 0, 0, tag=":0d"), S(values(_X, (2, 3), I), 0, 1)],
    "squeeze": [E(z(()), 0, tag=":0d"), S(values(_X, (1, 3), I), 0)],
    "take": [E(z(()), np.array([0]), tag=":0d")],
    "take_along_axis": [E(z(()), np.zeros((), dtype=np.int64), axis=0, tag=":0d")],
    "linalg.matrix_power": [E(z(()), 2, tag=":0d"), S(_wellcond(_X, (3, 3), "float32"), 2)],
    "vecdot": [E(z(()), z(()), tag=":0d")],
    "linalg.cross": [E(z(()), z(()), tag=":0d")],
    "linalg.outer": [E(z(()), z((3,)), tag=":0d")],
    "linalg.solve": [E(z(()), z(()), tag=":0d")],
    "tensordot": [S(_r(_X, ()), _r(_X, (3,)), axes=0)],
    "meshgrid": [E(z(()), z((3,)), error=ValueError, tag=":0d")],
    # NumPy's fftshift of a 0-d array fails inside np.roll; the standard's answer is x itself
    "fft.fftshift": [NV(S(_r(_X, ())))],
    "fft.ifftshift": [NV(S(_r(_X, ())))],
    **{f"unique_{k}": [DD(_r(_X, ()))] for k in ("values", "counts", "inverse", "all")},
    "fft.ifftn": [S(values(_X, (), C))],
    "asarray": [S(values(_X, (2, 3), I), tag=":array"), S(values(_X, (2,), B), tag=":array")],
    "permute_dims": [S(values(_X, (2, 3), B), (1, 0))],
    "reshape": [S(values(_X, (2, 3), I), (3, 2))],
    "roll": [S(values(_X, (2, 3), B), 1, axis=1)],
    "tile": [S(values(_X, (2, 3), I), (2, 1)), E(z((3,)), (-1,), tag=":negative")],
    "unstack": [S(values(_X, (2, 3), B), axis=1)],
    "linalg.matrix_rank": [S(_gen_mat(_X, (3, 3), "float32"))],
    "linalg.pinv": [S(_gen_mat(_X, (3, 2), "float32"))],
    "linalg.svd": [S(_gen_mat(_X, (3, 2), "float32"))],
    "astype": [E(z((3,)), 123, error=TypeError, tag=":not-a-dtype")],
    "from_dlpack": [E([1.0, 2.0], tag=":a-list")],
}  # fmt: skip
# edge cases of the shape and dtype rules (each checked on both devices and against NumPy)
EDGE_CASES: dict[str, list[Sample]] = {
    "arange": [S(0.1, 0.7, 0.2), S(1, 2, 0.3), S(10, 0, -3), S(0.0, -1.0), S(2**60, 2**60 + 3)],
    "linspace": [S(0, 1, 1, endpoint=False), E(0, 10, 5, dtype=xp.int64, tag=":int-dtype")],
    "full": [S((2,), 1j), E((3,), 300, dtype=xp.uint8, error=OverflowError)],
    "full_like": [E(z((3,), "uint8"), 300, error=OverflowError),
                  E(z((3,), I), 1.5, error=TypeError, tag=":float-fill")],
    "asarray": [S([1, 2.5]), S([[1], [2.0j]]), S([], dtype=xp.int8),
                E(2**70, error=OverflowError, tag=":too-big")],
    "concat": [S([_r(_X, ())], axis=None, tag=":0d")],
    "stack": [S([_r(_X, (2, 3))] * 2, axis=-3)],
    "expand_dims": [S(_r(_X, (2, 3)), axis=(-1, 0))],
    "squeeze": [S(_r(_X, (1, 3)), ())],
    "flip": [S(_r(_X, (1, 3)), axis=())],
    "roll": [E(z((2, 3)), (1, 2), error=ValueError, tag=":tuple-shift-without-axis")],
    "count_nonzero": [S(_r(_X, (2, 3)), axis=())],
    "linalg.vector_norm": [S(_r(_X, (2, 3)), axis=()), S(_r(_X, (0,)), ord=0.5),
                           E(z((0,)), ord=-np.inf, error=ValueError, tag=":empty-min")],
    "linalg.matrix_norm": [S(_gen_mat(_X, (0, 3, 3)), ord="nuc"),
                           S(_gen_mat(_X, (0, 3, 3)), ord=-2),
                           E(z((3, 0)), ord=2, error=ValueError, tag=":empty-2-norm")],
    "linalg.qr": [S(_gen_mat(_X, (0, 3)), mode="complete"), S(_gen_mat(_X, (3, 0)))],
    "linalg.solve": [S(z((0, 0)), z((0,))),
                     S(_wellcond(_X, (3, 3)), _r(_X, (2, 3, 1)), tag=":broadcast-a"),
                     E(z((2, 3, 3)), z((2, 3)), error=ValueError, tag=":stack-of-vectors")],
    "linalg.matrix_power": [S(z((0, 0)), -1)],
    "linalg.diagonal": [S(_r(_X, (0, 3)), offset=5)],
    "linalg.trace": [S(_r(_X, (3, 3)), dtype=xp.float32), S(values(_X, (3, 3), "int8"))],
    "linalg.matrix_rank": [S(_gen_mat(_X, (2, 3, 3)), rtol=_r(_X, (2,), lo=0.1, hi=0.2))],
    "linalg.pinv": [S(_gen_mat(_X, (2, 3, 3)), rtol=_r(_X, (2,), lo=0.1, hi=0.2))],
    "linalg.cross": [S(values(_X, (3,), "int8"), values(_X, (3,), "uint8")),
                     E(z((3,), B), z((3,), B), error=TypeError)],
    # mixed-kind promotion is the library's choice (strided: float32, NumPy: float64)
    "linalg.outer": [NV(S(values(_X, (3,), "float32"), values(_X, (2,), I), tag=":promote"))],
    "fft.fft": [S(values(_X, (0, 4), C), n=3, axis=0)],
    "fft.rfft": [S(_r(_X, (4,)), n=5)],
    "fft.irfft": [S(values(_X, (4,), C), n=5), E(z((1,), C), error=ValueError, tag=":length-1"),
                  E(z((4,)), error=TypeError, tag=":real-input")],
    "fft.hfft": [S(values(_X, (1,), C), n=1)],
    "fft.irfftn": [E(z((3, 1), C), error=ValueError, tag=":length-1")],
    "fft.rfftn": [S(_r(_X, (3, 0)), axes=(0,)), E(z(()), error=ValueError, tag=":0d")],
    "fft.fftn": [S(values(_X, (3, 2), C), axes=()), S(values(_X, (), C))],
    "fft.fftfreq": [E(4, d=0.0, error=ValueError, tag=":d=0"), E(-1, error=ValueError),
                    E(4, dtype=xp.complex128, error=TypeError)],
    "getitem": [S(_r(_X, (4, 5)), slice(10, 0, -3)), S(_r(_X, (0, 4)), slice(None, None, -1)),
                S(_r(_X, (4, 5)), np.array(1), tag=":0d-index"), S(_r(_X, (4, 5)), (slice(None),
                slice(5, None))), E(z((4, 5)), True, error=IndexError, tag=":bool-key"),
                E(z((4, 5)), [0, 1], error=IndexError, tag=":list-key")],
    "where": [S(values(_X, (3,), B), 1, 2), S(values(_X, (3,), B), 1, 2.0),
              S(values(_X, (3,), B), values(_X, (3,), "int8"), 1.5)],
    # the standard: clip's result has x's dtype (NumPy promotes)
    "clip": [NV(S(values(_X, (3,), "float32"), _r(_X, (3,)))),
             S(_r(_X, (3,)), _r(_X, (2, 3)), tag=":broadcast-out"),
             E(z((3,), "int8"), 1000, error=OverflowError)],
    "astype": [S(values(_X, (3,), C), xp.float64, tag=":complex-to-real")],
    "isin": [S(values(_X, (3,), I), _r(_X, (3,))), S(_r(_X, (3,)), 1.0),
             S(values(_X, (3,), C), values(_X, (2,), C))],
    "repeat": [E(z((3,)), [1, 2, 3], error=TypeError, tag=":list-repeats")],
    "sum": [S(_r(_X, (3,)), dtype=xp.float32), S(values(_X, (3,), I), dtype=xp.int8)],
    "prod": [S(values(_X, (3,), "uint8", int_domain=(0, 3)))],
    "cumulative_sum": [S(values(_X, (3,), "uint8")), S(values(_X, (3,), "int8"), dtype=xp.int8),
                       E(z((0, 3)), error=ValueError, tag=":2d-zero-size-without-axis")],
    "argmax": [S(_r(_X, (0, 3)), axis=1), S(_r(_X, (3, 0)), axis=0),
               E(z((3, 0)), axis=1, error=ValueError, tag=":empty-axis")],
    "argmin": [E(z((0,)), error=ValueError, tag=":empty")],
    # correction >= N: the standard says NaN (NumPy gives inf); tests/test_robustness.py checks it
    "var": [NV(S(_r(_X, (3,)), correction=5)), S(_r(_X, (0,)), tag=":empty")],
    "searchsorted": [E(z(()), z((3,)), error=ValueError, tag=":0d-x1"),
                     E(z((3,)), z((3,)), side="middle", error=ValueError),
                     S(np.sort(_r(_X, (3,))), values(_X, (3,), I), tag=":mixed")],
    "sort": [S(values(_X, (5,), B), descending=True)],
    "take_along_axis": [S(_r(_X, (2, 3)), np.zeros((2, 1), dtype=np.int64), axis=-2),
                        S(_r(_X, (2, 3)), np.zeros((2, 1), dtype=np.int8), axis=1)],
    "take": [S(_r(_X, (2, 3)), np.array([1, 0], dtype=np.uint8), axis=1),
             E(z((2, 3)), np.zeros(2, dtype=bool), axis=1, error=TypeError, tag=":bool-indices")],
    "tensordot": [S(_r(_X, (2, 3)), _r(_X, (3, 4)), axes=((-1,), (0,))),
                  E(z((2, 3)), z((3, 4)), axes=-1, error=ValueError, tag=":negative"),
                  E(z((2, 3)), z((3, 4)), axes=((1,), (0, 1)), error=ValueError, tag=":lengths")],
    "matmul": [S(values(_X, (2, 3), "int8"), values(_X, (3, 4), "uint8")),
               S(values(_X, (2, 3), "float32"), values(_X, (3, 4), "complex64"))],
    "vecdot": [S(values(_X, (3,), "int8"), values(_X, (3,), "float32"), tag=":mixed-kinds")],
    "linalg.det": [E(z((3, 3), I), error=TypeError, tag=":int")],
    "linalg.eigh": [S(_spd(_X, (3, 3), "complex64"))],
    "linalg.slogdet": [S(_wellcond(_X, (3, 3), "complex64"))],
    "linalg.svd": [S(values(_X, (3, 2), "complex64"))],
    "meshgrid": [S()],
    "broadcast_arrays": [S()],
    "broadcast_shapes": [S(), E((-1, 3), (3,), error=ValueError, tag=":negative")],
    "unstack": [S(_r(_X, (0, 3)), tag=":zero-length")],
    "tile": [S(_r(_X, ()), ())],
    "moveaxis": [E(z((2, 3)), (0, 0), (1, 0), error=ValueError, tag=":repeated")],
    "permute_dims": [S(_r(_X, (2, 3)), (-1, 0))],
    "reshape": [NV(S(_r(_X, (3, 0)), (-1,), copy=False, layout="transposed")),
                NV(S(_r(_X, (3, 4)), (3, 2, 2), copy=False, layout="transposed"))],
    "zeros_like": [S(_r(_X, (3,)), dtype=xp.bool)],
    "eye": [S(2, dtype=xp.bool)],
    "tril": [S(values(_X, (3, 3), B), tag=":bool")],
    "diff": [S(values(_X, (3,), B), tag=":bool"),
             E(z((3,)), prepend=z(()), error=ValueError, tag=":0d-prepend")],
    "result_type": [S(z((3,), "float32"), 1j), E(error=TypeError, tag=":no-arguments")],
}  # fmt: skip
# where strided follows the standard and NumPy does not, a sample is only checked for agreement
# between devices (NV); where strided has a bug on every device, it is listed below
KNOWN_BUGS: dict[tuple[str, str], str] = {}
EDGE_CASES["broadcast_to"] = [E(z((3,)), (-1, 3), error=ValueError, tag=":negative-shape")]

for _name, _samples in [*[(n, [_0D]) for n in ZERO_D_INVALID], *EXTRA.items(),
                        *EDGE_CASES.items()]:  # fmt: skip
    _op = BY_NAME[_name]
    _op.errors = tuple(_op.errors) + tuple(x for x in _samples if x.error is not None)
    _op.gen = _chain(_op.gen, [x for x in _samples if x.error is None])

# primitives that are not public functions: name -> the test module that covers them (checked by
# test_completeness.py); the public functions built on them have rows in OP_TABLE
OTHER_OPS = {
    "empty": "test_creation",
    "arange": "test_creation",
    "linspace": "test_creation",
    "fill": "test_creation",
    "full": "test_creation",
    "copy": "test_manipulation",
    "where": "test_manipulation",
    # view primitives: rules only (shape, strides, offset), no kernel on any device
    "reshape": "test_manipulation",
    "permute_dims": "test_manipulation",
    "expand_dims": "test_manipulation",
    "squeeze": "test_manipulation",
    "broadcast_to": "test_manipulation",
    "flip": "test_manipulation",
    "getitem": "test_array_object",
    "as_strided": "test_autograd",
    "to_device": "test_devices",
    "export": "test_interchange",
    "import_host": "test_creation",
    "import_device": "test_cuda_library",
    "clip": "test_elementwise",
    "diagonal": "test_linalg",
    # composite primitives: compositions recorded as one unit with their own backward rule
    "concat": "test_manipulation",
    "getitem_arrays": "test_searching",
    "index_add": "test_autograd",
    "euclidean_norm": "test_linalg",
    "cholesky": "test_linalg",
    "inv": "test_linalg",
    "det": "test_linalg",
    "slogdet": "test_linalg",
    "solve": "test_linalg",
    "eigh": "test_linalg",
    "eigvalsh": "test_linalg",
    "eig": "test_linalg",
    "eigvals": "test_linalg",
    "svd": "test_linalg",
    "svdvals": "test_linalg",
    "qr": "test_linalg",
    "sum": "test_reductions",
    "prod": "test_reductions",
    "var": "test_reductions",
    "max": "test_reductions",
    "min": "test_reductions",
    "any": "test_reductions",
    "all": "test_reductions",
    "count_true": "test_reductions",
    "cumulative_sum": "test_reductions",
    "cumulative_prod": "test_reductions",
    "matmul": "test_matmul",
    "dot": "test_linalg",
    "cross": "test_linalg",
    "triangle": "test_compositions",
    "unique_runs": "test_sets_and_contractions",
    "argmax": "test_searching",
    "argmin": "test_searching",
    "nonzero": "test_searching",
    "mask_offsets": "test_searching",
    "mask_select": "test_searching",
    "searchsorted": "test_searching",
    "isin_sorted": "test_sets_and_contractions",
    "sort": "test_searching",
    "argsort": "test_searching",
    "take": "test_searching",
    "take_along_axis": "test_searching",
    "gather": "test_searching",
    "normalize_index": "test_searching",
    "scatter": "test_searching",
    "mask_fill": "test_searching",
    "scatter_add": "test_autograd",  # index_add, the backward of gather
    "repeat_counts": "test_compositions",  # repeat with per-element counts
    "fft_c2c": "test_fft",
    "fft_r2c": "test_fft",
    "fft_c2r": "test_fft",
    # the linalg extension's LAPACK-backed primitives (the rest of strided.linalg is compositions)
    "linalg_cholesky": "test_linalg",
    "linalg_inv": "test_linalg",
    "linalg_solve": "test_linalg",
    "linalg_det": "test_linalg",
    "linalg_slogdet": "test_linalg",
    "linalg_eigh": "test_linalg",
    "linalg_eig": "test_linalg",
    "linalg_svd": "test_linalg",
    "linalg_qr": "test_linalg",
    # strided.nn's convolution and pooling primitives (tested through nn.functional)
    "im2col": "nn.test_conv",
    "col2im": "nn.test_conv",
    "max_pool2d": "nn.test_pooling",
    "max_pool2d_backward": "nn.test_pooling",
    "avg_pool2d": "nn.test_pooling",
    "avg_pool2d_backward": "nn.test_pooling",
    "conv2d": "nn.test_conv",
    "conv2d_input_grad": "nn.test_conv",
    "conv2d_weight_grad": "nn.test_conv",
}

REDUCTIONS = {
    "sum": np.sum,
    "prod": np.prod,
    "max": np.max,
    "min": np.min,
    "any": np.any,
    "all": np.all,
}
