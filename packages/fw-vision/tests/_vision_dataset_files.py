"""Small synthetic files in the real formats of Paddle's datasets (gzipped IDX, the
CIFAR python-version tarballs of pickled batches, Flowers' tgz + MAT-v5 files, the VOC
trainval tar), each returned with the values written, for the dataset tests."""

from __future__ import annotations

import gzip
import io
import os
import pickle
import struct
import tarfile

import numpy as np
from PIL import Image


def write_idx_pair(directory, prefix, n, seed=0):
    """``<prefix>-images-idx3-ubyte.gz`` / ``-labels-idx1-ubyte.gz`` with n samples."""
    rng = np.random.default_rng(seed)
    images = rng.integers(0, 256, (n, 28, 28), dtype=np.uint8)
    labels = rng.integers(0, 10, n, dtype=np.uint8)
    ip = os.path.join(directory, f"{prefix}-images-idx3-ubyte.gz")
    lp = os.path.join(directory, f"{prefix}-labels-idx1-ubyte.gz")
    with gzip.open(ip, "wb") as f:
        f.write(struct.pack(">IIII", 2051, n, 28, 28) + images.tobytes())
    with gzip.open(lp, "wb") as f:
        f.write(struct.pack(">II", 2049, n) + labels.tobytes())
    return ip, lp, images, labels


def _add(tar, name, data: bytes):
    info = tarfile.TarInfo(name)
    info.size = len(data)
    tar.addfile(info, io.BytesIO(data))


class Py2Pickler(pickle._Pickler):
    """Writes ``bytes`` as Python 2 ``str`` (SHORT_BINSTRING / BINSTRING opcodes), so the
    pickle reads back as the real CIFAR files (written by Python 2) do: with
    ``encoding="latin1"`` its keys are str and NumPy's raw data a latin-1 str."""

    dispatch = dict(pickle._Pickler.dispatch)

    def save_py2_str(self, obj):
        n = len(obj)
        if n < 256:
            self.write(pickle.SHORT_BINSTRING + bytes([n]) + obj)
        else:
            self.write(pickle.BINSTRING + struct.pack("<i", n) + obj)
        self.memoize(obj)

    dispatch[bytes] = save_py2_str


def py2_pickle(obj) -> bytes:
    buf = io.BytesIO()
    Py2Pickler(buf, protocol=2).dump(obj)
    # NumPy 1.x (which wrote the real files) names its module numpy.core
    return buf.getvalue().replace(b"cnumpy._core.multiarray\n", b"cnumpy.core.multiarray\n")


def write_cifar(path, hundred=False, per_batch=3, seed=0, payload=None):
    """A CIFAR python-version tar.gz: batches pickled (protocol 2, bytes keys, as the
    originals) with uint8 [n, 3072] rows. Returns {split: (images HWC, labels)}.
    ``payload``: bytes stored instead of the first batch (a hostile pickle)."""
    rng = np.random.default_rng(seed)
    top = "cifar-100-python" if hundred else "cifar-10-batches-py"
    names = ({"train": ["train"], "test": ["test"]} if hundred else
             {"train": [f"data_batch_{i}" for i in range(1, 6)], "test": ["test_batch"]})
    key = b"fine_labels" if hundred else b"labels"
    out = {}
    with tarfile.open(path, "w:gz") as tar:
        _add(tar, f"{top}/batches.meta" if not hundred else f"{top}/meta",
             py2_pickle({b"label_names": [b"a", b"b"]}))
        for split, members in names.items():
            imgs, labs = [], []
            for m in members:
                data = rng.integers(0, 256, (per_batch, 3072), dtype=np.uint8)
                lab = rng.integers(0, 100 if hundred else 10, per_batch).tolist()
                blob = py2_pickle({b"batch_label": b"x", key: lab, b"data": data})
                if payload is not None and not imgs:
                    blob = payload
                _add(tar, f"{top}/{m}", blob)
                imgs.append(data.reshape(-1, 3, 32, 32).transpose(0, 2, 3, 1))
                labs += lab
            out[split] = (np.concatenate(imgs), np.asarray(labs))
    return out


def jpeg_bytes(arr):
    buf = io.BytesIO()
    Image.fromarray(arr).save(buf, format="JPEG", quality=95)
    return buf.getvalue()


def write_flowers(directory, n=6, seed=0):
    """102flowers.tgz (jpg/image_NNNNN.jpg), imagelabels.mat, setid.mat."""
    from scipy.io import savemat

    rng = np.random.default_rng(seed)
    tgz = os.path.join(directory, "102flowers.tgz")
    decoded = {}
    with tarfile.open(tgz, "w:gz") as tar:
        for i in range(1, n + 1):
            data = jpeg_bytes(rng.integers(0, 256, (5 + i, 7, 3), dtype=np.uint8))
            _add(tar, f"jpg/image_{i:05d}.jpg", data)
            decoded[i] = np.asarray(Image.open(io.BytesIO(data)))
    labels = rng.integers(1, 103, n)
    savemat(os.path.join(directory, "imagelabels.mat"), {"labels": labels[None]})
    split = {"trnid": np.array([[1, 4]]), "valid": np.array([[2]]),
             "tstid": np.array([[3, 5, 6]])}
    savemat(os.path.join(directory, "setid.mat"), split)
    return (tgz, os.path.join(directory, "imagelabels.mat"),
            os.path.join(directory, "setid.mat"), decoded, labels, split)


def write_voc(path, seed=0):
    """A VOCtrainval tar with 3 images, their class maps, and the split lists."""
    rng = np.random.default_rng(seed)
    ids = ["2007_000001", "2007_000002", "2008_000003"]
    lists = {"train": ids[:2], "val": ids[2:], "trainval": ids}
    samples = {}
    with tarfile.open(path, "w") as tar:
        for k, v in lists.items():
            _add(tar, f"VOCdevkit/VOC2012/ImageSets/Segmentation/{k}.txt",
                 ("\n".join(v) + "\n").encode())
        for i in ids:
            img = rng.integers(0, 256, (6, 8, 3), dtype=np.uint8)
            data = jpeg_bytes(img)
            cls = rng.integers(0, 21, (6, 8), dtype=np.uint8)
            buf = io.BytesIO()
            pal = Image.fromarray(cls, mode="P")
            pal.putpalette([v for c in range(256) for v in (c, 255 - c, c // 2)])
            pal.save(buf, format="PNG")
            _add(tar, f"VOCdevkit/VOC2012/JPEGImages/{i}.jpg", data)
            _add(tar, f"VOCdevkit/VOC2012/SegmentationClass/{i}.png", buf.getvalue())
            samples[i] = (np.asarray(Image.open(io.BytesIO(data))), cls)
    return ids, lists, samples
