"""The log-normal distribution (Paddle's ``paddle.distribution.LogNormal``)."""

from __future__ import annotations

import fw
from fw.distribution.normal import Normal
from fw.distribution.transform import ExpTransform
from fw.distribution.transformed_distribution import TransformedDistribution

__all__ = ["LogNormal"]


class LogNormal(TransformedDistribution):
    r"""The log-normal distribution: ``exp(X)`` for ``X ~ Normal(loc, scale)``.

    Args:
        loc (float|list|numpy.ndarray|Tensor): the mean of the underlying normal.
        scale (float|list|numpy.ndarray|Tensor): its standard deviation.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> d = fw.distribution.LogNormal(0.0, 1.0)
            >>> round(float(d.mean), 4)
            1.6487
    """

    def __init__(self, loc, scale):
        self._base = Normal(loc=loc, scale=scale)
        self.loc = self._base.loc
        self.scale = self._base.scale
        super().__init__(self._base, [ExpTransform()])

    @property
    def mean(self):
        """``exp(loc + scale**2 / 2)``.

        Returns:
            Tensor: the mean, of the batch shape.

        Examples:
            >>> import fw
            >>> d = fw.distribution.LogNormal(fw.to_tensor(0.0), fw.to_tensor(1.0))
            >>> round(float(d.mean), 4)
            1.6487
        """
        return fw.exp(self._base.mean + self._base.variance / 2)

    @property
    def variance(self):
        """``(exp(scale**2) - 1) * exp(2 loc + scale**2)``.

        Returns:
            Tensor: the variance, of the batch shape.

        Examples:
            >>> import fw
            >>> d = fw.distribution.LogNormal(fw.to_tensor(0.0), fw.to_tensor(1.0))
            >>> round(float(d.variance), 4)
            4.6708
        """
        return fw.expm1(self._base.variance) * fw.exp(2 * self._base.mean + self._base.variance)

    def entropy(self):
        """The entropy: the normal's plus ``loc``.

        Returns:
            Tensor: the entropy (in nats), of the batch shape.

        Examples:
            >>> import fw
            >>> d = fw.distribution.LogNormal(fw.to_tensor(0.0), fw.to_tensor(1.0))
            >>> round(float(d.entropy()), 4)
            1.4189
        """
        return self._base.entropy() + self._base.mean

    def probs(self, value):
        """The density at ``value`` (Paddle's name; the same as `prob`).

        Args:
            value (Tensor|float): the point(s) to evaluate, > 0, broadcast against the
                batch.

        Returns:
            Tensor: the density, of the broadcast batch shape.

        Examples:
            >>> import fw
            >>> d = fw.distribution.LogNormal(fw.to_tensor(0.0), fw.to_tensor(1.0))
            >>> round(float(d.probs(fw.to_tensor(1.0))), 4)
            0.3989
            >>> bool(fw.allclose(d.probs(fw.to_tensor(2.0)), d.prob(fw.to_tensor(2.0))))
            True
        """
        return fw.exp(self.log_prob(value))

    def kl_divergence(self, other):
        """KL(self || other): the KL of the underlying normals.

        Args:
            other (LogNormal): the second distribution, of the same family.

        Returns:
            Tensor: the divergence, of the broadcast batch shape.

        Examples:
            >>> import fw
            >>> d = fw.distribution.LogNormal(fw.to_tensor(0.0), fw.to_tensor(1.0))
            >>> other = fw.distribution.LogNormal(fw.to_tensor(1.0), fw.to_tensor(2.0))
            >>> round(float(d.kl_divergence(other)), 4)
            0.4431
            >>> round(float(d.kl_divergence(d)), 4)
            0.0
        """
        return self._base.kl_divergence(other._base)
