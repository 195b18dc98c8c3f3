"""Records for creation ops."""

from hypothesis import strategies as st

from fw.core import dtypes as _dt
from fw.core.errors import InvalidArgumentError, InvalidTypeError
from fw.core.testing import ALL_NUMERIC, FLOATS, Sample, arrays, record, shapes


def _full(draw, dtype):
    shape = shapes(draw, max_dims=3)
    v = draw(st.floats(-5, 5)) if dtype.kind >= _dt._FLOAT else draw(st.integers(-5, 5))
    return Sample([], {"shape": shape, "fill_value": v, "dtype": dtype})


record("full", _full, dtypes=ALL_NUMERIC, grad_order=0,
       errors=[([], {"shape": [2, -3], "fill_value": 1.0, "dtype": None}, InvalidArgumentError,
                "negative dimension"),
               ([], {"shape": "ab", "fill_value": 1.0, "dtype": None}, InvalidTypeError,
                "'shape' must be")])


def _cast(draw, dtype):
    to = draw(st.sampled_from([_dt.float32, _dt.float64, _dt.int32, _dt.int64, _dt.bool_,
                               _dt.float16]))
    return Sample([arrays(draw, dtype, shapes(draw))], {"dtype": to})


record("cast", _cast, dtypes=ALL_NUMERIC,
       errors=[([[1.0]], {"dtype": "float33"}, InvalidTypeError, "unknown dtype")])
record("assign", lambda draw, d: Sample([arrays(draw, d, shapes(draw))]), dtypes=ALL_NUMERIC)


def _arange(draw, dtype):
    if dtype.kind == _dt._INT:
        a = draw(st.integers(-10, 10))
        b = draw(st.integers(-10, 10))
        s = draw(st.sampled_from([1, 2, 3, -1, -2]))
    else:
        a = draw(st.floats(-5, 5))
        b = draw(st.floats(-5, 5))
        s = draw(st.sampled_from([0.5, 1.0, -0.75]))
    return Sample([], {"start": a, "end": b, "step": s, "dtype": dtype})


record("arange", _arange, dtypes=(_dt.int64, _dt.float32, _dt.float64), grad_order=0,
       dynamic_ok=False,
       errors=[([], {"start": 0, "end": 5, "step": 0, "dtype": None}, InvalidArgumentError,
                "'step' must not be 0")])
record("to_device", lambda draw, d: Sample([arrays(draw, d, shapes(draw))], {"place": "cpu"}),
       dtypes=FLOATS)
