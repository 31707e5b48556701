"""Matrix products that OpenBLAS runs on threads go through SciPy's BLAS.

NumPy and SciPy each ship an OpenBLAS with a thread pool of its own.  After a threaded call a
pool's threads spin for a while waiting for the next one, and on a machine with few cores the
other library's threaded call then runs beside them.  strided's LAPACK calls and numba's
``np.dot`` use SciPy's library; products through NumPy's made a loop alternating the two crawl
(measured on 2 cores: ``inv`` of a 128 x 128 float64 matrix then a 128 x 128 product 0.5 ->
12 ms a pair, a 64 x 64 complex64 ``svd`` then a product 0.6 -> 8.7 ms).  So products large
enough to be threaded (OpenBLAS's own thresholds below) use SciPy's gemm and gemv through their
f2py wrappers (~0.3 us more a call than NumPy's dot), writing into the result in place; smaller
ones run on the calling thread in either library and stay with NumPy's cheaper call.
"""

from __future__ import annotations

import numpy as np

#: OpenBLAS runs gemm on one thread while m * n * k is at most this (its interface's
#: SMP_THRESHOLD_MIN, 65536 for real and 8192 for complex, times GEMM_MULTITHREAD_THRESHOLD 4;
#: measured: a 48 x 48 complex64 product already woke NumPy's pool), gemv while m * n is below
#: THREADED_GEMV (2304 times the same 4)
THREADED_GEMM = 65536 * 4
THREADED_GEMM_COMPLEX = 8192 * 4
THREADED_GEMV = 2304 * 4


def threaded_gemm(m: int, k: int, n: int, dtype: np.dtype) -> bool:
    """Whether OpenBLAS runs an (m, k) by (k, n) product of ``dtype`` on its threads."""
    return m * k * n > (THREADED_GEMM_COMPLEX if dtype.kind == "c" else THREADED_GEMM)


def threaded_matrix_product(m: int, k: int, n: int, dtype: np.dtype) -> bool:
    """Whether :func:`threaded_product` takes an (m, k) by (k, n) product of ``dtype``: one
    gemm runs on threads, or a single row or column of results (a gemv, or a dot for one) of at
    least THREADED_GEMV operand elements."""
    if m == 1 or n == 1:
        return m * k * n >= THREADED_GEMV
    return threaded_gemm(m, k, n, dtype)


_FUNCS: dict = {}  # (name, dtype) -> SciPy's f2py wrapper


def _blas(name: str, dtype: np.dtype):
    fn = _FUNCS.get((name, dtype))
    if fn is None:
        from scipy.linalg import get_blas_funcs

        fn = _FUNCS[(name, dtype)] = get_blas_funcs(name, dtype=dtype)
    return fn


def fortran_transpose(a: np.ndarray):
    """(f, transposed): the matrix ``a`` as a Fortran-ordered ``f`` that BLAS and LAPACK read in
    place: ``a.T`` when ``a`` is C-ordered (``transposed``), ``a`` itself when it is
    Fortran-ordered, else the transpose of a C-ordered copy (no transposing copy of a large
    matrix: ~4 ms of a 1000 x 1000 float64 cholesky's ~11)."""
    if a.flags.c_contiguous:
        return a.T, True
    if a.flags.f_contiguous:
        return a, False
    return np.ascontiguousarray(a).T, True


def _gemv(mat: np.ndarray, vec: np.ndarray, out: np.ndarray, transposed: bool) -> None:
    """out = mat @ vec (``transposed``: mat.T @ vec), all contiguous, by SciPy's gemv."""
    a, a_is_mat_t = fortran_transpose(mat)
    trans = int(a_is_mat_t != transposed)  # (op(a) is mat, or mat.T when ``transposed``)
    res = _blas("gemv", out.dtype)(1.0, a, vec, 0.0, out, trans=trans, overwrite_y=1)
    if res is not out:  # f2py copied (not expected for these layouts); an identity test, as
        out[...] = res  # ndarray.ctypes.data costs ~1 us a read


def threaded_product(x: np.ndarray, y: np.ndarray, out: np.ndarray) -> bool:
    """out = x @ y by SciPy's BLAS where OpenBLAS would run it on threads: x (m, k) or (k,), y
    (k, n) or (k,), out the C-ordered result, of one float or complex dtype, k > 0.  Returns
    False, doing nothing, for a product small enough for one thread (the caller's NumPy call
    then runs it) or a vector that is not contiguous."""
    if x.ndim == 2 and y.ndim == 2:
        (m, k), n = x.shape, y.shape[1]
        # a single row or column of results: gemv, or a dot product for one (gemm's blocking
        # of a degenerate product took 0.6 ms for a (1, 10**6) by (10**6, 1) float64; dot
        # 0.09); gemm below where the vector is not contiguous
        if n == 1 and threaded_product(x, y[:, 0], out[:, 0]):
            return True
        if m == 1 and threaded_product(x[0], y, out[0]):
            return True
        if not threaded_gemm(m, k, n, out.dtype):
            return False
        # out.T (Fortran-ordered) = y.T @ x.T: no copy of a C- or F-ordered operand
        a, a_is_y_t = fortran_transpose(y)
        b, b_is_x_t = fortran_transpose(x)
        c = out.T
        res = _blas("gemm", out.dtype)(
            1.0, a, b, 0.0, c, trans_a=int(not a_is_y_t), trans_b=int(not b_is_x_t), overwrite_c=1
        )
        if res is not c:  # (f2py copied: not expected for these layouts)
            out[...] = res.T
        return True
    mat, vec = (x, y) if x.ndim == 2 else (y, x)
    if mat.size < THREADED_GEMV or not vec.flags.c_contiguous or not out.flags.c_contiguous:
        return False
    if mat.shape[mat is y] == 1 and (mat.flags.c_contiguous or mat.flags.f_contiguous):
        # one row by a vector (or a vector by one column): a dot product
        out[0] = _blas("dotu" if out.dtype.kind == "c" else "dot", out.dtype)(mat.reshape(-1), vec)
        return True
    _gemv(mat, vec, out, transposed=mat is y)
    return True
