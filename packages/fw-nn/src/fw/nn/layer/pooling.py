"""Pooling layers over `fw.nn.functional`'s pooling functions."""

from __future__ import annotations

from fw.nn import functional as F
from fw.nn.layer.layers import Layer

__all__ = ["MaxPool1D", "MaxPool2D", "MaxPool3D", "AvgPool1D", "AvgPool2D", "AvgPool3D",
           "LPPool1D", "LPPool2D", "AdaptiveAvgPool1D", "AdaptiveAvgPool2D",
           "AdaptiveAvgPool3D", "AdaptiveMaxPool1D", "AdaptiveMaxPool2D", "AdaptiveMaxPool3D",
           "MaxUnPool1D", "MaxUnPool2D", "MaxUnPool3D"]


class _Pool(Layer):
    def __init__(self, **kw):
        super().__init__()
        name = kw.pop("name", None)
        self._name = name
        self._kw = kw

    def extra_repr(self) -> str:
        return ", ".join(f"{k}={v}" for k, v in self._kw.items())


class MaxPool1D(_Pool):
    """Max pooling of ``[N, C, L]`` input; ``return_mask`` also returns the argmax.

    >>> import fw
    >>> fw.nn.MaxPool1D(2)(fw.ones([1, 2, 8])).shape
    [1, 2, 4]
    """

    def __init__(self, kernel_size, stride=None, padding=0, return_mask=False, ceil_mode=False,
                 name=None):
        super().__init__(kernel_size=kernel_size, stride=stride, padding=padding,
                         return_mask=return_mask, ceil_mode=ceil_mode, name=name)

    def forward(self, input):  # noqa: A002
        return F.max_pool1d(input, **self._kw)


class MaxPool2D(_Pool):
    """Max pooling of 4-D input."""

    def __init__(self, kernel_size, stride=None, padding=0, return_mask=False, ceil_mode=False,
                 data_format="NCHW", name=None):
        super().__init__(kernel_size=kernel_size, stride=stride, padding=padding,
                         return_mask=return_mask, ceil_mode=ceil_mode, data_format=data_format,
                         name=name)

    def forward(self, x):
        return F.max_pool2d(x, **self._kw)


class MaxPool3D(_Pool):
    """Max pooling of 5-D input."""

    def __init__(self, kernel_size, stride=None, padding=0, return_mask=False, ceil_mode=False,
                 data_format="NCDHW", name=None):
        super().__init__(kernel_size=kernel_size, stride=stride, padding=padding,
                         return_mask=return_mask, ceil_mode=ceil_mode, data_format=data_format,
                         name=name)

    def forward(self, x):
        return F.max_pool3d(x, **self._kw)


class AvgPool1D(_Pool):
    """Average pooling of ``[N, C, L]`` input."""

    def __init__(self, kernel_size, stride=None, padding=0, exclusive=True, ceil_mode=False,
                 name=None):
        super().__init__(kernel_size=kernel_size, stride=stride, padding=padding,
                         exclusive=exclusive, ceil_mode=ceil_mode, name=name)

    def forward(self, x):
        return F.avg_pool1d(x, **self._kw)


class AvgPool2D(_Pool):
    """Average pooling of 4-D input."""

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False, exclusive=True,
                 divisor_override=None, data_format="NCHW", name=None):
        super().__init__(kernel_size=kernel_size, stride=stride, padding=padding,
                         ceil_mode=ceil_mode, exclusive=exclusive,
                         divisor_override=divisor_override, data_format=data_format, name=name)

    def forward(self, x):
        return F.avg_pool2d(x, **self._kw)


class AvgPool3D(_Pool):
    """Average pooling of 5-D input."""

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False, exclusive=True,
                 divisor_override=None, data_format="NCDHW", name=None):
        super().__init__(kernel_size=kernel_size, stride=stride, padding=padding,
                         ceil_mode=ceil_mode, exclusive=exclusive,
                         divisor_override=divisor_override, data_format=data_format, name=name)

    def forward(self, x):
        return F.avg_pool3d(x, **self._kw)


class LPPool1D(_Pool):
    """Power-average pooling of ``[N, C, L]`` input."""

    def __init__(self, norm_type, kernel_size, stride=None, padding=0, ceil_mode=False,
                 data_format="NCL", name=None):
        super().__init__(norm_type=norm_type, kernel_size=kernel_size, stride=stride,
                         padding=padding, ceil_mode=ceil_mode, data_format=data_format, name=name)

    def forward(self, x):
        return F.lp_pool1d(x, **self._kw)


class LPPool2D(_Pool):
    """Power-average pooling of 4-D input."""

    def __init__(self, norm_type, kernel_size, stride=None, padding=0, ceil_mode=False,
                 data_format="NCHW", name=None):
        super().__init__(norm_type=norm_type, kernel_size=kernel_size, stride=stride,
                         padding=padding, ceil_mode=ceil_mode, data_format=data_format, name=name)

    def forward(self, x):
        return F.lp_pool2d(x, **self._kw)


class AdaptiveAvgPool1D(_Pool):
    """Average pooling of ``[N, C, L]`` to `output_size` positions."""

    def __init__(self, output_size, name=None):
        super().__init__(output_size=output_size, name=name)

    def forward(self, input):  # noqa: A002
        return F.adaptive_avg_pool1d(input, **self._kw)


class AdaptiveAvgPool2D(_Pool):
    """Average pooling of 4-D input to `output_size`."""

    def __init__(self, output_size, data_format="NCHW", name=None):
        super().__init__(output_size=output_size, data_format=data_format, name=name)

    def forward(self, x):
        return F.adaptive_avg_pool2d(x, **self._kw)


class AdaptiveAvgPool3D(_Pool):
    """Average pooling of 5-D input to `output_size`."""

    def __init__(self, output_size, data_format="NCDHW", name=None):
        super().__init__(output_size=output_size, data_format=data_format, name=name)

    def forward(self, x):
        return F.adaptive_avg_pool3d(x, **self._kw)


class AdaptiveMaxPool1D(_Pool):
    """Max pooling of ``[N, C, L]`` to `output_size` positions."""

    def __init__(self, output_size, return_mask=False, name=None):
        super().__init__(output_size=output_size, return_mask=return_mask, name=name)

    def forward(self, input):  # noqa: A002
        return F.adaptive_max_pool1d(input, **self._kw)


class AdaptiveMaxPool2D(_Pool):
    """Max pooling of 4-D input to `output_size`."""

    def __init__(self, output_size, return_mask=False, name=None):
        super().__init__(output_size=output_size, return_mask=return_mask, name=name)

    def forward(self, x):
        return F.adaptive_max_pool2d(x, **self._kw)


class AdaptiveMaxPool3D(_Pool):
    """Max pooling of 5-D input to `output_size`."""

    def __init__(self, output_size, return_mask=False, name=None):
        super().__init__(output_size=output_size, return_mask=return_mask, name=name)

    def forward(self, x):
        return F.adaptive_max_pool3d(x, **self._kw)


class MaxUnPool1D(_Pool):
    """Inverse of MaxPool1D: ``forward(x, indices, output_size=None)``."""

    _fn = staticmethod(F.max_unpool1d)

    def __init__(self, kernel_size, stride=None, padding=0, data_format="NCL",
                 output_size=None, name=None):
        super().__init__(kernel_size=kernel_size, stride=stride, padding=padding,
                         data_format=data_format, output_size=output_size, name=name)

    def forward(self, x, indices, output_size=None):
        kw = dict(self._kw)
        if output_size is not None:
            kw["output_size"] = output_size
        return type(self)._fn(x, indices, **kw)


class MaxUnPool2D(MaxUnPool1D):
    """Inverse of MaxPool2D."""

    _fn = staticmethod(F.max_unpool2d)

    def __init__(self, kernel_size, stride=None, padding=0, data_format="NCHW",
                 output_size=None, name=None):
        super().__init__(kernel_size, stride, padding, data_format, output_size, name)


class MaxUnPool3D(MaxUnPool1D):
    """Inverse of MaxPool3D."""

    _fn = staticmethod(F.max_unpool3d)

    def __init__(self, kernel_size, stride=None, padding=0, data_format="NCDHW",
                 output_size=None, name=None):
        super().__init__(kernel_size, stride, padding, data_format, output_size, name)
