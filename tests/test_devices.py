"""Devices: parsing, the default-device context, to_device, mixed-device errors, meta rules."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

import strided as xp
from strided import _device


def test_device_objects_and_parsing():
    assert xp.Device("cpu") == "cpu" and str(xp.Device("meta")) == "meta"
    assert xp.asarray([1.0]).device == xp.Device("cpu")
    assert {xp.Device("cpu"), xp.Device("cpu")} == {xp.Device("cpu")}
    with pytest.raises(ValueError, match="unknown device"):
        xp.zeros(2, device="tpu")
    with pytest.raises(TypeError, match="device"):
        xp.zeros(2, device=3)


@pytest.mark.skipif(_device._cuda_device_count() > 0, reason="a GPU is present")
def test_cuda_unavailable_without_a_gpu():
    with pytest.raises(ValueError, match="cuda:0.*not available"):
        xp.zeros(2, device="cuda")
    assert all(d.type != "cuda" for d in _device.available_devices())


@pytest.mark.parametrize("fn", [xp.zeros, xp.ones, xp.empty])
def test_default_device_context(fn):
    with xp.default_device("meta") as dev:
        assert dev == "meta"
        a = fn((3, 4))
        assert a.device == "meta"
        assert xp.arange(5).device == "meta" and xp.eye(3).device == "meta"
        assert xp.full((2,), 1.0).device == "meta"
        assert fn((2,), device="cpu").device == "cpu"
    assert fn((3,)).device == "cpu"


def test_to_device():
    a = xp.asarray([1.0, 2.0])
    assert a.to_device("cpu") is a
    m = a.to_device("meta")
    assert m.device == "meta" and m.shape == a.shape and m.dtype is a.dtype
    with pytest.raises(RuntimeError, match="meta"):
        m.to_device("cpu")


def test_mixed_devices_raise_naming_both():
    a, m = xp.zeros(3), xp.zeros(3, device="meta")
    for f in (lambda: a + m, lambda: xp.matmul(a, m), lambda: xp.where(a > 0, a, m)):
        with pytest.raises(ValueError, match="different devices.*cpu.*meta"):
            f()


def test_mixed_devices_raise_after_the_same_call_on_one_device_was_memoized():
    """A plan memoized for arrays on one device (keys name dtypes and shapes) is not run for a
    call whose later operands are on another: the rule's error names both devices (where and
    take ran the cpu kernel on a meta operand's missing memory, a TypeError from numba)."""
    a, m = xp.ones(3), xp.ones(3, device="meta")
    i, i_meta = xp.asarray([0, 2]), xp.asarray([0, 2], device="meta")
    calls = [
        (lambda y, k: xp.where(a > 0, a, y), "where"),
        (lambda y, k: xp.where(a > 0, y, a), "where"),
        (lambda y, k: xp.take(a, k), "take"),
        (lambda y, k: xp.clip(a, a, y), "clip"),
    ]
    for f, name in calls:
        f(a, i)  # memoizes the plan on cpu
        with pytest.raises(ValueError, match=f"{name}: .*different devices.*cpu.*meta"):
            f(m, i_meta)


def test_meta_arrays_have_no_values():
    m = xp.ones((2, 3), device="meta")
    assert repr(m) == "Array(shape=(2, 3), dtype=float64, device='meta')"
    scalar = xp.sum(m)
    for f in (
        lambda: bool(scalar),
        lambda: float(scalar),
        lambda: int(scalar),
        lambda: np.asarray(m),
        lambda: m.__dlpack__(),
        lambda: m.__dlpack_device__(),
    ):
        with pytest.raises((RuntimeError, BufferError), match="meta"):
            f()


def test_meta_views_and_strides_follow_the_rules():
    m = xp.empty((10**8, 4096), dtype=xp.float32, device="meta")
    v = m[::2, 10:20].mT
    assert v.shape == (10, 5 * 10**7) and v.strides == (1, 8192)
    assert xp.reshape(m, (-1,)).shape == (4096 * 10**8,)
    assert xp.concat([m, m], axis=1).shape == (10**8, 8192)
    assert xp.stack([m, m]).shape == (2, 10**8, 4096)
    assert xp.astype(m, xp.float16 if hasattr(xp, "float16") else xp.int8).dtype is xp.int8
    with pytest.raises(ValueError, match=r"add.*\(100000000, 4096\).*\(3,\)"):
        m + xp.empty((3,), device="meta")


def test_inspection_namespace():
    info = xp.__array_namespace_info__()
    assert info.default_device() == "cpu"
    assert isinstance(info.devices(), tuple)  # a tuple since 2025.12
    assert xp.Device("meta") in info.devices() and xp.Device("cpu") in info.devices()
    assert info.default_dtypes()["real floating"] is xp.float64
    assert info.default_dtypes(device="meta")["indexing"] is xp.int64
    assert len(info.dtypes()) == 13
    assert list(info.dtypes(kind="integral")) == [
        "int8",
        "int16",
        "int32",
        "int64",
        "uint8",
        "uint16",
        "uint32",
        "uint64",
    ]
    assert set(info.dtypes(kind=("bool", "complex floating"))) == {
        "bool",
        "complex64",
        "complex128",
    }
    caps = info.capabilities()
    assert caps["data-dependent shapes"] is True and caps["boolean indexing"] is True
    assert caps["max dimensions"] is None
    with pytest.raises(ValueError, match="unknown kind"):
        info.dtypes(kind="integer")
    with xp.default_device("meta"):
        assert info.default_device() == "meta"


@pytest.mark.parametrize(
    "setting,expected",
    [("meta", "meta"), ("cpu", "cpu"), ("", "cpu"), ("cuda", "cuda:0"), ("cuda:0", "cuda:0")],
)
def test_default_device_from_the_environment(setting, expected):
    """STRIDED_DEFAULT_DEVICE picks the device of creation functions (cuda on host execution)."""
    code = (
        "import strided as xp; a = xp.ones(3); b = xp.asarray([1.0, 2.0]); "
        "print(a.device, b.device, xp.get_default_device())"
    )
    env = dict(os.environ, STRIDED_DEFAULT_DEVICE=setting, STRIDED_CUDA_HOST="1")
    got = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    if expected.startswith("cuda") and "CuPy" in got.stderr:
        pytest.fail(f"the cuda device needs the cuda extra: {got.stderr[-300:]}")
    assert got.returncode == 0, got.stderr[-2000:]
    assert got.stdout.split() == [expected] * 3


@pytest.mark.parametrize("setting", ["gpu", "cuda:7", "cuda:x"])
def test_a_bad_default_device_setting_names_the_variable(setting):
    env = dict(os.environ, STRIDED_DEFAULT_DEVICE=setting, STRIDED_CUDA_HOST="1")
    got = subprocess.run(
        [sys.executable, "-c", "import strided"], capture_output=True, text=True, env=env
    )
    assert got.returncode != 0
    assert "STRIDED_DEFAULT_DEVICE" in got.stderr and setting in got.stderr
