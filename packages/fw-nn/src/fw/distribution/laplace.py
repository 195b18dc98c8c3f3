"""The Laplace distribution (Paddle's ``paddle.distribution.Laplace``)."""

from __future__ import annotations

import numpy as np

import fw
from fw.core.tensor import Tensor
from fw.distribution.distribution import (
    Distribution,
    _full_param,
)

__all__ = ["Laplace"]


class Laplace(Distribution):
    r"""The Laplace distribution: :math:`p(x) = \frac{1}{2b} e^{-|x-\mu|/b}`.

    Args:
        loc (float|Tensor): :math:`\mu`.
        scale (float|Tensor): :math:`b > 0`.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> d = fw.distribution.Laplace(0.0, 1.0)
            >>> round(float(d.icdf(fw.to_tensor(0.75))), 4), round(float(d.variance), 4)
            (0.6931, 2.0)
    """

    def __init__(self, loc, scale):
        loc = _full_param(loc, "Laplace", "loc")
        scale = _full_param(scale, "Laplace", "scale")
        if (len(scale.shape) > 0 or len(loc.shape) > 0) and loc.dtype == scale.dtype:
            loc, scale = fw.broadcast_tensors([loc, scale])
        self.loc, self.scale = loc, scale
        super().__init__(tuple(self.loc.shape))

    @property
    def mean(self):
        """``loc``.

        Returns:
            Tensor: the mean, of the batch shape.

        Examples:
            >>> import fw
            >>> d = fw.distribution.Laplace(fw.to_tensor(0.0), fw.to_tensor(1.0))
            >>> round(float(d.mean), 4)
            0.0
        """
        return self.loc

    @property
    def stddev(self):
        """``sqrt(2) scale``.

        Returns:
            Tensor: the standard deviation, of the batch shape.

        Examples:
            >>> import fw
            >>> d = fw.distribution.Laplace(fw.to_tensor(0.0), fw.to_tensor(1.0))
            >>> round(float(d.stddev), 4)
            1.4142
        """
        return 2 ** 0.5 * self.scale

    @property
    def variance(self):
        """``2 scale**2``.

        Returns:
            Tensor: the variance, of the batch shape.

        Examples:
            >>> import fw
            >>> d = fw.distribution.Laplace(fw.to_tensor(0.0), fw.to_tensor(1.0))
            >>> round(float(d.variance), 4)
            2.0
        """
        return self.stddev.pow(2)

    def _validate_value(self, value):
        if not isinstance(value, Tensor):
            value = fw.full([], float(value))
        if value.dtype != self.scale.dtype:
            value = value.astype(self.scale.dtype)
        if len(self.scale.shape) > 0 or len(self.loc.shape) > 0 or len(value.shape) > 0:
            return tuple(fw.broadcast_tensors([self.loc, self.scale, value]))
        return self.loc, self.scale, value

    def log_prob(self, value):
        """The log density at ``value``.

        Args:
            value (Tensor|float): the point(s) to evaluate, broadcast against the batch.

        Returns:
            Tensor: the log density (log probability mass for a discrete distribution), of
                the broadcast batch shape.

        Examples:
            >>> import fw
            >>> d = fw.distribution.Laplace(fw.to_tensor(0.0), fw.to_tensor(1.0))
            >>> round(float(d.log_prob(fw.to_tensor(0.5))), 4)
            -1.1931
        """
        loc, scale, value = self._validate_value(value)
        return -fw.log(2 * scale) - fw.abs(value - loc) / scale

    def entropy(self):
        """``1 + log(2 scale)``.

        Returns:
            Tensor: the entropy (in nats), of the batch shape.

        Examples:
            >>> import fw
            >>> d = fw.distribution.Laplace(fw.to_tensor(0.0), fw.to_tensor(1.0))
            >>> round(float(d.entropy()), 4)
            1.6931
        """
        return 1 + fw.log(2 * self.scale)

    def cdf(self, value):
        """The cumulative distribution function.

        Args:
            value (Tensor|float): the point(s) to evaluate, broadcast against the batch.

        Returns:
            Tensor: the cumulative distribution function, of the broadcast batch shape.

        Examples:
            >>> import fw
            >>> d = fw.distribution.Laplace(fw.to_tensor(0.0), fw.to_tensor(1.0))
            >>> round(float(d.cdf(fw.to_tensor(0.5))), 4)
            0.6967
        """
        loc, scale, value = self._validate_value(value)
        return 0.5 - 0.5 * (value - loc).sign() * fw.expm1(-(value - loc).abs() / scale)

    def icdf(self, value):
        """The inverse of `cdf`.

        Args:
            value (Tensor|float): probabilities in [0, 1].

        Returns:
            Tensor: the quantiles, of the broadcast batch shape.

        Examples:
            >>> import fw
            >>> d = fw.distribution.Laplace(fw.to_tensor(0.0), fw.to_tensor(1.0))
            >>> round(float(d.icdf(fw.to_tensor(0.75))), 4)
            0.6931
            >>> round(float(d.cdf(d.icdf(fw.to_tensor(0.75)))), 4)
            0.75
        """
        loc, scale, value = self._validate_value(value)
        t = value - 0.5
        return loc - scale * t.sign() * fw.log1p(-2 * t.abs())

    def sample(self, shape=()):
        """Samples (no gradient).

        Args:
            shape (list|tuple, optional): the sample shape, put before the batch and event
                shapes. Default: ().

        Returns:
            Tensor: samples of shape ``shape + batch_shape + event_shape``.

        Examples:
            >>> import fw
            >>> d = fw.distribution.Laplace(fw.to_tensor(0.0), fw.to_tensor(1.0))
            >>> _ = fw.seed(0)
            >>> d.sample([4]).shape
            [4]
        """
        with fw.no_grad():
            return self.rsample(shape)

    def rsample(self, shape=()):
        """Reparameterised samples by the inverse CDF of a uniform draw on (-1, 1).

        Args:
            shape (list|tuple, optional): the sample shape, put before the batch and event
                shapes. Default: ().

        Returns:
            Tensor: samples of shape ``shape + batch_shape + event_shape``.

        Examples:
            >>> import fw
            >>> d = fw.distribution.Laplace(fw.to_tensor(0.0), fw.to_tensor(1.0))
            >>> _ = fw.seed(0)
            >>> d.rsample([4]).shape
            [4]
        """
        eps = 2.22045e-16 if self.loc.dtype == fw.float64 else 1.19209e-07
        shape = list(self._extend_shape(shape))
        u = fw.uniform(shape, dtype=self.loc.dtype, min=float(np.nextafter(-1, 1)) + eps / 2,
                       max=1.0 - eps / 2)
        return self.loc - self.scale * u.sign() * fw.log1p(-u.abs())

    def kl_divergence(self, other):
        """KL(self || other) for another Laplace.

        Args:
            other (Laplace): the second distribution, of the same family.

        Returns:
            Tensor: the divergence, of the broadcast batch shape.

        Examples:
            >>> import fw
            >>> d = fw.distribution.Laplace(fw.to_tensor(0.0), fw.to_tensor(1.0))
            >>> other = fw.distribution.Laplace(fw.to_tensor(1.0), fw.to_tensor(2.0))
            >>> round(float(d.kl_divergence(other)), 4)
            0.3771
            >>> round(float(d.kl_divergence(d)), 4)
            0.0
        """
        if not isinstance(other, Laplace):
            raise TypeError(f"Laplace.kl_divergence: 'other' must be a Laplace, got "
                            f"{type(other).__name__}")
        t = fw.abs(self.loc - other.loc)
        term1 = (self.scale * fw.exp(-t / self.scale) + t) / other.scale
        return term1 + fw.log(other.scale / self.scale) - 1
