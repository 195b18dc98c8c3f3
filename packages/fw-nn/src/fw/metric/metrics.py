"""Evaluation metrics (Paddle's ``paddle.metric``).

A `Metric` accumulates over batches: ``compute`` (optional, on Tensors — inside the
model's step) turns predictions into per-sample results, ``update`` adds a batch
and returns the batch's value, ``accumulate`` returns the value over everything
since ``reset``.
"""

from __future__ import annotations

import abc

import numpy as np

from fw.core.tensor import Tensor, to_tensor

__all__ = ["Metric", "Accuracy", "Precision", "Recall", "Auc", "accuracy"]


def _np(x, what):
    if isinstance(x, Tensor):
        return x.numpy()
    if isinstance(x, (np.ndarray, np.generic, list, tuple, int, float)):
        return np.asarray(x)
    raise TypeError(f"{what} must be a Tensor or a NumPy array, got {type(x).__name__}")


class Metric(abc.ABC):
    """Base class of the metrics of ``fw.metric`` (and of ``fw.Model``'s ``metrics``).

    A metric accumulates over batches: `reset` clears it, `update` adds one batch,
    `accumulate` gives the value so far and `name` its name(s). `compute` (identity by
    default) may preprocess the model's outputs and the labels on tensors first;
    ``fw.Model`` calls ``update(*compute(outputs, labels))`` every batch.

    Examples:
        >>> import fw
        >>> class Mean(fw.metric.Metric):
        ...     def __init__(self):
        ...         self.reset()
        ...     def reset(self):
        ...         self.total, self.count = 0.0, 0
        ...     def update(self, x):
        ...         self.total += float(x.sum())
        ...         self.count += x.size
        ...     def accumulate(self):
        ...         return self.total / max(self.count, 1)
        ...     def name(self):
        ...         return "mean"
        >>> m = Mean()
        >>> m.update(fw.to_tensor([1.0, 3.0]))
        >>> m.update(fw.to_tensor([5.0]))
        >>> m.accumulate()
        3.0
    """

    def __init__(self):  # noqa: B027 - subclasses need not call it, but may
        pass

    @abc.abstractmethod
    def reset(self):
        """Clear the accumulated state.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> m = fw.metric.Accuracy()
            >>> correct = m.compute(fw.to_tensor([[0.1, 0.9], [0.8, 0.2]]), fw.to_tensor([1, 1]))
            >>> m.update(correct)
            0.5
            >>> m.accumulate(), m.name()
            (0.5, ['acc'])
            >>> m.reset()
            >>> m.accumulate()
            0.0
        """

    @abc.abstractmethod
    def update(self, *args):
        """Add one batch's results to the state.

        Args:
            *args: what `compute` returned for the batch.

        Returns:
            The batch's own value (metric-specific).

        Examples:
            >>> import fw
            >>> m = fw.metric.Accuracy()
            >>> correct = m.compute(fw.to_tensor([[0.1, 0.9], [0.8, 0.2]]), fw.to_tensor([1, 1]))
            >>> m.update(correct)
            0.5
            >>> m.accumulate(), m.name()
            (0.5, ['acc'])
            >>> m.reset()
            >>> m.accumulate()
            0.0
        """

    @abc.abstractmethod
    def accumulate(self):
        """The metric over every batch since the last `reset`.

        Returns:
            float (or a list of floats for metrics with several values).

        Examples:
            >>> import fw
            >>> m = fw.metric.Accuracy()
            >>> correct = m.compute(fw.to_tensor([[0.1, 0.9], [0.8, 0.2]]), fw.to_tensor([1, 1]))
            >>> m.update(correct)
            0.5
            >>> m.accumulate(), m.name()
            (0.5, ['acc'])
            >>> m.reset()
            >>> m.accumulate()
            0.0
        """

    @abc.abstractmethod
    def name(self):
        """The metric's name, as ``fw.Model`` logs it.

        Returns:
            str (or a list of str for metrics with several values).

        Examples:
            >>> import fw
            >>> m = fw.metric.Accuracy()
            >>> correct = m.compute(fw.to_tensor([[0.1, 0.9], [0.8, 0.2]]), fw.to_tensor([1, 1]))
            >>> m.update(correct)
            0.5
            >>> m.accumulate(), m.name()
            (0.5, ['acc'])
            >>> m.reset()
            >>> m.accumulate()
            0.0
        """

    def compute(self, *args):
        """Preprocess one batch on tensors before `update` (identity by default).

        Args:
            *args: the model's outputs and the labels.

        Returns:
            tuple, the arguments for `update`.

        Examples:
            >>> import fw
            >>> m = fw.metric.Accuracy()
            >>> correct = m.compute(fw.to_tensor([[0.1, 0.9], [0.8, 0.2]]), fw.to_tensor([1, 1]))
            >>> m.update(correct)
            0.5
            >>> m.accumulate(), m.name()
            (0.5, ['acc'])
            >>> m.reset()
            >>> m.accumulate()
            0.0
        """
        return args


class Accuracy(Metric):
    """Top-k classification accuracy, accumulated over batches.

    `compute(pred, label)` takes scores ``[N, C]`` (or ``[..., C]``) and labels ``[N]`` /
    ``[N, 1]`` (or one-hot ``[N, C]``) and returns a ``[N, maxk]`` float matrix of hits;
    `update` takes that matrix and returns the batch accuracy (a list with several k).

    Args:
        topk (int|tuple, optional): the k values, e.g. ``(1, 5)``. Default: (1,).
        name (str, optional): the name; None gives ``"acc"`` (``"acc_top1"``,
            ``"acc_top5"`` with several k). Default: None.

    Examples:
        >>> import fw
        >>> m = fw.metric.Accuracy(topk=(1, 2))
        >>> pred = fw.to_tensor([[0.1, 0.7, 0.2], [0.5, 0.3, 0.2], [0.3, 0.3, 0.4]])
        >>> m.update(m.compute(pred, fw.to_tensor([1, 1, 0])))
        [0.3333333333333333, 1.0]
        >>> m.accumulate(), m.name()
        ([0.3333333333333333, 1.0], ['acc_top1', 'acc_top2'])
    """

    def __init__(self, topk=(1,), name=None, *args, **kwargs):
        super().__init__()
        self.topk = (topk,) if isinstance(topk, int) else tuple(topk)
        if not self.topk or any(k <= 0 for k in self.topk):
            raise ValueError(f"Accuracy: 'topk' must be positive ints, got {topk}")
        self.maxk = max(self.topk)
        base = name or "acc"
        self._name = [f"{base}_top{k}" for k in self.topk] if self.maxk != 1 else [base]
        self.reset()

    def compute(self, pred, label, *args):
        """The hits of one batch: for each sample and each k in ``1..max(topk)``, 1.0
        when the label is among the k highest scores.

        Args:
            pred (Tensor): scores ``[N, C]`` (or ``[..., C]``).
            label (Tensor): int labels ``[N]`` / ``[N, 1]``, or one-hot ``[N, C]``.
            *args: ignored.

        Returns:
            Tensor, float32 ``[N, max(topk)]``.

        Examples:
            >>> import fw
            >>> m = fw.metric.Accuracy()
            >>> hits = m.compute(fw.to_tensor([[0.1, 0.9], [0.8, 0.2]]), fw.to_tensor([[1], [1]]))
            >>> hits.tolist()
            [[1.0], [0.0]]
            >>> m.update(hits)
            0.5
            >>> m.accumulate(), m.name()
            (0.5, ['acc'])
            >>> m.reset()
            >>> m.accumulate()
            0.0
        """
        import fw

        order = fw.argsort(pred, axis=-1, descending=True)
        top = order[..., :self.maxk]
        if label.ndim == 1 or (label.ndim == 2 and label.shape[-1] == 1):
            label = fw.reshape(label, [-1, 1])
        elif label.shape[-1] != 1:
            label = fw.argmax(label, axis=-1, keepdim=True)
        return fw.cast(top == label.astype(top.dtype), "float32")

    def update(self, correct, *args):
        """Add a batch's hits (what `compute` returned).

        Args:
            correct (Tensor|ndarray): the ``[N, max(topk)]`` hits.
            *args: ignored.

        Returns:
            float (a list with several k), the batch's accuracy.

        Examples:
            >>> import fw
            >>> m = fw.metric.Accuracy()
            >>> hits = m.compute(fw.to_tensor([[0.1, 0.9], [0.8, 0.2]]), fw.to_tensor([[1], [1]]))
            >>> hits.tolist()
            [[1.0], [0.0]]
            >>> m.update(hits)
            0.5
            >>> m.accumulate(), m.name()
            (0.5, ['acc'])
            >>> m.reset()
            >>> m.accumulate()
            0.0
        """
        c = _np(correct, "Accuracy.update: 'correct'")
        n = int(np.prod(c.shape[:-1]))
        accs = []
        for i, k in enumerate(self.topk):
            hits = float(c[..., :k].sum())
            accs.append(hits / n if n else 0.0)
            self.total[i] += hits
            self.count[i] += n
        return accs[0] if len(self.topk) == 1 else accs

    def reset(self):
        """Clear the counts.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> m = fw.metric.Accuracy()
            >>> hits = m.compute(fw.to_tensor([[0.1, 0.9], [0.8, 0.2]]), fw.to_tensor([[1], [1]]))
            >>> hits.tolist()
            [[1.0], [0.0]]
            >>> m.update(hits)
            0.5
            >>> m.accumulate(), m.name()
            (0.5, ['acc'])
            >>> m.reset()
            >>> m.accumulate()
            0.0
        """
        self.total = [0.0] * len(self.topk)
        self.count = [0] * len(self.topk)

    def accumulate(self):
        """The accuracy over every batch since the last `reset`.

        Returns:
            float (a list with several k).

        Examples:
            >>> import fw
            >>> m = fw.metric.Accuracy()
            >>> hits = m.compute(fw.to_tensor([[0.1, 0.9], [0.8, 0.2]]), fw.to_tensor([[1], [1]]))
            >>> hits.tolist()
            [[1.0], [0.0]]
            >>> m.update(hits)
            0.5
            >>> m.accumulate(), m.name()
            (0.5, ['acc'])
            >>> m.reset()
            >>> m.accumulate()
            0.0
        """
        res = [t / c if c > 0 else 0.0 for t, c in zip(self.total, self.count)]
        return res[0] if len(self.topk) == 1 else res

    def name(self):
        """The metric's name(s).

        Returns:
            list[str], e.g. ``['acc']``.

        Examples:
            >>> import fw
            >>> m = fw.metric.Accuracy()
            >>> hits = m.compute(fw.to_tensor([[0.1, 0.9], [0.8, 0.2]]), fw.to_tensor([[1], [1]]))
            >>> hits.tolist()
            [[1.0], [0.0]]
            >>> m.update(hits)
            0.5
            >>> m.accumulate(), m.name()
            (0.5, ['acc'])
            >>> m.reset()
            >>> m.accumulate()
            0.0
        """
        return self._name


class _Binary(Metric):
    def __init__(self, name):
        super().__init__()
        self._name = name
        self.reset()

    def _counts(self, preds, labels):
        p = _np(preds, f"{type(self).__name__}.update: 'preds'").reshape(-1)
        y = _np(labels, f"{type(self).__name__}.update: 'labels'").reshape(-1)
        if p.shape != y.shape:
            raise ValueError(f"{type(self).__name__}.update: preds has {p.size} values but "
                             f"labels has {y.size}")
        hard = np.floor(p.astype(np.float64) + 0.5).astype(np.int64)
        y = y.astype(np.int64)
        return hard, y

    def reset(self):
        """Clear the counts.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> m = fw.metric.Recall()
            >>> preds = fw.to_tensor([[0.9], [0.8], [0.2], [0.6]])
            >>> m.update(preds, fw.to_tensor([[1], [0], [1], [1]]))
            >>> m.accumulate(), m.name()
            (0.6666666666666666, 'recall')
            >>> m.reset()
            >>> m.accumulate()
            0.0
        """
        self.tp = self.fp = self.fn = 0

    def name(self):
        """The metric's name.

        Returns:
            str.

        Examples:
            >>> import fw
            >>> m = fw.metric.Recall()
            >>> preds = fw.to_tensor([[0.9], [0.8], [0.2], [0.6]])
            >>> m.update(preds, fw.to_tensor([[1], [0], [1], [1]]))
            >>> m.accumulate(), m.name()
            (0.6666666666666666, 'recall')
            >>> m.reset()
            >>> m.accumulate()
            0.0
        """
        return self._name


class Precision(_Binary):
    """Binary precision ``tp / (tp + fp)``, accumulated over batches.

    Predictions are probabilities of the positive class, rounded at 0.5.

    Args:
        name (str, optional): the name. Default: "precision".
        *args: ignored (Paddle's signature).
        **kwargs: ignored.

    Examples:
        >>> import fw
        >>> m = fw.metric.Precision()
        >>> preds = fw.to_tensor([[0.9], [0.8], [0.2], [0.6]])
        >>> m.update(preds, fw.to_tensor([[1], [0], [1], [1]]))
        >>> m.accumulate(), m.name()
        (0.6666666666666666, 'precision')
        >>> m.reset()
        >>> m.accumulate()
        0.0
    """

    def __init__(self, name="precision", *args, **kwargs):
        super().__init__(name)

    def update(self, preds, labels):
        """Add one batch.

        Args:
            preds (Tensor|ndarray): positive-class probabilities ``[N, 1]`` (or ``[N]``).
            labels (Tensor|ndarray): 0/1 labels of the same shape.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> m = fw.metric.Precision()
            >>> preds = fw.to_tensor([[0.9], [0.8], [0.2], [0.6]])
            >>> m.update(preds, fw.to_tensor([[1], [0], [1], [1]]))
            >>> m.accumulate(), m.name()
            (0.6666666666666666, 'precision')
            >>> m.reset()
            >>> m.accumulate()
            0.0
        """
        hard, y = self._counts(preds, labels)
        self.tp += int(((hard == 1) & (y == 1)).sum())
        self.fp += int(((hard == 1) & (y != 1)).sum())

    def accumulate(self):
        """The value over every batch since the last `reset` (0.0 before any positive
        prediction).

        Returns:
            float.

        Examples:
            >>> import fw
            >>> m = fw.metric.Precision()
            >>> preds = fw.to_tensor([[0.9], [0.8], [0.2], [0.6]])
            >>> m.update(preds, fw.to_tensor([[1], [0], [1], [1]]))
            >>> m.accumulate(), m.name()
            (0.6666666666666666, 'precision')
            >>> m.reset()
            >>> m.accumulate()
            0.0
        """
        d = self.tp + self.fp
        return float(self.tp) / d if d != 0 else 0.0


class Recall(_Binary):
    """Binary recall ``tp / (tp + fn)``, accumulated over batches.

    Predictions are probabilities of the positive class, rounded at 0.5.

    Args:
        name (str, optional): the name. Default: "recall".
        *args: ignored (Paddle's signature).
        **kwargs: ignored.

    Examples:
        >>> import fw
        >>> m = fw.metric.Recall()
        >>> preds = fw.to_tensor([[0.9], [0.8], [0.2], [0.6]])
        >>> m.update(preds, fw.to_tensor([[1], [0], [1], [1]]))
        >>> m.accumulate(), m.name()
        (0.6666666666666666, 'recall')
        >>> m.reset()
        >>> m.accumulate()
        0.0
    """

    def __init__(self, name="recall", *args, **kwargs):
        super().__init__(name)

    def update(self, preds, labels):
        """Add one batch.

        Args:
            preds (Tensor|ndarray): positive-class probabilities ``[N, 1]`` (or ``[N]``).
            labels (Tensor|ndarray): 0/1 labels of the same shape.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> m = fw.metric.Recall()
            >>> preds = fw.to_tensor([[0.9], [0.8], [0.2], [0.6]])
            >>> m.update(preds, fw.to_tensor([[1], [0], [1], [1]]))
            >>> m.accumulate(), m.name()
            (0.6666666666666666, 'recall')
            >>> m.reset()
            >>> m.accumulate()
            0.0
        """
        hard, y = self._counts(preds, labels)
        self.tp += int(((hard == 1) & (y == 1)).sum())
        self.fn += int(((hard != 1) & (y == 1)).sum())

    def accumulate(self):
        """The value over every batch since the last `reset` (0.0 before any positive
        prediction or label).

        Returns:
            float.

        Examples:
            >>> import fw
            >>> m = fw.metric.Recall()
            >>> preds = fw.to_tensor([[0.9], [0.8], [0.2], [0.6]])
            >>> m.update(preds, fw.to_tensor([[1], [0], [1], [1]]))
            >>> m.accumulate(), m.name()
            (0.6666666666666666, 'recall')
            >>> m.reset()
            >>> m.accumulate()
            0.0
        """
        d = self.tp + self.fn
        return float(self.tp) / d if d != 0 else 0.0


class Auc(Metric):
    """Area under the ROC curve, from histograms of the predicted probability
    (so it accumulates over batches in constant memory).

    Args:
        curve (str, optional): ``"ROC"``; ``"PR"`` is accepted and computed as ROC, as in
            Paddle. Default: "ROC".
        num_thresholds (int, optional): the number of histogram bins minus one.
            Default: 4095.
        name (str, optional): the name. Default: "auc".
        *args: ignored (Paddle's signature).
        **kwargs: ignored.

    Examples:
        >>> import fw
        >>> m = fw.metric.Auc()
        >>> preds = fw.to_tensor([[0.9, 0.1], [0.3, 0.7], [0.2, 0.8], [0.6, 0.4]])
        >>> m.update(preds, fw.to_tensor([[0], [1], [1], [0]]))
        >>> round(m.accumulate(), 4), m.name()
        (1.0, 'auc')
        >>> m.reset()
        >>> m.accumulate()
        0.0
    """

    def __init__(self, curve="ROC", num_thresholds=4095, name="auc", *args, **kwargs):
        super().__init__()
        self._curve = curve
        self._num_thresholds = int(num_thresholds)
        self._name = name
        self.reset()

    def update(self, preds, labels):
        """Add one batch.

        Args:
            preds (Tensor|ndarray): ``[N, 2]`` class probabilities (column 1 is the positive
                class), or ``[N]`` / ``[N, 1]`` positive-class probabilities.
            labels (Tensor|ndarray): ``[N]`` / ``[N, 1]`` 0/1 labels.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> m = fw.metric.Auc()
            >>> preds = fw.to_tensor([[0.9, 0.1], [0.3, 0.7], [0.2, 0.8], [0.6, 0.4]])
            >>> m.update(preds, fw.to_tensor([[0], [1], [1], [0]]))
            >>> round(m.accumulate(), 4), m.name()
            (1.0, 'auc')
            >>> m.reset()
            >>> m.accumulate()
            0.0
        """
        p = _np(preds, "Auc.update: 'preds'").astype(np.float64)
        y = _np(labels, "Auc.update: 'labels'").reshape(-1)
        if p.ndim == 2 and p.shape[1] >= 2:
            p = p[:, 1]
        p = p.reshape(-1)
        if p.size != y.size:
            raise ValueError(f"Auc.update: preds has {p.size} samples but labels has {y.size}")
        if p.size and (p.min() < 0 or p.max() > 1):
            raise ValueError("Auc.update: preds must be probabilities in [0, 1]")
        bins = (p * self._num_thresholds).astype(np.int64)
        n = self._num_thresholds + 1
        pos = y.astype(bool)
        self._stat_pos += np.bincount(bins[pos], minlength=n)[:n]
        self._stat_neg += np.bincount(bins[~pos], minlength=n)[:n]

    def reset(self):
        """Clear the histograms.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> m = fw.metric.Auc()
            >>> preds = fw.to_tensor([[0.9, 0.1], [0.3, 0.7], [0.2, 0.8], [0.6, 0.4]])
            >>> m.update(preds, fw.to_tensor([[0], [1], [1], [0]]))
            >>> round(m.accumulate(), 4), m.name()
            (1.0, 'auc')
            >>> m.reset()
            >>> m.accumulate()
            0.0
        """
        n = self._num_thresholds + 1
        self._stat_pos = np.zeros(n, dtype=np.float64)
        self._stat_neg = np.zeros(n, dtype=np.float64)

    def accumulate(self):
        """The area under the curve so far (0.0 without both classes).

        Returns:
            float.

        Examples:
            >>> import fw
            >>> m = fw.metric.Auc()
            >>> preds = fw.to_tensor([[0.9, 0.1], [0.3, 0.7], [0.2, 0.8], [0.6, 0.4]])
            >>> m.update(preds, fw.to_tensor([[0], [1], [1], [0]]))
            >>> round(m.accumulate(), 4), m.name()
            (1.0, 'auc')
            >>> m.reset()
            >>> m.accumulate()
            0.0
        """
        # sweep the threshold from high to low: cumulative positives/negatives above it
        pos = np.cumsum(self._stat_pos[::-1])
        neg = np.cumsum(self._stat_neg[::-1])
        tot_pos, tot_neg = pos[-1] if pos.size else 0.0, neg[-1] if neg.size else 0.0
        if tot_pos <= 0 or tot_neg <= 0:
            return 0.0
        pp = np.concatenate([[0.0], pos])
        nn = np.concatenate([[0.0], neg])
        area = np.sum(np.abs(np.diff(nn)) * (pp[1:] + pp[:-1]) / 2.0)
        return float(area / tot_pos / tot_neg)

    def name(self):
        """The metric's name.

        Returns:
            str.

        Examples:
            >>> import fw
            >>> m = fw.metric.Auc()
            >>> preds = fw.to_tensor([[0.9, 0.1], [0.3, 0.7], [0.2, 0.8], [0.6, 0.4]])
            >>> m.update(preds, fw.to_tensor([[0], [1], [1], [0]]))
            >>> round(m.accumulate(), 4), m.name()
            (1.0, 'auc')
            >>> m.reset()
            >>> m.accumulate()
            0.0
        """
        return self._name


def accuracy(input, label, k=1, correct=None, total=None, name=None):  # noqa: A002
    """Top-k accuracy of one batch, as a tensor (Paddle's ``paddle.metric.accuracy``).

    Args:
        input (Tensor): scores ``[N, C]``.
        label (Tensor): int labels ``[N, 1]`` (or ``[N]``).
        k (int, optional): a hit is the label among the k highest scores. Default: 1.
        correct (Tensor, optional): an int tensor that receives the number of hits.
            Default: None.
        total (Tensor, optional): an int tensor that receives the number of samples.
            Default: None.
        name (str, optional): unused; Paddle's name. Default: None.

    Returns:
        Tensor, a float32 0-D tensor: the fraction of hits.

    Examples:
        >>> import fw
        >>> pred = fw.to_tensor([[0.2, 0.1, 0.4, 0.1, 0.1], [0.2, 0.3, 0.1, 0.15, 0.25]])
        >>> label = fw.to_tensor([[2], [0]])
        >>> top1 = fw.metric.accuracy(pred, label, k=1)
        >>> top2 = fw.metric.accuracy(pred, label, k=2)
        >>> top1.shape, float(top1), float(top2)
        ([], 0.5, 0.5)
    """
    x = input.numpy() if isinstance(input, Tensor) else np.asarray(input)
    y = label.numpy() if isinstance(label, Tensor) else np.asarray(label)
    if x.ndim < 1:
        raise ValueError("accuracy: 'input' must have a class axis")
    n = int(np.prod(x.shape[:-1])) if x.ndim > 1 else 1
    y = y.reshape(n, -1)[:, :1]
    k = min(int(k), x.shape[-1])
    xs = x.reshape(n, -1).astype(np.float64)
    # the indices of the k largest scores (ties resolved by position, like argsort)
    top = np.argsort(-xs, axis=-1, kind="stable")[:, :k]
    hits = int((top == y).any(axis=1).sum())
    if correct is not None:
        correct.set_value(np.full(correct.shape, hits, dtype=correct.numpy().dtype))
    if total is not None:
        total.set_value(np.full(total.shape, n, dtype=total.numpy().dtype))
    acc = hits / n if n else 0.0
    return to_tensor(np.asarray(acc, dtype=np.float32))
