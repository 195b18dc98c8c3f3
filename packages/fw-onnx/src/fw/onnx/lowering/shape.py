"""Shape ops (``fw.core.ops.shape``): reshape, transpose, squeeze, concat, split,
expand, pad, …. Dynamic (-1) dims stay dynamic: target shapes use ONNX Reshape's
0 (copy the input's dim) and -1 (infer), or are computed from ``Shape`` nodes."""

from __future__ import annotations

import numpy as np

from fw.onnx.lowering._common import INT64_MAX, INT64_MIN
from fw.onnx.lowering._registry import lowers


def _axes(v, rank):
    if v is None:
        return None
    if isinstance(v, int):
        v = [v]
    return [a + rank if a < 0 else a for a in v]


def reshape_to(ctx, x: str, in_type, out_shape) -> str:
    """Reshape `x` (of fw type `in_type`) to `out_shape` (fw dims, -1 dynamic)."""
    out_shape = list(out_shape)
    if out_shape.count(-1) <= 1:
        return ctx.node("Reshape", [x, ctx.ints(out_shape)])
    # several dynamic dims: a dim copied from the same index of the input is 0 (ONNX
    # Reshape's "copy"), if all but one are so the target is still a constant
    spec = []
    for i, d in enumerate(out_shape):
        if d == -1 and i < in_type.ndim and in_type.shape[i] == -1 and _same_prefix(
                in_type.shape, out_shape, i):
            spec.append(0)
        else:
            spec.append(d)
    if spec.count(-1) <= 1:
        return ctx.node("Reshape", [x, ctx.ints(spec)])
    ctx.fail(f"cannot express the target shape {out_shape} of an input {list(in_type.shape)} "
             f"with more than one unknown size")


def _same_prefix(a, b, i):
    # dims before i agree, so dim i of the output is dim i of the input
    return all(x == y for x, y in zip(a[:i], b[:i]))


@lowers("reshape")
def _reshape(op, ctx):
    x = op.operands[0]
    shape = [int(d) for d in op.attrs["shape"]]
    # Paddle's 0 (copy the input's dim) is ONNX Reshape's 0 with allowzero=0; an input
    # with a dynamic dim elsewhere is fine as long as at most one -1 remains
    if shape.count(-1) <= 1:
        return ctx.node("Reshape", [ctx.input(0), ctx.ints(shape)])
    return reshape_to(ctx, ctx.input(0), x.type, op.results[0].type.shape)


@lowers("reshape_dyn")
def _reshape_dyn(op, ctx):
    shape = ctx.input(1)
    if op.operands[1].type.dtype.name != "int64":
        shape = ctx.cast(shape, "int64")
    return ctx.node("Reshape", [ctx.input(0), shape])


@lowers("transpose")
def _transpose(op, ctx):
    perm = op.attrs["perm"]
    rank = op.operands[0].type.ndim
    perm = [p + rank if p < 0 else p for p in perm]
    return ctx.node("Transpose", [ctx.input(0)], perm=perm)


@lowers("squeeze")
def _squeeze(op, ctx):
    x = op.operands[0]
    shape, rank = x.type.shape, x.type.ndim
    axes = _axes(op.attrs["axis"], rank)
    if axes is None:
        axes = list(range(rank))
    # Paddle squeezes the listed axes of size 1 and ignores the others; the traced
    # sizes decide which, and the result's rank says whether a size unknown here
    # (-1) was squeezed at trace time
    keep = sorted({a for a in axes if shape[a] == 1})
    if op.results[0].type.ndim != rank - len(keep):
        ctx.fail("squeeze of an axis whose size is unknown at export time")
    if not keep:
        return ctx.node("Identity", [ctx.input(0)])
    return ctx.squeeze(ctx.input(0), keep)


@lowers("unsqueeze")
def _unsqueeze(op, ctx):
    axes = op.attrs["axis"]
    if isinstance(axes, int):
        axes = [axes]
    x, rank = ctx.input(0), op.operands[0].type.ndim
    # Paddle inserts the axes one after the other (a negative one counts from the end
    # of the tensor as it is at that point); ONNX Unsqueeze takes output positions
    for a in axes:
        a = int(a)
        pos = a + rank + 1 if a < 0 else a
        x = ctx.unsqueeze(x, [pos])
        rank += 1
    return x


@lowers("flatten")
def _flatten(op, ctx):
    x = op.operands[0]
    rank = x.type.ndim
    if rank == 0:
        return ctx.node("Reshape", [ctx.input(0), ctx.ints([1])])
    start = op.attrs["start_axis"] % rank
    stop = op.attrs["stop_axis"] % rank
    # the dims before `start` are copied (0), the flattened run is -1, dims after
    # `stop` are their traced sizes, or copied from Shape(x) when unknown
    tail = list(x.type.shape[stop + 1:])
    if -1 not in tail:
        return ctx.node("Reshape", [ctx.input(0), ctx.ints([0] * start + [-1] + tail)])
    shp = ctx.node("Shape", [ctx.input(0)])
    parts = [ctx.node("Slice", [shp, ctx.ints([0]), ctx.ints([start])]), ctx.ints([-1]),
             ctx.node("Slice", [shp, ctx.ints([stop + 1]), ctx.ints([rank])])]
    return ctx.node("Reshape", [ctx.input(0), ctx.node("Concat", parts, axis=0)])


@lowers("unflatten")
def _unflatten(op, ctx):
    return reshape_to(ctx, ctx.input(0), op.operands[0].type, op.results[0].type.shape)


@lowers("concat")
def _concat(op, ctx):
    rank = op.results[0].type.ndim
    ax = int(op.attrs["axis"])
    return ctx.node("Concat", [ctx.name(v) for v in op.operands], axis=ax % rank if rank else 0)


@lowers("stack")
def _stack(op, ctx):
    rank = op.results[0].type.ndim
    ax = int(op.attrs["axis"]) % rank
    parts = [ctx.unsqueeze(ctx.name(v), [ax]) for v in op.operands]
    return ctx.node("Concat", parts, axis=ax)


def _split(ctx, x: str, xtype, ax: int, results):
    sizes = [r.type.shape[ax] for r in results]
    if len(results) == 1:
        return [ctx.node("Identity", [x])]
    if -1 in sizes:
        if xtype.shape[ax] == -1 and ctx.opset >= 18:
            return ctx.node("Split", [x], outputs=len(results), axis=ax,
                            num_outputs=len(results))
        ctx.fail(f"split of an axis of unknown size into {len(results)} parts needs opset "
                 f">= 18 (asked for {ctx.opset})")
    return ctx.node("Split", [x, ctx.ints(sizes)], outputs=len(results), axis=ax)


@lowers("split")
def _split_op(op, ctx):
    x = op.operands[0]
    ax = int(op.attrs["axis"]) % x.type.ndim
    outs = _split(ctx, ctx.input(0), x.type, ax, op.results)
    return list(outs)


@lowers("unbind")
def _unbind(op, ctx):
    x = op.operands[0]
    ax = int(op.attrs["axis"]) % x.type.ndim
    n = len(op.results)
    if n == 1:
        return [ctx.squeeze(ctx.input(0), [ax])]
    parts = ctx.node("Split", [ctx.input(0), ctx.ints([1] * n)], outputs=n, axis=ax)
    return [ctx.squeeze(p, [ax]) for p in parts]


@lowers("expand")
def _expand(op, ctx):
    # Paddle's -1 keeps the input's size; ONNX Expand broadcasts, so a 1 does the same
    shape = [1 if int(d) == -1 else int(d) for d in op.attrs["shape"]]
    return ctx.node("Expand", [ctx.input(0), ctx.ints(shape)])


@lowers("expand_dyn")
def _expand_dyn(op, ctx):
    shape = ctx.input(1)
    if op.operands[1].type.dtype.name != "int64":
        shape = ctx.cast(shape, "int64")
    keep = ctx.node("Equal", [shape, ctx.const(_i64(-1))])
    shape = ctx.node("Where", [keep, ctx.const(_i64(1)), shape])
    return ctx.node("Expand", [ctx.input(0), shape])


def _i64(v):
    return np.asarray(v, dtype=np.int64)


@lowers("expand_as")
def _expand_as(op, ctx):
    return ctx.node("Expand", [ctx.input(0), ctx.node("Shape", [ctx.input(1)])])


@lowers("broadcast_tensors")
def _broadcast_tensors(op, ctx):
    outs = []
    shapes = [ctx.node("Shape", [ctx.name(v)]) for v in op.operands]
    # Expand broadcasts: expanding by every input's shape in turn gives the common one
    for v in op.operands:
        x = ctx.name(v)
        for s in shapes:
            x = ctx.node("Expand", [x, s])
        outs.append(x)
    return outs


@lowers("tile")
def _tile(op, ctx):
    reps = [int(r) for r in op.attrs["repeat_times"]]
    x, rank = ctx.input(0), op.operands[0].type.ndim
    if len(reps) > rank:  # Paddle prepends size-1 dims, ONNX Tile needs equal ranks
        x = ctx.unsqueeze(x, list(range(len(reps) - rank)))
    elif len(reps) < rank:
        reps = [1] * (rank - len(reps)) + reps
    return ctx.node("Tile", [x, ctx.ints(reps)])


@lowers("flip")
def _flip(op, ctx):
    rank = op.operands[0].type.ndim
    axes = _axes(op.attrs["axis"], rank)
    n = len(axes)
    return ctx.node("Slice", [ctx.input(0), ctx.ints([-1] * n), ctx.ints([INT64_MIN] * n),
                              ctx.ints(axes), ctx.ints([-1] * n)])


@lowers("roll")
def _roll(op, ctx):
    x = op.operands[0]
    shifts = op.attrs["shifts"]
    shifts = [shifts] if isinstance(shifts, int) else list(shifts)
    axes = op.attrs["axis"]
    name = ctx.input(0)
    if axes is None:  # over the flattened tensor, then back
        name = ctx.node("Reshape", [name, ctx.ints([-1])])
        axes, flat = [0], True
    else:
        axes, flat = _axes(axes, x.type.ndim), False
    for s, a in zip(shifts, axes):
        # roll by s = concat(x[-s:], x[:-s]) along a; sizes may be dynamic, so the cut
        # point is taken modulo Shape(x)[a]
        dim = ctx.node("Gather", [ctx.node("Shape", [name]), ctx.ints([a])], axis=0)
        k = ctx.node("Mod", [ctx.ints([-int(s)]), dim], fmod=0)
        head = ctx.node("Slice", [name, k, ctx.ints([INT64_MAX]), ctx.ints([a])])
        tail = ctx.node("Slice", [name, ctx.ints([0]), k, ctx.ints([a])])
        name = ctx.node("Concat", [head, tail], axis=a)
    if flat:
        name = ctx.node("Reshape", [name, ctx.node("Shape", [ctx.input(0)])])
    return name


_PAD_MODES = {"constant": "constant", "reflect": "reflect", "replicate": "edge",
              "circular": "wrap"}


@lowers("pad")
def _pad(op, ctx):
    p = [int(v) for v in op.attrs["paddings"]]
    nd = len(p) // 2
    # fw: (before, after) per axis; ONNX Pad: all befores, then all afters
    pads = [p[2 * i] for i in range(nd)] + [p[2 * i + 1] for i in range(nd)]
    mode = _PAD_MODES[op.attrs["mode"]]
    if mode == "wrap" and ctx.opset < 19:
        ctx.fail(f"circular padding is ONNX Pad mode 'wrap', from opset 19 (asked for "
                 f"{ctx.opset})")
    ins = [ctx.input(0), ctx.ints(pads)]
    if mode == "constant":
        ins.append(ctx.scalar(op.attrs["value"], op.operands[0].type.dtype))
    return ctx.node("Pad", ins, mode=mode)
