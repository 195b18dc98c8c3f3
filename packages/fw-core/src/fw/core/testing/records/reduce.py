"""Records for reductions."""

import numpy as np
from hypothesis import strategies as st

from fw.core import dtypes as _dt
from fw.core.errors import InvalidArgumentError, InvalidTypeError
from fw.core.testing import ALL_NUMERIC, FLOATS, FLOATS_LOW, INTS, Sample, arrays, record, shapes
from fw.core.testing.records import _ties
from fw.core.testing.records._axes import BAD_AXIS, BOOL, EMPTY_MAX, F32, axis_sample


def with_axis(**kw):
    return lambda draw, d: axis_sample(draw, d, **kw)
REPEATED_AXIS = ([np.ones((2, 3), F32)], {"axis": [1, -1]}, InvalidArgumentError, "repeats")


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


# ---------------------------------------------------------------- reduce_as / diff
def _reduce_as(draw, dtype):
    xs = shapes(draw, min_dims=0, max_dims=4)
    cut = draw(st.integers(0, len(xs)))
    ts = tuple(1 if draw(st.booleans()) else d for d in xs[cut:])
    return Sample([arrays(draw, dtype, xs), arrays(draw, dtype, ts)])


record("reduce_as", _reduce_as, dtypes=ALL_NUMERIC, grad_order=2,
       errors=[([np.ones((2, 3), F32), np.ones((4,), F32)], {}, InvalidArgumentError,
                "must broadcast")])


# ---------------------------------------------------------------- ties (issue 18)
# equal values in every slice, checked against the loop oracles of _ties.py
for _n, _largest in (("max", True), ("amax", True), ("min", False), ("amin", False)):
    record(_n, lambda draw, d: _ties.ties_sample(draw, d, axis="any"), dtypes=FLOATS + INTS,
           grad_order=0, kind="ties", oracle=_ties.extreme_oracle(_largest))


def _arg_ties(draw, dtype):
    s = _ties.ties_sample(draw, dtype)
    if draw(st.booleans()):
        s.attrs["axis"] = None
    s.attrs["dtype"] = draw(st.sampled_from(["int64", "int32"]))
    return s


for _n, _largest in (("argmax", True), ("argmin", False)):
    record(_n, _arg_ties, dtypes=FLOATS + INTS, grad_order=0, kind="ties",
           oracle=_ties.arg_extreme_oracle(_largest))
