"""strided.utils.data: datasets, samplers, DataLoader batching/shuffling/drop_last/len,
default_collate (checked against torch's on the same Python structures) and random_split."""

from __future__ import annotations

import collections
import math

import numpy as np
import pytest
import torch
import torch.utils.data as tud

import strided as xp
from strided.utils import data as sud

N = 10


def _dataset():
    x = np.arange(N * 3, dtype=np.float32).reshape(N, 3)
    y = np.arange(N, dtype=np.int64) * 7
    return x, y, sud.TensorDataset(xp.asarray(x), xp.asarray(y))


def _np(a):
    return np.asarray(a)


def test_tensor_dataset():
    x, y, ds = _dataset()
    assert len(ds) == N
    xi, yi = ds[3]
    np.testing.assert_array_equal(_np(xi), x[3])
    assert int(yi) == y[3]
    with pytest.raises(ValueError, match="size mismatch"):
        sud.TensorDataset(xp.zeros((3, 2)), xp.zeros((4,)))


@pytest.mark.parametrize(
    "batch_size, drop_last", [(1, False), (3, False), (3, True), (4, True), (10, True), (12, False)]
)
def test_sequential_batches_match_torch(batch_size, drop_last):
    x, y, ds = _dataset()
    sl = sud.DataLoader(ds, batch_size=batch_size, drop_last=drop_last)
    tl = tud.DataLoader(
        tud.TensorDataset(torch.tensor(x), torch.tensor(y)),
        batch_size=batch_size,
        drop_last=drop_last,
    )
    assert len(sl) == len(tl)
    got = list(sl)
    want = list(tl)
    assert len(got) == len(want)
    for (sx, sy), (tx, ty) in zip(got, want):
        assert sx.dtype == xp.float32 and sy.dtype == xp.int64
        np.testing.assert_array_equal(_np(sx), tx.numpy())
        np.testing.assert_array_equal(_np(sy), ty.numpy())


def _order(loader):
    return [int(v) // 7 for _, yb in loader for v in _np(yb)]


def test_shuffle_with_generator_is_deterministic_and_a_permutation():
    _, _, ds = _dataset()
    g1 = xp.random.Generator().manual_seed(5)
    g2 = xp.random.Generator().manual_seed(5)
    l1 = sud.DataLoader(ds, batch_size=4, shuffle=True, generator=g1)
    l2 = sud.DataLoader(ds, batch_size=4, shuffle=True, generator=g2)
    e1, e2 = _order(l1), _order(l2)
    assert e1 == e2
    assert sorted(e1) == list(range(N)) and e1 != list(range(N))
    # a new order each epoch (the generator advances), still reproducible
    assert _order(l1) == _order(l2) != e1
    # an int seed works as well, and different seeds give different orders
    assert _order(sud.DataLoader(ds, batch_size=4, shuffle=True, generator=5)) == _order(
        sud.DataLoader(ds, batch_size=4, shuffle=True, generator=5)
    )
    orders = {
        tuple(_order(sud.DataLoader(ds, batch_size=N, shuffle=True, generator=s))) for s in range(6)
    }
    assert len(orders) > 1


def test_shuffle_without_generator_follows_the_default_seed():
    _, _, ds = _dataset()
    loader = sud.DataLoader(ds, batch_size=3, shuffle=True)
    xp.random.manual_seed(11)
    a = _order(loader)
    xp.random.manual_seed(11)
    b = _order(loader)
    assert a == b and sorted(a) == list(range(N))


def test_shuffled_batches_keep_rows_together():
    x, y, ds = _dataset()
    for xb, yb in sud.DataLoader(ds, batch_size=3, shuffle=True, generator=1, drop_last=True):
        assert xb.shape == (3, 3)
        np.testing.assert_array_equal(_np(xb), x[_np(yb) // 7])


def test_samplers():
    _, _, ds = _dataset()
    order = [9, 0, 4, 4]
    got = [
        int(v) // 7 for _, yb in sud.DataLoader(ds, batch_size=3, sampler=order) for v in _np(yb)
    ]
    assert got == order
    batches = [[1, 2], [7], [3, 3, 3]]
    loader = sud.DataLoader(ds, batch_sampler=batches)
    assert len(loader) == 3
    assert [[int(v) // 7 for v in _np(yb)] for _, yb in loader] == batches
    rs = sud.RandomSampler(ds, replacement=True, num_samples=25, generator=3)
    draws = list(rs)
    assert len(draws) == len(rs) == 25 and all(0 <= d < N for d in draws)
    rs2 = sud.RandomSampler(ds, num_samples=23, generator=3)
    d2 = list(rs2)
    assert len(d2) == 23 and collections.Counter(d2[:20]) == collections.Counter(list(range(N)) * 2)
    sub = sud.SubsetRandomSampler([2, 4, 6], generator=0)
    assert sorted(sub) == [2, 4, 6]
    bs = sud.BatchSampler(range(7), 3, drop_last=False)
    assert list(bs) == [[0, 1, 2], [3, 4, 5], [6]] and len(bs) == 3
    assert len(sud.BatchSampler(range(7), 3, drop_last=True)) == 2


def test_loader_argument_errors():
    _, _, ds = _dataset()
    with pytest.raises(ValueError, match="mutually exclusive with shuffle"):
        sud.DataLoader(ds, sampler=[0, 1], shuffle=True)
    with pytest.raises(ValueError, match="batch_sampler"):
        sud.DataLoader(ds, batch_sampler=[[0]], batch_size=2)
    with pytest.raises(ValueError, match="batch_size"):
        sud.DataLoader(ds, batch_size=0)
    with pytest.raises(ValueError, match="drop_last"):
        sud.DataLoader(ds, batch_size=None, drop_last=True)
    with pytest.raises(TypeError, match="generator"):
        sud.DataLoader(ds, shuffle=True, generator="seed")


class Pairs(sud.Dataset):
    """A custom dataset of (NumPy image, int label, float weight, dict) samples."""

    def __len__(self):
        return 5

    def __getitem__(self, i):
        img = np.full((2, 2), i, dtype=np.float32)
        return img, i, float(i) / 2, {"id": i, "flag": i % 2 == 0}


def _same(s, t):
    if isinstance(t, torch.Tensor):
        assert isinstance(s, xp.Array), type(s)
        assert str(s.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
        np.testing.assert_array_equal(_np(s), t.numpy())
    elif isinstance(t, dict):
        assert isinstance(s, dict) and s.keys() == t.keys()
        for k in t:
            _same(s[k], t[k])
    elif isinstance(t, (list, tuple)):
        assert type(s) is type(t) and len(s) == len(t)
        for a, b in zip(s, t):
            _same(a, b)
    else:
        assert s == t


def test_default_collate_matches_torch():
    sl = list(sud.DataLoader(Pairs(), batch_size=2))
    tl = list(tud.DataLoader(Pairs(), batch_size=2))
    assert len(sl) == len(tl) == 3
    for s, t in zip(sl, tl):
        _same(s, t)
    Point = collections.namedtuple("Point", "x y")
    samples = [Point(1.5, np.int32(3)), Point(2.5, np.int32(4))]
    _same(sud.default_collate(samples), tud.default_collate(samples))
    arrays = [xp.asarray(np.ones((2, 3), np.float32) * i) for i in range(4)]
    out = sud.default_collate(arrays)
    assert out.shape == (4, 2, 3)
    with pytest.raises(RuntimeError, match="equal size"):
        sud.default_collate([[1, 2], [1]])
    with pytest.raises(TypeError, match="found object"):
        sud.default_collate([object(), object()])


def test_no_batching_and_custom_collate():
    x, _, ds = _dataset()
    loader = sud.DataLoader(ds, batch_size=None)
    assert len(loader) == N
    first = next(iter(loader))
    np.testing.assert_array_equal(_np(first[0]), x[0])
    loader = sud.DataLoader(ds, batch_size=4, collate_fn=lambda b: len(b))
    assert list(loader) == [4, 4, 2]


class Stream(sud.IterableDataset):
    def __iter__(self):
        for i in range(7):
            yield np.float32(i), i

    def __len__(self):
        return 7


def test_iterable_dataset():
    batches = list(sud.DataLoader(Stream(), batch_size=3))
    assert [b[1].shape for b in batches] == [(3,), (3,), (1,)]
    assert len(sud.DataLoader(Stream(), batch_size=3)) == 3
    assert len(list(sud.DataLoader(Stream(), batch_size=3, drop_last=True))) == 2
    with pytest.raises(ValueError, match="shuffle"):
        sud.DataLoader(Stream(), shuffle=True)


@pytest.mark.parametrize(
    "n, lengths",
    [
        (10, [3, 7]),
        (10, [0.3, 0.7]),
        (11, [0.5, 0.25, 0.25]),
        (7, [0.2, 0.2, 0.6]),
        (100, [0.8, 0.2]),
    ],
)
def test_random_split_sizes_match_torch_and_are_disjoint(n, lengths):
    ds = sud.TensorDataset(xp.asarray(np.arange(n)))
    parts = sud.random_split(ds, lengths, generator=xp.random.Generator().manual_seed(0))
    tparts = tud.random_split(range(n), lengths, generator=torch.Generator().manual_seed(0))
    assert [len(p) for p in parts] == [len(p) for p in tparts]
    seen = [int(p[i][0]) for p in parts for i in range(len(p))]
    assert sorted(seen) == list(range(n))  # disjoint and covering
    again = sud.random_split(ds, lengths, generator=0)
    assert [p.indices for p in again] == [
        p.indices for p in sud.random_split(ds, lengths, generator=0)
    ]


def test_random_split_errors_and_subset():
    ds = sud.TensorDataset(xp.asarray(np.arange(5)))
    with pytest.raises(ValueError, match="does not equal"):
        sud.random_split(ds, [2, 2])
    with pytest.raises(ValueError, match="sum to 1"):
        sud.random_split(ds, [0.5, 0.2])
    with pytest.warns(UserWarning, match="index 1"):
        sud.random_split(ds, [1.0, 0.0])
    sub = sud.Subset(ds, [4, 0])
    assert len(sub) == 2 and int(sub[0][0]) == 4
    loader = sud.DataLoader(sub, batch_size=2)
    (b,) = next(iter(loader))
    assert _np(b).tolist() == [4, 0]
    both = ds + sub
    assert len(both) == 7 and int(both[6][0]) == 0 and int(both[-1][0]) == 0
    assert math.isclose(len(sud.ConcatDataset([ds, ds])), 10)


def test_split_loader_batches_equal_stacked_rows():
    # the gathered batches of a Subset of a TensorDataset equal default_collate of its samples
    x, y, ds = _dataset()
    train, _ = sud.random_split(ds, [0.8, 0.2], generator=3)
    fast = list(sud.DataLoader(train, batch_size=3, shuffle=True, generator=9))
    slow = list(
        sud.DataLoader(
            train,
            batch_size=3,
            shuffle=True,
            generator=9,
            collate_fn=lambda b: sud.default_collate(b),  # not the default: row by row
        )
    )
    assert len(fast) == len(slow) == 3
    for (fx, fy), (sx, sy) in zip(fast, slow):
        np.testing.assert_array_equal(_np(fx), _np(sx))
        np.testing.assert_array_equal(_np(fy), _np(sy))
        np.testing.assert_array_equal(_np(fx), x[_np(fy) // 7])


def test_weighted_random_sampler():
    w = [0.0, 1.0, 3.0, 0.0]
    s = sud.WeightedRandomSampler(w, 4000, generator=2)
    draws = np.array(list(s))
    assert len(s) == 4000 and set(draws.tolist()) <= {1, 2}
    assert abs((draws == 2).mean() - 0.75) < 0.03  # proportional to the weights
    assert list(sud.WeightedRandomSampler(w, 50, generator=2)) == list(
        sud.WeightedRandomSampler(w, 50, generator=2)
    )
    no_rep = list(sud.WeightedRandomSampler([1, 2, 3], 3, replacement=False, generator=0))
    assert sorted(no_rep) == [0, 1, 2]
    with pytest.raises(ValueError, match="without replacement"):
        sud.WeightedRandomSampler(w, 3, replacement=False)
    with pytest.raises(ValueError, match="num_samples"):
        sud.WeightedRandomSampler(w, 0)
    with pytest.raises(ValueError):
        tud.WeightedRandomSampler(w, 0)
