"""Records for the activation ops (fw.core.ops.activation)."""

import numpy as np
from hypothesis import strategies as st

from fw.core.errors import InvalidArgumentError, InvalidTypeError
from fw.core.testing import FLOATS, FLOATS_LOW, Sample, arrays, record, shapes

F32 = np.float32
ALL_F = FLOATS + FLOATS_LOW
X23 = np.linspace(-2, 2, 6, dtype=F32).reshape(2, 3)
COMPLEX_X = ([np.ones((2, 2), np.complex64)], {}, InvalidTypeError, "real floating")


def _floats(lo, hi):
    return st.floats(lo, hi, allow_nan=False)


def unary(lo=-3.0, hi=3.0, special=True, **attr_strategies):
    def sample(draw, dtype):
        attrs = {k: draw(s) for k, s in attr_strategies.items()}
        return Sample([arrays(draw, dtype, shapes(draw), lo, hi, special)], attrs)

    return sample


def _rec(op, sample, errors=(), dtypes=ALL_F, **kw):
    record(op, sample, dtypes=dtypes, errors=list(errors), **kw)


_rec("relu", unary(), grad_order=2)
_rec("relu6", unary(-8, 8), grad_order=2)
_rec("leaky_relu", unary(negative_slope=_floats(0, 0.5)), grad_order=2,
     errors=[([X23], {"negative_slope": "a"}, InvalidArgumentError, "could not convert")])
_rec("elu", unary(alpha=_floats(0.1, 2)), grad_order=2)
_rec("celu", unary(alpha=st.sampled_from([0.2, 1.0, 2.5, -1.0])), grad_order=2,
     errors=[([X23], {"alpha": 0.0}, InvalidArgumentError, "'alpha' must not be 0")])
_rec("selu", unary(scale=_floats(1.01, 2), alpha=_floats(0, 2)), grad_order=2,
     errors=[([X23], {"scale": 0.5}, InvalidArgumentError, "'scale' must be > 1"),
             ([X23], {"alpha": -1.0}, InvalidArgumentError, "'alpha' must be >= 0")])
_rec("gelu", unary(approximate=st.booleans()), grad_order=2, errors=[COMPLEX_X])
_rec("silu", unary(), grad_order=2)
_rec("mish", unary(-25, 25), grad_order=2)
_rec("hardswish", unary(-5, 5), grad_order=2)
_rec("hardsigmoid", unary(-8, 8, slope=_floats(0.05, 0.5), offset=_floats(-0.5, 1)),
     grad_order=2)
_rec("hardtanh", unary(min=_floats(-2, 0), max=_floats(0, 2)), grad_order=2,
     errors=[([X23], {"min": 1.0, "max": -1.0}, InvalidArgumentError, "must be <=")])
_rec("hardshrink", unary(threshold=_floats(0, 1)), grad_order=2)
_rec("softshrink", unary(threshold=_floats(0, 1)), grad_order=2,
     errors=[([X23], {"threshold": -0.5}, InvalidArgumentError, "'threshold' must be >= 0")])
_rec("softplus", unary(-30, 30, beta=_floats(0.5, 3), threshold=_floats(1, 20)), grad_order=2,
     errors=[([X23], {"beta": 0.0}, InvalidArgumentError, "'beta' must not be 0")])
_rec("softsign", unary(), grad_order=2)
_rec("tanhshrink", unary(), grad_order=2)
_rec("log_sigmoid", unary(-40, 40), grad_order=2)
_rec("thresholded_relu", unary(threshold=_floats(-1, 1), value=_floats(-1, 1)), grad_order=2)


# ---------------------------------------------------------------- prelu / rrelu
def _prelu(draw, dtype):
    shape = shapes(draw, min_dims=1, max_dims=4)
    cl = draw(st.booleans())
    c = shape[-1 if cl else (1 if len(shape) > 1 else 0)]
    n = 1 if len(shape) < 2 or draw(st.booleans()) else c
    return Sample([arrays(draw, dtype, shape, special=True),
                   arrays(draw, dtype, (n,), 0.0, 0.5)], {"channel_last": cl})


_rec("prelu", _prelu, grad_order=2,
     errors=[([np.ones((2, 3, 4), F32), np.ones(2, F32)], {}, InvalidArgumentError,
              "one per channel")])


def _rrelu(draw, dtype):
    lo = draw(_floats(0, 0.5))
    hi = draw(_floats(lo, 1))
    return Sample([arrays(draw, dtype, shapes(draw))],
                  {"lower": lo, "upper": hi, "training": draw(st.booleans())})


_rec("rrelu", _rrelu, dtypes=FLOATS, grad_order=0, nondeterministic=True,
     errors=[([X23], {"lower": 0.5, "upper": 0.2}, InvalidArgumentError, "lower <= upper")])


# ---------------------------------------------------------------- maxout / glu / swiglu
def _maxout(draw, dtype):
    g = draw(st.integers(1, 3))
    nd = draw(st.integers(2, 4))
    axis = draw(st.sampled_from([1, -1]))
    shape = [draw(st.integers(0, 3)) for _ in range(nd)]
    shape[axis] = g * draw(st.integers(1, 2))
    return Sample([arrays(draw, dtype, tuple(shape), unique=True)], {"groups": g, "axis": axis})


_rec("maxout", _maxout, grad_order=1,
     errors=[([np.ones((2, 3, 4), F32)], {"groups": 2}, InvalidArgumentError,
              "'groups'=2 does not divide")])


def _halves(draw, dtype):
    shape = list(shapes(draw, min_dims=1))
    axis = draw(st.integers(-len(shape), len(shape) - 1))
    shape[axis] = 2 * draw(st.integers(0, 3))
    return Sample([arrays(draw, dtype, tuple(shape), -5, 5)], {"axis": axis})


_rec("glu", _halves, grad_order=2,
     errors=[([np.ones((2, 3), F32)], {"axis": 1}, InvalidArgumentError, "must be even")])


def _swiglu(draw, dtype):
    shape = list(shapes(draw, min_dims=1))
    if draw(st.booleans()):
        return Sample([arrays(draw, dtype, tuple(shape)), arrays(draw, dtype, tuple(shape))])
    shape[-1] = 2 * draw(st.integers(0, 3))
    return Sample([arrays(draw, dtype, tuple(shape)), None])


_rec("swiglu", _swiglu, grad_order=2,
     errors=[([np.ones((2, 3), F32), np.ones((2, 4), F32)], {}, InvalidArgumentError,
              "one shape")])


# ---------------------------------------------------------------- softmax family
def _softmax(draw, dtype):
    shape = shapes(draw, min_dims=1)
    return Sample([arrays(draw, dtype, shape, -10, 10, special=True)],
                  {"axis": draw(st.integers(-len(shape), len(shape) - 1))})


BAD_AXIS = ([X23], {"axis": 2}, InvalidArgumentError, "out of range")
_rec("softmax", _softmax, grad_order=2, errors=[BAD_AXIS])
_rec("log_softmax", _softmax, grad_order=2, errors=[BAD_AXIS])


def _gumbel(draw, dtype):
    s = _softmax(draw, dtype)
    s.attrs.update(temperature=draw(_floats(0.1, 2)), hard=draw(st.booleans()))
    return s


_rec("gumbel_softmax", _gumbel, dtypes=FLOATS, grad_order=0, nondeterministic=True,
     errors=[([X23], {"temperature": 0.0}, InvalidArgumentError, "'temperature' must be > 0")])
