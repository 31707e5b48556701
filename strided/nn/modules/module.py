"""``Module``: the base class of every layer, with PyTorch's API and semantics.

Parameters, buffers and submodules assigned as attributes are registered in ordered dicts
(``_parameters``, ``_buffers``, ``_modules``), which fix the order of ``parameters()`` and of the
keys of ``state_dict()`` exactly as PyTorch does for the same architecture.
"""

from __future__ import annotations

import itertools
from collections import OrderedDict
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple

from ... import _dtypes as dt
from ..._array import Array
from ..._device import as_device
from ..._grad_state import Mode
from ..._tape import RemovableHandle
from .._errors import name_in_forward, register_call
from ..parameter import Buffer, Parameter

__all__ = [
    "Module",
    "RemovableHandle",
    "register_module_forward_hook",
    "register_module_forward_pre_hook",
]

# hooks run around every module's forward (PyTorch's register_module_forward_*_hook)
_global_forward_pre_hooks: dict = OrderedDict()
_global_forward_hooks: dict = OrderedDict()


def register_module_forward_pre_hook(hook: Callable) -> RemovableHandle:
    """Call ``hook(module, args)`` before every module's forward; returns a removable handle."""
    handle = RemovableHandle(_global_forward_pre_hooks)
    _global_forward_pre_hooks[handle.id] = (hook, False)
    return handle


def register_module_forward_hook(hook: Callable) -> RemovableHandle:
    """Call ``hook(module, args, output)`` after every module's forward; returns a handle."""
    handle = RemovableHandle(_global_forward_hooks)
    _global_forward_hooks[handle.id] = (hook, False, False)
    return handle


class _IncompatibleKeys(NamedTuple):
    """What ``load_state_dict`` returns: the keys the module expected but did not find, and the
    keys it found but did not expect."""

    missing_keys: list[str]
    unexpected_keys: list[str]

    def __repr__(self) -> str:
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return (
            f"_IncompatibleKeys(missing_keys={self.missing_keys}, "
            f"unexpected_keys={self.unexpected_keys})"
        )

    __str__ = __repr__


def _addindent(s: str, n: int) -> str:
    lines = s.split("\n")
    if len(lines) == 1:
        return s
    return lines[0] + "\n" + "\n".join(" " * n + line for line in lines[1:])


def _check_name(kind: str, name, owner: Module, allow_existing: set | None = None) -> None:
    if not isinstance(name, str):
        raise TypeError(f"{kind} name should be a string. Got {type(name).__name__}")
    if name == "":
        raise KeyError(f'{kind} name can\'t be empty string ""')
    if "." in name:
        raise KeyError(f'{kind} name can\'t contain ".", got: {name}')
    if hasattr(owner, name) and (allow_existing is None or name not in allow_existing):
        raise KeyError(f"attribute '{name}' already exists")


def _swap_data(p: Array, new: Array) -> None:
    """Give array ``p`` the memory, layout, dtype and device of ``new``, keeping ``p`` itself
    (what PyTorch's ``param.data = new`` does): optimizers holding ``p`` see the change."""
    p._buf = new._buf
    p._shape = new._shape
    p._strides = new._strides
    p._offset = new._offset
    p._dtype = new._dtype
    p._device = new._device
    base = new._base
    p._base = new if base is None else base
    p._version = p._base._version


class Module:
    """Base class of all layers (PyTorch's ``torch.nn.Module``).

    Subclasses call ``super().__init__()``, assign parameters, buffers and submodules as
    attributes, and define ``forward``; calling the module runs forward with its hooks.
    """

    training: bool
    _version: int = 1

    def __init__(self, *args, **kwargs) -> None:
        if args or kwargs:
            raise TypeError(
                f"{type(self).__name__}.__init__() got unexpected arguments: "
                f"{args or ''}{kwargs or ''} (Module.__init__ takes none)"
            )
        d = self.__dict__
        d["training"] = True
        d["_parameters"] = OrderedDict()
        d["_buffers"] = OrderedDict()
        d["_non_persistent_buffers_set"] = set()
        d["_modules"] = OrderedDict()
        d["_forward_pre_hooks"] = OrderedDict()
        d["_forward_hooks"] = OrderedDict()

    # -- forward --------------------------------------------------------------------------------
    def forward(self, *args, **kwargs):
        """The computation; every subclass defines it."""
        raise NotImplementedError(
            f'Module [{type(self).__name__}] is missing the required "forward" function'
        )

    def __call__(self, *args, **kwargs):
        try:
            if (
                self._forward_pre_hooks
                or self._forward_hooks
                or _global_forward_pre_hooks
                or _global_forward_hooks
            ):
                out = self._call_with_hooks(args, kwargs)
            else:
                out = self.forward(*args, **kwargs)
        except Exception as e:
            name_in_forward(e, self)  # "h.17.attn.c_proj (Linear): ..."
            raise
        if Mode.enabled:
            register_call(self, args, out)  # so that an error in backward can name this module
        return out

    def _call_with_hooks(self, args: tuple, kwargs: dict):
        for hook, with_kwargs in itertools.chain(
            list(_global_forward_pre_hooks.values()), list(self._forward_pre_hooks.values())
        ):
            if with_kwargs:
                r = hook(self, args, kwargs)
                if r is not None:
                    if not (isinstance(r, tuple) and len(r) == 2):
                        raise RuntimeError(
                            "forward pre-hook must return None or a tuple of (new_args, "
                            f"new_kwargs), but got {r!r}."
                        )
                    args, kwargs = r
            else:
                r = hook(self, args)
                if r is not None:
                    args = r if isinstance(r, tuple) else (r,)
        try:
            out = self.forward(*args, **kwargs)
        except Exception:
            for hook, with_kwargs, always_call in itertools.chain(
                list(_global_forward_hooks.values()), list(self._forward_hooks.values())
            ):
                if always_call:
                    try:
                        hook(self, args, kwargs, None) if with_kwargs else hook(self, args, None)
                    except Exception:
                        pass
            raise
        for hook, with_kwargs, _ in itertools.chain(
            list(_global_forward_hooks.values()), list(self._forward_hooks.values())
        ):
            r = hook(self, args, kwargs, out) if with_kwargs else hook(self, args, out)
            if r is not None:
                out = r
        return out

    def register_forward_pre_hook(
        self, hook: Callable, *, prepend: bool = False, with_kwargs: bool = False
    ) -> RemovableHandle:
        """Call ``hook(module, args)`` (``hook(module, args, kwargs)`` with ``with_kwargs``)
        before forward; a non-None result replaces the arguments.  Returns a handle whose
        ``remove()`` takes the hook off."""
        handle = RemovableHandle(self._forward_pre_hooks)
        self._forward_pre_hooks[handle.id] = (hook, with_kwargs)
        if prepend:
            self._forward_pre_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_forward_hook(
        self,
        hook: Callable,
        *,
        prepend: bool = False,
        with_kwargs: bool = False,
        always_call: bool = False,
    ) -> RemovableHandle:
        """Call ``hook(module, args, output)`` (``hook(module, args, kwargs, output)`` with
        ``with_kwargs``) after forward; a non-None result replaces the output.  With
        ``always_call`` the hook also runs (output None) when forward raises."""
        handle = RemovableHandle(self._forward_hooks)
        self._forward_hooks[handle.id] = (hook, with_kwargs, always_call)
        if prepend:
            self._forward_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_full_backward_hook(self, hook: Callable):
        raise NotImplementedError(
            f"{type(self).__name__}.register_full_backward_hook: module backward hooks are not "
            "supported; use register_hook on the output or input arrays"
        )

    register_backward_hook = register_full_backward_hook

    # -- attribute registration -----------------------------------------------------------------
    def __getattr__(self, name: str) -> Any:
        d = self.__dict__
        if "_parameters" in d:
            p = d["_parameters"]
            if name in p:
                return p[name]
            b = d["_buffers"]
            if name in b:
                return b[name]
            m = d["_modules"]
            if name in m:
                return m[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name: str, value: Any) -> None:
        d = self.__dict__
        params = d.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            d.pop(name, None)
            self._buffers.pop(name, None)
            self._modules.pop(name, None)
            self._non_persistent_buffers_set.discard(name)
            self.register_parameter(name, value)
            return
        if params is not None and name in params:
            if value is not None:
                raise TypeError(
                    f"cannot assign '{type(value).__name__}' as parameter '{name}' "
                    "(strided.nn.Parameter or None expected)"
                )
            self.register_parameter(name, None)
            return
        if isinstance(value, Module):
            if params is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            d.pop(name, None)
            params.pop(name, None)
            self._buffers.pop(name, None)
            self._non_persistent_buffers_set.discard(name)
            self._modules[name] = value
            return
        if params is not None and name in d["_modules"]:
            if value is not None:
                raise TypeError(
                    f"cannot assign '{type(value).__name__}' as child module '{name}' "
                    "(strided.nn.Module or None expected)"
                )
            d["_modules"][name] = None
            return
        if isinstance(value, Buffer):
            if params is None:
                raise AttributeError("cannot assign buffers before Module.__init__() call")
            d.pop(name, None)
            params.pop(name, None)
            self._modules.pop(name, None)
            self.register_buffer(name, value.data, persistent=value.persistent)
            return
        if params is not None and name in d["_buffers"]:
            if value is not None and not isinstance(value, Array):
                raise TypeError(
                    f"cannot assign '{type(value).__name__}' as buffer '{name}' "
                    "(strided array or None expected)"
                )
            d["_buffers"][name] = value
            return
        object.__setattr__(self, name, value)

    def __delattr__(self, name: str) -> None:
        d = self.__dict__
        if name in d.get("_parameters", ()):
            del self._parameters[name]
        elif name in d.get("_buffers", ()):
            del self._buffers[name]
            self._non_persistent_buffers_set.discard(name)
        elif name in d.get("_modules", ()):
            del self._modules[name]
        else:
            object.__delattr__(self, name)

    def __dir__(self) -> list[str]:
        keys = set(super().__dir__())
        for k in itertools.chain(self._parameters, self._buffers, self._modules):
            if k.isidentifier():
                keys.add(k)
        return sorted(keys)

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        """Register ``param`` (or None) under ``name``."""
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        _check_name("parameter", name, self, allow_existing=set(self._parameters))
        if param is None:
            self._parameters[name] = None
            return
        if not isinstance(param, Parameter):
            raise TypeError(
                f"cannot assign '{type(param).__name__}' object to parameter '{name}' "
                "(strided.nn.Parameter or None required)"
            )
        if not param.is_leaf:
            raise ValueError(
                f"Cannot assign non-leaf array to parameter '{name}'. Model parameters must be "
                "created explicitly; to express '{name}' as a function of another array, "
                "compute the value in the forward() method."
            )
        self._parameters[name] = param

    def register_buffer(self, name: str, tensor: Array | None, persistent: bool = True) -> None:
        """Register array ``tensor`` (or None) as a buffer: state that is not a parameter
        (running statistics, masks).  ``persistent=False`` leaves it out of ``state_dict``."""
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        _check_name("buffer", name, self, allow_existing=set(self._buffers))
        if tensor is not None and not isinstance(tensor, Array):
            raise TypeError(
                f"cannot assign '{type(tensor).__name__}' object to buffer '{name}' "
                "(strided array or None required)"
            )
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def add_module(self, name: str, module: Module | None) -> None:
        """Register ``module`` (or None) as a child under ``name``."""
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{type(module).__name__} is not a Module subclass")
        _check_name("module", name, self, allow_existing=set(self._modules))
        self._modules[name] = module

    register_module = add_module

    def get_submodule(self, target: str) -> Module:
        """The submodule at dotted path ``target`` (``""`` is self)."""
        mod = self
        if target == "":
            return mod
        for item in target.split("."):
            if not isinstance(mod, Module) or item not in mod._modules:
                raise AttributeError(f"{mod._get_name()} has no attribute `{item}`")
            mod = mod._modules[item]
        return mod

    def get_parameter(self, target: str) -> Parameter:
        """The parameter at dotted path ``target``."""
        path, _, name = target.rpartition(".")
        mod = self.get_submodule(path)
        if name not in mod._parameters:
            raise AttributeError(f"{mod._get_name()} has no parameter `{name}`")
        return mod._parameters[name]

    def get_buffer(self, target: str) -> Array:
        """The buffer at dotted path ``target``."""
        path, _, name = target.rpartition(".")
        mod = self.get_submodule(path)
        if name not in mod._buffers:
            raise AttributeError(f"{mod._get_name()} has no buffer `{name}`")
        return mod._buffers[name]

    # -- iteration ------------------------------------------------------------------------------
    def _named_members(self, get_members, prefix: str, recurse: bool, remove_duplicate: bool):
        memo = set()
        modules = (
            self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate)
            if recurse
            else [(prefix, self)]
        )
        for module_prefix, module in modules:
            for k, v in get_members(module):
                if v is None:
                    continue
                if remove_duplicate:
                    if id(v) in memo:
                        continue
                    memo.add(id(v))
                yield (module_prefix + ("." if module_prefix else "") + k, v)

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        """The parameters of this module (and its submodules when ``recurse``), each once."""
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_parameters(
        self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True
    ) -> Iterator[tuple[str, Parameter]]:
        """``(dotted name, parameter)`` pairs, in registration order, depth first."""
        yield from self._named_members(
            lambda m: m._parameters.items(), prefix, recurse, remove_duplicate
        )

    def buffers(self, recurse: bool = True) -> Iterator[Array]:
        """The buffers of this module (and its submodules when ``recurse``)."""
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    def named_buffers(
        self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True
    ) -> Iterator[tuple[str, Array]]:
        """``(dotted name, buffer)`` pairs."""
        yield from self._named_members(
            lambda m: m._buffers.items(), prefix, recurse, remove_duplicate
        )

    def children(self) -> Iterator[Module]:
        """The direct submodules."""
        for _, m in self.named_children():
            yield m

    def named_children(self) -> Iterator[tuple[str, Module]]:
        """``(name, module)`` of the direct submodules, each module once."""
        memo = set()
        for name, m in self._modules.items():
            if m is not None and id(m) not in memo:
                memo.add(id(m))
                yield name, m

    def modules(self) -> Iterator[Module]:
        """This module and every submodule, depth first."""
        for _, m in self.named_modules():
            yield m

    def named_modules(
        self, memo: set | None = None, prefix: str = "", remove_duplicate: bool = True
    ) -> Iterator[tuple[str, Module]]:
        """``(dotted name, module)`` of this module (name ``prefix``) and every submodule."""
        if memo is None:
            memo = set()
        if remove_duplicate:
            if id(self) in memo:
                return
            memo.add(id(self))
        yield prefix, self
        for name, m in self._modules.items():
            if m is None:
                continue
            sub = prefix + ("." if prefix else "") + name
            yield from m.named_modules(memo, sub, remove_duplicate)

    def apply(self, fn: Callable[[Module], None]) -> Module:
        """Call ``fn`` on every submodule (children first) and then on self; returns self."""
        for m in self.children():
            m.apply(fn)
        fn(self)
        return self

    # -- modes and gradients --------------------------------------------------------------------
    def train(self, mode: bool = True) -> Module:
        """Set training mode (``mode=False``: evaluation) here and in every submodule."""
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for m in self.children():
            m.train(mode)
        return self

    def eval(self) -> Module:
        """Evaluation mode (``train(False)``): dropout off, batch norm uses running stats."""
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> Module:
        """Make every parameter require grad (or stop); returns self."""
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the gradients of every parameter: to None (the default), or to zeros."""
        for p in self.parameters():
            ag = p._ag
            if ag is None or ag.grad is None:
                continue
            if set_to_none:
                ag.grad = None
            else:
                g = ag.grad
                if g._ag is not None:
                    g = g.detach()
                    ag.grad = g
                prev = Mode.enabled
                Mode.enabled = False
                try:
                    g[...] = 0
                finally:
                    Mode.enabled = prev

    # -- conversion -----------------------------------------------------------------------------
    def _apply(self, fn: Callable[[Array], Array]) -> Module:
        """Replace every parameter's and buffer's data by ``fn(data)``, keeping the Parameter
        objects (so that optimizers built on them stay valid)."""
        for m in self.modules():
            for p in m._parameters.values():
                if p is None:
                    continue
                new = fn(p.detach())
                if new is not p and (new._buf is not p._buf or new._dtype is not p._dtype):
                    _swap_data(p, new)
                    ag = p._ag
                    if ag is not None and ag.grad is not None:
                        ag.grad = fn(ag.grad.detach())
            for name, b in m._buffers.items():
                if b is not None:
                    m._buffers[name] = fn(b)
        return self

    def to(self, *args, **kwargs) -> Module:
        """Move and/or cast parameters and buffers: ``to(device)``, ``to(dtype)``,
        ``to(device, dtype)``, ``to(device=..., dtype=...)`` or ``to(array)``.  Only floating
        point parameters and buffers change dtype.  Returns self."""
        device, dtype = None, None
        for a in args:
            if isinstance(a, Array):
                device, dtype = a.device, a.dtype
            elif isinstance(a, dt.DType):
                dtype = a
            elif isinstance(a, str) and a in dt._by_name:
                dtype = dt.as_dtype(a)
            else:
                device = a
        unknown = set(kwargs) - {"device", "dtype", "non_blocking", "memory_format", "copy"}
        if unknown:
            raise TypeError(f"{type(self).__name__}.to() got unexpected arguments {unknown}")
        device = kwargs.get("device", device)
        dtype = kwargs.get("dtype", dtype)
        dev = None if device is None else as_device(device)
        dtp = None if dtype is None else dt.as_dtype(dtype)
        if dtp is not None and dtp.kind not in dt.FLOAT_KINDS:
            raise TypeError(
                f"{type(self).__name__}.to only accepts floating point or complex dtypes, but "
                f"got desired dtype={dtp.name}"
            )
        return self._apply(lambda t: _convert(t, dev, dtp))

    def to_empty(self, *, device, recurse: bool = True) -> Module:
        """Give every parameter and buffer uninitialised memory on ``device`` (how a model
        built on meta is materialised; call ``reset_parameters`` afterwards)."""
        from ..._ops.creation import empty

        dev = as_device(device)
        return self._apply(lambda t: empty(t.shape, dtype=t.dtype, device=dev))

    def cpu(self) -> Module:
        """Move everything to the cpu; returns self."""
        return self.to("cpu")

    def float(self) -> Module:
        """Cast floating point parameters and buffers to float32; returns self."""
        return self.to(dtype=dt.float32)

    def double(self) -> Module:
        """Cast floating point parameters and buffers to float64; returns self."""
        return self.to(dtype=dt.float64)

    def type(self, dst_type) -> Module:
        """Cast every parameter and buffer to ``dst_type``; returns self."""
        d = dt.as_dtype(dst_type)
        return self._apply(lambda t: _astype(t, d))

    # -- state dict -----------------------------------------------------------------------------
    def _save_to_state_dict(self, destination: dict, prefix: str, keep_vars: bool) -> None:
        for name, p in self._parameters.items():
            if p is not None:
                destination[prefix + name] = p if keep_vars else p.detach()
        for name, b in self._buffers.items():
            if b is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = b if keep_vars else b.detach()

    def state_dict(
        self, *args, destination: dict | None = None, prefix: str = "", keep_vars: bool = False
    ) -> dict:
        """An ordered dict from dotted names to parameters and persistent buffers (detached
        views sharing memory unless ``keep_vars``), in the order PyTorch gives."""
        if args:  # PyTorch's deprecated positional form: (destination, prefix, keep_vars)
            destination = args[0]
            if len(args) > 1:
                prefix = args[1]
            if len(args) > 2:
                keep_vars = args[2]
        if destination is None:
            destination = OrderedDict()
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, m in self._modules.items():
            if m is not None:
                m.state_dict(
                    destination=destination, prefix=prefix + name + ".", keep_vars=keep_vars
                )
        return destination

    def _load_from_state_dict(
        self,
        state_dict: dict,
        prefix: str,
        local_metadata: dict,
        strict: bool,
        missing_keys: list,
        unexpected_keys: list,
        error_msgs: list,
    ) -> None:
        """Copy this module's own entries (``prefix + name``) out of ``state_dict``; subclasses
        override it to accept older layouts (PyTorch's signature; ``assign`` travels in
        ``local_metadata["assign_to_params_buffers"]``)."""
        assign = local_metadata.get("assign_to_params_buffers", False)
        persistent = {
            k: v for k, v in self._buffers.items() if k not in self._non_persistent_buffers_set
        }
        local = itertools.chain(self._parameters.items(), persistent.items())
        for name, param in local:
            if param is None:
                continue
            key = prefix + name
            if key not in state_dict:
                missing_keys.append(key)
                continue
            value = state_dict[key]
            shape = tuple(getattr(value, "shape", ()))
            if not hasattr(value, "shape") and not isinstance(value, (int, float, bool)):
                error_msgs.append(
                    f'While copying the parameter named "{key}", expected an array in the '
                    f"state dict, got {type(value).__name__}."
                )
                continue
            if shape != param.shape:
                error_msgs.append(
                    f"size mismatch for {key}: copying a param with shape {shape} from "
                    f"checkpoint, the shape in current model is {param.shape}."
                )
                continue
            try:
                if assign:
                    new = _as_array(value, None, param.device)
                    if isinstance(param, Parameter):
                        self._parameters[name] = Parameter(new, param.requires_grad)
                    else:
                        self._buffers[name] = new
                else:
                    _copy_into(param, value)
            except Exception as e:  # noqa: BLE001 - reported as PyTorch does, with the key
                error_msgs.append(
                    f'While copying the parameter named "{key}", whose dimensions in the model '
                    f"are {param.shape} and whose dimensions in the checkpoint are {shape}, an "
                    f"exception occurred : {e}."
                )
        if strict:
            for key in state_dict:
                if key.startswith(prefix):
                    parts = key[len(prefix) :].split(".", 1)
                    if len(parts) > 1:
                        if parts[0] not in self._modules:
                            unexpected_keys.append(key)
                    elif parts[0] not in self._parameters and parts[0] not in persistent:
                        unexpected_keys.append(key)

    def load_state_dict(
        self, state_dict: dict, strict: bool = True, assign: bool = False
    ) -> _IncompatibleKeys:
        """Copy parameters and buffers from ``state_dict`` (strided arrays, NumPy arrays or
        anything ``strided.asarray`` takes) into this module, in place.

        Returns ``(missing_keys, unexpected_keys)``.  With ``strict`` a missing or unexpected
        key raises RuntimeError listing them; a shape mismatch always raises.
        """
        if not isinstance(state_dict, dict):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        missing: list[str] = []
        unexpected: list[str] = []
        errors: list[str] = []

        def load(module: Module, prefix: str) -> None:
            meta = {"assign_to_params_buffers": assign}
            module._load_from_state_dict(
                state_dict, prefix, meta, True, missing, unexpected, errors
            )
            for name, child in module._modules.items():
                if child is not None:
                    load(child, prefix + name + ".")

        load(self, "")
        if strict:
            if unexpected:
                errors.insert(
                    0,
                    "Unexpected key(s) in state_dict: "
                    + ", ".join(f'"{k}"' for k in unexpected)
                    + ". ",
                )
            if missing:
                errors.insert(
                    0,
                    "Missing key(s) in state_dict: " + ", ".join(f'"{k}"' for k in missing) + ". ",
                )
        if errors:
            raise RuntimeError(
                f"Error(s) in loading state_dict for {self._get_name()}:\n\t" + "\n\t".join(errors)
            )
        return _IncompatibleKeys(missing, unexpected)

    # -- repr -----------------------------------------------------------------------------------
    def _get_name(self) -> str:
        return type(self).__name__

    def extra_repr(self) -> str:
        """The module's own settings, shown inside its repr (subclasses override it)."""
        return ""

    def __repr__(self) -> str:
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = [f"({name}): " + _addindent(repr(m), 2) for name, m in self._modules.items()]
        lines = extra_lines + child_lines
        body = ""
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                body = extra_lines[0]
            else:
                body = "\n  " + "\n  ".join(lines) + "\n"
        return f"{self._get_name()}({body})"

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)

    def __getstate__(self) -> dict:
        return self.__dict__.copy()


def _astype(t: Array, d: dt.DType) -> Array:
    from ..._ops.core import astype_to

    return t if t.dtype is d else astype_to(t, d)


def _convert(t: Array, device, dtype) -> Array:
    """``t`` on ``device`` with ``dtype`` applied to floating point arrays only."""
    if dtype is not None and t.dtype is not dtype:
        if (
            t.dtype.kind == dt.REAL
            and dtype.kind in dt.FLOAT_KINDS
            or (t.dtype.kind == dt.COMPLEX and dtype.kind == dt.COMPLEX)
        ):
            t = _astype(t, dtype)
    if device is not None and t.device != device:
        if t.device.type == "meta":
            raise NotImplementedError(
                "Cannot copy out of meta array; no data! Use Module.to_empty(device=...) to "
                "give a module built on meta real memory"
            )
        t = t.to_device(device)
    return t


def _as_array(value, dtype, device) -> Array:
    from ..._ops.creation import asarray

    if isinstance(value, Array):
        v = value.detach()
        if device is not None and v.device != device:
            v = v.to_device(device)
        return v if dtype is None else _astype(v, dtype)
    return asarray(value, dtype=dtype, device=device)


def _copy_into(param: Array, value) -> None:
    """``param[...] = value`` without recording (PyTorch's ``param.copy_(value)`` under
    no_grad); nothing to copy on meta."""
    if param.device.type == "meta":
        return
    if isinstance(value, Array) and value.device.type == "meta":
        raise RuntimeError("cannot copy a meta array into a module's data: it has no values")
    src = _as_array(value, param.dtype, param.device)
    prev = Mode.enabled
    Mode.enabled = False
    try:
        param[...] = src
    finally:
        Mode.enabled = prev
