"""Search and sort: sort, argsort, topk, kthvalue, mode, unique, searchsorted,
nonzero, and their Paddle helpers (msort, bucketize, argwhere).

Ordering follows Paddle/PyTorch: NaN sorts as the largest value (last when
ascending, first when descending). Ties keep their original order whenever the
kernel reports indices (the kernels always sort stably, so ``stable=False`` gives
the same result as ``stable=True``). Ops whose output size depends on the data
(unique, nonzero) have dynamic (-1) dimensions in their static type.
"""

from __future__ import annotations

import numpy as np

from fw.core import dtypes as _dt
from fw.core.errors import InvalidArgumentError, InvalidTypeError
from fw.core.ir.types import DYN, TensorType
from fw.core.ops._infer import norm_axis, shp
from fw.core.ops._registry import defop

_I64 = np.dtype(np.int64)
_F32 = np.dtype(np.float32)
_LOW = frozenset({np.dtype(np.float16), _dt.bfloat16.np})
_int_types = (int, np.integer)


def _int_attr(v, arg):
    if hasattr(v, "item") and not isinstance(v, _int_types):
        v = v.item()
    if isinstance(v, bool) or not isinstance(v, _int_types):
        raise InvalidTypeError(f"'{arg}' must be an int, got {type(v).__name__}")
    return int(v)


def _sortable(x):
    """x as NumPy can order it (float16/bfloat16 compare in float32; exact)."""
    return x.astype(_F32) if x.dtype in _LOW else x


def _argsort(x, axis, descending):
    """Stable argsort along `axis`; descending keeps ties in their original order and
    puts NaN first."""
    if not descending:
        return np.argsort(x, axis=axis, kind="stable")
    n = x.shape[axis]
    rev = np.flip(x, axis=axis)
    o = np.argsort(rev, axis=axis, kind="stable")
    return (n - 1) - np.flip(o, axis=axis)


def _require_real(t, arg="x"):
    if t.dtype.kind == _dt._COMPLEX:
        raise InvalidTypeError(f"'{arg}' must be a real tensor, got {t.dtype.name}")


# ---------------------------------------------------------------- sort / argsort
def _sort_canon(attrs):
    if type(attrs["axis"]) is int:
        return attrs
    a = dict(attrs)
    a["axis"] = _int_attr(a["axis"], "axis")
    return a


def _argsort_infer(x, axis=-1, descending=False, stable=False):
    _require_real(x)
    norm_axis(axis, len(x.shape))
    return x.with_dtype(_dt.int64)


def _argsort_ref(x, axis=-1, descending=False, stable=False):
    if x.dtype.kind == "c":
        raise InvalidTypeError(f"argsort: 'x' must be a real tensor, got {x.dtype}")
    if x.ndim == 0:
        return np.zeros((), _I64)
    return _argsort(_sortable(x), axis, descending).astype(_I64, copy=False)


defop("argsort", ("x",), {"axis": -1, "descending": False, "stable": False},
      infer=_argsort_infer, reference=_argsort_ref, canon=_sort_canon, promote=None,
      differentiable=False, family="search",
      doc="""Indices that sort x along `axis` (int64); equal elements keep their order.

Example:
    >>> fw.argsort(fw.to_tensor([3., 1., 2.]))   # [1, 2, 0]
""")


# ---------------------------------------------------------------- topk / kthvalue / mode
def _topk_canon(attrs):
    a = dict(attrs)
    a["k"] = _int_attr(a["k"], "k")
    a["axis"] = -1 if a["axis"] is None else _int_attr(a["axis"], "axis")
    return a


def _topk_infer(x, k=1, axis=-1, largest=True, sorted=True):
    _require_real(x)
    nd = len(x.shape)
    ax = norm_axis(axis, nd)
    n = x.shape[ax] if nd else 1
    if k < 0 or (n != DYN and k > n):
        raise InvalidArgumentError(f"'k'={k} must be in [0, {n}] (the size of axis {axis} of x "
                                   f"with shape {shp(x.shape)})")
    shape = list(x.shape)
    if nd:
        shape[ax] = k
    return TensorType(shape, x.dtype), TensorType(shape, _dt.int64)


def _topk_ref(x, k=1, axis=-1, largest=True, sorted=True):
    if x.ndim == 0:
        if k > 1:
            raise InvalidArgumentError(f"topk: 'k'={k} exceeds the single element of a 0-D x")
        return x.copy(), np.zeros((), _I64)
    if k > x.shape[axis]:
        raise InvalidArgumentError(f"topk: 'k'={k} exceeds the size {x.shape[axis]} of axis "
                                   f"{axis} of x with shape {list(x.shape)}")
    o = _argsort(_sortable(x), axis, largest)
    idx = np.take(o, np.arange(k), axis=axis)
    return np.take_along_axis(x, idx, axis=axis), idx.astype(_I64, copy=False)


defop("topk", ("x",), {"k": 1, "axis": None, "largest": True, "sorted": True},
      outputs=("values", "indices"), infer=_topk_infer, reference=_topk_ref,
      canon=_topk_canon, promote=None, family="search",
      doc="""The k largest (or smallest with largest=False) elements along `axis`
(the last axis when None) and their indices. Results are always sorted (largest
first, or smallest first); among equal values the lower index comes first.

Example:
    >>> v, i = fw.topk(fw.to_tensor([1., 4., 5., 7.]), k=2)   # [7., 5.], [3, 2]
""")


def _kth_canon(attrs):
    a = dict(attrs)
    a["k"] = _int_attr(a["k"], "k")
    a["axis"] = -1 if a["axis"] is None else _int_attr(a["axis"], "axis")
    return a


def _reduce_one(x, axis, keepdim):
    nd = len(x.shape)
    ax = norm_axis(axis, nd)
    if not nd:
        return ()
    if keepdim:
        return tuple(1 if i == ax else d for i, d in enumerate(x.shape))
    return tuple(d for i, d in enumerate(x.shape) if i != ax)


def _kth_infer(x, k=1, axis=-1, keepdim=False):
    _require_real(x)
    nd = len(x.shape)
    ax = norm_axis(axis, nd)
    n = x.shape[ax] if nd else 1
    if k < 1 or (n != DYN and k > n):
        raise InvalidArgumentError(f"'k'={k} must be in [1, {n}] (the size of axis {axis} of x "
                                   f"with shape {shp(x.shape)})")
    s = _reduce_one(x, axis, keepdim)
    return TensorType(s, x.dtype), TensorType(s, _dt.int64)


def _kth_ref(x, k=1, axis=-1, keepdim=False):
    if x.ndim == 0:
        if k != 1:
            raise InvalidArgumentError(f"kthvalue: 'k'={k} but a 0-D x has one element")
        return x.copy(), np.zeros((), _I64)
    n = x.shape[axis]
    if not 1 <= k <= n:
        raise InvalidArgumentError(f"kthvalue: 'k'={k} must be in [1, {n}] (axis {axis} of x "
                                   f"with shape {list(x.shape)})")
    o = _argsort(_sortable(x), axis, False)
    idx = np.take(o, [k - 1], axis=axis)
    v = np.take_along_axis(x, idx, axis=axis)
    if not keepdim:
        v = np.squeeze(v, axis=axis)
        idx = np.squeeze(idx, axis=axis)
    return v, idx.astype(_I64, copy=False)


defop("kthvalue", ("x",), {"k": 1, "axis": None, "keepdim": False},
      outputs=("values", "indices"), infer=_kth_infer, reference=_kth_ref, canon=_kth_canon,
      promote=None, family="search",
      doc="""The k-th smallest element (k counts from 1) along `axis` (the last axis
when None) and its index.

Example:
    >>> v, i = fw.kthvalue(fw.to_tensor([[3., 1., 2.]]), k=2, axis=1)   # [2.], [2]
""")


def _mode_canon(attrs):
    if type(attrs["axis"]) is int:
        return attrs
    return dict(attrs, axis=_int_attr(attrs["axis"], "axis"))


def _mode_infer(x, axis=-1, keepdim=False):
    _require_real(x)
    nd = len(x.shape)
    if nd:
        ax = norm_axis(axis, nd)
        if x.shape[ax] == 0:
            raise InvalidArgumentError(f"axis {axis} of x with shape {shp(x.shape)} is empty")
    s = _reduce_one(x, axis, keepdim)
    return TensorType(s, x.dtype), TensorType(s, _dt.int64)


def _mode_ref(x, axis=-1, keepdim=False):
    if x.ndim == 0:
        return x.copy(), np.zeros((), _I64)
    n = x.shape[axis]
    if n == 0:
        raise InvalidArgumentError(f"mode: axis {axis} of x with shape {list(x.shape)} is empty")
    y = np.moveaxis(_sortable(x), axis, -1)
    o = np.argsort(y, axis=-1, kind="stable")
    s = np.take_along_axis(y, o, axis=-1)
    pos = np.arange(n)
    # start and end of the run of equal values each sorted position belongs to
    new = np.ones(s.shape, bool)
    new[..., 1:] = s[..., 1:] != s[..., :-1]
    last = np.ones(s.shape, bool)
    last[..., :-1] = new[..., 1:]
    start = np.maximum.accumulate(np.where(new, pos, 0), axis=-1)
    end = np.flip(np.minimum.accumulate(np.flip(np.where(last, pos, n - 1), -1), axis=-1), -1)
    # the longest run; ties go to the smallest value (the first run in sorted order)
    best = np.argmax(end - start, axis=-1)[..., None]
    v = np.take_along_axis(s, best, -1)[..., 0]
    # the stable sort keeps equal values in index order: the run's end is the last one
    idx = np.take_along_axis(o, np.take_along_axis(end, best, -1), -1)[..., 0]
    v = v.astype(x.dtype, copy=False)
    idx = idx.astype(_I64, copy=False)
    if keepdim:
        v = np.expand_dims(v, axis)
        idx = np.expand_dims(idx, axis)
    return v, idx


defop("mode", ("x",), {"axis": -1, "keepdim": False}, outputs=("values", "indices"),
      infer=_mode_infer, reference=_mode_ref, canon=_mode_canon, promote=None,
      family="search",
      doc="""The most frequent value along `axis` (the smallest among equally frequent
ones) and the index of its last occurrence.

Example:
    >>> v, i = fw.mode(fw.to_tensor([[1., 2., 2.], [2., 3., 3.]]), 1)   # [2., 3.], [2, 2]
""")


