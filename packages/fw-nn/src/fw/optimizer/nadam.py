"""NAdam and RAdam (Paddle's ``paddle.optimizer.NAdam`` / ``RAdam``): Adam variants
whose update ops (``nadam``, ``radam``) live in fw-core's op table like the others."""

from __future__ import annotations

from fw.optimizer.optimizer import Optimizer, _as_float

__all__ = ["NAdam", "RAdam"]


def _check(who, learning_rate, beta1, beta2, epsilon):
    if isinstance(learning_rate, (int, float)) and not learning_rate >= 0.0:
        raise ValueError(f"{who}: invalid learning rate {learning_rate}, expected >= 0")
    if not _as_float(epsilon, f"{who}: 'epsilon'") >= 0.0:
        raise ValueError(f"{who}: invalid epsilon {epsilon}, expected >= 0")
    for v, n in ((beta1, "beta1"), (beta2, "beta2")):
        b = _as_float(v, f"{who}: '{n}'")
        if not 0.0 <= b < 1.0:
            raise ValueError(f"{who}: invalid {n} {b}, expected 0 <= {n} < 1")


_SCALAR_ONE = 1.0  # Paddle starts NAdam's/RAdam's power accumulators at 1


class NAdam(Optimizer):
    r"""NAdam: Adam with Nesterov momentum (Dozat, 2016), with Paddle's momentum-decay
    schedule :math:`\mu_t = \beta_1 (1 - \frac12 0.96^{t\psi})`:

    .. math::
        m_t = \beta_1 m + (1-\beta_1) g,\quad v_t = \beta_2 v + (1-\beta_2) g^2,\\
        \theta \mathrel{-}= \gamma \Big(\frac{\mu_{t+1} m_t}{1 - \prod_{i\le t+1}\mu_i}
        + \frac{(1-\mu_t) g}{1-\prod_{i\le t}\mu_i}\Big) \Big/
        \Big(\sqrt{v_t / (1-\beta_2^t)} + \epsilon\Big)

    Args:
        learning_rate (float|LRScheduler, optional): the learning rate. Default 0.002.
        beta1 (float|Tensor, optional): first-moment decay. Default 0.9.
        beta2 (float|Tensor, optional): second-moment decay. Default 0.999.
        epsilon (float, optional): added to the denominator. Default 1e-8.
        momentum_decay (float, optional): :math:`\psi`. Default 0.004.
        parameters (list, optional): the parameters, or groups of them (a group may set
            beta1, beta2, epsilon, momentum_decay, weight_decay, learning_rate).
        weight_decay (float|Tensor|WeightDecayRegularizer, optional): L2 regularization
            added to the gradient. Default None.
        grad_clip (ClipGradBase, optional): gradient clipping. Default None.
        name (str, optional): a name. Default None.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> lin = fw.nn.Linear(3, 1)
            >>> opt = fw.optimizer.NAdam(learning_rate=0.01, parameters=lin.parameters())
            >>> lin(fw.ones([2, 3])).mean().backward()
            >>> opt.step(); opt.clear_grad()
    """

    _op = "nadam"
    _states = (("momentum_decay_pow", "momentum_decay_pow", "scalar", _SCALAR_ONE),
               ("beta2_pow", "beta2_pow", "scalar", _SCALAR_ONE),
               ("mu_product", "mu_product", "scalar", _SCALAR_ONE),
               ("moment1", "moment1", "tensor", 0.0),
               ("moment2", "moment2", "tensor", 0.0))

    def __init__(self, learning_rate=0.002, beta1=0.9, beta2=0.999, epsilon=1e-8,
                 momentum_decay=0.004, parameters=None, weight_decay=None, grad_clip=None,
                 name=None):
        _check("NAdam", learning_rate, beta1, beta2, epsilon)
        if not _as_float(momentum_decay, "NAdam: 'momentum_decay'") >= 0.0:
            raise ValueError(f"NAdam: invalid momentum_decay {momentum_decay}, expected >= 0")
        self._default_hp = {"beta1": beta1, "beta2": beta2, "epsilon": epsilon,
                            "momentum_decay": momentum_decay}
        super().__init__(learning_rate, parameters, weight_decay, grad_clip, name)
        self._beta1, self._beta2, self._epsilon = beta1, beta2, epsilon
        self._momentum_decay = momentum_decay

    def _op_attrs(self, hp, fg):
        return {"beta1": _as_float(hp["beta1"], "beta1"),
                "beta2": _as_float(hp["beta2"], "beta2"),
                "epsilon": _as_float(hp["epsilon"], "epsilon"),
                "momentum_decay": _as_float(hp["momentum_decay"], "momentum_decay")}


class RAdam(Optimizer):
    r"""RAdam: Adam with the variance rectification of Liu et al., "On the Variance of
    the Adaptive Learning Rate and Beyond" (2019). With
    :math:`\rho_\infty = 2/(1-\beta_2) - 1` and
    :math:`\rho_t = \rho_\infty - 2t\beta_2^t/(1-\beta_2^t)`: while :math:`\rho_t \le 5`
    the step is :math:`\gamma \hat m_t` (momentum SGD); afterwards
    :math:`\gamma \hat m_t r_t \sqrt{1-\beta_2^t} / (\sqrt{v_t} + \epsilon)` with the
    rectifier :math:`r_t`.

    Args:
        learning_rate (float|LRScheduler, optional): the learning rate. Default 0.001.
        beta1 (float|Tensor, optional): first-moment decay. Default 0.9.
        beta2 (float|Tensor, optional): second-moment decay. Default 0.999.
        epsilon (float, optional): added to the denominator. Default 1e-8.
        parameters (list, optional): the parameters, or groups of them.
        weight_decay (float|Tensor|WeightDecayRegularizer, optional): L2 regularization
            added to the gradient. Default None.
        grad_clip (ClipGradBase, optional): gradient clipping. Default None.
        name (str, optional): a name. Default None.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> lin = fw.nn.Linear(3, 1)
            >>> opt = fw.optimizer.RAdam(learning_rate=0.01, parameters=lin.parameters())
            >>> lin(fw.ones([2, 3])).mean().backward()
            >>> opt.step(); opt.clear_grad()
    """

    _op = "radam"
    _states = (("beta1_pow", "beta1_pow", "scalar", _SCALAR_ONE),
               ("beta2_pow", "beta2_pow", "scalar", _SCALAR_ONE),
               ("rho", "rho", "scalar", _SCALAR_ONE),
               ("moment1", "moment1", "tensor", 0.0),
               ("moment2", "moment2", "tensor", 0.0))

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-8,
                 parameters=None, weight_decay=None, grad_clip=None, name=None):
        _check("RAdam", learning_rate, beta1, beta2, epsilon)
        self._default_hp = {"beta1": beta1, "beta2": beta2, "epsilon": epsilon}
        super().__init__(learning_rate, parameters, weight_decay, grad_clip, name)
        self._beta1, self._beta2, self._epsilon = beta1, beta2, epsilon

    def _op_attrs(self, hp, fg):
        return {"beta1": _as_float(hp["beta1"], "beta1"),
                "beta2": _as_float(hp["beta2"], "beta2"),
                "epsilon": _as_float(hp["epsilon"], "epsilon")}
