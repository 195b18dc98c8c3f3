"""fw.sparse.nn — layers and functional activations for sparse tensors."""

from fw.sparse.nn import functional
from fw.sparse.nn.layer import LeakyReLU, ReLU, ReLU6, Softmax

__all__ = ["LeakyReLU", "ReLU", "ReLU6", "Softmax", "functional"]
