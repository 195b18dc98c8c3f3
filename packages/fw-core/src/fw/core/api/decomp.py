"""The Paddle-signature functions of the decomp ops that the generated ones cannot express
(lu, qr, svdvals, svd_lowrank, pca_lowrank, eigvals, eigvalsh).

The ops themselves (declaration, infer, reference kernel) are in `fw.core.ops.decomp`;
these wrappers are registered with `public` when the op table is loaded.
"""

from __future__ import annotations

from fw.core import dtypes as _dt
from fw.core.api.linalg import _tensor
from fw.core.dispatch import invoke
from fw.core.errors import InvalidArgumentError
from fw.core.ir.types import DYN
from fw.core.ops._api import call, public
from fw.core.ops._infer import shp
from fw.core.ops.decomp import eig_op, eigh_op, lu_op, qr_op, svd_op


@public("linalg.lu", method="lu")
def lu(x, pivot=True, get_infos=False, name=None):
    """LU factorisation with partial pivoting (``paddle.linalg.lu``): x = P @ L @ U.

    L (unit lower triangular, below the diagonal) and U (upper triangular) are packed into one
    tensor, as LAPACK's getrf stores them; ``fw.linalg.lu_unpack`` separates them.

    Args:
        x (Tensor): A matrix [*, M, N] (float or complex).
        pivot (bool, optional): Pivot rows (LAPACK getrf); False gives Doolittle LU without
            pivoting. Default: True.
        get_infos (bool, optional): Also return the int32 infos (0, or the 1-based index of the
            first zero pivot, per matrix). Default: False.
        name (str, optional): Paddle's op name; unused in eager mode. Default: None.

    Returns:
        tuple(Tensor, ...): (LU, pivots), or (LU, pivots, infos) with get_infos=True; pivots is
        [*, min(M, N)] int32 and 1-based.

    Examples:
        >>> import fw
        >>> lu, piv = fw.linalg.lu(fw.to_tensor([[1., 2.], [3., 4.]]))
        >>> print(lu.numpy().round(4))
        [[3.     4.    ]
         [0.3333 0.6667]]
        >>> piv.tolist()
        [2, 2]
        >>> p, l, u = fw.linalg.lu_unpack(lu, piv)
        >>> fw.allclose(p @ l @ u, fw.to_tensor([[1., 2.], [3., 4.]])).item()
        True
    """
    res = invoke(lu_op, [x], {"pivot": pivot})
    return res if get_infos else res[:2]


@public("linalg.qr", method="qr")
def qr(x, mode="reduced", name=None):
    """QR decomposition x = Q @ R of a matrix (or batch) [*, M, N] (Householder, as LAPACK).

    Args:
        x (Tensor): A matrix [*, M, N] (float or complex).
        mode (str, optional): "reduced" (Q [*, M, K], R [*, K, N], K = min(M, N)), "complete"
            (Q [*, M, M], R [*, M, N]) or "r" (R only, as in "reduced"). Default: "reduced".
        name (str, optional): Paddle's op name; unused in eager mode. Default: None.

    Returns:
        tuple(Tensor, Tensor)|Tensor: (Q, R) with orthonormal columns in Q and upper-triangular
        R; only R for mode="r".

    Examples:
        >>> import fw
        >>> x = fw.to_tensor([[1., 2.], [3., 4.], [5., 6.]])
        >>> q, r = fw.linalg.qr(x)
        >>> q.shape, r.shape
        ([3, 2], [2, 2])
        >>> fw.allclose(q @ r, x, atol=1e-5).item()
        True
        >>> fw.linalg.qr(x, mode="complete")[0].shape
        [3, 3]
    """
    if mode == "r":
        return invoke(qr_op, [x], {"mode": "reduced"})[1]
    return invoke(qr_op, [x], {"mode": mode})


@public("linalg.svdvals")
def svdvals(x, name=None):
    """The singular values of a matrix (or batch), in descending order.

    Args:
        x (Tensor): A matrix [*, M, N].
        name (str, optional): Paddle's op name; unused in eager mode. Default: None.

    Returns:
        Tensor: the singular values [*, min(M, N)], descending.

    Examples:
        >>> import fw
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

    Args:
        x (Tensor): A matrix [*, M, N].
        q (int, optional): The rank of the approximation; None: min(6, M, N). Default: None.
        niter (int, optional): The number of subspace iterations. Default: 2.
        M (Tensor, optional): A matrix subtracted from x first (e.g. the mean). Default: None.
        name (str, optional): Paddle's op name; unused in eager mode. Default: None.

    Returns:
        tuple(Tensor, Tensor, Tensor): U [*, M, q], S [*, q] and V [*, N, q] with x ~ U diag(S)
            V^H.

    Examples:
        >>> import fw
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

    Args:
        x (Tensor): The data [*, M, N] (rows are samples).
        q (int, optional): The number of components; None: min(6, M, N). Default: None.
        center (bool, optional): Subtract the column means first. Default: True.
        niter (int, optional): The number of subspace iterations. Default: 2.
        name (str, optional): Paddle's op name; unused in eager mode. Default: None.

    Returns:
        tuple(Tensor, Tensor, Tensor): U, S and V of the (centred) data; V's columns are the
            principal directions.

    Examples:
        >>> import fw
        >>> u, s, v = fw.linalg.pca_lowrank(fw.rand([6, 3]), q=2)
        >>> v.shape
        [3, 2]
    """
    a = _tensor(x)
    if center:
        a = call("subtract", a, call("mean", a, axis=-2, keepdim=True))
    return _lowrank("linalg.pca_lowrank", a, q)


@public("linalg.eigvals", method="eigvals")
def eigvals(x, name=None):
    """Eigenvalues of a general square matrix (or batch), always complex.

    Args:
        x (Tensor): A square matrix [*, N, N].
        name (str, optional): Paddle's op name; unused in eager mode. Default: None.

    Returns:
        Tensor: the complex eigenvalues [*, N].

    Examples:
        >>> import fw
        >>> fw.linalg.eigvals(fw.to_tensor([[2., 0.], [0., 3.]])).tolist()
        [(2+0j), (3+0j)]
    """
    return invoke(eig_op, [x], {})[0]


@public("linalg.eigvalsh", aliases=("eigvalsh",), method="eigvalsh")
def eigvalsh(x, UPLO="L", name=None):
    """Eigenvalues (ascending, real) of a Hermitian matrix (or batch).

    Args:
        x (Tensor): A Hermitian (real symmetric) matrix [*, N, N].
        UPLO (str, optional): Read the lower ('L') or upper ('U') triangle. Default: 'L'.
        name (str, optional): Paddle's op name; unused in eager mode. Default: None.

    Returns:
        Tensor: the real eigenvalues [*, N] in ascending order.

    Examples:
        >>> import fw
        >>> fw.linalg.eigvalsh(fw.to_tensor([[2., 1.], [1., 2.]])).tolist()
        [1.0, 3.0]
    """
    return invoke(eigh_op, [x], {"UPLO": UPLO})[0]
