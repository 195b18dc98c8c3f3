"""`TransformedDistribution`: a base distribution pushed through a chain of transforms
(the change-of-variables formula for `log_prob`)."""

from __future__ import annotations

from collections.abc import Sequence

from fw.distribution.distribution import Distribution, _sum_rightmost
from fw.distribution.independent import Independent

__all__ = ["TransformedDistribution"]


class TransformedDistribution(Distribution):
    r"""The distribution of ``y = f_n(...f_1(x))`` for ``x ~ base``:
    :math:`\log p(y) = \log p_x(f^{-1}(y)) - \sum_i \log|\det J_{f_i}|`.

    Args:
        base (Distribution): the base distribution.
        transforms (Sequence[Transform]): the transforms, applied first to last.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> from fw.distribution import Normal, TransformedDistribution, ExpTransform
            >>> d = TransformedDistribution(Normal(0.0, 1.0), [ExpTransform()])
            >>> round(float(d.log_prob(fw.to_tensor(1.0))), 4)
            -0.9189
    """

    def __init__(self, base, transforms):
        from fw.distribution.transform import ChainTransform, Transform

        if not isinstance(base, Distribution):
            raise TypeError(f"TransformedDistribution: 'base' must be a Distribution, got "
                            f"{type(base).__name__}")
        if not isinstance(transforms, Sequence) or not all(isinstance(t, Transform)
                                                           for t in transforms):
            raise TypeError("TransformedDistribution: 'transforms' must be a sequence of "
                            "Transform")
        self._base = base
        self._transforms = transforms
        if not transforms:
            super().__init__(base.batch_shape, base.event_shape)
            return
        chain = ChainTransform(transforms)
        shape = tuple(base.batch_shape) + tuple(base.event_shape)
        if len(shape) < chain._domain.event_rank:
            raise ValueError(f"TransformedDistribution: 'base' needs at least "
                             f"{chain._domain.event_rank} dimensions, got {len(shape)}")
        if chain._domain.event_rank > len(base.event_shape):
            base = Independent(base, chain._domain.event_rank - len(base.event_shape))
        out = tuple(chain.forward_shape(tuple(base.batch_shape) + tuple(base.event_shape)))
        rank = chain._codomain.event_rank + max(len(base.event_shape)
                                                - chain._domain.event_rank, 0)
        super().__init__(out[:len(out) - rank], out[len(out) - rank:])

    def sample(self, shape=()):
        """Samples of the base pushed through the transforms (no gradient).

        Args:
            shape (list|tuple, optional): the sample shape. Default: ().

        Returns:
            Tensor: samples of shape ``shape + batch_shape + event_shape``.

        Examples:
            >>> import fw
            >>> D = fw.distribution
            >>> _ = fw.seed(0)
            >>> d = D.TransformedDistribution(D.Normal(0.0, 1.0), [D.ExpTransform()])
            >>> y = d.sample([5])
            >>> y.shape, bool((y > 0).all())
            ([5], True)
        """
        x = self._base.sample(shape)
        for t in self._transforms:
            x = t.forward(x)
        return x

    def rsample(self, shape=()):
        """Reparameterised samples (the base's `rsample` through the transforms):
        gradients flow back to the base's parameters.

        Args:
            shape (list|tuple, optional): the sample shape. Default: ().

        Returns:
            Tensor: samples of shape ``shape + batch_shape + event_shape``.

        Examples:
            >>> import fw
            >>> D = fw.distribution
            >>> _ = fw.seed(0)
            >>> loc = fw.to_tensor(0.0, stop_gradient=False)
            >>> d = D.TransformedDistribution(D.Normal(loc, fw.to_tensor(1.0)), [D.ExpTransform()])
            >>> y = d.rsample([3])
            >>> y.sum().backward()
            >>> bool(fw.allclose(loc.grad, y.sum()))
            True
        """
        x = self._base.rsample(shape)
        for t in self._transforms:
            x = t.forward(x)
        return x

    def log_prob(self, value):
        """The log density at ``value`` by the change of variables.

        Args:
            value (Tensor): points in the support of the transformed distribution.

        Returns:
            Tensor: the log density, of the broadcast batch shape.

        Examples:
            >>> import fw
            >>> D = fw.distribution
            >>> d = D.TransformedDistribution(D.Normal(0.0, 1.0), [D.ExpTransform()])
            >>> ln = D.LogNormal(fw.to_tensor(0.0), fw.to_tensor(1.0))
            >>> x = fw.to_tensor([0.5, 2.0])
            >>> [round(v, 4) for v in d.log_prob(x).tolist()]
            [-0.466, -1.8523]
            >>> bool(fw.allclose(d.log_prob(x), ln.log_prob(x)))
            True
        """
        log_prob = 0.0
        y = value
        rank = len(self.event_shape)
        for t in reversed(self._transforms):
            x = t.inverse(y)
            rank += t._domain.event_rank - t._codomain.event_rank
            log_prob = log_prob - _sum_rightmost(t.forward_log_det_jacobian(x),
                                                 rank - t._domain.event_rank)
            y = x
        return log_prob + _sum_rightmost(self._base.log_prob(y),
                                         rank - len(self._base.event_shape))
