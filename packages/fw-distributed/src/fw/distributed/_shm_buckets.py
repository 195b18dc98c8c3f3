"""DataParallel's gradient all-reduce through an MPI-3 shared-memory window, for
a group whose ranks all live on one node.

Why: MPICH advances a nonblocking all-reduce only inside MPI calls of *both*
ranks. A bucket launched during backward therefore waits until the peer, busy in
backward's native kernels on its own core, next enters MPI (measured on the MLP:
a 237 kB bucket launched 4 ms before backward ended completed 2.3 ms after it).
Here there is nothing to progress: each rank's gradient hooks write the
gradients straight into its own segment of a window made by
``MPI_Win_allocate_shared`` (one per DataParallel, on the group's communicator);
"launching" a bucket is publishing a sequence number in the segment's header
after a memory barrier (``MPI_Win_sync``), and "completing" it is seeing every
peer's number for that bucket, then summing the ranks' segments, in rank order
so that every rank computes the same bits, into a private buffer. The reduction
is done by each rank for the whole bucket (for two ranks one pass over the
peer's bytes, cheaper than a second synchronisation to split it).

Reuse without a second flag: each bucket has two slots, used alternately by its
launches. A rank refills a slot for use u + 2 only after finishing use u + 1, which
needed every peer's use u + 1 data, which each peer published only after finishing
its use u reads (of that slot). So a slot is never rewritten while a peer reads it.
The window costs twice the gradient bytes in /dev/shm per rank (plus a private sum
buffer); where /dev/shm lacks the room the MPI path is kept.

The wait is fw's ordinary `Task` (its deadline, the dead-rank check and the
timeout's diagnosis naming the ranks that did not arrive, the flight recorder):
each bucket is one ``all_reduce`` op of the group's sequence, and the header
carries that sequence number, so a peer that issued a different number of ops
on the group (a desync) is reported as such instead of read.

Not used for ZeRO's reduce-to-owner buckets, for dtypes other than float32 and
float64 (the MPI path reduces float16/bfloat16 in float32) or across nodes; there
the MPI all-reduce stays. ``FW_DIST_DP_SHM=0`` turns it off (the MPI path, with
the progress thread), ``1``/``auto`` (default) uses it wherever it applies.
The window is never freed (``MPI_Win_free`` is collective, and DataParallel
objects are not dropped at the same point on every rank); it lives until
``MPI_Finalize``.
"""

from __future__ import annotations

import os
import zlib

import numpy as np

from fw.distributed._flight_recorder import recorder
from fw.distributed.communication.errors import CollectiveDesyncError
from fw.distributed.communication.task import Task, check_usable

__all__ = ["SharedBuckets", "enabled"]

_SHM_DTYPES = ("float32", "float64")
_ALIGN = 64  # each bucket's slice starts on a cache line


def enabled() -> bool:
    """``FW_DIST_DP_SHM``: ``auto`` (default) / ``1`` use shared memory where it
    applies, ``0`` never."""
    v = os.environ.get("FW_DIST_DP_SHM", "auto").strip().lower()
    if v not in ("0", "1", "auto"):
        raise ValueError(f"DataParallel: FW_DIST_DP_SHM must be '0', '1' or 'auto', got {v!r}")
    return v != "0"


def _pad(n):
    return (n + _ALIGN - 1) // _ALIGN * _ALIGN


def _segment_bytes(layout):
    """(each bucket's offset in a slot, header bytes, bytes of one rank's segment):
    a header of sequence numbers, then two slots (step parities) of all buckets."""
    offs, data = [], 0
    for x in layout:
        offs.append(data)
        if x is not None:
            data += _pad(x[0] * np.dtype(x[1]).itemsize)
    head = _pad(2 * len(layout) * 8)
    return offs, head, head + 2 * data


def _shm_free(need) -> bool:
    """Whether /dev/shm has room for `need` bytes and a quarter more (True where it
    cannot be asked: MPICH then decides where the window lives)."""
    try:
        st = os.statvfs("/dev/shm")
    except OSError:
        return True
    return st.f_bavail * st.f_frsize >= need * 1.25


class SharedBuckets:
    """The shared window of one Reducer. `group`: its fw Group (MPI engine);
    `layout`: per bucket ``(nelems, dtype)`` or None for a bucket left to MPI.
    Collective over the group: every rank must construct it (DataParallel's
    constructor does). Use `create`, which returns None where the window does not
    apply (then every rank gets None)."""

    @classmethod
    def create(cls, group, layout):
        engine = getattr(group, "engine", None)
        comm = getattr(engine, "comm", None)
        if group.nranks <= 1 or comm is None or getattr(engine, "name", "") != "MPI":
            return None
        from mpi4py import MPI

        from fw.distributed import _fleet_comm as comm_ops

        # the window lives in /dev/shm: where it would not fit (a container's default
        # 64 MB), touching its pages would kill the process with SIGBUS instead of
        # raising, so such a model keeps the MPI path
        need = _segment_bytes(layout)[2] * group.nranks
        want = enabled() and any(x is not None for x in layout) and _shm_free(need)
        # every rank must take the same path and have the same buckets: one small
        # all-reduce (fw's, with the group's deadline) of (want, host, layout checksum)
        # decides, before any blocking MPI call (a split or a window allocation)
        host = zlib.crc32(MPI.Get_processor_name().encode())
        crc = zlib.crc32(repr(layout).encode())
        agree = np.array([int(want), host, -host, crc, -crc], dtype=np.int64)
        comm_ops.all_reduce(agree, op="min", group=group)
        if agree[3] != -agree[4]:
            raise ValueError(
                f"DataParallel: the ranks of group {group.id} built different gradient "
                f"buckets (this rank: {list(layout)}); every rank must wrap the same "
                f"model with the same comm_buffer_size/last_comm_buffer_size")
        if not agree[0] or agree[1] != -agree[2]:
            return None
        # one host by name; MPI's own view decides (the same answer on every rank:
        # a rank whose node holds the whole group exists only if every rank's does)
        node = comm.Split_type(MPI.COMM_TYPE_SHARED, key=comm.Get_rank())
        if node.Get_size() != comm.Get_size() or node.Get_rank() != comm.Get_rank():
            node.Free()
            return None
        return cls(group, node, layout)

    def __init__(self, group, node, layout):
        from mpi4py import MPI

        self.group = group
        self.node = node
        self.n = node.Get_size()
        self.rank = node.Get_rank()
        self.layout = list(layout)
        nb = len(self.layout)
        offs, head, seg = _segment_bytes(self.layout)
        data = (seg - head) // 2
        self.win = MPI.Win.Allocate_shared(seg, 1, comm=node)
        self.win.Lock_all(MPI.MODE_NOCHECK)  # a passive epoch: Win_sync is legal
        self.hdr = []      # per rank: int64 (2, nb), the published sequence numbers
        self.views = []    # per rank: [parity][bucket] -> array or None
        for r in range(self.n):
            buf, _ = self.win.Shared_query(r)
            raw = np.frombuffer(buf, dtype=np.uint8, count=seg)
            self.hdr.append(raw[:2 * nb * 8].view(np.int64).reshape(2, nb))
            per = []
            for p in range(2):
                base = head + p * data
                row = []
                for b, x in enumerate(self.layout):
                    if x is None:
                        row.append(None)
                        continue
                    k, dt = x
                    s = base + offs[b]
                    row.append(raw[s:s + k * np.dtype(dt).itemsize].view(dt))
                per.append(row)
            self.views.append(per)
        self.hdr[self.rank][...] = -1
        self.win.Sync()
        from fw.distributed import _fleet_comm as comm_ops

        comm_ops.barrier(group)  # every header initialised before anyone reads one

    def applies(self, b) -> bool:
        return self.layout[b] is not None

    def buffer(self, b, parity):
        """This rank's slot of bucket `b` for a step of `parity` (hooks write here)."""
        return self.views[self.rank][parity][b]

    def launch(self, b, parity, out):
        """Publish this rank's bucket `b` (written by the hooks) and return the Task
        that completes once every rank published it, summing their slots into
        `out` (same on every rank)."""
        g = self.group
        check_usable("all_reduce")
        g._seq += 1
        seq = g._seq
        k, dt = self.layout[b]
        entry = recorder.record(g.id, seq, "all_reduce", [(k,)], [dt],
                                {"op": "SUM", "via": "shared memory"})
        g._last = entry
        self.win.Sync()  # the bucket's bytes are visible before its number
        self.hdr[self.rank][parity, b] = seq
        req = _Arrival(self, b, parity, seq)
        views = [self.views[r][parity][b] for r in range(self.n)]

        def finish():
            if len(views) == 2:
                np.add(views[0], views[1], out=out)
            else:
                np.copyto(out, views[0])
                for v in views[1:]:
                    np.add(out, v, out=out)
            return out

        return Task(g, entry, [req], finish, None, g.timeout, "all_reduce")

    def close(self):
        try:
            self.win.Unlock_all()
        except Exception:  # noqa: BLE001 - MPI finalized or broken: nothing to release
            pass


class _Arrival:
    """The 'request' `Task` polls: ``Test()`` is True once every peer published
    sequence number `seq` for (bucket, parity); a different number than this
    rank's is a desync (a peer issued other ops on the group)."""

    __slots__ = ("sh", "b", "parity", "seq", "waiting")

    def __init__(self, sh, b, parity, seq):
        self.sh = sh
        self.b = b
        self.parity = parity
        self.seq = seq
        self.waiting = [r for r in range(sh.n) if r != sh.rank]

    def Test(self):  # noqa: N802 - the mpi4py request protocol Task polls
        sh = self.sh
        while self.waiting:
            r = self.waiting[-1]
            v = int(sh.hdr[r][self.parity, self.b])
            if v < self.seq:
                return False
            if v > self.seq:
                g = sh.group
                raise CollectiveDesyncError(
                    f"fw.distributed.all_reduce (DataParallel bucket {self.b}, shared "
                    f"memory): ops out of step in group {g.id}: this rank is at op "
                    f"#{self.seq}, group rank {r} published op #{v} for the same bucket; "
                    f"every rank must run the same collectives in the same order")
            self.waiting.pop()
        sh.win.Sync()  # the peers' bytes are read after their numbers
        return True
