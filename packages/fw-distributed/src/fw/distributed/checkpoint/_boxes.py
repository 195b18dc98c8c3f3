"""Re-sharding arithmetic: a shard is a box (``offset``, ``shape``) of a global
tensor; loading a box copies the intersection of every saved box with it."""

from __future__ import annotations

import numpy as np

__all__ = ["intersect", "copy_overlap", "covers"]


def intersect(off_a, shape_a, off_b, shape_b):
    """The intersection of two boxes as ``(offset, shape)``, or None if empty."""
    lo = [max(a, b) for a, b in zip(off_a, off_b)]
    hi = [min(a + sa, b + sb) for a, sa, b, sb in zip(off_a, shape_a, off_b, shape_b)]
    if any(h <= low for low, h in zip(lo, hi)) and len(lo):
        return None
    return lo, [h - low for low, h in zip(lo, hi)]


def copy_overlap(dst, dst_off, src, src_off) -> int:
    """Copy the part of box `src` (an array at `src_off`) that lies in box `dst` (at
    `dst_off`) into `dst`; returns the number of elements copied."""
    box = intersect(dst_off, dst.shape, src_off, src.shape)
    if box is None:
        return 0
    lo, shape = box
    d = tuple(slice(low - o, low - o + s) for low, o, s in zip(lo, dst_off, shape))
    s_ = tuple(slice(low - o, low - o + s) for low, o, s in zip(lo, src_off, shape))
    dst[d] = src[s_]
    return int(np.prod(shape)) if shape else 1


def covers(boxes, global_shape) -> bool:
    """Whether disjoint `boxes` (``(offset, shape)`` pairs) cover the whole tensor."""
    total = int(np.prod(global_shape)) if global_shape else 1
    return sum(int(np.prod(s)) if s else 1 for _, s in boxes) == total
