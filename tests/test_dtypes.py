"""Dtype objects, the promotion table, result_type/can_cast/isdtype/finfo/iinfo."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import strided as xp
from strided import _dtypes as sdt

NAMES = [
    "bool",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "float32",
    "float64",
    "complex64",
    "complex128",
]


def test_thirteen_dtype_objects():
    dtypes = [getattr(xp, n) for n in NAMES]
    assert len(set(map(id, dtypes))) == 13
    for n, d in zip(NAMES, dtypes):
        assert d == d and d.name == n and np.dtype(n) == d.numpy
        assert d != getattr(xp, "float64" if n != "float64" else "float32")


def _family(d):
    return "b" if d.kind == sdt.BOOL else "i" if d.kind in sdt.INTEGER_KINDS else "f"


@pytest.mark.parametrize(
    "a,b", list(itertools.product(sdt.ALL_DTYPES, repeat=2)), ids=lambda d: d.name
)
def test_promotion_table_matches_numpy_within_kinds(a, b):
    # inside a family, the standard's table is NumPy's; uint64 with signed has no promotion
    if _family(a) != _family(b):
        return
    if {a.kind, b.kind} == {sdt.SIGNED, sdt.UNSIGNED} and sdt.uint64 in (a, b):
        with pytest.raises(TypeError):
            xp.result_type(a, b)
        return
    assert xp.result_type(a, b).numpy == np.promote_types(a.numpy, b.numpy)
    assert xp.can_cast(a, xp.result_type(a, b))


def test_mixed_kind_promotion_keeps_the_higher_kind():
    assert xp.result_type(xp.int64, xp.float32) is xp.float32
    assert xp.result_type(xp.bool, xp.int8) is xp.int8
    assert xp.result_type(xp.float64, xp.complex64) is xp.complex128
    assert not xp.can_cast(xp.int64, xp.float32)


def test_result_type_with_scalars():
    assert xp.result_type(xp.float32, 1.0) is xp.float32
    assert xp.result_type(xp.int8, 1) is xp.int8
    assert xp.result_type(xp.float32, 1j) is xp.complex64
    assert xp.result_type(xp.zeros(2, dtype=xp.uint8), xp.int8) is xp.int16


def test_isdtype():
    assert xp.isdtype(xp.int8, "signed integer")
    assert xp.isdtype(xp.uint8, "integral") and not xp.isdtype(xp.uint8, "signed integer")
    assert xp.isdtype(xp.complex64, ("real floating", "complex floating"))
    assert xp.isdtype(xp.float32, xp.float32) and not xp.isdtype(xp.float32, xp.float64)
    assert xp.isdtype(xp.float32, "numeric") and not xp.isdtype(xp.bool, "numeric")
    with pytest.raises(ValueError, match="unknown kind"):
        xp.isdtype(xp.int8, "integer")


@pytest.mark.parametrize(
    "d", [xp.float32, xp.float64, xp.complex64, xp.complex128], ids=lambda d: d.name
)
def test_finfo(d):
    f, ref = xp.finfo(d), np.finfo(d.numpy)
    assert (f.bits, f.eps, f.max, f.min, f.smallest_normal) == (
        ref.bits,
        float(ref.eps),
        float(ref.max),
        float(ref.min),
        float(ref.smallest_normal),
    )
    assert f.dtype is sdt.real_of(d)


@pytest.mark.parametrize(
    "d", [d for d in sdt.ALL_DTYPES if d.kind in sdt.INTEGER_KINDS], ids=lambda d: d.name
)
def test_iinfo(d):
    i, ref = xp.iinfo(d), np.iinfo(d.numpy)
    assert (i.bits, i.min, i.max, i.dtype) == (ref.bits, ref.min, ref.max, d)


def test_info_rejects_wrong_kind():
    with pytest.raises(TypeError, match="finfo"):
        xp.finfo(xp.int8)
    with pytest.raises(TypeError, match="iinfo"):
        xp.iinfo(xp.float32)
