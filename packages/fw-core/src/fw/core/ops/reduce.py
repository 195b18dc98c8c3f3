"""Reductions: sum, mean, max, … over `axis` (None = all) with `keepdim`, and
reduce_as. The cumulative ops (cumsum, cummax, …, diff, trapezoid) are in
``cumulative.py``; order statistics (median, quantile) and the counting ops
(bincount, histogram, histogramdd) in ``statistics.py``. Both are families of
their own and share the helpers and the dtype rules here.

Dtype rules (Paddle 3.x):

- ``sum``/``nansum`` of bool or integer tensors accumulate in int64 unless
  ``dtype`` is given; ``prod`` keeps the input dtype;
- ``mean``, ``nanmean``, ``std``, ``var``, ``logsumexp`` and ``logcumsumexp``
  compute integer input in the default float dtype;
- ``max``/``min``/``amax``/``amin`` keep the dtype; ``argmax``/``argmin`` give
  int64 (or int32 with ``dtype``); ``all``/``any`` give bool; ``count_nonzero``
  gives int64;
- float16/bfloat16 reductions accumulate in float32 and round once at the end
  (as Paddle's and PyTorch's kernels do).

Kernels call the ufunc reductions (``np.add.reduce`` …) directly: they are the
cheapest NumPy entry points and also run on CuPy arrays. Axis canonicalisation
returns the attribute dict untouched in the common case (axis None or an int)
because `canon` runs on every eager call.
"""

from __future__ import annotations

import numpy as np

from fw.core import dtypes as _dt
from fw.core.errors import InvalidArgumentError, InvalidTypeError
from fw.core.ir.types import DYN, TensorType
from fw.core.ops._infer import norm_axes, reduce, shp
from fw.core.ops._registry import defop
from fw.core.ops._xp import xp_of

_I64 = np.dtype(np.int64)
_F32 = np.dtype(np.float32)
_F64 = np.dtype(np.float64)
_LOW = frozenset({np.dtype(np.float16), _dt.bfloat16.np})
_DType = _dt.DType
_int_types = (int, np.integer)


# ---------------------------------------------------------------- canon and shared helpers
def _axis_canon(attrs):
    """axis: None / int stay as they are; a list, tuple or tensor becomes a tuple of
    ints (an empty one means all axes); dtype spellings become a DType."""
    ax = attrs["axis"]
    d = attrs.get("dtype")
    if (ax is None or type(ax) is int) and (d is None or type(d) is _DType):
        return attrs  # the hot path: nothing to normalise
    a = dict(attrs)
    if ax is not None:
        if isinstance(ax, _int_types):
            ax = int(ax)
        else:
            if hasattr(ax, "tolist"):
                ax = ax.tolist()
            ax = (int(ax),) if isinstance(ax, _int_types) else tuple(int(v) for v in ax)
            if len(ax) == 0:
                ax = None
        a["axis"] = ax
    if d is not None:
        a["dtype"] = _dt.convert_dtype(d)
    return a


def _ax(x, axis):
    """The axis argument for a NumPy reduction: Paddle lets a 0-D tensor be reduced
    over axis 0/-1, NumPy does not."""
    return None if x.ndim == 0 else axis


def _count(x, axis) -> int:
    """Number of elements each output of a reduction over `axis` combines."""
    if axis is None or x.ndim == 0:
        return x.size
    if type(axis) is int:
        return x.shape[axis]
    n = 1
    for a in axis:
        n *= x.shape[a]
    return n


def _acc(x):
    """x in the dtype to accumulate in (float32 for float16/bfloat16)."""
    return x.astype(_F32) if x.dtype in _LOW else x


def _nonempty(x, axis):
    """Reject a reduction without identity (max, argmax, median …) over a zero-size
    static dimension; dynamic dims are checked by the kernel."""
    axes = norm_axes(axis, len(x.shape))
    if not x.shape:
        return
    if 0 in [x.shape[a] for a in axes]:
        raise InvalidArgumentError(f"cannot reduce x of shape {shp(x.shape)} over axis {axis}: "
                                   f"it has zero elements there and the reduction has no "
                                   f"identity value")


def _check_nonempty_array(name, x, axis):
    if x.size == 0 and (axis is None or x.ndim == 0 or _count(x, axis) == 0):
        raise InvalidArgumentError(f"{name}: cannot reduce x of shape {list(x.shape)} over "
                                   f"axis {axis}: it has zero elements there and the "
                                   f"reduction has no identity value")


def _float_of(d: _DType) -> _DType:
    return d if d.kind >= _dt._FLOAT else _dt.get_default_dtype()


def _to_last(x, axis):
    """x with the reduced axes moved to the end and merged into one, the shape of the
    kept axes, and the keepdim shape."""
    nd = x.ndim
    axes = tuple(range(nd)) if (axis is None or nd == 0) else norm_axes(axis, nd)
    keep = [i for i in range(nd) if i not in axes]
    kept = tuple(x.shape[i] for i in keep)
    n = 1
    for a in axes:
        n *= x.shape[a]
    y = np.transpose(x, keep + list(axes)).reshape(kept + (n,))
    kd = tuple(1 if i in axes else s for i, s in enumerate(x.shape))
    return y, kept, kd


def _reduce_type(x, axis, keepdim, dtype):
    return reduce(x, axis, keepdim).with_dtype(dtype)


# ---------------------------------------------------------------- sum / nansum / prod
def _sum_dtype(d: _DType) -> _DType:
    # Paddle: integer and bool sums accumulate in int64
    return _dt.int64 if d.kind <= _dt._INT else d


def _sum_infer(x, axis=None, dtype=None, keepdim=False):
    return _reduce_type(x, axis, keepdim, dtype if dtype is not None else _sum_dtype(x.dtype))


def _sum_ref(x, axis=None, dtype=None, keepdim=False):
    if dtype is not None:
        d = dtype.np
    else:
        d = _I64 if x.dtype.kind in "biu" else x.dtype
    if x.dtype != d:
        x = x.astype(d)
    if d in _LOW:
        return np.add.reduce(x.astype(_F32), axis=_ax(x, axis), keepdims=keepdim).astype(d)
    return np.add.reduce(x, axis=_ax(x, axis), dtype=d, keepdims=keepdim)


defop("sum", ("x",), {"axis": None, "dtype": None, "keepdim": False}, infer=_sum_infer,
      reference=_sum_ref, canon=_axis_canon, promote=None, family="reduce",
      doc="""Sum over `axis` (all axes when None).""")


def _nansum_ref(x, axis=None, dtype=None, keepdim=False):
    if x.dtype.kind in "fcV" or x.dtype in _LOW:
        x = np.where(np.isnan(x), x.dtype.type(0), x)
    return _sum_ref(x, axis, dtype, keepdim)


defop("nansum", ("x",), {"axis": None, "dtype": None, "keepdim": False}, infer=_sum_infer,
      reference=_nansum_ref, canon=_axis_canon, promote=None, family="reduce",
      doc="""Sum over `axis`, treating NaN as zero (see `sum` for the arguments).""")


def _prod_dtype(d: _DType) -> _DType:
    return _dt.int64 if d is _dt.bool_ else d


def _prod_infer(x, axis=None, keepdim=False, dtype=None):
    return _reduce_type(x, axis, keepdim, dtype if dtype is not None else _prod_dtype(x.dtype))


def _prod_ref(x, axis=None, keepdim=False, dtype=None):
    d = dtype.np if dtype is not None else (_I64 if x.dtype.kind == "b" else x.dtype)
    if x.dtype != d:
        x = x.astype(d)
    if d in _LOW:
        return np.multiply.reduce(x.astype(_F32), axis=_ax(x, axis), keepdims=keepdim).astype(d)
    return np.multiply.reduce(x, axis=_ax(x, axis), dtype=d, keepdims=keepdim)


defop("prod", ("x",), {"axis": None, "keepdim": False, "dtype": None}, infer=_prod_infer,
      reference=_prod_ref, canon=_axis_canon, promote=None, family="reduce",
      doc="""Product over `axis` (all axes when None); the result keeps x's dtype
unless `dtype` is given (x is cast to it first, which avoids overflow).""")


# ---------------------------------------------------------------- mean / nanmean
def _floated(x):
    """Integer/bool input of a float reduction, in the default float dtype (done in the
    kernel rather than by dispatch promotion: that costs a promotion pass per call)."""
    k = x.dtype.kind
    if k == "f" or k == "c" or x.dtype in _LOW:
        return x
    return x.astype(_dt.get_default_dtype().np)


def _mean_infer(x, axis=None, keepdim=False):
    return reduce(x, axis, keepdim).with_dtype(_float_of(x.dtype))


def _mean_ref(x, axis=None, keepdim=False):
    # sum / count, not np.mean: an empty reduction is NaN without a RuntimeWarning
    x = _floated(x)
    ax = None if x.ndim == 0 else axis
    if x.dtype in _LOW:
        s = np.add.reduce(x.astype(_F32), axis=ax, keepdims=keepdim)
        return np.true_divide(s, _count(x, axis)).astype(x.dtype)
    s = np.add.reduce(x, axis=ax, keepdims=keepdim)
    return np.true_divide(s, _count(x, axis), dtype=s.dtype)


defop("mean", ("x",), {"axis": None, "keepdim": False}, infer=_mean_infer, reference=_mean_ref,
      canon=_axis_canon, promote=None, family="reduce",
      doc="""Arithmetic mean over `axis` (all axes when None); integer input is
computed in the default float dtype. A mean over zero elements is NaN.""")


def _nanmean_ref(x, axis=None, keepdim=False):
    x = _floated(x)
    ax = _ax(x, axis)
    a = _acc(x)
    nan = np.isnan(a)
    s = np.add.reduce(np.where(nan, a.dtype.type(0), a), axis=ax, keepdims=keepdim)
    n = np.add.reduce(~nan, axis=ax, keepdims=keepdim, dtype=s.real.dtype)
    r = np.true_divide(s, n)
    return r.astype(x.dtype) if r.dtype != x.dtype else r


defop("nanmean", ("x",), {"axis": None, "keepdim": False}, infer=_mean_infer,
      reference=_nanmean_ref, canon=_axis_canon, promote=None,
      family="reduce",
      doc="""Mean over `axis` ignoring NaN entries; all-NaN slices give NaN.""")


# ---------------------------------------------------------------- max / min / amax / amin
def _extreme_infer(x, axis=None, keepdim=False):
    _nonempty(x, axis)
    return reduce(x, axis, keepdim)


def _extreme(name, ufunc):
    # np.max/np.min, not ufunc.reduce: they dispatch to a device library's own
    # reduction (CuPy has no maximum.reduce)
    red = np.max if ufunc is np.maximum else np.min

    def ref(x, axis=None, keepdim=False):
        if x.size == 0:
            _check_nonempty_array(name, x, axis)
        if x.dtype in _LOW:
            return red(x.astype(_F32), axis=_ax(x, axis), keepdims=keepdim).astype(x.dtype)
        return red(x, axis=_ax(x, axis), keepdims=keepdim)

    return ref


_MAX_DOC = """{what} over `axis` (all axes when None), keeping x's dtype; NaN propagates.

``{name}`` and ``{other}`` compute the same values and differ only in the gradient
(fw-autograd): {grad}."""
_G_MAX = "max/min send the whole gradient to each tied element"
_G_AMAX = "amax/amin split the gradient evenly among tied elements"
for _n, _uf, _other, _g, _ex in (("max", np.maximum, "amax", _G_MAX, "[5., 7.]"),
                                 ("min", np.minimum, "amin", _G_MAX, "[1., 2.]"),
                                 ("amax", np.maximum, "max", _G_AMAX, "[5., 7.]"),
                                 ("amin", np.minimum, "min", _G_AMAX, "[1., 2.]")):
    defop(_n, ("x",), {"axis": None, "keepdim": False}, infer=_extreme_infer,
          reference=_extreme(_n, _uf), canon=_axis_canon, promote=None, family="reduce",
          doc=_MAX_DOC.format(what="Maximum" if "max" in _n else "Minimum", name=_n,
                              other=_other, grad=_g, ex=_ex))


# ---------------------------------------------------------------- argmax / argmin
def _arg_canon(attrs):
    ax = attrs["axis"]
    d = attrs["dtype"]
    if (ax is None or type(ax) is int) and type(d) is _DType:
        return attrs
    a = dict(attrs)
    if ax is not None:
        if hasattr(ax, "item"):
            ax = ax.item()
        if not isinstance(ax, _int_types) or isinstance(ax, bool):
            raise InvalidTypeError(f"'axis' must be an int or None, got {type(ax).__name__}")
        a["axis"] = int(ax)
    d = _dt.convert_dtype(d)
    if d not in (_dt.int32, _dt.int64):
        raise InvalidTypeError(f"'dtype' must be int32 or int64, got {d.name}")
    a["dtype"] = d
    return a


def _arg_infer(x, axis=None, keepdim=False, dtype=_dt.int64):
    _nonempty(x, axis)
    if axis is None:
        shape = (1,) * len(x.shape) if keepdim else ()
        return TensorType(shape, dtype)
    return reduce(x, axis, keepdim).with_dtype(dtype)


def _arg(name, fn):
    def ref(x, axis=None, keepdim=False, dtype=_dt.int64):
        if x.size == 0:
            _check_nonempty_array(name, x, axis)
        if x.dtype in _LOW:
            x = x.astype(_F32)
        if x.ndim == 0:
            return np.zeros_like(x, order="C", dtype=dtype.np)
        r = fn(x, axis=axis, keepdims=keepdim)
        return r.astype(dtype.np)

    return ref


for _n, _fn, _w in (("argmax", np.argmax, "largest"), ("argmin", np.argmin, "smallest")):
    defop(_n, ("x",), {"axis": None, "keepdim": False, "dtype": "int64"}, infer=_arg_infer,
          reference=_arg(_n, _fn), canon=_arg_canon, promote=None, differentiable=False,
          family="reduce",
          doc=f"""Index of the {_w} element along `axis` (of the flattened tensor when
axis is None); the first one among ties; NaN counts as {_w}.""")


# ---------------------------------------------------------------- all / any / count_nonzero
def _bool_infer(x, axis=None, keepdim=False):
    return reduce(x, axis, keepdim).with_dtype(_dt.bool_)


def _all_ref(x, axis=None, keepdim=False):
    if x.dtype.kind != "b":
        x = x.astype(np.bool_)
    return np.all(x, axis=_ax(x, axis), keepdims=keepdim)  # (CuPy has no logical_and.reduce)


def _any_ref(x, axis=None, keepdim=False):
    if x.dtype.kind != "b":
        x = x.astype(np.bool_)
    return np.any(x, axis=_ax(x, axis), keepdims=keepdim)


defop("all", ("x",), {"axis": None, "keepdim": False}, infer=_bool_infer, reference=_all_ref,
      canon=_axis_canon, promote=None, differentiable=False, family="reduce",
      doc="""True where every element along `axis` is non-zero (True over zero elements).""")
defop("any", ("x",), {"axis": None, "keepdim": False}, infer=_bool_infer, reference=_any_ref,
      canon=_axis_canon, promote=None, differentiable=False, family="reduce",
      doc="""True where some element along `axis` is non-zero (False over zero elements).""")


def _count_nonzero_ref(x, axis=None, keepdim=False):
    return np.add.reduce(x != 0, axis=_ax(x, axis), keepdims=keepdim, dtype=_I64)


defop("count_nonzero", ("x",), {"axis": None, "keepdim": False},
      infer=lambda x, axis=None, keepdim=False: reduce(x, axis, keepdim).with_dtype(_dt.int64),
      reference=_count_nonzero_ref, canon=_axis_canon, promote=None, differentiable=False,
      family="reduce",
      doc="""Number of non-zero elements along `axis`, as int64.""")


# ---------------------------------------------------------------- std / var
def _var_infer(x, axis=None, unbiased=True, keepdim=False):
    from fw.core.ops._infer import real_of

    return reduce(x, axis, keepdim).with_dtype(real_of(_float_of(x.dtype)))


def _var_ref(x, axis=None, unbiased=True, keepdim=False):
    x = _floated(x)
    ax = _ax(x, axis)
    a = _acc(x)
    n = _count(x, axis)
    m = np.true_divide(np.add.reduce(a, axis=ax, keepdims=True), a.dtype.type(n))
    d = a - m
    sq = (d * np.conj(d)).real if d.dtype.kind == "c" else d * d
    den = n - 1 if unbiased else n
    r = np.true_divide(np.add.reduce(sq, axis=ax, keepdims=keepdim), sq.dtype.type(max(den, 0)))
    out = x.real.dtype if x.dtype.kind == "c" else x.dtype
    return r.astype(out) if r.dtype != out else r


def _std_ref(x, axis=None, unbiased=True, keepdim=False):
    return np.sqrt(_var_ref(x, axis, unbiased, keepdim))


for _n, _ref, _what in (("var", _var_ref, "Variance"), ("std", _std_ref, "Standard deviation")):
    defop(_n, ("x",), {"axis": None, "unbiased": True, "keepdim": False}, infer=_var_infer,
          reference=_ref, canon=_axis_canon, promote=None, family="reduce",
          doc=f"""{_what} over `axis`; `unbiased` divides by N - 1 (Bessel's correction),
else by N. Integer input is computed in the default float dtype; with N - 1 = 0
the result is NaN (or Inf).""")


# ---------------------------------------------------------------- logsumexp
def _logsumexp_ref(x, axis=None, keepdim=False):
    x = _floated(x)
    ax = _ax(x, axis)
    a = _acc(x)
    # subtract the running max for stability; all -inf (or empty) slices give -inf
    # (np.max and np.sum, not ufunc.reduce with initial=: they dispatch to a device's)
    xp = xp_of(a)
    if a.size:
        m = xp.asarray(np.max(a, axis=ax, keepdims=True))
    else:
        m = xp.asarray(np.zeros_like(np.sum(a, axis=ax, keepdims=True)))
    m[~np.isfinite(m)] = 0
    d = xp.asarray(a - m)
    np.exp(d, out=d)
    s = xp.asarray(np.sum(d, axis=ax, keepdims=keepdim))
    np.log(s, out=s)
    s += m if keepdim else m.reshape(s.shape)
    return s.astype(x.dtype) if s.dtype != x.dtype else s


defop("logsumexp", ("x",), {"axis": None, "keepdim": False}, infer=_mean_infer,
      reference=_logsumexp_ref, canon=_axis_canon, promote=None,
      family="reduce",
      doc="""log(sum(exp(x))) over `axis`, computed stably (the max is subtracted
first). A slice of zero elements gives -inf.""")


# ---------------------------------------------------------------- reduce_as
def _reduce_as_axes(xs, ts):
    lead = len(xs) - len(ts)
    axes = list(range(lead))
    for i, d in enumerate(ts):
        if d == 1 and xs[lead + i] != 1:
            axes.append(lead + i)
    return tuple(axes)


def _reduce_as_infer(x, target):
    xs, ts = x.shape, target.shape
    if x.dtype is _dt.bool_:
        raise InvalidTypeError("x must be a numeric tensor, got bool")
    ok = len(ts) <= len(xs)
    if ok:
        lead = len(xs) - len(ts)
        for i, d in enumerate(ts):
            e = xs[lead + i]
            if not (d == e or d == 1 or d == DYN or e == DYN):
                ok = False
    if not ok:
        raise InvalidArgumentError(f"target's shape {shp(ts)} must broadcast to x's shape "
                                   f"{shp(xs)} (x is summed down to target's shape)")
    # a dynamic target dim is 1 (x's dim is summed) or x's dim: only a dim of 1 in x
    # settles it, otherwise the result is dynamic too
    out = [d if d != DYN else (1 if xs[len(xs) - len(ts) + i] == 1 else DYN)
           for i, d in enumerate(ts)]
    return TensorType(out, x.dtype)


def _reduce_as_ref(x, target):
    axes = _reduce_as_axes(x.shape, target.shape)
    if not axes:
        return x.copy()
    r = np.add.reduce(_acc(x), axis=axes, keepdims=True, dtype=None if x.dtype in _LOW
                      else x.dtype)
    return r.reshape(target.shape).astype(x.dtype, copy=False)


defop("reduce_as", ("x", "target"), infer=_reduce_as_infer, reference=_reduce_as_ref,
      promote=None, family="reduce",
      doc="""Sum x down to target's shape (the inverse of broadcasting target to x):
leading extra axes and axes where target has size 1 are summed.""")



del _n, _uf, _other, _g, _ex, _fn, _w, _ref, _what  # loop names, not API
