"""Adagrad, Adadelta and RMSProp."""

from __future__ import annotations

from fw.optimizer.optimizer import Optimizer, _as_float

__all__ = ["Adagrad", "Adadelta", "RMSProp"]


class Adagrad(Optimizer):
    """Adagrad: per-element rates that shrink with the accumulated squared gradients.

    ``G = G + g ** 2``, ``param = param - learning_rate * g / (sqrt(G) + epsilon)``.

    Args:
        learning_rate (float|LRScheduler): the step size, or a scheduler from
            ``fw.optimizer.lr``.
        epsilon (float, optional): added to the denominator. Default: 1e-06.
        parameters (list|tuple, optional): the parameters to update, or parameter-group
            dicts ``{"params": [...], <hyper-parameter>: value}``. Required in dynamic mode.
            Default: None.
        weight_decay (float|WeightDecayRegularizer, optional): a float is an L2 coefficient;
            or ``fw.regularizer.L1Decay`` / ``L2Decay``. A parameter's own regularizer
            (``ParamAttr``) takes precedence. Default: None.
        grad_clip (ClipGradBase, optional): ``fw.nn.ClipGradByValue``, ``ClipGradByNorm`` or
            ``ClipGradByGlobalNorm``. Default: None.
        name (str, optional): unused; Paddle's name. Default: None.
        initial_accumulator_value (float, optional): the initial value of ``G``. Default: 0.0.

    Examples:
        >>> import fw
        >>> w = fw.create_parameter([2], "float32",
        ...                         default_initializer=fw.nn.initializer.Constant(0.0))
        >>> opt = fw.optimizer.Adagrad(learning_rate=0.1, parameters=[w])
        >>> for _ in range(1):
        ...     loss = ((w - fw.to_tensor([1.0, -1.0])) ** 2).sum()
        ...     loss.backward()
        ...     opt.step()
        ...     opt.clear_grad()
        >>> [round(v, 4) for v in w.tolist()]
        [0.1, -0.1]
    """

    _op = "adagrad"
    _states = (("moment", "moment", "tensor",
                lambda hp, fg: float(hp["initial_accumulator_value"])),)

    def __init__(self, learning_rate, epsilon=1e-6, parameters=None, weight_decay=None,
                 grad_clip=None, name=None, initial_accumulator_value=0.0):
        self._default_hp = {"epsilon": epsilon,
                            "initial_accumulator_value": initial_accumulator_value}
        super().__init__(learning_rate, parameters, weight_decay, grad_clip, name)
        self._epsilon = epsilon
        self.initial_accumulator_value = initial_accumulator_value

    def _op_attrs(self, hp, fg):
        return {"epsilon": _as_float(hp["epsilon"], "Adagrad: 'epsilon'")}


class Adadelta(Optimizer):
    """Adadelta (Zeiler), with Paddle's learning-rate factor.

    ``Eg = rho * Eg + (1 - rho) * g ** 2``, ``d = -sqrt((Ed + epsilon) / (Eg + epsilon)) * g``,
    ``Ed = rho * Ed + (1 - rho) * d ** 2``, ``param = param + learning_rate * d``.

    Args:
        learning_rate (float|LRScheduler, optional): the step size, or a scheduler from
            ``fw.optimizer.lr``. Default: 0.001.
        epsilon (float, optional): added inside the square roots. Default: 1e-06.
        rho (float, optional): the decay rate. Default: 0.95.
        parameters (list|tuple, optional): the parameters to update, or parameter-group
            dicts ``{"params": [...], <hyper-parameter>: value}``. Required in dynamic mode.
            Default: None.
        weight_decay (float|WeightDecayRegularizer, optional): a float is an L2 coefficient;
            or ``fw.regularizer.L1Decay`` / ``L2Decay``. A parameter's own regularizer
            (``ParamAttr``) takes precedence. Default: None.
        grad_clip (ClipGradBase, optional): ``fw.nn.ClipGradByValue``, ``ClipGradByNorm`` or
            ``ClipGradByGlobalNorm``. Default: None.
        name (str, optional): unused; Paddle's name. Default: None.

    Examples:
        >>> import fw
        >>> w = fw.create_parameter([2], "float32",
        ...                         default_initializer=fw.nn.initializer.Constant(0.0))
        >>> opt = fw.optimizer.Adadelta(learning_rate=1.0, parameters=[w])
        >>> for _ in range(1):
        ...     loss = ((w - fw.to_tensor([1.0, -1.0])) ** 2).sum()
        ...     loss.backward()
        ...     opt.step()
        ...     opt.clear_grad()
        >>> [round(v, 4) for v in w.tolist()]
        [0.0045, -0.0045]
    """

    _op = "adadelta"
    _states = (("_avg_squared_grad", "avg_squared_grad", "tensor", 0.0),
               ("_avg_squared_update", "avg_squared_update", "tensor", 0.0))

    def __init__(self, learning_rate=0.001, epsilon=1e-6, rho=0.95, parameters=None,
                 weight_decay=None, grad_clip=None, name=None):
        if epsilon is None or rho is None:
            raise ValueError("Adadelta: epsilon and rho must not be None")
        self._default_hp = {"epsilon": epsilon, "rho": rho}
        super().__init__(learning_rate, parameters, weight_decay, grad_clip, name)
        self._epsilon, self._rho = epsilon, rho

    def _op_attrs(self, hp, fg):
        return {"rho": _as_float(hp["rho"], "Adadelta: 'rho'"),
                "epsilon": _as_float(hp["epsilon"], "Adadelta: 'epsilon'")}


class RMSProp(Optimizer):
    """RMSProp: divide the gradient by a running root mean square of recent gradients.

    ``ms = rho * ms + (1 - rho) * g ** 2``,
    ``mom = momentum * mom + learning_rate * g / sqrt(ms + epsilon)``,
    ``param = param - mom``; ``centered`` uses ``ms - mg ** 2`` (``mg`` the running mean
    gradient), i.e. the variance.

    Args:
        learning_rate (float|LRScheduler): the step size, or a scheduler from
            ``fw.optimizer.lr``.
        rho (float, optional): the decay rate. Default: 0.95.
        epsilon (float, optional): added inside the square root. Default: 1e-06.
        momentum (float, optional): the momentum factor. Default: 0.0.
        centered (bool, optional): normalise by the variance. Default: False.
        parameters (list|tuple, optional): the parameters to update, or parameter-group
            dicts ``{"params": [...], <hyper-parameter>: value}``. Required in dynamic mode.
            Default: None.
        weight_decay (float|WeightDecayRegularizer, optional): a float is an L2 coefficient;
            or ``fw.regularizer.L1Decay`` / ``L2Decay``. A parameter's own regularizer
            (``ParamAttr``) takes precedence. Default: None.
        grad_clip (ClipGradBase, optional): ``fw.nn.ClipGradByValue``, ``ClipGradByNorm`` or
            ``ClipGradByGlobalNorm``. Default: None.
        name (str, optional): unused; Paddle's name. Default: None.

    Examples:
        >>> import fw
        >>> w = fw.create_parameter([2], "float32",
        ...                         default_initializer=fw.nn.initializer.Constant(0.0))
        >>> opt = fw.optimizer.RMSProp(learning_rate=0.1, parameters=[w])
        >>> for _ in range(1):
        ...     loss = ((w - fw.to_tensor([1.0, -1.0])) ** 2).sum()
        ...     loss.backward()
        ...     opt.step()
        ...     opt.clear_grad()
        >>> [round(v, 4) for v in w.tolist()]
        [0.4472, -0.4472]
    """

    _op = "rmsprop"
    _states = (("mean_square", "mean_square", "tensor", 0.0),
               ("momentum", "moment", "tensor", 0.0),
               ("mean_grad", "mean_grad", "tensor", 0.0, lambda hp: bool(hp.get("centered"))))

    def __init__(self, learning_rate, rho=0.95, epsilon=1e-6, momentum=0.0, centered=False,
                 parameters=None, weight_decay=None, grad_clip=None, name=None):
        if not 0.0 <= rho:
            raise ValueError(f"RMSProp: 'rho' must be >= 0, got {rho}")
        if not 0.0 <= epsilon:
            raise ValueError(f"RMSProp: 'epsilon' must be >= 0, got {epsilon}")
        if not 0.0 <= momentum:
            raise ValueError(f"RMSProp: 'momentum' must be >= 0, got {momentum}")
        self._default_hp = {"rho": rho, "epsilon": epsilon, "momentum": momentum,
                            "centered": bool(centered)}
        super().__init__(learning_rate, parameters, weight_decay, grad_clip, name)
        self._rho, self._epsilon, self._momentum = rho, epsilon, momentum
        self._centered = bool(centered)

    def _op_attrs(self, hp, fg):
        return {"rho": _as_float(hp["rho"], "RMSProp: 'rho'"),
                "epsilon": _as_float(hp["epsilon"], "RMSProp: 'epsilon'"),
                "momentum": _as_float(hp["momentum"], "RMSProp: 'momentum'"),
                "centered": bool(hp.get("centered", False))}
