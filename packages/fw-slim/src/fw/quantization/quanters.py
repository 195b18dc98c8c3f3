"""Quanters for quantization-aware training (QAT): each fake-quantizes what passes
through it with the ``fake_quantize_dequantize`` op, whose gradient is the
straight-through estimator (and LSQ's for a learnable scale).

- ``FakeQuanterWithAbsMaxObserver(moving_rate=0.9, bit_length=8)`` (Paddle's
  ``paddle.quantization.quanters`` name and arguments): per-tensor, the scale is a
  moving average of each training batch's absmax (Paddle's ``moving_average_abs_max``:
  ``state = rate * state + 1``, ``accum = rate * accum + absmax``, ``scale = accum /
  state / qmax``); in eval mode the last scale is used.
- ``FakeQuanterChannelWiseAbsMaxObserver(bit_length=8, quant_axis=None)`` (PaddleSlim's
  name): per-channel absmax of the current values; for weights.
- ``LSQQuanter(bit_length=8, per_channel=False, quant_axis=None)``: the scale is a
  parameter trained with LSQ's gradient (Esser et al. 2020), initialised to
  ``2 * mean|x| / sqrt(qmax)`` on the first batch, its gradient scaled by
  ``1 / sqrt(numel * qmax)`` as the paper prescribes.
"""

from __future__ import annotations

import math

import numpy as np

import fw
from fw.core.ops import call
from fw.quantization.base import BaseQuanter, QuanterFactory

__all__ = ["FakeQuanterWithAbsMaxObserver", "FakeQuanterChannelWiseAbsMaxObserver", "LSQQuanter",
           "FakeQuanterWithAbsMaxObserverLayer", "FakeQuanterChannelWiseAbsMaxObserverLayer",
           "LSQQuanterLayer"]


def _fake(x, scale, zp, axis, qmin, qmax):
    return call("fake_quantize_dequantize", x, scale, zp, axis=axis, qmin=qmin, qmax=qmax)


def _channel_absmax(a, axis):
    if axis == -1:
        return np.array([np.abs(a).max() if a.size else 0.0])
    return np.abs(np.moveaxis(a, axis, 0).reshape(a.shape[axis], -1)).max(axis=1)


class FakeQuanterWithAbsMaxObserverLayer(BaseQuanter):
    """Fake quantization (quantize, then dequantize; straight-through gradient) with a
    per-tensor scale: in training a moving average of each batch's absmax / qmax.

    Args:
        moving_rate (float, optional): the weight of the history. Default: 0.9.
        bit_length (int, optional): the integer width, 2 to 8. Default: 8.
        dtype (str, optional): accepted for Paddle's API. Default: "float32".
        name (str, optional): accepted for Paddle's API. Default: None.

    Examples:
        >>> import fw
        >>> from fw.quantization.quanters import FakeQuanterWithAbsMaxObserverLayer
        >>> q = FakeQuanterWithAbsMaxObserverLayer()
        >>> y = q(fw.to_tensor([-1.0, 0.3, 1.0]))
        >>> [round(v, 4) for v in y.tolist()]     # 0.3 lands on the grid of step 1/127
        [-1.0, 0.2992, 1.0]
    """
    def __init__(self, moving_rate=0.9, bit_length=8, dtype="float32", name=None):
        super().__init__(bit_length, True, -1)
        self._rate = moving_rate
        self._state = 0.0
        self._accum = 0.0

    def forward(self, x):
        if self.training or self._scale is None:
            amax = float(np.abs(x.numpy()).max()) if x.size else 0.0
            self._state = self._rate * self._state + 1
            self._accum = self._rate * self._accum + amax
            s = self._accum / self._state / self.qmax
            self._scale = np.array([s if s > 0 else 1.0], np.float32)
            self._zero_point = np.zeros(1, np.int32)
        return _fake(x, fw.to_tensor(self._scale), fw.to_tensor(self._zero_point), -1, self.qmin,
                     self.qmax)


class FakeQuanterChannelWiseAbsMaxObserverLayer(BaseQuanter):
    """Fake quantization with one scale per channel along `quant_axis` (absmax / qmax of
    the current tensor): the quanter for weights.

    Args:
        bit_length (int, optional): the integer width, 2 to 8. Default: 8.
        quant_axis (int, optional): the channel axis. Default: 0.
        dtype (str, optional): accepted for Paddle's API. Default: "float32".
        name (str, optional): accepted for Paddle's API. Default: None.

    Examples:
        >>> import fw
        >>> from fw.quantization.quanters import FakeQuanterChannelWiseAbsMaxObserverLayer
        >>> q = FakeQuanterChannelWiseAbsMaxObserverLayer(quant_axis=0)
        >>> _ = q(fw.to_tensor([[-2.0, 1.0], [0.5, 4.0]]))
        >>> (q.scales() * 127).round(4).tolist()
        [2.0, 4.0]
    """
    PER_CHANNEL = True

    def __init__(self, bit_length=8, quant_axis=0, dtype="float32", name=None):
        super().__init__(bit_length, True, quant_axis)

    def forward(self, x):
        amax = _channel_absmax(np.asarray(x.numpy(), np.float64), self._axis)
        self._scale = np.where(amax > 0, amax / self.qmax, 1.0).astype(np.float32)
        self._zero_point = np.zeros(self._scale.shape, np.int32)
        return _fake(x, fw.to_tensor(self._scale), fw.to_tensor(self._zero_point),
                     max(self._axis, 0), self.qmin, self.qmax)


class LSQQuanterLayer(BaseQuanter):
    """Learned-step-size fake quantization: the scale is a parameter (``self.scale``),
    initialised on the first batch to 2 * mean|x| / sqrt(qmax) and trained with a
    gradient scaled by 1 / sqrt(N * qmax), as in LSQ.

    Args:
        bit_length (int, optional): the integer width, 2 to 8. Default: 8.
        per_channel (bool, optional): one scale per channel. Default: False.
        quant_axis (int, optional): the channel axis when per-channel. Default: 0.
        channels (int, optional): the number of channels (the scale's size). Default: 1.

    Examples:
        >>> import fw
        >>> from fw.quantization.quanters import LSQQuanterLayer
        >>> q = LSQQuanterLayer()
        >>> y = q(fw.to_tensor([[-2.0, 1.0], [0.5, 4.0]]))
        >>> y.shape, q.scale.shape
        ([2, 2], [1])
    """
    PER_CHANNEL = True  # takes the layer's channel axis when per_channel is set

    def __init__(self, bit_length=8, per_channel=False, quant_axis=0, channels=1):
        super().__init__(bit_length, True, quant_axis if per_channel else -1)
        # created now (so an optimizer made right after quantize() trains it), given
        # its LSQ initial value on the first batch
        self.scale = self.create_parameter([channels if per_channel else 1], dtype="float32")
        self._initialised = False

    def forward(self, x):
        if not self._initialised:
            a = np.asarray(x.numpy(), np.float64)
            if self._axis == -1:
                m = np.array([np.abs(a).mean() if a.size else 1.0])
            else:
                m = np.abs(np.moveaxis(a, self._axis, 0).reshape(a.shape[self._axis], -1)).mean(1)
            if m.shape != tuple(self.scale.shape):
                raise ValueError(f"LSQQuanter: {m.size} channels along axis {self._axis}, but "
                                 f"the scale has {self.scale.shape[0]}")
            init = np.where(m > 0, 2 * m / math.sqrt(self.qmax), 1e-3).astype(np.float32)
            self.scale.set_value(fw.to_tensor(init))
            self._initialised = True
        # LSQ's gradient scale g = 1/sqrt(N * qmax): the forward sees s, the backward g*ds
        n = x.size // (1 if self._axis == -1 else x.shape[self._axis])
        g = 1.0 / math.sqrt(max(n, 1) * self.qmax)
        s = self.scale * g + (self.scale - self.scale * g).detach()
        s = fw.clip(s, min=1e-8)
        zp = fw.zeros(self.scale.shape, "int32")
        return _fake(x, s, zp, max(self._axis, 0), self.qmin, self.qmax)

    def scales(self):
        """The learned scales (clipped to at least 1e-8).

        Returns:
            numpy.ndarray: float32, one per channel (or one).

        Examples:
            >>> import fw
            >>> from fw.quantization.quanters import LSQQuanterLayer
            >>> q = LSQQuanterLayer()
            >>> _ = q(fw.to_tensor([[-2.0, 1.0], [0.5, 4.0]]))
            >>> q.scales().shape
            (1,)
        """
        if not self._initialised:
            raise RuntimeError("LSQQuanter: no values seen yet (train before convert)")
        return np.maximum(np.asarray(self.scale.numpy(), np.float32), 1e-8)

    def zero_points(self):
        """Zero points: LSQ is symmetric, so all 0.

        Returns:
            numpy.ndarray: int32 zeros aligned with `scales`.

        Examples:
            >>> import fw
            >>> from fw.quantization.quanters import LSQQuanterLayer
            >>> q = LSQQuanterLayer()
            >>> _ = q(fw.to_tensor([1.0, -1.0]))
            >>> q.zero_points().tolist()
            [0]
        """
        return np.zeros(self.scales().shape, np.int32)


def FakeQuanterWithAbsMaxObserver(moving_rate=0.9, bit_length=8, dtype="float32",  # noqa: N802
                                  name=None):
    """Per-tensor fake quanter with a moving-average absmax scale (Paddle's name).

    Args:
        moving_rate (float, optional): the weight of the history. Default: 0.9.
        bit_length (int, optional): the integer width, 2 to 8. Default: 8.
        dtype (str, optional): accepted for Paddle's API. Default: "float32".
        name (str, optional): accepted for Paddle's API. Default: None.

    Returns:
        QuanterFactory: the recipe; `QAT` makes one quanter layer per tensor from it.

    Examples:
        >>> import fw
        >>> from fw.quantization import QuantConfig
        >>> from fw.quantization.quanters import FakeQuanterWithAbsMaxObserver
        >>> q = FakeQuanterWithAbsMaxObserver(moving_rate=0.9)
        >>> config = QuantConfig(activation=q, weight=q)
        >>> q.per_channel
        False
    """
    return QuanterFactory(FakeQuanterWithAbsMaxObserverLayer, moving_rate=moving_rate,
                          bit_length=bit_length, dtype=dtype, name=name)


def FakeQuanterChannelWiseAbsMaxObserver(bit_length=8, quant_axis=None,  # noqa: N802
                                         dtype="float32", name=None):
    """Per-channel absmax fake quanter (for weights; quant_axis None: the layer's
    output-channel axis).

    Args:
        bit_length (int, optional): the integer width, 2 to 8. Default: 8.
        quant_axis (int, optional): the channel axis; None: the layer's. Default: None.
        dtype (str, optional): accepted for Paddle's API. Default: "float32".
        name (str, optional): accepted for Paddle's API. Default: None.

    Returns:
        QuanterFactory: the recipe; `QAT` makes one quanter layer per tensor from it.

    Examples:
        >>> import fw
        >>> from fw.quantization.quanters import FakeQuanterChannelWiseAbsMaxObserver
        >>> FakeQuanterChannelWiseAbsMaxObserver().per_channel
        True
    """
    return QuanterFactory(FakeQuanterChannelWiseAbsMaxObserverLayer, bit_length=bit_length,
                          quant_axis=quant_axis, dtype=dtype, name=name)


def LSQQuanter(bit_length=8, per_channel=False, quant_axis=None):  # noqa: N802
    """Learned-step-size quanter (Esser et al. 2020, LSQ): the scale is a parameter
    trained with the model.

    Args:
        bit_length (int, optional): the integer width, 2 to 8. Default: 8.
        per_channel (bool, optional): one scale per output channel. Default: False.
        quant_axis (int, optional): the channel axis; None: the layer's. Default: None.

    Returns:
        QuanterFactory: the recipe; `QAT` makes one quanter layer per tensor from it.

    Examples:
        >>> import fw
        >>> from fw.quantization.quanters import LSQQuanter
        >>> LSQQuanter(per_channel=True)
        LSQQuanterLayer(bit_length=8, per_channel=True, quant_axis=None)
    """
    return QuanterFactory(LSQQuanterLayer, bit_length=bit_length, per_channel=per_channel,
                          quant_axis=quant_axis)
