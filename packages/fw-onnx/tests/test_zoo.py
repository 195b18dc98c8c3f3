"""The deployment zoo (tests/zoo.py: LeNet, ResNet-18, MobileNetV2, a BERT-style
encoder) exported once with a dynamic batch dim, checked by ``onnx.checker`` (full
shape inference, inside export) and run on onnxruntime at two batch sizes against
fw's eager forward.

Tolerance: |onnx - fw| <= 1e-5 * max(1, max|fw|). The float32 sums of a deep
network are evaluated in a different order by onnxruntime's kernels, so the error
grows with the magnitude of the outputs: ResNet-18's logits reach ~20 and differ by
~2e-5 (1e-6 relative). For outputs of magnitude <= 1 this is the plain 1e-5.

Random weights would let MobileNetV2's activations shrink to ~1e-8 through its 52
batch norms (running variance 1 against much smaller activations), making any
comparison vacuous: the batch norms are first calibrated on the example input
(one train-mode forward with momentum 0, so the running statistics are that
batch's, with the variances floored at 1e-2), which keeps every model's outputs of
order 1 and the models well conditioned (fw's own float32 result is then within
~1e-6 relative of its float64 one).
"""

from __future__ import annotations

import numpy as np
import pytest
import zoo
from onnx_testutil import session

import fw
import fw.onnx
from fw.jit import InputSpec

HW = 32  # image size of the image models: small keeps the tests fast
# MobileNetV2's outputs vanish with default batch-norm statistics (see the docstring);
# ResNet-18's do not (its logits are ~20), and calibrating it would only make it
# worse conditioned
CALIBRATE = {"mobilenet_v2"}


def _calibrate(model, x):
    bns = [m for m in model.sublayers() if hasattr(m, "_momentum") and hasattr(m, "_variance")]
    saved = [m._momentum for m in bns]
    for m in bns:
        m._momentum = 0.0
    model.train()
    with fw.no_grad():
        model(x)
    for m, mom in zip(bns, saved):
        m._momentum = mom
        # a channel almost constant over the calibration batch (var ~1e-10 at MobileNet's
        # 1x1 late feature maps) would amplify float32 rounding ~1e5-fold in fw and
        # onnxruntime alike; a floor keeps the model well conditioned
        m._variance.set_value(np.maximum(m._variance.numpy(), 1e-2).astype(np.float32))
    model.eval()


def _spec(name):
    shape, dtype = zoo.INPUTS[name]
    if name in ("resnet18", "mobilenet_v2"):
        shape = (shape[0], HW, HW)
    return [InputSpec([None, *shape], dtype, "x")]


@pytest.fixture(scope="module", params=zoo.names())
def exported(request, tmp_path_factory):
    name = request.param
    fw.seed(0)
    model = zoo.build(fw, name)
    hw = HW if name in ("resnet18", "mobilenet_v2") else None
    if name in CALIBRATE:
        _calibrate(model, zoo.example_input(fw, name, batch=4, hw=hw, seed=1))
    path = fw.onnx.export(model, tmp_path_factory.mktemp(name) / name, _spec(name))
    return name, model, path, hw


@pytest.mark.parametrize("batch", [1, 3])
def test_zoo_model_matches_fw(exported, batch):
    name, model, path, hw = exported
    x = zoo.example_input(fw, name, batch=batch, hw=hw, seed=batch)
    want = model(x).numpy()
    (got,) = session(path).run(None, {"x": x.numpy()})
    assert got.shape == want.shape and got.dtype == want.dtype
    scale = max(1.0, float(np.abs(want).max()))
    err = float(np.abs(got - want).max())
    assert err <= 1e-5 * scale, f"{name} batch {batch}: max |onnx - fw| = {err:.3g}"
    assert np.abs(want).max() > 1e-2  # a meaningful signal, not a vanished one


def test_zoo_file_keeps_the_batch_dynamic(exported):
    import onnx

    name, _, path, _ = exported
    m = onnx.load(path)
    dim0 = m.graph.input[0].type.tensor_type.shape.dim[0]
    assert dim0.dim_param and not dim0.dim_value
    # parameters are initializers named by the layer's structured names
    names = {t.name for t in m.graph.initializer}
    assert any(n.endswith(".weight") for n in names), sorted(names)[:5]
