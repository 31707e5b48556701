"""The layers of ``strided.nn`` (each file owns a family, as in PyTorch's ``torch.nn.modules``)."""

from .batchnorm import BatchNorm1d, BatchNorm2d, BatchNorm3d
from .loss import (
    BCELoss,
    BCEWithLogitsLoss,
    CrossEntropyLoss,
    HuberLoss,
    KLDivLoss,
    L1Loss,
    MSELoss,
    NLLLoss,
    SmoothL1Loss,
)
from .module import Module
from .normalization import GroupNorm, LayerNorm, RMSNorm

__all__ = ["Module"]
__all__ += ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "LayerNorm", "GroupNorm", "RMSNorm"]
__all__ += ["MSELoss", "L1Loss", "SmoothL1Loss", "HuberLoss", "CrossEntropyLoss", "NLLLoss"]
__all__ += ["BCELoss", "BCEWithLogitsLoss", "KLDivLoss"]
