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
