"""`RequestError`: a request the server answers with an HTTP error status.

Raised anywhere between reading the body and encoding the answer; the app turns
it into ``{"error": message}`` with its status. Everything else that escapes a
handler is a server fault (500) — the message still goes to the client, and the
process stays up.
"""

from __future__ import annotations

__all__ = ["RequestError"]


class RequestError(Exception):
    """An error the client is told about: `status` (400, 404, 413, 500, 503, 504, …)
    and a message that names the model and input involved, expected vs got."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = int(status)
        self.message = message

    def __repr__(self) -> str:
        return f"RequestError({self.status}, {self.message!r})"
