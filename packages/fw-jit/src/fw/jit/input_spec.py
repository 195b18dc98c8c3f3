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

    Examples:
        >>> import fw
        >>> spec = fw.static.InputSpec([None, 784], "float32", "x")
        >>> spec.shape, spec.dtype, spec.name
        ((-1, 784), fw.float32, 'x')
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
        """The spec of a tensor (its shape, dtype and name).

        Args:
            tensor (Tensor): the tensor.
            name (str, optional): the spec's name; None takes the tensor's. Default: None.

        Returns:
            InputSpec.

        Examples:
            >>> import fw
            >>> spec = fw.static.InputSpec.from_tensor(fw.ones([2, 3]), name="x")
            >>> spec.shape, spec.dtype, spec.name
            ((2, 3), fw.float32, 'x')
        """
        from fw.core.tensor import Tensor

        if not isinstance(tensor, Tensor):
            raise TypeError(f"InputSpec.from_tensor expects a Tensor, got "
                            f"{type(tensor).__name__}")
        n = name if name is not None else tensor.__dict__.get("_name")
        return cls(list(tensor.shape), tensor.dtype, n, tensor.stop_gradient)

    @classmethod
    def from_numpy(cls, ndarray, name=None) -> InputSpec:
        """The spec of a NumPy array (its shape and dtype).

        Args:
            ndarray (numpy.ndarray): the array.
            name (str, optional): the spec's name. Default: None.

        Returns:
            InputSpec.

        Examples:
            >>> import fw
            >>> import numpy as np
            >>> fw.static.InputSpec.from_numpy(np.zeros((2, 3), "int64"), name="ids")
            InputSpec(shape=(2, 3), dtype=int64, name=ids, stop_gradient=False)
        """
        a = np.asarray(ndarray)
        return cls(list(a.shape), _dt.from_numpy(a.dtype), name)

    def batch(self, batch_size) -> InputSpec:
        """A new spec with `batch_size` inserted as the first dimension.

        Args:
            batch_size (int): the new first dimension (None or -1: dynamic).

        Returns:
            InputSpec, the new spec.

        Examples:
            >>> import fw
            >>> spec = fw.static.InputSpec([None, 3], "float32", "x")
            >>> fw.static.InputSpec([3], "float32").batch(8).shape
            (8, 3)
        """
        if isinstance(batch_size, (list, tuple)):
            if len(batch_size) != 1:
                raise ValueError("InputSpec.batch: give one batch size")
            batch_size = batch_size[0]
        return InputSpec([batch_size] + list(self.shape), self.dtype, self.name,
                         self.stop_gradient)

    def unbatch(self) -> InputSpec:
        """A new spec without the first dimension.

        Returns:
            InputSpec, the new spec.

        Examples:
            >>> import fw
            >>> spec = fw.static.InputSpec([None, 3], "float32", "x")
            >>> spec.unbatch().shape
            (3,)
        """
        if not self.shape:
            raise ValueError("InputSpec.unbatch: the spec has no dimension to remove")
        return InputSpec(list(self.shape[1:]), self.dtype, self.name, self.stop_gradient)

    @property
    def type(self) -> TensorType:
        """The spec's type as fw's IR sees it (the dtype and the shape, -1 for dynamic).

        Returns:
            TensorType.

        Examples:
            >>> import fw
            >>> spec = fw.static.InputSpec([None, 3], "float32", "x")
            >>> spec.type
            TensorType([-1, 3], float32)
        """
        return TensorType(self.shape, self.dtype)

    def matches(self, shape, dtype) -> bool:
        """Whether a tensor of `shape` and `dtype` fits this spec (dynamic dimensions
        match any size).

        Args:
            shape (list[int]): the tensor's shape.
            dtype (str|DType): the tensor's dtype.

        Returns:
            bool.

        Examples:
            >>> import fw
            >>> spec = fw.static.InputSpec([None, 3], "float32", "x")
            >>> spec.matches([5, 3], "float32"), spec.matches([5, 4], "float32")
            (False, False)
        """
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
