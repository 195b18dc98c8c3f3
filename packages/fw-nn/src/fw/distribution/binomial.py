"""The binomial distribution (Paddle's ``paddle.distribution.Binomial``)."""

from __future__ import annotations

import numbers

import fw
from fw.core.tensor import Tensor
from fw.distribution.distribution import Distribution, _as_dtype, _eps, _shape_arg

__all__ = ["Binomial"]


class Binomial(Distribution):
    r"""The binomial distribution: successes in ``total_count`` trials of probability
    ``probs``.

    Args:
        total_count (int|Tensor): the number of trials (cast to the dtype of ``probs``).
        probs (float|Tensor): the success probability.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> b = fw.distribution.Binomial(10, 0.3)
            >>> round(float(b.variance), 4), round(float(b.prob(fw.to_tensor(3.0))), 4)
            (2.1, 0.2668)
    """

    def __init__(self, total_count, probs):
        self.dtype = fw.get_default_dtype()
        if isinstance(probs, numbers.Real) and not isinstance(probs, bool):
            probs = fw.to_tensor(float(probs), dtype=self.dtype)
        elif isinstance(probs, Tensor):
            self.dtype = probs.dtype
        else:
            raise TypeError(f"Binomial: 'probs' must be a float or a Tensor, got "
                            f"{type(probs).__name__}")
        if isinstance(total_count, numbers.Integral) and not isinstance(total_count, bool):
            total_count = fw.to_tensor(int(total_count), dtype=self.dtype)
        elif isinstance(total_count, Tensor):
            total_count = total_count.astype(self.dtype)
        else:
            raise TypeError(f"Binomial: 'total_count' must be an int or a Tensor, got "
                            f"{type(total_count).__name__}")
        self.total_count, self.probs = fw.broadcast_tensors([total_count, probs])
        super().__init__(tuple(self.total_count.shape))

    @property
    def mean(self):
        """``total_count * probs``.

        Returns:
            Tensor: the mean, of the batch shape.

        Examples:
            >>> import fw
            >>> d = fw.distribution.Binomial(10, fw.to_tensor(0.3))
            >>> round(float(d.mean), 4)
            3.0
        """
        return self.total_count * self.probs

    @property
    def variance(self):
        """``total_count * probs * (1 - probs)``.

        Returns:
            Tensor: the variance, of the batch shape.

        Examples:
            >>> import fw
            >>> d = fw.distribution.Binomial(10, fw.to_tensor(0.3))
            >>> round(float(d.variance), 4)
            2.1
        """
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, shape=()):
        """Success counts of shape ``shape + batch_shape``, in the dtype of ``probs``.

        Args:
            shape (list|tuple, optional): the sample shape, put before the batch and event
                shapes. Default: ().

        Returns:
            Tensor: samples of shape ``shape + batch_shape + event_shape``.

        Examples:
            >>> import fw
            >>> d = fw.distribution.Binomial(10, fw.to_tensor(0.3))
            >>> _ = fw.seed(0)
            >>> d.sample([4]).shape
            [4]
        """
        shape = list(_shape_arg(shape, "Binomial.sample")) + list(self.batch_shape)
        with fw.no_grad():
            n = fw.broadcast_to(self.total_count, shape).astype("int32")
            p = fw.broadcast_to(self.probs, shape)
            return fw.binomial(n, p).astype(self.dtype)

    def _enumerate_support(self):
        values = fw.arange(1 + int(fw.max(self.total_count).item()), dtype=self.dtype)
        return values.reshape([-1] + [1] * len(self.batch_shape))

    def entropy(self):
        """The entropy, summed over the whole support.

        Returns:
            Tensor: the entropy (in nats), of the batch shape.

        Examples:
            >>> import fw
            >>> d = fw.distribution.Binomial(10, fw.to_tensor(0.3))
            >>> round(float(d.entropy()), 4)
            1.7791
        """
        lp = self.log_prob(self._enumerate_support())
        return -(fw.exp(lp) * lp).sum(0)

    def log_prob(self, value):
        """The log probability of ``value`` successes.

        Args:
            value (Tensor|float): the point(s) to evaluate, broadcast against the batch.

        Returns:
            Tensor: the log density (log probability mass for a discrete distribution), of
                the broadcast batch shape.

        Examples:
            >>> import fw
            >>> d = fw.distribution.Binomial(10, fw.to_tensor(0.3))
            >>> round(float(d.log_prob(fw.to_tensor(3.0))), 4)
            -1.3212
        """
        value = _as_dtype(value, self.dtype)
        n = self.total_count
        log_comb = fw.lgamma(n + 1.0) - fw.lgamma(n - value + 1.0) - fw.lgamma(value + 1.0)
        eps = _eps(self.probs.dtype)
        p = fw.clip(self.probs, min=eps, max=1 - eps)
        return fw.nan_to_num(log_comb + value * fw.log(p) + (n - value) * fw.log(1 - p),
                             neginf=-eps)

    def prob(self, value):
        """The probability of ``value`` successes.

        Args:
            value (Tensor|float): the point(s) to evaluate, broadcast against the batch.

        Returns:
            Tensor: the density (probability mass for a discrete distribution), of the
                broadcast batch shape.

        Examples:
            >>> import fw
            >>> d = fw.distribution.Binomial(10, fw.to_tensor(0.3))
            >>> round(float(d.prob(fw.to_tensor(3.0))), 4)
            0.2668
        """
        return fw.exp(self.log_prob(value))

    def kl_divergence(self, other):
        """KL(self || other) summed over self's support.

        Args:
            other (Binomial): the second distribution, of the same family.

        Returns:
            Tensor: the divergence, of the broadcast batch shape.

        Examples:
            >>> import fw
            >>> d = fw.distribution.Binomial(10, fw.to_tensor(0.3))
            >>> other = fw.distribution.Binomial(10, fw.to_tensor(0.5))
            >>> round(float(d.kl_divergence(other)), 4)
            0.8228
            >>> round(float(d.kl_divergence(d)), 4)
            0.0
        """
        if not isinstance(other, Binomial):
            raise TypeError(f"Binomial.kl_divergence: 'other' must be a Binomial, got "
                            f"{type(other).__name__}")
        s = self._enumerate_support()
        lp1, lp2 = self.log_prob(s), other.log_prob(s)
        return (fw.exp(lp1) * (lp1 - lp2)).sum(0)
