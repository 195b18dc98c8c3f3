"""Common layers: Linear, Bilinear, Identity, Flatten/Unflatten, dropout, Embedding,
resampling, padding, folding and similarity layers."""

from __future__ import annotations

import fw
from fw.autograd import no_grad
from fw.core.errors import InvalidArgumentError
from fw.nn import functional as F
from fw.nn import initializer as I
from fw.nn.layer.layers import Layer

__all__ = ["Linear", "Bilinear", "Identity", "Flatten", "Unflatten", "Dropout", "Dropout1D",
           "Dropout2D", "Dropout3D", "AlphaDropout", "FeatureAlphaDropout", "Embedding",
           "Upsample", "UpsamplingNearest2D", "UpsamplingBilinear2D", "Pad1D", "Pad2D", "Pad3D",
           "ZeroPad1D", "ZeroPad2D", "ZeroPad3D", "ConstantPad1D", "ConstantPad2D",
           "ConstantPad3D", "ReplicationPad1D", "ReplicationPad2D", "ReplicationPad3D",
           "ReflectionPad1D", "ReflectionPad2D", "ReflectionPad3D", "CircularPad1D",
           "CircularPad2D", "CircularPad3D", "CosineSimilarity", "Unfold", "Fold"]


def _name_str(name):
    return f", name={name}" if name else ""


class Linear(Layer):
    """Fully connected layer: ``y = x @ weight + bias``.

    The weight has Paddle's layout ``[in_features, out_features]`` (PyTorch stores the
    transpose). An input whose dtype differs from the weight's raises rather than
    computing in the wider dtype.

    Args:
        in_features (int): size of the last axis of the input.
        out_features (int): size of the last axis of the output.
        weight_attr (ParamAttr, optional): attributes of the weight; Xavier-uniform
            initialisation when None. Default: None.
        bias_attr (ParamAttr|bool, optional): attributes of the bias (zeros when None);
            False creates no bias. Default: None.
        name (str, optional): a name for the layer, shown in its repr. Default: None.

    Shape:
        - input: ``[*, in_features]``, any number of leading axes.
        - output: ``[*, out_features]``.

    Examples:
        >>> import fw
        >>> fc = fw.nn.Linear(4, 2)
        >>> fc.weight.shape, fc.bias.shape
        ([4, 2], [2])
        >>> fc(fw.ones([8, 3, 4])).shape
        [8, 3, 2]
    """

    def __init__(self, in_features, out_features, weight_attr=None, bias_attr=None, name=None):
        super().__init__()
        self._in_features = in_features
        self._out_features = out_features
        self._name = name
        self.weight = self.create_parameter([in_features, out_features], weight_attr)
        self.bias = self.create_parameter([out_features], bias_attr, is_bias=True)

    def forward(self, input):  # noqa: A002
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in_features={self.weight.shape[0]}, out_features={self.weight.shape[1]}, "
                f"dtype={self._dtype}{_name_str(self._name)}")


class Bilinear(Layer):
    """Bilinear layer: ``out[n, o] = x1[n] @ weight[o] @ x2[n] + bias[o]``.

    Args:
        in1_features (int): size of the last axis of ``x1``.
        in2_features (int): size of the last axis of ``x2``.
        out_features (int): size of the output's last axis.
        weight_attr (ParamAttr, optional): attributes of the weight
            ``[out_features, in1_features, in2_features]``. Default: None.
        bias_attr (ParamAttr|bool, optional): attributes of the bias ``[1, out_features]``;
            False for no bias. Default: None.
        name (str, optional): a name for the layer, shown in its repr. Default: None.

    Shape:
        - x1: ``[N, in1_features]``; x2: ``[N, in2_features]``.
        - output: ``[N, out_features]``.

    Examples:
        >>> import fw
        >>> layer = fw.nn.Bilinear(3, 4, 5)
        >>> layer(fw.ones([2, 3]), fw.ones([2, 4])).shape
        [2, 5]
    """

    def __init__(self, in1_features, in2_features, out_features, weight_attr=None,
                 bias_attr=None, name=None):
        super().__init__()
        self._in1_features = in1_features
        self._in2_features = in2_features
        self._out_features = out_features
        self._name = name
        self.weight = self.create_parameter([out_features, in1_features, in2_features],
                                            weight_attr)
        self.bias = self.create_parameter([1, out_features], bias_attr, is_bias=True)

    def forward(self, x1, x2):
        return F.bilinear(x1, x2, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in1_features={self._in1_features}, in2_features={self._in2_features}, "
                f"out_features={self._out_features}, dtype={self._dtype}{_name_str(self._name)}")


class Identity(Layer):
    """A layer that returns its input unchanged; any constructor arguments are accepted
    and ignored (handy as a placeholder when a block is switched off).

    Shape:
        - input: any shape; output: the same tensor.

    Examples:
        >>> import fw
        >>> x = fw.to_tensor([1.0, 2.0])
        >>> fw.nn.Identity(54, unused="yes")(x) is x
        True
    """

    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, input):  # noqa: A002
        return input


class Flatten(Layer):
    """Flatten the axes ``start_axis`` to ``stop_axis`` (inclusive) into one.

    Args:
        start_axis (int, optional): the first axis to flatten. Default: 1.
        stop_axis (int, optional): the last axis to flatten. Default: -1.

    Shape:
        - input: ``[N, d1, ..., dk]``.
        - output: the flattened axes replaced by their product, e.g. ``[N, d1*...*dk]``
          with the defaults.

    Examples:
        >>> import fw
        >>> fw.nn.Flatten()(fw.ones([2, 3, 4, 5])).shape
        [2, 60]
        >>> fw.nn.Flatten(0, 1)(fw.ones([2, 3, 4])).shape
        [6, 4]
    """

    def __init__(self, start_axis=1, stop_axis=-1):
        super().__init__()
        self.start_axis = start_axis
        self.stop_axis = stop_axis

    def forward(self, input):  # noqa: A002
        return fw.flatten(input, start_axis=self.start_axis, stop_axis=self.stop_axis)

    def extra_repr(self) -> str:
        return f"start_axis={self.start_axis}, stop_axis={self.stop_axis}"


class Unflatten(Layer):
    """Split axis ``axis`` into several axes of the given ``shape`` (the inverse of `Flatten`).

    Args:
        axis (int): the axis to split.
        shape (list|tuple|Tensor): the new sizes; their product must equal the axis size
            (one entry may be -1).
        name (str, optional): a name for the layer, shown in its repr. Default: None.

    Shape:
        - input: ``[..., d, ...]`` with ``d`` at ``axis``; output: ``[..., *shape, ...]``.

    Examples:
        >>> import fw
        >>> fw.nn.Unflatten(1, [2, 3])(fw.ones([4, 6, 5])).shape
        [4, 2, 3, 5]
    """

    def __init__(self, axis, shape, name=None):
        super().__init__()
        self.axis = axis
        self.shape = shape
        self._name = name

    def forward(self, input):  # noqa: A002
        return fw.unflatten(input, self.axis, self.shape)

    def extra_repr(self) -> str:
        return f"axis={self.axis}, shape={self.shape}{_name_str(self._name)}"


# ---------------------------------------------------------------- dropout
class Dropout(Layer):
    """Randomly zero elements with probability ``p`` while training.

    With the default ``mode="upscale_in_train"`` the kept elements are scaled by
    ``1 / (1 - p)`` while training and the layer is the identity in evaluation; with
    ``"downscale_in_infer"`` nothing is scaled in training and the output is multiplied
    by ``1 - p`` in evaluation. See `fw.nn.functional.dropout`.

    Args:
        p (float, optional): the probability of zeroing an element, in [0, 1]. Default: 0.5.
        axis (int|list, optional): axes along which a draw is made; one draw is shared along
            the other axes. None draws per element. Default: None.
        mode (str, optional): ``"upscale_in_train"`` or ``"downscale_in_infer"``.
            Default: "upscale_in_train".
        name (str, optional): a name for the layer, shown in its repr. Default: None.

    Shape:
        - input: any shape; output: the same shape.

    Examples:
        >>> import fw
        >>> drop = fw.nn.Dropout(p=0.5)
        >>> y = drop(fw.ones([1000]))
        >>> sorted(set(y.tolist()))
        [0.0, 2.0]
        >>> _ = drop.eval()
        >>> drop(fw.ones([3])).tolist()
        [1.0, 1.0, 1.0]
    """

    def __init__(self, p=0.5, axis=None, mode="upscale_in_train", name=None):
        super().__init__()
        if not 0 <= p <= 1:
            raise InvalidArgumentError(f"Dropout: 'p' must be in [0, 1], got {p}")
        self.p = p
        self.axis = axis
        self.mode = mode
        self._name = name

    def forward(self, input):  # noqa: A002
        return F.dropout(input, self.p, self.axis, self.training, self.mode)

    def extra_repr(self) -> str:
        return f"p={self.p}, axis={self.axis}, mode={self.mode}{_name_str(self._name)}"


class Dropout1D(Layer):
    """Zero whole channels of a ``[N, C, L]`` (or ``[C, L]``) input with probability ``p``
    while training, scaling the rest by ``1 / (1 - p)``; identity in evaluation.

    Args:
        p (float, optional): the probability of zeroing a channel. Default: 0.5.
        inplace (bool, optional): accepted for compatibility. Default: False.
        name (str, optional): a name for the layer, shown in its repr. Default: None.

    Shape:
        - input: ``[N, C, L]`` or ``[C, L]``; output: the same shape.

    Examples:
        >>> import fw
        >>> y = fw.nn.Dropout1D(0.5)(fw.ones([2, 8, 4]))
        >>> bool(((y == 0).all(axis=-1) | (y == 2).all(axis=-1)).all())
        True
    """

    def __init__(self, p=0.5, inplace=False, name=None):
        super().__init__()
        self.p = p
        self.inplace = inplace

    def forward(self, input):  # noqa: A002
        return F.dropout1d(input, self.p, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"p={self.p}"


class _ChannelDropoutNd(Layer):
    """The state and repr of `Dropout2D`/`Dropout3D`; each keeps its own constructor
    (for its default data_format) and forward."""

    def __init__(self, p, data_format, name):
        super().__init__()
        self.p = p
        self.data_format = data_format
        self._name = name

    def extra_repr(self) -> str:
        return f"p={self.p}, data_format={self.data_format}{_name_str(self._name)}"


class Dropout2D(_ChannelDropoutNd):
    """Zero whole channels of a 4-D input with probability ``p`` while training, scaling
    the rest by ``1 / (1 - p)``; identity in evaluation.

    Args:
        p (float, optional): the probability of zeroing a channel. Default: 0.5.
        data_format (str, optional): ``"NCHW"`` or ``"NHWC"``. Default: "NCHW".
        name (str, optional): a name for the layer, shown in its repr. Default: None.

    Shape:
        - input: ``[N, C, H, W]`` (or NHWC); output: the same shape.

    Examples:
        >>> import fw
        >>> y = fw.nn.Dropout2D(0.5)(fw.ones([2, 8, 3, 3]))
        >>> bool(((y == 0).all(axis=[2, 3]) | (y == 2).all(axis=[2, 3])).all())
        True
    """

    def __init__(self, p=0.5, data_format="NCHW", name=None):
        super().__init__(p, data_format, name)

    def forward(self, input):  # noqa: A002
        return F.dropout2d(input, self.p, self.training, self.data_format)


class Dropout3D(_ChannelDropoutNd):
    """Zero whole channels of a 5-D input with probability ``p`` while training, scaling
    the rest by ``1 / (1 - p)``; identity in evaluation.

    Args:
        p (float, optional): the probability of zeroing a channel. Default: 0.5.
        data_format (str, optional): ``"NCDHW"`` or ``"NDHWC"``. Default: "NCDHW".
        name (str, optional): a name for the layer, shown in its repr. Default: None.

    Shape:
        - input: ``[N, C, D, H, W]`` (or NDHWC); output: the same shape.

    Examples:
        >>> import fw
        >>> fw.nn.Dropout3D(0.5)(fw.ones([2, 4, 2, 3, 3])).shape
        [2, 4, 2, 3, 3]
    """

    def __init__(self, p=0.5, data_format="NCDHW", name=None):
        super().__init__(p, data_format, name)

    def forward(self, input):  # noqa: A002
        return F.dropout3d(input, self.p, self.training, self.data_format)


class AlphaDropout(Layer):
    """Dropout that keeps the zero mean and unit variance of SELU activations: dropped
    elements are set to SELU's negative saturation value and an affine correction is
    applied. Identity in evaluation.

    Args:
        p (float, optional): the drop probability. Default: 0.5.
        name (str, optional): a name for the layer, shown in its repr. Default: None.

    Shape:
        - input: any shape; output: the same shape.

    Examples:
        >>> import fw
        >>> layer = fw.nn.AlphaDropout(0.2)
        >>> layer(fw.ones([2, 3])).shape
        [2, 3]
        >>> layer.eval()(fw.ones([2])).tolist()
        [1.0, 1.0]
    """

    def __init__(self, p=0.5, name=None):
        super().__init__()
        self.p = p
        self._name = name

    def forward(self, input):  # noqa: A002
        return F.alpha_dropout(input, self.p, self.training)

    def extra_repr(self) -> str:
        return f"p={self.p}{_name_str(self._name)}"


class FeatureAlphaDropout(AlphaDropout):
    """`AlphaDropout` that drops whole channels: one draw per (sample, channel) pair.

    Args:
        p (float, optional): the drop probability. Default: 0.5.
        name (str, optional): a name for the layer, shown in its repr. Default: None.

    Shape:
        - input: ``[N, C, *]``; output: the same shape.

    Examples:
        >>> import fw
        >>> fw.nn.FeatureAlphaDropout(0.2)(fw.ones([2, 3, 4])).shape
        [2, 3, 4]
    """

    def forward(self, input):  # noqa: A002
        return F.feature_alpha_dropout(input, self.p, self.training)


# ---------------------------------------------------------------- embedding
class Embedding(Layer):
    """A lookup table: row ``i`` of ``weight [num_embeddings, embedding_dim]`` for each
    integer id ``i`` of the input.

    Args:
        num_embeddings (int): the number of rows (the vocabulary size).
        embedding_dim (int): the size of each row.
        padding_idx (int, optional): an id (negative counts from the end) whose row is
            zeroed at creation and gets no gradient. Default: None.
        max_norm (float, optional): rows looked up with a larger ``norm_type`` norm are
            renormalised to this norm. Default: None.
        norm_type (float, optional): the p of the norm for ``max_norm``. Default: 2.0.
        sparse (bool, optional): accepted for compatibility; the weight's gradient is
            dense. Default: False.
        scale_grad_by_freq (bool, optional): scale the gradient by the inverse
            frequency of each id in the batch. Default: False.
        weight_attr (ParamAttr, optional): attributes of the table; Xavier-uniform
            initialisation when None. Default: None.
        name (str, optional): a name for the layer, shown in its repr. Default: None.

    Shape:
        - input: int32/int64 ids of any shape ``[*]``.
        - output: ``[*, embedding_dim]``.

    Examples:
        >>> import fw
        >>> emb = fw.nn.Embedding(10, 3, padding_idx=0)
        >>> ids = fw.to_tensor([[0, 2], [4, 9]])
        >>> emb(ids).shape
        [2, 2, 3]
        >>> emb(ids)[0, 0].tolist()
        [0.0, 0.0, 0.0]
    """

    def __init__(self, num_embeddings, embedding_dim, padding_idx=None, max_norm=None,
                 norm_type=2.0, sparse=False, scale_grad_by_freq=False, weight_attr=None,
                 name=None):
        super().__init__()
        if num_embeddings <= 0 or embedding_dim <= 0:
            raise InvalidArgumentError(f"Embedding: num_embeddings ({num_embeddings}) and "
                                       f"embedding_dim ({embedding_dim}) must be positive")
        if padding_idx is not None:
            if not -num_embeddings <= padding_idx < num_embeddings:
                raise InvalidArgumentError(f"Embedding: padding_idx {padding_idx} must be in "
                                           f"[-{num_embeddings}, {num_embeddings})")
            padding_idx = padding_idx % num_embeddings
        self._num_embeddings = num_embeddings
        self._embedding_dim = embedding_dim
        self._padding_idx = padding_idx
        self._max_norm = max_norm
        self._norm_type = norm_type
        self._sparse = sparse
        self._scale_grad_by_freq = scale_grad_by_freq
        self._name = name
        self.weight = self.create_parameter([num_embeddings, embedding_dim], weight_attr,
                                            default_initializer=I.XavierUniform())
        if padding_idx is not None and not self.weight.is_lazy:
            with no_grad():
                self.weight._data[padding_idx] = 0

    def forward(self, x):
        return F.embedding(x, self.weight, self._padding_idx, self._max_norm, self._norm_type,
                           self._sparse, self._scale_grad_by_freq)

    def extra_repr(self) -> str:
        s = f"{self._num_embeddings}, {self._embedding_dim}"
        if self._padding_idx is not None:
            s += f", padding_idx={self._padding_idx}"
        if self._sparse:
            s += ", sparse=True"
        return s + _name_str(self._name)


# ---------------------------------------------------------------- resampling
class Upsample(Layer):
    """Resize a 3-D, 4-D or 5-D input to ``size`` or by ``scale_factor`` (see
    `fw.nn.functional.interpolate` for the modes and the corner rules).

    Args:
        size (int|list|tuple, optional): the output spatial size. Default: None.
        scale_factor (float|list|tuple, optional): the multiplier of each spatial size;
            give either ``size`` or ``scale_factor``. Default: None.
        mode (str, optional): ``"nearest"``, ``"linear"``, ``"bilinear"``,
            ``"bicubic"``, ``"trilinear"`` or ``"area"``. Default: "nearest".
        align_corners (bool, optional): align the corner pixels of input and output
            (linear modes). Default: False.
        align_mode (int, optional): 0 uses half-pixel centres, 1 Paddle's
            ``src = dst * scale`` rule, when ``align_corners`` is False. Default: 0.
        data_format (str, optional): e.g. ``"NCHW"``/``"NHWC"``; from the input rank
            when None. Default: None.
        recompute_scale_factor (bool, optional): compute the output size from the scale
            and use it for the coordinates. Default: None.
        name (str, optional): a name for the layer, shown in its repr. Default: None.

    Shape:
        - input: ``[N, C, *spatial]`` (channel first by default).
        - output: ``[N, C, *new_spatial]``.

    Examples:
        >>> import fw
        >>> x = fw.to_tensor([[[[1.0, 2.0], [3.0, 4.0]]]])
        >>> fw.nn.Upsample(scale_factor=2)(x).numpy()[0, 0].tolist()
        [[1.0, 1.0, 2.0, 2.0], [1.0, 1.0, 2.0, 2.0], [3.0, 3.0, 4.0, 4.0], [3.0, 3.0, 4.0, 4.0]]
    """

    def __init__(self, size=None, scale_factor=None, mode="nearest", align_corners=False,
                 align_mode=0, data_format=None, recompute_scale_factor=None, name=None):
        super().__init__()
        self.size = size
        self.scale_factor = scale_factor
        self.mode = mode.lower()
        self.align_corners = align_corners
        self.align_mode = align_mode
        self.data_format = data_format
        self.recompute_scale_factor = recompute_scale_factor
        self._name = name

    def forward(self, x):
        return F.interpolate(x, self.size, self.scale_factor, self.mode, self.align_corners,
                             self.align_mode, self.data_format, self.recompute_scale_factor)

    def extra_repr(self) -> str:
        main = (f"scale_factor={self.scale_factor}" if self.scale_factor is not None
                else f"size={self.size}")
        return (f"{main}, mode={self.mode}, align_corners={self.align_corners}, "
                f"align_mode={self.align_mode}, data_format={self.data_format}"
                f"{_name_str(self._name)}")


class UpsamplingNearest2D(Upsample):
    """Nearest-neighbour resize of a 4-D input (`Upsample` with ``mode="nearest"``).

    Args:
        size (int|list|tuple, optional): the output ``[H, W]``. Default: None.
        scale_factor (float|list|tuple, optional): the multiplier of H and W. Default: None.
        data_format (str, optional): ``"NCHW"`` or ``"NHWC"``. Default: "NCHW".
        name (str, optional): a name for the layer, shown in its repr. Default: None.

    Shape:
        - input: ``[N, C, H, W]``; output: ``[N, C, H_out, W_out]``.

    Examples:
        >>> import fw
        >>> fw.nn.UpsamplingNearest2D(size=[4, 6])(fw.ones([1, 2, 2, 3])).shape
        [1, 2, 4, 6]
    """

    def __init__(self, size=None, scale_factor=None, data_format="NCHW", name=None):
        super().__init__(size, scale_factor, "nearest", False, 0, data_format, name=name)


class UpsamplingBilinear2D(Upsample):
    """Bilinear resize of a 4-D input with ``align_corners=True``.

    Args:
        size (int|list|tuple, optional): the output ``[H, W]``. Default: None.
        scale_factor (float|list|tuple, optional): the multiplier of H and W. Default: None.
        data_format (str, optional): ``"NCHW"`` or ``"NHWC"``. Default: "NCHW".
        name (str, optional): a name for the layer, shown in its repr. Default: None.

    Shape:
        - input: ``[N, C, H, W]``; output: ``[N, C, H_out, W_out]``.

    Examples:
        >>> import fw
        >>> x = fw.to_tensor([[[[0.0, 3.0]]]])
        >>> fw.nn.UpsamplingBilinear2D(size=[1, 4])(x).numpy().ravel().tolist()
        [0.0, 1.0, 2.0, 3.0]
    """

    def __init__(self, size=None, scale_factor=None, data_format="NCHW", name=None):
        super().__init__(size, scale_factor, "bilinear", True, 0, data_format, name=name)


# ---------------------------------------------------------------- padding
class _PadNd(Layer):
    _nd = 1
    _fmt = "NCL"
    _mode = "constant"

    # no defaults: every pad layer passes all of them (its own signature holds Paddle's)
    def __init__(self, padding, mode, value, data_format, name):
        super().__init__()
        nd = self._nd
        if isinstance(padding, int):
            padding = [padding] * (2 * nd)
        elif hasattr(padding, "tolist") and not isinstance(padding, (list, tuple)):
            padding = padding.tolist()
        padding = list(padding)
        if len(padding) != 2 * nd:
            raise InvalidArgumentError(f"{type(self).__name__}: 'padding' must be an int or "
                                       f"hold {2 * nd} numbers, got {padding}")
        self._pad = padding
        self._mode = mode if mode is not None else self._mode
        self._value = value
        self._data_format = data_format if data_format is not None else self._fmt
        self._name = name

    def forward(self, x):
        return F.pad(x, self._pad, mode=self._mode, value=self._value,
                     data_format=self._data_format)

    def extra_repr(self) -> str:
        return (f"padding={self._pad}, mode={self._mode}, value={self._value}, "
                f"data_format={self._data_format}{_name_str(self._name)}")


class Pad1D(_PadNd):
    """Pad the last axis of a 3-D input.

    Args:
        padding (int|list|Tensor): ``[left, right]``, or one int for both.
        mode (str, optional): ``"constant"``, ``"reflect"``, ``"replicate"`` or
            ``"circular"``. Default: "constant".
        value (float, optional): the fill value of constant mode. Default: 0.0.
        data_format (str, optional): ``"NCL"`` or ``"NLC"``. Default: "NCL".
        name (str, optional): a name for the layer, shown in its repr. Default: None.

    Shape:
        - input: ``[N, C, L]``; output: ``[N, C, L + left + right]``.

    Examples:
        >>> import fw
        >>> x = fw.to_tensor([[[1.0, 2.0, 3.0]]])
        >>> fw.nn.Pad1D([2, 1], mode="reflect")(x).tolist()
        [[[3.0, 2.0, 1.0, 2.0, 3.0, 2.0]]]
    """

    def __init__(self, padding, mode="constant", value=0.0, data_format="NCL", name=None):
        super().__init__(padding, mode, value, data_format, name)


class Pad2D(_PadNd):
    """Pad the H and W axes of a 4-D input.

    Args:
        padding (int|list|Tensor): ``[left, right, top, bottom]``, or one int for all.
        mode (str, optional): ``"constant"``, ``"reflect"``, ``"replicate"`` or
            ``"circular"``. Default: "constant".
        value (float, optional): the fill value of constant mode. Default: 0.0.
        data_format (str, optional): ``"NCHW"`` or ``"NHWC"``. Default: "NCHW".
        name (str, optional): a name for the layer, shown in its repr. Default: None.

    Shape:
        - input: ``[N, C, H, W]``; output: ``[N, C, H + top + bottom, W + left + right]``.

    Examples:
        >>> import fw
        >>> x = fw.to_tensor([[[[1.0, 2.0]]]])
        >>> fw.nn.Pad2D([1, 0, 0, 1], value=9.0)(x).tolist()
        [[[[9.0, 1.0, 2.0], [9.0, 9.0, 9.0]]]]
    """

    _nd, _fmt = 2, "NCHW"

    def __init__(self, padding, mode="constant", value=0.0, data_format="NCHW", name=None):
        super().__init__(padding, mode, value, data_format, name)


class Pad3D(_PadNd):
    """Pad the D, H and W axes of a 5-D input.

    Args:
        padding (int|list|Tensor): ``[left, right, top, bottom, front, back]``, or one
            int for all.
        mode (str, optional): ``"constant"``, ``"reflect"``, ``"replicate"`` or
            ``"circular"``. Default: "constant".
        value (float, optional): the fill value of constant mode. Default: 0.0.
        data_format (str, optional): ``"NCDHW"`` or ``"NDHWC"``. Default: "NCDHW".
        name (str, optional): a name for the layer, shown in its repr. Default: None.

    Shape:
        - input: ``[N, C, D, H, W]``; output: each padded axis grown by its two pads.

    Examples:
        >>> import fw
        >>> fw.nn.Pad3D([1, 1, 0, 0, 2, 0])(fw.ones([1, 1, 2, 2, 2])).shape
        [1, 1, 4, 2, 4]
    """

    _nd, _fmt = 3, "NCDHW"

    def __init__(self, padding, mode="constant", value=0.0, data_format="NCDHW", name=None):
        super().__init__(padding, mode, value, data_format, name)


def _fixed_pad_doc(name, nd, fmt, summary, with_value):
    """The docstring of a fixed-mode padding layer (Args, Shape and a run example)."""
    pads = ["left", "right", "top", "bottom", "front", "back"][:2 * nd]
    alt = {"NCL": "NLC", "NCHW": "NHWC", "NCDHW": "NDHWC"}[fmt]
    value = ("    value (float, optional): the fill value. Default: 0.0.\n"
             if with_value else "")
    shape = [1, 1] + [3] * nd
    out = [1, 1] + [5] * nd
    return (f"{summary}\n\n"
            f"Args:\n"
            f"    padding (int|list|Tensor): ``[{', '.join(pads)}]``, or one int for all.\n"
            f"{value}"
            f"    data_format (str, optional): ``\"{fmt}\"`` or ``\"{alt}\"``; "
            f"``\"{fmt}\"`` when None.\n        Default: None.\n"
            f"    name (str, optional): a name for the layer, shown in its repr. "
            f"Default: None.\n\n"
            f"Shape:\n"
            f"    - input: ``[N, C, *spatial]`` ({nd} spatial "
            f"ax{'is' if nd == 1 else 'es'}, {fmt});\n"
            f"      output: each spatial axis grown by its two pads.\n\n"
            f"Examples:\n"
            f"    >>> import fw\n"
            f"    >>> fw.nn.{name}(1)(fw.ones({shape})).shape\n"
            f"    {out}\n")


def _fixed_mode_pad(base, mode, doc, with_value=False, cls_name=None):
    """A padding layer class with `mode` fixed (Paddle's ConstantPad2D, ReflectionPad1D, …)."""
    if with_value:
        def __init__(self, padding, value=0.0, data_format=None, name=None):
            _PadNd.__init__(self, padding, mode, value, data_format, name)
    else:
        def __init__(self, padding, data_format=None, name=None):
            _PadNd.__init__(self, padding, mode, 0.0, data_format, name)
    name = cls_name or {"constant": "Constant", "replicate": "Replication",
                        "reflect": "Reflection", "circular": "Circular"}[mode] + f"Pad{base._nd}D"
    return type(name, (base,), {"__init__": __init__, "__doc__": _fixed_pad_doc(
                    name, base._nd, base._fmt, doc, with_value),
                                "__module__": __name__,
                                "__qualname__": name})


ZeroPad1D = _fixed_mode_pad(Pad1D, "constant", "Zero-pad the last axis: ``[left, right]``.",
                            cls_name="ZeroPad1D")
ZeroPad2D = _fixed_mode_pad(Pad2D, "constant", "Zero-pad H and W: ``[left, right, top, bottom]``.",
                            cls_name="ZeroPad2D")
ZeroPad3D = _fixed_mode_pad(Pad3D, "constant", "Zero-pad D, H and W.", cls_name="ZeroPad3D")
ConstantPad1D = _fixed_mode_pad(Pad1D, "constant", "Pad the last axis with `value`.", True)
ConstantPad2D = _fixed_mode_pad(Pad2D, "constant", "Pad H and W with `value`.", True)
ConstantPad3D = _fixed_mode_pad(Pad3D, "constant", "Pad D, H and W with `value`.", True)
ReplicationPad1D = _fixed_mode_pad(Pad1D, "replicate", "Pad by repeating the edge values.")
ReplicationPad2D = _fixed_mode_pad(Pad2D, "replicate", "Pad by repeating the edge values.")
ReplicationPad3D = _fixed_mode_pad(Pad3D, "replicate", "Pad by repeating the edge values.")
ReflectionPad1D = _fixed_mode_pad(Pad1D, "reflect", "Pad by reflecting at the edges.")
ReflectionPad2D = _fixed_mode_pad(Pad2D, "reflect", "Pad by reflecting at the edges.")
ReflectionPad3D = _fixed_mode_pad(Pad3D, "reflect", "Pad by reflecting at the edges.")
CircularPad1D = _fixed_mode_pad(Pad1D, "circular", "Pad by wrapping around.")
CircularPad2D = _fixed_mode_pad(Pad2D, "circular", "Pad by wrapping around.")
CircularPad3D = _fixed_mode_pad(Pad3D, "circular", "Pad by wrapping around.")


# ---------------------------------------------------------------- similarity, folding
class CosineSimilarity(Layer):
    """Cosine similarity of two inputs along ``axis``:
    ``sum(x1 * x2) / max(||x1|| * ||x2||, eps)``.

    Args:
        axis (int, optional): the axis reduced. Default: 1.
        eps (float, optional): lower bound of the norm product. Default: 1e-8.

    Shape:
        - x1, x2: broadcastable shapes; output: their broadcast shape without ``axis``.

    Examples:
        >>> import fw
        >>> x1 = fw.to_tensor([[1.0, 0.0], [1.0, 1.0]])
        >>> x2 = fw.to_tensor([[0.0, 1.0], [2.0, 2.0]])
        >>> [round(v, 4) for v in fw.nn.CosineSimilarity(axis=1)(x1, x2).tolist()]
        [0.0, 1.0]
    """

    def __init__(self, axis=1, eps=1e-8):
        super().__init__()
        self._axis = axis
        self._eps = eps

    def forward(self, x1, x2):
        return F.cosine_similarity(x1, x2, self._axis, self._eps)

    def extra_repr(self) -> str:
        return f"axis={self._axis}, eps={self._eps}"


class Unfold(Layer):
    """Extract sliding local blocks of a 4-D input into columns (im2col); see
    `fw.nn.functional.unfold`.

    Args:
        kernel_sizes (int|list): the block size ``[kh, kw]``.
        dilations (int|list, optional): the dilation. Default: 1.
        paddings (int|list, optional): zero padding, 1, 2 or 4 numbers. Default: 0.
        strides (int|list, optional): the stride. Default: 1.
        name (str, optional): a name for the layer, shown in its repr. Default: None.

    Shape:
        - input: ``[N, C, H, W]``.
        - output: ``[N, C * kh * kw, L]`` with L the number of blocks.

    Examples:
        >>> import fw
        >>> fw.nn.Unfold(kernel_sizes=2)(fw.ones([1, 3, 4, 4])).shape
        [1, 12, 9]
    """

    def __init__(self, kernel_sizes, dilations=1, paddings=0, strides=1, name=None):
        super().__init__()
        self.kernel_sizes = kernel_sizes
        self.dilations = dilations
        self.paddings = paddings
        self.strides = strides
        self._name = name

    def forward(self, input):  # noqa: A002
        return F.unfold(input, self.kernel_sizes, self.strides, self.paddings, self.dilations)

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_sizes}, dilation={self.dilations}, "
                f"padding={self.paddings}, stride={self.strides}{_name_str(self._name)}")


class Fold(Layer):
    """Combine columns of sliding local blocks back into a 4-D tensor (col2im), summing
    overlapping values; the inverse layout of `Unfold`.

    Args:
        output_sizes (int|list): the output ``[H, W]``.
        kernel_sizes (int|list): the block size ``[kh, kw]``.
        dilations (int|list, optional): the dilation. Default: 1.
        paddings (int|list, optional): the padding. Default: 0.
        strides (int|list, optional): the stride. Default: 1.
        name (str, optional): a name for the layer, shown in its repr. Default: None.

    Shape:
        - input: ``[N, C * kh * kw, L]``; output: ``[N, C, H, W]``.

    Examples:
        >>> import fw
        >>> cols = fw.nn.Unfold(2)(fw.ones([1, 1, 3, 3]))
        >>> fw.nn.Fold([3, 3], 2)(cols).numpy()[0, 0].tolist()
        [[1.0, 2.0, 1.0], [2.0, 4.0, 2.0], [1.0, 2.0, 1.0]]
    """

    def __init__(self, output_sizes, kernel_sizes, dilations=1, paddings=0, strides=1,
                 name=None):
        super().__init__()
        self.output_sizes = output_sizes
        self.kernel_sizes = kernel_sizes
        self.dilations = dilations
        self.paddings = paddings
        self.strides = strides
        self._name = name

    def forward(self, input):  # noqa: A002
        return F.fold(input, self.output_sizes, self.kernel_sizes, self.strides, self.paddings,
                      self.dilations)

    def extra_repr(self) -> str:
        return (f"output_size={self.output_sizes}, kernel_size={self.kernel_sizes}, "
                f"dilation={self.dilations}, padding={self.paddings}, stride={self.strides}"
                f"{_name_str(self._name)}")
