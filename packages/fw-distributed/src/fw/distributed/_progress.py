"""Driving MPI's progress engine while backward computes.

MPICH advances a nonblocking collective only inside MPI calls of *both* ranks: an
all-reduce started in a gradient hook moves only when the next hook or the final
wait calls into MPI. Backward spends its time in native kernels (matmul,
convolution) that release the GIL, so a bucket launched early would sit idle until
backward ends. `ProgressDriver` is a daemon thread that, while the owner has
collectives in flight (between `resume` and `pause`), calls ``MPI_Iprobe`` on the
group's communicator every `interval` seconds. Iprobe runs the progress engine
without touching any request (so it never races with the owner's own
``MPI_Test``; fw's MPI runs in ``MPI_THREAD_MULTIPLE``) and only peeks at the
point-to-point queue (nothing is received). Measured on 2 ranks: an 804 kB
all-reduce started before 4 ms of GIL-free compute was complete when the compute
ended with the driver (wait 3 µs) and needed 0.25-0.6 ms after it without.

MPICH's own asynchronous progress thread (``MPIR_CVAR_ASYNC_PROGRESS=1``) does the
same without the GIL but spins a core per rank all the time, which on a machine
with one core per rank costs more than it gains (see the DataParallel figures in
the README). The thread here sleeps between probes and blocks on an event while
nothing is in flight, so forward and the optimizer step never see it.
"""

from __future__ import annotations

import atexit
import os
import threading
import weakref

__all__ = ["ProgressDriver", "default_interval"]

_drivers: weakref.WeakSet = weakref.WeakSet()
_registered = [False]
_ANY_TAG_NEVER_SENT = 32000  # Iprobe only peeks; a tag fw never sends keeps it a no-op


def default_interval() -> float:
    """Seconds between probes: ``FW_DIST_PROGRESS_US`` (microseconds; 0 turns the
    driver off), default 100 µs."""
    v = os.environ.get("FW_DIST_PROGRESS_US", "100")
    try:
        us = float(v)
    except ValueError:
        raise ValueError(f"FW_DIST_PROGRESS_US={v!r} is not a number of microseconds") from None
    if us < 0:
        raise ValueError(f"FW_DIST_PROGRESS_US must be >= 0 (0 turns it off), got {v!r}")
    return us * 1e-6


class ProgressDriver:
    """A daemon thread probing `comm` (an mpi4py communicator) every `interval`
    seconds between `resume()` and `pause()`. `close()` ends it (also done at exit,
    before MPI_Finalize)."""

    def __init__(self, comm, interval: float):
        self.comm = comm
        self.interval = float(interval)
        self.probes = 0            # how many probes ran (tests and the profile read it)
        self._active = threading.Event()
        self._closed = False
        self._lock = threading.Lock()   # held while probing: close() waits for it
        self._thread = threading.Thread(target=self._run, name="fw-dist-progress",
                                        daemon=True)
        if not _registered[0]:
            # registered after MPI is up (a driver needs a communicator), so after fw's
            # MPI_Finalize hook: atexit runs last-in first-out, the drivers stop first
            _registered[0] = True
            atexit.register(_close_all)
        _drivers.add(self)
        self._thread.start()

    def resume(self):
        if not self._closed:
            self._active.set()

    def pause(self):
        self._active.clear()

    @property
    def active(self) -> bool:
        return self._active.is_set()

    def _run(self):
        from mpi4py import MPI

        active, lock, comm, interval = self._active, self._lock, self.comm, self.interval
        sleep = threading.Event().wait  # a timed wait that releases the GIL
        while True:
            active.wait()
            if self._closed:
                return
            with lock:
                if self._closed or MPI.Is_finalized():
                    return
                try:
                    comm.Iprobe(MPI.ANY_SOURCE, _ANY_TAG_NEVER_SENT)
                except Exception:  # noqa: BLE001 - a broken communicator: stop probing
                    self._closed = True
                    return
                self.probes += 1
            sleep(interval)

    def close(self, timeout: float = 1.0):
        """Stop the thread (bounded: a probe returns at once)."""
        self._closed = True
        self._active.set()
        if self._lock.acquire(timeout=timeout):
            self._lock.release()
        if self._thread is not threading.current_thread():
            self._thread.join(timeout)


def _close_all():
    for d in list(_drivers):
        d.close()
