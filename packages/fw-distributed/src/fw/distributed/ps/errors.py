"""The errors of parameter-server mode. Each subclasses the communication error a
caller of fw.distributed already catches, and the builtin type of its symptom."""
from __future__ import annotations

from fw.distributed.communication.errors import CommError

__all__ = ["PSError", "PSTimeoutError", "PSPeerDiedError", "PSServerError"]


class PSError(CommError):
    """A parameter-server request or the server loop failed."""


class PSTimeoutError(PSError, TimeoutError):
    """A request got no reply within its timeout (``FLAGS_rpc_deadline``)."""


class PSPeerDiedError(PSError, ConnectionError):
    """The peer (a server, or for a server a trainer) died: the launcher reported
    it. ``peer`` is its description ("parameter server 1 (rank 1, host:port)")."""

    def __init__(self, msg, peer=None, how=None):
        super().__init__(msg)
        self.peer = peer
        self.how = how


class PSServerError(PSError):
    """The server refused or failed a request (its message is included)."""
