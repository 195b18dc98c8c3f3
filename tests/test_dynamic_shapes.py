"""Shapes computed at run time inside converted code (Paddle's ``paddle.shape(x)[0]``
idiom for a dynamic batch): eager == to_static == jit.load == Predictor, gradients
included."""

from __future__ import annotations

import numpy as np
import pytest

import fw
import fw.inference as infer
from fw.static import InputSpec


class Heads(fw.nn.Layer):
    """Splits features into heads with sizes read from the input at run time."""

    def __init__(self):
        super().__init__()
        self.proj = fw.nn.Linear(8, 8)
        self.cls = self.create_parameter([1, 1, 8])  # a ViT-style class token

    def forward(self, x):
        b = fw.shape(x)[0]
        x = fw.concat([self.cls.expand([b, -1, -1]), x], axis=1)  # run-time batch
        s = fw.shape(x)[1]
        pos = fw.arange(s, dtype="float32").reshape([1, -1, 1])  # position ids
        h = self.proj(x + 0.01 * pos).reshape([b, s, 2, 4])  # two run-time sizes
        mask = fw.ones([b, s, 2, 1], dtype="float32")  # run-time shape
        h = (h * mask).transpose([0, 2, 1, 3])
        return h.reshape([b, -1]) + fw.zeros([b, 1])


def _spec():
    return [InputSpec([None, None, 8], "float32", "x")]


@pytest.mark.parametrize("shape", [(1, 3, 8), (4, 5, 8), (2, 1, 8)])
def test_forward_and_gradients_equal_eager(shape):
    fw.seed(0)
    eager = Heads()
    static = Heads()
    static.set_state_dict(eager.state_dict())
    static = fw.jit.to_static(static, input_spec=_spec())
    x = np.random.default_rng(sum(shape)).standard_normal(shape).astype("float32")
    outs = []
    for m in (eager, static):
        xt = fw.to_tensor(x, stop_gradient=False)
        y = m(xt)
        (y * y).sum().backward()
        outs.append((y.numpy(), xt.grad.numpy(), m.proj.weight.grad.numpy(),
                     m.cls.grad.numpy()))
    for a, b in zip(*outs):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    ops = [op.name for op in static.forward.concrete_program.main_program.walk()]
    assert {"reshape_dyn", "full_dyn", "expand_dyn", "arange_dyn"} <= set(ops)


def test_saved_model_and_predictor_take_any_batch(tmp_path):
    fw.seed(1)
    model = Heads()
    model.eval()
    model_file = fw.jit.save(model, str(tmp_path / "heads"), input_spec=_spec())
    loaded = fw.jit.load(model_file)
    pred = infer.create_predictor(infer.Config(model_file))
    for shape in [(1, 2, 8), (3, 4, 8)]:
        x = np.random.default_rng(shape[0]).standard_normal(shape).astype("float32")
        want = model(fw.to_tensor(x)).numpy()
        np.testing.assert_allclose(loaded(fw.to_tensor(x)).numpy(), want, rtol=1e-5, atol=1e-6)
        (got,) = pred.run([x])
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-5, atol=1e-6)


def test_static_backward_reshapes_back_to_a_run_time_shape():
    from fw.autograd import append_backward
    from fw.core.ir import TensorType, building, run

    w = fw.to_tensor(np.linspace(-1, 1, 8).astype("float32"), stop_gradient=False)
    w.trainable, w.name = True, "w"
    with building() as b:
        x = b.add_input(TensorType([-1, -1, 8], "float32"), "x")
        n, s = fw.shape(x)[0], fw.shape(x)[1]
        h = (x * w).reshape([n * s, 2, 4])  # the input of reshape_dyn has two run-time dims
        loss = (h * h).sum()
        ((_, g),) = append_backward(loss)
        b.set_outputs([loss, g])
    assert "reshape_dyn" in [op.name for op in b.program.walk()]
    xv = np.random.default_rng(0).standard_normal((2, 3, 8)).astype("float32")
    loss_v, g_v = run(b.program, fw.to_tensor(xv))
    wv = w.numpy()
    np.testing.assert_allclose(loss_v.numpy(), ((xv * wv) ** 2).sum(), rtol=1e-5)
    np.testing.assert_allclose(g_v.numpy(), (2 * xv * xv * wv).sum(axis=(0, 1)), rtol=1e-5)


def test_static_mode_takes_run_time_shapes():
    fw.enable_static()
    try:
        main = fw.static.Program()
        with fw.static.program_guard(main):
            x = fw.static.data("x", [None, 4], "float32")
            b = fw.shape(x)[0]
            z = fw.zeros([b, 4]) + x.reshape([b, 2, 2]).reshape([-1, 4]) * fw.arange(b).astype(
                "float32").reshape([-1, 1])
        out = fw.static.Executor().run(main, feed={"x": np.ones((3, 4), np.float32)},
                                       fetch_list=[z])[0]
    finally:
        fw.disable_static()
    np.testing.assert_allclose(out, np.arange(3, dtype=np.float32)[:, None] * np.ones((3, 4)))
