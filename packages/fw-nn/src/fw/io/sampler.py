"""Samplers: iterables of dataset indices (or of index batches).

Random samplers draw from NumPy's global random state (``np.random.seed`` makes
them reproducible, as in Paddle) unless given a generator.
"""

from __future__ import annotations

import math

import numpy as np

from fw.core.tensor import Tensor

__all__ = ["Sampler", "SequenceSampler", "RandomSampler", "WeightedRandomSampler",
           "SubsetRandomSampler", "BatchSampler", "DistributedBatchSampler"]


class Sampler:
    """Base class: yield indices from ``__iter__``; ``__len__`` is optional.

    Args:
        data_source: the dataset (or anything with a length) being sampled.

    Examples:
        >>> import fw
        >>> class Reverse(fw.io.Sampler):
        ...     def __iter__(self):
        ...         return iter(range(len(self.data_source) - 1, -1, -1))
        ...     def __len__(self):
        ...         return len(self.data_source)
        >>> ds = fw.io.TensorDataset([fw.arange(5)])
        >>> list(Reverse(ds))
        [4, 3, 2, 1, 0]
        >>> batches = fw.io.BatchSampler(sampler=Reverse(ds), batch_size=2)
        >>> [b[0].tolist() for b in fw.io.DataLoader(ds, batch_sampler=batches)]
        [[4, 3], [2, 1], [0]]
    """

    def __init__(self, data_source=None):
        self.data_source = data_source

    def __iter__(self):
        raise NotImplementedError(f"'{type(self).__name__}' must implement __iter__")


class SequenceSampler(Sampler):
    """The indices ``0, 1, ..., len(data_source) - 1`` in order.

    Args:
        data_source (Dataset, optional): the dataset (anything with a length). Default: None.

    Examples:
        >>> import fw
        >>> list(fw.io.SequenceSampler(range(4)))
        [0, 1, 2, 3]
    """

    def __iter__(self):
        return iter(range(len(self.data_source)))

    def __len__(self):
        return len(self.data_source)


class RandomSampler(Sampler):
    """Random indices: a permutation of the dataset, or with ``replacement``
    ``num_samples`` independent draws.

    Args:
        data_source: the dataset.
        replacement: draw with replacement.
        num_samples: how many indices (only with replacement; the dataset length
            otherwise).
        generator: an iterator of indices to use instead (yields ``num_samples`` of
            them), or a ``numpy.random.Generator``.

    Examples:
        >>> import fw
        >>> import numpy as np
        >>> s = fw.io.RandomSampler(range(5), generator=np.random.default_rng(0))
        >>> sorted(s) == [0, 1, 2, 3, 4], len(s)
        (True, 5)
        >>> r = fw.io.RandomSampler(range(5), replacement=True, num_samples=8)
        >>> len(list(r)), r.num_samples
        (8, 8)
    """

    def __init__(self, data_source, replacement=False, num_samples=None, generator=None):
        self.data_source = data_source
        self.replacement = bool(replacement)
        self._num_samples = num_samples
        self.generator = generator
        if not isinstance(self.replacement, bool):
            raise TypeError("RandomSampler: 'replacement' must be a bool")
        if not self.replacement and num_samples is not None:
            raise ValueError("RandomSampler: 'num_samples' can be given only with "
                             "replacement=True")
        if num_samples is not None and (not isinstance(num_samples, int) or num_samples <= 0):
            raise ValueError(f"RandomSampler: 'num_samples' must be a positive int, got "
                             f"{num_samples!r}")

    @property
    def num_samples(self):
        """How many indices one pass yields.

        Returns:
            int, ``num_samples`` with replacement, else the dataset's length.

        Examples:
            >>> import fw
            >>> fw.io.RandomSampler(range(5)).num_samples
            5
        """
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self):
        n = len(self.data_source)
        g = self.generator
        if g is not None and not isinstance(g, np.random.Generator):
            it = iter(g)
            for _ in range(self.num_samples):
                try:
                    yield next(it)
                except StopIteration:
                    return
            return
        rng = g if g is not None else np.random
        if self.replacement:
            yield from rng.integers(0, n, self.num_samples).tolist() if g is not None else \
                np.random.randint(0, n, self.num_samples).tolist()
        else:
            yield from rng.permutation(n).tolist()

    def __len__(self):
        return self.num_samples


class WeightedRandomSampler(Sampler):
    """``num_samples`` indices drawn with probability proportional to `weights`.

    Args:
        weights: non-negative weights, one per index (list, array or Tensor).
        num_samples: how many indices to draw.
        replacement: draw with replacement (without it, ``num_samples`` must not
            exceed the number of non-zero weights).

    Examples:
        >>> import fw
        >>> s = fw.io.WeightedRandomSampler([0.0, 1.0, 0.0, 3.0], num_samples=6)
        >>> set(s) <= {1, 3}, len(s)
        (True, 6)
    """

    def __init__(self, weights, num_samples, replacement=True):
        if not isinstance(num_samples, int) or num_samples <= 0:
            raise ValueError(f"WeightedRandomSampler: 'num_samples' must be a positive int, "
                             f"got {num_samples!r}")
        w = weights.numpy() if isinstance(weights, Tensor) else np.asarray(weights)
        w = w.astype(np.float64).reshape(-1)
        if w.size == 0 or (w < 0).any() or not np.isfinite(w).all() or w.sum() <= 0:
            raise ValueError("WeightedRandomSampler: 'weights' must be finite, non-negative and "
                             "not all zero")
        if not replacement and num_samples > int((w > 0).sum()):
            raise ValueError(f"WeightedRandomSampler: cannot draw {num_samples} distinct "
                             f"indices from {int((w > 0).sum())} non-zero weights without "
                             f"replacement")
        self.weights = w
        self.num_samples = num_samples
        self.replacement = bool(replacement)

    def __iter__(self):
        p = self.weights / self.weights.sum()
        idx = np.random.choice(len(p), self.num_samples, replace=self.replacement, p=p)
        return iter(idx.tolist())

    def __len__(self):
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """The given indices, in a random order each pass.

    Args:
        indices (list[int]): the indices.
        generator (numpy.random.Generator, optional): the random source; NumPy's global
            one when None. Default: None.

    Examples:
        >>> import fw
        >>> s = fw.io.SubsetRandomSampler([1, 3, 5])
        >>> sorted(s), len(s)
        ([1, 3, 5], 3)
    """

    def __init__(self, indices, generator=None):
        self.indices = list(indices)
        self.generator = generator

    def __iter__(self):
        g = self.generator
        perm = g.permutation(len(self.indices)) if isinstance(g, np.random.Generator) else \
            np.random.permutation(len(self.indices))
        for i in perm.tolist():
            yield self.indices[i]

    def __len__(self):
        return len(self.indices)


class BatchSampler(Sampler):
    """Group indices into lists of ``batch_size``.

    Args:
        dataset: a dataset to sample (sequentially, or randomly with ``shuffle``);
            exclusive with `sampler`.
        sampler: an index sampler to batch.
        shuffle: with `dataset`, use a `RandomSampler`.
        batch_size: indices per batch.
        drop_last: drop the last incomplete batch.

    Examples:
        >>> import fw
        >>> list(fw.io.BatchSampler(dataset=range(5), batch_size=2))
        [[0, 1], [2, 3], [4]]
        >>> list(fw.io.BatchSampler(sampler=fw.io.SequenceSampler(range(5)), batch_size=2,
        ...                         drop_last=True))
        [[0, 1], [2, 3]]
    """

    def __init__(self, dataset=None, sampler=None, shuffle=False, batch_size=1, drop_last=False):
        if dataset is None and sampler is None:
            raise ValueError("BatchSampler: give either 'dataset' or 'sampler'")
        if dataset is not None and sampler is not None:
            raise ValueError("BatchSampler: 'dataset' and 'sampler' are exclusive")
        if sampler is not None and shuffle:
            raise ValueError("BatchSampler: 'shuffle' applies to 'dataset' only; shuffle in "
                             "the sampler")
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size <= 0:
            raise ValueError(f"BatchSampler: 'batch_size' must be a positive int, got "
                             f"{batch_size!r}")
        if not isinstance(drop_last, bool):
            raise TypeError("BatchSampler: 'drop_last' must be a bool")
        if sampler is None:
            sampler = RandomSampler(dataset) if shuffle else SequenceSampler(dataset)
        self.sampler = sampler
        self.shuffle = shuffle
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self):
        batch = []
        for idx in self.sampler:
            batch.append(idx)
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self):
        n = len(self.sampler)
        return n // self.batch_size if self.drop_last else \
            (n + self.batch_size - 1) // self.batch_size


class DistributedBatchSampler(BatchSampler):
    """Batches of one replica's share of the dataset (data-parallel training).

    The index list is padded (repeating its start) to a multiple of
    ``num_replicas``, optionally shuffled with the seed ``epoch`` (call `set_epoch`
    every epoch so the shuffle changes), and dealt out batch by batch: replica ``r``
    gets the ``r``-th ``batch_size`` chunk of every ``batch_size * num_replicas``.

    Args:
        dataset: the dataset.
        batch_size: indices per batch.
        num_replicas: the number of processes (default: fw.distributed's world size
            when it is running, else 1).
        rank: this process's rank (default: fw.distributed's rank, else 0).
        shuffle: shuffle each epoch.
        drop_last: drop the last incomplete batch.

    Examples:
        >>> import fw
        >>> ds = range(10)
        >>> [list(fw.io.DistributedBatchSampler(ds, batch_size=2, num_replicas=2, rank=r))
        ...  for r in (0, 1)]
        [[[0, 1], [4, 5], [8]], [[2, 3], [6, 7], [9]]]
    """

    def __init__(self, dataset, batch_size, num_replicas=None, rank=None, shuffle=False,
                 drop_last=False):
        if not isinstance(batch_size, int) or batch_size <= 0:
            raise ValueError(f"DistributedBatchSampler: 'batch_size' must be a positive int, "
                             f"got {batch_size!r}")
        if num_replicas is None or rank is None:
            world, me = _dist_env()
            num_replicas = world if num_replicas is None else num_replicas
            rank = me if rank is None else rank
        if not isinstance(num_replicas, int) or num_replicas <= 0:
            raise ValueError(f"DistributedBatchSampler: 'num_replicas' must be a positive int, "
                             f"got {num_replicas!r}")
        if not isinstance(rank, int) or not 0 <= rank < num_replicas:
            raise ValueError(f"DistributedBatchSampler: 'rank' must be in [0, {num_replicas}), "
                             f"got {rank!r}")
        self.dataset = dataset
        self.batch_size = batch_size
        self.nranks = num_replicas
        self.local_rank = rank
        self.shuffle = shuffle
        self.drop_last = drop_last
        self.epoch = 0
        self.num_samples = int(math.ceil(len(dataset) / self.nranks))
        self.total_size = self.num_samples * self.nranks
        self.sampler = None

    def set_epoch(self, epoch):
        """Set the epoch that seeds the shuffle (call it at the start of every epoch, on
        every replica, so each epoch has a new order that the replicas agree on).

        Args:
            epoch (int): the epoch number.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> s = fw.io.DistributedBatchSampler(range(8), batch_size=4, num_replicas=1, rank=0,
            ...                                   shuffle=True)
            >>> s.set_epoch(0)
            >>> first = list(s)
            >>> s.set_epoch(1)
            >>> list(s) != first, sorted(sum(first, []))
            (True, [0, 1, 2, 3, 4, 5, 6, 7])
        """
        self.epoch = int(epoch)

    def _local_indices(self):
        n = len(self.dataset)
        idx = list(range(n))
        while len(idx) < self.total_size:
            idx += idx[:self.total_size - len(idx)]
        if self.shuffle:
            np.random.RandomState(self.epoch).shuffle(idx)
            self.epoch += 1
        if self.nranks == 1:
            return idx
        # deal out whole batches so every replica's batch i covers neighbouring indices
        out = []
        span = self.batch_size * self.nranks
        tail = self.total_size % span
        body = len(idx) - tail
        for start in range(self.local_rank * self.batch_size, body, span):
            out.extend(idx[start:start + self.batch_size])
        per = tail // self.nranks
        rest = idx[body:]
        out.extend(rest[self.local_rank * per:(self.local_rank + 1) * per])
        return out

    def __iter__(self):
        batch = []
        for i in self._local_indices():
            batch.append(i)
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self):
        n = self.num_samples
        return n // self.batch_size if self.drop_last else \
            (n + self.batch_size - 1) // self.batch_size


def _dist_env():
    """(world size, rank) of a running fw.distributed job, else (1, 0)."""
    try:
        import fw.distributed as dist  # noqa: F401
    except ImportError:
        return 1, 0
    try:
        if dist.is_initialized():
            return dist.get_world_size(), dist.get_rank()
    except AttributeError:
        pass
    return 1, 0
