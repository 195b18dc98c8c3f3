"""The sparse tensor types (COO and CSR) and their constructors.

A sparse tensor is not a ``fw.Tensor``: it holds fw Tensors (integer indices and the
``values``), so gradients flow through the values with fw.autograd, and it refuses to
be read as an array (``__array__`` raises), so a dense op handed one fails with a clear
error instead of silently densifying it. ``to_dense()`` is the explicit way out.

Layout as Paddle's (paddle/phi/core/sparse_coo_tensor.h, sparse_csr_tensor.h):
COO ``indices`` has shape ``[sparse_dim, nnz]`` and ``values`` ``[nnz, *dense_dims]``;
CSR is 2-D ``[M, N]`` or batched 3-D ``[B, M, N]`` with ``crows`` of length
``B * (M + 1)``, and ``cols``/``values`` of length ``nnz``.
"""

from __future__ import annotations

import numpy as np

import fw

__all__ = ["SparseCooTensor", "SparseCsrTensor", "dense_to_coo", "dense_to_csr",
           "sparse_coo_tensor", "sparse_csr_tensor"]


def _as_index(a, fn, arg) -> fw.Tensor:
    arr = a.numpy() if isinstance(a, fw.Tensor) else np.asarray(a)
    if arr.size and not np.issubdtype(arr.dtype, np.integer):
        raise TypeError(f"{fn}(): `{arg}` must hold integers, got dtype {arr.dtype}")
    if isinstance(a, fw.Tensor):
        return a
    return fw.to_tensor(arr.astype(np.int64))


def _as_values(v, dtype, stop_gradient) -> fw.Tensor:
    if isinstance(v, (SparseCooTensor, SparseCsrTensor)):
        raise TypeError("sparse tensor constructors: `values` must be dense, got a sparse tensor")
    if not isinstance(v, fw.Tensor):
        # lists follow to_tensor's default dtype (float32 for Python floats, as Paddle)
        v = fw.to_tensor(v, dtype=dtype)
    elif dtype is not None:
        v = v.astype(dtype)
    if not stop_gradient:
        v.stop_gradient = False
    return v


class _SparseBase:
    """What COO and CSR share: shape/dtype queries, gradient access, operators."""

    values_: fw.Tensor

    # a dense op reading this as an array is a bug in the caller's program: say so
    def __array__(self, dtype=None, copy=None):
        raise TypeError(
            f"a sparse {self._format} tensor (shape {self.shape}, dtype {self.dtype}) was passed "
            f"to a dense operation; use the fw.sparse functions or call .to_dense() first")

    def __bool__(self):
        raise TypeError("the truth value of a sparse tensor is ambiguous")

    def __len__(self):
        return self.shape[0]

    # ----------------------------------------------------------- queries
    @property
    def shape(self) -> list:
        return list(self._shape)

    @property
    def ndim(self) -> int:
        return len(self._shape)

    def dim(self) -> int:
        return len(self._shape)

    @property
    def dtype(self):
        return self.values_.dtype

    @property
    def place(self):
        return self.values_.place

    @property
    def stop_gradient(self) -> bool:
        return self.values_.stop_gradient

    @stop_gradient.setter
    def stop_gradient(self, flag: bool):
        self.values_.stop_gradient = flag

    @property
    def grad(self):
        """The gradient w.r.t. the values, as a sparse tensor of the same pattern."""
        g = self.values_.grad
        return None if g is None else self._with_values(g)

    def clear_grad(self):
        self.values_.clear_grad()

    def values(self) -> fw.Tensor:
        return self.values_

    def nnz(self) -> int:
        return int(self.values_.shape[0])

    def is_sparse(self) -> bool:
        return True

    def is_dense(self) -> bool:
        return False

    def is_sparse_coo(self) -> bool:
        return self._format == "coo"

    def is_sparse_csr(self) -> bool:
        return self._format == "csr"

    def numpy(self):
        raise TypeError(f"Tensor.numpy(): a sparse {self._format} tensor has no dense array; "
                        f"call .to_dense().numpy()")

    def detach(self):
        return self._with_values(self.values_.detach())

    def astype(self, dtype):
        return self._with_values(self.values_.astype(dtype))

    def backward(self, grad_tensor=None, retain_graph=False):
        raise TypeError("backward() on a sparse tensor: reduce it to a dense scalar first "
                        "(e.g. fw.sparse.sum(x).values().sum() or x.to_dense().sum())")

    # ----------------------------------------------------------- operators
    def __add__(self, other):
        from fw.sparse.binary import add
        return add(self, other)

    def __sub__(self, other):
        from fw.sparse.binary import subtract
        return subtract(self, other)

    def __mul__(self, other):
        from fw.sparse.binary import multiply
        return multiply(self, other)

    def __truediv__(self, other):
        from fw.sparse.binary import divide
        return divide(self, other)

    def __matmul__(self, other):
        from fw.sparse.binary import matmul
        return matmul(self, other)

    def __neg__(self):
        return self._with_values(-self.values_)

    def __pow__(self, factor):
        return self._with_values(self.values_ ** factor)

    # methods Paddle hangs on every Tensor (paddle.sparse functions as methods)
    def coalesce(self):
        from fw.sparse.unary import coalesce
        return coalesce(self)

    def transpose(self, perm):
        from fw.sparse.unary import transpose
        return transpose(self, perm)

    def reshape(self, shape):
        from fw.sparse.unary import reshape
        return reshape(self, shape)

    def sum(self, axis=None, dtype=None, keepdim=False):
        from fw.sparse.unary import sum as _sum
        return _sum(self, axis, dtype, keepdim)


class SparseCooTensor(_SparseBase):
    """A sparse tensor in COO (coordinate) format: the ``[sparse_dim, nnz]``
    indices of the stored entries and their values (``[nnz, *dense_dims]``).

    Build it with `sparse_coo_tensor` (or ``Tensor.to_sparse_coo``); `fw.sparse` ops
    and layers take it, and gradients flow to its values. Duplicate indices are allowed
    until `coalesce` sums them.

    Args:
        indices (Tensor): int64 ``[sparse_dim, nnz]`` coordinates.
        values (Tensor): the stored values, ``[nnz, *dense_dims]``.
        shape (list[int]): the dense shape.
        coalesced (bool, optional): whether the indices are known sorted and unique.
            Default: False.

    Examples:
        >>> import fw
        >>> x = fw.sparse.sparse_coo_tensor([[0, 1], [1, 2]], [1.0, 2.0], [2, 3])
        >>> x.shape, x.nnz(), x.is_sparse_coo()
        ([2, 3], 2, True)
        >>> x.indices().tolist(), x.values().tolist()
        ([[0, 1], [1, 2]], [1.0, 2.0])
        >>> x.to_dense().tolist()
        [[0.0, 1.0, 0.0], [0.0, 0.0, 2.0]]
    """

    _format = "coo"

    def __init__(self, indices: fw.Tensor, values: fw.Tensor, shape, coalesced: bool = False):
        self.indices_ = indices
        self.values_ = values
        self._shape = [int(s) for s in shape]
        self._coalesced = coalesced

    def _with_values(self, values):
        return SparseCooTensor(self.indices_, values, self._shape, self._coalesced)

    def indices(self) -> fw.Tensor:
        """The ``[sparse_dim, nnz]`` int64 coordinates of the stored entries.

        Returns:
            Tensor: the indices.

        Examples:
            >>> import fw
            >>> x = fw.sparse.sparse_coo_tensor([[0, 1], [1, 2]], [1.0, 2.0], [2, 3])
            >>> x.indices().tolist()
            [[0, 1], [1, 2]]
        """
        return self.indices_

    def sparse_dim(self) -> int:
        return int(self.indices_.shape[0])

    def dense_dim(self) -> int:
        return self.ndim - self.sparse_dim()

    def is_coalesced(self) -> bool:
        return self._coalesced

    def to_dense(self) -> fw.Tensor:
        """The dense tensor; differentiable w.r.t. the values.

        Of duplicate indices (an uncoalesced tensor) the last one stored wins, as in
        Paddle 3.3's kernel (``coalesce()`` first to add them up instead)."""
        values, ind = self.values_, self.indices_
        if not self._coalesced and ind.shape[1] > 1:
            idx = ind.numpy()
            lin = np.ravel_multi_index(tuple(idx), tuple(self._shape[:idx.shape[0]]))
            _, first_of_reversed = np.unique(lin[::-1], return_index=True)
            if first_of_reversed.size < lin.size:
                keep = np.sort(lin.size - 1 - first_of_reversed).astype(np.int64)
                values = fw.index_select(values, fw.to_tensor(keep), axis=0)
                ind = fw.to_tensor(idx[:, keep])
        return fw.scatter_nd(fw.transpose(ind, [1, 0]), values, self._shape)

    def to_sparse_coo(self, sparse_dim=None):
        return self

    def to_sparse_csr(self):
        """Convert to CSR format (2-D, or batched 3-D; the COO must have no dense
        dims).

        Returns:
            SparseCsrTensor: the same values in CSR form.

        Examples:
            >>> import fw
            >>> x = fw.sparse.sparse_coo_tensor([[0, 1], [1, 2]], [1.0, 2.0], [2, 3])
            >>> y = x.to_sparse_csr()
            >>> y.crows().tolist(), y.cols().tolist()
            ([0, 1, 2], [1, 2])
        """
        if self.ndim not in (2, 3) or self.dense_dim() != 0:
            raise ValueError(f"to_sparse_csr(): needs a 2-D or 3-D COO tensor with no dense "
                             f"dims, got shape {self.shape} with sparse_dim {self.sparse_dim()}")
        c = self.coalesce()
        idx = c.indices_.numpy()
        if self.ndim == 2:
            batch, rows, cols, nb = np.zeros(idx.shape[1], np.int64), idx[0], idx[1], 1
        else:
            batch, rows, cols, nb = idx[0], idx[1], idx[2], self._shape[0]
        m = self._shape[-2]
        counts = np.zeros((nb, m), np.int64)
        np.add.at(counts, (batch, rows), 1)
        crows = np.concatenate([np.zeros((nb, 1), np.int64), np.cumsum(counts, 1)], 1).ravel()
        return SparseCsrTensor(fw.to_tensor(crows), fw.to_tensor(cols.astype(np.int64)),
                               c.values_, self._shape)

    def __repr__(self):
        return (f"Tensor(shape={self.shape}, dtype={self.dtype}, place={self.place}, "
                f"stop_gradient={self.stop_gradient}, sparse_format=coo,\n"
                f"       indices={self.indices_.numpy().tolist()},\n"
                f"       values={self.values_.numpy().tolist()})")


class SparseCsrTensor(_SparseBase):
    """A sparse matrix (or batch of matrices) in CSR format: compressed row
    pointers `crows`, column indices `cols` and the stored values.

    Build it with `sparse_csr_tensor` (or ``Tensor.to_sparse_csr``). Row i's entries are
    ``values[crows[i]:crows[i+1]]`` at columns ``cols[crows[i]:crows[i+1]]``.

    Args:
        crows (Tensor): int64 row pointers, ``[rows + 1]`` (per batch for 3-D).
        cols (Tensor): int64 column indices, ``[nnz]``.
        values (Tensor): the stored values, ``[nnz]``.
        shape (list[int]): the dense shape, 2-D or 3-D.

    Examples:
        >>> import fw
        >>> x = fw.sparse.sparse_csr_tensor([0, 1, 2], [1, 2], [1.0, 2.0], [2, 3])
        >>> x.shape, x.nnz(), x.is_sparse_csr()
        ([2, 3], 2, True)
        >>> x.to_dense().tolist()
        [[0.0, 1.0, 0.0], [0.0, 0.0, 2.0]]
    """

    _format = "csr"

    def __init__(self, crows: fw.Tensor, cols: fw.Tensor, values: fw.Tensor, shape):
        self.crows_ = crows
        self.cols_ = cols
        self.values_ = values
        self._shape = [int(s) for s in shape]

    def _with_values(self, values):
        return SparseCsrTensor(self.crows_, self.cols_, values, self._shape)

    def crows(self) -> fw.Tensor:
        """The compressed row pointers: row i's entries are at positions
        ``crows[i]`` to ``crows[i+1] - 1``.

        Returns:
            Tensor: int64 ``[rows + 1]``.

        Examples:
            >>> import fw
            >>> x = fw.sparse.sparse_csr_tensor([0, 1, 2], [1, 2], [1.0, 2.0], [2, 3])
            >>> x.crows().tolist()
            [0, 1, 2]
        """
        return self.crows_

    def cols(self) -> fw.Tensor:
        """The column index of each stored entry.

        Returns:
            Tensor: int64 ``[nnz]``.

        Examples:
            >>> import fw
            >>> x = fw.sparse.sparse_csr_tensor([0, 1, 2], [1, 2], [1.0, 2.0], [2, 3])
            >>> x.cols().tolist()
            [1, 2]
        """
        return self.cols_

    def _coo_indices(self) -> np.ndarray:
        """The ``[ndim, nnz]`` COO indices of the stored entries, in storage order."""
        crows = self.crows_.numpy().astype(np.int64)
        m = self._shape[-2]
        nb = 1 if self.ndim == 2 else self._shape[0]
        per = crows.reshape(nb, m + 1)
        counts = np.diff(per, axis=1)  # [nb, m]
        rows = np.repeat(np.tile(np.arange(m), nb), counts.ravel())
        cols = self.cols_.numpy().astype(np.int64)
        if self.ndim == 2:
            return np.stack([rows, cols])
        batch = np.repeat(np.arange(nb), counts.sum(1))
        return np.stack([batch, rows, cols])

    def to_sparse_coo(self, sparse_dim=None):
        """Convert to COO format.

        Args:
            sparse_dim (int, optional): must equal the tensor's rank when given.
                Default: None.

        Returns:
            SparseCooTensor: the same entries in COO form.

        Examples:
            >>> import fw
            >>> x = fw.sparse.sparse_csr_tensor([0, 1, 2], [1, 2], [1.0, 2.0], [2, 3])
            >>> x.to_sparse_coo().indices().tolist()
            [[0, 1], [1, 2]]
        """
        if sparse_dim is not None and sparse_dim != self.ndim:
            raise ValueError(f"to_sparse_coo(): a CSR tensor converts with sparse_dim "
                             f"{self.ndim}, got {sparse_dim}")
        return SparseCooTensor(fw.to_tensor(self._coo_indices()), self.values_, self._shape,
                               coalesced=True)

    def to_sparse_csr(self):
        return self

    def to_dense(self) -> fw.Tensor:
        return self.to_sparse_coo().to_dense()

    def __repr__(self):
        return (f"Tensor(shape={self.shape}, dtype={self.dtype}, place={self.place}, "
                f"stop_gradient={self.stop_gradient}, sparse_format=csr,\n"
                f"       crows={self.crows_.numpy().tolist()},\n"
                f"       cols={self.cols_.numpy().tolist()},\n"
                f"       values={self.values_.numpy().tolist()})")


def sparse_coo_tensor(indices, values, shape=None, dtype=None, place=None, stop_gradient=True):
    """Build a COO sparse tensor from its indices and values.

    Args:
        indices (list|numpy.ndarray|Tensor): integer indices, shape ``[sparse_dim, nnz]``.
        values (list|numpy.ndarray|Tensor): the values, shape ``[nnz, *dense_dims]``; a
            Tensor is kept as is, so gradients flow back through it.
        shape (list|tuple, optional): the dense shape; inferred from the largest index
            plus one (and the values' trailing dims) when None.
        dtype (str|fw.dtype, optional): the values' dtype. Default: inferred.
        place (optional): accepted for Paddle compatibility; values stay where they are.
        stop_gradient (bool, optional): False makes the values require gradients. Default True.

    Returns:
        SparseCooTensor: the sparse tensor (not coalesced: duplicates are kept).

    Examples:
        >>> import fw
        >>> x = fw.sparse.sparse_coo_tensor([[0, 1], [1, 2]], [1.0, 2.0], [2, 3])
        >>> x.to_dense().numpy().tolist()
        [[0.0, 1.0, 0.0], [0.0, 0.0, 2.0]]
    """
    ind = _as_index(indices, "sparse_coo_tensor", "indices")
    if ind.ndim != 2:
        raise ValueError(f"sparse_coo_tensor(): `indices` must be 2-D [sparse_dim, nnz], got "
                         f"shape {list(ind.shape)}")
    val = _as_values(values, dtype, stop_gradient)
    sparse_dim, nnz = ind.shape
    if val.ndim < 1 or val.shape[0] != nnz:
        raise ValueError(f"sparse_coo_tensor(): `values` must have nnz={nnz} rows (one per "
                         f"index column), got shape {list(val.shape)}")
    idx = ind.numpy()
    if idx.size and idx.min() < 0:
        raise ValueError("sparse_coo_tensor(): `indices` must be non-negative")
    if shape is None:
        lead = (idx.max(axis=1) + 1).tolist() if nnz else [0] * sparse_dim
        shape = [int(s) for s in lead] + list(val.shape[1:])
    shape = [int(s) for s in shape]
    if len(shape) != sparse_dim + val.ndim - 1:
        raise ValueError(f"sparse_coo_tensor(): shape {shape} must have sparse_dim "
                         f"({sparse_dim}) + dense dims ({val.ndim - 1}) entries")
    if nnz and np.any(idx.max(axis=1) >= np.asarray(shape[:sparse_dim])):
        raise ValueError(f"sparse_coo_tensor(): an index is out of range for shape {shape}")
    if list(val.shape[1:]) != shape[sparse_dim:]:
        raise ValueError(f"sparse_coo_tensor(): values' dense dims {list(val.shape[1:])} do "
                         f"not match shape {shape}")
    if ind.dtype != fw.int64:
        ind = ind.astype("int64")
    return SparseCooTensor(ind, val, shape)


def sparse_csr_tensor(crows, cols, values, shape=None, dtype=None, place=None,
                      stop_gradient=True):
    """Build a CSR sparse tensor (2-D ``[M, N]`` or batched 3-D ``[B, M, N]``).

    Args:
        crows (list|numpy.ndarray|Tensor): row offsets, length ``B * (M + 1)``.
        cols (list|numpy.ndarray|Tensor): the column of each stored value, length nnz.
        values (list|numpy.ndarray|Tensor): the stored values, length nnz.
        shape (list|tuple, optional): the dense shape; when None, 2-D
            ``[len(crows) - 1, max(cols) + 1]``.
        dtype (str|fw.dtype, optional): the values' dtype. Default: inferred.
        place (optional): accepted for Paddle compatibility.
        stop_gradient (bool, optional): False makes the values require gradients. Default True.

    Returns:
        SparseCsrTensor: the sparse tensor.

    Examples:
        >>> import fw
        >>> x = fw.sparse.sparse_csr_tensor([0, 1, 2], [2, 0], [1.0, 2.0], [2, 3])
        >>> x.to_dense().numpy().tolist()
        [[0.0, 0.0, 1.0], [2.0, 0.0, 0.0]]
    """
    cr = _as_index(crows, "sparse_csr_tensor", "crows")
    co = _as_index(cols, "sparse_csr_tensor", "cols")
    val = _as_values(values, dtype, stop_gradient)
    if shape is None:
        cn = co.numpy()
        shape = [int(cr.shape[0]) - 1, int(cn.max()) + 1 if cn.size else 0]
    shape = [int(s) for s in shape]
    if len(shape) not in (2, 3):
        raise ValueError(f"sparse_csr_tensor(): shape must be 2-D or 3-D, got {shape}")
    nb = 1 if len(shape) == 2 else shape[0]
    c = cr.numpy()
    if c.ndim != 1 or c.shape[0] != nb * (shape[-2] + 1):
        raise ValueError(f"sparse_csr_tensor(): `crows` must have length {nb * (shape[-2] + 1)} "
                         f"for shape {shape}, got shape {list(c.shape)}")
    per = c.reshape(nb, shape[-2] + 1)
    if np.any(per[:, 0] != 0) or np.any(np.diff(per, axis=1) < 0):
        raise ValueError("sparse_csr_tensor(): each batch's `crows` must start at 0 and not "
                         "decrease")
    nnz = int(per[:, -1].sum())
    if co.ndim != 1 or co.shape[0] != nnz or val.ndim != 1 or val.shape[0] != nnz:
        raise ValueError(f"sparse_csr_tensor(): `cols` and `values` must be 1-D of length "
                         f"nnz={nnz}, got {list(co.shape)} and {list(val.shape)}")
    cn = co.numpy()
    if nnz and (cn.min() < 0 or cn.max() >= shape[-1]):
        raise ValueError(f"sparse_csr_tensor(): a column index is out of range for shape {shape}")
    if cr.dtype != fw.int64:
        cr = cr.astype("int64")
    if co.dtype != fw.int64:
        co = co.astype("int64")
    return SparseCsrTensor(cr, co, val, shape)


def dense_to_coo(x: fw.Tensor, sparse_dim: int) -> SparseCooTensor:
    """``x.to_sparse_coo(sparse_dim)``: the positions of the first `sparse_dim` axes
    whose slice holds a nonzero, coalesced; the values are gathered from x, so
    gradients flow back to x."""
    if not isinstance(x, fw.Tensor):
        raise TypeError(f"to_sparse_coo(): expects a dense fw.Tensor, got {type(x).__name__}")
    if not isinstance(sparse_dim, int) or not 1 <= sparse_dim <= x.ndim:
        raise ValueError(f"to_sparse_coo(): sparse_dim must be an int in [1, {x.ndim}] for "
                         f"shape {list(x.shape)}, got {sparse_dim!r}")
    shape = [int(s) for s in x.shape]
    lead = int(np.prod(shape[:sparse_dim]))
    a = x.numpy().reshape(lead, -1)
    pos = np.flatnonzero((a != 0).any(axis=1)).astype(np.int64)
    flat = fw.reshape(x, [lead] + shape[sparse_dim:])
    values = fw.index_select(flat, fw.to_tensor(pos), axis=0)
    idx = np.stack(np.unravel_index(pos, shape[:sparse_dim])).astype(np.int64) if pos.size \
        else np.zeros((sparse_dim, 0), np.int64)
    return SparseCooTensor(fw.to_tensor(idx), values, shape, coalesced=True)


def dense_to_csr(x: fw.Tensor) -> SparseCsrTensor:
    """``x.to_sparse_csr()`` for a 2-D or 3-D dense tensor."""
    if not isinstance(x, fw.Tensor) or x.ndim not in (2, 3):
        raise ValueError(f"to_sparse_csr(): expects a 2-D or 3-D dense fw.Tensor, got "
                         f"{type(x).__name__} of shape {list(getattr(x, 'shape', []))}")
    return dense_to_coo(x, x.ndim).to_sparse_csr()
