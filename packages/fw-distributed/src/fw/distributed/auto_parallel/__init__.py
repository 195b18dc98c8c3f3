"""Eager auto-parallel (Paddle 3.x's ``paddle.distributed`` semi-auto API):
`ProcessMesh`, placements, distributed tensors and SPMD execution of ops on them.
See packages/fw-distributed/README.md, "Auto-parallel"."""

from fw.distributed.auto_parallel import spmd_rules  # noqa: F401  (fills spmd_rules.RULES)
from fw.distributed.auto_parallel.api import (
    dtensor_from_fn,
    reshard,
    shard_layer,
    shard_optimizer,
    shard_tensor,
    unshard_dtensor,
)
from fw.distributed.auto_parallel.dist_tensor import DistParameter, DistTensor, is_dist_tensor
from fw.distributed.auto_parallel.placement import (
    Partial,
    Placement,
    ReduceType,
    Replicate,
    Shard,
)
from fw.distributed.auto_parallel.process_mesh import ProcessMesh
from fw.distributed.auto_parallel.spmd import fallback_report, reset_fallback_report
from fw.distributed.auto_parallel.spmd_rules import RULES, register, rules_report
from fw.distributed.auto_parallel.static import (
    DistModel,
    ShardDataloader,
    shard_dataloader,
    to_static,
)

# --- intermediate API (intermediate/): parallelize, plans, ZeRO shard_fns, local_map ---
from fw.distributed.auto_parallel import intermediate  # isort: skip
from fw.distributed.auto_parallel.intermediate import (  # isort: skip
    get_mesh,
    set_mesh,
)

_INTERMEDIATE = ["intermediate", "get_mesh", "set_mesh"]
# --- end intermediate API ---

__all__ = [
    "ProcessMesh", "Placement", "Shard", "Replicate", "Partial", "ReduceType", "shard_tensor",
    "dtensor_from_fn", "reshard", "unshard_dtensor", "shard_layer", "shard_optimizer",
    "DistTensor", "DistParameter", "is_dist_tensor", "fallback_report", "reset_fallback_report",
    "RULES", "register", "rules_report", "to_static", "DistModel", "shard_dataloader",
    "ShardDataloader",
] + _INTERMEDIATE
