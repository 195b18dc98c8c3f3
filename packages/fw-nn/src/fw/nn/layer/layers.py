"""`Layer`: the base class of every model and layer (Paddle's ``paddle.nn.Layer``).

Registration is by attribute assignment: assigning a `Parameter` registers a
parameter, a `Layer` a sublayer; a Tensor assigned to a name registered with
`register_buffer` replaces that buffer. Registered objects live in three
ordered dicts (``_parameters``, ``_sub_layers``, ``_buffers``) and are found by
``__getattr__``; their order is the order of assignment, which fixes the order
of `parameters()` and of `state_dict()` keys (``"fc1.weight"``).

`set_state_dict` never drops anything silently: it returns a `LoadReport` of
matched, missing, unexpected and mismatched (shape or dtype) keys — it unpacks
like Paddle's ``(missing_keys, unexpected_keys)`` — and warns about what it did
not load.
"""

from __future__ import annotations

import re
import warnings
from collections import OrderedDict, namedtuple

import numpy as np

from fw.core import dtypes as _dt
from fw.core.internal import bump_version, replace_data
from fw.core.ir import no_building
from fw.core.tensor import Tensor
from fw.nn.parameter import ParamAttr, Parameter, create_parameter, unique_name

__all__ = ["Layer", "HookRemoveHelper", "LoadReport", "Mismatch"]


def _camel_to_snake(name: str) -> str:
    s = re.sub(r"(.)([A-Z][a-z]+)", r"\1_\2", name)
    return re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", s).lower()


def _indent(s: str, n: int) -> str:
    lines = s.split("\n")
    if len(lines) == 1:
        return s
    return lines[0] + "\n" + "\n".join(" " * n + ln for ln in lines[1:])


class HookRemoveHelper:
    """The handle that the ``register_*_hook`` methods return: ``remove()`` unregisters
    the hook; it is also a context manager that removes the hook on exit.

    Args:
        hooks (dict): the layer's hook table the handle removes its hook from (the
            layer creates handles; users do not).

    Examples:
        >>> import fw
        >>> fc = fw.nn.Linear(2, 2)
        >>> calls = []
        >>> with fc.register_forward_pre_hook(lambda layer, inp: calls.append(1)):
        ...     _ = fc(fw.ones([1, 2]))
        >>> _ = fc(fw.ones([1, 2]))
        >>> len(calls)
        1
    """

    _next_id = 0

    def __init__(self, hooks: dict):
        self._hooks = hooks
        self._id = HookRemoveHelper._next_id
        HookRemoveHelper._next_id += 1

    def remove(self) -> None:
        """Unregister the hook (doing it twice is harmless).

        Returns:
            None.

        Examples:
            >>> import fw
            >>> fc = fw.nn.Linear(2, 2)
            >>> h = fc.register_forward_post_hook(lambda layer, inp, out: out * 0)
            >>> h.remove()
            >>> bool(fc(fw.ones([1, 2])).abs().sum() > 0)
            True
        """
        self._hooks.pop(self._id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()
        return False


Mismatch = namedtuple("Mismatch", ["key", "expected_shape", "expected_dtype", "got_shape",
                                   "got_dtype"])


class LoadReport(tuple):
    """What `Layer.set_state_dict` did. Unpacks as ``(missing_keys, unexpected_keys)``
    (Paddle's return value) and also has ``matched_keys`` and ``mismatched_keys`` (one
    ``Mismatch`` per entry whose shape or dtype differed, which was not loaded).

    Args:
        matched (list[str]): the keys loaded.
        missing (list[str]): the layer's keys absent from the state dict.
        unexpected (list[str]): the state dict's keys the layer does not have.
        mismatched (list[Mismatch]): the keys whose shape or dtype differed.

    Examples:
        >>> import fw
        >>> import warnings
        >>> net = fw.nn.Linear(2, 3)
        >>> state = {'weight': fw.zeros([2, 3]), 'extra': fw.zeros([1])}
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter('ignore')
        ...     report = net.set_state_dict(state)
        >>> report.missing_keys, report.unexpected_keys, report.ok
        (['bias'], ['extra'], False)
    """

    def __new__(cls, matched, missing, unexpected, mismatched):
        r = super().__new__(cls, (missing, unexpected))
        r.matched_keys = matched
        r.missing_keys = missing
        r.unexpected_keys = unexpected
        r.mismatched_keys = mismatched
        return r

    @property
    def ok(self) -> bool:
        """True when every key matched and was loaded (nothing missing, unexpected or
        mismatched).

        Returns:
            bool.

        Examples:
            >>> import fw
            >>> a, b = fw.nn.Linear(2, 2), fw.nn.Linear(2, 2)
            >>> b.set_state_dict(a.state_dict()).ok
            True
        """
        return not (self.missing_keys or self.unexpected_keys or self.mismatched_keys)

    def __repr__(self) -> str:
        return (f"LoadReport(matched={len(self.matched_keys)}, missing={self.missing_keys}, "
                f"unexpected={self.unexpected_keys}, mismatched={self.mismatched_keys})")


def _array_of(v):
    """(shape, fw dtype or None, host array) of a state-dict value."""
    if isinstance(v, Tensor):
        return tuple(v._data.shape), v.dtype, v._data
    a = np.asarray(v)
    try:
        d = _dt.from_numpy(a.dtype)
    except Exception:
        d = None
    return tuple(a.shape), d, a


class Layer:
    """Base class of layers and models.

    Subclasses call ``super().__init__()`` first, create parameters (attribute
    assignment of `Parameter`\\ s or `create_parameter`) and sublayers in ``__init__``,
    and implement ``forward``. Calling the layer runs the forward pre-hooks,
    ``forward`` and the forward post-hooks.

    Args:
        name_scope (str, optional): prefix of `full_name()` and of generated parameter
            names; the class name in snake case when None. Default: None.
        dtype (str|fw.dtype, optional): default dtype of the layer's parameters (the
            global default when None). Default: None.

    Examples:
        >>> import fw
    >>> class MLP(fw.nn.Layer):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.fc1 = fw.nn.Linear(4, 8)
    ...         self.fc2 = fw.nn.Linear(8, 2)
    ...     def forward(self, x):
    ...         return self.fc2(fw.nn.functional.relu(self.fc1(x)))
    >>> list(MLP().state_dict())
    ['fc1.weight', 'fc1.bias', 'fc2.weight', 'fc2.bias']
    """

    def __init__(self, name_scope=None, dtype=None):
        d = self.__dict__
        d["training"] = True
        d["_parameters"] = OrderedDict()
        d["_sub_layers"] = OrderedDict()
        d["_buffers"] = OrderedDict()
        d["_non_persistable_buffer_names_set"] = set()
        d["_forward_pre_hooks"] = OrderedDict()
        d["_forward_post_hooks"] = OrderedDict()
        d["_dtype"] = _dt.convert_dtype(dtype).name if dtype is not None else \
            _dt.get_default_dtype().name
        scope = name_scope if name_scope is not None else _camel_to_snake(type(self).__name__)
        d["_name_scope"] = scope
        d["_full_name"] = unique_name(scope)

    # ------------------------------------------------------------ forward
    def forward(self, *inputs, **kwargs):
        """The layer's computation; subclasses implement it. Call the layer
        (``layer(x)``) rather than ``forward`` so that the hooks run.

        Args:
            *inputs: the positional inputs.
            **kwargs: the keyword inputs.

        Returns:
            object: the outputs.

        Examples:
            >>> import fw
            >>> class Double(fw.nn.Layer):
            ...     def forward(self, x):
            ...         return x * 2
            >>> Double()(fw.to_tensor([1.0, 2.0])).tolist()
            [2.0, 4.0]
        """
        raise NotImplementedError(f"{type(self).__name__} must implement forward()")

    def __call__(self, *inputs, **kwargs):
        if not self._forward_pre_hooks and not self._forward_post_hooks:
            return self.forward(*inputs, **kwargs)
        for hook in list(self._forward_pre_hooks.values()):
            r = hook(self, inputs)
            if r is not None:
                inputs = r if isinstance(r, tuple) else (r,)
        out = self.forward(*inputs, **kwargs)
        for hook in list(self._forward_post_hooks.values()):
            r = hook(self, inputs, out)
            if r is not None:
                out = r
        return out

    def register_forward_pre_hook(self, hook) -> HookRemoveHelper:
        """Register a hook that runs before ``forward`` on every call.

        The hook is called as ``hook(layer, inputs)`` with ``inputs`` the tuple of
        positional arguments; returning None keeps them, returning a value (a tuple, or a
        single value wrapped into one) replaces them.

        Args:
            hook (callable): the function ``hook(layer, inputs) -> None | new inputs``.

        Returns:
            HookRemoveHelper: a handle whose ``remove()`` unregisters the hook.

        Examples:
            >>> import fw
            >>> fc = fw.nn.Linear(2, 1)
            >>> h = fc.register_forward_pre_hook(lambda layer, inputs: (inputs[0] * 0,))
            >>> fc(fw.ones([1, 2])).tolist() == [fc.bias.tolist()]
            True
            >>> h.remove()
        """
        h = HookRemoveHelper(self._forward_pre_hooks)
        self._forward_pre_hooks[h._id] = hook
        return h

    def register_forward_post_hook(self, hook) -> HookRemoveHelper:
        """Register a hook that runs after ``forward`` on every call.

        The hook is called as ``hook(layer, inputs, output)``; returning None keeps the
        output, returning a value replaces it. ``register_forward_hook`` is the same method.

        Args:
            hook (callable): the function ``hook(layer, inputs, output) -> None | new output``.

        Returns:
            HookRemoveHelper: a handle whose ``remove()`` unregisters the hook.

        Examples:
            >>> import fw
            >>> fc = fw.nn.Linear(2, 3)
            >>> shapes = []
            >>> h = fc.register_forward_post_hook(lambda layer, inp, out: shapes.append(out.shape))
            >>> _ = fc(fw.ones([4, 2]))
            >>> shapes
            [[4, 3]]
            >>> h.remove()
            >>> _ = fc(fw.ones([4, 2]))
            >>> len(shapes)
            1
        """
        h = HookRemoveHelper(self._forward_post_hooks)
        self._forward_post_hooks[h._id] = hook
        return h

    # torch-style spellings that Paddle 3 also accepts
    register_forward_hook = register_forward_post_hook

    # ------------------------------------------------------------ modes
    def train(self, mode: bool = True) -> Layer:
        """Put this layer and all its sublayers in training mode (``training = True``).

        Dropout and batch-norm style layers behave differently in training and evaluation.

        Args:
            mode (bool, optional): True for training mode, False for evaluation. Default: True.

        Returns:
            Layer: self.

        Examples:
            >>> import fw
            >>> net = fw.nn.Sequential(fw.nn.Linear(2, 2), fw.nn.Dropout(0.5))
            >>> net.eval()[1].training
            False
            >>> net.train()[1].training
            True
        """
        for layer in self.sublayers(include_self=True):
            layer.__dict__["training"] = bool(mode)
        return self

    def eval(self) -> Layer:
        """Put this layer and all its sublayers in evaluation mode (``training = False``).

        Returns:
            Layer: self.

        Examples:
            >>> import fw
            >>> drop = fw.nn.Dropout(0.5)
            >>> _ = drop.eval()
            >>> drop(fw.ones([3])).tolist()
            [1.0, 1.0, 1.0]
        """
        return self.train(False)

    # ------------------------------------------------------------ names
    def full_name(self) -> str:
        """The unique name of this layer instance, e.g. ``linear_0``.

        Returns:
            str: the name scope followed by a per-process counter.

        Examples:
            >>> import fw
            >>> fw.nn.Linear(2, 2).full_name()  # doctest: +ELLIPSIS
            'linear_...'
        """
        return self._full_name

    # ------------------------------------------------------------ registration
    def _check_init(self, what):
        if "_parameters" not in self.__dict__:
            raise RuntimeError(f"{type(self).__name__}: call super().__init__() in __init__ "
                               f"before {what}")

    def create_parameter(self, shape, attr=None, dtype=None, is_bias=False,
                         default_initializer=None) -> Parameter | None:
        """Create a parameter named after this layer (``linear_0.w_0``).

        The parameter is not registered until it is assigned to an attribute of the layer
        (or passed to `add_parameter`).

        Args:
            shape (list|tuple): the parameter's shape.
            attr (ParamAttr|str|bool, optional): name, initializer, learning rate,
                regularizer and trainability; False creates no parameter. Default: None.
            dtype (str|fw.dtype, optional): the dtype; the layer's dtype when None. Default: None.
            is_bias (bool, optional): whether the default initializer is the bias one (zeros)
                rather than the weight one (Xavier uniform). Default: False.
            default_initializer (Initializer, optional): used when ``attr`` names none.
                Default: None.

        Returns:
            Parameter|None: the new parameter, or None when ``attr`` is False.

        Examples:
            >>> import fw
            >>> class Scale(fw.nn.Layer):
            ...     def __init__(self):
            ...         super().__init__()
            ...         self.w = self.create_parameter(
            ...             [3], default_initializer=fw.nn.initializer.Constant(2.0))
            ...     def forward(self, x):
            ...         return x * self.w
            >>> Scale()(fw.ones([3])).tolist()
            [2.0, 2.0, 2.0]
        """
        a = ParamAttr._to_attr(attr)
        if a is False:
            return None
        if a.name is None:
            a = ParamAttr(unique_name(f"{self._full_name}.{'b' if is_bias else 'w'}"),
                          a.initializer, a.learning_rate, a.regularizer, a.trainable,
                          a.do_model_average, a.need_clip)
        return create_parameter(shape, dtype if dtype is not None else self._dtype, attr=a,
                                is_bias=is_bias, default_initializer=default_initializer)

    def add_parameter(self, name: str, parameter) -> Parameter | None:
        """Register ``parameter`` under ``name`` (the same as assigning it to ``self.name``).

        Args:
            name (str): the attribute name.
            parameter (Parameter|None): the parameter; None reserves the name.

        Returns:
            Parameter|None: the parameter.

        Examples:
            >>> import fw
            >>> layer = fw.nn.Layer()
            >>> w = layer.create_parameter([2, 2])
            >>> _ = layer.add_parameter("w", w)
            >>> [name for name, _ in layer.named_parameters()]
            ['w']
        """
        self._check_init("add_parameter")
        if not isinstance(name, str) or not name or "." in name:
            raise KeyError(f"add_parameter: the name must be a non-empty str without '.', "
                           f"got {name!r}")
        if hasattr(type(self), name) or (name in self.__dict__):
            raise KeyError(f"add_parameter: {name!r} is already an attribute of "
                           f"{type(self).__name__}")
        if parameter is not None and not isinstance(parameter, Parameter):
            raise TypeError(f"add_parameter: {name!r} must be a Parameter or None, got "
                            f"{type(parameter).__name__}")
        self._parameters[name] = parameter
        return parameter

    def add_sublayer(self, name: str, sublayer) -> Layer:
        """Register ``sublayer`` under ``name`` (the same as assigning it to ``self.name``).

        Args:
            name (str): the attribute name.
            sublayer (Layer|None): the layer; None reserves the name.

        Returns:
            Layer|None: the sublayer.

        Examples:
            >>> import fw
            >>> net = fw.nn.Layer()
            >>> _ = net.add_sublayer("fc", fw.nn.Linear(2, 3))
            >>> list(net.state_dict())
            ['fc.weight', 'fc.bias']
        """
        self._check_init("add_sublayer")
        if sublayer is not None and not isinstance(sublayer, Layer):
            raise TypeError(f"add_sublayer: {name!r} must be a Layer, got "
                            f"{type(sublayer).__name__}")
        name = str(name)
        self._sub_layers[name] = sublayer
        return sublayer

    def register_buffer(self, name: str, tensor, persistable: bool = True) -> None:
        """Register ``tensor`` as a buffer: layer state that is not trained, such as running
        statistics.

        Buffers move and cast with the layer; persistable buffers are also in `state_dict`.

        Args:
            name (str): the attribute name.
            tensor (Tensor|None): the buffer's value; None reserves the name.
            persistable (bool, optional): whether `state_dict` includes it. Default: True.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> layer = fw.nn.Layer()
            >>> layer.register_buffer("steps", fw.zeros([1]))
            >>> layer.register_buffer("cache", fw.zeros([2]), persistable=False)
            >>> list(layer.state_dict()), [n for n, _ in layer.named_buffers()]
            (['steps'], ['steps', 'cache'])
        """
        self._check_init("register_buffer")
        if not isinstance(name, str) or not name or "." in name:
            raise KeyError(f"register_buffer: the name must be a non-empty str without '.', "
                           f"got {name!r}")
        if hasattr(type(self), name) or (name in self.__dict__ and name not in self._buffers):
            raise KeyError(f"register_buffer: {name!r} is already an attribute of "
                           f"{type(self).__name__}")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"register_buffer: {name!r} must be a Tensor or None, got "
                            f"{type(tensor).__name__}")
        self._parameters.pop(name, None)
        self._sub_layers.pop(name, None)
        self._buffers[name] = tensor
        if tensor is not None:
            tensor.persistable = bool(persistable)
            if tensor.__dict__.get("_name") is None:
                tensor.name = unique_name(f"{self._full_name}.{name}")
        if persistable:
            self._non_persistable_buffer_names_set.discard(name)
        else:
            self._non_persistable_buffer_names_set.add(name)

    def __setattr__(self, name, value):
        d = self.__dict__
        params = d.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                self._check_init(f"assigning parameter {name!r}")
            d.pop(name, None)
            self._sub_layers.pop(name, None)
            self._buffers.pop(name, None)
            params[name] = value
            return
        if params is not None and name in params:
            if value is not None:
                raise TypeError(f"{type(self).__name__}.{name} is a parameter: assign a "
                                f"Parameter or None, got {type(value).__name__}")
            params[name] = None
            return
        if isinstance(value, Layer):
            if params is None:
                self._check_init(f"assigning sublayer {name!r}")
            d.pop(name, None)
            self._buffers.pop(name, None)
            self._sub_layers[name] = value
            return
        layers = d.get("_sub_layers")
        if layers is not None and name in layers:
            if value is not None:
                raise TypeError(f"{type(self).__name__}.{name} is a sublayer: assign a Layer or "
                                f"None, got {type(value).__name__}")
            layers[name] = None
            return
        buffers = d.get("_buffers")
        if buffers is not None and name in buffers:
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"{type(self).__name__}.{name} is a buffer: assign a Tensor or "
                                f"None, got {type(value).__name__}")
            if value is not None:
                value.persistable = name not in self._non_persistable_buffer_names_set
            buffers[name] = value
            return
        object.__setattr__(self, name, value)

    def __getattr__(self, name):
        d = self.__dict__
        for store in ("_parameters", "_sub_layers", "_buffers"):
            s = d.get(store)
            if s is not None and name in s:
                return s[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name):
        for store in ("_parameters", "_sub_layers", "_buffers"):
            s = self.__dict__.get(store)
            if s is not None and name in s:
                del s[name]
                self._non_persistable_buffer_names_set.discard(name)
                return
        object.__delattr__(self, name)

    def __dir__(self):
        keys = list(super().__dir__())
        for store in ("_parameters", "_sub_layers", "_buffers"):
            keys += list(self.__dict__.get(store, {}))
        return sorted(set(k for k in keys if not k[:1].isdigit()))

    # ------------------------------------------------------------ traversal
    def named_sublayers(self, prefix: str = "", include_self: bool = False, layers_set=None):
        """Iterate over the sublayers with their qualified names, depth first, each layer once.

        Args:
            prefix (str, optional): prepended to every name. Default: "".
            include_self (bool, optional): yield ``(prefix, self)`` first. Default: False.
            layers_set (set, optional): ids of layers already visited (skipped). Default: None.

        Returns:
            Iterator[tuple[str, Layer]]: ``(name, layer)`` pairs.

        Examples:
            >>> import fw
            >>> net = fw.nn.Sequential(fw.nn.Linear(2, 2), fw.nn.Sequential(fw.nn.ReLU()))
            >>> [name for name, _ in net.named_sublayers()]
            ['0', '1', '1.0']
        """
        if layers_set is None:
            layers_set = set()
        if include_self and id(self) not in layers_set:
            layers_set.add(id(self))
            yield prefix, self
        for key, layer in self._sub_layers.items():
            if layer is None:
                continue
            p = prefix + ("." if prefix else "") + key
            yield from layer.named_sublayers(p, True, layers_set)

    def sublayers(self, include_self: bool = False) -> list:
        """All sublayers, depth first, each once.

        Args:
            include_self (bool, optional): include this layer first. Default: False.

        Returns:
            list[Layer]: the sublayers.

        Examples:
            >>> import fw
            >>> net = fw.nn.Sequential(fw.nn.Linear(2, 2), fw.nn.ReLU())
            >>> [type(layer).__name__ for layer in net.sublayers()]
            ['Linear', 'ReLU']
        """
        return [layer for _, layer in self.named_sublayers(include_self=include_self)]

    def named_children(self):
        """Iterate over the direct sublayers with their attribute names.

        Returns:
            Iterator[tuple[str, Layer]]: ``(name, layer)`` pairs.

        Examples:
            >>> import fw
            >>> net = fw.nn.Sequential(fw.nn.Linear(2, 2), fw.nn.Sequential(fw.nn.ReLU()))
            >>> [name for name, _ in net.named_children()]
            ['0', '1']
        """
        seen = set()
        for name, layer in self._sub_layers.items():
            if layer is not None and id(layer) not in seen:
                seen.add(id(layer))
                yield name, layer

    def children(self):
        """Iterate over the direct sublayers.

        Returns:
            Iterator[Layer]: the sublayers one level down.

        Examples:
            >>> import fw
            >>> net = fw.nn.Sequential(fw.nn.Linear(2, 2), fw.nn.ReLU())
            >>> len(list(net.children()))
            2
        """
        for _, layer in self.named_children():
            yield layer

    def named_parameters(self, prefix: str = "", include_sublayers: bool = True,
                         remove_duplicate: bool = True):
        """Iterate over the parameters with their qualified names (``"fc1.weight"``).

        Args:
            prefix (str, optional): prepended to every name. Default: "".
            include_sublayers (bool, optional): include the parameters of sublayers.
                Default: True.
            remove_duplicate (bool, optional): yield a shared parameter only once.
                Default: True.

        Returns:
            Iterator[tuple[str, Parameter]]: ``(name, parameter)`` pairs.

        Examples:
            >>> import fw
            >>> net = fw.nn.Sequential(fw.nn.Linear(2, 3))
            >>> [(name, p.shape) for name, p in net.named_parameters()]
            [('0.weight', [2, 3]), ('0.bias', [3])]
        """
        seen = set()
        layers = self.named_sublayers(prefix=prefix, include_self=True) if include_sublayers \
            else [(prefix, self)]
        for lp, layer in layers:
            for name, p in layer._parameters.items():
                if p is None or (remove_duplicate and id(p) in seen):
                    continue
                seen.add(id(p))
                yield lp + ("." if lp else "") + name, p

    def parameters(self, include_sublayers: bool = True) -> list:
        """All parameters of this layer (and of its sublayers), each once.

        Args:
            include_sublayers (bool, optional): include the parameters of sublayers.
                Default: True.

        Returns:
            list[Parameter]: the parameters, usually handed to an optimizer.

        Examples:
            >>> import fw
            >>> fc = fw.nn.Linear(4, 2)
            >>> [p.shape for p in fc.parameters()]
            [[4, 2], [2]]
            >>> opt = fw.optimizer.SGD(learning_rate=0.1, parameters=fc.parameters())
        """
        return [p for _, p in self.named_parameters(include_sublayers=include_sublayers)]

    def named_buffers(self, prefix: str = "", include_sublayers: bool = True):
        """Iterate over the buffers with their qualified names (``"bn.running_mean"``).

        Args:
            prefix (str, optional): prepended to every name. Default: "".
            include_sublayers (bool, optional): include the buffers of sublayers. Default: True.

        Returns:
            Iterator[tuple[str, Tensor]]: ``(name, buffer)`` pairs.

        Examples:
            >>> import fw
            >>> bn = fw.nn.BatchNorm1D(3)
            >>> [name for name, _ in bn.named_buffers()]
            ['_mean', '_variance']
        """
        seen = set()
        layers = self.named_sublayers(prefix=prefix, include_self=True) if include_sublayers \
            else [(prefix, self)]
        for lp, layer in layers:
            for name, b in layer._buffers.items():
                if b is None or id(b) in seen:
                    continue
                seen.add(id(b))
                yield lp + ("." if lp else "") + name, b

    def buffers(self, include_sublayers: bool = True) -> list:
        """All buffers of this layer (and of its sublayers), each once.

        Args:
            include_sublayers (bool, optional): include the buffers of sublayers. Default: True.

        Returns:
            list[Tensor]: the buffers.

        Examples:
            >>> import fw
            >>> [b.shape for b in fw.nn.BatchNorm1D(3).buffers()]
            [[3], [3]]
        """
        return [b for _, b in self.named_buffers(include_sublayers=include_sublayers)]

    def apply(self, fn) -> Layer:
        """Call ``fn(layer)`` on every sublayer (children first) and then on this layer.

        Typically used to initialise weights.

        Args:
            fn (callable): the function called with each layer.

        Returns:
            Layer: self.

        Examples:
            >>> import fw
            >>> def init(layer):
            ...     if isinstance(layer, fw.nn.Linear):
            ...         fw.nn.initializer.Constant(0.5)(layer.weight)
            >>> net = fw.nn.Sequential(fw.nn.Linear(2, 2), fw.nn.ReLU()).apply(init)
            >>> net[0].weight.tolist()
            [[0.5, 0.5], [0.5, 0.5]]
        """
        for layer in self.children():
            layer.apply(fn)
        fn(self)
        return self

    # ------------------------------------------------------------ state
    def state_dict(self, destination=None, include_sublayers: bool = True,
                   structured_name_prefix: str = "", use_hook: bool = True,
                   keep_vars: bool = True) -> OrderedDict:
        """The parameters and persistable buffers by structured name (``"fc1.weight"``).

        The values are the layer's own tensors, not copies: save them (`fw.save`), or copy
        them before changing the layer if you need a snapshot.

        Args:
            destination (dict, optional): a dict to fill instead of a new OrderedDict.
                Default: None.
            include_sublayers (bool, optional): include the state of sublayers. Default: True.
            structured_name_prefix (str, optional): prepended to every key. Default: "".
            use_hook (bool, optional): accepted for Paddle compatibility. Default: True.
            keep_vars (bool, optional): accepted for Paddle compatibility. Default: True.

        Returns:
            OrderedDict[str, Tensor]: name to tensor.

        Examples:
            >>> import fw
            >>> net = fw.nn.Sequential(fw.nn.Linear(2, 3), fw.nn.BatchNorm1D(3))
            >>> list(net.state_dict())
            ['0.weight', '0.bias', '1.weight', '1.bias', '1._mean', '1._variance']
            >>> net.state_dict()["0.weight"] is net[0].weight
            True
        """
        dest = OrderedDict() if destination is None else destination
        self._state_into(dest, structured_name_prefix, include_sublayers)
        return dest

    def _state_into(self, dest, prefix, include_sublayers):
        for name, p in self._parameters.items():
            if p is not None:
                dest[prefix + name] = p
        for name, b in self._buffers.items():
            if b is not None and name not in self._non_persistable_buffer_names_set:
                dest[prefix + name] = b
        if include_sublayers:
            for name, layer in self._sub_layers.items():
                if layer is not None:
                    layer._state_into(dest, prefix + name + ".", True)

    def set_state_dict(self, state_dict, use_structured_name: bool = True) -> LoadReport:
        """Load values from ``state_dict`` into this layer's parameters and buffers, in place
        (so optimizers keep their references). ``set_dict`` and ``load_dict`` are the same
        method.

        Entries whose shape or dtype differs from the layer's are not loaded; a warning
        names everything that was not loaded.

        Args:
            state_dict (dict): names to Tensors or NumPy arrays (`state_dict()` output,
                `fw.load` output).
            use_structured_name (bool, optional): match by structured name
                (``"fc1.weight"``); False matches by each tensor's ``.name``
                (``"linear_0.w_0"``). Default: True.

        Returns:
            LoadReport: unpacks as ``(missing_keys, unexpected_keys)``; also has
            ``matched_keys``, ``mismatched_keys`` and ``ok``.

        Examples:
            >>> import fw
            >>> a, b = fw.nn.Linear(2, 2), fw.nn.Linear(2, 2)
            >>> missing, unexpected = b.set_state_dict(a.state_dict())
            >>> missing, unexpected
            ([], [])
            >>> bool((a.weight == b.weight).all())
            True
        """
        own = self.state_dict()
        if use_structured_name:
            targets = own
        else:
            targets = OrderedDict((t.name, t) for t in own.values())
        matched, missing, mismatched = [], [], []
        for key, t in targets.items():
            if key not in state_dict:
                missing.append(key)
                continue
            shape, dtype, arr = _array_of(state_dict[key])
            if shape != tuple(t._data.shape) or dtype is not t.dtype:
                mismatched.append(Mismatch(key, list(t._data.shape), t.dtype.name,
                                           list(shape), getattr(dtype, "name", str(dtype))))
                continue
            with no_building():
                _copy_into(t, arr)
            matched.append(key)
        unexpected = [k for k in state_dict if k not in targets]
        report = LoadReport(matched, missing, unexpected, mismatched)
        if missing or mismatched:
            parts = []
            if missing:
                parts.append(f"missing from the state dict (left unchanged): {missing}")
            if mismatched:
                parts.append("shape/dtype mismatch (not loaded): " + "; ".join(
                    f"{m.key}: expected {m.expected_shape} {m.expected_dtype}, got "
                    f"{m.got_shape} {m.got_dtype}" for m in mismatched))
            warnings.warn(f"{type(self).__name__}.set_state_dict: " + "; ".join(parts),
                          stacklevel=2)
        return report

    load_dict = set_state_dict
    set_dict = set_state_dict

    def load_state_dict(self, state_dict, strict: bool = True):
        """PyTorch-style spelling of `set_state_dict`.

        Args:
            state_dict (dict): names to Tensors or NumPy arrays.
            strict (bool, optional): accepted for compatibility; mismatches always warn.
                Default: True.

        Returns:
            LoadReport: as `set_state_dict` returns.

        Examples:
            >>> import fw
            >>> a, b = fw.nn.Linear(2, 2), fw.nn.Linear(2, 2)
            >>> b.load_state_dict(a.state_dict()).ok
            True
        """
        return self.set_state_dict(state_dict)

    # ------------------------------------------------------------ gradients, devices, dtypes
    def clear_gradients(self, set_to_zero: bool = True) -> None:
        """Clear the ``.grad`` of every trainable parameter.

        Args:
            set_to_zero (bool, optional): zero the gradients in place; False drops them
                (``.grad`` becomes None). Default: True.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> fc = fw.nn.Linear(2, 1)
            >>> fc(fw.ones([1, 2])).sum().backward()
            >>> fc.clear_gradients()
            >>> fc.weight.grad.tolist()
            [[0.0], [0.0]]
        """
        for p in self.parameters():
            if p.trainable:
                p.clear_gradient(set_to_zero)

    def clear_grad(self, set_to_zero: bool = True) -> None:
        """The same as `clear_gradients`.

        Args:
            set_to_zero (bool, optional): zero the gradients in place; False drops them.
                Default: True.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> fc = fw.nn.Linear(2, 1)
            >>> fc(fw.ones([1, 2])).sum().backward()
            >>> fc.clear_grad(set_to_zero=False)
            >>> fc.weight.grad is None
            True
        """
        self.clear_gradients(set_to_zero)

    def _transform(self, fn, floating_only: bool, excluded=()):
        for layer in self.sublayers(include_self=True):
            if excluded and isinstance(layer, excluded):
                continue
            for store in (layer._parameters, layer._buffers):
                for t in store.values():
                    if t is None or (floating_only and not t.dtype.is_floating_point):
                        continue
                    new = fn(t)
                    if new is not t:
                        replace_data(t, new._data)
                        g = t._grad
                        if g is not None:
                            t._grad = fn(g)
        return self

    def to(self, device=None, dtype=None, blocking=None) -> Layer:
        """Move the parameters and buffers to ``device`` and/or cast the floating-point ones
        to ``dtype``, in place (the Parameter objects stay the same, so an optimizer
        built before keeps working).

        Args:
            device (str|Place, optional): e.g. ``"cpu"`` or ``"gpu:0"``; None keeps the
                device. Default: None.
            dtype (str|fw.dtype, optional): the new floating-point dtype; None keeps it.
                Default: None.
            blocking (bool, optional): accepted for Paddle compatibility. Default: None.

        Returns:
            Layer: self.

        Examples:
            >>> import fw
            >>> fc = fw.nn.Linear(2, 2)
            >>> fc.to(dtype="float64").weight.dtype
            fw.float64
        """
        from fw.autograd import no_grad

        with no_building(), no_grad():
            if dtype is not None:
                d = _dt.convert_dtype(dtype)
                self._transform(lambda t: t.astype(d) if t.dtype is not d else t, True)
                for layer in self.sublayers(include_self=True):
                    layer.__dict__["_dtype"] = d.name
            if device is not None:
                self._transform(lambda t: t.to(device=device), False)
        return self

    def astype(self, dtype=None) -> Layer:
        """Cast the floating-point parameters and buffers to ``dtype`` in place.

        Args:
            dtype (str|fw.dtype, optional): the new dtype. Default: None.

        Returns:
            Layer: self.

        Examples:
            >>> import fw
            >>> fw.nn.Linear(2, 2).astype("float16").bias.dtype
            fw.float16
        """
        return self.to(dtype=dtype)

    def _cast_floats(self, dtype, excluded_layers):
        ex = excluded_layers or ()
        if isinstance(ex, type):
            ex = (ex,)
        ex = tuple(ex)
        d = _dt.convert_dtype(dtype)
        from fw.autograd import no_grad

        with no_building(), no_grad():
            self._transform(lambda t: t.astype(d) if t.dtype is not d else t, True, ex)
        for layer in self.sublayers(include_self=True):
            if not (ex and isinstance(layer, ex)):
                layer.__dict__["_dtype"] = d.name
        return self

    def float(self, excluded_layers=None) -> Layer:
        """Cast the floating-point parameters and buffers to float32 in place.

        Args:
            excluded_layers (type|list[type], optional): layer classes left as they are.
                Default: None.

        Returns:
            Layer: self.

        Examples:
            >>> import fw
            >>> fw.nn.Linear(2, 2).double().float().weight.dtype
            fw.float32
        """
        return self._cast_floats(_dt.float32, excluded_layers)

    def double(self, excluded_layers=None) -> Layer:
        """Cast the floating-point parameters and buffers to float64 in place.

        Args:
            excluded_layers (type|list[type], optional): layer classes left as they are.
                Default: None.

        Returns:
            Layer: self.

        Examples:
            >>> import fw
            >>> fw.nn.Linear(2, 2).double().weight.dtype
            fw.float64
        """
        return self._cast_floats(_dt.float64, excluded_layers)

    def float16(self, excluded_layers=None) -> Layer:
        """Cast the floating-point parameters and buffers to float16 in place (``half`` is
        the same method).

        Args:
            excluded_layers (type|list[type], optional): layer classes left as they are,
                e.g. ``[fw.nn.LayerNorm]`` to keep norms in float32. Default: None.

        Returns:
            Layer: self.

        Examples:
            >>> import fw
            >>> net = fw.nn.Sequential(fw.nn.Linear(2, 2), fw.nn.LayerNorm(2))
            >>> _ = net.float16(excluded_layers=[fw.nn.LayerNorm])
            >>> net[0].weight.dtype, net[1].weight.dtype
            (fw.float16, fw.float32)
        """
        return self._cast_floats(_dt.float16, excluded_layers)

    half = float16

    def bfloat16(self, excluded_layers=None) -> Layer:
        """Cast the floating-point parameters and buffers to bfloat16 in place.

        Args:
            excluded_layers (type|list[type], optional): layer classes left as they are.
                Default: None.

        Returns:
            Layer: self.

        Examples:
            >>> import fw
            >>> fw.nn.Linear(2, 2).bfloat16().weight.dtype
            fw.bfloat16
        """
        return self._cast_floats(_dt.bfloat16, excluded_layers)

    def cpu(self) -> Layer:
        """Move the parameters and buffers to the CPU in place.

        Returns:
            Layer: self.

        Examples:
            >>> import fw
            >>> fc = fw.nn.Linear(2, 2).cpu()
            >>> fc.weight.place.is_cpu_place()
            True
        """
        return self.to(device="cpu")

    def cuda(self, device_id=None) -> Layer:
        """Move the parameters and buffers to a GPU in place.

        Args:
            device_id (int, optional): the GPU index; the current GPU when None. Default: None.

        Returns:
            Layer: self.

        Examples:
            Needs a GPU build (CuPy and a CUDA device), so it is not run here::

                fc = fw.nn.Linear(2, 2).cuda()
                fc.weight.place   # Place(gpu:0)
        """
        return self.to(device="gpu" if device_id is None else f"gpu:{device_id}")

    # ------------------------------------------------------------ printing
    def extra_repr(self) -> str:
        """Layer-specific text shown inside the parentheses of the layer's repr; override it
        in subclasses.

        Returns:
            str: the text (empty by default).

        Examples:
            >>> import fw
            >>> fw.nn.Linear(2, 3).extra_repr()
            'in_features=2, out_features=3, dtype=float32'
        """
        return ""

    def __repr__(self) -> str:
        extra = self.extra_repr()
        lines = [f"({name}): {_indent(repr(layer), 2)}"
                 for name, layer in self._sub_layers.items() if layer is not None]
        s = type(self).__name__ + "("
        if extra and not lines and "\n" not in extra:
            return s + extra + ")"
        body = ([_indent(extra, 2)] if extra else []) + lines
        if body:
            s += "\n  " + "\n  ".join(body) + "\n"
        return s + ")"


def _copy_into(t: Tensor, arr) -> None:
    from fw.core import place as _pl

    a = t._data
    if type(arr) is not np.ndarray and not isinstance(arr, type(a)):
        arr = _pl.backend_of(arr).to_numpy(arr)  # another device: via the host
    if type(a) is not np.ndarray and isinstance(arr, np.ndarray):
        arr = _pl.backend_of(a).xp.asarray(arr)
    a[...] = arr
    bump_version(t)
