"""Every operation of the namespace, declared once and grouped by the standard's chapters."""

from . import (  # noqa: F401
    core,
    creation,
    dtype_functions,
    elementwise,
    linalg,
    manipulation,
    nn_conv,
    operators,
    reduction,
    searching,
)

operators.bind()  # the array object's methods call the operations by name
