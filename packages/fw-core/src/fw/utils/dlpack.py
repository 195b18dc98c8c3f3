"""DLPack exchange: zero-copy tensors between fw and NumPy, PyTorch, CuPy, JAX.

`to_dlpack(x)` returns a DLPack capsule of a tensor's memory; `from_dlpack(obj)`
accepts any object implementing ``__dlpack__``/``__dlpack_device__`` (the
current protocol) or a legacy capsule, and returns a Tensor sharing its memory.
Tensors also implement the protocol themselves, so ``np.from_dlpack(t)`` and
``torch.from_dlpack(t)`` work directly.

bfloat16: NumPy's DLPack importer does not know the DLPack bfloat16 code, so an
incoming bfloat16 tensor is imported as int16 (same bits) and viewed as
ml_dtypes.bfloat16 — still zero-copy. Exporting a bfloat16 tensor is not
supported (NumPy's exporter refuses the custom dtype): cast it first.
"""

from __future__ import annotations

import ctypes

import numpy as np

from fw.core import dtypes as _dt
from fw.core.errors import InvalidTypeError, UnsupportedError
from fw.core.tensor import Tensor, wrap

__all__ = ["to_dlpack", "from_dlpack"]

_kDLCPU, _kDLCUDA = 1, 2
_kDLInt, _kDLBfloat = 0, 4


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", _DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


_get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_get_pointer.restype = ctypes.c_void_p
_get_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_is_valid = ctypes.pythonapi.PyCapsule_IsValid
_is_valid.restype = ctypes.c_int
_is_valid.argtypes = [ctypes.py_object, ctypes.c_char_p]


def _dltensor(capsule) -> _DLTensor:
    """The DLTensor at the head of an unconsumed "dltensor" capsule."""
    if not _is_valid(capsule, b"dltensor"):
        raise InvalidTypeError("from_dlpack: the capsule is not an unconsumed DLPack "
                               "'dltensor' capsule (each capsule can be consumed once)")
    return _DLTensor.from_address(_get_pointer(capsule, b"dltensor"))


class _CapsuleSource:
    """Presents a legacy capsule through the ``__dlpack__`` protocol."""

    def __init__(self, capsule):
        self.capsule = capsule
        t = _dltensor(capsule)
        self.device = (t.device.device_type, t.device.device_id)

    def __dlpack__(self, stream=None, **kw):
        return self.capsule

    def __dlpack_device__(self):
        return self.device


def to_dlpack(x: Tensor):
    """A DLPack capsule sharing x's memory (consume it once, e.g. with torch.from_dlpack).

    Tensors also implement ``__dlpack__`` themselves, so ``np.from_dlpack(x)`` works directly.

    Args:
        x (Tensor): The tensor (not bfloat16: cast it first).

    Returns:
        PyCapsule: a "dltensor" capsule.

    Examples:
        >>> import fw
        >>> x = fw.to_tensor([1.0, 2.0])
        >>> y = fw.from_dlpack(fw.to_dlpack(x))
        >>> y.tolist(), y.data_ptr() == x.data_ptr()
        ([1.0, 2.0], True)
    """
    if not isinstance(x, Tensor):
        raise InvalidTypeError(f"to_dlpack: expected a Tensor, got {type(x).__name__}")
    if x._data.dtype == _dt.bfloat16.np:
        raise UnsupportedError("to_dlpack: exporting a bfloat16 tensor is not supported "
                               "(NumPy's DLPack exporter refuses it); cast it to float32 first")
    return x._data.__dlpack__()


def _import_numpy(src):
    """np.from_dlpack, retrying bfloat16 as int16 bits."""
    try:
        return np.from_dlpack(src)
    except (BufferError, TypeError, RuntimeError) as first:
        cap = src.__dlpack__() if not isinstance(src, _CapsuleSource) else src.capsule
        t = _dltensor(cap)
        if t.dtype.code == _kDLBfloat and t.dtype.bits == 16 and t.dtype.lanes == 1:
            t.dtype.code = _kDLInt  # same bits; we own the managed tensor once consumed
            arr = np.from_dlpack(_CapsuleSource(cap))
            return arr.view(_dt.bfloat16.np)
        raise InvalidTypeError(f"from_dlpack: cannot import this tensor: {first}") from None


def from_dlpack(obj) -> Tensor:
    """A Tensor sharing the memory of obj (zero-copy).

    obj is an object with ``__dlpack__``/``__dlpack_device__`` (a NumPy array, a PyTorch,
    CuPy or JAX tensor) or a legacy DLPack capsule. CUDA memory gives a GPU tensor (needs
    CuPy).

    Args:
        obj (object): The producer of the memory.

    Returns:
        Tensor: a tensor over the same memory.

    Examples:
        >>> import fw
        >>> import numpy as np
        >>> a = np.arange(3.0)
        >>> t = fw.from_dlpack(a)
        >>> a[0] = 9.0
        >>> t.tolist()
        [9.0, 1.0, 2.0]
    """
    if isinstance(obj, Tensor):
        return obj
    src = obj if hasattr(obj, "__dlpack__") else _CapsuleSource(obj)
    dev_type, dev_id = src.__dlpack_device__()
    if int(dev_type) == _kDLCPU:
        arr = _import_numpy(src)
    elif int(dev_type) == _kDLCUDA:
        from fw.core import place as _pl

        _pl.get_backend("gpu")  # a clear error when CuPy or a GPU is missing
        import cupy

        arr = cupy.from_dlpack(src)
    else:
        raise UnsupportedError(f"from_dlpack: device type {int(dev_type)} is not supported; "
                               f"fw has cpu and CUDA gpu devices")
    if arr.dtype not in _dt._BY_NP:
        raise InvalidTypeError(f"from_dlpack: dtype {arr.dtype} has no fw equivalent")
    return wrap(arr)
