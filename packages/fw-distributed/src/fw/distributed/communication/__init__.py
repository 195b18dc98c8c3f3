"""fw.distributed.communication: groups, reduce ops, collectives, p2p, object
collectives and tasks on the MPI engine (CPU) and the NCCL engine (GPU,
import-safe). See packages/fw-distributed/README.md, "Collectives, groups,
timeouts and the flight recorder"."""
from fw.distributed.communication import stream
from fw.distributed.communication.collectives import (
    all_gather,
    all_reduce,
    alltoall,
    alltoall_single,
    barrier,
    broadcast,
    gather,
    reduce,
    reduce_scatter,
    scatter,
)
from fw.distributed.communication.errors import (
    CollectiveDesyncError,
    CollectiveTimeoutError,
    CommError,
    CommunicatorBrokenError,
)
from fw.distributed.communication.group import (
    Group,
    destroy_process_group,
    get_group,
    new_group,
)
from fw.distributed.communication.object_collectives import (
    all_gather_object,
    broadcast_object_list,
    scatter_object_list,
)
from fw.distributed.communication.p2p import irecv, isend, recv, send
from fw.distributed.communication.reduce_op import ReduceOp
from fw.distributed.communication.task import Task

__all__ = [
    "stream", "all_gather", "all_reduce", "alltoall", "alltoall_single", "barrier",
    "broadcast", "gather", "reduce", "reduce_scatter", "scatter", "CollectiveDesyncError",
    "CollectiveTimeoutError", "CommError", "CommunicatorBrokenError", "Group",
    "destroy_process_group", "get_group", "new_group", "all_gather_object",
    "broadcast_object_list", "scatter_object_list", "irecv", "isend", "recv", "send",
    "ReduceOp", "Task",
]
