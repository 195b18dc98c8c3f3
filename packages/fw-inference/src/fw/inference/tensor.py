"""`Tensor`: the input/output handles of a `Predictor` (Paddle Inference's
``paddle.inference.Tensor``). A handle belongs to one predictor and names one of
the program's inputs or outputs; it holds no data of its own: inputs are stored
in the predictor's input slots, outputs are read from its last run."""

from __future__ import annotations

import numpy as np

from fw.core.errors import InvalidArgumentError, InvalidTypeError
from fw.inference.enums import DataType

__all__ = ["Tensor"]

_ndarray = np.ndarray


class _Name(str):
    """A handle's name. Also callable: ``h.name()`` is Paddle's spelling."""

    __slots__ = ()

    def __call__(self) -> str:
        return str(self)


def _host_array(data, what):
    """`data` (an ndarray, an fw Tensor, a DLPack or __array__ object) as an ndarray,
    without copying when it already is one."""
    if type(data) is _ndarray:
        return data
    d = getattr(data, "_data", None)  # an fw.core.Tensor
    if type(d) is _ndarray:
        return d
    if d is not None:
        raise InvalidTypeError(f"{what}: the tensor lives on {type(d).__module__} memory; "
                               f"fw-inference takes host (NumPy) data")
    if isinstance(data, np.ndarray):
        return data
    if hasattr(data, "__dlpack__"):
        try:
            return np.from_dlpack(data)
        except (TypeError, RuntimeError, BufferError) as e:
            raise InvalidTypeError(f"{what}: cannot read {type(data).__name__} through DLPack "
                                   f"as host memory: {e}") from None
    return None


class Tensor:
    """An input or output handle of a `Predictor` (``predictor.get_input_handle(name)``
    / ``get_output_handle(name)``).

    Inputs: `reshape` (optional: declares the shape), `copy_from_cpu` (copies the data)
    or `share_external_data` (uses the caller's array without copying: it must stay
    alive and unchanged while the predictor runs). Outputs: `copy_to_cpu` after
    ``predictor.run()``. Both: `shape`, `type` (a `DataType`), ``dtype`` (the NumPy
    dtype), ``name`` (also ``name()``).

    Args:
        predictor, index, is_input, name, type_: internal; get handles from the
            predictor.

    Examples:
        >>> import fw
        >>> import numpy as np
        >>> import fw.inference as infer
        >>> from fw.static import InputSpec
        >>> spec = [InputSpec([None, 4], "float32", name="x")]
        >>> path = fw.jit.save(fw.nn.Linear(4, 2), "linear", input_spec=spec)
        >>> predictor = infer.create_predictor(infer.Config(path))
        >>> h = predictor.get_input_handle("x")
        >>> h.copy_from_cpu(np.ones((3, 4), np.float32))
        >>> predictor.run()
        >>> out = predictor.get_output_handle(predictor.get_output_names()[0])
        >>> out.copy_to_cpu().shape, out.type()
        ((3, 2), <DataType.FLOAT32: 'float32'>)
    """

    __slots__ = ("_pred", "_index", "_is_input", "name", "_type", "_declared", "_np", "_ndim",
                 "_static")

    def __init__(self, predictor, index: int, is_input: bool, name: str, type_):
        self._pred = predictor
        self._index = index
        self._is_input = is_input
        self.name = _Name(name)
        self._type = type_  # the program's TensorType for this input/output
        self._declared = None
        # for the fast path of copy_from_cpu: dtype, rank and the static dims to check
        self._np = type_.dtype.np
        self._ndim = len(type_.shape)
        self._static = tuple((i, d) for i, d in enumerate(type_.shape) if d != -1)

    # ------------------------------------------------------------ metadata
    def type(self) -> DataType:
        """The element type.

        Returns:
            DataType: e.g. ``DataType.FLOAT32``.

        Examples:
            >>> import fw
            >>> import numpy as np
            >>> import fw.inference as infer
            >>> from fw.static import InputSpec
            >>> net = fw.nn.Linear(4, 2)
            >>> spec = [InputSpec([None, 4], "float32", name="x")]
            >>> path = fw.jit.save(net, "linear", input_spec=spec)
            >>> predictor = infer.create_predictor(infer.Config(path))
            >>> predictor.get_input_handle("x").type()
            <DataType.FLOAT32: 'float32'>
        """
        return DataType(self._type.dtype.name)

    @property
    def dtype(self) -> np.dtype:
        """The NumPy dtype of the data.

        Examples:
            >>> import fw
            >>> import numpy as np
            >>> import fw.inference as infer
            >>> from fw.static import InputSpec
            >>> net = fw.nn.Linear(4, 2)
            >>> spec = [InputSpec([None, 4], "float32", name="x")]
            >>> path = fw.jit.save(net, "linear", input_spec=spec)
            >>> predictor = infer.create_predictor(infer.Config(path))
            >>> predictor.get_input_handle("x").dtype
            dtype('float32')
        """
        return self._type.dtype.np

    def shape(self) -> list:
        """The data's shape; before any data, the declared shape (`reshape`) or the
        program's (``-1`` for a dynamic dimension).

        Returns:
            list[int]: the shape.

        Examples:
            >>> import fw
            >>> import numpy as np
            >>> import fw.inference as infer
            >>> from fw.static import InputSpec
            >>> net = fw.nn.Linear(4, 2)
            >>> spec = [InputSpec([None, 4], "float32", name="x")]
            >>> path = fw.jit.save(net, "linear", input_spec=spec)
            >>> predictor = infer.create_predictor(infer.Config(path))
            >>> x = predictor.get_input_handle("x")
            >>> x.shape()
            [-1, 4]
            >>> x.copy_from_cpu(np.ones((3, 4), np.float32))
            >>> x.shape()
            [3, 4]
        """
        a = self._array(required=False)
        if a is not None:
            return list(a.shape)
        if self._declared is not None:
            return list(self._declared)
        return list(self._type.shape)

    def lod(self) -> list:
        """Level-of-detail information (Paddle's ragged batches): fw has none.

        Returns:
            list: always ``[]``.

        Examples:
            >>> import fw
            >>> import numpy as np
            >>> import fw.inference as infer
            >>> from fw.static import InputSpec
            >>> net = fw.nn.Linear(4, 2)
            >>> spec = [InputSpec([None, 4], "float32", name="x")]
            >>> path = fw.jit.save(net, "linear", input_spec=spec)
            >>> predictor = infer.create_predictor(infer.Config(path))
            >>> predictor.get_input_handle("x").lod()
            []
        """
        return []

    def _kind(self) -> str:
        return "input" if self._is_input else "output"

    def __repr__(self) -> str:
        return f"<fw.inference.Tensor {self._kind()} '{self.name}': {self._type}>"

    # ------------------------------------------------------------ inputs
    def _input_only(self, what):
        if not self._is_input:
            raise InvalidArgumentError(f"{what} applies to input handles; '{self.name}' is an "
                                       f"output of the program (read it with copy_to_cpu())")

    def _fits(self, a) -> bool:
        """`a` (an ndarray) has the input's dtype, rank and static dims: the check of
        the hot path (`_check` gives the message when it fails)."""
        if a.dtype is not self._np or a.ndim != self._ndim:
            return False
        shape = a.shape
        for i, d in self._static:
            if shape[i] != d:
                return False
        return True

    def _check(self, a, what):
        t = self._type
        if a.dtype != t.dtype.np:
            raise InvalidTypeError(
                f"{what}: input '{self.name}' expects {t.dtype.name} data, got {a.dtype} "
                f"(convert it first, e.g. data.astype('{t.dtype.name}'))")
        if a.ndim != len(t.shape) or any(e != -1 and e != g for e, g in zip(t.shape, a.shape)):
            raise InvalidArgumentError(
                f"{what}: input '{self.name}' expects shape {list(t.shape)} (-1: any size), "
                f"got {list(a.shape)}")

    def reshape(self, shape) -> None:
        """Declare the shape of the next data (checked against the program's input type;
        data of the same size but another shape is reshaped to it).

        Args:
            shape (list[int]): the shape.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> import numpy as np
            >>> import fw.inference as infer
            >>> from fw.static import InputSpec
            >>> spec = [InputSpec([None, 4], "float32", name="x")]
            >>> path = fw.jit.save(fw.nn.Linear(4, 2), "linear", input_spec=spec)
            >>> predictor = infer.create_predictor(infer.Config(path))
            >>> h = predictor.get_input_handle("x")
            >>> h.reshape([2, 4])
            >>> h.shape()
            [2, 4]
        """
        self._input_only("reshape")
        try:
            dims = [int(d) for d in np.asarray(shape).reshape(-1)]
        except (TypeError, ValueError):
            raise InvalidTypeError(f"reshape: the shape must be a list of ints, got "
                                   f"{shape!r}") from None
        t = self._type
        if len(dims) != len(t.shape) or any(d < 0 for d in dims) or any(
                e != -1 and e != d for e, d in zip(t.shape, dims)):
            raise InvalidArgumentError(f"reshape: input '{self.name}' has shape {list(t.shape)} "
                                       f"(-1: any size); {dims} does not fit it")
        self._declared = tuple(dims)

    def _fit(self, a, what):
        if self._declared is not None and a.shape != self._declared:
            if a.size != int(np.prod(self._declared)):
                raise InvalidArgumentError(
                    f"{what}: input '{self.name}' was declared {list(self._declared)} by "
                    f"reshape() but the data has shape {list(a.shape)}")
            a = a.reshape(self._declared)
        self._check(a, what)
        return a

    def copy_from_cpu(self, data) -> None:
        """Copy `data` into the predictor's input; later changes to `data` do not
        affect it.

        Args:
            data (numpy.ndarray|Tensor): the data (anything NumPy can convert), of the input's
                dtype and a shape that fits its type.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> import numpy as np
            >>> import fw.inference as infer
            >>> from fw.static import InputSpec
            >>> spec = [InputSpec([None, 4], "float32", name="x")]
            >>> path = fw.jit.save(fw.nn.Linear(4, 2), "linear", input_spec=spec)
            >>> predictor = infer.create_predictor(infer.Config(path))
            >>> h = predictor.get_input_handle("x")
            >>> x = np.ones((1, 4), np.float32)
            >>> h.copy_from_cpu(x)
            >>> x[:] = 5                    # does not change the input
            >>> h.copy_to_cpu().tolist()
            [[1.0, 1.0, 1.0, 1.0]]
        """
        if type(data) is _ndarray and self._is_input and self._declared is None and \
                self._fits(data):  # the common case: an array of the right type
            self._pred._in[self._index] = data.copy()
            return
        self._input_only("copy_from_cpu")
        a = _host_array(data, "copy_from_cpu")
        if a is None:
            try:
                a = np.asarray(data, dtype=self._type.dtype.np if isinstance(
                    data, (list, tuple, int, float, bool)) else None)
            except (TypeError, ValueError) as e:
                raise InvalidTypeError(f"copy_from_cpu: input '{self.name}' takes an array, got "
                                       f"{type(data).__name__}: {e}") from None
        a = self._fit(a, "copy_from_cpu")
        self._pred._in[self._index] = np.array(a, copy=True, order="C")
        self._declared = None

    def share_external_data(self, data) -> None:
        """Use `data` as the input without copying.

        The caller keeps it alive and unchanged while the predictor runs; changes between
        runs are seen.

        Args:
            data (numpy.ndarray|Tensor): an ndarray, an fw Tensor, or a DLPack-capable host
                array (e.g. a torch CPU tensor).

        Returns:
            None.

        Examples:
            >>> import fw
            >>> import numpy as np
            >>> import fw.inference as infer
            >>> from fw.static import InputSpec
            >>> spec = [InputSpec([None, 4], "float32", name="x")]
            >>> path = fw.jit.save(fw.nn.Linear(4, 2), "linear", input_spec=spec)
            >>> predictor = infer.create_predictor(infer.Config(path))
            >>> h = predictor.get_input_handle("x")
            >>> x = np.zeros((1, 4), np.float32)
            >>> h.share_external_data(x)
            >>> x[:] = 2                    # seen by the next run
            >>> h.copy_to_cpu().tolist()
            [[2.0, 2.0, 2.0, 2.0]]
        """
        self._input_only("share_external_data")
        a = _host_array(data, "share_external_data")
        if a is None:
            raise InvalidTypeError(f"share_external_data: input '{self.name}' needs an array "
                                   f"it can use in place (ndarray, fw Tensor, DLPack host "
                                   f"array), got {type(data).__name__}; use copy_from_cpu")
        a = self._fit(a, "share_external_data")
        self._pred._in[self._index] = a
        self._declared = None

    # ------------------------------------------------------------ outputs
    def _array(self, required=True):
        slots = self._pred._in if self._is_input else self._pred._out
        a = slots[self._index]
        if a is None and required:
            if self._is_input:
                raise InvalidArgumentError(f"input '{self.name}' has no data yet; set it with "
                                           f"copy_from_cpu() or share_external_data()")
            raise InvalidArgumentError(f"output '{self.name}' has no data: call "
                                       f"predictor.run() first")
        return a

    def copy_to_cpu(self) -> np.ndarray:
        """A copy of the data as a NumPy array (an output after ``run()``, or an input's
        current data).

        Returns:
            numpy.ndarray: the data.

        Examples:
            >>> import fw
            >>> import numpy as np
            >>> import fw.inference as infer
            >>> from fw.static import InputSpec
            >>> spec = [InputSpec([None, 4], "float32", name="x")]
            >>> path = fw.jit.save(fw.nn.Linear(4, 2), "linear", input_spec=spec)
            >>> predictor = infer.create_predictor(infer.Config(path))
            >>> h = predictor.get_input_handle("x")
            >>> h.copy_from_cpu(np.ones((2, 4), np.float32))
            >>> predictor.run()
            >>> predictor.get_output_handle(predictor.get_output_names()[0]).copy_to_cpu().shape
            (2, 2)
        """
        a = self._array()
        if type(a) is not _ndarray:  # a GPU predictor's output
            from fw.core import place

            return place.backend_of(a).to_numpy(a)
        return a.copy()
