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

    Args:
        hidden_states, scale, expert_routemap_topk, expert_prob_topk, num_experts,
        tokens_per_expert, padding_alignment, do_gather, using_ue8m0_scale,
        return_expert_indices, override_buffer_size, name: Paddle's arguments.

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

    Args:
        hidden_states_unzipped, zipped_expertwise_rowmap, expert_routemap_topk,
        token_prob_unzipped, total_zipped_tokens, num_experts, using_mix_precision,
        using_weighted_combine, name: Paddle's arguments.

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
