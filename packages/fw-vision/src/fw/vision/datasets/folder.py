"""Datasets over a directory tree of image files (Paddle's
``paddle.vision.datasets.DatasetFolder`` / ``ImageFolder``)."""

from __future__ import annotations

import os
from collections.abc import Sequence

import numpy as np

from fw.io import Dataset

__all__ = ["DatasetFolder", "ImageFolder", "IMG_EXTENSIONS", "has_valid_extension",
           "default_loader"]

IMG_EXTENSIONS = (".jpg", ".jpeg", ".png", ".ppm", ".bmp", ".pgm", ".tif", ".tiff", ".webp")


def has_valid_extension(filename: str, extensions: Sequence[str]) -> bool:
    """Whether ``filename`` ends with one of ``extensions`` (case-insensitive)."""
    if not isinstance(extensions, (list, tuple)):
        raise TypeError(f"has_valid_extension: argument 'extensions' must be a list or tuple, "
                        f"got {type(extensions).__name__}")
    return filename.lower().endswith(tuple(e.lower() for e in extensions))


def pil_loader(path):
    from PIL import Image

    with Image.open(path) as img:
        return img.convert("RGB")


def cv2_loader(path):
    """An RGB HWC uint8 array, what Paddle's OpenCV loader returns (after its BGR->RGB
    conversion), decoded with pillow so OpenCV is not needed."""
    return np.asarray(pil_loader(path))


def default_loader(path):
    """`cv2_loader` when the image backend is "cv2", else `pil_loader`."""
    from fw.vision.image import get_image_backend

    return cv2_loader(path) if get_image_backend() == "cv2" else pil_loader(path)


def _validity(extensions, is_valid_file, what):
    """The file filter. Paddle always filters by extension (IMG_EXTENSIONS by default)
    and silently ignores ``is_valid_file``; fw applies ``is_valid_file`` when given
    (alone, or together with explicitly given ``extensions``), as torchvision does."""
    if is_valid_file is not None and not callable(is_valid_file):
        raise TypeError(f"{what}: argument 'is_valid_file' must be callable, got "
                        f"{type(is_valid_file).__name__}")
    if extensions is not None and not isinstance(extensions, (list, tuple)):
        raise TypeError(f"{what}: argument 'extensions' must be a list or tuple, got "
                        f"{type(extensions).__name__}")
    if is_valid_file is None:
        exts = IMG_EXTENSIONS if extensions is None else extensions
        return exts, lambda p: has_valid_extension(p, exts)
    if extensions is None:
        return None, is_valid_file
    return extensions, lambda p: has_valid_extension(p, extensions) and is_valid_file(p)


def _walk(directory):
    """Files under ``directory`` in a reproducible order (sorted walk, symlinks followed
    as in Paddle)."""
    for root, dirs, files in sorted(os.walk(directory, followlinks=True)):
        dirs.sort()
        for name in sorted(files):
            yield os.path.join(root, name)


class DatasetFolder(Dataset):
    """A dataset of files arranged one directory per class: ``root/<class>/.../<file>``.
    Classes are the sorted subdirectory names, numbered from 0.

    Args:
        root (str): the root directory.
        loader (Callable, optional): reads a file path into a sample; default: an RGB PIL
            image (an RGB array with image backend "cv2").
        extensions (list[str]|tuple[str], optional): file extensions to accept; default
            `IMG_EXTENSIONS` unless ``is_valid_file`` is given.
        transform (Callable, optional): applied to each sample. Default None.
        is_valid_file (Callable, optional): path -> bool filter. Default None.

    Attributes:
        classes (list[str]), class_to_idx (dict[str, int]), samples (list[(path, idx)]),
        targets (list[int]).

    Returns:
        Dataset: items ``(sample, class_index)``.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> import os, tempfile
            >>> from PIL import Image
            >>> from fw.vision.datasets import DatasetFolder
            >>> root = tempfile.mkdtemp()
            >>> for cls in ("cat", "dog"):
            ...     os.makedirs(os.path.join(root, cls))
            ...     Image.new("RGB", (4, 4)).save(os.path.join(root, cls, "a.png"))
            >>> ds = DatasetFolder(root)
            >>> ds.classes, ds.class_to_idx, len(ds), ds[1][1]
            (['cat', 'dog'], {'cat': 0, 'dog': 1}, 2, 1)
    """

    def __init__(self, root, loader=None, extensions=None, transform=None, is_valid_file=None):
        self.root = root
        self.transform = transform
        exts, valid = _validity(extensions, is_valid_file, "DatasetFolder")
        directory = os.path.expanduser(root)
        if not os.path.isdir(directory):
            raise FileNotFoundError(f"DatasetFolder: argument 'root' {root!r} is not a "
                                    f"directory")
        classes = sorted(d.name for d in os.scandir(directory) if d.is_dir())
        class_to_idx = {c: i for i, c in enumerate(classes)}
        samples = [(p, class_to_idx[c]) for c in classes
                   for p in _walk(os.path.join(directory, c)) if valid(p)]
        if not samples:
            raise RuntimeError(f"DatasetFolder: found 0 files in the class subfolders of "
                               f"{root}; accepted extensions: "
                               f"{','.join(exts) if exts else '(is_valid_file)'}")
        self.loader = default_loader if loader is None else loader
        self.extensions = exts
        self.classes = classes
        self.class_to_idx = class_to_idx
        self.samples = samples
        self.targets = [s[1] for s in samples]

    def __getitem__(self, index):
        path, target = self.samples[index]
        sample = self.loader(path)
        if self.transform is not None:
            sample = self.transform(sample)
        return sample, target

    def __len__(self):
        return len(self.samples)


class ImageFolder(Dataset):
    """A dataset of all image files under ``root`` (any depth), without labels.

    Args:
        root (str): the root directory.
        loader (Callable, optional): reads a file path into a sample (as `DatasetFolder`).
        extensions (list[str]|tuple[str], optional): accepted extensions; default
            `IMG_EXTENSIONS` unless ``is_valid_file`` is given.
        transform (Callable, optional): applied to each sample. Default None.
        is_valid_file (Callable, optional): path -> bool filter. Default None.

    Returns:
        Dataset: items ``[sample]`` (a one-element list, as Paddle's).

    Examples:
        .. code-block:: python

            >>> import fw
            >>> import os, tempfile
            >>> from PIL import Image
            >>> from fw.vision.datasets import ImageFolder
            >>> root = tempfile.mkdtemp()
            >>> Image.new("RGB", (4, 4)).save(os.path.join(root, "a.png"))
            >>> ds = ImageFolder(root)
            >>> len(ds), ds[0][0].size
            (1, (4, 4))
    """

    def __init__(self, root, loader=None, extensions=None, transform=None, is_valid_file=None):
        self.root = root
        exts, valid = _validity(extensions, is_valid_file, "ImageFolder")
        directory = os.path.expanduser(root)
        if not os.path.isdir(directory):
            raise FileNotFoundError(f"ImageFolder: argument 'root' {root!r} is not a directory")
        samples = [p for p in _walk(directory) if valid(p)]
        if not samples:
            raise RuntimeError(f"ImageFolder: found 0 files under {root}; accepted "
                               f"extensions: {','.join(exts) if exts else '(is_valid_file)'}")
        self.loader = default_loader if loader is None else loader
        self.extensions = exts
        self.samples = samples
        self.transform = transform

    def __getitem__(self, index):
        sample = self.loader(self.samples[index])
        if self.transform is not None:
            sample = self.transform(sample)
        return [sample]

    def __len__(self):
        return len(self.samples)
