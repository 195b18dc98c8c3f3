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
    """1-D max pooling: the maximum of each
    sliding window of a ``[N, C, L]`` input.

    Args:
        kernel_size (int|list|tuple): the window size, one int for all spatial axes.
        stride (int|list|tuple, optional): the window stride; ``kernel_size`` when None.
            Default: None.
        padding (int|list|tuple|str, optional): implicit padding (an int, one per axis,
            (begin, end) pairs, or ``"SAME"``/``"VALID"``). Default: 0.
        return_mask (bool, optional): also return the flat index of each maximum within
            its input plane (for `MaxUnPool1D`). Default: False.
        ceil_mode (bool, optional): round the output size up rather than down.
            Default: False.
        name (str, optional): a name for the layer, shown in its repr. Default: None.

    Shape:
        - input: ``[N, C, L]``.
        - output: ``[N, C, ...]`` with, per spatial axis,
          ``out = (in + pad_begin + pad_end - kernel) // stride + 1`` (rounded up with
          ``ceil_mode``).

    Examples:
        >>> import fw
        >>> pool = fw.nn.MaxPool1D(kernel_size=2, stride=2)
        >>> pool(fw.ones([1, 2, 8])).shape
        [1, 2, 4]
    """

    def __init__(self, kernel_size, stride=None, padding=0, return_mask=False, ceil_mode=False,
                 name=None):
        super().__init__(kernel_size=kernel_size, stride=stride, padding=padding,
                         return_mask=return_mask, ceil_mode=ceil_mode, name=name)

    def forward(self, input):  # noqa: A002
        return F.max_pool1d(input, **self._kw)


class MaxPool2D(_Pool):
    """2-D max pooling: the maximum of each
    sliding window of a ``[N, C, H, W]`` input.

    Args:
        kernel_size (int|list|tuple): the window size, one int for all spatial axes.
        stride (int|list|tuple, optional): the window stride; ``kernel_size`` when None.
            Default: None.
        padding (int|list|tuple|str, optional): implicit padding (an int, one per axis,
            (begin, end) pairs, or ``"SAME"``/``"VALID"``). Default: 0.
        return_mask (bool, optional): also return the flat index of each maximum within
            its input plane (for `MaxUnPool2D`). Default: False.
        ceil_mode (bool, optional): round the output size up rather than down.
            Default: False.
        data_format (str, optional): ``"NCHW"`` or ``"NHWC"``. Default: "NCHW".
        name (str, optional): a name for the layer, shown in its repr. Default: None.

    Shape:
        - input: ``[N, C, H, W]``.
        - output: ``[N, C, ...]`` with, per spatial axis,
          ``out = (in + pad_begin + pad_end - kernel) // stride + 1`` (rounded up with
          ``ceil_mode``).

    Examples:
        >>> import fw
        >>> pool = fw.nn.MaxPool2D(kernel_size=2, stride=2)
        >>> pool(fw.ones([1, 3, 32, 32])).shape
        [1, 3, 16, 16]
        >>> x = fw.to_tensor([[[[1.0, 2.0], [4.0, 3.0]]]])
        >>> out, mask = fw.nn.MaxPool2D(2, return_mask=True)(x)
        >>> out.tolist(), mask.tolist()
        ([[[[4.0]]]], [[[[2]]]])
    """

    def __init__(self, kernel_size, stride=None, padding=0, return_mask=False, ceil_mode=False,
                 data_format="NCHW", name=None):
        super().__init__(kernel_size=kernel_size, stride=stride, padding=padding,
                         return_mask=return_mask, ceil_mode=ceil_mode, data_format=data_format,
                         name=name)

    def forward(self, x):
        return F.max_pool2d(x, **self._kw)


class MaxPool3D(_Pool):
    """3-D max pooling: the maximum of each
    sliding window of a ``[N, C, D, H, W]`` input.

    Args:
        kernel_size (int|list|tuple): the window size, one int for all spatial axes.
        stride (int|list|tuple, optional): the window stride; ``kernel_size`` when None.
            Default: None.
        padding (int|list|tuple|str, optional): implicit padding (an int, one per axis,
            (begin, end) pairs, or ``"SAME"``/``"VALID"``). Default: 0.
        return_mask (bool, optional): also return the flat index of each maximum within
            its input plane (for `MaxUnPool3D`). Default: False.
        ceil_mode (bool, optional): round the output size up rather than down.
            Default: False.
        data_format (str, optional): ``"NCDHW"`` or ``"NDHWC"``. Default: "NCDHW".
        name (str, optional): a name for the layer, shown in its repr. Default: None.

    Shape:
        - input: ``[N, C, D, H, W]``.
        - output: ``[N, C, ...]`` with, per spatial axis,
          ``out = (in + pad_begin + pad_end - kernel) // stride + 1`` (rounded up with
          ``ceil_mode``).

    Examples:
        >>> import fw
        >>> pool = fw.nn.MaxPool3D(kernel_size=2)
        >>> pool(fw.ones([1, 2, 4, 4, 4])).shape
        [1, 2, 2, 2, 2]
    """

    def __init__(self, kernel_size, stride=None, padding=0, return_mask=False, ceil_mode=False,
                 data_format="NCDHW", name=None):
        super().__init__(kernel_size=kernel_size, stride=stride, padding=padding,
                         return_mask=return_mask, ceil_mode=ceil_mode, data_format=data_format,
                         name=name)

    def forward(self, x):
        return F.max_pool3d(x, **self._kw)


class AvgPool1D(_Pool):
    """1-D average pooling: the mean of each
    sliding window of a ``[N, C, L]`` input.

    Args:
        kernel_size (int|list|tuple): the window size, one int for all spatial axes.
        stride (int|list|tuple, optional): the window stride; ``kernel_size`` when None.
            Default: None.
        padding (int|list|tuple|str, optional): implicit padding (an int, one per axis,
            (begin, end) pairs, or ``"SAME"``/``"VALID"``). Default: 0.
        exclusive (bool, optional): leave padded positions out of the divisor. Default: True.
        ceil_mode (bool, optional): round the output size up rather than down.
            Default: False.
        name (str, optional): a name for the layer, shown in its repr. Default: None.

    Shape:
        - input: ``[N, C, L]``.
        - output: ``[N, C, ...]`` with, per spatial axis,
          ``out = (in + pad_begin + pad_end - kernel) // stride + 1`` (rounded up with
          ``ceil_mode``).

    Examples:
        >>> import fw
        >>> pool = fw.nn.AvgPool1D(kernel_size=2, stride=2)
        >>> pool(fw.ones([1, 2, 8])).shape
        [1, 2, 4]
    """

    def __init__(self, kernel_size, stride=None, padding=0, exclusive=True, ceil_mode=False,
                 name=None):
        super().__init__(kernel_size=kernel_size, stride=stride, padding=padding,
                         exclusive=exclusive, ceil_mode=ceil_mode, name=name)

    def forward(self, x):
        return F.avg_pool1d(x, **self._kw)


class AvgPool2D(_Pool):
    """2-D average pooling: the mean of each
    sliding window of a ``[N, C, H, W]`` input.

    Args:
        kernel_size (int|list|tuple): the window size, one int for all spatial axes.
        stride (int|list|tuple, optional): the window stride; ``kernel_size`` when None.
            Default: None.
        padding (int|list|tuple|str, optional): implicit padding (an int, one per axis,
            (begin, end) pairs, or ``"SAME"``/``"VALID"``). Default: 0.
        exclusive (bool, optional): leave padded positions out of the divisor. Default: True.
        divisor_override (int, optional): divide by this number instead. Default: None.
        ceil_mode (bool, optional): round the output size up rather than down.
            Default: False.
        data_format (str, optional): ``"NCHW"`` or ``"NHWC"``. Default: "NCHW".
        name (str, optional): a name for the layer, shown in its repr. Default: None.

    Shape:
        - input: ``[N, C, H, W]``.
        - output: ``[N, C, ...]`` with, per spatial axis,
          ``out = (in + pad_begin + pad_end - kernel) // stride + 1`` (rounded up with
          ``ceil_mode``).

    Examples:
        >>> import fw
        >>> pool = fw.nn.AvgPool2D(kernel_size=3, stride=2, padding=1)
        >>> pool(fw.ones([1, 3, 32, 32])).shape
        [1, 3, 16, 16]
        >>> x = fw.to_tensor([[[[1.0, 2.0], [3.0, 6.0]]]])
        >>> fw.nn.AvgPool2D(2)(x).tolist()
        [[[[3.0]]]]
    """

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False, exclusive=True,
                 divisor_override=None, data_format="NCHW", name=None):
        super().__init__(kernel_size=kernel_size, stride=stride, padding=padding,
                         ceil_mode=ceil_mode, exclusive=exclusive,
                         divisor_override=divisor_override, data_format=data_format, name=name)

    def forward(self, x):
        return F.avg_pool2d(x, **self._kw)


class AvgPool3D(_Pool):
    """3-D average pooling: the mean of each
    sliding window of a ``[N, C, D, H, W]`` input.

    Args:
        kernel_size (int|list|tuple): the window size, one int for all spatial axes.
        stride (int|list|tuple, optional): the window stride; ``kernel_size`` when None.
            Default: None.
        padding (int|list|tuple|str, optional): implicit padding (an int, one per axis,
            (begin, end) pairs, or ``"SAME"``/``"VALID"``). Default: 0.
        exclusive (bool, optional): leave padded positions out of the divisor. Default: True.
        divisor_override (int, optional): divide by this number instead. Default: None.
        ceil_mode (bool, optional): round the output size up rather than down.
            Default: False.
        data_format (str, optional): ``"NCDHW"`` or ``"NDHWC"``. Default: "NCDHW".
        name (str, optional): a name for the layer, shown in its repr. Default: None.

    Shape:
        - input: ``[N, C, D, H, W]``.
        - output: ``[N, C, ...]`` with, per spatial axis,
          ``out = (in + pad_begin + pad_end - kernel) // stride + 1`` (rounded up with
          ``ceil_mode``).

    Examples:
        >>> import fw
        >>> pool = fw.nn.AvgPool3D(kernel_size=2)
        >>> pool(fw.ones([1, 2, 4, 4, 4])).shape
        [1, 2, 2, 2, 2]
    """

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False, exclusive=True,
                 divisor_override=None, data_format="NCDHW", name=None):
        super().__init__(kernel_size=kernel_size, stride=stride, padding=padding,
                         ceil_mode=ceil_mode, exclusive=exclusive,
                         divisor_override=divisor_override, data_format=data_format, name=name)

    def forward(self, x):
        return F.avg_pool3d(x, **self._kw)


class LPPool1D(_Pool):
    """1-D power-average pooling: ``(sum(x ** norm_type)) ** (1 / norm_type)`` of each
    sliding window of a ``[N, C, L]`` input.

    Args:
        norm_type (float): the power p; ``inf`` gives max pooling.
        kernel_size (int|list|tuple): the window size, one int for all spatial axes.
        stride (int|list|tuple, optional): the window stride; ``kernel_size`` when None.
            Default: None.
        padding (int|list|tuple|str, optional): implicit padding (an int, one per axis,
            (begin, end) pairs, or ``"SAME"``/``"VALID"``). Default: 0.
        ceil_mode (bool, optional): round the output size up rather than down.
            Default: False.
        data_format (str, optional): ``"NCL"`` or ``"NLC"``. Default: "NCL".
        name (str, optional): a name for the layer, shown in its repr. Default: None.

    Shape:
        - input: ``[N, C, L]``.
        - output: ``[N, C, ...]`` with, per spatial axis,
          ``out = (in + pad_begin + pad_end - kernel) // stride + 1`` (rounded up with
          ``ceil_mode``).

    Examples:
        >>> import fw
        >>> pool = fw.nn.LPPool1D(norm_type=2, kernel_size=2)
        >>> pool(fw.ones([1, 2, 8])).shape
        [1, 2, 4]
    """

    def __init__(self, norm_type, kernel_size, stride=None, padding=0, ceil_mode=False,
                 data_format="NCL", name=None):
        super().__init__(norm_type=norm_type, kernel_size=kernel_size, stride=stride,
                         padding=padding, ceil_mode=ceil_mode, data_format=data_format, name=name)

    def forward(self, x):
        return F.lp_pool1d(x, **self._kw)


class LPPool2D(_Pool):
    """2-D power-average pooling: ``(sum(x ** norm_type)) ** (1 / norm_type)`` of each
    sliding window of a ``[N, C, H, W]`` input.

    Args:
        norm_type (float): the power p; ``inf`` gives max pooling.
        kernel_size (int|list|tuple): the window size, one int for all spatial axes.
        stride (int|list|tuple, optional): the window stride; ``kernel_size`` when None.
            Default: None.
        padding (int|list|tuple|str, optional): implicit padding (an int, one per axis,
            (begin, end) pairs, or ``"SAME"``/``"VALID"``). Default: 0.
        ceil_mode (bool, optional): round the output size up rather than down.
            Default: False.
        data_format (str, optional): ``"NCHW"`` or ``"NHWC"``. Default: "NCHW".
        name (str, optional): a name for the layer, shown in its repr. Default: None.

    Shape:
        - input: ``[N, C, H, W]``.
        - output: ``[N, C, ...]`` with, per spatial axis,
          ``out = (in + pad_begin + pad_end - kernel) // stride + 1`` (rounded up with
          ``ceil_mode``).

    Examples:
        >>> import fw
        >>> pool = fw.nn.LPPool2D(norm_type=2, kernel_size=2)
        >>> pool(fw.ones([1, 3, 8, 8])).shape
        [1, 3, 4, 4]
        >>> x = fw.to_tensor([[[[3.0, 0.0], [0.0, 4.0]]]])
        >>> fw.nn.LPPool2D(2, 2)(x).tolist()
        [[[[5.0]]]]
    """

    def __init__(self, norm_type, kernel_size, stride=None, padding=0, ceil_mode=False,
                 data_format="NCHW", name=None):
        super().__init__(norm_type=norm_type, kernel_size=kernel_size, stride=stride,
                         padding=padding, ceil_mode=ceil_mode, data_format=data_format, name=name)

    def forward(self, x):
        return F.lp_pool2d(x, **self._kw)


class AdaptiveAvgPool1D(_Pool):
    """1-D adaptive average pooling: the mean of windows chosen so that the
    output has exactly ``output_size`` positions per spatial axis (window ``i`` spans
    ``[floor(i * in / out), ceil((i + 1) * in / out))``).

    Args:
        output_size (int|list|tuple): the output size, one int for all spatial axes;
            None entries keep the input size.
        name (str, optional): a name for the layer, shown in its repr. Default: None.

    Shape:
        - input: ``[N, C, L]``; output: ``[N, C, *output_size]``.

    Examples:
        >>> import fw
        >>> pool = fw.nn.AdaptiveAvgPool1D(output_size=4)
        >>> pool(fw.ones([1, 2, 10])).shape
        [1, 2, 4]
    """

    def __init__(self, output_size, name=None):
        super().__init__(output_size=output_size, name=name)

    def forward(self, input):  # noqa: A002
        return F.adaptive_avg_pool1d(input, **self._kw)


class AdaptiveAvgPool2D(_Pool):
    """2-D adaptive average pooling: the mean of windows chosen so that the
    output has exactly ``output_size`` positions per spatial axis (window ``i`` spans
    ``[floor(i * in / out), ceil((i + 1) * in / out))``).

    Args:
        output_size (int|list|tuple): the output size, one int for all spatial axes;
            None entries keep the input size.
        data_format (str, optional): ``"NCHW"`` or ``"NHWC"``. Default: "NCHW".
        name (str, optional): a name for the layer, shown in its repr. Default: None.

    Shape:
        - input: ``[N, C, H, W]``; output: ``[N, C, *output_size]``.

    Examples:
        >>> import fw
        >>> pool = fw.nn.AdaptiveAvgPool2D(output_size=1)
        >>> pool(fw.ones([2, 8, 7, 7])).shape
        [2, 8, 1, 1]
    """

    def __init__(self, output_size, data_format="NCHW", name=None):
        super().__init__(output_size=output_size, data_format=data_format, name=name)

    def forward(self, x):
        return F.adaptive_avg_pool2d(x, **self._kw)


class AdaptiveAvgPool3D(_Pool):
    """3-D adaptive average pooling: the mean of windows chosen so that the
    output has exactly ``output_size`` positions per spatial axis (window ``i`` spans
    ``[floor(i * in / out), ceil((i + 1) * in / out))``).

    Args:
        output_size (int|list|tuple): the output size, one int for all spatial axes;
            None entries keep the input size.
        data_format (str, optional): ``"NCDHW"`` or ``"NDHWC"``. Default: "NCDHW".
        name (str, optional): a name for the layer, shown in its repr. Default: None.

    Shape:
        - input: ``[N, C, D, H, W]``; output: ``[N, C, *output_size]``.

    Examples:
        >>> import fw
        >>> pool = fw.nn.AdaptiveAvgPool3D(output_size=[1, 2, 2])
        >>> pool(fw.ones([1, 2, 4, 5, 6])).shape
        [1, 2, 1, 2, 2]
    """

    def __init__(self, output_size, data_format="NCDHW", name=None):
        super().__init__(output_size=output_size, data_format=data_format, name=name)

    def forward(self, x):
        return F.adaptive_avg_pool3d(x, **self._kw)


class AdaptiveMaxPool1D(_Pool):
    """1-D adaptive max pooling: the maximum of windows chosen so that the
    output has exactly ``output_size`` positions per spatial axis (window ``i`` spans
    ``[floor(i * in / out), ceil((i + 1) * in / out))``).

    Args:
        output_size (int|list|tuple): the output size, one int for all spatial axes;
            None entries keep the input size.
        return_mask (bool, optional): also return the flat index of each maximum within
            its input plane (for `MaxUnPool1D`). Default: False.
        name (str, optional): a name for the layer, shown in its repr. Default: None.

    Shape:
        - input: ``[N, C, L]``; output: ``[N, C, *output_size]``.

    Examples:
        >>> import fw
        >>> pool = fw.nn.AdaptiveMaxPool1D(output_size=4)
        >>> pool(fw.ones([1, 2, 10])).shape
        [1, 2, 4]
    """

    def __init__(self, output_size, return_mask=False, name=None):
        super().__init__(output_size=output_size, return_mask=return_mask, name=name)

    def forward(self, input):  # noqa: A002
        return F.adaptive_max_pool1d(input, **self._kw)


class AdaptiveMaxPool2D(_Pool):
    """2-D adaptive max pooling: the maximum of windows chosen so that the
    output has exactly ``output_size`` positions per spatial axis (window ``i`` spans
    ``[floor(i * in / out), ceil((i + 1) * in / out))``).

    Args:
        output_size (int|list|tuple): the output size, one int for all spatial axes;
            None entries keep the input size.
        return_mask (bool, optional): also return the flat index of each maximum within
            its input plane (for `MaxUnPool2D`). Default: False.
        name (str, optional): a name for the layer, shown in its repr. Default: None.

    Shape:
        - input: ``[N, C, H, W]``; output: ``[N, C, *output_size]``.

    Examples:
        >>> import fw
        >>> pool = fw.nn.AdaptiveMaxPool2D(output_size=[2, 3])
        >>> pool(fw.ones([1, 3, 8, 9])).shape
        [1, 3, 2, 3]
    """

    def __init__(self, output_size, return_mask=False, name=None):
        super().__init__(output_size=output_size, return_mask=return_mask, name=name)

    def forward(self, x):
        return F.adaptive_max_pool2d(x, **self._kw)


class AdaptiveMaxPool3D(_Pool):
    """3-D adaptive max pooling: the maximum of windows chosen so that the
    output has exactly ``output_size`` positions per spatial axis (window ``i`` spans
    ``[floor(i * in / out), ceil((i + 1) * in / out))``).

    Args:
        output_size (int|list|tuple): the output size, one int for all spatial axes;
            None entries keep the input size.
        return_mask (bool, optional): also return the flat index of each maximum within
            its input plane (for `MaxUnPool3D`). Default: False.
        name (str, optional): a name for the layer, shown in its repr. Default: None.

    Shape:
        - input: ``[N, C, D, H, W]``; output: ``[N, C, *output_size]``.

    Examples:
        >>> import fw
        >>> pool = fw.nn.AdaptiveMaxPool3D(output_size=2)
        >>> pool(fw.ones([1, 2, 4, 4, 4])).shape
        [1, 2, 2, 2, 2]
    """

    def __init__(self, output_size, return_mask=False, name=None):
        super().__init__(output_size=output_size, return_mask=return_mask, name=name)

    def forward(self, x):
        return F.adaptive_max_pool3d(x, **self._kw)


class MaxUnPool1D(_Pool):
    """1-D max unpooling, the partial inverse of `MaxPool1D`: each value is written at
    the position its mask (from ``return_mask=True``) names and the rest is zero.
    ``forward(x, indices, output_size=None)``.

    Args:
        kernel_size (int|list|tuple): the pooling window size.
        stride (int|list|tuple, optional): the pooling stride; ``kernel_size`` when None.
            Default: None.
        padding (int|list|tuple, optional): the pooling padding. Default: 0.
        data_format (str, optional): ``"NCL"`` only. Default: "NCL".
        output_size (list|tuple, optional): the output spatial size, to undo a pooling
            that dropped a remainder. Default: None.
        name (str, optional): a name for the layer, shown in its repr. Default: None.

    Shape:
        - input and indices: ``[N, C, L]``.
        - output: ``[N, C, ...]`` with ``out = (in - 1) * stride - 2 * padding + kernel``
          per spatial axis, or ``output_size``.

    Examples:
        >>> import fw
        >>> x = fw.arange(1, 5, dtype="float32").reshape([1, 1, 4])
        >>> out, idx = fw.nn.MaxPool1D(2, return_mask=True)(x)
        >>> fw.nn.MaxUnPool1D(2)(out, idx).shape
        [1, 1, 4]
    """

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
    """2-D max unpooling, the partial inverse of `MaxPool2D`: each value is written at
    the position its mask (from ``return_mask=True``) names and the rest is zero.
    ``forward(x, indices, output_size=None)``.

    Args:
        kernel_size (int|list|tuple): the pooling window size.
        stride (int|list|tuple, optional): the pooling stride; ``kernel_size`` when None.
            Default: None.
        padding (int|list|tuple, optional): the pooling padding. Default: 0.
        data_format (str, optional): ``"NCHW"`` only. Default: "NCHW".
        output_size (list|tuple, optional): the output spatial size, to undo a pooling
            that dropped a remainder. Default: None.
        name (str, optional): a name for the layer, shown in its repr. Default: None.

    Shape:
        - input and indices: ``[N, C, H, W]``.
        - output: ``[N, C, ...]`` with ``out = (in - 1) * stride - 2 * padding + kernel``
          per spatial axis, or ``output_size``.

    Examples:
        >>> import fw
        >>> x = fw.arange(1, 17, dtype="float32").reshape([1, 1, 4, 4])
        >>> out, idx = fw.nn.MaxPool2D(2, return_mask=True)(x)
        >>> fw.nn.MaxUnPool2D(2)(out, idx).shape
        [1, 1, 4, 4]
    """

    _fn = staticmethod(F.max_unpool2d)

    def __init__(self, kernel_size, stride=None, padding=0, data_format="NCHW",
                 output_size=None, name=None):
        super().__init__(kernel_size, stride, padding, data_format, output_size, name)


class MaxUnPool3D(MaxUnPool1D):
    """3-D max unpooling, the partial inverse of `MaxPool3D`: each value is written at
    the position its mask (from ``return_mask=True``) names and the rest is zero.
    ``forward(x, indices, output_size=None)``.

    Args:
        kernel_size (int|list|tuple): the pooling window size.
        stride (int|list|tuple, optional): the pooling stride; ``kernel_size`` when None.
            Default: None.
        padding (int|list|tuple, optional): the pooling padding. Default: 0.
        data_format (str, optional): ``"NCDHW"`` only. Default: "NCDHW".
        output_size (list|tuple, optional): the output spatial size, to undo a pooling
            that dropped a remainder. Default: None.
        name (str, optional): a name for the layer, shown in its repr. Default: None.

    Shape:
        - input and indices: ``[N, C, D, H, W]``.
        - output: ``[N, C, ...]`` with ``out = (in - 1) * stride - 2 * padding + kernel``
          per spatial axis, or ``output_size``.

    Examples:
        >>> import fw
        >>> x = fw.arange(1, 65, dtype="float32").reshape([1, 1, 4, 4, 4])
        >>> out, idx = fw.nn.MaxPool3D(2, return_mask=True)(x)
        >>> fw.nn.MaxUnPool3D(2)(out, idx).shape
        [1, 1, 4, 4, 4]
    """

    _fn = staticmethod(F.max_unpool3d)

    def __init__(self, kernel_size, stride=None, padding=0, data_format="NCDHW",
                 output_size=None, name=None):
        super().__init__(kernel_size, stride, padding, data_format, output_size, name)
