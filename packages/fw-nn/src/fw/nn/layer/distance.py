"""Distance layers."""

from __future__ import annotations

from fw.nn import functional as F
from fw.nn.layer.layers import Layer

__all__ = ["PairwiseDistance"]


class PairwiseDistance(Layer):
    """``||x - y + epsilon||_p`` over the last axis."""

    def __init__(self, p=2.0, epsilon=1e-6, keepdim=False, name=None):
        super().__init__()
        self.p = p
        self.epsilon = epsilon
        self.keepdim = keepdim

    def forward(self, x, y):
        return F.pairwise_distance(x, y, self.p, self.epsilon, self.keepdim)

    def extra_repr(self) -> str:
        return f"p={self.p}, epsilon={self.epsilon}, keepdim={self.keepdim}"
