"""cuda kernels that call vendor libraries through the runtime: cuSOLVER for ``linalg``, cuFFT
for ``fft`` and cuBLAS for floating-point ``matmul`` (CuPy's wrappers of them on a GPU).

Each kernel views its inputs as the runtime's arrays without a copy (``export``: CuPy views of the
memory pool on a GPU, NumPy views on host execution), calls the library with NumPy's interface
(``runtime().library``) over the whole stack of matrices or lines, and writes the results into the
fresh outputs.  On host execution NumPy's LAPACK and pocketfft stand in for the vendor libraries,
so everything here but the vendor calls runs in the tests without a GPU; the vendor calls are
checked on a GPU (``tests/test_cuda_gpu.py``).

cuSOLVER reports a failed factorisation (singular, not positive definite) only when asked: the
calls run inside ``library.checked()`` (``cupyx.errstate(linalg="raise")``), and the failure
becomes :class:`strided.linalg.LinAlgError` naming the function and the first failing matrix of
a stack, as on cpu.  Calls with a zero-sized input or output are computed by NumPy on the host
(there is little to transfer: the result, such as ``det`` of 0x0 matrices, which is 1, and any
non-empty input, such as solve's matrices beside an empty right-hand side).
"""

from __future__ import annotations

import numpy as np

from ..._errors import batched_linalg
from ._runtime import HostRuntime, runtime

__all__ = ["KERNELS", "matmul_library"]

_SINGULAR = "the matrix is singular"


def _views(arrays, host: bool) -> list:
    from . import export_cuda

    if host:
        # a zero-sized call computed on the host: an empty input's shape and dtype are all that
        # matter, but a non-empty one beside it is read (solve's matrices beside an empty
        # right-hand side: whether they are singular decides whether it raises, as on cpu; an
        # uninitialised stand-in made that random)
        rt = runtime()
        return [
            np.empty(a._shape, a._dtype.numpy) if 0 in a._shape else rt.as_numpy(export_cuda(a))
            for a in arrays
        ]
    return [export_cuda(a) for a in arrays]


def _library_kernel(compute, multi: bool):
    """A kernel ``(out or outs, *inputs, **params)`` running ``compute(lib, *views, **params)``,
    which returns the results in the order of the outputs."""

    def kernel(out, *inputs, **params):
        outs = out if multi else (out,)
        rt = runtime()
        empty = any(0 in a._shape for a in (*outs, *inputs))
        on_host = empty and rt.library.empty_on_host
        lib = _HOST_LIBRARY if on_host else rt.library
        views = _views(inputs, on_host)
        with lib.checked():
            results = compute(lib, *views, **params)
        if on_host:
            for o, r in zip(outs, results):
                if o.size:
                    rt.upload(o._buf, np.ascontiguousarray(r, dtype=o._dtype.numpy))
            return
        from . import export_cuda

        for o, r in zip(outs, results):
            if o.size:
                export_cuda(o)[...] = r

    kernel.__name__ = compute.__name__.lstrip("_") + "_cuda"
    return kernel


_HOST_LIBRARY = HostRuntime().library


# -- linalg (cuSOLVER) ----------------------------------------------------------------------------
def _cholesky(lib, a, *, upper):
    low = batched_linalg("cholesky", "the matrix is not positive definite", lib.linalg.cholesky, a)
    return (low.swapaxes(-1, -2).conj() if upper else low,)


def _inv(lib, a):
    return (batched_linalg("inv", _SINGULAR, lib.linalg.inv, a),)


def _solve(lib, a, b):
    return (batched_linalg("solve", _SINGULAR, lib.linalg.solve, a, b),)


def _det(lib, a):
    return (batched_linalg("det", None, lib.linalg.det, a),)


def _slogdet(lib, a):
    return tuple(batched_linalg("slogdet", None, lib.linalg.slogdet, a))


def _eigh(lib, a, *, compute_vectors):
    if compute_vectors:
        return tuple(batched_linalg("eigh", None, lib.linalg.eigh, a))
    return (batched_linalg("eigvalsh", None, lib.linalg.eigvalsh, a),)


def _eig(lib, a, *, compute_vectors):
    op = "eig" if compute_vectors else "eigvals"
    fn = lib.linalg.eig if compute_vectors else lib.linalg.eigvals

    def finite_only(m):
        # as NumPy (and strided's cpu kernel): the general eigensolver refuses non-finite input
        if not bool(lib.xp.isfinite(m).all()):
            raise np.linalg.LinAlgError("the matrix contains infinities or NaNs")
        return fn(m)

    r = batched_linalg(op, None, finite_only, a)
    return tuple(r) if compute_vectors else (r,)


def _svd(lib, a, *, full_matrices, compute_uv):
    op = "svd" if compute_uv else "svdvals"
    if compute_uv:
        return tuple(batched_linalg(op, None, lib.linalg.svd, a, full_matrices=full_matrices))
    return (batched_linalg(op, None, lib.linalg.svd, a, compute_uv=False),)


def _qr(lib, a, *, mode):
    return tuple(batched_linalg("qr", None, lib.linalg.qr, a, mode=mode))


# -- fft (cuFFT) ----------------------------------------------------------------------------------
def _fft_c2c(lib, x, *, axes, inverse, norm):
    fn = lib.fft.ifftn if inverse else lib.fft.fftn
    return (fn(x, axes=axes, norm=norm),)


#: cuFFT's r2c and c2r run one way: ihfft and hfft are their conjugates with norm swapped
_SWAPPED_NORM = {"backward": "forward", "ortho": "ortho", "forward": "backward"}


def _fft_r2c(lib, x, *, axes, norm, inverse=False):
    if inverse:
        return (lib.xp.conj(lib.fft.rfftn(x, axes=axes, norm=_SWAPPED_NORM[norm])),)
    return (lib.fft.rfftn(x, axes=axes, norm=norm),)


def _fft_c2r(lib, x, *, axes, n, norm, forward=False):
    # every axis but the last keeps its length; the last becomes n
    s = [x.shape[a] for a in axes[:-1]] + [n]
    if forward:
        return (lib.fft.irfftn(lib.xp.conj(x), s=s, axes=axes, norm=_SWAPPED_NORM[norm]),)
    return (lib.fft.irfftn(x, s=s, axes=axes, norm=norm),)


KERNELS = {
    "linalg_cholesky": _library_kernel(_cholesky, False),
    "linalg_inv": _library_kernel(_inv, False),
    "linalg_solve": _library_kernel(_solve, False),
    "linalg_det": _library_kernel(_det, False),
    "linalg_slogdet": _library_kernel(_slogdet, True),
    "linalg_eigh": _library_kernel(_eigh, True),
    "linalg_eig": _library_kernel(_eig, True),
    "linalg_svd": _library_kernel(_svd, True),
    "linalg_qr": _library_kernel(_qr, True),
    "fft_c2c": _library_kernel(_fft_c2c, False),
    "fft_r2c": _library_kernel(_fft_r2c, False),
    "fft_c2r": _library_kernel(_fft_c2r, False),
}


# -- matmul (cuBLAS) ------------------------------------------------------------------------------
#: dtypes whose matmul cuBLAS computes (integers stay on the RawKernel: cuBLAS has no integer GEMM
#: with NumPy's wrap-around results)
BLAS_DTYPES = frozenset({"float32", "float64", "complex64", "complex128"})


def matmul_library(out, a, b) -> bool:
    """``out = a @ b`` through the runtime's BLAS where it serves (a GPU, a float dtype, nothing
    empty); False where the caller's RawKernel must run instead."""
    lib = runtime().library
    if not lib.blas_matmul or out._dtype.name not in BLAS_DTYPES or not (out.size and a.size):
        return False
    from . import export_cuda

    av, bv, ov = export_cuda(a), export_cuda(b), export_cuda(out)
    if ov.flags.c_contiguous:
        lib.matmul(av, bv, out=ov)
    else:
        ov[...] = lib.matmul(av, bv)
    return True
