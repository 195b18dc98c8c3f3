"""The Cauchy distribution (Paddle's ``paddle.distribution.Cauchy``)."""

from __future__ import annotations

import math

import numpy as np

import fw
from fw.core.tensor import Tensor
from fw.distribution.distribution import (
    Distribution,
    _full_param,
    _value_like,
)

__all__ = ["Cauchy"]


def _loc_scale(who, loc, scale):
    loc = _full_param(loc, who, "loc")
    scale = _full_param(scale, who, "scale")
    if tuple(loc.shape) != tuple(scale.shape):
        loc, scale = fw.broadcast_tensors([loc, scale])
    return loc, scale


def _need_tensor(value, who):
    if not isinstance(value, Tensor):
        raise TypeError(f"{who}: 'value' must be a Tensor, got {type(value).__name__}")


class Cauchy(Distribution):
    r"""The Cauchy distribution: :math:`p(x) = \frac{1}{\pi\gamma(1 + ((x-x_0)/\gamma)^2)}`.
    It has no mean or variance (reading them raises ValueError).

    Args:
        loc (float|Tensor): the location :math:`x_0`.
        scale (float|Tensor): the scale :math:`\gamma > 0`.
        name (str, optional): a name for the operations. Default None.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> c = fw.distribution.Cauchy(0.0, 1.0)
            >>> round(float(c.cdf(fw.to_tensor(1.0))), 4), round(float(c.entropy()), 4)
            (0.75, 2.531)
    """

    def __init__(self, loc, scale, name=None):
        self.name = name if name is not None else "Cauchy"
        self.loc, self.scale = _loc_scale("Cauchy", loc, scale)
        self.dtype = self.loc.dtype
        super().__init__(batch_shape=tuple(self.loc.shape), event_shape=())

    @property
    def mean(self):
        """Undefined: the Cauchy distribution's tails are too heavy for a mean, so
        reading it raises ValueError (as Paddle does).

        Returns:
            Tensor: never; it raises.

        Examples:
            >>> import fw
            >>> d = fw.distribution.Cauchy(0.0, 1.0)
            >>> try:
            ...     d.mean
            ... except ValueError as e:
            ...     print(e)
            Cauchy distribution has no mean.
        """
        raise ValueError("Cauchy distribution has no mean.")

    @property
    def variance(self):
        """Undefined: the Cauchy distribution's tails are too heavy for a variance, so
        reading it raises ValueError (as Paddle does).

        Returns:
            Tensor: never; it raises.

        Examples:
            >>> import fw
            >>> d = fw.distribution.Cauchy(0.0, 1.0)
            >>> try:
            ...     d.variance
            ... except ValueError as e:
            ...     print(e)
            Cauchy distribution has no variance.
        """
        raise ValueError("Cauchy distribution has no variance.")

    @property
    def stddev(self):
        """Undefined: the Cauchy distribution's tails are too heavy for a standard deviation, so
        reading it raises ValueError (as Paddle does).

        Returns:
            Tensor: never; it raises.

        Examples:
            >>> import fw
            >>> d = fw.distribution.Cauchy(0.0, 1.0)
            >>> try:
            ...     d.stddev
            ... except ValueError as e:
            ...     print(e)
            Cauchy distribution has no stddev.
        """
        raise ValueError("Cauchy distribution has no stddev.")

    def sample(self, shape=(), name=None):
        """Samples (no gradient).

        Args:
            shape (list|tuple, optional): the sample shape, put before the batch and event
                shapes. Default: ().

        Returns:
            Tensor: samples of shape ``shape + batch_shape + event_shape``.

        Examples:
            >>> import fw
            >>> d = fw.distribution.Cauchy(0.0, 1.0)
            >>> _ = fw.seed(0)
            >>> d.sample([4]).shape
            [4]
        """
        with fw.no_grad():
            return self.rsample(shape, name)

    def rsample(self, shape=(), name=None):
        """Reparameterised samples ``loc + scale tan(pi (u - 1/2))``.

        Args:
            shape (list|tuple, optional): the sample shape, put before the batch and event
                shapes. Default: ().

        Returns:
            Tensor: samples of shape ``shape + batch_shape + event_shape``.

        Examples:
            >>> import fw
            >>> d = fw.distribution.Cauchy(0.0, 1.0)
            >>> _ = fw.seed(0)
            >>> d.rsample([4]).shape
            [4]
        """
        shape = list(self._extend_shape(shape))
        u = fw.rand(shape, dtype=self.dtype)
        return self.loc.expand(shape) + self.scale.expand(shape) * fw.tan(np.pi * (u - 0.5))

    def prob(self, value):
        """The density at ``value``.

        Args:
            value (Tensor|float): the point(s) to evaluate, broadcast against the batch.

        Returns:
            Tensor: the density (probability mass for a discrete distribution), of the
                broadcast batch shape.

        Examples:
            >>> import fw
            >>> d = fw.distribution.Cauchy(0.0, 1.0)
            >>> round(float(d.prob(fw.to_tensor(1.0))), 4)
            0.1592
        """
        _need_tensor(value, "Cauchy.prob")
        return self.log_prob(value).exp()

    def log_prob(self, value):
        """The log density at ``value``.

        Args:
            value (Tensor|float): the point(s) to evaluate, broadcast against the batch.

        Returns:
            Tensor: the log density (log probability mass for a discrete distribution), of
                the broadcast batch shape.

        Examples:
            >>> import fw
            >>> d = fw.distribution.Cauchy(0.0, 1.0)
            >>> round(float(d.log_prob(fw.to_tensor(1.0))), 4)
            -1.8379
        """
        _need_tensor(value, "Cauchy.log_prob")
        value = _value_like(value, self.loc)
        loc, scale, value = fw.broadcast_tensors([self.loc, self.scale, value])
        return -fw.square((value - loc) / scale).log1p() - (math.log(math.pi) + scale.log())

    def cdf(self, value):
        """``atan((value - loc) / scale) / pi + 1/2``.

        Args:
            value (Tensor|float): the point(s) to evaluate, broadcast against the batch.

        Returns:
            Tensor: the cumulative distribution function, of the broadcast batch shape.

        Examples:
            >>> import fw
            >>> d = fw.distribution.Cauchy(0.0, 1.0)
            >>> round(float(d.cdf(fw.to_tensor(1.0))), 4)
            0.75
        """
        _need_tensor(value, "Cauchy.cdf")
        value = _value_like(value, self.loc)
        loc, scale, value = fw.broadcast_tensors([self.loc, self.scale, value])
        return fw.atan((value - loc) / scale) / np.pi + 0.5

    def icdf(self, value):
        """``loc + scale tan(pi (value - 1/2))``.

        Args:
            value (Tensor|float): probabilities in [0, 1].

        Returns:
            Tensor: the quantiles, of the broadcast batch shape.

        Examples:
            >>> import fw
            >>> d = fw.distribution.Cauchy(0.0, 1.0)
            >>> round(float(d.icdf(fw.to_tensor(0.75))), 4)
            1.0
            >>> round(float(d.cdf(d.icdf(fw.to_tensor(0.75)))), 4)
            0.75
        """
        _need_tensor(value, "Cauchy.icdf")
        value = _value_like(value, self.loc)
        return self.loc + self.scale * fw.tan(np.pi * (value - 0.5))

    def entropy(self):
        """``log(4 pi scale)``.

        Returns:
            Tensor: the entropy (in nats), of the batch shape.

        Examples:
            >>> import fw
            >>> d = fw.distribution.Cauchy(0.0, 1.0)
            >>> round(float(d.entropy()), 4)
            2.531
        """
        return math.log(4 * np.pi) + self.scale.log()

    def kl_divergence(self, other):
        """KL(self || other): ``log(((s1 + s2)^2 + (l1 - l2)^2) / (4 s1 s2))``.

        Args:
            other (Cauchy): the second distribution, of the same family.

        Returns:
            Tensor: the divergence, of the broadcast batch shape.

        Examples:
            >>> import fw
            >>> d = fw.distribution.Cauchy(0.0, 1.0)
            >>> other = fw.distribution.Cauchy(1.0, 2.0)
            >>> round(float(d.kl_divergence(other)), 4)
            0.2231
            >>> round(float(d.kl_divergence(d)), 4)
            0.0
        """
        if not isinstance(other, Cauchy):
            raise TypeError(f"Cauchy.kl_divergence: 'other' must be a Cauchy, got "
                            f"{type(other).__name__}")
        t1 = ((self.scale + other.scale).pow(2) + (self.loc - other.loc).pow(2)).log()
        return t1 - (4 * self.scale * other.scale).log()
