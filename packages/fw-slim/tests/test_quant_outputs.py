"""fw.quantization.quantize_outputs: output quantization of a converted QDQ program
(batch norms folded into the int8 convs, a quantize at each layer output, residual adds
between quantized operands, relu outputs as uint8 0..255), checked against the program
it started from, against fw's int8 Predictor, and (when installed) against
onnxruntime, which must fuse every conv and the residual add into its int8 kernels."""

import collections
import os

import numpy as np
import pytest

import fw
import fw.jit
import fw.nn as nn
from fw.core.ir import load, run, save
from fw.quantization import PTQ, QuantConfig, quantize_outputs
from fw.quantization.observers import AbsMaxChannelWiseWeightObserver, AbsmaxObserver
from fw.quantization.outputs import _fold_batch_norms


class Block(nn.Layer):
    """A ResNet basic block with a stem: conv-bn-relu, pool, then
    relu(bn(conv(relu(bn(conv(h))))) + h)."""

    def __init__(self, c=8):
        super().__init__()
        self.stem = nn.Conv2D(3, c, 3, padding=1, bias_attr=False)
        self.bn0 = nn.BatchNorm2D(c)
        self.pool = nn.MaxPool2D(2)
        self.c1 = nn.Conv2D(c, c, 3, padding=1, bias_attr=False)
        self.bn1 = nn.BatchNorm2D(c)
        self.c2 = nn.Conv2D(c, c, 3, padding=1, bias_attr=False)
        self.bn2 = nn.BatchNorm2D(c)
        self.relu = nn.ReLU()
        self.fc = nn.Linear(c * 4 * 4, 5)

    def forward(self, x):
        h = self.pool(self.relu(self.bn0(self.stem(x))))
        o = self.relu(self.bn1(self.c1(h)))
        o = self.relu(self.bn2(self.c2(o)) + h)
        return self.fc(fw.flatten(o, 1))


def _converted(tmp_path, seed=0):
    fw.seed(seed)
    net = Block()
    rng = np.random.default_rng(seed)
    for bn in (net.bn0, net.bn1, net.bn2):  # non-trivial statistics, one negative gamma
        c = bn.weight.shape[0]
        bn.weight.set_value(fw.to_tensor(rng.uniform(0.5, 1.5, c).astype("float32")
                                         * np.where(np.arange(c) == 1, -1, 1).astype("float32")))
        bn.bias.set_value(fw.to_tensor(rng.normal(0, 0.2, c).astype("float32")))
        bn._mean.set_value(fw.to_tensor(rng.normal(0, 0.1, c).astype("float32")))
        bn._variance.set_value(fw.to_tensor(rng.uniform(0.5, 2, c).astype("float32")))
    net.eval()
    cfg = QuantConfig(activation=AbsmaxObserver(), weight=AbsMaxChannelWiseWeightObserver())
    ptq = PTQ(cfg)
    q = ptq.quantize(net)
    calib = [rng.standard_normal((4, 3, 8, 8)).astype("float32") for _ in range(3)]
    for c in calib:
        q(fw.to_tensor(c))
    spec = [fw.jit.InputSpec([-1, 3, 8, 8], "float32", "x")]
    path = fw.jit.save(ptq.convert(q), os.fspath(tmp_path / "m"), input_spec=spec)
    prog, _ = load(path)
    return prog, calib, rng.standard_normal((4, 3, 8, 8)).astype("float32")


def _ops(prog):
    return collections.Counter(op.name for op in prog.block.ops)


def test_batch_norm_folding_is_exact(tmp_path):
    prog, _, x = _converted(tmp_path)
    folded = prog.clone()
    from fw.core.ir.passes.rewrite import Rewriter

    assert _fold_batch_norms(folded, Rewriter(folded)) == 3
    assert _ops(folded)["batch_norm"] == 0 and _ops(prog)["batch_norm"] == 3
    want, got = run(prog, x).numpy(), run(folded, x).numpy()
    # the same int8 codes (negated for the negative gamma), scales rounded once
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5 * np.abs(want).max())


def test_layout_and_values(tmp_path):
    prog, calib, x = _converted(tmp_path)
    want = run(prog, x).numpy()
    out = prog.clone()
    stats = quantize_outputs(out, calib)
    assert stats["batch_norms_folded"] == 3
    ops = _ops(out)
    assert ops["batch_norm"] == 0
    adds = [op for op in out.block.ops if op.name == "add"]
    (res,) = [a for a in adds if all(v.owner is not None and v.owner.name ==
                                     "dequantize_linear" for v in a.operands)]
    # the residual sum's relu is quantized as uint8 0..255 (zero point = range minimum)
    relu = next(op for op, _ in _users(out, res.results[0]))
    (q,) = [op for op, _ in _users(out, relu.results[0])]
    assert q.name == "quantize_linear" and (q.attrs["qmin"], q.attrs["qmax"]) == (0, 255)
    # each conv's output is quantized (its relu's, or before the residual add)
    for conv in (op for op in out.block.ops if op.name == "conv"):
        v = conv.results[0]
        nxt = [op.name for op, _ in _users(out, v)]
        if nxt == ["relu"]:
            v = _users(out, v)[0][0].results[0]
            nxt = [op.name for op, _ in _users(out, v)]
        assert nxt == ["quantize_linear"], nxt
    got = run(out, x).numpy()
    # unsigned=True (the default): every activation quantization is uint8 (symmetric
    # int8 as zero point 128), computing exactly what unsigned=False computes
    qs = [op for op in out.block.ops if op.name == "quantize_linear"]
    assert qs and all(op.results[0].type.dtype.name == "uint8" for op in qs)
    signed = prog.clone()
    quantize_outputs(signed, calib, unsigned=False)
    assert any(op.results[0].type.dtype.name == "int8" for op in signed.block.ops
               if op.name == "quantize_linear")
    np.testing.assert_array_equal(run(signed, x).numpy(), got)
    # the output roundings added: a few steps of the final layer's input, no more
    scale = np.abs(want).max()
    assert np.abs(got - want).max() < 0.1 * scale
    assert np.abs(got - want).max() > 0  # the roundings are really there


def _users(prog, v):
    return [(op, i) for op in prog.block.ops for i, o in enumerate(op.operands) if o is v]


def test_int8_predictor_runs_it_on_int8_kernels(tmp_path):
    import fw.inference as infer
    from fw.core.ir.passes import PassManager

    prog, calib, x = _converted(tmp_path)
    quantize_outputs(prog, calib)
    want = run(prog, x).numpy()
    file = os.fspath(tmp_path / "out.fwmodel")
    save(prog, file)
    pred = infer.create_predictor(infer.Config(file))
    (got,) = pred.run([x])
    from fw.core.ir.passes.fold_qdq import FoldQDQ

    opt = prog.clone()
    # (as on this project's VNNI CPUs; without VNNI uint8 inputs above 127 stay float)
    PassManager([FoldQDQ(signed_inputs=True)]).run(opt)
    names = _ops(opt)
    # the 3 -> 8 stem stays float32 (narrow_conv), its relu -> quantize -> dequantize ->
    # pool -> quantize collapsed to pool -> quantize; the other two convs int8 with the
    # residual add fused into the second (no float add left)
    assert names["conv"] == 1 and names["quantized_conv2d"] == 2 and names["add"] == 0
    # quantize: the input and the pool's output; dequantize: the float stem's input and
    # the residual operand
    assert names["quantize_linear"] == 2 and names["dequantize_linear"] == 2, names
    every = prog.clone()
    PassManager([FoldQDQ(min_channel_pairs=0, min_macs=0, signed_inputs=True)]).run(every)
    names = _ops(every)
    # with the stem int8 too, the pool runs on its requantized bytes
    assert names["quantized_conv2d"] == 3 and names["quantized_max_pool"] == 1, names
    assert names["quantize_linear"] == 1 and names["dequantize_linear"] == 1, names
    for p in (opt, every):
        # within a step of the last layer's input and half a step of the skipped pre-add
        # rounding
        np.testing.assert_allclose(run(p, x).numpy(), want, atol=0.05 * np.abs(want).max())
    np.testing.assert_allclose(np.asarray(got), want, atol=0.05 * np.abs(want).max())
    exact = prog.clone()
    PassManager([FoldQDQ(fuse_residual_qdq=False, signed_inputs=True)]).run(exact)
    assert _ops(exact)["add"] == 1
    np.testing.assert_allclose(run(exact, x).numpy(), want, atol=0.02 * np.abs(want).max())


def test_onnxruntime_fuses_the_export(tmp_path):
    ort = pytest.importorskip("onnxruntime")
    onnx = pytest.importorskip("onnx")
    from fw.onnx import program_to_onnx

    prog, calib, x = _converted(tmp_path)
    before = prog.clone()
    quantize_outputs(prog, calib)

    def fused(p):
        so = ort.SessionOptions()
        so.intra_op_num_threads = 1
        so.log_severity_level = 3
        so.optimized_model_filepath = os.fspath(tmp_path / "opt.onnx")
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        s = ort.InferenceSession(program_to_onnx(p).SerializeToString(), so,
                                 providers=["CPUExecutionProvider"])
        got = s.run(None, {s.get_inputs()[0].name: x})[0]
        return collections.Counter(n.op_type for n in onnx.load(so.optimized_model_filepath)
                                   .graph.node), got

    ops, got = fused(prog)
    assert ops["QLinearConv"] == 3 and ops["QLinearAdd"] == 1, ops
    assert ops["Conv"] + ops["FusedConv"] + ops["BatchNormalization"] == 0, ops
    want = run(prog, x).numpy()
    # onnxruntime's int8 kernels compute the same program (a code may flip on a tie)
    np.testing.assert_allclose(got, want, atol=0.02 * np.abs(want).max())
    # the input-only form it started from: float convs
    ops0, _ = fused(before)
    assert ops0["QLinearConv"] == 0, ops0


def test_errors():
    with pytest.raises(TypeError, match="quantize_outputs: 'program' must be"):
        quantize_outputs(nn.Linear(2, 2), [])
