"""Creation ops (``fw.core.ops.creation``, ``dynamic_shape``): constants, casts,
shapes, ranges, triangles."""

from __future__ import annotations

import numpy as np

from fw.onnx._dtypes import onnx_dtype
from fw.onnx.lowering._registry import lowers
from onnx import helper


@lowers("full", "arange", "eye", "linspace", "logspace")
def _constant(op, ctx):
    # no operands and static attributes: the value is known at export time; fw's own
    # reference kernel computes it, so the constant is exactly what fw would run
    t = op.results[0].type
    if op.name == "full" and t.numel() > 64:
        # a big fill is ConstantOfShape, not a big initializer
        value = helper.make_tensor("value", onnx_dtype(t.dtype), [1],
                                   [np.asarray(op.attrs["fill_value"], t.dtype.np).item()])
        return ctx.node("ConstantOfShape", [ctx.ints(t.shape)], value=value)
    arr = np.asarray(op.opdef.reference(**op.attrs))
    return ctx.node("Identity", [ctx.const(arr.astype(t.dtype.np, copy=False))])


@lowers("full_like")
def _full_like(op, ctx):
    t = op.results[0].type
    fill = ctx.scalar(op.attrs["fill_value"], t.dtype)
    return ctx.node("Expand", [fill, ctx.node("Shape", [ctx.input(0)])])


@lowers("full_dyn")
def _full_dyn(op, ctx):
    t = op.results[0].type
    shape = ctx.input(0)
    if op.operands[0].type.dtype.name != "int64":
        shape = ctx.cast(shape, "int64")
    return ctx.node("Expand", [ctx.scalar(op.attrs["fill_value"], t.dtype), shape])


@lowers("arange_dyn")
def _arange_dyn(op, ctx):
    dt = op.results[0].type.dtype
    ins = []
    for i, v in enumerate(op.operands):
        n = ctx.input(i)
        if v.type.dtype is not dt:
            n = ctx.cast(n, dt)
        if v.type.ndim:
            n = ctx.node("Reshape", [n, ctx.ints([])])  # Range takes scalars
        ins.append(n)
    return ctx.node("Range", ins)


@lowers("cast")
def _cast(op, ctx):
    return ctx.cast(ctx.input(0), op.results[0].type.dtype)


@lowers("assign")
def _assign(op, ctx):
    return ctx.node("Identity", [ctx.input(0)])


@lowers("shape")
def _shape(op, ctx):
    return ctx.node("Shape", [ctx.input(0)])


@lowers("numel")
def _numel(op, ctx):
    return ctx.node("Size", [ctx.input(0)])


@lowers("tril", "triu")
def _trilu(op, ctx):
    return ctx.node("Trilu", [ctx.input(0), ctx.const(np.int64(op.attrs["diagonal"]))],
                    upper=int(op.name == "triu"))
