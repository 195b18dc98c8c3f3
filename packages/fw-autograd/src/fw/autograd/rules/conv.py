"""VJP rules of convolutions.

Written through the *window index* of a sliding-window op (`_window`): an
integer table ``F[p, k]`` giving, for output position p and kernel offset k,
the flat input position it reads (-1 for padding). Gathering ``x[..., F]``
turns a convolution into an einsum, which has a rule; so ``conv`` and
``conv_transpose`` are differentiated (to any order) through that
re-expression.

A first-order eager backward (grad mode off, see `_explicit`) skips the
re-expressions: the input gradient of a convolution is the transposed convolution of
the output gradient (and vice versa), and weight gradients are ``conv_grad_weight``
-- each one native kernel.
"""

from __future__ import annotations

import numpy as np

import fw
from fw.autograd._registry import vjp
from fw.autograd.rules._explicit import explicit, spatial
from fw.autograd.rules._util import reshape_to, vjp_of
from fw.autograd.rules._window import channels_back, channels_first, gather_windows, window_index
from fw.core.ops import call
from fw.core.ops.conv import conv_geometry, conv_transpose_geometry, split_layout
from fw.core.ops.nn_grad import conv_transpose_pads

# ---------------------------------------------------------------- convolutions


def _conv_fn(x, weight, bias, stride, padding, dilation, groups,
             channel_last):
    n, c, sp = split_layout(x.shape, channel_last)
    cout = weight.shape[0]
    ks = tuple(weight.shape[2:])
    strides, pads, dils, outs = conv_geometry(sp, ks, stride, padding, dilation)
    xt = channels_first(x, channel_last)
    pt = gather_windows(xt, window_index(sp, ks, strides, dils, pads, outs))
    g, cg, og = groups, c // groups, cout // groups
    p, k = pt.shape[2], pt.shape[3]
    pt = reshape_to(pt, [n, g, cg, p, k])
    w = reshape_to(weight, [g, og, cg, k])
    out = fw.einsum("ngcpk,gock->ngop", pt, w)
    out = reshape_to(out, [n, cout] + list(outs))
    if bias is not None:
        out = out + reshape_to(bias, [1, cout] + [1] * len(sp))
    return channels_back(out, channel_last)


def _conv_t_fn(x, weight, bias, stride, padding, output_padding, dilation,
               groups, output_size, channel_last):
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
    xt = channels_first(x, channel_last)
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
    return channels_back(out, channel_last)


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
