"""Semantics of the eager engine: accumulation, hooks, retain_graph, in-place
checks, grad modes, stop_gradient propagation, anomaly mode."""

import threading

import numpy as np
import pytest

import fw
from fw.autograd import AnomalyError, GradientError
from fw.core.errors import UnsupportedError


def leaf(values, dtype="float64"):
    return fw.to_tensor(values, dtype=dtype, stop_gradient=False)


def test_install_sets_fw_core_hooks():
    from fw.core.dispatch import grad_state

    assert grad_state.available and grad_state.record is not None
    assert fw.no_grad is fw.autograd.no_grad and fw.grad is fw.autograd.grad


def test_stop_gradient_propagates_paddle_style():
    x = leaf([1.0, 2.0])
    c = fw.to_tensor([3.0, 4.0])
    assert c.stop_gradient
    y = x * c
    assert not y.stop_gradient and not y.is_leaf
    z = c * 2.0
    assert z.stop_gradient and z.is_leaf
    # integer results never require grad
    assert fw.argmax(y).stop_gradient
    assert (y > 1).stop_gradient


def test_backward_accumulates_into_leaves():
    x = leaf([1.0, 2.0, 3.0])
    for k in range(1, 4):
        (x * x).sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), k * 2 * np.array([1.0, 2.0, 3.0]))
    x.clear_grad()
    assert x.grad is None
    (x * 3).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [3.0, 3.0, 3.0])
    x.clear_gradient()  # Paddle's default: set to zero in place
    np.testing.assert_allclose(x.grad.numpy(), [0.0, 0.0, 0.0])


def test_grads_of_shared_inputs_are_not_aliased():
    x = leaf([1.0, 2.0])
    y = leaf([3.0, 4.0])
    (x + y).sum().backward()
    x.clear_gradient()  # zeroes x.grad in place: must not touch y.grad
    np.testing.assert_allclose(y.grad.numpy(), [1.0, 1.0])


def test_broadcast_gradients_are_summed_and_cast():
    x = leaf([[1.0, 2.0, 3.0]], "float32")  # [1, 3]
    b = leaf([10.0], "float64")  # promoted to float64 through a differentiable cast
    y = x * fw.ones([4, 3], dtype="float32") + b
    y.sum().backward()
    assert x.grad.shape == [1, 3] and x.grad.dtype == fw.float32
    np.testing.assert_allclose(x.grad.numpy(), [[4.0, 4.0, 4.0]])
    assert b.grad.shape == [1] and b.grad.dtype == fw.float64
    np.testing.assert_allclose(b.grad.numpy(), [12.0])


def test_non_scalar_backward_uses_ones_like_paddle():
    x = leaf([1.0, 2.0])
    (x * x).backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 4.0])
    x.clear_grad()
    (x * x).backward(fw.to_tensor([1.0, 0.5], dtype="float64"))
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 2.0])


def test_backward_of_stop_gradient_tensor_raises():
    with pytest.raises(GradientError, match="does not require grad"):
        fw.to_tensor([1.0]).backward()


def test_second_backward_without_retain_graph_raises():
    x = leaf([1.0, 2.0])
    y = (x * x).sum()
    y.backward()
    with pytest.raises(GradientError, match="second time.*retain_graph=True"):
        y.backward()
    z = (x.exp()).sum()
    z.backward(retain_graph=True)
    z.backward()  # the graph was kept
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.exp([1.0, 2.0]) + 2 * np.array([1.0, 2.0]))


def test_inplace_modification_of_saved_tensor_raises():
    x = leaf([1.0, 2.0])
    h = x * 2  # a non-leaf
    y = h * h  # saves h
    h.add_(fw.to_tensor([1.0, 1.0], dtype="float64"))
    with pytest.raises(GradientError, match="multiply.*modified by an in-place operation"):
        y.sum().backward()


def test_inplace_op_rebases_history():
    x = leaf([1.0, 2.0])
    h = x * 2
    h.exp_()  # h = exp(2x), history moves onto h
    assert not h.stop_gradient
    h.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.exp(2 * np.array([1.0, 2.0])))


def test_inplace_on_leaf_requiring_grad_raises():
    x = leaf([1.0, 2.0])
    with pytest.raises(Exception, match="leaf tensor that requires grad"):
        x.exp_()


def test_detach_cuts_the_graph():
    x = leaf([1.0, 2.0])
    d = (x * 3).detach()
    assert d.stop_gradient and d.is_leaf
    y = (x * d).sum()
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), [3.0, 6.0])


def test_hooks_on_leaf_and_non_leaf():
    x = leaf([1.0, 2.0])
    seen = []
    h1 = x.register_hook(lambda g: seen.append(g.numpy().tolist()))
    y = x * 3
    h2 = y.register_hook(lambda g: g * 10)  # replaces the gradient flowing back
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [30.0, 30.0])
    assert seen == [[30.0, 30.0]]
    assert h1.remove() and h2.remove()
    x.clear_grad()
    (x * 3).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [3.0, 3.0])
    assert len(seen) == 1


def test_leaf_hook_sees_the_total_gradient_once():
    x = leaf([1.0])
    calls = []
    x.register_hook(lambda g: calls.append(float(g)))
    (x * 2 + x * 3).sum().backward()
    assert calls == [5.0]


def test_retain_grads_on_non_leaf():
    x = leaf([1.0, 2.0])
    y = x * x
    y.retain_grads()
    z = x * x
    (y * 2 + z).sum().backward()
    np.testing.assert_allclose(y.grad.numpy(), [2.0, 2.0])
    assert z.grad is None


def test_no_grad_enable_grad_set_grad_enabled():
    x = leaf([1.0])
    with fw.no_grad():
        assert not fw.is_grad_enabled()
        y = x * 2
        with fw.enable_grad():
            z = x * 2
    assert y.stop_gradient and not z.stop_gradient
    assert fw.is_grad_enabled()

    @fw.no_grad()
    def f(t):
        return t * 2

    @fw.no_grad
    def f2(t):
        return t * 2

    assert f(x).stop_gradient and f2(x).stop_gradient
    fw.set_grad_enabled(False)  # takes effect at once, like Paddle's
    assert not fw.is_grad_enabled() and (x * 2).stop_gradient
    fw.set_grad_enabled(True)
    assert fw.is_grad_enabled()
    with fw.set_grad_enabled(False):
        assert (x * 2).stop_gradient
    assert fw.is_grad_enabled()


def test_no_grad_decorates_generators():
    x = leaf([1.0])

    @fw.no_grad()
    def gen():
        yield x * 2
        yield x * 3

    assert all(t.stop_gradient for t in gen())
    assert fw.is_grad_enabled()


def test_grad_mode_is_thread_local():
    x = leaf([1.0])
    results = {}
    entered = threading.Event()
    release = threading.Event()

    def other():
        entered.wait()
        results["other"] = (x * 2).stop_gradient  # this thread's mode: enabled
        release.set()

    t = threading.Thread(target=other)
    t.start()
    with fw.no_grad():
        entered.set()
        release.wait(10)
        results["main"] = (x * 2).stop_gradient
    t.join()
    assert results == {"other": False, "main": True}


def test_fw_grad_functional():
    x = leaf([1.0, 2.0])
    y = leaf([3.0])
    z = (x * x * y).sum()
    gx, gy = fw.grad(z, [x, y], retain_graph=True)
    np.testing.assert_allclose(gx.numpy(), [6.0, 12.0])
    np.testing.assert_allclose(gy.numpy(), [5.0])
    assert x.grad is None  # fw.grad does not accumulate
    w = leaf([1.0])
    with pytest.raises(GradientError, match="not reachable"):
        fw.grad(z, [w], retain_graph=True)
    (gw,) = fw.grad(z, [w], allow_unused=True, retain_graph=True)
    assert gw is None
    # a non-leaf input
    h = x * 2
    out = (h * h).sum()
    (gh,) = fw.grad(out, h)
    np.testing.assert_allclose(gh.numpy(), [4.0, 8.0])


def test_fw_grad_no_grad_vars():
    x = leaf([2.0])
    h = x * x
    y = h * x
    (g,) = fw.grad(y, x, no_grad_vars=[h])  # h is treated as a constant
    np.testing.assert_allclose(g.numpy(), [4.0])


def test_missing_rule_raises_clearly(monkeypatch):
    from fw.autograd.rules import RULES

    monkeypatch.delitem(RULES, "sin")
    x = leaf([1.0])
    y = fw.sin(x)
    with pytest.raises(UnsupportedError, match="sin: no gradient rule"):
        y.sum().backward()


def test_multi_output_op_gradients():
    x = leaf([[3.0, 1.0, 2.0]])
    v, i = fw.topk(x, k=2)
    assert i.stop_gradient and not v.stop_gradient
    (v * fw.to_tensor([[1.0, 10.0]], dtype="float64")).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [[1.0, 0.0, 10.0]])
    y = leaf([1.0, 2.0, 3.0, 4.0])
    a, b = fw.split(y, 2)
    (a * 2).sum().backward()  # b got no gradient: zeros flow for it
    np.testing.assert_allclose(y.grad.numpy(), [2.0, 2.0, 0.0, 0.0])


def test_anomaly_mode_names_the_op_and_line():
    x = leaf([0.0, 1.0])
    with fw.autograd.detect_anomaly():
        y = fw.sqrt(x)  # sqrt'(0) = inf
        with pytest.raises(AnomalyError, match=r"(?s)sqrt.*test_engine\.py:\d+"):
            y.sum().backward()
    assert not fw.autograd.is_anomaly_enabled()
    # without anomaly mode the inf just flows
    fw.sqrt(x).sum().backward()
    assert np.isinf(x.grad.numpy()[0])


def test_set_detect_anomaly_flag():
    fw.autograd.set_detect_anomaly(True)
    try:
        assert fw.autograd.is_anomaly_enabled()
        x = leaf([-1.0])
        z = (fw.exp(x) + fw.sqrt(x)).sum()  # sqrt(-1) is NaN, and so is its gradient
        with pytest.raises(AnomalyError, match="backward of 'sqrt' produced NaN"):
            z.backward()
    finally:
        fw.autograd.set_detect_anomaly(False)
    assert not fw.autograd.is_anomaly_enabled()


def test_backward_many_roots():
    x = leaf([1.0, 2.0])
    a = (x * 2).sum()
    b = (x * x).sum()
    fw.autograd.backward([a, b], [None, fw.to_tensor(3.0, dtype="float64")])
    np.testing.assert_allclose(x.grad.numpy(), [2 + 6.0, 2 + 12.0])
    with pytest.raises(GradientError, match="same tensor twice"):
        c = (x * 2).sum()
        fw.autograd.backward([c, c])


def test_leaf_as_root():
    x = leaf([1.0, 2.0])
    x.backward()
    np.testing.assert_allclose(x.grad.numpy(), [1.0, 1.0])


def test_backward_op_callback_runs_between_ops_and_is_removable():
    """register_backward_op_callback: called once before each backward op (here
    mul, sum and the add of two branches: 3 nodes), never after removal."""
    import pytest

    import fw
    from fw.autograd import register_backward_op_callback

    calls = []
    x = fw.to_tensor([1.0, 2.0], stop_gradient=False)
    h = register_backward_op_callback(lambda: calls.append(len(calls)))
    y = (x * 3.0 + x).sum()
    y.backward()
    assert len(calls) == 3, calls
    assert x.grad.tolist() == [4.0, 4.0]
    assert h.remove() is True and h.remove() is False
    (x * 2.0).sum().backward()
    assert len(calls) == 3
    with pytest.raises(TypeError, match="register_backward_op_callback: fn must be callable"):
        register_backward_op_callback(3)
