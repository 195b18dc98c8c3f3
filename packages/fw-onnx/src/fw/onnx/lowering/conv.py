"""Convolutions (``fw.core.ops.conv``). fw-core's `conv_geometry` resolves Paddle's
padding forms ("SAME", pairs, per-dim) to begin/end pads per spatial dim; ONNX
Conv/ConvTranspose take ``pads`` as all begins, then all ends (onnx Conv spec),
and channels first (a channel_last op is transposed around)."""

from __future__ import annotations

from fw.core.ops.conv import conv_geometry, conv_transpose_geometry
from fw.onnx.lowering._common import to_channels_first, to_channels_last
from fw.onnx.lowering._registry import lowers


def _spatial(op):
    x, w = op.operands[0], op.operands[1]
    last = op.attrs["channel_last"]
    xs = x.type.shape
    sp = tuple(xs[1:-1]) if last else tuple(xs[2:])
    return sp, tuple(w.type.shape[2:]), last


def _pads(ctx, pads, sp):
    if any(b == -1 for b, _ in pads):
        ctx.fail(f"'SAME' padding over spatial sizes unknown at export time {list(sp)}")
    return [b for b, _ in pads] + [e for _, e in pads]


@lowers("conv")
def _conv(op, ctx):
    sp, ks, last = _spatial(op)
    strides, pads, dils, _ = conv_geometry(sp, ks, op.attrs["stride"], op.attrs["padding"],
                                           op.attrs["dilation"])
    rank = op.operands[0].type.ndim
    x = ctx.input(0)
    if last:
        x = to_channels_first(ctx, x, rank)
    ins = [x, ctx.input(1)] + ([ctx.input(2)] if op.operands[2] is not None else [])
    y = ctx.node("Conv", ins, kernel_shape=list(ks), strides=list(strides),
                 pads=_pads(ctx, pads, sp), dilations=list(dils), group=int(op.attrs["groups"]))
    return to_channels_last(ctx, y, rank) if last else y


@lowers("conv_transpose")
def _conv_transpose(op, ctx):
    sp, ks, last = _spatial(op)
    strides, pads, dils, outs = conv_transpose_geometry(
        sp, ks, op.attrs["stride"], op.attrs["padding"], op.attrs["output_padding"],
        op.attrs["dilation"], op.attrs["output_size"])
    if -1 in outs or -1 in sp:
        ctx.fail("conv_transpose over spatial sizes unknown at export time")
    # output_size is expressed as output_padding: the extra size at the end of each
    # dim beyond (i-1)*s - b - e + d*(k-1) + 1 (ONNX ConvTranspose's formula)
    opad = [o - ((i - 1) * s - b - e + d * (k - 1) + 1)
            for o, i, s, (b, e), d, k in zip(outs, sp, strides, pads, dils, ks)]
    rank = op.operands[0].type.ndim
    x = ctx.input(0)
    if last:
        x = to_channels_first(ctx, x, rank)
    ins = [x, ctx.input(1)] + ([ctx.input(2)] if op.operands[2] is not None else [])
    y = ctx.node("ConvTranspose", ins, kernel_shape=list(ks), strides=list(strides),
                 pads=_pads(ctx, pads, sp), dilations=list(dils), output_padding=opad,
                 group=int(op.attrs["groups"]))
    return to_channels_last(ctx, y, rank) if last else y
