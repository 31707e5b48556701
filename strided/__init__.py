"""strided: a Python array API namespace with its own strided memory model.

``import strided as xp`` gives the standard's namespace.  Arrays are a 1-D buffer plus shape,
strides (in elements) and offset; every operation is dispatched on (op, device) to numba kernels
(``cpu``) or to the shape/dtype rules alone (``meta``).
"""

from . import dispatch
from ._array import Array
from ._device import Device, default_device, get_default_device
from ._dtypes import (
    DType,
    bool,
    complex64,
    complex128,
    float32,
    float64,
    int8,
    int16,
    int32,
    int64,
    uint8,
    uint16,
    uint32,
    uint64,
)
from ._info import __array_namespace_info__
from ._ops.creation import (
    arange,
    asarray,
    empty,
    empty_like,
    eye,
    from_dlpack,
    full,
    full_like,
    linspace,
    meshgrid,
    ones,
    ones_like,
    tril,
    triu,
    zeros,
    zeros_like,
)
from ._ops.dtype_functions import can_cast, finfo, iinfo, isdtype, result_type
from ._ops.elementwise import (
    abs,
    acos,
    acosh,
    add,
    asin,
    asinh,
    atan,
    atan2,
    atanh,
    bitwise_and,
    bitwise_invert,
    bitwise_left_shift,
    bitwise_or,
    bitwise_right_shift,
    bitwise_xor,
    ceil,
    clip,
    conj,
    copysign,
    cos,
    cosh,
    divide,
    equal,
    exp,
    expm1,
    floor,
    floor_divide,
    greater,
    greater_equal,
    hypot,
    imag,
    isfinite,
    isinf,
    isnan,
    less,
    less_equal,
    log,
    log1p,
    log2,
    log10,
    logaddexp,
    logical_and,
    logical_not,
    logical_or,
    logical_xor,
    maximum,
    minimum,
    multiply,
    negative,
    nextafter,
    not_equal,
    positive,
    pow,
    real,
    reciprocal,
    remainder,
    round,
    sign,
    signbit,
    sin,
    sinh,
    sqrt,
    square,
    subtract,
    tan,
    tanh,
    trunc,
)
from ._ops.linalg import matmul, tensordot, vecdot
from ._ops.manipulation import (
    astype,
    broadcast_arrays,
    broadcast_shapes,
    broadcast_to,
    concat,
    diff,
    expand_dims,
    flip,
    matrix_transpose,
    moveaxis,
    permute_dims,
    repeat,
    reshape,
    roll,
    squeeze,
    stack,
    tile,
    unstack,
    where,
)
from ._ops.reduction import (
    all,
    any,
    count_nonzero,
    cumulative_prod,
    cumulative_sum,
    max,
    mean,
    min,
    prod,
    std,
    sum,
    var,
)
from ._ops.searching import (
    argmax,
    argmin,
    argsort,
    nonzero,
    searchsorted,
    sort,
    take,
    take_along_axis,
)
from ._ops.sets import isin, unique_all, unique_counts, unique_inverse, unique_values
from .backends import cpu as _cpu
from .backends import meta as _meta

# isort: split
from . import linalg  # the extension namespace (declares its primitives before registration)

__array_api_version__ = "2025.12"

e = 2.718281828459045
pi = 3.141592653589793
inf = float("inf")
nan = float("nan")
newaxis = None

from . import fft  # noqa: E402  (an extension namespace: needs the core ops loaded first)

_cpu.register_all()
_meta.register_all()
del _cpu, _meta

from . import autograd  # noqa: E402  (declares the backward rules; needs the whole namespace)

# errors from inside a composition (std calls var, clip calls maximum) name the function called;
# the elementwise primitives name themselves already and stay unwrapped (their per-call cost)
from ._errors import name_errors as _name_errors  # noqa: E402
from ._ops.elementwise import ELEMENTWISE as _ELEMENTWISE  # noqa: E402

_name_errors(
    globals(),
    [
        n
        for n, f in list(globals().items())
        if not n.startswith("_")
        and n not in _ELEMENTWISE
        and callable(f)
        and getattr(f, "__module__", "").startswith("strided._ops")
    ],
)
_shared = [n for n in linalg.__all__ if n in globals()]  # matmul, ...: one function, one wrapper
_name_errors(
    linalg.__dict__, [n for n in linalg.__all__ if n not in _shared + ["LinAlgError"]], "linalg."
)
for _n in _shared:
    setattr(linalg, _n, globals()[_n])
_name_errors(fft.__dict__, fft.__all__, "fft.")
del _name_errors, _ELEMENTWISE, _shared, _n
