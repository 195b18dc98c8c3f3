"""Records for reductions."""

from hypothesis import strategies as st

from fw.core.errors import InvalidArgumentError
from fw.core.testing import ALL_NUMERIC, FLOATS, Sample, arrays, record, shapes


def axis_sample(draw, dtype, lo=-3.0, hi=3.0, extra=None, min_dims=0):
    shape = shapes(draw, min_dims=min_dims)
    nd = len(shape)
    if nd == 0:
        axis = draw(st.sampled_from([None]))
    else:
        axis = draw(st.one_of(st.none(), st.integers(-nd, nd - 1),
                              st.lists(st.integers(0, nd - 1), min_size=1, max_size=nd,
                                       unique=True)))
    attrs = {"axis": axis, "keepdim": draw(st.booleans())}
    if extra:
        attrs.update(extra)
    return Sample([arrays(draw, dtype, shape, lo, hi)], attrs)


BAD_AXIS = ([[1.0, 2.0]], {"axis": 3}, InvalidArgumentError, "out of range")

record("sum", lambda draw, d: axis_sample(draw, d, extra={"dtype": None}), dtypes=ALL_NUMERIC,
       grad_order=2, errors=[BAD_AXIS])
record("mean", axis_sample, dtypes=FLOATS, grad_order=2, errors=[BAD_AXIS])
