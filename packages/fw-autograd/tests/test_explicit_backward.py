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
    fw.tanh,
    F.sigmoid,
    lambda x: fw.tanh(fw.sigmoid(x) * 3.0),
], ids=["relu", "dropout", "dropout-downscale", "dropout-axis", "tanh", "sigmoid",
        "tanh-of-sigmoid"])
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


def test_tanh_and_sigmoid_first_order_use_one_explicit_op_on_real_tensors_only():
    from fw.core.ir import TensorType, building

    for fn, name in ((fw.tanh, "tanh_grad"), (fw.nn.functional.sigmoid, "sigmoid_grad")):
        with building() as b:
            x = b.add_input(TensorType([3], "float32"), "x")
            (g,) = fw.grad(fn(x).sum(), x)
            b.set_outputs([g])
        assert [op.name for op in b.program.walk()].count(name) == 1
        with building() as b:  # a recorded backward keeps the differentiable form
            x = b.add_input(TensorType([3], "float32"), "x")
            (g,) = fw.grad(fn(x).sum(), x, create_graph=True)
            b.set_outputs([g])
        assert name not in [op.name for op in b.program.walk()]
    z = fw.to_tensor(np.array([0.5 + 1j, -0.2 + 0.3j], np.complex64))
    z.stop_gradient = False
    fw.tanh(z).abs().sum().backward()  # complex: the conjugate rule, not the real op
    zt = z.numpy()
    d = 1 - np.tanh(zt) ** 2
    t = np.tanh(zt)
    np.testing.assert_allclose(z.grad.numpy(), np.conj(d) * t / np.abs(t), rtol=1e-5)
