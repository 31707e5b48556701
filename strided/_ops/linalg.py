"""Matrix multiplication (the main namespace's ``matmul``); the linalg extension builds on it."""

from __future__ import annotations

from .. import _dtypes as dt
from .._array import Array
from .._shapes import broadcast_shapes
from ..dispatch import declare
from .core import astype_to, check_dtype, empty_on, run, same_device, to_array

__all__ = ["matmul"]

MATMUL = declare("matmul", "matmul", "numeric")


def matmul(x1: Array, x2: Array, /) -> Array:
    """Matrix product with batch broadcasting; 1-D operands are promoted as in NumPy.

    Floating-point products run on BLAS; integer products on strided's own kernel.
    """
    a, b = to_array(x1, "matmul"), to_array(x2, "matmul")
    device = same_device("matmul", a, b)
    check_dtype("matmul", a._dtype, "numeric")
    check_dtype("matmul", b._dtype, "numeric")
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError(
            f"matmul: operands must be at least 1-D, got shapes {a._shape} and {b._shape}"
        )
    d = dt.promote(a._dtype, b._dtype)
    a_vec, b_vec = a.ndim == 1, b.ndim == 1
    if a_vec:
        a = a._view((1,) + a._shape, (0,) + a._strides, a._offset)
    if b_vec:
        b = b._view(b._shape + (1,), b._strides + (0,), b._offset)
    m, k = a._shape[-2:]
    k2, n = b._shape[-2:]
    if k != k2:
        raise ValueError(
            f"matmul: shapes {x1.shape} and {x2.shape} are not aligned: "
            f"contracted dimensions {k} and {k2} differ"
        )
    batch = broadcast_shapes(a._shape[:-2], b._shape[:-2], op="matmul")
    out = empty_on(batch + (m, n), d, device)
    if device.type != "meta":
        run(MATMUL, out, astype_to(a, d), astype_to(b, d), batch_shape=batch)
    if a_vec or b_vec:
        shape = batch + ((m,) if not a_vec else ()) + ((n,) if not b_vec else ())
        strides = out._strides[: len(batch)]
        if not a_vec:
            strides += (out._strides[-2],)
        if not b_vec:
            strides += (out._strides[-1],)
        out = out._view(shape, strides, out._offset)
    return out
