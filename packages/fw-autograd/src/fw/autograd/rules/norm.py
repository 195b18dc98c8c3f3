"""VJP rules of normalisation layers, through re-expressions of their reference
kernels with fw ops (`_util.composite`): the statistics outputs (mean, inv_std,
the updated running stats) are differentiable functions of the input too.

batch_norm and layer_norm use their explicit backward ops (``batch_norm_grad``,
``layer_norm_grad``: one native kernel each) for a first-order eager backward in
which only ``out`` has a gradient (see `_explicit`)."""

from __future__ import annotations

import math

import fw
from fw.autograd._registry import vjp
from fw.autograd.rules._explicit import all_zero, explicit
from fw.autograd.rules._util import composite, reshape_to, vjp_of
from fw.core.ops import call


def _mean_var(x, axes):
    mean = fw.mean(x, axis=axes, keepdim=True)
    dev = x - mean
    return mean, fw.mean(dev * dev, axis=axes, keepdim=True)


def _affine(y, weight, bias, shape):
    if weight is not None:
        y = y * reshape_to(weight, shape)
    if bias is not None:
        y = y + reshape_to(bias, shape)
    return y


def _bn_fn(x, running_mean, running_var, weight, bias, training, momentum,
           epsilon, channel_last, use_global_stats):
    nd = x.ndim
    ax = nd - 1 if channel_last else 1
    c = x.shape[ax]
    bshape = [1] * nd
    bshape[ax] = c
    rm = reshape_to(running_mean.astype(x.dtype), bshape)
    rv = reshape_to(running_var.astype(x.dtype), bshape)
    if training and not use_global_stats:
        axes = [i for i in range(nd) if i != ax]
        mean, var = _mean_var(x, axes)
        mean_out = momentum * rm + (1.0 - momentum) * mean
        var_out = momentum * rv + (1.0 - momentum) * var
    else:
        mean, var = rm, rv
        mean_out, var_out = rm, rv
    inv_std = 1.0 / fw.sqrt(var + epsilon)
    y = _affine((x - mean) * inv_std, weight, bias, bshape)
    return (y, reshape_to(mean_out, list(running_mean.shape)),
            reshape_to(var_out, list(running_var.shape)), reshape_to(mean, [c]),
            reshape_to(inv_std, [c]))


@vjp("batch_norm", outputs=True)
def _bn_vjp(ctx, g):
    # the running statistics rarely require grad (they are buffers); when they do, or
    # when a statistics output has a gradient, the re-expression handles it
    if not explicit(ctx) or ctx.needs(1) or ctx.needs(2) or not all_zero(*g[1:]):
        return vjp_of(_bn_fn, ctx, g)
    x, _, _, w, b = ctx.inputs
    a = ctx.attrs
    outs = ctx.outputs
    gx, gw, gb = call("batch_norm_grad", x, w, outs[3], outs[4], g[0], epsilon=a["epsilon"],
                      channel_last=a["channel_last"],
                      batch_stats=bool(a["training"] and not a["use_global_stats"]))
    return (gx if ctx.needs(0) else None, None, None,
            gw if w is not None and ctx.needs(3) else None,
            gb if b is not None and ctx.needs(4) else None)


def _begin(b, nd):
    return b % nd if b < 0 else b


def _ln_fn(x, weight, bias, epsilon, begin_norm_axis):
    b = _begin(begin_norm_axis, x.ndim)
    axes = list(range(b, x.ndim))
    mean, var = _mean_var(x, axes)
    inv_std = 1.0 / fw.sqrt(var + epsilon)
    y = _affine((x - mean) * inv_std, weight, bias, list(x.shape[b:]))
    lead = list(x.shape[:b])
    return y, reshape_to(mean, lead), reshape_to(inv_std, lead)


@vjp("layer_norm", outputs=True)
def _ln_vjp(ctx, g):
    if not explicit(ctx) or not all_zero(g[1], g[2]):
        return vjp_of(_ln_fn, ctx, g)
    x, w, b = ctx.inputs
    a = ctx.attrs
    outs = ctx.outputs
    gx, gw, gb = call("layer_norm_grad", x, w, outs[1], outs[2], g[0], epsilon=a["epsilon"],
                      begin_norm_axis=a["begin_norm_axis"])
    return (gx if ctx.needs(0) else None,
            reshape_to(gw, ctx.shape(1)) if w is not None and ctx.needs(1) else None,
            reshape_to(gb, ctx.shape(2)) if b is not None and ctx.needs(2) else None)


@composite("rms_norm")
def _rms_fn(x, weight, bias, epsilon, begin_norm_axis):
    b = _begin(begin_norm_axis, x.ndim)
    axes = list(range(b, x.ndim))
    ms = fw.mean(x * x, axis=axes, keepdim=True)
    inv = 1.0 / fw.sqrt(ms + epsilon)
    y = _affine(x * inv, weight, bias, list(x.shape[b:]))
    return y, reshape_to(inv, list(x.shape[:b]))


def _grouped(x, weight, bias, groups, epsilon, channel_last):
    xf = fw.moveaxis(x, -1, 1) if channel_last else x
    n, c = xf.shape[:2]
    sp = list(xf.shape[2:])
    xg = reshape_to(xf, [n, groups, c // groups] + sp)
    axes = list(range(2, xg.ndim))
    mean, var = _mean_var(xg, axes)
    inv_std = 1.0 / fw.sqrt(var + epsilon)
    y = reshape_to((xg - mean) * inv_std, list(xf.shape))
    y = _affine(y, weight, bias, [1, c] + [1] * len(sp))
    if channel_last:
        y = fw.moveaxis(y, 1, -1)
    return y, reshape_to(mean, [n, groups]), reshape_to(inv_std, [n, groups])


@composite("group_norm")
def _gn_fn(x, weight, bias, num_groups, epsilon, channel_last):
    return _grouped(x, weight, bias, num_groups, epsilon, channel_last)


@composite("instance_norm")
def _in_fn(x, weight, bias, epsilon, channel_last):
    c = x.shape[-1] if channel_last else x.shape[1]
    return _grouped(x, weight, bias, c, epsilon, channel_last)


@composite("local_response_norm")
def _lrn_fn(x, size, alpha, beta, k, channel_last):
    ax = x.ndim - 1 if channel_last else 1
    sq = fw.moveaxis(x * x, ax, -1)
    c = sq.shape[-1]
    pads = [0] * (2 * sq.ndim)
    pads[-2], pads[-1] = size // 2, (size - 1) // 2
    padded = fw.core.ops.call("pad", sq, paddings=pads, mode="constant", value=0.0)
    s = None
    for j in range(size):  # the window sum as a sum of shifted slices
        part = fw.slice(padded, [sq.ndim - 1], [j], [j + c])
        s = part if s is None else s + part
    s = fw.moveaxis(s, -1, ax)
    return x / (k + (alpha / size) * s) ** beta


@composite("normalize")
def _normalize_fn(x, p, axis, epsilon):
    if math.isinf(p):
        nrm = fw.amax(fw.abs(x), axis=axis, keepdim=True)
    else:  # vector_norm's rule is safe at zero vectors
        nrm = fw.linalg.vector_norm(x, p, axis=axis, keepdim=True)
    return x / fw.maximum(nrm, epsilon)
