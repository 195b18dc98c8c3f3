"""Atomic file writes: a file is either the previous one or the complete new one.

`atomic_path(path)` hands out a temporary name in the target's own directory
(so the final rename never crosses a file system); the caller writes the whole
file there. On success the data is flushed to disk (fsync), the temporary file
is renamed over `path` (``os.replace``, atomic on POSIX and Windows) and the
directory is fsync'ed so the rename itself survives a crash. On any failure —
including KeyboardInterrupt — the temporary file is removed and `path` is left
as it was.

Used by the model file format (`fw.core.ir.serialize`) and by ``fw.save``
(fw-nn, through `fw.core.internal`).

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
import os
import uuid

__all__ = ["atomic_path"]


@contextlib.contextmanager
def atomic_path(path, *, make_parents: bool = False):
    """Context manager: yields a temporary file name next to `path` (an empty file,
    created with the permissions any new file gets under the umask); when the block
    exits normally that file replaces `path` durably, otherwise it is removed.

    Args:
        path: the file to write (str or os.PathLike); replaced if it exists.
        make_parents: create missing parent directories first.
    """
    path = os.fspath(path)
    d = os.path.dirname(os.path.abspath(path))
    if make_parents:
        os.makedirs(d, exist_ok=True)
    tmp = os.path.join(d, f".{os.path.basename(path)}.{uuid.uuid4().hex[:12]}.tmp")
    # O_EXCL reserves the name; mode 0o666 & ~umask, as `open(path, "w")` would give
    # (tempfile.mkstemp's 0o600 would make saved models unreadable to the group)
    os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
    try:
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
