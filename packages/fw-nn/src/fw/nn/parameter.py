"""`Parameter`, `ParamAttr` and `create_parameter`.

A `Parameter` is a `Tensor` that a model trains: ``stop_gradient=False``,
``persistable=True`` and a stable ``name`` (``linear_0.w_0`` style, unique in
the process). Those three attributes are what fw-core's IR builder looks at
when a layer is traced: a tensor with ``trainable=True`` becomes a ``param``
argument of the program labelled by its name, so the same layer code runs
eagerly and while `fw.jit.to_static` builds a program.

``trainable`` is not stored separately: as in Paddle it is ``not
stop_gradient``, so freezing a parameter one way or the other agrees.
"""

from __future__ import annotations

import numpy as np

from fw.core import dtypes as _dt
from fw.core.internal import format_tensor, make_tensor
from fw.core.ir import no_building
from fw.core.tensor import Tensor, to_tensor

__all__ = ["Parameter", "ParamAttr", "create_parameter", "unique_name", "is_parameter"]

_counters: dict = {}


def unique_name(prefix: str) -> str:
    """A name unique in this process: ``prefix_N`` with N counting per prefix (Paddle's
    ``unique_name.generate``).

    Args:
        prefix (str): the name's prefix, e.g. ``"linear"``.

    Returns:
        str: ``prefix_N``.

    Examples:
        >>> import fw
        >>> from fw.nn.parameter import unique_name
        >>> a, b = unique_name("my_block"), unique_name("my_block")
        >>> a != b and a.startswith("my_block_")
        True
    """
    n = _counters.get(prefix, 0)
    _counters[prefix] = n + 1
    return f"{prefix}_{n}"


class Parameter(Tensor):
    """A trainable tensor owned by a layer (Paddle's ``EagerParamBase``).

    Layers create their parameters with `Layer.create_parameter` (or
    `fw.create_parameter`); constructing one directly wraps existing values.

    Args:
        data (Tensor|numpy.ndarray|list, optional): the initial values (a Tensor's
            storage is shared); None gives an empty tensor of the default dtype.
            Default: None.
        requires_grad (bool, optional): False creates a frozen parameter
            (``stop_gradient=True``). Default: True.
        name (str, optional): the parameter's name; a unique ``param_N`` when None.
            Default: None.

    Attributes beyond Tensor's: ``trainable`` (``not stop_gradient``),
    ``persistable`` (saved in checkpoints, True), ``optimize_attr``
    (``{"learning_rate": multiplier}``), ``regularizer``, ``need_clip``
    (gradient clipping applies), ``do_model_average``.

    Examples:
        >>> import fw
        >>> p = fw.nn.Parameter(fw.ones([2]))
        >>> p.trainable, p.stop_gradient
        (True, False)
    """

    persistable = True

    def __init__(self, data=None, requires_grad: bool = True, name: str | None = None):
        if data is None:
            arr = np.zeros([0], _dt.get_default_dtype().np)
        elif isinstance(data, Tensor):
            arr = data._data
        else:
            arr = to_tensor(data)._data
        self._data = arr
        self._sg = not requires_grad
        self._node = None
        self._init_attrs(name)

    def _init_attrs(self, name=None, learning_rate=1.0, regularizer=None, need_clip=True,
                    do_model_average=None):
        d = self.__dict__
        d["_name"] = name if name is not None else unique_name("param")
        d["optimize_attr"] = {"learning_rate": float(learning_rate)}
        d["regularizer"] = regularizer
        d["need_clip"] = bool(need_clip)
        d["do_model_average"] = do_model_average
        d["is_distributed"] = False

    @classmethod
    def _wrap(cls, array, name=None, trainable=True, **attrs) -> Parameter:
        p = make_tensor(array, stop_gradient=not trainable, cls=cls)
        p._init_attrs(name, **attrs)
        return p

    @property
    def is_lazy(self) -> bool:
        """True while a parameter created under `LazyGuard` has not been initialised.

        Returns:
            bool.

        Examples:
            >>> import fw
            >>> fw.nn.Linear(2, 2).weight.is_lazy
            False
        """
        return "_lazy_init" in self.__dict__

    def initialize(self) -> Parameter:
        """Allocate and initialise a parameter created under `LazyGuard`, running its
        initializer (a no-op for other parameters).

        Returns:
            Parameter: self.

        Examples:
            >>> import fw
            >>> with fw.nn.initializer.LazyGuard():
            ...     fc = fw.nn.Linear(2, 2)
            >>> fc.bias.initialize().tolist()
            [0.0, 0.0]
            >>> fc.bias.is_lazy
            False
        """
        init = self.__dict__.pop("_lazy_init", None)
        if init is not None:
            with no_building():
                self._data = np.zeros(self._data.shape, self._data.dtype)
                init(self)
        return self

    @property
    def trainable(self) -> bool:
        """Whether the optimizer updates this parameter (the opposite of
        ``stop_gradient``); settable.

        Returns:
            bool.

        Examples:
            >>> import fw
            >>> fc = fw.nn.Linear(2, 2)
            >>> fc.weight.trainable = False
            >>> fc.weight.stop_gradient
            True
        """
        return not self._sg

    @trainable.setter
    def trainable(self, value: bool):
        self._sg = not bool(value)

    def __repr__(self) -> str:
        return "Parameter containing:\n" + format_tensor(self)

    __str__ = __repr__

    def __deepcopy__(self, memo):
        p = Parameter._wrap(self._data.copy(), self.name, not self._sg)
        for k in ("optimize_attr", "regularizer", "need_clip", "do_model_average"):
            if k in self.__dict__:
                import copy

                p.__dict__[k] = copy.deepcopy(self.__dict__[k], memo)
        memo[id(self)] = p
        return p

    def __reduce_ex__(self, protocol):
        return (_rebuild_parameter, (self.numpy(), self.name, not self._sg))


def _rebuild_parameter(array, name, trainable):
    return Parameter._wrap(array, name, trainable)


def is_parameter(x) -> bool:
    """Whether ``x`` is a `Parameter`.

    Args:
        x (object): anything.

    Returns:
        bool.

    Examples:
        >>> import fw
        >>> from fw.nn.parameter import is_parameter
        >>> is_parameter(fw.nn.Linear(2, 2).weight), is_parameter(fw.ones([2]))
        (True, False)
    """
    return isinstance(x, Parameter)


class ParamAttr:
    """How a layer creates one of its parameters (Paddle's ``paddle.ParamAttr``).

    Args:
        name (str, optional): the parameter's name (unique names are generated when
            None). Default: None.
        initializer (Initializer, optional): the initializer; the layer's default when
            None. Default: None.
        learning_rate (float, optional): multiplier of the optimizer's learning rate
            for this parameter. Default: 1.0.
        regularizer (WeightDecayRegularizer, optional): weight decay (e.g.
            ``fw.regularizer.L2Decay``) that overrides the optimizer's for this
            parameter. Default: None.
        trainable (bool, optional): False creates the parameter frozen
            (``stop_gradient=True``). Default: True.
        do_model_average (bool, optional): kept for ModelAverage-style optimizers.
            Default: True.
        need_clip (bool, optional): whether gradient clipping (``grad_clip``) applies
            to it. Default: True.

    A layer argument ``weight_attr``/``bias_attr`` also accepts None (defaults),
    False (no such parameter, for biases), a string (the name) or an initializer.

    Examples:
        >>> import fw
        >>> attr = fw.ParamAttr(initializer=fw.nn.initializer.Constant(0.5))
        >>> fw.nn.Linear(2, 3, weight_attr=attr).weight.numpy().tolist()[0]
        [0.5, 0.5, 0.5]
    """

    def __init__(self, name=None, initializer=None, learning_rate=1.0, regularizer=None,
                 trainable=True, do_model_average=True, need_clip=True):
        if name is not None and not isinstance(name, str):
            raise TypeError(f"ParamAttr: 'name' must be a str or None, got {type(name).__name__}")
        if not isinstance(learning_rate, (int, float)) or isinstance(learning_rate, bool):
            raise TypeError(f"ParamAttr: 'learning_rate' must be a number, got {learning_rate!r}")
        self.name = name
        self.initializer = initializer
        self.learning_rate = float(learning_rate)
        self.regularizer = regularizer
        self.trainable = bool(trainable)
        self.do_model_average = do_model_average
        self.need_clip = bool(need_clip)

    def __repr__(self) -> str:
        return (f"ParamAttr(name={self.name!r}, initializer={self.initializer!r}, "
                f"learning_rate={self.learning_rate}, regularizer={self.regularizer!r}, "
                f"trainable={self.trainable}, need_clip={self.need_clip})")

    @staticmethod
    def _to_attr(arg):
        """Normalise a ``weight_attr``-style argument: None -> ParamAttr(), False stays
        False, a str is the name, an Initializer the initializer."""
        from fw.nn.initializer import Initializer

        if arg is None or arg is True:
            return ParamAttr()
        if arg is False:
            return False
        if isinstance(arg, ParamAttr):
            return arg
        if isinstance(arg, str):
            return ParamAttr(name=arg)
        if isinstance(arg, Initializer):
            return ParamAttr(initializer=arg)
        if isinstance(arg, (list, tuple)) and len(arg) == 1:
            return ParamAttr._to_attr(arg[0])
        raise TypeError(f"a parameter attribute must be None, False, a str, an Initializer or "
                        f"a ParamAttr, got {type(arg).__name__}")


def create_parameter(shape, dtype=None, name=None, attr=None, is_bias=False,
                     default_initializer=None) -> Parameter:
    """A new `Parameter` of `shape` and `dtype`, initialised (Paddle's
    ``paddle.create_parameter``).

    Args:
        shape (list|tuple): the shape.
        dtype (str|fw.dtype, optional): the dtype; the default float dtype when None.
            Default: None.
        name (str, optional): the parameter's name (overridden by ``attr.name``).
            Default: None.
        attr (ParamAttr, optional): a `ParamAttr` (or anything `ParamAttr` accepts as a
            layer argument). Default: None.
        is_bias (bool, optional): with no initializer given, biases start at 0 and
            weights with Xavier-uniform values (Paddle's defaults). Default: False.
        default_initializer (Initializer, optional): used when neither ``attr`` nor
            `set_global_initializer` gives one. Default: None.

    Returns:
        Parameter: the new parameter. Initialisation always runs eagerly, also while a
        program is being traced.

    Examples:
        >>> import fw
        >>> w = fw.create_parameter([3, 2], "float32")
        >>> w.shape, w.stop_gradient
        ([3, 2], False)
    """
    from fw.nn import initializer as _init

    a = ParamAttr._to_attr(attr)
    if a is False:
        raise ValueError("create_parameter: attr=False creates no parameter")
    shape = [int(s) for s in (shape.tolist() if hasattr(shape, "tolist") else shape)]
    if any(s < 0 for s in shape):
        raise ValueError(f"create_parameter: shape {shape} has a negative dimension")
    d = _dt.get_default_dtype() if dtype is None else _dt.convert_dtype(dtype)
    # priority: the ParamAttr's, then the global one, then the layer's default
    init = a.initializer or _init._global_default(is_bias) or default_initializer
    if init is None:
        init = _init.Constant(0.0) if is_bias else _init.XavierUniform()
    pname = a.name or name
    lazy = _init._lazy()
    with no_building():
        # under LazyGuard: a zero-strided view (no memory) until initialize()
        data = np.broadcast_to(np.zeros((), d.np), shape) if lazy else np.zeros(shape, d.np)
        p = Parameter._wrap(data, pname if pname else unique_name("param"),
                            trainable=a.trainable, learning_rate=a.learning_rate,
                            regularizer=a.regularizer, need_clip=a.need_clip,
                            do_model_average=a.do_model_average)
        if lazy:
            p.__dict__["_lazy_init"] = init
        else:
            init(p)  # on the host (the initializers draw from the cpu generator)
            _to_current_device(p)
    return p


def _to_current_device(p) -> None:
    """Move a new parameter onto the current device (``fw.set_device('gpu')`` before
    building a model creates its parameters there, as in Paddle)."""
    from fw.core import place as _pl

    cur = _pl.current_place()
    if cur.kind != "cpu" and type(p._data) is np.ndarray:
        p._data = _pl.get_backend(cur.kind).asarray(p._data, cur.index)
