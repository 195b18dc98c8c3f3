"""OpenCV's ``warpAffine`` / ``warpPerspective`` (constant border) and the matrices Paddle's
"cv2" backend builds (``getRotationMatrix2D``, ``getPerspectiveTransform``), in NumPy.

Conventions followed (OpenCV >= 4.11's warp kernels, imgproc/src/imgwarp.cpp; facts
only): the given matrix maps source to destination and is inverted in double; each
destination pixel (x, y) is mapped back to float32 source coordinates; nearest rounds
them (half to even), bilinear and bicubic (a = -0.75) weigh the neighbours with float
weights; taps outside the image read the border value; integer results are rounded.
Against OpenCV 5.0 this is within 1 grey level (float rounding), except that a
perspective map evaluated in a different float order can put a nearest-neighbour source
exactly on a half-pixel tie the other way (seen once in ~30 random 20x27 warps). Older
OpenCV (< 4.11) quantised coordinates to 1/32 pixel, so its results differ from these
by a few grey levels.
"""

from __future__ import annotations

import math

import numpy as np

from fw.vision.transforms import _native


def rotation_matrix(center, angle: float, scale: float) -> np.ndarray:
    """``cv2.getRotationMatrix2D(center, angle, scale)``: counter-clockwise degrees."""
    a = math.radians(angle)
    alpha = math.cos(a) * scale
    beta = math.sin(a) * scale
    cx, cy = center
    return np.array([[alpha, beta, (1 - alpha) * cx - beta * cy],
                     [-beta, alpha, beta * cx + (1 - alpha) * cy]], dtype=np.float64)


def perspective_matrix(src, dst) -> np.ndarray:
    """``cv2.getPerspectiveTransform(src, dst)``: the 3x3 homography taking the four
    ``src`` points to the four ``dst`` points (float32 inputs, solved in double)."""
    src = np.asarray(src, np.float32).astype(np.float64)
    dst = np.asarray(dst, np.float32).astype(np.float64)
    a = np.zeros((8, 8))
    b = np.zeros(8)
    for i in range(4):
        (x, y), (u, v) = src[i], dst[i]
        a[i] = [x, y, 1, 0, 0, 0, -x * u, -y * u]
        a[i + 4] = [0, 0, 0, x, y, 1, -x * v, -y * v]
        b[i], b[i + 4] = u, v
    m = np.linalg.solve(a, b)
    return np.append(m, 1.0).reshape(3, 3)


def border_value(fill, channels: int, dtype) -> np.ndarray:
    """OpenCV's ``Scalar`` from Paddle's ``fill``: a number fills the first channel only
    (``Scalar(v)`` is ``(v, 0, 0, 0)``), a sequence gives one value per channel."""
    if isinstance(fill, (int, float, np.number)):
        vals = [float(fill), 0.0, 0.0, 0.0]
    else:
        vals = [float(v) for v in fill] + [0.0] * (4 - len(fill))
    return np.array(vals[:channels], dtype=np.float64)


def _cubic(x: np.ndarray) -> list[np.ndarray]:
    a = np.float32(-0.75)
    c0 = ((a * (x + 1) - 5 * a) * (x + 1) + 8 * a) * (x + 1) - 4 * a
    c1 = ((a + 2) * x - (a + 3)) * x * x + 1
    c2 = ((a + 2) * (1 - x) - (a + 3)) * (1 - x) * (1 - x) + 1
    return [c0, c1, c2, 1 - c0 - c1 - c2]


def _remap(img: np.ndarray, xs: np.ndarray, ys: np.ndarray, method: str, fill) -> np.ndarray:
    """Sample ``img`` (HWC) at float32 source coordinates with a constant border."""
    h, w, c = img.shape
    border = border_value(fill, c, img.dtype)
    # a frame of border pixels wide enough for every tap, so that clipping an index into
    # the padded image reads the border value for any tap outside the image
    m = 0 if method == "nearest" else 1 if method == "bilinear" else 2
    acc_t = np.float64 if img.dtype == np.float64 else np.float32
    pad = np.empty((h + 2 * m + 2, w + 2 * m + 2, c), acc_t)
    pad[...] = border.astype(acc_t)
    pad[m + 1:m + 1 + h, m + 1:m + 1 + w] = img
    flat = pad.reshape(-1, c)
    pw = w + 2 * m + 2
    lim_x, lim_y = w + 2 * m + 1, h + 2 * m + 1

    def tap(px, py):
        # coordinates shift by the frame; anything beyond it lands on the frame's edge
        return flat[np.clip(py + m + 1, 0, lim_y) * pw + np.clip(px + m + 1, 0, lim_x)]

    if method == "nearest":
        big = np.float32(w + h + 8)  # keep far-away coordinates inside int range
        ix = np.rint(np.clip(xs, -big, big)).astype(np.int32)
        iy = np.rint(np.clip(ys, -big, big)).astype(np.int32)
        return tap(ix, iy).astype(img.dtype)
    big = np.float32(w + h + 8)
    xs = np.clip(xs, -big, big)
    ys = np.clip(ys, -big, big)
    x0 = np.floor(xs)
    y0 = np.floor(ys)
    fx, fy = xs - x0, ys - y0
    x0, y0 = x0.astype(np.int32), y0.astype(np.int32)
    if method == "bilinear":
        offs, wx, wy = (0, 1), [1 - fx, fx], [1 - fy, fy]
    else:
        offs, wx, wy = (-1, 0, 1, 2), _cubic(fx), _cubic(fy)
    acc = np.zeros((*xs.shape, c), acc_t)
    for j, oy in enumerate(offs):
        row = y0 + oy
        for i, ox in enumerate(offs):
            acc += tap(x0 + ox, row) * (wx[i] * wy[j]).astype(acc_t)[..., None]
    if np.issubdtype(img.dtype, np.integer):
        info = np.iinfo(img.dtype)
        acc = np.clip(np.rint(acc), info.min, info.max)
    return acc.astype(img.dtype)


def _native_warp(img: np.ndarray, inv: np.ndarray, out_w: int, out_h: int, method: str,
                 fill):
    """The native kernel's result for uint8 / float32 HWC images, else None (then the
    NumPy code below runs: it is the reference the kernel is tested against)."""
    k = _native.kernels()
    if (k is None or img.ndim != 3 or img.dtype not in (np.uint8, np.float32)
            or method not in ("nearest", "bilinear", "bicubic")):
        return None
    border = border_value(fill, img.shape[2], img.dtype)
    if border.shape[0] != img.shape[2]:
        return None
    out = np.empty((out_h, out_w, img.shape[2]), img.dtype)
    return k.warp(np.ascontiguousarray(img), np.ascontiguousarray(inv), method,
                  np.ascontiguousarray(border, np.float64), out)


def warp_affine(img: np.ndarray, m, out_w: int, out_h: int, method: str, fill) -> np.ndarray:
    """``cv2.warpAffine(img, m, (out_w, out_h), flags=method, borderValue=fill)``."""
    m = np.asarray(m, np.float64).reshape(2, 3)
    d = m[0, 0] * m[1, 1] - m[0, 1] * m[1, 0]
    d = 1.0 / d if d != 0 else 0.0
    inv = np.array([[m[1, 1] * d, -m[0, 1] * d, 0.0], [-m[1, 0] * d, m[0, 0] * d, 0.0]])
    inv[0, 2] = -inv[0, 0] * m[0, 2] - inv[0, 1] * m[1, 2]
    inv[1, 2] = -inv[1, 0] * m[0, 2] - inv[1, 1] * m[1, 2]
    return warp_affine_inverse(img, inv, out_w, out_h, method, fill)


def warp_affine_inverse(img: np.ndarray, inv, out_w: int, out_h: int, method: str,
                        fill) -> np.ndarray:
    """``cv2.warpAffine`` with ``WARP_INVERSE_MAP``: `inv` maps output to input pixels."""
    inv = np.asarray(inv, np.float64).reshape(2, 3)
    out = _native_warp(img, inv, out_w, out_h, method, fill)
    if out is not None:
        return out
    x = np.arange(out_w, dtype=np.float64)[None, :]
    y = np.arange(out_h, dtype=np.float64)[:, None]
    xs = (inv[0, 0] * x + inv[0, 1] * y + inv[0, 2]).astype(np.float32)
    ys = (inv[1, 0] * x + inv[1, 1] * y + inv[1, 2]).astype(np.float32)
    return _remap(img, xs, ys, method, fill)


def warp_perspective(img: np.ndarray, m, out_w: int, out_h: int, method: str,
                     fill) -> np.ndarray:
    """``cv2.warpPerspective(img, m, (out_w, out_h), flags=method, borderValue=fill)``."""
    # inverted in double, then evaluated in float32 like OpenCV's kernel (this order of
    # operations matched OpenCV 5.0 best on nearest-sampling ties)
    inv = np.linalg.inv(np.asarray(m, np.float64).reshape(3, 3)).astype(np.float32)
    out = _native_warp(img, inv, out_w, out_h, method, fill)
    if out is not None:
        return out
    x = np.arange(out_w, dtype=np.float32)[None, :]
    y = np.arange(out_h, dtype=np.float32)[:, None]
    xs = inv[0, 0] * x + inv[0, 1] * y + inv[0, 2]
    ys = inv[1, 0] * x + inv[1, 1] * y + inv[1, 2]
    ws = inv[2, 0] * x + inv[2, 1] * y + inv[2, 2]
    nz = ws != 0
    safe = np.where(nz, ws, np.float32(1))
    # a point at infinity samples nothing: the border value (as OpenCV 5.0 does)
    far = np.float32(-1e9)
    xs = np.where(nz, xs / safe, far)
    ys = np.where(nz, ys / safe, far)
    return _remap(img, xs, ys, method, fill)
