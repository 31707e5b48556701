"""Core functional ops of ``strided.nn.functional``: linear/bilinear, activations, softmax,
dropout, embedding, one_hot (PyTorch's names, signatures and semantics).

The hot ones are :class:`strided.autograd.Function` subclasses: one node on the tape each, a
hand-written backward that computes only the gradients that are needed (``linear`` does one
GEMM forward, at most two backward, and never copies the transposed weight), and numerically
stable formulas (``log_softmax`` by the log-sum-exp, ``sigmoid`` without overflow).  Everything
is written with namespace functions, so it runs on every device, meta included.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from .. import _device
from .. import _dtypes as dt
from .. import _namespace as xp
from .. import random as _random
from .._array import Array
from ..autograd import Function, no_grad

__all__ = [
    "linear",
    "bilinear",
    "relu",
    "relu_",
    "leaky_relu",
    "elu",
    "gelu",
    "silu",
    "mish",
    "sigmoid",
    "tanh",
    "hardtanh",
    "relu6",
    "softplus",
    "logsigmoid",
    "prelu",
    "hardsigmoid",
    "hardswish",
    "glu",
    "selu",
    "celu",
    "softsign",
    "tanhshrink",
    "threshold",
    "softmax",
    "softmin",
    "log_softmax",
    "dropout",
    "dropout1d",
    "dropout2d",
    "dropout3d",
    "embedding",
    "one_hot",
    "normalize",
    "cosine_similarity",
    "pairwise_distance",
]


def _check_array(x, fn: str, name: str = "input") -> None:
    if not isinstance(x, Array):
        raise TypeError(
            f"{fn}(): argument '{name}' must be a strided array, not {type(x).__name__}"
        )


def _check_float(x: Array, fn: str, name: str = "input") -> None:
    _check_array(x, fn, name)
    if x.dtype.kind not in dt.FLOAT_KINDS:
        raise TypeError(
            f"{fn}(): expected a floating point {name}, got dtype {x.dtype.name} (shape {x.shape})"
        )


# Dense constants, cached per (shape, dtype, device, value) and never handed out: on cpu an
# elementwise op between two dense arrays runs the vectorised loop, while a Python-scalar or
# broadcast operand takes a strided loop that is several times slower on mid-sized arrays
# (64x256 float32: maximum(x, 0.0) ~14 us, maximum(x, zeros) ~2 us), and the bias gradient is
# faster as a ones-row GEMM than as a sum over axis 0.
_CONSTANTS: dict = _device.array_cache()


def _const(shape: tuple, dtype, device, value: float) -> Array:
    key = (shape, dtype, device, value)
    c = _CONSTANTS.get(key)
    if c is None:
        if len(_CONSTANTS) >= 64:
            _CONSTANTS.clear()
        c = _CONSTANTS[key] = xp.full(shape, value, dtype=dtype, device=device)
    return c


# -- linear -----------------------------------------------------------------------------------
def _transposed(w: Array) -> Array:
    """The transpose of 2-D ``w`` as a plain view (``w.mT`` of a parameter dispatches a
    permute_dims op, since the parameter tracks gradients; inside a Function's forward nothing
    is recorded, so the view can be made directly)."""
    st = w._strides
    return w._view((w._shape[1], w._shape[0]), (st[1], st[0]), w._offset)


class _Linear(Function):
    """y = x @ W.T + b over the last dimension of x (leading dimensions are flattened into one
    GEMM when x is contiguous)."""

    @staticmethod
    def forward(ctx, x, weight, bias):
        in_f = weight.shape[1]
        lead = x.shape[:-1]
        x2 = x if x.ndim == 2 else xp.reshape(x, (-1, in_f))
        out = xp.matmul(x2, _transposed(weight))  # BLAS reads the view transposed: no copy
        if bias is not None:
            out = xp.add(out, bias)
        ctx.save_for_backward(x2, weight)
        ctx.x_shape = x.shape
        ctx.has_bias = bias is not None
        if x.ndim != 2:
            out = xp.reshape(out, (*lead, weight.shape[0]))
        return out

    @staticmethod
    def backward(ctx, g):
        x2, weight = ctx.saved_tensors
        need_x, need_w, need_b = ctx.needs_input_grad
        g2 = g if g.ndim == 2 else xp.reshape(g, (-1, weight.shape[0]))
        gx = gw = gb = None
        if need_x:
            gx = xp.matmul(g2, weight)
            if len(ctx.x_shape) != 2:
                gx = xp.reshape(gx, ctx.x_shape)
        if need_w:
            gw = xp.matmul(g2.mT, x2)
        if need_b and ctx.has_bias:
            ones = _const((1, g2.shape[0]), g2.dtype, g2.device, 1)
            gb = xp.reshape(xp.matmul(ones, g2), (g2.shape[1],))
        return gx, gw, gb


def linear(input: Array, weight: Array, bias: Array | None = None) -> Array:
    """``input @ weight.T + bias``: input (*, in_features), weight (out_features, in_features),
    bias (out_features,)."""
    if input.__class__ is not Array or weight.ndim != 2 or input.ndim < 1:
        _check_float(input, "linear")
        _check_float(weight, "linear", "weight")
        if weight.ndim != 2:
            raise RuntimeError(
                f"linear: weight must be 2-D (out_features, in_features), got shape {weight.shape}"
            )
        if input.ndim < 1:
            raise RuntimeError("linear: input must have at least 1 dimension, got a 0-d array")
    if input.shape[-1] != weight.shape[1] or input.dtype is not weight.dtype:
        _linear_error(input, weight, "linear")
    if bias is not None and (bias.shape != (weight.shape[0],) or bias.dtype is not weight.dtype):
        raise RuntimeError(
            f"linear: bias must have shape ({weight.shape[0]},) and dtype {weight.dtype.name} "
            f"(out_features of weight {weight.shape}), got shape {bias.shape} and dtype "
            f"{bias.dtype.name}"
        )
    if input.ndim == 1:
        out = _Linear.apply(xp.reshape(input, (1, -1)), weight, bias)
        return xp.reshape(out, (weight.shape[0],))
    return _Linear.apply(input, weight, bias)


def _linear_error(input: Array, weight: Array, who: str) -> None:
    if input.shape[-1] != weight.shape[1]:
        raise RuntimeError(
            f"{who}: input of shape {input.shape} has {input.shape[-1]} features in its last "
            f"dimension, but in_features is {weight.shape[1]} (weight of shape {weight.shape})"
        )
    raise TypeError(
        f"{who}: input dtype {input.dtype.name} differs from weight dtype {weight.dtype.name}; "
        "cast the input (x.astype) or the module (module.to(dtype))"
    )


def bilinear(input1: Array, input2: Array, weight: Array, bias: Array | None = None) -> Array:
    """``y[..., k] = input1 @ weight[k] @ input2 + bias[k]``: input1 (*, in1), input2 (*, in2),
    weight (out, in1, in2)."""
    for a, n in ((input1, "input1"), (input2, "input2"), (weight, "weight")):
        _check_float(a, "bilinear", n)
    if weight.ndim != 3:
        raise RuntimeError(f"bilinear: weight must be 3-D (out, in1, in2), got {weight.shape}")
    out_f, in1, in2 = weight.shape
    if input1.shape[-1] != in1 or input2.shape[-1] != in2 or input1.shape[:-1] != input2.shape[:-1]:
        raise RuntimeError(
            f"bilinear: input1 {input1.shape} and input2 {input2.shape} must agree in their "
            f"leading dimensions and end in in1_features={in1} and in2_features={in2} (weight "
            f"{weight.shape})"
        )
    lead = input1.shape[:-1]
    a = xp.reshape(input1, (-1, in1))
    b = xp.reshape(input2, (-1, in2))
    # (N, in1) @ (in1, out * in2) -> (N, out, in2), then contract in2 with input2
    w = xp.reshape(xp.permute_dims(weight, (1, 0, 2)), (in1, out_f * in2))
    t = xp.reshape(xp.matmul(a, w), (-1, out_f, in2))
    y = xp.sum(t * xp.expand_dims(b, axis=1), axis=-1)
    if bias is not None:
        y = y + bias
    return xp.reshape(y, (*lead, out_f))


# -- activations ------------------------------------------------------------------------------
class _ReLU(Function):
    @staticmethod
    def forward(ctx, x):
        y = xp.maximum(x, _const(x.shape, x.dtype, x.device, 0))
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        # y >= 0, so sign(y) is the 0/1 mask (two dense ops; where() with a scalar is slower)
        return g * xp.sign(y)


def relu(input: Array, inplace: bool = False) -> Array:
    """max(x, 0) (NaN stays NaN)."""
    if input.__class__ is not Array:
        _check_array(input, "relu")
    if input.dtype.kind not in dt.FLOAT_KINDS:
        return xp.maximum(input, 0)
    y = _ReLU.apply(input)
    return _inplace(input, y) if inplace else y


def relu_(input: Array) -> Array:
    """relu written into ``input``."""
    return relu(input, inplace=True)


def _inplace(x: Array, y: Array) -> Array:
    x[...] = y
    return x


def leaky_relu(input: Array, negative_slope: float = 0.01, inplace: bool = False) -> Array:
    """x where x > 0, negative_slope * x elsewhere."""
    _check_float(input, "leaky_relu")
    y = xp.where(input > 0, input, input * negative_slope)
    return _inplace(input, y) if inplace else y


def elu(input: Array, alpha: float = 1.0, inplace: bool = False) -> Array:
    """x where x > 0, alpha * (exp(x) - 1) elsewhere."""
    _check_float(input, "elu")
    pos = input > 0
    # where() rather than minimum(): the gradient at 0 is alpha (PyTorch's), not split at a tie
    y = xp.where(pos, input, alpha * xp.expm1(xp.where(pos, 0.0, input)))
    return _inplace(input, y) if inplace else y


def hardtanh(
    input: Array, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False
) -> Array:
    """x clipped to [min_val, max_val]."""
    _check_float(input, "hardtanh")
    if min_val > max_val:
        raise ValueError("hardtanh: min_val cannot be greater than max_val")
    y = _Hardtanh.apply(input, min_val, max_val)
    return _inplace(input, y) if inplace else y


class _Hardtanh(Function):
    @staticmethod
    def forward(ctx, x, lo, hi):
        ctx.save_for_backward(x)
        ctx.lo, ctx.hi = lo, hi
        return xp.clip(x, lo, hi)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        # PyTorch's: no gradient at the bounds themselves
        return xp.where((x > ctx.lo) & (x < ctx.hi), g, 0.0), None, None


def relu6(input: Array, inplace: bool = False) -> Array:
    """min(max(x, 0), 6)."""
    return hardtanh(input, 0.0, 6.0, inplace)


def _sigmoid_value(x: Array) -> Array:
    # exp(-|x|) never overflows: sigmoid(x) = 1/(1+e) for x >= 0, e/(1+e) for x < 0
    e = xp.exp(-xp.abs(x))
    r = 1.0 / (1.0 + e)
    return xp.where(x >= 0, r, e * r)


class _Sigmoid(Function):
    @staticmethod
    def forward(ctx, x):
        y = _sigmoid_value(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return g * y * (1.0 - y)


def sigmoid(input: Array) -> Array:
    """1 / (1 + exp(-x)), computed without overflow."""
    _check_float(input, "sigmoid")
    return _Sigmoid.apply(input)


def tanh(input: Array) -> Array:
    """Hyperbolic tangent."""
    _check_float(input, "tanh")
    return xp.tanh(input)


class _SiLU(Function):
    @staticmethod
    def forward(ctx, x):
        s = _sigmoid_value(x)
        ctx.save_for_backward(x, s)
        return x * s

    @staticmethod
    def backward(ctx, g):
        x, s = ctx.saved_tensors
        return g * (s * (1.0 + x * (1.0 - s)))


def silu(input: Array, inplace: bool = False) -> Array:
    """x * sigmoid(x)."""
    _check_float(input, "silu")
    y = _SiLU.apply(input)
    return _inplace(input, y) if inplace else y


def softplus(input: Array, beta: float = 1.0, threshold: float = 20.0) -> Array:
    """log(1 + exp(beta * x)) / beta, linear where beta * x > threshold."""
    _check_float(input, "softplus")
    bx = input * beta
    soft = (xp.maximum(bx, 0.0) + xp.log1p(xp.exp(-xp.abs(bx)))) / beta
    return xp.where(bx > threshold, input, soft)


def logsigmoid(input: Array) -> Array:
    """log(sigmoid(x)) = min(x, 0) - log1p(exp(-|x|)), stable for large |x|."""
    _check_float(input, "logsigmoid")
    return xp.minimum(input, 0.0) - xp.log1p(xp.exp(-xp.abs(input)))


def mish(input: Array, inplace: bool = False) -> Array:
    """x * tanh(softplus(x))."""
    y = input * xp.tanh(softplus(input))
    return _inplace(input, y) if inplace else y


def prelu(input: Array, weight: Array) -> Array:
    """x where x > 0, weight * x elsewhere; ``weight`` has one slope, or one per channel
    (dimension 1 of the input)."""
    _check_float(input, "prelu")
    _check_float(weight, "prelu", "weight")
    if weight.ndim != 1:
        raise RuntimeError(f"prelu: weight must be 1-D, got shape {weight.shape}")
    w = weight
    if weight.shape[0] != 1:
        if input.ndim < 2 or input.shape[1] != weight.shape[0]:
            raise RuntimeError(
                f"prelu: weight of shape {weight.shape} has one slope per channel, but input of "
                f"shape {input.shape} has {input.shape[1] if input.ndim >= 2 else 1} channels "
                "(dimension 1)"
            )
        w = xp.reshape(weight, (weight.shape[0],) + (1,) * (input.ndim - 2))
    elif input.ndim == 0:
        w = xp.reshape(weight, ())
    return xp.where(input > 0, input, w * input)


def hardsigmoid(input: Array, inplace: bool = False) -> Array:
    """0 for x <= -3, 1 for x >= 3, x/6 + 1/2 between."""
    _check_float(input, "hardsigmoid")
    y = _Hardtanh.apply(input + 3.0, 0.0, 6.0) / 6.0  # PyTorch's rounding: relu6(x + 3) / 6
    return _inplace(input, y) if inplace else y


class _Hardswish(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * xp.clip(x + 3.0, 0.0, 6.0) / 6.0

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        # PyTorch's: 0 below -3, (2x + 3)/6 on [-3, 3], 1 above
        inner = g * ((2.0 * x + 3.0) / 6.0)
        return xp.where(x < -3.0, 0.0, xp.where(x <= 3.0, inner, g))


def hardswish(input: Array, inplace: bool = False) -> Array:
    """x * relu6(x + 3) / 6."""
    _check_float(input, "hardswish")
    y = _Hardswish.apply(input)
    return _inplace(input, y) if inplace else y


def glu(input: Array, dim: int = -1) -> Array:
    """a * sigmoid(b), where a and b are the two halves of ``input`` along ``dim``."""
    _check_float(input, "glu")
    if input.ndim == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    n = input.ndim
    if not -n <= dim < n:
        raise IndexError(f"glu: Dimension out of range (expected [{-n}, {n - 1}], got {dim})")
    d = dim % n
    size = input.shape[d]
    if size % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {d} is size {size}")
    half = size // 2
    lo = (slice(None),) * d + (slice(0, half),)
    hi = (slice(None),) * d + (slice(half, size),)
    return input[lo] * sigmoid(input[hi])


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def selu(input: Array, inplace: bool = False) -> Array:
    """scale * elu(x, alpha) with the self-normalising constants."""
    y = _SELU_SCALE * elu(input, _SELU_ALPHA)
    return _inplace(input, y) if inplace else y


def celu(input: Array, alpha: float = 1.0, inplace: bool = False) -> Array:
    """x where x > 0, alpha * (exp(x / alpha) - 1) elsewhere."""
    _check_float(input, "celu")
    if alpha == 0:
        raise ValueError("ZeroDivisionError: alpha cannot be 0 for CELU")
    pos = input > 0
    y = xp.where(pos, input, alpha * xp.expm1(xp.where(pos, 0.0, input) / alpha))
    return _inplace(input, y) if inplace else y


def softsign(input: Array) -> Array:
    """x / (1 + |x|)."""
    _check_float(input, "softsign")
    return input / (1.0 + xp.abs(input))


def tanhshrink(input: Array) -> Array:
    """x - tanh(x)."""
    _check_float(input, "tanhshrink")
    return input - xp.tanh(input)


def threshold(input: Array, threshold: float, value: float, inplace: bool = False) -> Array:
    """x where x > threshold, ``value`` elsewhere."""
    _check_float(input, "threshold")
    y = xp.where(input > threshold, input, value)
    return _inplace(input, y) if inplace else y


# erfc for the exact GELU (the namespace has no erf).  Both forms are erfc(a) = t * exp(-a^2 +
# P(t)) with t = 1 / (1 + a/2), a >= 0.  float32: the Numerical Recipes degree-9 polynomial
# (fractional error < 1.2e-7, float32's precision).  float64: a degree-22 Chebyshev series in
# u = 2t - 1, least-squares fitted to log(erfc(a)/t) + a^2 computed at 40 digits (relative error
# < 7e-14 over the whole range, where erfc does not underflow).
_ERFC_NR = (
    -1.26551223, 1.00002368, 0.37409196, 0.09678418, -0.18628806,
    0.27886807, -1.13520398, 1.48851587, -0.82215223, 0.17087277,
)  # fmt: skip
_ERFC_CHEB = (
    -0.651326859890855, 0.6419697923564904, 0.019476473204185833, -0.009561514786808733,
    -0.0009465953444823386, 0.00036683949785298235, 4.252332480669867e-05,
    -2.0278578112593998e-05, -1.6242900048835502e-06, 1.3036558358995518e-06,
    1.562644143353216e-08, -8.523809568987733e-08, 6.529054185312784e-09, 5.059343595715286e-09,
    -9.913643895342513e-10, -2.2736519528598825e-10, 9.646759525390598e-11,
    2.3942208674453966e-12, -6.886163106457507e-12, 8.94615641110437e-13,
    3.129773024901117e-13, -1.1260473353589915e-13, 2.1208493223016674e-16,
)  # fmt: skip


def _erfc_abs(a: Array) -> Array:
    """erfc(a) for a >= 0, to the precision of a's dtype."""
    t = 1.0 / (1.0 + 0.5 * a)
    if a.dtype is dt.float64:
        u = 2.0 * t - 1.0
        u2 = 2.0 * u
        c = _ERFC_CHEB
        b1 = xp.full_like(u, c[-1])
        b2 = xp.zeros_like(u)
        for k in range(len(c) - 2, 0, -1):  # Clenshaw's recurrence
            b1, b2 = u2 * b1 - b2 + c[k], b1
        p = u * b1 - b2 + c[0]
    else:
        c = _ERFC_NR
        p = c[9]
        for k in range(8, -1, -1):
            p = p * t + c[k]
    return t * xp.exp(p - a * a)


_SQRT1_2 = 1.0 / math.sqrt(2.0)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)


def _phi(x: Array) -> Array:
    """The standard normal CDF: 0.5 * erfc(-x / sqrt(2))."""
    h = 0.5 * _erfc_abs(xp.abs(x) * _SQRT1_2)
    return xp.where(x >= 0, 1.0 - h, h)


class _GELU(Function):
    @staticmethod
    def forward(ctx, x):
        cdf = _phi(x)
        ctx.save_for_backward(x, cdf)
        return x * cdf

    @staticmethod
    def backward(ctx, g):
        x, cdf = ctx.saved_tensors
        pdf = xp.exp(-0.5 * x * x) * _INV_SQRT_2PI
        return g * (cdf + x * pdf)


class _GELUTanh(Function):
    @staticmethod
    def forward(ctx, x):
        t = xp.tanh(_SQRT_2_OVER_PI * (x + 0.044715 * x * x * x))
        ctx.save_for_backward(x, t)
        return 0.5 * x * (1.0 + t)

    @staticmethod
    def backward(ctx, g):
        x, t = ctx.saved_tensors
        dinner = _SQRT_2_OVER_PI * (1.0 + 3 * 0.044715 * x * x)
        return g * (0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * dinner)


def gelu(input: Array, approximate: str = "none") -> Array:
    """x * Phi(x) (``approximate='none'``) or its tanh approximation (``'tanh'``)."""
    _check_float(input, "gelu")
    if approximate == "none":
        return _GELU.apply(input)
    if approximate == "tanh":
        return _GELUTanh.apply(input)
    raise ValueError(f"gelu: approximate must be 'none' or 'tanh', got {approximate!r}")


# -- softmax ----------------------------------------------------------------------------------
def _softmax_dim(name: str, ndim: int, dim) -> int:
    if dim is None:
        warnings.warn(
            f"Implicit dimension choice for {name} has been deprecated. Change the call to "
            "include dim=X as an argument.",
            stacklevel=3,
        )
        dim = 0 if ndim in (0, 1, 3) else 1
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(
            f"{name}: Dimension out of range (expected to be in range of [{-n}, {n - 1}], but "
            f"got {dim})"
        )
    return dim % n


class _Softmax(Function):
    @staticmethod
    def forward(ctx, x, dim):
        z = x - xp.max(x, axis=dim, keepdims=True)
        e = xp.exp(z)
        y = e / xp.sum(e, axis=dim, keepdims=True)
        ctx.save_for_backward(y)
        ctx.dim = dim
        return y

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        gy = g * y
        return gy - y * xp.sum(gy, axis=ctx.dim, keepdims=True), None


class _LogSoftmax(Function):
    @staticmethod
    def forward(ctx, x, dim):
        z = x - xp.max(x, axis=dim, keepdims=True)
        y = z - xp.log(xp.sum(xp.exp(z), axis=dim, keepdims=True))
        ctx.save_for_backward(y)
        ctx.dim = dim
        return y

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return g - xp.exp(y) * xp.sum(g, axis=ctx.dim, keepdims=True), None


def _softmax_prep(name: str, input: Array, dim, dtype):
    _check_array(input, name)
    if dtype is not None:
        input = xp.astype(input, dt.as_dtype(dtype))
    if input.dtype.kind not in dt.FLOAT_KINDS:
        raise TypeError(f"{name}: expected a floating point input, got dtype {input.dtype.name}")
    return input, _softmax_dim(name, input.ndim, dim)


def softmax(input: Array, dim: int | None = None, _stacklevel: int = 3, dtype=None) -> Array:
    """exp(x) / sum(exp(x)) along ``dim`` (shifted by the max: no overflow)."""
    input, d = _softmax_prep("softmax", input, dim, dtype)
    if input.ndim == 0:  # one element: softmax of a 0-d array is 1
        return xp.reshape(_Softmax.apply(xp.reshape(input, (1,)), 0), ())
    return _Softmax.apply(input, d)


def softmin(input: Array, dim: int | None = None, _stacklevel: int = 3, dtype=None) -> Array:
    """softmax(-x) along ``dim``."""
    input, d = _softmax_prep("softmin", input, dim, dtype)
    return softmax(-input, d)


def log_softmax(input: Array, dim: int | None = None, _stacklevel: int = 3, dtype=None) -> Array:
    """x - logsumexp(x) along ``dim`` (stable for large |x|)."""
    input, d = _softmax_prep("log_softmax", input, dim, dtype)
    if input.ndim == 0:
        return xp.reshape(_LogSoftmax.apply(xp.reshape(input, (1,)), 0), ())
    return _LogSoftmax.apply(input, d)


# -- dropout ----------------------------------------------------------------------------------
def _check_p(p: float, fn: str) -> float:
    if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0.0 <= p <= 1.0:
        raise ValueError(f"{fn}: dropout probability has to be between 0 and 1, but got {p}")
    return float(p)


def _dropout_mask(shape: tuple, p: float, like: Array, generator=None) -> Array:
    """Keep-mask scaled by 1/(1-p), of ``shape``, in ``like``'s dtype and device."""
    if like.device.type == "meta":
        return xp.empty(shape, dtype=like.dtype, device=like.device)
    rng = _random._rng(generator, "dropout")
    npd = like.dtype.numpy
    u = rng.random(shape, dtype=np.float32 if npd == np.float32 else np.float64)
    mask = (u >= p).astype(npd)
    mask *= npd.type(1.0 / (1.0 - p))
    return _random._finish(mask, like.dtype, like.device, False)


def _apply_mask(input: Array, mask: Array, inplace: bool) -> Array:
    y = input * mask
    return _inplace(input, y) if inplace else y


def dropout(
    input: Array, p: float = 0.5, training: bool = True, inplace: bool = False, generator=None
) -> Array:
    """Zero each element with probability ``p`` and scale the rest by 1/(1-p) while
    ``training``; the identity otherwise."""
    p = _check_p(p, "dropout")
    _check_float(input, "dropout")
    if not training or p == 0.0:
        return input
    if p == 1.0:
        return _apply_mask(input, xp.zeros((), dtype=input.dtype, device=input.device), inplace)
    return _apply_mask(input, _dropout_mask(input.shape, p, input, generator), inplace)


def _feature_dropout(
    name: str, input: Array, p: float, training: bool, inplace: bool, spatial: int, generator
) -> Array:
    p = _check_p(p, name)
    _check_float(input, name)
    if input.ndim not in (spatial + 1, spatial + 2):
        raise RuntimeError(
            f"{name}: expected a {spatial + 1}-D (unbatched) or {spatial + 2}-D (batched) input, "
            f"got shape {input.shape}"
        )
    if not training or p == 0.0:
        return input
    # one draw per (sample, channel): the mask broadcasts over the spatial dimensions
    mshape = input.shape[: input.ndim - spatial] + (1,) * spatial
    if p == 1.0:
        return _apply_mask(input, xp.zeros((), dtype=input.dtype, device=input.device), inplace)
    return _apply_mask(input, _dropout_mask(mshape, p, input, generator), inplace)


def dropout1d(
    input: Array, p: float = 0.5, training: bool = True, inplace: bool = False, generator=None
) -> Array:
    """Zero whole channels of (N, C, L) or (C, L) input with probability ``p``."""
    return _feature_dropout("dropout1d", input, p, training, inplace, 1, generator)


def dropout2d(
    input: Array, p: float = 0.5, training: bool = True, inplace: bool = False, generator=None
) -> Array:
    """Zero whole channels of (N, C, H, W) or (C, H, W) input with probability ``p``."""
    return _feature_dropout("dropout2d", input, p, training, inplace, 2, generator)


def dropout3d(
    input: Array, p: float = 0.5, training: bool = True, inplace: bool = False, generator=None
) -> Array:
    """Zero whole channels of (N, C, D, H, W) or (C, D, H, W) input with probability ``p``."""
    return _feature_dropout("dropout3d", input, p, training, inplace, 3, generator)


# -- embedding --------------------------------------------------------------------------------
class _Embedding(Function):
    @staticmethod
    def forward(ctx, weight, idx_flat, padding_idx):
        ctx.save_for_backward(idx_flat)
        ctx.num = weight.shape[0]
        ctx.padding_idx = padding_idx
        return xp.take(weight, idx_flat, axis=0)

    @staticmethod
    def backward(ctx, g):
        (idx,) = ctx.saved_tensors
        if ctx.padding_idx is not None:
            # the padding row gets no gradient: its contributions are masked before the scatter
            keep = xp.astype(idx != ctx.padding_idx, g.dtype)
            g = g * xp.expand_dims(keep, axis=1)
        from .._ops.searching import index_add

        zeros = xp.zeros((ctx.num, g.shape[1]), dtype=g.dtype, device=g.device)
        return index_add(zeros, g, (idx,)), None, None


def _check_indices(input: Array, num: int, fn: str) -> None:
    _check_array(input, fn)
    if input.dtype.kind not in dt.INTEGER_KINDS:
        raise TypeError(
            f"{fn}: expected integer indices (int64 or int32), got dtype {input.dtype.name} "
            f"(shape {input.shape})"
        )
    if input.device.type != "meta" and input.size:
        lo, hi = int(xp.min(input)), int(xp.max(input))
        if lo < 0 or hi >= num:
            bad = lo if lo < 0 else hi
            raise IndexError(
                f"{fn}: index {bad} is out of range for an embedding of {num} rows "
                f"(valid: 0..{num - 1})"
            )


def _renorm_rows(weight: Array, idx: Array, max_norm: float, norm_type: float) -> None:
    """Rescale (in place, unrecorded) the looked-up rows whose norm exceeds ``max_norm``."""
    if weight.device.type == "meta":
        return
    with no_grad():
        rows = xp.unique_values(xp.reshape(idx, (-1,)))
        w = xp.take(weight, rows, axis=0)
        norms = xp.linalg.vector_norm(w, ord=norm_type, axis=1, keepdims=True)
        scale = xp.where(norms > max_norm, max_norm / (norms + 1e-7), 1.0)
        weight[rows] = w * xp.astype(scale, w.dtype)


def embedding(
    input: Array,
    weight: Array,
    padding_idx: int | None = None,
    max_norm: float | None = None,
    norm_type: float = 2.0,
    scale_grad_by_freq: bool = False,
    sparse: bool = False,
) -> Array:
    """Rows of ``weight`` selected by the integer array ``input``: shape input.shape +
    (embedding_dim,).  The ``padding_idx`` row gets no gradient; ``max_norm`` rescales the
    looked-up rows in place first."""
    _check_float(weight, "embedding", "weight")
    if weight.ndim != 2:
        raise RuntimeError(f"embedding: weight must be 2-D, got shape {weight.shape}")
    num, dim = weight.shape
    _check_indices(input, num, "embedding")
    if padding_idx is not None:
        if not -num <= padding_idx < num:
            raise AssertionError("Padding_idx must be within num_embeddings")
        padding_idx %= num
    if scale_grad_by_freq or sparse:
        raise NotImplementedError("embedding: scale_grad_by_freq and sparse are not supported")
    if max_norm is not None:
        _renorm_rows(weight, input, max_norm, norm_type)
    flat = xp.reshape(input, (-1,))
    out = _Embedding.apply(weight, flat, padding_idx)
    return xp.reshape(out, (*input.shape, dim))


def one_hot(tensor: Array, num_classes: int = -1) -> Array:
    """int64 array of shape tensor.shape + (num_classes,) with a 1 at each class index
    (``num_classes=-1``: the largest index + 1)."""
    _check_array(tensor, "one_hot", "tensor")
    if tensor.dtype.kind not in dt.INTEGER_KINDS:
        raise TypeError(
            f"one_hot is only applicable to index tensor of integer type, got {tensor.dtype.name}"
        )
    meta = tensor.device.type == "meta"
    if num_classes == -1:
        if meta:
            raise RuntimeError("one_hot: num_classes must be given for a meta array (no data)")
        num_classes = int(xp.max(tensor)) + 1 if tensor.size else 0
    elif num_classes < -1:
        raise RuntimeError(f"one_hot: num_classes should be positive or -1, got {num_classes}")
    if not meta and tensor.size:
        if int(xp.min(tensor)) < 0:
            raise RuntimeError("one_hot: Class values must be non-negative.")
        if int(xp.max(tensor)) >= num_classes:
            raise RuntimeError("one_hot: Class values must be smaller than num_classes.")
    classes = xp.arange(num_classes, dtype=tensor.dtype, device=tensor.device)
    return xp.astype(xp.expand_dims(tensor, axis=-1) == classes, xp.int64)


# -- distances --------------------------------------------------------------------------------
def normalize(input: Array, p: float = 2.0, dim: int = 1, eps: float = 1e-12, out=None) -> Array:
    """``input / max(||input||_p, eps)`` along ``dim``."""
    _check_float(input, "normalize")
    if out is not None:
        raise NotImplementedError("normalize: out= is not supported; use the returned array")
    norm = xp.linalg.vector_norm(input, ord=p, axis=dim, keepdims=True)
    return input / xp.clip(norm, min=eps)


def cosine_similarity(x1: Array, x2: Array, dim: int = 1, eps: float = 1e-8) -> Array:
    """``x1 . x2 / (max(||x1||, eps) * max(||x2||, eps))`` along ``dim`` (inputs broadcast)."""
    _check_float(x1, "cosine_similarity", "x1")
    _check_float(x2, "cosine_similarity", "x2")
    try:
        shape = xp.broadcast_shapes(x1.shape, x2.shape)
    except ValueError:
        raise RuntimeError(
            f"cosine_similarity: x1 of shape {x1.shape} and x2 of shape {x2.shape} do not broadcast"
        ) from None
    n = max(len(shape), 1)
    if not -n <= dim < n:
        raise IndexError(f"cosine_similarity: dim {dim} is out of range for shape {shape}")
    n1 = xp.clip(xp.linalg.vector_norm(x1, axis=dim, keepdims=True), min=eps)
    n2 = xp.clip(xp.linalg.vector_norm(x2, axis=dim, keepdims=True), min=eps)
    return xp.sum((x1 / n1) * (x2 / n2), axis=dim)


def pairwise_distance(
    x1: Array, x2: Array, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False
) -> Array:
    """``||x1 - x2 + eps||_p`` over the last dimension."""
    _check_float(x1, "pairwise_distance", "x1")
    _check_float(x2, "pairwise_distance", "x2")
    return xp.linalg.vector_norm(x1 - x2 + eps, ord=p, axis=-1, keepdims=keepdim)
