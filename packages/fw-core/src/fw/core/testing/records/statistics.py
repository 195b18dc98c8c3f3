"""Records for order statistics and histograms."""

import numpy as np
from hypothesis import strategies as st

from fw.core import dtypes as _dt
from fw.core.errors import InvalidArgumentError, InvalidTypeError
from fw.core.testing import FLOATS, INTS, Sample, arrays, record, shapes
from fw.core.testing.records import _ties
from fw.core.testing.records._axes import BAD_AXIS, EMPTY_MAX, F32, _axis, axis_sample


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


# ---------------------------------------------------------------- ties (issue 18)
# tied values make the middle positions equal and q*(n-1) land on half-way points
def _median_ties(nan):
    def sample(draw, dtype):
        s = _ties.ties_sample(draw, dtype, axis="any" if nan else "int")
        if not nan and draw(st.booleans()):
            s.attrs["axis"] = None
        s.attrs["mode"] = draw(st.sampled_from(["avg", "min"]))
        return s
    return sample


def _quantile_ties(draw, dtype):
    # q*(n-1) on a half-way point (n=2, 4 or 6 with q=0.5; n=3 with q=0.25 or 0.75), over
    # either tied values or distinct ones (where the rounding direction shows)
    n = draw(st.sampled_from([2, 3, 4, 6]))
    lead = tuple(draw(st.lists(st.integers(1, 3), max_size=2)))
    if draw(st.booleans()):
        x = _ties.tied(draw, dtype, lead + (n,), nan=True)
    else:
        rows = [draw(st.permutations(range(n))) for _ in range(int(np.prod(lead, dtype=int)))]
        x = np.asarray(rows).reshape(lead + (n,)).astype(_dt.convert_dtype(dtype).np)
    qs = st.sampled_from([0.25, 0.5, 0.75, 0.0, 1.0, 0.1])
    return Sample([x], {"q": draw(st.one_of(qs, st.lists(qs, min_size=1, max_size=3).map(tuple))),
                        "axis": draw(st.sampled_from([-1, None] if not lead else [-1])),
                        "keepdim": draw(st.booleans()),
                        "interpolation": draw(st.sampled_from(
                            ["nearest", "nearest", "linear", "lower", "higher", "midpoint"]))})


for _n, _nan in (("median", False), ("nanmedian", True)):
    record(_n, _median_ties(_nan), dtypes=FLOATS + INTS, grad_order=0, kind="ties",
           oracle=_ties.median_oracle(_nan), note="values only: the oracle returns output 0")
for _n, _nan in (("quantile", False), ("nanquantile", True)):
    record(_n, _quantile_ties, dtypes=FLOATS + INTS, grad_order=0, kind="ties",
           oracle=_ties.quantile_oracle(_nan))
