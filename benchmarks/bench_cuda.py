"""strided's cuda device against the GPU's memory bandwidth, cuBLAS (through CuPy), CuPy and
PyTorch, measured in one process on a real GPU.  Without one it says so and measures nothing (host
execution is for correctness, not speed).

* Elementwise maps and reductions over 2**26 elements: achieved bandwidth (bytes each kernel must
  read and write / device time) as a fraction of the device's peak (memory clock x bus width,
  where the driver reports them) and of a device-to-device copy measured here.  Goal: >= 80 %.
  CuPy's time for the same operation is printed beside it.
* matmul (float32, float64 4096^2; float matmul goes to cuBLAS): TFLOP/s against cupy.matmul.
* Per-call cost of small operations (1000 elements, host wall time per call with the device
  queue drained at the end) against CuPy and PyTorch.

Each large result is checked against CuPy's once, so a broken kernel cannot look fast.

    python benchmarks/bench_cuda.py [--quick] [--repeat N]
"""

from __future__ import annotations

import argparse
import functools
import statistics
import sys
import time

import numpy as np

import strided as xp
from strided import _device


def _have_gpu() -> bool:
    return ("add", "cuda") in xp.dispatch.registered() and _device._gpu_count() > 0


def device_time(fn, repeat: int) -> float:
    """Median device time of ``fn`` (seconds), from CUDA events around each call."""
    import cupy

    fn()
    cupy.cuda.Device().synchronize()
    times = []
    for _ in range(repeat):
        start, stop = cupy.cuda.Event(), cupy.cuda.Event()
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(cupy.cuda.get_elapsed_time(start, stop) / 1e3)
    return statistics.median(times)


def wall_per_call(fn, calls: int, repeat: int, sync) -> float:
    """Median over ``repeat`` of the host wall time per call of ``calls`` calls, queue drained."""
    fn()
    sync()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        sync()
        times.append((time.perf_counter() - t0) / calls)
    return statistics.median(times)


def peak_bandwidth() -> float | None:
    """Bytes per second the memory interface can move (DDR: two transfers per clock), or None
    where the driver does not report the clock (CUDA 13 dropped it from the device properties)."""
    import cupy

    rt = cupy.cuda.runtime
    try:
        clock_khz = rt.deviceGetAttribute(rt.cudaDevAttrMemoryClockRate, 0)
        bus_bits = rt.deviceGetAttribute(rt.cudaDevAttrGlobalMemoryBusWidth, 0)
    except Exception:  # noqa: BLE001  (an attribute this driver does not have)
        return None
    if not clock_khz or not bus_bits:
        return None
    return 2.0 * clock_khz * 1e3 * bus_bits / 8


def copy_bandwidth(nbytes: int, repeat: int) -> float:
    """Bytes per second of a device-to-device memcpy (read + write counted)."""
    import cupy

    a = cupy.ones(nbytes // 4, cupy.float32)
    b = cupy.empty_like(a)
    rt = cupy.cuda.runtime

    def copy():
        rt.memcpyAsync(b.data.ptr, a.data.ptr, a.nbytes, rt.memcpyDeviceToDevice, 0)

    t = device_time(copy, repeat)
    return 2 * a.nbytes / t


def _check(got, want, rtol) -> None:
    import cupy

    np.testing.assert_allclose(
        np.asarray(got.to_device("cpu")), cupy.asnumpy(want), rtol=rtol, atol=rtol
    )


#: (name, strided op, CuPy op, bytes moved per element in units of the itemsize (+ extra bytes),
#: reduction?): each op takes (module, a, b, a2), a2 being ``a`` as a square matrix
BANDWIDTH_OPS = [
    ("add", lambda m, a, b, a2: a + b, lambda m, a, b, a2: a + b, 3, 0, False),
    ("multiply by scalar", lambda m, a, b, a2: a * 1.5, lambda m, a, b, a2: a * 1.5, 2, 0, False),
    ("exp", lambda m, a, b, a2: m.exp(a), lambda m, a, b, a2: m.exp(a), 2, 0, False),
    ("tanh", lambda m, a, b, a2: m.tanh(a), lambda m, a, b, a2: m.tanh(a), 2, 0, False),
    ("add transposed", lambda m, a, b, a2: a2 + a2.T, lambda m, a, b, a2: a2 + a2.T, 3, 0, False),
    ("where", lambda m, a, b, a2: m.where(a > 0, a, b),
     lambda m, a, b, a2: m.where(a > 0, a, b), 3, 1, False),
    ("astype int32", lambda m, a, b, a2: m.astype(a, m.int32),
     lambda m, a, b, a2: a.astype(m.int32), 1, 4, False),
    ("sum (all)", lambda m, a, b, a2: m.sum(a), lambda m, a, b, a2: m.sum(a), 1, 0, True),
    ("sum axis 0", lambda m, a, b, a2: m.sum(a2, axis=0),
     lambda m, a, b, a2: m.sum(a2, axis=0), 1, 0, True),
    ("sum axis 1", lambda m, a, b, a2: m.sum(a2, axis=1),
     lambda m, a, b, a2: m.sum(a2, axis=1), 1, 0, True),
    ("max (all)", lambda m, a, b, a2: m.max(a), lambda m, a, b, a2: m.max(a), 1, 0, False),
    ("argmax (all)", lambda m, a, b, a2: m.argmax(a), lambda m, a, b, a2: m.argmax(a), 1, 0, False),
    ("cumulative_sum rows", lambda m, a, b, a2: m.cumulative_sum(a2, axis=1),
     lambda m, a, b, a2: m.cumsum(a2, axis=1), 2, 0, True),
]  # fmt: skip


def bandwidth_cases(n: int):
    """(name, strided fn, cupy fn, bytes moved, rtol)."""
    import cupy

    rng = np.random.default_rng(0)
    side = int(round(n**0.5))
    for dtype in ("float32", "float64"):
        isz = np.dtype(dtype).itemsize
        host = rng.standard_normal(n).astype(dtype)
        other = host[::-1].copy()
        a, b = xp.asarray(host, device="cuda"), xp.asarray(other, device="cuda")
        ca, cb = cupy.asarray(host), cupy.asarray(other)
        ours = (xp, a, b, xp.reshape(a, (side, -1)))
        theirs = (cupy, ca, cb, ca.reshape(side, -1))
        for name, fs, fc, per_elem, extra, reduction in BANDWIDTH_OPS:
            rtol = 1e-5 if dtype == "float32" else 1e-12
            if reduction:
                rtol = 1e-3 if dtype == "float32" else 1e-9
            yield (
                f"{name} {dtype}",
                functools.partial(fs, *ours),
                functools.partial(fc, *theirs),
                n * (per_elem * isz + extra),
                rtol,
            )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="2**24 elements, fewer repeats")
    parser.add_argument("--repeat", type=int, default=None)
    args = parser.parse_args()
    if not _have_gpu():
        print("bench_cuda: no CUDA GPU (or no CuPy) on this machine: nothing measured")
        return 0
    import cupy

    repeat = args.repeat or (5 if args.quick else 20)
    n = 1 << (24 if args.quick else 26)
    props = cupy.cuda.runtime.getDeviceProperties(0)
    print(f"device: {props['name'].decode()}, CuPy {cupy.__version__}")
    peak = peak_bandwidth()
    copy_bw = copy_bandwidth(n * 4, repeat)
    print(f"peak bandwidth: {peak / 1e9:.0f} GB/s" if peak else "peak bandwidth: not reported")
    print(f"device-to-device copy: {copy_bw / 1e9:.0f} GB/s")
    print(
        f"\n{'case':34s} {'time':>9s} {'GB/s':>7s} {'%peak':>6s} {'%copy':>6s} {'CuPy':>9s} ratio"
    )
    fractions = []
    for name, fn, ref, nbytes, rtol in bandwidth_cases(n):
        _check(fn(), ref(), rtol)
        t, tc = device_time(fn, repeat), device_time(ref, repeat)
        bw = nbytes / t
        frac = bw / peak if peak else bw / copy_bw
        fractions.append(frac)
        pk = f"{100 * bw / peak:5.0f}%" if peak else "   n/a"
        print(f"{name:34s} {t * 1e6:7.0f}us {bw / 1e9:7.0f} {pk} {100 * bw / copy_bw:5.0f}% "
              f"{tc * 1e6:7.0f}us {t / tc:5.2f}")  # fmt: skip
    below = sum(f < 0.8 for f in fractions)
    basis = "peak" if peak else "copy bandwidth"
    print(f"\n{below} of {len(fractions)} cases below 80 % of {basis}; geomean "
          f"{100 * float(np.exp(np.mean(np.log(fractions)))):.0f} %")  # fmt: skip

    print(f"\n{'matmul':34s} {'strided':>10s} {'cuBLAS':>10s} ratio")
    rng = np.random.default_rng(1)
    for dtype, size in (("float32", 4096), ("float64", 4096), ("int32", 1024)):
        size = size // 2 if args.quick else size
        host = rng.standard_normal((size, size)).astype(dtype)
        a, ca = xp.asarray(host, device="cuda"), cupy.asarray(host)
        _check(a @ a, ca @ ca, 1e-3 if dtype == "float32" else 1e-9)
        t = device_time(lambda a=a: a @ a, repeat)
        tc = device_time(lambda ca=ca: ca @ ca, repeat)
        flops = 2 * size**3
        print(f"{dtype} {size}^2{'':22s} {flops / t / 1e12:7.2f} TF {flops / tc / 1e12:7.2f} TF "
              f"{t / tc:5.2f}")  # fmt: skip

    print(f"\n{'per call, 1000 elements':34s} {'strided':>9s} {'CuPy':>9s} {'PyTorch':>9s}")
    small = np.arange(1000, dtype=np.float32)
    s, c = xp.asarray(small, device="cuda"), cupy.asarray(small)
    try:
        import torch

        tt = torch.asarray(small, device="cuda") if torch.cuda.is_available() else None
    except ImportError:
        tt = None
    sync = cupy.cuda.Device().synchronize
    for name, fs, fc, ft in (
        ("a + b", lambda: s + s, lambda: c + c, lambda: tt + tt),
        ("a * 2.0", lambda: s * 2.0, lambda: c * 2.0, lambda: tt * 2.0),
        ("exp(a)", lambda: xp.exp(s), lambda: cupy.exp(c), lambda: torch.exp(tt)),
        ("sum(a)", lambda: xp.sum(s), lambda: cupy.sum(c), lambda: torch.sum(tt)),
        ("a[1:]", lambda: s[1:], lambda: c[1:], lambda: tt[1:]),
    ):
        calls = 200 if args.quick else 2000
        ts, tc = wall_per_call(fs, calls, repeat, sync), wall_per_call(fc, calls, repeat, sync)
        tp = wall_per_call(ft, calls, repeat, torch.cuda.synchronize) if tt is not None else None
        tps = f"{tp * 1e6:7.1f}us" if tp is not None else "      n/a"
        print(f"{name:34s} {ts * 1e6:7.1f}us {tc * 1e6:7.1f}us {tps}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
