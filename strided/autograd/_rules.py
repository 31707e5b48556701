"""Backward rules (vector-Jacobian products), one per differentiable operation.

Each rule receives the recorded node (``ctx``: ``ctx.inputs`` the data arguments as passed,
``ctx.outputs`` the outputs, ``ctx.params`` the other arguments, ``ctx.input_meta`` the shape,
dtype and device of every input, ``ctx.edges[i]`` None where input ``i`` needs no gradient) and
the gradient of each output (None for an output of a multi-output operation that received none),
and returns one gradient per input (None where there is none).  Rules are written with namespace
functions, so they run on every device, meta included, and are themselves recorded under
``create_graph=True``.

Gradients may come back broadcast or in a wider dtype: the engine sums them to the input's shape
and casts them to its dtype (the real part for a real input).  Complex numbers follow PyTorch's
convention: for a holomorphic ``f`` the rule returns ``g * conj(f'(x))``; in general the result
is dL/d(re x) + i dL/d(im x) for the real loss L = Re(sum(conj(g) * y)).
"""

from __future__ import annotations

import math

from .. import _dtypes as dt
from .. import _namespace as _xp
from .._array import Array
from .._shapes import normalize_axes, normalize_axis
from .._tape import RULES, Rule
from ..dispatch import NOT_DIFFERENTIABLE, primitives


def rule(*names: str, inputs: bool = True, output: bool = False):
    """Declare ``fn`` the backward rule of ``names`` (saving inputs and/or outputs)."""

    def deco(fn):
        for n in names:
            RULES[n] = Rule(fn, save_inputs=inputs, save_output=output)
        return fn

    return deco


def not_differentiable(*names: str) -> None:
    for n in names:
        RULES[n] = NOT_DIFFERENTIABLE


def _cj(a):
    """Complex conjugate (the identity for real arrays and real scalars)."""
    if isinstance(a, Array):
        return _xp.conj(a) if a._dtype.kind == dt.COMPLEX else a
    return a.conjugate() if isinstance(a, complex) else a


def _is_complex(a) -> bool:
    return (isinstance(a, Array) and a._dtype.kind == dt.COMPLEX) or isinstance(a, complex)


def _zeros(shape: tuple, like: Array) -> Array:
    """Zeros of ``shape`` with the dtype and device of the gradient ``like``."""
    return _xp.zeros(shape, dtype=like.dtype, device=like.device)


# -- elementwise ----------------------------------------------------------------------------------
not_differentiable(
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
    "bitwise_and",
    "bitwise_or",
    "bitwise_xor",
    "bitwise_invert",
    "bitwise_left_shift",
    "bitwise_right_shift",
    "isnan",
    "isinf",
    "isfinite",
    "signbit",
    "argmax",
    "argmin",
    "argsort",
    "normalize_index",
    "searchsorted",
    "isin_sorted",
    "nonzero",
    "mask_offsets",
    "count_true",
    "any",
    "all",
)


@rule("nextafter", inputs=False)
def _nextafter(ctx, g):
    raise RuntimeError("nextafter: the derivative is not defined (the result is a step function)")


@rule("negative", inputs=False)
def _negative(ctx, g):
    return (-g,)


@rule("positive", "copy", "astype", "real", "broadcast_to", inputs=False)
def _identity(ctx, g):
    # real: a real gradient for a complex input is the gradient of its real part
    return (g,)


@rule("conj", inputs=False)
def _conj(ctx, g):
    return (_cj(g),)


@rule("imag")
def _imag(ctx, g):
    (x,) = ctx.inputs
    if x._dtype.kind != dt.COMPLEX:
        return (_xp.zeros_like(g),)
    return (g * 1j,)


@rule("floor", "ceil", "trunc", "round", "floor_divide", inputs=False)
def _zero_grad(ctx, g):
    return tuple(None if m is None else _zeros(m[0], g) for m in ctx.input_meta)


@rule("sign")
def _sign(ctx, g):
    xp = _xp
    (x,) = ctx.inputs
    if x._dtype.kind != dt.COMPLEX:
        return (xp.zeros_like(g),)
    # d(z/|z|): (g - Re(g * conj(s)) * s) / |z|, zero at z = 0
    s = xp.sign(x)
    a = xp.abs(x)
    safe = xp.where(a == 0, 1.0, a)
    return (xp.where(a == 0, 0.0, (g - xp.real(g * xp.conj(s)) * s) / safe),)


@rule("abs")
def _abs(ctx, g):
    (x,) = ctx.inputs
    return (g * _xp.sign(x),)


@rule("square")
def _square(ctx, g):
    (x,) = ctx.inputs
    return (g * _cj(2 * x),)


@rule("reciprocal", inputs=False, output=True)
def _reciprocal(ctx, g):
    (out,) = ctx.outputs
    return (-g * _cj(out * out),)


@rule("exp", inputs=False, output=True)
def _exp(ctx, g):
    return (g * _cj(ctx.outputs[0]),)


@rule("expm1", inputs=False, output=True)
def _expm1(ctx, g):
    return (g * _cj(ctx.outputs[0] + 1),)


@rule("log")
def _log(ctx, g):
    return (g / _cj(ctx.inputs[0]),)


@rule("log1p")
def _log1p(ctx, g):
    return (g / _cj(ctx.inputs[0] + 1),)


@rule("log2")
def _log2(ctx, g):
    return (g / _cj(ctx.inputs[0] * math.log(2.0)),)


@rule("log10")
def _log10(ctx, g):
    return (g / _cj(ctx.inputs[0] * math.log(10.0)),)


@rule("sqrt", inputs=False, output=True)
def _sqrt(ctx, g):
    return (g / _cj(2 * ctx.outputs[0]),)


@rule("sin")
def _sin(ctx, g):
    return (g * _cj(_xp.cos(ctx.inputs[0])),)


@rule("cos")
def _cos(ctx, g):
    return (-g * _cj(_xp.sin(ctx.inputs[0])),)


@rule("tan", inputs=False, output=True)
def _tan(ctx, g):
    out = ctx.outputs[0]
    return (g * _cj(1 + out * out),)


@rule("asin")
def _asin(ctx, g):
    x = ctx.inputs[0]
    return (g / _cj(_xp.sqrt(1 - x * x)),)


@rule("acos")
def _acos(ctx, g):
    x = ctx.inputs[0]
    return (-g / _cj(_xp.sqrt(1 - x * x)),)


@rule("atan")
def _atan(ctx, g):
    x = ctx.inputs[0]
    return (g / _cj(1 + x * x),)


@rule("sinh")
def _sinh(ctx, g):
    return (g * _cj(_xp.cosh(ctx.inputs[0])),)


@rule("cosh")
def _cosh(ctx, g):
    return (g * _cj(_xp.sinh(ctx.inputs[0])),)


@rule("tanh", inputs=False, output=True)
def _tanh(ctx, g):
    out = ctx.outputs[0]
    return (g * _cj(1 - out * out),)


@rule("asinh")
def _asinh(ctx, g):
    x = ctx.inputs[0]
    return (g / _cj(_xp.sqrt(x * x + 1)),)


@rule("acosh")
def _acosh(ctx, g):
    xp = _xp
    x = ctx.inputs[0]
    return (g / _cj(xp.sqrt(x - 1) * xp.sqrt(x + 1)),)


@rule("atanh")
def _atanh(ctx, g):
    x = ctx.inputs[0]
    return (g / _cj(1 - x * x),)


@rule("add", inputs=False)
def _add(ctx, g):
    return (g, g)


@rule("subtract", inputs=False)
def _subtract(ctx, g):
    return (g, -g)


@rule("multiply")
def _multiply(ctx, g):
    x1, x2 = ctx.inputs
    return (g * _cj(x2), g * _cj(x1))


@rule("divide")
def _divide(ctx, g):
    x1, x2 = ctx.inputs
    g1 = g / _cj(x2)
    return (g1, -g1 * _cj(x1 / x2))


def _as_array(v, like: Array) -> Array:
    if isinstance(v, Array):
        return v
    return _xp.asarray(v, dtype=like.dtype, device=like.device)


@rule("pow", output=True)
def _pow(ctx, g):
    xp = _xp
    (out,) = ctx.outputs
    x1, x2 = (_as_array(v, out) for v in ctx.inputs)
    g1 = g2 = None
    if ctx.edges[0] is not None:
        # d/dx1 x1**x2 = x2 * x1**(x2 - 1); zero where x2 == 0 (also at x1 == 0)
        d1 = x2 * xp.pow(x1, x2 - 1)
        g1 = xp.where(x2 == 0, 0.0, g * _cj(d1))
    if ctx.edges[1] is not None:
        # d/dx2 x1**x2 = x1**x2 * log(x1); zero where x1 == 0 and x2 >= 0 (0**x2 is constant)
        safe = xp.where(x1 == 0, 1.0, x1)
        d2 = out * xp.log(safe)
        if out.dtype.kind == dt.COMPLEX:
            g2 = xp.where(x1 == 0, 0.0, g * _cj(d2))
        else:
            g2 = xp.where((x1 == 0) & (x2 >= 0), 0.0, g * d2)
    return (g1, g2)


def _minmax(ctx, g, better):
    xp = _xp
    x1, x2 = ctx.inputs
    a1 = _as_array(x1, g)
    a2 = _as_array(x2, g)
    # ties split the gradient evenly, as PyTorch's maximum/minimum do
    half = g / 2
    g1 = xp.where(better(a1, a2), g, xp.where(a1 == a2, half, 0.0))
    g2 = xp.where(better(a2, a1), g, xp.where(a1 == a2, half, 0.0))
    return (g1, g2)


@rule("maximum")
def _maximum(ctx, g):
    return _minmax(ctx, g, _xp.greater)


@rule("minimum")
def _minimum(ctx, g):
    return _minmax(ctx, g, _xp.less)


@rule("logaddexp", output=True)
def _logaddexp(ctx, g):
    xp = _xp
    x1, x2 = ctx.inputs
    (out,) = ctx.outputs
    return (g * xp.exp(x1 - out), g * xp.exp(x2 - out))


@rule("hypot", output=True)
def _hypot(ctx, g):
    x1, x2 = ctx.inputs
    (out,) = ctx.outputs
    return (g * x1 / out, g * x2 / out)


@rule("atan2")
def _atan2(ctx, g):
    x1, x2 = ctx.inputs
    denom = x1 * x1 + x2 * x2
    return (g * x2 / denom, -g * x1 / denom)


@rule("copysign", output=True)
def _copysign(ctx, g):
    xp = _xp
    x1 = ctx.inputs[0]
    (out,) = ctx.outputs
    a1 = _as_array(x1, out)
    ratio = xp.where(a1 == 0, 0.0, out / xp.where(a1 == 0, 1.0, a1))  # +-1, 0 at x1 = 0
    return (g * ratio, None)


@rule("remainder")
def _remainder(ctx, g):
    x1, x2 = ctx.inputs
    return (g, -g * _xp.floor_divide(x1, x2))


# -- reductions and scans -------------------------------------------------------------------------
def _expand_reduced(g: Array, ctx) -> tuple[Array, tuple]:
    """``g`` with the reduced axes put back as size-1 dimensions, and those axes."""
    shape = ctx.input_meta[0][0]
    axes = normalize_axes(ctx.params["axis"], len(shape), "backward")
    if not ctx.params["keepdims"] and axes:
        g = _xp.expand_dims(g, axis=axes)
    return g, axes


@rule("sum", inputs=False)
def _sum(ctx, g):
    g, _ = _expand_reduced(g, ctx)
    return (_xp.broadcast_to(g, ctx.input_meta[0][0]),)


@rule("var", output=True)
def _var(ctx, g):
    """d var / dx = 2 (x - mean) / (N - correction) (for complex x the same, in PyTorch's
    convention for a real function of complex input); std = sqrt(var): d std = d var / (2 std)."""
    xp = _xp
    (x,) = ctx.inputs
    g, axes = _expand_reduced(g, ctx)
    n = 1
    for a in axes:
        n *= x.shape[a]
    dof = n - ctx.params.get("correction", 0.0)
    dev = x - xp.mean(x, axis=axes, keepdims=True)
    if ctx.params.get("root", False):
        (out,) = ctx.outputs
        if not ctx.params["keepdims"] and axes:
            out = xp.expand_dims(out, axis=axes)
        return (g * dev / (out * dof) if dof > 0 else g * dev * math.nan,)
    return (g * dev * (2.0 / dof if dof > 0 else math.nan),)


def _exclusive_products(xr: Array) -> Array:
    """Product of all other elements along the last axis (exact with zeros): left * right
    exclusive cumulative products."""
    xp = _xp
    left = xp.cumulative_prod(xr, axis=-1, include_initial=True)[..., :-1]
    right = xp.flip(
        xp.cumulative_prod(xp.flip(xr, axis=-1), axis=-1, include_initial=True)[..., :-1],
        axis=-1,
    )
    return left * right


@rule("prod")
def _prod(ctx, g):
    xp = _xp
    (x,) = ctx.inputs
    g, axes = _expand_reduced(g, ctx)
    if not axes:
        return (g,)
    kept = [i for i in range(x.ndim) if i not in axes]
    order = tuple(kept + list(axes))
    xm = xp.permute_dims(x, order)
    kept_shape = tuple(x.shape[i] for i in kept)
    n = 1
    for a in axes:
        n *= x.shape[a]
    xr = xp.reshape(xm, kept_shape + (n,))
    others = _exclusive_products(xr)
    gr = xp.reshape(g, kept_shape + (1,)) * _cj(others)
    gm = xp.reshape(gr, xm.shape)
    inverse = tuple(sorted(range(x.ndim), key=lambda i: order[i]))
    return (xp.permute_dims(gm, inverse),)


@rule("max", "min", output=True)
def _max(ctx, g):
    xp = _xp
    (x,) = ctx.inputs
    (out,) = ctx.outputs
    g, axes = _expand_reduced(g, ctx)
    if not ctx.params["keepdims"] and axes:
        out = xp.expand_dims(out, axis=axes)
    # ties share the gradient evenly (PyTorch's amax/amin)
    mask = x == out
    count = xp.sum(xp.astype(mask, x.dtype), axis=axes, keepdims=True)
    return (xp.where(mask, g / count, 0.0),)


def _scan_body(ctx, g) -> tuple[Array, int]:
    shape = ctx.input_meta[0][0]
    axis = ctx.params["axis"]
    axis = normalize_axis(0 if axis is None else axis, len(shape), "backward")
    if ctx.params["include_initial"]:
        g = g[(slice(None),) * axis + (slice(1, None),)]
    return g, axis


def _reverse_cumsum(g: Array, axis: int) -> Array:
    xp = _xp
    return xp.flip(xp.cumulative_sum(xp.flip(g, axis=axis), axis=axis), axis=axis)


@rule("cumulative_sum", inputs=False)
def _cumulative_sum(ctx, g):
    g, axis = _scan_body(ctx, g)
    return (_reverse_cumsum(g, axis),)


@rule("cumulative_prod", output=True)
def _cumulative_prod(ctx, g):
    xp = _xp
    (x,) = ctx.inputs
    g, axis = _scan_body(ctx, g)
    out = ctx.outputs[0]
    if ctx.params["include_initial"]:
        out = out[(slice(None),) * axis + (slice(1, None),)]
    has_zero = x.device.type != "meta" and x.size and bool(xp.any(x == 0))
    if not has_zero:
        return (_reverse_cumsum(g * _cj(out), axis) / _cj(x),)
    # with zeros: d out_j / d x_i = prod_{k <= j, k != i} x_k for j >= i, an (n, n) table per row
    xm = xp.moveaxis(x, axis, -1)
    gm = xp.moveaxis(g, axis, -1)
    n = xm.shape[-1]
    eye = xp.eye(n, dtype=xp.bool, device=x.device)
    table = xp.where(eye, xp.ones((), dtype=x.dtype, device=x.device), xp.expand_dims(xm, axis=-2))
    partial = xp.cumulative_prod(table, axis=-1)  # [..., i, j]
    upper = xp.triu(xp.ones((n, n), dtype=xp.bool, device=x.device))
    terms = xp.where(upper, _cj(partial), 0.0) * xp.expand_dims(gm, axis=-2)
    return (xp.moveaxis(xp.sum(terms, axis=-1), -1, axis),)


# -- views and copies -----------------------------------------------------------------------------
@rule("reshape", "expand_dims", "squeeze", inputs=False)
def _reshape(ctx, g):
    return (_xp.reshape(g, ctx.input_meta[0][0]),)


@rule("permute_dims", inputs=False)
def _permute_dims(ctx, g):
    n = len(ctx.input_meta[0][0])
    axes = [normalize_axis(a, n, "backward") for a in ctx.params["axes"]]
    inverse = tuple(sorted(range(n), key=lambda i: axes[i]))
    return (_xp.permute_dims(g, inverse),)


@rule("flip", inputs=False)
def _flip(ctx, g):
    return (_xp.flip(g, axis=ctx.params.get("axis")),)


@rule("concat", inputs=False)
def _concat(ctx, g):
    xp = _xp
    axis = ctx.params.get("axis", 0)
    grads = []
    start = 0
    if axis is None:
        for shape, _, _ in ctx.input_meta:
            n = 1
            for s in shape:
                n *= s
            grads.append(xp.reshape(g[start : start + n], shape))
            start += n
        return tuple(grads)
    axis = normalize_axis(axis, g.ndim, "backward")
    for shape, _, _ in ctx.input_meta:
        n = shape[axis]
        grads.append(g[(slice(None),) * axis + (slice(start, start + n),)])
        start += n
    return tuple(grads)


@rule("where")
def _where(ctx, g):
    xp = _xp
    c = ctx.inputs[0]
    return (None, xp.where(c, g, 0.0), xp.where(c, 0.0, g))


@rule("triangle", inputs=False)
def _triangle(ctx, g):
    from ..dispatch import primitive

    return (primitive("triangle").call(g, k=ctx.params["k"], lower=ctx.params["lower"]),)


@rule("getitem", inputs=False)
def _getitem(ctx, g):
    gx = _zeros(ctx.input_meta[0][0], g)
    gx[ctx.params["key"]] = g
    return (gx,)


@rule("to_device", inputs=False)
def _to_device(ctx, g):
    return (g.to_device(ctx.input_meta[0][2]),)


def _windows_disjoint(shape: tuple, strides: tuple) -> bool:
    """True when no two elements of the window ``shape``/``strides`` are the same element: each
    dimension, taken by increasing stride, steps past everything the smaller ones span (a
    sufficient test; windows it cannot prove disjoint take the accumulating path)."""
    if 0 in shape:
        return True
    span = 1  # elements covered by the dimensions taken so far: max offset difference + 1
    for n, s in sorted(((n, abs(s)) for n, s in zip(shape, strides) if n != 1), key=lambda t: t[1]):
        if s < span:
            return False
        span += s * (n - 1)
    return True


@rule("as_strided", inputs=False)
def _as_strided(ctx, g):
    # the window reads the input's elements in C order: each element's gradient is the sum of g
    # over every window position that reads it (overlapping windows read some several times)
    p = ctx.params
    shape, strides, offset = p["shape"], p["strides"], p["offset"]
    in_shape = ctx.input_meta[0][0]
    if _windows_disjoint(shape, strides):
        gx = _zeros(in_shape, g)
        gx._view(shape, strides, offset)[...] = g
        return (gx,)
    from .._ops.searching import index_add

    xp = _xp
    positions = xp.asarray(offset, device=g.device)
    nd = len(shape)
    for d, (n, s) in enumerate(zip(shape, strides)):
        step = xp.arange(n, device=g.device) * s
        positions = positions + xp.reshape(step, tuple(n if i == d else 1 for i in range(nd)))
    size = math.prod(in_shape)
    flat = index_add(_zeros((size,), g), g, (xp.broadcast_to(positions, shape),))
    return (xp.reshape(flat, in_shape),)


@rule("setitem", inputs=False)
def _setitem(ctx, g):
    xp = _xp
    key = ctx.params["key"]
    gx = xp.asarray(g, copy=True)
    gx[key] = 0
    gv = g[key] if ctx.edges[1] is not None else None
    return (gx, gv)


@rule("setitem_strided", inputs=False)
def _setitem_strided(ctx, g):
    xp = _xp
    p = ctx.params
    gx = xp.asarray(g, copy=True)
    gx._view(p["shape"], p["strides"], p["offset"])[...] = 0
    gv = None
    if ctx.edges[1] is not None:
        from .._ops.manipulation import as_strided

        gv = as_strided(g, p["shape"], p["strides"], p["offset"])
    return (gx, gv)


# -- indexing and sorting -------------------------------------------------------------------------
@rule("getitem_arrays", inputs=False)
def _getitem_arrays(ctx, g):
    from .._ops.searching import index_add

    gx = _zeros(ctx.input_meta[0][0], g)
    return (index_add(gx, g, ctx.params["key"]),)


@rule("mask_select", inputs=True)
def _mask_select(ctx, g):
    from .._ops.searching import index_add

    x, mask = ctx.inputs
    return (index_add(_zeros(x.shape, g), g, (mask,)), None)


@rule("index_add", inputs=False)
def _index_add(ctx, g):
    from .._ops.searching import getitem_arrays

    gv = getitem_arrays(g, ctx.params["key"]) if ctx.edges[1] is not None else None
    return (g, gv)


@rule("take", inputs=True)
def _take(ctx, g):
    from .._ops.searching import index_add

    xp = _xp
    x, indices = ctx.inputs
    axis = ctx.params.get("axis")
    axis = 0 if axis is None else normalize_axis(axis, x.ndim, "backward")
    zeros = _zeros(xp.moveaxis(x, axis, 0).shape, g)
    moved = index_add(zeros, xp.moveaxis(g, axis, 0), (indices,))
    return (xp.moveaxis(moved, 0, axis), None)


def _along_axis_grad(shape: tuple, indices: Array, g: Array, axis: int) -> Array:
    """The gradient of take_along_axis(x, indices, axis) for x of ``shape``: ``g`` accumulated
    at the gathered positions."""
    from .._ops.searching import index_add

    xp = _xp
    nd = len(shape)
    key = []
    for d in range(nd):
        if d == axis:
            key.append(indices)
            continue
        n = g.shape[d]
        coords = xp.arange(n, device=g.device) if shape[d] == n else xp.zeros(n, dtype=xp.int64)
        key.append(xp.reshape(coords, tuple(n if i == d else 1 for i in range(nd))))
    return index_add(_zeros(shape, g), g, tuple(key))


@rule("take_along_axis", inputs=True)
def _take_along_axis(ctx, g):
    x, indices = ctx.inputs
    axis = normalize_axis(ctx.params.get("axis", -1), x.ndim, "backward")
    return (_along_axis_grad(x.shape, indices, g, axis), None)


@rule("sort")
def _sort(ctx, g):
    xp = _xp
    (x,) = ctx.inputs
    axis = normalize_axis(ctx.params.get("axis", -1), x.ndim, "backward")
    order = xp.argsort(x, axis=axis, descending=ctx.params.get("descending", False))
    return (_along_axis_grad(x.shape, order, g, axis),)


# -- matrix products ------------------------------------------------------------------------------
@rule("matmul")
def _matmul(ctx, g):
    xp = _xp
    a, b = ctx.inputs
    ca, cb = _cj(a), _cj(b)
    if a.ndim == 1 and b.ndim == 1:
        return (g * cb, g * ca)
    if a.ndim == 1:  # (k) @ (..., k, n) -> (..., n)
        g2 = xp.expand_dims(g, axis=-2)  # (..., 1, n)
        ga = xp.matmul(g2, xp.matrix_transpose(cb))[..., 0, :]
        gb = xp.expand_dims(ca, axis=-1) * g2
        return (ga, gb)
    if b.ndim == 1:  # (..., m, k) @ (k) -> (..., m)
        g2 = xp.expand_dims(g, axis=-1)  # (..., m, 1)
        ga = g2 * cb
        gb = xp.matmul(xp.matrix_transpose(ca), g2)[..., 0]
        return (ga, gb)
    # only the products an input needs: the data operand of a layer often has no gradient
    ga = xp.matmul(g, xp.matrix_transpose(cb)) if ctx.edges[0] is not None else None
    gb = xp.matmul(xp.matrix_transpose(ca), g) if ctx.edges[1] is not None else None
    return (ga, gb)


# -- the fft extension's primitives ---------------------------------------------------------------
# the adjoint of a transform is the transform the other way with the other normalisation
@rule("fft_c2c", inputs=False)
def _fft_c2c(ctx, g):
    from .._ops.fft import _SWAPPED, _c2c

    p = ctx.params
    return (_c2c(g, p["axes"], not p["inverse"], _SWAPPED[p["norm"]]),)


@rule("fft_r2c", inputs=False)
def _fft_r2c(ctx, g):
    from .._ops.fft import _SWAPPED, _c2c, _resize

    p = ctx.params
    last = p["axes"][-1]
    if p["inverse"]:  # the conjugate of the forward r2c with the norm swapped
        g, norm = _xp.conj(g), p["norm"]
    else:
        norm = _SWAPPED[p["norm"]]
    full = _resize(g, last, ctx.input_meta[0][0][last])  # the discarded half gets no gradient
    return (_c2c(full, p["axes"], True, norm),)  # the engine keeps Re


@rule("fft_c2r", inputs=False)
def _fft_c2r(ctx, g):
    from .._ops.fft import _SWAPPED, _r2c

    xp = _xp
    p = ctx.params
    last, n = p["axes"][-1], p["n"]
    forward = p["forward"]
    # the forward c2r is the inverse one of the conjugate, with the normalisation swapped
    gi = _r2c(g, p["axes"], p["norm"] if forward else _SWAPPED[p["norm"]])
    m = gi.shape[last]
    # entries 1 .. n - m stand for two mirrored (conjugate) coefficients each: double them
    weights = xp.ones(m, dtype=xp.real(gi).dtype, device=g.device)
    if n - m > 0:
        with_mirror = xp.concat([weights[:1], weights[1 : n - m + 1] * 2, weights[n - m + 1 :]])
        weights = with_mirror
    shape = tuple(m if i == last else 1 for i in range(gi.ndim))
    gi = gi * xp.reshape(weights, shape)
    return (xp.conj(gi) if forward else gi,)


# -- the linalg extension -------------------------------------------------------------------------
# Rules follow PyTorch's derivations (linalg backward formulas); spectral rules assume distinct
# eigen/singular values, as every implementation does.
def _mH(a: Array) -> Array:
    return _cj(_xp.matrix_transpose(a))


def _diag_embed(v: Array) -> Array:
    """Stacks of diagonal matrices with ``v`` (..., n) on the diagonal."""
    xp = _xp
    n = v.shape[-1]
    eye = xp.eye(n, dtype=v.dtype, device=v.device)
    return xp.expand_dims(v, axis=-1) * eye


def _with_diagonal(a: Array, d: Array) -> Array:
    """``a`` with its diagonal replaced by ``d`` (a composition, so it is differentiable)."""
    xp = _xp
    n = a.shape[-1]
    eye = xp.eye(n, dtype=xp.bool, device=a.device)
    return xp.where(eye, xp.expand_dims(d, axis=-1), a)


@rule("diagonal", inputs=False)
def _diagonal(ctx, g):
    xp = _xp
    gx = _zeros(ctx.input_meta[0][0], g)
    xp.linalg.diagonal(gx, offset=ctx.params.get("offset", 0))[...] = g
    return (gx,)


@rule("euclidean_norm", output=True)
def _euclidean_norm(ctx, g):
    xp = _xp
    (x,) = ctx.inputs
    (norm,) = ctx.outputs
    axes = ctx.params["axes"]
    if not ctx.params["keepdims"] and axes:
        g, norm = xp.expand_dims(g, axis=axes), xp.expand_dims(norm, axis=axes)
    safe = xp.where(norm == 0, 1.0, norm)
    return (xp.where(norm == 0, 0.0, g / safe) * x,)


@rule("inv", inputs=False, output=True)
def _inv(ctx, g):
    b = _mH(ctx.outputs[0])
    return (-(b @ g @ b),)


@rule("det", output=True)
def _det(ctx, g):
    xp = _xp
    (a,) = ctx.inputs
    (d,) = ctx.outputs
    # d det = det * tr(A^-1 dA): the gradient is g * conj(det) * A^-H
    scale = xp.expand_dims(xp.expand_dims(g * _cj(d), axis=-1), axis=-1)
    return (scale * _mH(xp.linalg.inv(a)),)


@rule("slogdet", output=True)
def _slogdet(ctx, g_sign, g_logabs):
    xp = _xp
    (a,) = ctx.inputs
    sign, _ = ctx.outputs
    if g_logabs is None:
        g_logabs = xp.zeros_like(_xp.real(sign) if sign.dtype.kind == dt.COMPLEX else sign)
    weight = g_logabs
    if a.dtype.kind == dt.COMPLEX and g_sign is not None:
        # sign = exp(i Im log det): its gradient rotates by i
        weight = weight - 1j * xp.imag(_cj(g_sign) * sign)
    scale = xp.expand_dims(xp.expand_dims(weight, axis=-1), axis=-1)
    return (scale * _mH(xp.linalg.inv(a)),)


@rule("solve", output=True)
def _solve(ctx, g):
    xp = _xp
    a, b = ctx.inputs
    (x,) = ctx.outputs
    vector = b.ndim == 1
    if vector:
        g = xp.expand_dims(g, axis=-1)
        x = xp.expand_dims(x, axis=-1)
    gb = xp.linalg.solve(_mH(a), g)
    ga = -(gb @ _mH(x))
    return (ga, gb[..., 0] if vector else gb)


@rule("cholesky", inputs=False, output=True)
def _cholesky(ctx, g):
    xp = _xp
    (factor,) = ctx.outputs
    upper = ctx.params.get("upper", False)
    low = _mH(factor) if upper else factor
    gl = _mH(g) if upper else g
    # gA = sym(L^-H Phi(L^H gL) L^-1), Phi: lower triangle with the diagonal halved
    phi = xp.tril(_mH(low) @ gl)
    phi = _with_diagonal(phi, xp.linalg.diagonal(phi) * 0.5)
    l_inv = xp.linalg.inv(low)
    ga = _mH(l_inv) @ phi @ l_inv
    return ((ga + _mH(ga)) * 0.5,)


def _eig_grad(gw, gv, w, v, hermitian: bool):
    """The gradient of an eigendecomposition A = V diag(w) V^-1 (PyTorch's formula)."""
    xp = _xp
    if gv is None:
        ga = _diag_embed(gw)
        return v @ ga @ _mH(v) if hermitian else xp.linalg.solve(_mH(v), ga @ _mH(v))
    vhgv = _mH(v) @ gv
    if hermitian:
        vhgv = (vhgv - _mH(vhgv)) * 0.5
    else:
        diag = xp.real(xp.linalg.diagonal(vhgv))
        vhgv = vhgv - _mH(v) @ (v * xp.expand_dims(diag, axis=-2))
    gaps = xp.expand_dims(w, axis=-2) - xp.expand_dims(w, axis=-1)  # w_j - w_i
    n = w.shape[-1]
    eye = xp.eye(n, dtype=xp.bool, device=w.device)
    gaps = xp.where(eye, xp.ones((), dtype=gaps.dtype, device=w.device), gaps)
    ga = vhgv / (gaps if hermitian else _cj(gaps))
    if gw is not None:
        ga = _with_diagonal(ga, xp.astype(gw, ga.dtype))
    return v @ ga @ _mH(v) if hermitian else xp.linalg.solve(_mH(v), ga @ _mH(v))


@rule("eigh", "eig", inputs=False, output=True)
def _eig(ctx, gw, gv):
    w, v = ctx.outputs
    if gw is None and gv is None:
        return (None,)
    return (_eig_grad(gw, gv, w, v, hermitian=ctx.name == "eigh"),)


@rule("eigvalsh", "eigvals")
def _eigvals(ctx, g):
    hermitian = ctx.name == "eigvalsh"
    decompose = _xp.linalg.eigh if hermitian else _xp.linalg.eig
    w, v = decompose(ctx.inputs[0])
    return (_eig_grad(g, None, w, v, hermitian=hermitian),)


def _svd_grad(gu, gs, gvh, u, s, vh):
    """The gradient of a reduced SVD A = U diag(S) Vh (PyTorch's svd_backward)."""
    xp = _xp
    m, n = u.shape[-2], vh.shape[-1]
    k = s.shape[-1]
    if gu is None and gvh is None:
        gs_row = xp.astype(xp.expand_dims(gs, axis=-2), u.dtype)
        return (u * gs_row) @ vh
    s_c = xp.astype(s, u.dtype)
    s_row, s_col = xp.expand_dims(s_c, axis=-2), xp.expand_dims(s_c, axis=-1)
    s2 = s * s
    gaps = xp.expand_dims(s2, axis=-2) - xp.expand_dims(s2, axis=-1)  # S_j^2 - S_i^2
    eye = xp.eye(k, dtype=xp.bool, device=s.device)
    gaps = xp.astype(xp.where(eye, xp.ones((), dtype=s.dtype, device=s.device), gaps), u.dtype)
    uhgu = None
    if gu is not None:
        uhgu = _mH(u) @ gu
        uhgu = uhgu - _mH(uhgu)
    if gvh is not None:
        vhgv = vh @ _mH(gvh)
        vhgv = vhgv - _mH(vhgv)
    if gu is not None and gvh is not None:
        ga = (uhgu * s_row + s_col * vhgv) / gaps
    elif gu is None:
        ga = s_col * (vhgv / gaps)
    else:
        ga = (uhgu / gaps) * s_row
    if gs is not None:
        ga = ga + _diag_embed(xp.astype(gs, u.dtype))
    if u.dtype.kind == dt.COMPLEX and gu is not None:
        ga = ga + _diag_embed(xp.linalg.diagonal(uhgu) / (2 * s_c))
    if m > n and gu is not None:
        ga = u @ ga
        gu_sinv = gu / s_row
        ga = ga + gu_sinv - u @ (_mH(u) @ gu_sinv)
        return ga @ vh
    if m < n and gvh is not None:
        ga = ga @ vh
        sinv_gvh = gvh / s_col
        ga = ga + sinv_gvh - (sinv_gvh @ _mH(vh)) @ vh
        return u @ ga
    return u @ ga @ vh


@rule("svd", inputs=False, output=True)
def _svd(ctx, gu, gs, gvh):
    u, s, vh = ctx.outputs
    k = s.shape[-1]
    if u.shape[-1] != k or vh.shape[-2] != k:
        # full_matrices: the extra columns of U (rows of Vh) span the null spaces, which the
        # input does not determine uniquely; gradients reaching them are dropped
        u, vh = u[..., :k], vh[..., :k, :]
        gu = None if gu is None else gu[..., :k]
        gvh = None if gvh is None else gvh[..., :k, :]
    if gu is None and gs is None and gvh is None:
        return (None,)
    return (_svd_grad(gu, gs, gvh, u, s, vh),)


@rule("svdvals")
def _svdvals(ctx, g):
    u, s, vh = _xp.linalg.svd(ctx.inputs[0], full_matrices=False)
    return (_svd_grad(None, g, None, u, s, vh),)


def _copyltu(m: Array) -> Array:
    """The Hermitian matrix whose lower triangle (real diagonal) is that of ``m``."""
    xp = _xp
    low = xp.tril(m, k=-1)
    return low + _mH(low) + _diag_embed(xp.astype(xp.real(xp.linalg.diagonal(m)), m.dtype))


def _qr_square_or_tall(gq, gr, q, r):
    xp = _xp
    gq = xp.zeros_like(q) if gq is None else gq
    gr = xp.zeros_like(r) if gr is None else gr
    m = r @ _mH(gr) - _mH(gq) @ q
    b = gq + q @ _copyltu(m)
    # b @ R^-H, as the solution of R X^H = B^H
    return _mH(xp.linalg.solve(r, _mH(b)))


@rule("qr", inputs=True, output=True)
def _qr(ctx, gq, gr):
    xp = _xp
    (a,) = ctx.inputs
    q, r = ctx.outputs
    m, n = a.shape[-2], a.shape[-1]
    if gq is None and gr is None:
        return (None,)
    if m > n and ctx.params.get("mode", "reduced") == "complete":
        raise RuntimeError(
            "qr: the decomposition is not differentiable with mode='complete' and more rows "
            "than columns (the extra columns of Q are not unique); use mode='reduced'"
        )
    if m >= n:
        return (_qr_square_or_tall(gq, gr, q, r),)
    # wide: A = Q [R1 R2] with X = Q R1 square
    y = a[..., :, m:]
    gr = xp.zeros_like(r) if gr is None else gr
    gq = xp.zeros_like(q) if gq is None else gq
    gr1, gr2 = gr[..., :, :m], gr[..., :, m:]
    gy = q @ gr2
    gx = _qr_square_or_tall(gq + y @ _mH(gr2), gr1, q, r[..., :, :m])
    return (xp.concat([gx, gy], axis=-1),)


# creation primitives take no arrays: nothing to differentiate
not_differentiable(
    "empty", "fill", "full", "arange", "linspace", "export", "import_host",
    "import_device",
)  # fmt: skip
# clip's fused kernel runs only untracked: clip() composes maximum and minimum when recording
not_differentiable("clip")
# so does the fused dot: vecdot composes multiply and sum when recording, and the euclidean
# norm's composite has its own rule
not_differentiable("dot")
not_differentiable("cross")
# unique_all/unique_inverse run it untracked only: a tracked input takes the composition
not_differentiable("unique_runs")
# repeat's kernel with per-element counts runs untracked only: a tracked input is gathered by
# the run-length index (take's rule)
not_differentiable("repeat_counts")

#: kernels that only run inside a recorded function, whose rule covers them
COVERED_BY = {
    "gather": "getitem_arrays",
    "scatter": "setitem",
    "mask_fill": "setitem",
    "scatter_add": "index_add",
    "linalg_cholesky": "cholesky",
    "linalg_inv": "inv",
    "linalg_solve": "solve",
    "linalg_det": "det",
    "linalg_slogdet": "slogdet",
    "linalg_eigh": "eigh",
    "linalg_eig": "eig",
    "linalg_svd": "svd",
    "linalg_qr": "qr",
}


def attach() -> set[str]:
    """Fill each primitive's ``vjp`` slot from the rules; returns the names still undecided."""
    undecided = set()
    for name, prim in primitives().items():
        r = RULES.get(COVERED_BY.get(name, name))
        if r is None:
            undecided.add(name)
        else:
            prim.vjp = r
    return undecided


attach()
