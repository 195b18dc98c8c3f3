"""The Hugging Face checkpoint reader and name/layout mapping (fw.hub.text.weights)."""

from __future__ import annotations

import json
import struct

import numpy as np
import pytest
from safetensors.numpy import save_file

import fw.nn as nn
from fw.hub.errors import LayoutError
from fw.hub.text import (
    BertConfig,
    BertModel,
    hf_to_fw_state_dict,
    load_hf_weights,
)
from fw.nn.serialization import CheckpointError

CFG = BertConfig(vocab_size=30, hidden_size=8, num_hidden_layers=1, num_attention_heads=2,
                 intermediate_size=12, max_position_embeddings=10)


def _hf_state(model, prefix=""):
    """A PyTorch-layout state dict for `model` (Linear weights [out, in])."""
    rng = np.random.default_rng(0)
    lin = {f"{n}.weight" for n, s in model.named_sublayers() if type(s).__name__ == "Linear"}
    out = {}
    for k, t in model.state_dict().items():
        shape = tuple(t.shape)[::-1] if k in lin else tuple(t.shape)
        out[prefix + k] = rng.standard_normal(shape).astype(np.float32)
    return out


def _raw_safetensors(path, header, payload):
    h = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(h)) + h + payload)


def test_bfloat16_checkpoint_is_widened_exactly_and_reported(tmp_path):
    # bf16 1.5 = 0x3FC0, -2.0 = 0xC000: the top halves of the float32 patterns
    lin = nn.Linear(1, 2)
    _raw_safetensors(tmp_path / "model.safetensors",
                     {"weight": {"dtype": "BF16", "shape": [2, 1], "data_offsets": [0, 4]},
                      "bias": {"dtype": "BF16", "shape": [2], "data_offsets": [4, 8]}},
                     struct.pack("<HHHH", 0x3FC0, 0xC000, 0x3F80, 0))
    sd, rep = hf_to_fw_state_dict(load_hf_weights(tmp_path), lin)
    assert sorted(rep.cast) == ["bias", "weight"] and rep.transposed == ["weight"]
    assert sd["weight"].dtype == np.float32
    np.testing.assert_array_equal(sd["weight"], [[1.5, -2.0]])
    np.testing.assert_array_equal(sd["bias"], [1.0, 0.0])


@pytest.mark.parametrize("case", ["short", "header_len", "range"])
def test_corrupt_checkpoint_is_a_clear_error(tmp_path, case):
    p = tmp_path / "model.safetensors"
    if case == "short":
        p.write_bytes(b"\x01\x02")
    elif case == "header_len":
        p.write_bytes(struct.pack("<Q", 10**6) + b"{}")
    else:
        _raw_safetensors(p, {"w": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]}},
                         b"\x00" * 8)  # the data stops early
    with pytest.raises(CheckpointError, match=str(p)):
        load_hf_weights(tmp_path)


def test_task_head_checkpoint_prefix_is_stripped_and_heads_reported():
    m = BertModel(CFG)
    hf = _hf_state(m, prefix="bert.")
    hf["cls.predictions.bias"] = np.zeros(30, np.float32)
    hf["bert.embeddings.position_ids"] = np.arange(10)[None]
    sd, rep = hf_to_fw_state_dict(hf, m)
    assert rep.prefix == "bert."
    assert rep.unused == ["cls.predictions.bias"]
    assert rep.ignored == ["bert.embeddings.position_ids"]
    assert sorted(sd) == sorted(m.state_dict())
    q = "encoder.layer.0.attention.self.query.weight"
    np.testing.assert_array_equal(sd[q], hf["bert." + q].T)


def test_missing_unexpected_and_misoriented_entries_fail_loudly():
    m = BertModel(CFG)
    hf = _hf_state(m)
    del hf["encoder.layer.0.output.LayerNorm.bias"]
    with pytest.raises(ValueError, match=r"missing from the checkpoint: "
                                         r"\['encoder.layer.0.output.LayerNorm.bias'\]"):
        hf_to_fw_state_dict(hf, m)
    sd, _ = hf_to_fw_state_dict(hf, m, strict=False)
    assert "encoder.layer.0.output.LayerNorm.bias" not in sd
    hf = _hf_state(m)
    hf["encoder.layer.0.attention.self.distance_embedding.weight"] = np.zeros((3, 4), "f4")
    with pytest.raises(ValueError, match="no place for.*distance_embedding"):
        hf_to_fw_state_dict(hf, m)
    hf = _hf_state(m)
    k = "encoder.layer.0.intermediate.dense.weight"
    hf[k] = hf[k].T.copy()  # given in fw's [in, out] although the source is PyTorch
    with pytest.raises(LayoutError, match=r"intermediate.dense.weight: expected the PyTorch "
                                         r"Linear layout \[12, 8\] \(fw \[in, out\] = \[8, 12\]\)"
                                         r", got \[8, 12\]"):
        hf_to_fw_state_dict(hf, m)


def test_half_precision_checkpoint_is_cast_and_reported():
    m = BertModel(CFG, add_pooling_layer=False)
    hf = {k: v.astype(np.float16) for k, v in _hf_state(m).items()}
    sd, rep = hf_to_fw_state_dict(hf, m)
    assert sorted(rep.cast) == sorted(m.state_dict())
    assert all(v.dtype == np.float32 for v in sd.values())


def test_sharded_checkpoint_and_missing_weights(tmp_path):
    save_file({"a": np.ones(2, np.float32)}, str(tmp_path / "s1.safetensors"))
    save_file({"b": np.zeros(3, np.float32)}, str(tmp_path / "s2.safetensors"))
    (tmp_path / "model.safetensors.index.json").write_text(json.dumps(
        {"weight_map": {"a": "s1.safetensors", "b": "s2.safetensors"}}))
    got = load_hf_weights(tmp_path)
    assert sorted(got) == ["a", "b"] and got["b"].shape == (3,)
    (tmp_path / "model.safetensors.index.json").write_text(json.dumps(
        {"weight_map": {"a": "../outside.safetensors"}}))
    with pytest.raises(ValueError, match="outside the directory"):
        load_hf_weights(tmp_path)
    empty = tmp_path / "e"
    empty.mkdir()
    (empty / "tf_model.h5").write_bytes(b"x")
    with pytest.raises(FileNotFoundError, match=r"no model.safetensors, pytorch_model.bin.*"
                                                r"tf_model.h5"):
        load_hf_weights(empty)


def test_pytorch_bin_checkpoints_are_read_without_code(tmp_path):
    from fw.hub.testing import write_torch_checkpoint
    from fw.nn.safe_pickle import UnsafePickleError

    m = BertModel(CFG)
    hf = _hf_state(m)
    write_torch_checkpoint(str(tmp_path / "pytorch_model.bin"), hf)
    got = load_hf_weights(tmp_path)
    assert sorted(got) == sorted(hf)
    for k in hf:
        np.testing.assert_array_equal(got[k], hf[k])
    # a pickle naming anything but tensors / containers is refused, naming the global
    import pickle
    import zipfile

    class Boom:
        def __reduce__(self):
            return (print, ("pwned",))

    with zipfile.ZipFile(tmp_path / "pytorch_model.bin", "w") as z:
        z.writestr("archive/data.pkl", pickle.dumps({"w": Boom()}))
    with pytest.raises(UnsafePickleError, match="print"):
        load_hf_weights(tmp_path)
