"""Records for reductions, cumulative ops, order statistics and histograms."""

import numpy as np
from hypothesis import strategies as st

from fw.core import dtypes as _dt
from fw.core.errors import InvalidArgumentError, InvalidTypeError
from fw.core.testing import ALL_NUMERIC, FLOATS, FLOATS_LOW, INTS, Sample, arrays, record, shapes

BOOL = (_dt.bool_,)
F32 = np.float32


def _axis(draw, nd, allow_list=True):
    if nd == 0:
        return draw(st.sampled_from([None, 0, -1]))
    opts = [st.none(), st.integers(-nd, nd - 1)]
    if allow_list:
        opts.append(st.lists(st.integers(-nd, nd - 1), min_size=1, max_size=nd, unique_by=(
            lambda a, nd=nd: a % nd)))
    return draw(st.one_of(*opts))


def axis_sample(draw, dtype, lo=-3.0, hi=3.0, extra=None, min_dims=0, min_side=0,
                special=False, allow_list=True, unique=False):
    shape = shapes(draw, min_dims=min_dims, min_side=min_side)
    attrs = {"axis": _axis(draw, len(shape), allow_list), "keepdim": draw(st.booleans())}
    if extra:
        attrs.update(extra)
    return Sample([arrays(draw, dtype, shape, lo, hi, special=special, unique=unique)], attrs)


def with_axis(**kw):
    return lambda draw, d: axis_sample(draw, d, **kw)


BAD_AXIS = ([[1.0, 2.0]], {"axis": 3}, InvalidArgumentError, "out of range")
REPEATED_AXIS = ([np.ones((2, 3), F32)], {"axis": [1, -1]}, InvalidArgumentError, "repeats")
EMPTY_MAX = ([np.ones((2, 0), F32)], {"axis": 1}, InvalidArgumentError, "zero elements")


# ---------------------------------------------------------------- sums and means
def _sum(draw, dtype):
    d = draw(st.sampled_from([None, None, _dt.int64, _dt.float64])) if dtype.kind <= _dt._INT \
        else draw(st.sampled_from([None, dtype]))
    return axis_sample(draw, dtype, extra={"dtype": d})


record("sum", _sum, dtypes=ALL_NUMERIC + BOOL + FLOATS_LOW, grad_order=2,
       tol={"bfloat16": (3e-2, 3e-2), "float16": (1e-2, 1e-2)},
       errors=[BAD_AXIS, REPEATED_AXIS,
               ([[1.0]], {"dtype": "float33"}, InvalidTypeError, "unknown dtype")])
record("nansum", lambda draw, d: axis_sample(draw, d, special=True, extra={"dtype": None}),
       dtypes=FLOATS + INTS, grad_order=1, errors=[BAD_AXIS])
record("prod", lambda draw, d: axis_sample(draw, d, -2, 2, extra={"dtype": None}),
       dtypes=ALL_NUMERIC + BOOL, grad_order=1, errors=[BAD_AXIS])
record("mean", with_axis(special=True), dtypes=FLOATS + FLOATS_LOW + INTS, grad_order=2,
       errors=[BAD_AXIS, REPEATED_AXIS])
record("nanmean", with_axis(special=True), dtypes=FLOATS + INTS, grad_order=1, errors=[BAD_AXIS])

# ---------------------------------------------------------------- extremes
for _n in ("max", "min", "amax", "amin"):
    record(_n, with_axis(min_side=1, special=True, unique=True),
           dtypes=ALL_NUMERIC + FLOATS_LOW + BOOL, grad_order=1, errors=[BAD_AXIS, EMPTY_MAX])


def _arg(draw, dtype):
    s = axis_sample(draw, dtype, min_side=1, allow_list=False, special=True)
    s.attrs["dtype"] = draw(st.sampled_from(["int64", "int32", _dt.int64]))
    return s


for _n in ("argmax", "argmin"):
    record(_n, _arg, dtypes=ALL_NUMERIC + FLOATS_LOW, grad_order=0,
           errors=[BAD_AXIS, EMPTY_MAX,
                   ([[1.0, 2.0]], {"dtype": "float32"}, InvalidTypeError, "int32 or int64"),
                   ([[1.0, 2.0]], {"axis": [0, 1]}, InvalidTypeError, "must be an int")])

for _n in ("all", "any"):
    record(_n, with_axis(lo=0, hi=1), dtypes=BOOL + INTS + FLOATS, grad_order=0,
           errors=[BAD_AXIS])
record("count_nonzero", with_axis(lo=-1, hi=1), dtypes=ALL_NUMERIC + BOOL, grad_order=0,
       errors=[BAD_AXIS])


def _var(draw, dtype):
    return axis_sample(draw, dtype, extra={"unbiased": draw(st.booleans())})


for _n in ("var", "std"):
    record(_n, _var, dtypes=FLOATS + INTS, grad_order=1, errors=[BAD_AXIS])
record("logsumexp", with_axis(special=True), dtypes=FLOATS + FLOATS_LOW + INTS, grad_order=2,
       errors=[BAD_AXIS])


# ---------------------------------------------------------------- cumulative
def _cum(draw, dtype, key="axis", lo=-3.0, hi=3.0, dtypes=(None,), special=False):
    shape = shapes(draw)
    nd = len(shape)
    ax = draw(st.one_of(st.none(), st.integers(-max(nd, 1), max(nd, 1) - 1)))
    return Sample([arrays(draw, dtype, shape, lo, hi, special=special)],
                  {key: ax, "dtype": draw(st.sampled_from(dtypes))})


CUM_BAD = ([[1.0, 2.0]], {"axis": 2}, InvalidArgumentError, "out of range")
record("cumsum", lambda draw, d: _cum(draw, d, dtypes=(None, None, "float64", _dt.int64)),
       dtypes=ALL_NUMERIC + BOOL + FLOATS_LOW, grad_order=2,
       errors=[CUM_BAD, ([[1.0]], {"axis": 1.5}, InvalidTypeError, "must be an int")])
record("cumprod", lambda draw, d: _cum(draw, d, "dim", -2, 2, (None, "float64")),
       dtypes=ALL_NUMERIC, grad_order=1,
       errors=[([[1.0, 2.0]], {"dim": 2}, InvalidArgumentError, "out of range")])
record("logcumsumexp", lambda draw, d: _cum(draw, d, special=True), dtypes=FLOATS + INTS,
       grad_order=1, errors=[CUM_BAD])
for _n in ("cummax", "cummin"):
    record(_n, lambda draw, d: _cum(draw, d, special=True, dtypes=("int64", "int32")),
           dtypes=ALL_NUMERIC + FLOATS_LOW, grad_order=1,
           errors=[CUM_BAD, ([[1.0]], {"dtype": "float32"}, InvalidTypeError,
                             "int32 or int64")])


# ---------------------------------------------------------------- order statistics
def _median(draw, dtype, nan=False):
    shape = shapes(draw, min_side=1)
    nd = len(shape)
    ax = _axis(draw, nd, allow_list=nan)
    return Sample([arrays(draw, dtype, shape, special=True, unique=True)],
                  {"axis": ax, "keepdim": draw(st.booleans()),
                   "mode": draw(st.sampled_from(["avg", "min"]))})


record("median", _median, dtypes=FLOATS + INTS, grad_order=1,
       errors=[BAD_AXIS, EMPTY_MAX,
               ([[1.0, 2.0]], {"mode": "max"}, InvalidArgumentError, "'avg' or 'min'")])
record("nanmedian", lambda draw, d: _median(draw, d, True), dtypes=FLOATS + INTS, grad_order=1,
       errors=[BAD_AXIS, EMPTY_MAX])


def _quantile(draw, dtype):
    s = axis_sample(draw, dtype, special=True, unique=True)
    q = draw(st.one_of(st.floats(0, 1), st.lists(st.floats(0, 1), min_size=1, max_size=3)))
    s.attrs.update(q=q, interpolation=draw(st.sampled_from(
        ["linear", "lower", "higher", "midpoint", "nearest"])))
    return s


for _n in ("quantile", "nanquantile"):
    record(_n, _quantile, dtypes=FLOATS + INTS, grad_order=1,
           errors=[BAD_AXIS,
                   ([[1.0, 2.0]], {"q": 1.5}, InvalidArgumentError, r"\[0, 1\]"),
                   ([[1.0, 2.0]], {"q": 0.5, "interpolation": "cubic"}, InvalidArgumentError,
                    "interpolation")])


# ---------------------------------------------------------------- reduce_as / diff
def _reduce_as(draw, dtype):
    xs = shapes(draw, min_dims=0, max_dims=4)
    cut = draw(st.integers(0, len(xs)))
    ts = tuple(1 if draw(st.booleans()) else d for d in xs[cut:])
    return Sample([arrays(draw, dtype, xs), arrays(draw, dtype, ts)])


record("reduce_as", _reduce_as, dtypes=ALL_NUMERIC, grad_order=2,
       errors=[([np.ones((2, 3), F32), np.ones((4,), F32)], {}, InvalidArgumentError,
                "must broadcast")])


def _diff(draw, dtype):
    shape = shapes(draw, min_dims=1)
    nd = len(shape)
    ax = draw(st.integers(-nd, nd - 1))
    args = [arrays(draw, dtype, shape)]
    for _ in range(2):
        if draw(st.booleans()):
            s = list(shape)
            s[ax] = draw(st.integers(0, 3))
            args.append(arrays(draw, dtype, tuple(s)))
        else:
            args.append(None)
    return Sample(args, {"n": draw(st.integers(0, 3)), "axis": ax})


record("diff", _diff, dtypes=ALL_NUMERIC + BOOL, grad_order=1,
       errors=[([np.ones((2, 3), F32), np.ones((2,), F32), None], {}, InvalidArgumentError,
                "rank of x"),
               ([np.ones((), F32), None, None], {}, InvalidArgumentError, "0-D")])


def _trap(draw, dtype):
    shape = shapes(draw, min_dims=1)
    nd = len(shape)
    ax = draw(st.integers(-nd, nd - 1))
    kind = draw(st.sampled_from(["none", "dx", "x1", "xfull"]))
    y = arrays(draw, dtype, shape)
    if kind == "x1":
        x = np.sort(arrays(draw, dtype, (shape[ax],)))
    elif kind == "xfull":
        x = arrays(draw, dtype, shape)
    else:
        x = None
    dx = draw(st.floats(0.1, 3)) if kind == "dx" else None
    return Sample([y, x], {"dx": dx, "axis": ax})


for _n in ("trapezoid", "cumulative_trapezoid"):
    record(_n, _trap, dtypes=FLOATS, grad_order=1,
           errors=[([np.ones((2, 3), F32), np.ones((4,), F32)], {}, InvalidArgumentError,
                    "points"),
                   ([np.ones((3,), F32), np.ones((3,), F32)], {"dx": 1.0},
                    InvalidArgumentError, "not both")])


# ---------------------------------------------------------------- counting
def _bincount(draw, dtype):
    n = draw(st.integers(0, 8))
    x = arrays(draw, dtype, (n,), 0, 6)
    w = arrays(draw, draw(st.sampled_from([_dt.float32, _dt.float64, _dt.int64])), (n,)) \
        if draw(st.booleans()) else None
    return Sample([x, w], {"minlength": draw(st.integers(0, 9))})


record("bincount", _bincount, dtypes=INTS, grad_order=0, dynamic_ok=False,
       errors=[([np.array([1, -2])], {}, InvalidArgumentError, "non-negative"),
               ([np.ones((2, 2), np.int64)], {}, InvalidArgumentError, "1-D"),
               ([np.ones(3, F32)], {}, InvalidTypeError, "integer tensor")])


def _hist(draw, dtype):
    shape = shapes(draw, max_dims=3)
    x = arrays(draw, dtype, shape, -5, 5)
    w = arrays(draw, draw(st.sampled_from(FLOATS)), shape) if draw(st.booleans()) else None
    lo = draw(st.sampled_from([0.0, -2.0, -6.0]))
    hi = draw(st.sampled_from([0.0, 2.0, 6.0]))
    if lo == 0.0 and hi != 0.0:
        lo = -hi
    return Sample([x, w], {"bins": draw(st.integers(1, 7)), "min": lo, "max": hi,
                           "density": draw(st.booleans())})


record("histogram", _hist, dtypes=FLOATS + INTS, grad_order=0,
       errors=[([np.ones(3, F32)], {"bins": 0}, InvalidArgumentError, "'bins' must be"),
               ([np.ones(3, F32)], {"min": 2.0, "max": 1.0}, InvalidArgumentError,
                "'max' must be")])


def _edges(draw, dtype):
    s = _hist(draw, dtype)
    return Sample([s.args[0]], {k: s.attrs[k] for k in ("bins", "min", "max")})


record("histogram_bin_edges", _edges, dtypes=FLOATS + INTS, grad_order=0,
       errors=[([np.ones(3, F32)], {"bins": -1}, InvalidArgumentError, "'bins' must be")])


def _hdd_common(draw, dtype):
    d = draw(st.integers(1, 3))
    n = draw(st.integers(0, 6))
    x = arrays(draw, dtype, (n, d), -3, 3)
    bins = draw(st.one_of(st.integers(1, 4), st.lists(st.integers(1, 4), min_size=d,
                                                      max_size=d)))
    ranges = None
    if draw(st.booleans()):
        ranges = []
        for _ in range(d):
            lo = draw(st.floats(-3, 0))
            ranges += [lo, lo + draw(st.floats(0.5, 4))]
    return x, bins, ranges


def _hdd(draw, dtype):
    x, bins, ranges = _hdd_common(draw, dtype)
    w = arrays(draw, dtype, x.shape[:1]) if draw(st.booleans()) else None
    return Sample([x, w, []], {"bins": bins, "ranges": ranges, "density": draw(st.booleans())})


record("histogramdd", _hdd, dtypes=FLOATS, grad_order=0, dynamic_ok=False,
       errors=[([np.ones(3, F32), None, ()], {}, InvalidArgumentError, "at least 2"),
               ([np.ones((3, 2), F32), None, ()], {"bins": [2, 2, 2]}, InvalidArgumentError,
                "entries")])


def _hdd_edges(draw, dtype):
    x, bins, ranges = _hdd_common(draw, dtype)
    return Sample([x], {"bins": bins, "ranges": ranges,
                        "dim": draw(st.integers(0, x.shape[1] - 1))})


record("histogramdd_bin_edges", _hdd_edges, dtypes=FLOATS, grad_order=0, dynamic_ok=False,
       errors=[([np.ones((3, 2), F32)], {"ranges": [0.0, 1.0]}, InvalidArgumentError,
                "'ranges' must hold")])
