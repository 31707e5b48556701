"""CPU kernels of the ``linalg`` extension's primitives: LAPACK through NumPy and SciPy.

Inputs arrive cast to the compute dtype (possibly non-contiguous or broadcast views, viewed here as
NumPy arrays without a copy); outputs are fresh C-contiguous arrays the kernel fills.  Multi-output
primitives receive a tuple of outputs (see ``strided/_ops/linalg_ext.py``).

Which LAPACK route, measured on the 2-core development machine with ``benchmarks/bench_linalg.py``
(OpenBLAS, one thread, best of 7):

* Batches of small matrices: NumPy's ``numpy.linalg`` functions are gufuncs that loop over the
  batch in C.  1000 stacked 4x4 float64 matrices: inv 0.35 ms, eigh 1.6, svd 3.0, qr 0.66; a
  Python loop over SciPy's routines 4.4 / 13.0 / 12.4 / 17.0 ms.  numba's ``np.linalg`` in a
  compiled loop was as fast as NumPy (0.75 / 2.6 / 3.5 ms in an earlier run where NumPy took
  0.54 / 2.4 / 4.1) but costs ~1.7 s of compilation per function and dtype on a cold cache, and
  refuses non-finite input in several routines.
* One large double-precision matrix: the same LAPACK either way (n=400 float64: eigh 13.2 vs
  13.6 ms, svd 30.0 vs 31.0, qr 6.1 vs 5.8 for NumPy vs SciPy), except ``inv``: NumPy solves
  ``a @ X = I`` (gesv, 7.1 ms), getrf + getri take 5.0 ms (n=130: 0.40 vs 0.25 ms).
* Single precision: NumPy computes float32/complex64 in double precision and casts back, SciPy
  calls the single-precision drivers: n=400 float32 inv 8.8 vs 2.6 ms, eigh 15.1 vs 8.4, svd
  30.5 vs 15.5, qr 6.0 vs 3.5 (n=128: inv 0.6 vs 0.3, svd 3.0 vs 1.8; n<=64: equal).

* One small matrix: NumPy's Python wrapper and gufunc set-up cost more than LAPACK itself
  (8x8 float64: np.linalg.cholesky 3.7 us, SciPy's f2py ``dpotrf`` 0.8-1.0; 64x64 float32:
  cholesky 20 vs 9, solve 34 vs 21, inv 87 vs 39, svd 445 vs 310), and single precision is
  computed in single precision, as PyTorch does.

So NumPy's gufuncs run stacks of matrices; a single matrix with ``m * n * min(m, n)`` up to
64**3 (32**3 for double-precision eigenvalue and singular value drivers) calls its LAPACK driver
directly through SciPy's f2py wrappers (``_direct``), falling
back to NumPy's gufunc on any nonzero ``info`` so that failures and non-finite input behave
exactly as NumPy's; single-precision matrices with ``m * n * min(m, n)`` of at least 128**3 go
matrix by matrix through SciPy's single-precision drivers, and ``inv`` of such large matrices in
any precision (getrf + getri).
``det``/``slogdet`` always use NumPy (its double-precision LU gives float32 a better result).
LAPACK failures become :class:`strided.linalg.LinAlgError` naming the function and, in a stack,
the index of the first failing matrix.
"""

from __future__ import annotations

import numpy as np

from ..._errors import batched_linalg as _numpy
from ..._errors import linalg_failure as _fail
from ._memory import adopt, numpy_view

#: single-precision problems at least this large (m * n * min(m, n)) use SciPy's drivers
SCIPY_MIN_WORK = 128**3

_SINGLE = (np.dtype(np.float32), np.dtype(np.complex64))


#: a single matrix with m * n * min(m, n) up to this calls LAPACK directly (``_direct``)
DIRECT_MAX_WORK = 64**3


#: the same for the eigenvalue and singular value drivers in double precision: from about
#: 48 x 48 NumPy's (the same routines, its own OpenBLAS build) ran 3-8% faster here
DIRECT_MAX_WORK_DOUBLE_SPECTRAL = 32**3


def _direct(a: np.ndarray, spectral: bool = False) -> bool:
    """Whether ``a`` is one nonempty matrix small enough for the direct LAPACK route (f2py
    refuses empty arrays); ``spectral``: for an eigenvalue or singular value driver."""
    if a.ndim != 2:
        return False
    m, n = a.shape
    limit = DIRECT_MAX_WORK
    if spectral and a.dtype not in _SINGLE:
        limit = DIRECT_MAX_WORK_DOUBLE_SPECTRAL
    return 0 < m * n * min(m, n) <= limit


def _scipy_route(a: np.ndarray, any_precision: bool = False) -> bool:
    m, n = a.shape[-2:]
    return (any_precision or a.dtype in _SINGLE) and m * n * min(m, n) >= SCIPY_MIN_WORK


def _per_matrix(op: str, fn, outs, *arrays) -> None:
    """Write ``fn(matrices...)`` (a tuple of results) into ``outs`` for each matrix of the batch."""
    for idx in np.ndindex(arrays[0].shape[:-2]):
        try:
            results = fn(*(a[idx] for a in arrays))
        except np.linalg.LinAlgError as e:  # SciPy's LinAlgError is NumPy's
            raise _fail(op, str(e), idx if arrays[0].ndim > 2 else None) from None
        for o, r in zip(outs, results):
            o[idx] = r


_LAPACK: dict = {}


def _lapack(name: str, a: np.ndarray):
    """SciPy's f2py wrapper of the LAPACK routine ``name`` for ``a``'s dtype (s/d/c/z), looked up
    once per name and dtype (get_lapack_funcs costs ~3 us a call)."""
    key = (name, a.dtype)
    fn = _LAPACK.get(key)
    if fn is None:
        from scipy.linalg import get_lapack_funcs

        fn = _LAPACK[key] = get_lapack_funcs((name,), (a,))[0]
    return fn


def _check_info(what: str, info: int) -> None:
    if info > 0:
        raise np.linalg.LinAlgError(what)
    if info < 0:  # a wrapper bug, never the user's input
        raise RuntimeError(f"LAPACK: illegal value in argument {-info}")


# -- kernels --------------------------------------------------------------------------------------
def cholesky_cpu(out, x, *, upper):
    a, o = numpy_view(x), numpy_view(out)
    what = "the matrix is not positive definite"
    if _direct(a):
        c, info = _lapack("potrf", a)(a, lower=1, clean=1)
        if not info:
            adopt(out, np.conj(c.T) if upper else c)
            return
    if _scipy_route(a):

        def one(m):
            # the lower triangle read whichever factor is asked for, as NumPy does
            c, info = _lapack("potrf", m)(m, lower=1, clean=1)
            _check_info(what, info)
            return (np.conj(c.T) if upper else c,)

        _per_matrix("cholesky", one, (o,), a)
        return
    low = _numpy("cholesky", what, np.linalg.cholesky, a)
    adopt(out, np.conj(np.swapaxes(low, -1, -2)) if upper else low)


def _gesv(what: str):
    def one(m, b):
        _, _, sol, info = _lapack("gesv", m)(m, b)
        _check_info(what, info)
        return (sol,)

    return one


def inv_cpu(out, x):
    a, o = numpy_view(x), numpy_view(out)
    what = "the matrix is singular"
    if _direct(a):
        r = _getri(a)
        if r is not None:
            adopt(out, r)
            return
    if _scipy_route(a, any_precision=True):  # getrf + getri beats NumPy's solve(a, I)

        def one(m):
            r = _getri(m)
            if r is None:
                raise np.linalg.LinAlgError(what)
            return (r,)

        _per_matrix("inv", one, (o,), a)
        return
    adopt(out, _numpy("inv", what, np.linalg.inv, a))


def _getri(a: np.ndarray) -> np.ndarray | None:
    """The inverse of the square ``a`` by getrf + getri (None where LAPACK reports a failure):
    inv(a) = inv(a.T).T, so LAPACK reads the C-ordered ``a`` as ``a.T`` in Fortran order and
    returns inv(a.T) in Fortran order, its transpose C-ordered, without a transposing copy."""
    lu, piv, info = _lapack("getrf", a)(a.T)
    if info:
        return None
    # (64 columns a block, the optimum LAPACK's query gives for OpenBLAS's getri)
    r, info = _lapack("getri", a)(lu, piv, lwork=max(1, 64 * a.shape[-1]))
    return None if info else r.T


def solve_cpu(out, x1, x2):
    # x1: (..., M, M) and x2: (..., M, K) with one (already broadcast) batch shape
    a, b, o = numpy_view(x1), numpy_view(x2), numpy_view(out)
    what = "the matrix is singular"
    if _direct(a) and b.size:
        _, _, sol, info = _lapack("gesv", a)(a, b)
        if not info:
            adopt(out, sol)
            return
    if _scipy_route(a):
        _per_matrix("solve", _gesv(what), (o,), a, b)
        return
    adopt(out, _numpy("solve", what, np.linalg.solve, a, b))


def det_cpu(out, x):
    numpy_view(out)[...] = _numpy("det", None, np.linalg.det, numpy_view(x))


def _adopt_all(outs: tuple, results) -> None:
    """Each output of a multi-output kernel holds its result (taken over or copied in); a
    kernel computing fewer outputs than LAPACK returns passes the leading ones."""
    for out, r in zip(outs, results):
        adopt(out, r)


def slogdet_cpu(outs, x):
    _adopt_all(outs, _numpy("slogdet", None, np.linalg.slogdet, numpy_view(x)))


def eigh_cpu(outs, x, *, compute_vectors):
    a = numpy_view(x)
    o = tuple(numpy_view(r) for r in outs)
    op = "eigh" if compute_vectors else "eigvalsh"
    if _direct(a, spectral=True):
        n = a.shape[-1]
        # the optimal workspace without a query (the wrapper's minimum, 2n + 1, makes the
        # eigenvalues-only reduction unblocked: 2-6x slower from n = 128)
        lwork = 1 + 6 * n + 2 * n * n if compute_vectors else n * 66 + 1
        heevd = _lapack("heevd" if a.dtype.kind == "c" else "syevd", a)
        w, v, info = heevd(a, compute_v=int(compute_vectors), lower=1, lwork=lwork)
        if not info:
            _adopt_all(outs, (w, v))  # (v is a placeholder without vectors: outs has one)
            return
    if _scipy_route(a):
        from scipy.linalg import eigh

        def one(m):
            r = eigh(
                m, lower=True, eigvals_only=not compute_vectors, check_finite=False, driver="evd"
            )
            return r if compute_vectors else (r,)

        _per_matrix(op, one, o, a)
        return
    if compute_vectors:
        _adopt_all(outs, _numpy(op, None, np.linalg.eigh, a))
    else:
        adopt(outs[0], _numpy(op, None, np.linalg.eigvalsh, a))


def eig_cpu(outs, x, *, compute_vectors):
    a = numpy_view(x)
    o = tuple(numpy_view(r) for r in outs)
    op = "eig" if compute_vectors else "eigvals"
    if _scipy_route(a):
        from scipy.linalg import eig

        def one(m):
            if not np.isfinite(m).all():  # as NumPy: LAPACK may not return on NaN/inf input
                raise np.linalg.LinAlgError("the matrix contains infinities or NaNs")
            r = eig(m, right=compute_vectors, check_finite=False)
            return r if compute_vectors else (r,)

        _per_matrix(op, one, o, a)
        return
    if compute_vectors:
        w, v = _numpy(op, None, np.linalg.eig, a)
        o[0][...], o[1][...] = w, v  # real results of real input widen to complex
    else:
        o[0][...] = _numpy(op, None, np.linalg.eigvals, a)


def svd_cpu(outs, x, *, full_matrices, compute_uv):
    a = numpy_view(x)
    o = tuple(numpy_view(r) for r in outs)
    op = "svd" if compute_uv else "svdvals"
    if _direct(a, spectral=True):
        u, s, vh, info = _lapack("gesdd", a)(
            a, compute_uv=int(compute_uv), full_matrices=int(full_matrices)
        )
        if not info:
            _adopt_all(outs, (u, s, vh) if compute_uv else (s,))
            return
    if _scipy_route(a):
        from scipy.linalg import svd

        def one(m):
            r = svd(m, full_matrices=full_matrices, compute_uv=compute_uv, check_finite=False)
            return r if compute_uv else (r,)

        _per_matrix(op, one, o, a)
        return
    if compute_uv:
        _adopt_all(outs, _numpy(op, None, np.linalg.svd, a, full_matrices=full_matrices))
    else:
        adopt(outs[0], _numpy(op, None, np.linalg.svd, a, compute_uv=False))


def qr_cpu(outs, x, *, mode):
    a = numpy_view(x)
    o = tuple(numpy_view(r) for r in outs)
    if _direct(a) and _direct_qr(a, outs, mode):
        return
    if _scipy_route(a):
        from scipy.linalg import qr

        _per_matrix(
            "qr",
            lambda m: qr(m, mode="economic" if mode == "reduced" else "full", check_finite=False),
            o,
            a,
        )
        return
    _adopt_all(outs, _numpy("qr", None, np.linalg.qr, a, mode=mode))


def _direct_qr(a: np.ndarray, outs: tuple, mode: str) -> bool:
    """QR of the one matrix ``a`` by geqrf + orgqr/ungqr into ``outs`` = (Q, R), as NumPy
    computes it; False (nothing written) where LAPACK reports a failure."""
    m, n = a.shape
    k = min(m, n)
    qr, tau, _, info = _lapack("geqrf", a)(a)
    if info:
        return False
    generate = _lapack("ungqr" if a.dtype.kind == "c" else "orgqr", a)
    if mode == "complete" and m > n:  # Q is m x m: the reflectors in the first n columns
        reflectors = np.zeros((m, m), a.dtype, order="F")
        reflectors[:, :n] = qr
    else:
        reflectors = qr[:, :k]
    q, _, info = generate(reflectors, tau)
    if info:
        return False
    _adopt_all(outs, (q, np.triu(qr if mode == "complete" else qr[:k])))
    return True


KERNELS = {
    "linalg_cholesky": cholesky_cpu,
    "linalg_inv": inv_cpu,
    "linalg_solve": solve_cpu,
    "linalg_det": det_cpu,
    "linalg_slogdet": slogdet_cpu,
    "linalg_eigh": eigh_cpu,
    "linalg_eig": eig_cpu,
    "linalg_svd": svd_cpu,
    "linalg_qr": qr_cpu,
}
