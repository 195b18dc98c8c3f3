"""Records for random ops: shapes and dtypes only (nondeterministic=True); the
distributions themselves are tested in tests/test_random.py."""

import numpy as np
from hypothesis import strategies as st

from fw.core.errors import InvalidArgumentError, InvalidTypeError
from fw.core.testing import FLOATS, FLOATS_LOW, INTS, Sample, arrays, record, shapes

F32 = np.float32
BAD_SHAPE = ([], {"shape": [2, -1]}, InvalidArgumentError, "negative dimension")


def _rec(name, sample, dtypes=FLOATS, errors=(), **kw):
    record(name, sample, dtypes=dtypes, grad_order=0, nondeterministic=True,
           errors=list(errors), **kw)


def _seed(draw):
    return draw(st.sampled_from([0, 0, 7]))


def _uniform(draw, dtype):
    lo = draw(st.floats(-3, 3))
    return Sample([], {"shape": shapes(draw), "dtype": dtype, "min": lo,
                       "max": lo + draw(st.floats(0, 3)), "seed": _seed(draw)})


_rec("uniform", _uniform, FLOATS + FLOATS_LOW,
     errors=[BAD_SHAPE, ([], {"shape": [2], "min": 1.0, "max": 0.0}, InvalidArgumentError,
                         "'min'"),
             ([], {"shape": [2], "dtype": "int32"}, InvalidTypeError, "floating dtype")])


def _gaussian(draw, dtype):
    return Sample([], {"shape": shapes(draw), "mean": draw(st.floats(-3, 3)),
                       "std": draw(st.floats(0, 3)), "seed": _seed(draw), "dtype": dtype})


_rec("gaussian", _gaussian, FLOATS + FLOATS_LOW,
     errors=[BAD_SHAPE, ([], {"shape": [2], "std": -1.0}, InvalidArgumentError, "'std'")])


def _normal(draw, dtype):
    sm, ss = draw(st.sampled_from([((), ()), ((3,), (3,)), ((2, 1), (3,)), ((0, 2), (2,))]))
    return Sample([arrays(draw, dtype, sm), arrays(draw, dtype, ss, 0.1, 2.0)])


_rec("normal", _normal,
     errors=[([np.zeros(2, F32), np.ones(3, F32)], {}, InvalidArgumentError, "broadcast")])


def _randint(draw, dtype):
    lo = draw(st.integers(-5, 5))
    return Sample([], {"low": lo, "high": lo + draw(st.integers(1, 5)),
                       "shape": shapes(draw), "dtype": dtype})


_rec("randint", _randint, INTS,
     errors=[([], {"low": 3, "high": 3, "shape": [2]}, InvalidArgumentError, "'high'"),
             ([], {"low": 0, "high": 3, "shape": [2], "dtype": "float32"}, InvalidTypeError,
              "int32 or int64")])


def _randint_like(draw, dtype):
    return Sample([arrays(draw, dtype, shapes(draw))],
                  {"low": draw(st.integers(1, 3)), "high": draw(st.sampled_from([None, 9])),
                   "dtype": draw(st.sampled_from([None, "int32", "float64"]))})


_rec("randint_like", _randint_like, FLOATS + INTS,
     errors=[([np.ones(2, F32)], {"low": 0, "high": None}, InvalidArgumentError, "'high'")])
_rec("randperm", lambda draw, d: Sample([], {"n": draw(st.integers(0, 9)), "dtype": d}),
     INTS + FLOATS, errors=[([], {"n": -1}, InvalidArgumentError, "'n'")])


def _bernoulli(draw, dtype):
    return Sample([arrays(draw, dtype, shapes(draw), 0, 1)],
                  {"p": draw(st.sampled_from([None, None, 0.3]))})


_rec("bernoulli", _bernoulli, FLOATS,
     errors=[([np.ones(2, F32)], {"p": 1.5}, InvalidArgumentError, r"\[0, 1\]"),
             ([np.ones(2, np.int64)], {}, InvalidTypeError, "floating")])
_rec("poisson", lambda draw, d: Sample([arrays(draw, d, shapes(draw), 0, 5)]), FLOATS,
     errors=[([np.array([-1.0], F32)], {}, InvalidArgumentError, ">= 0")])


def _multinomial(draw, dtype):
    k = draw(st.integers(1, 6))
    shape = draw(st.sampled_from([(k,), (draw(st.integers(0, 3)), k)]))
    x = arrays(draw, dtype, shape, 0.05, 1)
    rep = draw(st.booleans())
    return Sample([x], {"num_samples": draw(st.integers(1, 8 if rep else k)),
                        "replacement": rep})


_rec("multinomial", _multinomial, FLOATS, dynamic_ok=False,
     errors=[([np.ones(3, F32)], {"num_samples": 4}, InvalidArgumentError, "exceeds"),
             ([np.array([0.0, 0.0], F32)], {"num_samples": 1}, InvalidArgumentError,
              "positive weight"),
             ([np.array([1.0, 0.0], F32)], {"num_samples": 2}, InvalidArgumentError,
              "at least as many"),
             ([np.ones((2, 2, 2), F32)], {}, InvalidArgumentError, "1-D or 2-D")])


def _uniform_like(draw, dtype):
    lo = draw(st.floats(-3, 3))
    return Sample([arrays(draw, dtype, shapes(draw))],
                  {"min": lo, "max": lo + draw(st.floats(0, 3)), "seed": _seed(draw)})


_rec("uniform_like", _uniform_like, FLOATS + FLOATS_LOW,
     errors=[([np.ones(2, np.int32)], {}, InvalidTypeError, "floating")])
_rec("gaussian_like", lambda draw, d: Sample([arrays(draw, d, shapes(draw))],
                                             {"mean": 1.0, "std": draw(st.floats(0, 2))}),
     FLOATS + FLOATS_LOW,
     errors=[([np.ones(2, F32)], {"std": -1.0}, InvalidArgumentError, "'std'")])
_rec("exponential", lambda draw, d: Sample([arrays(draw, d, shapes(draw))],
                                           {"lam": draw(st.floats(0.1, 5))}),
     FLOATS + FLOATS_LOW,
     errors=[([np.ones(2, F32)], {"lam": 0.0}, InvalidArgumentError, "'lam'")])
_rec("standard_gamma", lambda draw, d: Sample([arrays(draw, d, shapes(draw), 0.1, 5)]), FLOATS,
     errors=[([np.array([0.0, 1.0], F32)], {}, InvalidArgumentError, "> 0"),
             ([np.ones(2, np.int64)], {}, InvalidTypeError, "floating")])


def _binomial(draw, dtype):
    shape = shapes(draw)
    n = np.asarray(draw(st.integers(0, 20)), dtype=draw(st.sampled_from([np.int64,
                                                                          np.int32])))
    return Sample([np.broadcast_to(n, shape).copy(), arrays(draw, dtype, shape, 0, 1)])


_rec("binomial", _binomial, FLOATS,
     errors=[([np.array([3]), np.array([1.5], F32)], {}, InvalidArgumentError, r"\[0, 1\]"),
             ([np.array([-1]), np.array([0.5], F32)], {}, InvalidArgumentError, ">= 0"),
             ([np.array([2, 3]), np.ones(3, F32)], {}, InvalidArgumentError, "broadcast")])
