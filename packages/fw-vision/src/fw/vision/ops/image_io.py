"""File and JPEG ops (Paddle's ``paddle.vision.ops.read_file`` / ``decode_jpeg``).
Paddle decodes with nvJPEG on GPU only; fw decodes with pillow (the package's image
library) on any device, so pixel values follow libjpeg(-turbo)'s IDCT."""

from __future__ import annotations

import io
import os

import numpy as np

import fw
from fw.vision.ops._checks import check, describe

__all__ = ["read_file", "decode_jpeg"]

_MODES = ("unchanged", "gray", "rgb")


def read_file(filename, name=None):
    """Read a file's bytes into a 1-D uint8 tensor.

    Args:
        filename (str|os.PathLike): path of the file.
        name (str, optional): unused, for Paddle compatibility.

    Returns:
        Tensor: [file size] uint8.

    Examples:
        .. code-block:: python

            >>> import fw, tempfile, os
            >>> path = os.path.join(tempfile.mkdtemp(), "f.bin")
            >>> with open(path, "wb") as f:
            ...     _ = f.write(b"abc")
            >>> fw.vision.ops.read_file(path).tolist()
            [97, 98, 99]
    """
    if not isinstance(filename, (str, os.PathLike)):
        raise TypeError(f"read_file: argument 'filename' must be a path, got "
                        f"{type(filename).__name__}")
    if not os.path.isfile(filename):
        raise FileNotFoundError(f"read_file: argument 'filename': no such file {filename!r}")
    with open(filename, "rb") as f:
        data = f.read()
    return fw.to_tensor(np.frombuffer(data, np.uint8).copy())


def decode_jpeg(x, mode="unchanged", name=None):
    """Decode JPEG bytes into a CHW uint8 image tensor.

    Args:
        x (Tensor): 1-D uint8 tensor of the JPEG file's bytes (see `read_file`).
        mode (str, optional): "unchanged" (the file's channels), "gray" (1 channel) or
            "rgb" (3 channels). Default "unchanged".
        name (str, optional): unused, for Paddle compatibility.

    Returns:
        Tensor: [C, H, W] uint8.

    Examples:
        .. code-block:: python

            >>> import fw, io, numpy as np
            >>> from PIL import Image
            >>> buf = io.BytesIO()
            >>> Image.fromarray(np.zeros((4, 6, 3), np.uint8)).save(buf, format="JPEG")
            >>> data = fw.to_tensor(np.frombuffer(buf.getvalue(), np.uint8))
            >>> fw.vision.ops.decode_jpeg(data, mode="gray").shape
            [1, 4, 6]
    """
    a = check(x, "decode_jpeg", "x", dtypes=("uint8",), ndim=1)
    if mode not in _MODES:
        raise ValueError(f"decode_jpeg: argument 'mode' must be one of {_MODES}, got {mode!r}")
    from PIL import Image, UnidentifiedImageError

    try:
        img = Image.open(io.BytesIO(a.tobytes()))
        if img.format != "JPEG":
            raise ValueError(f"decode_jpeg: argument 'x' is a {img.format} image, not a JPEG")
        img.load()
    except (UnidentifiedImageError, OSError) as e:
        raise ValueError(f"decode_jpeg: argument 'x' ({describe(a)}) is not a decodable "
                         f"JPEG: {e}") from None
    if mode == "gray":
        img = img.convert("L")
    elif mode == "rgb" or img.mode not in ("L", "RGB"):
        img = img.convert("RGB")  # CMYK / YCCK files decode to RGB, as nvJPEG does
    arr = np.asarray(img)
    if arr.ndim == 2:
        arr = arr[:, :, None]
    return fw.to_tensor(np.ascontiguousarray(arr.transpose(2, 0, 1)))
