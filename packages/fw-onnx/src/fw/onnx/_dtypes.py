"""fw dtypes <-> ONNX element types (``onnx.TensorProto.*``)."""

from __future__ import annotations

from fw.onnx.errors import ExportError
from onnx import TensorProto

__all__ = ["onnx_dtype", "FLOATING"]

_BY_NAME = {
    "bool": TensorProto.BOOL,
    "uint8": TensorProto.UINT8,
    "int8": TensorProto.INT8,
    "int16": TensorProto.INT16,
    "int32": TensorProto.INT32,
    "int64": TensorProto.INT64,
    "float16": TensorProto.FLOAT16,
    "bfloat16": TensorProto.BFLOAT16,
    "float32": TensorProto.FLOAT,
    "float64": TensorProto.DOUBLE,
    "complex64": TensorProto.COMPLEX64,
    "complex128": TensorProto.COMPLEX128,
}
FLOATING = frozenset({"float16", "bfloat16", "float32", "float64"})


def onnx_dtype(dtype) -> int:
    """The ``TensorProto`` element type of an fw dtype (a DType or its name)."""
    name = getattr(dtype, "name", dtype)
    try:
        return _BY_NAME[name]
    except KeyError:
        raise ExportError(f"dtype {name} has no ONNX element type") from None
