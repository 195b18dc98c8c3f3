"""CIFAR-10 and CIFAR-100 (Paddle's ``paddle.vision.datasets.Cifar10`` /
``Cifar100``) from the "python version" tarballs. Their batches are pickles, read
with fw-nn's restricted unpickler (`fw.nn.safe_pickle`: arrays, lists, dicts, bytes
only; any other global is refused by name before anything runs), never plain pickle."""

from __future__ import annotations

import numpy as np

from fw.io import Dataset
from fw.vision.datasets._common import (
    TarMembers,
    as_dtype,
    check_backend,
    check_mode,
    default_float,
    fetch,
)

__all__ = ["Cifar10", "Cifar100"]

URL_PREFIX = "https://dataset.bj.bcebos.com/cifar/"
# Paddle's published files and md5 sums (paddle/vision/datasets/cifar.py)
CIFAR10_URL = URL_PREFIX + "cifar-10-python.tar.gz"
CIFAR10_MD5 = "c58f30108f718f92721af3b95e74349a"
CIFAR100_URL = URL_PREFIX + "cifar-100-python.tar.gz"
CIFAR100_MD5 = "eb9058c3a382ffc7106e4002c42a8d85"


def _get(batch: dict, key: str):
    # Python-2 pickles read with latin1 give str keys, with encoding="bytes" bytes keys
    for k in (key, key.encode()):
        if k in batch:
            return batch[k]
    return None


class Cifar10(Dataset):
    """CIFAR-10: 50,000 train / 10,000 test 32x32 colour images of 10 classes.

    Args:
        data_file (str, optional): path of ``cifar-10-python.tar.gz``; None downloads it
            when ``download`` is True. Default None.
        mode (str, optional): "train" or "test". Default "train".
        transform (Callable, optional): applied to each image. Default None.
        download (bool, optional): download a missing file into fw's cache (md5-checked;
            a cached file is reused without network). Default True.
        backend (str, optional): "pil" or "cv2"; None uses `fw.vision.get_image_backend`.
            Default None.

    Returns:
        Dataset: items ``(image, label)``: a PIL RGB image (or a [32, 32, 3] float32 array
        with backend "cv2", after ``transform``) and an int64 scalar array.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> from fw.vision.datasets import Cifar10
            >>> Cifar10.URL
            'https://dataset.bj.bcebos.com/cifar/cifar-10-python.tar.gz'
    """

    URL = CIFAR10_URL
    MD5 = CIFAR10_MD5
    # which tar members hold the split: data_batch_1..5 / test_batch
    FLAGS = {"train": "data_batch", "test": "test_batch"}
    LABEL_KEYS = ("labels",)

    def __init__(self, data_file=None, mode="train", transform=None, download=True,
                 backend=None):
        name = type(self).__name__
        self.mode = check_mode(mode, name, ("train", "test"))
        self.backend = check_backend(backend, name)
        self.data_file = fetch(data_file, self.URL, self.MD5, "cifar", download, name,
                               "data_file")
        self.transform = transform
        self._load(name)
        self.dtype = default_float()

    def _load(self, name):
        from fw.nn import safe_pickle

        tar = TarMembers(self.data_file, name)
        flag = self.FLAGS[self.mode]
        members = sorted(n for n in tar.names if flag in n.rsplit("/", 1)[-1])
        if not members:
            raise ValueError(f"{name}: {self.data_file} has no '{flag}' batch (not a CIFAR "
                             f"python-version archive?)")
        images, labels = [], []
        for m in members:
            batch = safe_pickle.loads(tar.read(m), what=f"{name}: batch {m!r} of "
                                                        f"{self.data_file}")
            data = _get(batch, "data") if isinstance(batch, dict) else None
            lab = next((v for v in (_get(batch, k) for k in self.LABEL_KEYS) if v is not None),
                       None) if isinstance(batch, dict) else None
            if data is None or lab is None:
                raise ValueError(f"{name}: batch {m!r} of {self.data_file} lacks 'data' or "
                                 f"{' / '.join(repr(k) for k in self.LABEL_KEYS)}")
            data = np.asarray(data)
            if data.dtype != np.uint8 or data.ndim != 2 or data.shape[1] != 3 * 32 * 32 \
                    or len(data) != len(lab):
                raise ValueError(f"{name}: batch {m!r} of {self.data_file} holds data of "
                                 f"shape {list(data.shape)} and dtype {data.dtype} with "
                                 f"{len(lab)} labels; expected [n, 3072] uint8 and n labels")
            images.append(data)
            labels.append(np.asarray(lab, np.int64))
        tar.close()
        # rows are 1024 red, 1024 green, 1024 blue values: CHW -> HWC once
        self.images = np.concatenate(images).reshape(-1, 3, 32, 32).transpose(0, 2, 3, 1)
        self.labels = np.concatenate(labels)

    def __getitem__(self, idx):
        image = self.images[idx]
        label = np.array(self.labels[idx], np.int64)
        if self.backend == "pil":
            from PIL import Image

            image = Image.fromarray(np.ascontiguousarray(image))
        if self.transform is not None:
            image = self.transform(image)
        if self.backend == "pil":
            return image, label
        return as_dtype(image, self.dtype), label

    def __len__(self):
        return len(self.labels)


class Cifar100(Cifar10):
    """CIFAR-100: like `Cifar10` (50,000 train / 10,000 test 32x32 colour images)
    with 100 fine labels (``cifar-100-python.tar.gz``, members ``train`` / ``test``).

    Args:
        data_file (str, optional): path of ``cifar-100-python.tar.gz``; None downloads it
            when ``download`` is True. Default: None.
        mode (str, optional): "train" or "test". Default: "train".
        transform (Callable, optional): applied to each image. Default: None.
        download (bool, optional): download a missing file into fw's cache (md5-checked;
            a cached file is reused without network). Default: True.
        backend (str, optional): "pil" or "cv2"; None uses
            `fw.vision.get_image_backend`. Default: None.

    Returns:
        Dataset: items ``(image, label)``, as `Cifar10`'s (labels 0 to 99).

    Examples:
        >>> import fw
        >>> from fw.vision.datasets import Cifar100
        >>> Cifar100.MD5
        'eb9058c3a382ffc7106e4002c42a8d85'
    """

    URL = CIFAR100_URL
    MD5 = CIFAR100_MD5
    FLAGS = {"train": "train", "test": "test"}
    LABEL_KEYS = ("fine_labels", "labels")
