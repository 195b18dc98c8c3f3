"""VJP rules of the remaining layer ops of fw.nn.functional: linear and bilinear
maps, embedding, dropout, rearrangements (pixel/channel shuffles, fold/unfold),
interpolation, attention, distances and label smoothing."""

from __future__ import annotations

import numpy as np

import fw
from fw.autograd._registry import vjp
from fw.autograd.rules._explicit import explicit
from fw.autograd.rules._util import (
    composite,
    flatten_lead,
    gather_transpose,
    reshape_to,
    zeros_like,
)
from fw.core.errors import UnsupportedError
from fw.core.ir import no_building
from fw.core.ops import call
from fw.core.ops.conv import split_layout


@vjp("linear")
def _linear(ctx, g):
    # out = x @ W + b with W [in, out]
    x, w, b = ctx.inputs
    gx = fw.matmul(g, w, transpose_y=True) if ctx.needs(0) else None
    gw = None
    if ctx.needs(1):
        gw = fw.matmul(flatten_lead(x), flatten_lead(g), transpose_x=True)
    gb = None
    if b is not None and ctx.needs(2):
        gb = reshape_to(fw.sum(flatten_lead(g), axis=0), list(b.shape))
    return gx, gw, gb


@composite("bilinear")
def _bilinear_fn(x1, x2, weight, bias):
    out = fw.einsum("ni,oij,nj->no", x1, weight, x2)
    if bias is not None:
        out = out + reshape_to(bias, [-1])
    return out


@vjp("embedding")
def _embedding(ctx, g):
    ids, w = ctx.inputs
    v, d = w.shape[0], w.shape[-1]
    flat_ids = reshape_to(ids, [ids.size])
    gf = reshape_to(g, [ids.size, d])
    pad = ctx.attrs["padding_idx"]
    if pad is not None:  # the padding row gets no gradient
        gf = fw.where(fw.unsqueeze(flat_ids == (pad % v), -1), zeros_like(gf), gf)
    return None, fw.index_add(fw.zeros([v, d], dtype=g.dtype), flat_ids, 0, gf)


@vjp("dropout", inputs=False, outputs=True)
def _dropout(ctx, g):
    a = ctx.attrs
    p = a["p"]
    if not a["training"]:
        return g[0] if a["mode"] == "upscale_in_train" else g[0] * (1.0 - p)
    scale = (0.0 if p >= 1.0 else 1.0 / (1.0 - p)) if a["mode"] == "upscale_in_train" else 1.0
    if explicit(ctx):
        return call("dropout_grad", ctx.outputs[1], g[0], scale=scale)
    keep = ctx.outputs[1].astype(g[0].dtype)
    return g[0] * keep if scale == 1.0 else g[0] * keep * scale


_ALPHA_P = -1.6732632423543772848170429916717 * 1.0507009873554804934193349852946


@vjp("alpha_dropout", inputs=False, outputs=True)
def _alpha_dropout(ctx, g):
    a = ctx.attrs
    p = a["p"]
    if not a["training"] or p == 0.0:
        return g[0]
    if p >= 1.0:
        return zeros_like(g[0])
    scale = ((1.0 - p) * (1.0 + p * _ALPHA_P * _ALPHA_P)) ** -0.5
    return g[0] * ctx.outputs[1].astype(g[0].dtype) * scale


def _moves(name):
    @vjp(name, inputs=False)
    def rule(ctx, g):
        return gather_transpose(g, ctx, 0, lambda ids: call(name, ids, **ctx.attrs))

    rule.__name__ = f"_{name}_vjp"
    return rule


# permutations of elements: the op applied to element indices inverts itself
for _n in ("pixel_shuffle", "pixel_unshuffle", "channel_shuffle"):
    _moves(_n)


@vjp("unfold", inputs=False)
def _unfold(ctx, g):
    # unfold pads with zeros, so the element indices are offset by one (0 = padding)
    def forward(ids):
        shifted = (ids + 1).astype("float64")
        return fw.round(call("unfold", shifted, **ctx.attrs)).astype("int64") - 1

    return gather_transpose(g, ctx, 0, forward)


@vjp("fold", inputs=False)
def _fold(ctx, g):
    # fold sums overlapping blocks: its adjoint extracts them again
    a = ctx.attrs
    return call("unfold", g, kernel_sizes=a["kernel_sizes"], strides=a["strides"],
                paddings=a["paddings"], dilations=a["dilations"])


def _interp_matrix(ctx, d):
    """A_d [out_d, in_d]: interpolation along spatial dim d as a matrix, read off the
    op applied to one-hot inputs (every mode is separable over the spatial dims)."""
    a = ctx.attrs
    cl = a["channel_last"]
    shape = list(ctx.shape(0))
    _, _, sp = split_layout(shape, cl)
    i = sp[d]
    probe_sp = list(sp)
    eye = np.eye(i)
    # [i, 1, *sp]: sample j is the one-hot e_j along dim d, constant along the others
    view = [i, 1] + [1] * len(sp)
    view[2 + d] = i
    probe = np.broadcast_to(eye.reshape(view), [i, 1] + probe_sp).copy()
    if cl:
        probe = np.moveaxis(probe, 1, -1).copy()
    with no_building():
        out = call("interpolate", fw.to_tensor(probe), **a).numpy()
    if cl:
        out = np.moveaxis(out, -1, 1)
    idx = [slice(None), 0] + [0] * len(sp)
    idx[2 + d] = slice(None)
    return out[tuple(idx)].T  # [out_d, in_d]


@vjp("interpolate", inputs=False)
def _interpolate(ctx, g):
    cl = ctx.attrs["channel_last"]
    nsp = len(ctx.shape(0)) - 2
    v = fw.moveaxis(g, -1, 1) if cl else g
    for d in range(nsp):
        m = _interp_matrix(ctx, d)
        ax = 2 + d
        v = fw.moveaxis(fw.matmul(fw.moveaxis(v, ax, -1), fw.to_tensor(m, dtype=v.dtype)),
                        -1, ax)
    return fw.moveaxis(v, 1, -1) if cl else v


@composite("scaled_dot_product_attention")
def _sdpa_fn(query, key, value, attn_mask, is_causal, scale):
    three = query.ndim == 3
    q, k, v = (fw.unsqueeze(t, 0) if three else t for t in (query, key, value))
    q = fw.transpose(q, [0, 2, 1, 3])
    k = fw.transpose(k, [0, 2, 1, 3])
    v = fw.transpose(v, [0, 2, 1, 3])
    if q.shape[1] < 0 or k.shape[1] < 0:
        raise UnsupportedError("scaled_dot_product_attention: the gradient needs the static "
                               f"numbers of heads, got {q.shape[1]} and {k.shape[1]}")
    rep = q.shape[1] // k.shape[1] if k.shape[1] else 1
    if rep > 1:
        k = fw.repeat_interleave(k, rep, axis=1)
        v = fw.repeat_interleave(v, rep, axis=1)
    s = q.shape[-1]
    if scale is not None:
        sc = scale
    elif s < 0:  # a dynamic head size (IR): its run-time value
        sc = 1.0 / fw.sqrt(fw.cast(fw.shape(q)[-1], q.dtype))
    else:
        sc = 1.0 / float(np.sqrt(s)) if s else 1.0
    scores = fw.matmul(q, k, transpose_y=True) * sc
    sq, sk = scores.shape[-2], scores.shape[-1]
    neg = float("-inf")
    if is_causal:
        allowed = fw.to_tensor(np.tri(sq, sk, dtype=bool)) if sq >= 0 and sk >= 0 else \
            fw.tril(fw.ones_like(scores)) > 0  # dynamic sizes (IR)
        scores = fw.where(allowed, scores, fw.full_like(scores, neg))
    if attn_mask is not None:
        if attn_mask.dtype == fw.bool:
            scores = fw.where(attn_mask, scores, fw.full_like(scores, neg))
        else:
            scores = scores + attn_mask
    probs = call("softmax", scores, axis=-1)
    out = fw.transpose(fw.matmul(probs, v), [0, 2, 1, 3])
    return fw.squeeze(out, 0) if three else out


@composite("cosine_similarity")
def _cos_fn(x1, x2, axis, eps):
    a, b = fw.broadcast_tensors([x1, x2])
    w12 = fw.sum(a * b, axis=axis)
    w1 = fw.sum(a * a, axis=axis)
    w2 = fw.sum(b * b, axis=axis)
    return w12 / fw.sqrt(fw.maximum(w1 * w2, eps * eps))


@composite("pairwise_distance")
def _pd_fn(x, y, p, epsilon, keepdim):
    d = x - y + epsilon
    if d.shape[-1] == 0:
        return None
    return fw.linalg.vector_norm(d, p, axis=-1, keepdim=keepdim)


@vjp("label_smooth", inputs=False)
def _label_smooth(ctx, g):
    eps = ctx.attrs["epsilon"]
    gl = g * (1.0 - eps) if ctx.needs(0) else None
    gp = None
    if ctx.needs(1):
        gp = reshape_to(fw.sum(reshape_to(g, [-1, g.shape[-1]]), axis=0) * eps,
                        list(ctx.shape(1)))
    return gl, gp
