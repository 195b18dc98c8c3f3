"""Normalization layers.

Batch norm layers keep their running statistics in the persistable buffers
``_mean`` and ``_variance`` (Paddle's state-dict names). In training mode the
batch statistics normalise the input and the buffers receive the op's updated
running statistics (``momentum * running + (1 - momentum) * batch``); in eval
mode, or with ``use_global_stats=True``, the running statistics normalise and
nothing is updated.
"""

from __future__ import annotations

import numpy as np

import fw
from fw.core.errors import InvalidArgumentError
from fw.core.ir import no_building
from fw.nn import functional as F
from fw.nn import initializer as I
from fw.nn.layer.layers import Layer

__all__ = ["BatchNorm", "BatchNorm1D", "BatchNorm2D", "BatchNorm3D", "SyncBatchNorm",
           "LayerNorm", "GroupNorm", "InstanceNorm1D", "InstanceNorm2D", "InstanceNorm3D",
           "LocalResponseNorm", "RMSNorm", "SpectralNorm"]


def _affine(layer, shape, weight_attr, bias_attr):
    """Create weight (ones) and bias (zeros); an attr of False gives a frozen parameter
    (Paddle's batch norm keeps them, with stop_gradient=True)."""
    w = layer.create_parameter(shape, None if weight_attr is False else weight_attr,
                               default_initializer=I.Constant(1.0))
    b = layer.create_parameter(shape, None if bias_attr is False else bias_attr,
                               is_bias=True, default_initializer=I.Constant(0.0))
    if weight_attr is False:
        w.stop_gradient = True
    if bias_attr is False:
        b.stop_gradient = True
    return w, b


class _BatchNormBase(Layer):
    _formats = ("NCHW", "NHWC")
    _ranks = (4,)

    def __init__(self, num_features, momentum=0.9, epsilon=1e-05, weight_attr=None,
                 bias_attr=None, data_format="NCHW", use_global_stats=None, name=None):
        super().__init__()
        if data_format not in self._formats:
            raise InvalidArgumentError(f"{type(self).__name__}: 'data_format' must be one of "
                                       f"{list(self._formats)}, got {data_format!r}")
        self._num_features = num_features
        self._momentum = momentum
        self._epsilon = epsilon
        self._data_format = data_format
        self._use_global_stats = use_global_stats
        self._name = name
        self.weight, self.bias = _affine(self, [num_features], weight_attr, bias_attr)
        dt = self._dtype
        with no_building():  # state is created eagerly, also inside a traced function
            self.register_buffer("_mean", fw.zeros([num_features], dtype=dt))
            self.register_buffer("_variance", fw.ones([num_features], dtype=dt))

    def _check_input(self, x):
        if len(x.shape) not in self._ranks:
            raise InvalidArgumentError(f"{type(self).__name__}: expected a "
                                       f"{' or '.join(map(str, self._ranks))}-D input, got shape "
                                       f"{list(x.shape)}")

    def forward(self, input):  # noqa: A002
        self._check_input(input)
        return F.batch_norm(input, self._mean, self._variance, self.weight, self.bias,
                            training=self.training, momentum=self._momentum,
                            epsilon=self._epsilon, data_format=self._data_format,
                            use_global_stats=self._use_global_stats)

    def extra_repr(self) -> str:
        s = (f"num_features={self._num_features}, momentum={self._momentum}, "
             f"epsilon={self._epsilon}")
        if self._data_format != self._formats[0]:
            s += f", data_format={self._data_format}"
        if self._use_global_stats is not None:
            s += f", use_global_stats={self._use_global_stats}"
        return s


class BatchNorm1D(_BatchNormBase):
    """Batch normalization of ``[N, C]`` or ``[N, C, L]`` input.

    >>> import fw
    >>> bn = fw.nn.BatchNorm1D(3)
    >>> bn(fw.randn([4, 3])).shape, list(bn.state_dict())
    ([4, 3], ['weight', 'bias', '_mean', '_variance'])
    """

    _formats = ("NCL", "NLC", "NC")
    _ranks = (2, 3)

    def __init__(self, num_features, momentum=0.9, epsilon=1e-05, weight_attr=None,
                 bias_attr=None, data_format="NCL", use_global_stats=None, name=None):
        super().__init__(num_features, momentum, epsilon, weight_attr, bias_attr, data_format,
                         use_global_stats, name)

    def forward(self, input):  # noqa: A002
        self._check_input(input)
        fmt = "NC" if len(input.shape) == 2 else self._data_format
        return F.batch_norm(input, self._mean, self._variance, self.weight, self.bias,
                            training=self.training, momentum=self._momentum,
                            epsilon=self._epsilon, data_format=fmt,
                            use_global_stats=self._use_global_stats)


class BatchNorm2D(_BatchNormBase):
    """Batch normalization of ``[N, C, H, W]`` (or NHWC) input."""


class BatchNorm3D(_BatchNormBase):
    """Batch normalization of ``[N, C, D, H, W]`` (or NDHWC) input."""

    _formats = ("NCDHW", "NDHWC")
    _ranks = (5,)

    def __init__(self, num_features, momentum=0.9, epsilon=1e-05, weight_attr=None,
                 bias_attr=None, data_format="NCDHW", use_global_stats=None, name=None):
        super().__init__(num_features, momentum, epsilon, weight_attr, bias_attr, data_format,
                         use_global_stats, name)


class SyncBatchNorm(_BatchNormBase):
    """Batch normalization whose statistics are synchronised across data-parallel
    processes. On one process (all fw-nn provides; fw-distributed's collectives are not
    used here) it is exactly `BatchNorm2D` for any input rank >= 2."""

    _formats = ("NCHW", "NHWC", "NCL", "NLC", "NC", "NCDHW", "NDHWC")
    _ranks = (2, 3, 4, 5)

    def forward(self, input):  # noqa: A002
        self._check_input(input)
        nd = len(input.shape)
        fmt = {2: "NC", 3: "NCL", 4: "NCHW", 5: "NCDHW"}[nd]
        if self._data_format[-1] == "C" and nd > 2:
            fmt = fmt[0] + fmt[2:] + "C"
        return F.batch_norm(input, self._mean, self._variance, self.weight, self.bias,
                            training=self.training, momentum=self._momentum,
                            epsilon=self._epsilon, data_format=fmt,
                            use_global_stats=self._use_global_stats)

    @classmethod
    def convert_sync_batchnorm(cls, layer):
        """Replace every batch norm layer in `layer` (recursively) by a SyncBatchNorm
        sharing its parameters and buffers; returns the (possibly new) layer."""
        out = layer
        if isinstance(layer, _BatchNormBase) and not isinstance(layer, SyncBatchNorm):
            out = cls(layer._num_features, layer._momentum, layer._epsilon,
                      data_format=layer._data_format, name=layer._name)
            out.weight = layer.weight
            out.bias = layer.bias
            out._buffers["_mean"] = layer._mean
            out._buffers["_variance"] = layer._variance
        for name, sub in list(layer._sub_layers.items()):
            if sub is not None:
                out._sub_layers[name] = cls.convert_sync_batchnorm(sub)
        return out


class BatchNorm(_BatchNormBase):
    """Paddle's older batch norm layer (``num_channels``, ``act``, ``is_test``,
    ``data_layout``, ``param_attr``); any input rank >= 2."""

    _formats = ("NCHW", "NHWC", "NCL", "NLC", "NC", "NCDHW", "NDHWC")
    _ranks = (2, 3, 4, 5)

    def __init__(self, num_channels, act=None, is_test=False, momentum=0.9, epsilon=1e-05,
                 param_attr=None, bias_attr=None, dtype="float32", data_layout="NCHW",
                 in_place=False, moving_mean_name=None, moving_variance_name=None,
                 do_model_average_for_mean_and_var=True, use_global_stats=False,
                 trainable_statistics=False):
        super().__init__(num_channels, momentum, epsilon, param_attr, bias_attr, data_layout,
                         use_global_stats)
        self._act = act
        self._is_test = is_test
        self._trainable_statistics = trainable_statistics
        if moving_mean_name:
            self._mean.name = moving_mean_name
        if moving_variance_name:
            self._variance.name = moving_variance_name

    def forward(self, input):  # noqa: A002
        self._check_input(input)
        nd = len(input.shape)
        fmt = {2: "NC", 3: "NCL", 4: "NCHW", 5: "NCDHW"}[nd]
        if self._data_format[-1] == "C" and nd > 2:
            fmt = fmt[0] + fmt[2:] + "C"
        training = (self.training and not self._is_test) or self._trainable_statistics
        out = F.batch_norm(input, self._mean, self._variance, self.weight, self.bias,
                           training=training, momentum=self._momentum, epsilon=self._epsilon,
                           data_format=fmt, use_global_stats=self._use_global_stats)
        if self._act:
            out = getattr(F, self._act)(out)
        return out


class LayerNorm(Layer):
    """Layer normalization over the trailing `normalized_shape` axes, with an affine
    weight (ones) and bias (zeros); an attr of False drops that parameter."""

    def __init__(self, normalized_shape, epsilon=1e-05, weight_attr=None, bias_attr=None,
                 name=None):
        super().__init__()
        if isinstance(normalized_shape, int):
            normalized_shape = [normalized_shape]
        self._normalized_shape = list(normalized_shape)
        self._epsilon = epsilon
        self._name = name
        shape = [int(np.prod(self._normalized_shape))]
        self.weight = None if weight_attr is False else self.create_parameter(
            shape, weight_attr, default_initializer=I.Constant(1.0))
        self.bias = None if bias_attr is False else self.create_parameter(
            shape, bias_attr, is_bias=True)

    def forward(self, input):  # noqa: A002
        return F.layer_norm(input, self._normalized_shape, self.weight, self.bias,
                            self._epsilon)

    def extra_repr(self) -> str:
        return f"normalized_shape={self._normalized_shape}, epsilon={self._epsilon}"


class RMSNorm(Layer):
    """Root-mean-square normalization over the trailing `normalized_shape` axes with a
    learnt scale (ones)."""

    def __init__(self, normalized_shape, epsilon=1e-05, elementwise_affine=True,
                 weight_attr=None, name=None):
        super().__init__()
        if isinstance(normalized_shape, int):
            normalized_shape = [normalized_shape]
        self._normalized_shape = list(normalized_shape)
        self._epsilon = epsilon
        self.weight = None
        if elementwise_affine and weight_attr is not False:
            self.weight = self.create_parameter(self._normalized_shape, weight_attr,
                                                default_initializer=I.Constant(1.0))

    def forward(self, x):
        return F.rms_norm(x, self._normalized_shape, self.weight, self._epsilon)

    def extra_repr(self) -> str:
        return f"normalized_shape={self._normalized_shape}, epsilon={self._epsilon}"


class GroupNorm(Layer):
    """Group normalization: channels in `num_groups` groups, each normalised with the
    spatial axes per sample; affine weight/bias ``[num_channels]``."""

    def __init__(self, num_groups, num_channels, epsilon=1e-05, weight_attr=None,
                 bias_attr=None, data_format="NCHW", name=None):
        super().__init__()
        if num_groups <= 0 or num_channels % num_groups:
            raise InvalidArgumentError(f"GroupNorm: num_groups={num_groups} must divide "
                                       f"num_channels={num_channels}")
        self._num_groups = num_groups
        self._num_channels = num_channels
        self._epsilon = epsilon
        self._data_format = data_format
        self.weight = None if weight_attr is False else self.create_parameter(
            [num_channels], weight_attr, default_initializer=I.Constant(1.0))
        self.bias = None if bias_attr is False else self.create_parameter(
            [num_channels], bias_attr, is_bias=True)

    def forward(self, input):  # noqa: A002
        return F.group_norm(input, self._num_groups, self._epsilon, self.weight, self.bias,
                            self._data_format)

    def extra_repr(self) -> str:
        return (f"num_groups={self._num_groups}, num_channels={self._num_channels}, "
                f"epsilon={self._epsilon}")


class _InstanceNormBase(Layer):
    _ranks = (4,)

    def __init__(self, num_features, epsilon=1e-05, momentum=0.9, weight_attr=None,
                 bias_attr=None, data_format="NCHW", name=None):
        super().__init__()
        self._num_features = num_features
        self._epsilon = epsilon
        self._momentum = momentum
        self._data_format = data_format
        self._name = name
        if weight_attr is False or bias_attr is False:
            self.scale = None
            self.bias = None
        else:
            self.scale = self.create_parameter([num_features], weight_attr,
                                               default_initializer=I.Constant(1.0))
            self.bias = self.create_parameter([num_features], bias_attr, is_bias=True)

    def forward(self, input):  # noqa: A002
        if len(input.shape) not in self._ranks:
            raise InvalidArgumentError(f"{type(self).__name__}: expected a "
                                       f"{' or '.join(map(str, self._ranks))}-D input, got shape "
                                       f"{list(input.shape)}")
        return F.instance_norm(input, weight=self.scale, bias=self.bias, eps=self._epsilon,
                               data_format=self._data_format)

    def extra_repr(self) -> str:
        return f"num_features={self._num_features}, epsilon={self._epsilon}"


class InstanceNorm1D(_InstanceNormBase):
    """Instance normalization of ``[N, C, L]`` input (parameters ``scale`` and ``bias``)."""

    _ranks = (2, 3)

    def __init__(self, num_features, epsilon=1e-05, momentum=0.9, weight_attr=None,
                 bias_attr=None, data_format="NCL", name=None):
        super().__init__(num_features, epsilon, momentum, weight_attr, bias_attr, data_format,
                         name)


class InstanceNorm2D(_InstanceNormBase):
    """Instance normalization of ``[N, C, H, W]`` input."""


class InstanceNorm3D(_InstanceNormBase):
    """Instance normalization of ``[N, C, D, H, W]`` input."""

    _ranks = (5,)

    def __init__(self, num_features, epsilon=1e-05, momentum=0.9, weight_attr=None,
                 bias_attr=None, data_format="NCDHW", name=None):
        super().__init__(num_features, epsilon, momentum, weight_attr, bias_attr, data_format,
                         name)


class LocalResponseNorm(Layer):
    """Local response normalization across `size` neighbouring channels."""

    def __init__(self, size, alpha=0.0001, beta=0.75, k=1.0, data_format="NCHW", name=None):
        super().__init__()
        self.size = size
        self.alpha = alpha
        self.beta = beta
        self.k = k
        self.data_format = data_format

    def forward(self, input):  # noqa: A002
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k,
                                     self.data_format)

    def extra_repr(self) -> str:
        return f"size={self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


class SpectralNorm(Layer):
    """``forward(weight)`` returns weight / sigma, sigma its largest singular value
    estimated by `power_iters` power iterations on the matrix ``[weight_shape[dim],
    rest]``; the iteration vectors are the buffers ``weight_u``/``weight_v``, updated in
    place on every call."""

    def __init__(self, weight_shape, dim=0, power_iters=1, eps=1e-12, dtype="float32"):
        super().__init__(dtype=dtype)
        self._weight_shape = list(weight_shape)
        self._dim = dim
        self._power_iters = power_iters
        self._eps = eps
        h = self._weight_shape[dim]
        w = int(np.prod(self._weight_shape)) // h
        u = self.create_parameter([h], default_initializer=I.Normal(0.0, 1.0))
        v = self.create_parameter([w], default_initializer=I.Normal(0.0, 1.0))
        self.register_buffer("weight_u", u.detach())
        self.register_buffer("weight_v", v.detach())

    def forward(self, weight):
        from fw.nn.utils.spectral_norm_hook import spectral_normalize

        return spectral_normalize(weight, self.weight_u, self.weight_v, self._dim,
                                  self._power_iters, self._eps)

