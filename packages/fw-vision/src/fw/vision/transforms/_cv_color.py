"""OpenCV's colour conversions that Paddle's "cv2" backend uses, in NumPy: RGB/BGR to
grey and the 8-bit "full range" HSV round trip (hue in 0..255).

Facts from OpenCV's imgproc/src/color_rgb and color_hsv sources (checked against
OpenCV 5.0): 8-bit grey is ``(9798 R + 19235 G + 3735 B + 2**14) >> 15``; float grey is
``0.299 R + 0.587 G + 0.114 B``; 8-bit HSV uses 12-bit fixed-point division tables and
a hue range of 256 one way but 255 back (OpenCV's own asymmetry); HSV back to RGB is
computed in float32 and rounded. The results equal OpenCV's.
"""

from __future__ import annotations

import numpy as np

_R2Y, _G2Y, _B2Y, _YUV_SHIFT = 9798, 19235, 3735, 15
_HSV_SHIFT = 12


def gray(img: np.ndarray, rgb: bool) -> np.ndarray:
    """Grey HW array of a HWC image whose channels are RGB (``rgb``) or BGR."""
    r, g, b = (img[..., 0], img[..., 1], img[..., 2]) if rgb else (
        img[..., 2], img[..., 1], img[..., 0])
    if img.dtype == np.uint8:
        y = (r.astype(np.int32) * _R2Y + g.astype(np.int32) * _G2Y
             + b.astype(np.int32) * _B2Y + (1 << (_YUV_SHIFT - 1))) >> _YUV_SHIFT
        return y.astype(np.uint8)
    if img.dtype == np.uint16:
        y = (r.astype(np.int64) * _R2Y + g.astype(np.int64) * _G2Y
             + b.astype(np.int64) * _B2Y + (1 << (_YUV_SHIFT - 1))) >> _YUV_SHIFT
        return y.astype(np.uint16)
    ft = np.float64 if img.dtype == np.float64 else np.float32
    # summed in memory order (channel 0 first), as OpenCV does
    w = (ft(0.299), ft(0.587), ft(0.114)) if rgb else (ft(0.114), ft(0.587), ft(0.299))
    c = [img[..., k].astype(ft) for k in range(3)]
    return (c[0] * w[0] + c[1] * w[1] + c[2] * w[2]).astype(img.dtype)


def _div_table(numer: int) -> np.ndarray:
    i = np.arange(256, dtype=np.float64)
    with np.errstate(divide="ignore"):
        t = np.where(i > 0, np.rint((numer << _HSV_SHIFT) / np.maximum(i, 1)), 0)
    return t.astype(np.int32)


_SDIV = _div_table(255)
_HDIV_FULL = np.where(np.arange(256) > 0,
                      np.rint((256 << _HSV_SHIFT) / (6.0 * np.maximum(np.arange(256), 1))),
                      0).astype(np.int32)


def bgr_to_hsv_full(img: np.ndarray) -> np.ndarray:
    """``cv2.cvtColor(img, cv2.COLOR_BGR2HSV_FULL)`` for uint8 HWC."""
    b = img[..., 0].astype(np.int32)
    g = img[..., 1].astype(np.int32)
    r = img[..., 2].astype(np.int32)
    v = np.maximum(np.maximum(b, g), r)
    vmin = np.minimum(np.minimum(b, g), r)
    diff = v - vmin
    vr = v == r
    vg = (v == g) & ~vr
    s = (diff * _SDIV[v] + (1 << (_HSV_SHIFT - 1))) >> _HSV_SHIFT
    h = np.where(vr, g - b, np.where(vg, b - r + 2 * diff, r - g + 4 * diff))
    h = (h * _HDIV_FULL[diff] + (1 << (_HSV_SHIFT - 1))) >> _HSV_SHIFT
    h = np.where(h < 0, h + 256, h)
    return np.stack([h, s, v], axis=-1).astype(np.uint8)


_SECTORS = np.array([[1, 3, 0], [1, 0, 2], [3, 0, 1], [0, 2, 1], [0, 1, 3], [2, 1, 0]])


def hsv_full_to_bgr(hsv: np.ndarray) -> np.ndarray:
    """``cv2.cvtColor(hsv, cv2.COLOR_HSV2BGR_FULL)`` for uint8 HWC."""
    f32 = np.float32
    h = hsv[..., 0].astype(f32) * f32(6.0 / 255)
    s = hsv[..., 1].astype(f32) * f32(1.0 / 255)
    v = hsv[..., 2].astype(f32) * f32(1.0 / 255)
    sector = np.floor(h).astype(np.int64)
    h = h - sector.astype(f32)
    bad = (sector < 0) | (sector >= 6)
    sector = np.where(bad, 0, sector)
    h = np.where(bad, f32(0), h)
    tab = np.stack([v, v * (1 - s), v * (1 - s * h), v * (1 - s * (1 - h))], axis=-1)
    idx = _SECTORS[sector]  # [..., 3]: which tab entry gives b, g, r
    bgr = np.take_along_axis(tab, idx, axis=-1)
    bgr = np.where((s == 0)[..., None], v[..., None], bgr)
    return np.clip(np.rint(bgr * f32(255)), 0, 255).astype(np.uint8)
