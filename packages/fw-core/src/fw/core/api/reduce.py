"""The Paddle-signature functions of the reduce ops that the generated ones cannot express.

The ops themselves (declaration, infer, reference kernel) are in `fw.core.ops.reduce`;
these wrappers are registered with `public` when the op table is loaded.
"""

from __future__ import annotations

import numpy as np

from fw.core import dtypes as _dt
from fw.core.errors import InvalidArgumentError, InvalidTypeError
from fw.core.ir.types import DYN, TensorType
from fw.core.ops._api import public
from fw.core.ops._infer import norm_axis, reduce, shp
from fw.core.ops._registry import defop
from fw.core.ops.reduce import (
    _F32,
    _F64,
    _LOW,
    _axis_canon,
    _check_nonempty_array,
    _DType,
    _float_of,
    _hist_canon,
    _hist_range,
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
        isnan = np.isnan(s) if s.dtype.kind == "f" else np.zeros(s.shape, bool)
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
                  family="reduce", api=False, method=False,
                  doc="Median along one axis (or all) and the index of the lower median.")


nanmedian_op = defop("nanmedian", ("x",), {"axis": None, "keepdim": False, "mode": "avg"},
                     outputs=("out", "indices"), infer=_median_infer_for(True),
                     reference=_median_for("nanmedian", True), canon=_median_canon,
                     promote=None, family="reduce", api=False, method=False,
                     doc="Median ignoring NaN and the index of the lower median.")


@public("median", method=True)
def median(x, axis=None, keepdim=False, mode="avg", name=None):
    """Median of x along `axis` (all elements when None).

    Args:
        x (Tensor): real input.
        axis (int|None): the axis; None uses every element.
        keepdim (bool): keep the reduced axis with size 1.
        mode (str): 'avg' averages the two middle values of an even count (result
            float64 for float64 input, else float32, as in Paddle); 'min' takes the
            lower one and keeps x's dtype.

    Returns:
        Tensor, or (values, indices) when mode='min' and axis is not None. A slice
        containing NaN has median NaN.

    Example:
        >>> fw.median(fw.to_tensor([[1., 4.], [2., 3.]]), axis=1)   # [2.5, 2.5]
    """
    from fw.core.dispatch import invoke

    v, i = invoke(median_op, [x], {"axis": axis, "keepdim": keepdim, "mode": mode})
    return (v, i) if mode == "min" and axis is not None else v


@public("nanmedian", method=True)
def nanmedian(x, axis=None, keepdim=False, mode="avg", name=None):
    """Median of x along `axis` (an int, a list, or None for all) ignoring NaN.

    Returns:
        Tensor, or (values, indices) when mode='min' and axis is an int.
        All-NaN slices give NaN.

    Example:
        >>> fw.nanmedian(fw.to_tensor([[float('nan'), 2., 3.], [0., 1., 2.]]), 0)
    """
    from fw.core.dispatch import invoke

    v, i = invoke(nanmedian_op, [x], {"axis": axis, "keepdim": keepdim, "mode": mode})
    return (v, i) if mode == "min" and isinstance(axis, _int_types) else v


# ---------------------------------------------------------------- diff
def _diff_canon(attrs):
    n, ax = attrs["n"], attrs["axis"]
    if type(n) is int and type(ax) is int:
        if n < 0:
            raise InvalidArgumentError(f"'n' must be >= 0, got {n}")
        return attrs
    a = dict(attrs)
    a["n"] = int(n.item() if hasattr(n, "item") else n)
    a["axis"] = int(ax.item() if hasattr(ax, "item") else ax)
    if a["n"] < 0:
        raise InvalidArgumentError(f"'n' must be >= 0, got {a['n']}")
    return a


def _diff_infer(x, prepend=None, append=None, n=1, axis=-1):
    nd = len(x.shape)
    if nd == 0:
        raise InvalidArgumentError("x must have at least one dimension, got a 0-D tensor")
    ax = norm_axis(axis, nd)
    total = x.shape[ax]
    for nm, t in (("prepend", prepend), ("append", append)):
        if t is None:
            continue
        if len(t.shape) != nd:
            raise InvalidArgumentError(f"'{nm}' must have the rank of x ({nd}), got shape "
                                       f"{shp(t.shape)}")
        for i, (a, b) in enumerate(zip(t.shape, x.shape)):
            if i != ax and a != b and a != DYN and b != DYN:
                raise InvalidArgumentError(f"'{nm}' with shape {shp(t.shape)} must match x "
                                           f"{shp(x.shape)} except along axis {ax}")
        total = DYN if (total == DYN or t.shape[ax] == DYN) else total + t.shape[ax]
    out = list(x.shape)
    out[ax] = DYN if total == DYN else max(total - n, 0)
    return TensorType(out, x.dtype)


def _diff_ref(x, prepend=None, append=None, n=1, axis=-1):
    if prepend is not None or append is not None:
        x = np.concatenate([a for a in (prepend, x, append) if a is not None], axis=axis)
    if n == 0:
        return x.copy()
    if x.dtype in _LOW:
        return np.diff(x.astype(_F32), n=n, axis=axis).astype(x.dtype)
    return np.diff(x, n=n, axis=axis)


diff_op = defop("diff", ("x", "prepend?", "append?"), {"n": 1, "axis": -1}, infer=_diff_infer,
      reference=_diff_ref, canon=_diff_canon, promote="all", family="reduce", api=False,
      doc="n-th forward difference along `axis`, after concatenating prepend/append.")


@public("diff", method=True)
def diff(x, n=1, axis=-1, prepend=None, append=None, name=None):
    """The n-th forward difference ``out[i] = x[i+1] - x[i]`` along `axis`, applied
    n times (bool input uses logical xor).

    Args:
        x (Tensor): input with at least one dimension.
        n (int): how many times to difference.
        axis (int): the axis.
        prepend, append (Tensor|None): values joined to x along `axis` first; the
            other dimensions must match x.

    Example:
        >>> fw.diff(fw.to_tensor([1, 4, 5, 2]))   # [3, 1, -3]
    """
    from fw.core.dispatch import invoke

    return invoke(diff_op, [x, prepend, append], {"n": n, "axis": axis})


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
                     promote=None, differentiable=False, family="reduce", api=False,
                     doc="Histogram of the values in `bins` equal bins over [min, max].")


@public("histogram", method=True)
def histogram(input, bins=100, min=0.0, max=0.0, weight=None, density=False, name=None):
    """Histogram of the elements of `input` in `bins` equal-width bins over
    [min, max] (both ends included; values outside are ignored). With min == max
    == 0 the data's min and max are used; a single value range is widened by 1 on
    each side.

    Returns:
        Tensor of shape [bins]: int64 counts, or float (the weight's float dtype,
        else float32) when `weight` is given or `density` is True.

    Example:
        >>> fw.histogram(fw.to_tensor([1, 2, 1]), bins=4, min=0, max=3)   # [0, 2, 1, 0]
    """
    from fw.core.dispatch import invoke

    return invoke(histogram_op, [input, weight],
                  {"bins": bins, "min": min, "max": max, "density": density})


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
                       differentiable=False, family="reduce", api=False, method=False,
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
    promote="all", to_float=True, differentiable=False, family="reduce", api=False,
    method=False, doc="The edges `histogramdd` uses along coordinate `dim`.")


@public("histogramdd")
def histogramdd(x, bins=10, ranges=None, density=False, weights=None, name=None):
    """Histogram of N-D points: the last axis of x holds the D coordinates of each
    point (leading axes are flattened).

    Args:
        x (Tensor): float tensor of shape [..., D].
        bins (int|list[int]|list[Tensor]): bins per coordinate (one int for all),
            or the bin edges of each coordinate.
        ranges (list[float]|None): [min0, max0, min1, max1, ...]; None uses the data's
            min and max per coordinate.
        density (bool): normalise to a probability density.
        weights (Tensor|None): one weight per point (x's shape without the last axis).

    Returns:
        (Tensor, list[Tensor]): the D-dimensional histogram and the D edge tensors.

    Example:
        >>> x = fw.to_tensor([[0., 1.], [1., 0.], [2., 0.], [2., 2.]])
        >>> hist, edges = fw.histogramdd(x, bins=[3, 3])
    """
    from fw.core.dispatch import invoke

    explicit = isinstance(bins, (list, tuple)) and bins and \
        not isinstance(bins[0], _int_types) and hasattr(bins[0], "shape")
    if explicit:
        hist = invoke(histogramdd_op, [x, weights, list(bins)],
                      {"bins": (1,), "ranges": None, "density": density})
        return hist, list(bins)
    hist = invoke(histogramdd_op, [x, weights, []],
                  {"bins": bins, "ranges": ranges, "density": density})
    nd = x.shape[-1]
    edges = [invoke(histogramdd_edges_op, [x], {"bins": bins, "ranges": ranges, "dim": k})
             for k in range(nd)]
    return hist, edges
