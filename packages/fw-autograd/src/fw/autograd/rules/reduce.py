"""VJP rules of reductions, scans and statistics.

A reduction's gradient is broadcast back over the reduced axes
(`expand_as_input`). ``max``/``min`` send the whole gradient to every tied
element, ``amax``/``amin`` split it evenly among them (as the op table
documents). Quantiles and medians are differentiated through a re-expression
with ``sort`` (see `_util.composite`).
"""

from __future__ import annotations

import fw
from fw.autograd._registry import vjp
from fw.autograd.rules._util import (
    composite,
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
        return full / fw.cast(fw.numel(x) // fw.numel(g), full.dtype)
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
        n = fw.cast(fw.numel(x) // fw.numel(g), g.dtype)
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
        n = fw.cast(fw.numel(x) // fw.numel(g), g.dtype)
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
        return _back(ctx, g) * conj(_keep(fw.prod(x, axis=ctx.attrs["axis"]), ctx) / x)
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


# ---------------------------------------------------------------- scans


def _flatten_scan(ctx, g, key="axis"):
    """(g along a known axis, axis, restore) for a scan that flattens when axis=None."""
    ax = ctx.attrs[key]
    if ax is None:
        shape = ctx.shape(0)
        return g, 0, (lambda t: reshape_to(t, shape) if static_shape(shape)
                      else fw.reshape_as(t, ctx.inputs[0]))
    if len(ctx.shape(0)) == 0:
        return reshape_to(g, [1]), 0, (lambda t: reshape_to(t, []))
    return g, ax, (lambda t: t)


def _rev_cumsum(g, axis):
    return fw.flip(fw.cumsum(fw.flip(g, axis=[axis]), axis=axis), axis=[axis])


@vjp("cumsum", inputs=False)
def _cumsum(ctx, g):
    g2, ax, restore = _flatten_scan(ctx, g)
    return restore(_rev_cumsum(g2, ax))


def _as_scan_input(ctx, x, key="axis"):
    ax = ctx.attrs[key]
    if ax is None:
        return reshape_to(x, [-1])
    if x.ndim == 0:
        return reshape_to(x, [1])
    return x


@vjp("cumprod", outputs=True)
def _cumprod(ctx, g):
    # grad_i = sum_{j >= i} g_j * prod_{k <= j, k != i} x_k, built from an [.., n, n]
    # table of products with x_i replaced by 1 (exact with zeros); for long scans the
    # cheaper (zero-unsafe) reverse-cumsum formula g*out/x is used.
    x = _as_scan_input(ctx, ctx.inputs[0], "dim")
    g2, ax, restore = _flatten_scan(ctx, g, "dim")
    nd = x.ndim
    ax = ax % nd
    out = _as_scan_input(ctx, ctx.outputs[0], "dim")
    n = x.shape[ax]
    if n < 0 or n > 256:
        return restore(_rev_cumsum(g2 * conj(out), ax) / conj(x))
    if n == 0:
        return restore(g2)
    xm = fw.moveaxis(x, ax, -1)  # [..., n]
    gm = fw.moveaxis(g2, ax, -1)
    eye = fw.eye(n, dtype="bool")
    table = fw.where(eye, fw.ones_like(fw.unsqueeze(xm, -2)), fw.unsqueeze(xm, -2))  # [.., i, k]
    prods = fw.cumprod(table, dim=-1)  # [.., i, j] = prod_{k<=j, k!=i} x_k
    upper = fw.triu(fw.ones([n, n], dtype=g.dtype))  # j >= i
    gi = fw.sum(fw.unsqueeze(gm, -2) * conj(prods) * upper, axis=-1)
    return restore(fw.moveaxis(gi, -1, ax))


@vjp("logcumsumexp", outputs=True)
def _logcumsumexp(ctx, g):
    # grad_i = sum_{j >= i} g_j exp(x_i - out_j); the sum is split by the sign of g
    # and computed as a reversed logcumsumexp for stability
    x = _as_scan_input(ctx, ctx.inputs[0])
    out = _as_scan_input(ctx, ctx.outputs[0])
    g2, ax, restore = _flatten_scan(ctx, g)
    ax = ax % x.ndim

    def rev_lcse(t):
        return fw.flip(fw.logcumsumexp(fw.flip(t, axis=[ax]), axis=ax), axis=[ax])

    neg_inf = float("-inf")
    pos = fw.where(g2 > 0, fw.log(fw.where(g2 > 0, g2, 1.0)), neg_inf)
    neg = fw.where(g2 < 0, fw.log(fw.where(g2 < 0, -g2, 1.0)), neg_inf)
    gp = fw.exp(rev_lcse(pos - out) + x)
    gn = fw.exp(rev_lcse(neg - out) + x)
    return restore(gp - gn)


@vjp("cummax", "cummin", inputs=False, outputs=True)
def _cumext(ctx, g):
    gv = g[0]
    idx = ctx.outputs[1]
    ax = ctx.attrs["axis"]
    shape = ctx.shape(0)
    if ax is None or len(shape) == 0:
        flat = fw.zeros([_numel(shape)], dtype=gv.dtype)
        r = fw.put_along_axis(flat, reshape_to(idx, [-1]), reshape_to(gv, [-1]), 0,
                              reduce="add")
        return reshape_to(r, shape)
    z = fw.zeros(shape, dtype=gv.dtype)
    return fw.put_along_axis(z, idx, gv, ax, reduce="add")


def _numel(shape):
    n = 1
    for d in shape:
        n *= d
    return n


# ---------------------------------------------------------------- order statistics


def _to_last(x, axis):
    """x with the reduced axes moved last and merged: ([kept..., n], kept shape)."""
    nd = x.ndim
    axes = norm_axes(axis, nd)
    keep = [i for i in range(nd) if i not in axes]
    kept = [x.shape[i] for i in keep]
    y = fw.transpose(x, keep + axes) if nd else x
    return reshape_to(y, kept + [-1]), kept, axes


def _median_like(x, axis, keepdim, mode, nan):
    y, kept, axes = _to_last(x, axis)
    if y.shape[-1] == 0:  # nothing to differentiate
        return None
    s = fw.sort(y, axis=-1)  # NaN last
    n = y.shape[-1]
    if nan:
        valid = n - fw.sum(fw.isnan(y).astype("int64"), axis=-1, keepdim=True)
    else:
        valid = fw.full(kept + [1], n, dtype="int64")
    lo = fw.maximum((valid - 1) // 2, 0)
    hi = fw.maximum(valid // 2, 0)
    a = fw.take_along_axis(s, lo, axis=-1)
    if mode == "min":
        v = a
    else:
        v = (a + fw.take_along_axis(s, hi, axis=-1)) / 2
    v = fw.squeeze(v, -1)
    if keepdim:
        v = reshape_to(v, keepdim_shape(x.shape, axes) if axis is not None
                       else [1] * x.ndim)
    return v


@composite("median")
def _median_fn(x, axis=None, keepdim=False, mode="avg"):
    return _median_like(x, axis, keepdim, mode, False), None


@composite("nanmedian")
def _nanmedian_fn(x, axis=None, keepdim=False, mode="avg"):
    return _median_like(x, axis, keepdim, mode, True), None


def _quantile_like(x, q, axis, keepdim, interpolation, nan):
    y, kept, axes = _to_last(x, axis)
    s = fw.sort(y, axis=-1)
    n = y.shape[-1]
    if n == 0:  # nothing to differentiate
        return None
    qs = q if isinstance(q, tuple) else (q,)
    if nan:
        valid = n - fw.sum(fw.isnan(y).astype("int64"), axis=-1, keepdim=True)
    else:
        valid = fw.full(kept + [1], n, dtype="int64")
    top = max(n - 1, 0)
    res = []
    for qv in qs:
        pos = fw.maximum(valid - 1, 0).astype(s.dtype) * qv
        lo = fw.floor(pos)
        hi = fw.ceil(pos)
        if interpolation == "lower":
            hi = lo
        elif interpolation == "higher":
            lo = hi
        elif interpolation == "nearest":
            lo = hi = fw.floor(pos + 0.5)
        frac = pos - lo
        if interpolation == "midpoint":
            frac = fw.where(hi > lo, 0.5, 0.0).astype(s.dtype)
        li = fw.clip(lo, 0, top).astype("int64")
        hi_i = fw.clip(hi, 0, top).astype("int64")
        a = fw.take_along_axis(s, li, axis=-1)
        b = fw.take_along_axis(s, hi_i, axis=-1)
        v = fw.where(lo == hi, a, a + (b - a) * frac)
        v = fw.squeeze(v, -1)
        if keepdim:
            v = reshape_to(v, keepdim_shape(x.shape, axes))
        res.append(v)
    if isinstance(q, tuple):
        return fw.stack(res, axis=0)
    return res[0]


@composite("quantile")
def _quantile_fn(x, q=0.5, axis=None, keepdim=False, interpolation="linear"):
    return _quantile_like(x, q, axis, keepdim, interpolation, False)


@composite("nanquantile")
def _nanquantile_fn(x, q=0.5, axis=None, keepdim=False, interpolation="linear"):
    return _quantile_like(x, q, axis, keepdim, interpolation, True)


# ---------------------------------------------------------------- differences / integrals


@composite("diff")
def _diff_fn(x, prepend=None, append=None, n=1, axis=-1):
    parts = [t for t in (prepend, x, append) if t is not None]
    a = fw.concat(parts, axis=axis) if len(parts) > 1 else x
    for _ in range(n):
        m = a.shape[axis]
        a = fw.slice(a, [axis], [1], [m]) - fw.slice(a, [axis], [0], [m - 1])
    return a


def _trap_terms(y, x, dx, axis):
    n = y.shape[axis]
    hi = fw.slice(y, [axis], [1], [n])
    lo = fw.slice(y, [axis], [0], [max(n - 1, 0)])
    avg = (hi + lo) / 2
    if x is not None:
        if x.ndim == 1:
            d = x[1:] - x[:-1]
            shape = [1] * y.ndim
            shape[axis] = -1
            d = reshape_to(d, shape)
        else:
            m = x.shape[axis]
            d = fw.slice(x, [axis], [1], [m]) - fw.slice(x, [axis], [0], [max(m - 1, 0)])
        return avg * d
    return avg * (1.0 if dx is None else dx)


@composite("trapezoid")
def _trapezoid_fn(y, x=None, dx=None, axis=-1):
    return fw.sum(_trap_terms(y, x, dx, axis), axis=axis)


@composite("cumulative_trapezoid")
def _cum_trapezoid_fn(y, x=None, dx=None, axis=-1):
    return fw.cumsum(_trap_terms(y, x, dx, axis), axis=axis)
