"""Student's t distribution (Paddle's ``paddle.distribution.StudentT``)."""

from __future__ import annotations

import math

import fw
from fw.distribution.distribution import (
    Distribution,
    _broadcast_all,
    _value_like,
)
from fw.distribution.gamma import Gamma

__all__ = ["StudentT"]


class StudentT(Distribution):
    r"""Student's t distribution with ``df`` degrees of freedom, location ``loc`` and scale
    ``scale``.

    Args:
        df (float|Tensor): the degrees of freedom (> 0).
        loc (float|Tensor): the location.
        scale (float|Tensor): the scale (> 0).
        name (str, optional): a name for the operations. Default None.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> t = fw.distribution.StudentT(3.0, 0.0, 1.0)
            >>> round(float(t.variance), 4), round(float(t.log_prob(fw.to_tensor(0.0))), 4)
            (3.0, -1.0009)
    """

    def __init__(self, df, loc, scale, name=None):
        self.name = name if name is not None else "StudentT"
        self.df, self.loc, self.scale = _broadcast_all("StudentT", df, loc, scale)
        if not bool((self.df >= 0.0).all()):
            raise ValueError("StudentT: every element of 'df' must be nonnegative")
        if not bool((self.scale >= 0.0).all()):
            raise ValueError("StudentT: every element of 'scale' must be nonnegative")
        self.dtype = self.df.dtype
        super().__init__(tuple(self.df.shape))
        self._chi2 = Gamma(0.5 * self.df, fw.full_like(self.df, 0.5))

    @property
    def mean(self):
        """``loc`` where ``df > 1``, NaN elsewhere.

        Returns:
            Tensor: the mean, of the batch shape.

        Examples:
            >>> import fw
            >>> d = fw.distribution.StudentT(3.0, 0.0, 1.0)
            >>> round(float(d.mean), 4)
            0.0
        """
        return fw.where(self.df > 1.0, self.loc, fw.full_like(self.loc, float("nan")))

    @property
    def variance(self):
        """``scale^2 df / (df - 2)`` for ``df > 2``, inf for ``1 < df <= 2``, else NaN.

        Returns:
            Tensor: the variance, of the batch shape.

        Examples:
            >>> import fw
            >>> d = fw.distribution.StudentT(3.0, 0.0, 1.0)
            >>> round(float(d.variance), 4)
            3.0
        """
        df = self.df.detach()
        var = fw.where(self.df > 2.0, self.scale.pow(2) * df / (df - 2),
                       fw.full_like(df, float("nan")))
        inf = fw.logical_and(self.df <= 2.0, self.df > 1.0)
        return fw.where(inf, fw.full_like(var, float("inf")), var)

    def sample(self, shape=()):
        """Samples (no gradient).

        Args:
            shape (list|tuple, optional): the sample shape, put before the batch and event
                shapes. Default: ().

        Returns:
            Tensor: samples of shape ``shape + batch_shape + event_shape``.

        Examples:
            >>> import fw
            >>> d = fw.distribution.StudentT(3.0, 0.0, 1.0)
            >>> _ = fw.seed(0)
            >>> d.sample([4]).shape
            [4]
        """
        with fw.no_grad():
            return self.rsample(shape)

    def rsample(self, shape=()):
        """Reparameterised samples ``loc + scale z / sqrt(chi2 / df)`` (implicit gamma
        gradients for ``df``).

        Args:
            shape (list|tuple, optional): the sample shape, put before the batch and event
                shapes. Default: ().

        Returns:
            Tensor: samples of shape ``shape + batch_shape + event_shape``.

        Examples:
            >>> import fw
            >>> d = fw.distribution.StudentT(3.0, 0.0, 1.0)
            >>> _ = fw.seed(0)
            >>> d.rsample([4]).shape
            [4]
        """
        out = list(self._extend_shape(shape))
        z = fw.standard_normal(out, dtype=self.dtype)
        chi2 = self._chi2.rsample(shape)
        return self.loc + self.scale * z * fw.rsqrt(chi2 / self.df)

    def entropy(self):
        """The entropy.

        Returns:
            Tensor: the entropy (in nats), of the batch shape.

        Examples:
            >>> import fw
            >>> d = fw.distribution.StudentT(3.0, 0.0, 1.0)
            >>> round(float(d.entropy()), 4)
            1.7735
        """
        df = self.df
        lbeta = fw.lgamma(0.5 * df) + math.lgamma(0.5) - fw.lgamma(0.5 * (df + 1))
        return (self.scale.log() + 0.5 * (df + 1) * (fw.digamma(0.5 * (df + 1))
                                                     - fw.digamma(0.5 * df))
                + 0.5 * df.log() + lbeta)

    def log_prob(self, value):
        """The log density at ``value``.

        Args:
            value (Tensor|float): the point(s) to evaluate, broadcast against the batch.

        Returns:
            Tensor: the log density (log probability mass for a discrete distribution), of
                the broadcast batch shape.

        Examples:
            >>> import fw
            >>> d = fw.distribution.StudentT(3.0, 0.0, 1.0)
            >>> round(float(d.log_prob(fw.to_tensor(0.5))), 4)
            -1.161
        """
        value = _value_like(value, self.df)
        y = (value - self.loc) / self.scale
        Z = (self.scale.log() + 0.5 * self.df.log() + 0.5 * math.log(math.pi)
             + fw.lgamma(0.5 * self.df) - fw.lgamma(0.5 * (self.df + 1.0)))
        return -0.5 * (self.df + 1.0) * fw.log1p(y ** 2.0 / self.df) - Z

    def prob(self, value):
        """The density at ``value``.

        Args:
            value (Tensor|float): the point(s) to evaluate, broadcast against the batch.

        Returns:
            Tensor: the density (probability mass for a discrete distribution), of the
                broadcast batch shape.

        Examples:
            >>> import fw
            >>> d = fw.distribution.StudentT(3.0, 0.0, 1.0)
            >>> round(float(d.prob(fw.to_tensor(0.5))), 4)
            0.3132
        """
        return fw.exp(self.log_prob(value))
