"""The layers PTQ/QAT put in a model, and what `convert` turns them into.

``QuantedConv2D``/``QuantedLinear`` wrap a float layer: the activation observer/quanter
sees the layer's input, the weight observer/quanter its weight (per-channel on the
output-channel axis: 0 for Conv2D weights ``[O, I, kh, kw]``, 1 for Linear weights
``[in, out]``). With observers (PTQ) the values pass unchanged; with quanters (QAT)
they are fake-quantized.

``ConvertedConv2D``/``ConvertedLinear`` are the deployable form: the weight is stored
as int8 codes (a persistable buffer, so ``fw.jit.save`` writes 1 byte per weight)
followed by ``dequantize_linear``, and the input passes ``quantize_linear`` ->
``dequantize_linear`` with the calibrated activation scale: the QDQ pattern fw-inference's
int8 pass folds into int8 kernels. Run eagerly, a converted layer computes exactly the
fake-quantized layer.
"""

from __future__ import annotations

import numpy as np

import fw
import fw.nn as nn
import fw.nn.functional as F
from fw.core.ops import call

__all__ = ["QuantedConv2D", "QuantedLinear", "ConvertedConv2D", "ConvertedLinear",
           "WEIGHT_AXIS"]

WEIGHT_AXIS = {nn.Conv2D: 0, nn.Linear: 1}


class _Quanted(nn.Layer):
    AXIS = 0

    def __init__(self, layer, config):
        super().__init__()
        self._layer = layer
        self.weight_quanter = config.weight._instance(layer, self.AXIS) \
            if config.weight is not None else None
        self.activation_quanter = config.activation._instance(layer, -1) \
            if config.activation is not None else None
        if self.activation_quanter is not None and self.activation_quanter.quant_axis() != -1:
            raise ValueError(f"{type(self).__name__}: activations are quantized per tensor; "
                             f"{type(self.activation_quanter).__name__} is per-channel")

    @property
    def weight(self):
        return self._layer.weight

    @property
    def bias(self):
        return self._layer.bias

    def forward(self, x):
        if self.activation_quanter is not None:
            x = self.activation_quanter(x)
        w = self._layer.weight
        if self.weight_quanter is not None:
            w = self.weight_quanter(w)
        return self._run(x, w)

    def _convert(self):
        return self.CONVERTED.from_quanted(self)


def _qparams(q, what, layer_name):
    s = np.asarray(q.scales(), np.float32).reshape(-1)
    z = np.asarray(q.zero_points(), np.int32).reshape(-1)
    if not np.all(np.isfinite(s)) or np.any(s <= 0):
        raise ValueError(f"convert: {layer_name}'s {what} scale is not positive and finite: {s}")
    return s, z


class _Converted(nn.Layer):
    """int8 weight + dequantize_linear; the input through quantize/dequantize_linear."""

    AXIS = 0

    def _setup(self, quanted):
        layer = quanted._layer
        w = np.asarray(layer.weight.numpy(), np.float32)
        if quanted.weight_quanter is not None:
            wq = quanted.weight_quanter
            if isinstance(wq, nn.Layer) and not hasattr(wq, "_amax") and wq._scale is None:
                wq(layer.weight)  # a quanter that has not run: compute its scale now
            if hasattr(wq, "_amax") and wq._amax is None:
                wq(layer.weight)  # an observer that has not seen the weight yet
            s, z = _qparams(wq, "weight", type(layer).__name__)
            axis = wq.quant_axis() if s.size > 1 else self.AXIS
            q = call("quantize_linear", fw.to_tensor(w), fw.to_tensor(s), fw.to_tensor(z),
                     axis=axis, qmin=wq.qmin, qmax=wq.qmax)
            self.register_buffer("weight", q)
            self.register_buffer("weight_scale", fw.to_tensor(s))
            self.register_buffer("weight_zero_point", fw.to_tensor(z))
            self._waxis = axis
            self.weight_bits = wq.bit_length()
        else:
            self.weight = self.create_parameter(list(w.shape), dtype="float32")
            self.weight.set_value(fw.to_tensor(w))
            self._waxis = None
            self.weight_bits = None
        if layer.bias is not None:
            self.bias = self.create_parameter(list(layer.bias.shape), dtype="float32",
                                              is_bias=True)
            self.bias.set_value(layer.bias.detach())
        else:
            self.bias = None
        aq = quanted.activation_quanter
        if aq is not None:
            s, z = _qparams(aq, "activation", type(layer).__name__)
            self.register_buffer("act_scale", fw.to_tensor(s))
            self.register_buffer("act_zero_point", fw.to_tensor(z))
            self._arange = (aq.qmin, aq.qmax)
        else:
            self.act_scale = None
            self._arange = None

    def _input(self, x):
        if self.act_scale is None:
            return x
        q = call("quantize_linear", x, self.act_scale, self.act_zero_point, axis=-1,
                 qmin=self._arange[0], qmax=self._arange[1])
        return call("dequantize_linear", q, self.act_scale, self.act_zero_point, axis=-1)

    def _weight(self):
        if self._waxis is None:
            return self.weight
        return call("dequantize_linear", self.weight, self.weight_scale, self.weight_zero_point,
                    axis=self._waxis)

    def forward(self, x):
        return self._run(self._input(x), self._weight())

    def float_weight(self):
        """The float32 weight the stored codes stand for (NumPy)."""
        return np.asarray(self._weight().numpy())


class ConvertedConv2D(_Converted):
    AXIS = 0

    @classmethod
    def from_quanted(cls, quanted):
        self = cls()
        c = quanted._layer
        self._conv = dict(stride=c._stride, dilation=c._dilation, groups=c._groups,
                          data_format=c._data_format)
        self._pad = (c._explicit_pad, c._padding_mode, c._padding)
        self._setup(quanted)
        return self

    def _run(self, x, w):
        explicit, mode, pad = self._pad
        if explicit is not None:  # a non-zeros padding_mode: padded first, as Conv2D does
            x, pad = F.pad(x, explicit, mode=mode, data_format=self._conv["data_format"]), 0
        return F.conv2d(x, w, self.bias, padding=pad, **self._conv)


class ConvertedLinear(_Converted):
    AXIS = 1

    @classmethod
    def from_quanted(cls, quanted):
        self = cls()
        self._setup(quanted)
        return self

    def _run(self, x, w):
        return F.linear(x, w, self.bias)


class QuantedConv2D(_Quanted):
    AXIS = 0
    CONVERTED = ConvertedConv2D

    def _run(self, x, w):
        c = self._layer
        x, pad = c._padded(x)
        return F.conv2d(x, w, c.bias, c._stride, pad, c._dilation, c._groups, c._data_format)


class QuantedLinear(_Quanted):
    AXIS = 1
    CONVERTED = ConvertedLinear

    def _run(self, x, w):
        return F.linear(x, w, self._layer.bias)
