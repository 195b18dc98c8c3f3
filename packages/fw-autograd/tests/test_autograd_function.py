"""fw.autograd.Function (Paddle 3.3's alias of PyLayer) and saved_tensors_hooks."""

import numpy as np
import pytest

import fw
from fw.autograd import Function, PyLayer, saved_tensors_hooks
from fw.autograd.errors import GradientError


def test_function_is_pylayer():
    assert Function is PyLayer

    class Scale(Function):
        @staticmethod
        def forward(ctx, x, k):
            ctx.save_for_backward(x)
            ctx.k = k
            return x * k

        @staticmethod
        def backward(ctx, dy):
            (x,) = ctx.saved_tensor()
            return dy * ctx.k

    x = fw.to_tensor([1.0, 2.0], stop_gradient=False)
    Scale.apply(x, 3.0).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [3.0, 3.0])


def test_hooks_see_op_inputs_and_backward_uses_unpacked():
    packed, unpacked = [], []

    def pack(t):
        packed.append(t.shape)
        return t.numpy().copy()

    def unpack(a):
        unpacked.append(a.shape)
        return fw.to_tensor(a)

    x = fw.to_tensor([1.0, 2.0, 3.0], stop_gradient=False)
    with saved_tensors_hooks(pack, unpack):
        y = (x * x).sum()  # multiply saves both inputs
    assert len(packed) >= 2
    y.backward()
    assert len(unpacked) >= 2
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 4.0, 6.0])


def test_hooks_can_substitute_the_saved_value():
    # the backward pass uses what unpack returns: prove it by returning a different value
    x = fw.to_tensor([1.0, 2.0], stop_gradient=False)
    with saved_tensors_hooks(lambda t: t, lambda t: t * 10):
        y = (x * x).sum()
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), [20.0, 40.0])


def test_hooks_apply_to_pylayer_save_for_backward():
    log = []

    class Cube(PyLayer):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x * x

        @staticmethod
        def backward(ctx, dy):
            (x,) = ctx.saved_tensor()
            return dy * 3 * x * x

    x = fw.to_tensor([2.0], stop_gradient=False)
    with saved_tensors_hooks(lambda t: log.append("pack") or t.numpy(),
                             lambda a: log.append("unpack") or fw.to_tensor(a)):
        y = Cube.apply(x)
    assert "pack" in log and "unpack" not in log
    y.backward()
    assert "unpack" in log
    np.testing.assert_allclose(x.grad.numpy(), [12.0])


def test_hooks_scope_and_nesting():
    calls = []
    x = fw.to_tensor([1.0], stop_gradient=False)
    with saved_tensors_hooks(lambda t: calls.append("outer") or t, lambda t: t):
        with saved_tensors_hooks(lambda t: calls.append("inner") or t, lambda t: t):
            (x * x).sum()
        assert set(calls) == {"inner"}
        (x * x).sum()
        assert "outer" in calls
    n = len(calls)
    (x * x).sum().backward()
    assert len(calls) == n  # outside the context nothing is packed


def test_bad_unpack_result_is_an_error():
    x = fw.to_tensor([1.0, 2.0], stop_gradient=False)
    with saved_tensors_hooks(lambda t: t, lambda t: fw.ones([3])):
        y = (x * x).sum()
    with pytest.raises(GradientError, match="unpack_hook returned a tensor of shape"):
        y.backward()
    with pytest.raises(TypeError, match="callable"):
        saved_tensors_hooks(1, 2)


def test_docstring_examples(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # examples may write files: never into the checkout
    import doctest

    from fw.autograd import _saved_hooks

    result = doctest.testmod(_saved_hooks,
                             optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0
