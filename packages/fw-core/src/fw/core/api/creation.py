"""The Paddle-signature functions of the creation ops that the generated ones cannot express.

The ops themselves (declaration, infer, reference kernel) are in `fw.core.ops.creation`;
these wrappers are registered with `public` when the op table is loaded.
"""

from __future__ import annotations

from fw.core import dtypes as _dt
from fw.core.errors import InvalidTypeError
from fw.core.ops import dynamic_shape as _dyn
from fw.core.ops._api import public
from fw.core.ops._registry import OPS
from fw.core.ops.creation import (
    _full_dtype,
    arange_op,
    assign_op,
    full_like_op,
    full_op,
    increment_op,
    meshgrid_op,
    number_arg,
)
from fw.core.tensor import Tensor, to_tensor


@public()
def full(shape, fill_value, dtype=None, name=None):
    """Create a tensor of the given shape filled with one value.

    Args:
        shape (list|tuple|Tensor): The shape of the result: a list or tuple of ints (or of
            one-element integer tensors), or a 1-D integer tensor.
        fill_value (bool|int|float|complex|Tensor): The value of every element (a number or a
            one-element tensor).
        dtype (str|fw.dtype, optional): The dtype of the result. None: bool for a bool fill value,
            otherwise the default float dtype (so ``fw.full([2], 3)`` is float32, as in Paddle).
            Default: None.
        name (str, optional): Paddle's op name; unused in eager mode. Default: None.

    Returns:
        Tensor: a tensor of the given shape and dtype with every element equal to fill_value.

    Examples:
        >>> import fw
        >>> fw.full([2, 3], 1.5).tolist()
        [[1.5, 1.5, 1.5], [1.5, 1.5, 1.5]]
        >>> x = fw.full([2], 7, dtype="int64")
        >>> x.tolist(), x.dtype
        ([7, 7], fw.int64)
        >>> fw.full([1], True).dtype
        fw.bool
    """
    from fw.core.dispatch import invoke

    if _dyn.has_symbolic(shape):  # a program is being built with run-time sizes
        fv = number_arg(fill_value, "fill_value")
        st, static = _dyn.shape_tensor(shape, "full")
        return invoke(OPS["full_dyn"], [st], {"fill_value": fv, "dtype": _full_dtype(fv, dtype),
                                              "static_shape": static})
    return invoke(full_op, [], {"shape": shape, "fill_value": fill_value, "dtype": dtype})


@public()
def zeros(shape, dtype=None, name=None):
    """Create a tensor of the given shape filled with 0.

    Args:
        shape (list|tuple|Tensor): The shape of the result: a list or tuple of ints (or of
            one-element integer tensors), or a 1-D integer tensor.
        dtype (str|fw.dtype, optional): The dtype of the result; None: the default float dtype.
            Default: None.
        name (str, optional): Paddle's op name; unused in eager mode. Default: None.

    Returns:
        Tensor: a tensor of zeros.

    Examples:
        >>> import fw
        >>> fw.zeros([2, 3]).tolist()
        [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]
        >>> fw.zeros([2], dtype="int32").dtype
        fw.int32
    """
    return full(shape, 0, dtype if dtype is not None else _dt.get_default_dtype())


@public()
def ones(shape, dtype=None, name=None):
    """Create a tensor of the given shape filled with 1.

    Args:
        shape (list|tuple|Tensor): The shape of the result: a list or tuple of ints (or of
            one-element integer tensors), or a 1-D integer tensor.
        dtype (str|fw.dtype, optional): The dtype of the result; None: the default float dtype.
            Default: None.
        name (str, optional): Paddle's op name; unused in eager mode. Default: None.

    Returns:
        Tensor: a tensor of ones.

    Examples:
        >>> import fw
        >>> fw.ones([2, 2]).tolist()
        [[1.0, 1.0], [1.0, 1.0]]
        >>> fw.ones([3], dtype="int64").tolist()
        [1, 1, 1]
    """
    return full(shape, 1, dtype if dtype is not None else _dt.get_default_dtype())


@public()
def empty(shape, dtype=None, name=None):
    """Create a tensor of the given shape without meaningful values.

    Paddle leaves the memory uninitialised; fw fills it with zeros (cheap, and reproducible).
    Do not rely on the values: write them before reading.

    Args:
        shape (list|tuple|Tensor): The shape of the result: a list or tuple of ints (or of
            one-element integer tensors), or a 1-D integer tensor.
        dtype (str|fw.dtype, optional): The dtype of the result; None: the default float dtype.
            Default: None.
        name (str, optional): Paddle's op name; unused in eager mode. Default: None.

    Returns:
        Tensor: a tensor of the given shape and dtype.

    Examples:
        >>> import fw
        >>> x = fw.empty([2, 3])
        >>> x.shape, x.dtype
        ([2, 3], fw.float32)
    """
    return zeros(shape, dtype)


def _like(x, value, dtype):
    from fw.core.dispatch import invoke

    return invoke(full_like_op, [x], {"fill_value": value, "dtype": dtype})


@public()
def zeros_like(x, dtype=None, name=None):
    """Create a tensor of zeros with the shape (and by default the dtype) of x.

    Args:
        x (Tensor): The tensor whose shape is used.
        dtype (str|fw.dtype, optional): The dtype of the result; None keeps x's dtype.
            Default: None.
        name (str, optional): Paddle's op name; unused in eager mode. Default: None.

    Returns:
        Tensor: zeros with x's shape.

    Examples:
        >>> import fw
        >>> x = fw.to_tensor([[1, 2, 3], [4, 5, 6]])
        >>> fw.zeros_like(x).tolist()
        [[0, 0, 0], [0, 0, 0]]
        >>> fw.zeros_like(x, dtype="float32").dtype
        fw.float32
    """
    return _like(x, 0, dtype)


@public()
def ones_like(x, dtype=None, name=None):
    """Create a tensor of ones with the shape (and by default the dtype) of x.

    Args:
        x (Tensor): The tensor whose shape is used.
        dtype (str|fw.dtype, optional): The dtype of the result; None keeps x's dtype.
            Default: None.
        name (str, optional): Paddle's op name; unused in eager mode. Default: None.

    Returns:
        Tensor: ones with x's shape.

    Examples:
        >>> import fw
        >>> fw.ones_like(fw.to_tensor([1.5, 2.5])).tolist()
        [1.0, 1.0]
    """
    return _like(x, 1, dtype)


@public()
def empty_like(x, dtype=None, name=None):
    """Create a tensor with the shape and dtype of x, without meaningful values.

    Paddle leaves the memory uninitialised; fw fills it with zeros. Write the values before
    reading them.

    Args:
        x (Tensor): The tensor whose shape (and by default dtype) is used.
        dtype (str|fw.dtype, optional): The dtype of the result; None keeps x's dtype.
            Default: None.
        name (str, optional): Paddle's op name; unused in eager mode. Default: None.

    Returns:
        Tensor: a tensor with x's shape.

    Examples:
        >>> import fw
        >>> y = fw.empty_like(fw.ones([2, 2], dtype="int64"))
        >>> y.shape, y.dtype
        ([2, 2], fw.int64)
    """
    return _like(x, 0, dtype)


# ---------------------------------------------------------------- to_tensor spellings
@public()
def as_tensor(data, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """Create a tensor from data (PyTorch's spelling of ``fw.to_tensor``; the data is copied).

    Args:
        data (scalar|list|tuple|numpy.ndarray|Tensor): The values.
        dtype (str|fw.dtype, optional): The dtype; None infers it as fw.to_tensor does.
            Default: None.
        device (str|fw.Place, optional): The device ("cpu", "gpu:0"); None: the current one.
            Default: None.
        requires_grad (bool, optional): Make the result a leaf that collects gradients
            (stop_gradient=False). Default: False.
        pin_memory (bool, optional): Accepted for compatibility; ignored. Default: False.

    Returns:
        Tensor: a new tensor.

    Examples:
        >>> import fw
        >>> fw.as_tensor([1, 2]).dtype
        fw.int64
        >>> fw.as_tensor([1.0], requires_grad=True).stop_gradient
        False
    """
    return to_tensor(data, dtype=dtype, place=device, stop_gradient=not requires_grad)


@public()
def tensor(data, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """``paddle.tensor``: the PyTorch-style spelling of `to_tensor` (see `as_tensor`)."""
    return to_tensor(data, dtype=dtype, place=device, stop_gradient=not requires_grad)


@public()
def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad=False):
    """Create a tensor from data (the Array API's spelling of ``fw.to_tensor``).

    ``copy`` is accepted and ignored: the data is always copied, as in Paddle.

    Args:
        obj (scalar|list|tuple|numpy.ndarray|Tensor): The values.
        dtype (str|fw.dtype, optional): The dtype; None infers it. Default: None.
        device (str|fw.Place, optional): The device; None: the current one. Default: None.
        copy (bool, optional): Ignored (always copies). Default: None.
        requires_grad (bool, optional): Make the result collect gradients. Default: False.

    Returns:
        Tensor: a new tensor.

    Examples:
        >>> import fw
        >>> fw.asarray([[1, 2], [3, 4]], dtype="float32").tolist()
        [[1.0, 2.0], [3.0, 4.0]]
    """
    return to_tensor(obj, dtype=dtype, place=device, stop_gradient=not requires_grad)


@public()
def assign(x, output=None):
    """Copy x into a new tensor, or into an existing one.

    Args:
        x (Tensor|numpy.ndarray|list|number): The values to copy.
        output (Tensor, optional): If given, the copy is written into it (it takes x's shape
            and dtype) and it is returned. Default: None.

    Returns:
        Tensor: the copy (output when given).

    Examples:
        >>> import fw
        >>> fw.assign([1.0, 2.0]).tolist()
        [1.0, 2.0]
        >>> out = fw.zeros([2])
        >>> fw.assign(fw.to_tensor([3.0, 4.0]), output=out) is out, out.tolist()
        (True, [3.0, 4.0])
    """
    from fw.core.dispatch import invoke

    out = invoke(assign_op, [x], {})
    if output is None:
        return out
    if isinstance(output, Tensor) and isinstance(out, Tensor):
        output._replace_data(out._data)
        return output
    # while building a program values are immutable: use the result; a concrete
    # `output` (a buffer the program captured) gets it as a state update, as
    # `output.set_value(x)` would
    if isinstance(output, Tensor):
        from fw.core.ir.core import _state

        _state.builder.record_update(output, out)
    return out


@public(method=True)
def clone(x, name=None):
    """A copy of x that stays connected to the autograd graph (gradients flow back to x).

    Args:
        x (Tensor): The tensor to copy.
        name (str, optional): Paddle's op name; unused in eager mode. Default: None.

    Returns:
        Tensor: a new tensor with x's values.

    Examples:
        >>> import fw
        >>> x = fw.to_tensor([1.0, 2.0], stop_gradient=False)
        >>> y = x.clone()
        >>> (y * 2).sum().backward()
        >>> x.grad.tolist()
        [2.0, 2.0]
    """
    from fw.core.dispatch import invoke

    return invoke(assign_op, [x], {})


@public()
def arange(start=0, end=None, step=1, dtype=None, name=None):
    """Evenly spaced values in the half-open interval [start, end), ``step`` apart.

    With one argument, ``fw.arange(n)`` counts from 0 to n - 1, as Python's ``range``.

    Args:
        start (int|float|Tensor, optional): The first value; the end when end is None (then the
            values start at 0). Default: 0.
        end (int|float|Tensor, optional): The end of the interval (excluded). Default: None.
        step (int|float|Tensor, optional): The spacing (may be negative). Default: 1.
        dtype (str|fw.dtype, optional): The dtype of the result. None: int64 when start, end and
            step are all integers, else the default float dtype. Default: None.
        name (str, optional): Paddle's op name; unused in eager mode. Default: None.

    Returns:
        Tensor: a 1-D tensor of ceil((end - start) / step) values.

    Examples:
        >>> import fw
        >>> fw.arange(5).tolist()
        [0, 1, 2, 3, 4]
        >>> fw.arange(1, 4, 0.5).tolist()
        [1.0, 1.5, 2.0, 2.5, 3.0, 3.5]
        >>> fw.arange(5, 0, -2).tolist()
        [5, 3, 1]
        >>> fw.arange(3, dtype="float32").dtype
        fw.float32
    """
    from fw.core.dispatch import invoke

    if end is None:
        start, end = 0, start
    if _dyn.has_symbolic((start, end, step)):
        return _dyn.arange(start, end, step, dtype)
    return invoke(arange_op, [], {"start": start, "end": end, "step": step, "dtype": dtype})


@public()
def meshgrid(*args, **kwargs):
    """Coordinate grids from k 1-D tensors.

    With sizes n1, ..., nk the result is k tensors of shape [n1, ..., nk] (indexing="ij", the
    default, as in Paddle) or with the first two sizes swapped (indexing="xy", NumPy's
    default).

    Args:
        *args (Tensor): The 1-D tensors (or one list of them).
        **kwargs: ``indexing`` ("ij" or "xy") and ``name`` (unused).

    Returns:
        list[Tensor]: the k grids.

    Examples:
        >>> import fw
        >>> gx, gy = fw.meshgrid(fw.arange(2), fw.arange(3))
        >>> gx.shape, gy.shape
        ([2, 3], [2, 3])
        >>> gx.tolist(), gy.tolist()
        ([[0, 0, 0], [1, 1, 1]], [[0, 1, 2], [0, 1, 2]])
        >>> fw.meshgrid([fw.arange(2), fw.arange(3)], indexing="xy")[0].shape
        [3, 2]
    """
    from fw.core.dispatch import invoke

    indexing = kwargs.pop("indexing", "ij")
    kwargs.pop("name", None)
    if kwargs:
        raise TypeError(f"meshgrid() got unexpected keyword arguments {sorted(kwargs)}")
    if len(args) == 1 and isinstance(args[0], (list, tuple)):
        args = tuple(args[0])
    return list(invoke(meshgrid_op, [list(args)], {"indexing": indexing}))


@public(method=True)
def increment(x, value=1.0, name=None):
    """Add a value to a one-element tensor, in place (Paddle's loop-counter op).

    Args:
        x (Tensor): A tensor with one element.
        value (float, optional): The amount to add. Default: 1.0.
        name (str, optional): Paddle's op name; unused in eager mode. Default: None.

    Returns:
        Tensor: x, incremented.

    Examples:
        >>> import fw
        >>> i = fw.zeros([1], dtype="int64")
        >>> _ = fw.increment(i)
        >>> i.tolist()
        [1]
    """
    from fw.core.dispatch import assign_inplace, invoke

    out = invoke(increment_op, [x], {"value": value})
    if isinstance(x, Tensor):
        return assign_inplace("increment", x, out)
    return out


def _dtype_kind(x):
    d = getattr(x, "dtype", None)
    if not isinstance(d, _dt.DType):
        raise InvalidTypeError(f"expected a Tensor, got {type(x).__name__}")
    return d.kind


@public(method=True)
def is_floating_point(x):
    """Whether x's dtype is a floating type (float16, bfloat16, float32, float64).

    Args:
        x (Tensor): The tensor.

    Returns:
        bool: True for floating dtypes.

    Examples:
        >>> import fw
        >>> fw.is_floating_point(fw.zeros([1])), fw.is_floating_point(fw.zeros([1], "int32"))
        (True, False)
    """
    return _dtype_kind(x) == _dt._FLOAT


@public(method=True)
def is_complex(x):
    """Whether x's dtype is complex64 or complex128.

    Args:
        x (Tensor): The tensor.

    Returns:
        bool: True for complex dtypes.

    Examples:
        >>> import fw
        >>> fw.is_complex(fw.to_tensor([1j])), fw.is_complex(fw.zeros([1]))
        (True, False)
    """
    return _dtype_kind(x) == _dt._COMPLEX


@public(method=True)
def is_integer(x):
    """Whether x's dtype is an integer type (uint8, int8, int16, int32, int64; not bool).

    Args:
        x (Tensor): The tensor.

    Returns:
        bool: True for integer dtypes.

    Examples:
        >>> import fw
        >>> fw.is_integer(fw.to_tensor([1])), fw.is_integer(fw.to_tensor([True]))
        (True, False)
    """
    return _dtype_kind(x) == _dt._INT


@public()
def to_tensor_(data, dtype=None, place=None, stop_gradient=True):  # pragma: no cover - alias
    """A spelling of ``fw.to_tensor`` kept for compatibility (see fw.to_tensor).

    Args:
        data (scalar|list|tuple|numpy.ndarray|Tensor): The values.
        dtype (str|fw.dtype, optional): The dtype; None infers it. Default: None.
        place (str|fw.Place, optional): The device; None: the current one. Default: None.
        stop_gradient (bool, optional): Whether autograd ignores the tensor. Default: True.

    Returns:
        Tensor: a new tensor.

    Examples:
        >>> import fw
        >>> fw.to_tensor_([1, 2]).tolist()
        [1, 2]
    """
    return to_tensor(data, dtype, place, stop_gradient)
