"""Autograd through a static forward: one tape node per program call whose
backward runs a backward program; the gradients are the eager ones."""

import copy

import numpy as np
import pytest
from jit_testutil import assert_same

import fw

T = fw.to_tensor


class Net(fw.nn.Layer):
    def __init__(self):
        super().__init__()
        self.conv = fw.nn.Conv2D(2, 4, 3, padding=1)
        self.bn = fw.nn.BatchNorm2D(4)
        self.fc = fw.nn.Linear(4 * 5 * 5, 3)

    def forward(self, x):
        h = fw.nn.functional.relu(self.bn(self.conv(x)))
        if h.mean() > 0.1:
            h = h * 1.5
        return self.fc(h.flatten(1))


def _grads(m):
    return {n: p.grad.numpy().copy() for n, p in m.named_parameters() if p.grad is not None}


@pytest.mark.parametrize("training", [True, False])
def test_parameter_gradients_equal_eager(training):
    fw.seed(0)
    a = Net()
    b = copy.deepcopy(a)
    a.train(training)
    b.train(training)
    x = fw.randn([2, 2, 5, 5])
    y = fw.randint(0, 3, [2])
    fw.nn.functional.cross_entropy(a(x), y).backward()
    sb = fw.jit.to_static(b, full_graph=True)
    loss = fw.nn.functional.cross_entropy(sb(x), y)
    loss.backward()
    ga, gb = _grads(a), _grads(b)
    assert set(ga) == set(gb) and ga
    for k in ga:
        np.testing.assert_allclose(ga[k], gb[k], rtol=1e-5, atol=1e-6, err_msg=k)
    # batch-norm running statistics were updated by the static forward as eagerly
    assert_same(a.bn._mean, b.bn._mean)
    assert_same(a.bn._variance, b.bn._variance)


def test_input_gradients_and_unused_outputs():
    def f(x, w):
        y = fw.tanh(x @ w)
        return y.sum(), y * 2, (x > 0).astype("int64")

    x1 = T(np.random.RandomState(0).randn(3, 4).astype("float32"), stop_gradient=False)
    w1 = T(np.random.RandomState(1).randn(4, 2).astype("float32"), stop_gradient=False)
    x2 = T(x1.numpy(), stop_gradient=False)
    w2 = T(w1.numpy(), stop_gradient=False)
    s1, _, _ = f(x1, w1)
    s1.backward()
    sf = fw.jit.to_static(f, full_graph=True)
    s2, y2, m2 = sf(x2, w2)
    assert not s2.stop_gradient and m2.stop_gradient
    s2.backward()
    assert_same(x1.grad, x2.grad)
    assert_same(w1.grad, w2.grad)


def test_gradients_accumulate_over_calls_and_respect_stop_gradient():
    lin = fw.nn.Linear(3, 1)
    sf = fw.jit.to_static(lambda x: lin(x).sum(), full_graph=True)
    x = fw.ones([2, 3])
    sf(x).backward()
    sf(x).backward()
    np.testing.assert_allclose(lin.weight.grad.numpy(), np.full((3, 1), 4.0))
    lin.clear_gradients()
    lin.weight.stop_gradient = True
    sf(x).backward()
    assert np.all(lin.weight.grad.numpy() == 0) or lin.weight.grad is None
    assert float(lin.bias.grad) == 2.0


def test_no_grad_mode_records_nothing():
    lin = fw.nn.Linear(3, 1)
    sf = fw.jit.to_static(lin, full_graph=True)
    with fw.no_grad():
        out = sf(fw.ones([1, 3]))
    assert out.stop_gradient


def test_gradient_through_a_tensor_cond_in_the_program():
    def f(x):
        if x.sum() > 0:
            return (x * x).sum()
        return (x * 3).sum()

    for v in ([1.0, 2.0], [-1.0, -2.0]):
        x1 = T(v, stop_gradient=False)
        f(x1).backward()
        x2 = T(v, stop_gradient=False)
        fw.jit.to_static(f, full_graph=True)(x2).backward()
        assert_same(x1.grad, x2.grad)


def test_backward_through_a_tensor_while_loop_equals_eager():
    fw.seed(0)
    lin = fw.nn.Linear(2, 2)
    lin2 = copy.deepcopy(lin)

    def f(layer, x):
        h = layer(x)
        while h.abs().sum() > 1.0:  # trip count decided by the data
            h = fw.tanh(h) * 0.5
        return (h * h).sum()

    for v in ([[2.0, 3.0]], [[0.1, 0.2]], [[40.0, -7.0]]):
        x1 = T(v, stop_gradient=False)
        x2 = T(v, stop_gradient=False)
        f(lin, x1).backward()
        out = fw.jit.to_static(f, full_graph=True)(lin2, x2)
        out.backward()
        assert_same(x1.grad, x2.grad)
        assert_same(lin.weight.grad, lin2.weight.grad)
        assert_same(lin.bias.grad, lin2.bias.grad)
