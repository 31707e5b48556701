"""Primitives and the (op, device) dispatcher.

Every primitive is declared once as a :class:`Primitive`: its name, the dtype category it accepts,
its **rule** (validation, output shapes and dtypes, the compute dtype its inputs are cast to, the
kernel's parameters), its **VJP** (filled in by ``strided.autograd``) and its **kernels**, one per
device type.  Calling a primitive runs the one pipeline, :func:`apply`::

    validate + rules  ->  allocate outputs  ->  cast inputs  ->  kernel  ->  record on the tape

On ``meta`` the kernel step is skipped: the rules are the whole computation, so meta and the real
devices cannot disagree on shapes, dtypes or errors.

A rule is called with the primitive's arguments and returns a :class:`Plan`.  Kernels take the
freshly allocated output(s) first (a tuple for multi-output primitives), then the inputs (cast to
the compute dtype; Python scalars stay Python scalars), then the plan's keyword parameters::

    @strided.dispatch.register("add", "cpu")
    def add_cpu(out, x1, x2): ...

View primitives (reshape, permute_dims, basic indexing, ...) have rules that return the view's
``(shape, strides, offset)`` on their first input; they run no kernel on any device.
"""

from __future__ import annotations

import contextlib
import functools
import threading
from collections.abc import Callable

from . import _dtypes as dt
from ._array import Array
from ._device import META, Device
from ._errors import NAMED_ERRORS as _NAMED_ERRORS
from ._errors import forwarding as _forwarding
from ._errors import renamed as _renamed
from ._layout import dense_order
from ._shapes import contiguous_strides, prod
from ._tape import Mode, Rule, record, record_scalar, record_two, record_unary

__all__ = [
    "Primitive",
    "Plan",
    "apply",
    "declare",
    "register",
    "registered",
    "kernel",
    "primitives",
    "primitive",
    "NOT_DIFFERENTIABLE",
    "observe",
]

#: Marker for primitives whose outputs carry no gradient (comparisons, integer results, ...).
NOT_DIFFERENTIABLE = "not differentiable"

DEVICE_TYPES = ("cpu", "cuda", "meta")
#: Kinds of primitive that run no kernel of their own on any device.
_RULES_ONLY = frozenset({"view", "composite"})


class Plan:
    """What a rule decided: the ``device``, the ``outputs`` to allocate (one (shape, dtype) pair,
    or a list of them for a kernel that fills several),
    the kernel's ``inputs``, the dtype each is cast to (``casts``: one dtype for every array input,
    a tuple with one entry per input, None entries left alone, or None for no casts), and the
    kernel's keyword ``params``.  ``finish`` (optional) turns the filled outputs into the result
    (e.g. a named tuple).  ``kernel_device`` (transfers only) is the device whose backend runs
    the kernel when it is not the outputs' device.  ``follow`` (elementwise maps, ``where``,
    ``astype``, scans): the one output is laid out in memory like the array inputs of its shape
    when they share one dense layout (NumPy's ``order='K'``), so that the kernel runs over memory
    in order instead of gathering a transposed input into a C-ordered output."""

    __slots__ = (
        "device",
        "outputs",
        "inputs",
        "casts",
        "params",
        "finish",
        "kernel_device",
        "follow",
    )

    def __init__(
        self,
        device,
        outputs,
        inputs=(),
        casts=None,
        params=None,
        finish=None,
        kernel_device=None,
        follow=False,
    ):
        self.device = device
        self.outputs = outputs
        self.inputs = inputs
        self.casts = casts
        self.params = params if params is not None else _NO_PARAMS
        self.finish = finish
        self.kernel_device = kernel_device
        self.follow = follow


_NO_PARAMS: dict = {}
_SEQUENCES = (list, tuple)


class Primitive:
    """One operation, declared once: rules, VJP and kernels, found together.

    ``kind`` names the family (``unary``, ``binary``, ``reduction``, ``scan``, ``view``, ...);
    ``accepts`` is the dtype category of its inputs (``strided._dtypes.CATEGORIES``); ``result``
    says how the output dtype follows from the input dtype; ``rule`` maps the call's arguments to
    a :class:`Plan` (view primitives: to ``(shape, strides, offset)``); ``vjp`` is the backward
    rule (``None`` until ``strided.autograd`` is imported, :data:`NOT_DIFFERENTIABLE` where there
    is none); ``kernels`` maps a device type to its kernel.
    """

    __slots__ = (
        "name",
        "kind",
        "accepts",
        "result",
        "rule",
        "vjp",
        "kernels",
        "params",
        "memo_key",
        "_plans",
    )

    def __init__(
        self,
        name: str,
        kind: str,
        accepts: str = "any",
        result: str = "same",
        rule: Callable | None = None,
        **params,
    ):
        self.name = name
        self.kind = kind
        self.accepts = accepts
        self.result = result
        self.rule = rule
        self.vjp = None
        self.kernels: dict[str, Callable] = {}
        self.params = params
        self.memo_key = None
        self._plans: dict = {}

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls.call = cls.__call__  # (the observed subclasses' too: their calls report)

    def __call__(self, *args, **params):
        """Run the pipeline: see :func:`apply`."""
        memo_key = self.memo_key
        key = None
        if memo_key is not None:
            # a memoized plan first: its key is made only of arrays and scalars (no sequences),
            # so the tracking test looks at the plan's array positions alone
            key = memo_key(*args, **params)
            if key is not None:
                spec = self._plans.get(key)
                if spec is not None:
                    dense = spec[8]
                    device = spec[0]
                    layout = spec[9]
                    for i in spec[10]:
                        a = args[i]
                        if a._ag is not None or (a._base is not None and a._base._ag is not None):
                            break  # tracked: the general path below decides
                        if a._device is not device or (
                            dense is not None and a._strides != layout[i]
                        ):
                            dense = None  # (another device: _memo_run returns None)
                    else:
                        if dense is not None:  # _memo_run's dense lane written out (its hot path)
                            out = _new_object(Array)
                            out._buf = dense(*args)
                            out._shape = spec[1]
                            out._strides = spec[2]
                            out._offset = 0
                            out._dtype = spec[3]
                            out._device = device
                            out._ag = out._base = None
                            out._version = 0
                            return out
                        out = _memo_run(spec, args)
                        if out is not None:
                            return out
        for a in args:
            if a.__class__ is Array or isinstance(a, Array):
                if a._ag is not None or (a._base is not None and a._base._ag is not None):
                    if Mode.enabled and self.vjp is not NOT_DIFFERENTIABLE:
                        return self.recorded_call(args, params)
                    break
            elif type(a) in _SEQUENCES and _in_graph_args(a):
                if Mode.enabled and self.vjp is not NOT_DIFFERENTIABLE:
                    return record(self.name, self.vjp, self, args, params)
                break
        if key is not None:  # (its plan, if any, holds an array on another device)
            return self._memoized(key, args, params)
        return execute(self, args, params)

    # ``prim.call(...)`` is ``prim(...)`` as a method call: Python passes a method's arguments
    # as they are, but builds a tuple and a keyword dict to call an instance (~0.15-0.2 us of
    # a small reduction's or take's ~1.5-3.5); the public functions' hot calls use it
    call = __call__

    def recorded_call(self, args: tuple, params: dict):
        """The pipeline for a call with a tracked input, grad mode on.  A view, or a call whose
        plan is memoized, runs its kernel (which records nothing) and attaches one node directly;
        anything else goes through :func:`record`, which runs the primitive with grad mode
        off."""
        rule = self.vjp
        if rule.__class__ is Rule:
            n = len(args)
            if n == 1:
                x = args[0]
                if self.kind == "view":
                    out = x._view(*_plan(self, args, params))
                else:
                    out = self._memo_hit(args, params)
                    if out is None:
                        return record(self.name, rule, self, args, params)
                if out._dtype.kind in _FLOAT_KINDS:
                    return record_unary(self.name, rule, params, x, out)
                return out
            if n == 2 and args[0].__class__ is Array and args[1].__class__ is Array:
                out = self._memo_hit(args, params)
                if out is not None:
                    if out._dtype.kind in _FLOAT_KINDS:
                        return record_two(self.name, rule, args[0], args[1], out, params)
                    return out
        return record(self.name, rule, self, args, params)

    def _memo_hit(self, args: tuple, params: dict):
        """The result of a call whose plan is memoized (its output is always fresh memory), or
        None when there is no such plan."""
        memo_key = self.memo_key
        if memo_key is None:
            return None
        key = memo_key(*args, **params)
        if key is None:
            return None
        spec = self._plans.get(key)
        if spec is None:
            return None
        return _memo_run(spec, args)

    def memoize(self, key: Callable) -> None:
        """Keep the rule's plans: ``key(*args, **params)`` names everything the rule's result
        depends on (dtypes, shapes, parameters; None where a call should not be memoized).  A
        plan is kept only when its kernel inputs are the call's positional arguments, uncast."""
        self.memo_key = key

    def _memoized(self, key, args, params):
        spec = self._plans.get(key)
        if spec is not None:
            out = _memo_run(spec, args)
            if out is not None:
                return out
        # no plan yet, or one of its arrays on another device (the rule then names both)
        plan = _plan(self, args, params)
        if type(plan) is not Plan:
            return plan
        inputs = plan.inputs
        if (
            type(plan.outputs) is list
            or plan.finish is not None
            or plan.kernel_device is not None
            or len(inputs) != len(args)
            or any(i is not a for i, a in zip(inputs, args))
            or _needs_cast(args, plan.casts)
            or plan.device is not args[0]._device
        ):
            return _run(self, plan)
        spec = _spec(self, plan, args)
        if len(self._plans) >= _SPECS_MAX:
            self._plans.clear()
        self._plans[key] = spec
        out = _memo_run(spec, args)
        return out if out is not None else _run(self, plan)

    def forget(self) -> None:
        """Drop the memoized plans (a kernel was replaced)."""
        self._plans.clear()

    def __repr__(self) -> str:
        return f"<strided primitive {self.name} ({self.kind})>"

    def kernel(self, device_type: str) -> Callable:
        """This primitive's kernel on ``device_type``; NotImplementedError naming both if none."""
        try:
            return self.kernels[device_type]
        except KeyError:
            raise NotImplementedError(
                f"{self.name}: no kernel is registered for device {device_type!r}"
            ) from None


_PRIMITIVES: dict[str, Primitive] = {}


def declare(
    name: str,
    kind: str,
    accepts: str = "any",
    result: str = "same",
    rule: Callable | None = None,
    **params,
) -> Primitive:
    """Declare a primitive (used by ``strided/_ops``); declaring a name twice is an error."""
    if name in _PRIMITIVES:
        raise ValueError(f"primitive {name!r} is already declared")
    classes = {
        "unary": Elementwise,
        "binary": Elementwise,
        "reduction": Reduction,
        "matmul": Contraction,
    }
    cls = classes.get(kind, Primitive)
    p = cls(name, kind, accepts, result, rule, **params)
    _PRIMITIVES[name] = p
    return p


def primitives() -> dict[str, Primitive]:
    """Every declared primitive, by name."""
    return dict(_PRIMITIVES)


def primitive(name: str) -> Primitive:
    """The primitive declared as ``name``."""
    try:
        return _PRIMITIVES[name]
    except KeyError:
        raise KeyError(f"no primitive {name!r} is declared") from None


def register(op: str, device: str) -> Callable[[Callable], Callable]:
    """Decorator: register ``fn`` as the kernel of primitive ``op`` on device type ``device``."""
    if device not in DEVICE_TYPES:
        raise ValueError(f"unknown device type {device!r}: expected 'cpu', 'cuda' or 'meta'")
    if op not in _PRIMITIVES:
        raise KeyError(f"cannot register a kernel for {op!r}: no such primitive is declared")

    def deco(fn: Callable) -> Callable:
        prim = _PRIMITIVES[op]
        prim.kernels[device] = fn
        if prim is EMPTY:  # every memoized plan names the old allocator
            for p in _PRIMITIVES.values():
                p.forget()
        else:
            prim.forget()  # memoized plans name the old kernel
        return fn

    return deco


def install_backend(device: str, kernel_for: Callable[[str, str], Callable | None]) -> None:
    """Register a backend's kernels: ``kernel_for(name, kind)`` gives the kernel of every
    primitive it implements (None for one it does not)."""
    for name, prim in _PRIMITIVES.items():
        if prim.kind in _RULES_ONLY:
            continue  # views and composites are their rules: no kernel on any device
        fn = kernel_for(name, prim.kind)
        if fn is not None:
            prim.kernels[device] = fn
    _INSTALLED_EMPTY[device] = EMPTY.kernels.get(device)


# device type -> the allocator its backend installed: a backend's dense kernels allocate for
# themselves, so they serve only while that allocator is the one in use (a test may wrap it)
_INSTALLED_EMPTY: dict = {}


def _own_allocator(device: Device) -> bool:
    return EMPTY.kernels.get(device.type) is _INSTALLED_EMPTY.get(device.type)


def registered() -> frozenset[tuple[str, str]]:
    """The set of (op, device type) pairs that have a kernel."""
    return frozenset((n, d) for n, p in _PRIMITIVES.items() for d in p.kernels)


def kernel(op: str, device_type: str) -> Callable:
    """The kernel of ``op`` on ``device_type``; a clear error where none is registered."""
    return primitive(op).kernel(device_type)


# -- the pipeline -------------------------------------------------------------------------------
_LAYOUTS: dict[tuple, tuple] = {}  # shape -> (C-order strides, size)


def allocate(
    shape: tuple,
    dtype: dt.DType,
    device: Device,
    strides: tuple | None = None,
    filled=None,
    value=0,
) -> Array:
    """A fresh array of ``shape``/``dtype`` on ``device`` (uninitialised), C-contiguous unless
    ``strides`` (a dense layout from :func:`follow_strides`) is given: the device's ``empty``
    kernel makes the buffer (meta has none), or ``filled(size, dtype, value)`` where given (a
    backend's buffer made and filled with ``value`` in one step)."""
    layout = _LAYOUTS.get(shape)
    if layout is None:
        layout = (contiguous_strides(shape), prod(shape))
        if len(_LAYOUTS) < 4096:  # small shapes recur; the cache stays bounded
            _LAYOUTS[shape] = layout
    if strides is None:
        strides = layout[0]
    if device.type == "meta":
        return Array._new(None, shape, strides, 0, dtype, META)
    if filled is None:
        buf = EMPTY.kernel(device.type)(layout[1], dtype)
    else:
        buf = filled(layout[1], dtype, value)
    return Array._new(buf, shape, strides, 0, dtype, device)


def follow_strides(shape: tuple, args) -> tuple | None:
    """The layout of an elementwise result: the strides that every array in ``args`` of the
    result's ``shape`` shares, when there is at least one such array and those strides are a
    dense non-C order (a transposed input gives a transposed output, as NumPy's ``order='K'``);
    None (C order) otherwise.  Broadcast operands and Python scalars do not vote."""
    common = None
    for a in args:
        if isinstance(a, Array) and a._shape == shape:
            st = a._strides
            if common is None:
                common = st
            elif st != common:
                return None
    if common is None:
        return None
    return dense_order(shape, common)


def allocator(device: Device, dtype: dt.DType) -> Callable[[int], object]:
    """``size -> buffer`` for ``dtype`` on ``device``: the backend's ``for_dtype`` fast form of its
    ``empty`` kernel where it offers one."""
    empty = EMPTY.kernel(device.type)
    for_dtype = getattr(empty, "for_dtype", None)
    return for_dtype(dtype) if for_dtype is not None else functools.partial(empty, dtype=dtype)


#: kinds of primitive whose kernels only read their inputs while they write the output: a large
#: cast input of theirs may live in memory the backend lends for the call (``temporary``)
_TEMPORARY_KINDS = frozenset(("unary", "binary", "where", "clip"))
_TEMPORARY_MIN = 1 << 16  # elements: smaller casts come from the allocator cheaply


def _cast(x, dtype: dt.DType, follow: bool = False, slot: int | None = None):
    """``x`` converted to ``dtype`` through the ``copy`` primitive (Python scalars pass); with
    ``follow``, laid out in memory like ``x`` where ``x`` is dense.  With ``slot`` (the input's
    position, for a kernel of :data:`_TEMPORARY_KINDS`), a large result goes to memory the
    backend keeps for that slot between calls (its ``empty`` kernel's ``temporary``): the cast
    is dropped when the kernel returns, and a fresh buffer each call was freed beside the output,
    which glibc then handed back to the system, so every call paid page faults for both (1M
    int16 ``exp`` in a long-running process: ~2.3 ms against ~0.5)."""
    if not isinstance(x, Array) or x._dtype is dtype:
        return x
    strides = dense_order(x._shape, x._strides) if follow else None
    device = x._device
    out = None
    if slot is not None:
        temporary = getattr(EMPTY.kernels.get(device.type), "temporary", None)
        size = prod(x._shape)
        if temporary is not None and size >= _TEMPORARY_MIN and _own_allocator(device):
            if strides is None:
                strides = contiguous_strides(x._shape)
            out = Array._new(temporary(size, dtype, slot), x._shape, strides, 0, dtype, device)
    if out is None:
        out = allocate(x._shape, dtype, device, strides)
    COPY.kernels[device.type](out, x)
    return out


def _plan(prim: Primitive, args: tuple, params: dict):
    """``prim``'s rule applied to a call; an error raised inside it (by a helper it calls, or a
    conversion) names the primitive, keeping its type."""
    try:
        return prim.rule(*args, **params)
    except _NAMED_ERRORS as e:
        r = _renamed(prim.name, e)
        if r is e:
            raise
        raise r from e


def execute(prim: Primitive, args: tuple, params: dict):
    """The untracked pipeline: rules -> allocate -> cast -> kernel (skipped on meta)."""
    if prim.kind == "view":
        x = args[0]
        shape, strides, offset = _plan(prim, args, params)
        return x._view(shape, strides, offset)
    plan = _plan(prim, args, params)
    if type(plan) is not Plan:
        return plan  # the rule found the result itself (e.g. nothing to do)
    return _run(prim, plan)


def _run(prim: Primitive, plan: Plan):
    """Allocate ``plan``'s outputs, cast its inputs and run ``prim``'s kernel (not on meta)."""
    device = plan.device
    outs = plan.outputs
    side = device if plan.kernel_device is None else plan.kernel_device
    if type(outs) is not list:  # one output: (shape, dtype)
        shape, dtype = outs
        follow = plan.follow
        out = allocate(shape, dtype, device, follow_strides(shape, plan.inputs) if follow else None)
        if device.type != "meta":
            inputs = plan.inputs
            casts = plan.casts
            if casts is not None:
                inputs = _cast_inputs(inputs, casts, follow, prim.kind in _TEMPORARY_KINDS)
            prim.kernel(side.type)(out, *inputs, **plan.params)
        return out if plan.finish is None else plan.finish(out)
    # several outputs: a list of (shape, dtype); the kernel fills the tuple of them
    outs = tuple(allocate(shape, dtype, device) for shape, dtype in outs)
    if device.type != "meta":
        inputs = plan.inputs
        if plan.casts is not None:
            inputs = _cast_inputs(inputs, plan.casts)
        prim.kernel(side.type)(outs, *inputs, **plan.params)
    return outs if plan.finish is None else plan.finish(outs)


def _spec(prim: Primitive, plan: Plan, args: tuple) -> tuple:
    """What a memoized call needs: (device, shape, strides, dtype, allocator, size, kernel, kernel
    parameters, dense kernel, input strides); kernel and allocator are None on meta.  The dense
    kernel, where the backend offers one (``kernel.dense(out_shape, out_dtype, args, params)``),
    allocates and computes in one call for inputs with the strides they had here."""
    shape, dtype = plan.outputs
    device = plan.device
    dense = layout = None
    if device.type == "meta":
        kern = alloc = None
    else:
        kern = prim.kernel(device.type)
        alloc = allocator(device, dtype)
    # a result that follows its inputs' layout: the strides they had here (the memo key of such a
    # primitive names its inputs' strides)
    strides = (plan.follow and follow_strides(shape, plan.inputs)) or contiguous_strides(shape)
    if kern is not None:
        specialize = getattr(kern, "dense", None)
        if specialize is not None and _own_allocator(device):
            dense = specialize(shape, dtype, args, plan.params)
            # a dense kernel writing in its first input's memory order (``in_input_order``)
            # serves only a plan whose result is laid out that way; a C-ordered result takes
            # the kernel's ``c_ordered`` variant where it has one
            if getattr(dense, "in_input_order", False) and args[0]._strides != strides:
                dense = getattr(dense, "c_ordered", None)
            if dense is not None:  # the arrays' strides (None for a Python scalar)
                layout = tuple(getattr(a, "_strides", None) for a in args)
    size = prod(shape)
    # the positions of the array arguments (the memo key names which arguments are arrays)
    arrays = tuple(i for i, a in enumerate(args) if isinstance(a, Array))
    return (device, shape, strides, dtype, alloc, size, kern, plan.params, dense, layout, arrays)


def _memo_run(spec: tuple, args: tuple):
    """Run a memoized plan (see :func:`_spec`) on ``args``; None when one of its arrays is on
    another device than the plan's (the rule then names both; the reduction and matmul lanes
    test the device before they come here).  The device and layout tests share one pass over
    the array arguments.  Primitive.__call__ runs the dense lane of an untracked call itself
    (its hot path: clip, where, take, astype, argmax, ...); this serves the rest."""
    device = spec[0]
    dense = spec[8]
    if dense is not None:
        layout = spec[9]
        fits = True
        for i in spec[10]:
            a = args[i]
            if a._device is not device:
                return None
            if a._strides != layout[i]:
                fits = False
        if fits:  # (Primitive.__call__ runs this lane itself on its hot path)
            return Array._new(dense(*args), spec[1], spec[2], 0, spec[3], device)
    else:
        for i in spec[10]:
            if args[i]._device is not device:
                return None
    kern = spec[6]
    if kern is None:  # meta: the rule was the whole computation
        return Array._new(None, spec[1], spec[2], 0, spec[3], device)
    out = Array._new(spec[4](spec[5]), spec[1], spec[2], 0, spec[3], device)
    kern(out, *args, **spec[7])
    return out


def _needs_cast(args, casts) -> bool:
    """Whether casting ``args`` as ``casts`` says would change any of them (a Python scalar
    passes :func:`_cast` unchanged: its kernel takes it as it is)."""
    if casts is None:
        return False
    if isinstance(casts, dt.DType):
        return any(isinstance(a, Array) and a._dtype is not casts for a in args)
    return any(
        c is not None and isinstance(a, Array) and a._dtype is not c for a, c in zip(args, casts)
    )


def _cast_inputs(inputs, casts, follow: bool = False, lent: bool = False):
    """``inputs`` cast as ``casts`` says (one dtype for all, or one per input, None: as it is);
    with ``lent``, large casts in the backend's temporary memory, one slot per position."""
    if isinstance(casts, dt.DType):
        casts = (casts,) * len(inputs)
    return [
        a if c is None else _cast(a, c, follow, i if lent else None)
        for i, (a, c) in enumerate(zip(inputs, casts))
    ]


def _in_graph_args(args) -> bool:
    for a in args:
        if isinstance(a, Array):
            if a._ag is not None or (a._base is not None and a._base._ag is not None):
                return True
        elif type(a) in (list, tuple):
            for b in a:
                if isinstance(b, Array) and (
                    b._ag is not None or (b._base is not None and b._base._ag is not None)
                ):
                    return True
    return False


def apply(prim: Primitive, args: tuple, params: dict):
    """Run ``prim`` on ``args``: validate and apply its rules, allocate the outputs on the inputs'
    device, cast the inputs to the compute dtype, call the device's kernel (none on meta), and
    record the call on the tape when an input tracks gradients."""
    if Mode.enabled and prim.vjp is not NOT_DIFFERENTIABLE and _in_graph_args(args):
        # the primitive itself is the forward: with grad mode off inside record it goes straight
        # to its (memoized) plan
        return record(prim.name, prim.vjp, prim, args, params)
    return execute(prim, args, params)


# -- elementwise primitives: the same pipeline with its rule memoized ----------------------------
_PY_SCALARS = frozenset({bool, int, float, complex})
_UNARY = object()  # Elementwise.__call__'s marker for "no second operand"
_new_object = object.__new__
_INTEGER_KINDS = dt.INTEGER_KINDS
_INT_LIMITS: dict = {}


def _fits(value: int, arr: Array) -> bool:
    """Whether the Python int ``value`` fits ``arr``'s integer dtype (which it then takes, so the
    call's plan does not depend on the value and is memoized like a float scalar's)."""
    d = arr._dtype
    limits = _INT_LIMITS.get(d)
    if limits is None:
        import numpy as np

        info = np.iinfo(d.numpy)
        limits = _INT_LIMITS[d] = (int(info.min), int(info.max))
    return limits[0] <= value <= limits[1]


_FLOAT_KINDS = dt.FLOAT_KINDS
_SPECS_MAX = 1024


class Elementwise(Primitive):
    """An elementwise primitive.  Its rule depends only on the operands' dtypes, shapes and
    devices (and a Python scalar's type), so the result of the rule for one such combination is
    kept and the next call with it goes straight to allocation and the kernel: the per-call cost
    of small operations is a dictionary lookup, an allocation and the kernel."""

    __slots__ = ("_specs", "_last")

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._specs: dict = {}
        self._last = (None, None, None, None, None)  # the last two-array call's key and spec

    def forget(self) -> None:
        """Drop the memoized rule results (a kernel was replaced)."""
        self._specs.clear()
        self._plans.clear()
        self._last = (None, None, None, None, None)

    def __call__(self, x1, x2=_UNARY, /):
        if x2 is not _UNARY:  # (no argument tuple on the fast lanes)
            if x1.__class__ is Array:
                c2 = x2.__class__
                if c2 is Array:
                    tracked = (
                        x1._ag is not None
                        or x2._ag is not None
                        or (x1._base is not None and x1._base._ag is not None)
                        or (x2._base is not None and x2._base._ag is not None)
                    )
                    device = x1._device
                    if x2._device is not device:
                        return apply(self, (x1, x2) if x2 is not _UNARY else (x1,), _NO_PARAMS)
                    d1, d2, s1, s2, spec = self._last
                    if (
                        d1 is x1._dtype
                        and d2 is x2._dtype
                        and s1 == x1._shape
                        and s2 == x2._shape
                        and spec[5] is device
                    ):
                        # a loop repeating one call: no key to build or hash
                        shape, strides, dtype, alloc, size, device, kern, dense, bcast = spec
                        st = x1._strides
                        buf = None
                        if bcast is not None:
                            # arrays of two shapes that broadcast: one planned loop call, its
                            # result in C order (None: a layout it does not serve)
                            buf = bcast(x1, x2)
                            st = strides
                        elif dense is not None:
                            if st == x2._strides and (
                                st == strides or len(shape) > 1 and dense_order(shape, st)
                            ):
                                # operands sharing a dense layout in another order (a
                                # transpose) give it to the output, as NumPy's order='K'
                                buf = dense(x1, x2)
                            elif len(shape) == 1:
                                # vectors at other steps (x[::2]): the backend's loop with
                                # their steps, where it offers one
                                stepped = getattr(dense, "stepped", None)
                                if stepped is not None:
                                    buf = stepped(x1, x2)
                                    st = strides
                        if buf is not None:
                            # Array._new written out: this is the hottest line of the library
                            out = _new_object(Array)
                            out._buf = buf
                            out._shape = shape
                            out._strides = st
                            out._offset = 0
                            out._dtype = dtype
                            out._device = device
                            out._ag = out._base = None
                            out._version = 0
                        else:
                            out = self._run_spec(spec, (x1, x2))
                        if tracked and Mode.enabled:  # the thread-local read only when tracked
                            rule = self.vjp
                            if rule.__class__ is Rule and dtype.kind in _FLOAT_KINDS:
                                return record_two(self.name, rule, x1, x2, out)
                        return out
                    if tracked and Mode.enabled:
                        return self._recorded(x1, x2)
                    key = (x1._dtype, x2._dtype, x1._shape, x2._shape)
                    spec = self._specs.get(key)
                    if spec is not None:
                        self._last = (x1._dtype, x2._dtype, x1._shape, x2._shape, spec)
                elif c2 in _PY_SCALARS:
                    tracked = x1._ag is not None or (
                        x1._base is not None and x1._base._ag is not None
                    )
                    if c2 is int and x1._dtype.kind in _INTEGER_KINDS and not _fits(x2, x1):
                        # out of the dtype's range: the rule raises
                        return (
                            apply(self, (x1, x2) if x2 is not _UNARY else (x1,), _NO_PARAMS)
                            if tracked
                            else execute(self, (x1, x2), _NO_PARAMS)
                        )
                    device = x1._device
                    d1, d2, s1, s2, spec = self._last
                    if d1 is x1._dtype and d2 is c2 and s1 == x1._shape and spec[5] is device:
                        shape, strides, dtype, alloc, size, device, kern, dense, _ = spec
                        st = x1._strides
                        buf = None
                        if dense is not None:
                            if st == strides or len(shape) > 1 and dense_order(shape, st):
                                buf = dense(x1, x2)
                            elif len(shape) == 1:  # a vector at another step (x[::2] * 2)
                                stepped = getattr(dense, "stepped", None)
                                if stepped is not None:
                                    buf = stepped(x1, x2)
                                    st = strides
                        if buf is not None:
                            out = _new_object(Array)
                            out._buf = buf
                            out._shape = shape
                            out._strides = st
                            out._offset = 0
                            out._dtype = dtype
                            out._device = device
                            out._ag = out._base = None
                            out._version = 0
                        else:
                            out = self._run_spec(spec, (x1, x2))
                        if tracked and Mode.enabled:
                            rule = self.vjp
                            if rule.__class__ is Rule and dtype.kind in _FLOAT_KINDS:
                                return record_scalar(self.name, rule, (x1, x2), x1, out)
                        return out
                    if tracked and Mode.enabled:
                        return self._recorded_other((x1, x2), (x1._dtype, c2, x1._shape), x1)
                    key = (x1._dtype, c2, x1._shape)
                    spec = self._specs.get(key)
                    if spec is not None:
                        self._last = (x1._dtype, c2, x1._shape, None, spec)
                else:
                    return apply(self, (x1, x2) if x2 is not _UNARY else (x1,), _NO_PARAMS)
            elif x2.__class__ is Array and x1.__class__ in _PY_SCALARS:
                if (
                    x2._ag is not None or (x2._base is not None and x2._base._ag is not None)
                ) and Mode.enabled:
                    return self._recorded_other((x1, x2), (x1.__class__, x2._dtype, x2._shape), x2)
                if x1.__class__ is int and x2._dtype.kind in _INTEGER_KINDS and not _fits(x1, x2):
                    return execute(self, (x1, x2), _NO_PARAMS)  # the rule raises
                device = x2._device
                key = (x1.__class__, x2._dtype, x2._shape)
                spec = self._specs.get(key)
            else:
                return apply(self, (x1, x2) if x2 is not _UNARY else (x1,), _NO_PARAMS)
        elif x1.__class__ is Array:
            if (
                x1._ag is not None or (x1._base is not None and x1._base._ag is not None)
            ) and Mode.enabled:
                return self._recorded_other((x1,), (x1._dtype, x1._shape), x1)
            device = x1._device
            d1, d2, s1, s2, spec = self._last
            if d1 is x1._dtype and d2 is _UNARY and s1 == x1._shape and spec[5] is device:
                # a loop repeating one unary call (as the two-array lane above)
                shape, strides, dtype, alloc, size, device, kern, dense, _ = spec
                st = x1._strides
                buf = None
                if dense is not None:
                    if st == strides or len(shape) > 1 and dense_order(shape, st):
                        buf = dense(x1)
                    elif len(shape) == 1:  # a vector at another step (x[::2])
                        stepped = getattr(dense, "stepped", None)
                        if stepped is not None:
                            buf = stepped(x1)
                            st = strides
                if buf is not None:
                    out = _new_object(Array)
                    out._buf = buf
                    out._shape = shape
                    out._strides = st
                    out._offset = 0
                    out._dtype = dtype
                    out._device = device
                    out._ag = out._base = None
                    out._version = 0
                    return out
                return self._run_spec(spec, (x1,))
            key = (x1._dtype, x1._shape)
            spec = self._specs.get(key)
            if spec is not None and spec[5] is device:
                self._last = (x1._dtype, _UNARY, x1._shape, None, spec)
        else:
            return apply(self, (x1, x2) if x2 is not _UNARY else (x1,), _NO_PARAMS)
        # every lane above looked the key's spec up (and remembered it for the next call)
        args = (x1, x2) if x2 is not _UNARY else (x1,)
        if spec is None or spec[5] is not device:
            plan = _plan(self, args, _NO_PARAMS)
            spec = self._remember(key, plan, args)
            if spec is None:
                return _run(self, plan)
        return self._run_spec(spec, args)

    def memoized(self, x1: Array, x2) -> tuple | None:
        """The remembered rule result of ``self(x1, x2)`` (``x2`` an array or a Python scalar;
        the call needs no casts), or None before such a call ran: for the in-place operators,
        which run its kernel into ``x1`` itself."""
        c2 = x2.__class__
        if c2 is Array:
            if x2._device is not x1._device:
                return None
            spec = self._specs.get((x1._dtype, x2._dtype, x1._shape, x2._shape))
        elif c2 in _PY_SCALARS:
            if c2 is int and x1._dtype.kind in _INTEGER_KINDS and not _fits(x2, x1):
                return None  # (the rule raises)
            spec = self._specs.get((x1._dtype, c2, x1._shape))
        else:
            return None
        return spec if spec is not None and spec[5] is x1._device else None

    def _recorded(self, x1: Array, x2: Array):
        """A recorded call with two arrays.  An elementwise kernel records nothing itself, so the
        forward runs without switching grad mode off, and the node is attached directly."""
        rule = self.vjp
        key = (x1._dtype, x2._dtype, x1._shape, x2._shape)
        spec = self._specs.get(key)
        if spec is None or spec[5] is not x1._device or x2._device is not x1._device:
            return record(self.name, rule, self, (x1, x2), _NO_PARAMS)
        self._last = (x1._dtype, x2._dtype, x1._shape, x2._shape, spec)
        out = self._run_spec(spec, (x1, x2))
        if type(rule) is str or out._dtype.kind not in _FLOAT_KINDS:
            return out  # not differentiable, or no floating output to carry a gradient
        return record_two(self.name, rule, x1, x2, out)

    def _recorded_other(self, args: tuple, key: tuple, x: Array):
        """A recorded call with one array (and maybe a Python scalar) whose rule result is
        memoized under ``key``: the kernel runs with grad mode on and one node is attached."""
        rule = self.vjp
        spec = self._specs.get(key)
        if spec is None or spec[5] is not x._device or rule.__class__ is not Rule:
            return record(self.name, rule, self, args, _NO_PARAMS)
        if len(key) == 3 and key[0].__class__ is dt.DType:  # (dtype, scalar type, shape)
            self._last = (key[0], key[1], key[2], None, spec)
        out = self._run_spec(spec, args)
        if out._dtype.kind not in _FLOAT_KINDS:
            return out
        if len(args) == 1:
            return record_unary(self.name, rule, _NO_PARAMS, x, out)
        return record_scalar(self.name, rule, args, x, out)

    def _run_spec(self, spec: tuple, args: tuple):
        shape, strides, dtype, alloc, size, device, kern, dense, broadcast = spec
        if broadcast is not None:
            buf = broadcast(*args)
            if buf is not None:
                return Array._new(buf, shape, strides, 0, dtype, device)
        if dense is not None:
            # the backend's kernel for operands that all share one dense layout (Python scalars
            # aside): C order, or another order that the output then takes too (NumPy's
            # order='K'), so that a transposed map runs over memory in order
            common = None
            for a in args:
                if isinstance(a, Array):
                    st = a._strides
                    if common is None:
                        common = st
                    elif st != common:
                        break
            else:
                if common == strides:
                    return Array._new(dense(*args), shape, strides, 0, dtype, device)
                order = dense_order(shape, common)
                if order is not None:
                    return Array._new(dense(*args), shape, order, 0, dtype, device)
            if len(shape) == 1:
                # vectors at other steps (x[::2], x[::-1]): the backend's loop with their
                # steps, where it offers one; the result in C order
                stepped = getattr(dense, "stepped", None)
                if stepped is not None:
                    return Array._new(stepped(*args), shape, strides, 0, dtype, device)
        for a in args:
            if isinstance(a, Array) and a._strides != strides and a._shape == shape:
                strides = follow_strides(shape, args) or strides
                break
        if kern is None:  # meta: the rule was the whole computation
            return Array._new(None, shape, strides, 0, dtype, device)
        out = Array._new(alloc(size), shape, strides, 0, dtype, device)
        kern(out, *args)
        return out

    def _remember(self, key, plan: Plan, args):
        """Keep the rule's result for ``key`` when its inputs need no cast (else None)."""
        compute = plan.casts
        for a in args:
            if isinstance(a, Array) and a._dtype is not compute:
                return None
        shape, dtype = plan.outputs
        device = plan.device
        size = prod(shape)
        dense = broadcast = None
        if device.type == "meta":
            kern = alloc = None
        else:
            kern = self.kernel(device.type)
            alloc = allocator(device, dtype)
            specialize = getattr(kern, "dense", None)
            if specialize is not None and _own_allocator(device):
                pattern = tuple(isinstance(a, Array) and a._shape == shape for a in args)
                if all(p or a.__class__ in _PY_SCALARS for p, a in zip(pattern, args)):
                    dense = specialize(dtype, compute, size, pattern)
                elif len(args) == 2 and all(isinstance(a, Array) for a in args):
                    # two arrays of different shapes: the backend's broadcasting kernel
                    specialize = getattr(kern, "broadcast_dense", None)
                    if specialize is not None:
                        broadcast = specialize(dtype, compute, shape)
        if len(self._specs) >= _SPECS_MAX:
            self._specs.clear()
        spec = (
            shape, contiguous_strides(shape), dtype, alloc, size, device, kern, dense, broadcast
        )  # fmt: skip
        self._specs[key] = spec
        return spec


class Reduction(Primitive):
    """A reduction (sum, prod, max, min, any, all): the same pipeline, called with its keywords
    written out and its last call remembered, so that a loop reducing arrays of one shape skips
    building the plan's key (memoized plans serve the other calls)."""

    __slots__ = ("_last",)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._last = (None, None, None, None, None, None)

    def forget(self) -> None:
        super().forget()
        self._last = (None, None, None, None, None, None)

    def __call__(self, x, /, *, axis=None, keepdims=False, dtype=None):
        if x.__class__ is Array or isinstance(x, Array):
            d, shape, ax, kd, dt_, spec = self._last
            if (
                d is x._dtype
                and shape == x._shape
                and ax == axis
                and kd is keepdims
                and dt_ is dtype
                and spec[0] is x._device
            ):
                dense, layout = spec[8], spec[9]
                # a one-call kernel made for another layout of this shape: the general path
                # below finds (or makes) the plan of x's own layout
                if dense is None or x._strides == layout[0]:
                    if dense is None:
                        out = _memo_run(spec, (x,))
                    else:
                        out = _new_object(Array)
                        out._buf = dense(x)
                        out._shape = spec[1]
                        out._strides = spec[2]
                        out._offset = 0
                        out._dtype = spec[3]
                        out._device = spec[0]
                        out._ag = out._base = None
                        out._version = 0
                    if (
                        x._ag is not None or (x._base is not None and x._base._ag is not None)
                    ) and Mode.enabled:
                        rule = self.vjp
                        if rule.__class__ is not Rule or out._dtype.kind not in _FLOAT_KINDS:
                            return out  # not differentiable, or no floating output
                        if dtype is None:
                            params = {"axis": axis, "keepdims": keepdims}
                        else:
                            params = {"axis": axis, "keepdims": keepdims, "dtype": dtype}
                        return record_unary(self.name, rule, params, x, out)
                    return out
        if dtype is None:
            out = Primitive.__call__(self, x, axis=axis, keepdims=keepdims)
        else:
            out = Primitive.__call__(self, x, axis=axis, keepdims=keepdims, dtype=dtype)
        key = (
            None
            if self.memo_key is None
            else self.memo_key(x, axis=axis, keepdims=keepdims, dtype=dtype)
        )
        if key is not None:
            spec = self._plans.get(key)  # the plan memoized for x's layout
            if spec is not None:
                self._last = (x._dtype, x._shape, axis, keepdims, dtype, spec)
        return out


class Contraction(Primitive):
    """matmul: the same pipeline, with its last call remembered (a loop multiplying matrices of
    one shape compares dtypes and shapes instead of building the plan's key)."""

    __slots__ = ("_last",)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._last = (None, None, None, None, None)

    def forget(self) -> None:
        super().forget()
        self._last = (None, None, None, None, None)

    def __call__(self, x1, x2, /):
        if x1.__class__ is Array and x2.__class__ is Array:
            d1, d2, s1, s2, spec = self._last
            if (
                d1 is x1._dtype
                and d2 is x2._dtype
                and s1 == x1._shape
                and s2 == x2._shape
                and spec[0] is x1._device
                and x2._device is x1._device
            ):
                dense, layout = spec[8], spec[9]
                if dense is not None and x1._strides == layout[0] and x2._strides == layout[1]:
                    out = _new_object(Array)
                    out._buf = dense(x1, x2)
                    out._shape = spec[1]
                    out._strides = spec[2]
                    out._offset = 0
                    out._dtype = spec[3]
                    out._device = spec[0]
                    out._ag = out._base = None
                    out._version = 0
                else:
                    out = _memo_run(spec, (x1, x2))
                if (
                    x1._ag is not None
                    or x2._ag is not None
                    or (x1._base is not None and x1._base._ag is not None)
                    or (x2._base is not None and x2._base._ag is not None)
                ) and Mode.enabled:
                    rule = self.vjp
                    if rule.__class__ is Rule and out._dtype.kind in _FLOAT_KINDS:
                        return record_two(self.name, rule, x1, x2, out)
                return out
            out = Primitive.__call__(self, x1, x2)
            spec = self._plans.get((x1._dtype, x2._dtype, x1._shape, x2._shape))
            if spec is not None:
                self._last = (x1._dtype, x2._dtype, x1._shape, x2._shape, spec)
            return out
        return Primitive.__call__(self, x1, x2)


# -- composite primitives -------------------------------------------------------------------------
def composite(name: str, n_data: int = 1):
    """Decorator: declare ``fn`` a composite primitive ``name``: a composition of other operations
    recorded as one unit with its own backward rule (LAPACK-backed decompositions, norms with a
    chosen subgradient, indexing).  ``fn`` is the primitive's rule and returns the result itself;
    it runs on every device because the operations it composes do.  The first ``n_data``
    positional arguments are the data; the others are passed on by name (as the tape records
    them).  Returns a function with ``fn``'s signature that calls the primitive."""

    def deco(fn):
        prim = declare(name, "composite", rule=fn)
        call = _forwarding(fn, prim, by_name_from=n_data)  # fn's own signature, generated
        if call is None:  # (*args after the data, or a parameter named like the generator's own)
            raise TypeError(f"composite {name!r}: its parameters cannot be passed on by name")
        call = functools.wraps(fn)(call)
        call.primitive = prim
        return call

    return deco


# -- observing calls --------------------------------------------------------------------------
_observers: list = []
_observed_classes: dict = {}


class _Depth(threading.local):
    value = 0  # how many observed primitive calls the calling thread is inside


_depth = _Depth()


def _observed_class(cls: type) -> type:
    """``cls`` with a ``__call__`` that reports each call to the observers (made once)."""
    sub = _observed_classes.get(cls)
    if sub is None:
        call = cls.__call__

        def __call__(self, *args, **params):
            depth = _depth.value
            _depth.value = depth + 1
            try:
                out = call(self, *args, **params)
            finally:
                _depth.value = depth
            for fn in tuple(_observers):
                fn(self, args, params, out, depth)
            return out

        sub = type(cls.__name__, (cls,), {"__slots__": (), "__call__": __call__})
        sub.__module__ = cls.__module__
        sub._unobserved = cls
        _observed_classes[cls] = sub
    return sub


@contextlib.contextmanager
def observe(callback: Callable):
    """Within the block, call ``callback(primitive, args, params, out, depth)`` after every
    primitive call that returns (in every thread).  ``depth`` is 0 for a call made outside any
    primitive, and more for the calls a primitive makes itself (a composite's parts, and the
    untracked re-run that recording does).  Used to count FLOPs and memory per module.

    Observing costs nothing outside such a block: entering it swaps every primitive's class for
    a subclass whose ``__call__`` reports, leaving it swaps them back."""
    _observers.append(callback)
    if len(_observers) == 1:
        for prim in _PRIMITIVES.values():
            prim.__class__ = _observed_class(prim.__class__)
    try:
        yield callback
    finally:
        _observers.remove(callback)
        if not _observers:
            for prim in _PRIMITIVES.values():
                prim.__class__ = getattr(prim.__class__, "_unobserved", prim.__class__)


def _empty_rule(*args, **params):
    raise TypeError("empty: the allocation primitive is called by the dispatcher, not directly")


# allocation and the strided copy/cast are primitives too, so that each backend owns its memory
EMPTY = declare("empty", "creation", rule=_empty_rule)
COPY = declare("copy", "copy")  # strided copy with cast: astype, asarray, setitem, concat
FILL = declare("fill", "write")  # write a scalar into a (view of an) array
