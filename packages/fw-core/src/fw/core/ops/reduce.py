"""Reductions: sum, mean, max, … over `axis` (None = all) with `keepdim`, plus the
cumulative ops (cumsum, cummax, …), order statistics (median, quantile), and the
counting ops (bincount, histogram, histogramdd).

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
from fw.core.ops._infer import norm_axes, norm_axis, reduce, shp
from fw.core.ops._registry import defop

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
      doc="""Sum over `axis` (all axes when None).

Args:
    x (Tensor): input.
    axis (int|list|None): axes to reduce; None reduces all.
    dtype (str|DType|None): cast x to this dtype first; by default bool and integer
        inputs are summed in int64.
    keepdim (bool): keep reduced axes as size-1 dimensions.

Returns:
    Tensor: the sums.

Example:
    >>> fw.sum(fw.to_tensor([[1, 2], [3, 4]]), axis=0)   # [4, 6], int64
""")


def _nansum_ref(x, axis=None, dtype=None, keepdim=False):
    if x.dtype.kind in "fcV" or x.dtype in _LOW:
        x = np.where(np.isnan(x), x.dtype.type(0), x)
    return _sum_ref(x, axis, dtype, keepdim)


defop("nansum", ("x",), {"axis": None, "dtype": None, "keepdim": False}, infer=_sum_infer,
      reference=_nansum_ref, canon=_axis_canon, promote=None, family="reduce",
      doc="""Sum over `axis`, treating NaN as zero (see `sum` for the arguments).

Example:
    >>> fw.nansum(fw.to_tensor([1.0, float('nan'), 2.0]))   # 3.0
""")


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
unless `dtype` is given (x is cast to it first, which avoids overflow).

Example:
    >>> fw.prod(fw.to_tensor([[1., 2.], [3., 4.]]), axis=1)   # [2., 12.]
""")


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
computed in the default float dtype. A mean over zero elements is NaN.

Example:
    >>> fw.mean(fw.to_tensor([[1., 2.], [3., 4.]]), axis=0)   # [2., 3.]
""")


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
      doc="""Mean over `axis` ignoring NaN entries; all-NaN slices give NaN.

Example:
    >>> fw.nanmean(fw.to_tensor([1.0, float('nan'), 3.0]))   # 2.0
""")


# ---------------------------------------------------------------- max / min / amax / amin
def _extreme_infer(x, axis=None, keepdim=False):
    _nonempty(x, axis)
    return reduce(x, axis, keepdim)


def _extreme(name, ufunc):
    def ref(x, axis=None, keepdim=False):
        if x.size == 0:
            _check_nonempty_array(name, x, axis)
        if x.dtype in _LOW:
            return ufunc.reduce(x.astype(_F32), axis=_ax(x, axis),
                                keepdims=keepdim).astype(x.dtype)
        return ufunc.reduce(x, axis=_ax(x, axis), keepdims=keepdim)

    return ref


_MAX_DOC = """{what} over `axis` (all axes when None), keeping x's dtype; NaN propagates.

``{name}`` and ``{other}`` compute the same values and differ only in the gradient
(fw-autograd): {grad}.

Example:
    >>> fw.{name}(fw.to_tensor([[1., 5.], [7., 2.]]), axis=1)   # {ex}
"""
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
            return np.zeros((), dtype.np)
        r = fn(x, axis=axis, keepdims=keepdim)
        return r.astype(dtype.np)

    return ref


for _n, _fn, _w in (("argmax", np.argmax, "largest"), ("argmin", np.argmin, "smallest")):
    defop(_n, ("x",), {"axis": None, "keepdim": False, "dtype": "int64"}, infer=_arg_infer,
          reference=_arg(_n, _fn), canon=_arg_canon, promote=None, differentiable=False,
          family="reduce",
          doc=f"""Index of the {_w} element along `axis` (of the flattened tensor when
axis is None); the first one among ties; NaN counts as {_w}.

Args:
    x (Tensor): input.
    axis (int|None): the axis; None flattens x.
    keepdim (bool): keep the reduced axis (all axes when axis is None) with size 1.
    dtype (str|DType): int64 (default) or int32.

Example:
    >>> fw.{_n}(fw.to_tensor([[1., 9.], [7., 2.]]), axis=1)
""")


# ---------------------------------------------------------------- all / any / count_nonzero
def _bool_infer(x, axis=None, keepdim=False):
    return reduce(x, axis, keepdim).with_dtype(_dt.bool_)


def _all_ref(x, axis=None, keepdim=False):
    if x.dtype.kind != "b":
        x = x.astype(np.bool_)
    return np.logical_and.reduce(x, axis=_ax(x, axis), keepdims=keepdim)


def _any_ref(x, axis=None, keepdim=False):
    if x.dtype.kind != "b":
        x = x.astype(np.bool_)
    return np.logical_or.reduce(x, axis=_ax(x, axis), keepdims=keepdim)


defop("all", ("x",), {"axis": None, "keepdim": False}, infer=_bool_infer, reference=_all_ref,
      canon=_axis_canon, promote=None, differentiable=False, family="reduce",
      doc="""True where every element along `axis` is non-zero (True over zero elements).

Example:
    >>> fw.all(fw.to_tensor([[True, False], [True, True]]), axis=1)   # [False, True]
""")
defop("any", ("x",), {"axis": None, "keepdim": False}, infer=_bool_infer, reference=_any_ref,
      canon=_axis_canon, promote=None, differentiable=False, family="reduce",
      doc="""True where some element along `axis` is non-zero (False over zero elements).

Example:
    >>> fw.any(fw.to_tensor([[True, False], [False, False]]), axis=1)   # [True, False]
""")


def _count_nonzero_ref(x, axis=None, keepdim=False):
    return np.add.reduce(x != 0, axis=_ax(x, axis), keepdims=keepdim, dtype=_I64)


defop("count_nonzero", ("x",), {"axis": None, "keepdim": False},
      infer=lambda x, axis=None, keepdim=False: reduce(x, axis, keepdim).with_dtype(_dt.int64),
      reference=_count_nonzero_ref, canon=_axis_canon, promote=None, differentiable=False,
      family="reduce",
      doc="""Number of non-zero elements along `axis`, as int64.

Example:
    >>> fw.count_nonzero(fw.to_tensor([[0., 1.], [2., 3.]]), axis=1)   # [1, 2]
""")


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
the result is NaN (or Inf).

Example:
    >>> fw.{_n}(fw.to_tensor([1., 2., 3., 4.]))
""")


# ---------------------------------------------------------------- logsumexp
def _logsumexp_ref(x, axis=None, keepdim=False):
    x = _floated(x)
    ax = _ax(x, axis)
    a = _acc(x)
    # subtract the running max for stability; all -inf (or empty) slices give -inf
    m = np.asarray(np.maximum.reduce(a, axis=ax, keepdims=True, initial=-np.inf))
    m[~np.isfinite(m)] = 0
    d = np.asarray(a - m)
    np.exp(d, out=d)
    s = np.asarray(np.add.reduce(d, axis=ax, keepdims=keepdim))
    np.log(s, out=s)
    s += m if keepdim else m.reshape(s.shape)
    return s.astype(x.dtype) if s.dtype != x.dtype else s


defop("logsumexp", ("x",), {"axis": None, "keepdim": False}, infer=_mean_infer,
      reference=_logsumexp_ref, canon=_axis_canon, promote=None,
      family="reduce",
      doc="""log(sum(exp(x))) over `axis`, computed stably (the max is subtracted
first). A slice of zero elements gives -inf.

Example:
    >>> fw.logsumexp(fw.to_tensor([[-1.5, 0., 2.], [3., 1.2, -2.4]]), 1)
""")


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
      reference=_cumsum_ref, canon=_cum_canon, promote=None, inplace=True, family="reduce",
      doc="""Cumulative sum along `axis` (of the flattened tensor when axis is None).
`dtype` casts x first; bool input accumulates in int64.

Example:
    >>> fw.cumsum(fw.to_tensor([[1, 2], [3, 4]]), axis=0)   # [[1, 2], [4, 6]]
""")


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
      reference=_cumprod_ref, canon=_cum_canon, promote=None, inplace=True, family="reduce",
      doc="""Cumulative product along `dim` (of the flattened tensor when dim is None).

Example:
    >>> fw.cumprod(fw.to_tensor([1., 2., 3.]), dim=0)   # [1., 2., 6.]
""")


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
      family="reduce",
      doc="""log(cumsum(exp(x))) along `axis` (flattened when None), computed stably.

Example:
    >>> fw.logcumsumexp(fw.to_tensor([0., 0., 0.]))   # [0., 0.6931, 1.0986]
""")


def _cumext_canon(attrs):
    a = _cum_canon(attrs)
    d = _dt.convert_dtype(a["dtype"])
    if d not in (_dt.int32, _dt.int64):
        raise InvalidTypeError(f"'dtype' (of the indices) must be int32 or int64, got {d.name}")
    if d is not a["dtype"]:
        a = dict(a)
        a["dtype"] = d
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
            idx = np.zeros(a.shape, dtype.np)
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
          family="reduce",
          doc=f"""Cumulative {_w} along `axis` (of the flattened tensor when None) and the
index where each running {_w} was reached (the later index among ties; NaN
propagates). `dtype` is the indices' dtype, int64 or int32.

Returns:
    (Tensor, Tensor): values (x's dtype) and indices.

Example:
    >>> v, i = fw.{_n}(fw.to_tensor([-1, 5, 0, 7]))
""")


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
          promote=None, family="reduce",
          doc=f"""The q-th quantile(s) of x along `axis` (all elements when None){
          ', ignoring NaN' if _nan else ''}.

Args:
    x (Tensor): real input; integer input gives the default float dtype.
    q (float|list|Tensor): quantile(s) in [0, 1]; a list (or 1-D tensor) adds a
        leading output dimension of its length.
    axis (int|list|None), keepdim (bool): as in the other reductions.
    interpolation (str): 'linear', 'lower', 'higher', 'midpoint' or 'nearest'
        (halves round up, as Paddle's round does).

Returns:
    Tensor. {'All-NaN slices give NaN.' if _nan else 'A slice with a NaN gives NaN.'}

Example:
    >>> fw.{_n}(fw.to_tensor([[0., 1.], [2., 3.]]), q=0.5, axis=1)   # [0.5, 2.5]
""")


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
    out = [d if d != DYN else (xs[len(xs) - len(ts) + i]) for i, d in enumerate(ts)]
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
leading extra axes and axes where target has size 1 are summed.

Example:
    >>> fw.reduce_as(fw.to_tensor([[1, 2], [3, 4]]), fw.to_tensor([0, 0]))   # [4, 6]
""")


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


def _trap_check(x, dx):
    if x is not None and dx is not None:
        raise InvalidArgumentError("give either 'x' or 'dx', not both")


def _trapezoid_ref(y, x=None, dx=None, axis=-1):
    _trap_check(x, dx)
    t, ax = _trap_terms(y, x, dx, axis)
    return np.add.reduce(t, axis=ax).astype(y.dtype, copy=False)


def _cum_trapezoid_ref(y, x=None, dx=None, axis=-1):
    _trap_check(x, dx)
    t, ax = _trap_terms(y, x, dx, axis)
    return np.add.accumulate(t, axis=ax).astype(y.dtype, copy=False)


for _n, _ref, _cum in (("trapezoid", _trapezoid_ref, False),
                       ("cumulative_trapezoid", _cum_trapezoid_ref, True)):
    defop(_n, ("y", "x?"), {"dx": None, "axis": -1}, infer=_trap_infer_for(_cum),
          reference=_ref, canon=_trap_canon, promote="all", to_float=True, family="reduce",
          doc=f"""{'Cumulative integral' if _cum else 'Integral'} of y along `axis` by the
trapezoidal rule, with sample points `x` (1-D, or y's shape) or spacing `dx`
(default 1; give one of x and dx).

Example:
    >>> fw.{_n}(fw.to_tensor([4., 5., 6.]), dx=2.)
""")


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
    if x.size and int(np.minimum.reduce(x)) < 0:
        raise InvalidArgumentError("bincount: x must hold non-negative integers, got "
                                   f"{int(np.minimum.reduce(x))}")
    xi = x.astype(np.intp)
    if weights is None:
        return np.bincount(xi, minlength=minlength).astype(_I64)
    out = _bincount_dtype(_dt.from_numpy(weights.dtype)).np
    w = weights.astype(_F64) if weights.dtype.kind != "c" else weights
    return np.bincount(xi, weights=w, minlength=minlength).astype(out)


defop("bincount", ("x", "weights?"), {"minlength": 0}, infer=_bincount_infer,
      reference=_bincount_ref, canon=_bincount_canon, promote=None, differentiable=False,
      family="reduce",
      doc="""Count each non-negative integer value of 1-D x (summing `weights` instead
of 1 when given). The result has max(x) + 1 entries, at least `minlength`;
int64 without weights, the weights' dtype with float weights.

Example:
    >>> fw.bincount(fw.to_tensor([1, 2, 1, 4, 5]))   # [0, 2, 1, 0, 1, 1]
""")


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
                     promote=None, differentiable=False, family="reduce", api=False,
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
      promote=None, differentiable=False, family="reduce",
      doc="""The bins + 1 edges `histogram` uses for the same arguments.

Example:
    >>> fw.histogram_bin_edges(fw.to_tensor([0., 1., 2.]), bins=2)   # [0., 1., 2.]
""")


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


del _n, _uf, _other, _g, _ex, _fn, _w, _ref, _what, _nan, _cum  # loop names, not API
