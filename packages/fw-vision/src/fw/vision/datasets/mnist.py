"""MNIST and Fashion-MNIST (Paddle's ``paddle.vision.datasets.MNIST`` /
``FashionMNIST``): the four gzipped IDX files from Paddle's mirror, parsed with the
IDX header checked (magic number, counts, sizes) and read in one NumPy call."""

from __future__ import annotations

import gzip
import struct
import zlib

import numpy as np

from fw.io import Dataset
from fw.vision.datasets._common import (
    as_dtype,
    check_backend,
    check_mode,
    default_float,
    fetch,
)

__all__ = ["MNIST", "FashionMNIST"]


def read_idx(path: str, magic: int, dataset: str) -> np.ndarray:
    """An IDX file (LeCun's format: big-endian magic 0x0000 08 <ndim>, then ndim uint32
    sizes, then uint8 data) as a uint8 array; gzip-compressed or plain."""
    try:
        with open(path, "rb") as f:
            head = f.read(2)
        opener = gzip.open if head == b"\x1f\x8b" else open
        with opener(path, "rb") as f:
            data = f.read()
    except (OSError, EOFError, zlib.error) as e:
        raise ValueError(f"{dataset}: {path} is not a readable gzip IDX file (truncated or "
                         f"corrupted?): {e}") from None
    if len(data) < 4 or struct.unpack_from(">I", data)[0] != magic:
        got = struct.unpack_from(">I", data)[0] if len(data) >= 4 else None
        raise ValueError(f"{dataset}: {path} is not an IDX file with magic number {magic} "
                         f"(got {got})")
    ndim = magic & 0xFF
    if len(data) < 4 + 4 * ndim:
        raise ValueError(f"{dataset}: {path}: truncated IDX header")
    shape = struct.unpack_from(f">{ndim}I", data, 4)
    body = np.frombuffer(data, np.uint8, offset=4 + 4 * ndim)
    if body.size != int(np.prod(shape)):
        raise ValueError(f"{dataset}: {path}: the IDX header says shape {list(shape)} "
                         f"({int(np.prod(shape))} bytes) but the file holds {body.size}")
    return body.reshape(shape)


class MNIST(Dataset):
    """The MNIST handwritten digits (60,000 train / 10,000 test 28x28 grayscale images).

    Args:
        image_path (str, optional): path of the (gzipped IDX) image file; None downloads
            it when ``download`` is True. Default None.
        label_path (str, optional): path of the label file; None downloads it. Default None.
        mode (str, optional): "train" or "test". Default "train".
        transform (Callable, optional): applied to each image. Default None.
        download (bool, optional): download missing files into fw's cache (md5-checked;
            a cached file is reused without network). Default True.
        backend (str, optional): "pil" (PIL images) or "cv2" (float arrays); None uses
            `fw.vision.get_image_backend`. Default None.

    Returns:
        Dataset: items ``(image, label)``: a PIL ``L`` image (or a [28, 28] float32 array
        with backend "cv2", after ``transform``) and an int64 array of shape [1].

    Examples:
        .. code-block:: python

            >>> import fw
            >>> import gzip, os, struct, tempfile
            >>> import numpy as np
            >>> from fw.vision.datasets import MNIST
            >>> d = tempfile.mkdtemp()
            >>> with gzip.open(os.path.join(d, "img.gz"), "wb") as f:
            ...     _ = f.write(struct.pack(">IIII", 2051, 2, 28, 28) + bytes(2 * 28 * 28))
            >>> with gzip.open(os.path.join(d, "lab.gz"), "wb") as f:
            ...     _ = f.write(struct.pack(">II", 2049, 2) + bytes([3, 7]))
            >>> ds = MNIST(os.path.join(d, "img.gz"), os.path.join(d, "lab.gz"), backend="cv2")
            >>> img, label = ds[1]
            >>> len(ds), img.shape, img.dtype, label
            (2, (28, 28), dtype('float32'), array([7]))
    """

    NAME = "mnist"
    URL_PREFIX = "https://dataset.bj.bcebos.com/mnist/"
    # Paddle's published files and md5 sums (paddle/vision/datasets/mnist.py)
    TEST_IMAGE_URL = URL_PREFIX + "t10k-images-idx3-ubyte.gz"
    TEST_IMAGE_MD5 = "9fb629c4189551a2d022fa330f9573f3"
    TEST_LABEL_URL = URL_PREFIX + "t10k-labels-idx1-ubyte.gz"
    TEST_LABEL_MD5 = "ec29112dd5afa0611ce80d1b7f02629c"
    TRAIN_IMAGE_URL = URL_PREFIX + "train-images-idx3-ubyte.gz"
    TRAIN_IMAGE_MD5 = "f68b3c2dcbeaaa9fbdd348bbdeb94873"
    TRAIN_LABEL_URL = URL_PREFIX + "train-labels-idx1-ubyte.gz"
    TRAIN_LABEL_MD5 = "d53e105ee54ea40749a09fcbcd1e9432"

    def __init__(self, image_path=None, label_path=None, mode="train", transform=None,
                 download=True, backend=None):
        name = type(self).__name__
        self.mode = check_mode(mode, name, ("train", "test"))
        self.backend = check_backend(backend, name)
        train = self.mode == "train"
        self.image_path = fetch(image_path, self.TRAIN_IMAGE_URL if train else
                                self.TEST_IMAGE_URL, self.TRAIN_IMAGE_MD5 if train else
                                self.TEST_IMAGE_MD5, self.NAME, download, name, "image_path")
        self.label_path = fetch(label_path, self.TRAIN_LABEL_URL if train else
                                self.TEST_LABEL_URL, self.TRAIN_LABEL_MD5 if train else
                                self.TEST_LABEL_MD5, self.NAME, download, name, "label_path")
        self.transform = transform
        self.images = read_idx(self.image_path, 2051, name)
        self.labels = read_idx(self.label_path, 2049, name).astype(np.int64)
        if len(self.images) != len(self.labels):
            raise ValueError(f"{name}: {self.image_path} holds {len(self.images)} images but "
                             f"{self.label_path} holds {len(self.labels)} labels")
        self.dtype = default_float()

    def __getitem__(self, idx):
        image = self.images[idx]
        label = np.array([self.labels[idx]], np.int64)
        if self.backend == "pil":
            from PIL import Image

            image = Image.fromarray(image, mode="L")
        else:
            image = image.astype(np.float32)
        if self.transform is not None:
            image = self.transform(image)
        if self.backend == "pil":
            return image, label
        return as_dtype(image, self.dtype), label

    def __len__(self):
        return len(self.labels)


class FashionMNIST(MNIST):
    """Zalando's Fashion-MNIST: 60,000 train / 10,000 test 28x28 grayscale images of
    10 clothing classes, in MNIST's file format.

    Args:
        image_path (str, optional): path of the (gzipped IDX) image file; None downloads
            it when ``download`` is True. Default: None.
        label_path (str, optional): path of the label file; None downloads it.
            Default: None.
        mode (str, optional): "train" or "test". Default: "train".
        transform (Callable, optional): applied to each image. Default: None.
        download (bool, optional): download missing files into fw's cache (md5-checked;
            a cached file is reused without network). Default: True.
        backend (str, optional): "pil" (PIL images) or "cv2" (float arrays); None uses
            `fw.vision.get_image_backend`. Default: None.

    Returns:
        Dataset: items ``(image, label)``, as `MNIST`'s.

    Examples:
        >>> import fw
        >>> import gzip, struct
        >>> from fw.vision.datasets import FashionMNIST
        >>> with gzip.open("img.gz", "wb") as f:
        ...     _ = f.write(struct.pack(">IIII", 2051, 1, 28, 28) + bytes(28 * 28))
        >>> with gzip.open("lab.gz", "wb") as f:
        ...     _ = f.write(struct.pack(">II", 2049, 1) + bytes([9]))
        >>> ds = FashionMNIST("img.gz", "lab.gz", backend="cv2")
        >>> img, label = ds[0]
        >>> len(ds), img.shape, label
        (1, (28, 28), array([9]))
    """

    NAME = "fashion-mnist"
    URL_PREFIX = "https://dataset.bj.bcebos.com/fashion_mnist/"
    TEST_IMAGE_URL = URL_PREFIX + "t10k-images-idx3-ubyte.gz"
    TEST_IMAGE_MD5 = "bef4ecab320f06d8554ea6380940ec79"
    TEST_LABEL_URL = URL_PREFIX + "t10k-labels-idx1-ubyte.gz"
    TEST_LABEL_MD5 = "bb300cfdad3c16e7a12a480ee83cd310"
    TRAIN_IMAGE_URL = URL_PREFIX + "train-images-idx3-ubyte.gz"
    TRAIN_IMAGE_MD5 = "8d4fb7e6c68d591d4c3dfef9ec88bf0d"
    TRAIN_LABEL_URL = URL_PREFIX + "train-labels-idx1-ubyte.gz"
    TRAIN_LABEL_MD5 = "25c81989df183df01b3e8a0aad5dffbe"
