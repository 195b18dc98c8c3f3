"""Segment reductions (``paddle.geometric.segment_*``): rows of `data` grouped by a
sorted segment id per row."""

from __future__ import annotations

from fw.core.errors import InvalidArgumentError
from fw.geometric._scatter import _DATA, check_index, check_tensor, reduce_rows

__all__ = ["segment_sum", "segment_mean", "segment_max", "segment_min"]


def _segment(data, segment_ids, reduce, who):
    check_tensor(data, "data", who, _DATA)
    if len(data.shape) == 0:
        raise InvalidArgumentError(f"{who}: 'data' must have at least 1 dimension, got a "
                                   f"0-D tensor")
    ids = check_index(segment_ids, "segment_ids", who, length=data.shape[0])
    if ids.size > 1 and (ids[1:] < ids[:-1]).any():
        raise InvalidArgumentError(
            f"{who}: 'segment_ids' must be sorted ascending, got {ids.tolist()[:16]}")
    n = int(ids[-1]) + 1 if ids.size else 0
    return reduce_rows(data, segment_ids, ids, n, reduce)


def segment_sum(data, segment_ids, name=None):
    """The sum of the rows of `data` in each segment: ``out[i] = sum(data[j] for j with
    segment_ids[j] == i)``.

    Args:
        data (Tensor): [N, ...] float16, bfloat16, float32, float64, int32 or int64.
        segment_ids (Tensor): [N] int32 or int64, sorted ascending.
        name (str, optional): unused (Paddle's naming argument).

    Returns:
        Tensor: [segment_ids[-1] + 1, ...] with data's dtype; empty segments are 0.

    Examples:
        >>> import fw
        >>> data = fw.to_tensor([[1.0, 2.0, 3.0], [3.0, 2.0, 1.0], [4.0, 5.0, 6.0]])
        >>> fw.geometric.segment_sum(data, fw.to_tensor([0, 0, 1])).tolist()
        [[4.0, 4.0, 4.0], [4.0, 5.0, 6.0]]
    """
    return _segment(data, segment_ids, "sum", "segment_sum")


def segment_mean(data, segment_ids, name=None):
    """The mean of the rows of `data` in each segment (empty segments are 0).

    Args:
        data (Tensor): [N, ...] float16, bfloat16, float32, float64, int32 or int64.
        segment_ids (Tensor): [N] int32 or int64, sorted ascending.
        name (str, optional): unused (Paddle's naming argument).

    Returns:
        Tensor: [segment_ids[-1] + 1, ...] with data's dtype.

    Examples:
        >>> import fw
        >>> data = fw.to_tensor([[1.0, 2.0, 3.0], [3.0, 2.0, 1.0], [4.0, 5.0, 6.0]])
        >>> fw.geometric.segment_mean(data, fw.to_tensor([0, 0, 1])).tolist()
        [[2.0, 2.0, 2.0], [4.0, 5.0, 6.0]]
    """
    return _segment(data, segment_ids, "mean", "segment_mean")


def segment_max(data, segment_ids, name=None):
    """The elementwise maximum of the rows of `data` in each segment (empty segments
    are 0); the gradient goes to every row equal to the maximum, as in Paddle.

    Args:
        data (Tensor): [N, ...] float16, bfloat16, float32, float64, int32 or int64.
        segment_ids (Tensor): [N] int32 or int64, sorted ascending.
        name (str, optional): unused (Paddle's naming argument).

    Returns:
        Tensor: [segment_ids[-1] + 1, ...] with data's dtype.

    Examples:
        >>> import fw
        >>> data = fw.to_tensor([[1.0, 2.0, 3.0], [3.0, 2.0, 1.0], [4.0, 5.0, 6.0]])
        >>> fw.geometric.segment_max(data, fw.to_tensor([0, 0, 1])).tolist()
        [[3.0, 2.0, 3.0], [4.0, 5.0, 6.0]]
    """
    return _segment(data, segment_ids, "max", "segment_max")


def segment_min(data, segment_ids, name=None):
    """The elementwise minimum of the rows of `data` in each segment (empty segments
    are 0); the gradient goes to every row equal to the minimum, as in Paddle.

    Args:
        data (Tensor): [N, ...] float16, bfloat16, float32, float64, int32 or int64.
        segment_ids (Tensor): [N] int32 or int64, sorted ascending.
        name (str, optional): unused (Paddle's naming argument).

    Returns:
        Tensor: [segment_ids[-1] + 1, ...] with data's dtype.

    Examples:
        >>> import fw
        >>> data = fw.to_tensor([[1.0, 2.0, 3.0], [3.0, 2.0, 1.0], [4.0, 5.0, 6.0]])
        >>> fw.geometric.segment_min(data, fw.to_tensor([0, 0, 1])).tolist()
        [[1.0, 2.0, 1.0], [4.0, 5.0, 6.0]]
    """
    return _segment(data, segment_ids, "min", "segment_min")
