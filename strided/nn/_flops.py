"""Floating-point operation counts per primitive call, for :func:`strided.nn.summary`.

A multiply-add counts as 2 FLOPs (the convention of the GPT-3 and Megatron papers and of
PyTorch's FlopCounterMode).  Elementwise functions count one FLOP per
output element, reductions and scans one per input element.  Operations that only move or select
memory (views, copies, creation, indexing, sorting, concatenation) count zero and are listed as
such; a primitive with no formula here is reported by name, never counted as zero silently.
"""

from __future__ import annotations

import math

from .._array import Array
from .._shapes import prod

__all__ = ["flops", "MEMORY_KINDS", "MEMORY_NAMES"]

#: Kinds of primitive that move or select memory: zero FLOPs by definition.
MEMORY_KINDS = frozenset(
    {"view", "creation", "copy", "write", "interchange", "transfer", "take", "index", "nonzero"}
)
#: Primitives that move, select, compare-and-move or sort memory: zero FLOPs by definition.
MEMORY_NAMES = frozenset(
    {
        "concat",
        "getitem_arrays",
        "index_add",
        "im2col",
        "col2im",
        "where",
        "triangle",
        "unique_runs",
        "sort",
        "argsort",
        "searchsorted",
        "gather",
        "scatter",
        "scatter_add",
        "take",
        "take_along_axis",
    }
)


def _size(a) -> int:
    return prod(a._shape) if isinstance(a, Array) else 1


def _matmul(args, params, out) -> int:
    a, b = args
    k = a._shape[-1]
    return 2 * k * _size(out)


def _elementwise(args, params, out) -> int:
    return _size(out)


def _over_input(args, params, out) -> int:
    return _size(args[0])


def _fft(args, params, out) -> int:
    # 5 n log2 n per transformed line (the usual radix-2 count), n the transform length
    n = max(_size(out), _size(args[0]))
    axes = params.get("axes") or (params.get("axis", -1),)
    length = 1
    shape = out._shape if _size(out) >= _size(args[0]) else args[0]._shape
    for ax in axes if isinstance(axes, (tuple, list)) else (axes,):
        length *= shape[ax]
    return int(5 * n * math.log2(length)) if length > 1 else 0


def _cube(c):
    def count(args, params, out) -> int:
        x = args[0]
        n = x._shape[-1]
        batch = prod(x._shape[:-2])
        return int(c * n**3) * batch

    return count


def _conv2d(args, params, out) -> int:
    # a multiply-add per output element and weight element of its group (+ the bias's add)
    return 2 * _size(out) * prod(args[1]._shape[1:]) + (_size(out) if len(args) > 2 else 0)


def _conv2d_input_grad(args, params, out) -> int:
    g, w = args
    return 2 * _size(g) * prod(w._shape[1:])


def _conv2d_weight_grad(args, params, out) -> int:
    x, g = args
    return 2 * _size(g) * prod(out._shape[1:])


def _pool(args, params, out) -> int:
    k = params.get("kernel_size") or (1,)
    return _size(out) * prod(k if isinstance(k, (tuple, list)) else (k,))


def _var(args, params, out) -> int:
    # per input element: an add for the mean; a subtract, multiply and add for the squares
    return 4 * _size(args[0])


_BY_KIND = {
    "unary": _elementwise,
    "binary": _elementwise,
    "matmul": _matmul,
    "reduction": _over_input,
    "scan": _over_input,
    "argreduce": _over_input,
    "fft": _fft,
}

_BY_NAME = {
    # LAPACK: leading terms of the standard counts (Golub & Van Loan)
    "linalg_cholesky": _cube(1 / 3),
    "linalg_inv": _cube(2),
    "linalg_solve": _cube(2 / 3),
    "linalg_det": _cube(2 / 3),
    "linalg_slogdet": _cube(2 / 3),
    "linalg_qr": _cube(4 / 3),
    "linalg_eigh": _cube(9),
    "linalg_eig": _cube(25),
    "linalg_svd": _cube(22),
    "conv2d": _conv2d,
    "conv2d_input_grad": _conv2d_input_grad,
    "conv2d_weight_grad": _conv2d_weight_grad,
    "max_pool2d": _pool,
    "avg_pool2d": _pool,
    "max_pool2d_backward": _pool,
    "avg_pool2d_backward": _pool,
    "var": _var,
    # two products and a difference per component
    "cross": lambda args, params, out: 3 * _size(out),
}


def flops(prim, args: tuple, params: dict, out) -> int | None:
    """FLOPs of one call of ``prim`` (0 for memory operations), or None when no formula is
    known."""
    name = prim.name
    fn = _BY_NAME.get(name)
    if fn is None:
        if prim.kind in MEMORY_KINDS or name in MEMORY_NAMES:
            return 0
        fn = _BY_KIND.get(prim.kind)
        if fn is None:
            return None
    first = out[0] if isinstance(out, (tuple, list)) else out
    if not isinstance(first, Array):
        return 0
    return fn(args, params, first)
