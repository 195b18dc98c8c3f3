"""The engine of a one-rank group without MPI: a process started without a
launcher is rank 0 of 1, and community code calls collectives anyway (a 1-GPU
run of a data-parallel script). Each op is a local copy with the result MPI
would give on one rank; nothing is initialised."""
from __future__ import annotations

import numpy as np

__all__ = ["SelfEngine"]


class _Done:
    """A request that is already complete (the mpi4py Request API we use)."""

    def Test(self, status=None):
        return True


_DONE = _Done()


class SelfEngine:
    name = "SELF"
    rank = 0
    size = 1

    def allreduce(self, a, op):
        return _DONE

    def reduce(self, a, op, root):
        return _DONE

    def reduce_scatter_block(self, send, recv, op):
        np.copyto(recv.reshape(-1), send.reshape(-1))
        return _DONE

    def bcast(self, a, root):
        return _DONE

    def _copy(self, send, recv):
        np.copyto(recv.reshape(-1).view(np.uint8), send.reshape(-1).view(np.uint8))
        return _DONE

    def allgather(self, send, recv):
        return self._copy(send, recv)

    def allgatherv(self, send, recv, counts):
        return self._copy(send, recv)

    def alltoall(self, send, recv):
        return self._copy(send, recv)

    def alltoallv(self, send, scounts, recv, rcounts):
        return self._copy(send, recv)

    def scatter(self, send, recv, root):
        return self._copy(send, recv)

    def gather(self, send, recv, root):
        return self._copy(send, recv)

    def barrier(self):
        return _DONE

    def isend(self, a, dst, tag):
        raise ValueError("fw.distributed.send: a one-rank group has no peer to send to "
                         "(send to itself would never be matched)")

    def irecv(self, a, src, tag):
        raise ValueError("fw.distributed.recv: a one-rank group has no peer to receive from")

    def split(self, ranks):
        return SelfEngine() if 0 in ranks else None

    def free(self):
        pass
