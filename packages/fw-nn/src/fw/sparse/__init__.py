"""fw.sparse — sparse COO and CSR tensors (Paddle's ``paddle.sparse``).

A sparse tensor holds fw Tensors for its indices and values: the pattern work runs on
NumPy (indices carry no gradient), the values go through fw ops, so gradients reach
the values (``x.grad`` is sparse, with x's pattern) and the dense operands. Dense fw ops
refuse sparse tensors with a clear error instead of densifying them silently. See
fw-nn's README.md for the design.
"""

from fw.sparse import nn
from fw.sparse.binary import (
    add,
    addmm,
    divide,
    is_same_shape,
    mask_as,
    masked_matmul,
    matmul,
    multiply,
    mv,
    subtract,
)
from fw.sparse.lowrank import pca_lowrank
from fw.sparse.tensor import SparseCooTensor, SparseCsrTensor, sparse_coo_tensor, sparse_csr_tensor
from fw.sparse.unary import (
    abs,
    asin,
    asinh,
    atan,
    atanh,
    cast,
    coalesce,
    deg2rad,
    expm1,
    isnan,
    log1p,
    neg,
    pow,
    rad2deg,
    reshape,
    sin,
    sinh,
    slice,
    sqrt,
    square,
    sum,
    tan,
    tanh,
    transpose,
)

__all__ = [
    "SparseCooTensor", "SparseCsrTensor", "abs", "add", "addmm", "asin", "asinh", "atan",
    "atanh", "cast", "coalesce", "deg2rad", "divide", "expm1", "is_same_shape", "isnan",
    "log1p", "mask_as", "masked_matmul", "matmul", "multiply", "mv", "neg", "nn", "pca_lowrank",
    "pow",
    "rad2deg", "reshape", "sin", "sinh", "slice", "sparse_coo_tensor", "sparse_csr_tensor",
    "sqrt", "square", "subtract", "sum", "tan", "tanh", "transpose",
]
