"""Weight initialisers with PyTorch's names, formulas and defaults (``torch.nn.init``).

Every initialiser fills its array in place without recording (as under ``no_grad``), takes an
optional ``generator`` (a :class:`strided.random.Generator`; the default generator otherwise),
returns the array, and does nothing on meta (a meta array has no values to fill).
"""

from __future__ import annotations

import math

import numpy as np

from .. import _dtypes as dt
from .. import random as _random
from .._array import Array

__all__ = [
    "calculate_gain",
    "uniform_",
    "normal_",
    "trunc_normal_",
    "constant_",
    "ones_",
    "zeros_",
    "eye_",
    "dirac_",
    "xavier_uniform_",
    "xavier_normal_",
    "kaiming_uniform_",
    "kaiming_normal_",
    "orthogonal_",
]


def _check(tensor, op: str) -> bool:
    """True when ``tensor`` has values to fill (not meta, not empty)."""
    if not isinstance(tensor, Array):
        raise TypeError(f"{op}: expected a strided array, got {type(tensor).__name__}")
    return tensor.device.type != "meta" and tensor.size > 0


def _host_dtype(tensor: Array) -> np.dtype:
    return tensor.dtype.numpy if tensor.dtype.kind == dt.REAL else np.dtype(np.float64)


def calculate_gain(nonlinearity: str, param: float | None = None) -> float:
    """The recommended gain for ``nonlinearity`` (PyTorch's table): 1 for linear, conv and
    sigmoid, 5/3 for tanh, sqrt(2) for relu, sqrt(2 / (1 + slope^2)) for leaky_relu (slope
    ``param``, default 0.01), 3/4 for selu."""
    linear = (
        "linear",
        "conv1d",
        "conv2d",
        "conv3d",
        "conv_transpose1d",
        "conv_transpose2d",
        "conv_transpose3d",
    )
    if nonlinearity in linear or nonlinearity == "sigmoid":
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif isinstance(param, (int, float)) and not isinstance(param, bool):
            slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + slope**2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _calculate_fan_in_and_fan_out(tensor: Array) -> tuple[int, int]:
    """``(fan_in, fan_out)`` of a weight of shape ``(out, in, *kernel)``."""
    if tensor.ndim < 2:
        raise ValueError(
            "Fan in and fan out can not be computed for tensor with fewer than 2 dimensions "
            f"(got shape {tensor.shape})"
        )
    receptive = 1
    for s in tensor.shape[2:]:
        receptive *= s
    return tensor.shape[1] * receptive, tensor.shape[0] * receptive


def _calculate_correct_fan(tensor: Array, mode: str) -> int:
    mode = mode.lower()
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"Mode {mode} not supported, please use one of fan_in, fan_out")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def uniform_(tensor: Array, a: float = 0.0, b: float = 1.0, generator=None) -> Array:
    """Fill with samples of U(a, b)."""
    if _check(tensor, "uniform_"):
        _random.uniform_(tensor, a, b, generator=generator)
    return tensor


def normal_(tensor: Array, mean: float = 0.0, std: float = 1.0, generator=None) -> Array:
    """Fill with samples of N(mean, std^2)."""
    if _check(tensor, "normal_"):
        _random.normal_(tensor, mean, std, generator=generator)
    return tensor


def trunc_normal_(
    tensor: Array,
    mean: float = 0.0,
    std: float = 1.0,
    a: float = -2.0,
    b: float = 2.0,
    generator=None,
) -> Array:
    """Fill with samples of N(mean, std^2) restricted to [a, b] (absolute bounds, as in
    PyTorch): out-of-range draws are redrawn."""
    if not a < b:
        raise ValueError(f"trunc_normal_: expects a < b, got a={a}, b={b}")
    if not _check(tensor, "trunc_normal_"):
        return tensor
    rng = _random._rng(generator, "trunc_normal_")
    n = tensor.size
    out = rng.standard_normal(n) * std + mean
    bad = (out < a) | (out > b)
    for _ in range(100):  # acceptance is high for the usual bounds; a far tail needs more rounds
        k = int(bad.sum())
        if not k:
            break
        out[bad] = rng.standard_normal(k) * std + mean
        bad = (out < a) | (out > b)
    np.clip(out, a, b, out=out)  # a bound in the far tail: what rejection could not place
    _random._fill_(tensor, out.reshape(tensor.shape).astype(_host_dtype(tensor)))
    return tensor


def constant_(tensor: Array, val: float) -> Array:
    """Fill with ``val``."""
    if _check(tensor, "constant_"):
        _random._fill_(tensor, np.full(tensor.shape, val, dtype=tensor.dtype.numpy))
    return tensor


def ones_(tensor: Array) -> Array:
    """Fill with ones."""
    return constant_(tensor, 1)


def zeros_(tensor: Array) -> Array:
    """Fill with zeros."""
    return constant_(tensor, 0)


def eye_(tensor: Array) -> Array:
    """Fill a 2-D array with the identity (ones on the diagonal)."""
    if tensor.ndim != 2:
        raise ValueError(f"Only tensors with 2 dimensions are supported (got shape {tensor.shape})")
    if _check(tensor, "eye_"):
        _random._fill_(tensor, np.eye(*tensor.shape, dtype=tensor.dtype.numpy))
    return tensor


def dirac_(tensor: Array, groups: int = 1) -> Array:
    """Fill a 3-, 4- or 5-D convolution weight with the Dirac delta (keeps the identity of the
    input channels in each of ``groups`` groups)."""
    if tensor.ndim not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    out_per_group = tensor.shape[0] // groups
    if tensor.shape[0] % groups != 0:
        raise ValueError("dim 0 must be divisible by groups")
    if not _check(tensor, "dirac_"):
        return tensor
    w = np.zeros(tensor.shape, dtype=tensor.dtype.numpy)
    centre = tuple(s // 2 for s in tensor.shape[2:])
    for g in range(groups):
        for d in range(min(out_per_group, tensor.shape[1])):
            w[(g * out_per_group + d, d, *centre)] = 1
    _random._fill_(tensor, w)
    return tensor


def xavier_uniform_(tensor: Array, gain: float = 1.0, generator=None) -> Array:
    """Glorot uniform: U(-a, a) with a = gain * sqrt(6 / (fan_in + fan_out))."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    a = gain * math.sqrt(6.0 / float(fan_in + fan_out))
    return uniform_(tensor, -a, a, generator)


def xavier_normal_(tensor: Array, gain: float = 1.0, generator=None) -> Array:
    """Glorot normal: N(0, std^2) with std = gain * sqrt(2 / (fan_in + fan_out))."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return normal_(tensor, 0.0, std, generator)


def kaiming_uniform_(
    tensor: Array,
    a: float = 0,
    mode: str = "fan_in",
    nonlinearity: str = "leaky_relu",
    generator=None,
) -> Array:
    """He uniform: U(-bound, bound) with bound = gain * sqrt(3 / fan) (``a``: the leaky_relu
    slope; Linear and ConvNd use a=sqrt(5))."""
    if tensor.size == 0:
        return tensor
    fan = _calculate_correct_fan(tensor, mode)
    gain = calculate_gain(nonlinearity, a)
    bound = math.sqrt(3.0) * gain / math.sqrt(fan)
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(
    tensor: Array,
    a: float = 0,
    mode: str = "fan_in",
    nonlinearity: str = "leaky_relu",
    generator=None,
) -> Array:
    """He normal: N(0, std^2) with std = gain / sqrt(fan)."""
    if tensor.size == 0:
        return tensor
    fan = _calculate_correct_fan(tensor, mode)
    gain = calculate_gain(nonlinearity, a)
    return normal_(tensor, 0.0, gain / math.sqrt(fan), generator)


def orthogonal_(tensor: Array, gain: float = 1, generator=None) -> Array:
    """A (semi-)orthogonal matrix (of the array flattened to ``(shape[0], -1)``) times ``gain``:
    the Q of the QR decomposition of a normal draw, with signs fixed by R's diagonal."""
    if tensor.ndim < 2:
        raise ValueError(
            f"Only tensors with 2 or more dimensions are supported (got shape {tensor.shape})"
        )
    if not _check(tensor, "orthogonal_"):
        return tensor
    rows = tensor.shape[0]
    cols = tensor.size // rows
    flat = _random._rng(generator, "orthogonal_").standard_normal((rows, cols))
    if rows < cols:
        flat = flat.T
    q, r = np.linalg.qr(flat)
    q *= np.sign(np.diag(r))
    if rows < cols:
        q = q.T
    _random._fill_(tensor, (gain * q).reshape(tensor.shape).astype(_host_dtype(tensor)))
    return tensor


# PyTorch's deprecated names without the trailing underscore are not provided: they warn there.
