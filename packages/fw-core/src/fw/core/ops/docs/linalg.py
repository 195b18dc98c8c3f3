"""Reference docs of the linear-algebra products, norms and statistics
(``fw/core/ops/linalg.py``); solvers are in ``docs/solve.py``, factorisations in
``docs/decomp.py`` (the same families as the op modules)."""

from fw.core.ops.docs import Doc

_SQ = "A square matrix [N, N] or a batch of them [*, N, N] (float32/float64/complex)."

DOCS = {
    "matmul": Doc(
        args={"x": "The left operand: a vector [K], a matrix [M, K] or a batch [*, M, K].",
              "y": "The right operand: a vector [K], a matrix [K, N] or a batch [*, K, N].",
              "transpose_x": "Transpose the last two axes of x before multiplying.",
              "transpose_y": "Transpose the last two axes of y before multiplying."},
        returns="Tensor: the product. A 1-D x gets a leading 1 and a 1-D y a trailing 1 "
                "before multiplying; those dimensions are removed from the result.",
        details="The batch dimensions (all but the last two) broadcast against each other as "
                "in NumPy's ``matmul``; x and y are promoted to a common dtype. ``x @ y`` "
                "calls this function. float16/bfloat16 products accumulate in float32.",
        examples="""
>>> import fw
>>> x = fw.to_tensor([[1.0, 2.0], [3.0, 4.0]])
>>> y = fw.to_tensor([[5.0], [6.0]])
>>> fw.matmul(x, y).tolist()
[[17.0], [39.0]]
>>> (x @ y).shape
[2, 1]
>>> fw.matmul(x, x, transpose_y=True).tolist()
[[5.0, 11.0], [11.0, 25.0]]
>>> fw.matmul(fw.ones([10, 2, 3]), fw.ones([3, 4])).shape
[10, 2, 4]
>>> fw.matmul(fw.to_tensor([1.0, 2.0]), fw.to_tensor([3.0, 4.0])).item()
11.0
"""),
    "vecdot": Doc(args={"x": "The first tensor (conjugated when complex).",
                        "y": "The second tensor, broadcast against x.",
                        "axis": "The axis to sum over."},
                  returns="Tensor: the dot products, with axis removed.",
                  examples="""
>>> import fw
>>> x = fw.to_tensor([[1.0, 2.0], [3.0, 4.0]])
>>> fw.linalg.vecdot(x, fw.to_tensor([1.0, 1.0])).tolist()
[3.0, 7.0]
"""),
    "cross": Doc(args={"x": "The first tensor.", "y": "The second tensor, broadcast against x.",
                       "axis": "The axis of size 3 holding the vectors; the default (9, "
                               "Paddle's sentinel) picks the first axis of size 3."},
                 returns="Tensor: the cross products, with the broadcast shape.",
                 examples="""
>>> import fw
>>> x = fw.to_tensor([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
>>> y = fw.to_tensor([[0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
>>> fw.cross(x, y).tolist()
[[0.0, 0.0, 1.0], [1.0, 0.0, 0.0]]
"""),
    "det": Doc(args={"x": _SQ}, returns="Tensor: the determinants, shape [*].",
               examples="""
>>> import fw
>>> fw.linalg.det(fw.to_tensor([[2.0, 1.0], [1.0, 3.0]])).item()
5.0
"""),
    "slogdet": Doc(args={"x": _SQ},
                   returns="Tensor: a [2, *] tensor: the signs of the determinants, then the "
                           "logs of their absolute values (det = sign * exp(logabsdet)).",
                   examples="""
>>> import fw
>>> out = fw.linalg.slogdet(fw.to_tensor([[2.0, 0.0], [0.0, -3.0]]))
>>> print(out.numpy())
[-1.         1.7917595]
"""),
    "matrix_exp": Doc(args={"x": _SQ},
                      returns="Tensor: exp(x) = sum of x^k / k!, x's shape.",
                      examples="""
>>> import fw
>>> print(fw.linalg.matrix_exp(fw.to_tensor([[0.0, 1.0], [0.0, 0.0]])).numpy())
[[1. 1.]
 [0. 1.]]
"""),
    "matrix_rank": Doc(args={"x": "A matrix [M, N] or a batch [*, M, N].",
                             "tol": ("float|Tensor, optional",
                                     "Singular values <= tol count as zero; None uses atol / "
                                     "rtol, or max(M, N) * eps * the largest singular value."),
                             "hermitian": "Whether x is Hermitian (eigenvalues are used).",
                             "atol": ("float|Tensor, optional", "The absolute tolerance."),
                             "rtol": ("float|Tensor, optional", "The tolerance relative to the "
                                                                "largest singular value.")},
                       returns="Tensor: the ranks (int32 in fw; Paddle gives int64), shape [*].",
                       examples="""
>>> import fw
>>> fw.linalg.matrix_rank(fw.to_tensor([[1.0, 2.0], [2.0, 4.0]])).item()
1
>>> fw.linalg.matrix_rank(fw.eye(3)).item()
3
"""),
    "trace": Doc(args={"x": "A tensor with at least 2 dimensions.",
                       "offset": "Which diagonal: 0 the main one, > 0 above, < 0 below.",
                       "axis1": "The first axis of the 2-D planes.",
                       "axis2": "The second axis of the 2-D planes."},
                 returns="Tensor: the sums of the diagonals, with axis1 and axis2 removed.",
                 examples="""
>>> import fw
>>> x = fw.to_tensor([[1, 2, 3], [4, 5, 6], [7, 8, 9]])
>>> fw.trace(x).item()
15
>>> fw.trace(x, offset=1).item()
8
"""),
    "cdist": Doc(args={"x": "Points [*, P, M].", "y": "Points [*, R, M].",
                       "p": "The order of the p-norm distance (0, inf and any p >= 0).",
                       "compute_mode": ("str", "For p = 2: 'use_mm_for_euclid_dist_if_"
                                               "necessary' (the matrix-product form when P or "
                                               "R > 25), 'use_mm_for_euclid_dist' (always) or "
                                               "'donot_use_mm_for_euclid_dist' (never).")},
                 returns="Tensor: the [*, P, R] distances.",
                 examples="""
>>> import fw
>>> x = fw.to_tensor([[0.0, 0.0], [3.0, 4.0]])
>>> fw.cdist(x, x).tolist()
[[0.0, 5.0], [5.0, 0.0]]
"""),
    "corrcoef": Doc(args={"x": "A 1-D or 2-D tensor of observations.",
                          "rowvar": "True: each row is a variable; False: each column is."},
                    returns="Tensor: the [V, V] Pearson correlation coefficients.",
                    examples="""
>>> import fw
>>> x = fw.to_tensor([[0.0, 1.0, 2.0], [2.0, 1.0, 0.0]])
>>> fw.linalg.corrcoef(x).tolist()
[[1.0, -1.0], [-1.0, 1.0]]
"""),
}
