"""The Paddle-signature functions of the indexing ops that the generated ones cannot express.

The ops themselves (declaration, infer, reference kernel) are in `fw.core.ops.indexing`;
these wrappers are registered with `public` when the op table is loaded.
"""

from __future__ import annotations

import numpy as np

from fw.core.api.shape import unsqueeze
from fw.core.dispatch import assign_inplace, grad_state, invoke
from fw.core.errors import InvalidArgumentError, InvalidTypeError, UnsupportedError
from fw.core.ir.core import Value
from fw.core.ir.core import _state as _build
from fw.core.ir.types import DYN
from fw.core.ops import _api
from fw.core.ops import _index_key as _ik
from fw.core.ops._api import public
from fw.core.ops._args import as_int, as_ints
from fw.core.ops._indexing_np import _getitem_ref, _ndarray
from fw.core.ops._infer import norm_axis
from fw.core.ops.creation import as_shape, full_op
from fw.core.ops.indexing import (
    _value_for,
    gather_op,
    getitem,
    getitem_op,
    index_add_op,
    index_fill_op,
    index_put_op,
    masked_fill_op,
    put_along_op,
    scatter_nd_add_op,
    setitem,
    slice_scatter_op,
    strided_slice_op,
)
from fw.core.tensor import Tensor, _new, bump_version, wrap

_INT_MAX = 2**63 - 1


_generic = np.generic


_FAST = _ik.BASIC_TYPES | {np.int64, np.int32, np.intp}


_gs = grad_state


_bs = _build


def _fast_key(key):
    tk = type(key)
    if tk is int or tk is slice:
        return True
    if tk is tuple:
        for k in key:
            if type(k) not in _FAST:
                return False
        return True
    return tk in _FAST


def _getitem_dunder(x, key):
    # eager basic indexing: NumPy on the array, a view, no dispatcher
    tx = type(x)
    if (tx is Tensor or tx is not Value and isinstance(x, Tensor)) and _bs.builder is None \
            and _fast_key(key):
        a = x._data
        try:
            r = a[key]
            if type(r) is not _ndarray and isinstance(r, _generic):  # a 0-D view instead
                r = a[key + (Ellipsis,)] if type(key) is tuple else a[key, ...]
        except Exception:
            return getitem(x, key)  # the general path explains the error
        # wrap(r) inlined: the call costs ~20 ns of ~300 on this path (measured best-of-15)
        t = _new(Tensor)
        t._data = r
        t._sg = True
        t._node = None
        if not x._sg and _gs.enabled:
            _gs.record(getitem_op, [x, []], {"index": _ik.encode_basic(key)}, (t,))
        return t
    if isinstance(x, Tensor) and _bs.builder is None and type(x._data) is _ndarray:
        # advanced indexing on cpu: the kernel straight away (no promotion or casts to do)
        enc, tensors = _ik.encode(key)
        arrays = [t._data if type(t) is Tensor else t for t in tensors]
        if all(type(a) is _ndarray for a in arrays):
            t = wrap(_getitem_ref(x._data, arrays, enc))
            if not x._sg and _gs.enabled:
                _gs.record(getitem_op, [x, tensors], {"index": enc}, (t,))
            return t
        return invoke(getitem_op, [x, tensors], {"index": enc})
    return getitem(x, key)


_api.DUNDERS["__getitem__"] = _getitem_dunder


def _setitem_dunder(x, key, value):
    if type(x) is Value or _bs.builder is not None:
        raise UnsupportedError(
            "x[index] = value on a symbolic tensor (while a program is being built) cannot "
            "change the caller's variable; write `x = fw.core.ops.indexing.setitem(x, index, "
            "value)` instead, or decorate the function with fw.jit.to_static, which converts "
            "the assignment")
    v_grad = isinstance(value, Tensor) and not value._sg
    if not (_gs.enabled and (not x._sg or v_grad)):
        _write_through(x, key, value)
        return
    assign_inplace("__setitem__", x, setitem(x, key, value))


def _write_through(x, key, value):
    """``x[key] = value`` straight into x's array (no gradient involved)."""
    a = x._data
    if not a.flags.writeable:
        raise InvalidArgumentError("__setitem__: x's memory is read-only (it may come from "
                                   "np.broadcast_to or a read-only buffer); clone it first")
    if _fast_key(key):
        nk = key
        enc = tensors = None
    else:
        enc, tensors = _ik.encode(key, "__setitem__")
        nk = _ik.numpy_key(enc, [t._data if isinstance(t, Tensor) else t for t in tensors])
    if isinstance(value, Tensor):
        v = value._data
    elif isinstance(value, (bool, int, float)):
        v = value
    else:
        v = _value_for(x, value, "__setitem__")
    if getattr(v, "dtype", None) is not None and v.dtype.kind == "c" and a.dtype.kind != "c" \
            or isinstance(v, complex) and a.dtype.kind != "c":
        raise InvalidTypeError(f"__setitem__: the value is complex but x is "
                               f"{x.dtype.name}; take .real or .imag explicitly")
    try:
        a[nk] = v
    except IndexError as e:
        if enc is None:
            enc, tensors = _ik.encode(key, "__setitem__")
        arrays = [t._data if isinstance(t, Tensor) else t for t in tensors]
        raise _ik.describe_range_error("__setitem__", a.shape, enc, arrays, e) from None
    except (ValueError, TypeError, OverflowError) as e:
        vshape = list(np.shape(v))
        raise InvalidArgumentError(f"__setitem__: cannot assign a value of shape {vshape} to "
                                   f"x{_ik._show(_ik.encode(key)[0])} (x has shape "
                                   f"{list(a.shape)}, {x.dtype.name}): {e}") from None
    bump_version(x)


_api.DUNDERS["__setitem__"] = _setitem_dunder


@public(method=True)
def index_select(x, index, axis=0, name=None):
    """Select the slices of x at the given indices along an axis.

    Args:
        x (Tensor): The input tensor.
        index (Tensor): A 1-D integer tensor of positions along axis (repeats allowed).
        axis (int, optional): The axis to select along. Default: 0.
        name (str, optional): Paddle's op name; unused in eager mode. Default: None.

    Returns:
        Tensor: x's shape with len(index) along axis.

    Examples:
        >>> import fw
        >>> x = fw.arange(6).reshape([3, 2])
        >>> fw.index_select(x, fw.to_tensor([2, 0])).tolist()
        [[4, 5], [0, 1]]
        >>> x.index_select(fw.to_tensor([1, 1]), axis=1).tolist()
        [[1, 1], [3, 3], [5, 5]]
    """
    return invoke(gather_op, [x, index], {"axis": axis})


@public()
def scatter_nd(index, updates, shape, name=None):
    """A zero tensor of `shape` (updates' dtype) with `updates` added at the indices
    in the last axis of `index` (duplicates accumulate).

    >>> import fw
    >>> fw.scatter_nd(fw.to_tensor([[1], [1]]), fw.to_tensor([1.0, 2.0]), [3]).tolist()
    [0.0, 3.0, 0.0]
    """
    zeros = invoke(full_op, [], {"shape": as_shape(shape, "scatter_nd"), "fill_value": 0,
                                 "dtype": updates.dtype})
    return invoke(scatter_nd_add_op, [zeros, index, updates], {})


@public(method=True)
def put_along_axis(arr, indices, values, axis, reduce="assign", include_self=True,
                   broadcast=True, name=None):
    """arr with `values` written at `indices` along `axis`.

    Args:
        arr (Tensor): The destination tensor.
        indices (Tensor): Integer indices along axis, with arr's number of dimensions (broadcast
            against arr unless broadcast=False).
        values (float|Tensor): The values, broadcast to the indices' shape.
        axis (int): The axis the indices run along.
        reduce (str, optional): "assign", or how values landing on one element combine with it:
            "add", "mul"/"multiply", "mean", "amin", "amax". Default: 'assign'.
        include_self (bool, optional): Whether arr's own value takes part in the reduction.
            Default: True.
        broadcast (bool, optional): Whether indices broadcast against arr. Default: True.
        name (str, optional): Paddle's op name; unused in eager mode. Default: None.

    Returns:
        Tensor: a new tensor like arr.

    Examples:
        >>> import fw
        >>> x = fw.zeros([2, 3])
        >>> fw.put_along_axis(x, fw.to_tensor([[1], [2]]), 5.0, 1).tolist()
        [[0.0, 5.0, 0.0], [0.0, 0.0, 5.0]]
        >>> idx = fw.to_tensor([[0, 0], [1, 1]])
        >>> vals = fw.to_tensor([[1.0, 2.0], [3.0, 4.0]])
        >>> fw.ones([2, 3]).put_along_axis(idx, vals, 1, reduce="add").tolist()
        [[4.0, 1.0, 1.0], [1.0, 8.0, 1.0]]
    """
    values = _value_for(arr, values, "put_along_axis", "values")
    return invoke(put_along_op, [arr, indices, values],
                  {"axis": axis, "reduce": reduce, "include_self": include_self,
                   "broadcast": broadcast})


@public(method=True)
def put_along_axis_(arr, indices, values, axis, reduce="assign", include_self=True,
                    broadcast=True, name=None):
    """In-place version of ``fw.put_along_axis``: the result is written into arr, which is returned.

    Args:
        arr (Tensor): The destination tensor.
        indices (Tensor): Integer indices along axis, with arr's number of dimensions.
        values (float|Tensor): The values, broadcast to the indices' shape.
        axis (int): The axis the indices run along.
        reduce (str, optional): "assign", "add", "mul"/"multiply", "mean", "amin" or "amax".
            Default: "assign".
        include_self (bool, optional): Whether arr's own value takes part in the reduction.
            Default: True.
        broadcast (bool, optional): Whether indices broadcast against arr. Default: True.
        name (str, optional): Paddle's op name; unused in eager mode. Default: None.

    Returns:
        Tensor: arr, updated in place.

    Examples:
        >>> import fw
        >>> x = fw.zeros([2, 3])
        >>> _ = x.put_along_axis_(fw.to_tensor([[1], [2]]), 1.0, 1)
        >>> x.tolist()
        [[0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]
    """
    return assign_inplace("put_along_axis_", arr, put_along_axis(
        arr, indices, values, axis, reduce, include_self, broadcast))


@public(method=True)
def scatter_reduce(input, dim, index, src, reduce, include_self=True, name=None):
    """Reduce the values of src into input at index along a dimension (PyTorch's scatter_reduce).

    ``out[index[i][j]][j] = reduce(input[index[i][j]][j], src[i][j])`` for dim 0 (and likewise
    for other dims); index and src have input's number of dimensions and do not broadcast.

    Args:
        input (Tensor): The destination tensor.
        dim (int): The axis index runs along.
        index (Tensor): Integer indices, shaped like src.
        src (Tensor): The values to reduce in.
        reduce (str): "sum", "prod", "mean", "amin" or "amax".
        include_self (bool, optional): Whether input's own values take part. Default: True.
        name (str, optional): Paddle's op name; unused in eager mode. Default: None.

    Returns:
        Tensor: a new tensor like input.

    Examples:
        >>> import fw
        >>> x = fw.to_tensor([[10, 20, 30], [40, 50, 60]])
        >>> i = fw.zeros([2, 3], "int64")
        >>> fw.scatter_reduce(x, 0, i, fw.to_tensor([[1, 2, 3], [4, 5, 6]]), "sum").tolist()
        [[15, 27, 39], [40, 50, 60]]
    """
    if reduce not in ("sum", "prod", "mean", "amin", "amax"):
        raise InvalidArgumentError(f"scatter_reduce: 'reduce' must be 'sum', 'prod', 'mean', "
                                   f"'amin' or 'amax', got {reduce!r}")
    return put_along_axis(input, index, src, dim, reduce, include_self, broadcast=False)


@public(method=True)
def index_add(x, index, axis, value, name=None):
    """Add the slices of value to x at the given indices along an axis.

    Repeated indices accumulate.

    Args:
        x (Tensor): The tensor to add into.
        index (Tensor): A 1-D integer tensor of positions along axis.
        axis (int): The axis index runs along.
        value (Tensor): The slices to add: x's shape with len(index) along axis.
        name (str, optional): Paddle's op name; unused in eager mode. Default: None.

    Returns:
        Tensor: a new tensor like x.

    Examples:
        >>> import fw
        >>> fw.index_add(fw.zeros([3]), fw.to_tensor([0, 0]), 0, fw.ones([2])).tolist()
        [2.0, 0.0, 0.0]
        >>> x = fw.zeros([2, 3])
        >>> fw.index_add(x, fw.to_tensor([2]), 1, fw.ones([2, 1])).tolist()
        [[0.0, 0.0, 1.0], [0.0, 0.0, 1.0]]
    """
    return invoke(index_add_op, [x, index, value], {"axis": axis})


@public(method=True)
def index_add_(x, index, axis, value, name=None):
    """In-place version of ``fw.index_add``: the result is written into x, which is returned.

    Args:
        x (Tensor): The tensor to add into.
        index (Tensor): A 1-D integer tensor of positions along axis.
        axis (int): The axis index runs along.
        value (Tensor): The slices to add: x's shape with len(index) along axis.
        name (str, optional): Paddle's op name; unused in eager mode. Default: None.

    Returns:
        Tensor: x, updated in place.

    Examples:
        >>> import fw
        >>> x = fw.zeros([3])
        >>> _ = x.index_add_(fw.to_tensor([1]), 0, fw.to_tensor([5.0]))
        >>> x.tolist()
        [0.0, 5.0, 0.0]
    """
    return assign_inplace("index_add_", x, index_add(x, index, axis, value))


@public(method=True)
def index_fill(x, index, axis, value, name=None):
    """Fill the slices of x at the given indices along an axis with a value.

    Args:
        x (Tensor): The tensor to fill.
        index (Tensor): A 1-D integer tensor of positions along axis.
        axis (int): The axis index runs along.
        value (float|Tensor): The fill value (a number or a 0-D tensor).
        name (str, optional): Paddle's op name; unused in eager mode. Default: None.

    Returns:
        Tensor: a new tensor like x.

    Examples:
        >>> import fw
        >>> fw.index_fill(fw.zeros([2, 2]), fw.to_tensor([1]), 0, 7.0).tolist()
        [[0.0, 0.0], [7.0, 7.0]]
    """
    return invoke(index_fill_op, [x, index, _value_for(x, value, "index_fill")], {"axis": axis})


@public(method=True)
def index_fill_(x, index, axis, value, name=None):
    """In-place version of ``fw.index_fill``: the result is written into x, which is returned.

    Args:
        x (Tensor): The tensor to fill.
        index (Tensor): A 1-D integer tensor of positions along axis.
        axis (int): The axis index runs along.
        value (float|Tensor): The fill value (a number or a 0-D tensor).
        name (str, optional): Paddle's op name; unused in eager mode. Default: None.

    Returns:
        Tensor: x, updated in place.

    Examples:
        >>> import fw
        >>> x = fw.zeros([2, 2])
        >>> _ = x.index_fill_(fw.to_tensor([0]), 1, -1.0)
        >>> x.tolist()
        [[-1.0, 0.0], [-1.0, 0.0]]
    """
    return assign_inplace("index_fill_", x, index_fill(x, index, axis, value))


@public(method=True)
def index_put(x, indices, value, accumulate=False, name=None):
    """Write value into x at advanced indices: ``x[indices] = value`` (or ``+=`` with accumulate).

    Args:
        x (Tensor): The tensor to write into.
        indices (tuple[Tensor]): One integer (or bool) index tensor per leading dimension of x,
            broadcast together, as in ``x[indices]``.
        value (Tensor|number): The values, broadcast to the indexed shape.
        accumulate (bool, optional): Add value to x[indices] (repeated indices accumulate)
            instead of assigning. Default: False.
        name (str, optional): Paddle's op name; unused in eager mode. Default: None.

    Returns:
        Tensor: a new tensor like x.

    Examples:
        >>> import fw
        >>> x = fw.zeros([3, 3])
        >>> i = (fw.to_tensor([0, 1, 2]), fw.to_tensor([1, 2, 1]))
        >>> fw.index_put(x, i, fw.ones([3])).tolist()
        [[0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [0.0, 1.0, 0.0]]
        >>> fw.index_put(fw.zeros([3]), (fw.to_tensor([0, 0]),), fw.to_tensor([1.0, 2.0]),
        ...              accumulate=True).tolist()
        [3.0, 0.0, 0.0]
    """
    if isinstance(indices, (Tensor, Value)):
        indices = (indices,)
    return invoke(index_put_op, [x, list(indices), _value_for(x, value, "index_put")],
                  {"accumulate": accumulate})


@public(method=True)
def index_put_(x, indices, value, accumulate=False, name=None):
    """In-place version of ``fw.index_put``: the result is written into x, which is returned.

    Args:
        x (Tensor): The tensor to write into.
        indices (tuple[Tensor]): One integer (or bool) index tensor per leading dimension of x,
            broadcast together, as in ``x[indices]``.
        value (Tensor|number): The values, broadcast to the indexed shape.
        accumulate (bool, optional): Add value to x[indices] (repeated indices accumulate)
            instead of assigning. Default: False.
        name (str, optional): Paddle's op name; unused in eager mode. Default: None.

    Returns:
        Tensor: x, updated in place.

    Examples:
        >>> import fw
        >>> x = fw.zeros([3])
        >>> _ = x.index_put_((fw.to_tensor([2]),), fw.to_tensor([4.0]))
        >>> x.tolist()
        [0.0, 0.0, 4.0]
    """
    return assign_inplace("index_put_", x, index_put(x, indices, value, accumulate))


@public(method=True)
def masked_fill(x, mask, value, name=None):
    """Fill x with a value where mask is True.

    x, mask and a tensor value broadcast together; the result has x's dtype.

    Args:
        x (Tensor): The input tensor.
        mask (Tensor): A bool tensor broadcast against x.
        value (float|Tensor): The value written where mask is True (a number or a 0-D
            tensor).
        name (str, optional): Paddle's op name; unused in eager mode. Default: None.

    Returns:
        Tensor: a new tensor with the broadcast shape.

    Examples:
        >>> import fw
        >>> fw.masked_fill(fw.zeros([3]), fw.to_tensor([True, False, True]), 2.0).tolist()
        [2.0, 0.0, 2.0]
        >>> x = fw.to_tensor([[1.0, -1.0], [-2.0, 3.0]])
        >>> x.masked_fill(x < 0, 0.0).tolist()
        [[1.0, 0.0], [0.0, 3.0]]
    """
    return invoke(masked_fill_op, [x, mask, _value_for(x, value, "masked_fill")], {})


@public(method=True)
def masked_fill_(x, mask, value, name=None):
    """In-place version of ``fw.masked_fill``: the result is written into x, which is returned.

    Args:
        x (Tensor): The input tensor.
        mask (Tensor): A bool tensor broadcast against x.
        value (float|Tensor): The value written where mask is True (a number or a 0-D
            tensor).
        name (str, optional): Paddle's op name; unused in eager mode. Default: None.

    Returns:
        Tensor: x, updated in place.

    Examples:
        >>> import fw
        >>> x = fw.to_tensor([1.0, -1.0])
        >>> _ = x.masked_fill_(x < 0, 0.0)
        >>> x.tolist()
        [1.0, 0.0]
    """
    return assign_inplace("masked_fill_", x, masked_fill(x, mask, value))


@public("slice")
def slice_(input, axes, starts, ends, name=None):
    """Slice input along several axes: ``input[starts[i]:ends[i]]`` on each of axes.

    Bounds may be ints or 0-D tensors; they are clamped to the valid range as in Paddle, and
    negative bounds count from the end.

    Args:
        input (Tensor): The input tensor.
        axes (list|tuple): The axes to slice.
        starts (list|tuple|Tensor): The start index per axis.
        ends (list|tuple|Tensor): The end index (excluded) per axis.
        name (str, optional): Paddle's op name; unused in eager mode. Default: None.

    Returns:
        Tensor: the slice.

    Examples:
        >>> import fw
        >>> fw.slice(fw.zeros([4, 5, 6]), [0, 1, 2], [-3, 0, 2], [3, 2, 4]).shape
        [2, 2, 2]
        >>> fw.slice(fw.arange(10), [0], [2], [5]).tolist()
        [2, 3, 4]
    """
    axes = as_ints(axes, "slice", "axes")
    return invoke(strided_slice_op, [input], {"axes": axes, "starts": starts, "ends": ends,
                                              "strides": (1,) * len(axes)})


@public(method=True)
def slice_scatter(x, value, axes, starts, ends, strides, name=None):
    """Replace a strided slice of x with value: ``x[starts:ends:strides] = value`` along axes.

    Args:
        x (Tensor): The input tensor.
        value (Tensor): The new values, broadcast to the slice's shape.
        axes (list|tuple): The axes to slice.
        starts (list|tuple): The start index per axis.
        ends (list|tuple): The end index (excluded) per axis.
        strides (list|tuple): The step per axis.
        name (str, optional): Paddle's op name; unused in eager mode. Default: None.

    Returns:
        Tensor: a new tensor like x.

    Examples:
        >>> import fw
        >>> out = fw.slice_scatter(fw.zeros([2, 6]), fw.ones([2, 2]), [1], [2], [6], [2])
        >>> out.tolist()
        [[0.0, 0.0, 1.0, 0.0, 1.0, 0.0], [0.0, 0.0, 1.0, 0.0, 1.0, 0.0]]
    """
    return invoke(slice_scatter_op, [x, value], {"axes": axes, "starts": starts, "ends": ends,
                                                 "strides": strides})


@public(method=True)
def select_scatter(x, values, axis, index, name=None):
    """Replace the slice of x at one index along an axis with values.

    Args:
        x (Tensor): The input tensor.
        values (Tensor): The new slice: x's shape without axis.
        axis (int): The axis to index.
        index (int): The position along axis.
        name (str, optional): Paddle's op name; unused in eager mode. Default: None.

    Returns:
        Tensor: a new tensor like x.

    Examples:
        >>> import fw
        >>> fw.select_scatter(fw.zeros([2, 3]), fw.ones([3]), 0, 1).tolist()
        [[0.0, 0.0, 0.0], [1.0, 1.0, 1.0]]
    """
    nd = len(x.shape)
    a = norm_axis(as_int(axis, "select_scatter", "axis"), nd)
    i = as_int(index, "select_scatter", "index")
    d = x.shape[a]
    if d != DYN and not -d <= i < d:
        raise InvalidArgumentError(f"select_scatter: index {i} is out of range for axis {a} of "
                                   f"size {d} (valid range [{-d}, {d - 1}])")
    end = _INT_MAX if i == -1 else i + 1
    return slice_scatter(x, unsqueeze(values, a), [a], [i], [end], [1])
