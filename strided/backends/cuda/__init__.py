"""The cuda backend: CUDA C kernels (``kernels/``) for the primitives, on CuPy or the host.

Arrays arrive validated, cast to the compute dtype and allocated (the dispatcher's work); this
layer simplifies their layouts exactly as the cpu backend does (``strided._layout``), picks the
kernel instantiation (dtype, rank, 32- or 64-bit indices) and launches it through the runtime
(``_runtime``): CuPy's ``RawModule`` and memory pool on a GPU, or the host execution layer
(``_host``) and NumPy memory where there is none (``STRIDED_CUDA_HOST=1``).  The launch code
below is the same for both: arguments are packed as CuPy packs them.

The package root installs this backend only where CuPy is installed (or host execution is asked
for); nothing here imports CuPy until a GPU runtime is made.
"""

from __future__ import annotations

import functools

import numpy as np

from ... import _dtypes as dt
from ..._layout import simplify, span_view, split_outer
from ..._shapes import broadcast_strides, reshape_strides
from . import _library, _ops, _sources
from ._runtime import host_execution, runtime

__all__ = ["kernel_for", "host_execution", "runtime", "supported"]

_PY_SCALARS = frozenset({bool, int, float, complex})
BLOCK = 256
MAX_GRID = 65535
_I32_LIMIT = (1 << 31) - BLOCK * MAX_GRID  # headroom for the grid-stride increment
#: argmax/argmin over a flattened array of at least this many elements runs in two passes, over
#: blocks of about ARG_CHUNK elements each (one block per row would leave the GPU idle)
ARG_CHUNKED_MIN = 1 << 16
ARG_CHUNK = 1 << 14


def _cname(d) -> str:
    return _sources.CTYPE[d.name]


def _cname_np(np_dtype) -> str:
    return _sources.CTYPE[np.dtype(np_dtype).name]


def _function(module: tuple, name: str):
    source, names = module
    return runtime().module(source, names).get_function(name)


def _grid(total: int) -> int:
    return max(1, min(-(-total // BLOCK), MAX_GRID))


def _index_type(shape, strides_list, offsets) -> str:
    """``i32`` when every index the launch computes fits in 32 bits, else ``i64``."""
    total = 1
    for n in shape:
        total *= n
    if total >= _I32_LIMIT:
        return "i64"
    for st, off in zip(strides_list, offsets):
        reach = abs(off) + sum(abs(s) * (n - 1) for s, n in zip(st, shape))
        if reach >= _I32_LIMIT:
            return "i64"
    return "i32"


def _operands(out, inputs):
    """(buffers, strides, offsets, scalar values, scalar mask) of ``out`` and ``inputs`` seen with
    out's shape; a Python scalar becomes stride 0 over out's buffer plus its value."""
    shape = out._shape
    zeros = (0,) * len(shape)
    bufs, strides, offsets, values, mask = [out._buf], [out._strides], [out._offset], [], 0
    for k, a in enumerate(inputs):
        if type(a) in _PY_SCALARS:
            bufs.append(out._buf)
            strides.append(zeros)
            offsets.append(0)
            values.append(a)
            mask |= 1 << k
        else:
            st = a._strides if a._shape == shape else broadcast_strides(a._shape, a._strides, shape)
            bufs.append(a._buf)
            strides.append(st)
            offsets.append(a._offset)
            values.append(None)
    return bufs, strides, offsets, values, mask


def _launch_map(module, name_of, out, inputs, compute) -> None:
    """Run a map kernel over ``out`` and ``inputs`` (arrays or Python scalars) of dtype
    ``compute``: ``name_of(shape, ix)`` gives the instantiation (shape "1d" or "3d")."""
    bufs, strides, offsets, values, mask = _operands(out, inputs)
    sshape, sstrides, soffsets = simplify(out._shape, strides, offsets)
    if sshape is None:
        return  # nothing to compute in a zero-size problem
    np_t = compute.numpy.type
    vals = [np_t(0) if v is None else np_t(v) for v in values]
    mask = np.int32(mask)
    if len(sshape) <= 1:
        n = sshape[0] if sshape else 1
        st = [s[0] if s else 0 for s in sstrides]
        ix = _index_type((n,), [(s,) for s in st], soffsets)
        args = []
        for buf, off, s in zip(bufs, soffsets, st):
            args += (buf, off, s)
        _function(module, name_of("1d", ix))((_grid(n),), (BLOCK,), (*args, *vals, mask, n))
        return
    for offs, (n0, n1, n2), sts in split_outer(sshape, sstrides, soffsets, 3):
        ix = _index_type((n0, n1, n2), sts, offs)
        args = []
        for buf, off, s in zip(bufs, offs, sts):
            args += (buf, off, *s)
        fn = _function(module, name_of("3d", ix))
        fn((_grid(n0 * n1 * n2),), (BLOCK,), (*args, *vals, mask, n0, n1, n2))


def _unsupported(op: str, dtype) -> NotImplementedError:
    return NotImplementedError(f"{op}: no cuda kernel for dtype {dtype.name} yet")


def _elementwise(name: str, kind: str):
    arity, computes, _ = _ops.OPS[name]
    module = _sources.elementwise(name)

    def kernel(out, *inputs):
        compute = next(a._dtype for a in inputs if type(a) not in _PY_SCALARS)
        if compute.name not in computes:
            raise _unsupported(name, compute)
        o, c = out._dtype.name, compute.name
        _launch_map(
            module,
            lambda shape, ix: _sources.map_name(name, arity, shape, o, c, ix),
            out,
            inputs,
            compute,
        )

    kernel.__name__ = kernel.__qualname__ = f"{name}_cuda"
    return kernel


def copy_cuda(out, x) -> None:
    """Strided copy with a cast to out's dtype (any dtype to any)."""
    o, c = _cname(out._dtype), _cname(x._dtype)
    _launch_map(
        _sources.copy(out._dtype.name),
        lambda shape, ix: f"map1_{shape}<op_cast, {o}, {c}, {ix}>",
        out,
        (x,),
        x._dtype,
    )


def fill_cuda(out, value) -> None:
    """Write the scalar ``value`` into every element of the (possibly strided) ``out``."""
    o = _cname(out._dtype)
    _launch_map(
        _sources.copy(out._dtype.name),
        lambda shape, ix: f"map1_{shape}<op_cast, {o}, {o}, {ix}>",
        out,
        (value,),
        out._dtype,
    )


def full_cuda(out, *, fill_value) -> None:
    fill_cuda(out, fill_value)


def where_cuda(out, cond, x1, x2) -> None:
    bufs, strides, offsets, values, mask = _operands(out, (cond, x1, x2))
    sshape, sstrides, soffsets = simplify(out._shape, strides, offsets)
    if sshape is None:
        return
    np_t = out._dtype.numpy.type
    vals = [np_t(0) if v is None else np_t(v) for v in values[1:]]
    t = _cname(out._dtype)
    for offs, (n0, n1, n2), sts in split_outer(sshape, sstrides, soffsets, 3):
        ix = _index_type((n0, n1, n2), sts, offs)
        args = []
        for buf, off, s in zip(bufs, offs, sts):
            args += (buf, off, *s)
        fn = _function(_sources.where(), f"where_3d<{t}, {ix}>")
        # the mask's bits name x1 and x2 (bit 0 was the condition, never a scalar)
        fn((_grid(n0 * n1 * n2),), (BLOCK,), (*args, *vals, np.int32(mask >> 1), n0, n1, n2))


def clip_cuda(out, x, lo, hi) -> None:
    """out = minimum(maximum(x, lo), hi): the two map kernels, the second in place."""
    kernel_for("maximum", "binary")(out, x, lo)
    kernel_for("minimum", "binary")(out, out, hi)


def var_cuda(out, x, *, axes, keepdims, correction, root) -> None:
    """out = var of x over ``axes`` (std with ``root``) from this backend's own kernels (no
    fused kernel yet): the mean with the reduced axes kept, the squared deviations from it,
    their sum, divided by N - correction (NaN where that is not positive)."""
    rt = runtime()
    shape = x._shape
    n = msize = size = 1  # reduced elements per output element, output elements, all elements
    for i, s in enumerate(shape):
        size *= s
        if i in axes:
            n *= s
        else:
            msize *= s
    mshape = tuple(1 if i in axes else s for i, s in enumerate(shape))
    mean = _View(rt.empty(msize, x._dtype.numpy), mshape, _c_strides(mshape), 0, x._dtype)
    kernel_for("sum", "reduction")(mean, x, axes=axes, keepdims=True)
    kernel_for("divide", "binary")(mean, mean, float(n) if n else float("nan"))
    dev = _View(rt.empty(size, x._dtype.numpy), shape, _c_strides(shape), 0, x._dtype)
    kernel_for("subtract", "binary")(dev, x, mean)
    squares = dev
    if out._dtype is not x._dtype:  # complex: |d|^2 in the real dtype
        squares = _View(rt.empty(size, out._dtype.numpy), shape, dev._strides, 0, out._dtype)
        kernel_for("abs", "unary")(squares, dev)
    kernel_for("multiply", "binary")(squares, squares, squares)
    kernel_for("sum", "reduction")(out, squares, axes=axes, keepdims=keepdims)
    dof = n - correction
    kernel_for("divide", "binary")(out, out, float(dof) if dof > 0 else float("nan"))
    if root:
        kernel_for("sqrt", "unary")(out, out)


# -- reductions -----------------------------------------------------------------------------------
_IDENTITY = {"sum": 0, "prod": 1, "any": False, "all": True}


def _reduction(name: str):
    pairs = set(_sources.REDUCTIONS[name])

    def kernel(out, x, *, axes, keepdims) -> None:
        if (out._dtype.name, x._dtype.name) not in pairs:
            raise _unsupported(name, x._dtype)
        shape = x._shape
        kept = [d for d in range(len(shape)) if d not in axes]
        o_strides = out._strides
        if keepdims:  # the kernel writes the kept dimensions only
            o_strides = tuple(st for i, st in enumerate(o_strides) if i not in axes)
        kshape = tuple(shape[d] for d in kept)
        if 0 in kshape:
            return
        rshape = tuple(shape[d] for d in axes)
        if 0 in rshape:  # reducing nothing: the identity everywhere
            fill_cuda(out, _IDENTITY[name])
            return
        kshape_s, (ost, kst), (oo, ko) = simplify(
            kshape, [o_strides, tuple(x._strides[d] for d in kept)], [out._offset, x._offset]
        )
        # reversed reduced axes are flipped: their start moves into the offset
        rshape_s, (rst,), (ro,) = simplify(rshape, [tuple(x._strides[d] for d in axes)], [0])
        ko += ro
        if len(rshape_s) > 2:
            # reduced dimensions that do not merge into two: reduce a copy laid out with the
            # reduced axes last and dense (they merge into one run there)
            order = kept + list(axes)
            dense = _dense_copy(x, order)
            n_red = 1
            for n in rshape:
                n_red *= n
            kshape_s, (ost, kst), (oo, ko) = simplify(
                kshape, [o_strides, _c_strides(kshape, n_red)], [out._offset, 0]
            )
            rshape_s, rst, buf = (n_red,), (1,), dense
        else:
            buf = x._buf
        if not rshape_s:
            rshape_s, rst = (1,), (0,)
        if not kshape_s:
            kshape_s, ost, kst = (1,), (0,), (0,)
        rpad = 2 - len(rshape_s)
        rn0, rn1 = (1,) * rpad + tuple(rshape_s)
        rs0, rs1 = (0,) * rpad + tuple(rst)
        types = f"<red_{name}, {_cname(out._dtype)}, {_cname(x._dtype)}>"
        if kshape_s == (1,) and rn0 * rn1 > BLOCK:
            _reduce_all(_sources.reduction(name), "reduce_all" + types, out, buf, ko,
                        (rs0, rs1), (rn0, rn1), oo)  # fmt: skip
            return
        fn = _function(_sources.reduction(name), "reduce_rows" + types)
        for (k_oo, k_xo), (kn0, kn1), (ok, xk) in split_outer(kshape_s, [ost, kst], [oo, ko], 2):
            rows = kn0 * kn1
            fn(
                (max(1, min(rows, MAX_GRID)),),
                (BLOCK,),
                (out._buf, k_oo, ok[0], ok[1], buf, k_xo, xk[0], xk[1], rs0, rs1, kn0, kn1,
                 rn0, rn1),
            )  # fmt: skip

    kernel.__name__ = f"{name}_cuda"
    return kernel


#: blocks of a one-pass full reduction (each reduces a grid-strided share; the last block
#: reduces their partial results)
FULL_BLOCKS = 1024


def _reduce_all(module, name, out, buf, xo, rs, rn, oo) -> None:
    rt = runtime()
    counter = getattr(rt, "reduce_counter", None)
    if counter is None:  # zero between launches: the last block resets it
        counter = rt.empty(1, np.uint32)
        rt.upload(counter, np.zeros(1, np.uint32))
        rt.reduce_counter = counter
    blocks = max(1, min(FULL_BLOCKS, -(-rn[0] * rn[1] // (4 * BLOCK))))
    partials = rt.empty(blocks, out._dtype.numpy)
    fn = _function(module, name)
    fn((blocks,), (BLOCK,), (out._buf, oo, buf, xo, *rs, *rn, partials, counter))


def _c_strides(shape, inner: int = 1) -> tuple:
    st, acc = [], inner
    for n in reversed(shape):
        st.append(acc)
        acc *= n
    return tuple(reversed(st))


class _View:
    """An operand as kernels see it (buffer, shape, strides, offset, dtype)."""

    __slots__ = ("_buf", "_shape", "_strides", "_offset", "_dtype")

    def __init__(self, buf, shape, strides, offset, dtype):
        self._buf, self._shape, self._strides = buf, shape, strides
        self._offset, self._dtype = offset, dtype


def _dense_copy(x, order):
    """A dense device buffer holding ``x`` with its axes permuted to ``order``."""
    shape = tuple(x._shape[d] for d in order)
    size = 1
    for n in shape:
        size *= n
    buf = runtime().empty(size, x._dtype.numpy)
    dst = _View(buf, shape, _c_strides(shape), 0, x._dtype)
    src = _View(x._buf, shape, tuple(x._strides[d] for d in order), x._offset, x._dtype)
    copy_cuda(dst, src)
    return buf


def _scan(op: str):
    def kernel(out, x, *, axis, initial) -> None:
        if out._dtype.name not in _ops.NUMERIC:
            raise _unsupported(f"cumulative_{op}", x._dtype)
        if x._dtype is not out._dtype:  # bool/int inputs of an int64 scan: widened here
            shape = x._shape
            buf = runtime().empty(int(np.prod(shape)), out._dtype.numpy)
            wide = _View(buf, shape, _c_strides(shape), 0, out._dtype)
            copy_cuda(wide, x)
            x = wide
        o_off, o_st = out._offset, out._strides
        if initial is not None:  # the first slot along axis holds the identity
            head = out._shape[:axis] + (1,) + out._shape[axis + 1 :]
            fill_cuda(_View(out._buf, head, o_st, o_off, out._dtype), initial)
            o_off += o_st[axis]
        shape = x._shape
        if 0 in shape:
            return
        others = [d for d in range(len(shape)) if d != axis]
        kshape, (ost, xst), (oo, xo) = simplify(
            tuple(shape[d] for d in others),
            [tuple(o_st[d] for d in others), tuple(x._strides[d] for d in others)],
            [o_off, x._offset],
        )
        if not kshape:
            kshape, ost, xst = (1,), (0,), (0,)
        c = _cname(out._dtype)
        fn = _function(_sources.scan(op), f"scan_rows<red_{op}, {c}>")
        for (k_oo, k_xo), (kn0, kn1), (ok, xk) in split_outer(kshape, [ost, xst], [oo, xo], 2):
            fn(
                (max(1, min(kn0 * kn1, MAX_GRID)),),
                (BLOCK,),
                (out._buf, k_oo, ok[0], ok[1], o_st[axis], x._buf, k_xo, xk[0], xk[1],
                 x._strides[axis], kn0, kn1, shape[axis]),
            )  # fmt: skip

    kernel.__name__ = f"cumulative_{op}_cuda"
    return kernel


def _argreduce(find_max: bool):
    def kernel(out, x, *, axis) -> None:
        if not out.size:
            return
        if x._dtype.name not in _ops.REAL:
            raise _unsupported("argmax" if find_max else "argmin", x._dtype)
        mx = "true" if find_max else "false"
        if axis is None:  # over the flattened array, in C order: a dense run
            if x._strides == _c_strides(x._shape):
                buf, xo = x._buf, x._offset
            else:
                buf, xo = _dense_copy(x, list(range(len(x._shape)))), 0
            n = x.size
            if n >= ARG_CHUNKED_MIN:  # two passes over many blocks, not one block for all
                blocks = min(-(-n // ARG_CHUNK), BLOCK * 16)
                chunk = -(-n // blocks)
                blocks = -(-n // chunk)
                cand = runtime().empty(blocks, np.int64)
                module, cname = _sources.argreduce(), _cname(x._dtype)
                _function(module, f"argreduce_chunks<{mx}, {cname}>")(
                    (blocks,), (BLOCK,), (cand, buf, xo, n, chunk)
                )
                _function(module, f"argreduce_candidates<{mx}, {cname}>")(
                    (1,), (BLOCK,), (out._buf, out._offset, buf, xo, cand, blocks)
                )
                return
            kshape, ost, kst, rs = (1,), (0,), (0,), 1
            oo = out._offset
        else:
            others = [d for d in range(len(x._shape)) if d != axis]
            o_st = out._strides
            if len(out._shape) == len(x._shape):  # keepdims: the kernel writes kept dims only
                o_st = tuple(st for i, st in enumerate(o_st) if i != axis)
            kshape, (ost, kst), (oo, xo) = simplify(
                tuple(x._shape[d] for d in others),
                [o_st, tuple(x._strides[d] for d in others)],
                [out._offset, x._offset],
            )
            if not kshape:
                kshape, ost, kst = (1,), (0,), (0,)
            buf, n, rs = x._buf, x._shape[axis], x._strides[axis]
        name = f"argreduce_rows<{mx}, {_cname(x._dtype)}>"
        fn = _function(_sources.argreduce(), name)
        for (k_oo, k_xo), (kn0, kn1), (ok, xk) in split_outer(kshape, [ost, kst], [oo, xo], 2):
            fn(
                (max(1, min(kn0 * kn1, MAX_GRID)),),
                (BLOCK,),
                (out._buf, k_oo, ok[0], ok[1], buf, k_xo, xk[0], xk[1], rs, kn0, kn1, n),
            )

    kernel.__name__ = f"{'argmax' if find_max else 'argmin'}_cuda"
    return kernel


# -- indexing -------------------------------------------------------------------------------------
def _dense(a):
    """(buffer, offset) of ``a``'s elements in C order: its own when they already are."""
    if a._strides == _c_strides(a._shape) or a.size <= 1:
        return a._buf, a._offset
    return _dense_copy(a, list(range(len(a._shape)))), 0


def _first_bad(n: int):
    """A device counter for the first bad index position (n: none), and a reader of it."""
    rt = runtime()
    bad = rt.empty(1, np.uint64)
    rt.upload(bad, np.array([n], np.uint64))

    def read() -> int:
        host = np.empty(1, np.uint64)
        rt.download(host, bad)
        return int(host[0])

    return bad, read


def _element(buf, i: int) -> int:
    host = np.empty(1, buf.dtype)
    runtime().download(host, buf, i)
    return int(host[0])


def normalize_index_cuda(out, k, *, size, axis) -> None:
    n = k.size
    if not n:
        return
    kbuf, ko = _dense(k)
    bad, read = _first_bad(n)
    fn = _function(_sources.index(), "normalize_index")
    fn((_grid(n),), (BLOCK,), (out._buf, kbuf, ko, n, size, bad))
    pos = read()
    if pos < n:
        raise IndexError(
            f"index {_element(kbuf, ko + pos)} is out of bounds for axis {axis} with size {size}"
        )


def take_cuda(out, x, indices, *, axis) -> None:
    n_ax = x._shape[axis]
    pre = post = 1
    for n in x._shape[:axis]:
        pre *= n
    for n in x._shape[axis + 1 :]:
        post *= n
    # x as (pre, n, post): strides when the layout allows, else a dense copy
    st = reshape_strides(x._shape, x._strides, (pre, n_ax, post))
    if st is None:
        xbuf, xoff, st = _dense_copy(x, list(range(len(x._shape)))), 0, (n_ax * post, post, 1)
    else:
        xbuf, xoff = x._buf, x._offset
    n_idx = indices._shape[0]
    total = pre * n_idx * post
    if not total:
        return
    bad, read = _first_bad(n_idx)
    fn = _function(_sources.index(), f"take3<{_cname(x._dtype)}>")
    fn((_grid(total),), (BLOCK,), (out._buf, xbuf, xoff, *st, indices._buf, indices._offset,
                                   indices._strides[0], pre, n_idx, post, n_ax, bad))  # fmt: skip
    pos = read()
    if pos < n_idx:
        value = _element(indices._buf, indices._offset + pos * indices._strides[0])
        raise IndexError(f"take: index {value} is out of bounds for an axis of size {n_ax}")


def _axis_last(a, axis: int):
    """(shape, strides) of ``a`` with ``axis`` moved last (a view: no data moves)."""
    order = [i for i in range(len(a._shape)) if i != axis] + [axis]
    return tuple(a._shape[i] for i in order), tuple(a._strides[i] for i in order)


def take_along_axis_cuda(out, x, idx, *, axis) -> None:
    # rows: the other dimensions, broadcast between x and indices; the axis last
    xs, xst = _axis_last(x, axis)
    is_, ist = _axis_last(idx, axis)
    os_, _ = _axis_last(out, axis)
    rows = os_[:-1]
    xst = broadcast_strides(xs[:-1], xst[:-1], rows) + (xst[-1],)
    ist = broadcast_strides(is_[:-1], ist[:-1], rows) + (ist[-1],)
    r = 1
    for n in rows:
        r *= n
    if not r * is_[-1]:
        return
    x2 = reshape_strides(rows + (xs[-1],), xst, (r, xs[-1]))
    i2 = reshape_strides(rows + (is_[-1],), ist, (r, is_[-1]))
    xbuf, xoff, ibuf, ioff = x._buf, x._offset, idx._buf, idx._offset
    if x2 is None:  # rows that do not merge: gather them densely first
        src = _View(x._buf, rows + (xs[-1],), xst, x._offset, x._dtype)
        xbuf, xoff, x2 = _dense_copy(src, list(range(len(rows) + 1))), 0, (xs[-1], 1)
    if i2 is None:
        src = _View(idx._buf, rows + (is_[-1],), ist, idx._offset, idx._dtype)
        ibuf, ioff, i2 = _dense_copy(src, list(range(len(rows) + 1))), 0, (is_[-1], 1)
    last_axis = axis == len(out._shape) - 1
    target = out._buf if last_axis else runtime().empty(r * is_[-1], out._dtype.numpy)
    bad, read = _first_bad(r)
    fn = _function(_sources.index(), f"take_rows<{_cname(x._dtype)}>")
    fn((_grid(r * is_[-1]),), (BLOCK,), (target, xbuf, xoff, *x2, ibuf, ioff, *i2, r, is_[-1],
                                         xs[-1], bad))  # fmt: skip
    row = read()
    if row < r:
        raise IndexError(
            f"take_along_axis: an index in row {row} is out of bounds for an axis of size {xs[-1]}"
        )
    if not last_axis:  # rows were written with the axis last: move them into place
        o_shape, o_st = _axis_last(out, axis)
        copy_cuda(
            _View(out._buf, o_shape, o_st, out._offset, out._dtype),
            _View(target, o_shape, _c_strides(o_shape), 0, out._dtype),
        )


def searchsorted_cuda(out, x1, x2, *, right) -> None:
    count = x2.size
    if not count:
        return
    if x1._dtype is not x2._dtype or x1._dtype.name not in _ops.REAL:
        raise _unsupported("searchsorted", x2._dtype)
    vbuf, vo = _dense(x2)
    fn = _function(_sources.index(), f"searchsorted<{_cname(x1._dtype)}>")
    fn((_grid(count),), (BLOCK,), (out._buf[out._offset :] if out._offset else out._buf,
                                   x1._buf, x1._offset, x1._strides[0] if x1._shape else 0,
                                   x1._shape[0], vbuf, vo, count, np.bool_(right)))  # fmt: skip


def _true_positions(x):
    """(dense bool buffer, its offset, inclusive scan of its flags: element i is the pos[i]-th
    true element)."""
    n = x.size
    xbuf, xo = _dense(x)
    rt = runtime()
    flags, pos = rt.empty(n, np.int64), rt.empty(n, np.int64)
    copy_cuda(_View(flags, (n,), (1,), 0, dt.int64), _View(xbuf, (n,), (1,), xo, dt.bool))
    scan = _function(_sources.scan("sum"), "scan_rows<red_sum, i64>")
    scan((1,), (BLOCK,), (pos, 0, 0, 0, 1, flags, 0, 0, 0, 1, 1, 1, n))
    return xbuf, xo, pos


def _int64s(values):
    rt = runtime()
    buf = rt.empty(max(len(values), 1), np.int64)
    if values:
        rt.upload(buf, np.array(values, np.int64))
    return buf


def nonzero_cuda(out, x) -> None:
    """Coordinates of the nonzero elements (x is bool; the rule counted them): each element's
    place among them is an inclusive scan of its flag."""
    count = out._shape[1]
    if not count:
        return
    n, nd = x.size, len(x._shape)
    xbuf, xo, pos = _true_positions(x)
    fn = _function(_sources.index(), "nonzero_coords")
    fn((_grid(n),), (BLOCK,), (out._buf, xbuf, xo, pos, n, _int64s(x._shape), nd, count))


def mask_offsets_cuda(out, mask, *, strides, offset) -> None:
    """The element offsets (in the indexed array, ``strides``/``offset``) of the mask's true
    elements, C order; out has a spare element the rule's finish drops."""
    n = mask.size
    if not n or out._shape[0] <= 1:
        return
    xbuf, xo, pos = _true_positions(mask)
    fn = _function(_sources.index(), "mask_offsets")
    fn((_grid(n),), (BLOCK,), (out._buf, xbuf, xo, pos, n, _int64s(mask._shape),
                               _int64s(tuple(strides)), len(mask._shape), offset))  # fmt: skip


#: the longest row the rank sort takes (its work per row is quadratic); longer rows merge-sort
RANK_SORT_MAX_ROW = 1024


def _merge_sort_rows(target, x, rows: int, n: int, arg: bool, descending: bool) -> None:
    """Sort the dense rows ``x`` (rows of n, a device buffer) into ``target`` (values, or int64
    positions when ``arg``): bottom-up merge passes ping-ponging between two buffer pairs."""
    rt = runtime()
    module = _sources.sort()
    cname = _cname_np(x.dtype)
    total = rows * n
    keys = [x, rt.empty(total, x.dtype)]
    idx = [rt.empty(total, np.int64), rt.empty(total, np.int64)]
    _function(module, "iota_rows")((_grid(total),), (BLOCK,), (idx[0], rows, n))
    merge = _function(module, f"merge_pass<{cname}>")
    src, width = 0, 1
    while width < n:
        merge((_grid(total),), (BLOCK,), (keys[1 - src], idx[1 - src], keys[src], idx[src], rows,
                                          n, width, np.bool_(descending)))  # fmt: skip
        src, width = 1 - src, 2 * width
    result = idx[src] if arg else keys[src]
    dtype = dt.int64 if arg else dt.from_numpy(x.dtype)
    copy_cuda(_View(target, (total,), (1,), 0, dtype), _View(result, (total,), (1,), 0, dtype))


def _sort_kernel(arg: bool):
    name = "argsort" if arg else "sort"

    def kernel(out, x, *, axis, descending) -> None:
        shape, strides = _axis_last(x, axis)
        n = shape[-1]
        rows = 1
        for m in shape[:-1]:
            rows *= m
        if not rows * n:
            return
        st = reshape_strides(shape, strides, (rows, n))
        long_rows = n > RANK_SORT_MAX_ROW
        if st is None or long_rows:  # rows that do not merge into one stride (or merge-sort
            # input): a dense copy, axis last
            order = [i for i in range(len(x._shape)) if i != axis] + [axis]
            xbuf, xo, st = _dense_copy(x, order), 0, (n, 1)
        else:
            xbuf, xo = x._buf, x._offset
        last_axis = axis == len(x._shape) - 1
        target = out._buf if last_axis else runtime().empty(rows * n, out._dtype.numpy)
        if long_rows:
            _merge_sort_rows(target, xbuf, rows, n, arg, descending)
        else:
            fn = _function(
                _sources.sort(), f"rank_sort<{_cname(x._dtype)}, {'true' if arg else 'false'}>"
            )
            fn((_grid(rows * n),), (BLOCK,), (target, xbuf, xo, st[0], st[1], rows, n,
                                              np.bool_(descending)))  # fmt: skip
        if not last_axis:  # rows were written with the axis last: move them into place
            o_shape, o_st = _axis_last(out, axis)
            copy_cuda(
                _View(out._buf, o_shape, o_st, out._offset, out._dtype),
                _View(target, o_shape, _c_strides(o_shape), 0, out._dtype),
            )

    kernel.__name__ = f"{name}_cuda"
    return kernel


def _blocks2(shape, strides):
    """The trailing block of a gather/scatter as a rank-2 (shape, strides) pair (dimensions
    merged in place where the strided side is contiguous across them, as on cpu)."""
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


def _scatter_like(kernel: str):
    def run(x, offsets, values, *, trailing_strides) -> None:
        (t0, t1), (s0, s1) = _blocks2(values._shape[offsets.ndim :], trailing_strides)
        n = offsets.size
        if not n * t0 * t1:
            return
        if kernel == "scatter_add_blocks" and x._dtype.name not in _sources.SCATTER_ADD:
            raise _unsupported("scatter_add", x._dtype)
        obuf, oo = _dense(offsets)
        vbuf, vo = _dense(values)
        fn = _function(_sources.index(), f"{kernel}<{_cname(x._dtype)}>")
        fn((_grid(n * t0 * t1),), (BLOCK,), (x._buf, obuf, oo, vbuf, vo, n, t0, t1, s0, s1))

    run.__name__ = kernel.replace("_blocks", "_cuda")
    return run


def gather_cuda(out, x, offsets, *, trailing_strides) -> None:
    (t0, t1), (s0, s1) = _blocks2(out._shape[offsets.ndim :], trailing_strides)
    n = offsets.size
    if not n * t0 * t1:
        return
    obuf, oo = _dense(offsets)
    fn = _function(_sources.index(), f"gather_blocks<{_cname(x._dtype)}>")
    fn((_grid(n * t0 * t1),), (BLOCK,), (out._buf, x._buf, obuf, oo, n, t0, t1, s0, s1))


# -- matmul ---------------------------------------------------------------------------------------
TILE = 16


def _batch_offsets(batch_shape, strides_list, offsets):
    """Per-batch element offsets of each operand (NumPy index arithmetic, once per call)."""
    if not batch_shape:
        return [np.array([o], dtype=np.int64) for o in offsets]
    idx = np.indices(batch_shape).reshape(len(batch_shape), -1)
    return [
        o + (np.asarray(st, dtype=np.int64)[:, None] * idx).sum(axis=0)
        for st, o in zip(strides_list, offsets)
    ]


def matmul_cuda(out, a, b, *, batch_shape) -> None:
    """out = a @ b over broadcast batches: cuBLAS through CuPy for floating dtypes on a GPU,
    else the tiled RawKernel (every dtype, on a GPU and on host execution)."""
    if _library.matmul_library(out, a, b):
        return
    # 1-D operands: a row of a, a column of b (stride 0 on the added dimension)
    a_shape, a_strides = a._shape, a._strides
    if len(a_shape) == 1:
        a_shape, a_strides = (1,) + a_shape, (0,) + a_strides
    b_shape, b_strides = b._shape, b._strides
    if len(b_shape) == 1:
        b_shape, b_strides = b_shape + (1,), b_strides + (0,)
    m, k = a_shape[-2:]
    n = b_shape[-1]
    nb = len(batch_shape)
    rest = out._strides[nb:]
    osm = rest[0] if len(a._shape) > 1 else 0
    osn = rest[-1] if len(b._shape) > 1 else 0
    a_st = broadcast_strides(a_shape, a_strides, batch_shape + (m, k))
    b_st = broadcast_strides(b_shape, b_strides, batch_shape + (k, n))
    if not m * n:
        return
    if not k:  # an empty sum: zeros
        fill_cuda(out, 0)
        return
    offs = _batch_offsets(batch_shape, [out._strides[:nb], a_st[:nb], b_st[:nb]],
                          [out._offset, a._offset, b._offset])  # fmt: skip
    rt = runtime()
    dev = []
    for o in offs:
        d = rt.empty(o.size, np.int64)
        rt.upload(d, o)
        dev.append(d)
    fn = _function(_sources.matmul(), f"matmul_tiled<{_cname(out._dtype)}>")
    grid_x, grid_y = -(-n // TILE), -(-m // TILE)
    batches = offs[0].size
    for zbase in range(0, batches, MAX_GRID):
        fn(
            (grid_x, grid_y, min(MAX_GRID, batches - zbase)),
            (TILE, TILE),
            (out._buf, dev[0], osm, osn, a._buf, dev[1], a_st[-2], a_st[-1], b._buf, dev[2],
             b_st[-2], b_st[-1], m, k, n, zbase),
        )  # fmt: skip


# -- creation -------------------------------------------------------------------------------------
def arange_cuda(out, *, start, step) -> None:
    n = out._shape[0]
    if not n:
        return
    # NumPy computes integer ranges in int64 and the others in float64 before the cast
    integral = isinstance(start, int) and isinstance(step, int)
    c, conv = ("i64", np.int64) if integral else ("f64", np.float64)
    fn = _function(_sources.creation(), f"arange<{_cname(out._dtype)}, {c}>")
    fn((_grid(n),), (BLOCK,), (out._buf[out._offset :] if out._offset else out._buf, n,
                               conv(start), conv(step)))  # fmt: skip


def linspace_cuda(out, *, start, stop, endpoint) -> None:
    n = out._shape[0]
    if not n:
        return
    cplx = out._dtype.name in _ops.COMPLEX
    conv = np.complex128 if cplx else np.float64
    div = (n - 1) if endpoint else n
    step = (conv(stop) - conv(start)) / div if div > 0 else conv(0)
    fn = _function(
        _sources.creation(), f"linspace<{_cname(out._dtype)}, {'c128' if cplx else 'f64'}>"
    )
    buf = out._buf[out._offset :] if out._offset else out._buf
    last = np.bool_(endpoint and n > 1)  # NumPy: a single point is start, endpoint or not
    fn((_grid(n),), (BLOCK,), (buf, n, conv(start), conv(stop), conv(step), last))


# -- memory ---------------------------------------------------------------------------------------
def empty_cuda(size: int, dtype):
    """The allocator: CuPy's memory pool on a GPU, NumPy memory on host execution."""
    return runtime().empty(size, dtype.numpy)


def _empty_for_dtype(dtype):
    np_dtype = dtype.numpy

    def empty(size: int):
        return runtime().empty(size, np_dtype)

    return empty


empty_cuda.for_dtype = _empty_for_dtype


def _host_view(a) -> np.ndarray:
    """A NumPy view of the cpu array ``a`` (any strides)."""
    buf = a._buf
    if 0 in a._shape or buf.size == 0:
        return np.empty(a._shape, buf.dtype)
    isz = buf.itemsize
    return np.lib.stride_tricks.as_strided(
        buf[a._offset :], shape=a._shape, strides=tuple(s * isz for s in a._strides)
    )


def to_device_cuda(out, x) -> None:
    """Transfers with a cuda side: host -> device, device -> host, device -> device."""
    rt = runtime()
    if out._device.type == "cuda" and x._device.type == "cpu":
        rt.upload(out._buf, np.ascontiguousarray(_host_view(x)))
    elif out._device.type == "cpu" and x._device.type == "cuda":
        if _c_strides(x._shape) == x._strides or x.size <= 1:
            src, start = x._buf, x._offset
        else:  # gather the strided elements on the device, then one copy
            src, start = _dense_copy(x, list(range(len(x._shape)))), 0
        if out._buf.size:
            rt.download(out._buf[out._offset : out._offset + x.size], src, start)
    else:
        copy_cuda(out, x)


def export_cuda(x):
    """The object sharing a cuda array's memory: a CuPy view on a GPU (DLPack, CuPy interop), a
    NumPy view on host execution."""
    rt = runtime()
    isz = x._dtype.numpy.itemsize
    strides = tuple(s * isz for s in x._strides)
    if rt.name == "host":
        buf = x._buf
        if 0 in x._shape or buf.size == 0:
            return np.empty(x._shape, buf.dtype)
        return np.ndarray(x._shape, buf.dtype, buffer=buf, offset=x._offset * isz, strides=strides)
    cupy = rt.cupy
    mem = x._buf.data + x._offset * isz
    return cupy.ndarray(x._shape, x._dtype.numpy, memptr=mem, strides=strides)


def import_device_cuda(obj) -> tuple:
    """``(buf, shape, strides, offset)`` viewing the device memory a DLPack exporter shares
    (strides and offset in elements; the buffer is a 1-D array over the span the view covers),
    without a copy."""
    rt = runtime()
    a = rt.from_dlpack(obj)
    isz, shape = a.itemsize, a.shape
    if a.size == 0:
        return rt.empty(0, a.dtype), shape, _c_strides(shape), 0
    if any(s % isz for s in a.strides):
        raise BufferError(f"from_dlpack: strides {a.strides} are not whole {a.dtype} elements")
    buf, el, offset = span_view(a, rt.library.xp.lib.stride_tricks.as_strided)
    return buf, shape, el, offset


_SPECIAL = {
    "empty": empty_cuda,
    "copy": copy_cuda,
    "fill": fill_cuda,
    "full": full_cuda,
    "where": where_cuda,
    "clip": clip_cuda,
    "var": var_cuda,
    "arange": arange_cuda,
    "linspace": linspace_cuda,
    "to_device": to_device_cuda,
    "export": export_cuda,
    "import_device": import_device_cuda,
    "cumulative_sum": _scan("sum"),
    "cumulative_prod": _scan("prod"),
    "argmax": _argreduce(True),
    "argmin": _argreduce(False),
    "normalize_index": normalize_index_cuda,
    "take": take_cuda,
    "gather": gather_cuda,
    "scatter": _scatter_like("scatter_blocks"),
    "scatter_add": _scatter_like("scatter_add_blocks"),
    "matmul": matmul_cuda,
    "take_along_axis": take_along_axis_cuda,
    "searchsorted": searchsorted_cuda,
    "nonzero": nonzero_cuda,
    "mask_offsets": mask_offsets_cuda,
    "sort": _sort_kernel(False),
    "argsort": _sort_kernel(True),
    **_library.KERNELS,  # cuSOLVER, cuFFT
}


def _nn_kernels() -> dict:
    from ._nn import KERNELS

    return KERNELS


def supported() -> frozenset[str]:
    """The primitives this backend has kernels for."""
    return (
        frozenset(_SPECIAL) | frozenset(_nn_kernels()) | frozenset(_ops.OPS)
        | frozenset(_sources.REDUCTIONS) | {"count_true"}
    )  # fmt: skip


def _count_true():
    """count_true: sum's kernels on bool input (adding its 1-byte flags in the output's
    integer); other input is first converted to a dense bool copy (nonzero: True)."""
    summed = _reduction("sum")

    def count_true_cuda(out, x, *, axes, keepdims) -> None:
        if x._dtype.kind != "bool":
            flags = _View(runtime().empty(x.size, np.bool_), x._shape, _c_strides(x._shape), 0,
                          dt.bool)  # fmt: skip
            copy_cuda(flags, x)
            x = flags
        summed(out, x, axes=axes, keepdims=keepdims)

    return count_true_cuda


@functools.cache
def kernel_for(name: str, kind: str):
    """The cuda kernel of the primitive ``name`` of family ``kind`` (None where there is none
    yet: calling it on cuda raises NotImplementedError naming the primitive and the device)."""
    if name in _SPECIAL:
        return _SPECIAL[name]
    nn = _nn_kernels()  # convolution and pooling (strided.nn)
    if name in nn:
        return nn[name]
    if kind in ("unary", "binary") and name in _ops.OPS:
        return _elementwise(name, kind)
    if name == "count_true":
        return _count_true()
    if kind == "reduction" and name in _sources.REDUCTIONS:
        return _reduction(name)
    return None
