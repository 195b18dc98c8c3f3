"""fw.vision.models: Paddle 3.x's ``paddle.vision.models`` (see
packages/fw-vision/README.md)."""

__all__: list[str] = []

# --- part A: LeNet, AlexNet, VGG, ResNet/ResNeXt/Wide ResNet, MobileNet V1/V2/V3 ---
from fw.vision.models.alexnet import AlexNet, alexnet  # noqa: E402
from fw.vision.models.lenet import LeNet  # noqa: E402
from fw.vision.models.mobilenetv1 import MobileNetV1, mobilenet_v1  # noqa: E402
from fw.vision.models.mobilenetv2 import MobileNetV2, mobilenet_v2  # noqa: E402
from fw.vision.models.mobilenetv3 import (  # noqa: E402
    MobileNetV3Large,
    MobileNetV3Small,
    mobilenet_v3_large,
    mobilenet_v3_small,
)
from fw.vision.models.resnet import (  # noqa: E402
    ResNet,
    resnet18,
    resnet34,
    resnet50,
    resnet101,
    resnet152,
    resnext50_32x4d,
    resnext50_64x4d,
    resnext101_32x4d,
    resnext101_64x4d,
    resnext152_32x4d,
    resnext152_64x4d,
    wide_resnet50_2,
    wide_resnet101_2,
)
from fw.vision.models.vgg import VGG, vgg11, vgg13, vgg16, vgg19  # noqa: E402

__all__ += [
    "LeNet", "AlexNet", "alexnet", "VGG", "vgg11", "vgg13", "vgg16", "vgg19",
    "ResNet", "resnet18", "resnet34", "resnet50", "resnet101", "resnet152",
    "resnext50_32x4d", "resnext50_64x4d", "resnext101_32x4d", "resnext101_64x4d",
    "resnext152_32x4d", "resnext152_64x4d", "wide_resnet50_2", "wide_resnet101_2",
    "MobileNetV1", "mobilenet_v1", "MobileNetV2", "mobilenet_v2",
    "MobileNetV3Small", "MobileNetV3Large", "mobilenet_v3_small", "mobilenet_v3_large",
]
# --- end of part A ---
