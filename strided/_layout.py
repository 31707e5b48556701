"""Layout simplification shared by the kernels of every device.

Kernels are compiled for a fixed rank, so an n-d strided problem is first reduced to as few
dimensions as possible: size-1 dimensions are dropped, axes are ordered by the output's strides
(largest first, so the innermost loop walks the smallest stride), axes where every operand runs
backwards are flipped, and neighbouring axes that are contiguous with each other in *every* operand
are merged into one.  A 3-d C-contiguous array becomes a single 1-d run; a transposed operand keeps
two dimensions.
"""

from __future__ import annotations

__all__ = ["simplify", "split_outer"]


def simplify(shape, strides_list, offsets=None):
    """Simplify a layout shared by several operands.

    ``strides_list[0]`` is the output's (it decides the loop order).  Returns
    ``(shape, strides_list, offsets)`` with the same number of operands, or ``shape == None`` when
    the problem is empty (a zero-size dimension).
    """
    nops = len(strides_list)
    offsets = list(offsets) if offsets is not None else [0] * nops
    dims = []
    for d, n in enumerate(shape):
        if n == 0:
            return None, strides_list, offsets
        if n != 1:
            dims.append(d)
    if not dims:
        return (), [() for _ in range(nops)], offsets
    if len(dims) == 1:
        d = dims[0]
        n = shape[d]
        st = [s[d] for s in strides_list]
        if all(x <= 0 for x in st) and any(x < 0 for x in st):
            offsets = [o + x * (n - 1) for o, x in zip(offsets, st)]
            st = [-x for x in st]
        return (n,), [(x,) for x in st], offsets
    # flip axes along which every operand runs backwards (keeps inner loops unit-stride)
    strides = [list(s) for s in strides_list]
    for d in dims:
        col = [s[d] for s in strides]
        if all(x <= 0 for x in col) and any(x < 0 for x in col):
            n = shape[d]
            for k in range(nops):
                offsets[k] += strides[k][d] * (n - 1)
                strides[k][d] = -strides[k][d]
    # order axes by the output's absolute stride, then by the first input's, largest first
    key_ops = strides[0], strides[1] if nops > 1 else strides[0]
    dims.sort(key=lambda d: (abs(key_ops[0][d]), abs(key_ops[1][d])), reverse=True)
    out_shape = [shape[dims[0]]]
    out_strides = [[s[dims[0]]] for s in strides]
    for d in dims[1:]:
        n = shape[d]
        if all(s[-1] == st[d] * n for s, st in zip(out_strides, strides)):
            out_shape[-1] *= n
            for s, st in zip(out_strides, strides):
                s[-1] = st[d]
        else:
            out_shape.append(n)
            for s, st in zip(out_strides, strides):
                s.append(st[d])
    return tuple(out_shape), [tuple(s) for s in out_strides], offsets


def split_outer(shape, strides_list, offsets, rank):
    """Yield ``(offsets, inner shape, inner strides_list)`` covering a layout of any rank with
    calls to a fixed-``rank`` kernel: the leading dimensions beyond ``rank`` are walked here, once
    per block, never per element.  Shapes shorter than ``rank`` are padded with leading 1s."""
    nd = len(shape)
    if nd <= rank:
        pad = rank - nd
        yield offsets, (1,) * pad + tuple(shape), [(0,) * pad + tuple(s) for s in strides_list]
        return
    lead = nd - rank
    if 0 in shape[:lead]:
        return  # nothing to walk (a block of the inner shape would write past an empty output)
    inner_shape = tuple(shape[lead:])
    inner = [tuple(s[lead:]) for s in strides_list]
    index = [0] * lead
    while True:
        yield (
            [
                o + sum(i * s for i, s in zip(index, st[:lead]))
                for o, st in zip(offsets, strides_list)
            ],
            inner_shape,
            inner,
        )
        d = lead - 1
        while d >= 0:
            index[d] += 1
            if index[d] < shape[d]:
                break
            index[d] = 0
            d -= 1
        if d < 0:
            return


_DENSE_ORDERS: dict[tuple, tuple | None] = {}  # (shape, strides) -> strides, or None
_MISSING = object()


def dense_order(shape: tuple, strides: tuple) -> tuple | None:
    """``strides`` when they lay ``shape`` out densely in memory in an order other than C's
    (a permutation of the axes, every stride positive, no gaps), else None; cached."""
    key = (shape, strides)
    found = _DENSE_ORDERS.get(key, _MISSING)
    if found is not _MISSING:
        return found
    dims = sorted((st, n) for n, st in zip(shape, strides) if n != 1)
    expected = 1
    dense = all(n > 0 for n in shape)
    for st, n in dims:
        if st != expected:
            dense = False
            break
        expected *= n
    if dense:  # C order up to the strides of size-1 axes (which no element ever steps over)
        c_order, acc = [], 1
        for n in reversed(shape):
            c_order.append(acc)
            acc *= n
        c_order.reverse()
        dense = any(n != 1 and st != c for n, st, c in zip(shape, strides, c_order))
    result = strides if dense else None
    if len(_DENSE_ORDERS) >= 4096:
        _DENSE_ORDERS.clear()
    _DENSE_ORDERS[key] = result
    return result


def span_view(a, as_strided) -> tuple:
    """``(buf, strides, offset)`` for a non-empty NumPy- or CuPy-like array ``a`` whose byte
    strides are whole elements: ``buf`` a 1-D view (made by the module's ``as_strided``) over the
    memory ``a``'s elements span, from its lowest address, ``a``'s strides in elements, and the
    position of ``a``'s first element in ``buf``."""
    isz, shape = a.itemsize, a.shape
    el = tuple(s // isz for s in a.strides)
    lo = sum(st * (n - 1) for st, n in zip(el, shape) if st < 0)
    hi = sum(st * (n - 1) for st, n in zip(el, shape) if st > 0)
    corner = a[tuple(slice(n - 1, n) if st < 0 else slice(0, 1) for st, n in zip(el, shape))]
    return as_strided(corner, shape=(hi - lo + 1,), strides=(isz,)), el, -lo
