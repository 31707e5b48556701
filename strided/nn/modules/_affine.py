"""The learnable per-feature scale and shift that BatchNorm, LayerNorm and GroupNorm share:
PyTorch registers ``weight`` (ones) and ``bias`` (zeros), or ``None`` in their place."""

from __future__ import annotations

from ... import _namespace as xp
from .. import init
from ..parameter import Parameter
from .module import Module


def factory_kwargs(dtype, device) -> dict:
    """Creation keywords for a layer's tensors: float32 unless a dtype is given."""
    return {"dtype": xp.float32 if dtype is None else dtype, "device": device}


def register_affine(module: Module, shape: tuple, affine: bool, bias: bool, kw: dict) -> None:
    """Register ``weight`` and ``bias`` of ``shape`` on ``module`` (``bias`` only when asked),
    or ``None`` for each that is absent, so that state_dict keys match PyTorch's."""
    if affine:
        module.weight = Parameter(xp.empty(shape, **kw))
    else:
        module.register_parameter("weight", None)
    if affine and bias:
        module.bias = Parameter(xp.empty(shape, **kw))
    else:
        module.register_parameter("bias", None)


def reset_affine(module: Module) -> None:
    """PyTorch's initialisation of the affine parameters: weight ones, bias zeros."""
    if module.weight is not None:
        init.ones_(module.weight)
    if getattr(module, "bias", None) is not None:
        init.zeros_(module.bias)
