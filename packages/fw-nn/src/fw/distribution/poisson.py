"""The Poisson distribution (Paddle's ``paddle.distribution.Poisson``)."""

from __future__ import annotations

import numbers

import fw
from fw.core.tensor import Tensor
from fw.distribution.distribution import Distribution, _as_dtype, _eps, _shape_arg

__all__ = ["Poisson"]


class Poisson(Distribution):
    r"""The Poisson distribution with ``rate`` :math:`\lambda`.

    Args:
        rate (float|Tensor): :math:`\lambda >= 0`.

    `entropy` and `kl_divergence` sum over ``0 .. max(rate) + 30 sqrt(max(rate))``, as
    Paddle does (the mass beyond is negligible).

    Examples:
        .. code-block:: python

            >>> import fw
            >>> p = fw.distribution.Poisson(fw.to_tensor([2.0]))
            >>> round(float(p.prob(fw.to_tensor([1.0]))), 4)
            0.2707
    """

    def __init__(self, rate):
        self.dtype = fw.get_default_dtype()
        if isinstance(rate, numbers.Real) and not isinstance(rate, bool):
            rate = fw.to_tensor([float(rate)], dtype=self.dtype)
        elif isinstance(rate, Tensor):
            self.dtype = rate.dtype
        else:
            raise TypeError(f"Poisson: 'rate' must be a float or a Tensor, got "
                            f"{type(rate).__name__}")
        self.rate = rate
        super().__init__(tuple(rate.shape))

    @property
    def mean(self):
        """``rate``.

        Returns:
            Tensor: the mean, of the batch shape.

        Examples:
            >>> import fw
            >>> d = fw.distribution.Poisson(fw.to_tensor(2.0))
            >>> round(float(d.mean), 4)
            2.0
        """
        return self.rate

    @property
    def variance(self):
        """``rate``.

        Returns:
            Tensor: the variance, of the batch shape.

        Examples:
            >>> import fw
            >>> d = fw.distribution.Poisson(fw.to_tensor(2.0))
            >>> round(float(d.variance), 4)
            2.0
        """
        return self.rate

    def sample(self, shape=()):
        """Counts of shape ``shape + batch_shape``, in the rate's dtype.

        Args:
            shape (list|tuple, optional): the sample shape, put before the batch and event
                shapes. Default: ().

        Returns:
            Tensor: samples of shape ``shape + batch_shape + event_shape``.

        Examples:
            >>> import fw
            >>> d = fw.distribution.Poisson(fw.to_tensor(2.0))
            >>> _ = fw.seed(0)
            >>> d.sample([4]).shape
            [4]
        """
        shape = list(_shape_arg(shape, "Poisson.sample")) + list(self.batch_shape)
        with fw.no_grad():
            return fw.poisson(fw.broadcast_to(self.rate, shape))

    def _bounded_support(self, rate):
        m = float(fw.max(rate).item())
        s = m ** 0.5 if m >= 1.0 else 1.0
        return fw.arange(0, int(m + 30 * s), dtype=self.dtype)

    def entropy(self):
        """The entropy, summed over the bounded support (0 where the rate is 0).

        Returns:
            Tensor: the entropy (in nats), of the batch shape.

        Examples:
            >>> import fw
            >>> d = fw.distribution.Poisson(fw.to_tensor(2.0))
            >>> round(float(d.entropy()), 4)
            1.7049
        """
        v = self._bounded_support(self.rate).reshape([-1] + [1] * len(self.batch_shape))
        lp = self.log_prob(v)
        ent = -(fw.exp(lp) * lp).sum(0)
        return ent * (self.rate != 0).astype(self.dtype)

    def log_prob(self, value):
        """The log probability of the count ``value``.

        Args:
            value (Tensor|float): the point(s) to evaluate, broadcast against the batch.

        Returns:
            Tensor: the log density (log probability mass for a discrete distribution), of
                the broadcast batch shape.

        Examples:
            >>> import fw
            >>> d = fw.distribution.Poisson(fw.to_tensor(2.0))
            >>> round(float(d.log_prob(fw.to_tensor(1.0))), 4)
            -1.3069
        """
        value = _as_dtype(value, self.dtype)
        eps = _eps(self.rate.dtype)
        return fw.nan_to_num(-self.rate + value * fw.log(self.rate) - fw.lgamma(value + 1),
                             neginf=-eps)

    def prob(self, value):
        """The probability of the count ``value``.

        Args:
            value (Tensor|float): the point(s) to evaluate, broadcast against the batch.

        Returns:
            Tensor: the density (probability mass for a discrete distribution), of the
                broadcast batch shape.

        Examples:
            >>> import fw
            >>> d = fw.distribution.Poisson(fw.to_tensor(2.0))
            >>> round(float(d.prob(fw.to_tensor(1.0))), 4)
            0.2707
        """
        return fw.exp(self.log_prob(value))

    def kl_divergence(self, other):
        """KL(self || other) for a Poisson of the same batch shape.

        Args:
            other (Poisson): the second distribution, of the same family.

        Returns:
            Tensor: the divergence, of the broadcast batch shape.

        Examples:
            >>> import fw
            >>> d = fw.distribution.Poisson(fw.to_tensor(2.0))
            >>> other = fw.distribution.Poisson(fw.to_tensor(3.0))
            >>> round(float(d.kl_divergence(other)), 4)
            0.1891
            >>> round(float(d.kl_divergence(d)), 4)
            0.0
        """
        if not isinstance(other, Poisson):
            raise TypeError(f"Poisson.kl_divergence: 'other' must be a Poisson, got "
                            f"{type(other).__name__}")
        if self.batch_shape != other.batch_shape:
            raise ValueError(f"Poisson.kl_divergence: batch shapes {list(self.batch_shape)} "
                             f"and {list(other.batch_shape)} differ")
        support = self._bounded_support(fw.maximum(self.rate, other.rate))
        a_max = int(fw.max(support).item())
        s = fw.arange(0, a_max, dtype=self.dtype).reshape([-1] + [1] * len(self.batch_shape))
        lp1, lp2 = self.log_prob(s), other.log_prob(s)
        return (fw.exp(lp1) * (lp1 - lp2)).sum(0)
