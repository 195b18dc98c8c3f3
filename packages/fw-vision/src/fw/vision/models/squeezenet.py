"""SqueezeNet ("SqueezeNet: AlexNet-level accuracy with 50x fewer parameters and
<0.5MB model size", Iandola et al. 2016), versions 1.0 and 1.1, with Paddle 3.x's
layout: sublayer names, argument names and defaults follow
``paddle.vision.models.squeezenet`` so Paddle's published ``.pdparams`` files load
unchanged."""

from __future__ import annotations

import fw
from fw import nn
from fw.core.errors import InvalidArgumentError
from fw.nn import functional as F
from fw.vision.models._utils import load_pretrained

__all__ = ["SqueezeNet", "squeezenet1_0", "squeezenet1_1"]

# Paddle's published ImageNet weights (URL, md5), from Paddle 3.3.1's model file
model_urls: dict[str, tuple[str, str]] = {
    "squeezenet1_0": (
        "https://paddle-imagenet-models-name.bj.bcebos.com/dygraph/"
        "SqueezeNet1_0_pretrained.pdparams",
        "30b95af60a2178f03cf9b66cd77e1db1"),
    "squeezenet1_1": (
        "https://paddle-imagenet-models-name.bj.bcebos.com/dygraph/"
        "SqueezeNet1_1_pretrained.pdparams",
        "a11250d3a1f91d7131fd095ebbf09eee"),
}


class MakeFireConv(nn.Layer):
    """A biased convolution followed by ReLU."""

    def __init__(self, input_channels, output_channels, filter_size, padding=0):
        super().__init__()
        self._conv = nn.Conv2D(input_channels, output_channels, filter_size, padding=padding)

    def forward(self, x):
        return F.relu(self._conv(x))


class MakeFire(nn.Layer):
    """The Fire module: a 1x1 squeeze, then 1x1 and 3x3 expands concatenated."""

    def __init__(self, input_channels, squeeze_channels, expand1x1_channels,
                 expand3x3_channels):
        super().__init__()
        self._conv = MakeFireConv(input_channels, squeeze_channels, 1)
        self._conv_path1 = MakeFireConv(squeeze_channels, expand1x1_channels, 1)
        self._conv_path2 = MakeFireConv(squeeze_channels, expand3x3_channels, 3, padding=1)

    def forward(self, inputs):
        x = self._conv(inputs)
        return fw.concat([self._conv_path1(x), self._conv_path2(x)], axis=1)


# the classifier's state-dict prefix: another num_classes keeps a fresh one when loading
HEAD = ("_conv9.",)
# Fire modules (input, squeeze, expand 1x1, expand 3x3), shared by both versions
_FIRES = [(None, 16, 64, 64), (128, 16, 64, 64), (128, 32, 128, 128), (256, 32, 128, 128),
          (256, 48, 192, 192), (384, 48, 192, 192), (384, 64, 256, 256), (512, 64, 256, 256)]
# after which Fire modules (1-based) the max pool runs
_POOL_AFTER = {"1.0": (3, 7), "1.1": (2, 4)}


class SqueezeNet(nn.Layer):
    """SqueezeNet model from "SqueezeNet: AlexNet-level accuracy with 50x fewer
    parameters and <0.5MB model size" (https://arxiv.org/abs/1602.07360).

    Args:
        version (str): "1.0" or "1.1" (1.1: a 3x3 stem and earlier pooling, ~2.4x less
            computation).
        num_classes (int, optional): output channels of the last 1x1 convolution; if
            <= 0 it is not applied. Default: 1000.
        with_pool (bool, optional): ReLU and global average pooling at the end (the
            output is then ``[N, C]``). Default: True.

    Returns:
        fw.nn.Layer: a SqueezeNet model.

    Examples:
        >>> import fw
        >>> from fw.vision.models import SqueezeNet
        >>> model = SqueezeNet(version="1.1")
        >>> model(fw.rand([1, 3, 64, 64])).shape
        [1, 1000]
    """

    def __init__(self, version: str, num_classes: int = 1000, with_pool: bool = True):
        super().__init__()
        if version not in _POOL_AFTER:
            raise InvalidArgumentError(
                f"SqueezeNet: 'version' must be one of {sorted(_POOL_AFTER)}, got {version!r}")
        self.version = version
        self.num_classes = num_classes
        self.with_pool = with_pool
        if version == "1.0":
            self._conv = nn.Conv2D(3, 96, 7, stride=2)
        else:
            self._conv = nn.Conv2D(3, 64, 3, stride=2, padding=1)
        self._pool = nn.MaxPool2D(kernel_size=3, stride=2, padding=0)
        stem = 96 if version == "1.0" else 64
        for i, (c_in, sq, e1, e3) in enumerate(_FIRES):
            setattr(self, f"_conv{i + 1}", MakeFire(c_in or stem, sq, e1, e3))
        self._drop = nn.Dropout(p=0.5, mode="downscale_in_infer")
        # Paddle builds the classifier convolution even when num_classes is 0 (a
        # 0-channel conv, skipped in forward): kept, so the state-dict names match
        self._conv9 = nn.Conv2D(512, max(num_classes, 0), 1)
        self._avg_pool = nn.AdaptiveAvgPool2D(1)

    def forward(self, inputs):
        x = self._pool(F.relu(self._conv(inputs)))
        pool_after = _POOL_AFTER[self.version]
        for i in range(1, len(_FIRES) + 1):
            x = getattr(self, f"_conv{i}")(x)
            if i in pool_after:
                x = self._pool(x)
        if self.num_classes > 0:
            x = self._conv9(self._drop(x))
        if self.with_pool:
            x = self._avg_pool(F.relu(x))
            x = fw.squeeze(x, axis=[2, 3])
        return x


def _squeezenet(arch, version, pretrained, **kwargs):
    model = SqueezeNet(version, **kwargs)
    if pretrained:
        load_pretrained(model, arch, arch, model_urls, head=HEAD)
    return model


def squeezenet1_0(pretrained: bool = False, **kwargs) -> SqueezeNet:
    """SqueezeNet v1.0 from "SqueezeNet: AlexNet-level accuracy with 50x fewer
    parameters and <0.5MB model size" (https://arxiv.org/abs/1602.07360).

    Args:
        pretrained (bool, optional): load Paddle's published ImageNet weights (through
            fw.hub's cache, md5 checked). Default: False.
        **kwargs: `SqueezeNet`'s arguments (num_classes, with_pool).

    Returns:
        fw.nn.Layer: a `SqueezeNet` of version "1.0".

    Examples:
        >>> import fw
        >>> from fw.vision.models import squeezenet1_0
        >>> squeezenet1_0()(fw.rand([1, 3, 64, 64])).shape
        [1, 1000]
    """
    return _squeezenet("squeezenet1_0", "1.0", pretrained, **kwargs)


def squeezenet1_1(pretrained: bool = False, **kwargs) -> SqueezeNet:
    """SqueezeNet v1.1 (a 3x3 stem and earlier pooling than v1.0: ~2.4x less
    computation, the same accuracy).

    Args:
        pretrained (bool, optional): load Paddle's published ImageNet weights (through
            fw.hub's cache, md5 checked). Default: False.
        **kwargs: `SqueezeNet`'s arguments (num_classes, with_pool).

    Returns:
        fw.nn.Layer: a `SqueezeNet` of version "1.1".

    Examples:
        >>> import fw
        >>> from fw.vision.models import squeezenet1_1
        >>> squeezenet1_1(num_classes=10)(fw.rand([1, 3, 64, 64])).shape
        [1, 10]
    """
    return _squeezenet("squeezenet1_1", "1.1", pretrained, **kwargs)
