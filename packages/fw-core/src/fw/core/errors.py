"""Exception types. They separate what the user did (bad argument, unsupported
dtype) from what fw got wrong (`InternalError`), and every message names the op
or layer, the argument, and the shapes and dtypes involved."""

from __future__ import annotations

__all__ = ["FwError", "InvalidArgumentError", "InvalidTypeError", "UnsupportedError",
           "InternalError", "fmt_type", "fmt_shape", "with_op_name"]


class FwError(Exception):
    """Base of fw's own exceptions."""


class InvalidArgumentError(FwError, ValueError):
    """An argument's value or shape is not acceptable to the op."""


class InvalidTypeError(FwError, TypeError):
    """An argument's dtype or Python type is not acceptable to the op."""


class UnsupportedError(FwError, NotImplementedError):
    """Valid input that fw does not (yet) handle in this mode or on this device."""


class InternalError(FwError, RuntimeError):
    """A bug in fw: please report it with the message."""


def with_op_name(name: str, e: Exception) -> Exception:
    """`e` as an fw error whose message starts with the op (or layer) name."""
    msg = str(e)
    if isinstance(e, FwError):
        return e if msg.startswith(name + ":") else type(e)(f"{name}: {msg}")
    if isinstance(e, TypeError):
        return InvalidTypeError(f"{name}: {msg}")
    return InvalidArgumentError(f"{name}: {msg}")


def fmt_shape(shape) -> str:
    return "[" + ", ".join(str(int(d)) for d in shape) + "]"


def fmt_type(shape, dtype) -> str:
    name = getattr(dtype, "name", str(dtype))
    return f"{fmt_shape(shape)} {name}"
