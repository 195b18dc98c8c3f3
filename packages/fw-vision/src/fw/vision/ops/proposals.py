"""Region-proposal ops of two-stage detectors, with Paddle 3.x's arguments and
outputs: ``generate_proposals`` (RPN: decode anchors, clip, filter, NMS) and
``distribute_fpn_proposals`` (route RoIs to FPN levels by scale). Both select
boxes discretely and have no gradient (nor do Paddle's)."""

from __future__ import annotations

import math

import numpy as np

import fw
from fw.vision.ops._checks import FLOATS, INTS, check, describe
from fw.vision.ops._iou import greedy_keep, pairwise_iou

__all__ = ["distribute_fpn_proposals", "generate_proposals"]

# deltas of log-width above this are clipped before exp (Detectron's log(1000 / 16))
_BBOX_CLIP = math.log(1000.0 / 16.0)


def distribute_fpn_proposals(fpn_rois, min_level, max_level, refer_level, refer_scale,
                             pixel_offset=False, rois_num=None, name=None):
    """Assign each RoI to an FPN level by its scale (Paddle's
    ``paddle.vision.ops.distribute_fpn_proposals``, FPN paper eq. 1):
    ``level = floor(refer_level + log2(sqrt(area) / refer_scale))`` clipped to
    [min_level, max_level].

    Args:
        fpn_rois (Tensor): [R, 4] RoIs (x1, y1, x2, y2), float32 or float64.
        min_level (int): lowest FPN level.
        max_level (int): highest FPN level.
        refer_level (int): level of a RoI of side ``refer_scale``.
        refer_scale (int): reference side length.
        pixel_offset (bool, optional): widths count one extra pixel. Default False.
        rois_num (Tensor, optional): [N] int32 RoIs per image. Default None.
        name (str, optional): unused, for Paddle compatibility.

    Returns:
        tuple: ``(multi_rois, restore_ind, rois_num_per_level)``: the RoIs of each level
        (a list, lowest level first, each in input order), restore_ind [R, 1] int32 (the
        position of each input RoI in the concatenated levels) and, when ``rois_num`` is
        given, the [N] int32 RoIs per image of each level (else None).

    Examples:
        .. code-block:: python

            >>> import fw
            >>> rois = fw.to_tensor([[0., 0., 50., 50.], [0., 0., 400., 400.]])
            >>> multi, restore, nums = fw.vision.ops.distribute_fpn_proposals(
            ...     rois, 2, 5, 4, 224, rois_num=fw.to_tensor([2], dtype="int32"))
            >>> [m.shape[0] for m in multi]
            [1, 0, 1, 0]
    """
    op = "distribute_fpn_proposals"
    r = check(fpn_rois, op, "fpn_rois", dtypes=FLOATS, ndim=2, last=4)
    if min_level > max_level:
        raise ValueError(f"{op}: min_level ({min_level}) must not exceed max_level "
                         f"({max_level})")
    if rois_num is not None:
        num = check(rois_num, op, "rois_num", dtypes=INTS, ndim=1)
        if (num < 0).any() or int(num.sum()) != r.shape[0]:
            raise ValueError(f"{op}: argument 'rois_num' must sum to the number of RoIs "
                             f"({r.shape[0]}), got {num.tolist()}")
        image = np.repeat(np.arange(num.shape[0]), num)
    off = 1.0 if pixel_offset else 0.0
    rr = r.astype(np.float64)
    w = rr[:, 2] - rr[:, 0] + off
    h = rr[:, 3] - rr[:, 1] + off
    bad = (rr[:, 2] < rr[:, 0]) | (rr[:, 3] < rr[:, 1])
    scale = np.sqrt(np.where(bad, 0.0, w * h))
    with np.errstate(divide="ignore"):
        lvl = np.floor(np.log2(scale / refer_scale + 1e-8) + refer_level)
    lvl = np.clip(lvl, min_level, max_level).astype(np.int64)
    order = np.argsort(lvl, kind="stable")  # level-major, input order within a level
    restore = np.empty(len(r), np.int32)
    restore[order] = np.arange(len(r), dtype=np.int32)
    multi, per_level = [], []
    for level in range(min_level, max_level + 1):
        sel = np.nonzero(lvl == level)[0]
        multi.append(fw.to_tensor(r[sel].reshape(-1, 4)))
        if rois_num is not None:
            counts = np.bincount(image[sel], minlength=num.shape[0]).astype(np.int32)
            per_level.append(fw.to_tensor(counts))
    return multi, fw.to_tensor(restore.reshape(-1, 1)), (per_level if rois_num is not None
                                                          else None)


def _decode(anchors, deltas, variances, off):
    aw = anchors[:, 2] - anchors[:, 0] + off
    ah = anchors[:, 3] - anchors[:, 1] + off
    acx = anchors[:, 0] + 0.5 * aw
    acy = anchors[:, 1] + 0.5 * ah
    d = deltas * variances
    cx = d[:, 0] * aw + acx
    cy = d[:, 1] * ah + acy
    w = np.exp(np.minimum(d[:, 2], _BBOX_CLIP)) * aw
    h = np.exp(np.minimum(d[:, 3], _BBOX_CLIP)) * ah
    return np.stack([cx - w / 2, cy - h / 2, cx + w / 2 - off, cy + h / 2 - off], 1)


def generate_proposals(scores, bbox_deltas, img_size, anchors, variances, pre_nms_top_n=6000,
                       post_nms_top_n=1000, nms_thresh=0.5, min_size=0.1, eta=1.0,
                       pixel_offset=False, return_rois_num=False, name=None):
    """RPN proposals (Paddle's ``paddle.vision.ops.generate_proposals``): per image,
    take the ``pre_nms_top_n`` best anchors, decode their deltas, clip to the image,
    drop boxes smaller than ``min_size``, run NMS and keep ``post_nms_top_n``.

    Args:
        scores (Tensor): [N, A, H, W] objectness.
        bbox_deltas (Tensor): [N, 4*A, H, W] box deltas.
        img_size (Tensor): [N, 2] image (height, width).
        anchors (Tensor): [H, W, A, 4] anchors (x1, y1, x2, y2).
        variances (Tensor): [H, W, A, 4] variances of the deltas.
        pre_nms_top_n (int, optional): boxes per image before NMS. Default 6000.
        post_nms_top_n (int, optional): boxes per image after NMS. Default 1000.
        nms_thresh (float, optional): NMS IoU threshold. Default 0.5.
        min_size (float, optional): minimum box side (at least 1). Default 0.1.
        eta (float, optional): adaptive NMS decay (used while the threshold is > 0.5).
            Default 1.0.
        pixel_offset (bool, optional): widths count one extra pixel. Default False.
        return_rois_num (bool, optional): also return proposals per image. Default False.
        name (str, optional): unused, for Paddle compatibility.

    Returns:
        tuple: ``(rpn_rois [K, 4], rpn_roi_probs [K, 1], rpn_rois_num [N] int32 or None)``.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> scores = fw.to_tensor([[[[0.9]], [[0.1]]]])
            >>> deltas = fw.zeros([1, 8, 1, 1])
            >>> anchors = fw.to_tensor([[[[0., 0., 8., 8.], [2., 2., 12., 12.]]]])
            >>> rois, probs, num = fw.vision.ops.generate_proposals(
            ...     scores, deltas, fw.to_tensor([[16., 16.]]), anchors, fw.ones([1, 1, 2, 4]),
            ...     return_rois_num=True)
            >>> num.tolist()
            [2]
    """
    op = "generate_proposals"
    s = check(scores, op, "scores", dtypes=FLOATS, ndim=4)
    d = check(bbox_deltas, op, "bbox_deltas", dtypes=FLOATS, ndim=4)
    im = check(img_size, op, "img_size", dtypes=FLOATS + INTS, ndim=2, last=2)
    an = check(anchors, op, "anchors", dtypes=FLOATS, last=4)
    va = check(variances, op, "variances", dtypes=FLOATS, last=4)
    n, a, h, w = s.shape
    if d.shape != (n, 4 * a, h, w):
        raise ValueError(f"{op}: 'bbox_deltas' must be [{n}, {4 * a}, {h}, {w}] for scores "
                         f"{describe(s)}, got {describe(d)}")
    if an.size != h * w * a * 4 or va.shape != an.shape:
        raise ValueError(f"{op}: 'anchors' and 'variances' must be [{h}, {w}, {a}, 4], got "
                         f"anchors {describe(an)} and variances {describe(va)}")
    if im.shape[0] != n:
        raise ValueError(f"{op}: 'img_size' must be [{n}, 2], got {describe(im)}")
    off = 1.0 if pixel_offset else 0.0
    an2 = an.reshape(-1, 4).astype(np.float64)
    va2 = va.reshape(-1, 4).astype(np.float64)
    rois, probs, nums = [], [], []
    for i in range(n):
        sc = s[i].transpose(1, 2, 0).reshape(-1).astype(np.float64)  # [H*W*A], anchor order
        dl = d[i].reshape(a, 4, h, w).transpose(2, 3, 0, 1).reshape(-1, 4).astype(np.float64)
        order = np.argsort(-sc, kind="stable")
        if 0 < pre_nms_top_n < len(order):
            order = order[:pre_nms_top_n]
        box = _decode(an2[order], dl[order], va2[order], off)
        ih, iw = float(im[i, 0]), float(im[i, 1])
        box[:, 0::2] = np.clip(box[:, 0::2], 0, iw - off)
        box[:, 1::2] = np.clip(box[:, 1::2], 0, ih - off)
        ms = max(float(min_size), 1.0)
        bw = box[:, 2] - box[:, 0] + off
        bh = box[:, 3] - box[:, 1] + off
        keep = (bw >= ms) & (bh >= ms)
        if pixel_offset:
            keep &= (box[:, 0] + bw / 2 <= iw) & (box[:, 1] + bh / 2 <= ih)
        box, sc_k = box[keep], sc[order][keep]
        if len(box) == 0:  # Paddle emits one zero box with score 0
            box, sc_k = np.zeros((1, 4)), np.zeros(1)
        elif nms_thresh > 0:
            sel = greedy_keep(pairwise_iou(box, box, normalized=not pixel_offset),
                              float(nms_thresh), float(eta))
            if 0 < post_nms_top_n < len(sel):
                sel = sel[:post_nms_top_n]
            box, sc_k = box[sel], sc_k[sel]
        rois.append(box)
        probs.append(sc_k)
        nums.append(len(box))
    dtype = s.dtype
    out_rois = fw.to_tensor(np.concatenate(rois).astype(dtype).reshape(-1, 4))
    out_probs = fw.to_tensor(np.concatenate(probs).astype(dtype).reshape(-1, 1))
    out_num = fw.to_tensor(np.asarray(nums, np.int32)) if return_rois_num else None
    return out_rois, out_probs, out_num
