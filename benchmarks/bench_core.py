"""strided vs NumPy (and PyTorch when installed), measured in one process.

Cases: 10M-element add (contiguous, one transposed operand, a broadcast row) in float32/float64,
``sum`` over axis 0 and 1 of a 4000x4000 array, 1024^2 and 2048^2 matmul, and the per-call cost of
small operations against PyTorch eager (CPU time, one thread, same run).  Every large result is
checked against NumPy once, so a broken kernel cannot look fast.

Targets: large elementwise and reductions take at most 1.2x NumPy's time, matmul reaches at least
0.8x NumPy's throughput; per call (op pipeline issue): a + b, a + 1.5, x[1:], sum and a 4x4 matmul
at most PyTorch's time, recorded ops (requires_grad) at most 1.2x PyTorch's, a meta op <= 2 us.

    python benchmarks/bench_core.py [--quick] [--repeat N]
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

import strided as xp


def best_time(fn, repeat: int, number: int = 1) -> float:
    """Median over ``repeat`` runs of the mean time of ``number`` calls (seconds)."""
    fn()  # warm-up: numba compiles (or loads from cache) here
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        times.append((time.perf_counter() - t0) / number)
    return statistics.median(times)


def check(got, want, rtol) -> None:
    np.testing.assert_allclose(np.asarray(got), want, rtol=rtol, atol=rtol)


def elementwise_cases(n: int):
    side = int(round(n**0.5))
    rng = np.random.default_rng(0)
    for dtype in (np.float32, np.float64):
        a = rng.standard_normal(n).astype(dtype)
        b = rng.standard_normal(n).astype(dtype)
        sa, sb = xp.asarray(a), xp.asarray(b)
        yield (
            f"add {n / 1e6:.0f}M {np.dtype(dtype).name} contiguous",
            lambda sa=sa, sb=sb: xp.add(sa, sb),
            lambda a=a, b=b: np.add(a, b),
            np.add(a, b),
        )
        sq_a = rng.standard_normal((side, side)).astype(dtype)
        sq_b = rng.standard_normal((side, side)).astype(dtype)
        ssa, ssb = xp.asarray(sq_a), xp.asarray(sq_b)
        yield (
            f"add {side}x{side} {np.dtype(dtype).name} one transposed",
            lambda x=ssa, y=ssb: xp.add(x, y.mT),
            lambda x=sq_a, y=sq_b: np.add(x, y.T),
            sq_a + sq_b.T,
        )
        row = rng.standard_normal(side).astype(dtype)
        srow = xp.asarray(row)
        yield (
            f"add {side}x{side} {np.dtype(dtype).name} + broadcast row",
            lambda x=ssa, r=srow: xp.add(x, r),
            lambda x=sq_a, r=row: np.add(x, r),
            sq_a + row,
        )


def reduction_cases(side: int):
    rng = np.random.default_rng(1)
    for dtype in (np.float32, np.float64):
        a = rng.standard_normal((side, side)).astype(dtype)
        sa = xp.asarray(a)
        for axis in (0, 1):
            yield (
                f"sum {side}x{side} {np.dtype(dtype).name} axis={axis}",
                lambda s=sa, ax=axis: xp.sum(s, axis=ax),
                lambda x=a, ax=axis: np.sum(x, axis=ax),
                a.sum(axis=axis, dtype=np.float64),
            )


def matmul_cases(sizes):
    rng = np.random.default_rng(2)
    for n in sizes:
        for dtype in (np.float32, np.float64):
            a = rng.standard_normal((n, n)).astype(dtype)
            b = rng.standard_normal((n, n)).astype(dtype)
            sa, sb = xp.asarray(a), xp.asarray(b)
            yield (
                f"matmul {n}x{n} {np.dtype(dtype).name}",
                n,
                lambda x=sa, y=sb: xp.matmul(x, y),
                lambda x=a, y=b: np.matmul(x, y),
                a @ b,
            )


def cpu_time_per_call(fn, repeat: int, number: int) -> float:
    """Best CPU time per call over ``repeat`` runs of ``number`` calls (seconds).  CPU time, not
    wall time: per-call overhead is the interpreter's work, and a shared machine's other load
    does not count against it."""
    fn()
    best = float("inf")
    for _ in range(repeat):
        t0 = time.process_time()
        for _ in range(number):
            fn()
        best = min(best, (time.process_time() - t0) / number)
    return best


def per_call_cases():
    """(name, strided call, PyTorch call or None, target ratio) for small arrays."""
    a_np = np.arange(10, dtype=np.float64)
    a, b = xp.asarray(a_np), xp.asarray(a_np + 1)
    x100 = xp.asarray(np.arange(100, dtype=np.float64))
    m = xp.asarray(np.ones((4, 4)))
    ga = xp.asarray(a_np, requires_grad=True)
    gm = xp.asarray(np.ones((4, 4)), requires_grad=True)
    g100 = xp.asarray(np.arange(100, dtype=np.float64), requires_grad=True)
    ma, mb = xp.ones(10, device="meta"), xp.ones(10, device="meta")
    try:
        import torch

        torch.set_num_threads(1)  # per-call cost, not throughput
        ta = torch.arange(10, dtype=torch.float64)
        tb, t100 = ta + 1, torch.arange(100, dtype=torch.float64)
        tm = torch.ones(4, 4, dtype=torch.float64)
        tga, tgm = ta.clone().requires_grad_(), tm.clone().requires_grad_()
        tg100 = t100.clone().requires_grad_()
    except ImportError:
        torch = None
    t = torch is not None
    return [
        ("a + b (10 elements)", lambda: a + b, (lambda: ta + tb) if t else None, 1.0),
        ("a + 1.5", lambda: a + 1.5, (lambda: ta + 1.5) if t else None, 1.0),
        ("x[1:]", lambda: a[1:], (lambda: ta[1:]) if t else None, 1.0),
        ("xp.sum(x) (100 elements)", lambda: xp.sum(x100), (lambda: torch.sum(t100)) if t else None,
         1.0),
        ("4x4 matmul", lambda: m @ m, (lambda: tm @ tm) if t else None, 1.0),
        ("a + b, a requires grad", lambda: ga + b, (lambda: tga + tb) if t else None, 1.2),
        ("a + 1.5, a requires grad", lambda: ga + 1.5, (lambda: tga + 1.5) if t else None, 1.2),
        ("x[1:], x requires grad", lambda: ga[1:], (lambda: tga[1:]) if t else None, 1.2),
        ("xp.sum(x), x requires grad", lambda: xp.sum(g100), (lambda: torch.sum(tg100)) if t
         else None, 1.2),
        ("4x4 matmul, requires grad", lambda: gm @ m, (lambda: tgm @ tm) if t else None, 1.2),
        ("a + b on meta", lambda: ma + mb, None, None),
    ]  # fmt: skip


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes, fewer repeats")
    parser.add_argument("--repeat", type=int, default=None, help="timed runs per case")
    args = parser.parse_args(argv)
    n = 10**6 if args.quick else 10**7
    side = 1000 if args.quick else 4000
    sizes = (256, 512) if args.quick else (1024, 2048)
    repeat = args.repeat or (3 if args.quick else 7)

    fails = 0
    header = f"{'case':44s} {'strided':>11s} {'numpy':>11s} {'ratio':>7s}  target"
    print(header)
    print("-" * len(header))
    for name, f_s, f_n, want in list(elementwise_cases(n)) + list(reduction_cases(side)):
        check(f_s(), want, 1e-4)
        ts, tn = best_time(f_s, repeat), best_time(f_n, repeat)
        ok = ts / tn <= 1.2
        fails += not ok
        print(
            f"{name:44s} {ts * 1e3:9.2f}ms {tn * 1e3:9.2f}ms {ts / tn:7.2f}  "
            f"<= 1.2x time {'PASS' if ok else 'FAIL'}"
        )
    for name, size, f_s, f_n, want in matmul_cases(sizes):
        check(f_s(), want, 1e-3)
        ts, tn = best_time(f_s, repeat), best_time(f_n, repeat)
        flop = 2 * size**3
        ratio = tn / ts  # throughput ratio
        ok = ratio >= 0.8
        fails += not ok
        print(
            f"{name:44s} {flop / ts / 1e9:7.1f}GF/s {flop / tn / 1e9:7.1f}GF/s {ratio:7.2f}  "
            f">= 0.8x throughput {'PASS' if ok else 'FAIL'}"
        )
    print()
    print(
        f"{'per call, CPU time (small arrays)':44s} {'strided':>11s} {'torch':>11s} {'ratio':>7s}"
    )
    for name, f_s, f_t, target in per_call_cases():
        ts = cpu_time_per_call(f_s, repeat, 20000)
        if f_t is None:
            ok = ts * 1e6 <= 2.0 if name.endswith("meta") else True
            fails += not ok
            note = f"<= 2 us {'PASS' if ok else 'FAIL'}" if name.endswith("meta") else "(no torch)"
            print(f"  {name:42s} {ts * 1e6:9.2f}us {'':11s} {'':7s}  {note}")
            continue
        tt = cpu_time_per_call(f_t, repeat, 20000)
        ok = ts / tt <= target
        fails += not ok
        print(
            f"  {name:42s} {ts * 1e6:9.2f}us {tt * 1e6:9.2f}us {ts / tt:7.2f}  "
            f"<= {target}x torch {'PASS' if ok else 'FAIL'}"
        )
    print()
    print("all targets met" if not fails else f"{fails} target(s) missed")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
