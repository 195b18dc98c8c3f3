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
    """Batch normalization of a ``[N, C]`` or ``[N, C, L]`` input.

    Each channel is normalised with its mean and variance over the batch (and spatial)
    axes, then scaled and shifted: ``y = (x - mean) / sqrt(var + epsilon) * weight + bias``.
    In training mode the batch statistics are used and the running statistics (the
    buffers ``_mean`` and ``_variance``) are updated; in evaluation mode the running
    statistics are used and nothing is updated. Note that ``momentum`` weights the *old*
    value (Paddle's convention; PyTorch's momentum is ``1 - momentum``).

    Args:
        num_features (int): the number of channels C.
        momentum (float, optional): the weight of the old running statistics in
            ``running = momentum * running + (1 - momentum) * batch``. Default: 0.9.
        epsilon (float, optional): added to the variance for stability. Default: 1e-05.
        weight_attr (ParamAttr|bool, optional): attributes of the scale ``[C]`` (ones);
            False keeps it fixed at 1 (not trained). Default: None.
        bias_attr (ParamAttr|bool, optional): attributes of the shift ``[C]`` (zeros);
            False keeps it fixed at 0. Default: None.
        data_format (str, optional): ``"NCL"``, ``"NLC"`` or ``"NC"``. Default: "NCL".
        use_global_stats (bool, optional): normalise with the running statistics also in
            training (True), or with the batch statistics also in evaluation (False); None
            follows the mode. Default: None.
        name (str, optional): a name for the layer, shown in its repr. Default: None.

    Shape:
        - input: ``[N, C]`` or ``[N, C, L]``; output: the same shape.

    Examples:
        >>> import fw
        >>> bn = fw.nn.BatchNorm1D(3)
        >>> y = bn(fw.to_tensor([[1.0, 2.0, 3.0], [3.0, 6.0, 9.0]]))
        >>> [round(v, 3) for v in y[:, 0].tolist()]
        [-1.0, 1.0]
        >>> [round(v, 3) for v in bn._mean.tolist()]
        [0.2, 0.4, 0.6]
        >>> list(bn.state_dict())
        ['weight', 'bias', '_mean', '_variance']
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
    """Batch normalization of a ``[N, C, H, W]`` input (``NHWC`` with ``data_format``).

    Each channel is normalised with its mean and variance over the batch (and spatial)
    axes, then scaled and shifted: ``y = (x - mean) / sqrt(var + epsilon) * weight + bias``.
    In training mode the batch statistics are used and the running statistics (the
    buffers ``_mean`` and ``_variance``) are updated; in evaluation mode the running
    statistics are used and nothing is updated. Note that ``momentum`` weights the *old*
    value (Paddle's convention; PyTorch's momentum is ``1 - momentum``).

    Args:
        num_features (int): the number of channels C.
        momentum (float, optional): the weight of the old running statistics in
            ``running = momentum * running + (1 - momentum) * batch``. Default: 0.9.
        epsilon (float, optional): added to the variance for stability. Default: 1e-05.
        weight_attr (ParamAttr|bool, optional): attributes of the scale ``[C]`` (ones);
            False keeps it fixed at 1 (not trained). Default: None.
        bias_attr (ParamAttr|bool, optional): attributes of the shift ``[C]`` (zeros);
            False keeps it fixed at 0. Default: None.
        data_format (str, optional): ``"NCHW"`` or ``"NHWC"``. Default: "NCHW".
        use_global_stats (bool, optional): normalise with the running statistics also in
            training (True), or with the batch statistics also in evaluation (False); None
            follows the mode. Default: None.
        name (str, optional): a name for the layer, shown in its repr. Default: None.

    Shape:
        - input: ``[N, C, H, W]``; output: the same shape.

    Examples:
        >>> import fw
        >>> bn = fw.nn.BatchNorm2D(8)
        >>> y = bn(fw.randn([4, 8, 5, 5]) * 3 + 1)
        >>> abs(float(y.mean())) < 1e-5, round(float(y.std()), 2)
        (True, 1.0)
        >>> _ = bn.eval()
        >>> bn(fw.ones([1, 8, 2, 2])).shape
        [1, 8, 2, 2]
    """


class BatchNorm3D(_BatchNormBase):
    """Batch normalization of a ``[N, C, D, H, W]`` input (``NDHWC`` with ``data_format``).

    Each channel is normalised with its mean and variance over the batch (and spatial)
    axes, then scaled and shifted: ``y = (x - mean) / sqrt(var + epsilon) * weight + bias``.
    In training mode the batch statistics are used and the running statistics (the
    buffers ``_mean`` and ``_variance``) are updated; in evaluation mode the running
    statistics are used and nothing is updated. Note that ``momentum`` weights the *old*
    value (Paddle's convention; PyTorch's momentum is ``1 - momentum``).

    Args:
        num_features (int): the number of channels C.
        momentum (float, optional): the weight of the old running statistics in
            ``running = momentum * running + (1 - momentum) * batch``. Default: 0.9.
        epsilon (float, optional): added to the variance for stability. Default: 1e-05.
        weight_attr (ParamAttr|bool, optional): attributes of the scale ``[C]`` (ones);
            False keeps it fixed at 1 (not trained). Default: None.
        bias_attr (ParamAttr|bool, optional): attributes of the shift ``[C]`` (zeros);
            False keeps it fixed at 0. Default: None.
        data_format (str, optional): ``"NCDHW"`` or ``"NDHWC"``. Default: "NCDHW".
        use_global_stats (bool, optional): normalise with the running statistics also in
            training (True), or with the batch statistics also in evaluation (False); None
            follows the mode. Default: None.
        name (str, optional): a name for the layer, shown in its repr. Default: None.

    Shape:
        - input: ``[N, C, D, H, W]``; output: the same shape.

    Examples:
        >>> import fw
        >>> fw.nn.BatchNorm3D(4)(fw.randn([2, 4, 3, 3, 3])).shape
        [2, 4, 3, 3, 3]
    """

    _formats = ("NCDHW", "NDHWC")
    _ranks = (5,)

    def __init__(self, num_features, momentum=0.9, epsilon=1e-05, weight_attr=None,
                 bias_attr=None, data_format="NCDHW", use_global_stats=None, name=None):
        super().__init__(num_features, momentum, epsilon, weight_attr, bias_attr, data_format,
                         use_global_stats, name)


class SyncBatchNorm(_BatchNormBase):
    """Batch normalization whose statistics are meant to be synchronised across
    data-parallel processes.

    On a single process (all that fw-nn provides; fw-distributed's collectives are not
    used here) it computes exactly what `BatchNorm2D` computes, for any input rank from
    2 to 5. See `BatchNorm2D` for the formula and the running statistics.

    Args:
        num_features (int): the number of channels C.
        momentum (float, optional): the weight of the old running statistics in
            ``running = momentum * running + (1 - momentum) * batch``. Default: 0.9.
        epsilon (float, optional): added to the variance for stability. Default: 1e-05.
        weight_attr (ParamAttr|bool, optional): attributes of the scale ``[C]`` (ones);
            False keeps it fixed at 1 (not trained). Default: None.
        bias_attr (ParamAttr|bool, optional): attributes of the shift ``[C]`` (zeros);
            False keeps it fixed at 0. Default: None.
        data_format (str, optional): ``"NCHW"``/``"NHWC"``; the channel-first or -last
            form of the input's rank is used. Default: "NCHW".
        use_global_stats (bool, optional): normalise with the running statistics also in
            training (True), or with the batch statistics also in evaluation (False); None
            follows the mode. Default: None.
        name (str, optional): a name for the layer, shown in its repr. Default: None.

    Shape:
        - input: ``[N, C, *]``; output: the same shape.

    Examples:
        >>> import fw
        >>> net = fw.nn.Sequential(fw.nn.Conv2D(3, 4, 3), fw.nn.BatchNorm2D(4))
        >>> net = fw.nn.SyncBatchNorm.convert_sync_batchnorm(net)
        >>> type(net[1]).__name__
        'SyncBatchNorm'
        >>> net(fw.ones([2, 3, 5, 5])).shape
        [2, 4, 3, 3]
    """

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
        """Replace every batch norm layer inside ``layer`` (recursively, ``layer`` included)
        by a `SyncBatchNorm` that shares its parameters and running statistics.

        Args:
            layer (Layer): the model.

        Returns:
            Layer: ``layer`` with its batch norms replaced, or the new `SyncBatchNorm` when
            ``layer`` itself is one.

        Examples:
            >>> import fw
            >>> bn = fw.nn.BatchNorm1D(3)
            >>> sbn = fw.nn.SyncBatchNorm.convert_sync_batchnorm(bn)
            >>> sbn.weight is bn.weight
            True
        """
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
    """Paddle's older batch normalization layer, for any input rank from 2 to 5, with an
    optional activation applied after it.

    See `BatchNorm2D` for the formula. ``is_test=True`` always uses the running
    statistics.

    Args:
        num_channels (int): the number of channels C.
        act (str, optional): the name of an activation in `fw.nn.functional` applied to
            the output, e.g. ``"relu"``. Default: None.
        is_test (bool, optional): evaluation behaviour regardless of the mode. Default: False.
        momentum (float, optional): the weight of the old running statistics. Default: 0.9.
        epsilon (float, optional): added to the variance. Default: 1e-05.
        param_attr (ParamAttr|bool, optional): attributes of the scale. Default: None.
        bias_attr (ParamAttr|bool, optional): attributes of the shift. Default: None.
        dtype (str, optional): the dtype of the parameters. Default: "float32".
        data_layout (str, optional): ``"NCHW"`` or ``"NHWC"`` style layout. Default: "NCHW".
        in_place (bool, optional): accepted for compatibility. Default: False.
        moving_mean_name (str, optional): the name of the running-mean tensor. Default: None.
        moving_variance_name (str, optional): the name of the running-variance tensor.
            Default: None.
        do_model_average_for_mean_and_var (bool, optional): accepted for compatibility.
            Default: True.
        use_global_stats (bool, optional): always use the running statistics.
            Default: False.
        trainable_statistics (bool, optional): use (and update) batch statistics even in
            evaluation. Default: False.

    Shape:
        - input: ``[N, C, *]``; output: the same shape.

    Examples:
        >>> import fw
        >>> bn = fw.nn.BatchNorm(3, act="relu")
        >>> float(bn(fw.randn([4, 3, 2, 2])).min()) >= 0
        True
    """

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
    """Layer normalization: normalise each sample over its trailing ``normalized_shape``
    axes, then scale and shift: ``y = (x - mean) / sqrt(var + epsilon) * weight + bias``.

    The statistics are computed per sample (no running state), so training and
    evaluation behave the same. The weight and bias are stored flat, with
    ``prod(normalized_shape)`` elements (as Paddle stores them).

    Args:
        normalized_shape (int|list|tuple): the sizes of the trailing axes normalised.
        epsilon (float, optional): added to the variance. Default: 1e-05.
        weight_attr (ParamAttr|bool, optional): attributes of the scale (ones); False for
            no scale. Default: None.
        bias_attr (ParamAttr|bool, optional): attributes of the shift (zeros); False for
            no shift. Default: None.
        name (str, optional): a name for the layer, shown in its repr. Default: None.

    Shape:
        - input: ``[*, *normalized_shape]``; output: the same shape.

    Examples:
        >>> import fw
        >>> ln = fw.nn.LayerNorm(4)
        >>> y = ln(fw.to_tensor([[1.0, 2.0, 3.0, 4.0]]))
        >>> [round(v, 4) for v in y[0].tolist()]
        [-1.3416, -0.4472, 0.4472, 1.3416]
        >>> fw.nn.LayerNorm([3, 4]).weight.shape
        [12]
    """

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
    """Root-mean-square normalization over the trailing ``normalized_shape`` axes:
    ``y = x / sqrt(mean(x ** 2) + epsilon) * weight`` (no centring, no bias).

    Args:
        normalized_shape (int|list|tuple): the sizes of the trailing axes normalised.
        epsilon (float, optional): added to the mean square. Default: 1e-05.
        elementwise_affine (bool, optional): learn the scale ``weight`` (ones at the
            start). Default: True.
        weight_attr (ParamAttr|bool, optional): attributes of the scale; False for none.
            Default: None.
        name (str, optional): a name for the layer, shown in its repr. Default: None.

    Shape:
        - input: ``[*, *normalized_shape]``; output: the same shape.

    Examples:
        >>> import fw
        >>> rms = fw.nn.RMSNorm(2)
        >>> [round(v, 4) for v in rms(fw.to_tensor([[3.0, 4.0]]))[0].tolist()]
        [0.8485, 1.1314]
    """

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
    """Group normalization: the channels are split into ``num_groups`` groups and each
    group of each sample is normalised over its channels and spatial axes, then scaled
    and shifted per channel. Independent of the batch size.

    Args:
        num_groups (int): the number of groups; must divide ``num_channels``.
        num_channels (int): the number of channels C.
        epsilon (float, optional): added to the variance. Default: 1e-05.
        weight_attr (ParamAttr|bool, optional): attributes of the scale ``[C]``; False
            for none. Default: None.
        bias_attr (ParamAttr|bool, optional): attributes of the shift ``[C]``; False for
            none. Default: None.
        data_format (str, optional): ``"NCHW"`` (channel first, any rank) or ``"NHWC"``.
            Default: "NCHW".
        name (str, optional): a name for the layer, shown in its repr. Default: None.

    Shape:
        - input: ``[N, C, *]``; output: the same shape.

    Examples:
        >>> import fw
        >>> gn = fw.nn.GroupNorm(num_groups=2, num_channels=4)
        >>> y = gn(fw.randn([2, 4, 3, 3]))
        >>> abs(float(y[0, :2].mean())) < 1e-5, round(float(y[0, :2].std(unbiased=False)), 3)
        (True, 1.0)
    """

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
    """Instance normalization of a ``[N, C, L]`` input: each channel of each sample is
    normalised over its length, then scaled and shifted per channel. No running
    statistics are kept.

    Args:
        num_features (int): the number of channels C.
        epsilon (float, optional): added to the variance. Default: 1e-05.
        momentum (float, optional): accepted for compatibility. Default: 0.9.
        weight_attr (ParamAttr|bool, optional): attributes of ``scale`` ``[C]`` (ones);
            False (for this or ``bias_attr``) for no affine parameters. Default: None.
        bias_attr (ParamAttr|bool, optional): attributes of ``bias`` ``[C]`` (zeros).
            Default: None.
        data_format (str, optional): ``"NCL"``. Default: "NCL".
        name (str, optional): a name for the layer, shown in its repr. Default: None.

    Shape:
        - input: ``[N, C, L]``; output: the same shape.

    Examples:
        >>> import fw
        >>> norm = fw.nn.InstanceNorm1D(2)
        >>> y = norm(fw.to_tensor([[[1.0, 3.0], [0.0, 10.0]]]))
        >>> [[round(v, 3) for v in row] for row in y[0].tolist()]
        [[-1.0, 1.0], [-1.0, 1.0]]
    """

    _ranks = (2, 3)

    def __init__(self, num_features, epsilon=1e-05, momentum=0.9, weight_attr=None,
                 bias_attr=None, data_format="NCL", name=None):
        super().__init__(num_features, epsilon, momentum, weight_attr, bias_attr, data_format,
                         name)


class InstanceNorm2D(_InstanceNormBase):
    """Instance normalization of a ``[N, C, H, W]`` input: each channel of each sample is
    normalised over its spatial axes, then scaled and shifted per channel (parameters
    ``scale`` and ``bias``). No running statistics are kept.

    Args:
        num_features (int): the number of channels C.
        epsilon (float, optional): added to the variance. Default: 1e-05.
        momentum (float, optional): accepted for compatibility. Default: 0.9.
        weight_attr (ParamAttr|bool, optional): attributes of ``scale``; False for no
            affine parameters. Default: None.
        bias_attr (ParamAttr|bool, optional): attributes of ``bias``. Default: None.
        data_format (str, optional): ``"NCHW"``. Default: "NCHW".
        name (str, optional): a name for the layer, shown in its repr. Default: None.

    Shape:
        - input: ``[N, C, H, W]``; output: the same shape.

    Examples:
        >>> import fw
        >>> norm = fw.nn.InstanceNorm2D(3)
        >>> y = norm(fw.randn([2, 3, 4, 4]))
        >>> abs(float(y[1, 2].mean())) < 1e-5
        True
    """


class InstanceNorm3D(_InstanceNormBase):
    """Instance normalization of a ``[N, C, D, H, W]`` input (see `InstanceNorm2D`).

    Args:
        num_features (int): the number of channels C.
        epsilon (float, optional): added to the variance. Default: 1e-05.
        momentum (float, optional): accepted for compatibility. Default: 0.9.
        weight_attr (ParamAttr|bool, optional): attributes of ``scale``; False for no
            affine parameters. Default: None.
        bias_attr (ParamAttr|bool, optional): attributes of ``bias``. Default: None.
        data_format (str, optional): ``"NCDHW"``. Default: "NCDHW".
        name (str, optional): a name for the layer, shown in its repr. Default: None.

    Shape:
        - input: ``[N, C, D, H, W]``; output: the same shape.

    Examples:
        >>> import fw
        >>> fw.nn.InstanceNorm3D(2)(fw.randn([1, 2, 3, 3, 3])).shape
        [1, 2, 3, 3, 3]
    """

    _ranks = (5,)

    def __init__(self, num_features, epsilon=1e-05, momentum=0.9, weight_attr=None,
                 bias_attr=None, data_format="NCDHW", name=None):
        super().__init__(num_features, epsilon, momentum, weight_attr, bias_attr, data_format,
                         name)


class LocalResponseNorm(Layer):
    """Local response normalization across neighbouring channels:
    ``y = x / (k + alpha / size * sum(x_j ** 2)) ** beta``, the sum over the ``size``
    channels centred on each channel.

    Args:
        size (int): the number of neighbouring channels summed.
        alpha (float, optional): the scale. Default: 0.0001.
        beta (float, optional): the exponent. Default: 0.75.
        k (float, optional): the additive constant. Default: 1.0.
        data_format (str, optional): ``"NCHW"`` or ``"NHWC"`` (also the 3-D and 5-D forms).
            Default: "NCHW".
        name (str, optional): a name for the layer, shown in its repr. Default: None.

    Shape:
        - input: ``[N, C, *]`` (3-D to 5-D); output: the same shape.

    Examples:
        >>> import fw
        >>> lrn = fw.nn.LocalResponseNorm(size=3, alpha=3.0, beta=1.0, k=1.0)
        >>> lrn(fw.ones([1, 3, 1, 1])).numpy().ravel().tolist()
        [0.3333333432674408, 0.25, 0.3333333432674408]
    """

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
    """Spectral normalization of a weight: ``forward(weight)`` returns ``weight / sigma``,
    ``sigma`` the largest singular value of the weight seen as a matrix
    ``[weight_shape[dim], -1]``, estimated by ``power_iters`` power iterations.

    The iteration vectors are the buffers ``weight_u`` and ``weight_v`` (random normal
    at the start) and are updated in place on every call.

    Args:
        weight_shape (list|tuple): the shape of the weight normalised.
        dim (int, optional): the axis that becomes the matrix rows. Default: 0.
        power_iters (int, optional): power iterations per call. Default: 1.
        eps (float, optional): added to norms for stability. Default: 1e-12.
        dtype (str, optional): the dtype of the buffers. Default: "float32".

    Shape:
        - input: ``weight_shape``; output: the same shape.

    Examples:
        >>> import fw
        >>> sn = fw.nn.SpectralNorm([2, 2], power_iters=20)
        >>> w = fw.to_tensor([[3.0, 0.0], [0.0, 1.0]])
        >>> [[round(v, 3) for v in row] for row in sn(w).tolist()]
        [[1.0, 0.0], [0.0, 0.333]]
    """

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

