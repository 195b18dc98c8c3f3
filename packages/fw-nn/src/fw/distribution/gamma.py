"""The gamma distribution (Paddle's ``paddle.distribution.Gamma``)."""

from __future__ import annotations

import numpy as np

import fw
from fw.core.tensor import Tensor
from fw.distribution._gamma_grad import standard_gamma_rsample
from fw.distribution.distribution import _as_dtype, _np_params
from fw.distribution.exponential_family import ExponentialFamily

__all__ = ["Gamma"]


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
