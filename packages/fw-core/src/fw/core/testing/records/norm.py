"""Records for the normalization ops (fw.core.ops.norm)."""

import numpy as np
from hypothesis import strategies as st

from fw.core import dtypes as _dt
from fw.core.errors import InvalidArgumentError, InvalidTypeError
from fw.core.testing import FLOATS, FLOATS_LOW, Sample, arrays, record, shapes

F32 = np.float32
ALL_F = FLOATS + FLOATS_LOW
LOW_TOL = {"float16": (2e-2, 2e-2), "bfloat16": (6e-2, 6e-2)}


def _nc(draw, min_dims=2, max_dims=5, cmax=4):
    nd = draw(st.integers(min_dims, max_dims))
    shape = [draw(st.integers(1 if i == 1 else 0, 3 if i < 2 else 4)) for i in range(nd)]
    shape[1] = draw(st.integers(1, cmax))
    cl = nd > 2 and draw(st.booleans())
    if cl:
        shape = [shape[0]] + shape[2:] + [shape[1]]
    return tuple(shape), cl


def _maybe(draw, dtype, shape, lo=-2.0, hi=2.0):
    return arrays(draw, dtype, shape, lo, hi) if draw(st.booleans()) else None


def _batch_norm(draw, dtype):
    shape, cl = _nc(draw)
    c = shape[-1 if cl else 1]
    sd = _dt.float32 if dtype.itemsize < 4 else dtype
    return Sample([arrays(draw, dtype, shape), arrays(draw, sd, (c,)),
                   arrays(draw, sd, (c,), 0.1, 2.0), _maybe(draw, sd, (c,)),
                   _maybe(draw, sd, (c,))],
                  {"training": draw(st.booleans()), "momentum": draw(st.floats(0, 1)),
                   "epsilon": draw(st.sampled_from([1e-5, 1e-3])), "channel_last": cl,
                   "use_global_stats": draw(st.sampled_from([None, True, False]))})


X = np.ones((2, 3, 4), F32)
V3 = np.ones(3, F32)
record("batch_norm", _batch_norm, dtypes=ALL_F, grad_order=2, tol=LOW_TOL,
       errors=[([X, np.ones(2, F32), V3, None, None], {}, InvalidArgumentError,
                "'running_mean' \\[2\\] must have 3 elements"),
               ([np.ones(3, F32), V3, V3, None, None], {}, InvalidArgumentError,
                "at least 2 dimensions"),
               ([X, V3, V3, np.ones(4, F32), None], {}, InvalidArgumentError, "'weight'")])


def _layer_norm(draw, dtype):
    shape = shapes(draw, min_dims=1, max_dims=4)
    nd = len(shape)
    b = draw(st.integers(0, nd - 1))
    begin = b if draw(st.booleans()) else b - nd
    norm = shape[b:]
    flat = draw(st.booleans())
    pshape = (int(np.prod(norm)),) if flat else norm
    return Sample([arrays(draw, dtype, shape), _maybe(draw, dtype, pshape),
                   _maybe(draw, dtype, pshape)],
                  {"epsilon": draw(st.sampled_from([1e-5, 1e-2])), "begin_norm_axis": begin})


LN_ERRORS = [([X, np.ones(5, F32), None], {"begin_norm_axis": 2}, InvalidArgumentError,
              "must have 4 elements"),
             ([X, None, None], {"begin_norm_axis": 4}, InvalidArgumentError, "out of range"),
             ([X, None, None], {"begin_norm_axis": 3}, InvalidArgumentError, "leaves no axis")]
record("layer_norm", _layer_norm, dtypes=ALL_F, grad_order=2, tol=LOW_TOL, errors=LN_ERRORS)
record("rms_norm", _layer_norm, dtypes=ALL_F, grad_order=2, tol=LOW_TOL, errors=LN_ERRORS)


def _group_norm(draw, dtype):
    shape, cl = _nc(draw, cmax=2)
    c = shape[-1 if cl else 1]
    g = draw(st.integers(1, 3))
    shape = list(shape)
    shape[-1 if cl else 1] = c * g
    c = c * g
    return Sample([arrays(draw, dtype, tuple(shape)), _maybe(draw, dtype, (c,)),
                   _maybe(draw, dtype, (c,))],
                  {"num_groups": g, "epsilon": 1e-5, "channel_last": cl})


record("group_norm", _group_norm, dtypes=ALL_F, grad_order=2, tol=LOW_TOL,
       errors=[([np.ones((2, 6, 2), F32), None, None], {"num_groups": 4}, InvalidArgumentError,
                "must be positive and divide the 6 channels"),
               ([np.ones((2, 6, 2), F32), None, None], {}, InvalidArgumentError,
                "'num_groups' is required")])


def _instance_norm(draw, dtype):
    shape, cl = _nc(draw, min_dims=3)
    c = shape[-1 if cl else 1]
    return Sample([arrays(draw, dtype, shape), _maybe(draw, dtype, (c,)),
                   _maybe(draw, dtype, (c,))], {"epsilon": 1e-5, "channel_last": cl})


record("instance_norm", _instance_norm, dtypes=ALL_F, grad_order=2, tol=LOW_TOL,
       errors=[([X, np.ones(4, F32), None], {}, InvalidArgumentError, "one per channel"),
               ([X.astype(np.complex64), None, None], {}, InvalidTypeError, "real floating")])


def _lrn(draw, dtype):
    shape, cl = _nc(draw, min_dims=3, cmax=5)
    return Sample([arrays(draw, dtype, shape)],
                  {"size": draw(st.integers(1, 5)), "alpha": draw(st.sampled_from([1e-4, 0.1])),
                   "beta": draw(st.sampled_from([0.75, 0.5])), "k": draw(st.sampled_from([1., 2.])),
                   "channel_last": cl})


record("local_response_norm", _lrn, dtypes=ALL_F, grad_order=2, tol=LOW_TOL,
       errors=[([X], {"size": 0}, InvalidArgumentError, "'size' must be >= 1"),
               ([np.ones((2, 3), F32)], {"size": 2}, InvalidArgumentError, "at least 3")])


def _normalize(draw, dtype):
    shape = shapes(draw, min_dims=1)
    return Sample([arrays(draw, dtype, shape)],
                  {"p": draw(st.sampled_from([2.0, 1.0, 3.0, 1.5, float("inf")])),
                   "axis": draw(st.integers(-len(shape), len(shape) - 1)),
                   "epsilon": draw(st.sampled_from([1e-12, 1e-3]))})


record("normalize", _normalize, dtypes=ALL_F, grad_order=2, tol=LOW_TOL,
       errors=[([X], {"axis": 3}, InvalidArgumentError, "out of range"),
               ([X], {"p": 0.0}, InvalidArgumentError, "'p' must be > 0")])
