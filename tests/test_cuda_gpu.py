"""The op table's samples on a real CUDA GPU (CuPy's memory pool, NVRTC-compiled RawModules),
compared with the cpu backend; skipped with a reason where no GPU is present."""

from __future__ import annotations

import numpy as np
import pytest

import strided as xp
from strided import _device

from .cuda_cases import CASES, CUDA_INSTALLED, HAVE_CUPY, NO_CUPY, check_against_cpu

HAVE_GPU = HAVE_CUPY and CUDA_INSTALLED and _device._gpu_count() > 0
pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not (HAVE_CUPY and CUDA_INSTALLED), reason=NO_CUPY),
    pytest.mark.skipif(not HAVE_GPU, reason="no CUDA GPU present"),
]


@pytest.fixture(autouse=True)
def gpu():
    from strided.backends.cuda import host_execution

    with host_execution(False) as rt:
        yield rt


# without a GPU the cases are not even listed: one skip says why
@pytest.mark.parametrize("op,s", CASES if HAVE_GPU else [pytest.param(None, None, id="no-gpu")])
def test_op_table_on_gpu_matches_cpu(op, s):
    check_against_cpu(op, s)


def test_gpu_buffers_are_cupy_arrays_and_dlpack_is_zero_copy():
    import cupy

    x = xp.asarray(np.arange(6.0).reshape(2, 3), device="cuda")
    assert isinstance(x._buf, cupy.ndarray)
    c = cupy.from_dlpack(x)
    c[0, 0] = 42.0
    assert float(x[0, 0]) == 42.0
