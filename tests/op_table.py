"""The op table: every operation of the namespace with its NumPy reference and sample domain.

Tests are generated from this table (values against NumPy for every accepted dtype, every memory
layout, meta agreement, rejected dtypes); ``test_completeness.py`` fails when a declared primitive
has no entry here or no kernel on a device.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

import strided as xp
from strided import _dtypes as sdt
from strided._ops.elementwise import ELEMENTWISE


@dataclass
class OpInfo:
    name: str
    ref: Callable  # NumPy reference on NumPy arrays
    arity: int = 1
    accepts: str = "any"
    result: str = "same"
    domain: tuple[float, float] = (-5.0, 5.0)  # real values drawn from this interval
    int_domain: tuple[int, int] = (-20, 20)
    nonzero_rhs: bool = False  # integer divisors must be nonzero (results are not comparable)
    rtol: dict = field(default_factory=dict)

    @property
    def fn(self):
        return getattr(xp, self.name)

    def accepted(self) -> list[sdt.DType]:
        kinds = sdt.CATEGORIES[self.accepts]
        return [d for d in sdt.ALL_DTYPES if d.kind in kinds]

    def rejected(self) -> list[sdt.DType]:
        kinds = sdt.CATEGORIES[self.accepts]
        return [d for d in sdt.ALL_DTYPES if d.kind not in kinds]


_NUMPY_NAME = {
    "acos": "arccos",
    "asin": "arcsin",
    "atan": "arctan",
    "atan2": "arctan2",
    "acosh": "arccosh",
    "asinh": "arcsinh",
    "atanh": "arctanh",
    "pow": "power",
    "bitwise_invert": "invert",
    "bitwise_left_shift": "left_shift",
    "bitwise_right_shift": "right_shift",
}

_DOMAINS = {
    "log": (0.1, 10.0),
    "log1p": (-0.5, 10.0),
    "log2": (0.1, 10.0),
    "log10": (0.1, 10.0),
    "sqrt": (0.0, 10.0),
    "asin": (-0.99, 0.99),
    "acos": (-0.99, 0.99),
    "atanh": (-0.99, 0.99),
    "acosh": (1.01, 10.0),
    "reciprocal": (0.5, 5.0),
    "exp": (-10.0, 10.0),
    "pow": (0.1, 3.0),
    "tan": (-1.4, 1.4),
}
_INT_DOMAINS = {
    "pow": (0, 4),
    "bitwise_left_shift": (0, 7),
    "bitwise_right_shift": (0, 7),
    "square": (-10, 10),
    "multiply": (-10, 10),
    "exp": (-5, 5),
    "expm1": (-5, 5),
    "log": (1, 50),
    "log1p": (0, 50),
    "log2": (1, 50),
    "log10": (1, 50),
    "sqrt": (0, 50),
    "acosh": (1, 50),
    "asin": (-1, 1),
    "acos": (-1, 1),
    "atanh": (0, 0),
    "reciprocal": (1, 9),
    "sinh": (-5, 5),
    "cosh": (-5, 5),
}

ELEMENTWISE_OPS: list[OpInfo] = [
    OpInfo(
        name,
        getattr(np, _NUMPY_NAME.get(name, name)),
        arity=arity,
        accepts=accepts,
        result=result,
        domain=_DOMAINS.get(name, (-5.0, 5.0)),
        int_domain=_INT_DOMAINS.get(name, (-20, 20)),
        nonzero_rhs=name in ("floor_divide", "remainder", "divide"),
    )
    for name, (arity, accepts, result, _) in ELEMENTWISE.items()
]

# ops that are not elementwise: name -> the test module that covers them (checked for completeness)
OTHER_OPS = {
    "empty": "test_creation",
    "arange": "test_creation",
    "linspace": "test_creation",
    "fill": "test_creation",
    "full": "test_creation",
    "copy": "test_manipulation",
    "where": "test_manipulation",
    # view primitives: rules only (shape, strides, offset), no kernel on any device
    "reshape": "test_manipulation",
    "permute_dims": "test_manipulation",
    "expand_dims": "test_manipulation",
    "squeeze": "test_manipulation",
    "broadcast_to": "test_manipulation",
    "flip": "test_manipulation",
    "getitem": "test_array_object",
    "as_strided": "test_autograd",
    "to_device": "test_devices",
    "export": "test_interchange",
    "import_host": "test_creation",
    "diagonal": "test_linalg",
    # composite primitives: compositions recorded as one unit with their own backward rule
    "concat": "test_manipulation",
    "getitem_arrays": "test_searching",
    "index_add": "test_autograd",
    "euclidean_norm": "test_linalg",
    "cholesky": "test_linalg",
    "inv": "test_linalg",
    "det": "test_linalg",
    "slogdet": "test_linalg",
    "solve": "test_linalg",
    "eigh": "test_linalg",
    "eigvalsh": "test_linalg",
    "eig": "test_linalg",
    "eigvals": "test_linalg",
    "svd": "test_linalg",
    "svdvals": "test_linalg",
    "qr": "test_linalg",
    "sum": "test_reductions",
    "prod": "test_reductions",
    "max": "test_reductions",
    "min": "test_reductions",
    "any": "test_reductions",
    "all": "test_reductions",
    "cumulative_sum": "test_reductions",
    "cumulative_prod": "test_reductions",
    "matmul": "test_matmul",
    "argmax": "test_searching",
    "argmin": "test_searching",
    "nonzero": "test_searching",
    "searchsorted": "test_searching",
    "sort": "test_searching",
    "argsort": "test_searching",
    "take": "test_searching",
    "take_along_axis": "test_searching",
    "gather": "test_searching",
    "normalize_index": "test_searching",
    "scatter": "test_searching",
    "scatter_add": "test_autograd",  # index_add, the backward of gather
    "fft_c2c": "test_fft",
    "fft_r2c": "test_fft",
    "fft_c2r": "test_fft",
    # the linalg extension's LAPACK-backed primitives (the rest of strided.linalg is compositions)
    "linalg_cholesky": "test_linalg",
    "linalg_inv": "test_linalg",
    "linalg_solve": "test_linalg",
    "linalg_det": "test_linalg",
    "linalg_slogdet": "test_linalg",
    "linalg_eigh": "test_linalg",
    "linalg_eig": "test_linalg",
    "linalg_svd": "test_linalg",
    "linalg_qr": "test_linalg",
}

REDUCTIONS = {
    "sum": np.sum,
    "prod": np.prod,
    "max": np.max,
    "min": np.min,
    "any": np.any,
    "all": np.all,
}


def expected_dtype(op: OpInfo, d: sdt.DType) -> tuple[sdt.DType, sdt.DType]:
    """(compute dtype, result dtype) for an input of dtype ``d``, from the standard's rules."""
    compute = d
    if op.result == "float" and d.kind not in sdt.FLOAT_KINDS:
        compute = sdt.float64
    out = {
        "same": compute,
        "bool": sdt.bool,
        "real": sdt.real_of(compute),
        "float": compute,
    }[op.result]
    return compute, out
