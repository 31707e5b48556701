"""The op pipeline: primitives carry their rules, meta runs only the rules, kernels see what the
rules planned, device transfer and memory sharing go through the backends, and the package's
imports point one way."""

from __future__ import annotations

import ast
import pathlib

import numpy as np
import pytest

import strided as xp
from strided import dispatch

PACKAGE = pathlib.Path(xp.__file__).parent


def _replaced(op: str, device: str, wrapper):
    """Context: ``wrapper(original)`` is the kernel of ``op`` on ``device`` inside the block."""

    class Swap:
        def __enter__(self):
            self.original = dispatch.kernel(op, device)
            dispatch.register(op, device)(wrapper(self.original))

        def __exit__(self, *exc):
            dispatch.register(op, device)(self.original)

    return Swap()


def test_every_primitive_has_a_rule():
    missing = [n for n, p in dispatch.primitives().items() if p.rule is None]
    # interchange primitives are backend functions (export, import_host), writes (fill, scatter)
    # run on a target that exists: neither allocates an output for a rule to describe
    assert all(dispatch.primitive(n).kind in ("interchange", "write") for n in missing), missing


def test_meta_runs_no_kernel():
    def refuse(original):
        def kernel(*args, **kwargs):
            raise AssertionError("a kernel ran")

        return kernel

    with _replaced("add", "meta", refuse), _replaced("sum", "meta", refuse):
        a = xp.ones((3, 4), device="meta")
        assert xp.sum(a + a, axis=0).shape == (4,)  # the rules alone
    with _replaced("add", "cpu", refuse), pytest.raises(AssertionError, match="kernel ran"):
        xp.ones(3) + xp.ones(3)


@pytest.mark.parametrize(
    "call",
    [
        lambda d: xp.max(xp.zeros((0, 3), device=d), axis=0),
        lambda d: xp.argmax(xp.zeros((2, 0), device=d), axis=1),
        lambda d: xp.matmul(xp.ones((2, 3), device=d), xp.ones((2, 3), device=d)),
        lambda d: xp.reshape(xp.ones((2, 3), device=d), (4,)),
        lambda d: xp.add(xp.ones(3, device=d), xp.ones(4, device=d)),
        lambda d: xp.sum(xp.ones(3, dtype=xp.bool, device=d) + 1),
        lambda d: xp.take(xp.ones((2, 2), device=d), xp.ones(2, device=d), axis=0),
        lambda d: xp.where(xp.ones(3, device=d), 1.0, 2.0),
        lambda d: xp.broadcast_to(xp.ones(3, device=d), (-1, 3)),
    ],
)
def test_meta_raises_what_cpu_raises(call):
    with pytest.raises(Exception) as on_cpu:
        call("cpu")
    with pytest.raises(type(on_cpu.value)):
        call("meta")


def test_python_scalars_reach_kernels_as_scalars():
    seen = []

    def spy(original):
        def kernel(out, x1, x2):
            seen.append((type(x1), type(x2)))
            original(out, x1, x2)

        return kernel

    with _replaced("multiply", "cpu", spy):
        r = xp.asarray([1.0, 2.0]) * 1.5
        r2 = 2 * xp.asarray([1, 2])
    assert seen == [(xp.Array, float), (int, xp.Array)]
    assert np.asarray(r).tolist() == [1.5, 3.0] and np.asarray(r2).tolist() == [2, 4]


def test_replacing_a_kernel_takes_effect_on_memoized_calls():
    x = xp.asarray(np.arange(6.0))
    assert float(xp.sum(x)) == 15.0  # the plan is memoized now

    def doubled(original):
        def kernel(out, x, **params):
            original(out, x, **params)
            out._buf[...] *= 2

        return kernel

    with _replaced("sum", "cpu", doubled):
        assert float(xp.sum(x)) == 30.0
    assert float(xp.sum(x)) == 15.0


def test_device_transfer_goes_through_the_backend():
    calls = []

    def spy(original):
        def kernel(out, x):
            calls.append(x.device)
            original(out, x)

        return kernel

    x = xp.asarray([1.0, 2.0])
    m = x.to_device("meta")
    assert m.device == xp.Device("meta") and m.shape == (2,) and m.dtype == xp.float64
    with pytest.raises(RuntimeError, match="no data"):
        m.to_device("cpu")
    # cpu -> cpu with a differently spelled device returns the array itself
    assert x.to_device(xp.Device("cpu")) is x
    with _replaced("to_device", "cpu", spy):
        assert x.to_device("meta").device == xp.Device("meta")
    assert calls == []  # moving to meta moves no data: no kernel runs


def test_memory_is_shared_through_the_backend_export():
    calls = []

    def spy(original):
        def kernel(x):
            calls.append(x.shape)
            return original(x)

        return kernel

    x = xp.reshape(xp.arange(6.0), (2, 3)).mT
    with _replaced("export", "cpu", spy):
        a = np.asarray(x)
        b = np.from_dlpack(x)
        v = float(x[1, 0])
    assert calls == [(3, 2), (3, 2), ()]
    np.testing.assert_array_equal(a, np.arange(6.0).reshape(2, 3).T)
    np.testing.assert_array_equal(b, a)
    assert v == 1.0
    with pytest.raises(RuntimeError, match="meta array has no data"):
        np.asarray(xp.ones(2, device="meta"))


def test_array_defines_its_own_attributes():
    """Nothing is patched onto Array: every function in its namespace comes from strided._array."""
    for name, value in vars(xp.Array).items():
        fn = value.fget if isinstance(value, property) else value
        if callable(fn) and hasattr(fn, "__module__"):
            assert fn.__module__ == "strided._array", (name, fn.__module__)


def _imports(path: pathlib.Path) -> set[str]:
    """The strided modules ``path`` imports (module level or inside functions)."""
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    package = parts[:-1] if parts[-1] != "__init__" else parts[:-1]
    if parts[-1] == "__init__":
        parts = parts[:-1]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level:
            base = package[: len(package) - node.level + 1]
            target = base + (node.module.split(".") if node.module else [])
            names = [target + [a.name] for a in node.names] if not node.module else [target]
            for t in names:
                found.add(".".join(t))
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.split(".")[0] == "strided")
    return found


def test_imports_point_one_way():
    """No import circle among strided's modules (function-level imports included); the package
    root is imported by nothing inside it."""
    modules = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        modules[name] = path
    graph = {}
    for name, path in modules.items():
        deps = set()
        for target in _imports(path):
            while target and target not in modules:
                target = target.rpartition(".")[0]
            if target and target != name:
                deps.add(target)
        graph[name] = deps
    assert not any("strided" in deps for name, deps in graph.items() if name != "strided")
    # a package's __init__ imports its own submodules; that is not a circle
    state: dict[str, int] = {}

    def visit(node, stack):
        state[node] = 1
        for dep in graph[node]:
            if dep.startswith(node + "."):
                continue
            if state.get(dep) == 1:
                raise AssertionError(" -> ".join([*stack, node, dep]))
            if dep not in state:
                visit(dep, [*stack, node])
        state[node] = 2

    for node in graph:
        if node not in state:
            visit(node, [])


def test_observe_reports_every_primitive_call_and_leaves_no_trace():
    x = xp.asarray(np.ones((3, 4)), requires_grad=True)
    w = xp.asarray(np.ones((4, 5)))
    for _ in range(2):  # the second round runs the memoized fast lanes
        xp.sum(xp.tanh(x @ w) * 2.0)
    calls = []

    def seen(prim, args, params, out, depth):
        calls.append((prim.name, depth, out.shape))

    classes = {name: type(p) for name, p in dispatch.primitives().items()}
    with dispatch.observe(seen):
        # prim.call, the public functions' method form of prim(...), reports as the call does
        assert all(type(p).call is type(p).__call__ for p in dispatch.primitives().values())
        y = xp.sum(xp.tanh(x @ w) * 2.0)
        forward = [c for c in calls if c[1] == 0]
        y.backward()
    assert forward == [
        ("matmul", 0, (3, 5)),
        ("tanh", 0, (3, 5)),
        ("multiply", 0, (3, 5)),
        ("sum", 0, ()),
    ]
    backward = [c for c in calls if c[1] == 0][len(forward) :]
    assert ("matmul", 0, (3, 4)) in backward  # the gradient of x
    assert {name: type(p) for name, p in dispatch.primitives().items()} == classes
    assert all(type(p).call is type(p).__call__ for p in dispatch.primitives().values())
    n = len(calls)
    xp.sum(x)
    assert len(calls) == n  # outside the block nothing is reported
    np.testing.assert_allclose(np.asarray(x.grad), 2 * 5 * (1 - np.tanh(4.0) ** 2), rtol=1e-12)


def test_int_scalars_with_integer_arrays_are_memoized_and_still_range_checked():
    """An in-range Python int takes the array's dtype, so its calls share one plan; a value out
    of the dtype's range raises on every call, before and after a plan exists; the result follows
    a transposed operand's layout."""
    x = xp.asarray(np.arange(-6, 6, dtype=np.int8).reshape(3, 4))
    for _ in range(3):
        for v in (5, -128, 127):
            np.testing.assert_array_equal(
                np.asarray(x + v), np.asarray(x).astype(np.int8) + np.int8(v)
            )
            np.testing.assert_array_equal(np.asarray(v - x), np.int8(v) - np.asarray(x))
        for v in (128, -129, 2**70):
            with pytest.raises(OverflowError, match="out of range"):
                x + v
            with pytest.raises(OverflowError, match="out of range"):
                v * x
    assert (x.T + 1)._strides == x.T._strides


def test_repeated_calls_in_mixed_layouts_take_the_right_lane():
    """The memoized lanes for a repeated call (one or two arrays, an array and a Python scalar)
    serve operands in C order and operands sharing another dense order (the output then takes
    that order, as NumPy's order='K'); other layouts (different orders, steps) take the general
    route.  Alternating them over one shape and dtype keeps every value and layout right."""
    base = np.arange(24.0).reshape(4, 6) - 7.5
    c = xp.asarray(base.T.copy())  # (6, 4), C order
    t = xp.asarray(base).T  # (6, 4), transposed
    t2 = xp.asarray(base * 2).T
    stepped = xp.asarray(np.arange(48.0).reshape(6, 8))[:, ::2]  # (6, 4), a step
    layouts = [(c, c), (t, t2), (c, t), (t, stepped), (stepped, stepped), (t2, t)]
    for _ in range(2):
        for a, b in layouts:
            na, nb = np.asarray(a), np.asarray(b)
            for got, want in (
                (xp.negative(a), -na),
                (xp.add(a, b), na + nb),
                (a * 3.0, na * 3.0),
                (2.0 - b, 2.0 - nb),
            ):
                np.testing.assert_array_equal(np.asarray(got), want)
            same_order = a._strides == b._strides and a._strides == t._strides
            assert (xp.add(a, b)._strides == t._strides) is same_order
            assert (xp.negative(a)._strides == t._strides) is (a._strides == t._strides)


def test_import_loads_neither_numba_nor_nn_until_they_are_used():
    """``import strided`` stays light (cold start): numba comes with the first kernel call,
    ``nn``/``optim``/``utils`` on first use, and both routes give the same modules."""
    import subprocess
    import sys

    code = (
        "import sys, strided as xp\n"
        "assert 'numba' not in sys.modules and 'strided.nn' not in sys.modules, 'eager'\n"
        "assert {'nn', 'optim', 'utils'} <= set(dir(xp))\n"
        "import strided.nn as nn_module\n"
        "assert xp.nn is nn_module and xp.optim.SGD and xp.utils.data.DataLoader\n"
        "xp.exp(xp.ones(3))\n"
        "assert 'numba' in sys.modules\n"
        "try:\n"
        "    xp.no_such_thing\n"
        "except AttributeError as e:\n"
        "    assert 'no_such_thing' in str(e)\n"
        "else:\n"
        "    raise AssertionError('no AttributeError')\n"
        "print('ok')\n"
    )
    root = pathlib.Path(__file__).resolve().parents[1]
    r = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr[-3000:]


def test_observe_reports_a_concat_whose_plan_is_memoized():
    """concat's public function runs a memoized plan without the primitive around it; under
    observation it goes through the primitive, which reports it."""
    a = xp.asarray(np.arange(6.0))
    xp.concat([a, a]), xp.concat([a, a])  # the plan and its writer are kept
    calls = []
    with dispatch.observe(lambda prim, args, params, out, depth: calls.append((prim.name, depth))):
        out = xp.concat([a, a])
    assert calls == [("concat", 0)]
    np.testing.assert_array_equal(np.asarray(out), np.tile(np.arange(6.0), 2))


def test_observe_reports_a_flip_whose_geometry_is_remembered():
    """flip's public function makes the view of a remembered geometry without the primitive;
    under observation it goes through the primitive, which reports it."""
    a = xp.asarray(np.arange(6.0))
    xp.flip(a), xp.flip(a)
    calls = []
    with dispatch.observe(lambda prim, args, params, out, depth: calls.append((prim.name, depth))):
        out = xp.flip(a)
    assert calls == [("flip", 0)]
    np.testing.assert_array_equal(np.asarray(out), np.arange(6.0)[::-1])


def test_creation_by_fill_reports_to_observers_and_fills_every_device():
    """zeros/ones/full/arange/linspace allocate and run the device's kernel directly; under
    observation they go through the primitive, which reports each call; meta arrays get shapes
    only."""
    calls = []
    with dispatch.observe(lambda prim, args, params, out, depth: calls.append(prim.name)):
        xp.zeros(3), xp.ones((2, 2)), xp.full((4,), 7), xp.arange(5), xp.linspace(0, 1, 3)
    assert calls == ["full", "full", "full", "arange", "linspace"]
    for n in (1, 70, 70000):
        np.testing.assert_array_equal(np.asarray(xp.full((n,), 2.5)), np.full(n, 2.5))
        np.testing.assert_array_equal(np.asarray(xp.zeros((2, n), dtype=xp.int8)), 0)
    m = xp.ones((5, 6), device="meta")
    assert m.shape == (5, 6) and m.device == xp.Device("meta")


def test_a_memoized_plan_still_records_a_tracked_call():
    """A memoized plan is looked up before the tracking test (which then looks at the plan's
    array positions only): after untracked calls made the plans, the same calls with a tracked
    input (or a view of one) record, and their gradients are the elementwise ones NumPy gives;
    the untracked calls after them still run and record nothing."""
    rng = np.random.default_rng(2)
    a = rng.standard_normal((4, 5))
    idx = xp.asarray(np.array([3, 0, 3, 1]))
    ops = [
        (lambda t: xp.take(t, idx, axis=1), lambda g: np.add.at(g, (slice(None), [3, 0, 3, 1]), 1)),
        (lambda t: xp.astype(t, xp.float32), lambda g: g.__iadd__(1)),
        (lambda t: xp.where(t > 0, t, 0.5), lambda g: g.__iadd__(a > 0)),
        (lambda t: xp.cumulative_sum(t, axis=1), lambda g: g.__iadd__(np.arange(5, 0, -1))),
        (lambda t: xp.concat([t, 2 * plain, t], axis=1), lambda g: g.__iadd__(2)),
    ]
    for fn, expected in ops:
        plain = xp.asarray(a)
        fn(plain), fn(plain)  # the plan is memoized
        leaf = xp.asarray(a, requires_grad=True)
        for tracked in (leaf, leaf[...]):
            leaf.grad = None
            xp.sum(xp.astype(fn(tracked), xp.float64)).backward()
            want = np.zeros_like(a)
            expected(want)
            np.testing.assert_allclose(np.asarray(leaf.grad), want)
        assert fn(plain)._ag is None


def test_large_casts_of_elementwise_inputs_use_the_backends_lent_memory(monkeypatch):
    """A large input cast for an elementwise kernel (int16 for exp and divide, float32 beside
    float64, the values of where and clip) lives in the backend's temporary memory, one slot per
    input position: the results are NumPy's, and bit for bit those of the same calls with
    fresh buffers (a wrapped allocator); a second call leaves the first result alone, and two
    casts in one call do not share memory.  Small casts and other kinds of primitive (matmul)
    take fresh buffers."""
    import strided.backends.cpu as cpu

    lent = []

    def spy(size, dtype, slot, f=cpu._temporary_cpu):
        lent.append((size, dtype.name, slot))
        return f(size, dtype, slot)

    monkeypatch.setattr(cpu.empty_cpu, "temporary", spy)
    n = dispatch._TEMPORARY_MIN + 5
    rng = np.random.default_rng(11)
    i16 = rng.integers(-300, 300, n).astype(np.int16)
    j16 = rng.integers(1, 50, n).astype(np.int16)
    f32 = rng.standard_normal(n).astype(np.float32)
    f64 = rng.standard_normal(n)
    cond = rng.random(n) > 0.5
    si, sj, s32, s64, sc = (xp.asarray(a) for a in (i16, j16, f32, f64, cond))
    calls = [  # (call, inputs it casts, NumPy's values)
        (lambda: xp.exp(si / 100), 1, np.exp(i16 / 100)),
        (lambda: xp.divide(si, sj), 2, i16 / j16),
        (lambda: s32 + s64, 1, f32 + f64),
        (lambda: xp.where(sc, s32, s64), 1, np.where(cond, f32, f64)),
        (lambda: xp.clip(s32, s64 - 1, s64 + 1), 1, np.clip(f32, f64 - 1, f64 + 1)),
    ]
    wrapped = dispatch.EMPTY.kernels["cpu"]
    with monkeypatch.context() as m:  # fresh buffers: the allocator wrapped, nothing lent
        m.setitem(dispatch.EMPTY.kernels, "cpu", lambda size, dtype: wrapped(size, dtype))
        fresh = [np.asarray(call()) for call, _, _ in calls]
    assert lent == []
    for (call, casts, want), same in zip(calls, fresh):
        lent.clear()
        first = call()
        assert len(lent) == casts and len({slot for _, _, slot in lent}) == casts
        np.testing.assert_array_equal(np.asarray(first), same)
        np.testing.assert_allclose(np.asarray(first), want, rtol=1e-6)
        call()  # the same temporary memory again: the first result is its own
        np.testing.assert_array_equal(np.asarray(first), same)
    lent.clear()
    small = xp.asarray(i16[:100])
    np.testing.assert_allclose(np.asarray(xp.exp(small)), np.exp(i16[:100] / 1.0), rtol=1e-14)
    m16, m64 = xp.reshape(si[: 256 * 256], (256, 256)), xp.reshape(s64[: 256 * 256], (256, 256))
    want = np.asarray(m16).astype(np.float64) @ np.asarray(m64)
    np.testing.assert_allclose(np.asarray(m16 @ m64), want, rtol=1e-12)
    assert lent == []  # a small cast, and matmul's
