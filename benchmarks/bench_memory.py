"""Memory stays flat: 1,000,000 small operations, without and with gradients, and the process's
resident set size (RSS) after warm-up against the end.

    .venv/bin/python benchmarks/bench_memory.py [--ops 1000000]

Without gradients the loop is a chain of small elementwise ops, a reduction, indexing and a
setitem on a few arrays that are replaced every iteration; with gradients, the same work records a
graph that ``backward`` frees every 100 operations.  A leak of one 8-byte buffer per operation would
show as +8 MB per million; the process is expected to stay within a few MB.
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import strided as xp  # noqa: E402


def rss_mb() -> float:
    """Resident set size of this process in MiB (Linux /proc; ru_maxrss elsewhere)."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    except OSError:
        import resource

        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def plain_ops(n: int) -> int:
    """About ``n`` small operations without gradients; returns the count done."""
    x = xp.ones((4, 3))
    idx = xp.asarray([0, 2])
    done = 0
    while done < n:
        y = xp.exp(x) * 0.5 + 1.0  # 3
        s = xp.sum(y, axis=0)  # 1
        z = y[1:, ::-1]  # 1 (a view)
        w = y[idx]  # 1 (integer-array indexing)
        y[0] = s  # 1 (setitem)
        x = xp.where(z[0, 0] > 1.0, x, w[0])  # 3 (comparison, index, where)
        done += 10
    return done


def grad_ops(n: int) -> int:
    """About ``n`` small recorded operations; a backward every ~100 frees the graph."""
    w = xp.ones((4, 3), requires_grad=True)
    done = 0
    while done < n:
        h = w
        for _ in range(20):
            h = xp.tanh(h * 0.9 + 0.1)  # 3 recorded ops
        loss = xp.sum(h * h)  # 2
        loss.backward()  # ~ 60 backward rules run
        done += 62 + 60
        w.grad = None
    return done


def measure(label: str, fn, n: int) -> tuple[float, float]:
    fn(min(n // 20, 50_000))  # warm-up: compile kernels, fill caches and free lists
    gc.collect()
    before = rss_mb()
    t0 = time.perf_counter()
    done = fn(n)
    dt = time.perf_counter() - t0
    gc.collect()
    after = rss_mb()
    print(
        f"{label:<18} {done:>9,} ops in {dt:6.1f} s ({dt / done * 1e6:5.2f} us/op): "
        f"RSS {before:7.1f} MiB after warm-up -> {after:7.1f} MiB ({after - before:+.1f} MiB)",
        flush=True,
    )
    return before, after


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--ops", type=int, default=1_000_000)
    p.add_argument("--limit-mb", type=float, default=8.0, help="exit 1 above this growth")
    args = p.parse_args()
    grew = []
    for label, fn in (("without gradients", plain_ops), ("with gradients", grad_ops)):
        before, after = measure(label, fn, args.ops)
        grew.append(after - before)
    return 0 if max(grew) <= args.limit_mb else 1


if __name__ == "__main__":
    sys.exit(main())
