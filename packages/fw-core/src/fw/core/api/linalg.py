"""The Paddle-signature functions of the linalg ops that the generated ones cannot express.

The ops themselves (declaration, infer, reference kernel) are in `fw.core.ops.linalg`;
these wrappers are registered with `public` when the op table is loaded.
"""

from __future__ import annotations

import numpy as np

from fw.core import dtypes as _dt
from fw.core.dispatch import invoke
from fw.core.errors import InvalidArgumentError, InvalidTypeError
from fw.core.ir.core import Value
from fw.core.ir.types import DYN, TensorType
from fw.core.ops import _linalg_np as _la
from fw.core.ops._api import call, public
from fw.core.ops._infer import (
    broadcast_shapes,
    complex_of,
    norm_axes,
    norm_axis,
    real_of,
    reduce,
    shp,
)
from fw.core.ops._registry import defop
from fw.core.ops.linalg import (
    _INF,
    _LOW,
    _cov_matrix,
    _cov_shape,
    _dtype_of,
    _first_failure,
    _item,
    _need_float,
    _need_matrix,
    _out,
    _same,
    _square_float_infer,
    _work,
)
from fw.core.tensor import Tensor, to_tensor


def _tensor(x):
    """Tensors and IR values pass through; anything else becomes a Tensor."""
    if isinstance(x, (Tensor, Value)):
        return x
    return to_tensor(x)


# ================================================================ products
# ---------------------------------------------------------------- einsum
def _einsum_tokens(term, eq):
    out = []
    i = 0
    while i < len(term):
        c = term[i]
        if c == ".":
            if term[i:i + 3] != "...":
                raise InvalidArgumentError(f"equation '{eq}': '.' may only appear as part of "
                                           f"the ellipsis '...'")
            if "..." in out:
                raise InvalidArgumentError(f"equation '{eq}': a term has more than one '...'")
            out.append("...")
            i += 3
        elif c.isascii() and c.isalpha():
            out.append(c)
            i += 1
        else:
            raise InvalidArgumentError(f"equation '{eq}': invalid character {c!r}; labels are "
                                       f"the letters a-z and A-Z")
    return out


def _bcast_dim(a, b, what):
    if a == b or b == 1:
        return a
    if a == 1:
        return b
    if a == DYN:
        return b
    if b == DYN:
        return a
    raise InvalidArgumentError(what)


def _einsum_shape(eq, shapes):
    """The output shape of einsum `eq` on operands of `shapes` (dynamic dims
    -1); raises InvalidArgumentError naming the term and operand at fault."""
    if eq.count("->") > 1:
        raise InvalidArgumentError(f"equation '{eq}' has more than one '->'")
    lhs, rhs = eq.split("->") if "->" in eq else (eq, None)
    terms = lhs.split(",")
    if len(terms) != len(shapes):
        raise InvalidArgumentError(f"equation '{eq}' has {len(terms)} operand term(s) but "
                                   f"{len(shapes)} operand(s) were given")
    sizes, counts, ells, any_ell = {}, {}, [], False
    for i, (term, s) in enumerate(zip(terms, shapes)):
        toks = _einsum_tokens(term, eq)
        named = [t for t in toks if t != "..."]
        if "..." in toks:
            any_ell = True
            ne = len(s) - len(named)
            if ne < 0:
                raise InvalidArgumentError(f"equation '{eq}': term '{term}' names {len(named)} "
                                           f"dimensions but operand {i} has shape {shp(s)}")
            at = toks.index("...")
            dims = list(s[:at]) + list(s[at + ne:])
            ells.append(tuple(s[at:at + ne]))
        else:
            if len(named) != len(s):
                raise InvalidArgumentError(f"equation '{eq}': term '{term}' has {len(named)} "
                                           f"labels but operand {i} has {len(s)} dimensions "
                                           f"(shape {shp(s)})")
            dims = list(s)
        local = {}
        for lab, d in zip(named, dims):
            counts[lab] = counts.get(lab, 0) + 1
            if lab in local and not _same(local[lab], d):
                raise InvalidArgumentError(f"equation '{eq}': label '{lab}' repeats in term "
                                           f"'{term}' over dimensions of different sizes "
                                           f"({local[lab]} and {d}) of operand {i}")
            local[lab] = d if local.get(lab, DYN) == DYN else local[lab]
        for lab, d in local.items():
            sizes[lab] = _bcast_dim(sizes.get(lab, 1), d,
                                    f"equation '{eq}': label '{lab}' has size {sizes.get(lab)} "
                                    f"in an earlier operand but {d} in operand {i} (shape "
                                    f"{shp(s)}); sizes must match or be 1")
    ell = broadcast_shapes(*ells, names=[f"the '...' of operand {i}" for i in range(len(ells))])
    if rhs is None:
        out = (["..."] if any_ell else []) + sorted(k for k, c in counts.items() if c == 1)
    else:
        out = _einsum_tokens(rhs, eq)
        seen = set()
        for t in out:
            if t != "..." and t not in sizes:
                raise InvalidArgumentError(f"equation '{eq}': output label '{t}' does not "
                                           f"appear in any operand")
            if t in seen:
                raise InvalidArgumentError(f"equation '{eq}': output label '{t}' repeats")
            seen.add(t)
        if ell and "..." not in out:
            raise InvalidArgumentError(f"equation '{eq}': the operands have '...' dimensions "
                                       f"{shp(ell)} but the output has no '...' to keep them")
    shape = []
    for t in out:
        shape.extend(ell if t == "..." else (sizes[t],))
    return tuple(shape)


def _einsum_canon(attrs):
    eq = attrs["equation"]
    if not isinstance(eq, str):
        raise InvalidTypeError(f"'equation' must be a string, got {type(eq).__name__}")
    return {"equation": "".join(eq.split())}


def _einsum_infer(operands, equation=""):
    if not operands:
        raise InvalidArgumentError("einsum needs at least one operand")
    return TensorType(_einsum_shape(equation, [t.shape for t in operands]), operands[0].dtype)


def _einsum_ref(*operands, equation=""):
    # the operands arrive as one list (eager dispatch); the IR executor currently
    # passes a variadic input's arrays one by one, so accept both
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = operands[0]
    d = _dtype_of(operands[0])
    ops = [a.astype(np.float32) for a in operands] if d in _LOW else list(operands)
    r = np.einsum(equation, *ops, optimize=len(ops) > 1)
    return _out(r, d)


einsum_op = defop("einsum", ("operands*",), {"equation": ""}, infer=_einsum_infer,
                  reference=_einsum_ref, canon=_einsum_canon, family="linalg", method=False,
                  doc="Einstein summation over any number of operands (NumPy's equation "
                      "syntax, with '...' and implicit output).")


@public("einsum")
def einsum(equation, *operands, name=None):
    """Einstein summation (``paddle.einsum``).

    Args:
        equation (str): NumPy-style subscripts, e.g. ``"ij,jk->ik"``; spaces are
            ignored, ``...`` broadcasts leading dimensions, and without ``->`` the
            output holds the labels that appear once, in alphabetical order.
        *operands (Tensor): the inputs, one per comma-separated term (a single
            list or tuple of tensors is accepted too).

    Returns:
        Tensor: the contraction, in the promoted dtype of the operands.

    Example:
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
    """Matrix product (``paddle.mm``), the same as ``matmul(input, mat2)``.

    Example:
        >>> fw.mm(fw.ones([2, 3]), fw.ones([3, 4])).shape
        [2, 4]
    """
    return call("matmul", input, mat2)


@public("bmm", method=True)
def bmm(x, y, name=None):
    """Batched matrix product of two 3-D tensors ``[B, M, K] @ [B, K, N]``.

    Example:
        >>> fw.bmm(fw.ones([2, 3, 4]), fw.ones([2, 4, 5])).shape
        [2, 3, 5]
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
    """Matrix-vector product: x ``[M, N]`` times vec ``[N]`` gives ``[M]``.

    Example:
        >>> fw.mv(fw.ones([2, 3]), fw.ones([3])).shape
        [2]
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
    """Inner product of 1-D vectors, or row-wise of 2-D batches (``[N, D]`` ->
    ``[N]``). No complex conjugation (see `linalg.vecdot` for that).

    Example:
        >>> fw.dot(fw.to_tensor([1., 2.]), fw.to_tensor([3., 4.])).item()
        11.0
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
    """Outer product of x and y, both flattened: shape ``[x.size, y.size]``.

    Example:
        >>> fw.outer(fw.ones([3]), fw.ones([4])).shape
        [3, 4]
    """
    x, y = _tensor(x), _tensor(y)
    return call("multiply", call("reshape", x, shape=[-1, 1]), call("reshape", y, shape=[1, -1]))


_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


@public("inner", method=True)
def inner(x, y, name=None):
    """Sum over the last axes of x and y: shape ``x.shape[:-1] + y.shape[:-1]``
    (a 0-D operand multiplies elementwise).

    Example:
        >>> fw.inner(fw.ones([2, 3]), fw.ones([4, 3])).shape
        [2, 4]
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
        x, y (Tensor): the operands.
        axes (int|list|tuple|Tensor): an int n contracts the last n axes of x
            with the first n of y; a flat list contracts the same axes of both;
            ``[x_axes, y_axes]`` pairs them (the shorter list is extended with
            the longer one's tail, as in Paddle). Contracted sizes must match or
            be 1 (broadcast).

    Returns:
        Tensor: x's free axes followed by y's free axes.

    Example:
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
    """Product of a chain of matrices in the cheapest order. The first tensor
    may be 1-D (a row vector) and the last 1-D (a column vector); the others
    are 2-D.

    Example:
        >>> fw.linalg.multi_dot([fw.ones([2, 3]), fw.ones([3, 4]), fw.ones([4])]).shape
        [2]
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


# ---------------------------------------------------------------- inv / pinv
def _inv_ref(x):
    a, d = _work(x, square=True)
    try:
        r = np.linalg.inv(a)
    except np.linalg.LinAlgError:
        where = _first_failure(np.linalg.inv, a)
        raise InvalidArgumentError(f"the input matrix is singular{where}, so it has no "
                                   f"inverse; linalg.pinv gives a pseudo-inverse") from None
    return _out(r, d)


inv_op = defop("inv", ("x",), infer=_square_float_infer, reference=_inv_ref, promote=None,
      family="linalg", api="linalg.inv", aliases=("inverse",), method="inverse",
      doc="Inverse of a square matrix (or batch); raises for a singular matrix.")


# ---------------------------------------------------------------- LU
def _lu_infer(x, pivot=True):
    _need_float(x)
    _need_matrix(x)
    m, n = x.shape[-2:]
    k = DYN if DYN in (m, n) else min(m, n)
    batch = tuple(x.shape[:-2])
    return (x, TensorType(batch + (k,), _dt.int32), TensorType(batch, _dt.int32))


def _lu_ref(x, pivot=True):
    a, d = _work(x, square=False)
    lu, piv, info = _la.lu_factor(a, pivot)
    return _out(lu, d), piv, info


lu_op = defop("lu", ("x",), {"pivot": True}, outputs=("lu", "pivots", "infos"),
              infer=_lu_infer, reference=_lu_ref, promote=None, family="linalg",
              api="linalg.lu", method="lu",
              doc="LU factorisation with partial pivoting: (LU, pivots, infos) as LAPACK's "
                  "getrf gives them (pivots and infos are int32, 1-based).")


@public("linalg.lu", method="lu")
def lu(x, pivot=True, get_infos=False, name=None):
    """LU factorisation with partial pivoting (``paddle.linalg.lu``).

    Args:
        x (Tensor): ``[*, M, N]`` floating or complex.
        pivot (bool): pivot rows (LAPACK getrf); False gives Doolittle LU.
        get_infos (bool): also return the int32 ``infos`` (0, or the 1-based index
            of the first zero pivot, per matrix).

    Returns:
        (LU, pivots) or (LU, pivots, infos): L (unit lower, below the diagonal)
        and U share ``LU``; ``pivots`` ``[*, min(M, N)]`` int32, 1-based.

    Example:
        >>> lu_, piv = fw.linalg.lu(fw.to_tensor([[1., 2.], [3., 4.]]))
        >>> piv.tolist()
        [2, 2]
    """
    res = invoke(lu_op, [x], {"pivot": pivot})
    return res if get_infos else res[:2]


# ---------------------------------------------------------------- matrix functions
def _matpow_canon(attrs):
    n = _item(attrs["n"], "n")
    if not isinstance(n, (int, np.integer)) or isinstance(n, bool):
        raise InvalidTypeError(f"'n' must be an int, got {type(n).__name__}")
    return {"n": int(n)}


def _matpow_ref(x, n=1):
    a, d = _work(x, square=True)
    try:
        r = np.linalg.matrix_power(a, n)
    except np.linalg.LinAlgError:
        where = _first_failure(np.linalg.inv, a)
        raise InvalidArgumentError(f"n={n} is negative but the matrix is singular{where}, "
                                   f"so it has no inverse") from None
    return _out(r, d)


matrix_power_op = defop("matrix_power", ("x",), {"n": 1}, infer=_square_float_infer,
                        reference=_matpow_ref, canon=_matpow_canon, promote=None,
                        family="linalg", api="linalg.matrix_power", method="matrix_power",
                        doc="x to the integer power n (n < 0 inverts first, n = 0 gives I).")


@public("linalg.matrix_power", method="matrix_power")
def matrix_power(x, n, name=None):
    """The square matrix x (or batch) to the integer power n: n = 0 gives the
    identity, n < 0 the power of the inverse.

    Example:
        >>> fw.linalg.matrix_power(fw.to_tensor([[2., 0.], [0., 3.]]), 2).tolist()
        [[4.0, 0.0], [0.0, 9.0]]
    """
    return invoke(matrix_power_op, [x], {"n": n})


# ================================================================ decompositions
# ---------------------------------------------------------------- qr
_QR_MODES = ("reduced", "complete")


def _qr_canon(attrs):
    mode = attrs["mode"]
    if mode not in _QR_MODES:
        raise InvalidArgumentError(f"'mode' must be one of {_QR_MODES} (linalg.qr also takes "
                                   f"'r'), got {mode!r}")
    return {"mode": mode}


def _qr_infer(x, mode="reduced"):
    _need_float(x)
    _need_matrix(x)
    m, n = x.shape[-2:]
    k = m if mode == "complete" else (DYN if DYN in (m, n) else min(m, n))
    batch = tuple(x.shape[:-2])
    return TensorType(batch + (m, k), x.dtype), TensorType(batch + (k, n), x.dtype)


def _qr_ref(x, mode="reduced"):
    a, d = _work(x, square=False)
    m, n = a.shape[-2:]
    if a.size == 0:  # numpy.linalg.qr rejects empty stacks
        k = m if mode == "complete" else min(m, n)
        batch = a.shape[:-2]
        q = np.broadcast_to(np.eye(m, k, dtype=a.dtype, like=a), batch + (m, k))
        return _out(q, d), np.zeros(batch + (k, n), dtype=d.np, like=a)
    q, r = np.linalg.qr(a, mode=mode)
    return _out(q, d), _out(r, d)


qr_op = defop("qr", ("x",), {"mode": "reduced"}, outputs=("q", "r"), infer=_qr_infer,
              reference=_qr_ref, canon=_qr_canon, promote=None, family="linalg",
              api="linalg.qr", method="qr",
              doc="QR decomposition x = Q R (Householder, as LAPACK geqrf/orgqr).")


@public("linalg.qr", method="qr")
def qr(x, mode="reduced", name=None):
    """QR decomposition of a matrix (or batch) ``[*, M, N]``.

    Args:
        mode (str): "reduced" (Q ``[*, M, K]``, R ``[*, K, N]``, K = min(M, N)),
            "complete" (Q ``[*, M, M]``, R ``[*, M, N]``) or "r" (R only, as in
            "reduced").

    Returns:
        (Q, R), or R for mode="r".

    Example:
        >>> q, r = fw.linalg.qr(fw.to_tensor([[1., 2.], [3., 4.], [5., 6.]]))
        >>> q.shape, r.shape
        ([3, 2], [2, 2])
    """
    if mode == "r":
        return invoke(qr_op, [x], {"mode": "reduced"})[1]
    return invoke(qr_op, [x], {"mode": mode})


# ---------------------------------------------------------------- svd
def _svd_infer(x, full_matrices=False):
    _need_float(x)
    _need_matrix(x)
    m, n = x.shape[-2:]
    k = DYN if DYN in (m, n) else min(m, n)
    batch = tuple(x.shape[:-2])
    ucols, vrows = (m, n) if full_matrices else (k, k)
    return (TensorType(batch + (m, ucols), x.dtype), TensorType(batch + (k,), real_of(x.dtype)),
            TensorType(batch + (vrows, n), x.dtype))


def _svd_ref(x, full_matrices=False):
    a, d = _work(x, square=False)
    m, n = a.shape[-2:]
    if a.size == 0:
        k = min(m, n)
        batch = a.shape[:-2]
        uc, vr = (m, n) if full_matrices else (k, k)
        return (np.broadcast_to(np.eye(m, uc, dtype=d.np, like=a), batch + (m, uc)).copy(),
                np.zeros(batch + (k,), dtype=real_of(d).np, like=a),
                np.broadcast_to(np.eye(vr, n, dtype=d.np, like=a), batch + (vr, n)).copy())
    u, s, vh = np.linalg.svd(a, full_matrices=full_matrices)
    return _out(u, d), _out(s, real_of(d)), _out(vh, d)


svd_op = defop("svd", ("x",), {"full_matrices": False}, outputs=("u", "s", "vh"),
               infer=_svd_infer, reference=_svd_ref, promote=None, family="linalg",
               api="linalg.svd", method=False,
               doc="Singular value decomposition x = U diag(S) VH, S descending and real.")


@public("linalg.svdvals")
def svdvals(x, name=None):
    """The singular values of a matrix (or batch), in descending order.

    Example:
        >>> fw.linalg.svdvals(fw.to_tensor([[3., 0.], [0., 4.]])).tolist()
        [4.0, 3.0]
    """
    return invoke(svd_op, [x], {"full_matrices": False})[1]


def _lowrank(fname, a, q):
    a = _tensor(a)
    if len(a.shape) < 2:
        raise InvalidArgumentError(f"{fname}: x must be a matrix or a batch of matrices, got "
                                   f"shape {shp(a.shape)}")
    m, n = a.shape[-2:]
    k = None if DYN in (m, n) else min(m, n)
    q = (6 if k is None else min(6, k)) if q is None else int(q)
    if q < 0 or (k is not None and q > k):
        raise InvalidArgumentError(f"{fname}: q={q} must lie in [0, min(M, N)] = [0, {k}] for x "
                                   f"with shape {shp(a.shape)}")
    u, s, vh = invoke(svd_op, [a], {"full_matrices": False})
    v = vh[..., :q, :].mT
    if v.dtype.kind == _dt._COMPLEX:
        v = v.conj()
    return u[..., :q], s[..., :q], v


@public("linalg.svd_lowrank", method="svd_lowrank")
def svd_lowrank(x, q=None, niter=2, M=None, name=None):
    """Rank-q SVD of x - M: ``(U [*, M, q], S [*, q], V [*, N, q])`` with
    ``x - M ≈ U diag(S) V^H``; q defaults to min(6, M, N).

    Paddle computes this by random projections (``niter`` power iterations);
    fw truncates the exact SVD instead, which gives the same factors up to the
    sign of each singular pair, deterministically (``niter`` is accepted and
    unused).

    Example:
        >>> u, s, v = fw.linalg.svd_lowrank(fw.ones([5, 4]), q=1)
        >>> [u.shape, s.shape, v.shape]
        [[5, 1], [1], [4, 1]]
    """
    a = _tensor(x) if M is None else call("subtract", x, M)
    return _lowrank("linalg.svd_lowrank", a, q)


@public("linalg.pca_lowrank", method="pca_lowrank")
def pca_lowrank(x, q=None, center=True, niter=2, name=None):
    """Principal components of the rows of x: the rank-q SVD of x with its
    column means removed (when center=True); see `linalg.svd_lowrank`.

    Example:
        >>> u, s, v = fw.linalg.pca_lowrank(fw.rand([6, 3]), q=2)
        >>> v.shape
        [3, 2]
    """
    a = _tensor(x)
    if center:
        a = call("subtract", a, call("mean", a, axis=-2, keepdim=True))
    return _lowrank("linalg.pca_lowrank", a, q)


# ---------------------------------------------------------------- eig / eigh
def _eig_infer(x):
    _square_float_infer(x)
    c = complex_of(x.dtype)
    return TensorType(tuple(x.shape[:-1]), c), TensorType(x.shape, c)


def _eig_ref(x):
    a, d = _work(x, square=True)
    c = complex_of(d)
    try:
        w, v = np.linalg.eig(a)
    except np.linalg.LinAlgError:
        raise InvalidArgumentError("the eigenvalue algorithm did not converge") from None
    return _out(w, c), _out(v, c)


eig_op = defop("eig", ("x",), outputs=("eigenvalues", "eigenvectors"), infer=_eig_infer,
               reference=_eig_ref, promote=None, family="linalg", api="linalg.eig",
               method="eig",
               doc="Eigenvalues and right eigenvectors of a general square matrix; always "
                   "complex (complex64 for float32 input).")


@public("linalg.eigvals", method="eigvals")
def eigvals(x, name=None):
    """Eigenvalues of a general square matrix (or batch), always complex.

    Example:
        >>> fw.linalg.eigvals(fw.to_tensor([[2., 0.], [0., 3.]])).tolist()
        [(2+0j), (3+0j)]
    """
    return invoke(eig_op, [x], {})[0]


def _uplo_canon(attrs):
    u = attrs["UPLO"]
    if u not in ("L", "U"):
        raise InvalidArgumentError(f"'UPLO' must be 'L' or 'U', got {u!r}")
    return {"UPLO": u}


def _eigh_infer(x, UPLO="L"):
    _square_float_infer(x)
    return TensorType(tuple(x.shape[:-1]), real_of(x.dtype)), x


def _eigh_ref(x, UPLO="L"):
    a, d = _work(x, square=True)
    try:
        w, v = np.linalg.eigh(a, UPLO=UPLO)
    except np.linalg.LinAlgError:
        raise InvalidArgumentError("the eigenvalue algorithm did not converge") from None
    return _out(w, real_of(d)), _out(v, d)


eigh_op = defop("eigh", ("x",), {"UPLO": "L"}, outputs=("eigenvalues", "eigenvectors"),
                infer=_eigh_infer, reference=_eigh_ref, canon=_uplo_canon, promote=None,
                family="linalg", api="linalg.eigh", method=False,
                doc="Eigenvalues (ascending, real) and orthonormal eigenvectors of a "
                    "Hermitian matrix, read from its lower (UPLO='L') or upper triangle.")


@public("linalg.eigvalsh", aliases=("eigvalsh",), method="eigvalsh")
def eigvalsh(x, UPLO="L", name=None):
    """Eigenvalues (ascending, real) of a Hermitian matrix (or batch).

    Example:
        >>> fw.linalg.eigvalsh(fw.to_tensor([[2., 1.], [1., 2.]])).tolist()
        [1.0, 3.0]
    """
    return invoke(eigh_op, [x], {"UPLO": UPLO})[0]


def _axis_canon_value(axis):
    if axis is None:
        return None
    if isinstance(axis, Tensor):
        axis = axis.tolist()
    if isinstance(axis, (int, np.integer)):
        return int(axis)
    return tuple(int(a) for a in axis)


# ---------------------------------------------------------------- vector_norm
def _vnorm_canon(attrs):
    p = _item(attrs["p"], "p")
    if isinstance(p, str) or isinstance(p, bool) or not isinstance(p, (int, float)):
        raise InvalidArgumentError(f"'p' must be a number (inf, -inf, 0 or any real), got "
                                   f"{p!r}")
    return {"p": float(p), "axis": _axis_canon_value(attrs["axis"]),
            "keepdim": bool(attrs["keepdim"])}


def _vnorm_infer(x, p=2.0, axis=None, keepdim=False):
    _need_float(x)
    return reduce(x, axis, keepdim).with_dtype(real_of(x.dtype))


def _vnorm_ref(x, p=2.0, axis=None, keepdim=False):
    a, d = _work(x)
    axes = norm_axes(axis, a.ndim)
    v = np.abs(a)
    if p == _INF:
        r = np.max(v, axis=axes, keepdims=keepdim, initial=0.0)
    elif p == -_INF:
        r = np.min(v, axis=axes, keepdims=keepdim, initial=_INF)
    elif p == 0:
        r = np.sum(v != 0, axis=axes, keepdims=keepdim, dtype=v.dtype)
    elif p == 1:
        r = np.sum(v, axis=axes, keepdims=keepdim)
    elif p == 2:
        r = np.sqrt(np.sum(v * v, axis=axes, keepdims=keepdim))
    else:
        r = np.power(np.sum(np.power(v, p), axis=axes, keepdims=keepdim), 1.0 / p)
    return _out(r, real_of(d))


vector_norm_op = defop(
    "vector_norm", ("x",), {"p": 2.0, "axis": None, "keepdim": False}, infer=_vnorm_infer,
    reference=_vnorm_ref, canon=_vnorm_canon, promote=None, family="linalg",
    api="linalg.vector_norm", method=False,
    doc="Vector p-norm over `axis` (all axes when None): p = inf/-inf give max/min |x|, "
        "p = 0 counts non-zeros, else (sum |x|^p)^(1/p). Complex input gives a real result.")


# ---------------------------------------------------------------- matrix_norm
_MATRIX_P = ("fro", "nuc", 1.0, -1.0, 2.0, -2.0, _INF, -_INF)


def _mnorm_canon(attrs):
    p = _item(attrs["p"], "p")
    if not isinstance(p, str) and not isinstance(p, bool) and isinstance(p, (int, float)):
        p = float(p)
    if p not in _MATRIX_P:
        raise InvalidArgumentError(f"'p' must be one of 'fro', 'nuc', 1, -1, 2, -2, inf, -inf "
                                   f"for a matrix norm, got {p!r}")
    axis = _axis_canon_value(attrs["axis"])
    if not isinstance(axis, tuple) or len(axis) != 2:
        raise InvalidArgumentError(f"'axis' of a matrix norm must be two axes, got {axis!r}")
    return {"p": p, "axis": axis, "keepdim": bool(attrs["keepdim"])}


def _mnorm_axes(axis, nd):
    a0, a1 = norm_axis(axis[0], nd), norm_axis(axis[1], nd)
    if a0 == a1:
        raise InvalidArgumentError(f"'axis'={list(axis)} names the same axis twice")
    return a0, a1


def _mnorm_infer(x, p="fro", axis=(-2, -1), keepdim=False):
    _need_float(x)
    if len(x.shape) < 2:
        raise InvalidArgumentError(f"x must have at least 2 dimensions for a matrix norm, got "
                                   f"shape {shp(x.shape)}")
    a0, a1 = _mnorm_axes(axis, len(x.shape))
    return reduce(x, (a0, a1), keepdim).with_dtype(real_of(x.dtype))


def _svals(a):
    if a.shape[-1] == 0 or a.shape[-2] == 0:
        return np.zeros(a.shape[:-2] + (0,), dtype=a.real.dtype, like=a)
    return np.linalg.svd(a, compute_uv=False)


def _mnorm_ref(x, p="fro", axis=(-2, -1), keepdim=False):
    a, d = _work(x)
    if a.ndim < 2:
        raise InvalidArgumentError(f"x must have at least 2 dimensions for a matrix norm, got "
                                   f"shape {list(a.shape)}")
    a0, a1 = _mnorm_axes(axis, a.ndim)
    m = np.moveaxis(a, (a0, a1), (-2, -1))
    if p == "fro":
        v = np.abs(m)
        r = np.sqrt(np.sum(v * v, axis=(-2, -1)))
    elif p == "nuc":
        r = np.sum(_svals(m), axis=-1)
    elif p in (2.0, -2.0):
        s = _svals(m)
        r = np.max(s, axis=-1, initial=0.0) if p > 0 else np.min(s, axis=-1, initial=_INF)
    else:
        sums = np.sum(np.abs(m), axis=-2 if p in (1.0, -1.0) else -1)
        r = np.max(sums, axis=-1, initial=0.0) if p > 0 else np.min(sums, axis=-1, initial=_INF)
    if keepdim:
        r = np.expand_dims(r, tuple(sorted((a0, a1))))
    return _out(r, real_of(d))


matrix_norm_op = defop(
    "matrix_norm", ("x",), {"p": "fro", "axis": (-2, -1), "keepdim": False},
    infer=_mnorm_infer, reference=_mnorm_ref, canon=_mnorm_canon, promote=None,
    family="linalg", api="linalg.matrix_norm", method=False,
    doc="Matrix norm over the two axes: 'fro', 'nuc', 1/-1 (max/min column sum), inf/-inf "
        "(max/min row sum), 2/-2 (largest/smallest singular value).")


@public("linalg.norm", aliases=("norm",), method="norm")
def norm(x, p=None, axis=None, keepdim=False, name=None):
    """Vector or matrix norm (``paddle.linalg.norm``).

    With ``axis`` None or an int, the vector norm over that axis (all elements
    when None; p None or 'fro' mean 2). With ``axis`` a pair, the matrix norm
    (p None means 'fro'; also 'nuc', ±1, ±2, ±inf).

    Example:
        >>> fw.linalg.norm(fw.to_tensor([3., 4.])).item()
        5.0
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
    """Vector p-norm of x over `axis` (all elements when None).

    Example:
        >>> fw.linalg.vector_norm(fw.to_tensor([3., -4.]), p=1).item()
        7.0
    """
    return invoke(vector_norm_op, [x], {"p": p, "axis": axis, "keepdim": keepdim})


@public("linalg.matrix_norm")
def matrix_norm(x, p="fro", axis=(-2, -1), keepdim=False, name=None):
    """Matrix norm of x over the pair of axes `axis`.

    Example:
        >>> fw.linalg.matrix_norm(fw.to_tensor([[3., 0.], [0., 4.]]), p=2).item()
        4.0
    """
    return invoke(matrix_norm_op, [x], {"p": p, "axis": axis, "keepdim": keepdim})


@public("dist", method=True)
def dist(x, y, p=2.0, name=None):
    """The p-norm of x - y (broadcast), as a 0-D tensor.

    Example:
        >>> fw.dist(fw.to_tensor([1., 1.]), fw.to_tensor([4., 5.])).item()
        5.0
    """
    return invoke(vector_norm_op, [call("subtract", x, y)], {"p": p, "axis": None,
                                                              "keepdim": False})


@public("linalg.cond", method="cond")
def cond(x, p=None, name=None):
    """Condition number of a square matrix (or batch) in norm p: None/2 use the
    ratio of extreme singular values (-2 its inverse); 'fro', 'nuc', ±1, ±inf
    use norm(x) * norm(inv(x)).

    Example:
        >>> fw.linalg.cond(fw.to_tensor([[2., 0.], [0., 4.]])).item()
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


# ---------------------------------------------------------------- cov / corrcoef
def _cov_canon(attrs):
    ddof = attrs["ddof"]
    if isinstance(ddof, Tensor):
        ddof = ddof.item()
    return {"rowvar": bool(attrs["rowvar"]), "ddof": int(ddof)}


def _cov_infer(x, fweights=None, aweights=None, rowvar=True, ddof=1):
    _need_float(x)
    shape, n = _cov_shape(x, rowvar)
    for w, nm, kinds in ((fweights, "fweights", (_dt._INT,)),
                         (aweights, "aweights", (_dt._FLOAT, _dt._INT))):
        if w is None:
            continue
        if w.dtype.kind not in kinds:
            kind = "an integer" if nm == "fweights" else "a floating or integer"
            raise InvalidTypeError(f"'{nm}' must be {kind} tensor, got {w.dtype.name}")
        if len(w.shape) != 1 or not _same(w.shape[0], n):
            raise InvalidArgumentError(f"'{nm}' must be 1-D with one weight per observation "
                                       f"({n}), got shape {shp(w.shape)}")
    return TensorType(shape, x.dtype)


def _cov_ref(x, fweights=None, aweights=None, rowvar=True, ddof=1):
    a, d = _work(x)
    return _out(np.squeeze(_cov_matrix(a, fweights, aweights, rowvar, ddof)), d)


cov_op = defop("cov", ("x", "fweights?", "aweights?"), {"rowvar": True, "ddof": 1},
               infer=_cov_infer, reference=_cov_ref, canon=_cov_canon, promote=(0,),
               to_float=True, family="linalg", api="linalg.cov", method="cov",
               doc="Covariance matrix of the variables (rows, or columns when rowvar=False), "
                   "with optional frequency and observation weights (NumPy's formula).")


@public("linalg.cov", method="cov")
def cov(x, rowvar=True, ddof=True, fweights=None, aweights=None, name=None):
    """Covariance matrix of the variables in x (``paddle.linalg.cov``).

    Args:
        x (Tensor): 1-D (one variable) or 2-D; integers use the default float dtype.
        rowvar (bool): rows are variables (True) or columns are (False).
        ddof (bool|int): True divides by N - 1 (unbiased), False by N.
        fweights (Tensor, optional): integer repeat counts per observation.
        aweights (Tensor, optional): non-negative observation weights.

    Returns:
        Tensor: ``[V, V]``, squeezed to 0-D for a single variable.

    Example:
        >>> fw.linalg.cov(fw.to_tensor([[1., 2., 3.], [2., 4., 6.]])).tolist()
        [[1.0, 2.0], [2.0, 4.0]]
    """
    return invoke(cov_op, [x, fweights, aweights], {"rowvar": rowvar, "ddof": ddof})
