"""``moe_permute`` / ``moe_unpermute``: Paddle 3.3's fused token dispatch of
mixture-of-experts layers. Paddle ships them only as CUDA kernels (with FP8 block
scales and padding alignment tuned to its GPU GEMMs); fw has no implementation, so they
raise `UnsupportedError` on every device (docs/paddle_differences.md). An MoE layer in
fw dispatches tokens with `fw.argsort` / `fw.gather` / `fw.scatter` (or
fw.distributed's alltoall across ranks)."""

from __future__ import annotations

from fw.core.errors import UnsupportedError

__all__ = ["moe_permute", "moe_unpermute"]


def _unsupported(fn):
    raise UnsupportedError(f"{fn}: Paddle's fused MoE token permutation exists only as a CUDA "
                           f"kernel; it is not supported on this device by fw (dispatch tokens "
                           f"with fw.argsort and fw.gather instead)")


def moe_permute(hidden_states, scale, expert_routemap_topk, expert_prob_topk, num_experts,
                tokens_per_expert, padding_alignment, do_gather=True, using_ue8m0_scale=False,
                return_expert_indices=False, override_buffer_size=-1, name=None):
    """Paddle's CUDA-only fused MoE dispatch; raises `UnsupportedError` in fw.

    In Paddle it groups the tokens by the experts they are routed to (the inverse is
    `moe_unpermute`). The arguments are accepted so that code naming them imports
    and fails with a clear message.

    Args:
        hidden_states (Tensor): the tokens ``[seq_len, hidden]`` (bfloat16 or float8).
        scale (Tensor|None): per-block dequantization scales of float8 tokens.
        expert_routemap_topk (Tensor): int32 ``[seq_len, top_k]`` expert ids (-1: none).
        expert_prob_topk (Tensor): float32 ``[seq_len, top_k]`` routing probabilities.
        num_experts (int): the number of experts.
        tokens_per_expert (list[int]): the tokens routed to each expert.
        padding_alignment (int): the alignment of each expert's buffer.
        do_gather (bool, optional): gather the tokens (else only the maps).
            Default: True.
        using_ue8m0_scale (bool, optional): ``scale`` packs ue8m0 factors in int32.
            Default: False.
        return_expert_indices (bool, optional): also return the expert of each row.
            Default: False.
        override_buffer_size (int, optional): the output rows; -1 computes them.
            Default: -1.
        name (str, optional): unused. Default: None.

    Returns:
        Never returns.

    Examples:
        >>> import fw
        >>> try:
        ...     fw.nn.functional.moe_permute(None, None, None, None, 2, [1, 1], 8)
        ... except NotImplementedError as e:
        ...     print(str(e).split(":")[0])
        moe_permute
    """
    _unsupported("moe_permute")


def moe_unpermute(hidden_states_unzipped, zipped_expertwise_rowmap, expert_routemap_topk,
                  token_prob_unzipped, total_zipped_tokens, num_experts,
                  using_mix_precision=True, using_weighted_combine=False, name=None):
    """Paddle's CUDA-only fused MoE combine; raises `UnsupportedError` in fw.

    In Paddle it scatters the expert outputs back to token order and sums the top-k
    copies of each token (the inverse of `moe_permute`). The arguments are accepted
    so that code naming them imports and fails with a clear message.

    Args:
        hidden_states_unzipped (Tensor): the permuted expert outputs
            ``[rows, hidden]``.
        zipped_expertwise_rowmap (Tensor): int32 ``[seq_len, num_experts]`` map from
            `moe_permute`.
        expert_routemap_topk (Tensor): int32 ``[seq_len, top_k]`` expert ids.
        token_prob_unzipped (Tensor): float32 ``[rows, 1]`` routing probabilities.
        total_zipped_tokens (int): the number of tokens before permutation.
        num_experts (int): the number of experts.
        using_mix_precision (bool, optional): accumulate in higher precision.
            Default: True.
        using_weighted_combine (bool, optional): weight each copy by its probability.
            Default: False.
        name (str, optional): unused. Default: None.

    Returns:
        Never returns.

    Examples:
        >>> import fw
        >>> try:
        ...     fw.nn.functional.moe_unpermute(None, None, None, None, 4, 2)
        ... except NotImplementedError as e:
        ...     print(str(e).split(":")[0])
        moe_unpermute
    """
    _unsupported("moe_unpermute")
