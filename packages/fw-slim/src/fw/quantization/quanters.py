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
    PER_CHANNEL = True  # takes the layer's channel axis when per_channel is set

    def __init__(self, bit_length=8, per_channel=False, quant_axis=0):
        super().__init__(bit_length, True, quant_axis if per_channel else -1)
        self.scale = None  # a Parameter, created on the first batch

    def forward(self, x):
        if self.scale is None:
            a = np.asarray(x.numpy(), np.float64)
            if self._axis == -1:
                m = np.array([np.abs(a).mean() if a.size else 1.0])
            else:
                m = np.abs(np.moveaxis(a, self._axis, 0).reshape(a.shape[self._axis], -1)).mean(1)
            init = np.where(m > 0, 2 * m / math.sqrt(self.qmax), 1e-3).astype(np.float32)
            self.scale = self.create_parameter(list(init.shape), dtype="float32")
            self.scale.set_value(fw.to_tensor(init))
        # LSQ's gradient scale g = 1/sqrt(N * qmax): the forward sees s, the backward g*ds
        n = x.size // (1 if self._axis == -1 else x.shape[self._axis])
        g = 1.0 / math.sqrt(max(n, 1) * self.qmax)
        s = self.scale * g + (self.scale - self.scale * g).detach()
        s = fw.clip(s, min=1e-8)
        zp = fw.zeros(self.scale.shape, "int32")
        return _fake(x, s, zp, max(self._axis, 0), self.qmin, self.qmax)

    def scales(self):
        if self.scale is None:
            raise RuntimeError("LSQQuanter: no values seen yet (train before convert)")
        return np.maximum(np.asarray(self.scale.numpy(), np.float32), 1e-8)

    def zero_points(self):
        return np.zeros(self.scales().shape, np.int32)


def FakeQuanterWithAbsMaxObserver(moving_rate=0.9, bit_length=8, dtype="float32",  # noqa: N802
                                  name=None):
    """Per-tensor fake quanter with a moving-average absmax scale (Paddle's name)."""
    return QuanterFactory(FakeQuanterWithAbsMaxObserverLayer, moving_rate=moving_rate,
                          bit_length=bit_length, dtype=dtype, name=name)


def FakeQuanterChannelWiseAbsMaxObserver(bit_length=8, quant_axis=None,  # noqa: N802
                                         dtype="float32", name=None):
    """Per-channel absmax fake quanter (for weights; quant_axis None: the layer's)."""
    return QuanterFactory(FakeQuanterChannelWiseAbsMaxObserverLayer, bit_length=bit_length,
                          quant_axis=quant_axis, dtype=dtype, name=name)


def LSQQuanter(bit_length=8, per_channel=False, quant_axis=None):  # noqa: N802
    """Learned-step-size quanter (the scale is trained)."""
    return QuanterFactory(LSQQuanterLayer, bit_length=bit_length, per_channel=per_channel,
                          quant_axis=quant_axis)
