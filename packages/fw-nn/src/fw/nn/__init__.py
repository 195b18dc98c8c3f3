"""fw.nn — layers, losses, initializers, gradient clipping and checkpoints
(Paddle's ``paddle.nn``). See README.md beside this package for the design.

The top-level names `fw.ParamAttr`, `fw.create_parameter`, `fw.save` and
`fw.load` are defined here (fw-core's facade resolves them lazily).
"""

from fw.nn import functional, initializer, quant, utils
from fw.nn.clip import ClipGradByGlobalNorm, ClipGradByNorm, ClipGradByValue
from fw.nn.decode import BeamSearchDecoder, Decoder, dynamic_decode
from fw.nn.initializer import LazyGuard
from fw.nn.layer import loss
from fw.nn.layer.activation import (
    CELU,
    ELU,
    GELU,
    GLU,
    SELU,
    Hardshrink,
    Hardsigmoid,
    Hardswish,
    Hardtanh,
    LeakyReLU,
    LogSigmoid,
    LogSoftmax,
    Maxout,
    Mish,
    PReLU,
    ReLU,
    ReLU6,
    RReLU,
    Sigmoid,
    SiLU,
    Silu,
    Softmax,
    Softmax2D,
    Softplus,
    Softshrink,
    Softsign,
    Swish,
    Tanh,
    Tanhshrink,
    ThresholdedReLU,
)
from fw.nn.layer.common import (
    AlphaDropout,
    Bilinear,
    CircularPad1D,
    CircularPad2D,
    CircularPad3D,
    ConstantPad1D,
    ConstantPad2D,
    ConstantPad3D,
    CosineSimilarity,
    Dropout,
    Dropout1D,
    Dropout2D,
    Dropout3D,
    Embedding,
    FeatureAlphaDropout,
    Flatten,
    Fold,
    Identity,
    Linear,
    Pad1D,
    Pad2D,
    Pad3D,
    ReflectionPad1D,
    ReflectionPad2D,
    ReflectionPad3D,
    ReplicationPad1D,
    ReplicationPad2D,
    ReplicationPad3D,
    Unflatten,
    Unfold,
    Upsample,
    UpsamplingBilinear2D,
    UpsamplingNearest2D,
    ZeroPad1D,
    ZeroPad2D,
    ZeroPad3D,
)
from fw.nn.layer.container import LayerDict, LayerList, ParameterDict, ParameterList, Sequential
from fw.nn.layer.conv import (
    Conv1D,
    Conv1DTranspose,
    Conv2D,
    Conv2DTranspose,
    Conv3D,
    Conv3DTranspose,
)
from fw.nn.layer.distance import PairwiseDistance
from fw.nn.layer.layers import HookRemoveHelper, Layer, LoadReport
from fw.nn.layer.loss import (
    BCELoss,
    BCEWithLogitsLoss,
    CosineEmbeddingLoss,
    CrossEntropyLoss,
    CTCLoss,
    GaussianNLLLoss,
    HingeEmbeddingLoss,
    HSigmoidLoss,
    KLDivLoss,
    L1Loss,
    MarginRankingLoss,
    MSELoss,
    MultiLabelSoftMarginLoss,
    MultiMarginLoss,
    NLLLoss,
    PoissonNLLLoss,
    SmoothL1Loss,
    SoftMarginLoss,
    TripletMarginLoss,
    TripletMarginWithDistanceLoss,
)
from fw.nn.layer.norm import (
    BatchNorm,
    BatchNorm1D,
    BatchNorm2D,
    BatchNorm3D,
    GroupNorm,
    InstanceNorm1D,
    InstanceNorm2D,
    InstanceNorm3D,
    LayerNorm,
    LocalResponseNorm,
    RMSNorm,
    SpectralNorm,
    SyncBatchNorm,
)
from fw.nn.layer.pooling import (
    AdaptiveAvgPool1D,
    AdaptiveAvgPool2D,
    AdaptiveAvgPool3D,
    AdaptiveMaxPool1D,
    AdaptiveMaxPool2D,
    AdaptiveMaxPool3D,
    AvgPool1D,
    AvgPool2D,
    AvgPool3D,
    LPPool1D,
    LPPool2D,
    MaxPool1D,
    MaxPool2D,
    MaxPool3D,
    MaxUnPool1D,
    MaxUnPool2D,
    MaxUnPool3D,
)
from fw.nn.layer.rnn import (
    GRU,
    LSTM,
    RNN,
    BiRNN,
    GRUCell,
    LSTMCell,
    RNNCellBase,
    SimpleRNN,
    SimpleRNNCell,
)
from fw.nn.layer.transformer import (
    MultiHeadAttention,
    Transformer,
    TransformerDecoder,
    TransformerDecoderLayer,
    TransformerEncoder,
    TransformerEncoderLayer,
)
from fw.nn.layer.vision import ChannelShuffle, PixelShuffle, PixelUnshuffle
from fw.nn.parameter import ParamAttr, Parameter, create_parameter

# Paddle 3's PyTorch-compatible spellings
Module = Layer
ModuleList = LayerList
ModuleDict = LayerDict
_ALIASES = {
    "Conv1d": Conv1D, "Conv2d": Conv2D, "Conv3d": Conv3D,
    "ConvTranspose1d": Conv1DTranspose, "ConvTranspose2d": Conv2DTranspose,
    "ConvTranspose3d": Conv3DTranspose,
    "BatchNorm1d": BatchNorm1D, "BatchNorm2d": BatchNorm2D, "BatchNorm3d": BatchNorm3D,
    "InstanceNorm1d": InstanceNorm1D, "InstanceNorm2d": InstanceNorm2D,
    "InstanceNorm3d": InstanceNorm3D,
    "MaxPool1d": MaxPool1D, "MaxPool2d": MaxPool2D, "MaxPool3d": MaxPool3D,
    "AvgPool1d": AvgPool1D, "AvgPool2d": AvgPool2D, "AvgPool3d": AvgPool3D,
    "LPPool1d": LPPool1D, "LPPool2d": LPPool2D,
    "AdaptiveAvgPool1d": AdaptiveAvgPool1D, "AdaptiveAvgPool2d": AdaptiveAvgPool2D,
    "AdaptiveAvgPool3d": AdaptiveAvgPool3D, "AdaptiveMaxPool1d": AdaptiveMaxPool1D,
    "AdaptiveMaxPool2d": AdaptiveMaxPool2D, "AdaptiveMaxPool3d": AdaptiveMaxPool3D,
    "MaxUnpool1d": MaxUnPool1D, "MaxUnpool2d": MaxUnPool2D, "MaxUnpool3d": MaxUnPool3D,
    "Dropout1d": Dropout1D, "Dropout2d": Dropout2D, "Dropout3d": Dropout3D,
    "ZeroPad1d": ZeroPad1D, "ZeroPad2d": ZeroPad2D, "ZeroPad3d": ZeroPad3D,
    "ConstantPad1d": ConstantPad1D, "ConstantPad2d": ConstantPad2D,
    "ConstantPad3d": ConstantPad3D, "ReplicationPad1d": ReplicationPad1D,
    "ReplicationPad2d": ReplicationPad2D, "ReplicationPad3d": ReplicationPad3D,
    "ReflectionPad1d": ReflectionPad1D, "ReflectionPad2d": ReflectionPad2D,
    "ReflectionPad3d": ReflectionPad3D, "CircularPad1d": CircularPad1D,
    "CircularPad2d": CircularPad2D, "CircularPad3d": CircularPad3D,
    "PixelShuffle": PixelShuffle, "Upsample": Upsample,
    "UpsamplingNearest2d": UpsamplingNearest2D, "UpsamplingBilinear2d": UpsamplingBilinear2D,
}
globals().update(_ALIASES)

# Paddle 3.3's argument aliases on layers (LayerNorm(normalized_shape, eps=…), Conv2D.forward
# (input=…), LayerList.append(module=…)): the same table as fw.nn.functional's
from fw.core.aliases import apply as _apply_aliases  # noqa: E402

_apply_aliases(globals(), "paddle.nn", "fw.nn")

__all__ = [n for n in dir() if not n.startswith("_")]

from fw.nn.layer.fractional_pool import FractionalMaxPool2D, FractionalMaxPool3D  # noqa: E402
from fw.nn.layer.margin_loss import (  # noqa: E402
    AdaptiveLogSoftmaxWithLoss,
    MultiLabelMarginLoss,
    RNNTLoss,
)

__all__ += ["FractionalMaxPool2D", "FractionalMaxPool3D", "AdaptiveLogSoftmaxWithLoss",
            "MultiLabelMarginLoss", "RNNTLoss"]

# fw.profiler's per-Layer view: Layer.__call__ is timed only while a profiler records
from fw.nn.layer import _profile as _layer_profile  # noqa: E402

_layer_profile.install(Layer)
