"""PyTorch checkpoints (``torch.save``'s zip format: ``.bin``, ``.pt``, ``.pth``) read
without PyTorch and without running code from the file.

The zip holds ``<name>/data.pkl`` (a pickle of the object with each tensor as
``torch._utils._rebuild_tensor_v2(storage, offset, size, stride, ...)`` and each storage
as a persistent id ``("storage", torch.<Type>Storage, key, location, numel)``) and the
storages' raw bytes as ``<name>/data/<key>`` records (format: PyTorch's
``torch/serialization.py``; only those facts are used). The pickle goes through
`fw.nn.safe_pickle.SafeUnpickler`, with the allow-list extended by the tensor and
storage rebuilders below: storages become NumPy arrays over the zip records (sizes
checked against the record), tensors become NumPy arrays (views bounds-checked against
their storage, then copied), ``location`` is ignored (everything lands on the CPU).
Any other global (``torch.nn.Module`` subclasses from a pickled whole model, ``os.system``,
...) is refused by name. The legacy pre-1.6 format (not a zip) is refused.
"""

from __future__ import annotations

import errno
import io
import math
import os
import struct
import zipfile
import zlib

import ml_dtypes
import numpy as np

from fw.nn.safe_pickle import SafeUnpickler, UnsafePickleError, check_plain

__all__ = ["load", "is_torch_zip", "TORCH_STORAGE_DTYPES"]

TORCH_STORAGE_DTYPES = {
    "DoubleStorage": np.float64, "FloatStorage": np.float32, "HalfStorage": np.float16,
    "BFloat16Storage": ml_dtypes.bfloat16, "LongStorage": np.int64, "IntStorage": np.int32,
    "ShortStorage": np.int16, "CharStorage": np.int8, "ByteStorage": np.uint8,
    "BoolStorage": np.bool_, "ComplexFloatStorage": np.complex64,
    "ComplexDoubleStorage": np.complex128,
}
# torch.float32 etc. appear in newer pickles (UntypedStorage + dtype); same mapping
_TORCH_DTYPES = {
    "float64": np.float64, "float32": np.float32, "float16": np.float16,
    "bfloat16": ml_dtypes.bfloat16, "int64": np.int64, "int32": np.int32, "int16": np.int16,
    "int8": np.int8, "uint8": np.uint8, "bool": np.bool_, "complex64": np.complex64,
    "complex128": np.complex128,
}
_MAX_PICKLE = 1 << 30
# what zipfile raises for a damaged archive besides BadZipFile (forged flags, versions,
# compression methods, offsets): all reported as a corrupted file
_ZIP_ERRORS = (zlib.error, EOFError, NotImplementedError, RuntimeError, struct.error,
               OSError)


def _is_corruption(e) -> bool:
    # a real I/O failure (permissions, a vanished file) is not the file's fault
    return not isinstance(e, OSError) or e.errno in (None, errno.EINVAL)


class _StorageType:
    """What ``torch.<Type>Storage`` resolves to: only its dtype."""

    def __init__(self, name, dtype):
        self.name, self.dtype = name, np.dtype(dtype)

    def __call__(self, *a, **k):  # a pickle calling it (not a torch checkpoint)
        raise UnsafePickleError(f"fw.hub.torch_pickle: torch.{self.name} called as a "
                                f"function; only storage references are allowed")


class _TorchDtype:
    def __init__(self, name, dtype):
        self.name, self.dtype = name, np.dtype(dtype)


def _ints(x, what):
    if isinstance(x, int) and not isinstance(x, bool):
        return (x,)
    if not isinstance(x, tuple) or not all(isinstance(i, int) and not isinstance(i, bool)
                                           for i in x):
        raise UnsafePickleError(f"fw.hub.torch_pickle: tensor {what} {str(x)[:60]} is not a "
                                f"tuple of ints")
    return x


def _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad=False,
                       backward_hooks=None, metadata=None):
    if not isinstance(storage, np.ndarray) or storage.ndim != 1:
        raise UnsafePickleError("fw.hub.torch_pickle: _rebuild_tensor_v2 without a storage")
    (offset,) = _ints(storage_offset, "offset")
    size, stride = _ints(size, "size"), _ints(stride, "stride")
    if len(size) != len(stride) or offset < 0 or any(s < 0 for s in size) \
            or any(s < 0 for s in stride) or len(size) > 64:
        raise UnsafePickleError(f"fw.hub.torch_pickle: tensor size {size} / stride {stride} "
                                f"/ offset {offset} are inconsistent")
    if math.prod(size) == 0:
        return np.zeros(size, storage.dtype)
    last = offset + sum((n - 1) * s for n, s in zip(size, stride))
    if last >= storage.shape[0]:
        raise UnsafePickleError(f"fw.hub.torch_pickle: tensor of size {size}, stride {stride}, "
                                f"offset {offset} reaches element {last} of a storage of "
                                f"{storage.shape[0]}")
    item = storage.dtype.itemsize
    view = np.lib.stride_tricks.as_strided(storage[offset:], shape=size,
                                           strides=[s * item for s in stride], writeable=False)
    return np.array(view, copy=True, order="C")


def _rebuild_parameter(data, requires_grad=False, backward_hooks=None, *rest):
    if not isinstance(data, np.ndarray):
        raise UnsafePickleError("fw.hub.torch_pickle: _rebuild_parameter without a tensor")
    return data


def _torch_globals() -> dict:
    g = {("torch._utils", "_rebuild_tensor_v2"): _rebuild_tensor_v2,
         ("torch._utils", "_rebuild_parameter"): _rebuild_parameter}
    for name, dt in TORCH_STORAGE_DTYPES.items():
        g[("torch", name)] = _StorageType(name, dt)
    for name, dt in _TORCH_DTYPES.items():
        g[("torch", name)] = _TorchDtype(name, dt)
    return g


def _from_bytes(buf, dtype, big_endian):
    if not big_endian or dtype.itemsize == 1:
        return np.frombuffer(buf, dtype=dtype)
    # swap through unsigned ints of the element (or complex component) size, which also
    # works for ml_dtypes' bfloat16
    unit = dtype.itemsize // 2 if dtype.kind == "c" else dtype.itemsize
    u = np.frombuffer(buf, dtype=np.dtype(f">u{unit}"))
    return u.astype(np.dtype(f"<u{unit}")).view(dtype)


class _TorchUnpickler(SafeUnpickler):
    def __init__(self, file, zf, prefix, byteorder, what):
        super().__init__(file, what=what, extra_globals=_torch_globals(), encoding="utf-8")
        self.zf, self.prefix, self.byteorder = zf, prefix, byteorder
        self.storages: dict = {}

    def persistent_load(self, pid):
        if not (isinstance(pid, tuple) and len(pid) == 5 and pid[0] == "storage"):
            raise UnsafePickleError(f"{self.what}: unexpected persistent id {str(pid)[:80]}")
        _, stype, key, _location, numel = pid
        if isinstance(stype, _TorchDtype):  # UntypedStorage pickles: numel is bytes
            dtype, nbytes = stype.dtype, numel
        elif isinstance(stype, _StorageType):
            dtype, nbytes = stype.dtype, numel * stype.dtype.itemsize \
                if isinstance(numel, int) else -1
        else:
            raise UnsafePickleError(f"{self.what}: storage of unknown type {str(stype)[:60]}")
        if not isinstance(key, str) or not key.isalnum() or not isinstance(numel, int) \
                or numel < 0:
            raise UnsafePickleError(f"{self.what}: malformed storage id {str(pid)[:80]}")
        if key in self.storages:
            return self.storages[key]
        name = f"{self.prefix}data/{key}"
        try:
            info = self.zf.getinfo(name)
        except KeyError:
            raise UnsafePickleError(f"{self.what}: storage record {name} is missing") from None
        if info.file_size != nbytes:
            raise UnsafePickleError(f"{self.what}: storage record {name} has {info.file_size} "
                                    f"bytes, its id says {nbytes} ({numel} x {dtype})")
        arr = _from_bytes(self.zf.read(info), dtype, self.byteorder == "big")
        self.storages[key] = arr
        return arr


def is_torch_zip(path) -> bool:
    """Whether `path` is a ``torch.save`` zip (a ``*/data.pkl`` record)."""
    try:
        with zipfile.ZipFile(path) as zf:
            return any(n.endswith("/data.pkl") or n == "data.pkl" for n in zf.namelist())
    except (zipfile.BadZipFile, OSError):
        return False


def load(path):
    """Read a ``torch.save`` zip checkpoint as plain data with NumPy arrays for tensors.

    Args:
        path (str): a ``.bin`` / ``.pt`` / ``.pth`` file written by ``torch.save``.

    Returns:
        The saved object (typically an ``OrderedDict`` name -> ``numpy.ndarray``;
        bfloat16 tensors come back as ``ml_dtypes.bfloat16`` arrays).

    Raises:
        fw.nn.safe_pickle.UnsafePickleError: a global other than tensor/storage
            rebuilders and plain containers (named), or inconsistent records.
        ValueError: not a zip checkpoint (e.g. the legacy pre-1.6 format).

    Examples:
        .. code-block:: python

            >>> import fw
            >>> import os, tempfile, numpy as np
            >>> from fw.hub import torch_pickle
            >>> from fw.hub.testing import write_torch_checkpoint
            >>> p = os.path.join(tempfile.mkdtemp(), "model.bin")
            >>> write_torch_checkpoint(p, {"fc.weight": np.eye(2, dtype=np.float32)})
            >>> torch_pickle.load(p)["fc.weight"]
            array([[1., 0.],
                   [0., 1.]], dtype=float32)
    """
    path = os.fspath(path)
    what = f"fw.hub.torch_pickle: {path}"
    try:
        zf = zipfile.ZipFile(path)
    except _ZIP_ERRORS as e:
        if not _is_corruption(e):
            raise
        raise ValueError(f"{what}: corrupted zip ({type(e).__name__}: {str(e)[:200]})") from None
    except zipfile.BadZipFile:
        with open(path, "rb") as f:
            head = f.read(2)
        kind = "a legacy (pre-1.6, non-zip) PyTorch file" if head[:1] == b"\x80" \
            else "not a PyTorch zip checkpoint"
        raise ValueError(f"{what} is {kind}; re-save it with torch.save in PyTorch >= 1.6 "
                         f"(or export safetensors)") from None
    try:
        with zf:
            obj = _load_zip(zf, what)
    except (zipfile.BadZipFile, *_ZIP_ERRORS) as e:
        if not _is_corruption(e):
            raise
        raise ValueError(f"{what}: corrupted zip ({type(e).__name__}: {str(e)[:200]})") from None
    return check_plain(obj, what)


def _load_zip(zf, what):
    pkls = [n for n in zf.namelist() if n.endswith("/data.pkl") or n == "data.pkl"]
    if len(pkls) != 1:
        raise ValueError(f"{what}: expected one data.pkl record, found {len(pkls)}")
    prefix = pkls[0][: -len("data.pkl")]
    info = zf.getinfo(pkls[0])
    if info.file_size > _MAX_PICKLE:
        raise UnsafePickleError(f"{what}: data.pkl is {info.file_size} bytes")
    byteorder = "little"
    if f"{prefix}byteorder" in zf.namelist():
        byteorder = zf.read(f"{prefix}byteorder").decode("ascii", "replace").strip()
        if byteorder not in ("little", "big"):
            raise UnsafePickleError(f"{what}: byteorder record {byteorder[:20]!r}")
    up = _TorchUnpickler(io.BytesIO(zf.read(info)), zf, prefix, byteorder, what)
    try:
        obj = up.load()
    except UnsafePickleError:
        raise
    except Exception as e:  # a malformed pickle: name it, never a bare traceback
        raise UnsafePickleError(f"{what}: unreadable pickle ({type(e).__name__}: "
                                f"{str(e)[:200]})") from None
    return obj
