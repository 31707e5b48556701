"""Zero-copy interchange: NumPy (``__array__``, DLPack, buffer views) and, when installed,
PyTorch (DLPack both ways); DLPack export options."""

from __future__ import annotations

import numpy as np
import pytest

import strided as xp


def test_numpy_both_directions_share_memory():
    n = np.arange(12.0).reshape(3, 4)[:, ::-2]
    a = xp.asarray(n)
    n[0, 0] = -1.0
    assert float(a[0, 0]) == -1.0
    back = np.asarray(a.mT)
    back[1, 0] = 42.0
    assert n[0, 1] == 42.0 and float(a[0, 1]) == 42.0


def test_dlpack_export_options():
    a = xp.asarray(np.arange(6.0).reshape(2, 3))
    assert a.__dlpack_device__() == (1, 0)
    capsule = a.__dlpack__(max_version=(1, 0))
    assert type(capsule).__name__ == "PyCapsule"
    copied = np.from_dlpack(a, copy=True)
    copied[0, 0] = 9.0
    assert float(a[0, 0]) == 0.0
    with pytest.raises(BufferError, match="cannot export"):
        a.__dlpack__(dl_device=(2, 0))
    assert a.__dlpack__(dl_device=(1, 0)) is not None


def test_torch_both_directions_share_memory():
    torch = pytest.importorskip("torch")
    t = torch.arange(12, dtype=torch.float32).reshape(3, 4)[:, ::2]
    a = xp.from_dlpack(t)
    assert a.shape == (3, 2) and a.strides == (4, 2) and a.dtype is xp.float32
    t[0, 0] = 99.0
    assert float(a[0, 0]) == 99.0
    s = xp.reshape(xp.arange(12, dtype=xp.float64), (3, 4)).mT
    u = torch.from_dlpack(s)
    assert u.stride() == (1, 4) and u.dtype == torch.float64
    s[0, 0] = -5.0
    assert float(u[0, 0]) == -5.0
    np.testing.assert_array_equal(u.numpy(), np.asarray(s))


def test_asarray_of_c_contiguous_numpy_arrays_shares_their_memory():
    """A C-contiguous NumPy array (0-d, ordinary, or with odd strides on size-1 axes, which
    NumPy still calls C-contiguous) is viewed, not copied: the values match and writes made
    through strided land in the NumPy array."""
    base = np.arange(12.0).reshape(3, 1, 4)
    odd = np.lib.stride_tricks.as_strided(base, shape=(3, 1, 4), strides=(32, 999 * 8, 8))
    assert odd.flags.c_contiguous
    for a in (np.array(5.0), np.arange(6, dtype=np.int16).reshape(2, 3), odd):
        x = xp.asarray(a)
        np.testing.assert_array_equal(np.asarray(x), a)
        x[...] = -1
        assert (a == -1).all()


def test_numpy_view_of_every_layout_shares_the_arrays_memory():
    """The backend's NumPy view of an array: C-ordered at an offset (the cached layout's slice
    of the buffer), 0-d, empty, transposed, stepped and reversed views; each equals the array and
    shares its memory (a write through the view lands in the array)."""
    from strided.backends.cpu._memory import numpy_view

    base = np.arange(60.0).reshape(3, 4, 5)
    s = xp.asarray(base.copy())
    views = {
        "whole": (s, base),
        "at an offset": (s[1:], base[1:]),
        "a row": (s[2, 1], base[2, 1]),
        "0-d": (s[1, 2, 3], base[1, 2, 3]),
        "empty": (s[:, :0], base[:, :0]),
        "transposed": (xp.permute_dims(s, (2, 0, 1)), np.transpose(base, (2, 0, 1))),
        "stepped": (s[:, ::2, 1::3], base[:, ::2, 1::3]),
        "reversed": (s[::-1, :, ::-1], base[::-1, :, ::-1]),
    }
    for name, (view, want) in views.items():
        got = numpy_view(view)
        assert got.shape == want.shape, name
        np.testing.assert_array_equal(got, want, err_msg=name)
        if got.size:
            got[(0,) * got.ndim] = -7.0
            assert float(view[(0,) * got.ndim]) == -7.0, name
            got[(0,) * got.ndim] = want[(0,) * got.ndim]
