"""YOLOv3 loss (Paddle's ``paddle.vision.ops.yolo_loss``), differentiable in ``x``.

The target assignment (which anchor and cell each ground-truth box owns, which
predictions are ignored because they already overlap a box well) is discrete and
runs in NumPy. The loss itself is then a sum of sigmoid cross-entropy and L1 terms
of gathered elements of ``x`` with constant targets and weights, written with fw
ops so autograd gives the gradient (sigmoid(x) - target for the cross-entropy
terms, the sign for the L1 terms, as Paddle's kernel does).
"""

from __future__ import annotations

import numpy as np

import fw
from fw.nn import functional as F
from fw.vision.ops._checks import FLOATS, INTS, check, describe

__all__ = ["yolo_loss"]


def _sigmoid(v):
    return 1.0 / (1.0 + np.exp(-v))


def _center_iou(a, b):
    """IoU of center-format (cx, cy, w, h) boxes, broadcasting a [..., 4] with b [..., 4]."""
    ax1, ax2 = a[..., 0] - a[..., 2] / 2, a[..., 0] + a[..., 2] / 2
    ay1, ay2 = a[..., 1] - a[..., 3] / 2, a[..., 1] + a[..., 3] / 2
    bx1, bx2 = b[..., 0] - b[..., 2] / 2, b[..., 0] + b[..., 2] / 2
    by1, by2 = b[..., 1] - b[..., 3] / 2, b[..., 1] + b[..., 3] / 2
    iw = np.minimum(ax2, bx2) - np.maximum(ax1, bx1)
    ih = np.minimum(ay2, by2) - np.maximum(ay1, by1)
    inter = np.where((iw < 0) | (ih < 0), 0.0, iw * ih)
    union = a[..., 2] * a[..., 3] + b[..., 2] * b[..., 3] - inter
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(union > 0, inter / union, 0.0)


def yolo_loss(x, gt_box, gt_label, anchors, anchor_mask, class_num, ignore_thresh,
              downsample_ratio, gt_score=None, use_label_smooth=True, name=None, scale_x_y=1.0):
    """YOLOv3 loss of one detection head, per image.

    For each ground-truth box the best-matching anchor (by shape IoU, over all
    ``anchors``) is responsible for it if it is one of this head's ``anchor_mask``:
    that prediction gets location losses (sigmoid cross-entropy on x, y; L1 on log w,
    h; weighted by ``(2 - w * h) * score``), class losses and a positive objectness
    target. Predictions overlapping some box by more than ``ignore_thresh`` get no
    objectness loss; all others get a negative objectness target.

    Args:
        x (Tensor): [N, len(anchor_mask) * (5 + class_num), H, W] head output.
        gt_box (Tensor): [N, B, 4] boxes (cx, cy, w, h), normalized to [0, 1]; boxes
            with w or h <= 0 are padding.
        gt_label (Tensor): [N, B] int32 class of each box.
        anchors (list[int]): all anchor (w, h) pairs of the model, flattened, in pixels.
        anchor_mask (list[int]): indices of this head's anchors.
        class_num (int): number of classes.
        ignore_thresh (float): IoU above which a prediction's objectness is not penalized.
        downsample_ratio (int): input size / H of this head.
        gt_score (Tensor, optional): [N, B] box weights (mixup). Default None (ones).
        use_label_smooth (bool, optional): class targets 1 - s and s with
            s = min(1 / class_num, 1 / 40). Default True.
        name (str, optional): unused, for Paddle compatibility.
        scale_x_y (float, optional): YOLOv4 center scaling (affects the ignore test).
            Default 1.0.

    Returns:
        Tensor: [N] loss per image; differentiable in ``x``.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> x = fw.zeros([1, 2 * (5 + 3), 4, 4])
            >>> gt_box = fw.to_tensor([[[0.5, 0.5, 0.3, 0.4]]])
            >>> gt_label = fw.to_tensor([[1]], dtype="int32")
            >>> loss = fw.vision.ops.yolo_loss(x, gt_box, gt_label, [10, 13, 30, 40], [0, 1],
            ...                                3, 0.7, 32)
            >>> loss.shape
            [1]
    """
    op = "yolo_loss"
    xa = check(x, op, "x", dtypes=FLOATS, ndim=4)
    gb = check(gt_box, op, "gt_box", dtypes=FLOATS, ndim=3, last=4)
    gl = check(gt_label, op, "gt_label", dtypes=INTS, ndim=2)
    gs = check(gt_score, op, "gt_score", dtypes=FLOATS, ndim=2, optional=True)
    an = np.asarray(anchors, np.float64).reshape(-1)
    if an.size == 0 or an.size % 2:
        raise ValueError(f"yolo_loss: argument 'anchors' must hold (w, h) pairs, got "
                         f"{anchors!r}")
    mask = [int(m) for m in anchor_mask]
    if not mask or min(mask) < 0 or max(mask) >= an.size // 2:
        raise ValueError(f"yolo_loss: argument 'anchor_mask' must index the "
                         f"{an.size // 2} anchors, got {anchor_mask!r}")
    n, ch, h, w = xa.shape
    m, per = len(mask), 5 + class_num
    if ch != m * per:
        raise ValueError(f"yolo_loss: argument 'x' must have {m * per} channels for "
                         f"{m} masked anchors and class_num={class_num}, got {describe(xa)}")
    if h != w:  # the grid scale below is shared by x and y, as in Paddle (which checks too)
        raise ValueError(f"yolo_loss: argument 'x' must have a square grid (H == W), got "
                         f"{describe(xa)}")
    b = gb.shape[1]
    if gb.shape[0] != n or gl.shape != (n, b):
        raise ValueError(f"yolo_loss: 'gt_box' must be [{n}, B, 4] and 'gt_label' [{n}, B], "
                         f"got gt_box {describe(gb)} and gt_label {describe(gl)}")
    if gs is not None and gs.shape != (n, b):
        raise ValueError(f"yolo_loss: 'gt_score' must be [{n}, {b}], got {describe(gs)}")
    score = np.ones((n, b)) if gs is None else gs.astype(np.float64)
    gbox = gb.astype(np.float64)
    valid = (gbox[..., 2] > 0) & (gbox[..., 3] > 0)
    input_size = downsample_ratio * h
    v = xa.astype(np.float64).reshape(n, m, per, h, w)

    # ignore mask: predicted boxes that overlap some ground truth well enough
    bias = -0.5 * (scale_x_y - 1.0)
    aw = an[0::2][mask][None, :, None, None]
    ah = an[1::2][mask][None, :, None, None]
    pred = np.stack(np.broadcast_arrays(
        (np.arange(w)[None, None, None, :] + _sigmoid(v[:, :, 0]) * scale_x_y + bias) / h,
        (np.arange(h)[None, None, :, None] + _sigmoid(v[:, :, 1]) * scale_x_y + bias) / h,
        np.exp(v[:, :, 2]) * aw / input_size,
        np.exp(v[:, :, 3]) * ah / input_size), -1)  # [N, M, H, W, 4]
    iou = _center_iou(pred[:, :, :, :, None, :], gbox[:, None, None, None, :, :])
    iou = np.where(valid[:, None, None, None, :], iou, 0.0)
    best = iou.max(axis=-1) if b else np.zeros((n, m, h, w))
    obj = np.where(best > ignore_thresh, -1.0, 0.0)  # -1: ignored, 0: negative, >0: positive

    # assignment: the best anchor (by shape) of every valid box
    shapes = np.stack([np.zeros(an.size // 2), np.zeros(an.size // 2),
                       an[0::2] / input_size, an[1::2] / input_size], -1)
    pos = 1.0
    neg = 0.0
    if use_label_smooth:
        smooth = min(1.0 / class_num, 1.0 / 40)
        pos, neg = 1.0 - smooth, smooth

    def at(i, j, c, gj, gi):  # flat index of x[i, j*per + c, gj, gi]
        return ((i * m + j) * per + c) * h * w + gj * w + gi

    # every valid box at once, in Paddle's loop order (image, then box)
    img, box = np.nonzero(valid)
    gx, gy, gw, gh = (gbox[img, box, k] for k in range(4))
    gi = np.minimum((gx * w).astype(np.int64), w - 1)
    gj = np.minimum((gy * h).astype(np.int64), h - 1)
    g0 = np.stack([np.zeros_like(gw), np.zeros_like(gw), gw, gh], -1)
    best_n = np.argmax(_center_iou(g0[:, None, :], shapes[None]), axis=1)  # first maximum
    slot = np.full(an.size // 2, -1)
    slot[mask] = np.arange(m)
    j = slot[best_n]
    mine = j >= 0  # boxes whose best anchor belongs to this head
    img, box, gx, gy, gw, gh, gi, gj, best_n, j = (
        v[mine] for v in (img, box, gx, gy, gw, gh, gi, gj, best_n, j))
    sc = score[img, box]
    wgt = (2.0 - gw * gh) * sc
    # positives' objectness: when boxes share a cell and anchor the later one wins
    cell = at(img, j, 0, gj, gi)
    last = len(cell) - 1 - np.unique(cell[::-1], return_index=True)[1]
    obj[img[last], j[last], gj[last], gi[last]] = sc[last]
    lab = gl[img, box].astype(np.int64)
    cls = np.arange(class_num)[None, :]
    ii, jj, yy, xx = np.meshgrid(np.arange(n), np.arange(m), np.arange(h), np.arange(w),
                                 indexing="ij")
    flat_obj = obj.reshape(-1)
    sce_idx = np.concatenate([at(img, j, 0, gj, gi), at(img, j, 1, gj, gi),
                              at(img[:, None], j[:, None], 5 + cls, gj[:, None],
                                 gi[:, None]).reshape(-1),
                              at(ii, jj, 4, yy, xx).reshape(-1)])
    sce_t = np.concatenate([gx * w - gi, gy * h - gj,
                            np.where(cls == lab[:, None], pos, neg).reshape(-1),
                            (flat_obj > 1e-5).astype(np.float64)])
    sce_w = np.concatenate([wgt, wgt, np.repeat(sc, class_num),
                            np.where(flat_obj > 1e-5, flat_obj,
                                     np.where(flat_obj > -0.5, 1.0, 0.0))])
    sce_img = np.concatenate([img, img, np.repeat(img, class_num), ii.reshape(-1)])
    l1_idx = np.concatenate([at(img, j, 2, gj, gi), at(img, j, 3, gj, gi)])
    l1_t = np.concatenate([np.log(gw * input_size / an[2 * best_n]),
                           np.log(gh * input_size / an[2 * best_n + 1])])
    l1_w = np.concatenate([wgt, wgt])
    l1_img = np.concatenate([img, img])

    dtype = xa.dtype
    xt = x if isinstance(x, fw.Tensor) else fw.to_tensor(xa)
    xflat = xt.reshape([-1])

    def per_image(values, img):  # sum the terms of each image: [N]
        onehot = (np.arange(n)[:, None] == np.asarray(img)[None, :]).astype(dtype)
        return fw.matmul(fw.to_tensor(onehot), values.reshape([-1, 1])).reshape([n])

    g = fw.gather(xflat, fw.to_tensor(sce_idx.astype(np.int64)))
    sce = (F.softplus(g) - g * fw.to_tensor(sce_t.astype(dtype))) * \
        fw.to_tensor(sce_w.astype(dtype))
    loss = per_image(sce, sce_img)
    if len(l1_idx):
        g1 = fw.gather(xflat, fw.to_tensor(l1_idx.astype(np.int64)))
        l1 = fw.abs(g1 - fw.to_tensor(np.asarray(l1_t).astype(dtype))) * \
            fw.to_tensor(np.asarray(l1_w).astype(dtype))
        loss = loss + per_image(l1, l1_img)
    return loss
