"""CPU memory: a 1-D NumPy array is the buffer; NumPy views share it with other libraries."""

from __future__ import annotations

import numpy as np

from ..._layout import span_view
from ..._shapes import contiguous_strides, prod

_C_LAYOUTS: dict = {}  # shape -> (C-order strides, size): the common layout, found in one lookup


def numpy_view(a) -> np.ndarray:
    """A NumPy ndarray sharing the memory of the cpu array ``a`` (any strides)."""
    buf = a._buf
    shape = a._shape
    layout = _C_LAYOUTS.get(shape)
    if layout is None:
        layout = (contiguous_strides(shape), prod(shape))
        if len(_C_LAYOUTS) < 4096:  # (shapes recur; the cache stays bounded)
            _C_LAYOUTS[shape] = layout
    if a._strides == layout[0] and layout[1]:
        # C-ordered, not empty: a slice of the buffer reshaped, without the tests below (64 x 64:
        # 0.8 -> ~0.4 us)
        offset = a._offset
        return buf[offset : offset + layout[1]].reshape(shape)
    isz = buf.itemsize
    if buf.size == 0 or 0 in a._shape:
        return np.empty(a._shape, dtype=buf.dtype)
    shape, strides = a._shape, a._strides
    size = 1  # C-ordered: a slice of the buffer reshaped (~0.6 us less than np.ndarray's)
    for i in range(len(shape) - 1, -1, -1):
        if shape[i] != 1 and strides[i] != size:
            break
        size *= shape[i]
    else:
        return buf[a._offset : a._offset + size].reshape(shape)
    return np.ndarray(
        a._shape,
        dtype=buf.dtype,
        buffer=buf,
        offset=a._offset * isz,
        strides=tuple(s * isz for s in a._strides),
    )


def adopt(out, res: np.ndarray) -> None:
    """``out`` (fresh from the dispatcher, C-ordered, nobody else holds it) made to hold the
    host result ``res``: its memory taken over where ``res`` is laid out as ``out`` is, else
    copied in.  Taking it saves a pass over the result and the first touch of ``out``'s own
    pages (1M-point float64 rfft: ~0.9 ms of its ~9; 1000x1000 cholesky ~0.6 ms of its ~8.5)."""
    buf = out._buf
    if (
        res.flags.c_contiguous
        and res.dtype == buf.dtype
        and res.shape == out._shape
        and out._offset == 0
        and res.size == buf.size
    ):
        out._buf = res.reshape(-1)
    else:
        np.copyto(numpy_view(out), res)


def import_host(a: np.ndarray) -> tuple:
    """``(buf, shape, strides, offset)`` viewing the NumPy array ``a`` (strides and offset in
    elements): the buffer is a 1-D array over the span ``a`` covers.  Read-only, unaligned or
    oddly strided memory is copied once (read-only buffers would compile separate numba kernels,
    unaligned ones would break the kernels' assumptions)."""
    flags = a.flags
    if flags.c_contiguous and flags.writeable and flags.aligned and a.size:
        # the common case first (a NumPy array made by NumPy, a list converted): the flat view
        # is the buffer, the strides C's (size-1 axes never step, whatever NumPy says); a
        # vector is its own buffer (no view whose base makes in-place operators test overlap)
        shape = a.shape
        return a if len(shape) == 1 else a.reshape(-1), shape, contiguous_strides(shape), 0
    isz = a.itemsize
    if not flags.writeable or not flags.aligned or any(s % isz for s in a.strides):
        a = a.copy()
    shape = a.shape
    if a.flags.c_contiguous and a.size:
        # C order (the common case: a list converted, a NumPy array made by NumPy): the flat
        # view is the buffer, the strides C's (size-1 axes never step, whatever NumPy says)
        return a.reshape(-1), shape, contiguous_strides(shape), 0
    if a.size == 0:
        return np.empty(0, a.dtype), shape, contiguous_strides(shape), 0
    buf, el, offset = span_view(a, np.lib.stride_tricks.as_strided)
    return buf, shape, el, offset
