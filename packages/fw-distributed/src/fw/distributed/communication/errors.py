"""The errors of fw.distributed's collectives.

Two kinds of failure must never look like a hang: a peer that does not arrive
(`CollectiveTimeoutError`, also raised when the launcher reports a dead rank) and
peers that call different collectives or shapes (`CollectiveDesyncError`). Both
subclass the builtin type a caller would catch for the same symptom.
"""
from __future__ import annotations

__all__ = ["CommError", "CollectiveTimeoutError", "CollectiveDesyncError",
           "CommunicatorBrokenError"]


class CommError(RuntimeError):
    """A collective or point-to-point operation failed: the base of fw.distributed's
    communication errors (a ``RuntimeError``).

    Args:
        msg (str): the message.

    Examples:
        >>> import fw
        >>> import fw.distributed as dist
        >>> issubclass(dist.CommError, RuntimeError)
        True
        >>> try:
        ...     raise dist.CommError("example")
        ... except dist.CommError as e:
        ...     print(type(e).__name__, e)
        CommError example
    """


class CollectiveTimeoutError(CommError, TimeoutError):
    """A collective or p2p op did not complete within its timeout (or a peer died).

    Also a ``TimeoutError``. Attributes: ``missing`` (global ranks that did not arrive,
    as far as the store's progress records tell), ``dead`` ({rank: how it died} from the
    launcher), ``dump_path`` (this rank's flight-recorder dump, or None).

    Args:
        msg (str): the message.
        missing (Sequence[int], optional): ranks that did not arrive. Default: ().
        dead (dict, optional): {rank: how it died}. Default: None.
        dump_path (str, optional): the flight-recorder dump. Default: None.

    Examples:
        >>> import fw
        >>> import fw.distributed as dist
        >>> issubclass(dist.CollectiveTimeoutError, TimeoutError)
        True
        >>> try:
        ...     raise dist.CollectiveTimeoutError("example")
        ... except dist.CommError as e:
        ...     print(type(e).__name__, e)
        CollectiveTimeoutError example
    """

    def __init__(self, msg, missing=(), dead=None, dump_path=None):
        super().__init__(msg)
        self.missing = list(missing)
        self.dead = dict(dead or {})
        self.dump_path = dump_path


class CollectiveDesyncError(CommError):
    """Ranks of one group entered different collectives (op, dtype, shape or root) at
    the same sequence number; the message shows each rank's call.

    Args:
        msg (str): the message.

    Examples:
        >>> import fw
        >>> import fw.distributed as dist
        >>> issubclass(dist.CollectiveDesyncError, dist.CommError)
        True
        >>> try:
        ...     raise dist.CollectiveDesyncError("example")
        ... except dist.CommError as e:
        ...     print(type(e).__name__, e)
        CollectiveDesyncError example
    """


class CommunicatorBrokenError(CommError):
    """A previous timeout or desync left the communication state unusable; the job must
    restart.

    Args:
        msg (str): the message.

    Examples:
        >>> import fw
        >>> import fw.distributed as dist
        >>> issubclass(dist.CommunicatorBrokenError, dist.CommError)
        True
        >>> try:
        ...     raise dist.CommunicatorBrokenError("example")
        ... except dist.CommError as e:
        ...     print(type(e).__name__, e)
        CommunicatorBrokenError example
    """
