"""Encoder configurations under Hugging Face's ``config.json`` names.

`BertConfig` and `ErnieConfig` hold the keys of ``transformers``' ``BertConfig`` /
``ErnieConfig`` (``hidden_size``, ``num_hidden_layers``, ``num_attention_heads``,
``intermediate_size``, ``hidden_act``, ``max_position_embeddings``,
``type_vocab_size``, ``layer_norm_eps``, ERNIE's ``use_task_id`` /
``task_type_vocab_size``, ...), so a Hugging Face ``config.json`` is read as is. Keys
fw does not use are kept in ``extra`` (written back by `to_dict`); settings fw cannot
honour (relative position embeddings, decoder / cross-attention use) are refused at
load time rather than silently ignored. MiniLM checkpoints are BERT architectures
(``"model_type": "bert"``) and use `BertConfig`.
"""

from __future__ import annotations

import dataclasses
import json
import os
from dataclasses import dataclass, field

__all__ = ["BertConfig", "ErnieConfig", "config_from_dict", "load_config"]

# hidden_act names of transformers' ACT2FN that fw implements (see bert._ACTIVATIONS)
SUPPORTED_ACTIVATIONS = ("gelu", "gelu_new", "gelu_pytorch_tanh", "gelu_fast", "quick_gelu",
                         "relu", "silu", "swish", "tanh")


@dataclass
class BertConfig:
    """BERT encoder hyper-parameters, named as in Hugging Face's ``BertConfig``.

    Args:
        vocab_size (int): word-piece vocabulary size. Default 30522.
        hidden_size (int): width of every layer. Default 768.
        num_hidden_layers (int): number of encoder layers. Default 12.
        num_attention_heads (int): attention heads per layer (divides hidden_size).
        intermediate_size (int): width of the feed-forward layer. Default 3072.
        hidden_act (str): feed-forward activation (``"gelu"`` is the exact erf form,
            ``"gelu_new"`` / ``"gelu_pytorch_tanh"`` the tanh approximation).
        hidden_dropout_prob (float): dropout after embeddings and sublayers (training).
        attention_probs_dropout_prob (float): dropout on attention weights (training).
        max_position_embeddings (int): longest sequence the position table covers.
        type_vocab_size (int): number of token types (segments).
        initializer_range (float): std of the normal initializer of fresh weights.
        layer_norm_eps (float): LayerNorm epsilon. Default 1e-12.
        pad_token_id (int): id of the padding token.
        position_embedding_type (str): only ``"absolute"`` is implemented.
        extra (dict): the other config.json keys, kept for `to_dict`.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> from fw.hub.text import BertConfig
            >>> cfg = BertConfig.from_dict({"hidden_size": 384, "num_hidden_layers": 6,
            ...                             "num_attention_heads": 12,
            ...                             "intermediate_size": 1536})
            >>> cfg.hidden_size, cfg.vocab_size
            (384, 30522)
    """

    model_type = "bert"

    vocab_size: int = 30522
    hidden_size: int = 768
    num_hidden_layers: int = 12
    num_attention_heads: int = 12
    intermediate_size: int = 3072
    hidden_act: str = "gelu"
    hidden_dropout_prob: float = 0.1
    attention_probs_dropout_prob: float = 0.1
    max_position_embeddings: int = 512
    type_vocab_size: int = 2
    initializer_range: float = 0.02
    layer_norm_eps: float = 1e-12
    pad_token_id: int = 0
    position_embedding_type: str = "absolute"
    extra: dict = field(default_factory=dict)

    def __post_init__(self):
        name = type(self).__name__
        for key in ("vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads",
                    "intermediate_size", "max_position_embeddings", "type_vocab_size"):
            v = getattr(self, key)
            if isinstance(v, bool) or not isinstance(v, int) or v <= 0:
                raise ValueError(f"{name}: {key} must be a positive int, got {v!r}")
        if self.hidden_size % self.num_attention_heads:
            raise ValueError(f"{name}: hidden_size ({self.hidden_size}) must be divisible by "
                             f"num_attention_heads ({self.num_attention_heads})")
        if self.hidden_act not in SUPPORTED_ACTIVATIONS:
            raise ValueError(f"{name}: hidden_act {self.hidden_act!r} is not supported; "
                             f"supported: {', '.join(SUPPORTED_ACTIVATIONS)}")
        if self.position_embedding_type != "absolute":
            raise NotImplementedError(
                f"{name}: position_embedding_type {self.position_embedding_type!r} is not "
                "implemented (only 'absolute'): loading it would give wrong outputs")
        for key in ("is_decoder", "add_cross_attention"):
            if self.extra.get(key):
                raise NotImplementedError(f"{name}: {key}=True is not supported (fw.hub.text "
                                          "has encoders only)")

    @classmethod
    def from_dict(cls, d: dict):
        """Build from a ``config.json`` mapping; unknown keys go to ``extra``."""
        if not isinstance(d, dict):
            raise TypeError(f"{cls.__name__}.from_dict: expected a dict, got {type(d).__name__}")
        names = {f.name for f in dataclasses.fields(cls)} - {"extra"}
        known = {k: v for k, v in d.items() if k in names}
        extra = {k: v for k, v in d.items() if k not in names}
        # None in config.json means "the default" for the keys fw reads
        known = {k: v for k, v in known.items() if v is not None}
        return cls(**known, extra=extra)

    def to_dict(self) -> dict:
        """The config.json mapping (``model_type`` and the ``extra`` keys included)."""
        d = dict(self.extra)
        d.update({f.name: getattr(self, f.name) for f in dataclasses.fields(self)
                  if f.name != "extra"})
        d["model_type"] = self.model_type
        return d

    @property
    def head_dim(self) -> int:
        return self.hidden_size // self.num_attention_heads


@dataclass
class ErnieConfig(BertConfig):
    """ERNIE encoder hyper-parameters (Hugging Face's ``ErnieConfig``): a BERT config
    plus ``task_type_vocab_size`` and ``use_task_id`` (ERNIE 3.0 adds a task-type
    embedding to the word, position and token-type embeddings when ``use_task_id``).

    Examples:
        .. code-block:: python

            >>> import fw
            >>> from fw.hub.text import ErnieConfig
            >>> ErnieConfig(use_task_id=True).task_type_vocab_size
            3
    """

    model_type = "ernie"

    task_type_vocab_size: int = 3
    use_task_id: bool = False


_BY_MODEL_TYPE = {"bert": BertConfig, "ernie": ErnieConfig}


def config_from_dict(d: dict) -> BertConfig:
    """The config class named by ``d["model_type"]`` (``"bert"`` or ``"ernie"``) built
    from `d`.

    Args:
        d (dict): a Hugging Face ``config.json`` mapping.

    Returns:
        BertConfig | ErnieConfig.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> from fw.hub.text import config_from_dict
            >>> type(config_from_dict({"model_type": "ernie"})).__name__
            'ErnieConfig'
    """
    mt = d.get("model_type", "bert") if isinstance(d, dict) else None
    if mt == "bert" and (d.get("use_task_id") or d.get("init_class") == "ErnieModel"):
        # early ERNIE 3.0 uploads say model_type "bert" (init_class "ErnieModel") but
        # carry the task-type embedding: read them as what they are
        mt = "ernie"
    if mt not in _BY_MODEL_TYPE:
        raise NotImplementedError(
            f"fw.hub.text.config_from_dict: model_type {mt!r} is not supported; supported: "
            f"{sorted(_BY_MODEL_TYPE)} (MiniLM checkpoints are model_type 'bert')")
    return _BY_MODEL_TYPE[mt].from_dict(d)


def load_config(path) -> BertConfig:
    """Read a ``config.json`` file (or the one in directory `path`).

    Args:
        path (str|os.PathLike): the file, or a model directory holding ``config.json``.

    Returns:
        BertConfig | ErnieConfig.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> import json, os, tempfile
            >>> from fw.hub.text import load_config
            >>> d = tempfile.mkdtemp()
            >>> with open(os.path.join(d, "config.json"), "w") as f:
            ...     json.dump({"model_type": "bert", "hidden_size": 64,
            ...                "num_attention_heads": 4}, f)
            >>> load_config(d).hidden_size
            64
    """
    path = os.fspath(path)
    if os.path.isdir(path):
        path = os.path.join(path, "config.json")
    if not os.path.isfile(path):
        raise FileNotFoundError(f"fw.hub.text.load_config: no config.json at {path}")
    with open(path, encoding="utf-8") as f:
        try:
            d = json.load(f)
        except json.JSONDecodeError as e:
            raise ValueError(f"fw.hub.text.load_config: {path} is not valid JSON: {e}") from None
    return config_from_dict(d)
