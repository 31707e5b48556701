"""strided: a Python array API namespace with its own strided memory model.

``import strided as xp`` gives the standard's namespace.  Arrays are a 1-D buffer plus shape,
strides (in elements) and offset; every operation is dispatched on (op, device) to numba kernels
(``cpu``) or to the shape/dtype rules alone (``meta``).
"""

from . import dispatch, fft, linalg
from ._namespace import *  # noqa: F403  (the standard's namespace)
from ._namespace import __array_api_version__, __array_namespace_info__
from .backends import cpu as _cpu
from .backends import meta as _meta

dispatch.install_backend("cpu", _cpu.kernel_for)
dispatch.install_backend("meta", _meta.kernel_for)
del _cpu, _meta


def _install_cuda() -> None:
    """The cuda backend, where CuPy is installed or host execution is asked for
    (``STRIDED_CUDA_HOST=1``); its modules import CuPy only when a GPU runtime is made."""
    import importlib.util
    import os

    if os.environ.get("STRIDED_CUDA_HOST") == "1" or importlib.util.find_spec("cupy"):
        from .backends import cuda

        dispatch.install_backend("cuda", cuda.kernel_for)


_install_cuda()
del _install_cuda

from . import autograd  # noqa: E402  (declares the backward rules; needs the whole namespace)

# errors from inside a composition (std calls var, clip calls maximum) name the function called;
# the elementwise functions, reductions and matmul call their primitive directly, whose rule's
# errors the dispatcher names, and stay unwrapped (their per-call cost)
from ._errors import name_errors as _name_errors  # noqa: E402

_DIRECT = {
    n for n, p in dispatch.primitives().items() if p.kind in ("unary", "binary", "reduction")
} | {"matmul"}
_name_errors(
    globals(),
    [
        n
        for n, f in list(globals().items())
        if not n.startswith("_")
        and n not in _DIRECT
        and callable(f)
        and getattr(f, "__module__", "").startswith("strided._ops")
    ],
)
_shared = [n for n in linalg.__all__ if n in globals()]  # matmul, ...: one function, one wrapper
_name_errors(
    linalg.__dict__, [n for n in linalg.__all__ if n not in _shared + ["LinAlgError"]], "linalg."
)
for _n in _shared:
    setattr(linalg, _n, globals()[_n])
_name_errors(fft.__dict__, fft.__all__, "fft.")
del _name_errors, _DIRECT, _shared, _n

# outside the standard, above the namespace: PyTorch-style samplers (strided.random) and layers
# (strided.nn, as torch.nn); optimizers and schedulers (strided.optim), datasets and loaders
# (strided.utils.data) and safetensors checkpoints (strided.save_file / load_file)
from . import random  # noqa: E402
from .serialization import load_file, save_file  # noqa: E402

#: imported on first use (``strided.nn`` or ``import strided.nn``): ~0.2 s of ``import strided``
#: that array code does not need (the optimizers' numba kernels import numba itself)
_LAZY_SUBMODULES = ("nn", "optim", "utils")


def __getattr__(name: str):
    if name in _LAZY_SUBMODULES:
        import importlib

        return importlib.import_module(f".{name}", __name__)  # also sets the attribute
    raise AttributeError(f"module 'strided' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY_SUBMODULES))
