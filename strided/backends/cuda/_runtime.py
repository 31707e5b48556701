"""The swappable layer under the cuda kernels: memory and launches.

:class:`GpuRuntime` uses CuPy (its memory pool, ``cupy.RawModule`` compiled by NVRTC, CuPy's
launch).  :class:`HostRuntime` keeps buffers in host memory (NumPy) and runs the same kernel
sources through the host execution layer (``_host``), for machines without a GPU.  The backend
above calls only what both offer: ``empty``, ``upload``, ``download``, ``module`` (a
``RawModule``-like object with ``get_function(name)``) and ``synchronize``.

Each runtime also names the vendor libraries the backend calls (``library``): on a GPU, CuPy's
cuBLAS (float ``matmul``), cuSOLVER (``linalg``) and cuFFT (``fft``); on host execution NumPy's
LAPACK and pocketfft stand in for them, so that the code around the library calls (layouts,
batches, outputs, errors) runs in the tests without a GPU.  Only the vendor calls themselves are
left to a GPU.

The host runtime is chosen by ``STRIDED_CUDA_HOST=1`` or inside :func:`host_execution` (what the
tests use where no GPU exists); otherwise the GPU runtime, which needs CuPy and a device.
"""

from __future__ import annotations

import contextlib

import numpy as np

from ... import _device

__all__ = ["runtime", "host_execution", "GpuRuntime", "HostRuntime", "NVRTC_OPTIONS"]

#: options of every kernel compilation, on a GPU and in the compile gate
NVRTC_OPTIONS = ("--std=c++17",)


class _Library:
    """The vendor libraries of a runtime: the array module ``xp`` (CuPy or NumPy), its ``linalg``
    and ``fft``, ``matmul``, and ``checked()``, a context in which a failed factorisation raises
    ``numpy.linalg.LinAlgError`` (cuSOLVER reports failures only when asked to)."""

    def __init__(self, xp, checked, *, blas_matmul: bool, empty_on_host: bool):
        self.xp, self.checked = xp, checked
        self.linalg, self.fft, self.matmul = xp.linalg, xp.fft, xp.matmul
        #: whether float matmul goes to the library (cuBLAS) rather than the RawKernel
        self.blas_matmul = blas_matmul
        #: whether zero-sized stacks are computed by NumPy on the host instead
        self.empty_on_host = empty_on_host


class HostRuntime:
    """Host memory and host execution of the kernel sources."""

    name = "host"

    def __init__(self):
        # NumPy stands in for cuSOLVER/cuFFT; matmul stays on the RawKernel, which host execution
        # runs (the tests check the library route of matmul by switching blas_matmul on)
        self.library = _Library(np, contextlib.nullcontext, blas_matmul=False, empty_on_host=False)

    @staticmethod
    def empty(size: int, np_dtype) -> np.ndarray:
        return np.empty(size, np_dtype)

    @staticmethod
    def upload(dst, src: np.ndarray) -> None:
        """Copy the dense host array ``src`` into the start of the device buffer ``dst``."""
        dst[: src.size] = src.reshape(-1)

    @staticmethod
    def download(dst: np.ndarray, src, start: int = 0) -> None:
        """Copy ``dst.size`` elements of the device buffer ``src`` from ``start`` into ``dst``."""
        dst[:] = src[start : start + dst.size]

    @staticmethod
    def as_numpy(buf) -> np.ndarray:
        return buf

    @staticmethod
    def from_dlpack(obj):
        """The exporter's memory as this runtime's array: host memory here (a cuda array of host
        execution exports its NumPy memory)."""
        return np.from_dlpack(obj)

    def module(self, source: str, name_expressions: tuple[str, ...]):
        from ._host import HostModule

        return HostModule(source, name_expressions)

    @staticmethod
    def synchronize() -> None:
        pass


class GpuRuntime:
    """CuPy's memory pool and NVRTC-compiled ``RawModule`` kernels on a CUDA GPU."""

    name = "gpu"

    def __init__(self):
        import cupy

        self.cupy = cupy
        self._modules: dict = {}
        import cupyx

        def checked():
            return cupyx.errstate(linalg="raise")

        self.library = _Library(cupy, checked, blas_matmul=True, empty_on_host=True)

    def empty(self, size: int, np_dtype):
        return self.cupy.empty(size, np_dtype)

    def upload(self, dst, src: np.ndarray) -> None:
        dst[: src.size].set(src.reshape(-1))

    def download(self, dst: np.ndarray, src, start: int = 0) -> None:
        src[start : start + dst.size].get(out=dst)

    def as_numpy(self, buf) -> np.ndarray:
        return self.cupy.asnumpy(buf)

    def from_dlpack(self, obj):
        """A CuPy view of a DLPack exporter's device memory (PyTorch, CuPy, JAX, ...)."""
        return self.cupy.from_dlpack(obj)

    def module(self, source: str, name_expressions: tuple[str, ...]):
        # one RawModule per requested instantiation: a GPU compiles only what a program uses
        # (CuPy caches the cubins on disk); the host layer builds a whole source at once
        key = (source, name_expressions)
        mod = self._modules.get(key)
        if mod is None:
            mod = self._modules[key] = _LazyModule(self.cupy, source)
        return mod

    def synchronize(self) -> None:
        self.cupy.cuda.Device().synchronize()


class _LazyModule:
    """A source whose instantiations are compiled on first request, each as a RawModule."""

    def __init__(self, cupy, source: str):
        self.cupy = cupy
        self.source = source
        self._functions: dict = {}

    def get_function(self, name: str):
        fn = self._functions.get(name)
        if fn is None:
            mod = self.cupy.RawModule(
                code=self.source, options=NVRTC_OPTIONS, name_expressions=(name,)
            )
            fn = self._functions[name] = mod.get_function(name)
        return fn


_active: list = [None]


def runtime():
    """The runtime in use: the host one when selected, else CuPy on a GPU (made on first use)."""
    rt = _active[0]
    if rt is None:
        if _device._cuda_host[0]:
            rt = HostRuntime()
        elif _device._gpu_count():
            rt = GpuRuntime()
        else:
            raise RuntimeError(
                "cuda: no GPU is available (set STRIDED_CUDA_HOST=1 to run the cuda device's "
                "kernels on the host)"
            )
        _active[0] = rt
    return rt


@contextlib.contextmanager
def host_execution(enabled: bool = True):
    """Within the block, the cuda device runs on host execution (one device, ``cuda:0``), with or
    without a GPU; ``enabled=False`` selects the GPU runtime instead.  Yields the runtime in use
    (None for ``enabled=False`` where there is no GPU).

    Both runtimes are ``cuda:0`` but their buffers differ (NumPy or CuPy memory), so the caches
    of device arrays (``_device.array_cache``) are emptied on entry and on exit: an array cached
    under one runtime would reach the other's kernels."""
    old = _device._cuda_host[0], _active[0]
    _device._cuda_host[0] = enabled
    _device.clear_array_caches()
    try:
        _active[0] = HostRuntime() if enabled else (GpuRuntime() if _device._gpu_count() else None)
        yield _active[0]
    finally:
        _device._cuda_host[0], _active[0] = old
        _device.clear_array_caches()
