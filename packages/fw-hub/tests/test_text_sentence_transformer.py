"""sentence-transformers folders: modules.json plumbing, Dense / Normalize, the
vocab.txt tokenizer path, batching, errors, and the zoo entries."""

from __future__ import annotations

import json
import os
import sys

import numpy as np
import pytest
from safetensors.numpy import save_file

import fw
from fw.hub.text import Dense, Normalize, Pooling, SentenceTransformer, from_pretrained
from fw.hub.text._zoo import ZOO

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _text_weights import state_dict_for  # noqa: E402

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures")
VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "cat", "sat", "on", "mat", "a",
         "dog", "ran", ".", "##s", "big"]


def _folder(root, pooling=("cls",), dense=True, normalize=True):
    """A sentence-transformers folder around the tiny_bert fixture's encoder, with a
    vocab.txt tokenizer (no tokenizer.json) and a Dense projection."""
    z = np.load(os.path.join(FIXTURES, "tiny_bert.npz"))
    cfg = json.loads(str(z["config"]))
    weights = state_dict_for(zip([str(k) for k in z["keys"]], json.loads(str(z["shapes"]))))
    save_file(weights, str(root / "model.safetensors"))
    (root / "config.json").write_text(json.dumps(cfg))
    (root / "vocab.txt").write_text("\n".join(VOCAB) + "\n")
    (root / "tokenizer_config.json").write_text(json.dumps({"do_lower_case": True}))
    (root / "sentence_bert_config.json").write_text(json.dumps({"max_seq_length": 8}))
    mods = [{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
            {"idx": 1, "name": "1", "path": "1_Pooling",
             "type": "sentence_transformers.models.Pooling"}]
    (root / "1_Pooling").mkdir()
    (root / "1_Pooling" / "config.json").write_text(json.dumps(
        {"embedding_dimension": 32, "pooling_mode": list(pooling)}))
    extra = {}
    if dense:
        (root / "2_Dense").mkdir()
        (root / "2_Dense" / "config.json").write_text(json.dumps(
            {"in_features": 32 * len(pooling), "out_features": 6, "bias": True,
             "activation_function": "torch.nn.modules.activation.Tanh"}))
        rng = np.random.default_rng(1)
        extra = {"linear.weight": rng.standard_normal((6, 32 * len(pooling))).astype("f4"),
                 "linear.bias": rng.standard_normal(6).astype("f4")}
        save_file(extra, str(root / "2_Dense" / "model.safetensors"))
        mods.append({"idx": 2, "name": "2", "path": "2_Dense",
                     "type": "sentence_transformers.models.Dense"})
    if normalize:
        mods.append({"idx": 3, "name": "3", "path": "3_Normalize",
                     "type": "sentence_transformers.models.Normalize"})
    (root / "modules.json").write_text(json.dumps(mods))
    return extra


def test_folder_with_dense_and_vocab_txt_matches_the_composition(tmp_path):
    dense = _folder(tmp_path)
    model = SentenceTransformer.from_dir(tmp_path)
    assert [type(s).__name__ for s in model.stages] == ["Transformer", "Pooling", "Dense",
                                                       "Normalize"]
    assert model.get_sentence_embedding_dimension() == 6
    sentences = ["The cat sat", "a big dog ran on the mat.", "", "cats", "zebra"]
    ids = [[2, 5, 6, 7, 3], [2, 10, 15, 11, 12, 8, 5, 3], [2, 3], [2, 6, 14, 3], [2, 1, 3]]
    # the second sentence has 9 word pieces + 2 specials: truncated to max_seq_length 8
    feats = model.tokenize(sentences)
    for row, want in zip(feats["input_ids"].numpy().tolist(), ids):
        assert row[:len(want)] == want and set(row[len(want):]) <= {0}
    encoder = from_pretrained(tmp_path)
    expected = []
    for row in ids:  # one at a time: no padding involved
        seq, _ = encoder([row])
        v = np.tanh(seq.numpy()[0, 0] @ dense["linear.weight"].T + dense["linear.bias"])
        expected.append(v / np.linalg.norm(v))
    got = model.encode(sentences, batch_size=2)
    np.testing.assert_allclose(got.numpy(), np.stack(expected), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(model.encode(sentences, batch_size=32).numpy(), got.numpy(),
                               rtol=1e-5, atol=1e-6)


def test_length_groups_do_not_change_results(tmp_path):
    _folder(tmp_path, pooling=("mean", "max"), dense=False, normalize=False)
    model = SentenceTransformer.from_dir(tmp_path)
    sentences = ["the cat sat on the mat . the dog ran", "a", "cat", "the big dog", ""]
    together = model.encode(sentences, convert_to_numpy=True)
    alone = np.stack([model.encode(s, convert_to_numpy=True) for s in sentences])
    assert together.shape == (5, 64)
    np.testing.assert_allclose(together, alone, rtol=1e-5, atol=1e-6)


def test_pooling_against_numpy_with_left_padding():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 5, 4)).astype(np.float32)
    m = np.array([[1, 1, 1, 0, 0], [0, 0, 1, 1, 1], [1, 1, 1, 1, 1]], np.int64)
    out = Pooling(4, ["cls", "mean", "max", "mean_sqrt_len_tokens"])(
        {"token_embeddings": fw.to_tensor(x), "attention_mask": fw.to_tensor(m)})
    keep = m[..., None].astype(bool)
    first = m.argmax(1)
    exp = np.concatenate([x[np.arange(3), first],
                          (x * keep).sum(1) / keep.sum(1),
                          np.where(keep, x, -np.inf).max(1),
                          (x * keep).sum(1) / np.sqrt(keep.sum(1))], axis=1)
    np.testing.assert_allclose(out["sentence_embedding"].numpy(), exp, rtol=1e-6, atol=1e-6)
    legacy = Pooling.from_config({"word_embedding_dimension": 4, "pooling_mode_cls_token": True,
                                  "pooling_mode_mean_tokens": True})
    assert legacy.pooling_mode == ["cls", "mean"]
    with pytest.raises(NotImplementedError, match="weightedmean"):
        Pooling(4, "weightedmean")


def test_dense_and_normalize_against_numpy():
    d = Dense(3, 2, activation_function="torch.nn.modules.activation.ReLU")
    w = d.linear.weight.numpy()
    x = np.array([[1.0, -2.0, 0.5]], np.float32)
    got = d({"sentence_embedding": fw.to_tensor(x)})["sentence_embedding"].numpy()
    np.testing.assert_allclose(got, np.maximum(x @ w + d.linear.bias.numpy(), 0), rtol=1e-6)
    n = Normalize()({"sentence_embedding": fw.to_tensor(x)})["sentence_embedding"].numpy()
    np.testing.assert_allclose(n, x / np.linalg.norm(x), rtol=1e-6)
    with pytest.raises(NotImplementedError, match="activation_function 'os.system'"):
        Dense(3, 2, activation_function="os.system")


def test_detect_and_folder_errors(tmp_path):
    assert not SentenceTransformer.detect(tmp_path)
    (tmp_path / "modules.json").write_text("{not json")
    assert not SentenceTransformer.detect(tmp_path)
    ok = tmp_path / "ok"
    ok.mkdir()
    _folder(ok)
    assert SentenceTransformer.detect(ok)
    mods = json.loads((ok / "modules.json").read_text())
    mods[1]["path"] = "../../etc"
    (ok / "modules.json").write_text(json.dumps(mods))
    with pytest.raises(ValueError, match="leaves the model folder"):
        SentenceTransformer.from_dir(ok)
    mods[1] = {"idx": 1, "name": "1", "path": "x", "type": "my_package.CustomModule"}
    (ok / "modules.json").write_text(json.dumps(mods))
    with pytest.raises(NotImplementedError, match="'my_package.CustomModule'"):
        SentenceTransformer.from_dir(ok)


def test_encode_argument_errors(tmp_path):
    _folder(tmp_path)
    model = SentenceTransformer.from_dir(tmp_path)
    with pytest.raises(TypeError, match="encode: sentences must be a str or a list of str, "
                                        "got list"):
        model.encode([b"bytes"])
    with pytest.raises(ValueError, match="encode: batch_size must be a positive int, got 0"):
        model.encode(["a"], batch_size=0)


def test_zoo_entries(tmp_path):
    for name in ("bert_base_uncased", "minilm_l6_h384", "ernie_3_0_base_zh",
                 "all_minilm_l6_v2", "sentence_transformer"):
        e = ZOO[name]
        assert callable(e["fn"]) and isinstance(e["doc"], str) and e["doc"]
        assert isinstance(e["configs"], dict) and isinstance(e["task"], str)
        assert e["weights"] is None
    assert ZOO["ernie_3_0_base_zh"]["configs"]["vocab_size"] == 40000
    m = ZOO["ernie_3_0_base_zh"]["fn"](num_hidden_layers=1, hidden_size=48,
                                        num_attention_heads=4, intermediate_size=64)
    assert type(m).__name__ == "ErnieModel" and m.config.use_task_id
    assert "embeddings.task_type_embeddings.weight" in m.state_dict()
    with pytest.raises(ValueError, match="no pretrained weight URL"):
        ZOO["bert_base_uncased"]["fn"](pretrained=True)
    _folder(tmp_path)
    st = ZOO["sentence_transformer"]
    assert st["detect"](tmp_path)
    model = st["from_dir"](str(tmp_path))
    assert isinstance(model, SentenceTransformer)
    assert model.encode(["the cat"]).shape == [1, 6]


def test_text_encoder_entry_loads_plain_hf_folders(tmp_path):
    _folder(tmp_path)
    te = ZOO["text_encoder"]
    assert not te["detect"](tmp_path)  # a sentence-transformers folder: not this entry's
    (tmp_path / "modules.json").unlink()
    assert te["detect"](tmp_path) and not ZOO["sentence_transformer"]["detect"](tmp_path)
    model = te["from_dir"](str(tmp_path))
    assert type(model).__name__ == "BertModel" and not model.training
    seq, pooled = model([[2, 5, 6, 3]])
    assert seq.shape == [1, 4, 32] and pooled.shape == [1, 32]
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "gpt2"}))
    assert not te["detect"](tmp_path)


def test_fw_hub_load_finds_the_text_entries(tmp_path, monkeypatch):
    import fw.hub

    st = tmp_path / "st"
    st.mkdir()
    _folder(st)
    m = fw.hub.load(str(st), "sentence_transformer", source="local")
    assert isinstance(m, SentenceTransformer)
    auto = fw.hub.load(str(st), source="local")  # found by detect: one entry matches
    np.testing.assert_array_equal(auto.encode(["the cat"]).numpy(), m.encode(["the cat"]).numpy())
    (st / "modules.json").unlink()
    enc = fw.hub.load(str(st), source="local")
    assert type(enc).__name__ == "BertModel"
    names = fw.hub.list("builtin")
    for n in ("bert_base_uncased", "ernie_3_0_base_zh", "all_minilm_l6_v2",
              "sentence_transformer", "text_encoder"):
        assert n in names
    assert "ERNIE" in fw.hub.help("builtin", "ernie_3_0_base_zh")


def test_fw_hub_load_hf_repo_from_an_existing_hf_cache(tmp_path, monkeypatch):
    # A sentence-transformers repository already in the Hugging Face cache (its
    # layout: refs/main -> commit, snapshots/<commit>/files): loaded offline.
    import shutil

    import fw.hub

    src = tmp_path / "src"
    src.mkdir()
    _folder(src)
    commit = "0123456789abcdef0123456789abcdef01234567"
    repo = tmp_path / "hf" / "models--org--tiny-st"
    shutil.copytree(src, repo / "snapshots" / commit)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(commit)
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hf"))
    monkeypatch.setenv("FW_HUB_CACHE", str(tmp_path / "fw"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    model = fw.hub.load("org/tiny-st", source="hf")
    assert isinstance(model, SentenceTransformer)
    want = SentenceTransformer.from_dir(src).encode(["the cat sat"]).numpy()
    np.testing.assert_array_equal(model.encode(["the cat sat"]).numpy(), want)
