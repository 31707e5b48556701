"""Dropout layers: active in training mode, the identity in eval mode."""

from __future__ import annotations

from ..._array import Array
from .. import _functional_core as F
from .module import Module

__all__ = ["Dropout", "Dropout1d", "Dropout2d", "Dropout3d"]


class _DropoutNd(Module):
    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0 <= p <= 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p = p
        self.inplace = inplace

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


class Dropout(_DropoutNd):
    """Zero each element with probability ``p`` and scale the rest by 1/(1-p) (training)."""

    def forward(self, input: Array) -> Array:
        return F.dropout(input, self.p, self.training, self.inplace)


class Dropout1d(_DropoutNd):
    """Zero whole channels of (N, C, L) input with probability ``p`` (training)."""

    def forward(self, input: Array) -> Array:
        return F.dropout1d(input, self.p, self.training, self.inplace)


class Dropout2d(_DropoutNd):
    """Zero whole channels of (N, C, H, W) input with probability ``p`` (training)."""

    def forward(self, input: Array) -> Array:
        return F.dropout2d(input, self.p, self.training, self.inplace)


class Dropout3d(_DropoutNd):
    """Zero whole channels of (N, C, D, H, W) input with probability ``p`` (training)."""

    def forward(self, input: Array) -> Array:
        return F.dropout3d(input, self.p, self.training, self.inplace)
