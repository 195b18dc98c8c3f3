"""Outputs of tiny random-weight BERT and ERNIE encoders from Hugging Face
transformers, for packages/fw-hub/tests/test_text_models.py (run once; the .npz
files are committed, CI never needs PyTorch).

Run with the PyTorch venv that has transformers installed::

    /work/tmp/torch-opsrules/bin/python packages/fw-hub/tools/gen_text_fixtures.py

Weights come from tests/_text_weights.py (seeded by entry name, HF layout) so a
fixture holds the config, the state-dict names and shapes, the inputs (with
padding, so the attention mask matters) and the outputs: a few KB each.
"""

from __future__ import annotations

import json
import pathlib
import sys

import numpy as np

HERE = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(HERE / "tests"))
from _text_weights import state_dict_for  # noqa: E402

_BASE = dict(vocab_size=99, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
             intermediate_size=48, max_position_embeddings=40, type_vocab_size=3,
             hidden_dropout_prob=0.1, attention_probs_dropout_prob=0.1, pad_token_id=0)

# name -> (HF model class, config); each exercises something the others do not
CASES = {
    "tiny_bert": ("BertModel", dict(_BASE, hidden_act="gelu", layer_norm_eps=1e-12)),
    "tiny_bert_relu": ("BertModel", dict(_BASE, hidden_act="relu", layer_norm_eps=1e-6,
                                         num_hidden_layers=3, num_attention_heads=2)),
    "tiny_bert_gelu_new": ("BertModel", dict(_BASE, hidden_act="gelu_new",
                                             layer_norm_eps=1e-5)),
    "tiny_ernie": ("ErnieModel", dict(_BASE, hidden_act="gelu", layer_norm_eps=1e-5,
                                      use_task_id=True, task_type_vocab_size=3)),
}


def _inputs(cfg, seed):
    rng = np.random.default_rng(seed)
    b, seq = 3, 11
    ids = rng.integers(1, cfg["vocab_size"], (b, seq))
    mask = np.ones((b, seq), np.int64)
    mask[1, 7:] = 0  # padded rows: the attention mask must hide these keys
    mask[2, 3:] = 0
    ids[mask == 0] = cfg["pad_token_id"]
    types = rng.integers(0, cfg["type_vocab_size"], (b, seq))
    tasks = rng.integers(0, cfg.get("task_type_vocab_size", 1), (b, seq))
    return ids, types, mask, tasks


def main() -> None:
    import torch
    import transformers

    out_dir = HERE / "tests" / "fixtures"
    for i, (name, (cls_name, cfg)) in enumerate(CASES.items()):
        cls = getattr(transformers, cls_name)
        conf_cls = getattr(transformers, cls_name.replace("Model", "Config"))
        model = cls(conf_cls(**cfg)).eval()
        sd = model.state_dict()
        keys = sorted(sd)
        shapes = [list(sd[k].shape) for k in keys]
        weights = state_dict_for(zip(keys, shapes))
        model.load_state_dict({k: torch.from_numpy(v) for k, v in weights.items()}, strict=True)
        ids, types, mask, tasks = _inputs(cfg, i)
        kw = dict(input_ids=torch.from_numpy(ids), token_type_ids=torch.from_numpy(types),
                  attention_mask=torch.from_numpy(mask))
        if cfg.get("use_task_id"):
            kw["task_type_ids"] = torch.from_numpy(tasks)
        with torch.no_grad():
            out = model(**kw)
            # defaults: no token types / attention mask given
            out_default = model(input_ids=torch.from_numpy(ids))
        np.savez_compressed(
            out_dir / f"{name}.npz",
            config=np.array(json.dumps(dict(cfg, model_type=cls_name[:-5].lower()))),
            keys=np.array(keys), shapes=np.array(json.dumps(shapes)),
            input_ids=ids.astype(np.int64), token_type_ids=types.astype(np.int64),
            attention_mask=mask.astype(np.int64), task_type_ids=tasks.astype(np.int64),
            last_hidden_state=out.last_hidden_state.numpy(),
            pooler_output=out.pooler_output.numpy(),
            last_hidden_state_default=out_default.last_hidden_state.numpy(),
            versions=np.array([f"transformers {transformers.__version__}",
                               f"torch {torch.__version__}"]),
        )
        print("wrote", name, len(keys), "entries")


if __name__ == "__main__":
    main()
