"""Where fw.hub keeps files, in Hugging Face's cache layout.

fw's own cache is ``FW_HUB_CACHE``, else ``FW_HOME/hub``, else ``~/.cache/fw/hub``.
Inside it (and inside an existing Hugging Face cache, which is reused read-only) a
repository ``org/name`` of kind ``model`` lives in ``models--org--name/``:

- ``blobs/<sha256 or etag>``: file contents, stored once;
- ``snapshots/<revision>/<path>``: relative symlinks to blobs (copies where the file
  system has no symlinks);
- ``refs/<branch>``: the commit hash a branch name resolved to.

(The layout is huggingface_hub's, ``file_download.py``; only the facts are followed.)
"""

from __future__ import annotations

import os

__all__ = ["hub_dir"]


def hub_dir() -> str:
    """fw's hub cache directory: ``FW_HUB_CACHE``, else ``FW_HOME/hub``, else
    ``~/.cache/fw/hub`` (read at each call)."""
    p = os.environ.get("FW_HUB_CACHE")
    if not p:
        home = os.environ.get("FW_HOME")
        p = os.path.join(home, "hub") if home else os.path.join("~", ".cache", "fw", "hub")
    return os.path.abspath(os.path.expanduser(p))
