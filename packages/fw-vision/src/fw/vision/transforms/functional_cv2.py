"""Transforms of NumPy HWC images with the numerics of Paddle's "cv2" backend
(``paddle/vision/transforms/functional_cv2.py``), reimplemented in NumPy so fw does
not depend on OpenCV: the resampling and colour arithmetic follow OpenCV's
(`_cv_resize`, `_cv_warp`, `_cv_color`).

Arguments arrive checked by `fw.vision.transforms.functional`. Differences from Paddle,
on purpose: a HW1 image keeps its channel axis in every function (Paddle's
``hflip`` drops it); 2-D HW images are accepted everywhere; ``adjust_saturation``
blends with exactly the given factor (Paddle's cv2 version draws a second random factor
from ``np.random``); ``affine`` makes the same geometry as the PIL and tensor backends
(clockwise angle about the centre, shear as documented) sampled the OpenCV way: Paddle's
cv2 version turns the other way about the top-left corner and swaps the shear axes, so
it agrees with Paddle's only for pure translations.
"""

from __future__ import annotations

import numpy as np

from fw.vision.transforms import _cv_color, _cv_resize, _cv_warp, _native

__all__: list[str] = []


def _hwc(img: np.ndarray) -> tuple[np.ndarray, bool]:
    """(HWC view, whether the input was 2-D)."""
    if img.ndim == 2:
        return img[:, :, None], True
    return img, False


def _back(out: np.ndarray, was_2d: bool) -> np.ndarray:
    return out[:, :, 0] if was_2d else out


def to_tensor(pic: np.ndarray, data_format: str = "CHW"):
    import fw

    if pic.ndim == 2:
        pic = pic[:, :, None]
    if data_format == "CHW":
        pic = pic.transpose(2, 0, 1)
    arr = np.ascontiguousarray(pic)
    if arr.dtype == np.uint8:
        return fw.to_tensor(arr.astype(np.float32) / np.float32(255.0))
    return fw.to_tensor(arr)


def resize(img: np.ndarray, size, interpolation: str = "bilinear") -> np.ndarray:
    h, w = img.shape[:2]
    if isinstance(size, int):
        if (w <= h and w == size) or (h <= w and h == size):
            return img
        if w < h:
            ow, oh = size, int(size * h / w)
        else:
            oh, ow = size, int(size * w / h)
    else:
        oh, ow = int(size[0]), int(size[1])
    return _cv_resize.resize(img, oh, ow, interpolation)


# NumPy's "reflect" is OpenCV's BORDER_REFLECT_101 and its "symmetric" BORDER_REFLECT,
# the two borders Paddle maps these names to
_NP_PAD_MODES = {"edge": "edge", "reflect": "reflect", "symmetric": "symmetric"}


def pad(img: np.ndarray, padding, fill=0, padding_mode: str = "constant") -> np.ndarray:
    left, top, right, bottom = padding
    x, was_2d = _hwc(img)
    widths = ((top, bottom), (left, right), (0, 0))
    if padding_mode == "constant":
        border = _cv_warp.border_value(fill, x.shape[2], x.dtype)
        out = np.empty((x.shape[0] + top + bottom, x.shape[1] + left + right, x.shape[2]),
                       x.dtype)
        out[...] = border.astype(x.dtype)
        out[top:top + x.shape[0], left:left + x.shape[1]] = x
    else:
        out = np.pad(x, widths, mode=_NP_PAD_MODES[padding_mode])
    return _back(out, was_2d)


def crop(img: np.ndarray, top: int, left: int, height: int, width: int) -> np.ndarray:
    return img[top:top + height, left:left + width]


def center_crop(img: np.ndarray, output_size) -> np.ndarray:
    h, w = img.shape[:2]
    th, tw = output_size
    i = int(round((h - th) / 2.0))
    j = int(round((w - tw) / 2.0))
    return crop(img, i, j, th, tw)


def hflip(img: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(img[:, ::-1])


def vflip(img: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(img[::-1])


def _lut(img: np.ndarray, table: np.ndarray) -> np.ndarray:
    return table.clip(0, 255).astype(np.uint8)[img]


def adjust_brightness(img: np.ndarray, brightness_factor: float) -> np.ndarray:
    table = np.array([i * brightness_factor for i in range(256)])
    return _lut(img.astype(np.uint8), table)


def adjust_contrast(img: np.ndarray, contrast_factor: float) -> np.ndarray:
    # Paddle's lookup table pivots on a fixed grey level of 74 (not the image mean)
    table = np.array([(i - 74) * contrast_factor + 74 for i in range(256)])
    return _lut(img, table)


def adjust_saturation(img: np.ndarray, saturation_factor: float) -> np.ndarray:
    x, was_2d = _hwc(img)
    if x.shape[2] == 1:
        return img
    f = x.astype(np.float32)
    grey = _cv_color.gray(f, rgb=False)[..., None]
    # both weights rounded from double, as NumPy does for Paddle's Python-float factor
    out = f * np.float32(saturation_factor) + grey * np.float32(1 - saturation_factor)
    return _back(out.clip(0, 255).astype(img.dtype), was_2d)


def adjust_hue(img: np.ndarray, hue_factor: float) -> np.ndarray:
    x, was_2d = _hwc(img)
    if x.shape[2] == 1:
        return img
    k = _native.kernels()
    if k is not None and x.shape[2] == 3 and img.dtype == np.uint8:
        out = np.empty_like(x, order="C")
        return _back(k.color(np.ascontiguousarray(x), "hue", int(hue_factor * 255), out), was_2d)
    hsv = _cv_color.bgr_to_hsv_full(x.astype(np.uint8))
    h = (hsv[..., 0].astype(np.int32) + int(hue_factor * 255)) % 256
    hsv[..., 0] = h.astype(np.uint8)
    return _back(_cv_color.hsv_full_to_bgr(hsv).astype(img.dtype), was_2d)


def _warp_dtype(img: np.ndarray, fn_name: str) -> np.ndarray:
    if img.dtype == np.float16 or img.dtype == np.bool_:
        raise TypeError(f"{fn_name}: NumPy images must be uint8, uint16, int16, float32 "
                        f"or float64 (OpenCV's types), got {img.dtype}")
    return img


def affine(img: np.ndarray, matrix, interpolation="nearest", fill=0) -> np.ndarray:
    """Warp by the inverse affine `matrix` (output -> input, six numbers, pixel centres at
    +0.5 like PIL's) that `functional.affine` builds, sampling like OpenCV."""
    x, was_2d = _hwc(_warp_dtype(img, "affine"))
    h, w = x.shape[:2]
    if isinstance(fill, int):
        fill = (fill,) * 3
    a, b, c, d, e, f = matrix
    # the same map on OpenCV's grid, whose pixel centres are the integers
    inv = np.array([[a, b, c + 0.5 * (a + b) - 0.5], [d, e, f + 0.5 * (d + e) - 0.5]])
    return _back(_cv_warp.warp_affine_inverse(x, inv, w, h, interpolation, fill), was_2d)


def rotate(img: np.ndarray, angle, interpolation="nearest", expand=False, center=None,
           fill=0) -> np.ndarray:
    x, was_2d = _hwc(_warp_dtype(img, "rotate"))
    h, w = x.shape[:2]
    if center is None:
        center = (w / 2.0, h / 2.0)
    m = _cv_warp.rotation_matrix(center, angle, 1.0)
    if expand:
        # the bounding box of the rotated corners, as Paddle computes it
        a = -np.radians(angle)
        em = [round(np.cos(a), 15), round(np.sin(a), 15), 0.0,
              round(-np.sin(a), 15), round(np.cos(a), 15), 0.0]

        def tr(px, py):
            return em[0] * px + em[1] * py + em[2], em[3] * px + em[4] * py + em[5]

        em[2], em[5] = tr(-center[0], -center[1])
        em[2] += center[0]
        em[5] += center[1]
        pts = [tr(px, py) for px, py in ((0, 0), (w, 0), (w, h), (0, h))]
        xs, ys = [p[0] for p in pts], [p[1] for p in pts]
        nw = int(np.ceil(max(xs)) - np.floor(min(xs)))
        nh = int(np.ceil(max(ys)) - np.floor(min(ys)))
        m[0, 2] += (nw - w) * 0.5
        m[1, 2] += (nh - h) * 0.5
        w, h = nw, nh
    return _back(_cv_warp.warp_affine(x, m, w, h, interpolation, fill), was_2d)


def perspective(img: np.ndarray, startpoints, endpoints, interpolation="nearest",
                fill=0) -> np.ndarray:
    x, was_2d = _hwc(_warp_dtype(img, "perspective"))
    h, w = x.shape[:2]
    m = _cv_warp.perspective_matrix(startpoints, endpoints)
    return _back(_cv_warp.warp_perspective(x, m, w, h, interpolation, fill), was_2d)


def to_grayscale(img: np.ndarray, num_output_channels: int = 1) -> np.ndarray:
    g = _cv_color.gray(img, rgb=True)[:, :, None]
    if num_output_channels == 3:
        return np.ascontiguousarray(np.broadcast_to(g, img.shape))
    return g


def normalize(img: np.ndarray, mean, std, data_format="CHW", to_rgb=False) -> np.ndarray:
    shape = (-1, 1, 1) if data_format == "CHW" else (1, 1, -1)
    mean = np.float32(np.array(mean).reshape(shape))
    std = np.float32(np.array(std).reshape(shape))
    if to_rgb:
        img = img[..., ::-1]
    return (img - mean) / std


def erase(img: np.ndarray, i: int, j: int, h: int, w: int, v, inplace=False) -> np.ndarray:
    if not inplace:
        img = img.copy()
    img[i:i + h, j:j + w, ...] = v
    return img
