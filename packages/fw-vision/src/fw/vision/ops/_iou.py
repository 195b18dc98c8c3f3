"""Pairwise IoU of corner-format boxes, the one overlap rule of the NMS ops."""

from __future__ import annotations

import numpy as np


def pairwise_iou(a: np.ndarray, b: np.ndarray, normalized: bool = True) -> np.ndarray:
    """IoU matrix [len(a), len(b)] of (x1, y1, x2, y2) boxes. ``normalized=False`` counts
    pixels inclusively (width = x2 - x1 + 1), as Paddle's detection kernels do for
    unnormalized coordinates; a box with x2 < x1 or y2 < y1 has area 0."""
    off = 0.0 if normalized else 1.0
    a = a.astype(np.float64)
    b = b.astype(np.float64)

    def area(x):
        w = x[:, 2] - x[:, 0] + off
        h = x[:, 3] - x[:, 1] + off
        bad = (x[:, 2] < x[:, 0]) | (x[:, 3] < x[:, 1])
        return np.where(bad, 0.0, w * h)

    def overlap(lo, hi):  # [len(a), len(b)] overlap lengths along one axis, in place
        d = np.minimum(a[:, None, hi], b[None, :, hi])
        d -= np.maximum(a[:, None, lo], b[None, :, lo])
        # boxes apart in raw coordinates do not overlap, even when the +1 pixel convention
        # would make them touch (Paddle's JaccardOverlap tests this first)
        apart = d < 0
        d += off
        d[apart] = 0.0
        return d

    inter = overlap(0, 2)
    inter *= overlap(1, 3)
    union = area(a)[:, None] + area(b)[None, :]
    union -= inter
    np.divide(inter, union, out=inter, where=union > 0)
    inter[union <= 0] = 0.0
    return inter


def greedy_keep(iou: np.ndarray, threshold: float, eta: float = 1.0) -> np.ndarray:
    """Greedy NMS over boxes already in priority order: box i is kept unless a kept box
    before it overlaps it by more than ``threshold``. With ``eta < 1`` the threshold
    decays after each kept box while above 0.5 (Paddle's adaptive NMS). The loop runs
    once per kept box; each step suppresses with one vectorized row."""
    n = iou.shape[0]
    if eta >= 1.0:
        alive = np.ones(n, bool)
        keep = []
        for i in range(n):
            if alive[i]:
                keep.append(i)
                alive[i + 1:] &= ~(iou[i, i + 1:] > threshold)
        return np.asarray(keep, np.int64)
    # adaptive: each candidate is compared with every kept box at the current threshold
    keep = []
    thr = float(threshold)
    for i in range(n):
        if keep and (iou[i, keep] > thr).any():
            continue
        keep.append(i)
        if thr > 0.5:
            thr *= eta
    return np.asarray(keep, np.int64)
