"""`Task`: the handle of an issued collective or p2p op, and the deadline wait.

Every op is issued nonblocking; `Task.wait` polls its MPI requests (MPI_Test)
until they complete or the op's deadline passes. Polling without sleeping keeps
MPI's progress engine turning as fast as MPI_Wait would (MPICH makes progress
only inside MPI calls). After 5 ms of pure polling each poll also yields the core
(sched_yield: on an oversubscribed machine the peer we wait for may need it;
yielding from the start costs a fast op tens of microseconds when other
processes are runnable), and after the first second it backs off with short
sleeps (up to 5 ms) so a rank waiting on a straggler leaves the core to others,
and checks the store once a second for ranks the launcher reported dead, so a
killed peer is named long before the timeout.

On a timeout the wait names the ranks that did not arrive and the last op of
every rank (`_watch.diagnose`), dumps the flight recorder, marks the MPI state
broken and raises `CollectiveTimeoutError`.
"""
from __future__ import annotations

import os
import time

from fw.distributed._flight_recorder import recorder
from fw.distributed.communication import _engine_mpi, _watch
from fw.distributed.communication.errors import (
    CollectiveDesyncError,
    CollectiveTimeoutError,
    CommError,
    CommunicatorBrokenError,
)

__all__ = ["Task", "completed_task"]

_SPIN_S = 0.005      # pure polling for this long (the latency of a fast op),
_YIELD_S = 1.0       # then polling with sched_yield (the peer may need this core),
_MAX_SLEEP = 0.005    # then sleeps growing to this
_DEAD_CHECK_S = 1.0  # how often a long wait asks the store for dead ranks
_yield = getattr(os, "sched_yield", lambda: None)


class Task:
    """An issued op. ``wait()`` blocks until it completes (or raises on timeout,
    desync or an MPI error); ``is_completed()`` tests without blocking.

    Returned by every collective (already waited when ``sync_op=True``), by
    `isend`/`irecv`, and by the ``sync_op=False`` forms.

    Args:
        group (Group): the group the op runs on.
        entry: its flight-recorder entry.
        reqs (list): the pending transport requests.
        finish (callable): run once after completion (copy back, averaging).
        sig: the desync-check signature exchange, or None.
        timeout (float): seconds before the op is declared hung.
        fn (str): the name of the collective, for messages.

    Examples:
        >>> import fw, fw.distributed as dist
        >>> t = fw.ones([2])
        >>> task = dist.all_reduce(t, sync_op=False)
        >>> task.wait()
        True
    """

    __slots__ = ("group", "entry", "reqs", "finish", "sig", "deadline", "timeout", "done",
                 "error", "result", "fn", "keep", "peer")

    def __init__(self, group, entry, reqs, finish, sig, timeout, fn):
        self.group = group
        self.entry = entry
        self.reqs = reqs          # pending mpi4py requests
        self.finish = finish      # called once after completion (copy back, AVG, version)
        self.sig = sig            # (gathered signature rows, requests) or None
        self.timeout = timeout
        self.deadline = time.monotonic() + timeout
        self.done = False
        self.error = None
        self.result = None
        self.fn = fn
        self.keep = None          # buffers MPI reads or writes until completion
        self.peer = None          # the global rank of a send/recv's peer

    # -- polling
    def _test(self) -> bool:
        """One pass over the pending requests; True when all are complete."""
        if self.sig is not None:
            # the signatures first, the data op only once they are in: polling the
            # data op while the signature exchange is pending slows both down in
            # MPICH (measured: 10x the latency of a small all_reduce)
            sreq, check, _ = self.sig
            if not sreq.Test():
                return False
            self.sig = None
            self._check_signature(check)
        reqs = self.reqs
        while reqs:
            if not reqs[-1].Test():
                return False
            reqs.pop()
        return True

    def _check_signature(self, check):
        msg = check()
        if msg is not None:
            self.entry.state = "failed"
            _engine_mpi.mark_broken("desync")
            path = recorder.dump(f"desync in {self.fn}")
            p2p = self.fn in ("send", "recv", "isend", "irecv")
            rule = ("a send and its recv must have the same dtype and shape" if p2p else
                    "every rank of a group must call the same collectives in the same order "
                    "with the same dtypes and shapes")
            raise CollectiveDesyncError(
                f"fw.distributed.{self.fn}: ops out of step in group {self.group.id}: {msg}; "
                f"{rule}. Flight recorder: {path}")

    def _complete(self):
        self.done = True
        self.entry.state = "completed"
        self.entry.t_end = time.time()
        _pending.pop(id(self), None)
        if self.finish is not None:
            f, self.finish = self.finish, None
            self.result = f()

    def _fail(self, exc):
        self.entry.state = "failed"
        self.error = exc
        _pending.pop(id(self), None)
        raise exc

    def is_completed(self) -> bool:
        """Whether the op has completed (does not block; raises the op's error if it
        failed).

        Returns:
            bool: completion.

        Examples:
            >>> import fw
            >>> import fw.distributed as dist
            >>> task = dist.all_reduce(fw.ones([2]), sync_op=False)
            >>> task.wait()
            True
            >>> task.is_completed()
            True
        """
        if self.done:
            return True
        if self.error is not None:
            raise self.error
        try:
            ok = self._test()
        except CommError as exc:
            self._fail(exc)
        except Exception as exc:  # noqa: BLE001 - an MPI error
            self._fail(self._mpi_error(exc))
        if ok:
            self._complete()
        return ok

    def wait(self, timeout=None) -> bool:
        """Block until the op completes. `timeout` (seconds) shortens the op's own
        deadline; the op's timeout (from `new_group`/`init_parallel_env`) applies
        otherwise. Raises `CollectiveTimeoutError`, `CollectiveDesyncError` or
        `CommError`.

        Args:
            timeout (float, optional): seconds. Default: None.

        Returns:
            bool: True.

        Examples:
            >>> import fw
            >>> import fw.distributed as dist
            >>> t = fw.ones([2])
            >>> dist.all_reduce(t, sync_op=False).wait(timeout=30)
            True
        """
        if self.done:
            return True
        if self.error is not None:
            raise self.error
        deadline = self.deadline
        if timeout is not None:
            deadline = min(deadline, time.monotonic() + float(timeout))
        test = self._test
        try:
            if test():
                self._complete()
                return True
            t0 = time.monotonic()
            spin_until = t0 + _SPIN_S
            yield_until = t0 + _YIELD_S
            next_dead = t0 + _DEAD_CHECK_S
            sleep = 0.0
            n = 0
            now = t0
            while not test():
                n += 1
                if sleep == 0.0:
                    if n & 63:        # read the clock every 64 polls
                        if now > spin_until:
                            _yield()
                        continue
                    now = time.monotonic()
                    if now > yield_until:
                        sleep = 1e-4
                else:
                    time.sleep(sleep)
                    sleep = min(_MAX_SLEEP, sleep * 2)
                    now = time.monotonic()
                if now > deadline:
                    self._timed_out(None)
                if now > next_dead:
                    next_dead = now + _DEAD_CHECK_S
                    dead = _watch.dead_ranks([r for r in self.group.ranks
                                              if r != self.group._global_rank])
                    if dead:
                        self._timed_out(dead)
        except CommError as exc:
            self._fail(exc)
        except Exception as exc:  # noqa: BLE001 - an MPI error
            self._fail(self._mpi_error(exc))
        self._complete()
        return True

    def _mpi_error(self, exc):
        # a signature mismatch explains most MPI errors (truncation): report it
        if self.sig is not None:
            sreq, check, _ = self.sig
            end = time.monotonic() + 5.0
            try:
                while not sreq.Test():
                    if time.monotonic() > end:
                        raise TimeoutError
                self.sig = None
                self._check_signature(check)
            except CommError as desync:
                return desync
            except Exception:  # noqa: BLE001
                pass
        _engine_mpi.mark_broken("MPI error")
        return CommError(f"fw.distributed.{self.fn}: MPI error in group {self.group.id} "
                         f"during {self.entry.describe()}: {exc}")

    def _timed_out(self, dead):
        e = self.entry
        e.state = "timed out" if not dead else "peer died"
        _engine_mpi.mark_broken(f"timeout in {self.fn}")
        nccl = getattr(self.group, "nccl", None)
        if nccl is not None:  # a GPU op: NCCL never returns on a lost peer unless aborted
            try:
                nccl.abort()
            except Exception:  # noqa: BLE001 - the timeout error below is the one to raise
                pass
        lines, missing, dead2 = _watch.diagnose(self.group, e, self.peer)
        dead = {**(dead or {}), **dead2}
        if dead:
            e.state = "peer died"
        path = recorder.dump(f"timeout in {self.fn}")
        if dead:
            head = "; ".join(f"rank {r} died ({how})" for r, how in sorted(dead.items()))
            what = f"{head} while this rank waited in {e.describe()}"
        elif self.peer is not None:
            what = (f"timed out after {self.timeout:g} s in {e.describe()}: rank {self.peer} "
                    f"did not post the matching {'recv' if 'send' in self.fn else 'send'}")
        else:
            who = (f"rank{'s' if len(missing) > 1 else ''} "
                   f"{', '.join(str(r) for r in missing)} did not arrive") if missing else \
                "every rank arrived but the op did not complete"
            what = f"timed out after {self.timeout:g} s in {e.describe()}: {who}"
        whose = (f"rank {self.peer}" if self.peer is not None else
                 f"each rank of group {self.group.id}")
        msg = (f"fw.distributed.{self.fn} on rank {self.group._global_rank}: {what}.\n"
               f"  last op of {whose}:\n    "
               + "\n    ".join(lines)
               + f"\n  flight recorder: {path}\n  The MPI state is now unusable: "
                 "the job must restart.")
        raise CollectiveTimeoutError(msg, missing=missing, dead=dead, dump_path=path)


# Tasks issued with sync_op=False and not complete yet. Holding them keeps their
# buffers alive while MPI still reads or writes them even if the caller dropped the
# handle, and lets the next op finish them (`progress_pending`): an async op's
# result lands in its tensor (copy-back of a float16 reduction, AVG's division)
# even when nobody waits on it.
_pending: dict = {}


def track(task):
    _pending[id(task)] = task


def progress_pending():
    """Test the pending async tasks once (no blocking); errors stay with their
    task and are raised by its wait()."""
    for t in list(_pending.values()):
        try:
            t.is_completed()
        except Exception:  # noqa: BLE001 - kept in t.error for its wait()
            pass


def check_usable(fn):
    why = _engine_mpi.is_broken()
    if why is not None:
        raise CommunicatorBrokenError(
            f"fw.distributed.{fn}: the communicators are unusable after an earlier {why}; "
            "restart the job (the launcher's elastic restart does it)")


class _Completed:
    """The task of an op that had nothing to do (a non-member of the group)."""

    def wait(self, timeout=None):
        return True

    def is_completed(self):
        return True


def completed_task():
    return _Completed()
