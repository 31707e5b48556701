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


def _host(x) -> np.ndarray:
    return np.asarray(x.to_device("cpu"))


def test_cupy_arrays_come_in_without_a_copy():
    import cupy

    c = cupy.arange(12.0).reshape(3, 4)[:, ::2]
    x = xp.asarray(c)
    assert x.device == xp.asarray(0, device="cuda").device
    x[0, 0] = 42.0
    assert float(c[0, 0]) == 42.0
    np.testing.assert_array_equal(_host(xp.from_dlpack(c)), cupy.asnumpy(c))


def test_torch_cuda_tensors_come_in_and_go_out_without_a_copy():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("this PyTorch has no CUDA")
    t = torch.arange(6.0, device="cuda").reshape(2, 3)
    x = xp.from_dlpack(t)
    x[0, 0] = 42.0
    assert float(t[0, 0]) == 42.0
    back = torch.from_dlpack(x.T)
    assert back.device.type == "cuda" and back.shape == (3, 2)
    back[2, 1] = -1.0
    assert float(x[1, 2].to_device("cpu")) == -1.0
    y = xp.asarray(t, dtype=xp.float32)  # float32 -> float32: still a view
    y[1, 1] = 7.0
    assert float(t[1, 1]) == 7.0


def test_float_matmul_runs_on_cublas(gpu):
    calls = []
    orig = gpu.library.matmul
    gpu.library.matmul = lambda *a, **k: calls.append(1) or orig(*a, **k)
    try:
        a = np.random.default_rng(0).standard_normal((4, 96, 80)).astype(np.float32)
        b = np.random.default_rng(1).standard_normal((80, 64)).astype(np.float32)
        got = _host(xp.asarray(a, device="cuda") @ xp.asarray(b, device="cuda"))
    finally:
        gpu.library.matmul = orig
    assert calls
    np.testing.assert_allclose(got, a @ b, rtol=1e-4, atol=1e-4)


def test_cusolver_failures_are_linalg_errors_naming_the_matrix():
    a = np.stack([np.eye(3), np.ones((3, 3))])
    with pytest.raises(xp.linalg.LinAlgError, match=r"^inv: .*batch index \(1,\)"):
        xp.linalg.inv(xp.asarray(a, device="cuda"))
    with pytest.raises(xp.linalg.LinAlgError, match="^cholesky: "):
        xp.linalg.cholesky(xp.asarray(-np.eye(2), device="cuda"))


@pytest.mark.parametrize("fn", [xp.linalg.det, xp.linalg.svdvals, xp.linalg.eigvalsh])
def test_zero_sized_stacks_on_gpu(fn):
    a = np.zeros((2, 0, 0))
    np.testing.assert_array_equal(
        _host(fn(xp.asarray(a, device="cuda"))), np.asarray(fn(xp.asarray(a)))
    )


def test_cpu_dlpack_export_of_gpu_memory_copies_or_refuses():
    x = xp.asarray(np.arange(4.0), device="cuda")
    with pytest.raises(BufferError):
        x.__dlpack__(dl_device=(1, 0), copy=False)
    assert x.__dlpack__(dl_device=(1, 0)) is not None  # a copy to the host
