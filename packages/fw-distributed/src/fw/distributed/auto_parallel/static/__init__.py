"""Static auto-parallel: `to_static` traces a layer to one global program and the
passes here make each rank's program — sharding propagation (`propagation`, the
eager SPMD rules of `spmd_rules.RULES`), reshard insertion (`reshard`), partition
(`partition`) — run as a `DistModel`. `sim` runs per-rank programs as threads of
one process (tests). See packages/fw-distributed/README.md, "dist.to_static"."""

from fw.distributed.auto_parallel.static.dist_model import DistModel, to_static
from fw.distributed.auto_parallel.static.loader import ShardDataloader, shard_dataloader
from fw.distributed.auto_parallel.static.partition import RankProgram, partition
from fw.distributed.auto_parallel.static.propagation import Propagation, propagate
from fw.distributed.auto_parallel.static.sim import SimulatedRanks

__all__ = ["DistModel", "to_static", "ShardDataloader", "shard_dataloader", "propagate",
           "Propagation", "partition", "RankProgram", "SimulatedRanks"]
