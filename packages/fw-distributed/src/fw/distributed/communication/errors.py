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
    """A collective or point-to-point operation failed."""


class CollectiveTimeoutError(CommError, TimeoutError):
    """A collective or p2p op did not complete within its timeout (or a peer died).

    Attributes: ``missing`` (global ranks that did not arrive, as far as the
    store's progress records tell), ``dead`` ({rank: how it died} from the
    launcher), ``dump_path`` (this rank's flight-recorder dump, or None)."""

    def __init__(self, msg, missing=(), dead=None, dump_path=None):
        super().__init__(msg)
        self.missing = list(missing)
        self.dead = dict(dead or {})
        self.dump_path = dump_path


class CollectiveDesyncError(CommError):
    """Ranks of one group entered different collectives (op, dtype, shape or root)
    at the same sequence number."""


class CommunicatorBrokenError(CommError):
    """A previous timeout or desync left the MPI state unusable; the job must restart."""
