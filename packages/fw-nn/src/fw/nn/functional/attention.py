"""``scaled_dot_product_attention`` of ``paddle.nn.functional``: the fused core op
when no dropout applies; with ``dropout_p > 0`` while training, the same
computation composed from matmul, softmax and dropout so the dropped weights are
the ones differentiated."""

from __future__ import annotations

import math

import fw
from fw.nn.functional._helpers import op
from fw.nn.functional.common import dropout

__all__ = ["scaled_dot_product_attention"]


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0,
                                 is_causal=False, training=True, name=None, scale=None):
    """Scaled dot-product attention ``softmax(q @ k^T * scale + mask) @ v`` in Paddle's
    layout ``[batch, seq_len, num_heads, head_dim]`` (not PyTorch's heads-first layout).

    Key and value may have fewer heads than the query if that number divides the
    query's (grouped-query attention).

    Args:
        query (Tensor): ``[B, L_q, H, D]``.
        key (Tensor): ``[B, L_k, H_kv, D]``.
        value (Tensor): ``[B, L_k, H_kv, D_v]``.
        attn_mask (Tensor, optional): broadcastable to ``[B, H, L_q, L_k]``; a bool mask keeps
            the True positions, a float mask is added to the scores. Default: None.
        dropout_p (float, optional): dropout on the attention weights while training.
            Default: 0.0.
        is_causal (bool, optional): mask keys after each query position. Default: False.
        training (bool, optional): whether dropout applies. Default: True.
        name (str, optional): unused, for Paddle compatibility. Default: None.
        scale (float, optional): the score scale; ``1 / sqrt(D)`` when None. Default: None.

    Returns:
        Tensor: ``[B, L_q, H, D_v]``.

    Examples:
        >>> import fw
        >>> q = fw.randn([2, 5, 4, 8])
        >>> fw.nn.functional.scaled_dot_product_attention(q, q, q, is_causal=True).shape
        [2, 5, 4, 8]
        >>> k = fw.randn([2, 7, 2, 8])
        >>> fw.nn.functional.scaled_dot_product_attention(q, k, k).shape
        [2, 5, 4, 8]
        >>> v = fw.to_tensor([[[[1.0]], [[3.0]]]])
        >>> z = fw.zeros([1, 2, 1, 1])
        >>> fw.nn.functional.scaled_dot_product_attention(z, z, v).flatten().tolist()
        [2.0, 2.0]
    """
    if not (dropout_p and training):
        return op("scaled_dot_product_attention", [query, key, value, attn_mask],
                  is_causal=is_causal, scale=scale)
    squeeze = len(query.shape) == 3
    if squeeze:
        query, key, value = query.unsqueeze(0), key.unsqueeze(0), value.unsqueeze(0)
    q = query.transpose([0, 2, 1, 3])
    k = key.transpose([0, 2, 1, 3])
    v = value.transpose([0, 2, 1, 3])
    h, hk = q.shape[1], k.shape[1]
    if hk != h:  # grouped-query attention: each kv head serves h // hk query heads
        k = fw.repeat_interleave(k, h // hk, axis=1)
        v = fw.repeat_interleave(v, h // hk, axis=1)
    s = (1.0 / math.sqrt(q.shape[-1])) if scale is None else scale
    scores = fw.matmul(q, k, transpose_y=True) * s
    lq, lk = scores.shape[-2], scores.shape[-1]
    if is_causal:
        keep = fw.tril(fw.ones([lq, lk], dtype="bool"))
        scores = fw.where(keep, scores, fw.full([], float("-inf"), scores.dtype))
    if attn_mask is not None:
        if attn_mask.dtype == fw.bool:
            scores = fw.where(attn_mask, scores, fw.full([], float("-inf"), scores.dtype))
        else:
            scores = scores + attn_mask.astype(scores.dtype)
    weights = dropout(op("softmax", [scores], axis=-1), dropout_p, training=True)
    out = fw.matmul(weights, v).transpose([0, 2, 1, 3])
    return out.squeeze(0) if squeeze else out
