"""Neural-network building blocks with PyTorch's names, signatures and semantics.

``import strided.nn as nn`` gives ``nn.Module``, ``nn.Parameter``, the layers, ``nn.init`` and
``nn.functional``; everything runs on every device, meta included.
"""

from . import modules  # noqa: F401  (strided.nn.modules, as torch.nn.modules)
from .modules import *  # noqa: F403
from .modules import __all__ as _modules_all
from .modules.module import register_module_forward_hook, register_module_forward_pre_hook
from .parameter import Buffer, Parameter

__all__ = [
    "Parameter",
    "Buffer",
    "register_module_forward_hook",
    "register_module_forward_pre_hook",
    *_modules_all,
]
