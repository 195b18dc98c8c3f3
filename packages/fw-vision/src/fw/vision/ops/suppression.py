"""Non-maximum suppression: ``nms`` (plain, scored, per-category with ``top_k``) and
``matrix_nms`` (SOLOv2's parallel soft suppression), with Paddle 3.x's arguments and
outputs. Selection is discrete, so neither has a gradient (nor has Paddle's)."""

from __future__ import annotations

import numpy as np

import fw
from fw.vision.ops._checks import FLOATS, INTS, check, describe
from fw.vision.ops._iou import greedy_keep, pairwise_iou

__all__ = ["nms", "matrix_nms"]

# fw-core's native greedy suppression (csrc/image.cpp): the same float64 IoU and the
# same greedy rule as _iou.pairwise_iou + greedy_keep, without the N x N matrix and the
# per-kept-box Python step; None runs the NumPy reference (tests set it to compare).
_UNSET = object()
_K = _UNSET


def _kernels():
    global _K
    if _K is _UNSET:
        from fw.core.internal import image_kernels

        _K = image_kernels()
    return _K


def _greedy(sb: np.ndarray, threshold: float) -> np.ndarray:
    """Kept positions of boxes `sb` already in priority order."""
    k = _kernels()
    if k is None:
        return greedy_keep(pairwise_iou(sb, sb), threshold)
    return k.nms(np.ascontiguousarray(sb, np.float64), threshold)


def _desc(scores: np.ndarray) -> np.ndarray:
    # stable, so equal scores keep their input order
    return np.argsort(-scores.astype(np.float64), kind="stable")


def nms(boxes, iou_threshold=0.3, scores=None, category_idxs=None, categories=None,
        top_k=None):
    """Non-maximum suppression (Paddle's ``paddle.vision.ops.nms``).

    Without ``scores`` the boxes are taken in their given order: a box is dropped when
    a kept box before it overlaps it with IoU above ``iou_threshold``. With ``scores``
    boxes are first sorted by score (descending). With ``category_idxs`` and
    ``categories`` suppression runs within each category only (batched NMS), the kept
    boxes are returned sorted by score and ``top_k`` limits how many.

    Args:
        boxes (Tensor): [N, 4] boxes (x1, y1, x2, y2), float32 or float64.
        iou_threshold (float, optional): IoU above which a box is suppressed. Default 0.3.
        scores (Tensor, optional): [N] scores. Default None.
        category_idxs (Tensor, optional): [N] category id of each box. Default None.
        categories (list[int], optional): the category ids to process (required with
            ``category_idxs``). Default None.
        top_k (int, optional): keep at most this many boxes (with categories). Default None.

    Returns:
        Tensor: int64 indices into ``boxes`` of the kept boxes.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> boxes = fw.to_tensor([[0., 0., 10., 10.], [1., 1., 10., 10.], [20., 20., 30., 30.]])
            >>> fw.vision.ops.nms(boxes, 0.5, scores=fw.to_tensor([0.9, 0.8, 0.7])).tolist()
            [0, 2]
    """
    op = "nms"
    b = check(boxes, op, "boxes", dtypes=FLOATS, ndim=2, last=4)
    n = b.shape[0]
    if scores is None:
        return fw.to_tensor(_greedy(b, float(iou_threshold)))
    s = check(scores, op, "scores", dtypes=FLOATS, ndim=1)
    if s.shape[0] != n:
        raise ValueError(f"nms: argument 'scores' must have one score per box ({n}), got "
                         f"{describe(s)}")
    if category_idxs is None:
        order = _desc(s)
        return fw.to_tensor(order[_greedy(b[order], float(iou_threshold))])
    c = check(category_idxs, op, "category_idxs", dtypes=INTS, ndim=1)
    if c.shape[0] != n:
        raise ValueError(f"nms: argument 'category_idxs' must have one id per box ({n}), "
                         f"got {describe(c)}")
    if categories is None:
        raise ValueError("nms: argument 'categories' (the list of category ids) is required "
                         "when 'category_idxs' is given")
    if top_k is not None and top_k > n:
        raise ValueError(f"nms: argument 'top_k' ({top_k}) must not exceed the number of "
                         f"boxes ({n})")
    keep = _batched(b, s, c, categories, float(iou_threshold))
    keep = keep[_desc(s[keep])]
    if top_k is not None:
        keep = keep[: int(top_k)]
    return fw.to_tensor(keep.astype(np.int64))


def _batched(b, s, c, categories, threshold: float) -> np.ndarray:
    """Ascending indices of the boxes kept by per-category greedy NMS."""
    k = _kernels()
    if k is None:
        kept = np.zeros(b.shape[0], bool)
        for cat in categories:
            idx = np.nonzero(c == cat)[0]
            if idx.size == 0:
                continue
            order = idx[_desc(s[idx])]
            sb = b[order]
            kept[order[greedy_keep(pairwise_iou(sb, sb), threshold)]] = True
        return np.nonzero(kept)[0]
    # one pass in global score order where a box suppresses only its own category: a
    # stable sort keeps each category's own order, so this keeps what the loop does
    idx = np.nonzero(np.isin(c, np.asarray(list(categories), dtype=np.int64)))[0]
    order = idx[_desc(s[idx])]
    pos = k.nms(np.ascontiguousarray(b[order], np.float64), threshold,
                categories=np.ascontiguousarray(c[order], np.int64))
    return np.sort(order[pos])


def _decay(iou: np.ndarray, max_iou: np.ndarray, use_gaussian: bool, sigma: float):
    """Matrix-NMS decay of candidate i from each higher-scored j (rows j < i): the
    overlap with j, compensated by how much j itself was overlapped (SOLOv2 eq. 4)."""
    comp = max_iou[:, None]
    if use_gaussian:
        return np.exp((comp ** 2 - iou ** 2) * sigma)
    return (1.0 - iou) / (1.0 - comp)


def matrix_nms(bboxes, scores, score_threshold, post_threshold, nms_top_k, keep_top_k,
               use_gaussian=False, gaussian_sigma=2.0, background_label=0, normalized=True,
               return_index=False, return_rois_num=True, name=None):
    """Matrix NMS (Paddle's ``paddle.vision.ops.matrix_nms``, from SOLOv2): every
    candidate's score decays by its overlaps with higher-scored boxes of its class,
    in one matrix step instead of a sequential loop.

    Args:
        bboxes (Tensor): [N, M, 4] boxes (x1, y1, x2, y2), float32 or float64.
        scores (Tensor): [N, C, M] class scores.
        score_threshold (float): candidates need a score above this.
        post_threshold (float): decayed scores must be above this to be kept.
        nms_top_k (int): candidates per class kept before decay (-1: all).
        keep_top_k (int): detections per image kept after decay (-1: all).
        use_gaussian (bool, optional): Gaussian decay instead of linear. Default False.
        gaussian_sigma (float, optional): sigma of the Gaussian decay. Default 2.0.
        background_label (int, optional): class skipped (-1: none). Default 0.
        normalized (bool, optional): boxes are normalized (else widths count +1). Default True.
        return_index (bool, optional): also return the kept indices. Default False.
        return_rois_num (bool, optional): also return detections per image. Default True.
        name (str, optional): unused, for Paddle compatibility.

    Returns:
        tuple: ``(out, rois_num, index)``: out [K, 6] rows (label, score, x1, y1, x2, y2),
        sorted by score within each image; rois_num [N] int32 (None unless
        return_rois_num); index [K, 1] int32 into the flattened [N*M] boxes (None unless
        return_index).

    Examples:
        .. code-block:: python

            >>> import fw
            >>> boxes = fw.to_tensor([[[0., 0., .5, .5], [0., 0., .45, .5], [.6, .6, 1., 1.]]])
            >>> scores = fw.to_tensor([[[0., 0., 0.], [.9, .8, .7]]])
            >>> out, num, _ = fw.vision.ops.matrix_nms(boxes, scores, 0.1, 0.5, -1, -1)
            >>> num.tolist()
            [2]
    """
    op = "matrix_nms"
    b = check(bboxes, op, "bboxes", dtypes=FLOATS, ndim=3, last=4)
    s = check(scores, op, "scores", dtypes=FLOATS, ndim=3)
    if s.shape[0] != b.shape[0] or s.shape[2] != b.shape[1]:
        raise ValueError(f"matrix_nms: arguments 'bboxes' [N, M, 4] and 'scores' [N, C, M] "
                         f"disagree: bboxes {describe(b)}, scores {describe(s)}")
    n, m = b.shape[:2]
    rows, index, per_image = [], [], []
    for i in range(n):
        labels, dscores, idxs = [], [], []
        for c in range(s.shape[1]):
            if c == background_label:
                continue
            sc = s[i, c].astype(np.float64)
            cand = np.nonzero(sc > score_threshold)[0]
            if cand.size == 0:
                continue
            cand = cand[_desc(sc[cand])]
            if nms_top_k > -1:
                cand = cand[:nms_top_k]
            if cand.size == 0:
                continue
            iou = np.triu(pairwise_iou(b[i, cand], b[i, cand], normalized), k=1)
            max_iou = iou.max(axis=0)  # how much each box is overlapped by a better one
            decay = _decay(iou, max_iou, use_gaussian, float(gaussian_sigma))
            decay = np.where(np.triu(np.ones_like(iou, bool), k=1), decay, np.inf)
            factor = np.minimum(decay.min(axis=0), 1.0)
            ds = sc[cand] * factor
            ok = ds > post_threshold
            labels.append(np.full(ok.sum(), c))
            dscores.append(ds[ok])
            idxs.append(cand[ok])
        if dscores:
            lab, dsc, idx = (np.concatenate(v) for v in (labels, dscores, idxs))
        else:
            lab, dsc, idx = np.zeros(0), np.zeros(0), np.zeros(0, np.int64)
        order = _desc(dsc)
        if keep_top_k > -1:
            order = order[:keep_top_k]
        per_image.append(order.size)
        rows.append(np.concatenate([lab[order, None], dsc[order, None],
                                    b[i, idx[order]].astype(np.float64)], axis=1))
        index.append(i * m + idx[order])
    out = np.concatenate(rows, 0).astype(b.dtype) if rows else np.zeros((0, 6), b.dtype)
    out_t = fw.to_tensor(out.reshape(-1, 6))
    num_t = fw.to_tensor(np.asarray(per_image, np.int32)) if return_rois_num else None
    idx_t = (fw.to_tensor(np.concatenate(index).astype(np.int32).reshape(-1, 1))
             if return_index else None)
    return out_t, num_t, idx_t
