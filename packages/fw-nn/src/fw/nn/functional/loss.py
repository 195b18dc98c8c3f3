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
    """Softmax cross entropy between logits and labels.

    Computes ``-sum(label * log(softmax(input)))`` along ``axis``. Hard labels are
    class ids; with ``weight`` each sample's loss is multiplied by the weight of its
    class and ``"mean"`` divides by the sum of those weights (not by the sample count),
    as Paddle does. Labels equal to ``ignore_index`` contribute 0 and are left out of
    the mean.

    Args:
        input (Tensor): logits (or probabilities with ``use_softmax=False``), float, with
            the classes along ``axis``, e.g. ``[N, C]``.
        label (Tensor): int64 class ids of the input's shape without ``axis`` (or with it
            of size 1), or probabilities of the input's shape with ``soft_label=True``.
        weight (Tensor, optional): per-class weights ``[C]``. Default: None.
        ignore_index (int, optional): a hard label value that is ignored. Default: -100.
        reduction (str, optional): ``"none"`` (per-element loss), ``"mean"`` or ``"sum"``.
            Default: "mean".
        soft_label (bool, optional): ``label`` holds probabilities of the input's shape.
            Default: False.
        axis (int, optional): the class axis. Default: -1.
        use_softmax (bool, optional): apply softmax to ``input`` first; False when
            ``input`` already holds probabilities. Default: True.
        label_smoothing (float, optional): in [0, 1): hard labels become
            ``(1 - e) * one_hot + e / C``. Default: 0.0.
        name (str, optional): unused, for Paddle compatibility. Default: None.

    Returns:
        Tensor: the loss; a 0-D tensor unless ``reduction`` is ``"none"``. With ``"none"`` the
            per-sample losses (the label's shape).

    Examples:
        >>> import fw
        >>> logits = fw.to_tensor([[2.0, 0.0, 0.0], [0.0, 2.0, 0.0]])
        >>> label = fw.to_tensor([0, 2])
        >>> round(fw.nn.functional.cross_entropy(logits, label).item(), 4)
        1.2395
        >>> fw.nn.functional.cross_entropy(logits, label, reduction='none').shape
        [2]
        >>> soft = fw.to_tensor([[0.5, 0.5, 0.0], [0.0, 0.0, 1.0]])
        >>> round(fw.nn.functional.cross_entropy(logits, soft, soft_label=True).item(), 4)
        1.7395
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
    """Unreduced softmax cross entropy (Paddle's older API): the loss keeps the logits'
    shape with ``axis`` of size 1.

    Args:
        logits (Tensor): float logits with the classes along ``axis``.
        label (Tensor): int64 ids (``axis`` of size 1) or, with ``soft_label``, probabilities.
        soft_label (bool, optional): ``label`` holds probabilities. Default: False.
        ignore_index (int, optional): a hard label value that gets loss 0. Default: -100.
        numeric_stable_mode (bool, optional): accepted; the computation is always stable.
            Default: True.
        return_softmax (bool, optional): also return the softmax of ``logits``. Default: False.
        axis (int, optional): the class axis. Default: -1.

    Returns:
        Tensor, or (Tensor, Tensor) with ``return_softmax``: the loss and the softmax.

    Examples:
        >>> import fw
        >>> logits = fw.to_tensor([[2.0, 0.0], [0.0, 2.0]])
        >>> loss = fw.nn.functional.softmax_with_cross_entropy(logits, fw.to_tensor([[0], [0]]))
        >>> loss.shape, [round(v, 4) for v in loss.flatten().tolist()]
        ([2, 1], [0.1269, 2.1269])
    """
    loss, sm = op("cross_entropy_with_softmax", [logits, label, None], soft_label=soft_label,
                  ignore_index=ignore_index, reduction="none", axis=axis, use_softmax=True)
    ax = axis % len(logits.shape)
    if len(loss.shape) < len(logits.shape):
        loss = loss.unsqueeze(ax)
    return (loss, sm) if return_softmax else loss


def nll_loss(input, label, weight=None, ignore_index=-100, reduction="mean",  # noqa: A002
             name=None):
    """Negative log likelihood: ``-input[n, label[n]]`` for log-probabilities ``input``
    (e.g. the output of `log_softmax`), weighted per class.

    Args:
        input (Tensor): float log-probabilities ``[N, C]`` or ``[N, C, *d]``.
        label (Tensor): int64 class ids ``[N]`` or ``[N, *d]``.
        weight (Tensor, optional): per-class weights ``[C]``; ``"mean"`` divides by their
            sum over the batch. Default: None.
        ignore_index (int, optional): a label value that is ignored. Default: -100.
        reduction (str, optional): ``"none"`` (per-element loss), ``"mean"`` or ``"sum"``.
            Default: "mean".
        name (str, optional): unused, for Paddle compatibility. Default: None.

    Returns:
        Tensor: the loss; a 0-D tensor unless ``reduction`` is ``"none"``.

    Examples:
        >>> import fw
        >>> logp = fw.nn.functional.log_softmax(fw.to_tensor([[2.0, 0.0], [0.0, 2.0]]), axis=1)
        >>> round(fw.nn.functional.nll_loss(logp, fw.to_tensor([0, 1])).item(), 4)
        0.1269
    """
    return op("nll_loss", [input, label, weight], ignore_index=ignore_index,
              reduction=reduction)


def binary_cross_entropy(input, label, weight=None, reduction="mean", name=None):  # noqa: A002
    """Binary cross entropy of probabilities:
    ``-(label * log(input) + (1 - label) * log(1 - input))``, with the logs clipped
    below at -100 (so 0 and 1 give finite losses).

    Args:
        input (Tensor): probabilities in [0, 1] (e.g. a sigmoid output).
        label (Tensor): targets in [0, 1], the input's shape and dtype.
        weight (Tensor, optional): a rescaling weight broadcast to the input. Default: None.
        reduction (str, optional): ``"none"`` (per-element loss), ``"mean"`` or ``"sum"``.
            Default: "mean".
        name (str, optional): unused, for Paddle compatibility. Default: None.

    Returns:
        Tensor: the loss; a 0-D tensor unless ``reduction`` is ``"none"``.

    Examples:
        >>> import fw
        >>> p = fw.to_tensor([0.9, 0.2])
        >>> round(fw.nn.functional.binary_cross_entropy(p, fw.to_tensor([1.0, 0.0])).item(), 4)
        0.1643
    """
    return op("binary_cross_entropy", [input, label, weight], reduction=reduction)


def binary_cross_entropy_with_logits(logit, label, weight=None, reduction="mean",
                                     pos_weight=None, name=None):
    """Sigmoid followed by binary cross entropy, computed in one numerically stable
    step: ``max(x, 0) - x * label + log(1 + exp(-|x|))`` (with ``pos_weight``
    scaling the positive term).

    Args:
        logit (Tensor): float logits.
        label (Tensor): targets in [0, 1], the logit's shape.
        weight (Tensor, optional): a rescaling weight broadcast to the logit. Default: None.
        reduction (str, optional): ``"none"`` (per-element loss), ``"mean"`` or ``"sum"``.
            Default: "mean".
        pos_weight (Tensor, optional): the weight of positive examples, per class (broadcast
            along the last axis). Default: None.
        name (str, optional): unused, for Paddle compatibility. Default: None.

    Returns:
        Tensor: the loss; a 0-D tensor unless ``reduction`` is ``"none"``.

    Examples:
        >>> import fw
        >>> x, y = fw.to_tensor([2.0, -1.0]), fw.to_tensor([1.0, 0.0])
        >>> round(fw.nn.functional.binary_cross_entropy_with_logits(x, y).item(), 4)
        0.2201
    """
    return op("binary_cross_entropy_with_logits", [logit, label, weight, pos_weight],
              reduction=reduction)


def sigmoid_focal_loss(logit, label, normalizer=None, alpha=0.25, gamma=2.0, reduction="sum",
                       name=None):
    """Focal loss on sigmoid logits (RetinaNet): the binary cross entropy scaled by
    ``alpha_t * (1 - p_t) ** gamma`` so that easy examples count less.

    Args:
        logit (Tensor): float logits ``[N, *]``.
        label (Tensor): targets in {0, 1}, the logit's shape.
        normalizer (Tensor, optional): a 1-element tensor the loss is divided by (e.g. the
            number of positives). Default: None.
        alpha (float, optional): the weight of positives (``1 - alpha`` for negatives).
            Default: 0.25.
        gamma (float, optional): the focusing exponent. Default: 2.0.
        reduction (str, optional): ``"none"``, ``"mean"`` or ``"sum"``. Default: "sum".
        name (str, optional): unused, for Paddle compatibility. Default: None.

    Returns:
        Tensor: the loss; a 0-D tensor unless ``reduction`` is ``"none"``.

    Examples:
        >>> import fw
        >>> logit = fw.to_tensor([[3.0, -3.0], [0.0, 1.0]])
        >>> label = fw.to_tensor([[1.0, 0.0], [1.0, 0.0]])
        >>> round(fw.nn.functional.sigmoid_focal_loss(logit, label).item(), 4)
        0.5698
    """
    return op("sigmoid_focal_loss", [logit, label, normalizer], alpha=alpha, gamma=gamma,
              reduction=reduction)


# ---------------------------------------------------------------- regression losses
def mse_loss(input, label, reduction="mean", name=None):  # noqa: A002
    """Mean squared error: ``(input - label) ** 2``, reduced.

    Args:
        input (Tensor): the prediction.
        label (Tensor): the target, broadcastable to ``input``.
        reduction (str, optional): ``"none"`` (per-element loss), ``"mean"`` or ``"sum"``.
            Default: "mean".
        name (str, optional): unused, for Paddle compatibility. Default: None.

    Returns:
        Tensor: the loss; a 0-D tensor unless ``reduction`` is ``"none"``.

    Examples:
        >>> import fw
        >>> x = fw.to_tensor([1.0, 2.0, 3.0])
        >>> y = fw.to_tensor([1.0, 0.0, 4.0])
        >>> fw.nn.functional.mse_loss(x, y).item()
        1.6666666269302368
        >>> fw.nn.functional.mse_loss(x, y, reduction='none').tolist()
        [0.0, 4.0, 1.0]
    """
    check_reduction(reduction, "mse_loss")
    d = input - label
    return reduce_loss(d * d, reduction, "mse_loss")


def square_error_cost(input, label):  # noqa: A002
    """Elementwise squared error ``(input - label) ** 2`` (no reduction).

    Args:
        input (Tensor): the prediction.
        label (Tensor): the target, the input's shape.

    Returns:
        Tensor: the squared errors, the input's shape.

    Examples:
        >>> import fw
        >>> x, y = fw.to_tensor([1.0, 3.0]), fw.to_tensor([2.0, 0.0])
        >>> fw.nn.functional.square_error_cost(x, y).tolist()
        [1.0, 9.0]
    """
    d = input - label
    return d * d


def l1_loss(input, label, reduction="mean", name=None):  # noqa: A002
    """Mean absolute error: ``|input - label|``, reduced.

    Args:
        input (Tensor): the prediction.
        label (Tensor): the target, broadcastable to ``input``.
        reduction (str, optional): ``"none"`` (per-element loss), ``"mean"`` or ``"sum"``.
            Default: "mean".
        name (str, optional): unused, for Paddle compatibility. Default: None.

    Returns:
        Tensor: the loss; a 0-D tensor unless ``reduction`` is ``"none"``.

    Examples:
        >>> import fw
        >>> fw.nn.functional.l1_loss(fw.to_tensor([1.0, 2.0]), fw.to_tensor([0.0, 4.0])).item()
        1.5
    """
    check_reduction(reduction, "l1_loss")
    return reduce_loss(fw.abs(input - label), reduction, "l1_loss")


def smooth_l1_loss(input, label, reduction="mean", delta=1.0, name=None):  # noqa: A002
    """Smooth L1 (Huber) loss: with ``d = input - label``, ``0.5 * d ** 2`` where
    ``|d| < delta``, else ``delta * (|d| - 0.5 * delta)``.

    Args:
        input (Tensor): the prediction.
        label (Tensor): the target, the input's shape.
        reduction (str, optional): ``"none"`` (per-element loss), ``"mean"`` or ``"sum"``.
            Default: "mean".
        delta (float, optional): the threshold between the quadratic and linear parts.
            Default: 1.0.
        name (str, optional): unused, for Paddle compatibility. Default: None.

    Returns:
        Tensor: the loss; a 0-D tensor unless ``reduction`` is ``"none"``.

    Examples:
        >>> import fw
        >>> x, y = fw.to_tensor([0.5, 3.0]), fw.to_tensor([0.0, 0.0])
        >>> fw.nn.functional.smooth_l1_loss(x, y, reduction='none').tolist()
        [0.125, 2.5]
    """
    return op("smooth_l1_loss", [input, label], reduction=reduction, delta=delta)


def kl_div(input, label, reduction="mean", log_target=False, name=None):  # noqa: A002
    """Kullback-Leibler divergence ``label * (log(label) - input)`` for log-probabilities
    ``input`` and probabilities ``label`` (log-probabilities with ``log_target``).

    Args:
        input (Tensor): log-probabilities.
        label (Tensor): the target distribution, the input's shape.
        reduction (str, optional): ``"none"``, ``"mean"`` (over all elements),
            ``"batchmean"`` (the sum divided by the batch size, the true KL divergence) or
            ``"sum"``. Default: "mean".
        log_target (bool, optional): ``label`` holds log-probabilities. Default: False.
        name (str, optional): unused, for Paddle compatibility. Default: None.

    Returns:
        Tensor: the loss; a 0-D tensor unless ``reduction`` is ``"none"``.

    Examples:
        >>> import fw
        >>> logp = fw.log(fw.to_tensor([[0.5, 0.5]]))
        >>> q = fw.to_tensor([[0.25, 0.75]])
        >>> round(fw.nn.functional.kl_div(logp, q, reduction='batchmean').item(), 4)
        0.1308
    """
    return op("kl_div", [input, label], reduction=reduction, log_target=log_target)


def log_loss(input, label, epsilon=1e-4, name=None):  # noqa: A002
    """Negative log likelihood of a binary prediction, elementwise:
    ``-label * log(input + epsilon) - (1 - label) * log(1 - input + epsilon)``.

    Args:
        input (Tensor): probabilities ``[N, 1]``.
        label (Tensor): targets in {0, 1}, the input's shape.
        epsilon (float, optional): added inside the logs. Default: 1e-4.
        name (str, optional): unused, for Paddle compatibility. Default: None.

    Returns:
        Tensor: the per-element loss, the input's shape.

    Examples:
        >>> import fw
        >>> p, y = fw.to_tensor([[0.9], [0.2]]), fw.to_tensor([[1.0], [0.0]])
        >>> out = fw.nn.functional.log_loss(p, y)
        >>> [round(v, 4) for v in out.flatten().tolist()]
        [0.1052, 0.223]
    """
    return -label * fw.log(input + epsilon) - (1.0 - label) * fw.log(1.0 - input + epsilon)


def poisson_nll_loss(input, label, log_input=True, full=False, epsilon=1e-8,  # noqa: A002
                     reduction="mean", name=None):
    """Poisson negative log likelihood: ``exp(input) - label * input`` when ``input`` is
    the log-rate, else ``input - label * log(input + epsilon)``; ``full`` adds the
    Stirling term ``label * log(label) - label + 0.5 * log(2 * pi * label)`` where
    ``label > 1``.

    Args:
        input (Tensor): the predicted (log-)rate.
        label (Tensor): the observed counts, the input's shape.
        log_input (bool, optional): ``input`` is the log of the rate. Default: True.
        full (bool, optional): add the Stirling term. Default: False.
        epsilon (float, optional): added inside the log, > 0. Default: 1e-8.
        reduction (str, optional): ``"none"`` (per-element loss), ``"mean"`` or ``"sum"``.
            Default: "mean".
        name (str, optional): unused, for Paddle compatibility. Default: None.

    Returns:
        Tensor: the loss; a 0-D tensor unless ``reduction`` is ``"none"``.

    Examples:
        >>> import fw
        >>> x = fw.to_tensor([0.0, 1.0])
        >>> round(fw.nn.functional.poisson_nll_loss(x, fw.to_tensor([1.0, 2.0])).item(), 4)
        0.8591
    """
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
    """Gaussian negative log likelihood with a predicted variance:
    ``0.5 * (log(var) + (input - label) ** 2 / var)`` (plus ``0.5 * log(2 * pi)`` with
    ``full``); the variance is clipped below at ``epsilon``.

    Args:
        input (Tensor): the predicted mean ``[N, *]``.
        label (Tensor): the target, the input's shape.
        variance (Tensor): positive variances, the input's shape or it without (or with
            size 1 in) the last axis.
        full (bool, optional): add the constant term. Default: False.
        epsilon (float, optional): the lower bound of the variance. Default: 1e-6.
        reduction (str, optional): ``"none"`` (per-element loss), ``"mean"`` or ``"sum"``.
            Default: "mean".
        name (str, optional): unused, for Paddle compatibility. Default: None.

    Returns:
        Tensor: the loss; a 0-D tensor unless ``reduction`` is ``"none"``.

    Examples:
        >>> import fw
        >>> mu = fw.to_tensor([[1.0], [2.0]])
        >>> y = fw.to_tensor([[1.0], [4.0]])
        >>> round(fw.nn.functional.gaussian_nll_loss(mu, y, fw.to_tensor([[1.0], [4.0]])).item(), 4)
        0.5966
    """
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
    """Margin ranking loss: ``max(0, -label * (input - other) + margin)``; ``label`` 1
    means ``input`` should rank higher, -1 that ``other`` should.

    Args:
        input (Tensor): the first scores.
        other (Tensor): the second scores, the input's shape.
        label (Tensor): 1 or -1 per pair, the input's shape.
        margin (float, optional): the margin. Default: 0.0.
        reduction (str, optional): ``"none"`` (per-element loss), ``"mean"`` or ``"sum"``.
            Default: "mean".
        name (str, optional): unused, for Paddle compatibility. Default: None.

    Returns:
        Tensor: the loss; a 0-D tensor unless ``reduction`` is ``"none"``.

    Examples:
        >>> import fw
        >>> a, b = fw.to_tensor([0.5, 0.1]), fw.to_tensor([0.2, 0.4])
        >>> label = fw.to_tensor([1.0, 1.0])
        >>> round(fw.nn.functional.margin_ranking_loss(a, b, label, margin=0.1).item(), 4)
        0.2
    """
    return op("margin_ranking_loss", [input, other, label], margin=margin, reduction=reduction)


def triplet_margin_with_distance_loss(input, positive, negative,  # noqa: A002
                                      distance_function=None, margin=1.0, swap=False,
                                      reduction="mean", name=None):
    """Triplet margin loss with a custom distance: ``max(d(a, p) - d(a, n) + margin, 0)``.

    Args:
        input (Tensor): the anchors ``[N, D]``.
        positive (Tensor): the positives ``[N, D]``.
        negative (Tensor): the negatives ``[N, D]``.
        distance_function (callable, optional): ``d(x, y) -> [N]``; the pairwise L2
            distance when None. Default: None.
        margin (float, optional): the margin. Default: 1.0.
        swap (bool, optional): use ``min(d(a, n), d(p, n))`` as the negative distance.
            Default: False.
        reduction (str, optional): ``"none"`` (per-element loss), ``"mean"`` or ``"sum"``.
            Default: "mean".
        name (str, optional): unused, for Paddle compatibility. Default: None.

    Returns:
        Tensor: the loss; a 0-D tensor unless ``reduction`` is ``"none"``.

    Examples:
        >>> import fw
        >>> a, p, n = fw.zeros([1, 2]), fw.to_tensor([[1.0, 0.0]]), fw.to_tensor([[0.0, 1.5]])
        >>> l1 = lambda x, y: (x - y).abs().sum(-1)
        >>> fw.nn.functional.triplet_margin_with_distance_loss(a, p, n, distance_function=l1).item()
        0.5
    """
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
    """Triplet margin loss: ``max(d(a, p) - d(a, n) + margin, 0)`` with ``d`` the p-norm
    distance, pulling the anchor to the positive and away from the negative.

    Args:
        input (Tensor): the anchors ``[N, D]``.
        positive (Tensor): the positives ``[N, D]``.
        negative (Tensor): the negatives ``[N, D]``.
        margin (float, optional): the margin. Default: 1.0.
        p (float, optional): the norm degree. Default: 2.
        epsilon (float, optional): added to the difference before the norm. Default: 1e-6.
        swap (bool, optional): use ``min(d(a, n), d(p, n))`` as the negative distance.
            Default: False.
        reduction (str, optional): ``"none"`` (per-element loss), ``"mean"`` or ``"sum"``.
            Default: "mean".
        name (str, optional): unused, for Paddle compatibility. Default: None.

    Returns:
        Tensor: the loss; a 0-D tensor unless ``reduction`` is ``"none"``.

    Examples:
        >>> import fw
        >>> a = fw.to_tensor([[0.0, 0.0]])
        >>> p = fw.to_tensor([[1.0, 0.0]])
        >>> n = fw.to_tensor([[0.0, 1.5]])
        >>> round(fw.nn.functional.triplet_margin_loss(a, p, n).item(), 3)
        0.5
    """
    return triplet_margin_with_distance_loss(
        input, positive, negative,
        lambda a, b: pairwise_distance(a, b, p=p, epsilon=epsilon), margin, swap, reduction)


def cosine_embedding_loss(input1, input2, label, margin=0, reduction="mean", name=None):
    """Cosine embedding loss: ``1 - cos(x1, x2)`` for pairs labelled 1 (similar) and
    ``max(0, cos(x1, x2) - margin)`` for pairs labelled -1.

    Args:
        input1 (Tensor): ``[N, D]`` (or ``[D]``).
        input2 (Tensor): the same shape.
        label (Tensor): 1 or -1 per pair, ``[N]``.
        margin (float, optional): in [-1, 1]. Default: 0.
        reduction (str, optional): ``"none"`` (per-element loss), ``"mean"`` or ``"sum"``.
            Default: "mean".
        name (str, optional): unused, for Paddle compatibility. Default: None.

    Returns:
        Tensor: the loss; a 0-D tensor unless ``reduction`` is ``"none"``.

    Examples:
        >>> import fw
        >>> x1 = fw.to_tensor([[1.0, 0.0], [1.0, 0.0]])
        >>> x2 = fw.to_tensor([[1.0, 1.0], [1.0, 1.0]])
        >>> label = fw.to_tensor([1, -1])
        >>> out = fw.nn.functional.cosine_embedding_loss(x1, x2, label, reduction='none')
        >>> [round(v, 4) for v in out.tolist()]
        [0.2929, 0.7071]
    """
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
    """Hinge embedding loss: ``input`` where ``label`` is 1, ``max(0, margin - input)``
    where it is -1 (``input`` usually a distance).

    Args:
        input (Tensor): the distances.
        label (Tensor): 1 or -1, the input's shape.
        margin (float, optional): the margin. Default: 1.0.
        reduction (str, optional): ``"none"`` (per-element loss), ``"mean"`` or ``"sum"``.
            Default: "mean".
        name (str, optional): unused, for Paddle compatibility. Default: None.

    Returns:
        Tensor: the loss; a 0-D tensor unless ``reduction`` is ``"none"``.

    Examples:
        >>> import fw
        >>> d = fw.to_tensor([0.3, 0.4])
        >>> y = fw.to_tensor([1.0, -1.0])
        >>> out = fw.nn.functional.hinge_embedding_loss(d, y, reduction='none')
        >>> [round(v, 4) for v in out.tolist()]
        [0.3, 0.6]
    """
    check_reduction(reduction, "hinge_embedding_loss")
    lab = _float_like(label, input)
    zero = fw.zeros_like(input)
    loss = fw.where(lab == 1, input, zero) + fw.where(lab == -1,
                                                      fw.clip(margin - input, min=0.0), zero)
    return reduce_loss(loss, reduction, "hinge_embedding_loss")


def soft_margin_loss(input, label, reduction="mean", name=None):  # noqa: A002
    """Two-class logistic loss: ``log(1 + exp(-label * input))`` with labels 1 or -1.

    Args:
        input (Tensor): the scores.
        label (Tensor): 1 or -1, the input's shape.
        reduction (str, optional): ``"none"`` (per-element loss), ``"mean"`` or ``"sum"``.
            Default: "mean".
        name (str, optional): unused, for Paddle compatibility. Default: None.

    Returns:
        Tensor: the loss; a 0-D tensor unless ``reduction`` is ``"none"``.

    Examples:
        >>> import fw
        >>> x, y = fw.to_tensor([0.0, 2.0]), fw.to_tensor([1.0, 1.0])
        >>> round(fw.nn.functional.soft_margin_loss(x, y).item(), 4)
        0.41
    """
    check_reduction(reduction, "soft_margin_loss")
    loss = -log_sigmoid(_float_like(label, input) * input)
    return reduce_loss(loss, reduction, "soft_margin_loss")


def multi_label_soft_margin_loss(input, label, weight=None, reduction="mean",  # noqa: A002
                                 name=None):
    """Multi-label one-versus-all logistic loss: the mean over classes of the binary
    cross entropy of ``sigmoid(input)`` against the 0/1 labels.

    Args:
        input (Tensor): scores ``[N, C]``.
        label (Tensor): 0/1 targets ``[N, C]``.
        weight (Tensor, optional): per-class weights ``[C]``. Default: None.
        reduction (str, optional): ``"none"`` (per-element loss), ``"mean"`` or ``"sum"``.
            Default: "mean".
        name (str, optional): unused, for Paddle compatibility. Default: None.

    Returns:
        Tensor: the loss; a 0-D tensor unless ``reduction`` is ``"none"``.

    Examples:
        >>> import fw
        >>> x, y = fw.to_tensor([[2.0, -2.0]]), fw.to_tensor([[1.0, 0.0]])
        >>> round(fw.nn.functional.multi_label_soft_margin_loss(x, y).item(), 4)
        0.1269
    """
    check_reduction(reduction, "multi_label_soft_margin_loss")
    lab = _float_like(label, input)
    loss = -(lab * log_sigmoid(input) + (1.0 - lab) * log_sigmoid(-input))
    if weight is not None:
        loss = loss * weight
    return reduce_loss(loss.mean(axis=-1), reduction, "multi_label_soft_margin_loss")


def multi_margin_loss(input, label, p=1, margin=1.0, weight=None, reduction="mean",  # noqa: A002
                      name=None):
    """Multi-class hinge loss: for each sample, the mean over the classes ``j != y`` of
    ``max(0, margin - x[y] + x[j]) ** p`` (times ``weight[y]``).

    Args:
        input (Tensor): scores ``[N, C]``.
        label (Tensor): int class ids ``[N]``.
        p (int, optional): 1 or 2. Default: 1.
        margin (float, optional): the margin. Default: 1.0.
        weight (Tensor, optional): per-class weights ``[C]``. Default: None.
        reduction (str, optional): ``"none"`` (per-element loss), ``"mean"`` or ``"sum"``.
            Default: "mean".
        name (str, optional): unused, for Paddle compatibility. Default: None.

    Returns:
        Tensor: the loss; a 0-D tensor unless ``reduction`` is ``"none"``.

    Examples:
        >>> import fw
        >>> x = fw.to_tensor([[0.1, 0.2, 0.4, 0.8]])
        >>> round(fw.nn.functional.multi_margin_loss(x, fw.to_tensor([3])).item(), 4)
        0.325
    """
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
    """Connectionist temporal classification loss: the negative log probability of the
    label sequence summed over all its alignments to the input frames.

    As Paddle's warp-ctc, ``log_probs`` are unnormalised scores and the softmax is
    applied inside.

    Args:
        log_probs (Tensor): float scores ``[T, B, C]`` (time, batch, classes incl. blank).
        labels (Tensor): int32 padded label sequences ``[B, L]``.
        input_lengths (Tensor): int64 valid frame counts ``[B]``.
        label_lengths (Tensor): int64 label lengths ``[B]``.
        blank (int, optional): the blank class id. Default: 0.
        reduction (str, optional): ``"mean"`` averages ``loss / label_lengths`` over the
            batch, ``"sum"`` sums, ``"none"`` gives the ``[B]`` losses. Default: "mean".
        norm_by_times (bool, optional): divide each loss by its frame count.
            Default: False.

    Returns:
        Tensor: the loss (``[B]`` with ``"none"``, else a scalar).

    Examples:
        >>> import fw
        >>> T, B, C = 5, 2, 3
        >>> scores = fw.randn([T, B, C])
        >>> labels = fw.to_tensor([[1, 2], [1, 1]], dtype='int32')
        >>> in_len = fw.to_tensor([5, 5], dtype='int64')
        >>> lab_len = fw.to_tensor([2, 2], dtype='int64')
        >>> fw.nn.functional.ctc_loss(scores, labels, in_len, lab_len, reduction='none').shape
        [2]
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
    """Hierarchical sigmoid loss: each class is a leaf of a binary tree and its
    probability is the product of sigmoid decisions along the path; the loss is the
    sum of the binary cross entropies on that path. The default tree is the complete
    binary tree of ``num_classes`` leaves; ``path_table``/``path_code`` give a custom one.

    Args:
        input (Tensor): features ``[N, D]``.
        label (Tensor): int64 class ids ``[N]`` or ``[N, 1]``.
        num_classes (int): the number of classes (leaves).
        weight (Tensor): node weights ``[num_classes - 1, D]``.
        bias (Tensor, optional): node biases ``[num_classes - 1, 1]``. Default: None.
        path_table (Tensor, optional): per sample, the node ids on its path (-1 padded).
            Default: None.
        path_code (Tensor, optional): per sample, the branch codes on its path.
            Default: None.
        is_sparse (bool, optional): accepted; the gradients are dense. Default: False.
        name (str, optional): unused, for Paddle compatibility. Default: None.

    Returns:
        Tensor: the per-sample loss ``[N, 1]``.

    Examples:
        >>> import fw
        >>> x = fw.randn([4, 3])
        >>> w = fw.randn([5, 3])
        >>> label = fw.to_tensor([0, 2, 5, 1])
        >>> fw.nn.functional.hsigmoid_loss(x, label, 6, w).shape
        [4, 1]
    """
    return op("hsigmoid_loss", [input, label, weight, bias, path_table, path_code],
              num_classes=num_classes)


def dice_loss(input, label, epsilon=1e-5, name=None):  # noqa: A002
    """Dice loss for segmentation: ``1 - 2 * |X ∩ Y| / (|X| + |Y|)`` per sample, averaged
    over the batch, with ``X`` the predicted probabilities and ``Y`` the one-hot labels.

    Args:
        input (Tensor): probabilities ``[N, ..., C]`` (classes last).
        label (Tensor): int class ids ``[N, ..., 1]``.
        epsilon (float, optional): added to the numerator and denominator. Default: 1e-5.
        name (str, optional): unused, for Paddle compatibility. Default: None.

    Returns:
        Tensor: the mean dice loss, a 0-D tensor.

    Examples:
        >>> import fw
        >>> probs = fw.to_tensor([[[0.9, 0.1], [0.2, 0.8]]])
        >>> label = fw.to_tensor([[[0], [1]]])
        >>> round(fw.nn.functional.dice_loss(probs, label).item(), 4)
        0.15
    """
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
    """N-pair loss (Sohn, 2016): a softmax cross entropy over the anchor-positive
    similarities with targets from label equality, plus ``l2_reg`` times the mean
    squared norm of the embeddings.

    Args:
        anchor (Tensor): anchor embeddings ``[N, D]``.
        positive (Tensor): positive embeddings ``[N, D]``.
        labels (Tensor): class ids ``[N]``.
        l2_reg (float, optional): the weight of the embedding-norm term. Default: 0.002.

    Returns:
        Tensor: the loss, a 0-D tensor.

    Examples:
        >>> import fw
        >>> a = fw.to_tensor([[1.0, 0.0], [0.0, 1.0]])
        >>> labels = fw.to_tensor([0, 1])
        >>> round(fw.nn.functional.npair_loss(a, a, labels).item(), 4)
        0.3143
    """
    n = labels.shape[0]
    lab = labels.reshape([n, 1])
    same = (lab == lab.reshape([1, n])).astype(anchor.dtype)
    target = same / same.sum(axis=1, keepdim=True)
    l2 = (anchor * anchor).sum(axis=1).mean() + (positive * positive).sum(axis=1).mean()
    sim = fw.matmul(anchor, positive, transpose_y=True)
    ce = cross_entropy(sim, target, soft_label=True)
    return l2 * (0.25 * l2_reg) + ce

