"""ShuffleNetV2, SqueezeNet, DenseNet, GoogLeNet and InceptionV3 against real Paddle.

The fixtures (tests/fixtures/<constructor>.npz, written by tools/gen_paddle_fixtures.py
with Paddle 3.3.1) hold Paddle's state-dict names and shapes and its outputs for the
weights drawn by _weights.draw. Variants (num_classes <= 0, with_pool=False) are checked
against the same fixtures: the head Paddle applied is recomputed in NumPy on the
variant's features, with the drawn head weights.
"""

from __future__ import annotations

import doctest
import importlib
import json
import pathlib
import sys

import numpy as np
import pytest

import fw
from fw.core.errors import InvalidArgumentError
from fw.vision import models

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _weights import draw, image  # noqa: E402

FIXTURES = HERE / "fixtures"
PART_B = (
    [f"shufflenet_v2_{s}" for s in ("x0_25", "x0_33", "x0_5", "x1_0", "x1_5", "x2_0", "swish")]
    + ["squeezenet1_0", "squeezenet1_1"]
    + [f"densenet{d}" for d in (121, 161, 169, 201, 264)]
    + ["googlenet", "inception_v3"])


def _fixture(name):
    f = np.load(FIXTURES / f"{name}.npz")
    outs = [f[k] for k in sorted(k for k in f.files if k.startswith("output_"))]
    return json.loads(str(f["names"])), f["input"], outs


def _load_drawn(model):
    """Fill `model`'s state dict with _weights.draw (the fixtures' weights)."""
    sd = {k: draw(k, v.shape) for k, v in model.state_dict().items()}
    report = model.set_state_dict(sd)
    assert not report.missing_keys and not report.unexpected_keys
    model.eval()
    return sd


def _run(model, x):
    with fw.no_grad():
        out = model(fw.to_tensor(x))
    outs = out if isinstance(out, tuple) else (out,)
    return [o.numpy() for o in outs]


def _close(got, want):
    assert got.shape == want.shape
    scale = max(float(np.abs(want).max()), 1e-3)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * scale)


@pytest.mark.parametrize("name", PART_B)
def test_matches_paddle(name):
    names, x, want = _fixture(name)
    model = getattr(models, name)()
    got_names = [[k, list(v.shape)] for k, v in model.state_dict().items()]
    assert got_names == names
    _load_drawn(model)
    got = _run(model, x)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        _close(g, w)


def _linear(x, sd, prefix):
    # Paddle's Linear weight is [in, out]
    return x @ sd[prefix + ".weight"] + sd[prefix + ".bias"]


# Paddle's Dropout(mode="downscale_in_infer") scales by (1 - p) in eval mode
HEADS = {"shufflenet_v2_x0_25": ("_fc", 1.0), "shufflenet_v2_swish": ("_fc", 1.0),
         "densenet121": ("out", 1.0), "inception_v3": ("fc", 0.8)}


@pytest.mark.parametrize("name, with_pool", [("shufflenet_v2_x0_25", True),
                                             ("shufflenet_v2_swish", False),
                                             ("densenet121", False), ("inception_v3", False)])
def test_headless_variants(name, with_pool):
    """num_classes=0: no fc layer (Paddle's state dict without it); with_pool=True gives
    the pooled features [N, C, 1, 1], with_pool=False the last feature map. Paddle's
    head (pooling, dropout scaling, fc) applied to them in NumPy gives the fixture."""
    fc, keep = HEADS[name]
    names, x, (want,) = _fixture(name)
    model = getattr(models, name)(num_classes=0, with_pool=with_pool)
    assert [k for k, _ in names if not k.startswith(fc + ".")] == list(model.state_dict())
    _load_drawn(model)
    (feat,) = _run(model, x)
    assert feat.ndim == 4
    if with_pool:
        assert feat.shape[2:] == (1, 1)
    pooled = feat.mean(axis=(2, 3))
    sd = {k: draw(k, s) for k, s in names}
    _close(_linear(keep * pooled, sd, fc), want)


def test_squeezenet_variants():
    names, x, (want,) = _fixture("squeezenet1_1")
    # with_pool=False: the classifier's map before ReLU + global average pooling
    model = models.squeezenet1_1(with_pool=False)
    _load_drawn(model)
    (m,) = _run(model, x)
    assert m.ndim == 4 and m.shape[1] == 1000
    _close(np.maximum(m, 0).mean(axis=(2, 3)), want)
    # num_classes=0: Paddle keeps a 0-channel classifier conv (same state-dict names)
    model = models.squeezenet1_1(num_classes=0)
    assert [[k, list(v.shape)] for k, v in model.state_dict().items()][-2:] == [
        ["_conv9.weight", [0, 512, 1, 1]], ["_conv9.bias", [0]]]
    _load_drawn(model)
    (f,) = _run(model, x)
    assert f.shape == (1, 512)


def test_googlenet_tuple_and_aux_heads():
    """GoogLeNet returns (main, aux1, aux2); without heads (num_classes=0) it returns
    the three pooled maps, and Paddle's heads recomputed on them give the fixture."""
    names, x, want = _fixture("googlenet")
    model = models.googlenet(num_classes=0)
    assert [k for k, _ in names if k.split(".")[0] not in (
        "_fc_out", "_conv_o1", "_fc_o1", "_out1", "_conv_o2", "_fc_o2", "_out2")] == list(
        model.state_dict())
    _load_drawn(model)
    out, o1, o2 = _run(model, x)
    assert out.shape == (1, 1024, 1, 1) and o1.shape == (1, 512, 3, 3)
    assert o2.shape == (1, 528, 3, 3)
    sd = {k: draw(k, s) for k, s in names}

    def conv1x1(a, key):
        return np.einsum("nchw,oc->nohw", a, sd[key][:, :, 0, 0]).reshape(a.shape[0], -1)

    # eval-mode dropout scales by (1 - p): 0.6 in the main head, 0.3 in the aux heads
    _close(_linear(0.6 * out.reshape(1, -1), sd, "_fc_out"), want[0])
    h1 = np.maximum(_linear(conv1x1(o1, "_conv_o1._conv.weight"), sd, "_fc_o1"), 0)
    _close(_linear(0.3 * h1, sd, "_out1"), want[1])
    h2 = _linear(conv1x1(o2, "_conv_o2._conv.weight"), sd, "_fc_o2")  # no ReLU: Paddle's
    _close(_linear(0.3 * h2, sd, "_out2"), want[2])


def test_googlenet_input_size_error():
    model = models.GoogLeNet(num_classes=10)
    model.eval()
    with pytest.raises(InvalidArgumentError, match=r"GoogLeNet: auxiliary head 1.*189 to 236"):
        model(fw.to_tensor(image((1, 3, 96, 96))))


def test_inception_v3_minimum_input():
    model = models.InceptionV3(num_classes=0)
    model.eval()
    with pytest.raises(InvalidArgumentError, match=r"InceptionV3.*75x75.*\[1, 3, 74, 74\]"):
        model(fw.to_tensor(image((1, 3, 74, 74))))


@pytest.mark.parametrize("ctor, kwargs, match", [
    (models.ShuffleNetV2, {"scale": 0.75}, r"ShuffleNetV2: 'scale' must be one of .*0\.75"),
    (models.ShuffleNetV2, {"act": "gelu"}, r"ShuffleNetV2: 'act'.*'gelu'"),
    (models.SqueezeNet, {"version": "1.2"}, r"SqueezeNet: 'version'.*'1\.2'"),
    (models.DenseNet, {"layers": 100}, r"DenseNet: 'layers' must be one of .*100"),
])
def test_bad_arguments(ctor, kwargs, match):
    with pytest.raises(InvalidArgumentError, match=match):
        ctor(**kwargs)


def test_shufflenet_scale_and_act_variants():
    """The constructors' defaults: x0_33's stage widths, swish's activation."""
    m = models.shufflenet_v2_x0_33()
    assert m.scale == 0.33 and m.state_dict()["_last_conv.0.weight"].shape == [512, 128, 1, 1]
    assert type(models.shufflenet_v2_swish()._conv1[2]).__name__ == "Swish"
    with pytest.raises(TypeError, match="act"):
        models.shufflenet_v2_swish(act="relu")


# each module's own examples; of the functions whose docstrings share one template
# (shufflenet_v2_*, densenet*) the cheapest instance runs
DOCTESTED = {"shufflenetv2": ["ShuffleNetV2", "shufflenet_v2_x0_25"],
             "squeezenet": ["SqueezeNet", "squeezenet1_0", "squeezenet1_1"],
             "densenet": ["DenseNet", "densenet121"],
             "googlenet": ["GoogLeNet", "googlenet"],
             "inceptionv3": ["InceptionV3", "inception_v3"]}


@pytest.mark.parametrize("mod", sorted(DOCTESTED))
def test_docstring_examples(mod):
    m = importlib.import_module(f"fw.vision.models.{mod}")
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    finder = doctest.DocTestFinder()
    ran = []
    for name in DOCTESTED[mod]:
        for test in finder.find(getattr(m, name), name, module=m):
            if test.examples:
                runner.run(test)
                ran.append(test.name)
    assert sorted(ran) == sorted(DOCTESTED[mod])
    assert runner.failures == 0
