"""The Paddle-signature functions of the linalg ops that the generated ones cannot express.

The ops themselves (declaration, infer, reference kernel) are in `fw.core.ops.linalg`;
these wrappers are registered with `public` when the op table is loaded.
"""

from __future__ import annotations

import numpy as np

from fw.core.dispatch import invoke
from fw.core.errors import InvalidArgumentError, InvalidTypeError
from fw.core.ir.core import Value
from fw.core.ir.types import DYN
from fw.core.ops._api import call, public
from fw.core.ops._infer import (
    norm_axis,
    shp,
)
from fw.core.ops._linalg_check import _same
from fw.core.ops.linalg import (
    cov_op,
    einsum_op,
    matrix_norm_op,
    matrix_power_op,
    vector_norm_op,
)
from fw.core.ops.solve import inv_op
from fw.core.tensor import Tensor, to_tensor


def _tensor(x):
    """Tensors and IR values pass through; anything else becomes a Tensor."""
    if isinstance(x, (Tensor, Value)):
        return x
    return to_tensor(x)


@public("einsum")
def einsum(equation, *operands, name=None):
    """Einstein summation (``paddle.einsum``).

    Args:
        equation (str): NumPy-style subscripts, e.g. "ij,jk->ik"; spaces are ignored, "..."
            broadcasts leading dimensions, and without "->" the output holds the labels that
            appear once, in alphabetical order.
        *operands (Tensor): The inputs, one per comma-separated term (one list or tuple of
            tensors is accepted too).
        name (str, optional): Paddle's op name; unused in eager mode. Default: None.

    Returns:
        Tensor: the contraction, in the promoted dtype of the operands.

    Examples:
        >>> import fw
        >>> a = fw.ones([2, 3]); b = fw.ones([3, 4])
        >>> fw.einsum("ij,jk->ik", a, b).shape
        [2, 4]
    """
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    return invoke(einsum_op, [list(operands)], {"equation": equation})


# ---------------------------------------------------------------- compositions
def _check_rank(fname, arg, t, ranks):
    if len(t.shape) not in ranks:
        want = " or ".join(f"{r}-D" for r in ranks)
        raise InvalidArgumentError(f"{fname}: '{arg}' must be {want}, got shape {shp(t.shape)}")


@public("mm", method=True)
def mm(input, mat2, name=None):
    """Matrix product of two tensors (``fw.matmul`` without transposes).

    Args:
        input (Tensor): The left matrix [M, K] (or a batch; batch dimensions broadcast).
        mat2 (Tensor): The right matrix [K, N].
        name (str, optional): Paddle's op name; unused in eager mode. Default: None.

    Returns:
        Tensor: the product [M, N].

    Examples:
        >>> import fw
        >>> fw.mm(fw.to_tensor([[1.0, 2.0]]), fw.to_tensor([[3.0], [4.0]])).tolist()
        [[11.0]]
        >>> fw.mm(fw.ones([2, 3]), fw.ones([3, 4])).shape
        [2, 4]
    """
    return call("matmul", input, mat2)


@public("bmm", method=True)
def bmm(x, y, name=None):
    """Batched matrix product of two 3-D tensors: [B, M, K] @ [B, K, N].

    Unlike fw.matmul, both inputs must be 3-D with the same batch size (no broadcasting).

    Args:
        x (Tensor): The left batch [B, M, K].
        y (Tensor): The right batch [B, K, N].
        name (str, optional): Paddle's op name; unused in eager mode. Default: None.

    Returns:
        Tensor: the products [B, M, N].

    Examples:
        >>> import fw
        >>> fw.bmm(fw.ones([2, 3, 4]), fw.ones([2, 4, 5])).shape
        [2, 3, 5]
        >>> fw.bmm(fw.ones([1, 1, 2]), fw.ones([1, 2, 1])).tolist()
        [[[2.0]]]
    """
    x, y = _tensor(x), _tensor(y)
    _check_rank("bmm", "x", x, (3,))
    _check_rank("bmm", "y", y, (3,))
    if not _same(x.shape[0], y.shape[0]) or not _same(x.shape[2], y.shape[1]):
        raise InvalidArgumentError(f"bmm: x with shape {shp(x.shape)} and y with shape "
                                   f"{shp(y.shape)} must have one batch size and x.shape[2] == "
                                   f"y.shape[1]")
    return call("matmul", x, y)


@public("mv", method=True)
def mv(x, vec, name=None):
    """Matrix-vector product.

    Args:
        x (Tensor): A matrix [M, N].
        vec (Tensor): A vector [N].
        name (str, optional): Paddle's op name; unused in eager mode. Default: None.

    Returns:
        Tensor: the vector [M].

    Examples:
        >>> import fw
        >>> fw.mv(fw.to_tensor([[1.0, 2.0], [3.0, 4.0]]), fw.to_tensor([1.0, 1.0])).tolist()
        [3.0, 7.0]
    """
    x, vec = _tensor(x), _tensor(vec)
    _check_rank("mv", "x", x, (2,))
    _check_rank("mv", "vec", vec, (1,))
    if not _same(x.shape[1], vec.shape[0]):
        raise InvalidArgumentError(f"mv: x with shape {shp(x.shape)} cannot multiply vec with "
                                   f"shape {shp(vec.shape)}")
    return call("matmul", x, vec)


@public("dot", method=True)
def dot(x, y, name=None):
    """Dot product of vectors (row by row for 2-D inputs).

    Args:
        x (Tensor): A 1-D tensor [N] or a batch of vectors [B, N].
        y (Tensor): A tensor of x's shape.
        name (str, optional): Paddle's op name; unused in eager mode. Default: None.

    Returns:
        Tensor: a 0-D tensor for 1-D inputs, else the [B] dot products.

    Examples:
        >>> import fw
        >>> fw.dot(fw.to_tensor([1., 2.]), fw.to_tensor([3., 4.])).item()
        11.0
        >>> fw.dot(fw.to_tensor([[1., 2.], [3., 4.]]), fw.ones([2, 2])).tolist()
        [3.0, 7.0]
    """
    x, y = _tensor(x), _tensor(y)
    _check_rank("dot", "x", x, (1, 2))
    _check_rank("dot", "y", y, (1, 2))
    if len(x.shape) != len(y.shape) or not all(_same(a, b) for a, b in zip(x.shape, y.shape)):
        raise InvalidArgumentError(f"dot: x with shape {shp(x.shape)} and y with shape "
                                   f"{shp(y.shape)} must have the same shape")
    prod = call("multiply", x, y)
    return call("sum", prod, axis=-1, dtype=prod.dtype)


@public("outer", method=True)
def outer(x, y, name=None):
    """Outer product of two vectors: ``out[i, j] = x[i] * y[j]`` (inputs are flattened first).

    Args:
        x (Tensor): The first vector.
        y (Tensor): The second vector.
        name (str, optional): Paddle's op name; unused in eager mode. Default: None.

    Returns:
        Tensor: a [len(x), len(y)] tensor.

    Examples:
        >>> import fw
        >>> fw.outer(fw.to_tensor([1, 2]), fw.to_tensor([1, 10, 100])).tolist()
        [[1, 10, 100], [2, 20, 200]]
    """
    x, y = _tensor(x), _tensor(y)
    return call("multiply", call("reshape", x, shape=[-1, 1]), call("reshape", y, shape=[1, -1]))


_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


@public("inner", method=True)
def inner(x, y, name=None):
    """Inner product over the last axis: ``sum(x[..., k] * y[..., k])`` for every pair of rows.

    Args:
        x (Tensor): A tensor [..., K].
        y (Tensor): A tensor [..., K].
        name (str, optional): Paddle's op name; unused in eager mode. Default: None.

    Returns:
        Tensor: shape x.shape[:-1] + y.shape[:-1].

    Examples:
        >>> import fw
        >>> fw.inner(fw.ones([2, 3]), fw.ones([4, 3])).shape
        [2, 4]
        >>> fw.inner(fw.to_tensor([1., 2.]), fw.to_tensor([3., 4.])).item()
        11.0
    """
    x, y = _tensor(x), _tensor(y)
    nx, ny = len(x.shape), len(y.shape)
    if nx == 0 or ny == 0:
        return call("multiply", x, y)
    if not _same(x.shape[-1], y.shape[-1]):
        raise InvalidArgumentError(f"inner: the last dimensions of x {shp(x.shape)} and y "
                                   f"{shp(y.shape)} differ")
    if nx + ny - 1 > len(_LETTERS):
        raise InvalidArgumentError(f"inner: too many dimensions ({nx} and {ny})")
    a, b = _LETTERS[:nx - 1], _LETTERS[nx - 1:nx + ny - 2]
    k = _LETTERS[nx + ny - 2]
    return einsum(f"{a}{k},{b}{k}->{a}{b}", x, y)


def _tensordot_axes(axes, nx, ny):
    if isinstance(axes, Tensor):
        axes = axes.tolist()
    if isinstance(axes, (int, np.integer)):
        n = int(axes)
        if n < 0:
            raise InvalidArgumentError(f"tensordot: 'axes' as an int must be >= 0, got {n}")
        if n > nx or n > ny:
            raise InvalidArgumentError(f"tensordot: axes={n} but x has {nx} and y has {ny} "
                                       f"dimensions")
        return list(range(nx - n, nx)), list(range(n))
    if not isinstance(axes, (list, tuple)):
        raise InvalidTypeError(f"tensordot: 'axes' must be an int, a list/tuple or a Tensor, got "
                               f"{type(axes).__name__}")
    axes = [a.tolist() if isinstance(a, Tensor) else a for a in axes]
    if len(axes) == 0:
        return [], []
    if all(isinstance(a, (int, np.integer)) for a in axes):
        xa, ya = list(axes), list(axes)
    else:
        xa = list(axes[0])
        ya = list(axes[1]) if len(axes) > 1 else list(xa)
    # Paddle extends the shorter sequence with the longer one's tail
    if len(xa) < len(ya):
        xa = xa + ya[len(xa):]
    elif len(ya) < len(xa):
        ya = ya + xa[len(ya):]
    xa = [norm_axis(a, nx, "axes") for a in xa]
    ya = [norm_axis(a, ny, "axes") for a in ya]
    if len(set(xa)) != len(xa) or len(set(ya)) != len(ya):
        raise InvalidArgumentError(f"tensordot: an axis repeats in axes x={xa}, y={ya}")
    return xa, ya


@public("tensordot", method=True)
def tensordot(x, y, axes=2, name=None):
    """Tensor contraction over the given axes (``paddle.tensordot``).

    Args:
        x (Tensor): The first operand.
        y (Tensor): The second operand.
        axes (int|list|tuple|Tensor, optional): An int n contracts the last n axes of x with the
            first n of y; a flat list contracts the same axes of both; [x_axes, y_axes] pairs
            them (the shorter list is extended with the longer one's tail, as in Paddle).
            Contracted sizes must match or be 1. Default: 2.
        name (str, optional): Paddle's op name; unused in eager mode. Default: None.

    Returns:
        Tensor: x's free axes followed by y's free axes.

    Examples:
        >>> import fw
        >>> fw.tensordot(fw.ones([2, 3, 4]), fw.ones([3, 4, 5]), axes=2).shape
        [2, 5]
    """
    x, y = _tensor(x), _tensor(y)
    nx, ny = len(x.shape), len(y.shape)
    xa, ya = _tensordot_axes(axes, nx, ny)
    if nx + ny > len(_LETTERS):
        raise InvalidArgumentError(f"tensordot: too many dimensions ({nx} and {ny})")
    xl = list(_LETTERS[:nx])
    yl = list(_LETTERS[nx:nx + ny])
    for i, j in zip(xa, ya):
        dx, dy = x.shape[i], y.shape[j]
        if dx == 1 and dy != 1 or dy == 1 and dx != 1:
            continue  # broadcast: each side is summed on its own label
        if not _same(dx, dy):
            raise InvalidArgumentError(f"tensordot: x dimension {i} (size {dx}) and y dimension "
                                       f"{j} (size {dy}) are contracted but differ")
        yl[j] = xl[i]
    out = [c for i, c in enumerate(xl) if i not in xa] + \
          [c for j, c in enumerate(yl) if j not in ya]
    return einsum(f"{''.join(xl)},{''.join(yl)}->{''.join(out)}", x, y)


def _chain_order(dims):
    """Optimal parenthesisation of a matrix chain (textbook dynamic programming)
    over dims[i] x dims[i+1]; returns the split table."""
    n = len(dims) - 1
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = None
            for k in range(i, j):
                c = cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1]
                if cost[i][j] is None or c < cost[i][j]:
                    cost[i][j] = c
                    split[i][j] = k
    return split


@public("linalg.multi_dot", method="multi_dot")
def multi_dot(x, name=None):
    """The product of a chain of matrices, multiplied in the cheapest order.

    The first and last operands may be vectors (treated as a row and a column vector).

    Args:
        x (list[Tensor]|tuple[Tensor]): Two or more matrices with matching inner sizes.
        name (str, optional): Paddle's op name; unused in eager mode. Default: None.

    Returns:
        Tensor: the product.

    Examples:
        >>> import fw
        >>> fw.linalg.multi_dot([fw.ones([2, 3]), fw.ones([3, 4]), fw.ones([4])]).tolist()
        [12.0, 12.0]
    """
    ts = [_tensor(t) for t in x]
    if len(ts) < 2:
        raise InvalidArgumentError(f"linalg.multi_dot: needs at least 2 tensors, got {len(ts)}")
    for i, t in enumerate(ts):
        ok = (1, 2) if i in (0, len(ts) - 1) else (2,)
        _check_rank("linalg.multi_dot", f"x[{i}]", t, ok)
    shapes = [list(t.shape) for t in ts]
    if len(shapes[0]) == 1:
        shapes[0] = [1] + shapes[0]
    if len(shapes[-1]) == 1:
        shapes[-1] = shapes[-1] + [1]
    for i in range(len(shapes) - 1):
        if not _same(shapes[i][1], shapes[i + 1][0]):
            raise InvalidArgumentError(f"linalg.multi_dot: x[{i}] with shape {shp(ts[i].shape)} "
                                       f"cannot multiply x[{i + 1}] with shape "
                                       f"{shp(ts[i + 1].shape)}")
    dims = [s[0] for s in shapes] + [shapes[-1][1]]
    if DYN in dims:
        out = ts[0]
        for t in ts[1:]:
            out = call("matmul", out, t)
        return out
    split = _chain_order(dims)

    def prod(i, j):
        if i == j:
            return ts[i]
        k = split[i][j]
        return call("matmul", prod(i, k), prod(k + 1, j))

    return prod(0, len(ts) - 1)


@public("linalg.matrix_power", method="matrix_power")
def matrix_power(x, n, name=None):
    """Raise a square matrix (or batch) to an integer power.

    n = 0 gives identity matrices; n < 0 raises the inverse to -n (a singular matrix then
    raises an error).

    Args:
        x (Tensor): A square matrix [N, N] or a batch [*, N, N] (float or complex).
        n (int): The power.
        name (str, optional): Paddle's op name; unused in eager mode. Default: None.

    Returns:
        Tensor: x multiplied by itself n times, with x's shape.

    Examples:
        >>> import fw
        >>> fw.linalg.matrix_power(fw.to_tensor([[2., 0.], [0., 3.]]), 2).tolist()
        [[4.0, 0.0], [0.0, 9.0]]
        >>> x = fw.to_tensor([[1.0, 1.0], [0.0, 1.0]])
        >>> fw.linalg.matrix_power(x, -1).tolist()
        [[1.0, -1.0], [0.0, 1.0]]
        >>> x.matrix_power(0).tolist()
        [[1.0, 0.0], [0.0, 1.0]]
    """
    return invoke(matrix_power_op, [x], {"n": n})


@public("linalg.norm", aliases=("norm",), method="norm")
def norm(x, p=None, axis=None, keepdim=False, name=None):
    """Vector or matrix norm (``paddle.linalg.norm``).

    With axis None or an int, the vector norm over that axis (all elements when None; p None
    or 'fro' mean 2). With axis a pair of ints, the matrix norm (p None means 'fro'; also
    'nuc', 1, -1, 2, -2, inf, -inf).

    Args:
        x (Tensor): The input tensor.
        p (int|float|str, optional): The order of the norm. Default: None.
        axis (int|list|tuple, optional): None, one axis (vector norm) or two (matrix norm).
            Default: None.
        keepdim (bool, optional): Whether the reduced axes stay as dimensions of size 1.
            Default: False.
        name (str, optional): Paddle's op name; unused in eager mode. Default: None.

    Returns:
        Tensor: the norms (real), with the reduced axes removed.

    Examples:
        >>> import fw
        >>> fw.linalg.norm(fw.to_tensor([3., 4.])).item()
        5.0
        >>> x = fw.to_tensor([[1.0, -2.0], [3.0, 4.0]])
        >>> fw.linalg.norm(x, p=1, axis=1).tolist()
        [3.0, 7.0]
        >>> fw.linalg.norm(x, p="fro", axis=[0, 1]).item() == fw.linalg.norm(x).item()
        True
    """
    if isinstance(axis, Tensor):
        axis = axis.tolist()
    if isinstance(axis, (list, tuple)) and len(axis) == 1:
        axis = axis[0]
    if axis is None or isinstance(axis, (int, np.integer)):
        if p is None or p == "fro":
            p = 2.0
        if isinstance(p, str):
            raise InvalidArgumentError(f"linalg.norm: p={p!r} is a matrix norm; pass a pair of "
                                       f"axes (axis=[-2, -1]) to compute it")
        return invoke(vector_norm_op, [x], {"p": p, "axis": axis, "keepdim": keepdim})
    if isinstance(axis, (list, tuple)) and len(axis) == 2:
        return invoke(matrix_norm_op, [x], {"p": "fro" if p is None else p, "axis": axis,
                                            "keepdim": keepdim})
    raise InvalidArgumentError(f"linalg.norm: 'axis' must be None, an int or a pair of ints, "
                               f"got {axis!r}")


@public("linalg.vector_norm")
def vector_norm(x, p=2.0, axis=None, keepdim=False, name=None):
    """The vector p-norm of x over the given axes (all elements when axis is None).

    p = inf / -inf give the largest / smallest |x|, p = 0 the number of nonzero elements,
    otherwise (sum |x|**p) ** (1 / p). Complex input gives a real result.

    Args:
        x (Tensor): The input tensor.
        p (int|float, optional): The order of the norm. Default: 2.0.
        axis (int|list|tuple, optional): The axes to take the norm over; None: all of them.
            Default: None.
        keepdim (bool, optional): Whether the reduced axes stay as dimensions of size 1.
            Default: False.
        name (str, optional): Paddle's op name; unused in eager mode. Default: None.

    Returns:
        Tensor: the norms, with the reduced axes removed.

    Examples:
        >>> import fw
        >>> fw.linalg.vector_norm(fw.to_tensor([3., -4.]), p=1).item()
        7.0
        >>> x = fw.to_tensor([[3.0, 4.0], [-6.0, 8.0]])
        >>> fw.linalg.vector_norm(x, axis=1).tolist()
        [5.0, 10.0]
        >>> fw.linalg.vector_norm(x, p=float("inf")).item()
        8.0
    """
    return invoke(vector_norm_op, [x], {"p": p, "axis": axis, "keepdim": keepdim})


@public("linalg.matrix_norm")
def matrix_norm(x, p="fro", axis=(-2, -1), keepdim=False, name=None):
    """The matrix norm of x over a pair of axes.

    Args:
        x (Tensor): A matrix or a batch of matrices.
        p (str|int|float, optional): 'fro' (Frobenius), 'nuc' (nuclear: the sum of singular
            values), 1 / -1 (largest / smallest column sum of |x|), 2 / -2 (largest / smallest
            singular value), inf / -inf (largest / smallest row sum of |x|). Default: "fro".
        axis (list|tuple, optional): The two axes holding the matrices. Default: (-2, -1).
        keepdim (bool, optional): Whether the two axes stay as dimensions of size 1.
            Default: False.
        name (str, optional): Paddle's op name; unused in eager mode. Default: None.

    Returns:
        Tensor: the norms (real), with the two axes removed.

    Examples:
        >>> import fw
        >>> fw.linalg.matrix_norm(fw.to_tensor([[3., 0.], [0., 4.]]), p=2).item()
        4.0
        >>> x = fw.to_tensor([[1.0, -2.0], [3.0, 4.0]])
        >>> round(fw.linalg.matrix_norm(x).item(), 4)
        5.4772
        >>> fw.linalg.matrix_norm(x, p=1).item()
        6.0
    """
    return invoke(matrix_norm_op, [x], {"p": p, "axis": axis, "keepdim": keepdim})


@public("dist", method=True)
def dist(x, y, p=2.0, name=None):
    """The p-norm of x - y (broadcast), as a 0-D tensor.

    Args:
        x (Tensor): The first tensor.
        y (Tensor): The second tensor, broadcast against x.
        p (float, optional): The order of the norm (inf, -inf and 0 allowed). Default: 2.0.
        name (str, optional): Paddle's op name; unused in eager mode. Default: None.

    Returns:
        Tensor: a 0-D tensor.

    Examples:
        >>> import fw
        >>> fw.dist(fw.to_tensor([1., 1.]), fw.to_tensor([4., 5.])).item()
        5.0
        >>> fw.dist(fw.to_tensor([1., 1.]), fw.to_tensor([4., 5.]), p=1).item()
        7.0
    """
    return invoke(vector_norm_op, [call("subtract", x, y)], {"p": p, "axis": None,
                                                              "keepdim": False})


@public("linalg.cond", method="cond")
def cond(x, p=None, name=None):
    """The condition number of a square matrix (or batch) in a given norm.

    p None or 2 uses the ratio of the largest to the smallest singular value (-2 its
    inverse); 'fro', 'nuc', 1, -1, inf and -inf use norm(x, p) * norm(inv(x), p).

    Args:
        x (Tensor): A matrix [*, N, N] (or [*, M, N] for p None/2/-2).
        p (int|float|str, optional): The norm. Default: None.
        name (str, optional): Paddle's op name; unused in eager mode. Default: None.

    Returns:
        Tensor: the condition numbers [*].

    Examples:
        >>> import fw
        >>> fw.linalg.cond(fw.to_tensor([[2., 0.], [0., 4.]])).item()
        2.0
        >>> fw.linalg.cond(fw.to_tensor([[2., 0.], [0., 4.]]), p=1).item()
        2.0
    """
    x = _tensor(x)
    if p is None or p == 2 or p == -2:
        top = invoke(matrix_norm_op, [x], {"p": 2.0, "axis": (-2, -1), "keepdim": False})
        low = invoke(matrix_norm_op, [x], {"p": -2.0, "axis": (-2, -1), "keepdim": False})
        return call("divide", low, top) if p == -2 else call("divide", top, low)
    inv = invoke(inv_op, [x], {})
    a = invoke(matrix_norm_op, [x], {"p": p, "axis": (-2, -1), "keepdim": False})
    b = invoke(matrix_norm_op, [inv], {"p": p, "axis": (-2, -1), "keepdim": False})
    return call("multiply", a, b)


@public("linalg.cov", method="cov")
def cov(x, rowvar=True, ddof=True, fweights=None, aweights=None, name=None):
    """Covariance matrix of the variables in x (``paddle.linalg.cov``).

    Args:
        x (Tensor): 1-D (one variable) or 2-D observations; integers use the default float
            dtype.
        rowvar (bool, optional): Rows are variables (True) or columns are (False). Default:
            True.
        ddof (bool|int, optional): True divides by N - 1 (unbiased), False by N. Default: True.
        fweights (Tensor, optional): Integer repeat counts per observation. Default: None.
        aweights (Tensor, optional): Non-negative observation weights. Default: None.
        name (str, optional): Paddle's op name; unused in eager mode. Default: None.

    Returns:
        Tensor: the [V, V] covariance matrix, squeezed to 0-D for a single variable.

    Examples:
        >>> import fw
        >>> fw.linalg.cov(fw.to_tensor([[1., 2., 3.], [2., 4., 6.]])).tolist()
        [[1.0, 2.0], [2.0, 4.0]]
    """
    return invoke(cov_op, [x, fweights, aweights], {"rowvar": rowvar, "ddof": ddof})
