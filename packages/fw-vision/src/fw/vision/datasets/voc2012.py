"""PASCAL VOC 2012 segmentation (Paddle's ``paddle.vision.datasets.VOC2012``): images
and class maps read straight from the (uncompressed) trainval tar, nothing extracted."""

from __future__ import annotations

import io

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

__all__ = ["VOC2012"]

# Paddle's published file and md5 sum (paddle/vision/datasets/voc2012.py)
VOC_URL = "https://dataset.bj.bcebos.com/voc/VOCtrainval_11-May-2012.tar"
VOC_MD5 = "6cd6e144f989b92b3379bac3b3de84fd"
SET_FILE = "VOCdevkit/VOC2012/ImageSets/Segmentation/{}.txt"
DATA_FILE = "VOCdevkit/VOC2012/JPEGImages/{}.jpg"
LABEL_FILE = "VOCdevkit/VOC2012/SegmentationClass/{}.png"
# Paddle's mapping of modes to the official lists
MODE_FLAG = {"train": "trainval", "test": "train", "valid": "val"}


class VOC2012(Dataset):
    """PASCAL VOC 2012 semantic segmentation.

    Args:
        data_file (str, optional): path of ``VOCtrainval_11-May-2012.tar``; None downloads
            it (about 2 GB). Default None.
        mode (str, optional): "train" (trainval list), "valid" (val) or "test" (train), as
            Paddle maps them. Default "train".
        transform (Callable, optional): applied to each image (not to the label). Default None.
        download (bool, optional): download a missing file (md5-checked, cached). Default True.
        backend (str, optional): "pil" or "cv2"; None uses `fw.vision.get_image_backend`.

    Returns:
        Dataset: items ``(image, label)``: PIL images (the JPEG and the palette PNG), or
        with backend "cv2" float32 arrays (HWC image, HW class map).

    Examples:
        .. code-block:: python

            >>> import fw
            >>> from fw.vision.datasets.voc2012 import MODE_FLAG
            >>> MODE_FLAG["valid"]
            'val'
    """

    def __init__(self, data_file=None, mode="train", transform=None, download=True,
                 backend=None):
        name = "VOC2012"
        self.mode = check_mode(mode, name)
        self.backend = check_backend(backend, name)
        self.flag = MODE_FLAG[self.mode]
        self.data_file = fetch(data_file, VOC_URL, VOC_MD5, "voc2012", download, name,
                               "data_file")
        self.transform = transform
        self.tar = TarMembers(self.data_file, name)
        set_file = SET_FILE.format(self.flag)
        if set_file not in self.tar.names:
            raise ValueError(f"{name}: {self.data_file} has no {set_file} (not a VOC2012 "
                             f"trainval archive?)")
        ids = [ln.strip() for ln in self.tar.read(set_file).decode("utf-8").splitlines()]
        ids = [i for i in ids if i]
        self.data = [DATA_FILE.format(i) for i in ids]
        self.labels = [LABEL_FILE.format(i) for i in ids]
        missing = [p for p in self.data + self.labels if p not in self.tar.names]
        if missing:
            raise ValueError(f"{name}: {self.data_file} lists {len(missing)} files it does "
                             f"not hold, e.g. {missing[0]}")
        self.dtype = default_float()

    def __getitem__(self, idx):
        from PIL import Image

        data = Image.open(io.BytesIO(self.tar.read(self.data[idx])))
        label = Image.open(io.BytesIO(self.tar.read(self.labels[idx])))
        data.load()
        label.load()
        if self.backend == "cv2":
            data, label = np.asarray(data), np.asarray(label)
        if self.transform is not None:
            data = self.transform(data)
        if self.backend == "cv2":
            return as_dtype(data, self.dtype), label.astype(self.dtype)
        return data, label

    def __len__(self):
        return len(self.data)
