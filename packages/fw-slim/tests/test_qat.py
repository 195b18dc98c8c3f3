"""QAT: training through fake quantization (straight-through estimator) learns, and the
converted model served by fw.inference's Predictor equals the QAT model in eval mode
within one quantization step."""

import numpy as np
import pytest

import fw
import fw.nn.functional as F
from fw.quantization import QAT, QuantConfig
from fw.quantization import quanters as Q
from fw.quantization.layers import QuantedConv2D


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


def _data(n=64, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 1, 6, 6)).astype(np.float32)
    y = (x[:, 0, :3].mean((1, 2)) > x[:, 0, 3:].mean((1, 2))).astype(np.int64)  # 2 classes
    return x, y


CONFIGS = {
    "absmax": lambda: QuantConfig(activation=Q.FakeQuanterWithAbsMaxObserver(),
                                  weight=Q.FakeQuanterChannelWiseAbsMaxObserver()),
    "lsq": lambda: QuantConfig(activation=Q.LSQQuanter(),
                               weight=Q.LSQQuanter(per_channel=True)),
}


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_qat_learns_and_the_predictor_equals_the_qat_model(name, tmp_path):
    h = _helpers()
    fw.seed(0)
    model = h.SmallNet()
    qat = QAT(CONFIGS[name]())
    qm = qat.quantize(model)
    assert isinstance(qm.conv, QuantedConv2D) and qm.training
    opt = fw.optimizer.Adam(learning_rate=1e-2, parameters=qm.parameters())
    x, y = _data()
    xt, yt = fw.to_tensor(x), fw.to_tensor(y)
    losses = []
    for _ in range(30):
        loss = F.cross_entropy(qm(xt), yt)
        loss.backward()
        opt.step()
        opt.clear_grad()
        losses.append(float(loss))
    assert losses[-1] < 0.5 * losses[0], losses
    qm.eval()
    xe, _ = _data(16, seed=1)
    want = qm(fw.to_tensor(xe)).numpy()
    conv = qat.convert(qm)
    np.testing.assert_allclose(conv(fw.to_tensor(xe)).numpy(), want, atol=1e-5)
    _, got = h.save_and_predict(conv, tmp_path / "m", xe, [1, 6, 6])
    step = np.abs(want).max() / 127
    assert np.abs(got - want).max() <= step


def test_lsq_scale_is_trained():
    fw.seed(1)
    qm = QAT(CONFIGS["lsq"]()).quantize(_helpers().SmallNet())
    x, y = _data()
    qm(fw.to_tensor(x))  # the first batch initialises the scales
    s0 = qm.fc1.weight_quanter.scale.numpy().copy()
    opt = fw.optimizer.SGD(learning_rate=0.1, parameters=qm.parameters())
    loss = F.cross_entropy(qm(fw.to_tensor(x)), fw.to_tensor(y))
    loss.backward()
    g = qm.fc1.weight_quanter.scale.grad
    assert g is not None and np.abs(g.numpy()).max() > 0
    opt.step()
    assert not np.array_equal(qm.fc1.weight_quanter.scale.numpy(), s0)


def test_qat_needs_quanters():
    from fw.quantization import observers as O

    cfg = QuantConfig(activation=O.AbsmaxObserver(), weight=Q.FakeQuanterWithAbsMaxObserver())
    with pytest.raises(ValueError, match="layer 'conv' got the observer AbsmaxObserverLayer"):
        QAT(cfg).quantize(_helpers().SmallNet())
