"""The cuda backend without a GPU: its real launch code runs the CUDA C kernels on the host
execution layer (``strided/backends/cuda/_host``), compared with the cpu backend over the op
table's samples (every layout and dtype there); the host layer's own checks (barriers in several
thread orders, argument widths, a barrier reached by part of a block)."""

from __future__ import annotations

import numpy as np
import pytest

import strided as xp

from .cuda_cases import CASES, HOST_EXECUTION_MARKS, check_against_cpu

pytestmark = [*HOST_EXECUTION_MARKS, pytest.mark.usefixtures("cuda_host")]


@pytest.mark.parametrize("op,s", CASES)
def test_op_table_on_host_matches_cpu(op, s):
    check_against_cpu(op, s)


# the kernels with barriers and shuffles
BARRIER_OPS = (
    "sum", "prod", "max", "any", "cumulative_sum", "cumulative_prod", "argmax", "argmin", "matmul",
)  # fmt: skip
REDUCTION_CASES = [c for c in CASES if c.values[0].name in BARRIER_OPS]


@pytest.mark.parametrize("order", ["reverse", "shuffled"])
@pytest.mark.parametrize("op,s", REDUCTION_CASES)
def test_barrier_kernels_in_other_thread_orders(op, s, order):
    from strided.backends.cuda._host import thread_order

    with thread_order(order, seed=7):
        check_against_cpu(op, s)


def _host(x) -> np.ndarray:
    """A cuda array's values on the host: the copy is explicit (``__array__`` refuses it)."""
    return np.asarray(x.to_device("cpu"))


def test_array_protocol_refuses_an_implicit_copy_to_the_host():
    x = xp.asarray(np.arange(6.0), device="cuda")
    with pytest.raises(TypeError, match=r"to_device\('cpu'\)"):
        np.asarray(x)
    with pytest.raises(TypeError, match="cuda"):
        np.array(x, copy=True)
    np.testing.assert_array_equal(_host(x), np.arange(6.0))
    np.testing.assert_array_equal(np.asarray(xp.asarray(x, device="cpu")), np.arange(6.0))
    assert float(xp.sum(x)) == 15.0  # scalar conversion stays allowed, as in PyTorch


def test_device_transfers_and_layouts():
    a = np.arange(24.0).reshape(2, 3, 4)
    x = xp.asarray(a, device="cuda")
    assert x.device == xp.Device("cuda", 0) and str(x.device) == "cuda:0"
    assert xp.asarray(a, device="cuda:0").device == x.device
    back = x.to_device("cpu")
    assert back.device == "cpu" and np.array_equal(np.asarray(back), a)
    # strided views move through a gather on the device
    v = x[:, ::-1, 1::2]
    np.testing.assert_array_equal(np.asarray(v.to_device("cpu")), a[:, ::-1, 1::2])
    m = v.to_device("meta")
    assert m.device == "meta" and m.shape == v.shape
    with pytest.raises(RuntimeError, match="meta"):
        m.to_device("cuda")
    with pytest.raises(ValueError, match="different devices"):
        x + xp.asarray(a)


def test_large_reduction_and_elementwise():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((120, 700))  # 84,000 elements: 83 blocks of a full reduction
    x = xp.asarray(a, device="cuda")
    np.testing.assert_allclose(float(xp.sum(x)), a.sum(), rtol=1e-10)
    np.testing.assert_allclose(_host(xp.sum(x, axis=0)), a.sum(axis=0), rtol=1e-10)
    np.testing.assert_allclose(_host(xp.max(x.mT, axis=1)), a.max(axis=0))
    np.testing.assert_allclose(_host(xp.exp(x[::2, ::-3])), np.exp(a[::2, ::-3]), rtol=1e-13)


@pytest.mark.parametrize("order", ["forward", "reverse", "shuffled"])
def test_long_rows_span_several_chunks(order):
    from strided.backends.cuda._host import thread_order

    rng = np.random.default_rng(1)
    a = rng.standard_normal((3, 1000))
    a[1, 700] = a[1].max() + 1  # a unique maximum in the third chunk of 256
    x = xp.asarray(a, device="cuda")
    with thread_order(order, seed=5):
        np.testing.assert_allclose(
            _host(xp.cumulative_sum(x, axis=1)), np.cumsum(a, axis=1), rtol=1e-12, atol=1e-12
        )
        np.testing.assert_allclose(
            _host(xp.cumulative_sum(x[:, ::-1].mT, axis=0)),
            np.cumsum(a[:, ::-1].T, axis=0),
            rtol=1e-12,
            atol=1e-12,
        )
        assert _host(xp.argmax(x, axis=1)).tolist() == a.argmax(axis=1).tolist()
        assert int(xp.argmin(x.mT)) == a.T.argmin()


@pytest.mark.parametrize("order", ["forward", "reverse", "shuffled"])
def test_one_pass_full_reductions(order):
    from strided.backends.cuda._host import thread_order

    rng = np.random.default_rng(2)
    # tens of blocks each (1024 elements a block): host execution runs every thread as a fiber
    ints = rng.integers(-1000, 1000, size=(30, 1001))
    floats = rng.standard_normal(90_001).astype(np.float32)
    floats[63_456] = np.nan
    with thread_order(order, seed=11):
        for _ in range(2):  # the counter the last block resets serves the next launch
            x = xp.asarray(ints, device="cuda")
            assert int(xp.sum(x)) == ints.sum()
            assert int(xp.sum(x[::-1, ::3])) == ints[::-1, ::3].sum()
            assert int(xp.max(x.mT)) == ints.max() and int(xp.min(x)) == ints.min()
            assert bool(xp.all(x != 5000)) and not bool(xp.any(x == 5000))
            f = xp.asarray(floats, device="cuda")
            assert np.isnan(float(xp.max(f))) and np.isnan(float(xp.sum(f)))
            np.testing.assert_allclose(float(xp.sum(f[:63_000])), floats[:63_000].sum(),
                                       rtol=1e-4)  # fmt: skip


def test_reduction_over_axes_that_do_not_merge():
    a = np.arange(2 * 3 * 4 * 5 * 6, dtype=np.float64).reshape(2, 3, 4, 5, 6)
    x = xp.asarray(a, device="cuda")
    got = xp.sum(x[:, :, ::2, :, ::-1], axis=(0, 2, 4))
    np.testing.assert_allclose(_host(got), a[:, :, ::2, :, ::-1].sum(axis=(0, 2, 4)))


# -- the host layer itself ------------------------------------------------------------------------
_BLOCK_SUM = r"""
template <class T>
__global__ void block_sum(const T* x, T* out, long long n) {
    __shared__ T s[256];
    s[threadIdx.x] = threadIdx.x < n ? x[threadIdx.x] : (T)0;
    BARRIER
    for (unsigned w = blockDim.x / 2; w > 0; w /= 2) {
        if (threadIdx.x < w) s[threadIdx.x] += s[threadIdx.x + w];
        BARRIER
    }
    if (threadIdx.x == 0) out[0] = s[0];
}
extern "C" __global__ void early_return(int* out, int n) {
    if ((int)threadIdx.x < n) return;
    __syncthreads();
    out[0] = 1;
}
"""


def test_a_missing_barrier_shows_in_some_thread_order():
    from strided.backends.cuda._host import HostModule, thread_order

    x = np.arange(256.0)
    good = HostModule(_BLOCK_SUM.replace("BARRIER", "__syncthreads();"), ["block_sum<double>"])
    # without barriers the kernel runs as a plain loop; give it fibers with a harmless __syncwarp
    bad = HostModule(
        _BLOCK_SUM.replace("BARRIER", "").replace("long long n) {", "long long n) { __syncwarp();"),
        ["block_sum<double>"],
    )
    results = {}
    for order in ("forward", "reverse", "shuffled"):
        with thread_order(order, seed=1):
            for name, mod in (("good", good), ("bad", bad)):
                out = np.zeros(1)
                mod.get_function("block_sum<double>")((1,), (256,), (x, out, 256))
                results[name, order] = out[0]
    assert all(results["good", o] == x.sum() for o in ("forward", "reverse", "shuffled"))
    assert any(results["bad", o] != x.sum() for o in ("forward", "reverse", "shuffled"))


def test_argument_width_and_partial_barrier_are_caught():
    from strided.backends.cuda._host import HostLaunchError, HostModule

    mod = HostModule(_BLOCK_SUM.replace("BARRIER", "__syncthreads();"), ["early_return"])
    fn = mod.get_function("early_return")
    out = np.zeros(1, np.int32)
    with pytest.raises(HostLaunchError, match="8 bytes.*4 bytes"):
        fn((1,), (64,), (out, 3))  # a Python int is 64-bit: garbage for an int parameter
    with pytest.raises(HostLaunchError, match="part of a block"):
        fn((1,), (64,), (out, np.int32(3)))


_SPECIAL = [0.0, -0.0, 0.5, -1.5, 3.0, 1e300, -1e-310, np.inf, -np.inf, np.nan]
_SPECIAL_OPS = [
    "exp", "expm1", "log", "log1p", "log2", "log10", "sqrt", "sin", "cos", "tan", "sinh",
    "cosh", "tanh", "abs", "sign", "reciprocal", "round", "isnan", "isinf", "isfinite",
]  # fmt: skip


@pytest.mark.parametrize("dtype", ["complex128", "complex64", "float64", "float32"])
@pytest.mark.parametrize("name", _SPECIAL_OPS)
def test_special_values_agree_with_cpu(name, dtype):
    """Real floats: every special value as on cpu.  Complex: where the input and cpu's result
    are finite (the kernels follow C99 Annex G at infinities and NaNs, where the cpu backend's
    numba paths give NaN + NaN j in several cases the standard specifies otherwise, e.g.
    sin(0 + NaN j) = 0 + NaN j, exp(1e300 + 0j) = inf + 0j)."""
    fn = getattr(xp, name)
    with np.errstate(all="ignore"):  # 1e300 overflows to inf in single precision
        if dtype.startswith("complex"):
            values = np.array([complex(a, b) for a in _SPECIAL for b in _SPECIAL], dtype=dtype)
        else:
            values = np.array(_SPECIAL, dtype=dtype)
        want = np.asarray(fn(xp.asarray(values)))
        got = _host(fn(xp.asarray(values, device="cuda")))
    rtol = 1e-5 if dtype in ("complex64", "float32") else 1e-12
    if dtype.startswith("complex"):
        keep = np.isfinite(values) & np.isfinite(want)
        got, want = got[keep], want[keep]
    # atol: log1p(-1e-310) is -1e-310 (cpu: 0), both within any tolerance of the other
    np.testing.assert_allclose(got, want, rtol=rtol, atol=1e-300, equal_nan=True, err_msg=name)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int16", "uint8", "complex64", "bool"])
@pytest.mark.parametrize("descending", [False, True])
def test_long_rows_merge_sort_matches_cpu(dtype, descending):
    """Rows longer than the rank sort's limit (the merge sort): values and stable positions, ties
    and NaN included, along the last and a leading axis."""
    from strided.backends import cuda

    n = cuda.RANK_SORT_MAX_ROW * 2 + 37
    rng = np.random.default_rng(3)
    a = rng.integers(0, 40, size=(2, n)).astype(dtype)  # many ties
    if dtype.startswith("float"):
        a[0, rng.integers(0, n, 30)] = np.nan
    if dtype.startswith("complex"):
        a = a + 1j * rng.integers(0, 3, size=a.shape)
    for axis, arr in ((-1, a), (0, np.ascontiguousarray(a.T))):
        for fn in (xp.sort, xp.argsort):
            want = np.asarray(fn(xp.asarray(arr), axis=axis, descending=descending, stable=True))
            got = _host(fn(xp.asarray(arr, device="cuda"), axis=axis, descending=descending,
                           stable=True))  # fmt: skip
            np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("layout", ["contiguous", "transposed", "strided"])
@pytest.mark.parametrize("mask_ndim", [1, 2, 3])
def test_boolean_mask_indexing_through_mask_offsets_matches_cpu(layout, mask_ndim):
    """x[mask] over 1..ndim leading axes: the cuda mask_offsets kernel (offsets in x's own
    strides), every layout, none and all selected."""
    from strided import dispatch

    assert ("mask_offsets", "cuda") in dispatch.registered()
    rng = np.random.default_rng(4)
    a = rng.standard_normal((4, 5, 6))
    if layout == "transposed":
        x_np = np.ascontiguousarray(a.transpose(2, 1, 0)).transpose(2, 1, 0)
    elif layout == "strided":
        x_np = np.repeat(a, 2, axis=2)[:, :, ::2]
    else:
        x_np = a
    for fill in (None, False, True):
        mask = rng.random(a.shape[:mask_ndim]) < 0.4
        if fill is not None:
            mask[...] = fill
        want = x_np[mask]
        x = xp.asarray(a, device="cuda")
        if layout == "transposed":
            stored = np.ascontiguousarray(a.transpose(2, 1, 0))
            x = xp.permute_dims(xp.asarray(stored, device="cuda"), (2, 1, 0))
        elif layout == "strided":
            x = xp.asarray(np.repeat(a, 2, axis=2), device="cuda")[:, :, ::2]
        got = _host(x[xp.asarray(mask, device="cuda")])
        np.testing.assert_array_equal(got, want)


def test_cpu_dlpack_export_of_host_execution_memory_needs_no_copy():
    """On host execution the cuda device's buffers are host memory: a CPU export with
    copy=False shares it (on a GPU the same request raises BufferError, tests/test_cuda_gpu.py)."""

    class Capsule:
        def __init__(self, x):
            self.x = x

        def __dlpack__(self, **kw):
            return self.x.__dlpack__(dl_device=(1, 0), copy=False, **kw)

        def __dlpack_device__(self):
            return (1, 0)

    x = xp.asarray(np.arange(6.0).reshape(2, 3), device="cuda")
    view = np.from_dlpack(Capsule(x.T))
    x[1, 0] = 42.0  # the view reads the array's own memory
    assert view[0, 1] == 42.0
    with pytest.raises(BufferError):
        x.__dlpack__(dl_device=(2, 1), copy=False)


def test_asarray_of_a_list_of_device_scalars():
    """asarray([[x[i, j], ...]]) with 0-d cuda arrays in the list (as the official suite builds
    its expected values): their values come to the host, the result goes to the device asked."""
    x = xp.asarray(np.arange(6.0).reshape(2, 3), device="cuda")
    y = xp.asarray([[x[i, j] for i in range(2)] for j in range(3)], device="cuda")
    np.testing.assert_array_equal(_host(y), np.arange(6.0).reshape(2, 3).T)
    with pytest.raises(TypeError, match="to_device"):
        np.asarray(x)  # NumPy itself still refuses the implicit copy


def test_host_execution_yields_the_runtime_in_use(monkeypatch):
    """host_execution() yields the runtime the kernels then use; host_execution(False) the GPU
    runtime (made at once, so that a test can wrap its library), None where there is no GPU."""
    from strided import _device
    from strided.backends.cuda import _runtime

    with _runtime.host_execution() as rt:
        assert isinstance(rt, _runtime.HostRuntime) and rt is _runtime.runtime()

    class FakeGpuRuntime:
        name = "gpu"

    monkeypatch.setattr(_runtime, "GpuRuntime", FakeGpuRuntime)
    monkeypatch.setattr(_device, "_gpu_count", lambda: 1)
    with _runtime.host_execution(False) as rt:
        assert isinstance(rt, FakeGpuRuntime) and rt is _runtime.runtime()
    monkeypatch.setattr(_device, "_gpu_count", lambda: 0)
    with _runtime.host_execution(False) as rt:
        assert rt is None


class _OtherMemory(np.ndarray):
    """The buffers of a second runtime, which its kernels tell from the first one's."""


def _other_runtime():
    """A host runtime whose kernels refuse buffers it did not allocate, as a GPU's launch refuses
    host-execution (NumPy) buffers: both runtimes are cuda:0."""
    from strided.backends.cuda._runtime import HostRuntime

    class Module:
        def __init__(self, mod):
            self.mod = mod

        def get_function(self, name):
            fn = self.mod.get_function(name)

            def launch(grid, block, args, **kw):
                for a in args:
                    if isinstance(a, np.ndarray) and a.ndim and not isinstance(a, _OtherMemory):
                        raise TypeError(f"{name}: a buffer of another runtime")
                return fn(grid, block, args, **kw)

            return launch

    class OtherRuntime(HostRuntime):
        @staticmethod
        def empty(size, np_dtype):
            return np.empty(size, np_dtype).view(_OtherMemory)

        def module(self, source, name_expressions):
            return Module(super().module(source, name_expressions))

    return OtherRuntime


@pytest.mark.parametrize("fn", ["relu", "cross_entropy"])
def test_cached_device_arrays_do_not_outlive_a_runtime_switch(monkeypatch, fn):
    """strided.nn caches constant device arrays (ReLU's zeros, the class indices of
    cross_entropy's gradient) per
    device; host execution and a GPU are both cuda:0, so switching runtimes must empty those
    caches, or the GPU's kernels get host memory (seen on an H100: ReLU after a host-execution
    test in the same process raised CuPy's 'numpy.ndarray ... as a kernel parameter')."""
    import strided.nn.functional as F
    from strided.backends.cuda import _runtime

    x_np = np.linspace(-1, 1, 12).reshape(3, 4)

    def run():
        x = xp.asarray(x_np, device="cuda")
        if fn == "relu":
            return _host(F.relu(x))
        x.requires_grad_()
        F.cross_entropy(x, xp.asarray([0, 3, 1], device="cuda")).backward()
        return _host(x.grad)

    want = run()  # the test's host runtime fills the caches
    monkeypatch.setattr(_runtime, "HostRuntime", _other_runtime())
    with _runtime.host_execution():
        np.testing.assert_allclose(run(), want)
    np.testing.assert_allclose(run(), want)  # and back: the first runtime's arrays again


@pytest.mark.parametrize("dtype", ["float32", "float64", "int16", "uint8"])
@pytest.mark.parametrize("case", ["ties across chunks", "nan", "at the end", "strided"])
def test_flat_argmax_argmin_in_two_passes(monkeypatch, dtype, case):
    """argmax/argmin with axis=None over a long run go through many blocks (argreduce_chunks),
    then one block over their candidates: the first index still wins ties and NaN (one block for
    the whole run took 28 ms for 2**24 float32 on an H100, CuPy 0.05 ms)."""
    from strided.backends import cuda

    monkeypatch.setattr(cuda, "ARG_CHUNKED_MIN", 100)
    monkeypatch.setattr(cuda, "ARG_CHUNK", 64)
    rng = np.random.default_rng(3)
    a = (rng.random(1000) * 50).astype(dtype)
    if case == "ties across chunks":  # equal extremes in several chunks: the first one wins
        a[[70, 300, 301, 999]] = 100
        a[[71, 500, 998]] = 0
    elif case == "nan" and dtype.startswith("float"):
        a[[640, 65, 900]] = np.nan
    elif case == "at the end":
        a[-1], a[-2] = 200, -1 if dtype.startswith(("float", "int")) else 0
    x = xp.asarray(a, device="cuda")
    if case == "strided":  # a copy first, then the dense run
        x = xp.reshape(xp.asarray(np.tile(a, 2), device="cuda"), (40, 50))[:, ::2]
        a = np.tile(a, 2).reshape(40, 50)[:, ::2]
    for fn, ref in ((xp.argmax, np.argmax), (xp.argmin, np.argmin)):
        assert int(_host(fn(x))) == int(ref(a)), (fn.__name__, case)
        assert int(_host(fn(x[::-1]))) == int(ref(a[::-1])), (fn.__name__, case, "reversed")


def test_modules_built_into_another_cache_folder_get_their_own_precompiled_prelude(
    tmp_path, monkeypatch
):
    """The precompiled prelude lives in the cache folder the build uses: a process that points
    STRIDED_CUDA_HOST_CACHE elsewhere builds it there too (the modules include it by name)."""
    from strided.backends.cuda import _sources
    from strided.backends.cuda._host import HostModule

    source, names = _sources.where()
    for sub in ("one", "two"):
        folder = tmp_path / sub
        monkeypatch.setenv("STRIDED_CUDA_HOST_CACHE", str(folder))
        mod = HostModule(source + f"\n// {sub}\n", names[:1])  # a new module key per folder
        assert mod.get_function(names[0]) is not None
        assert list(folder.glob("prelude_*.h.gch")) and list(folder.glob("k*.so"))
