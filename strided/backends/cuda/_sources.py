"""Kernel sources and every instantiation the backend can request.

A *module* is ``(source, name_expressions)``: the CUDA C text (the prelude, the functors it needs
and a kernel file from ``kernels/``) and the template instantiations the backend may launch from
it.  The GPU runtime compiles the instantiations it is asked for; the host runtime builds a whole
module at once; the compile gate (``tests/test_cuda_gate.py``) compiles every module of
:func:`all_modules` with NVRTC for sm_90.
"""

from __future__ import annotations

import functools
from pathlib import Path

from . import _ops

_KERNELS = Path(__file__).with_name("kernels")

#: strided dtype name -> the C type name the kernels use (typedefs in prelude.cuh)
CTYPE = {
    "bool": "b1", "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64", "uint8": "u8",
    "uint16": "u16", "uint32": "u32", "uint64": "u64", "float32": "f32", "float64": "f64",
    "complex64": "c64", "complex128": "c128",
}  # fmt: skip
ALL = tuple(CTYPE)
INDEX = ("i32", "i64")  # 32-bit index math where a launch's indices fit, 64-bit otherwise


def wide_index(name: str) -> bool:
    """Whether ``name`` is the 64-bit-index twin of a map or ``where`` kernel (the only kernels
    with an index-type parameter, always the last one); its 32-bit twin is in the same module."""
    return name.startswith(("map", "where_3d<")) and name.endswith(f", {INDEX[1]}>")


#: bool and integers summed/multiplied in the default integers without a widened copy
_WIDENING = [("int64", d) for d in ("bool", "int8", "int16", "int32")]
_WIDENING += [("uint64", d) for d in ("uint8", "uint16", "uint32")]

REDUCTIONS = {
    # name -> [(accumulator/output dtype, input dtype)]: sum/prod/max/min compute in the output
    # dtype (the dispatcher casts), any/all read any dtype into a bool
    "sum": [(d, d) for d in _ops.NUMERIC] + _WIDENING,
    "prod": [(d, d) for d in _ops.NUMERIC] + _WIDENING,
    "max": [(d, d) for d in _ops.REAL],
    "min": [(d, d) for d in _ops.REAL],
    "any": [("bool", d) for d in ALL],
    "all": [("bool", d) for d in ALL],
}


@functools.cache
def read(name: str) -> str:
    return (_KERNELS / name).read_text()


def _source(*parts: str) -> str:
    return "\n".join([read("prelude.cuh"), *parts])


@functools.cache
def elementwise(op: str) -> tuple[str, tuple[str, ...]]:
    """The module of elementwise ``op``: its functor and the map kernels, every compute dtype."""
    arity, computes, _ = _ops.OPS[op]
    names = []
    for c in computes:
        o = _ops.output_dtype(op, c)
        for shape in ("1d", "3d"):
            for ix in INDEX:
                names.append(f"map{arity}_{shape}<op_{op}, {CTYPE[o]}, {CTYPE[c]}, {ix}>")
    return _source(_ops.functor(op), read("elementwise.cu")), tuple(names)


def map_name(op: str, arity: int, shape: str, out: str, compute: str, ix: str) -> str:
    return f"map{arity}_{shape}<op_{op}, {CTYPE[out]}, {CTYPE[compute]}, {ix}>"


@functools.cache
def copy(out: str) -> tuple[str, tuple[str, ...]]:
    """The cast/copy module writing dtype ``out`` (from every dtype): copy, astype, fill."""
    names = tuple(
        f"map1_{shape}<op_cast, {CTYPE[out]}, {CTYPE[src]}, {ix}>"
        for src in ALL
        for shape in ("1d", "3d")
        for ix in INDEX
    )
    return _source(_ops.CAST, read("elementwise.cu")), names


@functools.cache
def where() -> tuple[str, tuple[str, ...]]:
    names = tuple(f"where_3d<{CTYPE[d]}, {ix}>" for d in ALL for ix in INDEX)
    return _source(read("elementwise.cu")), names


@functools.cache
def reduction(op: str) -> tuple[str, tuple[str, ...]]:
    names = tuple(
        f"{kern}<red_{op}, {CTYPE[a]}, {CTYPE[t]}>"
        for a, t in REDUCTIONS[op]
        for kern in ("reduce_rows", "reduce_all")
    )
    return _source(read("reduce.cu")), names


@functools.cache
def scan(op: str) -> tuple[str, tuple[str, ...]]:
    """cumulative_sum / cumulative_prod (``op`` is sum or prod) in every numeric dtype."""
    names = tuple(f"scan_rows<red_{op}, {CTYPE[d]}>" for d in _ops.NUMERIC)
    return _source(read("reduce.cu"), read("scan.cu")), names


@functools.cache
def argreduce() -> tuple[str, tuple[str, ...]]:
    names = tuple(
        f"{k}<{'true' if m else 'false'}, {CTYPE[d]}>"
        for k in ("argreduce_rows", "argreduce_chunks", "argreduce_candidates")
        for m in (True, False)
        for d in _ops.REAL
    )
    return _source(read("reduce.cu"), read("scan.cu")), names


#: dtypes scatter_add accumulates atomically (CUDA has 32/64-bit integer and float atomics)
SCATTER_ADD = ("int32", "int64", "uint32", "uint64") + _ops.FLOAT


@functools.cache
def index() -> tuple[str, tuple[str, ...]]:
    names = ["normalize_index", "nonzero_coords", "mask_offsets"]
    for kern in ("take3", "gather_blocks", "scatter_blocks"):
        names += [f"{kern}<{CTYPE[d]}>" for d in ALL]
    names += [f"scatter_add_blocks<{CTYPE[d]}>" for d in SCATTER_ADD]
    names += [f"take_rows<{CTYPE[d]}>" for d in ALL]
    names += [f"searchsorted<{CTYPE[d]}>" for d in _ops.REAL]
    return _source(read("index.cu")), tuple(names)


@functools.cache
def matmul() -> tuple[str, tuple[str, ...]]:
    return _source(read("matmul.cu")), tuple(f"matmul_tiled<{CTYPE[d]}>" for d in ALL)


@functools.cache
def sort() -> tuple[str, tuple[str, ...]]:
    names = [f"rank_sort<{CTYPE[d]}, {a}>" for d in ALL for a in ("false", "true")]
    names += [f"merge_pass<{CTYPE[d]}>" for d in ALL] + ["iota_rows"]
    return _source(read("sort.cu")), tuple(names)


#: the dtypes of the convolution and pooling kernels (strided.nn's real floating dtypes)
NN = _ops.REAL_FLOAT


@functools.cache
def nn() -> tuple[str, tuple[str, ...]]:
    kernels = ("im2col", "col2im", "max_pool", "max_pool_backward", "avg_pool",
               "avg_pool_backward")  # fmt: skip
    names = tuple(f"{k}<{CTYPE[d]}>" for k in kernels for d in NN)
    return _source(read("nn.cu")), names


ARANGE = _ops.REAL
LINSPACE = _ops.FLOAT


@functools.cache
def creation() -> tuple[str, tuple[str, ...]]:
    names = [f"arange<{CTYPE[o]}, {c}>" for o in ARANGE for c in ("i64", "f64")]
    names += [f"linspace<{CTYPE[o]}, {'c128' if o in _ops.COMPLEX else 'f64'}>" for o in LINSPACE]
    return _source(read("creation.cu")), tuple(names)


def all_modules() -> dict[str, tuple[str, tuple[str, ...]]]:
    """Every module the backend can build, by a readable key."""
    mods = {f"elementwise:{op}": elementwise(op) for op in _ops.OPS}
    mods.update({f"copy:{d}": copy(d) for d in ALL})
    mods["where"] = where()
    mods.update({f"reduce:{op}": reduction(op) for op in REDUCTIONS})
    mods["creation"] = creation()
    mods.update({f"scan:{op}": scan(op) for op in ("sum", "prod")})
    mods["argreduce"] = argreduce()
    mods["index"] = index()
    mods["matmul"] = matmul()
    mods["sort"] = sort()
    mods["nn"] = nn()
    return mods
