"""VJP rules of convolutions and pooling.

Both are written through one device: the *window index* of a sliding-window op,
an integer table ``F[p, k]`` giving, for output position p and kernel offset k,
the flat input position it reads (-1 for padding). Gathering ``x[..., F]``
turns a convolution into an einsum and a pooling into a reduction over k, both
of which have rules; so ``conv``/``conv_transpose``/``avg_pool``/``lp_pool``/
``adaptive_avg_pool`` are differentiated (to any order) through those
re-expressions. Max pooling routes the gradient to the recorded argmax.

A first-order eager backward (grad mode off, see `_explicit`) skips the
re-expressions: the input gradient of a convolution is the transposed convolution of
the output gradient (and vice versa), weight gradients are ``conv_grad_weight``, and
pooling uses ``max_pool_grad`` / ``avg_pool_grad`` -- each one native kernel.
"""

from __future__ import annotations

import math

import numpy as np

import fw
from fw.autograd._registry import vjp
from fw.autograd.rules._explicit import explicit, spatial
from fw.autograd.rules._util import composite, reshape_to, vjp_of
from fw.core.ops import call
from fw.core.ops.conv import conv_geometry, conv_transpose_geometry, split_layout
from fw.core.ops.nn_grad import conv_transpose_pads
from fw.core.ops.pool import adaptive_windows, pool_geometry


def window_index(in_sizes, ks, strides, dils, pads, outs):
    """F [prod(outs), prod(ks)]: flat row-major input index read by (output position,
    kernel offset), -1 where that falls in the padding."""
    nd = len(in_sizes)
    flat = np.zeros([1] * (2 * nd), dtype=np.int64)
    valid = np.ones([1] * (2 * nd), dtype=bool)
    for d in range(nd):
        o = np.arange(outs[d]) * strides[d] - pads[d][0]
        k = np.arange(ks[d]) * dils[d]
        pos = o[:, None] + k[None, :]  # [O_d, K_d]
        shape = [1] * (2 * nd)
        shape[d], shape[nd + d] = outs[d], ks[d]
        pos = pos.reshape(shape)
        flat = flat * in_sizes[d] + pos
        valid = valid & (pos >= 0) & (pos < in_sizes[d])
    flat = np.where(valid, flat, -1)
    return flat.reshape(int(np.prod(outs)), int(np.prod(ks)))


def _channels_first(x, channel_last):
    return fw.moveaxis(x, -1, 1) if channel_last else x


def _channels_back(x, channel_last):
    return fw.moveaxis(x, 1, -1) if channel_last else x


def gather_windows(xt, index):
    """[N, C, *S] -> [N, C, P, K] window values (0 in the padding)."""
    n, c = xt.shape[0], xt.shape[1]
    xf = reshape_to(xt, [n, c, -1])
    safe = np.where(index >= 0, index, 0)
    pt = xf[:, :, fw.to_tensor(safe)]
    if (index < 0).any():
        pt = pt * fw.to_tensor((index >= 0).astype(np.float64), dtype=pt.dtype)
    return pt


# ---------------------------------------------------------------- convolutions


def _conv_fn(x, weight, bias=None, stride=1, padding=0, dilation=1, groups=1,
             channel_last=False):
    n, c, sp = split_layout(x.shape, channel_last)
    cout = weight.shape[0]
    ks = tuple(weight.shape[2:])
    strides, pads, dils, outs = conv_geometry(sp, ks, stride, padding, dilation)
    xt = _channels_first(x, channel_last)
    pt = gather_windows(xt, window_index(sp, ks, strides, dils, pads, outs))
    g, cg, og = groups, c // groups, cout // groups
    p, k = pt.shape[2], pt.shape[3]
    pt = reshape_to(pt, [n, g, cg, p, k])
    w = reshape_to(weight, [g, og, cg, k])
    out = fw.einsum("ngcpk,gock->ngop", pt, w)
    out = reshape_to(out, [n, cout] + list(outs))
    if bias is not None:
        out = out + reshape_to(bias, [1, cout] + [1] * len(sp))
    return _channels_back(out, channel_last)


def _conv_t_fn(x, weight, bias=None, stride=1, padding=0, output_padding=0, dilation=1,
               groups=1, output_size=None, channel_last=False):
    n, c, sp = split_layout(x.shape, channel_last)
    ks = tuple(weight.shape[2:])
    g = groups
    cg, og = c // g, weight.shape[1]
    cout = og * g
    strides, pads, dils, outs = conv_transpose_geometry(sp, ks, stride, padding,
                                                        output_padding, dilation, output_size)
    # input position p with kernel offset k writes output position p*s + k*d - pad_begin:
    # the window index of that map, read backwards, is a scatter-add
    index = window_index(outs, ks, strides, dils, [(b, 0) for b, _ in pads], sp)
    xt = _channels_first(x, channel_last)
    xs = reshape_to(xt, [n, g, cg, int(np.prod(sp))])
    kk = int(np.prod(ks))
    w = reshape_to(weight, [g, cg, og, kk])
    cols = fw.einsum("ngcp,gcok->ngopk", xs, w)  # [N, G, Og, P, K]
    cols = reshape_to(cols, [n, cout, -1])
    ok = index >= 0
    if not ok.all():
        cols = cols * fw.to_tensor(ok.reshape(-1).astype(np.float64), dtype=cols.dtype)
    idx = np.where(ok, index, 0).reshape(-1)
    q = int(np.prod(outs))
    out = fw.index_add(fw.zeros([n, cout, q], dtype=cols.dtype), fw.to_tensor(idx), 2, cols)
    out = reshape_to(out, [n, cout] + list(outs))
    if bias is not None:
        out = out + reshape_to(bias, [1, cout] + [1] * len(sp))
    return _channels_back(out, channel_last)


def _flat(pads):
    return [v for p in pads for v in p]


@vjp("conv")
def _conv_vjp(ctx, g):
    if not explicit(ctx):
        return vjp_of(_conv_fn, ctx, g)
    x, w, b = ctx.inputs
    a = ctx.attrs
    cl = a["channel_last"]
    sp = spatial(ctx.shape(0), cl)
    ks = list(ctx.shape(1)[2:])
    strides, pads, dils, _ = conv_geometry(sp, ks, a["stride"], a["padding"], a["dilation"])
    geo = {"stride": list(strides), "padding": _flat(pads), "dilation": list(dils),
           "groups": a["groups"], "channel_last": cl}
    gx = gw = gb = None
    if ctx.needs(0):  # the adjoint of the convolution is the transposed one
        gx = call("conv_transpose", g, w, output_size=sp, **geo)
    want_b = b is not None and ctx.needs(2)
    if ctx.needs(1) or want_b:
        gw, gbias = call("conv_grad_weight", x, g, kernel_size=ks, **geo)
        gw = gw if ctx.needs(1) else None
        gb = gbias if want_b else None
    return gx, gw, gb


@vjp("conv_transpose")
def _conv_t_vjp(ctx, g):
    if not explicit(ctx):
        return vjp_of(_conv_t_fn, ctx, g)
    x, w, b = ctx.inputs
    a = ctx.attrs
    cl = a["channel_last"]
    sp = spatial(ctx.shape(0), cl)
    ks = list(ctx.shape(1)[2:])
    strides, pads, dils, outs = conv_transpose_geometry(
        sp, ks, a["stride"], a["padding"], a["output_padding"], a["dilation"], a["output_size"])
    # the convolution mapping this op's output back onto its input
    cpads = conv_transpose_pads(sp, outs, ks, strides, dils, pads)
    if cpads is None:
        return vjp_of(_conv_t_fn, ctx, g)
    geo = {"stride": list(strides), "padding": _flat(cpads), "dilation": list(dils),
           "groups": a["groups"], "channel_last": cl}
    gx = gw = gb = None
    if ctx.needs(0):
        gx = call("conv", g, w, None, **geo)
    if ctx.needs(1):  # roles swapped: g is that convolution's input, x its output
        gw = call("conv_grad_weight", g, x, kernel_size=ks, **geo)[0]
    if b is not None and ctx.needs(2):
        nd = len(sp)
        axes = [0] + (list(range(1, nd + 1)) if cl else list(range(2, nd + 2)))
        gb = fw.sum(g, axis=axes)
    return gx, gw, gb


# ---------------------------------------------------------------- pooling


def _pool_windows(x, kernel_size, stride, padding, ceil_mode, channel_last):
    n, c, sp = split_layout(x.shape, channel_last)
    ks, strides, pads, outs = pool_geometry(sp, kernel_size, stride, padding, ceil_mode)
    index = window_index(sp, ks, strides, [1] * len(sp), pads, outs)
    return _channels_first(x, channel_last), index, (n, c, sp, ks, strides, pads, outs)


def _avg_pool_fn(x, kernel_size=None, stride=None, padding=0, ceil_mode=False, exclusive=True,
                 divisor_override=None, channel_last=False):
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
    return _channels_back(reshape_to(out, [n, c] + list(outs)), channel_last)


@vjp("avg_pool")
def _avg_pool_vjp(ctx, g):
    if not explicit(ctx):
        return vjp_of(_avg_pool_fn, ctx, g)
    return call("avg_pool_grad", g, input_size=spatial(ctx.shape(0), ctx.attrs["channel_last"]),
                **ctx.attrs)


@composite("lp_pool")
def _lp_pool_fn(x, norm_type=None, kernel_size=None, stride=None, padding=0, ceil_mode=False,
                channel_last=False):
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
    return _channels_back(reshape_to(out, [n, c] + list(outs)), channel_last)


def _scatter_plane(g, mask, x_shape, channel_last):
    """Add g at the flat spatial positions `mask` of each (n, c) plane."""
    gt = _channels_first(g, channel_last)
    mt = _channels_first(mask, channel_last)
    n, c = gt.shape[0], gt.shape[1]
    xs = list(x_shape)
    sp = xs[1:-1] if channel_last else xs[2:]
    plane = int(np.prod(sp))
    z = fw.zeros([n, c, plane], dtype=g.dtype)
    r = fw.put_along_axis(z, reshape_to(mt.astype("int64"), [n, c, -1]),
                          reshape_to(gt, [n, c, -1]), 2, reduce="add")
    return _channels_back(reshape_to(r, [n, c] + list(sp)), channel_last)


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
def _adaptive_avg_fn(x, output_size=None, channel_last=False):
    n, c, sp = split_layout(x.shape, channel_last)
    from fw.core.ops.conv import expand

    outs = [i if o is None else o for i, o in zip(sp, expand(output_size, len(sp),
                                                            "output_size"))]
    v = _channels_first(x, channel_last)
    for d, (i, o) in enumerate(zip(sp, outs)):  # separable: one spatial dim at a time
        start, end = adaptive_windows(i, o)
        m = np.zeros((i, o))
        for j in range(o):
            m[start[j]:end[j], j] = 1.0 / (end[j] - start[j])
        ax = 2 + d
        v = fw.moveaxis(fw.matmul(fw.moveaxis(v, ax, -1), fw.to_tensor(m, dtype=v.dtype)),
                        -1, ax)
    return _channels_back(v, channel_last)


@vjp("max_unpool")
def _max_unpool(ctx, g):
    # each value went to position indices[i]; with repeated indices the last write wins
    x, idx = ctx.inputs
    cl = ctx.attrs["channel_last"]
    gt = _channels_first(g, cl)
    it = _channels_first(idx, cl)
    n, c = gt.shape[0], gt.shape[1]
    p = int(np.prod(it.shape[2:]))
    flat_idx = reshape_to(it.astype("int64"), [n, c, p])
    picked = fw.take_along_axis(reshape_to(gt, [n, c, int(np.prod(gt.shape[2:]))]),
                                flat_idx, 2)
    order = fw.broadcast_to(fw.arange(p, dtype="int64"), [n, c, p])
    slots = fw.full([n, c, int(np.prod(gt.shape[2:]))], -1, dtype="int64")
    winner = fw.take_along_axis(fw.put_along_axis(slots, flat_idx, order, 2), flat_idx, 2)
    picked = fw.where(winner == order, picked, fw.zeros_like(picked))
    return _channels_back(reshape_to(picked, list(it.shape)), cl), None
