"""Layers of ``paddle.sparse.nn``: activations, Conv3D/SubmConv3D, BatchNorm."""

from __future__ import annotations

import numpy as np

from fw.nn import BatchNorm1D, Layer
from fw.nn.initializer import Normal
from fw.sparse.nn import functional as F

__all__ = ["BatchNorm", "Conv2D", "Conv3D", "LeakyReLU", "MaxPool3D", "ReLU", "ReLU6",
           "Softmax", "SubmConv2D", "SubmConv3D"]


class ReLU(Layer):
    """Sparse ReLU layer: max(x, 0) on the stored values.

    Args:
        name (str, optional): unused.

    Examples:
        >>> import fw
        >>> x = fw.sparse.sparse_coo_tensor([[0, 2]], [-1.0, 2.0], [3])
        >>> fw.sparse.nn.ReLU()(x).values().numpy().tolist()
        [0.0, 2.0]
    """

    def __init__(self, name=None):
        super().__init__()

    def forward(self, x):
        return F.relu(x)


class ReLU6(Layer):
    """Sparse ReLU6 layer: min(max(x, 0), 6) on the stored values.

    Args:
        name (str, optional): unused.

    Examples:
        >>> import fw
        >>> x = fw.sparse.sparse_coo_tensor([[0, 2]], [-1.0, 8.0], [3])
        >>> fw.sparse.nn.ReLU6()(x).values().numpy().tolist()
        [0.0, 6.0]
    """

    def __init__(self, name=None):
        super().__init__()

    def forward(self, x):
        return F.relu6(x)


class LeakyReLU(Layer):
    """Sparse LeakyReLU layer on the stored values.

    Args:
        negative_slope (float, optional): slope for negative values. Default 0.01.
        name (str, optional): unused.

    Examples:
        >>> import fw
        >>> x = fw.sparse.sparse_coo_tensor([[0, 2]], [-1.0, 2.0], [3])
        >>> fw.sparse.nn.LeakyReLU(0.5)(x).values().numpy().tolist()
        [-0.5, 2.0]
    """

    def __init__(self, negative_slope=0.01, name=None):
        super().__init__()
        self._negative_slope = negative_slope

    def forward(self, x):
        return F.leaky_relu(x, self._negative_slope)

    def extra_repr(self):
        return f"negative_slope={self._negative_slope}"


class Softmax(Layer):
    """Sparse softmax layer over the stored entries of each row.

    Args:
        axis (int, optional): must be -1. Default -1.
        name (str, optional): unused.

    Examples:
        >>> import fw
        >>> x = fw.sparse.sparse_csr_tensor([0, 2], [0, 1], [0.0, 0.0], [1, 2])
        >>> fw.sparse.nn.Softmax()(x).values().numpy().tolist()
        [0.5, 0.5]
    """

    def __init__(self, axis=-1, name=None):
        super().__init__()
        if axis != -1:
            raise ValueError(f"fw.sparse.nn.Softmax: only axis=-1 is supported, got {axis}")
        self._axis = axis

    def forward(self, x):
        return F.softmax(x, self._axis)


class _Conv3D(Layer):
    _subm = False
    _nsp = 3

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1,
                 groups=1, padding_mode="zeros", weight_attr=None, bias_attr=None,
                 data_format="NDHWC"):
        super().__init__()
        if padding_mode != "zeros":
            raise ValueError(f"{type(self).__name__}: only padding_mode='zeros', got "
                             f"{padding_mode!r}")
        ks = [kernel_size] * self._nsp if isinstance(kernel_size, int) else list(kernel_size)
        self._in_channels, self._out_channels = in_channels, out_channels
        self._stride, self._padding, self._dilation = stride, padding, dilation
        self._groups, self._data_format = groups, data_format
        # Paddle's default conv init: Normal(0, sqrt(2 / (k^3 * C_in)))
        std = (2.0 / (int(np.prod(ks)) * in_channels)) ** 0.5
        self.weight = self.create_parameter(ks + [in_channels, out_channels], attr=weight_attr,
                                            default_initializer=Normal(0.0, std))
        self.bias = self.create_parameter([out_channels], attr=bias_attr, is_bias=True)

    def forward(self, x):
        fn = {(3, False): F.conv3d, (3, True): F.subm_conv3d, (2, False): F.conv2d,
              (2, True): F.subm_conv2d}[(self._nsp, self._subm)]
        return fn(x, self.weight, self.bias, self._stride, self._padding, self._dilation,
                  self._groups, self._data_format)

    def extra_repr(self):
        return (f"{self._in_channels}, {self._out_channels}, kernel_size="
                f"{list(self.weight.shape[:self._nsp])}, stride={self._stride}, "
                f"padding={self._padding}")


class Conv3D(_Conv3D):
    """Sparse 3-D convolution layer on NDHWC COO tensors (weight ``[kD, kH, kW, C_in,
    C_out]``).

    Args:
        in_channels (int): input channels.
        out_channels (int): output channels.
        kernel_size (int|list): kernel size.
        stride (int|list, optional): Default 1.
        padding (int|list, optional): Default 0.
        dilation (int|list, optional): Default 1.
        groups (int, optional): must be 1. Default 1.
        padding_mode (str, optional): must be "zeros".
        weight_attr (ParamAttr, optional): weight attribute.
        bias_attr (ParamAttr|bool, optional): bias attribute; False for none.
        data_format (str, optional): must be "NDHWC".

    Examples:
        >>> import fw
        >>> x = fw.sparse.sparse_coo_tensor([[0], [1], [1], [1]], [[1.0, 2.0]], [1, 3, 3, 3, 2])
        >>> fw.sparse.nn.Conv3D(2, 4, 3, padding=1)(x).shape
        [1, 3, 3, 3, 4]
    """


class SubmConv3D(_Conv3D):
    """Submanifold sparse 3-D convolution layer: outputs at the input's sites only.

    Args:
        in_channels (int): input channels.
        out_channels (int): output channels.
        kernel_size (int|list): kernel size (odd).
        stride (int|list, optional): must be 1.
        padding (int|list, optional): Default 0.
        dilation (int|list, optional): Default 1.
        groups (int, optional): must be 1. Default 1.
        padding_mode (str, optional): must be "zeros".
        key (str, optional): Paddle's rulebook cache key; unused.
        weight_attr (ParamAttr, optional): weight attribute.
        bias_attr (ParamAttr|bool, optional): bias attribute; False for none.
        data_format (str, optional): must be "NDHWC".
        backend (str, optional): Paddle's GPU kernel choice; unused.

    Examples:
        >>> import fw
        >>> x = fw.sparse.sparse_coo_tensor([[0], [1], [1], [1]], [[1.0, 2.0]], [1, 3, 3, 3, 2])
        >>> fw.sparse.nn.SubmConv3D(2, 4, 3, padding=1)(x).nnz()
        1
    """

    _subm = True

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1,
                 groups=1, padding_mode="zeros", key=None, weight_attr=None, bias_attr=None,
                 data_format="NDHWC", backend=None):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, padding_mode, weight_attr, bias_attr, data_format)


class Conv2D(_Conv3D):
    """Sparse 2-D convolution layer on NHWC COO tensors (weight ``[kH, kW, C_in, C_out]``).

    Args:
        in_channels (int): input channels.
        out_channels (int): output channels.
        kernel_size (int|list): kernel size.
        stride (int|list, optional): Default 1.
        padding (int|list, optional): Default 0.
        dilation (int|list, optional): Default 1.
        groups (int, optional): must be 1. Default 1.
        padding_mode (str, optional): must be "zeros".
        weight_attr (ParamAttr, optional): weight attribute.
        bias_attr (ParamAttr|bool, optional): bias attribute; False for none.
        data_format (str, optional): must be "NHWC".

    Examples:
        >>> import fw
        >>> x = fw.sparse.sparse_coo_tensor([[0], [1], [1]], [[1.0, 2.0]], [1, 3, 3, 2])
        >>> fw.sparse.nn.Conv2D(2, 4, 3, padding=1)(x).shape
        [1, 3, 3, 4]
    """

    _nsp = 2

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1,
                 groups=1, padding_mode="zeros", weight_attr=None, bias_attr=None,
                 data_format="NHWC"):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, padding_mode, weight_attr, bias_attr, data_format)


class SubmConv2D(_Conv3D):
    """Submanifold sparse 2-D convolution layer: outputs at the input's sites only.

    Args:
        in_channels (int): input channels.
        out_channels (int): output channels.
        kernel_size (int|list): kernel size (odd).
        stride (int|list, optional): must be 1.
        padding (int|list, optional): Default 0.
        dilation (int|list, optional): Default 1.
        groups (int, optional): must be 1. Default 1.
        padding_mode (str, optional): must be "zeros".
        key (str, optional): unused.
        weight_attr (ParamAttr, optional): weight attribute.
        bias_attr (ParamAttr|bool, optional): bias attribute; False for none.
        data_format (str, optional): must be "NHWC".
        backend (str, optional): unused.

    Examples:
        >>> import fw
        >>> x = fw.sparse.sparse_coo_tensor([[0], [1], [1]], [[1.0, 2.0]], [1, 3, 3, 2])
        >>> fw.sparse.nn.SubmConv2D(2, 4, 3, padding=1)(x).nnz()
        1
    """

    _nsp = 2
    _subm = True

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1,
                 groups=1, padding_mode="zeros", key=None, weight_attr=None, bias_attr=None,
                 data_format="NHWC", backend=None):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, padding_mode, weight_attr, bias_attr, data_format)


class BatchNorm(BatchNorm1D):
    """Batch normalisation of the channels (the values' last axis) of an NDHWC COO tensor:
    statistics over the stored entries only, as Paddle's sparse BatchNorm.

    Args:
        num_features (int): channels.
        momentum (float, optional): running-statistics momentum. Default 0.9.
        epsilon (float, optional): Default 1e-5.
        weight_attr (ParamAttr, optional): scale attribute.
        bias_attr (ParamAttr, optional): shift attribute.
        data_format (str, optional): "NDHWC" or "NHWC". Default "NDHWC".
        use_global_stats (bool, optional): use the running statistics. Default None.
        name (str, optional): unused.

    Examples:
        >>> import fw
        >>> x = fw.sparse.sparse_coo_tensor([[0, 0], [0, 1], [0, 0], [0, 0]],
        ...                                 [[1.0], [3.0]], [1, 2, 1, 1, 1])
        >>> [round(v, 3) for v in fw.sparse.nn.BatchNorm(1)(x).values().numpy().ravel().tolist()]
        [-1.0, 1.0]
    """

    def __init__(self, num_features, momentum=0.9, epsilon=1e-05, weight_attr=None,
                 bias_attr=None, data_format="NDHWC", use_global_stats=None, name=None):
        if data_format not in ("NDHWC", "NHWC"):
            raise ValueError(f"fw.sparse.nn.BatchNorm: data_format must be NDHWC or NHWC, got "
                             f"{data_format!r}")
        super().__init__(num_features, momentum, epsilon, weight_attr, bias_attr, "NC",
                         use_global_stats)

    def forward(self, x):
        if not (hasattr(x, "is_sparse") and x.is_sparse()) or x.values().ndim != 2:
            raise TypeError("fw.sparse.nn.BatchNorm: x must be a sparse tensor with values "
                            "[nnz, C] (an NDHWC COO tensor)")
        return x._with_values(super().forward(x.values()))


class MaxPool3D(Layer):
    """Sparse 3-D max pooling layer on NDHWC COO tensors (see
    :func:`fw.sparse.nn.functional.max_pool3d`).

    Args:
        kernel_size (int|list): window size.
        stride (int|list, optional): Default: kernel_size.
        padding (int|list, optional): Default 0.
        return_mask (bool, optional): must be False.
        ceil_mode (bool, optional): must be False.
        data_format (str, optional): must be "NDHWC".
        name (str, optional): unused.

    Examples:
        >>> import fw
        >>> x = fw.sparse.sparse_coo_tensor([[0], [1], [1], [1]], [[2.0]], [1, 2, 2, 2, 1])
        >>> fw.sparse.nn.MaxPool3D(2)(x).shape
        [1, 1, 1, 1, 1]
    """

    def __init__(self, kernel_size, stride=None, padding=0, return_mask=False, ceil_mode=False,
                 data_format="NDHWC", name=None):
        super().__init__()
        if return_mask:
            raise ValueError("fw.sparse.nn.MaxPool3D: return_mask=True is not supported")
        self._kernel_size, self._stride, self._padding = kernel_size, stride, padding
        self._ceil_mode, self._data_format = ceil_mode, data_format

    def forward(self, x):
        return F.max_pool3d(x, self._kernel_size, self._stride, self._padding, self._ceil_mode,
                            self._data_format)
