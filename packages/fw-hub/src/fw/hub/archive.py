"""Safe extraction of zip and tar(.gz/.bz2/.xz) archives.

Every member is checked before anything is written: absolute names (``/x``, ``C:x``,
``\\\\server``), ``..`` components, links (symbolic or hard) whose target lands outside
the extraction directory, and device/FIFO members are refused with `UnsafeArchiveError`
naming the member, and nothing is extracted. The archive is then unpacked into a
temporary directory beside the destination (tar with Python's ``"data"`` filter as a
second line of defence) and moved into place, so an interrupted extraction never leaves
a half-filled directory under the final name.
"""

from __future__ import annotations

import os
import posixpath
import shutil
import stat
import tarfile
import tempfile
import zipfile

from fw.hub.errors import UnsafeArchiveError

__all__ = ["is_archive", "member_names", "check_members", "extract_all"]


def is_archive(path) -> bool:
    """True for a zip or tar file (by content, not by name)."""
    path = os.fspath(path)
    if not os.path.isfile(path):
        return False
    return zipfile.is_zipfile(path) or tarfile.is_tarfile(path)


def _bad(archive, name, why):
    return UnsafeArchiveError(f"fw.hub: refusing to extract {archive}: member {name!r} "
                              f"{why}; nothing was extracted")


def _check_name(archive, name):
    if not name or "\x00" in name:
        raise _bad(archive, name, "has an empty or NUL-containing name")
    n = name.replace("\\", "/")
    if n.startswith("/") or (len(n) > 1 and n[1] == ":"):
        raise _bad(archive, name, "has an absolute path")
    if ".." in n.split("/"):
        raise _bad(archive, name, "contains '..' (path traversal)")


def _check_link(archive, name, target, hard):
    """A link's target must resolve (lexically, without '..' escaping) inside the root."""
    t = target.replace("\\", "/")
    if not t or t.startswith("/") or (len(t) > 1 and t[1] == ":"):
        raise _bad(archive, name, f"is a link to the absolute path {target!r}")
    base = "" if hard else posixpath.dirname(name.replace("\\", "/"))
    joined = posixpath.normpath(posixpath.join(base, t))
    if joined == ".." or joined.startswith("../"):
        raise _bad(archive, name, f"is a link pointing outside the archive ({target!r})")


def member_names(path) -> list[str]:
    """Names of an archive's members (no extraction).

    Examples:
        .. code-block:: python

            >>> import fw
            >>> import os, tempfile, zipfile
            >>> from fw.hub.archive import member_names, is_archive
            >>> p = os.path.join(tempfile.mkdtemp(), "a.zip")
            >>> with zipfile.ZipFile(p, "w") as z:
            ...     z.writestr("d/x.txt", "x")
            >>> is_archive(p), member_names(p)
            (True, ['d/x.txt'])
    """
    path = os.fspath(path)
    if zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as z:
            return z.namelist()
    with tarfile.open(path, "r:*") as t:
        return t.getnames()


def _zip_link_target(z, info) -> str | None:
    if stat.S_ISLNK(info.external_attr >> 16):
        return z.read(info).decode("utf-8", "surrogateescape")
    return None


def check_members(path) -> None:
    """Raise `UnsafeArchiveError` if any member of the archive is unsafe (see module doc).

    Examples:
        .. code-block:: python

            >>> import fw
            >>> import os, tempfile, zipfile
            >>> from fw.hub.archive import check_members
            >>> p = os.path.join(tempfile.mkdtemp(), "bad.zip")
            >>> with zipfile.ZipFile(p, "w") as z:
            ...     z.writestr("../evil.py", "x")
            >>> check_members(p)  # doctest: +ELLIPSIS
            Traceback (most recent call last):
            ...
            fw.hub.errors.UnsafeArchiveError: ... member '../evil.py' contains '..' ...
    """
    path = os.fspath(path)
    if zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as z:
            for info in z.infolist():
                _check_name(path, info.filename)
                mode = info.external_attr >> 16
                if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) or stat.S_ISFIFO(mode):
                    raise _bad(path, info.filename, "is a device or FIFO")
                target = _zip_link_target(z, info)
                if target is not None:
                    _check_link(path, info.filename, target, hard=False)
        return
    with tarfile.open(path, "r:*") as t:
        for m in t.getmembers():
            _check_name(path, m.name)
            if m.issym() or m.islnk():
                _check_link(path, m.name, m.linkname, hard=m.islnk())
            elif not (m.isfile() or m.isdir()):
                raise _bad(path, m.name, "is a device, FIFO or other special file")


def _extract_zip(path, dest):
    links = []
    with zipfile.ZipFile(path) as z:
        for info in z.infolist():
            target = _zip_link_target(z, info)
            if target is not None:
                links.append((info.filename, target))
            else:
                z.extract(info, dest)
    # links last, each checked where it really resolves (a chain of links could
    # otherwise step out), so no file is ever written through one
    root = os.path.realpath(dest)
    for name, target in links:
        where = os.path.join(dest, *name.replace("\\", "/").split("/"))
        os.makedirs(os.path.dirname(where), exist_ok=True)
        os.symlink(target, where)
        real = os.path.realpath(where)
        if real != root and not real.startswith(root + os.sep):
            raise _bad(path, name, f"is a link resolving outside the archive ({target!r})")


def extract_all(path, dest_dir) -> list[str]:
    """Extract the archive at `path` into `dest_dir` after `check_members`.

    Top-level entries already in `dest_dir` with the same names are replaced.

    Args:
        path (str): a zip or tar(.gz/.bz2/.xz) file.
        dest_dir (str): directory to extract into (created if missing).

    Returns:
        list[str]: the top-level names extracted.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> import os, tempfile, zipfile
            >>> from fw.hub.archive import extract_all
            >>> d = tempfile.mkdtemp()
            >>> with zipfile.ZipFile(os.path.join(d, "a.zip"), "w") as z:
            ...     z.writestr("pkg/x.txt", "x")
            >>> extract_all(os.path.join(d, "a.zip"), os.path.join(d, "out"))
            ['pkg']
    """
    path, dest_dir = os.fspath(path), os.fspath(dest_dir)
    if not is_archive(path):
        raise ValueError(f"fw.hub: {path} is not a zip or tar archive")
    check_members(path)
    os.makedirs(dest_dir, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix=".extract-", dir=dest_dir)
    try:
        if zipfile.is_zipfile(path):
            _extract_zip(path, tmp)
        else:
            with tarfile.open(path, "r:*") as t:
                try:
                    t.extractall(tmp, filter="data")
                except tarfile.FilterError as e:
                    raise _bad(path, getattr(getattr(e, "tarinfo", None), "name", "?"),
                               f"was refused by the tar data filter ({e})") from None
        tops = sorted(os.listdir(tmp))
        for name in tops:
            final = os.path.join(dest_dir, name)
            if os.path.lexists(final):
                if os.path.isdir(final) and not os.path.islink(final):
                    shutil.rmtree(final)
                else:
                    os.remove(final)
            os.replace(os.path.join(tmp, name), final)
        return tops
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
