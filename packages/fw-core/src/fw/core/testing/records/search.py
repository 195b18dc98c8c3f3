"""Records for search and sort ops."""

import numpy as np
from hypothesis import strategies as st

from fw.core import dtypes as _dt
from fw.core.errors import InvalidArgumentError, InvalidTypeError
from fw.core.testing import ALL_NUMERIC, FLOATS, FLOATS_LOW, INTS, Sample, arrays, record, shapes
from fw.core.testing.records import _ties

F32 = np.float32
BAD_AXIS = ([np.ones((2, 3), F32)], {"axis": 2}, InvalidArgumentError, "out of range")


def _sort(draw, dtype):
    shape = shapes(draw)
    nd = max(len(shape), 1)
    # small integer ranges make ties, which the stable order must handle
    return Sample([arrays(draw, dtype, shape, -2, 2, special=True)],
                  {"axis": draw(st.integers(-nd, nd - 1)),
                   "descending": draw(st.booleans()), "stable": draw(st.booleans())})


record("sort", _sort, dtypes=ALL_NUMERIC + FLOATS_LOW, grad_order=1, errors=[BAD_AXIS,
       ([np.ones(2, np.complex64)], {}, InvalidTypeError, "real tensor")])
record("argsort", _sort, dtypes=ALL_NUMERIC + FLOATS_LOW, grad_order=0, errors=[BAD_AXIS])


def _topk(draw, dtype):
    shape = shapes(draw, min_dims=1)
    nd = len(shape)
    ax = draw(st.one_of(st.none(), st.integers(-nd, nd - 1)))
    n = shape[-1 if ax is None else ax]
    return Sample([arrays(draw, dtype, shape, -2, 2, special=True)],
                  {"k": draw(st.integers(0, n)), "axis": ax, "largest": draw(st.booleans()),
                   "sorted": True})


record("topk", _topk, dtypes=ALL_NUMERIC, grad_order=1, dynamic_ok=False,
       errors=[([np.ones((2, 3), F32)], {"k": 4}, InvalidArgumentError, "'k'=4"),
               ([np.ones((2, 3), F32)], {"k": 1, "axis": 2}, InvalidArgumentError,
                "out of range")])


def _kth(draw, dtype):
    shape = shapes(draw, min_dims=1, min_side=1)
    nd = len(shape)
    ax = draw(st.one_of(st.none(), st.integers(-nd, nd - 1)))
    n = shape[-1 if ax is None else ax]
    return Sample([arrays(draw, dtype, shape, -2, 2, unique=draw(st.booleans()))],
                  {"k": draw(st.integers(1, n)), "axis": ax, "keepdim": draw(st.booleans())})


record("kthvalue", _kth, dtypes=ALL_NUMERIC, grad_order=1, dynamic_ok=False,
       errors=[([np.ones((2, 3), F32)], {"k": 0}, InvalidArgumentError, "'k'=0"),
               ([np.ones((2, 3), F32)], {"k": 4}, InvalidArgumentError, "'k'=4")])


def _mode(draw, dtype):
    shape = shapes(draw, min_dims=1, min_side=1)
    nd = len(shape)
    return Sample([arrays(draw, dtype, shape, -2, 2)],
                  {"axis": draw(st.integers(-nd, nd - 1)), "keepdim": draw(st.booleans())})


record("mode", _mode, dtypes=INTS + FLOATS, grad_order=0,
       errors=[BAD_AXIS, ([np.ones((2, 0), F32)], {"axis": 1}, InvalidArgumentError, "empty")])


def _unique(draw, dtype):
    shape = shapes(draw, max_dims=3)
    nd = len(shape)
    ax = draw(st.one_of(st.none(), st.integers(-nd, nd - 1))) if nd else None
    return Sample([arrays(draw, dtype, shape, -2, 2)],
                  {"axis": ax, "dtype": draw(st.sampled_from(["int64", "int32"]))})


for _n in ("unique", "unique_consecutive"):
    record(_n, _unique, dtypes=ALL_NUMERIC + (_dt.bool_,), grad_order=0,
           errors=[BAD_AXIS, ([np.ones(3, F32)], {"dtype": "float32"}, InvalidTypeError,
                              "int32 or int64")])


def _searchsorted(draw, dtype):
    vshape = shapes(draw, min_dims=1, max_dims=3)
    if draw(st.booleans()):
        sshape = (draw(st.integers(0, 6)),)
    else:
        sshape = tuple(vshape[:-1]) + (draw(st.integers(0, 6)),)
    seq = np.sort(arrays(draw, dtype, sshape, -3, 3), axis=-1)
    return Sample([seq, arrays(draw, dtype, vshape, -4, 4)],
                  {"out_int32": draw(st.booleans()), "right": draw(st.booleans())})


record("searchsorted", _searchsorted, dtypes=FLOATS + INTS, grad_order=0,
       errors=[([np.ones((2, 3), F32), np.ones((3, 3), F32)], {}, InvalidArgumentError,
                "leading dimensions"),
               ([np.ones((), F32), np.ones(3, F32)], {}, InvalidArgumentError,
                "at least one dimension")])


def _nonzero(draw, dtype):
    shape = shapes(draw)
    dim = draw(st.one_of(st.none(), st.integers(0, len(shape) - 1))) if shape else None
    return Sample([arrays(draw, dtype, shape, -1, 1)], {"dim": dim})


record("nonzero", _nonzero, dtypes=ALL_NUMERIC + (_dt.bool_,), grad_order=0,
       errors=[([np.ones((2, 3), F32)], {"dim": 2}, InvalidArgumentError, "out of range")])


# ---------------------------------------------------------------- ties (issue 18)
# equal values (and NaN) in every slice, checked against the loop oracles of _ties.py
def _sort_ties(draw, dtype):
    s = _ties.ties_sample(draw, dtype)
    return Sample(s.args, {"axis": s.attrs["axis"], "descending": draw(st.booleans()),
                           "stable": draw(st.booleans())})


record("sort", _sort_ties, dtypes=FLOATS + INTS, grad_order=0, kind="ties",
       oracle=_ties.sort_oracle)
record("argsort", _sort_ties, dtypes=FLOATS + INTS, grad_order=0, kind="ties",
       oracle=_ties.argsort_oracle)


def _topk_ties(draw, dtype):
    s = _ties.ties_sample(draw, dtype, min_dims=1)
    x, ax = s.args[0], s.attrs["axis"]
    ax = draw(st.sampled_from([ax, None]))
    n = x.shape[-1 if ax is None else ax]
    return Sample([x], {"k": draw(st.integers(0, n)), "axis": ax,
                        "largest": draw(st.booleans()), "sorted": True})


record("topk", _topk_ties, dtypes=FLOATS + INTS, grad_order=0, dynamic_ok=False, kind="ties",
       oracle=_ties.topk_oracle)


def _kth_ties(draw, dtype):
    s = _ties.ties_sample(draw, dtype, nan=False, min_dims=1)
    n = s.args[0].shape[s.attrs["axis"]]
    s.attrs["k"] = draw(st.integers(1, n))
    return s


record("kthvalue", _kth_ties, dtypes=FLOATS + INTS, grad_order=0, dynamic_ok=False,
       kind="ties", oracle=_ties.kthvalue_oracle)
record("mode", lambda draw, d: _ties.ties_sample(draw, d, nan=False, min_dims=1),
       dtypes=FLOATS + INTS, grad_order=0, kind="ties", oracle=_ties.mode_oracle)


def _unique_ties(draw, dtype):
    x = _ties.tied(draw, dtype, shapes(draw, max_dims=3, min_side=1))
    return Sample([x], {"axis": None, "dtype": draw(st.sampled_from(["int64", "int32"]))})


record("unique", _unique_ties, dtypes=FLOATS + INTS, grad_order=0, kind="ties",
       oracle=_ties.unique_oracle)
record("unique_consecutive", _unique_ties, dtypes=FLOATS + INTS, grad_order=0, kind="ties",
       oracle=_ties.unique_consecutive_oracle)


def _searchsorted_ties(draw, dtype):
    vshape = shapes(draw, min_dims=1, max_dims=3, min_side=1)
    n = draw(st.integers(1, 6))
    sshape = (n,) if draw(st.booleans()) else tuple(vshape[:-1]) + (n,)
    seq = np.sort(_ties.tied(draw, dtype, sshape), axis=-1)
    return Sample([seq, _ties.tied(draw, dtype, vshape)],
                  {"out_int32": draw(st.booleans()), "right": draw(st.booleans())})


record("searchsorted", _searchsorted_ties, dtypes=FLOATS + INTS, grad_order=0, kind="ties",
       oracle=_ties.searchsorted_oracle)
