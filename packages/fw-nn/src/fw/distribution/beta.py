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
        """``alpha / (alpha + beta)``."""
        return self.alpha / (self.alpha + self.beta)

    @property
    def variance(self):
        """``alpha beta / ((alpha + beta)^2 (alpha + beta + 1))``."""
        s = self.alpha + self.beta
        return self.alpha * self.beta / (s.pow(2) * (s + 1))

    def prob(self, value):
        """The density at ``value``."""
        return fw.exp(self.log_prob(value))

    def log_prob(self, value):
        """The log density at ``value``."""
        if not isinstance(value, Tensor):
            value = fw.full([], float(value), dtype=self.alpha.dtype)
        return self._dirichlet.log_prob(fw.stack([value, 1.0 - value], -1))

    def sample(self, shape=()):
        """Samples of shape ``shape + batch_shape`` (no gradient)."""
        with fw.no_grad():
            return self.rsample(shape)

    def rsample(self, shape=()):
        """Reparameterised samples (the first coordinate of a Dirichlet draw)."""
        return self._dirichlet.rsample(shape)[..., 0]

    def entropy(self):
        """The entropy."""
        return self._dirichlet.entropy()

    @property
    def _natural_parameters(self):
        return (self.alpha, self.beta)

    def _log_normalizer(self, x, y):
        return fw.lgamma(x) + fw.lgamma(y) - fw.lgamma(x + y)
