"""The array API standard's ``linalg`` extension: ``strided.linalg``.

Re-exports only: the functions live in ``strided/_ops/linalg_ext.py`` (decompositions, solvers and
norms) and ``strided/_ops/linalg.py`` / ``manipulation.py`` (``matmul``, ``tensordot``,
``vecdot``, ``matrix_transpose``, shared with the main namespace).  LAPACK failures raise
:class:`LinAlgError`, a subclass of ``ValueError``.
"""

from ._errors import LinAlgError
from ._ops.linalg import matmul, tensordot, vecdot
from ._ops.linalg_ext import (
    cholesky,
    cross,
    det,
    diagonal,
    eig,
    eigh,
    eigvals,
    eigvalsh,
    inv,
    matrix_norm,
    matrix_power,
    matrix_rank,
    outer,
    pinv,
    qr,
    slogdet,
    solve,
    svd,
    svdvals,
    trace,
    vector_norm,
)
from ._ops.manipulation import matrix_transpose

__all__ = [
    "LinAlgError",
    "cholesky",
    "cross",
    "det",
    "diagonal",
    "eig",
    "eigh",
    "eigvals",
    "eigvalsh",
    "inv",
    "matmul",
    "matrix_norm",
    "matrix_power",
    "matrix_rank",
    "matrix_transpose",
    "outer",
    "pinv",
    "qr",
    "slogdet",
    "solve",
    "svd",
    "svdvals",
    "tensordot",
    "trace",
    "vecdot",
    "vector_norm",
]
