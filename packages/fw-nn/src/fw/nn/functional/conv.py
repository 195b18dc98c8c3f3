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
    """1-D convolution of x [N, C_in, L] with weight [C_out, C_in/groups, K].

    >>> import fw
    >>> fw.nn.functional.conv1d(fw.ones([1, 1, 4]), fw.ones([1, 1, 2])).tolist()
    [[[2.0, 2.0, 2.0]]]
    """
    return _conv(x, weight, bias, stride, padding, dilation, groups, data_format, 1, "conv1d")


def conv2d(x, weight, bias=None, stride=1, padding=0, dilation=1, groups=1, data_format="NCHW",
           name=None):
    """2-D convolution of x [N, C_in, H, W] with weight [C_out, C_in/groups, kH, kW]."""
    return _conv(x, weight, bias, stride, padding, dilation, groups, data_format, 2, "conv2d")


def conv3d(x, weight, bias=None, stride=1, padding=0, dilation=1, groups=1,
           data_format="NCDHW", name=None):
    """3-D convolution of x [N, C_in, D, H, W] with weight [C_out, C_in/groups, kD, kH, kW]."""
    return _conv(x, weight, bias, stride, padding, dilation, groups, data_format, 3, "conv3d")


def conv1d_transpose(x, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1, output_size=None, data_format="NCL", name=None):
    """1-D transposed convolution; weight is [C_in, C_out/groups, K]."""
    return _conv_t(x, weight, bias, stride, padding, output_padding, dilation, groups,
                   output_size, data_format, 1, "conv1d_transpose")


def conv2d_transpose(x, weight, bias=None, stride=1, padding=0, output_padding=0, dilation=1,
                     groups=1, output_size=None, data_format="NCHW", name=None):
    """2-D transposed convolution; weight is [C_in, C_out/groups, kH, kW]."""
    return _conv_t(x, weight, bias, stride, padding, output_padding, dilation, groups,
                   output_size, data_format, 2, "conv2d_transpose")


def conv3d_transpose(x, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1, output_size=None, data_format="NCDHW", name=None):
    """3-D transposed convolution; weight is [C_in, C_out/groups, kD, kH, kW]."""
    return _conv_t(x, weight, bias, stride, padding, output_padding, dilation, groups,
                   output_size, data_format, 3, "conv3d_transpose")
