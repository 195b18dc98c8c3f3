"""Paddle's ``paddle.utils.download`` (what model files call for ``pretrained=True``), on
top of fw.hub's downloader: downloads are atomic, resumable, locked, hash-checked and
offline-first (see `fw.hub.download`), and archives are extracted safely
(`fw.hub.archive`).

Where files go: `get_weights_path_from_url` uses ``<hub dir>/weights``, the hub dir
being ``FW_HUB_CACHE``, else ``FW_HOME/hub``, else ``~/.cache/fw/hub`` (read at each call,
so setting the variable later takes effect).
"""

from __future__ import annotations

import os

from fw.hub import archive as _archive
from fw.hub._lock import FileLock
from fw.hub.cache import check_inside, hub_dir
from fw.hub.download import download_url, fetch, url_file_name

__all__ = ["get_weights_path_from_url", "get_path_from_url", "download_url", "is_url",
           "weights_home", "WEIGHTS_HOME"]  # noqa: F822 - module __getattr__


def __getattr__(name):
    # Paddle exposes WEIGHTS_HOME as a constant; here it follows the environment
    if name == "WEIGHTS_HOME":
        return weights_home()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def is_url(path: str) -> bool:
    """Whether `path` is an http(s) URL (Paddle's ``is_url``).

    Args:
        path (str): a path or URL.

    Returns:
        bool: True for ``http://`` and ``https://`` URLs.

    Examples:
        .. code-block:: python

            >>> from fw.utils.download import is_url
            >>> is_url("https://paddle-hapi.bj.bcebos.com/models/lenet.pdparams"), is_url("a.pd")
            (True, False)
    """
    return isinstance(path, str) and path.startswith(("http://", "https://"))


def weights_home() -> str:
    """The directory `get_weights_path_from_url` stores weights in.

    Returns:
        str: ``<hub dir>/weights`` (see `fw.hub.get_dir`).

    Examples:
        .. code-block:: python

            >>> import os
            >>> saved_env = dict(os.environ)
            >>> from fw.utils.download import weights_home
            >>> os.environ["FW_HUB_CACHE"] = "/data/fw-hub"
            >>> weights_home()
            '/data/fw-hub/weights'
            >>> os.environ.clear(); os.environ.update(saved_env)
    """
    return os.path.join(hub_dir(), "weights")


def get_weights_path_from_url(url: str, md5sum: str | None = None) -> str:
    """Get the local path of a weights file, downloading it into the weights cache first
    if it is not there (a cached file never touches the network).

    Args:
        url (str): download URL (rewritten by ``FW_HUB_MIRRORS``).
        md5sum (str, optional): the file's md5; checked on the cached or downloaded
            file (a mismatch re-downloads; a mismatching download raises
            `fw.hub.errors.ChecksumError` and leaves the cache as it was).

    Returns:
        str: the local path of the weights file.

    Examples:
        .. code-block:: python

            >>> import os, tempfile
            >>> saved_env = dict(os.environ)
            >>> from fw.hub.testing import serve_directory
            >>> from fw.utils.download import get_weights_path_from_url
            >>> src = tempfile.mkdtemp()
            >>> with open(os.path.join(src, "resnet18.pdparams"), "wb") as f:
            ...     _ = f.write(b"not really weights")
            >>> os.environ["FW_HUB_CACHE"] = tempfile.mkdtemp()
            >>> with serve_directory(src) as base:
            ...     paddle_models = "https://paddle-hapi.bj.bcebos.com/models"
            ...     os.environ["FW_HUB_MIRRORS"] = paddle_models + "=" + base
            ...     p = get_weights_path_from_url(
            ...         "https://paddle-hapi.bj.bcebos.com/models/resnet18.pdparams")
            >>> os.path.basename(p)
            'resnet18.pdparams'
            >>> os.environ.clear(); os.environ.update(saved_env)
    """
    home = weights_home()
    # fw's own cache: an entry that is a symlink out of it was planted, not downloaded
    check_inside(os.path.join(home, url_file_name(url)), hub_dir())
    return get_path_from_url(url, home, md5sum)


def _extracted_path(archive_path: str, names: list[str]) -> tuple[str, str]:
    """(directory to extract into, path to return), following Paddle's rules: a lone file
    is returned as itself, a lone top-level directory as that directory, anything else
    is extracted into a directory named after the archive (``x.tar.gz`` -> ``x.tar``, as
    Paddle names it). Paddle derives the lone directory's name from the first member's
    path, which for an archive without directory entries gives a wrong name
    (``a/b.txt`` -> ``b``); fw uses the top-level directory itself."""
    file_dir = os.path.dirname(archive_path)
    norm = [n.replace("\\", "/").strip("/") for n in names if n.strip("/\\")]
    if len(norm) == 1 and "/" not in norm[0]:
        return file_dir, os.path.join(file_dir, norm[0])
    tops = {n.split("/")[0] for n in norm}
    if len(tops) == 1:
        return file_dir, os.path.join(file_dir, tops.pop())
    stem = os.path.splitext(os.path.basename(archive_path))[0]
    return os.path.join(file_dir, stem), os.path.join(file_dir, stem)


def get_path_from_url(url: str, root_dir: str, md5sum: str | None = None,
                      check_exist: bool = True, decompress: bool = True,
                      method: str = "get") -> str:
    """Download `url` into `root_dir` unless it is already there, then (for a zip/tar
    file and ``decompress=True``) extract it safely and return the extracted path.

    Args:
        url (str): download URL (rewritten by ``FW_HUB_MIRRORS``).
        root_dir (str): directory to download into (``WEIGHTS_HOME``/``DATASET_HOME``).
        md5sum (str, optional): the file's md5, checked when given.
        check_exist (bool, optional): reuse a file already in `root_dir` (True) or
            download again and replace it (False). Default True.
        decompress (bool, optional): extract a zip or tar file. Default True.
        method (str, optional): ``"get"`` or ``"wget"``; accepted for Paddle
            compatibility, both use fw's downloader (no subprocess).

    Returns:
        str: the downloaded file, or the extracted file/directory.

    Raises:
        fw.hub.errors.OfflineError: offline mode and the file is not in `root_dir`.
        fw.hub.errors.ChecksumError: the download's md5 differs (cache left intact).
        fw.hub.errors.UnsafeArchiveError: an archive member would escape `root_dir`.

    Examples:
        .. code-block:: python

            >>> import os, tempfile, zipfile
            >>> from fw.hub.testing import serve_directory
            >>> from fw.utils.download import get_path_from_url
            >>> src = tempfile.mkdtemp()
            >>> with zipfile.ZipFile(os.path.join(src, "data.zip"), "w") as z:
            ...     z.writestr("data/train.txt", "1 2 3")
            >>> with serve_directory(src) as base:
            ...     p = get_path_from_url(base + "/data.zip", tempfile.mkdtemp())
            >>> sorted(os.listdir(p))
            ['train.txt']
    """
    if not is_url(url):
        raise ValueError(f"fw.utils.download.get_path_from_url: {url!r} is not an http(s) URL")
    if method not in ("get", "wget"):
        raise ValueError(f"fw.utils.download.get_path_from_url: method must be 'get' or "
                         f"'wget', got {method!r}")
    root_dir = os.fspath(root_dir)
    name = url_file_name(url)
    fullpath = os.path.join(root_dir, name)
    # check_exist=False downloads again; the new file replaces the old only once verified
    fetch(url, fullpath, md5=md5sum, force=not check_exist)
    if decompress and _archive.is_archive(fullpath):
        into, result = _extracted_path(fullpath, _archive.member_names(fullpath))
        # one extractor at a time (another loader of the same archive waits, then finds
        # the result in place)
        with FileLock(os.path.join(root_dir, ".locks", name + ".extract.lock")):
            if check_exist and os.path.exists(result):
                # extraction moves complete top-level entries into place, so one that
                # is there is whole: no work, no network
                return result
            _archive.extract_all(fullpath, into)
        return result
    return fullpath
