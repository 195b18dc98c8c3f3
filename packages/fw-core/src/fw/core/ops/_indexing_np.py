"""NumPy reference kernels of the indexing ops (fw.core.ops.indexing) and the
checks they share with the ops' infer rules (index ranges, value dtypes, slices,
diagonal axes). The ops themselves are declared in indexing.py, whose family they
keep; the encoding of ``x[key]`` keys is in `_index_key`.
"""

from __future__ import annotations

import numpy as np

from fw.core import dtypes as _dt
from fw.core.errors import InvalidArgumentError, InvalidTypeError
from fw.core.ir.types import DYN
from fw.core.ops import _index_key as _ik
from fw.core.ops._infer import broadcast_shapes, norm_axis, require_int, shp
from fw.core.ops._xp import ufunc_at

_ndarray = np.ndarray


def _check_range(idx, n, op, arg, what):
    """Raise if integer array `idx` holds values outside [-n, n)."""
    if idx.size == 0:
        return
    lo, hi = int(idx.min()), int(idx.max())
    if lo < -n or hi >= n:
        rng = f"valid range [{-n}, {n - 1}]" if n else "it is empty"
        raise InvalidArgumentError(f"{op}: '{arg}' holds values in [{lo}, {hi}] but {what} has "
                                   f"size {n} ({rng})")


def _as_dtype(v, dtype, op, arg):
    """Array `v` cast to NumPy `dtype` (complex -> real is refused, not truncated)."""
    if v.dtype == dtype:
        return v
    if v.dtype.kind == "c" and dtype.kind != "c":
        raise InvalidTypeError(f"{op}: '{arg}' is complex ({v.dtype}) but x is real ({dtype}); "
                               f"take .real or .imag explicitly")
    return v.astype(dtype)


def _int_input(t, arg):
    require_int(t, arg)


def _axis(a, nd, arg="axis"):
    return norm_axis(a, nd, arg)


def _getitem_ref(x, indices, index=()):
    key = _ik.numpy_key(index, indices)
    try:
        r = x[key]
    except IndexError as e:
        raise _ik.describe_range_error("getitem", x.shape, index, indices, e) from None
    if type(r) is not _ndarray and not hasattr(r, "shape"):
        r = np.asarray(r)
    elif isinstance(r, np.generic):
        r = x[key + (Ellipsis,)]  # a 0-D view, like every other basic index
    return r


def _setitem_ref(x, value, indices, index=()):
    key = _ik.numpy_key(index, indices)
    out = x.copy()
    v = _as_dtype(value, x.dtype, "setitem", "value")
    try:
        out[key] = v
    except IndexError as e:
        raise _ik.describe_range_error("setitem", x.shape, index, indices, e) from None
    return out


def _gather_ref(x, index, axis=0):
    _int_input(_T(index), "index")
    a = _axis(axis, x.ndim)
    _check_range(index, x.shape[a], "gather", "index", f"axis {a} of x")
    return np.take(x, index, axis=a)


def _nd_key(x, index, op):
    k = index.shape[-1]
    for i in range(k):
        _check_range(index[..., i], x.shape[i], op, "index", f"axis {i} of x")
    return tuple(index[..., i] for i in range(k))


class _T:
    """A TensorType view of an array, to reuse infer checks inside kernels."""

    __slots__ = ("shape", "dtype")

    def __init__(self, a):
        self.shape = tuple(a.shape)
        self.dtype = _dt.from_numpy(a.dtype)


def _along_shapes(xs, ishape, axis, broadcast, op_arg="indices"):
    nd = len(xs)
    if len(ishape) != nd:
        raise InvalidArgumentError(f"'{op_arg}' of shape {shp(ishape)} must have the same "
                                   f"number of dimensions as x of shape {shp(xs)}")
    a = _axis(axis, nd)
    if broadcast:
        xo = tuple(xs[:a]) + (1,) + tuple(xs[a + 1:])
        io = tuple(ishape[:a]) + (1,) + tuple(ishape[a + 1:])
        b = list(broadcast_shapes(xo, io, names=("x", op_arg)))
        b[a] = ishape[a]
        return a, tuple(b)
    for d in range(nd):
        if d != a and ishape[d] != DYN and xs[d] != DYN and ishape[d] > xs[d]:
            raise InvalidArgumentError(f"'{op_arg}' of shape {shp(ishape)} is larger than x "
                                       f"of shape {shp(xs)} at axis {d}")
    return a, tuple(ishape)


def _along_prepare(arr, indices, axis, broadcast, op):
    _int_input(_T(indices), "indices")
    a, out = _along_shapes(arr.shape, indices.shape, axis, broadcast)
    _check_range(indices, arr.shape[a], op, "indices", f"axis {a} of arr")
    if broadcast:
        shp_x = list(out)
        shp_x[a] = arr.shape[a]
        return a, np.broadcast_to(arr, shp_x), np.broadcast_to(indices, out)
    sl = tuple(slice(0, n) if d != a else slice(None) for d, n in enumerate(indices.shape))
    return a, arr[sl], indices


def _take_along_ref(arr, indices, axis=0, broadcast=True):
    a, x, idx = _along_prepare(arr, indices, axis, broadcast, "take_along_axis")
    return np.take_along_axis(x, idx, axis=a)


def _take_ref(x, index, mode="raise"):
    _int_input(_T(index), "index")
    flat = x.reshape(-1)
    n = flat.size
    if n == 0 and index.size:
        raise InvalidArgumentError("take: x is empty, so no index is valid")
    if mode == "raise":
        _check_range(index, n, "take", "index", "the flattened x")
    elif mode == "wrap":
        index = np.mod(index, n) if n else index
    else:
        index = np.clip(index, 0, max(n - 1, 0))
    return flat[index]


def _same_shape(got, want, arg):
    if len(got) != len(want) or any(a != b and DYN not in (a, b) for a, b in zip(got, want)):
        raise InvalidArgumentError(f"'{arg}' must have shape {shp(want)}, got {shp(got)}")


def _identity(reduce, dtype):
    if reduce == "mul":
        return 1
    if reduce in ("add", "mean"):
        return 0
    big = reduce == "amin"
    if dtype.kind == "b":
        return big
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return info.max if big else info.min
    return np.inf if big else -np.inf


def _put_along_ref(arr, indices, values, axis=0, reduce="assign", include_self=True,
                   broadcast=True):
    a, _, idx = _along_prepare(arr, indices, axis, broadcast, "put_along_axis")
    n = arr.shape[a]
    idx = np.where(idx < 0, idx + n, idx)
    vals = _as_dtype(values, arr.dtype, "put_along_axis", "values")
    if broadcast or vals.ndim == 0:
        vals = np.broadcast_to(vals, idx.shape)
    else:
        vals = vals[tuple(slice(0, k) for k in idx.shape)]
    # full index tuple: position along every other axis, idx along `axis`
    grids = list(np.ogrid[tuple(slice(0, k) for k in idx.shape)]) if idx.ndim else []
    if grids:
        grids[a] = idx
    key = tuple(grids)
    out = arr.copy()
    if reduce == "assign":
        out[key] = vals
        return out
    if reduce == "mean":
        cnt = np.zeros_like(arr, order="C", dtype=np.int64)
        ufunc_at(np.add, cnt, key, 1)
        hit = cnt > 0
        acc = out.astype(np.float64 if arr.dtype.kind != "c" else np.complex128)
        if not include_self:
            acc[hit] = 0
        ufunc_at(np.add, acc, key, vals)
        div = cnt + (1 if include_self else 0)
        mean = acc[hit] / div[hit]
        if arr.dtype.kind in "iub":  # integer division, as Paddle's kernel does
            mean = np.trunc(mean)
        out[hit] = mean.astype(arr.dtype)
        return out
    if not include_self:
        out[key] = _identity(reduce, arr.dtype)
    ufunc = {"add": np.add, "mul": np.multiply, "amin": np.minimum, "amax": np.maximum}[reduce]
    ufunc_at(ufunc, out, key, vals)
    return out



def _mask_array(mask):
    if mask.dtype != np.bool_:
        raise InvalidTypeError(f"'mask' must be a bool tensor, got {mask.dtype}")


def _masked_fill_ref(x, mask, value):
    _mask_array(mask)
    return np.where(mask, _as_dtype(value, x.dtype, "masked_fill", "value"), x)


def _masked_select_ref(x, mask):
    _mask_array(mask)
    xb, mb = np.broadcast_arrays(x, mask)
    return xb[mb]


def _slices(shape, axes, starts, ends, strides):
    """Per-axis (start, stop, step) with Paddle's clamping, and the result dims."""
    n = len(axes)
    if not (len(starts) == len(ends) == len(strides) == n):
        raise InvalidArgumentError(f"'axes' {list(axes)}, 'starts' {list(starts)}, 'ends' "
                                   f"{list(ends)} and 'strides' {list(strides)} must have the "
                                   f"same length")
    nd = len(shape)
    seen = set()
    out = list(shape)
    sl = [slice(None)] * nd
    for ax, s, e, st in zip(axes, starts, ends, strides):
        a = norm_axis(ax, nd, "axes")
        if a in seen:
            raise InvalidArgumentError(f"'axes' {list(axes)} repeats axis {a}")
        seen.add(a)
        if st == 0:
            raise InvalidArgumentError("'strides' must not contain 0")
        d = shape[a]
        if d == DYN:
            out[a] = DYN
            sl[a] = None
            continue
        s = s + d if s < 0 else s
        e = e + d if e < 0 else e
        if st > 0:
            s, e = min(max(s, 0), d), min(max(e, 0), d)
        else:
            s, e = min(max(s, -1), d - 1), min(max(e, -1), d - 1)
        r = range(s, e, st)
        out[a] = len(r)
        sl[a] = slice(s, e if e >= 0 else None, st) if len(r) else slice(0, 0)
    return out, sl


def _runtime_slices(shape, axes, starts, ends, strides):
    out, sl = _slices(shape, axes, starts, ends, strides)
    return tuple(sl)


def _strided_slice_ref(x, axes=(), starts=(), ends=(), strides=()):
    return x[_runtime_slices(x.shape, axes, starts, ends, strides)]


def _diag_axes(nd, axis1, axis2):
    if nd < 2:
        raise InvalidArgumentError(f"x must have at least 2 dimensions, got {nd}")
    a1, b1 = norm_axis(axis1, nd, "axis1"), norm_axis(axis2, nd, "axis2")
    if a1 == b1:
        raise InvalidArgumentError(f"'axis1' and 'axis2' must differ, both are {a1}")
    return a1, b1


def _diag_len(d1, d2, offset):
    if DYN in (d1, d2):
        return DYN
    return max(0, min(d1, d2 - offset) if offset >= 0 else min(d1 + offset, d2))


def _diag_shape(shape, offset, axis1, axis2):
    a1, a2 = _diag_axes(len(shape), axis1, axis2)
    rest = [d for i, d in enumerate(shape) if i not in (a1, a2)]
    return a1, a2, rest + [_diag_len(shape[a1], shape[a2], offset)]


def _diagonal_ref(x, offset=0, axis1=0, axis2=1):
    a1, a2 = _diag_axes(x.ndim, axis1, axis2)
    return np.diagonal(x, offset, a1, a2).copy()


def _shard_ref(input, index_num=1, nshards=1, shard_id=0, ignore_value=-1):
    _int_input(_T(input), "input")
    _check_range(np.where(input < 0, index_num, input), index_num, "shard_index", "input",
                 "index_num")
    size = (index_num + nshards - 1) // nshards
    mine = input // size == shard_id
    return np.where(mine, input % size, ignore_value).astype(input.dtype)
