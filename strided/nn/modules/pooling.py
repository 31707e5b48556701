"""Pooling layers with PyTorch's arguments: ``MaxPool1d/2d``, ``AvgPool1d/2d``,
``AdaptiveAvgPool1d/2d``, ``AdaptiveMaxPool2d``."""

from __future__ import annotations

from ..._array import Array
from .. import _functional_conv as F
from .module import Module

__all__ = [
    "MaxPool1d",
    "MaxPool2d",
    "AvgPool1d",
    "AvgPool2d",
    "AdaptiveAvgPool1d",
    "AdaptiveAvgPool2d",
    "AdaptiveMaxPool2d",
]


class _MaxPoolNd(Module):
    _n = 2

    def __init__(
        self,
        kernel_size,
        stride=None,
        padding=0,
        dilation=1,
        return_indices: bool = False,
        ceil_mode: bool = False,
    ) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.dilation = dilation
        self.return_indices = return_indices
        self.ceil_mode = ceil_mode

    def extra_repr(self) -> str:
        return (
            f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
            f"dilation={self.dilation}, ceil_mode={self.ceil_mode}"
        )

    def forward(self, input: Array):
        return F._max_pool(
            input, self.kernel_size, self.stride, self.padding, self.dilation, self.ceil_mode,
            self.return_indices, self._n, f"{type(self).__name__}({self.extra_repr()})",
        )  # fmt: skip


class MaxPool1d(_MaxPoolNd):
    """1-D max pooling over (N, C, L) (``stride`` defaults to ``kernel_size``)."""

    _n = 1


class MaxPool2d(_MaxPoolNd):
    """2-D max pooling over (N, C, H, W) (``stride`` defaults to ``kernel_size``)."""

    _n = 2


class _AvgPoolNd(Module):
    _n = 2

    def __init__(
        self,
        kernel_size,
        stride=None,
        padding=0,
        ceil_mode: bool = False,
        count_include_pad: bool = True,
        divisor_override=None,
    ) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad
        self.divisor_override = divisor_override

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"

    def forward(self, input: Array) -> Array:
        return F._avg_pool(
            input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
            self.count_include_pad, self.divisor_override, self._n,
            f"{type(self).__name__}({self.extra_repr()})",
        )  # fmt: skip


class AvgPool1d(_AvgPoolNd):
    """1-D average pooling over (N, C, L)."""

    _n = 1

    def __init__(
        self, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True
    ) -> None:
        super().__init__(kernel_size, stride, padding, ceil_mode, count_include_pad)
        # PyTorch keeps AvgPool1d's sizes as 1-tuples (its repr shows them)
        self.kernel_size, self.stride, self.padding = (
            v if isinstance(v, tuple) else (v,) for v in (self.kernel_size, self.stride, padding)
        )


class AvgPool2d(_AvgPoolNd):
    """2-D average pooling over (N, C, H, W), PyTorch's divisor rules."""

    _n = 2


class AdaptiveAvgPool1d(Module):
    """Average pooling of (N, C, L) to a fixed length."""

    def __init__(self, output_size) -> None:
        super().__init__()
        self.output_size = output_size

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"

    def forward(self, input: Array) -> Array:
        return F.adaptive_avg_pool1d(input, self.output_size)


class AdaptiveAvgPool2d(Module):
    """Average pooling of (N, C, H, W) to a fixed (H_out, W_out) (None keeps a size)."""

    def __init__(self, output_size) -> None:
        super().__init__()
        self.output_size = output_size

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"

    def forward(self, input: Array) -> Array:
        return F.adaptive_avg_pool2d(input, self.output_size)


class AdaptiveMaxPool2d(Module):
    """Max pooling to a fixed size that divides the input size."""

    def __init__(self, output_size, return_indices: bool = False) -> None:
        super().__init__()
        self.output_size = output_size
        self.return_indices = return_indices

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"

    def forward(self, input: Array):
        return F.adaptive_max_pool2d(input, self.output_size, self.return_indices)
