"""InceptionV3 ("Rethinking the Inception Architecture for Computer Vision", Szegedy
et al. 2016) with Paddle 3.x's layout: sublayer names, argument names and defaults
follow ``paddle.vision.models.inceptionv3`` so Paddle's published ``.pdparams`` file
loads unchanged."""

from __future__ import annotations

import math

import fw
from fw import nn
from fw.core.errors import InvalidArgumentError
from fw.nn import initializer as I
from fw.vision.models._utils import ConvNormActivation, load_pretrained

__all__ = ["InceptionV3", "inception_v3"]

# Paddle's published ImageNet weights (URL, md5), from Paddle 3.3.1's model file
model_urls: dict[str, tuple[str, str]] = {
    "inception_v3": ("https://paddle-hapi.bj.bcebos.com/models/inception_v3.pdparams",
                     "649a4547c3243e8b59c656f41fe330b8"),
}

# the classifier's state-dict prefix: another num_classes keeps a fresh one when loading
HEAD = ("fc.",)


def _cbr(in_channels, out_channels, kernel_size, stride=1, padding=0):
    """Conv (no bias) + BatchNorm2D + ReLU, the unit every Inception branch is made of."""
    return ConvNormActivation(in_channels, out_channels, kernel_size, stride=stride,
                              padding=padding, activation_layer=nn.ReLU)


def _avg_pool_3x3():
    # padded zeros count in the average (exclusive=False), as Paddle's definition
    return nn.AvgPool2D(kernel_size=3, stride=1, padding=1, exclusive=False)


class InceptionStem(nn.Layer):
    """The stem: five convolutions and two max pools (299 px -> 35x35x192)."""

    def __init__(self):
        super().__init__()
        self.conv_1a_3x3 = _cbr(3, 32, 3, stride=2, padding=0)
        self.conv_2a_3x3 = _cbr(32, 32, 3, stride=1, padding=0)
        self.conv_2b_3x3 = _cbr(32, 64, 3, padding=1)
        self.max_pool = nn.MaxPool2D(kernel_size=3, stride=2, padding=0)
        self.conv_3b_1x1 = _cbr(64, 80, 1, padding=0)
        self.conv_4a_3x3 = _cbr(80, 192, 3, padding=0)

    def forward(self, x):
        x = self.conv_2b_3x3(self.conv_2a_3x3(self.conv_1a_3x3(x)))
        x = self.max_pool(x)
        x = self.conv_4a_3x3(self.conv_3b_1x1(x))
        return self.max_pool(x)


class InceptionA(nn.Layer):
    """35x35 module: 1x1, 5x5, double 3x3 and pool branches."""

    def __init__(self, num_channels, pool_features):
        super().__init__()
        self.branch1x1 = _cbr(num_channels, 64, 1)
        self.branch5x5_1 = _cbr(num_channels, 48, 1)
        self.branch5x5_2 = _cbr(48, 64, 5, padding=2)
        self.branch3x3dbl_1 = _cbr(num_channels, 64, 1)
        self.branch3x3dbl_2 = _cbr(64, 96, 3, padding=1)
        self.branch3x3dbl_3 = _cbr(96, 96, 3, padding=1)
        self.branch_pool = _avg_pool_3x3()
        self.branch_pool_conv = _cbr(num_channels, pool_features, 1)

    def forward(self, x):
        b1 = self.branch1x1(x)
        b5 = self.branch5x5_2(self.branch5x5_1(x))
        b3 = self.branch3x3dbl_3(self.branch3x3dbl_2(self.branch3x3dbl_1(x)))
        bp = self.branch_pool_conv(self.branch_pool(x))
        return fw.concat([b1, b5, b3, bp], axis=1)


class InceptionB(nn.Layer):
    """Grid reduction 35 -> 17: stride-2 3x3, double 3x3 and max-pool branches."""

    def __init__(self, num_channels):
        super().__init__()
        self.branch3x3 = _cbr(num_channels, 384, 3, stride=2, padding=0)
        self.branch3x3dbl_1 = _cbr(num_channels, 64, 1)
        self.branch3x3dbl_2 = _cbr(64, 96, 3, padding=1)
        self.branch3x3dbl_3 = _cbr(96, 96, 3, stride=2, padding=0)
        self.branch_pool = nn.MaxPool2D(kernel_size=3, stride=2)

    def forward(self, x):
        b3 = self.branch3x3(x)
        bd = self.branch3x3dbl_3(self.branch3x3dbl_2(self.branch3x3dbl_1(x)))
        return fw.concat([b3, bd, self.branch_pool(x)], axis=1)


class InceptionC(nn.Layer):
    """17x17 module with factorized 7x7 convolutions (1x7 and 7x1)."""

    def __init__(self, num_channels, channels_7x7):
        super().__init__()
        c7 = channels_7x7
        self.branch1x1 = _cbr(num_channels, 192, 1)
        self.branch7x7_1 = _cbr(num_channels, c7, 1)
        self.branch7x7_2 = _cbr(c7, c7, (1, 7), padding=(0, 3))
        self.branch7x7_3 = _cbr(c7, 192, (7, 1), padding=(3, 0))
        self.branch7x7dbl_1 = _cbr(num_channels, c7, 1)
        self.branch7x7dbl_2 = _cbr(c7, c7, (7, 1), padding=(3, 0))
        self.branch7x7dbl_3 = _cbr(c7, c7, (1, 7), padding=(0, 3))
        self.branch7x7dbl_4 = _cbr(c7, c7, (7, 1), padding=(3, 0))
        self.branch7x7dbl_5 = _cbr(c7, 192, (1, 7), padding=(0, 3))
        self.branch_pool = _avg_pool_3x3()
        self.branch_pool_conv = _cbr(num_channels, 192, 1)

    def forward(self, x):
        b1 = self.branch1x1(x)
        b7 = self.branch7x7_3(self.branch7x7_2(self.branch7x7_1(x)))
        bd = self.branch7x7dbl_1(x)
        for layer in (self.branch7x7dbl_2, self.branch7x7dbl_3, self.branch7x7dbl_4,
                      self.branch7x7dbl_5):
            bd = layer(bd)
        bp = self.branch_pool_conv(self.branch_pool(x))
        return fw.concat([b1, b7, bd, bp], axis=1)


class InceptionD(nn.Layer):
    """Grid reduction 17 -> 8: 3x3, 7x7x3 and max-pool branches."""

    def __init__(self, num_channels):
        super().__init__()
        self.branch3x3_1 = _cbr(num_channels, 192, 1)
        self.branch3x3_2 = _cbr(192, 320, 3, stride=2, padding=0)
        self.branch7x7x3_1 = _cbr(num_channels, 192, 1)
        self.branch7x7x3_2 = _cbr(192, 192, (1, 7), padding=(0, 3))
        self.branch7x7x3_3 = _cbr(192, 192, (7, 1), padding=(3, 0))
        self.branch7x7x3_4 = _cbr(192, 192, 3, stride=2, padding=0)
        self.branch_pool = nn.MaxPool2D(kernel_size=3, stride=2)

    def forward(self, x):
        b3 = self.branch3x3_2(self.branch3x3_1(x))
        b7 = self.branch7x7x3_1(x)
        for layer in (self.branch7x7x3_2, self.branch7x7x3_3, self.branch7x7x3_4):
            b7 = layer(b7)
        return fw.concat([b3, b7, self.branch_pool(x)], axis=1)


class InceptionE(nn.Layer):
    """8x8 module with expanded (parallel 1x3 and 3x1) branches."""

    def __init__(self, num_channels):
        super().__init__()
        self.branch1x1 = _cbr(num_channels, 320, 1)
        self.branch3x3_1 = _cbr(num_channels, 384, 1)
        self.branch3x3_2a = _cbr(384, 384, (1, 3), padding=(0, 1))
        self.branch3x3_2b = _cbr(384, 384, (3, 1), padding=(1, 0))
        self.branch3x3dbl_1 = _cbr(num_channels, 448, 1)
        self.branch3x3dbl_2 = _cbr(448, 384, 3, padding=1)
        self.branch3x3dbl_3a = _cbr(384, 384, (1, 3), padding=(0, 1))
        self.branch3x3dbl_3b = _cbr(384, 384, (3, 1), padding=(1, 0))
        self.branch_pool = _avg_pool_3x3()
        self.branch_pool_conv = _cbr(num_channels, 192, 1)

    def forward(self, x):
        b1 = self.branch1x1(x)
        b3 = self.branch3x3_1(x)
        b3 = fw.concat([self.branch3x3_2a(b3), self.branch3x3_2b(b3)], axis=1)
        bd = self.branch3x3dbl_2(self.branch3x3dbl_1(x))
        bd = fw.concat([self.branch3x3dbl_3a(bd), self.branch3x3dbl_3b(bd)], axis=1)
        bp = self.branch_pool_conv(self.branch_pool(x))
        return fw.concat([b1, b3, bd, bp], axis=1)


class InceptionV3(nn.Layer):
    """InceptionV3 model from "Rethinking the Inception Architecture for Computer
    Vision" (https://arxiv.org/abs/1512.00567).

    Args:
        num_classes (int, optional): output size of the last fc layer; if <= 0 it is not
            defined and the features are returned. Default: 1000.
        with_pool (bool, optional): global average pooling before the fc layer.
            Default: True.

    Returns:
        fw.nn.Layer: an InceptionV3 model. Inputs must be at least 75x75 pixels (the
        designed size is 299x299).

    Note:
        As in Paddle, the classifier reshapes the features to ``[-1, 2048]``: with
        ``with_pool=False`` and a feature map larger than 1x1 (inputs over 106 px) the
        output has ``N * H * W`` rows.

    Examples:
        >>> import fw
        >>> from fw.vision.models import InceptionV3
        >>> model = InceptionV3(num_classes=10)
        >>> model(fw.rand([1, 3, 75, 75])).shape
        [1, 10]
    """

    def __init__(self, num_classes: int = 1000, with_pool: bool = True):
        super().__init__()
        self.num_classes = num_classes
        self.with_pool = with_pool
        # Paddle's table of the module stack: (input channels, pool features) of the
        # A modules, (input channels, 7x7 channels) of the C modules, inputs of B, D, E
        self.layers_config = {
            "inception_a": [[192, 256, 288], [32, 64, 64]],
            "inception_b": [288],
            "inception_c": [[768, 768, 768, 768], [128, 160, 160, 192]],
            "inception_d": [768],
            "inception_e": [1280, 2048],
        }
        cfg = self.layers_config
        self.inception_stem = InceptionStem()
        self.inception_block_list = nn.LayerList()
        for c, p in zip(*cfg["inception_a"]):
            self.inception_block_list.append(InceptionA(c, p))
        for c in cfg["inception_b"]:
            self.inception_block_list.append(InceptionB(c))
        for c, c7 in zip(*cfg["inception_c"]):
            self.inception_block_list.append(InceptionC(c, c7))
        for c in cfg["inception_d"]:
            self.inception_block_list.append(InceptionD(c))
        for c in cfg["inception_e"]:
            self.inception_block_list.append(InceptionE(c))
        if with_pool:
            self.avg_pool = nn.AdaptiveAvgPool2D(1)
        if num_classes > 0:
            self.dropout = nn.Dropout(p=0.2, mode="downscale_in_infer")
            # Paddle's initializer for the classifier: U(-1/sqrt(fan_in), 1/sqrt(fan_in))
            stdv = 1.0 / math.sqrt(2048.0)
            self.fc = nn.Linear(2048, num_classes,
                                weight_attr=fw.ParamAttr(initializer=I.Uniform(-stdv, stdv)))

    def forward(self, x):
        # (a -1 is a dynamic size while tracing: checked when it is run)
        if len(x.shape) == 4 and any(0 <= d < 75 for d in x.shape[2:]):
            raise InvalidArgumentError(
                f"InceptionV3: the input must be at least 75x75 pixels, got shape "
                f"{list(x.shape)}")
        x = self.inception_stem(x)
        for block in self.inception_block_list:
            x = block(x)
        if self.with_pool:
            x = self.avg_pool(x)
        if self.num_classes > 0:
            x = self.fc(self.dropout(fw.reshape(x, [-1, 2048])))
        return x


def inception_v3(pretrained: bool = False, **kwargs) -> InceptionV3:
    """InceptionV3 from "Rethinking the Inception Architecture for Computer Vision"
    (https://arxiv.org/abs/1512.00567).

    Args:
        pretrained (bool, optional): load Paddle's published ImageNet weights (through
            fw.hub's cache, md5 checked). Default: False.
        **kwargs: `InceptionV3`'s arguments (num_classes, with_pool).

    Returns:
        fw.nn.Layer: an `InceptionV3`.

    Examples:
        >>> import fw
        >>> from fw.vision.models import inception_v3
        >>> inception_v3()(fw.rand([1, 3, 75, 75])).shape
        [1, 1000]
    """
    model = InceptionV3(**kwargs)
    if pretrained:
        load_pretrained(model, "inception_v3", "inception_v3", model_urls, head=HEAD)
    return model
