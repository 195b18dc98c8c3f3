"""fw.io datasets, samplers and collate functions (the DataLoader itself is in
test_dataloader.py)."""

import numpy as np
import pytest

import fw
from fw import io


class Range(io.Dataset):
    def __init__(self, n):
        self.n = n

    def __getitem__(self, i):
        return i

    def __len__(self):
        return self.n


class Stream(io.IterableDataset):
    def __init__(self, a, b):
        self.a, self.b = a, b

    def __iter__(self):
        return iter(range(self.a, self.b))


def test_tensor_dataset_rows():
    x = fw.to_tensor(np.arange(6, dtype="float32").reshape(3, 2))
    y = np.array([0, 1, 2])
    ds = io.TensorDataset([x, y])
    assert len(ds) == 3
    a, b = ds[1]
    assert a.tolist() == [2.0, 3.0] and b == 1
    with pytest.raises(ValueError, match="same first dimension"):
        io.TensorDataset([x, np.zeros(4)])


def test_compose_chain_subset_concat():
    c = io.ComposeDataset([Range(3), io.TensorDataset([np.arange(3) * 10, np.arange(3)])])
    assert c[2] == (2, 20, 2)
    with pytest.raises(ValueError, match="same length"):
        io.ComposeDataset([Range(3), Range(4)])
    assert list(io.ChainDataset([Stream(0, 2), Stream(5, 7)])) == [0, 1, 5, 6]
    with pytest.raises(TypeError, match="IterableDataset"):
        io.ChainDataset([Range(2)])
    s = io.Subset(Range(10), [3, 3, 7])
    assert len(s) == 3 and list(s) == [3, 3, 7]
    cat = io.ConcatDataset([Range(2), Range(3)])
    assert len(cat) == 5 and [cat[i] for i in range(5)] == [0, 1, 0, 1, 2] and cat[-1] == 2
    with pytest.raises(IndexError):
        cat[5]
    assert len(Range(2) + Range(4)) == 6


def test_random_split_lengths_and_fractions():
    parts = io.random_split(Range(10), [3, 7], generator=0)
    assert [len(p) for p in parts] == [3, 7]
    assert sorted(parts[0].indices + parts[1].indices) == list(range(10))
    parts = io.random_split(Range(11), [0.5, 0.5], generator=np.random.default_rng(1))
    assert [len(p) for p in parts] == [6, 5]
    with pytest.raises(ValueError, match="sum to"):
        io.random_split(Range(10), [3, 3])


def test_iterable_dataset_has_no_index_or_length():
    with pytest.raises(RuntimeError, match="cannot be indexed"):
        Stream(0, 1)[0]
    with pytest.raises(NotImplementedError, match="__getitem__"):
        io.Dataset()[0]


def test_sequence_random_and_subset_samplers():
    assert list(io.SequenceSampler(Range(4))) == [0, 1, 2, 3]
    np.random.seed(0)
    perm = list(io.RandomSampler(Range(8)))
    assert sorted(perm) == list(range(8)) and perm != list(range(8))
    np.random.seed(0)
    assert list(io.RandomSampler(Range(8))) == perm  # np.random.seed reproduces it
    r = list(io.RandomSampler(Range(3), replacement=True, num_samples=20))
    assert len(r) == 20 and set(r) <= {0, 1, 2}
    assert list(io.RandomSampler(Range(3), generator=iter([2, 0, 1, 5]))) == [2, 0, 1]
    g = io.RandomSampler(Range(5), generator=np.random.default_rng(3))
    assert sorted(g) == list(range(5))
    with pytest.raises(ValueError, match="replacement=True"):
        io.RandomSampler(Range(3), num_samples=2)
    s = list(io.SubsetRandomSampler([10, 20, 30]))
    assert sorted(s) == [10, 20, 30]


def test_weighted_random_sampler():
    np.random.seed(2023)
    idx = list(io.WeightedRandomSampler([0.0, 0.0, 1.0, 0.0], 10))
    assert idx == [2] * 10
    idx = list(io.WeightedRandomSampler([0.1, 0.3, 0.5, 0.7, 0.2], 5, replacement=False))
    assert len(set(idx)) == 5
    with pytest.raises(ValueError, match="without replacement"):
        io.WeightedRandomSampler([1.0, 0.0], 2, replacement=False)
    with pytest.raises(ValueError, match="non-negative"):
        io.WeightedRandomSampler([-1.0, 2.0], 2)


def test_batch_sampler():
    b = io.BatchSampler(Range(7), batch_size=3)
    assert list(b) == [[0, 1, 2], [3, 4, 5], [6]] and len(b) == 3
    b = io.BatchSampler(sampler=io.SequenceSampler(Range(7)), batch_size=3, drop_last=True)
    assert list(b) == [[0, 1, 2], [3, 4, 5]] and len(b) == 2
    with pytest.raises(ValueError, match="exclusive"):
        io.BatchSampler(Range(3), sampler=io.SequenceSampler(Range(3)))
    with pytest.raises(ValueError, match="batch_size"):
        io.BatchSampler(Range(3), batch_size=0)


@pytest.mark.parametrize("n,bs,reps", [(10, 2, 2), (11, 3, 3), (7, 4, 2)])
def test_distributed_batch_sampler_covers_the_data_once_per_replica(n, bs, reps):
    per = [list(io.DistributedBatchSampler(Range(n), bs, num_replicas=reps, rank=r))
           for r in range(reps)]
    flat = [i for batches in per for b in batches for i in b]
    # padded to a multiple of the replicas, every sample seen
    assert set(flat) == set(range(n))
    assert len(flat) == int(np.ceil(n / reps)) * reps
    for r in range(reps):
        s = io.DistributedBatchSampler(Range(n), bs, num_replicas=reps, rank=r)
        assert len(s) == len(per[r])
    with pytest.raises(ValueError, match="rank"):
        io.DistributedBatchSampler(Range(n), bs, num_replicas=reps, rank=reps)


def test_distributed_batch_sampler_shuffle_depends_on_epoch():
    s = io.DistributedBatchSampler(Range(20), 5, num_replicas=1, rank=0, shuffle=True)
    s.set_epoch(3)
    a = [i for b in s for i in b]
    s.set_epoch(3)
    b = [i for b in s for i in b]
    s.set_epoch(4)
    c = [i for b in s for i in b]
    assert a == b != c and sorted(a) == list(range(20))
    d = io.DistributedBatchSampler(Range(10), 4, num_replicas=1, rank=0, drop_last=True)
    assert [len(b) for b in d] == [4, 4]


def test_default_collate_fn_structures():
    batch = [{"x": np.ones(2, np.float32) * i, "y": i, "name": f"s{i}",
              "pair": (np.float32(i), fw.to_tensor([i, i]))} for i in range(3)]
    out = io.default_collate_fn(batch)
    assert isinstance(out["x"], fw.Tensor) and out["x"].shape == [3, 2]
    assert out["y"].dtype == fw.int64 and out["y"].tolist() == [0, 1, 2]
    assert out["name"] == ["s0", "s1", "s2"]
    assert out["pair"][0].dtype == fw.float32 and out["pair"][1].shape == [3, 2]
    floats = io.default_collate_fn([0.5, 1.5])
    assert floats.dtype == fw.float64  # Python floats batch as float64, as in Paddle
    with pytest.raises(ValueError, match="same structure"):
        io.default_collate_fn([(1, 2), (1,)])
    with pytest.raises(ValueError, match="one shape"):
        io.default_collate_fn([np.zeros(2), np.zeros(3)])
    with pytest.raises(TypeError, match="cannot batch"):
        io.default_collate_fn([object(), object()])


def test_default_convert_fn():
    out = io.default_convert_fn({"a": np.arange(3), "b": [np.float32(1.0), "t"]})
    assert isinstance(out["a"], fw.Tensor) and out["a"].shape == [3]
    assert isinstance(out["b"][0], fw.Tensor) and out["b"][1] == "t"


def test_get_worker_info_is_none_in_the_main_process():
    assert io.get_worker_info() is None
