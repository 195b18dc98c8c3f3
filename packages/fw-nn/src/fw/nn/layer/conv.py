"""Convolution layers: Conv1D/2D/3D and Conv1DTranspose/2D/3D.

Weights follow Paddle: ``[C_out, C_in/groups, *K]`` for convolutions (default
init N(0, 2 / (C_in * prod(K))), He-style), ``[C_in, C_out/groups, *K]`` for the
transposed ones (Xavier-uniform); biases start at zero. ``padding_mode`` other than
``"zeros"`` pads the input explicitly (reflect, replicate, circular) and runs the
convolution unpadded.
"""

from __future__ import annotations

import math

from fw.core.errors import InvalidArgumentError
from fw.nn import functional as F
from fw.nn import initializer as I
from fw.nn.layer.layers import Layer

__all__ = ["Conv1D", "Conv2D", "Conv3D", "Conv1DTranspose", "Conv2DTranspose",
           "Conv3DTranspose"]


def _ntuple(v, n, what):
    if isinstance(v, int):
        return [v] * n
    v = list(v)
    if len(v) == 1:
        return v * n
    if len(v) != n:
        raise InvalidArgumentError(f"'{what}' must be an int or hold {n} ints, got {v}")
    return v


class _ConvNd(Layer):
    # _nd and _formats: set by each concrete layer

    # no defaults: every concrete layer passes all of them (its own signature holds
    # Paddle's defaults, which test_signature_defaults checks)
    def __init__(self, in_channels, out_channels, kernel_size, transposed, stride, padding,
                 padding_mode, output_padding, dilation, groups, weight_attr, bias_attr,
                 data_format):
        super().__init__()
        nd = self._nd
        cls = type(self).__name__
        data_format = data_format or self._formats[0]
        if data_format not in self._formats:
            raise InvalidArgumentError(f"{cls}: 'data_format' must be one of "
                                       f"{list(self._formats)}, got {data_format!r}")
        if groups <= 0 or in_channels % groups or out_channels % groups:
            raise InvalidArgumentError(f"{cls}: groups={groups} must divide in_channels "
                                       f"({in_channels}) and out_channels ({out_channels})")
        if padding_mode not in ("zeros", "reflect", "replicate", "circular"):
            raise InvalidArgumentError(f"{cls}: 'padding_mode' must be 'zeros', 'reflect', "
                                       f"'replicate' or 'circular', got {padding_mode!r}")
        self._in_channels = in_channels
        self._out_channels = out_channels
        self._kernel_size = _ntuple(kernel_size, nd, "kernel_size")
        self._stride = _ntuple(stride, nd, "stride")
        self._dilation = _ntuple(dilation, nd, "dilation")
        self._padding = padding
        self._padding_mode = padding_mode
        self._output_padding = output_padding
        self._groups = groups
        self._data_format = data_format
        self._transposed = transposed
        self._explicit_pad = None
        if padding_mode != "zeros":
            if isinstance(padding, str):
                raise InvalidArgumentError(f"{cls}: padding_mode={padding_mode!r} needs numeric "
                                           f"padding, got {padding!r}")
            pads = _ntuple(padding, nd, "padding") if isinstance(padding, int) or \
                len(padding) in (1, nd) else None
            if pads is None:
                if len(padding) != 2 * nd:
                    raise InvalidArgumentError(f"{cls}: padding {padding} must hold 1, {nd} or "
                                               f"{2 * nd} ints with padding_mode")
                pairs = [(padding[2 * i], padding[2 * i + 1]) for i in range(nd)]
            else:
                pairs = [(p, p) for p in pads]
            # F.pad's spatial form lists the last spatial axis first
            self._explicit_pad = [v for b, e in reversed(pairs) for v in (b, e)]
        if transposed:
            shape = [in_channels, out_channels // groups] + self._kernel_size
            default = None
        else:
            shape = [out_channels, in_channels // groups] + self._kernel_size
            fan = math.prod(self._kernel_size) * in_channels
            default = I.Normal(0.0, math.sqrt(2.0 / fan))
        self.weight = self.create_parameter(shape, weight_attr, default_initializer=default)
        self.bias = self.create_parameter([out_channels], bias_attr, is_bias=True)

    def _padded(self, x):
        if self._explicit_pad is None:
            return x, self._padding
        return F.pad(x, self._explicit_pad, mode=self._padding_mode,
                     data_format=self._data_format), 0

    def extra_repr(self) -> str:
        nd = self._nd
        s = f"{self._in_channels}, {self._out_channels}, kernel_size={self._kernel_size}"
        if self._stride != [1] * nd:
            s += f", stride={self._stride}"
        if self._padding != 0:
            s += f", padding={self._padding}"
        if self._padding_mode != "zeros":
            s += f", padding_mode={self._padding_mode}"
        if self._output_padding != 0:
            s += f", output_padding={self._output_padding}"
        if self._dilation != [1] * nd:
            s += f", dilation={self._dilation}"
        if self._groups != 1:
            s += f", groups={self._groups}"
        if self._data_format != self._formats[0]:
            s += f", data_format={self._data_format}"
        return s


class Conv1D(_ConvNd):
    """1-D convolution over a ``[N, C_in, L]`` input (``NCL``; ``NLC`` with
    ``data_format``).

    Each output channel is the sum over its group's input channels of a cross-correlation
    with a learnt kernel, plus a bias. The weight has the shape
    ``[out_channels, in_channels / groups, *kernel_size]`` and starts from
    ``Normal(0, sqrt(2 / (in_channels * prod(kernel_size))))``; the bias starts at zero.

    Args:
        in_channels (int): the number of input channels.
        out_channels (int): the number of output channels.
        kernel_size (int|list|tuple): the kernel size, one int for all spatial axes.
        stride (int|list|tuple, optional): the stride. Default: 1.
        padding (int|list|tuple|str, optional): zero padding: an int, one per spatial axis,
            a (begin, end) pair per axis, or ``"SAME"``/``"VALID"``. Default: 0.
        dilation (int|list|tuple, optional): the spacing of kernel elements. Default: 1.
        groups (int, optional): the number of channel groups; must divide both channel
            counts. Default: 1.
        padding_mode (str, optional): ``"zeros"``, ``"reflect"``, ``"replicate"`` or
            ``"circular"``. Default: "zeros".
        weight_attr (ParamAttr, optional): attributes of the weight. Default: None.
        bias_attr (ParamAttr|bool, optional): attributes of the bias; False for no bias.
            Default: None.
        data_format (str, optional): ``"NCL"`` or ``"NLC"``. Default: "NCL".

    Shape:
        - input: ``[N, C_in, L]``.
        - output: ``[N, C_out, L_out]`` with, per spatial axis,
          ``out = (in + pad_begin + pad_end - dilation * (kernel - 1) - 1) // stride + 1``.

    Examples:
        >>> import fw
        >>> conv = fw.nn.Conv1D(3, 8, kernel_size=3, padding=1)
        >>> conv.weight.shape
        [8, 3, 3]
        >>> conv(fw.ones([4, 3, 10])).shape
        [4, 8, 10]
    """

    _nd, _formats = 1, ("NCL", "NLC")

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1,
                 groups=1, padding_mode="zeros", weight_attr=None, bias_attr=None,
                 data_format="NCL"):
        super().__init__(in_channels, out_channels, kernel_size, False, stride, padding,
                         padding_mode, 0, dilation, groups, weight_attr, bias_attr, data_format)

    def forward(self, x):
        x, pad = self._padded(x)
        return F.conv1d(x, self.weight, self.bias, self._stride, pad, self._dilation,
                        self._groups, self._data_format)


class Conv2D(_ConvNd):
    """2-D convolution over a ``[N, C_in, H, W]`` input (``NCHW``; ``NHWC`` with
    ``data_format``).

    Each output channel is the sum over its group's input channels of a cross-correlation
    with a learnt kernel, plus a bias. The weight has the shape
    ``[out_channels, in_channels / groups, *kernel_size]`` and starts from
    ``Normal(0, sqrt(2 / (in_channels * prod(kernel_size))))``; the bias starts at zero.

    Args:
        in_channels (int): the number of input channels.
        out_channels (int): the number of output channels.
        kernel_size (int|list|tuple): the kernel size, one int for all spatial axes.
        stride (int|list|tuple, optional): the stride. Default: 1.
        padding (int|list|tuple|str, optional): zero padding: an int, one per spatial axis,
            a (begin, end) pair per axis, or ``"SAME"``/``"VALID"``. Default: 0.
        dilation (int|list|tuple, optional): the spacing of kernel elements. Default: 1.
        groups (int, optional): the number of channel groups; must divide both channel
            counts. Default: 1.
        padding_mode (str, optional): ``"zeros"``, ``"reflect"``, ``"replicate"`` or
            ``"circular"``. Default: "zeros".
        weight_attr (ParamAttr, optional): attributes of the weight. Default: None.
        bias_attr (ParamAttr|bool, optional): attributes of the bias; False for no bias.
            Default: None.
        data_format (str, optional): ``"NCHW"`` or ``"NHWC"``. Default: "NCHW".

    Shape:
        - input: ``[N, C_in, H, W]``.
        - output: ``[N, C_out, H_out, W_out]`` with, per spatial axis,
          ``out = (in + pad_begin + pad_end - dilation * (kernel - 1) - 1) // stride + 1``.

    Examples:
        >>> import fw
        >>> conv = fw.nn.Conv2D(3, 16, kernel_size=3, stride=2, padding=1)
        >>> conv.weight.shape
        [16, 3, 3, 3]
        >>> conv(fw.ones([2, 3, 32, 32])).shape
        [2, 16, 16, 16]
    """

    _nd, _formats = 2, ("NCHW", "NHWC")

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1,
                 groups=1, padding_mode="zeros", weight_attr=None, bias_attr=None,
                 data_format="NCHW"):
        super().__init__(in_channels, out_channels, kernel_size, False, stride, padding,
                         padding_mode, 0, dilation, groups, weight_attr, bias_attr, data_format)

    def forward(self, x):
        x, pad = self._padded(x)
        return F.conv2d(x, self.weight, self.bias, self._stride, pad, self._dilation,
                        self._groups, self._data_format)


class Conv3D(_ConvNd):
    """3-D convolution over a ``[N, C_in, D, H, W]`` input (``NCDHW``; ``NDHWC`` with
    ``data_format``).

    Each output channel is the sum over its group's input channels of a cross-correlation
    with a learnt kernel, plus a bias. The weight has the shape
    ``[out_channels, in_channels / groups, *kernel_size]`` and starts from
    ``Normal(0, sqrt(2 / (in_channels * prod(kernel_size))))``; the bias starts at zero.

    Args:
        in_channels (int): the number of input channels.
        out_channels (int): the number of output channels.
        kernel_size (int|list|tuple): the kernel size, one int for all spatial axes.
        stride (int|list|tuple, optional): the stride. Default: 1.
        padding (int|list|tuple|str, optional): zero padding: an int, one per spatial axis,
            a (begin, end) pair per axis, or ``"SAME"``/``"VALID"``. Default: 0.
        dilation (int|list|tuple, optional): the spacing of kernel elements. Default: 1.
        groups (int, optional): the number of channel groups; must divide both channel
            counts. Default: 1.
        padding_mode (str, optional): ``"zeros"``, ``"reflect"``, ``"replicate"`` or
            ``"circular"``. Default: "zeros".
        weight_attr (ParamAttr, optional): attributes of the weight. Default: None.
        bias_attr (ParamAttr|bool, optional): attributes of the bias; False for no bias.
            Default: None.
        data_format (str, optional): ``"NCDHW"`` or ``"NDHWC"``. Default: "NCDHW".

    Shape:
        - input: ``[N, C_in, D, H, W]``.
        - output: ``[N, C_out, D_out, H_out, W_out]`` with, per spatial axis,
          ``out = (in + pad_begin + pad_end - dilation * (kernel - 1) - 1) // stride + 1``.

    Examples:
        >>> import fw
        >>> conv = fw.nn.Conv3D(2, 4, kernel_size=3)
        >>> conv.weight.shape
        [4, 2, 3, 3, 3]
        >>> conv(fw.ones([1, 2, 4, 8, 8])).shape
        [1, 4, 2, 6, 6]
    """

    _nd, _formats = 3, ("NCDHW", "NDHWC")

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1,
                 groups=1, padding_mode="zeros", weight_attr=None, bias_attr=None,
                 data_format="NCDHW"):
        super().__init__(in_channels, out_channels, kernel_size, False, stride, padding,
                         padding_mode, 0, dilation, groups, weight_attr, bias_attr, data_format)

    def forward(self, x):
        x, pad = self._padded(x)
        return F.conv3d(x, self.weight, self.bias, self._stride, pad, self._dilation,
                        self._groups, self._data_format)


class Conv1DTranspose(_ConvNd):
    """1-D transposed convolution (the gradient of `Conv1D` with respect to its input),
    often used to upsample.

    The weight has the shape ``[in_channels, out_channels / groups, *kernel_size]``
    (Xavier-uniform initialisation); the bias starts at zero. ``forward(x,
    output_size=None)``: ``output_size`` picks one of the valid output sizes when the
    stride makes several possible.

    Args:
        in_channels (int): the number of input channels.
        out_channels (int): the number of output channels.
        kernel_size (int|list|tuple): the kernel size.
        stride (int|list|tuple, optional): the stride. Default: 1.
        padding (int|list|tuple|str, optional): the padding removed from the output.
            Default: 0.
        output_padding (int|list|tuple, optional): extra size added to one side of the
            output, less than the stride or the dilation. Default: 0.
        groups (int, optional): the number of channel groups. Default: 1.
        dilation (int|list|tuple, optional): the spacing of kernel elements. Default: 1.
        weight_attr (ParamAttr, optional): attributes of the weight. Default: None.
        bias_attr (ParamAttr|bool, optional): attributes of the bias; False for no bias.
            Default: None.
        data_format (str, optional): ``"NCL"`` or ``"NLC"``. Default: "NCL".

    Shape:
        - input: ``[N, C_in, L]``.
        - output: ``[N, C_out, ...]`` with, per spatial axis,
          ``out = (in - 1) * stride - pad_begin - pad_end + dilation * (kernel - 1)
          + output_padding + 1``.

    Examples:
        >>> import fw
        >>> deconv = fw.nn.Conv1DTranspose(8, 3, kernel_size=2, stride=2)
        >>> deconv.weight.shape
        [8, 3, 2]
        >>> deconv(fw.ones([4, 8, 5])).shape
        [4, 3, 10]
    """

    _nd, _formats = 1, ("NCL", "NLC")

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 output_padding=0, groups=1, dilation=1, weight_attr=None, bias_attr=None,
                 data_format="NCL"):
        super().__init__(in_channels, out_channels, kernel_size, True, stride, padding, "zeros",
                         output_padding, dilation, groups, weight_attr, bias_attr, data_format)

    def forward(self, x, output_size=None):
        return F.conv1d_transpose(x, self.weight, self.bias, self._stride, self._padding,
                                  self._output_padding, self._groups, self._dilation,
                                  output_size, self._data_format)


class Conv2DTranspose(_ConvNd):
    """2-D transposed convolution (the gradient of `Conv2D` with respect to its input),
    often used to upsample.

    The weight has the shape ``[in_channels, out_channels / groups, *kernel_size]``
    (Xavier-uniform initialisation); the bias starts at zero. ``forward(x,
    output_size=None)``: ``output_size`` picks one of the valid output sizes when the
    stride makes several possible.

    Args:
        in_channels (int): the number of input channels.
        out_channels (int): the number of output channels.
        kernel_size (int|list|tuple): the kernel size.
        stride (int|list|tuple, optional): the stride. Default: 1.
        padding (int|list|tuple|str, optional): the padding removed from the output.
            Default: 0.
        output_padding (int|list|tuple, optional): extra size added to one side of the
            output, less than the stride or the dilation. Default: 0.
        groups (int, optional): the number of channel groups. Default: 1.
        dilation (int|list|tuple, optional): the spacing of kernel elements. Default: 1.
        weight_attr (ParamAttr, optional): attributes of the weight. Default: None.
        bias_attr (ParamAttr|bool, optional): attributes of the bias; False for no bias.
            Default: None.
        data_format (str, optional): ``"NCHW"`` or ``"NHWC"``. Default: "NCHW".

    Shape:
        - input: ``[N, C_in, H, W]``.
        - output: ``[N, C_out, ...]`` with, per spatial axis,
          ``out = (in - 1) * stride - pad_begin - pad_end + dilation * (kernel - 1)
          + output_padding + 1``.

    Examples:
        >>> import fw
        >>> deconv = fw.nn.Conv2DTranspose(16, 4, kernel_size=4, stride=2, padding=1)
        >>> deconv.weight.shape
        [16, 4, 4, 4]
        >>> deconv(fw.ones([2, 16, 8, 8])).shape
        [2, 4, 16, 16]
    """

    _nd, _formats = 2, ("NCHW", "NHWC")

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 output_padding=0, dilation=1, groups=1, weight_attr=None, bias_attr=None,
                 data_format="NCHW"):
        super().__init__(in_channels, out_channels, kernel_size, True, stride, padding, "zeros",
                         output_padding, dilation, groups, weight_attr, bias_attr, data_format)

    def forward(self, x, output_size=None):
        return F.conv2d_transpose(x, self.weight, self.bias, self._stride, self._padding,
                                  self._output_padding, self._dilation, self._groups,
                                  output_size, self._data_format)


class Conv3DTranspose(_ConvNd):
    """3-D transposed convolution (the gradient of `Conv3D` with respect to its input),
    often used to upsample.

    The weight has the shape ``[in_channels, out_channels / groups, *kernel_size]``
    (Xavier-uniform initialisation); the bias starts at zero. ``forward(x,
    output_size=None)``: ``output_size`` picks one of the valid output sizes when the
    stride makes several possible.

    Args:
        in_channels (int): the number of input channels.
        out_channels (int): the number of output channels.
        kernel_size (int|list|tuple): the kernel size.
        stride (int|list|tuple, optional): the stride. Default: 1.
        padding (int|list|tuple|str, optional): the padding removed from the output.
            Default: 0.
        output_padding (int|list|tuple, optional): extra size added to one side of the
            output, less than the stride or the dilation. Default: 0.
        groups (int, optional): the number of channel groups. Default: 1.
        dilation (int|list|tuple, optional): the spacing of kernel elements. Default: 1.
        weight_attr (ParamAttr, optional): attributes of the weight. Default: None.
        bias_attr (ParamAttr|bool, optional): attributes of the bias; False for no bias.
            Default: None.
        data_format (str, optional): ``"NCDHW"`` or ``"NDHWC"``. Default: "NCDHW".

    Shape:
        - input: ``[N, C_in, D, H, W]``.
        - output: ``[N, C_out, ...]`` with, per spatial axis,
          ``out = (in - 1) * stride - pad_begin - pad_end + dilation * (kernel - 1)
          + output_padding + 1``.

    Examples:
        >>> import fw
        >>> deconv = fw.nn.Conv3DTranspose(4, 2, kernel_size=2, stride=2)
        >>> deconv.weight.shape
        [4, 2, 2, 2, 2]
        >>> deconv(fw.ones([1, 4, 2, 3, 3])).shape
        [1, 2, 4, 6, 6]
    """

    _nd, _formats = 3, ("NCDHW", "NDHWC")

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 output_padding=0, dilation=1, groups=1, weight_attr=None, bias_attr=None,
                 data_format="NCDHW"):
        super().__init__(in_channels, out_channels, kernel_size, True, stride, padding, "zeros",
                         output_padding, dilation, groups, weight_attr, bias_attr, data_format)

    def forward(self, x, output_size=None):
        return F.conv3d_transpose(x, self.weight, self.bias, self._stride, self._padding,
                                  self._output_padding, self._groups, self._dilation,
                                  output_size, self._data_format)
