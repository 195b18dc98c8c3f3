"""fleet's parameter-server entry points (Paddle's ``fleet.init_server``,
``run_server``, ``init_worker``, ``stop_worker``, ``save_persistables`` and the
PS ``distributed_optimizer``), bound into `fw.distributed.fleet`. The role comes
from the role maker `fleet.init` kept; ``is_server``/``worker_index``/... are the
role maker's own queries (fleet_base)."""
from __future__ import annotations

from fw.distributed.ps import runtime

__all__ = ["init_server", "run_server", "init_worker", "stop_worker", "save_persistables",
           "distributed_optimizer"]


def _runtime(what: str, worker: bool):
    from fw.distributed.fleet import fleet_base

    runtime.get_or_create(fleet_base._state.role_maker, fleet_base._state.strategy, what)
    return runtime.require(what, worker=worker)


def distributed_optimizer(role_maker, optimizer, strategy):
    """The PS-mode `fleet.distributed_optimizer`: a `PSOptimizer`, kept by this
    process's runtime (``init_worker`` creates the tables with its rule)."""
    from fw.distributed.ps.optimizer import PSOptimizer

    rt = runtime.get_or_create(role_maker, strategy, "distributed_optimizer")
    opt = PSOptimizer(optimizer, strategy)
    rt.optimizer = opt
    return opt


def init_server(dirname=None, var_names=None, **kwargs) -> None:
    """Start this parameter server: join the job (the first PS call of every process
    brings the MPI transport up, collectively), and with `dirname` load the tables
    `save_persistables` wrote there, by any number of servers (each server keeps
    the ids it owns now). `var_names` (Paddle's: load only some tables) is not
    supported.

    Args:
        dirname (str, optional): a checkpoint directory. Default: None.
        var_names (list, optional): must be None.

    Returns:
        None

    Examples:
        >>> import fw
        >>> from fw.distributed import fleet
        >>> fleet.is_server()      # init_server runs on the servers of a PS job
        False
    """
    if var_names is not None:
        raise NotImplementedError("fleet.init_server: var_names (loading only some tables) is "
                                  "not supported; every table of the checkpoint is loaded")
    _runtime("init_server", worker=False).init_server(dirname)


def run_server() -> None:
    """Serve the trainers' requests until every trainer called `stop_worker`.

    Returns:
        None

    Examples:
        >>> import fw
        >>> from fw.distributed import fleet
        >>> fleet.is_server()      # run_server blocks on the servers of a PS job
        False
    """
    _runtime("run_server", worker=False).run_server()


def init_worker(scopes=None) -> None:
    """Join the job, create the tables on the servers, send (trainer 0) and pull the
    initial dense parameters, and wait for every trainer. Call it after
    `distributed_optimizer`.

    Args:
        scopes: Paddle's static-graph scopes; ignored.

    Returns:
        None

    Examples:
        >>> import fw
        >>> from fw.distributed import fleet
        >>> fleet.is_worker()      # init_worker runs on the trainers of a PS job
        True
    """
    _runtime("init_worker", worker=True).init_worker()


def stop_worker() -> None:
    """Tell every server this trainer is done (geo: after a last merge). The servers
    leave `run_server` once every trainer stopped, so the whole job ends.

    Returns:
        None

    Examples:
        >>> import fw
        >>> from fw.distributed import fleet
        >>> fleet.is_worker()
        True
    """
    _runtime("stop_worker", worker=True).stop_worker()


def save_persistables(executor=None, dirname=None, main_program=None, mode=0) -> None:
    """Save every table: each server writes its shard, this trainer the manifest
    (call it on one trainer). `executor`/`main_program` are Paddle's static-graph
    arguments and are ignored; `mode` must be 0 (everything).

    Args:
        executor: ignored (eager mode). Default: None.
        dirname (str): the directory.
        main_program: ignored. Default: None.
        mode (int): 0 (save all rows). Default: 0.

    Returns:
        None

    Examples:
        >>> import fw
        >>> from fw.distributed import fleet
        >>> fleet.is_worker()      # save_persistables runs on one trainer of a PS job
        True
    """
    if dirname is None:
        raise ValueError("fleet.save_persistables: dirname is required")
    if mode != 0:
        raise NotImplementedError(f"fleet.save_persistables: mode={mode} (delta/base "
                                  "saving of Paddle's CTR accessor) is not supported; use 0")
    _runtime("save_persistables", worker=True).save(dirname)
