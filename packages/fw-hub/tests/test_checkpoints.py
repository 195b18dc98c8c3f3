"""Checkpoints written by the real frameworks (tools/gen_fixtures.py; CI needs neither):
Paddle .pdparams/.pdopt through fw.load's restricted unpickler."""

import os

import numpy as np
import pytest

import fw

FIX = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures")


@pytest.fixture(scope="module")
def paddle_expected():
    with np.load(os.path.join(FIX, "paddle_expected.npz"), allow_pickle=False) as z:
        return dict(z)


@pytest.mark.parametrize("name", ["paddle_mlp.pdparams", "paddle_mlp_p2.pdparams"])
def test_real_paddle_pdparams(paddle_expected, name):
    sd = fw.load(os.path.join(FIX, name))
    want = {k[len("pdparams/"):]: v for k, v in paddle_expected.items()
            if k.startswith("pdparams/")}
    assert list(sd) == list(want)
    for k, v in want.items():
        assert isinstance(sd[k], fw.Tensor)
        np.testing.assert_array_equal(sd[k].numpy(), v)
        assert sd[k].numpy().dtype == v.dtype
    # the state dict fits the same architecture built with fw
    model = fw.nn.Sequential(fw.nn.Linear(4, 4), fw.nn.BatchNorm1D(4), fw.nn.Linear(4, 3))
    missing, unexpected = model.set_state_dict(sd)
    assert not missing and not unexpected
    np.testing.assert_array_equal(model.state_dict()["1._mean"].numpy(), want["1._mean"])


def test_real_paddle_pdopt(paddle_expected):
    opt = fw.load(os.path.join(FIX, "paddle_mlp.pdopt"), return_numpy=True)
    want = {k[len("pdopt/"):]: v for k, v in paddle_expected.items() if k.startswith("pdopt/")}
    assert want and set(want) <= set(opt)
    for k, v in want.items():
        np.testing.assert_array_equal(opt[k], v)
    assert "StructuredToParameterName@@" not in opt


def test_real_paddle_nested_object(paddle_expected):
    obj = fw.load(os.path.join(FIX, "paddle_nested.pdparams"))
    assert obj["epoch"] == 3 and obj["tags"] == ["a", "b"]
    np.testing.assert_array_equal(obj["weights"].numpy(), paddle_expected["nested/weights"])


def test_pretrained_flow_of_vision_models(paddle_expected, tmp_path, monkeypatch):
    # what a Paddle model file does for pretrained=True, on a real Paddle file served
    # from loopback under Paddle's URL: get_weights_path_from_url(url, md5) + fw.load
    import hashlib
    import shutil

    from fw.hub.testing import serve_directory
    from fw.utils.download import get_weights_path_from_url

    src = tmp_path / "srv"
    src.mkdir()
    shutil.copy(os.path.join(FIX, "paddle_mlp.pdparams"), src / "mlp.pdparams")
    md5 = hashlib.md5((src / "mlp.pdparams").read_bytes()).hexdigest()
    monkeypatch.setenv("FW_HUB_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("FW_HUB_OFFLINE", raising=False)
    with serve_directory(src) as base:
        monkeypatch.setenv("FW_HUB_MIRRORS", f"https://paddle-hapi.bj.bcebos.com/models/={base}/")
        path = get_weights_path_from_url("https://paddle-hapi.bj.bcebos.com/models/mlp.pdparams",
                                         md5)
    model = fw.nn.Sequential(fw.nn.Linear(4, 4), fw.nn.BatchNorm1D(4), fw.nn.Linear(4, 3))
    assert model.set_state_dict(fw.load(path)).ok
    np.testing.assert_array_equal(model.state_dict()["2.weight"].numpy(),
                                  paddle_expected["pdparams/2.weight"])
