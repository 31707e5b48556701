"""The standard's ``fft`` extension: ``strided.fft.fft(x)``, ``strided.fft.rfftfreq(n)``, ...

Transforms keep the input's precision (complex64 stays complex64, float32 becomes complex64) and
run on every device: the shape and dtype rules alone on ``meta``, scipy.fft (pocketfft) on
``cpu``.  The functions live in ``strided/_ops/fft.py``.
"""

from ._ops.fft import (
    fft,
    fftfreq,
    fftn,
    fftshift,
    hfft,
    ifft,
    ifftn,
    ifftshift,
    ihfft,
    irfft,
    irfftn,
    rfft,
    rfftfreq,
    rfftn,
)

__all__ = [
    "fft",
    "ifft",
    "fftn",
    "ifftn",
    "rfft",
    "irfft",
    "rfftn",
    "irfftn",
    "hfft",
    "ihfft",
    "fftfreq",
    "rfftfreq",
    "fftshift",
    "ifftshift",
]
