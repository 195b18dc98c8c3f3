"""NaN/Inf checking of converted functions (anomaly mode, ``FLAGS_check_nan_inf``).

When anomaly mode checks NaN/Inf (`fw.autograd.is_anomaly_check_nan_enabled`) at
call time, a converted function runs a second compiled form of its program, made
with the executor's ``op_check``: after every op with a floating/complex result
`check_outputs` tests the result and raises `fw.autograd.AnomalyError` (what
eager anomaly mode raises) naming the op and the user's source line it was
traced from. That compiled form updates nothing in place, so the parameters and
optimizer state keep their values when it raises. With the mode off the
unchecked compiled form runs: the choice is made once per call, not per op.
"""

from __future__ import annotations

import linecache

import numpy as np

__all__ = ["checking", "check_outputs"]


def checking() -> bool:
    """Whether this call of a converted function must check its ops' outputs."""
    from fw.autograd import is_anomaly_check_nan_enabled

    return is_anomaly_check_nan_enabled()


def _finite(a) -> bool:
    if isinstance(a, (np.ndarray, np.generic)):
        return bool(np.isfinite(a).all())
    xp = getattr(a, "__array_namespace__", None)  # a device array (CuPy)
    if xp is not None:
        return bool(xp().isfinite(a).all())
    return bool(np.isfinite(np.asarray(a)).all())


def check_outputs(op, results) -> None:
    """Raise `AnomalyError` if a floating/complex result of `op` has a NaN or Inf."""
    for i, (r, a) in enumerate(zip(op.results, results)):
        if a is None or not r.type.dtype.is_inexact or getattr(a, "size", 1) == 0 or \
                _finite(a):
            continue
        from fw.autograd import AnomalyError

        host = np.asarray(a.get() if hasattr(a, "get") and not isinstance(a, np.ndarray)
                          else a)
        bad = "NaN" if np.isnan(host).any() else "Inf"
        where = ""
        if op.loc:
            fn, line = op.loc[0], op.loc[1]
            text = linecache.getline(fn, line).strip()
            where = f"\nthe op was traced at {fn}:{line}" + (f":\n    {text}" if text else "")
        raise AnomalyError(f"anomaly mode: '{op.name}' produced {bad} in its result {i} "
                           f"(a converted function's program, checked because anomaly "
                           f"detection / FLAGS_check_nan_inf is on){where}")
