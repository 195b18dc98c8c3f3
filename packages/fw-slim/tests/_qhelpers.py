"""Shared helpers of the fw-slim quantization tests."""

import os

import numpy as np

import fw
import fw.nn as nn
from fw.core.ops import call
from fw.quantization.layers import _Quanted


class SmallNet(nn.Layer):
    def __init__(self, c=4, side=6, hidden=16):
        super().__init__()
        self.conv = nn.Conv2D(1, c, 3, padding=1)
        self.relu = nn.ReLU()
        self.fc1 = nn.Linear(c * side * side, hidden)
        self.fc2 = nn.Linear(hidden, 3)

    def forward(self, x):
        h = self.relu(self.conv(x))
        return self.fc2(self.relu(self.fc1(fw.flatten(h, 1))))


class _Fake(nn.Layer):
    """Fake quantization with a finished observer's parameters."""

    def __init__(self, obs, axis):
        super().__init__()
        self.s = fw.to_tensor(np.asarray(obs.scales(), np.float32).reshape(-1))
        self.z = fw.to_tensor(np.asarray(obs.zero_points(), np.int32).reshape(-1))
        self.axis, self.qmin, self.qmax = (obs.quant_axis() if self.s.size > 1 else axis,
                                           obs.qmin, obs.qmax)

    def forward(self, x):
        return call("fake_quantize_dequantize", x, self.s, self.z, axis=self.axis,
                    qmin=self.qmin, qmax=self.qmax)


def fake_quant_model(quantized):
    """The calibrated PTQ model with every observer replaced by fake quantization."""
    import copy

    m = copy.deepcopy(quantized)
    for _, layer in m.named_sublayers():
        if isinstance(layer, _Quanted):
            if layer.weight_quanter is not None:
                layer.weight_quanter = _Fake(layer.weight_quanter, layer.AXIS)
            if layer.activation_quanter is not None:
                layer.activation_quanter = _Fake(layer.activation_quanter, -1)
    m.eval()
    return m


def save_and_predict(model, path, x, shape):
    """fw.jit.save the model and run the file with fw.inference's Predictor."""
    import fw.inference as infer
    import fw.jit
    from fw.static import InputSpec

    spec = [InputSpec([None] + list(shape), "float32", name="x")]
    file = fw.jit.save(fw.jit.to_static(model, input_spec=spec), os.fspath(path),
                       input_spec=spec)
    pred = infer.create_predictor(infer.Config(file))
    (out,) = pred.run([x])
    return file, np.asarray(out)
