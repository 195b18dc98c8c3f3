"""The GPU engine: NCCL through CuPy (``cupy.cuda.nccl``) — import-safe.

Importing this module never imports CuPy; `engine_for` does, when a group first
sees a GPU tensor (a collective's buffers are CuPy arrays: ``tensor._data`` of a
tensor on the gpu device). The NCCL unique id is made by the group's rank 0 and
passed to the others through the job's store (key ``{job}/comm/nccl_uid/{group
id}``), then each rank builds its ``NcclCommunicator``; a one-rank group needs no
store.

Ops are enqueued on the *current* CUDA stream, zero-copy on the tensors' own device
memory, so they are ordered after the kernels that produced their inputs and
before the ones that read their results, as any other GPU op. The request each op
returns is a CUDA event recorded after it, whose ``Test()`` asks whether the GPU
got there: the same deadline loop that waits for MPI requests (`task.Task.wait`)
bounds GPU waits too, the flight recorder records the op, and on a timeout the
group's communicator is aborted (`abort`, ``ncclCommAbort``) so the process can
exit instead of hanging in NCCL.

Reductions: NCCL's own types (int8/uint8/int32/uint32/int64/uint64,
float16/bfloat16/float32/float64); float16/bfloat16 arrive here already widened to
float32 by the caller (`_tensors.reduce_plan`, the same plan as the MPI engine's,
so both engines give the float32 sum rounded once); AVG arrives as SUM (the caller
divides). bool reduces as uint8 with MAX for SUM/MAX (logical or) and MIN for
MIN/PROD (logical and), so the result is still 0/1; complex SUM reduces the
real/imaginary pairs as floats. Data movement (broadcast, all_gather, alltoall,
send/recv) moves raw bytes, so every dtype moves.
"""
from __future__ import annotations

import json

import numpy as np

__all__ = ["NcclEngine", "engine_for", "require", "nccl_available", "NCCL_TYPES"]

# ncclDataType_t and ncclRedOp_t values (NCCL's ABI, stable since 2.x), used when the
# CuPy build lacks a name
_TYPE_CODES = {"NCCL_INT8": 0, "NCCL_UINT8": 1, "NCCL_INT32": 2, "NCCL_UINT32": 3,
               "NCCL_INT64": 4, "NCCL_UINT64": 5, "NCCL_FLOAT16": 6, "NCCL_FLOAT32": 7,
               "NCCL_FLOAT64": 8, "NCCL_BFLOAT16": 9, "NCCL_SUM": 0, "NCCL_PROD": 1,
               "NCCL_MAX": 2, "NCCL_MIN": 3}
NCCL_TYPES = {"int8": "NCCL_INT8", "uint8": "NCCL_UINT8", "int32": "NCCL_INT32",
              "uint32": "NCCL_UINT32", "int64": "NCCL_INT64", "uint64": "NCCL_UINT64",
              "float16": "NCCL_FLOAT16", "float32": "NCCL_FLOAT32", "float64": "NCCL_FLOAT64",
              "bfloat16": "NCCL_BFLOAT16", "bool": "NCCL_UINT8"}
# fw.distributed.ReduceOp codes (SUM=0, MAX=1, MIN=2, PROD=3) -> NCCL's
_NCCL_OPS = {0: "NCCL_SUM", 1: "NCCL_MAX", 2: "NCCL_MIN", 3: "NCCL_PROD"}
_BOOL_OPS = {0: "NCCL_MAX", 1: "NCCL_MAX", 2: "NCCL_MIN", 3: "NCCL_MIN"}
_COMPLEX = {"complex64": np.float32, "complex128": np.float64}


def nccl_available() -> bool:
    try:
        from cupy.cuda import nccl  # noqa: F401
    except Exception:  # noqa: BLE001 - ImportError, or a CUDA/NCCL library failing to load
        return False
    return True


def require(fn, arg):
    """Raise a clear error when `arg` of `fn` is a device array but NCCL is missing."""
    if not nccl_available():
        raise RuntimeError(
            f"fw.distributed.{fn}: {arg} is a GPU tensor, and GPU collectives need NCCL "
            "through CuPy (cupy.cuda.nccl), which did not import here; install the NCCL "
            "package of your CUDA version (e.g. nvidia-nccl-cu12), or move the tensor to the "
            "CPU (tensor.cpu()) for the MPI engine")


def engine_for(g, fn="collective"):
    """The NCCL engine of group `g`, made on first use (every member makes it at its
    first GPU op, in the same op: the unique id exchange lines up)."""
    eng = g.nccl
    if eng is None:
        from fw.distributed.communication._world import state

        require(fn, "a tensor")
        eng = g.nccl = NcclEngine(state.store, state.key("comm", "nccl_uid", g.id), g.rank,
                                  g.nranks, g.timeout)
    return eng


class _EventRequest:
    """An op's completion: the CUDA event recorded after it (the mpi4py Request API
    `task.Task` polls)."""

    __slots__ = ("event",)

    def __init__(self, event):
        self.event = event

    def Test(self, status=None):
        return self.event.done


class NcclEngine:
    """NCCL ops on CuPy arrays for one group (the method names of `MpiEngine`)."""

    name = "NCCL"

    def __init__(self, store, key, rank, size, timeout):
        import cupy
        from cupy.cuda import nccl

        self.cp, self.nccl = cupy, nccl
        if size == 1:
            uid = nccl.get_unique_id()
        elif store is None:
            raise RuntimeError(
                "fw.distributed: a GPU collective over several ranks needs the job's store "
                "to exchange the NCCL unique id; start the job with fw.distributed.launch "
                "(or spawn), which provides it")
        elif rank == 0:
            uid = nccl.get_unique_id()
            store.set(key, json.dumps([int(v) for v in uid]))
        else:
            raw = store.get(key, timeout=timeout)
            uid = tuple(json.loads(raw.decode() if isinstance(raw, bytes) else raw))
        self.comm = nccl.NcclCommunicator(size, uid, rank)
        self.rank, self.size = rank, size

    # ------------------------------------------------------------ helpers
    def _code(self, name):
        return getattr(self.nccl, name, _TYPE_CODES[name])

    def _stream(self):
        return self.cp.cuda.get_current_stream()

    def _done(self, stream):
        ev = self.cp.cuda.Event(disable_timing=True)
        ev.record(stream)
        return _EventRequest(ev)

    def _typed(self, a, op):
        """(array to reduce, its element count, NCCL type, NCCL op) for reduction `op`."""
        dt = str(a.dtype)
        if dt in _COMPLEX:
            if op != 0:
                raise TypeError(f"fw.distributed: NCCL reduces complex tensors with SUM only, "
                                f"got reduce op {op} for {dt}")
            a = a.view(_COMPLEX[dt])
            dt = str(a.dtype)
        name = NCCL_TYPES.get(dt)
        if name is None:
            raise TypeError(f"fw.distributed: NCCL cannot reduce dtype {dt}; supported: "
                            f"{sorted(NCCL_TYPES)}")
        ops = _BOOL_OPS if dt == "bool" else _NCCL_OPS
        return a, a.size, self._code(name), self._code(ops[op])

    # ------------------------------------------------------------ reductions
    def allreduce(self, a, op):
        a, n, t, o = self._typed(a, op)
        s = self._stream()
        self.comm.allReduce(a.data.ptr, a.data.ptr, n, t, o, s.ptr)
        return self._done(s)

    def reduce(self, a, op, root):
        a, n, t, o = self._typed(a, op)
        s = self._stream()
        self.comm.reduce(a.data.ptr, a.data.ptr, n, t, o, root, s.ptr)
        return self._done(s)

    def reduce_scatter_block(self, send, recv, op):
        send, _, t, o = self._typed(send, op)
        recv, n, _, _ = self._typed(recv, op)
        s = self._stream()
        self.comm.reduceScatter(send.data.ptr, recv.data.ptr, n, t, o, s.ptr)
        return self._done(s)

    # ------------------------------------------------------------ data movement
    def bcast(self, a, root):
        s = self._stream()
        self.comm.broadcast(a.data.ptr, a.data.ptr, a.nbytes, self._code("NCCL_UINT8"), root,
                            s.ptr)
        return self._done(s)

    def allgather(self, send, recv):
        s = self._stream()
        self.comm.allGather(send.data.ptr, recv.data.ptr, send.nbytes,
                            self._code("NCCL_UINT8"), s.ptr)
        return self._done(s)

    def _grouped(self, sends, recvs):
        """(peer, array) pairs as one NCCL group of send/recv (alltoall, scatter,
        gather and p2p have no NCCL collective of their own)."""
        s = self._stream()
        u8 = self._code("NCCL_UINT8")
        self.nccl.groupStart()
        try:
            for peer, a in sends:
                if a.nbytes:
                    self.comm.send(a.data.ptr, a.nbytes, u8, peer, s.ptr)
            for peer, a in recvs:
                if a.nbytes:
                    self.comm.recv(a.data.ptr, a.nbytes, u8, peer, s.ptr)
        finally:
            self.nccl.groupEnd()
        return self._done(s)

    def _local(self, send, recv):
        """This rank's own chunk: a device copy (NCCL has no send to oneself)."""
        recv.reshape(-1).view(np.uint8)[...] = send.reshape(-1).view(np.uint8)

    def alltoall(self, send, recv):
        n = self.size
        sb = send.reshape(-1).view(np.uint8).reshape(n, -1)
        rb = recv.reshape(-1).view(np.uint8).reshape(n, -1)
        me = self.rank
        self._local(sb[me], rb[me])
        return self._grouped([(p, sb[p]) for p in range(n) if p != me],
                             [(p, rb[p]) for p in range(n) if p != me])

    def alltoallv(self, send, scounts, recv, rcounts):
        """`scounts`/`rcounts`: bytes per peer."""
        sb, rb = send.reshape(-1).view(np.uint8), recv.reshape(-1).view(np.uint8)
        so = np.concatenate([[0], np.cumsum(scounts)]).astype(np.int64)
        ro = np.concatenate([[0], np.cumsum(rcounts)]).astype(np.int64)
        me = self.rank
        if scounts[me] != rcounts[me]:
            raise ValueError(f"fw.distributed.alltoall_single: rank {me} sends itself "
                             f"{scounts[me]} bytes but expects {rcounts[me]}")
        self._local(sb[so[me]:so[me + 1]], rb[ro[me]:ro[me + 1]])
        return self._grouped(
            [(p, sb[so[p]:so[p + 1]]) for p in range(self.size) if p != me],
            [(p, rb[ro[p]:ro[p + 1]]) for p in range(self.size) if p != me])

    def scatter(self, send, recv, root):
        n = self.size
        if self.rank == root:
            sb = send.reshape(-1).view(np.uint8).reshape(n, -1)
            self._local(sb[root], recv)
            return self._grouped([(p, sb[p]) for p in range(n) if p != root], [])
        return self._grouped([], [(root, recv)])

    def gather(self, send, recv, root):
        n = self.size
        if self.rank == root:
            rb = recv.reshape(-1).view(np.uint8).reshape(n, -1)
            self._local(send, rb[root])
            return self._grouped([], [(p, rb[p]) for p in range(n) if p != root])
        return self._grouped([(root, send)], [])

    def barrier(self):
        one = self.cp.zeros(1, self.cp.float32)
        return self.allreduce(one, 0)

    def isend(self, a, dst, tag):
        return self._grouped([(dst, a)], [])

    def irecv(self, a, src, tag):
        return self._grouped([], [(src, a)])

    def abort(self):
        """Abort after a timeout so the process can exit (NCCL calls never return
        on a dead peer otherwise)."""
        self.comm.abort()

    def free(self):
        self.comm.destroy()
