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
    """A container that calls its sublayers one after another, each on the previous
    one's output.

    The sublayers are registered under their position (``"0"``, ``"1"``, ...) or the
    given names, so their parameters appear in `state_dict` as ``"0.weight"`` etc.
    Indexing with an int or a name returns a sublayer; a slice returns a new
    ``Sequential`` of the same sublayers.

    Args:
        *layers (Layer|tuple): the layers, or ``(name, layer)`` pairs, or one dict
            (e.g. an OrderedDict) of names to layers.

    Examples:
        >>> import fw
        >>> net = fw.nn.Sequential(fw.nn.Linear(4, 8), fw.nn.ReLU(), fw.nn.Linear(8, 2))
        >>> net(fw.ones([3, 4])).shape
        [3, 2]
        >>> len(net), type(net[0]).__name__, type(net[0:2]).__name__
        (3, 'Linear', 'Sequential')
        >>> named = fw.nn.Sequential(('fc', fw.nn.Linear(2, 2)), ('act', fw.nn.Tanh()))
        >>> list(named.state_dict())
        ['fc.weight', 'fc.bias']
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
        """Add ``layer`` at the end (registered under the next position).

        Args:
            layer (Layer): the layer to add.

        Returns:
            Sequential: self.

        Examples:
            >>> import fw
            >>> net = fw.nn.Sequential(fw.nn.Linear(2, 2))
            >>> len(net.append(fw.nn.ReLU()))
            2
        """
        self.add_sublayer(str(len(self._sub_layers)), layer)
        return self

    def insert(self, index: int, layer) -> Sequential:
        """Insert ``layer`` before position ``index`` and renumber the sublayers.

        Args:
            index (int): the position; negative counts from the end.
            layer (Layer): the layer to insert.

        Returns:
            Sequential: self.

        Examples:
            >>> import fw
            >>> net = fw.nn.Sequential(fw.nn.Linear(2, 2), fw.nn.Linear(2, 2))
            >>> _ = net.insert(1, fw.nn.ReLU())
            >>> [type(layer).__name__ for layer in net]
            ['Linear', 'ReLU', 'Linear']
        """
        items = list(self._sub_layers.values())
        n = len(items)
        index = max(0, min(n, index + n if index < 0 else index))
        items.insert(index, layer)
        self._sub_layers.clear()
        for i, x in enumerate(items):
            self.add_sublayer(str(i), x)
        return self

    def extend(self, layers) -> Sequential:
        """Append every layer of ``layers``.

        Args:
            layers (Iterable[Layer]): the layers to add.

        Returns:
            Sequential: self.

        Examples:
            >>> import fw
            >>> net = fw.nn.Sequential().extend([fw.nn.Linear(2, 2), fw.nn.ReLU()])
            >>> len(net)
            2
        """
        for x in layers:
            self.append(x)
        return self

    def forward(self, input):
        for layer in self._sub_layers.values():
            input = layer(input)
        return input


class LayerList(Layer):
    """A list of sublayers, registered so that their parameters belong to the owner
    (unlike a plain Python list). Supports indexing, slicing, ``len``, iteration,
    ``append``, ``insert``, ``extend`` and ``pop``; it has no ``forward``.

    Args:
        sublayers (Iterable[Layer], optional): the initial layers. Default: None.

    Examples:
        >>> import fw
        >>> class Stack(fw.nn.Layer):
        ...     def __init__(self):
        ...         super().__init__()
        ...         self.blocks = fw.nn.LayerList([fw.nn.Linear(4, 4) for _ in range(3)])
        ...     def forward(self, x):
        ...         for block in self.blocks:
        ...             x = block(x)
        ...         return x
        >>> net = Stack()
        >>> len(net.parameters()), net(fw.ones([2, 4])).shape
        (6, [2, 4])
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
        """Add ``sublayer`` at the end.

        Args:
            sublayer (Layer): the layer to add.

        Returns:
            LayerList: self.

        Examples:
            >>> import fw
            >>> layers = fw.nn.LayerList()
            >>> len(layers.append(fw.nn.Linear(2, 2)))
            1
        """
        self.add_sublayer(str(len(self)), sublayer)
        return self

    def insert(self, index: int, sublayer) -> None:
        """Insert ``sublayer`` before position ``index``.

        Args:
            index (int): the position; negative counts from the end.
            sublayer (Layer): the layer to insert.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> layers = fw.nn.LayerList([fw.nn.Linear(2, 2), fw.nn.Linear(2, 2)])
            >>> layers.insert(0, fw.nn.ReLU())
            >>> type(layers[0]).__name__, len(layers)
            ('ReLU', 3)
        """
        items = self._items()
        items.insert(index, sublayer)
        self._reset(items)

    def extend(self, sublayers) -> LayerList:
        """Append every layer of ``sublayers``.

        Args:
            sublayers (Iterable[Layer]): the layers to add.

        Returns:
            LayerList: self.

        Examples:
            >>> import fw
            >>> layers = fw.nn.LayerList().extend([fw.nn.ReLU(), fw.nn.Tanh()])
            >>> len(layers)
            2
        """
        for x in sublayers:
            self.append(x)
        return self

    def pop(self, index: int = -1):
        """Remove and return the sublayer at ``index``.

        Args:
            index (int, optional): the position. Default: -1.

        Returns:
            Layer: the removed layer.

        Examples:
            >>> import fw
            >>> layers = fw.nn.LayerList([fw.nn.ReLU(), fw.nn.Tanh()])
            >>> type(layers.pop()).__name__, len(layers)
            ('Tanh', 1)
        """
        items = self._items()
        x = items.pop(_norm_index(index, len(items), "LayerList"))
        self._reset(items)
        return x


class LayerDict(Layer):
    """An ordered dict of sublayers, registered under their keys so that their
    parameters belong to the owner. Supports ``[]``, ``del``, ``in``, ``len``, iteration
    over the keys, ``keys``, ``values``, ``items``, ``update``, ``pop`` and ``clear``.

    Args:
        sublayers (dict|Iterable[tuple], optional): the initial ``name -> layer`` items.
            Default: None.

    Examples:
        >>> import fw
        >>> heads = fw.nn.LayerDict({'cls': fw.nn.Linear(4, 3), 'box': fw.nn.Linear(4, 2)})
        >>> x = fw.ones([1, 4])
        >>> {name: head(x).shape for name, head in heads.items()}
        {'cls': [1, 3], 'box': [1, 2]}
        >>> list(heads.state_dict())
        ['cls.weight', 'cls.bias', 'box.weight', 'box.bias']
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
        """Remove every sublayer.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> d = fw.nn.LayerDict({'a': fw.nn.ReLU()})
            >>> d.clear()
            >>> len(d)
            0
        """
        self._sub_layers.clear()

    def pop(self, key):
        """Remove the sublayer under ``key`` and return it.

        Args:
            key (str): the name.

        Returns:
            Layer: the removed layer.

        Examples:
            >>> import fw
            >>> d = fw.nn.LayerDict({'a': fw.nn.ReLU(), 'b': fw.nn.Tanh()})
            >>> type(d.pop('a')).__name__, list(d.keys())
            ('ReLU', ['b'])
        """
        return self._sub_layers.pop(key)

    def keys(self):
        """The names of the sublayers, in order.

        Returns:
            Iterable[str]: the names.

        Examples:
            >>> import fw
            >>> list(fw.nn.LayerDict({'a': fw.nn.ReLU(), 'b': fw.nn.Tanh()}).keys())
            ['a', 'b']
        """
        return self._sub_layers.keys()

    def items(self):
        """The ``(name, layer)`` pairs, in order.

        Returns:
            Iterable[tuple[str, Layer]]: the pairs.

        Examples:
            >>> import fw
            >>> [(k, type(v).__name__) for k, v in fw.nn.LayerDict({'a': fw.nn.ReLU()}).items()]
            [('a', 'ReLU')]
        """
        return self._sub_layers.items()

    def values(self):
        """The sublayers, in order.

        Returns:
            Iterable[Layer]: the layers.

        Examples:
            >>> import fw
            >>> [type(v).__name__ for v in fw.nn.LayerDict({'a': fw.nn.ReLU()}).values()]
            ['ReLU']
        """
        return self._sub_layers.values()

    def update(self, sublayers) -> None:
        """Add or replace sublayers from a dict or an iterable of ``(name, layer)`` pairs.

        Args:
            sublayers (dict|Iterable[tuple]): the items.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> d = fw.nn.LayerDict({'a': fw.nn.ReLU()})
            >>> d.update([('b', fw.nn.Tanh()), ('a', fw.nn.Sigmoid())])
            >>> [(k, type(v).__name__) for k, v in d.items()]
            [('a', 'Sigmoid'), ('b', 'Tanh')]
        """
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
    """A list of parameters, registered under ``"0"``, ``"1"``, ... so that they belong to
    the owner. Tensors that are not Parameters are wrapped into Parameters.

    Args:
        parameters (Iterable[Tensor], optional): the initial parameters. Default: None.

    Examples:
        >>> import fw
        >>> ps = fw.nn.ParameterList([fw.create_parameter([2], 'float32') for _ in range(2)])
        >>> len(ps), [name for name, _ in ps.named_parameters()]
        (2, ['0', '1'])
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
        """Add ``parameter`` at the end.

        Args:
            parameter (Tensor): the parameter.

        Returns:
            ParameterList: self.

        Examples:
            >>> import fw
            >>> ps = fw.nn.ParameterList()
            >>> len(ps.append(fw.create_parameter([3], 'float32')))
            1
        """
        self._parameters[str(len(self._parameters))] = _as_param(parameter)
        return self

    def extend(self, parameters) -> ParameterList:
        """Append every parameter of ``parameters``.

        Args:
            parameters (Iterable[Tensor]): the parameters.

        Returns:
            ParameterList: self.

        Examples:
            >>> import fw
            >>> ps = fw.nn.ParameterList().extend([fw.create_parameter([3], 'float32')])
            >>> len(ps)
            1
        """
        for p in parameters:
            self.append(p)
        return self


class ParameterDict(Layer):
    """An ordered dict of parameters, registered under their keys so that they belong to
    the owner. Supports ``[]``, ``del``, ``in``, ``len``, ``keys``, ``values``, ``items``,
    ``update``, ``pop`` and ``clear``.

    Args:
        parameters (dict|Iterable[tuple], optional): the initial ``name -> parameter`` items.
            Default: None.

    Examples:
        >>> import fw
        >>> pd = fw.nn.ParameterDict({'scale': fw.create_parameter([2], 'float32')})
        >>> 'scale' in pd, [name for name, _ in pd.named_parameters()]
        (True, ['scale'])
    """

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
        """The names of the parameters, in order.

        Returns:
            Iterable[str]: the names.

        Examples:
            >>> import fw
            >>> list(fw.nn.ParameterDict({'w': fw.create_parameter([2], 'float32')}).keys())
            ['w']
        """
        return self._parameters.keys()

    def items(self):
        """The ``(name, parameter)`` pairs, in order.

        Returns:
            Iterable[tuple[str, Parameter]]: the pairs.

        Examples:
            >>> import fw
            >>> pd = fw.nn.ParameterDict({'w': fw.create_parameter([2], 'float32')})
            >>> [(k, v.shape) for k, v in pd.items()]
            [('w', [2])]
        """
        return self._parameters.items()

    def values(self):
        """The parameters, in order.

        Returns:
            Iterable[Parameter]: the parameters.

        Examples:
            >>> import fw
            >>> pd = fw.nn.ParameterDict({'w': fw.create_parameter([2], 'float32')})
            >>> [v.shape for v in pd.values()]
            [[2]]
        """
        return self._parameters.values()

    def pop(self, key):
        """Remove the parameter under ``key`` and return it.

        Args:
            key (str): the name.

        Returns:
            Parameter: the removed parameter.

        Examples:
            >>> import fw
            >>> pd = fw.nn.ParameterDict({'w': fw.create_parameter([2], 'float32')})
            >>> pd.pop('w').shape, len(pd)
            ([2], 0)
        """
        return self._parameters.pop(key)

    def clear(self) -> None:
        """Remove every parameter.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> pd = fw.nn.ParameterDict({'w': fw.create_parameter([2], 'float32')})
            >>> pd.clear()
            >>> len(pd)
            0
        """
        self._parameters.clear()

    def update(self, parameters) -> None:
        """Add or replace parameters from a dict or an iterable of ``(name, parameter)``
        pairs.

        Args:
            parameters (dict|Iterable[tuple]): the items.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> pd = fw.nn.ParameterDict()
            >>> pd.update({'a': fw.create_parameter([1], 'float32')})
            >>> list(pd.keys())
            ['a']
        """
        pairs = parameters.items() if isinstance(parameters, Mapping) else parameters
        for k, v in pairs:
            self[k] = v


def _as_param(p):
    if isinstance(p, Parameter):
        return p
    raise TypeError(f"expected a Parameter, got {type(p).__name__}; create one with "
                    f"fw.create_parameter or fw.nn.Parameter")
