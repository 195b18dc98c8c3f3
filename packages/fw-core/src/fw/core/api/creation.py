"""The Paddle-signature functions of the creation ops that the generated ones cannot express.

The ops themselves (declaration, infer, reference kernel) are in `fw.core.ops.creation`;
these wrappers are registered with `public` when the op table is loaded.
"""

from __future__ import annotations

import numpy as np

from fw.core import dtypes as _dt
from fw.core.errors import InvalidArgumentError, InvalidTypeError
from fw.core.ir.types import DYN, TensorType
from fw.core.ops import dynamic_shape as _dyn
from fw.core.ops._api import public
from fw.core.ops._infer import shp
from fw.core.ops._registry import OPS, defop
from fw.core.ops.creation import _check_fill, _full_dtype, full_op, number_arg
from fw.core.tensor import Tensor, to_tensor


@public()
def full(shape, fill_value, dtype=None, name=None):
    """Tensor of ``shape`` filled with ``fill_value``.

    Args:
        shape: list/tuple of ints or one-element tensors, or a 1-D integer tensor.
        fill_value: a number or a one-element tensor.
        dtype: default: bool for a bool fill, else the default float dtype.

    >>> import fw
    >>> fw.full([2], 3.0).tolist()
    [3.0, 3.0]
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
    """Tensor of ``shape`` filled with 0 (default float dtype unless ``dtype``)."""
    return full(shape, 0, dtype if dtype is not None else _dt.get_default_dtype())


@public()
def ones(shape, dtype=None, name=None):
    """Tensor of ``shape`` filled with 1 (default float dtype unless ``dtype``)."""
    return full(shape, 1, dtype if dtype is not None else _dt.get_default_dtype())


@public()
def empty(shape, dtype=None, name=None):
    """Uninitialised in Paddle; fw returns zeros (cheap, and deterministic)."""
    return zeros(shape, dtype)


# ---------------------------------------------------------------- *_like
def _full_like_canon(attrs):
    fv = number_arg(attrs["fill_value"], "fill_value")
    d = attrs["dtype"]
    return {"fill_value": fv, "dtype": None if d is None else _dt.convert_dtype(d)}


def _full_like_infer(x, fill_value=0.0, dtype=None):
    d = dtype or x.dtype
    _check_fill(fill_value, d)
    return TensorType(x.shape, d)


def _full_like_ref(x, fill_value=0.0, dtype=None):
    d = dtype.np if dtype is not None else x.dtype
    _check_fill(fill_value, _dt.from_numpy(d))
    if isinstance(x, np.generic):
        return np.full((), fill_value, dtype=d)
    return np.full_like(x, fill_value, dtype=d)


full_like_op = defop("full_like", ("x",), {"fill_value": 0.0, "dtype": None},
                     infer=_full_like_infer, reference=_full_like_ref, canon=_full_like_canon,
                     promote=None, differentiable=False, family="creation", method=False,
                     doc="A tensor shaped like x filled with `fill_value` (x's dtype unless "
                         "`dtype`).")


def _like(x, value, dtype):
    from fw.core.dispatch import invoke

    return invoke(full_like_op, [x], {"fill_value": value, "dtype": dtype})


@public()
def zeros_like(x, dtype=None, name=None):
    """Zeros with x's shape (and dtype unless ``dtype``)."""
    return _like(x, 0, dtype)


@public()
def ones_like(x, dtype=None, name=None):
    """Ones with x's shape (and dtype unless ``dtype``)."""
    return _like(x, 1, dtype)


@public()
def empty_like(x, dtype=None, name=None):
    """Uninitialised in Paddle; fw returns zeros with x's shape and dtype."""
    return _like(x, 0, dtype)


# ---------------------------------------------------------------- to_tensor spellings
@public()
def as_tensor(data, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """A new tensor from data (number, list, array or tensor — always copied).

    ``device`` is a place or a string (``"cpu"``, ``"gpu:0"``); ``requires_grad=True``
    makes the result a leaf that collects gradients (``stop_gradient=False``).

    >>> import fw
    >>> fw.as_tensor([1, 2]).dtype
    fw.int64
    """
    return to_tensor(data, dtype=dtype, place=device, stop_gradient=not requires_grad)


@public()
def tensor(data, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """``paddle.tensor``: the PyTorch-style spelling of `to_tensor` (see `as_tensor`)."""
    return to_tensor(data, dtype=dtype, place=device, stop_gradient=not requires_grad)


@public()
def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad=False):
    """The Array-API spelling of `to_tensor`; ``copy`` is accepted and ignored (a
    tensor is always copied, as in Paddle)."""
    return to_tensor(obj, dtype=dtype, place=device, stop_gradient=not requires_grad)


def _assign_ref(x):
    return x.copy()


assign_op = defop("assign", ("x",), infer=lambda x: x, reference=_assign_ref, promote=None,
                  family="creation", method="clone", aliases=(),
                  doc="A copy of `x` (``x.clone()``).")


@public()
def assign(x, output=None):
    """A copy of ``x`` (a tensor, array, list or number). With ``output``, the copy is
    written into that tensor (which takes x's shape and dtype) and returned.

    >>> import fw
    >>> fw.assign([1.0, 2.0]).tolist()
    [1.0, 2.0]
    """
    from fw.core.dispatch import invoke

    out = invoke(assign_op, [x], {})
    if output is None:
        return out
    if isinstance(output, Tensor) and isinstance(out, Tensor):
        output._replace_data(out._data)
        return output
    return out  # while building a program values are immutable: use the result


@public(method=True)
def clone(x, name=None):
    """A copy of ``x`` that stays connected to the autograd graph."""
    from fw.core.dispatch import invoke

    return invoke(assign_op, [x], {})


# ---------------------------------------------------------------- ranges
def _arange_infer(start=0, end=None, step=1, dtype=None):
    n = int(max(0, np.ceil((end - start) / step)))
    return TensorType((n,), dtype)


def _arange_ref(start=0, end=None, step=1, dtype=None):
    return np.arange(start, end, step, dtype=dtype.np)


def _arange_canon(attrs):
    a = dict(attrs)
    for k in ("start", "end", "step"):
        if a[k] is not None:
            a[k] = number_arg(a[k], k)
    if a["end"] is None:
        a["start"], a["end"] = 0, a["start"]
    if a["step"] == 0:
        raise InvalidArgumentError("arange: 'step' must not be 0")
    d = a["dtype"]
    if d is None:
        vals = (a["start"], a["end"], a["step"])
        d = _dt.int64 if all(isinstance(v, (int, np.integer)) for v in vals) else \
            _dt.get_default_dtype()
    a["dtype"] = _dt.convert_dtype(d)
    return a


arange_op = defop("arange", (), {"start": 0, "end": None, "step": 1, "dtype": None},
                  infer=_arange_infer, reference=_arange_ref, canon=_arange_canon, promote=None,
                  differentiable=False, family="creation", method=False,
                  doc="Evenly spaced values in [start, end).")


@public()
def arange(start=0, end=None, step=1, dtype=None, name=None):
    """Evenly spaced values in ``[start, end)`` (``arange(n)``: ``0 .. n-1``); integer
    bounds give int64, otherwise the default float dtype. Bounds may be one-element
    tensors, also run-time ones while a program is being built.

    >>> import fw
    >>> fw.arange(1, 7, 2).tolist()
    [1, 3, 5]
    """
    from fw.core.dispatch import invoke

    if end is None:
        start, end = 0, start
    if _dyn.has_symbolic((start, end, step)):
        return _dyn.arange(start, end, step, dtype)
    return invoke(arange_op, [], {"start": start, "end": end, "step": step, "dtype": dtype})


# ---------------------------------------------------------------- meshgrid
def _meshgrid_canon(attrs):
    ix = attrs["indexing"]
    if ix not in ("ij", "xy"):
        raise InvalidArgumentError(f"'indexing' must be 'ij' or 'xy', got {ix!r}")
    return {"indexing": ix}


def _grid_shape(sizes, indexing):
    shape = list(sizes)
    if indexing == "xy" and len(shape) >= 2:
        shape[0], shape[1] = shape[1], shape[0]
    return shape


def _grid_axis(i, n, indexing):
    if indexing == "xy" and n >= 2 and i < 2:
        return 1 - i
    return i


def _meshgrid_infer(xs, indexing="ij"):
    if not xs:
        raise InvalidArgumentError("needs at least one tensor")
    sizes = []
    for i, t in enumerate(xs):
        if len(t.shape) > 1:
            raise InvalidArgumentError(f"input {i} must be 0-D or 1-D, got shape {shp(t.shape)}")
        sizes.append(TensorType(t.shape, t.dtype).numel())
    shape = _grid_shape(sizes, indexing)
    return tuple(TensorType(shape, t.dtype) for t in xs)


def _meshgrid_ref(xs, indexing="ij"):
    for i, x in enumerate(xs):
        if x.ndim > 1:
            raise InvalidArgumentError(f"input {i} must be 0-D or 1-D, got shape "
                                       f"{list(x.shape)}")
    n = len(xs)
    shape = _grid_shape([x.size for x in xs], indexing)
    outs = []
    for i, x in enumerate(xs):
        view = [1] * n
        view[_grid_axis(i, n, indexing)] = x.size
        outs.append(np.broadcast_to(x.reshape(view), shape).copy())
    return tuple(outs)


meshgrid_op = defop("meshgrid", ("x*",), {"indexing": "ij"}, outputs=("out*",),
                    infer=_meshgrid_infer, reference=_meshgrid_ref, canon=_meshgrid_canon,
                    promote=None, family="creation", api=False, method=False,
                    doc="Coordinate grids from 1-D tensors.")


@public()
def meshgrid(*args, **kwargs):
    """Coordinate grids from k 1-D tensors of sizes n1..nk: k tensors of shape
    [n1, ..., nk] (``indexing="ij"``, the default) or with the first two sizes
    swapped (``indexing="xy"``). The tensors may be given as one list.

    >>> import fw
    >>> gx, gy = fw.meshgrid(fw.arange(2), fw.arange(3))
    >>> gx.shape, gy.shape
    ([2, 3], [2, 3])
    """
    from fw.core.dispatch import invoke

    indexing = kwargs.pop("indexing", "ij")
    kwargs.pop("name", None)
    if kwargs:
        raise TypeError(f"meshgrid() got unexpected keyword arguments {sorted(kwargs)}")
    if len(args) == 1 and isinstance(args[0], (list, tuple)):
        args = tuple(args[0])
    return list(invoke(meshgrid_op, [list(args)], {"indexing": indexing}))


# ---------------------------------------------------------------- counters and queries
def _increment_canon(attrs):
    v = number_arg(attrs["value"], "value")
    if isinstance(v, complex):
        raise InvalidTypeError(f"'value' must be a real number, got {v!r}")
    return {"value": v}


def _increment_infer(x, value=1.0):
    n = TensorType(x.shape, x.dtype).numel()
    if n not in (1, DYN):
        raise InvalidArgumentError(f"'x' must hold exactly one element, got shape "
                                   f"{shp(x.shape)}")
    if x.dtype.kind == _dt._BOOL:
        raise InvalidTypeError("'x' must not be a bool tensor")
    return x


def _increment_ref(x, value=1.0):
    if x.size != 1:
        raise InvalidArgumentError(f"'x' must hold exactly one element, got shape "
                                   f"{list(x.shape)}")
    if x.dtype == np.bool_:
        raise InvalidTypeError("'x' must not be a bool tensor")
    return x + x.dtype.type(value)


increment_op = defop("increment", ("x",), {"value": 1.0}, infer=_increment_infer,
                     reference=_increment_ref, canon=_increment_canon, promote=None,
                     differentiable=False, family="creation",
                     doc="x + value for a one-element tensor (in place in eager mode).")


@public(method=True)
def increment(x, value=1.0, name=None):
    """Add ``value`` to the one-element tensor ``x`` in place and return it (as Paddle
    does in dynamic mode); while building a program it returns the new value.

    >>> import fw
    >>> fw.increment(fw.zeros([1])).tolist()
    [1.0]
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
    """True when x's dtype is a floating type (float16, bfloat16, float32, float64)."""
    return _dtype_kind(x) == _dt._FLOAT


@public(method=True)
def is_complex(x):
    """True when x's dtype is complex64 or complex128."""
    return _dtype_kind(x) == _dt._COMPLEX


@public(method=True)
def is_integer(x):
    """True when x's dtype is an integer type (uint8, int8, …, int64; not bool)."""
    return _dtype_kind(x) == _dt._INT


@public()
def to_tensor_(data, dtype=None, place=None, stop_gradient=True):  # pragma: no cover - alias
    return to_tensor(data, dtype, place, stop_gradient)
