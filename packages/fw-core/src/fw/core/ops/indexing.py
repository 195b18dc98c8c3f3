"""Indexing ops: ``x[key]``, ``x[key] = v``, gather/scatter, slices, masks, diagonals.

``Tensor.__getitem__``/``__setitem__`` (and the IR `Value`'s) are built on two
ops whose ``index`` attribute encodes the key (see `_index_key`): ``getitem``
and the functional ``setitem`` (returns the updated tensor). Eager basic
indexing (ints, slices, None, ...) skips the dispatcher: NumPy indexes the
array directly and the result is a view, as in NumPy and PyTorch.

``x[key] = v`` on a Tensor writes in place: straight into the array when no
gradient is involved, else through ``setitem`` and `dispatch.assign_inplace`
so autograd sees it. On an IR Value it raises (a Python statement cannot rebind
the caller's variable): write ``x = setitem(x, key, v)`` or use
``fw.jit.to_static``, which rewrites the assignment that way.

Index arguments are never differentiable; out-of-range indices raise
`InvalidArgumentError` naming the op, the index argument and the valid range.
"""

from __future__ import annotations

import numpy as np

from fw.core import dtypes as _dt
from fw.core.dispatch import invoke
from fw.core.errors import InvalidArgumentError, InvalidTypeError
from fw.core.ir.core import Value
from fw.core.ir.core import _state as _build
from fw.core.ir.types import DYN, TensorType
from fw.core.ops import _index_key as _ik
from fw.core.ops._args import as_int, as_ints
from fw.core.ops._indexing_np import (
    _T,
    _along_shapes,
    _as_dtype,
    _axis,
    _check_range,
    _diag_shape,
    _diagonal_ref,
    _gather_ref,
    _getitem_ref,
    _int_input,
    _masked_fill_ref,
    _masked_select_ref,
    _nd_key,
    _put_along_ref,
    _runtime_slices,
    _same_shape,
    _setitem_ref,
    _shard_ref,
    _slices,
    _strided_slice_ref,
    _take_along_ref,
    _take_ref,
)
from fw.core.ops._infer import broadcast_shapes, shp
from fw.core.ops._infer import numel as _mul
from fw.core.ops._registry import OPS, defop
from fw.core.ops._xp import ufunc_at, xp_of
from fw.core.ops.creation import full_op
from fw.core.tensor import Tensor

__all__ = ["getitem", "setitem", "one_hot"]


# ---------------------------------------------------------------- helpers
def _value_for(x, v, op, arg="value"):
    """`v` (a number, list, array or tensor) as an operand with x's dtype where it is
    not a tensor: Python numbers are converted exactly (no float32 detour)."""
    if isinstance(v, (Tensor, Value)):
        return v
    dt = x.dtype
    if _build.builder is not None and isinstance(v, (bool, int, float, complex, np.generic)):
        if isinstance(v, (complex, np.complexfloating)) and dt.kind != _dt._COMPLEX:
            raise InvalidTypeError(f"{op}: '{arg}' {v!r} is complex but x is {dt.name}")
        return invoke(full_op, [], {"shape": (), "fill_value": v.item() if isinstance(
            v, np.generic) else v, "dtype": dt})
    try:
        a = np.asarray(v)
    except ValueError as e:
        raise InvalidArgumentError(f"{op}: '{arg}' {v!r} is not a valid array: {e}") from None
    if a.dtype == object or a.dtype.kind in "USV":
        raise InvalidTypeError(f"{op}: '{arg}' must be numeric, got {type(v).__name__}")
    try:
        return _as_dtype(a, dt.np, op, arg)
    except OverflowError as e:
        raise InvalidArgumentError(f"{op}: '{arg}' {v!r} does not fit x's dtype {dt.name}: "
                                   f"{e}") from None


def _axis_canon(op, *names, none_ok=()):
    def canon(attrs):
        a = dict(attrs)
        for n in names:
            if a[n] is None and n in none_ok:
                continue
            a[n] = as_int(a[n], op, n)
        return a

    return canon


# ---------------------------------------------------------------- getitem
def _getitem_infer(x, indices, index=()):
    return TensorType(_ik.result_shape(x.shape, index, indices), x.dtype)


getitem_op = defop("getitem", ("x", "indices*"), {"index": ()}, infer=_getitem_infer,
                   reference=_getitem_ref, promote=None, family="indexing", api=False,
                   method=False,
                   doc="x[key] with NumPy semantics; `index` encodes the key, tensor entries "
                       "come from `indices` (see fw.core.ops._index_key).")


_NONE = _ik.NONE_TYPE
_ELL = _ik.ELLIPSIS_TYPE


def getitem(x, index):
    """``x[index]`` as a function: NumPy indexing semantics (ints, slices with any
    step, None, ..., boolean masks, integer tensors/arrays/lists as advanced indices).

    >>> import fw
    >>> x = fw.arange(12).reshape([3, 4])
    >>> getitem(x, (slice(None), [0, 2])).shape
    [3, 2]
    """
    enc, tensors = _ik.encode(index)
    return invoke(getitem_op, [x, tensors], {"index": enc})


# ---------------------------------------------------------------- setitem
def _setitem_infer(x, value, indices, index=()):
    region = _ik.result_shape(x.shape, index, indices)
    _ik.check_value_shape(region, value.shape)
    return x


setitem_op = defop("setitem", ("x", "value", "indices*"), {"index": ()}, infer=_setitem_infer,
                   reference=_setitem_ref, promote=None, family="indexing", api=False,
                   method=False,
                   doc="x with x[key] replaced by value (broadcast, cast to x's dtype); the "
                       "functional form of ``x[key] = value``.")


def setitem(x, index, value):
    """x with ``x[index] = value`` applied, as a new tensor (x is not modified).

    This is what ``x[index] = value`` means on a symbolic tensor: inside a program
    write ``x = setitem(x, index, value)`` (fw.jit.to_static does it for you).
    `value` is a number, list, array or tensor broadcast to the indexed region
    and cast to x's dtype.

    >>> import fw
    >>> setitem(fw.zeros([3]), 1, 5.0).tolist()
    [0.0, 5.0, 0.0]
    """
    enc, tensors = _ik.encode(index, "setitem")
    value = _value_for(x, value, "setitem")
    if isinstance(value, (Tensor, Value)) and value.dtype is not x.dtype:
        value = invoke(OPS["cast"], [value], {"dtype": x.dtype})
    return invoke(setitem_op, [x, value, tensors], {"index": enc})


# ---------------------------------------------------------------- gather family
def _gather_canon(attrs):
    ax = attrs["axis"]
    return {"axis": 0 if ax is None else as_int(ax, "gather", "axis")}


def _gather_infer(x, index, axis=0):
    _int_input(index, "index")
    a = _axis(axis, len(x.shape))
    return TensorType(x.shape[:a] + tuple(index.shape) + x.shape[a + 1:], x.dtype)


gather_op = defop("gather", ("x", "index"), {"axis": None}, infer=_gather_infer,
                  reference=_gather_ref, canon=_gather_canon, promote=None, family="indexing",
                  doc="The slices of x at `index` along `axis` (0 when None).")


def _gather_nd_infer(x, index):
    _int_input(index, "index")
    if not index.shape:
        raise InvalidArgumentError("'index' must have at least one dimension")
    k = index.shape[-1]
    if k == DYN:
        raise InvalidArgumentError("the last dimension of 'index' must be static")
    if k > len(x.shape):
        raise InvalidArgumentError(f"'index' of shape {shp(index.shape)} indexes {k} "
                                   f"dimensions but x has shape {shp(x.shape)}")
    return TensorType(index.shape[:-1] + x.shape[k:], x.dtype)


def _gather_nd_ref(x, index):
    _gather_nd_infer(_T(x), _T(index))
    if index.shape[-1] == 0:
        return np.broadcast_to(x, index.shape[:-1] + x.shape).copy()
    return x[_nd_key(x, index, "gather_nd")]


defop("gather_nd", ("x", "index"), infer=_gather_nd_infer, reference=_gather_nd_ref,
      promote=None, family="indexing",
      doc="x at the multi-dimensional indices in the last axis of `index`.")


def _take_along_canon(attrs):
    a = dict(attrs)
    a["axis"] = as_int(a["axis"], "take_along_axis", "axis")
    a["broadcast"] = bool(a["broadcast"])
    return a


def _take_along_infer(arr, indices, axis=0, broadcast=True):
    _int_input(indices, "indices")
    _, out = _along_shapes(arr.shape, indices.shape, axis, broadcast)
    return TensorType(out, arr.dtype)


defop("take_along_axis", ("arr", "indices"), {"axis": 0, "broadcast": True},
      infer=_take_along_infer, reference=_take_along_ref, canon=_take_along_canon, promote=None,
      family="indexing", aliases=("take_along_dim",),
      doc="arr at `indices` along `axis` (indices broadcast against arr unless "
          "broadcast=False).")


def _take_canon(attrs):
    if attrs["mode"] not in ("raise", "wrap", "clip"):
        raise InvalidArgumentError(f"take: 'mode' must be 'raise', 'wrap' or 'clip', got "
                                   f"{attrs['mode']!r}")
    return dict(attrs)


def _take_infer(x, index, mode="raise"):
    _int_input(index, "index")
    return TensorType(index.shape, x.dtype)


defop("take", ("x", "index"), {"mode": "raise"}, infer=_take_infer, reference=_take_ref,
      canon=_take_canon, promote=None, family="indexing",
      doc="Elements of the flattened x at `index`; mode 'raise' (negative indices count "
          "from the end), 'wrap' or 'clip' for out-of-range indices.")


def _multiplex_infer(inputs, index):
    _int_input(index, "index")
    if not inputs:
        raise InvalidArgumentError("'inputs' must be a non-empty list of tensors")
    s = inputs[0].shape
    for i, t in enumerate(inputs[1:], 1):
        if len(t.shape) != len(s) or any(a != b and DYN not in (a, b)
                                         for a, b in zip(s, t.shape)):
            raise InvalidArgumentError(f"inputs[{i}] has shape {shp(t.shape)} but inputs[0] has "
                                       f"{shp(s)}")
    if not s:
        raise InvalidArgumentError("the inputs must have at least one dimension")
    if len(index.shape) != 2 or index.shape[1] not in (1, DYN) or \
            DYN not in (index.shape[0], s[0]) and index.shape[0] != s[0]:
        raise InvalidArgumentError(f"'index' must have shape [{s[0]}, 1], got "
                                   f"{shp(index.shape)}")
    return TensorType(s, _dt.result_type(*[t.dtype for t in inputs]))


def _multiplex_ref(inputs, index):
    _multiplex_infer([_T(a) for a in inputs], _T(index))
    idx = index.reshape(-1)
    _check_range(idx, len(inputs), "multiplex", "index", "the list of inputs")
    idx = np.where(idx < 0, idx + len(inputs), idx)
    return np.stack(inputs)[idx, np.arange(idx.size)]


defop("multiplex", ("inputs*", "index"), infer=_multiplex_infer, reference=_multiplex_ref,
      promote=(0,), family="indexing", method=False,
      doc="Row i of the result is row i of inputs[index[i]].")


# ---------------------------------------------------------------- scatter family
def _scatter_infer(x, index, updates, overwrite=True):
    _int_input(index, "index")
    if len(index.shape) > 1:
        raise InvalidArgumentError(f"'index' must be 0-D or 1-D, got shape {shp(index.shape)}")
    if not x.shape:
        raise InvalidArgumentError("x must have at least one dimension")
    want = tuple(index.shape) + tuple(x.shape[1:])
    _same_shape(updates.shape, want, "updates")
    return x


def _scatter_ref(x, index, updates, overwrite=True):
    _scatter_infer(_T(x), _T(index), _T(updates))
    n = x.shape[0]
    idx = index.reshape(-1)
    _check_range(idx, n, "scatter", "index", "axis 0 of x")
    idx = np.where(idx < 0, idx + n, idx)
    upd = _as_dtype(updates, x.dtype, "scatter", "updates").reshape((idx.size,) + x.shape[1:])
    out = x.copy()
    if overwrite:
        # duplicates: the last update wins (deterministic, unlike a raw fancy assignment)
        rev = idx[::-1]
        _, first = np.unique(rev, return_index=True)
        keep = idx.size - 1 - first
        out[idx[keep]] = upd[keep]
    else:
        out[idx] = 0
        ufunc_at(np.add, out, idx, upd)
    return out


defop("scatter", ("x", "index", "updates"), {"overwrite": True}, infer=_scatter_infer,
      reference=_scatter_ref, promote=None, family="indexing", inplace=True,
      doc="x with rows `index` replaced by `updates` (overwrite) or by the sum of the "
          "updates aimed at them (overwrite=False).")


def _scatter_nd_add_infer(x, index, updates):
    _int_input(index, "index")
    g = _gather_nd_infer(x, index)
    _same_shape(updates.shape, g.shape, "updates")
    return x


def _scatter_nd_add_ref(x, index, updates):
    _scatter_nd_add_infer(_T(x), _T(index), _T(updates))
    out = x.copy()
    upd = _as_dtype(updates, x.dtype, "scatter_nd_add", "updates")
    if index.shape[-1] == 0:
        out += upd.sum(axis=tuple(range(index.ndim - 1)), dtype=x.dtype) if index.ndim > 1 \
            else upd
        return out
    ufunc_at(np.add, out, _nd_key(x, index, "scatter_nd_add"), upd)
    return out


scatter_nd_add_op = defop("scatter_nd_add", ("x", "index", "updates"),
                          infer=_scatter_nd_add_infer, reference=_scatter_nd_add_ref,
                          promote=None, family="indexing",
                          doc="x plus `updates` added at the multi-dimensional indices of "
                              "`index` (duplicates accumulate).")


_REDUCES = ("assign", "add", "mul", "mean", "amin", "amax")
_REDUCE_ALIASES = {"multiply": "mul", "sum": "add", "prod": "mul"}


def _put_along_canon(attrs):
    a = dict(attrs)
    r = _REDUCE_ALIASES.get(a["reduce"], a["reduce"])
    if r not in _REDUCES:
        raise InvalidArgumentError(f"put_along_axis: 'reduce' must be one of "
                                   f"{list(_REDUCES) + list(_REDUCE_ALIASES)}, got {a['reduce']!r}")
    a["reduce"] = r
    a["axis"] = as_int(a["axis"], "put_along_axis", "axis")
    a["include_self"] = bool(a["include_self"])
    a["broadcast"] = bool(a["broadcast"])
    return a


def _put_along_infer(arr, indices, values, axis=0, reduce="assign", include_self=True,
                     broadcast=True):
    _int_input(indices, "indices")
    _, ishape = _along_shapes(arr.shape, indices.shape, axis, broadcast)
    vs = values.shape
    if broadcast:
        _ik.check_value_shape(ishape, vs)
    elif vs and (len(vs) != len(ishape) or any(v < i for v, i in zip(vs, ishape)
                                               if DYN not in (v, i))):
        raise InvalidArgumentError(f"'values' of shape {shp(vs)} must be at least as large as "
                                   f"'indices' of shape {shp(ishape)} in every dimension")
    return arr


put_along_op = defop("put_along_axis", ("arr", "indices", "values"),
                     {"axis": 0, "reduce": "assign", "include_self": True, "broadcast": True},
                     infer=_put_along_infer, reference=_put_along_ref, canon=_put_along_canon,
                     promote=None, family="indexing", api=False, method=False,
                     doc="arr with `values` put (or reduced: add, mul, mean, amin, amax) at "
                         "`indices` along `axis`.")


def _index_axis_infer(x, index, value, axis, op, value_shape=None):
    _int_input(index, "index")
    if len(index.shape) > 1:
        raise InvalidArgumentError(f"'index' must be 1-D, got shape {shp(index.shape)}")
    nd = len(x.shape)
    if nd == 0:
        raise InvalidArgumentError("x must have at least one dimension")
    a = _axis(axis, nd)
    if value_shape == "full":
        n = index.shape[0] if index.shape else 1
        _same_shape(value.shape, x.shape[:a] + (n,) + x.shape[a + 1:], "value")
    return a


def _index_add_infer(x, index, value, axis=0):
    _index_axis_infer(x, index, value, axis, "index_add", "full")
    return x


def _index_add_ref(x, index, value, axis=0):
    a = _axis(axis, x.ndim)
    _index_add_infer(_T(x), _T(index), _T(value), axis)
    idx = index.reshape(-1)
    _check_range(idx, x.shape[a], "index_add", "index", f"axis {a} of x")
    out = x.copy()
    ufunc_at(np.add, out, (slice(None),) * a + (idx,),
             _as_dtype(value, x.dtype, "index_add", "value"))
    return out


index_add_op = defop("index_add", ("x", "index", "value"), {"axis": 0}, infer=_index_add_infer,
                     reference=_index_add_ref, canon=_axis_canon("index_add", "axis"),
                     promote=None, family="indexing", api=False, method=False,
                     doc="x with the slices of `value` added at `index` along `axis`.")


def _index_fill_infer(x, index, value, axis=0):
    _index_axis_infer(x, index, value, axis, "index_fill")
    if value.shape and _mul(value.shape) not in (1, DYN):
        raise InvalidArgumentError(f"'value' must be a number or hold one element, got shape "
                                   f"{shp(value.shape)}")
    return x


def _index_fill_ref(x, index, value, axis=0):
    a = _axis(axis, x.ndim)
    _index_fill_infer(_T(x), _T(index), _T(value), axis)
    idx = index.reshape(-1)
    _check_range(idx, x.shape[a], "index_fill", "index", f"axis {a} of x")
    out = x.copy()
    out[(slice(None),) * a + (idx,)] = _as_dtype(value, x.dtype, "index_fill",
                                                 "value").reshape(())
    return out


index_fill_op = defop("index_fill", ("x", "index", "value"), {"axis": 0},
                      infer=_index_fill_infer, reference=_index_fill_ref,
                      canon=_axis_canon("index_fill", "axis"), promote=None, family="indexing",
                      api=False, method=False,
                      doc="x with the slices `index` along `axis` set to `value`.")


def _index_put_canon(attrs):
    return {"accumulate": bool(attrs["accumulate"])}


def _index_put_infer(x, indices, value, accumulate=False):
    if not indices:
        raise InvalidArgumentError("'indices' must be a non-empty tuple of tensors")
    region = _ik.result_shape(x.shape, ("t",) * len(indices), indices)
    _ik.check_value_shape(region, value.shape)
    return x


def _index_put_ref(x, indices, value, accumulate=False):
    enc = ("t",) * len(indices)
    _index_put_infer(_T(x), [_T(i) for i in indices], _T(value))
    out = x.copy()
    v = _as_dtype(value, x.dtype, "index_put", "value")
    key = tuple(indices)
    try:
        if accumulate:
            ufunc_at(np.add, out, key, np.broadcast_to(v, out[key].shape))
        else:
            out[key] = v
    except IndexError as e:
        raise _ik.describe_range_error("index_put", x.shape, enc, indices, e) from None
    return out


index_put_op = defop("index_put", ("x", "indices*", "value"), {"accumulate": False},
                     infer=_index_put_infer, reference=_index_put_ref, canon=_index_put_canon,
                     promote=None, family="indexing", api=False, method=False,
                     doc="x with x[indices] set to (or, accumulate=True, incremented by) "
                         "`value`.")


# ---------------------------------------------------------------- masks
def _mask_check(mask):
    if mask.dtype is not _dt.bool_:
        raise InvalidTypeError(f"'mask' must be a bool tensor, got {mask.dtype.name}")


def _masked_fill_infer(x, mask, value):
    _mask_check(mask)
    shape = broadcast_shapes(x.shape, mask.shape, value.shape, names=("x", "mask", "value"))
    return TensorType(shape, x.dtype)


masked_fill_op = defop("masked_fill", ("x", "mask", "value"), infer=_masked_fill_infer,
                       reference=_masked_fill_ref, promote=None, family="indexing", api=False,
                       method=False, doc="x with `value` where `mask` is True (broadcast).")


def _masked_select_infer(x, mask):
    _mask_check(mask)
    broadcast_shapes(x.shape, mask.shape, names=("x", "mask"))
    return TensorType((DYN,), x.dtype)


defop("masked_select", ("x", "mask"), infer=_masked_select_infer, reference=_masked_select_ref,
      promote=None, family="indexing",
      doc="The elements of x where `mask` is True, as a 1-D tensor (broadcast).")


def _masked_scatter_infer(x, mask, value):
    _mask_check(mask)
    if value.dtype is not x.dtype:
        raise InvalidTypeError(f"'value' ({value.dtype.name}) must have x's dtype "
                               f"({x.dtype.name})")
    shape = broadcast_shapes(x.shape, mask.shape, names=("x", "mask"))
    return TensorType(shape, x.dtype)


def _masked_scatter_ref(x, mask, value):
    _masked_scatter_infer(_T(x), _T(mask), _T(value))
    xb, mb = np.broadcast_arrays(x, mask)
    n = int(np.count_nonzero(mb))
    if value.size < n:
        raise InvalidArgumentError(f"masked_scatter: the mask selects {n} elements but 'value' "
                                   f"has only {value.size}")
    out = xb.copy()
    out[mb] = value.reshape(-1)[:n]
    return out


masked_scatter_op = defop("masked_scatter", ("x", "mask", "value"),
                          infer=_masked_scatter_infer, reference=_masked_scatter_ref,
                          promote=None, family="indexing", inplace=True,
                          doc="x with the elements where `mask` is True replaced, in order, by "
                              "the first elements of `value`.")


# ---------------------------------------------------------------- slices
def _slice_canon(attrs):
    a = {}
    for k in ("axes", "starts", "ends", "strides"):
        a[k] = as_ints(attrs[k], "strided_slice", k)
    return a


def _strided_slice_infer(x, axes=(), starts=(), ends=(), strides=()):
    out, _ = _slices(x.shape, axes, starts, ends, strides)
    return TensorType(out, x.dtype)


strided_slice_op = defop(
    "strided_slice", ("x",), {"axes": (), "starts": (), "ends": (), "strides": ()},
    infer=_strided_slice_infer, reference=_strided_slice_ref, canon=_slice_canon, promote=None,
    family="indexing",
    doc="x[starts:ends:strides] along `axes` (Paddle's clamping of out-of-range bounds; "
        "negative bounds count from the end).")


def _slice_scatter_infer(x, value, axes=(), starts=(), ends=(), strides=()):
    region, _ = _slices(x.shape, axes, starts, ends, strides)
    _ik.check_value_shape(region, value.shape)
    return x


def _slice_scatter_ref(x, value, axes=(), starts=(), ends=(), strides=()):
    _slice_scatter_infer(_T(x), _T(value), axes, starts, ends, strides)
    out = x.copy()
    out[_runtime_slices(x.shape, axes, starts, ends, strides)] = _as_dtype(
        value, x.dtype, "slice_scatter", "value")
    return out


slice_scatter_op = defop(
    "slice_scatter", ("x", "value"), {"axes": (), "starts": (), "ends": (), "strides": ()},
    infer=_slice_scatter_infer, reference=_slice_scatter_ref, canon=_slice_canon, promote=None,
    family="indexing", api=False, method=False,
    doc="x with the strided slice along `axes` replaced by `value` (broadcast).")


# ---------------------------------------------------------------- diagonals
def _diag_canon(op):
    return _axis_canon(op, "offset", "axis1", "axis2")


def _diagonal_infer(x, offset=0, axis1=0, axis2=1):
    return TensorType(_diag_shape(x.shape, offset, axis1, axis2)[2], x.dtype)


defop("diagonal", ("x",), {"offset": 0, "axis1": 0, "axis2": 1}, infer=_diagonal_infer,
      reference=_diagonal_ref, canon=_diag_canon("diagonal"), promote=None, family="indexing",
      doc="The diagonal (shifted by `offset`) of the planes spanned by axis1 and axis2, "
          "as the last axis.")


def _diagonal_scatter_infer(x, y, offset=0, axis1=0, axis2=1):
    _same_shape(y.shape, tuple(_diag_shape(x.shape, offset, axis1, axis2)[2]), "y")
    return x


def _diagonal_scatter_ref(x, y, offset=0, axis1=0, axis2=1):
    a1, a2, _ = _diag_shape(x.shape, offset, axis1, axis2)
    _diagonal_scatter_infer(_T(x), _T(y), offset, axis1, axis2)
    out = x.copy()
    v = np.moveaxis(out, (a1, a2), (-2, -1))  # a writable view of out
    n = y.shape[-1]
    i = np.arange(n)
    r, c = (i, i + offset) if offset >= 0 else (i - offset, i)
    v[..., r, c] = _as_dtype(y, x.dtype, "diagonal_scatter", "y")
    return out


defop("diagonal_scatter", ("x", "y"), {"offset": 0, "axis1": 0, "axis2": 1},
      infer=_diagonal_scatter_infer, reference=_diagonal_scatter_ref,
      canon=_diag_canon("diagonal_scatter"), promote=None, family="indexing",
      doc="x with its diagonal (as `diagonal` selects it) replaced by y.")


# ---------------------------------------------------------------- one_hot / shard_index
def _one_hot_canon(attrs):
    return {"num_classes": as_int(attrs["num_classes"], "one_hot", "num_classes")}


def _one_hot_infer(x, num_classes=1):
    _int_input(x, "x")
    if num_classes < 0:
        raise InvalidArgumentError(f"'num_classes' must not be negative, got {num_classes}")
    return TensorType(tuple(x.shape) + (num_classes,), _dt.float32)


def _one_hot_ref(x, num_classes=1):
    _one_hot_infer(_T(x), num_classes)
    if x.size and (x.min() < 0 or x.max() >= num_classes):
        raise InvalidArgumentError(f"one_hot: 'x' holds values in [{x.min()}, {x.max()}] but "
                                   f"'num_classes' is {num_classes} (valid range "
                                   f"[0, {num_classes - 1}])")
    return (x[..., None] == xp_of(x).arange(num_classes, dtype=x.dtype)).astype(np.float32)


one_hot_op = defop("one_hot", ("x",), {"num_classes": 1}, infer=_one_hot_infer,
                   reference=_one_hot_ref, canon=_one_hot_canon, promote=None,
                   differentiable=False, family="indexing", api=False, method=False,
                   doc="float32 one-hot vectors of length num_classes for the integers in x.")


def one_hot(x, num_classes, name=None):
    """float32 one-hot encoding: a new last axis of length `num_classes` holding 1.0
    at each integer of x (``fw.nn.functional.one_hot`` re-exports this). The result
    has no gradient (as in Paddle).

    Args:
        x (Tensor): int32 or int64 class indices in ``[0, num_classes)``, any shape.
        num_classes (int): The length of the one-hot vectors.
        name (str, optional): Paddle's op name; unused in eager mode. Default: None.

    Returns:
        Tensor: float32, shape ``x.shape + [num_classes]``.

    Raises:
        InvalidArgumentError: a value of x is negative or not below num_classes.

    Examples:
        >>> import fw
        >>> import fw.nn.functional as F
        >>> F.one_hot(fw.to_tensor([1, 0, 2]), num_classes=3).tolist()
        [[0.0, 1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]]
        >>> F.one_hot(fw.to_tensor([[0, 3], [2, 1]]), 4).shape
        [2, 2, 4]
        >>> try:
        ...     F.one_hot(fw.to_tensor([5]), 3)
        ... except ValueError as e:
        ...     print("num_classes" in str(e))
        True
    """
    return invoke(one_hot_op, [x], {"num_classes": num_classes})


def _shard_canon(attrs):
    a = {k: as_int(v, "shard_index", k) for k, v in attrs.items()}
    if a["index_num"] <= 0 or a["nshards"] <= 0:
        raise InvalidArgumentError("shard_index: 'index_num' and 'nshards' must be positive")
    if not 0 <= a["shard_id"] < a["nshards"]:
        raise InvalidArgumentError(f"shard_index: 'shard_id' {a['shard_id']} must be in "
                                   f"[0, {a['nshards'] - 1}]")
    return a


def _shard_infer(input, index_num=1, nshards=1, shard_id=0, ignore_value=-1):
    _int_input(input, "input")
    return input


defop("shard_index", ("input",), {"index_num": 1, "nshards": 1, "shard_id": 0,
                                  "ignore_value": -1},
      infer=_shard_infer, reference=_shard_ref, canon=_shard_canon, promote=None,
      differentiable=False, family="indexing",
      doc="Indices relative to shard `shard_id` of `nshards` equal shards of "
          "[0, index_num); indices of other shards become `ignore_value`.")

