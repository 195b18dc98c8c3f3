"""``pretrained=True`` of fw.vision.models (part A): Paddle's published URL goes
through fw.utils.download (here rewritten by FW_HUB_MIRRORS to a loopback server),
the ``.pdparams`` pickle is read by fw.load's restricted unpickler, and the weights
must fit the architecture (only the classifier head may differ, when the user asked
for another ``num_classes``)."""

from __future__ import annotations

import hashlib
import pickle
import warnings

import numpy as np
import pytest

import fw
from fw.vision import models
from fw.vision.models import mobilenetv3

HAPI = "https://paddle-hapi.bj.bcebos.com/models/"


def _paddle_pickle(state: dict) -> bytes:
    """A state dict in paddle.save's .pdparams layout: a protocol-4 pickle of
    name -> ndarray plus Paddle's "StructuredToParameterName@@" name table."""
    d = {k: np.asarray(v, np.float32) for k, v in state.items()}
    d["StructuredToParameterName@@"] = {k: f"param_{i}" for i, k in enumerate(state)}
    return pickle.dumps(d, protocol=4)


def _reference_state(model) -> dict:
    rng = np.random.default_rng(7)
    return {k: rng.standard_normal(v.shape).astype(np.float32)
            for k, v in model.state_dict().items()}


# --- the loading rules, independent of the download layer ---------------------

@pytest.fixture
def fake_hub(monkeypatch):
    """Route get_weights_path_from_url / fw.load to an in-memory state dict."""
    import fw.utils.download as dl

    served = {}
    calls = []

    def get_path(url, md5sum=None):
        calls.append((url, md5sum))
        return "/nonexistent/" + url.rsplit("/", 1)[-1]

    monkeypatch.setattr(dl, "get_weights_path_from_url", get_path, raising=False)
    monkeypatch.setattr(fw, "load", lambda path, **kw: served["state"])
    return served, calls


def test_pretrained_loads_every_entry(fake_hub):
    served, calls = fake_hub
    ref = _reference_state(models.mobilenet_v3_small())
    served["state"] = {**ref, "StructuredToParameterName@@": {}}
    model = models.mobilenet_v3_small(pretrained=True)
    assert calls == [(HAPI + "mobilenet_v3_small_x1.0.pdparams",
                      "34fe0e7c1f8b00b2b056ad6788d0590c")]
    for k, v in model.state_dict().items():
        np.testing.assert_array_equal(v.numpy(), ref[k])


def test_pretrained_other_num_classes_keeps_fresh_head(fake_hub):
    served, _ = fake_hub
    ref = _reference_state(models.mobilenet_v3_small())
    served["state"] = ref
    with pytest.warns(UserWarning, match=r"classifier head not loaded.*classifier\.3\.weight"):
        model = models.mobilenet_v3_small(pretrained=True, num_classes=10)
    sd = model.state_dict()
    assert sd["classifier.3.weight"].shape == [1024, 10]
    np.testing.assert_array_equal(sd["classifier.0.weight"].numpy(), ref["classifier.0.weight"])
    # features only: the whole classifier is absent, nothing else may be
    with pytest.warns(UserWarning, match="classifier head not loaded"):
        models.mobilenet_v3_small(pretrained=True, num_classes=0)


@pytest.mark.parametrize("damage,what", [
    (lambda s: s.pop("blocks.0.mid_se.fc1.weight"), "missing"),
    (lambda s: s.update({"blocks.0.bottleneck_conv.1._mean": np.zeros([3], np.float32)}),
     "mismatch"),
    (lambda s: s.update({"extra.weight": np.zeros([3], np.float32)}), "unexpected"),
])
def test_pretrained_refuses_weights_that_do_not_fit(fake_hub, damage, what):
    served, _ = fake_hub
    ref = _reference_state(models.mobilenet_v3_small())
    damage(ref)
    served["state"] = ref
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match=r"mobilenet_v3_small\(pretrained=True\): the "
                                             r"weights in .* do not fit") as e:
            models.mobilenet_v3_small(pretrained=True)
    assert what in str(e.value)


def test_pretrained_refuses_a_non_dict(fake_hub):
    served, _ = fake_hub
    served["state"] = [1, 2]
    with pytest.raises(ValueError, match="holds a list, not a name -> array state dict"):
        models.resnet18(pretrained=True)


# --- end to end: Paddle's URL, mirrored to a loopback server ----------------------

@pytest.fixture
def mirrored(tmp_path, monkeypatch):
    """Paddle's model host rewritten (FW_HUB_MIRRORS) to a directory served on
    127.0.0.1 by fw.hub.testing.serve_directory (stopped when the test ends), with
    a fresh hub cache."""
    from fw.hub.testing import serve_directory

    root = tmp_path / "served"
    root.mkdir()
    monkeypatch.setenv("FW_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("FW_HUB_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("FW_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    with serve_directory(str(root)) as base:
        monkeypatch.setenv("FW_HUB_MIRRORS", f"{HAPI}={base}/")
        yield root, base


def test_pretrained_through_the_mirror(mirrored, monkeypatch):
    mirrored, server = mirrored
    ref = _reference_state(models.mobilenet_v3_small())
    blob = _paddle_pickle(ref)
    (mirrored / "mobilenet_v3_small_x1.0.pdparams").write_bytes(blob)
    # the served file is not Paddle's real one: give its md5 to the architecture
    url = HAPI + "mobilenet_v3_small_x1.0.pdparams"
    monkeypatch.setitem(mobilenetv3.model_urls, "mobilenet_v3_small_x1.0",
                        (url, hashlib.md5(blob).hexdigest()))
    model = models.mobilenet_v3_small(pretrained=True)
    for k, v in model.state_dict().items():
        np.testing.assert_array_equal(v.numpy(), ref[k])
    assert [r[1] for r in server.requests] == ["/mobilenet_v3_small_x1.0.pdparams"]
    # cached now: a second build needs no server
    (mirrored / "mobilenet_v3_small_x1.0.pdparams").unlink()
    monkeypatch.setenv("FW_HUB_OFFLINE", "1")
    again = models.mobilenet_v3_small(pretrained=True)
    np.testing.assert_array_equal(again.conv[0].weight.numpy(), ref["conv.0.weight"])
    # fw.hub's built-in zoo builds the same model through the entry point
    import fw.hub

    zoo = fw.hub.load("builtin", "mobilenet_v3_small", source="builtin", pretrained=True)
    np.testing.assert_array_equal(zoo.classifier[3].bias.numpy(), ref["classifier.3.bias"])
    assert len(server.requests) == 1


def test_pretrained_wrong_md5_fails_closed(mirrored, tmp_path):
    # the served bytes are not Paddle's published file: its md5 check must refuse
    # them, and nothing may land in the cache
    root, _ = mirrored
    ref = _reference_state(models.mobilenet_v3_small())
    (root / "mobilenet_v3_small_x1.0.pdparams").write_bytes(_paddle_pickle(ref))
    with pytest.raises(Exception, match="(?i)md5|checksum|hash") as e:
        models.mobilenet_v3_small(pretrained=True)
    assert not isinstance(e.value, AssertionError)
    cached = [p for p in (tmp_path / "cache").rglob("*") if p.is_file()
              and p.name.endswith(".pdparams")]
    assert cached == []


def test_pretrained_offline_miss_names_the_url(mirrored, monkeypatch):
    monkeypatch.setenv("FW_HUB_OFFLINE", "1")
    with pytest.raises(Exception, match="resnet18.pdparams"):
        models.resnet18(pretrained=True)


# --- a directory where the user keeps the weights: the zoo's from_dir / detect ------

def test_zoo_from_dir_loads_the_kept_file(tmp_path):
    from fw.vision.models._zoo import ZOO

    entry = ZOO["mobilenet_v3_small"]
    assert not entry["detect"](tmp_path)
    ref = _reference_state(models.mobilenet_v3_small())
    # Paddle's published file name is recognised as well as <name>.pdparams
    (tmp_path / "mobilenet_v3_small_x1.0.pdparams").write_bytes(_paddle_pickle(ref))
    assert entry["detect"](tmp_path)
    model = entry["from_dir"](tmp_path)
    for k, v in model.state_dict().items():
        np.testing.assert_array_equal(v.numpy(), ref[k])
    with pytest.warns(UserWarning, match="classifier head not loaded"):
        small = entry["from_dir"](tmp_path, num_classes=3)
    assert small.classifier[3].weight.shape == [1024, 3]


def test_zoo_from_dir_without_a_file_names_what_it_looked_for(tmp_path):
    from fw.vision.models._zoo import ZOO

    with pytest.raises(FileNotFoundError, match=r"resnet18: no weights file in .*"
                                                r"resnet18\.pdparams"):
        ZOO["resnet18"]["from_dir"](tmp_path)
