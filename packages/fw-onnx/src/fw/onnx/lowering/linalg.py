"""Linear algebra (``fw.core.ops.linalg``): matmul."""

from __future__ import annotations

from fw.onnx.lowering._registry import lowers


def _swap_last(ctx, x: str, rank: int) -> str:
    perm = list(range(rank))
    perm[-2], perm[-1] = perm[-1], perm[-2]
    return ctx.node("Transpose", [x], perm=perm)


@lowers("matmul")
def _matmul(op, ctx):
    # ONNX MatMul has NumPy's matmul semantics (1-D operands, batch broadcasting);
    # fw's transpose_x/transpose_y swap the last two dims of a >= 2-D operand first
    x, y = ctx.input(0), ctx.input(1)
    xv, yv = op.operands
    if op.attrs.get("transpose_x") and xv.type.ndim >= 2:
        x = _swap_last(ctx, x, xv.type.ndim)
    if op.attrs.get("transpose_y") and yv.type.ndim >= 2:
        y = _swap_last(ctx, y, yv.type.ndim)
    return ctx.node("MatMul", [x, y])


@lowers("einsum")
def _einsum(op, ctx):
    # ONNX Einsum takes NumPy's equation syntax (explicit "->" or implicit output)
    return ctx.node("Einsum", [ctx.name(v) for v in op.operands],
                    equation=op.attrs["equation"].replace(" ", ""))
