"""The CPU backend: registers numba kernels (``kernels.py``) for every primitive.

Arrays arrive here already validated, cast to the compute dtype and allocated; this layer only
turns them into buffer operands ``(buf, offset, strides)`` with broadcast strides, and calls the
buffer-level kernels.  numba is imported on first use, not at ``import strided``.
"""

from __future__ import annotations

import numpy as np

from ..._shapes import broadcast_strides
from ...dispatch import primitives, register

_kernels = None


def _k():
    global _kernels
    if _kernels is None:
        from . import kernels

        _kernels = kernels
    return _kernels


def _operand(a, shape):
    """``a`` as a buffer operand viewed with ``shape`` (stride 0 on broadcast dimensions)."""
    st = a._strides if a._shape == shape else broadcast_strides(a._shape, a._strides, shape)
    return (a._buf, a._offset, st)


def _out(a):
    return (a._buf, a._offset, a._strides)


def _elementwise(name: str):
    def kernel(out, *inputs):
        shape = out._shape
        _k().elementwise(name, _out(out), [_operand(a, shape) for a in inputs], shape)

    kernel.__name__ = f"{name}_cpu"
    return kernel


def _reduction(name: str):
    def kernel(out, x, *, axes):
        _k().reduce(name, _out(out), _out(x), x._shape, axes)

    kernel.__name__ = f"{name}_cpu"
    return kernel


def _scan(name: str):
    def kernel(out, x, *, axis):
        _k().cumulative(name, _out(out), _out(x), x._shape, axis)

    kernel.__name__ = f"cumulative_{name}_cpu"
    return kernel


def empty_cpu(size: int, dtype):
    # NumPy is the CPU allocator: a 1-D ndarray is the buffer
    return np.empty(size, dtype.numpy)


def copy_cpu(out, x):
    _k().copy(_out(out), _operand(x, out._shape), out._shape)


def fill_cpu(out, value):
    if not out._shape:  # 0-d: Python scalars in binary ops land here on every call
        out._buf[out._offset] = value
        return
    _k().fill(_out(out), out._shape, value)


def where_cpu(out, cond, x1, x2):
    shape = out._shape
    _k().where(_out(out), _operand(cond, shape), _operand(x1, shape), _operand(x2, shape), shape)


def matmul_cpu(out, a, b, *, batch_shape):
    m, k = a._shape[-2:]
    n = b._shape[-1]
    a_op = (a._buf, a._offset, broadcast_strides(a._shape, a._strides, batch_shape + (m, k)))
    b_op = (b._buf, b._offset, broadcast_strides(b._shape, b._strides, batch_shape + (k, n)))
    _k().matmul(_out(out), a_op, b_op, batch_shape, m, k, n)


def arange_cpu(out, *, start, step):
    # creation of an index sequence: NumPy writes it straight into our buffer
    n = out._shape[0]
    if n:
        values = start + step * np.arange(n)
        out._buf[out._offset : out._offset + n] = values.astype(out._dtype.numpy)


def linspace_cpu(out, *, start, stop, endpoint):
    n = out._shape[0]
    if n:
        out._buf[out._offset : out._offset + n] = np.linspace(
            start, stop, n, endpoint=endpoint, dtype=out._dtype.numpy
        )


def register_all() -> None:
    """Register a CPU kernel for every declared primitive."""
    special = {
        "empty": empty_cpu,
        "copy": copy_cpu,
        "fill": fill_cpu,
        "where": where_cpu,
        "matmul": matmul_cpu,
        "arange": arange_cpu,
        "linspace": linspace_cpu,
    }
    for name, prim in primitives().items():
        if name in special:
            fn = special[name]
        elif prim.kind in ("unary", "binary"):
            fn = _elementwise(name)
        elif prim.kind == "reduction":
            fn = _reduction(name)
        elif prim.kind == "scan":
            fn = _scan(name.removeprefix("cumulative_"))
        else:
            raise RuntimeError(f"cpu backend: no kernel rule for primitive {name!r} ({prim.kind})")
        register(name, "cpu")(fn)
