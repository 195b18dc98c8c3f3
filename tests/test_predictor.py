"""Cross-package properties of fw-inference: for random small models saved as model
files, the Predictor (inference passes on, handle or list style, memory optimisation on
or off) computes what fw-core's executor computes on the unoptimised program, within a
few ulp: folding a batch norm rescales weights, and constant folding of weight-only
expressions (a transposed weight) changes the layout BLAS sums over. (The fusion passes
alone are bit-exact: fw-core's tests/test_fusion_passes.py checks that.)

The models are built directly with fw ops and traced by fw-core. When fw-nn and
fw-jit provide ``fw.jit.save``/``fw.jit.load``, random fw.nn models also check
eager == to_static == jit.load == Predictor."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import fw
import fw.inference as infer
from fw.core.ir import TensorType, run, save, trace
from fw.core.ops import call

F32 = np.float32
ACTS = (None, "relu", "gelu", "gelu_tanh", "sigmoid", "tanh", "silu")


def _param(rng, shape, name, scale=0.4):
    t = fw.to_tensor((rng.standard_normal(shape) * scale).astype(F32))
    t.name, t.persistable, t.trainable = name, True, True
    return t


def _buffer(array, name):
    t = fw.to_tensor(array.astype(F32))
    t.name, t.persistable = name, True
    return t


def _act(h, name):
    if name is None:
        return h
    if name.startswith("gelu"):
        return call("gelu", h, approximate=name == "gelu_tanh")
    return call(name, h)


def _bn_stats(rng, c, name):
    return (_buffer(rng.standard_normal(c), f"{name}.mean"),
            _buffer(rng.random(c) + 0.5, f"{name}.var"),
            _param(rng, (c,), f"{name}.weight"), _param(rng, (c,), f"{name}.bias"))


@st.composite
def mlps(draw):
    """(program, inputs, has_batch_norm): linear/matmul layers with bias forms,
    activations, residuals, inference batch norms and an elementwise tail."""
    rng = np.random.default_rng(draw(st.integers(0, 2**31 - 1)))
    sizes = [draw(st.integers(1, 8)) for _ in range(draw(st.integers(2, 4)))]
    layers, has_bn = [], False
    for i, (a, b) in enumerate(zip(sizes, sizes[1:])):
        bn = _bn_stats(rng, b, f"bn{i}") if draw(st.integers(0, 3)) == 0 else None
        has_bn = has_bn or bn is not None
        layers.append(dict(kind=draw(st.sampled_from(["linear", "matmul", "matmul_t"])),
                           w=_param(rng, (a, b), f"fc{i}.weight"),
                           b=_param(rng, (b,), f"fc{i}.bias") if draw(st.booleans()) else None,
                           act=draw(st.sampled_from(ACTS)), bn=bn,
                           residual=a == b and draw(st.booleans())))
    tail = draw(st.booleans())

    def f(x):
        h = x
        for ly in layers:
            if ly["kind"] == "linear":
                z = call("linear", h, ly["w"], ly["b"])
            elif ly["kind"] == "matmul":
                z = fw.matmul(h, ly["w"])
                z = z + ly["b"] if ly["b"] is not None else z
            else:  # the weight stored transposed
                z = fw.matmul(h, ly["w"].t(), transpose_y=True)
            if ly["bn"] is not None:
                z = call("batch_norm", z, *ly["bn"])[0]
            z = _act(z, ly["act"])
            h = z + h if ly["residual"] else z
        return (h * 0.5 + 1.0).tanh() if tail else h

    batch = draw(st.integers(0, 3))
    dynamic = draw(st.booleans())
    p = trace(f, [TensorType([-1 if dynamic else batch, sizes[0]], "float32")], ["x"])
    return p, [rng.standard_normal((batch, sizes[0])).astype(F32)], has_bn


@st.composite
def convnets(draw):
    """(program, inputs, has_batch_norm): conv blocks (bias, batch norm, activation,
    residual; NCHW or NHWC), pooling, a linear head."""
    rng = np.random.default_rng(draw(st.integers(0, 2**31 - 1)))
    cl = draw(st.booleans())
    chans = [draw(st.integers(1, 4)) for _ in range(draw(st.integers(2, 3)))]
    blocks, has_bn = [], False
    for i, (a, b) in enumerate(zip(chans, chans[1:])):
        bn = _bn_stats(rng, b, f"bn{i}") if draw(st.booleans()) else None
        has_bn = has_bn or bn is not None
        blocks.append(dict(w=_param(rng, (b, a, 3, 3), f"conv{i}.weight"),
                           b=_param(rng, (b,), f"conv{i}.bias") if draw(st.booleans()) else None,
                           bn=bn, act=draw(st.sampled_from(ACTS)),
                           residual=a == b and draw(st.booleans())))
    head = (_param(rng, (chans[-1], 3), "head.weight"), _param(rng, (3,), "head.bias"))

    def f(x):
        h = x
        for bl in blocks:
            z = call("conv", h, bl["w"], bl["b"], padding=1, channel_last=cl)
            if bl["bn"] is not None:
                z = call("batch_norm", z, *bl["bn"], channel_last=cl)[0]
            z = _act(z, bl["act"])
            h = z + h if bl["residual"] else z
        h = h.mean(axis=[1, 2] if cl else [2, 3])
        return call("softmax", call("linear", h, *head))

    n = draw(st.integers(1, 2))
    shape = (n, 5, 5, chans[0]) if cl else (n, chans[0], 5, 5)
    p = trace(f, [TensorType((-1,) + shape[1:], "float32")], ["image"])
    return p, [rng.standard_normal(shape).astype(F32)], has_bn


def _check_predictor(tmp_path, program, inputs, has_bn, data):
    want = [o.numpy() for o in _as_tuple(run(program, *inputs))]
    path = tmp_path / "model.fwmodel"
    save(program, path)
    config = infer.Config(path)
    if data.draw(st.booleans(), label="memory_optim"):
        config.enable_memory_optim()
    pred = infer.create_predictor(config)
    if data.draw(st.booleans(), label="handles"):
        for name, x in zip(pred.get_input_names(), inputs):
            pred.get_input_handle(name).copy_from_cpu(x)
        pred.run()
        got = [pred.get_output_handle(n).copy_to_cpu() for n in pred.get_output_names()]
    else:
        got = [o.numpy() for o in pred.run(list(inputs))]
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.shape == w.shape and g.dtype == w.dtype
        # folding rescales weights; without it only layouts change (a folded transpose
        # makes BLAS sum in another order): a few ulp either way
        tol = 1e-5 if has_bn else 1e-6
        np.testing.assert_allclose(g, w, rtol=tol, atol=tol)
    return pred


def _as_tuple(x):
    return x if isinstance(x, tuple) else (x,)


@given(case=mlps(), data=st.data())
def test_predictor_equals_executor_on_random_mlps(tmp_path_factory, case, data):
    program, inputs, has_bn = case
    pred = _check_predictor(tmp_path_factory.mktemp("mlp"), program, inputs, has_bn, data)
    text = str(pred.program)
    assert "linear(" not in text and "batch_norm" not in text, f"{program}\n{text}"


@given(case=convnets(), data=st.data())
def test_predictor_equals_executor_on_random_convnets(tmp_path_factory, case, data):
    program, inputs, has_bn = case
    pred = _check_predictor(tmp_path_factory.mktemp("conv"), program, inputs, has_bn, data)
    assert "batch_norm" not in str(pred.program)


def test_without_ir_optim_the_program_is_the_saved_one(tmp_path):
    rng = np.random.default_rng(0)
    w, b = _param(rng, (4, 3), "w"), _param(rng, (3,), "b")
    p = trace(lambda x: call("relu", call("linear", x, w, b)), [TensorType([-1, 4], "float32")],
              ["x"])
    save(p, tmp_path / "m.fwmodel")
    config = infer.Config(tmp_path / "m.fwmodel")
    config.switch_ir_optim(False)
    pred = infer.create_predictor(config)
    assert str(pred.program) == str(p)
    x = rng.standard_normal((2, 4)).astype(F32)
    np.testing.assert_array_equal(pred.run([x])[0].numpy(), run(p, x).numpy())


# ---------------------------------------------------------------- fw.nn -> fw.jit -> Predictor
def _jit_ready():
    try:
        import fw.jit
        import fw.nn  # noqa: F401
    except ImportError:
        return False
    return hasattr(fw.jit, "save") and hasattr(fw.jit, "load")


@pytest.mark.skipif(not _jit_ready(), reason="needs fw-nn and fw.jit.save/load")
@given(data=st.data())
def test_eager_to_static_jit_load_and_predictor_agree(tmp_path_factory, data):
    import fw.jit
    import fw.nn as nn

    draw = data.draw
    fw.seed(draw(st.integers(0, 1000)))
    sizes = [draw(st.integers(1, 6)) for _ in range(draw(st.integers(2, 4)))]
    layers = []
    for a, b in zip(sizes, sizes[1:]):
        layers.append(nn.Linear(a, b))
        act = draw(st.sampled_from([None, nn.ReLU, nn.GELU, nn.Tanh, nn.Sigmoid, nn.Silu]))
        if act is not None:
            layers.append(act())
    model = nn.Sequential(*layers)
    model.eval()
    x = np.random.default_rng(0).standard_normal((draw(st.integers(1, 3)), sizes[0]))
    x = x.astype(F32)
    eager = model(fw.to_tensor(x)).numpy()
    spec = [fw.jit.InputSpec([None, sizes[0]], "float32", "x")]
    static = fw.jit.to_static(model, input_spec=spec)
    np.testing.assert_allclose(static(fw.to_tensor(x)).numpy(), eager, rtol=1e-6, atol=1e-7)
    prefix = str(tmp_path_factory.mktemp("jit") / "model")
    fw.jit.save(static, prefix, input_spec=spec)
    loaded = fw.jit.load(prefix)
    np.testing.assert_allclose(loaded(fw.to_tensor(x)).numpy(), eager, rtol=1e-6, atol=1e-7)
    pred = infer.create_predictor(infer.Config(prefix))
    np.testing.assert_allclose(pred.run([x])[0].numpy(), eager, rtol=1e-6, atol=1e-7)
