"""The CPU backend: registers numba kernels (``kernels.py``) for every primitive.

Arrays arrive here already validated, cast to the compute dtype and allocated; this layer only
turns them into buffer operands ``(buf, offset, strides)`` with broadcast strides, and calls the
buffer-level kernels.  numba is imported on first use, not at ``import strided``.
"""

from __future__ import annotations

import numpy as np

from ..._layout import split_outer as _split_outer
from ..._shapes import broadcast_strides
from ...dispatch import primitives, register
from . import _linalg

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
    serial = []  # the op's serial loop, looked up on first use

    def kernel(out, *inputs):
        shape = out._shape
        size = out._buf.size  # out is fresh from the dispatcher: dense, offset 0
        st = out._strides
        k = _k()
        if 0 < size < k.PARALLEL_THRESHOLD:
            # the per-call fast path: inputs laid out exactly like the output, or 0-d scalars,
            # need no layout planning
            args = [out._buf, 0, 0, 0, 1]
            for a in inputs:
                if a._shape == shape and a._strides == st:
                    args += (a._buf, a._offset, 0, 0, 1)
                elif not a._shape:
                    args += (a._buf, a._offset, 0, 0, 0)
                else:
                    break
            else:
                if not serial:
                    serial.append(k._loops(name)[0])
                serial[0](*args, 1, 1, size)
                return
        k.elementwise(name, _out(out), [_operand(a, shape) for a in inputs], shape)

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


# -- index kernels (argmax/argmin, gathers, sorting, searching) -----------------------------------
def _ix():
    from . import _kern_index

    return _kern_index


def _argreduce(find_max: bool):
    def kernel(out, x):
        # x arrives with the reduced axis last; the kept dims are walked in blocks of rank 2
        if not out.size:
            return  # an empty kept dimension: nothing to write (and no block may be walked)
        k = _ix()
        kept, n = x._shape[:-1], x._shape[-1]
        blocks = list(_split_outer(kept or (1,), [x._strides[:-1] or (0,)], [x._offset], 2))
        done = 0
        for (xo,), (n0, n1), (st,) in blocks:
            view = out._buf[out._offset + done : out._offset + done + n0 * n1]
            k.argreduce(view, x._buf, xo, st[0], st[1], x._strides[-1], n0, n1, n, find_max)
            done += n0 * n1

    return kernel


def take_cpu(out, x3, indices):
    n_pre, n_ax, n_post = x3._shape
    bad = _ix().take3(
        out._buf,
        x3._buf,
        x3._offset,
        *x3._strides,
        indices._buf,
        indices._offset,
        indices._strides[0],
        n_pre,
        indices._shape[0],
        n_post,
        n_ax,
    )
    if bad >= 0:
        raise IndexError(
            f"take: index {int(indices[bad])} is out of bounds for an axis of size {n_ax}"
        )


def take_along_axis_cpu(out, x2, idx2):
    bad = _ix().take_rows(
        out._buf,
        x2._buf,
        x2._offset,
        *x2._strides,
        idx2._buf,
        idx2._offset,
        *idx2._strides,
        idx2._shape[0],
        idx2._shape[1],
        x2._shape[1],
    )
    if bad >= 0:
        raise IndexError(
            f"take_along_axis: an index in row {bad} is out of bounds for an axis "
            f"of size {x2._shape[1]}"
        )


def _blocks2(shape, strides):
    """The trailing block of a gather/scatter as a rank-2 (shape, strides) pair.

    The block's other side is dense in C order, so dimensions are merged in place (never
    reordered) where the strided side is contiguous across them.
    """
    if 0 in shape:
        return (0, 0), (0, 0)
    sshape, sstrides = [], []
    for n, st in zip(shape, strides):
        if n == 1:
            continue
        if sshape and sstrides[-1] == st * n:
            sshape[-1] *= n
            sstrides[-1] = st
        else:
            sshape.append(n)
            sstrides.append(st)
    if len(sshape) > 2:
        raise IndexError(
            f"integer-array indexing: the unindexed dimensions {tuple(shape)} with strides "
            f"{tuple(strides)} do not merge into a 2-D block"
        )
    pad = 2 - len(sshape)
    return (1,) * pad + tuple(sshape), (0,) * pad + tuple(sstrides)


def gather_cpu(out, x, offsets, *, trailing_strides):
    (t0, t1), (s0, s1) = _blocks2(out._shape[offsets.ndim :], trailing_strides)
    flat = offsets._buf[offsets._offset : offsets._offset + offsets.size]
    _ix().gather_blocks(out._buf, x._buf, flat, t0, t1, s0, s1)


def scatter_cpu(x, offsets, values, *, trailing_strides):
    (t0, t1), (s0, s1) = _blocks2(values._shape[offsets.ndim :], trailing_strides)
    flat = offsets._buf[offsets._offset : offsets._offset + offsets.size]
    _ix().scatter_blocks(x._buf, flat, values._buf[values._offset :], t0, t1, s0, s1)


def scatter_add_cpu(x, offsets, values, *, trailing_strides):
    (t0, t1), (s0, s1) = _blocks2(values._shape[offsets.ndim :], trailing_strides)
    flat = offsets._buf[offsets._offset : offsets._offset + offsets.size]
    _ix().scatter_add_blocks(x._buf, flat, values._buf[values._offset :], t0, t1, s0, s1)


def _sort_kernel(name: str):
    def kernel(out, x, *, descending):
        k = getattr(_ix(), name + ("_complex" if x._dtype.kind == "complex floating" else ""))
        n = x._shape[-1]
        rows = out.size // n if n else 0
        if not rows:
            return
        # rows of the (contiguous) output correspond to C-order rows of x's leading dims
        lead = x._shape[:-1]
        done = 0
        for (xo,), (n0, n1), (st,) in _split_outer(
            lead or (1,), [x._strides[:-1] or (0,)], [x._offset], 2
        ):
            for i in range(n0):
                k(
                    out._buf[(done + i * n1) * n :],
                    x._buf,
                    xo + i * st[0],
                    st[1],
                    x._strides[-1],
                    n1,
                    n,
                    descending,
                )
            done += n0 * n1

    return kernel


def searchsorted_cpu(out, x1, x2, *, right):
    a = np.ascontiguousarray(x1._numpy_view())  # 1-D: a view unless x1 is strided
    v = np.ascontiguousarray(x2._numpy_view()).reshape(-1)
    _ix().searchsorted(out._buf[out._offset :], a, v, right)


def nonzero_cpu(out, x):
    dense = np.ascontiguousarray(x._numpy_view()).reshape(-1)
    shape = np.asarray(x._shape, dtype=np.int64)
    _ix().nonzero_coords(out._buf[out._offset :], dense, shape, out._shape[1])


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
        "argmax": _argreduce(True),
        "argmin": _argreduce(False),
        "take": take_cpu,
        "take_along_axis": take_along_axis_cpu,
        "gather": gather_cpu,
        "scatter": scatter_cpu,
        "scatter_add": scatter_add_cpu,
        "sort": _sort_kernel("sort_rows"),
        "argsort": _sort_kernel("argsort_rows"),
        "searchsorted": searchsorted_cpu,
        "nonzero": nonzero_cpu,
    }
    from ._fft import KERNELS as fft_kernels

    special.update(fft_kernels)
    special.update(_linalg.KERNELS)  # LAPACK-backed linalg primitives
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
