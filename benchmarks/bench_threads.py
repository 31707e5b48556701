"""Parallel kernels beside other threads: strided's bounded OpenMP spin against libgomp's default.

After a parallel kernel numba's idle OpenMP threads spin before they sleep; with libgomp's
default (300,000 spins, ~10 ms here) a BLAS product or another process that needs the core
waits for them.  ``import strided`` sets a bounded spin count (``GOMP_SPINCOUNT``, unless the
user set it or ``OMP_WAIT_POLICY``).  Each case runs in a fresh process under both settings and
the ratio is printed (bounded time / default time; below 1 is faster)::

    python benchmarks/bench_threads.py [--busy]

``--busy`` runs two busy-looping processes beside it (a shared machine) for the second table.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

CHILD = r"""
import json, time, numpy as np, strided as xp
rng = np.random.default_rng(0)
big = xp.asarray(rng.standard_normal(1_000_000).astype(np.float32))
mid = xp.asarray(rng.standard_normal(100_000).astype(np.float32))
m1, m2 = (xp.asarray(rng.standard_normal((384, 384)).astype(np.float32)) for _ in range(2))
host = np.asarray(big).copy()

def best(f, n=20):
    f()
    t = 1e9
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(n):
            f()
        t = min(t, (time.perf_counter() - t0) / n)
    return t

cases = {
    "add 1M, back to back": lambda: xp.add(big, big),
    "add 100k, back to back": lambda: xp.add(mid, mid),
    "add 1M then matmul 384": lambda: (xp.add(big, big), xp.matmul(m1, m2)),
    "matmul 384 then add 1M": lambda: (xp.matmul(m1, m2), xp.add(big, big)),
    "add 1M then NumPy sort 200k": lambda: (xp.add(big, big), np.sort(host[:200_000])),
}
print(json.dumps({k: best(f) for k, f in cases.items()}))
"""


def run(env_extra: dict) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("GOMP_SPINCOUNT", "OMP_WAIT_POLICY")}
    env.update(env_extra)
    out = subprocess.run(
        [sys.executable, "-c", CHILD], env=env, capture_output=True, text=True, check=True
    )
    return json.loads(out.stdout)


def table(title: str) -> None:
    default = run({"GOMP_SPINCOUNT": "300000"})  # libgomp's own default
    bounded = run({})  # what import strided sets
    print(f"\n{title}\n{'case':34s} {'libgomp default':>16s} {'strided':>10s} {'ratio':>7s}")
    for name, t0 in default.items():
        t1 = bounded[name]
        print(f"{name:34s} {t0 * 1e6:14.0f}us {t1 * 1e6:8.0f}us {t1 / t0:7.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--busy", action="store_true", help="also run beside two busy processes")
    args = parser.parse_args()
    table("quiet machine")
    if args.busy:
        spin = "import time\nt = time.time() + 120\nwhile time.time() < t: pass"
        hogs = [subprocess.Popen([sys.executable, "-c", spin]) for _ in range(2)]
        try:
            time.sleep(0.5)
            table("beside two busy processes")
        finally:
            for h in hogs:
                h.kill()


if __name__ == "__main__":
    main()
