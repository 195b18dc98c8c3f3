"""The collectives fleet, DataParallel, sharding and the sharded checkpoints run on.

A thin private adapter over MPI (mpi4py on the mpich wheel), kept in one module so
that fleet's code does not care where its collectives come from: the comm
helper's `fw.distributed.communication` was not on ``main`` when fleet was
written, so this module talks to ``MPI.COMM_WORLD`` (and sub-communicators made
from it) directly. Switching fleet to the public collectives is a change of this
file only.

Arrays, not tensors: fleet moves NumPy buffers (gradient buckets, parameter
shards, activations) in place, zero-copy.

Nothing here can hang: every wait polls the MPI request with a deadline
(``FW_DIST_TIMEOUT`` seconds, default 300) and its error names the operation,
the group's ranks and, for point-to-point, the peer that did not answer.

Single process (no launcher, no ``mpiexec``): world size 1, MPI is never
initialised, every collective is the identity.
"""

from __future__ import annotations

import os
import time

import numpy as np

__all__ = [
    "Group", "Task", "CommTimeoutError", "world", "world_size", "world_rank", "new_group",
    "all_reduce", "broadcast", "all_gather", "reduce_scatter", "reduce", "send", "recv",
    "barrier", "default_timeout", "all_gather_bytes",
]


class CommTimeoutError(RuntimeError):
    """A collective or point-to-point operation did not complete in time."""


def default_timeout() -> float:
    """Seconds a wait may take: ``FW_DIST_TIMEOUT`` (set by the launcher) or 300."""
    v = os.environ.get("FW_DIST_TIMEOUT")
    try:
        return float(v) if v else 300.0
    except ValueError:
        raise ValueError(f"FW_DIST_TIMEOUT must be a number of seconds, got {v!r}") from None


def _env_world_size() -> int:
    # PMI_SIZE: the fw launcher and mpiexec (hydra); the others are Paddle's and torch's names
    for k in ("PMI_SIZE", "PADDLE_TRAINERS_NUM", "WORLD_SIZE"):
        v = os.environ.get(k)
        if v:
            try:
                return int(v)
            except ValueError:
                raise ValueError(f"environment variable {k}={v!r} is not an integer") from None
    return 1


_MPI = None


def _mpi():
    """mpi4py's MPI module, initialised on first use (only in a multi-rank job)."""
    global _MPI
    if _MPI is None:
        from mpi4py import MPI

        _MPI = MPI
    return _MPI


class Group:
    """A set of world ranks that run collectives together.

    ``ranks`` are world ranks in group order; ``rank`` is this process's index in
    the group (-1 when it is not a member); ``nranks`` the group size; ``comm`` the
    MPI communicator (None for a size-1 group or a non-member)."""

    def __init__(self, ranks, rank, comm, name="group"):
        self.ranks = list(ranks)
        self.rank = rank
        self.nranks = len(self.ranks)
        self.comm = comm
        self.name = name

    @property
    def world_size(self):
        return self.nranks

    def is_member(self) -> bool:
        return self.rank >= 0

    def get_group_rank(self, world_rank: int) -> int:
        return self.ranks.index(world_rank) if world_rank in self.ranks else -1

    def __repr__(self):
        return f"Group(name={self.name!r}, ranks={self.ranks}, rank={self.rank})"


_WORLD = None


def world() -> Group:
    """The group of every rank of the job."""
    global _WORLD
    if _WORLD is None:
        n = _env_world_size()
        if n <= 1:
            _WORLD = Group([0], 0, None, "world")
        else:
            MPI = _mpi()
            comm = MPI.COMM_WORLD
            if comm.Get_size() != n:
                raise RuntimeError(
                    f"fw.distributed: the environment says the job has {n} ranks but MPI's "
                    f"COMM_WORLD has {comm.Get_size()}: start the job with the fw launcher or "
                    f"mpiexec, not by hand")
            _WORLD = Group(range(n), comm.Get_rank(), comm, "world")
    return _WORLD


def world_size() -> int:
    return world().nranks


def world_rank() -> int:
    return world().rank


def new_group(ranks, name="group") -> Group:
    """A group of the given world ranks. Collective over the world: every rank calls
    it with the same `ranks` (MPI's Comm_create_group needs only the members, but
    calling it everywhere keeps the order of group creation identical on all ranks)."""
    w = world()
    ranks = [int(r) for r in ranks]
    if sorted(set(ranks)) != sorted(ranks) or any(r < 0 or r >= w.nranks for r in ranks):
        raise ValueError(f"new_group: ranks must be distinct world ranks in [0, {w.nranks}), "
                         f"got {ranks}")
    me = ranks.index(w.rank) if w.rank in ranks else -1
    if len(ranks) == 1 or w.comm is None:
        return Group(ranks, me, None, name)
    comm = None
    if me >= 0:
        g = w.comm.Get_group().Incl(ranks)
        comm = w.comm.Create_group(g)
        g.Free()
    return Group(ranks, me, comm, name)


def _group(group):
    return world() if group is None else group


class Task:
    """An operation in flight: ``wait(timeout)`` blocks until it completed (and
    runs its completion step), ``is_completed()`` polls it (which also drives
    MPI's progress, so polling in backward hooks moves all-reduces forward)."""

    def __init__(self, req, what, finish=None):
        self._req = req
        self._what = what
        self._finish = finish
        self._done = req is None
        if self._done and finish is not None:
            finish()
            self._finish = None

    def is_completed(self) -> bool:
        if not self._done and self._req.Test():
            self._complete()
        return self._done

    def _complete(self):
        self._done = True
        if self._finish is not None:
            f, self._finish = self._finish, None
            f()

    def wait(self, timeout: float | None = None) -> bool:
        if self._done:
            return True
        limit = default_timeout() if timeout is None else float(timeout)
        t0 = time.monotonic()
        deadline = t0 + limit
        req = self._req
        # MPICH advances a non-blocking collective only inside MPI calls, one step
        # per call, so the transfer itself needs tests in quick succession (a 1 MB
        # all-reduce between two ranks on one node: ~0.5 ms, dozens of steps). Spin
        # for 2 ms; past that the peer is late (descheduled on a shared machine, or
        # still computing), so test in short bursts between 0.1 ms naps, giving the
        # core to the late peer; past 1 s, 1 ms naps.
        spins = 0
        fast_until = t0 + 2e-3
        slow_after = t0 + 1.0
        while not req.Test():
            spins += 1
            if spins & 31 == 0:
                now = time.monotonic()
                if now < fast_until:
                    continue
                if now > deadline:
                    raise CommTimeoutError(
                        f"{self._what} did not complete within {limit:g} s "
                        f"(FW_DIST_TIMEOUT): a rank of the group did not take part in it "
                        f"or is stuck")
                time.sleep(1e-3 if now > slow_after else 1e-4)
        self._complete()
        return True


_OPS = {"sum": "SUM", "max": "MAX", "min": "MIN", "prod": "PROD"}


def _mpi_op(op):
    name = _OPS.get(str(op).lower())
    if name is None:
        raise ValueError(f"all_reduce: op must be one of {sorted(_OPS)}, got {op!r}")
    return getattr(_mpi(), name)


def _check_array(a, what):
    if not isinstance(a, np.ndarray) or not a.flags.c_contiguous:
        raise TypeError(f"{what}: expects a C-contiguous numpy array, got "
                        f"{type(a).__name__}" + (" (not contiguous)"
                                                 if isinstance(a, np.ndarray) else ""))


def _desc(what, group, a=None):
    s = f"{what} on {group.name} ranks {group.ranks} (this is rank {group.rank})"
    if a is not None:
        s += f" of a {a.dtype}{list(a.shape)} buffer"
    return s


def all_reduce(a, op="sum", group=None, sync_op=True) -> Task:
    """Reduce `a` (a numpy array) over the group, in place."""
    g = _group(group)
    _check_array(a, "all_reduce")
    if g.comm is None:
        t = Task(None, "all_reduce")
    else:
        MPI = _mpi()
        req = g.comm.Iallreduce(MPI.IN_PLACE, a, op=_mpi_op(op))
        t = Task(req, _desc("all_reduce", g, a))
    if sync_op:
        t.wait()
    return t


def broadcast(a, src=0, group=None, sync_op=True) -> Task:
    """Copy `a` of group rank `src` into `a` of every rank (in place)."""
    g = _group(group)
    _check_array(a, "broadcast")
    if g.comm is None:
        t = Task(None, "broadcast")
    else:
        t = Task(g.comm.Ibcast(a, root=src), _desc(f"broadcast from group rank {src}", g, a))
    if sync_op:
        t.wait()
    return t


def all_gather(a, group=None) -> np.ndarray:
    """Every rank's `a` stacked on a new leading axis (group order)."""
    g = _group(group)
    _check_array(a, "all_gather")
    out = np.empty((g.nranks,) + a.shape, dtype=a.dtype)
    if g.comm is None:
        out[0] = a
        return out
    Task(g.comm.Iallgather(a, out), _desc("all_gather", g, a)).wait()
    return out


def reduce_scatter(out, a, op="sum", group=None) -> None:
    """Reduce `a` (nranks equal blocks along its flat order) and keep block `rank` in
    `out` (size ``a.size // nranks``)."""
    g = _group(group)
    _check_array(a, "reduce_scatter")
    _check_array(out, "reduce_scatter")
    if a.size != out.size * g.nranks:
        raise ValueError(f"reduce_scatter: the input has {a.size} elements, expected nranks "
                         f"({g.nranks}) x output size ({out.size})")
    if g.comm is None:
        np.copyto(out, a.reshape(out.shape))
        return
    Task(g.comm.Ireduce_scatter_block(a, out, op=_mpi_op(op)),
         _desc("reduce_scatter", g, a)).wait()


def reduce(a, dst=0, op="sum", group=None) -> None:
    """Reduce `a` over the group into `a` of group rank `dst` (others' `a` unchanged)."""
    g = _group(group)
    _check_array(a, "reduce")
    if g.comm is None:
        return
    MPI = _mpi()
    if g.rank == dst:
        req = g.comm.Ireduce(MPI.IN_PLACE, a, op=_mpi_op(op), root=dst)
    else:
        req = g.comm.Ireduce(a, None, op=_mpi_op(op), root=dst)
    Task(req, _desc(f"reduce to group rank {dst}", g, a)).wait()


def send(a, dst, group=None, tag=0, sync_op=True) -> Task:
    """Send `a` to group rank `dst`."""
    g = _group(group)
    _check_array(a, "send")
    t = Task(g.comm.Isend(a, dest=dst, tag=tag),
             _desc(f"send to group rank {dst} (world rank {g.ranks[dst]})", g, a))
    if sync_op:
        t.wait()
    return t


def recv(a, src, group=None, tag=0, sync_op=True) -> Task:
    """Receive into `a` from group rank `src`."""
    g = _group(group)
    _check_array(a, "recv")
    t = Task(g.comm.Irecv(a, source=src, tag=tag),
             _desc(f"recv from group rank {src} (world rank {g.ranks[src]}), which did not "
                   f"send", g, a))
    if sync_op:
        t.wait()
    return t


def barrier(group=None) -> None:
    g = _group(group)
    if g.comm is None:
        return
    Task(g.comm.Ibarrier(), _desc("barrier", g)).wait()


def all_gather_bytes(data: bytes, group=None) -> list:
    """Every rank's `data` (bytes of any length), in group order."""
    g = _group(group)
    n = np.array([len(data)], dtype=np.int64)
    sizes = all_gather(n, group=g)[:, 0]
    buf = np.zeros(int(sizes.max()) if len(sizes) else 0, dtype=np.uint8)
    buf[:len(data)] = np.frombuffer(data, dtype=np.uint8)
    parts = all_gather(buf, group=g)
    return [bytes(parts[i, :int(sizes[i])]) for i in range(g.nranks)]
