"""The int8 path end to end: zoo models (tests/zoo.py) saved with fw.jit.save, rewritten
into their quantize/dequantize (QDQ) form the way fw-slim's convert writes it
(fw.core.testing.qdq, calibrated abs-max, per-channel int8 weights), served by a
Predictor: its inference pipeline runs them on int8 kernels, every oneDNN primitive it
creates is an optimized implementation (never `ref`), the int8 weights are prepacked
once, and the outputs equal the QDQ program's (run without the passes) within the
quantization error. Timings are in asv_bench (never asserted in tests)."""

import os
import sys

import numpy as np
import pytest

import fw
import fw.inference as infer
from fw.core import _native
from fw.core.ir import load, save

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import zoo  # noqa: E402

pytest.importorskip("fw.core.ops.quant")
pytestmark = pytest.mark.skipif(not _native.available or _native.C is None or
                                not hasattr(_native.C, "qconv_forward"),
                                reason="needs fw-core's native int8 kernels")
from fw.core.testing.qdq import quantize_program  # noqa: E402

CASES = [("lenet", 4, None), ("resnet18", 1, 32), ("mobilenet_v2", 1, 32)]


def _qdq_model(tmp_path, name, batch, hw):
    fw.seed(0)
    model = zoo.build(fw, name)
    x = zoo.example_input(fw, name, batch=batch, hw=hw)
    spec = [fw.static.InputSpec([None, *x.shape[1:]], "float32")]
    path = fw.jit.save(fw.jit.to_static(model, input_spec=spec), str(tmp_path / name))
    prog, _ = load(path)
    calib = [zoo.example_input(fw, name, batch=batch, hw=hw, seed=s).numpy() for s in (1, 2)]
    n = quantize_program(prog, calib)
    out = str(tmp_path / f"{name}_qdq.fwmodel")
    save(prog, out)
    return out, x.numpy(), n


def _predictor(path, ir_optim=True):
    config = infer.Config(path)
    config.disable_glog_info()
    config.switch_ir_optim(ir_optim)
    return infer.create_predictor(config)


@pytest.mark.parametrize("name,batch,hw", CASES, ids=[c[0] for c in CASES])
def test_qdq_zoo_model_runs_int8_without_reference_kernels(tmp_path, name, batch, hw):
    path, x, n = _qdq_model(tmp_path, name, batch, hw)
    assert n > 0
    want = np.asarray(_predictor(path, ir_optim=False).run([x])[0].numpy())
    predictor = _predictor(path)
    ops = [op.name for op in predictor.program.walk()]
    # (at these small sizes some layers are below fold_qdq's min_macs and stay float;
    # without VNNI the layers with signed inputs do too)
    from fw.core.ir.passes.int8_linear_chain import float_chains
    from fw.core.ir.passes.rewrite import Rewriter
    from fw.core.kernels.cpu.int8 import EXACT_U8S8

    # (LeNet's classifier chain runs as one float product: fold_qdq's cost rule)
    p0 = load(path)[0]
    chained = sum(len(c[0]) for c in float_chains(Rewriter(p0), list(p0.block.ops)))
    assert ops.count("quantized_conv2d") + ops.count("quantized_matmul") >= (
        (n - chained) // 2 if EXACT_U8S8 else 1), ops
    _native.C.nn_clear_cache()
    got = np.asarray(predictor.run([x])[0].numpy())
    # requantized activations may move by one step where float rounding of the folded
    # scales meets a rounding tie; the logits stay within a few percent of their range
    np.testing.assert_allclose(got, want, rtol=0, atol=0.05 * np.abs(want).max())
    impls = _native.primitive_impls()
    int8 = impls["int8_conv"] + impls["int8_matmul"]
    assert int8, "the predictor ran no int8 primitive"
    ref = {k: [i for i in v if i.startswith("ref")] for k, v in impls.items()}
    ref = {k: v for k, v in ref.items() if v}
    assert not ref, f"{name}: oneDNN reference (slow) implementations in use: {ref}"
    packed = _native.C.nn_packed_constants()
    again = np.asarray(predictor.run([x])[0].numpy())
    assert _native.C.nn_packed_constants() == packed  # weights reordered once
    np.testing.assert_array_equal(again, got)


def test_ptq_converted_model_runs_int8(tmp_path):
    """fw.quantization's PTQ convert (fw-slim) writes the QDQ program this pass folds:
    a converted ResNet-18 runs its convolutions and classifier on int8 kernels and the
    Predictor equals the converted (fake-quant) model run eagerly."""
    quant = pytest.importorskip("fw.quantization")
    from fw.quantization import observers as O

    fw.seed(0)
    model = zoo.build(fw, "resnet18")
    ptq = quant.PTQ(quant.QuantConfig(activation=O.AbsmaxObserver(),
                                      weight=O.AbsMaxChannelWiseWeightObserver()))
    qm = ptq.quantize(model, inplace=False)
    for s in (1, 2):
        qm(zoo.example_input(fw, "resnet18", batch=2, hw=32, seed=s))
    converted = ptq.convert(qm)
    x = zoo.example_input(fw, "resnet18", batch=2, hw=32, seed=5)
    with fw.no_grad():
        want = converted(x).numpy()
    spec = [fw.static.InputSpec([None, 3, 32, 32], "float32")]
    path = fw.jit.save(fw.jit.to_static(converted, input_spec=spec), str(tmp_path / "r18"))
    predictor = _predictor(path)
    ops = [op.name for op in predictor.program.walk()]
    from fw.core.kernels.cpu.int8 import EXACT_U8S8

    assert "quantized_matmul" in ops and ops.count("quantized_conv2d") >= 19, ops
    if EXACT_U8S8:  # without VNNI the stem (a signed image input) stays float
        assert "conv" not in ops and "fused_conv" not in ops, ops
    got = np.asarray(predictor.run([x.numpy()])[0].numpy())
    np.testing.assert_allclose(got, want, rtol=0, atol=0.02 * np.abs(want).max())
