"""BERT / ERNIE encoders against Hugging Face transformers' outputs.

Fixtures: tools/gen_text_fixtures.py ran tiny random-weight transformers models
(weights from _text_weights.py, in the HF layout) once; here the same weights go
through a real Hugging Face folder (config.json + model.safetensors) and
fw.hub.text.from_pretrained, so names, the Linear transposition and the numerics are
all checked against transformers.
"""

from __future__ import annotations

import json
import os
import sys

import numpy as np
import pytest
from safetensors.numpy import save_file

import fw
from fw.hub.text import (
    BertConfig,
    BertModel,
    ErnieConfig,
    ErnieModel,
    config_from_dict,
    from_pretrained,
    linear_weight_names,
    load_hf_weights,
)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _text_weights import state_dict_for  # noqa: E402

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures")
CASES = ["tiny_bert", "tiny_bert_relu", "tiny_bert_gelu_new", "tiny_ernie"]


def _fixture(name):
    z = np.load(os.path.join(FIXTURES, f"{name}.npz"))
    cfg = json.loads(str(z["config"]))
    keys = [str(k) for k in z["keys"]]
    shapes = json.loads(str(z["shapes"]))
    return z, cfg, keys, shapes


def _hf_folder(tmp_path, name):
    z, cfg, keys, shapes = _fixture(name)
    weights = state_dict_for(zip(keys, shapes))
    save_file(weights, str(tmp_path / "model.safetensors"))
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    return z, cfg, keys, weights


@pytest.mark.parametrize("name", CASES)
def test_outputs_match_transformers(tmp_path, name):
    z, cfg, keys, _ = _hf_folder(tmp_path, name)
    model = from_pretrained(tmp_path)
    assert type(model) is (ErnieModel if cfg["model_type"] == "ernie" else BertModel)
    # the fw names are the Hugging Face names: nothing renamed
    assert sorted(model.state_dict()) == sorted(keys)
    kw = {}
    if cfg.get("use_task_id"):
        kw["task_type_ids"] = z["task_type_ids"]
    seq, pooled = model(z["input_ids"], token_type_ids=z["token_type_ids"],
                        attention_mask=z["attention_mask"], **kw)
    assert seq.shape == list(z["last_hidden_state"].shape)
    assert seq.dtype == fw.float32
    np.testing.assert_allclose(seq.numpy(), z["last_hidden_state"], rtol=1e-4, atol=2e-5)
    np.testing.assert_allclose(pooled.numpy(), z["pooler_output"], rtol=1e-4, atol=2e-5)
    # defaults: token types, attention mask and task types omitted
    seq0, _ = model(fw.to_tensor(z["input_ids"]))
    np.testing.assert_allclose(seq0.numpy(), z["last_hidden_state_default"], rtol=1e-4,
                               atol=2e-5)


def test_every_linear_weight_is_transposed_and_nothing_else(tmp_path):
    z, cfg, keys, weights = _hf_folder(tmp_path, "tiny_bert")
    model = from_pretrained(tmp_path)
    per_layer = ["attention.self.query", "attention.self.key", "attention.self.value",
                 "attention.output.dense", "intermediate.dense", "output.dense"]
    expected = [f"encoder.layer.{i}.{n}.weight" for i in range(cfg["num_hidden_layers"])
                for n in per_layer] + ["pooler.dense.weight"]
    assert sorted(model.load_report.transposed) == sorted(expected)
    assert sorted(linear_weight_names(model)) == sorted(expected)
    sd = model.state_dict()
    for k in expected:  # fw holds the transpose of the checkpoint's [out, in]
        np.testing.assert_array_equal(sd[k].numpy(), weights[k].T)
    for k in set(keys) - set(expected):  # embeddings, LayerNorms, biases: as stored
        np.testing.assert_array_equal(sd[k].numpy(), weights[k])


def test_untransposed_square_weights_would_be_wrong(tmp_path):
    # The attention weights are square: loading them without the transposition
    # fits every shape check; the mapping is what makes the output right.
    z, cfg, keys, weights = _hf_folder(tmp_path, "tiny_bert")
    model = from_pretrained(tmp_path)
    square = [k for k in model.load_report.transposed if weights[k].shape[0] ==
              weights[k].shape[1]]
    assert len(square) == 4 * cfg["num_hidden_layers"] + 1
    assert sorted(model.load_report.ambiguous) == sorted(square)  # named in the report
    full = {k: t.numpy() for k, t in model.state_dict().items()}
    full.update({k: weights[k] for k in square})  # as stored: [out, in]
    model.set_state_dict(full)
    seq, _ = model(z["input_ids"], attention_mask=z["attention_mask"])
    assert np.abs(seq.numpy() - z["last_hidden_state"]).max() > 1e-2


def test_ernie_task_type_embeddings_change_the_output(tmp_path):
    z, cfg, keys, _ = _hf_folder(tmp_path, "tiny_ernie")
    assert "embeddings.task_type_embeddings.weight" in keys
    model = from_pretrained(tmp_path)
    a, _ = model(z["input_ids"], task_type_ids=z["task_type_ids"])
    b, _ = model(z["input_ids"])
    assert np.abs(a.numpy() - b.numpy()).max() > 1e-3
    with pytest.raises(ValueError, match=r"task_type_ids must lie in \[0, 3\)"):
        model(z["input_ids"], task_type_ids=np.full_like(z["input_ids"], 3))


def test_bert_refuses_task_type_ids_and_bad_inputs():
    cfg = BertConfig(vocab_size=20, hidden_size=8, num_hidden_layers=1, num_attention_heads=2,
                     intermediate_size=16, max_position_embeddings=6)
    m = BertModel(cfg)
    with pytest.raises(ValueError, match="use_task_id=False"):
        m([[1, 2]], task_type_ids=[[0, 0]])
    with pytest.raises(ValueError, match=r"BertModel.forward: input_ids must lie in \[0, 20\)"):
        m([[1, 25]])
    with pytest.raises(ValueError, match="exceeds max_position_embeddings=6"):
        m([[1] * 7])
    with pytest.raises(ValueError, match=r"attention_mask has shape \[1, 3\], input_ids has "
                                         r"\[1, 2\]"):
        m([[1, 2]], attention_mask=[[1, 1, 0]])
    with pytest.raises(ValueError, match="integer ids of shape"):
        m(np.ones((1, 2), np.float32))


def test_config_validation_and_round_trip():
    with pytest.raises(ValueError, match="divisible by num_attention_heads"):
        BertConfig(hidden_size=10, num_attention_heads=3)
    with pytest.raises(ValueError, match="hidden_act 'gelu_10'"):
        BertConfig(hidden_act="gelu_10")
    with pytest.raises(NotImplementedError, match="relative_key"):
        BertConfig.from_dict({"position_embedding_type": "relative_key"})
    with pytest.raises(NotImplementedError, match="is_decoder"):
        BertConfig.from_dict({"is_decoder": True})
    d = {"model_type": "ernie", "hidden_size": 64, "num_attention_heads": 4,
         "use_task_id": True, "architectures": ["ErnieModel"], "classifier_dropout": None}
    cfg = ErnieConfig.from_dict(d)
    assert cfg.use_task_id and cfg.extra["architectures"] == ["ErnieModel"]
    # early ERNIE 3.0 uploads: model_type "bert" with ERNIE's task-type embedding
    old = config_from_dict({"model_type": "bert", "use_task_id": True, "hidden_size": 64,
                            "num_attention_heads": 4, "init_class": "ErnieModel"})
    assert isinstance(old, ErnieConfig) and old.use_task_id
    with pytest.raises(NotImplementedError, match="model_type 'roberta'"):
        config_from_dict({"model_type": "roberta"})
    back = cfg.to_dict()
    assert back["model_type"] == "ernie" and back["hidden_size"] == 64
    assert back["architectures"] == ["ErnieModel"]


def test_dropout_only_in_training_and_gradients_flow(tmp_path):
    z, cfg, keys, _ = _hf_folder(tmp_path, "tiny_bert")
    model = from_pretrained(tmp_path)
    ids, mask = z["input_ids"], z["attention_mask"]
    e1, _ = model(ids, attention_mask=mask)
    e2, _ = model(ids, attention_mask=mask)
    np.testing.assert_array_equal(e1.numpy(), e2.numpy())  # eval: deterministic
    model.train()
    t1, _ = model(ids, attention_mask=mask)
    assert np.abs(t1.numpy() - e1.numpy()).max() > 1e-3  # dropout on
    seq, pooled = model(ids, attention_mask=mask)
    (seq.mean() + pooled.mean()).backward()
    g = model.encoder.layer[0].attention.self.query.weight.grad
    assert g is not None and np.abs(g.numpy()).max() > 0


def test_fresh_model_init_follows_initializer_range():
    cfg = BertConfig(vocab_size=500, hidden_size=64, num_hidden_layers=1,
                     num_attention_heads=4, intermediate_size=128, initializer_range=0.05)
    m = BertModel(cfg, add_pooling_layer=False)
    assert m.pooler is None
    w = m.embeddings.word_embeddings.weight.numpy()
    assert abs(w.std() - 0.05) < 0.005
    np.testing.assert_array_equal(m.encoder.layer[0].output.LayerNorm.weight.numpy(), 1.0)


@pytest.mark.parametrize("name", ["tiny_bert", "tiny_ernie"])
def test_save_pretrained_writes_the_hugging_face_layout(tmp_path, name):
    src = tmp_path / "src"
    src.mkdir()
    z, cfg, keys, weights = _hf_folder(src, name)
    model = from_pretrained(src)
    out = tmp_path / "out"
    model.save_pretrained(out)
    saved = load_hf_weights(out)
    assert sorted(saved) == sorted(keys)
    for k in keys:  # bit-exact, [out, in] again for the Linear weights
        np.testing.assert_array_equal(saved[k], weights[k])
    again = from_pretrained(out)
    assert type(again) is type(model) and again.config.to_dict()["model_type"] == \
        cfg["model_type"]
    a, _ = again(z["input_ids"], attention_mask=z["attention_mask"])
    b, _ = model(z["input_ids"], attention_mask=z["attention_mask"])
    np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_optional_inputs_are_keyword_only():
    # HF passes the attention mask second, Paddle's BERT the token types: refuse both
    cfg = BertConfig(vocab_size=20, hidden_size=8, num_hidden_layers=1, num_attention_heads=2,
                     intermediate_size=16)
    with pytest.raises(TypeError):
        BertModel(cfg)([[1, 2]], [[1, 1]])
    a, _ = BertModel(cfg)([[1, 2]], attention_mask=np.array([[True, False]]))
    assert a.shape == [1, 2, 8]


def test_pytorch_bin_folder_matches_transformers(tmp_path):
    from fw.hub.testing import write_torch_checkpoint

    z, cfg, keys, shapes = _fixture("tiny_ernie")
    write_torch_checkpoint(str(tmp_path / "pytorch_model.bin"),
                           state_dict_for(zip(keys, shapes)))
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    model = from_pretrained(tmp_path)
    seq, pooled = model(z["input_ids"], token_type_ids=z["token_type_ids"],
                        attention_mask=z["attention_mask"], task_type_ids=z["task_type_ids"])
    np.testing.assert_allclose(seq.numpy(), z["last_hidden_state"], rtol=1e-4, atol=2e-5)
    np.testing.assert_allclose(pooled.numpy(), z["pooler_output"], rtol=1e-4, atol=2e-5)
