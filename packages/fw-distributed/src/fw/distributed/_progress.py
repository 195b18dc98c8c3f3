"""Driving MPI's progress engine while backward computes (DataParallel's MPI path;
on one node its buckets go through shared memory instead, see `_shm_buckets`).

`OpProgress` (the default, ``FW_DIST_PROGRESS=ops``) tests the oldest in-flight
bucket from the autograd engine before each backward op; `ProgressDriver`
(``thread``) probes from a thread, as described below.

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

__all__ = ["ProgressDriver", "OpProgress", "default_interval", "mode"]

_drivers: weakref.WeakSet = weakref.WeakSet()
_registered = [False]
_ANY_TAG_NEVER_SENT = 32000  # Iprobe only peeks; a tag fw never sends keeps it a no-op


def mode() -> str:
    """``FW_DIST_PROGRESS``: how DataParallel's MPI path drives MPI between its
    gradient hooks: ``ops`` (default: `OpProgress`, from the autograd engine between
    backward ops; faster than the thread in 16 of 16 interleaved rounds, see the
    README), ``thread`` (`ProgressDriver`) or ``off``."""
    v = os.environ.get("FW_DIST_PROGRESS", "ops").strip().lower()
    if v not in ("thread", "ops", "off"):
        raise ValueError(f"FW_DIST_PROGRESS must be 'thread', 'ops' or 'off', got {v!r}")
    return v


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


class _Shared:
    """What the thread reads: not the driver itself, so a dropped driver (its
    DataParallel gone) is collected, and its finalizer ends the thread."""

    __slots__ = ("closed", "probes", "active", "lock")

    def __init__(self):
        self.closed = False
        self.probes = 0
        self.active = threading.Event()
        self.lock = threading.Lock()   # held while probing: close() waits for it


def _loop(sh, comm, interval):
    from mpi4py import MPI

    sleep = threading.Event().wait  # a timed wait that releases the GIL
    while True:
        sh.active.wait()
        if sh.closed:
            return
        with sh.lock:
            if sh.closed or MPI.Is_finalized():
                return
            try:
                comm.Iprobe(MPI.ANY_SOURCE, _ANY_TAG_NEVER_SENT)
            except Exception:  # noqa: BLE001 - a broken communicator: stop probing
                sh.closed = True
                return
            sh.probes += 1
        sleep(interval)


def _stop(sh, thread, timeout):
    sh.closed = True
    sh.active.set()
    if sh.lock.acquire(timeout=timeout):
        sh.lock.release()
    if thread is not threading.current_thread():
        thread.join(timeout)


class ProgressDriver:
    """A daemon thread probing `comm` (an mpi4py communicator) every `interval`
    seconds between `resume()` and `pause()`. `close()` ends it; so do dropping the
    driver and the interpreter's exit (before MPI_Finalize)."""

    def __init__(self, comm, interval: float):
        self.comm = comm
        self.interval = float(interval)
        self._sh = _Shared()
        self._thread = threading.Thread(target=_loop, args=(self._sh, comm, self.interval),
                                        name="fw-dist-progress", daemon=True)
        if not _registered[0]:
            # registered after MPI is up (a driver needs a communicator), so after fw's
            # MPI_Finalize hook: atexit runs last-in first-out, the drivers stop first
            _registered[0] = True
            atexit.register(_close_all)
        _drivers.add(self)
        self._thread.start()
        self._finalizer = weakref.finalize(self, _stop, self._sh, self._thread, 1.0)

    @property
    def probes(self) -> int:
        """How many probes ran (tests read it)."""
        return self._sh.probes

    def resume(self):
        if not self._sh.closed:
            self._sh.active.set()

    def pause(self):
        self._sh.active.clear()

    @property
    def active(self) -> bool:
        return self._sh.active.is_set()

    def close(self, timeout: float = 1.0):
        """Stop the thread (bounded: a probe returns at once)."""
        self._finalizer.detach()
        _stop(self._sh, self._thread, timeout)


def _close_all():
    for d in list(_drivers):
        d.close()


class OpProgress:
    """Drives MPI from the autograd engine instead of a thread: between `resume()`
    and `pause()` the engine calls `probe` (the reducer's test of its oldest
    unfinished bucket: one ``MPI_Test`` advances MPICH's whole progress engine)
    before each backward op, through fw-autograd's
    ``register_backward_op_callback``. On both ranks, so each advances the peer's
    transfer at its own op boundaries; nothing runs on another thread or core."""

    interval = 0.0
    probes = 0

    def __init__(self, probe):
        self._probe = probe
        self._handle = None

    def _call(self):
        self.probes += 1
        try:
            self._probe()
        except Exception:  # noqa: BLE001 - a failed op: its wait raises it, not a
            self.pause()   # backward that merely happens to run meanwhile

    def resume(self):
        if self._handle is None:
            from fw.autograd import register_backward_op_callback

            self._handle = register_backward_op_callback(self._call)

    def pause(self):
        if self._handle is not None:
            self._handle.remove()
            self._handle = None

    @property
    def active(self) -> bool:
        return self._handle is not None

    def close(self, timeout: float = 1.0):
        self.pause()
