"""Loss layers: each holds its configuration and calls the function of
`fw.nn.functional` (HSigmoidLoss owns its tree's weights)."""

from __future__ import annotations

from fw.core.errors import InvalidArgumentError
from fw.nn import functional as F
from fw.nn.layer.layers import Layer

__all__ = ["CrossEntropyLoss", "NLLLoss", "MSELoss", "L1Loss", "SmoothL1Loss", "BCELoss",
           "BCEWithLogitsLoss", "KLDivLoss", "MarginRankingLoss", "TripletMarginLoss",
           "TripletMarginWithDistanceLoss", "CosineEmbeddingLoss", "HingeEmbeddingLoss",
           "CTCLoss", "HSigmoidLoss", "PoissonNLLLoss", "GaussianNLLLoss", "SoftMarginLoss",
           "MultiLabelSoftMarginLoss", "MultiMarginLoss"]

_RED = ("none", "mean", "sum")


class _Loss(Layer):
    def __init__(self, reduction="mean", allowed=_RED):
        super().__init__()
        if reduction not in allowed:
            raise InvalidArgumentError(f"{type(self).__name__}: 'reduction' must be one of "
                                       f"{list(allowed)}, got {reduction!r}")
        self.reduction = reduction

    def extra_repr(self) -> str:
        return f"reduction={self.reduction}"


class CrossEntropyLoss(_Loss):
    """Softmax cross entropy (see `fw.nn.functional.cross_entropy`).

    >>> import fw
    >>> loss = fw.nn.CrossEntropyLoss()
    >>> round(loss(fw.to_tensor([[2.0, 0.0]]), fw.to_tensor([0])).item(), 4)
    0.1269
    """

    def __init__(self, weight=None, ignore_index=-100, reduction="mean", soft_label=False,
                 axis=-1, use_softmax=True, label_smoothing=0.0, name=None):
        super().__init__(reduction)
        self.weight = weight
        self.ignore_index = ignore_index
        self.soft_label = soft_label
        self.axis = axis
        self.use_softmax = use_softmax
        self.label_smoothing = label_smoothing

    def forward(self, input, label):  # noqa: A002
        return F.cross_entropy(input, label, self.weight, self.ignore_index, self.reduction,
                               self.soft_label, self.axis, self.use_softmax,
                               self.label_smoothing)


class NLLLoss(_Loss):
    """Negative log likelihood of log-probabilities."""

    def __init__(self, weight=None, ignore_index=-100, reduction="mean", name=None):
        super().__init__(reduction)
        self._weight = weight
        self._ignore_index = ignore_index

    def forward(self, input, label):  # noqa: A002
        return F.nll_loss(input, label, self._weight, self._ignore_index, self.reduction)


class MSELoss(_Loss):
    """Mean squared error."""

    def forward(self, input, label):  # noqa: A002
        return F.mse_loss(input, label, self.reduction)


class L1Loss(_Loss):
    """Mean absolute error."""

    def __init__(self, reduction="mean", name=None):
        super().__init__(reduction)

    def forward(self, input, label):  # noqa: A002
        return F.l1_loss(input, label, self.reduction)


class SmoothL1Loss(_Loss):
    """Huber loss with threshold `delta`."""

    def __init__(self, reduction="mean", delta=1.0, name=None):
        super().__init__(reduction)
        self.delta = delta

    def forward(self, input, label):  # noqa: A002
        return F.smooth_l1_loss(input, label, self.reduction, self.delta)


class BCELoss(_Loss):
    """Binary cross entropy of probabilities."""

    def __init__(self, weight=None, reduction="mean", name=None):
        super().__init__(reduction)
        self.weight = weight

    def forward(self, input, label):  # noqa: A002
        return F.binary_cross_entropy(input, label, self.weight, self.reduction)


class BCEWithLogitsLoss(_Loss):
    """Sigmoid + binary cross entropy."""

    def __init__(self, weight=None, reduction="mean", pos_weight=None, name=None):
        super().__init__(reduction)
        self.weight = weight
        self.pos_weight = pos_weight

    def forward(self, logit, label):
        return F.binary_cross_entropy_with_logits(logit, label, self.weight, self.reduction,
                                                  self.pos_weight)


class KLDivLoss(_Loss):
    """Kullback-Leibler divergence; reductions include ``"batchmean"``."""

    def __init__(self, reduction="mean", log_target=False):
        super().__init__(reduction, _RED + ("batchmean",))
        self.log_target = log_target

    def forward(self, input, label):  # noqa: A002
        return F.kl_div(input, label, self.reduction, self.log_target)


class MarginRankingLoss(_Loss):
    """max(0, -label * (input - other) + margin)."""

    def __init__(self, margin=0.0, reduction="mean", name=None):
        super().__init__(reduction)
        self.margin = margin

    def forward(self, input, other, label):  # noqa: A002
        return F.margin_ranking_loss(input, other, label, self.margin, self.reduction)


class TripletMarginLoss(_Loss):
    """Triplet loss with p-norm distances."""

    def __init__(self, margin=1.0, p=2.0, epsilon=1e-6, swap=False, reduction="mean",
                 name=None):
        super().__init__(reduction)
        self.margin = margin
        self.p = p
        self.epsilon = epsilon
        self.swap = swap

    def forward(self, input, positive, negative):  # noqa: A002
        return F.triplet_margin_loss(input, positive, negative, self.margin, self.p,
                                     self.epsilon, self.swap, self.reduction)


class TripletMarginWithDistanceLoss(_Loss):
    """Triplet loss with a custom distance function."""

    def __init__(self, distance_function=None, margin=1.0, swap=False, reduction="mean",
                 name=None):
        super().__init__(reduction)
        self.distance_function = distance_function
        self.margin = margin
        self.swap = swap

    def forward(self, input, positive, negative):  # noqa: A002
        return F.triplet_margin_with_distance_loss(input, positive, negative,
                                                   self.distance_function, self.margin,
                                                   self.swap, self.reduction)


class CosineEmbeddingLoss(_Loss):
    """1 - cos for similar pairs (label 1), max(0, cos - margin) for dissimilar (-1)."""

    def __init__(self, margin=0, reduction="mean", name=None):
        super().__init__(reduction)
        self.margin = margin

    def forward(self, input1, input2, label):
        return F.cosine_embedding_loss(input1, input2, label, self.margin, self.reduction)


class HingeEmbeddingLoss(_Loss):
    """x for label 1, max(0, margin - x) for label -1."""

    def __init__(self, margin=1.0, reduction="mean", name=None):
        super().__init__(reduction)
        self.margin = margin

    def forward(self, input, label):  # noqa: A002
        return F.hinge_embedding_loss(input, label, self.margin, self.reduction)


class CTCLoss(_Loss):
    """Connectionist temporal classification loss (see `fw.nn.functional.ctc_loss`)."""

    def __init__(self, blank=0, reduction="mean"):
        super().__init__(reduction)
        self.blank = blank

    def forward(self, log_probs, labels, input_lengths, label_lengths, norm_by_times=False):
        return F.ctc_loss(log_probs, labels, input_lengths, label_lengths, self.blank,
                          self.reduction, norm_by_times)


class HSigmoidLoss(Layer):
    """Hierarchical sigmoid loss with learnt node weights ``[num_classes - 1,
    feature_size]`` and biases ``[num_classes - 1, 1]``; ``is_custom=True`` takes
    path_table/path_code in forward."""

    def __init__(self, feature_size, num_classes, weight_attr=None, bias_attr=None,
                 is_custom=False, is_sparse=False, name=None):
        super().__init__()
        if num_classes < 2 and not is_custom:
            raise InvalidArgumentError(f"HSigmoidLoss: num_classes must be >= 2, got "
                                       f"{num_classes}")
        self._feature_size = feature_size
        self._num_classes = num_classes
        self._is_custom = is_custom
        self._is_sparse = is_sparse
        rows = num_classes if is_custom else num_classes - 1
        self.weight = self.create_parameter([rows, feature_size], weight_attr)
        self.bias = self.create_parameter([rows, 1], bias_attr, is_bias=True)

    def forward(self, input, label, path_table=None, path_code=None):  # noqa: A002
        return F.hsigmoid_loss(input, label, self._num_classes, self.weight, self.bias,
                               path_table, path_code, self._is_sparse)


class PoissonNLLLoss(_Loss):
    """Poisson negative log likelihood."""

    def __init__(self, log_input=True, full=False, epsilon=1e-8, reduction="mean", name=None):
        super().__init__(reduction)
        self.log_input = log_input
        self.full = full
        self.epsilon = epsilon

    def forward(self, input, label):  # noqa: A002
        return F.poisson_nll_loss(input, label, self.log_input, self.full, self.epsilon,
                                  self.reduction)


class GaussianNLLLoss(_Loss):
    """Gaussian negative log likelihood with a predicted variance."""

    def __init__(self, full=False, epsilon=1e-6, reduction="mean", name=None):
        super().__init__(reduction)
        self.full = full
        self.epsilon = epsilon

    def forward(self, input, label, variance):  # noqa: A002
        return F.gaussian_nll_loss(input, label, variance, self.full, self.epsilon,
                                   self.reduction)


class SoftMarginLoss(_Loss):
    """log(1 + exp(-label * input))."""

    def __init__(self, reduction="mean", name=None):
        super().__init__(reduction)

    def forward(self, input, label):  # noqa: A002
        return F.soft_margin_loss(input, label, self.reduction)


class MultiLabelSoftMarginLoss(_Loss):
    """Multi-label one-versus-all logistic loss."""

    def __init__(self, weight=None, reduction="mean", name=None):
        super().__init__(reduction)
        self.weight = weight

    def forward(self, input, label):  # noqa: A002
        return F.multi_label_soft_margin_loss(input, label, self.weight, self.reduction)


class MultiMarginLoss(_Loss):
    """Multi-class hinge loss."""

    def __init__(self, p=1, margin=1.0, weight=None, reduction="mean", name=None):
        super().__init__(reduction)
        self.p = p
        self.margin = margin
        self.weight = weight

    def forward(self, input, label):  # noqa: A002
        return F.multi_margin_loss(input, label, self.p, self.margin, self.weight,
                                   self.reduction)
