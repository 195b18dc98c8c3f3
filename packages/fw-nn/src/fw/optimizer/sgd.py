"""SGD and Momentum."""

from __future__ import annotations

from fw.optimizer.optimizer import Optimizer, _as_float, _regularizer

__all__ = ["SGD", "Momentum"]


class SGD(Optimizer):
    """Stochastic gradient descent: ``param -= lr * grad``.

    Args:
        learning_rate: a float or an LRScheduler (default 0.001).
        parameters: the parameters (or parameter groups) to update.
        weight_decay: a float (L2) or a regularizer.
        grad_clip: a gradient clipping strategy.
        multi_precision: keep float32 master weights of float16/bfloat16 parameters.
        name: an optional name.

    >>> import fw
    >>> lin = fw.nn.Linear(3, 1)
    >>> opt = fw.optimizer.SGD(learning_rate=0.1, parameters=lin.parameters())
    >>> lin(fw.ones([2, 3])).mean().backward()
    >>> opt.step(); opt.clear_grad()
    """

    _op = "sgd"

    def __init__(self, learning_rate=0.001, parameters=None, weight_decay=None, grad_clip=None,
                 multi_precision=False, name=None):
        self._multi_precision = multi_precision
        super().__init__(learning_rate, parameters, weight_decay, grad_clip, name)


class Momentum(Optimizer):
    """Momentum SGD: ``v = momentum * v + grad``; ``param -= lr * v`` (or, with
    ``use_nesterov``, ``param -= lr * (grad + momentum * v)``).

    Args:
        learning_rate: a float or an LRScheduler (default 0.001).
        momentum: the momentum factor (default 0.9).
        parameters: the parameters (or groups; a group may set ``momentum``,
            ``use_nesterov``, ``rescale_grad``, ``weight_decay``, ``learning_rate``).
        use_nesterov: Nesterov momentum.
        weight_decay: a float or ``L2Decay`` (applied inside the update op, as Paddle
            does) or another regularizer.
        grad_clip: a gradient clipping strategy.
        multi_precision: float32 master weights for float16/bfloat16 parameters.
        rescale_grad: the gradient is multiplied by this first.
        use_multi_tensor: accepted for compatibility (every update is fused here).
        name: an optional name.
    """

    _op = "momentum"
    _states = (("velocity", "velocity", "tensor", 0.0),)

    def __init__(self, learning_rate=0.001, momentum=0.9, parameters=None, use_nesterov=False,
                 weight_decay=None, grad_clip=None, multi_precision=False, rescale_grad=1.0,
                 use_multi_tensor=False, name=None):
        if momentum is None:
            raise ValueError("Momentum: momentum must not be None")
        self._multi_precision = multi_precision
        self._default_hp = {"momentum": momentum, "use_nesterov": bool(use_nesterov),
                            "rescale_grad": rescale_grad}
        super().__init__(learning_rate, parameters, weight_decay, grad_clip, name)
        self._momentum = momentum
        self._use_nesterov = bool(use_nesterov)
        self._rescale_grad = rescale_grad

    def _fused_l2(self, p, hp):
        if getattr(p, "regularizer", None) is not None:
            return 0.0
        reg = _regularizer(hp.get("weight_decay"))
        if reg is not None and getattr(reg, "kind", None) == "l2":
            return float(reg.coeff)
        return 0.0

    def _param_reg(self, p, hp, group):
        if self._fused_l2(p, hp):
            return None
        return super()._param_reg(p, hp, group)

    def _extra_key(self, p, hp):
        return (self._fused_l2(p, hp),)

    def _op_attrs(self, hp, fg):
        coeff = fg.extra[0] if fg.extra else 0.0
        return {"mu": _as_float(hp["momentum"], "Momentum: 'momentum'"),
                "use_nesterov": bool(hp["use_nesterov"]),
                "regularization_method": "l2_decay" if coeff else "",
                "regularization_coeff": coeff,
                "rescale_grad": float(hp["rescale_grad"])}
