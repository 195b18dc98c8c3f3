"""Moving NumPy arrays from worker processes to the parent through shared memory.

A worker writes each large array of a batch into its own file in /dev/shm and
sends a small descriptor (`ShmArray`) through the result queue; the parent maps
the file, unlinks it at once (the mapping stays valid until the last array using
it is freed) and wraps the mapping as an array without copying. Small arrays
travel pickled: a file per array would cost more than the copy.

The space is reserved with ``posix_fallocate`` before writing, so a full /dev/shm
is an ordinary error naming the sizes instead of a SIGBUS that kills the worker.

File names are ``fw_dl_<parent pid>_<loader>_<worker id>_<worker pid>_<n>``. Files
are removed by the parent when it maps them, by the parent at shutdown (all files
of the loader), by a worker whose parent died (`die`), and, for the case where the
parent and its workers were all killed at once, by `sweep_stale` the next time a
loader starts in any process: the files of loaders whose lock file
``fw_dl_<parent pid>_<loader>_lock`` is no longer locked (`hold_lock`).
"""

from __future__ import annotations

import fcntl
import itertools
import mmap
import os
import shutil
import threading

import numpy as np

SHM_DIR = "/dev/shm"
INLINE_BYTES = 64 * 1024  # arrays smaller than this are pickled instead

_counter = itertools.count()
# held while a worker creates a file, and for good by a worker whose parent died,
# so that no file is created after that worker's last cleanup
_create_lock = threading.Lock()


def available() -> bool:
    return os.path.isdir(SHM_DIR) and os.access(SHM_DIR, os.W_OK)


def prefix(parent_pid: int) -> str:
    return f"fw_dl_{parent_pid}_"


class ShmArray:
    """A descriptor of an array stored in a /dev/shm file."""

    __slots__ = ("name", "dtype", "shape", "nbytes")

    def __init__(self, name, dtype, shape, nbytes):
        self.name, self.dtype, self.shape, self.nbytes = name, dtype, shape, nbytes

    def __reduce__(self):
        return (ShmArray, (self.name, self.dtype, self.shape, self.nbytes))


class ShmFull(OSError):
    """/dev/shm has no room for a batch."""


def put_array(a: np.ndarray, parent_pid: int, worker_id: int) -> ShmArray:
    a = np.ascontiguousarray(a)
    with _create_lock:
        return _put_array(a, parent_pid, worker_id)


def _put_array(a, parent_pid, worker_id):
    name = f"{prefix(parent_pid)}{worker_id}_{os.getpid()}_{next(_counter)}"
    path = os.path.join(SHM_DIR, name)
    n = a.nbytes
    fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_RDWR, 0o600)
    try:
        try:
            os.posix_fallocate(fd, 0, max(n, 1))
        except OSError as e:
            free = shutil.disk_usage(SHM_DIR).free
            os.close(fd)
            fd = -1
            os.unlink(path)
            raise ShmFull(e.errno, f"/dev/shm has no room for a {n}-byte array of the batch "
                          f"({free} bytes free)") from None
        mm = mmap.mmap(fd, max(n, 1))
        try:
            dst = np.frombuffer(mm, dtype=np.uint8, count=n)
            dst[:] = a.reshape(-1).view(np.uint8)
            del dst  # the mapping cannot close while an array exports it
        finally:
            mm.close()
    finally:
        if fd >= 0:
            os.close(fd)
    return ShmArray(name, a.dtype, a.shape, n)


def get_array(d: ShmArray) -> np.ndarray:
    path = os.path.join(SHM_DIR, d.name)
    fd = os.open(path, os.O_RDWR)
    try:
        mm = mmap.mmap(fd, max(d.nbytes, 1))
    finally:
        os.close(fd)
        os.unlink(path)
    # the array keeps the mapping alive; it is unmapped when the array is freed
    return np.frombuffer(mm, dtype=d.dtype, count=int(np.prod(d.shape, dtype=np.int64))) \
        .reshape(d.shape)


def pack(data, parent_pid, worker_id):
    """Replace the large arrays of a nested batch by shared-memory descriptors."""
    if isinstance(data, np.ndarray):
        if data.nbytes >= INLINE_BYTES and data.dtype.kind not in "OUS":
            return put_array(data, parent_pid, worker_id)
        return data
    if isinstance(data, dict):
        return {k: pack(v, parent_pid, worker_id) for k, v in data.items()}
    if isinstance(data, tuple):
        return tuple(pack(v, parent_pid, worker_id) for v in data)
    if isinstance(data, list):
        return [pack(v, parent_pid, worker_id) for v in data]
    return data


def unpack(data):
    """The parent side of `pack`."""
    if isinstance(data, ShmArray):
        return get_array(data)
    if isinstance(data, dict):
        return {k: unpack(v) for k, v in data.items()}
    if isinstance(data, tuple):
        return tuple(unpack(v) for v in data)
    if isinstance(data, list):
        return [unpack(v) for v in data]
    return data


def nbytes(data) -> int:
    """Bytes of array data in a (packed or unpacked) nested batch."""
    if isinstance(data, (ShmArray, np.ndarray)):
        return int(data.nbytes)
    if isinstance(data, dict):
        return sum(nbytes(v) for v in data.values())
    if isinstance(data, (list, tuple)):
        return sum(nbytes(v) for v in data)
    return 0


def discard(data):
    """Remove the files of a batch that will never be unpacked."""
    if isinstance(data, ShmArray):
        try:
            os.unlink(os.path.join(SHM_DIR, data.name))
        except OSError:
            pass
    elif isinstance(data, dict):
        for v in data.values():
            discard(v)
    elif isinstance(data, (list, tuple)):
        for v in data:
            discard(v)


def cleanup(parent_pid: int):
    """Remove every file left by the workers of `parent_pid` (after a crash or an
    early shutdown with batches in flight)."""
    try:
        names = os.listdir(SHM_DIR)
    except OSError:
        return
    _unlink_prefixed(names, prefix(parent_pid))


def _unlink_prefixed(names, pre: str) -> None:
    """Unlink the files of /dev/shm among `names` that start with `pre` (one that is
    already gone, or that another process removes first, is no error)."""
    for n in names:
        if n.startswith(pre):
            try:
                os.unlink(os.path.join(SHM_DIR, n))
            except OSError:
                pass


def die(tag):
    """In a worker whose parent is gone: remove the loader's files and exit now."""
    _create_lock.acquire(timeout=10)  # let a file being written finish, then no more
    try:
        cleanup(tag)
    finally:
        os._exit(1)


def hold_lock(tag) -> int:
    """Create and lock this loader's lock file ``fw_dl_<tag>_lock``; the returned
    descriptor holds the lock (forked workers share it) until every process holding
    it has exited or `release_lock` ran. `sweep_stale` only removes the files of
    loaders whose lock is free, which works across PID namespaces sharing /dev/shm
    (PIDs would not: another container's live loader looks dead from here)."""
    final = os.path.join(SHM_DIR, f"{prefix(tag)}lock")
    tmp = os.path.join(SHM_DIR, f"fw_dltmp_{tag}_{os.getpid()}")
    fd = os.open(tmp, os.O_CREAT | os.O_EXCL | os.O_RDWR, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        os.rename(tmp, final)  # the name only ever shows a locked file
    except BaseException:
        os.close(fd)
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    return fd


def release_lock(fd):
    try:
        os.close(fd)
    except OSError:
        pass


_swept = False


def sweep_stale():
    """Remove the files of loaders that are gone with all their workers (e.g. a
    process group killed by SIGKILL at once): those whose lock file is not locked.
    Runs once per process; a loader that is alive holds its lock."""
    global _swept
    if _swept:
        return
    _swept = True
    try:
        names = [n for n in os.listdir(SHM_DIR) if n.startswith("fw_dl_")]
    except OSError:
        return
    for n in names:
        if not n.endswith("_lock"):
            continue
        path = os.path.join(SHM_DIR, n)
        try:
            fd = os.open(path, os.O_RDWR)
        except OSError:
            continue
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                continue  # its loader (or one of its workers) is alive
            _unlink_prefixed(names, n[:-len("lock")])
        finally:
            os.close(fd)
