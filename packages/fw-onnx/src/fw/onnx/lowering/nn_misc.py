"""Layers' ops that are neither conv, pool nor norm (``fw.core.ops.nn_misc``):
linear, embedding, dropout (inference), pixel shuffles."""

from __future__ import annotations

from fw.onnx.lowering._registry import lowers


@lowers("linear")
def _linear(op, ctx):
    # weight is [in, out] (Paddle's layout), so x @ weight is a plain MatMul; Gemm
    # would need 2-D x, and MatMul keeps the leading (batch, sequence) dims
    y = ctx.node("MatMul", [ctx.input(0), ctx.input(1)])
    if op.operands[2] is not None:
        y = ctx.node("Add", [y, ctx.input(2)])
    return y


@lowers("embedding")
def _embedding(op, ctx):
    ids, w = op.operands
    rows = ctx.node("Gather", [ctx.input(1), ctx.input(0)], axis=0)
    pad = op.attrs.get("padding_idx")
    if pad is None:
        return rows
    # fw outputs zeros for the padding id (which may be given negative)
    vocab = w.type.shape[0]
    if vocab == -1:
        ctx.fail("padding_idx with an embedding table of unknown size")
    is_pad = ctx.node("Equal", [ctx.input(0), ctx.scalar(int(pad) % vocab, ids.type.dtype)])
    zero = ctx.scalar(0, w.type.dtype)
    return ctx.node("Where", [ctx.unsqueeze(is_pad, [-1]), zero, rows])


@lowers("dropout", "alpha_dropout")
def _dropout(op, ctx):
    p = float(op.attrs["p"])
    ctx.unavailable(op.results[1], "the dropout mask is not exported")
    if op.attrs["training"] and p > 0.0:
        ctx.fail("dropout in training mode is random; export the layer in eval mode "
                 "(fw.onnx.export does this for a Layer)")
    if op.name == "dropout" and op.attrs.get("mode") == "downscale_in_infer":
        return [ctx.node("Mul", [ctx.input(0), ctx.scalar(1.0 - p, op.results[0].type.dtype)]),
                None]
    return [ctx.node("Identity", [ctx.input(0)]), None]


@lowers("pixel_shuffle")
def _pixel_shuffle(op, ctx):
    if op.attrs["channel_last"]:
        ctx.fail("pixel_shuffle with channel_last=True")
    # Paddle's channel order (c, r, r) is DepthToSpace's "CRD" mode
    return ctx.node("DepthToSpace", [ctx.input(0)], blocksize=int(op.attrs["upscale_factor"]),
                    mode="CRD")
