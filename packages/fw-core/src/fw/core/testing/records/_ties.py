"""The "ties" and "duplicates" sample kinds (issue 18) and their loop oracles.

A reduction, selection or sort is easy to get right on distinct values and easy
to get quietly wrong on equal ones (which index wins, which order equal elements
keep); a scatter is easy to get right on distinct indices and wrong on repeated
ones (which write wins, whether updates add up). The samplers here draw exactly
those inputs: values from a four-element set (so most slices hold ties, plus an
occasional NaN) and index arrays drawn with repetition.

Each record of these kinds carries an ``oracle``: the op's semantics written
again as plain Python loops over one slice at a time, sharing no code with the
NumPy reference (``tests/test_record_oracles.py`` compares the two). The
semantics are Paddle's: NaN is the largest value (max, argmax and sorts put it
first when descending), ties go to the first index (argmax, topk, sort, kthvalue)
except where Paddle documents the last (cummax/cummin, mode), mode picks the
smallest of equally frequent values, scatter's last duplicate write wins.
"""

from __future__ import annotations

import math

import numpy as np
from hypothesis import strategies as st

from fw.core import dtypes as _dt
from fw.core.testing import Sample, shapes

TIE_VALUES = (-1, 0, 1, 2)


def tied(draw, dtype, shape, nan=False):
    """An array of `shape` whose values come from TIE_VALUES (bool: True/False);
    with nan=True a floating array may hold a NaN or two."""
    d = _dt.convert_dtype(dtype)
    seed = draw(st.integers(0, 2**31 - 1))
    rng = np.random.default_rng(seed)
    if d.kind == _dt._BOOL:
        return rng.random(shape) < 0.5
    a = rng.choice(np.asarray(TIE_VALUES), size=shape).astype(d.np)
    if nan and d.kind == _dt._FLOAT and a.size and draw(st.booleans()):
        flat = a.reshape(-1)
        for k in draw(st.lists(st.integers(0, a.size - 1), min_size=1, max_size=2)):
            flat[k] = np.nan
    return a


def ties_sample(draw, dtype, axis="int", nan=True, min_dims=0, extra=None):
    """One tied array and an axis: axis='int' (one axis; None for 0-D), 'any' (None,
    one axis or a list)."""
    shape = shapes(draw, min_dims=min_dims, max_dims=3, min_side=1, max_side=5)
    nd = len(shape)
    if nd == 0:
        ax = None if axis == "any" else draw(st.sampled_from([0, -1]))
    elif axis == "any":
        ax = draw(st.one_of(st.none(), st.integers(-nd, nd - 1),
                            st.lists(st.integers(0, nd - 1), min_size=1, max_size=nd,
                                     unique=True)))
    else:
        ax = draw(st.integers(-nd, nd - 1))
    attrs = {"axis": ax, "keepdim": draw(st.booleans())}
    attrs.update(extra or {})
    return Sample([tied(draw, dtype, shape, nan)], attrs)


# ---------------------------------------------------------------- slicing helpers
def _axes(axis, nd):
    if axis is None:
        return list(range(nd))
    if isinstance(axis, (list, tuple)):
        return sorted(a % nd for a in axis) if nd else []
    return [axis % nd] if nd else []


def _rows(x, axis):
    """(rows, kept shape, kept-with-ones shape): the slices of x over `axis` as lists
    of Python numbers."""
    x = np.asarray(x)
    axes = _axes(axis, x.ndim)
    rest = [i for i in range(x.ndim) if i not in axes]
    y = np.transpose(x, rest + axes)
    kept = tuple(x.shape[i] for i in rest)
    ones = tuple(1 if i in axes else x.shape[i] for i in range(x.ndim))
    n = int(np.prod([x.shape[i] for i in axes])) if axes else 1
    return y.reshape(int(np.prod(kept)), n).tolist(), kept, ones


def _shape_out(vals, kept, ones, keepdim, dtype):
    return np.asarray(vals, dtype=dtype).reshape(ones if keepdim else kept)


def _isnan(v):
    return isinstance(v, float) and math.isnan(v)


def _key(v):
    """Sort key with NaN as the largest value."""
    return (1, 0.0) if _isnan(v) else (0, v)


def order(row, descending=False):
    """Stable order of `row` (NaN largest); descending keeps equal values in index order."""
    if descending:
        return _stable_desc(row)
    return sorted(range(len(row)), key=lambda i: _key(row[i]))


def _stable_desc(row):
    # larger first, equal values in index order (an insertion sort: obviously stable)
    idx = list(range(len(row)))
    for i in range(1, len(idx)):
        j = i
        while j > 0 and _key(row[idx[j - 1]]) < _key(row[idx[j]]):
            idx[j - 1], idx[j] = idx[j], idx[j - 1]
            j -= 1
    return idx


# ---------------------------------------------------------------- reductions
def _extreme(row, largest):
    """(value, first index) of the max (or min); the first NaN wins."""
    best = 0
    for i, v in enumerate(row):
        if _isnan(v):
            return v, i
        if (v > row[best]) if largest else (v < row[best]):
            best = i
    return row[best], best


def extreme_oracle(largest):
    def oracle(x, axis=None, keepdim=False):
        rows, kept, ones = _rows(x, axis)
        vals = [_extreme(r, largest)[0] for r in rows]
        return _shape_out(vals, kept, ones, keepdim, x.dtype)
    return oracle


def arg_extreme_oracle(largest):
    def oracle(x, axis=None, keepdim=False, dtype="int64"):
        rows, kept, ones = _rows(x, axis)
        idx = [_extreme(r, largest)[1] for r in rows]
        if axis is None:
            kept, ones = (), (1,) * np.ndim(x)
        return _shape_out(idx, kept, ones, keepdim, _dt.convert_dtype(dtype).np)
    return oracle


# ---------------------------------------------------------------- sorts and selections
def _per_row(x, axis, fn):
    """Apply fn(row) -> list (same length or k) along `axis`, keeping it in place."""
    x = np.asarray(x)
    if x.ndim == 0:
        return [np.asarray(v) for v in fn([x.item()])]
    ax = axis % x.ndim
    y = np.moveaxis(x, ax, -1)  # the samplers draw no empty axis
    outs = [fn(r) for r in y.reshape(-1, y.shape[-1]).tolist()]
    res = []
    for k in range(len(outs[0])):
        vals = [o[k] for o in outs]
        arr = np.asarray(vals).reshape(y.shape[:-1] + (len(vals[0]),))
        res.append(np.moveaxis(arr, -1, ax))
    return res


def sort_oracle(x, axis=-1, descending=False, stable=False):
    if np.ndim(x) == 0:
        return np.asarray(x).copy()
    (v,) = _per_row(x, axis, lambda r: [[r[i] for i in order(r, descending)]])
    return v.astype(x.dtype)


def argsort_oracle(x, axis=-1, descending=False, stable=False):
    if np.ndim(x) == 0:
        return np.zeros((), np.int64)
    (i,) = _per_row(x, axis, lambda r: [order(r, descending)])
    return i.astype(np.int64)


def topk_oracle(x, k=1, axis=None, largest=True, sorted=True):
    if np.ndim(x) == 0:
        return np.asarray(x).copy(), np.zeros((), np.int64)
    ax = -1 if axis is None else axis

    def fn(r):
        o = order(r, largest)[:k]
        return [[r[i] for i in o], o]
    v, i = _per_row(x, ax, fn)
    return v.astype(x.dtype), i.astype(np.int64)


def kthvalue_oracle(x, k=1, axis=None, keepdim=False):
    if np.ndim(x) == 0:
        return np.asarray(x).copy(), np.zeros((), np.int64)
    ax = -1 if axis is None else axis

    def fn(r):
        i = order(r)[k - 1]
        return [[r[i]], [i]]
    v, i = _per_row(x, ax, fn)
    if not keepdim:
        v, i = np.squeeze(v, ax), np.squeeze(i, ax)
    return v.astype(x.dtype), i.astype(np.int64)


def mode_oracle(x, axis=-1, keepdim=False):
    if np.ndim(x) == 0:
        return np.asarray(x).copy(), np.zeros((), np.int64)

    def fn(r):
        counts = {}
        for v in r:
            counts[v] = counts.get(v, 0) + 1
        top = max(counts.values())
        best = min(v for v, c in counts.items() if c == top)
        last = max(i for i, v in enumerate(r) if v == best)
        return [[best], [last]]
    v, i = _per_row(x, axis, fn)
    if not keepdim:
        v, i = np.squeeze(v, axis), np.squeeze(i, axis)
    return v.astype(x.dtype), i.astype(np.int64)


def cum_extreme_oracle(largest):
    """cummax/cummin: the running extreme and the LAST index where it was reached."""
    def oracle(x, axis=None, dtype="int64"):
        x = np.asarray(x)
        y = x.reshape(-1) if axis is None else x
        ax = 0 if axis is None else axis

        def fn(r):
            vals, idx = [], []
            for i, v in enumerate(r):
                if i == 0 or _isnan(v) or (not _isnan(vals[-1]) and (
                        v >= vals[-1] if largest else v <= vals[-1])):
                    vals.append(v)
                    idx.append(i)
                else:
                    vals.append(vals[-1])
                    idx.append(idx[-1])
            return [vals, idx]
        if y.ndim == 0:
            return y.copy(), np.zeros((), _dt.convert_dtype(dtype).np)
        v, i = _per_row(y, ax, fn)
        return v.astype(x.dtype), i.astype(_dt.convert_dtype(dtype).np)
    return oracle


def unique_oracle(x, axis=None, dtype="int64"):
    """Flattened unique (no NaN in the tie samples): sorted values, first index,
    inverse, counts."""
    flat = np.asarray(x).reshape(-1).tolist()
    vals = sorted(set(flat))
    d = _dt.convert_dtype(dtype).np
    first = [flat.index(v) for v in vals]
    inverse = [vals.index(v) for v in flat]
    counts = [flat.count(v) for v in vals]
    return (np.asarray(vals, dtype=x.dtype), np.asarray(first, d), np.asarray(inverse, d),
            np.asarray(counts, d))


def unique_consecutive_oracle(x, axis=None, dtype="int64"):
    flat = np.asarray(x).reshape(-1).tolist()
    d = _dt.convert_dtype(dtype).np
    vals, inverse, counts = [], [], []
    for i, v in enumerate(flat):
        if i == 0 or v != flat[i - 1]:
            vals.append(v)
            counts.append(0)
        counts[-1] += 1
        inverse.append(len(vals) - 1)
    return np.asarray(vals, dtype=x.dtype), np.asarray(inverse, d), np.asarray(counts, d)


def searchsorted_oracle(sorted_sequence, values, out_int32=False, right=False):
    seq, vals = np.asarray(sorted_sequence), np.asarray(values)
    d = np.int32 if out_int32 else np.int64

    def count(row, v):
        return sum(1 for s in row if (s <= v if right else s < v))
    if seq.ndim == 1:
        return np.asarray([count(seq.tolist(), v) for v in vals.reshape(-1).tolist()],
                          d).reshape(vals.shape)
    s2 = seq.reshape(-1, seq.shape[-1]).tolist()
    v2 = vals.reshape(-1, vals.shape[-1]).tolist()
    return np.asarray([[count(s, v) for v in vs] for s, vs in zip(s2, v2)],
                      d).reshape(vals.shape)


# ---------------------------------------------------------------- order statistics
def _float_out(x):
    return np.float64 if np.asarray(x).dtype == np.float64 else np.float32


def quantile_oracle(nan):
    def oracle(x, q=0.5, axis=None, keepdim=False, interpolation="linear"):
        rows, kept, ones = _rows(x, axis)
        qs = list(q) if isinstance(q, tuple) else [q]
        out = []
        for qq in qs:
            vals = []
            for r in rows:
                has_nan = any(_isnan(v) for v in r)
                s = sorted(v for v in r if not _isnan(v))
                if (has_nan and not nan) or not s:
                    vals.append(float("nan"))
                    continue
                pos = qq * (len(s) - 1)
                lo, hi = math.floor(pos), math.ceil(pos)
                if interpolation == "lower":
                    v = s[lo]
                elif interpolation == "higher":
                    v = s[hi]
                elif interpolation == "nearest":  # Paddle's round: halves away from zero
                    v = s[math.floor(pos + 0.5)]
                elif interpolation == "midpoint":
                    v = (s[lo] + s[hi]) / 2
                else:
                    v = s[lo] + (s[hi] - s[lo]) * (pos - lo)
                vals.append(v)
            out.append(_shape_out(vals, kept, ones, keepdim, np.float64))
        res = np.stack(out) if isinstance(q, tuple) else out[0]
        if axis is None and keepdim:
            res = res.reshape((len(qs),) * isinstance(q, tuple) + (1,) * np.ndim(x))
        return res.astype(_float_out(x))
    return oracle


def median_oracle(nan):
    """median/nanmedian values ('avg': mean of the two middle values, 'min': the lower)."""
    def oracle(x, axis=None, keepdim=False, mode="avg"):
        rows, kept, ones = _rows(x, axis)
        vals = []
        for r in rows:
            s = sorted(v for v in r if not _isnan(v))
            if (len(s) < len(r) and not nan) or not s:
                vals.append(float("nan"))
                continue
            lo, hi = s[(len(s) - 1) // 2], s[len(s) // 2]
            vals.append(lo if mode == "min" else (lo + hi) / 2)
        res = _shape_out(vals, kept, ones, keepdim, np.float64)
        return res.astype(np.asarray(x).dtype if mode == "min" else _float_out(x))
    return oracle


# ---------------------------------------------------------------- scatters with duplicates
def _norm(i, n):
    return i + n if i < 0 else i


def scatter_oracle(x, index, updates, overwrite=True):
    out = np.array(x, copy=True)
    idx = [_norm(int(i), x.shape[0]) for i in np.asarray(index).reshape(-1)]
    upd = np.asarray(updates).reshape((len(idx),) + x.shape[1:])
    if not overwrite:
        for i in idx:
            out[i] = 0
    for k, i in enumerate(idx):  # in order: the last write wins
        out[i] = upd[k] if overwrite else out[i] + upd[k]
    return out


def index_add_oracle(x, index, value, axis=0):
    out = np.array(x, copy=True)
    a = axis % x.ndim
    o = np.moveaxis(out, a, 0)  # a view: writes land in out
    v = np.moveaxis(np.asarray(value), a, 0)
    for k, i in enumerate(np.asarray(index).reshape(-1).tolist()):
        o[_norm(i, x.shape[a])] += v[k]
    return out


def scatter_nd_add_oracle(x, index, updates):
    out = np.array(x, copy=True)
    index = np.asarray(index)
    k = index.shape[-1]
    pts = index.reshape(-1, k).tolist()
    upd = np.asarray(updates).reshape((len(pts),) + x.shape[k:])
    for p, u in zip(pts, upd):
        key = tuple(_norm(i, x.shape[d]) for d, i in enumerate(p))
        out[key] += u
    return out


def put_along_axis_oracle(arr, indices, values, axis=0, reduce="assign", include_self=True,
                          broadcast=True):
    reduce = {"multiply": "mul", "sum": "add", "prod": "mul"}.get(reduce, reduce)
    arr = np.asarray(arr)
    idx = np.asarray(indices)
    a = axis % arr.ndim
    vals = np.broadcast_to(np.asarray(values), idx.shape) if broadcast or np.ndim(values) == 0 \
        else np.asarray(values)[tuple(slice(0, k) for k in idx.shape)]
    out = arr.copy()
    hits = {}
    for pos in np.ndindex(*idx.shape):
        tgt = list(pos)
        tgt[a] = _norm(int(idx[pos]), arr.shape[a])
        hits.setdefault(tuple(tgt), []).append(vals[pos].item())
    for tgt, vs in hits.items():
        if reduce == "assign":
            out[tgt] = vs[-1]
            continue
        start = [arr[tgt].item()] if include_self else []
        allv = start + vs
        if reduce == "add":
            r = sum(allv)
        elif reduce == "mul":
            r = math.prod(allv)
        elif reduce == "amax":
            r = max(allv)
        elif reduce == "amin":
            r = min(allv)
        else:  # mean; integer results truncate toward zero as Paddle's kernel does
            r = sum(allv) / len(allv)
            if arr.dtype.kind in "iub":
                r = math.trunc(r)
        out[tgt] = r
    return out


def dup_indices(draw, n, size_max=6):
    """An int64 index vector into [-n, n) that repeats some entry when it can."""
    size = draw(st.integers(1, size_max))
    pool = draw(st.lists(st.integers(-n, n - 1), min_size=1, max_size=2))
    return np.asarray([draw(st.sampled_from(pool)) for _ in range(size)], np.int64)
