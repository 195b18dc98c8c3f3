"""LeNet b64 in int8 where int8 pays, float32 where it loses (issue 13: "choose fp32 for
layers where int8 loses"), as a PTQ config: the second conv fully quantized (int8
activations and weights: the layer with most of the work, 1.7x faster in int8), every
other layer *weight-only* (``activation=None``: int8 codes in the file, dequantized once
when the Predictor loads; no quantize/dequantize per run). The measured per-op table is
in the README (asv_bench/int8_layer_profile.py); here the structure that gives it: one
quantize, one int8 conv, no dequantize, the three classifier layers folded into one
float product as in the float32 model, the file as small as a fully quantized one, and
the Predictor equal to the converted model."""

import collections
import os

import numpy as np

import fw
import fw.jit
import fw.nn as nn
from fw.core.ir import load
from fw.quantization import PTQ, QuantConfig
from fw.quantization.observers import AbsMaxChannelWiseWeightObserver, AbsmaxObserver
from fw.slim._model_file import model_file_sizes


class LeNet(nn.Layer):
    """paddle.vision.models.LeNet (as the zoo of the benchmarks)."""

    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2D(1, 6, 3, stride=1, padding=1), nn.ReLU(), nn.MaxPool2D(2, 2),
            nn.Conv2D(6, 16, 5, stride=1, padding=0), nn.ReLU(), nn.MaxPool2D(2, 2))
        self.fc = nn.Sequential(nn.Linear(400, 120), nn.Linear(120, 84), nn.Linear(84, 10))

    def forward(self, x):
        return self.fc(self.features(x).flatten(1))


def mixed_config(net):
    """conv2 int8; the rest weight-only int8 (convs per channel, Linears per tensor)."""
    cfg = QuantConfig(activation=None, weight=AbsmaxObserver())
    cfg.add_type_config(nn.Conv2D, activation=None, weight=AbsMaxChannelWiseWeightObserver())
    cfg.add_layer_config(net.features[3], activation=AbsmaxObserver(),
                         weight=AbsMaxChannelWiseWeightObserver())
    return cfg


def test_mixed_lenet_structure_size_and_values(tmp_path):
    import fw.inference as infer

    fw.seed(0)
    net = LeNet()
    net.eval()
    rng = np.random.default_rng(0)
    spec = [fw.jit.InputSpec([-1, 1, 28, 28], "float32", "x")]
    ptq = PTQ(mixed_config(net))
    q = ptq.quantize(net)
    for _ in range(2):
        q(fw.to_tensor(rng.random((8, 1, 28, 28), dtype=np.float32)))
    conv = ptq.convert(q)
    path = fw.jit.save(conv, os.fspath(tmp_path / "q"), input_spec=spec)
    fp_path = fw.jit.save(net, os.fspath(tmp_path / "fp"), input_spec=spec)

    prog, _ = load(path)
    names = collections.Counter(op.name for op in prog.block.ops)
    # as written: 5 weight dequantizations, one activation quantize/dequantize pair
    assert names["dequantize_linear"] == 6 and names["quantize_linear"] == 1, names

    pred = infer.create_predictor(infer.Config(path))
    opt = collections.Counter(op.name for op in pred.program.block.ops)
    assert opt["quantized_conv2d"] == 1 and opt["quantize_linear"] == 1, opt
    assert opt["dequantize_linear"] == 0 and opt["quantized_matmul"] == 0, opt
    fp_pred = infer.create_predictor(infer.Config(fp_path))
    fp_opt = collections.Counter(op.name for op in fp_pred.program.block.ops)
    # the classifier folds into one product, as in the float32 program
    products = ("fused_matmul", "matmul", "linear")
    assert sum(opt[n] for n in products) == sum(fp_opt[n] for n in products) == 1, (opt, fp_opt)

    x = rng.random((64, 1, 28, 28), dtype=np.float32)
    want = conv(fw.to_tensor(x)).numpy()
    (got,) = pred.run([x])
    # the int8 conv equals its QDQ form up to float32 rounding of the folded scales; the
    # folded classifier reassociates the float products
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-4, atol=1e-4 * np.abs(want).max())

    ratio = model_file_sizes(fp_path)["weights"] / model_file_sizes(path)["weights"]
    assert ratio >= 3.9, ratio


def test_report_names_the_weight_only_layers():
    from fw.quantization import report

    fw.seed(0)
    net = LeNet()
    net.eval()
    rng = np.random.default_rng(1)
    ptq = PTQ(mixed_config(net))
    q = ptq.quantize(net)
    q(fw.to_tensor(rng.random((8, 1, 28, 28), dtype=np.float32)))
    rep = report(ptq.convert(q), rng.random((4, 1, 28, 28), dtype=np.float32), repeat=1)
    kinds = {lr.name: (lr.kernel, lr.reason) for lr in rep.layers}
    assert kinds["features.3"][0] == "int8", kinds
    for name in ("features.0", "fc.0", "fc.1", "fc.2"):
        assert kinds[name][0] == "fp32" and kinds[name][1].startswith("weight-only"), kinds
