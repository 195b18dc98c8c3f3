"""Activations of sparse tensors (Paddle's ``paddle.sparse.nn.functional``): each
acts on the stored values; softmax normalises over the stored entries of each row
(the last axis), as Paddle's sparse softmax does (missing entries are not -inf
logits: they are absent)."""

from __future__ import annotations

import numpy as np

import fw
import fw.nn.functional as F
from fw.sparse._util import check_sparse, gather_rows, linear, scatter_rows, to_coo
from fw.sparse.nn.attention import attention
from fw.sparse.nn.conv import conv2d, conv3d, max_pool3d, subm_conv2d, subm_conv3d

__all__ = ["attention", "conv2d", "conv3d", "leaky_relu", "max_pool3d", "relu", "relu6", "softmax",
           "subm_conv2d", "subm_conv3d"]


def relu(x, name=None):
    """max(x, 0) of each stored value.

    Args:
        x (SparseCooTensor|SparseCsrTensor): the input.
        name (str, optional): unused.

    Returns:
        SparseCooTensor|SparseCsrTensor: same format and pattern.

    Examples:
        >>> import fw
        >>> x = fw.sparse.sparse_coo_tensor([[0, 2]], [-1.0, 2.0], [3])
        >>> fw.sparse.nn.functional.relu(x).values().numpy().tolist()
        [0.0, 2.0]
    """
    check_sparse(x, "nn.functional.relu")
    return x._with_values(F.relu(x.values()))


def relu6(x, name=None):
    """min(max(x, 0), 6) of each stored value.

    Args:
        x (SparseCooTensor|SparseCsrTensor): the input.
        name (str, optional): unused.

    Returns:
        SparseCooTensor|SparseCsrTensor: same format and pattern.

    Examples:
        >>> import fw
        >>> x = fw.sparse.sparse_coo_tensor([[0, 2]], [-1.0, 8.0], [3])
        >>> fw.sparse.nn.functional.relu6(x).values().numpy().tolist()
        [0.0, 6.0]
    """
    check_sparse(x, "nn.functional.relu6")
    return x._with_values(F.relu6(x.values()))


def leaky_relu(x, negative_slope=0.01, name=None):
    """x if x > 0 else negative_slope * x, of each stored value.

    Args:
        x (SparseCooTensor|SparseCsrTensor): the input.
        negative_slope (float, optional): slope for negative values. Default 0.01.
        name (str, optional): unused.

    Returns:
        SparseCooTensor|SparseCsrTensor: same format and pattern.

    Examples:
        >>> import fw
        >>> x = fw.sparse.sparse_coo_tensor([[0, 2]], [-1.0, 2.0], [3])
        >>> fw.sparse.nn.functional.leaky_relu(x, 0.5).values().numpy().tolist()
        [-0.5, 2.0]
    """
    check_sparse(x, "nn.functional.leaky_relu")
    return x._with_values(F.leaky_relu(x.values(), negative_slope))


def softmax(x, axis=-1, name=None):
    """Softmax over the stored entries of each row (the last axis).

    Args:
        x (SparseCooTensor|SparseCsrTensor): the input (no dense dims).
        axis (int, optional): must be -1 (the only axis Paddle supports). Default -1.
        name (str, optional): unused.

    Returns:
        SparseCooTensor|SparseCsrTensor: same format and pattern; each row's stored
        values sum to 1.

    Examples:
        >>> import fw
        >>> x = fw.sparse.sparse_csr_tensor([0, 1, 3], [2, 0, 2], [1.0, 2.0, 3.0], [2, 3])
        >>> [round(v, 4) for v in fw.sparse.nn.functional.softmax(x).values().numpy().tolist()]
        [1.0, 0.2689, 0.7311]
    """
    check_sparse(x, "nn.functional.softmax")
    if axis not in (-1, x.ndim - 1):
        raise ValueError(f"fw.sparse.nn.functional.softmax(): only axis=-1 is supported, got "
                         f"axis={axis}")
    coo = to_coo(x)
    if coo.dense_dim() != 0:
        raise ValueError(f"fw.sparse.nn.functional.softmax(): needs no dense dims, got shape "
                         f"{coo.shape} with sparse_dim {coo.sparse_dim()}")
    idx = coo.indices().numpy()
    group = linear(idx[:-1], coo.shape[:-1]) if coo.ndim > 1 else np.zeros(idx.shape[1], np.int64)
    uniq, g = np.unique(group, return_inverse=True)
    g = g.reshape(-1)
    v = coo.values()
    # the row maximum only shifts for stability: a constant, outside the graph
    vn = v.numpy().astype(np.float64)
    row_max = np.full(uniq.size, -np.inf)
    np.maximum.at(row_max, g, vn)
    shift = fw.to_tensor(row_max[g].astype(vn.dtype)).astype(v.dtype)
    e = fw.exp(v - shift)
    denom = gather_rows(scatter_rows(e, g, uniq.size), g)
    # a CSR's COO view keeps the storage order, so the values line up with x's
    return x._with_values(e / denom)
