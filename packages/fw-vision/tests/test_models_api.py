"""fw.vision.models (part A): arguments with Paddle's semantics (num_classes <= 0
means features only, with_pool, scale, batch_norm), the channel rounding rule, the
zoo registry and the errors. Numerical equality with Paddle is in
test_models_paddle.py."""

from __future__ import annotations

import pytest

import fw
from fw.vision import models
from fw.vision.models import _zoo
from fw.vision.models._utils import ConvNormActivation, _make_divisible


def _out(model, shape):
    model.eval()
    with fw.no_grad():
        return model(fw.rand(shape))


@pytest.mark.parametrize("v,divisor,expected", [
    (16, 8, 16), (32 * 0.5, 8, 16), (10, 8, 16), (3, 8, 8), (1280 * 1.4, 8, 1792),
    (72 * 0.75, 8, 56), (36, 8, 40), (60, 16, 64),
])
def test_make_divisible_known_values(v, divisor, expected):
    # values of Paddle's / torchvision's rule: round to nearest multiple, never more
    # than 10 % below v
    assert _make_divisible(v, divisor) == expected


def test_conv_norm_activation_layout():
    block = ConvNormActivation(3, 8, kernel_size=5, stride=2, activation_layer=None)
    assert list(block.state_dict()) == ["0.weight", "1.weight", "1.bias", "1._mean",
                                        "1._variance"]
    assert _out(block, [1, 3, 9, 9]).shape == [1, 8, 5, 5]  # padding 2 from kernel 5
    plain = ConvNormActivation(3, 4, norm_layer=None)
    assert list(plain.state_dict()) == ["0.weight", "0.bias"]  # bias when no norm


@pytest.mark.parametrize("ctor,kwargs,shape,expected", [
    (models.LeNet, {"num_classes": 0}, [2, 1, 28, 28], [2, 16, 5, 5]),
    (models.LeNet, {"num_classes": 3}, [2, 1, 28, 28], [2, 3]),
    (models.resnet18, {"num_classes": 0}, [1, 3, 64, 64], [1, 512, 1, 1]),
    (models.resnet18, {"num_classes": -1, "with_pool": False}, [1, 3, 64, 64],
     [1, 512, 2, 2]),
    (models.resnet18, {"num_classes": 5}, [2, 3, 48, 48], [2, 5]),
    (models.mobilenet_v1, {"scale": 0.25, "num_classes": 0, "with_pool": False},
     [1, 3, 64, 64], [1, 256, 2, 2]),
    (models.mobilenet_v2, {"scale": 0.5, "num_classes": 0}, [1, 3, 32, 32],
     [1, 1280, 1, 1]),
    (models.mobilenet_v3_small, {"num_classes": 0, "with_pool": False}, [1, 3, 64, 64],
     [1, 576, 2, 2]),
    (models.mobilenet_v3_large, {"scale": 0.5, "num_classes": 4}, [1, 3, 32, 32], [1, 4]),
    (models.vgg11, {"num_classes": 0, "with_pool": False}, [1, 3, 64, 64], [1, 512, 2, 2]),
    (models.vgg11, {"num_classes": 0}, [1, 3, 64, 64], [1, 512, 7, 7]),
])
def test_num_classes_and_with_pool(ctor, kwargs, shape, expected):
    # shapes only: constant initializers skip the (slow) random draws
    from fw.nn import initializer as I

    I.set_global_initializer(I.Constant(0.5), I.Constant(0.0))
    try:
        model = ctor(**kwargs)
    finally:
        I.set_global_initializer(None)
    assert _out(model, shape).shape == expected
    heads = ("fc.", "classifier.", "_fc")
    has_head = any(k.startswith(heads) for k in model.state_dict())
    assert has_head == (kwargs.get("num_classes", 1) > 0)


def test_alexnet_features_only():
    model = models.alexnet(num_classes=0)  # no classifier: nothing big to initialise
    assert not any(k.startswith("_fc") for k in model.state_dict())
    assert _out(model, [1, 3, 224, 224]).shape == [1, 256, 6, 6]


def _lazy():
    # shapes only: parameters built under LazyGuard hold no memory and skip the
    # (slow) random initialisation
    return fw.nn.initializer.LazyGuard()


def test_scale_changes_widths_like_paddle():
    with _lazy():
        _check_scaled_widths()


def _check_scaled_widths():
    assert models.mobilenet_v1(scale=0.5).fc.weight.shape == [512, 1000]
    # MobileNetV2's last conv widens above scale 1 only: 1280 * 1.4 = 1792
    assert models.mobilenet_v2(scale=1.4).classifier[1].weight.shape == [1792, 1000]
    assert models.mobilenet_v2(scale=0.35).classifier[1].weight.shape == [1280, 1000]
    assert models.MobileNetV3Small(scale=0.5).classifier[0].weight.shape == [288, 512]


def test_vgg_batch_norm_layers():
    with _lazy():
        plain, bn = models.vgg11(num_classes=0), models.vgg11(batch_norm=True, num_classes=0)
    assert len(plain.features) == 8 + 5 + 8 and len(bn.features) == 8 * 3 + 5
    assert sum(k.endswith("_variance") for k in bn.state_dict()) == 8


def test_resnext_and_wide_widths():
    # ResNeXt 32x4d: the first bottleneck's 3x3 conv has 32 groups of 4 channels;
    # Wide ResNet doubles the bottleneck width
    with _lazy():
        rx = models.resnext50_32x4d(num_classes=0)
        wide = models.wide_resnet50_2(num_classes=0)
    assert rx.layer1[0].conv2.weight.shape == [128, 4, 3, 3]
    assert wide.layer1[0].conv2.weight.shape == [128, 128, 3, 3]


def test_bad_arguments_raise_clear_errors():
    with pytest.raises(ValueError, match=r"ResNet: 'depth' must be one of .*got 20"):
        models.ResNet(models.resnet.BasicBlock, 20)
    with pytest.raises(NotImplementedError, match="BasicBlock: dilation"):
        models.resnet.BasicBlock(8, 8, dilation=2)
    with pytest.raises(ValueError, match="InvertedResidual: 'stride' must be 1 or 2"):
        models.mobilenetv2.InvertedResidual(8, 8, 3, 6)
    with pytest.raises(ValueError, match="'activation' must be None, 'relu' or 'hardswish'"):
        models.mobilenetv3.InvertedResidualConfig(16, 3, 16, 16, False, "gelu", 1)


@pytest.mark.parametrize("call,arch", [
    (lambda: models.vgg11(pretrained=True), "vgg11"),
    (lambda: models.vgg16(pretrained=True, batch_norm=True), "vgg16_bn"),
    (lambda: models.mobilenet_v1(pretrained=True, scale=0.5), "mobilenetv1_0.5"),
    (lambda: models.mobilenet_v2(pretrained=True, scale=0.75), "mobilenetv2_0.75"),
    (lambda: models.mobilenet_v3_small(pretrained=True, scale=0.5),
     "mobilenet_v3_small_x0.5"),
    (lambda: _zoo.ZOO["lenet"]["fn"](pretrained=True), None),
])
def test_pretrained_without_published_weights_raises(call, arch, monkeypatch):
    # no download is attempted: the check happens before building the model
    import fw.utils.download as dl

    monkeypatch.setattr(dl, "get_weights_path_from_url",
                        lambda *a, **k: pytest.fail("download attempted"), raising=False)
    with pytest.raises(ValueError, match="no pretrained") as e:
        call()
    if arch is not None:
        assert repr(arch) in str(e.value) and "pretrained=False" in str(e.value)


# --- the zoo registry (fw.hub's built-in zoo reads it through an entry point) ---

PART_A = ["lenet", "alexnet"] + [f"vgg{d}{b}" for d in (11, 13, 16, 19) for b in ("", "_bn")] + [
    "resnet18", "resnet34", "resnet50", "resnet101", "resnet152", "resnext50_32x4d",
    "resnext50_64x4d", "resnext101_32x4d", "resnext101_64x4d", "resnext152_32x4d",
    "resnext152_64x4d", "wide_resnet50_2", "wide_resnet101_2", "mobilenet_v1",
    "mobilenet_v2", "mobilenet_v3_small", "mobilenet_v3_large"]
PUBLISHED = {"alexnet", "vgg16", "vgg19", "resnet18", "resnet34", "resnet50", "resnet101",
             "resnet152", "resnext50_32x4d", "resnext50_64x4d", "resnext101_32x4d",
             "resnext101_64x4d", "resnext152_32x4d", "resnext152_64x4d", "wide_resnet50_2",
             "wide_resnet101_2", "mobilenet_v1", "mobilenet_v2", "mobilenet_v3_small",
             "mobilenet_v3_large"}


def test_zoo_entries_follow_the_contract():
    assert set(PART_A) <= set(_zoo.ZOO)
    for name in PART_A:
        e = _zoo.ZOO[name]
        assert set(e) >= {"fn", "doc", "configs", "task", "weights"}, name
        assert callable(e["fn"]) and e["doc"] and isinstance(e["configs"], dict)
        assert e["task"] == "image-classification"
        if name in PUBLISHED:
            w = e["weights"]
            assert w["url"].startswith("https://paddle-") and w["url"].endswith(".pdparams")
            assert len(w["md5"]) == 32 and w["sha256"] is None
        else:
            assert e["weights"] is None, name
    # Paddle's published file names and checksums (paddle/vision/models/*.py)
    assert _zoo.ZOO["resnet18"]["weights"] == {
        "url": "https://paddle-hapi.bj.bcebos.com/models/resnet18.pdparams",
        "md5": "cf548f46534aa3560945be4b95cd11c4", "sha256": None}
    assert _zoo.ZOO["mobilenet_v2"]["weights"]["url"].endswith("mobilenet_v2_x1.0.pdparams")


@pytest.mark.parametrize("name,kwargs,cls", [
    ("lenet", {}, models.LeNet), ("vgg13_bn", {"num_classes": 0}, models.VGG),
    ("resnext50_64x4d", {"num_classes": 0}, models.ResNet),
    ("mobilenet_v3_small", {"scale": 0.5}, models.MobileNetV3Small),
])
def test_zoo_fn_builds_the_model(name, kwargs, cls):
    with _lazy():
        model = _zoo.ZOO[name]["fn"](pretrained=False, **kwargs)
    assert type(model) is cls
    if name == "vgg13_bn":
        assert any(k.endswith("_variance") for k in model.state_dict())
    if name == "resnext50_64x4d":
        assert model.groups == 64


def test_zoo_rejects_duplicates():
    with pytest.raises(ValueError, match="duplicate zoo entry 'resnet18'"):
        _zoo._add("resnet18", models.resnet18, "again", {})


@pytest.mark.parametrize("ctor,kwargs,shape,needs", [
    (models.LeNet, {}, [1, 1, 32, 32], r"LeNet: the classifier takes 400 features per "
                                       r"sample, but an input of shape \[1, 1, 32, 32\] "
                                       r"gives features \[16, 6, 6\] \(576\).*\[N, 1, 28, 28\]"),
    (models.alexnet, {}, [1, 3, 64, 64], r"AlexNet: .*takes 9216 .*\[1, 3, 64, 64\].*224x224"),
    (models.resnet18, {"with_pool": False}, [1, 3, 64, 64],
     r"ResNet: .*takes 512 .*\[512, 2, 2\] \(2048\).*with_pool=True"),
    (models.mobilenet_v1, {"scale": 0.25, "with_pool": False}, [1, 3, 64, 64],
     r"MobileNetV1: .*takes 256 "),
    (models.mobilenet_v2, {"scale": 0.35, "with_pool": False}, [1, 3, 64, 64],
     r"MobileNetV2: .*takes 1280 "),
    (models.mobilenet_v3_small, {"with_pool": False}, [1, 3, 64, 64],
     r"MobileNetV3Small: .*takes 576 "),
])
def test_classifier_input_size_errors(ctor, kwargs, shape, needs):
    # a model without adaptive pooling (or with with_pool=False) given another input
    # size: the error names the model, the input and what it needs
    from fw.core.errors import InvalidArgumentError

    # the classifier's parameters stay lazy (no memory, never initialised): the check
    # must fire before the classifier runs
    with fw.nn.initializer.LazyGuard():
        model = ctor(**kwargs)
    for name, p in model.named_parameters():
        if not name.startswith(("fc", "_fc", "classifier")):
            p.initialize()
    with pytest.raises(InvalidArgumentError, match=needs):
        _out(model, shape)


def test_vgg_without_pool_names_its_input():
    from fw.core.errors import InvalidArgumentError

    with fw.nn.initializer.LazyGuard():  # the 25088x4096 classifier is never run
        model = models.vgg11(with_pool=False)
    for p in model.features.parameters():
        p.initialize()
    with pytest.raises(InvalidArgumentError, match=r"VGG: .*takes 25088 .*\[1, 3, 32, 32\]"):
        _out(model, [1, 3, 32, 32])
    assert model.classifier[0].weight.is_lazy


def test_traced_model_with_dynamic_batch():
    # the classifier-input check leaves dynamic (-1) sizes alone: to_static with a
    # None batch traces, and the program runs other batch sizes
    jit = pytest.importorskip("fw.jit")
    from fw.static import InputSpec

    model = models.mobilenet_v3_small(scale=0.5, num_classes=4)
    model.eval()
    x = fw.rand([3, 3, 32, 32])
    with fw.no_grad():
        eager = model(x).numpy()
    static = jit.to_static(model, input_spec=[InputSpec([None, 3, 32, 32], "float32")])
    with fw.no_grad():
        out = static(x).numpy()
    assert out.shape == (3, 4)
    assert abs(out - eager).max() < 1e-4


# --- signatures: Paddle's argument names, kinds and defaults -------------------------

def _paddle_signatures() -> dict:
    import json
    import pathlib

    path = pathlib.Path(__file__).resolve().parent / "fixtures" / "models_signatures.json"
    return json.loads(path.read_text())


@pytest.mark.parametrize("name", sorted(_paddle_signatures()))
def test_signature_matches_paddle(name):
    # recorded from Paddle 3.3.1 by tools/gen_models_signatures.py
    import inspect

    assert hasattr(models, name), f"paddle.vision.models.{name} has no fw counterpart"
    params = inspect.signature(getattr(models, name)).parameters.values()
    got = [[p.name, p.kind.name,
            None if p.default is inspect.Parameter.empty else repr(p.default)] for p in params]
    assert got == _paddle_signatures()[name]
