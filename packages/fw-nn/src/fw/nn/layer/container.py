"""Container layers: `Sequential`, `LayerList`, `LayerDict`, `ParameterList`,
`ParameterDict`. Their items are registered sublayers/parameters named by
position (``"0"``, ``"1"``, …) or by key, so they appear in `state_dict` as
``"layers.0.weight"``."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Mapping

from fw.nn.layer.layers import Layer
from fw.nn.parameter import Parameter

__all__ = ["Sequential", "LayerList", "LayerDict", "ParameterList", "ParameterDict"]


def _norm_index(i, n, what):
    if not isinstance(i, int):
        i = int(i)
    if i < -n or i >= n:
        raise IndexError(f"{what}: index {i} is out of range for {n} items")
    return i + n if i < 0 else i


class Sequential(Layer):
    """Runs its sublayers one after another.

    Args:
        *layers: Layers; or ``(name, layer)`` pairs; or one OrderedDict of them.

    >>> import fw
    >>> net = fw.nn.Sequential(fw.nn.Linear(4, 8), fw.nn.ReLU(), fw.nn.Linear(8, 2))
    >>> net(fw.ones([3, 4])).shape
    [3, 2]
    >>> type(net[0:2]).__name__, len(net)
    ('Sequential', 3)
    """

    def __init__(self, *layers):
        super().__init__()
        if len(layers) == 1 and isinstance(layers[0], Mapping):
            items = list(layers[0].items())
        elif layers and all(isinstance(x, (list, tuple)) for x in layers):
            items = [tuple(x) for x in layers]
        else:
            items = [(str(i), x) for i, x in enumerate(layers)]
        for name, layer in items:
            self.add_sublayer(str(name), layer)

    def __getitem__(self, idx):
        keys = list(self._sub_layers)
        if isinstance(idx, slice):
            return Sequential(OrderedDict((k, self._sub_layers[k]) for k in keys[idx]))
        if isinstance(idx, str):
            return self._sub_layers[idx]
        return self._sub_layers[keys[_norm_index(idx, len(keys), "Sequential")]]

    def __setitem__(self, idx, layer):
        keys = list(self._sub_layers)
        key = idx if isinstance(idx, str) else keys[_norm_index(idx, len(keys), "Sequential")]
        self.add_sublayer(key, layer)

    def __delitem__(self, idx):
        keys = list(self._sub_layers)
        sel = keys[idx] if isinstance(idx, slice) else [
            keys[_norm_index(idx, len(keys), "Sequential")]]
        for k in sel:
            del self._sub_layers[k]

    def __len__(self) -> int:
        return len(self._sub_layers)

    def __iter__(self):
        return iter(self._sub_layers.values())

    def append(self, layer) -> Sequential:
        self.add_sublayer(str(len(self._sub_layers)), layer)
        return self

    def insert(self, index: int, layer) -> Sequential:
        items = list(self._sub_layers.values())
        n = len(items)
        index = max(0, min(n, index + n if index < 0 else index))
        items.insert(index, layer)
        self._sub_layers.clear()
        for i, x in enumerate(items):
            self.add_sublayer(str(i), x)
        return self

    def extend(self, layers) -> Sequential:
        for x in layers:
            self.append(x)
        return self

    def forward(self, input):
        for layer in self._sub_layers.values():
            input = layer(input)
        return input


class LayerList(Layer):
    """A list of sublayers (registered, so their parameters are the owner's).

    >>> import fw
    >>> layers = fw.nn.LayerList([fw.nn.Linear(2, 2) for _ in range(3)])
    >>> len(layers), len(layers.parameters())
    (3, 6)
    """

    def __init__(self, sublayers: Iterable | None = None):
        super().__init__()
        if sublayers is not None:
            for i, layer in enumerate(sublayers):
                self.add_sublayer(str(i), layer)

    def _items(self):
        return list(self._sub_layers.values())

    def _reset(self, items):
        self._sub_layers.clear()
        for i, x in enumerate(items):
            self.add_sublayer(str(i), x)

    def __getitem__(self, idx):
        items = self._items()
        if isinstance(idx, slice):
            return type(self)(items[idx])
        return items[_norm_index(idx, len(items), "LayerList")]

    def __setitem__(self, idx, sublayer):
        items = self._items()
        self.add_sublayer(str(_norm_index(idx, len(items), "LayerList")), sublayer)

    def __delitem__(self, idx):
        items = self._items()
        if isinstance(idx, slice):
            del items[idx]
        else:
            del items[_norm_index(idx, len(items), "LayerList")]
        self._reset(items)

    def __len__(self) -> int:
        return len(self._sub_layers)

    def __iter__(self):
        return iter(self._items())

    def __add__(self, other) -> LayerList:
        return type(self)(self._items() + list(other))

    def append(self, sublayer) -> LayerList:
        self.add_sublayer(str(len(self)), sublayer)
        return self

    def insert(self, index: int, sublayer) -> None:
        items = self._items()
        items.insert(index, sublayer)
        self._reset(items)

    def extend(self, sublayers) -> LayerList:
        for x in sublayers:
            self.append(x)
        return self

    def pop(self, index: int = -1):
        items = self._items()
        x = items.pop(_norm_index(index, len(items), "LayerList"))
        self._reset(items)
        return x


class LayerDict(Layer):
    """An ordered dict of sublayers.

    >>> import fw
    >>> d = fw.nn.LayerDict({"a": fw.nn.ReLU(), "b": fw.nn.Tanh()})
    >>> list(d.keys())
    ['a', 'b']
    """

    def __init__(self, sublayers=None):
        super().__init__()
        if sublayers is not None:
            self.update(sublayers)

    def __getitem__(self, key):
        return self._sub_layers[key]

    def __setitem__(self, key, sublayer):
        self.add_sublayer(key, sublayer)

    def __delitem__(self, key):
        del self._sub_layers[key]

    def __len__(self) -> int:
        return len(self._sub_layers)

    def __iter__(self):
        return iter(self._sub_layers)

    def __contains__(self, key) -> bool:
        return key in self._sub_layers

    def clear(self) -> None:
        self._sub_layers.clear()

    def pop(self, key):
        return self._sub_layers.pop(key)

    def keys(self):
        return self._sub_layers.keys()

    def items(self):
        return self._sub_layers.items()

    def values(self):
        return self._sub_layers.values()

    def update(self, sublayers) -> None:
        if isinstance(sublayers, Mapping):
            pairs = sublayers.items()
        else:
            pairs = []
            for kv in sublayers:
                if not isinstance(kv, (list, tuple)) or len(kv) != 2:
                    raise ValueError("LayerDict.update: expected a mapping or (key, layer) pairs")
                pairs.append(kv)
        for k, v in pairs:
            self.add_sublayer(k, v)


class ParameterList(Layer):
    """A list of parameters registered under ``"0"``, ``"1"``, …

    >>> import fw
    >>> ps = fw.nn.ParameterList([fw.create_parameter([2], "float32") for _ in range(2)])
    >>> len(ps.parameters())
    2
    """

    def __init__(self, parameters: Iterable | None = None):
        super().__init__()
        if parameters is not None:
            for p in parameters:
                self.append(p)

    def _items(self):
        return list(self._parameters.values())

    def __getitem__(self, idx):
        items = self._items()
        if isinstance(idx, slice):
            return ParameterList(items[idx])
        return items[_norm_index(idx, len(items), "ParameterList")]

    def __setitem__(self, idx, param):
        n = len(self._parameters)
        self._parameters[str(_norm_index(idx, n, "ParameterList"))] = _as_param(param)

    def __len__(self) -> int:
        return len(self._parameters)

    def __iter__(self):
        return iter(self._items())

    def append(self, parameter) -> ParameterList:
        self._parameters[str(len(self._parameters))] = _as_param(parameter)
        return self

    def extend(self, parameters) -> ParameterList:
        for p in parameters:
            self.append(p)
        return self


class ParameterDict(Layer):
    """An ordered dict of parameters."""

    def __init__(self, parameters=None):
        super().__init__()
        if parameters is not None:
            self.update(parameters)

    def __getitem__(self, key):
        return self._parameters[key]

    def __setitem__(self, key, param):
        self._parameters[str(key)] = _as_param(param)

    def __delitem__(self, key):
        del self._parameters[key]

    def __len__(self) -> int:
        return len(self._parameters)

    def __iter__(self):
        return iter(self._parameters)

    def __contains__(self, key) -> bool:
        return key in self._parameters

    def keys(self):
        return self._parameters.keys()

    def items(self):
        return self._parameters.items()

    def values(self):
        return self._parameters.values()

    def pop(self, key):
        return self._parameters.pop(key)

    def clear(self) -> None:
        self._parameters.clear()

    def update(self, parameters) -> None:
        pairs = parameters.items() if isinstance(parameters, Mapping) else parameters
        for k, v in pairs:
            self[k] = v


def _as_param(p):
    if isinstance(p, Parameter):
        return p
    raise TypeError(f"expected a Parameter, got {type(p).__name__}; create one with "
                    f"fw.create_parameter or fw.nn.Parameter")
