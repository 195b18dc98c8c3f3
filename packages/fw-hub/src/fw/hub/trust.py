"""Which remote repositories' ``hubconf.py`` may run.

Loading a model from a GitHub/Gitee repository runs its ``hubconf.py``: arbitrary code.
fw runs it only when the user said so, for this call (``trust_repo=True``, which is
also remembered) or before (the repository is listed in ``<hub dir>/trusted_list``,
one ``owner_repo`` per line, the file torch.hub uses for the same purpose). Otherwise
the call fails before anything is downloaded, naming both ways to trust the
repository. fw never prompts: a prompt would hang a job without a terminal.
"""

from __future__ import annotations

import os

from fw.hub.cache import hub_dir
from fw.hub.errors import UntrustedRepoError

__all__ = ["trusted_list_path", "is_trusted", "add_trusted", "check_trust"]


def trusted_list_path() -> str:
    """``<hub dir>/trusted_list``."""
    return os.path.join(hub_dir(), "trusted_list")


def _key(owner: str, repo: str) -> str:
    return f"{owner}_{repo}"


def is_trusted(owner: str, repo: str) -> bool:
    """Whether ``owner/repo`` is in the trusted list."""
    try:
        with open(trusted_list_path(), encoding="utf-8") as f:
            return _key(owner, repo) in {line.strip() for line in f}
    except FileNotFoundError:
        return False


def add_trusted(owner: str, repo: str) -> None:
    """Append ``owner_repo`` to the trusted list (if not there)."""
    if is_trusted(owner, repo):
        return
    os.makedirs(hub_dir(), exist_ok=True)
    with open(trusted_list_path(), "a", encoding="utf-8") as f:
        f.write(_key(owner, repo) + "\n")


def check_trust(owner: str, repo: str, trust_repo, source: str) -> None:
    """Raise `UntrustedRepoError` unless the repository may run code.

    Args:
        owner, repo (str): the repository.
        trust_repo (bool | str | None): True trusts (and remembers); None, False and
            ``"check"`` accept only a remembered entry.
        source (str): ``"github"`` or ``"gitee"`` (for the message).

    Examples:
        .. code-block:: python

            >>> import fw
            >>> import os, tempfile
            >>> from fw.hub.trust import check_trust, is_trusted
            >>> saved_env = dict(os.environ)
            >>> os.environ["FW_HUB_CACHE"] = tempfile.mkdtemp()
            >>> check_trust("owner", "repo", None, "github")  # doctest: +ELLIPSIS
            Traceback (most recent call last):
            ...
            fw.hub.errors.UntrustedRepoError: ... repository owner/repo is not trusted: ...
            >>> check_trust("owner", "repo", True, "github")
            >>> is_trusted("owner", "repo")
            True
            >>> os.environ.clear(); os.environ.update(saved_env)
    """
    if trust_repo is True:
        add_trusted(owner, repo)
        return
    if trust_repo not in (None, False, "check"):
        raise ValueError(f"fw.hub: trust_repo must be True, False, None or 'check', got "
                         f"{trust_repo!r}")
    if is_trusted(owner, repo):
        return
    raise UntrustedRepoError(
        f"fw.hub: {source} repository {owner}/{repo} is not trusted: loading it runs its "
        f"hubconf.py (arbitrary code). If you trust it, pass trust_repo=True (remembered), "
        f"or add the line '{_key(owner, repo)}' to {trusted_list_path()}. Nothing was "
        f"downloaded or run")
