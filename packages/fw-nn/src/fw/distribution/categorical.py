"""The categorical distribution (Paddle's ``paddle.distribution.Categorical``).

Paddle's `Categorical` treats its ``logits`` in two ways, and fw keeps both so Paddle
programs get Paddle's numbers: `sample`, `entropy` and `kl_divergence` use
``softmax(logits)``, while `probs`/`log_prob` normalise ``logits`` by their sum (they
read ``logits`` as unnormalised probabilities)."""

from __future__ import annotations

import math

import numpy as np

import fw
from fw.core.tensor import Tensor
from fw.distribution.distribution import Distribution, _np_params, _shape_arg

__all__ = ["Categorical"]


class Categorical(Distribution):
    r"""A categorical distribution over ``logits.shape[-1]`` categories.

    Args:
        logits (list|tuple|numpy.ndarray|Tensor): the category weights (last axis).
        name (str, optional): a name for the operations. Default None.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> c = fw.distribution.Categorical(fw.to_tensor([1.0, 2.0, 3.0]))
            >>> round(float(c.entropy()), 4)
            0.8324
            >>> c.probs(fw.to_tensor([2])).numpy().round(4).tolist()
            [0.5]
    """

    def __init__(self, logits, name=None):
        self.name = name if name is not None else "Categorical"
        if isinstance(logits, Tensor):
            self.logits = logits
            self.dtype = logits.dtype.name
        else:
            self.dtype = "float32"
            if isinstance(logits, np.ndarray) and str(logits.dtype) in ("float32", "float64"):
                self.dtype = str(logits.dtype)
            (self.logits,) = _np_params("Categorical", logits)
            if self.logits.dtype.name != self.dtype:
                self.logits = self.logits.astype(self.dtype)
        if self.logits.dim() < 1:
            raise ValueError("Categorical: 'logits' must be at least 1-D")
        self._prob = self.logits / fw.sum(self.logits, axis=-1, keepdim=True)
        super().__init__(tuple(self.logits.shape[:-1]))

    def sample(self, shape=()):
        """Draw category indices (int64) of shape ``shape + batch_shape``.

        Args:
            shape (Sequence[int], optional): the sample shape. Default: ().

        Returns:
            Tensor: int64 indices in ``[0, categories)``.

        Examples:
            >>> import fw
            >>> d = fw.distribution.Categorical(fw.to_tensor([1.0, 1.0, 2.0]))
            >>> s = d.sample([4])
            >>> s.shape, s.dtype
            ([4], fw.int64)
        """
        shape = list(_shape_arg(shape, "Categorical.sample"))
        n = int(np.prod(shape)) if shape else 1
        ls = list(self.logits.shape)
        logits = self.logits.reshape([math.prod(ls[:-1]), ls[-1]]) if len(ls) > 1 \
            else self.logits
        with fw.no_grad():
            idx = fw.multinomial(self._logits_to_probs(logits), n, True)
        perm = list(range(idx.dim()))
        perm.insert(0, perm.pop(-1))
        return idx.transpose(perm).reshape(shape + ls[:-1])

    def _log_softmax(self, logits):
        z = logits - fw.max(logits, axis=-1, keepdim=True)
        return z - fw.log(fw.sum(fw.exp(z), axis=-1, keepdim=True))

    def kl_divergence(self, other):
        """KL(self || other) of the ``softmax(logits)`` distributions (the last axis
        kept with size 1, as Paddle returns it).

        Args:
            other (Categorical): the second distribution.

        Returns:
            Tensor: the divergence, ``batch_shape + [1]``.

        Examples:
            >>> import fw
            >>> d = fw.distribution.Categorical(fw.to_tensor([1.0, 1.0, 2.0]))
            >>> kl = d.kl_divergence(fw.distribution.Categorical(fw.to_tensor([1.0, 1.0, 1.0])))
            >>> kl.shape, round(float(kl), 4)
            ([1], 0.1233)
        """
        if not isinstance(other, Categorical):
            raise TypeError(f"Categorical.kl_divergence: 'other' must be a Categorical, got "
                            f"{type(other).__name__}")
        lp, lq = self._log_softmax(self.logits), self._log_softmax(other.logits)
        return fw.sum(fw.exp(lp) * (lp - lq), axis=-1, keepdim=True)

    def entropy(self):
        """The entropy of ``softmax(logits)``, in the batch shape.

        Returns:
            Tensor: the entropy.

        Examples:
            >>> import fw
            >>> d = fw.distribution.Categorical(fw.to_tensor([1.0, 1.0, 2.0]))
            >>> round(float(d.entropy()), 4)
            0.9753
        """
        lp = self._log_softmax(self.logits)
        return -fw.sum(fw.exp(lp) * lp, axis=-1)

    def probs(self, value):
        """The probability of category `value`.

        As in Paddle, ``probs``/``prob``/``log_prob`` normalise the logits by their sum
        (``logits / logits.sum(-1)``), while `sample`, `entropy` and `kl_divergence` use
        ``softmax(logits)``. A 1-D `value` is broadcast over the batch; otherwise it has
        the batch's leading shape.

        Args:
            value (Tensor): int category indices.

        Returns:
            Tensor: the probabilities.

        Examples:
            >>> import fw
            >>> d = fw.distribution.Categorical(fw.to_tensor([1.0, 1.0, 2.0]))
            >>> d.probs(fw.to_tensor([0, 2])).tolist()
            [0.25, 0.5]
        """
        if not isinstance(value, Tensor):
            value = fw.to_tensor(np.asarray(value, dtype=np.int64))
        if len(self._prob.shape) == 1:
            return fw.gather(self._prob, value.reshape([-1])).reshape(list(value.shape))
        if len(value.shape) == 1:
            return fw.take_along_axis(
                self._prob, value.reshape([1] * (len(self._prob.shape) - 1) + [-1]), axis=-1)
        return fw.take_along_axis(self._prob, value, axis=-1)

    def prob(self, value):
        """The probability of category `value` (same as `probs`).

        Args:
            value (Tensor): int category indices.

        Returns:
            Tensor: the probabilities.

        Examples:
            >>> import fw
            >>> d = fw.distribution.Categorical(fw.to_tensor([1.0, 1.0, 2.0]))
            >>> d.prob(fw.to_tensor([0, 2])).tolist()
            [0.25, 0.5]
        """
        return self.probs(value)

    def log_prob(self, value):
        """``log(probs(value))``.

        Args:
            value (Tensor): int category indices.

        Returns:
            Tensor: the log probabilities.

        Examples:
            >>> import fw
            >>> d = fw.distribution.Categorical(fw.to_tensor([1.0, 1.0, 2.0]))
            >>> [round(v, 4) for v in d.log_prob(fw.to_tensor([2])).tolist()]
            [-0.6931]
        """
        return fw.log(self.probs(value))
