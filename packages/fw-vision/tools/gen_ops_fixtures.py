"""Generate the Paddle fixtures of fw.vision.ops' tests with real Paddle 3.3.1 (run once,
by hand; CI never needs Paddle):

    /path/to/python-with-paddle packages/fw-vision/tools/gen_ops_fixtures.py

Writes tests/fixtures/ops_paddle.npz: for every case in CASES, its inputs
(``<case>/in/<name>``), Paddle's outputs (``<case>/out/<i>``) and, for the ops with
gradients, the gradients of ``sum(out * cot)`` with respect to the differentiable
inputs (``<case>/grad/<name>``) for a drawn cotangent ``<case>/in/cot``. Each case's
keyword arguments are stored as JSON (``<case>/kwargs``) so the test replays the call
on fw.vision.ops with the same arguments. ``signatures`` holds the parameter names and
defaults of every public name of ``paddle.vision.ops`` and ``paddle.vision.datasets``.
"""

from __future__ import annotations

import json
import pathlib

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
OUT = HERE.parent / "tests" / "fixtures" / "ops_paddle.npz"


def _boxes(rng, n, size, min_wh=1.0):
    x1 = rng.uniform(0, size * 0.7, n)
    y1 = rng.uniform(0, size * 0.7, n)
    w = rng.uniform(min_wh, size * 0.5, n)
    h = rng.uniform(min_wh, size * 0.5, n)
    return np.stack([x1, y1, x1 + w, y1 + h], 1).astype(np.float32)


def cases():
    """(name, op name, inputs dict, kwargs dict, differentiable input names)."""
    rng = np.random.default_rng(20261126)
    out = []
    # ---- nms
    b = _boxes(rng, 40, 20.0)
    s = rng.permutation(40).astype(np.float32) / 40
    c = rng.integers(0, 3, 40).astype(np.int64)
    out.append(("nms_plain", "nms", {"boxes": b}, {"iou_threshold": 0.3}, []))
    out.append(("nms_scores", "nms", {"boxes": b, "scores": s}, {"iou_threshold": 0.5}, []))
    out.append(("nms_cat", "nms", {"boxes": b, "scores": s, "category_idxs": c},
                {"iou_threshold": 0.4, "categories": [0, 1, 2]}, []))
    out.append(("nms_cat_topk", "nms", {"boxes": b, "scores": s, "category_idxs": c},
                {"iou_threshold": 0.4, "categories": [0, 1, 2], "top_k": 7}, []))
    # ---- box_coder
    pb = _boxes(rng, 6, 1.0, 0.05)
    pbv = rng.uniform(0.1, 0.3, (6, 4)).astype(np.float32)
    tb = _boxes(rng, 5, 1.0, 0.05)
    out.append(("box_coder_enc", "box_coder", {"prior_box": pb, "prior_box_var": pbv,
                                                "target_box": tb},
                {"code_type": "encode_center_size", "box_normalized": True}, []))
    out.append(("box_coder_enc_list", "box_coder", {"prior_box": pb, "target_box": tb * 30},
                {"prior_box_var": [0.1, 0.1, 0.2, 0.2], "code_type": "encode_center_size",
                 "box_normalized": False}, []))
    deltas = rng.normal(0, 0.5, (5, 6, 4)).astype(np.float32)
    out.append(("box_coder_dec0", "box_coder", {"prior_box": pb, "prior_box_var": pbv,
                                                 "target_box": deltas},
                {"code_type": "decode_center_size", "axis": 0}, []))
    deltas1 = rng.normal(0, 0.5, (5, 6, 4)).astype(np.float32)
    out.append(("box_coder_dec1", "box_coder", {"prior_box": pb[:5], "target_box": deltas1},
                {"prior_box_var": [0.1, 0.1, 0.2, 0.2], "code_type": "decode_center_size",
                 "axis": 1, "box_normalized": False}, []))
    # ---- prior_box
    feat = rng.normal(size=(1, 2, 3, 4)).astype(np.float32)
    img = rng.normal(size=(1, 3, 24, 30)).astype(np.float32)
    out.append(("prior_box_a", "prior_box", {"input": feat, "image": img},
                {"min_sizes": [4.0, 8.0], "max_sizes": [9.0, 12.0],
                 "aspect_ratios": [2.0, 3.0], "flip": True, "clip": True}, []))
    out.append(("prior_box_b", "prior_box", {"input": feat, "image": img},
                {"min_sizes": [5.0], "aspect_ratios": [1.0, 2.0], "steps": [6.0, 7.0],
                 "offset": 0.3, "variance": [0.1, 0.2, 0.3, 0.4]}, []))
    out.append(("prior_box_c", "prior_box", {"input": feat, "image": img},
                {"min_sizes": [4.0, 6.0], "max_sizes": [8.0, 10.0], "aspect_ratios": [2.0],
                 "flip": True, "min_max_aspect_ratios_order": True}, []))
    # ---- yolo_box
    an = [3, 4, 6, 5, 8, 9]
    yx = rng.normal(size=(2, 3 * (5 + 4), 4, 5)).astype(np.float32)
    isz = np.array([[40, 50], [32, 36]], np.int32)
    out.append(("yolo_box_a", "yolo_box", {"x": yx, "img_size": isz},
                {"anchors": an, "class_num": 4, "conf_thresh": 0.3, "downsample_ratio": 8}, []))
    out.append(("yolo_box_b", "yolo_box", {"x": yx, "img_size": isz},
                {"anchors": an, "class_num": 4, "conf_thresh": 0.4, "downsample_ratio": 8,
                 "clip_bbox": False, "scale_x_y": 1.2}, []))
    yxi = rng.normal(size=(2, 3 * (6 + 4), 4, 5)).astype(np.float32)
    out.append(("yolo_box_iou", "yolo_box", {"x": yxi, "img_size": isz},
                {"anchors": an, "class_num": 4, "conf_thresh": 0.2, "downsample_ratio": 8,
                 "iou_aware": True, "iou_aware_factor": 0.4}, []))
    # ---- RoI ops (with gradients)
    x = rng.normal(size=(2, 3, 9, 11)).astype(np.float32)
    rb = _boxes(rng, 5, 9.0, 0.5)
    rn = np.array([2, 3], np.int32)
    for name, kw in [("roi_align_a", {"output_size": 3, "spatial_scale": 1.0}),
                     ("roi_align_b", {"output_size": (2, 4), "spatial_scale": 0.8,
                                      "sampling_ratio": 2, "aligned": False}),
                     ("roi_align_c", {"output_size": 2, "spatial_scale": 1.0,
                                      "sampling_ratio": -1, "aligned": False})]:
        out.append((name, "roi_align", {"x": x, "boxes": rb, "boxes_num": rn}, kw, ["x"]))
    out.append(("roi_pool_a", "roi_pool", {"x": x, "boxes": rb, "boxes_num": rn},
                {"output_size": (2, 3), "spatial_scale": 1.0}, ["x"]))
    out.append(("roi_pool_b", "roi_pool", {"x": x, "boxes": rb * 1.5, "boxes_num": rn},
                {"output_size": 3, "spatial_scale": 0.6}, ["x"]))
    xp = rng.normal(size=(2, 2 * 2 * 3, 9, 11)).astype(np.float32)
    out.append(("psroi_pool_a", "psroi_pool", {"x": xp, "boxes": rb, "boxes_num": rn},
                {"output_size": (2, 3), "spatial_scale": 1.0}, ["x"]))
    xp2 = rng.normal(size=(2, 2 * 3 * 3, 9, 11)).astype(np.float32)
    out.append(("psroi_pool_b", "psroi_pool", {"x": xp2, "boxes": rb * 1.3, "boxes_num": rn},
                {"output_size": 3, "spatial_scale": 0.7}, ["x"]))
    # ---- deform_conv2d v1 / v2 (with gradients)
    dx = rng.normal(size=(2, 4, 6, 7)).astype(np.float32)
    w = rng.normal(size=(6, 2, 3, 3)).astype(np.float32) * 0.3
    bias = rng.normal(size=(6,)).astype(np.float32)
    off = rng.normal(0, 1.5, (2, 2 * 2 * 9, 6, 7)).astype(np.float32)
    msk = rng.uniform(0, 1, (2, 2 * 9, 6, 7)).astype(np.float32)
    out.append(("deform_v1", "deform_conv2d",
                {"x": dx, "offset": off, "weight": w, "bias": bias},
                {"padding": 1, "deformable_groups": 2, "groups": 2},
                ["x", "offset", "weight", "bias"]))
    w2 = rng.normal(size=(3, 4, 3, 3)).astype(np.float32) * 0.3
    off2 = rng.normal(0, 1.5, (2, 2 * 9, 3, 4)).astype(np.float32)
    msk2 = rng.uniform(0, 1, (2, 9, 3, 4)).astype(np.float32)
    out.append(("deform_v2", "deform_conv2d",
                {"x": dx, "offset": off2, "weight": w2, "mask": msk2},
                {"stride": 2, "padding": 1, "dilation": 1},
                ["x", "offset", "weight", "mask"]))
    off3 = rng.normal(0, 1.5, (2, 2 * 2 * 9, 2, 3)).astype(np.float32)
    msk3 = rng.uniform(0, 1, (2, 2 * 9, 2, 3)).astype(np.float32)
    out.append(("deform_v2_dil", "deform_conv2d",
                {"x": dx, "offset": off3, "weight": w, "bias": bias, "mask": msk3},
                {"stride": (2, 2), "padding": (1, 0), "dilation": (2, 1),
                 "deformable_groups": 2, "groups": 2},
                ["x", "offset", "weight", "bias", "mask"]))
    del msk
    # ---- matrix_nms
    mb = np.stack([_boxes(rng, 12, 1.0, 0.1) for _ in range(2)])
    ms = rng.uniform(0, 1, (2, 3, 12)).astype(np.float32)
    out.append(("matrix_nms_a", "matrix_nms", {"bboxes": mb, "scores": ms},
                {"score_threshold": 0.2, "post_threshold": 0.1, "nms_top_k": 8,
                 "keep_top_k": 10, "return_index": True}, []))
    out.append(("matrix_nms_g", "matrix_nms", {"bboxes": mb * 10, "scores": ms},
                {"score_threshold": 0.3, "post_threshold": 0.2, "nms_top_k": -1,
                 "keep_top_k": -1, "use_gaussian": True, "gaussian_sigma": 1.5,
                 "background_label": -1, "normalized": False, "return_index": True}, []))
    # ---- distribute_fpn_proposals
    fr = _boxes(rng, 14, 400.0, 4.0)
    fr[3] = [10, 10, 700, 600]
    fr[5] = [0, 0, 300, 250]
    fr[9] = [5, 5, 900, 800]
    out.append(("fpn_a", "distribute_fpn_proposals",
                {"fpn_rois": fr, "rois_num": np.array([6, 8], np.int32)},
                {"min_level": 2, "max_level": 5, "refer_level": 4, "refer_scale": 224}, []))
    out.append(("fpn_b", "distribute_fpn_proposals",
                {"fpn_rois": fr, "rois_num": np.array([14], np.int32)},
                {"min_level": 2, "max_level": 4, "refer_level": 3, "refer_scale": 100,
                 "pixel_offset": True}, []))
    # ---- generate_proposals
    A, H, W = 3, 4, 5
    gs = rng.uniform(0, 1, (2, A, H, W)).astype(np.float32)
    gd = rng.normal(0, 0.3, (2, 4 * A, H, W)).astype(np.float32)
    gsz = np.array([[60, 70], [50, 64]], np.float32)
    ys, xs = np.meshgrid(np.arange(H) * 16.0, np.arange(W) * 14.0, indexing="ij")
    sizes = np.array([12.0, 20.0, 30.0])
    ga = np.stack([xs[..., None] - sizes / 2, ys[..., None] - sizes / 2,
                   xs[..., None] + sizes / 2, ys[..., None] + sizes / 2], -1)
    ga = ga.astype(np.float32)  # [H, W, A, 4]
    gv = np.broadcast_to(np.array([1.0, 1.0, 1.0, 1.0], np.float32), ga.shape).copy()
    out.append(("genprop_a", "generate_proposals",
                {"scores": gs, "bbox_deltas": gd, "img_size": gsz, "anchors": ga,
                 "variances": gv},
                {"pre_nms_top_n": 30, "post_nms_top_n": 10, "nms_thresh": 0.5,
                 "min_size": 2.0, "return_rois_num": True}, []))
    out.append(("genprop_b", "generate_proposals",
                {"scores": gs, "bbox_deltas": gd, "img_size": gsz, "anchors": ga,
                 "variances": gv * 0.5},
                {"pre_nms_top_n": 20, "post_nms_top_n": 6, "nms_thresh": 0.6,
                 "min_size": 1.0, "pixel_offset": True, "return_rois_num": True}, []))
    # ---- yolo_loss (gradient w.r.t. x)
    yl = rng.normal(size=(2, 3 * (5 + 4), 4, 4)).astype(np.float32)
    gtb = rng.uniform(0.1, 0.6, (2, 5, 4)).astype(np.float32)
    gtb[0, 4] = 0  # an empty (padding) box
    gtl = rng.integers(0, 4, (2, 5)).astype(np.int32)
    gts = rng.uniform(0.5, 1, (2, 5)).astype(np.float32)
    yk = {"anchors": [10, 13, 16, 30, 33, 23, 30, 61, 62, 45, 59, 119],
          "anchor_mask": [0, 1, 2], "class_num": 4, "ignore_thresh": 0.5,
          "downsample_ratio": 32}
    out.append(("yolo_loss_a", "yolo_loss", {"x": yl, "gt_box": gtb, "gt_label": gtl},
                yk, ["x"]))
    out.append(("yolo_loss_b", "yolo_loss",
                {"x": yl, "gt_box": gtb, "gt_label": gtl, "gt_score": gts},
                dict(yk, anchor_mask=[1, 3, 4], use_label_smooth=False, scale_x_y=1.1,
                     ignore_thresh=0.3), ["x"]))
    # two boxes in one cell with the same anchor (the later one's score marks the cell),
    # a box at the grid's edge, and a box no anchor of this head owns
    gtd = np.array([[[0.30, 0.30, 0.20, 0.25], [0.32, 0.34, 0.21, 0.24],
                     [0.99, 0.99, 0.30, 0.30], [0.5, 0.5, 0.9, 0.9]]], np.float32)
    out.append(("yolo_loss_dup", "yolo_loss",
                {"x": yl[:1], "gt_box": gtd, "gt_label": np.array([[1, 2, 0, 3]], np.int32),
                 "gt_score": np.array([[0.6, 0.9, 0.7, 1.0]], np.float32)},
                yk, ["x"]))
    return out


def signatures() -> str:
    """JSON {"ops.nms": [[name, repr(default) or null], ...], ...} of Paddle's API."""
    import inspect

    import paddle.vision.datasets as datasets
    import paddle.vision.ops as ops

    out = {}
    for prefix, mod in (("ops", ops), ("datasets", datasets)):
        for name in mod.__all__:
            params = inspect.signature(getattr(mod, name)).parameters.values()
            out[f"{prefix}.{name}"] = [
                [p.name, None if p.default is inspect.Parameter.empty else repr(p.default)]
                for p in params]
    return json.dumps(out, sort_keys=True)


def main() -> int:
    import paddle

    paddle.set_device("cpu")
    ops = paddle.vision.ops
    rng = np.random.default_rng(7)
    arrays: dict[str, np.ndarray] = {}
    for name, op, inputs, kwargs, diff in cases():
        tensors = {}
        for k, v in inputs.items():
            t = paddle.to_tensor(v)
            if k in diff:
                t.stop_gradient = False
            tensors[k] = t
            arrays[f"{name}/in/{k}"] = v
        res = getattr(ops, op)(**tensors, **kwargs)
        outs = list(res) if isinstance(res, (tuple, list)) else [res]
        flat = []
        for o in outs:
            if isinstance(o, (list, tuple)):  # distribute_fpn_proposals: lists per level
                flat.extend(o)
                flat.append(None)
            else:
                flat.append(o)
        arrays[f"{name}/kwargs"] = np.array(json.dumps(kwargs))
        for i, o in enumerate(flat):
            arrays[f"{name}/out/{i}"] = (np.array("sep") if o is None
                                        else np.asarray(o.numpy()))
        if diff:
            cot = rng.normal(size=outs[0].shape).astype(np.float32)
            arrays[f"{name}/in/cot"] = cot
            loss = (outs[0] * paddle.to_tensor(cot)).sum()
            grads = paddle.grad([loss], [tensors[k] for k in diff])
            for k, g in zip(diff, grads):
                arrays[f"{name}/grad/{k}"] = np.asarray(g.numpy())
        print(name, [a.shape for a in flat if a is not None])
    arrays["signatures"] = np.array(signatures())
    np.savez_compressed(OUT, **arrays)
    print(OUT, OUT.stat().st_size, "bytes")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
