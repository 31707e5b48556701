"""Buffer-level CPU kernels: layout planning in Python, loops in numba.

An *operand* is ``(buf, offset, strides)``: a 1-D NumPy buffer, the element offset of index 0, and
strides in elements (0 for broadcast dimensions, negative for reversed ones).  Every function here
works on any layout; the layout is first simplified (``strided._layout``) so that the compiled
loops have a fixed rank and a unit-stride inner loop wherever the data allows.

Small problems run a serial loop (no threading overhead); large ones a ``prange`` loop over row
segments.  Inputs arrive already cast to one dtype (the dispatcher casts first), so each loop
compiles once per dtype.
"""

from __future__ import annotations

import numpy as np
from numba import config, get_num_threads

from ..._layout import dense_order, simplify, split_outer
from . import _generated_kernels as G
from . import _vmath as V
from ._kern_matmul import matmul_blas, matmul_int, matmul_rows, matmul_rows_p

__all__ = ["elementwise", "where", "copy", "fill", "reduce", "cumulative", "matmul", "argreduce"]

#: argmax/argmin over rows (generated: it inlines _vmath's vectorised row reductions)
argreduce = G.argreduce

#: below this many elements a serial loop beats starting threads (measured: prange costs 2-4 us)
PARALLEL_THRESHOLD = 1 << 16
#: elements per parallel task: large enough to amortise scheduling, small enough to balance
SEGMENT = 1 << 14


def thread_parts(n: int) -> int:
    """Chunks of a parallel loop over ``n`` elements: one per SEGMENT, at most one per thread
    numba launched, at least one."""
    return max(1, min(config.NUMBA_NUM_THREADS, n // SEGMENT))


_LOOPS: dict = {}  # op name -> (serial loop, parallel loop or None)


def _loops(name: str):
    """The serial and parallel map loops of op ``name`` (the pair stored in one step: threads
    making their first call of an op at once each see both or neither)."""
    loops = _LOOPS.get(name)
    if loops is None:
        loops = _LOOPS[name] = (getattr(G, f"{name}_s"), getattr(G, f"{name}_p", None))
    return loops


def _size(shape) -> int:
    n = 1
    for s in shape:
        n *= s
    return n


_DENSE: dict[tuple, tuple] = {}


def _dense_strides(shape) -> tuple[tuple, tuple]:
    """(C-contiguous strides, all-zero strides) of ``shape``, cached: the per-call fast path."""
    r = _DENSE.get(shape)
    if r is None:
        st, acc = [], 1
        for n in reversed(shape):
            st.append(acc)
            acc *= n
        r = (tuple(reversed(st)), (0,) * len(shape))
        if len(_DENSE) < 4096:
            _DENSE[shape] = r
    return r


#: (loop, operand dtypes...) -> the compiled loop's entry point: calling it skips the numba
#: dispatcher's typing of 13-21 arguments (~1 us of a small strided op's ~3-5)
_ENTRIES: dict = {}


def compiled_entry(loop, args):
    """The compiled entry point of the numba dispatcher ``loop`` for the types of ``args``
    (compiled, or loaded from the disk cache, now; nothing is run)."""
    return loop.compile(tuple(loop.typeof_pyval(a) for a in args))


def call_compiled(loop, key, args):
    """``loop(*args)`` through the entry point remembered under ``key`` (the loop and its array
    operands' dtypes); the first call of a key finds it (:func:`compiled_entry`)."""
    entry = _ENTRIES.get(key)
    if entry is None:
        entry = _ENTRIES[key] = compiled_entry(loop, args)
    return entry(*args)


def _run_map(name: str, operands, shape) -> None:
    """Run the rank-3 map kernel ``name`` over operands (output first) of a common ``shape``."""
    serial, parallel = _loops(name)
    # fast path for small problems whose operands are each dense or a broadcast scalar: one flat
    # loop, no layout planning (this is most of the per-call cost of small ops)
    dense, zeros = _dense_strides(shape)
    total = 1
    for n in shape:
        total *= n
    if total < PARALLEL_THRESHOLD and total:
        args = []
        for buf, off, st in operands:
            if st == dense:
                args += (buf, off, 0, 0, 1)
            elif st == zeros:
                args += (buf, off, 0, 0, 0)
            else:
                break
        else:
            serial(*args, 1, 1, total)
            return
    plan = _map_plan(shape, tuple([op[2] for op in operands]))
    small = total < PARALLEL_THRESHOLD or parallel is None
    if name == "copy" and len(plan) == 1 and _repeat_copy(operands, plan[0], small):
        return
    if len(operands) == 3 and small and plan:
        os, a_st, b_st = plan[0][4]
        if os[2] == 1 and plan[0][3] > 1 and {a_st[2], b_st[2]} == {0, 1}:
            # an operand constant along the inner loop: its own serial kernel, where there is one
            serial = getattr(G, f"{name}_sb", serial)
    if len(plan) == 1 and len(operands) == 2 and small:  # a copy or cast: the common case
        (d0, d1), n0, n1, n2, (s0, s1) = plan[0]
        (b0, o0, _), (b1, o1, _) = operands
        args = (b0, o0 + d0, s0[0], s0[1], s0[2], b1, o1 + d1, s1[0], s1[1], s1[2], n0, n1, n2)
        call_compiled(serial, (serial, b0.dtype, b1.dtype), args)
        return
    loop = serial if small else parallel
    key = (loop, *[op[0].dtype for op in operands])
    for deltas, n0, n1, n2, strides in plan:
        args = []
        for (buf, off, _), d, st in zip(operands, deltas, strides):
            args += (buf, off + d, st[0], st[1], st[2])
        args += (n0, n1, n2)
        if not small:  # (the parallel loop too through its entry point: ~4 us less per call)
            args.append(n2 if n0 * n1 >= 64 else SEGMENT)
        call_compiled(loop, key, tuple(args))


def _repeat_copy(operands, entry, small: bool) -> bool:
    """Run a copy whose plan ``entry`` has the input broadcast along the output's unit-stride
    middle dimension of at most SHORT_INNER elements (repeat(x, 4), a column broadcast to
    (N, 3)) through the repeat kernels, which write each output run in memory order; False (and
    nothing done) for another layout or a cast."""
    (d0, d1), n0, r, n2, ((os0, os1, os2), (as0, as1, as2)) = entry
    (ob, oo, _), (ab, ao, _) = operands
    if os1 != 1 or as1 != 0 or r > SHORT_INNER or ob.dtype != ab.dtype:
        return False
    from . import _kern_index as ix  # (on first use: ~23 ms of import kept off a first add)

    args = [ob, oo + d0, os0, os2, ab, ao + d1, as0, as2, n0, r, n2]
    if small:
        call_compiled(ix.repeat_runs, (ix.repeat_runs, ob.dtype), tuple(args))
    else:
        args.append(thread_parts(n2))
        call_compiled(ix.repeat_runs_p, (ix.repeat_runs_p, ob.dtype), tuple(args))
    return True


_PLANS: dict = {}
_PLANS_MAX = 4096


#: an inner loop this short runs the middle dimension innermost instead (when that one is
#: long): each inner loop's set-up costs more than its few elements (a (N, 3) array plus a row,
#: repeat(x, 4)'s copy of a broadcast)
SHORT_INNER = 4


def _long_inner(offs, n0, n1, n2, strides):
    """A plan entry with its two inner loops swapped where the innermost is short and the middle
    one long (a map writes each output element once, so the order is free)."""
    if n2 <= SHORT_INNER and n1 >= 16 * n2:
        return offs, n0, n2, n1, tuple((s0, s2, s1) for s0, s1, s2 in strides)
    return offs, n0, n1, n2, strides


def _map_plan(shape: tuple, strides_list: tuple) -> tuple:
    """The rank-3 kernel calls covering ``shape`` with these operand strides: a tuple of
    (offset of each operand relative to its own, n0, n1, n2, inner strides of each operand).
    Offsets only add to a layout's plan, so one plan serves every call with these shapes and
    strides: a loop broadcasting a column pays the layout planning (several microseconds in
    Python) once."""
    key = (shape, strides_list)
    plan = _PLANS.get(key)
    if plan is not None:
        return plan
    sshape, sstrides, deltas = simplify(shape, list(strides_list), [0] * len(strides_list))
    if sshape is None:
        plan = ()
    else:
        plan = tuple(
            _long_inner(tuple(offs), n0, n1, n2, tuple(strides))
            for offs, (n0, n1, n2), strides in split_outer(sshape, sstrides, deltas, 3)
        )
    if len(plan) <= 64:  # a layout needing more blocks than that is rare and costs its loop
        if len(_PLANS) >= _PLANS_MAX:
            _PLANS.clear()
        _PLANS[key] = plan
    return plan


def elementwise(op: str, out, inputs, shape) -> None:
    """out[i] = op(*inputs[i]) for every index i of ``shape`` (inputs share one dtype)."""
    _run_map(op, [out, *inputs], shape)


def where(out, cond, x1, x2, shape) -> None:
    """out[i] = x1[i] if cond[i] else x2[i]."""
    _run_map("where", [out, cond, x1, x2], shape)


def copy(out, inp, shape) -> None:
    """Strided copy with a cast to out's dtype (any of the 13 dtypes to any)."""
    _run_map("copy", [out, inp], shape)


def fill_run(buf, off: int, n: int, step: int, value) -> None:
    """buf[off + i * step] = value for i < n (a short run, any step): ndarray.fill on the whole
    buffer (4096 float32: 0.45 us) or on a (stepped) slice view of it, in either direction
    (faster than slice assignment's 0.77 us)."""
    if not n:
        return  # (a slice's stop would be negative: counted from the end)
    if step == 1 and off == 0 and buf.shape[0] == n:
        buf.fill(value)
    elif step:
        lo = off if step > 0 else off + step * (n - 1)
        buf[lo : lo + abs(step) * (n - 1) + 1 : abs(step)].fill(value)
    else:
        buf[off] = value


def fill(out, shape, value) -> None:
    """Write the scalar ``value`` into every element of the (possibly strided) ``out``."""
    buf, off, strides = out
    dense, zeros = _dense_strides(shape)
    if strides == dense and _size(shape) < PARALLEL_THRESHOLD:
        # a serial dense run (zeros((64, 64))): one flat run
        fill_run(buf, off, _size(shape), 1, value)
        return
    if len(shape) == 1 and shape[0] < PARALLEL_THRESHOLD:
        # one strided run (eye's diagonal, x[::2] = 0)
        fill_run(buf, off, shape[0], strides[0], value)
        return
    src = np.full(1, value, dtype=buf.dtype)
    if strides == dense or dense_order(shape, strides) is not None:
        # one flat run (C order, or dense in another axis order: a transposed result, whose
        # elements fill the same block of memory from its offset): the copy loop's entry
        # point called directly, without _run_map's layout planning (1M bools: 12.8 -> 10.5
        # us, transposed 13.4 -> ~10.5; NumPy 11.4)
        total = _size(shape)
        serial, parallel = _loops("copy")
        if total >= PARALLEL_THRESHOLD:
            args = (buf, off, 0, 0, 1, src, 0, 0, 0, 0, 1, 1, total, SEGMENT)
            call_compiled(parallel, (parallel, buf.dtype, src.dtype), args)
            return
        if total:  # (a small run dense in another order)
            args = (buf, off, 0, 0, 1, src, 0, 0, 0, 0, 1, 1, total)
            call_compiled(serial, (serial, buf.dtype, src.dtype), args)
        return
    _run_map("copy", [out, (src, 0, zeros)], shape)


_IDENTITY = {"sum": 0, "prod": 1, "max": 0, "min": 0, "any": False, "all": True, "count_true": 0}


def reduce(op: str, out, inp, shape, axes) -> None:
    """Reduce ``inp`` (of ``shape``) over ``axes`` into ``out`` (strides over the kept axes)."""
    buf, off, strides = inp
    obuf, ooff, ostrides = out
    ident = obuf.dtype.type(_IDENTITY[op])
    plan = _reduce_plan(op, shape, ostrides, strides, axes)
    kind = plan[0]
    if kind == "calls":
        _, serial, parallel, calls = plan
        for k_oo, r_ao, ok0, ok1, ak0, ak1, rk0, rk1, nk0, nk1, nr0, nr1, first, how in calls:
            args = (obuf, ooff + k_oo, ok0, ok1, buf, off + r_ao, ak0, ak1, rk0, rk1,
                    nk0, nk1, nr0, nr1, first, ident)  # fmt: skip
            if how == 0:
                call_compiled(serial, (serial, obuf.dtype, buf.dtype), args)
            else:  # inner_p, or outer_p with its chunk
                key = (parallel, obuf.dtype, buf.dtype)
                call_compiled(parallel, key, args if how == 1 else (*args, how))
    elif kind == "all":
        _, doo, dbase, n, stride = plan
        _reduce_all_parallel(op, obuf, ooff + doo, buf, off + dbase, n, stride, ident)
    elif kind == "rows":
        _, doo, ost, dbase, kst, rst, nk, nr = plan
        _reduce_rows_parallel(op, obuf, ooff + doo, ost, buf, off + dbase, kst, rst, nk, nr, ident)
    elif kind == "narrow":
        _, doo, ost, dbase, nk, nr, per_task = plan
        args = (obuf, ooff + doo, ost, buf, off + dbase, nk, nr, True, ident)
        if per_task:
            loop = getattr(G, f"{op}_narrow_p")
            call_compiled(loop, (loop, obuf.dtype, buf.dtype), (*args, per_task))
        else:
            loop = getattr(G, f"{op}_narrow_s")
            call_compiled(loop, (loop, obuf.dtype, buf.dtype), args)
    elif kind == "fill":  # reducing zero elements: the identity everywhere
        fill(out, plan[1], ident)


_REDUCE_PLANS: dict = {}


def _reduce_plan(op: str, shape, ostrides, strides, axes) -> tuple:
    """How to run a reduction of this layout: ("calls", serial, parallel, calls) where each call
    holds offsets relative to the output's and the input's own, ("all", ...) for one long run,
    ("fill", kept shape) or ("none",).  Cached like the elementwise plans: offsets only add."""
    key = (op, shape, ostrides, strides, axes)
    plan = _REDUCE_PLANS.get(key)
    if plan is not None:
        return plan
    kept = [d for d in range(len(shape)) if d not in axes]
    kshape = tuple(shape[d] for d in kept)
    if 0 in kshape:
        plan = ("none",)
    else:
        plan = _plan_reduction(op, shape, ostrides, strides, axes, kept, kshape)
    if plan[0] != "calls" or len(plan[3]) <= 64:
        if len(_REDUCE_PLANS) >= _PLANS_MAX:
            _REDUCE_PLANS.clear()
        _REDUCE_PLANS[key] = plan
    return plan


def _plan_reduction(op, shape, ostrides, strides, axes, kept, kshape) -> tuple:
    # the reduced axes in memory order (the largest stride outermost): which element is combined
    # first does not matter to the result's meaning, and a transposed dense block then merges
    # into one run, as NumPy reduces in memory order too
    axes = sorted(axes, key=lambda d: -abs(strides[d]))
    rshape = tuple(shape[d] for d in axes)
    kshape_s, (ost, kst), (oo, ko) = simplify(
        kshape, [ostrides, tuple(strides[d] for d in kept)], [0, 0]
    )
    rshape_s, (rst,), (ro,) = simplify(rshape, [tuple(strides[d] for d in axes)], [0])
    if rshape_s is None:
        return ("fill", kshape)
    base = ko + ro
    if not rshape_s:
        rshape_s, rst = (1,), (0,)
    if not kshape_s:
        kshape_s, ost, kst = (1,), (0,), (0,)
    total = _size(kshape_s) * _size(rshape_s)
    if (
        len(kshape_s) == 1
        and kshape_s[0] == 1
        and len(rshape_s) == 1
        and total >= 4 * PARALLEL_THRESHOLD
    ):
        return ("all", oo, base, rshape_s[0], rst[0])
    if (
        op in G.NARROW_REDUCE
        and len(kshape_s) == 1
        and len(rshape_s) == 1
        and 1 < kshape_s[0] < NARROW_COLUMNS
        and kst[0] == 1
        and rst[0] == kshape_s[0]
        and rshape_s[0] >= 2 * (G.NARROW_CHUNK // kshape_s[0])
    ):
        # a dense block of few columns: one long run in chunks (the generated narrow loops),
        # over threads in tasks of a fixed number of chunks from the parallel size
        width = kshape_s[0] * max(1, G.NARROW_CHUNK // kshape_s[0])
        per_task = max(1, SEGMENT // width) if total >= PARALLEL_THRESHOLD else 0
        return ("narrow", oo, ost[0], base, kshape_s[0], rshape_s[0], per_task)
    inner = _size(kshape_s) == 1 or abs(rst[-1]) <= abs(kst[-1])
    mode = "inner" if inner else "outer"
    if inner and reads_span(rst[-1], rshape_s[-1]):
        mode = "span"
    if (
        not inner
        and len(kshape_s) == 1
        and len(rshape_s) == 1
        and kshape_s[0] < 2 * 1024
        and rshape_s[0] >= 8 * _ROW_PARTS
        and total >= 4 * PARALLEL_THRESHOLD
    ):
        return ("rows", oo, ost[0], base, kst[0], rst[0], kshape_s[0], rshape_s[0])
    serial = getattr(G, f"{op}_{mode}_s")
    parallel = getattr(G, f"{op}_{mode}_p")
    calls = []
    big = total >= PARALLEL_THRESHOLD
    for (k_oo, k_ao), (nk0, nk1), (ok, ak) in split_outer(kshape_s, [ost, kst], [oo, base], 2):
        first = True
        for (r_ao,), (nr0, nr1), (rk,) in split_outer(rshape_s, [rst], [k_ao], 2):
            if big and mode != "outer" and nk0 * nk1 >= 2:
                how = 1
            elif big and mode == "outer" and nk1 >= 2 * 1024:
                how = max(1024, -(-nk1 // 8))  # the parallel kernel's chunk
            else:
                how = 0
            calls.append((k_oo, r_ao, ok[0], ok[1], ak[0], ak[1], rk[0], rk[1], nk0, nk1, nr0,
                          nr1, first, how))  # fmt: skip
            first = False
    return ("calls", serial, parallel, tuple(calls))


def reads_span(step: int, n: int) -> bool:
    """Whether a reduction's (or argmax's) run of ``n`` elements ``step`` apart reads its whole
    span (the generated "span" loops: a scattered run does not vectorise, 1M float32 at step 2
    summed in 520 us on one thread against the span's 178) rather than element by element."""
    return 1 < step <= V.SPAN_STEP and n >= V.SPAN_MIN


#: reductions of a dense block narrower than this many columns over its rows run the generated
#: narrow loops (1M float64 in 333,334 rows of 3: ~1.3 ms by rows of three, NumPy 4.5)
NARROW_COLUMNS = 32

#: the reduction that combines an op's partial results, where it is not the op itself (partial
#: counts add up): the generator's table, which its narrow loops merge by too
_MERGE = G.MERGE

#: the fixed number of row blocks of a "rows" reduction (a fixed split: the same bits whatever
#: the thread count)
_ROW_PARTS = 4


def _reduce_rows_parallel(op, obuf, oo, ost, buf, base, kst, rst, nk, nr, ident):
    """A few columns (fewer than 2048) reduced over many rows, as axis 0 of a C array or a
    transpose along its last axis: the rows in ``_ROW_PARTS`` blocks, one partial row per block
    among the threads (each streams whole rows; splitting the columns instead cut every row into
    short strided pieces and ran no faster than one thread), then the partials and the rows left
    over combined in order."""
    parts = _ROW_PARTS
    chunk = nr // parts
    partial = np.empty(parts * nk, dtype=obuf.dtype)
    outer_p, outer_s = getattr(G, f"{op}_outer_p"), getattr(G, f"{op}_outer_s")
    merge_s = getattr(G, f"{_MERGE.get(op, op)}_outer_s")
    # every loop through its compiled entry (the dispatcher typed their 16-17 arguments)
    call_compiled(outer_p, (outer_p, obuf.dtype, buf.dtype),
                  (partial, 0, nk, 1, buf, base, chunk * rst, kst, 0, rst, parts, nk, 1, chunk,
                   True, ident, nk))  # fmt: skip
    call_compiled(
        merge_s,
        (merge_s, obuf.dtype, obuf.dtype),
        (obuf, oo, 0, ost, partial, 0, 0, 1, 0, nk, 1, nk, 1, parts, True, ident),
    )
    tail = nr - parts * chunk
    if tail:
        call_compiled(outer_s, (outer_s, obuf.dtype, buf.dtype),
                      (obuf, oo, 0, ost, buf, base + parts * chunk * rst, 0, kst, 0, rst, 1, nk,
                       1, tail, False, ident))  # fmt: skip


def _reduce_all_parallel(op, obuf, oo, buf, base, n, stride, ident):
    """A full reduction of one long run: per-thread partials, then a short final reduction.
    any/all look at a serial prefix first (random data is decided within it, without starting
    the threads); every loop is called through its compiled entry (16 arguments typed by the
    dispatcher were ~2 us a call)."""
    mode = "span" if reads_span(stride, n) else "inner"
    inner_p, inner_s = getattr(G, f"{op}_{mode}_p"), getattr(G, f"{op}_{mode}_s")
    s_key = (inner_s, obuf.dtype, buf.dtype)
    if op in ("any", "all"):
        # up to a few MB all of it on one thread, which reads them from cache faster than two
        # start (1M bool, every element read: 32 -> 16 us; NumPy 26); beyond, a prefix first
        whole = n * buf.itemsize <= _ANY_ALL_SERIAL_BYTES
        first = n if whole else _EXIT_PREFIX
        args = (obuf, oo, 0, 0, buf, base, 0, 0, 0, stride, 1, 1, 1, first, True, ident)
        call_compiled(inner_s, s_key, args)
        if whole or obuf[oo] != ident:  # done, or a True for any / a False for all: decided
            return
        base += _EXIT_PREFIX * stride
        n -= _EXIT_PREFIX
    parts = 64
    chunk = n // parts
    partial = np.empty(parts, dtype=obuf.dtype)
    args = (partial, 0, 0, 1, buf, base, 0, chunk * stride, 0, stride, 1, parts, 1, chunk, True,
            ident)  # fmt: skip
    call_compiled(inner_p, (inner_p, partial.dtype, buf.dtype), args)
    merge_s = getattr(G, f"{_MERGE.get(op, op)}_inner_s")
    args = (obuf, oo, 0, 0, partial, 0, 0, 0, 0, 1, 1, 1, 1, parts, True, ident)
    call_compiled(merge_s, (merge_s, obuf.dtype, partial.dtype), args)
    tail = n - parts * chunk
    if tail:
        args = (obuf, oo, 0, 0, buf, base + parts * chunk * stride, 0, 0, 0, stride, 1, 1, 1,
                tail, False, ident)  # fmt: skip
        call_compiled(inner_s, s_key, args)


#: elements any/all reduce on one thread before starting the others
_EXIT_PREFIX = 8192
#: any/all of at most this many bytes run on one thread (measured crossover: 2-4 MB)
_ANY_ALL_SERIAL_BYTES = 2 << 20


def cumulative(op: str, out, inp, shape, axis: int) -> None:
    """Inclusive cumulative sum/product along ``axis`` (out and inp have ``shape``)."""
    if 0 in shape:
        return
    kernel = getattr(G, f"cumulative_{op}_s")
    obuf, ooff, ostr = out
    ibuf, ioff, istr = inp
    osa, isa, n = ostr[axis], istr[axis], shape[axis]
    key = (kernel, obuf.dtype, ibuf.dtype)
    for o_d, i_d, os0, os1, is0, is1, n0, n1 in _scan_plan(shape, ostr, istr, axis):
        if osa == 1 and isa == 1 and n0 * n1 >= 8 and n0 * n1 * n >= PARALLEL_THRESHOLD:
            # dense runs, many and large: rows split among the threads (each row is scanned
            # by one thread, in order: the bits do not depend on the thread count)
            seg = -(-max(SEGMENT // n, 1) // 4) * 4  # rows a task: a multiple of four
            loop = getattr(G, f"cumulative_{op}_p")
            args = (obuf, ooff + o_d, os0, os1, ibuf, ioff + i_d, is0, is1, n0, n1, n, seg)
            call_compiled(loop, (loop, obuf.dtype, ibuf.dtype), args)
            continue
        args = (obuf, ooff + o_d, os0, os1, osa, ibuf, ioff + i_d, is0, is1, isa, n0, n1, n)
        call_compiled(kernel, key, args)


_SCAN_PLANS: dict = {}


def _scan_plan(shape, ostrides, istrides, axis) -> tuple:
    """The kernel calls of a scan over this layout: (output and input offsets relative to their
    own, strides and counts of the two outer loops); cached, as offsets only add."""
    key = (shape, ostrides, istrides, axis)
    plan = _SCAN_PLANS.get(key)
    if plan is None:
        others = [d for d in range(len(shape)) if d != axis]
        oshape, (ost, ist), (oo, io) = simplify(
            tuple(shape[d] for d in others),
            [tuple(ostrides[d] for d in others), tuple(istrides[d] for d in others)],
            [0, 0],
        )
        plan = tuple(
            (o_off, i_off, os_[0], os_[1], is_[0], is_[1], n0, n1)
            for (o_off, i_off), (n0, n1), (os_, is_) in split_outer(oshape, [ost, ist], [oo, io], 2)
        )
        if len(_SCAN_PLANS) >= _PLANS_MAX:
            _SCAN_PLANS.clear()
        _SCAN_PLANS[key] = plan
    return plan


_BATCH_OFFSETS: dict = {}


def _batch_offsets(batch_shape, strides_list, offsets):
    """Per-batch element offsets of each operand: the batches' offsets from each operand's
    first element (NumPy index arithmetic, remembered per batch shape and strides: 10 4 x 4
    products 17 -> ~7 us), plus its offset.  (The kernels only read them.)"""
    if not batch_shape:
        return [np.array([o], dtype=np.int64) for o in offsets]
    key = (batch_shape, tuple(strides_list))
    rel = _BATCH_OFFSETS.get(key)
    if rel is None:
        idx = np.indices(batch_shape).reshape(len(batch_shape), -1)
        rel = [(np.asarray(st, dtype=np.int64)[:, None] * idx).sum(axis=0) for st in strides_list]
        if len(_BATCH_OFFSETS) >= 256:
            _BATCH_OFFSETS.clear()
        _BATCH_OFFSETS[key] = rel
    return [r + o if o else r for r, o in zip(rel, offsets)]


#: the largest m * k * n of a batch's product that :func:`matmul_rows` computes when there are
#: several batches: from here a BLAS call per batch is faster (20000 products of 6 x 6 float64:
#: 1.7 ms by rows, 2.3 by BLAS calls; of 8 x 8, 7.2 against 2.8; NumPy 0.7 and 1.1)
SMALL_MATMUL_ROWS = 200


def matmul(out, a, b, batch_shape, m, k, n) -> None:
    """out = a @ b over broadcast batches: floats and complex on BLAS, integers on our kernel,
    small products of several batches and integer matrix-vector products as dot products
    (:func:`_kern_matmul.matmul_rows`)."""
    nb = len(batch_shape)
    oo, ao, bo = _batch_offsets(
        batch_shape, [out[2][:nb], a[2][:nb], b[2][:nb]], [out[1], a[1], b[1]]
    )
    asm, ask = a[2][nb:]
    bsk, bsn = b[2][nb:]
    osm, osn = out[2][nb:]
    args = (out[0], oo, osm, osn, a[0], ao, asm, ask, b[0], bo, bsk, bsn, m, k, n)
    floating = out[0].dtype.kind in "fc"
    if m * k * n <= SMALL_MATMUL_ROWS and oo.shape[0] > 1 or not floating and n == 1:
        # dot products in registers: small batched matrices (20000 3 x 3 float64 2.2 ms ->
        # 0.36, NumPy 0.61; 4 x 4 2.2 -> 0.65, NumPy 0.63) and integer matrix-vector products
        # (matmul_int's row updates would write each output element k times)
        rows = oo.shape[0] * m
        if rows * k * n >= PARALLEL_THRESHOLD and rows > 1:
            matmul_rows_p(*args, 2 * get_num_threads())
        else:  # (through the entry point: the dispatcher types 17 arguments in ~2 us)
            call_compiled(matmul_rows, (matmul_rows, out[0].dtype, a[0].dtype), args + (0, rows))
    elif floating:
        matmul_blas(*args)
    else:
        matmul_int(*args)
