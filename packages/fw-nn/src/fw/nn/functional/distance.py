"""Distances of ``paddle.nn.functional``."""

from __future__ import annotations

import fw
from fw.nn.functional._helpers import op

__all__ = ["pairwise_distance", "pdist"]


def pairwise_distance(x, y, p=2.0, epsilon=1e-6, keepdim=False, name=None):
    """The p-norm distance ``||x - y + epsilon||_p`` over the last axis, with ``x`` and
    ``y`` broadcast.

    Args:
        x (Tensor): ``[N, D]`` or ``[D]``.
        y (Tensor): broadcastable to ``x``.
        p (float, optional): the norm degree. Default: 2.0.
        epsilon (float, optional): added to the difference. Default: 1e-6.
        keepdim (bool, optional): keep the reduced axis. Default: False.
        name (str, optional): unused, for Paddle compatibility. Default: None.

    Returns:
        Tensor: ``[N]`` (``[N, 1]`` with ``keepdim``).

    Examples:
        >>> import fw
        >>> x, y = fw.to_tensor([[0.0, 0.0], [1.0, 1.0]]), fw.to_tensor([[3.0, 4.0]])
        >>> [round(v, 4) for v in fw.nn.functional.pairwise_distance(x, y).tolist()]
        [5.0, 3.6056]
        >>> fw.nn.functional.pairwise_distance(x, y, keepdim=True).shape
        [2, 1]
    """
    return op("pairwise_distance", [x, y], p=p, epsilon=epsilon, keepdim=keepdim)


def pdist(x, p=2.0, name=None):
    """Distances between the rows of ``x``: the upper triangle (``i < j``) of the
    ``[N, N]`` distance matrix, row by row.

    Args:
        x (Tensor): ``[N, M]``.
        p (float, optional): the norm degree. Default: 2.0.
        name (str, optional): unused, for Paddle compatibility. Default: None.

    Returns:
        Tensor: ``[N * (N - 1) / 2]``.

    Examples:
        >>> import fw
        >>> x = fw.to_tensor([[0.0, 0.0], [3.0, 4.0], [6.0, 8.0]])
        >>> fw.nn.functional.pdist(x).tolist()
        [5.0, 10.0, 5.0]
    """
    n = x.shape[0]
    d = fw.cdist(x, x, p=p)
    rows, cols = fw.triu_indices(n, n, 1).unbind(0)
    return d[rows, cols]
