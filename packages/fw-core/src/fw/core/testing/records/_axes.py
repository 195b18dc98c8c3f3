"""Axis samplers and error cases shared by the reduce, cumulative and statistics
records."""

import numpy as np
from hypothesis import strategies as st

from fw.core import dtypes as _dt
from fw.core.errors import InvalidArgumentError
from fw.core.testing import Sample, arrays, shapes

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


BAD_AXIS = ([[1.0, 2.0]], {"axis": 3}, InvalidArgumentError, "out of range")
EMPTY_MAX = ([np.ones((2, 0), F32)], {"axis": 1}, InvalidArgumentError, "zero elements")
