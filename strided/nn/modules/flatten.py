"""``Flatten`` and ``Unflatten``: reshapes of a range of dimensions (views where possible)."""

from __future__ import annotations

from ... import _namespace as xp
from ..._array import Array
from .module import Module

__all__ = ["Flatten", "Unflatten"]


class Flatten(Module):
    """Merge dimensions ``start_dim`` .. ``end_dim`` into one."""

    def __init__(self, start_dim: int = 1, end_dim: int = -1) -> None:
        super().__init__()
        self.start_dim = start_dim
        self.end_dim = end_dim

    def forward(self, input: Array) -> Array:
        shape = input.shape
        n = max(len(shape), 1)
        s, e = self.start_dim, self.end_dim
        if not (-n <= s < n and -n <= e < n):
            raise IndexError(
                f"Flatten(start_dim={s}, end_dim={e}): Dimension out of range for input of "
                f"shape {shape}"
            )
        s, e = s % n, e % n
        if not shape:
            return xp.reshape(input, (1,))
        if s > e:
            raise RuntimeError(
                f"Flatten: start_dim {self.start_dim} comes after end_dim {self.end_dim} for "
                f"input of shape {shape}"
            )
        merged = 1
        for d in shape[s : e + 1]:
            merged *= d
        return xp.reshape(input, (*shape[:s], merged, *shape[e + 1 :]))

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    """Split dimension ``dim`` into ``unflattened_size`` (one entry may be -1)."""

    def __init__(self, dim: int, unflattened_size) -> None:
        super().__init__()
        if not isinstance(unflattened_size, (tuple, list)):
            raise TypeError(
                f"Unflatten: unflattened_size must be a tuple or list of ints, got "
                f"{type(unflattened_size).__name__}"
            )
        self.dim = dim
        self.unflattened_size = tuple(unflattened_size)

    def forward(self, input: Array) -> Array:
        shape = input.shape
        n = len(shape)
        if not -n <= self.dim < n:
            raise IndexError(
                f"Unflatten(dim={self.dim}): Dimension out of range for input of shape {shape}"
            )
        d = self.dim % n
        sizes = list(self.unflattened_size)
        known = 1
        for s in sizes:
            if s != -1:
                known *= s
        if sizes.count(-1) > 1 or (
            -1 not in sizes
            and known != shape[d]
            or -1 in sizes
            and (known == 0 or shape[d] % known)
        ):
            raise RuntimeError(
                f"Unflatten(dim={self.dim}, unflattened_size={self.unflattened_size}): the sizes "
                f"do not multiply to dimension {d} of input of shape {shape} ({shape[d]})"
            )
        if -1 in sizes:
            sizes[sizes.index(-1)] = shape[d] // known
        return xp.reshape(input, (*shape[:d], *sizes, *shape[d + 1 :]))

    def extra_repr(self) -> str:
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"
