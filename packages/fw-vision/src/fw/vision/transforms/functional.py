"""Functional image transforms (Paddle's ``paddle.vision.transforms.functional``): each
function checks its arguments and dispatches on the image type — a PIL image goes to
`functional_pil` (pillow), a NumPy HW/HWC array to `functional_cv2` (OpenCV's
numerics in NumPy), an fw Tensor (CHW) to `functional_tensor` (fw ops).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence

import numpy as np

from fw.vision.transforms import functional_cv2 as F_cv2
from fw.vision.transforms import functional_pil as F_pil
from fw.vision.transforms import functional_tensor as F_t

__all__ = [
    "to_tensor", "resize", "pad", "crop", "center_crop", "hflip", "vflip",
    "adjust_brightness", "adjust_contrast", "adjust_saturation", "adjust_hue", "affine",
    "rotate", "perspective", "to_grayscale", "normalize", "erase",
]

_CV_INTERP = ("nearest", "bilinear", "area", "bicubic", "lanczos")
_PAD_MODES = ("constant", "edge", "reflect", "symmetric")


def _is_pil_image(img) -> bool:
    from PIL import Image

    return isinstance(img, Image.Image)


def _is_tensor_image(img) -> bool:
    import fw

    return isinstance(img, fw.Tensor)


def _is_numpy_image(img) -> bool:
    return isinstance(img, np.ndarray) and img.ndim in (2, 3)


def _describe(img) -> str:
    if isinstance(img, np.ndarray):
        return f"ndarray of shape {list(img.shape)} ({img.dtype})"
    return type(img).__name__


def _kind(img, fn: str, arg: str = "img") -> str:
    """'pil', 'cv2' or 'tensor'; anything else is a TypeError naming `fn`."""
    if _is_pil_image(img):
        return "pil"
    if _is_numpy_image(img):
        return "cv2"
    if _is_tensor_image(img):
        if len(img.shape) not in (3, 4):
            raise ValueError(f"{fn}: a tensor '{arg}' must be a CHW (or NCHW) image, got "
                             f"shape {list(img.shape)} ({img.dtype})")
        return "tensor"
    raise TypeError(f"{fn}: '{arg}' should be a PIL Image, a Tensor image or an ndarray "
                    f"with 2 or 3 dims, got {_describe(img)}")


def _int_pair(size, fn: str, arg: str) -> tuple[int, int]:
    if isinstance(size, numbers.Number) and not isinstance(size, bool):
        return int(size), int(size)
    if isinstance(size, Sequence) and len(size) == 2 and all(
            isinstance(s, numbers.Number) for s in size):
        return int(size[0]), int(size[1])
    raise TypeError(f"{fn}: '{arg}' should be an int or a sequence of 2 ints (h, w), got "
                    f"{size!r}")


def _check_interp(interpolation, kind: str, fn: str) -> str:
    allowed = tuple(F_pil.INTERPOLATIONS) if kind == "pil" else _CV_INTERP
    if kind == "tensor":
        allowed = ("nearest", "bilinear", "bicubic")
    if not isinstance(interpolation, str) or interpolation not in allowed:
        raise ValueError(f"{fn}: 'interpolation' must be one of {list(allowed)} for "
                         f"{'PIL' if kind == 'pil' else kind} images, got {interpolation!r}")
    return interpolation


def to_tensor(pic, data_format: str = "CHW"):
    """Convert a PIL image or a NumPy HWC array to an fw Tensor; uint8 data is scaled to
    float32 in [0, 1].

    Args:
        pic (PIL.Image|np.ndarray|Tensor): the image.
        data_format (str, optional): layout of the result, "CHW" (default) or "HWC".

    Returns:
        Tensor: the image as a tensor.

    Examples:
        .. code-block:: python

            >>> import fw.vision.transforms.functional as F
            >>> import numpy as np
            >>> F.to_tensor(np.full((2, 3, 3), 255, np.uint8)).shape
            [3, 2, 3]
    """
    kind = _kind(pic, "to_tensor", "pic")
    if data_format not in ("CHW", "HWC"):
        raise ValueError(f"to_tensor: 'data_format' should be 'CHW' or 'HWC', got "
                         f"{data_format!r}")
    if kind == "pil":
        return F_pil.to_tensor(pic, data_format)
    if kind == "cv2":
        return F_cv2.to_tensor(pic, data_format)
    return pic if data_format == "CHW" else pic.transpose([1, 2, 0])


def resize(img, size, interpolation: str = "bilinear"):
    """Resize an image.

    Args:
        img (PIL.Image|np.ndarray|Tensor): the image (HWC array, CHW tensor).
        size (int|list|tuple): ``(h, w)``, or an int: the shorter side becomes `size`
            and the aspect ratio is kept.
        interpolation (str, optional): "nearest", "bilinear" (default), "bicubic";
            also "area" and "lanczos" for arrays, "box", "lanczos" and "hamming" for PIL.

    Returns:
        The resized image, of the input's type.

    Examples:
        .. code-block:: python

            >>> import fw.vision.transforms.functional as F
            >>> import numpy as np
            >>> F.resize(np.zeros((4, 8, 3), np.uint8), 2).shape
            (2, 4, 3)
    """
    kind = _kind(img, "resize")
    if not (isinstance(size, int) and not isinstance(size, bool)):
        size = _int_pair(size, "resize", "size")
    elif size <= 0:
        raise ValueError(f"resize: 'size' must be positive, got {size}")
    if isinstance(size, tuple) and min(size) <= 0:
        raise ValueError(f"resize: 'size' must be positive, got {size}")
    _check_interp(interpolation, kind, "resize")
    if kind == "pil":
        return F_pil.resize(img, size, interpolation)
    if kind == "tensor":
        return F_t.resize(img, size, interpolation)
    return F_cv2.resize(img, size, interpolation)


def _padding4(padding, fn: str) -> tuple[int, int, int, int]:
    """(left, top, right, bottom) from an int, a 2-sequence (lr, tb) or a 4-sequence."""
    if isinstance(padding, numbers.Integral) and not isinstance(padding, bool):
        p = int(padding)
        return p, p, p, p
    if isinstance(padding, (list, tuple)) and len(padding) in (2, 4) and all(
            isinstance(p, numbers.Integral) for p in padding):
        if len(padding) == 2:
            return padding[0], padding[1], padding[0], padding[1]
        return tuple(int(p) for p in padding)
    if isinstance(padding, (list, tuple)):
        raise ValueError(f"{fn}: 'padding' must be an int or a 2 or 4 element sequence of "
                         f"ints, got {padding!r}")
    raise TypeError(f"{fn}: 'padding' must be an int or a 2 or 4 element sequence of ints, "
                    f"got {padding!r}")


def _check_fill(fill, fn: str) -> None:
    if not isinstance(fill, (numbers.Number, str, list, tuple)):
        raise TypeError(f"{fn}: 'fill' must be a number or a sequence, got {fill!r}")


def pad(img, padding, fill=0, padding_mode: str = "constant"):
    """Pad the borders of an image.

    Args:
        img (PIL.Image|np.ndarray|Tensor): the image.
        padding (int|list|tuple): one int for all borders, ``(left/right, top/bottom)``
            or ``(left, top, right, bottom)``.
        fill (int|list|tuple, optional): the value of "constant" padding. For NumPy
            arrays a single number fills the first channel only (OpenCV's ``Scalar``
            rule, as in Paddle); give a tuple for every channel.
        padding_mode (str, optional): "constant" (default), "edge", "reflect" or
            "symmetric" (not for tensors).

    Returns:
        The padded image.

    Examples:
        .. code-block:: python

            >>> import fw.vision.transforms.functional as F
            >>> import numpy as np
            >>> F.pad(np.zeros((2, 2, 3), np.uint8), (1, 2)).shape
            (6, 4, 3)
    """
    kind = _kind(img, "pad")
    pads = _padding4(padding, "pad")
    _check_fill(fill, "pad")
    if padding_mode not in _PAD_MODES:
        raise ValueError(f"pad: 'padding_mode' must be one of {list(_PAD_MODES)}, got "
                         f"{padding_mode!r}")
    if kind == "pil":
        return F_pil.pad(img, pads, fill, padding_mode)
    if kind == "tensor":
        if padding_mode == "symmetric":
            raise ValueError("pad: padding_mode 'symmetric' is not supported for tensor "
                             "images (as in Paddle)")
        if not isinstance(fill, numbers.Number):
            raise TypeError(f"pad: tensor images take one number as 'fill', got {fill!r}")
        return F_t.pad(img, pads, fill, padding_mode)
    return F_cv2.pad(img, pads, fill, padding_mode)


def crop(img, top: int, left: int, height: int, width: int):
    """Crop the box of `height` x `width` pixels whose top-left corner is (`top`, `left`).

    Args:
        img (PIL.Image|np.ndarray|Tensor): the image.
        top (int): first row. left (int): first column.
        height (int): rows kept. width (int): columns kept.

    Returns:
        The cropped image.

    Examples:
        .. code-block:: python

            >>> import fw.vision.transforms.functional as F
            >>> import numpy as np
            >>> F.crop(np.zeros((5, 6, 3), np.uint8), 1, 2, 3, 2).shape
            (3, 2, 3)
    """
    kind = _kind(img, "crop")
    for name, v in (("top", top), ("left", left), ("height", height), ("width", width)):
        if not isinstance(v, numbers.Integral):
            raise TypeError(f"crop: '{name}' must be an int, got {v!r}")
    if kind == "pil":
        return F_pil.crop(img, top, left, height, width)
    if kind == "tensor":
        return F_t.crop(img, top, left, height, width)
    return F_cv2.crop(img, top, left, height, width)


def center_crop(img, output_size):
    """Crop the centre of an image.

    Args:
        img (PIL.Image|np.ndarray|Tensor): the image.
        output_size (int|list|tuple): ``(h, w)`` of the crop, or one int for a square.

    Returns:
        The cropped image.

    Examples:
        .. code-block:: python

            >>> import fw.vision.transforms.functional as F
            >>> import numpy as np
            >>> F.center_crop(np.zeros((5, 6, 3), np.uint8), 4).shape
            (4, 4, 3)
    """
    kind = _kind(img, "center_crop")
    size = _int_pair(output_size, "center_crop", "output_size")
    if kind == "pil":
        return F_pil.center_crop(img, size)
    if kind == "tensor":
        return F_t.center_crop(img, size)
    return F_cv2.center_crop(img, size)


def hflip(img):
    """Flip an image left to right.

    Args:
        img (PIL.Image|np.ndarray|Tensor): the image.

    Returns:
        The flipped image.

    Examples:
        .. code-block:: python

            >>> import fw.vision.transforms.functional as F
            >>> import numpy as np
            >>> F.hflip(np.arange(3).reshape(1, 3, 1))[0, :, 0].tolist()
            [2, 1, 0]
    """
    kind = _kind(img, "hflip")
    return {"pil": F_pil.hflip, "tensor": F_t.hflip, "cv2": F_cv2.hflip}[kind](img)


def vflip(img):
    """Flip an image top to bottom.

    Args:
        img (PIL.Image|np.ndarray|Tensor): the image.

    Returns:
        The flipped image.

    Examples:
        .. code-block:: python

            >>> import fw.vision.transforms.functional as F
            >>> import numpy as np
            >>> F.vflip(np.arange(3).reshape(3, 1, 1))[:, 0, 0].tolist()
            [2, 1, 0]
    """
    kind = _kind(img, "vflip")
    return {"pil": F_pil.vflip, "tensor": F_t.vflip, "cv2": F_cv2.vflip}[kind](img)


def _check_factor(value, fn: str, arg: str) -> float:
    if not isinstance(value, numbers.Number) or isinstance(value, bool):
        raise TypeError(f"{fn}: '{arg}' must be a number, got {value!r}")
    if value < 0:
        raise ValueError(f"{fn}: '{arg}' must be non-negative, got {value}")
    return float(value)


def _check_tensor_channels(img, fn: str) -> None:
    if img.shape[-3] not in (1, 3):
        raise ValueError(f"{fn}: a tensor image must have 1 or 3 channels (CHW), got shape "
                         f"{list(img.shape)}")


def _check_uint8(img, fn: str) -> None:
    if img.dtype != np.uint8:
        raise TypeError(f"{fn}: NumPy images must be uint8 (Paddle's cv2 backend works on "
                        f"8-bit lookup tables / HSV), got {img.dtype}")


def adjust_brightness(img, brightness_factor: float):
    """Scale the brightness: 0 gives black, 1 the original image.

    Args:
        img (PIL.Image|np.ndarray|Tensor): the image (NumPy arrays are cast to uint8).
        brightness_factor (float): non-negative factor.

    Returns:
        The adjusted image.

    Examples:
        .. code-block:: python

            >>> import fw.vision.transforms.functional as F
            >>> import numpy as np
            >>> F.adjust_brightness(np.full((1, 1, 3), 100, np.uint8), 1.5)[0, 0].tolist()
            [150, 150, 150]
    """
    kind = _kind(img, "adjust_brightness")
    f = _check_factor(brightness_factor, "adjust_brightness", "brightness_factor")
    if kind == "pil":
        return F_pil.adjust_brightness(img, f)
    if kind == "cv2":
        return F_cv2.adjust_brightness(img, f)
    _check_tensor_channels(img, "adjust_brightness")
    return F_t.adjust_brightness(img, f)


def adjust_contrast(img, contrast_factor: float):
    """Scale the contrast: 0 gives a flat grey image, 1 the original image.

    NumPy images (uint8) pivot on grey level 74 like Paddle's cv2 backend; PIL and tensor
    images pivot on the mean grey value.

    Args:
        img (PIL.Image|np.ndarray|Tensor): the image.
        contrast_factor (float): non-negative factor.

    Returns:
        The adjusted image.

    Examples:
        .. code-block:: python

            >>> import fw.vision.transforms.functional as F
            >>> import numpy as np
            >>> F.adjust_contrast(np.full((1, 1, 3), 84, np.uint8), 2.0)[0, 0].tolist()
            [94, 94, 94]
    """
    kind = _kind(img, "adjust_contrast")
    f = _check_factor(contrast_factor, "adjust_contrast", "contrast_factor")
    if kind == "pil":
        return F_pil.adjust_contrast(img, f)
    if kind == "cv2":
        _check_uint8(img, "adjust_contrast")
        return F_cv2.adjust_contrast(img, f)
    _check_tensor_channels(img, "adjust_contrast")
    return F_t.adjust_contrast(img, f)


def adjust_saturation(img, saturation_factor: float):
    """Scale the colour saturation: 0 gives a grey image, 1 the original image.

    Args:
        img (PIL.Image|np.ndarray|Tensor): the image.
        saturation_factor (float): non-negative factor.

    Returns:
        The adjusted image.

    Examples:
        .. code-block:: python

            >>> import fw.vision.transforms.functional as F
            >>> import numpy as np
            >>> img = np.array([[[200, 100, 50]]], np.uint8)
            >>> F.adjust_saturation(img, 0.0)[0, 0].tolist()
            [96, 96, 96]
    """
    kind = _kind(img, "adjust_saturation")
    f = _check_factor(saturation_factor, "adjust_saturation", "saturation_factor")
    if kind == "pil":
        return F_pil.adjust_saturation(img, f)
    if kind == "cv2":
        return F_cv2.adjust_saturation(img, f)
    _check_tensor_channels(img, "adjust_saturation")
    return F_t.adjust_saturation(img, f)


def adjust_hue(img, hue_factor: float):
    """Shift the hue by `hue_factor` of a full turn.

    Args:
        img (PIL.Image|np.ndarray|Tensor): the image (RGB; NumPy arrays uint8).
        hue_factor (float): in [-0.5, 0.5].

    Returns:
        The adjusted image.

    Examples:
        .. code-block:: python

            >>> import fw.vision.transforms.functional as F
            >>> import numpy as np
            >>> F.adjust_hue(np.full((2, 2, 3), 7, np.uint8), 0.3)[0, 0].tolist()
            [7, 7, 7]
    """
    kind = _kind(img, "adjust_hue")
    if not isinstance(hue_factor, numbers.Number) or not -0.5 <= hue_factor <= 0.5:
        raise ValueError(f"adjust_hue: 'hue_factor' must be a number in [-0.5, 0.5], got "
                         f"{hue_factor!r}")
    if kind == "pil":
        return F_pil.adjust_hue(img, hue_factor)
    if kind == "cv2":
        _check_uint8(img, "adjust_hue")
        return F_cv2.adjust_hue(img, hue_factor)
    _check_tensor_channels(img, "adjust_hue")
    return F_t.adjust_hue(img, hue_factor)


def _get_affine_matrix(center, angle, translate, scale, shear) -> list[float]:
    """The inverse affine matrix (output -> input) of rotation about `center` by `angle`
    degrees, shear, scale and translation — the form PIL's ``Image.transform`` and
    Paddle's tensor grid take (the same algebra as Paddle's and torchvision's)."""
    rot = math.radians(angle)
    sx, sy = math.radians(shear[0]), math.radians(shear[1])
    a = math.cos(rot - sy) / math.cos(sy)
    b = -math.cos(rot - sy) * math.tan(sx) / math.cos(sy) - math.sin(rot)
    c = math.sin(rot - sy) / math.cos(sy)
    d = -math.sin(rot - sy) * math.tan(sx) / math.cos(sy) + math.cos(rot)
    cx, cy = center
    tx, ty = translate
    m = [d / scale, -b / scale, 0.0, -c / scale, a / scale, 0.0]
    m[2] += m[0] * (-cx - tx) + m[1] * (-cy - ty) + cx
    m[5] += m[3] * (-cx - tx) + m[4] * (-cy - ty) + cy
    return m


def _warp_interp(interpolation, kind: str, fn: str) -> str:
    allowed = ("nearest", "bilinear", "bicubic") if kind != "tensor" else (
        "nearest", "bilinear")
    if not isinstance(interpolation, str) or interpolation not in allowed:
        raise ValueError(f"{fn}: 'interpolation' must be one of {list(allowed)} for "
                         f"{'PIL' if kind == 'pil' else kind} images, got {interpolation!r}")
    return interpolation


def affine(img, angle, translate, scale, shear, interpolation: str = "nearest", fill=0,
           center=None):
    """Rotate (clockwise, degrees) about `center`, scale, shear and translate an image,
    keeping its size. Every backend makes the same geometry (Paddle's NumPy backend
    does not: see `functional_cv2`).

    Args:
        img (PIL.Image|np.ndarray|Tensor): the image.
        angle (float): rotation in degrees, clockwise.
        translate (list|tuple): (tx, ty) in pixels.
        scale (float): positive scale.
        shear (float|list|tuple): shear angle(s) in degrees, (x, y) or one number for x.
        interpolation (str, optional): "nearest" (default), "bilinear", "bicubic" (not
            for tensors).
        fill (int|list|tuple, optional): the value outside the source image.
        center (list|tuple, optional): (x, y) of the rotation; the image centre by default.

    Returns:
        The transformed image.

    Examples:
        .. code-block:: python

            >>> import fw.vision.transforms.functional as F
            >>> import numpy as np
            >>> img = np.arange(9, dtype=np.uint8).reshape(3, 3, 1)
            >>> F.affine(img, 0, (1, 0), 1.0, 0)[:, :, 0].tolist()
            [[0, 0, 1], [0, 3, 4], [0, 6, 7]]
    """
    kind = _kind(img, "affine")
    if not isinstance(angle, numbers.Number):
        raise TypeError(f"affine: 'angle' should be int or float, got {angle!r}")
    if not isinstance(translate, (list, tuple)) or len(translate) != 2:
        raise ValueError(f"affine: 'translate' should be a sequence of length 2, got "
                         f"{translate!r}")
    if not isinstance(scale, numbers.Number) or scale <= 0:
        raise ValueError(f"affine: 'scale' should be positive, got {scale!r}")
    if isinstance(shear, numbers.Number):
        shear = [shear, 0.0]
    if not isinstance(shear, (list, tuple)) or len(shear) not in (1, 2):
        raise ValueError(f"affine: 'shear' should be a number or a sequence of 1 or 2 "
                         f"numbers, got {shear!r}")
    shear = [shear[0], shear[0]] if len(shear) == 1 else list(shear)
    if center is not None and not (isinstance(center, (list, tuple)) and len(center) == 2):
        raise TypeError(f"affine: 'center' should be a sequence (x, y), got {center!r}")
    _warp_interp(interpolation, kind, "affine")
    _check_fill(fill, "affine")
    angle = float(angle)
    if kind in ("pil", "cv2"):
        w, h = img.size if kind == "pil" else (img.shape[1], img.shape[0])
        c = [w * 0.5, h * 0.5] if center is None else center
        m = _get_affine_matrix(c, angle, translate, scale, shear)
        if kind == "pil":
            return F_pil.affine(img, m, interpolation, fill)
        return F_cv2.affine(img, m, interpolation, fill)
    cf = [0.0, 0.0]
    if center is not None:
        w, h = F_t.image_size(img)
        cf = [1.0 * (c - s * 0.5) for c, s in zip(center, [w, h])]
    m = _get_affine_matrix(cf, angle, [1.0 * t for t in translate], scale, shear)
    return F_t.affine(img, m, interpolation, fill)


def rotate(img, angle, interpolation: str = "nearest", expand: bool = False, center=None,
           fill=0):
    """Rotate an image counter-clockwise by `angle` degrees.

    Args:
        img (PIL.Image|np.ndarray|Tensor): the image.
        angle (float): degrees, counter-clockwise.
        interpolation (str, optional): "nearest" (default), "bilinear", "bicubic" (not
            for tensors).
        expand (bool, optional): grow the output to hold the whole rotated image.
        center (list|tuple, optional): (x, y) of the rotation; the centre by default.
        fill (int|list|tuple, optional): the value outside the source image.

    Returns:
        The rotated image.

    Examples:
        .. code-block:: python

            >>> import fw.vision.transforms.functional as F
            >>> import numpy as np
            >>> F.rotate(np.zeros((4, 6, 3), np.uint8), 90, expand=True).shape
            (6, 4, 3)
    """
    kind = _kind(img, "rotate")
    if not isinstance(angle, numbers.Number):
        raise TypeError(f"rotate: 'angle' should be int or float, got {angle!r}")
    _warp_interp(interpolation, kind, "rotate")
    _check_fill(fill, "rotate")
    if center is not None and not (isinstance(center, (list, tuple)) and len(center) == 2):
        raise TypeError(f"rotate: 'center' should be a sequence (x, y), got {center!r}")
    center = tuple(center) if center is not None else None
    fill = tuple(fill) if isinstance(fill, list) else fill
    if kind == "pil":
        return F_pil.rotate(img, angle, interpolation, expand, center, fill)
    if kind == "tensor":
        return F_t.rotate(img, angle, interpolation, expand, center, fill)
    return F_cv2.rotate(img, angle, interpolation, expand, center, fill)


def _get_perspective_coeffs(startpoints, endpoints) -> list[float]:
    """The 8 coefficients of the homography taking `endpoints` to `startpoints` (the
    output -> input map PIL's PERSPECTIVE transform takes), by least squares."""
    a = np.zeros((8, 8))
    for i, (p1, p2) in enumerate(zip(endpoints, startpoints)):
        a[2 * i] = [p1[0], p1[1], 1, 0, 0, 0, -p2[0] * p1[0], -p2[0] * p1[1]]
        a[2 * i + 1] = [0, 0, 0, p1[0], p1[1], 1, -p2[1] * p1[0], -p2[1] * p1[1]]
    b = np.array(startpoints, dtype=np.float64).reshape(8)
    return list(np.linalg.lstsq(a, b, rcond=None)[0])


def _check_points(points, fn: str, arg: str) -> None:
    arr = np.asarray(points, dtype=object)
    if arr.shape != (4, 2):
        raise ValueError(f"{fn}: '{arg}' must be 4 points [x, y], got {points!r}")


def perspective(img, startpoints, endpoints, interpolation: str = "nearest", fill=0):
    """Warp an image so that the four `startpoints` move to the four `endpoints`.

    Args:
        img (PIL.Image|np.ndarray|Tensor): the image.
        startpoints (list): [top-left, top-right, bottom-right, bottom-left] of the input,
            each [x, y].
        endpoints (list): where those corners go.
        interpolation (str, optional): "nearest" (default), "bilinear", "bicubic" (not
            for tensors).
        fill (int|list|tuple, optional): the value outside the source image.

    Returns:
        The warped image.

    Examples:
        .. code-block:: python

            >>> import fw.vision.transforms.functional as F
            >>> import numpy as np
            >>> pts = [[0, 0], [4, 0], [4, 4], [0, 4]]
            >>> img = np.arange(25, dtype=np.uint8).reshape(5, 5, 1)
            >>> bool((F.perspective(img, pts, pts) == img).all())
            True
    """
    kind = _kind(img, "perspective")
    _check_points(startpoints, "perspective", "startpoints")
    _check_points(endpoints, "perspective", "endpoints")
    _warp_interp(interpolation, kind, "perspective")
    _check_fill(fill, "perspective")
    if kind == "cv2":
        return F_cv2.perspective(img, startpoints, endpoints, interpolation, fill)
    coeffs = _get_perspective_coeffs(startpoints, endpoints)
    if kind == "pil":
        return F_pil.perspective(img, coeffs, interpolation, fill)
    return F_t.perspective(img, coeffs, interpolation, fill)


def to_grayscale(img, num_output_channels: int = 1):
    """Convert an RGB image to grey (ITU-R 601 luma).

    Args:
        img (PIL.Image|np.ndarray|Tensor): an RGB image.
        num_output_channels (int, optional): 1 (default) or 3 (the grey value repeated).

    Returns:
        The grey image.

    Examples:
        .. code-block:: python

            >>> import fw.vision.transforms.functional as F
            >>> import numpy as np
            >>> F.to_grayscale(np.array([[[255, 0, 0]]], np.uint8))[0, 0].tolist()
            [76]
    """
    kind = _kind(img, "to_grayscale")
    if num_output_channels not in (1, 3):
        raise ValueError(f"to_grayscale: 'num_output_channels' should be either 1 or 3, got "
                         f"{num_output_channels!r}")
    if kind == "pil":
        return F_pil.to_grayscale(img, num_output_channels)
    if kind == "tensor":
        if img.shape[-3] != 3:
            raise ValueError(f"to_grayscale: a tensor image must have 3 channels (CHW), got "
                             f"shape {list(img.shape)}")
        return F_t.to_grayscale(img, num_output_channels)
    if img.ndim != 3 or img.shape[2] != 3:
        raise ValueError(f"to_grayscale: a NumPy image must be HWC with 3 channels, got "
                         f"shape {list(img.shape)}")
    return F_cv2.to_grayscale(img, num_output_channels)


def normalize(img, mean, std, data_format: str = "CHW", to_rgb: bool = False):
    """``(img - mean) / std`` per channel.

    Args:
        img (PIL.Image|np.ndarray|Tensor): the image; a PIL image becomes a float32 HWC
            array first.
        mean (list|tuple): per-channel mean.
        std (list|tuple): per-channel standard deviation.
        data_format (str, optional): where the channels are, "CHW" (default) or "HWC".
        to_rgb (bool, optional): reverse the channel order (BGR to RGB) first (arrays).

    Returns:
        np.ndarray|Tensor: the normalised image (float32 for uint8 input).

    Examples:
        .. code-block:: python

            >>> import fw.vision.transforms.functional as F
            >>> import numpy as np
            >>> img = np.full((1, 1, 3), 10, np.uint8)
            >>> F.normalize(img, [5, 5, 5], [5, 5, 5], data_format="HWC").tolist()
            [[[1.0, 1.0, 1.0]]]
    """
    kind = _kind(img, "normalize")
    if data_format not in ("CHW", "HWC"):
        raise ValueError(f"normalize: 'data_format' should be 'CHW' or 'HWC', got "
                         f"{data_format!r}")
    for name, v in (("mean", mean), ("std", std)):
        if not isinstance(v, (numbers.Number, list, tuple, np.ndarray)):
            raise TypeError(f"normalize: '{name}' must be a number or a sequence, got {v!r}")
    if np.any(np.asarray(std, np.float64) == 0):
        raise ValueError(f"normalize: 'std' must be non-zero, got {std!r}")
    if kind == "tensor":
        return F_t.normalize(img, mean, std, data_format)
    if kind == "pil":
        img = np.array(img).astype(np.float32)
    return F_cv2.normalize(img, mean, std, data_format, to_rgb)


def erase(img, i: int, j: int, h: int, w: int, v, inplace: bool = False):
    """Set the box of `h` x `w` pixels at row `i`, column `j` to `v`.

    Args:
        img (PIL.Image|np.ndarray|Tensor): the image (a CHW tensor, a HWC array).
        i (int): first row. j (int): first column.
        h (int): rows. w (int): columns.
        v (number|np.ndarray|Tensor): the value(s), broadcast to the box.
        inplace (bool, optional): write into `img` (arrays and tensors).

    Returns:
        The erased image.

    Examples:
        .. code-block:: python

            >>> import fw.vision.transforms.functional as F
            >>> import numpy as np
            >>> F.erase(np.ones((3, 3, 1)), 1, 1, 1, 1, 0)[:, :, 0].tolist()
            [[1.0, 1.0, 1.0], [1.0, 0.0, 1.0], [1.0, 1.0, 1.0]]
    """
    kind = _kind(img, "erase")
    for name, val in (("i", i), ("j", j), ("h", h), ("w", w)):
        if not isinstance(val, numbers.Integral):
            raise TypeError(f"erase: '{name}' must be an int, got {val!r}")
    if kind == "tensor":
        return F_t.erase(img, i, j, h, w, v, inplace=inplace)
    if kind == "pil":
        return F_pil.erase(img, i, j, h, w, v, inplace=inplace)
    return F_cv2.erase(img, i, j, h, w, v, inplace=inplace)
