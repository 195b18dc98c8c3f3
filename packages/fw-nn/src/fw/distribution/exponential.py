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
        """``1 / rate``."""
        return self.rate.reciprocal()

    @property
    def variance(self):
        """``rate ** -2``."""
        return self.rate.pow(-2)

    def sample(self, shape=()):
        """Samples (no gradient)."""
        with fw.no_grad():
            return self.rsample(shape)

    def rsample(self, shape=()):
        """Reparameterised samples ``-log(u) / rate``."""
        shape = list(self._extend_shape(shape))
        u = fw.uniform(shape, dtype=self.rate.dtype, min=float(np.finfo(np.float32).tiny),
                       max=1.0)
        return -fw.log(u) / self.rate

    def prob(self, value):
        """The density at ``value``."""
        return self.rate * fw.exp(-self.rate * value)

    def log_prob(self, value):
        """The log density at ``value``."""
        return fw.log(self.rate) - self.rate * value

    def entropy(self):
        """``1 - log(rate)``."""
        return 1.0 - fw.log(self.rate)

    def cdf(self, value):
        """``1 - exp(-rate * value)``."""
        return 1.0 - fw.exp(-self.rate * value)

    def icdf(self, value):
        """``-log1p(-value) / rate``."""
        return -fw.log1p(-value) / self.rate

    def kl_divergence(self, other):
        """KL(self || other) for another Exponential."""
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
