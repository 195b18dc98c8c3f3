"""Adagrad, Adadelta and RMSProp."""

from __future__ import annotations

from fw.optimizer.optimizer import Optimizer, _as_float

__all__ = ["Adagrad", "Adadelta", "RMSProp"]


class Adagrad(Optimizer):
    """Adagrad: ``G += g^2``, ``param -= lr * g / (sqrt(G) + epsilon)``.

    Args:
        learning_rate: a float or an LRScheduler.
        epsilon: added to the denominator (default 1e-6).
        parameters, weight_decay, grad_clip, name: as `fw.optimizer.Optimizer`.
        initial_accumulator_value: the initial value of ``G`` (default 0.0).
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
    """Adadelta (with Paddle's learning-rate factor): ``Eg = rho Eg + (1-rho) g^2``,
    ``d = -sqrt((Ed + eps) / (Eg + eps)) g``, ``Ed = rho Ed + (1-rho) d^2``,
    ``param += lr * d``.

    Args:
        learning_rate: a float or an LRScheduler (default 0.001).
        epsilon: default 1e-6.
        rho: the decay rate (default 0.95).
        parameters, weight_decay, grad_clip, name: as `fw.optimizer.Optimizer`.
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
    """RMSProp: ``ms = rho ms + (1-rho) g^2``; ``mom = momentum * mom + lr * g /
    sqrt(ms + epsilon)`` (centered: ``ms - mg^2`` with ``mg`` the mean gradient);
    ``param -= mom``.

    Args:
        learning_rate: a float or an LRScheduler.
        rho: the decay rate (default 0.95).
        epsilon: inside the square root (default 1e-6).
        momentum: default 0.0.
        centered: normalise by the variance instead of the second moment.
        parameters, weight_decay, grad_clip, name: as `fw.optimizer.Optimizer`.
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
