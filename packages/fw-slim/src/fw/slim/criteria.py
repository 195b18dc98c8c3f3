"""Channel importance criteria for structured pruning: ``{name: fn}``.

A criterion gets one matrix per channel group: row ``c`` is channel ``c``'s
filter -- the producers' weights for that channel, flattened and concatenated
(a residual group has one producer per branch) -- and returns one score per
channel. The pruner removes the channels with the *lowest* scores.

- ``l1``: the sum of absolute values (Li et al. 2017, "Pruning Filters for
  Efficient ConvNets").
- ``l2``: the Euclidean norm.
- ``fpgm``: filter pruning via the geometric median (He et al. 2019, CVPR):
  filters near the geometric median of the layer's filters are the most
  replaceable by the others. As in the paper, the median is not computed; a
  filter's score is the sum of its Euclidean distances to all other filters, and
  the smallest sums (closest to the median) are pruned.

Add one with `register_criterion(name, fn)`; ``fn(matrix) -> scores``, both
NumPy float64.
"""

from __future__ import annotations

import numpy as np

__all__ = ["CRITERIA", "register_criterion", "l1_norm", "l2_norm", "fpgm"]


def l1_norm(filters: np.ndarray) -> np.ndarray:
    return np.abs(filters).sum(axis=1)


def l2_norm(filters: np.ndarray) -> np.ndarray:
    return np.sqrt(np.square(filters).sum(axis=1))


def fpgm(filters: np.ndarray) -> np.ndarray:
    # pairwise distances through the Gram matrix: |a-b|^2 = |a|^2 + |b|^2 - 2ab
    sq = np.square(filters).sum(axis=1)
    d2 = sq[:, None] + sq[None, :] - 2.0 * (filters @ filters.T)
    np.fill_diagonal(d2, 0.0)  # exact: rounding would leave sqrt(eps) on the diagonal
    return np.sqrt(np.maximum(d2, 0.0)).sum(axis=1)


CRITERIA = {"l1": l1_norm, "l2": l2_norm, "fpgm": fpgm}


def register_criterion(name: str, fn) -> None:
    """Make `fn` available as ``criterion=name`` of the channel pruners.

    Args:
        name (str): the criterion's name.
        fn (callable): ``fn(filters) -> scores``: `filters` is ``[channels, rest]``
            (one row per output channel), the result one importance per channel
            (higher: keep).

    Returns:
        None.

    Examples:
        >>> import fw
        >>> import numpy as np
        >>> from fw.slim import register_criterion
        >>> from fw.slim.criteria import CRITERIA
        >>> register_criterion("max_abs", lambda filters: np.abs(filters).max(axis=1))
        >>> "max_abs" in CRITERIA
        True
        >>> _ = CRITERIA.pop("max_abs")
    """
    if not callable(fn):
        raise TypeError(f"register_criterion: 'fn' must be callable, got {type(fn).__name__}")
    CRITERIA[str(name)] = fn


def get_criterion(criterion):
    """A criterion by name or a callable passed through; a clear error otherwise."""
    if callable(criterion):
        return criterion
    fn = CRITERIA.get(str(criterion).lower())
    if fn is None:
        raise ValueError(f"ChannelPruner: unknown criterion {criterion!r}; known: "
                         f"{sorted(CRITERIA)} (or pass a callable)")
    return fn
