"""The Paddle-signature functions of the shape ops that the generated ones cannot express.

The ops themselves (declaration, infer, reference kernel) are in `fw.core.ops.shape`;
these wrappers are registered with `public` when the op table is loaded.
"""

from __future__ import annotations

import itertools

import numpy as np

from fw.core import dtypes as _dt
from fw.core.dispatch import grad_state, invoke
from fw.core.errors import InvalidArgumentError, InvalidTypeError, UnsupportedError
from fw.core.ir.core import Value
from fw.core.ir.types import DYN, TensorType
from fw.core.ops import dynamic_shape as _dyn
from fw.core.ops._api import public
from fw.core.ops._args import as_axes, as_int, as_ints
from fw.core.ops._infer import norm_axis, shp
from fw.core.ops._registry import OPS, defop
from fw.core.ops.creation import as_shape
from fw.core.ops.shape import _axis_canon, _expand_shape, _mul, _ndim, _swap_perm, transpose_op
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


def _shape_args(shape, more, op):
    """``reshape(x, [2, 3])`` or ``x.reshape(2, 3)`` (PyTorch style)."""
    if more:
        if len(more) == 1 and isinstance(more[0], str):  # positional name=
            return shape
        return (shape, *more)
    return shape


@public(method=True)
def reshape(x, shape, *more, name=None):
    """A tensor with x's values in a new shape.

    Args:
        x: the input tensor.
        shape: the new shape: a list/tuple of ints or 0-D tensors, or a 1-D integer
            tensor (ints may also be passed as separate arguments). ``0`` keeps
            x's dimension at that position; one ``-1`` is inferred.
    Returns:
        a tensor of the new shape (a view of x's memory when possible).

    >>> import fw
    >>> fw.reshape(fw.arange(6), [2, -1]).shape
    [2, 3]
    """
    shape = _shape_args(shape, more, "reshape")
    if _dyn.has_symbolic(shape):  # a program is being built with run-time sizes
        st, static = _dyn.shape_tensor(shape, "reshape")
        return invoke(OPS["reshape_dyn"], [x, st], {"static_shape": static})
    return invoke(reshape_op, [x], {"shape": shape})


@public(method=True)
def reshape_(x, shape, *more, name=None):
    """In-place ``reshape``: x itself takes the new shape."""
    return _swap_in("reshape_", x, reshape(x, _shape_args(shape, more, "reshape_")))


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


def _is_shape_spec(v):
    return isinstance(v, (list, tuple, Tensor, Value)) or isinstance(v, (int, np.integer))


@public(method=True)
def view(x, shape_or_dtype, *more, name=None):
    """x with a new shape (like ``reshape``) or its bytes reinterpreted as another
    dtype (``x.view("uint8")``: the last dimension scales by the element sizes).

    >>> import fw
    >>> fw.view(fw.zeros([2, 4, 6]), [8, 6]).shape
    [8, 6]
    """
    if more or (_is_shape_spec(shape_or_dtype) and not isinstance(shape_or_dtype, bool)):
        return reshape(x, _shape_args(shape_or_dtype, more, "view"))
    return invoke(view_dtype_op, [x], {"dtype": shape_or_dtype})


@public(method=True)
def view_as(x, other, name=None):
    """x viewed with the shape of `other`."""
    return reshape(x, list(other.shape))


@public(method=True)
def permute(x, *perm, name=None):
    """Permute the axes: ``permute(x, [1, 0, 2])`` or ``x.permute(1, 0, 2)``."""
    if len(perm) == 1 and isinstance(perm[0], (list, tuple, Tensor)):
        perm = perm[0]
    return invoke(transpose_op, [x], {"perm": perm})


@public(method=True)
def t(input, name=None):
    """The transpose of a matrix; 0-D and 1-D tensors are returned unchanged.

    >>> import fw
    >>> fw.t(fw.zeros([2, 3])).shape
    [3, 2]
    """
    nd = _ndim(input)
    if nd > 2:
        raise InvalidArgumentError(f"t: input must have at most 2 dimensions, got shape "
                                   f"{list(input.shape)}; use transpose(x, perm) instead")
    return invoke(transpose_op, [input], {"perm": tuple(range(nd))[::-1]})


@public(method=True)
def t_(input, name=None):
    """In-place ``t``."""
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
    """Move axes `source` to positions `destination` (ints or lists of ints).

    >>> import fw
    >>> fw.moveaxis(fw.zeros([3, 2, 1]), [0, 1], [2, 0]).shape
    [2, 1, 3]
    """
    return invoke(transpose_op, [x], {"perm": _moveaxis_perm(_ndim(x), source, destination)})


@public(method=True)
def swapaxes(x, axis0=None, axis1=None, name=None, *, perm=None):
    """Swap two axes (``swapaxes(x, 0, 2)``). As Paddle's alias of ``transpose``,
    a permutation is also accepted: ``swapaxes(x, [1, 0, 2])`` or ``perm=``."""
    if perm is None and isinstance(axis0, (list, tuple)) and axis1 is None:
        perm = axis0
    if perm is not None:
        return invoke(transpose_op, [x], {"perm": perm})
    if axis0 is None or axis1 is None:
        raise InvalidArgumentError("swapaxes: give two axes (axis0, axis1) or a permutation")
    return invoke(transpose_op, [x], {"perm": _swap_perm(_ndim(x), axis0, axis1, "swapaxes")})


@public(method=True)
def swapdims(x, dim0=None, dim1=None, name=None, *, perm=None):
    """Swap two dimensions; the same as ``swapaxes``."""
    return swapaxes(x, dim0, dim1, perm=perm)


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


@public(method=True)
def squeeze(x, axis=None, name=None):
    """Remove size-1 dimensions: all of them when axis is None, else those listed
    in `axis` (an int or list; listed axes whose size is not 1 are kept).

    >>> import fw
    >>> fw.squeeze(fw.zeros([1, 3, 1]), axis=0).shape
    [3, 1]
    """
    return invoke(squeeze_op, [x], {"axis": axis})


@public(method=True)
def squeeze_(x, axis=None, name=None):
    """In-place ``squeeze``."""
    return _swap_in("squeeze_", x, squeeze(x, axis))


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


@public(method=True)
def unsqueeze(x, axis, name=None):
    """Insert size-1 dimensions at `axis` (an int, a list of ints, or an integer
    tensor); with several axes each is relative to the shape built so far.

    >>> import fw
    >>> fw.unsqueeze(fw.zeros([5, 10]), [0, 2]).shape
    [1, 5, 1, 10]
    """
    return invoke(unsqueeze_op, [x], {"axis": axis})


@public(method=True)
def unsqueeze_(x, axis, name=None):
    """In-place ``unsqueeze``."""
    return _swap_in("unsqueeze_", x, unsqueeze(x, axis))


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


@public(method=True)
def flatten(x, start_axis=0, stop_axis=-1, name=None):
    """Merge axes ``start_axis..stop_axis`` (inclusive) into one; a 0-D tensor
    becomes shape [1].

    >>> import fw
    >>> fw.flatten(fw.zeros([2, 3, 4, 4]), start_axis=1, stop_axis=2).shape
    [2, 12, 4]
    """
    return invoke(flatten_op, [x], {"start_axis": start_axis, "stop_axis": stop_axis})


@public(method=True)
def flatten_(x, start_axis=0, stop_axis=-1, name=None):
    """In-place ``flatten``."""
    return _swap_in("flatten_", x, flatten(x, start_axis, stop_axis))


@public(method=True)
def ravel(input, name=None):
    """All of x's values as a 1-D tensor (``flatten(x)``)."""
    return invoke(flatten_op, [input], {"start_axis": 0, "stop_axis": -1})


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


def _tensor_list(x, op, arg="x"):
    if isinstance(x, (Tensor, Value)) or not isinstance(x, (list, tuple)):
        raise InvalidTypeError(f"{op}: '{arg}' must be a list or tuple of tensors, got "
                               f"{type(x).__name__}")
    return list(x)


@public(aliases=("cat",))
def concat(x, axis=0, name=None):
    """Join a list of tensors along `axis` (an int or a 1-element tensor); inputs
    are promoted to one dtype.

    >>> import fw
    >>> fw.concat([fw.zeros([2, 3]), fw.ones([2, 2])], axis=-1).shape
    [2, 5]
    """
    return invoke(concat_op, [_tensor_list(x, "concat")], {"axis": axis})


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


@public()
def stack(x, axis=0, name=None):
    """Stack tensors of one shape along a new axis `axis`.

    >>> import fw
    >>> fw.stack([fw.zeros([2]), fw.ones([2])], axis=1).shape
    [2, 2]
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
    """Stack horizontally: concat along axis 1 (axis 0 for 1-D inputs)."""
    xs = [_atleast(t, 1) for t in _tensor_list(x, "hstack")]
    return concat(xs, axis=0 if _ndim(xs[0]) == 1 else 1)


@public(aliases=("row_stack",))
def vstack(x, name=None):
    """Stack vertically: concat along axis 0 of the inputs made at least 2-D."""
    return concat([_atleast(t, 2) for t in _tensor_list(x, "vstack")], axis=0)


@public()
def dstack(x, name=None):
    """Stack along the third axis of the inputs made at least 3-D."""
    return concat([_atleast(t, 3) for t in _tensor_list(x, "dstack")], axis=2)


@public()
def column_stack(x, name=None):
    """Stack as columns: 0-D/1-D inputs become [n, 1] columns, then concat on axis 1."""
    cols = []
    for t in _tensor_list(x, "column_stack"):
        nd = _ndim(t)
        cols.append(reshape(t, [-1, 1]) if nd <= 1 else t)
    return concat(cols, axis=1)


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


@public(method=True)
def split(x, num_or_sections, axis=0, name=None):
    """Split x along `axis` into `num_or_sections` equal parts (an int) or parts of
    the listed sizes (one of them may be -1).

    Returns:
        a list of tensors (views of x).

    >>> import fw
    >>> [t.shape for t in fw.split(fw.zeros([3, 9]), [2, 3, -1], axis=1)]
    [[3, 2], [3, 3], [3, 4]]
    """
    return list(invoke(split_op, [x], {"num_or_sections": num_or_sections, "axis": axis}))


@public(method=True)
def chunk(x, chunks, axis=0, name=None):
    """Split x into `chunks` equal parts along `axis`."""
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
    """Split into `num_or_indices` nearly equal parts (the first ``size % n`` parts get
    one more element), or at the listed indices.

    >>> import fw
    >>> [t.shape for t in fw.tensor_split(fw.zeros([8]), 3)]
    [[3], [3], [2]]
    """
    nd = _ndim(x)
    if nd == 0:
        raise InvalidArgumentError("tensor_split: x must have at least one dimension")
    a = norm_axis(as_int(axis, "tensor_split", "axis"), nd)
    secs = _tensor_split_sections(x.shape[a], num_or_indices, "tensor_split")
    if len(secs) == 1 and secs[0] == -1:
        return [split(x, 1, a)[0]]
    return split(x, secs, a)


def _dir_split(op, min_nd, axis_of):
    def f(x, num_or_indices, name=None):
        nd = _ndim(x)
        if nd < min_nd:
            raise InvalidArgumentError(f"{op}: x must have at least {min_nd} dimensions, got "
                                       f"shape {list(x.shape)}")
        return tensor_split(x, num_or_indices, axis_of(nd))

    f.__name__ = f.__qualname__ = op
    f.__doc__ = f"``tensor_split`` along the axis ``{op}`` names."
    return public(op, method=True)(f)


hsplit = _dir_split("hsplit", 1, lambda nd: 0 if nd == 1 else 1)


vsplit = _dir_split("vsplit", 2, lambda nd: 0)


dsplit = _dir_split("dsplit", 3, lambda nd: 2)


@public(method=True)
def unbind(input, axis=0, name=None):
    """The slices of `input` along `axis` as a list of tensors without that axis.

    >>> import fw
    >>> len(fw.unbind(fw.zeros([3, 4]), axis=1))
    4
    """
    return list(invoke(OPS["unbind"], [input], {"axis": axis}))


@public(method=True)
def unstack(x, axis=0, num=None, name=None):
    """The slices of x along `axis` (like ``unbind``); `num`, if given, must equal
    the size of that axis."""
    outs = unbind(x, axis)
    if num is not None and as_int(num, "unstack", "num") != len(outs):
        raise InvalidArgumentError(f"unstack: 'num' is {num} but axis {axis} of x has size "
                                   f"{len(outs)}")
    return outs


def _expand_canon(attrs):
    return {"shape": as_shape(attrs["shape"], "expand")}


def _expand_infer(x, shape=()):
    return TensorType(_expand_shape(x.shape, shape), x.dtype)


def _expand_ref(x, shape=()):
    return np.broadcast_to(x, _expand_shape(x.shape, shape)).copy()


expand_op = defop("expand", ("x",), {"shape": ()}, infer=_expand_infer, reference=_expand_ref,
                  canon=_expand_canon, promote=None, family="shape", api=False, method=False,
                  doc="Broadcast x to `shape` (-1 keeps a dimension).")


@public(method=True)
def expand(x, shape, *more, name=None):
    """Broadcast x to `shape` (a list, tuple or 1-D integer tensor; -1 keeps x's
    dimension). The result is a new tensor.

    >>> import fw
    >>> fw.expand(fw.zeros([1, 3]), [2, -1]).shape
    [2, 3]
    """
    shape = _shape_args(shape, more, "expand")
    if _dyn.has_symbolic(shape):  # a program is being built with run-time sizes
        st, static = _dyn.shape_tensor(shape, "expand", _dyn.RUNTIME)
        return invoke(OPS["expand_dyn"], [x, st], {"static_shape": static})
    return invoke(expand_op, [x], {"shape": shape})


@public(method=True)
def broadcast_to(x, shape, name=None):
    """Broadcast x to `shape` (the same as ``expand``)."""
    return invoke(expand_op, [x], {"shape": shape})


@public()
def broadcast_tensors(input, name=None):
    """The tensors of `input` broadcast to their common shape (a list).

    >>> import fw
    >>> [t.shape for t in fw.broadcast_tensors([fw.zeros([2, 1]), fw.zeros([3])])]
    [[2, 3], [2, 3]]
    """
    return list(invoke(OPS["broadcast_tensors"], [_tensor_list(input, "broadcast_tensors",
                                                                "input")], {}))


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


@public(method=True)
def tile(x, repeat_times, *more, name=None):
    """Repeat x along each axis; `repeat_times` is a list/tuple/1-D tensor (a shorter
    list applies to the trailing axes, a longer one adds leading axes).

    >>> import fw
    >>> fw.tile(fw.zeros([2, 3]), [2, 1]).shape
    [4, 3]
    """
    return invoke(tile_op, [x], {"repeat_times": _shape_args(repeat_times, more, "tile")})


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


@public(method=True)
def repeat_interleave(x, repeats, axis=None, name=None):
    """Repeat each element of x `repeats` times along `axis` (x is flattened when
    axis is None); `repeats` is an int or an integer tensor with one count per element.

    >>> import fw
    >>> fw.repeat_interleave(fw.to_tensor([1, 2]), 2).tolist()
    [1, 1, 2, 2]
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
    """The block of x of size `shape` starting at `offsets` (default 0s). `shape`
    defaults to x's shape; -1 in it means "to the end of that axis".

    >>> import fw
    >>> fw.crop(fw.arange(9).reshape([3, 3]), [2, 2], [0, 1]).tolist()
    [[1, 2], [4, 5]]
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
    """The Cartesian product of 1-D tensors: a [prod(n_i), len(x)] tensor (a single
    tensor is returned as it is).

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
