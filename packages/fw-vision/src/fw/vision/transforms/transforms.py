"""Transform classes (Paddle's ``paddle.vision.transforms.transforms``): each applies a
`functional` transform to the fields of a sample named by ``keys``.

Random draws use the same generators as Paddle, in the same order, so a program that
seeds them (``random.seed(s)`` and, for `RandomResizedCrop` and `RandomErasing`,
``np.random.seed(s)``) gets Paddle's crops, angles and flips.
"""

from __future__ import annotations

import math
import numbers
import random
from collections.abc import Iterable, Sequence

import numpy as np

from fw.vision.transforms import functional as F

__all__ = [
    "BaseTransform", "Compose", "Resize", "RandomResizedCrop", "CenterCrop",
    "RandomHorizontalFlip", "RandomVerticalFlip", "Transpose", "Normalize",
    "BrightnessTransform", "SaturationTransform", "ContrastTransform", "HueTransform",
    "ColorJitter", "RandomCrop", "Pad", "RandomAffine", "RandomRotation",
    "RandomPerspective", "Grayscale", "ToTensor", "RandomErasing",
]


def _get_image_size(img) -> tuple[int, int]:
    """(width, height) of a PIL image, HWC array or CHW/NCHW tensor."""
    if F._is_pil_image(img):
        return img.size
    if F._is_numpy_image(img):
        return img.shape[1], img.shape[0]
    if F._is_tensor_image(img):
        if len(img.shape) in (3, 4):
            return img.shape[-1], img.shape[-2]
        raise ValueError(f"the image tensor should be 3-D or 4-D, got shape "
                         f"{list(img.shape)}")
    raise TypeError(f"unexpected image type {type(img).__name__}")


def _check_input(value, name, center=1.0, bound=(0, float("inf")),
                 clip_first_on_zero=True):
    """A factor range [lo, hi] from one number (center -/+ value) or a pair; None when
    it is the identity."""
    if isinstance(value, numbers.Number) and not isinstance(value, bool):
        if value < 0:
            raise ValueError(f"{name}: if it is a single number it must be non-negative, "
                             f"got {value}")
        value = [center - value, center + value]
        if clip_first_on_zero:
            value[0] = max(value[0], 0)
        if not bound[0] <= value[0] <= value[1] <= bound[1]:
            # Paddle lets e.g. HueTransform(0.8) through and fails on the first call
            raise ValueError(f"{name}: values should be between {bound}, got the range "
                             f"{value}")
    elif isinstance(value, (tuple, list)) and len(value) == 2:
        if not bound[0] <= value[0] <= value[1] <= bound[1]:
            raise ValueError(f"{name}: values should be between {bound} and ordered, got "
                             f"{value}")
        value = list(value)
    else:
        raise TypeError(f"{name}: should be a single number or a list/tuple with length 2, "
                        f"got {value!r}")
    if value[0] == value[1] == center:
        return None
    return value


class Compose:
    """Apply transforms one after the other.

    Args:
        transforms (list): callables, each taking and returning a sample.

    Returns:
        A callable transform.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> import numpy as np
            >>> from fw.vision.transforms import CenterCrop, Compose, Resize
            >>> t = Compose([Resize(8), CenterCrop(4)])
            >>> t(np.zeros((16, 20, 3), np.uint8)).shape
            (4, 4, 3)
    """

    def __init__(self, transforms):
        if not isinstance(transforms, Sequence) or not all(callable(t) for t in transforms):
            raise TypeError(f"Compose: 'transforms' must be a sequence of callables, got "
                            f"{transforms!r}")
        self.transforms = transforms

    def __call__(self, data):
        for f in self.transforms:
            try:
                data = f(data)
            except Exception as e:
                # name the failing step, as Paddle does (it prints the traceback)
                e.add_note(f"Compose: in transform {f!r}")
                raise
        return data

    def __repr__(self) -> str:
        inner = "".join(f"\n    {t}" for t in self.transforms)
        return f"{type(self).__name__}({inner}\n)"


class BaseTransform:
    """Base of the transform classes: calls ``_apply_<key>`` on each field of a sample.

    A sample is one object or a tuple; its i-th field is handled by ``_apply_<keys[i]>``
    (``keys`` defaults to ``("image",)``); fields past ``len(keys)`` pass through.
    ``_get_params(inputs)`` runs once per call, before the fields, and its result is
    ``self.params`` (so e.g. an image and its mask get the same random crop).

    Args:
        keys (list|tuple, optional): field names, from "image", "coords", "boxes",
            "mask" (any name with an ``_apply_<name>`` method).

    Returns:
        A callable: an image (or a tuple of fields, see ``keys``) in, the transformed
        image out, of the same kind (NumPy, PIL or Tensor) unless the class converts.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> import numpy as np
            >>> from fw.vision.transforms import BaseTransform
            >>> class AddOne(BaseTransform):
            ...     def _apply_image(self, image):
            ...         return image + 1
            >>> AddOne()((np.zeros(2), 5))  # fields past `keys` pass through
            (array([1., 1.]), 5)
    """

    def __init__(self, keys=None):
        if keys is None:
            keys = ("image",)
        elif not isinstance(keys, Sequence) or isinstance(keys, str):
            raise ValueError(f"{type(self).__name__}: 'keys' should be a sequence, got "
                             f"keys={keys!r}")
        for k in keys:
            if self._get_apply(k) is None:
                raise NotImplementedError(f"{type(self).__name__}: key {k!r} is an "
                                          f"unsupported data structure")
        self.keys = keys
        self.params = None

    def _get_params(self, inputs):
        return None

    def __call__(self, inputs):
        if not isinstance(inputs, tuple):
            inputs = (inputs,)
        self.params = self._get_params(inputs)
        outputs = []
        for i in range(min(len(inputs), len(self.keys))):
            apply_func = self._get_apply(self.keys[i])
            outputs.append(inputs[i] if apply_func is None else apply_func(inputs[i]))
        if len(inputs) > len(self.keys):
            outputs.extend(inputs[len(self.keys):])
        return outputs[0] if len(outputs) == 1 else tuple(outputs)

    def _get_apply(self, key):
        return getattr(self, f"_apply_{key}", None)

    def _apply_image(self, image):
        raise NotImplementedError(f"{type(self).__name__} does not transform 'image' fields")

    def _apply_boxes(self, boxes):
        raise NotImplementedError(f"{type(self).__name__} does not transform 'boxes' fields")

    def _apply_mask(self, mask):
        raise NotImplementedError(f"{type(self).__name__} does not transform 'mask' fields")

    def _apply_coords(self, coords):
        raise NotImplementedError(f"{type(self).__name__} does not transform 'coords' fields")

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class ToTensor(BaseTransform):
    """Convert a PIL image or HWC array to a Tensor (uint8 scaled to [0, 1]).

    Args:
        data_format (str, optional): "CHW" (default) or "HWC".
        keys (list|tuple, optional): see `BaseTransform`.

    Returns:
        A callable: an image (or a tuple of fields, see ``keys``) in, the transformed
        image out, of the same kind (NumPy, PIL or Tensor) unless the class converts.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> import numpy as np
            >>> from fw.vision.transforms import ToTensor
            >>> ToTensor()(np.zeros((4, 5, 3), np.uint8)).shape
            [3, 4, 5]
    """

    def __init__(self, data_format="CHW", keys=None):
        super().__init__(keys)
        if data_format not in ("CHW", "HWC"):
            raise ValueError(f"ToTensor: 'data_format' should be 'CHW' or 'HWC', got "
                             f"{data_format!r}")
        self.data_format = data_format

    def _apply_image(self, img):
        return F.to_tensor(img, self.data_format)


class Resize(BaseTransform):
    """Resize to `size` (see `functional.resize`).

    Args:
        size (int|list|tuple): (h, w), or the length of the shorter side.
        interpolation (str, optional): "bilinear" (default), "nearest", "bicubic", ….
        keys (list|tuple, optional): see `BaseTransform`.

    Returns:
        A callable: an image (or a tuple of fields, see ``keys``) in, the transformed
        image out, of the same kind (NumPy, PIL or Tensor) unless the class converts.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> import numpy as np
            >>> from fw.vision.transforms import Resize
            >>> Resize((3, 5))(np.zeros((6, 6, 3), np.uint8)).shape
            (3, 5, 3)
    """

    def __init__(self, size, interpolation="bilinear", keys=None):
        super().__init__(keys)
        if not ((isinstance(size, int) and size > 0) or (
                isinstance(size, Iterable) and len(size) == 2)):
            raise ValueError(f"Resize: 'size' should be a positive int or a sequence (h, w), "
                             f"got {size!r}")
        self.size = size
        self.interpolation = interpolation

    def _apply_image(self, img):
        return F.resize(img, self.size, self.interpolation)


def _check_range(v, fn: str, arg: str):
    if not (isinstance(v, Sequence) and len(v) == 2 and v[0] <= v[1]):
        raise ValueError(f"{fn}: '{arg}' should be of kind (min, max), got {v!r}")


class RandomResizedCrop(BaseTransform):
    """Crop a random area (fraction `scale` of the image, aspect ratio in `ratio`) and
    resize it to `size`. Draws: ``np.random`` for area and ratio, ``random`` for the
    position (as Paddle does).

    Args:
        size (int|list|tuple): output (h, w).
        scale (list|tuple, optional): area fraction range, default (0.08, 1.0).
        ratio (list|tuple, optional): aspect ratio range, default (3/4, 4/3).
        interpolation (str, optional): default "bilinear".
        keys (list|tuple, optional): see `BaseTransform`.

    Returns:
        A callable: an image (or a tuple of fields, see ``keys``) in, the transformed
        image out, of the same kind (NumPy, PIL or Tensor) unless the class converts.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> import numpy as np
            >>> from fw.vision.transforms import RandomResizedCrop
            >>> RandomResizedCrop(8)(np.zeros((20, 30, 3), np.uint8)).shape
            (8, 8, 3)
    """

    def __init__(self, size, scale=(0.08, 1.0), ratio=(3.0 / 4, 4.0 / 3),
                 interpolation="bilinear", keys=None):
        super().__init__(keys)
        self.size = (size, size) if isinstance(size, int) else size
        _check_range(scale, "RandomResizedCrop", "scale")
        _check_range(ratio, "RandomResizedCrop", "ratio")
        if ratio[0] <= 0:
            raise ValueError(f"RandomResizedCrop: 'ratio' must be positive, got {ratio!r}")
        self.scale = scale
        self.ratio = ratio
        self.interpolation = interpolation

    def _dynamic_get_param(self, image, attempts=10):
        width, height = _get_image_size(image)
        area = height * width
        for _ in range(attempts):
            target_area = np.random.uniform(*self.scale) * area
            log_ratio = tuple(math.log(x) for x in self.ratio)
            aspect_ratio = math.exp(np.random.uniform(*log_ratio))
            w = int(round(math.sqrt(target_area * aspect_ratio)))
            h = int(round(math.sqrt(target_area / aspect_ratio)))
            if 0 < w <= width and 0 < h <= height:
                i = random.randint(0, height - h)
                j = random.randint(0, width - w)
                return i, j, h, w
        # fallback: the central crop of the closest allowed ratio
        in_ratio = float(width) / float(height)
        if in_ratio < min(self.ratio):
            w = width
            h = int(round(w / min(self.ratio)))
        elif in_ratio > max(self.ratio):
            h = height
            w = int(round(h * max(self.ratio)))
        else:
            w, h = width, height
        return (height - h) // 2, (width - w) // 2, h, w

    def _apply_image(self, img):
        i, j, h, w = self._dynamic_get_param(img)
        return F.resize(F.crop(img, i, j, h, w), self.size, self.interpolation)


class CenterCrop(BaseTransform):
    """Crop the centre.

    Args:
        size (int|list|tuple): (h, w) of the crop, or one int for a square.
        keys (list|tuple, optional): see `BaseTransform`.

    Returns:
        A callable: an image (or a tuple of fields, see ``keys``) in, the transformed
        image out, of the same kind (NumPy, PIL or Tensor) unless the class converts.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> import numpy as np
            >>> from fw.vision.transforms import CenterCrop
            >>> CenterCrop(2)(np.zeros((4, 5, 3), np.uint8)).shape
            (2, 2, 3)
    """

    def __init__(self, size, keys=None):
        super().__init__(keys)
        self.size = (int(size), int(size)) if isinstance(size, numbers.Number) else size

    def _apply_image(self, img):
        return F.center_crop(img, self.size)


def _check_prob(prob, fn: str):
    if not isinstance(prob, numbers.Number) or not 0 <= prob <= 1:
        raise ValueError(f"{fn}: 'prob' must be between 0 and 1, got {prob!r}")


class RandomHorizontalFlip(BaseTransform):
    """Flip left-right with probability `prob` (one ``random.random()`` draw per call).

    Args:
        prob (float, optional): default 0.5.
        keys (list|tuple, optional): see `BaseTransform`.

    Returns:
        A callable: an image (or a tuple of fields, see ``keys``) in, the transformed
        image out, of the same kind (NumPy, PIL or Tensor) unless the class converts.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> import numpy as np
            >>> from fw.vision.transforms import RandomHorizontalFlip
            >>> RandomHorizontalFlip(1.0)(np.arange(3).reshape(1, 3, 1))[0, :, 0].tolist()
            [2, 1, 0]
    """

    def __init__(self, prob=0.5, keys=None):
        super().__init__(keys)
        _check_prob(prob, "RandomHorizontalFlip")
        self.prob = prob

    def _apply_image(self, img):
        if random.random() < self.prob:
            return F.hflip(img)
        return img


class RandomVerticalFlip(BaseTransform):
    """Flip top-bottom with probability `prob` (one ``random.random()`` draw per call).

    Args:
        prob (float, optional): default 0.5.
        keys (list|tuple, optional): see `BaseTransform`.

    Returns:
        A callable: an image (or a tuple of fields, see ``keys``) in, the transformed
        image out, of the same kind (NumPy, PIL or Tensor) unless the class converts.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> import numpy as np
            >>> from fw.vision.transforms import RandomVerticalFlip
            >>> RandomVerticalFlip(1.0)(np.arange(3).reshape(3, 1, 1))[:, 0, 0].tolist()
            [2, 1, 0]
    """

    def __init__(self, prob=0.5, keys=None):
        super().__init__(keys)
        _check_prob(prob, "RandomVerticalFlip")
        self.prob = prob

    def _apply_image(self, img):
        if random.random() < self.prob:
            return F.vflip(img)
        return img


class Normalize(BaseTransform):
    """``(img - mean) / std`` per channel (see `functional.normalize`).

    Args:
        mean (float|list|tuple, optional): default 0.0.
        std (float|list|tuple, optional): default 1.0.
        data_format (str, optional): "CHW" (default) or "HWC".
        to_rgb (bool, optional): reverse BGR to RGB first.
        keys (list|tuple, optional): see `BaseTransform`.

    Returns:
        A callable: an image (or a tuple of fields, see ``keys``) in, the transformed
        image out, of the same kind (NumPy, PIL or Tensor) unless the class converts.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> import numpy as np
            >>> from fw.vision.transforms import Normalize
            >>> Normalize(127.5, 127.5)(np.full((3, 1, 1), 255.0)).ravel().tolist()
            [1.0, 1.0, 1.0]
    """

    def __init__(self, mean=0.0, std=1.0, data_format="CHW", to_rgb=False, keys=None):
        super().__init__(keys)
        if isinstance(mean, numbers.Number):
            mean = [mean, mean, mean]
        if isinstance(std, numbers.Number):
            std = [std, std, std]
        self.mean = mean
        self.std = std
        self.data_format = data_format
        self.to_rgb = to_rgb

    def _apply_image(self, img):
        return F.normalize(img, self.mean, self.std, self.data_format, self.to_rgb)


class Transpose(BaseTransform):
    """Permute the axes of an image (HWC to CHW by default); PIL images become arrays and
    2-D arrays get a channel axis first.

    Args:
        order (list|tuple, optional): the permutation, default (2, 0, 1).
        keys (list|tuple, optional): see `BaseTransform`.

    Returns:
        A callable: an image (or a tuple of fields, see ``keys``) in, the transformed
        image out, of the same kind (NumPy, PIL or Tensor) unless the class converts.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> import numpy as np
            >>> from fw.vision.transforms import Transpose
            >>> Transpose()(np.zeros((4, 5, 3))).shape
            (3, 4, 5)
    """

    def __init__(self, order=(2, 0, 1), keys=None):
        super().__init__(keys)
        self.order = order

    def _apply_image(self, img):
        if F._is_tensor_image(img):
            return img.transpose(list(self.order))
        if F._is_pil_image(img):
            img = np.asarray(img)
        if not isinstance(img, np.ndarray):
            raise TypeError(f"Transpose: expected a PIL image, ndarray or Tensor, got "
                            f"{type(img).__name__}")
        if img.ndim == 2:
            img = img[..., np.newaxis]
        if sorted(self.order) != list(range(img.ndim)):
            raise ValueError(f"Transpose: 'order' {tuple(self.order)} is not a permutation "
                             f"of the {img.ndim} axes of shape {list(img.shape)}")
        return img.transpose(self.order)


class BrightnessTransform(BaseTransform):
    """Random brightness: factor drawn with ``random.uniform`` from
    ``[max(0, 1 - value), 1 + value]``.

    Args:
        value (float): how much to jitter; 0 leaves the image alone.
        keys (list|tuple, optional): see `BaseTransform`.

    Returns:
        A callable: an image (or a tuple of fields, see ``keys``) in, the transformed
        image out, of the same kind (NumPy, PIL or Tensor) unless the class converts.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> import numpy as np
            >>> from fw.vision.transforms import BrightnessTransform
            >>> BrightnessTransform(0.4)(np.zeros((2, 2, 3), np.uint8)).shape
            (2, 2, 3)
    """

    def __init__(self, value, keys=None):
        super().__init__(keys)
        self.value = _check_input(value, "BrightnessTransform")

    def _apply_image(self, img):
        if self.value is None:
            return img
        return F.adjust_brightness(img, random.uniform(self.value[0], self.value[1]))


class ContrastTransform(BaseTransform):
    """Random contrast: factor drawn with ``random.uniform`` from
    ``[max(0, 1 - value), 1 + value]``.

    Args:
        value (float): non-negative; 0 leaves the image alone.
        keys (list|tuple, optional): see `BaseTransform`.

    Returns:
        A callable: an image (or a tuple of fields, see ``keys``) in, the transformed
        image out, of the same kind (NumPy, PIL or Tensor) unless the class converts.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> import numpy as np
            >>> from fw.vision.transforms import ContrastTransform
            >>> ContrastTransform(0.4)(np.zeros((2, 2, 3), np.uint8)).shape
            (2, 2, 3)
    """

    def __init__(self, value, keys=None):
        super().__init__(keys)
        if isinstance(value, numbers.Number) and value < 0:
            raise ValueError(f"ContrastTransform: 'value' should be non-negative, got {value}")
        self.value = _check_input(value, "ContrastTransform")

    def _apply_image(self, img):
        if self.value is None:
            return img
        return F.adjust_contrast(img, random.uniform(self.value[0], self.value[1]))


class SaturationTransform(BaseTransform):
    """Random saturation: factor drawn with ``random.uniform`` from
    ``[max(0, 1 - value), 1 + value]``.

    Args:
        value (float): non-negative; 0 leaves the image alone.
        keys (list|tuple, optional): see `BaseTransform`.

    Returns:
        A callable: an image (or a tuple of fields, see ``keys``) in, the transformed
        image out, of the same kind (NumPy, PIL or Tensor) unless the class converts.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> import numpy as np
            >>> from fw.vision.transforms import SaturationTransform
            >>> SaturationTransform(0.4)(np.zeros((2, 2, 3), np.uint8)).shape
            (2, 2, 3)
    """

    def __init__(self, value, keys=None):
        super().__init__(keys)
        self.value = _check_input(value, "SaturationTransform")

    def _apply_image(self, img):
        if self.value is None:
            return img
        return F.adjust_saturation(img, random.uniform(self.value[0], self.value[1]))


class HueTransform(BaseTransform):
    """Random hue shift drawn with ``random.uniform`` from ``[-value, value]``.

    Args:
        value (float): in [0, 0.5]; 0 leaves the image alone.
        keys (list|tuple, optional): see `BaseTransform`.

    Returns:
        A callable: an image (or a tuple of fields, see ``keys``) in, the transformed
        image out, of the same kind (NumPy, PIL or Tensor) unless the class converts.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> import numpy as np
            >>> from fw.vision.transforms import HueTransform
            >>> HueTransform(0.4)(np.zeros((2, 2, 3), np.uint8)).shape
            (2, 2, 3)
    """

    def __init__(self, value, keys=None):
        super().__init__(keys)
        self.value = _check_input(value, "HueTransform", center=0, bound=(-0.5, 0.5),
                                  clip_first_on_zero=False)

    def _apply_image(self, img):
        if self.value is None:
            return img
        return F.adjust_hue(img, random.uniform(self.value[0], self.value[1]))


class ColorJitter(BaseTransform):
    """Random brightness, contrast, saturation and hue, in an order shuffled with
    ``random.shuffle`` on every call.

    Args:
        brightness (float, optional): see `BrightnessTransform`; default 0.
        contrast (float, optional): see `ContrastTransform`; default 0.
        saturation (float, optional): see `SaturationTransform`; default 0.
        hue (float, optional): see `HueTransform`; default 0.
        keys (list|tuple, optional): see `BaseTransform`.

    Returns:
        A callable: an image (or a tuple of fields, see ``keys``) in, the transformed
        image out, of the same kind (NumPy, PIL or Tensor) unless the class converts.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> import numpy as np
            >>> from fw.vision.transforms import ColorJitter
            >>> ColorJitter(0.4, 0.4, 0.4, 0.1)(np.zeros((2, 2, 3), np.uint8)).shape
            (2, 2, 3)
    """

    def __init__(self, brightness=0, contrast=0, saturation=0, hue=0, keys=None):
        super().__init__(keys)
        # validate now (Paddle only notices bad values on the first call)
        _check_input(brightness, "ColorJitter brightness")
        _check_input(contrast, "ColorJitter contrast")
        _check_input(saturation, "ColorJitter saturation")
        _check_input(hue, "ColorJitter hue", center=0, bound=(-0.5, 0.5),
                     clip_first_on_zero=False)
        self.brightness = brightness
        self.contrast = contrast
        self.saturation = saturation
        self.hue = hue

    def _get_param(self, brightness, contrast, saturation, hue):
        transforms = []
        if brightness is not None:
            transforms.append(BrightnessTransform(brightness, self.keys))
        if contrast is not None:
            transforms.append(ContrastTransform(contrast, self.keys))
        if saturation is not None:
            transforms.append(SaturationTransform(saturation, self.keys))
        if hue is not None:
            transforms.append(HueTransform(hue, self.keys))
        random.shuffle(transforms)
        return Compose(transforms)

    def _apply_image(self, img):
        return self._get_param(self.brightness, self.contrast, self.saturation, self.hue)(img)


class RandomCrop(BaseTransform):
    """Crop at a random position (``random.randint``), after optional padding.

    Args:
        size (int|list|tuple): (h, w) of the crop.
        padding (int|list|tuple, optional): padding applied first (see `Pad`).
        pad_if_needed (bool, optional): pad an image smaller than `size`.
        fill (int|list|tuple, optional): constant padding value.
        padding_mode (str, optional): "constant" (default), "edge", "reflect",
            "symmetric".
        keys (list|tuple, optional): see `BaseTransform`.

    Returns:
        A callable: an image (or a tuple of fields, see ``keys``) in, the transformed
        image out, of the same kind (NumPy, PIL or Tensor) unless the class converts.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> import numpy as np
            >>> from fw.vision.transforms import RandomCrop
            >>> RandomCrop(4, pad_if_needed=True)(np.zeros((3, 6, 3), np.uint8)).shape
            (4, 4, 3)
    """

    def __init__(self, size, padding=None, pad_if_needed=False, fill=0,
                 padding_mode="constant", keys=None):
        super().__init__(keys)
        self.size = (int(size), int(size)) if isinstance(size, numbers.Number) else size
        self.padding = padding
        self.pad_if_needed = pad_if_needed
        self.fill = fill
        self.padding_mode = padding_mode

    def _get_param(self, img, output_size):
        w, h = _get_image_size(img)
        th, tw = output_size
        if w == tw and h == th:
            return 0, 0, h, w
        if th > h or tw > w:
            raise ValueError(f"RandomCrop: crop size {tuple(output_size)} is larger than the "
                             f"image ({h}, {w}); set pad_if_needed=True or padding")
        return random.randint(0, h - th), random.randint(0, w - tw), th, tw

    def _apply_image(self, img):
        if self.padding is not None:
            img = F.pad(img, self.padding, self.fill, self.padding_mode)
        w, h = _get_image_size(img)
        if self.pad_if_needed and w < self.size[1]:
            img = F.pad(img, (self.size[1] - w, 0), self.fill, self.padding_mode)
        if self.pad_if_needed and h < self.size[0]:
            img = F.pad(img, (0, self.size[0] - h), self.fill, self.padding_mode)
        i, j, h, w = self._get_param(img, self.size)
        return F.crop(img, i, j, h, w)


class Pad(BaseTransform):
    """Pad the borders (see `functional.pad`).

    Args:
        padding (int|list|tuple): all borders, (left/right, top/bottom) or (left, top,
            right, bottom).
        fill (int|list|tuple, optional): constant padding value.
        padding_mode (str, optional): "constant" (default), "edge", "reflect",
            "symmetric".
        keys (list|tuple, optional): see `BaseTransform`.

    Returns:
        A callable: an image (or a tuple of fields, see ``keys``) in, the transformed
        image out, of the same kind (NumPy, PIL or Tensor) unless the class converts.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> import numpy as np
            >>> from fw.vision.transforms import Pad
            >>> Pad(2)(np.zeros((3, 3, 3), np.uint8)).shape
            (7, 7, 3)
    """

    def __init__(self, padding, fill=0, padding_mode="constant", keys=None):
        F._padding4(padding, "Pad")
        F._check_fill(fill, "Pad")
        if padding_mode not in F._PAD_MODES:
            raise ValueError(f"Pad: 'padding_mode' must be one of {list(F._PAD_MODES)}, got "
                             f"{padding_mode!r}")
        super().__init__(keys)
        self.padding = tuple(padding) if isinstance(padding, list) else padding
        self.fill = tuple(fill) if isinstance(fill, list) else fill
        self.padding_mode = padding_mode

    def _apply_image(self, img):
        return F.pad(img, self.padding, self.fill, self.padding_mode)


def _check_sequence_input(x, name, req_sizes):
    msg = " or ".join(str(s) for s in req_sizes)
    if not isinstance(x, Sequence):
        raise TypeError(f"{name} should be a sequence of length {msg}, got {x!r}")
    if len(x) not in req_sizes:
        raise ValueError(f"{name} should be a sequence of length {msg}, got {x!r}")


def _setup_angle(x, name, req_sizes=(2,)):
    if isinstance(x, numbers.Number):
        if x < 0:
            raise ValueError(f"{name}: if it is a single number it must be positive, got {x}")
        x = [-x, x]
    else:
        _check_sequence_input(x, name, req_sizes)
    return [float(d) for d in x]


class RandomAffine(BaseTransform):
    """Random affine transform: angle, translation, scale and shear drawn with
    ``random.uniform`` (in Paddle's order), image centre kept.

    Args:
        degrees (float|list|tuple): angle range, or (-degrees, degrees) for one number.
        translate (list|tuple, optional): max (fx, fy) fractions of width and height.
        scale (list|tuple, optional): scale range.
        shear (float|list|tuple, optional): x shear range, or (x0, x1, y0, y1).
        interpolation (str, optional): "nearest" (default), "bilinear", "bicubic".
        fill (int|list|tuple, optional): value outside the image.
        center (list|tuple, optional): (x, y) of the rotation.
        keys (list|tuple, optional): see `BaseTransform`.

    Returns:
        A callable: an image (or a tuple of fields, see ``keys``) in, the transformed
        image out, of the same kind (NumPy, PIL or Tensor) unless the class converts.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> import numpy as np
            >>> from fw.vision.transforms import RandomAffine
            >>> RandomAffine(15, translate=(0.1, 0.1))(np.zeros((8, 8, 3), np.uint8)).shape
            (8, 8, 3)
    """

    def __init__(self, degrees, translate=None, scale=None, shear=None,
                 interpolation="nearest", fill=0, center=None, keys=None):
        self.degrees = _setup_angle(degrees, "RandomAffine degrees", (2,))
        super().__init__(keys)
        if interpolation not in ("nearest", "bilinear", "bicubic"):
            raise ValueError(f"RandomAffine: 'interpolation' must be 'nearest', 'bilinear' "
                             f"or 'bicubic', got {interpolation!r}")
        self.interpolation = interpolation
        if translate is not None:
            _check_sequence_input(translate, "RandomAffine translate", (2,))
            for t in translate:
                if not 0.0 <= t <= 1.0:
                    raise ValueError(f"RandomAffine: 'translate' values should be between 0 "
                                     f"and 1, got {translate!r}")
        self.translate = translate
        if scale is not None:
            _check_sequence_input(scale, "RandomAffine scale", (2,))
            for s in scale:
                if s <= 0:
                    raise ValueError(f"RandomAffine: 'scale' values should be positive, got "
                                     f"{scale!r}")
        self.scale = scale
        self.shear = None if shear is None else _setup_angle(shear, "RandomAffine shear",
                                                              (2, 4))
        if fill is None:
            fill = 0
        elif not isinstance(fill, (Sequence, numbers.Number)):
            raise TypeError(f"RandomAffine: 'fill' should be a sequence or a number, got "
                            f"{fill!r}")
        self.fill = fill
        if center is not None:
            _check_sequence_input(center, "RandomAffine center", (2,))
        self.center = center

    def _get_param(self, img_size, degrees, translate=None, scale_ranges=None, shears=None):
        angle = random.uniform(degrees[0], degrees[1])
        if translate is not None:
            max_dx = float(translate[0] * img_size[0])
            max_dy = float(translate[1] * img_size[1])
            translations = (int(random.uniform(-max_dx, max_dx)),
                            int(random.uniform(-max_dy, max_dy)))
        else:
            translations = (0, 0)
        scale = 1.0 if scale_ranges is None else random.uniform(scale_ranges[0],
                                                                scale_ranges[1])
        shear_x = shear_y = 0.0
        if shears is not None:
            shear_x = random.uniform(shears[0], shears[1])
            if len(shears) == 4:
                shear_y = random.uniform(shears[2], shears[3])
        return angle, translations, scale, (shear_x, shear_y)

    def _apply_image(self, img):
        w, h = _get_image_size(img)
        ret = self._get_param([w, h], self.degrees, self.translate, self.scale, self.shear)
        return F.affine(img, *ret, interpolation=self.interpolation, fill=self.fill,
                        center=self.center)


class RandomRotation(BaseTransform):
    """Rotate by an angle drawn with ``random.uniform`` from `degrees`.

    Args:
        degrees (float|list|tuple): (min, max), or (-degrees, degrees) for one number.
        interpolation (str, optional): "nearest" (default), "bilinear", "bicubic".
        expand (bool, optional): grow the output to hold the whole image.
        center (list|tuple, optional): (x, y) of the rotation.
        fill (int|list|tuple, optional): value outside the image.
        keys (list|tuple, optional): see `BaseTransform`.

    Returns:
        A callable: an image (or a tuple of fields, see ``keys``) in, the transformed
        image out, of the same kind (NumPy, PIL or Tensor) unless the class converts.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> import numpy as np
            >>> from fw.vision.transforms import RandomRotation
            >>> RandomRotation(10)(np.zeros((8, 8, 3), np.uint8)).shape
            (8, 8, 3)
    """

    def __init__(self, degrees, interpolation="nearest", expand=False, center=None, fill=0,
                 keys=None):
        if isinstance(degrees, numbers.Number):
            if degrees < 0:
                raise ValueError(f"RandomRotation: if 'degrees' is a single number it must be "
                                 f"positive, got {degrees}")
            self.degrees = (-degrees, degrees)
        else:
            if not isinstance(degrees, Sequence) or len(degrees) != 2:
                raise ValueError(f"RandomRotation: if 'degrees' is a sequence it must be of "
                                 f"len 2, got {degrees!r}")
            self.degrees = degrees
        super().__init__(keys)
        self.interpolation = interpolation
        self.expand = expand
        self.center = center
        self.fill = fill

    def _get_param(self, degrees):
        return random.uniform(degrees[0], degrees[1])

    def _apply_image(self, img):
        angle = self._get_param(self.degrees)
        return F.rotate(img, angle, self.interpolation, self.expand, self.center, self.fill)


class RandomPerspective(BaseTransform):
    """With probability `prob`, move the corners by random amounts (up to
    `distortion_scale` of half the size, ``random.uniform``) and warp.

    Args:
        prob (float, optional): default 0.5.
        distortion_scale (float, optional): in [0, 1], default 0.5.
        interpolation (str, optional): "nearest" (default), "bilinear", "bicubic".
        fill (int|list|tuple, optional): value outside the image.
        keys (list|tuple, optional): see `BaseTransform`.

    Returns:
        A callable: an image (or a tuple of fields, see ``keys``) in, the transformed
        image out, of the same kind (NumPy, PIL or Tensor) unless the class converts.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> import numpy as np
            >>> from fw.vision.transforms import RandomPerspective
            >>> RandomPerspective(1.0)(np.zeros((8, 8, 3), np.uint8)).shape
            (8, 8, 3)
    """

    def __init__(self, prob=0.5, distortion_scale=0.5, interpolation="nearest", fill=0,
                 keys=None):
        super().__init__(keys)
        _check_prob(prob, "RandomPerspective")
        if not 0 <= distortion_scale <= 1:
            raise ValueError(f"RandomPerspective: 'distortion_scale' must be between 0 and 1, "
                             f"got {distortion_scale!r}")
        if interpolation not in ("nearest", "bilinear", "bicubic"):
            raise ValueError(f"RandomPerspective: 'interpolation' must be 'nearest', "
                             f"'bilinear' or 'bicubic', got {interpolation!r}")
        F._check_fill(fill, "RandomPerspective")
        self.prob = prob
        self.distortion_scale = distortion_scale
        self.interpolation = interpolation
        self.fill = fill

    def get_params(self, width, height, distortion_scale):
        """Random (startpoints, endpoints): the corners and where they move."""
        hh, hw = height // 2, width // 2
        dx, dy = int(distortion_scale * hw), int(distortion_scale * hh)
        topleft = [int(random.uniform(0, dx + 1)), int(random.uniform(0, dy + 1))]
        topright = [int(random.uniform(width - dx - 1, width)),
                    int(random.uniform(0, dy + 1))]
        botright = [int(random.uniform(width - dx - 1, width)),
                    int(random.uniform(height - dy - 1, height))]
        botleft = [int(random.uniform(0, dx + 1)),
                   int(random.uniform(height - dy - 1, height))]
        start = [[0, 0], [width - 1, 0], [width - 1, height - 1], [0, height - 1]]
        return start, [topleft, topright, botright, botleft]

    def _apply_image(self, img):
        width, height = _get_image_size(img)
        if random.random() < self.prob:
            start, end = self.get_params(width, height, self.distortion_scale)
            return F.perspective(img, start, end, self.interpolation, self.fill)
        return img


class Grayscale(BaseTransform):
    """Convert to grey (see `functional.to_grayscale`).

    Args:
        num_output_channels (int, optional): 1 (default) or 3.
        keys (list|tuple, optional): see `BaseTransform`.

    Returns:
        A callable: an image (or a tuple of fields, see ``keys``) in, the transformed
        image out, of the same kind (NumPy, PIL or Tensor) unless the class converts.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> import numpy as np
            >>> from fw.vision.transforms import Grayscale
            >>> Grayscale()(np.zeros((2, 2, 3), np.uint8)).shape
            (2, 2, 1)
    """

    def __init__(self, num_output_channels=1, keys=None):
        super().__init__(keys)
        if num_output_channels not in (1, 3):
            raise ValueError(f"Grayscale: 'num_output_channels' should be 1 or 3, got "
                             f"{num_output_channels!r}")
        self.num_output_channels = num_output_channels

    def _apply_image(self, img):
        return F.to_grayscale(img, self.num_output_channels)


class RandomErasing(BaseTransform):
    """With probability `prob` (``random.random()``), erase a random box (area fraction
    in `scale`, aspect ratio in `ratio`, drawn with ``np.random`` as in Paddle).

    Args:
        prob (float, optional): default 0.5.
        scale (list|tuple, optional): area fraction range, default (0.02, 0.33).
        ratio (list|tuple, optional): aspect ratio range, default (0.3, 3.3).
        value (int|float|list|tuple|str, optional): the fill: a number, one per channel,
            or "random" (normal noise).
        inplace (bool, optional): write into the input (arrays and tensors).
        keys (list|tuple, optional): see `BaseTransform`.

    Returns:
        A callable: an image (or a tuple of fields, see ``keys``) in, the transformed
        image out, of the same kind (NumPy, PIL or Tensor) unless the class converts.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> import numpy as np
            >>> from fw.vision.transforms import RandomErasing
            >>> RandomErasing(prob=1.0)(np.ones((8, 8, 3), np.uint8)).shape
            (8, 8, 3)
    """

    def __init__(self, prob=0.5, scale=(0.02, 0.33), ratio=(0.3, 3.3), value=0,
                 inplace=False, keys=None):
        super().__init__(keys)
        if not (isinstance(scale, (tuple, list)) and len(scale) == 2
                and 0 <= scale[0] <= scale[1] <= 1):
            raise ValueError(f"RandomErasing: 'scale' should be (min, max) within [0, 1], "
                             f"got {scale!r}")
        if not (isinstance(ratio, (tuple, list)) and len(ratio) == 2
                and 0 < ratio[0] <= ratio[1]):
            raise ValueError(f"RandomErasing: 'ratio' should be (min, max) with min > 0, got "
                             f"{ratio!r}")
        _check_prob(prob, "RandomErasing")
        if not isinstance(value, (numbers.Number, str, tuple, list)):
            raise TypeError(f"RandomErasing: 'value' should be a number, tuple, list or str, "
                            f"got {value!r}")
        if isinstance(value, str) and value != "random":
            raise ValueError(f"RandomErasing: a str 'value' must be 'random', got {value!r}")
        if isinstance(value, (tuple, list)) and len(value) not in (1, 3):
            raise ValueError(f"RandomErasing: 'value' should be a single number or a sequence "
                             f"with one value per channel (1 or 3), got {value!r}")
        self.prob = prob
        self.scale = scale
        self.ratio = ratio
        self.value = value
        self.inplace = inplace

    def _dynamic_get_param(self, img, scale, ratio, value):
        if F._is_pil_image(img):
            arr = np.asarray(img)
            h, w = arr.shape[:2]
            c = arr.shape[2] if arr.ndim == 3 else 1
        elif F._is_numpy_image(img):
            h, w = img.shape[:2]
            c = img.shape[2] if img.ndim == 3 else 1
        else:
            c, h, w = img.shape[-3], img.shape[-2], img.shape[-1]
        img_area = h * w
        log_ratio = np.log(ratio)
        for _ in range(10):
            erase_area = np.random.uniform(*scale) * img_area
            aspect_ratio = np.exp(np.random.uniform(*log_ratio))
            erase_h = int(round(np.sqrt(erase_area * aspect_ratio)))
            erase_w = int(round(np.sqrt(erase_area / aspect_ratio)))
            if erase_h >= h or erase_w >= w:
                continue
            if F._is_tensor_image(img):
                import fw

                if value is None:
                    v = fw.randn([c, erase_h, erase_w]).astype(img.dtype)
                else:
                    v = fw.to_tensor(np.asarray(value, np.float32)[:, None, None],
                                     place=img.place).astype(img.dtype)
            elif value is None:
                v = np.random.normal(size=[erase_h, erase_w, c]) * 255
            else:
                v = np.array(value)[None, None, :]
            top = np.random.randint(0, h - erase_h + 1)
            left = np.random.randint(0, w - erase_w + 1)
            return top, left, erase_h, erase_w, v
        return 0, 0, h, w, img

    def _apply_image(self, img):
        if random.random() < self.prob:
            if isinstance(self.value, numbers.Number):
                value = [self.value]
            elif isinstance(self.value, str):
                value = None
            else:
                value = self.value
            top, left, eh, ew, v = self._dynamic_get_param(img, self.scale, self.ratio, value)
            if v is img:  # no box fitted in 10 tries: Paddle returns the image as is
                return img
            return F.erase(img, int(top), int(left), eh, ew, v, self.inplace)
        return img
