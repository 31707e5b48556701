"""The layers of ``strided.nn`` (each file owns a family, as in PyTorch's ``torch.nn.modules``)."""

from .module import Module

__all__ = ["Module"]
