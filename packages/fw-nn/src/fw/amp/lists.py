"""The op lists of automatic mixed precision (op-table names).

- WHITE: compute-bound ops that are fast and accurate enough in float16/bfloat16
  (their float inputs are cast down).
- BLACK: ops whose results lose too much in low precision — exponentials and logs,
  reductions, softmax and losses, normalizations (their inputs are cast to float32).
- Everything else follows its inputs (mixed inputs promote to float32 by the usual
  promotion rules) at level O1; at level O2 everything not black runs low.
- NEVER: ops amp leaves alone at every level (casts, optimizer updates, integer
  and shape bookkeeping that has no float math).
"""

WHITE = frozenset({
    "matmul", "einsum", "linear", "bilinear", "conv", "conv_transpose",
    "scaled_dot_product_attention", "fused_matmul", "fused_conv",
})

BLACK = frozenset({
    "exp", "expm1", "exp2", "log", "log2", "log10", "log1p", "pow", "square", "reciprocal",
    "rsqrt", "logit", "erfinv", "lgamma", "digamma", "softplus",
    "sum", "nansum", "mean", "nanmean", "prod", "cumsum", "cumprod", "logsumexp",
    "logcumsumexp", "var", "std",
    "softmax", "log_softmax", "gumbel_softmax",
    "cross_entropy_with_softmax", "nll_loss", "binary_cross_entropy",
    "binary_cross_entropy_with_logits", "kl_div", "smooth_l1_loss", "margin_ranking_loss",
    "sigmoid_focal_loss", "ctc_loss", "hsigmoid_loss",
    "batch_norm", "layer_norm", "rms_norm", "group_norm", "instance_norm",
    "local_response_norm", "normalize", "vector_norm", "matrix_norm", "cosine_similarity",
    "pairwise_distance", "cdist",
})

NEVER_FAMILIES = frozenset({"optimizer", "random", "control", "search"})
NEVER = frozenset({"cast", "assign", "to_device", "shape", "numel", "is_empty", "view_dtype",
                   "full", "full_like", "arange", "linspace", "logspace", "eye", "one_hot",
                   "embedding", "isnan", "isinf", "isfinite", "equal", "not_equal",
                   "less_than", "less_equal", "greater_than", "greater_equal", "argmax",
                   "argmin"})
