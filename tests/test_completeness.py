"""Completeness: every declared primitive has a kernel on every device, an op-table entry, and is
reachable from the namespace; the dispatch registry's public surface works."""

from __future__ import annotations

import importlib
import inspect

import pytest

import strided as xp
from strided import dispatch

from .op_table import ELEMENTWISE_OPS, OTHER_OPS

DEVICES = ["cpu", "meta"]


@pytest.mark.parametrize("name", sorted(dispatch.primitives()))
def test_every_primitive_has_kernels_and_tests(name):
    keys = dispatch.registered()
    kind = dispatch.primitive(name).kind
    if kind == "interchange":
        # sharing memory with other libraries: devices with memory, never meta; GPU memory comes
        # in on the device it lives on (import_device: the cuda device, where it is installed)
        home = "cuda" if name == "import_device" else "cpu"
        assert (name, "meta") not in keys
        assert (name, home) in keys or (home == "cuda" and ("add", "cuda") not in keys)
    elif kind in ("view", "composite"):
        # a view is its rule (shape, strides, offset), a composite the operations it composes:
        # no device runs a kernel of theirs
        assert not any(key[0] == name for key in keys), f"{name} has a kernel"
    else:
        for dev in DEVICES:
            assert (name, dev) in keys, f"{name} has no {dev} kernel"
    in_table = any(op.name == name for op in ELEMENTWISE_OPS)
    assert in_table or name in OTHER_OPS, f"{name} is missing from tests/op_table.py"
    if name in OTHER_OPS:
        importlib.import_module(f"tests.{OTHER_OPS[name]}")


@pytest.mark.parametrize("name", sorted(dispatch.primitives()))
def test_every_primitive_has_a_backward_decision(name):
    """A backward rule or an explicit 'not differentiable' (autograd fills the vjp slot)."""
    from strided.autograd import _rules

    assert name not in _rules.attach(), f"{name} has no backward rule and is not marked"
    vjp = dispatch.primitives()[name].vjp
    assert vjp is not None and (callable(vjp) or vjp == dispatch.NOT_DIFFERENTIABLE)


def test_op_table_entries_are_declared_primitives():
    declared = dispatch.primitives()
    for op in ELEMENTWISE_OPS:
        assert op.name in declared
        assert declared[op.name].accepts == op.accepts


FIRST_SLICE = """asarray zeros ones empty full zeros_like ones_like empty_like full_like
arange linspace
eye add subtract multiply divide floor_divide remainder pow negative positive abs equal
not_equal less less_equal greater greater_equal logical_and logical_or logical_xor
logical_not exp log sqrt sin cos tanh where sum prod max min mean cumulative_sum matmul
concat stack reshape permute_dims matrix_transpose expand_dims squeeze broadcast_to astype
result_type can_cast isdtype finfo iinfo""".split()


@pytest.mark.parametrize("name", FIRST_SLICE)
def test_namespace_functions_exist_with_docstrings(name):
    fn = getattr(xp, name)
    assert callable(fn) and fn.__doc__


def test_positional_only_signatures_follow_the_standard():
    assert str(inspect.signature(xp.add)) == "(x1, x2, /)"
    assert str(inspect.signature(xp.exp)) == "(x, /)"
    params = inspect.signature(xp.sum).parameters
    assert params["x"].kind is inspect.Parameter.POSITIONAL_ONLY
    assert params["axis"].kind is inspect.Parameter.KEYWORD_ONLY


def test_register_decorator_and_errors():
    with pytest.raises(KeyError, match="no such primitive"):
        dispatch.register("not_an_op", "cpu")
    with pytest.raises(ValueError, match="device type"):
        dispatch.register("add", "tpu")
    original = dispatch.kernel("add", "cpu")
    calls = []

    @dispatch.register("add", "cpu")
    def traced(out, x1, x2):
        calls.append((x1.shape, x2.shape))
        original(out, x1, x2)

    try:
        r = xp.add(xp.ones(3), xp.ones(3))
        assert calls == [((3,), (3,))] and float(xp.sum(r)) == 6.0
    finally:
        dispatch.register("add", "cpu")(original)
    # a primitive without a kernel on a device raises naming both (cuda: any primitive its
    # backend does not cover yet, or every one where the backend is not installed)
    keys = dispatch.registered()
    missing = [
        n
        for n, p in sorted(dispatch.primitives().items())
        if p.kind not in ("view", "composite") and (n, "cuda") not in keys
    ]
    if missing:
        with pytest.raises(NotImplementedError, match=f"{missing[0]}.*cuda"):
            dispatch.kernel(missing[0], "cuda")
