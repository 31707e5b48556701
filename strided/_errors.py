"""Exceptions shared by the namespace and the backends."""

from __future__ import annotations

__all__ = ["LinAlgError"]


class LinAlgError(ValueError):
    """A linear-algebra routine failed on valid input: a singular matrix (``inv``, ``solve``), a
    matrix that is not positive definite (``cholesky``), or an iteration that did not converge.

    A subclass of ``ValueError``, as NumPy's ``numpy.linalg.LinAlgError`` is; the message names the
    function and, for stacks, the batch index of the first matrix that failed.  Exported as
    ``strided.linalg.LinAlgError``.
    """

    __module__ = "strided.linalg"
