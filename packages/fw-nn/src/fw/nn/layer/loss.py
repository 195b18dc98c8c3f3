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
    """Softmax cross entropy between logits and labels (see
    `fw.nn.functional.cross_entropy`).

    Computes ``-sum(label * log(softmax(input)))`` along ``axis``. Hard labels are
    class ids; with ``weight`` each sample's loss is multiplied by the weight of its
    class and ``"mean"`` divides by the sum of those weights (not by the sample count),
    as Paddle does. Labels equal to ``ignore_index`` contribute 0 and are left out of
    the mean.

    Args:
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
        name (str, optional): a name for the layer. Default: None.

    Shape:
        - input: ``[N, C]`` or ``[N, C, *]`` with ``axis=1``; label: ``[N]`` (or ``[N, 1]``) ids.
        - output: a scalar, or ``[N]`` with ``reduction="none"``.

    Examples:
        >>> import fw
        >>> loss_fn = fw.nn.CrossEntropyLoss()
        >>> logits = fw.to_tensor([[2.0, 0.0], [0.0, 2.0]])
        >>> round(loss_fn(logits, fw.to_tensor([0, 1])).item(), 4)
        0.1269
        >>> weighted = fw.nn.CrossEntropyLoss(weight=fw.to_tensor([1.0, 3.0]), reduction='sum')
        >>> round(weighted(logits, fw.to_tensor([0, 0])).item(), 4)
        2.2539
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
    """Negative log likelihood of log-probabilities (see `fw.nn.functional.nll_loss`).

    Args:
        weight (Tensor, optional): per-class weights ``[C]``. Default: None.
        ignore_index (int, optional): a label value that is ignored. Default: -100.
        reduction (str, optional): ``"none"`` (per-element loss), ``"mean"`` or ``"sum"``.
            Default: "mean".
        name (str, optional): a name for the layer. Default: None.

    Shape:
        - input: ``[N, C]`` or ``[N, C, *d]``; label: ``[N]`` or ``[N, *d]``.
        - output: a scalar, or the label's shape with ``reduction="none"``.

    Examples:
        >>> import fw
        >>> loss_fn = fw.nn.NLLLoss()
        >>> logp = fw.log(fw.to_tensor([[0.25, 0.75], [0.5, 0.5]]))
        >>> round(loss_fn(logp, fw.to_tensor([1, 0])).item(), 4)
        0.4904
    """

    def __init__(self, weight=None, ignore_index=-100, reduction="mean", name=None):
        super().__init__(reduction)
        self._weight = weight
        self._ignore_index = ignore_index

    def forward(self, input, label):  # noqa: A002
        return F.nll_loss(input, label, self._weight, self._ignore_index, self.reduction)


class MSELoss(_Loss):
    """Mean squared error ``(input - label) ** 2``, reduced.

    Args:
        reduction (str, optional): ``"none"`` (per-element loss), ``"mean"`` or ``"sum"``.
            Default: "mean".

    Shape:
        - input, label: the same shape ``[*]``.
        - output: a scalar, or ``[*]`` with ``reduction="none"``.

    Examples:
        >>> import fw
        >>> loss_fn = fw.nn.MSELoss()
        >>> loss_fn(fw.to_tensor([1.0, 2.0]), fw.to_tensor([0.0, 4.0])).item()
        2.5
    """

    def forward(self, input, label):  # noqa: A002
        return F.mse_loss(input, label, self.reduction)


class L1Loss(_Loss):
    """Mean absolute error ``|input - label|``, reduced.

    Args:
        reduction (str, optional): ``"none"`` (per-element loss), ``"mean"`` or ``"sum"``.
            Default: "mean".
        name (str, optional): a name for the layer. Default: None.

    Shape:
        - input, label: the same shape ``[*]``.
        - output: a scalar, or ``[*]`` with ``reduction="none"``.

    Examples:
        >>> import fw
        >>> loss_fn = fw.nn.L1Loss(reduction='sum')
        >>> loss_fn(fw.to_tensor([1.0, 2.0]), fw.to_tensor([0.0, 4.0])).item()
        3.0
    """

    def __init__(self, reduction="mean", name=None):
        super().__init__(reduction)

    def forward(self, input, label):  # noqa: A002
        return F.l1_loss(input, label, self.reduction)


class SmoothL1Loss(_Loss):
    """Smooth L1 (Huber) loss (see `fw.nn.functional.smooth_l1_loss`).

    Args:
        reduction (str, optional): ``"none"`` (per-element loss), ``"mean"`` or ``"sum"``.
            Default: "mean".
        delta (float, optional): the threshold between the quadratic and linear parts.
            Default: 1.0.
        name (str, optional): a name for the layer. Default: None.

    Shape:
        - input, label: the same shape ``[*]``.
        - output: a scalar, or ``[*]`` with ``reduction="none"``.

    Examples:
        >>> import fw
        >>> loss_fn = fw.nn.SmoothL1Loss()
        >>> loss_fn(fw.to_tensor([0.5, 3.0]), fw.to_tensor([0.0, 0.0])).item()
        1.3125
    """

    def __init__(self, reduction="mean", delta=1.0, name=None):
        super().__init__(reduction)
        self.delta = delta

    def forward(self, input, label):  # noqa: A002
        return F.smooth_l1_loss(input, label, self.reduction, self.delta)


class BCELoss(_Loss):
    """Binary cross entropy of probabilities (see `fw.nn.functional.binary_cross_entropy`).

    Args:
        weight (Tensor, optional): a rescaling weight broadcast to the input. Default: None.
        reduction (str, optional): ``"none"`` (per-element loss), ``"mean"`` or ``"sum"``.
            Default: "mean".
        name (str, optional): a name for the layer. Default: None.

    Shape:
        - input, label: the same shape ``[*]``.
        - output: a scalar, or ``[*]`` with ``reduction="none"``.

    Examples:
        >>> import fw
        >>> loss_fn = fw.nn.BCELoss()
        >>> p = fw.nn.functional.sigmoid(fw.to_tensor([2.0, -1.0]))
        >>> round(loss_fn(p, fw.to_tensor([1.0, 0.0])).item(), 4)
        0.2201
    """

    def __init__(self, weight=None, reduction="mean", name=None):
        super().__init__(reduction)
        self.weight = weight

    def forward(self, input, label):  # noqa: A002
        return F.binary_cross_entropy(input, label, self.weight, self.reduction)


class BCEWithLogitsLoss(_Loss):
    """Sigmoid plus binary cross entropy on logits (see
    `fw.nn.functional.binary_cross_entropy_with_logits`).

    Args:
        weight (Tensor, optional): a rescaling weight broadcast to the logit. Default: None.
        reduction (str, optional): ``"none"`` (per-element loss), ``"mean"`` or ``"sum"``.
            Default: "mean".
        pos_weight (Tensor, optional): the weight of positive examples per class. Default: None.
        name (str, optional): a name for the layer. Default: None.

    Shape:
        - logit, label: the same shape ``[*]``.
        - output: a scalar, or ``[*]`` with ``reduction="none"``.

    Examples:
        >>> import fw
        >>> loss_fn = fw.nn.BCEWithLogitsLoss()
        >>> round(loss_fn(fw.to_tensor([2.0, -1.0]), fw.to_tensor([1.0, 0.0])).item(), 4)
        0.2201
    """

    def __init__(self, weight=None, reduction="mean", pos_weight=None, name=None):
        super().__init__(reduction)
        self.weight = weight
        self.pos_weight = pos_weight

    def forward(self, logit, label):
        return F.binary_cross_entropy_with_logits(logit, label, self.weight, self.reduction,
                                                  self.pos_weight)


class KLDivLoss(_Loss):
    """Kullback-Leibler divergence of a target distribution from log-probabilities (see
    `fw.nn.functional.kl_div`).

    Args:
        reduction (str, optional): ``"none"``, ``"mean"`` (over all elements),
            ``"batchmean"`` (the sum divided by the batch size, the true KL divergence) or
            ``"sum"``. Default: "mean".
        log_target (bool, optional): the label holds log-probabilities. Default: False.

    Shape:
        - input, label: the same shape ``[N, *]``.
        - output: a scalar, or ``[N, *]`` with ``reduction="none"``.

    Examples:
        >>> import fw
        >>> loss_fn = fw.nn.KLDivLoss(reduction='batchmean')
        >>> logp = fw.log(fw.to_tensor([[0.5, 0.5]]))
        >>> round(loss_fn(logp, fw.to_tensor([[0.25, 0.75]])).item(), 4)
        0.1308
    """

    def __init__(self, reduction="mean", log_target=False):
        super().__init__(reduction, _RED + ("batchmean",))
        self.log_target = log_target

    def forward(self, input, label):  # noqa: A002
        return F.kl_div(input, label, self.reduction, self.log_target)


class MarginRankingLoss(_Loss):
    """Margin ranking loss ``max(0, -label * (input - other) + margin)``;
    ``forward(input, other, label)``.

    Args:
        margin (float, optional): the margin. Default: 0.0.
        reduction (str, optional): ``"none"`` (per-element loss), ``"mean"`` or ``"sum"``.
            Default: "mean".
        name (str, optional): a name for the layer. Default: None.

    Shape:
        - input, other, label: the same shape ``[*]``.
        - output: a scalar, or ``[*]`` with ``reduction="none"``.

    Examples:
        >>> import fw
        >>> loss_fn = fw.nn.MarginRankingLoss(margin=0.1)
        >>> a, b = fw.to_tensor([0.5, 0.1]), fw.to_tensor([0.2, 0.4])
        >>> round(loss_fn(a, b, fw.to_tensor([1.0, -1.0])).item(), 4)
        0.0
    """

    def __init__(self, margin=0.0, reduction="mean", name=None):
        super().__init__(reduction)
        self.margin = margin

    def forward(self, input, other, label):  # noqa: A002
        return F.margin_ranking_loss(input, other, label, self.margin, self.reduction)


class TripletMarginLoss(_Loss):
    """Triplet margin loss with p-norm distances (see
    `fw.nn.functional.triplet_margin_loss`); ``forward(input, positive, negative)``.

    Args:
        margin (float, optional): the margin. Default: 1.0.
        p (float, optional): the norm degree. Default: 2.0.
        epsilon (float, optional): added to the difference before the norm. Default: 1e-6.
        swap (bool, optional): use the smaller negative distance. Default: False.
        reduction (str, optional): ``"none"`` (per-element loss), ``"mean"`` or ``"sum"``.
            Default: "mean".
        name (str, optional): a name for the layer. Default: None.

    Shape:
        - input, positive, negative: ``[N, D]``.
        - output: a scalar, or ``[N]`` with ``reduction="none"``.

    Examples:
        >>> import fw
        >>> loss_fn = fw.nn.TripletMarginLoss(margin=1.0)
        >>> a, p, n = fw.zeros([1, 2]), fw.to_tensor([[1.0, 0.0]]), fw.to_tensor([[0.0, 3.0]])
        >>> round(loss_fn(a, p, n).item(), 3)
        0.0
    """

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
    """Triplet margin loss with a custom distance function (see
    `fw.nn.functional.triplet_margin_with_distance_loss`).

    Args:
        distance_function (callable, optional): ``d(x, y) -> [N]``; pairwise L2 when None.
            Default: None.
        margin (float, optional): the margin. Default: 1.0.
        swap (bool, optional): use the smaller negative distance. Default: False.
        reduction (str, optional): ``"none"`` (per-element loss), ``"mean"`` or ``"sum"``.
            Default: "mean".
        name (str, optional): a name for the layer. Default: None.

    Shape:
        - input, positive, negative: ``[N, D]``.
        - output: a scalar, or ``[N]`` with ``reduction="none"``.

    Examples:
        >>> import fw
        >>> loss_fn = fw.nn.TripletMarginWithDistanceLoss(margin=0.5)
        >>> a, p, n = fw.zeros([1, 2]), fw.to_tensor([[1.0, 0.0]]), fw.to_tensor([[0.0, 1.0]])
        >>> round(loss_fn(a, p, n).item(), 3)
        0.5
    """

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
    """Cosine embedding loss (see `fw.nn.functional.cosine_embedding_loss`);
    ``forward(input1, input2, label)``.

    Args:
        margin (float, optional): in [-1, 1]. Default: 0.
        reduction (str, optional): ``"none"`` (per-element loss), ``"mean"`` or ``"sum"``.
            Default: "mean".
        name (str, optional): a name for the layer. Default: None.

    Shape:
        - input1, input2: ``[N, D]``; label: ``[N]``.
        - output: a scalar, or ``[N]`` with ``reduction="none"``.

    Examples:
        >>> import fw
        >>> loss_fn = fw.nn.CosineEmbeddingLoss()
        >>> x1, x2 = fw.to_tensor([[1.0, 0.0]]), fw.to_tensor([[0.0, 1.0]])
        >>> loss_fn(x1, x2, fw.to_tensor([1])).item()
        1.0
    """

    def __init__(self, margin=0, reduction="mean", name=None):
        super().__init__(reduction)
        self.margin = margin

    def forward(self, input1, input2, label):
        return F.cosine_embedding_loss(input1, input2, label, self.margin, self.reduction)


class HingeEmbeddingLoss(_Loss):
    """Hinge embedding loss (see `fw.nn.functional.hinge_embedding_loss`).

    Args:
        margin (float, optional): the margin. Default: 1.0.
        reduction (str, optional): ``"none"`` (per-element loss), ``"mean"`` or ``"sum"``.
            Default: "mean".
        name (str, optional): a name for the layer. Default: None.

    Shape:
        - input, label: the same shape ``[*]``.
        - output: a scalar, or ``[*]`` with ``reduction="none"``.

    Examples:
        >>> import fw
        >>> loss_fn = fw.nn.HingeEmbeddingLoss(margin=1.0)
        >>> round(loss_fn(fw.to_tensor([0.3, 0.4]), fw.to_tensor([1.0, -1.0])).item(), 4)
        0.45
    """

    def __init__(self, margin=1.0, reduction="mean", name=None):
        super().__init__(reduction)
        self.margin = margin

    def forward(self, input, label):  # noqa: A002
        return F.hinge_embedding_loss(input, label, self.margin, self.reduction)


class CTCLoss(_Loss):
    """Connectionist temporal classification loss (see `fw.nn.functional.ctc_loss`);
    ``forward(log_probs, labels, input_lengths, label_lengths, norm_by_times=False)``.

    Args:
        blank (int, optional): the blank class id. Default: 0.
        reduction (str, optional): ``"mean"`` averages ``loss / label_lengths`` over the
            batch, ``"sum"`` sums, ``"none"`` gives the ``[B]`` losses. Default: "mean".

    Shape:
        - log_probs: ``[T, B, C]``; labels: ``[B, L]``; lengths: ``[B]``.
        - output: a scalar, or ``[B]`` with ``reduction="none"``.

    Examples:
        >>> import fw
        >>> ctc = fw.nn.CTCLoss(blank=0)
        >>> scores = fw.randn([6, 1, 4])
        >>> labels = fw.to_tensor([[1, 3]], dtype='int32')
        >>> lengths = fw.to_tensor([6], dtype='int64'), fw.to_tensor([2], dtype='int64')
        >>> loss = ctc(scores, labels, *lengths)
        >>> loss.shape, bool(loss > 0)
        ([], True)
    """

    def __init__(self, blank=0, reduction="mean"):
        super().__init__(reduction)
        self.blank = blank

    def forward(self, log_probs, labels, input_lengths, label_lengths, norm_by_times=False):
        return F.ctc_loss(log_probs, labels, input_lengths, label_lengths, self.blank,
                          self.reduction, norm_by_times)


class HSigmoidLoss(Layer):
    """Hierarchical sigmoid loss with learnt node weights (see
    `fw.nn.functional.hsigmoid_loss`); ``forward(input, label, path_table=None,
    path_code=None)``.

    Args:
        feature_size (int): the feature size D.
        num_classes (int): the number of classes (at least 2 for the default tree).
        weight_attr (ParamAttr, optional): attributes of the node weights
            ``[num_classes - 1, D]``. Default: None.
        bias_attr (ParamAttr|bool, optional): attributes of the node biases; False for none.
            Default: None.
        is_custom (bool, optional): use the tree given in forward. Default: False.
        is_sparse (bool, optional): accepted; the gradients are dense. Default: False.
        name (str, optional): a name for the layer. Default: None.

    Shape:
        - input: ``[N, D]``; label: ``[N]`` or ``[N, 1]``.
        - output: ``[N, 1]``.

    Examples:
        >>> import fw
        >>> loss_fn = fw.nn.HSigmoidLoss(feature_size=3, num_classes=6)
        >>> loss_fn.weight.shape
        [5, 3]
        >>> loss_fn(fw.randn([4, 3]), fw.to_tensor([0, 2, 5, 1])).shape
        [4, 1]
    """

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
    """Poisson negative log likelihood (see `fw.nn.functional.poisson_nll_loss`).

    Args:
        log_input (bool, optional): the input is the log of the rate. Default: True.
        full (bool, optional): add the Stirling term. Default: False.
        epsilon (float, optional): added inside the log. Default: 1e-8.
        reduction (str, optional): ``"none"`` (per-element loss), ``"mean"`` or ``"sum"``.
            Default: "mean".
        name (str, optional): a name for the layer. Default: None.

    Shape:
        - input, label: the same shape ``[*]``.
        - output: a scalar, or ``[*]`` with ``reduction="none"``.

    Examples:
        >>> import fw
        >>> loss_fn = fw.nn.PoissonNLLLoss()
        >>> round(loss_fn(fw.to_tensor([0.0, 1.0]), fw.to_tensor([1.0, 2.0])).item(), 4)
        0.8591
    """

    def __init__(self, log_input=True, full=False, epsilon=1e-8, reduction="mean", name=None):
        super().__init__(reduction)
        self.log_input = log_input
        self.full = full
        self.epsilon = epsilon

    def forward(self, input, label):  # noqa: A002
        return F.poisson_nll_loss(input, label, self.log_input, self.full, self.epsilon,
                                  self.reduction)


class GaussianNLLLoss(_Loss):
    """Gaussian negative log likelihood with a predicted variance (see
    `fw.nn.functional.gaussian_nll_loss`); ``forward(input, label, variance)``.

    Args:
        full (bool, optional): add the constant term. Default: False.
        epsilon (float, optional): the lower bound of the variance. Default: 1e-6.
        reduction (str, optional): ``"none"`` (per-element loss), ``"mean"`` or ``"sum"``.
            Default: "mean".
        name (str, optional): a name for the layer. Default: None.

    Shape:
        - input, label: ``[N, *]``; variance: the same, or without the last axis.
        - output: a scalar, or ``[N, *]`` with ``reduction="none"``.

    Examples:
        >>> import fw
        >>> loss_fn = fw.nn.GaussianNLLLoss()
        >>> mu, y, var = fw.zeros([2, 1]), fw.ones([2, 1]), fw.ones([2, 1])
        >>> loss_fn(mu, y, var).item()
        0.5
    """

    def __init__(self, full=False, epsilon=1e-6, reduction="mean", name=None):
        super().__init__(reduction)
        self.full = full
        self.epsilon = epsilon

    def forward(self, input, label, variance):  # noqa: A002
        return F.gaussian_nll_loss(input, label, variance, self.full, self.epsilon,
                                   self.reduction)


class SoftMarginLoss(_Loss):
    """Two-class logistic loss ``log(1 + exp(-label * input))`` (see
    `fw.nn.functional.soft_margin_loss`).

    Args:
        reduction (str, optional): ``"none"`` (per-element loss), ``"mean"`` or ``"sum"``.
            Default: "mean".
        name (str, optional): a name for the layer. Default: None.

    Shape:
        - input, label: the same shape ``[*]``.
        - output: a scalar, or ``[*]`` with ``reduction="none"``.

    Examples:
        >>> import fw
        >>> loss_fn = fw.nn.SoftMarginLoss()
        >>> round(loss_fn(fw.to_tensor([0.0]), fw.to_tensor([-1.0])).item(), 4)
        0.6931
    """

    def __init__(self, reduction="mean", name=None):
        super().__init__(reduction)

    def forward(self, input, label):  # noqa: A002
        return F.soft_margin_loss(input, label, self.reduction)


class MultiLabelSoftMarginLoss(_Loss):
    """Multi-label one-versus-all logistic loss (see
    `fw.nn.functional.multi_label_soft_margin_loss`).

    Args:
        weight (Tensor, optional): per-class weights ``[C]``. Default: None.
        reduction (str, optional): ``"none"`` (per-element loss), ``"mean"`` or ``"sum"``.
            Default: "mean".
        name (str, optional): a name for the layer. Default: None.

    Shape:
        - input, label: ``[N, C]``.
        - output: a scalar, or ``[N]`` with ``reduction="none"``.

    Examples:
        >>> import fw
        >>> loss_fn = fw.nn.MultiLabelSoftMarginLoss()
        >>> round(loss_fn(fw.to_tensor([[0.0, 0.0]]), fw.to_tensor([[1.0, 0.0]])).item(), 4)
        0.6931
    """

    def __init__(self, weight=None, reduction="mean", name=None):
        super().__init__(reduction)
        self.weight = weight

    def forward(self, input, label):  # noqa: A002
        return F.multi_label_soft_margin_loss(input, label, self.weight, self.reduction)


class MultiMarginLoss(_Loss):
    """Multi-class hinge loss (see `fw.nn.functional.multi_margin_loss`).

    Args:
        p (int, optional): 1 or 2. Default: 1.
        margin (float, optional): the margin. Default: 1.0.
        weight (Tensor, optional): per-class weights ``[C]``. Default: None.
        reduction (str, optional): ``"none"`` (per-element loss), ``"mean"`` or ``"sum"``.
            Default: "mean".
        name (str, optional): a name for the layer. Default: None.

    Shape:
        - input: ``[N, C]``; label: ``[N]``.
        - output: a scalar, or ``[N]`` with ``reduction="none"``.

    Examples:
        >>> import fw
        >>> loss_fn = fw.nn.MultiMarginLoss()
        >>> round(loss_fn(fw.to_tensor([[0.1, 0.2, 0.4, 0.8]]), fw.to_tensor([3])).item(), 4)
        0.325
    """

    def __init__(self, p=1, margin=1.0, weight=None, reduction="mean", name=None):
        super().__init__(reduction)
        self.p = p
        self.margin = margin
        self.weight = weight

    def forward(self, input, label):  # noqa: A002
        return F.multi_margin_loss(input, label, self.p, self.margin, self.weight,
                                   self.reduction)
