"""The exceptions of fw.jit.

`ConversionError` is what a user sees when a function cannot become a static
program: the message names the construct, the user's ``file:line`` (and quotes
that line), and says what to write instead. It subclasses fw's
`UnsupportedError` (itself a `NotImplementedError`), so code catching
"unsupported here" catches it.
"""

from __future__ import annotations

import linecache

from fw.core.errors import UnsupportedError

__all__ = ["ConversionError", "format_location"]


def format_location(filename, lineno) -> str:
    """``file:line`` followed by the quoted source line when it is available."""
    if filename is None:
        return "<unknown location>"
    where = f"{filename}:{lineno}"
    text = linecache.getline(filename, lineno).strip() if lineno else ""
    return f"{where}\n    {text}" if text else where


class ConversionError(UnsupportedError):
    """A construct of the user's function that fw.jit cannot convert or trace.

    Attributes: ``construct`` (what was found, e.g. ``".numpy()"``), ``filename``
    and ``lineno`` (where, in the user's code; None when unknown), ``hint``.

    Examples:
        >>> import fw
        >>> def f(x):
        ...     return float(x.numpy()[0]) + x
        >>> g = fw.jit.to_static(f, full_graph=True)
        >>> try:
        ...     g(fw.ones([1]))
        ... except fw.jit.ConversionError as e:
        ...     print(e.construct)
        numpy
    """

    def __init__(self, message: str, filename=None, lineno=None, construct=None, hint=None):
        self.construct = construct
        self.filename = filename
        self.lineno = lineno
        self.hint = hint
        self.message = message
        text = message
        if filename is not None and f"{filename}:{lineno}" not in message:
            text = f"{message}\n  at {format_location(filename, lineno)}"
        if hint:
            text += f"\n  {hint}"
        super().__init__(text)

    def __reduce__(self):
        return (type(self), (self.message, self.filename, self.lineno, self.construct,
                             self.hint))
