"""The parameter-server runtime of one process: its role, the transport, and the
server or the client; what ``fleet.init`` / ``init_server`` / ``run_server`` /
``init_worker`` / ``stop_worker`` do in parameter-server mode.

Bring-up: every process of the job (servers and trainers, ``S + T`` MPI ranks,
started by ``python -m fw.distributed.launch --run_mode ps`` or by ``mpiexec``
with the role variables per process) joins fw's MPI world
(`init_parallel_env`), the ranks exchange their roles (an all-gather, so no
rank layout is assumed and a wrong environment is reported, not guessed), and
duplicate the world communicator for parameter-server traffic. Both steps are
nonblocking with a deadline.
"""
from __future__ import annotations

import time
import zlib

import numpy as np

from fw.distributed.communication import _engine_mpi
from fw.distributed.communication._world import state, timeout_seconds
from fw.distributed.ps._role import role_from_maker
from fw.distributed.ps._transport import Transport, rpc_timeout
from fw.distributed.ps.errors import PSError, PSTimeoutError

__all__ = ["PSRuntime", "current", "get_or_create", "mode_of", "require"]

_current = [None]
_layers = []           # SparseEmbedding layers of this process, in creation order


def current():
    return _current[0]


def require(what: str, worker: bool | None = None):
    rt = _current[0]
    if rt is None:
        raise RuntimeError(f"fleet.{what}: call fleet.init(role_maker=PaddleCloudRoleMaker()) "
                           "in parameter-server mode first (TRAINING_ROLE set; started with "
                           "python -m fw.distributed.launch --run_mode ps)")
    if worker is True and rt.role.is_server:
        raise RuntimeError(f"fleet.{what}: this process is parameter server "
                           f"{rt.role.index}, not a trainer")
    if worker is False and not rt.role.is_server:
        raise RuntimeError(f"fleet.{what}: this process is trainer {rt.role.index}, not a "
                           "parameter server")
    return rt


def register_layer(layer) -> int:
    """A new `SparseEmbedding`'s table id (1, 2, ... in creation order: the same
    on every trainer running the same script; 0 is the dense table)."""
    _layers.append(layer)
    return len(_layers)


def layers():
    return list(_layers)


def default_seed(name: str) -> int:
    # rows of different tables must differ, and a table's rows must be the same in
    # every process: a hash of the name, never Python's salted hash()
    return zlib.crc32(name.encode())


def mode_of(strategy) -> tuple[str, int]:
    """("sync" | "async" | "geo", k_steps) of a DistributedStrategy, as Paddle's
    TrainerRuntimeConfig reads it: a_sync False -> sync; a_sync True and
    k_steps > 0 -> geo; a_sync True otherwise -> async."""
    if strategy is None:
        return "async", 0          # Paddle's default strategy has a_sync=True
    k = int(strategy.a_sync_configs["k_steps"])
    if not strategy.a_sync:
        if k > 0:
            raise ValueError("DistributedStrategy: a_sync_configs k_steps > 0 (geo mode) needs "
                             "a_sync=True")
        return "sync", 0
    return ("geo", k) if k > 0 else ("async", 0)


def _bounded(req, timeout, what):
    end = time.monotonic() + timeout
    while not req.Test():
        if time.monotonic() > end:
            _engine_mpi.mark_broken("parameter-server bring-up timeout")
            raise PSTimeoutError(f"fleet.init (parameter-server mode) on rank {state.rank}: "
                                 f"{what} did not complete within {timeout:g} s: not every "
                                 "server and trainer called fleet.init")
        time.sleep(0.0005)


class PSRuntime:
    def __init__(self, role, strategy, role_maker=None):
        self.role = role
        self.role_maker = role_maker
        self.strategy = strategy
        self.server = None
        self.client = None
        self.optimizer = None      # the PSOptimizer of distributed_optimizer
        self.worker_ready = False
        self.stopped = False
        self.dense_total = 0
        self.server_ranks = []
        self.trainer_ranks = []
        self.transport = None

    @property
    def timeout(self) -> float:
        return rpc_timeout(timeout_seconds(None, "fleet.init"))

    def bring_up(self):
        from fw.distributed.parallel_env import init_parallel_env

        role = self.role
        world = init_parallel_env()
        n = state.world_size
        want = role.num_servers + role.num_trainers
        if n != want:
            raise ValueError(
                f"fleet.init: parameter-server mode with {role.num_servers} server(s) "
                f"(PADDLE_PSERVERS_IP_PORT_LIST) and {role.num_trainers} trainer(s) "
                f"(PADDLE_TRAINERS_NUM) needs {want} processes in one job, but this job has "
                f"{n} (start it with python -m fw.distributed.launch --run_mode ps "
                f"--server_num {role.num_servers} --trainer_num {role.num_trainers} ...)")
        comm = world.engine.comm
        t = min(timeout_seconds(None, "fleet.init"), 300.0)
        mine = np.array([int(role.is_server), role.index, role.num_servers,
                         role.num_trainers], np.int64)
        every = np.empty((n, 4), np.int64)
        MPI = _engine_mpi.mpi_module()
        _bounded(comm.Iallgather([mine, MPI.INT64_T], [every, MPI.INT64_T]), t,
                 "exchanging the roles")
        servers, trainers = {}, {}
        for r, (srv, idx, ns, nt) in enumerate(every.tolist()):
            if (ns, nt) != (role.num_servers, role.num_trainers):
                raise ValueError(f"fleet.init: rank {r} sees {ns} server(s) and {nt} trainer(s) "
                                 f"but rank {state.rank} sees {role.num_servers} and "
                                 f"{role.num_trainers}: the processes' environments disagree")
            book = servers if srv else trainers
            if idx in book:
                raise ValueError(f"fleet.init: ranks {book[idx]} and {r} are both "
                                 f"{'server' if srv else 'trainer'} {idx}")
            book[idx] = r
        self.server_ranks = [servers[i] for i in range(role.num_servers)]
        self.trainer_ranks = [trainers[i] for i in range(role.num_trainers)]
        ps_comm, req = comm.Idup()
        _bounded(req, t, "duplicating the communicator")
        names = {r: f"parameter server {i} (rank {r}, {role.server_endpoints[i]})"
                 for i, r in enumerate(self.server_ranks)}
        names.update({r: f"trainer {i} (rank {r})" for i, r in enumerate(self.trainer_ranks)})
        self.transport = Transport(ps_comm, names)
        # the role maker's comm worlds (fleet.barrier_worker, fleet.util over workers or
        # servers): groups every rank creates in the same order
        from fw.distributed.communication.group import new_group

        wg = new_group(self.trainer_ranks)
        sg = new_group(self.server_ranks)
        if self.role_maker is not None:
            self.role_maker._set_comm_world("all", world)
            self.role_maker._set_comm_world("worker" if not role.is_server else "server",
                                            wg if not role.is_server else sg)
        if role.is_server:
            from fw.distributed.ps.server import ParameterServer

            self.server = ParameterServer(self.transport, role.index, role.num_servers,
                                          self.trainer_ranks, self.timeout)
        else:
            from fw.distributed.ps.client import PSClient

            self.client = PSClient(self.transport, self.server_ranks, role.index, self.timeout)

    # -- servers ------------------------------------------------------------------
    def init_server(self, dirname=None):
        if self.transport is None:
            self.bring_up()
        if dirname:
            self.server.load(str(dirname))

    def run_server(self):
        if self.server is None:
            raise RuntimeError("fleet.run_server: call fleet.init_server() first")
        self.server.serve()

    # -- trainers -----------------------------------------------------------------
    def init_worker(self):
        from fw.distributed.ps._protocol import Op

        if self.worker_ready:
            return
        if self.transport is None:
            self.bring_up()
        opt = self.optimizer
        if opt is None:
            raise RuntimeError("fleet.init_worker: call fleet.distributed_optimizer(optimizer, "
                               "strategy) first: the servers apply that optimizer's rule")
        c = self.client
        for layer in layers():
            c.create_sparse(layer.table_id, layer.table_config(opt.rule))
        self.dense_total = opt.dense_size()
        if self.dense_total:
            c.create_dense(self.dense_total, opt.rule)
            if self.role.index == 0:
                c.call(c.dense_parts(Op.INIT_DENSE, opt.dense_flat()),
                       "sending the initial dense parameters")
        self.barrier("init_worker")
        if self.dense_total:
            opt.set_dense(c.pull_dense(self.dense_total))
        opt.after_init_worker()
        self.worker_ready = True

    def barrier(self, what="barrier_worker"):
        from fw.distributed.ps._protocol import Op

        self.client.call([(0, Op.BARRIER, 0, None, None, None)], what)

    def stop_worker(self):
        from fw.distributed.ps._protocol import Op

        if self.stopped:
            return
        if self.transport is None:      # stop without init_worker: the servers still
            self.bring_up()             # wait for this trainer in the collective bring-up
        if self.worker_ready and self.optimizer is not None:
            self.optimizer.flush()
        c = self.client
        c.call([(s, Op.STOP, 0, None, None, None) for s in range(c.num_servers)],
               "stop_worker")
        if not self.transport.flush(30.0):
            raise PSError("fleet.stop_worker: the STOP messages were not delivered in 30 s")
        self.stopped = True

    def save(self, dirname):
        """Every server writes its shard of every table; this trainer the manifest."""
        import os

        from fw.distributed.ps import checkpoint
        from fw.distributed.ps._protocol import Op

        dirname = os.path.abspath(str(dirname))
        os.makedirs(dirname, exist_ok=True)
        c = self.client
        replies = c.call([(s, Op.SAVE, 0, {"dirname": dirname}, None, None)
                          for s in range(c.num_servers)], f"saving to {dirname}")
        shards = [m.meta["files"] for m in replies]
        opt = self.optimizer
        cfgs = [layer.table_config(opt.rule) for layer in layers()]
        dense = ({"name": "<dense>", "total": self.dense_total, "rule": opt.rule}
                 if self.dense_total else None)
        return checkpoint.write_manifest(dirname, c.num_servers, cfgs, dense, shards)


def get_or_create(role_maker, strategy, what: str):
    """This process's runtime (made on first use from `fleet.init`'s role maker;
    the transport comes up in init_server / init_worker)."""
    rt = _current[0]
    if rt is None:
        if role_maker is None or role_maker._is_collective or role_maker._is_non_distributed():
            raise RuntimeError(
                f"fleet.{what}: parameter-server mode needs fleet.init(role_maker="
                "PaddleCloudRoleMaker()) in a PS job (TRAINING_ROLE and "
                "PADDLE_PSERVERS_IP_PORT_LIST set: python -m fw.distributed.launch --run_mode "
                "ps --server_num S --trainer_num T)")
        rt = _current[0] = PSRuntime(role_from_maker(role_maker, f"fleet.{what}"), strategy,
                                     role_maker)
    return rt
