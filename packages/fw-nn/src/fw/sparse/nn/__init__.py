"""fw.sparse.nn — layers and functional activations for sparse tensors."""

from fw.sparse.nn import functional
from fw.sparse.nn.layer import (
    BatchNorm,
    Conv3D,
    LeakyReLU,
    MaxPool3D,
    ReLU,
    ReLU6,
    Softmax,
    SubmConv3D,
)

__all__ = ["BatchNorm", "Conv3D", "LeakyReLU", "MaxPool3D", "ReLU", "ReLU6", "Softmax",
           "SubmConv3D", "functional"]
