"""MobileNetV2 (Paddle's ``paddle.vision.models.MobileNetV2`` / ``mobilenet_v2``:
same blocks, arguments and parameter names, so Paddle's published weights load)."""

from __future__ import annotations

import fw
from fw import nn
from fw.vision.models._utils import (
    ConvNormActivation,
    _make_divisible,
    check_classifier_input,
    check_pretrained_arch,
    load_pretrained,
)

__all__ = ["MobileNetV2", "mobilenet_v2"]

# Paddle's published weights (paddle/vision/models/mobilenetv2.py, model_urls): url, md5.
# The key is "mobilenetv2_" + str(scale): only scale 1.0 is published.
model_urls = {
    "mobilenetv2_1.0": ("https://paddle-hapi.bj.bcebos.com/models/mobilenet_v2_x1.0.pdparams",
                        "0340af0a901346c8d46f4529882fb63d"),
}

# (expansion t, channels c, repeats n, first stride s), Sandler et al., 2018, table 2
_SETTING = [[1, 16, 1, 1], [6, 24, 2, 2], [6, 32, 3, 2], [6, 64, 4, 2], [6, 96, 3, 1],
            [6, 160, 3, 2], [6, 320, 1, 1]]


class InvertedResidual(nn.Layer):
    """1x1 expand (ReLU6), 3x3 depthwise (ReLU6), 1x1 linear projection; a residual
    connection when the shape is kept."""

    def __init__(self, inp, oup, stride, expand_ratio, norm_layer=nn.BatchNorm2D):
        super().__init__()
        if stride not in (1, 2):
            raise ValueError(f"InvertedResidual: 'stride' must be 1 or 2, got {stride!r}")
        self.stride = stride
        hidden_dim = int(round(inp * expand_ratio))
        self.use_res_connect = stride == 1 and inp == oup
        layers = []
        if expand_ratio != 1:
            layers.append(ConvNormActivation(inp, hidden_dim, kernel_size=1,
                                             norm_layer=norm_layer, activation_layer=nn.ReLU6))
        layers += [ConvNormActivation(hidden_dim, hidden_dim, stride=stride, groups=hidden_dim,
                                      norm_layer=norm_layer, activation_layer=nn.ReLU6),
                   nn.Conv2D(hidden_dim, oup, 1, 1, 0, bias_attr=False), norm_layer(oup)]
        self.conv = nn.Sequential(*layers)

    def forward(self, x):
        if self.use_res_connect:
            return x + self.conv(x)
        return self.conv(x)


class MobileNetV2(nn.Layer):
    """MobileNetV2, from "MobileNetV2: Inverted Residuals and Linear Bottlenecks"
    (Sandler et al., 2018), in Paddle's layout.

    Args:
        scale (float, optional): channel multiplier (channels rounded to multiples of 8).
            Default: 1.0.
        num_classes (int, optional): output size of the classifier; if <= 0 it is not
            built and the forward returns the features. Default: 1000.
        with_pool (bool, optional): apply global average pooling. Default: True.

    Returns:
        Layer: a MobileNetV2 model.

    Examples:
        >>> import fw
        >>> from fw.vision.models import MobileNetV2
        >>> model = MobileNetV2(scale=0.5, num_classes=10)
        >>> model(fw.rand([1, 3, 32, 32])).shape
        [1, 10]
    """

    def __init__(self, scale: float = 1.0, num_classes: int = 1000,
                 with_pool: bool = True) -> None:
        super().__init__()
        self.num_classes = num_classes
        self.with_pool = with_pool
        round_nearest = 8
        norm_layer = nn.BatchNorm2D
        input_channel = _make_divisible(32 * scale, round_nearest)
        # the last conv never shrinks below 1280 channels (it widens for scale > 1)
        self.last_channel = _make_divisible(1280 * max(1.0, scale), round_nearest)
        features = [ConvNormActivation(3, input_channel, stride=2, norm_layer=norm_layer,
                                       activation_layer=nn.ReLU6)]
        for t, c, n, s in _SETTING:
            output_channel = _make_divisible(c * scale, round_nearest)
            for i in range(n):
                features.append(InvertedResidual(input_channel, output_channel,
                                                 s if i == 0 else 1, expand_ratio=t,
                                                 norm_layer=norm_layer))
                input_channel = output_channel
        features.append(ConvNormActivation(input_channel, self.last_channel, kernel_size=1,
                                           norm_layer=norm_layer, activation_layer=nn.ReLU6))
        self.features = nn.Sequential(*features)
        if with_pool:
            self.pool2d_avg = nn.AdaptiveAvgPool2D(1)
        if num_classes > 0:
            self.classifier = nn.Sequential(nn.Dropout(0.2),
                                            nn.Linear(self.last_channel, num_classes))

    def forward(self, x):
        shape = x.shape
        x = self.features(x)
        if self.with_pool:
            x = self.pool2d_avg(x)
        if self.num_classes > 0:
            check_classifier_input("MobileNetV2", shape, x, self.last_channel,
                                   "without pooling (with_pool=False) the classifier "
                                   "needs 1x1 features: 32x32 inputs; keep with_pool=True")
            x = fw.flatten(x, 1)
            x = self.classifier(x)
        return x


def mobilenet_v2(pretrained: bool = False, scale: float = 1.0, **kwargs) -> MobileNetV2:
    """MobileNetV2 with channel multiplier `scale`.

    Args:
        pretrained (bool, optional): load Paddle's published ImageNet weights (published
            for scale 1.0 only; other scales raise a ValueError). Default: False.
        scale (float, optional): channel multiplier. Default: 1.0.
        **kwargs: `MobileNetV2`'s arguments (``num_classes``, ``with_pool``).

    Returns:
        Layer: a MobileNetV2 model.

    Examples:
        >>> import fw
        >>> from fw.vision.models import mobilenet_v2
        >>> mobilenet_v2(scale=0.5).classifier[1].weight.shape
        [1280, 1000]
    """
    if pretrained:  # fail before building a model that cannot get weights
        check_pretrained_arch("mobilenet_v2", "mobilenetv2_" + str(scale), model_urls)
    model = MobileNetV2(scale=scale, **kwargs)
    if pretrained:
        load_pretrained(model, "mobilenet_v2", "mobilenetv2_" + str(scale), model_urls,
                        head=("classifier.",))
    return model
