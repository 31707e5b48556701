"""Flatten parameters into one vector and back (PyTorch's ``parameters_to_vector`` /
``vector_to_parameters``)."""

from __future__ import annotations

from collections.abc import Iterable

from ... import _namespace as xp
from ..._array import Array
from ..._grad_state import Mode

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def parameters_to_vector(parameters: Iterable[Array]) -> Array:
    """The parameters flattened and concatenated into one 1-D array (differentiable)."""
    if isinstance(parameters, Array):
        raise TypeError(
            "parameters_to_vector: expected an iterable of arrays (e.g. module.parameters()), "
            "got a single array"
        )
    params = list(parameters)
    if not params:
        raise ValueError("parameters_to_vector: no parameters given")
    device = params[0].device
    for p in params:
        if p.device != device:
            raise TypeError(
                f"parameters_to_vector: found two parameters on different devices, {device} and "
                f"{p.device}"
            )
    return xp.concat([xp.reshape(p, (-1,)) for p in params])


def vector_to_parameters(vec: Array, parameters: Iterable[Array]) -> None:
    """Copy consecutive slices of the 1-D ``vec`` into ``parameters`` (in place, unrecorded)."""
    if not isinstance(vec, Array):
        raise TypeError(f"expected a strided array, but got: {type(vec).__name__}")
    params = list(parameters)
    total = sum(p.size for p in params)
    if vec.ndim != 1 or vec.shape[0] != total:
        raise ValueError(
            f"vector_to_parameters: vec has shape {vec.shape}, but the parameters hold {total} "
            "elements"
        )
    pointer = 0
    prev = Mode.enabled
    Mode.enabled = False
    try:
        for p in params:
            if p.device != vec.device:
                raise TypeError(
                    f"vector_to_parameters: parameter on {p.device}, vector on {vec.device}"
                )
            n = p.size
            if p.device.type != "meta":
                p[...] = xp.astype(xp.reshape(vec[pointer : pointer + n], p.shape), p.dtype)
            pointer += n
    finally:
        Mode.enabled = prev
