"""VJP rules of reductions.

A reduction's gradient is broadcast back over the reduced axes
(`expand_as_input`). ``max``/``min`` send the whole gradient to every tied
element, ``amax``/``amin`` split it evenly among them (as the op table
documents).
"""

from __future__ import annotations

import fw
from fw.autograd._registry import vjp
from fw.autograd.rules._util import (
    conj,
    expand_as_input,
    keepdim_shape,
    norm_axes,
    reshape_to,
    static_shape,
    zeros_like,
)


def _axes(ctx, key="axis"):
    return norm_axes(ctx.attrs[key], len(ctx.shape(0)))


def _count(shape, axes):
    n = 1
    for a in axes:
        if shape[a] < 0:
            return -1
        n *= shape[a]
    return n


def _run_count(x, g, dtype):
    """The number of elements reduced into each result, at run time (a dynamic reduced
    dim on IR); an empty result (nothing to spread the gradient over) counts 1."""
    return fw.cast(fw.numel(x) // fw.maximum(fw.numel(g), fw.ones_like(fw.numel(g))), dtype)


def _back(ctx, g, key="axis"):
    """g broadcast back to the input's shape over the reduced axes."""
    return expand_as_input(g, ctx, 0, _axes(ctx, key), ctx.attrs.get("keepdim", False))


def _keep(t, ctx, key="axis"):
    """A reduced result with the reduced axes kept (size 1), for broadcasting."""
    if ctx.attrs.get("keepdim", False):
        return t
    shape = ctx.shape(0)
    axes = _axes(ctx, key)
    if not axes:
        return t
    if static_shape(shape):
        return reshape_to(t, keepdim_shape(shape, axes))
    return fw.unsqueeze(t, list(axes))


@vjp("sum", inputs=False)
def _sum(ctx, g):
    return _back(ctx, g)


@vjp("nansum")
def _nansum(ctx, g):
    x = ctx.inputs[0]
    return fw.where(fw.isnan(x), zeros_like(x).astype(g.dtype), _back(ctx, g))


@vjp("mean", inputs=False)
def _mean(ctx, g):
    shape = ctx.shape(0)
    axes = _axes(ctx)
    n = _count(shape, axes)
    full = _back(ctx, g)
    if n < 0:  # a dynamic reduced dim (IR): divide by the runtime count
        x = ctx.inputs[0]
        return full / _run_count(x, g, full.dtype)
    return full / n if n else full


@vjp("nanmean")
def _nanmean(ctx, g):
    x = ctx.inputs[0]
    ok = fw.logical_not(fw.isnan(x))
    cnt = fw.sum(ok.astype(g.dtype), axis=ctx.attrs["axis"], keepdim=True)
    full = _back(ctx, g) / cnt
    return fw.where(ok, full, zeros_like(full))


@vjp("max", "min", outputs=True)
def _max_min(ctx, g):
    # the whole gradient to every element equal to the result
    x = ctx.inputs[0]
    hit = (x == _keep(ctx.outputs[0], ctx)).astype(g.dtype)
    return _back(ctx, g) * hit


@vjp("amax", "amin", outputs=True)
def _amax_amin(ctx, g):
    # split evenly among the elements equal to the result
    x = ctx.inputs[0]
    hit = (x == _keep(ctx.outputs[0], ctx)).astype(g.dtype)
    cnt = fw.sum(hit, axis=ctx.attrs["axis"], keepdim=True)
    return _back(ctx, g) * hit / cnt


@vjp("var")
def _var(ctx, g):
    x = ctx.inputs[0]
    shape = ctx.shape(0)
    axes = _axes(ctx)
    n = _count(shape, axes)
    if n < 0:
        n = _run_count(x, g, g.dtype)
    den = n - 1 if ctx.attrs["unbiased"] else n
    centered = x - fw.mean(x, axis=ctx.attrs["axis"], keepdim=True)
    if isinstance(den, int):
        return _back(ctx, g) * centered * (2.0 / den if den else float("inf"))
    return _back(ctx, g) * centered * 2.0 / den


@vjp("std", outputs=True)
def _std(ctx, g):
    x = ctx.inputs[0]
    shape = ctx.shape(0)
    axes = _axes(ctx)
    n = _count(shape, axes)
    if n < 0:
        n = _run_count(x, g, g.dtype)
    den = n - 1 if ctx.attrs["unbiased"] else n
    centered = x - fw.mean(x, axis=ctx.attrs["axis"], keepdim=True)
    out = ctx.outputs[0]
    # std = 0 (all values equal): the gradient 0 is a subgradient (d std would be 0/0)
    safe = fw.where(out == 0, fw.ones_like(out), out)
    return _back(ctx, fw.where(out == 0, zeros_like(g), g / safe)) * centered / den


@vjp("logsumexp", outputs=True)
def _logsumexp(ctx, g):
    x = ctx.inputs[0]
    return _back(ctx, g) * fw.exp(x - _keep(ctx.outputs[0], ctx))


@vjp("reduce_as", inputs=False)
def _reduce_as(ctx, g):
    shape = ctx.shape(0)
    if static_shape(shape):
        return fw.broadcast_to(g, shape), None
    return fw.expand_as(g, ctx.inputs[0]), None


@vjp("prod")
def _prod(ctx, g):
    # d prod / d x_i = product of the others: exclusive products from both sides, so
    # zeros in x are handled exactly
    x = ctx.inputs[0]
    shape = ctx.shape(0)
    axes = _axes(ctx)
    if not static_shape(shape):
        return _back(ctx, g) * conj(fw.prod(x, axis=ctx.attrs["axis"], keepdim=True) / x)
    nd = len(shape)
    if nd == 0:
        return g
    keep = [i for i in range(nd) if i not in axes]
    perm = keep + list(axes)
    n = _count(shape, axes)
    kept = [shape[i] for i in keep]
    y = reshape_to(fw.transpose(x, perm), kept + [n])
    others = _exclusive_products(y)
    gk = reshape_to(_keep(g, ctx), keepdim_shape(shape, axes))
    gy = reshape_to(fw.transpose(fw.broadcast_to(gk, shape), perm), kept + [n])
    gy = gy * conj(others)
    inv = [0] * nd
    for i, p in enumerate(perm):
        inv[p] = i
    return fw.transpose(reshape_to(gy, [shape[i] for i in perm]), inv)


def _exclusive_products(y):
    """p[..., i] = prod_{k != i} y[..., k] along the last axis (exact with zeros)."""
    n = y.shape[-1]
    if n == 0:
        return y
    ones = fw.ones_like(y[..., :1])
    left = fw.concat([ones, fw.cumprod(y[..., :-1], dim=-1)], axis=-1)
    rev = fw.flip(y, axis=[-1])
    right = fw.flip(fw.concat([ones, fw.cumprod(rev[..., :-1], dim=-1)], axis=-1), axis=[-1])
    return left * right
