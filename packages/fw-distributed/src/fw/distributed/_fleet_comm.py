"""The collectives fleet, DataParallel, sharding and the sharded checkpoints run on:
a thin layer over `fw.distributed.communication` for NumPy buffers.

fleet moves arrays (gradient buckets, parameter shards, activations) in place;
here they are wrapped as tensors without a copy (`fw.core.tensor.wrap`) and
handed to the public collectives, so fleet gets their timeouts (which name the
missing or dead rank), the desync check and the flight recorder. The other
differences to the public API are fleet's conveniences: `src`/`dst` are *group*
ranks, `all_gather` returns one stacked array, and `world()` initialises the
parallel environment on first use.

Single process (no launcher, no ``mpiexec``): world size 1, MPI is never
initialised, every collective is the identity.
"""

from __future__ import annotations

import time

import numpy as np

from fw.core.tensor import wrap
from fw.distributed import communication as _c
from fw.distributed import parallel_env as _env
from fw.distributed.communication.errors import CollectiveTimeoutError

__all__ = [
    "Group", "CommTimeoutError", "world", "world_size", "world_rank", "new_group",
    "self_group", "all_reduce", "broadcast", "all_gather", "reduce_scatter", "reduce", "send",
    "recv", "barrier", "all_gather_bytes", "wait",
]

Group = _c.Group
CommTimeoutError = CollectiveTimeoutError

_OPS = {"sum": _c.ReduceOp.SUM, "max": _c.ReduceOp.MAX, "min": _c.ReduceOp.MIN,
        "prod": _c.ReduceOp.PROD}


class _SelfGroup:
    """A group of this rank alone, made without any collective call (the default
    of a tensor-parallel layer built outside fleet): every op on it is local."""

    def __init__(self, rank):
        self.ranks = [rank]
        self.rank = 0
        self.nranks = 1
        self.name = "self"
        self.id = -1

    world_size = property(lambda self: 1)

    def is_member(self):
        return True

    def get_group_rank(self, world_rank):
        return 0 if world_rank == self.ranks[0] else -1

    def __repr__(self):
        return f"SelfGroup(rank={self.ranks[0]})"


def world():
    """The group of every rank of the job (initialises the environment once)."""
    return _env.init_parallel_env()


def world_size() -> int:
    return _env.get_world_size()


def world_rank() -> int:
    return _env.get_rank()


def self_group():
    return _SelfGroup(world_rank())


def new_group(ranks, name=None):
    """A group of the given world ranks; every rank calls it, in the same order."""
    world()
    g = _c.new_group(list(ranks))
    if name:
        g.name = f"{name}{g.ranks}"
    return g


def _g(group):
    return world() if group is None else group


def _local(g):
    return g.nranks == 1 or isinstance(g, _SelfGroup)


def _op(op):
    try:
        return _OPS[str(op).lower()]
    except KeyError:
        raise ValueError(f"all_reduce: op must be one of {sorted(_OPS)}, got {op!r}") from None


def _arr(a, fn):
    if not isinstance(a, np.ndarray) or not a.flags.c_contiguous:
        raise TypeError(f"{fn}: expects a C-contiguous numpy array, got {type(a).__name__}")
    return wrap(a)


class _Done:
    """The task of an op that had nothing to do."""

    def wait(self, timeout=None):
        return True

    def is_completed(self):
        return True


def wait(task):
    """Wait for `task` politely: MPICH advances a non-blocking collective only inside
    MPI calls (one step per test), so test back to back for 2 ms (the transfer
    itself: a 1 MB all-reduce between two ranks of one node takes ~0.5 ms); past
    that the peer is late (still computing, or descheduled on a shared machine),
    so test in bursts between 0.1 ms naps and leave it the core; past 1 s hand over
    to the task's own wait, which has the group's deadline and names a dead or
    missing rank."""
    t0 = time.monotonic()
    fast_until = t0 + 2e-3
    polite_until = t0 + 1.0
    n = 0
    while not task.is_completed():
        n += 1
        if n & 31:
            continue
        now = time.monotonic()
        if now < fast_until:
            continue
        if now > polite_until:
            return task.wait()
        time.sleep(1e-4)
    return True


def _run(task, sync_op):
    if sync_op:
        wait(task)
    return task


def all_reduce(a, op="sum", group=None, sync_op=True):
    """Reduce `a` (a numpy array) over the group, in place; returns a task."""
    g = _g(group)
    t = _arr(a, "all_reduce")
    if _local(g):
        return _Done()
    return _run(_c.all_reduce(t, _op(op), group=g, sync_op=False), sync_op)


def broadcast(a, src=0, group=None, sync_op=True):
    """Copy `a` of group rank `src` into `a` of every rank (in place)."""
    g = _g(group)
    t = _arr(a, "broadcast")
    if _local(g):
        return _Done()
    return _run(_c.broadcast(t, g.ranks[src], group=g, sync_op=False), sync_op)


def all_gather(a, group=None) -> np.ndarray:
    """Every rank's `a` stacked on a new leading axis (group order)."""
    g = _g(group)
    t = _arr(np.ascontiguousarray(a), "all_gather")
    if _local(g):
        return np.ascontiguousarray(a)[None].copy()
    out = []
    wait(_c.all_gather(out, t, group=g, sync_op=False))
    return np.stack([o._data for o in out])


def reduce_scatter(out, a, op="sum", group=None) -> None:
    """Reduce `a` (nranks equal blocks in its flat order) and keep block `rank` in
    `out` (``a.size // nranks`` elements)."""
    g = _g(group)
    if a.size != out.size * g.nranks:
        raise ValueError(f"reduce_scatter: the input has {a.size} elements, expected nranks "
                         f"({g.nranks}) x output size ({out.size})")
    if _local(g):
        np.copyto(out, a.reshape(out.shape))
        return
    wait(_c.reduce_scatter(_arr(out, "reduce_scatter"), _arr(a.reshape(-1), "reduce_scatter"),
                           _op(op), group=g, sync_op=False))


def reduce(a, dst=0, op="sum", group=None, sync_op=True):
    """Reduce `a` over the group into `a` of group rank `dst`; returns a task."""
    g = _g(group)
    t = _arr(a, "reduce")
    if _local(g):
        return _Done()
    return _run(_c.reduce(t, g.ranks[dst], _op(op), group=g, sync_op=False), sync_op)


def send(a, dst, group=None, sync_op=True):
    """Send `a` to group rank `dst`."""
    g = _g(group)
    return _run(_c.send(_arr(a, "send"), g.ranks[dst], group=g, sync_op=False), sync_op)


def recv(a, src, group=None, sync_op=True):
    """Receive into `a` from group rank `src`."""
    g = _g(group)
    return _run(_c.recv(_arr(a, "recv"), g.ranks[src], group=g, sync_op=False), sync_op)


def barrier(group=None) -> None:
    g = _g(group)
    if not _local(g):
        _c.barrier(group=g)


def all_gather_bytes(data: bytes, group=None) -> list:
    """Every rank's `data` (bytes of any length), in group order."""
    g = _g(group)
    if _local(g):
        return [bytes(data)]
    out = []
    _c.all_gather_object(out, bytes(data), group=g)
    return out
