"""Pooling (``fw.core.ops.pool``). fw-core's `pool_geometry` resolves the window,
stride and begin/end pads; ONNX MaxPool/AveragePool take pads as all begins then
all ends. Adaptive pooling is exported when it is a plain pooling: an output of
1 (Global*Pool) or an input size divisible by the output size (fixed windows)."""

from __future__ import annotations

from fw.core.ops.pool import pool_geometry
from fw.onnx.lowering._common import to_channels_first, to_channels_last
from fw.onnx.lowering._registry import lowers


def _layout(op):
    x = op.operands[0]
    last = op.attrs["channel_last"]
    xs = x.type.shape
    return (tuple(xs[1:-1]) if last else tuple(xs[2:])), last, x.type.ndim


def _in(ctx, op, last, rank):
    x = ctx.input(0)
    return to_channels_first(ctx, x, rank) if last else x


def _out(ctx, y, last, rank):
    return to_channels_last(ctx, y, rank) if last else y


def _geometry(ctx, op, sp):
    ks, strides, pads, _ = pool_geometry(sp, op.attrs["kernel_size"], op.attrs["stride"],
                                         op.attrs["padding"], op.attrs["ceil_mode"])
    if any(b == -1 for b, _ in pads):
        ctx.fail(f"'SAME' padding over spatial sizes unknown at export time {list(sp)}")
    return list(ks), list(strides), [b for b, _ in pads] + [e for _, e in pads]


@lowers("max_pool", "max_pool_with_index")
def _max_pool(op, ctx):
    sp, last, rank = _layout(op)
    ks, strides, pads = _geometry(ctx, op, sp)
    if len(op.results) > 1:
        # ONNX MaxPool's Indices count over the whole tensor, fw's within a plane
        ctx.unavailable(op.results[1], "the argmax mask of max pooling is not exported")
    y = ctx.node("MaxPool", [_in(ctx, op, last, rank)], kernel_shape=ks, strides=strides,
                 pads=pads, ceil_mode=int(bool(op.attrs["ceil_mode"])))
    y = _out(ctx, y, last, rank)
    return [y] + [None] * (len(op.results) - 1)


@lowers("avg_pool")
def _avg_pool(op, ctx):
    sp, last, rank = _layout(op)
    if op.attrs["divisor_override"] is not None:
        ctx.fail("avg_pool with divisor_override has no ONNX AveragePool equivalent")
    ks, strides, pads = _geometry(ctx, op, sp)
    # exclusive=True divides by the real (non-padding) elements: count_include_pad=0
    y = ctx.node("AveragePool", [_in(ctx, op, last, rank)], kernel_shape=ks, strides=strides,
                 pads=pads, ceil_mode=int(bool(op.attrs["ceil_mode"])),
                 count_include_pad=0 if op.attrs["exclusive"] else 1)
    return _out(ctx, y, last, rank)


def _adaptive_windows(ctx, op, sp):
    outs = list(op.results[0].type.shape[1:-1] if op.attrs["channel_last"]
                else op.results[0].type.shape[2:])
    if all(o == 1 for o in outs):
        return None
    ks = []
    for i, o in zip(sp, outs):
        if i == -1 or o == -1 or i % o:
            ctx.fail(f"adaptive pooling of spatial size {list(sp)} to {outs}: ONNX has no "
                     f"adaptive pooling, and the windows are fixed only when each input size "
                     f"is known and divisible by its output size")
        ks.append(i // o)
    return ks


@lowers("adaptive_avg_pool", "adaptive_max_pool")
def _adaptive(op, ctx):
    sp, last, rank = _layout(op)
    ks = _adaptive_windows(ctx, op, sp)
    x = _in(ctx, op, last, rank)
    avg = op.name == "adaptive_avg_pool"
    if ks is None:
        y = ctx.node("GlobalAveragePool" if avg else "GlobalMaxPool", [x])
    else:
        y = ctx.node("AveragePool" if avg else "MaxPool", [x], kernel_shape=ks, strides=ks,
                     pads=[0] * (2 * len(ks)))
    y = _out(ctx, y, last, rank)
    if len(op.results) > 1:
        ctx.unavailable(op.results[1], "the argmax mask of adaptive max pooling is not exported")
        return [y, None]
    return y
