"""Box geometry ops of SSD / YOLO heads: ``box_coder`` (encode/decode center-size
offsets), ``prior_box`` (SSD anchors), ``yolo_box`` (YOLOv3 head decoding), with
Paddle 3.x's arguments, layouts and numerics. They run on NumPy arrays of the
inputs' values: Paddle gives them no gradient either."""

from __future__ import annotations

import math

import numpy as np

import fw
from fw.vision.ops._checks import FLOATS, INTS, check, describe, floats

__all__ = ["box_coder", "prior_box", "yolo_box"]


def _center_size(b: np.ndarray, norm: float):
    w = b[..., 2] - b[..., 0] + norm
    h = b[..., 3] - b[..., 1] + norm
    return b[..., 0] + w / 2, b[..., 1] + h / 2, w, h


def box_coder(prior_box, prior_box_var, target_box, code_type="encode_center_size",
              box_normalized=True, axis=0, name=None):
    """Encode boxes as offsets from prior boxes, or decode offsets back to boxes
    (Paddle's ``paddle.vision.ops.box_coder``; the center-size coding of SSD / Faster R-CNN).

    Encoding: ``[(tcx - pcx) / pw, (tcy - pcy) / ph, log(tw / pw), log(th / ph)] / var``
    for every target (rows) and prior (columns). Decoding inverts it.

    Args:
        prior_box (Tensor): [M, 4] priors (x1, y1, x2, y2), float32 or float64.
        prior_box_var (Tensor|list[float]|None): [M, 4] variances, or 4 variances for all.
        target_box (Tensor): encode: [N, 4] boxes; decode: [N, M, 4] (axis=0) or
            [M, N, 4] (axis=1) offsets.
        code_type (str, optional): "encode_center_size" or "decode_center_size".
        box_normalized (bool, optional): coordinates are normalized; if False widths
            count one extra pixel. Default True.
        axis (int, optional): decode only: the axis of target_box along which the priors
            broadcast (0: priors index dim 1; 1: priors index dim 0). Default 0.
        name (str, optional): unused, for Paddle compatibility.

    Returns:
        Tensor: [N, M, 4] encoded offsets or decoded boxes.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> prior = fw.to_tensor([[0., 0., 2., 2.]])
            >>> target = fw.to_tensor([[1., 1., 3., 3.]])
            >>> fw.vision.ops.box_coder(prior, [1., 1., 1., 1.], target).tolist()
            [[[0.5, 0.5, 0.0, 0.0]]]
    """
    op = "box_coder"
    p = check(prior_box, op, "prior_box", dtypes=FLOATS, ndim=2, last=4)
    t = check(target_box, op, "target_box", dtypes=FLOATS, ndim=(2, 3), last=4)
    m = p.shape[0]
    if prior_box_var is None:
        var = np.ones(4, p.dtype)
    elif isinstance(prior_box_var, (list, tuple)) and not isinstance(prior_box_var[0],
                                                                     (list, tuple)):
        var = np.asarray(floats(prior_box_var, op, "prior_box_var"), p.dtype)
        if var.shape != (4,):
            raise ValueError(f"box_coder: argument 'prior_box_var' as a list must hold 4 "
                             f"variances, got {prior_box_var!r}")
    else:
        var = check(prior_box_var, op, "prior_box_var", dtypes=FLOATS, ndim=2, last=4)
        if var.shape[0] != m:
            raise ValueError(f"box_coder: argument 'prior_box_var' must be [M, 4] like "
                             f"prior_box ({describe(p)}), got {describe(var)}")
    norm = 0.0 if box_normalized else 1.0
    pcx, pcy, pw, ph = _center_size(p.astype(np.float64), norm)
    if code_type == "encode_center_size":
        if t.ndim != 2:
            raise ValueError(f"box_coder: encode_center_size needs 'target_box' [N, 4], got "
                             f"{describe(t)}")
        tt = t.astype(np.float64)
        _, _, tw, th = (v[:, None] for v in _center_size(tt, norm))
        # Paddle centers targets at the plain midpoint, priors at x1 + (width + norm) / 2
        tcx = ((tt[:, 0] + tt[:, 2]) / 2)[:, None]
        tcy = ((tt[:, 1] + tt[:, 3]) / 2)[:, None]
        out = np.stack([(tcx - pcx) / pw, (tcy - pcy) / ph,
                        np.log(np.abs(tw / pw)), np.log(np.abs(th / ph))], -1)
        return fw.to_tensor((out / var).astype(p.dtype))
    if code_type != "decode_center_size":
        raise ValueError(f"box_coder: argument 'code_type' must be 'encode_center_size' or "
                         f"'decode_center_size', got {code_type!r}")
    if axis not in (0, 1):
        raise ValueError(f"box_coder: argument 'axis' must be 0 or 1, got {axis!r}")
    if t.ndim == 2:
        t = t[:, None, :] if axis == 1 else t[None]
    if t.shape[1 - axis] != m:
        raise ValueError(f"box_coder: decode with axis={axis} needs 'target_box' dimension "
                         f"{1 - axis} equal to the number of priors ({m}), got {describe(t)}")

    def along(v):  # broadcast a per-prior quantity against target_box [.., .., 4]
        return v[None, :] if axis == 0 else v[:, None]

    v = var if var.ndim == 1 else (var[None] if axis == 0 else var[:, None])
    d = t.astype(np.float64) * v
    cx = d[..., 0] * along(pw) + along(pcx)
    cy = d[..., 1] * along(ph) + along(pcy)
    w = np.exp(d[..., 2]) * along(pw)
    h = np.exp(d[..., 3]) * along(ph)
    out = np.stack([cx - w / 2, cy - h / 2, cx + w / 2 - norm, cy + h / 2 - norm], -1)
    return fw.to_tensor(out.astype(p.dtype))


def _expand_ratios(ratios, flip):
    out = [1.0]
    for r in ratios:
        if any(abs(r - o) < 1e-6 for o in out):
            continue
        out.append(r)
        if flip:
            out.append(1.0 / r)
    return out


def prior_box(input, image, min_sizes, max_sizes=None, aspect_ratios=[1.0],  # noqa: A002, B006
              variance=[0.1, 0.1, 0.2, 0.2], flip=False, clip=False, steps=[0.0, 0.0],  # noqa: B006
              offset=0.5, min_max_aspect_ratios_order=False, name=None):
    """SSD prior (anchor) boxes for every cell of a feature map (Paddle's
    ``paddle.vision.ops.prior_box``).

    Args:
        input (Tensor): [N, C, H, W] feature map (only its H, W are used).
        image (Tensor): [N, C, IH, IW] input image (only IH, IW are used).
        min_sizes (float|list[float]): minimum box sizes, in pixels.
        max_sizes (float|list[float], optional): maximum sizes (one per min size): adds a
            square box of side sqrt(min * max). Default None.
        aspect_ratios (float|list[float], optional): ratios besides 1. Default [1.0].
        variance (list[float], optional): 4 variances. Default [0.1, 0.1, 0.2, 0.2].
        flip (bool, optional): also add 1/ratio. Default False.
        clip (bool, optional): clip boxes to [0, 1]. Default False.
        steps (list[float], optional): cell step (w, h) in pixels; 0 derives it from the
            sizes. Default [0.0, 0.0].
        offset (float, optional): center offset within a cell. Default 0.5.
        min_max_aspect_ratios_order (bool, optional): order the boxes min, max, then the
            other ratios (Caffe's SSD order). Default False.
        name (str, optional): unused, for Paddle compatibility.

    Returns:
        tuple: (boxes, variances), each [H, W, num_priors, 4], normalized to the image.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> feat, img = fw.zeros([1, 3, 2, 2]), fw.zeros([1, 3, 8, 8])
            >>> boxes, var = fw.vision.ops.prior_box(feat, img, min_sizes=[4.0])
            >>> boxes.shape
            [2, 2, 1, 4]
    """
    op = "prior_box"
    feat = check(input, op, "input", ndim=4)
    img = check(image, op, "image", ndim=4)
    mins = floats(min_sizes, op, "min_sizes")
    maxs = [] if max_sizes is None else floats(max_sizes, op, "max_sizes")
    if maxs and len(maxs) != len(mins):
        raise ValueError(f"prior_box: argument 'max_sizes' must have one entry per min size "
                         f"({len(mins)}), got {maxs}")
    if any(mx < mn for mn, mx in zip(mins, maxs)):
        raise ValueError(f"prior_box: every max size must be >= its min size, got min_sizes "
                         f"{mins}, max_sizes {maxs}")
    var = floats(variance, op, "variance")
    if len(var) != 4:
        raise ValueError(f"prior_box: argument 'variance' must hold 4 values, got {var}")
    st = floats(steps, op, "steps")
    if len(st) != 2:
        raise ValueError(f"prior_box: argument 'steps' must hold 2 values (w, h), got {st}")
    ratios = _expand_ratios(floats(aspect_ratios, op, "aspect_ratios"), flip)
    fh, fw_ = feat.shape[2:]
    ih, iw = img.shape[2:]
    step_w = st[0] if st[0] != 0 else iw / fw_
    step_h = st[1] if st[1] != 0 else ih / fh
    half = []  # (half width, half height) of each prior, in the order Paddle emits them
    for k, mn in enumerate(mins):
        sq = [math.sqrt(mn * maxs[k]) / 2] if maxs else []
        if min_max_aspect_ratios_order:
            half.append((mn / 2, mn / 2))
            half.extend((s, s) for s in sq)
            half.extend((mn * math.sqrt(r) / 2, mn / math.sqrt(r) / 2)
                        for r in ratios if abs(r - 1.0) >= 1e-6)
        else:
            half.extend((mn * math.sqrt(r) / 2, mn / math.sqrt(r) / 2) for r in ratios)
            half.extend((s, s) for s in sq)
    hw = np.asarray(half)  # [P, 2]
    cx = (np.arange(fw_) + offset) * step_w
    cy = (np.arange(fh) + offset) * step_h
    cxg = cx[None, :, None]
    cyg = cy[:, None, None]
    boxes = np.stack(np.broadcast_arrays((cxg - hw[:, 0]) / iw, (cyg - hw[:, 1]) / ih,
                                         (cxg + hw[:, 0]) / iw, (cyg + hw[:, 1]) / ih), -1)
    if clip:
        boxes = np.clip(boxes, 0.0, 1.0)
    dtype = feat.dtype if str(feat.dtype) in FLOATS else np.float32
    vars_ = np.broadcast_to(np.asarray(var), boxes.shape)
    return fw.to_tensor(boxes.astype(dtype)), fw.to_tensor(vars_.astype(dtype))


def _sigmoid(v):
    return 1.0 / (1.0 + np.exp(-v))


def yolo_box(x, img_size, anchors, class_num, conf_thresh, downsample_ratio, clip_bbox=True,
             name=None, scale_x_y=1.0, iou_aware=False, iou_aware_factor=0.5):
    """Decode a YOLOv3 head into boxes and class scores (Paddle's
    ``paddle.vision.ops.yolo_box``). Predictions whose objectness is below
    ``conf_thresh`` give all-zero boxes and scores.

    Args:
        x (Tensor): [N, A*(5+class_num), H, W] head output (with ``iou_aware``:
            [N, A*(6+class_num), H, W], the A IoU channels first).
        img_size (Tensor): [N, 2] int32 image (height, width) to scale boxes to.
        anchors (list[int]): anchor (w, h) pairs, flattened.
        class_num (int): number of classes.
        conf_thresh (float): objectness threshold.
        downsample_ratio (int): input size / H of this head.
        clip_bbox (bool, optional): clip boxes to the image. Default True.
        name (str, optional): unused, for Paddle compatibility.
        scale_x_y (float, optional): center scaling of YOLOv4. Default 1.0.
        iou_aware (bool, optional): the head predicts IoU too. Default False.
        iou_aware_factor (float, optional): confidence = obj^(1-f) * iou^f. Default 0.5.

    Returns:
        tuple: boxes [N, A*H*W, 4] (x1, y1, x2, y2) and scores [N, A*H*W, class_num].

    Examples:
        .. code-block:: python

            >>> import fw
            >>> x = fw.zeros([1, 2 * (5 + 3), 2, 2])
            >>> img_size = fw.to_tensor([[64, 64]], dtype="int32")
            >>> boxes, scores = fw.vision.ops.yolo_box(x, img_size, [10, 13, 16, 30], 3, 0.01, 32)
            >>> boxes.shape, scores.shape
            ([1, 8, 4], [1, 8, 3])
    """
    op = "yolo_box"
    a = check(x, op, "x", dtypes=FLOATS, ndim=4)
    isz = check(img_size, op, "img_size", dtypes=INTS, ndim=2, last=2)
    an = np.asarray(anchors, np.float64).reshape(-1)
    if an.size == 0 or an.size % 2:
        raise ValueError(f"yolo_box: argument 'anchors' must hold (w, h) pairs, got {anchors!r}")
    na = an.size // 2
    n, ch, h, w = a.shape
    per = 5 + class_num
    want = na * (per + 1) if iou_aware else na * per
    if ch != want:
        raise ValueError(f"yolo_box: argument 'x' must have {want} channels for {na} anchors "
                         f"and class_num={class_num}{' (iou_aware)' if iou_aware else ''}, "
                         f"got {describe(a)}")
    if isz.shape[0] != n:
        raise ValueError(f"yolo_box: argument 'img_size' must be [N, 2] with N={n}, got "
                         f"{describe(isz)}")
    v = a.astype(np.float64)
    if iou_aware:
        iou = _sigmoid(v[:, :na])
        v = v[:, na:]
    v = v.reshape(n, na, per, h, w)
    conf = _sigmoid(v[:, :, 4])
    if iou_aware:
        conf = conf ** (1 - iou_aware_factor) * iou ** iou_aware_factor
    img_h = isz[:, 0].astype(np.float64)[:, None, None, None]
    img_w = isz[:, 1].astype(np.float64)[:, None, None, None]
    bias = -0.5 * (scale_x_y - 1.0)
    gx = np.arange(w)[None, None, None, :]
    gy = np.arange(h)[None, None, :, None]
    cx = (gx + _sigmoid(v[:, :, 0]) * scale_x_y + bias) * img_w / w
    cy = (gy + _sigmoid(v[:, :, 1]) * scale_x_y + bias) * img_h / h
    bw = np.exp(v[:, :, 2]) * an[0::2][None, :, None, None] * img_w / (downsample_ratio * w)
    bh = np.exp(v[:, :, 3]) * an[1::2][None, :, None, None] * img_h / (downsample_ratio * h)
    x1, y1, x2, y2 = cx - bw / 2, cy - bh / 2, cx + bw / 2, cy + bh / 2
    if clip_bbox:
        x1, y1 = np.maximum(x1, 0), np.maximum(y1, 0)
        x2, y2 = np.minimum(x2, img_w - 1), np.minimum(y2, img_h - 1)
    keep = conf >= conf_thresh
    boxes = np.stack([x1, y1, x2, y2], -1) * keep[..., None]
    scores = conf[:, :, None] * _sigmoid(v[:, :, 5:]) * keep[:, :, None]
    boxes = boxes.reshape(n, na * h * w, 4)
    scores = scores.transpose(0, 1, 3, 4, 2).reshape(n, na * h * w, class_num)
    return fw.to_tensor(boxes.astype(a.dtype)), fw.to_tensor(scores.astype(a.dtype))
