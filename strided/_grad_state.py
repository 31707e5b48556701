"""The state autograd keeps on arrays and per thread: grad mode and :class:`AutogradMeta`.

It sits below the array object (which carries an ``AutogradMeta`` in ``Array._ag``) and the tape
(``strided._tape``), which records nodes into it.
"""

from __future__ import annotations

import threading

__all__ = ["Mode", "AutogradMeta"]


class _GradMode(threading.local):
    """Grad mode, per thread: operations record on the tape only while ``enabled``."""

    enabled = True


#: ``Mode.enabled`` is the calling thread's grad mode (True in every new thread).
Mode = _GradMode()


class AutogradMeta:
    """Autograd state of one array: a leaf that requires grad (``node is None``) or the output
    ``index`` of the ``node`` that made it.  ``root_version`` is set for views: the version of the
    memory's owner when the node was attached.  ``hooks`` are the functions registered with
    ``register_hook`` (None when there are none)."""

    __slots__ = ("node", "index", "grad", "root_version", "hooks")

    def __init__(self, node=None, index: int = 0, root_version=None):
        self.node = node
        self.index = index
        self.grad = None
        self.root_version = root_version
        self.hooks = None
