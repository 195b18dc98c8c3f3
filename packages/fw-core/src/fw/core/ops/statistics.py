"""Order statistics and counting: median/nanmedian, quantile/nanquantile,
bincount, histogram, histogram_bin_edges, histogramdd. Split from
``reduce.py``, whose docstring states the dtype rules and whose axis helpers
these ops share.
"""

from __future__ import annotations

import numpy as np

from fw.core import dtypes as _dt
from fw.core.errors import InvalidArgumentError, InvalidTypeError
from fw.core.ir.types import DYN, TensorType
from fw.core.ops._infer import norm_axis, reduce, shp
from fw.core.ops._registry import defop
from fw.core.ops.reduce import (
    _F32,
    _F64,
    _I64,
    _LOW,
    _axis_canon,
    _check_nonempty_array,
    _DType,
    _float_of,
    _int_types,
    _nonempty,
    _to_last,
)


# ---------------------------------------------------------------- median / nanmedian
def _median_canon(attrs):
    a = _axis_canon(attrs)
    if a["mode"] not in ("avg", "min"):
        raise InvalidArgumentError(f"'mode' must be 'avg' or 'min', got {a['mode']!r}")
    return a


def _median_dtype(d: _DType, mode: str, nan: bool) -> _DType:
    if mode == "min":
        return d
    if nan:
        return _float_of(d)
    # Paddle's median ('avg'): float64 stays float64, everything else gives float32
    return _dt.float64 if d is _dt.float64 else _dt.float32


def _median_infer_for(nan):
    def infer(x, axis=None, keepdim=False, mode="avg"):
        if not nan and axis is not None and not isinstance(axis, _int_types):
            raise InvalidTypeError(f"'axis' must be an int or None, got {axis!r}")
        if x.dtype.kind == _dt._COMPLEX:
            raise InvalidTypeError(f"x must be a real tensor, got {x.dtype.name}")
        _nonempty(x, axis)
        t = reduce(x, axis, keepdim)
        if axis is None and keepdim:
            t = t.with_shape((1,) * len(x.shape))
        return t.with_dtype(_median_dtype(x.dtype, mode, nan)), t.with_dtype(_dt.int64)

    return infer


def _median_for(name, nan):
    def ref(x, axis=None, keepdim=False, mode="avg"):
        _check_nonempty_array(name, x, axis)
        out = _median_dtype(_dt.from_numpy(x.dtype), mode, nan).np
        y, kept, kd = _to_last(x, axis)
        if y.dtype in _LOW:
            y = y.astype(_F32)
        order = np.argsort(y, axis=-1, kind="stable")  # NaN sorts last
        s = np.take_along_axis(y, order, axis=-1)
        n = y.shape[-1]
        isnan = np.isnan(s) if s.dtype.kind == "f" else np.zeros_like(s, order="C", dtype=bool)
        if nan:
            valid = n - np.add.reduce(isnan, axis=-1, dtype=np.int64)
        else:
            valid = np.full(kept, n, np.int64)
        lo = np.maximum((valid - 1) // 2, 0)
        hi = np.maximum(valid // 2, 0)
        if mode == "min" or n == 0:
            i_sel = lo
            v = np.take_along_axis(s, lo[..., None], -1)[..., 0].astype(np.float64)
        else:
            i_sel = lo
            a = np.take_along_axis(s, lo[..., None], -1)[..., 0].astype(np.float64)
            b = np.take_along_axis(s, hi[..., None], -1)[..., 0].astype(np.float64)
            v = (a + b) / 2
        idx = np.take_along_axis(order, i_sel[..., None], -1)[..., 0].astype(np.int64)
        if s.dtype.kind == "f":
            if nan:  # all-NaN slices give NaN
                empty = valid == 0
                v = np.where(empty, np.nan, v)
                idx = np.where(empty, 0, idx)
            else:  # any NaN makes the median NaN, at the first NaN's position
                has = isnan[..., -1] if n else np.zeros(kept, bool)
                first = np.argmax(np.isnan(y), axis=-1) if n else np.zeros(kept, np.int64)
                v = np.where(has, np.nan, v)
                idx = np.where(has, first, idx)
        if keepdim:
            v = v.reshape(kd)
            idx = idx.reshape(kd)
        elif axis is None:
            v = v.reshape(())
            idx = idx.reshape(())
        return np.asarray(v).astype(out), np.asarray(idx).astype(np.int64)

    return ref


median_op = defop("median", ("x",), {"axis": None, "keepdim": False, "mode": "avg"},
                  outputs=("out", "indices"), infer=_median_infer_for(False),
                  reference=_median_for("median", False), canon=_median_canon, promote=None,
                  family="statistics", api=False, method=False,
                  doc="Median along one axis (or all) and the index of the lower median.")
nanmedian_op = defop("nanmedian", ("x",), {"axis": None, "keepdim": False, "mode": "avg"},
                     outputs=("out", "indices"), infer=_median_infer_for(True),
                     reference=_median_for("nanmedian", True), canon=_median_canon,
                     promote=None, family="statistics", api=False, method=False,
                     doc="Median ignoring NaN and the index of the lower median.")


# ---------------------------------------------------------------- quantile / nanquantile
_INTERP = ("linear", "lower", "higher", "midpoint", "nearest")


def _quantile_canon(attrs):
    a = _axis_canon(attrs)
    a = dict(a)
    q = a["q"]
    if hasattr(q, "tolist"):
        q = q.tolist()
    if isinstance(q, (list, tuple)):
        if len(q) == 0:
            raise InvalidArgumentError("'q' must not be empty")
        q = tuple(float(v) for v in q)
        bad = [v for v in q if not 0.0 <= v <= 1.0]
    else:
        q = float(q)
        bad = [] if 0.0 <= q <= 1.0 else [q]
    if bad:
        raise InvalidArgumentError(f"'q' must be in [0, 1], got {bad[0]}")
    a["q"] = q
    if a["interpolation"] not in _INTERP:
        raise InvalidArgumentError(f"'interpolation' must be one of {', '.join(_INTERP)}, "
                                   f"got {a['interpolation']!r}")
    return a


def _quantile_infer(x, q=0.5, axis=None, keepdim=False, interpolation="linear"):
    if x.dtype.kind == _dt._COMPLEX or x.dtype is _dt.bool_:
        raise InvalidTypeError(f"x must be a real numeric tensor, got {x.dtype.name}")
    t = reduce(x, axis, keepdim)
    shape = t.shape
    if isinstance(q, tuple):
        shape = (len(q),) + tuple(shape)
    return TensorType(shape, _float_of(x.dtype))


def _quantile_for(nan):
    def ref(x, q=0.5, axis=None, keepdim=False, interpolation="linear"):
        out = _float_of(_dt.from_numpy(x.dtype)).np
        y, kept, kd = _to_last(x, axis)
        y = y.astype(np.float64)
        s = np.sort(y, axis=-1)  # NaN last
        n = y.shape[-1]
        nans = np.add.reduce(np.isnan(s), axis=-1, dtype=np.int64)
        valid = (n - nans) if nan else np.full(kept, n, np.int64)
        qs = np.asarray(q if isinstance(q, tuple) else (q,), np.float64)
        pos = qs.reshape((-1,) + (1,) * len(kept)) * np.maximum(valid - 1, 0)
        lo = np.floor(pos)
        hi = np.ceil(pos)
        if interpolation == "lower":
            hi = lo
        elif interpolation == "higher":
            lo = hi
        elif interpolation == "nearest":  # halves round up (away from zero), as Paddle
            lo = hi = np.floor(pos + 0.5)
        frac = pos - lo
        if interpolation == "midpoint":
            frac = np.where(hi > lo, 0.5, 0.0)
        top = max(n - 1, 0)
        li = np.clip(lo, 0, top).astype(np.int64)
        hi_i = np.clip(hi, 0, top).astype(np.int64)
        sb = np.broadcast_to(s, (len(qs),) + s.shape)
        if n == 0:
            v = np.full(pos.shape, np.nan)
        else:
            a = np.take_along_axis(sb, li[..., None], -1)[..., 0]
            b = np.take_along_axis(sb, hi_i[..., None], -1)[..., 0]
            v = a + (b - a) * frac
            v = np.where(lo == hi, a, v)  # exact picks stay exact (and ±inf stays finite-safe)
        bad = valid == 0 if nan else nans > 0
        v = np.where(bad, np.nan, v)
        if keepdim:
            v = v.reshape((len(qs),) + kd)
        if not isinstance(q, tuple):
            v = v[0]
        return np.asarray(v).astype(out)

    return ref


for _n, _nan in (("quantile", False), ("nanquantile", True)):
    defop(_n, ("x",), {"q": 0.5, "axis": None, "keepdim": False, "interpolation": "linear"},
          infer=_quantile_infer, reference=_quantile_for(_nan), canon=_quantile_canon,
          promote=None, family="statistics",
          doc=f"""The q-th quantile(s) of x along `axis` (all elements when None){
          ', ignoring NaN' if _nan else ''}.""")


# ---------------------------------------------------------------- bincount
def _bincount_canon(attrs):
    m = attrs["minlength"]
    if type(m) is int and m >= 0:
        return attrs
    m = int(m.item() if hasattr(m, "item") else m)
    if m < 0:
        raise InvalidArgumentError(f"'minlength' must be >= 0, got {m}")
    return {"minlength": m}


def _bincount_dtype(wd):
    """Result dtype for weights of dtype `wd` (None: no weights)."""
    if wd is None:
        return _dt.int64
    return wd if wd.kind == _dt._FLOAT else _dt.int64


def _bincount_infer(x, weights=None, minlength=0):
    if len(x.shape) != 1:
        raise InvalidArgumentError(f"x must be 1-D, got shape {shp(x.shape)}")
    if x.dtype.kind != _dt._INT:
        raise InvalidTypeError(f"x must be an integer tensor, got {x.dtype.name}")
    if weights is not None and weights.shape != x.shape and DYN not in weights.shape + x.shape:
        raise InvalidArgumentError(f"weights with shape {shp(weights.shape)} must have x's "
                                   f"shape {shp(x.shape)}")
    return TensorType((DYN,), _bincount_dtype(None if weights is None else weights.dtype))


def _bincount_ref(x, weights=None, minlength=0):
    if x.dtype.kind not in "iu":
        raise InvalidTypeError(f"bincount: x must be an integer tensor, got {x.dtype}")
    if x.size and int(np.min(x)) < 0:
        raise InvalidArgumentError("bincount: x must hold non-negative integers, got "
                                   f"{int(np.min(x))}")
    xi = x.astype(np.intp)
    if weights is None:
        return np.bincount(xi, minlength=minlength).astype(_I64)
    out = _bincount_dtype(_dt.from_numpy(weights.dtype)).np
    w = weights.astype(_F64) if weights.dtype.kind != "c" else weights
    return np.bincount(xi, weights=w, minlength=minlength).astype(out)


defop("bincount", ("x", "weights?"), {"minlength": 0}, infer=_bincount_infer,
      reference=_bincount_ref, canon=_bincount_canon, promote=None, differentiable=False,
      family="statistics",
      doc="""Count each non-negative integer value of 1-D x (summing `weights` instead
of 1 when given). The result has max(x) + 1 entries, at least `minlength`;
int64 without weights, the weights' dtype with float weights.""")


# ---------------------------------------------------------------- histogram
def _hist_canon(attrs):
    a = dict(attrs)
    b = a["bins"]
    b = int(b.item() if hasattr(b, "item") else b)
    if b < 1:
        raise InvalidArgumentError(f"'bins' must be >= 1, got {b}")
    a["bins"] = b
    lo, hi = a["min"], a["max"]
    lo = float(lo.item() if hasattr(lo, "item") else lo)
    hi = float(hi.item() if hasattr(hi, "item") else hi)
    if lo > hi:
        raise InvalidArgumentError(f"'max' must be >= 'min', got min={lo}, max={hi}")
    a["min"], a["max"] = lo, hi
    return a


def _hist_range(x, lo, hi):
    if lo == 0.0 and hi == 0.0:
        if x.size == 0:
            return 0.0, 1.0
        lo = float(np.minimum.reduce(x, axis=None))
        hi = float(np.maximum.reduce(x, axis=None))
    if lo == hi:  # one value: widen by 1 each way
        lo, hi = lo - 1.0, hi + 1.0
    return lo, hi


def _hist_dtype(wd, density):
    """Result dtype for weights of dtype `wd` (None: no weights)."""
    if wd is None and not density:
        return _dt.int64
    if wd is not None and wd.kind == _dt._FLOAT:
        return wd
    return _dt.float32


def _histogram_infer(input, weight=None, bins=100, min=0.0, max=0.0, density=False):
    if input.dtype.kind not in (_dt._INT, _dt._FLOAT):
        raise InvalidTypeError(f"input must be an integer or float tensor, got "
                               f"{input.dtype.name}")
    if weight is not None and weight.shape != input.shape and \
            DYN not in weight.shape + input.shape:
        raise InvalidArgumentError(f"weight with shape {shp(weight.shape)} must have input's "
                                   f"shape {shp(input.shape)}")
    return TensorType((bins,), _hist_dtype(None if weight is None else weight.dtype, density))


def _histogram_ref(input, weight=None, bins=100, min=0.0, max=0.0, density=False):
    x = input.reshape(-1).astype(_F64)
    lo, hi = _hist_range(x, min, max)
    w = None if weight is None else weight.reshape(-1).astype(_F64)
    h, _ = np.histogram(x, bins=bins, range=(lo, hi), weights=w, density=density)
    out = _hist_dtype(None if weight is None else _dt.from_numpy(weight.dtype), density)
    return h.astype(out.np)


histogram_op = defop("histogram", ("input", "weight?"),
                     {"bins": 100, "min": 0.0, "max": 0.0, "density": False},
                     infer=_histogram_infer, reference=_histogram_ref, canon=_hist_canon,
                     promote=None, differentiable=False, family="statistics", api=False,
                     doc="Histogram of the values in `bins` equal bins over [min, max].")


def _edges_canon(attrs):
    a = _hist_canon(dict(attrs, density=False))
    del a["density"]
    return a


def _edges_infer(input, bins=100, min=0.0, max=0.0):
    if input.dtype.kind not in (_dt._INT, _dt._FLOAT):
        raise InvalidTypeError(f"input must be an integer or float tensor, got "
                               f"{input.dtype.name}")
    return TensorType((bins + 1,), _float_of(input.dtype) if input.dtype.kind == _dt._FLOAT
                      else _dt.float32)


def _edges_ref(input, bins=100, min=0.0, max=0.0):
    lo, hi = _hist_range(input.reshape(-1).astype(_F64), min, max)
    out = input.dtype if input.dtype.kind == "f" or input.dtype in _LOW else _F32
    return np.linspace(lo, hi, bins + 1).astype(out)


defop("histogram_bin_edges", ("input",), {"bins": 100, "min": 0.0, "max": 0.0},
      infer=_edges_infer, reference=_edges_ref,
      canon=_edges_canon,
      promote=None, differentiable=False, family="statistics",
      doc="""The bins + 1 edges `histogram` uses for the same arguments.""")


# ---------------------------------------------------------------- histogramdd
def _hdd_canon(attrs):
    a = dict(attrs)
    b = a["bins"]
    if isinstance(b, _int_types):
        b = (int(b),)
    else:
        b = tuple(int(v) for v in b)
    if any(v < 1 for v in b):
        raise InvalidArgumentError(f"'bins' must be >= 1, got {list(b)}")
    a["bins"] = b
    r = a["ranges"]
    if r is not None:
        r = tuple(float(v) for v in (r.tolist() if hasattr(r, "tolist") else r))
        for lo, hi in zip(r[0::2], r[1::2]):
            if lo > hi:
                raise InvalidArgumentError(f"'ranges' has min {lo} > max {hi}")
        a["ranges"] = r
    return a


def _hdd_dims(x, bins, ranges, nedges):
    if len(x.shape) < 2:
        raise InvalidArgumentError(f"x must have at least 2 dimensions (points x coordinates), "
                                   f"got shape {shp(x.shape)}")
    d = x.shape[-1]
    if d == DYN:
        raise InvalidArgumentError("the last dimension of x (the number of coordinates) must "
                                   "be static")
    if nedges:
        if nedges != d:
            raise InvalidArgumentError(f"{nedges} bin-edge tensors given for {d}-D points")
    elif len(bins) not in (1, d):
        raise InvalidArgumentError(f"'bins' has {len(bins)} entries for {d}-D points")
    if ranges is not None and len(ranges) != 2 * d:
        raise InvalidArgumentError(f"'ranges' must hold {2 * d} numbers (min, max per "
                                   f"dimension), got {len(ranges)}")
    return d


def _hdd_infer(x, weights=None, bin_edges=(), bins=(10,), ranges=None, density=False):
    if x.dtype.kind != _dt._FLOAT:
        raise InvalidTypeError(f"x must be a floating tensor, got {x.dtype.name}")
    d = _hdd_dims(x, bins, ranges, len(bin_edges))
    if bin_edges:
        shape = tuple(DYN if e.shape[0] == DYN else e.shape[0] - 1 for e in bin_edges)
    else:
        shape = tuple(bins) * d if len(bins) == 1 else tuple(bins)
    return TensorType(shape, x.dtype)


def _hdd_edges(pts, bins, ranges):
    """float64 bin edges per coordinate (numpy's rule for a single-value range)."""
    d = pts.shape[1]
    bins = bins * d if len(bins) == 1 else bins
    edges = []
    for k in range(d):
        if ranges is not None:
            lo, hi = ranges[2 * k], ranges[2 * k + 1]
        elif pts.shape[0]:
            lo = float(np.minimum.reduce(pts[:, k]))
            hi = float(np.maximum.reduce(pts[:, k]))
        else:
            lo, hi = 0.0, 1.0
        if lo == hi:
            lo, hi = lo - 0.5, hi + 0.5
        edges.append(np.linspace(lo, hi, bins[k] + 1))
    return edges


def _hdd_ref(x, weights=None, bin_edges=(), bins=(10,), ranges=None, density=False):
    _hdd_dims(x, bins, ranges, len(bin_edges))
    pts = x.reshape(-1, x.shape[-1]).astype(_F64)
    if bin_edges:
        edges = [np.asarray(e, _F64) for e in bin_edges]
    else:
        edges = _hdd_edges(pts, bins, ranges)
    w = None if weights is None else weights.reshape(-1).astype(_F64)
    h, _ = np.histogramdd(pts, bins=edges, weights=w, density=density)
    return h.astype(x.dtype)


histogramdd_op = defop("histogramdd", ("x", "weights?", "bin_edges*"),
                       {"bins": 10, "ranges": None, "density": False}, infer=_hdd_infer,
                       reference=_hdd_ref, canon=_hdd_canon, promote="all", to_float=True,
                       differentiable=False, family="statistics", api=False, method=False,
                       doc="Counts of N-D points in a grid of bins.")


def _hdd_edges_canon(attrs):
    a = _hdd_canon(dict(attrs, density=False))
    del a["density"]
    a["dim"] = int(a["dim"])
    return a


def _hdd_edges_infer(x, bins=(10,), ranges=None, dim=0):
    if x.dtype.kind != _dt._FLOAT:
        raise InvalidTypeError(f"x must be a floating tensor, got {x.dtype.name}")
    d = _hdd_dims(x, bins, ranges, 0)
    b = bins[0] if len(bins) == 1 else bins[norm_axis(dim, d, "dim")]
    return TensorType((b + 1,), x.dtype)


def _hdd_edges_ref(x, bins=(10,), ranges=None, dim=0):
    _hdd_dims(x, bins, ranges, 0)
    pts = x.reshape(-1, x.shape[-1]).astype(_F64)
    return _hdd_edges(pts, bins, ranges)[dim].astype(x.dtype)


histogramdd_edges_op = defop(
    "histogramdd_bin_edges", ("x",), {"bins": 10, "ranges": None, "dim": 0},
    infer=_hdd_edges_infer, reference=_hdd_edges_ref,
    canon=_hdd_edges_canon,
    promote="all", to_float=True, differentiable=False, family="statistics", api=False,
    method=False, doc="The edges `histogramdd` uses along coordinate `dim`.")


del _n, _nan  # loop names, not API
