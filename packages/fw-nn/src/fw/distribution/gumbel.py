"""The Gumbel distribution (Paddle's ``paddle.distribution.Gumbel``)."""

from __future__ import annotations

import math

import numpy as np

import fw
from fw.distribution.cauchy import _loc_scale
from fw.distribution.transformed_distribution import TransformedDistribution

__all__ = ["Gumbel"]


class Gumbel(TransformedDistribution):
    r"""The Gumbel (type-I extreme value) distribution:
    :math:`p(x) = \frac1\beta e^{-(z + e^{-z})}`, :math:`z = (x - \mu)/\beta`.

    Args:
        loc (float|Tensor): :math:`\mu`.
        scale (float|Tensor): :math:`\beta > 0`.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> g = fw.distribution.Gumbel(0.0, 1.0)
            >>> round(float(g.mean), 4), round(float(g.cdf(fw.to_tensor(0.0))), 4)
            (0.5772, 0.3679)
    """

    def __init__(self, loc, scale):
        from fw.distribution.uniform import Uniform

        self.loc, self.scale = _loc_scale("Gumbel", loc, scale)
        fi = np.finfo(np.float32)
        self.base_dist = Uniform(fw.full_like(self.loc, float(fi.tiny)),
                                 fw.full_like(self.loc, float(1 - fi.eps)))
        self.transforms = ()
        super().__init__(self.base_dist, self.transforms)

    @property
    def mean(self):
        """``loc + scale * euler_gamma``.

        Returns:
            Tensor: the mean, of the batch shape.

        Examples:
            >>> import fw
            >>> d = fw.distribution.Gumbel(fw.to_tensor(0.0), fw.to_tensor(1.0))
            >>> round(float(d.mean), 4)
            0.5772
        """
        return self.loc + self.scale * np.euler_gamma

    @property
    def variance(self):
        """``(pi scale)^2 / 6``.

        Returns:
            Tensor: the variance, of the batch shape.

        Examples:
            >>> import fw
            >>> d = fw.distribution.Gumbel(fw.to_tensor(0.0), fw.to_tensor(1.0))
            >>> round(float(d.variance), 4)
            1.6449
        """
        return self.scale.pow(2) * (math.pi * math.pi) / 6

    @property
    def stddev(self):
        """The standard deviation.

        Returns:
            Tensor: the standard deviation, of the batch shape.

        Examples:
            >>> import fw
            >>> d = fw.distribution.Gumbel(fw.to_tensor(0.0), fw.to_tensor(1.0))
            >>> round(float(d.stddev), 4)
            1.2825
        """
        return fw.sqrt(self.variance)

    def prob(self, value):
        """The density at ``value``.

        Args:
            value (Tensor|float): the point(s) to evaluate, broadcast against the batch.

        Returns:
            Tensor: the density (probability mass for a discrete distribution), of the
                broadcast batch shape.

        Examples:
            >>> import fw
            >>> d = fw.distribution.Gumbel(fw.to_tensor(0.0), fw.to_tensor(1.0))
            >>> round(float(d.prob(fw.to_tensor(0.5))), 4)
            0.3307
        """
        y = (self.loc - value.astype(self.loc.dtype)) / self.scale.astype(self.loc.dtype)
        return fw.exp(y - fw.exp(y)) / self.scale.astype(y.dtype)

    def log_prob(self, value):
        """The log density at ``value``.

        Args:
            value (Tensor|float): the point(s) to evaluate, broadcast against the batch.

        Returns:
            Tensor: the log density (log probability mass for a discrete distribution), of
                the broadcast batch shape.

        Examples:
            >>> import fw
            >>> d = fw.distribution.Gumbel(fw.to_tensor(0.0), fw.to_tensor(1.0))
            >>> round(float(d.log_prob(fw.to_tensor(0.5))), 4)
            -1.1065
        """
        y = (self.loc - value.astype(self.loc.dtype)) / self.scale
        return y - fw.exp(y) - fw.log(self.scale)

    def cdf(self, value):
        """``exp(-exp(-(value - loc) / scale))``.

        Args:
            value (Tensor|float): the point(s) to evaluate, broadcast against the batch.

        Returns:
            Tensor: the cumulative distribution function, of the broadcast batch shape.

        Examples:
            >>> import fw
            >>> d = fw.distribution.Gumbel(fw.to_tensor(0.0), fw.to_tensor(1.0))
            >>> round(float(d.cdf(fw.to_tensor(0.5))), 4)
            0.5452
        """
        return fw.exp(-fw.exp(-(value - self.loc.astype(value.dtype))
                              / self.scale.astype(value.dtype)))

    def entropy(self):
        """``log(scale) + 1 + euler_gamma``.

        Returns:
            Tensor: the entropy (in nats), of the batch shape.

        Examples:
            >>> import fw
            >>> d = fw.distribution.Gumbel(fw.to_tensor(0.0), fw.to_tensor(1.0))
            >>> round(float(d.entropy()), 4)
            1.5772
        """
        return fw.log(self.scale) + 1 + np.euler_gamma

    def sample(self, shape=()):
        """Samples (no gradient).

        Args:
            shape (list|tuple, optional): the sample shape, put before the batch and event
                shapes. Default: ().

        Returns:
            Tensor: samples of shape ``shape + batch_shape + event_shape``.

        Examples:
            >>> import fw
            >>> d = fw.distribution.Gumbel(fw.to_tensor(0.0), fw.to_tensor(1.0))
            >>> _ = fw.seed(0)
            >>> d.sample([4]).shape
            [4]
        """
        with fw.no_grad():
            return self.rsample(shape)

    def rsample(self, shape=()):
        """Reparameterised samples ``loc - scale log(-log(u))``.

        Args:
            shape (list|tuple, optional): the sample shape, put before the batch and event
                shapes. Default: ().

        Returns:
            Tensor: samples of shape ``shape + batch_shape + event_shape``.

        Examples:
            >>> import fw
            >>> d = fw.distribution.Gumbel(fw.to_tensor(0.0), fw.to_tensor(1.0))
            >>> _ = fw.seed(0)
            >>> d.rsample([4]).shape
            [4]
        """
        u = self._base.sample(shape)
        return self.loc - self.scale * fw.log(-fw.log(u))
