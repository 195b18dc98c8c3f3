"""The `Distribution` base class and the argument conversions the distributions share.

Paddle's distributions convert their parameters in a few different ways (Normal and
Uniform through NumPy with float32 unless an array is float64, Cauchy/Laplace/Gumbel
through ``full(shape=[])``, Gamma/Exponential through the default dtype...). The
helpers below name each way once so every class states which one it follows.
"""

from __future__ import annotations

import numbers
import warnings

import numpy as np

import fw
from fw.core.tensor import Tensor

__all__ = ["Distribution"]


class Distribution:
    """The base class of probability distributions (Paddle's ``paddle.distribution.Distribution``).

    A distribution has a ``batch_shape`` (independent, not identically distributed
    copies) and an ``event_shape`` (the shape of one draw). Subclasses implement
    ``sample``, ``rsample`` (reparameterised: gradients flow to the parameters),
    ``log_prob``, ``entropy``, ``mean``, ``variance``... where they exist.

    Args:
        batch_shape (Sequence[int], optional): the batch shape. Default ().
        event_shape (Sequence[int], optional): the event shape. Default ().

    Examples:
        .. code-block:: python

            >>> import fw
            >>> d = fw.distribution.Normal(fw.zeros([3]), fw.ones([3]))
            >>> d.batch_shape, d.event_shape
            ((3,), ())
    """

    def __init__(self, batch_shape=(), event_shape=()):
        self._batch_shape = tuple(batch_shape)
        self._event_shape = tuple(event_shape)
        super().__init__()

    @property
    def batch_shape(self):
        """The batch shape: independent distributions of one family held together.

        Returns:
            tuple: the batch shape.

        Examples:
            >>> import fw
            >>> d = fw.distribution.Normal(fw.zeros([2]), fw.ones([2]))
            >>> d.batch_shape
            (2,)
        """
        return self._batch_shape

    @property
    def event_shape(self):
        """The event shape: the shape of one draw (``()`` for a scalar distribution,
        ``(k,)`` for a k-dimensional one such as `MultivariateNormal`).

        Returns:
            tuple: the event shape.

        Examples:
            >>> import fw
            >>> d = fw.distribution.Normal(fw.zeros([2]), fw.ones([2]))
            >>> d.event_shape
            ()
        """
        return self._event_shape

    @property
    def mean(self):
        """The mean of the distribution (subclasses define it).

        Returns:
            Tensor: the mean, in ``batch_shape + event_shape``.

        Examples:
            >>> import fw
            >>> d = fw.distribution.Normal(fw.zeros([2]), fw.ones([2]))
            >>> d.mean.tolist()
            [0.0, 0.0]
        """
        raise NotImplementedError(f"{type(self).__name__} has no mean")

    @property
    def variance(self):
        """The variance of the distribution (subclasses define it).

        Returns:
            Tensor: the variance, in ``batch_shape + event_shape``.

        Examples:
            >>> import fw
            >>> d = fw.distribution.Normal(fw.zeros([2]), fw.ones([2]))
            >>> d.variance.tolist()
            [1.0, 1.0]
        """
        raise NotImplementedError(f"{type(self).__name__} has no variance")

    def sample(self, shape=()):
        """Draw samples of shape ``shape + batch_shape + event_shape`` (no gradient).

        Args:
            shape (Sequence[int], optional): the sample shape. Default: ().

        Returns:
            Tensor: the samples.

        Examples:
            >>> import fw
            >>> d = fw.distribution.Normal(fw.zeros([2]), fw.ones([2]))
            >>> d.sample([3]).shape
            [3, 2]
        """
        raise NotImplementedError(f"{type(self).__name__}.sample is not defined")

    def rsample(self, shape=()):
        """Reparameterised samples: gradients flow to the parameters (defined by the
        families that have a pathwise sampler).

        Args:
            shape (Sequence[int], optional): the sample shape. Default: ().

        Returns:
            Tensor: samples of shape ``shape + batch_shape + event_shape``.

        Examples:
            >>> import fw
            >>> d = fw.distribution.Normal(fw.zeros([2]), fw.ones([2]))
            >>> d.rsample([3]).shape
            [3, 2]
        """
        raise NotImplementedError(f"{type(self).__name__} has no reparameterised sampler")

    def entropy(self):
        """The entropy, in nats.

        Returns:
            Tensor: the entropy, in the batch shape.

        Examples:
            >>> import fw
            >>> d = fw.distribution.Normal(fw.zeros([2]), fw.ones([2]))
            >>> [round(v, 4) for v in d.entropy().tolist()]
            [1.4189, 1.4189]
        """
        raise NotImplementedError(f"{type(self).__name__}.entropy is not defined")

    def kl_divergence(self, other):
        """The KL divergence KL(self || other) (see also ``fw.distribution.kl_divergence``).

        Args:
            other (Distribution): the second distribution.

        Returns:
            Tensor: the divergence, in the batch shape.

        Examples:
            >>> import fw
            >>> d = fw.distribution.Normal(fw.zeros([2]), fw.ones([2]))
            >>> d.kl_divergence(fw.distribution.Normal(fw.zeros([2]), fw.ones([2]))).tolist()
            [0.0, 0.0]
        """
        raise NotImplementedError(f"{type(self).__name__}.kl_divergence is not defined")

    def prob(self, value):
        """The probability density (mass) at `value`: ``exp(log_prob(value))``.

        Args:
            value (Tensor): the point(s), broadcast against ``batch_shape + event_shape``.

        Returns:
            Tensor: the density.

        Examples:
            >>> import fw
            >>> d = fw.distribution.Normal(fw.zeros([2]), fw.ones([2]))
            >>> [round(v, 4) for v in d.prob(fw.zeros([2])).tolist()]
            [0.3989, 0.3989]
        """
        return self.log_prob(value).exp()

    def log_prob(self, value):
        """The log probability density (mass) at `value`.

        Args:
            value (Tensor): the point(s), broadcast against ``batch_shape + event_shape``.

        Returns:
            Tensor: the log density.

        Examples:
            >>> import fw
            >>> d = fw.distribution.Normal(fw.zeros([2]), fw.ones([2]))
            >>> [round(v, 4) for v in d.log_prob(fw.zeros([2])).tolist()]
            [-0.9189, -0.9189]
        """
        raise NotImplementedError(f"{type(self).__name__}.log_prob is not defined")

    def probs(self, value):
        """Paddle's older spelling of `prob`.

        Args:
            value (Tensor): the point(s), broadcast against ``batch_shape + event_shape``.

        Returns:
            Tensor: the density.

        Examples:
            >>> import fw
            >>> d = fw.distribution.Normal(fw.zeros([2]), fw.ones([2]))
            >>> [round(v, 4) for v in d.probs(fw.zeros([2])).tolist()]
            [0.3989, 0.3989]
        """
        raise NotImplementedError(f"{type(self).__name__}.probs is not defined")

    def _extend_shape(self, sample_shape):
        return tuple(_shape_arg(sample_shape, type(self).__name__)) + tuple(
            self._batch_shape) + tuple(self._event_shape)

    # Paddle's helpers, kept under their names: subclasses written for Paddle call them
    def _validate_args(self, *args):
        has_t = any(isinstance(a, Tensor) for a in args)
        if has_t and not all(isinstance(a, Tensor) for a in args):
            raise ValueError(f"{type(self).__name__}: if one argument is a Tensor, all "
                             f"arguments must be Tensors")
        return has_t

    def _to_tensor(self, *args):
        return _np_params(type(self).__name__, *args)

    def _check_values_dtype_in_probs(self, param, value):
        return _value_like(value, param)

    def _probs_to_logits(self, probs, is_binary=False):
        return (fw.log(probs) - fw.log1p(-probs)) if is_binary else fw.log(probs)

    def _logits_to_probs(self, logits, is_binary=False):
        import fw.nn.functional as F

        return F.sigmoid(logits) if is_binary else F.softmax(logits, axis=-1)

    def _broadcast_all(self, *args):
        return _broadcast_all(type(self).__name__, *args)

    def __repr__(self):
        return (f"{type(self).__name__}(batch_shape={list(self._batch_shape)}, "
                f"event_shape={list(self._event_shape)})")


# ---------------------------------------------------------------- shared conversions
def _shape_arg(shape, who):
    if isinstance(shape, Tensor):
        shape = shape.tolist()
    if isinstance(shape, numbers.Integral):
        raise TypeError(f"{who}: the sample shape must be a sequence of ints (e.g. [{shape}]), "
                        f"got the int {shape}")
    try:
        out = tuple(int(s) for s in shape)
    except TypeError:
        raise TypeError(f"{who}: the sample shape must be a sequence of ints, got "
                        f"{type(shape).__name__}") from None
    if any(s < 0 for s in out):
        raise ValueError(f"{who}: the sample shape must not be negative, got {list(out)}")
    return out


def _np_params(who, *args):
    """Paddle's ``Distribution._to_tensor``: numbers, lists and arrays through NumPy,
    float32 unless the combined dtype is float64 (other dtypes warn and become
    float32), broadcast against each other."""
    arrs = []
    for a in args:
        if isinstance(a, bool) or not isinstance(a, (numbers.Real, list, tuple, np.ndarray)):
            raise TypeError(f"{who}: parameters must be float, list, tuple, numpy.ndarray or "
                            f"Tensor, got {type(a).__name__}")
        arr = np.array(a)
        if arr.dtype != np.float32:
            if arr.dtype != np.float64:
                warnings.warn(f"{who}: parameters of dtype {arr.dtype} are converted to "
                              f"float32 (float32 and float64 are supported)", stacklevel=3)
            arr = arr.astype(np.float32)
        arrs.append(arr)
    try:
        tmp = sum(arrs, np.zeros((), dtype=np.float32))
    except ValueError:
        raise ValueError(f"{who}: parameter shapes {[list(a.shape) for a in arrs]} do not "
                         f"broadcast") from None
    return tuple(fw.to_tensor(np.broadcast_to(a, tmp.shape).astype(tmp.dtype)) for a in arrs)


def _full_param(v, who, arg):
    """Cauchy/Laplace/Gumbel/Geometric/Beta: a real number becomes ``full([], v)`` in the
    default dtype; a Tensor is kept."""
    if isinstance(v, Tensor):
        return v
    if isinstance(v, numbers.Real) and not isinstance(v, bool):
        return fw.full([], float(v))
    raise TypeError(f"{who}: '{arg}' must be a real number or a Tensor, got "
                    f"{type(v).__name__}")


def _broadcast_all(who, *args):
    """Paddle's ``_broadcast_all``: numbers take the dtype of the first Tensor argument
    (the default dtype when there is none); all are broadcast together."""
    for a in args:
        if isinstance(a, bool) or not isinstance(a, (numbers.Real, list, tuple, np.ndarray,
                                                     Tensor)):
            raise TypeError(f"{who}: parameters must be float, list, tuple, numpy.ndarray or "
                            f"Tensor, got {type(a).__name__}")
    dtype = next((a.dtype for a in args if isinstance(a, Tensor)), fw.get_default_dtype())
    ts = [a if isinstance(a, Tensor) else fw.to_tensor(a, dtype=dtype) for a in args]
    return tuple(_broadcast(ts, who))


def _broadcast(ts, who):
    shapes = [tuple(t.shape) for t in ts]
    try:
        out = np.broadcast_shapes(*shapes)
    except ValueError:
        raise ValueError(f"{who}: parameter shapes {[list(s) for s in shapes]} do not "
                         f"broadcast") from None
    return [t if tuple(t.shape) == out else t.expand(list(out)) for t in ts]


def _value_like(value, param):
    """``log_prob``/``prob`` inputs: cast to the parameter's float dtype (Paddle warns)."""
    if not isinstance(value, Tensor):
        value = fw.to_tensor(np.asarray(value, dtype=param.dtype.name if hasattr(
            param.dtype, "name") else None))
    if value.dtype != param.dtype:
        if param.dtype in (fw.complex64, fw.complex128):
            return value.astype(param.dtype)  # the complex Gaussian: silently, as Paddle
        if value.dtype in (fw.float32, fw.float64):
            warnings.warn("dtype of input 'value' needs to be the same as parameters of "
                          "distribution class. dtype of 'value' will be converted.",
                          stacklevel=3)
        value = value.astype(param.dtype)
    return value


def _as_dtype(value, dtype):
    if not isinstance(value, Tensor):
        return fw.to_tensor(np.asarray(value), dtype=dtype)
    return value if value.dtype == dtype else value.astype(dtype)


def _sum_rightmost(value, n):
    return value.sum(list(range(-n, 0))) if n > 0 else value


def _eps(dtype):
    return float(fw.finfo(dtype).eps)
