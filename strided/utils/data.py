"""Datasets and data loading with PyTorch's names and semantics (``torch.utils.data``).

``Dataset`` / ``IterableDataset`` / ``TensorDataset`` / ``Subset`` / ``ConcatDataset``,
the samplers (``SequentialSampler``, ``RandomSampler``, ``SubsetRandomSampler``,
``BatchSampler``), ``DataLoader`` (batching, shuffling with a ``strided.random.Generator`` or an
int seed, ``drop_last``, ``default_collate`` of arrays, numbers, tuples and dicts into stacked
strided arrays) and ``random_split``.  Loading runs in the calling process: ``num_workers`` is
accepted for compatibility and ignored (batches are the same).

A loader over a ``TensorDataset`` (or a ``Subset`` of one, as ``random_split`` makes) with the
default collate gathers each batch with one ``take`` per array instead of stacking
``batch_size`` rows (the same values, much less per-batch work).
"""

from __future__ import annotations

import bisect
import math
import numbers
import operator
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from .. import _namespace as xp
from .. import random as _random
from .._array import Array

__all__ = [
    "Dataset",
    "IterableDataset",
    "TensorDataset",
    "Subset",
    "ConcatDataset",
    "Sampler",
    "SequentialSampler",
    "RandomSampler",
    "SubsetRandomSampler",
    "WeightedRandomSampler",
    "BatchSampler",
    "DataLoader",
    "default_collate",
    "default_convert",
    "random_split",
]


# -- datasets --------------------------------------------------------------------------------
class Dataset:
    """A map-style dataset: subclasses define ``__getitem__(index)`` and ``__len__()``."""

    def __getitem__(self, index):
        raise NotImplementedError(f"{type(self).__name__} must define __getitem__")

    def __add__(self, other: Dataset) -> ConcatDataset:
        return ConcatDataset([self, other])


class IterableDataset(Dataset):
    """A dataset that is a stream: subclasses define ``__iter__()``."""

    def __iter__(self) -> Iterator:
        raise NotImplementedError(f"{type(self).__name__} must define __iter__")


class TensorDataset(Dataset):
    """Samples are the ``index``-th rows of each array (all arrays share their first size)."""

    def __init__(self, *tensors: Array) -> None:
        if not tensors:
            raise ValueError("TensorDataset: needs at least one array")
        for t in tensors:
            if not isinstance(t, Array):
                raise TypeError(f"TensorDataset: expected strided arrays, got {type(t).__name__}")
            if t.ndim == 0:
                raise ValueError("TensorDataset: 0-d arrays have no rows")
        n = tensors[0].shape[0]
        if any(t.shape[0] != n for t in tensors):
            raise ValueError(
                "TensorDataset: size mismatch between tensors (first dimensions "
                f"{[t.shape[0] for t in tensors]})"
            )
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def __len__(self) -> int:
        return self.tensors[0].shape[0]

    def _gather(self, indices: list[int]) -> tuple[Array, ...]:
        """The collated batch of ``indices`` (what default_collate makes of the samples)."""
        idx = xp.asarray(np.asarray(indices, dtype=np.int64), device=self.tensors[0].device)
        return tuple(xp.take(t, idx, axis=0) for t in self.tensors)


class Subset(Dataset):
    """The samples of ``dataset`` at ``indices``, in that order."""

    def __init__(self, dataset: Dataset, indices: Sequence[int]) -> None:
        self.dataset = dataset
        self.indices = indices

    def __getitem__(self, idx):
        if isinstance(idx, list):
            return self.dataset[[self.indices[i] for i in idx]]
        return self.dataset[self.indices[idx]]

    def __getitems__(self, indices: list[int]) -> list:
        return [self.dataset[self.indices[i]] for i in indices]

    def __len__(self) -> int:
        return len(self.indices)


class ConcatDataset(Dataset):
    """The samples of several datasets, one after the other."""

    def __init__(self, datasets: Iterable[Dataset]) -> None:
        self.datasets = list(datasets)
        if not self.datasets:
            raise ValueError("ConcatDataset: datasets should not be an empty iterable")
        for d in self.datasets:
            if isinstance(d, IterableDataset):
                raise TypeError("ConcatDataset: does not support IterableDataset")
        self.cumulative_sizes = []
        total = 0
        for d in self.datasets:
            total += len(d)
            self.cumulative_sizes.append(total)

    def __len__(self) -> int:
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx: int):
        idx = operator.index(idx)
        if idx < 0:
            if -idx > len(self):
                raise ValueError("ConcatDataset: absolute value of index should not exceed length")
            idx += len(self)
        d = bisect.bisect_right(self.cumulative_sizes, idx)
        start = 0 if d == 0 else self.cumulative_sizes[d - 1]
        return self.datasets[d][idx - start]


# -- samplers --------------------------------------------------------------------------------
class Sampler:
    """Yields dataset indices (or, for a batch sampler, lists of them)."""

    def __init__(self, data_source: Any = None) -> None:
        pass

    def __iter__(self) -> Iterator:
        raise NotImplementedError


class SequentialSampler(Sampler):
    """Indices ``0 .. len(data_source) - 1`` in order."""

    def __init__(self, data_source: Any) -> None:
        self.data_source = data_source

    def __iter__(self) -> Iterator[int]:
        return iter(range(len(self.data_source)))

    def __len__(self) -> int:
        return len(self.data_source)


def _as_generator(generator: Any, what: str) -> _random.Generator | None:
    """A ``strided.random.Generator`` (an int seeds a new one), or None."""
    if generator is None or isinstance(generator, _random.Generator):
        return generator
    if isinstance(generator, numbers.Integral) and not isinstance(generator, bool):
        return _random.Generator().manual_seed(int(generator))
    raise TypeError(
        f"{what}: generator must be a strided.random.Generator or an int seed, got "
        f"{type(generator).__name__}"
    )


def _fresh_generator(generator: _random.Generator | None) -> _random.Generator:
    """``generator``, or (as PyTorch does) a new one seeded from the default generator, so
    that ``strided.random.manual_seed`` makes unseeded shuffling reproducible."""
    if generator is not None:
        return generator
    seed = int(_random.randint(0, 2**63 - 1, (1,), device="cpu")[0])
    return _random.Generator().manual_seed(seed)


def _perm(n: int, generator: _random.Generator) -> list[int]:
    return np.asarray(_random.randperm(n, generator=generator, device="cpu")).tolist()


class RandomSampler(Sampler):
    """Random indices: a permutation (or ``num_samples`` draws with ``replacement``), new each
    iteration, drawn from ``generator`` (a ``strided.random.Generator`` or an int seed)."""

    def __init__(
        self,
        data_source: Any,
        replacement: bool = False,
        num_samples: int | None = None,
        generator: Any = None,
    ) -> None:
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = _as_generator(generator, "RandomSampler")
        if not isinstance(replacement, bool):
            raise TypeError(
                f"RandomSampler: replacement should be a boolean value, but got {replacement!r}"
            )
        if not isinstance(self.num_samples, int) or self.num_samples <= 0:
            raise ValueError(
                "RandomSampler: num_samples should be a positive integer value, but got "
                f"num_samples={self.num_samples}"
            )

    @property
    def num_samples(self) -> int:
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self) -> Iterator[int]:
        n = len(self.data_source)
        g = _fresh_generator(self.generator)
        if self.replacement:
            draws = _random.randint(0, n, (self.num_samples,), generator=g, device="cpu")
            yield from np.asarray(draws).tolist()
            return
        for _ in range(self.num_samples // n):
            yield from _perm(n, g)
        yield from _perm(n, g)[: self.num_samples % n]

    def __len__(self) -> int:
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """The given indices in a random order (new each iteration)."""

    def __init__(self, indices: Sequence[int], generator: Any = None) -> None:
        self.indices = indices
        self.generator = _as_generator(generator, "SubsetRandomSampler")

    def __iter__(self) -> Iterator[int]:
        g = _fresh_generator(self.generator)
        for i in _perm(len(self.indices), g):
            yield self.indices[i]

    def __len__(self) -> int:
        return len(self.indices)


class WeightedRandomSampler(Sampler):
    """``num_samples`` indices drawn with probabilities proportional to ``weights`` (with
    replacement by default), new each iteration."""

    def __init__(
        self,
        weights: Sequence[float],
        num_samples: int,
        replacement: bool = True,
        generator: Any = None,
    ) -> None:
        if not isinstance(num_samples, int) or isinstance(num_samples, bool) or num_samples <= 0:
            raise ValueError(
                "WeightedRandomSampler: num_samples should be a positive integer value, but got "
                f"num_samples={num_samples}"
            )
        if not isinstance(replacement, bool):
            raise ValueError(
                f"WeightedRandomSampler: replacement should be a boolean value, but got "
                f"{replacement!r}"
            )
        w = np.asarray(weights, dtype=np.float64)
        if w.ndim != 1:
            raise ValueError(
                f"WeightedRandomSampler: weights should be a 1-d sequence but given weights have "
                f"shape {w.shape}"
            )
        if not np.all(np.isfinite(w)) or np.any(w < 0) or w.sum() <= 0:
            raise ValueError(
                "WeightedRandomSampler: weights must be finite, non-negative and not all zero"
            )
        if not replacement and num_samples > np.count_nonzero(w):
            raise ValueError(
                f"WeightedRandomSampler: cannot draw {num_samples} samples without replacement "
                f"from {np.count_nonzero(w)} non-zero weights"
            )
        self.weights = w
        self.num_samples = num_samples
        self.replacement = replacement
        self.generator = _as_generator(generator, "WeightedRandomSampler")

    def __iter__(self) -> Iterator[int]:
        g = _fresh_generator(self.generator)
        draws = g._rng.choice(
            self.weights.size,
            size=self.num_samples,
            replace=self.replacement,
            p=self.weights / self.weights.sum(),
        )
        return iter(draws.tolist())

    def __len__(self) -> int:
        return self.num_samples


class BatchSampler(Sampler):
    """Groups the indices of ``sampler`` into lists of ``batch_size`` (the last one shorter
    unless ``drop_last``)."""

    def __init__(self, sampler: Iterable[int], batch_size: int, drop_last: bool) -> None:
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size <= 0:
            raise ValueError(
                "BatchSampler: batch_size should be a positive integer value, but got "
                f"batch_size={batch_size}"
            )
        if not isinstance(drop_last, bool):
            raise ValueError(
                f"BatchSampler: drop_last should be a boolean value, but got {drop_last!r}"
            )
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self) -> Iterator[list[int]]:
        batch: list[int] = []
        for i in self.sampler:
            batch.append(i)
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self) -> int:
        n = len(self.sampler)  # type: ignore[arg-type]
        if self.drop_last:
            return n // self.batch_size
        return (n + self.batch_size - 1) // self.batch_size


# -- collation -------------------------------------------------------------------------------
def default_convert(data: Any) -> Any:
    """NumPy arrays (and NumPy scalars) become strided arrays, inside sequences and mappings
    too; everything else is returned as it is (what the loader does without batching)."""
    if isinstance(data, Array):
        return data
    if isinstance(data, (np.ndarray, np.generic)):
        if isinstance(data, np.ndarray) and data.dtype.kind in "OUSV":
            return data
        return xp.asarray(data)
    if isinstance(data, Mapping):
        return type(data)({k: default_convert(v) for k, v in data.items()})  # type: ignore[call-arg]
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, list):
        return [default_convert(d) for d in data]
    return data


def default_collate(batch: Sequence[Any]) -> Any:
    """Merge a list of samples into a batch (PyTorch's rules): arrays (strided or NumPy) are
    stacked along a new first axis, Python floats become a float64 array, ints (and bools) an
    int64 (bool) array, strings stay a list, mappings are collated per key, tuples and lists
    position by position (a tuple gives a list, a named tuple its own type)."""
    if len(batch) == 0:
        raise ValueError("default_collate: the batch is empty")
    elem = batch[0]
    if isinstance(elem, Array):
        return xp.stack(list(batch), axis=0)
    if isinstance(elem, np.ndarray):
        if elem.dtype.kind in "OUSV":
            raise TypeError(
                f"default_collate: batch must contain arrays, numbers, dicts or lists; found a "
                f"NumPy array of dtype {elem.dtype}"
            )
        return xp.asarray(np.stack(batch, axis=0))
    if isinstance(elem, np.generic):
        return xp.asarray(np.asarray(batch))
    if isinstance(elem, bool):
        return xp.asarray(list(batch), dtype=xp.bool)
    if isinstance(elem, float):
        return xp.asarray(list(batch), dtype=xp.float64)
    if isinstance(elem, int):
        return xp.asarray(list(batch), dtype=xp.int64)
    if isinstance(elem, (str, bytes)):
        return list(batch)
    if isinstance(elem, Mapping):
        return {k: default_collate([d[k] for d in batch]) for k in elem}
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):
        return type(elem)(*(default_collate(s) for s in zip(*batch)))
    if isinstance(elem, Sequence):
        size = len(elem)
        if any(len(e) != size for e in batch):
            raise RuntimeError(
                "default_collate: each element in list of batch should be of equal size"
            )
        return [default_collate(list(s)) for s in zip(*batch)]
    raise TypeError(
        "default_collate: batch must contain strided or NumPy arrays, numbers, dicts or lists; "
        f"found {type(elem).__name__}"
    )


def _gatherer(ds: Any) -> Callable[[list[int]], Any] | None:
    """For a TensorDataset (or Subsets of one, as random_split makes), a function giving the
    collated batch of a list of indices directly (one ``take`` per array); else None."""
    if type(ds) is TensorDataset:
        return ds._gather
    if type(ds) is Subset:
        inner = _gatherer(ds.dataset)
        if inner is not None:
            indices = ds.indices
            return lambda idx: inner([indices[i] for i in idx])
    return None


# -- the loader ------------------------------------------------------------------------------
class DataLoader:
    """Iterate a dataset in batches (PyTorch's ``torch.utils.data.DataLoader``).

    Args:
        dataset: a map-style ``Dataset`` (``__getitem__``/``__len__``) or an
            ``IterableDataset``.
        batch_size: samples per batch (``None``: no batching, samples are yielded converted).
        shuffle: reshuffle the indices at every epoch.
        sampler / batch_sampler: custom index order / index batches (mutually exclusive with
            shuffle, and with batch_size/drop_last for batch_sampler).
        collate_fn: merges a list of samples into a batch (``default_collate``).
        drop_last: drop the last incomplete batch.
        generator: a ``strided.random.Generator`` or an int seed for shuffling; without one
            each epoch's order is seeded from strided's default generator (so
            ``strided.random.manual_seed`` makes it reproducible).
        num_workers, pin_memory, timeout, worker_init_fn, prefetch_factor,
        persistent_workers: accepted for compatibility; loading runs in this process.
    """

    def __init__(
        self,
        dataset: Any,
        batch_size: int | None = 1,
        shuffle: bool | None = None,
        sampler: Any = None,
        batch_sampler: Any = None,
        num_workers: int = 0,
        collate_fn: Callable[[list], Any] | None = None,
        pin_memory: bool = False,
        drop_last: bool = False,
        timeout: float = 0,
        worker_init_fn: Callable | None = None,
        multiprocessing_context: Any = None,
        generator: Any = None,
        *,
        prefetch_factor: int | None = None,
        persistent_workers: bool = False,
        pin_memory_device: str = "",
        in_order: bool = True,
    ) -> None:
        if not isinstance(num_workers, int) or num_workers < 0:
            raise ValueError(
                "DataLoader: num_workers option should be non-negative; use num_workers=0 to "
                "disable multiprocessing"
            )
        self.dataset = dataset
        self.num_workers = num_workers
        self.pin_memory = pin_memory
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.prefetch_factor = prefetch_factor
        self.persistent_workers = persistent_workers
        self.generator = _as_generator(generator, "DataLoader")
        self._iterable = isinstance(dataset, IterableDataset)
        if self._iterable:
            if shuffle not in (None, False):
                raise ValueError(
                    f"DataLoader with IterableDataset: expected unspecified shuffle option, but "
                    f"got shuffle={shuffle}"
                )
            if sampler is not None:
                raise ValueError(
                    "DataLoader with IterableDataset: expected unspecified sampler option"
                )
            if batch_sampler is not None:
                raise ValueError(
                    "DataLoader with IterableDataset: expected unspecified batch_sampler option"
                )
        if sampler is not None and shuffle:
            raise ValueError("DataLoader: sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError(
                    "DataLoader: batch_sampler option is mutually exclusive with batch_size, "
                    "shuffle, sampler, and drop_last"
                )
            batch_size = None
            drop_last = False
        elif batch_size is None and drop_last:
            raise ValueError(
                "DataLoader: batch_size=None option disables auto-batching and is mutually "
                "exclusive with drop_last"
            )
        if sampler is None and not self._iterable:
            if shuffle:
                sampler = RandomSampler(dataset, generator=self.generator)
            else:
                sampler = SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None and not self._iterable:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        elif batch_size is not None and (
            not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size <= 0
        ):
            raise ValueError(
                "DataLoader: batch_size should be a positive integer value, but got "
                f"batch_size={batch_size}"
            )
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self._auto_collation = batch_sampler is not None or (
            self._iterable and batch_size is not None
        )
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn

    @property
    def _index_sampler(self):
        return self.batch_sampler if self.batch_sampler is not None else self.sampler

    def __iter__(self) -> Iterator[Any]:
        if self._iterable:
            return self._iter_stream()
        return self._iter_map()

    def _iter_map(self) -> Iterator[Any]:
        ds = self.dataset
        collate = self.collate_fn
        if not self._auto_collation:
            for i in self.sampler:
                yield collate(ds[i])
            return
        gather = _gatherer(ds) if collate is default_collate else None
        getitems = getattr(ds, "__getitems__", None)
        for indices in self.batch_sampler:
            if gather is not None:
                yield gather(indices)
            elif getitems is not None:
                yield collate(getitems(indices))
            else:
                yield collate([ds[i] for i in indices])

    def _iter_stream(self) -> Iterator[Any]:
        collate = self.collate_fn
        if not self._auto_collation:
            for sample in self.dataset:
                yield collate(sample)
            return
        batch = []
        for sample in self.dataset:
            batch.append(sample)
            if len(batch) == self.batch_size:
                yield collate(batch)
                batch = []
        if batch and not self.drop_last:
            yield collate(batch)

    def __len__(self) -> int:
        if self._iterable:
            n = len(self.dataset)
            if self.batch_size is None:
                return n
            return n // self.batch_size if self.drop_last else math.ceil(n / self.batch_size)
        return len(self._index_sampler)


# -- splitting -------------------------------------------------------------------------------
def random_split(
    dataset: Dataset, lengths: Sequence[int | float], generator: Any = None
) -> list[Subset]:
    """Split ``dataset`` into non-overlapping random subsets of the given lengths (ints that
    sum to ``len(dataset)``, or fractions that sum to 1: ``floor(n * f)`` each, the remainder
    handed out one by one from the first subset, as PyTorch does)."""
    generator = _as_generator(generator, "random_split")
    n = len(dataset)  # type: ignore[arg-type]
    lengths = list(lengths)
    if (
        lengths
        and all(isinstance(x, float) for x in lengths)
        or (math.isclose(sum(lengths), 1) and sum(lengths) <= 1)
    ):
        if any(not 0 <= f <= 1 for f in lengths):
            raise ValueError(f"random_split: fractions must be between 0 and 1, got {lengths}")
        if not math.isclose(sum(lengths), 1) or sum(lengths) > 1:
            raise ValueError(f"random_split: fractions must sum to 1, got {sum(lengths)}")
        sizes = [int(math.floor(n * f)) for f in lengths]
        for i in range(n - sum(sizes)):
            sizes[i % len(sizes)] += 1
        for i, size in enumerate(sizes):
            if size == 0:
                warnings.warn(
                    f"random_split: length of split at index {i} is 0; this might result in an "
                    "empty dataset",
                    UserWarning,
                    stacklevel=2,
                )
        lengths = sizes
    for x in lengths:
        if isinstance(x, bool) or not isinstance(x, numbers.Integral) or x < 0:
            raise ValueError(f"random_split: lengths must be non-negative ints, got {lengths}")
    if sum(lengths) != n:
        raise ValueError(
            f"random_split: sum of input lengths ({sum(lengths)}) does not equal the length of "
            f"the input dataset ({n})"
        )
    g = generator if generator is not None else _random.default_generator
    perm = _perm(n, g)
    out = []
    start = 0
    for length in lengths:
        out.append(Subset(dataset, perm[start : start + length]))
        start += length
    return out
