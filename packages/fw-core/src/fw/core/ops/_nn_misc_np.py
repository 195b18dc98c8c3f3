"""The sampling ops of fw.core.ops.nn_misc, interpolate and unfold/fold: their infer
rules, NumPy reference kernels and the geometry both share (output sizes, source
positions and weights of the interpolation modes, sliding blocks). The ops are
declared in nn_misc.py, whose family they keep.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from fw.core import dtypes as _dt
from fw.core.errors import InvalidArgumentError, InvalidTypeError
from fw.core.ir.types import DYN, TensorType
from fw.core.ops._infer import shp
from fw.core.ops.activation import (
    contiguous,
    down,
    require_real_float,
    up,
)
from fw.core.ops.conv import (
    expand,
    from_channels_first,
    join_layout,
    split_layout,
    to_channels_first,
)
from fw.core.ops.pool import adaptive_avg


def _known(*ds):
    return all(d != DYN for d in ds)



def _types_of(*arrays):
    return [None if a is None else TensorType(a.shape, _dt.from_numpy(a.dtype)) for a in arrays]


def _float(v, name):
    if hasattr(v, "item"):
        v = v.item()
    if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)):
        raise InvalidTypeError(f"'{name}' must be a number, got {v!r}")
    return float(v)


def _int(v, name):
    if hasattr(v, "item") and not isinstance(v, (list, tuple)):
        v = v.item()
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
        raise InvalidTypeError(f"'{name}' must be an int, got {v!r}")
    return int(v)


_MODE_DIMS = {"linear": 1, "bilinear": 2, "bicubic": 2, "trilinear": 3}


_MODES = ("nearest", "area") + tuple(_MODE_DIMS)


def _interp_sizes(sp, size, scale_factor, mode):
    nd = len(sp)
    need = _MODE_DIMS.get(mode)
    if need is not None and need != nd:
        raise InvalidArgumentError(f"mode {mode!r} needs {need} spatial dimension(s) "
                                   f"({need + 2}-D x), got {nd}")
    if not 1 <= nd <= 3:
        raise InvalidArgumentError(f"interpolate takes 3-D to 5-D x, got {nd + 2}-D")
    if size is not None:
        return expand(size, nd, "size"), None
    sf = expand(scale_factor, nd, "scale_factor")
    outs = tuple(DYN if i == DYN else int(math.floor(i * s)) for i, s in zip(sp, sf))
    for o, i in zip(outs, sp):
        if o != DYN and o < 1:
            raise InvalidArgumentError(f"'scale_factor'={list(sf)} gives an empty output for "
                                       f"input size {i}")
    return outs, sf


def _interp_infer(x, size=None, scale_factor=None, mode="nearest", align_corners=False,
                  align_mode=0, channel_last=False):
    require_real_float(x)
    if len(x.shape) < 3:
        raise InvalidArgumentError(f"x must be [N, C, *spatial], got {shp(x.shape)}")
    n, c, sp = split_layout(x.shape, channel_last)
    outs, _ = _interp_sizes(sp, size, scale_factor, mode)
    return TensorType(join_layout(n, c, outs, channel_last), x.dtype)


def _ratio(i, o, scale, align_corners):
    if align_corners:
        return (i - 1) / (o - 1) if o > 1 else 0.0
    return 1.0 / scale if scale is not None else i / o


def _cubic_weights(t):
    a = -0.75

    def near(u):  # |u| <= 1
        return ((a + 2) * u - (a + 3)) * u * u + 1

    def far(u):  # 1 < |u| < 2
        return ((a * u - 5 * a) * u + 8 * a) * u - 4 * a

    return far(t + 1), near(t), near(1 - t), far(2 - t)


def _taps(i, o, scale, mode, align_corners, align_mode):
    """(indices [o, T], weights [o, T] or None) reading input dim of size i."""
    r = _ratio(i, o, scale, align_corners)
    t = np.arange(o, dtype=np.float64)
    if mode == "nearest":
        src = np.floor(r * t + 0.5) if align_corners else np.floor(r * t)
        return np.minimum(src.astype(np.int64), i - 1)[:, None], None
    if mode == "bicubic":
        src = r * t if align_corners else r * (t + 0.5) - 0.5
        base = np.floor(src)
        frac = src - base
        idx = np.clip(base.astype(np.int64)[:, None] + np.arange(-1, 3), 0, i - 1)
        return idx, np.stack(_cubic_weights(frac), axis=1)
    # linear, bilinear, trilinear
    if align_mode == 0 and not align_corners:
        src = np.maximum(r * (t + 0.5) - 0.5, 0.0)
    else:
        src = r * t
    lo = np.minimum(np.floor(src).astype(np.int64), i - 1)
    hi = np.minimum(lo + 1, i - 1)
    w = np.clip(src - lo, 0.0, 1.0)
    return np.stack([lo, hi], axis=1), np.stack([1.0 - w, w], axis=1)


def _interp_ref(x, size=None, scale_factor=None, mode="nearest", align_corners=False,
                align_mode=0, channel_last=False):
    _interp_infer(*_types_of(x), size, scale_factor, mode, align_corners, align_mode,
                  channel_last)
    _, _, sp = split_layout(x.shape, channel_last)
    outs, sf = _interp_sizes(sp, size, scale_factor, mode)
    v = to_channels_first(up(x), channel_last)
    if mode == "area":
        v = adaptive_avg(v, outs)
    elif v.size:
        for d, (i, o) in enumerate(zip(sp, outs)):
            ax = 2 + d
            idx, w = _taps(i, o, None if sf is None else sf[d], mode, align_corners, align_mode)
            if w is None:
                v = np.take(v, idx[:, 0], axis=ax)
                continue
            shape = [1] * v.ndim
            shape[ax] = o
            acc = 0
            for k in range(idx.shape[1]):
                acc = acc + np.take(v, idx[:, k], axis=ax) * w[:, k].astype(v.dtype).reshape(shape)
            v = acc
    else:
        n, c = v.shape[:2]
        v = np.zeros((n, c) + tuple(outs), dtype=v.dtype)
    return down(contiguous(from_channels_first(v, channel_last)), x.dtype)


def _four_d(x):
    if len(x.shape) != 4:
        raise InvalidArgumentError(f"x must be 4-D [N, C, H, W] (or [N, H, W, C]), got "
                                   f"{shp(x.shape)}")


def _fold_geometry(kernel_sizes, strides, paddings, dilations):
    ks = expand(kernel_sizes, 2, "kernel_sizes")
    st = expand(strides, 2, "strides")
    dl = expand(dilations, 2, "dilations")
    p = tuple(paddings)
    if len(p) == 1:
        pads = ((p[0], p[0]), (p[0], p[0]))
    elif len(p) == 2:
        pads = ((p[0], p[0]), (p[1], p[1]))
    elif len(p) == 4:  # Paddle's unfold order: top, left, bottom, right
        pads = ((p[0], p[2]), (p[1], p[3]))
    else:
        raise InvalidArgumentError(f"'paddings'={list(p)} must have 1, 2 or 4 entries "
                                   f"([top, left, bottom, right])")
    return ks, st, dl, pads


def _blocks(sizes, ks, st, dl, pads):
    outs = []
    for i, k, s, d, (b, e) in zip(sizes, ks, st, dl, pads):
        if i == DYN:
            outs.append(DYN)
            continue
        span = i + b + e - (d * (k - 1) + 1)
        if span < 0:
            raise InvalidArgumentError(f"the padded size {i + b + e} is smaller than the dilated "
                                       f"kernel size {d * (k - 1) + 1}")
        outs.append(span // s + 1)
    return outs


def _unfold_infer(x, kernel_sizes=None, strides=1, paddings=0, dilations=1):
    require_real_float(x)
    _four_d(x)
    ks, st, dl, pads = _fold_geometry(kernel_sizes, strides, paddings, dilations)
    oh, ow = _blocks(x.shape[2:], ks, st, dl, pads)
    c = x.shape[1]
    return TensorType((x.shape[0], DYN if c == DYN else c * ks[0] * ks[1],
                       DYN if DYN in (oh, ow) else oh * ow), x.dtype)


def _unfold_ref(x, kernel_sizes=None, strides=1, paddings=0, dilations=1):
    _unfold_infer(*_types_of(x), kernel_sizes, strides, paddings, dilations)
    ks, st, dl, pads = _fold_geometry(kernel_sizes, strides, paddings, dilations)
    outs = _blocks(x.shape[2:], ks, st, dl, pads)
    n, c = x.shape[:2]
    xp = np.pad(x, [(0, 0), (0, 0)] + list(pads)) if any(map(any, pads)) else x
    eff = tuple(d * (k - 1) + 1 for k, d in zip(ks, dl))
    win = sliding_window_view(xp, eff, axis=(2, 3))
    win = win[:, :, 0:(outs[0] - 1) * st[0] + 1:st[0], 0:(outs[1] - 1) * st[1] + 1:st[1],
              ::dl[0], ::dl[1]]  # [N, C, oh, ow, kh, kw]
    cols = win.transpose(0, 1, 4, 5, 2, 3).reshape(n, c * ks[0] * ks[1], outs[0] * outs[1])
    return contiguous(cols)


def _fold_infer(x, output_sizes=None, kernel_sizes=None, strides=1, paddings=0, dilations=1):
    require_real_float(x)
    if len(x.shape) != 3:
        raise InvalidArgumentError(f"x must be 3-D [N, C*kh*kw, L], got {shp(x.shape)}")
    ks, st, dl, pads = _fold_geometry(kernel_sizes, strides, paddings, dilations)
    osz = expand(output_sizes, 2, "output_sizes")
    oh, ow = _blocks(osz, ks, st, dl, pads)
    kk = ks[0] * ks[1]
    ck, nl = x.shape[1], x.shape[2]
    if ck != DYN and ck % kk:
        raise InvalidArgumentError(f"dimension 1 of x {shp(x.shape)} must be a multiple of "
                                   f"kh*kw = {kk}")
    if nl != DYN and nl != oh * ow:
        raise InvalidArgumentError(f"dimension 2 of x {shp(x.shape)} must be the number of "
                                   f"blocks {oh}*{ow} = {oh * ow} for output size {list(osz)}")
    return TensorType((x.shape[0], DYN if ck == DYN else ck // kk) + osz, x.dtype)


def _fold_ref(x, output_sizes=None, kernel_sizes=None, strides=1, paddings=0, dilations=1):
    _fold_infer(*_types_of(x), output_sizes, kernel_sizes, strides, paddings, dilations)
    ks, st, dl, pads = _fold_geometry(kernel_sizes, strides, paddings, dilations)
    osz = expand(output_sizes, 2, "output_sizes")
    oh, ow = _blocks(osz, ks, st, dl, pads)
    n = x.shape[0]
    c = x.shape[1] // (ks[0] * ks[1])
    xf = up(x)
    cols = xf.reshape(n, c, ks[0], ks[1], oh, ow)
    buf = np.zeros((n, c, osz[0] + pads[0][0] + pads[0][1], osz[1] + pads[1][0] + pads[1][1]),
                   dtype=xf.dtype)
    for i in range(ks[0]):  # a loop over kernel offsets, vectorised over blocks
        for j in range(ks[1]):
            r0, c0 = i * dl[0], j * dl[1]
            buf[:, :, r0:r0 + (oh - 1) * st[0] + 1:st[0], c0:c0 + (ow - 1) * st[1] + 1:st[1]] \
                += cols[:, :, i, j]
    out = buf[:, :, pads[0][0]:pads[0][0] + osz[0], pads[1][0]:pads[1][0] + osz[1]]
    return down(contiguous(out), x.dtype)
