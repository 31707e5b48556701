"""Batch normalisation layers: BatchNorm1d, BatchNorm2d, BatchNorm3d (PyTorch's arguments,
parameters, buffers and running-statistics semantics)."""

from __future__ import annotations

from strided._array import Array
from strided.autograd import no_grad

from ... import _namespace as xp
from .. import _functional_norm as F
from ._affine import factory_kwargs, register_affine, reset_affine
from .module import Module

__all__ = ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d"]


class _BatchNorm(Module):
    """Shared body of the BatchNorm layers.

    Parameters ``weight`` (ones) and ``bias`` (zeros) when ``affine``; buffers
    ``running_mean`` (zeros), ``running_var`` (ones) and ``num_batches_tracked`` (int64 0) when
    ``track_running_stats``.  In training the batch statistics normalise and the running ones
    are updated with ``momentum`` (``None``: the cumulative average over
    ``num_batches_tracked`` batches) using the unbiased batch variance; in evaluation the running
    statistics normalise (the batch ones when not tracked).
    """

    _version = 2
    _ndims: tuple = ()
    _layout = ""

    def __init__(
        self,
        num_features: int,
        eps: float = 1e-5,
        momentum: float | None = 0.1,
        affine: bool = True,
        track_running_stats: bool = True,
        device=None,
        dtype=None,
        *,
        bias: bool = True,
    ) -> None:
        super().__init__()
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        kw = factory_kwargs(dtype, device)
        register_affine(self, (num_features,), affine, bias, kw)
        if track_running_stats:
            self.register_buffer("running_mean", xp.zeros((num_features,), **kw))
            self.register_buffer("running_var", xp.ones((num_features,), **kw))
            self.register_buffer("num_batches_tracked", xp.zeros((), dtype=xp.int64, device=device))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)
        self.reset_parameters()

    def reset_running_stats(self) -> None:
        """Running mean 0, running variance 1, no batch tracked."""
        if self.track_running_stats:
            with no_grad():
                self.running_mean[...] = 0.0
                self.running_var[...] = 1.0
                self.num_batches_tracked[...] = 0

    def reset_parameters(self) -> None:
        self.reset_running_stats()
        reset_affine(self)

    def _check_input(self, input: Array) -> None:
        name = type(self).__name__
        if not isinstance(input, Array):
            raise TypeError(f"{name}: input must be a strided array, got {type(input).__name__}")
        if input.ndim not in self._ndims:
            dims = " or ".join(f"{d}D" for d in self._ndims)
            raise ValueError(
                f"{name}: expected {dims} input of shape {self._layout}, got {input.ndim}D input "
                f"of shape {tuple(input.shape)}"
            )
        if input.shape[1] != self.num_features:
            raise ValueError(
                f"{name}: expected input with {self.num_features} channels (axis 1 of "
                f"{self._layout}), got input of shape {tuple(input.shape)}"
            )

    def forward(self, input: Array) -> Array:
        self._check_input(input)
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            with no_grad():
                self.num_batches_tracked += 1
            if self.momentum is None and self.num_batches_tracked.device != "meta":
                factor = 1.0 / int(self.num_batches_tracked)  # cumulative moving average
        if self.training:
            bn_training = True
        else:
            bn_training = self.running_mean is None and self.running_var is None
        use_buffers = not self.training or self.track_running_stats
        return F.batch_norm(
            input,
            self.running_mean if use_buffers else None,
            self.running_var if use_buffers else None,
            self.weight,
            self.bias,
            bn_training,
            factor,
            self.eps,
        )

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, *args) -> None:
        # state dicts from before num_batches_tracked existed (version < 2, or without version
        # metadata) keep the current count, as PyTorch does
        version = (local_metadata or {}).get("version")
        key = prefix + "num_batches_tracked"
        if (version is None or version < 2) and self.track_running_stats and key not in state_dict:
            nbt = self.num_batches_tracked
            keep = nbt is not None and nbt.device != "meta"
            state_dict[key] = nbt if keep else xp.zeros((), dtype=xp.int64)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, *args)

    def extra_repr(self) -> str:
        return (
            f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
            f"affine={self.affine}, bias={self.bias is not None}, "
            f"track_running_stats={self.track_running_stats}"
        )


class BatchNorm1d(_BatchNorm):
    """Batch normalisation of (N, C) or (N, C, L) inputs (PyTorch's ``nn.BatchNorm1d``)."""

    _ndims = (2, 3)
    _layout = "(N, C) or (N, C, L)"


class BatchNorm2d(_BatchNorm):
    """Batch normalisation of (N, C, H, W) inputs (PyTorch's ``nn.BatchNorm2d``)."""

    _ndims = (4,)
    _layout = "(N, C, H, W)"


class BatchNorm3d(_BatchNorm):
    """Batch normalisation of (N, C, D, H, W) inputs (PyTorch's ``nn.BatchNorm3d``)."""

    _ndims = (5,)
    _layout = "(N, C, D, H, W)"
