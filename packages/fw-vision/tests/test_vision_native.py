"""The native image kernels (fw-core csrc/image.cpp via fw.core.internal.image_kernels)
against fw.vision's NumPy reference, bit for bit, on hypothesis-drawn boxes, image sizes,
dtypes, interpolation modes, matrices and fills; their argument checks; calls from
several threads at once. (The Paddle/OpenCV fixtures in test_transforms_fixtures.py run
on the native path too.)"""

from __future__ import annotations

import os
import threading

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fw
from fw.core.internal import image_kernels
from fw.vision.ops import suppression
from fw.vision.transforms import _cv_resize, _cv_warp, _native

pytestmark = pytest.mark.skipif(os.environ.get("FW_DISABLE_NATIVE") == "1",
                                reason="FW_DISABLE_NATIVE=1: no native kernels to test")

K = image_kernels()


def test_kernels_are_built():
    # with fw-core's extension built (hatch run native), the kernels must be there
    assert K is not None
    assert _native.kernels() is not None and suppression._kernels() is not None


# ----------------------------------------------------------------------------- nms
@st.composite
def box_sets(draw):
    n = draw(st.integers(0, 40))
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 31)))
    grid = draw(st.booleans())  # integer corners: exact ties in IoU and in scores
    xy = rng.integers(0, 20, (n, 2)) if grid else rng.uniform(0, 20, (n, 2))
    wh = rng.integers(0, 12, (n, 2)) if grid else rng.uniform(0, 12, (n, 2))
    boxes = np.concatenate([xy, xy + wh], 1).astype(draw(st.sampled_from([np.float32, np.float64])))
    if n and draw(st.booleans()):
        boxes[0, 2] = boxes[0, 0] - 1  # an inverted box (area 0)
    scores = (rng.integers(0, 5, n) / 4 if grid else rng.uniform(0, 1, n)).astype(np.float32)
    cats = rng.integers(0, 4, n).astype(draw(st.sampled_from([np.int32, np.int64])))
    return boxes, scores, cats


def _both(fn):
    native = fn()
    with pytest.MonkeyPatch.context() as m:
        m.setattr(suppression, "_K", None)
        ref = fn()
    return native, ref


@settings(max_examples=40)
@given(box_sets(), st.sampled_from([0.0, 0.1, 0.3, 0.5, 0.7, 1.0]),
       st.sampled_from(["plain", "scores", "categories"]), st.integers(0, 40))
def test_nms_matches_reference(data, thr, kind, top_k):
    boxes, scores, cats = data
    b = fw.to_tensor(boxes)
    if kind == "plain":
        def run():
            return fw.vision.ops.nms(b, thr).numpy()
    elif kind == "scores":
        def run():
            return fw.vision.ops.nms(b, thr, scores=fw.to_tensor(scores)).numpy()
    else:
        tk = min(top_k, len(boxes)) or None

        def run():
            return fw.vision.ops.nms(b, thr, scores=fw.to_tensor(scores),
                                     category_idxs=fw.to_tensor(cats), categories=[0, 1, 3],
                                     top_k=tk).numpy()
    native, ref = _both(run)
    assert native.dtype == np.int64
    np.testing.assert_array_equal(native, ref)


def test_nms_known_values():
    boxes = np.array([[0, 0, 10, 10], [1, 1, 10, 10], [20, 20, 30, 30], [0, 0, 9, 10]], np.float64)
    # IoU(0, 1) = 81/100, IoU(0, 3) = 90/100, IoU(1, 3) = 72/99
    np.testing.assert_array_equal(K.nms(boxes, 0.85), [0, 1, 2])
    np.testing.assert_array_equal(K.nms(boxes, 0.5), [0, 2])
    np.testing.assert_array_equal(K.nms(boxes, 0.5, categories=np.array([0, 1, 0, 1])), [0, 1, 2])
    # unnormalized: widths count +1 pixel
    np.testing.assert_array_equal(K.nms(boxes, 0.82, normalized=False), [0, 2])


def test_nms_argument_errors():
    with pytest.raises(TypeError,
                       match=r"image_nms: argument 'boxes' must be float64, got float32\[3, 4\]"):
        K.nms(np.zeros((3, 4), np.float32), 0.5)
    with pytest.raises(ValueError,
                       match=r"image_nms: argument 'boxes' must be \[N, 4\], got float64\[3, 5\]"):
        K.nms(np.zeros((3, 5)), 0.5)
    with pytest.raises(ValueError, match="image_nms: argument 'boxes' .* must be C-contiguous"):
        K.nms(np.zeros((4, 8))[:, ::2], 0.5)
    with pytest.raises(ValueError, match=r"argument 'categories' must be \[3\]"):
        K.nms(np.zeros((3, 4)), 0.5, categories=np.zeros(2, np.int64))


# -------------------------------------------------------------------------- resize
@st.composite
def images(draw, max_side=24):
    h, w = draw(st.integers(1, max_side)), draw(st.integers(1, max_side))
    c = draw(st.sampled_from([0, 1, 3, 4]))  # 0: a 2-D image
    dtype = draw(st.sampled_from([np.uint8, np.float32]))
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 31)))
    shape = (h, w) if c == 0 else (h, w, c)
    if dtype == np.uint8:
        return rng.integers(0, 256, shape).astype(np.uint8)
    return rng.uniform(-1, 2, shape).astype(np.float32)


def _ref(fn):
    with pytest.MonkeyPatch.context() as m:
        m.setattr(_native, "_K", None)
        return fn()


@settings(max_examples=60)
@given(images(), st.integers(1, 40), st.integers(1, 40),
       st.sampled_from(["nearest", "bilinear", "bicubic", "area", "lanczos"]), st.booleans())
def test_resize_matches_reference(img, oh, ow, method, half):
    if half:  # exact 2x downscales take OpenCV's area shortcut
        oh, ow = max(1, img.shape[0] // 2), max(1, img.shape[1] // 2)
    native = _cv_resize.resize(img, oh, ow, method)
    ref = _ref(lambda: _cv_resize.resize(img, oh, ow, method))
    assert native.dtype == ref.dtype and native.shape == ref.shape
    np.testing.assert_array_equal(native, ref)


def test_resize_reference_is_the_fallback():
    img = np.arange(4 * 6 * 3, dtype=np.float64).reshape(4, 6, 3)  # float64: NumPy path
    np.testing.assert_array_equal(_cv_resize.resize(img, 2, 3, "bilinear"),
                                  _cv_resize.resize_reference(img, 2, 3, "bilinear"))
    # a non-contiguous uint8 view goes native after a copy and still agrees
    u8 = np.random.default_rng(0).integers(0, 256, (9, 12, 3)).astype(np.uint8)[:, ::2]
    np.testing.assert_array_equal(_cv_resize.resize(u8, 5, 7, "bicubic"),
                                  _cv_resize.resize_reference(u8, 5, 7, "bicubic"))


def test_resize_argument_errors():
    img = np.zeros((4, 5, 3), np.uint8)
    ty, wy = np.zeros((2, 2), np.int64), np.full((2, 2), 1024, np.int32)
    tx, wx = np.zeros((3, 2), np.int64), np.full((3, 2), 1024, np.int32)
    out = np.empty((2, 3, 3), np.uint8)
    K.resize(img, ty, wy, tx, wx, "u8_linear", out)
    with pytest.raises(TypeError,
                       match=r"image_resize: argument 'img' must be uint8 or float32, "
                             r"got int16\[4, 5, 3\]"):
        K.resize(img.astype(np.int16), ty, wy, tx, wx, "u8_linear", out)
    with pytest.raises(ValueError,
                       match=r"image_resize: argument 'ty' holds index 4 outside \[0, 4\)"):
        K.resize(img, ty + 4, wy, tx, wx, "u8_linear", out)
    with pytest.raises(TypeError,
                       match=r"image_resize: argument 'wx' must be float32, got int32\[3, 2\]"):
        K.resize(img, ty, wy.astype(np.float32), tx, wx, "float", out)
    with pytest.raises(ValueError,
                       match=r"image_resize: argument 'out' must be uint8\[2, 3, 3\], "
                             r"got uint8\[3, 3, 3\]"):
        K.resize(img, ty, wy, tx, wx, "u8_linear", np.empty((3, 3, 3), np.uint8))
    with pytest.raises(ValueError, match="image_resize: argument 'img' .* must be C-contiguous"):
        K.resize(np.zeros((4, 10, 3), np.uint8)[:, ::2], ty, wy, tx, wx, "u8_linear", out)
    with pytest.raises(ValueError, match="image_resize: argument 'mode' must be"):
        K.resize(img, ty, wy, tx, wx, "cubic", out)
    with pytest.raises(ValueError, match=r"image_resize_nearest: argument 'ix' holds index -1"):
        K.resize_nearest(img, np.zeros(2, np.int64), np.full(3, -1, np.int64), out)


# ---------------------------------------------------------------------------- warps
@settings(max_examples=60)
@given(images(max_side=20), st.integers(1, 24), st.integers(1, 24), st.floats(-180, 180),
       st.floats(0.5, 2.0), st.floats(-5, 5), st.sampled_from(["nearest", "bilinear", "bicubic"]),
       st.sampled_from([0, 128, (10, 200, 30)]))
def test_warp_affine_matches_reference(img, ow, oh, angle, scale, shift, method, fill):
    x = img if img.ndim == 3 else img[:, :, None]
    m = _cv_warp.rotation_matrix((x.shape[1] / 2, x.shape[0] / 2), angle, scale)
    m[:, 2] += shift
    native = _cv_warp.warp_affine(x, m, ow, oh, method, fill)
    ref = _ref(lambda: _cv_warp.warp_affine(x, m, ow, oh, method, fill))
    assert native.dtype == ref.dtype and native.shape == ref.shape
    np.testing.assert_array_equal(native, ref)


@settings(max_examples=60)
@given(images(max_side=20), st.lists(st.floats(-0.3, 0.3), min_size=8, max_size=8),
       st.sampled_from(["nearest", "bilinear", "bicubic"]), st.sampled_from([0, 255, (1, 2, 3, 4)]))
def test_warp_perspective_matches_reference(img, jitter, method, fill):
    x = img if img.ndim == 3 else img[:, :, None]
    h, w = x.shape[:2]
    src = [(0, 0), (w - 1, 0), (w - 1, h - 1), (0, h - 1)]
    dst = [(px + jitter[2 * i] * w, py + jitter[2 * i + 1] * h) for i, (px, py) in enumerate(src)]
    try:
        m = _cv_warp.perspective_matrix(src, dst)
    except np.linalg.LinAlgError:
        return  # degenerate quadrilateral (a 1-pixel side)
    if not np.isfinite(m).all() or abs(np.linalg.det(m)) < 1e-9:
        return
    native = _cv_warp.warp_perspective(x, m, w, h, method, fill)
    ref = _ref(lambda: _cv_warp.warp_perspective(x, m, w, h, method, fill))
    np.testing.assert_array_equal(native, ref)


def test_warp_known_values():
    img = np.arange(12, dtype=np.float32).reshape(3, 4, 1)
    ident = np.array([[1.0, 0, 0], [0, 1, 0]])
    out = K.warp(img, ident, "bilinear", np.array([7.0]), np.empty((3, 4, 1), np.float32))
    np.testing.assert_array_equal(out, img)
    shift = np.array([[1.0, 0, 1], [0, 1, 0]])  # output x reads input x + 1
    out = K.warp(img, shift, "nearest", np.array([7.0]), np.empty((3, 4, 1), np.float32))
    np.testing.assert_array_equal(out[:, :3], img[:, 1:])
    np.testing.assert_array_equal(out[:, 3], np.full((3, 1), 7.0))


def test_warp_argument_errors():
    img = np.zeros((4, 5, 3), np.uint8)
    out = np.empty((4, 5, 3), np.uint8)
    m = np.array([[1.0, 0, 0], [0, 1, 0]])
    with pytest.raises(ValueError,
                       match=r"image_warp: argument 'matrix' must be a float64 \[2, 3\]"):
        K.warp(img, m.astype(np.float32), "nearest", np.zeros(3), out)
    with pytest.raises(ValueError, match=r"image_warp: argument 'border' must be float64\[3\]"):
        K.warp(img, m, "nearest", np.zeros(2), out)
    with pytest.raises(ValueError, match="image_warp: argument 'interpolation' must be"):
        K.warp(img, m, "area", np.zeros(3), out)
    with pytest.raises(ValueError, match="image_warp: argument 'img' must be HWC"):
        K.warp(np.zeros((4, 5), np.uint8), m, "nearest", np.zeros(3), out)
    with pytest.raises(ValueError, match="image_warp: argument 'out' must not overlap 'img'"):
        K.warp(img, m, "nearest", np.zeros(3), img)


# -------------------------------------------------------------------------- threads
def test_kernels_from_several_threads():
    rng = np.random.default_rng(1)
    imgs = [rng.integers(0, 256, (60 + i, 80, 3)).astype(np.uint8) for i in range(4)]
    expected = [_cv_resize.resize_reference(im, 37, 53, "bicubic") for im in imgs]
    rot = _cv_warp.rotation_matrix((40, 30), 17.0, 1.0)
    expected_w = [_ref(lambda im=im: _cv_warp.warp_affine(im, rot, 80, 60, "bilinear", 0))
                  for im in imgs]
    results: dict[int, tuple] = {}

    def work(i):
        for _ in range(5):
            results[i] = (_cv_resize.resize(imgs[i], 37, 53, "bicubic"),
                          _cv_warp.warp_affine(imgs[i], rot, 80, 60, "bilinear", 0))

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
        assert not t.is_alive()
    for i in range(4):
        np.testing.assert_array_equal(results[i][0], expected[i])
        np.testing.assert_array_equal(results[i][1], expected_w[i])


# --------------------------------------------------------------------------- colour
@settings(max_examples=40)
@given(st.integers(1, 24), st.integers(1, 24), st.integers(0, 2 ** 31),
       st.floats(-0.5, 0.5), st.floats(0.0, 3.0))
def test_hue_and_saturation_match_reference(h, w, seed, hue, sat):
    # (saturation runs in NumPy either way; checked so that a native path added later is)
    from fw.vision.transforms import functional_cv2 as cv

    img = np.random.default_rng(seed).integers(0, 256, (h, w, 3)).astype(np.uint8)
    for fn, arg in ((cv.adjust_hue, hue), (cv.adjust_saturation, sat)):
        native = fn(img, arg)
        ref = _ref(lambda fn=fn, arg=arg: fn(img, arg))
        assert native.dtype == np.uint8 and native.shape == img.shape
        np.testing.assert_array_equal(native, ref)


def test_hue_every_colour_matches_reference():
    # all 2**24 colours would take seconds in NumPy; a 64**3 lattice plus the greys
    # covers every hue sector, saturation 0 and the wrap-around of the shifted hue
    v = np.arange(0, 256, 4, dtype=np.uint8)
    b, g, r = np.meshgrid(v, v, v, indexing="ij")
    img = np.stack([b, g, r], -1).reshape(64, -1, 3)
    from fw.vision.transforms import functional_cv2 as cv

    for hue in (-0.5, -0.13, 0.29, 0.5):
        np.testing.assert_array_equal(cv.adjust_hue(img, hue),
                                      _ref(lambda hue=hue: cv.adjust_hue(img, hue)))


def test_color_argument_errors():
    img = np.zeros((4, 5, 3), np.uint8)
    with pytest.raises(TypeError,
                       match=r"image_color: argument 'img' must be uint8, got float32\[4, 5, 3\]"):
        K.color(img.astype(np.float32), "hue", 3, np.empty((4, 5, 3), np.float32))
    with pytest.raises(ValueError, match="image_color: argument 'img' must have 3 channels"):
        K.color(np.zeros((4, 5, 4), np.uint8), "hue", 3, np.empty((4, 5, 4), np.uint8))
    with pytest.raises(ValueError, match="image_color: argument 'value' .* must be an integer"):
        K.color(img, "hue", 0.5, np.empty_like(img))
    with pytest.raises(ValueError,
                       match="image_color: argument 'op' must be 'hue', got 'saturation'"):
        K.color(img, "saturation", 1.0, np.empty_like(img))
