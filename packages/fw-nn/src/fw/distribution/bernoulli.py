"""The Bernoulli distribution (Paddle's ``paddle.distribution.Bernoulli``)."""

from __future__ import annotations

import fw
from fw.core.tensor import Tensor
from fw.distribution.distribution import _eps, _np_params, _value_like
from fw.distribution.exponential_family import ExponentialFamily

__all__ = ["Bernoulli"]


def _F():
    import fw.nn.functional as F

    return F


class Bernoulli(ExponentialFamily):
    r"""The Bernoulli distribution: 1 with probability ``probs``, else 0. ``probs`` is
    clipped to ``[eps, 1 - eps]`` of its dtype (as Paddle does) so the logits are finite.

    Args:
        probs (float|Tensor): the probability of 1.
        name (str, optional): a name for the operations. Default None.

    `rsample(shape, temperature=1.0)` gives Paddle's relaxed (Gumbel-softmax style)
    samples: logistic noise plus the logits, divided by ``temperature`` — real
    numbers whose sigmoid approaches a Bernoulli draw as the temperature goes to 0.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> b = fw.distribution.Bernoulli(0.3)
            >>> round(float(b.entropy()), 4)
            0.6109
    """

    def __init__(self, probs, name=None):
        self.name = name or "Bernoulli"
        if isinstance(probs, Tensor):
            self.probs = probs
            self.dtype = probs.dtype.name
        else:
            (self.probs,) = _np_params("Bernoulli", probs)
            self.dtype = fw.get_default_dtype().name
        eps = _eps(self.dtype)
        self.probs = fw.clip(self.probs, min=eps, max=1 - eps).astype(self.dtype)
        self.logits = self._probs_to_logits(self.probs, is_binary=True)
        super().__init__(batch_shape=tuple(self.probs.shape), event_shape=())

    @property
    def mean(self):
        """The mean, ``probs``.

        Returns:
            Tensor: the mean, in the batch shape.

        Examples:
            >>> import fw
            >>> d = fw.distribution.Bernoulli(0.3)
            >>> round(float(d.mean), 4)
            0.3
        """
        return self.probs

    @property
    def variance(self):
        """The variance, ``probs * (1 - probs)``.

        Returns:
            Tensor: the variance.

        Examples:
            >>> import fw
            >>> d = fw.distribution.Bernoulli(0.3)
            >>> round(float(d.variance), 4)
            0.21
        """
        return self.probs * (1 - self.probs)

    def sample(self, shape=()):
        """Draw 0/1 samples of shape ``shape + batch_shape`` (no gradient), in the dtype
        of ``probs``.

        Args:
            shape (Sequence[int], optional): the sample shape. Default: ().

        Returns:
            Tensor: the samples.

        Examples:
            >>> import fw
            >>> d = fw.distribution.Bernoulli(0.3)
            >>> s = d.sample([3])
            >>> s.shape, s.dtype
            ([3], fw.float32)
        """
        shape = list(self._extend_shape(shape))
        with fw.no_grad():
            return fw.bernoulli(self.probs.expand(shape))

    def rsample(self, shape=(), temperature=1.0):
        """Relaxed (Gumbel-softmax style) samples ``(logit(u) + logits) / temperature``,
        differentiable in ``probs``; they approach 0/1 logits as `temperature` falls.

        Args:
            shape (Sequence[int], optional): the sample shape. Default: ().
            temperature (float, optional): the relaxation temperature. Default: 1.0.

        Returns:
            Tensor: relaxed samples (logits) of shape ``shape + batch_shape``.

        Examples:
            >>> import fw
            >>> d = fw.distribution.Bernoulli(0.3)
            >>> d.rsample([3], temperature=0.5).shape
            [3]
        """
        shape = list(self._extend_shape(shape))
        t = fw.full([], float(temperature), dtype=self.dtype)
        probs = self.probs.expand(shape)
        u = fw.rand(shape, dtype=self.dtype)
        return ((u.log() - (-u).log1p()) + (probs.log() - (-probs).log1p())) / t

    def cdf(self, value):
        """The cumulative distribution function: 0 below 0, ``1 - probs`` on [0, 1), 1 from 1.

        Args:
            value (Tensor|float): the point(s), broadcast against the batch shape.

        Returns:
            Tensor: ``P(X <= value)``.

        Examples:
            >>> import fw
            >>> d = fw.distribution.Bernoulli(0.3)
            >>> round(float(d.cdf(fw.to_tensor(0.0))), 4)
            0.7
        """
        value = _value_like(value, self.probs)
        probs, value = fw.broadcast_tensors([self.probs, value])
        zeros, ones = fw.zeros_like(probs), fw.ones_like(probs)
        return fw.where(value < 0, zeros, fw.where(value < 1, ones - probs, ones))

    def log_prob(self, value):
        """The log probability ``value * log(p) + (1 - value) * log(1 - p)``.

        Args:
            value (Tensor|float): the point(s), broadcast against the batch shape.

        Returns:
            Tensor: ``log P(X = value)``.

        Examples:
            >>> import fw
            >>> d = fw.distribution.Bernoulli(0.3)
            >>> round(float(d.log_prob(fw.to_tensor(1.0))), 4)
            -1.204
        """
        value = _value_like(value, self.probs)
        logits, value = fw.broadcast_tensors([self.logits, value])
        return -_F().binary_cross_entropy_with_logits(logits, value, reduction="none")

    def prob(self, value):
        """The probability ``exp(log_prob(value))``.

        Args:
            value (Tensor|float): the point(s), broadcast against the batch shape.

        Returns:
            Tensor: ``P(X = value)``.

        Examples:
            >>> import fw
            >>> d = fw.distribution.Bernoulli(0.3)
            >>> round(float(d.prob(fw.to_tensor(1.0))), 4)
            0.3
        """
        return self.log_prob(value).exp()

    def entropy(self):
        """The entropy, ``-p log p - (1 - p) log(1 - p)``.

        Returns:
            Tensor: the entropy, in the batch shape.

        Examples:
            >>> import fw
            >>> d = fw.distribution.Bernoulli(0.3)
            >>> round(float(d.entropy()), 4)
            0.6109
        """
        return _F().binary_cross_entropy_with_logits(self.logits, self.probs,
                                                     reduction="none")

    def kl_divergence(self, other):
        """KL(self || other) for another Bernoulli.

        Args:
            other (Bernoulli): the second distribution.

        Returns:
            Tensor: the divergence.

        Examples:
            >>> import fw
            >>> d = fw.distribution.Bernoulli(0.3)
            >>> round(float(d.kl_divergence(fw.distribution.Bernoulli(0.5))), 4)
            0.0823
        """
        if not isinstance(other, Bernoulli):
            raise TypeError(f"Bernoulli.kl_divergence: 'other' must be a Bernoulli, got "
                            f"{type(other).__name__}")
        F = _F()
        a, b = self.logits, other.logits
        log_pa, log_pb = -F.softplus(-a), -F.softplus(-b)
        pa, one_minus_pa = F.sigmoid(a), F.sigmoid(-a)
        log_1pa, log_1pb = -F.softplus(a), -F.softplus(b)
        return (log_pa * pa - log_pb * pa) + (log_1pa * one_minus_pa - log_1pb * one_minus_pa)

    @property
    def _natural_parameters(self):
        return (self.logits,)

    def _log_normalizer(self, x):
        return _F().softplus(x)
