"""Threads and processes: operations from several threads on separate arrays give NumPy's values
(small arrays on the serial loops, large ones on the parallel ``prange`` loops, BLAS, LAPACK, sort),
and two processes compiling the same kernel into one numba cache directory do not crash."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading

import numpy as np

import strided as xp

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _work(seed: int, rounds: int, errors: list) -> None:
    rng = np.random.default_rng(seed)
    try:
        for r in range(rounds):
            n = (7, 300, 70_000)[r % 3]  # the last one crosses the parallel threshold
            a = rng.standard_normal(n)
            b = rng.standard_normal(n).astype(np.float32)
            x, y = xp.asarray(a), xp.asarray(b)
            np.testing.assert_allclose(
                np.asarray(xp.exp(x) * 2.0 + x), np.exp(a) * 2.0 + a, rtol=1e-12, atol=1e-12
            )
            np.testing.assert_allclose(
                np.asarray(xp.sin(y) - y), np.sin(b) - b, rtol=1e-5, atol=1e-6
            )
            assert (
                float(xp.sum(x)) == np.float64(np.sum(a))
                or abs(float(xp.sum(x)) - np.sum(a)) < 1e-9 * n
            )
            np.testing.assert_array_equal(np.asarray(xp.sort(x)), np.sort(a))
            assert int(xp.argmax(x)) == int(np.argmax(a))
            m = rng.standard_normal((6, 6)) + 6 * np.eye(6)
            mx = xp.asarray(m)
            np.testing.assert_allclose(np.asarray(mx @ mx.mT), m @ m.T, rtol=1e-12)
            np.testing.assert_allclose(
                np.asarray(xp.linalg.inv(mx)), np.linalg.inv(m), rtol=1e-9, atol=1e-12
            )
            i = rng.integers(-50, 50, size=n)
            np.testing.assert_array_equal(
                np.asarray(xp.asarray(i) // 3 + xp.asarray(i) % 7), i // 3 + i % 7
            )
    except BaseException as e:  # reported by the main thread
        errors.append((seed, e))


def test_operations_from_several_threads_give_numpy_values():
    _work(99, 3, [])  # compile first, so the threads race on running kernels, not compiling them
    errors: list = []
    threads = [threading.Thread(target=_work, args=(s, 6, errors)) for s in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=600)
    assert not any(t.is_alive() for t in threads)
    assert not errors, errors[0]


def test_threads_compiling_the_same_kernels_at_once():
    """First use of a kernel from several threads: numba's dispatcher compiles it once, safely."""
    errors: list = []
    barrier = threading.Barrier(3)

    def first_use(k):
        try:
            barrier.wait()
            # int16 cumulative_prod along a transposed axis: unlikely to be compiled already
            a = np.arange(1, 13, dtype=np.int16).reshape(3, 4)
            got = xp.cumulative_prod(xp.asarray(a).T, axis=1)
            np.testing.assert_array_equal(np.asarray(got), np.cumprod(a.T, axis=1, dtype=np.int64))
        except BaseException as e:
            errors.append(e)

    threads = [threading.Thread(target=first_use, args=(k,)) for k in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=600)
    assert not errors, errors[0]


_COMPILE = textwrap.dedent(
    """
    import numpy as np
    from strided.backends.cpu import _kern_index as k
    # one of strided's cached kernels, compiled (not loaded) by both processes at once into an
    # empty cache directory, then loaded by both from what the race left there
    x = np.arange(24, dtype=np.uint16)[::-1].copy()
    o = np.empty(24, np.int64)
    k.argsort_rows(o, x, 0, 6, 1, 4, 6, True)  # 4 rows of 6, descending
    want = np.argsort(-x.reshape(4, 6).astype(np.int64), axis=1, kind="stable").reshape(-1)
    assert (o == want).all(), (o, want)
    print("ok", k.argsort_rows.stats.cache_hits, k.argsort_rows.stats.cache_misses)
    """
)


def test_two_processes_compiling_into_one_cache(tmp_path):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path), PYTHONPATH=ROOT)
    for _ in range(2):  # a cold race, then both loading what the race wrote
        procs = [
            subprocess.Popen(
                [sys.executable, "-c", _COMPILE],
                env=env,
                cwd=ROOT,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for _ in range(2)
        ]
        outs = [p.communicate(timeout=600) for p in procs]
        for p, (out, err) in zip(procs, outs):
            assert p.returncode == 0, err
            assert out.startswith("ok"), out
    assert any(tmp_path.rglob("*.nbi")), "the kernels were not cached in NUMBA_CACHE_DIR"


def test_import_bounds_the_openmp_spin_and_leaves_a_users_setting_alone():
    """``import strided`` sets libgomp's spin count (its idle threads would otherwise spin ~10 ms
    on a core after every parallel kernel, stalling BLAS and other threads there) unless the
    user chose a spin count or a wait policy; numba's first parallel kernel, which loads
    libgomp, comes after the import."""
    from strided.backends.cpu import OPENMP_SPIN_COUNT

    code = "import os, strided; print(os.environ.get('GOMP_SPINCOUNT'))"
    base = {k: v for k, v in os.environ.items() if k not in ("GOMP_SPINCOUNT", "OMP_WAIT_POLICY")}
    for extra, want in (
        ({}, str(OPENMP_SPIN_COUNT)),
        ({"GOMP_SPINCOUNT": "77"}, "77"),
        ({"OMP_WAIT_POLICY": "ACTIVE"}, "None"),
    ):
        out = subprocess.run(
            [sys.executable, "-c", code], env={**base, **extra}, cwd=ROOT, capture_output=True,
            text=True, check=True,
        )  # fmt: skip
        assert out.stdout.strip() == want, (extra, out.stdout, out.stderr)
    assert 0 < OPENMP_SPIN_COUNT < 300_000  # below libgomp's own default


def test_import_bounds_the_openblas_spin_before_scipys_blas_loads():
    """``import strided`` bounds how long OpenBLAS's idle threads spin (by default ~0.1 s on the
    other cores after every threaded product, beside strided's parallel kernels) unless the user
    chose a timeout, and does so before SciPy's OpenBLAS, which reads it when it loads, is
    imported (strided's products and LAPACK calls use that library; numba loads it with the
    first kernel)."""
    from strided.backends.cpu import OPENBLAS_SPIN_LOG2

    code = (
        "import os, sys, strided; print(os.environ.get('OPENBLAS_THREAD_TIMEOUT'), "
        "'scipy.linalg' in sys.modules)"
    )
    base = {k: v for k, v in os.environ.items() if k != "OPENBLAS_THREAD_TIMEOUT"}
    for extra, want in (({}, str(OPENBLAS_SPIN_LOG2)), ({"OPENBLAS_THREAD_TIMEOUT": "9"}, "9")):
        out = subprocess.run(
            [sys.executable, "-c", code], env={**base, **extra}, cwd=ROOT, capture_output=True,
            text=True, check=True,
        )  # fmt: skip
        assert out.stdout.split() == [want, "False"], (extra, out.stdout, out.stderr)
    assert 4 <= OPENBLAS_SPIN_LOG2 < 28  # OpenBLAS's range, below its default
