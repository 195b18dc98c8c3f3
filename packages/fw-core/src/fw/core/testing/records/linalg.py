"""Records for linear algebra ops."""

import numpy as np
from hypothesis import strategies as st

from fw.core.errors import InvalidArgumentError
from fw.core.testing import FLOATS, Sample, arrays, record


def _matmul(draw, dtype):
    m, k, n = (draw(st.integers(1, 6)) for _ in range(3))
    batch = draw(st.sampled_from([(), (2,), (3, 1)]))
    tx, ty = draw(st.booleans()), draw(st.booleans())
    xs = batch + ((k, m) if tx else (m, k))
    yb = draw(st.sampled_from([(), batch]))
    ys = yb + ((n, k) if ty else (k, n))
    if draw(st.integers(0, 5)) == 0:  # vector operands
        xs, tx = (k,), False
    return Sample([arrays(draw, dtype, xs), arrays(draw, dtype, ys)],
                  {"transpose_x": tx, "transpose_y": ty})


record("matmul", _matmul, dtypes=FLOATS, grad_order=2,
       errors=[([np.ones((2, 3), np.float32), np.ones((4, 5), np.float32)], {},
                InvalidArgumentError, "contracted dimensions differ")])
