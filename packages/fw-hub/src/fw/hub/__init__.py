"""fw.hub: list/help/load over sources, an offline-first safe cache, weight converters and
text encoders. See packages/fw-hub/README.md for the design."""

from fw.hub import convert, errors
from fw.hub.api import (
    ZooList,
    get_dir,
    help,
    hf_snapshot,
    list,
    load,
    load_state_dict,
    load_state_dict_from_url,
    read_state_dict,
)
from fw.hub.download import download_url
from fw.hub.errors import (
    ChecksumError,
    DownloadError,
    LayoutError,
    LockTimeoutError,
    OfflineError,
    UnsafeArchiveError,
    UnsafeCacheError,
    UntrustedRepoError,
)

__all__ = ["list", "help", "load", "load_state_dict_from_url", "load_state_dict",
           "read_state_dict", "hf_snapshot", "get_dir", "download_url", "convert", "errors",
           "ZooList", "ChecksumError", "DownloadError", "LayoutError", "LockTimeoutError",
           "OfflineError", "UnsafeArchiveError", "UnsafeCacheError", "UntrustedRepoError"]
