"""Quantized (QDQ) models: fw.quantization's PTQ-converted and QAT models exported with
fw.onnx.export run on onnxruntime (its int8 kernels with every optimisation on) and
agree with fw within one quantization step."""

from __future__ import annotations

import numpy as np
import pytest
from onnx_testutil import ort

import fw
import fw.onnx
from fw.core.ops import call
from fw.jit import InputSpec

onnx = pytest.importorskip("onnx")
Q = pytest.importorskip("fw.quantization")
zoo = pytest.importorskip("zoo")
from fw.quantization import observers as O  # noqa: E402
from fw.quantization import quanters as QT  # noqa: E402


def _session(path, level):
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1  # the test machine's cores are shared
    so.log_severity_level = 3
    so.graph_optimization_level = level
    return ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"])


def _small_resnet():
    # tests/zoo.py's ResNet with one BasicBlock per stage (downsample convs, residual adds)
    return zoo._resnet(fw.nn, "basic", (1, 1, 1, 1), 10)


MODELS = {"lenet": (lambda: zoo.build(fw, "lenet"), (1, 28, 28)),
          "resnet_small": (_small_resnet, (3, 32, 32))}


def _ptq(name, per_channel=True):
    fw.seed(0)
    build, shape = MODELS[name]
    model = build()
    model.eval()
    weight = O.AbsMaxChannelWiseWeightObserver() if per_channel else O.AbsmaxObserver()
    ptq = Q.PTQ(Q.QuantConfig(activation=O.AbsmaxObserver(), weight=weight))
    qm = ptq.quantize(model)
    rng = np.random.default_rng(1)
    for _ in range(3):  # calibration batches
        qm(fw.to_tensor(rng.standard_normal((4, *shape)).astype(np.float32)))
    return ptq.convert(qm), shape


def _last_step_bound(model):
    """|output change| when every input code of the last Linear moves by one step:
    act_scale * max_j sum_i |W_ij| (the dequantized weight)."""
    last = [m for _, m in model.named_sublayers() if hasattr(m, "act_scale")][-1]
    w = np.abs(last.float_weight()).sum(axis=0).max()
    return float(np.asarray(last.act_scale.numpy()).max() * w)


@pytest.fixture(scope="module", params=[("lenet", True), ("resnet_small", True),
                                        ("lenet", False)],
                ids=["lenet-per-channel", "resnet_small-per-channel", "lenet-per-tensor"])
def exported(request, tmp_path_factory):
    name, per_channel = request.param
    model, shape = _ptq(name, per_channel)
    path = fw.onnx.export(model, tmp_path_factory.mktemp(name) / name,
                          [InputSpec([None, *shape], "float32", "x")])
    return name, model, shape, path


def test_graph_is_qdq_and_passes_the_checker(exported):
    _, model, _, path = exported
    m = onnx.load(str(path))
    onnx.checker.check_model(m, full_check=True)
    ops = [n.op_type for n in m.graph.node]
    n_q = sum(1 for _, s in model.named_sublayers() if getattr(s, "act_scale", None) is not None)
    assert ops.count("QuantizeLinear") == n_q  # one per quantized layer's input
    assert ops.count("DequantizeLinear") == 2 * n_q  # its input and its int8 weight
    # the weights are stored as int8 initializers read by DequantizeLinear
    int8 = [t for t in m.graph.initializer if t.data_type == onnx.TensorProto.INT8 and
            len(t.dims) >= 2]
    assert len(int8) == n_q
    # no initializer left unread (the lowerings re-express scale and zero point)
    read = {i for n in m.graph.node for i in n.input}
    assert [t.name for t in m.graph.initializer if t.name not in read] == []


@pytest.mark.parametrize("level", ["ORT_DISABLE_ALL", "ORT_ENABLE_ALL"])
def test_onnxruntime_matches_fw_within_one_step(exported, level):
    name, model, shape, path = exported
    x = np.random.default_rng(7).standard_normal((5, *shape)).astype(np.float32)
    want = model(fw.to_tensor(x)).numpy()
    sess = _session(path, getattr(ort.GraphOptimizationLevel, level))
    (got,) = sess.run(None, {"x": x})
    assert got.shape == want.shape and got.dtype == np.float32
    err = np.abs(got - want).max()
    assert err <= _last_step_bound(model), (name, level, err)
    if level == "ORT_DISABLE_ALL":
        # onnxruntime's reference QDQ (float arithmetic, as fw): at most a code that
        # float summation order moves across a rounding tie, so nearly everywhere equal
        close = np.isclose(got, want, rtol=1e-4, atol=1e-4)
        assert close.mean() > 0.95, (name, err)


def test_onnxruntime_fuses_to_int8_kernels(exported, tmp_path):
    """With every optimisation on, onnxruntime fuses DQ -> Gemm -> Q (a Linear whose
    output is the next Linear's quantized input) into its int8 QGemm: LeNet's fc.0 and
    fc.1. Ops whose float output is not read by a QuantizeLinear (fw's convert
    quantizes layer inputs only; relu/pool/batch_norm sit between a conv and the next Q)
    stay float ops over dequantized values: onnxruntime's QLinearConv/QGemm need a Q on
    the output."""
    name, _, _, path = exported
    if name != "lenet":
        pytest.skip("no DQ -> conv/linear -> Q pattern in the small ResNet's program")
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.log_severity_level = 3
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    so.optimized_model_filepath = str(tmp_path / "opt.onnx")
    ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"])
    ops = [n.op_type for n in onnx.load(so.optimized_model_filepath).graph.node]
    assert ops.count("QGemm") == 2, sorted(ops)


def test_qat_model_exports_fake_quant_as_qdq(tmp_path):
    """A QAT model (before convert) is fake_quantize_dequantize ops: Q -> DQ pairs."""
    fw.seed(0)
    model = zoo.build(fw, "lenet")
    cfg = Q.QuantConfig(activation=QT.FakeQuanterWithAbsMaxObserver(),
                        weight=QT.FakeQuanterChannelWiseAbsMaxObserver())
    qat = Q.QAT(cfg).quantize(model)
    rng = np.random.default_rng(2)
    qat.train()
    for _ in range(2):  # the quanters' running ranges
        qat(fw.to_tensor(rng.standard_normal((4, 1, 28, 28)).astype(np.float32)))
    qat.eval()
    path = fw.onnx.export(qat, tmp_path / "qat", [InputSpec([None, 1, 28, 28], "float32", "x")])
    m = onnx.load(str(path))
    ops = [n.op_type for n in m.graph.node]
    assert ops.count("QuantizeLinear") == ops.count("DequantizeLinear") >= 10
    x = rng.standard_normal((3, 1, 28, 28)).astype(np.float32)
    (got,) = _session(path, ort.GraphOptimizationLevel.ORT_DISABLE_ALL).run(None, {"x": x})
    want = qat(fw.to_tensor(x)).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-3)


# ---------------------------------------------------------------- what ONNX cannot express
S1, Z0 = np.array([0.1], np.float32), np.zeros(1, np.int32)


def _export(fn, arrays, tmp_path):
    specs = [InputSpec(list(a.shape), str(a.dtype), f"in{i}") for i, a in enumerate(arrays)]
    return fw.onnx.export(fn, tmp_path / "m", specs)


def test_float64_quantize_is_refused(tmp_path):
    fn = lambda x: call("quantize_linear", x, fw.to_tensor(S1), fw.to_tensor(Z0))  # noqa: E731
    with pytest.raises(fw.onnx.ExportError, match=r"op 'quantize_linear'.*'x' is float64"):
        _export(fn, [np.ones((2, 3))], tmp_path)
    assert not list(tmp_path.iterdir())  # no file, no temporary


def test_zero_point_outside_the_codes_is_refused(tmp_path):
    z = fw.to_tensor(np.array([200], np.int32))
    fn = lambda x: call("quantize_linear", x, fw.to_tensor(S1), z)  # noqa: E731
    with pytest.raises(fw.onnx.ExportError,
                       match=r"op 'quantize_linear'.*'zero_point' \[200\].*int8"):
        _export(fn, [np.ones((2, 3), np.float32)], tmp_path)


def test_non_positive_scale_is_refused(tmp_path):
    s = fw.to_tensor(np.array([0.1, 0.0, 0.2], np.float32))
    z = fw.to_tensor(np.zeros(3, np.int32))
    fn = lambda q: call("dequantize_linear", q, s, z, axis=1)  # noqa: E731
    with pytest.raises(fw.onnx.ExportError,
                       match=r"op 'dequantize_linear'.*'scale' must be > 0.*0\.0"):
        _export(fn, [np.ones((2, 3), np.int8)], tmp_path)


def test_int32_dequantize_with_a_zero_point_is_refused(tmp_path):
    z = fw.to_tensor(np.array([3], np.int32))
    fn = lambda q: call("dequantize_linear", q, fw.to_tensor(S1), z)  # noqa: E731
    with pytest.raises(fw.onnx.ExportError, match=r"op 'dequantize_linear'.*int32.*'zero_point'"):
        _export(fn, [np.ones((2, 3), np.int32)], tmp_path)


def test_int32_dequantize_with_zero_point_0_exports(tmp_path):
    fn = lambda q: call("dequantize_linear", q, fw.to_tensor(S1), fw.to_tensor(Z0))  # noqa: E731
    q = np.arange(-3, 3, dtype=np.int32).reshape(2, 3) * 1000
    path = _export(fn, [q], tmp_path)
    (got,) = _session(path, ort.GraphOptimizationLevel.ORT_ENABLE_ALL).run(None, {"in0": q})
    np.testing.assert_allclose(got, q * np.float32(0.1), rtol=1e-6)
