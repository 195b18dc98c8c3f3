"""Sparse attention (Paddle's ``paddle.sparse.nn.functional.attention``): the scores
are computed only at the stored positions of a CSR layout, softmax runs over each
row's stored entries, and the result multiplies the values. Semantics as Paddle's
fused kernel (paddle/phi/kernels/sparse/gpu/fused_attention_kernel.cu): scores are
scaled by 1/sqrt(head_dim), an entry is excluded (-inf) where
``key_padding_mask[batch, col] == 0`` or ``attn_mask[row, col] == 0``. Paddle runs it
on CUDA >= 11.7 only; fw on any device, built from masked_matmul, softmax and matmul,
so gradients reach query, key and value.
"""

from __future__ import annotations

import numpy as np

import fw
from fw.sparse._util import check_dense, check_sparse, to_coo

__all__ = ["attention"]


def attention(query, key, value, sparse_mask, key_padding_mask=None, attn_mask=None,
              name=None):
    """softmax(Q K^T / sqrt(d)) V with the scores kept on a sparse CSR layout.

    Args:
        query (Tensor): ``[batch_size, num_heads, seq_len, head_dim]``.
        key (Tensor): same shape as query.
        value (Tensor): same shape as query.
        sparse_mask (SparseCsrTensor): the layout, dense shape
            ``[batch_size * num_heads, seq_len, seq_len]``.
        key_padding_mask (Tensor, optional): ``[batch_size, seq_len]``; 0 excludes a key.
        attn_mask (Tensor, optional): ``[seq_len, seq_len]``; 0 excludes a (query, key) pair.
        name (str, optional): unused.

    Returns:
        Tensor: ``[batch_size, num_heads, seq_len, head_dim]``.

    Examples:
        >>> import fw
        >>> q = fw.ones([1, 1, 2, 4])
        >>> mask = fw.sparse.sparse_csr_tensor([0, 1, 3], [0, 0, 1], [1.0, 1.0, 1.0], [1, 2, 2])
        >>> v = fw.to_tensor([[[[1.0, 1, 1, 1], [3.0, 3, 3, 3]]]])
        >>> fw.sparse.nn.functional.attention(q, q, v, mask).numpy().tolist()
        [[[[1.0, 1.0, 1.0, 1.0], [2.0, 2.0, 2.0, 2.0]]]]
    """
    fn = "nn.functional.attention"
    for t, arg in ((query, "query"), (key, "key"), (value, "value")):
        check_dense(t, fn, arg)
    check_sparse(sparse_mask, fn, "sparse_mask")
    if query.ndim != 4 or list(key.shape) != list(query.shape) \
            or list(value.shape) != list(query.shape):
        raise ValueError(f"fw.sparse.{fn}(): query, key and value must be 4-D of one shape "
                         f"[batch, heads, seq_len, head_dim], got {list(query.shape)}, "
                         f"{list(key.shape)}, {list(value.shape)}")
    b, h, m, d = [int(s) for s in query.shape]
    if sparse_mask.shape != [b * h, m, m]:
        raise ValueError(f"fw.sparse.{fn}(): sparse_mask must have dense shape "
                         f"[batch*heads, seq_len, seq_len] = {[b * h, m, m]}, got "
                         f"{sparse_mask.shape}")
    if key_padding_mask is not None and list(key_padding_mask.shape) != [b, m]:
        raise ValueError(f"fw.sparse.{fn}(): key_padding_mask must be [batch, seq_len] = "
                         f"{[b, m]}, got {list(key_padding_mask.shape)}")
    if attn_mask is not None and list(attn_mask.shape) != [m, m]:
        raise ValueError(f"fw.sparse.{fn}(): attn_mask must be [seq_len, seq_len] = {[m, m]}, "
                         f"got {list(attn_mask.shape)}")
    from fw.sparse.binary import masked_matmul, matmul
    from fw.sparse.nn.functional import softmax

    q = fw.reshape(query, [b * h, m, d])
    k = fw.reshape(key, [b * h, m, d])
    v = fw.reshape(value, [b * h, m, d])
    scores = masked_matmul(q, fw.transpose(k, [0, 2, 1]), sparse_mask)
    vals = scores.values() * (1.0 / float(np.sqrt(d)))
    if key_padding_mask is not None or attn_mask is not None:
        idx = to_coo(sparse_mask).indices().numpy()  # storage order = CSR values order
        keep = np.ones(idx.shape[1], bool)
        if key_padding_mask is not None:
            keep &= key_padding_mask.numpy()[idx[0] // h, idx[2]] != 0
        if attn_mask is not None:
            keep &= attn_mask.numpy()[idx[1], idx[2]] != 0
        # masks carry no gradient: a constant 0 / -inf added to the scores
        vals = vals + fw.to_tensor(np.where(keep, 0.0, -np.inf)).astype(vals.dtype)
    probs = softmax(scores._with_values(vals))
    return fw.reshape(matmul(probs, v), [b, h, m, d])
