"""Every accepted dtype for the functions outside the elementwise table: values against NumPy on a
non-contiguous (transposed) input, result dtype, meta agreement, and rejected dtypes."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pytest

import strided as xp
from strided import _dtypes as sdt

from .strategies import in_layout, values


@dataclass
class Case:
    name: str
    fn: Callable  # (namespace, array) -> array or tuple of arrays; the namespace is xp or np
    accepts: str


def _np_unique(v):
    return np.unique(v.reshape(-1))


CASES = [
    Case("argmax", lambda m, a: m.argmax(a, axis=0), "real numeric"),
    Case("argmin", lambda m, a: m.argmin(a, axis=1), "real numeric"),
    Case("sort", lambda m, a: m.sort(a, axis=-1), "any"),
    Case(
        "argsort",
        lambda m, a: m.argsort(a, axis=0) if m is xp else np.argsort(a, axis=0, kind="stable"),
        "any",
    ),
    Case("nonzero", lambda m, a: m.nonzero(a), "any"),
    Case("take", lambda m, a: m.take(a, m.asarray([2, 0, -1], device=a.device), axis=1), "any"),
    Case(
        "take_along_axis",
        lambda m, a: m.take_along_axis(a, m.asarray([[1, 0, 2]], device=a.device), axis=0),
        "any",
    ),
    Case(
        "cumulative_sum",
        lambda m, a: m.cumulative_sum(a, axis=1) if m is xp else np.cumsum(a, axis=1),
        "numeric",
    ),
    Case("flip", lambda m, a: m.flip(a, axis=0), "any"),
    Case("roll", lambda m, a: m.roll(a, 2, axis=1), "any"),
    Case("tile", lambda m, a: m.tile(a, (2, 1)), "any"),
    Case("repeat", lambda m, a: m.repeat(a, 2, axis=0), "any"),
    Case("diff", lambda m, a: m.diff(a, axis=1), "any"),  # bool: not_equal, as NumPy
    Case(
        "unique_values",
        lambda m, a: m.unique_values(a) if m is xp else _np_unique(a),
        "any",
    ),
    Case("count_nonzero", lambda m, a: m.count_nonzero(a, axis=0), "any"),
    Case("clip", lambda m, a: m.clip(a, a[0], a[1]), "real numeric"),
    Case("tril", lambda m, a: m.tril(a, k=-1), "any"),
    Case("concat", lambda m, a: m.concat([a, a], axis=1), "any"),
    Case(
        "where",
        lambda m, a: m.where(
            m.asarray([True, False, True, False], device=a.device)[:, None], a, a[0]
        ),
        "any",
    ),
    Case("tensordot", lambda m, a: m.tensordot(a, a, axes=([0], [0])), "numeric"),
    Case(
        "vecdot",
        lambda m, a: m.vecdot(a, a) if m is xp else np.sum(np.conj(a) * a, axis=-1),
        "numeric",
    ),
    Case("var", lambda m, a: m.var(a, axis=0), "floating"),
    Case(
        "isin",
        lambda m, a: m.isin(a, a[0]) if m is xp else np.isin(a, a[0]),
        "numeric",
    ),
]


def _sweep():
    for case in CASES:
        kinds = sdt.CATEGORIES[case.accepts]
        for d in sdt.ALL_DTYPES:
            yield pytest.param(case, d, d.kind in kinds, id=f"{case.name}-{d.name}")


def _as_tuple(r):
    return tuple(r) if isinstance(r, tuple) else (r,)


@pytest.mark.parametrize("case,d,accepted", list(_sweep()))
def test_every_dtype(case: Case, d: sdt.DType, accepted: bool):
    rng = np.random.default_rng(7)
    v = values(rng, (4, 3), d, (-2.0, 2.0), (0, 3))
    if d.kind in sdt.FLOAT_KINDS:
        v = np.round(v)  # ties make order-dependent functions meaningful
    nv, a = in_layout(v, "transposed")
    if not accepted:
        with pytest.raises(TypeError):
            case.fn(xp, a)
        return
    got = _as_tuple(case.fn(xp, a))
    with np.errstate(all="ignore"):
        want = _as_tuple(case.fn(np, nv))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        w = np.asarray(w)
        assert g.shape == w.shape, (case.name, d.name)
        if w.dtype.kind in "iu":
            assert g.dtype.kind in sdt.INTEGER_KINDS
        else:
            assert g.dtype.numpy == w.dtype, (case.name, d.name, g.dtype, w.dtype)
        np.testing.assert_allclose(np.asarray(g), w, rtol=1e-6, atol=1e-6)
    if case.name in ("nonzero", "unique_values"):
        return  # data-dependent: refused on meta (tested in test_searching / test_sets)
    meta = _as_tuple(case.fn(xp, xp.empty(a.shape, dtype=d, device="meta")))
    for m, g in zip(meta, got):
        assert (m.shape, m.dtype, m.device) == (g.shape, g.dtype, xp.Device("meta"))
