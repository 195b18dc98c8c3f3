"""fleet's parameter-server entry points (Paddle's ``fleet.is_server``,
``init_server``, ``run_server``, ``init_worker``, ``stop_worker``, ...), re-exported
by `fw.distributed.fleet`. In collective mode they say so instead of guessing."""
from __future__ import annotations

from fw.distributed.ps import runtime

__all__ = ["is_server", "is_worker", "server_num", "server_index", "init_server",
           "run_server", "init_worker", "stop_worker", "save_persistables", "ps_worker_index",
           "ps_worker_num", "ps_barrier_worker"]


def is_server() -> bool:
    """Whether this process is a parameter server (False outside PS mode).

    Examples:
        >>> from fw.distributed import fleet
        >>> fleet.is_server()
        False
    """
    rt = runtime.current()
    return rt is not None and rt.role.is_server


def is_worker() -> bool:
    """Whether this process trains (a PS-mode trainer, or any collective rank).

    Examples:
        >>> from fw.distributed import fleet
        >>> fleet.is_worker()
        True
    """
    rt = runtime.current()
    return rt is None or not rt.role.is_server


def server_num() -> int:
    """The number of parameter servers (0 outside PS mode)."""
    rt = runtime.current()
    return 0 if rt is None else rt.role.num_servers


def server_index() -> int:
    """This server's index (PS mode, on a server)."""
    return runtime.require("server_index", worker=False).role.index


def init_server(dirname=None, var_names=None, **kwargs) -> None:
    """Prepare this parameter server; with `dirname`, load the tables saved there by
    `save_persistables` (by any number of servers: each server keeps the ids it
    owns now). `var_names` (Paddle's: load only some tables) is not supported.

    Args:
        dirname (str, optional): a checkpoint directory. Default: None.

    Returns:
        None
    """
    if var_names is not None:
        raise NotImplementedError("fleet.init_server: var_names (loading only some tables) is "
                                  "not supported; every table of the checkpoint is loaded")
    runtime.require("init_server", worker=False).init_server(dirname)


def run_server() -> None:
    """Serve the trainers' requests until every trainer called `stop_worker`."""
    runtime.require("run_server", worker=False).run_server()


def init_worker(scopes=None) -> None:
    """Create the tables on the servers, send (trainer 0) and pull the initial dense
    parameters, and wait for every trainer. Call after `distributed_optimizer`."""
    runtime.require("init_worker", worker=True).init_worker()


def stop_worker() -> None:
    """Tell every server this trainer is done (geo: after a last merge). The servers
    leave `run_server` once all trainers stopped, so the job ends."""
    runtime.require("stop_worker", worker=True).stop_worker()


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
    """
    if dirname is None:
        raise ValueError("fleet.save_persistables: dirname is required")
    if mode != 0:
        raise NotImplementedError(f"fleet.save_persistables: mode={mode} (delta/base "
                                  "saving of Paddle's CTR accessor) is not supported; use 0")
    runtime.require("save_persistables", worker=True).save(dirname)


def ps_worker_index() -> int:
    return runtime.require("worker_index").role.index if is_worker() else -1


def ps_worker_num() -> int:
    return runtime.require("worker_num").role.num_trainers


def ps_barrier_worker() -> None:
    runtime.require("barrier_worker", worker=True).barrier()
