"""The array module of a kernel's inputs (NumPy for cpu arrays, CuPy for gpu ones, a
plugin backend's ``xp``).

Reference kernels are written against NumPy's API and most of NumPy dispatches on
its arguments (``__array_function__``/``__array_ufunc__``), so they run on a
device's arrays as they are. What does not dispatch is a call with no array
argument: ``np.zeros(shape)``, ``np.arange(n)``, ``np.asarray(x)`` build host arrays,
which CuPy refuses to mix with its own. Kernels make those through
``xp = xp_of(x)`` instead."""

from __future__ import annotations

import numpy as np

from fw.core import place as _pl

__all__ = ["xp_of", "on_host"]

_ND = np.ndarray
_HOSTISH = (np.ndarray, np.generic, int, float, complex, bool, list, tuple, type(None))


def xp_of(*arrays):
    """The array module of the first device array among `arrays` (NumPy when all are
    host values)."""
    for a in arrays:
        t = type(a)
        if t is _ND:
            continue
        b = _pl._BY_ARRAY_TYPE.get(t)
        if b is not None:
            if b.xp is not np:
                return b.xp
            continue
        if isinstance(a, _HOSTISH):
            continue
        return _pl.backend_of(a).xp
    return np


def on_host(a):
    """`a` as a NumPy array (a copy from a device): for the few kernels whose work is
    host code by nature (shape-valued outputs, Python loops over values)."""
    if a is None or type(a) is _ND:
        return a
    if isinstance(a, np.ndarray) and type(a) is not _ND:
        b = _pl._BY_ARRAY_TYPE.get(type(a))
        return a if b is None else b.to_numpy(a)
    if isinstance(a, _HOSTISH):
        return np.asarray(a)
    return _pl.backend_of(a).to_numpy(a)


def ufunc_at(ufunc, out, key, vals) -> None:
    """``ufunc.at(out, key, vals)`` (unbuffered, repeated indices accumulate) on any
    device: NumPy's own on the host, the device library's ``<ufunc>.at`` where it has one
    (CuPy: add, subtract, maximum, minimum), else on a host copy written back."""
    if type(out) is _ND:
        ufunc.at(out, key, vals)
        return
    xp = xp_of(out)
    own = getattr(getattr(xp, ufunc.__name__, None), "at", None)
    if own is not None:
        try:
            own(out, key, vals)
            return
        except (NotImplementedError, TypeError):  # e.g. CuPy's add.at has no complex
            pass
    host = on_host(out)
    hkey = tuple(on_host(k) if not isinstance(k, slice) and k is not Ellipsis else k
                 for k in key) if isinstance(key, tuple) else on_host(key)
    ufunc.at(host, hkey, on_host(vals))
    out[...] = xp.asarray(host)


def reduce_initial(fn, a, axis=None, keepdims=False, initial=0.0):
    """``fn(a, axis=, keepdims=, initial=)`` for fn = np.max or np.min, on any device
    (CuPy's reductions take no `initial`): the reduction of an empty slice is
    `initial`, and `initial` takes part like one more element."""
    if type(a) is _ND or isinstance(a, np.generic):
        return fn(a, axis=axis, keepdims=keepdims, initial=initial)
    xp = xp_of(a)
    if a.size == 0:
        return xp.full_like(np.sum(a, axis=axis, keepdims=keepdims), initial, dtype=a.dtype)
    pair = np.maximum if fn is np.max else np.minimum
    return pair(fn(a, axis=axis, keepdims=keepdims), a.dtype.type(initial))
