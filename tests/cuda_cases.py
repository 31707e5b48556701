"""Shared by the cuda tests: running op-table samples on the cuda device and comparing them with
the cpu backend (host execution where no GPU exists, the GPU in tests marked ``gpu``)."""

from __future__ import annotations

import importlib.util
import shutil
import warnings

import numpy as np
import pytest

from strided import dispatch

from .test_meta_agreement import AGREEMENT_CASES, _compare, _flat, _inputs

HAVE_CUPY = importlib.util.find_spec("cupy") is not None
NO_CUPY = (
    "CuPy is not installed (pip install -e '.[cuda]'); CI must install the cuda extra for the "
    "cuda tests to count"
)
CUDA_INSTALLED = ("add", "cuda") in dispatch.registered()
HAVE_GXX = shutil.which("g++") is not None

#: the marks of a module that runs the cuda device on host execution
HOST_EXECUTION_MARKS = [
    pytest.mark.skipif(not (HAVE_CUPY and CUDA_INSTALLED), reason=NO_CUPY),
    pytest.mark.skipif(not HAVE_GXX, reason="host execution needs g++ (C++17) on PATH"),
]


def run(op, s, device):
    """("ok", flat result) or ("raises", exception) of sample ``s`` of ``op`` on ``device``."""
    _, _, args, kwargs = _inputs(op, s, device)
    try:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = op.fn(*args, **kwargs)
            flat = _flat(res)
    except Exception as e:  # noqa: BLE001  (the exception type is what is compared)
        return ("raises", e)
    return ("ok", flat)


def _missing_kernel(e: BaseException) -> bool:
    return isinstance(e, NotImplementedError) and "cuda" in str(e)


def check_against_cpu(op, s) -> None:
    """Sample ``s`` of ``op`` on cuda gives cpu's values (or raises cpu's exception type); a
    primitive without a cuda kernel yet skips, naming it."""
    cpu = run(op, s, "cpu")
    cuda = run(op, s, "cuda")
    if cuda[0] == "raises" and _missing_kernel(cuda[1]):
        pytest.skip(f"not on cuda yet: {cuda[1]}")
    if cpu[0] == "raises":
        assert cuda[0] == "raises" and isinstance(cuda[1], type(cpu[1])), (
            f"{op.name}[{s.id}]: cpu raises {cpu[1]!r}; cuda gives {cuda[1]!r}"
        )
        return
    assert cuda[0] == "ok", f"{op.name}[{s.id}]: cpu computes it; cuda raises {cuda[1]!r}"
    got, want = cuda[1], cpu[1]
    if op.post is not None:
        got, want = _flat(op.post(*got)), _flat(op.post(*want))
    _compare(op, s.id, got, want)


CASES = [c for c in AGREEMENT_CASES if not c.marks]
