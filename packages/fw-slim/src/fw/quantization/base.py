"""What every observer and quanter is, and the factories a QuantConfig holds.

Paddle's design (paddle.quantization.base_observer / base_quanter / factory): the
config holds *factories* (``AbsmaxObserver(quant_bits=8)`` stores its arguments);
`PTQ`/`QAT` call ``factory._instance(layer)`` once per quantized tensor to make a
fresh observer or quanter Layer for it. An observer watches values and computes
quantization parameters, returning its input unchanged; a quanter also fake-quantizes
what passes through it (QAT). Both answer the same questions at convert time:
``scales()``, ``zero_points()``, ``quant_axis()`` (-1: per-tensor), ``qmin``/``qmax``.

Where a new one plugs in: subclass `BaseObserver` (implement ``_observe(array)`` and
``cal_thresholds()``, which sets ``self._scale``/``self._zero_point``) or
`BaseQuanter` (implement ``forward``), and wrap it in a factory with `observer_factory`
/ `quanter_factory` (or subclass `ObserverFactory`), then pass the factory to
`QuantConfig`.
"""

from __future__ import annotations

import sys

import numpy as np

from fw.nn import Layer

__all__ = ["BaseObserver", "BaseQuanter", "ObserverFactory", "QuanterFactory", "qrange",
           "scale_from_range"]


def qrange(bits: int, symmetric: bool = True) -> tuple:
    """(qmin, qmax) of a `bits`-bit code: signed for symmetric, unsigned otherwise."""
    if not isinstance(bits, int) or not 2 <= bits <= 8:
        raise ValueError(f"quant_bits must be an int in [2, 8], got {bits!r}")
    return (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if symmetric else (0, (1 << bits) - 1)


def scale_from_range(lo, hi, qmin, qmax, symmetric):
    """Scale and zero point mapping [lo, hi] (arrays, per channel) onto [qmin, qmax].
    Symmetric: scale = max(|lo|, |hi|) / qmax, zero point 0. Asymmetric: the range is
    widened to hold 0 (so 0 is exact, as padding needs), zero point = qmin - lo/scale.
    A zero range gets scale 1 (every code is the zero point)."""
    lo, hi = np.minimum(np.asarray(lo, np.float64), 0), np.maximum(np.asarray(hi, np.float64), 0)
    if symmetric:
        scale = np.maximum(-lo, hi) / qmax
        zp = np.zeros(scale.shape, np.int32)
    else:
        scale = (hi - lo) / (qmax - qmin)
        safe = np.where(scale > 0, scale, 1.0)
        zp = np.clip(np.rint(qmin - lo / safe), qmin, qmax).astype(np.int32)
    scale = np.where(scale > 0, scale, 1.0).astype(np.float32)
    return np.atleast_1d(scale), np.atleast_1d(zp)


class _QuantLayer(Layer):
    """Shared state of observers and quanters: the code range and the channel axis."""

    def __init__(self, quant_bits=8, symmetric=True, quant_axis=-1):
        super().__init__()
        self._bits, self._symmetric = quant_bits, symmetric
        self.qmin, self.qmax = qrange(quant_bits, symmetric)
        self._axis = quant_axis
        self._scale = None
        self._zero_point = None

    def bit_length(self):
        """The integer width of the codes.

        Returns:
            int: the bits.

        Examples:
            >>> import fw
            >>> from fw.quantization.observers import AbsmaxObserverLayer
            >>> AbsmaxObserverLayer(quant_bits=4).bit_length()
            4
        """
        return self._bits

    def quant_axis(self):
        """The channel axis of per-channel parameters; -1 for per-tensor.

        Returns:
            int: the axis.

        Examples:
            >>> import fw
            >>> from fw.quantization.observers import AbsmaxObserverLayer
            >>> AbsmaxObserverLayer(quant_axis=0).quant_axis()
            0
        """
        return self._axis

    def scales(self):
        """One scale, or one per channel along `quant_axis` (computed from the statistics
        on first use); a RuntimeError before any value was seen.

        Returns:
            numpy.ndarray: float32 scales.

        Examples:
            >>> import fw
            >>> from fw.quantization.observers import AbsmaxObserverLayer
            >>> obs = AbsmaxObserverLayer()
            >>> _ = obs(fw.to_tensor([-1.27, 0.5]))
            >>> [round(float(s), 4) for s in obs.scales()]
            [0.01]
        """
        if self._scale is None:
            self.cal_thresholds()
        if self._scale is None:
            raise RuntimeError(f"{type(self).__name__}: no values observed yet (run calibration "
                               "batches through the model before convert)")
        return self._scale

    def zero_points(self):
        """The zero points aligned with `scales` (0 for symmetric quantization).

        Returns:
            numpy.ndarray: int32 zero points.

        Examples:
            >>> import fw
            >>> from fw.quantization.observers import MinMaxObserverLayer
            >>> obs = MinMaxObserverLayer()
            >>> _ = obs(fw.to_tensor([-2.0, 4.0]))
            >>> obs.zero_points().tolist()
            [85]
        """
        self.scales()
        return self._zero_point

    def cal_thresholds(self):  # overridden
        """Compute the scales and zero points from what was observed; subclasses
        override it (the base does nothing).

        Returns:
            None.

        Examples:
            >>> import fw
            >>> from fw.quantization.observers import AbsmaxObserverLayer
            >>> obs = AbsmaxObserverLayer()
            >>> obs.cal_thresholds()      # nothing observed yet: no scale
        """
        pass


class BaseObserver(_QuantLayer):
    """The base of observers: ``forward(x)`` records statistics of x and returns x
    unchanged; the scales come from the statistics (`scales`, `zero_points`).

    Subclasses implement ``_observe(array)`` and ``cal_thresholds``; wrap the class in an
    `ObserverFactory` to use it in a `QuantConfig`.

    Args:
        quant_bits (int, optional): the integer width. Default: 8.
        symmetric (bool, optional): a zero point of 0 (else min/max based). Default: True.
        quant_axis (int, optional): the per-channel axis, -1 for per-tensor. Default: -1.

    Examples:
        >>> import fw
        >>> from fw.quantization.observers import AbsmaxObserverLayer
        >>> obs = AbsmaxObserverLayer()
        >>> obs(fw.to_tensor([-3.0, 1.0])).tolist()     # x passes through
        [-3.0, 1.0]
        >>> round(float(obs.scales()[0]) * 127, 4)       # absmax / 127 per step
        3.0
    """

    def forward(self, x):
        self._observe(np.asarray(x.numpy(), np.float64))
        self._scale = None  # recomputed from the statistics on demand
        return x

    def _observe(self, a):
        raise NotImplementedError

    def _channel_view(self, a):
        """a as [channels, rest] for per-channel statistics (or [1, all])."""
        if self._axis == -1 or a.ndim == 0:
            return a.reshape(1, -1)
        return np.moveaxis(a, self._axis, 0).reshape(a.shape[self._axis], -1)


class BaseQuanter(_QuantLayer):
    """The base of quanters: ``forward(x)`` returns the fake-quantized x
    (quantize then dequantize, differentiable by the straight-through estimator).

    Args:
        quant_bits (int, optional): the integer width. Default: 8.
        symmetric (bool, optional): a zero point of 0. Default: True.
        quant_axis (int, optional): the per-channel axis, -1 for per-tensor. Default: -1.

    Examples:
        >>> import fw
        >>> from fw.quantization.quanters import FakeQuanterWithAbsMaxObserverLayer
        >>> q = FakeQuanterWithAbsMaxObserverLayer()
        >>> y = q(fw.to_tensor([-1.0, 0.3, 1.0]))
        >>> y.shape, q.bit_length()
        ([3], 8)
    """


class _Factory:
    """Holds a class and its arguments; `_instance` makes one Layer per tensor."""

    def __init__(self, cls, **kwargs):
        self._cls, self._kwargs = cls, kwargs

    def _instance(self, layer=None, axis=-1):
        kw = dict(self._kwargs)
        if getattr(self._cls, "PER_CHANNEL", False):
            if kw.get("quant_axis") is None:
                kw["quant_axis"] = axis
            if kw.get("per_channel") and layer is not None and axis >= 0:
                kw["channels"] = layer.weight.shape[kw["quant_axis"]]  # a learnable scale
        return self._cls(**kw)

    @property
    def per_channel(self):
        """Whether the layers this recipe makes keep one scale per channel.

        Examples:
            >>> import fw
            >>> from fw.quantization.observers import AbsmaxObserver
            >>> from fw.quantization.observers import AbsMaxChannelWiseWeightObserver
            >>> AbsmaxObserver().per_channel, AbsMaxChannelWiseWeightObserver().per_channel
            (False, True)
        """
        return getattr(self._cls, "PER_CHANNEL", False)

    def __repr__(self):
        args = ", ".join(f"{k}={v!r}" for k, v in self._kwargs.items())
        return f"{self._cls.__name__}({args})"


class ObserverFactory(_Factory):
    """A recipe for observers: the observer class and its arguments, from which
    `PTQ`/`QAT` make one observer layer per quantized tensor.

    Args:
        cls (type): a `BaseObserver` subclass.
        **kwargs: the arguments of `cls`.

    Examples:
        >>> import fw
        >>> from fw.quantization import ObserverFactory
        >>> from fw.quantization.observers import AbsmaxObserverLayer
        >>> ObserverFactory(AbsmaxObserverLayer, quant_bits=8)
        AbsmaxObserverLayer(quant_bits=8)
    """
    pass


class QuanterFactory(_Factory):
    """A recipe for quanters: the quanter class and its arguments, from which
    `QAT` makes one quanter layer per quantized tensor.

    Args:
        cls (type): a `BaseQuanter` subclass.
        **kwargs: the arguments of `cls`.

    Examples:
        >>> import fw
        >>> from fw.quantization import QuanterFactory
        >>> from fw.quantization.quanters import FakeQuanterWithAbsMaxObserverLayer
        >>> QuanterFactory(FakeQuanterWithAbsMaxObserverLayer, moving_rate=0.9)
        FakeQuanterWithAbsMaxObserverLayer(moving_rate=0.9)
    """
    pass


class _DeclaredQuanterFactory(QuanterFactory):
    """The factory ``quanter`` declares: it keeps positional arguments too and builds the
    quanter with the layer first, Paddle's convention for user quanters."""

    _target = None

    def __init__(self, *args, **kwargs):
        super().__init__(type(self)._target, **kwargs)
        self._args = args

    def _instance(self, layer=None, axis=-1):
        return self._cls(layer, *self._args, **self._kwargs)

    def __repr__(self):
        parts = [repr(a) for a in self._args] + [f"{k}={v!r}" for k, v in self._kwargs.items()]
        return f"{type(self).__name__}({', '.join(parts)})"


def quanter(class_name):
    """Declares a factory class named ``class_name`` for a user-defined quanter layer.

    Decorate a :class:`BaseQuanter` subclass whose ``__init__`` takes the layer being
    quantized first: ``class_name`` becomes a class in the decorating scope (the module, for
    a class defined at module level) whose
    instances hold the other arguments, so it can be passed to ``QuantConfig`` like the
    built-in quanters; each quantized tensor gets its own layer, built with
    ``target(layer, *args, **kwargs)``.

    Args:
        class_name (str): the name of the factory class to declare.

    Returns:
        The decorator; it returns the decorated class unchanged.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> from fw.quantization import BaseQuanter, QuantConfig, quanter
            >>> @quanter("HalfQuanter")
            ... class HalfQuanterLayer(BaseQuanter):
            ...     def __init__(self, layer, scale=0.5):
            ...         super().__init__()
            ...         self.scale = scale
            ...     def forward(self, x):
            ...         return x * self.scale
            >>> HalfQuanter(scale=0.25)
            HalfQuanter(scale=0.25)
            >>> config = QuantConfig(activation=HalfQuanter(scale=0.25), weight=None)
    """
    if not isinstance(class_name, str) or not class_name.isidentifier():
        raise ValueError(f"fw.quantization.quanter: 'class_name' must be an identifier, "
                         f"got {class_name!r}")

    def declare(target):
        if not (isinstance(target, type) and issubclass(target, BaseQuanter)):
            raise TypeError(f"fw.quantization.quanter({class_name!r}): decorate a subclass of "
                            f"BaseQuanter, got {target!r}")
        factory = type(class_name, (_DeclaredQuanterFactory,),
                       {"_target": target, "__module__": target.__module__,
                        "__doc__": f"Factory of {target.__qualname__} (fw.quantization.quanter)."})
        # declared where the class is defined (Paddle does the same): the decorating
        # scope's globals, which are the module's for a class defined at module level
        sys._getframe(1).f_globals[class_name] = factory
        return target

    return declare
