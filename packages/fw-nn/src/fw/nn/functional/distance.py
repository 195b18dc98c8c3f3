"""Distances of ``paddle.nn.functional``."""

from __future__ import annotations

import fw
from fw.nn.functional._helpers import op

__all__ = ["pairwise_distance", "pdist"]


def pairwise_distance(x, y, p=2.0, epsilon=1e-6, keepdim=False, name=None):
    """``||x - y + epsilon||_p`` over the last axis (broadcast).

    >>> import fw
    >>> d = fw.nn.functional.pairwise_distance(fw.to_tensor([[0.0, 0.0]]),
    ...                                        fw.to_tensor([[3.0, 4.0]]))
    >>> round(d.item(), 4)
    5.0
    """
    return op("pairwise_distance", [x, y], p=p, epsilon=epsilon, keepdim=keepdim)


def pdist(x, p=2.0, name=None):
    """Distances between the rows of x ``[N, M]``: the upper triangle (i < j) of the
    ``[N, N]`` distance matrix, row by row, as a vector of N*(N-1)/2 entries."""
    n = x.shape[0]
    d = fw.cdist(x, x, p=p)
    rows, cols = fw.triu_indices(n, n, 1).unbind(0)
    return d[rows, cols]
