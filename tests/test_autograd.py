"""Autograd: every differentiable op against float64 central differences (gradcheck), second
derivatives (gradgradcheck), PyTorch's autograd as an oracle where installed, and the tape's
semantics (accumulation, views, in-place writes, version counters, retain_graph, deep graphs,
memory release, meta, grad modes)."""

from __future__ import annotations

import gc
import weakref

import numpy as np
import pytest

import strided as xp
from strided import _dtypes as sdt
from strided.autograd import grad, gradcheck, gradgradcheck, no_grad

from .op_table import ELEMENTWISE_OPS
from .strategies import in_layout, values

RNG = np.random.default_rng(1234)


def leaf(shape, lo=-2.0, hi=2.0, *, complex_=False, layout="contiguous"):
    d = sdt.complex128 if complex_ else sdt.float64
    a = values(RNG, shape, d, domain=(lo, hi))
    return in_layout(a, layout)[1].requires_grad_()


# -- every differentiable elementwise op ----------------------------------------------------------
NOT_DIFFERENTIABLE = {"nextafter"}
DIFFERENTIABLE = [
    op
    for op in ELEMENTWISE_OPS
    if op.result != "bool" and sdt.REAL in sdt.CATEGORIES[op.accepts]
    and op.name not in NOT_DIFFERENTIABLE
]  # fmt: skip
COMPLEX_DIFFERENTIABLE = [op for op in DIFFERENTIABLE if sdt.COMPLEX in sdt.CATEGORIES[op.accepts]]


def _domain(op):
    lo, hi = op.domain
    if op.nonzero_rhs:
        return (0.5, 3.0)
    return (lo, hi)


@pytest.mark.parametrize("op", DIFFERENTIABLE, ids=lambda op: op.name)
def test_elementwise_gradcheck_non_contiguous_and_broadcast(op):
    lo, hi = _domain(op)
    x1 = leaf((2, 3), lo, hi, layout="transposed")  # shape (2, 3) with reversed strides
    if op.arity == 1:
        assert gradcheck(op.fn, [x1])
        assert gradcheck(op.fn, [leaf((3, 2), lo, hi, layout="broadcast")])  # a stride-0 leaf
    else:
        x2 = leaf((3,), lo, hi)  # broadcast along the first axis: its gradient is summed
        assert gradcheck(op.fn, [x1, x2])
        # with a Python scalar operand on either side
        assert gradcheck(lambda a: op.fn(a, (lo + hi) / 2 + 0.25), [x2])
        assert gradcheck(lambda a: op.fn((lo + hi) / 2 + 0.25, a), [x2])


@pytest.mark.parametrize("op", COMPLEX_DIFFERENTIABLE, ids=lambda op: op.name)
def test_elementwise_gradcheck_complex(op):
    lo, hi = _domain(op)
    x1 = leaf((2, 2), lo, hi, complex_=True, layout="negative")
    if op.arity == 1:
        assert gradcheck(op.fn, [x1])
    else:
        assert gradcheck(op.fn, [x1, leaf((2,), lo, hi, complex_=True)])


def test_nextafter_backward_raises():
    x = leaf((3,))
    y = xp.sum(xp.nextafter(x, 10.0))
    with pytest.raises(RuntimeError, match="nextafter"):
        y.backward()


def test_comparisons_and_integer_results_carry_no_gradient():
    x = leaf((4,))
    for r in (x > 0, xp.isnan(x), xp.argmax(x), xp.argsort(x), xp.signbit(x)):
        assert not r.requires_grad and r.grad_fn is None
    with pytest.raises(TypeError, match="floating-point"):
        xp.asarray([1, 2, 3], requires_grad=True)


# -- every other differentiable function ----------------------------------------------------------
def _cases():
    L = leaf
    return {
        "sum": (lambda x: xp.sum(x, axis=0), [L((3, 4), layout="sliced")]),
        "sum_keepdims_dtype": (
            lambda x: xp.sum(x, axis=(0, 2), keepdims=True, dtype=xp.complex128),
            [L((2, 3, 2))],
        ),
        "prod": (lambda x: xp.prod(x, axis=(0, 2)), [L((2, 3, 2), layout="transposed")]),
        "prod_with_zero": (lambda x: xp.prod(x * xp.asarray([1.0, 0.0, 1.0])), [L((3,))]),
        "max": (lambda x: xp.max(x, axis=1), [L((3, 4), layout="negative")]),
        "min_all": (lambda x: xp.min(x), [L((3, 4))]),
        "mean": (lambda x: xp.mean(x, axis=-1), [L((3, 4), layout="transposed")]),
        "var": (lambda x: xp.var(x, axis=0, correction=1), [L((3, 4))]),
        "std": (lambda x: xp.std(x, keepdims=True), [L((3, 4), layout="sliced")]),
        "cumulative_sum": (
            lambda x: xp.cumulative_sum(x, axis=1, include_initial=True),
            [L((2, 3), layout="transposed")],
        ),
        "cumulative_prod": (lambda x: xp.cumulative_prod(x, axis=0), [L((3, 2))]),
        "cumulative_prod_zero": (
            lambda x: xp.cumulative_prod(x * xp.asarray([1.0, 0.0, 1.0, 0.0]), axis=0),
            [L((4,))],
        ),
        "matmul": (lambda a, b: a @ b, [L((2, 3, 4), layout="transposed"), L((4, 2))]),
        "matmul_vector_left": (lambda a, b: a @ b, [L((3,)), L((2, 3, 4))]),
        "matmul_vector_right": (lambda a, b: a @ b, [L((2, 3, 4)), L((4,))]),
        "matmul_vectors": (lambda a, b: a @ b, [L((3,)), L((3,))]),
        "matmul_complex": (
            lambda a, b: a @ b,
            [L((2, 3), complex_=True), L((3, 2), complex_=True)],
        ),
        "tensordot": (lambda a, b: xp.tensordot(a, b, axes=1), [L((2, 3)), L((3, 2))]),
        "vecdot": (
            lambda a, b: xp.vecdot(a, b),
            [L((2, 3), complex_=True), L((3,), complex_=True)],
        ),
        "basic_index": (lambda x: x[1:, ::-2, None], [L((3, 4))]),
        "integer_array_index": (lambda x: x[xp.asarray([0, 0, 2]), 1], [L((3, 4))]),
        "boolean_mask": (lambda x: x[x > 0], [L((3, 4))]),
        "take": (lambda x: xp.take(x, xp.asarray([1, 1, 0]), axis=1), [L((3, 4))]),
        "take_along_axis": (
            lambda x: xp.take_along_axis(x, xp.asarray([[1, 0, 0, 2]]), axis=0),
            [L((3, 4))],
        ),
        "sort": (lambda x: xp.sort(x, axis=0, descending=True), [L((3, 4))]),
        "concat": (lambda x, y: xp.concat([x, y], axis=1), [L((2, 3)), L((2, 2))]),
        "concat_flat": (lambda x, y: xp.concat([x, y], axis=None), [L((2, 3)), L((2,))]),
        "stack": (lambda x, y: xp.stack([x, y], axis=1), [L((2, 3)), L((2, 3))]),
        "unstack": (lambda x: xp.unstack(x, axis=1)[1], [L((2, 3))]),
        "where": (lambda x, y: xp.where(x > 0, x, y), [L((2, 3)), L((3,))]),
        "where_scalar": (lambda x: xp.where(x > 0, x, 0.5), [L((2, 3))]),
        "transposes": (lambda x: x.T @ x.mT.T, [L((2, 3))]),
        "reshape": (lambda x: xp.reshape(x.mT, (6,)), [L((2, 3))]),
        "permute_dims": (lambda x: xp.permute_dims(x, (2, 0, 1)), [L((2, 3, 2))]),
        "expand_squeeze": (
            lambda x: xp.squeeze(xp.expand_dims(x, axis=(0, 2)), axis=0),
            [L((2, 3))],
        ),
        "broadcast_to": (lambda x: xp.broadcast_to(x, (2, 3, 3)), [L((3, 1))]),
        "broadcast_arrays": (
            lambda x, y: xp.broadcast_arrays(x, y)[0] * xp.broadcast_arrays(x, y)[1],
            [L((3, 1)), L((4,))],
        ),
        "flip": (lambda x: xp.flip(x, axis=0), [L((3, 2))]),
        "moveaxis": (lambda x: xp.moveaxis(x, 0, -1), [L((2, 3, 2))]),
        "roll": (lambda x: xp.roll(x, 1, axis=0), [L((3, 2))]),
        "tile": (lambda x: xp.tile(x, (2, 2)), [L((2, 3))]),
        "repeat": (lambda x: xp.repeat(x, 2, axis=1), [L((2, 3))]),
        "diff": (lambda x: xp.diff(x, axis=0, n=2), [L((4, 2))]),
        "clip": (lambda x: xp.clip(x, -0.5, 0.5), [L((5,))]),
        "tril_triu": (lambda x: xp.tril(x) + xp.triu(x, k=1) * 2, [L((3, 3))]),
        "astype": (lambda x: xp.astype(x, xp.complex128) * (1 + 2j), [L((3,))]),
        "real_imag": (lambda z: xp.real(z) * xp.imag(z), [L((3,), complex_=True)]),
        "softmax": (
            lambda a: xp.exp(a) / xp.sum(xp.exp(a), axis=-1, keepdims=True),
            [L((2, 3))],
        ),
        # the fft extension: every primitive in both directions, odd and even lengths, norms
        "fft": (lambda z: xp.fft.fft(z, n=7, norm="ortho"), [L((2, 5), complex_=True)]),
        "ifft": (
            lambda z: xp.fft.ifft(z, axis=0, norm="forward"),
            [L((4, 3), complex_=True, layout="transposed")],
        ),
        "fftn": (lambda z: xp.fft.fftn(z, s=(3, 6), axes=(0, 1)), [L((4, 5), complex_=True)]),
        # (the default sizes and axes of complex input: the calls that skip the argument work)
        "fftn_defaults": (
            lambda z: xp.fft.ifftn(z) * xp.fft.fft(z),
            [L((3, 4), complex_=True, layout="negative")],
        ),
        "fft_of_real": (lambda x: xp.fft.fft(x), [L((6,))]),
        "rfft": (lambda x: xp.fft.rfft(x, norm="forward"), [L((2, 7), layout="negative")]),
        "rfftn": (lambda x: xp.fft.rfftn(x), [L((3, 4))]),
        "irfft": (lambda z: xp.fft.irfft(z), [L((4,), complex_=True)]),
        "irfft_odd": (lambda z: xp.fft.irfft(z, n=7, norm="ortho"), [L((4,), complex_=True)]),
        "irfftn": (
            lambda z: xp.fft.irfftn(z, s=(3, 6), axes=(0, 1)),
            [L((3, 4), complex_=True)],
        ),
        "hfft": (lambda z: xp.fft.hfft(z), [L((4,), complex_=True)]),
        "ihfft": (lambda x: xp.fft.ihfft(x), [L((6,))]),
        "fftshift": (lambda x: xp.fft.fftshift(x), [L((5,))]),
        # the linalg extension (spectral functions through gauge-invariant expressions)
        "inv": (lambda a: xp.linalg.inv(a), [L((2, 3, 3), layout="transposed")]),
        "inv_complex": (lambda a: xp.linalg.inv(a), [L((3, 3), complex_=True)]),
        "det": (lambda a: xp.linalg.det(a), [L((2, 3, 3), layout="negative")]),
        "det_complex": (lambda a: xp.linalg.det(a), [L((3, 3), complex_=True)]),
        "slogdet": (lambda a: xp.linalg.slogdet(a).logabsdet, [L((2, 3, 3))]),
        "slogdet_complex": (lambda a: xp.linalg.slogdet(a), [L((3, 3), complex_=True)]),
        "solve": (lambda a, b: xp.linalg.solve(a, b), [L((2, 3, 3)), L((3, 2))]),
        "solve_vector": (lambda a, b: xp.linalg.solve(a, b), [L((2, 3, 3)), L((3,))]),
        "solve_complex": (
            lambda a, b: xp.linalg.solve(a, b),
            [L((3, 3), complex_=True), L((3, 2), complex_=True)],
        ),
        "cholesky": (lambda a: xp.linalg.cholesky(_spd(a)), [L((2, 3, 3))]),
        "cholesky_upper_complex": (
            lambda a: xp.linalg.cholesky(_spd(a), upper=True),
            [L((3, 3), complex_=True)],
        ),
        "eigh": (
            lambda a: (lambda r: (r.eigenvalues, r.eigenvectors**2))(xp.linalg.eigh(_herm(a))),
            [L((2, 3, 3))],
        ),
        "eigh_complex": (
            lambda a: (lambda r: (r.eigenvalues, xp.abs(r.eigenvectors)))(xp.linalg.eigh(_herm(a))),
            [L((3, 3), complex_=True)],
        ),
        "eigvalsh": (lambda a: xp.linalg.eigvalsh(_herm(a)), [L((3, 3))]),
        "eig": (
            lambda a: (lambda r: (r.eigenvalues, xp.abs(r.eigenvectors)))(xp.linalg.eig(a)),
            [L((3, 3))],
        ),
        "eigvals_complex": (lambda a: xp.linalg.eigvals(a), [L((3, 3), complex_=True)]),
        "svd_tall": (
            lambda a: (lambda r: (r.U**2, r.S, r.Vh**2))(xp.linalg.svd(a, full_matrices=False)),
            [L((2, 4, 3))],
        ),
        "svd_wide_full": (
            lambda a: (lambda r: (r.U**2, r.S, r.Vh[..., :3, :] ** 2))(xp.linalg.svd(a)),
            [L((3, 4))],
        ),
        "svd_complex": (
            lambda a: (lambda r: (xp.abs(r.U), r.S, xp.abs(r.Vh)))(
                xp.linalg.svd(a, full_matrices=False)
            ),
            [L((4, 3), complex_=True)],
        ),
        "svdvals": (lambda a: xp.linalg.svdvals(a), [L((3, 4))]),
        "qr_tall": (lambda a: xp.linalg.qr(a), [L((4, 3))]),
        "qr_wide": (lambda a: xp.linalg.qr(a), [L((3, 5))]),
        "qr_complex": (lambda a: xp.linalg.qr(a), [L((2, 4, 3), complex_=True)]),
        "pinv": (lambda a: xp.linalg.pinv(a), [L((4, 3))]),
        "matrix_power": (
            lambda a: xp.linalg.matrix_power(a, 3) + xp.linalg.matrix_power(a, -2),
            [L((3, 3))],
        ),
        "norms": (
            lambda a: (
                xp.linalg.matrix_norm(a)
                + xp.linalg.matrix_norm(a, ord="nuc")
                + xp.linalg.matrix_norm(a, ord=2)
                + xp.linalg.matrix_norm(a, ord=-xp.inf)
                + xp.linalg.vector_norm(a, ord=3)
                + xp.linalg.vector_norm(a, ord=xp.inf, axis=0)
            ),
            [L((3, 4))],
        ),
        "trace": (lambda a: xp.linalg.trace(a, offset=1), [L((2, 3, 4))]),
        "diagonal": (lambda a: xp.linalg.diagonal(a, offset=-1), [L((3, 4))]),
        "outer_cross": (
            lambda a, b: xp.linalg.outer(a, b) + xp.linalg.cross(a, b)[None, :],
            [L((3,)), L((3,))],
        ),
    }


def _spd(a):
    """A Hermitian positive-definite matrix made from ``a``."""
    return a @ xp.conj(xp.matrix_transpose(a)) + xp.eye(a.shape[-1]) * 3


def _herm(a):
    return a + xp.conj(xp.matrix_transpose(a))


CASES = _cases()


@pytest.mark.parametrize("name", sorted(CASES))
def test_function_gradcheck(name):
    fn, inputs = CASES[name]
    assert gradcheck(fn, inputs)


GRADGRAD = [
    "inv",
    "det",
    "solve",
    "cholesky",
    "eigvalsh",
    "svdvals",
    "qr_tall",
    "irfft_odd",
    "rfft",
    "prod",
    "max",
    "std",
    "cumulative_prod",
    "matmul",
    "matmul_complex",
    "integer_array_index",
    "sort",
    "softmax",
    "basic_index",
    "where",
]


@pytest.mark.parametrize("name", GRADGRAD)
def test_gradgradcheck(name):
    fn, inputs = CASES[name]
    assert gradgradcheck(fn, inputs)


@pytest.mark.parametrize(
    "name", ["tanh", "exp", "log", "divide", "pow", "sin", "sqrt", "atan2", "hypot"]
)
def test_gradgradcheck_elementwise(name):
    op = next(op for op in DIFFERENTIABLE if op.name == name)
    lo, hi = _domain(op)
    args = [leaf((3,), lo, hi) for _ in range(op.arity)]
    assert gradgradcheck(op.fn, args)


def test_zero_size_arrays_in_the_graph():
    empty = xp.zeros((0, 3), requires_grad=True)
    assert gradcheck(
        lambda a, b: xp.sum(a) + b * 2 + xp.sum(a @ xp.ones((3, 2))), [empty, leaf((2,))]
    )
    xp.sum(xp.exp(empty), axis=0).backward(xp.ones(3))
    assert empty.grad.shape == (0, 3)


def test_gradcheck_catches_a_wrong_rule():
    from strided._tape import RULES

    original = RULES["sin"].vjp
    RULES["sin"].vjp = lambda ctx, g: (g * xp.sin(ctx.inputs[0]),)  # wrong: should be cos
    try:
        with pytest.raises(AssertionError, match="differs"):
            gradcheck(xp.sin, [leaf((3,))])
    finally:
        RULES["sin"].vjp = original


# -- semantics ----------------------------------------------------------------------------------
def test_gradients_accumulate_and_broadcast_inputs_are_summed():
    x = leaf((3,))
    m = leaf((2, 3))
    for _ in range(2):
        xp.sum(x * m).backward()
    expected = 2 * np.asarray(m).sum(axis=0)
    np.testing.assert_allclose(np.asarray(x.grad), expected)
    assert x.grad.shape == (3,) and x.grad.dtype == xp.float64


def test_float32_gradients_stay_float32():
    x = xp.asarray([1.0, 2.0], dtype=xp.float32, requires_grad=True)
    y = xp.sum(x * xp.asarray([1.0, 2.0], dtype=xp.float64))
    y.backward()
    assert x.grad.dtype == xp.float32


def test_leaf_properties_detach_and_requires_grad_keyword():
    x = xp.ones((2, 2), requires_grad=True)
    assert x.requires_grad and x.is_leaf and x.grad is None and x.grad_fn is None
    y = x * 2
    assert y.requires_grad and not y.is_leaf and y.grad_fn is not None
    d = y.detach()
    assert not d.requires_grad and d.is_leaf
    assert np.shares_memory(np.asarray(d), np.asarray(y))
    z = xp.zeros(3)
    z.requires_grad = True
    assert z.requires_grad and z.is_leaf
    for make in (xp.ones_like, xp.zeros_like):
        assert make(x, requires_grad=True).requires_grad
    assert xp.arange(3.0, requires_grad=True).requires_grad
    assert xp.full((2,), 1.5, requires_grad=True).requires_grad
    with pytest.raises(RuntimeError, match="leaf"):
        y.requires_grad_(False)


def test_backward_of_non_scalar_needs_a_gradient():
    x = leaf((2, 3))
    y = x * 3
    with pytest.raises(RuntimeError, match="one element"):
        y.backward()
    y.backward(xp.ones((2, 3)))
    np.testing.assert_allclose(np.asarray(x.grad), 3.0)
    with pytest.raises(ValueError, match="shape"):
        (x * 3).backward(xp.ones(3))


def test_second_backward_without_retain_graph_raises():
    x = leaf((3,))
    y = xp.sum(xp.exp(x))
    y.backward(retain_graph=True)
    y.backward()
    np.testing.assert_allclose(np.asarray(x.grad), 2 * np.exp(np.asarray(x)))
    with pytest.raises(RuntimeError, match="second time.*retain_graph"):
        y.backward()


def test_inplace_change_of_a_saved_array_raises_with_versions():
    x = leaf((3,))
    y = x * 2
    z = y * y  # saves y
    y[0] = 1.0
    with pytest.raises(RuntimeError, match=r"multiply.*version 0.*version 1"):
        xp.sum(z).backward()


def test_inplace_on_a_leaf_requiring_grad_raises_but_no_grad_allows_it():
    x = leaf((3,))
    with pytest.raises(RuntimeError, match="leaf"):
        x[0] = 1.0
    with pytest.raises(RuntimeError, match="leaf"):
        x += 1.0
    with no_grad():
        x[0] = 1.0
        x -= 0.5
    assert float(x[0]) == 0.5 and x.is_leaf


def test_views_share_gradients_with_their_base():
    x = leaf((2, 3))
    v = x.mT[1:]  # a view of a view
    xp.sum(v * v).backward()
    expected = np.zeros((2, 3))
    expected[:, 1:] = 2 * np.asarray(x)[:, 1:]
    np.testing.assert_allclose(np.asarray(x.grad), expected)


def test_setitem_into_arrays_and_views_in_the_graph():
    w = leaf((3,))

    def rows(w):
        out = xp.zeros((2, 3))
        out[0] = w * 2
        out[1, :2] = w[1:] ** 2
        return out

    def through_view(w):
        out = xp.zeros((2, 3))
        row = out[1]
        row[...] = xp.exp(w)  # written through a view: the owner carries the history
        return out * 3

    def array_index_and_inplace_op(w):
        y = w * 1.0
        y[xp.asarray([0, 2])] = 5.0
        y += w
        return y

    def stale_view(w):
        y = w * 1.0
        v = y[1:]
        y[1] = 0.0  # v sees the write: its history is rebuilt from y's
        return v * w[1:]

    def into_a_keepdims_result(w):
        s = xp.sum(w * 2, keepdims=True)  # a view of memory the reduction allocated
        s[0] = 1.0 + s[0]
        return s * w

    def into_a_reshaped_copy(w):
        r = xp.reshape(xp.stack([w, w]).mT, (6,))  # reshape had to copy
        r[1] = 0.0
        return r * 3

    def view_taken_before_the_write(w):
        out = xp.zeros((2, 3))
        row = out[0]  # untracked when taken; the recorded write below reaches it
        out[0] = w * 2
        return row * w

    for fn in (
        view_taken_before_the_write,
        rows,
        through_view,
        array_index_and_inplace_op,
        stale_view,
        into_a_keepdims_result,
        into_a_reshaped_copy,
    ):
        assert gradcheck(fn, [w])


def test_detached_arrays_stay_constants_through_writes_into_their_owner():
    w = leaf((3,))
    a = w * 1.0
    d = a.detach()
    a[0] = 5.0  # a recorded write into d's memory
    xp.sum(d * w).backward()
    np.testing.assert_array_equal(np.asarray(w.grad), np.asarray(d))
    assert not d.requires_grad


def test_grad_function_returns_tuple_and_leaves_dot_grad_alone():
    x, y = leaf((3,)), leaf((3,))
    out = xp.sum(x * y)
    gx, gy = grad(out, (x, y))
    np.testing.assert_allclose(np.asarray(gx), np.asarray(y))
    assert x.grad is None and y.grad is None
    unused = leaf((2,))
    with pytest.raises(RuntimeError, match="not used"):
        grad(xp.sum(x * 2), [x, unused])
    gx, gu = grad(xp.sum(x * 2), [x, unused], allow_unused=True)
    assert gu is None and np.allclose(np.asarray(gx), 2.0)
    # a non-leaf input gets the gradient flowing into it
    h = x * 3
    (gh,) = grad(xp.sum(h * h), h)
    np.testing.assert_allclose(np.asarray(gh), 2 * np.asarray(h))


def test_create_graph_hessian_vector_product():
    x = leaf((4,))
    y = xp.sum(x**3)
    (gx,) = grad(y, x, create_graph=True)
    v = xp.asarray([1.0, 0.5, -1.0, 2.0])
    (hv,) = grad(gx, x, grad_outputs=v)
    np.testing.assert_allclose(np.asarray(hv), 6 * np.asarray(x) * np.asarray(v))
    # backward(create_graph=True) leaves a differentiable .grad
    x2 = leaf((3,))
    xp.sum(xp.sin(x2)).backward(create_graph=True)
    assert x2.grad.requires_grad


def test_retain_grad_keeps_intermediate_gradients():
    x = leaf((3,))
    h = x * 2
    h.retain_grad()
    xp.sum(h * h).backward()
    np.testing.assert_allclose(np.asarray(h.grad), 2 * np.asarray(h))


def test_no_grad_and_enable_grad_as_context_managers_and_decorators():
    x = leaf((3,))
    with no_grad():
        assert not xp.autograd.is_grad_enabled()
        assert not (x * 2).requires_grad
        with xp.autograd.enable_grad():
            assert (x * 2).requires_grad
    assert xp.autograd.is_grad_enabled()

    @no_grad()
    def infer(a):
        return a * 2

    assert not infer(x).requires_grad
    with xp.autograd.set_grad_enabled(False):
        assert not (x + 1).requires_grad
    assert (x + 1).requires_grad

    @xp.autograd.set_grad_enabled(False)
    def untracked(a):
        return a + 1

    assert xp.autograd.is_grad_enabled() and not untracked(x).requires_grad
    xp.autograd.set_grad_enabled(False)  # a plain call switches until switched back
    try:
        assert not (x + 1).requires_grad
    finally:
        xp.autograd.set_grad_enabled(True)
    assert (x + 1).requires_grad


def test_deep_graph_backpropagates_without_recursion():
    x = leaf((1,))
    y = x
    for _ in range(100_000):
        y = y + 1.0
    xp.sum(y).backward()
    assert float(x.grad[0]) == 1.0


def test_saved_arrays_are_released_after_backward():
    x = leaf((1000,))
    y = xp.exp(x)  # saves its output
    probe = weakref.ref(y)
    loss = xp.sum(y * 2)
    del y
    gc.collect()
    assert probe() is not None  # kept alive by the graph until backward
    loss.backward()
    gc.disable()  # released by reference counting alone: no cycle keeps it
    try:
        assert probe() is None
    finally:
        gc.enable()


def test_backward_on_meta():
    x = xp.ones((1000, 2000), device="meta", requires_grad=True)
    w = xp.ones((2000, 30), device="meta", dtype=xp.float32, requires_grad=True)
    b = xp.zeros((30,), device="meta", dtype=xp.float32, requires_grad=True)
    h = xp.tanh(xp.astype(x, xp.float32) @ w + b)
    loss = xp.mean(xp.max(h, axis=1)) + xp.sum(h[xp.asarray([0, 2], device="meta")])
    loss.backward()
    for p in (x, w, b):
        assert p.grad.device == xp.Device("meta")
        assert p.grad.shape == p.shape and p.grad.dtype == p.dtype


def test_euclidean_norm_has_zero_gradient_at_zero_like_pytorch():
    x = xp.zeros((2, 3), requires_grad=True)
    (xp.linalg.vector_norm(x) + xp.sum(xp.linalg.vector_norm(x, axis=1))).backward()
    assert np.all(np.asarray(x.grad) == 0)
    y = leaf((2, 3), complex_=True)
    assert gradcheck(lambda a: xp.linalg.vector_norm(a, axis=0, keepdims=True), [y])
    assert gradcheck(lambda a: xp.linalg.matrix_norm(a), [leaf((3, 2))])


def test_index_add_accumulates_repeated_indices_like_numpy():
    from strided._ops.searching import index_add

    for d in (xp.float32, xp.float64, xp.complex128, xp.int32):
        base = np.arange(12).reshape(4, 3).astype(d.numpy)
        idx = np.array([0, 2, 0, 3, 0])
        vals = np.arange(15).reshape(5, 3).astype(d.numpy)
        expected = base.copy()
        np.add.at(expected, idx, vals)
        got = index_add(xp.asarray(base), xp.asarray(vals), (xp.asarray(idx),))
        np.testing.assert_array_equal(np.asarray(got), expected)
        # the source is not modified; transposed values work
        got_t = index_add(xp.asarray(base), xp.asarray(vals.T.copy()).mT, (xp.asarray(idx),))
        np.testing.assert_array_equal(np.asarray(got_t), expected)
    meta = index_add(
        xp.zeros((4, 3), device="meta"),
        xp.ones((2, 3), device="meta"),
        (xp.asarray([0, 1], device="meta"),),
    )
    assert meta.shape == (4, 3) and meta.device == xp.Device("meta")


# -- PyTorch as the oracle ------------------------------------------------------------------------
try:
    import torch
except ImportError:  # the optional 'torch' extra
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="PyTorch (optional) is not installed")


def _mlp(m, x, w1, b1, w2, target):
    h = m.tanh(x @ w1 + b1)
    logits = h @ w2
    shifted = logits - m.max(logits) if m is xp else logits - logits.max()
    logp = shifted - m.log(m.sum(m.exp(shifted), axis=1, keepdims=True))
    return -m.mean(m.sum(logp * target, axis=1))


EXPRESSIONS = {
    "mlp_cross_entropy": (
        lambda m, x, w1, b1, w2: _mlp(
            m, x, w1, b1, w2, (m.asarray if m is xp else m.tensor)(np.eye(3)[[0, 2, 1, 0]])
        ),
        [(4, 5), (5, 6), (6,), (6, 3)],
    ),
    "max_with_ties": (
        lambda m, x: (
            m.sum(m.max(m.round(x), axis=0) if m is xp else m.amax(m.round(x), dim=0))
            + m.sum(m.maximum(m.round(x), m.round(x) * 0 + 1))
        ),
        [(4, 3)],
    ),
    "advanced_index_duplicates": (
        lambda m, x: m.sum(x[(m.asarray if m is xp else m.tensor)([0, 0, 1])] ** 2),
        [(3, 2)],
    ),
    "prod_and_cumprod_with_zeros": (
        lambda m, x: (
            m.sum(m.prod(x * (m.asarray if m is xp else m.tensor)([1.0, 0.0, 1.0]), axis=0))
            + m.sum(
                (m.cumulative_prod if m is xp else lambda a, axis: m.cumprod(a, dim=axis))(
                    x * (m.asarray if m is xp else m.tensor)([0.0, 1.0, 1.0]), axis=0
                )
            )
        ),
        [(3,)],
    ),
    "complex_abs_and_products": (
        lambda m, z, w: m.sum(m.abs(z * w + m.conj(z))) + m.sum(m.real(m.exp(z) / w)),
        [(3,), (3,)],
    ),
    "complex_ffts": (
        lambda m, x, z: (
            m.sum(m.abs(m.fft.rfft(m.real(x), norm="ortho")))
            + m.sum(m.fft.irfft(z, n=7) * m.fft.hfft(z, n=7))
            + m.sum(m.abs(m.fft.fftn(x[:4] * z)))
        ),
        [(6,), (4,)],
    ),
    "linalg": (
        lambda m, a, b: (
            m.linalg.slogdet(a @ a.mT + 3 * m.eye(3, dtype=a.dtype))[1]
            + m.sum(m.linalg.solve(a, b) ** 2)
            + m.sum(m.linalg.inv(a))
            + m.sum(m.linalg.cholesky(a @ a.mT + 3 * m.eye(3, dtype=a.dtype)))
            + m.sum(m.linalg.eigvalsh(a + a.mT) ** 3)
            + m.sum(m.linalg.svdvals(b) ** 3)
            + m.sum(m.linalg.qr(b).R ** 2)
        ),
        [(3, 3), (3, 2)],
    ),
    "std_and_sort": (
        lambda m, x: (
            m.sum(m.std(x, axis=0) if m is xp else x.std(dim=0, unbiased=False))
            + m.sum((m.sort(x, axis=1) if m is xp else m.sort(x, dim=1).values) * x)
        ),
        [(3, 4)],
    ),
}


@needs_torch
@pytest.mark.parametrize("name", sorted(EXPRESSIONS))
def test_gradients_agree_with_pytorch(name):
    fn, shapes = EXPRESSIONS[name]
    complex_inputs = name.startswith("complex")
    hosts = []
    for s in shapes:
        a = RNG.uniform(-2, 2, s)
        if complex_inputs:
            a = a + 1j * RNG.uniform(-2, 2, s)
        hosts.append(a)
    ours = [xp.asarray(a, requires_grad=True) for a in hosts]
    theirs = [torch.tensor(a, requires_grad=True) for a in hosts]
    fn(xp, *ours).backward()
    fn(torch, *theirs).backward()
    for a, t in zip(ours, theirs):
        np.testing.assert_allclose(np.asarray(a.grad), t.grad.numpy(), rtol=1e-10, atol=1e-12)
