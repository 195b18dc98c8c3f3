"""fw.vision.models (see packages/fw-vision/README.md)."""

__all__: list[str] = []

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
