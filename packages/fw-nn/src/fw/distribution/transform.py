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
    """The base class of invertible transforms ``y = f(x)`` of random variables.

    Subclasses define `forward`, `inverse`, `forward_log_det_jacobian`
    (``log|det df/dx|``), `inverse_log_det_jacobian`, `forward_shape` and
    `inverse_shape`. Calling a transform on a Tensor applies `forward`; on a
    Distribution it gives a `TransformedDistribution`; on another transform it gives the
    `ChainTransform` of both (the argument applied first).

    Examples:
        >>> import fw
        >>> t = fw.distribution.ExpTransform()
        >>> [round(v, 4) for v in t(fw.to_tensor([0.0, 1.0])).tolist()]
        [1.0, 2.7183]
        >>> d = t(fw.distribution.Normal(0.0, 1.0))     # a log-normal distribution
        >>> type(d).__name__
        'TransformedDistribution'
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
        """Compute ``y = f(x)``.

        Args:
            x (Tensor): the input, with at least the transform's event rank dimensions.

        Returns:
            Tensor: ``f(x)``.

        Examples:
            >>> import fw
            >>> D = fw.distribution
            >>> D.AffineTransform(fw.to_tensor(1.0), fw.to_tensor(2.0)).forward(
            ...     fw.to_tensor([0.0, 1.0])).tolist()
            [1.0, 3.0]
        """
        _need_tensor(x, f"{type(self).__name__}.forward", "x")
        if x.dim() < self._domain.event_rank:
            raise ValueError(f"{type(self).__name__}.forward: x has {x.dim()} dimensions, "
                             f"needs at least {self._domain.event_rank}")
        return self._forward(x)

    def inverse(self, y):
        """Compute ``x = f^{-1}(y)``.

        Args:
            y (Tensor): a value of the transform's codomain.

        Returns:
            Tensor: the preimage (a tuple of the preimages for a surjection such as
            `AbsTransform`).

        Examples:
            >>> import fw
            >>> D = fw.distribution
            >>> D.AffineTransform(fw.to_tensor(1.0), fw.to_tensor(2.0)).inverse(
            ...     fw.to_tensor([3.0])).tolist()
            [1.0]
        """
        _need_tensor(y, f"{type(self).__name__}.inverse", "y")
        if y.dim() < self._codomain.event_rank:
            raise ValueError(f"{type(self).__name__}.inverse: y has {y.dim()} dimensions, "
                             f"needs at least {self._codomain.event_rank}")
        return self._inverse(y)

    def forward_log_det_jacobian(self, x):
        """Compute ``log|det J_f(x)|``, the log-density correction of `forward`.

        Args:
            x (Tensor): the input.

        Returns:
            Tensor: the log absolute determinant of the Jacobian at `x` (summed over the
            event dimensions).

        Examples:
            >>> import fw
            >>> D = fw.distribution
            >>> D.ExpTransform().forward_log_det_jacobian(fw.to_tensor([0.0, 1.0])).tolist()
            [0.0, 1.0]
        """
        _need_tensor(x, f"{type(self).__name__}.forward_log_det_jacobian", "x")
        if x.dim() < self._domain.event_rank:
            raise ValueError(f"{type(self).__name__}.forward_log_det_jacobian: x has "
                             f"{x.dim()} dimensions, needs at least {self._domain.event_rank}")
        if not self._is_injective():
            raise NotImplementedError(f"{type(self).__name__}: forward_log_det_jacobian is "
                                      f"not defined for a non-injective transform")
        return self._call_forward_log_det_jacobian(x)

    def inverse_log_det_jacobian(self, y):
        """Compute ``log|det J_{f^-1}(y)|`` (minus the forward one at ``f^-1(y)``).

        Args:
            y (Tensor): a value of the codomain.

        Returns:
            Tensor: the log absolute determinant of the inverse's Jacobian at `y`.

        Examples:
            >>> import fw
            >>> D = fw.distribution
            >>> [round(v, 4) for v in D.ExpTransform().inverse_log_det_jacobian(
            ...     fw.to_tensor([2.0])).tolist()]
            [-0.6931]
        """
        _need_tensor(y, f"{type(self).__name__}.inverse_log_det_jacobian", "y")
        if y.dim() < self._codomain.event_rank:
            raise ValueError(f"{type(self).__name__}.inverse_log_det_jacobian: y has "
                             f"{y.dim()} dimensions, needs at least "
                             f"{self._codomain.event_rank}")
        return self._call_inverse_log_det_jacobian(y)

    def forward_shape(self, shape):
        """The shape of ``forward(x)`` for an ``x`` of shape `shape`.

        Args:
            shape (Sequence[int]): the input shape.

        Returns:
            Sequence[int]: the output shape.

        Examples:
            >>> import fw
            >>> D = fw.distribution
            >>> D.ReshapeTransform((2, 3), (3, 2)).forward_shape((4, 2, 3))
            (4, 3, 2)
        """
        if not isinstance(shape, Sequence):
            raise TypeError(f"{type(self).__name__}.forward_shape: 'shape' must be a "
                            f"sequence, got {type(shape).__name__}")
        return self._forward_shape(shape)

    def inverse_shape(self, shape):
        """The shape of ``inverse(y)`` for a ``y`` of shape `shape`.

        Args:
            shape (Sequence[int]): the output-side shape.

        Returns:
            Sequence[int]: the input-side shape.

        Examples:
            >>> import fw
            >>> D = fw.distribution
            >>> D.ReshapeTransform((2, 3), (3, 2)).inverse_shape((3, 2))
            (2, 3)
        """
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
    """The absolute value ``y = |x|``.

    A surjection, not a bijection: `inverse` returns both preimages ``(-y, y)`` and the
    log-det-Jacobian is not defined.

    Examples:
        >>> import fw
        >>> D = fw.distribution
        >>> t = D.AbsTransform()
        >>> t.forward(fw.to_tensor([-1.0, 2.0])).tolist()
        [1.0, 2.0]
        >>> [v.tolist() for v in t.inverse(fw.to_tensor([2.0]))]
        [[-2.0], [2.0]]
    """

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
    """The affine map ``y = loc + scale * x``.

    Args:
        loc (Tensor): the shift (broadcast against x).
        scale (Tensor): the scale (broadcast against x).

    Examples:
        >>> import fw
        >>> D = fw.distribution
        >>> t = D.AffineTransform(fw.to_tensor(1.0), fw.to_tensor(2.0))
        >>> t.forward(fw.to_tensor([-1.0, 2.0])).tolist()
        [-1.0, 5.0]
        >>> round(float(t.forward_log_det_jacobian(fw.to_tensor([0.0]))), 4)   # log 2
        0.6931
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
    """The composition of `transforms`, applied first to last.

    Its log-det-Jacobian is the sum of the parts' at each intermediate value.

    Args:
        transforms (Sequence[Transform]): the transforms, in the order they apply.

    Examples:
        >>> import fw
        >>> D = fw.distribution
        >>> t = D.ChainTransform([D.AffineTransform(fw.to_tensor(0.0), fw.to_tensor(2.0)),
        ...                       D.ExpTransform()])      # y = exp(2 x)
        >>> [round(v, 4) for v in t.forward(fw.to_tensor([0.0, 0.5])).tolist()]
        [1.0, 2.7183]
        >>> [round(v, 4) for v in t.forward_log_det_jacobian(fw.to_tensor([0.0, 0.5])).tolist()]
        [0.6931, 1.6931]
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
    """The exponential ``y = exp(x)``, from the reals onto the positive reals.

    Examples:
        >>> import fw
        >>> D = fw.distribution
        >>> t = D.ExpTransform()
        >>> [round(v, 4) for v in t.inverse(fw.to_tensor([1.0, 2.0])).tolist()]
        [0.0, 0.6931]
        >>> t.forward_log_det_jacobian(fw.to_tensor([0.0, 1.0])).tolist()
        [0.0, 1.0]
    """

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
    """Treat the `reinterpreted_batch_rank` rightmost batch dimensions of `base`
    as event dimensions: the values are `base`'s, the log-det-Jacobian sums over them.

    Args:
        base (Transform): the transform.
        reinterpreted_batch_rank (int): how many batch dimensions join the event (> 0).

    Examples:
        >>> import fw
        >>> D = fw.distribution
        >>> t = D.IndependentTransform(D.ExpTransform(), 1)
        >>> t.forward_log_det_jacobian(fw.to_tensor([[1.0, 2.0], [0.0, 0.5]])).tolist()
        [3.0, 0.5]
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
    """The power ``y = x ** power``, on positive x.

    Args:
        power (Tensor): the exponent.

    Examples:
        >>> import fw
        >>> D = fw.distribution
        >>> t = D.PowerTransform(fw.to_tensor(2.0))
        >>> t.forward(fw.to_tensor([1.0, 3.0])).tolist()
        [1.0, 9.0]
        >>> t.inverse(fw.to_tensor([4.0])).tolist()
        [2.0]
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
    """Reshape the event from `in_event_shape` to `out_event_shape` (same size);
    batch dimensions in front are kept. The log-det-Jacobian is 0.

    Args:
        in_event_shape (Sequence[int]): the event shape of x.
        out_event_shape (Sequence[int]): the event shape of y.

    Examples:
        >>> import fw
        >>> D = fw.distribution
        >>> t = D.ReshapeTransform((2, 3), (3, 2))
        >>> t.forward(fw.ones([4, 2, 3])).shape
        [4, 3, 2]
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
    """The logistic sigmoid ``y = 1 / (1 + exp(-x))``, onto (0, 1).

    Examples:
        >>> import fw
        >>> D = fw.distribution
        >>> t = D.SigmoidTransform()
        >>> [round(v, 4) for v in t.forward(fw.to_tensor([0.0, 2.0])).tolist()]
        [0.5, 0.8808]
        >>> t.inverse(fw.to_tensor([0.5])).tolist()
        [0.0]
    """

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
    """Softmax over the last axis, ``y = exp(x) / sum(exp(x))``.

    Not injective (adding a constant to x gives the same y): `inverse` returns ``log y``
    and the log-det-Jacobian is not defined.

    Examples:
        >>> import fw
        >>> D = fw.distribution
        >>> t = D.SoftmaxTransform()
        >>> [round(v, 4) for v in t.forward(fw.to_tensor([0.0, 0.0, 1.0])).tolist()]
        [0.2119, 0.2119, 0.5761]
    """

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
    """Apply ``transforms[i]`` to slice ``i`` of the input along `axis`.

    Args:
        transforms (Sequence[Transform]): one transform per slice.
        axis (int, optional): the axis the slices are taken along. Default: 0.

    Examples:
        >>> import fw
        >>> D = fw.distribution
        >>> t = D.StackTransform([D.ExpTransform(), D.AbsTransform()], axis=1)
        >>> y = t.forward(fw.to_tensor([[0.0, -2.0], [1.0, 3.0]]))
        >>> [[round(v, 4) for v in row] for row in y.tolist()]
        [[1.0, 2.0], [2.7183, 3.0]]
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
    """Map ``R^K`` onto the interior of the ``K``-simplex in ``R^(K+1)`` by
    stick-breaking: the outputs are positive and sum to 1 (a bijection, used to give
    unconstrained parameters to a Dirichlet-like variable).

    Examples:
        >>> import fw
        >>> D = fw.distribution
        >>> t = D.StickBreakingTransform()
        >>> y = t.forward(fw.to_tensor([0.0, 0.0]))
        >>> [round(v, 4) for v in y.tolist()], round(float(y.sum()), 4)
        ([0.3333, 0.3333, 0.3333], 1.0)
    """

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
    """The hyperbolic tangent ``y = tanh(x)``, onto (-1, 1).

    Examples:
        >>> import fw
        >>> D = fw.distribution
        >>> t = D.TanhTransform()
        >>> [round(v, 4) for v in t.forward(fw.to_tensor([0.0, 1.0])).tolist()]
        [0.0, 0.7616]
        >>> [round(v, 4) for v in t.inverse(fw.to_tensor([0.5])).tolist()]
        [0.5493]
    """

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
