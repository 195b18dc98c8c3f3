"""Reference docs of the matrix factorisations (``fw/core/ops/decomp.py``)."""

from fw.core.ops.docs import Doc

_SQ = "A square matrix [N, N] or a batch of them [*, N, N] (float32/float64/complex)."

DOCS = {
    "cholesky": Doc(args={"x": "A Hermitian positive-definite matrix [*, N, N].",
                          "upper": "Return the upper factor U (x = U^H U) instead of the lower "
                                   "L (x = L L^H)."},
                    returns="Tensor: the triangular factor, x's shape.",
                    examples="""
>>> import fw
>>> a = fw.to_tensor([[4.0, 2.0], [2.0, 3.0]])
>>> L = fw.linalg.cholesky(a)
>>> print(L.numpy())
[[2.        0.       ]
 [1.        1.4142135]]
>>> fw.allclose(L @ L.T, a).item()
True
"""),
    "svd": Doc(args={"x": "A matrix [*, M, N].",
                     "full_matrices": "False: U [*, M, K] and VH [*, K, N] with K = min(M, N); "
                                      "True: square U and VH."},
               returns="tuple(Tensor, Tensor, Tensor): U, the singular values S (descending, "
                       "real) and VH, with x = U @ diag(S) @ VH.",
               examples="""
>>> import fw
>>> x = fw.to_tensor([[3.0, 0.0], [0.0, -2.0], [0.0, 0.0]])
>>> u, s, vh = fw.linalg.svd(x)
>>> s.tolist()
[3.0, 2.0]
>>> u.shape, vh.shape
([3, 2], [2, 2])
"""),
    "eig": Doc(args={"x": _SQ},
               returns="tuple(Tensor, Tensor): the eigenvalues [*, N] and right eigenvectors "
                       "[*, N, N] (columns), always complex.",
               examples="""
>>> import fw
>>> w, v = fw.linalg.eig(fw.to_tensor([[2.0, 0.0], [0.0, 3.0]]))
>>> print(w.numpy())
[2.+0.j 3.+0.j]
"""),
    "eigh": Doc(args={"x": "A Hermitian (real symmetric) matrix [*, N, N].",
                      "UPLO": "Read the lower ('L') or upper ('U') triangle of x."},
                returns="tuple(Tensor, Tensor): the real eigenvalues in ascending order [*, N] "
                        "and orthonormal eigenvectors as columns [*, N, N].",
                examples="""
>>> import fw
>>> w, v = fw.linalg.eigh(fw.to_tensor([[2.0, 1.0], [1.0, 2.0]]))
>>> print(w.numpy())
[1. 3.]
"""),
    "lu_unpack": Doc(args={"x": "The packed LU factors from fw.linalg.lu.",
                           "y": "The pivots from fw.linalg.lu.",
                           "unpack_ludata": "Whether to return L and U.",
                           "unpack_pivots": "Whether to return the permutation P."},
                     returns="tuple(Tensor, Tensor, Tensor): P, L and U with A = P @ L @ U.",
                     examples="""
>>> import fw
>>> a = fw.to_tensor([[1.0, 2.0], [3.0, 4.0]])
>>> p, l, u = fw.linalg.lu_unpack(*fw.linalg.lu(a))
>>> fw.allclose(p @ l @ u, a).item()
True
"""),
    "householder_product": Doc(args={"x": "The Householder vectors below the diagonal of "
                                          "[*, M, N] (as geqrf stores them).",
                                     "tau": "The scaling factors [*, K]."},
                               returns="Tensor: the first N columns of H_1 ... H_K, [*, M, N].",
                               examples="""
>>> import fw
>>> x = fw.to_tensor([[1.0, 0.0], [0.0, 1.0]])
>>> fw.linalg.householder_product(x, fw.to_tensor([0.0, 0.0])).tolist()
[[1.0, 0.0], [0.0, 1.0]]
"""),
    "ormqr": Doc(args={"x": "The Householder vectors [*, M, K] (as geqrf stores them).",
                       "tau": "The scaling factors [*, K].",
                       "y": "The matrix to multiply.",
                       "left": "Compute op(Q) @ y (True) or y @ op(Q) (False).",
                       "transpose": "Use Q^H instead of Q."},
                 returns="Tensor: the product, y's shape.",
                 examples="""
>>> import fw
>>> x = fw.to_tensor([[1.0, 0.0], [0.0, 1.0]])
>>> y = fw.to_tensor([[1.0, 2.0], [3.0, 4.0]])
>>> fw.linalg.ormqr(x, fw.to_tensor([0.0, 0.0]), y).tolist()
[[1.0, 2.0], [3.0, 4.0]]
"""),
}
