"""Reductions (``fw.core.ops.reduce``). fw's ``axis`` is None (all axes), an int or a
tuple; ONNX's Reduce* nodes take a list of axes (`Context.reduce` picks the
attribute or input form the opset wants)."""

from __future__ import annotations

import numpy as np

from fw.onnx.lowering._registry import lowers

_REDUCE = {"sum": "ReduceSum", "mean": "ReduceMean", "max": "ReduceMax", "amax": "ReduceMax",
           "min": "ReduceMin", "amin": "ReduceMin", "prod": "ReduceProd",
           "logsumexp": "ReduceLogSumExp"}


def axes_of(op, rank: int):
    """The reduced axes as a list, or None for all of them."""
    ax = op.attrs.get("axis")
    if ax is None or rank == 0:
        return None
    if isinstance(ax, int):
        ax = [ax]
    return [a + rank if a < 0 else a for a in ax]


@lowers(*_REDUCE)
def _reduce(op, ctx):
    x, xv = ctx.input(0), op.operands[0]
    out_dt = op.results[0].type.dtype
    if out_dt is not xv.type.dtype:  # sum/prod with dtype=..., or of bool/int8 to int64
        x = ctx.cast(x, out_dt)
    rank = xv.type.ndim
    if rank == 0:
        return ctx.node("Identity", [x])
    return ctx.reduce(_REDUCE[op.name], x, axes_of(op, rank), op.attrs.get("keepdim", False))


@lowers("all", "any")
def _all_any(op, ctx):
    # no boolean Reduce* before opset 20: min/max over 0/1 integers
    x, rank = ctx.input(0), op.operands[0].type.ndim
    if op.operands[0].type.dtype.name != "bool":
        x = ctx.node("Not", [ctx.node("Equal", [x, ctx.scalar(0, op.operands[0].type.dtype)])])
    if rank == 0:
        return ctx.node("Identity", [x])
    i = ctx.cast(x, "int32")
    r = ctx.reduce("ReduceMin" if op.name == "all" else "ReduceMax", i, axes_of(op, rank),
                   op.attrs.get("keepdim", False))
    return ctx.cast(r, "bool")


@lowers("argmax", "argmin")
def _arg(op, ctx):
    x, xv = ctx.input(0), op.operands[0]
    ax = op.attrs.get("axis")
    keep = int(bool(op.attrs.get("keepdim", False)))
    if ax is None:
        # over the flattened tensor (Paddle's default); keepdim gives all-ones dims
        x = ctx.node("Reshape", [x, ctx.ints([-1])])
        r = ctx.node("ArgMax" if op.name == "argmax" else "ArgMin", [x], axis=0, keepdims=0)
        if keep:
            r = ctx.node("Reshape", [r, ctx.ints([1] * xv.type.ndim)])
    else:
        # select_last_index=0: the first extremum, as NumPy's argmax
        r = ctx.node("ArgMax" if op.name == "argmax" else "ArgMin", [x], axis=int(ax),
                     keepdims=keep, select_last_index=0)
    if op.results[0].type.dtype.name != "int64":
        r = ctx.cast(r, op.results[0].type.dtype)
    return r


@lowers("var", "std")
def _var_std(op, ctx):
    x, xv = ctx.input(0), op.operands[0]
    dt = op.results[0].type.dtype
    if xv.type.dtype is not dt:  # integer input: computed in the default float dtype
        x = ctx.cast(x, dt)
    rank = xv.type.ndim
    axes = axes_of(op, rank)
    red = list(range(rank)) if axes is None else axes
    sizes = [xv.type.shape[a] for a in red]
    if -1 in sizes:
        ctx.fail(f"{op.name} over axes of unknown size")
    n = int(np.prod(sizes)) if sizes else 1
    # sum((x - mean)^2) / (N - 1 or N), as fw's reference (Bessel's correction)
    d = ctx.node("Sub", [x, ctx.reduce("ReduceMean", x, axes, True)])
    ss = ctx.reduce("ReduceSum", ctx.node("Mul", [d, d]), axes, op.attrs["keepdim"])
    den = n - 1 if op.attrs["unbiased"] else n
    out = ctx.node("Div", [ss, ctx.scalar(den, dt)])
    return ctx.node("Sqrt", [out]) if op.name == "std" else out
