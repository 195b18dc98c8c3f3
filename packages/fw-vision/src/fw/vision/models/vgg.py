"""VGG (Paddle's ``paddle.vision.models.VGG`` / ``vgg11`` … ``vgg19``, with and
without batch norm: same layers and parameter names, so Paddle's published weights
load)."""

from __future__ import annotations

import fw
from fw import nn
from fw.vision.models._utils import (
    check_classifier_input,
    check_pretrained_arch,
    load_pretrained,
)

__all__ = ["VGG", "vgg11", "vgg13", "vgg16", "vgg19"]

# Paddle's published weights (paddle/vision/models/vgg.py, model_urls): url, md5.
# Paddle publishes none for vgg11/vgg13 or the batch-norm variants.
model_urls = {
    "vgg16": ("https://paddle-hapi.bj.bcebos.com/models/vgg16.pdparams",
              "89bbffc0f87d260be9b8cdc169c991c4"),
    "vgg19": ("https://paddle-hapi.bj.bcebos.com/models/vgg19.pdparams",
              "23b18bb13d8894f60f54e642be79a0dd"),
}

# the configurations of Simonyan & Zisserman's table 1 (A = 11, B = 13, D = 16, E = 19
# weight layers): output channels of each 3x3 conv, "M" a 2x2 max pool
cfgs = {
    "A": [64, "M", 128, "M", 256, 256, "M", 512, 512, "M", 512, 512, "M"],
    "B": [64, 64, "M", 128, 128, "M", 256, 256, "M", 512, 512, "M", 512, 512, "M"],
    "D": [64, 64, "M", 128, 128, "M", 256, 256, 256, "M", 512, 512, 512, "M",
          512, 512, 512, "M"],
    "E": [64, 64, "M", 128, 128, "M", 256, 256, 256, 256, "M", 512, 512, 512, 512, "M",
          512, 512, 512, 512, "M"],
}
_DEPTH_CFG = {11: "A", 13: "B", 16: "D", 19: "E"}


class VGG(nn.Layer):
    """VGG, from "Very Deep Convolutional Networks for Large-Scale Image Recognition"
    (Simonyan & Zisserman, 2014), in Paddle's layout.

    Args:
        features (Layer): the convolutional trunk (``make_layers(cfg, batch_norm)``).
        num_classes (int, optional): output size of the last fc layer; if <= 0 the
            classifier is not built and the forward returns the features. Default: 1000.
        with_pool (bool, optional): apply the 7x7 adaptive average pool after the
            features. Default: True.

    Returns:
        Layer: a VGG model.

    Examples:
        >>> import fw
        >>> from fw.vision.models import VGG
        >>> from fw.vision.models.vgg import make_layers
        >>> model = VGG(make_layers([8, "M"]), num_classes=0)
        >>> model(fw.rand([1, 3, 16, 16])).shape
        [1, 8, 7, 7]
    """

    def __init__(self, features: nn.Layer, num_classes: int = 1000,
                 with_pool: bool = True) -> None:
        super().__init__()
        self.features = features
        self.num_classes = num_classes
        self.with_pool = with_pool
        if with_pool:
            self.avgpool = nn.AdaptiveAvgPool2D((7, 7))
        if num_classes > 0:
            self.classifier = nn.Sequential(
                nn.Linear(512 * 7 * 7, 4096), nn.ReLU(), nn.Dropout(),
                nn.Linear(4096, 4096), nn.ReLU(), nn.Dropout(),
                nn.Linear(4096, num_classes))

    def forward(self, x):
        shape = x.shape
        x = self.features(x)
        if self.with_pool:
            x = self.avgpool(x)
        if self.num_classes > 0:
            check_classifier_input("VGG", shape, x, 512 * 7 * 7,
                                   "without the adaptive pool (with_pool=False) the "
                                   "classifier needs 7x7 features: 224x224 inputs")
            x = fw.flatten(x, 1)
            x = self.classifier(x)
        return x


def make_layers(cfg, batch_norm: bool = False) -> nn.Sequential:
    """The VGG trunk for `cfg` (channel counts and ``"M"`` pools), 3 input channels.

    Args:
        cfg (list): output channels of each 3x3 conv, or ``"M"`` for a 2x2 max pool.
        batch_norm (bool, optional): a BatchNorm2D after each conv. Default: False.

    Returns:
        Sequential: the layers, named ``"0"``, ``"1"``, … (Paddle's names).

    Examples:
        >>> import fw
        >>> from fw.vision.models.vgg import make_layers
        >>> len(make_layers([8, "M", 16], batch_norm=True))
        7
    """
    layers = []
    in_channels = 3
    for v in cfg:
        if v == "M":
            layers.append(nn.MaxPool2D(kernel_size=2, stride=2))
            continue
        layers.append(nn.Conv2D(in_channels, v, kernel_size=3, padding=1))
        if batch_norm:
            layers.append(nn.BatchNorm2D(v))
        layers.append(nn.ReLU())
        in_channels = v
    return nn.Sequential(*layers)


def _vgg(depth: int, pretrained: bool, batch_norm: bool, **kwargs) -> VGG:
    fn_name = f"vgg{depth}"
    arch = fn_name + ("_bn" if batch_norm else "")
    if pretrained:  # fail before building a model that cannot get weights
        check_pretrained_arch(fn_name, arch, model_urls)
    model = VGG(make_layers(cfgs[_DEPTH_CFG[depth]], batch_norm=batch_norm), **kwargs)
    if pretrained:
        load_pretrained(model, fn_name, arch, model_urls, head=("classifier.",))
    return model


def vgg11(pretrained: bool = False, batch_norm: bool = False, **kwargs) -> VGG:
    """VGG-11 (configuration A), optionally with batch norm.

    Args:
        pretrained (bool, optional): load Paddle's published ImageNet weights (Paddle
            publishes none for VGG-11: this raises a ValueError). Default: False.
        batch_norm (bool, optional): a BatchNorm2D after each conv. Default: False.
        **kwargs: `VGG`'s arguments (``num_classes``, ``with_pool``).

    Returns:
        Layer: a VGG model.

    Examples:
        >>> import fw
        >>> from fw.vision.models import vgg11
        >>> vgg11(num_classes=0)(fw.rand([1, 3, 32, 32])).shape
        [1, 512, 7, 7]
    """
    return _vgg(11, pretrained, batch_norm, **kwargs)


def vgg13(pretrained: bool = False, batch_norm: bool = False, **kwargs) -> VGG:
    """VGG-13 (configuration B), optionally with batch norm.

    Args:
        pretrained (bool, optional): load Paddle's published ImageNet weights (Paddle
            publishes none for VGG-13: this raises a ValueError). Default: False.
        batch_norm (bool, optional): a BatchNorm2D after each conv. Default: False.
        **kwargs: `VGG`'s arguments (``num_classes``, ``with_pool``).

    Returns:
        Layer: a VGG model.

    Examples:
        >>> import fw
        >>> from fw.vision.models import vgg13
        >>> len(vgg13(batch_norm=True, num_classes=0).features)
        35
    """
    return _vgg(13, pretrained, batch_norm, **kwargs)


def vgg16(pretrained: bool = False, batch_norm: bool = False, **kwargs) -> VGG:
    """VGG-16 (configuration D), optionally with batch norm.

    Args:
        pretrained (bool, optional): load Paddle's published ImageNet weights (only
            without batch norm). Default: False.
        batch_norm (bool, optional): a BatchNorm2D after each conv. Default: False.
        **kwargs: `VGG`'s arguments (``num_classes``, ``with_pool``).

    Returns:
        Layer: a VGG model.

    Examples:
        >>> import fw
        >>> from fw.vision.models import vgg16
        >>> vgg16(num_classes=0, with_pool=False)(fw.rand([1, 3, 32, 32])).shape
        [1, 512, 1, 1]
    """
    return _vgg(16, pretrained, batch_norm, **kwargs)


def vgg19(pretrained: bool = False, batch_norm: bool = False, **kwargs) -> VGG:
    """VGG-19 (configuration E), optionally with batch norm.

    Args:
        pretrained (bool, optional): load Paddle's published ImageNet weights (only
            without batch norm). Default: False.
        batch_norm (bool, optional): a BatchNorm2D after each conv. Default: False.
        **kwargs: `VGG`'s arguments (``num_classes``, ``with_pool``).

    Returns:
        Layer: a VGG model.

    Examples:
        >>> import fw
        >>> from fw.vision.models import vgg19
        >>> len([k for k in vgg19(num_classes=0).state_dict() if k.endswith("weight")])
        16
    """
    return _vgg(19, pretrained, batch_norm, **kwargs)
