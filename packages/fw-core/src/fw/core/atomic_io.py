"""Atomic file writes: a file is either the previous one or the complete new one.

`atomic_path(path)` hands out a temporary name in the target's own directory
(so the final rename never crosses a file system); the caller writes the whole
file there. On success the data is flushed to disk (fsync), the temporary file
is renamed over `path` (``os.replace``, atomic on POSIX and Windows) and the
directory is fsync'ed so the rename itself survives a crash. On any failure —
including KeyboardInterrupt — the temporary file is removed and `path` is left
as it was.

A writer killed outright (``kill -9``, power loss) cannot remove its temporary
file, so each temporary name records its writer — ``.<name>.fwtmp-<host>-<pid>-<random>.tmp``
— and the next save of the same target removes the temporary files of that
target whose writer is gone: written on this host, by a pid that no longer
exists, and not locked (each writer holds an ``flock`` on its temporary file
while it writes, which the kernel drops when the writer dies; the lock also
covers a pid reused, or a writer in another pid namespace of the same host).
Temporary files of live writers, of other hosts and of other targets are never
touched.

If `path` is a symbolic link, the file it points to is replaced (the link stays
a link). A new file gets the permissions any new file gets under the umask
(``0o666 & ~umask``, what ``open(path, "w")`` gives).

Used by the model file format (`fw.core.ir.serialize`) and by ``fw.save``
(fw-nn).

>>> import os, tempfile
>>> p = os.path.join(tempfile.mkdtemp(), "a.bin")
>>> with atomic_path(p) as tmp:
...     with open(tmp, "wb") as f:
...         _ = f.write(b"data")
>>> open(p, "rb").read(), os.listdir(os.path.dirname(p))
(b'data', ['a.bin'])
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import socket
import uuid

try:  # POSIX only; elsewhere the pid check alone decides
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None

__all__ = ["atomic_path", "temp_files_of"]

_TAG = "fwtmp"
# a long target name would make the temporary name exceed NAME_MAX (255 bytes)
_MAX_STEM = 120


def _stem(base: str) -> str:
    """The target's part of its temporary names: the name itself, or for a long
    name a prefix and a hash (still one per target, so cleaning finds them)."""
    if len(base.encode("utf-8")) <= _MAX_STEM:
        return base
    h = hashlib.sha256(base.encode("utf-8", "surrogateescape")).hexdigest()[:16]
    return base[:60] + "~" + h


def _host() -> str:
    # hashed: a host name may hold characters a file name should not (and dots)
    return hashlib.sha256(socket.gethostname().encode("utf-8", "replace")).hexdigest()[:8]


def _pattern(base: str):
    return re.compile(r"\." + re.escape(_stem(base)) + r"\." + _TAG
                      + r"-([0-9a-f]{8})-([0-9]+)-[0-9a-f]{12}\.tmp\Z")


def temp_files_of(path) -> list:
    """The temporary files of `path`'s writers (live or dead) now in its directory
    (for tests and tools: e.g. checking that a crashed save left nothing behind)."""
    path = os.path.realpath(os.fspath(path))
    d, base = os.path.split(path)
    pat = _pattern(base)
    try:
        names = os.listdir(d)
    except OSError:
        return []
    return sorted(os.path.join(d, n) for n in names if pat.match(n))


def _pid_alive(pid: int) -> bool:
    if pid == os.getpid() or os.name != "posix":
        # another save of this process (a thread) may be writing it; and on Windows
        # os.kill(pid, 0) would terminate the process, so nothing is cleaned there
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, OSError):
        return True  # exists (another user's), or cannot tell: keep the file
    return True


def _remove_if_abandoned(tmp: str, pid: int) -> None:
    if _pid_alive(pid):
        return
    try:
        fd = os.open(tmp, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return  # gone already (another cleaner), or not ours to open
    try:
        if fcntl is not None:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                return  # a live writer holds it (pid reused, or another pid namespace)
        try:
            os.unlink(tmp)
        except OSError:
            pass
    finally:
        os.close(fd)


def _clean_stale(d: str, base: str) -> None:
    """Remove the temporary files of `base` left by dead writers on this host."""
    pat = _pattern(base)
    host = _host()
    try:
        names = os.listdir(d)
    except OSError:
        return
    for n in names:
        m = pat.match(n)
        if m is not None and m.group(1) == host:
            _remove_if_abandoned(os.path.join(d, n), int(m.group(2)))


@contextlib.contextmanager
def atomic_path(path, *, make_parents: bool = False):
    """Context manager: yields a temporary file name next to `path` (an empty file,
    created with the permissions any new file gets under the umask); when the block
    exits normally that file replaces `path` durably, otherwise it is removed.
    Temporary files of `path` left by killed writers are removed first.

    Args:
        path: the file to write (str or os.PathLike); replaced if it exists; a
            symbolic link is followed (its target is replaced).
        make_parents: create missing parent directories first.
    """
    # realpath: replacing a symlink's target, not the link (and the temporary file
    # lives on the target's file system, so the rename stays atomic)
    path = os.path.realpath(os.fspath(path))
    d, base = os.path.split(path)
    if make_parents:
        os.makedirs(d, exist_ok=True)
    _clean_stale(d, base)
    tmp = os.path.join(d, f".{_stem(base)}.{_TAG}-{_host()}-{os.getpid()}-"
                          f"{uuid.uuid4().hex[:12]}.tmp")
    # O_EXCL reserves the name; mode 0o666 & ~umask, as `open(path, "w")` would give
    # (tempfile.mkstemp's 0o600 would make saved models unreadable to the group)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o666)
    try:
        if fcntl is not None:
            # held until the file is renamed or removed: tells cleaners we are alive
            fcntl.flock(fd, fcntl.LOCK_EX)
        yield tmp
        with open(tmp, "rb+") as f:
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    finally:
        os.close(fd)
    _fsync_dir(d)


def _fsync_dir(d: str) -> None:
    """Make a rename in `d` durable (best effort: not every platform can open a
    directory; the rename is atomic either way)."""
    try:
        fd = os.open(d, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
