"""Devices: ``Device("cpu")``, ``Device("meta")``, and ``Device("cuda", n)`` with CuPy and a GPU."""

from __future__ import annotations

import contextlib
import contextvars
import functools
import os

__all__ = ["Device", "as_device", "default_device", "get_default_device", "available_devices"]


class Device:
    """Where an array's data lives: ``cpu``, ``meta`` (shapes and dtypes only) or ``cuda:N``."""

    __slots__ = ("type", "index")

    def __init__(self, type: str, index: int | None = None):
        if type not in ("cpu", "meta", "cuda"):
            raise ValueError(f"unknown device type {type!r}: expected 'cpu', 'meta' or 'cuda'")
        if type == "cuda":
            index = 0 if index is None else int(index)
            if index >= _cuda_device_count():
                raise ValueError(
                    f"device 'cuda:{index}' is not available: "
                    + (
                        "CuPy or a CUDA GPU is missing"
                        if _cuda_device_count() == 0
                        else f"only {_cuda_device_count()} CUDA device(s) present"
                    )
                )
        elif index not in (None, 0):
            raise ValueError(f"device {type!r} has no index {index}")
        else:
            index = None
        self.type = type
        self.index = index

    def __repr__(self) -> str:
        return f"Device({str(self)!r})"

    def __str__(self) -> str:
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other) -> bool:
        if isinstance(other, str):
            try:
                other = as_device(other)
            except (ValueError, TypeError):
                return False
        return isinstance(other, Device) and self.type == other.type and self.index == other.index

    def __hash__(self) -> int:
        return hash((self.type, self.index))


#: host execution of the cuda device (``STRIDED_CUDA_HOST=1``, or
#: ``strided.backends.cuda.host_execution()``): one emulated device, no GPU needed
_cuda_host = [os.environ.get("STRIDED_CUDA_HOST", "") == "1"]


#: module-level caches that hold device arrays (dicts made by :func:`array_cache`)
_ARRAY_CACHES: list[dict] = []


def array_cache() -> dict:
    """A new dict for caching device arrays, emptied whenever the cuda device changes runtime
    (``strided.backends.cuda.host_execution``): host execution and a GPU are both ``cuda:0``, yet
    an array made under one holds memory the other's kernels cannot use."""
    cache: dict = {}
    _ARRAY_CACHES.append(cache)
    return cache


def clear_array_caches() -> None:
    for cache in _ARRAY_CACHES:
        cache.clear()


def _cuda_device_count() -> int:
    return 1 if _cuda_host[0] else _gpu_count()


@functools.cache
def _gpu_count() -> int:
    try:
        import cupy

        return int(cupy.cuda.runtime.getDeviceCount())
    except Exception:  # no CuPy, no driver, or no GPU: cuda is simply unavailable
        return 0


CPU = Device("cpu")
META = Device("meta")


def as_device(dev) -> Device:
    """Parse a Device, a string like ``"cpu"``/``"meta"``/``"cuda:0"``, or None (the default)."""
    if dev is None:
        return _default.get()
    if isinstance(dev, Device):
        return dev
    if isinstance(dev, str):
        if dev == "cpu":
            return CPU
        if dev == "meta":
            return META
        kind, _, idx = dev.partition(":")
        if idx:
            try:
                return Device(kind, int(idx))
            except ValueError as e:
                if "invalid literal" in str(e):
                    raise ValueError(f"cannot parse device {dev!r}") from None
                raise
        return Device(kind)
    raise TypeError(f"expected a Device or a device string, got {type(dev).__name__}")


def _device_from_environment() -> Device:
    """``STRIDED_DEFAULT_DEVICE`` (``cpu``, ``meta``, ``cuda``, ``cuda:N``), read once at import:
    the default device of creation functions, so that unchanged code (a test suite, a script)
    runs on another device.  Unset or empty: cpu."""
    name = os.environ.get("STRIDED_DEFAULT_DEVICE", "").strip()
    if not name:
        return CPU
    try:
        return as_device(name)
    except (ValueError, TypeError) as e:
        raise ValueError(f"STRIDED_DEFAULT_DEVICE={name!r}: {e}") from None


_ENVIRONMENT_DEFAULT = _device_from_environment()
_default: contextvars.ContextVar[Device] = contextvars.ContextVar(
    "strided_device",
    default=_ENVIRONMENT_DEFAULT,  # noqa: B039  (a Device is never mutated)
)


def get_default_device() -> Device:
    """The device that creation functions use when ``device=None``."""
    return _default.get()


@contextlib.contextmanager
def default_device(dev):
    """Context manager: creation functions inside it place arrays on ``dev`` by default."""
    token = _default.set(as_device(dev))
    try:
        yield _default.get()
    finally:
        _default.reset(token)


def available_devices() -> list[Device]:
    """Every device this process can use."""
    return [CPU, META] + [Device("cuda", i) for i in range(_cuda_device_count())]
