"""OpenCV's ``cv2.resize`` in NumPy (what Paddle's "cv2" backend calls for NumPy images).

Each axis is resampled separately through a table of taps (source index, weight) per
output position, built with OpenCV's conventions (modules/imgproc/src/resize.cpp, facts
only): half-pixel centres ``src = (dst + 0.5) * scale - 0.5`` for bilinear, bicubic
(a = -0.75) and Lanczos-4, ``src = floor(dst * scale)`` for nearest (not half-pixel),
box weights for area downscaling, and replicated borders. uint8 images use OpenCV's
fixed-point arithmetic (weights scaled by 2048, the vector path's rounding for bilinear),
so results match OpenCV to within 1 grey level; float images are exact up to float
rounding.
"""

from __future__ import annotations

import math

import numpy as np

from fw.vision.transforms import _native

_COEF_BITS = 11  # INTER_RESIZE_COEF_BITS
_COEF_SCALE = 1 << _COEF_BITS
_CUBIC_A = -0.75


def _cubic_weights(fx: np.ndarray) -> np.ndarray:
    x = fx.astype(np.float32)
    a = np.float32(_CUBIC_A)
    c0 = ((a * (x + 1) - 5 * a) * (x + 1) + 8 * a) * (x + 1) - 4 * a
    c1 = ((a + 2) * x - (a + 3)) * x * x + 1
    c2 = ((a + 2) * (1 - x) - (a + 3)) * (1 - x) * (1 - x) + 1
    return np.stack([c0, c1, c2, 1 - c0 - c1 - c2], axis=1)


def _lanczos4_weights(fx: np.ndarray) -> np.ndarray:
    # sinc(d) * sinc(d / 4) over the 8 taps, normalised to sum 1; OpenCV returns the
    # centre tap alone for a (numerically) zero offset
    d = fx[:, None].astype(np.float64) + 3 - np.arange(8)[None, :]
    w = np.sinc(d) * np.sinc(d / 4)
    w = (w / w.sum(axis=1, keepdims=True)).astype(np.float32)
    exact = fx < np.finfo(np.float32).eps
    w[exact] = 0
    w[exact, 3] = 1
    return w


def _linear_taps(fx: np.ndarray, sx: np.ndarray, n: int):
    # OpenCV pins the offset to the edge pixel once the left tap is outside
    left = sx < 0
    fx = np.where(left, 0, fx)
    sx = np.where(left, 0, sx)
    right = sx >= n - 1
    fx = np.where(right, 0, fx)
    sx = np.where(right, n - 1, sx)
    idx = np.stack([sx, sx + 1], axis=1)
    w = np.stack([1 - fx, fx], axis=1).astype(np.float32)
    return np.clip(idx, 0, n - 1), w


def axis_taps(src: int, dst: int, method: str, area_box: bool):
    """Source indices [dst, k] and float weights [dst, k] for one axis."""
    scale = 1.0 / (dst / src)  # OpenCV keeps inv_scale = dst/src and divides
    d = np.arange(dst, dtype=np.float64)
    if method == "nearest":
        sx = np.minimum(np.floor(d * scale).astype(np.int64), src - 1)
        return sx[:, None], np.ones((dst, 1), np.float32)
    if method == "area" and area_box:
        return _area_box_taps(src, dst, scale)
    if method == "area":
        # area "upscaling": linear taps at floor(dst * scale) with OpenCV's offset rule
        sx = np.floor(d * scale).astype(np.int64)
        fx = ((d + 1) - (sx + 1) * (dst / src)).astype(np.float32)  # float, as OpenCV
        fx = np.where(fx <= 0, np.float32(0), fx - np.floor(fx))
        return _linear_taps(fx, sx, src)
    fxf = ((d + 0.5) * scale - 0.5).astype(np.float32)
    sx = np.floor(fxf).astype(np.int64)
    fx = fxf - sx.astype(np.float32)
    if method == "bilinear":
        return _linear_taps(fx, sx, src)
    if method == "bicubic":
        idx = sx[:, None] + np.arange(-1, 3)[None, :]
        return np.clip(idx, 0, src - 1), _cubic_weights(fx)
    if method == "lanczos":
        idx = sx[:, None] + np.arange(-3, 5)[None, :]
        return np.clip(idx, 0, src - 1), _lanczos4_weights(fx)
    raise AssertionError(method)


def _area_box_taps(src: int, dst: int, scale: float):
    rows_idx, rows_w = [], []
    for dx in range(dst):
        f1 = dx * scale
        f2 = f1 + scale
        s1 = min(math.ceil(f1), src - 1)
        s2 = min(math.floor(f2), src - 1)
        s1 = min(s1, s2)
        cell = min(scale, src - f1)
        idx, w = [], []
        if s1 - f1 > 1e-3:
            idx.append(s1 - 1)
            w.append((s1 - f1) / cell)
        for s in range(s1, s2):
            idx.append(s)
            w.append(1.0 / cell)
        if f2 - s2 > 1e-3:
            idx.append(s2)
            w.append(min(min(f2 - s2, 1.0), cell) / cell)
        rows_idx.append(idx)
        rows_w.append(w)
    k = max(len(i) for i in rows_idx)
    idx = np.zeros((dst, k), np.int64)
    wts = np.zeros((dst, k), np.float32)
    for r, (i, w) in enumerate(zip(rows_idx, rows_w)):
        idx[r, :len(i)] = i
        wts[r, :len(w)] = w
    return idx, wts


def _apply(img: np.ndarray, idx: np.ndarray, w: np.ndarray, axis: int, acc) -> np.ndarray:
    shape = [1] * img.ndim
    shape[axis] = idx.shape[0]
    out = None
    for k in range(idx.shape[1]):
        term = np.take(img, idx[:, k], axis=axis).astype(acc) * w[:, k].reshape(shape)
        out = term if out is None else out + term
    return out


def _plan(img: np.ndarray, oh: int, ow: int, method: str):
    h, w = img.shape[:2]
    if method == "bilinear" and h == 2 * oh and w == 2 * ow:
        method = "area"  # OpenCV's own shortcut for exact 2x linear downscaling
    area_box = method == "area" and h >= oh and w >= ow
    ty, wy = axis_taps(h, oh, method, area_box)
    tx, wx = axis_taps(w, ow, method, area_box)
    return method, area_box, ty, wy, tx, wx


def resize(img: np.ndarray, oh: int, ow: int, method: str) -> np.ndarray:
    """``cv2.resize(img, (ow, oh), interpolation=method)`` for a HW or HWC array: the
    native kernel for uint8 / float32 (any dtype for nearest), else `resize_reference`."""
    k = _native.kernels()
    if (k is None or img.ndim not in (2, 3) or img.size == 0 or oh <= 0 or ow <= 0
            or (method != "nearest" and img.dtype not in (np.uint8, np.float32))):
        return resize_reference(img, oh, ow, method)
    method, area_box, ty, wy, tx, wx = _plan(img, oh, ow, method)
    x = np.ascontiguousarray(img if img.ndim == 3 else img[:, :, None])
    out = np.empty((oh, ow, x.shape[2]), x.dtype)
    if method == "nearest":
        k.resize_nearest(x, np.ascontiguousarray(ty[:, 0]), np.ascontiguousarray(tx[:, 0]), out)
    elif img.dtype == np.uint8 and not area_box:
        mode = "u8_linear" if method in ("bilinear", "area") else "u8_wide"
        k.resize(x, ty, _fixed(wy), tx, _fixed(wx), mode, out)
    else:
        k.resize(x, ty, wy, tx, wx, "float", out)
    return out if img.ndim == 3 else out[:, :, 0]


def _fixed(w: np.ndarray) -> np.ndarray:
    return np.rint(w * _COEF_SCALE).astype(np.int32)


def resize_reference(img: np.ndarray, oh: int, ow: int, method: str) -> np.ndarray:
    """`resize` in NumPy alone: the reference the native kernel is tested against."""
    method, area_box, ty, wy, tx, wx = _plan(img, oh, ow, method)
    if method == "nearest":
        return img[ty[:, 0]][:, tx[:, 0]]
    if img.dtype == np.uint8 and not area_box:
        return _resize_u8(img, ty, wy, tx, wx, method)
    if img.dtype in (np.float64, np.float16):
        acc = np.float64
    else:
        acc = np.float32
    out = _apply(_apply(img, tx, wx, 1, acc), ty, wy, 0, acc)
    if np.issubdtype(img.dtype, np.integer):
        info = np.iinfo(img.dtype)
        out = np.clip(np.rint(out), info.min, info.max)
    return out.astype(img.dtype)


def _resize_u8(img, ty, wy, tx, wx, method):
    # int32 is enough for the horizontal sums (|sum| < 255 * 2048 * 2)
    iwx = _fixed(wx)
    iwy = _fixed(wy)
    horiz = _apply(img, tx, iwx, 1, np.int32)  # scaled by 2048
    if method in ("bilinear", "area"):
        # the vector path: ((b0 * (S0 >> 4)) >> 16) + ((b1 * (S1 >> 4)) >> 16), then
        # a rounding shift by 2
        shape = [1] * img.ndim
        shape[0] = ty.shape[0]
        acc = None
        for k in range(2):
            s = np.take(horiz, ty[:, k], axis=0) >> 4
            term = (s * iwy[:, k].reshape(shape)) >> 16
            acc = term if acc is None else acc + term
        out = (acc + 2) >> 2
    else:
        acc = _apply(horiz, ty, iwy.astype(np.int64), 0, np.int64)
        out = (acc + (1 << (2 * _COEF_BITS - 1))) >> (2 * _COEF_BITS)
    return np.clip(out, 0, 255).astype(np.uint8)
