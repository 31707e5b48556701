"""Every op-table entry, every sample: meta and cpu agree on output shapes and dtypes, or raise
the same exception type (zero-size inputs and error samples included); data-dependent samples
are refused on meta with an error saying so; cpu values match the NumPy reference; and every
public function of the namespace, ``strided.linalg`` and ``strided.fft`` has an entry.

Disagreements that are known and being fixed are listed, with a reproducer, in
``KNOWN_META_DISAGREEMENTS`` (and bugs that every device shares in ``op_table.KNOWN_BUGS``):
those cases are strict xfails, so a fix makes the test fail until the entry is removed.
"""

from __future__ import annotations

import re
import types
import warnings

import numpy as np
import pytest

import strided as xp
from strided import _dtypes as sdt

from .op_table import BY_NAME, KNOWN_BUGS, NONCONTIGUOUS, OP_TABLE, OpInfo, Sample
from .strategies import in_layout

# (op, sample id) -> what differs, and a reproducer
# meta runs the same rules as cpu (strided.dispatch.apply), so there is none; an entry here
# would be (op, sample id) -> what differs, with a reproducer, and is run as a strict xfail
KNOWN_META_DISAGREEMENTS: dict[tuple[str, str], str] = {}


# -- running a sample on a device -----------------------------------------------------------------


def _convert(v, layout, device):
    """(NumPy values, strided values): every ndarray inside ``v`` built in ``layout``."""
    if isinstance(v, np.ndarray):
        return in_layout(v, layout, device)
    if isinstance(v, (list, tuple)):
        pairs = [_convert(e, layout, device) for e in v]
        return type(v)(p[0] for p in pairs), type(v)(p[1] for p in pairs)
    if isinstance(v, dict):
        pairs = {k: _convert(e, layout, device) for k, e in v.items()}
        return {k: p[0] for k, p in pairs.items()}, {k: p[1] for k, p in pairs.items()}
    return v, v


def _arrays(v):
    if isinstance(v, xp.Array):
        yield v
    elif isinstance(v, (list, tuple)):
        for e in v:
            yield from _arrays(e)
    elif isinstance(v, dict):
        for e in v.values():
            yield from _arrays(e)


def _inputs(op: OpInfo, s: Sample, device: str):
    """(NumPy args, NumPy kwargs, strided args, strided kwargs) for ``s`` on ``device``."""
    np_args, args = _convert(s.args, s.layout, device)
    np_kwargs, kwargs = _convert(s.kwargs, s.layout, device)
    if op.creation:
        kwargs = {**kwargs, "device": device}
    return np_args, np_kwargs, args, kwargs


def _summary(res):
    """What meta must reproduce: shapes and dtypes of arrays, other results as they are."""
    if isinstance(res, xp.Array):
        return ("array", res.shape, res.dtype)
    if isinstance(res, (list, tuple)) and not isinstance(res, (str, bytes)):
        return tuple(_summary(r) for r in res)
    return res


def _outcome(op: OpInfo, s: Sample, device: str):
    """("ok", summary, result, inputs) or ("raises", type, exception, inputs)."""
    inputs = _inputs(op, s, device)
    try:
        res = op.fn(*inputs[2], **inputs[3])
    except Exception as e:  # noqa: BLE001  (the exception type is what is compared)
        return ("raises", type(e), e, inputs)
    return ("ok", _summary(res), res, inputs)


def _layout(a: xp.Array):
    """Strides that matter: those of dimensions longer than 1, none for an empty array."""
    if 0 in a.shape:
        return (a.shape, None)
    return (a.shape, tuple(st for n, st in zip(a.shape, a.strides) if n > 1))


def _show(out) -> str:
    if out[0] == "raises":
        return f"raises {out[1].__name__}: {out[2]}"
    return f"returns {out[1]}"


# -- the cases ------------------------------------------------------------------------------------


def _cases(*, values: bool):
    known = set(KNOWN_META_DISAGREEMENTS)
    for op in OP_TABLE:
        for s in op.samples():
            if values and (s.error is not None or not s.check_values):
                continue
            marks = ()
            if not values and (op.name, s.id) in known:
                why = KNOWN_META_DISAGREEMENTS[(op.name, s.id)]
                marks = pytest.mark.xfail(strict=True, reason=why)
            if (op.name, s.id) in KNOWN_BUGS:  # wrong on every device: see op_table.py
                marks = pytest.mark.xfail(strict=True, reason=KNOWN_BUGS[(op.name, s.id)])
            yield pytest.param(op, s, id=f"{op.name}::{s.id}", marks=marks)


AGREEMENT_CASES = list(_cases(values=False))
VALUE_CASES = list(_cases(values=True))


@pytest.mark.parametrize("op,s", AGREEMENT_CASES)
def test_meta_agrees_with_cpu(op: OpInfo, s: Sample):
    cpu = _outcome(op, s, "cpu")
    meta = _outcome(op, s, "meta")
    where = f"{op.name}[{s.id}]: cpu {_show(cpu)}; meta {_show(meta)}"
    if s.error is not None:
        assert cpu[0] == "raises" and issubclass(cpu[1], s.error), (
            f"error sample {op.name}[{s.id}] must raise {s.error.__name__} on cpu: {_show(cpu)}"
        )
    if s.data_dependent:
        assert cpu[0] == "ok", where
        assert meta[0] == "raises" and re.search(
            r"meta.*(depend|value)|(depend|value).*meta", str(meta[2])
        ), f"{op.name}[{s.id}] depends on values: meta must refuse it naming meta; {_show(meta)}"
        return
    # inputs in the same layout on both devices (views follow the same rules everywhere)
    cpu_in = [_layout(a) for a in _arrays((cpu[3][2], cpu[3][3]))]
    meta_in = [_layout(a) for a in _arrays((meta[3][2], meta[3][3]))]
    assert cpu_in == meta_in, f"{op.name}[{s.id}]: input strides {cpu_in} on cpu, {meta_in} on meta"
    assert cpu[:2] == meta[:2], where
    if meta[0] == "ok":
        outs = list(_arrays(meta[2]))
        assert all(o.device == xp.Device("meta") for o in outs), where


# -- values against NumPy -------------------------------------------------------------------------

_TOL = {
    "tight": {"f32": (2e-5, 1e-6), "f64": (1e-12, 1e-13)},  # the elementwise convention
    "loose": {"f32": (2e-4, 2e-5), "f64": (1e-9, 1e-11)},  # reductions, linalg, fft
}


def _flat(res) -> list:
    """A result as a flat list of NumPy arrays (arrays, dtypes) and plain values."""
    if isinstance(res, xp.Array):
        # an accelerator's array is copied to the host explicitly (NumPy may not do it implicitly)
        return [np.asarray(res if res.device.type in ("cpu", "meta") else res.to_device("cpu"))]
    if isinstance(res, sdt.DType):
        return [np.dtype(res.numpy)]
    if isinstance(res, (np.ndarray, np.generic)):
        return [np.asarray(res)]
    if isinstance(res, (list, tuple)):
        return [v for r in res for v in _flat(r)]
    return [res]


def _compare(op: OpInfo, sid: str, got, want) -> None:
    assert len(got) == len(want), f"{op.name}[{sid}]: {len(got)} outputs, NumPy has {len(want)}"
    for i, (g, w) in enumerate(zip(got, want)):
        msg = f"{op.name}[{sid}] output {i}"
        if not isinstance(w, np.ndarray) or isinstance(w, np.dtype):
            assert g == w, f"{msg}: {g!r} != NumPy's {w!r}"
            continue
        assert isinstance(g, np.ndarray), f"{msg}: got {g!r}, NumPy gives an array"
        assert g.shape == w.shape, f"{msg}: shape {g.shape} != NumPy's {w.shape}"
        if op.check_dtype:
            assert g.dtype == w.dtype, f"{msg}: dtype {g.dtype} != NumPy's {w.dtype}"
        if not op.check_values:
            continue
        # the sign of a complex number is a rounded quotient z / |z| (complex64 in double
        # precision, rounded once; NumPy divides in float32): compared with a tolerance
        rounded = op.name == "sign" and w.dtype.kind == "c"
        exact = (
            (op.tol == "exact" and not rounded) or w.dtype.kind in "biu" or g.dtype.kind in "biu"
        )
        if exact:
            np.testing.assert_array_equal(g, w.astype(g.dtype, copy=False), err_msg=msg)
        else:
            single = np.dtype(g.dtype) in (np.float32, np.complex64)
            rtol, atol = _TOL["tight" if rounded else op.tol]["f32" if single else "f64"]
            np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, equal_nan=True, err_msg=msg)


@pytest.mark.parametrize("op,s", VALUE_CASES)
def test_cpu_values_match_numpy(op: OpInfo, s: Sample):
    np_args, np_kwargs, args, kwargs = _inputs(op, s, "cpu")
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            want = op.reference(*np_args, **np_kwargs)
        except Exception:  # noqa: BLE001
            with pytest.raises(Exception):  # noqa: B017  (NumPy's types are not the standard's)
                op.fn(*args, **kwargs)
            return
    got = _flat(op.fn(*args, **kwargs))
    want = _flat(want)
    if op.post is not None:
        got, want = _flat(op.post(*got)), _flat(op.post(*want))
    _compare(op, s.id, got, want)


# -- the table itself -----------------------------------------------------------------------------


def _public(mod, names) -> set[str]:
    return {
        n
        for n in names
        if not n.startswith("_")
        and callable(getattr(mod, n))
        and not isinstance(getattr(mod, n), (type, types.ModuleType))
    }


# not operations: the default-device context and its query
NOT_OPERATIONS = {"default_device", "get_default_device"}
NOT_OPERATIONS |= {"save_file", "load_file"}  # checkpoint file I/O, not array operations


def test_every_public_function_has_an_entry():
    missing = sorted(_public(xp, dir(xp)) - NOT_OPERATIONS - set(BY_NAME))
    for ext in ("linalg", "fft"):
        mod = getattr(xp, ext)
        for n in sorted(_public(mod, mod.__all__)):
            same = getattr(xp, n, None) is getattr(mod, n)  # matmul, tensordot, ... re-exported
            if f"{ext}.{n}" not in BY_NAME and not (same and n in BY_NAME):
                missing.append(f"{ext}.{n}")
    assert not missing, f"functions without an op-table entry: {missing}"
    assert {"getitem", "setitem"} <= set(BY_NAME)


def _has(samples, pred) -> bool:
    return any(pred(a) for s in samples for a in _ndarrays((s.args, s.kwargs)))


def _ndarrays(v):
    if isinstance(v, np.ndarray):
        yield v
    elif isinstance(v, (list, tuple)):
        for e in v:
            yield from _ndarrays(e)
    elif isinstance(v, dict):
        for e in v.values():
            yield from _ndarrays(e)


# entries whose inputs are not arrays of data (creation from scalars, dtype functions)
NO_ARRAY_INPUTS = {
    "arange", "eye", "linspace", "zeros", "ones", "empty", "full", "broadcast_shapes",
    "result_type", "can_cast", "isdtype", "finfo", "iinfo", "fft.fftfreq", "fft.rfftfreq",
}  # fmt: skip
# entries with nothing to reject (beyond what their inputs' own constructors reject)
NO_ERROR_SAMPLES = {
    "zeros_like", "ones_like", "empty_like", "full_like", "can_cast", "isin",
    "unique_values", "unique_counts", "unique_inverse", "unique_all",
}  # fmt: skip
# entries that accept a single dtype, or whose dtype is not the point (pure index/shape ops)
ONE_DTYPE = {"logical_and", "logical_or", "logical_xor", "logical_not", "meshgrid"}


@pytest.mark.parametrize("op", OP_TABLE, ids=lambda op: op.name)
def test_entry_is_complete(op: OpInfo):
    """Samples of several dtypes, a zero-size and a 0-d input (valid or an error sample), a
    non-contiguous layout, and error samples."""
    samples = op.samples()
    good = [s for s in samples if s.error is None]
    assert good, f"{op.name} has no samples"
    assert callable(op.fn) and callable(op.reference)
    if op.name not in NO_ERROR_SAMPLES:
        assert len(good) < len(samples), f"{op.name}: no error sample"
    if op.name in NO_ARRAY_INPUTS:
        return
    if op.name != "asarray":  # asarray's zero-size and 0-d inputs are Python lists and scalars
        assert _has(good, lambda a: a.size == 0), f"{op.name}: no zero-size sample"
        assert _has(samples, lambda a: a.ndim == 0), f"{op.name}: no 0-d sample"
    layouts = {s.layout for s in good}
    assert layouts & set(NONCONTIGUOUS), f"{op.name}: no non-contiguous sample"
    if op.name not in ONE_DTYPE:
        dtypes = {a.dtype for s in good for a in _ndarrays((s.args, s.kwargs))}
        assert len(dtypes) > 1, f"{op.name}: samples of one dtype only ({dtypes})"


def test_known_disagreements_name_real_samples():
    ids = {(op.name, s.id) for op in OP_TABLE for s in op.samples()}
    known = set(KNOWN_META_DISAGREEMENTS) | set(KNOWN_BUGS)
    assert known <= ids, known - ids


def _first_float_sample(op: OpInfo):
    for s in op.samples():
        arrs = list(_ndarrays((s.args, s.kwargs)))
        if op.name == "setitem" and not isinstance(s.args[2], np.ndarray):
            continue  # the written value is what carries the gradient
        if s.error is None and not s.data_dependent and arrs and arrs[0].dtype == np.float64:
            if all(a.size for a in arrs):
                return s
    return None


@pytest.mark.parametrize(
    "op", [op for op in OP_TABLE if _first_float_sample(op)], ids=lambda op: op.name
)
def test_differentiable_flag_matches_the_tape(op: OpInfo):
    """On meta (no kernels): float inputs that require grad give an output in the graph exactly
    when the table says the op is differentiable."""
    s = _first_float_sample(op)
    _, _, args, kwargs = _inputs(op, s, "meta")
    leaves = list(_arrays((args, kwargs)))
    if op.name == "setitem":  # a leaf that requires grad cannot be written into: the value can
        leaves = leaves[1:]
    for a in leaves:
        if a.dtype in (xp.float64, xp.complex128):
            a.requires_grad_()
    res = op.fn(*args, **kwargs)
    outs = [o for o in _arrays(res) if o.dtype in (xp.float64, xp.complex128, xp.float32)]
    tracked = any(o.requires_grad for o in outs)
    msg = f"{op.name}[{s.id}]: output requires_grad={tracked}, table: {op.differentiable}"
    if tracked and not op.differentiable:
        # recorded, but its backward refuses (as PyTorch's nextafter)
        with pytest.raises(RuntimeError, match=op.name):
            xp.sum(xp.real(outs[0]) if outs[0].dtype == xp.complex128 else outs[0]).backward()
        return
    assert tracked == op.differentiable, msg
