"""Records for creation ops."""

import numpy as np
from hypothesis import strategies as st

from fw.core import dtypes as _dt
from fw.core.errors import InvalidArgumentError, InvalidTypeError
from fw.core.testing import (
    ALL_NUMERIC,
    COMPLEX,
    FLOATS,
    FLOATS_LOW,
    INTS,
    Sample,
    arrays,
    broadcast_pair,
    record,
    shapes,
)

BOOL = (_dt.bool_,)
ALL = ALL_NUMERIC + FLOATS_LOW + COMPLEX + BOOL
F32 = np.float32


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


def _cast_complex(draw, dtype):
    to = draw(st.sampled_from([_dt.float32, _dt.float64, _dt.int32, _dt.complex64,
                               _dt.complex128, _dt.bfloat16]))
    return Sample([arrays(draw, dtype, shapes(draw))], {"dtype": to})


record("cast", _cast_complex, dtypes=COMPLEX + FLOATS_LOW + BOOL,
       note="complex -> real keeps the real part")
record("assign", lambda draw, d: Sample([arrays(draw, d, shapes(draw))]), dtypes=ALL)


def _full_any(draw, dtype):
    v = {_dt._BOOL: True, _dt._COMPLEX: 1.5 - 2j}.get(dtype.kind, draw(st.sampled_from(
        [0, 3, -1.5])))
    to = dtype if draw(st.booleans()) else None  # None: bool, complex or the default float
    return Sample([], {"shape": shapes(draw, max_dims=3), "fill_value": v, "dtype": to})


record("full", _full_any, dtypes=FLOATS_LOW + COMPLEX + BOOL, grad_order=0)


def _full_like(draw, dtype):
    v = draw(st.sampled_from([0, 1, -2.5, True]))
    to = draw(st.sampled_from([None, None, _dt.float64, _dt.int32, "float16"]))
    return Sample([arrays(draw, dtype, shapes(draw))], {"fill_value": v, "dtype": to})


record("full_like", _full_like, dtypes=ALL, grad_order=0,
       errors=[([[1.0]], {"fill_value": 1 + 2j}, InvalidTypeError, "complex value"),
               ([[1.0]], {"fill_value": "a"}, InvalidTypeError, "must be a number")])


def _space(extra):
    def sample(draw, dtype):
        a = {"start": draw(st.floats(-4, 4)), "stop": draw(st.floats(-4, 4)),
             "num": draw(st.integers(0, 7)), "dtype": dtype}
        a.update({k: draw(v) for k, v in extra.items()})
        return Sample([], a)
    return sample


_SPACE_ERRORS = [([], {"start": 0, "stop": 1, "num": -1}, InvalidArgumentError,
                  "'num' must be >= 0"),
                 ([], {"start": 0, "stop": 1, "num": 2.5}, InvalidTypeError,
                  "'num' must be an int")]
record("linspace", _space({}), dtypes=FLOATS + INTS + FLOATS_LOW, grad_order=0,
       errors=_SPACE_ERRORS)
record("logspace", _space({"base": st.sampled_from([10.0, 2.0, 0.5])}),
       dtypes=FLOATS + INTS, grad_order=0, errors=_SPACE_ERRORS)


def _eye(draw, dtype):
    return Sample([], {"num_rows": draw(st.integers(0, 5)),
                       "num_columns": draw(st.one_of(st.none(), st.integers(0, 5))),
                       "dtype": dtype})


record("eye", _eye, dtypes=ALL, grad_order=0,
       errors=[([], {"num_rows": -1}, InvalidArgumentError, "'num_rows' must be >= 0"),
               ([], {"num_rows": 2.5}, InvalidTypeError, "'num_rows' must be an int")])


def _tri(draw, dtype):
    shape = shapes(draw, min_dims=2)
    return Sample([arrays(draw, dtype, shape, special=True)],
                  {"diagonal": draw(st.integers(-3, 3))})


for _n in ("tril", "triu"):
    record(_n, _tri, dtypes=ALL, grad_order=1,
           errors=[([[1.0, 2.0]], {}, InvalidArgumentError, "at least 2 dimensions")])


def _tri_indices(draw, dtype):
    return Sample([], {"row": draw(st.integers(0, 6)),
                       "col": draw(st.one_of(st.none(), st.integers(0, 6))),
                       "offset": draw(st.integers(-4, 4)), "dtype": dtype})


for _n in ("tril_indices", "triu_indices"):
    record(_n, _tri_indices, dtypes=(_dt.int64, _dt.int32), grad_order=0,
           errors=[([], {"row": 3, "dtype": "float32"}, InvalidTypeError, "int32 or int64"),
                   ([], {"row": -3}, InvalidArgumentError, "'row' must be >= 0")])


def _diag(draw, dtype):
    shape = shapes(draw, min_dims=1, max_dims=2)
    pad = draw(st.sampled_from([0, 1, -2])) if dtype.kind != _dt._BOOL else False
    return Sample([arrays(draw, dtype, shape, special=True)],
                  {"offset": draw(st.integers(-3, 3)), "padding_value": pad})


record("diag", _diag, dtypes=ALL, grad_order=1,
       errors=[([np.ones((2, 2, 2), F32)], {}, InvalidArgumentError, "1-D or 2-D"),
               ([[1.0, 2.0]], {"padding_value": 1j}, InvalidTypeError, "complex value")])
record("diagflat", lambda draw, d: Sample([arrays(draw, d, shapes(draw, max_dims=3))],
                                          {"offset": draw(st.integers(-3, 3))}),
       dtypes=ALL, grad_order=1)


def _diag_embed(draw, dtype):
    shape = shapes(draw, min_dims=1, max_dims=3)
    r = len(shape) + 1
    d1, d2 = draw(st.lists(st.integers(-r, r - 1), min_size=2, max_size=2,
                           unique_by=lambda a, r=r: a % r))
    return Sample([arrays(draw, dtype, shape)],
                  {"offset": draw(st.integers(-2, 2)), "dim1": d1, "dim2": d2})


record("diag_embed", _diag_embed, dtypes=ALL, grad_order=1,
       errors=[([[1.0, 2.0]], {"dim1": 0, "dim2": -2}, InvalidArgumentError,
                "must name different dimensions"),
               ([[1.0, 2.0]], {"dim1": 3}, InvalidArgumentError, "out of range")])


def _parts(draw, dtype):
    a, b = broadcast_pair(draw)
    return Sample([arrays(draw, dtype, a, special=True), arrays(draw, dtype, b, special=True)])


_PARTS_ERRORS = [([np.ones(2, np.complex64), np.ones(2, F32)], {}, InvalidTypeError,
                  "must be real tensors"),
                 ([np.ones((2, 3), F32), np.ones((4, 3), F32)], {}, InvalidArgumentError,
                  "cannot broadcast")]
record("complex", _parts, dtypes=FLOATS + FLOATS_LOW + INTS, grad_order=1,
       errors=_PARTS_ERRORS)
record("polar", _parts, dtypes=FLOATS + FLOATS_LOW + INTS, grad_order=1, errors=_PARTS_ERRORS)


def _meshgrid(draw, dtype):
    n = draw(st.integers(1, 3))
    xs = [arrays(draw, dtype, shapes(draw, max_dims=1)) for _ in range(n)]
    return Sample([xs], {"indexing": draw(st.sampled_from(["ij", "xy"]))})


record("meshgrid", _meshgrid, dtypes=ALL, grad_order=1,
       errors=[([[np.ones((2, 2), F32)]], {}, InvalidArgumentError, "must be 0-D or 1-D"),
               ([[np.ones(2, F32)]], {"indexing": "yx"}, InvalidArgumentError,
                "'ij' or 'xy'")])


def _one_element(draw, dtype):
    shape = draw(st.sampled_from([(), (1,), (1, 1)]))
    return Sample([arrays(draw, dtype, shape)], {"value": draw(st.sampled_from([1, 2.5, -3]))})


record("increment", _one_element, dtypes=ALL_NUMERIC + FLOATS_LOW + COMPLEX, grad_order=0,
       errors=[([[1.0, 2.0]], {}, InvalidArgumentError, "exactly one element"),
               ([[True]], {}, InvalidTypeError, "bool")])
for _n in ("numel", "shape", "is_empty"):
    record(_n, lambda draw, d: Sample([arrays(draw, d, shapes(draw))]), dtypes=ALL,
           grad_order=0)


def _full_dyn(draw, dtype):
    shape = shapes(draw, max_dims=3)
    static = [d if draw(st.booleans()) else -1 for d in shape]  # -1: known at run time only
    v = draw(st.floats(-5, 5)) if dtype.kind >= _dt._FLOAT else draw(st.integers(-5, 5))
    return Sample([np.array(shape, np.int64)],
                  {"fill_value": v, "dtype": dtype, "static_shape": static})


record("full_dyn", _full_dyn, dtypes=ALL_NUMERIC, grad_order=0, dynamic_ok=False,
       errors=[([np.array([2, 3])], {"fill_value": 1.0, "dtype": None, "static_shape": [2, 4]},
                InvalidArgumentError, "does not match"),
               ([np.array([2, -3])], {"fill_value": 1.0, "dtype": None,
                                      "static_shape": [-1, -1]},
                InvalidArgumentError, "negative size"),
               ([np.array([2.0, 3.0])], {"fill_value": 1.0, "dtype": None,
                                         "static_shape": [-1, -1]},
                InvalidTypeError, "1-D integer tensor")])


def _arange_dyn(draw, dtype):
    if dtype.kind >= _dt._FLOAT:
        start, span = draw(st.floats(-5, 5)), draw(st.floats(0, 10))
        step = draw(st.sampled_from([0.5, 1.0, 1.5, -0.75]))
    else:
        start, span = draw(st.integers(-5, 5)), draw(st.integers(0, 10))
        step = draw(st.sampled_from([1, 2, 3, -1]))
    end = start + span if step > 0 else start - span
    npd = dtype.np
    return Sample([np.array(start, npd), np.array(end, npd), np.array(step, npd)],
                  {"dtype": dtype})


record("arange_dyn", _arange_dyn, dtypes=(_dt.int32, _dt.int64, _dt.float32, _dt.float64),
       grad_order=0, dynamic_ok=False,
       errors=[([np.array(0), np.array(3), np.array(0)], {"dtype": None},
                InvalidArgumentError, "'step' must not be 0"),
               ([np.array(0), np.array([3, 4]), np.array(1)], {"dtype": None},
                InvalidTypeError, "'end' must be one real number")])
