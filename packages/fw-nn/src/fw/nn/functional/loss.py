"""Loss functions of ``paddle.nn.functional``: the fused ones on fw-core's loss ops
(see `fw.core.ops.loss` for their exact reductions), the others composed of fw ops
(so their gradients come from the ops' rules). ``reduction`` is ``"none"``,
``"mean"`` or ``"sum"``."""

from __future__ import annotations

import math

import fw
from fw.core.errors import InvalidArgumentError
from fw.core.ir import Value
from fw.nn.functional._helpers import check_reduction, op, reduce_loss
from fw.nn.functional.activation import log_sigmoid
from fw.nn.functional.distance import pairwise_distance

__all__ = ["cross_entropy", "softmax_with_cross_entropy", "nll_loss", "mse_loss", "l1_loss",
           "smooth_l1_loss", "binary_cross_entropy", "binary_cross_entropy_with_logits",
           "kl_div", "margin_ranking_loss", "triplet_margin_loss",
           "triplet_margin_with_distance_loss", "cosine_embedding_loss", "hinge_embedding_loss",
           "ctc_loss", "sigmoid_focal_loss", "log_loss", "poisson_nll_loss",
           "gaussian_nll_loss", "soft_margin_loss", "multi_label_soft_margin_loss",
           "multi_margin_loss", "hsigmoid_loss", "square_error_cost", "dice_loss", "npair_loss"]


def _float_like(t, ref):
    return t if t.dtype == ref.dtype else t.astype(ref.dtype)


# ---------------------------------------------------------------- cross entropy family
def cross_entropy(input, label, weight=None, ignore_index=-100, reduction="mean",  # noqa: A002
                  soft_label=False, axis=-1, use_softmax=True, label_smoothing=0.0, name=None):
    """Softmax cross entropy (Paddle's ``F.cross_entropy``).

    Args:
        input: logits (probabilities with ``use_softmax=False``), classes along `axis`.
        label: int class ids (input's shape with `axis` of size 1 or removed), or
            probabilities of input's shape with ``soft_label=True``.
        weight: per-class weights ``[C]``.
        ignore_index: hard labels equal to it contribute 0 (and are left out of the mean).
        reduction: ``"mean"`` divides by the sum of the sample weights (Paddle's rule).
        label_smoothing: in [0, 1): hard labels become ``(1-e) * one_hot + e / C``.

    >>> import fw
    >>> logits = fw.to_tensor([[2.0, 0.0], [0.0, 2.0]])
    >>> round(fw.nn.functional.cross_entropy(logits, fw.to_tensor([0, 1])).item(), 4)
    0.1269
    """
    if not 0.0 <= label_smoothing < 1.0:
        raise InvalidArgumentError(f"cross_entropy: 'label_smoothing' must be in [0, 1), got "
                                   f"{label_smoothing}")
    if label_smoothing > 0.0:
        nd = len(input.shape)
        ax = axis % nd
        c = input.shape[ax]
        if not soft_label:
            lab = label
            if len(lab.shape) == nd:
                lab = lab.squeeze(ax)
            lab = op("one_hot", [lab.astype("int64")], num_classes=c)
            if ax != nd - 1:
                lab = fw.moveaxis(lab, -1, ax)
            label = lab.astype(input.dtype)
        label = label * (1.0 - label_smoothing) + label_smoothing / c
        soft_label = True
    return op("cross_entropy_with_softmax", [input, label, weight], soft_label=soft_label,
              ignore_index=ignore_index, reduction=reduction, axis=axis,
              use_softmax=use_softmax)[0]


def softmax_with_cross_entropy(logits, label, soft_label=False, ignore_index=-100,
                               numeric_stable_mode=True, return_softmax=False, axis=-1):
    """Unreduced softmax cross entropy: the loss has logits' shape with `axis` of size 1;
    with ``return_softmax`` also the softmax of logits."""
    loss, sm = op("cross_entropy_with_softmax", [logits, label, None], soft_label=soft_label,
                  ignore_index=ignore_index, reduction="none", axis=axis, use_softmax=True)
    ax = axis % len(logits.shape)
    if len(loss.shape) < len(logits.shape):
        loss = loss.unsqueeze(ax)
    return (loss, sm) if return_softmax else loss


def nll_loss(input, label, weight=None, ignore_index=-100, reduction="mean",  # noqa: A002
             name=None):
    """Negative log likelihood of log-probabilities input ``[N, C, *d]`` at int labels
    ``[N, *d]``."""
    return op("nll_loss", [input, label, weight], ignore_index=ignore_index,
              reduction=reduction)


def binary_cross_entropy(input, label, weight=None, reduction="mean", name=None):  # noqa: A002
    """-(label * log(input) + (1 - label) * log(1 - input)) (logs clipped at -100)."""
    return op("binary_cross_entropy", [input, label, weight], reduction=reduction)


def binary_cross_entropy_with_logits(logit, label, weight=None, reduction="mean",
                                     pos_weight=None, name=None):
    """Sigmoid + binary cross entropy in one numerically stable step."""
    return op("binary_cross_entropy_with_logits", [logit, label, weight, pos_weight],
              reduction=reduction)


def sigmoid_focal_loss(logit, label, normalizer=None, alpha=0.25, gamma=2.0, reduction="sum",
                       name=None):
    """Focal loss on sigmoid logits (RetinaNet), divided by `normalizer` when given."""
    return op("sigmoid_focal_loss", [logit, label, normalizer], alpha=alpha, gamma=gamma,
              reduction=reduction)


# ---------------------------------------------------------------- regression losses
def mse_loss(input, label, reduction="mean", name=None):  # noqa: A002
    """(input - label)^2, reduced.

    >>> import fw
    >>> round(fw.nn.functional.mse_loss(fw.to_tensor(1.5), fw.to_tensor(1.7)).item(), 4)
    0.04
    """
    check_reduction(reduction, "mse_loss")
    d = input - label
    return reduce_loss(d * d, reduction, "mse_loss")


def square_error_cost(input, label):  # noqa: A002
    """(input - label)^2 elementwise (no reduction)."""
    d = input - label
    return d * d


def l1_loss(input, label, reduction="mean", name=None):  # noqa: A002
    """|input - label|, reduced."""
    check_reduction(reduction, "l1_loss")
    return reduce_loss(fw.abs(input - label), reduction, "l1_loss")


def smooth_l1_loss(input, label, reduction="mean", delta=1.0, name=None):  # noqa: A002
    """Huber loss: 0.5 d^2 where |d| < delta, else delta (|d| - 0.5 delta)."""
    return op("smooth_l1_loss", [input, label], reduction=reduction, delta=delta)


def kl_div(input, label, reduction="mean", log_target=False, name=None):  # noqa: A002
    """label * (log(label) - input) for log-probabilities input; ``"batchmean"`` divides
    the sum by the batch size."""
    return op("kl_div", [input, label], reduction=reduction, log_target=log_target)


def log_loss(input, label, epsilon=1e-4, name=None):  # noqa: A002
    """-label * log(input + eps) - (1 - label) * log(1 - input + eps), elementwise."""
    return -label * fw.log(input + epsilon) - (1.0 - label) * fw.log(1.0 - input + epsilon)


def poisson_nll_loss(input, label, log_input=True, full=False, epsilon=1e-8,  # noqa: A002
                     reduction="mean", name=None):
    """Poisson negative log likelihood: exp(input) - label * input (log_input), or
    input - label * log(input + epsilon); ``full`` adds Stirling's term where label > 1."""
    check_reduction(reduction, "poisson_nll_loss")
    if epsilon <= 0:
        raise InvalidArgumentError(f"poisson_nll_loss: 'epsilon' must be > 0, got {epsilon}")
    label = _float_like(label, input)
    if log_input:
        loss = fw.exp(input) - label * input
    else:
        loss = input - label * fw.log(input + epsilon)
    if full:
        safe = fw.where(label > 1, label, fw.ones_like(label))
        stirling = safe * fw.log(safe) - safe + 0.5 * fw.log(2.0 * math.pi * safe)
        loss = loss + fw.where(label > 1, stirling, fw.zeros_like(stirling))
    return reduce_loss(loss, reduction, "poisson_nll_loss")


def gaussian_nll_loss(input, label, variance, full=False, epsilon=1e-6,  # noqa: A002
                      reduction="mean", name=None):
    """Gaussian negative log likelihood 0.5 * (log(var) + (input - label)^2 / var)
    (+ 0.5 log(2 pi) with ``full``); variance is clipped below at `epsilon`."""
    check_reduction(reduction, "gaussian_nll_loss")
    vs, xs = list(variance.shape), list(input.shape)
    if vs != xs:
        if xs[:-1] == vs:
            variance = variance.unsqueeze(-1)
        elif not (xs[:-1] == vs[:-1] and vs[-1:] == [1]):
            raise InvalidArgumentError(f"gaussian_nll_loss: variance {vs} must have input's "
                                       f"shape {xs}, or it without the last axis, or that axis 1")
    if variance.size and not isinstance(variance, Value) and \
            bool((variance < 0).any()):
        raise InvalidArgumentError("gaussian_nll_loss: variance has negative entries")
    var = fw.clip(variance, min=epsilon)
    d = input - label
    loss = 0.5 * (fw.log(var) + d * d / var)
    if full:
        loss = loss + 0.5 * math.log(2.0 * math.pi)
    return reduce_loss(loss, reduction, "gaussian_nll_loss")


# ---------------------------------------------------------------- margin / embedding losses
def margin_ranking_loss(input, other, label, margin=0.0, reduction="mean",  # noqa: A002
                        name=None):
    """max(0, -label * (input - other) + margin)."""
    return op("margin_ranking_loss", [input, other, label], margin=margin, reduction=reduction)


def triplet_margin_with_distance_loss(input, positive, negative,  # noqa: A002
                                      distance_function=None, margin=1.0, swap=False,
                                      reduction="mean", name=None):
    """max(d(a, p) - d(a, n) + margin, 0) with a distance function (pairwise L2 by
    default); ``swap`` uses min(d(a, n), d(p, n)) as the negative distance."""
    check_reduction(reduction, "triplet_margin_with_distance_loss")
    dist = distance_function if distance_function is not None else pairwise_distance
    d_pos = dist(input, positive)
    d_neg = dist(input, negative)
    if swap:
        d_neg = fw.minimum(d_neg, dist(positive, negative))
    loss = fw.clip(d_pos - d_neg + margin, min=0.0)
    return reduce_loss(loss, reduction, "triplet_margin_with_distance_loss")


def triplet_margin_loss(input, positive, negative, margin=1.0, p=2, epsilon=1e-6,  # noqa: A002
                        swap=False, reduction="mean", name=None):
    """max(||a - p||_p - ||a - n||_p + margin, 0) (distances with `epsilon` as in
    `pairwise_distance`)."""
    return triplet_margin_with_distance_loss(
        input, positive, negative,
        lambda a, b: pairwise_distance(a, b, p=p, epsilon=epsilon), margin, swap, reduction)


def cosine_embedding_loss(input1, input2, label, margin=0, reduction="mean", name=None):
    """1 - cos(x1, x2) where label == 1, max(0, cos(x1, x2) - margin) where label == -1
    (cosine over the last axis)."""
    check_reduction(reduction, "cosine_embedding_loss")
    dot = (input1 * input2).sum(axis=-1)
    m1 = (input1 * input1).sum(axis=-1) + 1e-11
    m2 = (input2 * input2).sum(axis=-1) + 1e-11
    cos = dot / fw.sqrt(m1 * m2)
    lab = label.astype(cos.dtype)
    pos = 1.0 - cos
    neg = fw.clip(cos - margin, min=0.0)
    zero = fw.zeros_like(cos)
    loss = fw.where(lab == 1, pos, zero) + fw.where(lab == -1, neg, zero)
    return reduce_loss(loss, reduction, "cosine_embedding_loss")


def hinge_embedding_loss(input, label, margin=1.0, reduction="mean", name=None):  # noqa: A002
    """input where label == 1, max(0, margin - input) where label == -1."""
    check_reduction(reduction, "hinge_embedding_loss")
    lab = _float_like(label, input)
    zero = fw.zeros_like(input)
    loss = fw.where(lab == 1, input, zero) + fw.where(lab == -1,
                                                      fw.clip(margin - input, min=0.0), zero)
    return reduce_loss(loss, reduction, "hinge_embedding_loss")


def soft_margin_loss(input, label, reduction="mean", name=None):  # noqa: A002
    """log(1 + exp(-label * input))."""
    check_reduction(reduction, "soft_margin_loss")
    loss = -log_sigmoid(_float_like(label, input) * input)
    return reduce_loss(loss, reduction, "soft_margin_loss")


def multi_label_soft_margin_loss(input, label, weight=None, reduction="mean",  # noqa: A002
                                 name=None):
    """-mean over classes of (label log sigmoid(x) + (1 - label) log sigmoid(-x)),
    optionally weighted per class."""
    check_reduction(reduction, "multi_label_soft_margin_loss")
    lab = _float_like(label, input)
    loss = -(lab * log_sigmoid(input) + (1.0 - lab) * log_sigmoid(-input))
    if weight is not None:
        loss = loss * weight
    return reduce_loss(loss.mean(axis=-1), reduction, "multi_label_soft_margin_loss")


def multi_margin_loss(input, label, p=1, margin=1.0, weight=None, reduction="mean",  # noqa: A002
                      name=None):
    """Multi-class hinge loss: the mean over classes j != y of
    ``max(0, margin - x[y] + x[j])^p`` (times ``weight[y]``); input ``[N, C]``, label
    ``[N]``. (With a weight and p > 1 fw scales the powered term, as PyTorch does.)"""
    check_reduction(reduction, "multi_margin_loss")
    if p not in (1, 2):
        raise InvalidArgumentError(f"multi_margin_loss: 'p' must be 1 or 2, got {p}")
    c = input.shape[1]
    idx = label.reshape([-1, 1]).astype("int64")
    xy = fw.take_along_axis(input, idx, axis=1)
    terms = fw.clip(margin - xy + input, min=0.0)
    if p == 2:
        terms = terms * terms
    # the j == y term is max(0, margin)^p: drop it from the mean
    loss = terms.sum(axis=1) - max(margin, 0.0) ** p
    loss = loss / c
    if weight is not None:
        loss = loss * fw.gather(weight, idx.reshape([-1]))
    return reduce_loss(loss, reduction, "multi_margin_loss")


# ---------------------------------------------------------------- sequence / structured losses
def ctc_loss(log_probs, labels, input_lengths, label_lengths, blank=0, reduction="mean",
             norm_by_times=False):
    """Connectionist temporal classification loss.

    Args:
        log_probs: ``[T, B, C]`` unnormalised scores (softmax is applied inside, as
            Paddle's warp-ctc does).
        labels: ``[B, L]`` int labels (padded); input_lengths/label_lengths ``[B]``.
        reduction: ``"mean"`` averages ``loss / label_lengths``; ``"sum"`` sums;
            ``"none"`` gives the ``[B]`` losses.
    """
    check_reduction(reduction, "ctc_loss")
    loss = op("ctc_loss", [log_probs, labels, input_lengths, label_lengths], blank=blank,
              norm_by_times=norm_by_times)[0]
    if reduction == "mean":
        return (loss / label_lengths.astype(loss.dtype)).mean()
    if reduction == "sum":
        return loss.sum()
    return loss


def hsigmoid_loss(input, label, num_classes, weight, bias=None, path_table=None,  # noqa: A002
                  path_code=None, is_sparse=False, name=None):
    """Hierarchical sigmoid loss ``[N, 1]`` over the default complete binary tree of
    `num_classes` leaves, or a custom tree (`path_table`/`path_code`). ``is_sparse`` is
    accepted; gradients are dense."""
    return op("hsigmoid_loss", [input, label, weight, bias, path_table, path_code],
              num_classes=num_classes)


def dice_loss(input, label, epsilon=1e-5, name=None):  # noqa: A002
    """1 - 2|X∩Y| / (|X| + |Y|) averaged over the batch; input ``[N, ..., C]``
    probabilities, label ``[N, ..., 1]`` int class ids."""
    c = input.shape[-1]
    if list(label.shape[:-1]) != list(input.shape[:-1]) or label.shape[-1] != 1:
        raise InvalidArgumentError(f"dice_loss: label {list(label.shape)} must be input's "
                                   f"shape {list(input.shape)} with a last axis of size 1")
    oh = op("one_hot", [label.squeeze(-1).astype("int64")], num_classes=c).astype(input.dtype)
    axes = list(range(1, len(input.shape)))
    inter = (input * oh).sum(axis=axes)
    denom = input.sum(axis=axes) + oh.sum(axis=axes)
    return (1.0 - 2.0 * inter / (denom + epsilon)).mean()


def npair_loss(anchor, positive, labels, l2_reg=0.002):
    """N-pair loss: softmax cross entropy of the anchor-positive similarities against the
    same-label pattern (rows normalised), plus ``0.25 * l2_reg`` times the mean squared
    norms of anchor and positive."""
    n = labels.shape[0]
    lab = labels.reshape([n, 1])
    same = (lab == lab.reshape([1, n])).astype(anchor.dtype)
    target = same / same.sum(axis=1, keepdim=True)
    l2 = (anchor * anchor).sum(axis=1).mean() + (positive * positive).sum(axis=1).mean()
    sim = fw.matmul(anchor, positive, transpose_y=True)
    ce = cross_entropy(sim, target, soft_label=True)
    return l2 * (0.25 * l2_reg) + ce

