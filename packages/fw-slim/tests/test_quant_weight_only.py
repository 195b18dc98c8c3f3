"""fw.quantization.weight_only_quantize: every Linear of a model becomes a
WeightOnlyLinear (int8 or packed int4, per-channel or group-wise scales); the model
saves with fw.jit.save and the Predictor runs it."""

import numpy as np
import pytest

import fw
import fw.nn as nn
from fw.core.ir.serialize import load
from fw.nn.quant import WeightOnlyLinear
from fw.quantization import weight_only_quantize
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


def _mlp():
    fw.seed(0)
    return nn.Sequential(nn.Linear(512, 512), nn.GELU(), nn.Linear(512, 512))


@pytest.mark.parametrize("algo,group,min_ratio", [("weight_only_int8", -1, 3.9),
                                                  ("weight_only_int4", -1, 7.5),
                                                  ("weight_only_int4", 128, 7.3)])
def test_sizes_outputs_and_predictor(algo, group, min_ratio, tmp_path):
    model = _mlp()
    q = weight_only_quantize(model, algo=algo, group_size=group)
    assert isinstance(q[0], WeightOnlyLinear) and isinstance(model[0], nn.Linear)
    x = fw.randn([4, 512])
    ref, got = model(x).numpy(), q(x).numpy()
    # per output: at most half a step per weight, summed over the inputs
    qmax = 127 if algo.endswith("8") else 7
    rel = np.abs(got - ref).max() / np.abs(ref).max()
    assert rel < (0.02 if qmax == 127 else 0.3), rel
    h = _helpers()
    fq, served = h.save_and_predict(q, tmp_path / "q", x.numpy(), [512])
    ff, _ = h.save_and_predict(model, tmp_path / "f", x.numpy(), [512])
    np.testing.assert_allclose(served, got, rtol=1e-5, atol=1e-5)
    ratio = model_file_sizes(ff)["weights"] / model_file_sizes(fq)["weights"]
    assert ratio >= min_ratio, ratio
    assert str(load(fq)[0]).count("= weight_only_linear(") == 2


def test_skip_and_errors():
    model = _mlp()
    q = weight_only_quantize(model, skip=["2"])
    assert isinstance(q[0], WeightOnlyLinear) and isinstance(q[2], nn.Linear)
    with pytest.raises(ValueError, match="no Linear layer"):
        weight_only_quantize(nn.Sequential(nn.ReLU()))
    with pytest.raises(Exception, match="must divide"):
        weight_only_quantize(model, group_size=7)
