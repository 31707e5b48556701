"""The inspection namespace: ``strided.__array_namespace_info__()``."""

from __future__ import annotations

from . import _dtypes as dt
from ._device import Device, as_device, available_devices, get_default_device

_KIND_GROUPS = {
    "bool": (dt.BOOL,),
    "signed integer": (dt.SIGNED,),
    "unsigned integer": (dt.UNSIGNED,),
    "integral": (dt.SIGNED, dt.UNSIGNED),
    "real floating": (dt.REAL,),
    "complex floating": (dt.COMPLEX,),
    "numeric": (dt.SIGNED, dt.UNSIGNED, dt.REAL, dt.COMPLEX),
}


class Info:
    """What this namespace supports: capabilities, devices and dtypes."""

    def capabilities(self) -> dict:
        """Optional features: boolean indexing and data-dependent output shapes (``nonzero``,
        ``unique_*``, ``repeat`` with an array) work on cpu; on meta, where there are no values,
        they raise ValueError saying the output size depends on values.  Dimensions are
        unbounded."""
        return {"boolean indexing": True, "data-dependent shapes": True, "max dimensions": None}

    def default_device(self) -> Device:
        """The device creation functions use when none is given."""
        return get_default_device()

    def devices(self) -> tuple[Device, ...]:
        """Every device available to this process (cpu, meta, and cuda:N with a GPU)."""
        return tuple(available_devices())

    def default_dtypes(self, *, device=None) -> dict:
        """The default dtypes, the same on every device."""
        as_device(device)
        return {
            "real floating": dt.default_float,
            "complex floating": dt.default_complex,
            "integral": dt.default_int,
            "indexing": dt.default_index,
        }

    def dtypes(self, *, device=None, kind=None) -> dict:
        """The supported dtypes by name, optionally only those of ``kind`` (a name or tuple)."""
        as_device(device)
        if kind is None:
            return {d.name: d for d in dt.ALL_DTYPES}
        kinds = kind if isinstance(kind, tuple) else (kind,)
        selected = {}
        for k in kinds:
            if isinstance(k, dt.DType):
                selected[k.name] = k
                continue
            if k not in _KIND_GROUPS:
                raise ValueError(f"dtypes: unknown kind {k!r}")
            for d in dt.ALL_DTYPES:
                if d.kind in _KIND_GROUPS[k]:
                    selected[d.name] = d
        return {d.name: d for d in dt.ALL_DTYPES if d.name in selected}


def __array_namespace_info__() -> Info:
    """The standard's inspection namespace."""
    return Info()
