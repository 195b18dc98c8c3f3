"""VJP rules of pooling.

Written through the *window index* of a sliding-window op (`_window`):
gathering ``x[..., F]`` turns a pooling into a reduction over the kernel
offsets, which has a rule; so ``avg_pool``/``lp_pool``/``adaptive_avg_pool``
are differentiated (to any order) through that re-expression. Max pooling
routes the gradient to the recorded argmax.

A first-order eager backward (grad mode off, see `_explicit`) skips the
re-expressions: pooling uses ``max_pool_grad`` / ``avg_pool_grad`` -- each one
native kernel.
"""

from __future__ import annotations

import math

import numpy as np

import fw
from fw.autograd._registry import vjp
from fw.autograd.rules._explicit import explicit, spatial
from fw.autograd.rules._util import composite, reshape_to, vjp_of
from fw.autograd.rules._window import channels_back, channels_first, gather_windows, window_index
from fw.core.ops import call
from fw.core.ops.conv import split_layout
from fw.core.ops.pool import adaptive_windows, pool_geometry

# ---------------------------------------------------------------- pooling


def _pool_windows(x, kernel_size, stride, padding, ceil_mode, channel_last):
    n, c, sp = split_layout(x.shape, channel_last)
    ks, strides, pads, outs = pool_geometry(sp, kernel_size, stride, padding, ceil_mode)
    index = window_index(sp, ks, strides, [1] * len(sp), pads, outs)
    return channels_first(x, channel_last), index, (n, c, sp, ks, strides, pads, outs)


def _avg_pool_fn(x, kernel_size, stride, padding, ceil_mode, exclusive,
                 divisor_override, channel_last):
    xt, index, (n, c, sp, ks, strides, pads, outs) = _pool_windows(
        x, kernel_size, stride, padding, ceil_mode, channel_last)
    total = fw.sum(gather_windows(xt, index), axis=-1)
    if divisor_override is not None:
        out = total / divisor_override
    else:
        cnt = np.ones(outs, dtype=np.float64)
        for d, (i, k, s, (b, e), o) in enumerate(zip(sp, ks, strides, pads, outs)):
            start = np.arange(o) * s - b
            cd = (np.minimum(start + k, i) - np.maximum(start, 0)) if exclusive else \
                (np.minimum(start + k, i + e) - start)
            shape = [1] * len(sp)
            shape[d] = o
            cnt = cnt * np.maximum(cd, 0).reshape(shape)
        div = np.maximum(cnt, 1).reshape(-1)
        out = total / fw.to_tensor(div, dtype=total.dtype)
    return channels_back(reshape_to(out, [n, c] + list(outs)), channel_last)


@vjp("avg_pool")
def _avg_pool_vjp(ctx, g):
    if not explicit(ctx):
        return vjp_of(_avg_pool_fn, ctx, g)
    return call("avg_pool_grad", g, input_size=spatial(ctx.shape(0), ctx.attrs["channel_last"]),
                **ctx.attrs)


@composite("lp_pool")
def _lp_pool_fn(x, norm_type, kernel_size, stride, padding, ceil_mode,
                channel_last):
    if math.isinf(norm_type):
        return call("max_pool", x, kernel_size=kernel_size, stride=stride, padding=padding,
                    ceil_mode=ceil_mode, channel_last=channel_last)
    xt, index, (n, c, sp, ks, strides, pads, outs) = _pool_windows(
        x, kernel_size, stride, padding, ceil_mode, channel_last)
    total = fw.sum(gather_windows(xt ** norm_type, index), axis=-1)
    # a window of padding alone sums to 0: its output 0 does not depend on x (and the
    # root's infinite slope at 0 must not turn the zero gradient into NaN)
    pos = total > 0
    out = fw.where(pos, fw.where(pos, total, fw.ones_like(total)) ** (1.0 / norm_type),
                   fw.zeros_like(total))
    return channels_back(reshape_to(out, [n, c] + list(outs)), channel_last)


def _scatter_plane(g, mask, x_shape, channel_last):
    """Add g at the flat spatial positions `mask` of each (n, c) plane."""
    gt = channels_first(g, channel_last)
    mt = channels_first(mask, channel_last)
    n, c = gt.shape[0], gt.shape[1]
    xs = list(x_shape)
    sp = xs[1:-1] if channel_last else xs[2:]
    plane = int(np.prod(sp))
    z = fw.zeros([n, c, plane], dtype=g.dtype)
    r = fw.put_along_axis(z, reshape_to(mt.astype("int64"), [n, c, -1]),
                          reshape_to(gt, [n, c, -1]), 2, reduce="add")
    return channels_back(reshape_to(r, [n, c] + list(sp)), channel_last)


def _max_pool_grad(ctx, g, mask):
    cl = ctx.attrs["channel_last"]
    if explicit(ctx):
        return call("max_pool_grad", g, mask, input_size=spatial(ctx.shape(0), cl),
                    channel_last=cl)
    return _scatter_plane(g, mask, ctx.shape(0), cl)


@vjp("max_pool_with_index", "adaptive_max_pool", inputs=False, outputs=True)
def _max_pool_idx(ctx, g):
    return _max_pool_grad(ctx, g[0], ctx.outputs[1])


@vjp("max_pool")
def _max_pool(ctx, g):
    x = ctx.inputs[0]
    _, mask = call("max_pool_with_index", x, **ctx.attrs)
    return _max_pool_grad(ctx, g, mask)


@composite("adaptive_avg_pool")
def _adaptive_avg_fn(x, output_size, channel_last):
    n, c, sp = split_layout(x.shape, channel_last)
    from fw.core.ops.conv import expand

    outs = [i if o is None else o for i, o in zip(sp, expand(output_size, len(sp),
                                                            "output_size"))]
    v = channels_first(x, channel_last)
    for d, (i, o) in enumerate(zip(sp, outs)):  # separable: one spatial dim at a time
        start, end = adaptive_windows(i, o)
        m = np.zeros((i, o))
        for j in range(o):
            m[start[j]:end[j], j] = 1.0 / (end[j] - start[j])
        ax = 2 + d
        v = fw.moveaxis(fw.matmul(fw.moveaxis(v, ax, -1), fw.to_tensor(m, dtype=v.dtype)),
                        -1, ax)
    return channels_back(v, channel_last)


@vjp("max_unpool")
def _max_unpool(ctx, g):
    # each value went to position indices[i]; with repeated indices the last write wins
    x, idx = ctx.inputs
    cl = ctx.attrs["channel_last"]
    gt = channels_first(g, cl)
    it = channels_first(idx, cl)
    n, c = gt.shape[0], gt.shape[1]
    p = int(np.prod(it.shape[2:]))
    flat_idx = reshape_to(it.astype("int64"), [n, c, p])
    picked = fw.take_along_axis(reshape_to(gt, [n, c, int(np.prod(gt.shape[2:]))]),
                                flat_idx, 2)
    order = fw.broadcast_to(fw.arange(p, dtype="int64"), [n, c, p])
    slots = fw.full([n, c, int(np.prod(gt.shape[2:]))], -1, dtype="int64")
    winner = fw.take_along_axis(fw.put_along_axis(slots, flat_idx, order, 2), flat_idx, 2)
    picked = fw.where(winner == order, picked, fw.zeros_like(picked))
    return channels_back(reshape_to(picked, list(it.shape)), cl), None
