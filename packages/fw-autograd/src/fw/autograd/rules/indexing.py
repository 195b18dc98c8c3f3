"""VJP rules of indexing ops: gathers scatter their gradient back (summing over
repeated indices), scatters gather it, and masks route it. Index arguments get
no gradient.

Where an op overwrites with repeated indices (``scatter(overwrite=True)``,
``index_put``, ``put_along_axis(reduce="assign")``, ``x[idx] = v``), only the
value that stayed (the last one written) gets the gradient of its position, as
the function itself says (`_winners`).
"""

from __future__ import annotations

import fw
from fw.autograd._registry import vjp
from fw.autograd.rules._util import (
    gather_transpose,
    numel,
    reshape_like,
    reshape_to,
    static_shape,
    zeros_like,
)
from fw.core.ops import call


def _winners(like, write, read):
    """Where several values are written to one place the last one stays: a mask (in
    the values' layout) of the values that were not overwritten. `write(slots,
    order)` writes value numbers into a -1 tensor shaped like `like` (the tensor
    written to, or its static shape), `read(slots)` reads them back at the values'
    positions."""
    shape = list(like) if isinstance(like, list) else list(like.shape)
    if static_shape(shape):
        slots = fw.full(shape, -1, dtype="int64")
        ids = reshape_to(fw.arange(numel(shape), dtype="int64"), shape)
    else:  # IR, run-time sizes
        slots = fw.full_like(like, -1, dtype="int64")
        ids = fw.reshape(fw.arange(fw.numel(like), dtype="int64"), fw.shape(like))
    order_like = read(ids)
    if static_shape(order_like.shape):
        order = reshape_to(fw.arange(order_like.size, dtype="int64"), list(order_like.shape))
    else:  # IR: a boolean index selects a run-time number of places
        order = fw.reshape(fw.arange(fw.numel(order_like), dtype="int64"),
                           fw.shape(order_like))
    return read(write(slots, order)) == order


@vjp("getitem")
def _getitem(ctx, g):
    x, indices = ctx.inputs
    index = ctx.attrs["index"]
    if not indices:
        # basic indexing selects every element at most once: write g into zeros
        gx = call("setitem", zeros_like(x).astype(g.dtype), g, [], index=index)
    else:
        gx = gather_transpose(g, ctx, 0, lambda ids: call("getitem", ids, indices, index=index))
    return gx, None


@vjp("setitem")
def _setitem(ctx, g):
    x, value, indices = ctx.inputs
    index = ctx.attrs["index"]
    gx = gv = None
    if ctx.needs(0):
        gx = call("setitem", g, 0.0, indices, index=index)
    if ctx.needs(1):
        gv = call("getitem", g, indices, index=index)
        if indices:  # repeated advanced indices: the last write wins
            win = _winners(x, lambda t, o: call("setitem", t, o, indices, index=index),
                           lambda t: call("getitem", t, indices, index=index))
            gv = fw.where(win, gv, zeros_like(gv))
    return gx, gv, None


@vjp("gather")
def _gather(ctx, g):
    x, index = ctx.inputs
    axis = ctx.attrs["axis"]
    shape = list(ctx.shape(0))
    a = axis % len(shape)
    n = index.size
    idx = reshape_to(index, [n])
    # the index's dims (none for a 0-D index) replace axis `a`: flatten them to one
    gg = reshape_to(g, shape[:a] + [n] + shape[a + 1:])
    z = fw.zeros(ctx.shape(0), dtype=g.dtype) if static_shape(ctx.shape(0)) else \
        zeros_like(x).astype(g.dtype)
    return fw.index_add(z, idx, axis, gg), None


@vjp("gather_nd")
def _gather_nd(ctx, g):
    x, index = ctx.inputs
    return fw.scatter_nd_add(zeros_like(x).astype(g.dtype), index, g), None


@vjp("take_along_axis")
def _take_along_axis(ctx, g):
    arr, indices = ctx.inputs
    return gather_transpose(g, ctx, 0, lambda ids: call("take_along_axis", ids, indices,
                                                        **ctx.attrs)), None


@vjp("take")
def _take(ctx, g):
    x, index = ctx.inputs
    return gather_transpose(g, ctx, 0, lambda ids: call("take", ids, index, **ctx.attrs)), None


@vjp("multiplex")
def _multiplex(ctx, g):
    inputs, index = ctx.inputs
    nd = len(ctx.shape(0, 0))
    idx = reshape_to(index, [-1] + [1] * (nd - 1))
    k = len(inputs)
    idx = fw.where(idx < 0, idx + k, idx)
    z = zeros_like(g)
    grads = [fw.where(idx == j, g, z) if ctx.needs(0, j) else None for j in range(k)]
    return grads, None


@vjp("scatter")
def _scatter(ctx, g):
    x, index, updates = ctx.inputs
    gx = gu = None
    if ctx.needs(0):
        gx = fw.scatter(g, index, zeros_like(updates).astype(g.dtype), overwrite=True)
    if ctx.needs(2):
        idx = reshape_to(index, [index.size])
        gu = fw.gather(g, idx, axis=0)
        if ctx.attrs["overwrite"]:  # repeated rows: the last update wins
            rows = ctx.shape(0)[0]
            # a 1-D stand-in for x's rows (x itself on IR, where rows may be dynamic)
            like = [rows] if rows >= 0 else x[(slice(None),) + (0,) * (x.ndim - 1)]
            win = _winners(like, lambda t, o: fw.scatter(t, idx, o),
                           lambda t: fw.gather(t, idx, axis=0))
            gu = gu * reshape_to(win, [index.size] + [1] * (len(ctx.shape(0)) - 1)).astype(
                gu.dtype)
        gu = reshape_to(gu, list(updates.shape))
    return gx, None, gu


@vjp("scatter_nd_add")
def _scatter_nd_add(ctx, g):
    x, index, updates = ctx.inputs
    return (g if ctx.needs(0) else None, None,
            fw.gather_nd(g, index) if ctx.needs(2) else None)


@vjp("index_add")
def _index_add(ctx, g):
    x, index, value = ctx.inputs
    axis = ctx.attrs["axis"]
    return (g if ctx.needs(0) else None, None,
            fw.gather(g, reshape_to(index, [-1]), axis=axis) if ctx.needs(2) else None)


@vjp("index_fill")
def _index_fill(ctx, g):
    x, index, value = ctx.inputs
    axis = ctx.attrs["axis"]
    kept = fw.index_fill(g, index, axis, 0.0)
    gv = None
    if ctx.needs(2):
        gv = reshape_like(fw.sum(g - kept), ctx, 2)
    return (kept if ctx.needs(0) else None), None, gv


@vjp("index_put")
def _index_put(ctx, g):
    x, indices, value = ctx.inputs
    acc = ctx.attrs["accumulate"]
    gx = gv = None
    if ctx.needs(0):
        gx = g if acc else fw.index_put(g, tuple(indices), 0.0)
    if ctx.needs(2):
        key = ("t",) * len(indices)
        gv = call("getitem", g, list(indices), index=key)
        if not acc:  # repeated positions: the last write wins
            win = _winners(x, lambda t, o: fw.index_put(t, tuple(indices), o),
                           lambda t: call("getitem", t, list(indices), index=key))
            gv = fw.where(win, gv, zeros_like(gv))
    return gx, None, gv


@vjp("masked_fill")
def _masked_fill(ctx, g):
    x, mask, value = ctx.inputs
    z = zeros_like(g)
    return (fw.where(mask, z, g) if ctx.needs(0) else None, None,
            fw.where(mask, g, z) if ctx.needs(2) else None)


@vjp("masked_select")
def _masked_select(ctx, g):
    x, mask = ctx.inputs
    xb, mb = fw.broadcast_tensors([x, mask])
    return fw.masked_scatter(zeros_like(xb).astype(g.dtype), mb, g), None


@vjp("masked_scatter")
def _masked_scatter(ctx, g):
    x, mask, value = ctx.inputs
    z = zeros_like(g)
    gx = fw.where(mask, z, g) if ctx.needs(0) else None
    gv = None
    if ctx.needs(2):
        _, mb = fw.broadcast_tensors([g, mask])
        picked = fw.masked_select(g, mb)
        if not static_shape(value.shape):
            from fw.core.errors import UnsupportedError

            raise UnsupportedError(f"masked_scatter: the gradient of 'value' needs its static "
                                   f"shape, got {list(value.shape)}")
        n = value.size
        if picked.shape[0] < 0:  # IR: how many were picked is known at run time only
            flat = fw.slice(fw.concat([picked, fw.zeros([n], dtype=g.dtype)]), [0], [0], [n])
        else:
            rest = n - picked.shape[0]
            flat = fw.concat([picked, fw.zeros([rest], dtype=g.dtype)]) if rest else picked
        gv = reshape_to(flat, value.shape)
    return gx, None, gv


def _slice_attrs(ctx):
    return {k: ctx.attrs[k] for k in ("axes", "starts", "ends", "strides")}


@vjp("strided_slice")
def _strided_slice(ctx, g):
    x = ctx.inputs[0]
    return call("slice_scatter", zeros_like(x).astype(g.dtype), g, **_slice_attrs(ctx))


@vjp("slice_scatter")
def _slice_scatter(ctx, g):
    x, value = ctx.inputs
    a = _slice_attrs(ctx)
    return (call("slice_scatter", g, zeros_like(value).astype(g.dtype), **a)
            if ctx.needs(0) else None,
            call("strided_slice", g, **a) if ctx.needs(1) else None)


@vjp("diagonal")
def _diagonal(ctx, g):
    x = ctx.inputs[0]
    return fw.diagonal_scatter(zeros_like(x).astype(g.dtype), g, **ctx.attrs)


@vjp("diagonal_scatter")
def _diagonal_scatter(ctx, g):
    x, y = ctx.inputs
    return (fw.diagonal_scatter(g, zeros_like(y).astype(g.dtype), **ctx.attrs)
            if ctx.needs(0) else None,
            fw.diagonal(g, **ctx.attrs) if ctx.needs(1) else None)


@vjp("put_along_axis", outputs=True)
def _put_along_axis(ctx, g):
    arr, indices, values = ctx.inputs
    a = ctx.attrs
    axis, reduce, include_self = a["axis"], a["reduce"], a["include_self"]
    bc = a["broadcast"]
    out = ctx.outputs[0]

    def take(t):
        return fw.take_along_axis(t, indices, axis, broadcast=bc)

    def put(t, v, how="assign"):
        return fw.put_along_axis(t, indices, v, axis, reduce=how, broadcast=bc)

    ga = gv = None
    if reduce == "assign":
        if ctx.needs(0):
            ga = put(g, 0.0)
        if ctx.needs(2):
            win = _winners(arr, lambda t, o: put(t, o), take)
            gv = fw.where(win, take(g), zeros_like(take(g)))
    elif reduce == "add":
        if ctx.needs(0):
            ga = g if include_self else put(g, 0.0)
        if ctx.needs(2):
            gv = take(g)
    elif reduce == "mean":
        cnt = put(zeros_like(g), fw.ones_like(take(g)), "add")
        div = cnt + (1 if include_self else 0)
        div = fw.where(div == 0, 1.0, div).astype(g.dtype)
        if ctx.needs(0):
            ga = g / div if include_self else fw.where(cnt > 0, zeros_like(g), g)
        if ctx.needs(2):
            gv = take(g / div)
    elif reduce == "mul":
        # out = arr * prod(values put there): d/d arr = that product (1 where nothing
        # was written; not out / arr, which is 0/0 where arr is 0), d/d v = out / v
        if ctx.needs(0):
            ga = g * put(fw.ones_like(g), values, "mul") if include_self else put(g, 0.0)
        if ctx.needs(2):
            gv = take(g * out) / values
    else:  # amin / amax: split among the elements equal to the result
        hit_v = (values == take(out)).astype(g.dtype)
        hit_a = (arr == out).astype(g.dtype)
        if not include_self:  # the places written to forget arr; the others keep it
            hit_a = fw.where(put(fw.ones_like(g), 0.0) == 0, zeros_like(g), hit_a)
        cnt = hit_a + put(zeros_like(g), hit_v, "add")
        share = g / fw.where(cnt == 0, 1.0, cnt)
        if ctx.needs(0):
            ga = share * hit_a
        if ctx.needs(2):
            gv = take(share) * hit_v
    return ga, None, gv
