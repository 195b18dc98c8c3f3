"""PyLayer and recompute (gradient checkpointing)."""

import numpy as np
import pytest

import fw
from fw.autograd import GradientError, PyLayer


class Tanh(PyLayer):
    @staticmethod
    def forward(ctx, x, scale=1.0):
        y = fw.tanh(x) * scale
        ctx.scale = scale
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, dy):
        (y,) = ctx.saved_tensor()
        s = ctx.scale
        return dy * (s - y * y / s)


def test_pylayer_first_order():
    xv = np.array([0.1, -0.5, 2.0])
    x = fw.to_tensor(xv, stop_gradient=False)
    y = Tanh.apply(x, scale=2.0)
    assert not y.stop_gradient
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * (1 - np.tanh(xv) ** 2))


def test_pylayer_second_order_through_fw_ops():
    xv = np.array([0.1, -0.5, 2.0])
    x = fw.to_tensor(xv, stop_gradient=False)
    (g,) = fw.grad(Tanh.apply(x).sum(), x, create_graph=True)
    (h,) = fw.grad(g.sum(), x)
    t = np.tanh(xv)
    np.testing.assert_allclose(h.numpy(), -2 * t * (1 - t * t), rtol=1e-10)


def test_pylayer_no_grad_inputs_and_non_tensor_args():
    x = fw.to_tensor([1.0])
    y = Tanh.apply(x)
    assert y.stop_gradient


class TwoOut(PyLayer):
    @staticmethod
    def forward(ctx, a, b):
        ctx.set_materialize_grads(False)
        idx = fw.argmax(a)
        ctx.mark_non_differentiable(idx)
        return a * b, idx

    @staticmethod
    def backward(ctx, g, g_idx):
        assert g_idx is None
        return g * 2, None


def test_pylayer_mark_non_differentiable_and_materialize():
    a = fw.to_tensor([1.0, 3.0], stop_gradient=False)
    b = fw.to_tensor([5.0, 6.0], stop_gradient=False)
    out, idx = TwoOut.apply(a, b)
    assert idx.stop_gradient
    out.sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), [2.0, 2.0])
    assert b.grad is None  # backward returned None for it


class Bad(PyLayer):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g, g


def test_pylayer_wrong_number_of_grads():
    x = fw.to_tensor([1.0], stop_gradient=False)
    with pytest.raises(GradientError, match="returned 2 gradients"):
        Bad.apply(x).sum().backward()


def test_pylayer_returning_its_input_keeps_input_history():
    class Ident(PyLayer):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 3

    x = fw.to_tensor([1.0], stop_gradient=False)
    y = Ident.apply(x)
    assert y is not x and x.is_leaf
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [3.0])


def _block(x, w, b):
    h = fw.tanh(fw.matmul(x, w) + b)
    return fw.core.ops.call("dropout", h, p=0.3, training=True)[0] * 2.0


def test_recompute_matches_plain_backward_with_dropout():
    rng = np.random.default_rng(0)
    wv, bv, xv = rng.standard_normal((4, 5)), rng.standard_normal(5), rng.standard_normal((3, 4))

    def run(use_recompute):
        w = fw.to_tensor(wv, stop_gradient=False)
        b = fw.to_tensor(bv, stop_gradient=False)
        x = fw.to_tensor(xv, stop_gradient=False)
        fw.seed(123)
        if use_recompute:
            y = fw.autograd.recompute(_block, x, w, b)
        else:
            y = _block(x, w, b)
        fw.seed(999)  # the RNG moves on before backward: recompute restores it
        (y * y).sum().backward()
        return y.numpy(), x.grad.numpy(), w.grad.numpy(), b.grad.numpy()

    plain = run(False)
    ckpt = run(True)
    for a, c in zip(plain, ckpt):
        np.testing.assert_allclose(c, a, rtol=1e-12)


def test_recompute_keeps_no_intermediates():
    w = fw.to_tensor([1.0, 2.0], stop_gradient=False)
    x = fw.to_tensor([3.0, 4.0])
    y = fw.autograd.recompute(lambda t: fw.exp(t * w) * w, x)
    node = y._node.node
    assert node.args is None and node.outs is None  # only the segment node remains
    # its edges lead straight to the outside tensors (w), not to the segment's ops
    assert any(e is w for e in node.edges)


def test_recompute_with_fw_grad_and_closures_and_create_graph():
    w = fw.to_tensor([0.5, -1.5], stop_gradient=False)
    h = w * 3.0  # a computed tensor read through a closure
    x = fw.to_tensor([1.0, 2.0], stop_gradient=False)
    y = fw.autograd.recompute(lambda t: fw.sin(t * h), x).sum()
    gx, gw = fw.grad(y, [x, w], create_graph=True)
    xv, hv = np.array([1.0, 2.0]), np.array([1.5, -4.5])
    np.testing.assert_allclose(gx.numpy(), np.cos(xv * hv) * hv)
    np.testing.assert_allclose(gw.numpy(), np.cos(xv * hv) * xv * 3.0)
    (ggx,) = fw.grad(gx.sum(), x)
    np.testing.assert_allclose(ggx.numpy(), -np.sin(xv * hv) * hv * hv)


def test_recompute_detects_inplace_change_of_argument():
    w = fw.to_tensor([1.0], stop_gradient=False)
    x = fw.to_tensor([2.0])
    y = fw.autograd.recompute(lambda t: t * w, x)
    x.set_value(np.array([5.0], dtype=np.float32))
    with pytest.raises(GradientError, match="modified in place"):
        y.sum().backward()
