"""MultivariateNormal, parameterised by a covariance, a precision or a Cholesky factor."""

from __future__ import annotations

import math

import numpy as np

import fw
from fw.core.tensor import Tensor
from fw.distribution.distribution import Distribution, _shape_arg

__all__ = ["MultivariateNormal"]


def _t(m):
    perm = list(range(m.dim()))
    perm[-1], perm[-2] = perm[-2], perm[-1]
    return m.transpose(perm)


def _precision_to_scale_tril(P):
    # the Cholesky factor of P^{-1} without inverting P: flip, factor, flip, transpose,
    # then one triangular solve
    Lf = fw.linalg.cholesky(fw.flip(P, [-2, -1]))
    L_inv = _t(fw.flip(Lf, [-2, -1]))
    eye = fw.eye(P.shape[-1], dtype=P.dtype)
    return fw.linalg.triangular_solve(L_inv, eye.expand(list(L_inv.shape)), upper=False)


def _mahalanobis(L, x):
    """``|L^{-1} x|^2`` over the last axis, broadcasting L's batch against x's."""
    batch = np.broadcast_shapes(tuple(L.shape[:-2]), tuple(x.shape[:-1]))
    n = x.shape[-1]
    Lb = L.expand(list(batch) + [n, n])
    xb = x.expand(list(batch) + [n]).unsqueeze(-1)
    return fw.linalg.triangular_solve(Lb, xb, upper=False).squeeze(-1).pow(2).sum(-1)


class MultivariateNormal(Distribution):
    r"""The multivariate normal distribution with mean ``loc`` and exactly one of
    ``covariance_matrix``, ``precision_matrix`` or ``scale_tril`` (a lower-triangular
    factor with positive diagonal, ``cov = L L^T``).

    Args:
        loc (float|Tensor): the mean (the last axis is the event).
        covariance_matrix (Tensor, optional): positive-definite covariance.
        precision_matrix (Tensor, optional): positive-definite inverse covariance.
        scale_tril (Tensor, optional): the Cholesky factor of the covariance.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> cov = fw.to_tensor([[2.0, 0.0], [0.0, 2.0]])
            >>> d = fw.distribution.MultivariateNormal(fw.to_tensor([0.0, 0.0]),
            ...                                        covariance_matrix=cov)
            >>> round(float(d.entropy()), 4)
            3.531
    """

    def __init__(self, loc, covariance_matrix=None, precision_matrix=None, scale_tril=None):
        self.dtype = fw.get_default_dtype()
        if isinstance(loc, (float, int)) and not isinstance(loc, bool):
            loc = fw.to_tensor([float(loc)], dtype=self.dtype)
        elif isinstance(loc, Tensor):
            self.dtype = loc.dtype
        else:
            raise TypeError(f"MultivariateNormal: 'loc' must be a float or a Tensor, got "
                            f"{type(loc).__name__}")
        if loc.dim() < 1:
            loc = loc.reshape([1])
        given = [(n, m) for n, m in (("covariance_matrix", covariance_matrix),
                                     ("precision_matrix", precision_matrix),
                                     ("scale_tril", scale_tril)) if m is not None]
        if len(given) != 1:
            raise ValueError("MultivariateNormal: exactly one of covariance_matrix, "
                             "precision_matrix or scale_tril must be given")
        name, m = given[0]
        if not isinstance(m, Tensor) or m.dim() < 2:
            raise ValueError(f"MultivariateNormal: '{name}' must be an at least 2-D Tensor, "
                             f"got {getattr(m, 'shape', type(m).__name__)}")
        n = loc.shape[-1]
        if m.shape[-1] != m.shape[-2] or m.shape[-1] != n:
            raise ValueError(f"MultivariateNormal: '{name}' of shape {list(m.shape)} does not "
                             f"match 'loc' of shape {list(loc.shape)} (needs [..., {n}, {n}])")
        m = m.astype(self.dtype)
        batch = tuple(np.broadcast_shapes(tuple(m.shape[:-2]), tuple(loc.shape[:-1])))
        self.covariance_matrix = self.precision_matrix = self.scale_tril = None
        full = m.expand(list(batch) + [n, n])
        setattr(self, name, full)
        self.loc = loc.expand(list(batch) + [n])
        if name == "scale_tril":
            self._unbroadcasted_scale_tril = m
        elif name == "covariance_matrix":
            self._unbroadcasted_scale_tril = fw.linalg.cholesky(m)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(m)
        super().__init__(batch, (n,))

    @property
    def mean(self):
        """``loc``.

        Returns:
            Tensor: the mean, of the batch shape (the event shape added for a multivariate
                distribution).

        Examples:
            >>> import fw
            >>> cov = fw.to_tensor([[1.0, 0.5], [0.5, 1.0]])
            >>> d = fw.distribution.MultivariateNormal(fw.zeros([2]), covariance_matrix=cov)
            >>> [round(v, 4) for v in d.mean.tolist()]
            [0.0, 0.0]
        """
        return self.loc

    @property
    def variance(self):
        """The diagonal of the covariance.

        Returns:
            Tensor: the variance, of the batch shape (the event shape added for a
                multivariate distribution).

        Examples:
            >>> import fw
            >>> cov = fw.to_tensor([[1.0, 0.5], [0.5, 1.0]])
            >>> d = fw.distribution.MultivariateNormal(fw.zeros([2]), covariance_matrix=cov)
            >>> [round(v, 4) for v in d.variance.tolist()]
            [1.0, 1.0]
        """
        return fw.square(self._unbroadcasted_scale_tril).sum(-1).expand(
            list(self._batch_shape + self._event_shape))

    def sample(self, shape=()):
        """Samples (no gradient).

        Args:
            shape (list|tuple, optional): the sample shape, put before the batch and event
                shapes. Default: ().

        Returns:
            Tensor: samples of shape ``shape + batch_shape + event_shape``.

        Examples:
            >>> import fw
            >>> cov = fw.to_tensor([[1.0, 0.5], [0.5, 1.0]])
            >>> d = fw.distribution.MultivariateNormal(fw.zeros([2]), covariance_matrix=cov)
            >>> _ = fw.seed(0)
            >>> d.sample([4]).shape
            [4, 2]
        """
        with fw.no_grad():
            return self.rsample(shape)

    def rsample(self, shape=()):
        """Reparameterised samples ``loc + L eps``.

        Args:
            shape (list|tuple, optional): the sample shape, put before the batch and event
                shapes. Default: ().

        Returns:
            Tensor: samples of shape ``shape + batch_shape + event_shape``.

        Examples:
            >>> import fw
            >>> cov = fw.to_tensor([[1.0, 0.5], [0.5, 1.0]])
            >>> d = fw.distribution.MultivariateNormal(fw.zeros([2]), covariance_matrix=cov)
            >>> _ = fw.seed(0)
            >>> d.rsample([4]).shape
            [4, 2]
        """
        out = list(self._extend_shape(_shape_arg(shape, "MultivariateNormal.rsample")))
        eps = fw.standard_normal(out, dtype=self.dtype)
        return self.loc + fw.matmul(self._unbroadcasted_scale_tril, eps.unsqueeze(-1)).squeeze(
            -1)

    def _half_log_det(self):
        return fw.diagonal(self._unbroadcasted_scale_tril, axis1=-2, axis2=-1).log().sum(-1)

    def log_prob(self, value):
        """The log density at ``value``.

        Args:
            value (Tensor): the point(s) to evaluate; the last axis holds the event, the
                others broadcast against the batch.

        Returns:
            Tensor: the log density (log probability mass for a discrete distribution), of
                the broadcast batch shape.

        Examples:
            >>> import fw
            >>> cov = fw.to_tensor([[1.0, 0.5], [0.5, 1.0]])
            >>> d = fw.distribution.MultivariateNormal(fw.zeros([2]), covariance_matrix=cov)
            >>> round(float(d.log_prob(fw.to_tensor([0.5, -0.5]))), 4)
            -2.194
        """
        if not isinstance(value, Tensor):
            value = fw.to_tensor(np.asarray(value))
        value = value.astype(self.dtype)
        M = _mahalanobis(self._unbroadcasted_scale_tril, value - self.loc)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + M) - self._half_log_det()

    def prob(self, value):
        """The density at ``value``.

        Args:
            value (Tensor): the point(s) to evaluate; the last axis holds the event, the
                others broadcast against the batch.

        Returns:
            Tensor: the density (probability mass for a discrete distribution), of the
                broadcast batch shape.

        Examples:
            >>> import fw
            >>> cov = fw.to_tensor([[1.0, 0.5], [0.5, 1.0]])
            >>> d = fw.distribution.MultivariateNormal(fw.zeros([2]), covariance_matrix=cov)
            >>> round(float(d.prob(fw.to_tensor([0.5, -0.5]))), 4)
            0.1115
        """
        return fw.exp(self.log_prob(value))

    def entropy(self):
        """The entropy, in the batch shape.

        Returns:
            Tensor: the entropy (in nats), of the batch shape.

        Examples:
            >>> import fw
            >>> cov = fw.to_tensor([[1.0, 0.5], [0.5, 1.0]])
            >>> d = fw.distribution.MultivariateNormal(fw.zeros([2]), covariance_matrix=cov)
            >>> round(float(d.entropy()), 4)
            2.694
        """
        H = 0.5 * self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + self._half_log_det()
        return H if len(self._batch_shape) == 0 else H.expand(list(self._batch_shape))

    def kl_divergence(self, other):
        """KL(self || other) for another MultivariateNormal of the same event shape.

        Args:
            other (MultivariateNormal): the second distribution, of the same family.

        Returns:
            Tensor: the divergence, of the broadcast batch shape.

        Examples:
            >>> import fw
            >>> cov = fw.to_tensor([[1.0, 0.5], [0.5, 1.0]])
            >>> d = fw.distribution.MultivariateNormal(fw.zeros([2]), covariance_matrix=cov)
            >>> other = fw.distribution.MultivariateNormal(
            ...     fw.ones([2]), covariance_matrix=fw.eye(2))
            >>> round(float(d.kl_divergence(other)), 4)
            1.1438
            >>> round(float(d.kl_divergence(d)), 4)
            0.0
        """
        if not isinstance(other, MultivariateNormal):
            raise TypeError(f"MultivariateNormal.kl_divergence: 'other' must be a "
                            f"MultivariateNormal, got {type(other).__name__}")
        if self._event_shape != other._event_shape:
            raise ValueError(f"MultivariateNormal.kl_divergence: event shapes "
                             f"{list(self._event_shape)} and {list(other._event_shape)} differ")
        L1, L2 = self._unbroadcasted_scale_tril, other._unbroadcasted_scale_tril
        c1 = fw.matmul(L1, _t(L1))
        c2 = fw.matmul(L2, _t(L2))
        tr = fw.diagonal(fw.linalg.solve(c2, c1), axis1=-2, axis2=-1).sum(-1)
        expectation = tr + _mahalanobis(L2, self.loc - other.loc)
        return other._half_log_det() - self._half_log_det() + 0.5 * (
            expectation - self._event_shape[0])
