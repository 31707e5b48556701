"""Checkpoints in safetensors: bit-exact round trips for every dtype the format shares with
strided, non-contiguous arrays, zero-copy loading, interchange with PyTorch's safetensors, and
clear errors for meta arrays, unsupported dtypes and damaged or foreign files."""

from __future__ import annotations

import json
import os
import pickle
import struct

import numpy as np
import pytest
import safetensors.numpy
import safetensors.torch
import torch

import strided as xp
from strided import serialization

RNG = np.random.default_rng(7)

DTYPES = [
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float32", "float64", "complex64",
]  # fmt: skip


def _values(dtype: str, shape=(3, 5)) -> np.ndarray:
    d = np.dtype(dtype)
    if d.kind == "b":
        return RNG.random(shape) < 0.5
    if d.kind in "iu":
        info = np.iinfo(d)
        return RNG.integers(info.min, info.max, shape, dtype=d, endpoint=True)
    # raw random bits: NaN payloads, infinities, -0.0 and subnormals all have to survive
    raw = RNG.integers(0, 256, int(np.prod(shape)) * d.itemsize, dtype=np.uint8)
    a = raw.view(d).reshape(shape).copy()
    flat = a.reshape(-1)
    specials = [np.nan, -np.inf, np.inf, -0.0, 5e-324 if d.itemsize == 8 else 1e-45]
    flat[: len(specials)] = np.array(specials).astype(d)
    return a


def _bits(a) -> bytes:
    return np.ascontiguousarray(np.asarray(a)).tobytes()


def _bases(a: np.ndarray):
    while a is not None:
        yield a
        a = getattr(a, "base", None)


def test_every_dtype_round_trips_bit_exactly(tmp_path):
    arrays = {f"t.{d}": _values(d) for d in DTYPES}
    arrays["scalar"] = np.array(3.5, dtype=np.float64)
    arrays["empty"] = np.zeros((0, 4), dtype=np.float32)
    tensors = {k: xp.asarray(v) for k, v in arrays.items()}
    path = tmp_path / "all.safetensors"
    xp.save_file(tensors, path, metadata={"epoch": "3"})
    loaded = xp.load_file(path)
    assert set(loaded) == set(arrays)
    for k, v in arrays.items():
        assert loaded[k].shape == v.shape and loaded[k].dtype == tensors[k].dtype, k
        assert _bits(loaded[k]) == v.tobytes(), k
    assert serialization.metadata(path) == {"epoch": "3"}
    # the bytes variants agree
    again = serialization.load(serialization.save(tensors))
    for k, v in arrays.items():
        assert _bits(again[k]) == v.tobytes()


def test_non_contiguous_arrays_are_saved_in_c_order(tmp_path):
    base = np.arange(60, dtype=np.float64).reshape(6, 10)
    b = xp.asarray(base)
    views = {
        "transposed": b.T,
        "stepped": b[::2, 1::3],
        "reversed": xp.flip(b, axis=1),
        "broadcast": xp.broadcast_to(xp.asarray(np.arange(4.0)), (3, 4)),
        "column": b[:, 3],
    }
    want = {
        "transposed": base.T,
        "stepped": base[::2, 1::3],
        "reversed": base[:, ::-1],
        "broadcast": np.broadcast_to(np.arange(4.0), (3, 4)),
        "column": base[:, 3],
    }
    xp.save_file(views, tmp_path / "v.safetensors")
    loaded = xp.load_file(tmp_path / "v.safetensors")
    for k, v in want.items():
        assert loaded[k].shape == v.shape
        np.testing.assert_array_equal(np.asarray(loaded[k]), v)
    # and PyTorch reads the same values
    t = safetensors.torch.load_file(str(tmp_path / "v.safetensors"))
    for k, v in want.items():
        np.testing.assert_array_equal(t[k].numpy(), v)


def test_loading_is_zero_copy_and_copy_on_write(tmp_path):
    w = RNG.standard_normal((64, 32)).astype(np.float32)
    path = tmp_path / "w.safetensors"
    xp.save_file({"w": xp.asarray(w), "b": xp.asarray(np.ones(7, np.int8))}, path)
    before = path.read_bytes()
    loaded = xp.load_file(path)
    host = np.asarray(loaded["w"])
    assert any(isinstance(b, np.memmap) for b in _bases(host)), "expected a view of the file"
    loaded["w"][0, 0] = 123.0  # writes to a private copy of the page, never to the file
    assert float(loaded["w"][0, 0]) == 123.0
    assert path.read_bytes() == before
    # overwriting the checkpoint while arrays still view the old one is safe
    xp.save_file({"w": loaded["w"] * 2}, path)
    assert float(loaded["w"][0, 1]) == w[0, 1]
    np.testing.assert_array_equal(np.asarray(xp.load_file(path)["w"])[0, 1], w[0, 1] * 2)


def test_interchange_with_pytorch(tmp_path):
    sd = {
        "weight": torch.randn(4, 3),
        "bias": torch.randn(4, dtype=torch.float64),
        "steps": torch.arange(5),
        "mask": torch.tensor([True, False]),
    }
    p = str(tmp_path / "torch.safetensors")
    safetensors.torch.save_file(sd, p)
    loaded = xp.load_file(p)
    for k, v in sd.items():
        np.testing.assert_array_equal(np.asarray(loaded[k]), v.numpy())
    p2 = str(tmp_path / "strided.safetensors")
    xp.save_file(loaded, p2)
    back = safetensors.torch.load_file(p2)
    for k, v in sd.items():
        assert torch.equal(back[k], v)


def test_requires_grad_arrays_and_meta_loading(tmp_path):
    w = xp.asarray(np.ones((2, 3), np.float32), requires_grad=True)
    path = tmp_path / "p.safetensors"
    xp.save_file({"w": w}, path)
    meta = xp.load_file(path, device="meta")
    assert meta["w"].device.type == "meta" and meta["w"].shape == (2, 3)
    assert meta["w"].dtype == xp.float32
    assert xp.load_file(path, device=meta["w"].device)["w"].device.type == "meta"
    with pytest.raises(ValueError, match="load_file: unknown device"):
        xp.load_file(path, device="gpu")


def test_save_errors(tmp_path):
    path = tmp_path / "x.safetensors"
    m = xp.zeros((2, 2), device="meta")
    with pytest.raises(ValueError, match="meta"):
        xp.save_file({"m": m}, path)
    with pytest.raises(TypeError, match="complex128"):
        xp.save_file({"c": xp.asarray(np.ones(2, np.complex128))}, path)
    with pytest.raises(TypeError, match="keys must be strings"):
        xp.save_file({1: xp.zeros(2)}, path)
    with pytest.raises(TypeError, match="not a strided array"):
        xp.save_file({"a": np.zeros(2)}, path)
    with pytest.raises(TypeError, match="metadata"):
        xp.save_file({"a": xp.zeros(2)}, path, metadata={"k": 1})
    with pytest.raises(TypeError, match="save_file: filename"):
        xp.save_file({"a": xp.zeros(2)}, 3)
    with pytest.raises(TypeError, match="load_file: filename"):
        xp.load_file(xp.zeros(2))
    assert not path.exists()
    assert os.listdir(tmp_path) == []  # no temporary file left behind


def _expect_bad(path, match="not a valid safetensors file"):
    with pytest.raises(ValueError, match=match) as info:
        xp.load_file(path)
    assert str(path) in str(info.value)


def test_damaged_and_foreign_files(tmp_path):
    good = tmp_path / "good.safetensors"
    xp.save_file({"a": xp.asarray(np.arange(10.0)), "b": xp.asarray(np.arange(3))}, good)
    raw = good.read_bytes()
    cases = {
        "truncated": raw[:-5],
        "header-only": raw[: 8 + struct.unpack("<Q", raw[:8])[0]],
        "tiny": raw[:5],
        "empty": b"",
        "text": b"this is certainly not a checkpoint file",
        "npy": b"\x93NUMPY" + bytes(100),
    }
    n = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8 : 8 + n])
    header["a"]["data_offsets"] = [0, 10**9]
    bad_header = json.dumps(header).encode()
    cases["offsets-outside"] = struct.pack("<Q", len(bad_header)) + bad_header + raw[8 + n :]
    cases["not-json"] = struct.pack("<Q", 4) + b"{{{{" + raw[8 + n :]
    for name, content in cases.items():
        p = tmp_path / f"{name}.bin"
        p.write_bytes(content)
        _expect_bad(p)
    with pytest.raises(FileNotFoundError, match="missing.safetensors"):
        xp.load_file(tmp_path / "missing.safetensors")
    with pytest.raises(ValueError, match="empty"):
        serialization.metadata(tmp_path / "empty.bin")
    with pytest.raises(IsADirectoryError, match="directory"):
        xp.load_file(tmp_path)


def test_a_pickle_is_refused_without_running_it(tmp_path):
    marker = tmp_path / "ran"

    class Evil:
        def __reduce__(self):
            return (open, (str(marker), "w"))

    p = tmp_path / "model.pt"
    p.write_bytes(pickle.dumps({"w": Evil()}))
    _expect_bad(p)
    assert not marker.exists()


def test_unsupported_dtype_in_file(tmp_path):
    p = str(tmp_path / "half.safetensors")
    safetensors.numpy.save_file({"h": np.ones(3, np.float16)}, p)
    with pytest.raises(TypeError, match="F16"):
        xp.load_file(p)


class _Net(xp.nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = xp.nn.Parameter(xp.asarray(RNG.standard_normal((4, 3)).astype(np.float32)))
        self.bias = xp.nn.Parameter(xp.asarray(RNG.standard_normal(4).astype(np.float32)))
        self.register_buffer("count", xp.asarray(np.arange(3, dtype=np.int64)))


def test_module_state_dict_round_trip(tmp_path):
    a, b = _Net(), _Net()
    path = tmp_path / "net.safetensors"
    xp.save_file(a.state_dict(), path)
    weight = b.weight
    b.load_state_dict(xp.load_file(path))
    assert b.weight is weight and isinstance(b.weight, xp.nn.Parameter)  # loaded in place
    for (k, va), (k2, vb) in zip(a.state_dict().items(), b.state_dict().items()):
        assert k == k2 and _bits(va) == _bits(vb)
    # strict loading still reports missing keys of a partial checkpoint
    xp.save_file({"weight": a.weight}, path)
    with pytest.raises(RuntimeError, match="bias"):
        b.load_state_dict(xp.load_file(path))
