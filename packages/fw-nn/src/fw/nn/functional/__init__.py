"""``fw.nn.functional`` (Paddle's ``paddle.nn.functional``): stateless functions over
the op table. Importing them from here is the public API; the submodules group them
as Paddle does (activation, common, conv, distance, extension, input, loss, norm,
pooling, vision, attention)."""

from fw.nn.functional.activation import (
    celu,
    celu_,
    elu,
    elu_,
    gelu,
    glu,
    gumbel_softmax,
    hardshrink,
    hardsigmoid,
    hardswish,
    hardtanh,
    hardtanh_,
    leaky_relu,
    leaky_relu_,
    log_sigmoid,
    log_softmax,
    logsigmoid,
    maxout,
    mish,
    prelu,
    relu,
    relu6,
    relu_,
    rrelu,
    selu,
    sigmoid,
    silu,
    softmax,
    softmax_,
    softplus,
    softshrink,
    softsign,
    swiglu,
    swish,
    tanh,
    tanh_,
    tanhshrink,
    thresholded_relu,
    thresholded_relu_,
)
from fw.nn.functional.attention import scaled_dot_product_attention
from fw.nn.functional.common import (
    alpha_dropout,
    bilinear,
    cosine_similarity,
    dropout,
    dropout1d,
    dropout2d,
    dropout3d,
    feature_alpha_dropout,
    fold,
    interpolate,
    label_smooth,
    linear,
    pad,
    unfold,
    upsample,
    zeropad2d,
)
from fw.nn.functional.conv import (
    conv1d,
    conv1d_transpose,
    conv2d,
    conv2d_transpose,
    conv3d,
    conv3d_transpose,
)
from fw.nn.functional.distance import pairwise_distance, pdist
from fw.nn.functional.extension import diag_embed, gather_tree, sequence_mask, temporal_shift
from fw.nn.functional.input import embedding, one_hot
from fw.nn.functional.loss import (
    binary_cross_entropy,
    binary_cross_entropy_with_logits,
    cosine_embedding_loss,
    cross_entropy,
    ctc_loss,
    dice_loss,
    gaussian_nll_loss,
    hinge_embedding_loss,
    hsigmoid_loss,
    kl_div,
    l1_loss,
    log_loss,
    margin_ranking_loss,
    mse_loss,
    multi_label_soft_margin_loss,
    multi_margin_loss,
    nll_loss,
    npair_loss,
    poisson_nll_loss,
    sigmoid_focal_loss,
    smooth_l1_loss,
    soft_margin_loss,
    softmax_with_cross_entropy,
    square_error_cost,
    triplet_margin_loss,
    triplet_margin_with_distance_loss,
)
from fw.nn.functional.norm import (
    batch_norm,
    group_norm,
    instance_norm,
    layer_norm,
    local_response_norm,
    normalize,
    rms_norm,
)
from fw.nn.functional.pooling import (
    adaptive_avg_pool1d,
    adaptive_avg_pool2d,
    adaptive_avg_pool3d,
    adaptive_max_pool1d,
    adaptive_max_pool2d,
    adaptive_max_pool3d,
    avg_pool1d,
    avg_pool2d,
    avg_pool3d,
    lp_pool1d,
    lp_pool2d,
    max_pool1d,
    max_pool2d,
    max_pool3d,
    max_unpool1d,
    max_unpool2d,
    max_unpool3d,
)
from fw.nn.functional.vision import (
    affine_grid,
    channel_shuffle,
    grid_sample,
    pixel_shuffle,
    pixel_unshuffle,
)

__all__ = [n for n in dir() if not n.startswith("_") and n not in (
    "activation", "attention", "common", "conv", "distance", "extension", "input", "loss",
    "norm", "pooling", "vision")]

# Paddle 3.3's PyTorch-style argument aliases (F.softmax(x, dim=1), F.conv2d(input=…)): the
# table extracted from Paddle's source, applied once here at the public layer
from fw.core.aliases import apply as _apply_aliases  # noqa: E402

_apply_aliases(globals(), "paddle.nn.functional", "fw.nn.functional")

# Paddle 3.3's flash-attention variants, fractional max pooling and the remaining losses
# (new modules, kept after the alias pass above: their argument names are Paddle's own)
from fw.nn.functional import flash_attention  # noqa: E402
from fw.nn.functional.flash_attention import (  # noqa: E402
    flash_attention_v3_varlen,
    flash_attn_qkvpacked,
    flash_attn_varlen_qkvpacked,
    flashmask_attention,
    sparse_attention,
)
from fw.nn.functional.fractional_pool import (  # noqa: E402
    fractional_max_pool2d,
    fractional_max_pool3d,
)
from fw.nn.functional.margin_loss import (  # noqa: E402
    adaptive_log_softmax_with_loss,
    class_center_sample,
    margin_cross_entropy,
    multi_label_margin_loss,
    rnnt_loss,
)

__all__ += ["flash_attention_v3_varlen", "flash_attn_qkvpacked", "flash_attn_varlen_qkvpacked",
            "flashmask_attention", "sparse_attention", "fractional_max_pool2d",
            "fractional_max_pool3d", "adaptive_log_softmax_with_loss", "class_center_sample",
            "margin_cross_entropy", "multi_label_margin_loss", "rnnt_loss"]
from fw.nn.functional.moe import moe_permute, moe_unpermute  # noqa: E402

__all__ += ["moe_permute", "moe_unpermute"]
