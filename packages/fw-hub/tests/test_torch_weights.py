"""PyTorch checkpoints without PyTorch: real torch.save files (committed fixtures) read by
fw.hub.torch_pickle, layout conversion (fw.hub.convert.from_torch) checked against the
PyTorch model's own outputs' definition, and load_state_dict refusing ambiguous
square Linear weights."""

import os

import numpy as np
import pytest

import fw
from fw.hub import load_state_dict, read_state_dict, torch_pickle
from fw.hub.api import TorchStateDict
from fw.hub.convert import from_torch, torch_to_fw
from fw.hub.errors import LayoutError
from fw.hub.testing import write_torch_checkpoint

FIX = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures")


@pytest.fixture(scope="module")
def expected():
    with np.load(os.path.join(FIX, "torch_expected.npz"), allow_pickle=False) as z:
        return dict(z)


def _mlp():
    return fw.nn.Sequential(fw.nn.Linear(4, 4), fw.nn.BatchNorm1D(4), fw.nn.Linear(4, 3))


def test_real_torch_state_dict(expected):
    sd = torch_pickle.load(os.path.join(FIX, "torch_mlp.bin"))
    want = {k[4:]: v for k, v in expected.items() if k.startswith("mlp/")}
    assert list(sd) == list(want)
    for k, v in want.items():
        assert sd[k].dtype == v.dtype and sd[k].shape == v.shape
        np.testing.assert_array_equal(sd[k], v)


def test_real_torch_views_and_dtypes(expected):
    obj = torch_pickle.load(os.path.join(FIX, "torch_views.pt"))
    assert obj["meta"] == {"step": 7, "names": ["x", "y"]}
    for k in ("base", "slice", "t", "half", "i8", "mask", "scalar"):
        np.testing.assert_array_equal(obj[k], expected[f"views/{k}"])
        assert obj[k].dtype == expected[f"views/{k}"].dtype
    assert str(obj["bf16"].dtype) == "bfloat16"
    np.testing.assert_array_equal(obj["bf16"].view(np.uint16), expected["views/bf16"])
    # the views were copied out of the shared storage, not aliased
    obj["slice"][0, 0] = -1
    assert obj["base"][1, 0] == 6


def test_from_torch_matches_torch_forward(expected):
    # PyTorch's own eval-mode output of this MLP (written by tools/gen_fixtures.py)
    sd = torch_pickle.load(os.path.join(FIX, "torch_mlp.bin"))
    x, want = expected["mlp_forward/x"], expected["mlp_forward/y"]
    model = _mlp()
    model.eval()
    report = from_torch(sd, model)
    assert report.ok
    assert sorted(report.transposed) == ["0.weight", "2.weight"]
    assert report.ambiguous == ["0.weight"]  # 4x4: shape alone cannot tell
    assert report.dropped == ["1.num_batches_tracked"]
    assert report.renamed == {"1.running_mean": "1._mean", "1.running_var": "1._variance"}
    out = model(fw.to_tensor(x)).numpy()
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5)


def test_load_state_dict_refuses_ambiguous_torch_weights(tmp_path):
    path = os.path.join(FIX, "torch_mlp.bin")
    model = _mlp()
    before = model.state_dict()["0.weight"].numpy().copy()
    with pytest.raises(LayoutError, match=r"square Linear weights \['0.weight'\]"):
        load_state_dict(model, path)
    np.testing.assert_array_equal(model.state_dict()["0.weight"].numpy(), before)  # untouched
    report = load_state_dict(model, path, convert="torch")
    assert report.ok
    np.testing.assert_array_equal(model.state_dict()["0.weight"].numpy(),
                                  torch_pickle.load(path)["0.weight"].T)


def test_non_square_torch_weights_convert_automatically(tmp_path):
    p = tmp_path / "m.bin"
    w = np.arange(6, dtype=np.float32).reshape(2, 3)  # torch Linear(3, 2): [out, in]
    write_torch_checkpoint(p, {"weight": w, "bias": np.ones(2, np.float32)})
    model = fw.nn.Linear(3, 2)
    report = load_state_dict(model, str(p))
    assert report.transposed == ["weight"] and report.ambiguous == []
    np.testing.assert_array_equal(model.weight.numpy(), w.T)
    # as is, the file does not fit: a clear error, not a silent partial load
    with pytest.raises(LayoutError, match=r"weight: model \[3, 2\] vs file \[2, 3\]"):
        load_state_dict(fw.nn.Linear(3, 2), str(p), convert=False)


def test_safetensors_from_pytorch_is_marked(tmp_path):
    from safetensors.numpy import save_file

    p = tmp_path / "model.safetensors"
    save_file({"weight": np.eye(3, dtype=np.float32), "bias": np.zeros(3, np.float32)},
              str(p), metadata={"format": "pt"})
    sd = read_state_dict(str(p))
    assert isinstance(sd, TorchStateDict)
    with pytest.raises(LayoutError):
        load_state_dict(fw.nn.Linear(3, 3), str(p))
    q = tmp_path / "plain.safetensors"
    save_file({"weight": np.eye(3, dtype=np.float32), "bias": np.zeros(3, np.float32)}, str(q))
    assert load_state_dict(fw.nn.Linear(3, 3), str(q)).ok  # unknown source: as is


def test_paddle_weights_load_as_is():
    model = _mlp()
    report = load_state_dict(model, os.path.join(FIX, "paddle_mlp.pdparams"))
    assert report.ok


def test_strict_conversion_reports_missing(tmp_path):
    sd = torch_pickle.load(os.path.join(FIX, "torch_mlp.bin"))
    del sd["2.bias"]
    with pytest.raises(LayoutError, match=r"missing \['2.bias'\]"):
        from_torch(sd, _mlp())
    with pytest.warns(UserWarning, match="missing"):
        report = from_torch(sd, _mlp(), strict=False)
    assert report.load.missing_keys == ["2.bias"] and not report.ok


def test_torch_to_fw_rejects_bad_input():
    with pytest.raises(TypeError, match="dict"):
        torch_to_fw([1, 2], _mlp())
    with pytest.raises(LayoutError, match="2-D"):
        torch_to_fw({"0.weight": np.ones(4, np.float32)}, _mlp())


def test_legacy_and_garbage_files(tmp_path):
    legacy = tmp_path / "old.pt"
    legacy.write_bytes(b"\x80\x02\x8a\x0al\xfc\x9cF\xf9 j\xa8P\x19.")
    with pytest.raises(ValueError, match="legacy"):
        torch_pickle.load(str(legacy))
    junk = tmp_path / "junk.bin"
    junk.write_bytes(b"hello world")
    with pytest.raises(ValueError, match="not a PyTorch zip"):
        torch_pickle.load(str(junk))
