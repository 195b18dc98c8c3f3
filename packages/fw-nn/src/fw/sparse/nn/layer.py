"""Layers wrapping the sparse activations (Paddle's ``paddle.sparse.nn``)."""

from __future__ import annotations

from fw.nn import Layer
from fw.sparse.nn import functional as F

__all__ = ["LeakyReLU", "ReLU", "ReLU6", "Softmax"]


class ReLU(Layer):
    """Sparse ReLU layer: max(x, 0) on the stored values.

    Args:
        name (str, optional): unused.

    Examples:
        >>> import fw
        >>> x = fw.sparse.sparse_coo_tensor([[0, 2]], [-1.0, 2.0], [3])
        >>> fw.sparse.nn.ReLU()(x).values().numpy().tolist()
        [0.0, 2.0]
    """

    def __init__(self, name=None):
        super().__init__()

    def forward(self, x):
        return F.relu(x)


class ReLU6(Layer):
    """Sparse ReLU6 layer: min(max(x, 0), 6) on the stored values.

    Args:
        name (str, optional): unused.

    Examples:
        >>> import fw
        >>> x = fw.sparse.sparse_coo_tensor([[0, 2]], [-1.0, 8.0], [3])
        >>> fw.sparse.nn.ReLU6()(x).values().numpy().tolist()
        [0.0, 6.0]
    """

    def __init__(self, name=None):
        super().__init__()

    def forward(self, x):
        return F.relu6(x)


class LeakyReLU(Layer):
    """Sparse LeakyReLU layer on the stored values.

    Args:
        negative_slope (float, optional): slope for negative values. Default 0.01.
        name (str, optional): unused.

    Examples:
        >>> import fw
        >>> x = fw.sparse.sparse_coo_tensor([[0, 2]], [-1.0, 2.0], [3])
        >>> fw.sparse.nn.LeakyReLU(0.5)(x).values().numpy().tolist()
        [-0.5, 2.0]
    """

    def __init__(self, negative_slope=0.01, name=None):
        super().__init__()
        self._negative_slope = negative_slope

    def forward(self, x):
        return F.leaky_relu(x, self._negative_slope)

    def extra_repr(self):
        return f"negative_slope={self._negative_slope}"


class Softmax(Layer):
    """Sparse softmax layer over the stored entries of each row.

    Args:
        axis (int, optional): must be -1. Default -1.
        name (str, optional): unused.

    Examples:
        >>> import fw
        >>> x = fw.sparse.sparse_csr_tensor([0, 2], [0, 1], [0.0, 0.0], [1, 2])
        >>> fw.sparse.nn.Softmax()(x).values().numpy().tolist()
        [0.5, 0.5]
    """

    def __init__(self, axis=-1, name=None):
        super().__init__()
        if axis != -1:
            raise ValueError(f"fw.sparse.nn.Softmax: only axis=-1 is supported, got {axis}")
        self._axis = axis

    def forward(self, x):
        return F.softmax(x, self._axis)
