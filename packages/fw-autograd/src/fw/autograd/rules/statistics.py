"""VJP rules of order statistics: quantiles and medians are differentiated
through a re-expression with ``sort`` (see `_util.composite`).
"""

from __future__ import annotations

import fw
from fw.autograd.rules._util import (
    composite,
    keepdim_shape,
    norm_axes,
    reshape_to,
)

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
def _median_fn(x, axis, keepdim, mode):
    return _median_like(x, axis, keepdim, mode, False), None


@composite("nanmedian")
def _nanmedian_fn(x, axis, keepdim, mode):
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
def _quantile_fn(x, q, axis, keepdim, interpolation):
    return _quantile_like(x, q, axis, keepdim, interpolation, False)


@composite("nanquantile")
def _nanquantile_fn(x, q, axis, keepdim, interpolation):
    return _quantile_like(x, q, axis, keepdim, interpolation, True)
