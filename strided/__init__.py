"""strided: a Python array API namespace with its own strided memory model.

``import strided as xp`` gives the standard's namespace.  Arrays are a 1-D buffer plus shape,
strides (in elements) and offset; every operation is dispatched on (op, device) to numba kernels
(``cpu``) or to the shape/dtype rules alone (``meta``).
"""

from . import dispatch
from ._namespace import *  # noqa: F403  (the standard's namespace)
from ._namespace import __array_api_version__, __array_namespace_info__
from .backends import cpu as _cpu
from .backends import meta as _meta

dispatch.install_backend("cpu", _cpu.kernel_for)
dispatch.install_backend("meta", _meta.kernel_for)
del _cpu, _meta

from . import autograd  # noqa: E402  (declares the backward rules; needs the whole namespace)
