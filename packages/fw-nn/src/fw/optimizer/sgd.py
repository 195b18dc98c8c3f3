"""SGD and Momentum."""

from __future__ import annotations

from fw.optimizer.optimizer import Optimizer, _as_float, _regularizer

__all__ = ["SGD", "Momentum"]


class SGD(Optimizer):
    """Stochastic gradient descent: ``param = param - learning_rate * grad``.

    Args:
        learning_rate (float|LRScheduler, optional): the step size, or a scheduler from
            ``fw.optimizer.lr``. Default: 0.001.
        parameters (list|tuple, optional): the parameters to update, or parameter-group
            dicts ``{"params": [...], <hyper-parameter>: value}``. Required in dynamic mode.
            Default: None.
        weight_decay (float|WeightDecayRegularizer, optional): a float is an L2 coefficient;
            or ``fw.regularizer.L1Decay`` / ``L2Decay``. A parameter's own regularizer
            (``ParamAttr``) takes precedence. Default: None.
        grad_clip (ClipGradBase, optional): ``fw.nn.ClipGradByValue``, ``ClipGradByNorm`` or
            ``ClipGradByGlobalNorm``. Default: None.
        multi_precision (bool, optional): keep float32 master weights of float16/bfloat16
            parameters. Default: False.
        name (str, optional): unused; Paddle's name. Default: None.

    Examples:
        >>> import fw
        >>> w = fw.create_parameter([2], "float32",
        ...                         default_initializer=fw.nn.initializer.Constant(0.0))
        >>> opt = fw.optimizer.SGD(learning_rate=0.1, parameters=[w])
        >>> for _ in range(1):
        ...     loss = ((w - fw.to_tensor([1.0, -1.0])) ** 2).sum()
        ...     loss.backward()
        ...     opt.step()
        ...     opt.clear_grad()
        >>> [round(v, 4) for v in w.tolist()]
        [0.2, -0.2]
    """

    _op = "sgd"

    def __init__(self, learning_rate=0.001, parameters=None, weight_decay=None, grad_clip=None,
                 multi_precision=False, name=None):
        self._multi_precision = multi_precision
        super().__init__(learning_rate, parameters, weight_decay, grad_clip, name)


class Momentum(Optimizer):
    """Gradient descent with momentum: ``v = momentum * v + grad``,
    ``param = param - learning_rate * v``; with ``use_nesterov``,
    ``param = param - learning_rate * (grad + momentum * v)``.

    Args:
        learning_rate (float|LRScheduler, optional): the step size, or a scheduler from
            ``fw.optimizer.lr``. Default: 0.001.
        momentum (float, optional): the momentum factor. Default: 0.9.
        parameters (list|tuple, optional): the parameters to update, or parameter-group
            dicts ``{"params": [...], <hyper-parameter>: value}``. A group may set
            ``momentum``, ``use_nesterov``, ``rescale_grad``, ``weight_decay``. Required in
            dynamic mode.
            Default: None.
        use_nesterov (bool, optional): Nesterov momentum. Default: False.
        weight_decay (float|WeightDecayRegularizer, optional): a float is an L2 coefficient;
            or ``fw.regularizer.L1Decay`` / ``L2Decay``. A parameter's own regularizer
            (``ParamAttr``) takes precedence. L2 is applied inside the update,
            as Paddle does. Default: None.
        grad_clip (ClipGradBase, optional): ``fw.nn.ClipGradByValue``, ``ClipGradByNorm`` or
            ``ClipGradByGlobalNorm``. Default: None.
        multi_precision (bool, optional): keep float32 master weights of float16/bfloat16
            parameters. Default: False.
        rescale_grad (float, optional): the gradient is multiplied by this first. Default: 1.0.
        use_multi_tensor (bool, optional): accepted for compatibility; every update is
            fused here. Default: False.
        name (str, optional): unused; Paddle's name. Default: None.

    Examples:
        >>> import fw
        >>> w = fw.create_parameter([2], "float32",
        ...                         default_initializer=fw.nn.initializer.Constant(0.0))
        >>> opt = fw.optimizer.Momentum(learning_rate=0.1, momentum=0.9, parameters=[w])
        >>> for _ in range(2):
        ...     loss = ((w - fw.to_tensor([1.0, -1.0])) ** 2).sum()
        ...     loss.backward()
        ...     opt.step()
        ...     opt.clear_grad()
        >>> [round(v, 4) for v in w.tolist()]
        [0.54, -0.54]
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
