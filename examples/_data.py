"""Data sets for the examples, as `fw.io.Dataset`s of ``(image, label)`` samples.

- `load_digits_dataset`: the UCI 8x8 handwritten digits that scikit-learn ships
  (1,797 images, no download). Images are bilinearly upscaled to MNIST's 28x28 by
  default, so the same LeNet runs on these and on MNIST.
- `load_mnist`: the real MNIST, downloaded once from a configurable URL into a
  cache directory, each file checked against a digest before it is used.

Samples are ``(float32 array [1, H, W] in [0, 1], int64 label)``; fw.io's default
collate stacks them into ``[B, 1, H, W]`` images and ``[B]`` labels.
"""

from __future__ import annotations

import gzip
import hashlib
import os
import shutil
import tempfile
import urllib.request

import numpy as np

import fw

__all__ = ["ArrayDataset", "load_digits_dataset", "load_mnist", "resize_bilinear",
           "read_idx", "MNIST_URL", "MNIST_FILES", "MNIST_MD5"]


class ArrayDataset(fw.io.Dataset):
    """Images and labels held as NumPy arrays; item ``i`` is ``(images[i], labels[i])``.

    Args:
        images: float32 array ``[N, C, H, W]``.
        labels: int64 array ``[N]``.
    """

    def __init__(self, images, labels):
        if len(images) != len(labels):
            raise ValueError(f"ArrayDataset: {len(images)} images but {len(labels)} labels")
        self.images = np.ascontiguousarray(images, dtype=np.float32)
        self.labels = np.asarray(labels, dtype=np.int64)

    def __getitem__(self, i):
        return self.images[i], self.labels[i]

    def __len__(self):
        return len(self.labels)


# ---------------------------------------------------------------- digits (scikit-learn)
def resize_bilinear(images, size):
    """Resize ``[N, H, W]`` images to ``[N, size, size]`` by bilinear interpolation
    (pixel centres aligned, as ``align_corners=False`` resampling does).

    >>> resize_bilinear(np.ones((1, 8, 8), np.float32), 28).shape
    (1, 28, 28)
    """
    n, h, w = images.shape

    def axis(src, dst):
        # source coordinate of each destination pixel centre, clamped to the image
        c = np.clip((np.arange(dst) + 0.5) * src / dst - 0.5, 0, src - 1)
        lo = np.floor(c).astype(np.int64)
        hi = np.minimum(lo + 1, src - 1)
        return lo, hi, (c - lo).astype(np.float32)

    y0, y1, fy = axis(h, size)
    x0, x1, fx = axis(w, size)
    rows = images[:, y0, :] * (1 - fy)[None, :, None] + images[:, y1, :] * fy[None, :, None]
    out = rows[:, :, x0] * (1 - fx)[None, None, :] + rows[:, :, x1] * fx[None, None, :]
    return out.astype(np.float32)


def load_digits_dataset(split, upscale=True, test_fraction=0.2, split_seed=0):
    """scikit-learn's 8x8 digits as an `fw.io.Dataset`.

    The 1,797 images are shuffled once with ``split_seed`` (independent of any
    training seed, so train and test never overlap) and the last ``test_fraction``
    becomes the test split. Pixel values 0..16 are scaled to [0, 1].

    Args:
        split: ``"train"`` or ``"test"``.
        upscale: resize to 28x28 (bilinear), MNIST's size; False keeps 8x8.
        test_fraction: share of the images in the test split.
        split_seed: seed of the shuffle that makes the split.

    Returns:
        an `ArrayDataset` of ``([1, 28, 28] or [1, 8, 8] float32, int64)`` samples.

    Raises:
        ImportError: scikit-learn is not installed (it is only needed here).

    >>> ds = load_digits_dataset("test")  # doctest: +SKIP
    >>> len(ds), ds[0][0].shape           # doctest: +SKIP
    (360, (1, 28, 28))
    """
    if split not in ("train", "test"):
        raise ValueError(f"load_digits_dataset: split must be 'train' or 'test', got {split!r}")
    try:
        from sklearn.datasets import load_digits
    except ImportError as e:
        raise ImportError("the digits example needs scikit-learn for its bundled 8x8 digits "
                          "data set: pip install scikit-learn (or pass --data mnist)") from e
    d = load_digits()
    images = d.images.astype(np.float32) / 16.0
    labels = d.target.astype(np.int64)
    order = np.random.default_rng(split_seed).permutation(len(labels))
    n_test = int(round(len(labels) * test_fraction))
    idx = order[len(labels) - n_test:] if split == "test" else order[:len(labels) - n_test]
    images, labels = images[idx], labels[idx]
    if upscale:
        images = resize_bilinear(images, 28)
    return ArrayDataset(images[:, None], labels)


# ---------------------------------------------------------------- MNIST (download)
# The IDX files as distributed; any mirror with the same file names works.
MNIST_URL = "https://ossci-datasets.s3.amazonaws.com/mnist/"
MNIST_FILES = {
    "train": ("train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz"),
    "test": ("t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"),
}
# The digests published with the data set (MD5); pass ``sha256=`` to check with SHA-256.
MNIST_MD5 = {
    "train-images-idx3-ubyte.gz": "f68b3c2dcbeaaa9fbdd348bbdeb94873",
    "train-labels-idx1-ubyte.gz": "d53e105ee54ea40749a09fcbcd1e9432",
    "t10k-images-idx3-ubyte.gz": "9fb629c4189551a2d022fa330f9573f3",
    "t10k-labels-idx1-ubyte.gz": "ec29112dd5afa0611ce80d1b7f02629c",
}

# IDX type codes -> NumPy dtypes (big-endian, as the format stores them)
_IDX_DTYPES = {0x08: ">u1", 0x09: ">i1", 0x0B: ">i2", 0x0C: ">i4", 0x0D: ">f4", 0x0E: ">f8"}


def _digest(path, algorithm):
    h = hashlib.new(algorithm, usedforsecurity=False)  # a checksum, not security
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _expected(name, sha256):
    """(algorithm, hex digest) a file must have, or None if nothing is known."""
    if sha256 is not None:
        if name not in sha256:
            raise ValueError(f"load_mnist: sha256 has no digest for {name!r} "
                             f"(it has {sorted(sha256)})")
        return "sha256", sha256[name].lower()
    if name in MNIST_MD5:
        return "md5", MNIST_MD5[name]
    return None


def _verify(path, name, sha256, origin):
    want = _expected(name, sha256)
    if want is None:
        return
    got = _digest(path, want[0])
    if got != want[1]:
        raise OSError(f"load_mnist: checksum mismatch for {name} ({origin}): {want[0]} is "
                      f"{got}, expected {want[1]} (a corrupt or different file: delete it "
                      f"and download again, or pass the right digests)")


def _download(url, dest, timeout=60):
    # into a temporary file beside the target, renamed once complete: an interrupted
    # download never leaves a partial file under the real name
    d = os.path.dirname(dest)
    fd, tmp = tempfile.mkstemp(prefix=".part-", dir=d)
    try:
        with os.fdopen(fd, "wb") as out, urllib.request.urlopen(url, timeout=timeout) as r:
            shutil.copyfileobj(r, out)
        return tmp
    except BaseException:
        os.unlink(tmp)
        raise


def read_idx(path):
    """Read an IDX file (optionally gzip-compressed) into a NumPy array.

    The format: two zero bytes, a type code, the number of dimensions, one
    big-endian uint32 per dimension, then the data in C order.
    """
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        data = f.read()
    if len(data) < 4 or data[0] != 0 or data[1] != 0 or data[2] not in _IDX_DTYPES:
        raise ValueError(f"read_idx: {path} is not an IDX file (header {data[:4]!r})")
    dtype, ndim = np.dtype(_IDX_DTYPES[data[2]]), data[3]
    shape = tuple(int(v) for v in np.frombuffer(data, ">u4", ndim, offset=4))
    start = 4 + 4 * ndim
    count = int(np.prod(shape))
    if len(data) - start != count * dtype.itemsize:
        raise ValueError(f"read_idx: {path} holds {len(data) - start} data bytes, its header "
                         f"{list(shape)} needs {count * dtype.itemsize}")
    return np.frombuffer(data, dtype, count, offset=start).reshape(shape)


def load_mnist(root, split="train", download=True, url=MNIST_URL, sha256=None, timeout=60):
    """MNIST as an `fw.io.Dataset`, downloaded once into ``root``.

    Each IDX file is looked up in ``root``; if missing and ``download`` is true it
    is fetched from ``url + file name``. Every file, fresh or cached, is checked
    against its digest before use: ``sha256`` (a dict file name -> hex digest)
    when given, else the published MD5 sums of the standard files (`MNIST_MD5`).

    Args:
        root: the cache directory (created if needed).
        split: ``"train"`` (60,000 images) or ``"test"`` (10,000).
        download: fetch missing files; False raises FileNotFoundError instead.
        url: base URL holding the files named in `MNIST_FILES`.
        sha256: optional ``{file name: sha256 hex}`` to verify against.
        timeout: seconds to wait on the server.

    Returns:
        an `ArrayDataset` of ``([1, 28, 28] float32 in [0, 1], int64)`` samples.

    Raises:
        OSError: a file's digest does not match (the file is kept for inspection).
        ValueError: a file is not a valid IDX file, or images and labels disagree.
    """
    if split not in MNIST_FILES:
        raise ValueError(f"load_mnist: split must be 'train' or 'test', got {split!r}")
    os.makedirs(root, exist_ok=True)
    arrays = []
    for name in MNIST_FILES[split]:
        path = os.path.join(root, name)
        if not os.path.exists(path):
            if not download:
                raise FileNotFoundError(f"load_mnist: {path} is missing and download=False")
            src = url.rstrip("/") + "/" + name
            tmp = _download(src, path, timeout)
            try:
                _verify(tmp, name, sha256, f"downloaded from {src}; kept as {path}.bad")
            except OSError:
                os.replace(tmp, path + ".bad")  # kept for inspection, never used
                raise
            os.replace(tmp, path)
        else:
            _verify(path, name, sha256, f"cached at {path}")
        arrays.append(read_idx(path))
    images, labels = arrays
    if images.ndim != 3 or labels.ndim != 1 or len(images) != len(labels):
        raise ValueError(f"load_mnist: images {list(images.shape)} and labels "
                         f"{list(labels.shape)} do not form a data set")
    return ArrayDataset((images.astype(np.float32) / 255.0)[:, None], labels.astype(np.int64))
