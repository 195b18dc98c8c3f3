"""Miscellaneous nn ops of ``paddle.nn.functional``: linear layers, embedding, dropout,
resampling, pixel/channel shuffles, im2col, attention and distances. (Padding is the
shape family's ``pad`` op; ``one_hot`` is the indexing family's.)

``linear(x, weight, bias?)``
    ``x @ weight + bias`` with Paddle's weight layout ``[in_features, out_features]``;
    x is ``[..., in]``, bias ``[out]``. One op so the compiler can fuse it.
``bilinear(x1, x2, weight, bias?)``
    x1 ``[N, in1]``, x2 ``[N, in2]``, weight ``[out, in1, in2]``, bias ``[out]`` or
    ``[1, out]``: ``out[n, o] = x1[n] @ weight[o] @ x2[n] + bias[o]``.
``embedding(x, weight)`` -- ``padding_idx=None``
    ``weight[x]`` for integer ids x of any shape: result ``x.shape + [D]``. Rows whose id
    equals ``padding_idx`` (negative counts from the vocabulary size) are zeros (Paddle).
    Ids outside ``[0, V)`` are an error. Differentiable in weight only.
``dropout(x) -> (out, mask)`` [random] -- ``p=0.5, axis=None, training=True,
    mode="upscale_in_train"``
    mask (bool, x's shape) keeps an element with probability 1-p; with ``axis`` (int or
    list) one draw is shared along the other axes (``dropout2d`` is ``axis=(0, 1)``, or
    ``(0, ndim-1)`` channel-last; ``dropout3d`` likewise). upscale_in_train: training
    ``out = where(mask, x / (1-p), 0)`` (zeros when p = 1), eval ``out = x``.
    downscale_in_infer: training ``out = where(mask, x, 0)``, eval ``out = x * (1-p)``.
    Eval masks are all True. The mask is returned for the backward pass.
``alpha_dropout(x) -> (out, mask)`` [random] -- ``p=0.5, axis=None, training=True``
    SELU-preserving dropout: with ``alpha' = -1.7580993408473766`` (-scale*alpha of SELU),
    ``a = ((1-p) * (1 + p * alpha'^2))^-0.5``, ``b = -a * alpha' * p``:
    ``out = a * where(mask, x, alpha') + b`` while training (zeros when p = 1), x in eval.
    ``axis`` as for dropout (``feature_alpha_dropout`` is ``axis=(0, 1)``).
``interpolate(x)`` -- ``size=None, scale_factor=None, mode="nearest",
    align_corners=False, align_mode=0, channel_last=False``
    x ``[N, C, *S]`` with 1 to 3 spatial dims; exactly one of ``size`` (ints, one per
    spatial dim or one for all) and ``scale_factor`` (floats, likewise) is given; the
    output size is ``size`` or ``floor(i * scale)``. Modes: ``nearest`` and ``area`` (any
    rank), ``linear`` (1 spatial dim), ``bilinear``/``bicubic`` (2), ``trilinear`` (3).
    Per spatial dim, with ``ratio = (i-1)/(o-1)`` (0 if o == 1) when ``align_corners``,
    else ``1/scale`` when ``scale_factor`` was given, else ``i/o``, output position ``t``
    reads the input at:

    - nearest: ``floor(ratio*t)`` (``floor(ratio*t + 0.5)`` with align_corners);
    - linear modes: ``src = ratio*(t + 0.5) - 0.5`` clamped at 0 when ``align_mode == 0``
      and not ``align_corners``, else ``src = ratio*t``; linear blend of ``floor(src)``
      and the next position (clamped to the input);
    - bicubic: ``src = ratio*(t + 0.5) - 0.5`` (``ratio*t`` with align_corners), Keys
      cubic convolution with ``A = -0.75`` over 4 taps clamped to the input;
    - area: adaptive average pooling to the output size.
``pixel_shuffle(x)`` -- ``upscale_factor, channel_last=False``
    ``[N, C*r*r, H, W] -> [N, C, H*r, W*r]``, ``out[n, c, h*r+i, w*r+j] =
    x[n, c*r*r + i*r + j, h, w]``. ``pixel_unshuffle(x)`` -- ``downscale_factor,
    channel_last``: the inverse. ``channel_shuffle(x)`` -- ``groups, channel_last``: channels
    viewed as ``[groups, C/groups]`` and transposed (4-D x).
``unfold(x)`` -- ``kernel_sizes, strides=1, paddings=0, dilations=1``
    im2col of ``[N, C, H, W]`` to ``[N, C*kh*kw, L]`` (rows ordered c, then kernel row,
    then kernel column; L positions row-major). ``paddings``: an int, ``[ph, pw]`` or
    Paddle's unfold order ``[top, left, bottom, right]``. ``fold(x)`` --
    ``output_sizes, kernel_sizes, strides=1, paddings=0, dilations=1``: col2im, the
    adjoint: overlapping values are summed.
``scaled_dot_product_attention(query, key, value, attn_mask?)`` -- ``is_causal=False,
    scale=None``
    Paddle's layout ``[batch, seq_len, num_heads, head_dim]`` (or 3-D without batch);
    key/value may have fewer heads that divide query's (grouped-query attention: head h
    uses kv head ``h // (H / H_kv)``). ``softmax(q k^T * scale + bias) v`` per head with
    ``scale = 1/sqrt(head_dim)`` by default; ``attn_mask`` broadcasts to
    ``[batch, heads, seq_q, seq_k]``: a bool mask keeps True positions, a float mask is
    added. ``is_causal`` masks key positions ``j > i`` (top-left aligned). A query row with
    every key masked gives NaN. Dropout on the attention weights is not part of the op:
    fw-nn composes matmul/softmax/dropout when ``dropout_p > 0`` while training.
``cosine_similarity(x1, x2)`` -- ``axis=1, eps=1e-8``
    ``sum(x1*x2) / sqrt(max(sum(x1^2) * sum(x2^2), eps^2))`` along axis (broadcast).
``pairwise_distance(x, y)`` -- ``p=2.0, epsilon=1e-6, keepdim=False``
    ``||x - y + epsilon||_p`` over the last axis (broadcast); ``p=inf``/``-inf``: max/min
    of ``|.|``, ``p=0``: the count of nonzeros.
``label_smooth(label, prior_dist?)`` -- ``epsilon=0.1``
    ``(1 - epsilon) * label + epsilon * prior`` with prior ``1/num_classes`` (the size of
    label's last axis) unless ``prior_dist`` (``[num_classes]`` or ``[1, num_classes]``).
"""

from __future__ import annotations

import math

import numpy as np

from fw.core import dtypes as _dt
from fw.core.errors import InvalidArgumentError, InvalidTypeError
from fw.core.ir.types import DYN, TensorType
from fw.core.ops._infer import broadcast_shapes, norm_axes, norm_axis, require_int, shp
from fw.core.ops._infer import numel as _numel
from fw.core.ops._nn_misc_np import (
    _MODES,
    _float,
    _fold_infer,
    _fold_ref,
    _four_d,
    _int,
    _interp_infer,
    _interp_ref,
    _known,
    _types_of,
    _unfold_infer,
    _unfold_ref,
)
from fw.core.ops._registry import defop
from fw.core.ops._xp import xp_of
from fw.core.ops.activation import (
    arr,
    channel_axis,
    contiguous,
    down,
    require_real_float,
    rng_for,
    softmax_np,
    up,
)
from fw.core.ops.conv import (
    canon_ints,
    from_channels_first,
    join_layout,
    split_layout,
    to_channels_first,
)

__all__ = []


# ---------------------------------------------------------------- linear / bilinear
def _linear_infer(x, weight, bias=None):
    require_real_float(x)
    require_real_float(weight, "weight")
    if len(x.shape) < 1 or len(weight.shape) != 2:
        raise InvalidArgumentError(f"x {shp(x.shape)} must have at least 1 dimension and weight "
                                   f"{shp(weight.shape)} must be 2-D [in_features, "
                                   f"out_features]")
    k1, k2 = x.shape[-1], weight.shape[0]
    if _known(k1, k2) and k1 != k2:
        raise InvalidArgumentError(f"x {shp(x.shape)} has {k1} features but weight "
                                   f"{shp(weight.shape)} (layout [in, out]) expects {k2}")
    o = weight.shape[1]
    if bias is not None:
        require_real_float(bias, "bias")
        n = _numel(bias.shape)
        if len(bias.shape) < 1 or any(d != 1 for d in bias.shape[:-1] if d != DYN) or \
                _known(n, o) and n != o:
            raise InvalidArgumentError(f"bias {shp(bias.shape)} must be [{o}] (one per output "
                                       f"feature)")
    return TensorType(tuple(x.shape[:-1]) + (o,), x.dtype)


def _linear_ref(x, weight, bias=None):
    _linear_infer(*_types_of(x, weight, bias))
    out = np.matmul(up(x), up(weight))
    if bias is not None:
        out = out + up(bias).reshape(-1)
    return down(out, x.dtype)


defop("linear", ("x", "weight", "bias?"), infer=_linear_infer, reference=_linear_ref,
      to_float=True, family="nn_misc", api=False, method=False,
      doc="x @ weight + bias with weight [in_features, out_features] (Paddle's layout).")


def _bilinear_infer(x1, x2, weight, bias=None):
    for t, n in ((x1, "x1"), (x2, "x2"), (weight, "weight")):
        require_real_float(t, n)
    if len(x1.shape) != 2 or len(x2.shape) != 2 or len(weight.shape) != 3:
        raise InvalidArgumentError(f"x1 {shp(x1.shape)} and x2 {shp(x2.shape)} must be 2-D and "
                                   f"weight {shp(weight.shape)} 3-D [out, in1, in2]")
    o, i1, i2 = weight.shape
    if _known(x1.shape[1], i1) and x1.shape[1] != i1 or \
            _known(x2.shape[1], i2) and x2.shape[1] != i2 or \
            _known(x1.shape[0], x2.shape[0]) and x1.shape[0] != x2.shape[0]:
        raise InvalidArgumentError(f"x1 {shp(x1.shape)}, x2 {shp(x2.shape)} do not match weight "
                                   f"{shp(weight.shape)} ([out, in1, in2]) or each other")
    if bias is not None:
        require_real_float(bias, "bias")
        n = _numel(bias.shape)
        if _known(n, o) and n != o:
            raise InvalidArgumentError(f"bias {shp(bias.shape)} must have {o} elements")
    n = x1.shape[0] if x1.shape[0] != DYN else x2.shape[0]
    return TensorType((n, o), x1.dtype)


def _bilinear_ref(x1, x2, weight, bias=None):
    _bilinear_infer(*_types_of(x1, x2, weight, bias))
    a, b, w = up(x1), up(x2), up(weight)
    o, i1, i2 = w.shape
    # x1 @ W_o for every o at once: [N, in1] @ [in1, out*in2]
    t = np.matmul(a, w.transpose(1, 0, 2).reshape(i1, o * i2)).reshape(a.shape[0], o, i2)
    out = np.einsum("noj,nj->no", t, b)
    if bias is not None:
        out = out + up(bias).reshape(-1)
    return down(out, x1.dtype)


defop("bilinear", ("x1", "x2", "weight", "bias?"), infer=_bilinear_infer,
      reference=_bilinear_ref, to_float=True, family="nn_misc", api=False, method=False,
      doc="out[n, o] = x1[n] @ weight[o] @ x2[n] + bias[o].")


# ---------------------------------------------------------------- embedding
def _emb_canon(attrs):
    p = attrs["padding_idx"]
    return {"padding_idx": None if p is None else _int(p, "padding_idx")}


def _emb_infer(x, weight, padding_idx=None):
    require_int(x, "x")
    if len(weight.shape) != 2:
        raise InvalidArgumentError(f"weight {shp(weight.shape)} must be 2-D [num_embeddings, "
                                   f"embedding_dim]")
    v = weight.shape[0]
    if padding_idx is not None and v != DYN and not -v <= padding_idx < v:
        raise InvalidArgumentError(f"'padding_idx'={padding_idx} is out of range for {v} "
                                   f"embeddings")
    return TensorType(tuple(x.shape) + (weight.shape[1],), weight.dtype)


def _emb_ref(x, weight, padding_idx=None):
    _emb_infer(*_types_of(x, weight), padding_idx)
    v = weight.shape[0]
    if x.size:
        lo, hi = int(x.min()), int(x.max())
        if lo < 0 or hi >= v:
            raise InvalidArgumentError(f"ids must lie in [0, {v}) for a weight of shape "
                                       f"{list(weight.shape)}, got values in [{lo}, {hi}]")
    out = np.take(weight, x, axis=0)
    if padding_idx is not None:
        out[x == (padding_idx % v)] = 0
    return out


defop("embedding", ("x", "weight"), {"padding_idx": None}, infer=_emb_infer,
      reference=_emb_ref, canon=_emb_canon, promote=None, family="nn_misc", api=False,
      method=False, doc="Rows of weight for the integer ids x; padding_idx rows are zeros.")


# ---------------------------------------------------------------- dropout family
def _drop_canon(attrs):
    a = dict(attrs)
    a["p"] = _float(a["p"], "p")
    if not 0.0 <= a["p"] <= 1.0:
        raise InvalidArgumentError(f"'p' must be in [0, 1], got {a['p']}")
    a["training"] = bool(a["training"])
    ax = a.get("axis")
    if ax is not None:
        a["axis"] = canon_ints(ax, "axis")
    if "mode" in a:
        m = a["mode"]
        m = {"downgrade_in_infer": "downscale_in_infer"}.get(m, m)
        if m not in ("upscale_in_train", "downscale_in_infer"):
            raise InvalidArgumentError(f"'mode' must be 'upscale_in_train' or "
                                       f"'downscale_in_infer', got {a['mode']!r}")
        a["mode"] = m
    return a


def _drop_infer(x, p=0.5, axis=None, training=True, **_):
    require_real_float(x)
    if axis is not None:
        norm_axes(axis, len(x.shape))
    return x, TensorType(x.shape, _dt.bool_)


def _keep_mask(x, p, axis):
    """Bernoulli(1-p) keep mask of x's shape; shared along axes not in `axis`."""
    if axis is None:
        shape = x.shape
    else:
        axes = norm_axes(axis, x.ndim)
        shape = tuple(d if i in axes else 1 for i, d in enumerate(x.shape))
    # float32 draws: half the bytes and time of float64, and 2**-24 resolution is
    # far below any meaningful drop probability.
    keep = arr(rng_for(x).random(shape, dtype=np.float32) >= np.float32(p))
    return keep if axis is None else np.broadcast_to(keep, x.shape).copy()


def _dropout_ref(x, p=0.5, axis=None, training=True, mode="upscale_in_train"):
    xf = up(x)
    if not training:
        out = xf.copy() if mode == "upscale_in_train" else xf * (1.0 - p)
        return down(out, x.dtype), np.ones_like(x, order="C", dtype=bool)
    keep = _keep_mask(x, p, axis)
    out = np.multiply(xf, keep, dtype=xf.dtype)
    if mode == "upscale_in_train":
        out *= xf.dtype.type(0.0 if p >= 1.0 else 1.0 / (1.0 - p))
    return down(arr(out, xf.dtype), x.dtype), keep


defop("dropout", ("x",), {"p": 0.5, "axis": None, "training": True, "mode": "upscale_in_train"},
      outputs=("out", "mask"), infer=_drop_infer, reference=_dropout_ref, canon=_drop_canon,
      to_float=True, random=True, family="nn_misc", api=False, method=False,
      doc="Dropout; returns (out, keep mask). See fw.core.ops.nn_misc for the modes.")

_ALPHA_P = -1.6732632423543772848170429916717 * 1.0507009873554804934193349852946


def _alpha_dropout_ref(x, p=0.5, axis=None, training=True):
    xf = up(x)
    if not training or p == 0.0:
        return down(xf.copy(), x.dtype), np.ones_like(x, order="C", dtype=bool)
    keep = _keep_mask(x, p, axis)
    if p >= 1.0:
        return down(np.zeros_like(xf), x.dtype), keep
    a = ((1.0 - p) * (1.0 + p * _ALPHA_P * _ALPHA_P)) ** -0.5
    b = -a * _ALPHA_P * p
    out = a * np.where(keep, xf, _ALPHA_P) + b
    return down(arr(out, xf.dtype), x.dtype), keep


defop("alpha_dropout", ("x",), {"p": 0.5, "axis": None, "training": True},
      outputs=("out", "mask"), infer=_drop_infer, reference=_alpha_dropout_ref,
      canon=_drop_canon, to_float=True, random=True, family="nn_misc", api=False, method=False,
      doc="SELU-preserving dropout; returns (out, keep mask).")


# ---------------------------------------------------------------- interpolate
def _interp_canon(attrs):
    a = dict(attrs)
    a["channel_last"] = bool(a["channel_last"])
    a["align_corners"] = bool(a["align_corners"])
    a["align_mode"] = _int(a["align_mode"], "align_mode")
    if a["align_mode"] not in (0, 1):
        raise InvalidArgumentError(f"'align_mode' must be 0 or 1, got {a['align_mode']}")
    mode = str(a["mode"]).lower()
    if mode not in _MODES:
        raise InvalidArgumentError(f"'mode' must be one of {list(_MODES)}, got {a['mode']!r}")
    a["mode"] = mode
    size, sf = a["size"], a["scale_factor"]
    if (size is None) == (sf is None):
        raise InvalidArgumentError("exactly one of 'size' and 'scale_factor' must be given")
    if size is not None:
        a["size"] = canon_ints(size, "size", 1)
    else:
        if hasattr(sf, "tolist") and not isinstance(sf, (list, tuple)):
            sf = sf.tolist()
        items = sf if isinstance(sf, (list, tuple)) else [sf]
        a["scale_factor"] = tuple(_float(v, "scale_factor") for v in items)
        if any(not v > 0 for v in a["scale_factor"]):
            raise InvalidArgumentError(f"'scale_factor'={list(items)} must be positive")
    if a["align_corners"] and mode in ("area",):
        raise InvalidArgumentError(f"'align_corners' cannot be used with mode {mode!r}")
    return a


defop("interpolate", ("x",),
      {"size": None, "scale_factor": None, "mode": "nearest", "align_corners": False,
       "align_mode": 0, "channel_last": False},
      infer=_interp_infer, reference=_interp_ref, canon=_interp_canon, to_float=True,
      family="nn_misc", api=False, method=False,
      doc="Resample the spatial dims (nearest, linear, bilinear, trilinear, bicubic, area).")


# ---------------------------------------------------------------- pixel / channel shuffles
def _factor_canon(name):
    def canon(attrs):
        a = dict(attrs)
        a["channel_last"] = bool(a["channel_last"])
        a[name] = _int(a[name], name)
        if a[name] < 1:
            raise InvalidArgumentError(f"'{name}' must be >= 1, got {a[name]}")
        return a

    return canon


def _ps_infer(x, upscale_factor=None, channel_last=False):
    _four_d(x)
    n, c, (h, w) = split_layout(x.shape, channel_last)
    r = upscale_factor
    if c != DYN and c % (r * r):
        raise InvalidArgumentError(f"the {c} channels of x {shp(x.shape)} are not divisible by "
                                   f"upscale_factor^2 = {r * r}")
    return TensorType(join_layout(n, DYN if c == DYN else c // (r * r),
                                  (DYN if h == DYN else h * r, DYN if w == DYN else w * r),
                                  channel_last), x.dtype)


def _ps_ref(x, upscale_factor=None, channel_last=False):
    _ps_infer(*_types_of(x), upscale_factor, channel_last)
    r = upscale_factor
    v = to_channels_first(x, channel_last)
    n, c, h, w = v.shape
    v = v.reshape(n, c // (r * r), r, r, h, w).transpose(0, 1, 4, 2, 5, 3)
    return contiguous(from_channels_first(v.reshape(n, c // (r * r), h * r, w * r),
                                                    channel_last))


defop("pixel_shuffle", ("x",), {"upscale_factor": None, "channel_last": False},
      infer=_ps_infer, reference=_ps_ref, canon=_factor_canon("upscale_factor"), promote=None,
      family="nn_misc", api=False, method=False,
      doc="[N, C*r*r, H, W] -> [N, C, H*r, W*r].")


def _pu_infer(x, downscale_factor=None, channel_last=False):
    _four_d(x)
    n, c, (h, w) = split_layout(x.shape, channel_last)
    r = downscale_factor
    for d, nm in ((h, "height"), (w, "width")):
        if d != DYN and d % r:
            raise InvalidArgumentError(f"the {nm} {d} of x {shp(x.shape)} is not divisible by "
                                       f"downscale_factor = {r}")
    return TensorType(join_layout(n, DYN if c == DYN else c * r * r,
                                  (DYN if h == DYN else h // r, DYN if w == DYN else w // r),
                                  channel_last), x.dtype)


def _pu_ref(x, downscale_factor=None, channel_last=False):
    _pu_infer(*_types_of(x), downscale_factor, channel_last)
    r = downscale_factor
    v = to_channels_first(x, channel_last)
    n, c, h, w = v.shape
    v = v.reshape(n, c, h // r, r, w // r, r).transpose(0, 1, 3, 5, 2, 4)
    return contiguous(from_channels_first(v.reshape(n, c * r * r, h // r, w // r),
                                                    channel_last))


defop("pixel_unshuffle", ("x",), {"downscale_factor": None, "channel_last": False},
      infer=_pu_infer, reference=_pu_ref, canon=_factor_canon("downscale_factor"),
      promote=None, family="nn_misc", api=False, method=False,
      doc="[N, C, H*r, W*r] -> [N, C*r*r, H, W] (inverse of pixel_shuffle).")


def _cs_infer(x, groups=None, channel_last=False):
    _four_d(x)
    c = x.shape[channel_axis(4, channel_last)]
    if c != DYN and c % groups:
        raise InvalidArgumentError(f"'groups'={groups} does not divide the {c} channels of x "
                                   f"{shp(x.shape)}")
    return x


def _cs_ref(x, groups=None, channel_last=False):
    _cs_infer(*_types_of(x), groups, channel_last)
    v = to_channels_first(x, channel_last)
    n, c, h, w = v.shape
    v = v.reshape(n, groups, c // groups, h, w).transpose(0, 2, 1, 3, 4).reshape(n, c, h, w)
    return contiguous(from_channels_first(v, channel_last))


defop("channel_shuffle", ("x",), {"groups": None, "channel_last": False}, infer=_cs_infer,
      reference=_cs_ref, canon=_factor_canon("groups"), promote=None, family="nn_misc",
      api=False, method=False,
      doc="View the channels as [groups, C/groups] and transpose them.")


# ---------------------------------------------------------------- unfold / fold
def _fold_canon(attrs):
    a = dict(attrs)
    a["kernel_sizes"] = canon_ints(a["kernel_sizes"], "kernel_sizes", 1)
    a["strides"] = canon_ints(a["strides"], "strides", 1)
    a["dilations"] = canon_ints(a["dilations"], "dilations", 1)
    a["paddings"] = canon_ints(a["paddings"], "paddings", 0)
    if "output_sizes" in a:
        a["output_sizes"] = canon_ints(a["output_sizes"], "output_sizes", 1)
    return a


defop("unfold", ("x",), {"kernel_sizes": None, "strides": 1, "paddings": 0, "dilations": 1},
      infer=_unfold_infer, reference=_unfold_ref, canon=_fold_canon, to_float=True,
      family="nn_misc", api=False, method=False,
      doc="im2col: [N, C, H, W] -> [N, C*kh*kw, L] sliding blocks.")


defop("fold", ("x",),
      {"output_sizes": None, "kernel_sizes": None, "strides": 1, "paddings": 0, "dilations": 1},
      infer=_fold_infer, reference=_fold_ref, canon=_fold_canon, to_float=True,
      family="nn_misc", api=False, method=False,
      doc="col2im: [N, C*kh*kw, L] -> [N, C, H, W], summing overlapping blocks.")


# ---------------------------------------------------------------- attention
def _sdpa_canon(attrs):
    a = dict(attrs)
    a["is_causal"] = bool(a["is_causal"])
    if a["scale"] is not None:
        a["scale"] = _float(a["scale"], "scale")
    return a


def _sdpa_infer(query, key, value, attn_mask=None, is_causal=False, scale=None):
    for t, n in ((query, "query"), (key, "key"), (value, "value")):
        require_real_float(t, n)
    nd = len(query.shape)
    if nd not in (3, 4) or len(key.shape) != nd or len(value.shape) != nd:
        raise InvalidArgumentError(
            f"query {shp(query.shape)}, key {shp(key.shape)} and value {shp(value.shape)} must "
            f"all be 4-D [batch, seq_len, num_heads, head_dim] (or 3-D without batch)")
    q, k, v = ((1,) + tuple(t.shape) if nd == 3 else tuple(t.shape)
               for t in (query, key, value))
    bad = []
    if _known(q[0], k[0]) and q[0] != k[0] or _known(k[0], v[0]) and k[0] != v[0]:
        bad.append("batch sizes differ")
    if _known(k[1], v[1]) and k[1] != v[1]:
        bad.append("key and value sequence lengths differ")
    if _known(k[2], v[2]) and k[2] != v[2]:
        bad.append("key and value head counts differ")
    if _known(q[2], k[2]) and (k[2] == 0 or q[2] % k[2]):
        bad.append("the key/value head count must divide the query head count")
    if _known(q[3], k[3]) and q[3] != k[3]:
        bad.append("query and key head_dim differ")
    if bad:
        raise InvalidArgumentError(f"{'; '.join(bad)}: query {shp(query.shape)}, key "
                                   f"{shp(key.shape)}, value {shp(value.shape)}")
    if attn_mask is not None:
        if attn_mask.dtype.kind not in (_dt._BOOL, _dt._FLOAT):
            raise InvalidTypeError(f"'attn_mask' must be bool or floating, got "
                                   f"{attn_mask.dtype.name}")
        broadcast_shapes(attn_mask.shape, (q[0], q[2], q[1], k[1]),
                         names=("attn_mask", "[batch, heads, seq_q, seq_k]"))
    out = (q[0], q[1], q[2], v[3])
    return TensorType(out[1:] if nd == 3 else out, query.dtype)


def _sdpa_ref(query, key, value, attn_mask=None, is_causal=False, scale=None):
    _sdpa_infer(*_types_of(query, key, value, attn_mask), is_causal=is_causal, scale=scale)
    three = query.ndim == 3
    q, k, v = (up(t)[None] if three else up(t) for t in (query, key, value))
    q = q.transpose(0, 2, 1, 3)  # [B, H, Sq, D]
    k = k.transpose(0, 2, 1, 3)
    v = v.transpose(0, 2, 1, 3)
    rep = q.shape[1] // k.shape[1] if k.shape[1] else 1
    if rep > 1:  # grouped-query attention: each kv head serves `rep` query heads
        k = np.repeat(k, rep, axis=1)
        v = np.repeat(v, rep, axis=1)
    s = q.shape[-1]
    sc = (1.0 / math.sqrt(s) if s else 1.0) if scale is None else scale
    scores = np.matmul(q, k.transpose(0, 1, 3, 2)) * q.dtype.type(sc)
    sq, sk = scores.shape[-2:]
    if is_causal:
        allowed = xp_of(scores).tri(sq, sk, dtype=bool)
        scores = np.where(allowed, scores, -np.inf)
    if attn_mask is not None:
        if attn_mask.dtype == np.bool_:
            scores = np.where(attn_mask, scores, -np.inf)
        else:
            scores = scores + up(attn_mask)
    probs = softmax_np(scores, -1)
    out = np.matmul(probs, v).transpose(0, 2, 1, 3)
    if three:
        out = out[0]
    return down(contiguous(out), query.dtype)


defop("scaled_dot_product_attention", ("query", "key", "value", "attn_mask?"),
      {"is_causal": False, "scale": None}, infer=_sdpa_infer, reference=_sdpa_ref,
      canon=_sdpa_canon, promote=(0, 1, 2), to_float=True, family="nn_misc", api=False,
      method=False,
      doc="softmax(q k^T * scale + mask) v in Paddle's [batch, seq, heads, head_dim] layout.")


# ---------------------------------------------------------------- distances
def _cos_canon(attrs):
    return {"axis": _int(attrs["axis"], "axis"), "eps": _float(attrs["eps"], "eps")}


def _cos_infer(x1, x2, axis=1, eps=1e-8):
    require_real_float(x1, "x1")
    require_real_float(x2, "x2")
    s = broadcast_shapes(x1.shape, x2.shape, names=("x1", "x2"))
    ax = norm_axis(axis, len(s))
    return TensorType(s[:ax] + s[ax + 1:], x1.dtype)


def _cos_ref(x1, x2, axis=1, eps=1e-8):
    a, b = np.broadcast_arrays(up(x1), up(x2))
    ax = norm_axis(axis, a.ndim)
    w12 = np.add.reduce(a * b, axis=ax)
    w1 = np.add.reduce(a * a, axis=ax)
    w2 = np.add.reduce(b * b, axis=ax)
    return down(w12 / np.sqrt(np.maximum(w1 * w2, eps * eps)), x1.dtype)


defop("cosine_similarity", ("x1", "x2"), {"axis": 1, "eps": 1e-8}, infer=_cos_infer,
      reference=_cos_ref, canon=_cos_canon, to_float=True, family="nn_misc", api=False,
      method=False, doc="Cosine similarity of x1 and x2 along axis (broadcast).")


def _pd_canon(attrs):
    return {"p": _float(attrs["p"], "p"), "epsilon": _float(attrs["epsilon"], "epsilon"),
            "keepdim": bool(attrs["keepdim"])}


def _pd_infer(x, y, p=2.0, epsilon=1e-6, keepdim=False):
    require_real_float(x)
    require_real_float(y, "y")
    s = broadcast_shapes(x.shape, y.shape, names=("x", "y"))
    if not s:
        raise InvalidArgumentError("x and y must have at least one dimension")
    return TensorType(s[:-1] + ((1,) if keepdim else ()), x.dtype)


def _pd_ref(x, y, p=2.0, epsilon=1e-6, keepdim=False):
    _pd_infer(*_types_of(x, y), p, epsilon, keepdim)
    d = np.abs(up(x) - up(y) + epsilon)
    if d.shape[-1] == 0:
        r = xp_of(d).zeros(d.shape[:-1] + ((1,) if keepdim else ()), dtype=d.dtype)
        return down(r, x.dtype)
    if p == math.inf:
        r = np.max(d, axis=-1, keepdims=keepdim)
    elif p == -math.inf:
        r = np.min(d, axis=-1, keepdims=keepdim)
    elif p == 0:
        r = np.add.reduce((d != 0).astype(d.dtype), axis=-1, keepdims=keepdim)
    else:
        r = np.power(np.add.reduce(np.power(d, p), axis=-1, keepdims=keepdim), 1.0 / p)
    return down(arr(r, d.dtype), x.dtype)


defop("pairwise_distance", ("x", "y"), {"p": 2.0, "epsilon": 1e-6, "keepdim": False},
      infer=_pd_infer, reference=_pd_ref, canon=_pd_canon, to_float=True, family="nn_misc",
      api=False, method=False, doc="||x - y + epsilon||_p over the last axis.")


# ---------------------------------------------------------------- label_smooth
def _ls_canon(attrs):
    e = _float(attrs["epsilon"], "epsilon")
    if not 0.0 <= e <= 1.0:
        raise InvalidArgumentError(f"'epsilon' must be in [0, 1], got {e}")
    return {"epsilon": e}


def _ls_infer(label, prior_dist=None, epsilon=0.1):
    require_real_float(label, "label")
    if len(label.shape) < 1:
        raise InvalidArgumentError("label must have a class axis")
    if prior_dist is not None:
        require_real_float(prior_dist, "prior_dist")
        nc = label.shape[-1]
        n = _numel(prior_dist.shape)
        if _known(n, nc) and n != nc:
            raise InvalidArgumentError(f"prior_dist {shp(prior_dist.shape)} must have one entry "
                                       f"per class ({nc})")
    return label


def _ls_ref(label, prior_dist=None, epsilon=0.1):
    _ls_infer(*_types_of(label, prior_dist), epsilon)
    lab = up(label)
    nc = label.shape[-1]
    prior = (1.0 / nc if nc else 0.0) if prior_dist is None else up(prior_dist).reshape(-1)
    return down((1.0 - epsilon) * lab + epsilon * prior, label.dtype)


defop("label_smooth", ("label", "prior_dist?"), {"epsilon": 0.1}, infer=_ls_infer,
      reference=_ls_ref, canon=_ls_canon, to_float=True, family="nn_misc", api=False,
      method=False, doc="(1 - epsilon) * label + epsilon * prior (uniform by default).")
