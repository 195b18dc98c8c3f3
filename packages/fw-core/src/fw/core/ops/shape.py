"""Shape ops: reshape, transpose, squeeze, concat, split, expand, tile, flip, pad, …

Ops that only move data (reshape, transpose, squeeze, flip, split, …) return
NumPy views where NumPy can, so they cost no copy in eager mode; ops that
broadcast (expand, broadcast_to, broadcast_tensors) return fresh arrays, as
Paddle does, so their results can be written in place.

Composite public functions (hstack, moveaxis, chunk, atleast_2d, …) are written
with the primitive ops here, so autograd and IR building need no extra rules.
Ops with a number of results fixed by the attributes (split, unbind,
broadcast_tensors) declare ``outputs=("out*",)``.
"""

from __future__ import annotations

import numpy as np

from fw.core import dtypes as _dt
from fw.core.dispatch import invoke
from fw.core.errors import InvalidArgumentError, InvalidTypeError, UnsupportedError
from fw.core.ir.types import DYN, TensorType
from fw.core.ops import _api
from fw.core.ops._api import public
from fw.core.ops._args import as_axes, as_int, as_ints
from fw.core.ops._infer import broadcast_shapes, norm_axis, shp
from fw.core.ops._registry import defop
from fw.core.ops._shape_np import (
    _PAD_MODES,
    _as_strided_check,
    _as_strided_ref,
    _bcast_ref,
    _concat_ref,
    _expand_as_ref,
    _expand_ref,
    _expand_shape,
    _flatten_ref,
    _flatten_shape,
    _flip_axes,
    _flip_ref,
    _kron_ref,
    _mul,
    _pad_pairs,
    _pad_ref,
    _rep_ref,
    _reshape_dims,
    _reshape_ref,
    _roll_check,
    _roll_ref,
    _rot90_axes,
    _rot90_ref,
    _split_ref,
    _split_sizes,
    _squeeze_keep,
    _squeeze_ref,
    _stack_ref,
    _tile_ref,
    _tile_shape,
    _transpose_ref,
    _unbind_ref,
    _unflatten_ref,
    _unflatten_shape,
    _unsqueeze_ref,
    _unsqueeze_shape,
    _view_dtype_ref,
    _view_dtype_shape,
)
from fw.core.ops.creation import as_shape
from fw.core.tensor import Tensor

__all__ = ["broadcast_shape", "pad"]


# ---------------------------------------------------------------- reshape
def _reshape_canon(attrs):
    return {"shape": _reshape_dims(as_shape(attrs["shape"], "reshape"))}


def _reshape_infer(x, shape=()):
    _reshape_dims(tuple(shape))
    out = []
    infer_at = -1
    for i, d in enumerate(shape):
        if d == 0:
            if i >= len(x.shape):
                raise InvalidArgumentError(f"shape {list(shape)} uses 0 at position {i} but x "
                                           f"has rank {len(x.shape)}")
            d = x.shape[i]
        elif d == -1:
            infer_at = i
        out.append(d)
    n = 1
    dyn = False
    for d in x.shape:
        if d == DYN:
            dyn = True
        else:
            n *= d
    known = 1
    for i, d in enumerate(out):
        if i != infer_at:
            if d == DYN:
                dyn = True
            else:
                known *= d
    if infer_at >= 0:
        if dyn:
            out[infer_at] = DYN
        else:
            if known == 0 or n % known:
                raise InvalidArgumentError(f"cannot reshape x of shape {shp(x.shape)} "
                                           f"({n} elements) to {list(shape)}")
            out[infer_at] = n // known
    elif not dyn and known != n:
        raise InvalidArgumentError(f"cannot reshape x of shape {shp(x.shape)} ({n} elements) "
                                   f"to {list(shape)} ({known} elements)")
    return TensorType(out, x.dtype)


reshape_op = defop("reshape", ("x",), {"shape": ()}, infer=_reshape_infer,
                   reference=_reshape_ref, canon=_reshape_canon, promote=None, family="shape",
                   doc="Same values in a new shape; 0 keeps a dimension, one -1 is inferred.")


# ---------------------------------------------------------------- view
def _view_dtype_canon(attrs):
    return {"dtype": _dt.convert_dtype(attrs["dtype"])}


def _view_dtype_infer(x, dtype=None):
    return TensorType(_view_dtype_shape(x.shape, x.dtype, dtype), dtype)


view_dtype_op = defop("view_dtype", ("x",), {"dtype": None}, infer=_view_dtype_infer,
                      reference=_view_dtype_ref, canon=_view_dtype_canon, promote=None,
                      differentiable=False, family="shape", api=False, method=False,
                      doc="Reinterpret x's bytes as another dtype (the last dimension "
                          "scales by the ratio of element sizes).")


# ---------------------------------------------------------------- transpose & co
def _perm_canon(attrs):
    p = attrs.get("perm")
    return {"perm": None if p is None else as_ints(p, "transpose", "perm")}


def _transpose_infer(x, perm=None):
    nd = len(x.shape)
    if perm is None:
        perm = tuple(range(nd))[::-1]
    if len(perm) != nd or sorted(norm_axis(p, nd, "perm") for p in perm) != list(range(nd)):
        raise InvalidArgumentError(f"'perm'={list(perm)} is not a permutation of the "
                                   f"{nd} axes of x with shape {shp(x.shape)}")
    return TensorType([x.shape[norm_axis(p, nd)] for p in perm], x.dtype)


transpose_op = defop("transpose", ("x",), {"perm": None}, infer=_transpose_infer,
                     reference=_transpose_ref, canon=_perm_canon, promote=None,
                     family="shape", doc="Permute the axes (reverse them when perm is None).")


def _ndim(x):
    return len(x.shape)


def _swap_perm(nd, a, b, op):
    a = norm_axis(as_int(a, op, "axis0"), nd, "axis0")
    b = norm_axis(as_int(b, op, "axis1"), nd, "axis1")
    perm = list(range(nd))
    perm[a], perm[b] = perm[b], perm[a]
    return tuple(perm)


def _T(self):
    """The tensor with its axes reversed (``x.transpose(range(ndim)[::-1])``).

    Returns:
        Tensor: the transpose; a 0-D or 1-D tensor is unchanged.

    Examples:
        >>> import fw
        >>> x = fw.to_tensor([[1, 2, 3], [4, 5, 6]])
        >>> x.T.tolist()
        [[1, 4], [2, 5], [3, 6]]
        >>> fw.zeros([2, 3, 4]).T.shape
        [4, 3, 2]
    """
    return invoke(transpose_op, [self], {"perm": None})


def _mT(self):
    """The matrix transpose of the last two axes; leading (batch) axes stay.

    Returns:
        Tensor: `x` with its last two axes swapped.

    Raises:
        InvalidArgumentError: `x` has fewer than 2 dimensions.

    Examples:
        >>> import fw
        >>> fw.zeros([5, 2, 3]).mT.shape
        [5, 3, 2]
        >>> fw.to_tensor([[1, 2], [3, 4]]).mT.tolist()
        [[1, 3], [2, 4]]
    """
    nd = _ndim(self)
    if nd < 2:
        raise InvalidArgumentError(f"mT: the tensor must have at least 2 dimensions, got shape "
                                   f"{list(self.shape)}")
    return invoke(transpose_op, [self], {"perm": _swap_perm(nd, -1, -2, "mT")})


# properties are attached to Tensor and Value by _api.install, like methods
_api.METHODS.setdefault("T", property(_T))
_api.METHODS.setdefault("mT", property(_mT))


# ---------------------------------------------------------------- squeeze / unsqueeze
def _squeeze_canon(attrs):
    return {"axis": as_axes(attrs["axis"], "squeeze")}


def _squeeze_infer(x, axis=None):
    return TensorType([x.shape[i] for i in _squeeze_keep(x.shape, axis)], x.dtype)


squeeze_op = defop("squeeze", ("x",), {"axis": None}, infer=_squeeze_infer,
                   reference=_squeeze_ref, canon=_squeeze_canon, promote=None, family="shape",
                   api=False, method=False,
                   doc="Remove dimensions of size 1 (all of them, or those in `axis`).")


def _unsqueeze_canon(attrs):
    return {"axis": as_ints(attrs["axis"], "unsqueeze", "axis")}


def _unsqueeze_infer(x, axis=()):
    return TensorType(_unsqueeze_shape(x.shape, axis), x.dtype)


unsqueeze_op = defop("unsqueeze", ("x",), {"axis": ()}, infer=_unsqueeze_infer,
                     reference=_unsqueeze_ref, canon=_unsqueeze_canon, promote=None,
                     family="shape", api=False, method=False,
                     doc="Insert dimensions of size 1 at `axis`.")


# ---------------------------------------------------------------- flatten / unflatten
def _flatten_canon(attrs):
    return {"start_axis": as_int(attrs["start_axis"], "flatten", "start_axis"),
            "stop_axis": as_int(attrs["stop_axis"], "flatten", "stop_axis")}


def _flatten_infer(x, start_axis=0, stop_axis=-1):
    return TensorType(_flatten_shape(x.shape, start_axis, stop_axis), x.dtype)


flatten_op = defop("flatten", ("x",), {"start_axis": 0, "stop_axis": -1}, infer=_flatten_infer,
                   reference=_flatten_ref, canon=_flatten_canon, promote=None, family="shape",
                   api=False, method=False,
                   doc="Merge the axes start_axis..stop_axis into one.")


def _unflatten_canon(attrs):
    return {"axis": as_int(attrs["axis"], "unflatten", "axis"),
            "shape": as_ints(attrs["shape"], "unflatten", "shape")}


def _unflatten_infer(x, axis=0, shape=()):
    return TensorType(_unflatten_shape(x.shape, axis, shape), x.dtype)


defop("unflatten", ("x",), {"axis": 0, "shape": ()}, infer=_unflatten_infer,
      reference=_unflatten_ref, canon=_unflatten_canon, promote=None, family="shape",
      doc="Split axis `axis` into the dimensions `shape` (one -1 is inferred).")


# ---------------------------------------------------------------- concat / stack
def _axis_canon(op):
    def canon(attrs):
        a = dict(attrs)
        a["axis"] = as_int(a["axis"], op, "axis")
        return a

    return canon


def _list_dtype(xs):
    return _dt.result_type(*[t.dtype for t in xs])


def _concat_infer(x, axis=0):
    if not x:
        raise InvalidArgumentError("'x' must be a non-empty list of tensors")
    nd = len(x[0].shape)
    if nd == 0:
        raise InvalidArgumentError("0-D tensors cannot be concatenated; use stack")
    a = norm_axis(axis, nd)
    out = list(x[0].shape)
    for i, t in enumerate(x[1:], 1):
        if len(t.shape) != nd:
            raise InvalidArgumentError(f"x[{i}] has rank {len(t.shape)} but x[0] has rank {nd} "
                                       f"(shapes {shp(x[0].shape)} and {shp(t.shape)})")
        for j, (d, e) in enumerate(zip(out, t.shape)):
            if j == a:
                continue
            if d != e and d != DYN and e != DYN:
                raise InvalidArgumentError(
                    f"x[{i}] has shape {shp(t.shape)} but x[0] has shape {shp(x[0].shape)}: "
                    f"they must agree except along axis {a}")
            if d == DYN:
                out[j] = e
    sizes = [t.shape[a] for t in x]
    out[a] = DYN if DYN in sizes else sum(sizes)
    return TensorType(out, _list_dtype(x))


concat_op = defop("concat", ("x*",), {"axis": 0}, infer=_concat_infer, reference=_concat_ref,
                  canon=_axis_canon("concat"), family="shape", api=False, method=False,
                  doc="Join tensors along an existing axis.")


def _stack_infer(x, axis=0):
    if not x:
        raise InvalidArgumentError("'x' must be a non-empty list of tensors")
    shape = list(x[0].shape)
    for i, t in enumerate(x[1:], 1):
        if len(t.shape) != len(shape) or any(d != e and DYN not in (d, e)
                                             for d, e in zip(shape, t.shape)):
            raise InvalidArgumentError(f"all tensors must have one shape: x[0] has "
                                       f"{shp(x[0].shape)}, x[{i}] has {shp(t.shape)}")
        shape = [e if d == DYN else d for d, e in zip(shape, t.shape)]
    nd = len(shape) + 1
    a = norm_axis(axis, nd)
    shape.insert(a, len(x))
    return TensorType(shape, _list_dtype(x))


stack_op = defop("stack", ("x*",), {"axis": 0}, infer=_stack_infer, reference=_stack_ref,
                 canon=_axis_canon("stack"), family="shape", api=False, method=False,
                 doc="Join tensors of one shape along a new axis.")


# ---------------------------------------------------------------- split family
def _split_canon(attrs):
    ns = attrs["num_or_sections"]
    if isinstance(ns, (list, tuple)) or (isinstance(ns, Tensor) and ns.ndim == 1):
        ns = as_ints(ns, "split", "num_or_sections")
    else:
        ns = as_int(ns, "split", "num_or_sections")
    return {"num_or_sections": ns, "axis": as_int(attrs["axis"], "split", "axis")}


def _split_infer(x, num_or_sections=1, axis=0):
    a, sizes = _split_sizes(x.shape, num_or_sections, axis)
    return tuple(TensorType(x.shape[:a] + (s,) + x.shape[a + 1:], x.dtype) for s in sizes)


split_op = defop("split", ("x",), {"num_or_sections": 1, "axis": 0}, ("out*",),
                 infer=_split_infer, reference=_split_ref, canon=_split_canon, promote=None,
                 family="shape", api=False, method=False,
                 doc="Split into equal parts or parts of the given sizes along `axis`.")


def _unbind_infer(input, axis=0):
    nd = len(input.shape)
    if nd == 0:
        raise InvalidArgumentError("a 0-D tensor cannot be unbound")
    a = norm_axis(axis, nd)
    n = input.shape[a]
    if n == DYN:
        raise UnsupportedError(f"axis {a} has a dynamic size, so the number of results is "
                               f"unknown; unbind needs a static size")
    rest = input.shape[:a] + input.shape[a + 1:]
    return tuple(TensorType(rest, input.dtype) for _ in range(n))


defop("unbind", ("input",), {"axis": 0}, ("out*",), infer=_unbind_infer, reference=_unbind_ref,
      canon=_axis_canon("unbind"), promote=None, family="shape", api=False, method=False,
      doc="The slices of `input` along `axis`, each without that axis.")


# ---------------------------------------------------------------- broadcasting
def _expand_canon(attrs):
    return {"shape": as_shape(attrs["shape"], "expand")}


def _expand_infer(x, shape=()):
    return TensorType(_expand_shape(x.shape, shape), x.dtype)


expand_op = defop("expand", ("x",), {"shape": ()}, infer=_expand_infer, reference=_expand_ref,
                  canon=_expand_canon, promote=None, family="shape", api=False, method=False,
                  doc="Broadcast x to `shape` (-1 keeps a dimension).")


def _expand_as_infer(x, y):
    return TensorType(_expand_shape(x.shape, y.shape, keep=False), x.dtype)


defop("expand_as", ("x", "y"), infer=_expand_as_infer, reference=_expand_as_ref, promote=None,
      family="shape",
      doc="Broadcast x to the shape of y (y's values are not used).")


def _bcast_infer(input):
    if not input:
        raise InvalidArgumentError("'input' must be a non-empty list of tensors")
    shape = broadcast_shapes(*[t.shape for t in input],
                             names=[f"input[{i}]" for i in range(len(input))])
    return tuple(TensorType(shape, t.dtype) for t in input)


defop("broadcast_tensors", ("input*",), outputs=("out*",), infer=_bcast_infer,
      reference=_bcast_ref, promote=None, family="shape", api=False, method=False,
      doc="Broadcast a list of tensors to their common shape.")


def broadcast_shape(x_shape, y_shape):
    """The shape two shapes broadcast to (a list of ints; no tensors involved).

    Args:
        x_shape (list|tuple): The first shape.
        y_shape (list|tuple): The second shape.

    Returns:
        list[int]: the broadcast shape (NumPy's rule).

    Raises:
        InvalidArgumentError: the shapes do not broadcast (the message names both).

    Examples:
        >>> import fw
        >>> fw.broadcast_shape([2, 1, 3], [1, 3, 1])
        [2, 3, 3]
        >>> fw.broadcast_shape([4], [])
        [4]
        >>> try:
        ...     fw.broadcast_shape([2, 3], [4])
        ... except ValueError as e:
        ...     print("broadcast_shape" in str(e))
        True
    """
    xs = as_ints(x_shape, "broadcast_shape", "x_shape")
    ys = as_ints(y_shape, "broadcast_shape", "y_shape")
    try:
        return list(broadcast_shapes(xs, ys, names=("x_shape", "y_shape")))
    except InvalidArgumentError as e:
        raise InvalidArgumentError(f"broadcast_shape: {e}") from None


public("broadcast_shape")(broadcast_shape)


# ---------------------------------------------------------------- tile / repeat
def _tile_canon(attrs):
    return {"repeat_times": as_shape(attrs["repeat_times"], "tile", "repeat_times")}


def _tile_infer(x, repeat_times=()):
    return TensorType(_tile_shape(x.shape, repeat_times), x.dtype)


tile_op = defop("tile", ("x",), {"repeat_times": ()}, infer=_tile_infer, reference=_tile_ref,
                canon=_tile_canon, promote=None, family="shape", api=False, method=False,
                doc="Repeat x `repeat_times[i]` times along each axis.")


def _rep_canon(attrs):
    a = dict(attrs)
    a["repeats"] = as_int(a["repeats"], "repeat_interleave", "repeats")
    if a["axis"] is not None:
        a["axis"] = as_int(a["axis"], "repeat_interleave", "axis")
    return a


def _rep_infer(x, repeats_tensor=None, repeats=1, axis=None):
    if axis is None:
        n = _mul(x.shape)
        shape, a = [n], 0
    else:
        shape, a = list(x.shape), norm_axis(axis, len(x.shape))
        if not shape:
            shape = [1]
    if repeats_tensor is not None:
        if repeats_tensor.dtype.kind != _dt._INT or len(repeats_tensor.shape) > 1:
            raise InvalidTypeError(f"'repeats' given as a tensor must be a 0-D or 1-D integer "
                                   f"tensor, got {repeats_tensor.dtype.name}"
                                   f"{list(repeats_tensor.shape)}")
        r = repeats_tensor.shape[0] if repeats_tensor.shape else 1
        if r not in (1, DYN) and shape[a] not in (r, DYN):
            raise InvalidArgumentError(f"'repeats' has {r} entries but the axis has size "
                                       f"{shape[a]}")
        shape[a] = DYN
    else:
        if repeats < 0:
            raise InvalidArgumentError(f"'repeats' must not be negative, got {repeats}")
        shape[a] = DYN if shape[a] == DYN else shape[a] * repeats
    return TensorType(shape, x.dtype)


rep_op = defop("repeat_interleave", ("x", "repeats_tensor?"), {"repeats": 1, "axis": None},
               infer=_rep_infer, reference=_rep_ref, canon=_rep_canon, promote=None,
               family="shape", api=False, method=False,
               doc="Repeat each element `repeats` times (an int attr, or per element from "
                   "the repeats_tensor input) along `axis` (flattened when None).")


# ---------------------------------------------------------------- flip / rot90 / roll
def _flip_canon(attrs):
    return {"axis": as_ints(attrs["axis"], "flip", "axis")}


def _flip_infer(x, axis=()):
    _flip_axes(len(x.shape), axis)
    return x


defop("flip", ("x",), {"axis": ()}, infer=_flip_infer, reference=_flip_ref, canon=_flip_canon,
      promote=None, family="shape", doc="Reverse the order of elements along the given axes.")


def _rot90_canon(attrs):
    return {"k": as_int(attrs["k"], "rot90", "k"), "axes": as_ints(attrs["axes"], "rot90",
                                                                     "axes")}


def _rot90_infer(x, k=1, axes=(0, 1)):
    a, b = _rot90_axes(len(x.shape), axes)
    shape = list(x.shape)
    if k % 2:
        shape[a], shape[b] = shape[b], shape[a]
    return TensorType(shape, x.dtype)


defop("rot90", ("x",), {"k": 1, "axes": (0, 1)}, infer=_rot90_infer, reference=_rot90_ref,
      canon=_rot90_canon, promote=None, family="shape",
      doc="Rotate by 90 degrees k times in the plane of `axes` (from the first axis "
          "towards the second).")


def _roll_canon(attrs):
    return {"shifts": as_ints(attrs["shifts"], "roll", "shifts"),
            "axis": as_axes(attrs["axis"], "roll")}


def _roll_infer(x, shifts=(), axis=None):
    _roll_check(len(x.shape), shifts, axis)
    return x


defop("roll", ("x",), {"shifts": (), "axis": None}, infer=_roll_infer, reference=_roll_ref,
      canon=_roll_canon, promote=None, family="shape",
      doc="Shift elements circularly along `axis` (over the flattened tensor when None).")


# ---------------------------------------------------------------- pad
def _pad_canon(attrs):
    mode = attrs["mode"]
    if mode not in _PAD_MODES:
        raise InvalidArgumentError(f"pad: 'mode' must be one of {sorted(_PAD_MODES)}, got "
                                   f"{mode!r}")
    v = attrs["value"]
    if isinstance(v, Tensor):
        v = v.item()
    elif isinstance(v, np.generic):
        v = v.item()
    return {"paddings": as_ints(attrs["paddings"], "pad", "paddings"), "mode": mode, "value": v}


def _pad_infer(x, paddings=(), mode="constant", value=0.0):
    pairs = _pad_pairs(x.shape, paddings, mode)
    return TensorType([DYN if d == DYN else d + b + a for d, (b, a) in zip(x.shape, pairs)],
                      x.dtype)


pad_op = defop("pad", ("x",), {"paddings": (), "mode": "constant", "value": 0.0},
               infer=_pad_infer, reference=_pad_ref, canon=_pad_canon, promote=None,
               family="shape", api=False, method=False,
               doc="Pad every axis explicitly: paddings = [before_0, after_0, before_1, …] "
                   "(negative values crop in constant mode); modes constant, reflect, "
                   "replicate, circular.")


def pad(x, paddings, mode="constant", value=0.0):
    """The core padding op that ``fw.nn.functional.pad`` builds on.

    Args:
        x: the tensor.
        paddings: ``[before_0, after_0, before_1, after_1, …]`` for every axis of x,
            from axis 0 (negative amounts crop; constant mode only).
        mode: ``"constant"`` (fill with `value`), ``"reflect"`` (mirror without the
            edge), ``"replicate"`` (repeat the edge) or ``"circular"`` (wrap around).
        value: the fill value of constant mode.
    Returns:
        the padded tensor.

    >>> import fw
    >>> from fw.core.ops.shape import pad
    >>> pad(fw.ones([2]), [1, 2]).tolist()
    [0.0, 1.0, 1.0, 0.0, 0.0]
    """
    return invoke(pad_op, [x], {"paddings": paddings, "mode": mode, "value": value})


# ---------------------------------------------------------------- kron
def _kron_infer(x, y):
    n = max(len(x.shape), len(y.shape))
    xs = (1,) * (n - len(x.shape)) + tuple(x.shape)
    ys = (1,) * (n - len(y.shape)) + tuple(y.shape)
    return TensorType([_mul((a, b)) for a, b in zip(xs, ys)],
                      _dt.promote_types(x.dtype, y.dtype))


defop("kron", ("x", "y"), infer=_kron_infer, reference=_kron_ref, family="shape",
      doc="Kronecker product (block (i, j) is x[i, j] * y).")


# ---------------------------------------------------------------- as_strided
def _as_strided_canon(attrs):
    return {"shape": as_ints(attrs["shape"], "as_strided", "shape"),
            "stride": as_ints(attrs["stride"], "as_strided", "stride"),
            "offset": as_int(attrs["offset"], "as_strided", "offset")}


def _as_strided_infer(x, shape=(), stride=(), offset=0):
    _as_strided_check(_mul(x.shape), shape, stride, offset)
    return TensorType(shape, x.dtype)


defop("as_strided", ("x",), {"shape": (), "stride": (), "offset": 0}, infer=_as_strided_infer,
      reference=_as_strided_ref, canon=_as_strided_canon, promote=None, family="shape",
      doc="A new tensor read from x's elements (in row-major order) with the given shape, "
          "strides (in elements) and offset.")


