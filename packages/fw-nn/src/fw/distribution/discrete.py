"""Binomial, Geometric and Poisson."""

from __future__ import annotations

import numbers

import fw
from fw.core.tensor import Tensor
from fw.distribution.distribution import Distribution, _as_dtype, _eps, _shape_arg

__all__ = ["Binomial", "Geometric", "Poisson"]


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
        """``total_count * probs``."""
        return self.total_count * self.probs

    @property
    def variance(self):
        """``total_count * probs * (1 - probs)``."""
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, shape=()):
        """Success counts of shape ``shape + batch_shape``, in the dtype of ``probs``."""
        shape = list(_shape_arg(shape, "Binomial.sample")) + list(self.batch_shape)
        with fw.no_grad():
            n = fw.broadcast_to(self.total_count, shape).astype("int32")
            p = fw.broadcast_to(self.probs, shape)
            return fw.binomial(n, p).astype(self.dtype)

    def _enumerate_support(self):
        values = fw.arange(1 + int(fw.max(self.total_count).item()), dtype=self.dtype)
        return values.reshape([-1] + [1] * len(self.batch_shape))

    def entropy(self):
        """The entropy, summed over the whole support."""
        lp = self.log_prob(self._enumerate_support())
        return -(fw.exp(lp) * lp).sum(0)

    def log_prob(self, value):
        """The log probability of ``value`` successes."""
        value = _as_dtype(value, self.dtype)
        n = self.total_count
        log_comb = fw.lgamma(n + 1.0) - fw.lgamma(n - value + 1.0) - fw.lgamma(value + 1.0)
        eps = _eps(self.probs.dtype)
        p = fw.clip(self.probs, min=eps, max=1 - eps)
        return fw.nan_to_num(log_comb + value * fw.log(p) + (n - value) * fw.log(1 - p),
                             neginf=-eps)

    def prob(self, value):
        """The probability of ``value`` successes."""
        return fw.exp(self.log_prob(value))

    def kl_divergence(self, other):
        """KL(self || other) summed over self's support."""
        if not isinstance(other, Binomial):
            raise TypeError(f"Binomial.kl_divergence: 'other' must be a Binomial, got "
                            f"{type(other).__name__}")
        s = self._enumerate_support()
        lp1, lp2 = self.log_prob(s), other.log_prob(s)
        return (fw.exp(lp1) * (lp1 - lp2)).sum(0)


class Geometric(Distribution):
    r"""The geometric distribution: the number of failures before the first success,
    :math:`P(X = k) = (1-p)^k p` for :math:`k = 0, 1, ...`.

    Args:
        probs (float|Tensor): the success probability, in (0, 1].

    Examples:
        .. code-block:: python

            >>> import fw
            >>> g = fw.distribution.Geometric(0.5)
            >>> round(float(g.mean), 4), round(float(g.pmf(2)), 4)
            (1.0, 0.125)
    """

    def __init__(self, probs):
        if isinstance(probs, numbers.Real) and not isinstance(probs, bool):
            probs = fw.full([], float(probs), dtype="float32")
        if not isinstance(probs, Tensor):
            raise TypeError(f"Geometric: 'probs' must be a float or a Tensor, got "
                            f"{type(probs).__name__}")
        if bool(fw.any(fw.logical_or(probs <= 0, probs > 1))):
            raise ValueError("Geometric: every element of 'probs' must be in (0, 1]")
        self.probs = probs
        super().__init__(tuple(probs.shape))

    @property
    def mean(self):
        """``1 / p - 1``."""
        return 1.0 / self.probs - 1.0

    @property
    def variance(self):
        """``(1 / p - 1) / p``."""
        return (1.0 / self.probs - 1.0) / self.probs

    @property
    def stddev(self):
        """The standard deviation."""
        return fw.sqrt(self.variance)

    def _k(self, k, who):
        if isinstance(k, bool) or not isinstance(k, (numbers.Integral, Tensor)):
            raise TypeError(f"Geometric.{who}: 'k' must be an int or a Tensor, got "
                            f"{type(k).__name__}")
        return k

    def pmf(self, k):
        """``(1 - p)^k p``."""
        return fw.pow(1.0 - self.probs, self._k(k, "pmf")) * self.probs

    def log_pmf(self, k):
        """``log(pmf(k))``."""
        return fw.log(self.pmf(k))

    def prob(self, value):
        """Same as `pmf`."""
        return self.pmf(value)

    def log_prob(self, value):
        """Same as `log_pmf`."""
        return self.log_pmf(value)

    def sample(self, shape=()):
        """Samples (no gradient), as floats."""
        with fw.no_grad():
            return self.rsample(shape)

    def rsample(self, shape=()):
        """``floor(log(u) / log(1 - p))`` (piecewise constant in p: zero gradient almost
        everywhere, as in Paddle)."""
        shape = list(self._extend_shape(shape))
        u = fw.uniform(shape, dtype=self.probs.dtype, min=float(fw.finfo(fw.float32).tiny),
                       max=1.0)
        return fw.floor(fw.log(u) / fw.log1p(-self.probs))

    def entropy(self):
        """The entropy."""
        p = self.probs
        return -((1.0 - p) * fw.log(1.0 - p) + p * fw.log(p)) / p

    def cdf(self, k):
        """``1 - (1 - p)^(k + 1)``."""
        return 1.0 - fw.pow(1.0 - self.probs, self._k(k, "cdf") + 1)

    def kl_divergence(self, other):
        """KL(self || other) for another Geometric: ``log(p/q) + (1-p)/p log((1-p)/(1-q))``.

        Paddle 3.3 returns ``p log(p/q) + (1-p) log((1-p)/(1-q))`` here, the KL of two
        Bernoulli distributions, which is not the KL of the geometric distributions
        (the sum over k of P(k) log(P(k)/Q(k))); fw returns the correct value.
        """
        if not isinstance(other, Geometric):
            raise TypeError(f"Geometric.kl_divergence: 'other' must be a Geometric, got "
                            f"{type(other).__name__}")
        p, q = self.probs, other.probs
        return fw.log(p / q) + (1.0 - p) / p * fw.log((1.0 - p) / (1.0 - q))


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
        """``rate``."""
        return self.rate

    @property
    def variance(self):
        """``rate``."""
        return self.rate

    def sample(self, shape=()):
        """Counts of shape ``shape + batch_shape``, in the rate's dtype."""
        shape = list(_shape_arg(shape, "Poisson.sample")) + list(self.batch_shape)
        with fw.no_grad():
            return fw.poisson(fw.broadcast_to(self.rate, shape))

    def _bounded_support(self, rate):
        m = float(fw.max(rate).item())
        s = m ** 0.5 if m >= 1.0 else 1.0
        return fw.arange(0, int(m + 30 * s), dtype=self.dtype)

    def entropy(self):
        """The entropy, summed over the bounded support (0 where the rate is 0)."""
        v = self._bounded_support(self.rate).reshape([-1] + [1] * len(self.batch_shape))
        lp = self.log_prob(v)
        ent = -(fw.exp(lp) * lp).sum(0)
        return ent * (self.rate != 0).astype(self.dtype)

    def log_prob(self, value):
        """The log probability of the count ``value``."""
        value = _as_dtype(value, self.dtype)
        eps = _eps(self.rate.dtype)
        return fw.nan_to_num(-self.rate + value * fw.log(self.rate) - fw.lgamma(value + 1),
                             neginf=-eps)

    def prob(self, value):
        """The probability of the count ``value``."""
        return fw.exp(self.log_prob(value))

    def kl_divergence(self, other):
        """KL(self || other) for a Poisson of the same batch shape."""
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
