"""The GPU engine: NCCL through CuPy (``cupy.cuda.nccl``) — import-safe.

Importing this module never imports CuPy; `NcclEngine` does, when a group first
sees a GPU tensor. The NCCL unique id is made by the group's rank 0 and passed
to the others through the job's store (key ``{job}/comm/nccl_uid/{group id}``),
then each rank builds its ``NcclCommunicator``. Ops are enqueued on a dedicated
CUDA stream; the returned request is a CUDA event whose ``Test()`` queries it, so
the same deadline loop (`task.Task.wait`) bounds GPU waits too, and a timed-out
communicator is aborted (``NcclCommunicator.abort``) so the process can exit.

UNVERIFIED: no GPU was available while this was written; the CPU paths of
fw.distributed do not depend on it, and the collectives refuse GPU tensors with a
clear error (`unsupported`) until this engine is wired and tested on a GPU.
"""
from __future__ import annotations

import json

import numpy as np

__all__ = ["NcclEngine", "unsupported", "nccl_available"]


def nccl_available() -> bool:
    try:
        from cupy.cuda import nccl  # noqa: F401
    except Exception:  # noqa: BLE001 - ImportError, or a CUDA driver error
        return False
    return True


def unsupported(fn, arg):
    raise NotImplementedError(
        f"fw.distributed.{fn}: {arg} is a GPU tensor; the NCCL engine "
        "(fw.distributed.communication._engine_nccl) is written but not verified on a GPU "
        "and not enabled yet — move the tensor to the CPU (tensor.cpu()) for the MPI engine")


_NCCL_TYPES = {"int8": "NCCL_INT8", "uint8": "NCCL_UINT8", "int32": "NCCL_INT32",
               "int64": "NCCL_INT64", "float16": "NCCL_FLOAT16", "float32": "NCCL_FLOAT32",
               "float64": "NCCL_FLOAT64", "bfloat16": "NCCL_BFLOAT16", "bool": "NCCL_UINT8"}
_NCCL_OPS = {0: "NCCL_SUM", 1: "NCCL_MAX", 2: "NCCL_MIN", 3: "NCCL_PROD"}


class _EventRequest:
    def __init__(self, event):
        self.event = event

    def Test(self, status=None):
        return self.event.done


class NcclEngine:
    """NCCL ops on CuPy arrays for one group (same method names as MpiEngine)."""

    name = "NCCL"

    def __init__(self, store, key, rank, size, timeout):
        import cupy
        from cupy.cuda import nccl

        self.cp, self.nccl = cupy, nccl
        if rank == 0:
            uid = nccl.get_unique_id()
            store.set(key, json.dumps(list(uid)))
        else:
            uid = tuple(json.loads(store.get(key, timeout=timeout)))
        self.comm = nccl.NcclCommunicator(size, uid, rank)
        self.rank, self.size = rank, size
        self.stream = cupy.cuda.Stream(non_blocking=True)

    def _t(self, a):
        return getattr(self.nccl, _NCCL_TYPES[str(a.dtype)])

    def _done(self):
        ev = self.cp.cuda.Event(disable_timing=True)
        ev.record(self.stream)
        return _EventRequest(ev)

    def _wait_inputs(self):
        # the inputs were produced on the current stream: order the comm stream after it
        self.stream.wait_event(self.cp.cuda.get_current_stream().record())

    def allreduce(self, a, op):
        self._wait_inputs()
        self.comm.allReduce(a.data.ptr, a.data.ptr, a.size, self._t(a),
                            getattr(self.nccl, _NCCL_OPS[op]), self.stream.ptr)
        return self._done()

    def reduce(self, a, op, root):
        self._wait_inputs()
        self.comm.reduce(a.data.ptr, a.data.ptr, a.size, self._t(a),
                         getattr(self.nccl, _NCCL_OPS[op]), root, self.stream.ptr)
        return self._done()

    def reduce_scatter_block(self, send, recv, op):
        self._wait_inputs()
        self.comm.reduceScatter(send.data.ptr, recv.data.ptr, recv.size, self._t(recv),
                                getattr(self.nccl, _NCCL_OPS[op]), self.stream.ptr)
        return self._done()

    def bcast(self, a, root):
        self._wait_inputs()
        self.comm.broadcast(a.data.ptr, a.data.ptr, a.nbytes, self.nccl.NCCL_UINT8, root,
                            self.stream.ptr)
        return self._done()

    def allgather(self, send, recv):
        self._wait_inputs()
        self.comm.allGather(send.data.ptr, recv.data.ptr, send.nbytes, self.nccl.NCCL_UINT8,
                            self.stream.ptr)
        return self._done()

    def _grouped(self, sends, recvs):
        """(peer, array) pairs as one NCCL group of send/recv (alltoall, scatter,
        gather have no NCCL collective of their own)."""
        self._wait_inputs()
        self.nccl.groupStart()
        for peer, a in sends:
            self.comm.send(a.data.ptr, a.nbytes, self.nccl.NCCL_UINT8, peer, self.stream.ptr)
        for peer, a in recvs:
            self.comm.recv(a.data.ptr, a.nbytes, self.nccl.NCCL_UINT8, peer, self.stream.ptr)
        self.nccl.groupEnd()
        return self._done()

    def alltoall(self, send, recv):
        n = self.size
        s, r = send.reshape(n, -1), recv.reshape(n, -1)
        return self._grouped([(p, s[p]) for p in range(n)], [(p, r[p]) for p in range(n)])

    def alltoallv(self, send, scounts, recv, rcounts):
        sb, rb = send.reshape(-1).view(np.uint8), recv.reshape(-1).view(np.uint8)
        so = np.concatenate([[0], np.cumsum(scounts)])
        ro = np.concatenate([[0], np.cumsum(rcounts)])
        return self._grouped([(p, sb[so[p]:so[p + 1]]) for p in range(self.size)],
                             [(p, rb[ro[p]:ro[p + 1]]) for p in range(self.size)])

    def scatter(self, send, recv, root):
        n = self.size
        sends = [(p, send.reshape(n, -1)[p]) for p in range(n)] if self.rank == root else []
        return self._grouped(sends, [(root, recv)])

    def gather(self, send, recv, root):
        n = self.size
        recvs = [(p, recv.reshape(n, -1)[p]) for p in range(n)] if self.rank == root else []
        return self._grouped([(root, send)], recvs)

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
