"""Where fw.hub keeps files, in Hugging Face's cache layout.

fw's own cache is ``FW_HUB_CACHE``, else ``FW_HOME/hub``, else ``~/.cache/fw/hub``.
Inside it (and inside an existing Hugging Face cache: ``HF_HUB_CACHE``, else
``HF_HOME/hub``, else ``~/.cache/huggingface/hub``, which is only ever read) a
repository ``org/name`` lives in ``models--org--name/``:

- ``blobs/<sha256>``: file contents, stored once;
- ``snapshots/<revision>/<path>``: relative symlinks to the blobs (a copy where the
  file system has no symlinks);
- ``refs/<branch>``: the commit a branch name resolved to.

(The layout is huggingface_hub's; only the facts are followed.) A snapshot directory
is used as is when it holds the file asked for: a cached file never touches the
network. Every file taken from a cache is checked to resolve inside that cache: a
symlink pointing elsewhere (``/etc/passwd``, another user's directory) raises
`UnsafeCacheError` instead of being read.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import tempfile

from fw.hub.download import fetch, is_offline
from fw.hub.errors import DownloadError, OfflineError, UnsafeCacheError

__all__ = ["hub_dir", "hf_cache_dir", "repo_folder_name", "cached_file", "hf_hub_download",
           "hf_url", "parse_hf_repo", "check_tree", "check_inside"]

_COMMIT = re.compile(r"^[0-9a-f]{40}$")
_REPO_PART = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


def hub_dir() -> str:
    """fw's hub cache directory: ``FW_HUB_CACHE``, else ``FW_HOME/hub``, else
    ``~/.cache/fw/hub`` (read at each call)."""
    p = os.environ.get("FW_HUB_CACHE")
    if not p:
        home = os.environ.get("FW_HOME")
        p = os.path.join(home, "hub") if home else os.path.join("~", ".cache", "fw", "hub")
    return os.path.abspath(os.path.expanduser(p))


def hf_cache_dir() -> str:
    """The Hugging Face hub cache fw reads (never writes): ``HF_HUB_CACHE``, else
    ``HF_HOME/hub``, else ``~/.cache/huggingface/hub``."""
    p = os.environ.get("HF_HUB_CACHE") or os.environ.get("HUGGINGFACE_HUB_CACHE")
    if not p:
        home = os.environ.get("HF_HOME")
        p = os.path.join(home, "hub") if home else os.path.join("~", ".cache", "huggingface",
                                                                 "hub")
    return os.path.abspath(os.path.expanduser(p))


def parse_hf_repo(spec: str) -> tuple[str, str]:
    """``"org/name[@revision]"`` -> ``(repo_id, revision)`` (revision ``"main"``).

    Examples:
        .. code-block:: python

            >>> import fw
            >>> from fw.hub.cache import parse_hf_repo, repo_folder_name
            >>> parse_hf_repo("sentence-transformers/all-MiniLM-L6-v2@main")
            ('sentence-transformers/all-MiniLM-L6-v2', 'main')
            >>> repo_folder_name("sentence-transformers/all-MiniLM-L6-v2")
            'models--sentence-transformers--all-MiniLM-L6-v2'
    """
    if not isinstance(spec, str):
        raise TypeError(f"fw.hub: a Hugging Face repo is 'org/name[@revision]', got "
                        f"{type(spec).__name__}")
    repo_id, _, rev = spec.partition("@")
    parts = repo_id.split("/")
    if not (1 <= len(parts) <= 2) or not all(_REPO_PART.match(p) and ".." not in p
                                             for p in parts):
        raise ValueError(f"fw.hub: {spec!r} is not a Hugging Face repo id 'org/name[@revision]'")
    rev = rev or "main"
    _check_rel(rev, "revision")
    return repo_id, rev


def repo_folder_name(repo_id: str, repo_type: str = "model") -> str:
    """``"org/name"`` -> ``"models--org--name"`` (the cache folder of a repository)."""
    return f"{repo_type}s--" + "--".join(repo_id.split("/"))


def _check_rel(path: str, what: str) -> None:
    p = path.replace("\\", "/")
    if not p or p.startswith("/") or ".." in p.split("/") or "\x00" in p or ":" in p:
        raise ValueError(f"fw.hub: the {what} {path!r} must be a relative path without '..'")


def _inside(root: str, path: str) -> bool:
    root = os.path.realpath(root)
    real = os.path.realpath(path)
    return real == root or real.startswith(root + os.sep)


def _safe(root: str, path: str) -> str:
    """`path` (in the cache `root`) resolved, after checking it stays inside `root`."""
    real = os.path.realpath(path)
    if not _inside(root, path):
        raise UnsafeCacheError(f"fw.hub: {path} in the cache {root} resolves to {real}, outside "
                               f"the cache (a symlink planted in it?); refusing to read it. "
                               f"Remove the entry to fetch it again")
    return real


def check_inside(path: str, root: str) -> str:
    """Raise `UnsafeCacheError` if `path` (an entry of the cache `root`) resolves outside
    `root` (a planted symlink); return `path`."""
    if os.path.lexists(path):
        _safe(root, path)
    return path


def check_tree(directory: str, root: str) -> str:
    """Check every entry under `directory` resolves inside `root`; return `directory`."""
    _safe(root, directory)
    for dirpath, dirnames, filenames in os.walk(directory):
        for n in dirnames + filenames:
            _safe(root, os.path.join(dirpath, n))
    return directory


def _snapshot_dirs(cache: str, repo_id: str, revision: str) -> list[str]:
    repo = os.path.join(cache, repo_folder_name(repo_id))
    if not os.path.isdir(repo):
        return []
    out = []
    if _COMMIT.match(revision):
        out.append(os.path.join(repo, "snapshots", revision))
    else:
        ref = os.path.join(repo, "refs", revision)
        if os.path.isfile(ref):
            _safe(cache, ref)
            with open(ref, encoding="ascii", errors="replace") as f:
                commit = f.read(100).strip()
            if _COMMIT.match(commit) or _REPO_PART.match(commit):
                out.append(os.path.join(repo, "snapshots", commit))
        # a snapshot placed by hand under the branch name (what OfflineError suggests)
        out.append(os.path.join(repo, "snapshots", revision))
    return out


def cached_file(repo_id: str, filename: str, revision: str = "main", *,
                include_hf_cache: bool = True) -> str | None:
    """The path of `filename` of a repository in fw's cache or the Hugging Face cache, or
    None; never touches the network. Raises `UnsafeCacheError` for an entry resolving
    outside its cache.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> import os, tempfile
            >>> from fw.hub.cache import cached_file
            >>> saved_env = dict(os.environ)
            >>> os.environ["FW_HUB_CACHE"] = tempfile.mkdtemp()
            >>> root = os.environ["FW_HUB_CACHE"]
            >>> snap = os.path.join(root, "models--org--m", "snapshots", "main")
            >>> os.makedirs(snap)
            >>> with open(os.path.join(snap, "config.json"), "w") as f:
            ...     _ = f.write("{}")
            >>> cached_file("org/m", "config.json") == os.path.join(snap, "config.json")
            True
            >>> cached_file("org/m", "model.safetensors") is None
            True
            >>> os.environ.clear(); os.environ.update(saved_env)
    """
    _check_rel(filename, "file name")
    for cache in (hub_dir(), hf_cache_dir()) if include_hf_cache else (hub_dir(),):
        for snap in _snapshot_dirs(cache, repo_id, revision):
            p = os.path.join(snap, *filename.replace("\\", "/").split("/"))
            if os.path.lexists(p):
                real = _safe(cache, p)
                if os.path.isfile(real):
                    return p
    return None


def cached_snapshot(repo_id: str, revision: str = "main", must_have: str = "config.json"):
    """A cached snapshot directory of the repository holding `must_have`, or None."""
    for cache in (hub_dir(), hf_cache_dir()):
        for snap in _snapshot_dirs(cache, repo_id, revision):
            p = os.path.join(snap, must_have)
            if os.path.lexists(p) and os.path.isfile(_safe(cache, p)):
                return check_tree(snap, cache)
    return None


def hf_url(repo_id: str, filename: str, revision: str = "main") -> str:
    """The resolve URL of a file (``HF_ENDPOINT``, default https://huggingface.co).

    Examples:
        .. code-block:: python

            >>> import fw
            >>> import os
            >>> from fw.hub.cache import hf_url
            >>> saved_env = dict(os.environ)
            >>> os.environ["HF_ENDPOINT"] = "https://huggingface.co"
            >>> hf_url("org/name", "config.json")
            'https://huggingface.co/org/name/resolve/main/config.json'
            >>> os.environ.clear(); os.environ.update(saved_env)
    """
    endpoint = os.environ.get("HF_ENDPOINT", "https://huggingface.co").rstrip("/")
    return f"{endpoint}/{repo_id}/resolve/{revision}/{filename}"


def _link(blob: str, dest: str) -> None:
    os.makedirs(os.path.dirname(dest), exist_ok=True)
    tmp = dest + ".tmp-link"
    if os.path.lexists(tmp):
        os.remove(tmp)
    try:
        os.symlink(os.path.relpath(blob, os.path.dirname(dest)), tmp)
    except OSError:  # no symlinks here (some Windows setups): a copy
        shutil.copyfile(blob, tmp)
    os.replace(tmp, dest)


def hf_hub_download(repo_id: str, filename: str, revision: str = "main", *,
                    sha256: str | None = None, progress: bool = True,
                    force_download: bool = False, include_hf_cache: bool = True) -> str:
    """Get one file of a Hugging Face repository: from fw's or the HF cache when there
    (no network), else downloaded from its resolve URL into fw's cache
    (``blobs/<sha256>`` + ``snapshots/<commit>/<file>`` + ``refs/<revision>``).

    Args:
        repo_id (str): ``"org/name"``.
        filename (str): path inside the repository (e.g. ``"config.json"``).
        revision (str, optional): branch, tag or commit. Default ``"main"``.
        sha256 (str, optional): expected sha256, checked on the download.
        progress (bool, optional): tqdm bar on a terminal. Default True.
        force_download (bool, optional): fetch again even if cached. Default False.
        include_hf_cache (bool, optional): also look in the Hugging Face cache. Default
            True.

    Returns:
        str: the local path (inside a snapshot directory).

    Raises:
        fw.hub.errors.OfflineError: offline and not cached (names the URL and where to
            place the file).
        fw.hub.errors.UnsafeCacheError: the cached entry resolves outside its cache.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> import os, tempfile
            >>> saved_env = dict(os.environ)
            >>> from fw.hub.cache import hf_hub_download
            >>> from fw.hub.testing import serve_directory
            >>> src = tempfile.mkdtemp()
            >>> os.makedirs(os.path.join(src, "org", "tiny", "resolve", "main"))
            >>> with open(os.path.join(src, "org", "tiny", "resolve", "main", "config.json"),
            ...           "w") as f:
            ...     _ = f.write('{"hidden_size": 8}')
            >>> with serve_directory(src) as base:
            ...     os.environ["HF_ENDPOINT"] = base
            ...     p = hf_hub_download("org/tiny", "config.json", progress=False)
            >>> os.environ.clear(); os.environ.update(saved_env)
            >>> p.split(os.sep)[-4:-2]
            ['models--org--tiny', 'snapshots']
    """
    _check_rel(filename, "file name")
    if not force_download:
        hit = cached_file(repo_id, filename, revision, include_hf_cache=include_hf_cache)
        if hit is not None:
            return hit
    url = hf_url(repo_id, filename, revision)
    repo = os.path.join(hub_dir(), repo_folder_name(repo_id))
    if is_offline():
        if force_download:
            hit = cached_file(repo_id, filename, revision)
            if hit is not None:
                return hit
        place = os.path.join(repo, "snapshots", revision, *filename.split("/"))
        raise OfflineError(f"fw.hub: offline mode (FW_HUB_OFFLINE/HF_HUB_OFFLINE) and "
                           f"{repo_id}/{filename} at revision {revision} is not in fw's cache "
                           f"({hub_dir()}) nor the Hugging Face cache ({hf_cache_dir()}): fetch "
                           f"{url} on a connected machine and place it at {place}")
    blobs = os.path.join(repo, "blobs")
    os.makedirs(blobs, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".download-", dir=blobs)
    os.close(fd)
    os.remove(tmp)  # fetch creates it atomically
    headers: dict = {}
    try:
        fetch(url, tmp, sha256=sha256, progress=progress, response_headers=headers, lock=False)
        h = hashlib.sha256()
        with open(tmp, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
        blob = os.path.join(blobs, h.hexdigest())
        os.replace(tmp, blob)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)
    commit = headers.get("x-repo-commit", "")
    if not _COMMIT.match(commit):
        commit = revision if _COMMIT.match(revision) else None
    snap_name = commit or revision
    dest = os.path.join(repo, "snapshots", snap_name, *filename.split("/"))
    _link(blob, dest)
    if commit and commit != revision:
        refs = os.path.join(repo, "refs", *revision.split("/"))
        os.makedirs(os.path.dirname(refs), exist_ok=True)
        with open(refs + ".tmp", "w", encoding="ascii") as f:
            f.write(commit)
        os.replace(refs + ".tmp", refs)
    return dest


def try_hf_hub_download(repo_id, filename, revision="main", **kw) -> str | None:
    """`hf_hub_download`, or None when the server answers 404 for the file."""
    try:
        return hf_hub_download(repo_id, filename, revision, **kw)
    except DownloadError as e:
        if "HTTP 404" in str(e):
            return None
        raise
