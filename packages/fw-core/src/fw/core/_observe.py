"""Observing eager ops: the profiler's recorder and the ``FLAGS_check_nan_inf`` check.

Both are off by default, and then `fw.core.dispatch.observe_state.hook` is None: the
only cost an op pays is that one None check (the fast lanes of fw.core.ops._api test
it and `invoke` tests it). When either is on, `hook` is `_hook`, every eager op goes
through `invoke`, and `_hook` times it (for an active recorder) and/or tests its
floating outputs for NaN/Inf.

The recorder is any object with ``op_event(op, args, out, t0_ns, t1_ns)`` and
``event(name, kind, t0_ns, t1_ns, args)``; fw.profiler installs one while a
profiler is in its RECORD state. Other layers (the IR executor, autograd's
backward, the DataLoader) report spans with `span` / `recorder()`.
"""

from __future__ import annotations

import os
import sys
from time import perf_counter_ns

import numpy as np

from fw.core.dispatch import observe_state

__all__ = ["set_recorder", "recorder", "tracing_ops", "span", "set_check_nan_inf",
           "check_nan_inf_enabled", "NanInfError"]

_state = {"recorder": None, "ops": False, "nan": False}


class NanInfError(RuntimeError):
    """An op produced NaN or Inf while ``FLAGS_check_nan_inf`` is on."""


def _update():
    on = _state["ops"] or _state["nan"]
    observe_state.hook = _hook if on else None


def set_recorder(rec, ops: bool = True) -> None:
    """Install (or with None remove) the recorder that receives span events, and op
    events when `ops` (a timer-only profiler takes spans, DataLoader ones, only)."""
    _state["recorder"] = rec
    _state["ops"] = rec is not None and bool(ops)
    _update()


def tracing_ops() -> bool:
    """True while a recorder takes op events (the IR executor then traces its ops)."""
    return _state["ops"]


def recorder():
    """The active recorder or None (what callers test before timing a span)."""
    return _state["recorder"]


def set_check_nan_inf(on) -> None:
    """Turn the eager NaN/Inf check of every op's outputs on or off."""
    _state["nan"] = bool(on)
    _update()


def check_nan_inf_enabled() -> bool:
    return _state["nan"]


class span:
    """Time a region into the active recorder (nothing when none is active):
    ``with span("backward", "Backward"): ...``."""

    __slots__ = ("name", "kind", "args", "t0", "rec")

    def __init__(self, name, kind="UserDefined", args=None):
        self.name, self.kind, self.args = name, kind, args

    def __enter__(self):
        self.rec = _state["recorder"]
        if self.rec is not None:
            self.t0 = perf_counter_ns()
        return self

    def __exit__(self, *exc):
        if self.rec is not None:
            self.rec.event(self.name, self.kind, self.t0, perf_counter_ns(), self.args)
        return False


def _hook(op, args, attrs, run):
    rec = _state["recorder"] if _state["ops"] else None
    if rec is not None:
        t0 = perf_counter_ns()
        out = run(op, args, attrs)
        rec.op_event(op, args, out, t0, perf_counter_ns())
    else:
        out = run(op, args, attrs)
    if _state["nan"]:
        _check(op, args, out)
    return out


def _outputs(out):
    return out if isinstance(out, (tuple, list)) else (out,)


def _finite(a) -> bool:
    if isinstance(a, (np.ndarray, np.generic)):
        return a.dtype.kind not in "fc" or bool(np.isfinite(a).all())
    xp = getattr(a, "__array_namespace__", None)  # a device array (CuPy)
    if xp is not None:
        return a.dtype.kind not in "fc" or bool(xp().isfinite(a).all())
    return True


_FW_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def user_frame():
    """(filename, line, source text) of the innermost caller outside the fw packages."""
    import linecache

    f = sys._getframe(1)
    roots = tuple({_FW_ROOT} | {os.path.dirname(p) for p in
                                getattr(sys.modules.get("fw"), "__path__", [])})
    while f is not None:
        fn = f.f_code.co_filename
        # "<fw op add>", "<fw aliases of fw.log>": code fw generates is not the user's
        if not fn.startswith("<fw ") and not os.path.abspath(fn).startswith(roots):
            return fn, f.f_lineno, linecache.getline(fn, f.f_lineno).strip()
        f = f.f_back
    return None


def _check(op, args, out):
    for i, t in enumerate(_outputs(out)):
        a = getattr(t, "_data", None)
        if a is None or getattr(a, "size", 0) == 0 or _finite(a):
            continue
        from fw.core.dispatch import describe_inputs

        host = np.asarray(a.get() if hasattr(a, "get") and not isinstance(a, np.ndarray) else a)
        bad = "NaN" if np.isnan(host).any() else "Inf"
        where = user_frame()
        loc = "" if where is None else (f"\nat {where[0]}:{where[1]}"
                                        + (f":\n    {where[2]}" if where[2] else ""))
        raise NanInfError(
            f"FLAGS_check_nan_inf: op '{op.name}' produced {bad} in its output {i} "
            f"(shape {list(host.shape)}, {host.dtype}); inputs: "
            f"{describe_inputs(op, args)}{loc}")

