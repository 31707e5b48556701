"""Hypothesis strategies: shapes, values, and strided arrays in every memory layout.

A *layout* is how the same logical values sit in memory: ``contiguous``, ``transposed`` (reversed
strides), ``sliced`` (every other element of a larger buffer), ``negative`` (negative strides) and
``broadcast`` (stride 0 along a repeated axis).  Each strategy returns the NumPy values together
with the strided array, so NumPy can serve as the oracle.
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

import strided as xp
from strided import _dtypes as sdt

LAYOUTS = ("contiguous", "transposed", "sliced", "negative", "broadcast")

shapes = st.lists(st.integers(0, 5), min_size=0, max_size=4).map(tuple)
nonempty_shapes = st.lists(st.integers(1, 5), min_size=0, max_size=4).map(tuple)


def values(rng: np.random.Generator, shape, d: sdt.DType, domain=(-5.0, 5.0), int_domain=(-20, 20)):
    """Random NumPy values of dtype ``d`` within the given domains."""
    npd = d.numpy
    if d.kind == sdt.BOOL:
        return rng.integers(0, 2, size=shape).astype(bool)
    if d.kind in sdt.INTEGER_KINDS:
        info = np.iinfo(npd)
        lo, hi = max(int_domain[0], info.min), min(int_domain[1], info.max)
        return rng.integers(lo, hi + 1, size=shape, dtype=np.int64).astype(npd)
    lo, hi = domain
    re = rng.uniform(lo, hi, size=shape)
    if d.kind == sdt.COMPLEX:
        im = rng.uniform(lo, hi, size=shape) * 0.5
        return (re + 1j * im).astype(npd)
    return re.astype(npd)


def in_layout(a: np.ndarray, layout: str, device=None) -> tuple[np.ndarray, xp.Array]:
    """``(values, strided array)`` holding ``a`` (or, for ``broadcast``, a repeated slice of it).

    The views are built with namespace functions, so the same layout (strides included) results
    on every ``device``, meta too."""
    if layout == "contiguous" or a.ndim == 0:
        return a, xp.asarray(a.copy(), device=device)
    if layout == "transposed":
        t = xp.asarray(np.ascontiguousarray(a.transpose()), device=device)
        return a, xp.permute_dims(t, tuple(range(a.ndim - 1, -1, -1)))
    if layout == "sliced":
        big = np.zeros(tuple(2 * s + 1 for s in a.shape), dtype=a.dtype)
        big[tuple(slice(1, None, 2) for _ in a.shape)] = a
        return a, xp.asarray(big, device=device)[tuple(slice(1, None, 2) for _ in a.shape)]
    if layout == "negative":
        flipped = np.ascontiguousarray(a[tuple(slice(None, None, -1) for _ in a.shape)])
        return a, xp.asarray(flipped, device=device)[tuple(slice(None, None, -1) for _ in a.shape)]
    if layout == "broadcast":
        row = a[:1]
        b = xp.broadcast_to(xp.asarray(row.copy(), device=device), a.shape)
        return np.broadcast_to(row, a.shape), b
    raise ValueError(layout)


@st.composite
def seeds(draw):
    return np.random.default_rng(draw(st.integers(0, 2**32 - 1)))


def to_numpy(x: xp.Array) -> np.ndarray:
    return np.asarray(x)
