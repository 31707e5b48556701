"""Creation functions: asarray, zeros/ones/empty/full and *_like, arange, linspace, eye."""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence

import numpy as np

from .. import _dtypes as dt
from .._array import Array
from .._device import CPU, Device, as_device
from ..dispatch import _INSTALLED_EMPTY, _LAYOUTS, EMPTY, Plan, _observers, _own_allocator, declare
from . import elementwise as _ew
from . import manipulation as _man
from .core import FILL, astype_to, check_scalar_fits, copy_of, empty_on, run, scalar_array

__all__ = [
    "asarray",
    "empty",
    "empty_like",
    "zeros",
    "zeros_like",
    "ones",
    "ones_like",
    "full",
    "full_like",
    "arange",
    "linspace",
    "eye",
    "meshgrid",
    "from_dlpack",
    "tril",
    "triu",
]


def _full_rule(*, shape: tuple, fill_value, dtype: dt.DType, device: Device) -> Plan:
    return Plan(device, (shape, dtype), (), None, {"fill_value": fill_value})


def _arange_rule(*, n: int, start, step, dtype: dt.DType, device: Device) -> Plan:
    return Plan(device, ((n,), dtype), (), None, {"start": start, "step": step})


def _linspace_rule(*, num: int, start, stop, endpoint: bool, dtype, device: Device) -> Plan:
    params = {"start": start, "stop": stop, "endpoint": endpoint}
    return Plan(device, ((num,), dtype), (), None, params)


# creation primitives: their rules are the shape and dtype the public functions worked out
FULL = declare("full", "creation", rule=_full_rule)
ARANGE = declare("arange", "creation", rule=_arange_rule)
LINSPACE = declare("linspace", "creation", rule=_linspace_rule)


# Each creation function takes PyTorch's ``requires_grad=`` keyword itself and ends in
# ``out.requires_grad_() if requires_grad else out`` (a leaf that records when asked): a wrapper
# around the functions costs ~0.5 us a call in frames and argument repacking, a helper ~0.06.


def _output_and_kernel(prim, shape: tuple, dtype: dt.DType, device: Device):
    """A fresh output of ``shape`` and ``prim``'s kernel on its device (one that does nothing on
    meta), for the creation functions to call directly: the primitive's rule would only repeat
    the shape and dtype they checked (zeros(10) 4.3 -> ~1.3 us).  They call the primitive
    itself, which reports the call, while an observer watches.  (Each passes its parameters to
    the kernel by keyword itself: a shared helper taking them as ``**params`` costs ~0.4 us.)"""
    out = empty_on(shape, dtype, device)
    return out, (_no_kernel if device.type == "meta" else prim.kernel(device.type))


def _no_kernel(out: Array, **params) -> None:
    """The creation kernel of the meta device: a meta array has no values to write."""


def _full(shape: tuple, fill_value, dtype: dt.DType, device: Device) -> Array:
    if _observers:
        return FULL.call(shape=shape, fill_value=fill_value, dtype=dtype, device=device)
    # the buffer made and filled in one step where the backend offers it (zeros by NumPy's
    # calloc: 4096 float32 0.4 us against an empty buffer and a fill's 0.65; no output Array
    # and kernel frame around a fill), unless a test wrapped the allocator
    kind = device.type
    filled = getattr(FULL.kernels.get(kind), "filled", None)
    if filled is not None and EMPTY.kernels.get(kind) is _INSTALLED_EMPTY.get(kind):
        layout = _LAYOUTS.get(shape)
        if layout is not None:
            # a shape made before: its strides and size known, the array made here rather
            # than in allocate's frame (ones(4096) ~0.15 us less)
            buf = filled(layout[1], dtype, fill_value)
            return Array._new(buf, shape, layout[0], 0, dtype, device)
        return empty_on(shape, dtype, device, None, filled, fill_value)
    out, kernel = _output_and_kernel(FULL, shape, dtype, device)
    kernel(out, fill_value=fill_value)
    return out


def _shape_arg(shape, op: str) -> tuple[int, ...]:
    if type(shape) is int and shape >= 0:
        return (shape,)
    if type(shape) is tuple:  # the common call: nothing to convert or report
        for s in shape:  # (a loop, not all() over a generator: 0.1 us instead of 0.25)
            if type(s) is not int or s < 0:
                break
        else:
            return shape
    if isinstance(shape, int) or hasattr(shape, "__index__") and not isinstance(shape, Sequence):
        shape = (operator.index(shape),)
    try:
        shape = tuple(operator.index(s) for s in shape)
    except TypeError:
        raise TypeError(f"{op}: shape must be an int or a tuple of ints, got {shape!r}") from None
    for s in shape:
        if s < 0:
            raise ValueError(f"{op}: negative dimension {s} in shape {shape}")
    return shape


def empty(shape, *, dtype=None, device=None, requires_grad: bool = False) -> Array:
    """An uninitialised array of ``shape`` (default dtype float64)."""
    d = dt.default_float if dtype is None else dt.as_dtype(dtype)
    out = empty_on(_shape_arg(shape, "empty"), d, as_device(device))
    return out.requires_grad_() if requires_grad else out


def full(shape, fill_value, *, dtype=None, device=None, requires_grad: bool = False) -> Array:
    """An array of ``shape`` filled with ``fill_value``; dtype defaults from the value's kind."""
    if isinstance(fill_value, Array):
        fill_value = fill_value._scalar("full")
    if dtype is None:
        dtype = dt.scalar_dtype(fill_value, None)
    else:
        dtype = dt.as_dtype(dtype)
        check_scalar_fits("full", fill_value, dtype)
    out = _full(_shape_arg(shape, "full"), fill_value, dtype, as_device(device))
    return out.requires_grad_() if requires_grad else out


def zeros(shape, *, dtype=None, device=None, requires_grad: bool = False) -> Array:
    """An array of zeros (default dtype float64)."""
    d = dt.default_float if dtype is None else dt.as_dtype(dtype)
    out = _full(_shape_arg(shape, "zeros"), 0, d, as_device(device))
    return out.requires_grad_() if requires_grad else out


def ones(shape, *, dtype=None, device=None, requires_grad: bool = False) -> Array:
    """An array of ones (default dtype float64)."""
    d = dt.default_float if dtype is None else dt.as_dtype(dtype)
    out = _full(_shape_arg(shape, "ones"), 1, d, as_device(device))
    return out.requires_grad_() if requires_grad else out


def _like(x: Array, dtype, device, op: str) -> tuple[dt.DType, Device]:
    if dtype is None and device is None and x.__class__ is Array:
        return x._dtype, x._device  # (the common call: nothing to parse)
    if not isinstance(x, Array):
        raise TypeError(f"{op}: expected a strided array, got {type(x).__name__}")
    return (x._dtype if dtype is None else dt.as_dtype(dtype)), (
        x._device if device is None else as_device(device)
    )


def empty_like(x: Array, /, *, dtype=None, device=None, requires_grad: bool = False) -> Array:
    """An uninitialised array with ``x``'s shape (and dtype/device unless given)."""
    d, dev = _like(x, dtype, device, "empty_like")
    out = empty_on(x._shape, d, dev)
    return out.requires_grad_() if requires_grad else out


def zeros_like(x: Array, /, *, dtype=None, device=None, requires_grad: bool = False) -> Array:
    """Zeros with ``x``'s shape (and dtype/device unless given)."""
    d, dev = _like(x, dtype, device, "zeros_like")
    out = _full(x._shape, 0, d, dev)
    return out.requires_grad_() if requires_grad else out


def ones_like(x: Array, /, *, dtype=None, device=None, requires_grad: bool = False) -> Array:
    """Ones with ``x``'s shape (and dtype/device unless given)."""
    d, dev = _like(x, dtype, device, "ones_like")
    out = _full(x._shape, 1, d, dev)
    return out.requires_grad_() if requires_grad else out


def full_like(
    x: Array, /, fill_value, *, dtype=None, device=None, requires_grad: bool = False
) -> Array:
    """``fill_value`` with ``x``'s shape (and dtype/device unless given)."""
    d, dev = _like(x, dtype, device, "full_like")
    check_scalar_fits("full_like", fill_value, d)
    out = _full(x._shape, fill_value, d, dev)
    return out.requires_grad_() if requires_grad else out


def arange(
    start, /, stop=None, step=1, *, dtype=None, device=None, requires_grad: bool = False
) -> Array:
    """Evenly spaced values in ``[start, stop)`` (``arange(n)`` is ``0 .. n-1``)."""
    if stop is None:
        start, stop = 0, start
    if type(start) is int and type(stop) is int and type(step) is int and step:
        # plain ints (arange(n)): the exact count, no float division
        d = dt.default_int if dtype is None else dt.as_dtype(dtype)
        out = _arange(max(0, -((start - stop) // step)), start, step, d, device)
        return out.requires_grad_() if requires_grad else out
    for v in (start, stop, step):
        if isinstance(v, complex) or not isinstance(v, (int, float, np.number)):
            raise TypeError(f"arange: start, stop and step must be real numbers, got {v!r}")
    if step == 0:
        raise ValueError("arange: step must not be zero")
    if dtype is None:
        is_int = all(isinstance(v, (int, np.integer)) for v in (start, stop, step))
        dtype = dt.default_int if is_int else dt.default_float
    else:
        dtype = dt.as_dtype(dtype)
    out = _arange(max(0, math.ceil((stop - start) / step)), start, step, dtype, device)
    return out.requires_grad_() if requires_grad else out


def _arange(n: int, start, step, dtype: dt.DType, device) -> Array:
    device = as_device(device)
    if _observers:
        return ARANGE.call(n=n, start=start, step=step, dtype=dtype, device=device)
    out, kernel = _output_and_kernel(ARANGE, (n,), dtype, device)
    kernel(out, start=start, step=step)
    return out


def linspace(
    start, stop, /, num, *, dtype=None, device=None, endpoint=True, requires_grad: bool = False
) -> Array:
    """``num`` evenly spaced values from ``start`` to ``stop``."""
    num = operator.index(num)
    if num < 0:
        raise ValueError(f"linspace: num must be non-negative, got {num}")
    if dtype is None:
        is_complex = isinstance(start, complex) or isinstance(stop, complex)
        dtype = dt.default_complex if is_complex else dt.default_float
    else:
        dtype = dt.as_dtype(dtype)
        if dtype.kind not in dt.FLOAT_KINDS:
            raise TypeError(f"linspace: dtype must be floating-point, got {dtype.name}")
    device = as_device(device)
    if _observers:
        out = LINSPACE.call(
            num=num, start=start, stop=stop, endpoint=endpoint, dtype=dtype, device=device
        )
    else:
        out, kernel = _output_and_kernel(LINSPACE, (num,), dtype, device)
        kernel(out, start=start, stop=stop, endpoint=endpoint)
    return out.requires_grad_() if requires_grad else out


def eye(
    n_rows, n_cols=None, /, *, k=0, dtype=None, device=None, requires_grad: bool = False
) -> Array:
    """A 2-D array with ones on the ``k``-th diagonal and zeros elsewhere."""
    n_cols = n_rows if n_cols is None else n_cols
    shape = _shape_arg((n_rows, n_cols), "eye")
    n_rows, n_cols = shape
    if not hasattr(k, "__index__"):
        raise TypeError(f"eye: k must be an integer, got {k!r}")
    k = operator.index(k)
    dtype = dt.default_float if dtype is None else dt.as_dtype(dtype)
    device = as_device(device)
    # the diagonal is a 1-D view with stride n_cols + 1: fill it, no kernel of its own
    start_row, start_col = (0, k) if k >= 0 else (-k, 0)
    length = min(n_rows - start_row, n_cols - start_col)
    eye_of = None if _observers else getattr(FULL.kernels.get(device.type), "eye", None)
    if eye_of is not None and _own_allocator(device):
        # the backend's zeros with the diagonal written in one step (64 x 64: 3.5 -> ~2 us)
        buf = eye_of(n_rows * n_cols, dtype, start_row * n_cols + start_col, n_cols + 1, length)
        out = Array._new(buf, shape, (n_cols or 1, 1), 0, dtype, device)
        return out.requires_grad_() if requires_grad else out
    out = _full(shape, 0, dtype, device)
    if length > 0:
        diag = out._view((length,), (n_cols + 1,), start_row * n_cols + start_col)
        run(FILL, diag, 1)
    return out.requires_grad_() if requires_grad else out


def asarray(obj, /, *, dtype=None, device=None, copy=None, requires_grad: bool = False) -> Array:
    """Convert ``obj`` to a strided array.

    ``obj`` may be a strided array, a Python scalar, a (nested) sequence, a NumPy array, or any
    object supporting DLPack, the buffer protocol or ``__array__``.  ``copy=None`` copies only when
    needed, ``True`` always copies, ``False`` raises ValueError where a copy would be needed.
    ``requires_grad=True`` makes the result a leaf that records (PyTorch's keyword).
    """
    # the common call first (array API code calls asarray on arrays everywhere); requires_grad
    # is a parameter here as in the other creation functions
    if obj.__class__ is Array and dtype is None and device is None and not requires_grad:
        return copy_of(obj) if copy else obj
    if (
        obj.__class__ is np.ndarray
        and dtype is None
        and device is None
        and not requires_grad
        and obj.dtype in _VIEWED_NUMPY
        and as_device(None) is CPU
    ):
        # a NumPy array of one of strided's dtypes (native byte order), onto the CPU: viewed
        # without _asarray's conversions (4096 float64 2.1 -> ~1.5 us); a long copy by the
        # copy kernel on all threads (1M float64: NumPy's ndarray.copy 219 -> ~141 us; below
        # ~2 MB NumPy's one-thread copy is as fast)
        if copy and obj.nbytes >= _THREADED_COPY_BYTES:
            return copy_of(_wrap_numpy(obj))
        return _wrap_numpy(obj.copy() if copy else obj)
    out = _asarray(obj, dtype, device, copy)
    return out.requires_grad_() if requires_grad else out


def _asarray(obj, dtype, device, copy) -> Array:
    dtype = None if dtype is None else dt.as_dtype(dtype)
    if isinstance(obj, Array):
        dev = obj._device if device is None else as_device(device)
        needs_copy = (dtype is not None and dtype is not obj._dtype) or dev != obj._device
        if copy is False and needs_copy:
            raise ValueError("asarray: copy=False, but converting the dtype or device needs a copy")
        x = obj.to_device(dev) if dev != obj._device else obj
        if dtype is not None and dtype is not x._dtype:
            return astype_to(x, dtype)
        if copy and x is obj:
            return copy_of(obj)
        return x
    index = _dlpack_cuda_index(obj)
    if index is not None:  # GPU memory (a PyTorch or CuPy array): viewed where it is
        x = _import_cuda("asarray", obj, index, device, copy)
        if dtype is not None and x._dtype is not dtype:
            if copy is False:
                raise ValueError("asarray: copy=False, but converting the dtype needs a copy")
            x = astype_to(x, dtype)
        return x
    dev = as_device(device)
    if isinstance(obj, (bool, int, float, complex)) and not isinstance(obj, np.ndarray):
        d = dt.scalar_dtype(obj, None) if dtype is None else dtype
        if dtype is not None:
            check_scalar_fits("asarray", obj, d)
        return scalar_array(obj, d, dev, "asarray")
    a = _to_numpy(obj, dtype, copy)
    x = _wrap_numpy(a)
    if dtype is not None and x._dtype is not dtype:
        x = astype_to(x, dtype)
    if dev != CPU:
        x = x.to_device(dev)
    return x


def _host_values(obj):
    """``obj`` (nested lists/tuples) with every strided array in it replaced by its host copy."""
    if isinstance(obj, Array):
        return np.asarray(obj._to_host())
    if isinstance(obj, (list, tuple)):
        return [_host_values(o) for o in obj]
    return obj


def _to_numpy(obj, dtype: dt.DType | None, copy) -> np.ndarray:
    """Host data of ``obj`` as a NumPy array (zero-copy where the source allows)."""
    if isinstance(obj, np.ndarray):
        a = obj
    elif hasattr(obj, "__dlpack__") and not hasattr(obj, "__array__"):
        try:
            a = np.from_dlpack(obj)
        except (BufferError, TypeError) as e:
            raise BufferError(f"asarray: cannot import {type(obj).__name__} via DLPack: {e}") from e
    elif isinstance(obj, (str, bytes)):
        raise TypeError(f"asarray: cannot convert {type(obj).__name__} to an array")
    else:
        try:
            try:
                a = np.asarray(obj) if copy is not False else np.asarray(obj, copy=False)
            except TypeError:
                if not isinstance(obj, (list, tuple)):
                    raise
                # a sequence holding arrays of another device (as the official suite builds
                # expected values): their values, copied to the host
                a = np.asarray(_host_values(obj))
        except (ValueError, TypeError) as e:
            if copy is False:
                raise ValueError(
                    f"asarray: copy=False, but {type(obj).__name__} needs a copy"
                ) from e
            raise TypeError(f"asarray: cannot convert {type(obj).__name__} to an array: {e}") from e
        if isinstance(obj, (list, tuple)) and a.dtype.kind in "fO" and a.size and _all_ints(obj):
            # Python ints NumPy could not fit one integer type (2**63 + 1 with 0 goes to
            # float64, losing the low bits): exact in the requested integer dtype, or an error
            if dtype is None:
                raise OverflowError("asarray: Python int out of range for int64")
            if dtype.kind in dt.INTEGER_KINDS:
                try:
                    a = np.asarray(obj, dtype=dtype.numpy)
                except OverflowError as e:
                    raise OverflowError(f"asarray: {e}") from None
        elif isinstance(obj, (list, tuple)) and a.dtype.kind in "iu" and a.size:
            if dtype is not None and dtype.kind in dt.INTEGER_KINDS and dtype.numpy != a.dtype:
                info = np.iinfo(dtype.numpy)  # Python ints out of range: NumPy raises too
                if a.min() < info.min or a.max() > info.max:
                    raise OverflowError(
                        f"asarray: Python int out of range for {dtype.name} (values "
                        f"{a.min()}..{a.max()})"
                    )
        if isinstance(obj, (list, tuple)) and a.dtype.kind in "iu" and dtype is None:
            if a.dtype != np.int64:
                if a.dtype == np.uint64:
                    raise OverflowError("asarray: Python int out of range for int64")
                a = a.astype(np.int64)
    if a.dtype.kind == "O" and _all_ints(obj):
        raise OverflowError("asarray: Python int out of range for int64")
    if a.dtype.kind not in "biufc" or a.dtype.kind == "f" and a.dtype.itemsize == 2:
        raise TypeError(f"asarray: {type(obj).__name__} of dtype {a.dtype} has no strided dtype")
    if a.dtype.itemsize > 8 and a.dtype.kind == "f" or a.dtype.itemsize > 16:
        raise TypeError(f"asarray: dtype {a.dtype} has no strided equivalent")
    if copy:
        a = a.copy()
    return a


def _all_ints(obj) -> bool:
    if isinstance(obj, (list, tuple)):
        return all(_all_ints(o) for o in obj)
    return isinstance(obj, int)


# host memory brought in from NumPy (what asarray, from_dlpack and the buffer protocol produce):
# the cpu backend makes a buffer and a layout of it; kernel(ndarray) -> (buf, shape, strides,
# offset), strides and offset in elements
IMPORT_HOST = declare("import_host", "interchange")
# device memory shared through DLPack (PyTorch/CuPy/JAX arrays on a GPU): the device's backend
# views it without a copy; kernel(exporter) -> (buf, shape, strides, offset)
IMPORT_DEVICE = declare("import_device", "interchange")
_KDL_CUDA = (2, 13)  # kDLCUDA, kDLCUDAManaged


def _dlpack_cuda_index(obj) -> int | None:
    """The CUDA device index of a DLPack exporter's memory, None for host memory."""
    if isinstance(obj, (np.ndarray, Array)) or not hasattr(obj, "__dlpack_device__"):
        return None
    try:
        kind, index = obj.__dlpack_device__()
    except Exception:  # noqa: BLE001  (an exporter that cannot say is treated as host memory)
        return None
    return int(index) if int(kind) in _KDL_CUDA else None


def _import_cuda(op: str, obj, index: int, device, copy) -> Array:
    """An array on ``cuda:index`` sharing ``obj``'s GPU memory (copied when ``copy``), then moved
    to ``device`` when another one is asked for (a copy, refused when ``copy=False``)."""
    home = as_device(f"cuda:{index}")
    dev = as_device(device) if device is not None else home
    if dev != home and copy is False:
        raise BufferError(
            f"{op}: copy=False, but {type(obj).__name__}'s memory is on {home} and {dev} was asked"
        )
    try:
        kernel = IMPORT_DEVICE.kernel("cuda")
    except NotImplementedError:
        raise BufferError(
            f"{op}: {type(obj).__name__}'s memory is on a CUDA GPU, and strided's cuda device is "
            "not installed (pip install 'strided[cuda]')"
        ) from None
    try:
        buf, shape, strides, offset = kernel(obj)
    except (BufferError, TypeError, ValueError, RuntimeError) as e:
        raise BufferError(f"{op}: cannot import {type(obj).__name__}: {e}") from e
    x = Array._new(buf, shape, strides, offset, dt.from_numpy(buf.dtype), home)
    if copy:
        x = copy_of(x)
    return x.to_device(dev) if dev != home else x


#: NumPy dtypes asarray views at once (strided's, in native byte order)
_VIEWED_NUMPY = frozenset(d.numpy for d in dt.ALL_DTYPES)
#: asarray(copy=True) of a NumPy array at least this large copies with the copy kernel
_THREADED_COPY_BYTES = 1 << 21


def _wrap_numpy(a: np.ndarray) -> Array:
    """A strided view of NumPy array ``a`` (the backend copies only data it cannot view)."""
    if not a.dtype.isnative:
        a = a.astype(a.dtype.newbyteorder("="))
    d = dt.from_numpy(a.dtype)
    buf, shape, strides, offset = IMPORT_HOST.kernel("cpu")(a)
    return Array._new(buf, shape, strides, offset, d, CPU)


def meshgrid(*arrays: Array, indexing: str = "xy") -> tuple[Array, ...]:
    """Coordinate arrays from 1-D ``arrays`` (``xy``: Cartesian, ``ij``: matrix indexing)."""
    broadcast_to, reshape = _man.broadcast_to, _man.reshape
    if indexing not in ("xy", "ij"):
        raise ValueError(f"meshgrid: indexing must be 'xy' or 'ij', got {indexing!r}")
    arrays = [a for a in arrays]
    for a in arrays:
        if not isinstance(a, Array) or a.ndim != 1:
            raise ValueError("meshgrid: every input must be a 1-D strided array")
    if len({a._dtype for a in arrays}) > 1:
        raise TypeError("meshgrid: all arrays must have one dtype")
    shape = [a._shape[0] for a in arrays]
    if indexing == "xy" and len(arrays) > 1:
        shape[0], shape[1] = shape[1], shape[0]
    shape = tuple(shape)
    # untracked plain inputs: each broadcast view made at once (its reshape and broadcast_to
    # were ~2.4 us of each output's ~6; 2 x 64: 9.3 -> ~7 us)
    plain = all(_man._untracked_plain(a) for a in arrays)
    out = []
    for i, a in enumerate(arrays):
        pos = (1 - i if i < 2 else i) if indexing == "xy" and len(arrays) > 1 else i
        if plain:
            strides = [0] * len(arrays)
            strides[pos] = a._strides[0]
            view = a._view(shape, tuple(strides), a._offset)
        else:
            view_shape = [1] * len(arrays)
            view_shape[pos] = a._shape[0]
            view = broadcast_to(reshape(a, tuple(view_shape)), shape)
        # copies, as NumPy does: a broadcast view would write several elements at once
        out.append(copy_of(view))
    return tuple(out)


#: (n, m, k, lower, device) -> the bool mask of the kept positions, for small triangles (the
#: mask is never handed out, so it can be reused: a 64x64 tril is then one where)
_TRIANGLE_MASKS: dict = {}


def _triangle_rule(x: Array, /, *, k: int, lower: bool) -> Plan:
    """The triangle (on and below the ``k``-th diagonal with ``lower``, else on and above it)
    of the last two dimensions of ``x``; ``k`` clamped to [-rows, columns] by the caller."""
    return Plan(x._device, (x._shape, x._dtype), (x,), None, {"k": k, "lower": lower})


#: tril/triu in one pass (each row copied up to or from its cut, the rest zeros); its own
#: gradient is the same triangle of the output's gradient.  A device without the kernel (cuda)
#: takes the composition: where with a remembered mask
TRIANGLE = declare("triangle", "triangle", rule=_triangle_rule)
TRIANGLE.memoize(
    lambda x, /, *, k, lower: (x._dtype, x._shape, k, lower) if x.__class__ is Array else None
)


def _triangle(op: str, x: Array, k: int, lower: bool) -> Array:
    if not isinstance(x, Array) or x.ndim < 2:
        raise ValueError(f"{op}: needs an array with at least 2 dimensions")
    n, m = x._shape[-2:]
    # k clamped to [-n, m]: every answer the same, and any int in int64's range
    k = max(min(operator.index(k), m), -n)
    if x._device.type in TRIANGLE.kernels:
        return TRIANGLE.call(x, k=k, lower=lower)
    key = (n, m, k, lower, x._device)
    keep = _TRIANGLE_MASKS.get(key)
    if keep is None:
        # kept where column - row <= k (lower) or >= k (upper): the columns against rows + k in
        # one broadcast compare (no (n, m) int64 matrix of the differences)
        rows = _ew.add(arange(n, device=x._device), k)[:, None]
        cols = arange(m, device=x._device)[None, :]
        keep = _ew.less_equal(cols, rows) if lower else _ew.greater_equal(cols, rows)
        if n * m <= 1 << 16:
            if len(_TRIANGLE_MASKS) >= 64:
                _TRIANGLE_MASKS.clear()
            _TRIANGLE_MASKS[key] = keep
    return _man.where(keep, x, False if x._dtype is dt.bool else 0)


def tril(x: Array, /, *, k: int = 0) -> Array:
    """The lower triangle of the last two dimensions (on and below the ``k``-th diagonal)."""
    return _triangle("tril", x, k, lower=True)


def triu(x: Array, /, *, k: int = 0) -> Array:
    """The upper triangle of the last two dimensions (on and above the ``k``-th diagonal)."""
    return _triangle("triu", x, k, lower=False)


def from_dlpack(x, /, *, device=None, copy: bool | None = None) -> Array:
    """An array sharing memory with ``x`` through DLPack (``copy=True`` copies, ``False`` never)."""
    if not hasattr(x, "__dlpack__"):
        raise TypeError(f"from_dlpack: {type(x).__name__} does not support DLPack (__dlpack__)")
    if isinstance(x, Array):
        return asarray(x, device=device, copy=copy)
    index = _dlpack_cuda_index(x)
    if index is not None:
        return _import_cuda("from_dlpack", x, index, device, copy)
    dev = as_device(device) if device is not None else CPU
    kwargs = {} if copy is None else {"copy": copy}
    if dev.type == "cpu" or dev.type == "meta":
        kwargs["device"] = "cpu"
    try:
        a = np.from_dlpack(x, **kwargs)
    except (BufferError, TypeError, ValueError) as e:
        raise BufferError(f"from_dlpack: cannot import {type(x).__name__}: {e}") from e
    out = _wrap_numpy(a) if copy is not False else _wrap_numpy_no_copy(a)
    return out.to_device(dev) if dev != CPU else out


def _wrap_numpy_no_copy(a: np.ndarray) -> Array:
    if not a.flags.writeable:
        raise BufferError("from_dlpack: copy=False, but the exporter's memory is read-only")
    return _wrap_numpy(a)
