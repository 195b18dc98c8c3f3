"""The errors fw.hub raises. Each is an `fw.core.errors.FwError` and also the builtin
exception a caller would catch for it (ValueError, OSError, TimeoutError, ...), so
code written for Paddle's or torch's hub keeps working."""

from __future__ import annotations

from fw.core.errors import FwError, InvalidArgumentError

__all__ = ["HubError", "OfflineError", "ChecksumError", "DownloadError", "UnsafeArchiveError",
           "UnsafeCacheError", "UntrustedRepoError", "LockTimeoutError", "LayoutError"]


class HubError(FwError):
    """Base of fw.hub's errors."""


class OfflineError(HubError, OSError):
    """A cache miss while offline (``FW_HUB_OFFLINE=1`` or ``HF_HUB_OFFLINE=1``); the message
    names the URL and the path to place the file at.

    Also a builtin ``OSError``, so code written for Paddle's or torch's hub that catches
    that keeps working.

    Args:
        *args: the message (as for any exception).

    Examples:
        >>> import fw
        >>> import fw.hub
        >>> issubclass(fw.hub.OfflineError, OSError)
        True
        >>> try:
        ...     raise fw.hub.OfflineError("example")
        ... except OSError as e:
        ...     print(type(e).__name__, e)
        OfflineError example
    """


class DownloadError(HubError, OSError):
    """The server could not be reached, answered with an error, or the body was cut short.

    Also a builtin ``OSError``, so code written for Paddle's or torch's hub that catches
    that keeps working.

    Args:
        *args: the message (as for any exception).

    Examples:
        >>> import fw
        >>> import fw.hub
        >>> issubclass(fw.hub.DownloadError, OSError)
        True
        >>> try:
        ...     raise fw.hub.DownloadError("example")
        ... except OSError as e:
        ...     print(type(e).__name__, e)
        DownloadError example
    """


class ChecksumError(HubError, InvalidArgumentError):
    """A downloaded or cached file's sha256/md5 differs from the expected one (the message
    gives both); the partial download was deleted and the cache left as it was.

    Also a builtin ``ValueError``, so code written for Paddle's or torch's hub that catches
    that keeps working.

    Args:
        *args: the message (as for any exception).

    Examples:
        >>> import fw
        >>> import fw.hub
        >>> issubclass(fw.hub.ChecksumError, ValueError)
        True
        >>> try:
        ...     raise fw.hub.ChecksumError("example")
        ... except ValueError as e:
        ...     print(type(e).__name__, e)
        ChecksumError example
    """


class UnsafeArchiveError(HubError, InvalidArgumentError):
    """An archive member that would land outside the extraction directory (absolute path,
    ``..``, a link pointing outside) or is a device/FIFO; nothing was extracted.

    Also a builtin ``ValueError``, so code written for Paddle's or torch's hub that catches
    that keeps working.

    Args:
        *args: the message (as for any exception).

    Examples:
        >>> import fw
        >>> import fw.hub
        >>> issubclass(fw.hub.UnsafeArchiveError, ValueError)
        True
        >>> try:
        ...     raise fw.hub.UnsafeArchiveError("example")
        ... except ValueError as e:
        ...     print(type(e).__name__, e)
        UnsafeArchiveError example
    """


class UnsafeCacheError(HubError, InvalidArgumentError):
    """A cache entry that is a symlink pointing outside its cache directory.

    Also a builtin ``ValueError``, so code written for Paddle's or torch's hub that catches
    that keeps working.

    Args:
        *args: the message (as for any exception).

    Examples:
        >>> import fw
        >>> import fw.hub
        >>> issubclass(fw.hub.UnsafeCacheError, ValueError)
        True
        >>> try:
        ...     raise fw.hub.UnsafeCacheError("example")
        ... except ValueError as e:
        ...     print(type(e).__name__, e)
        UnsafeCacheError example
    """


class UntrustedRepoError(HubError, PermissionError):
    """A remote repository's hubconf.py would have to run without the user's trust.

    Also a builtin ``PermissionError``, so code written for Paddle's or torch's hub that catches
    that keeps working.

    Args:
        *args: the message (as for any exception).

    Examples:
        >>> import fw
        >>> import fw.hub
        >>> issubclass(fw.hub.UntrustedRepoError, PermissionError)
        True
        >>> try:
        ...     raise fw.hub.UntrustedRepoError("example")
        ... except PermissionError as e:
        ...     print(type(e).__name__, e)
        UntrustedRepoError example
    """


class LockTimeoutError(HubError, TimeoutError):
    """Another process held a download lock longer than the timeout (its pid is named).

    Also a builtin ``TimeoutError``, so code written for Paddle's or torch's hub that catches
    that keeps working.

    Args:
        *args: the message (as for any exception).

    Examples:
        >>> import fw
        >>> import fw.hub
        >>> issubclass(fw.hub.LockTimeoutError, TimeoutError)
        True
        >>> try:
        ...     raise fw.hub.LockTimeoutError("example")
        ... except TimeoutError as e:
        ...     print(type(e).__name__, e)
        LockTimeoutError example
    """



class LayoutError(HubError, InvalidArgumentError):
    """Weights whose layout does not fit, or could silently not fit, the model: a
    PyTorch state dict with square Linear weights loaded without conversion, or a
    converted state dict with missing/unexpected/mis-shaped entries."""
