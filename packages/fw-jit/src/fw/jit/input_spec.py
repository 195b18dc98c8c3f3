"""`InputSpec`: the shape and dtype of a program input, with dynamic dimensions."""

from __future__ import annotations

import numpy as np

from fw.core import dtypes as _dt
from fw.core.ir.types import TensorType

__all__ = ["InputSpec"]


class InputSpec:
    """Describes one tensor argument of a converted function (Paddle's
    ``paddle.static.InputSpec``).

    Args:
        shape: list of dims; ``None`` or ``-1`` marks a dynamic dimension (any size
            is accepted and the program is traced with -1 there).
        dtype: dtype or its name (default ``'float32'``).
        name: the program input's name.
        stop_gradient: whether the traced input needs no gradient.

    >>> from fw.static import InputSpec
    >>> InputSpec([None, 784], "float32", "x")
    InputSpec(shape=(-1, 784), dtype=float32, name=x, stop_gradient=False)
    """

    def __init__(self, shape, dtype="float32", name=None, stop_gradient=False):
        if isinstance(shape, int):
            shape = [shape]
        if not isinstance(shape, (list, tuple)):
            raise TypeError(f"InputSpec: 'shape' must be a list or tuple of ints (None/-1 for "
                            f"a dynamic dim), got {type(shape).__name__}")
        dims = []
        for d in shape:
            if d is None:
                dims.append(-1)
            elif isinstance(d, (int, np.integer)) and not isinstance(d, bool) and d >= -1:
                dims.append(int(d))
            else:
                raise ValueError(f"InputSpec: bad dimension {d!r} in shape {list(shape)} "
                                 f"(ints >= 0, or None/-1 for a dynamic dim)")
        self.shape = tuple(dims)
        self.dtype = _dt.convert_dtype(dtype)
        self.name = name
        self.stop_gradient = bool(stop_gradient)

    @classmethod
    def from_tensor(cls, tensor, name=None) -> InputSpec:
        """The spec of `tensor` (its shape, dtype and name)."""
        from fw.core.tensor import Tensor

        if not isinstance(tensor, Tensor):
            raise TypeError(f"InputSpec.from_tensor expects a Tensor, got "
                            f"{type(tensor).__name__}")
        n = name if name is not None else tensor.__dict__.get("_name")
        return cls(list(tensor.shape), tensor.dtype, n, tensor.stop_gradient)

    @classmethod
    def from_numpy(cls, ndarray, name=None) -> InputSpec:
        """The spec of a NumPy array."""
        a = np.asarray(ndarray)
        return cls(list(a.shape), _dt.from_numpy(a.dtype), name)

    def batch(self, batch_size) -> InputSpec:
        """A new spec with `batch_size` inserted as the first dimension."""
        if isinstance(batch_size, (list, tuple)):
            if len(batch_size) != 1:
                raise ValueError("InputSpec.batch: give one batch size")
            batch_size = batch_size[0]
        return InputSpec([batch_size] + list(self.shape), self.dtype, self.name,
                         self.stop_gradient)

    def unbatch(self) -> InputSpec:
        """A new spec without the first dimension."""
        if not self.shape:
            raise ValueError("InputSpec.unbatch: the spec has no dimension to remove")
        return InputSpec(list(self.shape[1:]), self.dtype, self.name, self.stop_gradient)

    @property
    def type(self) -> TensorType:
        return TensorType(self.shape, self.dtype)

    def matches(self, shape, dtype) -> bool:
        """Whether a tensor of `shape`/`dtype` fits this spec."""
        return dtype is self.dtype and len(shape) == len(self.shape) and all(
            e == -1 or e == g for e, g in zip(self.shape, shape))

    def __repr__(self) -> str:
        return (f"InputSpec(shape={self.shape}, dtype={self.dtype.name}, name={self.name}, "
                f"stop_gradient={self.stop_gradient})")

    def __eq__(self, other) -> bool:
        return isinstance(other, InputSpec) and (self.shape, self.dtype, self.name,
                                                 self.stop_gradient) == (
            other.shape, other.dtype, other.name, other.stop_gradient)

    def __hash__(self) -> int:
        return hash((self.shape, self.dtype.name, self.name, self.stop_gradient))
