"""Every op of the namespace against NumPy (and PyTorch when installed), measured in one process.

Cases: every elementwise function (unary, binary, binary with a Python scalar), every reduction
and scan, ``where``, ``clip``, ``astype``, ``sort``, ``take``, integer/boolean/slice indexing and
``concat``, in float32 and float64 (and int32 or bool where the op applies), at 4096 and 1,000,000
elements, on contiguous and transposed operands and on every other element of a vector twice as
long (``step2``: elementwise functions, reductions and scans); the rest of the namespace (sets,
searching, manipulation, creation, writes), the ``linalg`` extension on one 64 x 64 or 1000 x
1000 matrix and the ``fft`` extension, contiguous.  Each strided result is checked against NumPy
once, so a broken kernel cannot look fast (a mismatch is reported as WRONG and counted).

Targets (issue 14): at 1M elements no case slower than NumPy (geometric mean of the ratios
<= 0.7); at 4096 elements no case slower than PyTorch.

    python benchmarks/bench_ops.py [--quick] [--filter REGEX] [--sizes 4096,1000000]
                                   [--dtypes float32,float64,int32] [--layouts contig,transposed]
                                   [--no-torch] [--repeat N] [--threads N] [--recheck N]

The summary after the first pass is the headline; ``--recheck N`` (default 2) then re-times the
cases slower than NumPy or PyTorch N more times and summarizes again with each library's best
time over all passes (this machine's slow spells move every library's times for seconds).
"""

from __future__ import annotations

import argparse
import math
import operator
import os
import re
import time

# NumPy's and SciPy's OpenBLAS (two libraries, two thread pools) spin for 2**28 cycles (~0.1 s)
# after each threaded call.  Interleaved batches then time each library against the other's
# spinning threads on these 2 cores: 1000 x 1000 float64 matmul 46 ms a call for both instead
# of 20, strided's threaded 1M norm 243 us instead of 36 (2026-11-28).  2**20 cycles (~0.4 ms)
# keeps a pool warm across the back-to-back calls of a batch and idle before the next batch.
# Set before NumPy's import (OpenBLAS reads it when it loads); an explicit setting wins.
os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "20")

import numpy as np  # noqa: E402

import strided as xp  # noqa: E402
from strided._ops.elementwise import ELEMENTWISE  # noqa: E402

try:  # PyTorch is optional: its column is left empty without it
    import torch
except ImportError:  # pragma: no cover - depends on the machine
    torch = None

# strided name -> NumPy / PyTorch name where they differ
NP_NAME = {
    "asin": "arcsin",
    "acos": "arccos",
    "atan": "arctan",
    "atan2": "arctan2",
    "asinh": "arcsinh",
    "acosh": "arccosh",
    "atanh": "arctanh",
    "pow": "power",
    "bitwise_invert": "invert",
    "bitwise_left_shift": "left_shift",
    "bitwise_right_shift": "right_shift",
    "conj": "conjugate",
    "round": "rint",
    "cumulative_sum": "cumsum",
    "cumulative_prod": "cumprod",
}
TORCH_NAME = {
    "pow": "pow",
    "bitwise_invert": "bitwise_not",
    "divide": "true_divide",
    "remainder": "remainder",
    "logaddexp": "logaddexp",
    "cumulative_sum": "cumsum",
    "cumulative_prod": "cumprod",
    "max": "amax",
    "equal": "eq",
    "min": "amin",
}

# input domains (low, high) for functions defined on part of the real line
DOMAIN = {
    "log": (0.01, 100.0),
    "log2": (0.01, 100.0),
    "log10": (0.01, 100.0),
    "log1p": (-0.9, 100.0),
    "sqrt": (0.0, 100.0),
    "asin": (-1.0, 1.0),
    "acos": (-1.0, 1.0),
    "atanh": (-0.99, 0.99),
    "acosh": (1.0, 100.0),
    "exp": (-20.0, 20.0),
    "expm1": (-20.0, 20.0),
    "sinh": (-20.0, 20.0),
    "cosh": (-20.0, 20.0),
    "pow": (0.5, 2.0),
    "prod": (0.999, 1.001),
    "cumulative_prod": (0.999, 1.001),
}
INT_ONLY = {"bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_invert"}
SHIFTS = {"bitwise_left_shift", "bitwise_right_shift"}
BOOL_ONLY = {"logical_and", "logical_or", "logical_xor", "logical_not"}
INT_DTYPE = "int32"
SCALAR = {"float32": 1.5, "float64": 1.5, "int32": 3, "bool": True}


def accepts(op: str, dtype: str) -> bool:
    """Whether the elementwise ``op`` is benchmarked in ``dtype``."""
    if op in BOOL_ONLY:
        return dtype == "bool"
    if dtype == "bool":
        return False
    if op in INT_ONLY or op in SHIFTS:
        return dtype == INT_DTYPE
    _, category, result, _ = ELEMENTWISE[op]
    if dtype == INT_DTYPE:  # integers: only the ops that stay integer (no float promotion)
        return category != "real floating" and result in ("same", "bool", "real")
    return True


def make_input(op: str, dtype: str, n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return rng.random(n) < 0.5
    if dtype == INT_DTYPE:
        if op in SHIFTS:
            return rng.integers(0, 31, n).astype(np.int32)
        if op == "pow":
            return rng.integers(0, 4, n).astype(np.int32)
        return rng.integers(1, 1000, n).astype(np.int32)
    lo, hi = DOMAIN.get(op, (-10.0, 10.0))
    return rng.uniform(lo, hi, n).astype(dtype)


class Case:
    """One timed comparison: strided, NumPy and (optional) PyTorch callables and a checker."""

    def __init__(
        self,
        group,
        op,
        dtype,
        n,
        layout,
        f_s,
        f_n,
        f_t,
        exact=False,
        rtol=None,
        unordered=False,
        project=None,
    ):
        self.name = f"{op}{' ' + group if group else ''} {dtype} {n} {layout}"
        self.op, self.dtype, self.n, self.layout = op, dtype, n, layout
        self.f_s, self.f_n, self.f_t = f_s, f_n, f_t
        # unordered: the result's order is unspecified (unique_values), compared sorted
        self.exact, self.rtol, self.unordered = exact, rtol, unordered
        # project: what of a result is compared, where the rest is not unique (the signs of
        # eigenvectors and singular vectors): a function of the result, NumPy's or strided's
        self.project = project


def _tol(dtype: str, op: str) -> float:
    f32 = dtype == "float32"
    if op in ("sum", "prod", "mean", "var", "std", "cumulative_sum", "cumulative_prod"):
        return 1e-3 if f32 else 1e-9
    return 2e-5 if f32 else 1e-12


def check(case: Case) -> str | None:
    """None if strided's result matches NumPy's, else a short description of the mismatch."""
    got, want = case.f_s(), case.f_n()
    if case.project is not None:
        got, want = case.project(got), case.project(want)
    got, want = np.asarray(got), np.asarray(want)
    if case.unordered:
        got, want = np.sort(got, axis=None), np.sort(want, axis=None)
    if got.shape != want.shape:
        return f"shape {got.shape} != {want.shape}"
    if case.exact or want.dtype.kind in "biu":
        ok = np.array_equal(got, want, equal_nan=want.dtype.kind == "f")
        return None if ok else "values differ"
    rtol = case.rtol or _tol(case.dtype, case.op)
    scale = float(np.nanmax(np.abs(want), initial=0.0)) if want.size else 0.0
    finite = np.isfinite(want)
    if not np.array_equal(np.isnan(got), np.isnan(want)):
        return "NaN positions differ"
    if not np.array_equal(got[~finite & ~np.isnan(want)], want[~finite & ~np.isnan(want)]):
        return "infinities differ"
    wide = np.complex128 if want.dtype.kind == "c" else np.float64  # (both parts compared)
    if got.dtype.kind == "c" and wide is np.float64:
        return f"complex result, NumPy's is {want.dtype}"
    g, w = got[finite].astype(wide), want[finite].astype(wide)
    # relative error, with an absolute floor for results near zero (sin(pi), cancellations)
    atol = rtol * (1.0 if case.op in ("sin", "cos", "tan") else max(scale, 1.0) * 1e-3)
    bad = np.abs(g - w) > rtol * np.abs(w) + atol
    if bad.any():
        i = int(np.argmax(bad))
        return f"{int(bad.sum())} values differ, e.g. {g[i]!r} vs {w[i]!r}"
    return None


def _views(a: np.ndarray, layout: str):
    """(numpy, strided, torch) views of ``a`` in ``layout``: 1-D, every other element of it
    (``step2``: a stepped run of half its size), or the transpose of a square."""
    if layout == "contig":
        t = torch.from_numpy(a.copy()) if torch is not None else None
        return a, xp.asarray(a), t
    if layout == "step2":
        t = torch.from_numpy(a.copy())[::2] if torch is not None else None
        return a[::2], xp.asarray(a)[::2], t
    side = math.isqrt(a.size)
    sq = np.ascontiguousarray(a[: side * side].reshape(side, side))
    t = torch.from_numpy(sq.copy()).T if torch is not None else None
    return sq.T, xp.asarray(sq).T, t


def _torch_fn(name: str):
    if torch is None:
        return None
    return getattr(torch, TORCH_NAME.get(name, name), None)


def elementwise_cases(dtypes, sizes, layouts):
    seed = 0
    for op, (arity, *_rest) in ELEMENTWISE.items():
        f_s = getattr(xp, op)
        f_n = getattr(np, NP_NAME.get(op, op))
        f_t = _torch_fn(op)
        for dtype in dtypes + ["bool"]:
            if not accepts(op, dtype):
                continue
            for n in sizes:
                # and every other element of a vector twice as long (x[::2], a stepped run)
                for layout in layouts + (["step2"] if "contig" in layouts else []):
                    seed += 1
                    m = 2 * n if layout == "step2" else n
                    a_n, a_s, a_t = _views(make_input(op, dtype, m, seed), layout)
                    if arity == 1:
                        yield Case(
                            "",
                            op,
                            dtype,
                            n,
                            layout,
                            lambda f=f_s, a=a_s: f(a),
                            lambda f=f_n, a=a_n: f(a),
                            f_t and (lambda f=f_t, a=a_t: f(a)),
                        )
                        continue
                    b_n, b_s, b_t = _views(make_input(op, dtype, m, seed + 7919), layout)
                    yield Case(
                        "",
                        op,
                        dtype,
                        n,
                        layout,
                        lambda f=f_s, a=a_s, b=b_s: f(a, b),
                        lambda f=f_n, a=a_n, b=b_n: f(a, b),
                        f_t and (lambda f=f_t, a=a_t, b=b_t: f(a, b)),
                    )
                    if layout != "contig":
                        continue
                    # with a Python scalar (typed by the array, as NumPy 2 does)
                    c = SCALAR[dtype]
                    if op in SHIFTS:
                        c = 3
                    yield Case(
                        "scalar",
                        op,
                        dtype,
                        n,
                        layout,
                        lambda f=f_s, a=a_s, c=c: f(a, c),
                        lambda f=f_n, a=a_n, c=c: f(a, c),
                        f_t and _torch_scalar(f_t, a_t, c),
                    )


def _torch_scalar(f_t, a_t, c):
    def call():
        return f_t(a_t, c)

    try:
        call()
    except (TypeError, RuntimeError):
        return None
    return call


REDUCTIONS = [
    "sum", "prod", "max", "min", "mean", "var", "std", "any", "all", "argmax", "argmin",
    "count_nonzero",
]  # fmt: skip
SCANS = ["cumulative_sum", "cumulative_prod"]


def reduction_cases(dtypes, sizes, layouts):
    seed = 10_000
    for op in REDUCTIONS + SCANS:
        f_s = getattr(xp, op)
        f_n = getattr(np, NP_NAME.get(op, op))
        f_t = _torch_fn(op)
        kinds = ["bool"] if op in ("any", "all") else list(dtypes)
        if op == "count_nonzero":  # masks first: what it mostly counts
            kinds = ["bool", *dtypes]
        for dtype in kinds:
            if op in ("mean", "var", "std") and dtype == INT_DTYPE:
                continue
            for n in sizes:
                # and every other element of a vector twice as long (x[::2]): a stepped run
                for layout in layouts + (["step2"] if "contig" in layouts else []):
                    seed += 1
                    m = 2 * n if layout == "step2" else n
                    if op in ("any", "all"):  # the worst case: no early exit
                        a = np.full(m, op == "all")
                    else:
                        a = make_input(op, dtype, m, seed)
                    a_n, a_s, a_t = _views(a, layout)
                    # contiguous: the whole array; transposed: along the last axis
                    if op in SCANS:
                        kw_s = {"axis": a_s.ndim - 1}
                        kw_n = {"axis": a_n.ndim - 1}
                        kw_t = {"dim": a_s.ndim - 1}
                    elif layout != "transposed":
                        kw_s, kw_n, kw_t = {}, {}, {}
                    else:
                        kw_s, kw_n, kw_t = {"axis": -1}, {"axis": -1}, {"dim": -1}
                    t_call = None
                    if f_t is not None:
                        t_call = _torch_reduction(f_t, op, a_t, kw_t)
                    yield Case(
                        "",
                        op,
                        dtype,
                        n,
                        layout,
                        lambda f=f_s, a=a_s, kw=kw_s: f(a, **kw),
                        lambda f=f_n, a=a_n, kw=kw_n: f(a, **kw),
                        t_call,
                        exact=op
                        in ("argmax", "argmin", "max", "min", "any", "all", "count_nonzero"),
                    )


def _torch_reduction(f_t, op, a_t, kw):
    if op in ("mean", "var", "std") and not a_t.is_floating_point():
        return None
    if op in ("var", "std"):
        kw = dict(kw, correction=0)

    def call():
        return f_t(a_t, **kw)

    try:
        call()
    except (TypeError, RuntimeError):
        return None
    return call


#: the functions of other_cases also timed on vectors at step 2 (the maps among them)
STEPPED_OTHER = ("where", "clip", "astype")


def other_cases(dtypes, sizes, layouts):
    rng = np.random.default_rng(99)
    for dtype in dtypes:
        for n in sizes:
            for layout in layouts + (["step2"] if "contig" in layouts else []):
                a_n, a_s, a_t = _views(make_input("where", dtype, n, 1), layout)
                b_n, b_s, b_t = _views(make_input("where", dtype, n, 2), layout)
                c_n, c_s, c_t = _views(make_input("where", "bool", n, 3), layout)
                tt = torch is not None
                lo, hi = (-5.0, 5.0) if dtype != INT_DTYPE else (100, 800)
                to = {"float32": "float64", "float64": "float32", INT_DTYPE: "float32"}[dtype]
                table = [
                    (
                        "",
                        "where",
                        lambda c=c_s, a=a_s, b=b_s: xp.where(c, a, b),
                        lambda c=c_n, a=a_n, b=b_n: np.where(c, a, b),
                        lambda c=c_t, a=a_t, b=b_t: torch.where(c, a, b),
                    ),
                    (
                        "",
                        "clip",
                        lambda a=a_s, lo=lo, hi=hi: xp.clip(a, lo, hi),
                        lambda a=a_n, lo=lo, hi=hi: np.clip(a, lo, hi),
                        lambda a=a_t, lo=lo, hi=hi: torch.clip(a, lo, hi),
                    ),
                    (
                        f"->{to}",
                        "astype",
                        lambda a=a_s, to=to: xp.astype(a, getattr(xp, to)),
                        lambda a=a_n, to=to: a.astype(to),
                        lambda a=a_t, to=to: a.to(getattr(torch, to)),
                    ),
                    (
                        "",
                        "sort",
                        lambda a=a_s: xp.sort(a, axis=-1),
                        lambda a=a_n: np.sort(a, axis=-1),
                        lambda a=a_t: torch.sort(a, dim=-1).values,
                    ),
                ]
                # take / integer indexing along the first axis, boolean mask, slicing, concat
                m = a_n.shape[0]
                idx = rng.integers(0, m, m)
                i_s = xp.asarray(idx)
                i_t = torch.from_numpy(idx) if tt else None
                table += [
                    (
                        "",
                        "take",
                        lambda a=a_s, i=i_s: xp.take(a, i, axis=0),
                        lambda a=a_n, i=idx: np.take(a, i, axis=0),
                        lambda a=a_t, i=i_t: torch.index_select(a, 0, i),
                    ),
                    (
                        "int",
                        "index",
                        lambda a=a_s, i=i_s: a[i],
                        lambda a=a_n, i=idx: a[i],
                        lambda a=a_t, i=i_t: a[i],
                    ),
                    (
                        "bool",
                        "index",
                        lambda a=a_s, c=c_s: a[c],
                        lambda a=a_n, c=c_n: a[c],
                        lambda a=a_t, c=c_t: a[c],
                    ),
                    (
                        "slice-copy",
                        "index",
                        lambda a=a_s: xp.asarray(a[::2], copy=True),
                        lambda a=a_n: a[::2].copy(),
                        lambda a=a_t: a[::2].clone(),
                    ),
                    (
                        "",
                        "concat",
                        lambda a=a_s, b=b_s: xp.concat([a, b], axis=0),
                        lambda a=a_n, b=b_n: np.concatenate([a, b], axis=0),
                        lambda a=a_t, b=b_t: torch.cat([a, b], dim=0),
                    ),
                ]
                if layout == "step2":
                    table = [case for case in table if case[1] in STEPPED_OTHER]
                for group, op, f_s, f_n, f_t in table:
                    yield Case(group, op, dtype, n, layout, f_s, f_n, tt and f_t, exact=True)


def _square(a: np.ndarray) -> np.ndarray:
    side = math.isqrt(a.size)
    return np.ascontiguousarray(a[: side * side].reshape(side, side))


def _quiet(fn, *args):
    """``fn(*args)`` without NumPy's warnings about NaN results."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return fn(*args)


def _torch_of(a: np.ndarray):
    return torch.from_numpy(a.copy()) if torch is not None else None


def _setter(target, key_fn, value):
    """``target[key_fn(target)] = value`` then ``target`` (a write's result, to check)."""

    def call():
        target[key_fn(target)] = value
        return target

    return call


def _in_place(target, iop, other):
    """``iop(target, other)`` (an in-place operator) then ``target``."""

    def call():
        iop(target, other)
        return target

    return call


def namespace_cases(dtypes, sizes, layouts):
    """The rest of the namespace, contiguous operands: sorting and sets, searching, the
    manipulation functions, writes (a mask, a slice), broadcasting, linear algebra and
    reductions along the other axis of a matrix."""
    if "contig" not in layouts:
        return
    for dtype in dtypes:
        for n in sizes:
            for group, op, f_s, f_n, f_t in _namespace_table(dtype, n):
                exact = op not in (
                    "vector_norm", "matmul", "vecdot", "sum", "cumulative_sum", "linspace", "log"
                )  # fmt: skip
                yield Case(
                    group, op, dtype, n, "contig", f_s, f_n, f_t or None, exact=exact,
                    unordered=op == "unique_values",
                    project=_shape if op in ("empty", "empty_like") else None,
                )  # fmt: skip


def _shape(r):
    """What is compared of an uninitialised result: its shape."""
    return np.asarray(np.shape(r))


def _namespace_table(dtype: str, n: int) -> list:
    """(group, op, strided, NumPy, PyTorch or None) calls on inputs of ``n`` elements (a
    function of its own: each call's closures hold its own inputs)."""
    tt = torch is not None
    fl = dtype != INT_DTYPE
    a_n = make_input("where", dtype, n, 5)
    b_n = make_input("where", dtype, n, 6)
    a_s, b_s, a_t, b_t = xp.asarray(a_n), xp.asarray(b_n), _torch_of(a_n), _torch_of(b_n)
    few = (a_n * 10 if fl else a_n).astype(np.int64) % 50  # repeated values
    few_n = few.astype(dtype)
    few_s, few_t = xp.asarray(few_n), _torch_of(few_n)
    srt = np.sort(a_n)
    q_n = a_n[:1000].copy()
    m_n = _square(a_n)
    m_s, m_t = xp.asarray(m_n), _torch_of(m_n)
    row_n = m_n[0].copy()
    row_s, row_t = xp.asarray(row_n), _torch_of(row_n)
    quarter = a_n[: n // 4].copy()
    half = n // 2
    zero = a_n.dtype.type(0)
    srt_s, q_s, srt_t, q_t = xp.asarray(srt), xp.asarray(q_n), _torch_of(srt), _torch_of(q_n)
    quarter_s, quarter_t = xp.asarray(quarter), _torch_of(quarter)
    k = round(n ** (1 / 3))  # a cube of about n elements (16^3, 100^3)
    cube_n = a_n[: k**3].reshape(k, k, k).copy()
    cube_s, cube_t = xp.asarray(cube_n), _torch_of(cube_n)
    lead_n = m_n[None]  # a leading unit axis to squeeze
    lead_s, lead_t = xp.asarray(lead_n), _torch_of(lead_n)
    trip_n = a_n[: n // 3 * 3].reshape(-1, 3).copy()  # 3-vectors for cross
    trip2_n = trip_n[::-1].copy()
    trip_s, trip2_s, trip_t, trip2_t = (xp.asarray(trip_n), xp.asarray(trip2_n),
                                        _torch_of(trip_n), _torch_of(trip2_n))  # fmt: skip
    c_n = a_n > b_n
    c_s, c_t = xp.asarray(c_n), _torch_of(c_n)
    cols_n = np.random.default_rng(n).integers(0, m_n.shape[1], m_n.shape[1])  # columns to take
    cols_s, cols_t = xp.asarray(cols_n), _torch_of(cols_n)
    b33_n = a_n[: n // 9 * 9].reshape(-1, 3, 3).copy()  # a stack of 3 x 3 matrices
    b33_s, b33_t = xp.asarray(b33_n), _torch_of(b33_n)
    table = [
        ("", "argsort", lambda: xp.argsort(a_s), lambda: np.argsort(a_n, kind="stable"),
         tt and (lambda: torch.argsort(a_t, stable=True))),
        ("", "unique_values", lambda: xp.unique_values(few_s),
         lambda: np.unique_values(few_n), tt and (lambda: torch.unique(few_t))),
        ("", "unique_counts", lambda: xp.unique_counts(few_s)[1],
         lambda: np.unique_counts(few_n)[1],
         tt and (lambda: torch.unique(few_t, return_counts=True)[1])),
        ("", "unique_inverse", lambda: xp.unique_inverse(few_s)[1],
         lambda: np.unique_inverse(few_n)[1],
         tt and (lambda: torch.unique(few_t, return_inverse=True)[1])),
        ("", "searchsorted", lambda: xp.searchsorted(srt_s, q_s),
         lambda: np.searchsorted(srt, q_n),
         tt and (lambda: torch.searchsorted(srt_t, q_t))),
        ("", "nonzero", lambda: xp.nonzero(few_s)[0], lambda: np.nonzero(few_n)[0],
         tt and (lambda: torch.nonzero(few_t, as_tuple=True)[0])),
        ("", "flip", lambda: xp.flip(a_s), lambda: np.flip(a_n),
         tt and (lambda: torch.flip(a_t, (0,)))),
        ("", "roll", lambda: xp.roll(a_s, 7), lambda: np.roll(a_n, 7),
         tt and (lambda: torch.roll(a_t, 7))),
        ("", "repeat", lambda: xp.repeat(quarter_s, 4),
         lambda: np.repeat(quarter, 4),
         tt and (lambda: torch.repeat_interleave(quarter_t, 4))),
        ("", "tile", lambda: xp.tile(quarter_s, (4,)),
         lambda: np.tile(quarter, 4), tt and (lambda: torch.tile(quarter_t, (4,)))),
        ("", "stack", lambda: xp.stack([a_s, b_s]), lambda: np.stack([a_n, b_n]),
         tt and (lambda: torch.stack([a_t, b_t]))),
        ("", "diff", lambda: xp.diff(a_s), lambda: np.diff(a_n),
         tt and (lambda: torch.diff(a_t))),
        ("", "tril", lambda: xp.tril(m_s), lambda: np.tril(m_n),
         tt and (lambda: torch.tril(m_t))),
        ("row", "subtract", lambda: m_s - row_s, lambda: m_n - row_n,
         tt and (lambda: m_t - row_t)),
        ("axis0", "sum", lambda: xp.sum(m_s, axis=0), lambda: np.sum(m_n, axis=0),
         tt and (lambda: torch.sum(m_t, 0))),
        ("axis0", "cumulative_sum", lambda: xp.cumulative_sum(m_s, axis=0),
         lambda: np.cumsum(m_n, axis=0), tt and (lambda: torch.cumsum(m_t, 0))),
        ("rows", "cumulative_sum", lambda: xp.cumulative_sum(m_s, axis=1),
         lambda: np.cumsum(m_n, axis=1), tt and (lambda: torch.cumsum(m_t, 1))),
        ("rows", "argmax", lambda: xp.argmax(m_s, axis=1), lambda: np.argmax(m_n, axis=1),
         tt and (lambda: torch.argmax(m_t, 1))),
        ("rows", "vecdot", lambda: xp.vecdot(m_s, m_s), lambda: np.vecdot(m_n, m_n),
         tt and (lambda: torch.linalg.vecdot(m_t, m_t))),
        ("axis0", "vecdot", lambda: xp.vecdot(m_s, m_s, axis=0),
         lambda: np.vecdot(m_n, m_n, axis=0),
         tt and (lambda: torch.linalg.vecdot(m_t, m_t, dim=0))),
        ("axis0", "argmax", lambda: xp.argmax(m_s, axis=0), lambda: np.argmax(m_n, axis=0),
         tt and (lambda: torch.argmax(m_t, 0))),
        ("3 columns axis0", "argmax", lambda: xp.argmax(trip_s, axis=0),
         lambda: np.argmax(trip_n, axis=0), tt and (lambda: torch.argmax(trip_t, 0))),
        ("3 columns axis0", "vecdot", lambda: xp.vecdot(trip_s, trip2_s, axis=0),
         lambda: np.vecdot(trip_n, trip2_n, axis=0),
         tt and (lambda: torch.linalg.vecdot(trip_t, trip2_t, dim=0))),
        ("columns", "take", lambda: xp.take(m_s, cols_s, axis=1),
         lambda: np.take(m_n, cols_n, axis=1), tt and (lambda: torch.index_select(m_t, 1, cols_t))),
        ("3x3 batches", "matmul", lambda: xp.matmul(b33_s, b33_s), lambda: np.matmul(b33_n, b33_n),
         tt and (lambda: torch.matmul(b33_t, b33_t))),
        ("scalar", "where", lambda: xp.where(c_s, a_s, zero.item()),
         lambda: np.where(c_n, a_n, zero.item()),
         tt and (lambda: torch.where(c_t, a_t, zero.item()))),
        ("mask", "setitem",
         _setter(xp.asarray(a_n.copy()), lambda x: x > b_s, zero),
         _setter(a_n.copy(), lambda x: x > b_n, zero),
         tt and _setter(_torch_of(a_n), lambda x: x > b_t, zero.item())),
        ("slice", "setitem",
         _setter(xp.asarray(a_n.copy()), lambda x: slice(0, half), b_s[:half]),
         _setter(a_n.copy(), lambda x: slice(0, half), b_n[:half]),
         tt and _setter(_torch_of(a_n), lambda x: slice(0, half), b_t[:half])),
        # views and the other manipulation functions
        ("", "expand_dims", lambda: xp.expand_dims(m_s, axis=0), lambda: np.expand_dims(m_n, 0),
         tt and (lambda: m_t.unsqueeze(0))),
        ("", "squeeze", lambda: xp.squeeze(lead_s, axis=0), lambda: np.squeeze(lead_n, 0),
         tt and (lambda: lead_t.squeeze(0))),
        ("", "permute_dims", lambda: xp.permute_dims(cube_s, (2, 0, 1)),
         lambda: np.permute_dims(cube_n, (2, 0, 1)), tt and (lambda: cube_t.permute(2, 0, 1))),
        ("", "matrix_transpose", lambda: xp.matrix_transpose(m_s),
         lambda: np.matrix_transpose(m_n), tt and (lambda: m_t.mT)),
        ("", "moveaxis", lambda: xp.moveaxis(cube_s, 0, -1), lambda: np.moveaxis(cube_n, 0, -1),
         tt and (lambda: torch.movedim(cube_t, 0, -1))),
        ("", "reshape", lambda: xp.reshape(m_s, (-1,)), lambda: np.reshape(m_n, (-1,)),
         tt and (lambda: m_t.reshape(-1))),
        ("", "broadcast_to", lambda: xp.broadcast_to(row_s, m_n.shape),
         lambda: np.broadcast_to(row_n, m_n.shape),
         tt and (lambda: torch.broadcast_to(row_t, m_n.shape))),
        ("", "broadcast_arrays", lambda: xp.broadcast_arrays(m_s, row_s)[1],
         lambda: np.broadcast_arrays(m_n, row_n)[1],
         tt and (lambda: torch.broadcast_tensors(m_t, row_t)[1])),
        ("", "unstack", lambda: xp.unstack(cube_s)[-1], lambda: np.unstack(cube_n)[-1],
         tt and (lambda: torch.unbind(cube_t)[-1])),
        ("", "meshgrid", lambda: xp.meshgrid(row_s, row_s)[0],
         lambda: np.meshgrid(row_n, row_n)[0],
         tt and (lambda: torch.meshgrid(row_t, row_t, indexing="xy")[0].clone())),
        ("", "cross", lambda: xp.linalg.cross(trip_s, trip2_s),
         lambda: np.linalg.cross(trip_n, trip2_n),
         tt and (lambda: torch.linalg.cross(trip_t, trip2_t))),
        ("", "unique_all", lambda: xp.unique_all(few_s).counts,
         lambda: np.unique_all(few_n).counts,
         tt and (lambda: torch.unique(few_t, return_inverse=True, return_counts=True)[2])),
        # in-place operators (x += y; x *= -1 keeps the values as they are)
        ("in-place", "add", _in_place(xp.asarray(a_n.copy()), operator.iadd, b_s),
         _in_place(a_n.copy(), operator.iadd, b_n),
         tt and _in_place(_torch_of(a_n), operator.iadd, b_t)),
        ("in-place scalar", "multiply", _in_place(xp.asarray(a_n.copy()), operator.imul, -1),
         _in_place(a_n.copy(), operator.imul, -1),
         tt and _in_place(_torch_of(a_n), operator.imul, -1)),
    ]  # fmt: skip
    # creation, gathers along an axis and membership
    xd, nd = getattr(xp, dtype), np.dtype(dtype)
    td = getattr(torch, dtype) if tt else None
    side = math.isqrt(n)
    idx_n = np.argsort(m_n, axis=1)
    idx_s, idx_t = xp.asarray(idx_n), _torch_of(idx_n)
    set_n = few_n[:20].copy()
    set_s, set_t = xp.asarray(set_n), _torch_of(set_n)
    if not fl:
        # 1-byte keys (counted, not compared): once, with the integer dtype's cases
        k8_n = (a_n % 256 - 128).astype(np.int8)
        k8_s, k8_t = xp.asarray(k8_n), _torch_of(k8_n)
        table += [
            ("int8", "argsort", lambda: xp.argsort(k8_s), lambda: np.argsort(k8_n, kind="stable"),
             tt and (lambda: torch.argsort(k8_t, stable=True))),
            ("int8", "sort", lambda: xp.sort(k8_s), lambda: np.sort(k8_n),
             tt and (lambda: torch.sort(k8_t).values)),
            ("int8", "unique_values", lambda: xp.unique_values(k8_s),
             lambda: np.unique_values(k8_n), tt and (lambda: torch.unique(k8_t))),
        ]  # fmt: skip
    if fl:
        # log of values of both signs (half of them negative: the loop's second pass redoes
        # them); the other tables' log inputs are positive
        table.append(
            ("signs", "log", lambda: xp.log(a_s), lambda: _quiet(np.log, a_n),
             tt and (lambda: torch.log(a_t)))
        )  # fmt: skip
    table += [
        ("", "full", lambda: xp.full((n,), 3, dtype=xd), lambda: np.full((n,), 3, dtype=nd),
         tt and (lambda: torch.full((n,), 3, dtype=td))),
        ("", "zeros_like", lambda: xp.zeros_like(a_s), lambda: np.zeros_like(a_n),
         tt and (lambda: torch.zeros_like(a_t))),
        ("", "arange", lambda: xp.arange(n, dtype=xd), lambda: np.arange(n, dtype=nd),
         tt and (lambda: torch.arange(n, dtype=td))),
        ("", "eye", lambda: xp.eye(side, dtype=xd), lambda: np.eye(side, dtype=nd),
         tt and (lambda: torch.eye(side, dtype=td))),
        ("", "zeros", lambda: xp.zeros((n,), dtype=xd), lambda: np.zeros((n,), dtype=nd),
         tt and (lambda: torch.zeros((n,), dtype=td))),
        ("", "ones", lambda: xp.ones((n,), dtype=xd), lambda: np.ones((n,), dtype=nd),
         tt and (lambda: torch.ones((n,), dtype=td))),
        ("", "empty", lambda: xp.empty((n,), dtype=xd), lambda: np.empty((n,), dtype=nd),
         tt and (lambda: torch.empty((n,), dtype=td))),
        ("", "ones_like", lambda: xp.ones_like(a_s), lambda: np.ones_like(a_n),
         tt and (lambda: torch.ones_like(a_t))),
        ("", "full_like", lambda: xp.full_like(a_s, 3), lambda: np.full_like(a_n, 3),
         tt and (lambda: torch.full_like(a_t, 3))),
        ("", "empty_like", lambda: xp.empty_like(a_s), lambda: np.empty_like(a_n),
         tt and (lambda: torch.empty_like(a_t))),
        # (a copy of foreign memory: without copy=True all three return a view or the input)
        ("copy", "asarray", lambda: xp.asarray(a_n, copy=True), lambda: np.array(a_n, copy=True),
         tt and (lambda: torch.tensor(a_n))),
        ("rows", "take_along_axis", lambda: xp.take_along_axis(m_s, idx_s, axis=1),
         lambda: np.take_along_axis(m_n, idx_n, axis=1),
         tt and (lambda: torch.take_along_dim(m_t, idx_t, 1))),
        ("", "isin", lambda: xp.isin(few_s, set_s), lambda: np.isin(few_n, set_n),
         tt and (lambda: torch.isin(few_t, set_t))),
    ]  # fmt: skip
    if fl:
        table += [
            ("", "linspace", lambda: xp.linspace(0, 1, n, dtype=xd),
             lambda: np.linspace(0, 1, n, dtype=nd),
             tt and (lambda: torch.linspace(0, 1, n, dtype=td))),
            ("", "vector_norm", lambda: xp.linalg.vector_norm(a_s),
             lambda: np.linalg.vector_norm(a_n),
             tt and (lambda: torch.linalg.vector_norm(a_t))),
            ("", "matmul", lambda: m_s @ m_s, lambda: m_n @ m_n,
             tt and (lambda: m_t @ m_t)),
        ]  # fmt: skip
    return table


def _linalg_inputs(dtype: str, n: int):
    """(general, symmetric positive definite, symmetric) square matrices of about ``n``
    elements, well conditioned (the identity plus a small random part: single precision stays
    accurate enough to compare, determinants stay finite)."""
    side = math.isqrt(n)
    rng = np.random.default_rng(n)
    g = (np.eye(side) + rng.standard_normal((side, side)) / (3 * math.sqrt(side))).astype(dtype)
    return g, (g @ g.T).astype(dtype), ((g + g.T) / 2).astype(dtype)


def linalg_cases(dtypes, sizes, layouts):
    """The linalg extension and the matrix functions of the main namespace on one square matrix
    of n elements (64 x 64, 1000 x 1000), contiguous, in the floating dtypes.  Decompositions
    are compared on what is unique about them (eigenvalues, singular values, |diag R|)."""
    if "contig" not in layouts:
        return
    for dtype in dtypes:
        if dtype == INT_DTYPE:
            continue
        for n in sizes:
            for op, f_s, f_n, f_t, project in _linalg_table(dtype, n):
                yield Case(
                    "", op, dtype, n, "contig", f_s, f_n, f_t,
                    rtol=2e-3 if dtype == "float32" else 1e-8, project=project,
                )  # fmt: skip


def _first(r):
    return r[0]


def _second(r):
    return r[1]


def _r_diagonal(r):
    return np.abs(np.diagonal(np.asarray(r[1])))


def _magnitudes(r):
    return np.sort(np.abs(np.asarray(r[0])))


def _value_magnitudes(r):
    return np.sort(np.abs(np.asarray(r)))


def _linalg_table(dtype: str, n: int) -> list:
    """(op, strided, NumPy, PyTorch or None, projection) calls on matrices of ``n`` elements."""
    tt = torch is not None
    la, tl = np.linalg, torch.linalg if tt else None
    g_n, p_n, h_n = _linalg_inputs(dtype, n)
    g_s, p_s, h_s = xp.asarray(g_n), xp.asarray(p_n), xp.asarray(h_n)
    g_t, p_t, h_t = _torch_of(g_n), _torch_of(p_n), _torch_of(h_n)
    b_n = g_n[:, :4].copy()
    b_s, b_t = xp.asarray(b_n), _torch_of(b_n)
    v_n, w_n = g_n[0].copy(), g_n[1].copy()
    v_s, w_s, v_t, w_t = xp.asarray(v_n), xp.asarray(w_n), _torch_of(v_n), _torch_of(w_n)
    table = [
        ("inv", lambda: xp.linalg.inv(g_s), lambda: la.inv(g_n),
         tt and (lambda: tl.inv(g_t)), None),
        ("solve", lambda: xp.linalg.solve(g_s, b_s), lambda: la.solve(g_n, b_n),
         tt and (lambda: tl.solve(g_t, b_t)), None),
        ("det", lambda: xp.linalg.det(g_s), lambda: la.det(g_n),
         tt and (lambda: tl.det(g_t)), None),
        ("slogdet", lambda: xp.linalg.slogdet(g_s), lambda: la.slogdet(g_n),
         tt and (lambda: tl.slogdet(g_t)), _second),
        ("cholesky", lambda: xp.linalg.cholesky(p_s), lambda: la.cholesky(p_n),
         tt and (lambda: tl.cholesky(p_t)), None),
        ("qr", lambda: xp.linalg.qr(g_s), lambda: la.qr(g_n),
         tt and (lambda: tl.qr(g_t)), _r_diagonal),
        ("eigh", lambda: xp.linalg.eigh(h_s), lambda: la.eigh(h_n),
         tt and (lambda: tl.eigh(h_t)), _first),
        ("eigvalsh", lambda: xp.linalg.eigvalsh(h_s), lambda: la.eigvalsh(h_n),
         tt and (lambda: tl.eigvalsh(h_t)), None),
        ("svd", lambda: xp.linalg.svd(g_s), lambda: la.svd(g_n),
         tt and (lambda: tl.svd(g_t)), _second),
        ("svdvals", lambda: xp.linalg.svdvals(g_s), lambda: la.svd(g_n, compute_uv=False),
         tt and (lambda: tl.svdvals(g_t)), None),
        ("pinv", lambda: xp.linalg.pinv(g_s), lambda: la.pinv(g_n),
         tt and (lambda: tl.pinv(g_t)), None),
        ("matrix_rank", lambda: xp.linalg.matrix_rank(g_s), lambda: la.matrix_rank(g_n),
         tt and (lambda: tl.matrix_rank(g_t)), None),
        ("matrix_norm", lambda: xp.linalg.matrix_norm(g_s), lambda: la.norm(g_n),
         tt and (lambda: tl.matrix_norm(g_t)), None),
        ("matrix_norm2", lambda: xp.linalg.matrix_norm(g_s, ord=2), lambda: la.norm(g_n, 2),
         tt and (lambda: tl.matrix_norm(g_t, ord=2)), None),
        ("matrix_power", lambda: xp.linalg.matrix_power(g_s, 3),
         lambda: la.matrix_power(g_n, 3), tt and (lambda: tl.matrix_power(g_t, 3)), None),
        ("trace", lambda: xp.linalg.trace(g_s), lambda: np.trace(g_n),
         tt and (lambda: torch.trace(g_t)), None),
        ("diagonal", lambda: xp.linalg.diagonal(g_s), lambda: np.diagonal(g_n),
         tt and (lambda: torch.diagonal(g_t)), None),
        ("outer", lambda: xp.linalg.outer(v_s, w_s), lambda: np.outer(v_n, w_n),
         tt and (lambda: torch.outer(v_t, w_t)), None),
        ("tensordot", lambda: xp.tensordot(g_s, g_s, axes=1),
         lambda: np.tensordot(g_n, g_n, axes=1),
         tt and (lambda: torch.tensordot(g_t, g_t, dims=1)), None),
        ("triu", lambda: xp.triu(g_s), lambda: np.triu(g_n),
         tt and (lambda: torch.triu(g_t)), None),
    ]  # fmt: skip
    if n <= 1 << 16:  # (a general eigenproblem of 1000 x 1000 takes seconds a call)
        table.append(("eig", lambda: xp.linalg.eig(g_s), lambda: la.eig(g_n),
                      tt and (lambda: tl.eig(g_t)), _magnitudes))  # fmt: skip
        table.append(("eigvals", lambda: xp.linalg.eigvals(g_s), lambda: la.eigvals(g_n),
                      tt and (lambda: tl.eigvals(g_t)), _value_magnitudes))  # fmt: skip
    return table


#: (name, which input) of the fft extension's transforms: complex or real, 1-D or a square
FFT_TRANSFORMS = (
    ("fft", "c"), ("ifft", "c"), ("rfft", "r"), ("irfft", "c"), ("hfft", "c"), ("ihfft", "r"),
    ("fftn", "c2"), ("ifftn", "c2"), ("rfftn", "r2"), ("irfftn", "c2"), ("fftshift", "r"),
    ("ifftshift", "r2"),
)  # fmt: skip


def fft_cases(dtypes, sizes, layouts):
    """The fft extension on n elements (complex of the dtype's precision where the transform
    takes complex input; the n-dimensional ones on a square), contiguous."""
    if "contig" not in layouts:
        return
    for dtype in dtypes:
        if dtype == INT_DTYPE:
            continue
        for n in sizes:
            for op, f_s, f_n, f_t in _fft_table(dtype, n):
                yield Case(
                    "", op, dtype, n, "contig", f_s, f_n, f_t,
                    # (NumPy computes single precision in double and casts)
                    rtol=(1e-2 if dtype == "float32" else 1e-8) if "freq" not in op else None,
                    exact=op in ("fftshift", "ifftshift"),
                )  # fmt: skip


def _fft_table(dtype: str, n: int) -> list:
    """(op, strided, NumPy, PyTorch or None) calls of the fft extension on ``n`` elements."""
    tt = torch is not None
    rng = np.random.default_rng(n + 1)
    r_n = rng.standard_normal(n).astype(dtype)
    c_n = (r_n + 1j * rng.standard_normal(n)).astype(np.complex64 if dtype == "float32" else
                                                      np.complex128)  # fmt: skip
    inputs = {}
    for key, a in (("r", r_n), ("c", c_n), ("r2", _square(r_n)), ("c2", _square(c_n))):
        inputs[key] = (xp.asarray(a), a, _torch_of(a))
    table = []
    for op, which in FFT_TRANSFORMS:
        a_s, a_n, a_t = inputs[which]
        f_s, f_n = getattr(xp.fft, op), getattr(np.fft, op)
        f_t = getattr(torch.fft, op) if tt else None
        table.append((op, lambda f=f_s, a=a_s: f(a), lambda f=f_n, a=a_n: f(a),
                      tt and (lambda f=f_t, a=a_t: f(a))))  # fmt: skip
    xd, td = getattr(xp, dtype), getattr(torch, dtype) if tt else None
    for op in ("fftfreq", "rfftfreq"):
        f_s, f_n = getattr(xp.fft, op), getattr(np.fft, op)
        f_t = getattr(torch.fft, op) if tt else None
        table.append((op, lambda f=f_s: f(n, d=0.5, dtype=xd),
                      lambda f=f_n: f(n, d=0.5).astype(dtype),
                      tt and (lambda f=f_t: f(n, d=0.5, dtype=td))))  # fmt: skip
    return table


#: calls longer than this many seconds are timed in LONG_CALL_REPEAT batches of one call
LONG_CALL = 0.01
LONG_CALL_REPEAT = 3


def timeit(fns, repeat: int, budget: float) -> list[float]:
    """Best mean time per call (seconds) of each of ``fns`` over ``repeat`` batches of about
    ``budget`` seconds, the functions' batches interleaved (strided, NumPy, PyTorch, strided, ...).

    The best batch, not the mean: on a shared machine a batch that a descheduled thread held up
    (prange and PyTorch's pool wait for their slowest thread) says nothing about the kernel.
    Interleaved: this machine's slow spells last milliseconds (a virtual CPU held by the host, a
    second thread that gains nothing for a while), so timing one library's batches after the
    other's let one spell fall on every batch of one library and none of the other's.
    Each batch follows one untimed call of its function: the first parallel call after another
    library's pool ran waits for that pool's spinning threads to give the two cores back
    (~200 us here, strided's after PyTorch's and PyTorch's after strided's), a hand-over
    between libraries that a program using one of them does not pay, which fell on every batch.
    """
    numbers = []
    slowest = 0.0
    for fn in fns:
        fn()
        t0 = time.perf_counter()
        fn()
        one = max(time.perf_counter() - t0, 1e-7)
        slowest = max(slowest, one)
        numbers.append(max(1, min(10_000, int(budget / one))))
    if slowest > LONG_CALL:  # (a decomposition of 1000 x 1000: its spread is a few percent)
        repeat = min(repeat, LONG_CALL_REPEAT)
    best = [math.inf] * len(fns)
    for _ in range(repeat):
        for i, (fn, number) in enumerate(zip(fns, numbers)):
            fn()
            t0 = time.perf_counter()
            for _ in range(number):
                fn()
            best[i] = min(best[i], (time.perf_counter() - t0) / number)
    return best


def _fmt(t: float | None) -> str:
    if t is None:
        return f"{'-':>10s}"
    return f"{t * 1e6:8.1f}us" if t < 1e-3 else f"{t * 1e3:8.2f}ms"


def geomean(xs) -> float:
    xs = list(xs)
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer, shorter repeats")
    parser.add_argument("--filter", default="", help="regex on the case name (op dtype n layout)")
    parser.add_argument("--sizes", default="4096,1000000")
    parser.add_argument("--dtypes", default=f"float32,float64,{INT_DTYPE}")
    parser.add_argument("--layouts", default="contig,transposed")
    parser.add_argument("--no-torch", action="store_true", help="skip the PyTorch column")
    parser.add_argument("--repeat", type=int, default=None, help="timed batches per case")
    parser.add_argument(
        "--threads", type=int, default=2, help="threads for strided's parallel loops and PyTorch"
    )
    parser.add_argument(
        "--recheck",
        type=int,
        default=2,
        help="passes re-timing the cases slower than NumPy or PyTorch at the end (0: none)",
    )
    args = parser.parse_args(argv)
    global torch
    if args.no_torch:
        torch = None
    if torch is not None:
        torch.set_num_threads(args.threads)
    import numba

    numba.set_num_threads(min(args.threads, numba.config.NUMBA_NUM_THREADS))
    sizes = [int(s) for s in args.sizes.split(",")]
    dtypes = args.dtypes.split(",")
    layouts = args.layouts.split(",")
    repeat = args.repeat or (7 if args.quick else 9)
    budget = 0.001 if args.quick else 0.003
    pattern = re.compile(args.filter)

    cases = [
        c
        for gen in (
            elementwise_cases,
            reduction_cases,
            other_cases,
            namespace_cases,
            linalg_cases,
            fft_cases,
        )
        for c in gen(dtypes, sizes, layouts)
        if pattern.search(c.name)
    ]
    cols = ("strided", "numpy", "torch", "/numpy", "/torch")
    header = f"{'case':46s} " + " ".join(f"{c:>{10 if i < 3 else 7}s}" for i, c in enumerate(cols))
    print(f"(OPENBLAS_THREAD_TIMEOUT={os.environ['OPENBLAS_THREAD_TIMEOUT']})")
    print(header)
    print("-" * len(header))
    rows, wrong, timed = [], [], []
    for c in cases:
        err = check(c)
        if err:
            wrong.append((c.name, err))
            print(f"{c.name:46s} WRONG: {err}")
            continue
        fns = [c.f_s, c.f_n]
        if c.f_t:
            try:
                c.f_t()
                fns.append(c.f_t)
            except (TypeError, RuntimeError, IndexError):  # PyTorch lacks this op or dtype
                pass
        times = timeit(fns, repeat, budget)
        rows.append(_row(c, times, print_it=True))
        timed.append((c, fns, times))
    summarize(rows, wrong)
    if args.recheck and rows:
        recheck(timed, rows, wrong, args.recheck, repeat, budget)
    return 1 if wrong else 0


def _row(c: Case, times, print_it: bool = False) -> tuple:
    """(case, strided/NumPy, strided/PyTorch or None) from the libraries' times."""
    ts, tn, *rest = times
    tt = rest[0] if rest else None
    rn = ts / tn
    rt = ts / tt if tt else None
    if print_it:
        print(
            f"{c.name:46s} {_fmt(ts)} {_fmt(tn)} {_fmt(tt)} {rn:7.2f} "
            f"{'' if rt is None else f'{rt:7.2f}'}",
            flush=True,
        )
    return (c, rn, rt)


def recheck(timed, rows, wrong, passes: int, repeat: int, budget: float) -> None:
    """Time the cases that came out slower than NumPy or PyTorch ``passes`` more times, each
    library's best time kept over all its passes, and summarize again.  This machine's slow
    spells last seconds to minutes and take the second thread's gain away (every library's
    times move); a case slower in every pass is slower, one faster in another pass was
    measured in a spell.  The first pass's summary above stays the headline figure."""
    slow = [i for i, (_, rn, rt) in enumerate(rows) if rn > 1.0 or (rt is not None and rt > 1.0)]
    if not slow:
        return
    print()
    print(f"re-timing the {len(slow)} slower cases, {passes} more passes (best of all passes):")
    best = {i: list(timed[i][2]) for i in slow}
    for _ in range(passes):
        for i in slow:
            again = timeit(timed[i][1], repeat, budget)
            best[i] = [min(a, b) for a, b in zip(best[i], again)]
    rows = list(rows)
    for i in slow:
        rows[i] = _row(timed[i][0], best[i], print_it=True)
    summarize(rows, wrong)


def summarize(rows, wrong) -> None:
    print()
    print(f"cases: {len(rows)} timed, {len(wrong)} WRONG")
    if not rows:
        return
    for n in sorted({c.n for c, _, _ in rows}):
        sel = [(c, rn, rt) for c, rn, rt in rows if c.n == n]
        slow_np = [r for r in sel if r[1] > 1.0]
        with_t = [r for r in sel if r[2] is not None]
        slow_t = [r for r in with_t if r[2] > 1.0]
        print(
            f"n={n}: {len(slow_np)}/{len(sel)} slower than NumPy, "
            f"geomean /numpy {geomean(r[1] for r in sel):.3f}; "
            f"{len(slow_t)}/{len(with_t)} slower than PyTorch, "
            f"geomean /torch {geomean(r[2] for r in with_t):.3f}"
        )
    print(f"all: geomean /numpy {geomean(r[1] for r in rows):.3f}")
    print("worst ten vs NumPy:")
    for c, rn, _ in sorted(rows, key=lambda r: -r[1])[:10]:
        print(f"  {c.name:46s} {rn:7.2f}")
    with_t = [r for r in rows if r[2] is not None]
    if with_t:
        print("worst ten vs PyTorch:")
        for c, _, rt in sorted(with_t, key=lambda r: -r[2])[:10]:
            print(f"  {c.name:46s} {rt:7.2f}")


if __name__ == "__main__":
    raise SystemExit(main())
