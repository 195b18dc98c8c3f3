"""PTQ and QAT: put observers/quanters into a model, then convert it to the QDQ form.

Paddle 3.x's ``paddle.quantization.PTQ(config)`` / ``QAT(config)``:
``quantize(model, inplace=False)`` returns a model whose quantizable layers (Conv2D and
Linear, or what ``config.add_qat_layer_mapping`` adds) are wrapped with the observers
(PTQ: run calibration batches through it in eval mode) or quanters (QAT: train it; the
fake quantization's gradient is the straight-through estimator); ``convert(model,
inplace=False)`` replaces each wrapper by its deployable form (int8 weights +
``dequantize_linear``, the input through ``quantize_linear`` -> ``dequantize_linear``),
which ``fw.jit.save`` writes as a QDQ program.
"""

from __future__ import annotations

import copy

import fw.nn as nn
from fw.quantization.config import QuantConfig
from fw.quantization.layers import _Quanted

__all__ = ["PTQ", "QAT", "Quantization"]


def _replace(model, fn):
    """Replace sublayers: fn(name, layer) -> a new layer or None (keep, recurse)."""
    count = 0

    def visit(parent, prefix):
        nonlocal count
        for key, child in list(parent.named_children()):
            name = f"{prefix}.{key}" if prefix else key
            new = fn(name, child)
            if new is not None:
                parent.add_sublayer(key, new)
                count += 1
            else:
                visit(child, name)

    visit(model, "")
    return count


class Quantization:
    """What PTQ and QAT share: the config and `convert`."""

    def __init__(self, config):
        if not isinstance(config, QuantConfig):
            raise TypeError(f"{type(self).__name__}: 'config' must be a QuantConfig, got "
                            f"{type(config).__name__}")
        self._config = config

    def _wrap(self, model, inplace):
        if not isinstance(model, nn.Layer):
            raise TypeError(f"{type(self).__name__}.quantize: 'model' must be a Layer, got "
                            f"{type(model).__name__}")
        m = model if inplace else copy.deepcopy(model)
        if isinstance(m, _Quanted):
            raise ValueError(f"{type(self).__name__}.quantize: the model is already quantized")

        def wrap(name, layer):
            if isinstance(layer, _Quanted):
                raise ValueError(f"{type(self).__name__}.quantize: sublayer {name!r} is already "
                                 "quantized")
            hit = self._config._config_for(name, layer)
            if hit is None:
                return None
            wrapper, cfg = hit
            return wrapper(layer, cfg)

        n = _replace(m, wrap)
        if n == 0:
            raise ValueError(f"{type(self).__name__}.quantize: no layer of the model matches the "
                             f"config (quantizable types: "
                             f"{[t.__name__ for t in self._config.qat_layer_mappings]})")
        return m

    def convert(self, model, inplace=False, remain_weight=False):
        """Replace each quantized wrapper by its deployable QDQ form (int8 weights). With
        ``remain_weight=True`` the weights stay float (only the QDQ of activations)."""
        m = model if inplace else copy.deepcopy(model)

        def conv(name, layer):
            if not isinstance(layer, _Quanted):
                return None
            if remain_weight:
                layer.weight_quanter = None
            return layer._convert()

        if _replace(m, conv) == 0:
            raise ValueError(f"{type(self).__name__}.convert: the model has no quantized layers "
                             "(call quantize first)")
        m.eval()
        return m


class PTQ(Quantization):
    """Post-training quantization: observers collect ranges on calibration batches.

    >>> import fw, fw.nn as nn
    >>> from fw.quantization import PTQ, QuantConfig
    >>> from fw.quantization.observers import AbsmaxObserver
    >>> ptq = PTQ(QuantConfig(activation=AbsmaxObserver(), weight=AbsmaxObserver()))
    >>> qm = ptq.quantize(nn.Sequential(nn.Linear(4, 2)))
    >>> _ = qm(fw.randn([8, 4]))          # calibration
    >>> deployable = ptq.convert(qm)
    """

    def quantize(self, model, inplace=False):
        m = self._wrap(model, inplace)
        m.eval()
        return m


class QAT(Quantization):
    """Quantization-aware training: quanters fake-quantize weights and activations in
    the forward pass; train the returned model as usual, then `convert` it."""

    def quantize(self, model, inplace=False):
        m = self._wrap(model, inplace)
        m.train()
        return m
