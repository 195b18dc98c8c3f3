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


@public(method=True)
def tile(x, repeat_times, *more, name=None):
    """Repeat x along each axis; `repeat_times` is a list/tuple/1-D tensor (a shorter
    list applies to the trailing axes, a longer one adds leading axes).

    >>> import fw
    >>> fw.tile(fw.zeros([2, 3]), [2, 1]).shape
    [4, 3]
    """
    return invoke(tile_op, [x], {"repeat_times": _shape_args(repeat_times, more, "tile")})


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
