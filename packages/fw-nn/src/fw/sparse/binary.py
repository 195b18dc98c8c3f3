"""Binary ops on sparse tensors: elementwise add/subtract/multiply/divide of two
sparse tensors of one shape and format, and the products (matmul, mv, addmm,
masked_matmul) with their gradients w.r.t. the values and the dense operands."""

from __future__ import annotations

import numpy as np

import fw
from fw.sparse._util import (
    SPARSE,
    check_dense,
    check_sparse,
    gather_rows,
    index_tensor,
    like,
    linear,
    scatter_rows,
    to_coo,
    unravel,
)
from fw.sparse.tensor import SparseCooTensor

__all__ = ["add", "addmm", "divide", "is_same_shape", "mask_as", "masked_matmul", "matmul",
           "multiply", "mv", "subtract"]


def _pair(x, y, fn):
    check_sparse(x, fn, "x")
    check_sparse(y, fn, "y")
    if type(x) is not type(y):
        raise TypeError(f"fw.sparse.{fn}(): x and y must have the same sparse format, got "
                        f"{x._format} and {y._format}")
    if x.shape != y.shape:
        raise ValueError(f"fw.sparse.{fn}(): x and y must have the same shape, got {x.shape} "
                         f"and {y.shape}")
    if x.dtype != y.dtype:
        raise TypeError(f"fw.sparse.{fn}(): x and y must have the same dtype, got {x.dtype} "
                        f"and {y.dtype}")


def _on_union(x, y, op, full: bool):
    """op(x, y) on the union of both patterns (on every position if `full`: 0/0 is not
    zero), as Paddle's elementwise kernels; the result is coalesced."""
    cx, cy = to_coo(x).coalesce(), to_coo(y).coalesce()
    sd = cx.sparse_dim()
    if cy.sparse_dim() != sd:
        raise ValueError(f"x and y must have the same sparse_dim, got {sd} and "
                         f"{cy.sparse_dim()}")
    dims = cx.shape[:sd]
    lx, ly = linear(cx.indices().numpy(), dims), linear(cy.indices().numpy(), dims)
    union = np.arange(int(np.prod(dims)), dtype=np.int64) if full else np.union1d(lx, ly)
    vx = scatter_rows(cx.values(), np.searchsorted(union, lx), union.size)
    vy = scatter_rows(cy.values(), np.searchsorted(union, ly), union.size)
    out = SparseCooTensor(index_tensor(unravel(union, dims)), op(vx, vy), cx.shape, True)
    return like(x, out)


def _binary(name, op, full, sym):
    def fn(x, y, name=None):
        _pair(x, y, name_)
        return _on_union(x, y, op, full)

    name_ = name
    fn.__name__ = fn.__qualname__ = name
    where = " (every position for divide, since 0/0 is NaN)" if full else ""
    fn.__doc__ = f"""Elementwise ``x {sym} y`` of two sparse tensors of one shape, format and dtype.

    The result holds the union of both patterns{where}, coalesced, as Paddle's
    sparse kernels do.

    Args:
        x (SparseCooTensor|SparseCsrTensor): the first operand.
        y (SparseCooTensor|SparseCsrTensor): the second operand.
        name (str, optional): unused.

    Returns:
        SparseCooTensor|SparseCsrTensor: the result, in x's format.

    Examples:
        >>> import fw
        >>> x = fw.sparse.sparse_coo_tensor([[0, 1]], [1.0, 2.0], [3])
        >>> y = fw.sparse.sparse_coo_tensor([[1, 2]], [4.0, 5.0], [3])
        >>> fw.sparse.{name}(x, y).to_dense().shape
        [3]
    """
    return fn


add = _binary("add", lambda a, b: a + b, False, "+")
subtract = _binary("subtract", lambda a, b: a - b, False, "-")
multiply = _binary("multiply", lambda a, b: a * b, False, "*")
divide = _binary("divide", lambda a, b: a / b, True, "/")


def is_same_shape(x, y):
    """Whether two tensors (sparse or dense) have the same shape.

    Args:
        x (Tensor|SparseCooTensor|SparseCsrTensor): the first tensor.
        y (Tensor|SparseCooTensor|SparseCsrTensor): the second tensor.

    Returns:
        bool: True if the shapes are equal.

    Examples:
        >>> import fw
        >>> x = fw.sparse.sparse_coo_tensor([[0, 1]], [1.0, 2.0], [3])
        >>> fw.sparse.is_same_shape(x, fw.ones([3]))
        True
    """
    for a, arg in ((x, "x"), (y, "y")):
        if not isinstance(a, (fw.Tensor, *SPARSE)):
            raise TypeError(f"fw.sparse.is_same_shape(): `{arg}` must be a tensor, got "
                            f"{type(a).__name__}")
    return list(x.shape) == list(y.shape)


def _sparse_dense(x, y, fn):
    coo = to_coo(x)
    check_dense(y, fn, "y")
    if coo.ndim != y.ndim or coo.shape[:-2] != list(y.shape[:-2]) \
            or coo.shape[-1] != y.shape[-2]:
        raise ValueError(f"fw.sparse.{fn}(): cannot multiply x of shape {coo.shape} by y of "
                         f"shape {list(y.shape)}")
    if coo.dtype != y.dtype:
        raise TypeError(f"fw.sparse.{fn}(): x and y must have the same dtype, got {coo.dtype} "
                        f"and {y.dtype}")
    idx = coo.indices().numpy()
    m, k, n = coo.shape[-2], coo.shape[-1], y.shape[-1]
    if coo.ndim == 2:
        rows, ycols, nb = idx[0], idx[1], 1
    else:
        nb = coo.shape[0]
        rows, ycols = idx[0] * m + idx[1], idx[0] * k + idx[2]
    y2 = fw.reshape(y, [nb * k, n])
    prod = fw.unsqueeze(coo.values(), -1) * gather_rows(y2, ycols)
    out = scatter_rows(prod, rows, nb * m)
    return fw.reshape(out, list(y.shape[:-2]) + [m, n])


def _pattern_product(x, y):
    """The structural nonzeros of x @ y (both sparse) as flat positions in the result."""
    cx, cy = to_coo(x), to_coo(y)
    px = np.zeros(cx.shape, np.float64)
    py = np.zeros(cy.shape, np.float64)
    px[tuple(cx.indices().numpy())] = 1
    py[tuple(cy.indices().numpy())] = 1
    return np.flatnonzero(np.matmul(px, py) > 0)


def matmul(x, y, name=None):
    """Matrix product with a sparse left operand (2-D, or 3-D batched).

    ``sparse @ dense`` gives a dense tensor; ``sparse @ sparse`` gives a sparse tensor of
    x's format holding the structural nonzeros of the product. Gradients flow to the
    values of x and to y. (Paddle 3.3 runs these on GPU only; fw runs them on any device.)

    Args:
        x (SparseCooTensor|SparseCsrTensor): the left operand, ``[M, K]`` or ``[B, M, K]``.
        y (Tensor|SparseCooTensor|SparseCsrTensor): the right operand, ``[K, N]`` or
            ``[B, K, N]``.
        name (str, optional): unused.

    Returns:
        Tensor|SparseCooTensor|SparseCsrTensor: the product.

    Examples:
        >>> import fw
        >>> x = fw.sparse.sparse_coo_tensor([[0, 1], [1, 0]], [2.0, 3.0], [2, 2])
        >>> fw.sparse.matmul(x, fw.ones([2, 1])).numpy().tolist()
        [[2.0], [3.0]]
    """
    check_sparse(x, "matmul", "x")
    if not isinstance(y, SPARSE):
        return _sparse_dense(x, y, "matmul")
    if y.ndim != x.ndim or x.shape[:-2] != y.shape[:-2] or x.shape[-1] != y.shape[-2]:
        raise ValueError(f"fw.sparse.matmul(): cannot multiply x of shape {x.shape} by y of "
                         f"shape {y.shape}")
    # sparse @ sparse: the product of the dense forms, kept on the structural pattern
    # (memory grows with the dense size: fine for the moderate shapes this targets)
    dense = fw.matmul(x.to_dense(), y.to_dense())
    shape = x.shape[:-1] + [y.shape[-1]]
    pos = _pattern_product(x, y)
    vals = gather_rows(fw.reshape(dense, [-1]), pos)
    out = SparseCooTensor(index_tensor(unravel(pos, shape)), vals, shape, True)
    return like(x, out)


def mv(x, vec, name=None):
    """Sparse matrix times dense vector.

    Args:
        x (SparseCooTensor|SparseCsrTensor): a 2-D sparse matrix ``[M, N]``.
        vec (Tensor): a dense vector ``[N]``.
        name (str, optional): unused.

    Returns:
        Tensor: the dense ``[M]`` product.

    Examples:
        >>> import fw
        >>> x = fw.sparse.sparse_csr_tensor([0, 1, 2], [1, 0], [2.0, 3.0], [2, 2])
        >>> fw.sparse.mv(x, fw.to_tensor([1.0, 10.0])).numpy().tolist()
        [20.0, 3.0]
    """
    check_sparse(x, "mv", "x")
    check_dense(vec, "mv", "vec")
    if x.ndim != 2 or vec.ndim != 1 or x.shape[1] != vec.shape[0]:
        raise ValueError(f"fw.sparse.mv(): needs x [M, N] and vec [N], got {x.shape} and "
                         f"{list(vec.shape)}")
    return fw.squeeze(_sparse_dense(x, fw.unsqueeze(vec, -1), "mv"), -1)


def addmm(input, x, y, beta=1.0, alpha=1.0, name=None):
    """``beta * input + alpha * (x @ y)`` with a sparse x.

    Args:
        input (Tensor|SparseCooTensor|SparseCsrTensor): added term; dense when y is dense,
            sparse (x's format) when y is sparse.
        x (SparseCooTensor|SparseCsrTensor): the sparse left factor.
        y (Tensor|SparseCooTensor|SparseCsrTensor): the right factor.
        beta (float, optional): scale of input. Default 1.0.
        alpha (float, optional): scale of the product. Default 1.0.
        name (str, optional): unused.

    Returns:
        Tensor|SparseCooTensor|SparseCsrTensor: dense when y is dense, else sparse.

    Examples:
        >>> import fw
        >>> x = fw.sparse.sparse_coo_tensor([[0, 1], [1, 0]], [2.0, 3.0], [2, 2])
        >>> fw.sparse.addmm(fw.ones([2, 1]), x, fw.ones([2, 1]), 2.0, 1.0).numpy().tolist()
        [[4.0], [5.0]]
    """
    prod = matmul(x, y)
    if isinstance(prod, fw.Tensor):
        check_dense(input, "addmm", "input")
        if list(input.shape) != list(prod.shape):
            raise ValueError(f"fw.sparse.addmm(): input shape {list(input.shape)} must equal "
                             f"the product's shape {list(prod.shape)}")
        return input * beta + prod * alpha
    check_sparse(input, "addmm", "input")
    return add(input._with_values(input.values() * beta),
               prod._with_values(prod.values() * alpha))


def masked_matmul(x, y, mask, name=None):
    """The dense product ``x @ y`` computed only at the stored positions of `mask`.

    Args:
        x (Tensor): dense ``[M, K]`` or ``[B, M, K]``.
        y (Tensor): dense ``[K, N]`` or ``[B, K, N]``.
        mask (SparseCooTensor|SparseCsrTensor): the pattern, ``[M, N]`` or ``[B, M, N]``.
        name (str, optional): unused.

    Returns:
        SparseCooTensor|SparseCsrTensor: mask's format and pattern, values from x @ y;
        gradients flow to x and y.

    Examples:
        >>> import fw
        >>> mask = fw.sparse.sparse_csr_tensor([0, 1, 1], [1], [1.0], [2, 2])
        >>> x = fw.to_tensor([[1.0, 2.0], [3.0, 4.0]])
        >>> fw.sparse.masked_matmul(x, x, mask).values().numpy().tolist()
        [10.0]
    """
    check_dense(x, "masked_matmul", "x")
    check_dense(y, "masked_matmul", "y")
    check_sparse(mask, "masked_matmul", "mask")
    if x.ndim != y.ndim or x.ndim != mask.ndim or x.ndim not in (2, 3) \
            or x.shape[-1] != y.shape[-2] or list(x.shape[:-2]) != list(y.shape[:-2]) \
            or mask.shape != list(x.shape[:-1]) + [y.shape[-1]]:
        raise ValueError(f"fw.sparse.masked_matmul(): shapes x {list(x.shape)}, y "
                         f"{list(y.shape)} and mask {mask.shape} do not fit x @ y = mask")
    coo = to_coo(mask)
    idx = coo.indices().numpy()
    m, k, n = x.shape[-2], x.shape[-1], y.shape[-1]
    if x.ndim == 2:
        rows, cols, nb = idx[0], idx[1], 1
    else:
        nb = x.shape[0]
        rows, cols = idx[0] * m + idx[1], idx[0] * n + idx[2]
    xr = gather_rows(fw.reshape(x, [nb * m, k]), rows)
    yt = fw.reshape(fw.transpose(y, [0, 2, 1] if y.ndim == 3 else [1, 0]), [nb * n, k])
    vals = fw.sum(xr * gather_rows(yt, cols), axis=-1)
    return mask._with_values(vals)


def mask_as(x, mask, name=None):
    """The entries of dense `x` at the stored positions of `mask`.

    Args:
        x (Tensor): dense, of mask's shape.
        mask (SparseCooTensor|SparseCsrTensor): the pattern.
        name (str, optional): unused.

    Returns:
        SparseCooTensor|SparseCsrTensor: mask's format and pattern, x's values
        (differentiable w.r.t. x).

    Examples:
        >>> import fw
        >>> mask = fw.sparse.sparse_coo_tensor([[0, 1], [2, 0]], [1.0, 1.0], [2, 3])
        >>> x = fw.arange(6, dtype="float32").reshape([2, 3])
        >>> fw.sparse.mask_as(x, mask).values().numpy().tolist()
        [2.0, 3.0]
    """
    check_dense(x, "mask_as", "x")
    check_sparse(mask, "mask_as", "mask")
    if list(x.shape) != mask.shape:
        raise ValueError(f"fw.sparse.mask_as(): x shape {list(x.shape)} must equal mask "
                         f"shape {mask.shape}")
    coo = to_coo(mask)
    sd = coo.sparse_dim()
    flat = fw.reshape(x, [int(np.prod(mask.shape[:sd]))] + mask.shape[sd:])
    vals = gather_rows(flat, linear(coo.indices().numpy(), mask.shape[:sd]))
    return mask._with_values(vals)
