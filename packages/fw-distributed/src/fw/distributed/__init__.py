"""fw.distributed: collectives, the launcher, DataParallel and fleet (Paddle 3.x's
``paddle.distributed``). See packages/fw-distributed/README.md for the design.

Importing it is cheap: MPI is initialised by `init_parallel_env` (or the first
collective of a launched job), never at import time."""

# collectives, groups, tasks, ReduceOp (communication/) and the job's environment
# (parallel_env); DataParallel, fleet (tensor/pipeline parallel), ZeRO sharding and
# sharded checkpoints; spawn() (the launcher is the subpackage fw.distributed.launch)
# program passes (registered in fw-core's registry: the to_static all-reduce bucketing)
from fw.distributed import passes  # isort: skip
# --- auto-parallel (eager): meshes, placements, distributed tensors (auto_parallel/) ---
from fw.distributed import auto_parallel, checkpoint, communication, fleet, sharding
from fw.distributed.auto_parallel import (
    Partial,
    Placement,
    ProcessMesh,
    ReduceType,
    Replicate,
    Shard,
    dtensor_from_fn,
    reshard,
    shard_layer,
    shard_optimizer,
    shard_tensor,
    unshard_dtensor,
)
from fw.distributed.checkpoint import load_state_dict, save_state_dict
from fw.distributed.communication import *  # noqa: F403
from fw.distributed.communication import __all__ as _comm_all
from fw.distributed.parallel import DataParallel
from fw.distributed.parallel_env import (
    ParallelEnv,
    get_backend,
    get_rank,
    get_world_size,
    init_parallel_env,
    is_available,
    is_initialized,
)
from fw.distributed.spawn import spawn
from fw.distributed.store import TCPStore

_AUTO_PARALLEL = ["auto_parallel", "ProcessMesh", "Placement", "Shard", "Replicate", "Partial",
                  "ReduceType", "shard_tensor", "dtensor_from_fn", "reshard", "unshard_dtensor",
                  "shard_layer", "shard_optimizer"]
# --- end auto-parallel ---

# --- static auto-parallel (auto_parallel/static/): to_static, DistModel, shard_dataloader ---
from fw.distributed.auto_parallel.static import DistModel, shard_dataloader, to_static

# (Paddle keeps ShardDataloader in paddle.distributed.auto_parallel.api, not here)
_STATIC_AUTO_PARALLEL = ["to_static", "DistModel", "shard_dataloader"]
# --- end static auto-parallel ---

# --- intermediate auto-parallel (auto_parallel/intermediate/): parallelize and its plans,
# ZeRO shard_fns, local_map/LocalLayer, shard_scaler, the global mesh, DistAttr ---
from fw.distributed.auto_parallel.intermediate import (  # isort: skip
    ColWiseParallel,
    ContextParallel,
    ConvParallel,
    DistAttr,
    LocalLayer,
    PrepareContextParallel,
    PrepareLayerInput,
    PrepareLayerOutput,
    RowWiseParallel,
    SequenceParallelBegin,
    SequenceParallelDisable,
    SequenceParallelEnable,
    SequenceParallelEnd,
    ShardingStage1,
    ShardingStage2,
    ShardingStage3,
    SplitPoint,
    get_mesh,
    local_map,
    parallelize,
    set_mesh,
    shard_scaler,
    to_distributed,
)
from fw.distributed.fleet.topology import ParallelMode  # isort: skip

_INTERMEDIATE = ["parallelize", "ColWiseParallel", "RowWiseParallel", "ConvParallel",
                 "PrepareLayerInput",
                 "PrepareLayerOutput", "SequenceParallelBegin", "SequenceParallelEnd",
                 "SequenceParallelEnable", "SequenceParallelDisable", "ContextParallel",
                 "PrepareContextParallel", "SplitPoint", "ShardingStage1", "ShardingStage2",
                 "ShardingStage3", "get_mesh", "set_mesh", "shard_scaler", "local_map",
                 "LocalLayer", "to_distributed", "DistAttr", "ParallelMode"]
# --- end intermediate auto-parallel ---

# --- cost model (auto/): Cluster, calibrate, estimate, search/choose; dist.Strategy ---
from fw.distributed import auto
from fw.distributed.auto.strategy import Strategy

_COST_MODEL = ["auto", "Strategy"]
# --- end cost model ---


__all__ = list(_comm_all) + [
    "communication", "ParallelEnv", "get_backend", "get_rank", "get_world_size",
    "init_parallel_env", "is_available", "is_initialized", "spawn", "TCPStore",
    "checkpoint", "fleet", "sharding", "load_state_dict", "save_state_dict", "DataParallel",
] + _AUTO_PARALLEL + _STATIC_AUTO_PARALLEL + _COST_MODEL + _INTERMEDIATE

# --- Paddle 3.3 names (names2): object p2p, group control, gloo barrier, split, io,
# flex checkpoint, PS entries and datasets ---
from fw.distributed import io
from fw.distributed.checkpoint.flex import (
    ShardedStateDict,
    ShardedWeight,
    build_sharded_state_dict,
    load_merged_state_dict,
    shard_weight,
)
from fw.distributed.communication.gloo import gloo_barrier, gloo_init_parallel_env, gloo_release
from fw.distributed.communication.group_control import (
    restart_process_group,
    shutdown_process_group,
    wait,
)
from fw.distributed.communication.nccl_config import create_nccl_config
from fw.distributed.communication.object_p2p import recv_object_list, send_object_list
from fw.distributed.fleet.dataset import InMemoryDataset, QueueDataset
from fw.distributed.mp_split import split
from fw.distributed.ps.entry import CountFilterEntry, ProbabilityEntry, ShowClickEntry

_NAMES2 = ["send_object_list", "recv_object_list", "wait", "split", "gloo_init_parallel_env",
           "gloo_barrier", "gloo_release", "restart_process_group", "shutdown_process_group",
           "create_nccl_config", "io", "ShardedWeight", "ShardedStateDict", "shard_weight",
           "build_sharded_state_dict", "load_merged_state_dict", "CountFilterEntry",
           "ProbabilityEntry", "ShowClickEntry", "InMemoryDataset", "QueueDataset"]
__all__ += _NAMES2
# --- end Paddle 3.3 names (names2) ---
