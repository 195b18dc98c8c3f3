"""Paddle's flash-attention variants (``paddle.nn.functional.flash_attention``) on fw.

Paddle runs these on CUDA flash-attention kernels; fw computes the same exact attention
(``softmax(q k^T * scale + mask) v``) from fw ops, so results and gradients are those of
`scaled_dot_product_attention`, with each function's own argument conventions, layouts
and return tuples:

- `flash_attn_qkvpacked`: one ``[B, L, G + 2, Hk, D]`` tensor (G query groups per
  key/value head), returns ``(out, softmax or None)`` as Paddle's math path does on CPU;
- `flash_attn_varlen_qkvpacked` / `flash_attention_v3_varlen`: sequences packed along
  the first axis, delimited by ``cu_seqlens`` (padded rows stay zero);
- `flashmask_attention`: FlashMask's column-wise row ranges (``startend_row_indices``)
  and sliding windows;
- `sparse_attention`: a CSR pattern of allowed (query, key) pairs per head.

Query head ``h`` reads key/value head ``h // (H / Hk)`` (grouped-query attention, the
flash-attention convention). A query row whose keys are all masked gives zeros (as the
flash kernels do), with zero gradient. The packed layouts follow Paddle 3.3.1's
docstrings; FP8 arguments (``q_descale``…, ``qv``) and ``block_mask`` exist only for
Paddle's Hopper kernels and raise `UnsupportedError` (docs/paddle_differences.md).
"""

from __future__ import annotations

import math

import numpy as np

import fw
from fw.core.errors import InvalidArgumentError, UnsupportedError
from fw.nn.functional.common import dropout as _dropout

__all__ = ["flash_attn_qkvpacked", "flash_attn_varlen_qkvpacked", "flash_attention_v3_varlen",
           "flashmask_attention", "sparse_attention"]

_NEG = -1e30  # a finite "minus infinity": a fully masked row stays NaN-free


def _check_float(fn, name, t):
    if not isinstance(t, fw.Tensor):
        raise InvalidArgumentError(f"{fn}: {name} must be a Tensor, got {type(t).__name__}")
    if not t.dtype.is_floating_point:
        raise InvalidArgumentError(f"{fn}: {name} must be a floating tensor, got {t.dtype}")


def _attend(fn, q, k, v, keep=None, scale=None, causal=False, dropout=0.0, training=True,
            softcap=0.0):
    """Attention of ``q [B, Hq, Lq, D]`` over ``k, v [B, Hk, Lk, D]``; `keep` a bool
    NumPy mask broadcastable to ``[B, Hq, Lq, Lk]`` (True: attend). Returns
    ``(out [B, Hq, Lq, D], weights [B, Hq, Lq, Lk], lse [B, Hq, Lq] float32)``."""
    hq, hk = q.shape[1], k.shape[1]
    if hq % hk:
        raise InvalidArgumentError(f"{fn}: the query heads ({hq}) must be a multiple of the "
                                   f"key/value heads ({hk})")
    if q.shape[-1] != k.shape[-1] or k.shape[2] != v.shape[2]:
        raise InvalidArgumentError(f"{fn}: query {q.shape}, key {k.shape} and value {v.shape} "
                                   f"do not fit (head_dim and key length must agree)")
    if hq != hk:
        k = fw.repeat_interleave(k, hq // hk, axis=1)
        v = fw.repeat_interleave(v, hq // hk, axis=1)
    s = q.shape[-1] ** -0.5 if scale is None else float(scale)
    scores = fw.matmul(q, k, transpose_y=True) * s
    if softcap and softcap > 0:
        scores = fw.tanh(scores / softcap) * softcap
    lq, lk = q.shape[2], k.shape[2]
    if causal:  # bottom-right aligned when lq != lk (flash-attention >= 2.1)
        c = np.tril(np.ones((lq, lk), bool), k=lk - lq)
        keep = c if keep is None else (keep & c)
    if keep is not None:
        keep = np.broadcast_to(keep, scores.shape)
        scores = fw.where(fw.to_tensor(keep), scores,
                          fw.full([], _NEG, scores.dtype))
    m = scores.max(axis=-1, keepdim=True).detach()
    e = fw.exp(scores - m)
    if keep is not None:
        e = e * fw.to_tensor(keep.astype(np.dtype(str(scores.dtype).split(".")[-1])))
    z = e.sum(axis=-1, keepdim=True)
    valid = z > 0
    zs = fw.where(valid, z, fw.ones_like(z))
    w = e / zs
    lse = (fw.log(zs) + m).squeeze(-1).astype("float32")
    if dropout and training:
        w_used = _dropout(w, dropout, training=True)
    else:
        w_used = w
    return fw.matmul(w_used, v), w, lse


def _bhld(t):  # [B, L, H, D] -> [B, H, L, D]
    return t.transpose([0, 2, 1, 3])


def flash_attn_qkvpacked(qkv, dropout=0.0, causal=False, return_softmax=False, *,
                         fixed_seed_offset=None, rng_name="", training=True, name=None):
    """Attention over a packed query/key/value tensor:
    ``softmax(Q K^T / sqrt(d)) V``.

    Args:
        qkv (Tensor): ``[batch, seq_len, num_heads / num_heads_k + 2, num_heads_k,
            head_dim]``: the first ``G = num_heads / num_heads_k`` slots are the query
            heads, then the key, then the value.
        dropout (float, optional): dropout on the attention weights while training.
        causal (bool, optional): each position attends to itself and earlier ones.
        return_softmax (bool, optional): also return the attention weights.
        fixed_seed_offset (Tensor, optional): accepted for Paddle compatibility (dropout
            uses fw's generator).
        rng_name (str, optional): accepted for Paddle compatibility.
        training (bool, optional): dropout applies only when True.
        name (str, optional): unused.

    Returns:
        tuple: ``out`` ``[batch, seq_len, num_heads, head_dim]`` and the weights
        ``[batch, num_heads, seq_len, seq_len]`` (None unless `return_softmax`).

    Examples:
        >>> import fw
        >>> import fw.nn.functional as F
        >>> _ = fw.seed(1)
        >>> qkv = fw.rand([1, 4, 3, 2, 8])
        >>> out, w = F.flash_attn_qkvpacked(qkv, causal=True, return_softmax=True)
        >>> out.shape, w.shape
        ([1, 4, 2, 8], [1, 2, 4, 4])
        >>> float(w[0, 0, 0, 1])  # causal: the first query sees only the first key
        0.0
    """
    fn = "flash_attn_qkvpacked"
    _check_float(fn, "qkv", qkv)
    if qkv.ndim != 5 or qkv.shape[2] < 3:
        raise InvalidArgumentError(f"{fn}: qkv must be [batch, seq_len, groups + 2, "
                                   f"num_heads_k, head_dim] with groups >= 1, got {qkv.shape}")
    b, l, _, hk, d = qkv.shape
    q = qkv[:, :, :-2].reshape([b, l, -1, d])
    k, v = qkv[:, :, -2], qkv[:, :, -1]
    out, w, _ = _attend(fn, _bhld(q), _bhld(k), _bhld(v), causal=causal, dropout=dropout,
                        training=training)
    return _bhld(out), (w if return_softmax else None)


def _cu(fn, name, t, n_rows=None):
    a = np.asarray(t.numpy() if isinstance(t, fw.Tensor) else t).astype(np.int64).ravel()
    if a.size < 2 or a[0] != 0 or np.any(np.diff(a) < 0):
        raise InvalidArgumentError(f"{fn}: {name} must be non-decreasing cumulative lengths "
                                   f"starting at 0, got {a.tolist()}")
    return a


def _varlen(fn, q, k, v, cu_q, cu_k, rows_q, rows_k, pad_q, scale, causal, dropout, training,
            window=(-1, -1), softcap=0.0, used_q=None, used_k=None, want_lse=False):
    """Per sequence b: queries at rows ``rows_q[b] + [0, len)``, keys at ``rows_k[b]…``.
    q ``[Tq, H, D]``; returns the output ``[pad_q, H, D]`` (zeros where no query) and
    the lse ``[H, pad_q]``."""
    outs, lses = [], []
    total = 0
    h, d = q.shape[1], v.shape[2]
    for bi in range(len(cu_q) - 1):
        lq = int(cu_q[bi + 1] - cu_q[bi]) if used_q is None else int(used_q[bi])
        lk = int(cu_k[bi + 1] - cu_k[bi]) if used_k is None else int(used_k[bi])
        r0, s0 = int(rows_q[bi]), int(rows_k[bi])
        if r0 > total:  # rows of no sequence (padding): zeros
            outs.append(fw.zeros([r0 - total, h, d], q.dtype))
            lses.append(fw.zeros([h, r0 - total], "float32"))
            total = r0
        if lq == 0:
            continue
        if r0 + lq > q.shape[0] or s0 + lk > k.shape[0]:
            raise InvalidArgumentError(
                f"{fn}: sequence {bi} (rows {r0}..{r0 + lq} of query, {s0}..{s0 + lk} of "
                f"key) runs past the packed tensors ({q.shape[0]} and {k.shape[0]} rows)")
        qi = q[r0:r0 + lq].transpose([1, 0, 2]).unsqueeze(0)
        ki = k[s0:s0 + lk].transpose([1, 0, 2]).unsqueeze(0)
        vi = v[s0:s0 + lk].transpose([1, 0, 2]).unsqueeze(0)
        keep = _window_keep(lq, lk, window, causal)
        o, _, lse = _attend(fn, qi, ki, vi, keep=keep, scale=scale, causal=False,
                            dropout=dropout, training=training, softcap=softcap)
        outs.append(o[0].transpose([1, 0, 2]))
        lses.append(lse[0])
        total = r0 + lq
    if pad_q > total:
        outs.append(fw.zeros([pad_q - total, h, d], q.dtype))
        lses.append(fw.zeros([h, pad_q - total], "float32"))
    return fw.concat(outs, axis=0), fw.concat(lses, axis=1)


def _window_keep(lq, lk, window, causal):
    """Bool [lq, lk]: causal (bottom-right aligned) and sliding-window masks; None if
    neither applies."""
    left, right = window
    if causal:
        right = 0
    if left < 0 and right < 0 and not causal:
        return None
    i = np.arange(lq)[:, None] + (lk - lq)  # the query's position among the keys
    j = np.arange(lk)[None, :]
    keep = np.ones((lq, lk), bool)
    if right >= 0:
        keep &= j <= i + right
    if left >= 0:
        keep &= j >= i - left
    return keep


def flash_attn_varlen_qkvpacked(qkv, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k,
                                scale, dropout=0.0, causal=False, return_softmax=False,
                                fixed_seed_offset=None, rng_name="", varlen_padded=True,
                                training=True, name=None):
    """Attention over a batch of variable-length sequences packed in one qkv tensor.

    Args:
        qkv (Tensor): ``[total_seq_len, num_heads / num_heads_k + 2, num_heads_k,
            head_dim]`` (query groups, then key, then value).
        cu_seqlens_q (Tensor): cumulative query lengths ``[batch + 1]`` (int32), from 0.
        cu_seqlens_k (Tensor): cumulative key/value lengths ``[batch + 1]``.
        max_seqlen_q (int): the padded length of a query sequence.
        max_seqlen_k (int): the padded length of a key sequence.
        scale (float): the scale of ``Q K^T``.
        dropout (float, optional): dropout on the weights while training.
        causal (bool, optional): causal mask within each sequence.
        return_softmax (bool, optional): Paddle returns the weights only from its CUDA
            kernel; fw returns None for them as well (their padded layout is kernel
            specific).
        fixed_seed_offset (Tensor, optional): accepted for Paddle compatibility.
            Default: None.
        rng_name (str, optional): accepted for Paddle compatibility. Default: "".
        varlen_padded (bool, optional): True: sequence ``b`` starts at row
            ``b * max_seqlen_q`` (rows past its length are padding, left zero); False:
            the sequences are packed back to back at ``cu_seqlens`` offsets.
        training (bool, optional): dropout applies only when True.
        name (str, optional): unused.

    Returns:
        tuple: ``out`` ``[total_seq_len, num_heads, head_dim]`` and None.

    Examples:
        >>> import fw
        >>> import fw.nn.functional as F
        >>> _ = fw.seed(1)
        >>> qkv = fw.rand([6, 3, 1, 4])
        >>> cu = fw.to_tensor([0, 2, 5], dtype="int32")
        >>> out, _ = F.flash_attn_varlen_qkvpacked(qkv, cu, cu, 3, 3, 0.5)
        >>> out.shape, float(out[2].abs().sum())  # row 2 pads the first sequence
        ([6, 1, 4], 0.0)
    """
    fn = "flash_attn_varlen_qkvpacked"
    _check_float(fn, "qkv", qkv)
    if qkv.ndim != 4 or qkv.shape[1] < 3:
        raise InvalidArgumentError(f"{fn}: qkv must be [total_seq_len, groups + 2, "
                                   f"num_heads_k, head_dim], got {qkv.shape}")
    t, _, hk, d = qkv.shape
    q = qkv[:, :-2].reshape([t, -1, d])
    k, v = qkv[:, -2], qkv[:, -1]
    cq, ck = _cu(fn, "cu_seqlens_q", cu_seqlens_q), _cu(fn, "cu_seqlens_k", cu_seqlens_k)
    if len(cq) != len(ck):
        raise InvalidArgumentError(f"{fn}: cu_seqlens_q and cu_seqlens_k describe different "
                                   f"batch sizes ({len(cq) - 1} and {len(ck) - 1})")
    nb = len(cq) - 1
    if varlen_padded:
        rows_q = np.arange(nb) * int(max_seqlen_q)
        rows_k = np.arange(nb) * int(max_seqlen_k)
    else:
        rows_q, rows_k = cq[:-1], ck[:-1]
    out, _ = _varlen(fn, q, k, v, cq, ck, rows_q, rows_k, t, scale, causal, dropout, training)
    return out, None


def flash_attention_v3_varlen(query, key, value, cu_seqlens_q, cu_seqlens_k, max_seqlen_q,
                              max_seqlen_k, seqused_q=None, seqused_k=None, softmax_scale=None,
                              causal=False, qv=None, q_descale=None, k_descale=None,
                              v_descale=None, window_size=(-1, -1), softcap=0.0, num_splits=1,
                              pack_gqa=None, sm_margin=0):
    """Variable-length attention with FlashAttention-3's arguments.

    Args:
        query (Tensor): ``[total_q, num_heads, head_dim]``, sequences back to back.
        key (Tensor): ``[total_k, num_heads_k, head_dim]``.
        value (Tensor): ``[total_k, num_heads_k, head_dim]``.
        cu_seqlens_q (Tensor): cumulative query lengths ``[batch + 1]`` (int32), from 0.
        cu_seqlens_k (Tensor): cumulative key lengths ``[batch + 1]``.
        max_seqlen_q (int): the longest query sequence.
        max_seqlen_k (int): the longest key sequence.
        seqused_q (Tensor, optional): ``[batch]`` query rows used per sequence.
        seqused_k (Tensor, optional): ``[batch]`` keys used per sequence.
        softmax_scale (float, optional): default ``head_dim ** -0.5``.
        causal (bool, optional): causal mask (bottom-right aligned).
        qv (Tensor, optional): a Hopper-only extra query input; must be None.
            Default: None.
        q_descale (Tensor, optional): an FP8 descale factor; must be None.
            Default: None.
        k_descale (Tensor, optional): likewise for k; must be None. Default: None.
        v_descale (Tensor, optional): likewise for v; must be None. Default: None.
        window_size (tuple, optional): ``(left, right)`` sliding window; -1 unbounded.
        softcap (float, optional): scores become ``softcap * tanh(scores / softcap)``.
        num_splits (int, optional): a kernel tuning knob, no effect here. Default: 1.
        pack_gqa (bool, optional): a kernel tuning knob, no effect here.
            Default: None.
        sm_margin (int, optional): a kernel tuning knob, no effect here. Default: 0.

    Returns:
        tuple: ``out`` ``[total_q, num_heads, head_dim]`` and ``softmax_lse``
        ``[num_heads, total_q]`` (float32).

    Examples:
        >>> import fw
        >>> import fw.nn.functional as F
        >>> _ = fw.seed(1)
        >>> q = fw.rand([10, 2, 8])
        >>> cu = fw.to_tensor([0, 4, 10], dtype="int32")
        >>> out, lse = F.flash_attention_v3_varlen(q, q, q, cu, cu, 6, 6, causal=True)
        >>> out.shape, lse.shape
        ([10, 2, 8], [2, 10])
    """
    fn = "flash_attention_v3_varlen"
    for n, t in (("query", query), ("key", key), ("value", value)):
        _check_float(fn, n, t)
        if t.ndim != 3:
            raise InvalidArgumentError(f"{fn}: {n} must be [tokens, heads, head_dim], got "
                                       f"{t.shape}")
    for n, t in (("qv", qv), ("q_descale", q_descale), ("k_descale", k_descale),
                 ("v_descale", v_descale)):
        if t is not None:
            raise UnsupportedError(f"{fn}: {n} (FP8 / Hopper kernels) is not supported on "
                                   f"this device")
    cq, ck = _cu(fn, "cu_seqlens_q", cu_seqlens_q), _cu(fn, "cu_seqlens_k", cu_seqlens_k)
    if len(cq) != len(ck):
        raise InvalidArgumentError(f"{fn}: cu_seqlens_q and cu_seqlens_k describe different "
                                   f"batch sizes ({len(cq) - 1} and {len(ck) - 1})")
    uq = None if seqused_q is None else np.asarray(seqused_q.numpy()).ravel()
    uk = None if seqused_k is None else np.asarray(seqused_k.numpy()).ravel()
    window = tuple(int(w) for w in window_size)
    out, lse = _varlen(fn, query, key, value, cq, ck, cq[:-1], ck[:-1], query.shape[0],
                       softmax_scale, causal, 0.0, False, window, float(softcap), uq, uk)
    return out, lse


def _flashmask_keep(fn, idx, causal, b, h, lq, lk):
    a = np.asarray(idx.numpy() if isinstance(idx, fw.Tensor) else idx).astype(np.int64)
    if a.ndim != 4 or a.shape[0] != b or a.shape[2] != lk or a.shape[1] not in (1, h) or \
            a.shape[3] not in ((1, 2) if causal else (2, 4)):
        want = "{1, 2}" if causal else "{2, 4}"
        raise InvalidArgumentError(
            f"{fn}: startend_row_indices must be [batch={b}, 1 or {h}, k_seq_len={lk}, "
            f"{want}] (causal={causal}), got {list(a.shape)}")
    rows = np.arange(lq)[None, None, :, None]
    col = [a[..., c][:, :, None, :] for c in range(a.shape[3])]  # each [b, h', 1, lk]
    if causal:
        lts = col[0]
        lte = col[1] if len(col) == 2 else np.full_like(lts, np.iinfo(np.int64).max)
        masked = (rows >= lts) & (rows < lte)
    elif len(col) == 2:  # lower-left from LTS down, upper-right above UTE
        masked = (rows >= col[0]) | (rows < col[1])
    else:
        masked = ((rows >= col[0]) & (rows < col[1])) | ((rows >= col[2]) & (rows < col[3]))
    return ~masked


def flashmask_attention(query, key, value, startend_row_indices=None, *, dropout=0.0,
                        causal=False, window_size=None, return_softmax_lse=False,
                        return_seed_offset=False, fixed_seed_offset=None, rng_name="",
                        training=True, name=None, softmax_scale=None, block_mask=None):
    """FlashMask attention: ``softmax(Q K^T * scale + M) V`` with a column-wise mask M
    given by row ranges per key column.

    Args:
        query (Tensor): ``[batch, q_seq_len, num_heads, head_dim]``.
        key (Tensor): ``[batch, k_seq_len, k_num_heads, head_dim]``.
        value (Tensor): ``[batch, k_seq_len, k_num_heads, head_dim]``.
        startend_row_indices (Tensor, optional): int32 ``[batch, 1 or heads, k_seq_len,
            n]``: for key column j, the rows masked. ``causal`` with n=1: rows
            ``>= LTS``; n=2: rows in ``[LTS, LTE)``. Not causal, n=2: rows ``>= LTS`` and
            rows ``< UTE``; n=4: rows in ``[LTS, LTE)`` and in ``[UTS, UTE)``.
        dropout (float, optional): dropout on the weights while training.
        causal (bool, optional): causal mask on top.
        window_size (int | tuple, optional): sliding window ``(left, right)`` (an int
            for both; right is 0 when causal).
        return_softmax_lse (bool, optional): also return the log-sum-exp ``[batch,
            heads, q_seq_len]`` (float32).
        return_seed_offset (bool, optional): also return the dropout seed/offset pair
            (int64 ``[2]``).
        fixed_seed_offset (Tensor, optional): accepted for Paddle compatibility.
            Default: None.
        rng_name (str, optional): accepted for Paddle compatibility. Default: "".
        training (bool, optional): dropout applies only when True.
        name (str, optional): unused.
        softmax_scale (float, optional): default ``head_dim ** -0.5``.
        block_mask (Tensor, optional): Paddle's Hopper-only block sparsity; must be None.

    Returns:
        Tensor | tuple: ``out`` ``[batch, q_seq_len, heads, head_dim]``, followed by the
        lse and the seed offset when asked for.

    Examples:
        >>> import fw
        >>> import fw.nn.functional as F
        >>> _ = fw.seed(1)
        >>> q = fw.rand([1, 4, 2, 8])
        >>> # document masking: key 0..1 only visible to rows < 2
        >>> idx = fw.to_tensor([[[[2], [2], [4], [4]]]], dtype="int32")
        >>> out, lse = F.flashmask_attention(q, q, q, idx, causal=True,
        ...                                  return_softmax_lse=True)
        >>> out.shape, lse.shape
        ([1, 4, 2, 8], [1, 2, 4])
    """
    fn = "flashmask_attention"
    for n, t in (("query", query), ("key", key), ("value", value)):
        _check_float(fn, n, t)
        if t.ndim != 4:
            raise InvalidArgumentError(f"{fn}: {n} must be [batch, seq_len, heads, head_dim], "
                                       f"got {t.shape}")
    if block_mask is not None:
        raise UnsupportedError(f"{fn}: block_mask (Paddle's Hopper kernel) is not supported "
                               f"on this device")
    b, lq, h, _ = query.shape
    lk = key.shape[1]
    keep = None
    if startend_row_indices is not None:
        keep = _flashmask_keep(fn, startend_row_indices, causal, b, h, lq, lk)
    if window_size is not None:
        w = (int(window_size), int(window_size)) if isinstance(window_size, int) else \
            tuple(int(x) for x in window_size)
        wk = _window_keep(lq, lk, w, causal)
        keep = wk if keep is None else (keep & wk)
    out, _, lse = _attend(fn, _bhld(query), _bhld(key), _bhld(value), keep=keep,
                          scale=softmax_scale, causal=causal, dropout=dropout,
                          training=training)
    res = [_bhld(out)]
    if return_softmax_lse:
        res.append(lse)
    if return_seed_offset:
        res.append(fw.zeros([2], "int64"))
    return res[0] if len(res) == 1 else tuple(res)


def sparse_attention(query, key, value, sparse_csr_offset, sparse_csr_columns,
                     key_padding_mask=None, attn_mask=None, name=None):
    """Attention restricted to a sparse pattern: query i of a head attends only to the
    keys listed in row i of that head's CSR pattern.

    Args:
        query (Tensor): ``[batch, num_heads, seq_len, head_dim]``.
        key (Tensor): ``[batch, num_heads, seq_len, head_dim]``.
        value (Tensor): ``[batch, num_heads, seq_len, head_dim]``.
        sparse_csr_offset (Tensor): int32 ``[batch, num_heads, seq_len + 1]`` row offsets.
        sparse_csr_columns (Tensor): int32 ``[batch, num_heads, nnz]`` key columns.
        key_padding_mask (Tensor, optional): ``[batch, seq_len]``; 0 masks a key.
        attn_mask (Tensor, optional): ``[seq_len, seq_len]``; 0 masks a pair.
        name (str, optional): unused.

    Returns:
        Tensor: ``[batch, num_heads, seq_len, head_dim]``.

    Examples:
        >>> import fw
        >>> import fw.nn.functional as F
        >>> q = fw.ones([1, 1, 2, 4])
        >>> off = fw.to_tensor([[[0, 1, 3]]], dtype="int32")
        >>> col = fw.to_tensor([[[0, 0, 1]]], dtype="int32")
        >>> v = fw.to_tensor([[[[1.0] * 4, [3.0] * 4]]])
        >>> F.sparse_attention(q, q, v, off, col)[0, 0, :, 0].tolist()
        [1.0, 2.0]
    """
    fn = "sparse_attention"
    for n, t in (("query", query), ("key", key), ("value", value)):
        _check_float(fn, n, t)
        if t.ndim != 4:
            raise InvalidArgumentError(f"{fn}: {n} must be [batch, heads, seq_len, head_dim], "
                                       f"got {t.shape}")
    b, h, l, _ = query.shape
    off = np.asarray(sparse_csr_offset.numpy()).astype(np.int64)
    cols = np.asarray(sparse_csr_columns.numpy()).astype(np.int64)
    if off.shape != (b, h, l + 1) or cols.ndim != 3 or cols.shape[:2] != (b, h):
        raise InvalidArgumentError(
            f"{fn}: sparse_csr_offset must be [{b}, {h}, {l + 1}] and sparse_csr_columns "
            f"[{b}, {h}, nnz], got {list(off.shape)} and {list(cols.shape)}")
    if cols.size and (cols.min() < 0 or cols.max() >= key.shape[2]):
        raise InvalidArgumentError(f"{fn}: sparse_csr_columns must lie in [0, "
                                   f"{key.shape[2]}), got {cols.min()}..{cols.max()}")
    keep = np.zeros((b, h, l, key.shape[2]), bool)
    for bi in range(b):
        for hi in range(h):
            o = off[bi, hi]
            if o[0] != 0 or np.any(np.diff(o) < 0) or o[-1] > cols.shape[2]:
                raise InvalidArgumentError(f"{fn}: sparse_csr_offset[{bi}, {hi}] is not a "
                                           f"valid CSR row offset list: {o.tolist()}")
            rows = np.repeat(np.arange(l), np.diff(o))
            keep[bi, hi, rows, cols[bi, hi, :o[-1]]] = True
    if key_padding_mask is not None:
        keep &= np.asarray(key_padding_mask.numpy()).astype(bool)[:, None, None, :]
    if attn_mask is not None:
        keep &= np.asarray(attn_mask.numpy()).astype(bool)[None, None]
    out, _, _ = _attend(fn, query, key, value, keep=keep,
                        scale=1.0 / math.sqrt(query.shape[-1]))
    return out
