"""fw.io — datasets, samplers and the DataLoader (Paddle's ``paddle.io``).

`DataLoader` loads batches in the main process or in worker processes that can
never hang the parent: dead workers, worker exceptions and timeouts all become
errors naming the worker (see `fw.io.dataloader`).
"""

from fw.io.collate import default_collate_fn, default_convert_fn
from fw.io.dataloader import DataLoader
from fw.io.dataset import (
                           ChainDataset,
                           ComposeDataset,
                           ConcatDataset,
                           Dataset,
                           IterableDataset,
                           Subset,
                           TensorDataset,
                           random_split,
)
from fw.io.sampler import (
                           BatchSampler,
                           DistributedBatchSampler,
                           RandomSampler,
                           Sampler,
                           SequenceSampler,
                           SubsetRandomSampler,
                           WeightedRandomSampler,
)
from fw.io.worker import WorkerInfo, get_worker_info

__all__ = ["Dataset", "IterableDataset", "TensorDataset", "ComposeDataset", "ChainDataset",
           "Subset", "random_split", "ConcatDataset", "Sampler", "SequenceSampler",
           "RandomSampler", "WeightedRandomSampler", "SubsetRandomSampler", "BatchSampler",
           "DistributedBatchSampler", "get_worker_info", "WorkerInfo", "default_collate_fn",
           "default_convert_fn", "DataLoader"]
