"""The explicit backward ops a first-order backward uses (fw.core.ops.nn_grad) give the
gradients of the differentiable re-expressions a create_graph backward records."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import fw
import fw.nn.functional as F


def _both(fn, x, g):
    xt = fw.to_tensor(x)
    xt.stop_gradient = False
    fw.seed(7)
    first = fw.grad(fn(xt), xt, fw.to_tensor(g))[0].numpy()
    fw.seed(7)
    recorded = fw.grad(fn(xt), xt, fw.to_tensor(g), create_graph=True)[0].numpy()
    return first, recorded


@pytest.mark.parametrize("fn", [
    F.relu,
    lambda x: F.dropout(x, 0.3),
    lambda x: F.dropout(x, 0.5, mode="downscale_in_infer"),
    lambda x: F.dropout(x, 0.4, axis=[0]),
], ids=["relu", "dropout", "dropout-downscale", "dropout-axis"])
@settings(max_examples=10, deadline=None)
@given(shape=hnp.array_shapes(min_dims=1, max_dims=3, max_side=6), seed=st.integers(0, 99))
def test_first_order_equals_recorded_backward(fn, shape, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape).astype(np.float32)
    g = rng.standard_normal(shape).astype(np.float32)
    first, recorded = _both(fn, x, g)
    np.testing.assert_allclose(first, recorded, rtol=1e-6, atol=1e-7)


def test_relu_grad_is_zero_at_and_below_zero():
    x = fw.to_tensor(np.array([-1.0, 0.0, 2.0], np.float32))
    x.stop_gradient = False
    F.relu(x).sum().backward()
    assert x.grad.numpy().tolist() == [0.0, 0.0, 1.0]


def test_dropout_with_p_zero_is_the_identity():
    x = fw.randn([4, 3])
    assert F.dropout(x, 0.0) is x
    assert fw.nn.Dropout(0.0)(x) is x
