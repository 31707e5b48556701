"""The backward engine: plays the tape from some outputs back to the leaves.

The graph is walked without recursion (graphs of any depth work), nodes run in reverse topological
order, each once, with the sum of the gradients of each of their outputs.  Without
``retain_graph`` every node run releases what it saved, so nothing is kept alive by the graph
afterwards and a second backward through it raises.
"""

from __future__ import annotations

from .. import _dtypes as dt
from .. import _namespace as _xp
from .._array import Array
from .._tape import BACKWARD_ERROR_HOOKS, Mode, edge, run_hooks, version


def sum_to(g: Array, shape: tuple) -> Array:
    """``g`` summed over the dimensions it was broadcast along to reach ``shape``."""
    if g._shape == shape:
        return g
    xp = _xp
    lead = g.ndim - len(shape)
    if lead < 0:  # a value with extra leading size-1 dims was written (x[i] = v, v.shape (1,))
        return xp.reshape(g, shape)
    axes = tuple(range(lead)) + tuple(
        lead + i for i, n in enumerate(shape) if n == 1 and g._shape[lead + i] != 1
    )
    if axes:
        g = xp.sum(g, axis=axes, keepdims=True)
    return xp.reshape(g, shape)


def fit(g: Array, meta: tuple) -> Array:
    """``g`` brought to the shape and dtype of the input described by ``meta``."""
    shape, dtype, _ = meta
    g = sum_to(g, shape)
    if g._dtype is not dtype:
        xp = _xp
        if g._dtype.kind == dt.COMPLEX and dtype.kind != dt.COMPLEX:
            g = xp.real(g)
        if g._dtype is not dtype:
            g = xp.astype(g, dtype)
    return g


def _accumulate(old, new):
    return new if old is None else old + new


def _own(g: Array, given: list) -> Array:
    """``g``, or a copy of it where it is a view or one of the gradients the caller passed in:
    ``.grad`` never aliases another array."""
    if g._base is not None or any(g is o for o in given):
        return _xp.asarray(g, copy=True)
    return g


def _add_to_leaf(leaf_grads: dict, leaf: Array, g: Array) -> None:
    entry = leaf_grads.get(id(leaf))
    leaf_grads[id(leaf)] = (leaf, g if entry is None else entry[1] + g)


def _check_saved(node) -> None:
    if node.released:
        raise RuntimeError(
            f"backward: trying to run backward through {node.name} a second time, but its saved "
            "arrays were freed after the first backward; pass retain_graph=True to the first "
            "backward (or autograd.grad) to go through the graph again"
        )
    for a, v in node.saved_versions:
        now = version(a)
        if now != v:
            raise RuntimeError(
                f"backward: an array saved by {node.name} for its backward was modified in place "
                f"(it was at version {v} when saved, and is now at version {now}); compute on a "
                "copy, or make the in-place change before the array is used"
            )


def _release(node) -> None:
    node.released = True
    node.inputs = None
    node.outputs = None
    node.saved_versions = ()


def _toposort(roots: list) -> list:
    """Nodes reachable from ``roots``, each after every node that uses its outputs."""
    order = []
    seen = set()
    for root in roots:
        if id(root) in seen:
            continue
        seen.add(id(root))
        stack = [(root, iter(root.edges))]
        while stack:
            node, it = stack[-1]
            for e in it:
                if e is not None and e[0] is not None and id(e[0]) not in seen:
                    seen.add(id(e[0]))
                    stack.append((e[0], iter(e[0].edges)))
                    break
            else:
                stack.pop()
                order.append(node)
    order.reverse()
    return order


def _leading_to(order: list, captured_nodes: dict, capture: list) -> set:
    """ids of the nodes in ``order`` with a path to an array in ``capture`` (through their
    inputs): the only ones autograd.grad needs to run (PyTorch runs no others either)."""
    leaves = {id(a) for a in capture if a._ag.node is None}
    wanted: set = set()
    for node in reversed(order):  # producers before the nodes that use their outputs
        for e in node.edges:
            if e is None:
                continue
            target, index = e
            if (target is None and id(index) in leaves) or (
                target is not None and (id(target) in wanted or id(target) in captured_nodes)
            ):
                wanted.add(id(node))
                break
    return wanted


def run_backward(
    outputs: list,
    grads: list,
    *,
    retain_graph: bool,
    create_graph: bool,
    capture: list | None = None,
):
    """Backpropagate ``grads`` from ``outputs``.

    With ``capture`` (a list of arrays) return the gradient reaching each of them, touching no
    ``.grad``; otherwise accumulate into the ``.grad`` of every leaf (and of arrays that
    ``retain_grad()``).
    """
    buffers: dict = {}  # id(node) -> list of output gradients
    leaf_grads: dict = {}  # id(leaf) -> (leaf, gradient)
    roots = []
    for out, g in zip(outputs, grads):
        node, index = edge(out)
        if node is None:
            _add_to_leaf(leaf_grads, out, g)
            continue
        buf = buffers.setdefault(id(node), [None] * len(node.output_meta))
        buf[index] = _accumulate(buf[index], g)
        roots.append(node)
    captured_nodes = {}
    if capture is not None:
        for i, a in enumerate(capture):
            node, index = edge(a)
            if node is not None:
                captured_nodes.setdefault(id(node), []).append((index, i))
    results = [None] * (len(capture) if capture is not None else 0)

    order = _toposort(roots)
    wanted = None if capture is None else _leading_to(order, captured_nodes, capture)
    previous = Mode.enabled
    Mode.enabled = create_graph
    try:
        for node in order:
            if wanted is not None and id(node) not in wanted and id(node) not in captured_nodes:
                continue  # autograd.grad: nothing asked for lies behind this node
            gs = buffers.pop(id(node), None)
            if gs is None:
                continue
            _check_saved(node)
            if node.hooks:  # register_hook on an output: it sees (and may replace) its gradient
                for index, hooks in node.hooks.items():
                    if hooks and gs[index] is not None:
                        gs[index] = run_hooks(hooks, gs[index])
            for index, i in captured_nodes.get(id(node), ()):
                results[i] = gs[index]
            if capture is None and node.retained:
                for index, ref in node.retained.items():
                    a = ref()
                    g = gs[index]
                    if a is not None and g is not None:
                        # a copy, as for leaves: the same gradient goes on into the graph
                        old = a._ag.grad
                        a._ag.grad = _xp.asarray(g, copy=True) if old is None else old + g
            if wanted is not None and id(node) not in wanted:
                continue  # a captured output whose inputs lead to nothing asked for
            # an output that got no gradient passes None (multi-output rules treat it as zero)
            try:
                input_grads = node.rule.vjp(node, *gs)
                if not retain_graph:
                    _release(node)
                fitted = [
                    None if e is None or gi is None else fit(gi, meta)
                    for e, gi, meta in zip(node.edges, input_grads, node.input_meta)
                ]
            except Exception as error:
                for hook in BACKWARD_ERROR_HOOKS:
                    hook(node, order, error)
                raise
            for e, gi in zip(node.edges, fitted):
                if gi is None:
                    continue
                target, index = e
                if target is None:  # a leaf: the edge's second item is the array
                    _add_to_leaf(leaf_grads, index, gi)
                else:
                    buf = buffers.setdefault(id(target), [None] * len(target.output_meta))
                    buf[index] = _accumulate(buf[index], gi)

        if capture is not None:
            for i, a in enumerate(capture):
                if a._ag.node is None and id(a) in leaf_grads:
                    g = leaf_grads[id(a)][1]
                    results[i] = g if a._ag.hooks is None else run_hooks(a._ag.hooks, g)
            return results
        stored = set()
        for leaf, g in leaf_grads.values():
            if leaf._ag.hooks:  # a leaf's hooks run before its gradient is accumulated
                h = run_hooks(leaf._ag.hooks, g)
                if h is not g:  # an array the hook made: the caller may still hold it
                    g = _xp.asarray(h, copy=True)
            if id(g) in stored:
                g = _xp.asarray(g, copy=True)
            g = _own(g, grads)
            stored.add(id(g))
            leaf._ag.grad = _accumulate(leaf._ag.grad, g)
    finally:
        Mode.enabled = previous
    return None
