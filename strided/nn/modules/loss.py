"""Loss layers (PyTorch's ``torch.nn`` loss modules): each holds its options (and class weights
as buffers) and calls the function of the same name in ``strided.nn.functional``."""

from __future__ import annotations

from strided._array import Array

from .. import _functional_loss as F
from .module import Module

__all__ = [
    "MSELoss",
    "L1Loss",
    "SmoothL1Loss",
    "HuberLoss",
    "CrossEntropyLoss",
    "NLLLoss",
    "BCELoss",
    "BCEWithLogitsLoss",
    "KLDivLoss",
]


class _Loss(Module):
    def __init__(self, size_average=None, reduce=None, reduction: str = "mean") -> None:
        super().__init__()
        if size_average is not None or reduce is not None:
            reduction = F._reduction(
                type(self).__name__, size_average, reduce, reduction, F._REDUCTIONS
            )
        self.reduction = reduction


class _WeightedLoss(_Loss):
    def __init__(
        self, weight: Array | None = None, size_average=None, reduce=None, reduction="mean"
    ) -> None:
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)
        self.weight: Array | None


class MSELoss(_Loss):
    """Mean squared error (PyTorch's ``nn.MSELoss``)."""

    def forward(self, input: Array, target: Array) -> Array:
        return F.mse_loss(input, target, reduction=self.reduction)


class L1Loss(_Loss):
    """Mean absolute error (PyTorch's ``nn.L1Loss``)."""

    def forward(self, input: Array, target: Array) -> Array:
        return F.l1_loss(input, target, reduction=self.reduction)


class SmoothL1Loss(_Loss):
    """Quadratic below ``beta``, linear above (PyTorch's ``nn.SmoothL1Loss``)."""

    def __init__(self, size_average=None, reduce=None, reduction="mean", beta: float = 1.0):
        super().__init__(size_average, reduce, reduction)
        self.beta = beta

    def forward(self, input: Array, target: Array) -> Array:
        return F.smooth_l1_loss(input, target, reduction=self.reduction, beta=self.beta)


class HuberLoss(_Loss):
    """Quadratic below ``delta``, ``delta``-scaled linear above (PyTorch's ``nn.HuberLoss``)."""

    def __init__(self, reduction: str = "mean", delta: float = 1.0) -> None:
        super().__init__(reduction=reduction)
        self.delta = delta

    def forward(self, input: Array, target: Array) -> Array:
        return F.huber_loss(input, target, reduction=self.reduction, delta=self.delta)


class CrossEntropyLoss(_WeightedLoss):
    """Cross entropy of logits against class indices or class probabilities (PyTorch's
    ``nn.CrossEntropyLoss``: ``weight``, ``ignore_index``, ``reduction``,
    ``label_smoothing``)."""

    def __init__(
        self,
        weight: Array | None = None,
        size_average=None,
        ignore_index: int = -100,
        reduce=None,
        reduction: str = "mean",
        label_smoothing: float = 0.0,
    ) -> None:
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing

    def forward(self, input: Array, target: Array) -> Array:
        return F.cross_entropy(
            input,
            target,
            weight=self.weight,
            ignore_index=self.ignore_index,
            reduction=self.reduction,
            label_smoothing=self.label_smoothing,
        )


class NLLLoss(_WeightedLoss):
    """Negative log-likelihood of class indices under log-probabilities (PyTorch's
    ``nn.NLLLoss``)."""

    def __init__(
        self,
        weight: Array | None = None,
        size_average=None,
        ignore_index: int = -100,
        reduce=None,
        reduction: str = "mean",
    ) -> None:
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index

    def forward(self, input: Array, target: Array) -> Array:
        return F.nll_loss(
            input,
            target,
            weight=self.weight,
            ignore_index=self.ignore_index,
            reduction=self.reduction,
        )


class BCELoss(_WeightedLoss):
    """Binary cross entropy of probabilities (PyTorch's ``nn.BCELoss``)."""

    def forward(self, input: Array, target: Array) -> Array:
        return F.binary_cross_entropy(input, target, weight=self.weight, reduction=self.reduction)


class BCEWithLogitsLoss(_Loss):
    """Sigmoid and binary cross entropy in one stable expression (PyTorch's
    ``nn.BCEWithLogitsLoss``: ``weight`` and ``pos_weight`` are buffers)."""

    def __init__(
        self,
        weight: Array | None = None,
        size_average=None,
        reduce=None,
        reduction: str = "mean",
        pos_weight: Array | None = None,
    ) -> None:
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)
        self.register_buffer("pos_weight", pos_weight)
        self.weight: Array | None
        self.pos_weight: Array | None

    def forward(self, input: Array, target: Array) -> Array:
        return F.binary_cross_entropy_with_logits(
            input,
            target,
            self.weight,
            pos_weight=self.pos_weight,
            reduction=self.reduction,
        )


class KLDivLoss(_Loss):
    """Kullback-Leibler divergence of log-probabilities (PyTorch's ``nn.KLDivLoss``:
    ``reduction`` also takes 'batchmean'; ``log_target``)."""

    def __init__(
        self, size_average=None, reduce=None, reduction: str = "mean", log_target: bool = False
    ) -> None:
        super().__init__(size_average, reduce, reduction)
        self.log_target = log_target

    def forward(self, input: Array, target: Array) -> Array:
        return F.kl_div(input, target, reduction=self.reduction, log_target=self.log_target)
