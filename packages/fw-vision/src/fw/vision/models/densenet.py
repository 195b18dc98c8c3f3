"""DenseNet ("Densely Connected Convolutional Networks", Huang et al. 2017), depths
121, 161, 169, 201 and 264, with Paddle 3.x's layout: sublayer names, argument names
and defaults follow ``paddle.vision.models.densenet`` so Paddle's published
``.pdparams`` files load unchanged."""

from __future__ import annotations

import math

import fw
from fw import nn
from fw.core.errors import InvalidArgumentError
from fw.nn import initializer as I
from fw.vision.models._utils import check_classifier_input, load_pretrained

__all__ = ["DenseNet", "densenet121", "densenet161", "densenet169", "densenet201",
           "densenet264"]

_BASE = "https://paddle-imagenet-models-name.bj.bcebos.com/dygraph/"
# Paddle's published ImageNet weights (URL, md5), from Paddle 3.3.1's model file
model_urls: dict[str, tuple[str, str]] = {
    "densenet121": (_BASE + "DenseNet121_pretrained.pdparams",
                    "db1b239ed80a905290fd8b01d3af08e4"),
    "densenet161": (_BASE + "DenseNet161_pretrained.pdparams",
                    "62158869cb315098bd25ddbfd308a853"),
    "densenet169": (_BASE + "DenseNet169_pretrained.pdparams",
                    "82cc7c635c3f19098c748850efb2d796"),
    "densenet201": (_BASE + "DenseNet201_pretrained.pdparams",
                    "16ca29565a7712329cf9e36e02caaf58"),
    "densenet264": (_BASE + "DenseNet264_pretrained.pdparams",
                    "3270ce516b85370bba88cfdd9f60bff4"),
}

# the classifier's state-dict prefix: another num_classes keeps a fresh one when loading
HEAD = ("out.",)
# layers -> (initial features, growth rate, dense layers per block)
_SPEC = {
    121: (64, 32, (6, 12, 24, 16)),
    161: (96, 48, (6, 12, 36, 24)),
    169: (64, 32, (6, 12, 32, 32)),
    201: (64, 32, (6, 12, 48, 32)),
    264: (64, 32, (6, 12, 64, 48)),
}


class BNACConvLayer(nn.Layer):
    """Pre-activation unit: BatchNorm with ReLU, then a bias-free convolution."""

    def __init__(self, num_channels, num_filters, filter_size, stride=1, pad=0, groups=1,
                 act="relu"):
        super().__init__()
        self._batch_norm = nn.BatchNorm(num_channels, act=act)
        self._conv = nn.Conv2D(num_channels, num_filters, filter_size, stride=stride,
                               padding=pad, groups=groups, bias_attr=False)

    def forward(self, input):  # noqa: A002
        return self._conv(self._batch_norm(input))


class DenseLayer(nn.Layer):
    """Bottleneck (1x1 to ``bn_size * growth_rate``) then 3x3 to ``growth_rate`` new
    channels, concatenated after the input."""

    def __init__(self, num_channels, growth_rate, bn_size, dropout):
        super().__init__()
        self.dropout = dropout
        self.bn_ac_func1 = BNACConvLayer(num_channels, bn_size * growth_rate, 1, pad=0,
                                         stride=1)
        self.bn_ac_func2 = BNACConvLayer(bn_size * growth_rate, growth_rate, 3, pad=1,
                                         stride=1)
        if dropout:
            self.dropout_func = nn.Dropout(p=dropout, mode="downscale_in_infer")

    def forward(self, input):  # noqa: A002
        conv = self.bn_ac_func2(self.bn_ac_func1(input))
        if self.dropout:
            conv = self.dropout_func(conv)
        return fw.concat([input, conv], axis=1)


class DenseBlock(nn.Layer):
    """`num_layers` DenseLayers named ``<name>_1``, ``<name>_2``, ... (Paddle's names)."""

    def __init__(self, num_channels, num_layers, bn_size, growth_rate, dropout, name=None):
        super().__init__()
        self.dropout = dropout
        self.dense_layer_func = []
        channels = num_channels
        for i in range(num_layers):
            layer = DenseLayer(channels, growth_rate, bn_size, dropout)
            self.dense_layer_func.append(self.add_sublayer(f"{name}_{i + 1}", layer))
            channels += growth_rate

    def forward(self, input):  # noqa: A002
        conv = input
        for layer in self.dense_layer_func:
            conv = layer(conv)
        return conv


class TransitionLayer(nn.Layer):
    """Between blocks: BN-ReLU-1x1 conv to `num_output_features`, then 2x2 average
    pooling."""

    def __init__(self, num_channels, num_output_features):
        super().__init__()
        self.conv_ac_func = BNACConvLayer(num_channels, num_output_features, 1, pad=0,
                                          stride=1)
        self.pool2d_avg = nn.AvgPool2D(kernel_size=2, stride=2, padding=0)

    def forward(self, input):  # noqa: A002
        return self.pool2d_avg(self.conv_ac_func(input))


class ConvBNLayer(nn.Layer):
    """A bias-free convolution, then BatchNorm with an activation (the stem)."""

    def __init__(self, num_channels, num_filters, filter_size, stride=1, pad=0, groups=1,
                 act="relu"):
        super().__init__()
        self._conv = nn.Conv2D(num_channels, num_filters, filter_size, stride=stride,
                               padding=pad, groups=groups, bias_attr=False)
        self._batch_norm = nn.BatchNorm(num_filters, act=act)

    def forward(self, input):  # noqa: A002
        return self._batch_norm(self._conv(input))


class DenseNet(nn.Layer):
    """DenseNet model from "Densely Connected Convolutional Networks"
    (https://arxiv.org/abs/1608.06993).

    Args:
        layers (int, optional): depth, one of 121, 161, 169, 201, 264. Default: 121.
        bn_size (int, optional): bottleneck width factor (the 1x1 convolution of each
            dense layer outputs ``bn_size * growth_rate`` channels). Default: 4.
        dropout (float, optional): dropout rate after each dense layer. Default: 0.0.
        num_classes (int, optional): output size of the last fc layer; if <= 0 it is not
            defined and the (pooled) features are returned. Default: 1000.
        with_pool (bool, optional): global average pooling before the fc layer.
            Default: True.

    Returns:
        fw.nn.Layer: a DenseNet model.

    Note:
        Paddle 3.3.1 fails in ``forward`` whenever ``with_pool=False`` (an unbound local);
        fw returns the final feature map ``[N, C, H, W]`` then (and, with
        ``num_classes > 0``, applies the fc layer to the flattened map, which must then
        be 1x1: an error says so otherwise).

    Examples:
        >>> import fw
        >>> from fw.vision.models import DenseNet
        >>> model = DenseNet(layers=121, num_classes=10)
        >>> model(fw.rand([1, 3, 32, 32])).shape
        [1, 10]
    """

    def __init__(self, layers: int = 121, bn_size: int = 4, dropout: float = 0.0,
                 num_classes: int = 1000, with_pool: bool = True):
        super().__init__()
        if layers not in _SPEC:
            raise InvalidArgumentError(
                f"DenseNet: 'layers' must be one of {sorted(_SPEC)}, got {layers!r}")
        self.num_classes = num_classes
        self.with_pool = with_pool
        num_init_features, growth_rate, block_config = _SPEC[layers]
        self.conv1_func = ConvBNLayer(3, num_init_features, 7, stride=2, pad=3, act="relu")
        self.pool2d_max = nn.MaxPool2D(kernel_size=3, stride=2, padding=1)
        self.block_config = block_config
        self.dense_block_func_list = []
        self.transition_func_list = []
        num_features = num_init_features
        for i, num_layers in enumerate(block_config):
            block = DenseBlock(num_features, num_layers, bn_size, growth_rate, dropout,
                               name=f"conv{i + 2}")
            self.dense_block_func_list.append(self.add_sublayer(f"db_conv_{i + 2}", block))
            num_features += num_layers * growth_rate
            if i != len(block_config) - 1:
                trans = TransitionLayer(num_features, num_features // 2)
                self.transition_func_list.append(
                    self.add_sublayer(f"tr_conv{i + 2}_blk", trans))
                num_features //= 2
        self.batch_norm = nn.BatchNorm(num_features, act="relu")
        if with_pool:
            self.pool2d_avg = nn.AdaptiveAvgPool2D(1)
        if num_classes > 0:
            # Paddle's initializer for the classifier: U(-1/sqrt(fan_in), 1/sqrt(fan_in))
            stdv = 1.0 / math.sqrt(num_features)
            self.out = nn.Linear(num_features, num_classes,
                                 weight_attr=fw.ParamAttr(initializer=I.Uniform(-stdv, stdv)))

    def forward(self, input):  # noqa: A002
        conv = self.pool2d_max(self.conv1_func(input))
        last = len(self.block_config) - 1
        for i in range(len(self.block_config)):
            conv = self.dense_block_func_list[i](conv)
            if i != last:
                conv = self.transition_func_list[i](conv)
        y = self.batch_norm(conv)
        if self.with_pool:
            y = self.pool2d_avg(y)
        if self.num_classes > 0:
            check_classifier_input("DenseNet", input.shape, y, self.out.weight.shape[0],
                                   "with with_pool=False the last feature map must be 1x1 "
                                   "(a 32x32 input), or use with_pool=True")
            y = self.out(fw.flatten(y, start_axis=1, stop_axis=-1))
        return y


def _densenet(arch, layers, pretrained, **kwargs):
    model = DenseNet(layers=layers, **kwargs)
    if pretrained:
        load_pretrained(model, arch, arch, model_urls, head=HEAD)
    return model


_DOC = """DenseNet-{layers} from "Densely Connected Convolutional Networks"
    (https://arxiv.org/abs/1608.06993).

    Args:
        pretrained (bool, optional): load Paddle's published ImageNet weights (through
            fw.hub's cache, md5 checked). Default: False.
        **kwargs: `DenseNet`'s arguments (bn_size, dropout, num_classes, with_pool).

    Returns:
        fw.nn.Layer: a `DenseNet` with ``layers={layers}``.

    Examples:
        >>> import fw
        >>> from fw.vision.models import densenet{layers}
        >>> model = densenet{layers}()
        >>> model(fw.rand([1, 3, 32, 32])).shape
        [1, 1000]
"""


def densenet121(pretrained: bool = False, **kwargs) -> DenseNet:
    return _densenet("densenet121", 121, pretrained, **kwargs)


def densenet161(pretrained: bool = False, **kwargs) -> DenseNet:
    return _densenet("densenet161", 161, pretrained, **kwargs)


def densenet169(pretrained: bool = False, **kwargs) -> DenseNet:
    return _densenet("densenet169", 169, pretrained, **kwargs)


def densenet201(pretrained: bool = False, **kwargs) -> DenseNet:
    return _densenet("densenet201", 201, pretrained, **kwargs)


def densenet264(pretrained: bool = False, **kwargs) -> DenseNet:
    return _densenet("densenet264", 264, pretrained, **kwargs)


for _fn in (densenet121, densenet161, densenet169, densenet201, densenet264):
    _fn.__doc__ = _DOC.format(layers=_fn.__name__[len("densenet"):])
del _fn
