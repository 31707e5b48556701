"""The tape: what the dispatcher needs in order to record differentiable calls.

The :class:`Node` recorded for each differentiable call, version counters, and in-place writes.
The dispatcher (``strided.dispatch.apply``) calls :func:`record` around a primitive when an input
tracks gradients (grad mode and ``Array._ag`` live in ``strided._grad_state``); the backward
rules themselves live in
``strided.autograd._rules`` (written with namespace functions, so they run on every device) and the
engine that plays the tape backwards in ``strided.autograd._engine``.  Nothing below the dispatcher
knows about any of this.

Each array has a version counter, kept on the array that owns the memory (views share it through
``Array._base``); every in-place write bumps it, and a backward rule whose saved array changed
since it was saved refuses to run.
"""

from __future__ import annotations

import itertools
import weakref

from ._array import Array
from ._dtypes import FLOAT_KINDS
from ._grad_state import AutogradMeta, Mode
from ._shapes import is_c_contiguous

__all__ = ["Mode", "Node", "AutogradMeta", "record", "setitem", "RULES"]


class Rule:
    """A backward rule: ``vjp(ctx, *grads) -> grads per flat input``, and what it saves."""

    __slots__ = ("vjp", "save_inputs", "save_output")

    def __init__(self, vjp, save_inputs=True, save_output=False):
        self.vjp = vjp
        self.save_inputs = save_inputs
        self.save_output = save_output

    def __call__(self, ctx, *grads):
        return self.vjp(ctx, *grads)


#: op name -> Rule (filled by strided.autograd._rules) or the string "not differentiable"
RULES: dict[str, Rule | str] = {}

#: ``hook(node, order, exception)`` for an exception raised by a node's backward rule, before it
#: propagates (``strided.nn`` names the module the node was recorded in); ``order`` is the graph
#: being run, outputs first.
BACKWARD_ERROR_HOOKS: list = []


class Node:
    """One recorded call: its rule, its (saved) inputs and outputs, and the edges to the nodes
    (or leaf arrays) that produced each input."""

    __slots__ = (
        "name",
        "rule",
        "inputs",
        "params",
        "outputs",
        "edges",
        "input_meta",
        "output_meta",
        "saved_versions",
        "released",
        "retained",  # output index -> weakref of an array that retain_grad()
        "hooks",  # output index -> {handle id: hook} added by register_hook on that output
        "__weakref__",
    )

    def __repr__(self) -> str:
        return f"<strided.autograd.Node {self.name}>"


def _node(name, rule, params, edges, input_meta, output_meta, inputs=None, outputs=None, saved=()):
    node = Node()
    node.name = name
    node.rule = rule
    node.params = params
    node.edges = edges
    node.input_meta = input_meta
    node.output_meta = output_meta
    node.inputs = inputs
    node.outputs = outputs
    if saved:
        versions = []
        for a in saved:
            b = a._base
            versions.append((a, (a if b is None else b)._version))
        node.saved_versions = versions
    else:
        node.saved_versions = ()
    node.released = False
    node.retained = None
    node.hooks = None
    return node


def _meta(a):
    return (a._shape, a._dtype, a._device) if isinstance(a, Array) else None


def root_of(a: Array) -> Array:
    """The array that owns ``a``'s memory (``a`` itself unless ``a`` is a view)."""
    b = a._base
    return a if b is None else b


def version(a: Array) -> int:
    b = a._base
    return (a if b is None else b)._version


def bump_version(a: Array) -> None:
    b = a._base
    (a if b is None else b)._version += 1


def _flat(args) -> list:
    """Positional arguments with lists/tuples of arrays expanded (concat's first argument)."""
    flat = []
    for a in args:
        if type(a) in (list, tuple) and a and isinstance(a[0], Array):
            flat.extend(a)
        else:
            flat.append(a)
    return flat


def in_graph(a: Array) -> bool:
    """True when ``a`` tracks gradients, or is a view of memory whose owner does (a view taken
    before a recorded write into its owner is given a history when it is next used)."""
    if a._ag is not None:
        return True
    b = a._base
    return b is not None and b._ag is not None


def _adopt(a: Array) -> None:
    """Give an untracked view a history if a recorded write changed its owner since it was
    taken (detached arrays, marked with version -1, never are)."""
    root = a._base
    ag = root._ag
    if ag is not None and ag.node is not None and 0 <= a._version != root._version:
        _regenerate_view(a, root)


def edge(a: Array):
    """Where the gradient of ``a`` goes: (node, output index), or (None, a) for a leaf."""
    ag = a._ag
    node = ag.node
    if node is None:
        return (None, a)
    if ag.root_version is not None:
        root = a._base
        if root._version != ag.root_version and root._ag is not None:
            _regenerate_view(a, root)
            return (a._ag.node, 0)
    return (node, ag.index)


_SEQ = (list, tuple)


def record(name: str, rule, forward, args: tuple, params: dict):
    """Run ``forward(*args, **params)`` without recording and put one node for it on the tape.

    ``rule`` is the unit's backward rule (a primitive's ``vjp``); None looks it up by ``name``.

    Data arguments are positional (a list of arrays counts as its elements); everything else
    (axes, keys, flags) goes in ``params``.  Outputs of integer or bool dtype, and outputs that are
    an input itself, carry no gradient.
    """
    Mode.enabled = False
    try:
        out = forward(*args, **params)
    finally:
        Mode.enabled = True
    if rule is None:
        rule = RULES.get(name)
    if rule is None:
        raise RuntimeError(f"autograd: no backward rule is declared for {name!r}")
    if type(rule) is str:  # not differentiable
        return out
    flat = args
    for a in args:
        if type(a) in _SEQ:
            flat = _flat(args)
            break
    else:
        if out.__class__ is Array and out._dtype.kind in FLOAT_KINDS:
            return record_one(name, rule, params, args, out)
    # one pass over the inputs: views adopt a history if a recorded write changed their owner;
    # the edges (where each input's gradient goes) and metas (shape, dtype, device) of each
    edges, metas, in_graph_input = _inputs(flat)
    if not in_graph_input:
        return out  # only views of graph arrays that no recorded write has touched
    if out.__class__ is Array:
        outs = (out,)
    else:
        outs = tuple(out) if isinstance(out, tuple) else (out,)  # named tuples too
    diff_outs = []
    for i, o in enumerate(outs):
        if isinstance(o, Array) and o._dtype.kind in FLOAT_KINDS:
            for a in flat:
                if o is a:
                    break
            else:
                diff_outs.append(i)
    if not diff_outs:
        return out
    saved = []
    if rule.save_inputs:
        for a in flat:
            if isinstance(a, Array):
                saved.append(a)
    if rule.save_output:
        saved.extend(outs)
    node = _node(
        name,
        rule,
        params,
        tuple(edges),
        tuple(metas),
        tuple(_meta(o) for o in outs),
        tuple(flat) if rule.save_inputs else None,
        outs if rule.save_output else None,
        saved,
    )
    roots = None
    for i in diff_outs:
        o = outs[i]
        if o._base is not None:
            if roots is None:
                roots = {id(root_of(a)) for a in flat if isinstance(a, Array)}
            if id(o._base) not in roots:
                # a view of memory the op allocated itself (a keepdims or reshaped result): the
                # output owns that memory, so its history stays its own through later writes
                o._base = None
        o._ag = AutogradMeta(node, i, None if o._base is None else o._base._version)
    return out


def _inputs(args) -> tuple[list, list, bool]:
    """One pass over a call's inputs: views adopt a history if a recorded write changed their
    owner; the edge (where each input's gradient goes) and meta (shape, dtype, device) of each;
    whether any input is in the graph."""
    edges = []
    metas = []
    in_graph_input = False
    for a in args:
        if isinstance(a, Array):
            if a._ag is None and a._base is not None:
                _adopt(a)
            if a._ag is not None:
                in_graph_input = True
                edges.append(edge(a))
            else:
                edges.append(None)
            metas.append((a._shape, a._dtype, a._device))
        else:
            edges.append(None)
            metas.append(None)
    return edges, metas, in_graph_input


def record_one(name: str, rule, params: dict, args: tuple, out: Array) -> Array:
    """record() for the common case: a single floating output of plain arguments (arrays and
    Python scalars, no lists)."""
    for a in args:
        if a is out:
            return out  # an input returned as it is carries no new history
    edges, metas, in_graph_input = _inputs(args)
    if not in_graph_input:
        return out
    saved = [a for a in args if isinstance(a, Array)] if rule.save_inputs else []
    outs = (out,)
    if rule.save_output:
        saved.append(out)
    node = _node(
        name,
        rule,
        params,
        tuple(edges),
        tuple(metas),
        ((out._shape, out._dtype, out._device),),
        args if rule.save_inputs else None,
        outs if rule.save_output else None,
        saved,
    )
    base = out._base
    if base is not None:
        for a in args:
            if isinstance(a, Array) and (a if a._base is None else a._base) is base:
                break
        else:
            # a view of memory the op allocated itself (a keepdims or reshaped result): the
            # output owns that memory, so its history stays its own through later writes
            out._base = base = None
    out._ag = AutogradMeta(node, 0, None if base is None else base._version)
    return out


def record_unary(name: str, rule, params: dict, x: Array, out: Array) -> Array:
    """record_one() for one array argument and a floating output that is not ``x`` itself (a
    fresh result, or a view of ``x``'s memory): views, reductions and unary functions."""
    ag = x._ag
    if ag is not None and ag.node is None:
        e = (None, x)  # a leaf
    else:
        e = _edge_of(x)
        if e is None:
            return out
    if rule.save_inputs:
        saved = [x, out] if rule.save_output else (x,)
        inputs = (x,)
    else:
        saved = (out,) if rule.save_output else ()
        inputs = None
    node = _node(
        name,
        rule,
        params,
        (e,),
        ((x._shape, x._dtype, x._device),),
        ((out._shape, out._dtype, out._device),),
        inputs,
        (out,) if rule.save_output else None,
        saved,
    )
    base = out._base
    if base is not None:
        if base is not (x if x._base is None else x._base):
            out._base = base = None  # memory the op allocated itself (see record_one)
        else:
            out._ag = AutogradMeta(node, 0, base._version)
            return out
    out._ag = AutogradMeta(node, 0, None)
    return out


def record_scalar(name: str, rule, args: tuple, x: Array, out: Array) -> Array:
    """record_one() for an array ``x`` and a Python scalar (in either order) giving a fresh
    floating output: ``a * 2.0``, ``1.0 - a``."""
    e = _edge_of(x)
    if e is None:
        return out
    meta = (x._shape, x._dtype, x._device)
    if args[0] is x:
        edges, metas = (e, None), (meta, None)
    else:
        edges, metas = (None, e), (None, meta)
    saved = [x] if rule.save_inputs else []
    if rule.save_output:
        saved.append(out)
    node = _node(
        name,
        rule,
        _NO_PARAMS,
        edges,
        metas,
        ((out._shape, out._dtype, out._device),),
        args if rule.save_inputs else None,
        (out,) if rule.save_output else None,
        saved,
    )
    out._ag = AutogradMeta(node, 0, None)
    return out


def _edge_of(a: Array):
    """``a``'s edge, or None when it is not in the graph (a view adopts a history first)."""
    if a._ag is None:
        if a._base is None:
            return None
        _adopt(a)
        if a._ag is None:
            return None
    return edge(a)


def record_two(
    name: str, rule, x1: Array, x2: Array, out: Array, params: dict | None = None
) -> Array:
    """record_one() for two arrays and a fresh floating output (elementwise calls: the output is
    never an input, nor a view of one): every recorded binary operation comes here."""
    e1, e2 = _edge_of(x1), _edge_of(x2)
    if e1 is None and e2 is None:
        return out
    metas = ((x1._shape, x1._dtype, x1._device), (x2._shape, x2._dtype, x2._device))
    saved = [x1, x2] if rule.save_inputs else []
    if rule.save_output:
        saved.append(out)
    node = _node(
        name,
        rule,
        _NO_PARAMS if params is None else params,
        (e1, e2),
        metas,
        ((out._shape, out._dtype, out._device),),
        (x1, x2) if rule.save_inputs else None,
        (out,) if rule.save_output else None,
        saved,
    )
    out._ag = AutogradMeta(node, 0, None)
    return out


_NO_PARAMS: dict = {}


def _leaf_check(a: Array, what: str) -> None:
    for b in (a, root_of(a)):
        ag = b._ag
        if ag is not None and ag.node is None and Mode.enabled:
            which = "a leaf array that requires grad"
            if b is not a:
                which += " (or a view of one)"
            raise RuntimeError(
                f"{what}: {which} cannot be changed in place while grad mode is on; write inside "
                "strided.autograd.no_grad(), or change a copy"
            )


def setitem(x: Array, key, value, write) -> None:
    """``x[key] = value`` performed by ``write(x, key, value)``, recorded when it matters.

    Writing into an array (or a view of one) that tracks gradients, or writing a value that
    does, puts a node on the tape that replaces the written array's history: the gradient of the
    old contents is zero where the write landed, the value gets the gradient of the region.
    """
    base = x._base  # (root_of and bump_version written out: every write comes here)
    root = x if base is None else base
    if not Mode.enabled or (
        root._ag is None
        and x._ag is None
        and not (isinstance(value, Array) and value._ag is not None)
    ):
        write(x, key, value)
        root._version += 1
        return
    _leaf_check(x, "__setitem__")
    if root is x:
        old_edge = edge(x) if x._ag is not None else None
        _write_untracked(write, x, key, value)
        _attach_write(x, "setitem", old_edge, value, {"key": key})
        return
    # a view of another array: the write changes the owner's contents; record it there
    if not is_c_contiguous(root._shape, root._strides):
        raise RuntimeError(
            "__setitem__: writing into a view of an array that is not C-contiguous while "
            "gradients are recorded is not supported; write into a contiguous copy instead"
        )
    if isinstance(key, Array) or (type(key) is tuple and any(isinstance(k, Array) for k in key)):
        raise RuntimeError(
            "__setitem__: integer-array or boolean indexing into a view of another array is "
            "not recorded by autograd; index the array that owns the memory instead"
        )
    target = x._index_view(key)
    geometry = {
        "shape": target._shape,
        "strides": target._strides,
        "offset": target._offset - root._offset,
    }
    old_edge = edge(root) if root._ag is not None else None
    _write_untracked(write, x, key, value)
    _attach_write(root, "setitem_strided", old_edge, value, geometry)
    _regenerate_view(x, root)


def _write_untracked(write, x: Array, key, value) -> None:
    Mode.enabled = False
    try:
        write(x, key, value)
    finally:
        Mode.enabled = True
    bump_version(x)


def _attach_write(target: Array, name: str, old_edge, value, params: dict) -> None:
    value_edge = edge(value) if isinstance(value, Array) and value._ag is not None else None
    node = _node(
        name,
        RULES[name],
        params,
        (old_edge, value_edge),
        (_meta(target), _meta(value)),
        (_meta(target),),
    )
    _new_history(target, AutogradMeta(node, 0))


def _regenerate_view(view: Array, root: Array) -> None:
    """Give ``view`` a fresh history: a strided window on its owner's current contents."""
    if not is_c_contiguous(root._shape, root._strides):
        raise RuntimeError(
            "autograd: a view of an array that was changed in place is used, but the array is "
            "not C-contiguous, so the view's history cannot be rebuilt; take the view again "
            "after the change"
        )
    params = {"shape": view._shape, "strides": view._strides, "offset": view._offset - root._offset}
    node = _node(
        "as_strided",
        RULES["as_strided"],
        params,
        (edge(root) if root._ag is not None else None,),
        (_meta(root),),
        (_meta(view),),
    )
    _new_history(view, AutogradMeta(node, 0, root._version))


def _new_history(a: Array, ag: AutogradMeta) -> None:
    """Give ``a`` the history ``ag`` after an in-place change; a ``retain_grad()`` moves with
    it (``.grad`` is the gradient of the array as it is now), while hooks stay with the old
    history (they see the gradient of the contents they were registered on), as in PyTorch."""
    old = a._ag
    a._ag = ag
    if old is None or old.node is None or not old.node.retained:
        return
    ref = old.node.retained.get(old.index)
    if ref is not None and ref() is a:
        del old.node.retained[old.index]
        if ag.node.retained is None:
            ag.node.retained = {}
        ag.node.retained[ag.index] = ref


def retain_grad(a: Array) -> None:
    """``a.retain_grad()``: keep this non-leaf array's gradient in ``.grad`` after
    ``backward()`` (accumulated over calls; the gradient after any hooks).  A no-op on leaves."""
    if a._ag is None:
        raise RuntimeError("retain_grad: this array does not require grad")
    node, index = edge(a)
    if node is not None:
        if node.retained is None:
            node.retained = {}
        node.retained[index] = weakref.ref(a)


def register_hook(a: Array, hook) -> RemovableHandle:
    """``a.register_hook(hook)``: call ``hook(grad)`` with the gradient reaching ``a`` in every
    backward (summed over its uses); a returned array replaces the gradient (same shape and
    dtype), None keeps it.  A leaf's hooks run before the gradient is accumulated into
    ``.grad``; a non-leaf's before the gradient goes on to the operation that made it (and
    before ``retain_grad`` stores it).  Returns a handle whose ``remove()`` takes it off."""
    if a._ag is None:
        raise RuntimeError(
            "register_hook: cannot register a hook on an array that does not require grad"
        )
    node, index = edge(a)
    if node is None:
        ag = a._ag
        if ag.hooks is None:
            ag.hooks = {}
        hooks = ag.hooks
    else:
        if node.hooks is None:
            node.hooks = {}
        hooks = node.hooks.setdefault(index, {})
    handle = RemovableHandle(hooks)
    hooks[handle.id] = hook
    return handle


class RemovableHandle:
    """Returned by ``register_hook``: ``remove()`` (or leaving a ``with`` block) takes the hook
    off; removing twice is harmless."""

    __slots__ = ("_hooks", "id")
    _ids = itertools.count()

    def __init__(self, hooks: dict) -> None:
        self._hooks = hooks
        self.id = next(RemovableHandle._ids)

    def remove(self) -> None:
        self._hooks.pop(self.id, None)

    def __enter__(self) -> RemovableHandle:
        return self

    def __exit__(self, *exc) -> None:
        self.remove()


def run_hooks(hooks: dict, g: Array) -> Array:
    """``g`` passed through each hook in the order they were added (a hook returning an array
    replaces it)."""
    for hook in tuple(hooks.values()):
        r = hook(g)
        if r is None:
            continue
        name = getattr(hook, "__name__", repr(hook))
        if not isinstance(r, Array):
            raise TypeError(
                f"hook {name!r} returned a {type(r).__name__}; a hook returns an array or None"
            )
        if r._shape != g._shape:
            raise RuntimeError(
                f"hook {name!r} has changed the size of value (was {g._shape}, got {r._shape})"
            )
        if r._dtype is not g._dtype:
            raise RuntimeError(
                f"hook {name!r} has changed the type of value (was {g._dtype.name}, got "
                f"{r._dtype.name})"
            )
        g = r
    return g
