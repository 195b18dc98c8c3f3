"""ShuffleNetV2, SqueezeNet, DenseNet, GoogLeNet and InceptionV3 (part B) beyond the
generic fixture test (test_models_paddle.py checks every fixture — default
constructors and variants such as ``googlenet_features`` — against real Paddle 3.3.1):
GoogLeNet's tuple, whose three heads recomputed in NumPy on the headless model's maps
give Paddle's outputs; the errors; the published weights each constructor asks for;
head-aware pretrained loading through a loopback mirror; the zoo entries; the
docstring examples.
"""

from __future__ import annotations

import doctest
import hashlib
import importlib
import json
import pathlib
import pickle
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
HAPI = "https://paddle-hapi.bj.bcebos.com/models/"
IMAGENET = "https://paddle-imagenet-models-name.bj.bcebos.com/dygraph/"


def _fixture(name):
    with np.load(FIXTURES / f"{name}.npz") as f:
        outs = [f[k] for k in sorted(k for k in f.files if k.startswith("output_"))]
        x = f["input"] if "input" in f.files else image(tuple(int(d) for d in f["input_shape"]))
        return json.loads(str(f["names"])), x, outs


def _load_drawn(model):
    """Fill `model`'s state dict with _weights.draw (the fixtures' weights)."""
    report = model.set_state_dict({k: draw(k, v.shape) for k, v in model.state_dict().items()})
    assert not report.missing_keys and not report.unexpected_keys
    model.eval()


def _run(model, x):
    with fw.no_grad():
        out = model(fw.to_tensor(x))
    return [o.numpy() for o in (out if isinstance(out, tuple) else (out,))]


def _close(got, want):
    assert got.shape == want.shape
    scale = max(float(np.abs(want).max()), 1e-3)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * scale)


def _linear(x, sd, prefix):
    # Paddle's Linear weight is [in, out]
    return x @ sd[prefix + ".weight"] + sd[prefix + ".bias"]


@pytest.fixture
def fast_init():
    """Constant initializers, for tests that overwrite or never read the weights
    (drawing a big model's random initial values costs more than such a test)."""
    from fw.nn import initializer as I

    I.set_global_initializer(I.Constant(0.0), I.Constant(0.0))
    yield
    I.set_global_initializer(None)


GOOGLENET_HEADS = ("_fc_out", "_conv_o1", "_fc_o1", "_out1", "_conv_o2", "_fc_o2", "_out2")


def test_googlenet_tuple_and_aux_heads():
    """GoogLeNet returns (main, aux1, aux2); without heads (num_classes=0) it returns
    the three pooled maps, and Paddle's heads recomputed on them give the fixture."""
    names, x, want = _fixture("googlenet")
    assert len(want) == 3
    model = models.googlenet(num_classes=0)
    assert [k for k, _ in names if k.split(".")[0] not in GOOGLENET_HEADS] == list(
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


def test_googlenet_input_size_error(fast_init):
    model = models.GoogLeNet(num_classes=10)
    model.eval()
    with pytest.raises(InvalidArgumentError, match=r"GoogLeNet \(auxiliary head 1.*1152.*"
                                                   r"\[1, 3, 96, 96\].*189 to 236"):
        model(fw.to_tensor(image((1, 3, 96, 96))))
    # without pooling the main head's 5x5 map cannot fit either (Paddle fails in matmul)
    model = models.GoogLeNet(num_classes=10, with_pool=False)
    model.eval()
    with pytest.raises(InvalidArgumentError, match=r"GoogLeNet \(main head\).*1024.*"
                                                   r"\[1024, 5, 5\].*with_pool=True"):
        model(fw.to_tensor(image((1, 3, 189, 189))))


@pytest.mark.parametrize("ctor, in_features", [(models.shufflenet_v2_x0_25, 512),
                                               (models.densenet121, 1024)])
def test_classifier_without_pool_needs_a_1x1_map(ctor, in_features, fast_init):
    """with_pool=False and a classifier: the flattened map must fit the fc layer (a 1x1
    map, a 32x32 input); a 64x64 input's 2x2 map is refused, naming the sizes."""
    model = ctor(num_classes=10, with_pool=False)
    model.eval()
    assert model(fw.to_tensor(image((1, 3, 32, 32)))).shape == [1, 10]
    with pytest.raises(InvalidArgumentError, match=rf"takes {in_features} features.*"
                                                   rf"\[1, 3, 64, 64\].*with_pool=True"):
        model(fw.to_tensor(image((1, 3, 64, 64))))


def test_inception_v3_minimum_input(fast_init):
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


def test_shufflenet_scale_and_act_variants(fast_init):
    """The constructors' defaults: x0_33's stage widths, swish's activation."""
    m = models.shufflenet_v2_x0_33()
    assert m.scale == 0.33 and m.state_dict()["_last_conv.0.weight"].shape == [512, 128, 1, 1]
    assert type(models.shufflenet_v2_swish()._conv1[2]).__name__ == "Swish"
    with pytest.raises(TypeError, match="act"):
        models.shufflenet_v2_swish(act="relu")


# --- pretrained weights: Paddle 3.3.1's published files (URL, md5 from its model files) ---
PUBLISHED = {
    "shufflenet_v2_x0_25": (HAPI + "shufflenet_v2_x0_25.pdparams",
                            "1e509b4c140eeb096bb16e214796d03b"),
    "shufflenet_v2_x0_33": (HAPI + "shufflenet_v2_x0_33.pdparams",
                            "3d7b3ab0eaa5c0927ff1026d31b729bd"),
    "shufflenet_v2_x0_5": (HAPI + "shufflenet_v2_x0_5.pdparams",
                           "5e5cee182a7793c4e4c73949b1a71bd4"),
    "shufflenet_v2_x1_0": (HAPI + "shufflenet_v2_x1_0.pdparams",
                           "122d42478b9e81eb49f8a9ede327b1a4"),
    "shufflenet_v2_x1_5": (HAPI + "shufflenet_v2_x1_5.pdparams",
                           "faced5827380d73531d0ee027c67826d"),
    "shufflenet_v2_x2_0": (HAPI + "shufflenet_v2_x2_0.pdparams",
                           "cd3dddcd8305e7bcd8ad14d1c69a5784"),
    "shufflenet_v2_swish": (HAPI + "shufflenet_v2_swish.pdparams",
                            "adde0aa3b023e5b0c94a68be1c394b84"),
    "squeezenet1_0": (IMAGENET + "SqueezeNet1_0_pretrained.pdparams",
                      "30b95af60a2178f03cf9b66cd77e1db1"),
    "squeezenet1_1": (IMAGENET + "SqueezeNet1_1_pretrained.pdparams",
                      "a11250d3a1f91d7131fd095ebbf09eee"),
    "densenet121": (IMAGENET + "DenseNet121_pretrained.pdparams",
                    "db1b239ed80a905290fd8b01d3af08e4"),
    "densenet161": (IMAGENET + "DenseNet161_pretrained.pdparams",
                    "62158869cb315098bd25ddbfd308a853"),
    "densenet169": (IMAGENET + "DenseNet169_pretrained.pdparams",
                    "82cc7c635c3f19098c748850efb2d796"),
    "densenet201": (IMAGENET + "DenseNet201_pretrained.pdparams",
                    "16ca29565a7712329cf9e36e02caaf58"),
    "densenet264": (IMAGENET + "DenseNet264_pretrained.pdparams",
                    "3270ce516b85370bba88cfdd9f60bff4"),
    "googlenet": (IMAGENET + "GoogLeNet_pretrained.pdparams",
                  "80c06f038e905c53ab32c40eca6e26ae"),
    "inception_v3": (HAPI + "inception_v3.pdparams", "649a4547c3243e8b59c656f41fe330b8"),
}


class _Asked(Exception):
    pass


def test_pretrained_asks_for_paddles_published_file(monkeypatch, fast_init):
    import fw.utils.download as dl

    asked = []

    def record(url, md5sum=None):
        asked.append((url, md5sum))
        raise _Asked

    monkeypatch.setattr(dl, "get_weights_path_from_url", record)
    for name, published in PUBLISHED.items():
        with pytest.raises(_Asked):
            getattr(models, name)(pretrained=True)
        assert asked.pop() == published, name


def _paddle_pickle(state: dict) -> bytes:
    """paddle.save's .pdparams layout: a protocol-4 pickle of name -> ndarray (plus
    Paddle's "StructuredToParameterName@@" table)."""
    d = {k: np.asarray(v, np.float32) for k, v in state.items()}
    d["StructuredToParameterName@@"] = {k: f"param_{i}" for i, k in enumerate(state)}
    return pickle.dumps(d, protocol=4)


@pytest.fixture
def served_weights(tmp_path, monkeypatch):
    """Paddle's URLs rewritten (FW_HUB_MIRRORS) to a loopback server of `root`, with
    an empty cache; yields `root`."""
    from fw.hub.testing import serve_directory

    root = tmp_path / "served"
    root.mkdir()
    monkeypatch.setenv("FW_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("FW_HUB_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("FW_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    with serve_directory(root) as base:
        monkeypatch.setenv("FW_HUB_MIRRORS", f"{HAPI}={base}/hapi/,{IMAGENET}={base}/imagenet/")
        yield root


def _serve(root, monkeypatch, module, arch, state):
    """Put `state` as Paddle's file of `arch` under the served tree; the module's md5
    becomes the served file's (it is not Paddle's real file)."""
    url = module.model_urls[arch][0]
    sub, base = ("hapi", HAPI) if url.startswith(HAPI) else ("imagenet", IMAGENET)
    blob = _paddle_pickle(state)
    (root / sub).mkdir(exist_ok=True)
    (root / sub / url[len(base):]).write_bytes(blob)
    monkeypatch.setitem(module.model_urls, arch, (url, hashlib.md5(blob).hexdigest()))


def test_pretrained_through_the_mirror(served_weights, monkeypatch):
    """End to end: Paddle's URL, mirrored to loopback, md5-checked, read without
    running code, every entry loaded; a different num_classes keeps a fresh head."""
    from fw.vision.models import squeezenet

    ref = {k: draw(k, v.shape) for k, v in models.squeezenet1_1().state_dict().items()}
    _serve(served_weights, monkeypatch, squeezenet, "squeezenet1_1", ref)
    model = models.squeezenet1_1(pretrained=True)
    for k, v in model.state_dict().items():
        np.testing.assert_array_equal(v.numpy(), ref[k])
    with pytest.warns(UserWarning, match=r"classifier head not loaded.*_conv9\.weight"):
        model = models.squeezenet1_1(pretrained=True, num_classes=10)
    assert model._conv9.weight.shape == [10, 512, 1, 1]
    np.testing.assert_array_equal(model._conv.weight.numpy(), ref["_conv.weight"])


def test_googlenet_pretrained_without_heads(served_weights, monkeypatch):
    """GoogLeNet's three heads (and the aux heads' convolutions) are its classifier:
    num_classes=0 loads the trunk and skips them with a warning, not an error."""
    googlenet = importlib.import_module("fw.vision.models.googlenet")  # not the function
    ref = {k: draw(k, v.shape) for k, v in models.googlenet().state_dict().items()}
    _serve(served_weights, monkeypatch, googlenet, "googlenet", ref)
    with pytest.warns(UserWarning, match=r"classifier head not loaded.*_conv_o1"):
        model = models.googlenet(pretrained=True, num_classes=0)
    np.testing.assert_array_equal(model._ince5b._conv1._conv.weight.numpy(),
                                  ref["_ince5b._conv1._conv.weight"])


def test_zoo_entries():
    from fw.vision.models._zoo import ZOO

    for name, (url, md5) in PUBLISHED.items():
        entry = ZOO[name]
        assert entry["fn"] is getattr(models, name)
        assert entry["weights"] == {"url": url, "md5": md5, "sha256": None}
        assert entry["task"] == "image-classification" and entry["doc"]
    assert ZOO["densenet169"]["configs"]["layers"] == 169
    assert ZOO["shufflenet_v2_swish"]["configs"] == {"scale": 1.0, "act": "swish"}
    assert ZOO["squeezenet1_1"]["configs"] == {"version": "1.1"}


def test_zoo_from_dir(tmp_path):
    from fw.vision.models._zoo import ZOO

    entry = ZOO["shufflenet_v2_x0_25"]
    assert not entry["detect"](tmp_path)
    ref = {k: draw(k, v.shape) for k, v in models.shufflenet_v2_x0_25().state_dict().items()}
    (tmp_path / "shufflenet_v2_x0_25.pdparams").write_bytes(_paddle_pickle(ref))
    assert entry["detect"](tmp_path)
    model = entry["from_dir"](tmp_path)
    for k, v in model.state_dict().items():
        np.testing.assert_array_equal(v.numpy(), ref[k])


# each module's own examples; of the functions whose docstrings share one template
# (shufflenet_v2_*, densenet*) the cheapest instance runs
DOCTESTED = {"shufflenetv2": ["ShuffleNetV2", "shufflenet_v2_x0_25"],
             "squeezenet": ["SqueezeNet", "squeezenet1_0", "squeezenet1_1"],
             "densenet": ["DenseNet", "densenet121"],
             "googlenet": ["GoogLeNet", "googlenet"],
             "inceptionv3": ["InceptionV3", "inception_v3"]}


@pytest.mark.parametrize("mod", sorted(DOCTESTED))
def test_docstring_examples(mod, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # examples may write files: never into the checkout
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
