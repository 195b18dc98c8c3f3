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
from fw.core.ops.creation import as_shape
from fw.core.tensor import Tensor

__all__ = ["broadcast_shape", "pad"]


def _mul(dims):
    """Product of dims, -1 if any is dynamic (0 wins: a 0-size tensor stays empty)."""
    n = 1
    dyn = False
    for d in dims:
        if d == 0:
            return 0
        if d == DYN:
            dyn = True
        else:
            n *= d
    return DYN if dyn else n


# ---------------------------------------------------------------- reshape
def _reshape_canon(attrs):
    return {"shape": as_shape(attrs["shape"], "reshape")}


def _reshape_infer(x, shape=()):
    # Paddle: 0 copies the input's dimension, one -1 is inferred from the rest
    out = []
    infer_at = -1
    for i, d in enumerate(shape):
        if d == 0:
            if i >= len(x.shape):
                raise InvalidArgumentError(f"shape {list(shape)} uses 0 at position {i} but x "
                                           f"has rank {len(x.shape)}")
            d = x.shape[i]
        elif d == -1:
            if infer_at >= 0:
                raise InvalidArgumentError(f"shape {list(shape)} has more than one -1")
            infer_at = i
        elif d < -1:
            raise InvalidArgumentError(f"shape {list(shape)} has a negative dimension {d}")
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


def _reshape_ref(x, shape=()):
    tgt = [x.shape[i] if d == 0 else d for i, d in enumerate(shape)]
    return np.reshape(x, tgt)


reshape_op = defop("reshape", ("x",), {"shape": ()}, infer=_reshape_infer,
                   reference=_reshape_ref, canon=_reshape_canon, promote=None, family="shape",
                   doc="Same values in a new shape; 0 keeps a dimension, one -1 is inferred.")


# ---------------------------------------------------------------- view
def _view_dtype_canon(attrs):
    return {"dtype": _dt.convert_dtype(attrs["dtype"])}


def _view_dtype_shape(shape, src, dst):
    if src.itemsize == dst.itemsize:
        return tuple(shape)
    if len(shape) == 0:
        raise InvalidArgumentError(f"a 0-D tensor of {src.name} cannot be viewed as "
                                   f"{dst.name} (the element sizes differ)")
    last = shape[-1]
    if last == DYN:
        return tuple(shape)
    nbytes = last * src.itemsize
    if nbytes % dst.itemsize:
        raise InvalidArgumentError(
            f"the last dimension of x ({last} x {src.itemsize} bytes of {src.name}) is not a "
            f"multiple of the size of {dst.name} ({dst.itemsize} bytes)")
    return tuple(shape[:-1]) + (nbytes // dst.itemsize,)


def _view_dtype_infer(x, dtype=None):
    return TensorType(_view_dtype_shape(x.shape, x.dtype, dtype), dtype)


def _view_dtype_ref(x, dtype=None):
    src = _dt.from_numpy(x.dtype)
    _view_dtype_shape(x.shape, src, dtype)
    a = x if x.flags.c_contiguous else np.ascontiguousarray(x)
    return a.view(dtype.np)


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


def _transpose_ref(x, perm=None):
    return np.transpose(x, perm)


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
    """The tensor with its axes reversed (``x.transpose(range(ndim)[::-1])``)."""
    return invoke(transpose_op, [self], {"perm": None})


def _mT(self):
    """The matrix transpose of the last two axes (batched)."""
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


def _squeeze_keep(shape, axis):
    """Indices of the dims that stay. Paddle ignores listed axes whose size is not 1.
    A dynamic dim is squeezed only when listed explicitly."""
    nd = len(shape)
    if axis is None:
        return [i for i, d in enumerate(shape) if d != 1]
    if nd == 0:
        for a in axis:
            norm_axis(a, 0)
        return []
    drop = {norm_axis(a, nd) for a in axis}
    return [i for i, d in enumerate(shape) if not (i in drop and d in (1, DYN))]


def _squeeze_infer(x, axis=None):
    return TensorType([x.shape[i] for i in _squeeze_keep(x.shape, axis)], x.dtype)


def _squeeze_ref(x, axis=None):
    keep = _squeeze_keep(x.shape, axis)
    return np.reshape(x, [x.shape[i] for i in keep])


squeeze_op = defop("squeeze", ("x",), {"axis": None}, infer=_squeeze_infer,
                   reference=_squeeze_ref, canon=_squeeze_canon, promote=None, family="shape",
                   api=False, method=False,
                   doc="Remove dimensions of size 1 (all of them, or those in `axis`).")


def _unsqueeze_canon(attrs):
    return {"axis": as_ints(attrs["axis"], "unsqueeze", "axis")}


def _unsqueeze_shape(shape, axis):
    # Paddle inserts the axes one after another, each relative to the shape so far
    out = list(shape)
    for a in axis:
        n = len(out)
        if a < -(n + 1) or a > n:
            raise InvalidArgumentError(f"'axis' {a} is out of range for inserting into a shape "
                                       f"of rank {n} (expected {-(n + 1)} <= axis <= {n}) "
                                       f"(x has shape {shp(shape)}, axis={list(axis)})")
        out.insert(a + n + 1 if a < 0 else a, 1)
    return out


def _unsqueeze_infer(x, axis=()):
    return TensorType(_unsqueeze_shape(x.shape, axis), x.dtype)


def _unsqueeze_ref(x, axis=()):
    return np.reshape(x, _unsqueeze_shape(x.shape, axis))


unsqueeze_op = defop("unsqueeze", ("x",), {"axis": ()}, infer=_unsqueeze_infer,
                     reference=_unsqueeze_ref, canon=_unsqueeze_canon, promote=None,
                     family="shape", api=False, method=False,
                     doc="Insert dimensions of size 1 at `axis`.")


# ---------------------------------------------------------------- flatten / unflatten
def _flatten_canon(attrs):
    return {"start_axis": as_int(attrs["start_axis"], "flatten", "start_axis"),
            "stop_axis": as_int(attrs["stop_axis"], "flatten", "stop_axis")}


def _flatten_shape(shape, start_axis, stop_axis):
    nd = len(shape)
    if nd == 0:
        norm_axis(start_axis, 0, "start_axis")
        norm_axis(stop_axis, 0, "stop_axis")
        return [1]
    s = norm_axis(start_axis, nd, "start_axis")
    e = norm_axis(stop_axis, nd, "stop_axis")
    if s > e:
        raise InvalidArgumentError(f"'start_axis' ({start_axis}) must not come after "
                                   f"'stop_axis' ({stop_axis}) for x of shape {shp(shape)}")
    return list(shape[:s]) + [_mul(shape[s:e + 1])] + list(shape[e + 1:])


def _flatten_infer(x, start_axis=0, stop_axis=-1):
    return TensorType(_flatten_shape(x.shape, start_axis, stop_axis), x.dtype)


def _flatten_ref(x, start_axis=0, stop_axis=-1):
    return np.reshape(x, _flatten_shape(x.shape, start_axis, stop_axis))


flatten_op = defop("flatten", ("x",), {"start_axis": 0, "stop_axis": -1}, infer=_flatten_infer,
                   reference=_flatten_ref, canon=_flatten_canon, promote=None, family="shape",
                   api=False, method=False,
                   doc="Merge the axes start_axis..stop_axis into one.")


def _unflatten_canon(attrs):
    return {"axis": as_int(attrs["axis"], "unflatten", "axis"),
            "shape": as_ints(attrs["shape"], "unflatten", "shape")}


def _unflatten_shape(shape, axis, sizes):
    nd = len(shape)
    if nd == 0:
        raise InvalidArgumentError("x must have at least one dimension")
    a = norm_axis(axis, nd)
    if len(sizes) == 0:
        raise InvalidArgumentError("'shape' must not be empty")
    if sum(1 for s in sizes if s == -1) > 1 or any(s < -1 for s in sizes):
        raise InvalidArgumentError(f"'shape' {list(sizes)} may hold one -1 and no other "
                                   f"negative size")
    d = shape[a]
    known = _mul([s for s in sizes if s != -1])
    out = list(sizes)
    if -1 in sizes:
        i = sizes.index(-1)
        if d == DYN:
            out[i] = DYN
        elif known == 0 or d % known:
            raise InvalidArgumentError(f"cannot split axis {a} of size {d} into {list(sizes)}")
        else:
            out[i] = d // known
    elif d != DYN and known != d:
        raise InvalidArgumentError(f"'shape' {list(sizes)} has {known} elements but axis {a} "
                                   f"of x (shape {shp(shape)}) has size {d}")
    return list(shape[:a]) + out + list(shape[a + 1:])


def _unflatten_infer(x, axis=0, shape=()):
    return TensorType(_unflatten_shape(x.shape, axis, shape), x.dtype)


def _unflatten_ref(x, axis=0, shape=()):
    return np.reshape(x, _unflatten_shape(x.shape, axis, shape))


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


def _concat_ref(x, axis=0):
    return np.concatenate(x, axis=axis)


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


def _stack_ref(x, axis=0):
    return np.stack(x, axis=axis)


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


def _split_sizes(shape, num_or_sections, axis):
    nd = len(shape)
    if nd == 0:
        raise InvalidArgumentError("a 0-D tensor cannot be split")
    a = norm_axis(axis, nd)
    d = shape[a]
    if isinstance(num_or_sections, int):
        n = num_or_sections
        if n <= 0:
            raise InvalidArgumentError(f"'num_or_sections' must be positive, got {n}")
        if d == DYN:
            return a, [DYN] * n
        if d % n:
            raise InvalidArgumentError(f"axis {a} of x (shape {shp(shape)}) has size {d}, "
                                       f"which cannot be split into {n} equal parts")
        return a, [d // n] * n
    secs = list(num_or_sections)
    if not secs:
        raise InvalidArgumentError("'num_or_sections' must not be an empty list")
    if sum(1 for s in secs if s == -1) > 1 or any(s < -1 for s in secs):
        raise InvalidArgumentError(f"'num_or_sections' {secs} may hold one -1 and no other "
                                   f"negative size")
    known = sum(s for s in secs if s != -1)
    if -1 in secs:
        i = secs.index(-1)
        if d == DYN:
            secs[i] = DYN
        elif known > d:
            raise InvalidArgumentError(f"sections {list(num_or_sections)} need more than the "
                                       f"{d} elements of axis {a}")
        else:
            secs[i] = d - known
    elif d != DYN and known != d:
        raise InvalidArgumentError(f"sections {secs} add up to {known} but axis {a} of x "
                                   f"(shape {shp(shape)}) has size {d}")
    return a, secs


def _split_infer(x, num_or_sections=1, axis=0):
    a, sizes = _split_sizes(x.shape, num_or_sections, axis)
    return tuple(TensorType(x.shape[:a] + (s,) + x.shape[a + 1:], x.dtype) for s in sizes)


def _split_ref(x, num_or_sections=1, axis=0):
    a, sizes = _split_sizes(x.shape, num_or_sections, axis)
    out = []
    start = 0
    idx = [slice(None)] * x.ndim
    for s in sizes:
        idx[a] = slice(start, start + s)
        out.append(x[tuple(idx)])
        start += s
    return tuple(out)


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


def _unbind_ref(input, axis=0):
    a = norm_axis(axis, input.ndim)
    return tuple(np.moveaxis(input, a, 0))


defop("unbind", ("input",), {"axis": 0}, ("out*",), infer=_unbind_infer, reference=_unbind_ref,
      canon=_axis_canon("unbind"), promote=None, family="shape", api=False, method=False,
      doc="The slices of `input` along `axis`, each without that axis.")


# ---------------------------------------------------------------- broadcasting
def _expand_shape(shape, target, keep=True):
    """The shape x broadcasts to. With `keep`, -1 in target keeps x's dim (expand's
    spelling); without, -1 is a dynamic dim of the target (expand_as on IR values)."""
    nd, nt = len(shape), len(target)
    if nt < nd:
        raise InvalidArgumentError(f"the target shape {list(target)} has fewer dimensions than "
                                   f"x with shape {shp(shape)}")
    out = []
    for i, t in enumerate(target):
        j = i - (nt - nd)
        d = shape[j] if j >= 0 else None
        if t == DYN and not keep:
            out.append(d if d not in (None, 1) else DYN)
        elif t == -1:
            if d is None:
                raise InvalidArgumentError(f"-1 in the target shape {list(target)} at a new "
                                           f"leading dimension {i} (it can only keep an "
                                           f"existing dimension of x)")
            out.append(d)
        elif t < -1:
            raise InvalidArgumentError(f"the target shape {list(target)} has a negative size")
        elif d is None or d == 1 or d == t or d == DYN:
            out.append(t)
        else:
            raise InvalidArgumentError(f"x with shape {shp(shape)} cannot be expanded to "
                                       f"{list(target)}: dimension {j} has size {d}, which is "
                                       f"not 1 and differs from {t}")
    return out


def _expand_canon(attrs):
    return {"shape": as_shape(attrs["shape"], "expand")}


def _expand_infer(x, shape=()):
    return TensorType(_expand_shape(x.shape, shape), x.dtype)


def _expand_ref(x, shape=()):
    return np.broadcast_to(x, _expand_shape(x.shape, shape)).copy()


expand_op = defop("expand", ("x",), {"shape": ()}, infer=_expand_infer, reference=_expand_ref,
                  canon=_expand_canon, promote=None, family="shape", api=False, method=False,
                  doc="Broadcast x to `shape` (-1 keeps a dimension).")


def _expand_as_infer(x, y):
    return TensorType(_expand_shape(x.shape, y.shape, keep=False), x.dtype)


def _expand_as_ref(x, y):
    return np.broadcast_to(x, y.shape).copy()


defop("expand_as", ("x", "y"), infer=_expand_as_infer, reference=_expand_as_ref, promote=None,
      family="shape",
      doc="Broadcast x to the shape of y (y's values are not used).")


def _bcast_infer(input):
    if not input:
        raise InvalidArgumentError("'input' must be a non-empty list of tensors")
    shape = broadcast_shapes(*[t.shape for t in input],
                             names=[f"input[{i}]" for i in range(len(input))])
    return tuple(TensorType(shape, t.dtype) for t in input)


def _bcast_ref(input):
    return tuple(a.copy() for a in np.broadcast_arrays(*input))


defop("broadcast_tensors", ("input*",), outputs=("out*",), infer=_bcast_infer,
      reference=_bcast_ref, promote=None, family="shape", api=False, method=False,
      doc="Broadcast a list of tensors to their common shape.")


def broadcast_shape(x_shape, y_shape):
    """The shape two shapes broadcast to (a list of ints; no tensors involved).

    >>> import fw
    >>> fw.broadcast_shape([2, 1, 3], [1, 3, 1])
    [2, 3, 3]
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


def _tile_shape(shape, reps):
    if any(r < 0 for r in reps):
        raise InvalidArgumentError(f"'repeat_times' {list(reps)} must not be negative")
    n = max(len(shape), len(reps))
    shape = (1,) * (n - len(shape)) + tuple(shape)
    reps = (1,) * (n - len(reps)) + tuple(reps)
    return [0 if r == 0 else (DYN if d == DYN else d * r) for d, r in zip(shape, reps)]


def _tile_infer(x, repeat_times=()):
    return TensorType(_tile_shape(x.shape, repeat_times), x.dtype)


def _tile_ref(x, repeat_times=()):
    _tile_shape(x.shape, repeat_times)
    return np.tile(x, repeat_times) if repeat_times else x.copy()


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


def _rep_ref(x, repeats_tensor=None, repeats=1, axis=None):
    r = repeats if repeats_tensor is None else repeats_tensor.reshape(-1)
    if repeats_tensor is not None and r.size and r.min() < 0:
        raise InvalidArgumentError(f"'repeats' must not be negative, got {r.tolist()}")
    if axis is None:
        return np.repeat(x.reshape(-1), r)
    return np.repeat(x.reshape(1) if x.ndim == 0 else x, r, axis=axis)


rep_op = defop("repeat_interleave", ("x", "repeats_tensor?"), {"repeats": 1, "axis": None},
               infer=_rep_infer, reference=_rep_ref, canon=_rep_canon, promote=None,
               family="shape", api=False, method=False,
               doc="Repeat each element `repeats` times (an int attr, or per element from "
                   "the repeats_tensor input) along `axis` (flattened when None).")


# ---------------------------------------------------------------- flip / rot90 / roll
def _flip_canon(attrs):
    return {"axis": as_ints(attrs["axis"], "flip", "axis")}


def _flip_axes(nd, axis):
    axes = tuple(norm_axis(a, nd) for a in axis)
    if len(set(axes)) != len(axes):
        raise InvalidArgumentError(f"'axis' {list(axis)} repeats an axis")
    return axes


def _flip_infer(x, axis=()):
    _flip_axes(len(x.shape), axis)
    return x


def _flip_ref(x, axis=()):
    return np.flip(x, _flip_axes(x.ndim, axis))


defop("flip", ("x",), {"axis": ()}, infer=_flip_infer, reference=_flip_ref, canon=_flip_canon,
      promote=None, family="shape", doc="Reverse the order of elements along the given axes.")


def _rot90_canon(attrs):
    return {"k": as_int(attrs["k"], "rot90", "k"), "axes": as_ints(attrs["axes"], "rot90",
                                                                     "axes")}


def _rot90_axes(nd, axes):
    if nd < 2:
        raise InvalidArgumentError(f"x must have at least 2 dimensions, got {nd}")
    if len(axes) != 2:
        raise InvalidArgumentError(f"'axes' must name exactly 2 axes, got {list(axes)}")
    a, b = norm_axis(axes[0], nd, "axes"), norm_axis(axes[1], nd, "axes")
    if a == b:
        raise InvalidArgumentError(f"'axes' {list(axes)} names the same axis twice")
    return a, b


def _rot90_infer(x, k=1, axes=(0, 1)):
    a, b = _rot90_axes(len(x.shape), axes)
    shape = list(x.shape)
    if k % 2:
        shape[a], shape[b] = shape[b], shape[a]
    return TensorType(shape, x.dtype)


def _rot90_ref(x, k=1, axes=(0, 1)):
    return np.rot90(x, k, _rot90_axes(x.ndim, axes))


defop("rot90", ("x",), {"k": 1, "axes": (0, 1)}, infer=_rot90_infer, reference=_rot90_ref,
      canon=_rot90_canon, promote=None, family="shape",
      doc="Rotate by 90 degrees k times in the plane of `axes` (from the first axis "
          "towards the second).")


def _roll_canon(attrs):
    return {"shifts": as_ints(attrs["shifts"], "roll", "shifts"),
            "axis": as_axes(attrs["axis"], "roll")}


def _roll_check(nd, shifts, axis):
    if axis is None:
        if len(shifts) != 1:
            raise InvalidArgumentError(f"without 'axis', 'shifts' must be one number, got "
                                       f"{list(shifts)}")
        return None
    if len(axis) != len(shifts):
        raise InvalidArgumentError(f"'shifts' {list(shifts)} and 'axis' {list(axis)} must have "
                                   f"the same length")
    return tuple(norm_axis(a, nd) for a in axis)


def _roll_infer(x, shifts=(), axis=None):
    _roll_check(len(x.shape), shifts, axis)
    return x


def _roll_ref(x, shifts=(), axis=None):
    axes = _roll_check(x.ndim, shifts, axis)
    if axes is None:
        return np.roll(x, shifts[0])
    return np.roll(x, shifts, axes) if axes else x.copy()


defop("roll", ("x",), {"shifts": (), "axis": None}, infer=_roll_infer, reference=_roll_ref,
      canon=_roll_canon, promote=None, family="shape",
      doc="Shift elements circularly along `axis` (over the flattened tensor when None).")


# ---------------------------------------------------------------- pad
_PAD_MODES = {"constant": "constant", "reflect": "reflect", "replicate": "edge",
              "circular": "wrap"}


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


def _pad_pairs(shape, paddings, mode):
    nd = len(shape)
    if len(paddings) != 2 * nd:
        raise InvalidArgumentError(f"'paddings' must hold 2 numbers (before, after) per axis, "
                                   f"{2 * nd} for x of shape {shp(shape)}; got {list(paddings)}")
    pairs = [(paddings[2 * i], paddings[2 * i + 1]) for i in range(nd)]
    for i, ((b, a), d) in enumerate(zip(pairs, shape)):
        if mode != "constant" and (b < 0 or a < 0):
            raise InvalidArgumentError(f"negative padding {[b, a]} on axis {i} is only allowed "
                                       f"with mode='constant'")
        if d == DYN:
            continue
        if b + a + d < 0:
            raise InvalidArgumentError(f"padding {[b, a]} removes more than the {d} elements of "
                                       f"axis {i}")
        if mode == "reflect" and (b >= d or a >= d) and (b or a):
            raise InvalidArgumentError(f"reflect padding {[b, a]} on axis {i} must be smaller "
                                       f"than its size {d}")
        if mode in ("replicate", "circular") and d == 0 and (b or a):
            raise InvalidArgumentError(f"{mode} padding needs a non-empty axis {i}")
        if mode == "circular" and (b > d or a > d):
            raise InvalidArgumentError(f"circular padding {[b, a]} on axis {i} must not exceed "
                                       f"its size {d}")
    return pairs


def _pad_infer(x, paddings=(), mode="constant", value=0.0):
    pairs = _pad_pairs(x.shape, paddings, mode)
    return TensorType([DYN if d == DYN else d + b + a for d, (b, a) in zip(x.shape, pairs)],
                      x.dtype)


def _pad_ref(x, paddings=(), mode="constant", value=0.0):
    pairs = _pad_pairs(x.shape, paddings, mode)
    crop = tuple(slice(max(-b, 0), d - max(-a, 0)) for d, (b, a) in zip(x.shape, pairs))
    if any(b < 0 or a < 0 for b, a in pairs):
        x = x[crop]
    pos = [(max(b, 0), max(a, 0)) for b, a in pairs]
    if not any(b or a for b, a in pos):
        return x.copy()
    if mode == "constant":
        out = np.full([d + b + a for d, (b, a) in zip(x.shape, pos)],
                      _pad_value(value, x.dtype), dtype=x.dtype)
        out[tuple(slice(b, b + d) for d, (b, _) in zip(x.shape, pos))] = x
        return out
    return np.pad(x, pos, mode=_PAD_MODES[mode])


def _pad_value(value, dtype):
    if dtype.kind != "c" and isinstance(value, complex):
        raise InvalidTypeError(f"a complex pad value {value} cannot fill a {dtype} tensor")
    return value


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


def _kron_ref(x, y):
    return np.kron(x, y).astype(np.result_type(x, y), copy=False)


defop("kron", ("x", "y"), infer=_kron_infer, reference=_kron_ref, family="shape",
      doc="Kronecker product (block (i, j) is x[i, j] * y).")


# ---------------------------------------------------------------- as_strided
def _as_strided_canon(attrs):
    return {"shape": as_ints(attrs["shape"], "as_strided", "shape"),
            "stride": as_ints(attrs["stride"], "as_strided", "stride"),
            "offset": as_int(attrs["offset"], "as_strided", "offset")}


def _as_strided_check(numel, shape, stride, offset):
    if len(shape) != len(stride):
        raise InvalidArgumentError(f"'shape' {list(shape)} and 'stride' {list(stride)} must "
                                   f"have the same length")
    if any(s < 0 for s in shape) or any(s < 0 for s in stride) or offset < 0:
        raise InvalidArgumentError("'shape', 'stride' and 'offset' must not be negative")
    if numel == DYN or 0 in shape:
        return
    last = offset + sum((n - 1) * s for n, s in zip(shape, stride))
    if last >= numel:
        raise InvalidArgumentError(
            f"shape {list(shape)} with stride {list(stride)} and offset {offset} reaches "
            f"element {last}, but x has only {numel} elements")


def _as_strided_infer(x, shape=(), stride=(), offset=0):
    _as_strided_check(_mul(x.shape), shape, stride, offset)
    return TensorType(shape, x.dtype)


def _as_strided_ref(x, shape=(), stride=(), offset=0):
    _as_strided_check(x.size, shape, stride, offset)
    if 0 in shape:
        return np.zeros(shape, dtype=x.dtype)
    flat = np.ascontiguousarray(x).reshape(-1)[offset:]
    it = flat.itemsize
    out = np.lib.stride_tricks.as_strided(flat, shape, [s * it for s in stride],
                                          writeable=False)
    return out.copy()


defop("as_strided", ("x",), {"shape": (), "stride": (), "offset": 0}, infer=_as_strided_infer,
      reference=_as_strided_ref, canon=_as_strided_canon, promote=None, family="shape",
      doc="A new tensor read from x's elements (in row-major order) with the given shape, "
          "strides (in elements) and offset.")


