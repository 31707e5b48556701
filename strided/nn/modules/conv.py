"""``Conv1d``, ``Conv2d``, ``ConvTranspose1d`` and ``ConvTranspose2d`` with PyTorch's arguments,
parameter shapes and initialisation."""

from __future__ import annotations

import math

from ... import _dtypes as dt
from ... import _namespace as xp
from ..._array import Array
from .. import _functional_conv as F
from .. import init
from ..parameter import Parameter
from .module import Module

__all__ = ["Conv1d", "Conv2d", "ConvTranspose1d", "ConvTranspose2d"]


def _ntuple(value, n: int, what: str, layer: str) -> tuple:
    if isinstance(value, int) and not isinstance(value, bool):
        return (value,) * n
    t = tuple(int(v) for v in value)
    if len(t) == 1:
        return t * n
    if len(t) != n:
        raise ValueError(f"{layer}: {what} must be an int or a tuple of {n} ints, got {value!r}")
    return t


class _ConvNd(Module):
    """Shared parameters, checks and initialisation of the convolution layers."""

    _n = 2
    _transposed = False

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size,
        stride=1,
        padding=0,
        dilation=1,
        groups: int = 1,
        bias: bool = True,
        padding_mode: str = "zeros",
        device=None,
        dtype=None,
        output_padding=0,
    ) -> None:
        super().__init__()
        name = type(self).__name__
        n = self._n
        if groups <= 0:
            raise ValueError(f"{name}: groups must be a positive integer, got {groups}")
        if in_channels % groups:
            raise ValueError(
                f"{name}: in_channels ({in_channels}) must be divisible by groups ({groups})"
            )
        if out_channels % groups:
            raise ValueError(
                f"{name}: out_channels ({out_channels}) must be divisible by groups ({groups})"
            )
        if padding_mode != "zeros":
            valid = ("zeros", "reflect", "replicate", "circular")
            if padding_mode not in valid:
                raise ValueError(
                    f"{name}: padding_mode must be one of {valid}, got {padding_mode!r}"
                )
            raise NotImplementedError(
                f"{name}: padding_mode={padding_mode!r} is not supported; only 'zeros' is "
                "(pad the input with strided.nn.functional.pad first)"
            )
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = _ntuple(kernel_size, n, "kernel_size", name)
        self.stride = _ntuple(stride, n, "stride", name)
        self.dilation = _ntuple(dilation, n, "dilation", name)
        if isinstance(padding, str):
            if self._transposed:
                raise ValueError(f"{name}: only integer padding is supported, got {padding!r}")
            if padding not in ("valid", "same"):
                raise ValueError(
                    f"{name}: invalid padding string {padding!r}, should be one of "
                    "{'valid', 'same'}"
                )
            if padding == "same" and any(s != 1 for s in self.stride):
                raise ValueError(
                    f"{name}: padding='same' is not supported for strided convolutions"
                )
            self.padding = padding
        else:
            self.padding = _ntuple(padding, n, "padding", name)
        self.output_padding = _ntuple(output_padding, n, "output_padding", name)
        self.groups = groups
        self.padding_mode = padding_mode
        f = {"device": device, "dtype": dt.float32 if dtype is None else dtype}
        if self._transposed:
            shape = (in_channels, out_channels // groups) + self.kernel_size
        else:
            shape = (out_channels, in_channels // groups) + self.kernel_size
        self.weight = Parameter(xp.empty(shape, **f))
        if bias:
            self.bias = Parameter(xp.empty((out_channels,), **f))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """PyTorch's initialisation: ``kaiming_uniform_(a=sqrt(5))`` for the weight (i.e.
        U(±1/sqrt(fan_in))) and U(±1/sqrt(fan_in)) for the bias."""
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            if fan_in != 0:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)

    def _label(self) -> str:
        return f"{type(self).__name__}({self.extra_repr()})"

    def _check_input(self, input) -> None:
        # errors name the layer (with its configuration) and the shapes
        label = self._label()
        if not isinstance(input, Array):
            raise TypeError(f"{label}: input must be a strided array, got {type(input).__name__}")
        n = self._n
        if input.ndim not in (n + 1, n + 2):
            raise ValueError(
                f"{label}: expected a {n + 1}-D (unbatched) or {n + 2}-D (batched) input, got "
                f"shape {input.shape}"
            )
        channels = input.shape[-n - 1]
        if channels != self.in_channels:
            raise RuntimeError(
                f"{label}: expected input with {self.in_channels} channels (dimension "
                f"{input.ndim - n - 1}), got shape {input.shape}"
            )

    def extra_repr(self) -> str:
        s = f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}"
        s += f", stride={self.stride}"
        n = self._n
        if self.padding != (0,) * n:
            s += f", padding={self.padding}"
        if self.dilation != (1,) * n:
            s += f", dilation={self.dilation}"
        if self._transposed and self.output_padding != (0,) * n:
            s += f", output_padding={self.output_padding}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        return s


class Conv1d(_ConvNd):
    """1-D convolution over (N, C_in, L): weight (C_out, C_in/groups, kW), bias (C_out,)."""

    _n = 1

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size,
        stride=1,
        padding=0,
        dilation=1,
        groups: int = 1,
        bias: bool = True,
        padding_mode: str = "zeros",
        device=None,
        dtype=None,
    ) -> None:
        super().__init__(
            in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias,
            padding_mode, device, dtype,
        )  # fmt: skip

    def forward(self, input: Array) -> Array:
        self._check_input(input)
        return F._conv_nd(
            input, self.weight, self.bias, self.stride, self.padding, self.dilation,
            self.groups, 1, self._label(),
        )  # fmt: skip


class Conv2d(_ConvNd):
    """2-D convolution over (N, C_in, H, W): weight (C_out, C_in/groups, kH, kW), bias
    (C_out,); ``padding`` an int, a pair, ``'valid'`` or ``'same'``; padding_mode 'zeros'."""

    _n = 2

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size,
        stride=1,
        padding=0,
        dilation=1,
        groups: int = 1,
        bias: bool = True,
        padding_mode: str = "zeros",
        device=None,
        dtype=None,
    ) -> None:
        super().__init__(
            in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias,
            padding_mode, device, dtype,
        )  # fmt: skip

    def forward(self, input: Array) -> Array:
        self._check_input(input)
        return F._conv_nd(
            input, self.weight, self.bias, self.stride, self.padding, self.dilation,
            self.groups, 2, self._label(),
        )  # fmt: skip


class _ConvTransposeNd(_ConvNd):
    _transposed = True

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size,
        stride=1,
        padding=0,
        output_padding=0,
        groups: int = 1,
        bias: bool = True,
        dilation=1,
        padding_mode: str = "zeros",
        device=None,
        dtype=None,
    ) -> None:
        super().__init__(
            in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias,
            padding_mode, device, dtype, output_padding,
        )  # fmt: skip
        name = type(self).__name__
        for op, st, d in zip(self.output_padding, self.stride, self.dilation):
            if not (op < st or op < d):
                raise ValueError(
                    f"{name}: output padding must be smaller than either stride or dilation, "
                    f"got output_padding={self.output_padding}, stride={self.stride}, "
                    f"dilation={self.dilation}"
                )

    def forward(self, input: Array, output_size=None) -> Array:
        self._check_input(input)
        return F._conv_transpose_nd(
            input, self.weight, self.bias, self.stride, self.padding, self.output_padding,
            self.groups, self.dilation, self._n, self._label(), output_size,
        )  # fmt: skip


class ConvTranspose1d(_ConvTransposeNd):
    """1-D transposed convolution over (N, C_in, L): weight (C_in, C_out/groups, kW)."""

    _n = 1


class ConvTranspose2d(_ConvTransposeNd):
    """2-D transposed convolution over (N, C_in, H, W): weight (C_in, C_out/groups, kH, kW);
    ``forward(input, output_size=None)`` picks the output padding from a requested size."""

    _n = 2
