"""The int8 ops' NumPy references (fw.core.ops.int8, the specification the native
kernels are tested against) against independent oracles: the QDQ computation they
replace, in float64 from dequantized operands (records/int8.py), and plain window loops
for the pooling. The records draw power-of-two scales and biases in eighths, so both
computations are exact and must agree bit for bit (float outputs with a transcendental
activation within float32 rounding)."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from fw.core.ops import OPS
from fw.core.testing import as_tuple, load_all, reference_call

RECORDS = load_all()
NAMES = ("quantized_conv2d", "quantized_matmul", "quantized_max_pool")


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_references_match_the_qdq_oracles(data):
    name = data.draw(st.sampled_from(NAMES), label="op")
    rec = RECORDS[name][0]
    op = OPS[name]
    dtype = data.draw(st.sampled_from(rec.dtypes), label="dtype")
    s = rec.sample(data.draw, dtype)
    got, attrs = reference_call(op, s.args, dict(s.attrs))
    want = rec.oracle(*s.args, **attrs)
    (got,), (want,) = as_tuple(got), as_tuple(want)
    assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, want.shape)
    if got.dtype.kind in "iu":
        np.testing.assert_array_equal(got, want)
    else:
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
