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
    sce_idx, sce_t, sce_w, sce_img = [], [], [], []
    l1_idx, l1_t, l1_w, l1_img = [], [], [], []
    pos = 1.0
    neg = 0.0
    if use_label_smooth:
        smooth = min(1.0 / class_num, 1.0 / 40)
        pos, neg = 1.0 - smooth, smooth

    def at(i, j, c, gj, gi):  # flat index of x[i, j*per + c, gj, gi]
        return ((i * m + j) * per + c) * h * w + gj * w + gi

    for i, t in zip(*np.nonzero(valid)):
        gx, gy, gw, gh = gbox[i, t]
        gi = min(int(gx * w), w - 1)
        gj = min(int(gy * h), h - 1)
        shape_iou = _center_iou(np.array([0.0, 0.0, gw, gh]), shapes)
        best_n = int(np.argmax(shape_iou))  # first maximum, as Paddle's strict '>'
        if best_n not in mask:
            continue
        j = mask.index(best_n)
        sc = score[i, t]
        wgt = (2.0 - gw * gh) * sc
        sce_idx += [at(i, j, 0, gj, gi), at(i, j, 1, gj, gi)]
        sce_t += [gx * w - gi, gy * h - gj]
        sce_w += [wgt, wgt]
        sce_img += [i, i]
        l1_idx += [at(i, j, 2, gj, gi), at(i, j, 3, gj, gi)]
        l1_t += [np.log(gw * input_size / an[2 * best_n]),
                 np.log(gh * input_size / an[2 * best_n + 1])]
        l1_w += [wgt, wgt]
        l1_img += [i, i]
        obj[i, j, gj, gi] = sc
        lab = int(gl[i, t])
        sce_idx += [at(i, j, 5 + c, gj, gi) for c in range(class_num)]
        sce_t += [pos if c == lab else neg for c in range(class_num)]
        sce_w += [sc] * class_num
        sce_img += [i] * class_num
    # objectness of every prediction
    ii, jj, yy, xx = np.meshgrid(np.arange(n), np.arange(m), np.arange(h), np.arange(w),
                                 indexing="ij")
    flat_obj = obj.reshape(-1)
    sce_idx = np.concatenate([np.asarray(sce_idx, np.int64),
                              at(ii, jj, 4, yy, xx).reshape(-1)])
    sce_t = np.concatenate([np.asarray(sce_t), (flat_obj > 1e-5).astype(np.float64)])
    sce_w = np.concatenate([np.asarray(sce_w), np.where(
        flat_obj > 1e-5, flat_obj, np.where(flat_obj > -0.5, 1.0, 0.0))])
    sce_img = np.concatenate([np.asarray(sce_img, np.int64), ii.reshape(-1)])

    dtype = xa.dtype
    xt = x if isinstance(x, fw.Tensor) else fw.to_tensor(xa)
    xflat = xt.reshape([-1])

    def per_image(values, img):  # sum the terms of each image: [N]
        onehot = (np.arange(n)[:, None] == np.asarray(img)[None, :]).astype(dtype)
        return fw.matmul(fw.to_tensor(onehot), values.reshape([-1, 1])).reshape([n])

    g = fw.gather(xflat, fw.to_tensor(sce_idx))
    sce = (F.softplus(g) - g * fw.to_tensor(sce_t.astype(dtype))) * \
        fw.to_tensor(sce_w.astype(dtype))
    loss = per_image(sce, sce_img)
    if l1_idx:
        g1 = fw.gather(xflat, fw.to_tensor(np.asarray(l1_idx, np.int64)))
        l1 = fw.abs(g1 - fw.to_tensor(np.asarray(l1_t).astype(dtype))) * \
            fw.to_tensor(np.asarray(l1_w).astype(dtype))
        loss = loss + per_image(l1, l1_img)
    return loss
