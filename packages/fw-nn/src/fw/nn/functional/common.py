"""Common functions of ``paddle.nn.functional``: linear maps, dropout, resampling,
padding, im2col, similarity and label smoothing."""

from __future__ import annotations

import math

from fw.core.errors import InvalidArgumentError
from fw.nn.functional._helpers import channel_last, check_param_dtype, op

__all__ = ["linear", "bilinear", "dropout", "dropout1d", "dropout2d", "dropout3d",
           "alpha_dropout", "feature_alpha_dropout", "interpolate", "upsample", "pad",
           "zeropad2d", "unfold", "fold", "cosine_similarity", "label_smooth"]


def linear(x, weight, bias=None, name=None):
    """x @ weight + bias with weight ``[in_features, out_features]`` (Paddle's layout).

    >>> import fw
    >>> fw.nn.functional.linear(fw.ones([1, 2]), fw.ones([2, 3]), fw.ones([3])).tolist()
    [[3.0, 3.0, 3.0]]
    """
    check_param_dtype("linear", x, weight)
    return op("linear", [x, weight, bias])


def bilinear(x1, x2, weight, bias=None, name=None):
    """out[n, o] = x1[n] @ weight[o] @ x2[n] + bias[o]; weight ``[out, in1, in2]``."""
    return op("bilinear", [x1, x2, weight, bias])


# ---------------------------------------------------------------- dropout
def dropout(x, p=0.5, axis=None, training=True, mode="upscale_in_train", name=None):
    """Zero elements with probability `p` (one draw shared along the axes not in `axis`).

    ``mode="upscale_in_train"`` scales kept elements by 1/(1-p) while training and is the
    identity in evaluation; ``"downscale_in_infer"`` keeps them unscaled and multiplies by
    (1-p) in evaluation. The mask drawn in the forward pass is the one the gradient uses.

    >>> import fw
    >>> fw.nn.functional.dropout(fw.ones([3]), 0.5, training=False).tolist()
    [1.0, 1.0, 1.0]
    """
    if isinstance(p, (int, float)) and not isinstance(p, bool) and not 0 <= p <= 1:
        raise InvalidArgumentError(f"dropout: 'p' must be in [0, 1], got {p}")
    if mode == "downgrade_in_infer":
        mode = "downscale_in_infer"
    if not training and mode == "upscale_in_train":
        return x
    if isinstance(p, (int, float)) and p == 0:  # nothing is dropped, nothing is scaled
        return x
    if isinstance(axis, int):
        axis = [axis]
    return op("dropout", [x], p=p, axis=axis, training=training, mode=mode)[0]


def _feature_dropout(x, p, training, data_format, ranks, fn):
    nd = len(x.shape)
    if nd not in ranks:
        raise InvalidArgumentError(f"{fn}: x must be {' or '.join(map(str, ranks))}-D, got "
                                   f"shape {list(x.shape)}")
    if not training:
        return x
    if nd == min(ranks) and fn == "dropout1d":  # [C, L]: one draw per channel
        axis = [0]
    else:
        axis = [0, nd - 1] if data_format[-1] == "C" else [0, 1]
    return op("dropout", [x], p=p, axis=axis, training=True, mode="upscale_in_train")[0]


def dropout1d(input, p=0.5, training=True, inplace=False, name=None):  # noqa: A002
    """Zero whole channels of ``[N, C, L]`` (or ``[C, L]``) input with probability p."""
    out = _feature_dropout(input, p, training, "NCL", (2, 3), "dropout1d")
    if inplace and out is not input:
        from fw.nn.functional._helpers import inplace as _ip

        return _ip("dropout1d", input, out)
    return out


def dropout2d(x, p=0.5, training=True, data_format="NCHW", name=None):
    """Zero whole channels of 4-D x with probability p (scaled by 1/(1-p) in training)."""
    channel_last(data_format, ("NCHW", "NHWC"), "dropout2d")
    return _feature_dropout(x, p, training, data_format, (4,), "dropout2d")


def dropout3d(x, p=0.5, training=True, data_format="NCDHW", name=None):
    """Zero whole channels of 5-D x with probability p."""
    channel_last(data_format, ("NCDHW", "NDHWC"), "dropout3d")
    return _feature_dropout(x, p, training, data_format, (5,), "dropout3d")


def alpha_dropout(x, p=0.5, training=True, name=None):
    """Dropout that keeps SELU's mean and variance (dropped values become -scale*alpha,
    then an affine correction)."""
    if not training:
        return x
    return op("alpha_dropout", [x], p=p, training=True)[0]


def feature_alpha_dropout(x, p=0.5, training=True, name=None):
    """`alpha_dropout` with one draw per (sample, channel)."""
    if not training:
        return x
    return op("alpha_dropout", [x], p=p, axis=[0, 1], training=True)[0]


# ---------------------------------------------------------------- resampling
_INTERP_FORMATS = {3: ("NCW", "NWC", "NCL", "NLC"), 4: ("NCHW", "NHWC"),
                   5: ("NCDHW", "NDHWC")}


def _scalars(v, what):
    if v is None:
        return None
    if hasattr(v, "tolist") and not isinstance(v, (list, tuple)):
        v = v.tolist()
    if isinstance(v, (list, tuple)):
        return [e.item() if hasattr(e, "item") else e for e in v]
    return v


def interpolate(x, size=None, scale_factor=None, mode="nearest", align_corners=False,
                align_mode=0, data_format=None, recompute_scale_factor=None, name=None):
    """Resize the spatial dims of x (3-D, 4-D or 5-D) to `size` or by `scale_factor`.

    Modes: ``nearest``, ``linear`` (3-D), ``bilinear``/``bicubic`` (4-D), ``trilinear``
    (5-D), ``area``. See `fw.core.ops.nn_misc` for the sampling positions.

    >>> import fw
    >>> fw.nn.functional.interpolate(fw.ones([1, 1, 2, 2]), scale_factor=2).shape
    [1, 1, 4, 4]
    """
    nd = len(x.shape)
    if nd not in _INTERP_FORMATS:
        raise InvalidArgumentError(f"interpolate: x must be 3-D, 4-D or 5-D, got shape "
                                   f"{list(x.shape)}")
    if data_format is None:
        data_format = _INTERP_FORMATS[nd][0]
    cl = channel_last(data_format, _INTERP_FORMATS[nd], "interpolate")
    size = _scalars(size, "size")
    scale_factor = _scalars(scale_factor, "scale_factor")
    if size is None and scale_factor is None:
        raise InvalidArgumentError("interpolate: one of 'size' and 'scale_factor' must be given")
    if size is not None and scale_factor is not None:
        raise InvalidArgumentError("interpolate: give only one of 'size' and 'scale_factor'")
    if recompute_scale_factor and scale_factor is not None:
        sp = x.shape[1:-1] if cl else x.shape[2:]
        sc = scale_factor if isinstance(scale_factor, list) else [scale_factor] * len(sp)
        size = [int(math.floor(d * s)) for d, s in zip(sp, sc)]
        scale_factor = None
    return op("interpolate", [x], size=size, scale_factor=scale_factor, mode=str(mode).lower(),
              align_corners=align_corners, align_mode=align_mode, channel_last=cl)


def upsample(x, size=None, scale_factor=None, mode="nearest", align_corners=False,
             align_mode=0, data_format=None, name=None):
    """The same as `interpolate`."""
    return interpolate(x, size, scale_factor, mode, align_corners, align_mode, data_format)


# ---------------------------------------------------------------- padding
_PAD_FORMATS = ("NCL", "NLC", "NCHW", "NHWC", "NCDHW", "NDHWC", "NC", "NCW", "NWC")


def pad(x, pad, mode="constant", value=0.0, data_format="NCHW", pad_from_left_axis=True,
        name=None):
    """Pad x (Paddle's ``F.pad``).

    Args:
        x: the tensor.
        pad: ints (a list, tuple or 1-D Tensor). With ``2 * x.ndim`` entries and
            ``pad_from_left_axis`` (constant mode): ``[before_0, after_0, before_1, ...]``
            from the first axis on. Otherwise pairs for the spatial axes starting from
            the last one: ``[left, right]``, ``[left, right, top, bottom]``, ``[left,
            right, top, bottom, front, back]`` (Pad1D/2D/3D order). In constant mode
            any other number of pairs pads the axes of x from the last one backwards,
            whatever `data_format` says (Paddle 3.x).
        mode: ``"constant"``, ``"reflect"``, ``"replicate"`` or ``"circular"``.
        value: the fill value of constant mode.
        data_format: where the channel axis is (``"NCHW"``, ``"NHWC"``, …).

    >>> import fw
    >>> fw.nn.functional.pad(fw.ones([1, 1, 2]), [1, 0], value=5.0).tolist()
    [[[5.0, 1.0, 1.0]]]
    """
    if hasattr(pad, "tolist") and not isinstance(pad, (list, tuple)):
        pad = pad.tolist()
    pad = [int(p.item() if hasattr(p, "item") else p) for p in pad]
    nd = len(x.shape)
    if len(pad) % 2:
        raise InvalidArgumentError(f"pad: 'pad' must hold pairs of numbers, got {pad}")
    if mode not in ("constant", "reflect", "replicate", "circular"):
        raise InvalidArgumentError(f"pad: 'mode' must be 'constant', 'reflect', 'replicate' or "
                                   f"'circular', got {mode!r}")
    paddings = [0] * (2 * nd)
    if len(pad) == 2 * nd and pad_from_left_axis and mode == "constant":
        paddings = list(pad)
    else:
        if data_format not in _PAD_FORMATS:
            raise InvalidArgumentError(f"pad: 'data_format' must be one of {list(_PAD_FORMATS)},"
                                       f" got {data_format!r}")
        cl = data_format[-1] == "C" and len(data_format) > 2
        spatial = list(range(1, nd - 1)) if cl else list(range(2, nd))
        npairs = len(pad) // 2
        # one pair per spatial axis follows data_format; any other count (constant
        # mode only) goes from x's last axis backwards, as Paddle 3.3 does
        order = spatial[::-1] if npairs == len(spatial) else list(range(nd - 1, -1, -1))
        if mode != "constant" and npairs != len(spatial):
            raise InvalidArgumentError(
                f"pad: mode {mode!r} pads the {len(spatial)} spatial axes of x "
                f"{list(x.shape)} ({data_format}): 'pad' needs {2 * len(spatial)} numbers, "
                f"got {pad}")
        if npairs > nd:
            raise InvalidArgumentError(f"pad: {len(pad)} numbers is more than 2 per axis of x "
                                       f"{list(x.shape)}")
        for i in range(npairs):
            ax = order[i]
            paddings[2 * ax] = pad[2 * i]
            paddings[2 * ax + 1] = pad[2 * i + 1]
    return op("pad", [x], paddings=paddings, mode=mode, value=value)


def zeropad2d(x, padding, data_format="NCHW", name=None):
    """Zero-pad the H and W axes: padding ``[left, right, top, bottom]`` (or one int)."""
    if isinstance(padding, int):
        padding = [padding] * 4
    return pad(x, padding, mode="constant", value=0.0, data_format=data_format)


# ---------------------------------------------------------------- im2col
def unfold(x, kernel_sizes, strides=1, paddings=0, dilations=1, name=None):
    """Sliding blocks of x [N, C, H, W] as columns: ``[N, C*kh*kw, L]``."""
    return op("unfold", [x], kernel_sizes=kernel_sizes, strides=strides, paddings=paddings,
              dilations=dilations)


def fold(x, output_sizes, kernel_sizes, strides=1, paddings=0, dilations=1, name=None):
    """Sum columns ``[N, C*kh*kw, L]`` back into ``[N, C, H, W]`` (inverse layout of
    `unfold`)."""
    return op("fold", [x], output_sizes=output_sizes, kernel_sizes=kernel_sizes,
              strides=strides, paddings=paddings, dilations=dilations)


# ---------------------------------------------------------------- similarity, smoothing
def cosine_similarity(x1, x2, axis=1, eps=1e-8):
    """sum(x1 * x2) / max(||x1|| * ||x2||, eps) along `axis` (broadcast)."""
    return op("cosine_similarity", [x1, x2], axis=axis, eps=eps)


def label_smooth(label, prior_dist=None, epsilon=0.1, name=None):
    """(1 - epsilon) * label + epsilon * prior (uniform 1/num_classes by default)."""
    return op("label_smooth", [label, prior_dist], epsilon=epsilon)

