"""Reductions: sum, mean, … over `axis` (None = all) with `keepdim`."""

from __future__ import annotations

import numpy as np

from fw.core import dtypes as _dt
from fw.core.ops._infer import norm_axes, reduce
from fw.core.ops._registry import defop


def _axis_canon(attrs):
    a = dict(attrs)
    ax = a.get("axis")
    if ax is not None and not isinstance(ax, (int, np.integer)):
        ax = tuple(int(v) for v in (ax.tolist() if hasattr(ax, "tolist") else ax))
        if len(ax) == 0:
            ax = None
    elif ax is not None:
        ax = int(ax)
    a["axis"] = ax
    if "dtype" in a and a["dtype"] is not None:
        a["dtype"] = _dt.convert_dtype(a["dtype"])
    return a


def _np_axis(x, axis):
    return None if axis is None else norm_axes(axis, x.ndim)


def _sum_dtype(d: _dt.DType) -> _dt.DType:
    # Paddle: integer and bool sums accumulate in int64
    return _dt.int64 if d.kind <= _dt._INT else d


def _sum_infer(x, axis=None, dtype=None, keepdim=False):
    t = reduce(x, axis, keepdim)
    return t.with_dtype(dtype if dtype is not None else _sum_dtype(x.dtype))


def _sum_ref(x, axis=None, dtype=None, keepdim=False):
    d = dtype if dtype is not None else _sum_dtype(_dt.from_numpy(x.dtype))
    return np.sum(x, axis=_np_axis(x, axis), dtype=d.np, keepdims=keepdim)


defop("sum", ("x",), {"axis": None, "dtype": None, "keepdim": False}, infer=_sum_infer,
      reference=_sum_ref, canon=_axis_canon, promote=None, family="reduce",
      doc="Sum over `axis` (all axes when None).")


def _mean_infer(x, axis=None, keepdim=False):
    return reduce(x, axis, keepdim)


def _count(x, axes) -> int:
    n = 1
    for a in axes:
        n *= x.shape[a]
    return n


def _mean_ref(x, axis=None, keepdim=False):
    # sum / count, not np.mean: an empty reduction is NaN without a RuntimeWarning
    axes = norm_axes(axis, x.ndim)
    s = np.add.reduce(x, axis=axes, keepdims=keepdim, dtype=x.dtype)
    return np.true_divide(s, x.dtype.type(_count(x, axes)), dtype=x.dtype)


defop("mean", ("x",), {"axis": None, "keepdim": False}, infer=_mean_infer, reference=_mean_ref,
      canon=_axis_canon, promote="all", to_float=True, family="reduce",
      doc="Arithmetic mean over `axis` (all axes when None).")
