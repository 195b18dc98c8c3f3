"""Normalising op arguments that Paddle lets users spell many ways.

Paddle accepts an axis as an int or a 1-element tensor, a list of axes as a
list, tuple or 1-D tensor (possibly holding 0-D tensors), and so on. `canon`
functions turn those spellings into the Python ints and tuples that op
attributes must be. Tensor values are read eagerly; while a program is being
built they cannot be read, and a clear `UnsupportedError` says so.
"""

from __future__ import annotations

import operator

import numpy as np

from fw.core import dtypes as _dt
from fw.core.errors import InvalidArgumentError, InvalidTypeError, UnsupportedError
from fw.core.ir.core import Value
from fw.core.tensor import Tensor

__all__ = ["as_int", "as_ints", "as_axes", "is_symbolic", "scalar_value"]


def is_symbolic(v) -> bool:
    return type(v) is Value


def _symbolic(op, arg):
    return UnsupportedError(
        f"{op}: '{arg}' is a symbolic tensor; while a program is being built '{arg}' must be "
        f"given as Python ints")


def as_int(v, op: str, arg: str) -> int:
    """An int from an int, a NumPy integer or a one-element integer tensor."""
    if type(v) is int:
        return v
    if isinstance(v, Tensor):
        if v.size != 1:
            raise InvalidArgumentError(f"{op}: '{arg}' given as a tensor must hold one integer, "
                                       f"got shape {v.shape}")
        if v.dtype.kind not in (_dt._INT, _dt._BOOL):
            raise InvalidTypeError(f"{op}: '{arg}' must be an integer, got a {v.dtype.name} "
                                   f"tensor")
        return int(v.item())
    if type(v) is Value:
        raise _symbolic(op, arg)
    if isinstance(v, np.ndarray) and v.size == 1 and v.dtype.kind in "iub":
        return int(v.reshape(()))
    try:
        return operator.index(v)
    except TypeError:
        raise InvalidTypeError(f"{op}: '{arg}' must be an integer, got {type(v).__name__} "
                               f"{v!r}") from None


def as_ints(v, op: str, arg: str) -> tuple:
    """A tuple of ints from an int, a sequence (items may be 0-D tensors) or a
    1-D integer tensor."""
    if isinstance(v, Tensor):
        if v.ndim > 1 or v.dtype.kind not in (_dt._INT, _dt._BOOL):
            raise InvalidTypeError(f"{op}: '{arg}' given as a tensor must be a 1-D integer "
                                   f"tensor, got {v.dtype.name}{v.shape}")
        return tuple(int(i) for i in v.numpy().reshape(-1).tolist())
    if type(v) is Value:
        raise _symbolic(op, arg)
    if isinstance(v, np.ndarray):
        return tuple(int(i) for i in v.reshape(-1).tolist())
    if isinstance(v, (list, tuple)):
        return tuple(as_int(i, op, arg) for i in v)
    return (as_int(v, op, arg),)


def as_axes(v, op: str, arg: str = "axis"):
    """None, or a tuple of ints (an int gives a 1-tuple)."""
    if v is None:
        return None
    return as_ints(v, op, arg)


def scalar_value(v, op: str, arg: str):
    """A Python number from a number, a NumPy scalar or a one-element tensor."""
    if isinstance(v, (bool, int, float, complex)):
        return v
    if isinstance(v, np.generic):
        return v.item()
    if isinstance(v, Tensor):
        if v.size != 1:
            raise InvalidArgumentError(f"{op}: '{arg}' must be a number or a tensor with one "
                                       f"element, got shape {v.shape}")
        return v.item()
    if type(v) is Value:
        raise _symbolic(op, arg)
    raise InvalidTypeError(f"{op}: '{arg}' must be a number, got {type(v).__name__}")
