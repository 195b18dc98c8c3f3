"""The image backend of fw.vision (Paddle's ``paddle.vision.set_image_backend``):
which type ``image_load`` and the file datasets return — a PIL image ("pil", the
default), a HWC uint8 NumPy array ("cv2": OpenCV's convention, BGR channel order,
decoded with pillow so OpenCV is not needed) or a CHW tensor ("tensor")."""

from __future__ import annotations

import numpy as np

_BACKENDS = ("pil", "cv2", "tensor")
_backend = "pil"


def set_image_backend(backend: str) -> None:
    """Select what `image_load` (and the vision datasets) return by default: "pil"
    (PIL images), "cv2" (HWC uint8 arrays in BGR order, as OpenCV reads them) or
    "tensor" (CHW uint8 Tensors).

    Args:
        backend (str): "pil", "cv2" or "tensor".

    Returns:
        None.

    Examples:
        >>> import fw
        >>> fw.vision.set_image_backend("cv2")
        >>> fw.vision.get_image_backend()
        'cv2'
        >>> fw.vision.set_image_backend("pil")
    """
    global _backend
    if backend not in _BACKENDS:
        raise ValueError(f"set_image_backend: backend must be one of {_BACKENDS}, got "
                         f"{backend!r}")
    _backend = backend


def get_image_backend() -> str:
    """The image backend `set_image_backend` chose ("pil" unless changed): what
    `image_load` and the vision datasets return by default.

    Returns:
        str: "pil", "cv2" or "tensor".

    Examples:
        >>> import fw
        >>> fw.vision.get_image_backend()
        'pil'
    """
    return _backend


def image_load(path, backend: str | None = None):
    """Read an image file with the given (or the current) backend.

    Args:
        path (str): the image file.
        backend (str, optional): "pil", "cv2" (HWC uint8, BGR) or "tensor" (CHW uint8).
            Default: None (`get_image_backend`).

    Returns:
        PIL.Image.Image|numpy.ndarray|Tensor: the image.

    Examples:
        >>> import fw
        >>> import numpy as np
        >>> from PIL import Image
        >>> Image.fromarray(np.array([[[255, 0, 0]] * 6] * 4, np.uint8)).save("red.png")
        >>> fw.vision.image_load("red.png").size               # PIL: (width, height)
        (6, 4)
        >>> fw.vision.image_load("red.png", backend="cv2")[0, 0].tolist()   # BGR
        [0, 0, 255]
        >>> fw.vision.image_load("red.png", backend="tensor").shape
        [3, 4, 6]
    """
    backend = _backend if backend is None else backend
    if backend not in _BACKENDS:
        raise ValueError(f"image_load: backend must be one of {_BACKENDS}, got {backend!r}")
    from PIL import Image

    with Image.open(path) as img:
        img.load()
        if backend == "pil":
            return img.copy()
        arr = np.asarray(img.convert("RGB"))
    if backend == "cv2":
        return np.ascontiguousarray(arr[..., ::-1])
    import fw

    return fw.to_tensor(np.ascontiguousarray(arr.transpose(2, 0, 1)))
