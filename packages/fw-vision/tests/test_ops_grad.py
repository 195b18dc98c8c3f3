"""Gradients of fw.vision.ops' differentiable ops against central finite differences
of their own forward (float64, one random direction per input, JAX-style)."""

from __future__ import annotations

import numpy as np
import pytest

import fw
import fw.vision.ops as ops


def directional_check(fn, arrays, diff, seed=0, eps=1e-6, tol=1e-5):
    """d/dt fn(args + t * dirs) at t=0 by central differences vs <grad, dirs>."""
    rng = np.random.default_rng(seed)
    cot = None
    tensors = {k: fw.to_tensor(v) for k, v in arrays.items()}
    for k in diff:
        tensors[k].stop_gradient = False
    out = fn(**tensors)
    cot = rng.normal(size=out.shape)
    grads = fw.grad([(out * fw.to_tensor(cot)).sum()], [tensors[k] for k in diff])
    dirs = {k: rng.normal(size=arrays[k].shape) for k in diff}

    def f(t):
        moved = {k: fw.to_tensor(v + t * dirs[k]) if k in dirs else fw.to_tensor(v)
                 for k, v in arrays.items()}
        return float((fn(**moved).numpy() * cot).sum())

    numeric = (f(eps) - f(-eps)) / (2 * eps)
    analytic = sum(float((g.numpy() * dirs[k]).sum()) for k, g in zip(diff, grads))
    assert abs(numeric - analytic) <= tol * max(1.0, abs(numeric)), (numeric, analytic)


def _rois(rng):
    x = rng.normal(size=(2, 3, 8, 9))
    boxes = np.array([[0.5, 1.2, 6.3, 7.1], [2.2, 0.1, 8.0, 4.4], [1.0, 1.0, 3.5, 6.0]])
    return x, boxes, np.array([1, 2], np.int32)


@pytest.mark.parametrize("aligned", [True, False])
def test_roi_align_grad(aligned):
    x, boxes, num = _rois(np.random.default_rng(1))
    directional_check(lambda x, boxes, num: ops.roi_align(x, boxes, num, (3, 2), 0.9,
                                                          aligned=aligned),
                      {"x": x, "boxes": boxes, "num": num}, ["x"])


def test_roi_pool_grad():
    x, boxes, num = _rois(np.random.default_rng(2))
    directional_check(lambda x, boxes, num: ops.roi_pool(x, boxes, num, 3, 1.0),
                      {"x": x, "boxes": boxes, "num": num}, ["x"])


def test_psroi_pool_grad():
    x, boxes, num = _rois(np.random.default_rng(3))
    x = np.concatenate([x] * 4, axis=1)  # 12 channels = 3 * (2 * 2)
    directional_check(lambda x, boxes, num: ops.psroi_pool(x, boxes, num, 2, 1.0),
                      {"x": x, "boxes": boxes, "num": num}, ["x"])


@pytest.mark.parametrize("with_mask", [False, True])
def test_deform_conv2d_grad_all_inputs(with_mask):
    rng = np.random.default_rng(4)
    arrays = {"x": rng.normal(size=(1, 4, 5, 6)), "weight": rng.normal(size=(4, 2, 3, 3)),
              "bias": rng.normal(size=(4,)),
              # offsets away from integers so the bilinear corners stay put under eps
              "offset": np.round(rng.normal(0, 1.5, (1, 2 * 2 * 9, 5, 6))) + 0.37}
    diff = ["x", "weight", "bias", "offset"]
    if with_mask:
        arrays["mask"] = rng.uniform(size=(1, 2 * 9, 5, 6))
        diff.append("mask")
    directional_check(lambda **kw: ops.deform_conv2d(padding=1, deformable_groups=2,
                                                     groups=2, **kw), arrays, diff)


def test_yolo_loss_grad():
    rng = np.random.default_rng(5)
    arrays = {"x": rng.normal(size=(2, 2 * 8, 4, 4)),
              "gt_box": rng.uniform(0.1, 0.7, (2, 3, 4)),
              "gt_label": rng.integers(0, 3, (2, 3)).astype(np.int32)}
    directional_check(lambda **kw: ops.yolo_loss(anchors=[10, 13, 16, 30, 33, 23],
                                                 anchor_mask=[1, 2], class_num=3,
                                                 ignore_thresh=0.6, downsample_ratio=8, **kw),
                      arrays, ["x"], tol=1e-4)


def test_deform_conv2d_layer_trains():
    fw.seed(0)
    conv = ops.DeformConv2D(2, 3, 3, padding=1, bias_attr=False)
    assert conv.weight.shape == [3, 2, 3, 3] and conv.bias is None
    x = fw.ones([1, 2, 4, 4])
    offset = fw.zeros([1, 18, 4, 4])
    offset.stop_gradient = False
    conv(x, offset).sum().backward()
    assert conv.weight.grad is not None and offset.grad is not None
    assert conv.weight.grad.shape == [3, 2, 3, 3]


def test_roi_layers_equal_functions():
    x, boxes, num = _rois(np.random.default_rng(6))
    xt, bt, nt = fw.to_tensor(x), fw.to_tensor(boxes), fw.to_tensor(num)
    np.testing.assert_array_equal(ops.RoIAlign(2, 0.5)(xt, bt, nt, aligned=False).numpy(),
                                  ops.roi_align(xt, bt, nt, 2, 0.5, aligned=False).numpy())
    np.testing.assert_array_equal(ops.RoIPool((2, 3))(xt, bt, nt).numpy(),
                                  ops.roi_pool(xt, bt, nt, (2, 3)).numpy())
    x4 = fw.to_tensor(np.concatenate([x] * 4, axis=1))
    np.testing.assert_array_equal(ops.PSRoIPool(2, 1.0)(x4, bt, nt).numpy(),
                                  ops.psroi_pool(x4, bt, nt, 2).numpy())
