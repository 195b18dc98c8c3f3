"""VJP rules of sorting and selection: the gradient of each selected value goes
back to the position it was taken from (its index)."""

from __future__ import annotations

import fw
from fw.autograd._registry import vjp
from fw.autograd.rules._util import zeros_like


@vjp("sort")
def _sort(ctx, g):
    x = ctx.inputs[0]
    a = ctx.attrs
    if x.ndim == 0:
        return g
    order = fw.argsort(x, axis=a["axis"], descending=a["descending"], stable=a["stable"])
    return fw.put_along_axis(zeros_like(x).astype(g.dtype), order, g, a["axis"])


@vjp("topk", outputs=True)
def _topk(ctx, g):
    x = ctx.inputs[0]
    if x.ndim == 0:
        return g[0]
    idx = ctx.outputs[1]
    return fw.put_along_axis(zeros_like(x).astype(g[0].dtype), idx, g[0], ctx.attrs["axis"],
                             reduce="add")


@vjp("kthvalue", "mode", outputs=True)
def _select_one(ctx, g):
    x = ctx.inputs[0]
    gv = g[0]
    if x.ndim == 0:
        return gv
    idx = ctx.outputs[1]
    axis = ctx.attrs["axis"]
    if not ctx.attrs["keepdim"]:
        idx = fw.unsqueeze(idx, axis)
        gv = fw.unsqueeze(gv, axis)
    return fw.put_along_axis(zeros_like(x).astype(gv.dtype), idx, gv, axis, reduce="add")
