"""The normal distribution (Paddle's ``paddle.distribution.Normal``)."""

from __future__ import annotations

import math

import numpy as np

import fw
from fw.core.tensor import Tensor
from fw.distribution.distribution import Distribution, _np_params, _shape_arg, _value_like

__all__ = ["Normal"]


def _is_complex(v):
    return isinstance(v, complex) or (isinstance(v, np.ndarray) and v.dtype.kind == "c") or (
        isinstance(v, Tensor) and v.dtype in (fw.complex64, fw.complex128))


def _complex_params(loc, scale):
    """Paddle's complex Gaussian: a complex ``loc`` (complex64 from Python numbers and
    lists, an array's own precision) and a real ``scale``."""
    if isinstance(loc, (tuple, list)):
        loc = np.array(loc)
        if loc.dtype == np.complex128:
            loc = loc.astype(np.complex64)
    if isinstance(scale, (tuple, list)):
        scale = np.array(scale, dtype=np.float32)
    all_float = isinstance(loc, complex) and isinstance(scale, float)
    if isinstance(loc, complex):
        loc = fw.to_tensor(np.complex64(loc))
    elif isinstance(loc, np.ndarray):
        loc = fw.to_tensor(loc)
    if isinstance(scale, np.ndarray):
        scale = fw.to_tensor(scale)
    elif isinstance(scale, (int, float)) and not isinstance(scale, bool):
        scale = fw.to_tensor(np.float32(scale))
    if not isinstance(loc, Tensor) or not isinstance(scale, Tensor):
        raise TypeError(f"Normal: 'loc' and 'scale' must be numbers, lists, arrays or Tensors, "
                        f"got {type(loc).__name__} and {type(scale).__name__}")
    if _is_complex(scale):
        raise TypeError(f"Normal: 'scale' must be real, got {scale.dtype.name}")
    return loc, scale, all_float


def _two_params(who, a, b, names):
    """Normal/Uniform's conversion: Tensors kept (both must be Tensors); numbers, lists
    and arrays through NumPy, float64 only when an array argument is float64."""
    for v, n in zip((a, b), names):
        if _is_complex(v):
            raise TypeError(f"{who}: '{n}' must be real, got a complex value")
    if isinstance(a, int) and not isinstance(a, bool):
        a = float(a)
    if isinstance(b, int) and not isinstance(b, bool):
        b = float(b)
    all_float = isinstance(a, float) and isinstance(b, float)
    if isinstance(a, Tensor) or isinstance(b, Tensor):
        if not (isinstance(a, Tensor) and isinstance(b, Tensor)):
            raise ValueError(f"{who}: if one of {names} is a Tensor, both must be Tensors")
        return a, b, a.dtype, all_float
    if isinstance(a, (tuple, list)):
        a = np.array(a)
        if a.dtype == np.float64:
            a = a.astype(np.float32)
    if isinstance(b, (tuple, list)):
        b = np.array(b, dtype=np.float32)
    dtype = "float32"
    for v in (a, b):
        if isinstance(v, np.ndarray) and str(v.dtype) in ("float32", "float64"):
            dtype = str(v.dtype)
            break
    ta, tb = _np_params(who, a, b)
    if ta.dtype.name != dtype:
        ta, tb = ta.astype(dtype), tb.astype(dtype)
    return ta, tb, ta.dtype, all_float


class Normal(Distribution):
    r"""The normal (Gaussian) distribution with mean ``loc`` and standard deviation ``scale``:
    :math:`pdf(x) = \frac{1}{\sqrt{2\pi}\sigma} e^{-\frac{(x-\mu)^2}{2\sigma^2}}`.

    Args:
        loc (float|list|numpy.ndarray|Tensor): the mean.
        scale (float|list|numpy.ndarray|Tensor): the standard deviation (> 0).
        name (str, optional): a name for the operations. Default None.

    Numbers, lists and arrays become float32 tensors (float64 when an array is
    float64); Tensors are used as given (both must then be Tensors).

    A complex ``loc`` gives Paddle's complex Gaussian: samples ``loc + scale * z`` with
    ``z`` complex standard normal (real and imaginary parts independent with variance
    1/2), density :math:`\frac{1}{\pi\sigma^2} e^{-|x-\mu|^2/\sigma^2}`, entropy
    :math:`1 + \log(\pi\sigma^2)`; ``scale`` stays real. As in Paddle, `log_prob`,
    `probs` and `kl_divergence` then return complex tensors (zero imaginary part).

    Examples:
        .. code-block:: python

            >>> import fw
            >>> d = fw.distribution.Normal(0.0, 2.0)
            >>> round(float(d.entropy()), 4)
            2.1121
            >>> round(float(d.log_prob(fw.to_tensor(1.0))), 4)
            -1.7371
    """

    def __init__(self, loc, scale, name=None):
        self.name = name if name is not None else "Normal"
        if isinstance(loc, int) and not isinstance(loc, bool):
            loc = float(loc)
        if isinstance(scale, int) and not isinstance(scale, bool):
            scale = float(scale)
        self._complex_gaussian = _is_complex(loc) or (
            isinstance(loc, (tuple, list)) and np.array(loc).dtype.kind == "c")
        if self._complex_gaussian:
            self.loc, self.scale, self.all_arg_is_float = _complex_params(loc, scale)
            dt = self.loc.dtype
        else:
            self.loc, self.scale, dt, self.all_arg_is_float = _two_params(
                "Normal", loc, scale, ("loc", "scale"))
        self.dtype = dt.name
        super().__init__(tuple(np.broadcast_shapes(tuple(self.loc.shape),
                                                   tuple(self.scale.shape))))

    @property
    def mean(self):
        """The mean, ``loc``.

        Returns:
            Tensor: the mean, in the batch shape.

        Examples:
            >>> import fw
            >>> d = fw.distribution.Normal(0.0, 2.0)
            >>> float(d.mean)
            0.0
        """
        return self.loc

    @property
    def variance(self):
        """The variance, ``scale ** 2``.

        Returns:
            Tensor: the variance, in the batch shape.

        Examples:
            >>> import fw
            >>> d = fw.distribution.Normal(0.0, 2.0)
            >>> float(d.variance)
            4.0
        """
        return self.scale.pow(2)

    def sample(self, shape=(), seed=0):
        """Draw samples of shape ``shape + batch_shape`` (no gradient).

        Args:
            shape (Sequence[int], optional): the sample shape. Default: ().
            seed (int, optional): 0 draws from the global generator (`fw.seed`); another
                value from a generator seeded with it. Default: 0.

        Returns:
            Tensor: the samples, in the parameters' dtype.

        Examples:
            >>> import fw
            >>> d = fw.distribution.Normal(0.0, 2.0)
            >>> d.sample([3]).shape
            [3]
        """
        shape = list(_shape_arg(shape, "Normal.sample"))
        out_shape = shape + list(self._batch_shape)
        with fw.no_grad():
            z = self._noise(out_shape, seed)
            out = z * self.scale + self.loc
        if self.all_arg_is_float:
            return out.reshape(shape)
        return out

    def rsample(self, shape=()):
        """Reparameterised samples ``loc + scale * eps`` with ``eps ~ N(0, 1)``: gradients
        flow to `loc` and `scale` (the pathwise estimator).

        Args:
            shape (Sequence[int], optional): the sample shape. Default: ().

        Returns:
            Tensor: samples of shape ``shape + batch_shape``.

        Examples:
            >>> import fw
            >>> loc = fw.to_tensor(0.0, stop_gradient=False)
            >>> d = fw.distribution.Normal(loc, fw.to_tensor(1.0))
            >>> x = d.rsample([4])
            >>> x.sum().backward()
            >>> x.shape, float(loc.grad)          # d(sum x)/d loc = 4
            ([4], 4.0)
        """
        shape = self._extend_shape(shape)
        return self.loc + self._noise(list(shape), 0) * self.scale

    def _real_only(self, what):
        if self._complex_gaussian:
            raise NotImplementedError(f"Normal.{what} is not defined for the complex Gaussian")

    def _real_dtype(self):
        return self.scale.dtype.name if self._complex_gaussian else self.dtype

    def _noise(self, shape, seed):
        """Standard normal noise; complex standard normal (variance 1/2 per part) for the
        complex Gaussian."""
        rd = self._real_dtype()
        if not self._complex_gaussian:
            return fw.gaussian(shape, mean=0.0, std=1.0, seed=seed, dtype=rd)
        s = math.sqrt(0.5)
        re = fw.gaussian(shape, mean=0.0, std=s, seed=seed, dtype=rd)
        im = fw.gaussian(shape, mean=0.0, std=s, seed=seed + 1 if seed else 0, dtype=rd)
        return fw.complex(re, im).astype(self.dtype)

    def entropy(self):
        """The differential entropy, ``0.5 + 0.5 * log(2 pi) + log(scale)``.

        Returns:
            Tensor: the entropy, in the batch shape.

        Examples:
            >>> import fw
            >>> d = fw.distribution.Normal(0.0, 2.0)
            >>> round(float(d.entropy()), 4)
            2.1121
        """
        zero = fw.zeros(list(self._batch_shape), dtype=self._real_dtype())
        if self._complex_gaussian:
            return 1.0 + zero + (math.log(math.pi) + 2.0 * fw.log(self.scale + zero))
        return 0.5 + zero + (0.5 * math.log(2 * math.pi) + fw.log(self.scale + zero))

    def log_prob(self, value):
        """The log density at `value` (cast to the parameters' dtype).

        Args:
            value (Tensor|float): the point(s), broadcast against the batch shape.

        Returns:
            Tensor: ``log p(value)``.

        Examples:
            >>> import fw
            >>> d = fw.distribution.Normal(0.0, 2.0)
            >>> round(float(d.log_prob(fw.to_tensor(1.0))), 4)
            -1.7371
        """
        value = _value_like(value, self.loc)
        var = self.scale * self.scale
        if self._complex_gaussian:
            d = value - self.loc
            return -1.0 * (d.conj() * d) / var - (2.0 * fw.log(self.scale) + math.log(math.pi))
        return (-1.0 * ((value - self.loc) * (value - self.loc)) / (2.0 * var)
                - (fw.log(self.scale) + math.log(math.sqrt(2.0 * math.pi))))

    def probs(self, value):
        """The density at `value`.

        Args:
            value (Tensor|float): the point(s), broadcast against the batch shape.

        Returns:
            Tensor: ``p(value)``.

        Examples:
            >>> import fw
            >>> d = fw.distribution.Normal(0.0, 2.0)
            >>> round(float(d.probs(fw.to_tensor(0.0))), 4)
            0.1995
        """
        value = _value_like(value, self.loc)
        var = self.scale * self.scale
        if self._complex_gaussian:
            d = value - self.loc
            return fw.exp(-1.0 * (d.conj() * d) / var) / (math.pi * var)
        return fw.exp(-1.0 * ((value - self.loc) * (value - self.loc)) / (2.0 * var)) / (
            math.sqrt(2 * math.pi) * self.scale)

    def prob(self, value):
        """The density at `value` (same as `probs`).

        Args:
            value (Tensor|float): the point(s), broadcast against the batch shape.

        Returns:
            Tensor: ``p(value)``.

        Examples:
            >>> import fw
            >>> d = fw.distribution.Normal(0.0, 2.0)
            >>> round(float(d.prob(fw.to_tensor(0.0))), 4)
            0.1995
        """
        return self.probs(value)

    def cdf(self, value):
        """The cumulative distribution function at `value`.

        Args:
            value (Tensor|float): the point(s), broadcast against the batch shape.

        Returns:
            Tensor: ``P(X <= value)``.

        Examples:
            >>> import fw
            >>> d = fw.distribution.Normal(0.0, 2.0)
            >>> float(d.cdf(fw.to_tensor(0.0)))
            0.5
        """
        value = _value_like(value, self.loc)
        self._real_only("cdf")
        return 0.5 * (1 + fw.erf((value - self.loc) / (self.scale * math.sqrt(2))))

    def icdf(self, value):
        """The inverse of `cdf` (the quantile function).

        Args:
            value (Tensor|float): probabilities in (0, 1).

        Returns:
            Tensor: the quantiles.

        Examples:
            >>> import fw
            >>> d = fw.distribution.Normal(0.0, 2.0)
            >>> round(float(d.icdf(fw.to_tensor(0.975))), 4)     # 1.96 * scale
            3.9199
        """
        value = _value_like(value, self.loc)
        self._real_only("icdf")
        return self.loc + self.scale * fw.erfinv(2 * value - 1) * math.sqrt(2)

    def kl_divergence(self, other):
        """KL(self || other) for another Normal, in the broadcast batch shape.

        Args:
            other (Normal): the second distribution.

        Returns:
            Tensor: the divergence.

        Examples:
            >>> import fw
            >>> d = fw.distribution.Normal(0.0, 2.0)
            >>> round(float(d.kl_divergence(fw.distribution.Normal(1.0, 2.0))), 4)
            0.125
        """
        if not isinstance(other, Normal):
            raise TypeError(f"Normal.kl_divergence: 'other' must be a Normal, got "
                            f"{type(other).__name__}")
        if self._complex_gaussian != other._complex_gaussian:
            raise ValueError("Normal.kl_divergence: both distributions must be real or both "
                             "complex Gaussians")
        var_ratio = (self.scale / other.scale)
        var_ratio = var_ratio * var_ratio
        t1 = (self.loc - other.loc) / other.scale
        if self._complex_gaussian:
            return var_ratio + t1.conj() * t1 - 1.0 - fw.log(var_ratio)
        t1 = t1 * t1
        return 0.5 * (var_ratio + t1 - 1.0 - fw.log(var_ratio))
