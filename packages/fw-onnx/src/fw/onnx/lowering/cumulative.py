"""Cumulative ops (``fw.core.ops.cumulative``): cumsum."""

from __future__ import annotations

import numpy as np

from fw.onnx.lowering._registry import lowers


@lowers("cumsum")
def _cumsum(op, ctx):
    x = ctx.input(0)
    out_dt = op.results[0].type.dtype
    if out_dt is not op.operands[0].type.dtype:
        x = ctx.cast(x, out_dt)
    ax = op.attrs["axis"]
    if ax is None:  # over the flattened tensor (Paddle's default)
        x = ctx.node("Reshape", [x, ctx.ints([-1])])
        ax = 0
    return ctx.node("CumSum", [x, ctx.const(np.int64(ax))])
