"""Convolutions of ``paddle.nn.functional``: ``conv1d/2d/3d`` and their transposes,
all on fw-core's N-d ``conv``/``conv_transpose`` ops (padding forms, "SAME"/"VALID"
and output sizes are documented in `fw.core.ops.conv`)."""

from __future__ import annotations

from fw.core.errors import InvalidArgumentError
from fw.nn.functional._helpers import channel_last, check_param_dtype, op

__all__ = ["conv1d", "conv2d", "conv3d", "conv1d_transpose", "conv2d_transpose",
           "conv3d_transpose"]

_FORMATS = {1: ("NCL", "NLC"), 2: ("NCHW", "NHWC"), 3: ("NCDHW", "NDHWC")}


def _check_rank(x, nd, fn):
    if len(x.shape) != nd + 2:
        raise InvalidArgumentError(f"{fn}: x must be {nd + 2}-D ([N, C, {nd} spatial dims]), got "
                                   f"shape {list(x.shape)}")


def _conv(x, weight, bias, stride, padding, dilation, groups, data_format, nd, fn):
    _check_rank(x, nd, fn)
    check_param_dtype(fn, x, weight)
    cl = channel_last(data_format, _FORMATS[nd], fn)
    return op("conv", [x, weight, bias], stride=stride, padding=padding, dilation=dilation,
              groups=groups, channel_last=cl)


def _conv_t(x, weight, bias, stride, padding, output_padding, dilation, groups, output_size,
            data_format, nd, fn):
    _check_rank(x, nd, fn)
    check_param_dtype(fn, x, weight)
    cl = channel_last(data_format, _FORMATS[nd], fn)
    if output_size is not None:
        if hasattr(output_size, "tolist"):
            output_size = output_size.tolist()
        if not isinstance(output_size, (list, tuple)):
            output_size = [output_size] * nd
        output_size = [int(v.item() if hasattr(v, "item") else v) for v in output_size]
    return op("conv_transpose", [x, weight, bias], stride=stride, padding=padding,
              output_padding=output_padding, dilation=dilation, groups=groups,
              output_size=output_size, channel_last=cl)


def conv1d(x, weight, bias=None, stride=1, padding=0, dilation=1, groups=1, data_format="NCL",
           name=None):
    """1-D convolution (cross-correlation) of ``x`` with ``weight``, plus ``bias``.

    For each output channel ``o`` in group ``g``:
    ``out[n, o, pos] = bias[o] + sum_c sum_k weight[o, c, k] * x[n, g * C_in / groups + c,
    pos * stride + k * dilation]`` (after padding ``x``).

    Args:
        x (Tensor): the input ``[N, C_in, L]`` (``NLC`` with ``data_format``).
        weight (Tensor): ``[C_out, C_in / groups, K]``.
        bias (Tensor, optional): ``[C_out]``. Default: None.
        stride (int|list|tuple, optional): the stride, one or per spatial axis. Default: 1.
        padding (int|list|tuple|str, optional): zero padding: an int, one per spatial axis,
            a (begin, end) pair per axis (also in the full ``[[0, 0], [0, 0], ...]`` form), or
            ``"SAME"``/``"VALID"``. Default: 0.
        dilation (int|list|tuple, optional): the spacing of kernel elements. Default: 1.
        groups (int, optional): the number of channel groups. Default: 1.
        data_format (str, optional): ``"NCL"`` or ``"NLC"``. Default: "NCL".
        name (str, optional): unused, for Paddle compatibility. Default: None.

    Returns:
        Tensor: ``[N, C_out, L_out]`` with
        ``out = (in + pad_begin + pad_end - dilation * (k - 1) - 1) // stride + 1`` per axis.

    Examples:
        >>> import fw
        >>> x = fw.ones([2, 4, 10])
        >>> w = fw.ones([6, 4, 3])
        >>> fw.nn.functional.conv1d(x, w, padding=1).shape
        [2, 6, 10]
        >>> fw.nn.functional.conv1d(x, w, stride=2).shape
        [2, 6, 4]
        >>> fw.nn.functional.conv1d(x, w, padding='SAME').shape
        [2, 6, 10]
        >>> x = fw.to_tensor([[[1.0, 2.0, 3.0, 4.0]]])
        >>> fw.nn.functional.conv1d(x, fw.to_tensor([[[1.0, 0.0, -1.0]]])).tolist()
        [[[-2.0, -2.0]]]
    """
    return _conv(x, weight, bias, stride, padding, dilation, groups, data_format, 1, "conv1d")


def conv2d(x, weight, bias=None, stride=1, padding=0, dilation=1, groups=1, data_format="NCHW",
           name=None):
    """2-D convolution (cross-correlation) of ``x`` with ``weight``, plus ``bias``.

    For each output channel ``o`` in group ``g``:
    ``out[n, o, pos] = bias[o] + sum_c sum_k weight[o, c, k] * x[n, g * C_in / groups + c,
    pos * stride + k * dilation]`` (after padding ``x``).

    Args:
        x (Tensor): the input ``[N, C_in, H, W]`` (``NHWC`` with ``data_format``).
        weight (Tensor): ``[C_out, C_in / groups, kH, kW]``.
        bias (Tensor, optional): ``[C_out]``. Default: None.
        stride (int|list|tuple, optional): the stride, one or per spatial axis. Default: 1.
        padding (int|list|tuple|str, optional): zero padding: an int, one per spatial axis,
            a (begin, end) pair per axis (also in the full ``[[0, 0], [0, 0], ...]`` form), or
            ``"SAME"``/``"VALID"``. Default: 0.
        dilation (int|list|tuple, optional): the spacing of kernel elements. Default: 1.
        groups (int, optional): the number of channel groups. Default: 1.
        data_format (str, optional): ``"NCHW"`` or ``"NHWC"``. Default: "NCHW".
        name (str, optional): unused, for Paddle compatibility. Default: None.

    Returns:
        Tensor: ``[N, C_out, H_out, W_out]`` with
        ``out = (in + pad_begin + pad_end - dilation * (k - 1) - 1) // stride + 1`` per axis.

    Examples:
        >>> import fw
        >>> x = fw.ones([2, 4, 8, 8])
        >>> w = fw.ones([6, 4, 3, 3])
        >>> fw.nn.functional.conv2d(x, w, padding=1).shape
        [2, 6, 8, 8]
        >>> fw.nn.functional.conv2d(x, w, stride=2).shape
        [2, 6, 3, 3]
        >>> fw.nn.functional.conv2d(x, w, padding='SAME').shape
        [2, 6, 8, 8]
    """
    return _conv(x, weight, bias, stride, padding, dilation, groups, data_format, 2, "conv2d")


def conv3d(x, weight, bias=None, stride=1, padding=0, dilation=1, groups=1,
           data_format="NCDHW", name=None):
    """3-D convolution (cross-correlation) of ``x`` with ``weight``, plus ``bias``.

    For each output channel ``o`` in group ``g``:
    ``out[n, o, pos] = bias[o] + sum_c sum_k weight[o, c, k] * x[n, g * C_in / groups + c,
    pos * stride + k * dilation]`` (after padding ``x``).

    Args:
        x (Tensor): the input ``[N, C_in, D, H, W]`` (``NDHWC`` with ``data_format``).
        weight (Tensor): ``[C_out, C_in / groups, kD, kH, kW]``.
        bias (Tensor, optional): ``[C_out]``. Default: None.
        stride (int|list|tuple, optional): the stride, one or per spatial axis. Default: 1.
        padding (int|list|tuple|str, optional): zero padding: an int, one per spatial axis,
            a (begin, end) pair per axis (also in the full ``[[0, 0], [0, 0], ...]`` form), or
            ``"SAME"``/``"VALID"``. Default: 0.
        dilation (int|list|tuple, optional): the spacing of kernel elements. Default: 1.
        groups (int, optional): the number of channel groups. Default: 1.
        data_format (str, optional): ``"NCDHW"`` or ``"NDHWC"``. Default: "NCDHW".
        name (str, optional): unused, for Paddle compatibility. Default: None.

    Returns:
        Tensor: ``[N, C_out, D_out, H_out, W_out]`` with
        ``out = (in + pad_begin + pad_end - dilation * (k - 1) - 1) // stride + 1`` per axis.

    Examples:
        >>> import fw
        >>> x = fw.ones([1, 4, 4, 6, 6])
        >>> w = fw.ones([6, 4, 3, 3, 3])
        >>> fw.nn.functional.conv3d(x, w, padding=1).shape
        [1, 6, 4, 6, 6]
        >>> fw.nn.functional.conv3d(x, w, stride=2).shape
        [1, 6, 1, 2, 2]
        >>> fw.nn.functional.conv3d(x, w, padding='SAME').shape
        [1, 6, 4, 6, 6]
    """
    return _conv(x, weight, bias, stride, padding, dilation, groups, data_format, 3, "conv3d")


def conv1d_transpose(x, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1, output_size=None, data_format="NCL", name=None):
    """1-D transposed convolution: the gradient of `conv1d` with respect to its input,
    used to upsample.

    When a stride larger than 1 makes several output sizes possible, ``output_size`` (or
    ``output_padding``) picks one.

    Args:
        x (Tensor): the input ``[N, C_in, L]`` (``NLC`` with ``data_format``).
        weight (Tensor): ``[C_in, C_out / groups, K]``.
        bias (Tensor, optional): ``[C_out]``. Default: None.
        stride (int|list|tuple, optional): the stride. Default: 1.
        padding (int|list|tuple|str, optional): the padding removed from the output (same
            forms as `conv1d`). Default: 0.
        output_padding (int|list|tuple, optional): extra size added at the end of each
            spatial axis, less than the stride or the dilation. Default: 0.
        dilation (int|list|tuple, optional): the spacing of kernel elements. Default: 1.
        groups (int, optional): the number of channel groups. Default: 1.
        output_size (int|list|tuple, optional): the wanted spatial output size. Default: None.
        data_format (str, optional): ``"NCL"`` or ``"NLC"``. Default: "NCL".
        name (str, optional): unused, for Paddle compatibility. Default: None.

    Returns:
        Tensor: ``[N, C_out, ...]`` with
        ``out = (in - 1) * stride - pad_begin - pad_end + dilation * (k - 1) + output_padding + 1``
        per axis.

    Examples:
        >>> import fw
        >>> x = fw.ones([2, 4, 5])
        >>> w = fw.ones([4, 3, 2])
        >>> fw.nn.functional.conv1d_transpose(x, w, stride=2).shape
        [2, 3, 10]
        >>> x, w = fw.to_tensor([[[1.0, 2.0]]]), fw.to_tensor([[[1.0, 1.0, 1.0]]])
        >>> fw.nn.functional.conv1d_transpose(x, w).tolist()
        [[[1.0, 3.0, 3.0, 2.0]]]
    """
    return _conv_t(x, weight, bias, stride, padding, output_padding, dilation, groups,
                   output_size, data_format, 1, "conv1d_transpose")


def conv2d_transpose(x, weight, bias=None, stride=1, padding=0, output_padding=0, dilation=1,
                     groups=1, output_size=None, data_format="NCHW", name=None):
    """2-D transposed convolution: the gradient of `conv2d` with respect to its input,
    used to upsample.

    When a stride larger than 1 makes several output sizes possible, ``output_size`` (or
    ``output_padding``) picks one.

    Args:
        x (Tensor): the input ``[N, C_in, H, W]`` (``NHWC`` with ``data_format``).
        weight (Tensor): ``[C_in, C_out / groups, kH, kW]``.
        bias (Tensor, optional): ``[C_out]``. Default: None.
        stride (int|list|tuple, optional): the stride. Default: 1.
        padding (int|list|tuple|str, optional): the padding removed from the output (same
            forms as `conv2d`). Default: 0.
        output_padding (int|list|tuple, optional): extra size added at the end of each
            spatial axis, less than the stride or the dilation. Default: 0.
        dilation (int|list|tuple, optional): the spacing of kernel elements. Default: 1.
        groups (int, optional): the number of channel groups. Default: 1.
        output_size (int|list|tuple, optional): the wanted spatial output size. Default: None.
        data_format (str, optional): ``"NCHW"`` or ``"NHWC"``. Default: "NCHW".
        name (str, optional): unused, for Paddle compatibility. Default: None.

    Returns:
        Tensor: ``[N, C_out, ...]`` with
        ``out = (in - 1) * stride - pad_begin - pad_end + dilation * (k - 1) + output_padding + 1``
        per axis.

    Examples:
        >>> import fw
        >>> x = fw.ones([2, 4, 8, 8])
        >>> w = fw.ones([4, 3, 2, 2])
        >>> fw.nn.functional.conv2d_transpose(x, w, stride=2).shape
        [2, 3, 16, 16]
    """
    return _conv_t(x, weight, bias, stride, padding, output_padding, dilation, groups,
                   output_size, data_format, 2, "conv2d_transpose")


def conv3d_transpose(x, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1, output_size=None, data_format="NCDHW", name=None):
    """3-D transposed convolution: the gradient of `conv3d` with respect to its input,
    used to upsample.

    When a stride larger than 1 makes several output sizes possible, ``output_size`` (or
    ``output_padding``) picks one.

    Args:
        x (Tensor): the input ``[N, C_in, D, H, W]`` (``NDHWC`` with ``data_format``).
        weight (Tensor): ``[C_in, C_out / groups, kD, kH, kW]``.
        bias (Tensor, optional): ``[C_out]``. Default: None.
        stride (int|list|tuple, optional): the stride. Default: 1.
        padding (int|list|tuple|str, optional): the padding removed from the output (same
            forms as `conv3d`). Default: 0.
        output_padding (int|list|tuple, optional): extra size added at the end of each
            spatial axis, less than the stride or the dilation. Default: 0.
        dilation (int|list|tuple, optional): the spacing of kernel elements. Default: 1.
        groups (int, optional): the number of channel groups. Default: 1.
        output_size (int|list|tuple, optional): the wanted spatial output size. Default: None.
        data_format (str, optional): ``"NCDHW"`` or ``"NDHWC"``. Default: "NCDHW".
        name (str, optional): unused, for Paddle compatibility. Default: None.

    Returns:
        Tensor: ``[N, C_out, ...]`` with
        ``out = (in - 1) * stride - pad_begin - pad_end + dilation * (k - 1) + output_padding + 1``
        per axis.

    Examples:
        >>> import fw
        >>> x = fw.ones([1, 4, 2, 3, 3])
        >>> w = fw.ones([4, 3, 2, 2, 2])
        >>> fw.nn.functional.conv3d_transpose(x, w, stride=2).shape
        [1, 3, 4, 6, 6]
    """
    return _conv_t(x, weight, bias, stride, padding, output_padding, dilation, groups,
                   output_size, data_format, 3, "conv3d_transpose")
