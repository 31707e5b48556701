"""Elementwise ops from the op table: values vs NumPy for every accepted dtype (every memory
layout and broadcast for float32/64, complex64/128, int64, uint8 and bool), meta agreement,
rejected dtypes, Python scalar operands."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import strided as xp
from strided import _dtypes as sdt

from .op_table import ELEMENTWISE_OPS, OpInfo, expected_dtype
from .strategies import LAYOUTS, in_layout, seeds, shapes, values

EXACT = {"floor", "ceil", "trunc", "round", "nextafter", "sign", "copysign", "maximum", "minimum"}


def _tolerance(op: OpInfo, d: sdt.DType) -> dict:
    # the sign of a complex number is a rounded quotient z / |z| (complex64 in double precision,
    # rounded once; NumPy divides in float32)
    rounded = op.name == "sign" and d in (sdt.complex64, sdt.complex128)
    if (op.name in EXACT and not rounded) or d.kind not in sdt.FLOAT_KINDS:
        return {"rtol": 0, "atol": 0}
    if d in (sdt.float32, sdt.complex64):
        return {"rtol": 2e-5, "atol": 1e-6}
    return {"rtol": 1e-12, "atol": 1e-13}


def _check(op: OpInfo, d: sdt.DType, np_inputs, got: xp.Array) -> None:
    compute, out = expected_dtype(op, d)
    assert got.dtype is out, f"{op.name}({d.name}) returned {got.dtype}, expected {out}"
    with np.errstate(all="ignore"):
        want = op.ref(*[v.astype(compute.numpy) for v in np_inputs])
    want = np.asarray(want).astype(out.numpy)
    g = np.asarray(got)
    assert g.shape == want.shape
    tol = _tolerance(op, compute)
    if tol["rtol"] == 0:
        np.testing.assert_array_equal(g, want, err_msg=f"{op.name} on {d.name}")
    else:
        np.testing.assert_allclose(g, want, equal_nan=True, err_msg=f"{op.name} on {d.name}", **tol)


def _cases():
    for op in ELEMENTWISE_OPS:
        for d in op.accepted():
            yield pytest.param(op, d, id=f"{op.name}-{d.name}")


def _broadcast_partner(draw, shape):
    """A shape that broadcasts with ``shape``: some dims set to 1, maybe leading dims dropped."""
    ones = draw(st.lists(st.booleans(), min_size=len(shape), max_size=len(shape)))
    partner = tuple(1 if o else s for s, o in zip(shape, ones))
    drop = draw(st.integers(0, len(shape)))
    return partner[drop:]


#: the dtypes drawn in every layout and with broadcast partners: each kind and width of loop
#: arithmetic (both float widths, both complex ones, a signed and an unsigned integer, bool).  The
#: other integer dtypes take dense operands of one shape: their semantics (wrapping, division,
#: shifts, comparisons) are in the per-element functions every loop calls alike, and each layout
#: of theirs would be one more numba compile per op (~70 CPU-seconds of a cold ``make test``)
LAYOUT_DTYPES = {sdt.float32, sdt.float64, sdt.complex64, sdt.complex128, sdt.int64, sdt.uint8,
                 sdt.bool}  # fmt: skip


@pytest.mark.parametrize("op,d", list(_cases()))
@settings(max_examples=8, deadline=None)
@given(data=st.data(), rng=seeds())
def test_values_match_numpy(op: OpInfo, d: sdt.DType, data, rng):
    shape = data.draw(shapes, label="shape")
    shape_list = [shape]
    layouts = LAYOUTS if d in LAYOUT_DTYPES else ("contiguous",)
    if op.arity == 2:
        partner = _broadcast_partner(data.draw, shape) if d in LAYOUT_DTYPES else shape
        shape_list.append(partner)
        if data.draw(st.booleans(), label="swap"):
            shape_list.reverse()
    np_inputs, arrays = [], []
    for i, s in enumerate(shape_list):
        v = values(rng, s, d, op.domain, op.int_domain)
        if i == 1 and op.nonzero_rhs and d.kind in sdt.INTEGER_KINDS:
            v = np.where(v == 0, np.ones_like(v), v)
        layout = data.draw(st.sampled_from(layouts), label=f"layout{i}")
        nv, a = in_layout(v, layout)
        np_inputs.append(nv)
        arrays.append(a)
    got = op.fn(*arrays)
    _check(op, d, np_inputs, got)
    # meta runs the same rules on the same shapes: it must agree with the real result
    meta = op.fn(*[xp.empty(a.shape, dtype=a.dtype, device="meta") for a in arrays])
    assert meta.device == xp.Device("meta")
    assert (meta.shape, meta.dtype) == (got.shape, got.dtype)


def _rejected_cases():
    for op in ELEMENTWISE_OPS:
        for d in op.rejected():
            yield pytest.param(op, d, id=f"{op.name}-{d.name}")


@pytest.mark.parametrize("op,d", list(_rejected_cases()))
@pytest.mark.parametrize("device", ["cpu", "meta"])
def test_rejected_dtypes_raise_type_error(op: OpInfo, d: sdt.DType, device):
    args = [xp.zeros((2,), dtype=d, device=device)] * op.arity
    with pytest.raises(TypeError, match=op.name):
        op.fn(*args)


def test_broadcast_mismatch_names_op_and_shapes():
    with pytest.raises(ValueError, match=r"add.*\(2, 3\).*\(4,\)"):
        xp.add(xp.zeros((2, 3)), xp.zeros((4,)))
    with pytest.raises(ValueError, match="multiply"):
        xp.multiply(xp.zeros((2, 3), device="meta"), xp.zeros((4,), device="meta"))


@pytest.mark.parametrize(
    "d,scalar",
    [
        (sdt.float32, 2.5),
        (sdt.float64, -3),
        (sdt.int16, 7),
        (sdt.uint8, 3),
        (sdt.complex64, 1.5 + 2j),
        (sdt.bool, True),
    ],
)
def test_python_scalars_take_the_array_dtype(d, scalar):
    rng = np.random.default_rng(1)
    a_np = values(rng, (3, 4), d)
    a = xp.asarray(a_np)
    ops = [xp.equal, xp.not_equal] if d is sdt.bool else [xp.add, xp.multiply, xp.subtract]
    for fn in ops:
        for got, want in (
            (fn(a, scalar), getattr(np, fn.__name__)(a_np, np.asarray(scalar, dtype=d.numpy))),
            (fn(scalar, a), getattr(np, fn.__name__)(np.asarray(scalar, dtype=d.numpy), a_np)),
        ):
            assert got.dtype is (sdt.bool if fn in (xp.equal, xp.not_equal) else d)
            np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6)


def test_python_int_out_of_range_raises():
    with pytest.raises(OverflowError, match="add.*300.*uint8"):
        xp.add(xp.zeros(3, dtype=xp.uint8), 300)


def test_promotion_across_dtypes():
    a = xp.asarray(np.arange(4, dtype=np.int8))
    b = xp.asarray(np.arange(4, dtype=np.uint8))
    c = a + b
    assert c.dtype is xp.int16
    np.testing.assert_array_equal(np.asarray(c), np.arange(4) * 2)
    f = xp.asarray(np.ones(4, dtype=np.float32)) * xp.asarray(np.ones(4, dtype=np.float64))
    assert f.dtype is xp.float64
    with pytest.raises(TypeError, match="uint64"):
        xp.add(xp.zeros(2, dtype=xp.uint64), xp.zeros(2, dtype=xp.int64))


def test_float_remainder_signed_zero_and_special_values():
    x_np = np.array([0.0, -0.0, 5.5, -5.5, np.inf, 3.0, np.nan, 7.0])
    y_np = np.array([-3.0, -3.0, -2.0, 2.0, 2.0, np.inf, 1.0, 0.0])
    got = np.asarray(xp.remainder(xp.asarray(x_np), xp.asarray(y_np)))
    with np.errstate(all="ignore"):
        want = np.remainder(x_np, y_np)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want))


@pytest.mark.parametrize("d", [sdt.complex64, sdt.complex128], ids=lambda d: d.name)
def test_complex_edge_values_match_numpy(d):
    # division by a complex zero gives inf/nan parts (never a ZeroDivisionError); tanh stays
    # finite for large real parts; sign(0) is 0
    z_np = np.array([0, 1 + 2j, -3j, 46 + 1j, -30 - 0.5j, 0.5 + 0.25j], dtype=d.numpy)
    z = xp.asarray(z_np)
    zero = xp.zeros(z.shape, dtype=d)
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(np.asarray(z / zero), z_np / np.zeros_like(z_np))
        np.testing.assert_array_equal(np.asarray(xp.reciprocal(zero)), 1 / np.zeros_like(z_np))
    tol = 1e-5 if d is sdt.complex64 else 1e-12
    np.testing.assert_allclose(np.asarray(xp.tanh(z)), np.tanh(z_np), rtol=tol, atol=tol)
    np.testing.assert_allclose(np.asarray(z / (z + 1)), z_np / (z_np + 1), rtol=tol)
    np.testing.assert_array_equal(np.asarray(xp.sign(zero)), np.zeros_like(z_np))


def test_integer_semantics_match_numpy():
    a_np = np.array([-7, -3, 0, 3, 7, 127], dtype=np.int8)
    b_np = np.array([2, -2, 5, -4, 3, 2], dtype=np.int8)
    a, b = xp.asarray(a_np), xp.asarray(b_np)
    np.testing.assert_array_equal(np.asarray(a // b), a_np // b_np)
    np.testing.assert_array_equal(np.asarray(a % b), a_np % b_np)
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(np.asarray(a + a), a_np + a_np)  # wraps around
    np.testing.assert_array_equal(np.asarray(a // xp.zeros(6, dtype=xp.int8)), np.zeros(6))


_SPECIAL = [0.0, -0.0, 1.5, -2.0, np.inf, -np.inf, np.nan]


@pytest.mark.parametrize(
    "name,ref",
    [
        ("cosh", np.cosh),
        ("sinh", np.sinh),
        ("tanh", np.tanh),
        ("acosh", np.arccosh),
        ("asinh", np.arcsinh),
        ("atanh", np.arctanh),
        ("acos", np.arccos),
        ("expm1", lambda z: np.exp(z) - 1),
    ],
)
def test_complex_special_values_follow_c99(name, ref):
    # NumPy implements C99 Annex G, which is what the standard's special cases list
    z = np.array([complex(a, b) for a in _SPECIAL for b in _SPECIAL], dtype=np.complex128)
    got = np.asarray(getattr(xp, name)(xp.asarray(z)))
    with np.errstate(all="ignore"):
        want = ref(z)
    finite = np.isfinite(want.real) & np.isfinite(want.imag) & np.isfinite(z)
    for part in ("real", "imag"):
        g, w = getattr(got, part), getattr(want, part)
        np.testing.assert_array_equal(np.isnan(g), np.isnan(w), err_msg=f"{name} NaN {part}")
        np.testing.assert_array_equal(np.isinf(g), np.isinf(w), err_msg=f"{name} inf {part}")
        np.testing.assert_allclose(g[finite], w[finite], rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_imag_of_real_non_finite_values_is_zero(dtype):
    x = np.array([np.nan, np.inf, -np.inf, -0.0, 2.5], dtype=dtype)
    got = xp.imag(xp.asarray(x))
    np.testing.assert_array_equal(np.asarray(got), np.imag(x))
    assert got.dtype == getattr(xp, dtype)
    np.testing.assert_array_equal(np.asarray(xp.real(xp.asarray(x))), np.real(x))


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_real_part_rows_of_every_length_and_offset(dtype):
    """real's unit-stride rows read the real parts through a complex view shifted by half an
    element: exact NumPy values (NaN and signed zeros included) for rows of 0 to 9 elements at
    every offset, reversed and 2-D rows, and rows long enough for the threaded loop."""
    rng = np.random.default_rng(4)
    z = (rng.standard_normal(80) + 1j * rng.standard_normal(80)).astype(dtype)
    z[3] = complex(np.nan, 1.0)
    z[5] = complex(-0.0, np.inf)
    for start in range(4):
        for n in range(10):
            part = z[start : start + n]
            got = np.asarray(xp.real(xp.asarray(z)[start : start + n]))
            np.testing.assert_array_equal(got, part.real)
            assert np.signbit(got).tolist() == np.signbit(part.real).tolist()
    for v in (z[::-1], z.reshape(8, 10)[:, 1:7], z.reshape(8, 10).T):
        np.testing.assert_array_equal(np.asarray(xp.real(xp.asarray(v))), v.real)
    if dtype == "complex128":  # the threaded loop (one dtype: each costs seconds of compiling)
        big = rng.standard_normal(300_001) + 1j * rng.standard_normal(300_001)
        np.testing.assert_array_equal(np.asarray(xp.real(xp.asarray(big)[1:])), big[1:].real)


@pytest.mark.parametrize("dtype", ["int8", "uint16", "int32", "int64", "float32", "float64"])
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "strided"])
def test_clip_fused_kernel_matches_numpy(dtype, layout):
    """clip's one-pass kernel (bounds of x's dtype or Python scalars of its kind): values as
    np.clip (NaN propagates, min > max gives max), x's dtype, broadcast bounds, every layout, small
    and parallel sizes; the fused primitive's plans are what runs.  The parallel size for one
    integer and one float dtype: the parallel kernels are the serial ones' code over segments
    (compiling them for all six cost ~7 s of a cold make test)."""
    from strided._ops.elementwise import CLIP

    rng = np.random.default_rng(21)
    unsigned = dtype.startswith("u")
    for shape in ((6, 9), (400, 300)) if dtype in ("int8", "float64") else ((6, 9), (200, 150)):
        a = (np.abs(rng.standard_normal(shape)) * 50).astype(dtype)
        if dtype.startswith("float"):
            a[0, :3] = (np.nan, np.inf, -np.inf)
            a[1, :4] = (0.0, -0.0, 0.5, -0.5)  # ties with zero bounds (signs checked below)
        base = xp.asarray(a)  # (views of a strided array: asarray of a NumPy view copies it)
        x_view = {"contiguous": base, "transposed": base.T, "strided": base[:, ::2]}[layout]
        a = {"contiguous": a, "transposed": a.T, "strided": a[:, ::2]}[layout]
        lo_arr = (np.abs(rng.standard_normal(a.shape[-1:])) * 20).astype(dtype)
        hi_arr = (np.abs(rng.standard_normal(a.shape[:1] + (1,))) * 20 + 30).astype(dtype)
        cases = [(10, 40), (40, 10), (None, 7), (7, None), (lo_arr, hi_arr), (lo_arr, 12)]
        if not unsigned:
            cases += [(-10, 40)]
        if dtype.startswith("float"):
            cases += [(-0.5, 0.25), (np.nan, 1.0), (0.0, -0.0), (0.0, 1.0), (-0.0, 1.0)]
            cases += [(-1.0, 0.0), (-1.0, -0.0), (-0.5, np.nan), (-np.inf, np.inf)]
        for lo, hi in cases:
            x = x_view
            assert x._strides == tuple(st // a.itemsize for st in a.strides)
            got = xp.clip(
                x, xp.asarray(lo) if isinstance(lo, np.ndarray) else lo,
                xp.asarray(hi) if isinstance(hi, np.ndarray) else hi,
            )  # fmt: skip
            want = np.clip(a, lo, hi)
            assert got.dtype.name == dtype and got.shape == want.shape
            np.testing.assert_array_equal(np.asarray(got), want)
            # the sign of a zero tied with a zero bound: the bound, as minimum(maximum(x, lo), hi)
            # gives (np.clip keeps x's there), on every kernel path
            composed = want
            if dtype.startswith("float") and not isinstance(lo, np.ndarray):
                big, small = -np.inf if lo is None else lo, np.inf if hi is None else hi
                composed = np.minimum(
                    np.maximum(a, np.asarray(big, dtype)), np.asarray(small, dtype)
                )
            np.testing.assert_array_equal(np.signbit(np.asarray(got)), np.signbit(composed))
    assert any(key[0][0].name == dtype for key in CLIP._plans)


@pytest.mark.parametrize("dtype", ["int16", "float32"])
def test_clip_and_where_of_stepped_vectors_match_numpy(dtype, monkeypatch):
    """clip and where of vectors at a step (x[::2], x[::-3], a broadcast element) run one loop
    call with their steps (clip between scalar bounds: its selects with the step,
    ``clip_scalars_step_s``): NumPy's values (NaN bounds, zeros tied with zero bounds as
    minimum(maximum(x, lo), hi) gives them) on the plan's first call and its repeats.  From the
    parallel size, where copies the operands laid out otherwise into the output's layout; a
    condition and two vectors all at step 2 are read as pairs (``where_2``, ``where_2p``)."""
    import strided.backends.cpu as cpu
    from strided.backends.cpu import kernels

    plans = []

    def spy(name, total, np_dtype, scalars=(), steps=(), f=cpu._flat_loop):
        plans.append((name, steps))
        return f(name, total, np_dtype, scalars, steps)

    monkeypatch.setattr(cpu, "_flat_loop", spy)
    rng = np.random.default_rng(3)
    n = 700
    src = (rng.standard_normal(3 * n + 5) * 30).astype(dtype)
    if dtype == "float32":
        src[:12] = (np.nan, np.inf, -np.inf, 0.0, -0.0, 0.5, -0.5, 0, -0.0, 0, 0, 0)
    cond = rng.random(3 * n + 5) < 0.5
    s, c = xp.asarray(src), xp.asarray(cond)
    views = [np.s_[::2], np.s_[::-3], np.s_[1::2]]
    bounds = [(-10, 20), (20, -10), (0, 5)]
    if dtype == "float32":
        bounds += [(0.0, -0.0), (-0.0, 0.0), (np.nan, 1.0), (-1.0, np.nan), (-np.inf, 0.5)]
    for _ in range(2):  # the plan's first call, then its lane
        for v in views:
            x, a = s[v][:n], src[v][:n]
            for lo, hi in bounds:
                got = np.asarray(xp.clip(x, lo, hi))
                np.testing.assert_array_equal(got, np.clip(a, lo, hi).astype(dtype))
                lo_, hi_ = np.asarray(lo, dtype), np.asarray(hi, dtype)
                np.testing.assert_array_equal(
                    np.signbit(got), np.signbit(np.minimum(np.maximum(a, lo_), hi_))
                )
            got = xp.clip(x, s[::3][:n], s[2::3][:n])  # bounds at steps: the clip loop
            np.testing.assert_array_equal(
                np.asarray(got), np.minimum(np.maximum(a, src[::3][:n]), src[2::3][:n])
            )
            for w in views:
                got = xp.where(c[w][:n], x, s[w][:n])
                np.testing.assert_array_equal(np.asarray(got), np.where(cond[w][:n], a, src[w][:n]))
            got = xp.where(c[v][:n], 7, x)
            np.testing.assert_array_equal(
                np.asarray(got), np.where(cond[v][:n], np.asarray(7, dtype), a)
            )
            one = xp.broadcast_to(s[4:5], (n,))
            got = xp.where(c[v][:n], x, one)
            np.testing.assert_array_equal(np.asarray(got), np.where(cond[v][:n], a, src[4]))
    # (steps of cond, x1, x2; 0: a Python scalar or a broadcast element)
    for steps in ((2, 2, 2), (-3, 2, -3), (2, 0, 2), (2, 2, 0)):
        assert ("where", steps) in plans, steps
    assert ("clip", (2, 3, 3)) in plans and ("clip", (-3, 3, 3)) in plans
    stepped = kernels.G.clip_scalars_step_s.signatures
    assert any(str(sig[1].dtype) == dtype for sig in stepped)
    # from the parallel size where copies operands laid out otherwise into out's layout first
    staged = []

    def stage(out, inputs, any_layout, f=cpu._staged_operands):
        result = f(out, inputs, any_layout)
        staged.append(sum(a is not b for a, b in zip(inputs, result)))
        return result

    monkeypatch.setattr(cpu, "_staged_operands", stage)
    big = kernels.PARALLEL_THRESHOLD + 5
    src = (rng.standard_normal(3 * big + 2) * 30).astype(dtype)
    cond = rng.random(3 * big + 2) < 0.5
    s, c = xp.asarray(src), xp.asarray(cond)
    for v, w in ((np.s_[::2], np.s_[1::2]), (np.s_[::-3], np.s_[:big])):
        got = xp.where(c[v][:big], s[v][:big], s[w][:big])
        want = np.where(cond[v][:big], src[v][:big], src[w][:big])
        np.testing.assert_array_equal(np.asarray(got), want)
    got = xp.where(c[:big], s[::2][:big], 3)  # (a dense condition, a Python scalar)
    np.testing.assert_array_equal(np.asarray(got), np.where(cond[:big], src[::2][:big], 3))
    # (all three at step 2: read as pairs, where_2p, nothing staged)
    assert staged == [2, 1]
    assert any(str(sig[0].dtype) == dtype for sig in kernels.G.where_2p.signatures)
    # the serial pair loop, from 1024 elements, the last element ending its buffer or not
    for size in (2 * 1500, 2 * 1500 - 1):
        m = (size - 1) // 2
        sv, cv = xp.asarray(src[:size].copy()), xp.asarray(cond[:size].copy())  # (own buffers)
        got = xp.where(cv[::2][-m:], sv[1::2][-m:], sv[::2][-m:])
        want = np.where(cond[:size][::2][-m:], src[:size][1::2][-m:], src[:size][::2][-m:])
        np.testing.assert_array_equal(np.asarray(got), want)
    assert any(str(sig[0].dtype) == dtype for sig in kernels.G.where_2.signatures)
    for size in (2 * 1500, 2 * 1500 - 1):  # clip between scalar bounds at step 2: clip_scalars_2
        m = (size - 1) // 2
        sv = xp.asarray(src[:size].copy())
        for lo, hi in bounds:
            for part in (np.s_[::2], np.s_[1::2]):
                got = np.asarray(xp.clip(sv[part][-m:], lo, hi))
                want = np.clip(src[:size][part][-m:], lo, hi).astype(dtype)
                np.testing.assert_array_equal(got, want)
    assert any(str(sig[1].dtype) == dtype for sig in kernels.G.clip_scalars_2.signatures)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_nextafter_bit_steps_match_numpy_exactly(dtype):
    """nextafter by integer steps on the IEEE bits: every pair of special values (signed zeros,
    subnormals, the largest finite values, infinities, NaN) and random values of all scales, bit
    for bit as NumPy (C's nextafter)."""
    info = np.finfo(dtype)
    sp = np.array([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, info.smallest_subnormal,
                   -info.smallest_subnormal, info.smallest_normal, info.max, -info.max, 2.5],
                  dtype)  # fmt: skip
    a, b = (m.ravel() for m in np.meshgrid(sp, sp))
    rng = np.random.default_rng(13)
    scale = rng.choice(np.array([1e-40, 1.0, 1e30], dtype), 5000)
    a = np.concatenate([a, (rng.standard_normal(5000) * scale).astype(dtype)])
    b = np.concatenate([b, rng.standard_normal(5000).astype(dtype)])
    with np.errstate(all="ignore"):
        want = np.nextafter(a, b)
    got = np.asarray(xp.nextafter(xp.asarray(a), xp.asarray(b)))
    assert got.dtype == want.dtype
    assert np.array_equal(got.view(f"u{got.itemsize}"), want.view(f"u{want.itemsize}")) or (
        np.array_equal(got, want, equal_nan=True)
        and np.array_equal(np.signbit(got), np.signbit(want))
    )
