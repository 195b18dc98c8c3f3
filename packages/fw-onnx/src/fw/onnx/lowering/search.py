"""Search ops (``fw.core.ops.search``): topk (ONNX TopK)."""

from __future__ import annotations

from fw.onnx.lowering._registry import lowers


@lowers("topk")
def _topk(op, ctx):
    ax = op.attrs["axis"]
    ax = -1 if ax is None else int(ax)
    vals, idx = ctx.node("TopK", [ctx.input(0), ctx.ints([int(op.attrs["k"])])], outputs=2,
                         axis=ax, largest=int(bool(op.attrs["largest"])),
                         sorted=int(bool(op.attrs["sorted"])))
    if op.results[1].type.dtype.name != "int64":
        idx = ctx.cast(idx, op.results[1].type.dtype)
    return [vals, idx]


@lowers("argsort", "sort")
def _sort(op, ctx):
    # a full TopK along the axis; ties may come out in another order than NumPy's
    # (fw's stable=True promise is not kept by TopK), values are the same
    x = op.operands[0]
    ax = int(op.attrs["axis"]) % x.type.ndim
    n = x.type.shape[ax]
    k = ctx.ints([n]) if n != -1 else ctx.node(
        "Gather", [ctx.node("Shape", [ctx.input(0)]), ctx.ints([ax])], axis=0)
    vals, idx = ctx.node("TopK", [ctx.input(0), k], outputs=2, axis=ax,
                         largest=int(bool(op.attrs["descending"])), sorted=1)
    return vals if op.name == "sort" else idx
