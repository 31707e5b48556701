"""Checkpoints in the safetensors format: ``save_file``/``load_file`` (and ``save``/``load`` on
bytes).

A safetensors file is an 8-byte little-endian header length, a JSON header (each tensor's dtype,
shape and byte range, plus optional string metadata) and the raw little-endian data: loading it
parses JSON and views bytes, so it can never run code (unlike pickle).  Writing goes through
the ``safetensors`` package; reading checks the file with the package's parser, then maps the
file into memory copy-on-write and views each tensor in place (zero-copy) when its bytes are
aligned for its dtype, copying only the tensors whose offset is not.

Every strided dtype but complex128 (which the format lacks) round-trips bit-exactly;
non-contiguous arrays are written in C order; meta arrays have no data and are refused.
"""

from __future__ import annotations

import json
import os
import struct
import tempfile
from collections.abc import Mapping
from typing import Any

import numpy as np

from . import _namespace as xp
from ._array import Array
from ._device import as_device

__all__ = ["save_file", "load_file", "save", "load"]

#: safetensors dtype names <-> NumPy dtypes of strided's dtypes
_TO_NAME = {
    "bool": "BOOL",
    "int8": "I8",
    "int16": "I16",
    "int32": "I32",
    "int64": "I64",
    "uint8": "U8",
    "uint16": "U16",
    "uint32": "U32",
    "uint64": "U64",
    "float32": "F32",
    "float64": "F64",
    "complex64": "C64",
}
_FROM_NAME = {v: np.dtype(k) for k, v in _TO_NAME.items()}


def _host_arrays(tensors: Any, what: str) -> dict[str, np.ndarray]:
    """The dict's arrays as C-contiguous little-endian NumPy arrays, after checking them."""
    if not isinstance(tensors, Mapping):
        raise TypeError(
            f"{what}: expected a dict of name -> strided array, got {type(tensors).__name__}"
        )
    out = {}
    for name, a in tensors.items():
        if not isinstance(name, str):
            raise TypeError(f"{what}: keys must be strings, got {name!r}")
        if not isinstance(a, Array):
            raise TypeError(f"{what}: {name!r} is a {type(a).__name__}, not a strided array")
        if a.device.type == "meta":
            raise ValueError(
                f"{what}: {name!r} is a meta array (shape {a.shape}, dtype {a.dtype.name}); meta "
                "arrays have no data to save"
            )
        if a.dtype.name not in _TO_NAME:
            raise TypeError(
                f"{what}: {name!r} has dtype {a.dtype.name}, which safetensors cannot store "
                f"(supported: {', '.join(_TO_NAME)})"
            )
        if a.device.type != "cpu":
            a = a.to_device("cpu")
        h = np.asarray(a.detach() if a.requires_grad else a)
        if not h.flags.c_contiguous:  # (not ascontiguousarray: it turns 0-d into 1-d)
            h = h.copy(order="C")
        if h.dtype.byteorder == ">":
            h = h.astype(h.dtype.newbyteorder("<"))
        out[name] = h
    return out


def _check_metadata(metadata: Any, what: str) -> dict[str, str] | None:
    if metadata is None:
        return None
    if not isinstance(metadata, Mapping) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in metadata.items()
    ):
        raise TypeError(f"{what}: metadata must be a dict of str -> str, got {metadata!r}")
    return dict(metadata)


def save_file(
    tensors: Mapping[str, Array],
    filename: str | os.PathLike,
    metadata: dict[str, str] | None = None,
) -> None:
    """Write ``tensors`` (e.g. ``module.state_dict()``) to ``filename`` in safetensors format;
    ``metadata`` is an optional dict of strings stored in the header."""
    from safetensors.numpy import save_file as _save

    host = _host_arrays(tensors, "save_file")
    meta = _check_metadata(metadata, "save_file")
    path = _path(filename, "save_file")
    # write a new file and rename it over the old one: arrays loaded from the old file map its
    # pages, which truncating it in place would pull from under them (and a crash mid-write
    # leaves the previous checkpoint intact)
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".safetensors", dir=directory)
    os.close(fd)
    try:
        _save(host, tmp, metadata=meta)
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp made it owner-only
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _path(filename: Any, what: str) -> str:
    if not isinstance(filename, (str, bytes, os.PathLike)):
        raise TypeError(
            f"{what}: filename must be a str or os.PathLike path, got {type(filename).__name__}"
        )
    path = os.fspath(filename)
    return path.decode() if isinstance(path, bytes) else path


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def save(tensors: Mapping[str, Array], metadata: dict[str, str] | None = None) -> bytes:
    """``tensors`` serialized in safetensors format, as bytes."""
    from safetensors.numpy import save as _save

    host = _host_arrays(tensors, "save")
    return _save(host, metadata=_check_metadata(metadata, "save"))


def _header(raw: np.ndarray, source: str, what: str) -> tuple[dict, int]:
    """The parsed header and the offset of the data section, checking everything the arrays'
    views rely on (so that a damaged file gives an error naming it, never a wrong view)."""

    def bad(reason: str) -> ValueError:
        return ValueError(f"{what}: {source} is not a valid safetensors file: {reason}")

    size = raw.size
    if size < 8:
        raise bad(f"it has {size} bytes, fewer than the 8-byte header length")
    (n,) = struct.unpack("<Q", raw[:8].tobytes())
    if n > size - 8:
        raise bad(f"the header length {n} runs past the end of the file ({size} bytes)")
    try:
        header = json.loads(raw[8 : 8 + n].tobytes().decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise bad(f"the header is not JSON ({e})") from None
    if not isinstance(header, dict):
        raise bad("the header is not a JSON object")
    start = 8 + n
    data_len = size - start
    spans = []
    for name, info in header.items():
        if name == "__metadata__":
            continue
        if not isinstance(info, dict) or not {"dtype", "shape", "data_offsets"} <= info.keys():
            raise bad(f"entry {name!r} lacks dtype, shape or data_offsets")
        dtype = info["dtype"]
        shape = info["shape"]
        offsets = info["data_offsets"]
        if not isinstance(shape, list) or not all(
            isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in shape
        ):
            raise bad(f"entry {name!r} has an invalid shape {shape!r}")
        if (
            not isinstance(offsets, list)
            or len(offsets) != 2
            or not all(isinstance(o, int) and not isinstance(o, bool) for o in offsets)
            or not 0 <= offsets[0] <= offsets[1] <= data_len
        ):
            raise bad(
                f"entry {name!r} has data offsets {offsets!r} outside the {data_len}-byte data "
                "section (truncated file?)"
            )
        if dtype in _FROM_NAME:
            count = 1
            for s in shape:
                count *= s
            if offsets[1] - offsets[0] != count * _FROM_NAME[dtype].itemsize:
                raise bad(
                    f"entry {name!r} ({dtype}, shape {shape}) needs "
                    f"{count * _FROM_NAME[dtype].itemsize} bytes but spans "
                    f"{offsets[1] - offsets[0]}"
                )
        spans.append(tuple(offsets))
    spans.sort()
    end = 0
    for lo, hi in spans:
        if lo != end:
            raise bad("the tensors' byte ranges overlap or leave gaps")
        end = hi
    if end != data_len:
        raise bad(f"the tensors cover {end} bytes of a {data_len}-byte data section")
    return header, start


def _arrays(raw: np.ndarray, header: dict, start: int, device: Any, source: str, what: str):
    out = {}
    # tensors in file order (the order they were saved in)
    entries = sorted(
        ((k, v) for k, v in header.items() if k != "__metadata__"),
        key=lambda kv: kv[1]["data_offsets"][0],
    )
    try:
        dev = as_device("cpu" if device is None else device)
        if dev.type == "cuda":
            xp.empty((0,), device=dev)  # refuses a device that is not available
    except (TypeError, ValueError, RuntimeError) as e:
        raise type(e)(f"{what}: {e}") from None
    meta = dev.type == "meta"
    for name, info in entries:
        dtype = info["dtype"]
        if dtype not in _FROM_NAME:
            raise TypeError(
                f"{what}: {source}: tensor {name!r} has safetensors dtype {dtype}, which strided "
                f"does not have (supported: {', '.join(_FROM_NAME)})"
            )
        np_dtype = _FROM_NAME[dtype]
        shape = tuple(info["shape"])
        if meta:
            out[name] = xp.empty(shape, dtype=getattr(xp, np_dtype.name), device="meta")
            continue
        lo, hi = info["data_offsets"]
        chunk = raw[start + lo : start + hi]
        # a view of the mapped file when aligned for the dtype; the array layer copies otherwise
        h = chunk.view(np_dtype).reshape(shape)
        a = xp.asarray(h)
        if dev.type != "cpu":
            a = a.to_device(dev)
        out[name] = a
    return out


def load_file(filename: str | os.PathLike, device: Any = "cpu") -> dict[str, Array]:
    """Read a safetensors file into a dict of strided arrays (in the file's order).

    The file is mapped into memory copy-on-write: arrays whose bytes are aligned view it
    without copying (writing to them never changes the file).  ``device="meta"`` returns
    arrays of the right shapes and dtypes without reading any data.  A missing file raises
    ``FileNotFoundError``; a file that is not valid safetensors, ``ValueError`` naming it.
    """
    path, source, raw = _map(filename, "load_file")
    header, start = _header(raw, source, "load_file")
    _check_with_package(path, source)
    return _arrays(raw, header, start, device, source, "load_file")


def _map(filename: str | os.PathLike, what: str) -> tuple[str, str, np.ndarray]:
    """The file mapped copy-on-write as bytes, after the checks that give clear errors."""
    path = _path(filename, what)
    source = repr(path)
    if not os.path.exists(path):
        raise FileNotFoundError(f"{what}: no such file: {source}")
    if os.path.isdir(path):
        raise IsADirectoryError(f"{what}: {source} is a directory, not a safetensors file")
    if os.path.getsize(path) == 0:
        raise ValueError(f"{what}: {source} is not a valid safetensors file: it is empty")
    return path, source, np.memmap(path, dtype=np.uint8, mode="c")


def load(data: bytes, device: Any = "cpu") -> dict[str, Array]:
    """Read safetensors bytes (as made by :func:`save`) into a dict of strided arrays."""
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise TypeError(f"load: expected bytes, got {type(data).__name__}")
    raw = np.frombuffer(data, dtype=np.uint8).copy()  # one copy: arrays must be writable
    header, start = _header(raw, "the data", "load")
    return _arrays(raw, header, start, device, "the data", "load")


def _check_with_package(path: str, source: str) -> None:
    """Let the safetensors package validate the header too (its own parser)."""
    from safetensors import safe_open

    try:
        with safe_open(path, framework="numpy") as f:
            f.keys()
    except Exception as e:  # the package's SafetensorError is not exported as a type
        raise ValueError(f"load_file: {source} is not a valid safetensors file: {e}") from None


def metadata(filename: str | os.PathLike) -> dict[str, str] | None:
    """The ``__metadata__`` strings of a safetensors file (None when it has none)."""
    _, source, raw = _map(filename, "metadata")
    header, _ = _header(raw, source, "metadata")
    return header.get("__metadata__")
