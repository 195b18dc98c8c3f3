"""An inter-process lock on one cache file, so two loaders of the same URL do not
download it twice or rename over each other: ``<target>.lock`` held with ``fcntl.flock``
(released by the kernel when the holder dies, so a crashed loader never leaves a stale
lock), with the holder's pid written into it for the timeout message. Polls with a
bounded wait: nothing here can block forever."""

from __future__ import annotations

import os
import time

from fw.hub.errors import LockTimeoutError

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: msvcrt locks one byte instead
    fcntl = None
    import msvcrt

__all__ = ["FileLock", "DEFAULT_LOCK_TIMEOUT"]

DEFAULT_LOCK_TIMEOUT = float(os.environ.get("FW_HUB_LOCK_TIMEOUT", "600"))


class FileLock:
    """Exclusive lock on ``path`` (a ``.lock`` file beside the target).

    Args:
        path (str): the lock file (created if missing, left in place after release:
            removing it would let a third process lock a different inode).
        timeout (float): seconds to wait for another holder before raising
            `LockTimeoutError` naming its pid.
    """

    def __init__(self, path: str, timeout: float | None = None):
        self.path = os.fspath(path)
        self.timeout = DEFAULT_LOCK_TIMEOUT if timeout is None else float(timeout)
        self._fd = None

    def _try(self, fd) -> bool:
        try:
            if fcntl is not None:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            else:  # pragma: no cover
                msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
            return True
        except OSError:
            return False

    def _holder(self) -> str:
        try:
            with open(self.path, encoding="ascii", errors="replace") as f:
                pid = f.read(32).strip()
        except OSError:
            pid = ""
        return f"pid {pid}" if pid else "an unknown process"

    def acquire(self):
        os.makedirs(os.path.dirname(self.path) or ".", exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o644)
        deadline = time.monotonic() + self.timeout
        delay = 0.01
        while not self._try(fd):
            if time.monotonic() >= deadline:
                holder = self._holder()
                os.close(fd)
                raise LockTimeoutError(
                    f"fw.hub: timed out after {self.timeout:g} s waiting for the lock "
                    f"{self.path}, held by {holder} (another download of the same file); "
                    f"wait for it to finish, or remove the lock file if that process is gone "
                    f"(FW_HUB_LOCK_TIMEOUT sets the wait)")
            time.sleep(delay)
            delay = min(delay * 2, 0.25)
        os.ftruncate(fd, 0)
        os.write(fd, str(os.getpid()).encode("ascii"))
        self._fd = fd
        return self

    def release(self):
        fd, self._fd = self._fd, None
        if fd is None:
            return
        try:
            os.ftruncate(fd, 0)
            if fcntl is not None:
                fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)

    def __enter__(self):
        return self.acquire()

    def __exit__(self, *exc):
        self.release()
