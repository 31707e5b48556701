"""``Identity``, ``Linear`` and ``Bilinear`` with PyTorch's arguments and initialisation."""

from __future__ import annotations

import math

from ... import _dtypes as dt
from ... import _namespace as xp
from ..._array import Array
from .. import init
from .._functional_core import _Linear, _linear_error, bilinear, linear
from ..parameter import Parameter
from .module import Module

__all__ = ["Identity", "Linear", "Bilinear"]


def _factory(device, dtype) -> dict:
    """Parameters are float32 unless ``dtype`` says otherwise (PyTorch's default dtype)."""
    return {"device": device, "dtype": dt.float32 if dtype is None else dtype}


class Identity(Module):
    """Returns its input (arguments are accepted and ignored, as in PyTorch)."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__()

    def forward(self, input):
        return input


class Linear(Module):
    """y = x @ W.T + b, x of shape (*, in_features).

    weight: (out_features, in_features), initialised by ``kaiming_uniform_(a=sqrt(5))``, i.e.
    U(-1/sqrt(in_features), 1/sqrt(in_features)); bias: (out_features,) from the same range.
    """

    def __init__(
        self, in_features: int, out_features: int, bias: bool = True, device=None, dtype=None
    ) -> None:
        super().__init__()
        if in_features < 0 or out_features < 0:
            raise ValueError(
                f"Linear: in_features and out_features must be non-negative, got "
                f"{in_features} and {out_features}"
            )
        f = _factory(device, dtype)
        self.in_features = in_features
        self.out_features = out_features
        self.weight = Parameter(xp.empty((out_features, in_features), **f))
        if bias:
            self.bias = Parameter(xp.empty((out_features,), **f))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """PyTorch's initialisation (see the class docstring)."""
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input: Array) -> Array:
        p = self._parameters
        w = p["weight"]
        if input.__class__ is Array and input.ndim >= 2:
            if input.shape[-1] == w.shape[1] and input.dtype is w.dtype:
                return _Linear.apply(input, w, p["bias"])  # the hot path: one tape node
            _linear_error(input, w, f"Linear({self.extra_repr()})")
        if not isinstance(input, Array):
            raise TypeError(
                f"Linear({self.extra_repr()}): input must be a strided array, got "
                f"{type(input).__name__}"
            )
        if input.ndim >= 1 and (input.shape[-1] != w.shape[1] or input.dtype is not w.dtype):
            _linear_error(input, w, f"Linear({self.extra_repr()})")
        return linear(input, w, p["bias"])

    def extra_repr(self) -> str:
        return (
            f"in_features={self.in_features}, out_features={self.out_features}, "
            f"bias={self.bias is not None}"
        )


class Bilinear(Module):
    """y = x1^T A x2 + b: weight (out_features, in1_features, in2_features), initialised (like
    the bias) from U(-1/sqrt(in1_features), 1/sqrt(in1_features))."""

    def __init__(
        self,
        in1_features: int,
        in2_features: int,
        out_features: int,
        bias: bool = True,
        device=None,
        dtype=None,
    ) -> None:
        super().__init__()
        f = _factory(device, dtype)
        self.in1_features = in1_features
        self.in2_features = in2_features
        self.out_features = out_features
        self.weight = Parameter(xp.empty((out_features, in1_features, in2_features), **f))
        if bias:
            self.bias = Parameter(xp.empty((out_features,), **f))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        bound = 1 / math.sqrt(self.weight.shape[1])
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1: Array, input2: Array) -> Array:
        try:
            return bilinear(input1, input2, self.weight, self.bias)
        except RuntimeError as e:
            raise RuntimeError(f"Bilinear({self.extra_repr()}): {e}") from None

    def extra_repr(self) -> str:
        return (
            f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
            f"out_features={self.out_features}, bias={self.bias is not None}"
        )
