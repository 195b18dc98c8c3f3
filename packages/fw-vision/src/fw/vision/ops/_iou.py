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

    iw = np.minimum(a[:, None, 2], b[None, :, 2]) - np.maximum(a[:, None, 0], b[None, :, 0])
    ih = np.minimum(a[:, None, 3], b[None, :, 3]) - np.maximum(a[:, None, 1], b[None, :, 1])
    # boxes apart in raw coordinates do not overlap, even when the +1 pixel convention
    # would make them touch (Paddle's JaccardOverlap tests this first)
    apart = (iw < 0) | (ih < 0)
    inter = np.where(apart, 0.0, np.clip(iw + off, 0, None) * np.clip(ih + off, 0, None))
    union = area(a)[:, None] + area(b)[None, :] - inter
    with np.errstate(divide="ignore", invalid="ignore"):
        iou = np.where(union > 0, inter / union, 0.0)
    return iou


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
