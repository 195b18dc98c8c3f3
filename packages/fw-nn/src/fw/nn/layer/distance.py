"""Distance layers."""

from __future__ import annotations

from fw.nn import functional as F
from fw.nn.layer.layers import Layer

__all__ = ["PairwiseDistance"]


class PairwiseDistance(Layer):
    """The p-norm distance ``||x - y + epsilon||_p`` over the last axis (see
    `fw.nn.functional.pairwise_distance`).

    Args:
        p (float, optional): the norm degree. Default: 2.0.
        epsilon (float, optional): added to the difference. Default: 1e-6.
        keepdim (bool, optional): keep the reduced axis. Default: False.
        name (str, optional): a name for the layer. Default: None.

    Shape:
        - x, y: ``[N, D]`` (broadcastable); output: ``[N]`` (``[N, 1]`` with ``keepdim``).

    Examples:
        >>> import fw
        >>> dist = fw.nn.PairwiseDistance()
        >>> x, y = fw.to_tensor([[0.0, 0.0], [1.0, 1.0]]), fw.to_tensor([[3.0, 4.0], [1.0, 1.0]])
        >>> [round(v, 4) for v in dist(x, y).tolist()]
        [5.0, 0.0]
    """

    def __init__(self, p=2.0, epsilon=1e-6, keepdim=False, name=None):
        super().__init__()
        self.p = p
        self.epsilon = epsilon
        self.keepdim = keepdim

    def forward(self, x, y):
        return F.pairwise_distance(x, y, self.p, self.epsilon, self.keepdim)

    def extra_repr(self) -> str:
        return f"p={self.p}, epsilon={self.epsilon}, keepdim={self.keepdim}"
