"""The meta backend: no memory and no computation.

A meta array has shape, strides and dtype only.  The dispatcher stops after the shape and dtype
rules when the device is meta, so this "kernel" is never called; it is installed for every
primitive so that ``strided.dispatch.registered()`` shows meta coverage, which is complete by
construction.
"""

from __future__ import annotations


def _rules_only(*args, **kwargs) -> None:
    """Meta computes nothing: the shape and dtype rules already produced the result."""


def kernel_for(name: str, kind: str):
    """Every primitive has the same (empty) meta kernel, except that meta has no memory to share
    (``interchange`` primitives)."""
    return None if kind == "interchange" else _rules_only
