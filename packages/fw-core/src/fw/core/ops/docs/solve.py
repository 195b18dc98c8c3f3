"""Reference docs of the solvers and inverses (``fw/core/ops/solve.py``)."""

from fw.core.ops.docs import Doc

_SQ = "A square matrix [N, N] or a batch of them [*, N, N] (float32/float64/complex)."

DOCS = {
    "inv": Doc(args={"x": _SQ},
               returns="Tensor: the inverses, x's shape.",
               examples="""
>>> import fw
>>> x = fw.to_tensor([[2.0, 0.0], [0.0, 4.0]])
>>> fw.linalg.inv(x).tolist()
[[0.5, 0.0], [0.0, 0.25]]
>>> fw.inverse(x).tolist() == x.inverse().tolist()
True
"""),
    "pinv": Doc(args={"x": "A matrix [M, N] or a batch [*, M, N].",
                      "rcond": ("float|Tensor", "Singular values <= rcond * the largest one "
                                                "count as zero."),
                      "hermitian": "Whether x is Hermitian (an eigendecomposition is used)."},
                returns="Tensor: the Moore-Penrose pseudo-inverses [*, N, M].",
                examples="""
>>> import fw
>>> x = fw.to_tensor([[1.0, 0.0], [0.0, 2.0], [0.0, 0.0]])
>>> print(fw.linalg.pinv(x).numpy().round(4))
[[1.  0.  0. ]
 [0.  0.5 0. ]]
"""),
    "solve": Doc(args={"x": _SQ,
                       "y": "The right-hand sides: [*, N, K], or a vector [N] / [*, N].",
                       "left": "True: solve x @ out = y; False: solve out @ x = y."},
                 returns="Tensor: the solution, shaped like y.",
                 examples="""
>>> import fw
>>> a = fw.to_tensor([[3.0, 1.0], [1.0, 2.0]])
>>> b = fw.to_tensor([9.0, 8.0])
>>> fw.linalg.solve(a, b).tolist()
[2.0, 3.0]
"""),
    "triangular_solve": Doc(args={"x": "A triangular matrix [*, N, N] (only its upper or lower "
                                       "triangle is read).",
                                  "y": "The right-hand sides [*, N, K].",
                                  "upper": "Whether x is upper (True) or lower (False) "
                                           "triangular.",
                                  "transpose": "Solve x^T @ out = y instead.",
                                  "unitriangular": "Take x's diagonal as all ones."},
                            returns="Tensor: the solution [*, N, K].",
                            examples="""
>>> import fw
>>> x = fw.to_tensor([[2.0, 1.0], [0.0, 4.0]])
>>> y = fw.to_tensor([[4.0], [8.0]])
>>> fw.linalg.triangular_solve(x, y).tolist()
[[1.0], [2.0]]
"""),
    "cholesky_solve": Doc(args={"x": "The right-hand sides [*, N, K].",
                                "y": "The Cholesky factor of A, [*, N, N].",
                                "upper": "Whether y is the upper factor U (A = U^H U) or the "
                                         "lower one L (A = L L^H)."},
                          returns="Tensor: the solution of A @ out = x, [*, N, K].",
                          examples="""
>>> import fw
>>> a = fw.to_tensor([[4.0, 2.0], [2.0, 3.0]])
>>> L = fw.linalg.cholesky(a)
>>> out = fw.linalg.cholesky_solve(fw.to_tensor([[6.0], [5.0]]), L)
>>> print(out.numpy())
[[1.]
 [1.]]
"""),
    "cholesky_inverse": Doc(args={"x": "The Cholesky factor [*, N, N] of A.",
                                  "upper": "Whether x is the upper factor (A = U^H U) or the "
                                           "lower one (A = L L^H)."},
                            returns="Tensor: the inverse of A.",
                            examples="""
>>> import fw
>>> L = fw.to_tensor([[2.0, 0.0], [1.0, 1.0]])
>>> print(fw.linalg.cholesky_inverse(L).numpy())
[[ 0.5 -0.5]
 [-0.5  1. ]]
"""),
    "lu_solve": Doc(args={"b": "The right-hand sides [*, N, K].",
                          "lu": "The packed LU factors [*, N, N] from fw.linalg.lu.",
                          "pivots": "The int32 pivots from fw.linalg.lu (1-based, as LAPACK).",
                          "trans": "'N' solves A x = b, 'T' A^T x = b, 'C' A^H x = b."},
                    returns="Tensor: the solution [*, N, K].",
                    examples="""
>>> import fw
>>> a = fw.to_tensor([[3.0, 1.0], [1.0, 2.0]])
>>> lu, pivots = fw.linalg.lu(a)
>>> print(fw.linalg.lu_solve(fw.to_tensor([[9.0], [8.0]]), lu, pivots).numpy())
[[2.]
 [3.]]
"""),
    "lstsq": Doc(args={"x": "The coefficient matrices [*, M, N].",
                       "y": "The right-hand sides [*, M, K].",
                       "rcond": ("float, optional", "Singular values <= rcond * the largest one "
                                                    "count as zero; None: machine precision * "
                                                    "max(M, N)."),
                       "driver": ("str, optional", "Paddle's LAPACK driver name ('gels', "
                                                   "'gelsy', 'gelsd', 'gelss'); fw solves by "
                                                   "SVD for all of them.")},
                 returns="tuple(Tensor, Tensor, Tensor, Tensor): the solution [*, N, K], the "
                         "residual sums of squares, the ranks and the singular values.",
                 examples="""
>>> import fw
>>> x = fw.to_tensor([[1.0, 0.0], [1.0, 1.0], [1.0, 2.0]])
>>> y = fw.to_tensor([[1.0], [2.0], [3.0]])
>>> solution = fw.linalg.lstsq(x, y)[0]
>>> print(solution.numpy().round(4))
[[1.]
 [1.]]
"""),
}
