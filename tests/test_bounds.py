"""Bounds safety: every primitive of the op table, over every memory layout and awkward shapes
(zero-size axes first, last and in the middle, 0-d, size-1), writes only inside its output.

Two nets catch a stray write:

* here, always: CPU outputs are allocated inside a larger buffer with canary values before and
  after; every test checks that no canary changed;
* ``make boundscheck``: the same tests with numba's bounds checking on (``NUMBA_BOUNDSCHECK=1``,
  a separate ``NUMBA_CACHE_DIR`` so that no unchecked cached kernel is reused), where any kernel
  indexing past a buffer raises ``IndexError`` at the faulty access.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import strided as xp
from strided import _dtypes as sdt
from strided import dispatch

from .op_table import ELEMENTWISE_OPS, OTHER_OPS
from .strategies import LAYOUTS, in_layout, values

PAD = 16
# `make boundscheck` (NUMBA_BOUNDSCHECK=1) walks every elementwise op and shape; `make test` a
# sample: every op template (unary, binary, each result rule) and the shapes that broke before
FULL = os.environ.get("NUMBA_BOUNDSCHECK") == "1"
SHAPES = [
    (),
    (1,),
    (5,),
    (0,),
    (3, 4),
    (0, 3),
    (3, 0),
    (2, 1, 3),
    (0, 1, 1, 2),
    (2, 3, 0, 2),
    (2, 3, 2, 2),
]
if not FULL:
    SHAPES = [(), (0,), (3, 0), (2, 1, 3), (0, 1, 1, 2), (2, 3, 2, 2)]
_SAMPLE = {
    "abs",
    "add",
    "divide",
    "exp",
    "equal",
    "floor_divide",
    "sqrt",
    "isnan",
    "logical_and",
    "bitwise_left_shift",
    "real",
    "pow",
    "maximum",
    "atan2",
    "round",
}
ELEMENTWISE_SWEEP = [op for op in ELEMENTWISE_OPS if FULL or op.name in _SAMPLE]


@pytest.fixture(autouse=True)
def guarded_outputs(monkeypatch):
    """CPU allocation with canaries on both sides of every buffer; checked after the test."""
    original = dispatch.kernel("empty", "cpu")
    made = []

    def empty_guarded(size, dtype):
        big = original(size + 2 * PAD, dtype)
        big.view(np.uint8)[:] = 0xA5
        made.append((big, size))
        return big[PAD : PAD + size]

    dispatch.register("empty", "cpu")(empty_guarded)  # memoized plans are forgotten
    yield made
    dispatch.register("empty", "cpu")(original)
    for big, size in made:
        raw = big.view(np.uint8)
        isz = big.itemsize
        before, after = raw[: PAD * isz], raw[(PAD + size) * isz :]
        assert (before == 0xA5).all() and (after == 0xA5).all(), (
            f"a kernel wrote outside its output of {size} {big.dtype} elements"
        )


def _arrays(shape, d, seed=0):
    rng = np.random.default_rng(seed)
    v = values(rng, shape, d, (-3.0, 3.0), (-5, 5))
    for layout in LAYOUTS:
        yield layout, in_layout(v, layout)[1]


def _one_dtype_per_kind(op):
    kinds = {}
    for d in op.accepted():
        kinds.setdefault(d.kind, d)
    # the widest of each kind: the fewest extra compilations under NUMBA_BOUNDSCHECK
    pick = {
        sdt.SIGNED: sdt.int64,
        sdt.UNSIGNED: sdt.uint8,
        sdt.REAL: sdt.float64,
        sdt.COMPLEX: sdt.complex128,
        sdt.BOOL: sdt.bool,
    }
    return [pick.get(k, d) for k, d in kinds.items()]


@pytest.mark.parametrize("op", ELEMENTWISE_SWEEP, ids=lambda op: op.name)
def test_elementwise_ops_stay_in_bounds(op):
    for d in _one_dtype_per_kind(op):
        for shape in SHAPES:
            for layout, x in _arrays(shape, d):
                args = [x] if op.arity == 1 else [x, xp.flip(x) if x.ndim else x]
                try:
                    got = op.fn(*args)
                except (ValueError, OverflowError):  # domain errors of integer ops
                    continue
                assert got.shape == x.shape, (op.name, layout, shape)
            if op.arity == 2 and len(shape) >= 2:  # broadcasting: a row against a column
                a = xp.asarray(values(np.random.default_rng(1), shape[-1:], d, int_domain=(1, 5)))
                b = xp.asarray(
                    values(
                        np.random.default_rng(2),
                        shape[:1] + (1,) * (len(shape) - 1),
                        d,
                        int_domain=(1, 5),
                    )
                )
                got = op.fn(a, b)
                assert got.shape == xp.broadcast_shapes(a.shape, b.shape)


def _axes(x):
    return [None] + list(range(-x.ndim, x.ndim))


def _calls(name):
    """Public calls exercising primitive ``name``: functions of an array returning arrays."""
    f = {
        "copy": lambda x: [xp.asarray(x, copy=True), xp.astype(x, xp.float32)],
        "where": lambda x: [xp.where(xp.astype(x, xp.bool), x, xp.flip(x))],
        # bounds by value and as arrays (broadcast rows, x's own layout)
        "clip": lambda x: (
            [xp.clip(x, 0, 1), xp.clip(x, None, x), xp.clip(x, xp.flip(x), 3)]
            if x.dtype.kind in ("signed integer", "unsigned integer", "real floating")
            else []
        ),
        "fill": lambda x: [xp.full_like(x, 3)],
        "full": lambda x: [xp.full(x.shape, 3, dtype=x.dtype), xp.zeros_like(x)],
        "normalize_index": lambda x: [x[xp.asarray([-1, 0])]] if x.ndim and x.shape[0] else [],
        "empty": lambda x: [xp.empty_like(x)],
        "arange": lambda x: [xp.arange(x.size)],
        "linspace": lambda x: [xp.linspace(0, 1, x.size)],
        "cumulative_sum": lambda x: [xp.cumulative_sum(x, axis=a) for a in range(x.ndim)],
        "cumulative_prod": lambda x: [xp.cumulative_prod(x, axis=a) for a in range(x.ndim)],
        "matmul": lambda x: [xp.matmul(x, x.mT)] if x.ndim >= 2 else [],
        # the fused dot: vecdot along each axis and norms over all axes and the last
        "dot": lambda x: (
            [xp.vecdot(x, x, axis=a) for a in range(x.ndim)]
            + [xp.linalg.vector_norm(x), xp.linalg.vector_norm(x, axis=-1, keepdims=True)]
            if x.ndim and x.dtype in (xp.float32, xp.float64)
            else []
        ),
        # the fused cross product along each axis of size 3, and a row broadcast against all
        "cross": lambda x: (
            [xp.linalg.cross(x, x[::-1], axis=a) for a in range(-x.ndim, 0) if x.shape[a] == 3]
            + ([xp.linalg.cross(x, x[:1], axis=-1)] if x.shape[-1] == 3 and x.shape[0] else [])
            if x.ndim >= 2
            else []
        ),
        # tril/triu's one pass at diagonals inside, at the edge of and beyond the matrices
        "triangle": lambda x: (
            [f(x, k=k) for f in (xp.tril, xp.triu) for k in (-2, 0, 1, 9)] if x.ndim >= 2 else []
        ),
        "unique_runs": lambda x: [*xp.unique_all(x), xp.unique_inverse(x)[1]] if x.ndim else [],
        # per-element counts along each axis: runs of 0 to 17 (the kernel's four stores, its
        # blocks of 16 and its exact last runs), and every count zero
        "repeat_counts": lambda x: [
            xp.repeat(x, xp.asarray(np.arange(n) * 5 % 18 if k else np.zeros(n, int)), axis=a)
            for a, n in enumerate(x.shape)
            for k in (0, 1)
        ],
        "nonzero": lambda x: list(xp.nonzero(x)) if x.ndim else [],
        # boolean masks over the leading 1..ndim axes, in x's own layout and in C order
        "mask_offsets": lambda x: [
            x[m]
            for k in range(1, x.ndim + 1)
            for m in (
                xp.astype(x[(...,) + (0,) * (x.ndim - k)] if x.size else x, xp.bool),
                xp.asarray(np.ones(x.shape[:k], bool)),
            )
            if m.shape == x.shape[:k]
        ],
        # masks of x's own shape: its values as bools (in x's layout) and all True
        "mask_select": lambda x: [
            x[m] for m in (xp.astype(x, xp.bool), xp.asarray(np.ones(x.shape, bool))) if x.ndim
        ],
        "count_true": lambda x: [xp.count_nonzero(x, axis=a) for a in _axes(x)],
        "searchsorted": lambda x: [xp.searchsorted(xp.sort(xp.reshape(x, (-1,))), x)],
        "isin_sorted": lambda x: (
            [xp.isin(x, xp.reshape(x, (-1,))[:3]), xp.isin(x, x)]
            if x.dtype.kind in ("signed integer", "unsigned integer", "real floating")
            else []
        ),
        "sort": lambda x: [xp.sort(x, axis=a) for a in range(x.ndim)],
        "argsort": lambda x: [xp.argsort(x, axis=a, descending=True) for a in range(x.ndim)],
        "take": lambda x: [
            xp.take(x, xp.asarray([0, -1]), axis=a) for a in range(x.ndim) if x.shape[a]
        ],
        "take_along_axis": lambda x: [
            xp.take_along_axis(x, xp.zeros_like(x, dtype=xp.int64), axis=a)
            for a in range(x.ndim)
            if x.shape[a]
        ],
        "gather": lambda x: [x[xp.asarray([0, 0])]] if x.ndim and x.shape[0] else [],
        "scatter": _scatter,
        "mask_fill": _mask_fill,
        "scatter_add": _scatter_add,
        **_NN_CALLS,
    }
    if name in ("sum", "prod", "max", "min", "any", "all", "argmax", "argmin", "var"):
        fn = getattr(xp, name)

        def reduce(x):
            out = []
            for a in _axes(x):
                n = x.size if a is None else x.shape[a]
                if n == 0 and name in ("max", "min", "argmax", "argmin"):
                    continue
                out.append(fn(x, axis=a))
                out.append(fn(x, axis=a, keepdims=True))
            return out

        return reduce
    return f.get(name)


def _scatter(x):
    if not x.ndim or not x.shape[0]:
        return []
    y = xp.asarray(x, copy=True)
    y[xp.asarray([0, -1])] = y[xp.asarray([-1, 0])]
    return [y]


def _mask_fill(x):
    """x[mask] = scalar with a mask in x's layout (a copy of x, which keeps it) and in C order."""
    if not x.ndim:
        return []
    out = []
    for mask in (xp.astype(x, xp.bool), xp.asarray(np.ones(x.shape, bool))):
        y = x + xp.zeros_like(x)  # x's layout where it is dense (the elementwise result follows)
        y[mask] = 1
        out.append(y)
    return out


def _scatter_add(x):
    if not x.ndim or not x.shape[0] or x.dtype not in (xp.float32, xp.float64):
        return []
    from strided._ops.searching import index_add

    return [index_add(x, x[xp.asarray([0, 0])], (xp.asarray([0, 0]),))]


def _nn(fn):
    """A call of strided.nn's convolution/pooling primitives on a 4-D floating array (others,
    and arrays without spatial extent, give nothing to check)."""

    def call(x):
        if x.ndim != 4 or x.dtype not in (xp.float32, xp.float64) or 0 in x.shape[2:]:
            return []
        return fn(x)

    return call


def _nn_calls():
    import strided.nn.functional as F
    from strided._ops import nn_conv as nc

    conv = ((1, 1), (1, 0, 1, 1), (1, 1), 1)  # stride, padding (t, b, l, r), dilation, groups

    def w(x):
        return xp.ones((2, x.shape[1], 2, 2), dtype=x.dtype)

    def pooled(x):
        return nc.max_pool2d_with_indices(x, (2, 2), (1, 1), (1, 1), (1, 1), True)

    avg = ((2, 2), (1, 1), (1, 1), True, False, None)
    return {
        "im2col": _nn(
            lambda x: [
                F.unfold(x, (2, 1), padding=1),
                nc.im2col(x, (2, 2), (1, 1), (1, 0, 1, 1), (1, 1), True),
            ]
        ),  # fmt: skip
        "col2im": _nn(lambda x: [F.fold(F.unfold(x, 2, padding=1), x.shape[2:], 2, padding=1)]),
        "max_pool2d": _nn(lambda x: list(pooled(x))),
        "max_pool2d_backward": _nn(lambda x: [nc.max_pool2d_backward(*pooled(x), x.shape[2:])]),
        "avg_pool2d": _nn(lambda x: [nc.avg_pool2d(x, *avg)]),
        "avg_pool2d_backward": _nn(
            lambda x: [nc.avg_pool2d_backward(nc.avg_pool2d(x, *avg), x.shape[2:], *avg)]
        ),
        "conv2d": _nn(lambda x: [nc.conv2d(x, w(x), *conv)]),
        "conv2d_input_grad": _nn(
            lambda x: [nc.conv2d_input_grad(nc.conv2d(x, w(x), *conv), w(x), x.shape[2:], *conv)]
        ),
        "conv2d_weight_grad": _nn(
            lambda x: [nc.conv2d_weight_grad(x, nc.conv2d(x, w(x), *conv), (2, 2), *conv)]
        ),
    }


_NN_CALLS = _nn_calls()
_DTYPES_OTHER = [sdt.float64, sdt.int64, sdt.complex128, sdt.bool]
_DATA_OPS = sorted(n for n in OTHER_OPS if _calls(n) is not None)


@pytest.mark.parametrize("name", _DATA_OPS)
def test_other_primitives_stay_in_bounds(name):
    call = _calls(name)
    ran = 0
    for d in _DTYPES_OTHER:
        for shape in SHAPES:
            for _layout, x in _arrays(shape, d):
                try:
                    outs = call(x)
                except TypeError:
                    continue  # a dtype the op rejects
                except ValueError as e:
                    assert "zero-dimensional" in str(e) or "dimension" in str(e), e
                    continue
                for o in outs:
                    np.asarray(o)
                ran += len(outs)
    assert ran > 0


def test_fft_and_linalg_primitives_stay_in_bounds():
    L = xp.linalg
    for shape in [(3, 3), (2, 3, 3), (0, 3, 3), (1, 1)]:
        for _layout, x in _arrays(shape, sdt.float64):
            x = x + 4 * xp.eye(shape[-1])
            for fn in (L.inv, L.det, L.slogdet, L.eigh, L.eig, L.svd, L.qr, L.cholesky):
                try:
                    fn(x @ x.mT if fn is L.cholesky else x)
                except L.LinAlgError:
                    pass
            L.solve(x, x)
            for fn in (xp.fft.fft, xp.fft.rfft, xp.fft.ifft):
                fn(x, axis=-1)
            xp.fft.irfft(xp.fft.rfft(x), n=shape[-1])
    # no kernel of their own writes (to_device's cpu kernel serves only a move between devices
    # with memory, which needs a second such device)
    writes_nothing = {"view", "composite", "interchange", "transfer"}
    left = {n for n in set(OTHER_OPS) - set(_DATA_OPS) if dispatch.primitive(n).kind not in
            writes_nothing}  # fmt: skip
    assert left == {
        "fft_c2c",
        "fft_r2c",
        "fft_c2r",
        "linalg_cholesky",
        "linalg_inv",
        "linalg_solve",
        "linalg_det",
        "linalg_slogdet",
        "linalg_eigh",
        "linalg_eig",
        "linalg_svd",
        "linalg_qr",
    }


def test_canaries_catch_a_stray_write(guarded_outputs):
    out = xp.empty((3,))
    out._buf.base[PAD + 3] = 0  # what a kernel writing one past the end would do
    big, size = guarded_outputs[-1]
    assert big.view(np.uint8)[(PAD + 3) * 8] == 0
    big.view(np.uint8)[:] = 0xA5  # restore, so the fixture's own check passes


def test_the_boundscheck_switch_catches_an_out_of_bounds_write(tmp_path):
    """With NUMBA_BOUNDSCHECK=1 the argmin kernel of the issue raises instead of corrupting."""
    code = textwrap.dedent(
        """
        import numpy as np
        from strided.backends.cpu import kernels as k
        out = np.empty(0, np.int64)
        x = np.zeros(2)
        try:
            k.argreduce(out, x, 0, 0, 0, 1, 1, 1, 2, False)  # one row into an empty output
        except IndexError as e:
            print("caught", e)
        """
    )
    env = dict(os.environ, NUMBA_BOUNDSCHECK="1", NUMBA_CACHE_DIR=str(tmp_path))
    r = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300
    )
    assert r.returncode == 0, r.stderr
    assert "caught" in r.stdout and "out of bounds" in r.stdout
