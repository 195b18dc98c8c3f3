"""The Paddle-signature functions of the search ops that the generated ones cannot express.

The ops themselves (declaration, infer, reference kernel) are in `fw.core.ops.search`;
these wrappers are registered with `public` when the op table is loaded.
"""

from __future__ import annotations

import numpy as np

from fw.core import dtypes as _dt
from fw.core.errors import InvalidArgumentError, InvalidTypeError
from fw.core.ir.types import DYN, TensorType
from fw.core.ops._api import public
from fw.core.ops._infer import norm_axis, shp
from fw.core.ops._registry import defop
from fw.core.ops.search import (
    _F32,
    _I64,
    _LOW,
    _argsort,
    _int_attr,
    _require_real,
    _sort_canon,
    _sortable,
)


def _index_dtype(d):
    d = _dt.convert_dtype(d)
    if d not in (_dt.int32, _dt.int64):
        raise InvalidTypeError(f"'dtype' (of the indices) must be int32 or int64, got {d.name}")
    return d


def _sort_infer(x, axis=-1, descending=False, stable=False):
    _require_real(x)
    norm_axis(axis, len(x.shape))
    return x


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
the largest value. The sort is always stable.

Example:
    >>> fw.sort(fw.to_tensor([[3., 1., 2.]]), axis=-1, descending=True)   # [[3., 2., 1.]]
""")


@public("msort", method=True)
def msort(input, *, out=None):
    """``sort(input, axis=0)``: sort along the first axis (ascending).

    Args:
        input (Tensor): input with at least one dimension.
        out (Tensor|None): if given, the result is written into it and it is returned.

    Example:
        >>> fw.msort(fw.to_tensor([[2., 1.], [0., 3.]]))   # [[0., 1.], [2., 3.]]
    """
    from fw.core.dispatch import assign_inplace, invoke

    r = invoke(sort_op, [input], {"axis": 0, "descending": False, "stable": False})
    if out is None:
        return r
    return assign_inplace("msort", out, r)


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
        new = np.ones(s.shape, bool)
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


@public("unique", method=True)
def unique(x, return_index=False, return_inverse=False, return_counts=False, axis=None,
           dtype="int64", name=None):
    """The sorted unique elements of x (flattened), or the unique slices along `axis`.

    Args:
        x (Tensor): input.
        return_index (bool): also return the index of each unique value's first
            occurrence.
        return_inverse (bool): also return, for each element (slice) of x, the index
            of its value in the result (1-D).
        return_counts (bool): also return how often each unique value occurs.
        axis (int|None): the axis whose slices are compared; None flattens x.
        dtype (str|DType): int64 or int32, the dtype of the index results.

    Returns:
        Tensor, or a tuple (out, [index], [inverse], [counts]) when any return_* flag
        is set.

    Example:
        >>> fw.unique(fw.to_tensor([2, 3, 3, 1, 5, 3]))   # [1, 2, 3, 5]
    """
    from fw.core.dispatch import invoke

    out, index, inverse, counts = invoke(unique_op, [x], {"axis": axis, "dtype": dtype})
    extra = [t for t, want in ((index, return_index), (inverse, return_inverse),
                               (counts, return_counts)) if want]
    return (out, *extra) if extra else out


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


@public("unique_consecutive", method=True)
def unique_consecutive(x, return_inverse=False, return_counts=False, axis=None,
                       dtype="int64", name=None):
    """Keep the first element of every run of equal consecutive elements of x
    (flattened), or of equal consecutive slices along `axis`.

    Returns:
        Tensor, or (out, [inverse], [counts]) when a return_* flag is set: inverse
        maps each element (slice) of x to its run, counts gives each run's length.

    Example:
        >>> fw.unique_consecutive(fw.to_tensor([1, 1, 2, 2, 3, 1, 1, 2]))   # [1, 2, 3, 1, 2]
    """
    from fw.core.dispatch import invoke

    out, inverse, counts = invoke(uc_op, [x], {"axis": axis, "dtype": dtype})
    extra = [t for t, want in ((inverse, return_inverse), (counts, return_counts)) if want]
    return (out, *extra) if extra else out


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
    out = np.empty(v2.shape, d)
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
value; an N-D one needs values with the same leading dimensions.

Example:
    >>> fw.searchsorted(fw.to_tensor([1, 3, 5, 7, 9]), fw.to_tensor([3, 6, 9]))   # [1, 3, 4]
""")


@public("bucketize", method=True)
def bucketize(x, sorted_sequence, out_int32=False, right=False, name=None):
    """The bucket of each element of x given 1-D boundaries `sorted_sequence`
    (``searchsorted(sorted_sequence, x)``).

    Example:
        >>> fw.bucketize(fw.to_tensor([0, 6, 9]), fw.to_tensor([2, 4, 8]))   # [0, 2, 3]
    """
    from fw.core.dispatch import invoke

    nd = len(sorted_sequence.shape)
    if nd != 1:
        raise InvalidArgumentError(f"bucketize: 'sorted_sequence' must be 1-D, got shape "
                                   f"{list(sorted_sequence.shape)}")
    return invoke(ss_op, [sorted_sequence, x], {"out_int32": out_int32, "right": right})


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


@public("nonzero", method=True)
def nonzero(x, as_tuple=False, *, out=None):
    """Coordinates of the non-zero elements of x, in row-major order.

    Args:
        x (Tensor): input.
        as_tuple (bool): return one [z, 1] tensor per dimension instead of one
            [z, ndim] tensor.
        out (Tensor|None): with as_tuple=False, write the result into it.

    Returns:
        Tensor (int64, [z, ndim]) or a tuple of ndim int64 tensors of shape [z, 1].

    Example:
        >>> fw.nonzero(fw.to_tensor([[1., 0.], [0., 2.]]))   # [[0, 0], [1, 1]]
    """
    from fw.core.dispatch import assign_inplace, invoke

    if as_tuple:
        return tuple(invoke(nonzero_op, [x], {"dim": k}) for k in range(len(x.shape)))
    r = invoke(nonzero_op, [x], {"dim": None})
    return r if out is None else assign_inplace("nonzero", out, r)


@public("argwhere", method=True)
def argwhere(input):
    """Coordinates of the non-zero elements of `input` as a [z, ndim] int64 tensor
    (``nonzero(input)``).

    Example:
        >>> fw.argwhere(fw.to_tensor([[1., 0.], [0., 2.]]))   # [[0, 0], [1, 1]]
    """
    from fw.core.dispatch import invoke

    return invoke(nonzero_op, [input], {"dim": None})
