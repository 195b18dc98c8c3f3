"""The Paddle-signature functions of the shape ops that the generated ones cannot express.

The ops themselves (declaration, infer, reference kernel) are in `fw.core.ops.shape`;
these wrappers are registered with `public` when the op table is loaded.
"""

from __future__ import annotations

import itertools

import numpy as np

from fw.core.dispatch import grad_state, invoke
from fw.core.errors import InvalidArgumentError, InvalidTypeError, UnsupportedError
from fw.core.ir.core import Value
from fw.core.ir.types import DYN
from fw.core.ops import dynamic_shape as _dyn
from fw.core.ops._api import public
from fw.core.ops._args import as_int, as_ints
from fw.core.ops._infer import norm_axis
from fw.core.ops._registry import OPS
from fw.core.ops.shape import (
    _ndim,
    _swap_perm,
    concat_op,
    expand_op,
    flatten_op,
    rep_op,
    reshape_op,
    split_op,
    squeeze_op,
    stack_op,
    tile_op,
    transpose_op,
    unsqueeze_op,
    view_dtype_op,
)
from fw.core.tensor import Tensor

_INT_MAX = 2**63 - 1


def _swap_in(name, x, out):
    """Finish an in-place op that may change x's shape (``reshape_``, ``squeeze_``…):
    x takes out's array (a view of its own data) and its autograd history. While a
    program is being built the new value is returned instead."""
    if type(x) is Value or type(out) is Value:
        return out
    if not isinstance(x, Tensor):
        raise InvalidTypeError(f"{name}: the in-place target must be a Tensor, got "
                               f"{type(x).__name__}")
    needs_grad = not out._sg
    if needs_grad and grad_state.enabled and x._node is None and not x._sg:
        raise InvalidArgumentError(
            f"{name}: x is a leaf tensor that requires grad (stop_gradient=False); an in-place "
            f"op on it would lose its gradient. Use the out-of-place op, or do it under "
            f"fw.no_grad()")
    # a version bump: values saved for backward from the old x must not be reused
    x._replace_data(out._data)
    if needs_grad and grad_state.rebase is not None:
        grad_state.rebase(x, out)
    return x


def _shape_args(shape, more, op):
    """``reshape(x, [2, 3])`` or ``x.reshape(2, 3)`` (PyTorch style)."""
    if more:
        if len(more) == 1 and isinstance(more[0], str):  # positional name=
            return shape
        return (shape, *more)
    return shape


@public(method=True)
def reshape(x, shape, *more, name=None):
    """Give x's values a new shape.

    The new shape must have as many elements as x. An entry 0 keeps x's size at that position
    (Paddle's convention) and one entry may be -1, inferred from the others.

    Args:
        x (Tensor): The input tensor.
        shape (list|tuple|Tensor): The new shape: a list or tuple of ints (or of one-element
            integer tensors), or a 1-D integer tensor. The ints may also be passed as separate
            arguments: ``x.reshape(2, 3)``.
        name (str, optional): Paddle's op name; unused in eager mode. Default: None.

    Returns:
        Tensor: a tensor of the new shape with x's values in row-major order.

    Examples:
        >>> import fw
        >>> x = fw.arange(6)
        >>> fw.reshape(x, [2, -1]).tolist()
        [[0, 1, 2], [3, 4, 5]]
        >>> x.reshape(3, 2).shape
        [3, 2]
        >>> fw.reshape(fw.zeros([2, 3, 4]), [0, -1]).shape
        [2, 12]
    """
    shape = _shape_args(shape, more, "reshape")
    if _dyn.has_symbolic(shape):  # a program is being built with run-time sizes
        st, static = _dyn.shape_tensor(shape, "reshape")
        return invoke(OPS["reshape_dyn"], [x, st], {"static_shape": static})
    return invoke(reshape_op, [x], {"shape": shape})


@public(method=True)
def reshape_(x, shape, *more, name=None):
    """In-place version of ``fw.reshape``: x itself takes the new shape (and is returned).

    Args:
        x (Tensor): The input tensor.
        shape (list|tuple|Tensor): The new shape (see fw.reshape).
        name (str, optional): Paddle's op name; unused in eager mode. Default: None.

    Returns:
        Tensor: x, reshaped in place.

    Examples:
        >>> import fw
        >>> x = fw.zeros([2, 1, 3])
        >>> _ = x.reshape_([3, 2])
        >>> x.shape
        [3, 2]
    """
    return _swap_in("reshape_", x, reshape(x, _shape_args(shape, more, "reshape_")))


def _is_shape_spec(v):
    return isinstance(v, (list, tuple, Tensor, Value)) or isinstance(v, (int, np.integer))


@public(method=True)
def view(x, shape_or_dtype, *more, name=None):
    """View x with a new shape, or reinterpret its bytes as another dtype.

    With a shape, this is ``fw.reshape``. With a dtype, the elements' bytes are read as that
    dtype; the last dimension scales by the ratio of the element sizes.

    Args:
        x (Tensor): The input tensor.
        shape_or_dtype (list|tuple|str|fw.dtype): The new shape (ints may also be passed as
            separate arguments) or the dtype to reinterpret the bytes as.
        name (str, optional): Paddle's op name; unused in eager mode. Default: None.

    Returns:
        Tensor: x's data in the new shape or dtype (fw copies where Paddle shares memory).

    Examples:
        >>> import fw
        >>> fw.view(fw.zeros([2, 4, 6]), [8, 6]).shape
        [8, 6]
        >>> fw.ones([2], dtype="float32").view("int32").tolist()
        [1065353216, 1065353216]
    """
    if more or (_is_shape_spec(shape_or_dtype) and not isinstance(shape_or_dtype, bool)):
        return reshape(x, _shape_args(shape_or_dtype, more, "view"))
    return invoke(view_dtype_op, [x], {"dtype": shape_or_dtype})


@public(method=True)
def view_as(x, other, name=None):
    """View x with the shape of another tensor (``x.reshape(other.shape)``).

    Args:
        x (Tensor): The input tensor.
        other (Tensor): The tensor whose shape is used; its element count must equal x's.
        name (str, optional): Paddle's op name; unused in eager mode. Default: None.

    Returns:
        Tensor: x's values in other's shape.

    Examples:
        >>> import fw
        >>> fw.view_as(fw.arange(6), fw.zeros([3, 2])).tolist()
        [[0, 1], [2, 3], [4, 5]]
    """
    return reshape(x, list(other.shape))


@public(method=True)
def permute(x, *perm, name=None):
    """Reorder the axes of x (``fw.transpose`` with the permutation given inline).

    Args:
        x (Tensor): The input tensor.
        perm (int...|list|tuple): The new order of the axes, as separate ints
            (``x.permute(1, 0, 2)``) or one list.
        name (str, optional): Paddle's op name; unused in eager mode. Default: None.

    Returns:
        Tensor: x with its axes permuted.

    Examples:
        >>> import fw
        >>> x = fw.zeros([2, 3, 4])
        >>> x.permute(2, 0, 1).shape
        [4, 2, 3]
        >>> fw.permute(x, [1, 0, 2]).shape
        [3, 2, 4]
    """
    if len(perm) == 1 and isinstance(perm[0], (list, tuple, Tensor)):
        perm = perm[0]
    return invoke(transpose_op, [x], {"perm": perm})


@public(method=True)
def t(input, name=None):
    """Transpose a matrix; 0-D and 1-D tensors are returned unchanged.

    Args:
        input (Tensor): A tensor with at most 2 dimensions (use fw.transpose for more).
        name (str, optional): Paddle's op name; unused in eager mode. Default: None.

    Returns:
        Tensor: the transposed matrix.

    Examples:
        >>> import fw
        >>> fw.t(fw.to_tensor([[1, 2, 3], [4, 5, 6]])).tolist()
        [[1, 4], [2, 5], [3, 6]]
        >>> fw.t(fw.zeros([3])).shape
        [3]
    """
    nd = _ndim(input)
    if nd > 2:
        raise InvalidArgumentError(f"t: input must have at most 2 dimensions, got shape "
                                   f"{list(input.shape)}; use transpose(x, perm) instead")
    return invoke(transpose_op, [input], {"perm": tuple(range(nd))[::-1]})


@public(method=True)
def t_(input, name=None):
    """In-place version of ``fw.t``: x itself becomes its transpose.

    Args:
        input (Tensor): A tensor with at most 2 dimensions.
        name (str, optional): Paddle's op name; unused in eager mode. Default: None.

    Returns:
        Tensor: input, transposed in place.

    Examples:
        >>> import fw
        >>> x = fw.zeros([2, 3])
        >>> _ = x.t_()
        >>> x.shape
        [3, 2]
    """
    return _swap_in("t_", input, t(input))


def _moveaxis_perm(nd, source, destination):
    src = as_ints(source, "moveaxis", "source")
    dst = as_ints(destination, "moveaxis", "destination")
    if len(src) != len(dst):
        raise InvalidArgumentError(f"moveaxis: 'source' {list(src)} and 'destination' "
                                   f"{list(dst)} must have the same number of axes")
    src = [norm_axis(a, nd, "source") for a in src]
    dst = [norm_axis(a, nd, "destination") for a in dst]
    if len(set(src)) != len(src) or len(set(dst)) != len(dst):
        raise InvalidArgumentError(f"moveaxis: repeated axis in 'source' {list(src)} or "
                                   f"'destination' {list(dst)}")
    order = [a for a in range(nd) if a not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return tuple(order)


@public(method=True)
def moveaxis(x, source, destination, name=None):
    """Move axes of x to new positions; the other axes keep their relative order.

    Args:
        x (Tensor): The input tensor.
        source (int|list|tuple): The axes to move.
        destination (int|list|tuple): Their positions in the result (as many as source).
        name (str, optional): Paddle's op name; unused in eager mode. Default: None.

    Returns:
        Tensor: x with its axes rearranged.

    Examples:
        >>> import fw
        >>> fw.moveaxis(fw.zeros([3, 2, 1]), [0, 1], [2, 0]).shape
        [2, 1, 3]
        >>> fw.moveaxis(fw.zeros([3, 4, 5]), 0, -1).shape
        [4, 5, 3]
    """
    return invoke(transpose_op, [x], {"perm": _moveaxis_perm(_ndim(x), source, destination)})


@public(method=True)
def swapaxes(x, axis0=None, axis1=None, name=None, *, perm=None):
    """Swap two axes of x.

    As Paddle's alias of ``transpose``, a whole permutation is also accepted:
    ``fw.swapaxes(x, [1, 0, 2])`` or ``perm=``.

    Args:
        x (Tensor): The input tensor.
        axis0 (int|list, optional): The first axis (or a permutation). Default: None.
        axis1 (int, optional): The second axis. Default: None.
        name (str, optional): Paddle's op name; unused in eager mode. Default: None.
        perm (list|tuple, optional): A permutation of all axes, instead of two axes.
            Default: None.

    Returns:
        Tensor: x with the two axes exchanged.

    Examples:
        >>> import fw
        >>> fw.swapaxes(fw.zeros([2, 3, 4]), 0, 2).shape
        [4, 3, 2]
        >>> fw.to_tensor([[1, 2], [3, 4]]).swapaxes(0, 1).tolist()
        [[1, 3], [2, 4]]
    """
    if perm is None and isinstance(axis0, (list, tuple)) and axis1 is None:
        perm = axis0
    if perm is not None:
        return invoke(transpose_op, [x], {"perm": perm})
    if axis0 is None or axis1 is None:
        raise InvalidArgumentError("swapaxes: give two axes (axis0, axis1) or a permutation")
    return invoke(transpose_op, [x], {"perm": _swap_perm(_ndim(x), axis0, axis1, "swapaxes")})


@public(method=True)
def swapdims(x, dim0=None, dim1=None, name=None, *, perm=None):
    """Swap two dimensions of x (the same as ``fw.swapaxes``).

    Args:
        x (Tensor): The input tensor.
        dim0 (int|list, optional): The first dimension (or a permutation). Default: None.
        dim1 (int, optional): The second dimension. Default: None.
        name (str, optional): Paddle's op name; unused in eager mode. Default: None.
        perm (list|tuple, optional): A permutation of all axes. Default: None.

    Returns:
        Tensor: x with the two dimensions exchanged.

    Examples:
        >>> import fw
        >>> fw.swapdims(fw.zeros([2, 3, 4]), 1, 2).shape
        [2, 4, 3]
    """
    return swapaxes(x, dim0, dim1, perm=perm)


@public(method=True)
def squeeze(x, axis=None, name=None):
    """Remove dimensions of size 1.

    With axis None every size-1 dimension goes; otherwise only the listed axes, and a listed
    axis whose size is not 1 is kept (no error, as in Paddle).

    Args:
        x (Tensor): The input tensor.
        axis (int|list|tuple, optional): The size-1 axes to remove; None removes all of them.
            Default: None.
        name (str, optional): Paddle's op name; unused in eager mode. Default: None.

    Returns:
        Tensor: x without those dimensions.

    Examples:
        >>> import fw
        >>> x = fw.zeros([1, 3, 1])
        >>> fw.squeeze(x).shape
        [3]
        >>> fw.squeeze(x, axis=0).shape
        [3, 1]
        >>> x.squeeze([0, 1]).shape
        [3, 1]
    """
    return invoke(squeeze_op, [x], {"axis": axis})


@public(method=True)
def squeeze_(x, axis=None, name=None):
    """In-place version of ``fw.squeeze``: x itself takes the new shape (and is returned).

    Args:
        x (Tensor): The input tensor.
        axis (int|list|tuple, optional): The size-1 axes to remove; None removes all of them.
            Default: None.
        name (str, optional): Paddle's op name; unused in eager mode. Default: None.

    Returns:
        Tensor: x, reshaped in place.

    Examples:
        >>> import fw
        >>> x = fw.zeros([2, 1, 3])
        >>> _ = x.squeeze_(1)
        >>> x.shape
        [2, 3]
    """
    return _swap_in("squeeze_", x, squeeze(x, axis))


@public(method=True)
def unsqueeze(x, axis, name=None):
    """Insert dimensions of size 1.

    With several axes, each is a position in the shape built so far (so ``[0, 2]`` on a
    [5, 10] tensor gives [1, 5, 1, 10]).

    Args:
        x (Tensor): The input tensor.
        axis (int|list|tuple|Tensor): Where to insert (negative counts from the end of the
            result).
        name (str, optional): Paddle's op name; unused in eager mode. Default: None.

    Returns:
        Tensor: x with the new dimensions.

    Examples:
        >>> import fw
        >>> fw.unsqueeze(fw.zeros([5, 10]), [0, 2]).shape
        [1, 5, 1, 10]
        >>> fw.zeros([3]).unsqueeze(-1).shape
        [3, 1]
    """
    return invoke(unsqueeze_op, [x], {"axis": axis})


@public(method=True)
def unsqueeze_(x, axis, name=None):
    """In-place version of ``fw.unsqueeze``: x itself takes the new shape (and is returned).

    Args:
        x (Tensor): The input tensor.
        axis (int|list|tuple|Tensor): Where to insert.
        name (str, optional): Paddle's op name; unused in eager mode. Default: None.

    Returns:
        Tensor: x, reshaped in place.

    Examples:
        >>> import fw
        >>> x = fw.zeros([2, 1, 3])
        >>> _ = x.unsqueeze_(0)
        >>> x.shape
        [1, 2, 1, 3]
    """
    return _swap_in("unsqueeze_", x, unsqueeze(x, axis))


@public(method=True)
def flatten(x, start_axis=0, stop_axis=-1, name=None):
    """Merge the axes start_axis .. stop_axis (both included) into one.

    A 0-D tensor becomes shape [1].

    Args:
        x (Tensor): The input tensor.
        start_axis (int, optional): The first axis to merge. Default: 0.
        stop_axis (int, optional): The last axis to merge. Default: -1.
        name (str, optional): Paddle's op name; unused in eager mode. Default: None.

    Returns:
        Tensor: x with those axes merged.

    Examples:
        >>> import fw
        >>> x = fw.zeros([2, 3, 4, 4])
        >>> fw.flatten(x, start_axis=1, stop_axis=2).shape
        [2, 12, 4]
        >>> x.flatten().shape
        [96]
        >>> fw.flatten(x, 1).shape
        [2, 48]
    """
    return invoke(flatten_op, [x], {"start_axis": start_axis, "stop_axis": stop_axis})


@public(method=True)
def flatten_(x, start_axis=0, stop_axis=-1, name=None):
    """In-place version of ``fw.flatten``: x itself takes the new shape (and is returned).

    Args:
        x (Tensor): The input tensor.
        start_axis (int, optional): The first axis to merge. Default: 0.
        stop_axis (int, optional): The last axis to merge. Default: -1.
        name (str, optional): Paddle's op name; unused in eager mode. Default: None.

    Returns:
        Tensor: x, reshaped in place.

    Examples:
        >>> import fw
        >>> x = fw.zeros([2, 1, 3])
        >>> _ = x.flatten_()
        >>> x.shape
        [6]
    """
    return _swap_in("flatten_", x, flatten(x, start_axis, stop_axis))


@public(method=True)
def ravel(input, name=None):
    """Flatten x to one dimension (``fw.flatten(x)``).

    Args:
        input (Tensor): The input tensor.
        name (str, optional): Paddle's op name; unused in eager mode. Default: None.

    Returns:
        Tensor: a 1-D tensor of x's values in row-major order.

    Examples:
        >>> import fw
        >>> fw.ravel(fw.to_tensor([[1, 2], [3, 4]])).tolist()
        [1, 2, 3, 4]
    """
    return invoke(flatten_op, [input], {"start_axis": 0, "stop_axis": -1})


def _tensor_list(x, op, arg="x"):
    if isinstance(x, (Tensor, Value)) or not isinstance(x, (list, tuple)):
        raise InvalidTypeError(f"{op}: '{arg}' must be a list or tuple of tensors, got "
                               f"{type(x).__name__}")
    return list(x)


@public(aliases=("cat",))
def concat(x, axis=0, name=None):
    """Join tensors along an existing axis.

    The tensors must have the same shape except along axis; they are promoted to one dtype.

    Args:
        x (list[Tensor]|tuple[Tensor]): The tensors to join.
        axis (int|Tensor, optional): The axis to join along (negative counts from the end).
            Default: 0.
        name (str, optional): Paddle's op name; unused in eager mode. Default: None.

    Returns:
        Tensor: the joined tensor.

    Examples:
        >>> import fw
        >>> a = fw.to_tensor([[1, 2], [3, 4]])
        >>> b = fw.to_tensor([[5, 6]])
        >>> fw.concat([a, b]).tolist()
        [[1, 2], [3, 4], [5, 6]]
        >>> fw.concat([a, a], axis=-1).shape
        [2, 4]
    """
    return invoke(concat_op, [_tensor_list(x, "concat")], {"axis": axis})


@public()
def stack(x, axis=0, name=None):
    """Stack tensors of one shape along a new axis.

    Args:
        x (list[Tensor]|tuple[Tensor]): The tensors, all of the same shape.
        axis (int, optional): The position of the new axis in the result. Default: 0.
        name (str, optional): Paddle's op name; unused in eager mode. Default: None.

    Returns:
        Tensor: a tensor with one more dimension than the inputs.

    Examples:
        >>> import fw
        >>> a, b = fw.to_tensor([1, 2]), fw.to_tensor([3, 4])
        >>> fw.stack([a, b]).tolist()
        [[1, 2], [3, 4]]
        >>> fw.stack([a, b], axis=1).tolist()
        [[1, 3], [2, 4]]
    """
    return invoke(stack_op, [_tensor_list(x, "stack")], {"axis": axis})


def _atleast(x, n):
    nd = _ndim(x)
    if nd >= n:
        return x
    if n == 1 or nd == 0:
        return reshape(x, [1] * (n - nd) + list(x.shape) if nd else [1] * n)
    if n == 2:  # [k] -> [1, k]
        return unsqueeze(x, 0)
    # n == 3: [k] -> [1, k, 1], [a, b] -> [a, b, 1]
    return unsqueeze(x, [0, 2]) if nd == 1 else unsqueeze(x, -1)


def _atleast_public(n):
    def f(*inputs, name=None):
        outs = [_atleast(x if isinstance(x, (Tensor, Value)) else _to_tensor(x), n)
                for x in inputs]
        return outs[0] if len(outs) == 1 else outs

    f.__name__ = f.__qualname__ = f"atleast_{n}d"
    f.__doc__ = (f"Each input viewed with at least {n} dimensions (size-1 axes are added); "
                 f"one input gives a tensor, several a list.")
    return public(f.__name__)(f)


def _to_tensor(x):
    from fw.core.tensor import to_tensor

    return to_tensor(x)


atleast_1d = _atleast_public(1)


atleast_2d = _atleast_public(2)


atleast_3d = _atleast_public(3)


@public()
def hstack(x, name=None):
    """Stack tensors horizontally: concat along axis 1 (axis 0 for 1-D tensors).

    Args:
        x (list[Tensor]|tuple[Tensor]): The tensors.
        name (str, optional): Paddle's op name; unused in eager mode. Default: None.

    Returns:
        Tensor: the joined tensor.

    Examples:
        >>> import fw
        >>> fw.hstack([fw.to_tensor([1, 2]), fw.to_tensor([3])]).tolist()
        [1, 2, 3]
        >>> fw.hstack([fw.zeros([2, 1]), fw.ones([2, 2])]).shape
        [2, 3]
    """
    xs = [_atleast(t, 1) for t in _tensor_list(x, "hstack")]
    return concat(xs, axis=0 if _ndim(xs[0]) == 1 else 1)


@public(aliases=("row_stack",))
def vstack(x, name=None):
    """Stack tensors vertically: concat along axis 0 after making each at least 2-D.

    Args:
        x (list[Tensor]|tuple[Tensor]): The tensors.
        name (str, optional): Paddle's op name; unused in eager mode. Default: None.

    Returns:
        Tensor: the joined tensor.

    Examples:
        >>> import fw
        >>> fw.vstack([fw.to_tensor([1, 2]), fw.to_tensor([3, 4])]).tolist()
        [[1, 2], [3, 4]]
    """
    return concat([_atleast(t, 2) for t in _tensor_list(x, "vstack")], axis=0)


@public()
def dstack(x, name=None):
    """Stack tensors along the third axis after making each at least 3-D.

    Args:
        x (list[Tensor]|tuple[Tensor]): The tensors.
        name (str, optional): Paddle's op name; unused in eager mode. Default: None.

    Returns:
        Tensor: the joined tensor.

    Examples:
        >>> import fw
        >>> fw.dstack([fw.to_tensor([1, 2]), fw.to_tensor([3, 4])]).tolist()
        [[[1, 3], [2, 4]]]
    """
    return concat([_atleast(t, 3) for t in _tensor_list(x, "dstack")], axis=2)


@public()
def column_stack(x, name=None):
    """Stack tensors as columns: 0-D and 1-D tensors become [n, 1] columns, then concat on axis 1.

    Args:
        x (list[Tensor]|tuple[Tensor]): The tensors.
        name (str, optional): Paddle's op name; unused in eager mode. Default: None.

    Returns:
        Tensor: a 2-D (or higher) tensor.

    Examples:
        >>> import fw
        >>> fw.column_stack([fw.to_tensor([1, 2]), fw.to_tensor([3, 4])]).tolist()
        [[1, 3], [2, 4]]
    """
    cols = []
    for t in _tensor_list(x, "column_stack"):
        nd = _ndim(t)
        cols.append(reshape(t, [-1, 1]) if nd <= 1 else t)
    return concat(cols, axis=1)


@public(method=True)
def split(x, num_or_sections, axis=0, name=None):
    """Split x along an axis into equal parts or parts of given sizes.

    Args:
        x (Tensor): The input tensor.
        num_or_sections (int|list|tuple): The number of equal parts (it must divide the size of
            axis), or the size of each part (one size may be -1, inferred).
        axis (int|Tensor, optional): The axis to split. Default: 0.
        name (str, optional): Paddle's op name; unused in eager mode. Default: None.

    Returns:
        list[Tensor]: the parts.

    Examples:
        >>> import fw
        >>> x = fw.zeros([3, 9])
        >>> [t.shape for t in fw.split(x, 3, axis=1)]
        [[3, 3], [3, 3], [3, 3]]
        >>> [t.shape for t in fw.split(x, [2, 3, -1], axis=1)]
        [[3, 2], [3, 3], [3, 4]]
    """
    return list(invoke(split_op, [x], {"num_or_sections": num_or_sections, "axis": axis}))


@public(method=True)
def chunk(x, chunks, axis=0, name=None):
    """Split x into a number of equal parts along an axis.

    Args:
        x (Tensor): The input tensor.
        chunks (int): The number of parts; it must divide the size of axis.
        axis (int|Tensor, optional): The axis to split. Default: 0.
        name (str, optional): Paddle's op name; unused in eager mode. Default: None.

    Returns:
        list[Tensor]: the parts.

    Examples:
        >>> import fw
        >>> [t.tolist() for t in fw.chunk(fw.arange(6), 3)]
        [[0, 1], [2, 3], [4, 5]]
    """
    return split(x, as_int(chunks, "chunk", "chunks"), axis)


def _tensor_split_sections(d, num_or_indices, op):
    if isinstance(num_or_indices, (list, tuple)) or (
            isinstance(num_or_indices, Tensor) and num_or_indices.ndim == 1):
        idx = as_ints(num_or_indices, op, "num_or_indices")
        if d == DYN:
            if any(i < 0 for i in idx):
                raise UnsupportedError(f"{op}: negative indices need a static axis size")
            prev, secs = 0, []
            for i in idx:
                secs.append(max(i - prev, 0))
                prev = max(prev, i)
            return secs + [-1]
        bounds = [0] + [min(max(i + d if i < 0 else i, 0), d) for i in idx] + [d]
        return [max(b - a, 0) for a, b in zip(bounds, bounds[1:])] if _monotone(bounds) else \
            _clamped_sections(bounds)
    n = as_int(num_or_indices, op, "num_or_indices")
    if n <= 0:
        raise InvalidArgumentError(f"{op}: 'num_or_indices' must be positive, got {n}")
    if d == DYN:
        raise UnsupportedError(f"{op}: splitting a dynamic axis into {n} parts needs its size; "
                               f"give split indices instead")
    q, r = divmod(d, n)
    return [q + 1] * r + [q] * (n - r)


def _monotone(bounds):
    return all(a <= b for a, b in zip(bounds, bounds[1:]))


def _clamped_sections(bounds):
    # like NumPy: a later index before an earlier one gives an empty part
    secs = []
    hi = 0
    for b in bounds[1:]:
        b2 = max(b, hi)
        secs.append(b2 - hi)
        hi = b2
    return secs


@public(method=True)
def tensor_split(x, num_or_indices, axis=0, name=None):
    """Split x into nearly equal parts, or at given indices, along an axis.

    With an int n the first ``size % n`` parts get one more element (unlike fw.split, n need
    not divide the size); with a list, x is cut before each listed index.

    Args:
        x (Tensor): The input tensor.
        num_or_indices (int|list|tuple|Tensor): The number of parts or the cut indices.
        axis (int, optional): The axis to split. Default: 0.
        name (str, optional): Paddle's op name; unused in eager mode. Default: None.

    Returns:
        list[Tensor]: the parts.

    Examples:
        >>> import fw
        >>> [t.shape for t in fw.tensor_split(fw.zeros([8]), 3)]
        [[3], [3], [2]]
        >>> [t.tolist() for t in fw.tensor_split(fw.arange(6), [1, 4])]
        [[0], [1, 2, 3], [4, 5]]
    """
    nd = _ndim(x)
    if nd == 0:
        raise InvalidArgumentError("tensor_split: x must have at least one dimension")
    a = norm_axis(as_int(axis, "tensor_split", "axis"), nd)
    secs = _tensor_split_sections(x.shape[a], num_or_indices, "tensor_split")
    if len(secs) == 1 and secs[0] == -1:
        return [split(x, 1, a)[0]]
    return split(x, secs, a)


_DIR_SPLIT = {
    "hsplit": {"what": "horizontally: along axis 1 (axis 0 for a 1-D tensor)", "nd": 1,
               "shape": "[2, 4]", "out": "[[2, 2], [2, 2]]"},
    "vsplit": {"what": "vertically: along axis 0", "nd": 2, "shape": "[4, 2]",
               "out": "[[2, 2], [2, 2]]"},
    "dsplit": {"what": "depth-wise: along axis 2", "nd": 3, "shape": "[1, 2, 4]",
               "out": "[[1, 2, 2], [1, 2, 2]]"},
}
_DIR_SPLIT_DOC = """Split x {what} (``fw.tensor_split`` on that axis).

    Args:
        x (Tensor): A tensor with at least {nd} dimension(s).
        num_or_indices (int|list|tuple): The number of nearly equal parts, or the indices to
            cut before.
        name (str, optional): Paddle's op name; unused in eager mode. Default: None.

    Returns:
        list[Tensor]: the parts.

    Examples:
        >>> import fw
        >>> [t.shape for t in fw.{op}(fw.zeros({shape}), 2)]
        {out}
    """


def _dir_split(op, min_nd, axis_of):
    def f(x, num_or_indices, name=None):
        nd = _ndim(x)
        if nd < min_nd:
            raise InvalidArgumentError(f"{op}: x must have at least {min_nd} dimensions, got "
                                       f"shape {list(x.shape)}")
        return tensor_split(x, num_or_indices, axis_of(nd))

    f.__name__ = f.__qualname__ = op
    f.__doc__ = _DIR_SPLIT_DOC.format(op=op, **_DIR_SPLIT[op])
    return public(op, method=True)(f)


hsplit = _dir_split("hsplit", 1, lambda nd: 0 if nd == 1 else 1)


vsplit = _dir_split("vsplit", 2, lambda nd: 0)


dsplit = _dir_split("dsplit", 3, lambda nd: 2)


@public(method=True)
def unbind(input, axis=0, name=None):
    """Split x into its slices along an axis, removing that axis.

    Args:
        input (Tensor): The input tensor.
        axis (int, optional): The axis to unbind. Default: 0.
        name (str, optional): Paddle's op name; unused in eager mode. Default: None.

    Returns:
        list[Tensor]: one tensor per index along axis.

    Examples:
        >>> import fw
        >>> [t.tolist() for t in fw.unbind(fw.to_tensor([[1, 2], [3, 4]]), axis=1)]
        [[1, 3], [2, 4]]
    """
    return list(invoke(OPS["unbind"], [input], {"axis": axis}))


@public(method=True)
def unstack(x, axis=0, num=None, name=None):
    """Split x into its slices along an axis, removing that axis (like ``fw.unbind``).

    Args:
        x (Tensor): The input tensor.
        axis (int, optional): The axis to unstack. Default: 0.
        num (int, optional): If given, it must equal the size of that axis. Default: None.
        name (str, optional): Paddle's op name; unused in eager mode. Default: None.

    Returns:
        list[Tensor]: one tensor per index along axis.

    Examples:
        >>> import fw
        >>> len(fw.unstack(fw.zeros([3, 2]), axis=0))
        3
    """
    outs = unbind(x, axis)
    if num is not None and as_int(num, "unstack", "num") != len(outs):
        raise InvalidArgumentError(f"unstack: 'num' is {num} but axis {axis} of x has size "
                                   f"{len(outs)}")
    return outs


@public(method=True)
def expand(x, shape, *more, name=None):
    """Broadcast x to a larger shape.

    Each dimension of x must be 1 or equal to the target size; -1 keeps x's size; new leading
    dimensions may be added.

    Args:
        x (Tensor): The input tensor.
        shape (list|tuple|Tensor): The target shape (ints may also be passed as separate
            arguments).
        name (str, optional): Paddle's op name; unused in eager mode. Default: None.

    Returns:
        Tensor: a new tensor of the target shape.

    Examples:
        >>> import fw
        >>> x = fw.to_tensor([[1], [2]])
        >>> fw.expand(x, [2, 3]).tolist()
        [[1, 1, 1], [2, 2, 2]]
        >>> x.expand(4, -1, 2).shape
        [4, 2, 2]
    """
    shape = _shape_args(shape, more, "expand")
    if _dyn.has_symbolic(shape):  # a program is being built with run-time sizes
        st, static = _dyn.shape_tensor(shape, "expand", _dyn.RUNTIME)
        return invoke(OPS["expand_dyn"], [x, st], {"static_shape": static})
    return invoke(expand_op, [x], {"shape": shape})


@public(method=True)
def broadcast_to(x, shape, name=None):
    """Broadcast x to a shape (the same as ``fw.expand``).

    Args:
        x (Tensor): The input tensor.
        shape (list|tuple|Tensor): The target shape; -1 keeps x's size.
        name (str, optional): Paddle's op name; unused in eager mode. Default: None.

    Returns:
        Tensor: a new tensor of the target shape.

    Examples:
        >>> import fw
        >>> fw.broadcast_to(fw.to_tensor([1, 2, 3]), [2, 3]).tolist()
        [[1, 2, 3], [1, 2, 3]]
    """
    return invoke(expand_op, [x], {"shape": shape})


@public()
def broadcast_tensors(input, name=None):
    """Broadcast several tensors to their common shape (NumPy's rules).

    Args:
        input (list[Tensor]|tuple[Tensor]): The tensors.
        name (str, optional): Paddle's op name; unused in eager mode. Default: None.

    Returns:
        list[Tensor]: the tensors, each with the common shape.

    Examples:
        >>> import fw
        >>> [t.shape for t in fw.broadcast_tensors([fw.zeros([2, 1]), fw.zeros([3])])]
        [[2, 3], [2, 3]]
    """
    return list(invoke(OPS["broadcast_tensors"], [_tensor_list(input, "broadcast_tensors",
                                                                "input")], {}))


@public(method=True)
def tile(x, repeat_times, *more, name=None):
    """Repeat x a number of times along each axis.

    If repeat_times has more entries than x has dimensions, x gets leading dimensions of size
    1 first; with fewer, the leading axes are repeated once.

    Args:
        x (Tensor): The input tensor.
        repeat_times (list|tuple|Tensor): The number of copies per axis (ints may also be
            passed as separate arguments).
        name (str, optional): Paddle's op name; unused in eager mode. Default: None.

    Returns:
        Tensor: the tiled tensor.

    Examples:
        >>> import fw
        >>> x = fw.to_tensor([1, 2])
        >>> fw.tile(x, [2]).tolist()
        [1, 2, 1, 2]
        >>> fw.tile(x, [2, 2]).tolist()
        [[1, 2, 1, 2], [1, 2, 1, 2]]
    """
    return invoke(tile_op, [x], {"repeat_times": _shape_args(repeat_times, more, "tile")})


@public(method=True)
def repeat_interleave(x, repeats, axis=None, name=None):
    """Repeat each element (or slice) of x, keeping repeats next to each other.

    Args:
        x (Tensor): The input tensor.
        repeats (int|Tensor): How many times: one count for all, or a 1-D tensor with one count
            per element along axis.
        axis (int, optional): The axis to repeat along; None flattens x first. Default: None.
        name (str, optional): Paddle's op name; unused in eager mode. Default: None.

    Returns:
        Tensor: the repeated tensor.

    Examples:
        >>> import fw
        >>> x = fw.to_tensor([[1, 2], [3, 4]])
        >>> fw.repeat_interleave(x, 2).tolist()
        [1, 1, 2, 2, 3, 3, 4, 4]
        >>> fw.repeat_interleave(x, fw.to_tensor([1, 2]), axis=0).tolist()
        [[1, 2], [3, 4], [3, 4]]
    """
    if isinstance(repeats, (Tensor, Value)) and not (isinstance(repeats, Tensor) and
                                                      repeats.ndim == 0):
        return invoke(rep_op, [x, repeats], {"repeats": 1, "axis": axis})
    if isinstance(repeats, (list, tuple, np.ndarray)):
        return invoke(rep_op, [x, np.asarray(repeats, dtype=np.int64)],
                      {"repeats": 1, "axis": axis})
    return invoke(rep_op, [x, None], {"repeats": repeats, "axis": axis})


# ---------------------------------------------------------------- crop
@public(method=True)
def crop(x, shape=None, offsets=None, name=None):
    """Cut a block of a given shape out of x, starting at given offsets.

    Args:
        x (Tensor): The input tensor.
        shape (list|tuple|Tensor, optional): The shape of the block; -1 takes the rest of that
            dimension; None means x's shape. Default: None.
        offsets (list|tuple|Tensor, optional): The start index per dimension; None means zeros.
            Default: None.
        name (str, optional): Paddle's op name; unused in eager mode. Default: None.

    Returns:
        Tensor: the block.

    Examples:
        >>> import fw
        >>> x = fw.arange(9).reshape([3, 3])
        >>> fw.crop(x, shape=[2, 2], offsets=[1, 1]).tolist()
        [[4, 5], [7, 8]]
    """
    nd = _ndim(x)
    shape = list(x.shape) if shape is None else list(as_ints(shape, "crop", "shape"))
    offsets = [0] * nd if offsets is None else list(as_ints(offsets, "crop", "offsets"))
    if len(shape) != nd or len(offsets) != nd:
        raise InvalidArgumentError(f"crop: 'shape' {shape} and 'offsets' {offsets} must have "
                                   f"one entry per axis of x (shape {list(x.shape)})")
    ends = []
    for i, (s, o, d) in enumerate(zip(shape, offsets, x.shape)):
        if o < 0 or s < -1:
            raise InvalidArgumentError(f"crop: offset {o} / size {s} on axis {i} must not be "
                                       f"negative (size may be -1)")
        e = _INT_MAX if s == -1 else o + s
        if d != DYN and s != -1 and e > d:
            raise InvalidArgumentError(f"crop: offset {o} + size {s} exceeds axis {i} of size {d}")
        ends.append(e)
    return invoke(OPS["strided_slice"], [x], {"axes": tuple(range(nd)), "starts": offsets,
                                             "ends": ends, "strides": (1,) * nd})


# ---------------------------------------------------------------- products of tensors
@public()
def cartesian_prod(x, name=None):
    """The Cartesian product of 1-D tensors: every combination, one per row.

    Args:
        x (list[Tensor]|tuple[Tensor]): 1-D tensors.
        name (str, optional): Paddle's op name; unused in eager mode. Default: None.

    Returns:
        Tensor: a [N, len(x)] tensor (1-D when x holds one tensor).

    Examples:
        >>> import fw
        >>> fw.cartesian_prod([fw.to_tensor([1, 2]), fw.to_tensor([3, 4])]).tolist()
        [[1, 3], [1, 4], [2, 3], [2, 4]]
    """
    xs = _tensor_list(x, "cartesian_prod")
    for i, t in enumerate(xs):
        if _ndim(t) != 1:
            raise InvalidArgumentError(f"cartesian_prod: x[{i}] must be 1-D, got shape "
                                       f"{list(t.shape)}")
    if len(xs) == 1:
        return xs[0]
    n = len(xs)
    # axis i of the grid runs over x[i]; flattening the grids lists the rows in order
    cols = [reshape(t, [1] * i + [-1] + [1] * (n - i - 1)) for i, t in enumerate(xs)]
    return stack([flatten(g) for g in broadcast_tensors(cols)], axis=1)


@public()
def combinations(x, r=2, with_replacement=False, name=None):
    """All length-`r` combinations of the elements of 1-D x, as rows of a [C, r]
    tensor (like ``itertools.combinations``; with repetition when
    `with_replacement`).

    >>> import fw
    >>> fw.combinations(fw.to_tensor([1, 2, 3])).tolist()
    [[1, 2], [1, 3], [2, 3]]
    """
    if _ndim(x) != 1:
        raise InvalidArgumentError(f"combinations: x must be 1-D, got shape {list(x.shape)}")
    r = as_int(r, "combinations", "r")
    if r < 0:
        raise InvalidArgumentError(f"combinations: 'r' must not be negative, got {r}")
    n = x.shape[0]
    if n == DYN:
        raise UnsupportedError("combinations: x's length must be static")
    gen = itertools.combinations_with_replacement if with_replacement else \
        itertools.combinations
    idx = list(gen(range(n), r))
    if r == 0 or not idx:
        return reshape(invoke(OPS["gather"], [x, np.zeros([0], np.int64)], {"axis": 0}),
                       [0, r] if r else [0])
    cols = np.asarray(idx, dtype=np.int64).T
    return stack([invoke(OPS["gather"], [x, np.ascontiguousarray(c)], {"axis": 0})
                  for c in cols], axis=1)
