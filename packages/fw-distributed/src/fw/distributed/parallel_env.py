"""World bring-up: `init_parallel_env`, `ParallelEnv`, `get_rank`,
`get_world_size`, `is_initialized`, `is_available`, `get_backend`.

- Launched by fw's launcher (or plain ``mpiexec``): MPI_Init joins the job's
  COMM_WORLD through the process manager's PMI (``PMI_FD``/``PMI_RANK``/
  ``PMI_SIZE``). The job's TCP store is ``FW_STORE_ENDPOINT``; under plain
  mpiexec (no store) rank 0 starts one and broadcasts its endpoint over MPI.
- Not launched: rank 0 of 1, MPI is not initialised, collectives are local copies.
  `get_rank()`/`get_world_size()` work before `init_parallel_env` too (they read
  the launcher's environment), since community model code calls them at import.
"""
from __future__ import annotations

import os
import time
import uuid

import numpy as np

from fw.core.internal import collectives
from fw.distributed._flight_recorder import install_sigusr1, recorder
from fw.distributed.communication import _engine_mpi, _lowering
from fw.distributed.communication import group as _group
from fw.distributed.communication._engine_self import SelfEngine
from fw.distributed.communication._world import env_rank, env_world_size, state, timeout_seconds

__all__ = ["init_parallel_env", "ParallelEnv", "get_rank", "get_world_size",
           "is_initialized", "is_available", "get_backend"]


def _launched() -> bool:
    return any(os.environ.get(k) for k in ("PMI_FD", "PMI_PORT", "PMI_RANK")) \
        or env_world_size() > 1


def _bcast_bytes(comm, data: bytes | None, timeout: float) -> bytes:
    """Rank 0's `data` on every rank (bring-up only), with a deadline."""
    from fw.distributed.communication.errors import CollectiveTimeoutError

    eng = _engine_mpi.MpiEngine(comm)
    n = np.array([len(data) if data is not None else 0], np.int64)
    buf = None
    for stage in ("size", "payload"):
        a = n if stage == "size" else buf
        req = eng.bcast(a, 0)
        end = time.monotonic() + timeout
        while not req.Test():
            if time.monotonic() > end:
                _engine_mpi.mark_broken("bring-up timeout")
                raise CollectiveTimeoutError(
                    f"fw.distributed.init_parallel_env on rank {comm.Get_rank()}: rank 0 did "
                    f"not send the job's store endpoint within {timeout:g} s")
        if stage == "size":
            buf = (np.frombuffer(data, np.uint8).copy() if data is not None
                   else np.empty(int(n[0]), np.uint8))
    return buf.tobytes()


def init_parallel_env(timeout=None):
    """Initialise the distributed environment and return the world `Group`.

    Idempotent. Under the launcher (``python -m fw.distributed.launch``) it connects the
    ranks; without one it sets up a one-rank world, so the same script runs alone.

    Args:
        timeout (float|datetime.timedelta, optional): the default timeout, in seconds, of
            every collective (fw's addition to Paddle's signature). Default: None, which
            reads ``FW_DIST_TIMEOUT`` (the launcher's ``--timeout``), else 1800 s.

    Returns:
        Group: the world group (id 0).

    Examples:
        >>> import fw
        >>> import fw.distributed as dist
        >>> g = dist.init_parallel_env()
        >>> (dist.get_rank(), dist.get_world_size(), dist.is_initialized())
        (0, 1, True)
    """
    if state.initialized:
        return state.world
    t = timeout_seconds(timeout, "init_parallel_env")
    if _launched():
        comm = _engine_mpi.init_world(min(t, 300.0))
        engine = _engine_mpi.MpiEngine(comm)
    else:
        engine = SelfEngine()
    state.rank, state.world_size = engine.rank, engine.size
    state.timeout = t
    recorder.rank = state.rank
    if engine.size > 1:
        _connect_store(engine, t)
    recorder.job = state.job_id
    state.world = _group.Group(0, range(state.world_size), engine, t)
    _group._groups[0] = state.world
    state.initialized = True
    # programs' collective ops (fw.jit.to_static) run on this world's engine
    collectives.register_backend(_lowering.run)
    install_sigusr1()
    if state.store is not None:
        from fw.distributed.communication._watch import Publisher, _publish

        _publish(state.store, state.rank)   # every rank has a record from the start
        state.publisher = Publisher(state.store, state.rank)
        state.publisher.start()
    return state.world


def _connect_store(engine, timeout):
    """The job's store client (and job id): FW_STORE_ENDPOINT from the launcher,
    else one hosted by rank 0 with its endpoint broadcast over MPI."""
    try:
        from fw.distributed.store import TCPStore
    except ImportError:
        return  # no store module: timeouts then cannot name the missing ranks
    ep = os.environ.get("FW_STORE_ENDPOINT")
    job = os.environ.get("FW_JOB_ID")
    if not ep:
        payload = None
        if engine.rank == 0:
            host = "127.0.0.1" if _single_host() else _hostname()
            server = TCPStore(host, 0, is_master=True, world_size=engine.size,
                              timeout=min(timeout, 300.0))
            state.store = server           # the master is a client of its own server too
            payload = f"{server.endpoint}\n{job or uuid.uuid4().hex}".encode()
        ep, job = _bcast_bytes(engine.comm, payload, min(timeout, 300.0)).decode().split("\n")
    if state.store is None:
        host, port = ep.rsplit(":", 1)
        state.store = TCPStore(host, int(port), is_master=False, timeout=min(timeout, 300.0))
    state.job_id = job or "job"


def _single_host() -> bool:
    return os.environ.get("MPI_LOCALNRANKS") == os.environ.get("PMI_SIZE")


def _hostname() -> str:
    import socket

    return socket.gethostname()


def is_initialized() -> bool:
    """Whether `init_parallel_env` ran (and `destroy_process_group()` did not since).

    Returns:
        bool: True once the world is set up.

    Examples:
        >>> import fw
        >>> import fw.distributed as dist
        >>> _ = dist.init_parallel_env()
        >>> dist.is_initialized()
        True
    """
    return state.initialized


def is_available() -> bool:
    """Whether distributed support is usable in this installation (mpi4py imports).

    Returns:
        bool: True when collectives across processes can run.

    Examples:
        >>> import fw
        >>> import fw.distributed as dist
        >>> isinstance(dist.is_available(), bool)
        True
    """
    import importlib.util

    return importlib.util.find_spec("mpi4py") is not None


def get_rank(group=None) -> int:
    """This process's rank in `group`.

    Before `init_parallel_env` it reads the launcher's ``PADDLE_TRAINER_ID`` (or
    ``PMI_RANK``/``RANK``), and is 0 without a launcher.

    Args:
        group (Group, optional): the group; None for the world. Default: None.

    Returns:
        int: the rank, or -1 when this process is not a member of `group`.

    Examples:
        >>> import fw
        >>> import fw.distributed as dist
        >>> dist.get_rank()
        0
    """
    if group is not None:
        return group.rank
    return state.rank if state.initialized else env_rank()


def get_world_size(group=None) -> int:
    """The number of ranks in `group`.

    Before `init_parallel_env` it reads the launcher's ``PADDLE_TRAINERS_NUM`` (1
    without a launcher).

    Args:
        group (Group, optional): the group; None for the world. Default: None.

    Returns:
        int: the number of ranks.

    Examples:
        >>> import fw
        >>> import fw.distributed as dist
        >>> dist.get_world_size()
        1
    """
    if group is not None:
        return group.nranks
    return state.world_size if state.initialized else env_world_size()


def get_backend(group=None) -> str:
    """The name of the engine that runs `group`'s collectives.

    "MPI" for CPU tensors under the launcher, "SELF" for a one-rank world without a
    launcher (GPU tensors use NCCL whatever this says).

    Args:
        group (Group, optional): the group; None for the world. Default: None.

    Returns:
        str: the engine's name.

    Examples:
        >>> import fw
        >>> import fw.distributed as dist
        >>> _ = dist.init_parallel_env()
        >>> dist.get_backend()
        'SELF'
    """
    g = group if group is not None else _group.default_group("get_backend")
    return g.backend


class ParallelEnv:
    """The launcher's view of this process (Paddle's ``ParallelEnv``): ``rank``,
    ``world_size`` (``nranks``), ``local_rank``, ``device_id``, ``device_type``,
    ``current_endpoint``, ``trainer_endpoints``, ``nrings``.

    Example:
        >>> import fw.distributed as dist
        >>> env = dist.ParallelEnv()
        >>> env.rank, env.world_size
        (0, 1)
    """

    def __init__(self):
        self._rank = get_rank()
        self._world_size = get_world_size()
        self._local_rank = int(os.environ.get("PADDLE_RANK_IN_NODE",
                                              os.environ.get("LOCAL_RANK", "0")))
        self._device_type = os.environ.get("PADDLE_XCCL_BACKEND", "cpu")
        ids = os.environ.get("FLAGS_selected_gpus") or os.environ.get("FLAGS_selected_accelerators")
        self._device_id = int(ids.split(",")[0]) if ids else 0
        self._trainer_endpoints = [e for e in os.environ.get(
            "PADDLE_TRAINER_ENDPOINTS", "").split(",") if e]
        self._current_endpoint = os.environ.get("PADDLE_CURRENT_ENDPOINT", "")
        self._nrings = int(os.environ.get("FLAGS_nccl_nrings", "1"))

    @property
    def rank(self) -> int:
        """This process's global rank (``PADDLE_TRAINER_ID``; 0 without a launcher).

        Examples:
            >>> import fw
            >>> import fw.distributed as dist
            >>> dist.ParallelEnv().rank
            0
        """
        return self._rank

    @property
    def world_size(self) -> int:
        """The number of ranks of the job (``PADDLE_TRAINERS_NUM``; 1 without a launcher).

        Examples:
            >>> import fw
            >>> import fw.distributed as dist
            >>> dist.ParallelEnv().world_size
            1
        """
        return self._world_size

    @property
    def local_rank(self) -> int:
        """This process's rank on its node (``PADDLE_RANK_IN_NODE``).

        Examples:
            >>> import fw
            >>> import fw.distributed as dist
            >>> dist.ParallelEnv().local_rank
            0
        """
        return self._local_rank

    @property
    def device_id(self) -> int:
        """The accelerator this rank uses (the first of ``FLAGS_selected_gpus``; 0 if unset).

        Examples:
            >>> import fw
            >>> import fw.distributed as dist
            >>> dist.ParallelEnv().device_id
            0
        """
        return self._device_id

    @property
    def device_type(self) -> str:
        """The device kind (``PADDLE_XCCL_BACKEND``; ``'cpu'`` if unset).

        Examples:
            >>> import fw
            >>> import fw.distributed as dist
            >>> dist.ParallelEnv().device_type
            'cpu'
        """
        return self._device_type

    @property
    def current_endpoint(self) -> str:
        """This rank's ``ip:port`` (``PADDLE_CURRENT_ENDPOINT``; empty without a launcher).

        Examples:
            >>> import fw
            >>> import fw.distributed as dist
            >>> dist.ParallelEnv().current_endpoint
            ''
        """
        return self._current_endpoint

    @property
    def trainer_endpoints(self) -> list:
        """Every rank's ``ip:port`` in rank order (``PADDLE_TRAINER_ENDPOINTS``).

        Examples:
            >>> import fw
            >>> import fw.distributed as dist
            >>> dist.ParallelEnv().trainer_endpoints
            []
        """
        return list(self._trainer_endpoints)

    @property
    def nrings(self) -> int:
        """The number of NCCL rings (``FLAGS_nccl_nrings``, default 1).

        Examples:
            >>> import fw
            >>> import fw.distributed as dist
            >>> dist.ParallelEnv().nrings
            1
        """
        return self._nrings

    # Paddle's older spellings
    local_rank_id = local_rank
    nranks = world_size
    dev_id = device_id
