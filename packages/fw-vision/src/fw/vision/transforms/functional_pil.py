"""Transforms of PIL images: pillow does the work, called as Paddle's
``functional_pil.py`` calls it, so results equal Paddle's exactly.

Arguments arrive checked by `fw.vision.transforms.functional`.
"""

from __future__ import annotations

import numpy as np
from PIL import Image, ImageEnhance, ImageOps

__all__: list[str] = []

INTERPOLATIONS = {
    "nearest": Image.Resampling.NEAREST, "bilinear": Image.Resampling.BILINEAR,
    "bicubic": Image.Resampling.BICUBIC, "box": Image.Resampling.BOX,
    "lanczos": Image.Resampling.LANCZOS, "hamming": Image.Resampling.HAMMING,
}


def to_tensor(pic, data_format: str = "CHW"):
    import fw

    if pic.mode in ("I", "I;16"):
        arr = np.asarray(pic, np.int32)
    elif pic.mode == "F":
        arr = np.asarray(pic, np.float32)
    elif pic.mode == "1":
        arr = 255 * np.asarray(pic, np.uint8)
    else:
        arr = np.asarray(pic)
    nchannel = 3 if pic.mode == "YCbCr" else 1 if pic.mode == "I;16" else len(pic.mode)
    if arr.dtype == np.uint8:
        arr = arr.astype(np.float32) / np.float32(255.0)
    arr = arr.reshape(pic.size[1], pic.size[0], nchannel)
    if data_format == "CHW":
        arr = arr.transpose(2, 0, 1)
    return fw.to_tensor(np.ascontiguousarray(arr))


def resize(img, size, interpolation: str = "bilinear"):
    w, h = img.size
    if isinstance(size, int):
        if (w <= h and w == size) or (h <= w and h == size):
            return img
        if w < h:
            return img.resize((size, int(size * h / w)), INTERPOLATIONS[interpolation])
        return img.resize((int(size * w / h), size), INTERPOLATIONS[interpolation])
    return img.resize((int(size[1]), int(size[0])), INTERPOLATIONS[interpolation])


def pad(img, padding, fill=0, padding_mode: str = "constant"):
    left, top, right, bottom = padding
    if isinstance(fill, list):
        fill = tuple(fill)
    if padding_mode == "constant":
        out = ImageOps.expand(img, border=(left, top, right, bottom), fill=fill)
        if img.mode == "P":
            out.putpalette(img.getpalette())
        return out
    arr = np.asarray(img)
    widths = ((top, bottom), (left, right)) + (((0, 0),) if arr.ndim == 3 else ())
    out = Image.fromarray(np.pad(arr, widths, mode=padding_mode))
    if img.mode == "P":
        out.putpalette(img.getpalette())
    return out


def crop(img, top: int, left: int, height: int, width: int):
    return img.crop((left, top, left + width, top + height))


def center_crop(img, output_size):
    w, h = img.size
    th, tw = output_size
    return crop(img, int(round((h - th) / 2.0)), int(round((w - tw) / 2.0)), th, tw)


def hflip(img):
    return img.transpose(Image.Transpose.FLIP_LEFT_RIGHT)


def vflip(img):
    return img.transpose(Image.Transpose.FLIP_TOP_BOTTOM)


def adjust_brightness(img, brightness_factor: float):
    return ImageEnhance.Brightness(img).enhance(brightness_factor)


def adjust_contrast(img, contrast_factor: float):
    return ImageEnhance.Contrast(img).enhance(contrast_factor)


def adjust_saturation(img, saturation_factor: float):
    return ImageEnhance.Color(img).enhance(saturation_factor)


def adjust_hue(img, hue_factor: float):
    mode = img.mode
    if mode in {"L", "1", "I", "F"}:
        return img
    h, s, v = img.convert("HSV").split()
    np_h = (np.array(h, dtype=np.uint8).astype(np.int16) + int(hue_factor * 255)) % 256
    h = Image.fromarray(np_h.astype(np.uint8), "L")
    return Image.merge("HSV", (h, s, v)).convert(mode)


def _fill(fill, img):
    if isinstance(fill, int):
        # Paddle repeats a number three times, which pillow refuses for one-band images
        return fill if len(img.getbands()) == 1 else (fill,) * 3
    if isinstance(fill, list):
        return tuple(fill)
    return fill


def affine(img, matrix, interpolation: str = "nearest", fill=0):
    return img.transform(img.size, Image.Transform.AFFINE, matrix,
                         INTERPOLATIONS[interpolation], fillcolor=_fill(fill, img))


def rotate(img, angle, interpolation: str = "nearest", expand=False, center=None, fill=0):
    return img.rotate(angle, INTERPOLATIONS[interpolation], expand, center,
                      fillcolor=_fill(fill, img))


def perspective(img, coeffs, interpolation: str = "nearest", fill=0):
    return img.transform(img.size, Image.Transform.PERSPECTIVE, coeffs,
                         INTERPOLATIONS[interpolation], fillcolor=_fill(fill, img))


def to_grayscale(img, num_output_channels: int = 1):
    img = img.convert("L")
    if num_output_channels == 3:
        arr = np.array(img, dtype=np.uint8)
        img = Image.fromarray(np.dstack([arr, arr, arr]), "RGB")
    return img


def erase(img, i: int, j: int, h: int, w: int, v, inplace=False):
    arr = np.array(img, dtype=np.uint8)
    arr[i:i + h, j:j + w, ...] = v
    return Image.fromarray(arr, "RGB" if arr.ndim == 3 else "L")
