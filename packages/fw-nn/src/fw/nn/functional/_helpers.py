"""Shared argument handling of `fw.nn.functional`: calling ops from the table,
Paddle's ``data_format`` strings, reductions, in-place finishing."""

from __future__ import annotations

from fw.core.dispatch import assign_inplace, invoke
from fw.core.errors import InvalidArgumentError
from fw.core.internal import amp_state
from fw.core.ops import OPS

__all__ = ["op", "channel_last", "reduce_loss", "inplace", "REDUCTIONS", "check_param_dtype"]

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


_LOW = ("float16", "bfloat16")


def check_param_dtype(fn, x, param, pname="weight", low_x_ok=False):
    """Raise when x's dtype differs from the layer parameter's, as Paddle 3.3 and PyTorch do
    for linear, conv and the norms (fw would otherwise promote and silently compute in the
    wider dtype). Under ``auto_cast`` the op casts its inputs itself, so no check there.
    ``low_x_ok``: the norms take float16/bfloat16 x with float32 parameters (Paddle's
    mixed-precision norm kernels do)."""
    if param is None or amp_state.enabled:
        return
    xd, pd = x.dtype, param.dtype
    if xd != pd and not (low_x_ok and str(xd).split(".")[-1] in _LOW
                         and str(pd).endswith("float32")):
        raise InvalidArgumentError(
            f"{fn}: x has dtype {xd} but {pname} has dtype {pd} (x shape {list(x.shape)}, "
            f"{pname} shape {list(param.shape)}); they must match: cast x with "
            f"x.astype({str(pd).split('.')[-1]!r}) or the layer with "
            f"layer.to(dtype={str(xd).split('.')[-1]!r})")
