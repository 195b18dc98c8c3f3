"""Running a set of tests in the scratch copy: one pytest process, bounded in time."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass

from .scratch import Scratch

# pytest exit codes: 0 all passed, 1 some failed, 2 interrupted (a collection
# error: the mutant broke an import), 5 nothing collected
_KILLED = {1, 2}

# the test processes running now (several with --jobs): an interrupted run kills them
_running: set[subprocess.Popen] = set()
_lock = threading.Lock()


def kill_all() -> None:
    """Kill every running test process group (on an interrupt)."""
    with _lock:
        procs = list(_running)
    for proc in procs:
        _killpg(proc.pid)


@dataclass
class TestRun:
    status: str  # "passed" | "failed" | "timeout" | "error"
    seconds: float  # wall time
    output: str
    cpu_seconds: float = 0.0  # user + system time of pytest and the processes it waited for


def run_tests(scratch: Scratch, nodeids: list[str], timeout: float, *, stop_first: bool = True,
              extra: tuple[str, ...] = ()) -> TestRun:
    """Run `nodeids` with pytest in the copy; ``-x`` unless `stop_first` is false."""
    if not nodeids:
        raise ValueError("no tests to run")
    tag = threading.get_ident()
    args_file = scratch.base / f"selected-tests-{tag}.txt"
    args_file.write_text("\n".join(nodeids) + "\n", encoding="utf-8")
    log_file = scratch.base / f"pytest-output-{tag}.txt"
    cmd = ["nice", "-n", "10", sys.executable, "-m", "pytest", "-q", "--no-header", "-rfE",
           "-p", "no:randomly", *(["-x"] if stop_first else []), *extra, f"@{args_file}"]
    start = time.monotonic()
    timed_out = threading.Event()

    def on_timeout():
        timed_out.set()
        _killpg(proc.pid)

    with open(log_file, "w+", encoding="utf-8", errors="replace") as log:
        # own process group: a timeout kills the tests' own children too
        proc = subprocess.Popen(cmd, cwd=scratch.root, env=scratch.env(), stdout=log,
                                stderr=subprocess.STDOUT, start_new_session=True)
        with _lock:
            _running.add(proc)
        timer = threading.Timer(timeout, on_timeout)
        timer.start()
        try:
            # wait4, not wait: the child's own CPU time (wall time is noisy on a shared
            # machine; CPU time is what a full-pass estimate needs)
            _, status, usage = os.wait4(proc.pid, 0)
            proc.returncode = os.waitstatus_to_exitcode(status)
        except BaseException:
            _killpg(proc.pid)
            proc.wait()
            raise
        finally:
            timer.cancel()
            with _lock:
                _running.discard(proc)
        log.seek(0)
        out = log.read()[-4000:]
    seconds = time.monotonic() - start
    cpu = usage.ru_utime + usage.ru_stime
    if timed_out.is_set():
        return TestRun("timeout", seconds, out, cpu)
    rc = proc.returncode
    status = "passed" if rc == 0 else "failed" if rc in _KILLED else "error"
    return TestRun(status, seconds, out, cpu)


def _killpg(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
