"""Cumulative ops along an axis and their inverses: cumsum, cumprod,
logcumsumexp, cummax/cummin (values and indices), diff, trapezoid and
cumulative_trapezoid. Split from ``reduce.py``, whose docstring states the
dtype rules (integer input of ``logcumsumexp`` in the default float dtype,
float16/bfloat16 accumulated in float32) and whose axis helpers these ops share.
"""

from __future__ import annotations

import numpy as np

from fw.core import dtypes as _dt
from fw.core.errors import InvalidArgumentError, InvalidTypeError
from fw.core.ir.types import DYN, TensorType
from fw.core.ops._infer import norm_axis, shp
from fw.core.ops._registry import defop
from fw.core.ops.reduce import (
    _F32,
    _I64,
    _LOW,
    _DType,
    _float_of,
    _floated,
    _int_types,
)


# ---------------------------------------------------------------- cumulative ops
def _cum_canon(attrs):
    ax = attrs.get("axis", attrs.get("dim"))
    d = attrs.get("dtype")
    if (ax is None or type(ax) is int) and (d is None or type(d) is _DType):
        return attrs
    a = dict(attrs)
    key = "axis" if "axis" in attrs else "dim"
    if ax is not None:
        if hasattr(ax, "item"):
            ax = ax.item()
        if not isinstance(ax, _int_types) or isinstance(ax, bool):
            raise InvalidTypeError(f"'{key}' must be an int or None, got {type(ax).__name__}")
        a[key] = int(ax)
    if d is not None:
        a["dtype"] = _dt.convert_dtype(d)
    return a


def _cum_shape(x, axis, arg="axis"):
    if axis is None:
        n = x.numel()
        return (n,)
    norm_axis(axis, len(x.shape), arg)
    return x.shape


def _cum_dtype(d: _DType) -> _DType:
    return _dt.int64 if d is _dt.bool_ else d


def _cum_prepare(x, axis, dtype):
    """(array in the accumulation dtype, numpy axis, output dtype)."""
    out = dtype.np if dtype is not None else (_I64 if x.dtype.kind == "b" else x.dtype)
    if x.dtype != out:
        x = x.astype(out)
    if axis is None:
        x = x.reshape(-1)
        axis = 0
    elif x.ndim == 0:
        x = x.reshape(1)
        axis = 0
    return (x.astype(_F32) if out in _LOW else x), axis, out


def _cumsum_infer(x, axis=None, dtype=None):
    return TensorType(_cum_shape(x, axis), dtype if dtype is not None else _cum_dtype(x.dtype))


def _cumsum_ref(x, axis=None, dtype=None):
    shape = x.shape
    a, ax, out = _cum_prepare(x, axis, dtype)
    r = np.add.accumulate(a, axis=ax, dtype=a.dtype)
    if axis is not None and len(shape) == 0:
        r = r.reshape(())
    return r.astype(out) if r.dtype != out else r


defop("cumsum", ("x",), {"axis": None, "dtype": None}, infer=_cumsum_infer,
      reference=_cumsum_ref, canon=_cum_canon, promote=None, inplace=True, family="cumulative",
      doc="""Cumulative sum along `axis` (of the flattened tensor when axis is None).
`dtype` casts x first; bool input accumulates in int64.""")


def _cumprod_infer(x, dim=None, dtype=None):
    return TensorType(_cum_shape(x, dim, "dim"),
                      dtype if dtype is not None else _cum_dtype(x.dtype))


def _cumprod_ref(x, dim=None, dtype=None):
    shape = x.shape
    a, ax, out = _cum_prepare(x, dim, dtype)
    r = np.multiply.accumulate(a, axis=ax, dtype=a.dtype)
    if dim is not None and len(shape) == 0:
        r = r.reshape(())
    return r.astype(out) if r.dtype != out else r


defop("cumprod", ("x",), {"dim": None, "dtype": None}, infer=_cumprod_infer,
      reference=_cumprod_ref, canon=_cum_canon, promote=None, inplace=True, family="cumulative",
      doc="""Cumulative product along `dim` (of the flattened tensor when dim is None).""")


def _logcumsumexp_infer(x, axis=None, dtype=None):
    return TensorType(_cum_shape(x, axis), dtype if dtype is not None else _float_of(x.dtype))


def _logcumsumexp_ref(x, axis=None, dtype=None):
    x = _floated(x)
    shape = x.shape
    a, ax, out = _cum_prepare(x, axis, dtype)
    if a.size == 0:
        r = a.copy()
    else:
        r = np.logaddexp.accumulate(a, axis=ax, dtype=a.dtype)
    if axis is not None and len(shape) == 0:
        r = r.reshape(())
    return r.astype(out) if r.dtype != out else r


defop("logcumsumexp", ("x",), {"axis": None, "dtype": None}, infer=_logcumsumexp_infer,
      reference=_logcumsumexp_ref, canon=_cum_canon, promote=None,
      family="cumulative",
      doc="""log(cumsum(exp(x))) along `axis` (flattened when None), computed stably.""")


def _cumext_canon(attrs):
    a = _cum_canon(attrs)  # converts the dtype already
    d = a["dtype"]
    if d not in (_dt.int32, _dt.int64):
        raise InvalidTypeError(f"'dtype' (of the indices) must be int32 or int64, got {d.name}")
    return a


def _cumext_infer(x, axis=None, dtype=_dt.int64):
    s = _cum_shape(x, axis)
    return TensorType(s, x.dtype), TensorType(s, dtype)


def _cumext(ufunc):
    def ref(x, axis=None, dtype=_dt.int64):
        shape = x.shape
        out = x.dtype
        a = x.reshape(-1) if axis is None else (x.reshape(1) if x.ndim == 0 else x)
        ax = 0 if (axis is None or x.ndim == 0) else axis
        if a.dtype in _LOW:
            a = a.astype(_F32)
        if a.size == 0:
            v = a.copy()
            idx = np.zeros_like(a, order="C", dtype=dtype.np)
        else:
            v = ufunc.accumulate(a, axis=ax)
            # the index moves to i whenever x[i] reaches the running extreme (ties take
            # the later index) or is NaN (NaN propagates and keeps its position)
            hit = a == v
            if a.dtype.kind in "fc":
                hit |= np.isnan(a)
            pos = np.arange(a.shape[ax], dtype=np.int64).reshape(
                [-1 if i == ax % a.ndim else 1 for i in range(a.ndim)])
            idx = np.maximum.accumulate(np.where(hit, pos, 0), axis=ax).astype(dtype.np)
        if axis is not None and len(shape) == 0:
            v, idx = v.reshape(()), idx.reshape(())
        return v.astype(out) if v.dtype != out else v, idx

    return ref


for _n, _uf, _w in (("cummax", np.maximum, "maximum"), ("cummin", np.minimum, "minimum")):
    defop(_n, ("x",), {"axis": None, "dtype": "int64"}, outputs=("out", "indices"),
          infer=_cumext_infer, reference=_cumext(_uf), canon=_cumext_canon, promote=None,
          family="cumulative",
          doc=f"""Cumulative {_w} along `axis` (of the flattened tensor when None) and the
index where each running {_w} was reached (the later index among ties; NaN
propagates). `dtype` is the indices' dtype, int64 or int32.""")


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
      reference=_diff_ref, canon=_diff_canon, promote="all", family="cumulative", api=False,
      doc="n-th forward difference along `axis`, after concatenating prepend/append.")


# ---------------------------------------------------------------- trapezoid
def _trap_canon(attrs):
    a = dict(attrs)
    dx = a["dx"]
    if dx is not None:
        a["dx"] = float(dx.item() if hasattr(dx, "item") else dx)
    ax = a["axis"]
    a["axis"] = int(ax.item() if hasattr(ax, "item") else ax)
    return a


def _trap_infer_for(cumulative):
    def infer(y, x=None, dx=None, axis=-1):
        nd = len(y.shape)
        if nd == 0:
            raise InvalidArgumentError("y must have at least one dimension, got a 0-D tensor")
        if x is not None and dx is not None:
            raise InvalidArgumentError("give either 'x' or 'dx', not both")
        ax = norm_axis(axis, nd)
        n = y.shape[ax]
        if x is not None:
            if len(x.shape) == 1:
                if x.shape[0] != n and DYN not in (n, x.shape[0]):
                    raise InvalidArgumentError(
                        f"1-D x has {x.shape[0]} points but y has {n} along axis {ax} "
                        f"(y shape {shp(y.shape)})")
            elif len(x.shape) != nd or any(a != b and DYN not in (a, b)
                                           for a, b in zip(x.shape, y.shape)):
                raise InvalidArgumentError(f"x with shape {shp(x.shape)} must be 1-D or have "
                                           f"y's shape {shp(y.shape)}")
        if not cumulative:
            return TensorType(tuple(d for i, d in enumerate(y.shape) if i != ax), y.dtype)
        out = list(y.shape)
        out[ax] = DYN if n == DYN else max(n - 1, 0)
        return TensorType(out, y.dtype)

    return infer


def _trap_terms(y, x, dx, axis):
    nd = y.ndim
    ax = axis % nd
    hi = [slice(None)] * nd
    lo = [slice(None)] * nd
    hi[ax] = slice(1, None)
    lo[ax] = slice(None, -1)
    if y.dtype in _LOW:
        y = y.astype(_F32)
    if x is None:
        d = y.dtype.type(1.0 if dx is None else dx)
    elif x.ndim == 1:
        d = np.diff(x.astype(y.dtype)).reshape([-1 if i == ax else 1 for i in range(nd)])
    else:
        d = np.diff(x.astype(y.dtype), axis=ax)
    return d * (y[tuple(hi)] + y[tuple(lo)]) * y.dtype.type(0.5), ax


def _trap_check(y, x, dx, axis):
    """The checks infer makes, on the arrays: the reference must not accept an x that
    does not fit y (an empty y would otherwise slip through)."""
    def tt(a):
        return None if a is None else TensorType(a.shape, _dt.from_numpy(a.dtype))

    _trap_infer_for(False)(tt(y), tt(x), dx, axis)


def _trapezoid_ref(y, x=None, dx=None, axis=-1):
    _trap_check(y, x, dx, axis)
    t, ax = _trap_terms(y, x, dx, axis)
    return np.add.reduce(t, axis=ax).astype(y.dtype, copy=False)


def _cum_trapezoid_ref(y, x=None, dx=None, axis=-1):
    _trap_check(y, x, dx, axis)
    t, ax = _trap_terms(y, x, dx, axis)
    return np.add.accumulate(t, axis=ax).astype(y.dtype, copy=False)


for _n, _ref, _cum in (("trapezoid", _trapezoid_ref, False),
                       ("cumulative_trapezoid", _cum_trapezoid_ref, True)):
    defop(_n, ("y", "x?"), {"dx": None, "axis": -1}, infer=_trap_infer_for(_cum),
          reference=_ref, canon=_trap_canon, promote="all", to_float=True, family="cumulative",
          doc=f"""{'Cumulative integral' if _cum else 'Integral'} of y along `axis` by the
trapezoidal rule, with sample points `x` (1-D, or y's shape) or spacing `dx`
(default 1; give one of x and dx).""")



del _n, _uf, _w, _ref, _cum  # loop names, not API
