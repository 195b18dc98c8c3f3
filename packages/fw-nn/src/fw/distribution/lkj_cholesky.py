"""LKJCholesky: the LKJ distribution over Cholesky factors of correlation matrices
(Lewandowski, Kurowicka & Joe, 2009), sampled by the onion or the C-vine method."""

from __future__ import annotations

import math

import numpy as np

import fw
from fw.core.tensor import Tensor
from fw.distribution.beta import Beta
from fw.distribution.distribution import Distribution, _np_params, _shape_arg

__all__ = ["LKJCholesky"]


def _mvlgamma(a, p):
    j = fw.arange(1, p + 1, dtype=a.dtype)
    return p * (p - 1) / 4 * math.log(math.pi) + fw.lgamma(a.unsqueeze(-1) + (1 - j) / 2).sum(-1)


class LKJCholesky(Distribution):
    r"""The LKJ distribution of the lower Cholesky factor ``L`` of a ``dim x dim``
    correlation matrix, with density proportional to
    :math:`\prod_{i\ge2} L_{ii}^{\,dim - i + 2(\eta - 1)}`.

    Args:
        dim (int, optional): the matrix size (>= 2). Default 2.
        concentration (float|Tensor, optional): :math:`\eta > 0`. Default 1.0.
        sample_method (str, optional): 'onion' or 'cvine'. Default 'onion'.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> d = fw.distribution.LKJCholesky(3, 2.0)
            >>> L = d.sample()
            >>> L.shape
            [3, 3]
            >>> bool(((L @ L.T).diagonal() - 1).abs().max() < 1e-5)
            True
    """

    def __init__(self, dim=2, concentration=1.0, sample_method="onion"):
        if isinstance(concentration, Tensor):
            self.concentration = concentration
            self.dtype = concentration.dtype
        else:
            (self.concentration,) = _np_params("LKJCholesky", concentration)
            self.dtype = fw.get_default_dtype()
            self.concentration = self.concentration.astype(self.dtype)
        if isinstance(dim, bool) or not isinstance(dim, int):
            raise TypeError(f"LKJCholesky: 'dim' must be an int, got {type(dim).__name__}")
        if dim < 2:
            raise ValueError(f"LKJCholesky: expected dim >= 2, got dim={dim}")
        self.dim = dim
        if not bool(fw.all(self.concentration > 0)):
            raise ValueError("LKJCholesky: every element of 'concentration' must be positive")
        self.sample_method = sample_method
        marginal = self.concentration + 0.5 * (dim - 2)
        offset = fw.arange(dim - 1, dtype=self.concentration.dtype)
        if sample_method == "onion":
            offset = fw.concat([fw.zeros([1], dtype=offset.dtype), offset])
            self._beta = Beta(offset + 0.5, marginal.unsqueeze(-1) - 0.5 * offset)
        elif sample_method == "cvine":
            # the strictly lower entries (i, j), row by row, have concentration marginal - j/2
            cols = np.concatenate([np.arange(i) for i in range(1, dim)]).astype(np.float64)
            off = fw.to_tensor(0.5 * cols, dtype=self.concentration.dtype)
            conc = marginal.unsqueeze(-1) - off
            self._beta = Beta(conc, conc)
        else:
            raise ValueError(f"LKJCholesky: 'sample_method' must be 'onion' or 'cvine', got "
                             f"{sample_method!r}")
        super().__init__(tuple(self.concentration.shape), (dim, dim))

    def _onion(self, sample_shape):
        y = self._beta.sample(sample_shape).unsqueeze(-1)
        u = fw.randn(list(self._extend_shape(sample_shape)), dtype=y.dtype).tril(-1)
        norm = u.norm(axis=-1, keepdim=True)
        # row 0 is all zeros (its norm is 0): keep it zero instead of 0/0
        u = u / fw.where(norm > 0, norm, fw.ones_like(norm))
        w = fw.sqrt(y) * u
        tiny = float(fw.finfo(w.dtype).tiny)
        diag = fw.clip(1 - fw.sum(w ** 2, axis=-1), min=tiny).sqrt()
        return w + fw.diag_embed(diag)

    def _cvine(self, sample_shape):
        d = self.dim
        r = 2 * self._beta.sample(sample_shape) - 1  # [..., d(d-1)/2]
        m = d * (d - 1) // 2
        idx = np.full((d, d), m, dtype=np.int64)
        rows, cols = np.tril_indices(d, -1)
        idx[rows, cols] = np.arange(m)
        padded = fw.concat([r, fw.zeros(list(r.shape[:-1]) + [1], dtype=r.dtype)], -1)
        r = fw.gather(padded, fw.to_tensor(idx.reshape(-1)), axis=-1).reshape(
            list(r.shape[:-1]) + [d, d])
        tiny = float(fw.finfo(r.dtype).tiny)
        r = fw.clip(r, min=-1 + tiny, max=1 - tiny)
        z1m = fw.cumprod(fw.sqrt(1 - r ** 2), dim=-1)
        shifted = fw.concat([fw.ones(list(z1m.shape[:-1]) + [1], dtype=r.dtype),
                             z1m[..., :-1]], -1)
        r = r + fw.eye(d, dtype=r.dtype)
        return r * shifted

    def sample(self, sample_shape=()):
        """Draw Cholesky factors of correlation matrices (no gradient), by the
        onion or the C-vine method chosen at construction.

        Args:
            sample_shape (list|tuple, optional): the sample shape. Default: ().

        Returns:
            Tensor: lower-triangular factors, ``sample_shape + batch_shape + [dim, dim]``;
            each ``L @ L.T`` has a unit diagonal.

        Examples:
            >>> import fw
            >>> _ = fw.seed(0)
            >>> d = fw.distribution.LKJCholesky(3, 2.0)
            >>> L = d.sample([4])
            >>> L.shape
            [4, 3, 3]
            >>> bool((fw.triu(L, 1) == 0).all())
            True
            >>> bool(((L @ L.mT).diagonal(axis1=-2, axis2=-1) - 1).abs().max() < 1e-5)
            True
        """
        sample_shape = tuple(_shape_arg(sample_shape, "LKJCholesky.sample"))
        with fw.no_grad():
            res = self._onion(sample_shape) if self.sample_method == "onion" else \
                self._cvine(sample_shape)
        return res.reshape(list(sample_shape) + list(self.concentration.shape)
                           + [self.dim, self.dim])

    def log_prob(self, value):
        """The log density of the Cholesky factor ``value``.

        Args:
            value (Tensor): lower Cholesky factors of correlation matrices,
                ``[..., dim, dim]``.

        Returns:
            Tensor: the log density, of the broadcast batch shape.

        Examples:
            >>> import fw
            >>> d = fw.distribution.LKJCholesky(2, 1.0)  # uniform correlation on (-1, 1)
            >>> round(float(d.log_prob(fw.eye(2))), 4)   # log(1/2)
            -0.6931
            >>> round(float(fw.distribution.LKJCholesky(3, 2.0).log_prob(fw.eye(3))), 4)
            -0.6155
        """
        diag = fw.diagonal(value, offset=0, axis1=-1, axis2=-2)[..., 1:]
        order = fw.arange(2, self.dim + 1, dtype=self.concentration.dtype)
        order = 2 * (self.concentration - 1).unsqueeze(-1) + self.dim - order
        unnorm = fw.sum(order * fw.log(diag), axis=-1)
        dm1 = self.dim - 1
        alpha = self.concentration + 0.5 * dm1
        norm = 0.5 * dm1 * math.log(math.pi) + _mvlgamma(alpha - 0.5, dm1) - fw.lgamma(
            alpha) * dm1
        return unnorm - norm
