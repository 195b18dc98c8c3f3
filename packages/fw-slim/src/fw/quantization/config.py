"""QuantConfig: which observer/quanter each layer's activation and weight get.

Paddle 3.x's ``paddle.quantization.QuantConfig(activation, weight)``: a global default,
overridden per layer type (``add_type_config``), per layer name (``add_name_config``,
the names of ``model.named_sublayers()``) and per layer object (``add_layer_config``),
in that order of increasing priority. A layer whose resolved config has neither an
activation nor a weight factory is left in float (so ``add_name_config("fc",
activation=None, weight=None)`` skips "fc"; `skip` does the same for a list of names).
``add_qat_layer_mapping(source, target)`` says which wrapper quantizes a layer type.
"""

from __future__ import annotations

from dataclasses import dataclass

import fw.nn as nn

__all__ = ["QuantConfig", "SingleLayerConfig"]


@dataclass
class SingleLayerConfig:
    """The quantizers of one layer: a factory for its input activations and one for
    its weights (either None: that tensor stays float).

    Args:
        activation (ObserverFactory|QuanterFactory, optional): for the layer's inputs.
            Default: None.
        weight (ObserverFactory|QuanterFactory, optional): for the layer's weight.
            Default: None.

    Examples:
        >>> import fw
        >>> from fw.quantization import SingleLayerConfig
        >>> from fw.quantization.observers import AbsmaxObserver
        >>> SingleLayerConfig().empty
        True
        >>> SingleLayerConfig(weight=AbsmaxObserver()).empty
        False
    """
    activation: object = None
    weight: object = None

    @property
    def empty(self):
        """Whether neither an activation nor a weight quantizer is set.

        Examples:
            >>> import fw
            >>> from fw.quantization import SingleLayerConfig
            >>> SingleLayerConfig().empty
            True
        """
        return self.activation is None and self.weight is None


_UNSET = object()


def _as_list(v):
    return list(v) if isinstance(v, (list, tuple, set)) else [v]


class QuantConfig:
    """How to quantize a model: which layers, with which observers or quanters.

    A layer gets, from the most to the least specific, the config given for the layer
    object (`add_layer_config`), for its name (`add_name_config`), for its type
    (`add_type_config`), else the global one of the constructor. Only layer types with a
    quantized wrapper (``nn.Conv2D``, ``nn.Linear``, and those of
    `add_qat_layer_mapping`) are quantized.

    Args:
        activation (ObserverFactory|QuanterFactory, optional): the factory for the inputs
            of quantized layers; None keeps activations float. Default: None.
        weight (ObserverFactory|QuanterFactory, optional): the factory for their weights;
            None keeps weights float. Default: None.

    Examples:
        >>> import fw
        >>> import fw.nn as nn
        >>> from fw.quantization import QuantConfig
        >>> from fw.quantization.observers import AbsmaxObserver
        >>> cfg = QuantConfig(activation=AbsmaxObserver(), weight=AbsmaxObserver())
        >>> cfg.add_name_config("classifier.4", activation=None, weight=None)  # keep in float
        >>> sorted(t.__name__ for t in cfg.qat_layer_mappings)
        ['Conv2D', 'Linear']
    """

    def __init__(self, activation=None, weight=None):
        self._global = SingleLayerConfig(activation, weight)
        self._types: dict = {}
        self._names: dict = {}
        self._layers: dict = {}  # id(layer) -> config
        self._skip: set = set()
        from fw.quantization.layers import QuantedConv2D, QuantedLinear

        self._mapping = {nn.Conv2D: QuantedConv2D, nn.Linear: QuantedLinear}

    def add_layer_config(self, layer, activation=None, weight=None):
        """Set the config of these layer objects (the most specific rule).

        Args:
            layer (Layer|list[Layer]): the layer objects.
            activation (ObserverFactory|QuanterFactory, optional): for their inputs.
                Default: None.
            weight (ObserverFactory|QuanterFactory, optional): for their weights.
                Default: None.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> import fw.nn as nn
            >>> from fw.quantization import QuantConfig
            >>> from fw.quantization.observers import AbsmaxObserver
            >>> from fw.quantization import PTQ
            >>> net = nn.Sequential(nn.Linear(4, 3), nn.Linear(3, 2))
            >>> cfg = QuantConfig()                     # nothing by default
            >>> cfg.add_layer_config(net[0], weight=AbsmaxObserver())
            >>> [type(m).__name__ for m in PTQ(cfg).quantize(net).children()]
            ['QuantedLinear', 'Linear']
        """
        for lay in _as_list(layer):
            if not isinstance(lay, nn.Layer):
                raise TypeError(f"QuantConfig.add_layer_config: 'layer' must be a Layer or a "
                                f"list of Layers, got {type(lay).__name__}")
            self._layers[id(lay)] = SingleLayerConfig(activation, weight)

    def add_name_config(self, layer_name, activation=None, weight=None):
        """Set the config of the sublayers of these names (as
        ``model.named_sublayers()`` gives them).

        Args:
            layer_name (str|list[str]): the sublayer names.
            activation (ObserverFactory|QuanterFactory, optional): for their inputs.
                Default: None.
            weight (ObserverFactory|QuanterFactory, optional): for their weights.
                Default: None.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> import fw.nn as nn
            >>> from fw.quantization import QuantConfig
            >>> from fw.quantization.observers import AbsmaxObserver
            >>> from fw.quantization import PTQ
            >>> net = nn.Sequential(nn.Linear(4, 3), nn.Linear(3, 2))
            >>> cfg = QuantConfig(activation=AbsmaxObserver(), weight=AbsmaxObserver())
            >>> cfg.add_name_config("1", activation=None, weight=None)   # keep "1" float
            >>> [type(m).__name__ for m in PTQ(cfg).quantize(net).children()]
            ['QuantedLinear', 'Linear']
        """
        for n in _as_list(layer_name):
            if not isinstance(n, str):
                raise TypeError(f"QuantConfig.add_name_config: 'layer_name' must be a str or "
                                f"a list of str, got {type(n).__name__}")
            self._names[n] = SingleLayerConfig(activation, weight)

    def add_type_config(self, layer_type, activation=None, weight=None):
        """Set the config of every layer of these types.

        Args:
            layer_type (type|list[type]): Layer classes.
            activation (ObserverFactory|QuanterFactory, optional): for their inputs.
                Default: None.
            weight (ObserverFactory|QuanterFactory, optional): for their weights.
                Default: None.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> import fw.nn as nn
            >>> from fw.quantization import QuantConfig
            >>> from fw.quantization.observers import AbsmaxObserver
            >>> from fw.quantization import PTQ
            >>> net = nn.Sequential(nn.Conv2D(3, 4, 3), nn.Flatten(), nn.Linear(4, 2))
            >>> cfg = QuantConfig()
            >>> cfg.add_type_config(nn.Linear, activation=AbsmaxObserver(), weight=AbsmaxObserver())
            >>> [type(m).__name__ for m in PTQ(cfg).quantize(net).children()]
            ['Conv2D', 'Flatten', 'QuantedLinear']
        """
        for t in _as_list(layer_type):
            if not (isinstance(t, type) and issubclass(t, nn.Layer)):
                raise TypeError(f"QuantConfig.add_type_config: 'layer_type' must be a Layer "
                                f"class or a list of them, got {t!r}")
            self._types[t] = SingleLayerConfig(activation, weight)

    def add_qat_layer_mapping(self, source, target):
        """Quantize layers of type `source` with the wrapper class `target`
        (``target(layer, single_layer_config)``).

        Args:
            source (type): an ``fw.nn.Layer`` subclass.
            target (type): the quantized wrapper class.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> import fw.nn as nn
            >>> from fw.quantization import QuantConfig
            >>> class MyQuantedLinear(nn.Layer):
            ...     def __init__(self, layer, config):
            ...         super().__init__()
            ...         self.layer = layer
            ...     def forward(self, x):
            ...         return self.layer(x)
            >>> cfg = QuantConfig(activation=None, weight=None)
            >>> cfg.add_qat_layer_mapping(nn.Linear, MyQuantedLinear)
            >>> cfg.qat_layer_mappings[nn.Linear].__name__
            'MyQuantedLinear'
        """
        self._mapping[source] = target

    def skip(self, names):
        """Leave the sublayers of these names in float, whatever else matches them
        (fw's extension, used by `fw.slim.sensitivity`).

        Args:
            names (str|list[str]): sublayer names.

        Returns:
            QuantConfig: this config, for chaining.

        Examples:
            >>> import fw
            >>> import fw.nn as nn
            >>> from fw.quantization import QuantConfig
            >>> from fw.quantization.observers import AbsmaxObserver
            >>> from fw.quantization import PTQ
            >>> net = nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 2))
            >>> cfg = QuantConfig(activation=AbsmaxObserver(), weight=AbsmaxObserver()).skip("2")
            >>> [type(m).__name__ for m in PTQ(cfg).quantize(net).children()]
            ['QuantedLinear', 'ReLU', 'Linear']
        """
        self._skip.update(_as_list(names))
        return self

    @property
    def qat_layer_mappings(self):
        """Layer type -> the quantized wrapper class QAT/PTQ put in its place (Conv2D and
        Linear by default; `add_qat_layer_mapping` adds more).

        Examples:
            >>> import fw
            >>> import fw.nn as nn
            >>> from fw.quantization import QuantConfig
            >>> QuantConfig(None, None).qat_layer_mappings[nn.Linear].__name__
            'QuantedLinear'
        """
        return dict(self._mapping)

    def _layer_names(self, model):
        """{sublayer name: config} for the layer objects given to `add_layer_config`,
        resolved on the model before PTQ/QAT copy it (the copy has new objects)."""
        return {n: self._layers[id(lay)] for n, lay in model.named_sublayers()
                if id(lay) in self._layers}

    def _config_for(self, name, layer, by_layer=None):
        """The resolved config of one sublayer, or None when it stays in float."""
        if name in self._skip:
            return None
        wrapper = next((w for t, w in self._mapping.items() if type(layer) is t), None)
        if wrapper is None:
            return None
        cfg = (by_layer or {}).get(name) or self._layers.get(id(layer))
        if cfg is None:
            cfg = self._names.get(name)
        if cfg is None:
            cfg = next((c for t, c in self._types.items() if isinstance(layer, t)), None)
        if cfg is None:
            cfg = self._global
        return None if cfg.empty else (wrapper, cfg)

    def __repr__(self):
        return (f"QuantConfig(activation={self._global.activation!r}, "
                f"weight={self._global.weight!r}, types={len(self._types)}, "
                f"names={len(self._names)}, layers={len(self._layers)}, "
                f"skip={sorted(self._skip)})")
