"""`ExportError`: a program that cannot be written as ONNX.

It is an `UnsupportedError` (valid fw code that this exporter does not handle),
never a framework bug: the message lists every op of the program that has no
lowering (or an attribute value ONNX cannot express), each with the user's
source line recorded when the program was traced.
"""

from __future__ import annotations

import linecache

from fw.core.errors import UnsupportedError

__all__ = ["ExportError", "where"]


class ExportError(UnsupportedError):
    """Raised when a program holds ops (or attribute values) with no ONNX lowering.

    Args:
        message (str): the error text (lists every problem).
        problems (Sequence[tuple], optional): ``(op name, "file:line" or None, reason)``
            for each problem, kept as ``.problems``. Default: ().

    Examples:
        >>> import fw
        >>> import fw.onnx
        >>> err = fw.onnx.ExportError("no lowering", [("my_op", "a.py:3", "no lowering")])
        >>> err.problems[0][0]
        'my_op'
    """

    def __init__(self, message: str, problems=()):
        super().__init__(message)
        self.problems = list(problems)


def where(op) -> str | None:
    """``file:line: source text`` of the user code that emitted `op`, if recorded."""
    loc = getattr(op, "loc", None)
    if not loc:
        return None
    fn, line = loc
    text = linecache.getline(fn, line).strip()
    return f"{fn}:{line}" + (f": {text}" if text else "")
