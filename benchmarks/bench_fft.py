"""FFT routes compared: numpy.fft and scipy.fft (one thread and all threads) against strided.fft.

This is the measurement that chose scipy.fft for strided's CPU FFT kernels.  Cases: a 2**20-point
complex64 ``fft``, and a batch of 1000 x 1024 along each axis, as float64 ``rfft`` and as
complex128 ``fft``.  Every strided result is checked against NumPy once.

    python benchmarks/bench_fft.py [--repeat N]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np
import scipy.fft as sf

import strided as xp


def best_time(fn, x, kwargs: dict, repeat: int) -> float:
    """Median of ``repeat`` timed calls ``fn(x, **kwargs)`` after a warm-up call (seconds)."""
    fn(x, **kwargs)
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn(x, **kwargs)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def cases():
    rng = np.random.default_rng(0)
    n = 1 << 20
    x = (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(np.complex64)
    yield "fft 2^20 complex64", x, "fft", -1
    b = rng.standard_normal((1000, 1024))
    for axis in (0, 1):
        yield f"rfft 1000x1024 float64 axis={axis}", b, "rfft", axis
    c = b + 1j * rng.standard_normal((1000, 1024))
    for axis in (0, 1):
        yield f"fft 1000x1024 complex128 axis={axis}", c, "fft", axis


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args()
    threads = os.cpu_count() or 1
    cols = ("numpy.fft", "scipy 1 thread", f"scipy {threads} threads", "strided")
    print(f"{'case (ms, median)':38s}" + "".join(f"{c:>17s}" for c in cols))
    for name, a, fn, axis in cases():
        s = xp.asarray(a)
        want = getattr(np.fft, fn)(a, axis=axis)
        got = np.asarray(getattr(xp.fft, fn)(s, axis=axis))
        tol = 1e-3 if a.dtype == np.complex64 else 1e-9
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol * np.abs(want).max())
        routes = (
            (getattr(np.fft, fn), a, {"axis": axis}),
            (getattr(sf, fn), a, {"axis": axis}),
            (getattr(sf, fn), a, {"axis": axis, "workers": threads}),
            (getattr(xp.fft, fn), s, {"axis": axis}),
        )
        times = [best_time(f, x, kw, args.repeat) * 1e3 for f, x, kw in routes]
        print(f"{name:38s}" + "".join(f"{t:17.2f}" for t in times))


if __name__ == "__main__":
    main()
