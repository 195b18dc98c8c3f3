"""Learning-rate schedules (Paddle's ``paddle.optimizer.lr``).

A scheduler is a small state machine over ``last_epoch`` (the number of `step`
calls so far, -1 before the first): ``step()`` advances it and recomputes
``last_lr``; calling the scheduler returns ``last_lr``. Give one to an optimizer as
``learning_rate=`` and call ``scheduler.step()`` yourself (per batch or per epoch):
the optimizer reads the current value at every update. ``state_dict()`` holds
``last_epoch``, ``last_lr`` and whatever else the schedule needs to resume.

The formulas, with ``e = last_epoch`` and ``lr0`` the initial rate:

- `NoamDecay`: ``lr0 * d_model^-0.5 * min(e^-0.5, e * warmup_steps^-1.5)`` (``e^-0.5``
  read as 1 at e = 0).
- `PiecewiseDecay`: ``values[i]`` for the first ``boundaries[i] > e``, else the last value.
- `NaturalExpDecay`: ``lr0 * exp(-gamma * e)``; `InverseTimeDecay`: ``lr0 / (1 + gamma e)``;
  `ExponentialDecay`: ``lr0 * gamma^e``.
- `PolynomialDecay`: ``(lr0 - end_lr) * (1 - e'/T)^power + end_lr`` with ``e' = min(e, T)``,
  or with ``cycle`` ``T = decay_steps * ceil(e / decay_steps)`` (at least one cycle).
- `LinearWarmup`: ``start_lr + (end_lr - start_lr) * e / warmup_steps`` while
  ``e < warmup_steps``, then the wrapped float or scheduler (stepped to
  ``e - warmup_steps``).
- `MultiStepDecay`: ``lr0 * gamma^(number of milestones <= e)``; `StepDecay`:
  ``lr0 * gamma^(e // step_size)``.
- `LambdaDecay`: ``lr0 * lr_lambda(e)``; `MultiplicativeDecay`: ``lr0 * prod(lr_lambda(k)
  for k in 1..e)``.
- `ReduceOnPlateau`: multiply by ``factor`` (not below ``min_lr``) when the metric passed
  to ``step(metrics)`` has not improved for more than ``patience`` calls.
- `CosineAnnealingDecay`: ``eta_min + (lr0 - eta_min)(1 + cos(pi e / T_max)) / 2`` (the
  recursive form, which agrees with it on an uninterrupted run; ``step(epoch)`` uses
  the closed form).
- `CosineAnnealingWarmRestarts`: the same within each period ``T_i`` (``T_0``, then times
  ``T_mult`` after each restart).
- `OneCycleLR`: warm up from ``max_lr / divide_factor`` to ``max_lr`` over the first
  ``phase_pct`` of ``total_steps``, then anneal to ``end_learning_rate`` (``cos`` or
  ``linear``); ``three_phase`` goes back to the initial rate before the final anneal.
- `CyclicLR`: triangular cycles between ``base_learning_rate`` and
  ``max_learning_rate`` (``triangular``, ``triangular2`` halving the amplitude every
  cycle, ``exp_range`` scaling it by ``exp_gamma^e``, or a custom ``scale_fn``).
- `LinearLR`: ``lr0 * (start_factor + (end_factor - start_factor) * min(e, T) / T)``.
"""

from __future__ import annotations

import math
import numbers
import warnings

__all__ = [
    "LRScheduler", "NoamDecay", "PiecewiseDecay", "NaturalExpDecay", "InverseTimeDecay",
    "PolynomialDecay", "LinearWarmup", "ExponentialDecay", "MultiStepDecay", "StepDecay",
    "LambdaDecay", "MultiplicativeDecay", "ReduceOnPlateau", "CosineAnnealingDecay",
    "CosineAnnealingWarmRestarts", "OneCycleLR", "CyclicLR", "LinearLR",
]


def _num(v, what):
    if isinstance(v, bool) or not isinstance(v, numbers.Real):
        try:
            return float(v)  # a one-element Tensor or NumPy scalar
        except (TypeError, ValueError):
            raise TypeError(f"{what} must be a float or int, got {type(v).__name__}") from None
    return float(v)


def _plain(v):
    """State values as plain Python numbers (fw.save and JSON handle them)."""
    if hasattr(v, "item") and not isinstance(v, (int, float)):
        try:
            return v.item()
        except (TypeError, ValueError):
            return v
    return v


class LRScheduler:
    """Base class of learning-rate schedules.

    Args:
        learning_rate: the initial learning rate (``base_lr``).
        last_epoch: the epoch to resume after; -1 starts from the beginning.
        verbose: print the new rate at every `step`.

    Subclasses implement `get_lr` (the rate for ``self.last_epoch``) and, when their
    state is more than ``last_epoch``/``last_lr``, extend `state_keys`.

    >>> import fw
    >>> class Halving(fw.optimizer.lr.LRScheduler):
    ...     def get_lr(self):
    ...         return self.base_lr * 0.5 ** self.last_epoch
    >>> s = Halving(1.0)
    >>> s.step(); s()
    0.5
    """

    def __init__(self, learning_rate=0.1, last_epoch=-1, verbose=False):
        self.base_lr = _num(learning_rate, f"{type(self).__name__}: 'learning_rate'")
        self.last_lr = self.base_lr
        self.last_epoch = int(last_epoch)
        self.verbose = verbose
        self._var_name = None
        self.step()

    def __call__(self) -> float:
        """The current learning rate."""
        return self.last_lr

    def step(self, epoch=None):
        """Advance to the next epoch (or jump to `epoch`) and recompute the rate."""
        if epoch is None:
            self.last_epoch += 1
            self.last_lr = self.get_lr()
        else:
            self.last_epoch = int(epoch)
            closed = getattr(self, "_get_closed_form_lr", None)
            self.last_lr = closed() if closed is not None else self.get_lr()
        if self.verbose:
            print(f"Epoch {self.last_epoch}: {type(self).__name__} set learning rate to "
                  f"{self.last_lr}.")

    def get_lr(self) -> float:
        """The learning rate for ``self.last_epoch``."""
        raise NotImplementedError(f"{type(self).__name__} must implement get_lr()")

    def state_keys(self):
        """Set ``self.keys``: the attributes `state_dict` saves."""
        self.keys = ["last_epoch", "last_lr"]

    def state_dict(self) -> dict:
        """The schedule's state (plain Python values)."""
        self.state_keys()
        out = {}
        for k in self.keys:
            if k not in self.__dict__:
                continue
            v = self.__dict__[k]
            out[k] = [_plain(x) for x in v] if isinstance(v, list) else _plain(v)
        return out

    def set_state_dict(self, state_dict):
        """Restore the state saved by `state_dict`."""
        self.state_keys()
        for k in self.keys:
            if k in state_dict:
                v = state_dict[k]
                self.__dict__[k] = _plain(v) if not isinstance(v, list) else list(v)
            else:
                raise RuntimeError(f"{type(self).__name__}.set_state_dict: the state dict has "
                                   f"no '{k}' (it has {sorted(state_dict)})")
        extra = [k for k in state_dict if k not in self.keys]
        if extra:
            warnings.warn(f"{type(self).__name__}.set_state_dict: ignored keys {extra}",
                          stacklevel=2)
        for k in ("last_epoch",):
            self.__dict__[k] = int(self.__dict__[k])
        self.last_lr = float(self.last_lr)

    set_dict = set_state_dict

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(last_epoch={self.last_epoch}, "
                f"last_lr={self.last_lr})")


class NoamDecay(LRScheduler):
    """The Transformer's warmup-then-inverse-sqrt schedule.

    Args:
        d_model: the model width (the scale ``d_model^-0.5``).
        warmup_steps: steps of linear warm-up.
        learning_rate: a multiplier (default 1.0).
    """

    def __init__(self, d_model, warmup_steps, learning_rate=1.0, last_epoch=-1, verbose=False):
        if d_model <= 0:
            raise ValueError(f"NoamDecay: 'd_model' must be positive, got {d_model}")
        self.d_model = d_model
        self.warmup_steps = warmup_steps
        super().__init__(learning_rate, last_epoch, verbose)

    def get_lr(self):
        e = self.last_epoch
        a = 1.0 if e == 0 else e ** -0.5
        b = self.warmup_steps ** -1.5 * e
        return self.base_lr * self.d_model ** -0.5 * min(a, b)


class PiecewiseDecay(LRScheduler):
    """Constant pieces: ``values[i]`` until epoch ``boundaries[i]``.

    Args:
        boundaries: increasing epoch numbers (``len(values) - 1`` of them).
        values: the rates of the pieces.
    """

    def __init__(self, boundaries, values, last_epoch=-1, verbose=False):
        boundaries = list(boundaries)
        values = [float(v) for v in values]
        if len(values) != len(boundaries) + 1:
            raise ValueError(f"PiecewiseDecay: 'values' needs len(boundaries) + 1 = "
                             f"{len(boundaries) + 1} entries, got {len(values)}")
        self.boundaries = boundaries
        self.values = values
        super().__init__(values[0], last_epoch=last_epoch, verbose=verbose)

    def get_lr(self):
        for b, v in zip(self.boundaries, self.values):
            if self.last_epoch < b:
                return v
        return self.values[-1]


class NaturalExpDecay(LRScheduler):
    """``learning_rate * exp(-gamma * epoch)``."""

    def __init__(self, learning_rate, gamma, last_epoch=-1, verbose=False):
        if gamma <= 0:
            raise ValueError(f"NaturalExpDecay: 'gamma' must be positive, got {gamma}")
        self.gamma = gamma
        super().__init__(learning_rate, last_epoch, verbose)

    def get_lr(self):
        return self.base_lr * math.exp(-self.gamma * self.last_epoch)


class InverseTimeDecay(LRScheduler):
    """``learning_rate / (1 + gamma * epoch)``."""

    def __init__(self, learning_rate, gamma, last_epoch=-1, verbose=False):
        self.gamma = gamma
        super().__init__(learning_rate, last_epoch, verbose)

    def get_lr(self):
        return self.base_lr / (1 + self.gamma * self.last_epoch)


class PolynomialDecay(LRScheduler):
    """Polynomial decay from ``learning_rate`` to ``end_lr`` over ``decay_steps``
    (restarting every ``decay_steps`` with a longer period when ``cycle``)."""

    def __init__(self, learning_rate, decay_steps, end_lr=0.0001, power=1.0, cycle=False,
                 last_epoch=-1, verbose=False):
        if not (isinstance(decay_steps, int) and decay_steps > 0):
            raise ValueError(f"PolynomialDecay: 'decay_steps' must be a positive int, got "
                             f"{decay_steps!r}")
        self.decay_steps = decay_steps
        self.end_lr = float(end_lr)
        if power <= 0:
            raise ValueError(f"PolynomialDecay: 'power' must be positive, got {power}")
        self.power = power
        self.cycle = cycle
        super().__init__(learning_rate, last_epoch, verbose)

    def get_lr(self):
        e = self.last_epoch
        steps = self.decay_steps
        if self.cycle:
            k = math.ceil(e / self.decay_steps)
            steps = self.decay_steps * (1 if e == 0 else k)
        else:
            e = min(e, self.decay_steps)
        return (self.base_lr - self.end_lr) * (1 - e / steps) ** self.power + self.end_lr


class LinearWarmup(LRScheduler):
    """Linear warm-up from ``start_lr`` to ``end_lr`` over ``warmup_steps``, then
    ``learning_rate`` (a float, or a scheduler stepped from 0 after the warm-up)."""

    def __init__(self, learning_rate, warmup_steps, start_lr, end_lr, last_epoch=-1,
                 verbose=False):
        if not isinstance(learning_rate, (numbers.Real, LRScheduler)):
            raise TypeError(f"LinearWarmup: 'learning_rate' must be a float or an "
                            f"LRScheduler, got {type(learning_rate).__name__}")
        if not (isinstance(warmup_steps, int) and warmup_steps > 0):
            raise ValueError(f"LinearWarmup: 'warmup_steps' must be a positive int, got "
                             f"{warmup_steps!r}")
        if end_lr <= start_lr:
            raise ValueError(f"LinearWarmup: 'end_lr' ({end_lr}) must be greater than "
                             f"'start_lr' ({start_lr})")
        self.learning_rate = learning_rate
        self.warmup_steps = warmup_steps
        self.start_lr = float(start_lr)
        self.end_lr = float(end_lr)
        super().__init__(start_lr, last_epoch, verbose)

    def state_dict(self):
        out = super().state_dict()
        if isinstance(self.learning_rate, LRScheduler):
            out["LinearWarmup_LR"] = self.learning_rate.state_dict()
        return out

    def set_state_dict(self, state_dict):
        state_dict = dict(state_dict)
        inner = state_dict.pop("LinearWarmup_LR", None)
        super().set_state_dict(state_dict)
        if inner is not None and isinstance(self.learning_rate, LRScheduler):
            self.learning_rate.set_state_dict(inner)

    set_dict = set_state_dict

    def get_lr(self):
        e = self.last_epoch
        if e < self.warmup_steps:
            return (self.end_lr - self.start_lr) * e / self.warmup_steps + self.start_lr
        if isinstance(self.learning_rate, LRScheduler):
            self.learning_rate.step(e - self.warmup_steps)
            return self.learning_rate()
        return float(self.learning_rate)


class ExponentialDecay(LRScheduler):
    """``learning_rate * gamma^epoch``."""

    def __init__(self, learning_rate, gamma, last_epoch=-1, verbose=False):
        if not 0 < gamma < 1:
            raise ValueError(f"ExponentialDecay: 'gamma' must be in (0, 1), got {gamma}")
        self.gamma = gamma
        super().__init__(learning_rate, last_epoch, verbose)

    def get_lr(self):
        return self.base_lr * self.gamma ** self.last_epoch


class MultiStepDecay(LRScheduler):
    """Multiply by ``gamma`` at each epoch in ``milestones``."""

    def __init__(self, learning_rate, milestones, gamma=0.1, last_epoch=-1, verbose=False):
        milestones = list(milestones)
        if any(b <= a for a, b in zip(milestones, milestones[1:])):
            raise ValueError(f"MultiStepDecay: 'milestones' must increase, got {milestones}")
        if gamma >= 1.0:
            raise ValueError(f"MultiStepDecay: 'gamma' must be < 1.0, got {gamma}")
        self.milestones = milestones
        self.gamma = gamma
        super().__init__(learning_rate, last_epoch, verbose)

    def get_lr(self):
        n = sum(1 for m in self.milestones if self.last_epoch >= m)
        return self.base_lr * self.gamma ** n


class StepDecay(LRScheduler):
    """Multiply by ``gamma`` every ``step_size`` epochs."""

    def __init__(self, learning_rate, step_size, gamma=0.1, last_epoch=-1, verbose=False):
        if not isinstance(step_size, int):
            raise TypeError(f"StepDecay: 'step_size' must be an int, got "
                            f"{type(step_size).__name__}")
        if gamma >= 1.0:
            raise ValueError(f"StepDecay: 'gamma' must be < 1.0, got {gamma}")
        self.step_size = step_size
        self.gamma = gamma
        super().__init__(learning_rate, last_epoch, verbose)

    def get_lr(self):
        return self.base_lr * self.gamma ** (self.last_epoch // self.step_size)


class LambdaDecay(LRScheduler):
    """``learning_rate * lr_lambda(epoch)``."""

    def __init__(self, learning_rate, lr_lambda, last_epoch=-1, verbose=False):
        if not callable(lr_lambda):
            raise TypeError(f"LambdaDecay: 'lr_lambda' must be callable, got "
                            f"{type(lr_lambda).__name__}")
        self.lr_lambda = lr_lambda
        super().__init__(learning_rate, last_epoch, verbose)

    def get_lr(self):
        return self.base_lr * self.lr_lambda(self.last_epoch)


class MultiplicativeDecay(LRScheduler):
    """``learning_rate * lr_lambda(1) * ... * lr_lambda(epoch)``."""

    def __init__(self, learning_rate, lr_lambda, last_epoch=-1, verbose=False):
        if not callable(lr_lambda):
            raise TypeError(f"MultiplicativeDecay: 'lr_lambda' must be callable, got "
                            f"{type(lr_lambda).__name__}")
        self.lr_lambda = lr_lambda
        super().__init__(learning_rate, last_epoch, verbose)

    def get_lr(self):
        lr = self.base_lr
        for e in range(1, self.last_epoch + 1):
            lr *= self.lr_lambda(e)
        return lr


class ReduceOnPlateau(LRScheduler):
    """Reduce the rate when a metric stops improving.

    Args:
        learning_rate: the initial rate.
        mode: ``"min"`` (lower is better) or ``"max"``.
        factor: the multiplier applied on a plateau (< 1).
        patience: calls without improvement tolerated before reducing.
        threshold: the minimal change that counts as improvement, relative
            (``threshold_mode="rel"``) or absolute (``"abs"``).
        cooldown: calls to wait after a reduction before counting again.
        min_lr: the rate never goes below this.
        epsilon: reductions smaller than this are skipped.

    Call ``step(metrics)`` once per evaluation with the monitored value.
    """

    def __init__(self, learning_rate, mode="min", factor=0.1, patience=10, threshold=1e-4,
                 threshold_mode="rel", cooldown=0, min_lr=0, epsilon=1e-8, verbose=False):
        if mode not in ("min", "max"):
            raise ValueError(f"ReduceOnPlateau: 'mode' must be 'min' or 'max', got {mode!r}")
        if factor >= 1.0:
            raise ValueError(f"ReduceOnPlateau: 'factor' must be < 1.0, got {factor}")
        if threshold_mode not in ("rel", "abs"):
            raise ValueError(f"ReduceOnPlateau: 'threshold_mode' must be 'rel' or 'abs', got "
                             f"{threshold_mode!r}")
        self.base_lr = _num(learning_rate, "ReduceOnPlateau: 'learning_rate'")
        self.mode = mode
        self.factor = factor
        self.patience = patience
        self.threshold = threshold
        self.threshold_mode = threshold_mode
        self.cooldown = cooldown
        self.min_lr = min_lr
        self.epsilon = epsilon
        self.cooldown_counter = 0
        self.best = None
        self.num_bad_epochs = 0
        self.last_epoch = 0
        self.last_lr = self.base_lr
        self.verbose = verbose
        self._var_name = None

    def state_keys(self):
        self.keys = ["cooldown_counter", "best", "num_bad_epochs", "last_epoch", "last_lr"]

    def get_lr(self):
        return self.last_lr

    def step(self, metrics, epoch=None):
        """Record one value of the monitored metric (a number or one-element tensor)."""
        self.last_epoch = self.last_epoch + 1 if epoch is None else int(epoch)
        try:
            current = float(metrics)
        except (TypeError, ValueError):
            raise TypeError(f"ReduceOnPlateau.step: 'metrics' must be a number or a "
                            f"one-element tensor, got {type(metrics).__name__}") from None
        if self.cooldown_counter > 0:
            self.cooldown_counter -= 1
            return
        if self.best is None or self._is_better(current, self.best):
            self.best = current
            self.num_bad_epochs = 0
        else:
            self.num_bad_epochs += 1
        if self.num_bad_epochs > self.patience:
            self.cooldown_counter = self.cooldown
            self.num_bad_epochs = 0
            new_lr = max(self.last_lr * self.factor, self.min_lr)
            if self.last_lr - new_lr > self.epsilon:
                self.last_lr = new_lr
                if self.verbose:
                    print(f"Epoch {self.last_epoch}: {type(self).__name__} set learning rate "
                          f"to {self.last_lr}.")

    def _is_better(self, current, best):
        t = self.threshold
        if self.mode == "min":
            return current < (best - best * t if self.threshold_mode == "rel" else best - t)
        return current > (best + best * t if self.threshold_mode == "rel" else best + t)


class CosineAnnealingDecay(LRScheduler):
    """Cosine annealing from ``learning_rate`` to ``eta_min`` over ``T_max`` epochs
    (continuing as a cosine wave afterwards)."""

    def __init__(self, learning_rate, T_max, eta_min=0, last_epoch=-1, verbose=False):
        if not (isinstance(T_max, int) and T_max > 0):
            raise ValueError(f"CosineAnnealingDecay: 'T_max' must be a positive int, got "
                             f"{T_max!r}")
        self.T_max = T_max
        self.eta_min = float(eta_min)
        super().__init__(learning_rate, last_epoch, verbose)

    def get_lr(self):
        e, T, lo = self.last_epoch, self.T_max, self.eta_min
        if e == 0:
            return self.base_lr
        if (e - 1 - T) % (2 * T) == 0:
            return self.last_lr + (self.base_lr - lo) * (1 - math.cos(math.pi / T)) / 2
        return (1 + math.cos(math.pi * e / T)) / (1 + math.cos(math.pi * (e - 1) / T)) * \
            (self.last_lr - lo) + lo

    def _get_closed_form_lr(self):
        return self.eta_min + (self.base_lr - self.eta_min) * \
            (1 + math.cos(math.pi * self.last_epoch / self.T_max)) / 2


class CosineAnnealingWarmRestarts(LRScheduler):
    """Cosine annealing with warm restarts (SGDR): periods of ``T_0``, ``T_0 *
    T_mult``, ... epochs, each from ``learning_rate`` down to ``eta_min``."""

    def __init__(self, learning_rate, T_0, T_mult=1, eta_min=0, last_epoch=-1, verbose=False):
        if not (isinstance(T_0, int) and T_0 > 0):
            raise ValueError(f"CosineAnnealingWarmRestarts: 'T_0' must be a positive int, got "
                             f"{T_0!r}")
        if not (isinstance(T_mult, int) and T_mult >= 1):
            raise ValueError(f"CosineAnnealingWarmRestarts: 'T_mult' must be an int >= 1, got "
                             f"{T_mult!r}")
        self.T_0 = T_0
        self.T_i = T_0
        self.T_mult = T_mult
        self.eta_min = float(eta_min)
        self.T_cur = last_epoch
        super().__init__(learning_rate, last_epoch, verbose)

    def state_keys(self):
        self.keys = ["last_epoch", "last_lr", "T_cur", "T_i"]

    def get_lr(self):
        return self.eta_min + (self.base_lr - self.eta_min) * \
            (1 + math.cos(math.pi * self.T_cur / self.T_i)) / 2

    def step(self, epoch=None):
        if epoch is None and self.last_epoch < 0:
            epoch = 0
        if epoch is None:
            epoch = self.last_epoch + 1
            self.T_cur += 1
            if self.T_cur >= self.T_i:
                self.T_cur -= self.T_i
                self.T_i *= self.T_mult
        else:
            if epoch < 0:
                raise ValueError(f"CosineAnnealingWarmRestarts.step: 'epoch' must be >= 0, "
                                 f"got {epoch}")
            if epoch >= self.T_0:
                if self.T_mult == 1:
                    self.T_cur = epoch % self.T_0
                else:
                    n = int(math.log(epoch / self.T_0 * (self.T_mult - 1) + 1, self.T_mult))
                    self.T_cur = epoch - self.T_0 * (self.T_mult ** n - 1) / (self.T_mult - 1)
                    self.T_i = self.T_0 * self.T_mult ** n
            else:
                self.T_i = self.T_0
                self.T_cur = epoch
        self.last_epoch = math.floor(epoch)
        self.last_lr = self.get_lr()
        if self.verbose:
            print(f"Epoch {self.last_epoch}: {type(self).__name__} set learning rate to "
                  f"{self.last_lr}.")


class OneCycleLR(LRScheduler):
    """The one-cycle policy (per step, not per epoch).

    Args:
        max_learning_rate: the peak rate.
        total_steps: the length of the cycle (steps).
        divide_factor: the initial rate is ``max_learning_rate / divide_factor``.
        end_learning_rate: the final rate.
        phase_pct: the fraction of steps spent warming up.
        anneal_strategy: ``"cos"`` or ``"linear"``.
        three_phase: warm up, come back down to the initial rate symmetrically, then
            anneal to ``end_learning_rate``.
    """

    def __init__(self, max_learning_rate, total_steps, divide_factor=25.0,
                 end_learning_rate=0.0001, phase_pct=0.3, anneal_strategy="cos",
                 three_phase=False, last_epoch=-1, verbose=False):
        max_lr = _num(max_learning_rate, "OneCycleLR: 'max_learning_rate'")
        if max_lr < 0:
            raise ValueError("OneCycleLR: 'max_learning_rate' must be >= 0")
        if not (isinstance(total_steps, int) and total_steps > 0):
            raise ValueError(f"OneCycleLR: 'total_steps' must be a positive int, got "
                             f"{total_steps!r}")
        if not 0 <= phase_pct < 1:
            raise ValueError(f"OneCycleLR: 'phase_pct' must be in [0, 1), got {phase_pct}")
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(f"OneCycleLR: 'anneal_strategy' must be 'cos' or 'linear', got "
                             f"{anneal_strategy!r}")
        self.total_steps = total_steps
        initial = max_lr / float(divide_factor)
        end = float(end_learning_rate)
        p = phase_pct * total_steps
        if three_phase:
            self._bounds = [0, p - 1, 2 * p - 2, total_steps - 1]
            self._lrs = [initial, max_lr, initial, end]
        else:
            self._bounds = [0, p - 1, total_steps - 1]
            self._lrs = [initial, max_lr, end]
        self._anneal = self._cos if anneal_strategy == "cos" else self._linear
        super().__init__(initial, last_epoch, verbose)

    @staticmethod
    def _cos(start, end, pct):
        return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)

    @staticmethod
    def _linear(start, end, pct):
        return (end - start) * pct + start

    def get_lr(self):
        step = self.last_epoch
        if step > self.total_steps:
            raise ValueError(f"OneCycleLR: stepped {step} times, beyond total_steps="
                             f"{self.total_steps}")
        n = len(self._lrs) - 1
        for i in range(n):
            lo, hi = self._bounds[i], self._bounds[i + 1]
            if step <= hi or i == n - 1:
                size = hi - lo
                pct = (step - lo) / size if size != 0 else 1.0
                return self._anneal(self._lrs[i], self._lrs[i + 1], pct)
        return self._lrs[-1]


class CyclicLR(LRScheduler):
    """Cyclical learning rates between ``base_learning_rate`` and
    ``max_learning_rate``.

    Args:
        base_learning_rate: the lower bound.
        max_learning_rate: the upper bound (reached at the top of a cycle).
        step_size_up: steps of the increasing half-cycle.
        step_size_down: steps of the decreasing half (``step_size_up`` when None).
        mode: ``"triangular"``, ``"triangular2"`` or ``"exp_range"``.
        exp_gamma: the per-step factor of ``exp_range``.
        scale_fn: a custom amplitude scale ``f(x)`` (overrides `mode`).
        scale_mode: whether ``scale_fn`` gets the cycle number (``"cycle"``) or the
            step count (``"iterations"``).
    """

    def __init__(self, base_learning_rate, max_learning_rate, step_size_up, step_size_down=None,
                 mode="triangular", exp_gamma=1.0, scale_fn=None, scale_mode="cycle",
                 last_epoch=-1, verbose=False):
        if not (isinstance(step_size_up, int) and step_size_up > 0):
            raise ValueError(f"CyclicLR: 'step_size_up' must be a positive int, got "
                             f"{step_size_up!r}")
        down = step_size_up if step_size_down is None else step_size_down
        if not (isinstance(down, int) and down > 0):
            raise ValueError(f"CyclicLR: 'step_size_down' must be a positive int, got {down!r}")
        if scale_fn is None and mode not in ("triangular", "triangular2", "exp_range"):
            raise ValueError(f"CyclicLR: 'mode' must be 'triangular', 'triangular2' or "
                             f"'exp_range', got {mode!r}")
        if scale_mode not in ("cycle", "iterations"):
            raise ValueError(f"CyclicLR: 'scale_mode' must be 'cycle' or 'iterations', got "
                             f"{scale_mode!r}")
        self.max_lr = _num(max_learning_rate, "CyclicLR: 'max_learning_rate'")
        base = _num(base_learning_rate, "CyclicLR: 'base_learning_rate'")
        self.amplitude = self.max_lr - base
        self.cycle_size = step_size_up + down
        self.step_up_percent = step_size_up / self.cycle_size
        self.mode = mode
        self.gamma = exp_gamma
        if scale_fn is not None:
            self.scale_fn, self.scale_mode = scale_fn, scale_mode
        elif mode == "triangular":
            self.scale_fn, self.scale_mode = (lambda x: 1.0), "cycle"
        elif mode == "triangular2":
            self.scale_fn, self.scale_mode = (lambda x: 1 / (2.0 ** (x - 1))), "cycle"
        else:
            self.scale_fn, self.scale_mode = (lambda x: self.gamma ** x), "iterations"
        super().__init__(base, last_epoch, verbose)

    def get_lr(self):
        it = self.last_epoch
        cycle = 1 + it // self.cycle_size
        pct = 1.0 + it / self.cycle_size - cycle
        if pct <= self.step_up_percent:
            scale = pct / self.step_up_percent
        else:
            scale = (1 - pct) / (1 - self.step_up_percent)
        x = cycle if self.scale_mode == "cycle" else it
        return self.base_lr + self.amplitude * scale * self.scale_fn(x)


class LinearLR(LRScheduler):
    """Scale the rate linearly from ``start_factor`` to ``end_factor`` over
    ``total_steps``, then keep ``learning_rate * end_factor``."""

    def __init__(self, learning_rate, total_steps, start_factor=1.0 / 3, end_factor=1.0,
                 last_epoch=-1, verbose=False):
        if start_factor > 1.0 or start_factor <= 0:
            raise ValueError(f"LinearLR: 'start_factor' must be in (0, 1], got {start_factor}")
        if end_factor > 1.0 or end_factor < 0:
            raise ValueError(f"LinearLR: 'end_factor' must be in [0, 1], got {end_factor}")
        if not (isinstance(total_steps, int) and total_steps > 0):
            raise ValueError(f"LinearLR: 'total_steps' must be a positive int, got "
                             f"{total_steps!r}")
        self.start_factor = float(start_factor)
        self.end_factor = float(end_factor)
        self.total_steps = total_steps
        super().__init__(learning_rate, last_epoch, verbose)

    def get_lr(self):
        e = min(max(self.last_epoch, 0), self.total_steps)
        return self.base_lr * (self.start_factor +
                               (self.end_factor - self.start_factor) * e / self.total_steps)
