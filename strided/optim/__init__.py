"""strided.optim: optimizers and learning-rate schedulers with PyTorch's names and semantics.

``SGD``, ``Adam``, ``AdamW``, ``RMSprop`` and ``Adagrad`` update parameters in place without
recording (``no_grad``), with PyTorch's exact update formulas; ``lr_scheduler`` holds the
schedulers.
"""

from . import lr_scheduler
from .adagrad import Adagrad
from .adam import Adam
from .adamw import AdamW
from .optimizer import Optimizer
from .rmsprop import RMSprop
from .sgd import SGD

__all__ = ["Adagrad", "Adam", "AdamW", "Optimizer", "RMSprop", "SGD", "lr_scheduler"]
