"""The beta distribution (Paddle's ``paddle.distribution.Beta``), a two-category Dirichlet."""

from __future__ import annotations

import numbers

import fw
from fw.core.tensor import Tensor
from fw.distribution.dirichlet import Dirichlet
from fw.distribution.exponential_family import ExponentialFamily

__all__ = ["Beta"]


class Beta(ExponentialFamily):
    r"""The beta distribution on (0, 1): :math:`p(x) = \frac{x^{\alpha-1}(1-x)^{\beta-1}}
    {B(\alpha, \beta)}` (a two-category `Dirichlet`).

    Args:
        alpha (float|Tensor): :math:`\alpha > 0`.
        beta (float|Tensor): :math:`\beta > 0`.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> b = fw.distribution.Beta(2.0, 3.0)
            >>> round(float(b.mean), 4), round(float(b.variance), 4)
            (0.4, 0.04)
    """

    def __init__(self, alpha, beta):
        if isinstance(alpha, numbers.Real):
            alpha = fw.full([], float(alpha))
        if isinstance(beta, numbers.Real):
            beta = fw.full([], float(beta))
        for v, n in ((alpha, "alpha"), (beta, "beta")):
            if not isinstance(v, Tensor):
                raise TypeError(f"Beta: '{n}' must be a real number or a Tensor, got "
                                f"{type(v).__name__}")
        self.alpha, self.beta = fw.broadcast_tensors([alpha, beta])
        self._dirichlet = Dirichlet(fw.stack([self.alpha, self.beta], -1))
        super().__init__(self._dirichlet._batch_shape)

    @property
    def mean(self):
        """``alpha / (alpha + beta)``.

        Returns:
            Tensor: the mean, of the batch shape.

        Examples:
            >>> import fw
            >>> d = fw.distribution.Beta(2.0, 3.0)
            >>> round(float(d.mean), 4)
            0.4
        """
        return self.alpha / (self.alpha + self.beta)

    @property
    def variance(self):
        """``alpha beta / ((alpha + beta)^2 (alpha + beta + 1))``.

        Returns:
            Tensor: the variance, of the batch shape.

        Examples:
            >>> import fw
            >>> d = fw.distribution.Beta(2.0, 3.0)
            >>> round(float(d.variance), 4)
            0.04
        """
        s = self.alpha + self.beta
        return self.alpha * self.beta / (s.pow(2) * (s + 1))

    def prob(self, value):
        """The density at ``value``.

        Args:
            value (Tensor|float): the point(s) to evaluate, broadcast against the batch.

        Returns:
            Tensor: the density (probability mass for a discrete distribution), of the
                broadcast batch shape.

        Examples:
            >>> import fw
            >>> d = fw.distribution.Beta(2.0, 3.0)
            >>> round(float(d.prob(0.3)), 4)
            1.764
        """
        return fw.exp(self.log_prob(value))

    def log_prob(self, value):
        """The log density at ``value``.

        Args:
            value (Tensor|float): the point(s) to evaluate, broadcast against the batch.

        Returns:
            Tensor: the log density (log probability mass for a discrete distribution), of
                the broadcast batch shape.

        Examples:
            >>> import fw
            >>> d = fw.distribution.Beta(2.0, 3.0)
            >>> round(float(d.log_prob(0.3)), 4)
            0.5676
        """
        if not isinstance(value, Tensor):
            value = fw.full([], float(value), dtype=self.alpha.dtype)
        return self._dirichlet.log_prob(fw.stack([value, 1.0 - value], -1))

    def sample(self, shape=()):
        """Samples of shape ``shape + batch_shape`` (no gradient).

        Args:
            shape (list|tuple, optional): the sample shape, put before the batch and event
                shapes. Default: ().

        Returns:
            Tensor: samples of shape ``shape + batch_shape + event_shape``.

        Examples:
            >>> import fw
            >>> d = fw.distribution.Beta(2.0, 3.0)
            >>> _ = fw.seed(0)
            >>> d.sample([4]).shape
            [4]
        """
        with fw.no_grad():
            return self.rsample(shape)

    def rsample(self, shape=()):
        """Reparameterised samples (the first coordinate of a Dirichlet draw).

        Args:
            shape (list|tuple, optional): the sample shape, put before the batch and event
                shapes. Default: ().

        Returns:
            Tensor: samples of shape ``shape + batch_shape + event_shape``.

        Examples:
            >>> import fw
            >>> d = fw.distribution.Beta(2.0, 3.0)
            >>> _ = fw.seed(0)
            >>> d.rsample([4]).shape
            [4]
        """
        return self._dirichlet.rsample(shape)[..., 0]

    def entropy(self):
        """The entropy.

        Returns:
            Tensor: the entropy (in nats), of the batch shape.

        Examples:
            >>> import fw
            >>> d = fw.distribution.Beta(2.0, 3.0)
            >>> round(float(d.entropy()), 4)
            -0.2349
        """
        return self._dirichlet.entropy()

    @property
    def _natural_parameters(self):
        return (self.alpha, self.beta)

    def _log_normalizer(self, x, y):
        return fw.lgamma(x) + fw.lgamma(y) - fw.lgamma(x + y)
