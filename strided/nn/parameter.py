"""``Parameter``: an array that a :class:`~strided.nn.Module` registers as a learnable weight."""

from __future__ import annotations

from .. import _dtypes as dt
from .._array import Array

__all__ = ["Parameter", "Buffer"]


class Parameter(Array):
    """An Array subclass that modules register as parameters (PyTorch's ``nn.Parameter``).

    ``Parameter(data, requires_grad=True)`` shares ``data``'s memory and is a leaf that requires
    grad (when ``data`` is floating point).  Operations on a parameter return plain arrays.
    """

    def __new__(cls, data: Array | None = None, requires_grad: bool = True) -> Parameter:
        if data is None:
            from .._ops.creation import empty

            data = empty((0,), dtype=dt.float32)
        elif not isinstance(data, Array):
            raise TypeError(
                f"Parameter: data must be a strided array, got {type(data).__name__}; "
                "convert it with strided.asarray()"
            )
        return Array._make_subclass(cls, data, bool(requires_grad))

    def __init__(self, data: Array | None = None, requires_grad: bool = True) -> None:
        pass  # everything happens in __new__ (Array.__init__ refuses direct construction)

    def __repr__(self) -> str:
        return "Parameter containing:\n" + Array.__repr__(self)

    def __deepcopy__(self, memo: dict) -> Parameter:
        if id(self) in memo:
            return memo[id(self)]
        from .._ops.creation import asarray

        result = Parameter(asarray(self.detach(), copy=True), self.requires_grad)
        if self.grad is not None:
            result.grad = asarray(self.grad.detach(), copy=True)
        memo[id(self)] = result
        return result

    def __reduce_ex__(self, protocol):
        raise TypeError(
            "Parameter: pickling is not supported; save a state dict with strided.save_file"
        )


class Buffer:
    """Marks an array to be registered as a buffer when assigned to a module attribute
    (PyTorch's ``nn.Buffer``): ``self.running_mean = Buffer(x, persistent=True)``."""

    __slots__ = ("data", "persistent")

    def __init__(self, data: Array, *, persistent: bool = True) -> None:
        if not isinstance(data, Array):
            raise TypeError(f"Buffer: data must be a strided array, got {type(data).__name__}")
        self.data = data
        self.persistent = persistent
