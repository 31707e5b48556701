"""CPU FFT kernels: pocketfft (as shipped in scipy.fft) on NumPy views of strided's buffers.

scipy.fft was chosen over ``numpy.fft`` by measurement (see the commit that added this file):
it was about 3x faster on a 2**20-point complex64 transform and up to 1.8x faster on batched
complex transforms, and equal on real ones.  Inputs arrive cast and sized by the rules in
``strided/_ops/fft.py``; each kernel views them as NumPy (any strides) and transforms them
straight into the freshly allocated output.

The kernels call scipy.fft's compiled module (``c2c``/``r2c``/``c2r``, which take the output
array) rather than the public functions: their Python layer (argument checks this package's
rules already did, shape fixing, the uarray backend hop) cost 5-9 us a call, a fifth of a
4096-point transform.  The module is checked against the public function on first use; where a
scipy lays it out otherwise, the public functions run instead.  scipy is imported on the first
transform.
"""

from __future__ import annotations

import functools
import math
import os

import numpy as np

from ._memory import adopt, numpy_view

# batched transforms of at least this many output elements spread lines over the CPU's threads
PARALLEL_THRESHOLD = 1 << 16
_WORKERS = os.cpu_count() or 1

#: pocketfft's normalisation codes for (norm, forward): 0 none, 1 1/sqrt(n), 2 1/n
_INORM = {
    ("backward", True): 0, ("ortho", True): 1, ("forward", True): 2,
    ("backward", False): 2, ("ortho", False): 1, ("forward", False): 0,
}  # fmt: skip

#: a single complex line of at least this many points is transformed in four steps (below it
#: one call is as fast: 2048 complex64 ~13 us either way), a real line of twice as many
FOUR_STEP_MIN = 4096

_sf = None
_pp = None  # scipy.fft's compiled pocketfft module, False where it is not usable


def _scipy_fft():
    global _sf, _pp
    if _sf is None:
        import scipy.fft

        _sf, _pp = scipy.fft, _checked_pocketfft(scipy.fft)
    return _sf


def _compiled():
    """scipy.fft's compiled module, or False where the public functions must run instead."""
    if _sf is None:
        _scipy_fft()
    return _pp


def _checked_pocketfft(sf):
    """scipy.fft's compiled module where its ``c2c``/``r2c``/``c2r`` take the arguments used
    here and agree with the public functions on a small transform, else False."""
    try:
        from scipy.fft._pocketfft import pypocketfft as pp

        x = np.linspace(-1.0, 2.0, 6)
        c = x + 1j * x[::-1]
        got_c = np.empty_like(c)
        pp.c2c(c, (0,), False, 2, got_c, 1)
        got_r = np.empty(4, dtype=np.complex128)
        pp.r2c(x, (0,), True, 0, got_r, 1)
        got_b = np.empty(6, dtype=np.float64)
        pp.c2r(got_r, (0,), 6, True, 1, got_b, 1)
        if (
            np.allclose(got_c, sf.ifft(c))
            and np.allclose(got_r, sf.rfft(x))
            and np.allclose(got_b, sf.hfft(got_r, n=6, norm="ortho"))
        ):
            return pp
    except Exception:  # noqa: BLE001 - any difference in the private module: the public route
        pass
    return False


def _fresh(out) -> np.ndarray:
    """The NumPy view of an output fresh from the dispatcher: all of its buffer, C-ordered
    (0.3 us where numpy_view's layout tests take 0.8)."""
    return out._buf.reshape(out._shape)


def _workers(out, axes) -> int:
    size = out._buf.size  # (an output fresh from the dispatcher: all of its buffer)
    if size < PARALLEL_THRESHOLD:
        return 1
    lines = size
    for a in axes:
        lines //= out._shape[a]
    return _WORKERS if lines > 1 else 1


#: (n1, n2, dtype, forward) -> the four-step transform's n1 x n2 twiddle factors, and the real
#: transforms' half weights: a few tables kept, of at most _TWIDDLE_BYTES together (a 1M-point
#: complex128 table is 16 MB)
_TWIDDLES: dict = {}
_TWIDDLE_BYTES = 1 << 26


def _keep(key, table: np.ndarray) -> np.ndarray:
    """``table`` remembered under ``key``, the others dropped first where keeping it would
    make more than 8 tables or _TWIDDLE_BYTES."""
    held = sum(t.nbytes for t in _TWIDDLES.values())
    if len(_TWIDDLES) >= 8 or held + table.nbytes > _TWIDDLE_BYTES:
        _TWIDDLES.clear()
    _TWIDDLES[key] = table
    return table


@functools.lru_cache(maxsize=256)
def _split(n: int) -> tuple[int, int] | None:
    """``n`` as n1 * n2 with n1 <= n2 and n1 the largest such factor (the squarest split), or
    None where n is prime.  (Remembered: its loop runs up to sqrt(n) steps, ~60 us for twice a
    prime near 1M, and a real transform asks twice a call.)"""
    for n1 in range(math.isqrt(n), 1, -1):
        if n % n1 == 0:
            return n1, n // n1
    return None


def _twiddles(n1: int, n2: int, dtype, forward: bool) -> np.ndarray:
    key = (n1, n2, dtype, forward)
    table = _TWIDDLES.get(key)
    if table is None:
        n = n1 * n2
        # the exponent reduced modulo n in integers, the angle and exp in float64, then rounded
        turns = (np.arange(n1)[:, None] * np.arange(n2)[None, :]) % n
        table = _keep(key, np.exp(((-2j if forward else 2j) * np.pi / n) * turns).astype(dtype))
    return table


def _four_step(pp, x: np.ndarray, out: np.ndarray, forward: bool, inorm: int) -> bool:
    """``out`` (1-D, C-ordered) = the transform of the 1-D ``x`` of n = n1 * n2 points in four
    steps (Bailey's): n1-point transforms of the n2 columns of x viewed as n1 x n2, a twiddle
    factor per element, n2-point transforms of the n1 rows written transposed into ``out``.
    pocketfft runs a batch of lines with SIMD across them and on several threads, a single line
    with neither (4096 complex64: 36 -> 22 us, inverse 51 -> 24; 1M complex64 12.9 -> 5.7 ms on
    two threads).  Each step scales by its own length (pocketfft's inorm), together by n's.
    False (nothing done) where n is prime."""
    n = out.shape[0]
    split = _split(n)
    if split is None:
        return False
    n1, n2 = split
    workers = _WORKERS if n >= PARALLEL_THRESHOLD else 1
    columns = np.empty((n1, n2), dtype=out.dtype)
    pp.c2c(x.reshape(n1, n2), (0,), forward, inorm, columns, workers)
    np.multiply(columns, _twiddles(n1, n2, columns.dtype, forward), out=columns)
    pp.c2c(columns, (1,), forward, inorm, out.reshape(n2, n1).T, workers)
    return True


def _half_twiddles(m: int, dtype, forward: bool, scale: float) -> np.ndarray:
    """``scale * (1 -+ i w**k) / 2`` for k = 0..m, w = exp(-+ pi i / m): the weights that split
    (forward) or join (inverse) the even and odd halves of a 2m-point real transform.  w**k is
    exact at k = 0, m/2 and m (the zero and Nyquist terms then come out real, as pocketfft's)."""
    key = ("half", m, dtype, forward, scale)
    table = _TWIDDLES.get(key)
    if table is None:
        w = np.exp(((-1j if forward else 1j) * np.pi / m) * np.arange(m + 1))
        w[0], w[m] = 1.0, -1.0
        if m % 2 == 0:
            w[m // 2] = -1j if forward else 1j
        table = _keep(key, ((0.5 * scale) * (1 - 1j * w if forward else 1 + 1j * w)).astype(dtype))
    return table


#: the factor between pocketfft's scaling of an m-point transform (inorm 0, 1, 2: 1, m**-0.5,
#: 1/m) and the one a 2m-point real transform needs (forward: 1, (2m)**-0.5, 1/(2m); inverse,
#: whose halves carry twice the sum: 2, 2 (2m)**-0.5, 1/m)
_HALF_SCALE = {(0, True): 1.0, (1, True): math.sqrt(0.5), (2, True): 0.5,
               (0, False): 2.0, (1, False): math.sqrt(2.0), (2, False): 1.0}  # fmt: skip


def _real_four_step(pp, out, x, axis: int, inorm: int, forward: bool) -> bool:
    """rfft (``forward``) or irfft of a single line of n = 2m real points through the m-point
    complex transform of its even and odd samples as one complex sequence (the real buffer
    viewed as complex, z[j] = x[2j] + i x[2j+1]), in four steps, the halves split or joined by
    weights P: X[k] = B + (Z[k] - B) P[k] with B = conj(Z[m - k]) forward, Z[k] = B + (X[k] - B)
    P[k] with B = conj(X[m - k]) inverse (1M float32: rfft 11.0 -> 3.9 ms, irfft 6.7 -> 3.7).
    False (nothing done) where n is odd, the real side is strided along ``axis`` or m is
    prime."""
    real, spectrum = (x, out) if forward else (out, x)
    n = real._shape[axis]
    if n % 2 or real.size != n or real._strides[axis] != 1 or _split(n // 2) is None:
        return False
    m = n // 2
    cdt = spectrum._buf.dtype
    halves = numpy_view(real).reshape(n).view(cdt)
    scale = _HALF_SCALE[inorm, forward]
    weights = _half_twiddles(m, cdt, forward, scale)
    spec = numpy_view(spectrum).reshape(m + 1)
    if forward:
        z = np.empty(m + 1, dtype=cdt)
        _four_step(pp, halves, z[:m], True, inorm)
        z[m] = z[0]
        mirror = np.conjugate(z[::-1])
        np.subtract(z, mirror, out=spec)
        np.multiply(spec, weights, out=spec)
        if scale != 1.0:
            np.multiply(mirror, scale, out=mirror)
        np.add(spec, mirror, out=spec)
        return True
    mirror = np.conjugate(spec[m:0:-1])
    z = np.subtract(spec[:m], mirror)
    np.multiply(z, weights[:m], out=z)
    if scale != 1.0:
        np.multiply(mirror, scale, out=mirror)
    np.add(z, mirror, out=z)
    # the zero and Nyquist terms' imaginary parts take no part (as in pocketfft's c2r)
    first, last = spec[0].real, spec[m].real
    z[0] = (first - last) * weights[0] + scale * last
    return _four_step(pp, z, halves, False, inorm)


def _public(out, name: str, x, axes, norm, c2r: bool = False) -> None:
    """``out`` = scipy.fft's public ``name`` (one axis: the 1-D function) of ``x`` over
    ``axes`` (``c2r``: a c2r transform, given ``out``'s lengths along ``axes``)."""
    sf, x, workers = _scipy_fft(), numpy_view(x), _workers(out, axes)
    sizes = [out._shape[a] for a in axes] if c2r else None
    if len(axes) == 1:
        size = {} if sizes is None else {"n": sizes[0]}
        res = getattr(sf, name)(x, axis=axes[0], norm=norm, workers=workers, **size)
    else:
        size = {} if sizes is None else {"s": sizes}
        res = getattr(sf, name + "n")(x, axes=axes, norm=norm, workers=workers, **size)
    adopt(out, res)


def _module(out, x, axes, norm, public: str, c2r: bool = False):
    """scipy.fft's compiled module for a kernel to call, or None where nothing is left to do:
    ``out`` is empty, or the module is unusable and the public function ``public`` filled it."""
    if out._buf.size == 0:
        return None
    pp = _compiled()
    if pp is False:
        _public(out, public, x, axes, norm, c2r)
        return None
    return pp


def fft_c2c_cpu(out, x, *, axes, inverse, norm):
    pp = _module(out, x, axes, norm, "ifft" if inverse else "fft")
    if pp is None:
        return
    inorm = _INORM[norm, not inverse]
    if (
        len(axes) == 1
        and out.size >= FOUR_STEP_MIN
        and out.size == out._shape[axes[0]]
        and _four_step(pp, numpy_view(x).reshape(-1), out._buf, not inverse, inorm)
    ):
        return
    pp.c2c(numpy_view(x), axes, not inverse, inorm, _fresh(out), _workers(out, axes))


def fft_r2c_cpu(out, x, *, axes, norm, inverse=False):
    pp = _module(out, x, axes, norm, "ihfft" if inverse else "rfft")
    if pp is None:
        return
    inorm = _INORM[norm, not inverse]
    if (
        not inverse
        and len(axes) == 1
        and x.size >= 2 * FOUR_STEP_MIN
        and out.size == out._shape[axes[0]]
        and _real_four_step(pp, out, x, axes[0], inorm, True)
    ):
        return
    pp.r2c(numpy_view(x), axes, not inverse, inorm, _fresh(out), _workers(out, axes))


def fft_c2r_cpu(out, x, *, axes, n, norm, forward=False):
    # (forward, inverse: pocketfft conjugates inside, no conjugated copy of x or the result)
    pp = _module(out, x, axes, norm, "hfft" if forward else "irfft", c2r=True)
    if pp is None:
        return
    inorm = _INORM[norm, forward]
    if (
        not forward
        and len(axes) == 1
        and n >= 2 * FOUR_STEP_MIN
        and out.size == n
        and _real_four_step(pp, out, x, axes[0], inorm, False)
    ):
        return
    pp.c2r(numpy_view(x), axes, n, forward, inorm, _fresh(out), _workers(out, axes))


KERNELS = {"fft_c2c": fft_c2c_cpu, "fft_r2c": fft_r2c_cpu, "fft_c2r": fft_c2r_cpu}
