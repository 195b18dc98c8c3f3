"""`MmapStorage`: Paddle 3.3's memory-mapped file storage (``paddle.MmapStorage``).

The file is mapped read-only with NumPy's memmap: `get_slice` returns tensors whose
arrays are views of the mapping (no copy, pages read on first touch), so a large
weight file costs no memory until used. The views are read-only: an in-place op on
them raises (clone first). Loading never interprets the bytes as anything but the
dtype asked for, so no code in the file can run.
"""

from __future__ import annotations

import os

import numpy as np

from fw.core import dtypes as _dt
from fw.core.errors import InvalidArgumentError
from fw.core.tensor import wrap

__all__ = ["MmapStorage"]


class MmapStorage:
    """Map the first `nbytes` bytes of a file into memory.

    Args:
        filename (str): the file.
        nbytes (int): the number of bytes to map (at most the file's size).

    Examples:
        .. code-block:: python

            >>> import fw
            >>> import os, tempfile
            >>> import numpy as np
            >>> path = os.path.join(tempfile.mkdtemp(), "test.pp")
            >>> np.arange(20, dtype=np.float32).tofile(path)
            >>> t = fw.MmapStorage(path, 80)
            >>> t.get_slice(dtype=fw.float32, start=0, stop=20).reshape([4, 5])[1].tolist()
            [5.0, 6.0, 7.0, 8.0, 9.0]
    """

    def __init__(self, filename: str, nbytes: int):
        if not isinstance(filename, (str, os.PathLike)):
            raise InvalidArgumentError(f"MmapStorage: filename must be a path, got "
                                       f"{type(filename).__name__}")
        size = os.path.getsize(filename)
        nbytes = int(nbytes)
        if nbytes <= 0 or nbytes > size:
            raise InvalidArgumentError(f"MmapStorage: nbytes must be in [1, {size}] (the size "
                                       f"of {os.fspath(filename)!r}), got {nbytes}")
        self.filename = os.fspath(filename)
        self.nbytes = nbytes
        self._map = np.memmap(self.filename, dtype=np.uint8, mode="r", shape=(nbytes,))

    def get_slice(self, dtype="uint8", start: int = 0, stop: int = -1, step: int = 1):
        """Elements ``[start:stop:step]`` of the mapping read as `dtype` (indices count
        elements of `dtype`; ``stop=-1`` is the end).

        Args:
            dtype (str | fw.dtype, optional): the element type. Default 'uint8'.
            start (int, optional): the first element. Default 0.
            stop (int, optional): one past the last element; -1 for the end.
            step (int, optional): the stride in elements. Default 1.

        Returns:
            Tensor: a 1-D read-only tensor over the mapped bytes.

        Examples:
            >>> import fw
            >>> import os, tempfile
            >>> import numpy as np
            >>> path = os.path.join(tempfile.mkdtemp(), "data.bin")
            >>> np.arange(8, dtype=np.float32).tofile(path)
            >>> m = fw.MmapStorage(path, 32)
            >>> m.get_slice("float32", 2, 6).tolist()
            [2.0, 3.0, 4.0, 5.0]
            >>> m.get_slice("float32", 0, -1, 3).tolist()
            [0.0, 3.0, 6.0]
            >>> m.get_slice("uint8", 0, 4).tolist()   # the bytes of 0.0f
            [0, 0, 0, 0]
        """
        d = _dt.convert_dtype("uint8" if dtype is None else dtype)
        n = self.nbytes // d.itemsize
        if stop == -1:
            stop = n
        if not (0 <= start <= stop <= n) or step < 1:
            raise InvalidArgumentError(
                f"MmapStorage.get_slice: need 0 <= start <= stop <= {n} ({d.name} elements in "
                f"{self.nbytes} bytes) and step >= 1, got start={start}, stop={stop}, "
                f"step={step}")
        arr = self._map[:n * d.itemsize].view(d.np)[start:stop:step]
        return wrap(np.asarray(arr))

    def __repr__(self):
        return f"MmapStorage({self.filename!r}, nbytes={self.nbytes})"
