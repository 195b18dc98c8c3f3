"""ASGD (Paddle's: the stochastic average gradient method)."""

from __future__ import annotations

import numpy as np

from fw.core.errors import UnsupportedError
from fw.core.tensor import Tensor
from fw.optimizer.optimizer import Optimizer

__all__ = ["ASGD"]


class ASGD(Optimizer):
    """Averaged SGD over the last ``batch_num`` gradients.

    Each parameter keeps its last ``batch_num`` gradients ``y`` and their sum ``d``; at
    step ``m`` (from 0) with slot ``i = m % batch_num``: ``d = d - y[i] + g``,
    ``y[i] = g``, ``param = param - learning_rate * d / min(m + 1, batch_num)``.
    Memory: ``batch_num`` copies of every parameter.

    Args:
        learning_rate (float|Tensor|LRScheduler, optional): the step size. Default: 0.001.
        batch_num (int, optional): the number of gradients averaged (1 makes it SGD).
            Default: 1.
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
        >>> opt = fw.optimizer.ASGD(learning_rate=0.1, batch_num=2, parameters=[w])
        >>> for _ in range(2):
        ...     loss = ((w - fw.to_tensor([1.0, -1.0])) ** 2).sum()
        ...     loss.backward()
        ...     opt.step()
        ...     opt.clear_grad()
        >>> [round(v, 4) for v in w.tolist()]
        [0.38, -0.38]
    """

    _op = "asgd"
    _states = (("d", "d", "tensor", 0.0),
               ("y", "y", "rows", lambda hp, fg: int(hp["batch_num"])),
               ("m", "n", "count", 0))

    def __init__(self, learning_rate=0.001, batch_num=1, parameters=None, weight_decay=None,
                 grad_clip=None, multi_precision=False, name=None):
        if batch_num is None:
            raise ValueError("ASGD: batch_num must not be None")
        if not (isinstance(batch_num, int) and batch_num > 0):
            raise ValueError(f"ASGD: 'batch_num' must be a positive int, got {batch_num!r}")
        self._multi_precision = multi_precision
        self._default_hp = {"batch_num": batch_num}
        super().__init__(learning_rate, parameters, weight_decay, grad_clip, name)
        self._n = batch_num

    def _run(self, fg, kern, P, G, lr, i0, i1, o0, o1):
        m = int(fg.scalars["m"][i0])
        rows = fg.state["y"].shape[0]
        y = fg.state["y"][m % rows, o0:o1]
        d = fg.state["d"][o0:o1]
        p = P[o0:o1]
        n = np.array([min(m + 1, rows)], dtype=np.float64)
        kern(p, G[o0:o1], np.array([lr], dtype=np.float64), d, y, n, out=(p, d, y))
        fg.scalars["m"][i0:i1] = m + 1

    def _functional_update(self, param, grad, state, lr, hp=None):
        from fw.core.dispatch import invoke
        from fw.core.ops import OPS

        if not all(isinstance(v, Tensor) for v in (param, grad, state["m"])):
            raise UnsupportedError("ASGD: the functional update indexes its gradient table by "
                                   "the step count, so it runs eagerly only")
        m = int(state["m"].item())
        ys = state["y"]
        rows = ys.shape[0]
        i = m % rows
        if not isinstance(lr, Tensor):
            lr = np.array([lr], dtype=np.float32)
        n = np.array([min(m + 1, rows)], dtype=np.float32)
        p, d, y = invoke(OPS["asgd"], [param, grad, lr, state["d"], ys[i], n], {})
        new_ys = ys.numpy().copy()
        new_ys[i] = y.numpy()
        import fw

        return p, {"d": d, "y": fw.to_tensor(new_ys),
                   "m": fw.to_tensor(np.array([m + 1], dtype=np.int64))}
