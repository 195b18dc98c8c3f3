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
        by_layer = self._config._layer_names(model)
        m = model if inplace else copy.deepcopy(model)
        if isinstance(m, _Quanted):
            raise ValueError(f"{type(self).__name__}.quantize: the model is already quantized")

        def wrap(name, layer):
            if isinstance(layer, _Quanted):
                raise ValueError(f"{type(self).__name__}.quantize: sublayer {name!r} is already "
                                 "quantized")
            hit = self._config._config_for(name, layer, by_layer)
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
        """Replace each quantized wrapper by its deployable QDQ form (int8 weights,
        quantize/dequantize around the activations) and switch the model to eval mode.

        Args:
            model (Layer): a model returned by `quantize` (calibrated or trained).
            inplace (bool, optional): change `model` itself instead of a copy. Default: False.
            remain_weight (bool, optional): keep the weights float (only the activations'
                QDQ). Default: False.

        Returns:
            Layer: the converted model, ready for ``fw.jit.save``.

        Examples:
            >>> import fw
            >>> import fw.nn as nn
            >>> from fw.quantization import PTQ, QuantConfig
            >>> from fw.quantization.observers import AbsmaxObserver
            >>> ptq = PTQ(QuantConfig(activation=AbsmaxObserver(), weight=AbsmaxObserver()))
            >>> qm = ptq.quantize(nn.Sequential(nn.Linear(4, 2)))
            >>> _ = qm(fw.randn([8, 4]))          # calibration
            >>> [type(m).__name__ for m in ptq.convert(qm).children()]
            ['ConvertedLinear']
        """
        m = model if inplace else copy.deepcopy(model)

        def conv(name, layer):
            if not isinstance(layer, _Quanted):
                return None
            if remain_weight:
                layer.weight_quanter = None
            try:
                return layer._convert()
            except (RuntimeError, ValueError) as e:
                raise type(e)(f"{type(self).__name__}.convert: layer {name!r} "
                              f"({type(layer._layer).__name__}): {e}") from None

        if _replace(m, conv) == 0:
            raise ValueError(f"{type(self).__name__}.convert: the model has no quantized layers "
                             "(call quantize first)")
        m.eval()
        return m


class PTQ(Quantization):
    """Post-training quantization: observers record the ranges of weights and
    activations while calibration batches run, then `convert` makes the int8 model.

    Args:
        config (QuantConfig): which layers to quantize, with which observers.

    Examples:
        >>> import fw
        >>> import fw.nn as nn
        >>> from fw.quantization import PTQ, QuantConfig
        >>> from fw.quantization.observers import AbsmaxObserver
        >>> ptq = PTQ(QuantConfig(activation=AbsmaxObserver(), weight=AbsmaxObserver()))
        >>> qm = ptq.quantize(nn.Sequential(nn.Linear(4, 2)))
        >>> _ = qm(fw.randn([8, 4]))          # calibration
        >>> deployable = ptq.convert(qm)
        >>> deployable(fw.ones([1, 4])).shape
        [1, 2]
    """

    def quantize(self, model, inplace=False):
        """Wrap the layers the config selects with observers (eval mode).

        Args:
            model (Layer): the float model.
            inplace (bool, optional): change `model` itself instead of a deep copy.
                Default: False.

        Returns:
            Layer: the model to calibrate (run a few batches through it), then `convert`.

        Examples:
            >>> import fw
            >>> import fw.nn as nn
            >>> from fw.quantization import PTQ, QuantConfig
            >>> from fw.quantization.observers import AbsmaxObserver
            >>> ptq = PTQ(QuantConfig(activation=AbsmaxObserver(), weight=AbsmaxObserver()))
            >>> qm = ptq.quantize(nn.Sequential(nn.Linear(4, 2), nn.ReLU()))
            >>> [type(m).__name__ for m in qm.children()]
            ['QuantedLinear', 'ReLU']
        """
        m = self._wrap(model, inplace)
        m.eval()
        return m


class QAT(Quantization):
    """Quantization-aware training: quanters fake-quantize weights and activations in
    the forward pass (straight-through gradients); train the returned model as usual,
    then `convert` it.

    Args:
        config (QuantConfig): which layers to quantize, with which quanters (observers
            given here are replaced by the matching quanters).

    Examples:
        >>> import fw
        >>> import fw.nn as nn
        >>> from fw.quantization import QAT, QuantConfig
        >>> from fw.quantization.quanters import FakeQuanterWithAbsMaxObserver
        >>> q = FakeQuanterWithAbsMaxObserver(moving_rate=0.9)
        >>> qat = QAT(QuantConfig(activation=q, weight=q))
        >>> qm = qat.quantize(nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 2)))
        >>> opt = fw.optimizer.SGD(0.1, parameters=qm.parameters())
        >>> loss = qm(fw.randn([8, 4])).mean()
        >>> loss.backward()
        >>> opt.step()
        >>> [type(m).__name__ for m in qat.convert(qm).children()]
        ['ConvertedLinear', 'ReLU', 'ConvertedLinear']
    """

    def quantize(self, model, inplace=False):
        """Wrap the layers the config selects with quanters (train mode kept).

        Args:
            model (Layer): the float model.
            inplace (bool, optional): change `model` itself instead of a deep copy.
                Default: False.

        Returns:
            Layer: the model to train, then `convert`.

        Examples:
            >>> import fw
            >>> import fw.nn as nn
            >>> from fw.quantization import QAT, QuantConfig
            >>> from fw.quantization.quanters import FakeQuanterWithAbsMaxObserver
            >>> q = FakeQuanterWithAbsMaxObserver()
            >>> qat = QAT(QuantConfig(activation=q, weight=q))
            >>> qm = qat.quantize(nn.Sequential(nn.Linear(4, 2)))
            >>> [type(m).__name__ for m in qm.children()]
            ['QuantedLinear']
        """
        from fw.quantization.base import BaseObserver

        m = self._wrap(model, inplace)
        for name, layer in m.named_sublayers():
            for q in (getattr(layer, "weight_quanter", None),
                      getattr(layer, "activation_quanter", None)):
                if isinstance(q, BaseObserver):
                    raise ValueError(f"QAT.quantize: layer {name!r} got the observer "
                                     f"{type(q).__name__}: QAT trains through quanters "
                                     "(fw.quantization.quanters); observers are for PTQ")
        m.train()
        return m
