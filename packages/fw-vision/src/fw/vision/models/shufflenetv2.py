"""ShuffleNetV2 ("ShuffleNet V2: Practical Guidelines for Efficient CNN Architecture
Design", Ma et al. 2018) with Paddle 3.x's layout: sublayer names, argument names and
defaults follow ``paddle.vision.models.shufflenetv2`` so Paddle's published
``.pdparams`` files load unchanged."""

from __future__ import annotations

import fw
from fw import nn
from fw.core.errors import InvalidArgumentError
from fw.vision.models._utils import ConvNormActivation, check_classifier_input, load_pretrained

__all__ = ["ShuffleNetV2", "shufflenet_v2_x0_25", "shufflenet_v2_x0_33", "shufflenet_v2_x0_5",
           "shufflenet_v2_x1_0", "shufflenet_v2_x1_5", "shufflenet_v2_x2_0",
           "shufflenet_v2_swish"]

# Paddle's published ImageNet weights (URL, md5), from Paddle 3.3.1's model file
model_urls: dict[str, tuple[str, str]] = {
    "shufflenet_v2_x0_25": (
        "https://paddle-hapi.bj.bcebos.com/models/shufflenet_v2_x0_25.pdparams",
        "1e509b4c140eeb096bb16e214796d03b"),
    "shufflenet_v2_x0_33": (
        "https://paddle-hapi.bj.bcebos.com/models/shufflenet_v2_x0_33.pdparams",
        "3d7b3ab0eaa5c0927ff1026d31b729bd"),
    "shufflenet_v2_x0_5": (
        "https://paddle-hapi.bj.bcebos.com/models/shufflenet_v2_x0_5.pdparams",
        "5e5cee182a7793c4e4c73949b1a71bd4"),
    "shufflenet_v2_x1_0": (
        "https://paddle-hapi.bj.bcebos.com/models/shufflenet_v2_x1_0.pdparams",
        "122d42478b9e81eb49f8a9ede327b1a4"),
    "shufflenet_v2_x1_5": (
        "https://paddle-hapi.bj.bcebos.com/models/shufflenet_v2_x1_5.pdparams",
        "faced5827380d73531d0ee027c67826d"),
    "shufflenet_v2_x2_0": (
        "https://paddle-hapi.bj.bcebos.com/models/shufflenet_v2_x2_0.pdparams",
        "cd3dddcd8305e7bcd8ad14d1c69a5784"),
    "shufflenet_v2_swish": (
        "https://paddle-hapi.bj.bcebos.com/models/shufflenet_v2_swish.pdparams",
        "adde0aa3b023e5b0c94a68be1c394b84"),
}

# output channels per stage (conv1, stage 2, 3, 4, last conv) for each width scale
_STAGE_OUT_CHANNELS = {
    0.25: [24, 24, 48, 96, 512],
    0.33: [24, 32, 64, 128, 512],
    0.5: [24, 48, 96, 192, 1024],
    1.0: [24, 116, 232, 464, 1024],
    1.5: [24, 176, 352, 704, 1024],
    2.0: [24, 224, 488, 976, 2048],
}
_STAGE_REPEATS = (4, 8, 4)
_ACTIVATIONS = {"relu": nn.ReLU, "swish": nn.Swish, None: None}
# the classifier's state-dict prefix: another num_classes keeps a fresh one when loading
HEAD = ("_fc.",)


def channel_shuffle(x, groups: int):
    """Interleave the channels of NCHW `x` across `groups` groups (the shuffle that
    lets information cross the two branches of a block)."""
    n, c, h, w = x.shape[0:4]
    x = fw.reshape(x, [n, groups, c // groups, h, w])
    x = fw.transpose(x, [0, 2, 1, 3, 4])
    return fw.reshape(x, [n, c, h, w])


class InvertedResidual(nn.Layer):
    """Stride-1 unit: half the channels pass through, the other half go through
    pointwise -> depthwise -> pointwise convolutions; then the halves are shuffled."""

    def __init__(self, in_channels, out_channels, stride, activation_layer=nn.ReLU):
        super().__init__()
        half = out_channels // 2
        self._conv_pw = ConvNormActivation(in_channels // 2, half, 1, 1, 0, groups=1,
                                           activation_layer=activation_layer)
        self._conv_dw = ConvNormActivation(half, half, 3, stride, 1, groups=half,
                                           activation_layer=None)
        self._conv_linear = ConvNormActivation(half, half, 1, 1, 0, groups=1,
                                               activation_layer=activation_layer)

    def forward(self, inputs):
        c = inputs.shape[1]
        x1, x2 = fw.split(inputs, num_or_sections=[c // 2, c // 2], axis=1)
        x2 = self._conv_linear(self._conv_dw(self._conv_pw(x2)))
        return channel_shuffle(fw.concat([x1, x2], axis=1), 2)


class InvertedResidualDS(nn.Layer):
    """Down-sampling unit: both branches see the whole input (stride 2)."""

    def __init__(self, in_channels, out_channels, stride, activation_layer=nn.ReLU):
        super().__init__()
        half = out_channels // 2
        self._conv_dw_1 = ConvNormActivation(in_channels, in_channels, 3, stride, 1,
                                             groups=in_channels, activation_layer=None)
        self._conv_linear_1 = ConvNormActivation(in_channels, half, 1, 1, 0, groups=1,
                                                 activation_layer=activation_layer)
        self._conv_pw_2 = ConvNormActivation(in_channels, half, 1, 1, 0, groups=1,
                                             activation_layer=activation_layer)
        self._conv_dw_2 = ConvNormActivation(half, half, 3, stride, 1, groups=half,
                                             activation_layer=None)
        self._conv_linear_2 = ConvNormActivation(half, half, 1, 1, 0, groups=1,
                                                 activation_layer=activation_layer)

    def forward(self, inputs):
        x1 = self._conv_linear_1(self._conv_dw_1(inputs))
        x2 = self._conv_linear_2(self._conv_dw_2(self._conv_pw_2(inputs)))
        return channel_shuffle(fw.concat([x1, x2], axis=1), 2)


class ShuffleNetV2(nn.Layer):
    """ShuffleNetV2 model from "ShuffleNet V2: Practical Guidelines for Efficient CNN
    Architecture Design" (https://arxiv.org/abs/1807.11164).

    Args:
        scale (float, optional): width multiplier of the output channels, one of 0.25,
            0.33, 0.5, 1.0, 1.5, 2.0. Default: 1.0.
        act (str|None, optional): activation, "relu", "swish" or None. Default: "relu".
        num_classes (int, optional): output size of the last fc layer; if <= 0 the fc
            layer is not defined and the features are returned. Default: 1000.
        with_pool (bool, optional): average-pool before the fc layer. Default: True.

    Returns:
        fw.nn.Layer: a ShuffleNetV2 model; its output is ``[N, num_classes]``.

    Examples:
        >>> import fw
        >>> from fw.vision.models import ShuffleNetV2
        >>> model = ShuffleNetV2(scale=0.25, act="swish")
        >>> model(fw.rand([1, 3, 64, 64])).shape
        [1, 1000]
    """

    def __init__(self, scale: float = 1.0, act: str | None = "relu", num_classes: int = 1000,
                 with_pool: bool = True):
        super().__init__()
        if scale not in _STAGE_OUT_CHANNELS:
            raise InvalidArgumentError(
                f"ShuffleNetV2: 'scale' must be one of {sorted(_STAGE_OUT_CHANNELS)}, "
                f"got {scale!r}")
        if act not in _ACTIVATIONS:
            raise InvalidArgumentError(
                f"ShuffleNetV2: 'act' must be 'relu', 'swish' or None, got {act!r}")
        self.scale = scale
        self.num_classes = num_classes
        self.with_pool = with_pool
        activation_layer = _ACTIVATIONS[act]
        channels = _STAGE_OUT_CHANNELS[scale]

        self._conv1 = ConvNormActivation(3, channels[0], 3, 2, 1,
                                         activation_layer=activation_layer)
        self._max_pool = nn.MaxPool2D(kernel_size=3, stride=2, padding=1)
        # blocks are registered directly on the model under "<stage>_<i>" (Paddle's
        # state-dict names, e.g. "2_1._conv_dw_1.0.weight"), not in a container
        self._block_list = []
        for stage, repeats in enumerate(_STAGE_REPEATS):
            in_c, out_c = channels[stage], channels[stage + 1]
            for i in range(repeats):
                if i == 0:
                    block = InvertedResidualDS(in_c, out_c, 2, activation_layer)
                else:
                    block = InvertedResidual(out_c, out_c, 1, activation_layer)
                self._block_list.append(self.add_sublayer(f"{stage + 2}_{i + 1}", block))
        self._last_conv = ConvNormActivation(channels[-2], channels[-1], 1, 1, 0,
                                             activation_layer=activation_layer)
        if with_pool:
            self._pool2d_avg = nn.AdaptiveAvgPool2D(1)
        if num_classes > 0:
            self._out_c = channels[-1]
            self._fc = nn.Linear(channels[-1], num_classes)

    def forward(self, inputs):
        x = self._max_pool(self._conv1(inputs))
        for block in self._block_list:
            x = block(x)
        x = self._last_conv(x)
        if self.with_pool:
            x = self._pool2d_avg(x)
        if self.num_classes > 0:
            check_classifier_input("ShuffleNetV2", inputs.shape, x, self._out_c,
                                   "with with_pool=False the last feature map must be 1x1 "
                                   "(a 32x32 input), or use with_pool=True")
            x = self._fc(fw.flatten(x, start_axis=1, stop_axis=-1))
        return x


def _shufflenet_v2(arch, pretrained, scale=1.0, **kwargs):
    model = ShuffleNetV2(scale=scale, **kwargs)
    if pretrained:
        load_pretrained(model, arch, arch, model_urls, head=HEAD)
    return model


_DOC = """ShuffleNetV2 with {what}, as in "ShuffleNet V2: Practical Guidelines for Efficient
    CNN Architecture Design" (https://arxiv.org/abs/1807.11164).

    Args:
        pretrained (bool, optional): load Paddle's published ImageNet weights (through
            fw.hub's cache, md5 checked). Default: False.
        **kwargs: `ShuffleNetV2`'s arguments ({kwargs}).

    Returns:
        fw.nn.Layer: a `ShuffleNetV2`.

    Examples:
        >>> import fw
        >>> from fw.vision.models import {name}
        >>> model = {name}()
        >>> model(fw.rand([1, 3, 64, 64])).shape
        [1, 1000]
"""


def shufflenet_v2_x0_25(pretrained: bool = False, **kwargs) -> ShuffleNetV2:
    return _shufflenet_v2("shufflenet_v2_x0_25", pretrained, scale=0.25, **kwargs)


def shufflenet_v2_x0_33(pretrained: bool = False, **kwargs) -> ShuffleNetV2:
    return _shufflenet_v2("shufflenet_v2_x0_33", pretrained, scale=0.33, **kwargs)


def shufflenet_v2_x0_5(pretrained: bool = False, **kwargs) -> ShuffleNetV2:
    return _shufflenet_v2("shufflenet_v2_x0_5", pretrained, scale=0.5, **kwargs)


def shufflenet_v2_x1_0(pretrained: bool = False, **kwargs) -> ShuffleNetV2:
    return _shufflenet_v2("shufflenet_v2_x1_0", pretrained, scale=1.0, **kwargs)


def shufflenet_v2_x1_5(pretrained: bool = False, **kwargs) -> ShuffleNetV2:
    return _shufflenet_v2("shufflenet_v2_x1_5", pretrained, scale=1.5, **kwargs)


def shufflenet_v2_x2_0(pretrained: bool = False, **kwargs) -> ShuffleNetV2:
    return _shufflenet_v2("shufflenet_v2_x2_0", pretrained, scale=2.0, **kwargs)


def shufflenet_v2_swish(pretrained: bool = False, **kwargs) -> ShuffleNetV2:
    return _shufflenet_v2("shufflenet_v2_swish", pretrained, scale=1.0, act="swish",
                          **kwargs)


for _fn, _what in [(shufflenet_v2_x0_25, "0.25x output channels"),
                   (shufflenet_v2_x0_33, "0.33x output channels"),
                   (shufflenet_v2_x0_5, "0.5x output channels"),
                   (shufflenet_v2_x1_0, "1.0x output channels"),
                   (shufflenet_v2_x1_5, "1.5x output channels"),
                   (shufflenet_v2_x2_0, "2.0x output channels"),
                   (shufflenet_v2_swish, "the swish activation (1.0x output channels)")]:
    _kw = "num_classes, with_pool" if _fn is shufflenet_v2_swish else "act, num_classes, with_pool"
    _fn.__doc__ = _DOC.format(what=_what, name=_fn.__name__, kwargs=_kw)
del _fn, _what, _kw
