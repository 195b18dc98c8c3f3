"""`fleet.init`, `distributed_model`, `distributed_optimizer` and the job's
hybrid communicate group (Paddle's ``paddle.distributed.fleet``).

`init` lays the world's ranks out on the grid of ``strategy.hybrid_configs`` (dp x
pp x sharding x sep x mp, `topology.CommunicateTopology`) and makes this rank's
group on each axis. In parameter-server mode (``is_collective=False``) it only
keeps the role maker (`base.role_maker`): the parameter-server runtime starts in
``init_server``/``init_worker``. `Fleet` is Paddle's class of these functions; the
module-level functions are the methods of its one instance, `fleet`, as in
Paddle. `distributed_model` then wraps the model for the configured parallelism
(pipeline > tensor/data), and `distributed_optimizer` wraps the optimizer for
gradient merge and ZeRO sharding.
"""

from __future__ import annotations

from fw.distributed import _fleet_comm as comm
from fw.distributed.fleet.base.util_factory import UtilBase
from fw.distributed.fleet.strategy import DistributedStrategy
from fw.distributed.fleet.topology import CommunicateTopology, HybridCommunicateGroup
from fw.distributed.ps import fleet_api

__all__ = ["Fleet", "fleet", "init", "get_hybrid_communicate_group", "distributed_model",
           "distributed_optimizer", "worker_index", "worker_num", "is_first_worker",
           "barrier_worker", "is_initialized"]


class _State:
    strategy = None
    hcg = None
    is_collective = False
    dp_model = None  # the DataParallel distributed_model made (gradient merge drives it)
    role_maker = None  # the role maker of the last init (base.role_maker)


_state = _State()
util = UtilBase()  # fleet.util


def _hcg_or_none():
    return _state.hcg


def init(role_maker=None, is_collective=False, strategy=None, log_level="INFO"):
    """Start fleet.

    With ``is_collective=True`` (collective training) lay the ranks out on
    ``strategy.hybrid_configs``: a ``dp_degree`` of -1, or degrees that leave ranks
    over with dp 1, give data parallelism the rest (Paddle's rule). With
    ``is_collective=False`` and a parameter-server environment
    (``PADDLE_PSERVERS_IP_PORT_LIST``), only the role is set up (the runtime starts
    in ``init_server``/``init_worker``); without one, the job is laid out as in
    collective mode (Paddle's dynamic mode always sets up the hybrid groups).

    Args:
        role_maker (RoleMakerBase, optional): who this process is; default a
            `PaddleCloudRoleMaker` of `is_collective` reading the environment. A
            role maker made with ``is_collective=True`` selects collective mode.
        is_collective (bool): collective (True) or parameter-server mode.
        strategy (DistributedStrategy, optional): the parallel configuration.
        log_level (str|int): accepted for Paddle compatibility.

    Returns:
        None

    Examples:
        >>> import fw
        >>> from fw.distributed import fleet
        >>> fleet.init(is_collective=True)
        >>> fleet.worker_num(), fleet.is_first_worker()
        (1, True)
    """
    from fw.distributed.fleet.base.role_maker import PaddleCloudRoleMaker, RoleMakerBase

    if role_maker is None:
        if not isinstance(is_collective, bool):
            raise TypeError(f"fleet.init: is_collective must be a bool, got {is_collective!r}")
        role_maker = PaddleCloudRoleMaker(is_collective=is_collective)
    elif not isinstance(role_maker, RoleMakerBase):
        raise TypeError(f"fleet.init: role_maker must be a fleet role maker "
                        f"(PaddleCloudRoleMaker, UserDefinedRoleMaker), got "
                        f"{type(role_maker).__name__}")
    else:
        is_collective = bool(role_maker._is_collective)
    _state.role_maker = role_maker
    util._set_role_maker(role_maker)
    role_maker._gen()  # parse now, so a bad environment fails here
    if not is_collective and not role_maker._is_non_distributed():
        # parameter-server mode
        _state.strategy = strategy if strategy is not None else DistributedStrategy()
        _state.is_collective = False
        _state.hcg = None
        util._set_strategy(_state.strategy)
        return None
    if not role_maker._is_collective:
        # no parameter servers: a collective job, whose ranks the collective role
        # maker counts (the PS one would say "one worker")
        role_maker = PaddleCloudRoleMaker(is_collective=True)
        _state.role_maker = role_maker
        util._set_role_maker(role_maker)
    if strategy is None:
        strategy = DistributedStrategy()
    if not isinstance(strategy, DistributedStrategy):
        raise TypeError(f"fleet.init: 'strategy' must be a fleet.DistributedStrategy, got "
                        f"{type(strategy).__name__}")
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
    util._set_strategy(strategy)
    return None


def is_initialized() -> bool:
    """Whether `init` has run (in collective mode).

    Returns:
        bool: True after ``fleet.init(is_collective=True, ...)``.

    Examples:
        >>> import fw
        >>> from fw.distributed import fleet
        >>> strategy = fleet.DistributedStrategy()
        >>> strategy.hybrid_configs = {"dp_degree": 1, "mp_degree": 1, "pp_degree": 1}
        >>> fleet.init(is_collective=True, strategy=strategy)
        >>> fleet.is_initialized()
        True
    """
    return _state.hcg is not None


def _require(what):
    if _state.hcg is None:
        raise RuntimeError(f"fleet.{what}: call fleet.init(is_collective=True, strategy=...) "
                           f"first")
    return _state.hcg


def get_hybrid_communicate_group():
    """The hybrid communicate group `init` built: the dp/mp/pp/sharding groups of this rank.

    Returns:
        HybridCommunicateGroup: query it with ``get_data_parallel_world_size()``,
        ``get_model_parallel_group()``, … (an error when `init` has not run).

    Examples:
        >>> import fw
        >>> from fw.distributed import fleet
        >>> strategy = fleet.DistributedStrategy()
        >>> strategy.hybrid_configs = {"dp_degree": 1, "mp_degree": 1, "pp_degree": 1}
        >>> fleet.init(is_collective=True, strategy=strategy)
        >>> hcg = fleet.get_hybrid_communicate_group()
        >>> hcg.get_data_parallel_world_size(), hcg.get_model_parallel_world_size()
        (1, 1)
    """
    return _require("get_hybrid_communicate_group")


def _role():
    """The role maker of the last `init`; before one (community code asks
    ``fleet.worker_index()`` without ``fleet.init``) the job's collective world."""
    return _state.role_maker


def worker_index() -> int:
    """This worker's index (its rank in collective mode).

    Returns:
        int: the index, from 0.

    Examples:
        >>> import fw
        >>> from fw.distributed import fleet
        >>> strategy = fleet.DistributedStrategy()
        >>> strategy.hybrid_configs = {"dp_degree": 1, "mp_degree": 1, "pp_degree": 1}
        >>> fleet.init(is_collective=True, strategy=strategy)
        >>> fleet.worker_index()
        0
    """
    rm = _role()
    return comm.world_rank() if rm is None or rm._is_collective else rm._worker_index()


def worker_num() -> int:
    """The number of workers (the world size in collective mode).

    Returns:
        int: the number of workers.

    Examples:
        >>> import fw
        >>> from fw.distributed import fleet
        >>> strategy = fleet.DistributedStrategy()
        >>> strategy.hybrid_configs = {"dp_degree": 1, "mp_degree": 1, "pp_degree": 1}
        >>> fleet.init(is_collective=True, strategy=strategy)
        >>> fleet.worker_num()
        1
    """
    rm = _role()
    return comm.world_size() if rm is None or rm._is_collective else rm._worker_num()


def is_first_worker() -> bool:
    """Whether this process is worker 0 (the one that usually saves and logs).

    Returns:
        bool: True on worker 0.

    Examples:
        >>> import fw
        >>> from fw.distributed import fleet
        >>> strategy = fleet.DistributedStrategy()
        >>> strategy.hybrid_configs = {"dp_degree": 1, "mp_degree": 1, "pp_degree": 1}
        >>> fleet.init(is_collective=True, strategy=strategy)
        >>> fleet.is_first_worker()
        True
    """
    rm = _role()
    return comm.world_rank() == 0 if rm is None or rm._is_collective else rm._is_first_worker()


def is_worker() -> bool:
    """Whether this process is a worker (trainer) rather than a parameter server.

    Returns:
        bool: True for a worker; always True in collective mode.

    Examples:
        >>> import fw
        >>> from fw.distributed import fleet
        >>> strategy = fleet.DistributedStrategy()
        >>> strategy.hybrid_configs = {"dp_degree": 1, "mp_degree": 1, "pp_degree": 1}
        >>> fleet.init(is_collective=True, strategy=strategy)
        >>> fleet.is_worker()
        True
    """
    rm = _role()
    return True if rm is None else rm._is_worker()


def is_server() -> bool:
    """Whether this process is a parameter server.

    Returns:
        bool: True on a parameter server; always False in collective mode.

    Examples:
        >>> import fw
        >>> from fw.distributed import fleet
        >>> fleet.init(is_collective=True)
        >>> fleet.is_server()
        False
    """
    rm = _role()
    return False if rm is None else rm._is_server()


def server_num() -> int:
    """The number of parameter servers (0 in collective mode).

    Returns:
        int: how many servers the job has.

    Examples:
        >>> import fw
        >>> from fw.distributed import fleet
        >>> fleet.init(is_collective=True)
        >>> fleet.server_num()
        0
    """
    rm = _role()
    return 0 if rm is None else rm._server_num()


def server_index() -> int:
    """This server's index among the servers.

    Returns:
        int: the index, from 0; a process that is not a parameter server gets a
        RuntimeError.

    Examples:
        >>> import fw
        >>> from fw.distributed import fleet
        >>> fleet.init(is_collective=True)
        >>> try:
        ...     fleet.server_index()
        ... except RuntimeError as e:
        ...     print(e)
        fleet.server_index: this process is not a parameter server
    """
    rm = _role()
    if rm is None or not rm._is_server():
        raise RuntimeError("fleet.server_index: this process is not a parameter server")
    return rm._server_index()


def node_num() -> int:
    """The number of nodes (distinct hosts of the worker endpoints).

    Returns:
        int: the node count (1 for a single-process job).

    Examples:
        >>> import fw
        >>> from fw.distributed import fleet
        >>> fleet.init(is_collective=True)
        >>> fleet.node_num()
        1
    """
    rm = _role()
    return 1 if rm is None else rm._node_num()


def _eps(eps, to_string):
    return ",".join(eps) if to_string else list(eps)


def worker_endpoints(to_string=False):
    """The workers' ``ip:port`` (a list, or one comma-separated string).

    Args:
        to_string (bool, optional): return one comma-separated string instead of a
            list. Default: False.

    Returns:
        list[str] | str: the trainer endpoints, in rank order.

    Examples:
        >>> import fw
        >>> from fw.distributed import fleet
        >>> fleet.init(is_collective=True)
        >>> len(fleet.worker_endpoints())
        1
        >>> isinstance(fleet.worker_endpoints(to_string=True), str)
        True
    """
    rm = _role()
    if rm is None:
        from fw.distributed.fleet.base.role_maker import PaddleCloudRoleMaker

        rm = PaddleCloudRoleMaker(is_collective=True)
    return _eps(rm._get_trainer_endpoints(), to_string)


def server_endpoints(to_string=False):
    """The parameter servers' ``ip:port`` (a list, or one comma-separated string).

    Args:
        to_string (bool, optional): return one comma-separated string instead of a
            list. Default: False.

    Returns:
        list[str] | str: the server endpoints (empty in collective mode).

    Examples:
        >>> import fw
        >>> from fw.distributed import fleet
        >>> fleet.init(is_collective=True)
        >>> fleet.server_endpoints(), fleet.server_endpoints(to_string=True)
        ([], '')
    """
    rm = _role()
    return _eps([] if rm is None else rm._get_pserver_endpoints(), to_string)


def barrier_worker():
    """Block until every worker has called `barrier_worker`.

    Returns:
        None.

    Examples:
        >>> import fw
        >>> from fw.distributed import fleet
        >>> strategy = fleet.DistributedStrategy()
        >>> strategy.hybrid_configs = {"dp_degree": 1, "mp_degree": 1, "pp_degree": 1}
        >>> fleet.init(is_collective=True, strategy=strategy)
        >>> fleet.barrier_worker()
    """
    rm = _role()
    if rm is None or rm._is_collective:
        comm.barrier()
    else:
        rm._barrier("worker")


def all_reduce(input, mode="sum"):
    """All-reduce a number (or array) among the workers (``fleet.util.all_reduce``).

    Args:
        input (int|float|numpy.ndarray): this worker's value.
        mode (str, optional): "sum", "max" or "min". Default: "sum".

    Returns:
        numpy.ndarray: the reduced value, of `input`'s shape.

    Examples:
        >>> import fw
        >>> from fw.distributed import fleet
        >>> strategy = fleet.DistributedStrategy()
        >>> strategy.hybrid_configs = {"dp_degree": 1, "mp_degree": 1, "pp_degree": 1}
        >>> fleet.init(is_collective=True, strategy=strategy)
        >>> fleet.all_reduce(3)
        array(3)
    """
    return util.all_reduce(input, mode, "worker")


def distributed_model(model):
    """Wrap `model` for the parallelism of the strategy given to `init`.

    A `PipelineLayer` under pp > 1 becomes a `PipelineParallel` (with ``train_batch``);
    otherwise the model is made data parallel over the dp group (a `DataParallel`), after
    the parameters that tensor parallelism replicates are synchronised over the mp group.
    With one rank and no parallelism it is returned unchanged.

    Args:
        model (Layer): the model.

    Returns:
        Layer: the wrapped (or the same) model.

    Examples:
        >>> import fw
        >>> from fw.distributed import fleet
        >>> strategy = fleet.DistributedStrategy()
        >>> strategy.hybrid_configs = {"dp_degree": 1, "mp_degree": 1, "pp_degree": 1}
        >>> fleet.init(is_collective=True, strategy=strategy)
        >>> model = fleet.distributed_model(fw.nn.Linear(2, 2))
        >>> model(fw.ones([1, 2])).shape
        [1, 2]
    """
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
    """Wrap `optimizer` for the job's strategy.

    Collective mode: a hybrid-parallel optimizer that handles gradient merge and
    sharding; parameter-server mode: a `fw.distributed.ps.PSOptimizer` whose rule the
    servers apply, in the mode ``strategy.a_sync``/``a_sync_configs`` choose.

    Args:
        optimizer (Optimizer): the local optimizer.
        strategy (DistributedStrategy, optional): overrides the one given to `init`.
            Default: None.

    Returns:
        Optimizer: the wrapped optimizer (``step``/``clear_grad`` as usual).

    Examples:
        >>> import fw
        >>> from fw.distributed import fleet
        >>> strategy = fleet.DistributedStrategy()
        >>> strategy.hybrid_configs = {"dp_degree": 1, "mp_degree": 1, "pp_degree": 1}
        >>> fleet.init(is_collective=True, strategy=strategy)
        >>> model = fleet.distributed_model(fw.nn.Linear(2, 2))
        >>> opt = fleet.distributed_optimizer(fw.optimizer.SGD(0.1, parameters=model.parameters()))
        >>> model(fw.ones([1, 2])).sum().backward()
        >>> opt.step()
        >>> opt.clear_grad()
    """
    if _ps_mode():
        return fleet_api.distributed_optimizer(_state.role_maker, optimizer,
                                               strategy or _state.strategy)
    _require("distributed_optimizer")
    from fw.distributed.fleet.optimizer import HybridParallelOptimizer

    return HybridParallelOptimizer(optimizer, _state.hcg, strategy or _state.strategy)


def _ps_mode() -> bool:
    """Whether `init` started parameter-server mode (a non-collective role maker of a
    job with parameter servers)."""
    rm = _state.role_maker
    return (rm is not None and not _state.is_collective and not rm._is_collective
            and not rm._is_non_distributed())


class Fleet:
    """Paddle's ``fleet.Fleet``: the fleet API as methods. ``fleet.fleet`` is the
    instance behind the module-level functions (``fleet.init`` is
    ``fleet.fleet.init``); a new instance shares the job's state, since a process
    has one distributed role.

    Examples:
        >>> import fw
        >>> from fw.distributed import fleet
        >>> f = fleet.Fleet()
        >>> f.init(is_collective=True)
        >>> f.worker_index(), f.is_server()
        (0, False)
    """

    init = staticmethod(init)
    is_initialized = staticmethod(is_initialized)
    get_hybrid_communicate_group = staticmethod(get_hybrid_communicate_group)
    distributed_model = staticmethod(distributed_model)
    distributed_optimizer = staticmethod(distributed_optimizer)
    worker_index = staticmethod(worker_index)
    worker_num = staticmethod(worker_num)
    is_first_worker = staticmethod(is_first_worker)
    is_worker = staticmethod(is_worker)
    is_server = staticmethod(is_server)
    server_num = staticmethod(server_num)
    server_index = staticmethod(server_index)
    node_num = staticmethod(node_num)
    worker_endpoints = staticmethod(worker_endpoints)
    server_endpoints = staticmethod(server_endpoints)
    barrier_worker = staticmethod(barrier_worker)
    all_reduce = staticmethod(all_reduce)
    # parameter-server mode (fw.distributed.ps)
    init_server = staticmethod(fleet_api.init_server)
    run_server = staticmethod(fleet_api.run_server)
    init_worker = staticmethod(fleet_api.init_worker)
    stop_worker = staticmethod(fleet_api.stop_worker)
    save_persistables = staticmethod(fleet_api.save_persistables)

    @property
    def util(self):
        """The job's `UtilBase` (``fleet.util``): collectives over the workers and
        file sharding.

        Returns:
            UtilBase: the shared utility object.

        Examples:
            >>> import fw
            >>> from fw.distributed import fleet
            >>> fleet.Fleet().util is fleet.util
            True
        """
        return util

    @property
    def _role_maker(self):
        return _state.role_maker


fleet = Fleet()
