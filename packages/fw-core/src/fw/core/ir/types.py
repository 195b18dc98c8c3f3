"""`TensorType`: the static type of an IR value — a dtype and a shape whose
unknown (dynamic) dimensions are -1."""

from __future__ import annotations

from fw.core.dtypes import DType, convert_dtype

__all__ = ["TensorType", "DYN"]

DYN = -1


class TensorType:
    """``TensorType([-1, 784], "float32")`` prints as ``f32[-1,784]``."""

    __slots__ = ("shape", "dtype")

    def __init__(self, shape, dtype):
        dims = []
        for d in shape:
            if d is None:
                dims.append(DYN)
                continue
            d = int(d)
            if d < DYN:
                raise ValueError(f"TensorType: dimension {d} in shape {list(shape)} must be "
                                 f">= 0, or -1/None for a dynamic dimension")
            dims.append(d)
        self.shape = tuple(dims)
        self.dtype = dtype if isinstance(dtype, DType) else convert_dtype(dtype)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def is_static(self) -> bool:
        return DYN not in self.shape

    def numel(self) -> int:
        """Element count, or -1 when a dimension is dynamic."""
        n = 1
        for d in self.shape:
            if d == DYN:
                return DYN
            n *= d
        return n

    def with_shape(self, shape) -> TensorType:
        return TensorType(shape, self.dtype)

    def with_dtype(self, dtype) -> TensorType:
        return TensorType(self.shape, dtype)

    def __eq__(self, other) -> bool:
        return (isinstance(other, TensorType) and other.shape == self.shape
                and other.dtype is self.dtype)

    def __hash__(self) -> int:
        return hash((self.shape, self.dtype.name))

    def __str__(self) -> str:
        return f"{self.dtype.short}[{','.join(str(d) for d in self.shape)}]"

    def __repr__(self) -> str:
        return f"TensorType({list(self.shape)}, {self.dtype.name})"

    def compatible(self, other: TensorType) -> bool:
        """Same dtype and rank, and every pair of dims equal or one of them dynamic."""
        if other.dtype is not self.dtype or len(other.shape) != len(self.shape):
            return False
        return all(a == b or a == DYN or b == DYN for a, b in zip(self.shape, other.shape))
