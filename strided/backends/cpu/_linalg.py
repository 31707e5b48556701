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

So a single matrix with ``m * n * min(m, n)`` up to 64**3 calls its LAPACK driver directly
through SciPy's f2py wrappers (``_direct``), falling back to NumPy's gufunc on any nonzero
``info`` so that failures and non-finite input behave exactly as NumPy's; finite matrices past
that size, alone or stacked, go matrix by matrix through SciPy's drivers in their own precision
(``inv`` by getrf + getri; ``det``/``slogdet`` by getrf in double precision, as NumPy's gufunc,
whose double-precision LU gives float32 a better result); NumPy's gufuncs run stacks of small
matrices, non-finite ones and the failures.  Calls past the direct route run OpenBLAS's threads,
and one library's pool serves them all: SciPy's, which strided's threaded matrix products use
too (``_blas``; NumPy's and SciPy's pools alternating slowed loops of a decomposition and a
product 10-20x).  (NumPy's double-precision eigenvalue and singular value drivers ran 3-8%
faster than SciPy's from about 48 x 48: one library for all is worth more.)
LAPACK failures become :class:`strided.linalg.LinAlgError` naming the function and, in a stack,
the index of the first failing matrix.
"""

from __future__ import annotations

import numpy as np

from ..._errors import batched_linalg as _numpy
from ._blas import fortran_transpose
from ._memory import adopt, numpy_view

#: a single matrix with m * n * min(m, n) up to this calls LAPACK directly (``_direct``); larger
#: ones, alone or stacked, go through SciPy's drivers (``_scipy_route``)
DIRECT_MAX_WORK = 64**3


def _direct(a: np.ndarray) -> bool:
    """Whether ``a`` is one nonempty matrix small enough for the direct LAPACK route (f2py
    refuses empty arrays)."""
    if a.ndim != 2:
        return False
    m, n = a.shape
    return 0 < m * n * min(m, n) <= DIRECT_MAX_WORK


def _scipy_route(a: np.ndarray) -> bool:
    """Whether ``a`` (one matrix or a stack) goes matrix by matrix through SciPy's drivers, in
    its own precision: matrices past the direct route's size.  Their LAPACK calls run
    OpenBLAS's threads, and SciPy's library is the one strided's other BLAS calls use
    (``_blas``: NumPy's pool spinning beside SciPy's slowed loops of an ``svd`` or ``inv``
    and a product 10-20x, from 64 x 64 complex64 and 120 x 120 float64).  Stacks of smaller
    matrices go to NumPy's gufuncs, which loop in C (see :func:`_scipy_per_matrix` for
    failures)."""
    m, n = a.shape[-2:]
    return m * n * min(m, n) > DIRECT_MAX_WORK


def _scipy_per_matrix(outs, one, *arrays) -> bool:
    """``one(matrices...)`` (a tuple of results) into the outputs ``outs`` for each matrix of
    the stack: a single matrix's results taken over (``adopt``: no copy of a C-ordered view),
    a stack's copied in.  False (the outputs' values undefined) when LAPACK reported a failure:
    the caller then runs NumPy's gufunc, the same routines, which raises NumPy's error naming
    the failing matrix or returns NaNs as NumPy does (non-finite input included)."""
    try:
        if arrays[0].ndim == 2:
            _adopt_all(outs, one(*arrays))
            return True
        views = tuple(numpy_view(o) for o in outs)
        for idx in np.ndindex(arrays[0].shape[:-2]):
            for view, r in zip(views, one(*(a[idx] for a in arrays))):
                view[idx] = r
    except np.linalg.LinAlgError:
        return False
    return True


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
    """LinAlgError where LAPACK reports a failure (SciPy's route then leaves the matrix to
    NumPy's gufunc): a positive ``info``, or a negative one (gesdd's answer to NaN input)."""
    if info:
        raise np.linalg.LinAlgError(what)


# -- kernels --------------------------------------------------------------------------------------
def cholesky_cpu(out, x, *, upper):
    a = numpy_view(x)
    what = "the matrix is not positive definite"
    if _direct(a):
        c, info = _lapack("potrf", a)(a, lower=1, clean=1)
        if not info:
            adopt(out, np.conj(c.T) if upper else c)
            return
    if _scipy_route(a):

        def one(m):
            # the lower triangle read whichever factor is asked for, as NumPy does: that of m
            # is the upper one of m.T, whose factor U (U^H U = conj(m)) gives L = U.T
            f, transposed = fortran_transpose(m)
            c, info = _lapack("potrf", m)(f, lower=int(not transposed), clean=1)
            _check_info(what, info)
            low = c.T if transposed else c
            return (np.conj(low.T) if upper else low,)

        if _scipy_per_matrix((out,), one, a):
            return
    low = _numpy("cholesky", what, np.linalg.cholesky, a)
    adopt(out, np.conj(np.swapaxes(low, -1, -2)) if upper else low)


def _lu_solve(what: str):
    """Solve one large system by getrf of m.T (read in place) and getrs of its transpose."""

    def one(m, b):
        f, transposed = fortran_transpose(m)
        lu, piv, info = _lapack("getrf", m)(f)
        _check_info(what, info)
        sol, info = _lapack("getrs", m)(lu, piv, b, trans=int(transposed))
        _check_info(what, info)
        return (sol,)

    return one


def inv_cpu(out, x):
    a = numpy_view(x)
    what = "the matrix is singular"
    if _direct(a):
        r = _getri(a)
        if r is not None:
            adopt(out, r)
            return
    if _scipy_route(a):  # (getrf + getri: faster than NumPy's solve(a, I) too)

        def one(m):
            r = _getri(m)
            if r is None:
                raise np.linalg.LinAlgError(what)
            return (r,)

        if _scipy_per_matrix((out,), one, a):
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
    a, b = numpy_view(x1), numpy_view(x2)
    what = "the matrix is singular"
    if _direct(a) and b.size:
        _, _, sol, info = _lapack("gesv", a)(a, b)
        if not info:
            adopt(out, sol)
            return
    if _scipy_route(a) and b.size and _scipy_per_matrix((out,), _lu_solve(what), a, b):
        return
    adopt(out, _numpy("solve", what, np.linalg.solve, a, b))


def _slogdet_lu(a: np.ndarray):
    """(sign, log|det|) of the finite square ``a`` from SciPy's LU in double precision (as
    NumPy's gufunc computes it, also for single precision input): the diagonal's magnitudes'
    logs summed, its phases and the row swaps' signs multiplied."""
    wide = np.complex128 if a.dtype.kind == "c" else np.float64
    lu, piv, info = _lapack("getrf", np.empty(0, wide))(a.astype(wide).T)  # (F order: no copy)
    diag = np.diagonal(lu)
    swaps = np.count_nonzero(piv != np.arange(piv.size))
    if info > 0:  # an exact zero pivot: singular
        return (wide(0), -np.inf)
    mag = np.abs(diag)
    sign = np.prod(diag / mag) if a.dtype.kind == "c" else np.prod(np.sign(diag))
    return (-sign if swaps % 2 else sign), np.sum(np.log(mag))


def _slogdets(a: np.ndarray):
    """(signs, logs) of a matrix or a stack of large ones by :func:`_slogdet_lu`."""
    if a.ndim == 2:
        return _slogdet_lu(a)
    signs = np.empty(a.shape[:-2], np.complex128 if a.dtype.kind == "c" else np.float64)
    logs = np.empty(a.shape[:-2])
    for idx in np.ndindex(a.shape[:-2]):
        signs[idx], logs[idx] = _slogdet_lu(a[idx])
    return signs, logs


def det_cpu(out, x):
    a = numpy_view(x)
    if _scipy_route(a) and np.isfinite(a).all():  # (NumPy's NaNs for the others)
        sign, log = _slogdets(a)
        with np.errstate(over="ignore", invalid="ignore"):  # (a determinant past the range)
            numpy_view(out)[...] = sign * np.exp(log)  # (NumPy's det: from its slogdet too)
        return
    numpy_view(out)[...] = _numpy("det", None, np.linalg.det, a)


def _adopt_all(outs: tuple, results) -> None:
    """Each output of a multi-output kernel holds its result (taken over or copied in); a
    kernel computing fewer outputs than LAPACK returns passes the leading ones."""
    for out, r in zip(outs, results):
        adopt(out, r)


def slogdet_cpu(outs, x):
    a = numpy_view(x)
    if _scipy_route(a) and np.isfinite(a).all():
        sign, log = _slogdets(a)
        numpy_view(outs[0])[...] = sign
        numpy_view(outs[1])[...] = log
        return
    _adopt_all(outs, _numpy("slogdet", None, np.linalg.slogdet, a))


def eigh_cpu(outs, x, *, compute_vectors):
    a = numpy_view(x)
    op = "eigh" if compute_vectors else "eigvalsh"
    if _direct(a):
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
        heevd = _lapack("heevd" if a.dtype.kind == "c" else "syevd", a)
        n = a.shape[-1]
        lwork = 1 + 6 * n + 2 * n * n if compute_vectors else n * 66 + 1

        def one(m):
            # m's lower triangle is the upper one of m.T, the matrix conj(m): its eigenvalues,
            # and its vectors conjugated
            f, transposed = fortran_transpose(m)
            w, v, info = heevd(f, compute_v=int(compute_vectors), lower=int(not transposed),
                               lwork=lwork)  # fmt: skip
            _check_info("the eigenvalue computation did not converge", info)
            if not compute_vectors:
                return (w,)
            return w, (np.conj(v) if transposed and v.dtype.kind == "c" else v)

        if _scipy_per_matrix(outs, one, a):
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

        if _scipy_per_matrix(outs, one, a):
            return
    if compute_vectors:
        w, v = _numpy(op, None, np.linalg.eig, a)
        o[0][...], o[1][...] = w, v  # real results of real input widen to complex
    else:
        o[0][...] = _numpy(op, None, np.linalg.eigvals, a)


def svd_cpu(outs, x, *, full_matrices, compute_uv):
    a = numpy_view(x)
    op = "svd" if compute_uv else "svdvals"
    if _direct(a):
        u, s, vh, info = _lapack("gesdd", a)(
            a, compute_uv=int(compute_uv), full_matrices=int(full_matrices)
        )
        if not info:
            _adopt_all(outs, (u, s, vh) if compute_uv else (s,))
            return
    if _scipy_route(a):
        gesdd = _lapack("gesdd", a)

        def one(m):
            # m.T = U S Vh read in place: m = Vh.T S U.T
            f, transposed = fortran_transpose(m)
            work, info = _lapack("gesdd_lwork", m)(*f.shape, compute_uv=int(compute_uv),
                                                    full_matrices=int(full_matrices))  # fmt: skip
            u, s, vh, info = gesdd(f, compute_uv=int(compute_uv), full_matrices=int(full_matrices),
                                   lwork=int(work.real))  # fmt: skip
            _check_info("the singular value decomposition did not converge", info)
            if not compute_uv:
                return (s,)
            return (vh.T, s, u.T) if transposed else (u, s, vh)

        if _scipy_per_matrix(outs, one, a):
            return
    if compute_uv:
        _adopt_all(outs, _numpy(op, None, np.linalg.svd, a, full_matrices=full_matrices))
    else:
        adopt(outs[0], _numpy(op, None, np.linalg.svd, a, compute_uv=False))


def qr_cpu(outs, x, *, mode):
    a = numpy_view(x)
    if _direct(a) and _direct_qr(a, outs, mode):
        return
    if _scipy_route(a):
        from scipy.linalg import qr

        def one(m):
            return qr(m, mode="economic" if mode == "reduced" else "full", check_finite=False)

        if _scipy_per_matrix(outs, one, a):
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
