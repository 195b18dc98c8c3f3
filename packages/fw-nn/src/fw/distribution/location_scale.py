"""Cauchy, Laplace, Gumbel and StudentT: location-scale families."""

from __future__ import annotations

import math

import numpy as np

import fw
from fw.core.tensor import Tensor
from fw.distribution.distribution import (
    Distribution,
    _broadcast_all,
    _full_param,
    _value_like,
)
from fw.distribution.gamma import Gamma
from fw.distribution.transformed_distribution import TransformedDistribution

__all__ = ["Cauchy", "Laplace", "Gumbel", "StudentT"]


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
        raise ValueError("Cauchy distribution has no mean.")

    @property
    def variance(self):
        raise ValueError("Cauchy distribution has no variance.")

    @property
    def stddev(self):
        raise ValueError("Cauchy distribution has no stddev.")

    def sample(self, shape=(), name=None):
        """Samples (no gradient)."""
        with fw.no_grad():
            return self.rsample(shape, name)

    def rsample(self, shape=(), name=None):
        """Reparameterised samples ``loc + scale tan(pi (u - 1/2))``."""
        shape = list(self._extend_shape(shape))
        u = fw.rand(shape, dtype=self.dtype)
        return self.loc.expand(shape) + self.scale.expand(shape) * fw.tan(np.pi * (u - 0.5))

    def prob(self, value):
        """The density at ``value``."""
        _need_tensor(value, "Cauchy.prob")
        return self.log_prob(value).exp()

    def log_prob(self, value):
        """The log density at ``value``."""
        _need_tensor(value, "Cauchy.log_prob")
        value = _value_like(value, self.loc)
        loc, scale, value = fw.broadcast_tensors([self.loc, self.scale, value])
        return -fw.square((value - loc) / scale).log1p() - (math.log(math.pi) + scale.log())

    def cdf(self, value):
        """``atan((value - loc) / scale) / pi + 1/2``."""
        _need_tensor(value, "Cauchy.cdf")
        value = _value_like(value, self.loc)
        loc, scale, value = fw.broadcast_tensors([self.loc, self.scale, value])
        return fw.atan((value - loc) / scale) / np.pi + 0.5

    def icdf(self, value):
        """``loc + scale tan(pi (value - 1/2))``."""
        _need_tensor(value, "Cauchy.icdf")
        value = _value_like(value, self.loc)
        return self.loc + self.scale * fw.tan(np.pi * (value - 0.5))

    def entropy(self):
        """``log(4 pi scale)``."""
        return math.log(4 * np.pi) + self.scale.log()

    def kl_divergence(self, other):
        """KL(self || other): ``log(((s1 + s2)^2 + (l1 - l2)^2) / (4 s1 s2))``."""
        if not isinstance(other, Cauchy):
            raise TypeError(f"Cauchy.kl_divergence: 'other' must be a Cauchy, got "
                            f"{type(other).__name__}")
        t1 = ((self.scale + other.scale).pow(2) + (self.loc - other.loc).pow(2)).log()
        return t1 - (4 * self.scale * other.scale).log()


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
        """``loc``."""
        return self.loc

    @property
    def stddev(self):
        """``sqrt(2) scale``."""
        return 2 ** 0.5 * self.scale

    @property
    def variance(self):
        """``2 scale**2``."""
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
        """The log density at ``value``."""
        loc, scale, value = self._validate_value(value)
        return -fw.log(2 * scale) - fw.abs(value - loc) / scale

    def entropy(self):
        """``1 + log(2 scale)``."""
        return 1 + fw.log(2 * self.scale)

    def cdf(self, value):
        """The cumulative distribution function."""
        loc, scale, value = self._validate_value(value)
        return 0.5 - 0.5 * (value - loc).sign() * fw.expm1(-(value - loc).abs() / scale)

    def icdf(self, value):
        """The inverse of `cdf`."""
        loc, scale, value = self._validate_value(value)
        t = value - 0.5
        return loc - scale * t.sign() * fw.log1p(-2 * t.abs())

    def sample(self, shape=()):
        """Samples (no gradient)."""
        with fw.no_grad():
            return self.rsample(shape)

    def rsample(self, shape=()):
        """Reparameterised samples by the inverse CDF of a uniform draw on (-1, 1)."""
        eps = 2.22045e-16 if self.loc.dtype == fw.float64 else 1.19209e-07
        shape = list(self._extend_shape(shape))
        u = fw.uniform(shape, dtype=self.loc.dtype, min=float(np.nextafter(-1, 1)) + eps / 2,
                       max=1.0 - eps / 2)
        return self.loc - self.scale * u.sign() * fw.log1p(-u.abs())

    def kl_divergence(self, other):
        """KL(self || other) for another Laplace."""
        if not isinstance(other, Laplace):
            raise TypeError(f"Laplace.kl_divergence: 'other' must be a Laplace, got "
                            f"{type(other).__name__}")
        t = fw.abs(self.loc - other.loc)
        term1 = (self.scale * fw.exp(-t / self.scale) + t) / other.scale
        return term1 + fw.log(other.scale / self.scale) - 1


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
        from fw.distribution.normal import Uniform

        self.loc, self.scale = _loc_scale("Gumbel", loc, scale)
        fi = np.finfo(np.float32)
        self.base_dist = Uniform(fw.full_like(self.loc, float(fi.tiny)),
                                 fw.full_like(self.loc, float(1 - fi.eps)))
        self.transforms = ()
        super().__init__(self.base_dist, self.transforms)

    @property
    def mean(self):
        """``loc + scale * euler_gamma``."""
        return self.loc + self.scale * np.euler_gamma

    @property
    def variance(self):
        """``(pi scale)^2 / 6``."""
        return self.scale.pow(2) * (math.pi * math.pi) / 6

    @property
    def stddev(self):
        """The standard deviation."""
        return fw.sqrt(self.variance)

    def prob(self, value):
        """The density at ``value``."""
        y = (self.loc - value.astype(self.loc.dtype)) / self.scale.astype(self.loc.dtype)
        return fw.exp(y - fw.exp(y)) / self.scale.astype(y.dtype)

    def log_prob(self, value):
        """The log density at ``value``."""
        y = (self.loc - value.astype(self.loc.dtype)) / self.scale
        return y - fw.exp(y) - fw.log(self.scale)

    def cdf(self, value):
        """``exp(-exp(-(value - loc) / scale))``."""
        return fw.exp(-fw.exp(-(value - self.loc.astype(value.dtype))
                              / self.scale.astype(value.dtype)))

    def entropy(self):
        """``log(scale) + 1 + euler_gamma``."""
        return fw.log(self.scale) + 1 + np.euler_gamma

    def sample(self, shape=()):
        """Samples (no gradient)."""
        with fw.no_grad():
            return self.rsample(shape)

    def rsample(self, shape=()):
        """Reparameterised samples ``loc - scale log(-log(u))``."""
        u = self._base.sample(shape)
        return self.loc - self.scale * fw.log(-fw.log(u))


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
        """``loc`` where ``df > 1``, NaN elsewhere."""
        return fw.where(self.df > 1.0, self.loc, fw.full_like(self.loc, float("nan")))

    @property
    def variance(self):
        """``scale^2 df / (df - 2)`` for ``df > 2``, inf for ``1 < df <= 2``, else NaN."""
        df = self.df.detach()
        var = fw.where(self.df > 2.0, self.scale.pow(2) * df / (df - 2),
                       fw.full_like(df, float("nan")))
        inf = fw.logical_and(self.df <= 2.0, self.df > 1.0)
        return fw.where(inf, fw.full_like(var, float("inf")), var)

    def sample(self, shape=()):
        """Samples (no gradient)."""
        with fw.no_grad():
            return self.rsample(shape)

    def rsample(self, shape=()):
        """Reparameterised samples ``loc + scale z / sqrt(chi2 / df)`` (implicit gamma
        gradients for ``df``)."""
        out = list(self._extend_shape(shape))
        z = fw.standard_normal(out, dtype=self.dtype)
        chi2 = self._chi2.rsample(shape)
        return self.loc + self.scale * z * fw.rsqrt(chi2 / self.df)

    def entropy(self):
        """The entropy."""
        df = self.df
        lbeta = fw.lgamma(0.5 * df) + math.lgamma(0.5) - fw.lgamma(0.5 * (df + 1))
        return (self.scale.log() + 0.5 * (df + 1) * (fw.digamma(0.5 * (df + 1))
                                                     - fw.digamma(0.5 * df))
                + 0.5 * df.log() + lbeta)

    def log_prob(self, value):
        """The log density at ``value``."""
        value = _value_like(value, self.df)
        y = (value - self.loc) / self.scale
        Z = (self.scale.log() + 0.5 * self.df.log() + 0.5 * math.log(math.pi)
             + fw.lgamma(0.5 * self.df) - fw.lgamma(0.5 * (self.df + 1.0)))
        return -0.5 * (self.df + 1.0) * fw.log1p(y ** 2.0 / self.df) - Z

    def prob(self, value):
        """The density at ``value``."""
        return fw.exp(self.log_prob(value))
