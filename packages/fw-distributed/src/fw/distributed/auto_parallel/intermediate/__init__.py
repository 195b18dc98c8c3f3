"""Paddle 3.x's intermediate auto-parallel API on fw's eager auto-parallel:
`parallelize` with its plans, the ZeRO shard_fns of `shard_optimizer`,
`local_map` / `LocalLayer`, `shard_scaler`, the global mesh, `DistAttr`,
`to_distributed`. See packages/fw-distributed/README.md, "Intermediate API"."""

from fw.distributed.auto_parallel.intermediate.context_parallel import (
    ContextParallel,
    PrepareContextParallel,
)
from fw.distributed.auto_parallel.intermediate.conv_parallel import ConvParallel
from fw.distributed.auto_parallel.intermediate.dist_attr import DistAttr
from fw.distributed.auto_parallel.intermediate.global_mesh import get_mesh, set_mesh
from fw.distributed.auto_parallel.intermediate.local_map import LocalLayer, local_map
from fw.distributed.auto_parallel.intermediate.parallelize import parallelize
from fw.distributed.auto_parallel.intermediate.pipeline_parallel import SplitPoint
from fw.distributed.auto_parallel.intermediate.scaler import shard_scaler
from fw.distributed.auto_parallel.intermediate.sharding import (
    ShardedOptimizer,
    ShardingStage1,
    ShardingStage2,
    ShardingStage3,
)
from fw.distributed.auto_parallel.intermediate.tensor_parallel import (
    ColWiseParallel,
    PlanBase,
    PrepareLayerInput,
    PrepareLayerOutput,
    RowWiseParallel,
    SequenceParallelBegin,
    SequenceParallelDisable,
    SequenceParallelEnable,
    SequenceParallelEnd,
)
from fw.distributed.auto_parallel.intermediate.to_distributed import (
    ToDistributedConfig,
    to_distributed,
)

__all__ = [
    "parallelize", "PlanBase", "ColWiseParallel", "RowWiseParallel", "ConvParallel",
    "PrepareLayerInput", "PrepareLayerOutput", "SequenceParallelBegin", "SequenceParallelEnd",
    "SequenceParallelEnable", "SequenceParallelDisable", "ContextParallel",
    "PrepareContextParallel", "SplitPoint", "ShardingStage1", "ShardingStage2",
    "ShardingStage3", "ShardedOptimizer", "get_mesh", "set_mesh", "shard_scaler", "local_map",
    "LocalLayer", "to_distributed", "ToDistributedConfig", "DistAttr",
]
