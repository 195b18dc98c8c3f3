"""Kernels of the collective ops (`fw.core.ops.collective`) and the hook through
which a communication backend serves them.

fw-core never imports a communication library or fw-distributed: a package that
can communicate registers one function, ``backend(op_name, x, attrs) -> array``,
through ``fw.core.internal.collectives.register_backend``; each collective op's
kernel hands it the input array and the op's attributes and returns what it
returns (a new array; the input is not written). With no backend registered the
kernel is the op's one-rank reference (identity), which refuses attributes that
need more ranks. The same kernel is registered for ``cpu`` and ``gpu`` arrays: the
backend decides what it can move (fw-distributed's refuses device arrays until its
NCCL engine is wired).
"""

from __future__ import annotations

import threading

from fw.core.ops._registry import get_op
from fw.core.ops.collective import COLLECTIVE_OPS

__all__ = ["Collectives", "collectives"]


class Collectives:
    """The registered communication backend of the collective ops (one per
    process; ``backend`` is None until a package registers one)."""

    def __init__(self):
        self.backend = None
        self._lock = threading.Lock()

    def register_backend(self, fn):
        """Make ``fn(op_name, x, attrs) -> array`` run every collective op; returns
        the backend it replaces (or None). ``attrs`` are the op's canonical
        attributes (``ring_id``, ``reduce_op``, ``root``, ``nranks``)."""
        if fn is not None and not callable(fn):
            raise TypeError(f"collectives.register_backend: expected a callable "
                            f"backend(op_name, x, attrs), got {type(fn).__name__}")
        with self._lock:
            old, self.backend = self.backend, fn
        return old

    def unregister_backend(self, fn=None):
        """Remove the backend (only if it is `fn`, when given); returns the removed
        one or None."""
        with self._lock:
            if self.backend is None or (fn is not None and self.backend is not fn):
                return None
            old, self.backend = self.backend, None
        return old


collectives = Collectives()


def _kernel(name):
    ref = get_op(name).reference

    def kernel(x, **attrs):
        be = collectives.backend
        if be is None:
            return ref(x, **attrs)
        return be(name, x, attrs)

    kernel.__name__ = f"{name}_dispatch"
    return kernel


for _n in COLLECTIVE_OPS:
    _op = get_op(_n)
    _k = _kernel(_n)
    _op.kernels["cpu"] = _k
    _op.kernels["gpu"] = _k
