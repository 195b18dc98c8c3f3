"""Indexing (``fw.core.ops.indexing``): ``x[key]`` (getitem), gather, masked_fill, ….

getitem's ``index`` attribute encodes the key (``fw.core.ops._index_key``): an int,
``None`` (new axis), ``"..."``, a ``(start, stop, step)`` slice whose bounds may be
``"t"`` (read from the next tensor operand), or ``"t"`` for an index tensor. Basic
keys become Slice + Squeeze + Unsqueeze; one integer index tensor among slices is
a Gather. Boolean masks (data-dependent shapes) and NumPy's mixed advanced
indexing are refused.
"""

from __future__ import annotations

import numpy as np

from fw.onnx.lowering._common import INT64_MAX, INT64_MIN
from fw.onnx.lowering._registry import lowers


def _bound(ctx, b, tensors, default):
    """A slice bound as (constant int or None, or an ONNX [1] int64 name)."""
    if b is None:
        return default
    if b == "t":
        v = next(tensors)
        n = ctx.node("Reshape", [ctx.name(v), ctx.ints([1])])
        return ctx.cast(n, "int64") if v.type.dtype.name != "int64" else n
    return int(b)


def _vector(ctx, items):
    """[int or name] -> a [len] int64 name (a constant when every item is an int)."""
    if all(isinstance(i, int) for i in items):
        return ctx.ints(items)
    parts = [ctx.ints([i]) if isinstance(i, int) else i for i in items]
    return ctx.node("Concat", parts, axis=0)


@lowers("getitem")
def _getitem(op, ctx):
    x = op.operands[0]
    rank = x.type.ndim
    tensors = iter(op.operands[1:])
    items = [tuple(e) if isinstance(e, list) else e for e in op.attrs["index"]]
    n_consumed = sum(1 for e in items if e is not None and e != "...")
    if "..." in items:
        i = items.index("...")
        items[i:i + 1] = [(None, None, None)] * (rank - n_consumed)
    starts, ends, axes, steps = [], [], [], []
    squeeze, new_axes = [], []
    gather = None
    ax = 0  # the input axis the next item indexes
    out = 0  # the output position of the next dim produced
    has_int = any(type(e) is int for e in items)
    for e in items:
        if e is None:
            new_axes.append(out)
            out += 1
        elif type(e) is int:
            starts.append(e)
            ends.append(INT64_MAX if e == -1 else e + 1)
            axes.append(ax)
            steps.append(1)
            squeeze.append(ax)
            ax += 1
        elif type(e) is tuple:
            if e[2] == "t":
                ctx.fail("a slice step read from a tensor")
            step = 1 if e[2] is None else int(e[2])
            if step == 0:
                ctx.fail("a slice step of 0")
            # ONNX Slice: INT64_MAX/INT64_MIN mean "to the end" forward/backward
            s = _bound(ctx, e[0], tensors, 0 if step > 0 else INT64_MAX)
            t = _bound(ctx, e[1], tensors, INT64_MAX if step > 0 else INT64_MIN)
            if not (s == 0 and t == INT64_MAX and step == 1):
                starts.append(s)
                ends.append(t)
                axes.append(ax)
                steps.append(step)
            ax += 1
            out += 1
        elif e == "t":
            v = next(tensors)
            if v.type.dtype.name == "bool":
                ctx.fail("a boolean mask index (its result size depends on the data)")
            if gather is not None or has_int:
                ctx.fail("more than one advanced index (NumPy's combined advanced indexing)")
            gather = (ax, v)
            ax += 1
            out += v.type.ndim
        else:
            ctx.fail(f"index item {e!r}")
    y = ctx.input(0)
    if axes:
        y = ctx.node("Slice", [y, _vector(ctx, starts), _vector(ctx, ends), ctx.ints(axes),
                               ctx.ints(steps)])
    if gather is not None:
        g, v = gather
        y = ctx.node("Gather", [y, ctx.name(v)], axis=g)
    if squeeze:
        y = ctx.squeeze(y, squeeze)
    if new_axes:
        y = ctx.unsqueeze(y, new_axes)
    if y == ctx.input(0):
        y = ctx.node("Identity", [y])
    return y


@lowers("strided_slice")
def _strided_slice(op, ctx):
    rank = op.operands[0].type.ndim
    axes = [a + rank if a < 0 else a for a in op.attrs["axes"]]
    return ctx.node("Slice", [ctx.input(0), ctx.ints(op.attrs["starts"]),
                              ctx.ints(op.attrs["ends"]), ctx.ints(axes),
                              ctx.ints(op.attrs["strides"])])


@lowers("gather")
def _gather(op, ctx):
    ax = op.attrs["axis"]
    return ctx.node("Gather", [ctx.input(0), ctx.input(1)], axis=int(ax or 0))


@lowers("take_along_axis")
def _take_along_axis(op, ctx):
    arr, idx = op.operands
    if tuple(arr.type.shape) != tuple(idx.type.shape) and op.attrs.get("broadcast", True):
        if arr.type.ndim != idx.type.ndim or -1 in arr.type.shape + idx.type.shape:
            ctx.fail("take_along_axis with broadcasting over shapes not known at export time")
        ax = int(op.attrs["axis"]) % arr.type.ndim
        # broadcast the indices (all dims but `axis`) as fw does, then GatherElements
        shape = [i if k == ax else max(a, i)
                 for k, (a, i) in enumerate(zip(arr.type.shape, idx.type.shape))]
        ind = ctx.node("Expand", [ctx.input(1), ctx.ints(shape)])
        shape_a = [a if k == ax else s for k, (a, s) in enumerate(zip(arr.type.shape, shape))]
        data = ctx.node("Expand", [ctx.input(0), ctx.ints(shape_a)])
        return ctx.node("GatherElements", [data, ind], axis=ax)
    return ctx.node("GatherElements", [ctx.input(0), ctx.input(1)], axis=int(op.attrs["axis"]))


@lowers("masked_fill")
def _masked_fill(op, ctx):
    return ctx.node("Where", [ctx.input(1), ctx.input(2), ctx.input(0)])


@lowers("one_hot")
def _one_hot(op, ctx):
    dt = op.results[0].type.dtype
    values = ctx.const(np.asarray([0, 1], dtype=dt.np))
    depth = ctx.const(np.asarray(int(op.attrs["num_classes"]), dtype="int64"))
    return ctx.node("OneHot", [ctx.input(0), depth, values], axis=-1)


@lowers("gather_nd")
def _gather_nd(op, ctx):
    # Paddle's gather_nd is ONNX GatherND with batch_dims=0
    idx = ctx.input(1)
    if op.operands[1].type.dtype.name != "int64":
        idx = ctx.cast(idx, "int64")
    return ctx.node("GatherND", [ctx.input(0), idx])
