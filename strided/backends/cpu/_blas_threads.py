"""The BLAS thread policy of strided's own CPU kernels: their products run on one BLAS thread.

The convolution kernels call BLAS (through numba's ``np.dot``) on products of a few hundred
thousand to a few million multiply-adds, many per call.  A multi-threaded OpenBLAS hands each
one to its pool and its threads then spin waiting for the next; on a machine whose cores are
busy with other work those spinning threads stall everything (measured: a digits CNN training
step went from ~2 ms to 100+ ms, ratios against PyTorch anywhere from 0.4 to 18).  So:

* products inside strided's kernels run on **one BLAS thread** (the pool is set to 1 for the
  duration of the kernel and restored after: about a microsecond per kernel call);
* the parallelism of a large convolution comes from numba's thread pool instead
  (``NUMBA_NUM_THREADS`` / ``numba.set_num_threads``), one hand-off per call (the ``*_p``
  kernels), which is also what the user sets to choose how many cores strided uses;
* BLAS calls made elsewhere (``matmul`` on large matrices, NumPy) keep the pool's size, which
  the user controls as usual (``OPENBLAS_NUM_THREADS``, or threadpoolctl).

The pools are found with threadpoolctl when it is installed (it is not a dependency: without
it the kernels run with whatever the environment set, and ``OPENBLAS_NUM_THREADS=1`` gives the
same behaviour).
"""

from __future__ import annotations

_POOLS: list | None = None


def _pools() -> list:
    """threadpoolctl's controllers of the BLAS libraries loaded in this process (found once,
    after numba's BLAS has been loaded by the caller's first product)."""
    global _POOLS
    if _POOLS is None:
        try:
            import scipy.linalg.cython_blas  # noqa: F401  (numba's BLAS: load it first)
            from threadpoolctl import ThreadpoolController

            _POOLS = list(ThreadpoolController().select(user_api="blas").lib_controllers)
        except Exception:  # not installed, or a library it cannot drive: leave BLAS alone
            _POOLS = []
    return _POOLS


def one_thread() -> list:
    """Set every multi-threaded BLAS pool to one thread; returns what :func:`restore` needs."""
    saved = []
    for pool in _POOLS if _POOLS is not None else _pools():
        n = pool.get_num_threads()
        if n is not None and n > 1:
            pool.set_num_threads(1)
            saved.append((pool, n))
    return saved


def restore(saved: list) -> None:
    """Give the pools changed by :func:`one_thread` their sizes back."""
    for pool, n in saved:
        pool.set_num_threads(n)
