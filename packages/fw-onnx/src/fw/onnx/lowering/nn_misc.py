"""Layers' ops that are neither conv, pool nor norm (``fw.core.ops.nn_misc``):
linear, embedding, dropout (inference), pixel shuffle, interpolate."""

from __future__ import annotations

import numpy as np

from fw.onnx.lowering._common import to_channels_first, to_channels_last
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


_LINEAR = {"linear", "bilinear", "trilinear"}


@lowers("interpolate")
def _interpolate(op, ctx):
    # fw's source coordinate of output position t (fw.core.ops._nn_misc_np) and ONNX
    # Resize's coordinate_transformation_mode (onnx Resize spec):
    #   nearest:         floor(t / scale)               asymmetric + nearest_mode floor
    #   nearest, align:  floor(t * (i-1)/(o-1) + 0.5)   align_corners + round_prefer_ceil
    #   (bi/tri)linear, bicubic: (t + 0.5) / scale - 0.5 half_pixel (align_mode 0)
    #                            t / scale               asymmetric (linear, align_mode 1)
    #                            t * (i-1)/(o-1)         align_corners
    # bicubic uses a = -0.75 in both (ONNX's cubic_coeff_a default).
    mode = op.attrs["mode"]
    if mode == "area":
        ctx.fail("mode='area' (adaptive average pooling) has no ONNX Resize mode")
    align = bool(op.attrs["align_corners"])
    x = op.operands[0]
    rank = x.type.ndim
    last = op.attrs["channel_last"]
    name = ctx.input(0)
    if last:
        name = to_channels_first(ctx, name, rank)
    if mode == "nearest":
        onnx_mode, nearest = "nearest", ("round_prefer_ceil" if align else "floor")
        coord = "align_corners" if align else "asymmetric"
    else:
        onnx_mode, nearest = ("cubic" if mode == "bicubic" else "linear"), None
        if align:
            coord = "align_corners"
        elif mode in _LINEAR and op.attrs["align_mode"] == 1:
            coord = "asymmetric"
        else:
            coord = "half_pixel"
    if op.attrs["scale_factor"] is not None and not align:
        sf = list(op.attrs["scale_factor"])
        sf = sf * (rank - 2) if len(sf) == 1 else sf
        scales = ctx.const(np.asarray([1.0, 1.0] + [float(s) for s in sf], np.float32))
        ins = [name, "", scales]
    else:
        # the output sizes fw computed; N and C are copied from the input at run time
        outs = op.results[0].type.shape
        outs = outs[1:-1] if last else outs[2:]
        if -1 in outs:
            ctx.fail("interpolate to spatial sizes unknown at export time")
        head = ctx.node("Slice", [ctx.node("Shape", [name]), ctx.ints([0]), ctx.ints([2])])
        ins = [name, "", "", ctx.node("Concat", [head, ctx.ints(outs)], axis=0)]
    y = ctx.node("Resize", ins, mode=onnx_mode, coordinate_transformation_mode=coord,
                 nearest_mode=nearest, cubic_coeff_a=-0.75 if onnx_mode == "cubic" else None)
    return to_channels_last(ctx, y, rank) if last else y


@lowers("scaled_dot_product_attention")
def _sdpa(op, ctx):
    # softmax(q k^T * scale [+ mask]) v in Paddle's [batch, seq, heads, head_dim] layout,
    # as fw's reference computes it: heads moved before seq, kv heads repeated for
    # grouped-query attention, a causal or boolean mask as -inf
    q, k, v, m = op.operands
    three = q.type.ndim == 3
    names = [ctx.input(i) for i in range(3)]
    if three:
        names = [ctx.unsqueeze(n, [0]) for n in names]
    qh, kh, vh = (ctx.node("Transpose", [n], perm=[0, 2, 1, 3]) for n in names)
    hq, hk, d = q.type.shape[-2], k.type.shape[-2], q.type.shape[-1]
    if hq != hk:
        if -1 in (hq, hk, d):
            ctx.fail("grouped-query attention with head counts unknown at export time")
        rep = hq // hk

        def repeat(x):  # [B, Hk, S, D] -> [B, Hk, rep, S, D] -> [B, Hq, S, D]
            x = ctx.node("Expand", [ctx.unsqueeze(x, [2]), ctx.ints([1, 1, rep, 1, 1])])
            return ctx.node("Reshape", [x, ctx.ints([0, hq, -1, d])])

        kh, vh = repeat(kh), repeat(vh)
    dt = q.type.dtype
    scale = op.attrs["scale"]
    if scale is None:
        if d == -1:
            ctx.fail("attention over a head_dim unknown at export time (give scale=)")
        scale = 1.0 / float(np.sqrt(d)) if d else 1.0
    scores = ctx.node("Mul", [ctx.node("MatMul", [qh, ctx.node(
        "Transpose", [kh], perm=[0, 1, 3, 2])]), ctx.scalar(scale, dt)])
    ninf = ctx.scalar(-np.inf, dt)
    if op.attrs["is_causal"]:
        sq, sk = q.type.shape[-3], k.type.shape[-3]
        if -1 in (sq, sk):
            ctx.fail("a causal mask over sequence lengths unknown at export time")
        scores = ctx.node("Where", [ctx.const(np.tri(sq, sk, dtype=bool)), scores, ninf])
    if m is not None:
        if m.type.dtype.name == "bool":
            scores = ctx.node("Where", [ctx.name(m), scores, ninf])
        else:
            scores = ctx.node("Add", [scores, ctx.name(m)])
    out = ctx.node("MatMul", [ctx.node("Softmax", [scores], axis=-1), vh])
    out = ctx.node("Transpose", [out], perm=[0, 2, 1, 3])
    return ctx.squeeze(out, [0]) if three else out
