"""The local rank processes of a launch: start, log, watch, kill.

Each rank runs in its own process group (so killing it also kills what it
started, e.g. data-loader workers) and gets ``PR_SET_PDEATHSIG`` = SIGKILL, so
the kernel kills it if the launcher dies without cleaning up (``kill -9`` of
the launcher included). PDEATHSIG fires when the *thread* that forked the
child exits, so ranks must be started from a thread that outlives them (the
launcher's main thread; `fw.distributed.spawn`'s caller).
"""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys
import threading
import time

__all__ = ["Worker", "describe_exit", "exit_status", "kill_all"]

_PR_SET_PDEATHSIG = 1
_libc = None


def _prctl_pdeathsig():
    global _libc
    if _libc is None and sys.platform.startswith("linux"):
        try:
            _libc = ctypes.CDLL(None, use_errno=True)
        except OSError:
            _libc = False
    return _libc


def _child_setup(parent_pid: int):
    """Runs in the child between fork and exec: own process group, die with the parent."""
    os.setpgid(0, 0)
    libc = _libc
    if libc:
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != parent_pid:  # the parent died before prctl took effect
            os._exit(1)


def describe_exit(returncode: int | None) -> str:
    """'exit code 1' / 'signal SIGKILL' / 'running' for a Popen returncode."""
    if returncode is None:
        return "running"
    if returncode < 0:
        try:
            return f"signal {signal.Signals(-returncode).name}"
        except ValueError:
            return f"signal {-returncode}"
    return f"exit code {returncode}"


def exit_status(returncode: int) -> int:
    """The shell's convention for a launcher exit status: N for exit N, 128+S for signal S."""
    return 128 - returncode if returncode < 0 else returncode


class _Streamer(threading.Thread):
    """Copies a rank's output to its log file and, line-prefixed, to the console."""

    def __init__(self, fd: int, log, prefix: str, console):
        super().__init__(name=f"fw-launch-stream{prefix}", daemon=True)
        self.fd, self.log, self.prefix, self.console = fd, log, prefix.encode(), console
        self._pending = b""

    def run(self):
        out = getattr(self.console, "buffer", None)
        try:
            while True:
                try:
                    chunk = os.read(self.fd, 65536)
                except OSError:
                    break
                if not chunk:
                    break
                self.log.write(chunk)
                self.log.flush()
                data = self._pending + chunk
                lines = data.split(b"\n")
                self._pending = lines.pop()
                if lines:
                    text = b"".join(self.prefix + ln + b"\n" for ln in lines)
                    self._emit(out, text)
            if self._pending:
                self._emit(out, self.prefix + self._pending + b"\n")
        finally:
            os.close(self.fd)

    def _emit(self, out, text: bytes):
        try:
            if out is not None:
                out.write(text)
                out.flush()
            else:
                self.console.write(text.decode(errors="replace"))
                self.console.flush()
        except (OSError, ValueError):
            pass  # a closed console must not stop the log


class Worker:
    """One rank's process.

    Args:
        rank, local_rank: the global and node-local rank.
        cmd: the argv to run.
        env: its full environment.
        log_path: where its stdout+stderr go (None: inherit the launcher's).
        pass_fds: fds the child keeps (the PMI channel).
        stream: also copy its output, prefixed ``[rank N] ``, to the console.
        append: append to ``log_path`` (a restarted attempt) instead of truncating.
    """

    def __init__(self, rank: int, local_rank: int, cmd, env, log_path=None, pass_fds=(),
                 stream: bool = False, append: bool = False, console=None):
        self.rank, self.local_rank = int(rank), int(local_rank)
        self.log_path = log_path
        self.started = time.monotonic()
        self.ended: float | None = None
        self.note = ""  # why the launcher ended it, for the summary
        self._streamer = None
        _prctl_pdeathsig()
        log = open(log_path, "ab" if append else "wb") if log_path else None  # noqa: SIM115
        self._log = log
        stdout, read_fd = None, None
        if log is not None:
            if stream:
                read_fd, write_fd = os.pipe()
                stdout = write_fd
            else:
                stdout = log
        parent = os.getpid()
        try:
            self.proc = subprocess.Popen(
                list(cmd), env=env, pass_fds=tuple(pass_fds), stdin=subprocess.DEVNULL,
                stdout=stdout, stderr=subprocess.STDOUT if stdout is not None else None,
                preexec_fn=lambda: _child_setup(parent), close_fds=True)
        except OSError as e:
            if read_fd is not None:
                os.close(read_fd)
                os.close(write_fd)
            if log is not None:
                log.close()
            raise RuntimeError(f"fw.distributed.launch: cannot start rank {rank}: "
                               f"{cmd[0]!r}: {e.strerror or e}") from e
        if read_fd is not None:
            os.close(write_fd)
            self._streamer = _Streamer(read_fd, log, f"[rank {self.rank}] ",
                                       console or sys.stdout)
            self._streamer.start()

    @property
    def pid(self) -> int:
        return self.proc.pid

    @property
    def returncode(self) -> int | None:
        return self.proc.returncode

    def poll(self) -> int | None:
        rc = self.proc.poll()
        if rc is not None and self.ended is None:
            self.ended = time.monotonic()
        return rc

    def describe(self) -> str:
        text = describe_exit(self.proc.returncode)
        return f"{text} ({self.note})" if self.note else text

    def signal_group(self, sig) -> None:
        """Send ``sig`` to the rank's process group (the rank and what it started)."""
        if self.proc.returncode is not None:
            # the rank is gone; its children may not be (a data-loader worker)
            try:
                os.killpg(self.proc.pid, sig)
            except (ProcessLookupError, PermissionError):
                pass
            return
        try:
            os.killpg(self.proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            try:
                self.proc.send_signal(sig)
            except ProcessLookupError:
                pass

    def close(self, timeout: float = 5.0) -> None:
        """Release the log file (after the output thread drained, bounded)."""
        if self._streamer is not None:
            self._streamer.join(timeout)
        if self._log is not None and (self._streamer is None or not self._streamer.is_alive()):
            self._log.close()


def kill_all(workers, note: str, term_timeout: float = 3.0) -> None:
    """SIGTERM every running rank's group, SIGKILL what is left after ``term_timeout``.

    Every wait is bounded; ranks already ended keep their own exit description."""
    running = [w for w in workers if w.poll() is None]
    for w in running:
        w.note = note
        w.signal_group(signal.SIGTERM)
    deadline = time.monotonic() + term_timeout
    while time.monotonic() < deadline and any(w.poll() is None for w in running):
        time.sleep(0.02)
    for w in workers:
        # SIGKILL the survivors, and the groups of ended ranks (orphaned children)
        w.signal_group(signal.SIGKILL)
    for w in running:
        try:
            w.proc.wait(timeout=10.0)
        except subprocess.TimeoutExpired:  # an unkillable (D-state) process: report, go on
            w.note = f"{note}; did not die after SIGKILL"
