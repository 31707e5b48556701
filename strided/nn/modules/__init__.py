"""The layers of ``strided.nn`` (each file owns a family, as in PyTorch's ``torch.nn.modules``)."""

from .activation import *  # noqa: F403
from .activation import __all__ as _activation_all
from .activation_attention import *  # noqa: F403
from .activation_attention import __all__ as _attention_all
from .batchnorm import *  # noqa: F403
from .batchnorm import __all__ as _batchnorm_all
from .container import *  # noqa: F403
from .container import __all__ as _container_all
from .conv import *  # noqa: F403
from .conv import __all__ as _conv_all
from .dropout import *  # noqa: F403
from .dropout import __all__ as _dropout_all
from .flatten import *  # noqa: F403
from .flatten import __all__ as _flatten_all
from .linear import *  # noqa: F403
from .linear import __all__ as _linear_all
from .loss import *  # noqa: F403
from .loss import __all__ as _loss_all
from .module import Module
from .normalization import *  # noqa: F403
from .normalization import __all__ as _normalization_all
from .pooling import *  # noqa: F403
from .pooling import __all__ as _pooling_all
from .sparse import *  # noqa: F403
from .sparse import __all__ as _sparse_all
from .transformer import *  # noqa: F403
from .transformer import __all__ as _transformer_all

__all__ = [
    "Module",
    *_activation_all,
    *_attention_all,
    *_batchnorm_all,
    *_container_all,
    *_conv_all,
    *_dropout_all,
    *_flatten_all,
    *_linear_all,
    *_loss_all,
    *_normalization_all,
    *_pooling_all,
    *_sparse_all,
    *_transformer_all,
]
