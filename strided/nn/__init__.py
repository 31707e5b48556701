"""Neural-network building blocks with PyTorch's names, signatures and semantics.

``import strided.nn as nn`` gives ``nn.Module``, ``nn.Parameter``, the layers, ``nn.init`` and
``nn.functional``; everything runs on every device, meta included.
"""

# strided.nn.functional, .init, .modules and .utils, as in torch.nn
from . import functional, init, modules, utils  # noqa: F401
from ._summary import ModuleCost, Summary, summary
from .modules import *  # noqa: F403
from .modules import __all__ as _modules_all
from .modules.module import register_module_forward_hook, register_module_forward_pre_hook
from .parameter import Buffer, Parameter

__all__ = [
    "Parameter",
    "Buffer",
    "register_module_forward_hook",
    "register_module_forward_pre_hook",
    "summary",
    "Summary",
    "ModuleCost",
    *_modules_all,
]
