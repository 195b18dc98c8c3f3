"""PTQ: quantize -> calibrate -> convert -> fw.jit.save -> fw.inference's Predictor, the
QDQ program it writes, the config's priorities and skips, and the errors."""

import numpy as np
import pytest

import fw
import fw.nn as nn
from fw.core.ir.serialize import load
from fw.quantization import PTQ, QuantConfig
from fw.quantization import observers as O
from fw.quantization.layers import ConvertedConv2D, ConvertedLinear, QuantedLinear
from fw.slim._model_file import model_file_sizes


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


SmallNet, fake_quant_model, save_and_predict = (
    _helpers().SmallNet, _helpers().fake_quant_model, _helpers().save_and_predict)

CONFIGS = {
    "absmax/per-channel": lambda: QuantConfig(activation=O.AbsmaxObserver(),
                                              weight=O.AbsMaxChannelWiseWeightObserver()),
    "minmax-asym/absmax": lambda: QuantConfig(activation=O.MinMaxObserver(),
                                              weight=O.AbsmaxObserver()),
    "hist-mse/per-channel": lambda: QuantConfig(activation=O.MSEObserver(bins_count=512),
                                                weight=O.AbsMaxChannelWiseWeightObserver()),
}


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_predictor_equals_the_fake_quant_model(name, tmp_path):
    fw.seed(0)
    model = SmallNet()
    ptq = PTQ(CONFIGS[name]())
    qmodel = ptq.quantize(model)
    assert qmodel is not model and isinstance(model.fc1, nn.Linear)  # inplace=False
    rng = np.random.default_rng(0)
    for _ in range(4):
        qmodel(fw.to_tensor(rng.normal(size=(8, 1, 6, 6)).astype(np.float32)))
    fake = fake_quant_model(qmodel)
    converted = ptq.convert(qmodel)
    x = rng.normal(size=(5, 1, 6, 6)).astype(np.float32)
    want = fake(fw.to_tensor(x)).numpy()
    _, got = save_and_predict(converted, tmp_path / "m", x, [1, 6, 6])
    step = np.abs(want).max() / 127  # one quantization step of the output
    assert np.abs(got - want).max() <= step, (np.abs(got - want).max(), step)
    # eager, the converted model is the fake-quant model too
    np.testing.assert_allclose(converted(fw.to_tensor(x)).numpy(), want, atol=step)
    # and the quantized model is close to the float one (8 bits)
    ref = model(fw.to_tensor(x)).numpy()
    assert np.abs(want - ref).max() < 0.1 * np.abs(ref).max() + 1e-3


def test_the_saved_program_is_qdq_with_int8_weights(tmp_path):
    fw.seed(1)
    model = SmallNet()
    ptq = PTQ(CONFIGS["absmax/per-channel"]())
    q = ptq.quantize(model)
    q(fw.randn([4, 1, 6, 6]))
    conv = ptq.convert(q)
    file, _ = save_and_predict(conv, tmp_path / "m", np.zeros((1, 1, 6, 6), np.float32),
                               [1, 6, 6])
    prog, params = load(file)
    text = str(prog)
    assert text.count("= quantize_linear(") == 3  # one per layer input
    assert text.count("= dequantize_linear(") == 6  # and one per weight
    # weights: int8 constants, per-channel dequantize on the output-channel axis
    for name, axis in (("conv", 0), ("fc1", 1), ("fc2", 1)):
        assert params[f"{name}.weight"].dtype == fw.int8
        assert params[f"{name}.weight_scale"].shape[0] == params[f"{name}.weight"].shape[axis]
    assert "{axis=0}" in text and "{axis=1}" in text


def test_weights_file_is_about_four_times_smaller(tmp_path):
    fw.seed(2)
    model = nn.Sequential(nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 256))
    # per-tensor weight scales: per-channel ones cost 8 bytes per output channel (a
    # float32 scale and an int32 zero point), 3 % of these weights
    ptq = PTQ(QuantConfig(activation=O.AbsmaxObserver(), weight=O.AbsmaxObserver()))
    q = ptq.quantize(model)
    q(fw.randn([16, 256]))
    x = np.zeros((1, 256), np.float32)
    f_fp, _ = save_and_predict(model, tmp_path / "fp", x, [256])
    f_q, _ = save_and_predict(ptq.convert(q), tmp_path / "q", x, [256])
    fp, qs = model_file_sizes(f_fp), model_file_sizes(f_q)
    # the weights (tensor data): 1 byte per weight + the float32 bias + per layer a
    # weight and an activation scale (float32) and zero point (int32)
    n_w, n_c = 2 * 256 * 256, 2 * 256
    assert qs["weights"] == n_w + 4 * n_c + 2 * 4 * 4
    assert fp["weights"] == 4 * (n_w + n_c)
    assert fp["weights"] / qs["weights"] >= 3.9


def test_config_priority_layer_over_name_over_type_over_global():
    fw.seed(3)
    model = SmallNet()
    cfg = QuantConfig(activation=O.AbsmaxObserver(), weight=O.AbsmaxObserver())
    cfg.add_type_config(nn.Linear, activation=O.MinMaxObserver(), weight=O.AbsmaxObserver())
    cfg.add_name_config("fc2", activation=None, weight=O.AbsmaxObserver(quant_bits=4))
    cfg.add_layer_config(model.fc2, activation=O.AbsmaxObserver(), weight=None)
    q = PTQ(cfg).quantize(model)
    assert type(q.conv.activation_quanter).__name__ == "AbsmaxObserverLayer"
    assert type(q.fc1.activation_quanter).__name__ == "MinMaxObserverLayer"
    # add_layer_config names the original object; the copy has other objects, so the
    # name config applies to fc2 of the copy... unless quantized in place:
    assert q.fc2.activation_quanter is None and q.fc2.weight_quanter.bit_length() == 4
    q2 = PTQ(cfg).quantize(model, inplace=True)
    assert q2 is model and q2.fc2.weight_quanter is None
    assert type(q2.fc2.activation_quanter).__name__ == "AbsmaxObserverLayer"


def test_skip_and_empty_configs_keep_layers_in_float():
    fw.seed(4)
    cfg = QuantConfig(activation=O.AbsmaxObserver(), weight=O.AbsmaxObserver()).skip(["fc2"])
    cfg.add_name_config("conv", activation=None, weight=None)
    q = PTQ(cfg).quantize(SmallNet())
    assert isinstance(q.fc1, QuantedLinear)
    assert isinstance(q.fc2, nn.Linear) and isinstance(q.conv, nn.Conv2D)
    q(fw.randn([2, 1, 6, 6]))
    c = PTQ(cfg).convert(q)
    assert isinstance(c.fc1, ConvertedLinear) and isinstance(c.fc2, nn.Linear)
    assert not isinstance(c.conv, ConvertedConv2D)


def test_errors():
    cfg = QuantConfig(activation=O.AbsmaxObserver(), weight=O.AbsmaxObserver())
    with pytest.raises(TypeError, match="'config' must be a QuantConfig"):
        PTQ({"activation": None})
    with pytest.raises(TypeError, match="'model' must be a Layer"):
        PTQ(cfg).quantize(lambda x: x)
    with pytest.raises(ValueError, match="no layer of the model matches"):
        PTQ(cfg).quantize(nn.Sequential(nn.ReLU()))
    with pytest.raises(ValueError, match="no quantized layers"):
        PTQ(cfg).convert(SmallNet())
    with pytest.raises(TypeError, match="add_type_config: 'layer_type'"):
        cfg.add_type_config("Linear")
    q = PTQ(cfg).quantize(SmallNet())
    with pytest.raises(RuntimeError, match="run calibration batches"):
        PTQ(cfg).convert(q)  # no calibration batch ran
    with pytest.raises(ValueError, match="already quantized"):
        PTQ(cfg).quantize(q)
