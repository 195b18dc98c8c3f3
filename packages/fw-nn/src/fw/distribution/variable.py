"""Domains and codomains of transforms: an event rank and a membership check (Paddle's
``paddle.distribution.variable`` and ``constraint``, which transforms use to track how
many rightmost dimensions form one event)."""

from __future__ import annotations

import fw

__all__ = []


class Constraint:
    def __call__(self, value):
        raise NotImplementedError

    def check(self, value):
        return self(value)


class _Real(Constraint):
    def __call__(self, value):
        return value == value


class _Positive(Constraint):
    def __call__(self, value):
        return value >= 0.0


class Range(Constraint):
    def __init__(self, lower, upper):
        self._lower, self._upper = lower, upper

    def __call__(self, value):
        return fw.logical_and(self._lower <= value, value <= self._upper)


class _Simplex(Constraint):
    def __call__(self, value):
        return fw.logical_and(fw.all(value >= 0, axis=-1), (value.sum(-1) - 1).abs() < 1e-6)


real_c, positive_c, simplex_c = _Real(), _Positive(), _Simplex()


class Variable:
    def __init__(self, is_discrete=False, event_rank=0, constraint=None):
        self._is_discrete = is_discrete
        self._event_rank = event_rank
        self._constraint = constraint

    @property
    def is_discrete(self):
        return self._is_discrete

    @property
    def event_rank(self):
        return self._event_rank

    def constraint(self, value):
        return self._constraint.check(value)


class Independent(Variable):
    """``base`` with ``reinterpreted_batch_rank`` more dimensions in each event."""

    def __init__(self, base, reinterpreted_batch_rank):
        self._base = base
        self._reinterpreted_batch_rank = reinterpreted_batch_rank
        super().__init__(base.is_discrete, base.event_rank + reinterpreted_batch_rank)

    def constraint(self, value):
        ret = self._base.constraint(value)
        n = self._reinterpreted_batch_rank
        if ret.dim() < n:
            raise ValueError(f"the value needs at least {n} dimensions, got {ret.dim()}")
        return ret.reshape(list(ret.shape[:ret.dim() - n]) + [-1]).all(-1)


class Stack(Variable):
    def __init__(self, vars, axis=0):
        self._vars = vars
        self._axis = axis
        super().__init__(any(v.is_discrete for v in vars),
                         max(v.event_rank for v in vars), None)

    @property
    def event_rank(self):
        rank = max(v.event_rank for v in self._vars)
        return rank + 1 if self._axis + rank < 0 else rank

    def constraint(self, value):
        parts = fw.unstack(value, self._axis)
        return fw.stack([v.constraint(p) for v, p in zip(self._vars, parts)], self._axis)


real = Variable(False, 0, real_c)
positive = Variable(False, 0, positive_c)
