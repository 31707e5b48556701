"""Every exception that reaches a user names the function the user called and is one of the types
the namespace raises (TypeError, ValueError, IndexError, OverflowError, RuntimeError,
NotImplementedError; LinAlgError is a ValueError).

The elementwise ops of the op table get their rejected dtypes and non-broadcasting shapes; every
other function of the namespace and of its ``linalg`` and ``fft`` extensions gets a sweep of bad
calls (wrong dtypes, wrong ranks and shapes, bad axes, non-arrays), on cpu and on meta.  A bad call
may also be accepted (not every input is bad for every function); when it raises, the error must
follow the rule.
"""

from __future__ import annotations

import inspect

import pytest

import strided as xp

from .op_table import ELEMENTWISE_OPS

ALLOWED = (TypeError, ValueError, IndexError, OverflowError, RuntimeError, NotImplementedError)


def _check(name: str, call, *, must_raise: bool = False) -> bool:
    """Run ``call``; True when it raised (properly), AssertionError on an improper error."""
    try:
        call()
    except ALLOWED as e:
        short = name.rsplit(".", 1)[-1]
        msg = str(e)
        assert short in msg or name in msg, f"{name}: {type(e).__name__}({msg!r}) does not name it"
        return True
    except Exception as e:  # noqa: BLE001 - the point of the test
        raise AssertionError(f"{name}: raised {type(e).__module__}.{type(e).__name__}: {e}") from e
    assert not must_raise, f"{name}: accepted a bad call"
    return False


@pytest.mark.parametrize("device", ["cpu", "meta"])
@pytest.mark.parametrize("op", ELEMENTWISE_OPS, ids=lambda op: op.name)
def test_elementwise_ops_reject_bad_inputs_by_name(op, device):
    for d in op.rejected():
        x = xp.ones((2, 3), dtype=d, device=device)
        _check(op.name, lambda: op.fn(*[x] * op.arity), must_raise=True)  # noqa: B023
    ok = xp.ones((2, 3), dtype=op.accepted()[0], device=device)
    _check(op.name, lambda: op.fn(*[[1, 2]] * op.arity), must_raise=True)  # lists, not arrays
    if op.arity == 2:
        bad = xp.ones((4,), dtype=op.accepted()[0], device=device)
        _check(op.name, lambda: op.fn(ok, bad), must_raise=True)
        _check(op.name, lambda: op.fn(ok, "a"), must_raise=True)
        other = "meta" if device == "cpu" else "cpu"
        _check(
            op.name,
            lambda: op.fn(ok, xp.ones((2, 3), dtype=ok.dtype, device=other)),
            must_raise=True,
        )


def _functions():
    skip = {"asarray", "from_dlpack", "default_device", "get_default_device"}  # tested elsewhere
    skip |= {"save_file", "load_file"}  # checkpoint file I/O: tests/nn/test_checkpoint.py
    elementwise = {op.name for op in ELEMENTWISE_OPS}
    out = []
    for prefix, mod in (("", xp), ("linalg.", xp.linalg), ("fft.", xp.fft)):
        for n in sorted(dir(mod)):
            f = getattr(mod, n)
            if n.startswith("_") or not inspect.isfunction(f) or n in skip:
                continue
            if not prefix and n in elementwise:
                continue
            out.append((prefix + n, f))
    return out


def _bad_calls(device):
    """Bad arguments for any function: (label, args, kwargs)."""
    f64 = xp.ones((2, 3), device=device)
    sq = xp.ones((3, 3), device=device)
    i64 = xp.ones((2, 3), dtype=xp.int64, device=device)
    b = xp.ones((2, 3), dtype=xp.bool, device=device)
    c = xp.ones((2, 3), dtype=xp.complex64, device=device)
    z = xp.asarray(1.0, device=device)
    e = xp.ones((0, 3), device=device)
    v = xp.ones((4,), device=device)
    return [
        ("bool", (b,), {}),
        ("complex", (c,), {}),
        ("int", (i64,), {}),
        ("0-d", (z,), {}),
        ("empty", (e,), {}),
        ("axis=7", (f64,), {"axis": 7}),
        ("axis=-9", (sq,), {"axis": -9}),
        ("axis=(0, 0)", (f64,), {"axis": (0, 0)}),
        ("axis=1.5", (f64,), {"axis": 1.5}),
        ("shapes", (f64, v), {}),
        ("shapes3", (f64, v, sq), {}),
        ("dtypes", (f64, b), {}),
        ("int+uint", (i64, xp.ones((2, 3), dtype=xp.uint64, device=device)), {}),
        ("list", ([1.0, 2.0],), {}),
        ("string", ("x",), {}),
        ("None", (None,), {}),
        ("negative", (-3,), {}),
        ("shape", ((2, -3),), {}),
        ("dtype", ((2,),), {"dtype": "float"}),
        ("n", (f64,), {"n": -2}),
        ("k", (sq,), {"k": 1.5}),
    ]


_FUNCTIONS = _functions()


@pytest.mark.parametrize("device", ["cpu", "meta"])
@pytest.mark.parametrize("name,fn", _FUNCTIONS, ids=[n for n, _ in _FUNCTIONS])
def test_functions_raise_proper_errors_naming_themselves(name, fn, device):
    raised = 0
    for _label, args, kwargs in _bad_calls(device):
        raised += _check(name, lambda: fn(*args, **kwargs))  # noqa: B023 - called at once
    if name not in ("finfo", "iinfo", "isdtype", "can_cast", "result_type"):
        assert raised, f"{name}: no bad call was refused"


def test_the_check_can_fail():
    def leaks():
        return {}["key"]

    with pytest.raises(AssertionError, match="KeyError"):
        _check("leaks", leaks)
    with pytest.raises(AssertionError, match="does not name it"):
        _check("sum", lambda: xp.mean(xp.asarray([1, 2], dtype=xp.bool)))


@pytest.mark.parametrize("device", ["cpu", "meta"])
def test_array_operators_and_indexing_raise_allowed_errors(device):
    x = xp.ones((2, 3), device=device)
    b = xp.ones((2, 3), dtype=xp.bool, device=device)
    cases = {
        "add": lambda: x + "a",
        "matmul": lambda: x @ xp.ones((4,), device=device),
        "bitwise_and": lambda: x & x,
        "less": lambda: x < xp.ones((2, 3), dtype=xp.complex64, device=device),
        "index": lambda: x[5],
        "index ": lambda: x[0, 0, 0],
        "ndex": lambda: x[1.5],
        "Ellipsis": lambda: x[..., ..., 0],
        "boolean": lambda: x[xp.ones((3,), dtype=xp.bool, device=device)],
        "__setitem__": lambda: x.__setitem__(0, xp.ones((4,), device=device)),
        "__setitem__ ": lambda: b.__setitem__(0, 1.5),
        "bool": lambda: bool(x),
        "int": lambda: int(xp.asarray(1 + 1j, device=device)),
    }
    for name, call in cases.items():
        try:
            call()
        except ALLOWED:
            continue
        except Exception as e:  # noqa: BLE001
            raise AssertionError(f"{name}: {type(e).__module__}.{type(e).__name__}: {e}") from e
        raise AssertionError(f"{name!r} was accepted")


def test_named_wrapper_keeps_the_signature_and_passes_arguments_as_given():
    """``named`` wraps a public function in a generated wrapper with the function's own
    parameters (positional-only, defaults, ``*args``, keyword-only, ``**kwargs``): every way of
    calling it reaches the function unchanged, the signature reads the same, an inner error is
    raised again naming the function (same type, the inner one as its cause), and an error
    already naming it, or outside the named types, passes unchanged."""
    from strided._errors import named

    def inner(a, b=2, /, c=3, *rest, d, e=5, **extra):
        if a == "bad":
            raise ValueError("helper: went wrong")
        if a == "mine":
            raise TypeError("op: already named")
        if a == "key":
            raise KeyError("not a named type")
        return (a, b, c, rest, d, e, extra)

    wrapped = named("op")(inner)
    assert inspect.signature(wrapped) == inspect.signature(inner)
    assert wrapped.__name__ == "inner" and wrapped.__wrapped__ is inner
    assert wrapped(1, d=4) == (1, 2, 3, (), 4, 5, {})
    assert wrapped(1, 7, 8, 9, 10, d=4, e=6, f=11) == (1, 7, 8, (9, 10), 4, 6, {"f": 11})
    assert wrapped(1, c=8, d=4) == (1, 2, 8, (), 4, 5, {})
    with pytest.raises(TypeError):
        wrapped(1)  # d is required, as for the function itself
    with pytest.raises(TypeError):
        wrapped(a=1, d=4)  # a is positional-only
    with pytest.raises(ValueError, match=r"^op: went wrong$") as info:
        wrapped("bad", d=4)
    assert isinstance(info.value.__cause__, ValueError)
    with pytest.raises(TypeError, match=r"^op: already named$") as info:
        wrapped("mine", d=4)
    assert info.value.__cause__ is None
    with pytest.raises(KeyError):
        wrapped("key", d=4)


def test_forwarding_passes_parameters_by_name_from_a_position():
    """The composites' call wrapper (``forwarding(..., by_name_from=n_data)``): the data
    arguments go on positionally, every later parameter by name (as the tape records them),
    defaults filled in; the signature stays the function's."""
    from strided._errors import forwarding

    seen = []

    def target(*args, **kwargs):
        seen.append((args, kwargs))
        return len(seen)

    def rule(x, y, /, axis=0, *, keepdims=False):
        pass

    call = forwarding(rule, target, by_name_from=1)
    assert inspect.signature(call) == inspect.signature(rule)
    assert call(1, 2) == 1 and seen[-1] == ((1,), {"y": 2, "axis": 0, "keepdims": False})
    call(1, 2, 3, keepdims=True)
    assert seen[-1] == ((1,), {"y": 2, "axis": 3, "keepdims": True})
    call(1, 2, axis=5)
    assert seen[-1] == ((1,), {"y": 2, "axis": 5, "keepdims": False})
    assert xp.concat.primitive.name == "concat"  # the namespace's composites are made so


def test_a_composite_whose_parameters_cannot_go_by_name_is_refused_when_declared():
    """A composite's extra arguments reach its rule by name; one taking ``*args`` after its
    data could not, and is refused where it is declared (not on its first call)."""
    from strided import dispatch

    try:
        with pytest.raises(TypeError, match="composite 'test_star_args'"):

            @dispatch.composite("test_star_args", 1)
            def rule(x, *more):
                return x
    finally:
        dispatch._PRIMITIVES.pop("test_star_args", None)


def test_functions_that_only_call_their_primitive_are_not_wrapped_again():
    """Public functions whose body is a call of the primitive of their name are left unwrapped
    (the dispatcher names the primitive's errors, as the test above checks for every function);
    compositions keep the wrapper that renames their inner functions' errors."""
    for name in ("take", "where", "sort", "cumulative_sum", "var", "flip", "argmax", "concat"):
        fn = getattr(xp, name)
        assert getattr(fn, "names_its_errors", False) and not hasattr(fn, "__wrapped__"), name
    for name in ("clip", "std", "reshape", "searchsorted"):
        assert hasattr(getattr(xp, name), "__wrapped__"), name
    with pytest.raises(IndexError, match="^take: "):
        xp.take(xp.arange(3), xp.asarray([5]))
    with pytest.raises(ValueError, match="^cumulative_sum: "):
        xp.cumulative_sum(xp.ones((2, 2)))
