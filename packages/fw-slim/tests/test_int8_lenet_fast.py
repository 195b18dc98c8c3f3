"""The default PTQ-converted LeNet on the Predictor's fast int8 path (issue 13: LeNet b64
int8 not slower than fp32): the classifier chain as one float product (fold_qdq's cost
rule, `fw.core.ir.passes.int8_linear_chain`), the int8 pools on bytes through the NumPy
2x2 path, the int8 ops' prepared kernels. Checked against NumPy / the fake-quant model,
with the bound the dropped quantizations allow."""

import collections
import os

import numpy as np
import pytest

import fw
import fw.jit
import fw.nn as nn
from fw.core import _native
from fw.core.ir.passes.int8_linear_chain import INT8_MAC_SPEEDUP, chain_runs_float
from fw.quantization import PTQ, QuantConfig
from fw.quantization.observers import AbsMaxChannelWiseWeightObserver, AbsmaxObserver


def _sibling(name):  # (tests are imported with --import-mode=importlib: no sibling imports)
    import importlib.util
    import pathlib
    import sys

    key = f"_fw_slim_{name}"
    if key not in sys.modules:
        spec = importlib.util.spec_from_file_location(
            key, pathlib.Path(__file__).with_name(f"{name}.py"))
        mod = importlib.util.module_from_spec(spec)
        sys.modules[key] = mod
        spec.loader.exec_module(mod)
    return sys.modules[key]


fake_quant_model = _sibling("_qhelpers").fake_quant_model


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


native = pytest.mark.skipif(not _native.available or _native.C is None or
                            not hasattr(_native.C, "qconv_forward"),
                            reason="needs fw-core's native int8 kernels")


def test_cost_rule_values():
    # LeNet's classifier: 48,000 + 10,080 + 840 int8 MACs against 4 x 4,000 folded
    assert INT8_MAC_SPEEDUP == 4
    assert chain_runs_float([(400, 120), (120, 84), (84, 10)])
    # two layers whose folded product is wider than a quarter of their work stay int8
    assert not chain_runs_float([(400, 120), (120, 84)])  # 4 * 33,600 > 58,080
    assert not chain_runs_float([(400, 120)])  # no chain
    # fold_linear_chain would not fold an expanding pair: no float chain either
    assert not chain_runs_float([(16, 4), (4, 512)])


@pytest.mark.parametrize("dtype", [np.uint8, np.int8])
@pytest.mark.parametrize("shape", [(3, 10, 10, 16), (2, 7, 9, 5), (1, 2, 2, 1)])
def test_max_pool_2x2_equals_reference(dtype, shape):
    from fw.core.kernels.cpu.int8_prepared import max_pool_2x2
    from fw.core.ops import OPS

    info = np.iinfo(dtype)
    x = np.random.default_rng(0).integers(info.min, info.max + 1, shape).astype(dtype)
    want = OPS["quantized_max_pool"].reference(x, (2,), (2,), (0,), False, True)
    got = max_pool_2x2(x)
    assert got.dtype == dtype
    np.testing.assert_array_equal(got, want)


def _lenet_ptq(seed=0):
    fw.seed(seed)
    net = LeNet()
    net.eval()
    rng = np.random.default_rng(seed)
    cfg = QuantConfig(activation=AbsmaxObserver(), weight=AbsMaxChannelWiseWeightObserver())
    ptq = PTQ(cfg)
    q = ptq.quantize(net)
    for _ in range(2):
        q(fw.to_tensor(rng.random((16, 1, 28, 28), dtype=np.float32)))
    return net, q, ptq.convert(q), rng


def _chain_bound(q):
    """Per output column: the dropped fc.1 / fc.2 input quantizations' half steps through
    the rest of the chain (fake-quant weights)."""
    layers = [q.fc[i] for i in range(3)]
    fq = fake_quant_model(q)
    W = [np.asarray(fq.fc[i].weight_quanter(fq.fc[i]._layer.weight).numpy(), np.float64)
         for i in range(3)]
    s = [float(np.asarray(layers[i].activation_quanter.scales()).reshape(-1)[0])
         for i in (1, 2)]
    W23 = W[1] @ W[2]
    return s[0] / 2 * np.abs(W23).sum(0) + s[1] / 2 * np.abs(W[2]).sum(0)


@native
def test_default_ptq_lenet_predictor_program_and_values(tmp_path):
    import fw.inference as infer

    _, q, conv, rng = _lenet_ptq()
    spec = [fw.jit.InputSpec([-1, 1, 28, 28], "float32", "x")]
    path = fw.jit.save(conv, os.fspath(tmp_path / "q"), input_spec=spec)
    pred = infer.create_predictor(infer.Config(path))
    ops = collections.Counter(op.name for op in pred.program.block.ops)
    # conv2 int8 (pool on bytes), the classifier one float product, no int8 matmul
    assert ops["quantized_conv2d"] == 1 and ops["quantized_max_pool"] == 1, ops
    assert ops["quantized_matmul"] == 0 and ops["fused_matmul"] == 1, ops
    # the chain's input dequantized before its flatten: the exit transpose folds into
    # the weight rows as in fp32 (only the input's transpose to channel-last is left)
    assert ops["transpose"] == 1, ops
    x = rng.random((64, 1, 28, 28), dtype=np.float32)
    (got,) = pred.run([x])
    got = np.asarray(got)
    want = fake_quant_model(q)(fw.to_tensor(x)).numpy()
    bound = _chain_bound(q)
    err = np.abs(got - want)
    # the dropped roundings' bound, plus one output step of the int8 conv's rounding
    # ties and float32 reassociation (a small fraction of the logits' range)
    slack = 2e-3 * np.abs(want).max()
    assert np.all(err <= bound + slack), (err.max(0), bound)
    assert err.max() > 0  # the chain really runs without those roundings
    # with the rule off, every layer is int8 and the values are the fake-quant ones
    from fw.core.ir import load
    from fw.core.ir.passes import PassManager
    from fw.core.ir.passes.fold_qdq import FoldQDQ

    prog, _ = load(path)
    FoldQDQ(float_linear_chains=False).run(prog)
    names = collections.Counter(op.name for op in prog.block.ops)
    assert names["quantized_matmul"] == 3, names
    PassManager(["cleanup"]).run(prog)


@native
def test_report_names_the_chain_rule():
    from fw.quantization import report

    _, q, conv, rng = _lenet_ptq(1)
    rep = report(conv, rng.random((4, 1, 28, 28), dtype=np.float32), repeat=1)
    kinds = {lr.name: (lr.kernel, lr.reason) for lr in rep.layers}
    assert kinds["features.3"][0] == "int8", kinds
    for name in ("fc.0", "fc.1", "fc.2"):
        k, why = kinds[name]
        assert k == "fp32" and "float_linear_chains" in why and "58,920" in why, kinds


@native
def test_prepared_int8_kernels_equal_table_kernels():
    """A compiled program's prepared int8 kernels against the op table's kernels."""
    from fw.core.kernels.cpu.prepared import PREPARERS
    from fw.core.ops import OPS

    for name in ("quantized_conv2d", "quantized_matmul", "quantized_max_pool",
                 "quantize_linear", "dequantize_linear"):
        assert name in PREPARERS, name

    class _Op:
        def __init__(self, name, attrs):
            self.name, self.attrs = name, attrs

    rng = np.random.default_rng(3)
    x = rng.integers(0, 128, (4, 30)).astype(np.uint8)
    w = rng.integers(-127, 128, (30, 7)).astype(np.int8)
    xs, ws = np.float32([0.02]), rng.random(7).astype(np.float32) / 50
    b = rng.standard_normal(7).astype(np.float32)
    ys, yz = np.float32([0.05]), np.int32([3])
    attrs = {"activation": "relu", "residual_before_act": False, "out_dtype": "uint8",
             "qmin": 0, "qmax": 200}
    table = OPS["quantized_matmul"].kernels["cpu"]
    k = PREPARERS["quantized_matmul"](_Op("quantized_matmul", attrs), table)
    want = OPS["quantized_matmul"].reference(x, w, xs, ws, b, None, None, ys, yz, **attrs)
    for _ in range(2):  # the second call uses the remembered constants
        np.testing.assert_array_equal(k(x, w, xs, ws, b, None, None, ys, yz), want)
    xc = rng.integers(0, 128, (2, 6, 6, 3)).astype(np.uint8)
    wc = rng.integers(-127, 128, (4, 3, 3, 3)).astype(np.int8)
    cattrs = {"stride": (1,), "padding": (1,), "dilation": (1,), "groups": 1,
              "channel_last": True, "activation": "none", "residual_before_act": False,
              "out_dtype": "float32", "qmin": None, "qmax": None}
    cattrs = OPS["quantized_conv2d"].canon(dict(cattrs)) if OPS["quantized_conv2d"].canon \
        else cattrs
    kc = PREPARERS["quantized_conv2d"](_Op("quantized_conv2d", cattrs),
                                       OPS["quantized_conv2d"].kernels["cpu"])
    wsc = rng.random(4).astype(np.float32) / 50
    want = OPS["quantized_conv2d"].reference(xc, wc, xs, wsc, None, None, None, None, None,
                                             **cattrs)
    np.testing.assert_allclose(kc(xc, wc, xs, wsc), want, rtol=1e-5, atol=1e-5)
    f = rng.standard_normal((5, 9)).astype(np.float32)
    s, z = np.float32([0.01]), np.int32([0])
    qk = PREPARERS["quantize_linear"](_Op("quantize_linear", {"axis": -1, "qmin": -128,
                                                              "qmax": 127}),
                                      OPS["quantize_linear"].kernels["cpu"])
    codes = qk(f, s, z)
    np.testing.assert_array_equal(codes, OPS["quantize_linear"].reference(f, s, z, -1, -128,
                                                                          127))
    dk = PREPARERS["dequantize_linear"](_Op("dequantize_linear", {"axis": -1}),
                                        OPS["dequantize_linear"].kernels["cpu"])
    np.testing.assert_array_equal(dk(codes, s, z),
                                  OPS["dequantize_linear"].reference(codes, s, z, -1))
