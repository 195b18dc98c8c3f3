"""Bijective (and a few non-bijective) transforms of random variables, with their
log-determinant Jacobians (Paddle's ``paddle.distribution`` transforms). Each
transform knows its domain's and codomain's event rank, so `ChainTransform` and
`TransformedDistribution` know which dimensions a Jacobian term sums over."""

from __future__ import annotations

import enum
import math
from collections.abc import Sequence

import numpy as np

import fw
from fw.core.tensor import Tensor
from fw.distribution import variable
from fw.distribution.distribution import Distribution, _sum_rightmost

__all__ = ["Transform", "AbsTransform", "AffineTransform", "ChainTransform", "ExpTransform",
           "IndependentTransform", "PowerTransform", "ReshapeTransform", "SigmoidTransform",
           "SoftmaxTransform", "StackTransform", "StickBreakingTransform", "TanhTransform"]


def _F():
    import fw.nn.functional as F

    return F


class Type(enum.Enum):
    """Whether a transform is a bijection, injection, surjection or none of these."""

    BIJECTION = "bijection"
    INJECTION = "injection"
    SURJECTION = "surjection"
    OTHER = "other"

    @classmethod
    def is_injective(cls, _type):
        return _type in (cls.BIJECTION, cls.INJECTION)


def _need_tensor(x, who, arg):
    if not isinstance(x, Tensor):
        raise TypeError(f"{who}: '{arg}' must be a Tensor, got {type(x).__name__}")


class Transform:
    """The base class of transforms ``y = f(x)``: `forward`, `inverse`,
    `forward_log_det_jacobian` (``log|det df/dx|``), `inverse_log_det_jacobian`,
    `forward_shape` and `inverse_shape`. Calling a transform on a Tensor applies
    `forward`; on a Distribution it gives a `TransformedDistribution`; on another
    transform it gives the `ChainTransform` of both.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> t = fw.distribution.ExpTransform()
            >>> [round(v, 4) for v in t.forward(fw.to_tensor([0.0, 1.0])).tolist()]
            [1.0, 2.7183]
    """

    _type = Type.INJECTION

    def __init__(self):
        super().__init__()

    @classmethod
    def _is_injective(cls):
        return Type.is_injective(cls._type)

    def __call__(self, input):
        if isinstance(input, Distribution):
            from fw.distribution.transformed_distribution import TransformedDistribution

            return TransformedDistribution(input, [self])
        if isinstance(input, Transform):
            return ChainTransform([self, input])
        return self.forward(input)

    def forward(self, x):
        """``y = f(x)``."""
        _need_tensor(x, f"{type(self).__name__}.forward", "x")
        if x.dim() < self._domain.event_rank:
            raise ValueError(f"{type(self).__name__}.forward: x has {x.dim()} dimensions, "
                             f"needs at least {self._domain.event_rank}")
        return self._forward(x)

    def inverse(self, y):
        """``x = f^{-1}(y)``."""
        _need_tensor(y, f"{type(self).__name__}.inverse", "y")
        if y.dim() < self._codomain.event_rank:
            raise ValueError(f"{type(self).__name__}.inverse: y has {y.dim()} dimensions, "
                             f"needs at least {self._codomain.event_rank}")
        return self._inverse(y)

    def forward_log_det_jacobian(self, x):
        """``log|det J_f(x)|``."""
        _need_tensor(x, f"{type(self).__name__}.forward_log_det_jacobian", "x")
        if x.dim() < self._domain.event_rank:
            raise ValueError(f"{type(self).__name__}.forward_log_det_jacobian: x has "
                             f"{x.dim()} dimensions, needs at least {self._domain.event_rank}")
        if not self._is_injective():
            raise NotImplementedError(f"{type(self).__name__}: forward_log_det_jacobian is "
                                      f"not defined for a non-injective transform")
        return self._call_forward_log_det_jacobian(x)

    def inverse_log_det_jacobian(self, y):
        """``log|det J_{f^{-1}}(y)|``."""
        _need_tensor(y, f"{type(self).__name__}.inverse_log_det_jacobian", "y")
        if y.dim() < self._codomain.event_rank:
            raise ValueError(f"{type(self).__name__}.inverse_log_det_jacobian: y has "
                             f"{y.dim()} dimensions, needs at least "
                             f"{self._codomain.event_rank}")
        return self._call_inverse_log_det_jacobian(y)

    def forward_shape(self, shape):
        """The shape of ``forward(x)`` for an ``x`` of shape ``shape``."""
        if not isinstance(shape, Sequence):
            raise TypeError(f"{type(self).__name__}.forward_shape: 'shape' must be a "
                            f"sequence, got {type(shape).__name__}")
        return self._forward_shape(shape)

    def inverse_shape(self, shape):
        """The shape of ``inverse(y)`` for a ``y`` of shape ``shape``."""
        if not isinstance(shape, Sequence):
            raise TypeError(f"{type(self).__name__}.inverse_shape: 'shape' must be a "
                            f"sequence, got {type(shape).__name__}")
        return self._inverse_shape(shape)

    @property
    def _domain(self):
        return variable.real

    @property
    def _codomain(self):
        return variable.real

    def _forward(self, x):
        raise NotImplementedError(f"{type(self).__name__}: forward is not implemented")

    def _inverse(self, y):
        raise NotImplementedError(f"{type(self).__name__}: inverse is not implemented")

    def _call_forward_log_det_jacobian(self, x):
        if hasattr(self, "_forward_log_det_jacobian"):
            return self._forward_log_det_jacobian(x)
        if hasattr(self, "_inverse_log_det_jacobian"):
            return -self._inverse_log_det_jacobian(self.forward(x))
        raise NotImplementedError(f"{type(self).__name__}: no log-det-Jacobian is defined")

    def _call_inverse_log_det_jacobian(self, y):
        if hasattr(self, "_inverse_log_det_jacobian"):
            return self._inverse_log_det_jacobian(y)
        if hasattr(self, "_forward_log_det_jacobian"):
            return -self._forward_log_det_jacobian(self._inverse(y))
        raise NotImplementedError(f"{type(self).__name__}: no log-det-Jacobian is defined")

    def _forward_shape(self, shape):
        return shape

    def _inverse_shape(self, shape):
        return shape


class AbsTransform(Transform):
    """``y = |x|``: a surjection; `inverse` returns both preimages ``(-y, y)``."""

    _type = Type.SURJECTION

    def _forward(self, x):
        return x.abs()

    def _inverse(self, y):
        return -y, y

    def _inverse_log_det_jacobian(self, y):
        zero = fw.zeros([], dtype=y.dtype)
        return zero, zero

    @property
    def _codomain(self):
        return variable.positive


class AffineTransform(Transform):
    """``y = loc + scale * x``.

    Args:
        loc (Tensor): the shift.
        scale (Tensor): the scale.
    """

    _type = Type.BIJECTION

    def __init__(self, loc, scale):
        _need_tensor(loc, "AffineTransform", "loc")
        _need_tensor(scale, "AffineTransform", "scale")
        self._loc, self._scale = loc, scale
        super().__init__()

    @property
    def loc(self):
        return self._loc

    @property
    def scale(self):
        return self._scale

    def _forward(self, x):
        return self._loc + self._scale * x

    def _inverse(self, y):
        return (y - self._loc) / self._scale

    def _forward_log_det_jacobian(self, x):
        return fw.abs(self._scale).log()

    def _forward_shape(self, shape):
        return tuple(np.broadcast_shapes(tuple(shape), tuple(self._loc.shape),
                                         tuple(self._scale.shape)))

    _inverse_shape = _forward_shape


class ChainTransform(Transform):
    """The composition of ``transforms``, applied first to last.

    Args:
        transforms (Sequence[Transform]): the transforms.
    """

    def __init__(self, transforms):
        if not isinstance(transforms, Sequence) or not all(isinstance(t, Transform)
                                                           for t in transforms):
            raise TypeError("ChainTransform: 'transforms' must be a sequence of Transform")
        self.transforms = transforms
        super().__init__()

    def _is_injective(self):
        return all(t._is_injective() for t in self.transforms)

    def _forward(self, x):
        for t in self.transforms:
            x = t.forward(x)
        return x

    def _inverse(self, y):
        for t in reversed(self.transforms):
            y = t.inverse(y)
        return y

    def _forward_log_det_jacobian(self, x):
        value = 0.0
        rank = self._domain.event_rank
        for t in self.transforms:
            value = value + _sum_rightmost(t.forward_log_det_jacobian(x),
                                           rank - t._domain.event_rank)
            x = t.forward(x)
            rank += t._codomain.event_rank - t._domain.event_rank
        return value

    def _forward_shape(self, shape):
        for t in self.transforms:
            shape = t.forward_shape(shape)
        return shape

    def _inverse_shape(self, shape):
        for t in reversed(self.transforms):
            shape = t.inverse_shape(shape)
        return shape

    @property
    def _domain(self):
        domain = self.transforms[0]._domain
        rank = self.transforms[-1]._codomain.event_rank
        for t in reversed(self.transforms):
            rank -= t._codomain.event_rank - t._domain.event_rank
            rank = max(rank, t._domain.event_rank)
        return variable.Independent(domain, rank - domain.event_rank)

    @property
    def _codomain(self):
        codomain = self.transforms[-1]._codomain
        rank = self.transforms[0]._domain.event_rank
        for t in self.transforms:
            rank += t._codomain.event_rank - t._domain.event_rank
            rank = max(rank, t._codomain.event_rank)
        return variable.Independent(codomain, rank - codomain.event_rank)


class ExpTransform(Transform):
    """``y = exp(x)``."""

    _type = Type.BIJECTION

    @property
    def _codomain(self):
        return variable.positive

    def _forward(self, x):
        return x.exp()

    def _inverse(self, y):
        return y.log()

    def _forward_log_det_jacobian(self, x):
        return x


class IndependentTransform(Transform):
    """``base`` with its ``reinterpreted_batch_rank`` rightmost batch dimensions made part
    of the event: the log-det-Jacobian sums over them.

    Args:
        base (Transform): the transform.
        reinterpreted_batch_rank (int): how many batch dimensions (> 0).
    """

    def __init__(self, base, reinterpreted_batch_rank):
        if not isinstance(base, Transform):
            raise TypeError(f"IndependentTransform: 'base' must be a Transform, got "
                            f"{type(base).__name__}")
        if not isinstance(reinterpreted_batch_rank, int) or reinterpreted_batch_rank <= 0:
            raise ValueError(f"IndependentTransform: 'reinterpreted_batch_rank' must be a "
                             f"positive int, got {reinterpreted_batch_rank!r}")
        self._base = base
        self._reinterpreted_batch_rank = reinterpreted_batch_rank
        super().__init__()

    def _is_injective(self):
        return self._base._is_injective()

    def _forward(self, x):
        return self._base.forward(x)

    def _inverse(self, y):
        return self._base.inverse(y)

    def _forward_log_det_jacobian(self, x):
        return self._base.forward_log_det_jacobian(x).sum(
            list(range(-self._reinterpreted_batch_rank, 0)))

    def _forward_shape(self, shape):
        return self._base.forward_shape(shape)

    def _inverse_shape(self, shape):
        return self._base.inverse_shape(shape)

    @property
    def _domain(self):
        return variable.Independent(self._base._domain, self._reinterpreted_batch_rank)

    @property
    def _codomain(self):
        return variable.Independent(self._base._codomain, self._reinterpreted_batch_rank)


class PowerTransform(Transform):
    """``y = x ** power`` (on positive x).

    Args:
        power (Tensor): the exponent.
    """

    _type = Type.BIJECTION

    def __init__(self, power):
        _need_tensor(power, "PowerTransform", "power")
        self._power = power
        super().__init__()

    @property
    def power(self):
        return self._power

    @property
    def _codomain(self):
        return variable.positive

    def _forward(self, x):
        return x.pow(self._power)

    def _inverse(self, y):
        return y.pow(1 / self._power)

    def _forward_log_det_jacobian(self, x):
        return (self._power * x.pow(self._power - 1)).abs().log()

    def _forward_shape(self, shape):
        return tuple(np.broadcast_shapes(tuple(shape), tuple(self._power.shape)))

    _inverse_shape = _forward_shape


class ReshapeTransform(Transform):
    """Reshape the event from ``in_event_shape`` to ``out_event_shape`` (same size).

    Args:
        in_event_shape (Sequence[int]): the event shape of x.
        out_event_shape (Sequence[int]): the event shape of y.
    """

    _type = Type.BIJECTION

    def __init__(self, in_event_shape, out_event_shape):
        if not isinstance(in_event_shape, Sequence) or not isinstance(out_event_shape,
                                                                      Sequence):
            raise TypeError("ReshapeTransform: the event shapes must be sequences of ints")
        if math.prod(in_event_shape) != math.prod(out_event_shape):
            raise ValueError(f"ReshapeTransform: in_event_shape {list(in_event_shape)} and "
                             f"out_event_shape {list(out_event_shape)} have different sizes")
        self._in_event_shape = tuple(in_event_shape)
        self._out_event_shape = tuple(out_event_shape)
        super().__init__()

    @property
    def in_event_shape(self):
        return self._in_event_shape

    @property
    def out_event_shape(self):
        return self._out_event_shape

    @property
    def _domain(self):
        return variable.Independent(variable.real, len(self._in_event_shape))

    @property
    def _codomain(self):
        return variable.Independent(variable.real, len(self._out_event_shape))

    def _forward(self, x):
        return x.reshape(list(x.shape)[:x.dim() - len(self._in_event_shape)]
                         + list(self._out_event_shape))

    def _inverse(self, y):
        return y.reshape(list(y.shape)[:y.dim() - len(self._out_event_shape)]
                         + list(self._in_event_shape))

    def _check(self, shape, ev, which):
        n = len(ev)
        if len(shape) < n or (n and tuple(shape[len(shape) - n:]) != ev):
            raise ValueError(f"ReshapeTransform.{which}: shape {list(shape)} does not end "
                             f"with the event shape {list(ev)}")
        return tuple(shape[:len(shape) - n])

    def _forward_shape(self, shape):
        return self._check(shape, self._in_event_shape, "forward_shape") + \
            self._out_event_shape

    def _inverse_shape(self, shape):
        return self._check(shape, self._out_event_shape, "inverse_shape") + \
            self._in_event_shape

    def _forward_log_det_jacobian(self, x):
        return fw.zeros(list(x.shape[:x.dim() - len(self._in_event_shape)]), dtype=x.dtype)


class SigmoidTransform(Transform):
    """``y = sigmoid(x)``."""

    @property
    def _codomain(self):
        return variable.Variable(False, 0, variable.Range(0.0, 1.0))

    def _forward(self, x):
        return _F().sigmoid(x)

    def _inverse(self, y):
        return y.log() - (-y).log1p()

    def _forward_log_det_jacobian(self, x):
        F = _F()
        return -F.softplus(-x) - F.softplus(x)


class SoftmaxTransform(Transform):
    """``y = softmax(x)`` over the last axis (not injective: `inverse` gives ``log y``)."""

    _type = Type.OTHER

    @property
    def _domain(self):
        return variable.Independent(variable.real, 1)

    @property
    def _codomain(self):
        return variable.Variable(False, 1, variable.simplex_c)

    def _forward(self, x):
        x = (x - x.max(-1, keepdim=True)).exp()
        return x / x.sum(-1, keepdim=True)

    def _inverse(self, y):
        return y.log()

    def _forward_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("SoftmaxTransform: the shape needs at least one dimension")
        return shape

    _inverse_shape = _forward_shape


class StackTransform(Transform):
    """Apply ``transforms[i]`` to slice ``i`` along ``axis``.

    Args:
        transforms (Sequence[Transform]): one transform per slice.
        axis (int, optional): the axis. Default 0.
    """

    def __init__(self, transforms, axis=0):
        if not transforms or not isinstance(transforms, Sequence) or not all(
                isinstance(t, Transform) for t in transforms):
            raise TypeError("StackTransform: 'transforms' must be a non-empty sequence of "
                            "Transform")
        if not isinstance(axis, int):
            raise TypeError(f"StackTransform: 'axis' must be an int, got {type(axis).__name__}")
        self._transforms = transforms
        self._axis = axis
        super().__init__()

    def _is_injective(self):
        return all(t._is_injective() for t in self._transforms)

    @property
    def transforms(self):
        return self._transforms

    @property
    def axis(self):
        return self._axis

    def _map(self, v, fn):
        self._check_size(v)
        return fw.stack([fn(t, p) for p, t in zip(fw.unstack(v, self._axis),
                                                  self._transforms)], self._axis)

    def _forward(self, x):
        return self._map(x, lambda t, p: t.forward(p))

    def _inverse(self, y):
        return self._map(y, lambda t, p: t.inverse(p))

    def _forward_log_det_jacobian(self, x):
        return self._map(x, lambda t, p: t.forward_log_det_jacobian(p))

    def _check_size(self, v):
        if not -v.dim() <= self._axis < v.dim():
            raise ValueError(f"StackTransform: axis {self._axis} is out of range for a "
                             f"{v.dim()}-D input")
        if v.shape[self._axis] != len(self._transforms):
            raise ValueError(f"StackTransform: the input has {v.shape[self._axis]} slices "
                             f"along axis {self._axis} but there are "
                             f"{len(self._transforms)} transforms")

    @property
    def _domain(self):
        return variable.Stack([t._domain for t in self._transforms], self._axis)

    @property
    def _codomain(self):
        return variable.Stack([t._codomain for t in self._transforms], self._axis)


class StickBreakingTransform(Transform):
    """Map ``R^K`` onto the interior of the ``K``-simplex in ``R^{K+1}`` by stick-breaking."""

    _type = Type.BIJECTION

    def _offset(self, k, dtype):
        return fw.to_tensor(np.arange(k, 0, -1, dtype=np.float64), dtype=dtype)

    def _forward(self, x):
        F = _F()
        k = x.shape[-1]
        z = F.sigmoid(x - self._offset(k, x.dtype).log())
        zc = (1 - z).cumprod(-1)
        ones = fw.ones(list(x.shape[:-1]) + [1], dtype=x.dtype)
        return fw.concat([z, ones], -1) * fw.concat([ones, zc], -1)

    def _inverse(self, y):
        y_crop = y[..., :-1]
        k = y_crop.shape[-1]
        sf = 1 - y_crop.cumsum(-1)
        return y_crop.log() - sf.log() + self._offset(k, y.dtype).log()

    def _forward_log_det_jacobian(self, x):
        F = _F()
        y = self.forward(x)
        x = x - self._offset(x.shape[-1], x.dtype).log()
        return (-x + F.log_sigmoid(x) + y[..., :-1].log()).sum(-1)

    def _forward_shape(self, shape):
        if not shape:
            raise ValueError("StickBreakingTransform: the shape must not be empty")
        return (*shape[:-1], shape[-1] + 1)

    def _inverse_shape(self, shape):
        if not shape:
            raise ValueError("StickBreakingTransform: the shape must not be empty")
        return (*shape[:-1], shape[-1] - 1)

    @property
    def _domain(self):
        return variable.Independent(variable.real, 1)

    @property
    def _codomain(self):
        return variable.Variable(False, 1, variable.simplex_c)


class TanhTransform(Transform):
    """``y = tanh(x)``."""

    _type = Type.BIJECTION

    @property
    def _codomain(self):
        return variable.Variable(False, 0, variable.Range(-1.0, 1.0))

    def _forward(self, x):
        return x.tanh()

    def _inverse(self, y):
        return y.atanh()

    def _forward_log_det_jacobian(self, x):
        # log(1 - tanh(x)^2) written stably: 2 (log 2 - x - softplus(-2x))
        return 2.0 * (math.log(2.0) - x - _F().softplus(-2.0 * x))
