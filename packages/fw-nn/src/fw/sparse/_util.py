"""Shared helpers of fw.sparse: argument checks and index arithmetic on NumPy (indices
never carry gradients, so the pattern work happens on NumPy and only the values go
through fw ops)."""

from __future__ import annotations

import numpy as np

import fw
from fw.sparse.tensor import SparseCooTensor, SparseCsrTensor

SPARSE = (SparseCooTensor, SparseCsrTensor)


def check_sparse(x, fn: str, arg: str = "x"):
    if not isinstance(x, SPARSE):
        raise TypeError(f"fw.sparse.{fn}(): `{arg}` must be a sparse COO or CSR tensor, got "
                        f"{type(x).__name__}" + (f" of shape {list(x.shape)} (use "
                                                 f"x.to_sparse_coo(...) first)"
                                                 if isinstance(x, fw.Tensor) else ""))


def check_dense(x, fn: str, arg: str):
    if not isinstance(x, fw.Tensor):
        raise TypeError(f"fw.sparse.{fn}(): `{arg}` must be a dense fw.Tensor, got "
                        f"{type(x).__name__}")


def to_coo(x) -> SparseCooTensor:
    return x if isinstance(x, SparseCooTensor) else x.to_sparse_coo()


def like(x, coo: SparseCooTensor):
    """`coo` back in `x`'s format."""
    return coo if isinstance(x, SparseCooTensor) else coo.to_sparse_csr()


def index_tensor(a) -> fw.Tensor:
    return fw.to_tensor(np.ascontiguousarray(a, dtype=np.int64))


def linear(idx: np.ndarray, dims) -> np.ndarray:
    """Row-major linear position of each index column (empty-safe)."""
    if idx.shape[1] == 0:
        return np.zeros(0, np.int64)
    return np.ravel_multi_index(tuple(idx), tuple(int(d) for d in dims)).astype(np.int64)


def unravel(lin: np.ndarray, dims) -> np.ndarray:
    if lin.size == 0:
        return np.zeros((len(dims), 0), np.int64)
    return np.stack(np.unravel_index(lin, tuple(int(d) for d in dims))).astype(np.int64)


def gather_rows(values: fw.Tensor, rows: np.ndarray) -> fw.Tensor:
    """values[rows] along axis 0, differentiable w.r.t. values."""
    return fw.index_select(values, index_tensor(rows), axis=0)


def scatter_rows(values: fw.Tensor, rows: np.ndarray, n: int) -> fw.Tensor:
    """A [n, *values.shape[1:]] tensor with values added at `rows` (duplicates add)."""
    return fw.scatter_nd(index_tensor(rows.reshape(-1, 1)), values,
                         [int(n)] + list(values.shape[1:]))
