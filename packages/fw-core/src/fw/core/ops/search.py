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
from fw.core.ops._xp import xp_of

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


def _index_dtype(d):
    d = _dt.convert_dtype(d)
    if d not in (_dt.int32, _dt.int64):
        raise InvalidTypeError(f"'dtype' (of the indices) must be int32 or int64, got {d.name}")
    return d


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


def _sort_infer(x, axis=-1, descending=False, stable=False):
    _require_real(x)
    norm_axis(axis, len(x.shape))
    return x


def _argsort_infer(x, axis=-1, descending=False, stable=False):
    _require_real(x)
    norm_axis(axis, len(x.shape))
    return x.with_dtype(_dt.int64)


def _argsort_ref(x, axis=-1, descending=False, stable=False):
    if x.dtype.kind == "c":
        raise InvalidTypeError(f"argsort: 'x' must be a real tensor, got {x.dtype}")
    if x.ndim == 0:
        return np.zeros_like(x, order="C", dtype=_I64)
    return _argsort(_sortable(x), axis, descending).astype(_I64, copy=False)


def _sort_ref(x, axis=-1, descending=False, stable=False):
    if x.dtype.kind == "c":
        raise InvalidTypeError(f"sort: 'x' must be a real tensor, got {x.dtype}")
    if x.ndim == 0:
        return x.copy()
    if not descending:
        if x.dtype in _LOW:
            return np.sort(x.astype(_F32), axis=axis).astype(x.dtype)
        return np.sort(x, axis=axis)
    return np.take_along_axis(x, _argsort(_sortable(x), axis, True), axis=axis)


sort_op = defop("sort", ("x",), {"axis": -1, "descending": False, "stable": False},
                infer=_sort_infer, reference=_sort_ref, canon=_sort_canon, promote=None,
                family="search",
                doc="""x sorted along `axis` (ascending unless `descending`). NaN sorts as
the largest value. The sort is always stable.""")
defop("argsort", ("x",), {"axis": -1, "descending": False, "stable": False},
      infer=_argsort_infer, reference=_argsort_ref, canon=_sort_canon, promote=None,
      differentiable=False, family="search",
      doc="""Indices that sort x along `axis` (int64); equal elements keep their order.""")


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
        return x.copy(), np.zeros_like(x, order="C", dtype=_I64)
    if k > x.shape[axis]:
        raise InvalidArgumentError(f"topk: 'k'={k} exceeds the size {x.shape[axis]} of axis "
                                   f"{axis} of x with shape {list(x.shape)}")
    o = _argsort(_sortable(x), axis, largest)
    idx = np.take(o, xp_of(o).arange(k), axis=axis)
    return np.take_along_axis(x, idx, axis=axis), idx.astype(_I64, copy=False)


defop("topk", ("x",), {"k": 1, "axis": None, "largest": True, "sorted": True},
      outputs=("values", "indices"), infer=_topk_infer, reference=_topk_ref,
      canon=_topk_canon, promote=None, family="search",
      doc="""The k largest (or smallest with largest=False) elements along `axis`
(the last axis when None) and their indices. Results are always sorted (largest
first, or smallest first); among equal values the lower index comes first.""")


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
        return x.copy(), np.zeros_like(x, order="C", dtype=_I64)
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
when None) and its index.""")


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
        return x.copy(), np.zeros_like(x, order="C", dtype=_I64)
    n = x.shape[axis]
    if n == 0:
        raise InvalidArgumentError(f"mode: axis {axis} of x with shape {list(x.shape)} is empty")
    y = np.moveaxis(_sortable(x), axis, -1)
    o = np.argsort(y, axis=-1, kind="stable")
    s = np.take_along_axis(y, o, axis=-1)
    pos = np.arange(n)
    # start and end of the run of equal values each sorted position belongs to
    new = np.ones_like(s, order="C", dtype=bool)
    new[..., 1:] = s[..., 1:] != s[..., :-1]
    last = np.ones_like(s, order="C", dtype=bool)
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
ones) and the index of its last occurrence.""")


# ---------------------------------------------------------------- unique / unique_consecutive
def _unique_canon(attrs):
    a = dict(attrs)
    if a["axis"] is not None:
        a["axis"] = _int_attr(a["axis"], "axis")
    a["dtype"] = _index_dtype(a["dtype"])
    return a


def _unique_types(x, axis, dtype, n_out_idx):
    nd = len(x.shape)
    if axis is None:
        out = TensorType((DYN,), x.dtype)
        inv = TensorType((x.numel(),), dtype)
    else:
        ax = norm_axis(axis, nd)
        s = list(x.shape)
        s[ax] = DYN
        out = TensorType(s, x.dtype)
        inv = TensorType((x.shape[ax] if nd else 1,), dtype)
    cnt = TensorType((DYN,), dtype)
    return (out, TensorType((DYN,), dtype), inv, cnt) if n_out_idx else (out, inv, cnt)


def _unique_infer(x, axis=None, dtype=_dt.int64):
    _require_real(x)
    return _unique_types(x, axis, dtype, True)


def _as_rows(x, axis):
    """x with `axis` first and everything else flattened: one row per slice."""
    y = np.moveaxis(x, axis, 0)
    return y.reshape(y.shape[0], -1) if y.shape[0] else y.reshape(0, int(np.prod(y.shape[1:])))


def _unique_ref(x, axis=None, dtype=_dt.int64):
    d = dtype.np
    if axis is None or x.ndim == 0:
        flat = _sortable(x).reshape(-1)
        o = np.argsort(flat, kind="stable")
        s = flat[o]
        new = np.ones_like(s, order="C", dtype=bool)
        if s.size:
            ne = s[1:] != s[:-1]
            if s.dtype.kind == "f":  # NaNs are one value (they sort together at the end)
                ne &= ~(np.isnan(s[1:]) & np.isnan(s[:-1]))
            new[1:] = ne
        starts = np.flatnonzero(new)
        out = x.reshape(-1)[o[starts]]
        index = o[starts]
        counts = np.diff(np.append(starts, s.size))
        inverse = np.empty(s.size, _I64)
        inverse[o] = np.cumsum(new) - 1
        if axis is not None:  # a 0-D x along axis 0: one slice
            out = out.reshape(-1)
        return out, index.astype(d), inverse.astype(d), counts.astype(d)
    rows = _as_rows(_sortable(x), axis)
    n = rows.shape[0]
    if n == 0:
        e = np.zeros(0, d)
        return x.copy(), e, e, e
    # lexicographic stable order of the rows (last key varies slowest in lexsort)
    o = np.lexsort(rows.T[::-1]) if rows.shape[1] else np.arange(n)
    s = rows[o]
    new = np.ones(n, bool)
    if rows.shape[1]:
        new[1:] = np.logical_or.reduce(s[1:] != s[:-1], axis=1)
    else:
        new[1:] = False
    starts = np.flatnonzero(new)
    index = o[starts]
    out = np.take(x, index, axis=axis)
    counts = np.diff(np.append(starts, n))
    inverse = np.empty(n, _I64)
    inverse[o] = np.cumsum(new) - 1
    return out, index.astype(d), inverse.astype(d), counts.astype(d)


unique_op = defop("unique", ("x",), {"axis": None, "dtype": "int64"},
                  outputs=("out", "indices", "inverse", "counts"), infer=_unique_infer,
                  reference=_unique_ref, canon=_unique_canon, promote=None,
                  differentiable=False, family="search", api=False, method=False,
                  doc="Sorted unique elements (or slices along axis) with index, inverse "
                      "and counts.")


def _uc_infer(x, axis=None, dtype=_dt.int64):
    return _unique_types(x, axis, dtype, False)


def _uc_ref(x, axis=None, dtype=_dt.int64):
    d = dtype.np
    if axis is None or x.ndim == 0:
        flat = x.reshape(-1)
        n = flat.size
        new = np.ones(n, bool)
        if n:
            new[1:] = flat[1:] != flat[:-1]
        starts = np.flatnonzero(new)
        return (flat[starts], (np.cumsum(new) - 1).astype(d),
                np.diff(np.append(starts, n)).astype(d))
    rows = _as_rows(x, axis)
    n = rows.shape[0]
    new = np.ones(n, bool)
    if n and rows.shape[1]:
        new[1:] = np.logical_or.reduce(rows[1:] != rows[:-1], axis=1)
    elif n:
        new[1:] = False
    starts = np.flatnonzero(new)
    return (np.take(x, starts, axis=axis), (np.cumsum(new) - 1).astype(d),
            np.diff(np.append(starts, n)).astype(d))


uc_op = defop("unique_consecutive", ("x",), {"axis": None, "dtype": "int64"},
              outputs=("out", "inverse", "counts"), infer=_uc_infer, reference=_uc_ref,
              canon=_unique_canon, promote=None, differentiable=False, family="search",
              api=False, method=False,
              doc="Collapse runs of equal consecutive elements (or slices along axis).")


# ---------------------------------------------------------------- searchsorted / bucketize
def _ss_infer(sorted_sequence, values, out_int32=False, right=False):
    _require_real(sorted_sequence, "sorted_sequence")
    s, v = sorted_sequence.shape, values.shape
    if len(s) == 0:
        raise InvalidArgumentError("'sorted_sequence' must have at least one dimension")
    if len(s) > 1:
        lead_s, lead_v = s[:-1], v[:-1]
        if len(v) != len(s) or any(a != b and DYN not in (a, b) for a, b in zip(lead_s, lead_v)):
            raise InvalidArgumentError(
                f"a {len(s)}-D sorted_sequence {shp(s)} needs values with the same leading "
                f"dimensions, got values of shape {shp(v)}")
    return TensorType(v, _dt.int32 if out_int32 else _dt.int64)


def _ss_ref(sorted_sequence, values, out_int32=False, right=False):
    side = "right" if right else "left"
    d = np.int32 if out_int32 else np.int64
    seq = _sortable(sorted_sequence)
    vals = _sortable(values)
    if seq.ndim == 1:
        return np.searchsorted(seq, vals, side=side).astype(d)
    lead = seq.shape[:-1]
    rows = int(np.prod(lead))
    s2 = seq.reshape(rows, seq.shape[-1])
    v2 = vals.reshape(rows, vals.shape[-1])
    out = np.empty_like(v2, dtype=d)
    for i in range(s2.shape[0]):
        out[i] = np.searchsorted(s2[i], v2[i], side=side)
    return out.reshape(lead + vals.shape[-1:])


ss_op = defop("searchsorted", ("sorted_sequence", "values"), {"out_int32": False,
                                                              "right": False},
              infer=_ss_infer, reference=_ss_ref, promote="all", differentiable=False,
              family="search", method=False,
              doc="""Insertion points of `values` into the innermost dimension of
`sorted_sequence` that keep it sorted: the first position (right=False) or the
position after the last equal element (right=True). A 1-D sequence serves every
value; an N-D one needs values with the same leading dimensions.""")


# ---------------------------------------------------------------- nonzero / argwhere
def _nz_canon(attrs):
    d = attrs["dim"]
    return attrs if d is None or type(d) is int else {"dim": _int_attr(d, "dim")}


def _nz_infer(x, dim=None):
    if dim is None:
        return TensorType((DYN, len(x.shape)), _dt.int64)
    norm_axis(dim, len(x.shape), "dim")
    return TensorType((DYN, 1), _dt.int64)


def _nz_ref(x, dim=None):
    r = np.argwhere(x)
    if dim is not None:
        d = norm_axis(dim, x.ndim, "dim")
        r = r[:, d:d + 1]
    return r.astype(_I64, copy=False)


nonzero_op = defop("nonzero", ("x",), {"dim": None}, infer=_nz_infer, reference=_nz_ref,
                   canon=_nz_canon, promote=None, differentiable=False, family="search",
                   api=False, method=False,
                   doc="Coordinates of the non-zero elements: [z, ndim] int64, or the [z, 1] "
                       "column of coordinate `dim`.")


