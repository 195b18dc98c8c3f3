"""Re-sharding arithmetic: a shard is a box (``offset``, ``shape``) of a global
tensor; loading a box copies the intersection of every saved box with it."""

from __future__ import annotations

import numpy as np

__all__ = ["intersect", "copy_overlap", "covers"]


def intersect(off_a, shape_a, off_b, shape_b):
    """The intersection of two boxes (``offset``, ``shape`` of a global tensor).

    Args:
        off_a (list[int]): the first box's offset.
        shape_a (list[int]): its shape.
        off_b (list[int]): the second box's offset.
        shape_b (list[int]): its shape.

    Returns:
        tuple|None: ``(offset, shape)`` of the overlap, or None if it is empty.

    Examples:
        >>> import fw
        >>> from fw.distributed.checkpoint import intersect
        >>> intersect([0, 0], [4, 4], [2, 3], [4, 4])
        ([2, 3], [2, 1])
        >>> intersect([0], [2], [2], [2]) is None
        True
    """
    lo = [max(a, b) for a, b in zip(off_a, off_b)]
    hi = [min(a + sa, b + sb) for a, sa, b, sb in zip(off_a, shape_a, off_b, shape_b)]
    if any(h <= low for low, h in zip(lo, hi)) and len(lo):
        return None
    return lo, [h - low for low, h in zip(lo, hi)]


def copy_overlap(dst, dst_off, src, src_off) -> int:
    """Copy the part of box `src` (an array at `src_off`) that lies in box `dst` (at
    `dst_off`) into `dst` (re-sharding on load).

    Args:
        dst (numpy.ndarray): the destination box, written in place.
        dst_off (list[int]): its offset in the global tensor.
        src (numpy.ndarray): a saved box.
        src_off (list[int]): its offset.

    Returns:
        int: the number of elements copied.

    Examples:
        >>> import fw
        >>> import numpy as np
        >>> from fw.distributed.checkpoint import copy_overlap
        >>> dst = np.zeros(4)
        >>> copy_overlap(dst, [2], np.arange(4.0), [0])     # global [2, 6) <- [0, 4)
        2
        >>> dst.tolist()
        [2.0, 3.0, 0.0, 0.0]
    """
    box = intersect(dst_off, dst.shape, src_off, src.shape)
    if box is None:
        return 0
    lo, shape = box
    d = tuple(slice(low - o, low - o + s) for low, o, s in zip(lo, dst_off, shape))
    s_ = tuple(slice(low - o, low - o + s) for low, o, s in zip(lo, src_off, shape))
    dst[d] = src[s_]
    return int(np.prod(shape)) if shape else 1


def covers(boxes, global_shape) -> bool:
    """Whether disjoint `boxes` cover the whole tensor (their sizes add up to it).

    Args:
        boxes (list): ``(offset, shape)`` pairs.
        global_shape (list[int]): the whole tensor's shape.

    Returns:
        bool: full coverage.

    Examples:
        >>> import fw
        >>> from fw.distributed.checkpoint import covers
        >>> covers([([0], [2]), ([2], [2])], [4]), covers([([0], [2])], [4])
        (True, False)
    """
    total = int(np.prod(global_shape)) if global_shape else 1
    return sum(int(np.prod(s)) if s else 1 for _, s in boxes) == total
