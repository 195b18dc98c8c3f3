"""Transforms of image tensors (CHW, or NCHW where Paddle allows a batch) with fw ops,
following Paddle's tensor backend (``paddle/vision/transforms/functional_tensor.py``):
resizing is ``fw.nn.functional.interpolate``, warps are an affine/perspective grid fed to
``fw.nn.functional.grid_sample`` (align_corners=False, zero padding, a mask channel
for the fill colour), colour changes are blends. The results stay on the tensor's
device and are differentiable where the ops are.

Arguments arrive checked by `fw.vision.transforms.functional`.
"""

from __future__ import annotations

import math

import numpy as np

import fw
import fw.nn.functional as F

__all__: list[str] = []


def _h_axis(data_format: str) -> int:
    return -2 if data_format.lower() == "chw" else -3


def _w_axis(data_format: str) -> int:
    return -1 if data_format.lower() == "chw" else -2


def _c_axis(data_format: str) -> int:
    return -3 if data_format.lower() == "chw" else -1


def image_size(img, data_format: str = "CHW") -> tuple[int, int]:
    """(width, height)."""
    return img.shape[_w_axis(data_format)], img.shape[_h_axis(data_format)]


def _const(arr: np.ndarray, like):
    """A constant tensor on `like`'s device (Paddle passes ``place=img.place``)."""
    return fw.to_tensor(np.ascontiguousarray(arr), place=like.place)


def _is_float(img) -> bool:
    return "float" in str(img.dtype)


def normalize(img, mean, std, data_format="CHW"):
    mean = _const(np.asarray(mean, np.float32), img)
    std = _const(np.asarray(std, np.float32), img)
    if data_format.lower() == "chw":
        mean = mean.reshape([-1, 1, 1])
        std = std.reshape([-1, 1, 1])
    return (img - mean) / std


def to_grayscale(img, num_output_channels=1, data_format="CHW"):
    w = _const(np.array([0.2989, 0.587, 0.114], np.float32), img)
    if data_format.lower() == "chw":
        w = w.reshape([-1, 1, 1])
    c = _c_axis(data_format)
    x = img if _is_float(img) else img.astype("float32")
    # integer images (Paddle has no kernel for them) get the truncated grey value
    out = (x * w.astype(x.dtype)).sum(axis=c, keepdim=True).astype(img.dtype)
    shape = list(out.shape)
    shape[c] = num_output_channels
    return out.expand(shape)


def hflip(img, data_format="CHW"):
    return img.flip(axis=[_w_axis(data_format)])


def vflip(img, data_format="CHW"):
    return img.flip(axis=[_h_axis(data_format)])


def crop(img, top, left, height, width, data_format="CHW"):
    if data_format.lower() == "chw":
        return img[..., top:top + height, left:left + width]
    return img[..., top:top + height, left:left + width, :]


def center_crop(img, output_size, data_format="CHW"):
    w, h = image_size(img, data_format)
    th, tw = output_size
    return crop(img, int(round((h - th) / 2.0)), int(round((w - tw) / 2.0)), th, tw,
                data_format)


def erase(img, i, j, h, w, v, inplace=False):
    out = img if inplace else img.clone()
    out[..., i:i + h, j:j + w] = v
    return out


_PAD_MODES = {"constant": "constant", "edge": "replicate", "reflect": "reflect"}


def pad(img, padding, fill=0, padding_mode="constant", data_format="CHW"):
    left, top, right, bottom = padding
    x = img.unsqueeze(0)
    out = F.pad(x, [left, right, top, bottom], mode=_PAD_MODES[padding_mode],
                value=float(fill), data_format="N" + data_format.upper())
    return out.squeeze(0)


def resize(img, size, interpolation="bilinear", data_format="CHW"):
    if isinstance(size, int):
        w, h = image_size(img, data_format)
        if (w <= h and w == size) or (h <= w and h == size):
            return img
        if w < h:
            ow, oh = size, int(size * h / w)
        else:
            oh, ow = size, int(size * w / h)
    else:
        oh, ow = int(size[0]), int(size[1])
    x = img if _is_float(img) else img.astype("float32")
    out = F.interpolate(x.unsqueeze(0), size=[oh, ow], mode=interpolation.lower(),
                        data_format="N" + data_format.upper()).squeeze(0)
    if not _is_float(img):
        # Paddle's uint8 kernels truncate (its bicubic has no uint8 kernel: fw clips and
        # truncates the same way)
        if "uint8" in str(img.dtype):
            out = out.clip(0.0, 255.0)
        out = out.astype(img.dtype)
    return out


def _blend(img1, img2, ratio):
    bound = 1.0 if _is_float(img1) else 255.0
    a = img1.astype("float32") if not _is_float(img1) else img1
    b = img2.astype(a.dtype) if hasattr(img2, "astype") else img2
    out = b + float(ratio) * (a - b)
    return out.clip(0, bound).astype(img1.dtype)


def adjust_brightness(img, brightness_factor):
    return _blend(img, fw.zeros_like(img), brightness_factor)


def adjust_contrast(img, contrast_factor):
    dtype = img.dtype if _is_float(img) else "float32"
    src = img if img.shape[-3] == 1 else to_grayscale(img)
    target = src.astype(dtype).mean(axis=[-3, -2, -1], keepdim=True)
    return _blend(img, target, contrast_factor)


def adjust_saturation(img, saturation_factor):
    if img.shape[-3] == 1:
        return img
    return _blend(img, to_grayscale(img), saturation_factor)


def _rgb_to_hsv(img):
    maxc = img.max(axis=-3)
    minc = img.min(axis=-3)
    eq = maxc == minc
    ones = fw.ones_like(maxc)
    delta = maxc - minc
    s = delta / fw.where(eq, ones, maxc)
    r, g, b = img.unbind(axis=-3)
    div = fw.where(eq, ones, delta)
    rc, gc, bc = (maxc - r) / div, (maxc - g) / div, (maxc - b) / div
    dt = maxc.dtype
    hr = (maxc == r).astype(dt) * (bc - gc)
    hg = ((maxc == g) & (maxc != r)).astype(dt) * (rc - bc + 2.0)
    hb = ((maxc != r) & (maxc != g)).astype(dt) * (gc - rc + 4.0)
    h = (hr + hg + hb) / 6.0 + 1.0
    h = h - h.trunc()
    return fw.stack([h, s, maxc], axis=-3)


def _hsv_to_rgb(img):
    h, s, v = img.unbind(axis=-3)
    f = h * 6.0
    i = fw.floor(f)
    f = f - i
    i = i.astype("int32") % 6
    p = fw.clip(v * (1.0 - s), 0.0, 1.0)
    q = fw.clip(v * (1.0 - s * f), 0.0, 1.0)
    t = fw.clip(v * (1.0 - s * (1.0 - f)), 0.0, 1.0)
    # the sector picks, per channel, one of (v, q, p, p, t, v)-style rows
    rows = [[v, q, p, p, t, v], [t, v, v, q, p, p], [p, p, t, v, v, q]]
    out = []
    for row in rows:
        acc = fw.zeros_like(v)
        for k, val in enumerate(row):
            acc = acc + (i == k).astype(v.dtype) * val
        out.append(acc)
    return fw.stack(out, axis=-3)


def adjust_hue(img, hue_factor):
    if img.shape[-3] == 1:
        return img
    dtype = img.dtype
    is_u8 = "uint8" in str(dtype)
    x = img.astype("float32") / 255.0 if is_u8 else img
    h, s, v = _rgb_to_hsv(x).unbind(axis=-3)
    h = h + hue_factor
    h = h - fw.floor(h)
    out = _hsv_to_rgb(fw.stack([h, s, v], axis=-3))
    if is_u8:
        out = (out * 255.0).astype(dtype)
    return out


# ---------------------------------------------------------------- warps


def _base_grid(ow: int, oh: int, centred: bool) -> np.ndarray:
    """[oh*ow, 3] float32 rows (x, y, 1) of the output pixel centres, relative to the
    image centre (affine) or to the corner (perspective), as Paddle's grids are built —
    in float32 like Paddle, since nearest sampling rounds these exact half-way values."""
    f = np.float32
    if centred:
        xs = np.linspace(-ow * 0.5 + 0.5, ow * 0.5 - 0.5, ow, dtype=f)
        ys = np.linspace(-oh * 0.5 + 0.5, oh * 0.5 - 0.5, oh, dtype=f)
    else:
        xs = np.linspace(0.5, ow - 0.5, ow, dtype=f)
        ys = np.linspace(0.5, oh - 0.5, oh, dtype=f)
    gx, gy = np.meshgrid(xs, ys)
    return np.stack([gx, gy, np.ones_like(gx)], axis=-1).reshape(-1, 3)


def _affine_grid(matrix, w, h, ow, oh) -> np.ndarray:
    theta = np.asarray(matrix, np.float32).reshape(2, 3)
    scaled = theta.T / np.array([0.5 * w, 0.5 * h], np.float32)
    return (_base_grid(ow, oh, True) @ scaled).reshape(1, oh, ow, 2)


def _fill_values(fill, c: int) -> np.ndarray:
    vals = np.asarray(fill, np.float32).reshape(-1)
    if vals.size == 1:
        return np.repeat(vals, c)
    if vals.size < c:
        raise ValueError(f"fill: {len(vals)} values for a tensor image with {c} channels")
    return vals[:c]  # Paddle's (v, v, v) for a number also serves 1-channel images


def _grid_transform(img, grid: np.ndarray, mode: str, fill):
    """Sample img (NCHW) at grid (align_corners=False), with `fill` outside — through an
    extra all-ones channel whose sampled value tells how much of a pixel is inside."""
    n = img.shape[0]
    dtype = img.dtype
    x = img if _is_float(img) else img.astype("float32")
    if fill is not None:
        dummy = fw.ones_like(x[:, :1])
        x = fw.concat([x, dummy], axis=1)
    # grid_sample's nearest mode rounds half-way taps to even like Paddle's kernel, so
    # exact quarter turns keep their rows
    g = _const(np.broadcast_to(grid, (n,) + grid.shape[1:]), x)
    out = F.grid_sample(x, g.astype(x.dtype), mode=mode, padding_mode="zeros",
                        align_corners=False)
    if fill is not None:
        mask = out[:, -1:, :, :]
        out = out[:, :-1, :, :]
        c = out.shape[1]
        fill_img = _const(_fill_values(fill, c).reshape(1, c, 1, 1), out).astype(out.dtype)
        if mode == "nearest":
            m = (mask < 0.5).astype(out.dtype)
            out = out * (1.0 - m) + m * fill_img
        else:
            out = out * mask + (1.0 - mask) * fill_img
    return out if str(out.dtype) == str(dtype) else out.astype(dtype)


def _check_mode(mode: str, fn_name: str) -> None:
    if mode not in ("nearest", "bilinear"):
        raise ValueError(f"{fn_name}: tensor images support interpolation 'nearest' or "
                         f"'bilinear' (grid_sample), got {mode!r}")


def affine(img, matrix, interpolation="nearest", fill=None, data_format="CHW"):
    _check_mode(interpolation, "affine")
    ndim = len(img.shape)
    x = img.unsqueeze(0) if ndim == 3 else img
    if data_format.lower() == "hwc":
        x = x.transpose([0, 3, 1, 2])
    h, w = x.shape[-2], x.shape[-1]
    if isinstance(fill, int):
        fill = (fill,) * 3
    out = _grid_transform(x, _affine_grid(matrix, w, h, w, h), interpolation, fill)
    if data_format.lower() == "hwc":
        out = out.transpose([0, 2, 3, 1])
    return out.squeeze(0) if ndim == 3 else out


def rotate(img, angle, interpolation="nearest", expand=False, center=None, fill=None,
           data_format="CHW"):
    _check_mode(interpolation, "rotate")
    angle = -angle % 360
    x = img.unsqueeze(0)
    w, h = image_size(x, data_format)
    if data_format.lower() == "hwc":
        x = x.transpose([0, 3, 1, 2])
    rc = [0.0, 0.0] if center is None else [p - s * 0.5 for p, s in zip(center, [w, h])]
    a = math.radians(angle)
    m = [math.cos(a), math.sin(a), 0.0, -math.sin(a), math.cos(a), 0.0]
    m = [np.float32(v) for v in m]  # Paddle builds this matrix as a float32 tensor
    m[2] = np.float32(m[2] + m[0] * -rc[0] + m[1] * -rc[1] + rc[0])
    m[5] = np.float32(m[5] + m[3] * -rc[0] + m[4] * -rc[1] + rc[1])
    matrix = np.array(m, np.float32).reshape(2, 3)
    if expand:
        corners = np.array([[-0.5 * w, -0.5 * h, 1.0], [-0.5 * w, 0.5 * h, 1.0],
                            [0.5 * w, 0.5 * h, 1.0], [0.5 * w, -0.5 * h, 1.0]], np.float32)
        pos = corners @ matrix.T
        npos = np.ceil(pos.max(axis=0)) - np.floor(pos.min(axis=0))
        ow, oh = int(npos[0]), int(npos[1])
    else:
        ow, oh = w, h
    if isinstance(fill, int):
        fill = (fill,) * 3
    out = _grid_transform(x, _affine_grid(matrix, w, h, ow, oh), interpolation, fill)
    if data_format.lower() == "hwc":
        out = out.transpose([0, 2, 3, 1])
    return out.squeeze(0)


def perspective(img, coeffs, interpolation="nearest", fill=None, data_format="CHW"):
    _check_mode(interpolation, "perspective")
    ndim = len(img.shape)
    x = img.unsqueeze(0) if ndim == 3 else img
    if data_format.lower() == "hwc":
        x = x.transpose([0, 3, 1, 2])
    oh, ow = x.shape[-2], x.shape[-1]
    # float32 throughout, as Paddle builds this grid (nearest sampling rounds its ties)
    c = np.asarray(coeffs, np.float32)
    base = _base_grid(ow, oh, False)
    theta1 = c[:6].reshape(2, 3)
    theta2 = np.concatenate([np.stack([c[6:8], c[6:8]]), np.ones((2, 1), np.float32)], axis=1)
    g1 = base @ (theta1.T / np.array([0.5 * ow, 0.5 * oh], np.float32))
    g2 = base @ theta2.T
    grid = (g1 / g2 - np.float32(1)).reshape(1, oh, ow, 2)
    if isinstance(fill, int):
        fill = (fill,) * 3
    out = _grid_transform(x, grid, interpolation, fill)
    if data_format.lower() == "hwc":
        out = out.transpose([0, 2, 3, 1])
    return out.squeeze(0) if ndim == 3 else out
