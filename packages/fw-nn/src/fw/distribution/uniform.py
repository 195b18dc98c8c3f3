"""The uniform distribution (Paddle's ``paddle.distribution.Uniform``)."""

from __future__ import annotations

import numpy as np

import fw
from fw.distribution.distribution import Distribution, _shape_arg, _value_like
from fw.distribution.normal import _two_params

__all__ = ["Uniform"]


class Uniform(Distribution):
    r"""The uniform distribution on ``[low, high)``.

    Args:
        low (float|list|numpy.ndarray|Tensor): the lower bound.
        high (float|list|numpy.ndarray|Tensor): the upper bound.
        name (str, optional): a name for the operations. Default None.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> u = fw.distribution.Uniform(0.0, 4.0)
            >>> round(float(u.entropy()), 4)
            1.3863
    """

    def __init__(self, low, high, name=None):
        self.name = name if name is not None else "Uniform"
        self.low, self.high, dt, self.all_arg_is_float = _two_params(
            "Uniform", low, high, ("low", "high"))
        self.dtype = dt.name
        super().__init__(tuple(np.broadcast_shapes(tuple(self.low.shape),
                                                   tuple(self.high.shape))))

    @property
    def mean(self):
        """The mean, ``(low + high) / 2``.

        Returns:
            Tensor: the mean, in the batch shape.

        Examples:
            >>> import fw
            >>> d = fw.distribution.Uniform(0.0, 4.0)
            >>> float(d.mean)
            2.0
        """
        return (self.low + self.high) / 2

    @property
    def variance(self):
        """The variance, ``(high - low)**2 / 12``.

        Returns:
            Tensor: the variance.

        Examples:
            >>> import fw
            >>> d = fw.distribution.Uniform(0.0, 4.0)
            >>> round(float(d.variance), 4)
            1.3333
        """
        return (self.high - self.low).pow(2) / 12

    def sample(self, shape=(), seed=0):
        """Draw samples of shape ``shape + batch_shape`` (no gradient).

        Args:
            shape (Sequence[int], optional): the sample shape. Default: ().
            seed (int, optional): 0 draws from the global generator (`fw.seed`); another
                value from a generator seeded with it. Default: 0.

        Returns:
            Tensor: the samples, in [low, high).

        Examples:
            >>> import fw
            >>> d = fw.distribution.Uniform(0.0, 4.0)
            >>> s = d.sample([3])
            >>> s.shape, bool(((s >= 0) & (s < 4)).all())
            ([3], True)
        """
        shape = list(_shape_arg(shape, "Uniform.sample"))
        out_shape = shape + list(self._batch_shape)
        with fw.no_grad():
            u = fw.uniform(out_shape, dtype=self.dtype, min=0.0, max=1.0, seed=seed)
            out = u * (self.high - self.low) + self.low
        if self.all_arg_is_float:
            return out.reshape(shape)
        return out

    def rsample(self, shape=()):
        """Reparameterised samples ``low + u * (high - low)``, ``u ~ U(0, 1)``:
        gradients flow to `low` and `high`.

        Args:
            shape (Sequence[int], optional): the sample shape. Default: ().

        Returns:
            Tensor: samples of shape ``shape + batch_shape``.

        Examples:
            >>> import fw
            >>> d = fw.distribution.Uniform(0.0, 4.0)
            >>> d.rsample([2, 3]).shape
            [2, 3]
        """
        shape = self._extend_shape(shape)
        u = fw.uniform(list(shape), dtype=self.dtype, min=0.0, max=1.0)
        return self.low + u * (self.high - self.low)

    def log_prob(self, value):
        """The log density: ``-log(high - low)`` inside the support, ``-inf`` outside.

        Args:
            value (Tensor|float): the point(s), broadcast against the batch shape.

        Returns:
            Tensor: ``log p(value)``.

        Examples:
            >>> import fw
            >>> d = fw.distribution.Uniform(0.0, 4.0)
            >>> round(float(d.log_prob(fw.to_tensor(1.0))), 4)
            -1.3863
        """
        value = _value_like(value, self.low)
        inside = ((self.low < value).astype(value.dtype) * (value < self.high).astype(
            value.dtype))
        return fw.log(inside) - fw.log(self.high - self.low)

    def probs(self, value):
        """The density: ``1 / (high - low)`` inside the support, 0 outside.

        Args:
            value (Tensor|float): the point(s), broadcast against the batch shape.

        Returns:
            Tensor: ``p(value)``.

        Examples:
            >>> import fw
            >>> d = fw.distribution.Uniform(0.0, 4.0)
            >>> d.probs(fw.to_tensor([1.0, 5.0])).tolist()
            [0.25, 0.0]
        """
        value = _value_like(value, self.low)
        inside = ((self.low < value).astype(value.dtype) * (value < self.high).astype(
            value.dtype))
        return inside / (self.high - self.low)

    def prob(self, value):
        """The density at `value` (same as `probs`).

        Args:
            value (Tensor|float): the point(s), broadcast against the batch shape.

        Returns:
            Tensor: ``p(value)``.

        Examples:
            >>> import fw
            >>> d = fw.distribution.Uniform(0.0, 4.0)
            >>> float(d.prob(fw.to_tensor(1.0)))
            0.25
        """
        return self.probs(value)

    def entropy(self):
        """The entropy, ``log(high - low)``.

        Returns:
            Tensor: the entropy, in the batch shape.

        Examples:
            >>> import fw
            >>> d = fw.distribution.Uniform(0.0, 4.0)
            >>> round(float(d.entropy()), 4)
            1.3863
        """
        return fw.log(self.high - self.low)

    def kl_divergence(self, other):
        """KL(self || other): ``log((b2 - a2)/(b1 - a1))`` when the support of self lies in
        other's, else ``inf``."""
        if not isinstance(other, Uniform):
            raise TypeError(f"Uniform.kl_divergence: 'other' must be a Uniform, got "
                            f"{type(other).__name__}")
        kl = fw.log((other.high - other.low) / (self.high - self.low))
        inside = fw.logical_and(other.low <= self.low, self.high <= other.high)
        return fw.where(inside, kl, fw.full_like(kl, float("inf")))
