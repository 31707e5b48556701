"""Errors that name the module they happened in: ``h.17.attn.c_proj (Linear): matmul: ...``.

Forward: ``Module.__call__`` passes an exception on its way out to :func:`name_in_forward`, which
keeps the chain of modules it went through (innermost first) on the exception and rewrites its
message with the path from the outermost of them, keeping the exception's type.

Backward: ``Module.__call__`` registers each call whose output is in the graph (its module, its
output nodes and its inputs' nodes; the nodes by weak reference).  When a backward
rule raises, the engine calls :func:`name_in_backward` with the failing node and the graph: the
module calls that contain the node are those whose outputs lie downstream of it while none of
their inputs does; the innermost is the one whose output is nearest.
"""

from __future__ import annotations

import weakref

from .._array import Array
from .._tape import BACKWARD_ERROR_HOOKS

__all__ = ["arrays_in", "name_in_forward", "register_call"]

# (module, weakrefs of output nodes, ids of input nodes); an entry is dropped once its output
# nodes are gone (the module itself is kept until then, as the graph would keep it in PyTorch)
_calls: list = []
_live_after_prune = 64


def arrays_in(value) -> list:
    """The arrays in a module's arguments or output (nested tuples, lists and dicts)."""
    if isinstance(value, Array):
        return [value]
    if isinstance(value, (tuple, list)):
        return [a for v in value for a in arrays_in(v)]
    if isinstance(value, dict):
        return [a for v in value.values() for a in arrays_in(v)]
    return []


def register_call(module, args: tuple, out) -> None:
    """Remember a module call whose output is in the graph (for errors raised in backward)."""
    global _live_after_prune
    outs = [a._ag.node for a in arrays_in(out) if a._ag is not None and a._ag.node is not None]
    if not outs:
        return
    ins = frozenset(
        id(a._ag.node) for a in arrays_in(args) if a._ag is not None and a._ag.node is not None
    )
    _calls.append((module, [weakref.ref(n) for n in outs], ins))
    if len(_calls) > 2 * _live_after_prune:
        _calls[:] = [c for c in _calls if any(r() is not None for r in c[1])]
        _live_after_prune = max(64, len(_calls))


def _relative_name(parent, child) -> str | None:
    for name, m in parent.named_modules():
        if m is child and name:
            return name
    return None


def _path(chain: list) -> str:
    """The dotted path of ``chain[0]`` inside ``chain[-1]`` (innermost first)."""
    parts = []
    for inner, outer in zip(chain, chain[1:]):
        name = _relative_name(outer, inner)
        parts.append(name if name is not None else f"<{type(inner).__name__}>")
    return ".".join(reversed(parts))


def _rewrite(e: BaseException, chain: list) -> None:
    message = getattr(e, "_strided_message", None)
    if message is None:
        return
    inner = type(chain[0]).__name__
    path = _path(chain)
    if message.startswith(inner):  # the layer's own message already names its type
        text = f"{path}: {message}" if path else message
    else:
        text = f"{path} ({inner}): {message}" if path else f"{inner}: {message}"
    e.args = (text,) + tuple(e.args[1:])


def name_in_forward(e: BaseException, module) -> None:
    """Add ``module`` to the chain of modules ``e`` was raised in, and name them in its
    message (an exception whose first argument is not a message keeps its arguments)."""
    chain = getattr(e, "_strided_modules", None)
    try:
        if chain is None:
            chain = e._strided_modules = []
            first = e.args[0] if len(e.args) == 1 else None
            e._strided_message = first if isinstance(first, str) else None
        chain.append(module)
    except AttributeError:  # an exception type without a __dict__
        return
    _rewrite(e, chain)


def name_in_backward(node, order: list, e: BaseException) -> None:
    """Name the module calls containing ``node`` (whose backward rule raised ``e``)."""
    if getattr(e, "_strided_modules", None) is not None or not _calls:
        return
    consumers: dict = {}
    for n in order:
        for edge in n.edges:
            if edge is not None and edge[0] is not None:
                consumers.setdefault(id(edge[0]), []).append(n)
    down = {id(node)}
    stack = [node]
    while stack:  # every node that used what this one made, directly or not
        for c in consumers.get(id(stack.pop()), ()):
            if id(c) not in down:
                down.add(id(c))
                stack.append(c)
    position = {id(n): i for i, n in enumerate(order)}
    containing = []
    for module, out_refs, ins in _calls:
        outs = [r() for r in out_refs]
        if not ins.isdisjoint(down):
            continue
        nearest = max((position.get(id(o), -1) for o in outs if o is not None and id(o) in down),
                      default=-1)  # fmt: skip
        if nearest >= 0:
            containing.append((nearest, module))
    if not containing:
        return
    containing.sort(key=lambda c: -c[0])  # innermost (nearest the failing node) first
    chain = []
    for _, m in containing:
        if not chain or chain[-1] is not m:
            chain.append(m)
    try:
        e._strided_modules = chain
        first = e.args[0] if len(e.args) == 1 else None
        e._strided_message = f"in backward: {first}" if isinstance(first, str) else None
    except AttributeError:
        return
    _rewrite(e, chain)


BACKWARD_ERROR_HOOKS.append(name_in_backward)
