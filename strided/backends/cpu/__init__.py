"""The CPU backend: registers numba kernels (``kernels.py``) for every primitive.

Arrays arrive here already validated, cast to the compute dtype and allocated; this layer turns
them into buffer operands ``(buf, offset, strides)`` with broadcast strides, prepares layouts the
way its loops want them (reduced axis last, fixed ranks), and calls the buffer-level kernels.
Python scalars arrive as Python scalars.  numba is imported on first use, not at
``import strided``.  The dispatcher asks :func:`kernel_for` for each primitive's kernel.
"""

from __future__ import annotations

import functools
import itertools
import os
import sys
import threading

import numpy as np

from ..._layout import dense_order
from ..._layout import split_outer as _split_outer
from ..._shapes import broadcast_strides, reshape_strides
from . import _blas, _linalg
from ._memory import import_host, numpy_view

#: spins of an idle GNU OpenMP thread before it sleeps (libgomp's default: 300,000)
OPENMP_SPIN_COUNT = 3000


def _bound_openmp_spin() -> None:
    """Bound how long numba's idle OpenMP threads spin after a parallel kernel.

    libgomp's default keeps them spinning for ~10 ms on one of the cores, so a BLAS product, a
    user's thread or another process that needs that core waits meanwhile (2 cores: a 1M-element
    float32 add then a 384x384 float32 matmul 8.2 ms instead of 1.0; beside two busy processes a
    1M add 7.6 ms instead of ~0.5).  3000 spins (~0.15 ms) still cover the gap between
    back-to-back kernels (a loop of 100k-element adds runs as fast).  Set here, before libgomp
    is loaded (numba loads it with its first parallel kernel); a user's ``GOMP_SPINCOUNT`` or
    ``OMP_WAIT_POLICY`` is left alone."""
    if "GOMP_SPINCOUNT" not in os.environ and "OMP_WAIT_POLICY" not in os.environ:
        os.environ["GOMP_SPINCOUNT"] = str(OPENMP_SPIN_COUNT)


_bound_openmp_spin()

#: log2 of the CPU cycles an idle OpenBLAS thread spins before it sleeps (OpenBLAS's default:
#: 28, ~0.1 s)
OPENBLAS_SPIN_LOG2 = 20


def _bound_openblas_spin() -> None:
    """Bound how long OpenBLAS's idle threads spin after a threaded product or LAPACK call, as
    :func:`_bound_openmp_spin` bounds numba's: by default they spin ~0.1 s on the other cores
    beside strided's parallel kernels (2 cores, a loop of three 256 x 512 by 512 x 512 float32
    products then ten ``sum(tanh(x) * x)`` of 131,072 elements: 13 % less wall time, 27 % less
    CPU time; back-to-back products and inv of 70-200 square matrices as fast, 12 % less CPU).
    2**20 cycles (~0.4 ms) still cover back-to-back products.  Set here, before SciPy's
    OpenBLAS (the one strided's products and LAPACK calls use) is loaded with the first kernel;
    a user's ``OPENBLAS_THREAD_TIMEOUT`` is left alone."""
    os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", str(OPENBLAS_SPIN_LOG2))


_bound_openblas_spin()

_kernels = None


def _k():
    global _kernels
    if _kernels is None:
        from . import kernels

        _kernels = kernels
    return _kernels


_PY_SCALARS = frozenset({bool, int, float, complex})
#: the binary ops whose loops read each element before writing the same one (no fix-up pass
#: that reads the inputs again): their kernels write in-place operators (x += y, x *= 2) into x
#: itself (``into_self``), through the generated ``{op}_i`` / ``{op}_ip`` loops (``_codegen``)
INPLACE_OPS = frozenset(
    {"add", "subtract", "multiply", "divide", "bitwise_and", "bitwise_or", "bitwise_xor"}
)
PARALLEL_THRESHOLD = 1 << 16  # kernels.PARALLEL_THRESHOLD, without importing numba


def _operand(a, shape):
    """``a`` as a buffer operand viewed with ``shape`` (stride 0 on broadcast dimensions)."""
    st = a._strides if a._shape == shape else broadcast_strides(a._shape, a._strides, shape)
    return (a._buf, a._offset, st)


def _size(shape) -> int:
    n = 1
    for s in shape:
        n *= s
    return n


def _out(a):
    return (a._buf, a._offset, a._strides)


def _entry_point(name: str, args: list, broadcast: bool = False):
    """The compiled entry of the op's serial loop for these arguments: numba's type dispatch is
    skipped on later calls (every buffer is an aligned 1-D C array and every other argument an
    int64, so the buffers' dtypes determine the compiled signature)."""
    kernels = _k()
    loop = kernels._loops(name)[0]
    if broadcast:  # one operand constant over the loop: its serial kernel vectorises
        loop = getattr(kernels.G, f"{name}_sb", loop)
    entry = kernels.compiled_entry(loop, args)
    entry(*args)
    return entry


def _staged_operands(out, inputs, any_layout: bool) -> tuple:
    """``inputs`` with arrays laid out otherwise than ``out`` copied into a buffer of out's
    layout first, so the op's loop runs on unit strides: any such array (a stepped or
    transposed view of out's shape) where ``any_layout`` (an op whose SIMD code a stepped loop
    leaves scalar), else a vector or rows of 1-, 2- or 4-byte elements at step 2, which
    :func:`_deinterleave` copies at about memory speed (1M float32 ``abs(x[::2])`` 420 -> ~170
    us, NumPy 175; ``exp`` 290 -> ~160; ``abs(x[:, ::2])`` 573 -> ~150, 161).  ``out`` is
    fresh from the dispatcher: all of its buffer, in one memory order."""
    shape, strides = out._shape, out._strides
    for a in inputs:  # (the common call, every operand laid out like out, returns here first)
        if type(a) not in _PY_SCALARS and a._strides != strides:
            break
    else:
        return inputs
    if out._offset or _size(shape) != out._buf.size:
        return inputs
    pairs = (
        not any_layout
        and len(shape) <= 2
        and strides == _c_strides(shape)
        and out._buf.size >= PARALLEL_THRESHOLD
    )
    if not (any_layout or pairs):
        return inputs
    staged = []
    for slot, a in enumerate(inputs):
        if (
            type(a) not in _PY_SCALARS
            and a._shape == shape
            and a._strides != strides
            and (any_layout or a._strides[-1] == 2 and a._buf.itemsize in _PAIRS)
        ):
            buf = _scratch(out._buf.size, a._buf.dtype, slot)
            a_out = _Operand(buf, shape, strides, 0, a._dtype)
            copy_cpu(a_out, a)
            a = a_out
        staged.append(a)
    return tuple(staged)


_SCRATCH = threading.local()  # .buffers: this thread's staging buffers, one per operand slot
_SCRATCH_MAX = 1 << 25  # bytes: a larger staged operand gets a buffer of its own


def _scratch(n: int, dtype: np.dtype, slot: int) -> np.ndarray:
    """n elements of ``dtype`` for staged operand ``slot``, in a buffer this thread keeps between
    calls: a fresh one each call went back to the system when freed beside the output (glibc
    trims a free top over twice its mmap threshold), so every call paid its page faults (1M
    float64 staged: ~2000 faults, ~1.5 ms against the op's 0.3)."""
    try:
        buffers = _SCRATCH.buffers
    except AttributeError:
        buffers = _SCRATCH.buffers = {}
    held = buffers.get(slot)  # (raw bytes, the last view's dtype and length, that view)
    if held is not None and held[1] is dtype and held[2] == n:
        return held[3]  # (a loop's calls ask for the same view: no slice and view, ~0.5 us)
    nbytes = n * dtype.itemsize
    if nbytes > _SCRATCH_MAX:
        return np.empty(n, dtype)
    raw = None if held is None else held[0]
    if raw is None or raw.size < nbytes:
        raw = np.empty(nbytes, np.uint8)
    view = raw[:nbytes].view(dtype)
    buffers[slot] = (raw, dtype, n, view)
    return view


def _unit_stride_copy(x, n: int, slot: int) -> np.ndarray:
    """The vector ``x`` (``n`` elements at any step) copied to unit stride into this thread's
    scratch ``slot`` by the copy loop's compiled entry, no layout planning."""
    buf = _scratch(n, x._buf.dtype, slot)
    _copy_call((x._dtype, x._dtype), (buf, 0, 0, 0, 1, x._buf, x._offset, 0, 0, x._strides[0],
                                      1, 1, n))  # fmt: skip
    return buf


_FLOAT_OUT = ("real floating",)
_REAL_OUT = ("real floating", "signed integer", "unsigned integer")
#: op -> the output kinds for which its loops are SIMD code that a stepped operand leaves
#: scalar: their stepped or transposed operands staged through out's layout (1M float32
#: ``pow(x[::2], x[1::2])`` 5.4 -> 1.1 ms, NumPy 1.9; atan2 4.5 -> 0.64, 1.8; float64 logaddexp
#: 10.8 -> 2.8, 6.0; sqrt 0.73 -> 0.49, 0.35; float64 sign, whose stepped loop LLVM vectorises
#: with gathers, 2.6 -> 0.72, 0.87); floor_divide and remainder of any real dtype, whose fix-up
#: passes and integer divisions run per element at a step (4096 float32 ``x[::3] // y[::3]``
#: 31 -> ~7 us, contiguous 3.9); the _vmath functions with a second pass (UNARY_FIX: it reads a
#: stepped operand element by element after the gathered vector loop; 4096 float64
#: ``log(x[::2])`` 7.7 -> 6.0 us, 1M 0.84 -> 0.63 ms; float32 ``log10`` 5.8 -> 4.4 us; the others,
#: tanh or atan, lost ~0.4 us staged); not the cheap maps, whose stepped loop costs less than the
#: copy
_STAGED_OPS = {
    **dict.fromkeys(
        ("pow", "atan2", "hypot", "logaddexp", "sqrt", "reciprocal", "sign"), _FLOAT_OUT
    ),
    **dict.fromkeys(("floor_divide", "remainder"), _REAL_OUT),
    **dict.fromkeys(("exp", "log", "log1p", "log2", "log10", "sin", "cos", "tan"), _FLOAT_OUT),
}
_STAGE_MIN = 1024  # elements: below, the copy's call costs about what staging saves


_PAIRS_OPS: dict = {}  # op name -> whether the generated module has its ``{name}_2`` loops
_PAIRS_MIN = 1024  # elements: smaller vectors at step 2 take the stepped loop


def _has_pairs(name: str, dtype) -> bool:
    """Whether op ``name`` on operands of ``dtype`` has the loops that read vectors at step 2 as
    pairs (``{name}_2``/``{name}_2p``: ``_codegen.PAIRS_BINARY``; real dtypes only)."""
    known = _PAIRS_OPS.get(name)
    if known is None:
        known = _PAIRS_OPS[name] = f"{name}_2" in _k().G._LOOPS
    return known and dtype.kind != "complex floating"


def _step_2_dtype(inputs, shape: tuple):
    """The dtype of the arrays among ``inputs`` where every one is a vector of ``shape`` (none
    broadcast) at step 2, which the pair loops read; None otherwise or with no array (Python
    scalars pass)."""
    dtype = None
    for a in inputs:
        if type(a) not in _PY_SCALARS:
            if a._strides != (2,) or a._shape != shape:
                return None
            dtype = a._dtype
    return dtype


def _pairs_run(name: str, out, inputs) -> bool:
    """A large op of vectors at step 2 (and Python scalars) into a dense vector ``out``, through
    the parallel loop that reads each such operand as pairs (``{name}_2p``: one pass, vectorised
    loads).  False, nothing written, for other layouts, ops or dtypes."""
    if out._offset or out._strides != (1,):
        return False
    dtype = _step_2_dtype(inputs, out._shape)
    if dtype is None or not _has_pairs(name, dtype):
        return False
    k = _k()
    n = out._shape[0]
    parts = k.thread_parts(n)
    loop = getattr(k.G, f"{name}_2p")
    if len(inputs) == 1:
        x = inputs[0]
        args = (out._buf, x._buf, x._offset, n, 0, parts)
    else:
        operands = []
        for a in inputs:
            if type(a) in _PY_SCALARS:
                operands += [_scalar_value(a, dtype.numpy), 0, 0]
            else:
                operands += [a._buf, a._offset, 1]
        args = (out._buf, *operands, n, 0, parts)
    k.call_compiled(loop, (loop, out._buf.dtype, dtype.numpy), args)
    return True


def _elementwise(name: str, kind: str):
    # the output kinds whose stepped or transposed operands are staged (_STAGED_OPS)
    staged_kinds = _STAGED_OPS.get(name, ())
    staged = bool(staged_kinds)
    pairs_entries: dict = {}  # (output dtype, input dtype) -> entry of the serial ``{name}_2``
    reads_values = name != "imag"  # (imag of a real array: zeros, its operand never read)
    entries: dict = {}  # (output dtype, compute dtype) -> compiled entry point of the serial loop
    dense_entries: dict = {}  # the same key -> entry point of the dense loop (``{name}_d``)

    def general(out, inputs) -> None:
        shape = out._shape
        size = out._buf.size
        if size >= PARALLEL_THRESHOLD and len(shape) == 1 and _pairs_run(name, out, inputs):
            return
        if size >= PARALLEL_THRESHOLD and reads_values or staged and size >= _STAGE_MIN:
            inputs = _staged_operands(out, inputs, out._dtype.kind in staged_kinds)
        nd = len(shape)
        operands = [
            (_scalar_buffer(a, inputs), 0, (0,) * nd)
            if type(a) in _PY_SCALARS
            else _operand(a, shape)
            for a in inputs
        ]
        _k().elementwise(name, _out(out), operands, shape)

    def first_call(key, args) -> None:
        # a key of three, (output dtype, compute dtype, True): an operand is a broadcast scalar
        entries[key] = _entry_point(name, args, len(key) == 3)

    broadcast_plans: dict = {}  # (shapes and strides of out, x1, x2) -> one loop call, or False

    def broadcast(out, x1, x2) -> None:
        """A small binary op of two arrays that broadcast (a row or a column against a matrix,
        x - mean(x, axis=0)): the layout planned once per shapes and strides, then one call of
        the serial loop (``_sb`` where an operand is constant along the inner loop) through its
        compiled entry (64x64 float32 + a row: 7.0 -> 3.5 us)."""
        key = (out._shape, out._strides, x1._shape, x1._strides, x2._shape, x2._strides)
        plan = broadcast_plans.get(key)
        if plan is None:
            plan = broadcast_plan(out._shape, out._strides, x1, x2)
            if len(broadcast_plans) >= 4096:
                broadcast_plans.clear()
            broadcast_plans[key] = plan
        if plan is False:
            general(out, (x1, x2))
            return
        loop, d0, o0, o1, o2, d1, a0, a1, a2, d2, b0, b1, b2, n0, n1, n2 = plan
        b1buf, b2buf = x1._buf, x2._buf
        args = (out._buf, out._offset + d0, o0, o1, o2, b1buf, x1._offset + d1, a0, a1, a2,
                b2buf, x2._offset + d2, b0, b1, b2, n0, n1, n2)  # fmt: skip
        _k().call_compiled(loop, (loop, out._buf.dtype, b1buf.dtype, b2buf.dtype), args)

    def broadcast_plan(shape, out_strides, x1, x2):
        """(loop, then its arguments but the buffers) of the one serial loop call that runs a
        binary op of ``x1`` and ``x2`` broadcast to ``shape`` into an output of ``out_strides``
        (offsets relative to each operand's), or False where the layout takes more calls."""
        k = _k()
        calls = k._map_plan(shape, (out_strides, _operand(x1, shape)[2], _operand(x2, shape)[2]))
        if len(calls) != 1:
            return False
        (d0, d1, d2), n0, n1, n2, (s0, s1, s2) = calls[0]
        loop = k._loops(name)[0]
        if s0[2] == 1 and n2 > 1 and {s1[2], s2[2]} == {0, 1}:
            loop = getattr(k.G, f"{name}_sb", loop)  # an operand constant along the inner loop
        return (loop, d0, *s0, d1, *s1, d2, *s2, n0, n1, n2)

    def broadcast_dense(out_dtype, in_dtype, shape):
        """For a small binary op of two arrays of ``in_dtype`` that broadcast to ``shape`` (a
        row or a column against a matrix, a bias added to a batch): ``fn(x1, x2) -> output
        buffer`` (C order), or None from fn for a layout that takes more than one loop call.
        Planned once per pair of strides; the loop runs through its compiled entry point
        (64x64 float32 minus a row: 3.4 -> 1.8 us in all)."""
        size = _size(shape)
        if not 0 < size < PARALLEL_THRESHOLD:
            return None
        out_np, empty = out_dtype.numpy, np.empty
        out_strides = _c_strides(shape)
        plans: dict = {}  # (x1's strides, x2's strides) -> (entry, its arguments) or False

        def planned(x1, x2):
            plan = broadcast_plan(shape, out_strides, x1, x2)
            if plan is not False:  # (the entry's types: every buffer is a 1-D C array)
                loop = plan[0]
                types = (empty(1, out_np), *plan[1:5], x1._buf, *plan[5:9], x2._buf, *plan[9:])
                plan = (_k().compiled_entry(loop, types), *plan[1:])
            if len(plans) >= 64:
                plans.clear()
            plans[(x1._strides, x2._strides)] = plan
            return plan

        def fn(x1, x2):
            plan = plans.get((x1._strides, x2._strides))
            if plan is None:
                plan = planned(x1, x2)
            if plan is False:
                return None
            buf = empty(size, out_np)
            entry, d0, o0, o1, o2, d1, a0, a1, a2, d2, b0, b1, b2, n0, n1, n2 = plan
            entry(buf, d0, o0, o1, o2, x1._buf, x1._offset + d1, a0, a1, a2, x2._buf,
                  x2._offset + d2, b0, b1, b2, n0, n1, n2)  # fmt: skip
            return buf

        return fn

    def dense_entry(key, args):
        """The entry point of the op's dense loop (``{name}_d``: the output, each operand with
        its offset, the count) for ``key``, found on its first call."""
        entry = dense_entries.get(key)
        if entry is None:
            k = _k()
            entry = dense_entries[key] = k.compiled_entry(getattr(k.G, f"{name}_d"), args)
        return entry

    # the per-call fast paths (arity written out: this is the hot path of every small op):
    # operands laid out exactly like the output, or Python scalars, need no layout planning
    def unary(out, x):
        buf = out._buf
        size = buf.size  # out is fresh from the dispatcher: dense, offset 0
        if 0 < size < PARALLEL_THRESHOLD and x._shape == out._shape:
            st = x._strides
            if st == out._strides:
                step = 1
            elif len(st) == 1:  # a stepped vector (x[::2]): the same loop, no layout planning
                step = st[0]
            else:
                return general(out, (x,))
            args = (buf, 0, 0, 0, 1, x._buf, x._offset, 0, 0, step, 1, 1, size)
            entry = entries.get((out._dtype, x._dtype))
            if entry is None:
                first_call((out._dtype, x._dtype), args)
            else:
                entry(*args)
            return
        general(out, (x,))

    def binary(out, x1, x2):
        buf = out._buf
        size = buf.size
        if 0 < size < PARALLEL_THRESHOLD:
            shape, st = out._shape, out._strides
            if staged and size >= _STAGE_MIN and out._dtype.kind in staged_kinds:
                # a stepped or transposed operand of a SIMD op: staged by general (4096 float32
                # pow(x[::2], x[1::2]) 65 -> 14 us, NumPy 7.7, contiguous 5.1; atan2 41 -> 14)
                for a in (x1, x2):
                    if type(a) not in _PY_SCALARS and a._shape == shape and a._strides != st:
                        return general(out, (x1, x2))
            # (a vector of any step, x[::2]: its step in the same serial loop, no planning)
            if type(x2) in _PY_SCALARS:
                if x1._shape == shape and (x1._strides == st or len(st) == 1):
                    d = x1._dtype
                    a1 = (x1._buf, x1._offset, x1._strides[0] if len(st) == 1 else 1)
                    a2 = (np.array((x2,), d.numpy), 0, 0)
                else:
                    return general(out, (x1, x2))
            elif type(x1) in _PY_SCALARS:
                if x2._shape == shape and (x2._strides == st or len(st) == 1):
                    d = x2._dtype
                    a1 = (np.array((x1,), d.numpy), 0, 0)
                    a2 = (x2._buf, x2._offset, x2._strides[0] if len(st) == 1 else 1)
                else:
                    return general(out, (x1, x2))
            elif len(st) == 1 and x1._shape == shape and x2._shape == shape:
                d = x1._dtype
                a1 = (x1._buf, x1._offset, x1._strides[0])
                a2 = (x2._buf, x2._offset, x2._strides[0])
            elif x1._shape == shape and x1._strides == st:
                d = x1._dtype
                a1 = (x1._buf, x1._offset, 1)
                if x2._shape == shape and x2._strides == st:
                    a2 = (x2._buf, x2._offset, 1)
                elif x2._shape.count(1) == len(x2._shape):  # one element (0-d, (1, 1), ...)
                    a2 = (x2._buf, x2._offset, 0)
                else:
                    return broadcast(out, x1, x2)
            elif x1._shape.count(1) == len(x1._shape) and x2._shape == shape and x2._strides == st:
                d = x1._dtype
                a1 = (x1._buf, x1._offset, 0)
                a2 = (x2._buf, x2._offset, 1)
            else:
                return broadcast(out, x1, x2)
            args = (
                buf,
                0,
                0,
                0,
                1,
                a1[0],
                a1[1],
                0,
                0,
                a1[2],
                a2[0],
                a2[1],
                0,
                0,
                a2[2],
                1,
                1,
                size,
            )
            # (the serial loop for an operand constant along it, ``_sb``, takes the other's
            # elements at unit stride)
            sb = a1[2] + a2[2] == 1 and not a1[2] * a2[2]
            key = (out._dtype, d, True) if sb else (out._dtype, d)
            entry = entries.get(key)
            if entry is None:
                first_call(key, args)
            else:
                entry(*args)
            return
        general(out, (x1, x2))

    def dense(out_dtype, in_dtype, size: int, pattern: tuple):
        """A kernel for one call shape, or None: ``pattern`` says per operand whether it is a
        dense array laid out like the output (True) or a Python scalar (False).  The callable
        allocates the output buffer itself and returns it (``fn(*operands) -> buffer``)."""
        if not 0 < size < PARALLEL_THRESHOLD:
            return None
        key = (out_dtype, in_dtype)
        empty, out_np, in_np = np.empty, out_dtype.numpy, in_dtype.numpy
        # operands dense like the output: the dense loop, whose entry converts 4 or 6
        # arguments from Python where the serial loop's converts 13 or 18 (~150 ns a call)
        if pattern == (True,):
            compiled = None

            def fn(x):
                nonlocal compiled
                buf = empty(size, out_np)
                if compiled is None:
                    compiled = dense_entry(key, (buf, x._buf, x._offset, size))
                compiled(buf, x._buf, x._offset, size)
                return buf

        elif pattern == (True, True):
            compiled = None

            def fn(x1, x2):
                nonlocal compiled
                buf = empty(size, out_np)
                if compiled is None:
                    args = (buf, x1._buf, x1._offset, x2._buf, x2._offset, size)
                    compiled = dense_entry(key, args)
                compiled(buf, x1._buf, x1._offset, x2._buf, x2._offset, size)
                return buf

        elif pattern in ((True, False), (False, True)):
            scalar_first = pattern[0] is False
            key = (out_dtype, in_dtype, True)

            def fn(x1, x2):
                buf = empty(size, out_np)
                entry = entries.get(key)
                if scalar_first:
                    a, ao, ast = _scalar_value(x1, in_np), 0, 0
                    b, bo, bst = x2._buf, x2._offset, 1
                else:
                    a, ao, ast = x1._buf, x1._offset, 1
                    b, bo, bst = _scalar_value(x2, in_np), 0, 0
                args = (buf, 0, 0, 0, 1, a, ao, 0, 0, ast, b, bo, 0, 0, bst, 1, 1, size)
                if entry is None:
                    first_call(key, args)
                else:
                    entry(*args)
                return buf

        else:
            return None
        fn.stepped = stepped(out_dtype, in_dtype, size, pattern)
        return fn

    def stepped(out_dtype, in_dtype, size: int, pattern: tuple):
        """The companion of :func:`dense` for vectors: ``fn(*operands) -> buffer`` (C order)
        where the operands of the output's shape are vectors at any step (``x[::2]``,
        ``x[::-1]``), through the serial loop's compiled entry with their steps, no layout
        planning (4096 float32 ``x[::2] + y[::2]``: 4.4 -> ~2.5 us; PyTorch 2.7).  A SIMD op's
        stepped operands (``_STAGED_OPS``) are copied to unit stride first, from ``_STAGE_MIN``
        elements, and its dense loop runs on them."""
        key = (out_dtype, in_dtype)
        empty, out_np, in_np = np.empty, out_dtype.numpy, in_dtype.numpy
        stage = size >= _STAGE_MIN and out_dtype.kind in staged_kinds
        # operands at step 2 (and Python scalars): the loop reading them as pairs, ``{name}_2``,
        # from _PAIRS_MIN elements (below, the stepped loop costs about the same, and the tests'
        # many small views would compile a second loop for each op and dtype)
        pairs = size >= _PAIRS_MIN and _has_pairs(name, in_dtype)
        pairs_entry = pairs_entries.get(key)

        def run_serial(key, args) -> None:
            # the serial loop with the operands' steps, through its compiled entry
            entry = entries.get(key)
            if entry is None:
                first_call(key, args)
            else:
                entry(*args)

        def run_pairs(args) -> None:
            nonlocal pairs_entry
            if pairs_entry is None:
                k = _k()
                loop = getattr(k.G, f"{name}_2")
                pairs_entry = pairs_entries[key] = k.compiled_entry(loop, args)
            pairs_entry(*args)

        def unit(x, slot: int) -> tuple:
            # (buffer, offset) of x at unit stride: itself, or a copy in this thread's scratch
            if x._strides[0] == 1:
                return x._buf, x._offset
            return _unit_stride_copy(x, size, slot), 0

        if pattern == (True,):

            def fn(x):
                buf = empty(size, out_np)
                if pairs and x._strides[0] == 2:
                    run_pairs((buf, x._buf, x._offset, size, 0))
                    return buf
                if stage:
                    a, ao = unit(x, 0)
                    dense_entry(key, (buf, a, ao, size))(buf, a, ao, size)
                    return buf
                args = (buf, 0, 0, 0, 1, x._buf, x._offset, 0, 0, x._strides[0], 1, 1, size)
                run_serial(key, args)
                return buf

        elif pattern == (True, True):

            def fn(x1, x2):
                buf = empty(size, out_np)
                if pairs and x1._strides[0] == 2 and x2._strides[0] == 2:
                    run_pairs((buf, x1._buf, x1._offset, 1, x2._buf, x2._offset, 1, size, 0))
                    return buf
                if stage:
                    a, ao = unit(x1, 0)
                    b, bo = unit(x2, 1)
                    args = (buf, a, ao, b, bo, size)
                    dense_entry(key, args)(*args)
                    return buf
                args = (buf, 0, 0, 0, 1, x1._buf, x1._offset, 0, 0, x1._strides[0],
                        x2._buf, x2._offset, 0, 0, x2._strides[0], 1, 1, size)  # fmt: skip
                run_serial(key, args)
                return buf

        elif pattern in ((True, False), (False, True)):
            scalar_first = pattern[0] is False

            def fn(x1, x2):
                buf = empty(size, out_np)
                if scalar_first:
                    a, ao, ast = _scalar_value(x1, in_np), 0, 0
                    b, bo, bst = x2._buf, x2._offset, x2._strides[0]
                    if pairs and bst == 2:
                        run_pairs((buf, a, 0, 0, b, bo, 1, size, 0))
                        return buf
                    if stage:
                        b, bo = unit(x2, 1)
                        bst = 1
                else:
                    a, ao, ast = x1._buf, x1._offset, x1._strides[0]
                    b, bo, bst = _scalar_value(x2, in_np), 0, 0
                    if pairs and ast == 2:
                        run_pairs((buf, a, ao, 1, b, 0, 0, size, 0))
                        return buf
                    if stage:
                        a, ao = unit(x1, 0)
                        ast = 1
                # (the loop for an operand constant along it, ``_sb``, takes the other's
                # elements at unit stride)
                k = (out_dtype, in_dtype, True) if ast + bst == 1 else key
                args = (buf, 0, 0, 0, 1, a, ao, 0, 0, ast, b, bo, 0, 0, bst, 1, 1, size)
                run_serial(k, args)
                return buf

        else:
            return None
        return fn

    kernel = binary if kind == "binary" else unary
    if name == "floor_divide":
        generic = binary

        def kernel(out, x1, x2):
            # a small-integer array over a Python int: the float64 route (_kern_arith)
            if _arith().floor_divide_scalar(out, x1, x2):
                return
            generic(out, x1, x2)

    elif name == "pow":
        generic_pow = binary

        def kernel(out, x1, x2):
            # x ** 2, ** 0.5, ** -1, ** 1 for floats: one correctly rounded operation, not libm
            if type(x2) in _PY_SCALARS and _arith().pow_scalar(out, x1, x2, copy_cpu):
                return
            generic_pow(out, x1, x2)

    elif name in _CONSTANT_FOR_INTEGERS:
        generic_unary = unary
        value = _CONSTANT_FOR_INTEGERS[name]

        def kernel(out, x):
            # integers and bools are never NaN or infinite: the result is a fill, not a loop
            # (kernels.fill: both threads write, ~10 % faster than NumPy's one-thread memset)
            if x._dtype.kind in _EXACT_KINDS and out._buf.size >= PARALLEL_THRESHOLD:
                fill_cpu(out, value)
                return
            generic_unary(out, x)

    inplace_entries: dict = {}  # buffer dtype -> entry point of the serial in-place loop

    def into_self(out, x2, n: int) -> bool:
        """``out = out op x2`` written into ``out`` itself, of ``n`` elements in C order from
        its buffer's start (``x2``: a Python scalar, or an array of out's dtype broadcast to its
        shape); False, with nothing written, where out is not all of its buffer or ``x2``
        overlaps it other than element for element.  (In-place operators:
        ``operators._into_self``.)"""
        buf = out._buf
        if buf.size != n:
            return False
        if type(x2) in _PY_SCALARS:
            b, bo, bs = np.array((x2,), buf.dtype), 0, 0
        else:
            b = x2._buf
            same_layout = x2._shape == out._shape and x2._strides == out._strides
            if b is buf:  # the same memory: only element for element (x += x)
                if not same_layout or x2._offset:
                    return False
            elif (b.base is not None or buf.base is not None) and np.may_share_memory(b, buf):
                return False
            if not same_layout:  # a broadcast operand: the loop reads it before each write
                binary(out, out, x2)
                return True
            bo, bs = x2._offset, 1
        if n < PARALLEL_THRESHOLD:
            entry = inplace_entries.get(buf.dtype)
            if entry is None:
                loop = getattr(_k().G, f"{name}_i")
                entry = inplace_entries[buf.dtype] = _k().compiled_entry(loop, (buf, b, bo, bs, n))
            entry(buf, b, bo, bs, n)
        else:
            loop = getattr(_k().G, f"{name}_ip")
            _k().call_compiled(loop, (loop, buf.dtype), (buf, b, bo, bs, n, _k().SEGMENT))
        return True

    kernel.__name__ = kernel.__qualname__ = f"{name}_cpu"
    kernel.dense = dense
    if kind == "binary":
        kernel.broadcast_dense = broadcast_dense
    if name in INPLACE_OPS:
        kernel.into_self = into_self
    if name == "pow":
        kernel.dense = _pow_dense(dense)
    elif name == "floor_divide":
        kernel.dense = _floor_divide_dense(dense)
    return kernel


_CONSTANT_FOR_INTEGERS = {"isnan": False, "isinf": False, "isfinite": True}
_EXACT_KINDS = frozenset({"bool", "signed integer", "unsigned integer"})
#: integer dtypes whose floor division by a Python int takes _kern_arith's exact float64 route
_SMALL_INT = frozenset({"int8", "int16", "int32", "uint8", "uint16", "uint32"})


def _floor_divide_dense(dense):
    """``dense`` for floor_divide, with a small-integer array over a Python int other than 0
    and -1 through _kern_arith's multiplication route, as the kernel takes it at every size, in
    one call of its compiled loop (4096 int32 // 7: 9-10 -> 4.4 us; NumPy 3.1-3.5)."""

    def floor_divide_dense(out_dtype, in_dtype, size: int, pattern: tuple):
        fn = dense(out_dtype, in_dtype, size, pattern)
        if (
            fn is None
            or pattern != (True, False)
            or out_dtype is not in_dtype
            or in_dtype.name not in _SMALL_INT
        ):
            return fn
        empty, out_np, call, run = np.empty, out_dtype.numpy, _k().call_compiled, _arith()._fdiv_run
        key = (run, out_np)

        def int_divisor(x1, x2):
            if type(x2) is not int or x2 == 0 or x2 == -1:
                return fn(x1, x2)  # (the division loop: 0 gives 0, INT_MIN // -1 wraps)
            buf = empty(size, out_np)
            call(run, key, (buf, x1._buf, x1._offset, size, x2))
            return buf

        return int_divisor

    return floor_divide_dense


def _pow_dense(dense):
    """``dense`` for pow, with x ** 2 / 0.5 / -1 / 1 of floats and integers to a Python int
    through _kern_arith at every size (the same bits as the large-array path)."""

    def pow_dense(out_dtype, in_dtype, size: int, pattern: tuple):
        fn = dense(out_dtype, in_dtype, size, pattern)
        if fn is None or pattern != (True, False):
            return fn
        empty, out_np, arith = np.empty, out_dtype.numpy, _arith()
        if out_dtype.kind in arith._INT_KINDS and out_dtype is in_dtype:

            def int_power(x1, x2):
                if not arith.int_power_exponent(x1, x2):
                    return fn(x1, x2)
                buf = empty(size, out_np)
                arith._ipow_run(buf, x1._buf[x1._offset : x1._offset + size], size, x2)
                return buf

            return int_power
        if out_dtype.kind != "real floating":
            return fn

        def special(x1, x2):
            which = arith._POW_WHICH.get(x2) if type(x2) in (int, float) else None
            if which is None:
                return fn(x1, x2)
            buf = empty(size, out_np)
            arith._pow_special_run(buf, x1._buf[x1._offset : x1._offset + size], size, which)
            return buf

        return special

    return pow_dense


_arith_kernels = None


def _arith():
    """The arithmetic kernels' module, imported on first use (numba compiles on import)."""
    global _arith_kernels
    if _arith_kernels is None:
        from . import _kern_arith

        _arith_kernels = _kern_arith
    return _arith_kernels


_SCALARS: dict = {}  # (value, type, dtype) -> read-only one-element buffer


def _scalar_value(value, np_dtype):
    """A Python scalar as a one-element buffer of ``np_dtype``; kept for values that recur
    (kernels never write their inputs)."""
    cls = value.__class__
    if not value and cls is not int and cls is not bool:
        # 0.0 == -0.0 (and 0j == -0j): equal keys, different signs; not kept (an int 0 is)
        return np.array((value,), np_dtype)
    key = (value, cls, np_dtype)
    buf = _SCALARS.get(key)
    if buf is None:
        buf = np.array((value,), np_dtype)
        if len(_SCALARS) >= 1024:
            _SCALARS.clear()
        _SCALARS[key] = buf
    return buf


def _scalar_buffer(value, inputs):
    """A Python scalar operand as a one-element buffer of the compute dtype (the dtype of the
    array operands, which the dispatcher has cast to it)."""
    for a in inputs:
        if type(a) not in _PY_SCALARS:
            return np.array((value,), a._buf.dtype)
    raise TypeError("elementwise kernel: needs at least one array operand")


_IDENTITY = {"sum": 0, "prod": 1, "max": 0, "min": 0, "any": False, "all": True, "count_true": 0}


_TRAILING: dict = {}  # (shape, strides, axes) -> (kept, reduced) runs of a dense trailing reduce


def _trailing_runs(shape, strides, axes):
    """(kept, reduced) when a C-contiguous array of ``shape`` is reduced over trailing ``axes``
    (one dense run of ``reduced`` elements per kept element), or a dense array of any axis order
    over all its axes (one run), else None; cached."""
    key = (shape, strides, axes)
    r = _TRAILING.get(key, 0)
    if r == 0:
        nd = len(shape)
        r = None
        if axes == tuple(range(nd - len(axes), nd)) and strides == _c_strides(shape):
            reduced = _size(shape[nd - len(axes) :])
            if reduced:
                r = (_size(shape) // reduced, reduced)
        elif len(axes) == nd and min(strides, default=0) >= 0:
            # every axis of an array dense in another order (a transpose): one run over its
            # memory, which holds exactly its elements
            dims = sorted(zip(strides, shape), reverse=True)
            order_shape = tuple(n for _, n in dims)
            if tuple(st for st, _ in dims) == _c_strides(order_shape) and _size(shape):
                r = (1, _size(shape))
        if len(_TRAILING) < 4096:
            _TRAILING[key] = r
    return r


def _reduction(name: str):
    entries: dict = {}  # (output dtype, input dtype) -> (compiled loop, identity)
    identity = _IDENTITY[name]

    def kernel(out, x, *, axes, keepdims):
        runs = _trailing_runs(x._shape, x._strides, axes)
        if runs is not None and runs[0] * runs[1] < PARALLEL_THRESHOLD:
            # the per-call fast path: a dense array reduced over its trailing axes is one run per
            # kept element, reduced by the vectorised inner loop without layout planning
            kept, reduced = runs
            key = (out._dtype, x._dtype)
            entry = entries.get(key)
            if entry is not None:
                entry[0](out._buf, 0, 0, 1, x._buf, x._offset, 0, reduced, 0, 1, 1, kept, 1,
                         reduced, True, entry[1])  # fmt: skip
                return
            ident = out._buf.dtype.type(identity)
            args = (out._buf, 0, 0, 1, x._buf, x._offset, 0, reduced, 0, 1, 1, kept, 1, reduced,
                    True, ident)  # fmt: skip
            loop = getattr(_k().G, f"{name}_inner_s")
            loop(*args)
            sig = tuple(loop.typeof_pyval(a) for a in args)
            entries[key] = (loop.overloads[sig].entry_point, ident)
            return
        o = _out(out)
        if keepdims:  # the loops write the kept dimensions only
            o = (o[0], o[1], tuple(st for i, st in enumerate(o[2]) if i not in axes))
        _k().reduce(name, o, _out(x), x._shape, axes)

    def dense(out_shape, out_dtype, args, params):
        """For a dense input reduced over trailing axes: ``fn(x) -> output buffer``."""
        (x,) = args
        runs = _trailing_runs(x._shape, x._strides, params["axes"])
        if runs is None:
            return _planned(out_shape, out_dtype, x, params)
        kept, reduced = runs
        if kept * reduced >= PARALLEL_THRESHOLD:
            if len(x._shape) != 1 or reduced < 4 * PARALLEL_THRESHOLD:
                return None
            # a long 1-D run reduced whole: the kernel's plan for it (kernels.reduce's "all"),
            # without the layout planning on every call (the same loops, so the same bits)
            ident = out_dtype.numpy.type(identity)
            reduce_all, np_out, empty = _k()._reduce_all_parallel, out_dtype.numpy, np.empty

            def whole(x):
                buf = empty(1, np_out)
                reduce_all(name, buf, 0, x._buf, x._offset, reduced, 1, ident)
                return buf

            return whole
        key = (out_dtype, x._dtype)
        out_np, empty = out_dtype.numpy, np.empty

        compiled = None

        def fn(x):
            nonlocal compiled
            buf = empty(kept, out_np)
            if compiled is None:
                compiled = entries.get(key)
                if compiled is None:
                    kernel(_Out(buf, out_shape, out_dtype), x, **params)
                    return buf
            compiled[0](buf, 0, 0, 1, x._buf, x._offset, 0, reduced, 0, 1, 1, kept, 1, reduced,
                        True, compiled[1])  # fmt: skip
            return buf

        return fn

    def _planned(out_shape, out_dtype, x, params):
        """For another small layout whose plan is one serial call (a transpose reduced along
        an axis): ``fn(x) -> output buffer`` through that call's compiled entry, the layout
        planned once here instead of on every call."""
        size = _size(x._shape)
        if not 0 < size < PARALLEL_THRESHOLD:
            return None
        axes = params["axes"]
        ost = _c_strides(out_shape)
        if params["keepdims"]:
            ost = tuple(st for i, st in enumerate(ost) if i not in axes)
        k = _k()
        plan = k._reduce_plan(name, x._shape, ost, x._strides, axes)
        if plan[0] != "calls" or len(plan[3]) != 1 or plan[3][0][-1] != 0:
            return None
        _, serial, _, ((k_oo, r_ao, ok0, ok1, ak0, ak1, rk0, rk1, nk0, nk1, nr0, nr1, first,
                        _),) = plan  # fmt: skip
        out_np, empty, n_out = out_dtype.numpy, np.empty, _size(out_shape)
        ident = out_np.type(identity)
        entry = None

        def fn(x):
            nonlocal entry
            buf = empty(n_out, out_np)
            args = (buf, k_oo, ok0, ok1, x._buf, x._offset + r_ao, ak0, ak1, rk0, rk1, nk0, nk1,
                    nr0, nr1, first, ident)  # fmt: skip
            if entry is None:
                key = (serial, buf.dtype, x._buf.dtype)
                k.call_compiled(serial, key, args)
                entry = k._ENTRIES[key]
            else:
                entry(*args)
            return buf

        return fn

    kernel.__name__ = f"{name}_cpu"
    kernel.dense = dense
    return kernel


_moment_kernels = None


def _moment():
    """The moment kernels' module, imported on first use (numba compiles on import)."""
    global _moment_kernels
    if _moment_kernels is None:
        from . import _kern_moment

        _moment_kernels = _kern_moment
    return _moment_kernels


def var_cpu(out, x, *, axes, keepdims, correction, root):
    """out = var of x over ``axes`` (std with ``root``): one kernel call over dense runs
    (``_kern_moment``).  A layout whose reduced elements are not one dense run per output
    element is first copied with the reduced axes last."""
    n = _size(x._shape[d] for d in axes)
    if n == 0:  # the variance of nothing: NaN
        _k().fill(_out(out), out._shape, np.nan)
        return
    runs = _trailing_runs(x._shape, x._strides, axes)
    if runs is None and len(x._shape) == 1 and n < PARALLEL_THRESHOLD:
        # a short vector at a step (x[::2]): one run at unit stride in this thread's scratch
        # (4096 float32 at step 2: 9.8 -> ~6.7 us)
        runs, x_buf, x_off = (1,), _unit_stride_copy(x, n, 0), 0
    else:
        x_buf, x_off = x._buf, x._offset
    if runs is None:
        kept_axes = [d for d in range(len(x._shape)) if d not in axes]
        leading = _leading_runs(x, axes, kept_axes)
        if leading is not None:
            kept = leading[0]
            args = _var_args(out, x._buf, x._offset, kept, n, x, correction, root)
            k = _moment()
            parallel = kept * n >= PARALLEL_THRESHOLD and kept > k.COLUMNS
            (k.var_cols_p if parallel else k.var_cols)(*args)
            return
        buf, off, kept = _reduced_last(x, kept_axes, axes, n), 0, _size(x._shape) // n
    else:
        kept = runs[0]
        buf, off = x_buf, x_off
    if kept == 0:
        return
    args = _var_args(out, buf, off, kept, n, x, correction, root)
    if kept * n < PARALLEL_THRESHOLD:
        loop = _moment().var_rows
        _k().call_compiled(loop, (loop, out._buf.dtype, buf.dtype), args)
    elif kept == 1:
        _moment().var_long_p(out._buf, buf, off, n, *args[5:])
    else:
        _moment().var_rows_p(*args)


def _as_pairs(x, axes: tuple, real):
    """The complex operand ``x`` as its real and imaginary parts, a trailing axis of two reduced
    with ``axes`` (the euclidean norm's sum of squares over both), of the real dtype ``real``."""
    view = _Operand(x._buf.view(real.numpy), x._shape + (2,),
                    tuple(2 * st for st in x._strides) + (1,), 2 * x._offset, real)  # fmt: skip
    return view, tuple(axes) + (len(x._shape),)


def _dot_columns(o, a, ao, b, bo, kept: int, n: int, zero, root: bool) -> None:
    """o[j] = the dot product over r < n of a[ao + r kept + j] and b[bo + r kept + j] (reduced
    axes outermost: rows added to columns' sums; few columns as one long run)."""
    k = _moment()
    large = kept * n >= PARALLEL_THRESHOLD
    args = (o, a, ao, b, bo, kept, n, zero, root)
    if kept < k.NARROW:
        (k.dot_narrow_cols_p if large else k.dot_narrow_cols)(*args)
    else:
        (k.dot_cols_p if large and kept > k.COLUMNS else k.dot_cols)(*args)


def _pair_norms_by_columns(out, x, axes: tuple) -> bool:
    """The norms of a complex ``x`` whose reduced axes are outermost (a C matrix along axis 0):
    the squares of each column's real and imaginary parts summed as columns of their own, then
    the pairs added and rooted (the parts as a trailing axis would be copied first: 64 x 64
    complex64 along axis 0 ~23 -> ~5 us, NumPy 7).  False where the layout is another."""
    kept_axes = [d for d in range(len(x._shape)) if d not in axes]
    leading = _leading_runs(x, axes, kept_axes)
    if leading is None:
        return False
    kept, n = leading
    real = out._buf.dtype
    sums = np.empty(2 * kept, real)
    parts, _ = _as_pairs(x, axes, out._dtype)  # (the parts as columns: 2 * kept of them)
    start = parts._offset
    _dot_columns(sums, parts._buf, start, parts._buf, start, 2 * kept, n, real.type(0), False)
    np.sqrt(sums[0::2] + sums[1::2], out=out._buf[out._offset : out._offset + kept])
    return True


def dot_cpu(out, x1, x2, *, axes, root=False):
    """out = the dot products of x1 and x2 (one shape and dtype) over ``axes``: one kernel call
    over the dense runs both share (``_kern_moment.dot_rows``), after a copy of each with the
    reduced axes last where their layouts do not give such runs.  A complex norm (``root``)
    reads its operand as pairs of reals (1M complex128: the composition's abs, square, sum and
    root ~2.0 ms, NumPy 1.9; this ~0.5)."""
    if root and x1._buf.dtype.kind == "c":
        if _trailing_runs(x1._shape, x1._strides, axes) is None and _pair_norms_by_columns(
            out, x1, axes
        ):
            return
        x1, axes = _as_pairs(x1, axes, out._dtype)
        x2 = x1
    n = _size(x1._shape[d] for d in axes)
    zero = out._buf.dtype.type(0)
    if n == 0:
        _k().fill(_out(out), out._shape, 0)
        return
    runs = None
    if x1._strides == x2._strides:
        runs = _trailing_runs(x1._shape, x1._strides, axes)
    if runs is None:
        kept_axes = [d for d in range(len(x1._shape)) if d not in axes]
        leading = _leading_runs(x1, axes, kept_axes) if x1._strides == x2._strides else None
        if leading is not None:  # reduced axes outermost: rows added to columns' sums
            _dot_columns(out._buf, x1._buf, x1._offset, x2._buf, x2._offset, leading[0], n,
                         zero, root)  # fmt: skip
            return
        st = x1._strides[0] if len(x1._shape) == 1 and x1._strides == x2._strides else 0
        if 1 < st <= _k().V.SPAN_STEP:
            # two vectors of one short step: their spans read whole, not copied first (1M
            # float64 at step 2: 882 -> 183 us, NumPy's strided BLAS 158-193)
            k = _moment()
            loop = k.dot_span_p if n >= PARALLEL_THRESHOLD else k.dot_span
            loop(out._buf[out._offset :], x1._buf, x1._offset, x2._buf, x2._offset, st, n, zero,
                 root)  # fmt: skip
            return
        a = _reduced_last(x1, kept_axes, axes, n)
        b = a if x2 is x1 else _reduced_last(x2, kept_axes, axes, n)  # (a norm: one copy)
        ao = bo = 0
        kept = _size(x1._shape) // n
    else:
        a, ao, b, bo, kept = x1._buf, x1._offset, x2._buf, x2._offset, runs[0]
    if kept == 0:
        return
    k = _moment()
    if kept * n < PARALLEL_THRESHOLD:
        args = (out._buf, a, ao, b, bo, kept, n, zero, root)
        _k().call_compiled(k.dot_rows, (k.dot_rows, out._buf.dtype, a.dtype), args)
    elif kept == 1:
        k.dot_long_p(out._buf, a, ao, b, bo, n, zero, root)
    else:
        k.dot_rows_p(out._buf, a, ao, b, bo, kept, n, zero, root)


def _dot_dense(out_shape, out_dtype, args, params):
    """For small operands sharing one layout whose reduced axes are dense runs (vecdot of rows,
    the norm of a vector) or outermost (vecdot along axis 0): ``fn(x1, x2) -> output buffer``,
    one call of ``dot_rows`` (``dot_cols``, ``dot_narrow_cols``) through its entry point with
    the runs worked out here once (4096 float32 norm's dot 3.9 -> 1.0 us)."""
    x1, x2 = args
    if x1._strides != x2._strides:
        return None
    axes = params["axes"]
    pairs = params.get("root", False) and x1._buf.dtype.kind == "c"
    if pairs:  # a complex norm: its parts' squares (dot_cpu), viewed on every call
        x1, axes = _as_pairs(x1, axes, out_dtype)
    k = _moment()
    loop = k.dot_rows
    runs = _trailing_runs(x1._shape, x1._strides, axes)
    if runs is None and len(x1._shape) == 1 and 1 < x1._strides[0] <= _k().V.SPAN_STEP:
        return _dot_span_dense(out_dtype, x1, params.get("root", False))
    if runs is None:  # reduced axes outermost (vecdot along axis 0): dot_cols' loops
        kept_axes = [d for d in range(len(x1._shape)) if d not in axes]
        runs = _leading_runs(x1, axes, kept_axes)
        if runs is None:
            return None
        loop = k.dot_narrow_cols if runs[0] < k.NARROW else k.dot_cols
    kept, n = runs
    if not (kept and n and kept * n < PARALLEL_THRESHOLD):
        return None
    root = params.get("root", False)
    np_dtype, empty = out_dtype.numpy, np.empty
    zero = np_dtype.type(0)
    key, call = (loop, np_dtype, x1._buf.dtype), _k().call_compiled
    if pairs:

        def norms(a, b):  # (b is a)
            buf = empty(kept, np_dtype)
            v, off = a._buf.view(np_dtype), 2 * a._offset
            call(loop, key, (buf, v, off, v, off, kept, n, zero, root))
            return buf

        return norms

    def fn(a, b):
        buf = empty(kept, np_dtype)
        call(loop, key, (buf, a._buf, a._offset, b._buf, b._offset, kept, n, zero, root))
        return buf

    return fn


def _dot_span_dense(out_dtype, x, root: bool):
    """The dense lane of a small dot product (or norm) of two vectors of one short step:
    ``dot_span`` through its entry point (4096 float32 at step 2: 6.8 -> 3.1 us; NumPy 2.5)."""
    (n,), (st,) = x._shape, x._strides
    if not 0 < n < PARALLEL_THRESHOLD:
        return None
    loop = _moment().dot_span
    np_dtype, empty = out_dtype.numpy, np.empty
    zero = np_dtype.type(0)
    key, call = (loop, np_dtype, x._buf.dtype), _k().call_compiled

    def fn(a, b):
        buf = empty(1, np_dtype)
        call(loop, key, (buf, a._buf, a._offset, b._buf, b._offset, st, n, zero, root))
        return buf

    return fn


dot_cpu.dense = _dot_dense


def _leading_stride(shape, strides, inner: int):
    """The one stride stepping through the leading axes of ``shape`` (all but the last
    ``inner``) in C order (0 where they hold one element), or None where they do not step
    evenly."""
    step = following = None
    for n, s in zip(reversed(shape[:-inner]), reversed(strides[:-inner])):
        if n == 1:
            continue
        if step is None:
            step = s
        elif s != following:
            return None
        following = s * n
    return 0 if step is None else step


def _rows_of_three(x, shape):
    """(row stride, component stride) of ``x`` viewed with ``shape`` (broadcast; the last axis
    the three components) when its leading axes step through memory as one axis, else None."""
    st = x._strides if x._shape == shape else broadcast_strides(x._shape, x._strides, shape)
    row = _leading_stride(shape, st, 1)
    return None if row is None else (row, st[-1])


def _cross_operand(x, shape) -> tuple:
    """(buffer, offset, row stride, component stride) of ``x`` for ``cross_rows``: its own
    memory where its rows step evenly, else a C-ordered copy of it broadcast to ``shape``."""
    geometry = _rows_of_three(x, shape)
    if geometry is not None:
        return (x._buf, x._offset) + geometry
    st = broadcast_strides(x._shape, x._strides, shape)
    return np.ascontiguousarray(_strided_host(x, shape, st)).reshape(-1), 0, 3, 1


def cross_cpu(out, x1, x2):
    """out = the cross products of x1 and x2 along their last axis (size 3; the leading axes
    broadcast to out's): one pass of ``_kern_arith.cross_rows`` over the rows."""
    rows = _size(out._shape) // 3
    if rows == 0:
        return
    args = (out._buf, out._offset, *_cross_operand(x1, out._shape), *_cross_operand(x2, out._shape))
    k = _arith()
    if 3 * rows >= PARALLEL_THRESHOLD:
        k.cross_rows_p(*args, rows)
    else:
        loop = k.cross_rows
        _k().call_compiled(
            loop, (loop, out._buf.dtype, args[2].dtype, args[6].dtype), args + (rows,)
        )


def _cross_dense(out_shape, out_dtype, args, params):
    """For small operands whose rows step evenly (the usual stacks of vectors, one vector
    broadcast against many): ``fn(x1, x2) -> output buffer`` with the geometry worked out once."""
    x1, x2 = args
    rows = _size(out_shape) // 3
    g1, g2 = _rows_of_three(x1, out_shape), _rows_of_three(x2, out_shape)
    if g1 is None or g2 is None or not 0 < 3 * rows < PARALLEL_THRESHOLD:
        return None
    np_dtype, empty = out_dtype.numpy, np.empty
    loop = _arith().cross_rows
    key, call = (loop, np_dtype, x1._buf.dtype, x2._buf.dtype), _k().call_compiled
    (ar, ae), (br, be) = g1, g2

    def fn(a, b):
        buf = empty(3 * rows, np_dtype)
        call(loop, key, (buf, 0, a._buf, a._offset, ar, ae, b._buf, b._offset, br, be, rows))
        return buf

    return fn


cross_cpu.dense = _cross_dense


def _triangle_operand(x) -> tuple:
    """(buffer, offset, matrix stride, row stride, column stride) of x's matrices for
    ``triangle_rows``: its own memory where its leading axes step evenly, else a C copy."""
    sb = _leading_stride(x._shape, x._strides, 2)
    if sb is not None:
        return (x._buf, x._offset, sb) + x._strides[-2:]
    n, m = x._shape[-2:]
    return _dense_host(x).reshape(-1), 0, n * m, m, 1


def triangle_cpu(out, x, *, k, lower):
    """out = tril (``lower``) or triu of x's matrices at diagonal k: one pass over the rows
    (``_kern_index.triangle_rows``), each copied up to or from its cut and zeroed elsewhere."""
    n, m = x._shape[-2:]
    rows = _size(x._shape[:-1])
    if rows == 0 or m == 0:
        return
    args = (out._buf, *_triangle_operand(x), n, m, k, lower, rows)
    ix = _ix()
    if rows * m >= PARALLEL_THRESHOLD:
        ix.triangle_rows_p(*args)
    else:
        loop = ix.triangle_rows
        _k().call_compiled(loop, (loop, out._buf.dtype, args[1].dtype), args)


def _triangle_dense(out_shape, out_dtype, args, params):
    """For small stacks whose matrices step evenly: ``fn(x) -> output buffer``, the geometry
    worked out once (64 x 64 tril 4.2 -> ~2 us)."""
    (x,) = args
    n, m = out_shape[-2:]
    rows, total = _size(out_shape[:-1]), _size(out_shape)
    sb = _leading_stride(x._shape, x._strides, 2)
    if sb is None or not 0 < total < PARALLEL_THRESHOLD:
        return None
    sr, sc = x._strides[-2:]
    k, lower = params["k"], params["lower"]
    np_dtype, empty = out_dtype.numpy, np.empty
    loop = _ix().triangle_rows
    key, call = (loop, np_dtype, x._buf.dtype), _k().call_compiled

    def fn(x):
        buf = empty(total, np_dtype)
        call(loop, key, (buf, x._buf, x._offset, sb, sr, sc, n, m, k, lower, rows))
        return buf

    return fn


triangle_cpu.dense = _triangle_dense


def _reduced_last(x, kept_axes, axes, n: int) -> np.ndarray:
    """A dense copy of ``x`` with its reduced ``axes`` last (``n`` elements each): one run per
    kept element, for the moment kernels."""
    order = list(kept_axes) + list(axes)
    shape = tuple(x._shape[d] for d in order)
    if _size(shape) < PARALLEL_THRESHOLD:  # (NumPy's copy: the map kernel's plan costs ~4 us)
        return np.ascontiguousarray(numpy_view(x).transpose(order)).reshape(-1)
    dense = _Out(np.empty(_size(shape), x._dtype.numpy), shape, x._dtype)
    copy_cpu(dense, _Operand(x._buf, shape, tuple(x._strides[d] for d in order), x._offset,
                             x._dtype))  # fmt: skip
    return dense._buf


def _var_args(out, buf, off, kept: int, n: int, x, correction: float, root: bool) -> tuple:
    """The arguments of every ``_kern_moment`` loop: the count and N - correction (NaN where it
    is not positive) in the output's dtype, the zeros of the input's and the output's."""
    real = out._buf.dtype.type
    dof = n - correction
    return (out._buf, buf, off, kept, n, x._buf.dtype.type(0), real(0), real(n),
            real(dof) if dof > 0 else real(np.nan), root)  # fmt: skip


def _leading_runs(x, axes, kept_axes):
    """(kept, n) when x's reduced axes are outermost in memory and its kept elements dense and
    innermost (x[r kept + j] is element r of output j's run: a C array reduced over axis 0, a
    transpose over its last axis), else None."""
    order = list(axes) + kept_axes
    shape = tuple(x._shape[d] for d in order)
    if tuple(x._strides[d] for d in order) != _c_strides(shape) or not kept_axes:
        return None
    n = _size(shape[: len(axes)])
    return (_size(shape) // n, n) if n else None


class _Operand:
    """A strided operand as kernels see it (buffer, shape, strides, offset, dtype)."""

    __slots__ = ("_buf", "_shape", "_strides", "_offset", "_dtype")

    def __init__(self, buf, shape, strides, offset, dtype):
        self._buf, self._shape, self._strides = buf, shape, strides
        self._offset, self._dtype = offset, dtype


class _Out:
    """A fresh dense output as kernels see it (buffer, shape, C strides, offset 0)."""

    __slots__ = ("_buf", "_shape", "_strides", "_offset", "_dtype")

    def __init__(self, buf, shape, dtype):
        self._buf, self._shape, self._dtype = buf, shape, dtype
        self._strides, self._offset = _c_strides(shape), 0

    @property
    def size(self) -> int:
        return self._buf.size


def _scan(name: str):
    entries: dict = {}  # (output dtype, input dtype) -> compiled entry of the serial scan loop

    def kernel(out, x, *, axis, initial):
        shape = x._shape
        if (
            initial is None
            and axis == len(shape) - 1
            and x._strides == _c_strides(shape)
            and _size(shape) < PARALLEL_THRESHOLD
        ):
            # the per-call fast path: C-ordered rows scanned along the last axis, one call to
            # the compiled loop without layout planning (out is fresh: C order, offset 0)
            nx = shape[axis]
            rows = _size(shape[:-1])
            if nx and rows:
                args = (out._buf, 0, 0, nx, 1, x._buf, x._offset, 0, nx, 1, 1, rows, nx)
                key = (out._dtype, x._dtype)
                entry = entries.get(key)
                if entry is None:
                    entries[key] = _entry_point(f"cumulative_{name}", args)
                else:
                    entry(*args)
            return
        k = _k()
        buf, off, st = _out(out)
        if initial is not None:  # the first slot along axis holds the identity
            head = x._shape[:axis] + (1,) + x._shape[axis + 1 :]
            k.fill((buf, off, st), head, initial)
            off += st[axis]
        if _size(x._shape):
            k.cumulative(name, (buf, off, st), _out(x), x._shape, axis)

    def dense(out_shape, out_dtype, args, params):
        """For a small scan without an initial slot whose layout plans to one call of the loop
        (C-ordered rows, a transpose): ``fn(x) -> output buffer`` through that call's compiled
        entry, planned once here instead of on every call."""
        (x,) = args
        total = _size(out_shape)
        if params["initial"] is not None or not 0 < total < PARALLEL_THRESHOLD:
            return None
        k = _k()
        axis = params["axis"]
        # the output's layout: x's where x is dense in another order (the plan follows it)
        ost = dense_order(out_shape, x._strides) or _c_strides(out_shape)
        plan = k._scan_plan(out_shape, ost, x._strides, axis)
        if len(plan) != 1:
            return None
        o_d, i_d, os0, os1, is0, is1, n0, n1 = plan[0]
        osa, isa, n = ost[axis], x._strides[axis], out_shape[axis]
        loop = getattr(k.G, f"cumulative_{name}_s")
        np_dtype, empty, call = out_dtype.numpy, np.empty, k.call_compiled

        def fn(x):
            buf = empty(total, np_dtype)
            xbuf = x._buf
            args = (buf, o_d, os0, os1, osa, xbuf, x._offset + i_d, is0, is1, isa, n0, n1, n)
            call(loop, (loop, np_dtype, xbuf.dtype), args)
            return buf

        return fn

    kernel.__name__ = f"cumulative_{name}_cpu"
    kernel.dense = dense
    return kernel


def empty_cpu(size: int, dtype):
    # NumPy is the CPU allocator: a 1-D ndarray is the buffer
    return np.empty(size, dtype.numpy)


def _empty_for_dtype(dtype):
    """``size -> buffer`` for one dtype, without a Python frame per allocation."""
    return functools.partial(np.empty, dtype=dtype.numpy)


empty_cpu.for_dtype = _empty_for_dtype

_CAST_SLOTS = 8  # the first scratch slot of the dispatcher's cast inputs (staging uses those below)


def _temporary_cpu(size: int, dtype, slot: int) -> np.ndarray:
    """``size`` elements of ``dtype`` for the dispatcher's cast of input ``slot`` of an
    elementwise kernel, in this thread's scratch (see ``dispatch._cast``)."""
    return _scratch(size, dtype.numpy, _CAST_SLOTS + slot)


empty_cpu.temporary = _temporary_cpu


def to_device_cpu(out, x):
    # cpu -> cpu only reaches here when two cpu Device objects differ in name alone
    copy_cpu(out, x)


_COPY_ENTRIES: dict = {}  # (out dtype, x dtype) -> the compiled copy loop's entry point


def copy_cpu(out, x):
    shape = out._shape
    st = out._strides
    if len(shape) == 1 and x._shape == shape:
        # vectors (x[:n] = y, concat's parts, a slice with a step): one loop with their
        # strides through the compiled entry, no planning
        if 0 < shape[0] < PARALLEL_THRESHOLD:
            _copy_run(out, st[0], x, x._strides[0], shape[0])
            return
    elif x._strides == st and x._shape == shape:
        # the per-call fast path (assignments of equal layouts, casts of a transpose into its
        # own layout): both operands dense in one memory order, one flat loop
        size = _size(shape)
        if 0 < size < PARALLEL_THRESHOLD and _one_block(shape, st):
            _copy_run(out, 1, x, 1, size)
            return
    if (
        x._strides[-1:] == (2,)
        and x._shape == shape
        and x._dtype is out._dtype
        and st == _c_strides(shape)
        and _size(shape) >= PARALLEL_THRESHOLD
        and _deinterleave(out, x)
    ):
        return  # (x[::2], x[:, ::2] of narrow elements: read as halves of pairs)
    xst = x._strides if x._shape == shape else broadcast_strides(x._shape, x._strides, shape)
    _k()._run_map("copy", [(out._buf, out._offset, st), (x._buf, x._offset, xst)], shape)


#: element size -> (unsigned type of two elements, of one): x[::2] read as halves of pairs
_PAIRS = {1: (np.uint16, np.uint8), 2: (np.uint32, np.uint16), 4: (np.uint64, np.uint32)}


def _deinterleave(out, x) -> bool:
    """Every other element of ``x`` (a vector at step 2, or a matrix of such rows an even
    number of elements apart: ``x[:, ::2]``) copied into ``out``, C-contiguous of the same
    dtype, through ``_kern_index.deinterleave_p``, for elements of 1, 2 or 4 bytes on a
    little-endian machine; False, nothing written, otherwise."""
    types = _PAIRS.get(x._buf.itemsize) if _LITTLE_ENDIAN else None
    if types is None or x._strides[-1] != 2 or len(x._shape) > 2:
        return False
    rows, n = x._shape if len(x._shape) == 2 else (1, x._shape[0])
    row_step = x._strides[0] if rows > 1 else 2 * n
    if row_step % 2 or row_step < 2 * n:  # (rows overlapping or out of order: the copy loop)
        return False
    wide, narrow = types
    buf, off, half = x._buf, x._offset, row_step // 2
    start = off - (off & 1)  # the pair holding x's first element: its high half when off is odd
    # the pairs up to x's last element, which may end the buffer (then written on its own)
    count = (rows - 1) * half + n
    whole = start + 2 * count <= buf.size
    pairs = buf[start : start + 2 * (count if whole else count - 1)].view(wide)
    if not pairs.flags.aligned:
        return False
    o = out._buf[out._offset : out._offset + rows * n]
    shift = wide((off & 1) * 8 * buf.itemsize)
    ix = _ix()
    parts = min(ix.LAUNCHED_THREADS, max(1, n // (1 << 15))) if rows < 8 else 1
    if whole:
        ix.deinterleave_p(o.view(narrow), pairs, shift, rows, n, half, parts)
        return True
    if rows > 1:
        ix.deinterleave_p(o.view(narrow), pairs, shift, rows - 1, n, half, parts)
    last = o[(rows - 1) * n :]
    ix.deinterleave_p(last[:-1].view(narrow), pairs[(rows - 1) * half :], shift, 1, n - 1, 0, parts)
    last[-1] = buf[off + (rows - 1) * row_step + 2 * (n - 1)]
    return True


_LITTLE_ENDIAN = sys.byteorder == "little"


def _copy_run(out, out_step: int, x, x_step: int, n: int) -> None:
    """n elements of x (every ``x_step``-th from its offset) into out (every ``out_step``-th)
    through the copy loop's compiled entry."""
    args = (out._buf, out._offset, 0, 0, out_step, x._buf, x._offset, 0, 0, x_step, 1, 1, n)
    _copy_call((out._dtype, x._dtype), args)


def _copy_call(key: tuple, args: tuple) -> None:
    """The serial copy loop on ``args`` through its compiled entry for ``key`` (output dtype,
    input dtype); the first call of a key goes through the dispatcher and remembers it."""
    entry = _COPY_ENTRIES.get(key)
    if entry is None:
        _COPY_ENTRIES[key] = _entry_point("copy", list(args))
    else:
        entry(*args)


def _one_block(shape, strides) -> bool:
    """Whether an array of ``shape`` laid out as ``strides`` fills one run of memory from its
    offset (C order, or another dense order)."""
    return strides == _c_strides(shape) or dense_order(shape, strides) is not None


def _copy_slabs(out_shape, out_strides, out_dtype, arrays, starts):
    """For concat: ``fn(arrays) -> output buffer``, a fresh buffer of ``out_shape`` (laid out as
    ``out_strides``) with each of ``arrays`` copied into its slab at element offset ``starts``,
    one compiled call each, planned here once for arrays laid out as these are: a part dense in
    the output's order is one flat run, another (transposed parts in a C-ordered output, ...) its
    map plan's one call.  None where a part needs more than one call or the whole is at the
    parallel size."""
    total = _size(out_shape)
    if not 0 < total < PARALLEL_THRESHOLD:
        return None
    k = _k()
    parts = []  # (input, output offset, input offset delta, the loop's strides and counts)
    for i, (a, start) in enumerate(zip(arrays, starts)):
        n = _size(a._shape)
        if not n:
            continue
        st = a._strides
        if st == out_strides and _one_block(a._shape, st):
            parts.append((i, start, 0, 0, 0, 1, 0, 0, 1, 1, 1, n, (out_dtype, a._dtype)))
            continue
        plan = k._map_plan(a._shape, (out_strides, st))
        if len(plan) != 1:
            return None
        (d0, d1), n0, n1, n2, (s0, s1) = plan[0]
        parts.append((i, start + d0, d1, *s0, *s1, n0, n1, n2, (out_dtype, a._dtype)))
    np_dtype, empty = out_dtype.numpy, np.empty
    if (
        len(parts) == 2
        and parts[0][:3] == (0, 0, 0)
        and parts[1][1:3] == (parts[0][11], 0)
        and all(p[3:11] == (0, 0, 1, 0, 0, 1, 1, 1) and p[12][1] is out_dtype for p in parts)
    ):
        # two dense parts of the output's dtype, one after the other: one call
        (i0, *_, na, _), (i1, *_, nb, _) = parts
        loop = _ix().join_two
        key = (loop, np_dtype)
        call = _k().call_compiled

        def join(arrays):
            buf = empty(total, np_dtype)
            a, b = arrays[i0], arrays[i1]
            call(loop, key, (buf, a._buf, a._offset, na, b._buf, b._offset, nb))
            return buf

        return join

    def fn(arrays):
        buf = empty(total, np_dtype)
        for i, oo, d, o0, o1, o2, s0, s1, s2, n0, n1, n2, key in parts:
            a = arrays[i]
            _copy_call(key, (buf, oo, o0, o1, o2, a._buf, a._offset + d, s0, s1, s2, n0, n1, n2))
        return buf

    return fn


copy_cpu.slabs = _copy_slabs


def _copy_blocks(out_shape, out_strides, out_dtype, x, blocks, starts):
    """For roll: ``fn(x) -> output buffer``, a fresh buffer of ``out_shape`` (laid out as
    ``out_strides``) with each of ``blocks`` (views of x, of its dtype) copied to its element
    offset in ``starts``, all in one compiled call planned here once for x's layout (views of
    that layout at other offsets read their own blocks).  None at the parallel size or where a
    block needs more than one rank-3 loop."""
    total = _size(out_shape)
    if not 0 < total < PARALLEL_THRESHOLD or out_dtype is not x._dtype:
        return None
    k = _k()
    rows = []
    for b, start in zip(blocks, starts):
        if not _size(b._shape):
            continue
        plan = k._map_plan(b._shape, (out_strides, b._strides))
        if len(plan) != 1:
            return None
        (d0, d1), n0, n1, n2, (s0, s1) = plan[0]
        rows.append((start + d0, *s0, b._offset - x._offset + d1, *s1, n0, n1, n2))
    table = np.array(rows, np.int64).reshape(-1, 11)
    np_dtype, empty = out_dtype.numpy, np.empty
    loop = _ix().copy_blocks
    key, call = (loop, np_dtype), k.call_compiled

    def fn(x):
        buf = empty(total, np_dtype)
        call(loop, key, (buf, x._buf, x._offset, table))
        return buf

    return fn


copy_cpu.blocks = _copy_blocks


def _flat_loop(name: str, total: int, np_dtype, scalars: tuple = (), steps: tuple = ()):
    """``fn(*operands) -> buffer``: the serial map loop ``name`` over ``total`` elements of
    arrays dense in one layout (the output's), in one call through its compiled entry point.
    ``scalars`` marks operands that are Python scalars: each is passed as a one-element buffer
    of ``np_dtype`` read with stride 0.  ``steps`` (one per operand) serves vectors at those
    steps instead (x[::2]: the plan this serves is made per layout)."""
    empty = np.empty
    entry = None
    scalars = scalars or (False,) * len(steps)
    steps = steps or (1,) * len(scalars)

    def fn(*operands):
        nonlocal entry
        buf = empty(total, np_dtype)
        args = [buf, 0, 0, 0, 1]
        if scalars:
            for v, scalar, step in zip(operands, scalars, steps):
                if scalar:  # (a one-element buffer, kept for values that recur)
                    args += (_scalar_value(v, np_dtype), 0, 0, 0, 0)
                else:
                    args += (v._buf, v._offset, 0, 0, step)
        else:
            for a in operands:
                args += (a._buf, a._offset, 0, 0, 1)
        args += (1, 1, total)
        if entry is None:
            entry = _entry_point(name, args)  # (runs the loop once)
        else:
            entry(*args)
        return buf

    return fn


def _copy_dense(out_shape, out_dtype, args, params):
    """For a small C-contiguous input: ``fn(x) -> output buffer`` (a cast or copy in one call
    of the compiled loop, no numba type dispatch after the first call)."""
    (x,) = args
    total = _size(out_shape)
    if not 0 < total < PARALLEL_THRESHOLD:
        return None
    if x._strides == _c_strides(out_shape):
        return _flat_loop("copy", total, out_dtype.numpy)
    if dense_order(out_shape, x._strides) is not None:
        # a dense x in another order (a transpose): for a plan whose output follows it
        # (astype's order "K"), one flat run in memory order; a C-ordered plan (asarray's copy,
        # reshape) takes the planned transposing loop below instead (64 x 64 float32 5.7 ->
        # ~2.8 us, where the general path planned it on every call)
        fn = _flat_loop("copy", total, out_dtype.numpy)
        fn.in_input_order = True
        fn.c_ordered = _copy_planned(out_shape, out_dtype, x, total)
        return fn
    return _copy_planned(out_shape, out_dtype, x, total)


def _copy_planned(out_shape, out_dtype, x, total: int):
    """``fn(x) -> output buffer`` of a C-ordered copy of x's layout (a stepped slice, a
    broadcast, a transpose) whose map plan is one call, planned here once instead of on every
    call; None where it takes more."""
    k = _k()
    plan = k._map_plan(out_shape, (_c_strides(out_shape), x._strides))
    if len(plan) != 1:
        return None
    (d0, d1), n0, n1, n2, (s0, s1) = plan[0]
    serial = k._loops("copy")[0]
    np_dtype, empty, call = out_dtype.numpy, np.empty, k.call_compiled

    def fn(x):
        buf = empty(total, np_dtype)
        xbuf = x._buf
        args = (buf, d0, s0[0], s0[1], s0[2], xbuf, x._offset + d1, s1[0], s1[1], s1[2], n0, n1,
                n2)  # fmt: skip
        call(serial, (serial, np_dtype, xbuf.dtype), args)
        return buf

    return fn


copy_cpu.dense = _copy_dense


def _fill_buffer(buf, value) -> None:
    """Every element of the 1-D buffer ``buf`` set to ``value``: ndarray.fill below the parallel
    size (4096 float32: 0.45 us, slice assignment 0.77), the kernels' threaded fill from it
    (pages touched where the work will run)."""
    n = buf.shape[0]
    if n < PARALLEL_THRESHOLD:
        buf.fill(value)
    else:
        _k().fill((buf, 0, (1,)), (n,), value)


def full_cpu(out, *, fill_value):
    _fill_buffer(out._buf, fill_value)  # (a fresh C-ordered allocation: FULL has no inputs)


def _filled_cpu(size: int, dtype, value):
    """A fresh buffer of ``size`` elements equal to ``value`` (FULL's kernel in one step): int
    zeros by NumPy's calloc below the parallel size, else an empty buffer filled."""
    if size < PARALLEL_THRESHOLD and type(value) is int and value == 0:
        return np.zeros(size, dtype.numpy)
    buf = np.empty(size, dtype.numpy)
    if size < PARALLEL_THRESHOLD:
        buf.fill(value)  # (_fill_buffer's test, without its frame)
    else:
        _fill_buffer(buf, value)
    return buf


full_cpu.filled = _filled_cpu


def _eye_cpu(size: int, dtype, start: int, step: int, length: int):
    """A fresh buffer of ``size`` zeros with ones at ``start + i * step`` for i < ``length``
    (eye's diagonal)."""
    buf = _filled_cpu(size, dtype, 0)
    if length > 0:
        buf[start : start + step * (length - 1) + 1 : step].fill(1)
    return buf


full_cpu.eye = _eye_cpu


def fill_cpu(out, value):
    shape = out._shape
    if not shape:  # 0-d: Python scalars in binary ops land here on every call
        out._buf[out._offset] = value
        return
    if len(shape) == 1 and shape[0] < PARALLEL_THRESHOLD:
        # a short vector (x[:10] = 0, eye's diagonal): the kernels' run fill, without their
        # layout tests
        _k().fill_run(out._buf, out._offset, shape[0], out._strides[0], value)
        return
    _k().fill(_out(out), shape, value)


def _pairs_of_where(args, shape: tuple) -> bool:
    """Whether where's operands are all vectors of ``shape`` (none broadcast) at step 2 of a
    real dtype (or bool), which ``where_2``/``where_2p`` read as pairs."""
    if any(type(a) in _PY_SCALARS for a in args):
        return False
    dtype = _step_2_dtype(args, shape)  # (x2's: the values')
    return dtype is not None and dtype.kind != "complex floating"


def _where_pairs(out, cond, x1, x2) -> bool:
    """A large where of a condition and two vectors all at step 2 into the dense vector
    ``out`` through ``where_2p`` (1M float32: 0.68 -> ~0.2 ms, NumPy 3.6); False, nothing
    written, otherwise."""
    if out._offset or out._strides != (1,) or not _pairs_of_where((cond, x1, x2), out._shape):
        return False
    k = _k()
    n = out._shape[0]
    parts = k.thread_parts(n)
    args = (out._buf, cond._buf, cond._offset, x1._buf, x1._offset, x2._buf, x2._offset, n, 0,
            parts)  # fmt: skip
    k.call_compiled(k.G.where_2p, (k.G.where_2p, out._buf.dtype), args)
    return True


def where_cpu(out, cond, x1, x2):
    shape = out._shape
    nd = len(shape)
    dtype = out._buf.dtype
    if out._buf.size >= PARALLEL_THRESHOLD:
        if _where_pairs(out, cond, x1, x2):
            return
        # operands laid out otherwise than out (x[::2], a transpose) copied into its layout
        # first: the strided loop's select of two loaded floats became a branch on the
        # condition, mispredicted half the time (1M float32 at step 2: 2.1 -> 0.68 ms)
        cond, x1, x2 = _staged_operands(out, (cond, x1, x2), True)
    ops = [
        (np.array((x,), dtype), 0, (0,) * nd) if type(x) in _PY_SCALARS else _operand(x, shape)
        for x in (x1, x2)
    ]
    _k().where(_out(out), _operand(cond, shape), ops[0], ops[1], shape)


def clip_cpu(out, x, lo, hi):
    """out = minimum(maximum(x, lo), hi) in one pass; bounds are arrays of x's dtype or Python
    scalars (passed as one-element buffers, stride 0)."""
    shape = out._shape
    nd = len(shape)
    dtype = out._buf.dtype
    ops = [
        (np.array((v,), dtype), 0, (0,) * nd) if type(v) in _PY_SCALARS else _operand(v, shape)
        for v in (x, lo, hi)
    ]
    _k()._run_map("clip", [_out(out), *ops], shape)


def _clip_dense(out_shape, out_dtype, args, params):
    """For a small dense x (C or another order, which the result follows: clip's plan follows
    its input's layout) between two Python-scalar bounds: ``fn(x, lo, hi) -> buffer``, one call
    of the compiled loop over memory order with the bounds passed by value (as x's dtype); for
    a vector at a step, with bounds that are scalars or vectors of its shape, one call of a loop
    taking the steps."""
    x, lo, hi = args
    total = _size(out_shape)
    if not 0 < total < PARALLEL_THRESHOLD:
        return None
    np_dtype, empty = out_dtype.numpy, np.empty
    scalar = np_dtype.type
    scalars = tuple(type(a) in _PY_SCALARS for a in args)
    if (
        len(out_shape) == 1
        and x._strides != (1,)
        and all(is_scalar or a._shape == out_shape for a, is_scalar in zip(args, scalars))
    ):
        # a vector at a step (x[::2]; bounds that are scalars or vectors of its shape, not
        # broadcast): between scalar bounds, clip_scalars_s's selects with the step (4096
        # float32 x[::2]: 8.9 -> ~3.5 us); other bounds, the clip loop with steps
        if not (scalars[1] and scalars[2]):
            steps = tuple(0 if s else a._strides[0] for a, s in zip(args, scalars))
            return _flat_loop("clip", total, np_dtype, scalars, steps)
        step = x._strides[0]
        # at step 2 (from _PAIRS_MIN), its pairs read as the pair loops read them, the mask 0
        # in the step's place (4096 float32: 4.1 -> ~2.3 us)
        pairs = step == 2 and total >= _PAIRS_MIN and out_dtype.kind != "complex floating"
        name, third = ("clip_scalars_2", 0) if pairs else ("clip_scalars_step_s", step)
        stepped_entry = None

        def stepped(x, lo, hi):
            nonlocal stepped_entry
            buf = empty(total, np_dtype)
            if stepped_entry is None:
                k = _k()
                args = (buf, x._buf, x._offset, third, total, scalar(lo), scalar(hi))
                stepped_entry = k.compiled_entry(getattr(k.G, name), args)
            stepped_entry(buf, x._buf, x._offset, third, total, lo, hi)
            return buf

        return stepped
    if (
        type(lo) not in _PY_SCALARS
        or type(hi) not in _PY_SCALARS
        or (x._strides != _c_strides(out_shape) and dense_order(out_shape, x._strides) is None)
    ):
        return None
    entry = None

    def fn(x, lo, hi):
        nonlocal entry
        buf = empty(total, np_dtype)
        if entry is None:  # typed by bounds of the elements' type (the entry converts later ones)
            k = _k()
            args = (buf, x._buf, x._offset, total, scalar(lo), scalar(hi))
            entry = k.compiled_entry(k.G.clip_scalars_s, args)
        entry(buf, x._buf, x._offset, total, lo, hi)
        return buf

    return fn


clip_cpu.dense = _clip_dense


def _where_dense(out_shape, out_dtype, args, params):
    """For a small condition and two arrays of the result's shape sharing one dense layout (C or
    another order, which the result follows): ``fn(cond, x1, x2) -> output buffer``, one call of
    the compiled loop over memory order (no layout planning, no numba type dispatch after the
    first call)."""
    total = _size(out_shape)
    if not 0 < total < PARALLEL_THRESHOLD:
        return None
    scalars = tuple(type(a) in _PY_SCALARS for a in args)
    if len(out_shape) == 1 and total >= _PAIRS_MIN and _pairs_of_where(args, out_shape):
        # all three at step 2: where_2 reads them as pairs (4096 float32: ~5.3 -> ~3 us)
        empty, np_dtype = np.empty, out_dtype.numpy
        entry = None

        def pairs(c, x1, x2):
            nonlocal entry
            buf = empty(total, np_dtype)
            args = (buf, c._buf, c._offset, x1._buf, x1._offset, x2._buf, x2._offset, total, 0)
            if entry is None:
                entry = _k().compiled_entry(_k().G.where_2, args)
            entry(*args)
            return buf

        return pairs
    if len(out_shape) == 1 and not scalars[0] and args[0]._shape == out_shape:
        # vectors at any steps (where(m[::2], x[::2], y[::2])): the loop with their steps
        if all(scalar or a._shape == out_shape for a, scalar in zip(args, scalars)):
            steps = tuple(0 if scalar else a._strides[0] for a, scalar in zip(args, scalars))
            return _flat_loop("where", total, out_dtype.numpy, scalars, steps)
    strides = args[0]._strides
    if strides != _c_strides(out_shape) and dense_order(out_shape, strides) is None:
        return None
    for a, scalar in zip(args, scalars):
        if not scalar and (a._shape != out_shape or a._strides != strides):
            return None
    if scalars[0]:
        return None
    # a Python scalar operand (where(m, 0.0, x)) is read once, at stride 0
    return _flat_loop("where", total, out_dtype.numpy, scalars if any(scalars) else ())


where_cpu.dense = _where_dense


def _quiet(call):
    """``call`` with NumPy's floating-point warnings silenced: BLAS raises the invalid flag on
    infinities, and no other kernel of this backend warns.  NumPy 2 keeps its error state in a
    context variable: set to "ignore all" and reset around the call (~0.25 us; the errstate
    decorator's context ~0.65, which builds the state anew each call)."""
    try:
        from numpy._core._ufunc_config import _extobj_contextvar as state
    except ImportError:  # (NumPy 1.26: its errstate)
        return np.errstate(all="ignore")(call)
    with np.errstate(all="ignore"):
        ignore_all = state.get()
    set_state, reset_state = state.set, state.reset

    def quiet(x, y, out) -> None:
        token = set_state(ignore_all)
        try:
            call(x, y, out=out)
        finally:
            reset_state(token)

    quiet.__name__ = quiet.__qualname__ = f"quiet_{call.__name__}"
    return quiet


# NumPy's dot (BLAS) and matmul (stacks, blocks of wider matrices) into ``out``, quiet
_blas_dot = _quiet(np.dot)
_blas_matmul = _quiet(np.matmul)


def _blas_product(x: np.ndarray, y: np.ndarray):
    """:func:`_blas_dot` for two NumPy matrices that its dot takes as they are (C or F order:
    the cheaper call), else :func:`_blas_matmul`: dot copies a block of a wider matrix first,
    matmul hands BLAS its leading dimension (500 x 500 float32 blocks multiplied: 1.38 -> ~1.25
    ms, NumPy 1.27; a block by a vector: 46 -> 24 us)."""
    if (x.flags.c_contiguous or x.flags.f_contiguous) and (
        y.flags.c_contiguous or y.flags.f_contiguous
    ):
        return _blas_dot
    return _blas_matmul


def _product(x: np.ndarray, y: np.ndarray, out: np.ndarray) -> None:
    """out = x @ y of float matrices, or a matrix and a vector (C-ordered ``out``, k > 0):
    SciPy's BLAS where OpenBLAS runs it on threads (the library of strided's LAPACK and numba's
    products: one thread pool, see ``_blas``), else NumPy's cheaper call."""
    if not _blas.threaded_product(x, y, out):
        _blas_product(x, y)(x, y, out)


def _threaded_stack(a_shape: tuple, b_shape: tuple, dtype: np.dtype) -> bool:
    """Whether each product of a stack of these shapes (matmul's, a vector on either side) runs
    on OpenBLAS's threads (:func:`_blas.threaded_matrix_product`; only the stacks that
    :func:`_numpy_stack` leaves to NumPy's loop come here: a vector on a side, a row or column
    of results, or products gemm runs on one thread)."""
    m = a_shape[-2] if len(a_shape) > 1 else 1  # (a vector: one row or one column of results)
    n = b_shape[-1] if len(b_shape) > 1 else 1
    return a_shape[-1] > 0 and _blas.threaded_matrix_product(m, a_shape[-1], n, dtype)


def _stack_product(a: np.ndarray, b: np.ndarray, out: np.ndarray) -> None:
    """out = a @ b of stacks (NumPy views; matmul's broadcasting of the batch): NumPy's matmul
    loop, or matrix by matrix through :func:`_product` where each product is threaded."""
    if not _threaded_stack(a.shape, b.shape, out.dtype):
        _blas_matmul(a, b, out)
        return
    batch = out.shape[: out.ndim - (a.ndim > 1) - (b.ndim > 1)]
    a_b = np.broadcast_to(a, batch + a.shape[-2:]) if a.ndim > 1 else a
    b_b = np.broadcast_to(b, batch + b.shape[-2:]) if b.ndim > 1 else b
    for idx in np.ndindex(batch):
        x = a_b[idx] if a.ndim > 1 else a
        y = b_b[idx] if b.ndim > 1 else b
        _product(x, y, out[idx])


def _matrix_viewer(shape: tuple, st: tuple, rows: int, cols: int):
    """``view(buf, offset)`` making a (rows, cols) NumPy view of a dense 2-D matrix of this
    layout in row-major or column-major order (the transpose of a dense matrix, e.g. ``W.mT``
    in a linear layer: NumPy hands BLAS the transpose flag instead of copying), else None."""
    n = rows * cols
    if len(shape) == 2 and (st[1] == 1 or cols == 1) and (st[0] == cols or rows == 1):
        return lambda buf, off: buf[off : off + n].reshape(rows, cols)
    if len(shape) == 2 and st[0] == 1 and st[1] == rows:
        return lambda buf, off: buf[off : off + n].reshape(cols, rows).T
    if len(shape) == 2 and rows > 1 and cols > 1 and st[1] == 1 and st[0] > cols:
        # a block of a wider matrix (x[:500, :500]): BLAS reads it with its leading dimension,
        # no copy (500 x 500 float32 blocks multiplied: 2.7 -> 1.4-1.6 ms; NumPy 1.2-1.4)
        return _leading_dimension_viewer(rows, cols, st[0], False)
    if len(shape) == 2 and rows > 1 and cols > 1 and st[0] == 1 and st[1] > rows:
        return _leading_dimension_viewer(cols, rows, st[1], True)  # (a block's transpose)
    return None


def _leading_dimension_viewer(rows: int, cols: int, lead: int, transposed: bool):
    """``view(buf, offset)``: the (rows, cols) row-major block whose rows are ``lead`` elements
    apart, as a NumPy view (its transpose where ``transposed``)."""
    make = np.ndarray

    def view(buf, off):
        size = buf.itemsize
        block = make((rows, cols), buf.dtype, buf, off * size, (lead * size, size))
        return block.T if transposed else block

    return view


def _row_major(a, rows: int, cols: int):
    """``a`` as a (rows, cols) NumPy view where :func:`_matrix_viewer` makes one, else None."""
    view = _matrix_viewer(a._shape, a._strides, rows, cols)
    return None if view is None else view(a._buf, a._offset)


_SMALL_MATMUL: dict = {}  # dtype -> compiled entry point of the small-product loop


def _small_matmul(out, a, b, m, k, n) -> None:
    st_a, st_b = a._strides, b._strides
    args = (out._buf, a._buf, a._offset, st_a[0], st_a[1], b._buf, b._offset, st_b[0], st_b[1],
            m, k, n)  # fmt: skip
    entry = _SMALL_MATMUL.get(out._dtype)
    if entry is None:
        from ._kern_matmul import matmul_small

        matmul_small(*args)
        sig = tuple(matmul_small.typeof_pyval(x) for x in args)
        _SMALL_MATMUL[out._dtype] = matmul_small.overloads[sig].entry_point
    else:
        entry(*args)


#: below this many multiply-adds in all, a stack of float products of 4 or more terms is still
#: dot products in registers (10 4 x 4 float32: 2.2 us, NumPy's matmul 1.3 plus three views)
_ROWS_FLOAT_MAX = 4096


def _rows_serve(dtype: np.dtype, m: int, k: int, n: int, batches: int) -> bool:
    """Whether a stack of small products runs ``matmul_rows`` (dot products in registers,
    ``kernels.SMALL_MATMUL_ROWS``): integers, float products of at most 3 terms (100000 3 x 3
    float64 1.3-1.8 ms, NumPy 3.1), and few small float products of more; other float stacks
    take NumPy's matmul (see :func:`matmul_cpu`)."""
    if m * k * n > _k().SMALL_MATMUL_ROWS:
        return False
    return dtype.kind not in "fc" or k <= 3 or batches * m * k * n < _ROWS_FLOAT_MAX


def _batched_rows_dense(out_shape, out_dtype, a, b, batch_shape):
    """For several batches of small products (``kernels.SMALL_MATMUL_ROWS``, below the parallel
    size) of operands of at least two dimensions and the output's dtype: ``fn(a, b) -> output
    buffer``, the batches' offsets and strides worked out here once and ``matmul_rows`` called
    through its entry point (455 3 x 3 float32 products 18.3 -> ~14 us; NumPy 15)."""
    if len(a._shape) < 2 or len(b._shape) < 2:
        return None
    out_np = out_dtype.numpy
    if a._buf.dtype != out_np or b._buf.dtype != out_np:
        return None
    m, k = a._shape[-2:]
    n = b._shape[-1]
    batches, nb = _size(batch_shape), len(batch_shape)
    k_ = _k()
    if not (batches > 1 and 0 < m * k * n and _rows_serve(out_np, m, k, n, batches)):
        return None
    if batches * m * k * n >= PARALLEL_THRESHOLD:
        return None
    a_st = broadcast_strides(a._shape, a._strides, batch_shape + (m, k))
    b_st = broadcast_strides(b._shape, b._strides, batch_shape + (k, n))
    o_st = _c_strides(out_shape)
    rel_o, rel_a, rel_b = k_._batch_offsets(
        batch_shape, [o_st[:nb], a_st[:nb], b_st[:nb]], [0, 0, 0]
    )
    (asm, ask), (bsk, bsn), (osm, osn) = a_st[nb:], b_st[nb:], o_st[nb:]
    loop, call, empty = k_.matmul_rows, k_.call_compiled, np.empty
    key, size, rows = (loop, out_np, out_np), _size(out_shape), batches * m

    def fn(a, b):
        buf = empty(size, out_np)
        ao = rel_a + a._offset if a._offset else rel_a
        bo = rel_b + b._offset if b._offset else rel_b
        args = (buf, rel_o, osm, osn, a._buf, ao, asm, ask, b._buf, bo, bsk, bsn, m, k, n, 0,
                rows)  # fmt: skip
        call(loop, key, args)
        return buf

    return fn


def _array_viewer(shape: tuple, strides: tuple, dtype: np.dtype):
    """``view(buf, offset)`` making a NumPy view of an array of this layout: a slice of the
    buffer reshaped when C-contiguous (~0.3 us), else an ndarray over it with byte strides."""
    size = _size(shape)
    if strides == _c_strides(shape):
        return lambda buf, off: buf[off : off + size].reshape(shape)
    byte_strides = tuple(s * dtype.itemsize for s in strides)
    make = np.ndarray
    return lambda buf, off: make(
        shape, dtype=dtype, buffer=buf, offset=off * dtype.itemsize, strides=byte_strides
    )


def _numpy_stack(dtype: np.dtype, a, b, batch_shape) -> bool:
    """Whether a batched product goes to NumPy's matmul: stacks of float matrices that
    :func:`_rows_serve` leaves, and every float stack times a vector or vector times a stack
    (1000 8 x 8 float32 by a vector 37 -> 33 us, NumPy 29; the vector times it 89 -> 34, 30)."""
    if not batch_shape or dtype.kind not in "fc":
        return False
    if len(a._shape) == 1 or len(b._shape) == 1:
        return True
    m, k = a._shape[-2:]
    n = b._shape[-1]
    if m > 1 and n > 1 and _blas.threaded_gemm(m, k, n, dtype):
        # products OpenBLAS threads: the kernels' loop of numba's np.dot (SciPy's BLAS, the one
        # pool; ~0.1 us a product where the f2py call and a Python loop took ~3: 100 100 x 100
        # float32 products 2.4 -> 2.0 ms, NumPy 2.0).  (A row or a column of results stays
        # with _stack_product, whose products take gemv or a dot: np.dot's gemm of such a
        # shape is slow.)
        return False
    return not _rows_serve(dtype, m, k, n, _size(batch_shape))


def _batched_numpy_dense(out_shape, out_dtype, a, b, batch_shape):
    """For a stack of float products that :func:`matmul_cpu` hands to NumPy's matmul: ``fn(a, b)
    -> output buffer``, the operands' views planned here once (10 8 x 8 float32: 6.1 -> 3.1 us;
    NumPy 1.6, PyTorch 5.0)."""
    out_np = out_dtype.numpy
    if out_np.kind not in "fc" or a._buf.dtype != out_np or b._buf.dtype != out_np:
        return None
    if not _size(out_shape) or not a._shape[-1] or not _numpy_stack(out_np, a, b, batch_shape):
        return None
    if (a._buf.size and min(a._strides) < 0) or (b._buf.size and min(b._strides) < 0):
        return None  # (reversed views: the general path's views handle them)
    view_a = _array_viewer(a._shape, a._strides, out_np)
    view_b = _array_viewer(b._shape, b._strides, out_np)
    matmul, empty, size = _blas_matmul, np.empty, _size(out_shape)
    if _threaded_stack(a._shape, b._shape, out_np):
        matmul = _stack_product  # (SciPy's BLAS matrix by matrix: see _product)

    def fn(a, b):
        buf = empty(size, out_np)
        matmul(view_a(a._buf, a._offset), view_b(b._buf, b._offset), buf.reshape(out_shape))
        return buf

    return fn


def _matmul_dense(out_shape, out_dtype, args, params):
    """For a small product of two 2-D float matrices, or several batches of small products:
    ``fn(a, b) -> output buffer``."""
    a, b = args
    if params["batch_shape"]:
        batch_shape = params["batch_shape"]
        return _batched_rows_dense(out_shape, out_dtype, a, b, batch_shape) or _batched_numpy_dense(
            out_shape, out_dtype, a, b, batch_shape
        )
    if len(a._shape) != 2 or len(b._shape) != 2:
        return None
    m, k = a._shape
    n = b._shape[1]
    if out_dtype.numpy.kind not in "fc" or not m * k * n:
        return None
    out_np, empty, size = out_dtype.numpy, np.empty, m * n
    if m * k * n > 4096:
        # BLAS through NumPy straight into the result, the operands' views made as planned
        # (64x64 float32 @ 64x64: 8.3 -> ~6.5 us; NumPy 5.7)
        view_a = _matrix_viewer(a._shape, a._strides, m, k)
        view_b = _matrix_viewer(b._shape, b._strides, k, n)
        if view_a is None or view_b is None:
            return None
        if _blas.threaded_matrix_product(m, k, n, out_np):  # (SciPy's BLAS: see _product)
            dot = _product
        else:
            dot = _blas_product(view_a(a._buf, a._offset), view_b(b._buf, b._offset))

        def blas(a, b):
            buf = empty(size, out_np)
            dot(view_a(a._buf, a._offset), view_b(b._buf, b._offset), out=buf.reshape(m, n))
            return buf

        return blas
    (as0, as1), (bs0, bs1) = a._strides, b._strides  # the layout this kernel is made for
    compiled = None

    def fn(a, b):
        nonlocal compiled
        buf = empty(size, out_np)
        if compiled is None:
            compiled = _SMALL_MATMUL.get(out_dtype)
            if compiled is None:
                _small_matmul(_Out(buf, out_shape, out_dtype), a, b, m, k, n)
                return buf
        compiled(buf, a._buf, a._offset, as0, as1, b._buf, b._offset, bs0, bs1, m, k, n)
        return buf

    return fn


def matmul_cpu(out, a, b, *, batch_shape):
    if (
        not batch_shape
        and len(a._shape) == 2
        and len(b._shape) == 2
        and out._buf.dtype.kind in "fc"
    ):
        m, k = a._shape
        n = b._shape[1]
        if 0 < m * k * n <= 4096:  # _kern_matmul.SMALL_MATMUL, without importing numba
            return _small_matmul(out, a, b, m, k, n)
        # one float matrix product of dense operands: BLAS through NumPy, straight into out
        am, bm = _row_major(a, m, k), _row_major(b, k, n)
        if am is not None and bm is not None and k:
            _product(am, bm, out._buf.reshape(m, n))
            return
    if not batch_shape and out._buf.dtype.kind in "fc" and len(a._shape) + len(b._shape) == 3:
        # a matrix times a vector, or a vector times a matrix: BLAS's gemv through NumPy's dot,
        # straight into out (1000 x 1000 float32 by 1000: 36.5 -> ~31 us, NumPy 27)
        if len(a._shape) == 2:
            (m, k), mat, vec = a._shape, _row_major(a, *a._shape), b
        else:
            (k, m), mat, vec = b._shape, _row_major(b, *b._shape), a
        if mat is not None and k and (vec._strides[0] == 1 or k == 1):
            v = vec._buf[vec._offset : vec._offset + k]
            o = out._buf[out._offset : out._offset + m]
            _product(mat, v, o) if vec is b else _product(v, mat, o)
            return
    if batch_shape and len(b._shape) == 2 and out._buf.dtype.kind in "fc":
        # a C-order stack times one matrix (x @ W): one product of all the stack's rows,
        # (batches m, k) @ (k, n), as NumPy's dot would do it for a 2-D x (1000 3 x 3 float64
        # by one 3 x 3: 49 -> ~10 us, NumPy's matmul 31)
        m, k = a._shape[-2:]
        n = b._shape[1]
        rows = _size(a._shape[:-1])
        bm = _row_major(b, k, n) if k else None
        if (
            bm is not None
            and a._strides == _c_strides(a._shape)
            and out._strides == _c_strides(out._shape)
        ):
            am = a._buf[a._offset : a._offset + rows * k].reshape(rows, k)
            out_rows = out._buf[out._offset : out._offset + rows * n].reshape(rows, n)
            _product(am, bm, out_rows)
            return
    if _numpy_stack(out._buf.dtype, a, b, batch_shape):
        # a stack of float matrices: NumPy's matmul loop, a BLAS call a matrix with less
        # overhead than numba's np.dot (1000 8 x 8 float64: 143 -> 54 us, NumPy 47; 4 x 4
        # float32 in registers 78 -> 36, NumPy 30), writing into out's memory
        _stack_product(numpy_view(a), numpy_view(b), numpy_view(out))
        return
    # 1-D operands: a row of x1, a column of x2 (stride 0 on the added dimension)
    a_shape, a_strides = a._shape, a._strides
    if len(a_shape) == 1:
        a_shape, a_strides = (1,) + a_shape, (0,) + a_strides
    b_shape, b_strides = b._shape, b._strides
    if len(b_shape) == 1:
        b_shape, b_strides = b_shape + (1,), b_strides + (0,)
    m, k = a_shape[-2:]
    n = b_shape[-1]
    nb = len(batch_shape)
    o_strides = out._strides[:nb]
    rest = out._strides[nb:]
    o_strides += (rest[0] if len(a._shape) > 1 else 0,)
    o_strides += (rest[-1] if len(b._shape) > 1 else 0,)
    a_op = (a._buf, a._offset, broadcast_strides(a_shape, a_strides, batch_shape + (m, k)))
    b_op = (b._buf, b._offset, broadcast_strides(b_shape, b_strides, batch_shape + (k, n)))
    _k().matmul((out._buf, out._offset, o_strides), a_op, b_op, batch_shape, m, k, n)


def arange_cpu(out, *, start, step):
    n = out._shape[0]
    if not n:
        return
    if out._buf.dtype.kind in "iuf" and type(start) in (int, float) and type(step) in (int, float):
        _arith().arange_fill(out._buf, out._offset, n, start, step)  # (one pass, in place)
        return
    values = start + step * np.arange(n)
    out._buf[out._offset : out._offset + n] = values.astype(out._dtype.numpy)


def linspace_cpu(out, *, start, stop, endpoint):
    n = out._shape[0]
    if not n:
        return
    real = type(start) in (int, float) and type(stop) in (int, float)
    if out._buf.dtype.kind == "f" and real:
        _arith().linspace_fill(out._buf, out._offset, n, float(start), float(stop), endpoint)
        return
    out._buf[out._offset : out._offset + n] = np.linspace(
        start, stop, n, endpoint=endpoint, dtype=out._dtype.numpy
    )


# -- index kernels (argmax/argmin, gathers, sorting, searching) -----------------------------------
_index_kernels = None


def _ix():
    """The index kernels' module, imported on first use (numba compiles on import)."""
    global _index_kernels
    if _index_kernels is None:
        from . import _kern_index

        _index_kernels = _kern_index
    return _index_kernels


def _axis_last(a, axis: int):
    """(shape, strides) of ``a`` with ``axis`` moved last (a view: no data moves)."""
    order = [i for i in range(len(a._shape)) if i != axis] + [axis]
    return tuple(a._shape[i] for i in order), tuple(a._strides[i] for i in order)


def _dense_host(a) -> np.ndarray:
    """``a``'s elements as a C-contiguous NumPy array (a view when they already are)."""
    return np.ascontiguousarray(numpy_view(a))


def _flat_dense(x) -> np.ndarray:
    """``x``'s elements in C order as a 1-D ndarray: a slice of its buffer when it is
    C-contiguous (0.15 us; :func:`_dense_host` and a reshape: ~1 us), else a copy."""
    size = _size(x._shape)
    if x._strides == _c_strides(x._shape) or size <= 1:
        return x._buf[x._offset : x._offset + size]
    return _dense_host(x).reshape(-1)


def _argreduce_dense_order(k, x, find_max: bool) -> int:
    """The flat (C-order) index of the first max (min) of a large array dense in another axis
    order (a transpose), read in place: the winning value from memory order, then the smallest
    C-order index holding it (ties and NaNs may come in another order there).  Two vectorised
    passes instead of a strided copy (1000x1000 transposed float32: 1.25 ms in NumPy)."""
    n = x.size
    buf, off = x._buf, x._offset
    at_mem = int(k.G.argreduce_long_p(buf, off, n, 1, find_max, 4 * _num_threads()))
    # size-1 axes never step (their strides may be anything): left out of the decomposition
    order = sorted(
        ((st, c) for st, c, m in zip(x._strides, _c_strides(x._shape), x._shape) if m != 1),
        reverse=True,
    )
    strides = np.array([st for st, _ in order], np.int64)
    c_strides = np.array([c for _, c in order], np.int64)
    return _ix().first_flat_index_of(buf, off, n, buf[off + at_mem], strides, c_strides)


def _argreduce_by_rows(k, x, index_dtype, find_max: bool) -> int:
    """The flat index of the first max (min) of a large 2-D ``x`` that is not dense (a view of
    stepped rows or columns), read in place: each row's first best (the axis plan's loops),
    then the first row holding a NaN, else the first row whose best is the best (a copy of 1M
    float32 first: 1.2-1.6x NumPy's time)."""
    rows, cols = x._shape
    best = _Out(np.empty(rows, np.int64), (rows,), index_dtype)
    _run_argreduce_axis_plan(k, _argreduce_axis_plan(k, x, 1), best, x, find_max)
    at = best._buf
    values = numpy_view(x)[np.arange(rows), at]
    nan = values != values
    if nan.any():
        r = int(np.argmax(nan))
    else:
        r = int(np.argmax(values) if find_max else np.argmin(values))
    return r * cols + int(at[r])


def _argreduce(find_max: bool):
    def kernel(out, x, *, axis):
        if not out.size:
            return  # an empty kept dimension: nothing to write (and no block may be walked)
        k = _k()  # kernels.argreduce: generated, vectorised on contiguous rows
        if axis is None:  # over the flattened array: x's own buffer when it is C-contiguous
            shape = x._shape
            n = x.size
            step = 1
            if x._strides == _c_strides(shape):
                buf, off = x._buf, x._offset
            elif len(shape) == 1:
                # one run with a step: read in place (a short step as its span), not copied
                # first (1M float32 at step 2: 406 -> 122 us; NumPy 352)
                buf, off, step = x._buf, x._offset, x._strides[0]
            else:
                if n >= PARALLEL_THRESHOLD and dense_order(shape, x._strides) is not None:
                    out._buf[out._offset] = _argreduce_dense_order(k, x, find_max)
                    return
                if n >= PARALLEL_THRESHOLD and len(shape) == 2:
                    out._buf[out._offset] = _argreduce_by_rows(k, x, out._dtype, find_max)
                    return
                buf, off = _dense_host(x).reshape(-1), 0
            if n < PARALLEL_THRESHOLD:  # one short row: no blocks to plan
                run = k.G.argreduce_span if k.reads_span(step, n) else k.argreduce
                args = (out._buf[out._offset :], buf, off, 0, 0, step, 1, 1, n, find_max)
                k.call_compiled(run, (run, out._buf.dtype, buf.dtype), args)
                return
            # one long run: its parts over threads
            run = k.G.argreduce_long_span_p if k.reads_span(step, n) else k.G.argreduce_long_p
            out._buf[out._offset] = run(buf, off, n, step, find_max, 4 * _num_threads())
            return
        plan_key = (x._shape, x._strides, axis)
        plan = plans.get(plan_key)
        if plan is None:  # (planned once per layout: 64x64 rows 9.0 -> 5.5 us in all)
            if len(plans) >= 1024:
                plans.clear()
            plan = plans[plan_key] = _argreduce_axis_plan(k, x, axis)
        _run_argreduce_axis_plan(k, plan, out, x, find_max)

    plans: dict = {}  # (x's shape, x's strides, axis) -> _argreduce_axis_plan

    def dense(out_shape, out_dtype, args, params):
        """For a small argmax/argmin along an axis whose rows take one loop call (rows of a
        matrix): ``fn(x) -> output buffer``, the plan and the loop's entry point found once
        (64x64 rows 5.7 -> ~4.5 us)."""
        (x,) = args
        axis = params["axis"]
        total = _size(out_shape)
        if not 0 < total or x.size >= PARALLEL_THRESHOLD:
            return None
        if axis is None:
            return _argreduce_flat_dense(x, out_dtype, find_max)
        plan = _argreduce_axis_plan(_k(), x, axis)
        if plan[0] != "blocks" or len(plan[4]) != 1:
            return None
        _, run, sr, n, ((xo, s0, s1, n0, n1, _),) = plan
        np_dtype, empty = out_dtype.numpy, np.empty
        key, call = (run, np_dtype, x._buf.dtype), _k().call_compiled

        def fn(x):
            buf = empty(total, np_dtype)
            call(run, key, (buf, x._buf, x._offset + xo, s0, s1, sr, n0, n1, n, find_max))
            return buf

        return fn

    kernel.dense = dense
    return kernel


def _argreduce_flat_dense(x, out_dtype, find_max: bool):
    """The dense lane of a small argmax/argmin of the flattened ``x`` read in place (C-contiguous,
    or 1-D with any step): one loop call into a fresh buffer, without the kernel's layout
    tests and output view (4096 float32: 3.3 -> 2.0 us; NumPy 1.35, PyTorch 5.1)."""
    k = _k()
    n = x.size
    if x._strides == _c_strides(x._shape):
        step = 1
    elif len(x._shape) == 1:
        step = x._strides[0]
    else:
        return None
    run = k.G.argreduce_span if k.reads_span(step, n) else k.argreduce
    np_dtype, empty = out_dtype.numpy, np.empty
    key, call = (run, np_dtype, x._buf.dtype), k.call_compiled

    def fn(x):
        buf = empty(1, np_dtype)
        call(run, key, (buf, x._buf, x._offset, 0, 0, step, 1, 1, n, find_max))
        return buf

    return fn


def _num_threads() -> int:
    from numba import get_num_threads  # (numba's threading layer starts on first use)

    return get_num_threads()


def _argreduce_axis_plan(k, x, axis: int) -> tuple:
    """How argmax/argmin runs along ``axis`` of x's layout (for x's offset 0): the reduced axis
    last, then ("columns", run, row stride, columns, rows) for one kept axis of unit stride,
    ("long", run, n) for one long contiguous run, or ("blocks", run, row stride, n, blocks) with
    the kept dims walked in blocks of rank 2, each (x offset, s0, s1, n0, n1, output position)."""
    shape, strides = _axis_last(x, axis)
    kept, n = shape[:-1], shape[-1]
    big = x.size >= PARALLEL_THRESHOLD
    if (
        len(kept) == 1
        and strides[0] == 1
        and strides[-1] == kept[0]
        and 1 < kept[0] < _ix().ARG_NARROW
        and n > 1
    ):  # a C-order matrix of few columns along axis 0: one long run in chunks of rows
        run = _ix().argreduce_narrow_cols_p if big else _ix().argreduce_narrow_cols
        return ("narrow", run, kept[0], n)
    if len(kept) == 1 and strides[0] == 1 and strides[-1] != 1 and n > 1:
        # one kept axis with unit stride (a transposed matrix): whole rows of memory, the best
        # value per column kept with selects, instead of a strided scan per column
        run = _ix().argreduce_columns_p if big else _ix().argreduce_columns
        return ("columns", run, strides[-1], kept[0], n)
    if not kept and big and strides[-1] == 1:  # one long run: its parts over threads
        return ("long", k.G.argreduce_long_p, n)
    blocks, done = [], 0
    for (xo,), (n0, n1), (st,) in _split_outer(kept or (1,), [strides[:-1] or (0,)], [0], 2):
        blocks.append((xo, st[0], st[1], n0, n1, done))
        done += n0 * n1
    if k.reads_span(strides[-1], n):  # rows with a short step: each read as its span
        return (
            "blocks",
            k.G.argreduce_span_p if big else k.G.argreduce_span,
            strides[-1],
            n,
            blocks,
        )
    return ("blocks", k.G.argreduce_p if big else k.argreduce, strides[-1], n, blocks)


def _run_argreduce_axis_plan(k, plan, out, x, find_max) -> None:
    """Run an :func:`_argreduce_axis_plan` on x."""
    buf, off = x._buf, x._offset
    what, run = plan[0], plan[1]
    obuf, oo = out._buf, out._offset
    if what == "columns":
        run(obuf[oo:], buf, off, plan[2], plan[3], plan[4], find_max)
        return
    if what == "narrow":
        run(obuf[oo:], buf, off, plan[2], plan[3], find_max)
        return
    if what == "long":
        obuf[oo] = run(buf, off, plan[2], 1, find_max, 4 * _num_threads())
        return
    _, run, sr, n, blocks = plan
    key = (run, obuf.dtype, buf.dtype)  # (through the entry: 10 arguments' typing)
    if oo == 0 and len(blocks) == 1:  # (a fresh output: no view of it to make)
        xo, s0, s1, n0, n1, _ = blocks[0]
        k.call_compiled(run, key, (obuf, buf, off + xo, s0, s1, sr, n0, n1, n, find_max))
        return
    for xo, s0, s1, n0, n1, done in blocks:
        view = obuf[oo + done : oo + done + n0 * n1]
        k.call_compiled(run, key, (view, buf, off + xo, s0, s1, sr, n0, n1, n, find_max))


def normalize_index_cpu(out, k, *, size, axis):
    v = _flat_dense(k)
    o = out._buf[out._offset : out._offset + v.size]
    ix = _ix()  # one pass: bounds test and normalisation (NumPy's three passes: 9.8 -> ~2 us)
    key = (ix.normalize_indices, o.dtype, v.dtype)
    bad = _k().call_compiled(ix.normalize_indices, key, (o, v, size))
    if bad >= 0:
        raise IndexError(f"index {int(v[bad])} is out of bounds for axis {axis} with size {size}")


_TAKE_LAYOUTS: dict = {}  # (shape, strides, axis) -> (pre, n, post, strides as (pre, n, post))


def _take_layout(shape, strides, axis):
    key = (shape, strides, axis)
    r = _TAKE_LAYOUTS.get(key)
    if r is None:
        n_ax = shape[axis]
        pre, post = _size(shape[:axis]), _size(shape[axis + 1 :])
        r = (pre, n_ax, post, reshape_strides(shape, strides, (pre, n_ax, post)))
        if len(_TAKE_LAYOUTS) < 4096:
            _TAKE_LAYOUTS[key] = r
    return r


def take_cpu(out, x, indices, *, axis):
    # x as (pre, n, post): strides when the layout allows, else a dense copy
    pre, n_ax, post, st = _take_layout(x._shape, x._strides, axis)
    if st is None:
        xbuf, xoff, st = _dense_host(x).reshape(-1), 0, (n_ax * post, post, 1)
    else:
        xbuf, xoff = x._buf, x._offset
    n_idx = indices._shape[0]
    if pre == 1 and post == 1 and n_idx >= PARALLEL_THRESHOLD:  # a long gather: over threads
        bad = _ix().take1_p(out._buf, xbuf, xoff, st[1], indices._buf, indices._offset,
                            indices._strides[0], n_idx, n_ax, 4 * _num_threads())  # fmt: skip
    elif pre * n_idx * post >= PARALLEL_THRESHOLD:  # rows or columns: chunks over threads
        bad = _ix().take3_p(out._buf, xbuf, xoff, *st, indices._buf, indices._offset,
                            indices._strides[0], pre, n_idx, post, n_ax,
                            _num_threads())  # fmt: skip
    else:
        bad = _take3(out, xbuf, xoff, st, indices, pre, post, n_ax)
    if bad >= 0:
        _take_out_of_bounds(indices, bad, n_ax)


def _take_out_of_bounds(indices, bad: int, n_ax: int):
    raise IndexError(
        f"take: index {int(indices._buf[indices._offset + bad * indices._strides[0]])} is out "
        f"of bounds for an axis of size {n_ax}"
    )


def _take_dense(out_shape, out_dtype, args, params):
    """For a small take whose x has a (pre, axis, post) layout: ``fn(x, indices) -> output
    buffer``, the layout worked out once and take3 called through its compiled entry."""
    x, indices = args
    total = _size(out_shape)
    if not 0 < total < PARALLEL_THRESHOLD:
        return None
    pre, n_ax, post, st = _take_layout(x._shape, x._strides, params["axis"])
    if st is None:
        return None
    s_pre, s_ax, s_post = st
    np_dtype, empty, call = out_dtype.numpy, np.empty, _k().call_compiled
    loop = _ix().take3
    key = (loop, np_dtype, x._buf.dtype, indices._buf.dtype)

    def fn(x, indices):
        buf = empty(total, np_dtype)
        args = (buf, x._buf, x._offset, s_pre, s_ax, s_post, indices._buf, indices._offset,
                indices._strides[0], pre, indices._shape[0], post, n_ax)  # fmt: skip
        bad = call(loop, key, args)
        if bad >= 0:
            _take_out_of_bounds(indices, bad, n_ax)
        return buf

    return fn


take_cpu.dense = _take_dense


def _take3(out, xbuf, xoff, st, indices, pre, post, n_ax) -> int:
    """take3 through its compiled entry point (the dispatcher's typing of 13 arguments is ~2 us
    of a 4096-element take)."""
    ibuf = indices._buf
    args = (out._buf, xbuf, xoff, *st, ibuf, indices._offset, indices._strides[0], pre,
            indices._shape[0], post, n_ax)  # fmt: skip
    loop = _ix().take3
    return _k().call_compiled(loop, (loop, out._buf.dtype, xbuf.dtype, ibuf.dtype), args)


def _take_along_rows(x, idx, out_shape, axis):
    """(rows, x's shape and strides with the axis last and the rows broadcast, the same for
    idx, x and idx as (rows, axis) strides or None where that layout cannot be viewed)."""
    xs, xst = _axis_last(x, axis)
    is_, ist = _axis_last(idx, axis)
    rows = tuple(n for d, n in enumerate(out_shape) if d != axis)
    xst = broadcast_strides(xs[:-1], xst[:-1], rows) + (xst[-1],)
    ist = broadcast_strides(is_[:-1], ist[:-1], rows) + (ist[-1],)
    r = _size(rows)
    x2 = reshape_strides(rows + (xs[-1],), xst, (r, xs[-1]))
    i2 = reshape_strides(rows + (is_[-1],), ist, (r, is_[-1]))
    return rows, xs, xst, is_, ist, x2, i2


def _take_along_out_of_bounds(bad: int, n_ax: int):
    raise IndexError(
        f"take_along_axis: an index in row {bad} is out of bounds for an axis of size {n_ax}"
    )


def _take_along_dense(out_shape, out_dtype, args, params):
    """For a small take_along_axis along the last axis of layouts viewed as (rows, axis):
    ``fn(x, idx) -> output buffer``, the geometry worked out once and take_rows called through
    its entry point (64x64 rows 19 -> ~12 us)."""
    x, idx = args
    axis = params["axis"]
    total = _size(out_shape)
    if axis != len(out_shape) - 1 or not 0 < total < PARALLEL_THRESHOLD:
        return None
    rows, xs, _, is_, _, x2, i2 = _take_along_rows(x, idx, out_shape, axis)
    if x2 is None or i2 is None:
        return None
    r, n_idx, n_ax = _size(rows), is_[-1], xs[-1]
    np_dtype, empty, call = out_dtype.numpy, np.empty, _k().call_compiled
    loop = _ix().take_rows
    key = (loop, np_dtype, x._buf.dtype, idx._buf.dtype)

    def fn(x, idx):
        buf = empty(total, np_dtype)
        args = (buf, x._buf, x._offset, *x2, idx._buf, idx._offset, *i2, r, n_idx, n_ax)
        bad = call(loop, key, args)
        if bad >= 0:
            _take_along_out_of_bounds(bad, n_ax)
        return buf

    return fn


def take_along_axis_cpu(out, x, idx, *, axis):
    # rows: the other dimensions, broadcast between x and indices; the axis last
    rows, xs, xst, is_, ist, x2, i2 = _take_along_rows(x, idx, out._shape, axis)
    r = _size(rows)
    xbuf, xoff = x._buf, x._offset
    ibuf, ioff = idx._buf, idx._offset
    if x2 is None:
        xbuf = np.ascontiguousarray(_strided_host(x, rows + (xs[-1],), xst)).reshape(-1)
        xoff, x2 = 0, (xs[-1], 1)
    if i2 is None:
        ibuf = np.ascontiguousarray(_strided_host(idx, rows + (is_[-1],), ist)).reshape(-1)
        ioff, i2 = 0, (is_[-1], 1)
    last_axis = axis == len(out._shape) - 1
    target = out._buf if last_axis else np.empty(r * is_[-1], out._buf.dtype)
    bad = _ix().take_rows(target, xbuf, xoff, *x2, ibuf, ioff, *i2, r, is_[-1], xs[-1])
    if bad >= 0:
        _take_along_out_of_bounds(bad, xs[-1])
    if not last_axis:  # rows were written with the axis last: move them into place
        o_shape, o_st = _axis_last(out, axis)
        _k().copy((out._buf, out._offset, o_st), (target, 0, _c_strides(o_shape)), o_shape)


take_along_axis_cpu.dense = _take_along_dense

_C_STRIDES: dict = {}


def _c_strides(shape) -> tuple:
    """C-order strides of ``shape`` (cached: the per-call fast paths ask on every call)."""
    r = _C_STRIDES.get(shape)
    if r is None:
        st, acc = [], 1
        for n in reversed(shape):
            st.append(acc)
            acc *= n
        r = tuple(reversed(st))
        if len(_C_STRIDES) < 4096:
            _C_STRIDES[shape] = r
    return r


def _strided_host(a, shape, strides) -> np.ndarray:
    """A NumPy view of ``a``'s buffer with (element) ``shape``/``strides`` from its offset."""
    isz = a._buf.itemsize
    base = a._buf[a._offset :] if a._buf.size else a._buf
    return np.lib.stride_tricks.as_strided(
        base, shape=shape, strides=tuple(st * isz for st in strides)
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
    run = _ix().scatter_blocks  # (through its entry: no type dispatch per call)
    args = (x._buf, flat, values._buf[values._offset :], t0, t1, s0, s1)
    _k().call_compiled(run, (run, x._buf.dtype, values._buf.dtype), args)


def scatter_add_cpu(x, offsets, values, *, trailing_strides):
    (t0, t1), (s0, s1) = _blocks2(values._shape[offsets.ndim :], trailing_strides)
    flat = offsets._buf[offsets._offset : offsets._offset + offsets.size]
    _ix().scatter_add_blocks(x._buf, flat, values._buf[values._offset :], t0, t1, s0, s1)


def _rows_last(a, axis: int) -> np.ndarray:
    """A NumPy view of ``a`` with ``axis`` moved last (writable: it shares ``a``'s buffer)."""
    v = numpy_view(a)
    if axis == v.ndim - 1 or axis == -1:  # (np.moveaxis is ~4 us of Python: 64x64 sort 22 us)
        return v
    return np.moveaxis(v, axis, -1)


_FEW_ROWS = 16


def _row_indices(shape):
    """The index of each row (along the last axis) of an array of ``shape``: np.ndindex(shape[:-1])
    without its ~2 us of set-up (a 4096-element sort is ~45 us)."""
    return itertools.product(*map(range, shape[:-1]))


def _ties_in_input_order(sorted_row: np.ndarray, row: np.ndarray) -> None:
    """The sorted float row's run of two or more zeros, and its NaN tail, rewritten with the
    input row's zeros and NaNs in their order (what a stable sort gives): NumPy's sort is not
    stable, and its SIMD sort picks either zero of a -0.0/+0.0 pair, so the run may not even
    hold the input's count of each sign."""
    zero = sorted_row.dtype.type(0)  # a Python 0.0 would cast a float32 row to float64 first
    lo, hi = sorted_row.searchsorted(zero), sorted_row.searchsorted(zero, "right")
    if hi - lo > 1:
        sorted_row[lo:hi] = row[row == 0]
    if sorted_row.size > 1 and sorted_row[-2] != sorted_row[-2]:  # two NaNs or more
        nans = row[np.isnan(row)]
        sorted_row[sorted_row.size - nans.size :] = nans


#: from this many elements a sort uses both cores: a long row is cut in two halves, sorted at once
#: by NumPy (its sort releases the GIL) and merged by two threads; many rows are sorted half on
#: each thread.  1M float32 on the 2-core development machine: 19-21 ms vs NumPy's 31-37 ms
_LONG_SORT = 1 << 16
#: row lengths from which a real sort or argsort of 4- or 8-byte elements is an LSD radix sort
#: (``_kern_index.radix_sort_rows``).  NumPy's SIMD sorting networks win on shorter rows (512
#: float64: 4.9 us against the radix kernel's 6.9); 1024 float32 xp.sort: 13.4 -> 10.8 us
_RADIX_MIN = 1024
#: the same for an argsort, whose other route (NumPy's argsort of packed keys and positions, or
#: its argsort checked for ties, then its stable argsort) is slower from far shorter rows: 1M
#: int64 in rows of 64, 29 -> 4.7 ms; of 1000, 59 -> 2.5 (NumPy's stable argsort 14 and 28);
#: float64 of distinct values in rows of 64 is the one loss, 10.5 -> 14.5 ms (NumPy 22)
_RADIX_ARGSORT_MIN = 64
_SORT_POOL = None


def _forget_sort_pool() -> None:
    global _SORT_POOL
    _SORT_POOL = None


# a forked child inherits the pool without its thread: work submitted there would never run
os.register_at_fork(after_in_child=_forget_sort_pool)


def _on_two_threads(first, second) -> None:
    """Run the calls ``first()`` and ``second()``: at once on two Python threads where numba is
    given more than one, else one after the other.  (Python threads, not numba's: the work is
    NumPy's sort and nogil kernels, and the parts never depend on the thread count.)"""
    global _SORT_POOL
    if _num_threads() > 1:
        if _SORT_POOL is None:
            from concurrent.futures import ThreadPoolExecutor

            _SORT_POOL = ThreadPoolExecutor(1, thread_name_prefix="strided-sort")
        pending = _SORT_POOL.submit(first)
        try:
            second()
        finally:  # (never leave the helper writing into buffers the caller gives up on)
            pending.result()
    else:
        first()
        second()


def _sort_long_row(o: np.ndarray, v: np.ndarray) -> None:
    """``o`` = the 1-D ``v`` sorted, NaN last: its halves copied and sorted by NumPy at once, then
    merged (``_kern_index.merge_sorted_run``, each thread one half of the output) with the
    halves' NaN tails after the merge.  Neither step depends on the thread count, so neither do
    the bits; a run of -0.0/+0.0 and the NaNs are put in input order afterwards by the caller."""
    n = v.shape[0]
    h = n // 2
    halves = np.empty(n, v.dtype)
    first, second = halves[:h], halves[h:]

    def sort(half, part):
        def run():
            if half.dtype.itemsize in _UNSIGNED:
                _radix_sort_row(half, np.ascontiguousarray(part))
            else:
                half[...] = part
                half.sort(kind="quicksort")

        return run

    _on_two_threads(sort(first, v[:h]), sort(second, v[h:]))
    if v.dtype.kind == "f":
        nan = v.dtype.type("nan")  # a Python float would cast a float32 half to float64 first
        na, nb = int(first.searchsorted(nan)), int(second.searchsorted(nan))
    else:
        na, nb = h, n - h
    a, b = first[:na], second[:nb]
    m = na + nb
    target = o if o.flags.c_contiguous else np.empty(n, v.dtype)
    merge = _ix().merge_sorted_run
    _on_two_threads(lambda: merge(a, b, target, 0, m // 2), lambda: merge(a, b, target, m // 2, m))
    target[m : m + h - na] = first[na:]
    target[m + h - na :] = second[nb:]
    if target is not o:
        o[...] = target


def _radix_sort_row(o: np.ndarray, v: np.ndarray) -> None:
    """``o`` = the contiguous 1-D ``v`` (4- or 8-byte reals) sorted by the radix kernel."""
    ix = _ix()
    unsigned = _UNSIGNED[v.dtype.itemsize]
    loop = ix.radix_sort_rows
    args = (o.view(unsigned), v.view(unsigned), 0, 0, 1, 1, v.size, _radix_kind(v.dtype), False)
    _k().call_compiled(loop, (loop, unsigned, True), args)


def _sort_rows_in_place(o: np.ndarray, kind: str) -> None:
    """Each row (last axis) of ``o`` sorted in place; from ``_LONG_SORT`` elements the first
    axis is cut in two and the halves sorted at once."""
    if o.size >= _LONG_SORT and o.ndim > 1 and o.shape[0] > 1:
        k = o.shape[0] // 2
        top, bottom = o[:k], o[k:]
        _on_two_threads(
            lambda: top.sort(axis=-1, kind=kind), lambda: bottom.sort(axis=-1, kind=kind)
        )
    else:
        o.sort(axis=-1, kind=kind)


def _sort_numpy(out, x, *, axis, descending) -> None:
    """Real-dtype sort through NumPy's ``np.sort`` (introsort, with AVX-512/AVX2 SIMD sorting
    networks for 16/32/64-bit keys in NumPy 2): 15-30x faster than a numba loop over ``np.sort``.

    The fast sort is not stable; for values that only shows on equal values that are
    distinguishable, i.e. -0.0 and +0.0.  A few rows are sorted first and a run of zeros (found
    by bisection) rewritten from the input; more rows are checked for both signs first (one
    pass) and then sorted with NumPy's stable sort.  Large sorts use both cores
    (``_sort_long_row``, ``_sort_rows_in_place``).
    Descending is the reverse of ascending (NaNs first)."""
    v = _rows_last(x, axis)
    o = _rows_last(out, axis)
    rows = _size(o.shape[:-1])
    if rows <= _FEW_ROWS and v.shape[-1] >= _LONG_SORT and v.dtype.kind in "fiu":
        for i in _row_indices(o.shape):
            _sort_long_row(o[i], v[i])
    elif v.dtype.kind != "f" or rows <= _FEW_ROWS:
        o[...] = v
        _sort_rows_in_place(o, "quicksort")  # in place, in the output
    else:
        o[...] = v
        kind = "quicksort"
        for tied in (v == 0, np.isnan(v)):  # values that are equal but may differ in sign
            if np.count_nonzero(tied):
                signs = np.signbit(v[tied])
                if signs.any() and not signs.all():
                    kind = "stable"
        _sort_rows_in_place(o, kind)
    if v.dtype.kind == "f" and rows <= _FEW_ROWS:  # (more rows took the stable sort if need be)
        for i in _row_indices(o.shape):
            _ties_in_input_order(o[i], v[i])
    if descending:
        o[...] = o[..., ::-1].copy()


def _argsort_numpy(out, x, *, axis, descending) -> None:
    """Stable real-dtype argsort through NumPy's SIMD sort.

    Up to 32-bit keys with rows shorter than 2**32: each element becomes one uint64, its
    order-preserving key (NaNs canonical and last, -0.0 equal to +0.0; complemented for
    descending) in the high half and its position in the low half, so that an unstable sort of
    these distinct keys is a stable argsort.  64-bit keys: NumPy's fast argsort, checked for
    ties (then NumPy's stable argsort)."""
    v = _rows_last(x, axis)
    n = v.shape[-1]
    o = _rows_last(out, axis)
    if v.dtype.itemsize <= 4 and n < 2**32:
        if v.dtype.kind == "f":
            f = v.astype(np.float32) + np.float32(0.0)  # -0.0 + 0.0 is +0.0
            f[np.isnan(f)] = np.float32(np.nan)  # one NaN (positive: above +inf)
            i = f.view(np.int32)
            key = (i ^ ((i >> 31) & np.int32(0x7FFFFFFF))).view(np.uint32) ^ np.uint32(1 << 31)
        elif v.dtype.kind == "u" or v.dtype.kind == "b":
            key = v.astype(np.uint32)
        else:
            key = v.astype(np.int32).view(np.uint32) ^ np.uint32(1 << 31)
        if descending:
            key = ~key
        packed = (key.astype(np.uint64) << np.uint64(32)) | np.arange(n, dtype=np.uint64)
        packed.sort(axis=-1)
        o[...] = packed & np.uint64(0xFFFFFFFF)
        return
    w = v[..., ::-1] if descending else v
    order = np.argsort(w, axis=-1)
    s = np.take_along_axis(w, order, axis=-1)
    tie = s[..., 1:] == s[..., :-1]
    if v.dtype.kind == "f":
        tie |= np.isnan(s[..., 1:]) & np.isnan(s[..., :-1])
    if tie.any():
        order = np.argsort(w, axis=-1, kind="stable")
    # descending: stable = reverse of the stable ascending sort of the reversed row
    o[...] = (n - 1 - order[..., ::-1]) if descending else order


def _sort_rows_by(k, out, x, axis: int, halves: bool = False) -> None:
    """Run the row kernel ``k(target, xo, xr, xa, n_rows, n)`` over the rows of ``x`` along
    ``axis``, written with the axis last into ``target``: ``out``'s buffer when the axis is its
    last, else a scratch buffer then copied into place.  ``halves``: a large sort of many rows
    is cut in two and run on two threads (the kernels release the GIL; the split never depends
    on the thread count)."""
    if len(x._shape) == 1:  # one row, straight into the output
        k(out._buf, x._offset, 0, x._strides[0], 1, x._shape[0])
        return
    shape, strides = _axis_last(x, axis)
    n = shape[-1]
    rows = _size(shape) // n if n else 0
    if not rows:
        return
    last_axis = axis == len(shape) - 1
    target = out._buf if last_axis else np.empty(rows * n, out._buf.dtype)
    lead = shape[:-1]
    calls = []
    done = 0
    for (xo,), (n0, n1), (st,) in _split_outer(
        lead or (1,), [strides[:-1] or (0,)], [x._offset], 2
    ):
        for i in range(n0):
            base, first = xo + i * st[0], done + i * n1
            cut = n1 // 2 if halves and n1 > 1 and rows * n >= _LONG_SORT else 0
            for r0, r1 in ((0, cut), (cut, n1)) if cut else ((0, n1),):
                calls.append((target[(first + r0) * n :], base + r0 * st[1], r1 - r0))
        done += n0 * n1
    xr, xa = st[1], strides[-1]  # (every block has the same inner strides)

    def run(part):
        return lambda: [k(t, xo, xr, xa, m, n) for t, xo, m in part]

    if len(calls) > 1 and halves and rows * n >= _LONG_SORT:
        _on_two_threads(run(calls[0::2]), run(calls[1::2]))
    else:
        run(calls)()
    if not last_axis:
        o_shape, o_st = _axis_last(out, axis)
        _k().copy((out._buf, out._offset, o_st), (target, 0, _c_strides(o_shape)), o_shape)


_UNSIGNED = {4: np.uint32, 8: np.uint64}


def _radix_kind(np_dtype) -> int:
    """How the radix kernels read elements of ``np_dtype``: float, signed or unsigned bits."""
    ix = _ix()
    return {"f": ix.RADIX_FLOAT, "i": ix.RADIX_SIGNED}.get(np_dtype.kind, ix.RADIX_UNSIGNED)


def _radix_sort(name: str, out, x, axis: int, descending: bool) -> None:
    """Sort (argsort) of 4- or 8-byte real elements by the LSD radix kernels, which read their
    bits as unsigned integers (``_kern_index.radix_sort_rows``); many rows go over two threads
    (1M float32 in one row: ~9 ms, NumPy's sort ~31)."""
    ix = _ix()
    np_dtype = x._buf.dtype
    unsigned = _UNSIGNED[np_dtype.itemsize]
    kind = _radix_kind(np_dtype)
    xbuf = x._buf.view(unsigned)
    values = name == "sort_rows"
    loop = ix.radix_sort_rows if values else ix.radix_argsort_rows
    key = (loop, unsigned, values)
    call = _k().call_compiled

    def k(target, xo, xr, xa, rows, n):
        args = (target.view(unsigned) if values else target, xbuf, xo, xr, xa, rows, n, kind,
                descending)  # fmt: skip
        call(loop, key, args)

    _sort_rows_by(k, out, x, axis, halves=True)


#: row lengths from which a sort (argsort) of 1- and 2-byte keys counts them
#: (``_kern_index.small_key_sort_rows``, ``small_key_argsort_rows``), by key size in bytes
_SMALL_KEY_SORT_MIN = {1: 64, 2: 16384}
_SMALL_KEY_ARGSORT_MIN = {1: 16, 2: 64}


def _small_key_sort(name: str, out, x, axis: int, descending: bool) -> None:
    """Sort (argsort) of bool and 1- or 2-byte integers by counting their keys (the element
    plus a bias that makes it non-negative): no comparisons, one or two passes."""
    ix = _ix()
    xbuf = x._buf.view(np.uint8) if x._buf.dtype == np.bool_ else x._buf
    bias = 1 << (8 * xbuf.itemsize - 1) if xbuf.dtype.kind == "i" else 0
    values = name == "sort_rows"
    loop = ix.small_key_sort_rows if values else ix.small_key_argsort_rows
    key = (loop, xbuf.dtype)
    call = _k().call_compiled

    def k(target, xo, xr, xa, rows, n):
        target = target.view(np.uint8) if target.dtype == np.bool_ else target
        call(loop, key, (target, xbuf, xo, xr, xa, rows, n, bias, descending))

    _sort_rows_by(k, out, x, axis, halves=True)


def _complex_sort(name: str, out, x, axis: int, descending: bool) -> None:
    """Complex sort (argsort): stable, by real then imaginary part, NaN last in each, by the
    radix kernel over the components' bits (``_kern_index.radix_complex_sort_rows``; 1M
    complex128 ~275 -> ~70 ms, NumPy's unstable sort 87).  Descending sorts the complemented
    keys: NaNs first, ties in input order."""
    unsigned = _UNSIGNED[x._buf.dtype.itemsize // 2]
    xbuf = x._buf.view(unsigned)  # (offsets and strides in components: twice the elements')
    loop = _ix().radix_complex_sort_rows
    key = (loop, unsigned)
    call = _k().call_compiled
    sorting = name == "sort_rows"
    no_values = np.empty(0, unsigned)

    def k(target, xo, xr, xa, rows, n):
        if sorting:  # (the order of one row at a time, in a buffer of the kernel's own)
            args = (np.empty(n, np.int64), target.view(unsigned), xbuf)
        else:
            args = (target, no_values, xbuf)
        call(loop, key, (*args, 2 * xo, 2 * xr, 2 * xa, rows, n, descending))

    _sort_rows_by(k, out, x, axis, halves=True)


def _sort_kernel(name: str):
    values = name == "sort_rows"
    fast = _sort_numpy if values else _argsort_numpy
    small_key_min = _SMALL_KEY_SORT_MIN if values else _SMALL_KEY_ARGSORT_MIN
    radix_min = _RADIX_MIN if values else _RADIX_ARGSORT_MIN

    def kernel(out, x, *, axis, descending):
        if x._dtype.kind == "complex floating" and x.size:
            return _complex_sort(name, out, x, axis, descending)
        if x.size:
            b = x._buf.dtype
            n = x._shape[axis]
            if b.itemsize <= 2 and b.kind in "biu" and n >= small_key_min[b.itemsize]:
                return _small_key_sort(name, out, x, axis, descending)
            if n >= radix_min and b.itemsize in _UNSIGNED and b.kind in "fiu":
                if n >= _LONG_SORT and values and x.size // n <= _FEW_ROWS:
                    # a few long rows: radix-sorted halves on two threads, then merged
                    return fast(out, x, axis=axis, descending=descending)
                return _radix_sort(name, out, x, axis, descending)
            return fast(out, x, axis=axis, descending=descending)
        k = getattr(_ix(), name)
        _sort_rows_by(
            lambda target, xo, xr, xa, rows, n: k(target, x._buf, xo, xr, xa, rows, n, descending),
            out, x, axis,
        )  # fmt: skip

    return kernel


def searchsorted_cpu(out, x1, x2, *, right):
    a = _flat_dense(x1)
    v = _flat_dense(x2)
    o = out._buf[out._offset :]
    ix = _ix()
    if v.size >= PARALLEL_THRESHOLD:  # many queries: blocks of them over threads
        ix.searchsorted_p(o, a, v, right)
        return
    counted = a.size <= ix._COUNTED_SORTED
    if (
        v.size * a.size >= _SEARCH_SPLIT_COUNTS
        if counted
        else v.size * a.size.bit_length() >= _SEARCH_SPLIT_STEPS
    ):
        # enough work to pay for starting the threads (~1 us): runs of at least 256 queries,
        # at most one per launched thread (asking numba how many threads run now costs ~1 us;
        # with fewer, a thread takes several runs)
        parts = max(1, min(ix.LAUNCHED_THREADS, v.size // 256))
        run = ix.searchsorted_parts
        _k().call_compiled(run, (run, a.dtype, v.dtype), (o, a, v, right, parts))
        return
    run = ix.searchsorted  # (through its entry: no type dispatch per call)
    _k().call_compiled(run, (run, a.dtype, v.dtype), (o, a, v, right))


# searchsorted splits its queries over threads from this many search steps (queries x log2 of
# the sorted length), or comparisons when it counts (queries x sorted length): about 10 us of
# work on one thread, so that starting the threads (~1 us, more while another library's
# threads hold the cores) pays (1000 queries into 4096 values 12 -> 9.8 us on two threads;
# 500 of them, 5.7 -> 4.7 us, stay on one)
_SEARCH_SPLIT_STEPS = 12000
_SEARCH_SPLIT_COUNTS = 150000


#: isin's table of an integer haystack's range: at most this many entries per element of the
#: haystack and the queries together (NumPy's bound is 6), or _ISIN_TABLE_MIN
_ISIN_TABLE_PER_ELEMENT = 6
_ISIN_TABLE_MIN = 1 << 16


def isin_sorted_cpu(out, x, haystack):
    """out = whether each element of x is among the values of the sorted 1-D haystack (of x's
    dtype): one pass over x, the haystack compared whole when short, looked up in a table of its
    range when it holds integers of a small range, else searched."""
    v = _flat_dense(x)
    a = _flat_dense(haystack)
    o = out._buf[out._offset : out._offset + v.size].view(np.uint8)
    if a.dtype.kind in "iu" and a.size > _ix()._SMALL_SORTED:
        # integers of a small range (as NumPy's "table" kind): a table of the haystack's range
        # and one lookup a query instead of a search (1M int32 queries in 1000 values: 4.9 ->
        # ~0.7 ms, NumPy 2.4; 4096 of them 22 us, 28)
        span = int(a[-1]) - int(a[0]) + 1
        if span <= max(_ISIN_TABLE_PER_ELEMENT * (a.size + v.size), _ISIN_TABLE_MIN):
            parts = _k().thread_parts(v.size) if v.size >= PARALLEL_THRESHOLD else 1
            _ix().isin_table(o.view(np.bool_), a, v, parts)
            return
    if v.size >= PARALLEL_THRESHOLD:
        _ix().isin_sorted_p(o, a, v)
        return
    run = _ix().isin_sorted
    _k().call_compiled(run, (run, a.dtype, v.dtype), (o, a, v))


def mask_offsets_cpu(out, mask, *, strides, offset):
    loop = _ix().mask_offsets
    obuf = out._buf[out._offset :]
    args = (obuf, mask._buf, mask._offset, _int64s(mask._strides), _int64s(mask._shape),
            _int64s(strides), offset)  # fmt: skip
    _k().call_compiled(loop, (loop, obuf.dtype, mask._buf.dtype), args)


def mask_select_cpu(out, x, mask):
    obuf = out._buf[out._offset :]
    shape, st = x._shape, x._strides
    if st == mask._strides and st == _c_strides(shape):
        # x and mask C-contiguous: one flat compaction of buffer slices
        n = _size(shape)
        loop = _ix().mask_select_flat
        args = (obuf, x._buf[x._offset : x._offset + n], mask._buf[mask._offset : mask._offset + n])
        _k().call_compiled(loop, (loop, obuf.dtype, x._buf.dtype), args)
        return
    loop = _ix().mask_select
    args = (obuf, x._buf, x._offset, _int64s(x._strides), mask._buf, mask._offset,
            _int64s(mask._strides), _int64s(mask._shape))  # fmt: skip
    _k().call_compiled(loop, (loop, obuf.dtype, x._buf.dtype, mask._buf.dtype), args)


def mask_fill_cpu(x, mask, *, value):
    """x[mask] = value (a Python scalar that fits x's dtype) for an x and mask of one shape laid
    out alike and densely (the op layer checks): one pass in memory order, over threads when
    large."""
    n = _size(x._shape)
    v = x._buf.dtype.type(value)
    if n >= PARALLEL_THRESHOLD:
        _ix().mask_fill_p(x._buf, x._offset, mask._buf, mask._offset, n, v, _num_threads())
        return
    loop = _ix().mask_fill
    args = (x._buf, x._offset, mask._buf, mask._offset, n, v)
    _k().call_compiled(loop, (loop, x._buf.dtype, mask._buf.dtype), args)


_INT64S: dict = {}


def _int64s(values: tuple) -> np.ndarray:
    """``values`` as a (cached) int64 array: shapes and strides passed to a loop, which only
    reads them (writable, so that the loop's compiled signature stays the one it has)."""
    arr = _INT64S.get(values)
    if arr is None:
        arr = np.asarray(values, dtype=np.int64)
        if len(_INT64S) >= 4096:
            _INT64S.clear()
        _INT64S[values] = arr
    return arr


#: first indices, inverse and order of unique_runs without an argsort (an empty order tells
#: the loop so; int64 and writable like the real ones: one compiled signature serves both)
_NO_INDICES = np.empty(0, np.int64)


#: unsigned integers of each element size: kernels that only move elements read any dtype as
#: these (one compiled loop serves every dtype of a size; 16-byte complex as pairs of 8 bytes)
_MOVED_AS = {1: np.dtype(np.uint8), 2: np.dtype(np.uint16), 4: np.dtype(np.uint32),
             8: np.dtype(np.uint64)}  # fmt: skip


def repeat_counts_cpu(out, x, counts, *, axis):
    """x's elements along ``axis`` each repeated counts[i] times into the C-ordered ``out``
    (``_kern_index.repeat_counted``; x C-ordered, counts dense int64): rows of the elements after
    ``axis`` copied run by run, the elements moved as unsigned integers of their size."""
    size = x._buf.itemsize
    parts = 2 if size == 16 else 1
    as_uint = _MOVED_AS[size // parts]
    outer = _size(x._shape[:axis])
    inner = _size(x._shape[axis + 1 :]) * parts
    loop = _ix().repeat_counted
    args = (out._buf.view(as_uint), x._buf.view(as_uint), x._offset * parts, counts._buf,
            counts._offset, counts._shape[0], outer, inner, out._shape[axis])  # fmt: skip
    _k().call_compiled(loop, (loop, as_uint), args)


def unique_runs_cpu(outs, ordered, order=None):
    """The unique functions' runs of the sorted values in one pass (``_kern_index.unique_runs``;
    without the argsort ``order``, values and counts only)."""
    n = ordered._shape[0]
    if n == 0:
        return
    a = _flat_dense(ordered)
    if order is None:
        values, counts = outs
        first = inverse = o = _NO_INDICES
    else:
        values, first_out, counts, inverse_out = outs
        first, inverse, o = first_out._buf, inverse_out._buf, _flat_dense(order)
    loop = _ix().unique_runs
    args = (values._buf, counts._buf, first, inverse, a, o, n)
    _k().call_compiled(loop, (loop, a.dtype, o.dtype), args)


def nonzero_cpu(out, x):
    dense = _flat_dense(x)  # (bool: the rule casts x)
    if len(x._shape) == 1:  # positions: blocks of 64 without a True element skipped
        run = _ix().nonzero_flat
        args = (out._buf[out._offset :], dense, out._shape[1])
    else:
        run = _ix().nonzero_coords  # (through its entry: no type dispatch per call)
        args = (out._buf[out._offset :], dense, _int64s(x._shape), out._shape[1])
    _k().call_compiled(run, (run, dense.dtype), args)


_SPECIAL = None


def _count_true():
    """count_true's kernel: its loops (acc + (x != 0)) on any input, except for a whole dense
    bool array at the parallel size, read eight bytes at a time (1M elements 71 -> about 27 us
    on one thread; NumPy 48)."""
    general = _reduction("count_true")

    def words(x, n: int) -> int:
        b = x._buf[x._offset : x._offset + n].view(np.uint8)
        head = n - n % 8
        return _ix().count_true_words(b[:head].view(np.uint64), b[head:])

    def by_words(x, axes) -> bool:
        shape = x._shape
        return (
            x._dtype.kind == "bool"
            and _size(shape) >= PARALLEL_THRESHOLD
            and len(axes) == len(shape)
            and _one_block(shape, x._strides)
        )

    def kernel(out, x, *, axes, keepdims):
        if by_words(x, axes):
            out._buf[out._offset] = words(x, _size(x._shape))
            return
        general(out, x, axes=axes, keepdims=keepdims)

    def dense(out_shape, out_dtype, args, params):
        (x,) = args
        if not by_words(x, params["axes"]):
            return general.dense(out_shape, out_dtype, args, params)
        n, np_out, empty = _size(x._shape), out_dtype.numpy, np.empty

        def fn(x):
            buf = empty(1, np_out)
            buf[0] = words(x, n)
            return buf

        return fn

    kernel.dense = dense
    return kernel


def kernel_for(name: str, kind: str):
    """The CPU kernel of the primitive ``name`` of family ``kind`` (None where there is none)."""
    global _SPECIAL
    if _SPECIAL is None:
        _SPECIAL = _special_kernels()
    if name in _SPECIAL:
        return _SPECIAL[name]
    if kind in ("unary", "binary"):
        return _elementwise(name, kind)
    if kind == "reduction":
        return _reduction(name)
    if kind == "scan":
        return _scan(name.removeprefix("cumulative_"))
    return None


matmul_cpu.dense = _matmul_dense


def _special_kernels() -> dict:
    special = {
        "empty": empty_cpu,
        "copy": copy_cpu,
        "to_device": to_device_cpu,
        "export": numpy_view,
        "import_host": import_host,
        "fill": fill_cpu,
        "full": full_cpu,
        "where": where_cpu,
        "clip": clip_cpu,
        "var": var_cpu,
        "matmul": matmul_cpu,
        "arange": arange_cpu,
        "linspace": linspace_cpu,
        "argmax": _argreduce(True),
        "argmin": _argreduce(False),
        "take": take_cpu,
        "normalize_index": normalize_index_cpu,
        "take_along_axis": take_along_axis_cpu,
        "gather": gather_cpu,
        "scatter": scatter_cpu,
        "scatter_add": scatter_add_cpu,
        "sort": _sort_kernel("sort_rows"),
        "argsort": _sort_kernel("argsort_rows"),
        "searchsorted": searchsorted_cpu,
        "isin_sorted": isin_sorted_cpu,
        "nonzero": nonzero_cpu,
        "mask_offsets": mask_offsets_cpu,
        "mask_select": mask_select_cpu,
        "mask_fill": mask_fill_cpu,
        "dot": dot_cpu,
        "cross": cross_cpu,
        "triangle": triangle_cpu,
        "unique_runs": unique_runs_cpu,
        "repeat_counts": repeat_counts_cpu,
        "count_true": _count_true(),
    }
    from ._fft import KERNELS as fft_kernels

    special.update(fft_kernels)
    special.update(_linalg.KERNELS)  # LAPACK-backed linalg primitives
    from ._nn_conv import KERNELS as nn_conv_kernels

    special.update(nn_conv_kernels)  # convolution and pooling (strided.nn)
    return special
