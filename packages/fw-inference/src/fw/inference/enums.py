"""The enumerations of Paddle Inference's API: `DataType` (a handle's element type),
`PrecisionType` (the precision a predictor runs in) and `PlaceType` (a device kind),
with Paddle's member names."""

from __future__ import annotations

import enum

import numpy as np

from fw.core import dtypes as _dt
from fw.core.errors import InvalidTypeError

__all__ = ["DataType", "PrecisionType", "PlaceType", "get_num_bytes_of_data_type"]


class DataType(enum.Enum):
    """The element type of an inference input/output handle (``handle.type()``).

    Members: BOOL, UINT8, INT8, INT16, INT32, INT64, FLOAT16, BFLOAT16, FLOAT32, FLOAT64,
    COMPLEX64, COMPLEX128 (each member's value is the dtype name). ``DataType.of(dtype)``
    maps an fw dtype, NumPy dtype or name; ``member.numpy_dtype`` goes back.

    Examples:
        >>> import fw
        >>> import numpy as np
        >>> from fw.inference import DataType
        >>> DataType.of(np.float32)
        <DataType.FLOAT32: 'float32'>
        >>> DataType.of(fw.int64).numpy_dtype
        dtype('int64')
    """

    BOOL = "bool"
    UINT8 = "uint8"
    INT8 = "int8"
    INT16 = "int16"
    INT32 = "int32"
    INT64 = "int64"
    FLOAT16 = "float16"
    BFLOAT16 = "bfloat16"
    FLOAT32 = "float32"
    FLOAT64 = "float64"
    COMPLEX64 = "complex64"
    COMPLEX128 = "complex128"

    @property
    def numpy_dtype(self) -> np.dtype:
        """The NumPy dtype of this element type.

        Examples:
            >>> import fw
            >>> from fw.inference import DataType
            >>> DataType.FLOAT32.numpy_dtype
            dtype('float32')
        """
        return _dt.convert_dtype(self.value).np

    @classmethod
    def of(cls, dtype) -> DataType:
        """The DataType of a dtype.

        Args:
            dtype (fw.dtype|numpy.dtype|str): the dtype.

        Returns:
            DataType: the member; an error names the dtype when there is none.

        Examples:
            >>> import fw
            >>> from fw.inference import DataType
            >>> DataType.of("float16")
            <DataType.FLOAT16: 'float16'>
        """
        try:
            return cls(_dt.convert_dtype(dtype).name)
        except (TypeError, ValueError):
            raise InvalidTypeError(f"no inference DataType for dtype {dtype!r}") from None


class PrecisionType(enum.Enum):
    """The precision a predictor computes in (Paddle's ``PrecisionType``).

    fw-inference runs a program in the dtypes it was saved with (``Float32`` for a
    float32 model, int8 kernels for a quantized one); members: Float32, Int8, Half,
    Bfloat16 (alias Bf16).

    Examples:
        >>> import fw
        >>> from fw.inference import PrecisionType
        >>> PrecisionType.Bf16 is PrecisionType.Bfloat16
        True
    """

    Float32 = 0
    Int8 = 1
    Half = 2
    Bfloat16 = 3
    Bf16 = 3  # the spelling of Paddle's documentation (an alias of Bfloat16)


class PlaceType(enum.Enum):
    """Device kinds (Paddle's ``PlaceType``): UNK, CPU, GPU, XPU, NPU, IPU, CUSTOM.

    Examples:
        >>> import fw
        >>> from fw.inference import PlaceType
        >>> PlaceType.CPU.value
        0
    """

    UNK = -1
    CPU = 0
    GPU = 1
    XPU = 2
    NPU = 3
    IPU = 4
    CUSTOM = 5


def get_num_bytes_of_data_type(dtype: DataType) -> int:
    """Bytes per element of a DataType.

    Args:
        dtype (DataType): the element type.

    Returns:
        int: its size in bytes.

    Examples:
        >>> import fw
        >>> from fw.inference import DataType, get_num_bytes_of_data_type
        >>> get_num_bytes_of_data_type(DataType.FLOAT32)
        4
    """
    if not isinstance(dtype, DataType):
        raise InvalidTypeError(f"get_num_bytes_of_data_type takes a DataType, got "
                               f"{type(dtype).__name__}")
    return dtype.numpy_dtype.itemsize
