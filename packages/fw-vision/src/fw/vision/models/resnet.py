"""ResNet, ResNeXt and Wide ResNet (Paddle's ``paddle.vision.models.ResNet`` and its
13 constructors: same blocks, arguments and parameter names, so Paddle's published
weights load)."""

from __future__ import annotations

import fw
from fw import nn
from fw.vision.models._utils import (
    check_classifier_input,
    check_pretrained_arch,
    load_pretrained,
)

__all__ = ["ResNet", "BasicBlock", "BottleneckBlock", "resnet18", "resnet34", "resnet50",
           "resnet101", "resnet152", "resnext50_32x4d", "resnext50_64x4d",
           "resnext101_32x4d", "resnext101_64x4d", "resnext152_32x4d", "resnext152_64x4d",
           "wide_resnet50_2", "wide_resnet101_2"]

_HAPI = "https://paddle-hapi.bj.bcebos.com/models/"
# Paddle's published weights (paddle/vision/models/resnet.py, model_urls): url, md5
model_urls = {
    "resnet18": (_HAPI + "resnet18.pdparams", "cf548f46534aa3560945be4b95cd11c4"),
    "resnet34": (_HAPI + "resnet34.pdparams", "8d2275cf8706028345f78ac0e1d31969"),
    "resnet50": (_HAPI + "resnet50.pdparams", "ca6f485ee1ab0492d38f323885b0ad80"),
    "resnet101": (_HAPI + "resnet101.pdparams", "02f35f034ca3858e1e54d4036443c92d"),
    "resnet152": (_HAPI + "resnet152.pdparams", "7ad16a2f1e7333859ff986138630fd7a"),
    "resnext50_32x4d": (_HAPI + "resnext50_32x4d.pdparams",
                        "dc47483169be7d6f018fcbb7baf8775d"),
    "resnext50_64x4d": (_HAPI + "resnext50_64x4d.pdparams",
                        "063d4b483e12b06388529450ad7576db"),
    "resnext101_32x4d": (_HAPI + "resnext101_32x4d.pdparams",
                         "967b090039f9de2c8d06fe994fb9095f"),
    "resnext101_64x4d": (_HAPI + "resnext101_64x4d.pdparams",
                         "98e04e7ca616a066699230d769d03008"),
    "resnext152_32x4d": (_HAPI + "resnext152_32x4d.pdparams",
                         "18ff0beee21f2efc99c4b31786107121"),
    "resnext152_64x4d": (_HAPI + "resnext152_64x4d.pdparams",
                         "77c4af00ca42c405fa7f841841959379"),
    "wide_resnet50_2": (_HAPI + "wide_resnet50_2.pdparams",
                        "0282f804d73debdab289bd9fea3fa6dc"),
    "wide_resnet101_2": (_HAPI + "wide_resnet101_2.pdparams",
                         "d4360a2d23657f059216f5d5a1a9ac93"),
}

_NO_POOL_HINT = ("without pooling (with_pool=False) the fc needs 1x1 features: 32x32 "
                 "inputs (25 to 32 pixels); keep with_pool=True for other sizes")

# blocks per stage for each depth (He et al., 2015, table 1)
_LAYER_CFG = {18: [2, 2, 2, 2], 34: [3, 4, 6, 3], 50: [3, 4, 6, 3], 101: [3, 4, 23, 3],
              152: [3, 8, 36, 3]}


class BasicBlock(nn.Layer):
    """Two 3x3 convs with a residual connection (ResNet-18/34)."""

    expansion = 1

    def __init__(self, inplanes, planes, stride=1, downsample=None, groups=1, base_width=64,
                 dilation=1, norm_layer=None):
        super().__init__()
        if norm_layer is None:
            norm_layer = nn.BatchNorm2D
        if dilation > 1:
            raise NotImplementedError("BasicBlock: dilation > 1 is not supported "
                                      f"(got dilation={dilation})")
        self.conv1 = nn.Conv2D(inplanes, planes, 3, padding=1, stride=stride, bias_attr=False)
        self.bn1 = norm_layer(planes)
        self.relu = nn.ReLU()
        self.conv2 = nn.Conv2D(planes, planes, 3, padding=1, bias_attr=False)
        self.bn2 = norm_layer(planes)
        self.downsample = downsample
        self.stride = stride

    def forward(self, x):
        identity = x if self.downsample is None else self.downsample(x)
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return self.relu(out + identity)


class BottleneckBlock(nn.Layer):
    """1x1 reduce, 3x3 (grouped for ResNeXt), 1x1 expand (x4), with a residual
    connection (ResNet-50 and deeper, ResNeXt, Wide ResNet)."""

    expansion = 4

    def __init__(self, inplanes, planes, stride=1, downsample=None, groups=1, base_width=64,
                 dilation=1, norm_layer=None):
        super().__init__()
        if norm_layer is None:
            norm_layer = nn.BatchNorm2D
        width = int(planes * (base_width / 64.0)) * groups
        self.conv1 = nn.Conv2D(inplanes, width, 1, bias_attr=False)
        self.bn1 = norm_layer(width)
        self.conv2 = nn.Conv2D(width, width, 3, padding=dilation, stride=stride, groups=groups,
                               dilation=dilation, bias_attr=False)
        self.bn2 = norm_layer(width)
        self.conv3 = nn.Conv2D(width, planes * self.expansion, 1, bias_attr=False)
        self.bn3 = norm_layer(planes * self.expansion)
        self.relu = nn.ReLU()
        self.downsample = downsample
        self.stride = stride

    def forward(self, x):
        identity = x if self.downsample is None else self.downsample(x)
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        return self.relu(out + identity)


class ResNet(nn.Layer):
    """ResNet, from "Deep Residual Learning for Image Recognition" (He et al., 2015),
    with ResNeXt's groups and Wide ResNet's width, in Paddle's layout.

    Args:
        block (BasicBlock|BottleneckBlock): the residual block class.
        depth (int, optional): 18, 34, 50, 101 or 152. Default: 50.
        width (int, optional): the bottleneck's base width (64 for ResNet, 4 for
            ResNeXt's NxXd, 128 for Wide ResNet). Default: 64.
        num_classes (int, optional): output size of the fc layer; if <= 0 it is not
            built and the forward returns the features. Default: 1000.
        with_pool (bool, optional): apply global average pooling. Default: True.
        groups (int, optional): groups of the bottleneck's 3x3 conv. Default: 1.

    Returns:
        Layer: a ResNet model.

    Examples:
        >>> import fw
        >>> from fw.vision.models import ResNet
        >>> from fw.vision.models.resnet import BasicBlock
        >>> model = ResNet(BasicBlock, 18, num_classes=0)
        >>> model(fw.rand([1, 3, 32, 32])).shape
        [1, 512, 1, 1]
    """

    def __init__(self, block, depth: int = 50, width: int = 64, num_classes: int = 1000,
                 with_pool: bool = True, groups: int = 1) -> None:
        super().__init__()
        if depth not in _LAYER_CFG:
            raise ValueError(f"ResNet: 'depth' must be one of {sorted(_LAYER_CFG)}, "
                             f"got {depth!r}")
        layers = _LAYER_CFG[depth]
        self.groups = groups
        self.base_width = width
        self.num_classes = num_classes
        self.with_pool = with_pool
        self._norm_layer = nn.BatchNorm2D
        self.inplanes = 64
        self.dilation = 1
        self.conv1 = nn.Conv2D(3, self.inplanes, kernel_size=7, stride=2, padding=3,
                               bias_attr=False)
        self.bn1 = self._norm_layer(self.inplanes)
        self.relu = nn.ReLU()
        self.maxpool = nn.MaxPool2D(kernel_size=3, stride=2, padding=1)
        self.layer1 = self._make_layer(block, 64, layers[0])
        self.layer2 = self._make_layer(block, 128, layers[1], stride=2)
        self.layer3 = self._make_layer(block, 256, layers[2], stride=2)
        self.layer4 = self._make_layer(block, 512, layers[3], stride=2)
        if with_pool:
            self.avgpool = nn.AdaptiveAvgPool2D((1, 1))
        if num_classes > 0:
            self.fc = nn.Linear(512 * block.expansion, num_classes)

    def _make_layer(self, block, planes, blocks, stride=1, dilate=False):
        norm_layer = self._norm_layer
        downsample = None
        previous_dilation = self.dilation
        if dilate:
            self.dilation *= stride
            stride = 1
        if stride != 1 or self.inplanes != planes * block.expansion:
            downsample = nn.Sequential(
                nn.Conv2D(self.inplanes, planes * block.expansion, 1, stride=stride,
                          bias_attr=False),
                norm_layer(planes * block.expansion))
        layers = [block(self.inplanes, planes, stride, downsample, self.groups,
                        self.base_width, previous_dilation, norm_layer)]
        self.inplanes = planes * block.expansion
        for _ in range(1, blocks):
            layers.append(block(self.inplanes, planes, groups=self.groups,
                                base_width=self.base_width, norm_layer=norm_layer))
        return nn.Sequential(*layers)

    def forward(self, x):
        shape = x.shape
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer1(x)
        x = self.layer2(x)
        x = self.layer3(x)
        x = self.layer4(x)
        if self.with_pool:
            x = self.avgpool(x)
        if self.num_classes > 0:
            check_classifier_input("ResNet", shape, x, self.fc.weight.shape[0], _NO_POOL_HINT)
            x = fw.flatten(x, 1)
            x = self.fc(x)
        return x


def _resnet(arch, block, depth, pretrained, **kwargs):
    if pretrained:  # fail before building a model that cannot get weights
        check_pretrained_arch(arch, arch, model_urls)
    model = ResNet(block, depth, **kwargs)
    if pretrained:
        load_pretrained(model, arch, arch, model_urls, head=("fc.",))
    return model


def resnet18(pretrained: bool = False, **kwargs) -> ResNet:
    """ResNet-18.

    Args:
        pretrained (bool, optional): load Paddle's published ImageNet weights (through
            fw.utils.download's cache, md5-checked). Default: False.
        **kwargs: `ResNet`'s arguments (``width``, ``num_classes``, ``with_pool``,
            ``groups``).

    Returns:
        Layer: a ResNet model.

    Examples:
        >>> import fw
        >>> from fw.vision.models import resnet18
        >>> resnet18(num_classes=10)(fw.rand([1, 3, 32, 32])).shape
        [1, 10]
    """
    return _resnet("resnet18", BasicBlock, 18, pretrained, **kwargs)


def resnet34(pretrained: bool = False, **kwargs) -> ResNet:
    """ResNet-34. Arguments as `resnet18`.

    Args:
        pretrained (bool, optional): load Paddle's published ImageNet weights. Default: False.
        **kwargs: `ResNet`'s arguments.

    Returns:
        Layer: a ResNet model.

    Examples:
        >>> import fw
        >>> from fw.vision.models import resnet34
        >>> len(resnet34().layer3)
        6
    """
    return _resnet("resnet34", BasicBlock, 34, pretrained, **kwargs)


def resnet50(pretrained: bool = False, **kwargs) -> ResNet:
    """ResNet-50. Arguments as `resnet18`.

    Args:
        pretrained (bool, optional): load Paddle's published ImageNet weights. Default: False.
        **kwargs: `ResNet`'s arguments.

    Returns:
        Layer: a ResNet model.

    Examples:
        >>> import fw
        >>> from fw.vision.models import resnet50
        >>> resnet50().fc.weight.shape
        [2048, 1000]
    """
    return _resnet("resnet50", BottleneckBlock, 50, pretrained, **kwargs)


def resnet101(pretrained: bool = False, **kwargs) -> ResNet:
    """ResNet-101. Arguments as `resnet18`.

    Args:
        pretrained (bool, optional): load Paddle's published ImageNet weights. Default: False.
        **kwargs: `ResNet`'s arguments.

    Returns:
        Layer: a ResNet model.

    Examples:
        >>> import fw
        >>> from fw.vision.models import resnet101
        >>> len(resnet101().layer3)
        23
    """
    return _resnet("resnet101", BottleneckBlock, 101, pretrained, **kwargs)


def resnet152(pretrained: bool = False, **kwargs) -> ResNet:
    """ResNet-152. Arguments as `resnet18`.

    Args:
        pretrained (bool, optional): load Paddle's published ImageNet weights. Default: False.
        **kwargs: `ResNet`'s arguments.

    Returns:
        Layer: a ResNet model.

    Examples:
        >>> import fw
        >>> from fw.vision.models import resnet152
        >>> len(resnet152().layer2)
        8
    """
    return _resnet("resnet152", BottleneckBlock, 152, pretrained, **kwargs)


def _resnext(arch, depth, groups, pretrained, kwargs):
    kwargs["groups"] = groups
    kwargs["width"] = 4
    return _resnet(arch, BottleneckBlock, depth, pretrained, **kwargs)


def resnext50_32x4d(pretrained: bool = False, **kwargs) -> ResNet:
    """ResNeXt-50 32x4d, from "Aggregated Residual Transformations for Deep Neural
    Networks" (Xie et al., 2016): 32 groups of width 4.

    Args:
        pretrained (bool, optional): load Paddle's published ImageNet weights. Default: False.
        **kwargs: `ResNet`'s arguments (``groups`` and ``width`` are fixed).

    Returns:
        Layer: a ResNet model.

    Examples:
        >>> import fw
        >>> from fw.vision.models import resnext50_32x4d
        >>> resnext50_32x4d().layer1[0].conv2.weight.shape
        [128, 4, 3, 3]
    """
    return _resnext("resnext50_32x4d", 50, 32, pretrained, kwargs)


def resnext50_64x4d(pretrained: bool = False, **kwargs) -> ResNet:
    """ResNeXt-50 64x4d: 64 groups of width 4.

    Args:
        pretrained (bool, optional): load Paddle's published ImageNet weights. Default: False.
        **kwargs: `ResNet`'s arguments (``groups`` and ``width`` are fixed).

    Returns:
        Layer: a ResNet model.

    Examples:
        >>> import fw
        >>> from fw.vision.models import resnext50_64x4d
        >>> resnext50_64x4d().layer1[0].conv2.weight.shape
        [256, 4, 3, 3]
    """
    return _resnext("resnext50_64x4d", 50, 64, pretrained, kwargs)


def resnext101_32x4d(pretrained: bool = False, **kwargs) -> ResNet:
    """ResNeXt-101 32x4d.

    Args:
        pretrained (bool, optional): load Paddle's published ImageNet weights. Default: False.
        **kwargs: `ResNet`'s arguments (``groups`` and ``width`` are fixed).

    Returns:
        Layer: a ResNet model.

    Examples:
        >>> import fw
        >>> from fw.vision.models import resnext101_32x4d
        >>> resnext101_32x4d().groups
        32
    """
    return _resnext("resnext101_32x4d", 101, 32, pretrained, kwargs)


def resnext101_64x4d(pretrained: bool = False, **kwargs) -> ResNet:
    """ResNeXt-101 64x4d.

    Args:
        pretrained (bool, optional): load Paddle's published ImageNet weights. Default: False.
        **kwargs: `ResNet`'s arguments (``groups`` and ``width`` are fixed).

    Returns:
        Layer: a ResNet model.

    Examples:
        >>> import fw
        >>> from fw.vision.models import resnext101_64x4d
        >>> resnext101_64x4d().groups
        64
    """
    return _resnext("resnext101_64x4d", 101, 64, pretrained, kwargs)


def resnext152_32x4d(pretrained: bool = False, **kwargs) -> ResNet:
    """ResNeXt-152 32x4d.

    Args:
        pretrained (bool, optional): load Paddle's published ImageNet weights. Default: False.
        **kwargs: `ResNet`'s arguments (``groups`` and ``width`` are fixed).

    Returns:
        Layer: a ResNet model.

    Examples:
        >>> import fw
        >>> from fw.vision.models import resnext152_32x4d
        >>> len(resnext152_32x4d().layer3)
        36
    """
    return _resnext("resnext152_32x4d", 152, 32, pretrained, kwargs)


def resnext152_64x4d(pretrained: bool = False, **kwargs) -> ResNet:
    """ResNeXt-152 64x4d.

    Args:
        pretrained (bool, optional): load Paddle's published ImageNet weights. Default: False.
        **kwargs: `ResNet`'s arguments (``groups`` and ``width`` are fixed).

    Returns:
        Layer: a ResNet model.

    Examples:
        >>> import fw
        >>> from fw.vision.models import resnext152_64x4d
        >>> resnext152_64x4d().base_width
        4
    """
    return _resnext("resnext152_64x4d", 152, 64, pretrained, kwargs)


def wide_resnet50_2(pretrained: bool = False, **kwargs) -> ResNet:
    """Wide ResNet-50-2, from "Wide Residual Networks" (Zagoruyko & Komodakis, 2016):
    the bottleneck's inner width doubled.

    Args:
        pretrained (bool, optional): load Paddle's published ImageNet weights. Default: False.
        **kwargs: `ResNet`'s arguments (``width`` is fixed at 128).

    Returns:
        Layer: a ResNet model.

    Examples:
        >>> import fw
        >>> from fw.vision.models import wide_resnet50_2
        >>> wide_resnet50_2().layer1[0].conv1.weight.shape
        [128, 64, 1, 1]
    """
    kwargs["width"] = 64 * 2
    return _resnet("wide_resnet50_2", BottleneckBlock, 50, pretrained, **kwargs)


def wide_resnet101_2(pretrained: bool = False, **kwargs) -> ResNet:
    """Wide ResNet-101-2.

    Args:
        pretrained (bool, optional): load Paddle's published ImageNet weights. Default: False.
        **kwargs: `ResNet`'s arguments (``width`` is fixed at 128).

    Returns:
        Layer: a ResNet model.

    Examples:
        >>> import fw
        >>> from fw.vision.models import wide_resnet101_2
        >>> len(wide_resnet101_2().layer3)
        23
    """
    kwargs["width"] = 64 * 2
    return _resnet("wide_resnet101_2", BottleneckBlock, 101, pretrained, **kwargs)
