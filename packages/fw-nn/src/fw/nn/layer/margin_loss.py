"""`MultiLabelMarginLoss`, `RNNTLoss` and `AdaptiveLogSoftmaxWithLoss`: Paddle's layers
over the functions of `fw.nn.functional.margin_loss`."""

from __future__ import annotations

import fw
from fw.core.errors import InvalidArgumentError
from fw.nn.functional._helpers import check_reduction
from fw.nn.functional.margin_loss import (
    adaptive_log_softmax_with_loss,
    multi_label_margin_loss,
    rnnt_loss,
)
from fw.nn.layer.layers import Layer

__all__ = ["MultiLabelMarginLoss", "RNNTLoss", "AdaptiveLogSoftmaxWithLoss"]


class MultiLabelMarginLoss(Layer):
    """Multi-label hinge loss (see `fw.nn.functional.multi_label_margin_loss`).

    Args:
        reduction (str, optional): 'none', 'mean' (default) or 'sum'.
        name (str, optional): unused.

    Examples:
        >>> import fw
        >>> loss = fw.nn.MultiLabelMarginLoss(reduction="none")
        >>> x = fw.to_tensor([[0.1, 0.2, 0.4, 0.8]])
        >>> [round(v, 4) for v in loss(x, fw.to_tensor([[3, 0, -1, 1]])).tolist()]
        [0.85]
    """

    def __init__(self, reduction="mean", name=None):
        super().__init__()
        check_reduction(reduction, "MultiLabelMarginLoss")
        self.reduction = reduction

    def forward(self, input, label):  # noqa: A002
        return multi_label_margin_loss(input, label, self.reduction)


class RNNTLoss(Layer):
    """The RNN-Transducer loss (see `fw.nn.functional.rnnt_loss`).

    Args:
        blank (int, optional): the blank class. Default 0.
        fastemit_lambda (float, optional): FastEmit's weight. Default 0.001.
        reduction (str, optional): 'none', 'mean' (default) or 'sum'.
        name (str, optional): unused.

    Examples:
        >>> import fw
        >>> lp = fw.full([1, 1, 2, 2], -0.6931471805599453, "float64")
        >>> loss = fw.nn.RNNTLoss(reduction="sum")
        >>> one = fw.to_tensor([1], "int32")
        >>> round(float(loss(lp, fw.to_tensor([[1]], "int32"), one, one)), 6)
        1.386294
    """

    def __init__(self, blank=0, fastemit_lambda=0.001, reduction="mean", name=None):
        super().__init__()
        check_reduction(reduction, "RNNTLoss")
        self.blank, self.fastemit_lambda, self.reduction = blank, fastemit_lambda, reduction

    def forward(self, input, label, input_lengths, label_lengths):  # noqa: A002
        return rnnt_loss(input, label, input_lengths, label_lengths, self.blank,
                         self.fastemit_lambda, self.reduction)


class AdaptiveLogSoftmaxWithLoss(Layer):
    """Adaptive softmax (Grave et al., 2017) with Paddle's parameters: ``head_weight``
    ``[in_features, shortlist + n_clusters]``, optional ``head_bias``, and per cluster
    ``tail_weights[i] = [[in_features, hsz], [hsz, osz]]`` with
    ``hsz = in_features // div_value ** (i + 1)``.

    Args:
        in_features (int): the feature size.
        n_classes (int): the number of classes (sorted by decreasing frequency).
        cutoffs (list[int]): increasing cluster boundaries in ``[1, n_classes - 1]``.
        weight_attr (ParamAttr, optional): attributes of the weights.
        bias_attr (ParamAttr, optional): attributes of the head bias.
        div_value (float, optional): the projection shrink factor. Default 4.0.
        head_bias (bool, optional): give the head a bias. Default False.
        name (str, optional): unused.

    Examples:
        >>> import fw
        >>> _ = fw.seed(0)
        >>> asm = fw.nn.AdaptiveLogSoftmaxWithLoss(8, 10, [2, 6], div_value=2.0)
        >>> out, loss = asm(fw.randn([4, 8]), fw.to_tensor([0, 3, 7, 9]))
        >>> out.shape, asm.log_prob(fw.randn([4, 8])).shape, asm.predict(fw.randn([2, 8])).shape
        ([4], [4, 10], [2])
    """

    def __init__(self, in_features, n_classes, cutoffs, weight_attr=None, bias_attr=None,
                 div_value=4.0, head_bias=False, name=None):
        super().__init__()
        cutoffs = list(cutoffs)
        if (cutoffs != sorted(cutoffs) or not cutoffs or min(cutoffs) <= 0
                or max(cutoffs) > n_classes - 1 or len(set(cutoffs)) != len(cutoffs)
                or any(int(c) != c for c in cutoffs)):
            raise InvalidArgumentError(
                f"AdaptiveLogSoftmaxWithLoss: cutoffs should be a sequence of unique, positive "
                f"integers sorted in an increasing order, where each value is between 1 and "
                f"n_classes-1 ({n_classes - 1}), got {cutoffs}")
        self.in_features, self.n_classes = in_features, n_classes
        self.cutoffs = [*cutoffs, n_classes]
        self.div_value = div_value
        self.is_head_bias = head_bias
        self.shortlist_size = self.cutoffs[0]
        self.n_clusters = len(self.cutoffs) - 1
        self.head_size = self.shortlist_size + self.n_clusters
        self.head_weight = self.create_parameter([in_features, self.head_size], attr=weight_attr)
        self.head_bias = self.create_parameter([self.head_size], attr=bias_attr, is_bias=True) \
            if head_bias else None
        self.tail_weights = []
        for i in range(self.n_clusters):
            hsz = int(in_features // (div_value ** (i + 1)))
            osz = self.cutoffs[i + 1] - self.cutoffs[i]
            proj = self.create_parameter([in_features, hsz], attr=weight_attr)
            out = self.create_parameter([hsz, osz], attr=weight_attr)
            # registered so that parameters() and state_dict() hold them (Paddle keeps
            # them in a plain list only, out of its state dict)
            self.add_parameter(f"tail_weights_{i}_0", proj)
            self.add_parameter(f"tail_weights_{i}_1", out)
            self.tail_weights.append([proj, out])

    def forward(self, input, label):  # noqa: A002
        return adaptive_log_softmax_with_loss(input, label, self.head_weight,
                                              self.tail_weights, self.cutoffs, self.head_bias)

    def _full_log_prob(self, input, head_output):  # noqa: A002
        head_lp = fw.nn.functional.log_softmax(head_output, axis=1)
        parts = [head_lp[:, :self.shortlist_size]]
        for i in range(self.n_clusters):
            proj, out = self.tail_weights[i]
            lp = fw.nn.functional.log_softmax(fw.matmul(fw.matmul(input, proj), out), axis=1)
            parts.append(lp + head_lp[:, self.shortlist_size + i].unsqueeze(1))
        return fw.concat(parts, axis=1)

    def log_prob(self, input):  # noqa: A002
        """Log-probabilities of every class under the adaptive softmax.

        Args:
            input (Tensor): features ``[N, in_features]``.

        Returns:
            Tensor: ``[N, n_classes]``.

        Examples:
            >>> import fw
            >>> asm = fw.nn.AdaptiveLogSoftmaxWithLoss(8, 10, cutoffs=[2, 6])
            >>> logp = asm.log_prob(fw.randn([3, 8]))
            >>> logp.shape, [round(v, 4) for v in logp.exp().sum(axis=1).tolist()]
            ([3, 10], [1.0, 1.0, 1.0])
        """
        head = fw.matmul(input, self.head_weight)
        if self.head_bias is not None:
            head = head + self.head_bias
        return self._full_log_prob(input, head)

    def predict(self, input):  # noqa: A002
        """The most likely class of each row (``argmax(log_prob(input), axis=1)``).

        Args:
            input (Tensor): features ``[N, in_features]``.

        Returns:
            Tensor: int64 ``[N]``.

        Examples:
            >>> import fw
            >>> asm = fw.nn.AdaptiveLogSoftmaxWithLoss(8, 10, cutoffs=[2, 6])
            >>> x = fw.randn([3, 8])
            >>> asm.predict(x).tolist() == asm.log_prob(x).argmax(axis=1).tolist()
            True
        """
        return fw.argmax(self.log_prob(input), axis=1)
