"""The CPU engine: MPI through mpi4py (on the `mpich` wheel).

Every op is issued as a nonblocking MPI call (Iallreduce, Ibcast, Ialltoallv, …)
and returns the MPI request; `fw.distributed.communication.task` waits on it in a
poll loop with a deadline, which is what makes timeouts possible (a blocking
MPI_Allreduce cannot be interrupted). Tensors go to MPI as buffers, zero-copy:
a C-contiguous array is passed as is, typed for reductions (MPI.FLOAT, …) and as
raw bytes (a uint8 view of the same memory) for data movement, so every dtype
moves, bfloat16 included. Reductions of float16/bfloat16 are done by the caller
in float32 (see collectives._reduce_plan): MPI has no 16-bit float types and a
Python callback op would run the reduction in the interpreter.

Process lifetime: mpi4py normally calls MPI_Finalize at exit. After a timeout the
peers are gone or stuck, and MPI_Finalize would wait for them forever, so fw sets
``mpi4py.rc.finalize = False`` before MPI is imported and finalizes in its own
atexit hook only while the communicators are healthy (`mark_broken` turns that
off). When ``mpi4py.MPI`` was imported before fw (by the program, or by another
module), mpi4py finalizes at exit; after a timeout fw then asks mpi4py to end
with MPI_Abort instead (``MPI._set_abort_status``), which does not wait for the
lost peers.
"""
from __future__ import annotations

import atexit
import os
import sys
import time

import numpy as np

__all__ = ["MpiEngine", "init_world", "mark_broken", "is_broken", "mpi_module"]

_MPI = None
_broken = [None]          # the reason the MPI state became unusable, or None
_owns_finalize = [False]


def mpi_module():
    """``mpi4py.MPI``, importing (and so initialising) MPI the first time, with
    fw's finalize policy (see the module docstring)."""
    global _MPI
    if _MPI is None:
        already = "mpi4py.MPI" in sys.modules
        import mpi4py

        if not already:
            mpi4py.rc.finalize = False
            _owns_finalize[0] = True
        from mpi4py import MPI

        _MPI = MPI
        if _owns_finalize[0]:
            atexit.register(_finalize)
            _skip_finalize_on_uncaught_exception()
    return _MPI


def _skip_finalize_on_uncaught_exception():
    """A rank that dies of an uncaught exception must exit, not wait: MPICH's
    MPI_Finalize waits for every rank (a PMI barrier), and the others may be blocked
    in a collective this rank will never enter, so the job would hang until their
    timeout. Marking the state broken makes the atexit hook skip MPI_Finalize; the
    process exits with status 1, the launcher records it in the store and the
    waiting ranks name this rank at once."""
    previous = sys.excepthook

    def hook(exc_type, exc, tb):
        mark_broken(f"uncaught {exc_type.__name__} in this rank")
        previous(exc_type, exc, tb)

    sys.excepthook = hook


def _finalize():
    MPI = _MPI
    if MPI is None or _broken[0] is not None:
        return
    if MPI.Is_initialized() and not MPI.Is_finalized():
        _exit_rendezvous()
        MPI.Finalize()


def _exit_rendezvous(period: float = 0.25):
    """Meet the other ranks in the job's store before MPI_Finalize, which waits for
    every rank (MPICH) and holds the GIL while it does, so nothing can be checked
    once inside. While waiting here, end the process if a peer died or waits in an op
    this exiting rank will never enter: e.g. ``sys.exit(1)`` on one rank (SystemExit
    bypasses the excepthook below) while another waits in an all-reduce. Without
    this both would wait until the collective's timeout. A correct program never
    trips it: a peer still computing is not waiting in an op, and this rank waits
    for it, as MPI_Finalize would.

    Under plain ``mpiexec`` rank 0 hosts the store in a thread of its own process,
    and that thread cannot run while rank 0 sits in MPI_Finalize (the GIL is held).
    So the host must be the last rank to use the store: every other rank, once it
    has seen all ranks at the exit, stops its progress publisher, says so
    (``exit_done/{rank}``) and never calls the store again; the host finalizes only
    after every ``exit_done``. (Before this, a rank still polling the store when the
    host entered MPI_Finalize blocked for the store client's 30 s socket margin, and
    its publisher thread held the client lock just as long: 4 oversubscribed ranks
    on 2 cores passed every case and then took minutes to exit.)"""
    from fw.distributed.communication._watch import peers_blocked
    from fw.distributed.communication._world import state

    store = state.store
    if store is None or state.world_size <= 1:
        return
    hosting = getattr(store, "_server", None) is not None
    try:
        store.set(state.key("exit", state.rank), b"1")
        keys = [state.key("exit", r) for r in range(state.world_size)]
        _wait_keys(store, keys, period, peers_blocked, state.rank)
        _stop_publisher(state)
        if hosting:
            done = [state.key("exit_done", r) for r in range(state.world_size)
                    if r != state.rank]
            # every peer has seen all exit keys (or is about to): no death check needed,
            # a peer that dies now is reported by MPI_Finalize's process manager
            _wait_keys(store, done, period / 5, None, state.rank, _EXIT_DONE_S)
        else:
            store.set(state.key("exit_done", state.rank), b"1")
    except Exception:  # noqa: BLE001 - a store gone at exit: MPI_Finalize decides
        return


_EXIT_DONE_S = 30.0  # the host's bound on the peers' last step (normally milliseconds)


def _wait_keys(store, keys, period, peers_blocked, rank, limit=None):
    end = None if limit is None else time.monotonic() + limit
    while not store.check(keys):
        if end is not None and time.monotonic() > end:
            return  # a peer died between its two keys: MPI_Finalize's manager reports it
        blocked = peers_blocked() if peers_blocked is not None else None
        if blocked:
            who = "; ".join(f"rank {r} {how}" for r, how in sorted(blocked.items()))
            sys.stderr.write(f"fw.distributed: rank {rank} is exiting while {who}: "
                             f"it will never join, so it exits without MPI_Finalize "
                             f"(status 1)\n")
            sys.stderr.flush()
            os._exit(1)
        time.sleep(period)


def _stop_publisher(state):
    """Stop the progress publisher thread (bounded), so it holds no store call open."""
    pub = state.publisher
    if pub is not None:
        pub.stop.set()
        pub.join(timeout=2.0)
        state.publisher = None


def mark_broken(reason: str) -> None:
    """Record that the MPI state is unusable (a timeout or desync): later ops raise
    at once and the process exits without MPI_Finalize. When mpi4py was imported
    before fw (so mpi4py, not fw, finalizes at exit), mpi4py is told to end with
    MPI_Abort instead, which cannot block on the lost peers."""
    if _broken[0] is None:
        _broken[0] = reason
        if _MPI is not None and not _owns_finalize[0]:
            setter = getattr(_MPI, "_set_abort_status", None)
            if setter is not None:
                setter(1)


def is_broken():
    return _broken[0]


def init_world(timeout: float):
    """fw's own duplicate of the job's COMM_WORLD (MPI_Init happens here, through the
    process manager's PMI: the fw launcher or mpiexec).

    A library works on a duplicate so its messages can never match the program's
    own MPI traffic, or another library's, on COMM_WORLD. The duplication is
    collective: it is done nonblocking (MPI_Comm_idup) with a deadline, so a rank
    that never calls init_parallel_env makes the others fail, not hang."""
    MPI = mpi_module()
    world = MPI.COMM_WORLD
    if world.Get_size() == 1:
        return world
    comm, req = world.Idup()
    end = time.monotonic() + timeout
    while not req.Test():
        if time.monotonic() > end:
            mark_broken("bring-up timeout")
            from fw.distributed.communication.errors import CollectiveTimeoutError

            raise CollectiveTimeoutError(
                f"fw.distributed.init_parallel_env on rank {world.Get_rank()}: not every one "
                f"of the {world.Get_size()} ranks called init_parallel_env within "
                f"{timeout:g} s (duplicating COMM_WORLD)")
        time.sleep(0.0005)
    return comm


def _typed_map(MPI):
    return {
        np.dtype(np.bool_): MPI.C_BOOL, np.dtype(np.int8): MPI.INT8_T,
        np.dtype(np.uint8): MPI.UINT8_T, np.dtype(np.int16): MPI.INT16_T,
        np.dtype(np.int32): MPI.INT32_T, np.dtype(np.int64): MPI.INT64_T,
        np.dtype(np.float32): MPI.FLOAT, np.dtype(np.float64): MPI.DOUBLE,
        np.dtype(np.complex64): MPI.C_FLOAT_COMPLEX, np.dtype(np.complex128): MPI.C_DOUBLE_COMPLEX,
    }


def _bytes(a: np.ndarray):
    """The same memory as a flat uint8 array (a view: `a` is C-contiguous)."""
    return a.reshape(-1).view(np.uint8)


class MpiEngine:
    """Nonblocking ops on one MPI communicator. Arrays are C-contiguous NumPy arrays;
    each method returns an mpi4py Request (or a list of them)."""

    name = "MPI"

    def __init__(self, comm):
        MPI = mpi_module()
        self.MPI = MPI
        self.comm = comm
        self.rank = comm.Get_rank()
        self.size = comm.Get_size()
        self._types = _typed_map(MPI)
        self._ops = {0: MPI.SUM, 1: MPI.MAX, 2: MPI.MIN, 3: MPI.PROD}
        self._bool_ops = {0: MPI.LOR, 1: MPI.LOR, 2: MPI.LAND, 3: MPI.LAND}

    # -- helpers
    def _typed(self, a, op):
        """(buffer spec, MPI op) of a reduction on `a` (a dtype MPI reduces natively)."""
        t = self._types[a.dtype]
        mop = (self._bool_ops if a.dtype == np.bool_ else self._ops)[op]
        return [a.reshape(-1), a.size, t], mop

    # -- collectives
    def allreduce(self, a, op):
        buf, mop = self._typed(a, op)
        return self.comm.Iallreduce(self.MPI.IN_PLACE, buf, mop)

    def reduce(self, a, op, root):
        buf, mop = self._typed(a, op)
        if self.rank == root:
            return self.comm.Ireduce(self.MPI.IN_PLACE, buf, mop, root)
        return self.comm.Ireduce(buf, None, mop, root)

    def reduce_scatter_block(self, send, recv, op):
        rbuf, mop = self._typed(recv, op)
        # mpi4py takes the send block count from the receive spec: no explicit count here
        return self.comm.Ireduce_scatter_block([send.reshape(-1), rbuf[2]], rbuf, mop)

    def bcast(self, a, root):
        return self.comm.Ibcast([_bytes(a), self.MPI.BYTE], root)

    def allgather(self, send, recv):
        return self.comm.Iallgather([_bytes(send), self.MPI.BYTE], [_bytes(recv), self.MPI.BYTE])

    def allgatherv(self, send, recv, counts):
        """Byte counts per rank; `recv` holds them back to back."""
        displs = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64).tolist()
        return self.comm.Iallgatherv([_bytes(send), self.MPI.BYTE],
                                     [_bytes(recv), (list(counts), displs), self.MPI.BYTE])

    def alltoall(self, send, recv):
        return self.comm.Ialltoall([_bytes(send), self.MPI.BYTE], [_bytes(recv), self.MPI.BYTE])

    def alltoallv(self, send, scounts, recv, rcounts):
        """Byte counts per peer, chunks back to back in rank order."""
        sd = np.concatenate([[0], np.cumsum(scounts)[:-1]]).astype(np.int64).tolist()
        rd = np.concatenate([[0], np.cumsum(rcounts)[:-1]]).astype(np.int64).tolist()
        return self.comm.Ialltoallv([_bytes(send), (list(scounts), sd), self.MPI.BYTE],
                                    [_bytes(recv), (list(rcounts), rd), self.MPI.BYTE])

    def scatter(self, send, recv, root):
        sb = [_bytes(send), self.MPI.BYTE] if self.rank == root else None
        return self.comm.Iscatter(sb, [_bytes(recv), self.MPI.BYTE], root)

    def gather(self, send, recv, root):
        rb = [_bytes(recv), self.MPI.BYTE] if self.rank == root else None
        return self.comm.Igather([_bytes(send), self.MPI.BYTE], rb, root)

    def barrier(self):
        return self.comm.Ibarrier()

    # -- point to point
    def isend(self, a, dst, tag):
        return self.comm.Isend([_bytes(a), self.MPI.BYTE], dst, tag)

    def irecv(self, a, src, tag):
        return self.comm.Irecv([_bytes(a), self.MPI.BYTE], src, tag)

    # -- communicators
    def split(self, ranks):
        """A new engine over the members `ranks` (world ranks of this engine's comm),
        or None on a non-member. MPI_Comm_create_group: only members take part."""
        MPI = self.MPI
        if self.rank not in ranks:
            return None
        grp = self.comm.Get_group().Incl(list(ranks))
        try:
            comm = self.comm.Create_group(grp, tag=12345)
        finally:
            grp.Free()
        return MpiEngine(comm) if comm != MPI.COMM_NULL else None

    def free(self):
        if _broken[0] is None and self.comm not in (self.MPI.COMM_WORLD, self.MPI.COMM_NULL):
            self.comm.Free()
        self.comm = self.MPI.COMM_NULL
