"""Adam, AdamW, Adamax and Lamb."""

from __future__ import annotations

import numpy as np

from fw.optimizer.optimizer import Optimizer, _as_float

__all__ = ["Adam", "AdamW", "Adamax", "Lamb"]


def _beta(v, what):
    b = _as_float(v, what)
    if not 0.0 <= b < 1.0:
        raise ValueError(f"{what} must be in [0, 1), got {b}")
    return b


_ADAM_STATES = (
    ("moment1", "moment1", "tensor", 0.0),
    ("moment2", "moment2", "tensor", 0.0),
    ("beta1_pow_acc", "beta1_pow", "scalar", lambda hp, fg: _as_float(hp["beta1"], "beta1")),
    ("beta2_pow_acc", "beta2_pow", "scalar", lambda hp, fg: _as_float(hp["beta2"], "beta2")),
    ("moment2_max", "moment2_max", "tensor", 0.0, lambda hp: bool(hp.get("amsgrad"))),
)


class Adam(Optimizer):
    """The Adam optimizer (Kingma and Ba): moving averages of the gradient and its
    square, with bias correction.

    ``m = beta1 * m + (1 - beta1) * g``, ``v = beta2 * v + (1 - beta2) * g ** 2``,
    ``param = param - learning_rate * m_hat / (sqrt(v_hat) + epsilon)`` with
    ``m_hat = m / (1 - beta1 ** t)`` and ``v_hat = v / (1 - beta2 ** t)``. With
    ``amsgrad`` the running maximum of ``v`` is used. A float ``weight_decay`` is L2
    added to the gradient (use `AdamW` for decoupled decay).

    Args:
        learning_rate (float|LRScheduler, optional): the step size, or a scheduler from
            ``fw.optimizer.lr``. Default: 0.001.
        beta1 (float|Tensor, optional): the decay rate of the first moment. Default: 0.9.
        beta2 (float|Tensor, optional): the decay rate of the second moment. Default: 0.999.
        epsilon (float, optional): added to the denominator for stability. Default: 1e-08.
        parameters (list|tuple, optional): the parameters to update, or parameter-group
            dicts ``{"params": [...], <hyper-parameter>: value}``. A group may set
            ``beta1``, ``beta2``, ``epsilon``, ``weight_decay``, ``learning_rate``.
            Required in dynamic mode.
            Default: None.
        weight_decay (float|WeightDecayRegularizer, optional): a float is an L2 coefficient;
            or ``fw.regularizer.L1Decay`` / ``L2Decay``. A parameter's own regularizer
            (``ParamAttr``) takes precedence. Default: None.
        grad_clip (ClipGradBase, optional): ``fw.nn.ClipGradByValue``, ``ClipGradByNorm`` or
            ``ClipGradByGlobalNorm``. Default: None.
        lazy_mode (bool, optional): accepted for compatibility (gradients are dense here).
            Default: False.
        multi_precision (bool, optional): keep float32 master weights of float16/bfloat16
            parameters. Default: False.
        use_multi_tensor (bool, optional): accepted for compatibility; every update is
            fused here. Default: False.
        amsgrad (bool, optional): use the AMSGrad variant. Default: False.
        name (str, optional): unused; Paddle's name. Default: None.

    Examples:
        >>> import fw
        >>> w = fw.create_parameter([2], "float32",
        ...                         default_initializer=fw.nn.initializer.Constant(0.0))
        >>> opt = fw.optimizer.Adam(learning_rate=0.1, parameters=[w])
        >>> for _ in range(1):
        ...     loss = ((w - fw.to_tensor([1.0, -1.0])) ** 2).sum()
        ...     loss.backward()
        ...     opt.step()
        ...     opt.clear_grad()
        >>> [round(v, 4) for v in w.tolist()]
        [0.1, -0.1]
    """

    _op = "adam"
    _states = _ADAM_STATES

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-8,
                 parameters=None, weight_decay=None, grad_clip=None, lazy_mode=False,
                 multi_precision=False, use_multi_tensor=False, amsgrad=False, name=None):
        _beta(beta1, f"{type(self).__name__}: 'beta1'")
        _beta(beta2, f"{type(self).__name__}: 'beta2'")
        if _as_float(epsilon, "epsilon") < 0:
            raise ValueError(f"{type(self).__name__}: 'epsilon' must be >= 0")
        self._multi_precision = multi_precision
        self._default_hp = {"beta1": beta1, "beta2": beta2, "epsilon": epsilon,
                            "lazy_mode": lazy_mode, "amsgrad": bool(amsgrad)}
        super().__init__(learning_rate, parameters, weight_decay, grad_clip, name)
        self._beta1, self._beta2, self._epsilon = beta1, beta2, epsilon
        self._lazy_mode = lazy_mode
        self._amsgrad = bool(amsgrad)

    def _op_attrs(self, hp, fg):
        return {"beta1": _beta(hp["beta1"], "beta1"), "beta2": _beta(hp["beta2"], "beta2"),
                "epsilon": _as_float(hp["epsilon"], "epsilon"),
                "amsgrad": bool(hp.get("amsgrad", False))}


class AdamW(Adam):
    """Adam with decoupled weight decay (Loshchilov and Hutter): before the Adam
    update, ``param = param * (1 - learning_rate * lr_ratio(param) * weight_decay)``.

    Unlike `Adam`'s ``weight_decay``, the decay does not pass through the moment
    estimates. Note the default ``weight_decay=0.01``.

    Args:
        learning_rate (float|LRScheduler, optional): the step size, or a scheduler from
            ``fw.optimizer.lr``. Default: 0.001.
        beta1 (float|Tensor, optional): the decay rate of the first moment. Default: 0.9.
        beta2 (float|Tensor, optional): the decay rate of the second moment. Default: 0.999.
        epsilon (float, optional): added to the denominator for stability. Default: 1e-08.
        parameters (list|tuple, optional): the parameters to update, or parameter-group
            dicts ``{"params": [...], <hyper-parameter>: value}``. Required in dynamic mode.
            Default: None.
        weight_decay (float, optional): the decoupled decay coefficient (a group may
            override it). Default: 0.01.
        lr_ratio (callable, optional): ``param -> float`` scaling the rate per parameter.
            Default: None.
        apply_decay_param_fun (callable, optional): ``param name -> bool``; parameters for
            which it returns False are not decayed. Default: None.
        grad_clip (ClipGradBase, optional): ``fw.nn.ClipGradByValue``, ``ClipGradByNorm`` or
            ``ClipGradByGlobalNorm``. Default: None.
        lazy_mode (bool, optional): accepted for compatibility. Default: False.
        multi_precision (bool, optional): keep float32 master weights of float16/bfloat16
            parameters. Default: False.
        amsgrad (bool, optional): use the AMSGrad variant. Default: False.
        name (str, optional): unused; Paddle's name. Default: None.

    Examples:
        >>> import fw
        >>> w = fw.create_parameter([2], "float32",
        ...                         default_initializer=fw.nn.initializer.Constant(0.0))
        >>> opt = fw.optimizer.AdamW(learning_rate=0.1, parameters=[w], weight_decay=0.01)
        >>> for _ in range(1):
        ...     loss = ((w - fw.to_tensor([1.0, -1.0])) ** 2).sum()
        ...     loss.backward()
        ...     opt.step()
        ...     opt.clear_grad()
        >>> [round(v, 4) for v in w.tolist()]
        [0.1, -0.1]
    """

    _op = "adamw"

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-8,
                 parameters=None, weight_decay=0.01, lr_ratio=None, apply_decay_param_fun=None,
                 grad_clip=None, lazy_mode=False, multi_precision=False, amsgrad=False,
                 name=None):
        if weight_decay is None:
            weight_decay = 0.0
        if hasattr(weight_decay, "kind"):
            raise TypeError("AdamW: 'weight_decay' is the decoupled decay coefficient (a "
                            "float); use Adam for L1Decay/L2Decay regularization")
        coeff = _as_float(weight_decay, "AdamW: 'weight_decay'")
        if lr_ratio is not None and not callable(lr_ratio):
            raise TypeError("AdamW: 'lr_ratio' must be a function param -> float")
        self._lr_ratio = lr_ratio
        self._apply_decay_param_fun = apply_decay_param_fun
        self._coeff = coeff
        super().__init__(learning_rate, beta1, beta2, epsilon, parameters, None, grad_clip,
                         lazy_mode, multi_precision, False, amsgrad, name)
        self._default_dict["weight_decay"] = coeff

    def _param_reg(self, p, hp, group):
        return getattr(p, "regularizer", None)  # weight_decay is decoupled, not a regularizer

    def _extra_key(self, p, hp):
        ratio = 1.0 if self._lr_ratio is None else float(self._lr_ratio(p))
        decay = True
        if self._apply_decay_param_fun is not None:
            decay = bool(self._apply_decay_param_fun(p.name))
        coeff = _as_float(hp.get("weight_decay", self._coeff) or 0.0, "AdamW: 'weight_decay'")
        return (ratio, decay, coeff)

    def _op_attrs(self, hp, fg):
        a = super()._op_attrs(hp, fg)
        ratio, decay, coeff = fg.extra if fg.extra else (1.0, True, self._coeff)
        a.update({"lr_ratio": ratio, "coeff": coeff, "with_decay": decay and coeff != 0.0})
        return a


class Adamax(Optimizer):
    """Adamax: Adam with the infinity norm in place of the second moment.

    ``m = beta1 * m + (1 - beta1) * g``, ``u = max(beta2 * u + epsilon, |g|)``,
    ``param = param - learning_rate / (1 - beta1 ** t) * m / u``.

    Args:
        learning_rate (float|LRScheduler, optional): the step size, or a scheduler from
            ``fw.optimizer.lr``. Default: 0.001.
        beta1 (float|Tensor, optional): the decay rate of the first moment. Default: 0.9.
        beta2 (float|Tensor, optional): the decay rate of the second moment. Default: 0.999.
        epsilon (float, optional): added to the denominator for stability. Default: 1e-08.
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
        >>> opt = fw.optimizer.Adamax(learning_rate=0.1, parameters=[w])
        >>> for _ in range(1):
        ...     loss = ((w - fw.to_tensor([1.0, -1.0])) ** 2).sum()
        ...     loss.backward()
        ...     opt.step()
        ...     opt.clear_grad()
        >>> [round(v, 4) for v in w.tolist()]
        [0.1, -0.1]
    """

    _op = "adamax"
    _states = (
        ("moment", "moment", "tensor", 0.0),
        ("inf_norm", "inf_norm", "tensor", 0.0),
        ("beta1_pow_acc", "beta1_pow", "scalar",
         lambda hp, fg: _as_float(hp["beta1"], "beta1")),
    )

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-8,
                 parameters=None, weight_decay=None, grad_clip=None, name=None):
        _beta(beta1, "Adamax: 'beta1'")
        _beta(beta2, "Adamax: 'beta2'")
        self._default_hp = {"beta1": beta1, "beta2": beta2, "epsilon": epsilon}
        super().__init__(learning_rate, parameters, weight_decay, grad_clip, name)
        self._beta1, self._beta2, self._epsilon = beta1, beta2, epsilon

    def _op_attrs(self, hp, fg):
        return {"beta1": _beta(hp["beta1"], "beta1"), "beta2": _beta(hp["beta2"], "beta2"),
                "epsilon": _as_float(hp["epsilon"], "epsilon")}


class Lamb(Optimizer):
    """LAMB (You et al.): the Adam direction plus ``lamb_weight_decay * param``,
    scaled per parameter by the trust ratio ``||param|| / ||update||``; for large-batch
    training.

    Args:
        learning_rate (float|LRScheduler, optional): the step size, or a scheduler from
            ``fw.optimizer.lr``. Default: 0.001.
        lamb_weight_decay (float, optional): the decay rate inside the update. Default: 0.01.
        beta1 (float, optional): the decay rate of the first moment. Default: 0.9.
        beta2 (float, optional): the decay rate of the second moment. Default: 0.999.
        epsilon (float, optional): added to the denominator. Default: 1e-06.
        parameters (list|tuple, optional): the parameters to update, or parameter-group
            dicts ``{"params": [...], <hyper-parameter>: value}``. Required in dynamic mode.
            Default: None.
        grad_clip (ClipGradBase, optional): ``fw.nn.ClipGradByValue``, ``ClipGradByNorm`` or
            ``ClipGradByGlobalNorm``. Default: None.
        exclude_from_weight_decay_fn (callable, optional): ``param -> bool``; True excludes
            the parameter from the decay. Default: None.
        multi_precision (bool, optional): keep float32 master weights of float16/bfloat16
            parameters. Default: False.
        always_adapt (bool, optional): apply the trust ratio also to parameters without
            decay. Default: False.
        name (str, optional): unused; Paddle's name. Default: None.

    Examples:
        >>> import fw
        >>> w = fw.create_parameter([2], "float32",
        ...                         default_initializer=fw.nn.initializer.Constant(0.0))
        >>> opt = fw.optimizer.Lamb(learning_rate=0.1, parameters=[w])
        >>> for _ in range(1):
        ...     loss = ((w - fw.to_tensor([1.0, -1.0])) ** 2).sum()
        ...     loss.backward()
        ...     opt.step()
        ...     opt.clear_grad()
        >>> [round(v, 4) for v in w.tolist()]
        [0.1, -0.1]
    """

    _op = "lamb"
    _states = _ADAM_STATES[:4]

    def __init__(self, learning_rate=0.001, lamb_weight_decay=0.01, beta1=0.9, beta2=0.999,
                 epsilon=1e-6, parameters=None, grad_clip=None, exclude_from_weight_decay_fn=None,
                 multi_precision=False, always_adapt=False, name=None):
        _beta(beta1, "Lamb: 'beta1'")
        _beta(beta2, "Lamb: 'beta2'")
        self._multi_precision = multi_precision
        self._default_hp = {"beta1": beta1, "beta2": beta2, "epsilon": epsilon,
                            "lamb_weight_decay": lamb_weight_decay,
                            "exclude_from_weight_decay_fn": exclude_from_weight_decay_fn,
                            "always_adapt": bool(always_adapt)}
        super().__init__(learning_rate, parameters, None, grad_clip, name)
        self._lamb_weight_decay = lamb_weight_decay
        self._exclude_from_weight_decay_fn = exclude_from_weight_decay_fn
        self._always_adapt = bool(always_adapt)

    def _param_reg(self, p, hp, group):
        return getattr(p, "regularizer", None)

    def _extra_key(self, p, hp):
        fn = hp.get("exclude_from_weight_decay_fn")
        if fn is not None and fn(p):
            return (0.0,)
        return (_as_float(hp["lamb_weight_decay"], "Lamb: 'lamb_weight_decay'"),)

    def _op_attrs(self, hp, fg):
        wd = fg.extra[0] if fg.extra else _as_float(hp["lamb_weight_decay"], "weight_decay")
        return {"beta1": _beta(hp["beta1"], "beta1"), "beta2": _beta(hp["beta2"], "beta2"),
                "epsilon": _as_float(hp["epsilon"], "epsilon"), "weight_decay": wd,
                "always_adapt": bool(hp.get("always_adapt", False))}

    def _kernel_kw(self, fg, i0, i1, o0):
        if i1 - i0 <= 1:
            return {}
        return {"segments": np.asarray(fg.offsets[i0:i1], dtype=np.intp) - o0}
