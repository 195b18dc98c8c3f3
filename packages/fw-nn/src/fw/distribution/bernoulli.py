"""The Bernoulli distribution (Paddle's ``paddle.distribution.Bernoulli``)."""

from __future__ import annotations

import fw
from fw.core.tensor import Tensor
from fw.distribution.distribution import _eps, _np_params, _value_like
from fw.distribution.exponential_family import ExponentialFamily

__all__ = ["Bernoulli"]


def _F():
    import fw.nn.functional as F

    return F


class Bernoulli(ExponentialFamily):
    r"""The Bernoulli distribution: 1 with probability ``probs``, else 0. ``probs`` is
    clipped to ``[eps, 1 - eps]`` of its dtype (as Paddle does) so the logits are finite.

    Args:
        probs (float|Tensor): the probability of 1.
        name (str, optional): a name for the operations. Default None.

    `rsample(shape, temperature=1.0)` gives Paddle's relaxed (Gumbel-softmax style)
    samples: logistic noise plus the logits, divided by ``temperature`` — real
    numbers whose sigmoid approaches a Bernoulli draw as the temperature goes to 0.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> b = fw.distribution.Bernoulli(0.3)
            >>> round(float(b.entropy()), 4)
            0.6109
    """

    def __init__(self, probs, name=None):
        self.name = name or "Bernoulli"
        if isinstance(probs, Tensor):
            self.probs = probs
            self.dtype = probs.dtype.name
        else:
            (self.probs,) = _np_params("Bernoulli", probs)
            self.dtype = fw.get_default_dtype().name
        eps = _eps(self.dtype)
        self.probs = fw.clip(self.probs, min=eps, max=1 - eps).astype(self.dtype)
        self.logits = self._probs_to_logits(self.probs, is_binary=True)
        super().__init__(batch_shape=tuple(self.probs.shape), event_shape=())

    @property
    def mean(self):
        """``probs``."""
        return self.probs

    @property
    def variance(self):
        """``probs (1 - probs)``."""
        return self.probs * (1 - self.probs)

    def sample(self, shape=()):
        """0/1 samples of shape ``shape + batch_shape`` in the dtype of ``probs``."""
        shape = list(self._extend_shape(shape))
        with fw.no_grad():
            return fw.bernoulli(self.probs.expand(shape))

    def rsample(self, shape=(), temperature=1.0):
        """Relaxed samples ``(logit(u) + logits) / temperature`` (differentiable in
        ``probs``)."""
        shape = list(self._extend_shape(shape))
        t = fw.full([], float(temperature), dtype=self.dtype)
        probs = self.probs.expand(shape)
        u = fw.rand(shape, dtype=self.dtype)
        return ((u.log() - (-u).log1p()) + (probs.log() - (-probs).log1p())) / t

    def cdf(self, value):
        """0 below 0, ``1 - probs`` on [0, 1), 1 from 1."""
        value = _value_like(value, self.probs)
        probs, value = fw.broadcast_tensors([self.probs, value])
        zeros, ones = fw.zeros_like(probs), fw.ones_like(probs)
        return fw.where(value < 0, zeros, fw.where(value < 1, ones - probs, ones))

    def log_prob(self, value):
        """``value log p + (1 - value) log(1 - p)``."""
        value = _value_like(value, self.probs)
        logits, value = fw.broadcast_tensors([self.logits, value])
        return -_F().binary_cross_entropy_with_logits(logits, value, reduction="none")

    def prob(self, value):
        """``exp(log_prob(value))``."""
        return self.log_prob(value).exp()

    def entropy(self):
        """The entropy."""
        return _F().binary_cross_entropy_with_logits(self.logits, self.probs,
                                                     reduction="none")

    def kl_divergence(self, other):
        """KL(self || other) for another Bernoulli."""
        if not isinstance(other, Bernoulli):
            raise TypeError(f"Bernoulli.kl_divergence: 'other' must be a Bernoulli, got "
                            f"{type(other).__name__}")
        F = _F()
        a, b = self.logits, other.logits
        log_pa, log_pb = -F.softplus(-a), -F.softplus(-b)
        pa, one_minus_pa = F.sigmoid(a), F.sigmoid(-a)
        log_1pa, log_1pb = -F.softplus(a), -F.softplus(b)
        return (log_pa * pa - log_pb * pa) + (log_1pa * one_minus_pa - log_1pb * one_minus_pa)

    @property
    def _natural_parameters(self):
        return (self.logits,)

    def _log_normalizer(self, x):
        return _F().softplus(x)
