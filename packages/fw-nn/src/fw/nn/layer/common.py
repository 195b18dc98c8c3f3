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
    """``y = x @ weight + bias`` with weight ``[in_features, out_features]``.

    Args:
        in_features, out_features: sizes.
        weight_attr: `ParamAttr` of the weight (Xavier-uniform by default).
        bias_attr: of the bias (zeros by default); False for no bias.

    >>> import fw
    >>> fw.nn.Linear(4, 2)(fw.ones([3, 4])).shape
    [3, 2]
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
    """``out[n, o] = x1[n] @ weight[o] @ x2[n] + bias[o]``; weight
    ``[out_features, in1_features, in2_features]``, bias ``[1, out_features]``."""

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
    """Returns its input (accepts and ignores any constructor arguments)."""

    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, input):  # noqa: A002
        return input


class Flatten(Layer):
    """Flatten axes ``start_axis..stop_axis`` into one."""

    def __init__(self, start_axis=1, stop_axis=-1):
        super().__init__()
        self.start_axis = start_axis
        self.stop_axis = stop_axis

    def forward(self, input):  # noqa: A002
        return fw.flatten(input, start_axis=self.start_axis, stop_axis=self.stop_axis)

    def extra_repr(self) -> str:
        return f"start_axis={self.start_axis}, stop_axis={self.stop_axis}"


class Unflatten(Layer):
    """Split axis `axis` into `shape`."""

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
    """Dropout while training (see `fw.nn.functional.dropout`); identity in eval mode
    (``upscale_in_train``)."""

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
    """Drop whole channels of ``[N, C, L]`` (or ``[C, L]``) input while training."""

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
    """Drop whole channels of 4-D input while training."""

    def __init__(self, p=0.5, data_format="NCHW", name=None):
        super().__init__(p, data_format, name)

    def forward(self, input):  # noqa: A002
        return F.dropout2d(input, self.p, self.training, self.data_format)


class Dropout3D(_ChannelDropoutNd):
    """Drop whole channels of 5-D input while training."""

    def __init__(self, p=0.5, data_format="NCDHW", name=None):
        super().__init__(p, data_format, name)

    def forward(self, input):  # noqa: A002
        return F.dropout3d(input, self.p, self.training, self.data_format)


class AlphaDropout(Layer):
    """SELU-preserving dropout while training."""

    def __init__(self, p=0.5, name=None):
        super().__init__()
        self.p = p
        self._name = name

    def forward(self, input):  # noqa: A002
        return F.alpha_dropout(input, self.p, self.training)

    def extra_repr(self) -> str:
        return f"p={self.p}{_name_str(self._name)}"


class FeatureAlphaDropout(AlphaDropout):
    """`AlphaDropout` with one draw per (sample, channel)."""

    def forward(self, input):  # noqa: A002
        return F.feature_alpha_dropout(input, self.p, self.training)


# ---------------------------------------------------------------- embedding
class Embedding(Layer):
    """A lookup table ``weight [num_embeddings, embedding_dim]`` indexed by int ids.

    Args:
        num_embeddings, embedding_dim: table size.
        padding_idx: this id (negative counts from the end) maps to a zero row that
            gets no gradient; the row is zeroed at creation.
        max_norm, norm_type, scale_grad_by_freq: see `fw.nn.functional.embedding`.
        sparse: accepted for compatibility; the weight's gradient is dense (see
            `fw.nn.functional.embedding`).
        weight_attr: `ParamAttr` of the table (Xavier-uniform by default).
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
    """Resize (see `fw.nn.functional.interpolate`)."""

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
    """Nearest-neighbour resize of 4-D input."""

    def __init__(self, size=None, scale_factor=None, data_format="NCHW", name=None):
        super().__init__(size, scale_factor, "nearest", False, 0, data_format, name=name)


class UpsamplingBilinear2D(Upsample):
    """Bilinear resize of 4-D input with ``align_corners=True``."""

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
    """Pad the last axis of ``[N, C, L]`` input: padding ``[left, right]`` (or an int);
    modes constant, reflect, replicate, circular."""

    def __init__(self, padding, mode="constant", value=0.0, data_format="NCL", name=None):
        super().__init__(padding, mode, value, data_format, name)


class Pad2D(_PadNd):
    """Pad H and W of 4-D input: padding ``[left, right, top, bottom]`` (or an int)."""

    _nd, _fmt = 2, "NCHW"

    def __init__(self, padding, mode="constant", value=0.0, data_format="NCHW", name=None):
        super().__init__(padding, mode, value, data_format, name)


class Pad3D(_PadNd):
    """Pad D, H and W of 5-D input: ``[left, right, top, bottom, front, back]``."""

    _nd, _fmt = 3, "NCDHW"

    def __init__(self, padding, mode="constant", value=0.0, data_format="NCDHW", name=None):
        super().__init__(padding, mode, value, data_format, name)


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
    return type(name, (base,), {"__init__": __init__, "__doc__": doc, "__module__": __name__,
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
    """Cosine similarity along `axis` (see `fw.nn.functional.cosine_similarity`)."""

    def __init__(self, axis=1, eps=1e-8):
        super().__init__()
        self._axis = axis
        self._eps = eps

    def forward(self, x1, x2):
        return F.cosine_similarity(x1, x2, self._axis, self._eps)

    def extra_repr(self) -> str:
        return f"axis={self._axis}, eps={self._eps}"


class Unfold(Layer):
    """im2col (see `fw.nn.functional.unfold`)."""

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
    """col2im (see `fw.nn.functional.fold`)."""

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
