"""fw.hub: list/help/load over sources, an offline-first safe cache, weight converters and
text encoders. See packages/fw-hub/README.md for the design."""

from fw.hub import errors
from fw.hub.download import download_url
from fw.hub.errors import (
    ChecksumError,
    DownloadError,
    LockTimeoutError,
    OfflineError,
    UnsafeArchiveError,
    UnsafeCacheError,
    UntrustedRepoError,
)

__all__ = ["download_url", "errors", "ChecksumError", "DownloadError", "LockTimeoutError",
           "OfflineError", "UnsafeArchiveError", "UnsafeCacheError", "UntrustedRepoError"]
