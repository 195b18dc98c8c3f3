"""The one reduction every fw.geometric op ends in: rows of `msgs` ([E, ...]) reduced
into `n` output rows by a row index ([E]), with Paddle's rules — rows nothing lands
on are 0 for every reduction, ``mean`` divides by the number of rows landed, and
``max``/``min`` pass the whole upstream gradient to *every* row equal to the result
(Paddle's kernels do not split it among ties, unlike ``put_along_axis``'s rule)."""

from __future__ import annotations

import numpy as np

from fw.core.errors import InvalidArgumentError, InvalidTypeError
from fw.core.ir.core import Value

_INT = ("int32", "int64")
_DATA = ("float16", "bfloat16", "float32", "float64", "int32", "int64")


def fw_():
    import fw

    return fw


def check_tensor(t, name, who, dtypes, ndim=None):
    fw = fw_()
    if not isinstance(t, (fw.Tensor, Value)):  # a Value: traced by fw.jit
        raise InvalidTypeError(f"{who}: '{name}' must be a Tensor, got {type(t).__name__}")
    if t.dtype.name not in dtypes:
        raise InvalidTypeError(f"{who}: '{name}' must have dtype {' or '.join(dtypes)}, got "
                               f"{t.dtype.name} (shape {list(t.shape)})")
    if ndim is not None and len(t.shape) != ndim:
        raise InvalidArgumentError(f"{who}: '{name}' must be {ndim}-D, got shape "
                                   f"{list(t.shape)}")
    return t


def check_index(t, name, who, length=None, upper=None):
    check_tensor(t, name, who, _INT, ndim=1)
    if length is not None and t.shape[0] != length:
        raise InvalidArgumentError(f"{who}: '{name}' has {t.shape[0]} entries where "
                                   f"{length} are needed (shape {list(t.shape)})")
    if isinstance(t, Value):  # traced: the values are only known when the program runs
        return None
    a = t.numpy()
    if a.size and a.min() < 0:
        raise InvalidArgumentError(f"{who}: '{name}' holds a negative index ({a.min()})")
    if upper is not None and a.size and a.max() >= upper:
        raise InvalidArgumentError(f"{who}: '{name}' holds index {a.max()}, out of range "
                                   f"for {upper} rows")
    return a


def check_reduce(v, who, name="reduce_op"):
    if v not in ("sum", "mean", "max", "min"):
        raise InvalidArgumentError(f"{who}: '{name}' must be 'sum', 'mean', 'max' or 'min', "
                                   f"got {v!r}")
    return v


def reduce_rows(msgs, index, index_np, n, reduce):
    """``reduce`` ('sum', 'mean', 'max', 'min') of the rows of `msgs` into `n` rows."""
    fw = fw_()
    index = index.astype("int64")
    rest = list(msgs.shape[1:])
    zeros = fw.zeros([n] + rest, dtype=msgs.dtype)
    if reduce in ("sum", "mean"):
        out = fw.index_add(zeros, index, 0, msgs)
        if reduce == "mean":
            if index_np is not None:
                cnt = np.maximum(np.bincount(index_np, minlength=n)[:n], 1)
                cnt = fw.to_tensor(cnt.reshape([n] + [1] * len(rest)).astype(msgs.dtype.name))
            else:  # traced: count with the program's own ops
                ones = fw.ones([msgs.shape[0]], dtype=msgs.dtype)
                cnt = fw.index_add(fw.zeros([n], dtype=msgs.dtype), index, 0, ones)
                cnt = fw.maximum(cnt, fw.ones_like(cnt)).reshape([n] + [1] * len(rest))
            out = out / cnt
            if msgs.dtype.name in _INT:  # Paddle's integer mean truncates, as C division
                out = out.astype(msgs.dtype)
        return out
    if msgs.shape[0] == 0:
        return zeros
    if index_np is not None and _on_cpu(msgs):
        out = fw.to_tensor(_sorted_extreme(msgs._data, index_np, n, reduce))
    else:
        full_idx = fw.expand(index.reshape([-1] + [1] * len(rest)), msgs.shape)
        how = "amax" if reduce == "max" else "amin"
        # traced: put_along_axis's own gradient (split among ties) is the program's
        traced = isinstance(msgs, Value)
        out = fw.put_along_axis(zeros, full_idx, msgs if traced else msgs.detach(), 0, how,
                                include_self=False, broadcast=False)
        if traced:
            return out
    if msgs.stop_gradient:
        return out
    # out + 0 that carries d out / d msgs = 1 for every row equal to its result
    hit = fw.logical_and(fw.index_select(out, index, 0) == msgs.detach(),
                         fw.isfinite(msgs.detach()))
    delta = fw.where(hit, msgs - msgs.detach(), fw.zeros_like(msgs))
    return out + fw.index_add(fw.zeros_like(out), index, 0, delta)


def _on_cpu(t):
    """Whether the reduceat fast path applies (a NumPy array; other devices take
    put_along_axis, which their backends implement)."""
    return isinstance(getattr(t, "_data", None), np.ndarray)


def _sorted_extreme(m, idx, n, reduce):
    """The max/min forward value on the cpu: rows sorted by index (segment ids already
    are), then one ``ufunc.reduceat`` per run of equal indices — ~10x faster than
    ``ufunc.at`` (put_along_axis) on a million rows."""
    if idx.size > 1 and (idx[1:] < idx[:-1]).any():
        order = np.argsort(idx, kind="stable")
        m, idx = m[order], idx[order]
    starts = np.flatnonzero(np.r_[True, idx[1:] != idx[:-1]])
    out = np.zeros((n,) + m.shape[1:], m.dtype)
    f = np.maximum if reduce == "max" else np.minimum
    out[idx[starts]] = f.reduceat(m, starts, axis=0)
    return out
