"""Every operation of the namespace, declared once and grouped by the standard's chapters."""

from . import core, creation, dtype_functions, elementwise, linalg, manipulation, reduction  # noqa: F401
