"""``strided.nn.summary``: what a model costs, per module, measured by running it.

One forward (and, for training, one backward) of the model is run on the device of its
parameters — on ``meta`` that is the rules alone, so a 175-billion-parameter model is costed in
about a second.  Every primitive call is observed (:func:`strided.dispatch.observe`) and charged
to the innermost module running it: its FLOPs in forward; in backward, the FLOPs of the backward
rules of the nodes that module's forward recorded (the backward that actually runs, not a 2x
estimate); and the arrays autograd saved for backward (from the tape), counted once per memory
owner.  Primitives with no FLOP formula are listed by name, never counted as zero silently.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from .. import _dtypes as dt
from .. import _namespace as _xp
from .. import dispatch
from .._array import Array
from .._shapes import prod
from .._tape import root_of
from ._errors import arrays_in
from ._flops import flops
from .modules.module import (
    Module,
    register_module_forward_hook,
    register_module_forward_pre_hook,
)

__all__ = ["summary", "Summary", "ModuleCost"]

# bytes of optimizer state per trainable parameter, in units of the state dtype's size
_OPTIMIZER_STATES = {"sgd": 0, "sgd-momentum": 1, "adam": 2, "adamw": 2, "rmsprop": 1, "adagrad": 1}


@dataclasses.dataclass
class ModuleCost:
    """One row of the table: a module (``path`` "" is the model itself) and what it costs,
    its submodules included."""

    path: str
    type: str
    output_shapes: list
    params: int = 0
    trainable: int = 0
    forward_flops: int = 0
    backward_flops: int = 0
    saved_bytes: int = 0
    depth: int = 0

    def as_dict(self) -> dict:
        return dataclasses.asdict(self)


@dataclasses.dataclass
class Summary:
    """The result of :func:`summary`: ``rows`` (one :class:`ModuleCost` per module, in call
    order), the totals, and the primitives without a FLOP formula.  ``str()`` is the table;
    :meth:`as_dicts` gives the rows as dictionaries (for notebooks and data frames)."""

    model: str
    device: str
    rows: list
    params: int
    trainable: int
    forward_flops: int
    backward_flops: int
    saved_bytes: int
    weight_bytes: int
    gradient_bytes: int
    optimizer_bytes: int
    optimizer: str | None
    precision: str
    uncounted: dict  # primitive name -> number of calls without a FLOP formula

    @property
    def flops(self) -> int:
        """FLOPs of one step: forward + backward."""
        return self.forward_flops + self.backward_flops

    @property
    def peak_bytes(self) -> int:
        """Peak training memory: weights + gradients + optimizer state + saved activations."""
        return self.weight_bytes + self.gradient_bytes + self.optimizer_bytes + self.saved_bytes

    def as_dicts(self) -> list[dict]:
        return [r.as_dict() for r in self.rows]

    def __str__(self) -> str:
        return _table(self)

    __repr__ = __str__


def _count(n: float) -> str:
    """A count with an SI suffix: 1.23K, 45.6M, 2.20P."""
    for value, suffix in ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "K")):
        if abs(n) >= value:
            return f"{n / value:.2f}{suffix}"
    return str(int(n))


def _bytes(n: float) -> str:
    for value, suffix in ((2**40, "TiB"), (2**30, "GiB"), (2**20, "MiB"), (2**10, "KiB")):
        if abs(n) >= value:
            return f"{n / value:.2f} {suffix}"
    return f"{int(n)} B"


def _shapes(shapes: list) -> str:
    text = ", ".join("(" + ", ".join(map(str, s)) + ")" for s in shapes)
    return text if len(text) <= 28 else text[:25] + "..."


def _table(s: Summary) -> str:
    header = (
        f"{'module':38s} {'type':22s} {'output':28s} {'params':>9s} {'fwd FLOPs':>10s} "
        f"{'bwd FLOPs':>10s} {'saved':>11s}"
    )
    lines = [f"{s.model} on {s.device}", header, "-" * len(header)]
    for r in s.rows:
        name = r.path or "(model)"
        if len(name) > 38:
            name = "..." + name[-35:]
        lines.append(
            f"{name:38s} {r.type[:22]:22s} {_shapes(r.output_shapes):28s} {_count(r.params):>9s} "
            f"{_count(r.forward_flops):>10s} {_count(r.backward_flops):>10s} "
            f"{_bytes(r.saved_bytes):>11s}"
        )
    lines.append("-" * len(header))
    opt = f" ({s.optimizer} state)" if s.optimizer else ""
    mixed = ", mixed precision" if s.precision == "mixed" else ""
    lines += [
        f"parameters: {s.params:,} ({s.trainable:,} trainable)",
        f"FLOPs per step: {s.flops:.4e} (forward {s.forward_flops:.4e}, "
        f"backward {s.backward_flops:.4e})",
        f"memory{mixed}: weights {_bytes(s.weight_bytes)}, gradients {_bytes(s.gradient_bytes)}, "
        f"optimizer{opt} {_bytes(s.optimizer_bytes)}, saved activations "
        f"{_bytes(s.saved_bytes)}; peak training memory {_bytes(s.peak_bytes)}",
    ]
    if s.uncounted:
        names = ", ".join(f"{k} x{v}" for k, v in sorted(s.uncounted.items()))
        lines.append(f"not counted (no FLOP formula): {names}")
    return "\n".join(lines)


class _RuleInModule:
    """A node's backward rule, run while ``path`` is the module charged for what it computes."""

    __slots__ = ("rule", "path", "state", "save_inputs", "save_output")

    def __init__(self, rule, path: str, state: dict):
        self.rule = rule
        self.path = path
        self.state = state
        self.save_inputs = getattr(rule, "save_inputs", False)
        self.save_output = getattr(rule, "save_output", False)

    def vjp(self, ctx, *grads):
        previous = self.state["backward_module"]
        self.state["backward_module"] = self.path
        try:
            return self.rule.vjp(ctx, *grads)
        finally:
            self.state["backward_module"] = previous


def _nodes_from(outputs: list) -> list:
    """Every node reachable from ``outputs``' histories."""
    seen: dict = {}
    stack = [a._ag.node for a in outputs if a._ag is not None and a._ag.node is not None]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen[id(node)] = node
        for e in node.edges:
            if e is not None and e[0] is not None and id(e[0]) not in seen:
                stack.append(e[0])
    return list(seen.values())


def _claim(outputs: list, path, node_module: dict) -> None:
    """Give ``path`` every node behind ``outputs`` that no module has claimed yet."""
    stack = [a._ag.node for a in outputs if a._ag is not None and a._ag.node is not None]
    while stack:
        node = stack.pop()
        if id(node) in node_module:
            continue
        node_module[id(node)] = path
        for e in node.edges:
            if e is not None and e[0] is not None and id(e[0]) not in node_module:
                stack.append(e[0])


def summary(
    model: Module,
    *inputs,
    train: bool = True,
    loss: Callable | None = None,
    optimizer: str | None = "adamw",
    precision: str = "native",
    **kwargs,
) -> Summary:
    """Run ``model(*inputs, **kwargs)`` once (plus one backward when ``train``) and return its
    cost per module: output shapes, parameters (trainable/total), forward FLOPs, backward FLOPs
    counted from the backward that runs, and the activation memory saved for backward; with
    totals for parameters, FLOPs per step and peak training memory = weights + gradients +
    ``optimizer`` state (``"adamw"``, ``"adam"``, ``"sgd"``, ``"sgd-momentum"``, ``"rmsprop"``,
    ``"adagrad"`` or None) + saved activations.

    ``precision="native"`` counts every array in its own dtype; ``"mixed"`` estimates mixed
    precision training: 16-bit weights, gradients and activations, plus a float32 master copy
    of the weights and float32 optimizer state (AdamW: 16 bytes per parameter in all).

    Works on any device; on ``meta`` nothing is computed, so any size of model costs little.
    ``loss(output)`` gives the scalar to differentiate (by default the sum of the output).
    """
    if not isinstance(model, Module):
        raise TypeError(f"summary: expected a strided.nn.Module, got {type(model).__name__}")
    if precision not in ("native", "mixed"):
        raise ValueError(f"summary: precision must be 'native' or 'mixed', got {precision!r}")
    if optimizer is not None and optimizer not in _OPTIMIZER_STATES:
        raise ValueError(
            f"summary: unknown optimizer {optimizer!r}; expected one of "
            f"{sorted(_OPTIMIZER_STATES)} or None"
        )
    paths = {id(m): name for name, m in model.named_modules()}
    rows: dict[str, ModuleCost] = {}
    stack: list[str] = []
    state = {"backward_module": None, "phase": "forward"}
    node_module: dict = {}  # id(node) -> path of the module whose forward recorded it
    uncounted: dict = {}

    def row(path: str, module: Module) -> ModuleCost:
        r = rows.get(path)
        if r is None:
            own = list(module.parameters())
            r = rows[path] = ModuleCost(
                path=path,
                type=type(module).__name__,
                output_shapes=[],
                params=sum(prod(p.shape) for p in own),
                trainable=sum(prod(p.shape) for p in own if p.requires_grad),
                depth=0 if not path else path.count(".") + 1,
            )
        return r

    def pre(module, args):
        path = paths.get(id(module))
        if path is not None:
            # what the arguments bring along was recorded by the module running now
            _claim(arrays_in(args), stack[-1] if stack else "", node_module)
            row(path, module)
            stack.append(path)

    def post(module, args, output):
        path = paths.get(id(module))
        if path is not None and stack and stack[-1] == path:
            stack.pop()
            outs = arrays_in(output)
            if not rows[path].output_shapes:
                rows[path].output_shapes = [a.shape for a in outs]
            # the nodes this call recorded and no submodule claimed are this module's (inner
            # modules return first, so each node goes to the innermost module recording it)
            _claim(outs, path, node_module)

    def charge(path: str | None, field: str, n: int) -> None:
        # a module's cost includes its submodules': charge the path and each of its parents
        if path is None:
            return
        while True:
            r = rows.get(path)
            if r is not None:
                setattr(r, field, getattr(r, field) + n)
            if not path:
                return
            path = path.rsplit(".", 1)[0] if "." in path else ""

    def seen(prim, args, params, out, depth):
        if depth:
            return  # a primitive's own parts, or recording's re-run: counted at depth 0
        n = flops(prim, args, params, out)
        if n is None:
            uncounted[prim.name] = uncounted.get(prim.name, 0) + 1
            n = 0
        if state["phase"] == "forward":
            charge(stack[-1] if stack else "", "forward_flops", n)
        else:
            charge(state["backward_module"] or "", "backward_flops", n)

    handles = [register_module_forward_pre_hook(pre), register_module_forward_hook(post)]
    try:
        # history the inputs bring along belongs to no module of this model
        _claim(arrays_in(inputs) + arrays_in(kwargs), None, node_module)
        with dispatch.observe(seen):
            row("", model)
            output = model(*inputs, **kwargs)
            outs = arrays_in(output)
            if train:
                target = loss(output) if loss is not None else None
                if target is None:
                    if not outs:
                        raise TypeError("summary: the model returned no array to differentiate")
                    target = _xp.sum(outs[0])
                    for o in outs[1:]:
                        target = target + _xp.sum(o)
                _claim([target], "", node_module)  # the loss: the model's own
                nodes = _nodes_from([target])
                state_arrays = [*model.parameters(), *model.buffers()]
                _charge_saved(nodes, node_module, charge, state_arrays)
                for node in nodes:
                    path = node_module.get(id(node))
                    if path is not None:
                        node.rule = _RuleInModule(node.rule, path, state)
                state["phase"] = "backward"
                target.backward()
    finally:
        for h in handles:
            h.remove()
    params = list(model.parameters())
    n_params = sum(prod(p.shape) for p in params)
    trainable = [p for p in params if p.requires_grad]
    mixed = precision == "mixed"

    def nbytes(p) -> int:
        return prod(p.shape) * (2 if mixed else p.dtype.bits // 8)

    weight_bytes = sum(nbytes(p) for p in params)
    grad_bytes = sum(nbytes(p) for p in trainable) if train else 0
    opt_bytes = 0
    if train and optimizer is not None:
        per = _OPTIMIZER_STATES[optimizer]
        for p in trainable:
            # mixed precision keeps the states and a master copy of the weights in float32
            opt_bytes += (per + 1) * prod(p.shape) * 4 if mixed else per * nbytes(p)
    top = rows[""]
    if mixed:  # activations are kept in 16 bits
        for r in rows.values():
            r.saved_bytes //= 2
    top = rows[""]
    device = str(params[0].device) if params else str(outs[0].device if outs else "cpu")
    return Summary(
        model=type(model).__name__,
        device=device,
        rows=list(rows.values()),
        params=n_params,
        trainable=sum(prod(p.shape) for p in trainable),
        forward_flops=top.forward_flops,
        backward_flops=top.backward_flops,
        saved_bytes=top.saved_bytes,
        weight_bytes=weight_bytes,
        gradient_bytes=grad_bytes,
        optimizer_bytes=opt_bytes,
        optimizer=optimizer if train else None,
        precision=precision,
        uncounted=uncounted,
    )


def _charge_saved(nodes: list, node_module: dict, charge, state_arrays: list) -> None:
    """Charge each array saved for backward to the module that produced its memory (the one
    that saved it when no node did: the model's inputs), once per memory owner.  Parameters,
    buffers, leaves that require grad and views of them are weights, not activations."""
    owners = {id(root_of(a)) for a in state_arrays}
    for node in nodes:
        for a, _ in node.saved_versions:
            root = root_of(a)
            if id(root) in owners or (a._ag is not None and a._ag.node is None):
                continue
            owners.add(id(root))
            ag = root._ag
            producer = ag.node if ag is not None and ag.node is not None else None
            if producer is None and a._ag is not None:
                producer = a._ag.node  # a view of an input: the module that took the view
            path = node_module.get(id(producer)) if producer is not None else None
            charge(path if path is not None else node_module.get(id(node)), "saved_bytes",
                   _nbytes(root))  # fmt: skip


def _nbytes(a: Array) -> int:
    return prod(a._shape) * a._dtype.bits // 8


def parse_inputs(spec: str, device) -> list:
    """``"1,2048:int64;4,3:float32"`` -> zero arrays of those shapes and dtypes on ``device``
    (what the command line's ``--input`` takes)."""
    arrays = []
    for part in spec.split(";"):
        part = part.strip()
        if not part:
            continue
        shape_text, _, dtype_text = part.partition(":")
        try:
            shape = tuple(int(s) for s in shape_text.split(",") if s.strip())
        except ValueError:
            raise ValueError(
                f"--input {part!r}: the shape must be integers separated by commas"
            ) from None
        name = dtype_text.strip() or "float32"
        dtype = getattr(dt, name, None)
        if not isinstance(dtype, dt.DType):
            raise ValueError(f"--input {part!r}: unknown dtype {name!r}")
        arrays.append(_xp.zeros(shape, dtype=dtype, device=device))
    return arrays
