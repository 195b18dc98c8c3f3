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
from fw.distributed.ps.fleet_api import (
    init_server,
    init_worker,
    is_server,
    is_worker,
    run_server,
    save_persistables,
    server_index,
    server_num,
    stop_worker,
)

__all__ = ["init", "DistributedStrategy", "distributed_model", "distributed_optimizer",
           "get_hybrid_communicate_group", "worker_index", "worker_num", "is_first_worker",
           "barrier_worker", "is_initialized", "CommunicateTopology",
           "HybridCommunicateGroup", "ParallelMode", "meta_parallel", "utils",
           # parameter-server mode (fw.distributed.ps)
           "is_server", "is_worker", "server_num", "server_index", "init_server", "run_server",
           "init_worker", "stop_worker", "save_persistables"]
