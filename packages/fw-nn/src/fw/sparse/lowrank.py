"""Randomized low-rank PCA of a sparse matrix (Paddle's ``paddle.sparse.pca_lowrank``).

The algorithm is the randomized range finder with subspace (power) iterations of
Halko, Martinsson & Tropp, "Finding structure with randomness" (2011), Alg. 4.4 +
5.1, which Paddle and PyTorch also use. Centering is applied implicitly (A - 1 mu),
so the sparse matrix is never densified; Paddle 3.3 runs this on CUDA 11 only, fw on
any device.
"""

from __future__ import annotations

import fw
from fw.sparse._util import check_sparse

__all__ = ["pca_lowrank"]


def pca_lowrank(x, q=None, center=True, niter=2, name=None):
    """Approximate principal components of a 2-D sparse matrix.

    Args:
        x (SparseCooTensor|SparseCsrTensor): the ``[M, N]`` data, rows are samples.
        q (int, optional): the number of components, ``0 <= q <= min(M, N)``.
            Default ``min(6, M, N)``.
        center (bool, optional): subtract the column means first. Default True.
        niter (int, optional): subspace iterations (more is more accurate). Default 2.
        name (str, optional): unused.

    Returns:
        tuple: ``(U, S, V)`` dense tensors of shapes ``[M, q]``, ``[q]`` and ``[N, q]``
        with ``x - mean ≈ U @ diag(S) @ V.T``; the draws come from fw's generator
        (``fw.seed`` makes them reproducible).

    Examples:
        >>> import fw
        >>> _ = fw.seed(0)
        >>> d = fw.to_tensor([[1.0, 0.0, 2.0], [0.0, 3.0, 0.0], [2.0, 0.0, 4.0]])
        >>> U, S, V = fw.sparse.pca_lowrank(d.to_sparse_coo(2), q=2, center=False)
        >>> U.shape, S.shape, V.shape
        ([3, 2], [2], [3, 2])
        >>> [round(s, 4) for s in S.numpy().tolist()]
        [5.0, 3.0]
    """
    check_sparse(x, "pca_lowrank")
    if x.ndim != 2:
        raise ValueError(f"fw.sparse.pca_lowrank(): x must be a 2-D matrix, got shape {x.shape}")
    m, n = x.shape
    if q is None:
        q = min(6, m, n)
    if not isinstance(q, int) or not 0 <= q <= min(m, n):
        raise ValueError(f"fw.sparse.pca_lowrank(): q={q!r} must be an int in [0, min(M, N)="
                         f"{min(m, n)}] for shape {x.shape}")
    if not isinstance(niter, int) or niter < 0:
        raise ValueError(f"fw.sparse.pca_lowrank(): niter={niter!r} must be a non-negative int")
    from fw.sparse.binary import matmul
    from fw.sparse.unary import sum as sparse_sum
    from fw.sparse.unary import transpose

    xt = transpose(x, [1, 0])
    ones = fw.ones([m, 1], dtype=x.dtype)
    mu = None
    if center:  # column means, [1, N]
        mu = fw.reshape(sparse_sum(x.to_sparse_coo(), axis=0, keepdim=True).to_dense(), [1, n]) / m

    def a_times(y):  # (A - 1 mu) @ y
        r = matmul(x, y)
        return r if mu is None else r - fw.matmul(ones, fw.matmul(mu, y))

    def at_times(z):  # (A - 1 mu)^T @ z
        r = matmul(xt, z)
        return r if mu is None else r - fw.matmul(fw.transpose(mu, [1, 0]),
                                                  fw.sum(z, axis=0, keepdim=True))

    basis = fw.linalg.qr(a_times(fw.randn([n, q], dtype=x.dtype)))[0]
    for _ in range(niter):
        basis = fw.linalg.qr(at_times(basis))[0]
        basis = fw.linalg.qr(a_times(basis))[0]
    b = fw.transpose(at_times(basis), [1, 0])  # Q^T (A - 1 mu): [q, N]
    ub, s, vh = fw.linalg.svd(b, full_matrices=False)
    return fw.matmul(basis, ub), s, fw.transpose(vh, [1, 0])
