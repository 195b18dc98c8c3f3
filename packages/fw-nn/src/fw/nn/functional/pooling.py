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
    """Max over windows of x [N, C, L]; with ``return_mask`` also the flat index of each
    maximum (int32).

    >>> import fw
    >>> fw.nn.functional.max_pool1d(fw.to_tensor([[[1.0, 3.0, 2.0, 0.0]]]), 2).tolist()
    [[[3.0, 2.0]]]
    """
    return _max(x, 1, kernel_size, stride, padding, return_mask, ceil_mode, "NCL", "max_pool1d")


def max_pool2d(x, kernel_size, stride=None, padding=0, return_mask=False, ceil_mode=False,
               data_format="NCHW", name=None):
    """Max over windows of x [N, C, H, W] (or NHWC)."""
    return _max(x, 2, kernel_size, stride, padding, return_mask, ceil_mode, data_format,
                "max_pool2d")


def max_pool3d(x, kernel_size, stride=None, padding=0, return_mask=False, ceil_mode=False,
               data_format="NCDHW", name=None):
    """Max over windows of x [N, C, D, H, W] (or NDHWC)."""
    return _max(x, 3, kernel_size, stride, padding, return_mask, ceil_mode, data_format,
                "max_pool3d")


def avg_pool1d(x, kernel_size, stride=None, padding=0, exclusive=True, ceil_mode=False,
               name=None):
    """Average over windows of x [N, C, L]; ``exclusive`` leaves padding out of the count."""
    return _avg(x, 1, kernel_size, stride, padding, ceil_mode, exclusive, None, "NCL",
                "avg_pool1d")


def avg_pool2d(x, kernel_size, stride=None, padding=0, ceil_mode=False, exclusive=True,
               divisor_override=None, data_format="NCHW", name=None):
    """Average over windows of x [N, C, H, W] (or NHWC)."""
    return _avg(x, 2, kernel_size, stride, padding, ceil_mode, exclusive, divisor_override,
                data_format, "avg_pool2d")


def avg_pool3d(x, kernel_size, stride=None, padding=0, ceil_mode=False, exclusive=True,
               divisor_override=None, data_format="NCDHW", name=None):
    """Average over windows of x [N, C, D, H, W] (or NDHWC)."""
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
    """(sum over the window of x^p)^(1/p) for x [N, C, L]."""
    return _lp(x, 1, norm_type, kernel_size, stride, padding, ceil_mode, data_format,
               "lp_pool1d")


def lp_pool2d(x, norm_type, kernel_size, stride=None, padding=0, ceil_mode=False,
              data_format="NCHW", name=None):
    """(sum over the window of x^p)^(1/p) for x [N, C, H, W]."""
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
    """Average pooling of x [N, C, L] to `output_size` positions."""
    return _adaptive(x, 1, output_size, "NCL", False, False, "adaptive_avg_pool1d")


def adaptive_avg_pool2d(x, output_size, data_format="NCHW", name=None):
    """Average pooling of x [N, C, H, W] to `output_size` (int or [H, W], None keeps)."""
    return _adaptive(x, 2, output_size, data_format, False, False, "adaptive_avg_pool2d")


def adaptive_avg_pool3d(x, output_size, data_format="NCDHW", name=None):
    """Average pooling of x [N, C, D, H, W] to `output_size`."""
    return _adaptive(x, 3, output_size, data_format, False, False, "adaptive_avg_pool3d")


def adaptive_max_pool1d(x, output_size, return_mask=False, name=None):
    """Max pooling of x [N, C, L] to `output_size` positions (optionally the argmax mask)."""
    return _adaptive(x, 1, output_size, "NCL", True, return_mask, "adaptive_max_pool1d")


def adaptive_max_pool2d(x, output_size, return_mask=False, name=None):
    """Max pooling of x [N, C, H, W] to `output_size`."""
    return _adaptive(x, 2, output_size, "NCHW", True, return_mask, "adaptive_max_pool2d")


def adaptive_max_pool3d(x, output_size, return_mask=False, name=None):
    """Max pooling of x [N, C, D, H, W] to `output_size`."""
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
    """Scatter x [N, C, L] into zeros at the max positions `indices` from max_pool1d."""
    return _unpool(x, indices, 1, kernel_size, stride, padding, data_format, output_size,
                   "max_unpool1d")


def max_unpool2d(x, indices, kernel_size, stride=None, padding=0, data_format="NCHW",
                 output_size=None, name=None):
    """Scatter x [N, C, H, W] into zeros at the max positions `indices` from max_pool2d."""
    return _unpool(x, indices, 2, kernel_size, stride, padding, data_format, output_size,
                   "max_unpool2d")


def max_unpool3d(x, indices, kernel_size, stride=None, padding=0, data_format="NCDHW",
                 output_size=None, name=None):
    """Scatter x [N, C, D, H, W] into zeros at `indices` from max_pool3d."""
    return _unpool(x, indices, 3, kernel_size, stride, padding, data_format, output_size,
                   "max_unpool3d")
