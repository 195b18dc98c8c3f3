"""The image backend of fw.vision (Paddle's ``paddle.vision.set_image_backend``):
which type ``image_load`` and the file datasets return — a PIL image ("pil", the
default), a HWC uint8 NumPy array ("cv2": OpenCV's convention, BGR channel order,
decoded with pillow so OpenCV is not needed) or a CHW tensor ("tensor")."""

from __future__ import annotations

import numpy as np

_BACKENDS = ("pil", "cv2", "tensor")
_backend = "pil"


def set_image_backend(backend: str) -> None:
    """Select what ``image_load`` returns: "pil", "cv2" or "tensor"."""
    global _backend
    if backend not in _BACKENDS:
        raise ValueError(f"set_image_backend: backend must be one of {_BACKENDS}, got "
                         f"{backend!r}")
    _backend = backend


def get_image_backend() -> str:
    """The backend ``set_image_backend`` chose ("pil" unless changed)."""
    return _backend


def image_load(path, backend: str | None = None):
    """Read an image file with the given (or the current) backend.

    >>> import fw
    >>> fw.vision.get_image_backend()
    'pil'
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
