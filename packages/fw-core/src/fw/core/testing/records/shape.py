"""Records for shape ops."""

import numpy as np
from hypothesis import strategies as st

from fw.core.errors import InvalidArgumentError
from fw.core.testing import ALL_NUMERIC, Sample, arrays, record, shapes


def _reshape(draw, dtype):
    shape = shapes(draw, min_side=1)
    n = int(np.prod(shape))
    # a factorisation of n, with maybe one -1
    dims = []
    rest = n
    for f in (2, 3, 5):
        while rest % f == 0 and draw(st.booleans()):
            dims.append(f)
            rest //= f
    dims.append(rest)
    draw(st.randoms()).shuffle(dims)
    if draw(st.booleans()):
        dims[draw(st.integers(0, len(dims) - 1))] = -1
    return Sample([arrays(draw, dtype, shape)], {"shape": dims})


record("reshape", _reshape, dtypes=ALL_NUMERIC, grad_order=2, dynamic_ok=False,
       errors=[([np.ones((2, 3))], {"shape": [4, 2]}, InvalidArgumentError, "cannot reshape"),
               ([np.ones((2, 3))], {"shape": [-1, -1]}, InvalidArgumentError, "more than one")])


def _transpose(draw, dtype):
    shape = shapes(draw)
    perm = list(range(len(shape)))
    draw(st.randoms()).shuffle(perm)
    return Sample([arrays(draw, dtype, shape)], {"perm": perm})


record("transpose", _transpose, dtypes=ALL_NUMERIC, grad_order=2,
       errors=[([np.ones((2, 3))], {"perm": [0, 0]}, InvalidArgumentError, "not a permutation")])
