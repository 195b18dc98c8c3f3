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
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


@dataclass
class TestRun:
    status: str  # "passed" | "failed" | "timeout" | "error"
    seconds: float
    output: str


def run_tests(scratch: Scratch, nodeids: list[str], timeout: float, *, stop_first: bool = True,
              extra: tuple[str, ...] = ()) -> TestRun:
    """Run `nodeids` with pytest in the copy; ``-x`` unless `stop_first` is false."""
    if not nodeids:
        raise ValueError("no tests to run")
    args_file = scratch.base / f"selected-tests-{threading.get_ident()}.txt"
    args_file.write_text("\n".join(nodeids) + "\n", encoding="utf-8")
    cmd = ["nice", "-n", "10", sys.executable, "-m", "pytest", "-q", "--no-header", "-rfE",
           "-p", "no:randomly", *(["-x"] if stop_first else []), *extra, f"@{args_file}"]
    start = time.monotonic()
    # own process group: a timeout kills the tests' own children too
    proc = subprocess.Popen(cmd, cwd=scratch.root, env=scratch.env(), stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, start_new_session=True)
    with _lock:
        _running.add(proc)
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
        return TestRun("timeout", time.monotonic() - start, (out or "")[-4000:])
    except BaseException:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        raise
    finally:
        with _lock:
            _running.discard(proc)
    seconds = time.monotonic() - start
    rc = proc.returncode
    status = "passed" if rc == 0 else "failed" if rc in _KILLED else "error"
    return TestRun(status, seconds, (out or "")[-4000:])
