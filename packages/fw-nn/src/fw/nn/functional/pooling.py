"""Pooling functions of ``paddle.nn.functional`` on fw-core's N-d pool ops (see
`fw.core.ops.pool` for window geometry, ``ceil_mode``, ``exclusive`` and masks)."""

from __future__ import annotations

from fw.core.errors import InvalidArgumentError
from fw.nn.functional._helpers import channel_last, op

__all__ = ["avg_pool1d", "avg_pool2d", "avg_pool3d", "max_pool1d", "max_pool2d", "max_pool3d",
           "lp_pool1d", "lp_pool2d", "adaptive_avg_pool1d", "adaptive_avg_pool2d",
           "adaptive_avg_pool3d", "adaptive_max_pool1d", "adaptive_max_pool2d",
           "adaptive_max_pool3d", "max_unpool1d", "max_unpool2d", "max_unpool3d"]

_FORMATS = {1: ("NCL", "NLC"), 2: ("NCHW", "NHWC"), 3: ("NCDHW", "NDHWC")}


def _layout(x, nd, data_format, fn):
    if len(x.shape) != nd + 2:
        raise InvalidArgumentError(f"{fn}: x must be {nd + 2}-D ([N, C, {nd} spatial dims]), got "
                                   f"shape {list(x.shape)}")
    return channel_last(data_format, _FORMATS[nd], fn)


def _max(x, nd, kernel_size, stride, padding, return_mask, ceil_mode, data_format, fn):
    cl = _layout(x, nd, data_format, fn)
    attrs = dict(kernel_size=kernel_size, stride=stride, padding=padding, ceil_mode=ceil_mode,
                 channel_last=cl)
    if return_mask:
        return op("max_pool_with_index", [x], **attrs)
    return op("max_pool", [x], **attrs)


def _avg(x, nd, kernel_size, stride, padding, ceil_mode, exclusive, divisor_override,
         data_format, fn):
    cl = _layout(x, nd, data_format, fn)
    return op("avg_pool", [x], kernel_size=kernel_size, stride=stride, padding=padding,
              ceil_mode=ceil_mode, exclusive=exclusive, divisor_override=divisor_override,
              channel_last=cl)


def max_pool1d(x, kernel_size, stride=None, padding=0, return_mask=False, ceil_mode=False,
               name=None):
    """1-D max pooling: the maximum of each sliding window of a ``[N, C, L]`` input.

    Args:
        x (Tensor): the input ``[N, C, L]``.
        kernel_size (int|list|tuple): the window size, one or per spatial axis.
        stride (int|list|tuple, optional): the window stride; ``kernel_size`` when None.
            Default: None.
        padding (int|list|tuple|str, optional): implicit padding: an int, one per axis,
            (begin, end) pairs, or ``"SAME"``/``"VALID"``. Default: 0.
        return_mask (bool, optional): also return the index of each maximum, flattened
            over the spatial axes of its input plane (for `max_unpool1d`). Default: False.
        ceil_mode (bool, optional): round the output size up instead of down. Default: False.
        name (str, optional): unused, for Paddle compatibility. Default: None.

    Returns:
        Tensor, or (Tensor, Tensor) with ``return_mask``: the pooled ``[N, C, ...]`` with
        ``out = (in + pad_begin + pad_end - kernel) // stride + 1`` per axis (rounded up
        with ``ceil_mode``), and the int64 mask of the same shape.

    Examples:
        >>> import fw
        >>> x = fw.ones([1, 2, 8])
        >>> fw.nn.functional.max_pool1d(x, kernel_size=2).shape
        [1, 2, 4]
    """
    return _max(x, 1, kernel_size, stride, padding, return_mask, ceil_mode, "NCL", "max_pool1d")


def max_pool2d(x, kernel_size, stride=None, padding=0, return_mask=False, ceil_mode=False,
               data_format="NCHW", name=None):
    """2-D max pooling: the maximum of each sliding window of a ``[N, C, H, W]`` input.

    Args:
        x (Tensor): the input ``[N, C, H, W]``.
        kernel_size (int|list|tuple): the window size, one or per spatial axis.
        stride (int|list|tuple, optional): the window stride; ``kernel_size`` when None.
            Default: None.
        padding (int|list|tuple|str, optional): implicit padding: an int, one per axis,
            (begin, end) pairs, or ``"SAME"``/``"VALID"``. Default: 0.
        return_mask (bool, optional): also return the index of each maximum, flattened
            over the spatial axes of its input plane (for `max_unpool2d`). Default: False.
        ceil_mode (bool, optional): round the output size up instead of down. Default: False.
        data_format (str, optional): ``"NCHW"`` or ``"NHWC"``. Default: "NCHW".
        name (str, optional): unused, for Paddle compatibility. Default: None.

    Returns:
        Tensor, or (Tensor, Tensor) with ``return_mask``: the pooled ``[N, C, ...]`` with
        ``out = (in + pad_begin + pad_end - kernel) // stride + 1`` per axis (rounded up
        with ``ceil_mode``), and the int64 mask of the same shape.

    Examples:
        >>> import fw
        >>> x = fw.ones([1, 2, 8, 8])
        >>> fw.nn.functional.max_pool2d(x, kernel_size=2).shape
        [1, 2, 4, 4]
        >>> x = fw.to_tensor([[[[1.0, 2.0, 5.0, 0.0], [4.0, 3.0, 1.0, 1.0]]]])
        >>> out, mask = fw.nn.functional.max_pool2d(x, 2, return_mask=True)
        >>> out.tolist(), mask.tolist()
        ([[[[4.0, 5.0]]]], [[[[4, 2]]]])
    """
    return _max(x, 2, kernel_size, stride, padding, return_mask, ceil_mode, data_format,
                "max_pool2d")


def max_pool3d(x, kernel_size, stride=None, padding=0, return_mask=False, ceil_mode=False,
               data_format="NCDHW", name=None):
    """3-D max pooling: the maximum of each sliding window of a ``[N, C, D, H, W]`` input.

    Args:
        x (Tensor): the input ``[N, C, D, H, W]``.
        kernel_size (int|list|tuple): the window size, one or per spatial axis.
        stride (int|list|tuple, optional): the window stride; ``kernel_size`` when None.
            Default: None.
        padding (int|list|tuple|str, optional): implicit padding: an int, one per axis,
            (begin, end) pairs, or ``"SAME"``/``"VALID"``. Default: 0.
        return_mask (bool, optional): also return the index of each maximum, flattened
            over the spatial axes of its input plane (for `max_unpool3d`). Default: False.
        ceil_mode (bool, optional): round the output size up instead of down. Default: False.
        data_format (str, optional): ``"NCDHW"`` or ``"NDHWC"``. Default: "NCDHW".
        name (str, optional): unused, for Paddle compatibility. Default: None.

    Returns:
        Tensor, or (Tensor, Tensor) with ``return_mask``: the pooled ``[N, C, ...]`` with
        ``out = (in + pad_begin + pad_end - kernel) // stride + 1`` per axis (rounded up
        with ``ceil_mode``), and the int64 mask of the same shape.

    Examples:
        >>> import fw
        >>> x = fw.ones([1, 2, 4, 4, 4])
        >>> fw.nn.functional.max_pool3d(x, kernel_size=2).shape
        [1, 2, 2, 2, 2]
    """
    return _max(x, 3, kernel_size, stride, padding, return_mask, ceil_mode, data_format,
                "max_pool3d")


def avg_pool1d(x, kernel_size, stride=None, padding=0, exclusive=True, ceil_mode=False,
               name=None):
    """1-D average pooling: the mean of each sliding window of a ``[N, C, L]`` input.

    Args:
        x (Tensor): the input ``[N, C, L]``.
        kernel_size (int|list|tuple): the window size, one or per spatial axis.
        stride (int|list|tuple, optional): the window stride; ``kernel_size`` when None.
            Default: None.
        padding (int|list|tuple|str, optional): implicit padding: an int, one per axis,
            (begin, end) pairs, or ``"SAME"``/``"VALID"``. Default: 0.
        exclusive (bool, optional): leave padded positions out of the divisor. Default: True.
        ceil_mode (bool, optional): round the output size up instead of down. Default: False.
        name (str, optional): unused, for Paddle compatibility. Default: None.

    Returns:
        Tensor: the pooled ``[N, C, ...]`` with
        ``out = (in + pad_begin + pad_end - kernel) // stride + 1`` per axis (rounded up
        with ``ceil_mode``).

    Examples:
        >>> import fw
        >>> x = fw.ones([1, 2, 8])
        >>> fw.nn.functional.avg_pool1d(x, kernel_size=2).shape
        [1, 2, 4]
        >>> x = fw.to_tensor([[[1.0, 2.0, 3.0, 4.0]]])
        >>> fw.nn.functional.avg_pool1d(x, 2, stride=1, padding=1).tolist()
        [[[1.0, 1.5, 2.5, 3.5, 4.0]]]
        >>> fw.nn.functional.avg_pool1d(x, 2, stride=1, padding=1, exclusive=False).tolist()
        [[[0.5, 1.5, 2.5, 3.5, 2.0]]]
    """
    return _avg(x, 1, kernel_size, stride, padding, ceil_mode, exclusive, None, "NCL",
                "avg_pool1d")


def avg_pool2d(x, kernel_size, stride=None, padding=0, ceil_mode=False, exclusive=True,
               divisor_override=None, data_format="NCHW", name=None):
    """2-D average pooling: the mean of each sliding window of a ``[N, C, H, W]`` input.

    Args:
        x (Tensor): the input ``[N, C, H, W]``.
        kernel_size (int|list|tuple): the window size, one or per spatial axis.
        stride (int|list|tuple, optional): the window stride; ``kernel_size`` when None.
            Default: None.
        padding (int|list|tuple|str, optional): implicit padding: an int, one per axis,
            (begin, end) pairs, or ``"SAME"``/``"VALID"``. Default: 0.
        ceil_mode (bool, optional): round the output size up instead of down. Default: False.
        exclusive (bool, optional): leave padded positions out of the divisor. Default: True.
        divisor_override (int, optional): divide every window sum by this number.
            Default: None.
        data_format (str, optional): ``"NCHW"`` or ``"NHWC"``. Default: "NCHW".
        name (str, optional): unused, for Paddle compatibility. Default: None.

    Returns:
        Tensor: the pooled ``[N, C, ...]`` with
        ``out = (in + pad_begin + pad_end - kernel) // stride + 1`` per axis (rounded up
        with ``ceil_mode``).

    Examples:
        >>> import fw
        >>> x = fw.ones([1, 2, 8, 8])
        >>> fw.nn.functional.avg_pool2d(x, kernel_size=2).shape
        [1, 2, 4, 4]
    """
    return _avg(x, 2, kernel_size, stride, padding, ceil_mode, exclusive, divisor_override,
                data_format, "avg_pool2d")


def avg_pool3d(x, kernel_size, stride=None, padding=0, ceil_mode=False, exclusive=True,
               divisor_override=None, data_format="NCDHW", name=None):
    """3-D average pooling: the mean of each sliding window of a ``[N, C, D, H, W]`` input.

    Args:
        x (Tensor): the input ``[N, C, D, H, W]``.
        kernel_size (int|list|tuple): the window size, one or per spatial axis.
        stride (int|list|tuple, optional): the window stride; ``kernel_size`` when None.
            Default: None.
        padding (int|list|tuple|str, optional): implicit padding: an int, one per axis,
            (begin, end) pairs, or ``"SAME"``/``"VALID"``. Default: 0.
        ceil_mode (bool, optional): round the output size up instead of down. Default: False.
        exclusive (bool, optional): leave padded positions out of the divisor. Default: True.
        divisor_override (int, optional): divide every window sum by this number.
            Default: None.
        data_format (str, optional): ``"NCDHW"`` or ``"NDHWC"``. Default: "NCDHW".
        name (str, optional): unused, for Paddle compatibility. Default: None.

    Returns:
        Tensor: the pooled ``[N, C, ...]`` with
        ``out = (in + pad_begin + pad_end - kernel) // stride + 1`` per axis (rounded up
        with ``ceil_mode``).

    Examples:
        >>> import fw
        >>> x = fw.ones([1, 2, 4, 4, 4])
        >>> fw.nn.functional.avg_pool3d(x, kernel_size=2).shape
        [1, 2, 2, 2, 2]
    """
    return _avg(x, 3, kernel_size, stride, padding, ceil_mode, exclusive, divisor_override,
                data_format, "avg_pool3d")


def _lp(x, nd, norm_type, kernel_size, stride, padding, ceil_mode, data_format, fn):
    cl = _layout(x, nd, data_format, fn)
    if norm_type == float("inf"):
        return op("max_pool", [x], kernel_size=kernel_size, stride=stride, padding=padding,
                  ceil_mode=ceil_mode, channel_last=cl)
    return op("lp_pool", [x], norm_type=norm_type, kernel_size=kernel_size, stride=stride,
              padding=padding, ceil_mode=ceil_mode, channel_last=cl)


def lp_pool1d(x, norm_type, kernel_size, stride=None, padding=0, ceil_mode=False,
              data_format="NCL", name=None):
    """1-D power-average pooling: ``(sum(x ** p)) ** (1 / p)`` over each window of a
    ``[N, C, L]`` input (``p = inf`` gives max pooling).

    Args:
        x (Tensor): the input ``[N, C, L]``.
        norm_type (float): the power p.
        kernel_size (int|list|tuple): the window size, one or per spatial axis.
        stride (int|list|tuple, optional): the window stride; ``kernel_size`` when None.
            Default: None.
        padding (int|list|tuple|str, optional): implicit padding: an int, one per axis,
            (begin, end) pairs, or ``"SAME"``/``"VALID"``. Default: 0.
        ceil_mode (bool, optional): round the output size up instead of down. Default: False.
        data_format (str, optional): ``"NCL"`` or ``"NLC"``. Default: "NCL".
        name (str, optional): unused, for Paddle compatibility. Default: None.

    Returns:
        Tensor: the pooled ``[N, C, ...]``.

    Examples:
        >>> import fw
        >>> x = fw.to_tensor([[[3.0, 4.0, 1.0, 0.0]]])
        >>> fw.nn.functional.lp_pool1d(x, 2, kernel_size=2).tolist()
        [[[5.0, 1.0]]]
    """
    return _lp(x, 1, norm_type, kernel_size, stride, padding, ceil_mode, data_format,
               "lp_pool1d")


def lp_pool2d(x, norm_type, kernel_size, stride=None, padding=0, ceil_mode=False,
              data_format="NCHW", name=None):
    """2-D power-average pooling: ``(sum(x ** p)) ** (1 / p)`` over each window of a
    ``[N, C, H, W]`` input (``p = inf`` gives max pooling).

    Args:
        x (Tensor): the input ``[N, C, H, W]``.
        norm_type (float): the power p.
        kernel_size (int|list|tuple): the window size, one or per spatial axis.
        stride (int|list|tuple, optional): the window stride; ``kernel_size`` when None.
            Default: None.
        padding (int|list|tuple|str, optional): implicit padding: an int, one per axis,
            (begin, end) pairs, or ``"SAME"``/``"VALID"``. Default: 0.
        ceil_mode (bool, optional): round the output size up instead of down. Default: False.
        data_format (str, optional): ``"NCHW"`` or ``"NHWC"``. Default: "NCHW".
        name (str, optional): unused, for Paddle compatibility. Default: None.

    Returns:
        Tensor: the pooled ``[N, C, ...]``.

    Examples:
        >>> import fw
        >>> x = fw.to_tensor([[[[3.0, 0.0], [0.0, 4.0]]]])
        >>> fw.nn.functional.lp_pool2d(x, 2, kernel_size=2).tolist()
        [[[[5.0]]]]
    """
    return _lp(x, 2, norm_type, kernel_size, stride, padding, ceil_mode, data_format,
               "lp_pool2d")


def _adaptive(x, nd, output_size, data_format, maxpool, return_mask, fn):
    cl = _layout(x, nd, data_format, fn)
    if hasattr(output_size, "tolist") and not isinstance(output_size, (list, tuple)):
        output_size = output_size.tolist()
    if maxpool:
        out, mask = op("adaptive_max_pool", [x], output_size=output_size, channel_last=cl)
        return (out, mask) if return_mask else out
    return op("adaptive_avg_pool", [x], output_size=output_size, channel_last=cl)


def adaptive_avg_pool1d(x, output_size, name=None):
    """1-D adaptive average pooling: the mean of windows chosen so the output has
    exactly ``output_size`` positions per spatial axis (window ``i`` spans
    ``[floor(i * in / out), ceil((i + 1) * in / out))``).

    Args:
        x (Tensor): the input ``[N, C, L]``.
        output_size (int|list|tuple): the output size, one or per axis; None entries
            keep the input's size.
        name (str, optional): unused, for Paddle compatibility. Default: None.

    Returns:
        Tensor: ``[N, C, *output_size]``.

    Examples:
        >>> import fw
        >>> x = fw.arange(6, dtype='float32').reshape([1, 1, 6])
        >>> y = fw.nn.functional.adaptive_avg_pool1d(x, output_size=3)
        >>> y.shape
        [1, 1, 3]
        >>> y.flatten().tolist()
        [0.5, 2.5, 4.5]
    """
    return _adaptive(x, 1, output_size, "NCL", False, False, "adaptive_avg_pool1d")


def adaptive_avg_pool2d(x, output_size, data_format="NCHW", name=None):
    """2-D adaptive average pooling: the mean of windows chosen so the output has
    exactly ``output_size`` positions per spatial axis (window ``i`` spans
    ``[floor(i * in / out), ceil((i + 1) * in / out))``).

    Args:
        x (Tensor): the input ``[N, C, H, W]``.
        output_size (int|list|tuple): the output size, one or per axis; None entries
            keep the input's size.
        data_format (str, optional): ``"NCHW"`` or ``"NHWC"``. Default: "NCHW".
        name (str, optional): unused, for Paddle compatibility. Default: None.

    Returns:
        Tensor: ``[N, C, *output_size]``.

    Examples:
        >>> import fw
        >>> x = fw.arange(16, dtype='float32').reshape([1, 1, 4, 4])
        >>> y = fw.nn.functional.adaptive_avg_pool2d(x, output_size=2)
        >>> y.shape
        [1, 1, 2, 2]
        >>> y.flatten().tolist()
        [2.5, 4.5, 10.5, 12.5]
    """
    return _adaptive(x, 2, output_size, data_format, False, False, "adaptive_avg_pool2d")


def adaptive_avg_pool3d(x, output_size, data_format="NCDHW", name=None):
    """3-D adaptive average pooling: the mean of windows chosen so the output has
    exactly ``output_size`` positions per spatial axis (window ``i`` spans
    ``[floor(i * in / out), ceil((i + 1) * in / out))``).

    Args:
        x (Tensor): the input ``[N, C, D, H, W]``.
        output_size (int|list|tuple): the output size, one or per axis; None entries
            keep the input's size.
        data_format (str, optional): ``"NCDHW"`` or ``"NDHWC"``. Default: "NCDHW".
        name (str, optional): unused, for Paddle compatibility. Default: None.

    Returns:
        Tensor: ``[N, C, *output_size]``.

    Examples:
        >>> import fw
        >>> x = fw.arange(32, dtype='float32').reshape([1, 1, 2, 4, 4])
        >>> y = fw.nn.functional.adaptive_avg_pool3d(x, output_size=[1, 2, 2])
        >>> y.shape
        [1, 1, 1, 2, 2]
        >>> y.flatten().tolist()
        [10.5, 12.5, 18.5, 20.5]
    """
    return _adaptive(x, 3, output_size, data_format, False, False, "adaptive_avg_pool3d")


def adaptive_max_pool1d(x, output_size, return_mask=False, name=None):
    """1-D adaptive max pooling: the maximum of windows chosen so the output has
    exactly ``output_size`` positions per spatial axis (window ``i`` spans
    ``[floor(i * in / out), ceil((i + 1) * in / out))``).

    Args:
        x (Tensor): the input ``[N, C, L]``.
        output_size (int|list|tuple): the output size, one or per axis; None entries
            keep the input's size.
        return_mask (bool, optional): also return the flat index of each maximum.
            Default: False.
        name (str, optional): unused, for Paddle compatibility. Default: None.

    Returns:
        Tensor, or (Tensor, Tensor) with ``return_mask``: ``[N, C, *output_size]``.

    Examples:
        >>> import fw
        >>> x = fw.arange(6, dtype='float32').reshape([1, 1, 6])
        >>> y = fw.nn.functional.adaptive_max_pool1d(x, output_size=3)
        >>> y.shape
        [1, 1, 3]
        >>> y.flatten().tolist()
        [1.0, 3.0, 5.0]
    """
    return _adaptive(x, 1, output_size, "NCL", True, return_mask, "adaptive_max_pool1d")


def adaptive_max_pool2d(x, output_size, return_mask=False, name=None):
    """2-D adaptive max pooling: the maximum of windows chosen so the output has
    exactly ``output_size`` positions per spatial axis (window ``i`` spans
    ``[floor(i * in / out), ceil((i + 1) * in / out))``).

    Args:
        x (Tensor): the input ``[N, C, H, W]``.
        output_size (int|list|tuple): the output size, one or per axis; None entries
            keep the input's size.
        return_mask (bool, optional): also return the flat index of each maximum.
            Default: False.
        name (str, optional): unused, for Paddle compatibility. Default: None.

    Returns:
        Tensor, or (Tensor, Tensor) with ``return_mask``: ``[N, C, *output_size]``.

    Examples:
        >>> import fw
        >>> x = fw.arange(16, dtype='float32').reshape([1, 1, 4, 4])
        >>> y = fw.nn.functional.adaptive_max_pool2d(x, output_size=2)
        >>> y.shape
        [1, 1, 2, 2]
        >>> y.flatten().tolist()
        [5.0, 7.0, 13.0, 15.0]
    """
    return _adaptive(x, 2, output_size, "NCHW", True, return_mask, "adaptive_max_pool2d")


def adaptive_max_pool3d(x, output_size, return_mask=False, name=None):
    """3-D adaptive max pooling: the maximum of windows chosen so the output has
    exactly ``output_size`` positions per spatial axis (window ``i`` spans
    ``[floor(i * in / out), ceil((i + 1) * in / out))``).

    Args:
        x (Tensor): the input ``[N, C, D, H, W]``.
        output_size (int|list|tuple): the output size, one or per axis; None entries
            keep the input's size.
        return_mask (bool, optional): also return the flat index of each maximum.
            Default: False.
        name (str, optional): unused, for Paddle compatibility. Default: None.

    Returns:
        Tensor, or (Tensor, Tensor) with ``return_mask``: ``[N, C, *output_size]``.

    Examples:
        >>> import fw
        >>> x = fw.arange(32, dtype='float32').reshape([1, 1, 2, 4, 4])
        >>> y = fw.nn.functional.adaptive_max_pool3d(x, output_size=[1, 2, 2])
        >>> y.shape
        [1, 1, 1, 2, 2]
        >>> y.flatten().tolist()
        [21.0, 23.0, 29.0, 31.0]
    """
    return _adaptive(x, 3, output_size, "NCDHW", True, return_mask, "adaptive_max_pool3d")


def _unpool(x, indices, nd, kernel_size, stride, padding, data_format, output_size, fn):
    cl = _layout(x, nd, data_format, fn)
    if output_size is not None:
        if hasattr(output_size, "tolist") and not isinstance(output_size, (list, tuple)):
            output_size = output_size.tolist()
        output_size = [int(v) for v in output_size]
    return op("max_unpool", [x, indices], kernel_size=kernel_size, stride=stride,
              padding=padding, output_size=output_size, channel_last=cl)


def max_unpool1d(x, indices, kernel_size, stride=None, padding=0, data_format="NCL",
                 output_size=None, name=None):
    """1-D max unpooling, the partial inverse of `max_pool1d`: each value of ``x`` is
    written at the position ``indices`` names (from ``return_mask=True``) and every other
    position is zero.

    Args:
        x (Tensor): the pooled values ``[N, C, L]``.
        indices (Tensor): the int mask from `max_pool1d`, ``x``'s shape.
        kernel_size (int|list|tuple): the pooling window size.
        stride (int|list|tuple, optional): the pooling stride; ``kernel_size`` when None.
            Default: None.
        padding (int|list|tuple, optional): the pooling padding. Default: 0.
        data_format (str, optional): ``"NCL"``. Default: "NCL".
        output_size (list|tuple, optional): the spatial output size (to restore an odd input
            size). Default: None.
        name (str, optional): unused, for Paddle compatibility. Default: None.

    Returns:
        Tensor: ``[N, C, ...]`` with ``out = (in - 1) * stride - 2 * padding + kernel`` per
        axis, or ``output_size``.

    Examples:
        >>> import fw
        >>> x = fw.arange(4, dtype='float32').reshape([1, 1, 4])
        >>> out, idx = fw.nn.functional.max_pool1d(x, 2, return_mask=True)
        >>> y = fw.nn.functional.max_unpool1d(out, idx, 2)
        >>> y.shape, float(y.sum()) == float(out.sum())
        ([1, 1, 4], True)
    """
    return _unpool(x, indices, 1, kernel_size, stride, padding, data_format, output_size,
                   "max_unpool1d")


def max_unpool2d(x, indices, kernel_size, stride=None, padding=0, data_format="NCHW",
                 output_size=None, name=None):
    """2-D max unpooling, the partial inverse of `max_pool2d`: each value of ``x`` is
    written at the position ``indices`` names (from ``return_mask=True``) and every other
    position is zero.

    Args:
        x (Tensor): the pooled values ``[N, C, H, W]``.
        indices (Tensor): the int mask from `max_pool2d`, ``x``'s shape.
        kernel_size (int|list|tuple): the pooling window size.
        stride (int|list|tuple, optional): the pooling stride; ``kernel_size`` when None.
            Default: None.
        padding (int|list|tuple, optional): the pooling padding. Default: 0.
        data_format (str, optional): ``"NCHW"``. Default: "NCHW".
        output_size (list|tuple, optional): the spatial output size (to restore an odd input
            size). Default: None.
        name (str, optional): unused, for Paddle compatibility. Default: None.

    Returns:
        Tensor: ``[N, C, ...]`` with ``out = (in - 1) * stride - 2 * padding + kernel`` per
        axis, or ``output_size``.

    Examples:
        >>> import fw
        >>> x = fw.arange(16, dtype='float32').reshape([1, 1, 4, 4])
        >>> out, idx = fw.nn.functional.max_pool2d(x, 2, return_mask=True)
        >>> y = fw.nn.functional.max_unpool2d(out, idx, 2)
        >>> y.shape, float(y.sum()) == float(out.sum())
        ([1, 1, 4, 4], True)
    """
    return _unpool(x, indices, 2, kernel_size, stride, padding, data_format, output_size,
                   "max_unpool2d")


def max_unpool3d(x, indices, kernel_size, stride=None, padding=0, data_format="NCDHW",
                 output_size=None, name=None):
    """3-D max unpooling, the partial inverse of `max_pool3d`: each value of ``x`` is
    written at the position ``indices`` names (from ``return_mask=True``) and every other
    position is zero.

    Args:
        x (Tensor): the pooled values ``[N, C, D, H, W]``.
        indices (Tensor): the int mask from `max_pool3d`, ``x``'s shape.
        kernel_size (int|list|tuple): the pooling window size.
        stride (int|list|tuple, optional): the pooling stride; ``kernel_size`` when None.
            Default: None.
        padding (int|list|tuple, optional): the pooling padding. Default: 0.
        data_format (str, optional): ``"NCDHW"``. Default: "NCDHW".
        output_size (list|tuple, optional): the spatial output size (to restore an odd input
            size). Default: None.
        name (str, optional): unused, for Paddle compatibility. Default: None.

    Returns:
        Tensor: ``[N, C, ...]`` with ``out = (in - 1) * stride - 2 * padding + kernel`` per
        axis, or ``output_size``.

    Examples:
        >>> import fw
        >>> x = fw.arange(8, dtype='float32').reshape([1, 1, 2, 2, 2])
        >>> out, idx = fw.nn.functional.max_pool3d(x, 2, return_mask=True)
        >>> y = fw.nn.functional.max_unpool3d(out, idx, 2)
        >>> y.shape, float(y.sum()) == float(out.sum())
        ([1, 1, 2, 2, 2], True)
    """
    return _unpool(x, indices, 3, kernel_size, stride, padding, data_format, output_size,
                   "max_unpool3d")
