"""Oxford Flowers-102 (Paddle's ``paddle.vision.datasets.Flowers``): the image tarball
plus two MATLAB files (labels, split ids), read with ``scipy.io.loadmat`` (SciPy is
already a dependency of fw-nn; loadmat parses data and runs nothing)."""

from __future__ import annotations

import os
import re
import shutil
import tarfile
import tempfile

import numpy as np

from fw.io import Dataset
from fw.vision.datasets._common import (
    as_dtype,
    check_backend,
    check_mode,
    default_float,
    fetch,
)

__all__ = ["Flowers"]

# Paddle's published files and md5 sums (paddle/vision/datasets/flowers.py)
DATA_URL = "http://paddlemodels.bj.bcebos.com/flowers/102flowers.tgz"
LABEL_URL = "http://paddlemodels.bj.bcebos.com/flowers/imagelabels.mat"
SETID_URL = "http://paddlemodels.bj.bcebos.com/flowers/setid.mat"
DATA_MD5 = "52808999861908f626f3c1f4e79d11fa"
LABEL_MD5 = "e0620be6f572b9609742df49c70aed4d"
SETID_MD5 = "a5357ecc9cb78c4bef273ce3793fc85c"
# The official split has more test than train images, so Paddle swaps them: "train"
# reads the official test ids and "test" the official train ids.
MODE_FLAG = {"train": "tstid", "test": "trnid", "valid": "valid"}
_MEMBER = re.compile(r"^(?:\./)?jpg/image_\d{5}\.jpg$")


def _extract_images(tgz: str, dataset: str) -> str:
    """Extract the ``jpg/image_NNNNN.jpg`` members of the tarball once, next to it
    (where Paddle puts them). Only members with exactly that name are written (no path
    from the archive reaches the file system otherwise); extraction goes to a temporary
    directory renamed into place, so an interrupted run leaves nothing half-done."""
    root = tgz[:-4] if tgz.endswith(".tgz") else tgz + ".d"
    if os.path.isdir(os.path.join(root, "jpg")):
        return root
    os.makedirs(root, exist_ok=True)
    tmp = tempfile.mkdtemp(dir=root, prefix=".jpg-")
    try:
        with tarfile.open(tgz) as t:
            for m in t:
                if m.isfile() and _MEMBER.match(m.name):
                    with open(os.path.join(tmp, os.path.basename(m.name)), "wb") as f:
                        shutil.copyfileobj(t.extractfile(m), f)
    except (tarfile.TarError, EOFError, OSError) as e:
        shutil.rmtree(tmp, ignore_errors=True)
        raise ValueError(f"{dataset}: {tgz} is not a readable image tarball (truncated or "
                         f"corrupted?): {e}") from None
    try:
        os.replace(tmp, os.path.join(root, "jpg"))
    except OSError:
        shutil.rmtree(tmp, ignore_errors=True)
        if not os.path.isdir(os.path.join(root, "jpg")):
            raise
        # another process finished the same extraction first: use its copy
    return root


def _mat_vector(path: str, key: str, dataset: str) -> np.ndarray:
    from scipy.io import loadmat

    try:
        mat = loadmat(path)
    except Exception as e:  # scipy raises several types for malformed files
        raise ValueError(f"{dataset}: {path} is not a readable MAT file: {e}") from None
    if key not in mat:
        raise ValueError(f"{dataset}: {path} has no variable {key!r} (has "
                         f"{sorted(k for k in mat if not k.startswith('__'))})")
    return np.asarray(mat[key]).reshape(-1)


class Flowers(Dataset):
    """Oxford 102 Category Flowers (8,189 images).

    Args:
        data_file (str, optional): path of ``102flowers.tgz``; None downloads it. Default None.
        label_file (str, optional): path of ``imagelabels.mat``; None downloads it.
        setid_file (str, optional): path of ``setid.mat``; None downloads it.
        mode (str, optional): "train", "valid" or "test" (train and test swapped as in
            Paddle). Default "train".
        transform (Callable, optional): applied to each image. Default None.
        download (bool, optional): download missing files (md5-checked, cached). Default True.
        backend (str, optional): "pil" or "cv2"; None uses `fw.vision.get_image_backend`.

    Returns:
        Dataset: items ``(image, label)``: a PIL image (or an HWC float32 array with
        backend "cv2", after ``transform``) and an int64 array of shape [1] (labels
        1..102, as in the MAT file).

    Examples:
        .. code-block:: python

            >>> import fw
            >>> from fw.vision.datasets import Flowers
            >>> from fw.vision.datasets.flowers import MODE_FLAG
            >>> MODE_FLAG["train"]
            'tstid'
    """

    def __init__(self, data_file=None, label_file=None, setid_file=None, mode="train",
                 transform=None, download=True, backend=None):
        name = "Flowers"
        self.mode = check_mode(mode, name)
        self.backend = check_backend(backend, name)
        data_file = fetch(data_file, DATA_URL, DATA_MD5, "flowers", download, name,
                          "data_file")
        label_file = fetch(label_file, LABEL_URL, LABEL_MD5, "flowers", download, name,
                           "label_file")
        setid_file = fetch(setid_file, SETID_URL, SETID_MD5, "flowers", download, name,
                           "setid_file")
        self.transform = transform
        self.labels = _mat_vector(label_file, "labels", name).astype(np.int64)
        self.indexes = _mat_vector(setid_file, MODE_FLAG[self.mode], name).astype(np.int64)
        if len(self.indexes) and (self.indexes.min() < 1 or
                                  self.indexes.max() > len(self.labels)):
            raise ValueError(f"{name}: {setid_file} refers to images outside 1.."
                             f"{len(self.labels)} (the labels in {label_file})")
        self.data_path = _extract_images(data_file, name)
        self.dtype = default_float()

    def __getitem__(self, idx):
        from PIL import Image

        index = int(self.indexes[idx])
        label = np.array([self.labels[index - 1]], np.int64)
        path = os.path.join(self.data_path, "jpg", f"image_{index:05d}.jpg")
        with Image.open(path) as img:
            img.load()
            image = img.copy() if self.backend == "pil" else np.asarray(img)
        if self.transform is not None:
            image = self.transform(image)
        if self.backend == "pil":
            return image, label
        return as_dtype(image, self.dtype), label

    def __len__(self):
        return len(self.indexes)
