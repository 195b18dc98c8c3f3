"""The Dirichlet distribution (Paddle's ``paddle.distribution.Dirichlet``)."""

from __future__ import annotations

import math

import fw
from fw.core.tensor import Tensor
from fw.distribution._gamma_grad import standard_gamma_rsample
from fw.distribution.distribution import _shape_arg
from fw.distribution.exponential_family import ExponentialFamily

__all__ = ["Dirichlet"]


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
        """``concentration / concentration.sum(-1)``.

        Returns:
            Tensor: the mean, of the batch shape (the event shape added for a multivariate
                distribution).

        Examples:
            >>> import fw
            >>> d = fw.distribution.Dirichlet(fw.to_tensor([1.0, 2.0, 3.0]))
            >>> [round(v, 4) for v in d.mean.tolist()]
            [0.1667, 0.3333, 0.5]
        """
        return self.concentration / self.concentration.sum(-1, keepdim=True)

    @property
    def variance(self):
        """The marginal variances.

        Returns:
            Tensor: the variance, of the batch shape (the event shape added for a
                multivariate distribution).

        Examples:
            >>> import fw
            >>> d = fw.distribution.Dirichlet(fw.to_tensor([1.0, 2.0, 3.0]))
            >>> [round(v, 4) for v in d.variance.tolist()]
            [0.0198, 0.0317, 0.0357]
        """
        c0 = self.concentration.sum(-1, keepdim=True)
        return self.concentration * (c0 - self.concentration) / (c0.pow(2) * (c0 + 1))

    def sample(self, shape=()):
        """Samples of shape ``shape + batch_shape + event_shape`` (no gradient).

        Args:
            shape (list|tuple, optional): the sample shape, put before the batch and event
                shapes. Default: ().

        Returns:
            Tensor: samples of shape ``shape + batch_shape + event_shape``.

        Examples:
            >>> import fw
            >>> d = fw.distribution.Dirichlet(fw.to_tensor([1.0, 2.0, 3.0]))
            >>> _ = fw.seed(0)
            >>> d.sample([4]).shape
            [4, 3]
        """
        with fw.no_grad():
            return self.rsample(shape)

    def rsample(self, shape=()):
        """Reparameterised samples: normalised gamma draws (implicit gradients).

        Args:
            shape (list|tuple, optional): the sample shape, put before the batch and event
                shapes. Default: ().

        Returns:
            Tensor: samples of shape ``shape + batch_shape + event_shape``.

        Examples:
            >>> import fw
            >>> d = fw.distribution.Dirichlet(fw.to_tensor([1.0, 2.0, 3.0]))
            >>> _ = fw.seed(0)
            >>> d.rsample([4]).shape
            [4, 3]
        """
        shape = list(self._extend_shape(_shape_arg(shape, "Dirichlet.sample")))
        g = standard_gamma_rsample(self.concentration.expand(shape))
        return g / g.sum(-1, keepdim=True)

    def prob(self, value):
        """The density at ``value``.

        Args:
            value (Tensor): the point(s) to evaluate; the last axis holds the event, the
                others broadcast against the batch.

        Returns:
            Tensor: the density (probability mass for a discrete distribution), of the
                broadcast batch shape.

        Examples:
            >>> import fw
            >>> d = fw.distribution.Dirichlet(fw.to_tensor([1.0, 2.0, 3.0]))
            >>> round(float(d.prob(fw.to_tensor([0.2, 0.3, 0.5]))), 4)
            4.5
        """
        return fw.exp(self.log_prob(value))

    def log_prob(self, value):
        """The log density at ``value`` (a point of the simplex).

        Args:
            value (Tensor): the point(s) to evaluate; the last axis holds the event, the
                others broadcast against the batch.

        Returns:
            Tensor: the log density (log probability mass for a discrete distribution), of
                the broadcast batch shape.

        Examples:
            >>> import fw
            >>> d = fw.distribution.Dirichlet(fw.to_tensor([1.0, 2.0, 3.0]))
            >>> round(float(d.log_prob(fw.to_tensor([0.2, 0.3, 0.5]))), 4)
            1.5041
        """
        c = self.concentration
        return ((fw.log(value) * (c - 1.0)).sum(-1) + fw.lgamma(c.sum(-1))
                - fw.lgamma(c).sum(-1))

    def entropy(self):
        """The entropy.

        Returns:
            Tensor: the entropy (in nats), of the batch shape.

        Examples:
            >>> import fw
            >>> d = fw.distribution.Dirichlet(fw.to_tensor([1.0, 2.0, 3.0]))
            >>> round(float(d.entropy()), 4)
            -1.2443
        """
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
