"""Array subclasses (nn.Parameter's case): every function, operator and backward accepts them,
gradients reach them, and results are plain arrays."""

from __future__ import annotations

import numpy as np
import pytest

import strided as xp
from strided.autograd import grad


class Param(xp.Array):
    """A minimal Parameter: a leaf that requires grad, sharing the memory of the array given."""

    __slots__ = ()

    def __new__(cls, data, requires_grad: bool = True):
        return xp.Array._make_subclass(cls, data, requires_grad)

    def __init__(self, data, requires_grad: bool = True):
        pass


def _param(a: np.ndarray, requires_grad: bool = False) -> Param:
    return Param(xp.asarray(a.copy()), requires_grad=requires_grad)


RNG = np.random.default_rng(0)
A = RNG.standard_normal((3, 4))
B = RNG.standard_normal((3, 4))
SQ = RNG.standard_normal((4, 4)) + 4 * np.eye(4)

# (name, call on two subclass instances of A's and B's shape (or SQ for square inputs))
CALLS = [
    ("add", lambda a, b: xp.add(a, b)),
    ("operators", lambda a, b: ((a + b) * 2.0 - b / 3.0) ** 2 + (-a) + abs(b)),
    ("reflected", lambda a, b: 1.0 - a + 2.0 * b),
    ("comparison", lambda a, b: xp.where(a > b, a, b)),
    ("exp/tanh", lambda a, b: xp.tanh(a) * xp.exp(b)),
    ("sum axis", lambda a, b: xp.sum(a * b, axis=1)),
    ("mean/var/std", lambda a, b: xp.mean(a) + xp.var(b) + xp.std(a, axis=0)),
    ("max/min", lambda a, b: xp.max(a, axis=0) + xp.min(b)),
    ("cumulative_sum", lambda a, b: xp.cumulative_sum(a, axis=1) + b),
    ("matmul", lambda a, b: a @ b.mT),
    ("tensordot", lambda a, b: xp.tensordot(a, b, axes=2)),
    ("reshape/permute", lambda a, b: xp.reshape(xp.permute_dims(a, (1, 0)), (12,)) + 1.0),
    ("indexing", lambda a, b: a[1:, ::2] + b[0, :2]),
    ("integer indexing", lambda a, b: a[xp.asarray([2, 0])] + b[xp.asarray([1, 1])]),
    ("mask", lambda a, b: a[b > 0]),
    ("concat/stack", lambda a, b: xp.concat([a, b]) + xp.stack([b, a])[0, 0]),
    ("take/sort", lambda a, b: xp.take(a, xp.asarray([0, 2]), axis=0) + xp.sort(b, axis=0)[:2]),
    ("clip", lambda a, b: xp.clip(a, -0.5, b)),
    ("astype", lambda a, b: xp.astype(a, xp.float32) + xp.astype(b, xp.float32)),
    ("broadcast", lambda a, b: xp.broadcast_to(a[:1], (5, 3, 4)) * b),
    ("linalg", lambda a, b: xp.linalg.vector_norm(a) + xp.linalg.matrix_norm(b.mT @ a)),
    ("fft", lambda a, b: xp.real(xp.fft.fft(a)) + xp.fft.irfft(xp.fft.rfft(b), n=4)),
]


@pytest.mark.parametrize("name,fn", CALLS, ids=[c[0] for c in CALLS])
def test_functions_accept_subclasses_and_return_plain_arrays(name, fn):
    got = fn(_param(A), _param(B))
    want = fn(xp.asarray(A), xp.asarray(B))
    assert type(got) is xp.Array
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name,fn", CALLS, ids=[c[0] for c in CALLS])
def test_gradients_reach_subclass_leaves(name, fn):
    pa, pb = _param(A, True), _param(B, True)
    out = fn(pa, pb)
    if out.dtype not in (xp.float64, xp.float32):
        pytest.skip("no floating output")  # pragma: no cover (every call above is floating)
    ga, gb = grad(xp.sum(out), [pa, pb], allow_unused=True)
    ra, rb = xp.asarray(A, requires_grad=True), xp.asarray(B, requires_grad=True)
    wa, wb = grad(xp.sum(fn(ra, rb)), [ra, rb], allow_unused=True)
    for g, w in ((ga, wa), (gb, wb)):
        assert (g is None) == (w is None)
        if g is not None:
            assert type(g) is xp.Array
            np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-10, atol=1e-12)


def test_linalg_decompositions_and_backward_accept_subclasses():
    p = _param(SQ, True)
    loss = xp.sum(xp.linalg.inv(p)) + xp.linalg.det(p) + xp.sum(xp.linalg.eigvalsh(p @ p.mT))
    loss.backward()
    r = xp.asarray(SQ, requires_grad=True)
    (xp.sum(xp.linalg.inv(r)) + xp.linalg.det(r) + xp.sum(xp.linalg.eigvalsh(r @ r.mT))).backward()
    np.testing.assert_allclose(np.asarray(p.grad), np.asarray(r.grad), rtol=1e-10)


def test_subclass_shares_memory_and_is_a_leaf():
    base = xp.asarray(A.copy())
    p = Param(base)
    assert isinstance(p, xp.Array) and p.is_leaf and p.requires_grad
    with xp.autograd.no_grad():
        p[0, 0] = 42.0  # an in-place write to a leaf that requires grad is allowed here
    assert float(base[0, 0]) == 42.0
    with pytest.raises(RuntimeError, match="leaf"):
        p[0, 0] = 1.0  # and refused while grad mode is on


def test_subclass_in_place_operators_and_optimizer_style_update():
    p = _param(A, True)
    loss = xp.sum(p * p)
    loss.backward()
    with xp.autograd.no_grad():
        p -= 0.1 * p.grad
    assert type(p) is Param
    np.testing.assert_allclose(np.asarray(p), A - 0.1 * 2 * A)


def test_make_subclass_rejects_other_classes():
    with pytest.raises(TypeError, match="not a subclass"):
        xp.Array._make_subclass(int, xp.asarray(A))
    with pytest.raises(TypeError, match="expected a strided array"):
        xp.Array._make_subclass(Param, A)
