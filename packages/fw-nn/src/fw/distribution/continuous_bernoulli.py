"""The continuous Bernoulli distribution (Paddle's ``paddle.distribution.ContinuousBernoulli``)."""

from __future__ import annotations

import numbers

import fw
from fw.core.tensor import Tensor
from fw.distribution.distribution import Distribution, _as_dtype, _eps

__all__ = ["ContinuousBernoulli"]


class ContinuousBernoulli(Distribution):
    r"""The continuous Bernoulli distribution on [0, 1] (Loaiza-Ganem & Cunningham, 2019):
    :math:`p(x) = C(\lambda)\lambda^x(1-\lambda)^{1-x}`. Near ``probs = 0.5`` (inside
    ``lims``) a Taylor expansion replaces the formulas that are 0/0 there.

    Args:
        probs (float|Tensor): :math:`\lambda` in (0, 1).
        lims (tuple[float], optional): the interval around 0.5 where the Taylor
            expansion is used. Default (0.499, 0.501).

    Examples:
        .. code-block:: python

            >>> import fw
            >>> d = fw.distribution.ContinuousBernoulli(fw.to_tensor([0.2, 0.5]))
            >>> [round(v, 4) for v in d.mean.tolist()]
            [0.388, 0.5]
    """

    def __init__(self, probs, lims=(0.499, 0.501)):
        self.dtype = fw.get_default_dtype()
        if isinstance(probs, numbers.Real) and not isinstance(probs, bool):
            probs = fw.to_tensor([float(probs)], dtype=self.dtype)
        elif isinstance(probs, Tensor):
            self.dtype = probs.dtype
        else:
            raise TypeError(f"ContinuousBernoulli: 'probs' must be a float or a Tensor, got "
                            f"{type(probs).__name__}")
        self.lims = fw.to_tensor(list(lims), dtype=self.dtype)
        eps = _eps(probs.dtype)
        self.probs = fw.clip(probs, min=eps, max=1 - eps)
        super().__init__(tuple(self.probs.shape))

    def _outside(self):
        return fw.logical_or(self.probs <= self.lims[0], self.probs > self.lims[1])

    def _cut_probs(self):
        return fw.where(self._outside(), self.probs, self.lims[0] * fw.ones_like(self.probs))

    @staticmethod
    def _atanh(v):
        return 0.5 * (fw.log1p(v) - fw.log1p(-v))

    def _log_constant(self):
        cp = self._cut_probs()
        below = fw.where(cp <= 0.5, cp, fw.zeros_like(cp))
        above = fw.where(cp >= 0.5, cp, fw.ones_like(cp))
        propose = fw.log(2.0 * fw.abs(self._atanh(1.0 - 2.0 * cp))) - fw.where(
            cp <= 0.5, fw.log1p(-2.0 * below), fw.log(2.0 * above - 1.0))
        x = fw.square(self.probs - 0.5)
        taylor = fw.log(fw.to_tensor(2.0, dtype=self.dtype)) + (4.0 / 3.0 + 104.0 / 45.0 * x) * x
        return fw.where(self._outside(), propose, taylor)

    @property
    def mean(self):
        """The mean.

        Returns:
            Tensor: the mean, of the batch shape.

        Examples:
            >>> import fw
            >>> d = fw.distribution.ContinuousBernoulli(fw.to_tensor(0.3))
            >>> round(float(d.mean), 4)
            0.4302
        """
        cp = self._cut_probs()
        propose = cp / (2.0 * cp - 1.0) + 1.0 / (2.0 * self._atanh(1.0 - 2.0 * cp))
        x = self.probs - 0.5
        taylor = 0.5 + (1.0 / 3.0 + 16.0 / 45.0 * fw.square(x)) * x
        return fw.where(self._outside(), propose, taylor)

    @property
    def variance(self):
        """The variance.

        Returns:
            Tensor: the variance, of the batch shape.

        Examples:
            >>> import fw
            >>> d = fw.distribution.ContinuousBernoulli(fw.to_tensor(0.3))
            >>> round(float(d.variance), 4)
            0.0804
        """
        cp = self._cut_probs()
        propose = cp * (cp - 1.0) / fw.square(1.0 - 2.0 * cp) + 1.0 / fw.square(
            fw.log1p(-cp) - fw.log(cp))
        x = fw.square(self.probs - 0.5)
        taylor = 1.0 / 12.0 - (1.0 / 15.0 - 128.0 / 945.0 * x) * x
        return fw.where(self._outside(), propose, taylor)

    def sample(self, shape=()):
        """Samples (no gradient).

        Args:
            shape (list|tuple, optional): the sample shape, put before the batch and event
                shapes. Default: ().

        Returns:
            Tensor: samples of shape ``shape + batch_shape + event_shape``.

        Examples:
            >>> import fw
            >>> d = fw.distribution.ContinuousBernoulli(fw.to_tensor(0.3))
            >>> _ = fw.seed(0)
            >>> d.sample([4]).shape
            [4]
        """
        with fw.no_grad():
            return self.rsample(shape)

    def rsample(self, shape=()):
        """Reparameterised samples ``icdf(u)``.

        Args:
            shape (list|tuple, optional): the sample shape, put before the batch and event
                shapes. Default: ().

        Returns:
            Tensor: samples of shape ``shape + batch_shape + event_shape``.

        Examples:
            >>> import fw
            >>> d = fw.distribution.ContinuousBernoulli(fw.to_tensor(0.3))
            >>> _ = fw.seed(0)
            >>> d.rsample([4]).shape
            [4]
        """
        shape = list(self._extend_shape(shape))
        return self.icdf(fw.uniform(shape, dtype=self.dtype, min=0.0, max=1.0))

    def log_prob(self, value):
        """The log density at ``value``.

        Args:
            value (Tensor|float): the point(s) to evaluate, broadcast against the batch.

        Returns:
            Tensor: the log density (log probability mass for a discrete distribution), of
                the broadcast batch shape.

        Examples:
            >>> import fw
            >>> d = fw.distribution.ContinuousBernoulli(fw.to_tensor(0.3))
            >>> round(float(d.log_prob(fw.to_tensor(0.4))), 4)
            0.055
        """
        value = _as_dtype(value, self.dtype)
        eps = _eps(self.probs.dtype)
        ce = fw.nan_to_num(value * fw.log(self.probs) + (1.0 - value) * fw.log(1 - self.probs),
                           neginf=-eps)
        return self._log_constant() + ce

    def prob(self, value):
        """The density at ``value``.

        Args:
            value (Tensor|float): the point(s) to evaluate, broadcast against the batch.

        Returns:
            Tensor: the density (probability mass for a discrete distribution), of the
                broadcast batch shape.

        Examples:
            >>> import fw
            >>> d = fw.distribution.ContinuousBernoulli(fw.to_tensor(0.3))
            >>> round(float(d.prob(fw.to_tensor(0.4))), 4)
            1.0565
        """
        return fw.exp(self.log_prob(value))

    def entropy(self):
        """The entropy.

        Returns:
            Tensor: the entropy (in nats), of the batch shape.

        Examples:
            >>> import fw
            >>> d = fw.distribution.ContinuousBernoulli(fw.to_tensor(0.3))
            >>> round(float(d.entropy()), 4)
            -0.0294
        """
        log_p, log_1p = fw.log(self.probs), fw.log1p(-self.probs)
        return fw.where(self.probs == 0.5, fw.full_like(self.probs, 0.0),
                        -self._log_constant() + self.mean * (log_1p - log_p) - log_1p)

    def cdf(self, value):
        """The cumulative distribution function.

        Args:
            value (Tensor|float): the point(s) to evaluate, broadcast against the batch.

        Returns:
            Tensor: the cumulative distribution function, of the broadcast batch shape.

        Examples:
            >>> import fw
            >>> d = fw.distribution.ContinuousBernoulli(fw.to_tensor(0.3))
            >>> round(float(d.cdf(fw.to_tensor(0.4))), 4)
            0.5031
        """
        value = _as_dtype(value, self.dtype)
        cp = self._cut_probs()
        cdfs = (fw.pow(cp, value) * fw.pow(1.0 - cp, 1.0 - value) + cp - 1.0) / (2.0 * cp - 1.0)
        inner = fw.where(self._outside(), cdfs, value)
        return fw.where(value <= 0.0, fw.zeros_like(value),
                        fw.where(value >= 1.0, fw.ones_like(value), inner))

    def icdf(self, value):
        """The inverse of `cdf`.

        Args:
            value (Tensor|float): probabilities in [0, 1].

        Returns:
            Tensor: the quantiles, of the broadcast batch shape.

        Examples:
            >>> import fw
            >>> d = fw.distribution.ContinuousBernoulli(fw.to_tensor(0.3))
            >>> round(float(d.icdf(fw.to_tensor(0.75))), 4)
            0.6605
            >>> round(float(d.cdf(d.icdf(fw.to_tensor(0.75)))), 4)
            0.75
        """
        value = _as_dtype(value, self.dtype)
        cp = self._cut_probs()
        return fw.where(self._outside(),
                        (fw.log1p(-cp + value * (2.0 * cp - 1.0)) - fw.log1p(-cp))
                        / (fw.log(cp) - fw.log1p(-cp)), value)

    def kl_divergence(self, other):
        """KL(self || other) for another ContinuousBernoulli of the same batch shape.

        Args:
            other (ContinuousBernoulli): the second distribution, of the same family.

        Returns:
            Tensor: the divergence, of the broadcast batch shape.

        Examples:
            >>> import fw
            >>> d = fw.distribution.ContinuousBernoulli(fw.to_tensor(0.3))
            >>> other = fw.distribution.ContinuousBernoulli(fw.to_tensor(0.6))
            >>> round(float(d.kl_divergence(other)), 4)
            0.0645
            >>> round(float(d.kl_divergence(d)), 4)
            0.0
        """
        if not isinstance(other, ContinuousBernoulli):
            raise TypeError(f"ContinuousBernoulli.kl_divergence: 'other' must be a "
                            f"ContinuousBernoulli, got {type(other).__name__}")
        if self.batch_shape != other.batch_shape:
            raise ValueError(f"ContinuousBernoulli.kl_divergence: batch shapes "
                             f"{list(self.batch_shape)} and {list(other.batch_shape)} differ")
        log_q, log_1q = fw.log(other.probs), fw.log1p(-other.probs)
        return -self.entropy() - (other._log_constant() + self.mean * (log_q - log_1q) + log_1q)
