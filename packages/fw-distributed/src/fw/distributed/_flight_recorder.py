"""The per-rank flight recorder: a ring buffer of the last N collectives.

Every collective and p2p op appends one `Entry` (op, shapes, dtypes, group, the
group's sequence number, state and times) when it is issued and marks it when it
completes, times out or fails. The buffer is dumped as JSON (never pickle) on a
timeout, a desync, or when the process gets SIGUSR1, so a stuck or failed job
can say what every rank was doing. The idea follows PyTorch's NCCL flight
recorder (TORCH_NCCL_TRACE_BUFFER_SIZE, dumped on watchdog timeout); the format
and code are fw's own.

Cost on the hot path: one small object and a deque append per op (measured in
asv_bench/bench_dist_collectives.py with the rest of the machinery).

Environment: ``FW_FLIGHT_RECORDER_SIZE`` (entries kept, default 256; 0 turns
recording off), ``FW_FLIGHT_RECORDER_DIR`` (where dumps go; default
``FW_LOG_DIR``, else the system temp directory).
"""
from __future__ import annotations

import json
import os
import signal
import sys
import tempfile
import threading
import time
from collections import deque

__all__ = ["Entry", "FlightRecorder", "recorder", "install_sigusr1", "dump"]


class Entry:
    """One recorded op. `state` is 'issued', 'completed', 'timed out' or 'failed'."""

    __slots__ = ("id", "group", "seq", "op", "shapes", "dtypes", "extra", "t_issue",
                 "t_end", "state")

    def __init__(self, id, group, seq, op, shapes, dtypes, extra):
        self.id = id
        self.group = group
        self.seq = seq
        self.op = op
        self.shapes = shapes
        self.dtypes = dtypes
        self.extra = extra
        self.t_issue = time.time()
        self.t_end = None
        self.state = "issued"

    def describe(self) -> str:
        """``all_reduce #12 in group 0 float32[4] op=SUM (issued)``."""
        args = ", ".join(f"{d}{list(s)}" for s, d in zip(self.shapes, self.dtypes))
        extra = "".join(f" {k}={v}" for k, v in self.extra.items())
        return f"{self.op} #{self.seq} in group {self.group} ({args}){extra} [{self.state}]"

    def as_dict(self) -> dict:
        return {"id": self.id, "group": self.group, "seq": self.seq, "op": self.op,
                "shapes": [list(s) for s in self.shapes], "dtypes": list(self.dtypes),
                "extra": {k: str(v) for k, v in self.extra.items()},
                "t_issue": self.t_issue, "t_end": self.t_end, "state": self.state}


class FlightRecorder:
    """The ring buffer of one process (thread-safe appends: deque.append is atomic)."""

    def __init__(self, size: int | None = None):
        if size is None:
            size = int(os.environ.get("FW_FLIGHT_RECORDER_SIZE", "256"))
        if size < 0:
            raise ValueError(f"FW_FLIGHT_RECORDER_SIZE must be >= 0, got {size}")
        self.size = size
        self.entries: deque = deque(maxlen=max(size, 1))
        self.count = 0          # ops recorded so far (the `id` of the next entry)
        self.rank = 0
        self.job = ""           # the job id (set by init_parallel_env), names the dump file
        self.last = None        # the latest Entry, read by the progress publisher

    def record(self, group, seq, op, shapes, dtypes, extra) -> Entry:
        e = Entry(self.count, group, seq, op, shapes, dtypes, extra)
        self.count += 1
        self.last = e
        if self.size:
            self.entries.append(e)
        return e

    def snapshot(self) -> list[dict]:
        return [e.as_dict() for e in list(self.entries)]

    def dump(self, reason: str, path: str | None = None) -> str:
        """Write the buffer as JSON; returns the file's path. Never raises for I/O
        trouble in the middle of an error path: falls back to stderr."""
        doc = {"rank": self.rank, "pid": os.getpid(), "reason": reason, "time": time.time(),
               "entries_recorded": self.count, "entries": self.snapshot()}
        if path is None:
            d = (os.environ.get("FW_FLIGHT_RECORDER_DIR") or os.environ.get("FW_LOG_DIR")
                 or tempfile.gettempdir())
            job = (self.job or os.environ.get("FW_JOB_ID") or "nojob").replace("/", "_")
            path = os.path.join(d, f"fw_flight_recorder_{job}_rank{self.rank}_{os.getpid()}.json")
        try:
            os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
            tmp = f"{path}.tmp"
            with open(tmp, "w") as f:
                json.dump(doc, f, indent=1)
            os.replace(tmp, path)
        except OSError as exc:
            sys.stderr.write(f"fw.distributed flight recorder: cannot write {path} ({exc}); "
                             f"dump follows\n{json.dumps(doc)}\n")
        return path


recorder = FlightRecorder()


def dump(reason: str = "requested", path: str | None = None) -> str:
    """Dump this process's flight recorder now (see `FlightRecorder.dump`)."""
    return recorder.dump(reason, path)


def _on_sigusr1(signum, frame):
    path = recorder.dump("SIGUSR1")
    last = recorder.last.describe() if recorder.last is not None else "none"
    sys.stderr.write(f"fw.distributed rank {recorder.rank}: flight recorder dumped to {path} "
                     f"(last op: {last})\n")
    sys.stderr.flush()


def install_sigusr1() -> bool:
    """Dump on SIGUSR1, unless the program already handles that signal or this is
    not the main thread (signal handlers can only be set there). Returns whether
    the handler was installed."""
    if not hasattr(signal, "SIGUSR1") or threading.current_thread() is not threading.main_thread():
        return False
    if signal.getsignal(signal.SIGUSR1) not in (signal.SIG_DFL, None, _on_sigusr1):
        return False
    signal.signal(signal.SIGUSR1, _on_sigusr1)
    return True
