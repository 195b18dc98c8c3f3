"""`Independent`: reinterpret batch dimensions of a distribution as event dimensions."""

from __future__ import annotations

from fw.distribution.distribution import Distribution, _sum_rightmost

__all__ = ["Independent"]


class Independent(Distribution):
    """Make the ``reinterpreted_batch_rank`` rightmost batch dimensions of ``base`` part of
    its event: `log_prob` and `entropy` sum over them.

    Args:
        base (Distribution): the base distribution.
        reinterpreted_batch_rank (int): how many batch dimensions to move
            (``0 < reinterpreted_batch_rank <= len(base.batch_shape)``).

    Examples:
        .. code-block:: python

            >>> import fw
            >>> from fw.distribution import Beta, Independent
            >>> d = Independent(Beta(fw.to_tensor([0.5, 0.5]), fw.to_tensor([0.5, 0.5])), 1)
            >>> d.batch_shape, d.event_shape
            ((), (2,))
    """

    def __init__(self, base, reinterpreted_batch_rank):
        if not isinstance(base, Distribution):
            raise TypeError(f"Independent: 'base' must be a Distribution, got "
                            f"{type(base).__name__}")
        if not (isinstance(reinterpreted_batch_rank, int)
                and 0 < reinterpreted_batch_rank <= len(base.batch_shape)):
            raise ValueError(f"Independent: expected 0 < reinterpreted_batch_rank <= "
                             f"{len(base.batch_shape)} (the base's batch rank), got "
                             f"{reinterpreted_batch_rank!r}")
        self._base = base
        self._reinterpreted_batch_rank = reinterpreted_batch_rank
        shape = tuple(base.batch_shape) + tuple(base.event_shape)
        cut = len(base.batch_shape) - reinterpreted_batch_rank
        super().__init__(batch_shape=shape[:cut], event_shape=shape[cut:])

    @property
    def mean(self):
        """The base's mean.

        Returns:
            Tensor: the mean, of the batch shape (the event shape added for a multivariate
                distribution).

        Examples:
            >>> import fw
            >>> base = fw.distribution.Normal(fw.zeros([3]), fw.ones([3]))
            >>> d = fw.distribution.Independent(base, 1)
            >>> [round(v, 4) for v in d.mean.tolist()]
            [0.0, 0.0, 0.0]
        """
        return self._base.mean

    @property
    def variance(self):
        """The base's variance.

        Returns:
            Tensor: the variance, of the batch shape (the event shape added for a
                multivariate distribution).

        Examples:
            >>> import fw
            >>> base = fw.distribution.Normal(fw.zeros([3]), fw.ones([3]))
            >>> d = fw.distribution.Independent(base, 1)
            >>> [round(v, 4) for v in d.variance.tolist()]
            [1.0, 1.0, 1.0]
        """
        return self._base.variance

    def sample(self, shape=()):
        """The base's samples.

        Args:
            shape (list|tuple, optional): the sample shape, put before the batch and event
                shapes. Default: ().

        Returns:
            Tensor: samples of shape ``shape + batch_shape + event_shape``.

        Examples:
            >>> import fw
            >>> base = fw.distribution.Normal(fw.zeros([3]), fw.ones([3]))
            >>> d = fw.distribution.Independent(base, 1)
            >>> _ = fw.seed(0)
            >>> d.sample([4]).shape
            [4, 3]
        """
        return self._base.sample(shape)

    def rsample(self, shape=()):
        """The base's reparameterised samples.

        Args:
            shape (list|tuple, optional): the sample shape, put before the batch and event
                shapes. Default: ().

        Returns:
            Tensor: samples of shape ``shape + batch_shape + event_shape``.

        Examples:
            >>> import fw
            >>> base = fw.distribution.Normal(fw.zeros([3]), fw.ones([3]))
            >>> d = fw.distribution.Independent(base, 1)
            >>> _ = fw.seed(0)
            >>> d.rsample([4]).shape
            [4, 3]
        """
        return self._base.rsample(shape)

    def log_prob(self, value):
        """The base's log density summed over the reinterpreted dimensions.

        Args:
            value (Tensor): the point(s) to evaluate; the last axis holds the event, the
                others broadcast against the batch.

        Returns:
            Tensor: the log density (log probability mass for a discrete distribution), of
                the broadcast batch shape.

        Examples:
            >>> import fw
            >>> base = fw.distribution.Normal(fw.zeros([3]), fw.ones([3]))
            >>> d = fw.distribution.Independent(base, 1)
            >>> round(float(d.log_prob(fw.to_tensor([0.0, 1.0, -1.0]))), 4)
            -3.7568
        """
        return _sum_rightmost(self._base.log_prob(value), self._reinterpreted_batch_rank)

    def prob(self, value):
        """``exp(log_prob(value))``.

        Args:
            value (Tensor): the point(s) to evaluate; the last axis holds the event, the
                others broadcast against the batch.

        Returns:
            Tensor: the density (probability mass for a discrete distribution), of the
                broadcast batch shape.

        Examples:
            >>> import fw
            >>> base = fw.distribution.Normal(fw.zeros([3]), fw.ones([3]))
            >>> d = fw.distribution.Independent(base, 1)
            >>> round(float(d.prob(fw.to_tensor([0.0, 1.0, -1.0]))), 4)
            0.0234
        """
        return self.log_prob(value).exp()

    def entropy(self):
        """The base's entropy summed over the reinterpreted dimensions.

        Returns:
            Tensor: the entropy (in nats), of the batch shape.

        Examples:
            >>> import fw
            >>> base = fw.distribution.Normal(fw.zeros([3]), fw.ones([3]))
            >>> d = fw.distribution.Independent(base, 1)
            >>> round(float(d.entropy()), 4)
            4.2568
        """
        return _sum_rightmost(self._base.entropy(), self._reinterpreted_batch_rank)
