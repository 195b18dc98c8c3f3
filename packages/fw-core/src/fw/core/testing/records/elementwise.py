"""Records for elementwise ops."""

import numpy as np

from fw.core import dtypes as _dt
from fw.core.errors import InvalidArgumentError
from fw.core.testing import ALL_NUMERIC, FLOATS, Sample, arrays, broadcast_pair, record, shapes


def binary(lo=-3.0, hi=3.0, special=False, y_lo=None, y_hi=None):
    def sample(draw, dtype):
        sx, sy = broadcast_pair(draw)
        return Sample([arrays(draw, dtype, sx, lo, hi, special),
                       arrays(draw, dtype, sy, y_lo if y_lo is not None else lo,
                              y_hi if y_hi is not None else hi, special)])
    return sample


def unary(lo=-3.0, hi=3.0, special=False):
    def sample(draw, dtype):
        return Sample([arrays(draw, dtype, shapes(draw), lo, hi, special)])
    return sample


BAD_BROADCAST = ([np.ones((2, 3), np.float32), np.ones((4, 3), np.float32)], {},
                 InvalidArgumentError, "cannot broadcast")

record("add", binary(special=True), dtypes=ALL_NUMERIC + (_dt.float16,), grad_order=2,
       errors=[BAD_BROADCAST])
record("subtract", binary(special=True), dtypes=ALL_NUMERIC, grad_order=2, errors=[BAD_BROADCAST])
record("multiply", binary(special=True), dtypes=ALL_NUMERIC, grad_order=2, errors=[BAD_BROADCAST])
record("divide", binary(y_lo=0.5, y_hi=3.0), dtypes=FLOATS, grad_order=2, errors=[BAD_BROADCAST])
record("neg", unary(special=True), dtypes=ALL_NUMERIC, grad_order=2)
record("exp", unary(), dtypes=FLOATS, grad_order=2)
record("log", unary(0.1, 5.0), dtypes=FLOATS, grad_order=2)
record("tanh", unary(), dtypes=FLOATS, grad_order=2)
record("equal", binary(), dtypes=ALL_NUMERIC, grad_order=0, errors=[BAD_BROADCAST])
record("less_than", binary(), dtypes=ALL_NUMERIC, grad_order=0, errors=[BAD_BROADCAST])
