"""``Optimizer``: the base class of strided's optimizers, with PyTorch's names and semantics.

Parameters are strided arrays that require grad (``nn.Parameter`` or plain leaves), given as an
iterable of arrays, of ``(name, array)`` pairs, or of dicts (parameter groups with their own
hyperparameters).  ``state`` maps each parameter to its per-parameter state (a dict);
``state_dict()`` has PyTorch's layout: ``{"state": {index: {...}}, "param_groups": [{...,
"params": [index, ...]}]}`` with parameters numbered in order of appearance across the groups.
"""

from __future__ import annotations

import copy
import functools
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, MutableMapping
from typing import Any

import numpy as np

from .._array import Array
from .._tape import RemovableHandle
from ..autograd import enable_grad

__all__ = ["Optimizer", "required"]


class _RequiredParameter:
    """Marks a hyperparameter that has no default (PyTorch's ``optim.optimizer.required``)."""

    def __repr__(self) -> str:
        return "<required parameter>"


required = _RequiredParameter()


class _StateDict(MutableMapping):
    """A dict keyed by parameter identity (arrays compare elementwise, so they cannot be dict
    keys); missing parameters read as a fresh empty dict, like PyTorch's ``defaultdict(dict)``."""

    __slots__ = ("_items",)

    def __init__(self) -> None:
        self._items: dict[int, tuple[Array, dict]] = {}

    def __getitem__(self, p: Array) -> dict:
        item = self._items.get(id(p))
        if item is None:
            item = self._items[id(p)] = (p, {})
        return item[1]

    def __setitem__(self, p: Array, value: dict) -> None:
        self._items[id(p)] = (p, value)

    def __delitem__(self, p: Array) -> None:
        del self._items[id(p)]

    def __contains__(self, p: object) -> bool:
        return id(p) in self._items

    def __iter__(self) -> Iterator[Array]:
        return (p for p, _ in list(self._items.values()))

    def __len__(self) -> int:
        return len(self._items)

    def get(self, p: Array, default=None):
        item = self._items.get(id(p))
        return default if item is None else item[1]

    def __repr__(self) -> str:
        return f"state({len(self._items)} parameters)"


def _check_param(name: str, p: object) -> None:
    if not isinstance(p, Array):
        raise TypeError(
            f"{name}: optimizer can only optimize strided arrays, but one of the params is "
            f"{type(p).__name__}"
        )
    if not p.is_leaf:
        raise ValueError(
            f"{name}: can't optimize a non-leaf array (it was computed by an operation)"
        )
    if p.dtype.kind != "real floating":
        raise TypeError(
            f"{name}: can't optimize an array of dtype {p.dtype.name} (shape {p.shape}); "
            "parameters must have a real floating-point dtype"
        )


class Optimizer:
    """Base class for all optimizers (PyTorch's ``torch.optim.Optimizer``).

    Args:
        params: an iterable of arrays, of ``(name, array)`` pairs, or of dicts defining
            parameter groups (a ``"params"`` entry plus hyperparameters that override
            ``defaults``).
        defaults: the default value of every hyperparameter of a group.
    """

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "step" in cls.__dict__:
            cls.step = _with_step_hooks(cls.__dict__["step"])

    def __init__(self, params: Iterable[Any], defaults: dict[str, Any]) -> None:
        self._step_pre_hooks: OrderedDict = OrderedDict()
        self._step_post_hooks: OrderedDict = OrderedDict()
        self._opt_called = False  # set by the first step(); schedulers check it
        self.defaults = defaults
        self.state: _StateDict = _StateDict()
        self.param_groups: list[dict[str, Any]] = []
        name = type(self).__name__
        if isinstance(params, Array):
            raise TypeError(
                f"{name}: params argument given to the optimizer should be an iterable of "
                f"arrays or dicts, but got a single array of shape {params.shape}"
            )
        param_groups = list(params)
        if len(param_groups) == 0:
            raise ValueError(f"{name}: optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for group in param_groups:
            self.add_param_group(group)

    # -- groups ---------------------------------------------------------------------------------
    def add_param_group(self, param_group: dict[str, Any]) -> None:
        """Add a parameter group (a dict with ``"params"`` and optional hyperparameters)."""
        name = type(self).__name__
        if not isinstance(param_group, dict):
            raise TypeError(f"{name}: param_group must be a dict, got {type(param_group).__name__}")
        params = param_group["params"]
        if isinstance(params, Array):
            params = [params]
        elif isinstance(params, set):
            raise TypeError(
                f"{name}: optimizer parameters need to be organized in ordered collections, but "
                "the ordering of arrays in sets will change between runs; use a list instead"
            )
        else:
            params = list(params)
        names = []
        plain = []
        for p in params:
            if isinstance(p, tuple) and len(p) == 2 and isinstance(p[0], str):
                names.append(p[0])
                p = p[1]
            plain.append(p)
        if names and len(names) != len(plain):
            raise ValueError(f"{name}: all parameters of a group must be named, or none")
        for p in plain:
            _check_param(name, p)
        group = dict(param_group)
        group["params"] = plain
        if names:
            group["param_names"] = names
        for key, default in self.defaults.items():
            if default is required and key not in group:
                raise ValueError(
                    f"{name}: parameter group didn't specify a value of required optimization "
                    f"parameter {key}"
                )
            group.setdefault(key, default)
        seen = {id(p) for g in self.param_groups for p in g["params"]}
        if len({id(p) for p in plain}) != len(plain):
            raise ValueError(f"{name}: a parameter group contains the same parameter twice")
        if any(id(p) in seen for p in plain):
            raise ValueError(f"{name}: some parameters appear in more than one parameter group")
        self.param_groups.append(group)

    # -- gradients ------------------------------------------------------------------------------
    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the gradients of all parameters: to None (default) or to zeros in place."""
        for group in self.param_groups:
            for p in group["params"]:
                g = p.grad
                if g is None:
                    continue
                if set_to_none:
                    p.grad = None
                else:
                    if g.requires_grad:
                        g = g.detach()
                        p.grad = g
                    g[...] = 0

    # -- stepping -------------------------------------------------------------------------------
    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Update the parameters once; ``closure`` (re-evaluating the loss with gradients
        enabled) is called first when given, and its result returned."""
        raise NotImplementedError

    def register_step_pre_hook(self, hook: Callable) -> RemovableHandle:
        """Call ``hook(optimizer, args, kwargs)`` before each ``step``; a returned
        ``(args, kwargs)`` pair replaces the step's arguments.  Returns a removable handle."""
        handle = RemovableHandle(self._step_pre_hooks)
        self._step_pre_hooks[handle.id] = hook
        return handle

    def register_step_post_hook(self, hook: Callable) -> RemovableHandle:
        """Call ``hook(optimizer, args, kwargs)`` after each ``step``.  Returns a removable
        handle."""
        handle = RemovableHandle(self._step_post_hooks)
        self._step_post_hooks[handle.id] = hook
        return handle

    @staticmethod
    def _closure(closure: Callable[[], Any] | None) -> Any:
        if closure is None:
            return None
        with enable_grad():
            return closure()

    # -- state dicts ----------------------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        """``{"state": {index: state}, "param_groups": [...]}`` (PyTorch's layout); the state's
        arrays are the optimizer's own (not copies), as in PyTorch."""
        index: dict[int, int] = {}
        groups = []
        for group in self.param_groups:
            packed = {k: v for k, v in group.items() if k != "params"}
            ids = []
            for p in group["params"]:
                i = index.setdefault(id(p), len(index))
                ids.append(i)
            packed["params"] = ids
            groups.append(packed)
        state = {}
        for group in self.param_groups:
            for p in group["params"]:
                s = self.state.get(p)
                if s:
                    state[index[id(p)]] = s
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Load a ``state_dict()``: hyperparameters and per-parameter state (arrays are copied
        and cast to their parameter's floating dtype and device; ``step`` stays as it is)."""
        name = type(self).__name__
        try:
            saved_groups = state_dict["param_groups"]
            saved_state = state_dict["state"]
        except (KeyError, TypeError):
            raise ValueError(
                f"{name}.load_state_dict: expected a dict with 'state' and 'param_groups'"
            ) from None
        groups = self.param_groups
        if len(groups) != len(saved_groups):
            raise ValueError(
                f"{name}.load_state_dict: loaded state dict has a different number of parameter "
                f"groups ({len(saved_groups)}) than the optimizer ({len(groups)})"
            )
        for g, sg in zip(groups, saved_groups):
            if len(g["params"]) != len(sg["params"]):
                raise ValueError(
                    f"{name}.load_state_dict: loaded state dict contains a parameter group that "
                    f"doesn't match the size of optimizer's group ({len(sg['params'])} vs "
                    f"{len(g['params'])} parameters)"
                )
        id_map = {}
        for g, sg in zip(groups, saved_groups):
            for i, p in zip(sg["params"], g["params"]):
                id_map[i] = p
        new_state = _StateDict()
        for k, v in saved_state.items():
            if k not in id_map:
                continue
            p = id_map[k]
            new_state[p] = {key: _cast_state(key, val, p) for key, val in v.items()}
            for key, val in new_state[p].items():
                if isinstance(val, Array) and val.shape != p.shape:
                    raise ValueError(
                        f"{name}.load_state_dict: the state {key!r} of parameter {k} has shape "
                        f"{val.shape}, but the parameter has shape {p.shape}"
                    )
        new_groups = []
        for g, sg in zip(groups, saved_groups):
            ng = {k: copy.deepcopy(v) for k, v in sg.items() if k != "params"}
            ng["params"] = g["params"]
            if "param_names" in g and "param_names" not in sg:
                ng["param_names"] = g["param_names"]
            new_groups.append(ng)
        self.state = new_state
        self.param_groups = new_groups

    def __repr__(self) -> str:
        lines = [type(self).__name__ + " ("]
        for i, group in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            for key in sorted(group):
                if key not in ("params", "param_names"):
                    lines.append(f"    {key}: {group[key]}")
        lines.append(")")
        return "\n".join(lines)


def _with_step_hooks(step: Callable) -> Callable:
    """``step`` running the optimizer's step hooks around it (and noting that it ran)."""

    @functools.wraps(step)
    def wrapper(self, *args: Any, **kwargs: Any) -> Any:
        if self.__dict__.get("_in_step"):  # a subclass's step calling super().step()
            return step(self, *args, **kwargs)
        self._opt_called = True
        self._in_step = True
        try:
            return _hooked(self, args, kwargs)
        finally:
            self._in_step = False

    def _hooked(self, args: tuple, kwargs: dict) -> Any:
        pre = self.__dict__.get("_step_pre_hooks")
        if pre:
            for hook in tuple(pre.values()):
                r = hook(self, args, kwargs)
                if r is not None:
                    if not (isinstance(r, tuple) and len(r) == 2):
                        raise RuntimeError(
                            f"{type(self).__name__}.step: a step pre-hook must return None or "
                            f"a tuple (new_args, new_kwargs), got {r!r}"
                        )
                    args, kwargs = r
        out = step(self, *args, **kwargs)
        post = self.__dict__.get("_step_post_hooks")
        if post:
            for hook in tuple(post.values()):
                hook(self, args, kwargs)
        return out

    wrapper._with_step_hooks = True  # type: ignore[attr-defined]
    return wrapper


def _cast_state(key: str, value: Any, p: Array) -> Any:
    """A loaded state entry: arrays (strided, NumPy, or another library's CPU tensors such as
    PyTorch's) copied onto the parameter's device, floating ones cast to its dtype; ``step``
    becomes a Python float."""
    from .. import _namespace as xp

    if key == "step":
        return _as_step(value)
    if not isinstance(value, Array) and (
        isinstance(value, np.ndarray) or hasattr(value, "__dlpack__")
    ):
        # a NumPy array, or another library's tensor (a PyTorch optimizer's state dict)
        value = xp.asarray(np.asarray(value))
    if isinstance(value, Array):
        if value.dtype.kind in ("real floating", "complex floating"):
            value = xp.astype(value, p.dtype, copy=True)
        else:
            value = xp.astype(value, value.dtype, copy=True)
        if value.device != p.device:
            value = value.to_device(p.device)
        return value
    if isinstance(value, dict):
        return {k: _cast_state(k, v, p) for k, v in value.items()}
    return copy.deepcopy(value)


def _as_step(value: Any) -> float:
    """A step count from a state dict (a number, or a one-element array as PyTorch saves it)."""
    return float(value)


def _host(a: Array, like: Array | None = None):
    """The flat NumPy view of a dense real-float cpu array (what the fused loops take), or None
    when the array lives elsewhere, is strided, has another dtype, or has another shape or dtype
    than ``like`` (its parameter): then the namespace path runs, which checks shapes, where the
    fused loop would index past a smaller state array."""
    if a._device.type != "cpu" or a._dtype.name not in ("float32", "float64"):
        return None
    if like is not None and (a._shape != like._shape or a._dtype is not like._dtype):
        return None
    if not a.is_contiguous():
        return None
    n = 1
    for s in a._shape:
        n *= s
    return a._buf[a._offset : a._offset + n]


def _check_grad(name: str, p: Array, g: Array) -> None:
    if g.shape != p.shape or g.dtype != p.dtype or g.device != p.device:
        raise RuntimeError(
            f"{name}: a gradient of shape {g.shape}, dtype {g.dtype.name} on {g.device} does not "
            f"match its parameter (shape {p.shape}, dtype {p.dtype.name} on {p.device})"
        )


def _check_nonneg(name: str, what: str, value: Any) -> None:
    if not 0.0 <= value:
        raise ValueError(f"{name}: Invalid {what}: {value}")
