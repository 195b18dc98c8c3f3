"""Pooling ops, N-d (the number of spatial dims is ``x.ndim - 2``), for
``max/avg/lp_pool{1,2,3}d``, ``adaptive_{avg,max}_pool{1,2,3}d`` and
``max_unpool{1,2,3}d`` of ``paddle.nn.functional``.

x is ``[N, C, *S]``, or ``[N, *S, C]`` with ``channel_last=True``; results keep the layout.
Per-dim attributes (``kernel_size``, ``stride``, ``padding``) take the forms of
`fw.core.ops.conv` (an int, one entry per spatial dim, begin/end pairs, Paddle's pairs
form, or ``"SAME"``/``"VALID"``); ``stride=None`` means ``stride = kernel_size``.

Output size per spatial dim (i input, k kernel, s stride, b/e pads), Paddle's formula:
``o = (i + b + e - k) // s + 1``, or with ``ceil_mode`` ``(i + b + e - k + s - 1) // s + 1``
(no correction for a last window starting in the end padding; such a window holds only
padding: its max is -inf and its exclusive average 0). ``"SAME"`` pads as conv does
(``ceil(i/s)`` outputs); ``"VALID"`` is zero padding. Window ``o`` covers input positions
``[o*s - b, o*s - b + k)``. Explicit padding is at most half the kernel on each side
(``b, e <= k // 2``, as Paddle and PyTorch require): a larger pad is an error.

``max_pool(x)`` -- ``kernel_size, stride=None, padding=0, ceil_mode=False, channel_last``
    max over the window; padding never wins (it is -inf). NaN propagates.
``max_pool_with_index(x)`` -> ``(out, mask)`` -- same attributes; ``mask`` (int32, the
    shape of out) is the flat index ``((i0 * S1) + i1) * S2 + ...`` of the max within the
    spatial plane of its (n, c) -- the same in both layouts (Paddle's ``return_mask``).
    Ties: the first in row-major order.
``avg_pool(x)`` -- ``kernel_size, stride=None, padding=0, ceil_mode=False,
    exclusive=True, divisor_override=None, channel_last``; the window sum divided by
    ``divisor_override`` if given, else with ``exclusive`` by the number of real (non
    padding) elements of the window, else by the number of window elements inside the
    padded input ``[-b, i + e)`` (the ceil_mode overhang is not counted).
``lp_pool(x)`` -- ``norm_type, kernel_size, stride=None, padding=0, ceil_mode=False,
    channel_last``; ``(sum over the window of x^p)^(1/p)`` with zero padding (NaN where a
    fractional power of a negative number is taken); ``norm_type=inf`` is max_pool.
``adaptive_avg_pool(x)`` / ``adaptive_max_pool(x) -> (out, mask)`` -- ``output_size,
    channel_last``; output_size is an int or one entry per spatial dim (None keeps that
    dim's input size). Output position ``o`` of a dim of size i pools input positions
    ``[floor(o*i/out), ceil((o+1)*i/out))``. The mask is as for max_pool_with_index
    (adaptive_max_pool always computes it; drop it when return_mask=False).
``max_unpool(x, indices)`` -- ``kernel_size, stride=None, padding=0, output_size=None,
    channel_last``; a zero tensor of spatial size ``output_size`` (spatial sizes; a full
    shape is accepted and its last dims used) or, by default,
    ``(i - 1)*s - b - e + k`` per dim, with ``x`` written at the flat spatial positions
    ``indices`` (int32/int64, the shape of x, as from max_pool_with_index); indices out of
    range are an error; duplicate indices keep one of the values.
"""

from __future__ import annotations

import math

import numpy as np

from fw.core import dtypes as _dt
from fw.core.errors import InvalidArgumentError, InvalidTypeError
from fw.core.ir.types import DYN, TensorType
from fw.core.ops._infer import require_int, shp
from fw.core.ops._registry import defop
from fw.core.ops._xp import xp_of
from fw.core.ops.activation import arr, down, require_real_float, up
from fw.core.ops.conv import (
    canon_ints,
    canon_padding,
    expand,
    explicit_pads,
    from_channels_first,
    join_layout,
    same_pads,
    split_layout,
    to_channels_first,
)

__all__ = ["pool_geometry", "adaptive_windows", "adaptive_avg", "adaptive_max"]


# ---------------------------------------------------------------- geometry
def pool_geometry(in_sizes, kernel_size, stride=None, padding=0, ceil_mode=False):
    """-> (ksizes, strides, pads [(b, e)], out_sizes); -1 sizes stay -1."""
    nd = len(in_sizes)
    ks = expand(kernel_size, nd, "kernel_size")
    strides = ks if stride is None else expand(stride, nd, "stride")
    if padding == "SAME":
        pads = same_pads(in_sizes, strides, ks)
    elif padding == "VALID":
        pads = [(0, 0)] * nd
    else:
        pads = explicit_pads(padding, nd)
        for d, (k, (b, e)) in enumerate(zip(ks, pads)):
            if max(b, e) > k // 2:
                raise InvalidArgumentError(
                    f"padding {b}+{e} of spatial dim {d} is more than half the kernel size "
                    f"{k}: pad should be at most half of the kernel size ({k // 2})")
    outs = []
    for i, k, s, (b, e) in zip(in_sizes, ks, strides, pads):
        if i == DYN or b == DYN:
            outs.append(DYN)
            continue
        span = i + b + e - k
        if span < 0:
            raise InvalidArgumentError(f"the padded input size {i + b + e} (size {i}, padding "
                                       f"{b}+{e}) is smaller than the kernel size {k}")
        outs.append((span + (s - 1 if ceil_mode else 0)) // s + 1)
    return ks, strides, pads, tuple(outs)


def _check_x(xs, min_nd=1):
    if len(xs) < 2 + min_nd:
        raise InvalidArgumentError(f"x must be [N, C, spatial...] with at least {min_nd} "
                                   f"spatial dimension(s), got shape {shp(xs)}")


def _pool_canon(attrs):
    a = dict(attrs)
    a["channel_last"] = bool(a["channel_last"])
    if a.get("kernel_size") is None:
        raise InvalidArgumentError("'kernel_size' is required")
    a["kernel_size"] = canon_ints(a["kernel_size"], "kernel_size", 1)
    a["stride"] = canon_ints(a["stride"], "stride", 1, allow_none=True)
    a["padding"] = canon_padding(a["padding"], a["channel_last"])
    if "ceil_mode" in a:
        a["ceil_mode"] = bool(a["ceil_mode"])
    if "exclusive" in a:
        a["exclusive"] = bool(a["exclusive"])
    if a.get("divisor_override") is not None:
        d = a["divisor_override"]
        a["divisor_override"] = float(d.item() if hasattr(d, "item") else d)
        if a["divisor_override"] == 0:
            raise InvalidArgumentError("'divisor_override' must not be 0")
    if "norm_type" in a:
        p = a["norm_type"]
        if p is None:
            raise InvalidArgumentError("'norm_type' is required")
        a["norm_type"] = float(p.item() if hasattr(p, "item") else p)
        if not a["norm_type"] > 0:
            raise InvalidArgumentError(f"'norm_type' must be > 0, got {a['norm_type']}")
    return a


def _pool_type(x, kernel_size, stride, padding, ceil_mode, channel_last):
    require_real_float(x)
    _check_x(x.shape)
    n, c, sp = split_layout(x.shape, channel_last)
    _, _, _, outs = pool_geometry(sp, kernel_size, stride, padding, ceil_mode)
    return TensorType(join_layout(n, c, outs, channel_last), x.dtype)


def _padded(xt, ks, strides, pads, outs, fill):
    """Channels-first `xt` padded with `fill` at the begin pads and at the end as far as
    the last window needs (never less than 0)."""
    width = [(0, 0), (0, 0)]
    for i, k, s, (b, _), o in zip(xt.shape[2:], ks, strides, pads, outs):
        width.append((b, max((o - 1) * s + k - b - i, 0)))
    if any(w != (0, 0) for w in width):
        xt = np.pad(xt, width, constant_values=fill)
    return xt


def _taps(xp, ks, strides, outs):
    """(flat kernel offset, [N, C, *outs] strided view of that window element): a loop
    over the k window elements, each vectorised over every output position (much faster
    than reducing a [.., *outs, *ks] window view)."""
    lead = (slice(None), slice(None))
    for j, off in enumerate(np.ndindex(*ks)):
        yield j, xp[lead + tuple(slice(f, f + (o - 1) * s + 1, s)
                                 for f, o, s in zip(off, outs, strides))]


def _window_sum(xp, ks, strides, outs):
    acc = None
    for _, v in _taps(xp, ks, strides, outs):
        acc = v.copy() if acc is None else np.add(acc, v, out=acc)
    return acc


def _window_max(xp, ks, strides, outs):
    acc = None
    for _, v in _taps(xp, ks, strides, outs):
        acc = v.copy() if acc is None else np.maximum(acc, v, out=acc)  # NaN propagates
    return acc


def _spatial_col(vals, d, nd):
    """A 1-D array laid along spatial dim d of a [N, C, *S] array (for broadcasting)."""
    return arr(vals).reshape((1, 1) + (1,) * d + (-1,) + (1,) * (nd - d - 1))


def _plane_index(coords, sizes):
    """Flat row-major index within the spatial plane from per-dim coordinates."""
    idx = 0
    for c, s in zip(coords, sizes):
        idx = idx * s + np.clip(c, 0, max(s - 1, 0))
    return idx


def _max_with_index(xt, ks, strides, pads, outs):
    nd = len(ks)
    xp = _padded(xt, ks, strides, pads, outs, -np.inf)
    # NaN handling costs a little: skipped where there is none, except on a device,
    # where finding out would wait for all queued work
    nan = type(xp) is not np.ndarray or bool(np.isnan(xp).any())
    best = arg = None
    for j, v in _taps(xp, ks, strides, outs):
        if best is None:
            best, arg = v.copy(), np.zeros_like(v, order="C", dtype=np.intp)
            continue
        # strictly greater keeps the first maximum; a NaN wins once, like np.argmax
        upd = v > best
        if nan:
            upd |= np.isnan(v) & ~np.isnan(best)
        np.copyto(best, v, where=upd)
        np.copyto(arg, j, where=upd)
    offs = np.unravel_index(arg, ks)
    xp = xp_of(arg)
    coords = [_spatial_col(xp.arange(o) * s - b, d, nd) + offs[d]
              for d, (o, s, (b, _)) in enumerate(zip(outs, strides, pads))]
    return best, _plane_index(coords, xt.shape[2:])


# ---------------------------------------------------------------- max_pool
_POOL_ATTRS = {"kernel_size": None, "stride": None, "padding": 0, "ceil_mode": False,
               "channel_last": False}


def _max_pool_infer(x, kernel_size=None, stride=None, padding=0, ceil_mode=False,
                    channel_last=False):
    return _pool_type(x, kernel_size, stride, padding, ceil_mode, channel_last)


def _max_pool_ref(x, kernel_size=None, stride=None, padding=0, ceil_mode=False,
                  channel_last=False):
    _check_x(x.shape)
    n, c, sp = split_layout(x.shape, channel_last)
    ks, strides, pads, outs = pool_geometry(sp, kernel_size, stride, padding, ceil_mode)
    xt = to_channels_first(up(x), channel_last)
    out = _window_max(_padded(xt, ks, strides, pads, outs, -np.inf), ks, strides, outs)
    return down(from_channels_first(out, channel_last), x.dtype)


defop("max_pool", ("x",), dict(_POOL_ATTRS), infer=_max_pool_infer, reference=_max_pool_ref,
      canon=_pool_canon, to_float=True, family="pool", api=False, method=False,
      doc="N-d max pooling; see fw.core.ops.pool.")


def _max_pool_idx_infer(x, **attrs):
    t = _max_pool_infer(x, **attrs)
    return t, TensorType(t.shape, _dt.int32)


def _max_pool_idx_ref(x, kernel_size=None, stride=None, padding=0, ceil_mode=False,
                      channel_last=False):
    _check_x(x.shape)
    n, c, sp = split_layout(x.shape, channel_last)
    ks, strides, pads, outs = pool_geometry(sp, kernel_size, stride, padding, ceil_mode)
    xt = to_channels_first(up(x), channel_last)
    out, idx = _max_with_index(xt, ks, strides, pads, outs)
    return (down(from_channels_first(out, channel_last), x.dtype),
            down(from_channels_first(arr(idx), channel_last), np.dtype(np.int32)))


defop("max_pool_with_index", ("x",), dict(_POOL_ATTRS), outputs=("out", "mask"),
      infer=_max_pool_idx_infer, reference=_max_pool_idx_ref, canon=_pool_canon,
      to_float=True, family="pool", api=False, method=False,
      doc="N-d max pooling that also returns the flat spatial index of each max (int32).")


# ---------------------------------------------------------------- avg_pool / lp_pool
def _avg_pool_infer(x, kernel_size=None, stride=None, padding=0, ceil_mode=False,
                    exclusive=True, divisor_override=None, channel_last=False):
    return _pool_type(x, kernel_size, stride, padding, ceil_mode, channel_last)


def _window_counts(sp, ks, strides, pads, outs, exclusive):
    """Per-output divisor: real elements (exclusive) or elements inside the padded input."""
    nd = len(ks)
    cnt = 1
    for d, (i, k, s, (b, e), o) in enumerate(zip(sp, ks, strides, pads, outs)):
        start = np.arange(o) * s - b
        if exclusive:
            c = np.minimum(start + k, i) - np.maximum(start, 0)
        else:
            c = np.minimum(start + k, i + e) - start
        cnt = cnt * _spatial_col(np.maximum(c, 0), d, nd)
    return cnt


def _avg_pool_ref(x, kernel_size=None, stride=None, padding=0, ceil_mode=False,
                  exclusive=True, divisor_override=None, channel_last=False):
    _check_x(x.shape)
    n, c, sp = split_layout(x.shape, channel_last)
    ks, strides, pads, outs = pool_geometry(sp, kernel_size, stride, padding, ceil_mode)
    xt = to_channels_first(up(x), channel_last)
    total = _window_sum(_padded(xt, ks, strides, pads, outs, 0), ks, strides, outs)
    if divisor_override is not None:
        out = total / divisor_override
    else:
        cnt = _window_counts(sp, ks, strides, pads, outs, exclusive)
        # a window of padding alone (possible with ceil_mode) averages to 0, not 0/0
        out = total / xp_of(total).asarray(np.maximum(cnt, 1))
    return down(from_channels_first(arr(out), channel_last), x.dtype)


defop("avg_pool", ("x",),
      {"kernel_size": None, "stride": None, "padding": 0, "ceil_mode": False, "exclusive": True,
       "divisor_override": None, "channel_last": False},
      infer=_avg_pool_infer, reference=_avg_pool_ref, canon=_pool_canon, to_float=True,
      family="pool", api=False, method=False, doc="N-d average pooling; see fw.core.ops.pool.")


def _lp_pool_infer(x, norm_type=None, kernel_size=None, stride=None, padding=0,
                   ceil_mode=False, channel_last=False):
    return _pool_type(x, kernel_size, stride, padding, ceil_mode, channel_last)


def _lp_pool_ref(x, norm_type=None, kernel_size=None, stride=None, padding=0, ceil_mode=False,
                 channel_last=False):
    if math.isinf(norm_type):
        return _max_pool_ref(x, kernel_size, stride, padding, ceil_mode, channel_last)
    _check_x(x.shape)
    n, c, sp = split_layout(x.shape, channel_last)
    ks, strides, pads, outs = pool_geometry(sp, kernel_size, stride, padding, ceil_mode)
    xt = to_channels_first(up(x), channel_last)
    total = _window_sum(_padded(np.power(xt, norm_type), ks, strides, pads, outs, 0), ks,
                        strides, outs)
    out = np.power(total, 1.0 / norm_type)
    return down(from_channels_first(arr(out), channel_last), x.dtype)


defop("lp_pool", ("x",),
      {"norm_type": None, "kernel_size": None, "stride": None, "padding": 0, "ceil_mode": False,
       "channel_last": False},
      infer=_lp_pool_infer, reference=_lp_pool_ref, canon=_pool_canon, to_float=True,
      family="pool", api=False, method=False,
      doc="N-d power-average pooling: (sum of x^p over the window)^(1/p).")


# ---------------------------------------------------------------- adaptive pools
def adaptive_windows(i, o):
    """Start and end (exclusive) input positions of each of `o` adaptive windows."""
    k = np.arange(o)
    return (k * i) // o, -((-(k + 1) * i) // o)


def _adaptive_canon(attrs):
    a = dict(attrs)
    a["channel_last"] = bool(a["channel_last"])
    v = a["output_size"]
    if v is None:
        raise InvalidArgumentError("'output_size' is required")
    if hasattr(v, "tolist") and not isinstance(v, (list, tuple)):
        v = v.tolist()
    items = v if isinstance(v, (list, tuple)) else [v]
    out = []
    for e in items:
        if e is None:
            out.append(None)
            continue
        if hasattr(e, "item"):
            e = e.item()
        if isinstance(e, bool) or not isinstance(e, (int, np.integer)):
            raise InvalidTypeError(f"'output_size' must contain ints or None, got {v!r}")
        if e < 1:
            raise InvalidArgumentError(f"'output_size'={list(items)} must be positive")
        out.append(int(e))
    a["output_size"] = tuple(out)
    return a


def _adaptive_sizes(sp, output_size):
    outs = expand(output_size, len(sp), "output_size")
    res = []
    for i, o in zip(sp, outs):
        if i == 0:
            raise InvalidArgumentError("adaptive pooling needs a non-empty spatial input, got "
                                       "a spatial size of 0")
        res.append(i if o is None else o)
    return tuple(res)


def _adaptive_infer(x, output_size=None, channel_last=False):
    require_real_float(x)
    _check_x(x.shape)
    n, c, sp = split_layout(x.shape, channel_last)
    return TensorType(join_layout(n, c, _adaptive_sizes(sp, output_size), channel_last),
                      x.dtype)


def _gather_windows(v, ax, i, o):
    """Windows of `o` adaptive bins along axis `ax` of `v`: (gathered [.., o, L, ..], valid
    mask broadcastable to it). Positions past a window's end repeat its last element."""
    start, end = adaptive_windows(i, o)
    width = int(np.max(end - start))
    j = np.arange(width)
    g = start[:, None] + j
    valid = g < end[:, None]
    g = np.minimum(g, (end - 1)[:, None])
    shape = [1] * (v.ndim + 1)
    shape[ax], shape[ax + 1] = o, width
    xp = xp_of(v)  # the windows are host index arithmetic; the data may be on a device
    return (np.take(v, xp.asarray(g), axis=ax), xp.asarray(valid.reshape(shape)),
            xp.asarray(end - start))


def adaptive_avg(xt, outs):
    """Adaptive average over the spatial dims of channels-first `xt` (separable)."""
    v = xt
    for d, o in enumerate(outs):
        ax = 2 + d
        vg, valid, cnt = _gather_windows(v, ax, v.shape[ax], o)
        shape = [1] * v.ndim
        shape[ax] = o
        v = np.sum(np.where(valid, vg, 0), axis=ax + 1) / cnt.reshape(shape)
    return v


def adaptive_max(xt, outs):
    """Adaptive max and flat argmax over the spatial dims of channels-first `xt`. Reducing
    the last dim first makes ties resolve to the first maximum in row-major order."""
    sp = xt.shape[2:]
    v = xt
    idx = np.broadcast_to(xp_of(xt).arange(int(np.prod(sp))).reshape((1, 1) + sp), xt.shape)
    for d in reversed(range(len(outs))):
        ax = 2 + d
        vg, _, _ = _gather_windows(v, ax, v.shape[ax], outs[d])
        ig, _, _ = _gather_windows(idx, ax, idx.shape[ax], outs[d])
        if vg.size == 0:
            v, idx = vg.sum(axis=ax + 1), ig.sum(axis=ax + 1)
            continue
        a = np.expand_dims(np.argmax(vg, axis=ax + 1), ax + 1)
        v = np.take_along_axis(vg, a, axis=ax + 1).squeeze(ax + 1)
        idx = np.take_along_axis(ig, a, axis=ax + 1).squeeze(ax + 1)
    return v, idx


def _adaptive_avg_ref(x, output_size=None, channel_last=False):
    _check_x(x.shape)
    _, _, sp = split_layout(x.shape, channel_last)
    outs = _adaptive_sizes(sp, output_size)
    out = adaptive_avg(to_channels_first(up(x), channel_last), outs)
    return down(from_channels_first(out, channel_last), x.dtype)


defop("adaptive_avg_pool", ("x",), {"output_size": None, "channel_last": False},
      infer=_adaptive_infer, reference=_adaptive_avg_ref, canon=_adaptive_canon, to_float=True,
      family="pool", api=False, method=False,
      doc="N-d adaptive average pooling to `output_size`; see fw.core.ops.pool.")


def _adaptive_max_infer(x, output_size=None, channel_last=False):
    t = _adaptive_infer(x, output_size, channel_last)
    return t, TensorType(t.shape, _dt.int32)


def _adaptive_max_ref(x, output_size=None, channel_last=False):
    _check_x(x.shape)
    _, _, sp = split_layout(x.shape, channel_last)
    outs = _adaptive_sizes(sp, output_size)
    out, idx = adaptive_max(to_channels_first(up(x), channel_last), outs)
    return (down(from_channels_first(out, channel_last), x.dtype),
            down(from_channels_first(arr(idx), channel_last), np.dtype(np.int32)))


defop("adaptive_max_pool", ("x",), {"output_size": None, "channel_last": False},
      outputs=("out", "mask"), infer=_adaptive_max_infer, reference=_adaptive_max_ref,
      canon=_adaptive_canon, to_float=True, family="pool", api=False, method=False,
      doc="N-d adaptive max pooling to `output_size`, with the flat spatial argmax (int32).")


# ---------------------------------------------------------------- max_unpool
def _unpool_canon(attrs):
    a = dict(attrs)
    a["channel_last"] = bool(a["channel_last"])
    if a.get("kernel_size") is None:
        raise InvalidArgumentError("'kernel_size' is required")
    a["kernel_size"] = canon_ints(a["kernel_size"], "kernel_size", 1)
    a["stride"] = canon_ints(a["stride"], "stride", 1, allow_none=True)
    if isinstance(a["padding"], str):
        raise InvalidArgumentError(f"'padding'={a['padding']!r}: max_unpool takes explicit "
                                   f"padding only")
    a["padding"] = canon_padding(a["padding"], a["channel_last"])
    a["output_size"] = canon_ints(a["output_size"], "output_size", 0, allow_none=True)
    return a


def _unpool_sizes(sp, kernel_size, stride, padding, output_size):
    nd = len(sp)
    if output_size is not None:
        return tuple(output_size)[-nd:] if len(output_size) >= nd else \
            expand(output_size, nd, "output_size")
    ks = expand(kernel_size, nd, "kernel_size")
    strides = ks if stride is None else expand(stride, nd, "stride")
    pads = explicit_pads(padding, nd)
    outs = []
    for i, k, s, (b, e) in zip(sp, ks, strides, pads):
        if i == DYN:
            outs.append(DYN)
            continue
        o = (i - 1) * s - b - e + k
        if o < 0:
            raise InvalidArgumentError(f"the default output size {o} is negative (input size "
                                       f"{i}, kernel {k}, stride {s}, padding {b}+{e})")
        outs.append(o)
    return tuple(outs)


def _unpool_infer(x, indices, kernel_size=None, stride=None, padding=0, output_size=None,
                  channel_last=False):
    require_real_float(x)
    require_int(indices, "indices")
    _check_x(x.shape)
    if len(indices.shape) != len(x.shape) or any(
            a != b and DYN not in (a, b) for a, b in zip(indices.shape, x.shape)):
        raise InvalidArgumentError(f"indices {shp(indices.shape)} must have the shape of x "
                                   f"{shp(x.shape)}")
    n, c, sp = split_layout(x.shape, channel_last)
    outs = _unpool_sizes(sp, kernel_size, stride, padding, output_size)
    return TensorType(join_layout(n, c, outs, channel_last), x.dtype)


def _unpool_ref(x, indices, kernel_size=None, stride=None, padding=0, output_size=None,
                channel_last=False):
    xd = _dt.from_numpy(x.dtype)
    _unpool_infer(TensorType(x.shape, xd), TensorType(indices.shape,
                                                      _dt.from_numpy(indices.dtype)),
                  kernel_size, stride, padding, output_size, channel_last)
    n, c, sp = split_layout(x.shape, channel_last)
    outs = _unpool_sizes(sp, kernel_size, stride, padding, output_size)
    npos = int(np.prod(sp))
    xt = to_channels_first(x, channel_last).reshape(n, c, npos)
    it = to_channels_first(indices, channel_last).reshape(n, c, npos).astype(np.intp)
    total = int(np.prod(outs))
    if it.size and (int(it.min()) < 0 or int(it.max()) >= total):
        raise InvalidArgumentError(f"indices must lie in [0, {total}) for the output spatial "
                                   f"size {list(outs)}, got values in [{int(it.min())}, "
                                   f"{int(it.max())}]")
    out = np.zeros((n, c, total), dtype=x.dtype)
    np.put_along_axis(out, it, xt, axis=2)
    return from_channels_first(out.reshape((n, c) + outs), channel_last)


defop("max_unpool", ("x", "indices"),
      {"kernel_size": None, "stride": None, "padding": 0, "output_size": None,
       "channel_last": False},
      infer=_unpool_infer, reference=_unpool_ref, canon=_unpool_canon, promote=(0,),
      to_float=True, family="pool", api=False, method=False,
      doc="Inverse of max pooling: scatter x into zeros at the flat spatial `indices`.")
