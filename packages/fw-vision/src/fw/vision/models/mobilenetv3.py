"""MobileNetV3 small and large (Paddle's ``paddle.vision.models.MobileNetV3Small`` /
``MobileNetV3Large`` / ``mobilenet_v3_small`` / ``mobilenet_v3_large``: same blocks,
arguments and parameter names, so Paddle's published weights load)."""

from __future__ import annotations

from functools import partial

import fw
from fw import nn
from fw.vision.models._utils import (
    ConvNormActivation,
    _make_divisible,
    check_classifier_input,
    check_pretrained_arch,
    load_pretrained,
)

__all__ = ["MobileNetV3Small", "MobileNetV3Large", "mobilenet_v3_small", "mobilenet_v3_large"]

_HAPI = "https://paddle-hapi.bj.bcebos.com/models/"
# Paddle's published weights (paddle/vision/models/mobilenetv3.py, model_urls): url, md5.
# The key is f"{arch}_x{scale}": only scale 1.0 is published.
model_urls = {
    "mobilenet_v3_small_x1.0": (_HAPI + "mobilenet_v3_small_x1.0.pdparams",
                                "34fe0e7c1f8b00b2b056ad6788d0590c"),
    "mobilenet_v3_large_x1.0": (_HAPI + "mobilenet_v3_large_x1.0.pdparams",
                                "118db5792b4e183b925d8e8e334db3df"),
}


class SqueezeExcitation(nn.Layer):
    """Channel attention: global pool, 1x1 squeeze (activation), 1x1 excite (scale
    activation), times the input."""

    def __init__(self, input_channels, squeeze_channels, activation=nn.ReLU,
                 scale_activation=nn.Sigmoid):
        super().__init__()
        self.avgpool = nn.AdaptiveAvgPool2D(1)
        self.fc1 = nn.Conv2D(input_channels, squeeze_channels, 1)
        self.fc2 = nn.Conv2D(squeeze_channels, input_channels, 1)
        self.activation = activation()
        self.scale_activation = scale_activation()

    def forward(self, input):  # noqa: A002
        scale = self.activation(self.fc1(self.avgpool(input)))
        return self.scale_activation(self.fc2(scale)) * input


class InvertedResidualConfig:
    """One block's settings, channels already scaled and rounded to multiples of 8."""

    def __init__(self, in_channels, kernel, expanded_channels, out_channels, use_se,
                 activation, stride, scale=1.0):
        self.in_channels = self.adjust_channels(in_channels, scale=scale)
        self.kernel = kernel
        self.expanded_channels = self.adjust_channels(expanded_channels, scale=scale)
        self.out_channels = self.adjust_channels(out_channels, scale=scale)
        self.use_se = use_se
        acts = {None: None, "relu": nn.ReLU, "hardswish": nn.Hardswish}
        if activation not in acts:
            raise ValueError(f"InvertedResidualConfig: 'activation' must be None, 'relu' or "
                             f"'hardswish', got {activation!r}")
        self.activation_layer = acts[activation]
        self.stride = stride

    @staticmethod
    def adjust_channels(channels, scale=1.0):
        return _make_divisible(channels * scale, 8)


class InvertedResidual(nn.Layer):
    """Expand (1x1), depthwise (kxk), optional squeeze-excitation, project (1x1);
    a residual connection when the shape is kept."""

    def __init__(self, in_channels, expanded_channels, out_channels, filter_size, stride,
                 use_se, activation_layer, norm_layer):
        super().__init__()
        self.use_res_connect = stride == 1 and in_channels == out_channels
        self.use_se = use_se
        self.expand = in_channels != expanded_channels
        if self.expand:
            self.expand_conv = ConvNormActivation(
                in_channels, expanded_channels, kernel_size=1, stride=1, padding=0,
                norm_layer=norm_layer, activation_layer=activation_layer)
        self.bottleneck_conv = ConvNormActivation(
            expanded_channels, expanded_channels, kernel_size=filter_size, stride=stride,
            padding=int((filter_size - 1) // 2), groups=expanded_channels,
            norm_layer=norm_layer, activation_layer=activation_layer)
        if use_se:
            self.mid_se = SqueezeExcitation(expanded_channels,
                                            _make_divisible(expanded_channels // 4),
                                            scale_activation=nn.Hardsigmoid)
        self.linear_conv = ConvNormActivation(expanded_channels, out_channels, kernel_size=1,
                                              stride=1, padding=0, norm_layer=norm_layer,
                                              activation_layer=None)

    def forward(self, x):
        identity = x
        if self.expand:
            x = self.expand_conv(x)
        x = self.bottleneck_conv(x)
        if self.use_se:
            x = self.mid_se(x)
        x = self.linear_conv(x)
        if self.use_res_connect:
            x = fw.add(identity, x)
        return x


class MobileNetV3(nn.Layer):
    """The MobileNetV3 body shared by the small and large variants.

    Args:
        config (list[InvertedResidualConfig]): the blocks.
        last_channel (int): width of the classifier's hidden layer.
        scale (float, optional): channel multiplier (already applied in `config`).
            Default: 1.0.
        num_classes (int, optional): output size of the classifier; if <= 0 it is not
            built and the forward returns the features. Default: 1000.
        with_pool (bool, optional): apply global average pooling. Default: True.

    Returns:
        Layer: a MobileNetV3 model.

    Examples:
        >>> import fw
        >>> from fw.vision.models.mobilenetv3 import InvertedResidualConfig, MobileNetV3
        >>> cfg = [InvertedResidualConfig(16, 3, 16, 16, True, "relu", 2)]
        >>> MobileNetV3(cfg, last_channel=32, num_classes=4)(fw.rand([1, 3, 16, 16])).shape
        [1, 4]
    """

    def __init__(self, config, last_channel, scale=1.0, num_classes=1000, with_pool=True):
        super().__init__()
        self.config = config
        self.scale = scale
        self.last_channel = last_channel
        self.num_classes = num_classes
        self.with_pool = with_pool
        self.firstconv_in_channels = config[0].in_channels
        self.lastconv_in_channels = config[-1].in_channels
        self.lastconv_out_channels = self.lastconv_in_channels * 6
        # Paddle's MobileNetV3 batch norm: epsilon 1e-3, momentum 0.99
        norm_layer = partial(nn.BatchNorm2D, epsilon=0.001, momentum=0.99)
        self.conv = ConvNormActivation(3, self.firstconv_in_channels, kernel_size=3, stride=2,
                                       padding=1, groups=1, activation_layer=nn.Hardswish,
                                       norm_layer=norm_layer)
        self.blocks = nn.Sequential(*[
            InvertedResidual(cfg.in_channels, cfg.expanded_channels, cfg.out_channels,
                             cfg.kernel, cfg.stride, cfg.use_se, cfg.activation_layer,
                             norm_layer)
            for cfg in config])
        self.lastconv = ConvNormActivation(self.lastconv_in_channels,
                                           self.lastconv_out_channels, kernel_size=1, stride=1,
                                           padding=0, groups=1, norm_layer=norm_layer,
                                           activation_layer=nn.Hardswish)
        if with_pool:
            self.avgpool = nn.AdaptiveAvgPool2D(1)
        if num_classes > 0:
            self.classifier = nn.Sequential(
                nn.Linear(self.lastconv_out_channels, last_channel), nn.Hardswish(),
                nn.Dropout(p=0.2), nn.Linear(last_channel, num_classes))

    def forward(self, x):
        shape = x.shape
        x = self.lastconv(self.blocks(self.conv(x)))
        if self.with_pool:
            x = self.avgpool(x)
        if self.num_classes > 0:
            check_classifier_input(type(self).__name__, shape, x, self.lastconv_out_channels,
                                   "without pooling (with_pool=False) the classifier "
                                   "needs 1x1 features: 32x32 inputs; keep with_pool=True")
            x = fw.flatten(x, 1)
            x = self.classifier(x)
        return x


# (in, kernel, expanded, out, use_se, activation, stride), Howard et al., 2019, tables 1-2
_SMALL = [(16, 3, 16, 16, True, "relu", 2), (16, 3, 72, 24, False, "relu", 2),
          (24, 3, 88, 24, False, "relu", 1), (24, 5, 96, 40, True, "hardswish", 2),
          (40, 5, 240, 40, True, "hardswish", 1), (40, 5, 240, 40, True, "hardswish", 1),
          (40, 5, 120, 48, True, "hardswish", 1), (48, 5, 144, 48, True, "hardswish", 1),
          (48, 5, 288, 96, True, "hardswish", 2), (96, 5, 576, 96, True, "hardswish", 1),
          (96, 5, 576, 96, True, "hardswish", 1)]
_LARGE = [(16, 3, 16, 16, False, "relu", 1), (16, 3, 64, 24, False, "relu", 2),
          (24, 3, 72, 24, False, "relu", 1), (24, 5, 72, 40, True, "relu", 2),
          (40, 5, 120, 40, True, "relu", 1), (40, 5, 120, 40, True, "relu", 1),
          (40, 3, 240, 80, False, "hardswish", 2), (80, 3, 200, 80, False, "hardswish", 1),
          (80, 3, 184, 80, False, "hardswish", 1), (80, 3, 184, 80, False, "hardswish", 1),
          (80, 3, 480, 112, True, "hardswish", 1), (112, 3, 672, 112, True, "hardswish", 1),
          (112, 5, 672, 160, True, "hardswish", 2), (160, 5, 960, 160, True, "hardswish", 1),
          (160, 5, 960, 160, True, "hardswish", 1)]


class MobileNetV3Small(MobileNetV3):
    """MobileNetV3-Small, from "Searching for MobileNetV3" (Howard et al., 2019), in
    Paddle's layout.

    Args:
        scale (float, optional): channel multiplier. Default: 1.0.
        num_classes (int, optional): output size of the classifier; if <= 0 it is not
            built and the forward returns the features. Default: 1000.
        with_pool (bool, optional): apply global average pooling. Default: True.

    Returns:
        Layer: a MobileNetV3Small model.

    Examples:
        >>> import fw
        >>> from fw.vision.models import MobileNetV3Small
        >>> MobileNetV3Small(num_classes=10)(fw.rand([1, 3, 32, 32])).shape
        [1, 10]
    """

    def __init__(self, scale: float = 1.0, num_classes: int = 1000,
                 with_pool: bool = True) -> None:
        config = [InvertedResidualConfig(*c, scale) for c in _SMALL]
        super().__init__(config, last_channel=_make_divisible(1024 * scale, 8), scale=scale,
                         with_pool=with_pool, num_classes=num_classes)


class MobileNetV3Large(MobileNetV3):
    """MobileNetV3-Large, from "Searching for MobileNetV3" (Howard et al., 2019), in
    Paddle's layout.

    Args:
        scale (float, optional): channel multiplier. Default: 1.0.
        num_classes (int, optional): output size of the classifier; if <= 0 it is not
            built and the forward returns the features. Default: 1000.
        with_pool (bool, optional): apply global average pooling. Default: True.

    Returns:
        Layer: a MobileNetV3Large model.

    Examples:
        >>> import fw
        >>> from fw.vision.models import MobileNetV3Large
        >>> MobileNetV3Large(num_classes=0)(fw.rand([1, 3, 32, 32])).shape
        [1, 960, 1, 1]
    """

    def __init__(self, scale: float = 1.0, num_classes: int = 1000,
                 with_pool: bool = True) -> None:
        config = [InvertedResidualConfig(*c, scale) for c in _LARGE]
        super().__init__(config, last_channel=_make_divisible(1280 * scale, 8), scale=scale,
                         with_pool=with_pool, num_classes=num_classes)


def _mobilenet_v3(arch, cls, pretrained, scale, kwargs):
    if pretrained:  # fail before building a model that cannot get weights
        check_pretrained_arch(arch, f"{arch}_x{scale}", model_urls)
    model = cls(scale=scale, **kwargs)
    if pretrained:
        load_pretrained(model, arch, f"{arch}_x{scale}", model_urls, head=("classifier.",))
    return model


def mobilenet_v3_small(pretrained: bool = False, scale: float = 1.0,
                       **kwargs) -> MobileNetV3Small:
    """MobileNetV3-Small with channel multiplier `scale`.

    Args:
        pretrained (bool, optional): load Paddle's published ImageNet weights (published
            for scale 1.0 only; other scales raise a ValueError). Default: False.
        scale (float, optional): channel multiplier. Default: 1.0.
        **kwargs: `MobileNetV3Small`'s arguments (``num_classes``, ``with_pool``).

    Returns:
        Layer: a MobileNetV3Small model.

    Examples:
        >>> import fw
        >>> from fw.vision.models import mobilenet_v3_small
        >>> mobilenet_v3_small(scale=0.75).classifier[3].weight.shape
        [768, 1000]
    """
    return _mobilenet_v3("mobilenet_v3_small", MobileNetV3Small, pretrained, scale, kwargs)


def mobilenet_v3_large(pretrained: bool = False, scale: float = 1.0,
                       **kwargs) -> MobileNetV3Large:
    """MobileNetV3-Large with channel multiplier `scale`.

    Args:
        pretrained (bool, optional): load Paddle's published ImageNet weights (published
            for scale 1.0 only; other scales raise a ValueError). Default: False.
        scale (float, optional): channel multiplier. Default: 1.0.
        **kwargs: `MobileNetV3Large`'s arguments (``num_classes``, ``with_pool``).

    Returns:
        Layer: a MobileNetV3Large model.

    Examples:
        >>> import fw
        >>> from fw.vision.models import mobilenet_v3_large
        >>> mobilenet_v3_large().classifier[0].weight.shape
        [960, 1280]
    """
    return _mobilenet_v3("mobilenet_v3_large", MobileNetV3Large, pretrained, scale, kwargs)
