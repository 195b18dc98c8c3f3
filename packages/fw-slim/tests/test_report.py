"""fw.quantization.report and fw.slim.sensitivity: their figures against independent
computations, and their claims against what the program runs."""

import math

import numpy as np
import pytest

import fw
import fw.nn as nn
from fw.quantization import PTQ, QuantConfig, report
from fw.quantization import observers as O
from fw.slim import sensitivity, sqnr


def _helpers():  # (tests are imported with --import-mode=importlib: no sibling imports)
    import importlib.util
    import pathlib
    import sys

    if "_fw_slim_qhelpers" not in sys.modules:
        spec = importlib.util.spec_from_file_location(
            "_fw_slim_qhelpers", pathlib.Path(__file__).with_name("_qhelpers.py"))
        mod = importlib.util.module_from_spec(spec)
        sys.modules["_fw_slim_qhelpers"] = mod
        spec.loader.exec_module(mod)
    return sys.modules["_fw_slim_qhelpers"]


def _cfg():
    return QuantConfig(activation=O.AbsmaxObserver(), weight=O.AbsMaxChannelWiseWeightObserver())


def _converted(skip=()):
    fw.seed(0)
    model = _helpers().SmallNet()
    ptq = PTQ(_cfg().skip(list(skip)))
    q = ptq.quantize(model)
    x = fw.randn([8, 1, 6, 6])
    q(x)
    return model, ptq.convert(q), x


def test_sqnr():
    ref = np.array([1.0, -2.0, 3.0])
    assert sqnr(ref, ref) == math.inf
    np.testing.assert_allclose(sqnr(ref, ref + [0.1, 0, 0]), 10 * math.log10(14 / 0.01))
    with pytest.raises(ValueError, match="shapes differ"):
        sqnr(ref, ref[:2])


def test_layer_report_figures():
    model, conv, x = _converted(skip=["fc2"])
    rep = report(conv, x, reference=model, repeat=3)
    by = {r.name: r for r in rep.layers}
    assert set(by) == {"conv", "fc1", "fc2"}
    # the claims: these layers are too small for int8 (fold_qdq's min_macs), or there is
    # no int8 pass at all; every layer runs fp32 and says why
    assert all(r.kernel == "fp32" for r in rep.layers)
    assert ("min_macs" if rep.int8_passes else "no int8 pass") in by["conv"].reason
    assert by["fc2"].reason.startswith("not quantized")
    assert by["fc2"].sqnr_db is None and by["fc2"].weight_scale == ()
    # scales: what the converted layer holds
    ws = conv.fc1.weight_scale.numpy()
    assert by["fc1"].weight_scale == (float(ws.min()), float(ws.max()))
    assert by["fc1"].act_scale == float(conv.fc1.act_scale.numpy()[0])
    # SQNR of conv's output, recomputed from the two models' outputs
    with fw.no_grad():
        want = sqnr(model.conv(x).numpy(), conv.conv(x).numpy())
    np.testing.assert_allclose(by["conv"].sqnr_db, want, rtol=1e-9)
    assert 25 < by["conv"].sqnr_db < 80  # 8 bits, well scaled
    np.testing.assert_allclose(rep.output_sqnr_db, sqnr(model(x).numpy(), conv(x).numpy()))
    # sizes: the bytes of the tensors each model holds
    fp_bytes = sum(int(np.prod(p.shape)) * 4 for p in model.parameters())
    assert rep.bytes_fp32 == fp_bytes
    q_bytes = sum(np.asarray(t.numpy()).nbytes for t in
                  list(conv.parameters()) + [b for _, b in conv.named_buffers()])
    assert rep.bytes_quant == q_bytes and rep.size_ratio == fp_bytes / q_bytes
    assert all(r.ms_quant > 0 and r.ms_fp32 > 0 for r in rep.layers if r.sqnr_db is not None)
    assert rep.speedup == rep.ms_fp32 / rep.ms_quant
    text = str(rep)
    assert "conv" in text and "whole model" in text and "SQNR" in text


def test_report_on_saved_files(tmp_path):
    h = _helpers()
    model, conv, x = _converted()
    fq, _ = h.save_and_predict(conv, tmp_path / "q", x.numpy(), [1, 6, 6])
    ff, _ = h.save_and_predict(model, tmp_path / "f", x.numpy(), [1, 6, 6])
    # the Layers, already exported (to_static converted them), still report
    assert report(conv, x, reference=model, repeat=2).layers[0].sqnr_db > 25
    rep = report(fq, x, reference=ff, repeat=3)
    from fw.slim._model_file import model_file_sizes

    assert rep.bytes_quant == model_file_sizes(fq)["weights"]
    assert rep.bytes_fp32 == model_file_sizes(ff)["weights"]
    np.testing.assert_allclose(rep.output_sqnr_db, sqnr(model(x).numpy(), conv(x).numpy()),
                               rtol=1e-6)


def test_report_errors():
    with pytest.raises(ValueError, match="no converted quantized layers"):
        report(_helpers().SmallNet(), np.zeros((1, 1, 6, 6), np.float32))
    with pytest.raises(TypeError, match="'model_or_path' must be a Layer"):
        report(42, np.zeros(1))


class _Outlier(nn.Layer):
    """fc_b's input has one huge feature: per-tensor absmax ruins its other features."""

    def __init__(self):
        super().__init__()
        self.fc_a = nn.Linear(8, 8)
        self.fc_b = nn.Linear(8, 4)

    def forward(self, x):
        h = self.fc_a(x)
        big = fw.concat([h[:, :1] * 0 + 3000.0, h[:, 1:]], axis=1)
        return self.fc_b(big)


def test_sensitivity_ranks_the_fragile_layer_first_and_skip_is_honoured():
    fw.seed(5)
    model = _Outlier()
    x = fw.randn([64, 8])
    ref = model(x).numpy()

    def calibrate(q):
        q(x)

    def evaluate(m):  # higher is better: the negative error against fp32
        return -float(np.abs(m(x).numpy() - ref).mean())

    cfg = QuantConfig(activation=O.AbsmaxObserver(), weight=O.AbsmaxObserver())
    res = sensitivity(model, cfg, calibrate, evaluate)
    assert [r["layer"] for r in res.rows] == ["fc_b", "fc_a"]
    assert res.rows[0]["drop"] > 10 * res.rows[1]["drop"]
    assert res.baseline == 0.0
    skip = res.skip_list(max_drop=res.rows[1]["drop"])
    assert skip == ["fc_b"]
    ptq = PTQ(cfg.skip(skip))
    q = ptq.quantize(model)
    assert isinstance(q.fc_b, nn.Linear)  # left in fp32
    calibrate(q)
    assert evaluate(ptq.convert(q)) > res.rows[0]["metric"]
    assert "fc_b" in str(res)
    with pytest.raises(ValueError, match="not layers the config quantizes"):
        sensitivity(model, cfg, calibrate, evaluate, layers=["nope"])


class _Wide(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc_in = nn.Linear(128, 256)
        self.fc_mid = nn.Linear(256, 256)

    def forward(self, x):
        return self.fc_mid(fw.nn.functional.relu(self.fc_in(x)))


def test_int8_claims_match_the_program_the_predictor_runs(tmp_path):
    """A layer is reported int8 exactly when the Predictor's optimized program runs its
    product on an int8 op. fc_mid (65,536 MACs) reads a relu output quantized to uint8
    0..127 (7-bit asymmetric: exact on int8 kernels with or without VNNI); fc_in (32,768
    MACs, fold_qdq's threshold) reads signed int8, which runs int8 only with VNNI."""
    import fw.inference as infer
    from fw.core.kernels.cpu.int8 import EXACT_U8S8
    from fw.slim.report import _int8_passes

    if "fold_qdq" not in _int8_passes():
        pytest.skip("no int8 pass in this fw-core")
    fw.seed(6)
    model = _Wide()
    cfg = QuantConfig(activation=O.AbsmaxObserver(), weight=O.AbsMaxChannelWiseWeightObserver())
    cfg.add_name_config("fc_mid", activation=O.MinMaxObserver(quant_bits=7),
                        weight=O.AbsMaxChannelWiseWeightObserver())
    ptq = PTQ(cfg)
    q = ptq.quantize(model)
    x = fw.randn([16, 128])
    q(x)
    conv = ptq.convert(q)
    rep = report(conv, x, reference=model, repeat=3)
    by = {r.name: r for r in rep.layers}
    assert by["fc_mid"].kernel == "int8" and "quantized_matmul" in by["fc_mid"].reason
    assert by["fc_in"].kernel == ("int8" if EXACT_U8S8 else "fp32")
    if not EXACT_U8S8:
        assert "signed int8" in by["fc_in"].reason
    # what the Predictor runs: its optimized program, read back from the predictor
    file, served = _helpers().save_and_predict(conv, tmp_path / "m", x.numpy(), [128])
    from fw.core.ir.passes import PassManager
    from fw.core.ir.serialize import load

    prog, _ = load(file)
    PassManager(["inference"]).run(prog)
    ops = [op.name for op in prog.block.ops]
    assert ops.count("quantized_matmul") == sum(r.kernel == "int8" for r in rep.layers)
    np.testing.assert_allclose(served, conv(x).numpy(),
                               atol=float(np.abs(conv(x).numpy()).max()) / 127)
    assert by["fc_mid"].ms_quant > 0 and by["fc_mid"].ms_fp32 > 0
    del infer


class _LeNetConvs(nn.Layer):
    """LeNet's two convs: the 1 -> 6 stem (6 channel pairs) and the 6 -> 16 conv (96)."""

    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2D(1, 6, 5)
        self.c2 = nn.Conv2D(6, 16, 5)
        self.relu = nn.ReLU()

    def forward(self, x):
        return self.c2(self.relu(self.c1(x)))


def test_report_names_the_narrow_conv_fallback():
    """fold_qdq's shape rule (no timing): the stem stays fp32 and the report says why; the
    second conv runs int8; the converted model's output stays within 8-bit error."""
    from fw.core.ir.passes.fold_qdq import MIN_CONV_CHANNEL_PAIRS

    fw.seed(0)
    model = _LeNetConvs()
    ptq = PTQ(_cfg())
    q = ptq.quantize(model)
    x = fw.randn([4, 1, 16, 16])
    q(x)
    conv = ptq.convert(q)
    rep = report(conv, x, reference=model, repeat=1)
    by = {r.name: r for r in rep.layers}
    if not rep.int8_passes:
        pytest.skip("no int8 pass in this fw-core")
    assert by["c1"].kernel == "fp32", by["c1"]
    assert "min_channel_pairs" in by["c1"].reason and "1 x 6" in by["c1"].reason
    assert str(MIN_CONV_CHANNEL_PAIRS) in by["c1"].reason
    assert by["c2"].kernel == "int8", by["c2"]
    assert rep.output_sqnr_db > 25
