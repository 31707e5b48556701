"""Normalisation layers over trailing axes or channel groups: LayerNorm, GroupNorm, RMSNorm
(PyTorch's names, arguments, defaults, parameter names and initialisation)."""

from __future__ import annotations

from collections.abc import Sequence

from strided._array import Array

from ... import _namespace as xp
from .. import _functional_norm as F
from ..parameter import Parameter
from ._affine import factory_kwargs, register_affine, reset_affine
from .module import Module

__all__ = ["LayerNorm", "GroupNorm", "RMSNorm"]


def _shape(normalized_shape) -> tuple:
    if isinstance(normalized_shape, int):
        return (normalized_shape,)
    if isinstance(normalized_shape, Sequence):
        return tuple(int(s) for s in normalized_shape)
    raise TypeError(
        f"normalized_shape must be an int or a sequence of ints, got "
        f"{type(normalized_shape).__name__}"
    )


class LayerNorm(Module):
    """Layer normalisation over the last ``len(normalized_shape)`` axes (PyTorch's
    ``nn.LayerNorm``): ``weight`` (ones) and ``bias`` (zeros) of ``normalized_shape`` when
    ``elementwise_affine`` (``bias=False`` drops the bias)."""

    def __init__(
        self,
        normalized_shape: int | Sequence[int],
        eps: float = 1e-5,
        elementwise_affine: bool = True,
        bias: bool = True,
        device=None,
        dtype=None,
    ) -> None:
        super().__init__()
        self.normalized_shape = _shape(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        kw = factory_kwargs(dtype, device)
        register_affine(self, self.normalized_shape, elementwise_affine, bias, kw)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        reset_affine(self)

    def forward(self, input: Array) -> Array:
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (
            f"{self.normalized_shape}, eps={self.eps}, "
            f"elementwise_affine={self.elementwise_affine}, bias={self.bias is not None}"
        )


class GroupNorm(Module):
    """Group normalisation of (N, C, *) inputs (PyTorch's ``nn.GroupNorm``): ``num_channels``
    split into ``num_groups``; per-channel ``weight`` (ones) and ``bias`` (zeros) when
    ``affine`` (``bias=False`` drops the bias)."""

    def __init__(
        self,
        num_groups: int,
        num_channels: int,
        eps: float = 1e-5,
        affine: bool = True,
        device=None,
        dtype=None,
        *,
        bias: bool = True,
    ) -> None:
        super().__init__()
        if num_channels % num_groups != 0:
            raise ValueError(
                f"GroupNorm: num_channels ({num_channels}) must be divisible by num_groups "
                f"({num_groups})"
            )
        self.num_groups = num_groups
        self.num_channels = num_channels
        self.eps = eps
        self.affine = affine
        register_affine(self, (num_channels,), affine, bias, factory_kwargs(dtype, device))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        reset_affine(self)

    def forward(self, input: Array) -> Array:
        if input.ndim < 2 or input.shape[1] != self.num_channels:
            raise ValueError(
                f"GroupNorm: expected input of shape (N, {self.num_channels}, *), got input of "
                f"shape {tuple(input.shape)}"
            )
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (
            f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}, "
            f"bias={self.bias is not None}"
        )


class RMSNorm(Module):
    """Root-mean-square normalisation over the last ``len(normalized_shape)`` axes (PyTorch's
    ``nn.RMSNorm``); ``eps=None`` uses the input dtype's machine epsilon; ``weight`` (ones)
    when ``elementwise_affine``."""

    def __init__(
        self,
        normalized_shape: int | Sequence[int],
        eps: float | None = None,
        elementwise_affine: bool = True,
        device=None,
        dtype=None,
    ) -> None:
        super().__init__()
        self.normalized_shape = _shape(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            kw = factory_kwargs(dtype, device)
            self.weight = Parameter(xp.empty(self.normalized_shape, **kw))
        else:
            self.register_parameter("weight", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        reset_affine(self)

    def forward(self, x: Array) -> Array:
        return F.rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self) -> str:
        return (
            f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"
        )
