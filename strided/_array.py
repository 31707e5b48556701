"""class Array: a 1-D buffer plus shape, strides (in elements), offset, dtype and device.

Views (basic indexing, reshape when the layout allows, transposes, broadcasting, expand/squeeze)
share the buffer: writing through a view is visible in its base.  On ``meta`` the buffer is None:
shape, strides and dtype are all there is.
"""

from __future__ import annotations

import operator
import sys
import types

import numpy as np

from . import _dtypes as dt
from ._device import CPU, Device
from ._grad_state import AutogradMeta
from ._shapes import is_c_contiguous, prod

__all__ = ["Array", "OPERATIONS"]

_ELLIPSIS = Ellipsis

#: The operations that Array's methods call, by name (``"add"``, ``"getitem"``, ``"setitem"``,
#: ``"to_device"``, ``"backward"``, ...).  The array object is the memory model and sits below
#: the operation layer, so it names operations instead of importing them; ``strided._ops``
#: and ``strided.autograd`` bind them when ``strided`` is imported.
OPERATIONS: dict = {}


def _bound(name: str):
    try:
        return OPERATIONS[name]
    except KeyError:
        raise RuntimeError(f"{name}: the operation layer is not loaded; import strided") from None


def _unbound(name: str):
    def method(self, *args, **kwargs):
        return _bound(name)(self, *args, **kwargs)

    return method


_PY_SCALARS = frozenset({bool, int, float, complex})


def _binary_method(dunder: str, op: str | None):
    if op is None:

        def method(self, other):
            return OPERATIONS[dunder](self, other)

    else:
        # an array or Python scalar operand goes straight to the primitive (the hot path);
        # anything else is converted, or refused with NotImplemented, by the op layer
        def method(self, other):
            if other.__class__ is Array or other.__class__ in _PY_SCALARS:
                return OPERATIONS[op](self, other)
            return OPERATIONS[dunder](self, other)

    method.__name__ = method.__qualname__ = dunder
    return method


def _unary_method(dunder: str):
    def method(self):
        return OPERATIONS[dunder](self)

    method.__name__ = method.__qualname__ = dunder
    return method


# the standard's operators: each dunder calls the op layer's implementation of the same name;
# the forward ones with an array or scalar operand call the primitive bound as OPERATIONS[op]
_FORWARD = {
    "add": "add", "sub": "subtract", "mul": "multiply", "truediv": "divide",
    "floordiv": "floor_divide", "mod": "remainder", "pow": "pow", "and": "bitwise_and",
    "or": "bitwise_or", "xor": "bitwise_xor", "lshift": "bitwise_left_shift",
    "rshift": "bitwise_right_shift", "eq": "equal", "ne": "not_equal", "lt": "less",
    "le": "less_equal", "gt": "greater", "ge": "greater_equal", "matmul": "matmul",
}  # fmt: skip
_BINARY_DUNDERS = {f"__{n}__": op for n, op in _FORWARD.items()}
for _n in _FORWARD:
    for _p in ("r", "i"):
        if _n not in ("eq", "ne", "lt", "le", "gt", "ge"):
            _BINARY_DUNDERS[f"__{_p}{_n}__"] = None
del _n, _p
_UNARY_DUNDERS = ["__neg__", "__pos__", "__abs__", "__invert__"]


_new_object = object.__new__


def _in_graph(a) -> bool:
    """True when ``a`` tracks gradients or views memory whose owner does."""
    if a._ag is not None:
        return True
    b = a._base
    return b is not None and b._ag is not None


class Array:
    """An n-dimensional array with a strided view of a 1-D buffer on a device."""

    __slots__ = (
        "_buf",
        "_shape",
        "_strides",
        "_offset",
        "_dtype",
        "_device",
        "_ag",  # autograd state (strided._tape.AutogradMeta), None when not tracking gradients
        "_base",  # the array owning the memory when this is a view (its version counter is shared)
        "_version",  # owner: bumped by every in-place write; view: the owner's when taken
        "__weakref__",
    )
    # ndarray <op> Array defers to Array's reflected operator instead of converting us to NumPy
    __array_ufunc__ = None

    # -- construction ---------------------------------------------------------------------------
    def __init__(self, *args, **kwargs):
        raise TypeError("create arrays with strided.asarray(), strided.zeros(), ... not Array()")

    @staticmethod
    def _new(buf, shape: tuple, strides: tuple, offset: int, dtype: dt.DType, device: Device):
        """A plain Array (never a subclass: results of operations are plain arrays)."""
        self = object.__new__(Array)
        self._buf = buf
        self._shape = shape
        self._strides = strides
        self._offset = offset
        self._dtype = dtype
        self._device = device
        self._ag = None
        self._base = None
        self._version = 0
        return self

    @staticmethod
    def _make_subclass(cls: type, data: Array, requires_grad: bool = False) -> Array:
        """An instance of the Array subclass ``cls`` sharing ``data``'s memory (PyTorch's
        ``Tensor._make_subclass``; what ``nn.Parameter`` is built with).  It is a leaf: it has
        no history, and requires grad when asked."""
        if not (isinstance(cls, type) and issubclass(cls, Array)):
            raise TypeError(f"_make_subclass: {cls!r} is not a subclass of strided.Array")
        if not isinstance(data, Array):
            raise TypeError(f"_make_subclass: expected a strided array, got {type(data).__name__}")
        self = object.__new__(cls)
        self._buf = data._buf
        self._shape = data._shape
        self._strides = data._strides
        self._offset = data._offset
        self._dtype = data._dtype
        self._device = data._device
        self._ag = None
        base = data._base
        self._base = data if base is None else base
        self._version = self._base._version
        if requires_grad:
            self.requires_grad_()
        return self

    def _view(self, shape: tuple, strides: tuple, offset: int) -> Array:
        v = _new_object(Array)  # Array._new written out: every view comes here
        v._buf = self._buf
        v._shape = shape
        v._strides = strides
        v._offset = offset
        v._dtype = self._dtype
        v._device = self._device
        v._ag = None
        base = self._base
        if base is None:
            base = self
        v._base = base
        v._version = base._version  # a view's _version: its owner's when it was taken
        return v

    def _views(self, shape: tuple, strides: tuple, offsets) -> tuple:
        """Views of one shape and strides at each of ``offsets`` (``_view``'s body in one loop:
        unstack's 100 views 23 -> ~15 us)."""
        buf, dtype, device = self._buf, self._dtype, self._device
        base = self._base
        if base is None:
            base = self
        version = base._version
        views = []
        for offset in offsets:
            v = _new_object(Array)
            v._buf = buf
            v._shape = shape
            v._strides = strides
            v._offset = offset
            v._dtype = dtype
            v._device = device
            v._ag = None
            v._base = base
            v._version = version
            views.append(v)
        return tuple(views)

    # -- attributes -----------------------------------------------------------------------------
    @property
    def shape(self) -> tuple[int, ...]:
        """The array's dimensions."""
        return self._shape

    @property
    def strides(self) -> tuple[int, ...]:
        """Step in the buffer, in elements, per dimension (like PyTorch's ``stride()``)."""
        return self._strides

    @property
    def offset(self) -> int:
        """Position of element ``[0, ..., 0]`` in the buffer, in elements."""
        return self._offset

    @property
    def dtype(self) -> dt.DType:
        return self._dtype

    @property
    def device(self) -> Device:
        return self._device

    @property
    def ndim(self) -> int:
        return len(self._shape)

    @property
    def size(self) -> int:
        return prod(self._shape)

    @property
    def T(self) -> Array:
        """The transpose of a 2-D array (the standard restricts ``.T`` to 2-D)."""
        if len(self._shape) != 2:
            raise ValueError(
                f"T: needs a 2-D array, got {len(self._shape)}-D; use .mT or permute_dims"
            )
        if _in_graph(self):
            return OPERATIONS["permute_dims"](self, (1, 0))
        return self._view(self._shape[::-1], self._strides[::-1], self._offset)

    @property
    def mT(self) -> Array:
        """The transpose of the last two dimensions."""
        n = len(self._shape)
        if n < 2:
            raise ValueError(f"mT: needs at least 2 dimensions, got shape {self._shape}")
        if _in_graph(self):
            return OPERATIONS["permute_dims"](self, (*range(n - 2), n - 1, n - 2))
        s, st = self._shape, self._strides
        return self._view(s[:-2] + (s[-1], s[-2]), st[:-2] + (st[-1], st[-2]), self._offset)

    def is_contiguous(self) -> bool:
        """True when the elements are dense in C order."""
        return is_c_contiguous(self._shape, self._strides)

    # -- host access ----------------------------------------------------------------------------
    def _require_data(self, what: str) -> None:
        if self._device.type == "meta":
            raise RuntimeError(
                f"{what}: a meta array has no data "
                f"(shape {self._shape}, dtype {self._dtype.name}); "
                "move real data to 'cpu' to read values"
            )

    def _export(self):
        """The object through which this array's memory is shared (a NumPy view on cpu): its
        device's backend makes it (``export`` kernel)."""
        self._require_data("export")
        return OPERATIONS["export"](self)

    def __array__(self, dtype=None, copy=None):
        self._require_data("__array__")
        if self._device.type != "cpu":
            # a copy across devices is never implicit (as in PyTorch and CuPy): it is a transfer
            # the user should see in the code
            raise TypeError(
                f"__array__: the array is on {self._device}; NumPy needs host memory, so copy it "
                "explicitly first: x.to_device('cpu') (or xp.asarray(x, device='cpu'))"
            )
        a = self._export()
        if copy:
            a = a.copy()
        return a if dtype is None else a.astype(dtype, copy=False)

    def _to_host(self) -> Array:
        if self._device.type == "cpu":
            return self
        return self.to_device(CPU)

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        self._require_data("__dlpack__")
        if dl_device is not None and tuple(dl_device) != self.__dlpack_device__():
            if tuple(dl_device) == (1, 0) and copy is not True:
                # memory the host can read as it is (the cuda device on host execution keeps its
                # buffers in host memory): a CPU export needs no copy
                a = self._export()
                if isinstance(a, np.ndarray):
                    kwargs = {} if max_version is None else {"max_version": max_version}
                    return a.__dlpack__(**kwargs)
            if tuple(dl_device) != (1, 0) or copy is False:
                raise BufferError(
                    f"__dlpack__: cannot export a {self._device} array to DLPack device "
                    f"{tuple(dl_device)}" + (" without a copy" if copy is False else "")
                )
            return self._to_host().__dlpack__(max_version=max_version, copy=copy)
        a = self._export()
        if copy:
            a = a.copy()
        kwargs = {}
        if max_version is not None:
            kwargs["max_version"] = max_version
        return a.__dlpack__(stream=stream, **kwargs)

    def __dlpack_device__(self) -> tuple[int, int]:
        if self._device.type == "cpu":
            return (1, 0)  # kDLCPU
        if self._device.type == "cuda":
            return (2, self._device.index)  # kDLCUDA
        raise BufferError("__dlpack_device__: a meta array has no memory to share")

    def __array_namespace__(self, *, api_version: str | None = None) -> types.ModuleType:
        if api_version not in (None, "2021.12", "2022.12", "2023.12", "2024.12", "2025.12"):
            raise ValueError(f"__array_namespace__: unsupported api_version {api_version!r}")
        return sys.modules["strided"]

    def to_device(self, device, /, *, stream=None) -> Array:
        """A copy of this array on ``device`` (self when it is already there); the move is the
        ``to_device`` operation, run by the backends of both devices."""
        return OPERATIONS["to_device"](self, device, stream=stream)

    # -- conversion to Python scalars -----------------------------------------------------------
    def _scalar(self, what: str):
        if self._shape != ():
            raise TypeError(
                f"{what}: only 0-d arrays convert to Python scalars, got shape {self._shape}"
            )
        self._require_data(what)
        return self._to_host()._export().item()

    def __bool__(self) -> bool:
        return bool(self._scalar("__bool__"))

    def __int__(self) -> int:
        if self._dtype.kind == dt.COMPLEX:
            raise TypeError("__int__: cannot convert a complex array to int")
        v = self._scalar("__int__")
        if isinstance(v, float) and (v != v or v in (float("inf"), float("-inf"))):
            raise (ValueError if v != v else OverflowError)(f"__int__: cannot convert {v} to int")
        return int(v)

    def __float__(self) -> float:
        if self._dtype.kind == dt.COMPLEX:
            raise TypeError("__float__: cannot convert a complex array to float")
        return float(self._scalar("__float__"))

    def __complex__(self) -> complex:
        return complex(self._scalar("__complex__"))

    def __index__(self) -> int:
        if self._dtype.kind not in dt.INTEGER_KINDS:
            raise TypeError(f"__index__: needs an integer array, got {self._dtype.name}")
        return int(self._scalar("__index__"))

    def __len__(self) -> int:
        if not self._shape:
            raise TypeError("len() of a 0-d array")
        return self._shape[0]

    def __iter__(self):
        if not self._shape:
            raise TypeError("iteration over a 0-d array")
        for i in range(self._shape[0]):
            yield self[i]

    # -- repr -----------------------------------------------------------------------------------
    def __repr__(self) -> str:
        suffix = f", dtype={self._dtype.name}"
        if self._device.type == "meta":
            return f"Array(shape={self._shape}{suffix}, device='meta')"
        if self._device.type != "cpu":
            suffix += f", device='{self._device}'"
        body = np.array2string(
            self._to_host()._export(), separator=", ", prefix="Array(", threshold=1000, edgeitems=3
        )
        return f"Array({body}{suffix})"

    def __str__(self) -> str:
        if self._device.type == "meta":
            return repr(self)
        return np.array2string(self._to_host()._export(), threshold=1000, edgeitems=3)

    # -- indexing -------------------------------------------------------------------------------
    def _index_view(self, key) -> Array:
        """The view selected by a basic index: ints, slices, None, Ellipsis."""
        return self._view(*self._index_geometry(key))

    def _index_geometry(self, key) -> tuple:
        """(shape, strides, offset) of the view selected by a basic index."""
        shape = self._shape
        if key.__class__ is slice and shape:  # the commonest index: a slice of axis 0
            start, stop, step = key.indices(shape[0])
            if step == 1:
                size = stop - start if stop > start else 0
            else:
                size = len(range(start, stop, step))
            strides = self._strides
            st = strides[0]
            return (
                (size,) + shape[1:],
                (st * step,) + strides[1:],
                self._offset + start * st if size else self._offset,
            )
        if not isinstance(key, tuple):
            key = (key,)
        n_ell = 0
        n_real = 0
        for k in key:
            if k is _ELLIPSIS:
                n_ell += 1
            elif k is not None:
                n_real += 1
        ndim = len(self._shape)
        if n_ell > 1:
            raise IndexError("an index can only have a single ellipsis ('...')")
        if n_real > ndim:
            raise IndexError(
                f"too many indices for array: array is {ndim}-dimensional, "
                f"but {n_real} were indexed"
            )
        shape, strides = self._shape, self._strides
        offset = self._offset
        new_shape: list[int] = []
        new_strides: list[int] = []
        d = 0
        for k in key:
            if k is None:
                new_shape.append(1)
                new_strides.append(0)
            elif k is _ELLIPSIS:
                for _ in range(ndim - n_real):
                    new_shape.append(shape[d])
                    new_strides.append(strides[d])
                    d += 1
            elif isinstance(k, slice):
                start, stop, step = k.indices(shape[d])
                n = len(range(start, stop, step))
                if n > 0:
                    offset += start * strides[d]
                new_shape.append(n)
                new_strides.append(strides[d] * step)
                d += 1
            else:
                if isinstance(k, (bool, np.bool_)):
                    raise IndexError(
                        f"index {k!r}: Python booleans are not indices; use a boolean array"
                    )
                try:
                    i = operator.index(k)
                except TypeError:
                    raise IndexError(
                        f"index {k!r} of type {type(k).__name__} is not an integer, slice, None or "
                        "'...'"
                    ) from None
                n = shape[d]
                if not -n <= i < n:
                    raise IndexError(f"index {i} is out of bounds for axis {d} with size {n}")
                offset += (i + n if i < 0 else i) * strides[d]
                d += 1
        while d < ndim:
            new_shape.append(shape[d])
            new_strides.append(strides[d])
            d += 1
        return tuple(new_shape), tuple(new_strides), offset

    def __getitem__(self, key) -> Array:
        kc = key.__class__
        if kc is tuple and len(key) == 1 and key[0].__class__ is slice:
            key, kc = key[0], slice  # x[(a:b,)], as compositions index axis 0: x[a:b]
        if kc is slice and self._shape:
            # the commonest index, x[a:b:c]: a view of axis 0
            base = self._base
            if self._ag is not None or (base is not None and base._ag is not None):
                return OPERATIONS["getitem"](self, key)  # in the graph: recorded
            return self._view(*self._index_geometry(key))
        if kc is not tuple:
            if isinstance(key, Array):
                return OPERATIONS["getitem_arrays"](self, key)
        elif any(isinstance(k, Array) for k in key):
            return OPERATIONS["getitem_arrays"](self, key)
        if _in_graph(self):
            return OPERATIONS["getitem"](self, key)
        return self._index_view(key)

    def __setitem__(self, key, value) -> None:
        OPERATIONS["setitem"](self, key, value)

    # -- operators (the op layer implements them; see OPERATIONS) -----------------------------
    for _dunder, _op in _BINARY_DUNDERS.items():
        locals()[_dunder] = _binary_method(_dunder, _op)
    for _dunder in _UNARY_DUNDERS:
        locals()[_dunder] = _unary_method(_dunder)
    del _dunder, _op
    __hash__ = None  # == is elementwise

    # -- autograd (PyTorch's names and semantics; the tape is strided._tape) ------------------
    @property
    def requires_grad(self) -> bool:
        """Whether operations on this array are recorded for differentiation."""
        return self._ag is not None

    @requires_grad.setter
    def requires_grad(self, flag: bool) -> None:
        self.requires_grad_(flag)

    def requires_grad_(self, requires_grad: bool = True) -> Array:
        """Start (or stop) tracking gradients of this leaf array; returns the array."""
        if self._ag is not None and self._ag.node is not None:
            if requires_grad:
                return self
            raise RuntimeError(
                "requires_grad_: only leaf arrays can stop requiring grad; use .detach() on an "
                "array computed from others"
            )
        if requires_grad:
            if self._dtype.kind not in dt.FLOAT_KINDS:
                raise TypeError(
                    f"requires_grad_: only floating-point and complex arrays can require "
                    f"gradients, got dtype {self._dtype.name}"
                )
            if self._ag is None:
                self._ag = AutogradMeta()
        else:
            self._ag = None
        return self

    @property
    def grad(self) -> Array | None:
        """The gradient accumulated by ``backward()`` (leaves, and arrays that retain_grad())."""
        return None if self._ag is None else self._ag.grad

    @grad.setter
    def grad(self, value: Array | None) -> None:
        if value is not None and (not isinstance(value, Array) or value._shape != self._shape):
            raise ValueError(
                f"grad: needs an array of shape {self._shape} or None, got "
                f"{getattr(value, 'shape', type(value).__name__)}"
            )
        if self._ag is None:
            raise RuntimeError("grad: this array does not require grad")
        self._ag.grad = value

    @property
    def is_leaf(self) -> bool:
        """True unless the array was computed by a recorded operation."""
        return self._ag is None or self._ag.node is None

    @property
    def grad_fn(self):
        """The tape node that computed this array (None for leaves)."""
        return None if self._ag is None else self._ag.node

    retain_grad = _unbound("retain_grad")
    retain_grad.__doc__ = (
        "Keep this non-leaf array's gradient in ``.grad`` after ``backward()`` (a no-op on "
        "leaves, which keep theirs anyway)."
    )
    retain_grad.__name__ = "retain_grad"

    @property
    def retains_grad(self) -> bool:
        """True for a non-leaf array after ``retain_grad()``."""
        ag = self._ag
        if ag is None or ag.node is None or not ag.node.retained:
            return False
        ref = ag.node.retained.get(ag.index)
        return ref is not None and ref() is self

    register_hook = _unbound("register_hook")
    register_hook.__doc__ = (
        "Call ``hook(grad)`` with the gradient reaching this array in every backward; a "
        "returned array replaces it.  Returns a handle with ``remove()``."
    )
    register_hook.__name__ = "register_hook"

    def detach(self) -> Array:
        """A view of the same memory that is not recorded (shares the version counter)."""
        v = self._view(self._shape, self._strides, self._offset)
        v._version = -1  # never given a history through its owner
        return v

    backward = _unbound("backward")
    backward.__doc__ = (
        "Accumulate d(self)/d(leaf) into every leaf's ``.grad``; ``gradient`` weights a "
        "non-scalar ``self`` (PyTorch's ``Tensor.backward(gradient, retain_graph, "
        "create_graph)``)."
    )
    backward.__name__ = "backward"

    # -- writes without autograd (what setitem performs) --------------------------------------
    def _write_item(self, key, value) -> None:
        """``self[key] = value`` without autograd (``__setitem__`` records writes into arrays in
        the graph and bumps version counters around this)."""
        cls = key.__class__
        if cls is slice:  # (the commonest write, x[a:b] = y)
            OPERATIONS["assign"](self._index_view(key), value)
            return
        if cls is not tuple:
            if isinstance(key, Array):
                OPERATIONS["setitem_arrays"](self, key, value)
                return
        elif any(isinstance(k, Array) for k in key):
            OPERATIONS["setitem_arrays"](self, key, value)
            return
        OPERATIONS["assign"](self._index_view(key), value)
