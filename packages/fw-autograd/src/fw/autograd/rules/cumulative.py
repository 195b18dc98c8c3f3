"""VJP rules of scans (cumsum, cumprod, logcumsumexp, cummax/cummin) and of
differences and integrals (diff, trapezoid, cumulative_trapezoid; the latter
differentiated through a re-expression, see `_util.composite`).
"""

from __future__ import annotations

import fw
from fw.autograd._registry import vjp
from fw.autograd.rules._util import (
    composite,
    conj,
    reshape_to,
    static_shape,
)

# ---------------------------------------------------------------- scans


def _flatten_scan(ctx, g, key="axis"):
    """(g along a known axis, axis, restore) for a scan that flattens when axis=None."""
    ax = ctx.attrs[key]
    if ax is None:
        shape = ctx.shape(0)
        return g, 0, (lambda t: reshape_to(t, shape) if static_shape(shape)
                      else fw.reshape(t, fw.shape(ctx.inputs[0])))
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


# ---------------------------------------------------------------- differences / integrals


@composite("diff")
def _diff_fn(x, prepend, append, n, axis):
    parts = [t for t in (prepend, x, append) if t is not None]
    a = fw.concat(parts, axis=axis) if len(parts) > 1 else x
    for _ in range(n):
        m = a.shape[axis]
        a = fw.slice(a, [axis], [1], [_upper(m)]) - fw.slice(a, [axis], [0], [_but_last(m)])
    return a


def _upper(n):
    """The end of a slice to the end of an axis of size n (-1: dynamic, on IR): slice
    ends are clipped to the size."""
    return n if n >= 0 else 2**62


def _but_last(n):
    """The end of a slice that drops the last element (-1 counts from the end on IR)."""
    return max(n - 1, 0) if n >= 0 else -1


def _trap_terms(y, x, dx, axis):
    n = y.shape[axis]
    hi = fw.slice(y, [axis], [1], [_upper(n)])
    lo = fw.slice(y, [axis], [0], [_but_last(n)])
    avg = (hi + lo) / 2
    if x is not None:
        if x.ndim == 1:
            d = x[1:] - x[:-1]
            shape = [1] * y.ndim
            shape[axis] = -1
            d = reshape_to(d, shape)
        else:
            m = x.shape[axis]
            d = fw.slice(x, [axis], [1], [_upper(m)]) - fw.slice(x, [axis], [0], [_but_last(m)])
        return avg * d
    return avg * (1.0 if dx is None else dx)


@composite("trapezoid")
def _trapezoid_fn(y, x, dx, axis):
    return fw.sum(_trap_terms(y, x, dx, axis), axis=axis)


@composite("cumulative_trapezoid")
def _cum_trapezoid_fn(y, x, dx, axis):
    return fw.cumsum(_trap_terms(y, x, dx, axis), axis=axis)
