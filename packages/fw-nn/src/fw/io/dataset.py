"""Datasets (Paddle's ``paddle.io`` dataset classes).

A map-style `Dataset` has ``__getitem__(index)`` and ``__len__``; an
`IterableDataset` has ``__iter__`` (in worker processes each worker iterates its
own copy: shard it with `fw.io.get_worker_info`).
"""

from __future__ import annotations

import bisect
import math
import numbers

import numpy as np

from fw.core.tensor import Tensor

__all__ = ["Dataset", "IterableDataset", "TensorDataset", "ComposeDataset", "ChainDataset",
           "Subset", "random_split", "ConcatDataset"]


class Dataset:
    """Base class of map-style datasets: implement ``__getitem__`` and ``__len__``.

    An item is usually a tuple of fields (arrays, numbers, tensors); `DataLoader`
    batches the fields with `default_collate_fn`.

    Examples:
        >>> import fw
        >>> import numpy as np
        >>> class Squares(fw.io.Dataset):
        ...     def __init__(self, n):
        ...         self.n = n
        ...     def __getitem__(self, i):
        ...         return np.float32(i), np.float32(i * i)
        ...     def __len__(self):
        ...         return self.n
        >>> ds = Squares(4)
        >>> len(ds), [float(v) for v in ds[3]]
        (4, [3.0, 9.0])
        >>> x, y = next(iter(fw.io.DataLoader(ds, batch_size=4)))
        >>> y.tolist()
        [0.0, 1.0, 4.0, 9.0]
    """

    def __getitem__(self, idx):
        raise NotImplementedError(f"'{type(self).__name__}' must implement __getitem__")

    def __len__(self):
        raise NotImplementedError(f"'{type(self).__name__}' must implement __len__")

    def __iter__(self):
        # iteration by index until IndexError or the length, like a sequence
        for i in range(len(self)):
            yield self[i]

    def __add__(self, other):
        return ConcatDataset([self, other])


class IterableDataset(Dataset):
    """Base of stream-style datasets: implement ``__iter__``.

    With ``num_workers > 0`` every worker iterates its own copy; use
    `fw.io.get_worker_info` (``id``, ``num_workers``) to give each a distinct shard,
    or every sample is produced once per worker.

    Examples:
        >>> import fw
        >>> import numpy as np
        >>> class Stream(fw.io.IterableDataset):
        ...     def __init__(self, n):
        ...         self.n = n
        ...     def __iter__(self):
        ...         info = fw.io.get_worker_info()
        ...         start, step = (0, 1) if info is None else (info.id, info.num_workers)
        ...         for i in range(start, self.n, step):
        ...             yield np.float32(i)
        >>> [b.tolist() for b in fw.io.DataLoader(Stream(5), batch_size=2)]
        [[0.0, 1.0], [2.0, 3.0], [4.0]]
    """

    def __iter__(self):
        raise NotImplementedError(f"'{type(self).__name__}' must implement __iter__")

    def __getitem__(self, idx):
        raise RuntimeError(f"'{type(self).__name__}' is an IterableDataset: it cannot be "
                           f"indexed, iterate over it")

    def __len__(self):
        # TypeError, as for any object without len(): list(ds) then just iterates
        raise TypeError(f"'{type(self).__name__}' is an IterableDataset: it has no length")


def _first_dim(t):
    return t.shape[0] if isinstance(t, (Tensor, np.ndarray)) else len(t)


class TensorDataset(Dataset):
    """A dataset of the rows of tensors that share their first dimension: item ``i``
    is ``[t[i] for t in tensors]``.

    Args:
        tensors (list|tuple): Tensors (or arrays) with equal ``shape[0]``.

    Examples:
        >>> import fw
        >>> ds = fw.io.TensorDataset([fw.arange(6).reshape([3, 2]), fw.to_tensor([0, 1, 0])])
        >>> len(ds), [t.tolist() for t in ds[1]]
        (3, [[2, 3], 1])
    """

    def __init__(self, tensors):
        tensors = list(tensors)
        if not tensors:
            raise ValueError("TensorDataset: needs at least one tensor")
        n = _first_dim(tensors[0])
        for i, t in enumerate(tensors):
            if _first_dim(t) != n:
                raise ValueError(f"TensorDataset: tensor {i} has {_first_dim(t)} rows but tensor "
                                 f"0 has {n}; all must have the same first dimension")
        self.tensors = tensors

    def __getitem__(self, index):
        return [t[index] for t in self.tensors]

    def __len__(self):
        return _first_dim(self.tensors[0])


def _fields(x):
    return list(x) if isinstance(x, (list, tuple)) else [x]


class ComposeDataset(Dataset):
    """Zip map-style datasets of one length: item ``i`` concatenates the fields of every
    dataset's item ``i`` into one tuple.

    Args:
        datasets (list): map-style datasets of equal length.

    Examples:
        >>> import fw
        >>> a = fw.io.TensorDataset([fw.to_tensor([1, 2])])
        >>> b = fw.io.TensorDataset([fw.to_tensor([10, 20]), fw.to_tensor([7, 8])])
        >>> ds = fw.io.ComposeDataset([a, b])
        >>> len(ds), [int(f) for f in ds[1]]
        (2, [2, 20, 8])
    """

    def __init__(self, datasets):
        self.datasets = list(datasets)
        if not self.datasets:
            raise ValueError("ComposeDataset: needs at least one dataset")
        for d in self.datasets:
            if isinstance(d, IterableDataset):
                raise TypeError("ComposeDataset: IterableDataset is not supported (use "
                                "ChainDataset for streams)")
        n = len(self.datasets[0])
        for i, d in enumerate(self.datasets):
            if len(d) != n:
                raise ValueError(f"ComposeDataset: dataset {i} has {len(d)} samples but dataset "
                                 f"0 has {n}; all must have the same length")

    def __len__(self):
        return len(self.datasets[0])

    def __getitem__(self, idx):
        out = []
        for d in self.datasets:
            out.extend(_fields(d[idx]))
        return tuple(out)


class ChainDataset(IterableDataset):
    """Iterate several IterableDatasets one after the other.

    Args:
        datasets (list): IterableDatasets.

    Examples:
        >>> import fw
        >>> class Count(fw.io.IterableDataset):
        ...     def __init__(self, start, stop):
        ...         self.start, self.stop = start, stop
        ...     def __iter__(self):
        ...         return iter(range(self.start, self.stop))
        >>> list(fw.io.ChainDataset([Count(0, 2), Count(5, 7)]))
        [0, 1, 5, 6]
    """

    def __init__(self, datasets):
        self.datasets = list(datasets)
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise TypeError(f"ChainDataset: every dataset must be an IterableDataset, got "
                                f"{type(d).__name__}")

    def __iter__(self):
        for d in self.datasets:
            yield from d


class Subset(Dataset):
    """The samples of `dataset` at `indices` (in that order; repeats allowed).

    Args:
        dataset (Dataset): a map-style dataset.
        indices (list[int]): the indices to keep.

    Examples:
        >>> import fw
        >>> ds = fw.io.TensorDataset([fw.arange(5)])
        >>> sub = fw.io.Subset(ds, [4, 0, 0])
        >>> len(sub), [int(sub[i][0]) for i in range(len(sub))]
        (3, [4, 0, 0])
    """

    def __init__(self, dataset, indices):
        self.dataset = dataset
        self.indices = list(indices)

    def __getitem__(self, idx):
        return self.dataset[self.indices[idx]]

    def __len__(self):
        return len(self.indices)


class ConcatDataset(Dataset):
    """Map-style datasets one after another: the indices run through the first, then
    the second, ...

    Args:
        datasets (list): map-style datasets.

    Examples:
        >>> import fw
        >>> a = fw.io.TensorDataset([fw.to_tensor([1, 2])])
        >>> b = fw.io.TensorDataset([fw.to_tensor([3, 4, 5])])
        >>> ds = fw.io.ConcatDataset([a, b])
        >>> len(ds), int(ds[2][0]), int(ds[4][0])
        (5, 3, 5)
    """

    def __init__(self, datasets):
        self.datasets = list(datasets)
        if not self.datasets:
            raise ValueError("ConcatDataset: needs at least one dataset")
        for d in self.datasets:
            if isinstance(d, IterableDataset):
                raise TypeError("ConcatDataset does not support IterableDataset")
        self.cumulative_sizes = []
        total = 0
        for d in self.datasets:
            total += len(d)
            self.cumulative_sizes.append(total)

    def __len__(self):
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx):
        n = len(self)
        if idx < 0:
            if -idx > n:
                raise IndexError(f"ConcatDataset: index {idx} out of range for length {n}")
            idx += n
        if idx >= n:
            raise IndexError(f"ConcatDataset: index {idx} out of range for length {n}")
        d = bisect.bisect_right(self.cumulative_sizes, idx)
        start = 0 if d == 0 else self.cumulative_sizes[d - 1]
        return self.datasets[d][idx - start]


def random_split(dataset, lengths, generator=None):
    """Split `dataset` into non-overlapping random `Subset` datasets.

    Args:
        dataset: a map-style dataset.
        lengths: the sizes (ints summing to ``len(dataset)``), or fractions summing to
            1 (the remainder is spread one by one from the first split).
        generator: a ``numpy.random.Generator`` (or an int seed); NumPy's global
            random state when None.

    Returns:
        a list of `Subset`.

    Examples:

    Examples:

    Examples:
        >>> import fw
        >>> ds = fw.io.TensorDataset([fw.arange(10)])
        >>> train, val = fw.io.random_split(ds, [8, 2], generator=0)
        >>> len(train), len(val)
        (8, 2)
        >>> sorted([int(train[i][0]) for i in range(8)] + [int(val[i][0]) for i in range(2)])
        [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]
    """
    n = len(dataset)
    lengths = list(lengths)
    if lengths and all(isinstance(x, numbers.Real) and not isinstance(x, numbers.Integral)
                       for x in lengths) and math.isclose(sum(lengths), 1.0):
        sizes = [int(math.floor(n * f)) for f in lengths]
        for i in range(n - sum(sizes)):
            sizes[i % len(sizes)] += 1
        lengths = sizes
    if sum(lengths) != n:
        raise ValueError(f"random_split: the lengths {lengths} sum to {sum(lengths)}, but the "
                         f"dataset has {n} samples")
    if generator is None:
        perm = np.random.permutation(n)
    else:
        rng = generator if isinstance(generator, np.random.Generator) else \
            np.random.default_rng(generator)
        perm = rng.permutation(n)
    out, start = [], 0
    for ln in lengths:
        out.append(Subset(dataset, perm[start:start + ln].tolist()))
        start += ln
    return out
