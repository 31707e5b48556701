"""The LAPACK routes of ``strided.linalg``'s CPU kernels, measured in one process.

For each case (a stack of small matrices, one small and one large matrix; float32 and float64)
it times NumPy's ``numpy.linalg`` (a gufunc: C loop over the stack; single precision computed in
double), a Python loop over SciPy's routines (single-precision LAPACK for float32), and
``strided.linalg`` itself (which picks a route: see ``strided/backends/cpu/_linalg.py``; one
small matrix calls its LAPACK routine directly).  Run it with
``OPENBLAS_NUM_THREADS=1`` for figures that depend less on the machine's load, from an environment
where ``import strided`` finds this checkout (``pip install -e .`` or ``PYTHONPATH=.``).

    python benchmarks/bench_linalg.py [--repeat N] [--size N]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import scipy.linalg as sl

import strided as xp


def best_time(fn, repeat: int) -> float:
    fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def loop(fn):
    """``fn`` applied to each matrix of a stack (SciPy's routines take one matrix)."""
    return lambda a: [fn(m) for m in a.reshape((-1,) + a.shape[-2:])]


FUNCTIONS = {
    "inv": (np.linalg.inv, loop(lambda m: sl.inv(m, check_finite=False)), xp.linalg.inv),
    "eigh": (
        np.linalg.eigh,
        loop(lambda m: sl.eigh(m, check_finite=False, driver="evd")),
        xp.linalg.eigh,
    ),
    "svd": (np.linalg.svd, loop(lambda m: sl.svd(m, check_finite=False)), xp.linalg.svd),
    "qr": (
        np.linalg.qr,
        loop(lambda m: sl.qr(m, mode="economic", check_finite=False)),
        xp.linalg.qr,
    ),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--size", type=int, default=400, help="side of the large matrix")
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    print(
        f"{'case':34} {'numpy':>10} {'scipy loop':>11} {'strided':>10}  ms, best of {args.repeat}"
    )
    for dtype in (np.float32, np.float64):
        # a stack of small matrices (NumPy's gufunc), one small matrix (LAPACK called directly)
        # and one large one
        for batch, n in [((1000,), 4), ((), 8), ((), 64), ((), args.size)]:
            a = rng.standard_normal(batch + (n, n)).astype(dtype)
            a = (a + np.swapaxes(a, -1, -2)) / 2 + n * np.eye(
                n, dtype=dtype
            )  # symmetric, invertible
            sa = xp.asarray(a)
            for name, (np_fn, sp_fn, xp_fn) in FUNCTIONS.items():
                t = [
                    best_time(lambda f=f, x=x: f(x), args.repeat)
                    for f, x in ((np_fn, a), (sp_fn, a), (xp_fn, sa))
                ]
                label = f"{name} {'x'.join(map(str, batch + (n, n)))} {np.dtype(dtype).name}"
                print(
                    f"{label:34} {t[0] * 1e3:10.3f} {t[1] * 1e3:11.3f} {t[2] * 1e3:10.3f}",
                    flush=True,
                )


if __name__ == "__main__":
    main()
