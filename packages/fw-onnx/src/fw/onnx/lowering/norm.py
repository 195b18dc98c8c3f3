"""Normalizations (``fw.core.ops.norm``), in inference form: batch norm on the
running statistics, layer/group/instance/RMS norm. Their auxiliary results
(updated statistics, mean, inv_std) are not exported."""

from __future__ import annotations

import numpy as np

from fw.onnx.lowering._common import to_channels_first, to_channels_last
from fw.onnx.lowering._registry import lowers


def _no_aux(op, ctx):
    for r in op.results[1:]:
        ctx.unavailable(r, f"the auxiliary result '{r.index}' of {op.name} (statistics) "
                           f"is not exported")


def _per_channel(ctx, v, c, dt, fill):
    """BN's weight/bias as a [C] vector: the operand, or `fill` when absent."""
    if v is None:
        return ctx.const(np.full([c], fill, dtype=dt.np))
    name = ctx.name(v)
    return name if v.type.ndim == 1 else ctx.node("Reshape", [name, ctx.ints([-1])])


@lowers("batch_norm")
def _batch_norm(op, ctx):
    _no_aux(op, ctx)
    x = op.operands[0]
    if op.attrs["training"] and not op.attrs["use_global_stats"]:
        ctx.fail("batch_norm in training mode uses the batch's statistics; export the "
                 "layer in eval mode (fw.onnx.export does this for a Layer)")
    rank = x.type.ndim
    c = x.type.shape[-1 if op.attrs["channel_last"] else 1]
    if c == -1:
        ctx.fail("batch_norm over an unknown number of channels")
    dt = op.operands[1].type.dtype
    name = ctx.input(0)
    if op.attrs["channel_last"] and rank > 2:
        name = to_channels_first(ctx, name, rank)
    scale = _per_channel(ctx, op.operands[3], c, dt, 1.0)
    bias = _per_channel(ctx, op.operands[4], c, dt, 0.0)
    # ONNX BatchNormalization (inference, training_mode=0): (x - mean) / sqrt(var + eps)
    # * scale + B over axis 1, the same formula
    y = ctx.node("BatchNormalization", [name, scale, bias, ctx.input(1), ctx.input(2)],
                 epsilon=float(op.attrs["epsilon"]))
    if op.attrs["channel_last"] and rank > 2:
        y = to_channels_last(ctx, y, rank)
    return [y] + [None] * (len(op.results) - 1)


def _affine(ctx, y, weight, bias, shape):
    """y * weight + bias with weight/bias (any shape of the right size) reshaped to
    `shape` (they broadcast over the normalised dims)."""
    for v, kind in ((weight, "Mul"), (bias, "Add")):
        if v is not None:
            y = ctx.node(kind, [y, ctx.node("Reshape", [ctx.name(v), ctx.ints(shape)])])
    return y


def _moments_norm(ctx, op, x, axes, eps, dt):
    """(x - mean) / sqrt(var + eps) over `axes`, with ReduceMean (biased variance)."""
    mean = ctx.reduce("ReduceMean", x, axes, True)
    d = ctx.node("Sub", [x, mean])
    var = ctx.reduce("ReduceMean", ctx.node("Mul", [d, d]), axes, True)
    std = ctx.node("Sqrt", [ctx.node("Add", [var, ctx.scalar(eps, dt)])])
    return ctx.node("Div", [d, std])


@lowers("layer_norm")
def _layer_norm(op, ctx):
    _no_aux(op, ctx)
    x, w, b = op.operands
    rank = x.type.ndim
    begin = op.attrs["begin_norm_axis"] % rank
    tail = list(x.type.shape[begin:])
    eps = float(op.attrs["epsilon"])
    if ctx.opset >= 17 and -1 not in tail:
        # LayerNormalization needs a Scale: ones when the op has none
        scale = (ctx.node("Reshape", [ctx.name(w), ctx.ints(tail)]) if w is not None
                 else ctx.const(np.ones(tail, dtype=x.type.dtype.np)))
        ins = [ctx.input(0), scale]
        if b is not None:
            ins.append(ctx.node("Reshape", [ctx.name(b), ctx.ints(tail)]))
        y = ctx.node("LayerNormalization", ins, axis=begin, epsilon=eps)
        return [y] + [None] * (len(op.results) - 1)
    if -1 in tail and (w is not None or b is not None):
        ctx.fail("layer_norm with weight/bias over dims of unknown size")
    y = _moments_norm(ctx, op, ctx.input(0), list(range(begin, rank)), eps, x.type.dtype)
    y = _affine(ctx, y, w, b, tail)
    return [y] + [None] * (len(op.results) - 1)


@lowers("rms_norm")
def _rms_norm(op, ctx):
    _no_aux(op, ctx)
    x, w, b = op.operands
    rank = x.type.ndim
    begin = op.attrs["begin_norm_axis"] % rank
    tail = list(x.type.shape[begin:])
    if -1 in tail and (w is not None or b is not None):
        ctx.fail("rms_norm with weight/bias over dims of unknown size")
    xn = ctx.input(0)
    ms = ctx.reduce("ReduceMean", ctx.node("Mul", [xn, xn]), list(range(begin, rank)), True)
    eps = ctx.scalar(float(op.attrs["epsilon"]), x.type.dtype)
    y = ctx.node("Div", [xn, ctx.node("Sqrt", [ctx.node("Add", [ms, eps])])])
    return [_affine(ctx, y, w, b, tail)] + [None] * (len(op.results) - 1)


@lowers("group_norm", "instance_norm")
def _group_norm(op, ctx):
    _no_aux(op, ctx)
    x, w, b = op.operands
    rank = x.type.ndim
    name = ctx.input(0)
    last = op.attrs["channel_last"]
    if last:
        name = to_channels_first(ctx, name, rank)
    c = x.type.shape[-1 if last else 1]
    groups = c if op.name == "instance_norm" else int(op.attrs["num_groups"])
    if c == -1:
        ctx.fail(f"{op.name} over an unknown number of channels")
    # [N, C, *S] -> [N, G, C/G * prod(S)], normalise the last axis, back; the affine
    # weight/bias are per channel (ONNX GroupNormalization before opset 21 had them
    # per group, so it is not used)
    shape = ctx.node("Shape", [name])
    g = ctx.node("Reshape", [name, ctx.ints([0, groups, -1])])
    g = _moments_norm(ctx, op, g, [2], float(op.attrs["epsilon"]), x.type.dtype)
    y = ctx.node("Reshape", [g, shape])
    y = _affine(ctx, y, w, b, [c] + [1] * (rank - 2))
    if last:
        y = to_channels_last(ctx, y, rank)
    return [y] + [None] * (len(op.results) - 1)


@lowers("normalize")
def _normalize(op, ctx):
    x = ctx.input(0)
    p = float(op.attrs["p"])
    ax = int(op.attrs["axis"])
    a = ctx.node("Abs", [x])
    if p == float("inf"):
        nrm = ctx.reduce("ReduceMax", a, [ax], True)
    elif p == 2.0:
        nrm = ctx.node("Sqrt", [ctx.reduce("ReduceSum", ctx.node("Mul", [a, a]), [ax], True)])
    elif p == 1.0:
        nrm = ctx.reduce("ReduceSum", a, [ax], True)
    else:
        dt = op.results[0].type.dtype
        s = ctx.reduce("ReduceSum", ctx.node("Pow", [a, ctx.scalar(p, dt)]), [ax], True)
        nrm = ctx.node("Pow", [s, ctx.scalar(1.0 / p, dt)])
    eps = ctx.scalar(float(op.attrs["epsilon"]), op.results[0].type.dtype)
    return ctx.node("Div", [x, ctx.node("Max", [nrm, eps])])
