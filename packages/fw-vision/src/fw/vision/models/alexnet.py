"""AlexNet (Paddle's ``paddle.vision.models.AlexNet`` / ``alexnet``: same layers,
initializers and parameter names, so Paddle's published weights load)."""

from __future__ import annotations

import math

import fw
from fw import nn
from fw.nn import functional as F
from fw.nn.initializer import Uniform
from fw.vision.models._utils import (
    check_classifier_input,
    check_pretrained_arch,
    load_pretrained,
)

__all__ = ["AlexNet", "alexnet"]

# Paddle's published weights (paddle/vision/models/alexnet.py, model_urls): url, md5
model_urls = {
    "alexnet": ("https://paddle-imagenet-models-name.bj.bcebos.com/dygraph/"
                "AlexNet_pretrained.pdparams", "7f0f9f737132e02732d75a1459d98a43"),
}


def _uniform_attr(stdv):
    return fw.ParamAttr(initializer=Uniform(-stdv, stdv))


class ConvPoolLayer(nn.Layer):
    """Conv2D (uniform init), optional ReLU, then 3x3/2 max pooling."""

    def __init__(self, input_channels, output_channels, filter_size, stride, padding, stdv,
                 groups=1, act=None):
        super().__init__()
        self.relu = nn.ReLU() if act == "relu" else None
        self._conv = nn.Conv2D(input_channels, output_channels, filter_size, stride=stride,
                               padding=padding, groups=groups,
                               weight_attr=_uniform_attr(stdv), bias_attr=_uniform_attr(stdv))
        self._pool = nn.MaxPool2D(kernel_size=3, stride=2, padding=0)

    def forward(self, inputs):
        x = self._conv(inputs)
        if self.relu is not None:
            x = self.relu(x)
        return self._pool(x)


class AlexNet(nn.Layer):
    """AlexNet, from "ImageNet Classification with Deep Convolutional Neural Networks"
    (Krizhevsky et al., 2012), in Paddle's layout (no adaptive pooling: the classifier
    needs a 224x224 input, or any size from 223 to 254).

    Args:
        num_classes (int, optional): output size of the last fc layer; if <= 0 the fc
            layers are not built and the forward returns the conv features
            ``[N, 256, 6, 6]``. Default: 1000.

    Returns:
        Layer: an AlexNet model.

    Examples:
        >>> import fw
        >>> from fw.vision.models import AlexNet
        >>> model = AlexNet(num_classes=0)
        >>> model(fw.rand([1, 3, 224, 224])).shape
        [1, 256, 6, 6]
    """

    def __init__(self, num_classes: int = 1000) -> None:
        super().__init__()
        self.num_classes = num_classes
        self._conv1 = ConvPoolLayer(3, 64, 11, 4, 2, 1.0 / math.sqrt(3 * 11 * 11), act="relu")
        self._conv2 = ConvPoolLayer(64, 192, 5, 1, 2, 1.0 / math.sqrt(64 * 5 * 5), act="relu")
        stdv = 1.0 / math.sqrt(192 * 3 * 3)
        self._conv3 = nn.Conv2D(192, 384, 3, stride=1, padding=1,
                                weight_attr=_uniform_attr(stdv), bias_attr=_uniform_attr(stdv))
        stdv = 1.0 / math.sqrt(384 * 3 * 3)
        self._conv4 = nn.Conv2D(384, 256, 3, stride=1, padding=1,
                                weight_attr=_uniform_attr(stdv), bias_attr=_uniform_attr(stdv))
        self._conv5 = ConvPoolLayer(256, 256, 3, 1, 1, 1.0 / math.sqrt(256 * 3 * 3), act="relu")
        if num_classes > 0:
            # Paddle uses one stdv (of fc6's fan-in) for all three fc layers
            stdv = 1.0 / math.sqrt(256 * 6 * 6)
            self._drop1 = nn.Dropout(p=0.5, mode="downscale_in_infer")
            self._fc6 = nn.Linear(256 * 6 * 6, 4096, weight_attr=_uniform_attr(stdv),
                                  bias_attr=_uniform_attr(stdv))
            self._drop2 = nn.Dropout(p=0.5, mode="downscale_in_infer")
            self._fc7 = nn.Linear(4096, 4096, weight_attr=_uniform_attr(stdv),
                                  bias_attr=_uniform_attr(stdv))
            self._fc8 = nn.Linear(4096, num_classes, weight_attr=_uniform_attr(stdv),
                                  bias_attr=_uniform_attr(stdv))

    def forward(self, inputs):
        x = self._conv1(inputs)
        x = self._conv2(x)
        x = F.relu(self._conv3(x))
        x = F.relu(self._conv4(x))
        x = self._conv5(x)
        if self.num_classes > 0:
            check_classifier_input("AlexNet", inputs.shape, x, 256 * 6 * 6,
                                   "AlexNet has no adaptive pooling: its classifier needs "
                                   "224x224 inputs (223 to 254 pixels), or use "
                                   "num_classes=0 for the features of other sizes")
            x = fw.flatten(x, start_axis=1, stop_axis=-1)
            x = F.relu(self._fc6(self._drop1(x)))
            x = F.relu(self._fc7(self._drop2(x)))
            x = self._fc8(x)
        return x


def alexnet(pretrained: bool = False, **kwargs) -> AlexNet:
    """AlexNet (see `AlexNet`), optionally with Paddle's ImageNet weights.

    Args:
        pretrained (bool, optional): load Paddle's published ImageNet weights (through
            fw.utils.download's cache, md5-checked). Default: False.
        **kwargs: `AlexNet`'s arguments (``num_classes``).

    Returns:
        Layer: an AlexNet model.

    Examples:
        >>> import fw
        >>> from fw.vision.models import alexnet
        >>> model = alexnet(num_classes=10)
        >>> model._fc8.weight.shape
        [4096, 10]
    """
    if pretrained:  # fail before building a model that cannot get weights
        check_pretrained_arch("alexnet", "alexnet", model_urls)
    model = AlexNet(**kwargs)
    if pretrained:
        load_pretrained(model, "alexnet", "alexnet", model_urls, head=("_fc",))
    return model
