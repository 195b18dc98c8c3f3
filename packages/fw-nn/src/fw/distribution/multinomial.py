"""The multinomial distribution (Paddle's ``paddle.distribution.Multinomial``)."""

from __future__ import annotations

import numpy as np

import fw
from fw.core.tensor import Tensor
from fw.distribution.categorical import Categorical
from fw.distribution.distribution import Distribution, _shape_arg

__all__ = ["Multinomial"]


class Multinomial(Distribution):
    r"""The multinomial distribution: counts of ``total_count`` categorical draws with
    probabilities ``probs`` (normalised over the last axis).

    Args:
        total_count (int): the number of draws (>= 1).
        probs (Tensor): the category probabilities (last axis), at least 1-D.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> m = fw.distribution.Multinomial(4, fw.to_tensor([0.25, 0.75]))
            >>> m.mean.numpy().tolist()
            [1.0, 3.0]
            >>> round(float(m.prob(fw.to_tensor([1.0, 3.0]))), 4)
            0.4219
    """

    def __init__(self, total_count, probs):
        if isinstance(total_count, bool) or not isinstance(total_count, int) or \
                total_count < 1:
            raise ValueError(f"Multinomial: 'total_count' must be an int >= 1, got "
                             f"{total_count!r}")
        if not isinstance(probs, Tensor):
            raise TypeError(f"Multinomial: 'probs' must be a Tensor, got "
                            f"{type(probs).__name__}")
        if probs.dim() < 1:
            raise ValueError("Multinomial: 'probs' must be at least 1-D")
        self.probs = probs / probs.sum(-1, keepdim=True)
        self.total_count = total_count
        self._categorical = Categorical(logits=self._probs_to_logits(probs))
        super().__init__(tuple(probs.shape[:-1]), tuple(probs.shape[-1:]))

    @property
    def mean(self):
        """``total_count * probs``.

        Returns:
            Tensor: the mean, of the batch shape (the event shape added for a multivariate
                distribution).

        Examples:
            >>> import fw
            >>> d = fw.distribution.Multinomial(5, fw.to_tensor([0.2, 0.3, 0.5]))
            >>> [round(v, 4) for v in d.mean.tolist()]
            [1.0, 1.5, 2.5]
        """
        return self.probs * self.total_count

    @property
    def variance(self):
        """``total_count * probs * (1 - probs)``.

        Returns:
            Tensor: the variance, of the batch shape (the event shape added for a
                multivariate distribution).

        Examples:
            >>> import fw
            >>> d = fw.distribution.Multinomial(5, fw.to_tensor([0.2, 0.3, 0.5]))
            >>> [round(v, 4) for v in d.variance.tolist()]
            [0.8, 1.05, 1.25]
        """
        return self.total_count * self.probs * (1 - self.probs)

    def prob(self, value):
        """The probability of the counts ``value``.

        Args:
            value (Tensor): the point(s) to evaluate; the last axis holds the event, the
                others broadcast against the batch.

        Returns:
            Tensor: the density (probability mass for a discrete distribution), of the
                broadcast batch shape.

        Examples:
            >>> import fw
            >>> d = fw.distribution.Multinomial(5, fw.to_tensor([0.2, 0.3, 0.5]))
            >>> round(float(d.prob(fw.to_tensor([1.0, 1.0, 3.0]))), 4)
            0.15
        """
        return fw.exp(self.log_prob(value))

    def log_prob(self, value):
        """The log probability of the counts ``value`` (last axis).

        Args:
            value (Tensor): the point(s) to evaluate; the last axis holds the event, the
                others broadcast against the batch.

        Returns:
            Tensor: the log density (log probability mass for a discrete distribution), of
                the broadcast batch shape.

        Examples:
            >>> import fw
            >>> d = fw.distribution.Multinomial(5, fw.to_tensor([0.2, 0.3, 0.5]))
            >>> round(float(d.log_prob(fw.to_tensor([1.0, 1.0, 3.0]))), 4)
            -1.8971
        """
        if not isinstance(value, Tensor):
            value = fw.to_tensor(np.asarray(value))
        if value.dtype != self.probs.dtype:
            value = value.astype(self.probs.dtype)
        logits, value = fw.broadcast_tensors([fw.log(self.probs), value])
        # 0 * log(0) counts as 0: a category with probability 0 drawn 0 times
        logits = fw.where(fw.logical_and(value == 0, fw.isinf(logits)),
                          fw.zeros_like(logits), logits)
        return (fw.lgamma(value.sum(-1) + 1) - fw.lgamma(value + 1).sum(-1)
                + (value * logits).sum(-1))

    def sample(self, shape=()):
        """Count vectors of shape ``shape + batch_shape + event_shape``.

        Args:
            shape (list|tuple, optional): the sample shape, put before the batch and event
                shapes. Default: ().

        Returns:
            Tensor: samples of shape ``shape + batch_shape + event_shape``.

        Examples:
            >>> import fw
            >>> d = fw.distribution.Multinomial(5, fw.to_tensor([0.2, 0.3, 0.5]))
            >>> _ = fw.seed(0)
            >>> d.sample([4]).shape
            [4, 3]
        """
        import fw.nn.functional as F

        shape = list(_shape_arg(shape, "Multinomial.sample"))
        samples = self._categorical.sample([self.total_count] + shape)
        return F.one_hot(samples, self.probs.shape[-1]).astype(self.probs.dtype).sum(0)

    def entropy(self):
        """The entropy (through the binomial marginals).

        Returns:
            Tensor: the entropy (in nats), of the batch shape.

        Examples:
            >>> import fw
            >>> d = fw.distribution.Multinomial(5, fw.to_tensor([0.2, 0.3, 0.5]))
            >>> round(float(d.entropy()), 4)
            2.5918
        """
        n = fw.full([], self.total_count, dtype=self.probs.dtype)
        support = fw.arange(self.total_count + 1, dtype=self.probs.dtype).reshape(
            [-1] + [1] * len(self.probs.shape))[1:]
        pmf = fw.exp(self._binomial_logpmf(n, support))
        return (n * self._categorical.entropy() - fw.lgamma(n + 1)
                + (pmf * fw.lgamma(support + 1)).sum([0, -1]))

    def _binomial_logpmf(self, count, value):
        logits = self._probs_to_logits(self.probs, is_binary=True)
        clip0 = (logits.clip(min=0) + logits - logits.clip(max=0)) / 2
        norm = count * clip0 + count * fw.log1p(fw.exp(-fw.abs(logits))) - fw.lgamma(count + 1)
        return value * logits - fw.lgamma(value + 1) - fw.lgamma(count - value + 1) - norm
