"""Remote hubconf repositories: ``"owner/repo[:ref]"`` on GitHub or Gitee, fetched as the
forge's zip archive of that ref (Paddle's URLs and cache naming: the repository lands in
``<hub dir>/<owner>_<repo>_<ref>``, a ``/`` in the ref becoming ``_``).

A repository already in the cache is used without any network access (``force_reload``
fetches it again). The archive goes through fw's downloader (mirrors, offline mode,
timeouts) and safe extraction; the extracted tree replaces the cached one atomically.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile

from fw.hub import archive
from fw.hub.cache import hub_dir
from fw.hub.download import fetch

__all__ = ["parse_repo_info", "archive_url", "get_repo_dir"]

_NAME = re.compile(r"^[A-Za-z0-9_.-]+$")
_REF = re.compile(r"^[A-Za-z0-9_.\-/]+$")


def parse_repo_info(repo: str, source: str) -> tuple[str, str, str]:
    """``"owner/repo[:ref]"`` -> ``(owner, repo, ref)``; the default ref is ``main`` on
    GitHub and ``master`` on Gitee (Paddle's defaults)."""
    if not isinstance(repo, str):
        raise TypeError(f"fw.hub: repo_dir must be a str 'owner/repo[:ref]', got "
                        f"{type(repo).__name__}")
    ref = "main" if source == "github" else "master"
    info = repo
    if ":" in repo:
        info, ref = repo.split(":", 1)
    parts = info.split("/")
    if len(parts) != 2 or not all(_NAME.match(p) and p not in (".", "..") for p in parts) \
            or not _REF.match(ref) or ".." in ref.split("/"):
        raise ValueError(f"fw.hub: {repo!r} is not a {source} repository 'owner/repo[:ref]'")
    return parts[0], parts[1], ref


def archive_url(owner: str, repo: str, ref: str, source: str) -> str:
    """The zip archive URL of a ref (Paddle's `_git_archive_link`)."""
    if source == "github":
        return f"https://github.com/{owner}/{repo}/archive/{ref}.zip"
    if source == "gitee":
        return f"https://gitee.com/{owner}/{repo}/repository/archive/{ref}.zip"
    raise ValueError(f"fw.hub: unknown remote source {source!r}")


def get_repo_dir(repo: str, source: str, force_reload: bool = False,
                 progress: bool = True) -> str:
    """The local directory of a remote repository, fetching and extracting its archive
    when it is not cached (or `force_reload`). Does not run anything from it."""
    owner, name, ref = parse_repo_info(repo, source)
    hub = hub_dir()
    repo_dir = os.path.join(hub, "_".join([owner, name, ref.replace("/", "_")]))
    if os.path.isdir(repo_dir) and not force_reload:
        return repo_dir
    os.makedirs(hub, exist_ok=True)
    zip_path = os.path.join(hub, ".archives", f"{owner}_{name}_{ref.replace('/', '_')}.zip")
    fetch(archive_url(owner, name, ref, source), zip_path, force=force_reload,
          progress=progress)
    tmp = tempfile.mkdtemp(prefix=".repo-", dir=hub)
    try:
        tops = archive.extract_all(zip_path, tmp)
        # the archive holds one top folder ("repo-ref"); its contents are the repository
        src = os.path.join(tmp, tops[0]) if len(tops) == 1 and os.path.isdir(
            os.path.join(tmp, tops[0])) else tmp
        old = None
        if os.path.isdir(repo_dir):
            old = repo_dir + ".old-" + os.path.basename(tmp)
            os.replace(repo_dir, old)
        os.replace(src, repo_dir)
        if old:
            shutil.rmtree(old, ignore_errors=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return repo_dir
