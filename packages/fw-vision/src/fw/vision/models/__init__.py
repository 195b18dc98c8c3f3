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
# --- part B: ShuffleNetV2, SqueezeNet, DenseNet, GoogLeNet, InceptionV3 ---
from fw.vision.models.densenet import (
    DenseNet,
    densenet121,
    densenet161,
    densenet169,
    densenet201,
    densenet264,
)
from fw.vision.models.googlenet import GoogLeNet, googlenet
from fw.vision.models.inceptionv3 import InceptionV3, inception_v3
from fw.vision.models.shufflenetv2 import (
    ShuffleNetV2,
    shufflenet_v2_swish,
    shufflenet_v2_x0_5,
    shufflenet_v2_x0_25,
    shufflenet_v2_x0_33,
    shufflenet_v2_x1_0,
    shufflenet_v2_x1_5,
    shufflenet_v2_x2_0,
)
from fw.vision.models.squeezenet import SqueezeNet, squeezenet1_0, squeezenet1_1

__all__ += [
    "ShuffleNetV2", "shufflenet_v2_x0_25", "shufflenet_v2_x0_33", "shufflenet_v2_x0_5",
    "shufflenet_v2_x1_0", "shufflenet_v2_x1_5", "shufflenet_v2_x2_0", "shufflenet_v2_swish",
    "SqueezeNet", "squeezenet1_0", "squeezenet1_1",
    "DenseNet", "densenet121", "densenet161", "densenet169", "densenet201", "densenet264",
    "GoogLeNet", "googlenet",
    "InceptionV3", "inception_v3",
]
# --- end of part B ---
