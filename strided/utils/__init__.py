"""strided.utils: utilities with PyTorch's names (``strided.utils.data``: datasets, loaders)."""

from . import data

__all__ = ["data"]
