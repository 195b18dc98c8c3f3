"""Unary ops on sparse tensors: elementwise functions of the stored values (the
pattern is kept, as Paddle's sparse kernels do: only zero-preserving functions are
offered), casts, coalesce, sum, reshape, transpose and slice."""

from __future__ import annotations

import numpy as np

import fw
from fw.sparse._util import (
    check_sparse,
    gather_rows,
    index_tensor,
    like,
    linear,
    scatter_rows,
    to_coo,
    unravel,
)
from fw.sparse.tensor import SparseCooTensor, SparseCsrTensor

__all__ = ["abs", "asin", "asinh", "atan", "atanh", "cast", "coalesce", "deg2rad", "expm1",
           "isnan", "log1p", "neg", "pow", "rad2deg", "reshape", "sin", "sinh", "slice", "sqrt",
           "square", "sum", "tan", "tanh", "transpose"]


def _elementwise(name: str, fn, desc: str):
    def op(x, name=None):
        check_sparse(x, name_)
        return x._with_values(fn(x.values()))

    name_ = name
    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"""{desc} of each stored value of a sparse tensor (the pattern is kept).

    Args:
        x (SparseCooTensor|SparseCsrTensor): the input.
        name (str, optional): unused, for Paddle compatibility.

    Returns:
        SparseCooTensor|SparseCsrTensor: same format, indices and shape as `x`.

    Examples:
        >>> import fw
        >>> x = fw.sparse.sparse_coo_tensor([[0, 1]], [0.25, 0.5], [3])
        >>> y = fw.sparse.{name}(x)
        >>> y.indices().numpy().tolist()
        [[0, 1]]
    """
    return op


abs = _elementwise("abs", fw.abs, "The absolute value")
sin = _elementwise("sin", fw.sin, "The sine")
tan = _elementwise("tan", fw.tan, "The tangent")
asin = _elementwise("asin", fw.asin, "The arcsine")
atan = _elementwise("atan", fw.atan, "The arctangent")
sinh = _elementwise("sinh", fw.sinh, "The hyperbolic sine")
tanh = _elementwise("tanh", fw.tanh, "The hyperbolic tangent")
asinh = _elementwise("asinh", fw.asinh, "The inverse hyperbolic sine")
atanh = _elementwise("atanh", fw.atanh, "The inverse hyperbolic tangent")
sqrt = _elementwise("sqrt", fw.sqrt, "The square root")
square = _elementwise("square", fw.square, "The square")
log1p = _elementwise("log1p", fw.log1p, "log(1 + x)")
expm1 = _elementwise("expm1", fw.expm1, "exp(x) - 1")
deg2rad = _elementwise("deg2rad", fw.deg2rad, "Degrees to radians")
rad2deg = _elementwise("rad2deg", fw.rad2deg, "Radians to degrees")
neg = _elementwise("neg", fw.neg, "The negation")


def isnan(x, name=None):
    """Whether each stored value is NaN (bool values, same pattern).

    Args:
        x (SparseCooTensor|SparseCsrTensor): the input.
        name (str, optional): unused.

    Returns:
        SparseCooTensor|SparseCsrTensor: bool values, same format and indices.

    Examples:
        >>> import fw
        >>> x = fw.sparse.sparse_coo_tensor([[0, 2]], [1.0, float("nan")], [3])
        >>> fw.sparse.isnan(x).values().numpy().tolist()
        [False, True]
    """
    check_sparse(x, "isnan")
    return x._with_values(fw.isnan(x.values()))


def pow(x, factor, name=None):
    """Each stored value raised to `factor`.

    Args:
        x (SparseCooTensor|SparseCsrTensor): the input.
        factor (float|int): the exponent.
        name (str, optional): unused.

    Returns:
        SparseCooTensor|SparseCsrTensor: same format and indices as `x`.

    Examples:
        >>> import fw
        >>> x = fw.sparse.sparse_coo_tensor([[0, 2]], [2.0, 3.0], [3])
        >>> fw.sparse.pow(x, 2).values().numpy().tolist()
        [4.0, 9.0]
    """
    check_sparse(x, "pow")
    if not isinstance(factor, (int, float)):
        raise TypeError(f"fw.sparse.pow(): `factor` must be a Python number, got "
                        f"{type(factor).__name__}")
    return x._with_values(fw.pow(x.values(), factor))


def cast(x, index_dtype=None, value_dtype=None, name=None):
    """Cast the indices (COO indices, CSR crows/cols) and/or the values.

    Args:
        x (SparseCooTensor|SparseCsrTensor): the input.
        index_dtype (str|fw.dtype, optional): integer dtype of the indices. Default: kept.
        value_dtype (str|fw.dtype, optional): dtype of the values. Default: kept.
        name (str, optional): unused.

    Returns:
        SparseCooTensor|SparseCsrTensor: the cast tensor.

    Examples:
        >>> import fw
        >>> x = fw.sparse.sparse_coo_tensor([[0, 2]], [2.0, 3.0], [3])
        >>> y = fw.sparse.cast(x, "int32", "float64")
        >>> str(y.indices().dtype), str(y.values().dtype)
        ('fw.int32', 'fw.float64')
    """
    check_sparse(x, "cast")
    v = x.values() if value_dtype is None else x.values().astype(value_dtype)
    if isinstance(x, SparseCooTensor):
        ind = x.indices() if index_dtype is None else x.indices().astype(index_dtype)
        return SparseCooTensor(ind, v, x.shape, x.is_coalesced())
    cr, co = x.crows(), x.cols()
    if index_dtype is not None:
        cr, co = cr.astype(index_dtype), co.astype(index_dtype)
    return SparseCsrTensor(cr, co, v, x.shape)


def coalesce(x, name=None):
    """Sort the COO indices (row-major) and add up the values of duplicate indices.

    Args:
        x (SparseCooTensor): the input.
        name (str, optional): unused.

    Returns:
        SparseCooTensor: the coalesced tensor (differentiable w.r.t. the values).

    Examples:
        >>> import fw
        >>> x = fw.sparse.sparse_coo_tensor([[1, 0, 1], [0, 0, 0]], [1.0, 2.0, 3.0], [2, 2])
        >>> y = fw.sparse.coalesce(x)
        >>> y.indices().numpy().tolist(), y.values().numpy().tolist()
        ([[0, 1], [0, 0]], [2.0, 4.0])
    """
    check_sparse(x, "coalesce")
    if isinstance(x, SparseCsrTensor):
        return x
    if x.is_coalesced():
        return x
    sd = x.sparse_dim()
    lin = linear(x.indices().numpy(), x.shape[:sd])
    uniq, inv = np.unique(lin, return_inverse=True)
    if uniq.size == lin.size and np.all(np.diff(lin) > 0):
        return SparseCooTensor(x.indices(), x.values(), x.shape, coalesced=True)
    values = scatter_rows(x.values(), inv.reshape(-1), uniq.size)
    return SparseCooTensor(index_tensor(unravel(uniq, x.shape[:sd])), values, x.shape,
                           coalesced=True)


def _axes(axis, ndim, fn):
    axes = [axis] if isinstance(axis, int) else list(axis)
    out = []
    for a in axes:
        if not -ndim <= a < ndim:
            raise ValueError(f"fw.sparse.{fn}(): axis {a} is out of range for a {ndim}-D tensor")
        out.append(a % ndim)
    return sorted(set(out))


def sum(x, axis=None, dtype=None, keepdim=False, name=None):
    """Sum of the elements of a sparse tensor, over all or some axes.

    The result is sparse: with ``axis=None`` a one-element tensor (shape ``[1]``, or all
    ones with `keepdim`); a CSR input supports only ``axis=None`` or ``-1`` (as Paddle).

    Args:
        x (SparseCooTensor|SparseCsrTensor): the input.
        axis (int|list|None, optional): the axes to reduce. Default None (all).
        dtype (str|fw.dtype, optional): the result's dtype. Default: the input's.
        keepdim (bool, optional): keep reduced axes with size 1. Default False.
        name (str, optional): unused.

    Returns:
        SparseCooTensor|SparseCsrTensor: the sum, in the input's format.

    Examples:
        >>> import fw
        >>> x = fw.sparse.sparse_coo_tensor([[0, 1, 1], [2, 0, 2]], [1.0, 2.0, 3.0], [2, 3])
        >>> fw.sparse.sum(x, axis=1).to_dense().numpy().tolist()
        [1.0, 5.0]
    """
    check_sparse(x, "sum")
    v = x.values() if dtype is None else x.values().astype(dtype)
    if isinstance(x, SparseCsrTensor):
        if isinstance(axis, (list, tuple)) and len(axis) == 1:
            axis = axis[0]
        if axis is not None and axis not in (-1, x.ndim - 1):
            raise ValueError(f"fw.sparse.sum(): a CSR tensor sums over axis None or -1 only, "
                             f"got axis={axis}")
        if axis is None:
            total = fw.reshape(fw.sum(v), [1])
            shape = [1] * x.ndim
            crows = np.array([0, 1], np.int64)  # one batch of one row either way
            return SparseCsrTensor(index_tensor(crows), index_tensor(np.zeros(1)), total, shape)
        coo = sum(x.to_sparse_coo().astype(v.dtype), axis=-1, keepdim=True)
        return coo.to_sparse_csr()
    ndim, sd = x.ndim, x.sparse_dim()
    if axis is None:
        total = fw.reshape(fw.sum(v), [1])
        shape = [1] * ndim if keepdim else [1]
        return SparseCooTensor(index_tensor(np.zeros((len(shape), 1))), total, shape, True)
    axes = _axes(axis, ndim, "sum")
    dense_axes = [a - sd + 1 for a in axes if a >= sd]
    if dense_axes:
        v = fw.sum(v, axis=dense_axes, keepdim=keepdim)
    sparse_axes = [a for a in axes if a < sd]
    idx = x.indices().numpy()
    keep = [d for d in range(sd) if d not in sparse_axes]
    if keepdim:
        new_idx = idx.copy()
        new_idx[sparse_axes] = 0
        new_sparse_shape = [1 if d in sparse_axes else x.shape[d] for d in range(sd)]
    else:
        new_idx = idx[keep]
        new_sparse_shape = [x.shape[d] for d in keep]
    dense_shape = list(v.shape[1:])
    if not new_sparse_shape:  # every sparse axis reduced: one stored entry
        v = fw.sum(v, axis=0, keepdim=True)
        new_idx = np.zeros((1, 1), np.int64)
        new_sparse_shape = [1]
        return SparseCooTensor(index_tensor(new_idx), v, new_sparse_shape + dense_shape, True)
    out = SparseCooTensor(index_tensor(new_idx), v, new_sparse_shape + dense_shape)
    return coalesce(out) if sparse_axes else out


def _resolve_shape(shape, old, fn):
    shape = [int(s) for s in (shape.tolist() if isinstance(shape, fw.Tensor) else shape)]
    shape = [old[i] if s == 0 and i < len(old) else s for i, s in enumerate(shape)]
    numel = int(np.prod(old))
    if shape.count(-1) > 1:
        raise ValueError(f"fw.sparse.{fn}(): at most one -1 in shape {shape}")
    if -1 in shape:
        rest = int(np.prod([s for s in shape if s != -1]))
        if rest == 0 or numel % rest:
            raise ValueError(f"fw.sparse.{fn}(): cannot reshape {old} to {shape}")
        shape[shape.index(-1)] = numel // rest
    if int(np.prod(shape)) != numel:
        raise ValueError(f"fw.sparse.{fn}(): cannot reshape a tensor of shape {old} "
                         f"({numel} elements) to {shape}")
    return shape


def reshape(x, shape, name=None):
    """Reshape a sparse tensor (its sparse dims; dense dims of a hybrid COO are kept).

    Args:
        x (SparseCooTensor|SparseCsrTensor): the input.
        shape (list|tuple|Tensor): the new shape; one entry may be -1, 0 copies the
            input's size.
        name (str, optional): unused.

    Returns:
        SparseCooTensor|SparseCsrTensor: the reshaped tensor, in the input's format
        (a CSR result must be 2-D or 3-D).

    Examples:
        >>> import fw
        >>> x = fw.sparse.sparse_coo_tensor([[0, 1, 1], [2, 0, 2]], [1.0, 2.0, 3.0], [2, 3])
        >>> fw.sparse.reshape(x, [3, 2]).indices().numpy().tolist()
        [[1, 1, 2], [0, 1, 1]]
    """
    check_sparse(x, "reshape")
    coo = to_coo(x)
    sd = coo.sparse_dim()
    dense = coo.shape[sd:]
    new = _resolve_shape(shape, coo.shape[:sd] if dense else coo.shape, "reshape") \
        if not dense else None
    if dense:
        full = _resolve_shape(shape, coo.shape, "reshape")
        if full[len(full) - len(dense):] != dense:
            raise ValueError(f"fw.sparse.reshape(): a hybrid COO keeps its dense dims {dense}; "
                             f"got shape {full}")
        new = full[:len(full) - len(dense)]
    lin = linear(coo.indices().numpy(), coo.shape[:sd])
    out = SparseCooTensor(index_tensor(unravel(lin, new)), coo.values(), new + dense,
                          coo.is_coalesced())
    if isinstance(x, SparseCsrTensor) and len(new) not in (2, 3):
        raise ValueError(f"fw.sparse.reshape(): a CSR result must be 2-D or 3-D, got {new}")
    return like(x, out)


def transpose(x, perm, name=None):
    """Permute the axes of a sparse tensor.

    Args:
        x (SparseCooTensor|SparseCsrTensor): the input.
        perm (list|tuple): the permutation of the axes.
        name (str, optional): unused.

    Returns:
        SparseCooTensor|SparseCsrTensor: in the input's format (COO indices are permuted
        as stored, not re-sorted, as Paddle does).

    Examples:
        >>> import fw
        >>> x = fw.sparse.sparse_coo_tensor([[0, 1, 1], [2, 0, 2]], [1.0, 2.0, 3.0], [2, 3])
        >>> fw.sparse.transpose(x, [1, 0]).indices().numpy().tolist()
        [[2, 0, 2], [0, 1, 1]]
    """
    check_sparse(x, "transpose")
    perm = [int(p) for p in perm]
    if sorted(p % x.ndim for p in perm) != list(range(x.ndim)) or len(perm) != x.ndim:
        raise ValueError(f"fw.sparse.transpose(): perm {perm} is not a permutation of the "
                         f"{x.ndim} axes of shape {x.shape}")
    perm = [p % x.ndim for p in perm]
    coo = to_coo(x)
    sd = coo.sparse_dim()
    if perm[sd:] != list(range(sd, x.ndim)):
        raise ValueError(f"fw.sparse.transpose(): a hybrid COO can only permute its "
                         f"{sd} sparse axes, got perm {perm}")
    idx = coo.indices().numpy()[perm[:sd]]
    out = SparseCooTensor(index_tensor(idx), coo.values(), [x.shape[p] for p in perm])
    return like(x, out)


def slice(x, axes, starts, ends, name=None):
    """The part of a sparse tensor with ``starts[i] <= index < ends[i]`` on ``axes[i]``.

    Args:
        x (SparseCooTensor|SparseCsrTensor): the input.
        axes (list|tuple|Tensor): the axes to slice.
        starts (list|tuple|Tensor): the start of each slice (negative counts from the end).
        ends (list|tuple|Tensor): the (exclusive) end of each slice.
        name (str, optional): unused.

    Returns:
        SparseCooTensor|SparseCsrTensor: the slice, in the input's format.

    Examples:
        >>> import fw
        >>> x = fw.sparse.sparse_coo_tensor([[0, 1, 1], [2, 0, 2]], [1.0, 2.0, 3.0], [2, 3])
        >>> y = fw.sparse.slice(x, [1], [1], [3])
        >>> y.shape, y.values().numpy().tolist()
        ([2, 2], [1.0, 3.0])
    """
    check_sparse(x, "slice")

    def ints(a):
        return [int(v) for v in (a.tolist() if isinstance(a, fw.Tensor) else a)]

    axes, starts, ends = ints(axes), ints(starts), ints(ends)
    if not len(axes) == len(starts) == len(ends):
        raise ValueError(f"fw.sparse.slice(): axes, starts and ends must have the same length, "
                         f"got {len(axes)}, {len(starts)}, {len(ends)}")
    coo = to_coo(x)
    sd = coo.sparse_dim()
    idx = coo.indices().numpy().copy()
    shape = coo.shape
    keep = np.ones(idx.shape[1], bool)
    for a, s, e in zip(axes, starts, ends):
        if not -x.ndim <= a < sd:
            raise ValueError(f"fw.sparse.slice(): axis {a} is not a sparse axis of shape {shape}")
        a %= x.ndim
        n = shape[a]
        s = min(max(s + n if s < 0 else s, 0), n)
        e = min(max(e + n if e < 0 else e, 0), n)
        e = max(e, s)
        keep &= (idx[a] >= s) & (idx[a] < e)
        idx[a] -= s
        shape[a] = e - s
    rows = np.nonzero(keep)[0]
    out = SparseCooTensor(index_tensor(idx[:, rows]), gather_rows(coo.values(), rows), shape,
                          coo.is_coalesced())
    return like(x, out)
