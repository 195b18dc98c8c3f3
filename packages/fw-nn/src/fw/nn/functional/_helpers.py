"""Shared argument handling of `fw.nn.functional`: calling ops from the table,
Paddle's ``data_format`` strings, reductions, in-place finishing."""

from __future__ import annotations

from fw.core.dispatch import assign_inplace, invoke
from fw.core.errors import InvalidArgumentError
from fw.core.ops import OPS

__all__ = ["op", "channel_last", "reduce_loss", "inplace", "REDUCTIONS"]

REDUCTIONS = ("none", "mean", "sum")


def op(name, args, **attrs):
    """Invoke op `name` with tensor inputs `args` (aligned with the op's inputs) and
    attributes (defaults filled in from the table)."""
    o = OPS[name]
    at = dict(o.attrs)
    at.update(attrs)
    n = len(o.input_names)
    if len(args) < n:
        args = list(args) + [None] * (n - len(args))
    return invoke(o, args, at)


def channel_last(data_format, allowed, fn):
    """Paddle's ``data_format`` string -> the ops' ``channel_last`` bool."""
    if data_format not in allowed:
        raise InvalidArgumentError(f"{fn}: 'data_format' must be one of {list(allowed)}, got "
                                   f"{data_format!r}")
    return data_format[-1] == "C"


def check_reduction(reduction, fn, allowed=REDUCTIONS):
    if reduction not in allowed:
        raise InvalidArgumentError(f"{fn}: 'reduction' must be one of {list(allowed)}, got "
                                   f"{reduction!r}")


def reduce_loss(loss, reduction, fn="loss"):
    """Apply Paddle's ``reduction`` ('none' | 'mean' | 'sum') to an elementwise loss."""
    check_reduction(reduction, fn)
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    return loss


def inplace(fname, x, out):
    """Write `out` into `x` (the ``name_`` variants)."""
    return assign_inplace(fname, x, out)
