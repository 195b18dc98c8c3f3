"""``LookAhead`` and ``ModelAverage`` (``paddle.incubate``): wrappers that keep a
second copy of the weights beside an ordinary optimizer. The update rules follow
Paddle 3.3's (``paddle/incubate/optimizer/lookahead.py`` and ``modelaverage.py`` with
its ``average_accumulates`` kernel); the tests replay a training run of real Paddle.
The state is NumPy arrays per parameter, written back with ``Tensor.set_value`` so a
parameter stays the view its optimizer's flat buffer owns."""

from __future__ import annotations

import contextlib

import numpy as np

from fw.core.errors import InvalidArgumentError, InvalidTypeError
from fw.core.tensor import Tensor, wrap

__all__ = ["LookAhead", "ModelAverage"]

# Paddle's average_accumulates moves sum_1 into sum_2 every this many updates, so that
# sum_1 never grows large enough to lose the low bits of new values.
_MAX_NUM_ACCUMULATES = 16384


def _with_grad(params):
    return [p for p in params if getattr(p, "trainable", not p.stop_gradient)
            and p.grad is not None]


class LookAhead:
    """Lookahead ("k steps forward, 1 step back", Zhang et al. 2019) around an inner
    optimizer: the inner optimizer updates the fast weights every step; every `k` steps
    the slow weights move ``alpha`` of the way to the fast ones and the fast weights
    are reset to them.

    Args:
        inner_optimizer (Optimizer): the optimizer that updates the fast weights.
        alpha (float, optional): the slow weights' step size, in [0, 1]. Default 0.5.
        k (int, optional): the slow weights are updated every k steps. Default 5.
        name (str, optional): unused (Paddle's naming argument).

    Examples:
        >>> import fw
        >>> lin = fw.nn.Linear(2, 1)
        >>> sgd = fw.optimizer.SGD(0.1, parameters=lin.parameters())
        >>> opt = fw.incubate.LookAhead(sgd, alpha=0.2, k=5)
        >>> lin(fw.ones([4, 2])).mean().backward()
        >>> opt.step()
        >>> opt.clear_grad()
    """

    def __init__(self, inner_optimizer, alpha=0.5, k=5, name=None):
        if inner_optimizer is None or not hasattr(inner_optimizer, "step"):
            raise InvalidTypeError(f"LookAhead: 'inner_optimizer' must be an optimizer, got "
                                   f"{type(inner_optimizer).__name__}")
        if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not (
                0.0 <= alpha <= 1.0):
            raise InvalidArgumentError(f"LookAhead: 'alpha' must be a number in [0, 1], got "
                                       f"{alpha!r}")
        if isinstance(k, bool) or not isinstance(k, int) or k <= 0:
            raise InvalidArgumentError(f"LookAhead: 'k' must be a positive int, got {k!r}")
        params = inner_optimizer.get_parameter_list()
        if params is None:
            raise InvalidArgumentError("LookAhead: the inner optimizer must be made with "
                                       "'parameters' (dynamic mode)")
        self.inner_optimizer = inner_optimizer
        self.alpha = float(alpha)
        self.k = k
        self.type = "lookahead"
        self._name = name
        self._parameter_list = params
        self._global_step = 0
        self._slow: dict = {}

    def step(self):
        """Runs the inner optimizer, then (every k-th step) the Lookahead update of the
        parameters that have gradients.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> lin = fw.nn.Linear(1, 1, bias_attr=False)
            >>> _ = lin.weight.set_value(fw.ones([1, 1]))
            >>> sgd = fw.optimizer.SGD(0.1, parameters=lin.parameters())
            >>> opt = fw.incubate.LookAhead(sgd, alpha=0.5, k=2)
            >>> for _ in range(2):   # fast: 0.9, 0.8; at step 2 slow = 0.5*0.8 + 0.5*0.9
            ...     lin(fw.ones([1, 1])).sum().backward()
            ...     opt.step(); opt.clear_grad()
            >>> round(float(lin.weight), 4)
            0.85
        """
        self.inner_optimizer.step()
        self._lookahead_update()

    def _lookahead_update(self):
        self._global_step += 1
        for p in _with_grad(self._parameter_list):
            fast = p.numpy()
            slow = self._slow.get(id(p))
            if slow is None or self._global_step == 1:
                slow = fast.copy()  # Paddle seeds the slow weights after the first step
            if self._global_step % self.k == 0:
                slow = (self.alpha * fast + (1.0 - self.alpha) * slow).astype(fast.dtype)
                p.set_value(slow)
            self._slow[id(p)] = slow

    def minimize(self, loss, startup_program=None, parameters=None, no_grad_set=None):
        """Applies the gradients of `loss` (already computed by ``loss.backward()``)
        through the inner optimizer, then the Lookahead update.

        Args:
            loss (Tensor): the loss whose gradients were computed.
            startup_program: unused in dynamic mode (Paddle's static argument).
                Default: None.
            parameters (list[Tensor], optional): passed to the inner optimizer.
                Default: None.
            no_grad_set (set, optional): passed to the inner optimizer. Default: None.

        Returns:
            tuple: ``(None, params_grads)`` as the inner optimizer's minimize.

        Examples:
            >>> import fw
            >>> lin = fw.nn.Linear(1, 1, bias_attr=False)
            >>> _ = lin.weight.set_value(fw.ones([1, 1]))
            >>> sgd = fw.optimizer.SGD(0.1, parameters=lin.parameters())
            >>> opt = fw.incubate.LookAhead(sgd, alpha=0.5, k=2)
            >>> loss = lin(fw.ones([1, 1])).sum()
            >>> loss.backward()
            >>> _ = opt.minimize(loss)
            >>> round(float(lin.weight), 4)
            0.9
        """
        out = self.inner_optimizer.minimize(loss, startup_program, parameters, no_grad_set)
        self._lookahead_update()
        return out

    def clear_grad(self, set_to_zero=True):
        """Clears the gradients of the parameters (the inner optimizer's).

        Args:
            set_to_zero (bool, optional): zero the gradients (True) or drop them.
                Default: True.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> lin = fw.nn.Linear(1, 1, bias_attr=False)
            >>> _ = lin.weight.set_value(fw.ones([1, 1]))
            >>> sgd = fw.optimizer.SGD(0.1, parameters=lin.parameters())
            >>> opt = fw.incubate.LookAhead(sgd, alpha=0.5, k=2)
            >>> lin(fw.ones([1, 1])).sum().backward()
            >>> opt.clear_grad()
            >>> lin.weight.grad.tolist()
            [[0.0]]
        """
        self.inner_optimizer.clear_grad(set_to_zero)

    clear_gradients = clear_grad

    def get_lr(self):
        """The inner optimizer's learning rate.

        Returns:
            float: the current learning rate.

        Examples:
            >>> import fw
            >>> lin = fw.nn.Linear(1, 1, bias_attr=False)
            >>> _ = lin.weight.set_value(fw.ones([1, 1]))
            >>> sgd = fw.optimizer.SGD(0.1, parameters=lin.parameters())
            >>> opt = fw.incubate.LookAhead(sgd, alpha=0.5, k=2)
            >>> opt.get_lr()
            0.1
        """
        return self.inner_optimizer.get_lr()

    def set_lr(self, value):
        """Sets the inner optimizer's learning rate.

        Args:
            value (float): the new learning rate.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> lin = fw.nn.Linear(1, 1, bias_attr=False)
            >>> _ = lin.weight.set_value(fw.ones([1, 1]))
            >>> sgd = fw.optimizer.SGD(0.1, parameters=lin.parameters())
            >>> opt = fw.incubate.LookAhead(sgd, alpha=0.5, k=2)
            >>> opt.set_lr(0.05)
            >>> opt.get_lr(), sgd.get_lr()
            (0.05, 0.05)
        """
        return self.inner_optimizer.set_lr(value)

    def state_dict(self) -> dict:
        """The inner optimizer's state plus the slow weights (``<name>_slow_0``) and
        the step counter (``lookahead_global_step``).

        Returns:
            dict: the state, for `set_state_dict` (and ``fw.save``).

        Examples:
            >>> import fw
            >>> lin = fw.nn.Linear(1, 1, bias_attr=False)
            >>> _ = lin.weight.set_value(fw.ones([1, 1]))
            >>> sgd = fw.optimizer.SGD(0.1, parameters=lin.parameters())
            >>> opt = fw.incubate.LookAhead(sgd, alpha=0.5, k=2)
            >>> lin(fw.ones([1, 1])).sum().backward()
            >>> opt.step()
            >>> sd = opt.state_dict()
            >>> sd["lookahead_global_step"], any(k.endswith("_slow_0") for k in sd)
            (1, True)
        """
        out = dict(self.inner_optimizer.state_dict())
        for p in self._parameter_list:
            if id(p) in self._slow:
                out[f"{p.name}_slow_0"] = wrap(self._slow[id(p)].copy())
        out["lookahead_global_step"] = self._global_step
        return out

    def set_state_dict(self, state_dict):
        """Loads a state saved by `state_dict`.

        Args:
            state_dict (dict): what `state_dict` returned (or ``fw.load`` read).

        Returns:
            None.

        Examples:
            >>> import fw
            >>> lin = fw.nn.Linear(1, 1, bias_attr=False)
            >>> _ = lin.weight.set_value(fw.ones([1, 1]))
            >>> sgd = fw.optimizer.SGD(0.1, parameters=lin.parameters())
            >>> opt = fw.incubate.LookAhead(sgd, alpha=0.5, k=2)
            >>> lin(fw.ones([1, 1])).sum().backward()
            >>> opt.step()
            >>> opt2 = fw.incubate.LookAhead(
            ...     fw.optimizer.SGD(0.1, parameters=lin.parameters()), alpha=0.5, k=2)
            >>> opt2.set_state_dict(opt.state_dict())
            >>> opt2.state_dict()["lookahead_global_step"]
            1
        """
        if not isinstance(state_dict, dict):
            raise InvalidTypeError(f"LookAhead.set_state_dict: expected a dict, got "
                                   f"{type(state_dict).__name__}")
        inner = {k: v for k, v in state_dict.items()
                 if not k.endswith("_slow_0") and k != "lookahead_global_step"}
        self.inner_optimizer.set_state_dict(inner)
        self._global_step = int(state_dict.get("lookahead_global_step", self._global_step))
        for p in self._parameter_list:
            v = state_dict.get(f"{p.name}_slow_0")
            if v is not None:
                self._slow[id(p)] = np.array(v.numpy() if isinstance(v, Tensor) else v)


class ModelAverage:
    """Averages each parameter over a sliding window of recent updates; ``apply()``
    swaps the averages in (for evaluation) and ``restore()`` swaps the trained values
    back. Call ``step()`` after the optimizer's step.

    The window: with ``num_accumulates`` values summed since the last restart and
    ``num_updates`` steps in all, the sums restart once ``num_accumulates >=
    min_average_window`` and ``num_accumulates >= min(max_average_window, num_updates *
    average_window_rate)``; the average covers the values since the restart before
    the last one.

    Args:
        average_window_rate (float): the window length relative to the updates so far.
        parameters (list[Tensor], optional): the parameters to average.
        min_average_window (int, optional): the shortest window. Default 10000.
        max_average_window (int, optional): the longest window. Default 10000.
        name (str, optional): unused (Paddle's naming argument).

    Examples:
        >>> import fw
        >>> lin = fw.nn.Linear(2, 1)
        >>> sgd = fw.optimizer.SGD(0.1, parameters=lin.parameters())
        >>> ma = fw.incubate.ModelAverage(0.15, parameters=lin.parameters(),
        ...                               min_average_window=2, max_average_window=4)
        >>> for _ in range(3):
        ...     lin(fw.ones([4, 2])).mean().backward()
        ...     sgd.step(); ma.step(); sgd.clear_grad()
        >>> with ma.apply():
        ...     averaged = lin.weight.numpy()
    """

    def __init__(self, average_window_rate, parameters=None, min_average_window=10000,
                 max_average_window=10000, name=None):
        if isinstance(average_window_rate, bool) or not isinstance(
                average_window_rate, (int, float)) or average_window_rate <= 0:
            raise InvalidArgumentError(f"ModelAverage: 'average_window_rate' must be a "
                                       f"positive number, got {average_window_rate!r}")
        for nm, v in (("min_average_window", min_average_window),
                      ("max_average_window", max_average_window)):
            if isinstance(v, bool) or not isinstance(v, int) or v <= 0:
                raise InvalidArgumentError(f"ModelAverage: '{nm}' must be a positive int, "
                                           f"got {v!r}")
        if min_average_window > max_average_window:
            raise InvalidArgumentError(f"ModelAverage: 'min_average_window' "
                                       f"({min_average_window}) must not exceed "
                                       f"'max_average_window' ({max_average_window})")
        if parameters is None:
            raise InvalidArgumentError("ModelAverage: 'parameters' must be given in dynamic "
                                       "mode")
        if isinstance(parameters, Tensor):
            raise InvalidTypeError("ModelAverage: 'parameters' must be a list of Tensors, "
                                   "not a single Tensor")
        params = []
        for p in parameters:
            params.extend(p["params"] if isinstance(p, dict) else [p])
        self.average_window = float(average_window_rate)
        self.min_average_window = min_average_window
        self.max_average_window = max_average_window
        self.type = "average_accumulates"
        self._name = name
        self._parameter_list = params
        self._acc: dict = {}
        self._restore: dict = {}

    def _state(self, p):
        s = self._acc.get(id(p))
        if s is None:
            z = np.zeros(p.shape, dtype=p.numpy().dtype)
            s = self._acc[id(p)] = {"sum_1": z, "sum_2": z.copy(), "sum_3": z.copy(),
                                    "num_accumulates": 0, "old_num_accumulates": 0,
                                    "num_updates": 0}
        return s

    def step(self):
        """Adds the current values of the parameters that have gradients to their
        window sums (Paddle's ``average_accumulates``). Call it after the optimizer's
        step.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> lin = fw.nn.Linear(1, 1, bias_attr=False)
            >>> _ = lin.weight.set_value(fw.ones([1, 1]))
            >>> sgd = fw.optimizer.SGD(0.1, parameters=lin.parameters())
            >>> ma = fw.incubate.ModelAverage(0.5, parameters=lin.parameters(),
            ...                               min_average_window=2, max_average_window=10)
            >>> for _ in range(3):   # the weight goes 0.9, 0.8, 0.7
            ...     lin(fw.ones([1, 1])).sum().backward()
            ...     sgd.step(); ma.step(); sgd.clear_grad()
            >>> with ma.apply():
            ...     print(round(float(lin.weight), 4))
            0.8
        """
        for p in _with_grad(self._parameter_list):
            s = self._state(p)
            s["num_updates"] += 1
            s["num_accumulates"] += 1
            s["sum_1"] = s["sum_1"] + p.numpy()
            if s["num_updates"] % _MAX_NUM_ACCUMULATES == 0:
                s["sum_2"] = s["sum_2"] + s["sum_1"]
                s["sum_1"] = np.zeros_like(s["sum_1"])
            n = s["num_accumulates"]
            if n >= self.min_average_window and n >= min(
                    self.max_average_window, s["num_updates"] * self.average_window):
                s["sum_3"] = s["sum_1"] + s["sum_2"]
                s["sum_1"] = np.zeros_like(s["sum_1"])
                s["sum_2"] = np.zeros_like(s["sum_2"])
                s["old_num_accumulates"] = n
                s["num_accumulates"] = 0

    def minimize(self, loss, startup_program=None, parameters=None, no_grad_set=None):
        """Accumulates the parameters (as `step`); the gradients of `loss` are not
        applied here: ModelAverage only averages, its optimizer updates.

        Args:
            loss (Tensor): unused beyond Paddle's signature.
            startup_program: unused (Paddle's static argument). Default: None.
            parameters (list[Tensor], optional): unused. Default: None.
            no_grad_set (set, optional): unused. Default: None.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> lin = fw.nn.Linear(1, 1, bias_attr=False)
            >>> _ = lin.weight.set_value(fw.ones([1, 1]))
            >>> sgd = fw.optimizer.SGD(0.1, parameters=lin.parameters())
            >>> ma = fw.incubate.ModelAverage(0.5, parameters=lin.parameters(),
            ...                               min_average_window=2, max_average_window=10)
            >>> for _ in range(3):   # the weight goes 0.9, 0.8, 0.7
            ...     lin(fw.ones([1, 1])).sum().backward()
            ...     sgd.step(); ma.step(); sgd.clear_grad()
            >>> loss = lin(fw.ones([1, 1])).sum()
            >>> loss.backward()
            >>> ma.minimize(loss)   # accumulates 0.7 once more; the weight is unchanged
            >>> round(float(lin.weight), 4)
            0.7
        """
        self.step()

    def clear_grad(self, set_to_zero=True):
        """Clears the gradients of the averaged parameters (zeroed, or dropped with
        ``set_to_zero=False``).

        Args:
            set_to_zero (bool, optional): zero the gradients (True) or drop them.
                Default: True.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> lin = fw.nn.Linear(1, 1, bias_attr=False)
            >>> _ = lin.weight.set_value(fw.ones([1, 1]))
            >>> sgd = fw.optimizer.SGD(0.1, parameters=lin.parameters())
            >>> ma = fw.incubate.ModelAverage(0.5, parameters=lin.parameters(),
            ...                               min_average_window=2, max_average_window=10)
            >>> for _ in range(3):   # the weight goes 0.9, 0.8, 0.7
            ...     lin(fw.ones([1, 1])).sum().backward()
            ...     sgd.step(); ma.step(); sgd.clear_grad()
            >>> lin(fw.ones([1, 1])).sum().backward()
            >>> ma.clear_grad()
            >>> lin.weight.grad.tolist()
            [[0.0]]
        """
        for p in self._parameter_list:
            if not p.stop_gradient:
                p.clear_gradient(set_to_zero)

    clear_gradients = clear_grad

    @contextlib.contextmanager
    def apply(self, executor=None, need_restore=True):
        """A context in which the parameters hold their window averages.

        Args:
            executor: unused in dynamic mode (Paddle's static-graph argument).
            need_restore (bool, optional): restore the trained values on exit.
                Default True.

        Returns:
            contextlib.AbstractContextManager: the context (use it in ``with``).

        Examples:
            >>> import fw
            >>> lin = fw.nn.Linear(1, 1, bias_attr=False)
            >>> _ = lin.weight.set_value(fw.ones([1, 1]))
            >>> sgd = fw.optimizer.SGD(0.1, parameters=lin.parameters())
            >>> ma = fw.incubate.ModelAverage(0.5, parameters=lin.parameters(),
            ...                               min_average_window=2, max_average_window=10)
            >>> for _ in range(3):   # the weight goes 0.9, 0.8, 0.7
            ...     lin(fw.ones([1, 1])).sum().backward()
            ...     sgd.step(); ma.step(); sgd.clear_grad()
            >>> with ma.apply():
            ...     print(round(float(lin.weight), 4))
            0.8
            >>> round(float(lin.weight), 4)
            0.7
        """
        for p in self._parameter_list:
            s = self._state(p)
            cur = p.numpy()
            self._restore[id(p)] = cur.copy()
            total = (s["sum_1"] + s["sum_2"] + s["sum_3"]).astype("float32")
            cnt = np.float32(s["num_accumulates"] + s["old_num_accumulates"])
            with np.errstate(divide="ignore", invalid="ignore"):
                p.set_value((total / cnt).astype(cur.dtype))
        try:
            yield
        finally:
            if need_restore:
                self.restore()

    def restore(self, executor=None):
        """Puts back the values the parameters had before `apply` (after an
        ``apply(need_restore=False)``).

        Args:
            executor: unused in dynamic mode (Paddle's static argument). Default: None.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> lin = fw.nn.Linear(1, 1, bias_attr=False)
            >>> _ = lin.weight.set_value(fw.ones([1, 1]))
            >>> sgd = fw.optimizer.SGD(0.1, parameters=lin.parameters())
            >>> ma = fw.incubate.ModelAverage(0.5, parameters=lin.parameters(),
            ...                               min_average_window=2, max_average_window=10)
            >>> for _ in range(3):   # the weight goes 0.9, 0.8, 0.7
            ...     lin(fw.ones([1, 1])).sum().backward()
            ...     sgd.step(); ma.step(); sgd.clear_grad()
            >>> with ma.apply(need_restore=False):
            ...     pass
            >>> round(float(lin.weight), 4)
            0.8
            >>> ma.restore()
            >>> round(float(lin.weight), 4)
            0.7
        """
        for p in self._parameter_list:
            v = self._restore.get(id(p))
            if v is not None:
                p.set_value(v)
