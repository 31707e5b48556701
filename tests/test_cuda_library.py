"""The cuda kernels that call vendor libraries (``strided/backends/cuda/_library.py``): cuSOLVER,
cuFFT and cuBLAS on a GPU, NumPy standing in for them on host execution.  Here, without a GPU, the
code around the library calls runs: views of the device buffers, stacks, outputs, the route of
zero-sized stacks and of float matmul, and failures turned into strided's LinAlgError, compared
with the cpu backend.  The op table's linalg/fft samples run in ``test_cuda_host.py``."""

from __future__ import annotations

import numpy as np
import pytest

import strided as xp

from .cuda_cases import HOST_EXECUTION_MARKS

pytestmark = [*HOST_EXECUTION_MARKS, pytest.mark.usefixtures("cuda_host")]


def _host(x) -> np.ndarray:
    return np.asarray(x.to_device("cpu"))


def _both(fn, *arrays):
    """fn over the arrays on cpu and on cuda, as NumPy arrays (tuples for multi-output results)."""
    cpu = fn(*(xp.asarray(a) for a in arrays))
    cuda = fn(*(xp.asarray(a, device="cuda") for a in arrays))
    if isinstance(cpu, tuple):
        return [np.asarray(c) for c in cpu], [_host(c) for c in cuda]
    return np.asarray(cpu), _host(cuda)


RNG = np.random.default_rng(12)


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "complex128"])
@pytest.mark.parametrize(
    "shapes",
    [((3, 4), (4, 5)), ((2, 3, 4), (4, 2)), ((4,), (2, 4, 3)), ((2, 1, 3, 4), (5, 4, 2)),
     ((5, 3), (3,)), ((1, 7), (7, 1))],
)  # fmt: skip
def test_float_matmul_through_the_library_route_matches_cpu(cuda_host, shapes, dtype):
    a = RNG.standard_normal(shapes[0]).astype(dtype)
    b = RNG.standard_normal(shapes[1]).astype(dtype)
    kernel_result = _both(xp.matmul, a, b)[1]
    cuda_host.library.blas_matmul = True  # what a GPU does: cuBLAS (NumPy stands in for it here)
    want, got = _both(xp.matmul, a, b)
    tol = 1e-5 if dtype in ("float32", "complex64") else 1e-12
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)
    np.testing.assert_allclose(kernel_result, want, rtol=tol, atol=tol)


def test_matmul_of_transposed_views_through_the_library_route(cuda_host):
    cuda_host.library.blas_matmul = True
    a = RNG.standard_normal((6, 4))
    b = RNG.standard_normal((5, 6))
    want = a.T @ b.T
    ca, cb = xp.asarray(a, device="cuda"), xp.asarray(b, device="cuda")
    np.testing.assert_allclose(_host(xp.matmul(ca.T, cb.T)), want, rtol=1e-12)


def test_integer_matmul_stays_on_the_kernel(cuda_host):
    cuda_host.library.blas_matmul = True
    calls = []
    orig = cuda_host.library.matmul
    cuda_host.library.matmul = lambda *a, **k: calls.append(1) or orig(*a, **k)
    a = np.arange(12, dtype=np.int32).reshape(3, 4)
    want, got = _both(xp.matmul, a, a.T.copy())
    np.testing.assert_array_equal(got, want)
    assert not calls


def test_a_singular_matrix_in_a_stack_names_its_index_as_on_cpu():
    a = np.stack([np.eye(3), np.ones((3, 3)), np.eye(3)])
    for fn, name in ((xp.linalg.inv, "inv"), (lambda m: xp.linalg.solve(m, m), "solve")):
        with pytest.raises(xp.linalg.LinAlgError, match=rf"^{name}: .*batch index \(1,\)"):
            fn(xp.asarray(a, device="cuda"))
        with pytest.raises(xp.linalg.LinAlgError, match=rf"^{name}: .*batch index \(1,\)"):
            fn(xp.asarray(a))


def test_cholesky_of_a_matrix_that_is_not_positive_definite():
    a = np.array([[1.0, 2.0], [2.0, 1.0]])
    with pytest.raises(xp.linalg.LinAlgError, match="^cholesky: .*not positive definite"):
        xp.linalg.cholesky(xp.asarray(a, device="cuda"))


def test_eig_refuses_non_finite_input_as_cpu_does():
    a = np.array([[[1.0, 0.0], [0.0, 1.0]], [[np.nan, 0.0], [0.0, 1.0]]])
    for dev in ("cpu", "cuda"):
        with pytest.raises(xp.linalg.LinAlgError, match=r"^eigvals: .*\(1,\)"):
            xp.linalg.eigvals(xp.asarray(a, device=dev))


@pytest.mark.parametrize(
    "fn",
    [xp.linalg.det, xp.linalg.inv, xp.linalg.slogdet, xp.linalg.eigh, xp.linalg.svd,
     xp.linalg.svdvals, xp.linalg.qr, xp.linalg.eigvalsh, xp.linalg.cholesky],
    ids=lambda f: f.__name__,
)  # fmt: skip
@pytest.mark.parametrize("shape", [(3, 0, 0), (0, 2, 2)])
def test_zero_sized_stacks_on_the_host_route_match_cpu(cuda_host, fn, shape):
    cuda_host.library.empty_on_host = True  # what a GPU does with them
    a = np.zeros(shape)
    want, got = _both(fn, a)
    for w, g in zip(
        want if isinstance(want, list) else [want], got if isinstance(got, list) else [got]
    ):
        assert g.shape == w.shape and g.dtype == w.dtype
        np.testing.assert_array_equal(g, w)


def test_solve_with_an_empty_right_hand_side_reads_the_matrices_on_the_host_route(cuda_host):
    """solve of non-empty matrices with zero right-hand sides goes to the host route (an empty
    output): the matrices are read there, so a singular one raises and an invertible one does
    not, on every call, as on cpu (an uninitialised stand-in for them made the outcome random:
    the conformance suite on a GPU caught it)."""
    cuda_host.library.empty_on_host = True  # what a GPU does with them
    eye = np.broadcast_to(np.eye(4, dtype=np.complex64), (5, 4, 4)).copy()
    singular = eye.copy()
    singular[3, 2, 2] = 0
    for _ in range(20):
        for rhs in (np.zeros((5, 4, 0), np.complex64), np.zeros((4, 0), np.complex64)):
            want, got = _both(xp.linalg.solve, eye, rhs)
            assert got.shape == want.shape and got.dtype == want.dtype
            for device in ("cpu", "cuda"):
                with pytest.raises(xp.linalg.LinAlgError, match=r"^solve: .*singular"):
                    xp.linalg.solve(
                        xp.asarray(singular, device=device), xp.asarray(rhs, device=device)
                    )


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_fftn_over_strided_axes_matches_cpu(dtype):
    x = (RNG.standard_normal((4, 6, 8)) + 1j * RNG.standard_normal((4, 6, 8))).astype(dtype)
    tol = 1e-4 if dtype == "complex64" else 1e-12

    def fn(a):
        return xp.fft.fftn(xp.permute_dims(a, (2, 0, 1))[:, ::2], axes=(0, 2), norm="ortho")

    want, got = _both(fn, x)
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


def test_irfftn_to_an_odd_length_matches_cpu():
    x = RNG.standard_normal((3, 5, 4)) + 1j * RNG.standard_normal((3, 5, 4))
    want, got = _both(lambda a: xp.fft.irfftn(a, s=(5, 7), axes=(1, 2)), x)
    assert got.shape == want.shape == (3, 5, 7)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


# -- DLPack from GPU memory (PyTorch/CuPy on a GPU; on host execution the exporter below reports
# CUDA memory and exports the host memory behind a cuda array, which is what the runtime reads) --
class _CudaExporter:
    def __init__(self, x):
        self.x, self.dtype = x, x.dtype

    def __dlpack_device__(self):
        return (2, 0)  # kDLCUDA, device 0

    def __dlpack__(self, **kwargs):
        return self.x._export().__dlpack__(**{k: v for k, v in kwargs.items() if k != "stream"})


@pytest.mark.parametrize("view", ["whole", "transposed", "reversed", "strided"])
def test_from_dlpack_of_gpu_memory_shares_it(view):
    base = xp.asarray(np.arange(24.0).reshape(4, 6), device="cuda")
    v = {
        "whole": base,
        "transposed": base.T,
        "reversed": base[::-1, ::-2],
        "strided": base[1::2, ::3],
    }[view]
    y = xp.from_dlpack(_CudaExporter(v))
    assert y.device == xp.asarray(0, device="cuda").device and y.shape == v.shape
    np.testing.assert_array_equal(_host(y), _host(v))
    y[...] = -1.0  # a view: the exporter's memory changes
    np.testing.assert_array_equal(_host(v), np.full(v.shape, -1.0))


def test_asarray_of_gpu_memory_is_a_view_and_copies_when_asked():
    base = xp.asarray(np.arange(6, dtype=np.float32), device="cuda")
    shared = xp.asarray(_CudaExporter(base))
    copied = xp.asarray(_CudaExporter(base), copy=True)
    widened = xp.asarray(_CudaExporter(base), dtype=xp.float64)
    shared[0] = 42.0
    assert float(_host(base)[0]) == 42.0 and float(_host(copied)[0]) == 0.0
    assert widened.dtype == xp.float64 and float(_host(widened)[0]) == 0.0
    with pytest.raises(ValueError, match="^asarray: copy=False"):
        xp.asarray(_CudaExporter(base), dtype=xp.float64, copy=False)


def test_from_dlpack_of_gpu_memory_to_the_cpu_copies_and_refuses_copy_false():
    base = xp.asarray(np.arange(4.0), device="cuda")
    y = xp.from_dlpack(_CudaExporter(base), device="cpu")
    assert y.device == xp.asarray(0).device
    np.testing.assert_array_equal(np.asarray(y), np.arange(4.0))
    with pytest.raises(BufferError, match="^from_dlpack: copy=False, but .* is on cuda:0"):
        xp.from_dlpack(_CudaExporter(base), device="cpu", copy=False)


def test_from_dlpack_of_an_empty_gpu_array():
    y = xp.from_dlpack(_CudaExporter(xp.zeros((0, 3), device="cuda")))
    assert y.shape == (0, 3) and _host(y).shape == (0, 3)
