"""``fw.distributed.ps``: parameter-server training (fleet's PS mode).

Sparse embedding tables sharded over the servers by id hash, rows created on
first use, updated on the servers by the trainers' optimizer rule (SGD, Adagrad,
Adam); dense parameters pushed and pulled as one flat vector split over the
servers; sync, async and geo modes; checkpoints that reload onto any number of
servers. Transport: MPI point-to-point on fw's engine. The user-facing entry
points are ``fleet``'s (``fleet.init(role_maker=PaddleCloudRoleMaker())``,
``init_server``, ``run_server``, ``init_worker``, ``stop_worker``,
``distributed_optimizer``) and `SparseEmbedding`. See
packages/fw-distributed/README.md, "Parameter server".
"""
from __future__ import annotations

from fw.distributed.ps.errors import PSError, PSPeerDiedError, PSServerError, PSTimeoutError
from fw.distributed.ps.layer import SparseEmbedding
from fw.distributed.ps.optimizer import PSOptimizer
from fw.distributed.ps.table import DenseTable, SparseTable

__all__ = ["SparseEmbedding", "PSOptimizer", "SparseTable", "DenseTable", "PSError",
           "PSTimeoutError", "PSPeerDiedError", "PSServerError"]
