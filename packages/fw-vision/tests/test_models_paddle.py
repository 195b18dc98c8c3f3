"""fw.vision.models against real Paddle 3.3.1: for every committed fixture
(tests/fixtures/<name>.npz, written by tools/gen_paddle_fixtures.py) whose
constructor exists in fw.vision.models, the fw model has the same state-dict names
and shapes in the same order, and — given the same deterministically drawn weights —
the same eval-mode outputs."""

from __future__ import annotations

import json
import pathlib
import sys

import numpy as np
import pytest

import fw
from fw.vision import models

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from _weights import draw, image  # noqa: E402

FIXTURES = pathlib.Path(__file__).resolve().parent / "fixtures"

# the biggest architectures, marked slow because each measured > 3 s on its own here
# (2-core shared machine: drawing 60-145M weights, or fw's grouped convolutions);
# every family still runs in the default suite: AlexNet and VGG through their
# features-only fixtures (the conv trunk, without the 100M-parameter classifier),
# ResNet-18/34/50, ResNeXt-50, Wide ResNet-50 and all MobileNets in full
SLOW = {"alexnet", "vgg11", "vgg11_bn", "vgg13", "vgg13_bn", "vgg16", "vgg16_bn", "vgg19",
        "vgg19_bn", "resnet101", "resnet152", "resnext101_32x4d", "resnext101_64x4d",
        "resnext152_32x4d", "resnext152_64x4d", "wide_resnet101_2",
        # part B's biggest (each > 3 s here): tests/test_models_paddle_b.py already
        # checks them against the same fixtures in the default suite
        "googlenet", "inception_v3", "densenet161", "densenet264"}


def _spec(path: pathlib.Path):
    """(constructor name, kwargs) of a model fixture, None for other fixtures (ops,
    transforms); model fixtures without the ``ctor`` field name their constructor by
    the file name (``lenet`` -> ``LeNet``)."""
    with np.load(path) as z:
        if "names" not in z.files:
            return None
        if "ctor" in z.files:
            return str(z["ctor"]), json.loads(str(z["kwargs"]))
    return ("LeNet" if path.stem == "lenet" else path.stem), {}


def _cases():
    out = []
    for path in sorted(FIXTURES.glob("*.npz")):
        spec = _spec(path)
        if spec is None:
            continue
        ctor, kwargs = spec
        if not hasattr(models, ctor):
            continue  # another part's constructor, not built (yet)
        marks = [pytest.mark.slow] if path.stem in SLOW else []
        out.append(pytest.param(path, ctor, kwargs, id=path.stem, marks=marks))
    return out


# the previous model's drawn weights: consecutive fixtures (vgg11, vgg11_bn, vgg13, …)
# share many entries (VGG's 120M-parameter classifier, ResNet stems); drawing them
# once saves most of the time, keeping only one model's arrays bounds the memory
_previous: dict = {}


def _drawn(names) -> dict:
    global _previous
    current = {}
    for k, s in names:
        key = (k, tuple(s))
        current[key] = _previous[key] if key in _previous else draw(k, s)
    _previous = current
    return {k: current[(k, tuple(s))] for k, s in names}


@pytest.fixture(scope="module", autouse=True)
def _fast_build():
    """Build the models with constant (zero) default initializers — every entry is
    overwritten by the drawn weights, and the random default initializers cost more
    than the test itself for the 100M-parameter models; free the cache at the end."""
    from fw.nn import initializer as I

    I.set_global_initializer(I.Constant(0.0), I.Constant(0.0))
    try:
        yield
    finally:
        I.set_global_initializer(None)
        _previous.clear()


@pytest.mark.parametrize("path,ctor,kwargs", _cases())
def test_matches_paddle(path, ctor, kwargs):
    with np.load(path) as z:
        names = json.loads(str(z["names"]))
        x = z["input"] if "input" in z.files else image(tuple(int(d) for d in z["input_shape"]))
        expected = [z[f"output_{i}"] for i in range(len(z.files)) if f"output_{i}" in z.files]
    model = getattr(models, ctor)(**kwargs)
    model.eval()
    sd = model.state_dict()
    got = [[k, list(v.shape)] for k, v in sd.items()]
    assert got == names, f"{ctor}({kwargs}): state-dict names/shapes differ from Paddle's"
    report = model.set_state_dict(_drawn(names))
    assert not report.missing_keys and not report.unexpected_keys
    with fw.no_grad():
        out = model(fw.to_tensor(x))
    outs = out if isinstance(out, (tuple, list)) else [out]
    assert len(outs) == len(expected)
    for o, e in zip(outs, expected):
        o = np.asarray(o.numpy())
        assert o.shape == e.shape
        scale = float(np.abs(e).max()) or 1.0
        np.testing.assert_allclose(o, e, rtol=1e-4, atol=1e-4 * scale)


def test_every_part_a_constructor_has_a_fixture():
    # the fixtures cover every constructor this part builds (a new one without a
    # fixture would silently go untested)
    part_a = {"LeNet", "alexnet", "vgg11", "vgg13", "vgg16", "vgg19", "resnet18",
              "resnet34", "resnet50", "resnet101", "resnet152", "resnext50_32x4d",
              "resnext50_64x4d", "resnext101_32x4d", "resnext101_64x4d", "resnext152_32x4d",
              "resnext152_64x4d", "wide_resnet50_2", "wide_resnet101_2", "mobilenet_v1",
              "mobilenet_v2", "mobilenet_v3_small", "mobilenet_v3_large"}
    covered = {spec[0] for spec in map(_spec, FIXTURES.glob("*.npz")) if spec is not None}
    assert part_a <= covered, sorted(part_a - covered)
