"""The backward engine: plays the tape from some outputs back to the leaves.

The graph is walked without recursion (graphs of any depth work), nodes run in reverse topological
order, each once, with the sum of the gradients of each of their outputs.  Without
``retain_graph`` every node run releases what it saved, so nothing is kept alive by the graph
afterwards and a second backward through it raises.
"""

from __future__ import annotations

from .. import _dtypes as dt
from .._array import Array
from .._tape import Mode, edge, namespace, version

_ns = namespace


def sum_to(g: Array, shape: tuple) -> Array:
    """``g`` summed over the dimensions it was broadcast along to reach ``shape``."""
    if g._shape == shape:
        return g
    xp = _ns()
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
        xp = _ns()
        if g._dtype.kind == dt.COMPLEX and dtype.kind != dt.COMPLEX:
            g = xp.real(g)
        if g._dtype is not dtype:
            g = xp.astype(g, dtype)
    return g


def _accumulate(old, new):
    return new if old is None else old + new


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
    previous = Mode.enabled
    Mode.enabled = create_graph
    try:
        for node in order:
            gs = buffers.pop(id(node), None)
            if gs is None:
                continue
            _check_saved(node)
            for index, i in captured_nodes.get(id(node), ()):
                results[i] = gs[index]
            if capture is None and node.retained:
                for index, ref in node.retained.items():
                    a = ref()
                    if a is not None and gs[index] is not None:
                        a._ag.grad = _accumulate(a._ag.grad, gs[index])
            # an output that got no gradient passes None (multi-output rules treat it as zero)
            input_grads = node.rule.vjp(node, *gs)
            if not retain_graph:
                _release(node)
            for e, gi, meta in zip(node.edges, input_grads, node.input_meta):
                if e is None or gi is None:
                    continue
                gi = fit(gi, meta)
                target, index = e
                if target is None:  # a leaf: the edge's second item is the array
                    _add_to_leaf(leaf_grads, index, gi)
                else:
                    buf = buffers.setdefault(id(target), [None] * len(target.output_meta))
                    buf[index] = _accumulate(buf[index], gi)

        if capture is not None:
            for i, a in enumerate(capture):
                if a._ag.node is None and id(a) in leaf_grads:
                    results[i] = leaf_grads[id(a)][1]
            return results
        stored = set()
        for leaf, g in leaf_grads.values():
            if id(g) in stored or g._base is not None or any(g is o for o in grads):
                g = _ns().asarray(g, copy=True)  # .grad never aliases another array
            stored.add(id(g))
            leaf._ag.grad = _accumulate(leaf._ag.grad, g)
    finally:
        Mode.enabled = previous
    return None
