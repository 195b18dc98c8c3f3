"""``fw.distributed.fleet`` (Paddle's ``paddle.distributed.fleet``): hybrid
parallel training — data, tensor (``meta_parallel``), pipeline and sharding —
configured by a `DistributedStrategy`, and the role makers that say who a process
is (worker or parameter server). See packages/fw-distributed/README.md."""

from __future__ import annotations

from fw.distributed.fleet import base, meta_parallel, utils
from fw.distributed.fleet.base.role_maker import (
    PaddleCloudRoleMaker,
    Role,
    RoleMakerBase,
    UserDefinedRoleMaker,
)
from fw.distributed.fleet.base.util_factory import UtilBase
from fw.distributed.fleet.data_generator import (
    MultiSlotDataGenerator,
    MultiSlotStringDataGenerator,
)
from fw.distributed.fleet.fleet_base import (
    Fleet,
    all_reduce,
    barrier_worker,
    distributed_model,
    distributed_optimizer,
    fleet,
    get_hybrid_communicate_group,
    init,
    is_first_worker,
    is_initialized,
    is_server,
    is_worker,
    node_num,
    server_endpoints,
    server_index,
    server_num,
    util,
    worker_endpoints,
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
    run_server,
    save_persistables,
    stop_worker,
)

__all__ = ["init", "DistributedStrategy", "distributed_model", "distributed_optimizer",
           "get_hybrid_communicate_group", "worker_index", "worker_num", "is_first_worker",
           "barrier_worker", "is_initialized", "is_worker", "is_server", "server_num",
           "server_index", "node_num", "worker_endpoints", "server_endpoints", "all_reduce",
           "Fleet", "fleet", "util", "UtilBase", "Role", "RoleMakerBase",
           "PaddleCloudRoleMaker", "UserDefinedRoleMaker", "CommunicateTopology",
           "HybridCommunicateGroup", "ParallelMode", "base", "meta_parallel", "utils",
           # parameter-server mode (fw.distributed.ps)
           "init_server", "run_server", "init_worker", "stop_worker", "save_persistables",
           # the PS datasets' data generators (data_generator.py)
           "MultiSlotDataGenerator", "MultiSlotStringDataGenerator"]
