"""What passes may know about constant values: ``full`` results and block-0
constants (never parameters, nor constants the program's state updates write:
their values change between runs)."""

from __future__ import annotations

import numpy as np

from fw.core.ir.core import Operation, Value

__all__ = ["constant_array", "uniform_value"]


def _full_op(v):
    op = v.owner if isinstance(v, Value) else None
    if isinstance(op, Operation) and op.name == "full" and not op.operands:
        return op
    return None


def _captured_array(v, program):
    if not isinstance(v, Value) or v.role != "const" or v.owner is not program.block:
        return None
    ups = getattr(program, "updates", None)
    if ups and v.label in ups.labels:
        return None
    t = program.captured.get(v.label)
    a = getattr(t, "_data", t)
    return a if isinstance(a, np.ndarray) else None


def constant_array(v, program, max_bytes: int):
    """The NumPy value of `v` when it is a constant of at most `max_bytes`, else None."""
    op = _full_op(v)
    if op is not None:
        t = v.type
        if not t.is_static or t.numel() * t.dtype.itemsize > max_bytes:
            return None
        try:
            a = op.opdef.reference(**op.attrs)
        except Exception:  # a malformed full: leave it to the executor to report
            return None
        return a if isinstance(a, np.ndarray) and a.shape == t.shape and \
            a.dtype == t.dtype.np else None
    a = _captured_array(v, program)
    if a is not None and a.nbytes <= max_bytes and a.shape == v.type.shape and \
            a.dtype == v.type.dtype.np:
        return a
    return None


def uniform_value(v, program, max_bytes: int = 1 << 16):
    """The Python scalar every element of constant `v` equals, or None. A ``full``
    gives its fill value; a captured constant is checked element by element."""
    op = _full_op(v)
    if op is not None:
        fv = op.attrs.get("fill_value")
        if not isinstance(fv, (bool, int, float, complex)):
            return None
        try:  # the element as the kernel stores it (1.0000001 in f16 is 1.0)
            return np.full((), fv, dtype=v.type.dtype.np).item()
        except (TypeError, ValueError, OverflowError):
            return None
    a = _captured_array(v, program)
    if a is None or a.size == 0 or a.nbytes > max_bytes:
        return None
    # bit for bit: -0.0 and 0.0 differ, one NaN equals itself
    b = np.ascontiguousarray(a).reshape(-1).view(np.uint8).reshape(a.size, a.dtype.itemsize)
    if not bool((b == b[0]).all()):
        return None
    return a.reshape(-1)[0].item()
