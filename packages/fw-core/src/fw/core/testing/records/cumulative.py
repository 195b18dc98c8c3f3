"""Records for cumulative ops: scans, differences and integrals."""

import numpy as np
from hypothesis import strategies as st

from fw.core import dtypes as _dt
from fw.core.errors import InvalidArgumentError, InvalidTypeError
from fw.core.testing import ALL_NUMERIC, FLOATS, FLOATS_LOW, INTS, Sample, arrays, record, shapes
from fw.core.testing.records import _ties
from fw.core.testing.records._axes import BOOL, F32


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


# ---------------------------------------------------------------- ties (issue 18)
def _cum_ties(draw, dtype):
    s = _ties.ties_sample(draw, dtype)
    ax = draw(st.sampled_from([s.attrs["axis"], None]))
    return Sample(s.args, {"axis": ax, "dtype": draw(st.sampled_from(["int64", "int32"]))})


for _n, _largest in (("cummax", True), ("cummin", False)):
    record(_n, _cum_ties, dtypes=FLOATS + INTS, grad_order=0, kind="ties",
           oracle=_ties.cum_extreme_oracle(_largest))
