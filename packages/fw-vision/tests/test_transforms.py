"""fw.vision.transforms: invariants on hypothesis-drawn images, the random transforms'
parameter ranges and seeding, the plumbing classes, errors, and a DataLoader pipeline.
Paddle equality is in test_transforms_fixtures.py."""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image

import fw
from fw.vision import transforms as T
from fw.vision.transforms import functional as F

SETTINGS = settings(max_examples=25, deadline=None)


@st.composite
def images(draw, min_side=1, max_side=12, channels=(1, 3)):
    h = draw(st.integers(min_side, max_side))
    w = draw(st.integers(min_side, max_side))
    c = draw(st.sampled_from(channels))
    seed = draw(st.integers(0, 2**16))
    return np.random.default_rng(seed).integers(0, 256, (h, w, c)).astype(np.uint8)


def as_kind(arr: np.ndarray, kind: str):
    if kind == "pil":
        return Image.fromarray(arr[:, :, 0] if arr.shape[2] == 1 else arr)
    if kind == "tensor":
        return fw.to_tensor(np.ascontiguousarray(arr.transpose(2, 0, 1)).astype(np.float32))
    return arr


def as_hwc(out) -> np.ndarray:
    if isinstance(out, Image.Image):
        a = np.asarray(out)
        return a[:, :, None] if a.ndim == 2 else a
    if isinstance(out, np.ndarray):
        return out
    return out.numpy().transpose(1, 2, 0)


KINDS = ["cv2", "pil", "tensor"]


# ---------------------------------------------------------------- invariants


@pytest.mark.parametrize("kind", KINDS)
@SETTINGS
@given(img=images())
def test_flip_twice_is_identity(kind, img):
    x = as_kind(img, kind)
    for flip in (F.hflip, F.vflip):
        np.testing.assert_array_equal(as_hwc(flip(flip(x))), as_hwc(x))
    np.testing.assert_array_equal(as_hwc(F.hflip(x)), img[:, ::-1].astype(as_hwc(x).dtype))


@pytest.mark.parametrize("kind", KINDS)
@SETTINGS
@given(img=images(), data=st.data())
def test_crop_and_center_crop_sizes(kind, img, data):
    h, w = img.shape[:2]
    top = data.draw(st.integers(0, h - 1))
    left = data.draw(st.integers(0, w - 1))
    ch = data.draw(st.integers(1, h - top))
    cw = data.draw(st.integers(1, w - left))
    out = as_hwc(F.crop(as_kind(img, kind), top, left, ch, cw))
    np.testing.assert_array_equal(out, img[top:top + ch, left:left + cw].astype(out.dtype))
    th, tw = data.draw(st.integers(1, h)), data.draw(st.integers(1, w))
    out = as_hwc(F.center_crop(as_kind(img, kind), (th, tw)))
    assert out.shape[:2] == (th, tw)
    i, j = int(round((h - th) / 2.0)), int(round((w - tw) / 2.0))
    np.testing.assert_array_equal(out, img[i:i + th, j:j + tw].astype(out.dtype))


@SETTINGS
@given(img=images(channels=(3,)), data_format=st.sampled_from(["CHW", "HWC"]),
       to_rgb=st.booleans())
def test_normalize_matches_numpy(img, data_format, to_rgb):
    mean, std = [10.0, 120.0, 200.0], [2.0, 50.0, 64.0]
    x = img if data_format == "HWC" else img.transpose(2, 0, 1)
    out = F.normalize(x, mean, std, data_format, to_rgb)
    shape = (1, 1, 3) if data_format == "HWC" else (3, 1, 1)
    src = x[..., ::-1] if to_rgb else x
    ref = (src - np.float32(mean).reshape(shape)) / np.float32(std).reshape(shape)
    np.testing.assert_allclose(out, ref, rtol=1e-6)
    t = F.normalize(fw.to_tensor(img.transpose(2, 0, 1).astype(np.float32)), mean, std)
    ref = (img.transpose(2, 0, 1) - np.float32(mean).reshape(3, 1, 1)) / np.float32(
        std).reshape(3, 1, 1)
    np.testing.assert_allclose(t.numpy(), ref, rtol=1e-6)


@pytest.mark.parametrize("kind", KINDS)
@SETTINGS
@given(img=images(min_side=2), size=st.integers(1, 20))
def test_resize_int_size_keeps_aspect(kind, img, size):
    h, w = img.shape[:2]
    out = as_hwc(F.resize(as_kind(img, kind), size))
    if (w <= h and w == size) or (h <= w and h == size):
        assert out.shape[:2] == (h, w)
    elif w < h:
        assert out.shape[:2] == (int(size * h / w), size)
    else:
        assert out.shape[:2] == (size, int(size * w / h))


@pytest.mark.parametrize("interpolation", ["nearest", "bilinear", "bicubic", "area", "lanczos"])
@SETTINGS
@given(img=images())
def test_resize_to_same_size_and_rotate_zero_are_identity(interpolation, img):
    h, w = img.shape[:2]
    np.testing.assert_array_equal(F.resize(img, (h, w), interpolation), img)
    np.testing.assert_array_equal(F.resize(img.astype(np.float32), (h, w), interpolation),
                                  img.astype(np.float32))
    if interpolation in ("nearest", "bilinear", "bicubic"):
        np.testing.assert_array_equal(F.rotate(img, 0.0, interpolation), img)


@SETTINGS
@given(img=images(min_side=2, channels=(3,)))
def test_resize_constant_image_stays_constant(img):
    # any convex resampling of a flat image is flat (bicubic/lanczos overshoot only at edges
    # of non-flat images)
    flat = np.full_like(img, img[0, 0, 0])
    for m in ("nearest", "bilinear", "area", "bicubic", "lanczos"):
        out = F.resize(flat, (7, 5), m)
        assert (np.abs(out.astype(int) - int(img[0, 0, 0])) <= 1).all(), m


def test_to_tensor_scales_uint8_and_keeps_floats():
    img = np.array([[[0, 128, 255]]], np.uint8)
    t = F.to_tensor(img)
    assert t.shape == [3, 1, 1] and str(t.dtype).endswith("float32")
    np.testing.assert_allclose(t.numpy().ravel(), [0.0, 128 / 255, 1.0], rtol=1e-6)
    f = np.ones((2, 2, 3), np.float64)
    assert F.to_tensor(f, "HWC").shape == [2, 2, 3]
    np.testing.assert_array_equal(F.to_tensor(Image.fromarray(img)).numpy(), t.numpy())


def test_to_tensor_pil_modes():
    # Paddle: 8-bit modes scale to [0, 1]; "1" is 0/255 first; "I" stays int32, "F" float32
    bits = Image.fromarray(np.array([[0, 1]], np.uint8) * 255).convert("1")
    np.testing.assert_array_equal(F.to_tensor(bits).numpy(), [[[0.0, 1.0]]])
    ints = Image.fromarray(np.array([[7, -3]], np.int32), "I")
    t = F.to_tensor(ints)
    assert str(t.dtype).endswith("int32") and t.numpy().tolist() == [[[7, -3]]]
    fl = Image.fromarray(np.array([[0.25, 2.0]], np.float32), "F")
    assert F.to_tensor(fl, "HWC").numpy().tolist() == [[[0.25], [2.0]]]


def test_grayscale_and_brightness_known_values():
    img = np.array([[[255, 0, 0], [0, 255, 0], [0, 0, 255]]], np.uint8)
    # OpenCV's 15-bit luma weights (9798, 19235, 3735) / 2**15, rounded
    assert F.to_grayscale(img)[0, :, 0].tolist() == [76, 150, 29]
    assert F.to_grayscale(img, 3).shape == (1, 3, 3)
    assert F.adjust_brightness(img, 0.5)[0, 0].tolist() == [127, 0, 0]
    assert F.adjust_contrast(img, 0.0)[0, 0].tolist() == [74, 74, 74]


def test_pad_modes_match_numpy():
    img = np.arange(12, dtype=np.uint8).reshape(2, 2, 3)
    out = F.pad(img, (1, 2, 3, 4), fill=(7, 8, 9))
    assert out.shape == (8, 6, 3)
    assert out[0, 0].tolist() == [7, 8, 9]
    np.testing.assert_array_equal(out[2:4, 1:3], img)
    for mode, np_mode in (("edge", "edge"), ("reflect", "reflect"),
                          ("symmetric", "symmetric")):
        ref = np.pad(img, ((2, 2), (1, 1), (0, 0)), np_mode)
        np.testing.assert_array_equal(F.pad(img, (1, 2), padding_mode=mode), ref)


@pytest.mark.parametrize("kind", KINDS)
@SETTINGS
@given(img=images(min_side=3, max_side=9), half=st.integers(1, 4))
def test_quarter_turns_equal_rot90(kind, img, half):
    # a square image of odd side turned about its centre pixel. PIL and tensors place
    # pixel centres at +0.5, so (n/2, n/2) is that pixel; OpenCV's grid is integer, so
    # the centre pixel is ((n-1)/2, (n-1)/2) (Paddle's cv2 default of (w/2, h/2) is half
    # a pixel off, and fw keeps it: the fixtures check that)
    n = 2 * half + 1
    sq = np.ascontiguousarray(np.resize(img, (n, n, img.shape[2])))
    c = [(n - 1) / 2] * 2 if kind == "cv2" else [n / 2] * 2
    for k, angle in ((1, 90.0), (2, 180.0), (3, 270.0)):
        out = as_hwc(F.rotate(as_kind(sq, kind), angle, center=c))
        np.testing.assert_array_equal(out, np.rot90(sq, k).astype(out.dtype))
    # affine's angle is clockwise and its centre is in PIL's convention on every backend
    out = as_hwc(F.affine(as_kind(sq, kind), 90.0, (0, 0), 1.0, 0.0))
    np.testing.assert_array_equal(out, np.rot90(sq, -1).astype(out.dtype))


@SETTINGS
@given(img=images(min_side=6, max_side=12, channels=(3,)), data=st.data())
def test_numpy_affine_has_the_pil_geometry(img, data):
    # odd offsets keep sources off exact half-pixel ties, which PIL rounds up and OpenCV
    # to even
    angle = data.draw(st.floats(-180, 180)) + 0.0123
    translate = [data.draw(st.integers(-3, 3)), data.draw(st.integers(-3, 3))]
    scale = data.draw(st.floats(0.7, 1.4)) + 0.00037
    shear = [data.draw(st.floats(-20, 20)) + 0.011, data.draw(st.floats(-20, 20)) + 0.017]
    a = F.affine(img, angle, translate, scale, shear)
    b = np.asarray(F.affine(Image.fromarray(img), angle, translate, scale, shear))
    # nearest sampling: only pixels whose source lies within float error of a pixel edge
    # may pick the neighbour
    assert (a == b).all(axis=-1).mean() >= 0.9


def test_affine_and_perspective_fill_outside_pixels():
    img = np.full((5, 5, 3), 200, np.uint8)
    for x in (img, Image.fromarray(img)):
        out = as_hwc(F.affine(x, 0.0, (2, 0), 1.0, 0.0, fill=(1, 2, 3)))
        assert out[:, :2].reshape(-1, 3).tolist() == [[1, 2, 3]] * 10
        assert (out[:, 2:] == 200).all()
        pts = [[0, 0], [4, 0], [4, 4], [0, 4]]
        out = as_hwc(F.perspective(x, pts, [[2, 0], [4, 0], [4, 4], [2, 4]], fill=(9, 9, 9)))
        assert (out[:, 0] == 9).all()


# ---------------------------------------------------------------- random transforms


def _seeded(fn, seed):
    random.seed(seed)
    np.random.seed(seed)
    return fn()


@pytest.mark.parametrize("t", [
    T.RandomResizedCrop(6), T.RandomCrop(5, padding=1), T.RandomHorizontalFlip(),
    T.RandomVerticalFlip(), T.RandomRotation(40), T.RandomAffine(30, (0.2, 0.2), (0.8, 1.2), 10),
    T.RandomPerspective(1.0), T.ColorJitter(0.4, 0.4, 0.4, 0.1), T.RandomErasing(1.0),
    T.BrightnessTransform(0.5), T.ContrastTransform(0.5), T.SaturationTransform(0.5),
    T.HueTransform(0.2),
], ids=lambda t: type(t).__name__)
def test_random_transforms_are_deterministic_under_seed(t):
    img = np.random.default_rng(1).integers(0, 256, (9, 11, 3)).astype(np.uint8)
    a = _seeded(lambda: [t(img.copy()) for _ in range(4)], 123)
    b = _seeded(lambda: [t(img.copy()) for _ in range(4)], 123)
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x, y)
    c = _seeded(lambda: [t(img.copy()) for _ in range(4)], 321)
    assert any(x.shape != y.shape or not np.array_equal(x, y) for x, y in zip(a, c))


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**31), w=st.integers(1, 40), h=st.integers(1, 40))
def test_random_resized_crop_params_in_range(seed, w, h):
    t = T.RandomResizedCrop(4, scale=(0.2, 0.9), ratio=(0.5, 2.0))
    img = np.zeros((h, w, 3), np.uint8)
    i, j, ch, cw = _seeded(lambda: t._dynamic_get_param(img), seed)
    assert 0 <= i and 0 <= j and 0 < ch and 0 < cw and i + ch <= h and j + cw <= w


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**31))
def test_random_angles_and_affine_params_in_range(seed):
    r = T.RandomRotation((-10, 25))
    assert -10 <= _seeded(lambda: r._get_param(r.degrees), seed) <= 25
    a = T.RandomAffine(15, translate=(0.1, 0.3), scale=(0.5, 1.5), shear=(-4, 4, -2, 2))
    angle, (tx, ty), scale, (sx, sy) = _seeded(
        lambda: a._get_param([20, 10], a.degrees, a.translate, a.scale, a.shear), seed)
    assert -15 <= angle <= 15 and abs(tx) <= 2 and abs(ty) <= 3
    assert 0.5 <= scale <= 1.5 and -4 <= sx <= 4 and -2 <= sy <= 2
    p = T.RandomPerspective(distortion_scale=0.5)
    start, end = _seeded(lambda: p.get_params(20, 10, 0.5), seed)
    assert start == [[0, 0], [19, 0], [19, 9], [0, 9]]
    assert 0 <= end[0][0] <= 5 and 0 <= end[0][1] <= 2 and 14 <= end[1][0] <= 19


def test_flip_probability_extremes():
    img = np.arange(6, dtype=np.uint8).reshape(1, 6, 1)
    assert (T.RandomHorizontalFlip(0.0)(img) == img).all()
    assert (T.RandomHorizontalFlip(1.0)(img) == img[:, ::-1]).all()
    flips = _seeded(lambda: [T.RandomHorizontalFlip(0.3)(img)[0, 0, 0] == 5
                             for _ in range(400)], 7)
    assert 80 <= sum(flips) <= 160  # 120 expected; the draws are seeded, not flaky


# ---------------------------------------------------------------- plumbing classes


def test_compose_resize_centercrop_totensor_normalize():
    t = T.Compose([T.Resize(8), T.CenterCrop(6), T.ToTensor(),
                   T.Normalize([0.5, 0.5, 0.5], [0.5, 0.5, 0.5])])
    img = np.full((16, 12, 3), 255, np.uint8)
    out = t(img)
    assert out.shape == [3, 6, 6]
    np.testing.assert_allclose(out.numpy(), 1.0)
    assert "Resize" in repr(t) and "CenterCrop" in repr(t)


def test_base_transform_keys_apply_per_field():
    class AddOne(T.BaseTransform):
        def _apply_image(self, image):
            return image + 1

        def _apply_mask(self, mask):
            return mask * 2

    t = AddOne(keys=("image", "mask"))
    img, mask, label = t((np.zeros(2), np.ones(2), 7))
    assert img.tolist() == [1.0, 1.0] and mask.tolist() == [2.0, 2.0] and label == 7
    with pytest.raises(NotImplementedError, match="'boxes'"):
        T.Resize(4, keys=("image", "boxes"))((np.zeros((8, 8, 3), np.uint8), np.zeros(4)))
    with pytest.raises(NotImplementedError, match="'nope'"):
        AddOne(keys=("nope",))


def test_transpose_grayscale_pad_classes():
    img = np.arange(24, dtype=np.uint8).reshape(2, 4, 3)
    assert T.Transpose()(img).shape == (3, 2, 4)
    assert T.Transpose()(img[:, :, 0]).shape == (1, 2, 4)
    assert T.Transpose((1, 0, 2))(Image.fromarray(img)).shape == (4, 2, 3)
    assert T.Grayscale(3)(img).shape == (2, 4, 3)
    assert T.Pad((1, 2))(img).shape == (6, 6, 3)
    t = T.ToTensor(data_format="HWC")(img)
    assert t.shape == [2, 4, 3]


def test_tensor_ops_keep_the_tensor_type_and_device():
    x = fw.to_tensor(np.random.default_rng(0).random((3, 6, 8), dtype=np.float32))
    for out in (F.resize(x, (3, 4)), F.hflip(x), F.pad(x, 1), F.rotate(x, 30),
                F.adjust_brightness(x, 0.5), F.to_grayscale(x), T.RandomErasing(1.0)(x)):
        assert isinstance(out, fw.Tensor)
    np.testing.assert_allclose(F.adjust_brightness(x, 0.5).numpy(), x.numpy() * 0.5, rtol=1e-6)


def test_uint8_tensor_resize_truncates_like_paddle():
    # Paddle 3.3's uint8 bilinear kernel floors the float result (checked side by side)
    a = np.random.default_rng(0).integers(0, 256, (3, 7, 9)).astype(np.uint8)
    out = F.resize(fw.to_tensor(a), (4, 5))
    assert str(out.dtype).endswith("uint8")
    ref = np.floor(F.resize(fw.to_tensor(a.astype(np.float32)), (4, 5)).numpy())
    np.testing.assert_array_equal(out.numpy(), ref)


def test_tensor_transforms_pass_gradients():
    x = fw.to_tensor(np.random.default_rng(0).random((3, 6, 6), dtype=np.float32),
                     stop_gradient=False)
    # an exact quarter turn is a permutation of the pixels: every input gets gradient 1
    (g,) = fw.grad(F.rotate(x, 90.0).sum(), x)
    np.testing.assert_allclose(g.numpy(), 1.0)
    # halving with half-pixel bilinear averages 2x2 blocks: every input gets 1/4
    (g,) = fw.grad(F.resize(x, (3, 3)).sum(), x)
    np.testing.assert_allclose(g.numpy(), 0.25, rtol=1e-6)


# ---------------------------------------------------------------- errors


@pytest.mark.parametrize("call, exc, pattern", [
    (lambda: F.resize([1, 2], 3), TypeError, r"resize: 'img' should be .*list"),
    (lambda: F.resize(np.zeros((2, 2, 3)), (1, 2, 3)), TypeError, r"resize: 'size'"),
    (lambda: F.resize(np.zeros((2, 2, 3)), 2, "cubic"), ValueError, r"resize: 'interpolation'"),
    (lambda: F.resize(np.zeros((2, 2, 3)), 0), ValueError, r"resize: 'size' must be positive"),
    (lambda: F.pad(np.zeros((2, 2, 3)), (1, 2, 3)), ValueError, r"pad: 'padding'"),
    (lambda: F.pad(np.zeros((2, 2, 3)), 1, padding_mode="wrap"), ValueError,
     r"pad: 'padding_mode'"),
    (lambda: F.pad(fw.zeros([3, 2, 2]), 1, padding_mode="symmetric"), ValueError,
     r"pad: padding_mode 'symmetric'"),
    (lambda: F.crop(np.zeros((2, 2, 3)), 0.5, 0, 1, 1), TypeError, r"crop: 'top'"),
    (lambda: F.center_crop(np.zeros((2, 2, 3)), "a"), TypeError, r"center_crop: 'output_size'"),
    (lambda: F.adjust_brightness(np.zeros((2, 2, 3)), -1), ValueError,
     r"adjust_brightness: 'brightness_factor'"),
    (lambda: F.adjust_contrast(np.zeros((2, 2, 3), np.float32), 0.5), TypeError,
     r"adjust_contrast: NumPy images must be uint8.*float32"),
    (lambda: F.adjust_hue(np.zeros((2, 2, 3), np.uint8), 0.7), ValueError,
     r"adjust_hue: 'hue_factor'"),
    (lambda: F.affine(np.zeros((2, 2, 3)), 0, (1,), 1.0, 0), ValueError, r"affine: 'translate'"),
    (lambda: F.affine(np.zeros((2, 2, 3)), 0, (1, 1), 0.0, 0), ValueError, r"affine: 'scale'"),
    (lambda: F.rotate(fw.zeros([3, 2, 2]), 10, "bicubic"), ValueError,
     r"rotate: 'interpolation'.*tensor"),
    (lambda: F.perspective(np.zeros((2, 2, 3)), [[0, 0]], [[0, 0]]), ValueError,
     r"perspective: 'startpoints'"),
    (lambda: F.to_grayscale(np.zeros((2, 2, 3)), 2), ValueError,
     r"to_grayscale: 'num_output_channels'"),
    (lambda: F.to_grayscale(np.zeros((2, 2, 4)), 1), ValueError,
     r"to_grayscale: .*\[2, 2, 4\]"),
    (lambda: F.normalize(np.zeros((3, 2, 2)), [0, 0, 0], [1, 0, 1]), ValueError,
     r"normalize: 'std'"),
    (lambda: F.to_tensor(np.zeros((2, 2, 3)), "NCHW"), ValueError, r"to_tensor: 'data_format'"),
    (lambda: F.hflip(fw.zeros([4])), ValueError, r"hflip: .*shape \[4\]"),
    (lambda: T.Resize(-1), ValueError, r"Resize: 'size'"),
    (lambda: T.RandomResizedCrop(4, scale=(0.9, 0.1)), ValueError, r"RandomResizedCrop: 'scale'"),
    (lambda: T.RandomHorizontalFlip(1.5), ValueError, r"RandomHorizontalFlip: 'prob'"),
    (lambda: T.RandomRotation(-3), ValueError, r"RandomRotation: .*'degrees'"),
    (lambda: T.RandomAffine(5, translate=(0.5, 2.0)), ValueError, r"RandomAffine: 'translate'"),
    (lambda: T.RandomAffine(5, interpolation="area"), ValueError,
     r"RandomAffine: 'interpolation'"),
    (lambda: T.RandomPerspective(distortion_scale=2), ValueError,
     r"RandomPerspective: 'distortion_scale'"),
    (lambda: T.RandomErasing(value="noise"), ValueError, r"RandomErasing: .*'value'"),
    (lambda: T.RandomErasing(scale=(0.5, 0.1)), ValueError, r"RandomErasing: 'scale'"),
    (lambda: T.HueTransform(0.8), ValueError, r"HueTransform: values should be between"),
    (lambda: T.ColorJitter(brightness=-1), ValueError, r"ColorJitter brightness"),
    (lambda: T.Pad((1, 2, 3)), ValueError, r"Pad: 'padding'"),
    (lambda: T.Grayscale(2), ValueError, r"Grayscale: 'num_output_channels'"),
    (lambda: T.ToTensor("CWH"), ValueError, r"ToTensor: 'data_format'"),
    (lambda: T.Compose([1]), TypeError, r"Compose: 'transforms'"),
    (lambda: T.RandomCrop(5)(np.zeros((3, 3, 3))), ValueError, r"RandomCrop: crop size"),
    (lambda: T.Transpose((0, 1))(np.zeros((2, 2, 3))), ValueError, r"Transpose: 'order'"),
])
def test_bad_input_errors_name_the_transform_and_argument(call, exc, pattern):
    with pytest.raises(exc, match=pattern):
        call()


def test_compose_names_the_failing_step():
    t = T.Compose([T.Resize(4), T.CenterCrop(2), T.Grayscale()])
    with pytest.raises(ValueError) as info:
        t(np.zeros((8, 8, 4), np.uint8))
    assert any("Grayscale" in n for n in getattr(info.value, "__notes__", []))


# ---------------------------------------------------------------- DataLoader pipeline


class _Pictures(fw.io.Dataset):
    def __init__(self, transform):
        self.transform = transform
        rng = np.random.default_rng(5)
        self.images = [rng.integers(0, 256, (12, 10, 3)).astype(np.uint8) for _ in range(6)]

    def __getitem__(self, idx):
        return self.transform(self.images[idx]), np.int64(idx)

    def __len__(self):
        return len(self.images)


def test_transforms_in_a_dataloader_pipeline():
    pipeline = T.Compose([T.RandomResizedCrop(8), T.RandomHorizontalFlip(), T.ToTensor(),
                          T.Normalize([0.5] * 3, [0.5] * 3)])
    ds = _Pictures(pipeline)
    random.seed(0)
    np.random.seed(0)
    batches = list(fw.io.DataLoader(ds, batch_size=4, shuffle=False))
    assert [b[0].shape for b in batches] == [[4, 3, 8, 8], [2, 3, 8, 8]]
    assert batches[1][1].numpy().tolist() == [4, 5]
    x = np.concatenate([b[0].numpy() for b in batches])
    assert x.min() >= -1.0 - 1e-6 and x.max() <= 1.0 + 1e-6
    # the same seeds give the same samples as calling the pipeline directly
    random.seed(0)
    np.random.seed(0)
    direct = np.stack([pipeline(img).numpy() for img in ds.images])
    np.testing.assert_allclose(x, direct, rtol=1e-6)


def test_transforms_pickle_into_dataloader_workers():
    # the transform objects travel to worker processes with the dataset
    pipeline = T.Compose([T.RandomResizedCrop(8), T.ColorJitter(0.3, 0.3, 0.3, 0.1),
                          T.RandomRotation(20), T.ToTensor()])
    loader = fw.io.DataLoader(_Pictures(pipeline), batch_size=3, num_workers=2, timeout=60)
    batches = list(loader)
    assert [b[0].shape for b in batches] == [[3, 3, 8, 8], [3, 3, 8, 8]]
    assert sorted(np.concatenate([b[1].numpy() for b in batches]).tolist()) == list(range(6))
    x = np.concatenate([b[0].numpy() for b in batches])
    assert 0.0 <= x.min() and x.max() <= 1.0 and x.std() > 0.05
