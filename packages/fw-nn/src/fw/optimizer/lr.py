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
    """Base class of the learning-rate schedules of ``fw.optimizer.lr``.

    A scheduler is a small state machine over ``last_epoch``, the number of `step`
    calls so far (-1 before the first one; the constructor makes the first call, so a
    new scheduler is at epoch 0). Calling the scheduler returns the current rate. Give
    it to an optimizer as ``learning_rate=`` and call ``step()`` yourself, once per
    epoch or once per batch: the optimizer reads the current rate at every update.
    A subclass implements `get_lr` and, when its state is more than ``last_epoch`` and
    ``last_lr``, extends `state_keys`.

    Args:
        learning_rate (float, optional): the initial learning rate (``base_lr``). Default: 0.1.
        last_epoch (int, optional): the epoch to resume after; -1 starts from the
            beginning. Default: -1.
        verbose (bool, optional): print the new rate at every `step`. Default: False.

    Examples:
        >>> import fw
        >>> class Halving(fw.optimizer.lr.LRScheduler):
        ...     def get_lr(self):
        ...         return self.base_lr * 0.5 ** self.last_epoch
        >>> scheduler = Halving(learning_rate=1.0)
        >>> net = fw.nn.Linear(2, 2)
        >>> opt = fw.optimizer.SGD(learning_rate=scheduler, parameters=net.parameters())
        >>> lrs = []
        >>> for epoch in range(4):
        ...     lrs.append(round(scheduler(), 6))
        ...     scheduler.step()
        >>> lrs
        [1.0, 0.5, 0.25, 0.125]
        >>> opt.get_lr()
        0.0625
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
        """Advance to the next epoch, or jump to `epoch`, and recompute the rate.

        Args:
            epoch (int, optional): the epoch to jump to; None advances by one. Schedules with
                a closed form (cosine annealing) use it for a jump. Default: None.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> scheduler = fw.optimizer.lr.ExponentialDecay(learning_rate=1.0, gamma=0.5)
            >>> scheduler.step()
            >>> scheduler.last_epoch, scheduler()
            (1, 0.5)
            >>> scheduler.step(epoch=3)
            >>> scheduler.last_epoch, scheduler()
            (3, 0.125)
        """
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
        """The learning rate for the current ``last_epoch``: what each schedule computes
        (`step` stores it in ``last_lr``; calling the scheduler returns ``last_lr``).

        Returns:
            float, the learning rate.

        Examples:
            >>> import fw
            >>> scheduler = fw.optimizer.lr.StepDecay(learning_rate=0.5, step_size=2, gamma=0.1)
            >>> scheduler.step(); scheduler.step()
            >>> scheduler.get_lr()
            0.05
        """
        raise NotImplementedError(f"{type(self).__name__} must implement get_lr()")

    def state_keys(self):
        """Set ``self.keys``: the names of the attributes that `state_dict` saves
        (``last_epoch`` and ``last_lr``; schedules with more state add theirs).

        Returns:
            None.

        Examples:
            >>> import fw
            >>> scheduler = fw.optimizer.lr.StepDecay(learning_rate=0.5, step_size=2)
            >>> scheduler.state_keys()
            >>> scheduler.keys
            ['last_epoch', 'last_lr']
        """
        self.keys = ["last_epoch", "last_lr"]

    def state_dict(self) -> dict:
        """The schedule's state, as plain Python values (``fw.save`` writes it; an
        optimizer's ``state_dict()`` includes it under ``"LR_Scheduler"``).

        Returns:
            dict, attribute name -> value (``last_epoch``, ``last_lr``, ...).

        Examples:
            >>> import fw
            >>> scheduler = fw.optimizer.lr.StepDecay(learning_rate=0.5, step_size=2, gamma=0.1)
            >>> for _ in range(3):
            ...     scheduler.step()
            >>> scheduler.state_dict()
            {'last_epoch': 3, 'last_lr': 0.05}
        """
        self.state_keys()
        out = {}
        for k in self.keys:
            if k not in self.__dict__:
                continue
            v = self.__dict__[k]
            out[k] = [_plain(x) for x in v] if isinstance(v, list) else _plain(v)
        return out

    def set_state_dict(self, state_dict):
        """Restore a state saved by `state_dict` (``set_dict`` is the same method).

        Args:
            state_dict (dict): what `state_dict` returned. A key the schedule does not save
                is ignored with a warning; a missing one is an error naming it.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> a = fw.optimizer.lr.StepDecay(learning_rate=0.5, step_size=2, gamma=0.1)
            >>> for _ in range(3):
            ...     a.step()
            >>> b = fw.optimizer.lr.StepDecay(learning_rate=0.5, step_size=2, gamma=0.1)
            >>> b.set_state_dict(a.state_dict())
            >>> b.last_epoch, round(b(), 6)
            (3, 0.05)
        """
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
    """The Transformer's schedule: linear warm-up, then decay with the inverse square
    root of the step.

    ``lr = learning_rate * d_model ** -0.5 * min(epoch ** -0.5, epoch * warmup_steps ** -1.5)``
    (``epoch ** -0.5`` read as 1 at epoch 0). Step it once per batch.

    Args:
        d_model (int): the model width (the scale ``d_model ** -0.5``); positive.
        warmup_steps (int): the steps of linear warm-up.
        learning_rate (float, optional): a multiplier. Default: 1.0.
        last_epoch (int, optional): the epoch to resume after. Default: -1.
        verbose (bool, optional): print the rate at every step. Default: False.

    Examples:
        >>> import fw
        >>> scheduler = fw.optimizer.lr.NoamDecay(d_model=16, warmup_steps=2)
        >>> lrs = []
        >>> for epoch in range(5):
        ...     lrs.append(round(scheduler(), 6))
        ...     scheduler.step()
        >>> lrs
        [0.0, 0.088388, 0.176777, 0.144338, 0.125]
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
    """Constant pieces: ``values[i]`` while the epoch is below ``boundaries[i]``,
    ``values[-1]`` after the last boundary.

    Args:
        boundaries (list[int]): increasing epoch numbers, ``len(values) - 1`` of them.
        values (list[float]): the rates of the pieces.
        last_epoch (int, optional): the epoch to resume after. Default: -1.
        verbose (bool, optional): print the rate at every step. Default: False.

    Examples:
        >>> import fw
        >>> scheduler = fw.optimizer.lr.PiecewiseDecay(boundaries=[2, 4], values=[1.0, 0.5, 0.1])
        >>> lrs = []
        >>> for epoch in range(6):
        ...     lrs.append(round(scheduler(), 6))
        ...     scheduler.step()
        >>> lrs
        [1.0, 1.0, 0.5, 0.5, 0.1, 0.1]
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
    """Exponential decay in natural form: ``learning_rate * exp(-gamma * epoch)``.

    Args:
        learning_rate (float): the initial rate.
        gamma (float): the decay rate; positive.
        last_epoch (int, optional): the epoch to resume after. Default: -1.
        verbose (bool, optional): print the rate at every step. Default: False.

    Examples:
        >>> import fw
        >>> scheduler = fw.optimizer.lr.NaturalExpDecay(learning_rate=1.0, gamma=0.5)
        >>> lrs = []
        >>> for epoch in range(4):
        ...     lrs.append(round(scheduler(), 6))
        ...     scheduler.step()
        >>> lrs
        [1.0, 0.606531, 0.367879, 0.22313]
    """

    def __init__(self, learning_rate, gamma, last_epoch=-1, verbose=False):
        if gamma <= 0:
            raise ValueError(f"NaturalExpDecay: 'gamma' must be positive, got {gamma}")
        self.gamma = gamma
        super().__init__(learning_rate, last_epoch, verbose)

    def get_lr(self):
        return self.base_lr * math.exp(-self.gamma * self.last_epoch)


class InverseTimeDecay(LRScheduler):
    """Inverse-time decay: ``learning_rate / (1 + gamma * epoch)``.

    Args:
        learning_rate (float): the initial rate.
        gamma (float): the decay rate.
        last_epoch (int, optional): the epoch to resume after. Default: -1.
        verbose (bool, optional): print the rate at every step. Default: False.

    Examples:
        >>> import fw
        >>> scheduler = fw.optimizer.lr.InverseTimeDecay(learning_rate=1.0, gamma=0.5)
        >>> lrs = []
        >>> for epoch in range(4):
        ...     lrs.append(round(scheduler(), 6))
        ...     scheduler.step()
        >>> lrs
        [1.0, 0.666667, 0.5, 0.4]
    """

    def __init__(self, learning_rate, gamma, last_epoch=-1, verbose=False):
        self.gamma = gamma
        super().__init__(learning_rate, last_epoch, verbose)

    def get_lr(self):
        return self.base_lr / (1 + self.gamma * self.last_epoch)


class PolynomialDecay(LRScheduler):
    """Polynomial decay from ``learning_rate`` to ``end_lr`` over ``decay_steps``.

    ``lr = (learning_rate - end_lr) * (1 - e / decay_steps) ** power + end_lr`` with
    ``e = min(epoch, decay_steps)``; with ``cycle=True`` the period grows to the next
    multiple of ``decay_steps`` instead, so the rate rises again and decays anew.

    Args:
        learning_rate (float): the initial rate.
        decay_steps (int): the length of the decay; a positive int.
        end_lr (float, optional): the final rate. Default: 0.0001.
        power (float, optional): the polynomial's power; positive. Default: 1.0.
        cycle (bool, optional): restart after ``decay_steps``. Default: False.
        last_epoch (int, optional): the epoch to resume after. Default: -1.
        verbose (bool, optional): print the rate at every step. Default: False.

    Examples:
        >>> import fw
        >>> scheduler = fw.optimizer.lr.PolynomialDecay(learning_rate=1.0, decay_steps=4,
        ...                                             end_lr=0.0)
        >>> lrs = []
        >>> for epoch in range(6):
        ...     lrs.append(round(scheduler(), 6))
        ...     scheduler.step()
        >>> lrs
        [1.0, 0.75, 0.5, 0.25, 0.0, 0.0]
    """

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
    """Linear warm-up from ``start_lr`` to ``end_lr`` over ``warmup_steps`` epochs,
    then ``learning_rate``: a constant, or a scheduler that starts at its epoch 0 when
    the warm-up ends.

    Args:
        learning_rate (float|LRScheduler): the rate after the warm-up.
        warmup_steps (int): the length of the warm-up; a positive int.
        start_lr (float): the rate at epoch 0.
        end_lr (float): the rate the warm-up reaches; greater than ``start_lr``.
        last_epoch (int, optional): the epoch to resume after. Default: -1.
        verbose (bool, optional): print the rate at every step. Default: False.

    Examples:
        >>> import fw
        >>> after = fw.optimizer.lr.ExponentialDecay(learning_rate=0.5, gamma=0.5)
        >>> scheduler = fw.optimizer.lr.LinearWarmup(learning_rate=after, warmup_steps=2,
        ...                                          start_lr=0.0, end_lr=0.5)
        >>> lrs = []
        >>> for epoch in range(5):
        ...     lrs.append(round(scheduler(), 6))
        ...     scheduler.step()
        >>> lrs
        [0.0, 0.25, 0.5, 0.25, 0.125]
    """

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
        """The warm-up's state, with the wrapped scheduler's under ``"LinearWarmup_LR"``.

        Returns:
            dict, attribute name -> value.

        Examples:
            >>> import fw
            >>> after = fw.optimizer.lr.StepDecay(learning_rate=0.5, step_size=1)
            >>> scheduler = fw.optimizer.lr.LinearWarmup(after, warmup_steps=1, start_lr=0.0,
            ...                                          end_lr=0.5)
            >>> sorted(scheduler.state_dict())
            ['LinearWarmup_LR', 'last_epoch', 'last_lr']
        """
        out = super().state_dict()
        if isinstance(self.learning_rate, LRScheduler):
            out["LinearWarmup_LR"] = self.learning_rate.state_dict()
        return out

    def set_state_dict(self, state_dict):
        """Restore a state saved by `state_dict`, the wrapped scheduler's included.

        Args:
            state_dict (dict): what `state_dict` returned.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> def make():
            ...     after = fw.optimizer.lr.StepDecay(learning_rate=0.5, step_size=1)
            ...     return fw.optimizer.lr.LinearWarmup(after, warmup_steps=1, start_lr=0.0,
            ...                                         end_lr=0.5)
            >>> a, b = make(), make()
            >>> for _ in range(3):
            ...     a.step()
            >>> b.set_state_dict(a.state_dict())
            >>> b.last_epoch, round(b(), 6), b.learning_rate.last_epoch
            (3, 0.005, 2)
        """
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
    """Exponential decay: ``learning_rate * gamma ** epoch``.

    Args:
        learning_rate (float): the initial rate.
        gamma (float): the factor per epoch, in (0, 1).
        last_epoch (int, optional): the epoch to resume after. Default: -1.
        verbose (bool, optional): print the rate at every step. Default: False.

    Examples:
        >>> import fw
        >>> scheduler = fw.optimizer.lr.ExponentialDecay(learning_rate=1.0, gamma=0.5)
        >>> lrs = []
        >>> for epoch in range(4):
        ...     lrs.append(round(scheduler(), 6))
        ...     scheduler.step()
        >>> lrs
        [1.0, 0.5, 0.25, 0.125]
    """

    def __init__(self, learning_rate, gamma, last_epoch=-1, verbose=False):
        if not 0 < gamma < 1:
            raise ValueError(f"ExponentialDecay: 'gamma' must be in (0, 1), got {gamma}")
        self.gamma = gamma
        super().__init__(learning_rate, last_epoch, verbose)

    def get_lr(self):
        return self.base_lr * self.gamma ** self.last_epoch


class MultiStepDecay(LRScheduler):
    """Multiply the rate by ``gamma`` at each epoch listed in ``milestones``.

    Args:
        learning_rate (float): the initial rate.
        milestones (list[int]): increasing epoch numbers.
        gamma (float, optional): the factor; below 1. Default: 0.1.
        last_epoch (int, optional): the epoch to resume after. Default: -1.
        verbose (bool, optional): print the rate at every step. Default: False.

    Examples:
        >>> import fw
        >>> scheduler = fw.optimizer.lr.MultiStepDecay(learning_rate=1.0, milestones=[1, 3],
        ...                                            gamma=0.5)
        >>> lrs = []
        >>> for epoch in range(5):
        ...     lrs.append(round(scheduler(), 6))
        ...     scheduler.step()
        >>> lrs
        [1.0, 0.5, 0.5, 0.25, 0.25]
    """

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
    """Multiply the rate by ``gamma`` every ``step_size`` epochs:
    ``learning_rate * gamma ** (epoch // step_size)``.

    Args:
        learning_rate (float): the initial rate.
        step_size (int): the epochs between two decays.
        gamma (float, optional): the factor; below 1. Default: 0.1.
        last_epoch (int, optional): the epoch to resume after. Default: -1.
        verbose (bool, optional): print the rate at every step. Default: False.

    Examples:
        >>> import fw
        >>> scheduler = fw.optimizer.lr.StepDecay(learning_rate=0.5, step_size=2, gamma=0.1)
        >>> lrs = []
        >>> for epoch in range(5):
        ...     lrs.append(round(scheduler(), 6))
        ...     scheduler.step()
        >>> lrs
        [0.5, 0.5, 0.05, 0.05, 0.005]
    """

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
    """The rate a function of the epoch gives: ``learning_rate * lr_lambda(epoch)``.

    Args:
        learning_rate (float): the initial rate.
        lr_lambda (callable): epoch (int) -> factor (float).
        last_epoch (int, optional): the epoch to resume after. Default: -1.
        verbose (bool, optional): print the rate at every step. Default: False.

    Examples:
        >>> import fw
        >>> scheduler = fw.optimizer.lr.LambdaDecay(learning_rate=1.0, lr_lambda=lambda e: 0.9 ** e)
        >>> lrs = []
        >>> for epoch in range(3):
        ...     lrs.append(round(scheduler(), 6))
        ...     scheduler.step()
        >>> lrs
        [1.0, 0.9, 0.81]
    """

    def __init__(self, learning_rate, lr_lambda, last_epoch=-1, verbose=False):
        if not callable(lr_lambda):
            raise TypeError(f"LambdaDecay: 'lr_lambda' must be callable, got "
                            f"{type(lr_lambda).__name__}")
        self.lr_lambda = lr_lambda
        super().__init__(learning_rate, last_epoch, verbose)

    def get_lr(self):
        return self.base_lr * self.lr_lambda(self.last_epoch)


class MultiplicativeDecay(LRScheduler):
    """Multiply the rate by ``lr_lambda(epoch)`` at every epoch:
    ``learning_rate * lr_lambda(1) * ... * lr_lambda(epoch)``.

    Args:
        learning_rate (float): the initial rate.
        lr_lambda (callable): epoch (int) -> factor (float).
        last_epoch (int, optional): the epoch to resume after. Default: -1.
        verbose (bool, optional): print the rate at every step. Default: False.

    Examples:
        >>> import fw
        >>> scheduler = fw.optimizer.lr.MultiplicativeDecay(learning_rate=1.0,
        ...                                                 lr_lambda=lambda e: 0.5)
        >>> lrs = []
        >>> for epoch in range(4):
        ...     lrs.append(round(scheduler(), 6))
        ...     scheduler.step()
        >>> lrs
        [1.0, 0.5, 0.25, 0.125]
    """

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
    """Reduce the rate when a monitored metric stops improving.

    Call ``step(metrics)`` once per evaluation with the metric's value. When it has not
    improved by more than ``threshold`` for more than ``patience`` calls, the rate is
    multiplied by ``factor`` (not below ``min_lr``), and ``cooldown`` calls pass before
    counting starts again.

    Args:
        learning_rate (float): the initial rate.
        mode (str, optional): ``"min"`` (lower is better, e.g. a loss) or ``"max"``
            (e.g. an accuracy). Default: "min".
        factor (float, optional): the multiplier on a plateau; below 1. Default: 0.1.
        patience (int, optional): calls without improvement tolerated. Default: 10.
        threshold (float, optional): the smallest change that counts as an improvement.
            Default: 1e-4.
        threshold_mode (str, optional): ``"rel"`` (relative to the best value) or
            ``"abs"``. Default: "rel".
        cooldown (int, optional): calls to wait after a reduction. Default: 0.
        min_lr (float, optional): the lower bound of the rate. Default: 0.
        epsilon (float, optional): reductions smaller than this are skipped. Default: 1e-8.
        verbose (bool, optional): print the rate when it changes. Default: False.

    Examples:
        >>> import fw
        >>> scheduler = fw.optimizer.lr.ReduceOnPlateau(learning_rate=1.0, patience=1, factor=0.5)
        >>> lrs = []
        >>> for loss in [1.0, 0.9, 0.9, 0.9, 0.9, 0.9]:
        ...     scheduler.step(loss)
        ...     lrs.append(scheduler())
        >>> lrs
        [1.0, 1.0, 1.0, 0.5, 0.5, 0.25]
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
        """Set ``self.keys``: besides ``last_epoch`` and ``last_lr``, the plateau
        counters and the best value seen.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> scheduler = fw.optimizer.lr.ReduceOnPlateau(learning_rate=1.0)
            >>> scheduler.state_keys()
            >>> scheduler.keys
            ['cooldown_counter', 'best', 'num_bad_epochs', 'last_epoch', 'last_lr']
        """
        self.keys = ["cooldown_counter", "best", "num_bad_epochs", "last_epoch", "last_lr"]

    def get_lr(self):
        return self.last_lr

    def step(self, metrics, epoch=None):
        """Record one value of the monitored metric and reduce the rate on a plateau.

        Args:
            metrics (float|Tensor): the metric's value (a number or a one-element tensor).
            epoch (int, optional): the epoch number to set; None counts up by one. Default: None.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> scheduler = fw.optimizer.lr.ReduceOnPlateau(learning_rate=1.0, mode="max",
            ...                                             patience=0)
            >>> scheduler.step(fw.to_tensor(0.8))
            >>> scheduler.step(fw.to_tensor(0.7))
            >>> scheduler()
            0.1
        """
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
    """Cosine annealing from ``learning_rate`` down to ``eta_min`` over ``T_max``
    epochs (then back up, as a cosine wave).

    ``lr = eta_min + (learning_rate - eta_min) * (1 + cos(pi * epoch / T_max)) / 2``,
    computed recursively step by step as Paddle does (the two agree on an uninterrupted
    run; ``step(epoch)`` uses the closed form).

    Args:
        learning_rate (float): the initial (highest) rate.
        T_max (int): the epochs of the half cosine; a positive int.
        eta_min (float, optional): the lowest rate. Default: 0.
        last_epoch (int, optional): the epoch to resume after. Default: -1.
        verbose (bool, optional): print the rate at every step. Default: False.

    Examples:
        >>> import fw
        >>> scheduler = fw.optimizer.lr.CosineAnnealingDecay(learning_rate=1.0, T_max=4)
        >>> lrs = []
        >>> for epoch in range(6):
        ...     lrs.append(round(scheduler(), 6))
        ...     scheduler.step()
        >>> lrs
        [1.0, 0.853553, 0.5, 0.146447, 0.0, 0.146447]
    """

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
    """Cosine annealing with warm restarts (SGDR): periods of ``T_0``,
    ``T_0 * T_mult``, ``T_0 * T_mult ** 2``, ... epochs, each annealing from
    ``learning_rate`` down to ``eta_min``.

    Args:
        learning_rate (float): the rate at the start of each period.
        T_0 (int): the length of the first period; a positive int.
        T_mult (int, optional): the factor by which each period is longer than the one
            before; an int >= 1. Default: 1.
        eta_min (float, optional): the lowest rate. Default: 0.
        last_epoch (int, optional): the epoch to resume after. Default: -1.
        verbose (bool, optional): print the rate at every step. Default: False.

    Examples:
        >>> import fw
        >>> scheduler = fw.optimizer.lr.CosineAnnealingWarmRestarts(learning_rate=1.0, T_0=2,
        ...                                                         T_mult=2)
        >>> lrs = []
        >>> for epoch in range(7):
        ...     lrs.append(round(scheduler(), 6))
        ...     scheduler.step()
        >>> lrs
        [1.0, 0.5, 1.0, 0.853553, 0.5, 0.146447, 1.0]
    """

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
        """Set ``self.keys``: ``last_epoch``, ``last_lr`` and the position in the
        current period (``T_cur``, ``T_i``).

        Returns:
            None.

        Examples:
            >>> import fw
            >>> scheduler = fw.optimizer.lr.CosineAnnealingWarmRestarts(learning_rate=1.0, T_0=2)
            >>> scheduler.state_keys()
            >>> scheduler.keys
            ['last_epoch', 'last_lr', 'T_cur', 'T_i']
        """
        self.keys = ["last_epoch", "last_lr", "T_cur", "T_i"]

    def get_lr(self):
        return self.eta_min + (self.base_lr - self.eta_min) * \
            (1 + math.cos(math.pi * self.T_cur / self.T_i)) / 2

    def step(self, epoch=None):
        """Advance one epoch, or jump to `epoch` (which may be fractional, for per-batch
        stepping: ``epoch + batch / batches_per_epoch``).

        Args:
            epoch (float, optional): the epoch to jump to; None advances by one. Default: None.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> scheduler = fw.optimizer.lr.CosineAnnealingWarmRestarts(learning_rate=1.0, T_0=4)
            >>> scheduler.step(epoch=2.0)
            >>> round(scheduler(), 6)
            0.5
        """
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
    """The one-cycle policy: warm up from ``max_learning_rate / divide_factor`` to
    ``max_learning_rate`` over the first ``phase_pct`` of ``total_steps``, then anneal
    to ``end_learning_rate``. Step it once per batch.

    Args:
        max_learning_rate (float): the peak rate.
        total_steps (int): the length of the cycle, in steps.
        divide_factor (float, optional): the initial rate is ``max_learning_rate /
            divide_factor``. Default: 25.0.
        end_learning_rate (float, optional): the final rate. Default: 0.0001.
        phase_pct (float, optional): the fraction of the steps spent warming up.
            Default: 0.3.
        anneal_strategy (str, optional): ``"cos"`` or ``"linear"``. Default: "cos".
        three_phase (bool, optional): warm up, come back down to the initial rate
            symmetrically, then anneal to ``end_learning_rate``. Default: False.
        last_epoch (int, optional): the step to resume after. Default: -1.
        verbose (bool, optional): print the rate at every step. Default: False.

    Examples:
        >>> import fw
        >>> scheduler = fw.optimizer.lr.OneCycleLR(max_learning_rate=1.0, total_steps=6,
        ...                                        anneal_strategy="linear")
        >>> lrs = []
        >>> for epoch in range(6):
        ...     lrs.append(round(scheduler(), 6))
        ...     scheduler.step()
        >>> lrs
        [0.04, 0.952386, 0.714314, 0.476243, 0.238171, 0.0001]
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
    """Cyclical learning rates: triangular cycles between ``base_learning_rate`` and
    ``max_learning_rate``. Step it once per batch.

    Args:
        base_learning_rate (float): the lower bound.
        max_learning_rate (float): the upper bound, reached at the top of a cycle.
        step_size_up (int): the steps of the rising half-cycle.
        step_size_down (int, optional): the steps of the falling half; None:
            ``step_size_up``. Default: None.
        mode (str, optional): ``"triangular"``, ``"triangular2"`` (the amplitude halves
            every cycle) or ``"exp_range"`` (scaled by ``exp_gamma ** step``).
            Default: "triangular".
        exp_gamma (float, optional): the per-step factor of ``"exp_range"``. Default: 1.0.
        scale_fn (callable, optional): a custom amplitude scale ``f(x)``; overrides
            `mode`. Default: None.
        scale_mode (str, optional): whether `scale_fn` gets the cycle number
            (``"cycle"``) or the step (``"iterations"``). Default: "cycle".
        last_epoch (int, optional): the step to resume after. Default: -1.
        verbose (bool, optional): print the rate at every step. Default: False.

    Examples:
        >>> import fw
        >>> scheduler = fw.optimizer.lr.CyclicLR(base_learning_rate=0.1, max_learning_rate=1.0,
        ...                                      step_size_up=2)
        >>> lrs = []
        >>> for epoch in range(6):
        ...     lrs.append(round(scheduler(), 6))
        ...     scheduler.step()
        >>> lrs
        [0.1, 0.55, 1.0, 0.55, 0.1, 0.55]
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
    """Scale the rate linearly from ``learning_rate * start_factor`` to
    ``learning_rate * end_factor`` over ``total_steps``, then keep the last value.

    Args:
        learning_rate (float): the base rate.
        total_steps (int): the length of the ramp; a positive int.
        start_factor (float, optional): the factor at step 0, in (0, 1]. Default: 1/3.
        end_factor (float, optional): the factor from ``total_steps`` on, in [0, 1].
            Default: 1.0.
        last_epoch (int, optional): the step to resume after. Default: -1.
        verbose (bool, optional): print the rate at every step. Default: False.

    Examples:
        >>> import fw
        >>> scheduler = fw.optimizer.lr.LinearLR(learning_rate=1.0, total_steps=4, start_factor=0.5)
        >>> lrs = []
        >>> for epoch in range(6):
        ...     lrs.append(round(scheduler(), 6))
        ...     scheduler.step()
        >>> lrs
        [0.5, 0.625, 0.75, 0.875, 1.0, 1.0]
    """

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
