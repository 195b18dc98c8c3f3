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
        """``concentration / rate``.

        Returns:
            Tensor: the mean, of the batch shape.

        Examples:
            >>> import fw
            >>> d = fw.distribution.Gamma(fw.to_tensor(2.0), fw.to_tensor(3.0))
            >>> round(float(d.mean), 4)
            0.6667
        """
        return self.concentration / self.rate

    @property
    def variance(self):
        """``concentration / rate**2``.

        Returns:
            Tensor: the variance, of the batch shape.

        Examples:
            >>> import fw
            >>> d = fw.distribution.Gamma(fw.to_tensor(2.0), fw.to_tensor(3.0))
            >>> round(float(d.variance), 4)
            0.2222
        """
        return self.concentration / self.rate.pow(2)

    def prob(self, value):
        """The density at ``value``.

        Args:
            value (Tensor|float): the point(s) to evaluate, broadcast against the batch.

        Returns:
            Tensor: the density (probability mass for a discrete distribution), of the
                broadcast batch shape.

        Examples:
            >>> import fw
            >>> d = fw.distribution.Gamma(fw.to_tensor(2.0), fw.to_tensor(3.0))
            >>> round(float(d.prob(fw.to_tensor(0.5))), 4)
            1.0041
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
            >>> d = fw.distribution.Gamma(fw.to_tensor(2.0), fw.to_tensor(3.0))
            >>> round(float(d.log_prob(fw.to_tensor(0.5))), 4)
            0.0041
        """
        value = _as_dtype(value, self.concentration.dtype)
        return (self.concentration * fw.log(self.rate) + (self.concentration - 1)
                * fw.log(value) - self.rate * value - fw.lgamma(self.concentration))

    def entropy(self):
        """The entropy.

        Returns:
            Tensor: the entropy (in nats), of the batch shape.

        Examples:
            >>> import fw
            >>> d = fw.distribution.Gamma(fw.to_tensor(2.0), fw.to_tensor(3.0))
            >>> round(float(d.entropy()), 4)
            0.4786
        """
        c = self.concentration
        return c - fw.log(self.rate) + fw.lgamma(c) + (1.0 - c) * fw.digamma(c)

    def sample(self, shape=()):
        """Samples of shape ``shape + batch_shape`` (no gradient).

        Args:
            shape (list|tuple, optional): the sample shape, put before the batch and event
                shapes. Default: ().

        Returns:
            Tensor: samples of shape ``shape + batch_shape + event_shape``.

        Examples:
            >>> import fw
            >>> d = fw.distribution.Gamma(fw.to_tensor(2.0), fw.to_tensor(3.0))
            >>> _ = fw.seed(0)
            >>> d.sample([4]).shape
            [4]
        """
        with fw.no_grad():
            return self.rsample(shape)

    def rsample(self, shape=()):
        """Reparameterised samples: ``standard_gamma(concentration) / rate``.

        Args:
            shape (list|tuple, optional): the sample shape, put before the batch and event
                shapes. Default: ().

        Returns:
            Tensor: samples of shape ``shape + batch_shape + event_shape``.

        Examples:
            >>> import fw
            >>> d = fw.distribution.Gamma(fw.to_tensor(2.0), fw.to_tensor(3.0))
            >>> _ = fw.seed(0)
            >>> d.rsample([4]).shape
            [4]
        """
        shape = list(self._extend_shape(shape))
        return standard_gamma_rsample(self.concentration.expand(shape)) / self.rate.expand(
            shape)

    def kl_divergence(self, other):
        """KL(self || other) for another Gamma.

        Args:
            other (Gamma): the second distribution, of the same family.

        Returns:
            Tensor: the divergence, of the broadcast batch shape.

        Examples:
            >>> import fw
            >>> d = fw.distribution.Gamma(fw.to_tensor(2.0), fw.to_tensor(3.0))
            >>> other = fw.distribution.Gamma(fw.to_tensor(3.0), fw.to_tensor(2.0))
            >>> round(float(d.kl_divergence(other)), 4)
            0.8201
            >>> round(float(d.kl_divergence(d)), 4)
            0.0
        """
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
