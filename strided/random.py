"""Random number generation with PyTorch's names: ``Generator``, ``manual_seed`` and samplers.

Draws are made on the host by NumPy's PCG64 bit generator and copied to the array's device; on
``meta`` a sampler returns an array of the right shape and dtype without drawing (and without
advancing the generator).  Floating-point samplers default to float32 and integer ones to int64,
as in PyTorch (strided's namespace defaults to float64, the standard's choice)::

    import strided as xp
    g = xp.random.Generator().manual_seed(0)
    x = xp.random.randn(64, 784, generator=g)       # float32, N(0, 1)
    xp.random.manual_seed(0)                        # seeds the default generator
    idx = xp.random.randperm(10)                    # int64

The streams are not PyTorch's (same distributions, different bits).
"""

from __future__ import annotations

import copy
import operator
import secrets

import numpy as np

from . import _dtypes as dt
from ._array import Array
from ._device import CPU, as_device

__all__ = [
    "Generator",
    "default_generator",
    "manual_seed",
    "seed",
    "initial_seed",
    "get_rng_state",
    "set_rng_state",
    "fork_rng_state",
    "rand",
    "randn",
    "randint",
    "randperm",
    "bernoulli",
    "multinomial",
    "uniform",
    "normal",
    "rand_like",
    "randn_like",
    "randint_like",
]

# PyTorch's default seed, so that an unseeded program is still reproducible run to run
_DEFAULT_SEED = 67280421310721


class Generator:
    """A random stream (PyTorch's ``torch.Generator``) backed by NumPy's PCG64.

    ``device`` is recorded for PyTorch compatibility: draws are always made on the host and
    copied to the device of the array being made.
    """

    __slots__ = ("_rng", "_seed", "device")

    def __init__(self, device=None) -> None:
        self.device = as_device("cpu" if device is None else device)
        self._seed = _DEFAULT_SEED
        self._rng = np.random.Generator(np.random.PCG64(self._seed))

    def manual_seed(self, seed: int) -> Generator:
        """Restart the stream from ``seed`` (an int); returns the generator."""
        try:
            seed = operator.index(seed)
        except TypeError:
            raise TypeError(
                f"manual_seed: seed must be an int, got {type(seed).__name__}"
            ) from None
        # PyTorch accepts negative seeds (taken modulo 2**64)
        seed %= 2**64
        self._seed = seed
        self._rng = np.random.Generator(np.random.PCG64(seed))
        return self

    def seed(self) -> int:
        """Seed from the operating system's entropy; returns the seed used."""
        s = secrets.randbits(63)
        self.manual_seed(s)
        return s

    def initial_seed(self) -> int:
        """The seed the stream was last started from."""
        return self._seed

    def get_state(self) -> dict:
        """A snapshot of the stream (restore it with :meth:`set_state`)."""
        return {"seed": self._seed, "bit_generator": copy.deepcopy(self._rng.bit_generator.state)}

    def set_state(self, state: dict) -> Generator:
        """Restore a snapshot taken by :meth:`get_state`; returns the generator."""
        if not isinstance(state, dict) or "bit_generator" not in state:
            raise TypeError(
                "set_state: expected a state returned by Generator.get_state(), got "
                f"{type(state).__name__}"
            )
        bg = np.random.PCG64()
        bg.state = copy.deepcopy(state["bit_generator"])
        self._rng = np.random.Generator(bg)
        self._seed = state.get("seed", self._seed)
        return self

    def __repr__(self) -> str:
        return f"<strided.random.Generator seed={self._seed} device='{self.device}'>"


#: The generator used when a sampler is given none.
default_generator = Generator()


def manual_seed(seed: int) -> Generator:
    """Seed the default generator (PyTorch's ``torch.manual_seed``); returns it."""
    return default_generator.manual_seed(seed)


def seed() -> int:
    """Seed the default generator from the operating system's entropy; returns the seed."""
    return default_generator.seed()


def initial_seed() -> int:
    """The seed the default generator was last started from."""
    return default_generator.initial_seed()


def get_rng_state() -> dict:
    """A snapshot of the default generator."""
    return default_generator.get_state()


def set_rng_state(state: dict) -> None:
    """Restore the default generator from :func:`get_rng_state`'s snapshot."""
    default_generator.set_state(state)


def fork_rng_state():
    """Context manager: the default generator's state is restored on exit."""
    import contextlib

    @contextlib.contextmanager
    def _fork():
        state = get_rng_state()
        try:
            yield
        finally:
            set_rng_state(state)

    return _fork()


# -- helpers ----------------------------------------------------------------------------------
def _rng(generator, op: str) -> np.random.Generator:
    if generator is None:
        return default_generator._rng
    if not isinstance(generator, Generator):
        raise TypeError(
            f"{op}: generator must be a strided.random.Generator, got {type(generator).__name__}"
        )
    return generator._rng


def _size(size: tuple, op: str) -> tuple[int, ...]:
    """``f(2, 3)``, ``f((2, 3))`` and ``f([2, 3])`` all mean shape (2, 3)."""
    if len(size) == 1 and not isinstance(size[0], int) and not hasattr(size[0], "__index__"):
        size = size[0]
    elif len(size) == 1 and isinstance(size[0], Array):
        size = size[0]
    try:
        shape = tuple(operator.index(s) for s in size)
    except TypeError:
        raise TypeError(f"{op}: size must be ints or a tuple of ints, got {size!r}") from None
    for s in shape:
        if s < 0:
            raise ValueError(f"{op}: negative dimension {s} in size {shape}")
    return shape


def _float_dtype(dtype, op: str) -> dt.DType:
    d = dt.float32 if dtype is None else dt.as_dtype(dtype)
    if d.kind != dt.REAL:
        raise TypeError(f"{op}: dtype must be a real floating-point dtype, got {d.name}")
    return d


def _finish(a: np.ndarray, dtype: dt.DType, device, requires_grad: bool) -> Array:
    """Host draw -> strided array on ``device`` (the fresh NumPy buffer is adopted, no copy)."""
    from ._ops.creation import _wrap_numpy

    if a.dtype != dtype.numpy:
        a = a.astype(dtype.numpy)
    x = _wrap_numpy(np.ascontiguousarray(a))
    if device is not CPU and device != CPU:
        x = x.to_device(device)
    return x.requires_grad_() if requires_grad else x


def _meta(shape, dtype: dt.DType, device, requires_grad: bool) -> Array:
    from ._ops.creation import empty

    x = empty(shape, dtype=dtype, device=device)
    return x.requires_grad_() if requires_grad else x


def _uniform01(rng: np.random.Generator, shape, d: dt.DType) -> np.ndarray:
    # NumPy draws float32 directly (faster, and exactly in [0, 1) for float32)
    if d is dt.float32:
        return rng.random(shape, dtype=np.float32)
    return rng.random(shape)


def _normal01(rng: np.random.Generator, shape, d: dt.DType) -> np.ndarray:
    if d is dt.float32:
        return rng.standard_normal(shape, dtype=np.float32)
    return rng.standard_normal(shape)


# -- samplers ---------------------------------------------------------------------------------
def rand(*size, dtype=None, device=None, generator=None, requires_grad: bool = False) -> Array:
    """Uniform samples in [0, 1) of shape ``size`` (float32 by default)."""
    shape = _size(size, "rand")
    d = _float_dtype(dtype, "rand")
    dev = as_device(device)
    if dev.type == "meta":
        return _meta(shape, d, dev, requires_grad)
    return _finish(_uniform01(_rng(generator, "rand"), shape, d), d, dev, requires_grad)


def randn(*size, dtype=None, device=None, generator=None, requires_grad: bool = False) -> Array:
    """Standard normal samples of shape ``size`` (float32 by default)."""
    shape = _size(size, "randn")
    d = _float_dtype(dtype, "randn")
    dev = as_device(device)
    if dev.type == "meta":
        return _meta(shape, d, dev, requires_grad)
    return _finish(_normal01(_rng(generator, "randn"), shape, d), d, dev, requires_grad)


def uniform(
    low: float = 0.0,
    high: float = 1.0,
    size=(),
    *,
    dtype=None,
    device=None,
    generator=None,
) -> Array:
    """Uniform samples in [low, high) of shape ``size`` (float32 by default)."""
    shape = _size((size,), "uniform")
    d = _float_dtype(dtype, "uniform")
    dev = as_device(device)
    if not low <= high:
        raise ValueError(f"uniform: expects low <= high, got low={low}, high={high}")
    if dev.type == "meta":
        return _meta(shape, d, dev, False)
    u = _uniform01(_rng(generator, "uniform"), shape, d)
    a = (u * (high - low) + low).astype(d.numpy, copy=False)
    return _finish(a, d, dev, False)


def normal(
    mean=0.0,
    std=1.0,
    size=None,
    *,
    dtype=None,
    device=None,
    generator=None,
) -> Array:
    """Normal samples with ``mean`` and ``std`` (scalars or arrays, broadcast together and with
    ``size``); float32 by default, or the dtype of an array ``mean``/``std``."""
    arrays = [v for v in (mean, std) if isinstance(v, Array)]
    if dtype is None and arrays:
        dtype = arrays[0].dtype
    d = _float_dtype(dtype, "normal")
    dev = as_device(device) if device is not None or not arrays else arrays[0].device
    shapes = [v.shape for v in arrays]
    if size is not None:
        shapes.append(_size((size,), "normal"))
    try:
        shape = np.broadcast_shapes(*shapes) if shapes else ()
    except ValueError:
        raise ValueError(f"normal: mean, std and size do not broadcast: shapes {shapes}") from None
    if not arrays and isinstance(std, (int, float)) and std < 0:
        raise ValueError(f"normal: expects std >= 0.0, got std={std}")
    if dev.type == "meta":
        return _meta(shape, d, dev, False)
    m = np.asarray(mean._to_host()) if isinstance(mean, Array) else mean
    s = np.asarray(std._to_host()) if isinstance(std, Array) else std
    if isinstance(s, np.ndarray) and (s < 0).any():
        raise ValueError("normal: expects all elements of std >= 0.0")
    z = _normal01(_rng(generator, "normal"), shape, d)
    return _finish((z * s + m).astype(d.numpy, copy=False), d, dev, False)


def randint(
    low: int = 0,
    high: int | None = None,
    size=None,
    *,
    dtype=None,
    device=None,
    generator=None,
) -> Array:
    """Integers drawn uniformly from [low, high) (int64 by default).  ``randint(high, size)``
    and ``randint(low, high, size)`` both work, as in PyTorch."""
    if size is None:
        if high is None:
            raise TypeError("randint: missing the size argument")
        low, high, size = 0, low, high
    elif high is None:
        low, high = 0, low
    shape = _size((size,), "randint")
    d = dt.int64 if dtype is None else dt.as_dtype(dtype)
    if d.kind == dt.COMPLEX:
        raise TypeError(f"randint: dtype must be real, got {d.name}")
    low, high = operator.index(low), operator.index(high)
    if low >= high:
        raise ValueError(f"randint: expects low < high, got low={low}, high={high}")
    dev = as_device(device)
    if dev.type == "meta":
        return _meta(shape, d, dev, False)
    a = _rng(generator, "randint").integers(low, high, shape, dtype=np.int64)
    return _finish(a, d, dev, False)


def randperm(n: int, *, dtype=None, device=None, generator=None) -> Array:
    """A random permutation of ``0 .. n-1`` (int64 by default)."""
    n = operator.index(n)
    if n < 0:
        raise ValueError(f"randperm: n must be non-negative, got {n}")
    d = dt.int64 if dtype is None else dt.as_dtype(dtype)
    dev = as_device(device)
    if dev.type == "meta":
        return _meta((n,), d, dev, False)
    return _finish(_rng(generator, "randperm").permutation(n), d, dev, False)


def bernoulli(p, size=None, *, dtype=None, device=None, generator=None) -> Array:
    """Samples that are 1 with probability ``p`` and 0 otherwise.

    ``p`` is an array of probabilities (the result has its shape, dtype and device, as
    ``torch.bernoulli(input)``) or a float with ``size`` (float32 by default)."""
    if isinstance(p, Array):
        shape = p.shape if size is None else _size((size,), "bernoulli")
        d = p.dtype if dtype is None else dt.as_dtype(dtype)
        dev = p.device if device is None else as_device(device)
        if dev.type == "meta" or p.device.type == "meta":
            return _meta(shape, d, dev, False)
        probs = np.asarray(p._to_host()) if isinstance(p, Array) else np.asarray(p)
        if probs.size and not ((probs >= 0) & (probs <= 1)).all():
            raise ValueError("bernoulli: expects 0 <= p <= 1 for every element")
    else:
        p = float(p)
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"bernoulli: expects 0 <= p <= 1, got p={p}")
        shape = () if size is None else _size((size,), "bernoulli")
        d = dt.float32 if dtype is None else dt.as_dtype(dtype)
        dev = as_device(device)
        if dev.type == "meta":
            return _meta(shape, d, dev, False)
        probs = p
    u = _rng(generator, "bernoulli").random(shape, dtype=np.float32 if d is dt.float32 else None)
    return _finish((u < probs).astype(d.numpy), d, dev, False)


def multinomial(
    input: Array, num_samples: int, replacement: bool = False, *, generator=None
) -> Array:
    """Indices drawn from the categorical distributions in the rows of ``input`` (non-negative
    weights, not necessarily normalised; 1-D or 2-D): int64 of shape (num_samples,) or
    (rows, num_samples).  Without ``replacement`` no index repeats within a row."""
    if not isinstance(input, Array):
        raise TypeError(f"multinomial: input must be a strided array, got {type(input).__name__}")
    if input.ndim not in (1, 2):
        raise RuntimeError(f"multinomial: prob_dist must be 1 or 2 dim, got shape {input.shape}")
    num_samples = operator.index(num_samples)
    if num_samples <= 0:
        raise RuntimeError("multinomial: cannot sample n_sample <= 0 samples")
    n = input.shape[-1]
    if not replacement and num_samples > n:
        raise RuntimeError(
            f"multinomial: cannot sample n_sample > prob_dist.size(-1) samples without "
            f"replacement ({num_samples} > {n})"
        )
    out_shape = (num_samples,) if input.ndim == 1 else (input.shape[0], num_samples)
    if input.device.type == "meta":
        return _meta(out_shape, dt.int64, input.device, False)
    w = np.asarray(input._to_host(), dtype=np.float64).reshape(-1, n)
    if not np.all(np.isfinite(w)) or (w < 0).any():
        raise RuntimeError(
            "multinomial: probability tensor contains either inf, nan or element < 0"
        )
    sums = w.sum(axis=1)
    if (sums <= 0).any():
        raise RuntimeError(
            "multinomial: invalid multinomial distribution (sum of probabilities <= 0)"
        )
    if not replacement and (np.count_nonzero(w, axis=1) < num_samples).any():
        raise RuntimeError(
            "multinomial: fewer non-zero probabilities than samples requested without replacement"
        )
    rng = _rng(generator, "multinomial")
    rows = [rng.choice(n, size=num_samples, replace=replacement, p=r / r.sum()) for r in w]
    res = np.stack(rows).astype(np.int64).reshape(out_shape)
    return _finish(res, dt.int64, input.device, False)


def rand_like(x: Array, /, *, dtype=None, device=None, generator=None) -> Array:
    """``rand`` with ``x``'s shape (and dtype/device unless given)."""
    return rand(
        x.shape,
        dtype=x.dtype if dtype is None else dtype,
        device=x.device if device is None else device,
        generator=generator,
    )


def randn_like(x: Array, /, *, dtype=None, device=None, generator=None) -> Array:
    """``randn`` with ``x``'s shape (and dtype/device unless given)."""
    return randn(
        x.shape,
        dtype=x.dtype if dtype is None else dtype,
        device=x.device if device is None else device,
        generator=generator,
    )


def randint_like(
    x: Array, /, low: int = 0, high: int | None = None, *, dtype=None, device=None, generator=None
) -> Array:
    """``randint`` with ``x``'s shape (and dtype/device unless given)."""
    if high is None:
        low, high = 0, low
    return randint(
        low,
        high,
        x.shape,
        dtype=x.dtype if dtype is None else dtype,
        device=x.device if device is None else device,
        generator=generator,
    )


# -- in-place fills (what nn.init and dropout use): no recording, nothing done on meta ----------
def _fill_(x: Array, a: np.ndarray) -> Array:
    from ._grad_state import Mode

    src = _finish(a, x.dtype, x.device, False)
    prev = Mode.enabled
    Mode.enabled = False
    try:
        x[...] = src
    finally:
        Mode.enabled = prev
    return x


def uniform_(x: Array, a: float = 0.0, b: float = 1.0, *, generator=None) -> Array:
    """Fill ``x`` in place with U(a, b) samples (nothing happens on meta); returns ``x``."""
    if x.device.type == "meta":
        return x
    d = x.dtype if x.dtype.kind == dt.REAL else dt.float64
    u = _uniform01(_rng(generator, "uniform_"), x.shape, d)
    return _fill_(x, u * (b - a) + a)


def normal_(x: Array, mean: float = 0.0, std: float = 1.0, *, generator=None) -> Array:
    """Fill ``x`` in place with N(mean, std^2) samples (nothing happens on meta); returns ``x``."""
    if x.device.type == "meta":
        return x
    d = x.dtype if x.dtype.kind == dt.REAL else dt.float64
    z = _normal01(_rng(generator, "normal_"), x.shape, d)
    return _fill_(x, z * std + mean)
