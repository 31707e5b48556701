"""Host execution of CUDA C: the kernel text compiled by g++ and launched on NumPy memory.

``HostModule(source, name_expressions)`` mirrors ``cupy.RawModule``: the same source that NVRTC
compiles for a GPU is compiled as C++ after ``cuda_host.h`` (see that header for the execution
model), one shared object per source, cached by a hash of everything that goes into it.
``get_function(name)`` returns a callable with CuPy's calling convention
``fn(grid, block, args, shared_mem=0)``; arguments are NumPy arrays (passed as pointers) and
scalars, packed the way CuPy packs them (a Python ``int`` is 64-bit, a ``float`` a double, a
``bool`` one byte).  Each argument's width and kind are checked against the kernel's parameter,
which CuPy cannot do: an ``int`` parameter given a Python int is an error here, garbage on a GPU.

Kernels that use barriers, shuffles or votes run one fiber per CUDA thread; the thread order
(forward, reverse or shuffled) is set with :func:`thread_order`, so a test can run a kernel in
several orders and catch a missing barrier that one order hides.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import hashlib
import os
import re
import subprocess
import tempfile
import threading
from pathlib import Path

import numpy as np

__all__ = ["HostModule", "HostFunction", "thread_order", "cache_dir", "HostLaunchError"]

_HEADER = Path(__file__).with_name("cuda_host.h")
# hidden visibility: modules define the same templates (a kernel instantiated in two sources,
# the header's thread-locals), and an exported one would be bound to the first module loaded
_CXXFLAGS = ["-std=c++17", "-O0", "-shared", "-fPIC", "-w", "-fvisibility=hidden"]
# what makes a kernel need one fiber per thread: anything that waits for other threads
_BARRIERS = re.compile(r"__syncthreads|__syncwarp|__shfl|__ballot_sync|__any_sync|__all_sync")
ORDERS = {"forward": 0, "reverse": 1, "shuffled": 2}


class HostLaunchError(RuntimeError):
    """A kernel launch the host layer refused or could not finish (bad arguments, a barrier that
    no schedule releases)."""


class _Order(threading.local):
    order = 0
    seed = 0


_order = _Order()


@contextlib.contextmanager
def thread_order(order: str, seed: int = 0):
    """Within the block, host launches run each block's threads in ``order`` ("forward",
    "reverse" or "shuffled" with ``seed``)."""
    old = _order.order, _order.seed
    _order.order, _order.seed = ORDERS[order], seed
    try:
        yield
    finally:
        _order.order, _order.seed = old


def cache_dir() -> Path:
    """Where built shared objects are kept: ``$STRIDED_CUDA_HOST_CACHE``, else a ``_build``
    folder beside this module (ignored by git) when writable, else the user's cache."""
    env = os.environ.get("STRIDED_CUDA_HOST_CACHE")
    if env:
        path = Path(env)
    else:
        path = Path(__file__).with_name("_build")
        if not os.access(path.parent, os.W_OK):
            path = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"))
            path = path / "strided" / "cuda_host"
    path.mkdir(parents=True, exist_ok=True)
    return path


def _wrapper(names: list[str], fibers: bool) -> str:
    """C entry points for each name expression: launch, and describe the parameters."""
    fib = "true" if fibers else "false"
    lines = ['#define STRIDED_EXPORT extern "C" __attribute__((visibility("default")))\n']
    for i, name in enumerate(names):
        lines += [
            f"STRIDED_EXPORT int strided_launch_{i}(void** a, const unsigned* g, int order,\n",
            "                                      unsigned seed, char* err, int errlen) {\n",
            f"    return strided_host::launch(&{name}, a, g, order, seed, {fib}, err, errlen);\n",
            "}\n",
            f"STRIDED_EXPORT int strided_params_{i}(long long* s, char* k) {{\n",
            f"    return strided_host::param_info(&{name}, s, k);\n",
            "}\n",
        ]
    return "".join(lines)


_MODULES: dict[str, HostModule] = {}
_LOCK = threading.Lock()


_PRELUDE = Path(__file__).parents[1] / "kernels" / "prelude.cuh"
_INCLUDES = ["-I", str(_HEADER.parent), "-I", str(_PRELUDE.parent)]


@functools.cache
def _read(path: Path) -> str:
    return path.read_text()


@functools.cache
def _precompiled_prelude(folder: Path) -> str | None:
    """The name of a header in ``folder`` (the cache folder) that includes cuda_host.h and the
    kernels' prelude, precompiled by g++ beside it (parsing the two is ~0.4 s of every module's
    ~1 s build); once per process and folder.  None where the precompiled header cannot be
    built: modules then include both."""
    flags = [f for f in _CXXFLAGS if f != "-shared"]
    text = f'#include "{_HEADER.name}"\n#include "{_PRELUDE.name}"\n'
    parts = [_read(_HEADER), _read(_PRELUDE), text, " ".join(flags)]
    name = f"prelude_{hashlib.sha256(chr(0).join(parts).encode()).hexdigest()[:24]}.h"
    header, gch = folder / name, folder / f"{name}.gch"
    if not gch.exists():
        with tempfile.TemporaryDirectory() as tmp:
            src, out = Path(tmp) / name, Path(tmp) / f"{name}.gch"
            src.write_text(text)
            cmd = ["g++", *flags, *_INCLUDES, "-x", "c++-header", str(src), "-o", str(out)]
            if subprocess.run(cmd, capture_output=True).returncode:
                return None
            os.replace(src, header)
            os.replace(out, gch)  # after the header: a reader that sees the .gch sees both
    elif not header.exists():
        header.write_text(text)
    return name


def _build(source: str, names: tuple[str, ...]) -> tuple[Path, bool]:
    fibers = bool(_BARRIERS.search(source))
    header = _read(_HEADER)
    text = f'#include "{_HEADER.name}"\n{source}\n{_wrapper(list(names), fibers)}'
    key = hashlib.sha256("\0".join([header, text, " ".join(_CXXFLAGS)]).encode()).hexdigest()[:24]
    folder = cache_dir()
    target = folder / f"k{key}.so"
    if not target.exists():
        prelude = _read(_PRELUDE)
        pch = _precompiled_prelude(folder) if source.startswith(prelude) else None
        if pch is not None:  # the same text, its first part precompiled
            text = f'#include "{pch}"\n{source[len(prelude) :]}\n{_wrapper(list(names), fibers)}'
        with tempfile.TemporaryDirectory() as tmp:
            src = Path(tmp) / "kernel.cpp"
            src.write_text(text)
            out = Path(tmp) / "kernel.so"
            includes = ["-I", str(folder), *_INCLUDES]
            cmd = ["g++", *_CXXFLAGS, *includes, str(src), "-o", str(out)]
            r = subprocess.run(cmd, capture_output=True, text=True)
            if r.returncode:
                raise HostLaunchError(f"g++ could not build the host module:\n{r.stderr[-4000:]}")
            os.replace(out, target)  # atomic: concurrent builders of one key agree
    return target, fibers


class HostModule:
    """A kernel source built for host execution (see the module docstring)."""

    def __init__(self, source: str, name_expressions=()):
        names = tuple(name_expressions)
        key = hashlib.sha256((source + "\0" + "\0".join(names)).encode()).hexdigest()
        with _LOCK:
            built = _MODULES.get(key)
            if built is None:
                path, fibers = _build(source, names)
                self._lib = ctypes.CDLL(str(path), mode=os.RTLD_LOCAL)
                self.fibers = fibers
                self._names = {n: i for i, n in enumerate(names)}
                self._functions: dict[str, HostFunction] = {}
                _MODULES[key] = self
            else:
                self.__dict__ = built.__dict__

    def get_function(self, name: str) -> HostFunction:
        fn = self._functions.get(name)
        if fn is None:
            if name not in self._names:
                raise HostLaunchError(f"{name!r} is not among the module's name expressions")
            fn = self._functions[name] = HostFunction(self._lib, self._names[name], name)
        return fn


_SCALAR_KINDS = {"b": "b", "i": "i", "u": "i", "f": "f", "c": "s"}


class HostFunction:
    """One kernel of a :class:`HostModule`, called as ``fn(grid, block, args, shared_mem=0)``."""

    def __init__(self, lib, index: int, name: str):
        self.name = name
        self._launch = getattr(lib, f"strided_launch_{index}")
        self._launch.restype = ctypes.c_int
        info = getattr(lib, f"strided_params_{index}")
        sizes = (ctypes.c_longlong * 256)()
        kinds = ctypes.create_string_buffer(256)
        n = info(sizes, kinds)
        self.params = [(int(sizes[i]), kinds.raw[i : i + 1].decode()) for i in range(n)]

    def _pack(self, i: int, arg, keep: list):
        size, kind = self.params[i]
        if isinstance(arg, np.ndarray):
            got = "p", 8
            value = ctypes.c_void_p(arg.ctypes.data)
        else:
            if isinstance(arg, bool):  # CuPy's packing of Python scalars
                a = np.bool_(arg)
            elif isinstance(arg, int):
                a = np.int64(arg)
            elif isinstance(arg, float):
                a = np.float64(arg)
            elif isinstance(arg, complex):
                a = np.complex128(arg)
            elif isinstance(arg, np.generic):
                a = arg
            else:
                raise HostLaunchError(
                    f"{self.name}: argument {i} has type {type(arg).__name__}; expected a NumPy "
                    "buffer or scalar"
                )
            got = _SCALAR_KINDS[a.dtype.kind], a.dtype.itemsize
            value = ctypes.create_string_buffer(a.tobytes(), max(a.dtype.itemsize, 1))
        if got != (kind, size):
            raise HostLaunchError(
                f"{self.name}: argument {i} ({type(arg).__name__}) is passed as {got[1]} bytes of "
                f"kind {got[0]!r}, but the kernel parameter is {size} bytes of kind {kind!r} "
                "(on a GPU this reads garbage: pass a NumPy scalar of the parameter's type)"
            )
        keep.append(value)
        return ctypes.cast(ctypes.pointer(value), ctypes.c_void_p)

    def __call__(self, grid, block, args, shared_mem: int = 0, stream=None):
        grid = tuple(grid) if isinstance(grid, (tuple, list)) else (grid,)
        block = tuple(block) if isinstance(block, (tuple, list)) else (block,)
        geom = (ctypes.c_uint * 6)(*grid, *(1,) * (3 - len(grid)), *block, *(1,) * (3 - len(block)))
        if len(args) != len(self.params):
            raise HostLaunchError(
                f"{self.name}: {len(args)} arguments for {len(self.params)} parameters"
            )
        if shared_mem:
            raise HostLaunchError(f"{self.name}: dynamic shared memory is not supported on host")
        keep: list = []
        ptrs = (ctypes.c_void_p * max(len(args), 1))(
            *[self._pack(i, a, keep) for i, a in enumerate(args)]
        )
        err = ctypes.create_string_buffer(512)
        rc = self._launch(ptrs, geom, _order.order, ctypes.c_uint(_order.seed), err, 512)
        if rc:
            raise HostLaunchError(f"{self.name}: {err.value.decode()}")
