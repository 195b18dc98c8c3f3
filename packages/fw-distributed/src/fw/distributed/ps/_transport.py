"""Request/response over MPI point-to-point: the parameter server's transport.

The same engine as the collectives (mpi4py on the mpich wheel), on a duplicate
of fw's world communicator made for parameter-server traffic only, so a request
can never match a collective's or the program's own message. Requests go to a
server with tag `TAG_REQUEST`, replies come back with `TAG_REPLY`; each is one
message (`_protocol`), received with a matched probe (``MPI_Improbe`` +
``MPI_Mrecv``: the size is known before the buffer is allocated, and no other
receive can steal the message in between).

Every wait polls with a deadline: it spins 0.5 ms, yields until 5 ms, then sleeps
with growing pauses (up to `_MAX_SLEEP`, so an idle server or a trainer waiting for a
sync step leaves the cores to others), and once a second asks the job's store
whether the launcher reported the awaited peer dead, so a killed server is named
within about a second instead of at the deadline.
"""
from __future__ import annotations

import os
import time

import numpy as np

from fw.distributed.communication import _engine_mpi, _watch
from fw.distributed.ps._protocol import decode

__all__ = ["Transport", "TAG_REQUEST", "TAG_REPLY", "Backoff", "rpc_timeout"]

TAG_REQUEST = 0x5053
TAG_REPLY = 0x5054
# spin briefly, then yield, then sleep: on an oversubscribed machine a process that
# spins longer steals the core its peer needs to answer (measured on the 2-core CI
# machine: a 1-id round trip of 16 ms with 2 ms of spinning, 4-8 ms with 0.5 ms)
_SPIN_S = 0.0005
_YIELD_S = 0.005
_MAX_SLEEP = 0.001
_DEAD_CHECK_S = 1.0
_yield = getattr(os, "sched_yield", lambda: None)


def rpc_timeout(default: float) -> float:
    """Seconds a request may wait for its reply: Paddle's ``FLAGS_rpc_deadline``
    (milliseconds) when set, else `default` (the job's timeout)."""
    raw = os.environ.get("FLAGS_rpc_deadline")
    if not raw:
        return default
    try:
        ms = float(raw)
    except ValueError:
        raise ValueError(f"FLAGS_rpc_deadline must be milliseconds, got {raw!r}") from None
    if not ms > 0:
        raise ValueError(f"FLAGS_rpc_deadline must be > 0 milliseconds, got {raw!r}")
    return ms / 1000.0


class Backoff:
    """Pauses of a polling loop: none for `_SPIN_S`, then ``sched_yield`` until
    `_YIELD_S`, then sleeps doubling from 20 us to `_MAX_SLEEP`. ``reset()`` after
    progress."""

    __slots__ = ("t0", "sleep")

    def __init__(self):
        self.reset()

    def reset(self):
        self.t0 = time.monotonic()
        self.sleep = 0.0

    def pause(self):
        if self.sleep:
            time.sleep(self.sleep)
            self.sleep = min(_MAX_SLEEP, self.sleep * 2)
            return
        el = time.monotonic() - self.t0
        if el > _YIELD_S:
            self.sleep = 2e-5
        elif el > _SPIN_S:
            _yield()


class Transport:
    """One process's end: `comm` (the parameter-server communicator), and the
    description of each rank for error messages (``names[rank]``)."""

    def __init__(self, comm, names: dict):
        self.comm = comm
        self.MPI = _engine_mpi.mpi_module()
        self.names = names
        self._sends = []   # (request, buffer) until MPI is done with the buffer

    def send(self, dest: int, buf: np.ndarray, tag: int) -> None:
        req = self.comm.Isend([buf, self.MPI.BYTE], dest, tag)
        self._sends.append((req, buf))
        self.progress_sends()

    def progress_sends(self) -> None:
        if self._sends:
            self._sends = [(r, b) for r, b in self._sends if not r.Test()]

    def try_recv(self, source: int, tag: int):
        """(source rank, raw buffer) of one matched message, or None."""
        st = self.MPI.Status()
        msg = self.comm.Improbe(source, tag, st)
        if msg is None:
            return None
        buf = np.empty(st.Get_count(self.MPI.BYTE), np.uint8)
        msg.Recv([buf, self.MPI.BYTE])
        return st.Get_source(), buf

    def dead(self, ranks) -> dict:
        """{rank: how} of `ranks` the launcher reported dead."""
        return _watch.dead_ranks(list(ranks))

    def aborted(self) -> str | None:
        """The launcher's reason when it aborted the job (a rank failed), else None."""
        from fw.distributed.communication._world import state

        store = state.store
        if store is None:
            return None
        key = state.key("abort")
        try:
            if store.check([key]):
                return store.get(key, timeout=2.0).decode(errors="replace")
        except Exception:  # noqa: BLE001 - a store going away is not this loop's error
            return None
        return None

    def flush(self, timeout: float) -> bool:
        """Wait (bounded) until MPI sent every buffered message; False on timeout."""
        end = time.monotonic() + timeout
        b = Backoff()
        while self._sends:
            self.progress_sends()
            if time.monotonic() > end:
                return False
            if self._sends:
                b.pause()
        return True

    def decode(self, buf):
        return decode(buf)
