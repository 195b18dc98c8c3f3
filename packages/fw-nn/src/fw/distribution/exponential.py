"""The exponential distribution (Paddle's ``paddle.distribution.Exponential``)."""

from __future__ import annotations

import numpy as np

import fw
from fw.distribution.exponential_family import ExponentialFamily
from fw.distribution.gamma import _params

__all__ = ["Exponential"]


class Exponential(ExponentialFamily):
    r"""The exponential distribution with ``rate`` :math:`\lambda`:
    :math:`p(x) = \lambda e^{-\lambda x}`.

    Args:
        rate (float|Tensor): :math:`\lambda > 0`.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> e = fw.distribution.Exponential(fw.to_tensor(2.0))
            >>> round(float(e.cdf(fw.to_tensor(1.0))), 4)
            0.8647
    """

    def __init__(self, rate):
        (self.rate,), self.dtype = _params("Exponential", rate)
        super().__init__(tuple(self.rate.shape))

    @property
    def mean(self):
        """The mean, ``1 / rate``.

        Returns:
            Tensor: the mean.

        Examples:
            >>> import fw
            >>> d = fw.distribution.Exponential(2.0)
            >>> float(d.mean)
            0.5
        """
        return self.rate.reciprocal()

    @property
    def variance(self):
        """The variance, ``rate ** -2``.

        Returns:
            Tensor: the variance.

        Examples:
            >>> import fw
            >>> d = fw.distribution.Exponential(2.0)
            >>> float(d.variance)
            0.25
        """
        return self.rate.pow(-2)

    def sample(self, shape=()):
        """Draw samples of shape ``shape + batch_shape`` (no gradient).

        Args:
            shape (Sequence[int], optional): the sample shape. Default: ().

        Returns:
            Tensor: the samples.

        Examples:
            >>> import fw
            >>> d = fw.distribution.Exponential(2.0)
            >>> d.sample([3]).shape
            [3]
        """
        with fw.no_grad():
            return self.rsample(shape)

    def rsample(self, shape=()):
        """Reparameterised samples ``-log(u) / rate``, ``u ~ U(0, 1)``: gradients flow
        to `rate`.

        Args:
            shape (Sequence[int], optional): the sample shape. Default: ().

        Returns:
            Tensor: the samples.

        Examples:
            >>> import fw
            >>> d = fw.distribution.Exponential(2.0)
            >>> d.rsample([3]).shape
            [3]
        """
        shape = list(self._extend_shape(shape))
        u = fw.uniform(shape, dtype=self.rate.dtype, min=float(np.finfo(np.float32).tiny),
                       max=1.0)
        return -fw.log(u) / self.rate

    def prob(self, value):
        """The density ``rate * exp(-rate * value)``.

        Args:
            value (Tensor|float): the point(s), broadcast against the batch shape.

        Returns:
            Tensor: ``p(value)``.

        Examples:
            >>> import fw
            >>> d = fw.distribution.Exponential(2.0)
            >>> round(float(d.prob(fw.to_tensor(1.0))), 4)
            0.2707
        """
        return self.rate * fw.exp(-self.rate * value)

    def log_prob(self, value):
        """The log density at `value`.

        Args:
            value (Tensor|float): the point(s), broadcast against the batch shape.

        Returns:
            Tensor: ``log p(value)``.

        Examples:
            >>> import fw
            >>> d = fw.distribution.Exponential(2.0)
            >>> round(float(d.log_prob(fw.to_tensor(1.0))), 4)
            -1.3069
        """
        return fw.log(self.rate) - self.rate * value

    def entropy(self):
        """The entropy, ``1 - log(rate)``.

        Returns:
            Tensor: the entropy.

        Examples:
            >>> import fw
            >>> d = fw.distribution.Exponential(2.0)
            >>> round(float(d.entropy()), 4)
            0.3069
        """
        return 1.0 - fw.log(self.rate)

    def cdf(self, value):
        """The cumulative distribution function, ``1 - exp(-rate * value)``.

        Args:
            value (Tensor|float): the point(s), broadcast against the batch shape.

        Returns:
            Tensor: ``P(X <= value)``.

        Examples:
            >>> import fw
            >>> d = fw.distribution.Exponential(2.0)
            >>> round(float(d.cdf(fw.to_tensor(1.0))), 4)
            0.8647
        """
        return 1.0 - fw.exp(-self.rate * value)

    def icdf(self, value):
        """The quantile function, ``-log1p(-value) / rate``.

        Args:
            value (Tensor|float): probabilities in [0, 1).

        Returns:
            Tensor: the quantiles.

        Examples:
            >>> import fw
            >>> d = fw.distribution.Exponential(2.0)
            >>> round(float(d.icdf(fw.to_tensor(0.5))), 4)     # the median, log(2) / rate
            0.3466
        """
        return -fw.log1p(-value) / self.rate

    def kl_divergence(self, other):
        """KL(self || other) for another Exponential.

        Args:
            other (Exponential): the second distribution.

        Returns:
            Tensor: the divergence.

        Examples:
            >>> import fw
            >>> d = fw.distribution.Exponential(2.0)
            >>> round(float(d.kl_divergence(fw.distribution.Exponential(1.0))), 4)
            0.1931
        """
        if not isinstance(other, Exponential):
            raise TypeError(f"Exponential.kl_divergence: 'other' must be an Exponential, got "
                            f"{type(other).__name__}")
        r = other.rate / self.rate
        return -fw.log(r) + r - 1

    @property
    def _natural_parameters(self):
        return (-self.rate,)

    def _log_normalizer(self, x):
        return -fw.log(-x)
