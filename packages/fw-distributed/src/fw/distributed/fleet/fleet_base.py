"""`fleet.init`, `distributed_model`, `distributed_optimizer` and the job's
hybrid communicate group (Paddle's ``paddle.distributed.fleet``).

`init` lays the world's ranks out on the grid of ``strategy.hybrid_configs`` (dp x
pp x sharding x sep x mp, `topology.CommunicateTopology`) and makes this rank's
group on each axis. `distributed_model` then wraps the model for the configured
parallelism (pipeline > tensor/data), and `distributed_optimizer` wraps the
optimizer for gradient merge and ZeRO sharding.
"""

from __future__ import annotations

from fw.distributed import _fleet_comm as comm
from fw.distributed.fleet.strategy import DistributedStrategy
from fw.distributed.fleet.topology import CommunicateTopology, HybridCommunicateGroup

__all__ = ["init", "get_hybrid_communicate_group", "distributed_model",
           "distributed_optimizer", "worker_index", "worker_num", "is_first_worker",
           "barrier_worker", "is_initialized"]


class _State:
    strategy = None
    hcg = None
    is_collective = False
    dp_model = None  # the DataParallel distributed_model made (gradient merge drives it)
    ps = None        # parameter-server mode: this process's fw.distributed.ps runtime


_state = _State()


def _hcg_or_none():
    return _state.hcg


def init(role_maker=None, is_collective=False, strategy=None, log_level="INFO"):
    """Start fleet: with ``is_collective=True`` lay the ranks out on
    ``strategy.hybrid_configs`` (a ``dp_degree`` of -1, or degrees that leave ranks
    over with dp 1, give data parallelism the rest: Paddle's rule). With a
    parameter-server role maker (``PaddleCloudRoleMaker()``, whose environment has
    ``TRAINING_ROLE``), start parameter-server mode (`fw.distributed.ps`)."""
    if strategy is None:
        strategy = DistributedStrategy()
    if not isinstance(strategy, DistributedStrategy):
        raise TypeError(f"fleet.init: 'strategy' must be a fleet.DistributedStrategy, got "
                        f"{type(strategy).__name__}")
    if not is_collective and not getattr(role_maker, "_is_collective", False):
        from fw.distributed.ps import _role

        if not _role.ps_mode_requested():
            raise NotImplementedError(
                "fleet.init: is_collective=False means parameter-server mode, which needs "
                "TRAINING_ROLE (PSERVER/TRAINER) and the other PS variables: start the job "
                "with python -m fw.distributed.launch --run_mode ps --server_num S "
                "--trainer_num T; for collective training pass is_collective=True")
        from fw.distributed.ps import runtime

        _state.ps = runtime.init(role_maker, strategy)
        _state.strategy = strategy
        return None
    n = comm.world_size()
    hc = strategy.hybrid_configs
    dims = {k: hc[f"{k}_degree"] for k in ("dp", "pp", "sharding", "sep", "mp")}
    others = dims["pp"] * dims["sharding"] * dims["sep"] * dims["mp"]
    if dims["dp"] == -1 or (dims["dp"] == 1 and others < n and n % others == 0):
        if n % others:
            raise ValueError(f"fleet.init: the world size {n} is not divisible by "
                             f"pp*sharding*sep*mp = {others}")
        dims["dp"] = n // others
    total = dims["dp"] * others
    if total != n:
        raise ValueError(f"fleet.init: hybrid_configs degrees {dims} multiply to {total} ranks "
                         f"but the job has {n} (launch it with {total} ranks or change the "
                         f"degrees)")
    order = list(hc["order"])
    names = {"dp": "data", "pp": "pipe", "sharding": "sharding", "sep": "sep", "mp": "model"}
    topo = CommunicateTopology([names[a] for a in order], [dims[a] for a in order])
    _state.hcg = HybridCommunicateGroup(topo)
    _state.strategy = strategy
    _state.dp_model = None
    _state.is_collective = True
    return None


def is_initialized() -> bool:
    return _state.hcg is not None or _state.ps is not None


def _require(what):
    if _state.hcg is None:
        raise RuntimeError(f"fleet.{what}: call fleet.init(is_collective=True, strategy=...) "
                           f"first")
    return _state.hcg


def get_hybrid_communicate_group():
    return _require("get_hybrid_communicate_group")


def worker_index() -> int:
    if _state.ps is not None:   # parameter-server mode: the trainer id
        from fw.distributed.ps import fleet_api

        return fleet_api.ps_worker_index()
    return comm.world_rank()


def worker_num() -> int:
    if _state.ps is not None:
        from fw.distributed.ps import fleet_api

        return fleet_api.ps_worker_num()
    return comm.world_size()


def is_first_worker() -> bool:
    return worker_index() == 0


def barrier_worker():
    if _state.ps is not None:   # the trainers meet at server 0 (servers serve meanwhile)
        from fw.distributed.ps import fleet_api

        return fleet_api.ps_barrier_worker()
    comm.barrier()


def distributed_model(model):
    """Wrap `model` for the parallelism of the strategy given to `init`:
    a `PipelineLayer` under pp > 1 becomes a `PipelineParallel` (with ``train_batch``);
    otherwise the model is made data parallel over the dp group (a `DataParallel`),
    after the parameters that tensor parallelism replicates are made equal over the
    mp group. With one rank and no parallelism it is returned unchanged."""
    hcg = _require("distributed_model")
    strategy = _state.strategy
    _state.dp_model = None
    from fw.distributed.parallel import DataParallel

    mp = hcg.get_model_parallel_group()
    if mp.nranks > 1:
        _sync_replicated(model, mp)
    if hcg.get_pipe_parallel_world_size() > 1:
        from fw.distributed.fleet.meta_parallel.pipeline_parallel import PipelineParallel

        return PipelineParallel(model, hcg, strategy)
    sg = hcg.get_sharding_parallel_group()
    if sg.nranks > 1:
        if hcg.get_data_parallel_world_size() > 1:
            raise NotImplementedError("fleet: sharding_degree > 1 together with dp_degree > 1 "
                                      "is not supported; shard over all data-parallel ranks "
                                      "(sharding_degree = their number, dp_degree = 1)")
        # ZeRO over the sharding group: stage 1 all-reduces the gradients in backward,
        # stage 2 reduces each bucket to the owner of its parameters
        from fw.distributed.sharding import owners_of

        stage = strategy.sharding_configs["stage"]
        if stage == 3:
            raise NotImplementedError(
                "fleet.distributed_model: sharding stage 3 is used through "
                "fw.distributed.sharding.group_sharded_parallel(model, optimizer, 'p_g_os')")
        owners = owners_of(model.parameters(), sg.nranks) if stage == 2 else None
        return DataParallel(model, group=sg,
                            find_unused_parameters=strategy.find_unused_parameters,
                            _grad_owners=owners)
    dp = hcg.get_data_parallel_group()
    if dp.nranks > 1:
        _state.dp_model = DataParallel(model, group=dp,
                                       find_unused_parameters=strategy.find_unused_parameters)
        return _state.dp_model
    return model


def _sync_replicated(model, group):
    """Broadcast from mp rank 0 the parameters tensor parallelism does not split."""
    import numpy as np

    for p in model.parameters():
        if not getattr(p, "is_distributed", False):
            a = p._data
            b = np.ascontiguousarray(a)
            comm.broadcast(b, src=0, group=group)
            if b is not a:
                np.copyto(a, b)


def distributed_optimizer(optimizer, strategy=None):
    """Wrap `optimizer` for the job's strategy (gradient merge, sharding; in
    parameter-server mode a `fw.distributed.ps.PSOptimizer` whose rule the
    servers apply, in the mode ``strategy.a_sync``/``a_sync_configs`` choose)."""
    if _state.ps is not None:
        from fw.distributed.ps.optimizer import PSOptimizer

        opt = PSOptimizer(optimizer, strategy or _state.strategy)
        _state.ps.optimizer = opt
        return opt
    _require("distributed_optimizer")
    from fw.distributed.fleet.optimizer import HybridParallelOptimizer

    return HybridParallelOptimizer(optimizer, _state.hcg, strategy or _state.strategy)
