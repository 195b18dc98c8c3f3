"""fw.sparse.nn — layers and functional activations for sparse tensors."""

from fw.sparse.nn import functional
from fw.sparse.nn.layer import (
    BatchNorm,
    Conv2D,
    Conv3D,
    LeakyReLU,
    MaxPool3D,
    ReLU,
    ReLU6,
    Softmax,
    SubmConv2D,
    SubmConv3D,
)

__all__ = ["BatchNorm", "Conv2D", "Conv3D", "LeakyReLU", "MaxPool3D", "ReLU", "ReLU6",
           "Softmax", "SubmConv2D", "SubmConv3D", "functional"]
