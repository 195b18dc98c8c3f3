"""Gamma, Chi2 and Exponential."""

from __future__ import annotations

import numpy as np

import fw
from fw.core.tensor import Tensor
from fw.distribution._gamma_grad import standard_gamma_rsample
from fw.distribution.distribution import _as_dtype, _np_params
from fw.distribution.exponential_family import ExponentialFamily

__all__ = ["Gamma", "Chi2", "Exponential"]


def _params(who, *args):
    """Gamma/Exponential/Chi2: all Tensors (kept) or all numbers/arrays (through NumPy,
    then the default dtype)."""
    if any(isinstance(a, Tensor) for a in args):
        if not all(isinstance(a, Tensor) for a in args):
            raise ValueError(f"{who}: if one parameter is a Tensor, all must be Tensors")
        return args, args[0].dtype
    ts = _np_params(who, *args)
    dt = fw.get_default_dtype()
    return tuple(t.astype(dt) for t in ts), dt


class Gamma(ExponentialFamily):
    r"""The gamma distribution with ``concentration`` (shape) :math:`\alpha` and ``rate``
    :math:`\beta`: :math:`p(x) = \frac{\beta^\alpha}{\Gamma(\alpha)} x^{\alpha-1} e^{-\beta x}`.

    `rsample` is reparameterised (implicit gradients of the gamma draw, see
    ``fw.distribution._gamma_grad``).

    Args:
        concentration (float|Tensor): :math:`\alpha > 0`.
        rate (float|Tensor): :math:`\beta > 0`.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> g = fw.distribution.Gamma(fw.to_tensor(2.0), fw.to_tensor(3.0))
            >>> round(float(g.mean), 4), round(float(g.entropy()), 4)
            (0.6667, 0.4786)
    """

    def __init__(self, concentration, rate):
        (self.concentration, self.rate), dt = _params("Gamma", concentration, rate)
        self.dtype = dt
        super().__init__(tuple(np.broadcast_shapes(tuple(self.concentration.shape),
                                                   tuple(self.rate.shape))))

    @property
    def mean(self):
        """``concentration / rate``."""
        return self.concentration / self.rate

    @property
    def variance(self):
        """``concentration / rate**2``."""
        return self.concentration / self.rate.pow(2)

    def prob(self, value):
        """The density at ``value``."""
        return fw.exp(self.log_prob(value))

    def log_prob(self, value):
        """The log density at ``value``."""
        value = _as_dtype(value, self.concentration.dtype)
        return (self.concentration * fw.log(self.rate) + (self.concentration - 1)
                * fw.log(value) - self.rate * value - fw.lgamma(self.concentration))

    def entropy(self):
        """The entropy."""
        c = self.concentration
        return c - fw.log(self.rate) + fw.lgamma(c) + (1.0 - c) * fw.digamma(c)

    def sample(self, shape=()):
        """Samples of shape ``shape + batch_shape`` (no gradient)."""
        with fw.no_grad():
            return self.rsample(shape)

    def rsample(self, shape=()):
        """Reparameterised samples: ``standard_gamma(concentration) / rate``."""
        shape = list(self._extend_shape(shape))
        return standard_gamma_rsample(self.concentration.expand(shape)) / self.rate.expand(
            shape)

    def kl_divergence(self, other):
        """KL(self || other) for another Gamma."""
        if not isinstance(other, Gamma):
            raise TypeError(f"Gamma.kl_divergence: 'other' must be a Gamma, got "
                            f"{type(other).__name__}")
        t1 = other.concentration * fw.log(self.rate / other.rate)
        t2 = fw.lgamma(other.concentration) - fw.lgamma(self.concentration)
        t3 = (self.concentration - other.concentration) * fw.digamma(self.concentration)
        t4 = (other.rate - self.rate) * (self.concentration / self.rate)
        return t1 + t2 + t3 + t4

    @property
    def _natural_parameters(self):
        return (self.concentration - 1, -self.rate)

    def _log_normalizer(self, x, y):
        return fw.lgamma(x + 1) + (x + 1) * fw.log(-y.reciprocal())


class Chi2(Gamma):
    r"""The chi-squared distribution with ``df`` degrees of freedom: ``Gamma(df / 2, 1/2)``.

    Args:
        df (float|Tensor): the degrees of freedom (> 0).

    Examples:
        .. code-block:: python

            >>> import fw
            >>> round(float(fw.distribution.Chi2(fw.to_tensor(3.0)).variance), 4)
            6.0
    """

    def __init__(self, df):
        (self.df,), dt = _params("Chi2", df)
        if not bool(fw.all(self.df > 0)):
            raise ValueError("Chi2: every element of 'df' must be positive")
        self.rate = fw.full_like(self.df, 0.5)
        super().__init__(self.df * 0.5, self.rate)
        self.dtype = dt


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
