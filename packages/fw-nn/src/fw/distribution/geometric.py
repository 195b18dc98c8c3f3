"""The geometric distribution (Paddle's ``paddle.distribution.Geometric``)."""

from __future__ import annotations

import numbers

import fw
from fw.core.tensor import Tensor
from fw.distribution.distribution import Distribution

__all__ = ["Geometric"]


class Geometric(Distribution):
    r"""The geometric distribution: the number of failures before the first success,
    :math:`P(X = k) = (1-p)^k p` for :math:`k = 0, 1, ...`.

    Args:
        probs (float|Tensor): the success probability, in (0, 1].

    Examples:
        .. code-block:: python

            >>> import fw
            >>> g = fw.distribution.Geometric(0.5)
            >>> round(float(g.mean), 4), round(float(g.pmf(2)), 4)
            (1.0, 0.125)
    """

    def __init__(self, probs):
        if isinstance(probs, numbers.Real) and not isinstance(probs, bool):
            probs = fw.full([], float(probs), dtype="float32")
        if not isinstance(probs, Tensor):
            raise TypeError(f"Geometric: 'probs' must be a float or a Tensor, got "
                            f"{type(probs).__name__}")
        if bool(fw.any(fw.logical_or(probs <= 0, probs > 1))):
            raise ValueError("Geometric: every element of 'probs' must be in (0, 1]")
        self.probs = probs
        super().__init__(tuple(probs.shape))

    @property
    def mean(self):
        """``1 / p - 1``.

        Returns:
            Tensor: the mean, of the batch shape.

        Examples:
            >>> import fw
            >>> d = fw.distribution.Geometric(fw.to_tensor(0.3))
            >>> round(float(d.mean), 4)
            2.3333
        """
        return 1.0 / self.probs - 1.0

    @property
    def variance(self):
        """``(1 / p - 1) / p``.

        Returns:
            Tensor: the variance, of the batch shape.

        Examples:
            >>> import fw
            >>> d = fw.distribution.Geometric(fw.to_tensor(0.3))
            >>> round(float(d.variance), 4)
            7.7778
        """
        return (1.0 / self.probs - 1.0) / self.probs

    @property
    def stddev(self):
        """The standard deviation.

        Returns:
            Tensor: the standard deviation, of the batch shape.

        Examples:
            >>> import fw
            >>> d = fw.distribution.Geometric(fw.to_tensor(0.3))
            >>> round(float(d.stddev), 4)
            2.7889
        """
        return fw.sqrt(self.variance)

    def _k(self, k, who):
        if isinstance(k, bool) or not isinstance(k, (numbers.Integral, Tensor)):
            raise TypeError(f"Geometric.{who}: 'k' must be an int or a Tensor, got "
                            f"{type(k).__name__}")
        return k

    def pmf(self, k):
        """``(1 - p)^k p``.

        Args:
            k (Tensor|float): the point(s) to evaluate, broadcast against the batch.

        Returns:
            Tensor: the probability mass, of the broadcast batch shape.

        Examples:
            >>> import fw
            >>> d = fw.distribution.Geometric(fw.to_tensor(0.3))
            >>> round(float(d.pmf(fw.to_tensor(2.0))), 4)
            0.147
        """
        return fw.pow(1.0 - self.probs, self._k(k, "pmf")) * self.probs

    def log_pmf(self, k):
        """``log(pmf(k))``.

        Args:
            k (Tensor|float): the point(s) to evaluate, broadcast against the batch.

        Returns:
            Tensor: the log probability mass, of the broadcast batch shape.

        Examples:
            >>> import fw
            >>> d = fw.distribution.Geometric(fw.to_tensor(0.3))
            >>> round(float(d.log_pmf(fw.to_tensor(2.0))), 4)
            -1.9173
        """
        return fw.log(self.pmf(k))

    def prob(self, value):
        """Same as `pmf`.

        Args:
            value (Tensor|float): the point(s) to evaluate, broadcast against the batch.

        Returns:
            Tensor: the density (probability mass for a discrete distribution), of the
                broadcast batch shape.

        Examples:
            >>> import fw
            >>> d = fw.distribution.Geometric(fw.to_tensor(0.3))
            >>> round(float(d.prob(fw.to_tensor(2.0))), 4)
            0.147
        """
        return self.pmf(value)

    def log_prob(self, value):
        """Same as `log_pmf`.

        Args:
            value (Tensor|float): the point(s) to evaluate, broadcast against the batch.

        Returns:
            Tensor: the log density (log probability mass for a discrete distribution), of
                the broadcast batch shape.

        Examples:
            >>> import fw
            >>> d = fw.distribution.Geometric(fw.to_tensor(0.3))
            >>> round(float(d.log_prob(fw.to_tensor(2.0))), 4)
            -1.9173
        """
        return self.log_pmf(value)

    def sample(self, shape=()):
        """Samples (no gradient), as floats.

        Args:
            shape (list|tuple, optional): the sample shape, put before the batch and event
                shapes. Default: ().

        Returns:
            Tensor: samples of shape ``shape + batch_shape + event_shape``.

        Examples:
            >>> import fw
            >>> d = fw.distribution.Geometric(fw.to_tensor(0.3))
            >>> _ = fw.seed(0)
            >>> d.sample([4]).shape
            [4]
        """
        with fw.no_grad():
            return self.rsample(shape)

    def rsample(self, shape=()):
        """``floor(log(u) / log(1 - p))`` (piecewise constant in p: zero gradient almost
        everywhere, as in Paddle).

        Args:
            shape (list|tuple, optional): the sample shape, put before the batch and event
                shapes. Default: ().

        Returns:
            Tensor: samples of shape ``shape + batch_shape + event_shape``.

        Examples:
            >>> import fw
            >>> d = fw.distribution.Geometric(fw.to_tensor(0.3))
            >>> _ = fw.seed(0)
            >>> d.rsample([4]).shape
            [4]
        """
        shape = list(self._extend_shape(shape))
        u = fw.uniform(shape, dtype=self.probs.dtype, min=float(fw.finfo(fw.float32).tiny),
                       max=1.0)
        return fw.floor(fw.log(u) / fw.log1p(-self.probs))

    def entropy(self):
        """The entropy.

        Returns:
            Tensor: the entropy (in nats), of the batch shape.

        Examples:
            >>> import fw
            >>> d = fw.distribution.Geometric(fw.to_tensor(0.3))
            >>> round(float(d.entropy()), 4)
            2.0362
        """
        p = self.probs
        return -((1.0 - p) * fw.log(1.0 - p) + p * fw.log(p)) / p

    def cdf(self, k):
        """``1 - (1 - p)^(k + 1)``.

        Args:
            k (Tensor|float): the point(s) to evaluate, broadcast against the batch.

        Returns:
            Tensor: the cumulative distribution function, of the broadcast batch shape.

        Examples:
            >>> import fw
            >>> d = fw.distribution.Geometric(fw.to_tensor(0.3))
            >>> round(float(d.cdf(fw.to_tensor(2.0))), 4)
            0.657
        """
        return 1.0 - fw.pow(1.0 - self.probs, self._k(k, "cdf") + 1)

    def kl_divergence(self, other):
        """KL(self || other) for another Geometric: ``log(p/q) + (1-p)/p log((1-p)/(1-q))``.

        Paddle 3.3 returns ``p log(p/q) + (1-p) log((1-p)/(1-q))`` here, the KL of two
        Bernoulli distributions, which is not the KL of the geometric distributions
        (the sum over k of P(k) log(P(k)/Q(k))); fw returns the correct value.

        Args:
            other (Geometric): the second distribution, of the same family.

        Returns:
            Tensor: the divergence, of the broadcast batch shape.

        Examples:
            >>> import fw
            >>> d = fw.distribution.Geometric(fw.to_tensor(0.3))
            >>> other = fw.distribution.Geometric(fw.to_tensor(0.5))
            >>> round(float(d.kl_divergence(other)), 4)
            0.2743
            >>> round(float(d.kl_divergence(d)), 4)
            0.0
        """
        if not isinstance(other, Geometric):
            raise TypeError(f"Geometric.kl_divergence: 'other' must be a Geometric, got "
                            f"{type(other).__name__}")
        p, q = self.probs, other.probs
        return fw.log(p / q) + (1.0 - p) / p * fw.log((1.0 - p) / (1.0 - q))
