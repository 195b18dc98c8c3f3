"""Rprop (Paddle's ``paddle.optimizer.Rprop``): resilient backpropagation."""

from __future__ import annotations

from fw.optimizer.lr import LRScheduler
from fw.optimizer.optimizer import Optimizer, _as_float

__all__ = ["Rprop"]


class Rprop(Optimizer):
    r"""Rprop (Riedmiller & Braun, 1993): every element has its own step size, grown by
    ``etas[1]`` while its gradient keeps its sign and shrunk by ``etas[0]`` when the sign
    flips (that step is then skipped); the parameter moves by ``-sign(g) * step``.
    Only gradient signs matter, so it suits full-batch training.

    Args:
        learning_rate (float|Tensor|LRScheduler, optional): the initial step size of every
            element (a scheduler's current value at the first step). Default 0.001.
        learning_rate_range (tuple[float, float], optional): the bounds of the step sizes.
            Default (1e-5, 50).
        parameters (list, optional): the parameters, or groups of them.
        etas (tuple[float, float], optional): the shrink and growth factors,
            ``0 < etas[0] < 1 < etas[1]``. Default (0.5, 1.2).
        grad_clip (ClipGradBase, optional): gradient clipping. Default None.
        multi_precision (bool, optional): float32 master weights for float16/bfloat16
            parameters. Default False.
        name (str, optional): a name. Default None.

    As in Paddle, the learning rate only initialises the step sizes: later changes
    (a scheduler, `set_lr`) do not affect them.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> lin = fw.nn.Linear(3, 1)
            >>> opt = fw.optimizer.Rprop(learning_rate=0.01, parameters=lin.parameters())
            >>> lin(fw.ones([2, 3])).mean().backward()
            >>> opt.step(); opt.clear_grad()
    """

    _op = "rprop"

    def __init__(self, learning_rate=0.001, learning_rate_range=(1e-5, 50), parameters=None,
                 etas=(0.5, 1.2), grad_clip=None, multi_precision=False, name=None):
        if learning_rate is None:
            raise ValueError("Rprop: learning_rate is not set")
        lr0 = learning_rate() if isinstance(learning_rate, LRScheduler) else _as_float(
            learning_rate, "Rprop: 'learning_rate'")
        lo, hi = (_as_float(v, "Rprop: 'learning_rate_range'") for v in learning_rate_range)
        if not 0.0 < lo <= lr0 <= hi:
            raise ValueError(f"Rprop: expected 0 < learning_rate_range[0] <= learning_rate <= "
                             f"learning_rate_range[1], got {learning_rate_range} and {lr0}")
        en, ep = (_as_float(v, "Rprop: 'etas'") for v in etas)
        if not 0.0 < en < 1.0 < ep:
            raise ValueError(f"Rprop: expected 0 < etas[0] < 1 < etas[1], got {tuple(etas)}")
        self._multi_precision = multi_precision
        self._initial_learning_rate = lr0
        self._learning_rate_range = (lo, hi)
        self._etas = (en, ep)
        # the per-element step sizes start at the initial learning rate
        self._states = (("prevs", "prev", "tensor", 0.0),
                        ("learning_rates", "learning_rates", "tensor", lr0))
        super().__init__(learning_rate, parameters, None, grad_clip, name)

    def _op_attrs(self, hp, fg):
        return {"lr_min": self._learning_rate_range[0], "lr_max": self._learning_rate_range[1],
                "eta_negative": self._etas[0], "eta_positive": self._etas[1]}
