"""Shape helpers shared by the eager engine, the static backward and the VJP rules.

A leaf of fw-autograd (it imports no other fw-autograd module), so the engine
(`_engine`), the static backward (`static`) and the rules' helpers
(`rules._util`) can all use it without importing each other. Built from fw ops:
they work on Tensors and IR Values alike.
"""

from __future__ import annotations

import fw
from fw.core.errors import InternalError

__all__ = ["reshape_to", "unbroadcast"]


def reshape_to(t, shape):
    """fw.reshape without Paddle's "0 copies the input dim" reading: a target
    shape with a zero-size dim gets an (empty) zeros tensor of that shape."""
    shape = list(shape)
    if 0 in shape:
        return fw.zeros([0 if d == -1 else d for d in shape], dtype=t.dtype)
    return fw.reshape(t, shape)


def unbroadcast(g, shape, opname="op"):
    """Sum `g` down to `shape` (the inverse of broadcasting `shape` to g's shape)."""
    gs = tuple(g.shape)
    shape = tuple(shape)
    lead = len(gs) - len(shape)
    if lead < 0:
        raise InternalError(f"the VJP rule of '{opname}' returned a gradient of shape "
                            f"{list(gs)} for an input of shape {list(shape)}")
    axes = list(range(lead))
    for i, d in enumerate(shape):
        gd = gs[lead + i]
        if d == 1 and gd != 1:
            axes.append(lead + i)
        elif d != gd:
            raise InternalError(f"the VJP rule of '{opname}' returned a gradient of shape "
                                f"{list(gs)} for an input of shape {list(shape)}")
    if axes:
        g = fw.sum(g, axis=axes, keepdim=False)
    if tuple(g.shape) != shape:
        g = reshape_to(g, list(shape))
    return g
