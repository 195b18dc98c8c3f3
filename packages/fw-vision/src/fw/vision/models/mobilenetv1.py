"""MobileNetV1 (Paddle's ``paddle.vision.models.MobileNetV1`` / ``mobilenet_v1``:
same blocks, arguments and parameter names, so Paddle's published weights load)."""

from __future__ import annotations

import fw
from fw import nn
from fw.vision.models._utils import (
    ConvNormActivation,
    check_classifier_input,
    check_pretrained_arch,
    load_pretrained,
)

__all__ = ["MobileNetV1", "mobilenet_v1"]

# Paddle's published weights (paddle/vision/models/mobilenetv1.py, model_urls): url, md5.
# The key is "mobilenetv1_" + str(scale): only scale 1.0 is published.
model_urls = {
    "mobilenetv1_1.0": ("https://paddle-hapi.bj.bcebos.com/models/mobilenetv1_1.0.pdparams",
                        "3033ab1975b1670bef51545feb65fc45"),
}

# (name, in, out1, out2, groups, stride) of the 13 depthwise-separable blocks, in
# Paddle's sublayer names (conv2_1 … conv6), before scaling
_BLOCKS = [("conv2_1", 32, 32, 64, 32, 1), ("conv2_2", 64, 64, 128, 64, 2),
           ("conv3_1", 128, 128, 128, 128, 1), ("conv3_2", 128, 128, 256, 128, 2),
           ("conv4_1", 256, 256, 256, 256, 1), ("conv4_2", 256, 256, 512, 256, 2)]
_BLOCKS += [(f"conv5_{i + 1}", 512, 512, 512, 512, 1) for i in range(5)]
_BLOCKS += [("conv5_6", 512, 512, 1024, 512, 2), ("conv6", 1024, 1024, 1024, 1024, 1)]


class DepthwiseSeparable(nn.Layer):
    """A 3x3 depthwise conv-BN-ReLU then a 1x1 pointwise conv-BN-ReLU."""

    def __init__(self, in_channels, out_channels1, out_channels2, num_groups, stride, scale):
        super().__init__()
        self._depthwise_conv = ConvNormActivation(
            in_channels, int(out_channels1 * scale), kernel_size=3, stride=stride, padding=1,
            groups=int(num_groups * scale))
        self._pointwise_conv = ConvNormActivation(
            int(out_channels1 * scale), int(out_channels2 * scale), kernel_size=1, stride=1,
            padding=0)

    def forward(self, x):
        return self._pointwise_conv(self._depthwise_conv(x))


class MobileNetV1(nn.Layer):
    """MobileNetV1, from "MobileNets: Efficient Convolutional Neural Networks for
    Mobile Vision Applications" (Howard et al., 2017), in Paddle's layout.

    Args:
        scale (float, optional): channel multiplier. Default: 1.0.
        num_classes (int, optional): output size of the fc layer; if <= 0 it is not
            built and the forward returns the features. Default: 1000.
        with_pool (bool, optional): apply global average pooling. Default: True.

    Returns:
        Layer: a MobileNetV1 model.

    Examples:
        >>> import fw
        >>> from fw.vision.models import MobileNetV1
        >>> model = MobileNetV1(scale=0.25, num_classes=10)
        >>> model(fw.rand([1, 3, 32, 32])).shape
        [1, 10]
    """

    def __init__(self, scale: float = 1.0, num_classes: int = 1000,
                 with_pool: bool = True) -> None:
        super().__init__()
        self.scale = scale
        self.num_classes = num_classes
        self.with_pool = with_pool
        self.conv1 = ConvNormActivation(3, int(32 * scale), kernel_size=3, stride=2, padding=1)
        # a plain list (not a LayerList): the blocks are registered under Paddle's names
        # conv2_1 … conv6 by add_sublayer, so the state dict matches Paddle's
        self.dwsl = []
        for name, cin, c1, c2, groups, stride in _BLOCKS:
            block = DepthwiseSeparable(int(cin * scale), c1, c2, groups, stride, scale)
            self.dwsl.append(self.add_sublayer(name, block))
        if with_pool:
            self.pool2d_avg = nn.AdaptiveAvgPool2D(1)
        if num_classes > 0:
            self.fc = nn.Linear(int(1024 * scale), num_classes)

    def forward(self, x):
        shape = x.shape
        x = self.conv1(x)
        for block in self.dwsl:
            x = block(x)
        if self.with_pool:
            x = self.pool2d_avg(x)
        if self.num_classes > 0:
            check_classifier_input("MobileNetV1", shape, x, self.fc.weight.shape[0],
                                   "without pooling (with_pool=False) the fc needs 1x1 "
                                   "features: 32x32 inputs; keep with_pool=True")
            x = fw.flatten(x, 1)
            x = self.fc(x)
        return x


def mobilenet_v1(pretrained: bool = False, scale: float = 1.0, **kwargs) -> MobileNetV1:
    """MobileNetV1 with channel multiplier `scale`.

    Args:
        pretrained (bool, optional): load Paddle's published ImageNet weights (published
            for scale 1.0 only; other scales raise a ValueError). Default: False.
        scale (float, optional): channel multiplier. Default: 1.0.
        **kwargs: `MobileNetV1`'s arguments (``num_classes``, ``with_pool``).

    Returns:
        Layer: a MobileNetV1 model.

    Examples:
        >>> import fw
        >>> from fw.vision.models import mobilenet_v1
        >>> mobilenet_v1(scale=0.5).fc.weight.shape
        [512, 1000]
    """
    if pretrained:  # fail before building a model that cannot get weights
        check_pretrained_arch("mobilenet_v1", "mobilenetv1_" + str(scale), model_urls)
    model = MobileNetV1(scale=scale, **kwargs)
    if pretrained:
        load_pretrained(model, "mobilenet_v1", "mobilenetv1_" + str(scale), model_urls,
                        head=("fc.",))
    return model
