"""The standard's namespace: every function, dtype, constant and extension of ``strided``.

``strided/__init__.py`` re-exports it and then installs the backends and autograd; the layers above
the operations (autograd, nn) use this module when they need the namespace, so that nothing imports
the package from below.
"""

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
    repeat,
    searchsorted,
    sort,
    take,
    take_along_axis,
)
from ._ops.sets import isin, unique_all, unique_counts, unique_inverse, unique_values

# isort: split
from . import fft, linalg  # the extension namespaces

__array_api_version__ = "2025.12"

e = 2.718281828459045
pi = 3.141592653589793
inf = float("inf")
nan = float("nan")
newaxis = None

__all__ = [n for n in dir() if not n.startswith("_")] + [
    "__array_api_version__",
    "__array_namespace_info__",
]
