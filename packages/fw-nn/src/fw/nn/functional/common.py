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
    """Fully connected transform: ``x @ weight + bias``.

    ``weight`` has Paddle's layout ``[in_features, out_features]`` (the transpose of
    PyTorch's). ``x`` and ``weight`` must have the same dtype (a float64 input to a
    float32 weight raises rather than silently computing in float64).

    Args:
        x (Tensor): the input ``[*, in_features]``.
        weight (Tensor): ``[in_features, out_features]``.
        bias (Tensor, optional): ``[out_features]``. Default: None.
        name (str, optional): unused, for Paddle compatibility. Default: None.

    Returns:
        Tensor: ``[*, out_features]``.

    Examples:
        >>> import fw
        >>> x = fw.ones([2, 3])
        >>> w = fw.to_tensor([[1.0, 0.0], [1.0, 1.0], [1.0, 2.0]])
        >>> fw.nn.functional.linear(x, w, bias=fw.to_tensor([0.5, 0.0])).tolist()
        [[3.5, 3.0], [3.5, 3.0]]
    """
    check_param_dtype("linear", x, weight)
    return op("linear", [x, weight, bias])


def bilinear(x1, x2, weight, bias=None, name=None):
    """Bilinear transform: ``out[n, o] = x1[n] @ weight[o] @ x2[n] + bias[o]``.

    Args:
        x1 (Tensor): ``[N, in1_features]``.
        x2 (Tensor): ``[N, in2_features]``.
        weight (Tensor): ``[out_features, in1_features, in2_features]``.
        bias (Tensor, optional): ``[1, out_features]``. Default: None.
        name (str, optional): unused, for Paddle compatibility. Default: None.

    Returns:
        Tensor: ``[N, out_features]``.

    Examples:
        >>> import fw
        >>> x1, x2 = fw.ones([2, 3]), fw.ones([2, 4])
        >>> fw.nn.functional.bilinear(x1, x2, fw.ones([5, 3, 4])).tolist()[0]
        [12.0, 12.0, 12.0, 12.0, 12.0]
    """
    return op("bilinear", [x1, x2, weight, bias])


# ---------------------------------------------------------------- dropout
def dropout(x, p=0.5, axis=None, training=True, mode="upscale_in_train", name=None):
    """Randomly zero elements of ``x`` with probability ``p``.

    With ``mode="upscale_in_train"`` (the default) kept elements are scaled by
    ``1 / (1 - p)`` while training and ``x`` is returned unchanged otherwise; with
    ``"downscale_in_infer"`` training leaves kept elements unscaled and evaluation
    multiplies by ``1 - p``. With ``axis``, one draw is shared along the axes not listed
    (e.g. ``axis=[0, 1]`` drops whole feature maps of an NCHW input). The gradient uses
    the same mask.

    Args:
        x (Tensor): the input.
        p (float|Tensor, optional): the drop probability, in [0, 1]. Default: 0.5.
        axis (int|list, optional): the axes that get their own draws; every element when
            None. Default: None.
        training (bool, optional): apply dropout (True) or the evaluation rule. Default: True.
        mode (str, optional): ``"upscale_in_train"`` or ``"downscale_in_infer"``.
            Default: "upscale_in_train".
        name (str, optional): unused, for Paddle compatibility. Default: None.

    Returns:
        Tensor: ``x``'s shape and dtype.

    Examples:
        >>> import fw
        >>> x = fw.ones([2, 500])
        >>> y = fw.nn.functional.dropout(x, p=0.5)
        >>> sorted(set(y.flatten().tolist()))
        [0.0, 2.0]
        >>> fw.nn.functional.dropout(x, p=0.5, training=False).tolist() == x.tolist()
        True
        >>> mode = 'downscale_in_infer'
        >>> fw.nn.functional.dropout(x, p=0.5, training=False, mode=mode).tolist()[0][:4]
        [0.5, 0.5, 0.5, 0.5]
        >>> rows = fw.nn.functional.dropout(fw.ones([4, 3]), 0.5, axis=0)
        >>> all(len(set(r)) == 1 for r in rows.tolist())
        True
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
    """Zero whole channels of a ``[N, C, L]`` (or ``[C, L]``) input with probability ``p``
    (scaled by ``1 / (1 - p)``) while training; identity otherwise.

    Args:
        input (Tensor): ``[N, C, L]`` or ``[C, L]``.
        p (float, optional): the drop probability. Default: 0.5.
        training (bool, optional): apply dropout. Default: True.
        inplace (bool, optional): write the result into ``input``. Default: False.
        name (str, optional): unused, for Paddle compatibility. Default: None.

    Returns:
        Tensor: the input's shape.

    Examples:
        >>> import fw
        >>> y = fw.nn.functional.dropout1d(fw.ones([2, 6, 3]), p=0.5)
        >>> all(len(set(ch)) == 1 for n in y.tolist() for ch in n)
        True
    """
    out = _feature_dropout(input, p, training, "NCL", (2, 3), "dropout1d")
    if inplace and out is not input:
        from fw.nn.functional._helpers import inplace as _ip

        return _ip("dropout1d", input, out)
    return out


def dropout2d(x, p=0.5, training=True, data_format="NCHW", name=None):
    """Zero whole channels of a 4-D input with probability ``p``
    (scaled by ``1 / (1 - p)``) while training; identity otherwise.

    Args:
        x (Tensor): ``[N, C, H, W]`` (or NHWC).
        p (float, optional): the drop probability. Default: 0.5.
        training (bool, optional): apply dropout. Default: True.
        data_format (str, optional): ``"NCHW"`` or ``"NHWC"``. Default: "NCHW".
        name (str, optional): unused, for Paddle compatibility. Default: None.

    Returns:
        Tensor: ``x``'s shape.

    Examples:
        >>> import fw
        >>> y = fw.nn.functional.dropout2d(fw.ones([2, 8, 3, 3]), p=0.5)
        >>> sorted(set(y.sum(axis=[2, 3]).flatten().tolist()))
        [0.0, 18.0]
    """
    channel_last(data_format, ("NCHW", "NHWC"), "dropout2d")
    return _feature_dropout(x, p, training, data_format, (4,), "dropout2d")


def dropout3d(x, p=0.5, training=True, data_format="NCDHW", name=None):
    """Zero whole channels of a 5-D input with probability ``p``
    (scaled by ``1 / (1 - p)``) while training; identity otherwise.

    Args:
        x (Tensor): ``[N, C, D, H, W]`` (or NDHWC).
        p (float, optional): the drop probability. Default: 0.5.
        training (bool, optional): apply dropout. Default: True.
        data_format (str, optional): ``"NCDHW"`` or ``"NDHWC"``. Default: "NCDHW".
        name (str, optional): unused, for Paddle compatibility. Default: None.

    Returns:
        Tensor: ``x``'s shape.

    Examples:
        >>> import fw
        >>> fw.nn.functional.dropout3d(fw.ones([2, 4, 2, 2, 2]), p=0.5).shape
        [2, 4, 2, 2, 2]
    """
    channel_last(data_format, ("NCDHW", "NDHWC"), "dropout3d")
    return _feature_dropout(x, p, training, data_format, (5,), "dropout3d")


def alpha_dropout(x, p=0.5, training=True, name=None):
    """Alpha dropout: keeps the zero mean and unit variance of SELU activations.
    Dropped elements become SELU's negative saturation ``-scale * alpha`` and an affine
    correction restores the moments. Identity when not training.

    Args:
        x (Tensor): the input.
        p (float, optional): the drop probability. Default: 0.5.
        training (bool, optional): apply dropout. Default: True.
        name (str, optional): unused, for Paddle compatibility. Default: None.

    Returns:
        Tensor: ``x``'s shape.

    Examples:
        >>> import fw
        >>> x = fw.randn([10000])
        >>> y = fw.nn.functional.alpha_dropout(x, p=0.2)
        >>> abs(float(y.mean())) < 0.1, abs(float(y.std()) - 1.0) < 0.1
        (True, True)
    """
    if not training:
        return x
    return op("alpha_dropout", [x], p=p, training=True)[0]


def feature_alpha_dropout(x, p=0.5, training=True, name=None):
    """`alpha_dropout` with one draw per (sample, channel): whole channels are dropped.

    Args:
        x (Tensor): ``[N, C, *]``.
        p (float, optional): the drop probability. Default: 0.5.
        training (bool, optional): apply dropout. Default: True.
        name (str, optional): unused, for Paddle compatibility. Default: None.

    Returns:
        Tensor: ``x``'s shape.

    Examples:
        >>> import fw
        >>> fw.nn.functional.feature_alpha_dropout(fw.ones([2, 3, 4]), p=0.2).shape
        [2, 3, 4]
    """
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
    """Resize the spatial axes of ``x`` to ``size`` or by ``scale_factor``.

    Args:
        x (Tensor): a 3-D ``[N, C, W]``, 4-D ``[N, C, H, W]`` or 5-D ``[N, C, D, H, W]``
            input (channel-last with ``data_format``).
        size (int|list|Tensor, optional): the output spatial size. Default: None.
        scale_factor (float|list|Tensor, optional): the multiplier of each spatial size;
            exactly one of ``size`` and ``scale_factor`` is given. Default: None.
        mode (str, optional): ``"nearest"``, ``"linear"`` (3-D), ``"bilinear"`` or
            ``"bicubic"`` (4-D), ``"trilinear"`` (5-D) or ``"area"`` (adaptive average).
            Default: "nearest".
        align_corners (bool, optional): map the corner pixels of input and output onto each
            other (linear and cubic modes). Default: False.
        align_mode (int, optional): without ``align_corners``: 0 samples at half-pixel
            centres ``(dst + 0.5) * scale - 0.5``, 1 at ``dst * scale``. Default: 0.
        data_format (str, optional): ``"NCW"``/``"NWC"``, ``"NCHW"``/``"NHWC"`` or
            ``"NCDHW"``/``"NDHWC"``; channel-first for the input's rank when None.
            Default: None.
        recompute_scale_factor (bool, optional): compute the output size from
            ``scale_factor`` and resample as if that size had been given. Default: None.
        name (str, optional): unused, for Paddle compatibility. Default: None.

    Returns:
        Tensor: ``[N, C, *new_spatial]`` (or channel-last).

    Examples:
        >>> import fw
        >>> x = fw.to_tensor([[[[1.0, 2.0], [3.0, 4.0]]]])
        >>> fw.nn.functional.interpolate(x, scale_factor=2).shape
        [1, 1, 4, 4]
        >>> y = fw.nn.functional.interpolate(x, size=[3, 3], mode='bilinear', align_corners=True)
        >>> y[0, 0].tolist()
        [[1.0, 1.5, 2.0], [2.0, 2.5, 3.0], [3.0, 3.5, 4.0]]
        >>> fw.nn.functional.interpolate(x, size=[1, 1], mode='area').item()
        2.5
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
    """Resize the spatial axes of ``x``; the same as `interpolate`.

    Args:
        x (Tensor): a 3-D ``[N, C, W]``, 4-D ``[N, C, H, W]`` or 5-D ``[N, C, D, H, W]``
            input (channel-last with ``data_format``).
        size (int|list|Tensor, optional): the output spatial size. Default: None.
        scale_factor (float|list|Tensor, optional): the multiplier of each spatial size;
            exactly one of ``size`` and ``scale_factor`` is given. Default: None.
        mode (str, optional): ``"nearest"``, ``"linear"`` (3-D), ``"bilinear"`` or
            ``"bicubic"`` (4-D), ``"trilinear"`` (5-D) or ``"area"`` (adaptive average).
            Default: "nearest".
        align_corners (bool, optional): map the corner pixels of input and output onto each
            other (linear and cubic modes). Default: False.
        align_mode (int, optional): without ``align_corners``: 0 samples at half-pixel
            centres ``(dst + 0.5) * scale - 0.5``, 1 at ``dst * scale``. Default: 0.
        data_format (str, optional): ``"NCW"``/``"NWC"``, ``"NCHW"``/``"NHWC"`` or
            ``"NCDHW"``/``"NDHWC"``; channel-first for the input's rank when None.
            Default: None.
        name (str, optional): unused, for Paddle compatibility. Default: None.

    Returns:
        Tensor: the resized input.

    Examples:
        >>> import fw
        >>> fw.nn.functional.upsample(fw.ones([1, 3, 4]), scale_factor=2, mode='linear').shape
        [1, 3, 8]
    """
    return interpolate(x, size, scale_factor, mode, align_corners, align_mode, data_format)


# ---------------------------------------------------------------- padding
_PAD_FORMATS = ("NCL", "NLC", "NCHW", "NHWC", "NCDHW", "NDHWC", "NC", "NCW", "NWC")


def pad(x, pad, mode="constant", value=0.0, data_format="NCHW", pad_from_left_axis=True,
        name=None):
    """Pad a tensor (Paddle's ``F.pad``).

    ``pad`` lists (before, after) pairs. With ``2 * x.ndim`` numbers in constant mode
    (and ``pad_from_left_axis``) they are ``[before_0, after_0, before_1, ...]`` from the
    first axis on. Otherwise they are pairs for the spatial axes starting from the last
    one, as the PadND layers take them: ``[left, right]``, ``[left, right, top,
    bottom]``, ``[left, right, top, bottom, front, back]``; in constant mode any other
    number of pairs pads the axes of ``x`` from its last one backwards (Paddle 3.x).

    Args:
        x (Tensor): the input.
        pad (list|tuple|Tensor): the padding amounts, as described above.
        mode (str, optional): ``"constant"``, ``"reflect"`` (mirror without the edge),
            ``"replicate"`` (repeat the edge) or ``"circular"`` (wrap around).
            Default: "constant".
        value (float, optional): the fill value of constant mode. Default: 0.0.
        data_format (str, optional): where the channel axis is (``"NCL"``, ``"NCHW"``,
            ``"NHWC"``, ...), to locate the spatial axes. Default: "NCHW".
        pad_from_left_axis (bool, optional): read a full-rank ``pad`` from the first axis.
            Default: True.
        name (str, optional): unused, for Paddle compatibility. Default: None.

    Returns:
        Tensor: the padded tensor, ``x``'s dtype.

    Examples:
        >>> import fw
        >>> x = fw.to_tensor([[[1.0, 2.0, 3.0]]])
        >>> fw.nn.functional.pad(x, [1, 2], value=9.0).tolist()
        [[[9.0, 1.0, 2.0, 3.0, 9.0, 9.0]]]
        >>> fw.nn.functional.pad(x, [2, 0], mode='reflect', data_format='NCL').tolist()
        [[[3.0, 2.0, 1.0, 2.0, 3.0]]]
        >>> fw.nn.functional.pad(fw.ones([2, 3]), [1, 0, 0, 1]).tolist()
        [[0.0, 0.0, 0.0, 0.0], [1.0, 1.0, 1.0, 0.0], [1.0, 1.0, 1.0, 0.0]]
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
    """Zero-pad the H and W axes of a 4-D input.

    Args:
        x (Tensor): ``[N, C, H, W]`` (or NHWC).
        padding (int|list): ``[left, right, top, bottom]``, or one int for all.
        data_format (str, optional): ``"NCHW"`` or ``"NHWC"``. Default: "NCHW".
        name (str, optional): unused, for Paddle compatibility. Default: None.

    Returns:
        Tensor: ``[N, C, H + top + bottom, W + left + right]``.

    Examples:
        >>> import fw
        >>> fw.nn.functional.zeropad2d(fw.ones([1, 1, 1, 1]), [1, 0, 0, 1]).tolist()
        [[[[0.0, 1.0], [0.0, 0.0]]]]
    """
    if isinstance(padding, int):
        padding = [padding] * 4
    return pad(x, padding, mode="constant", value=0.0, data_format=data_format)


# ---------------------------------------------------------------- im2col
def unfold(x, kernel_sizes, strides=1, paddings=0, dilations=1, name=None):
    """Extract sliding local blocks of a 4-D input as columns (im2col).

    Args:
        x (Tensor): ``[N, C, H, W]``.
        kernel_sizes (int|list): the block size ``[kh, kw]``.
        strides (int|list, optional): the stride. Default: 1.
        paddings (int|list, optional): zero padding: 1, 2 (``[ph, pw]``) or 4
            (``[top, left, bottom, right]``) numbers. Default: 0.
        dilations (int|list, optional): the dilation. Default: 1.
        name (str, optional): unused, for Paddle compatibility. Default: None.

    Returns:
        Tensor: ``[N, C * kh * kw, L]``, L the number of blocks.

    Examples:
        >>> import fw
        >>> x = fw.arange(16, dtype='float32').reshape([1, 1, 4, 4])
        >>> cols = fw.nn.functional.unfold(x, kernel_sizes=2, strides=2)
        >>> cols.shape
        [1, 4, 4]
        >>> cols[0, :, 0].tolist()
        [0.0, 1.0, 4.0, 5.0]
    """
    return op("unfold", [x], kernel_sizes=kernel_sizes, strides=strides, paddings=paddings,
              dilations=dilations)


def fold(x, output_sizes, kernel_sizes, strides=1, paddings=0, dilations=1, name=None):
    """Combine columns of sliding blocks into a 4-D tensor (col2im), summing where
    blocks overlap: the inverse layout of `unfold`.

    Args:
        x (Tensor): ``[N, C * kh * kw, L]``.
        output_sizes (int|list): the output ``[H, W]``.
        kernel_sizes (int|list): the block size ``[kh, kw]``.
        strides (int|list, optional): the stride. Default: 1.
        paddings (int|list, optional): the padding. Default: 0.
        dilations (int|list, optional): the dilation. Default: 1.
        name (str, optional): unused, for Paddle compatibility. Default: None.

    Returns:
        Tensor: ``[N, C, H, W]``.

    Examples:
        >>> import fw
        >>> cols = fw.nn.functional.unfold(fw.ones([1, 1, 3, 3]), 2)
        >>> fw.nn.functional.fold(cols, [3, 3], 2)[0, 0].tolist()
        [[1.0, 2.0, 1.0], [2.0, 4.0, 2.0], [1.0, 2.0, 1.0]]
    """
    return op("fold", [x], output_sizes=output_sizes, kernel_sizes=kernel_sizes,
              strides=strides, paddings=paddings, dilations=dilations)


# ---------------------------------------------------------------- similarity, smoothing
def cosine_similarity(x1, x2, axis=1, eps=1e-8):
    """Cosine similarity along ``axis``: ``sum(x1 * x2) / max(||x1|| * ||x2||, eps)``;
    ``x1`` and ``x2`` broadcast.

    Args:
        x1 (Tensor): the first input.
        x2 (Tensor): the second input, broadcastable to ``x1``.
        axis (int, optional): the axis reduced. Default: 1.
        eps (float, optional): the lower bound of the norm product. Default: 1e-8.

    Returns:
        Tensor: the broadcast shape without ``axis``.

    Examples:
        >>> import fw
        >>> x1 = fw.to_tensor([[1.0, 0.0], [3.0, 4.0]])
        >>> x2 = fw.to_tensor([[0.0, 1.0], [6.0, 8.0]])
        >>> [round(v, 4) for v in fw.nn.functional.cosine_similarity(x1, x2).tolist()]
        [0.0, 1.0]
    """
    return op("cosine_similarity", [x1, x2], axis=axis, eps=eps)


def label_smooth(label, prior_dist=None, epsilon=0.1, name=None):
    """Label smoothing: ``(1 - epsilon) * label + epsilon * prior``, with a uniform
    prior ``1 / num_classes`` unless ``prior_dist`` is given.

    Args:
        label (Tensor): one-hot (or soft) labels ``[*, C]``.
        prior_dist (Tensor, optional): the prior ``[1, C]``. Default: None.
        epsilon (float, optional): the smoothing weight in [0, 1]. Default: 0.1.
        name (str, optional): unused, for Paddle compatibility. Default: None.

    Returns:
        Tensor: the smoothed labels, ``label``'s shape.

    Examples:
        >>> import fw
        >>> label = fw.to_tensor([[0.0, 1.0, 0.0, 0.0]])
        >>> [round(v, 4) for v in fw.nn.functional.label_smooth(label)[0].tolist()]
        [0.025, 0.925, 0.025, 0.025]
    """
    return op("label_smooth", [label, prior_dist], epsilon=epsilon)

