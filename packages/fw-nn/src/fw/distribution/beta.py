"""Beta and Dirichlet."""

from __future__ import annotations

import math
import numbers

import fw
from fw.core.tensor import Tensor
from fw.distribution._gamma_grad import standard_gamma_rsample
from fw.distribution.distribution import _shape_arg
from fw.distribution.exponential_family import ExponentialFamily

__all__ = ["Beta", "Dirichlet"]


class Dirichlet(ExponentialFamily):
    r"""The Dirichlet distribution over the simplex, with ``concentration``
    :math:`\alpha` (the last axis is the event):
    :math:`p(x) = \frac{\Gamma(\sum\alpha_i)}{\prod\Gamma(\alpha_i)}\prod x_i^{\alpha_i-1}`.

    Args:
        concentration (Tensor): at least 1-D, positive.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> d = fw.distribution.Dirichlet(fw.to_tensor([1.0, 2.0, 3.0]))
            >>> [round(v, 4) for v in d.mean.tolist()]
            [0.1667, 0.3333, 0.5]
    """

    def __init__(self, concentration):
        if not isinstance(concentration, Tensor):
            raise TypeError(f"Dirichlet: 'concentration' must be a Tensor, got "
                            f"{type(concentration).__name__}")
        if concentration.dim() < 1 or math.prod(concentration.shape) == 0:
            raise ValueError(f"Dirichlet: 'concentration' must be at least 1-D and non-empty, "
                             f"got shape {list(concentration.shape)}")
        self.concentration = concentration
        super().__init__(tuple(concentration.shape[:-1]), tuple(concentration.shape[-1:]))

    @property
    def mean(self):
        """``concentration / concentration.sum(-1)``."""
        return self.concentration / self.concentration.sum(-1, keepdim=True)

    @property
    def variance(self):
        """The marginal variances."""
        c0 = self.concentration.sum(-1, keepdim=True)
        return self.concentration * (c0 - self.concentration) / (c0.pow(2) * (c0 + 1))

    def sample(self, shape=()):
        """Samples of shape ``shape + batch_shape + event_shape`` (no gradient)."""
        with fw.no_grad():
            return self.rsample(shape)

    def rsample(self, shape=()):
        """Reparameterised samples: normalised gamma draws (implicit gradients)."""
        shape = list(self._extend_shape(_shape_arg(shape, "Dirichlet.sample")))
        g = standard_gamma_rsample(self.concentration.expand(shape))
        return g / g.sum(-1, keepdim=True)

    def prob(self, value):
        """The density at ``value``."""
        return fw.exp(self.log_prob(value))

    def log_prob(self, value):
        """The log density at ``value`` (a point of the simplex)."""
        c = self.concentration
        return ((fw.log(value) * (c - 1.0)).sum(-1) + fw.lgamma(c.sum(-1))
                - fw.lgamma(c).sum(-1))

    def entropy(self):
        """The entropy."""
        c = self.concentration
        c0 = c.sum(-1)
        k = c.shape[-1]
        return (fw.lgamma(c).sum(-1) - fw.lgamma(c0) - (k - c0) * fw.digamma(c0)
                - ((c - 1.0) * fw.digamma(c)).sum(-1))

    @property
    def _natural_parameters(self):
        return (self.concentration,)

    def _log_normalizer(self, x):
        return x.lgamma().sum(-1) - fw.lgamma(x.sum(-1))


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
