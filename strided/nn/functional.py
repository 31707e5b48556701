"""``strided.nn.functional`` (PyTorch's ``torch.nn.functional``): the stateless operations the
layers are built from.  Each family lives in a private ``_functional_*.py`` module; this module
only re-exports them."""

from ._functional_attention import *  # noqa: F403
from ._functional_attention import __all__ as _attention_all
from ._functional_conv import *  # noqa: F403
from ._functional_conv import __all__ as _conv_all
from ._functional_core import *  # noqa: F403
from ._functional_core import __all__ as _core_all
from ._functional_loss import *  # noqa: F403
from ._functional_loss import __all__ as _loss_all
from ._functional_norm import *  # noqa: F403
from ._functional_norm import __all__ as _norm_all

__all__ = [*_core_all, *_conv_all, *_norm_all, *_loss_all, *_attention_all]
