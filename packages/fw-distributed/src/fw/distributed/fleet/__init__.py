"""``fw.distributed.fleet`` (Paddle's ``paddle.distributed.fleet``): hybrid
parallel training — data, tensor (``meta_parallel``), pipeline and sharding —
configured by a `DistributedStrategy`. See packages/fw-distributed/README.md."""

from __future__ import annotations

from fw.distributed.fleet import meta_parallel, utils
from fw.distributed.fleet.fleet_base import (
    barrier_worker,
    distributed_model,
    distributed_optimizer,
    get_hybrid_communicate_group,
    init,
    is_first_worker,
    is_initialized,
    worker_index,
    worker_num,
)
from fw.distributed.fleet.strategy import DistributedStrategy
from fw.distributed.fleet.topology import (
    CommunicateTopology,
    HybridCommunicateGroup,
    ParallelMode,
)

__all__ = ["init", "DistributedStrategy", "distributed_model", "distributed_optimizer",
           "get_hybrid_communicate_group", "worker_index", "worker_num", "is_first_worker",
           "barrier_worker", "is_initialized", "CommunicateTopology",
           "HybridCommunicateGroup", "ParallelMode", "meta_parallel", "utils"]
