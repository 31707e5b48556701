"""CPU FFT kernels: scipy.fft (pocketfft) on NumPy views of strided's buffers.

scipy.fft was chosen over ``numpy.fft`` by measurement (see the commit that added this file):
it was about 3x faster on a 2**20-point complex64 transform and up to 1.8x faster on batched
complex transforms, and equal on real ones.  Inputs arrive cast and sized by the rules in
``strided/_ops/fft.py``; each kernel views them as NumPy (any strides), transforms, and writes the
result into the freshly allocated output.  scipy is imported on the first transform.
"""

from __future__ import annotations

import os

import numpy as np

from ._memory import adopt, numpy_view

_sf = None

# batched transforms of at least this many output elements spread lines over the CPU's threads
PARALLEL_THRESHOLD = 1 << 16
_WORKERS = os.cpu_count() or 1


def _scipy_fft():
    global _sf
    if _sf is None:
        import scipy.fft

        _sf = scipy.fft
    return _sf


def _workers(out, axes) -> int:
    size = out.size
    if size < PARALLEL_THRESHOLD:
        return 1
    lines = size
    for a in axes:
        lines //= out._shape[a]
    return _WORKERS if lines > 1 else 1


def _transform(out, name: str, x, axes, norm, sizes=None) -> None:
    """``out`` = scipy.fft's ``name`` (one axis: the 1-D function, ~3 us less set-up than the
    n-D one) of ``x`` over ``axes`` (``sizes``: the output lengths of a c2r transform), its
    result taken over as ``out``'s memory."""
    sf, x, workers = _scipy_fft(), numpy_view(x), _workers(out, axes)
    if len(axes) == 1:
        size = {} if sizes is None else {"n": sizes[0]}
        res = getattr(sf, name)(x, axis=axes[0], norm=norm, workers=workers, **size)
    else:
        size = {} if sizes is None else {"s": sizes}
        res = getattr(sf, name + "n")(x, axes=axes, norm=norm, workers=workers, **size)
    adopt(out, res)


def fft_c2c_cpu(out, x, *, axes, inverse, norm):
    if out.size == 0:
        return
    if out.size < PARALLEL_THRESHOLD:
        # a small array: no copy in (64 x 64 complex64 fftn 29.6 -> ~22 us; 4096 complex128
        # fft 40 -> ~33)
        _transform(out, "ifft" if inverse else "fft", x, axes, norm)
        return
    sf = _scipy_fft()
    workers = _workers(out, axes)
    fn = sf.ifftn if inverse else sf.fftn
    # copy the input into the output and transform there: scipy then allocates nothing
    dest = numpy_view(out)
    np.copyto(dest, numpy_view(x))
    res = fn(dest, axes=axes, norm=norm, overwrite_x=True, workers=workers)
    if not np.may_share_memory(res, dest):
        np.copyto(dest, res)


def fft_r2c_cpu(out, x, *, axes, norm, inverse=False):
    if out.size == 0:
        return
    _transform(out, "ihfft" if inverse else "rfft", x, axes, norm)


def fft_c2r_cpu(out, x, *, axes, n, norm, forward=False):
    if out.size == 0:
        return
    # (forward, inverse: pocketfft conjugates inside, no conjugated copy of x or the result)
    name = "hfft" if forward else "irfft"
    _transform(out, name, x, axes, norm, sizes=[out._shape[a] for a in axes])


KERNELS = {"fft_c2c": fft_c2c_cpu, "fft_r2c": fft_r2c_cpu, "fft_c2r": fft_c2r_cpu}
