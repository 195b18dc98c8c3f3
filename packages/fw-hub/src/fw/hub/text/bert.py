"""BERT and ERNIE encoders with Hugging Face's module names.

The sublayer tree mirrors ``transformers``' ``BertModel`` / ``ErnieModel``
(``embeddings.word_embeddings``, ``encoder.layer.N.attention.self.query``,
``encoder.layer.N.attention.output.dense``, ``encoder.layer.N.intermediate.dense``,
``encoder.layer.N.output.LayerNorm``, ``pooler.dense``, ...), so the structured names
of `state_dict` are the Hugging Face names and a safetensors checkpoint loads without
renaming. The one layout difference is Linear weights: fw (like Paddle) stores them
``[in, out]``, PyTorch ``[out, in]``; `fw.hub.text.weights` transposes them by an
explicit, tested list of Linear weights (never by guessing from shapes).

MiniLM checkpoints (all-MiniLM-L6-v2, ...) are this BERT architecture, smaller.
"""

from __future__ import annotations

import numpy as np

import fw
import fw.nn as nn
import fw.nn.functional as F
from fw.hub.text.config import BertConfig, ErnieConfig

__all__ = ["BertModel", "ErnieModel"]


def _quick_gelu(x):
    return x * F.sigmoid(1.702 * x)


# transformers' ACT2FN names -> fw functions. "gelu" is the exact (erf) form;
# "gelu_new", "gelu_pytorch_tanh" and "gelu_fast" are all the tanh approximation.
_ACTIVATIONS = {
    "gelu": lambda x: F.gelu(x, approximate=False),
    "gelu_new": lambda x: F.gelu(x, approximate=True),
    "gelu_pytorch_tanh": lambda x: F.gelu(x, approximate=True),
    "gelu_fast": lambda x: F.gelu(x, approximate=True),
    "quick_gelu": _quick_gelu,
    "relu": F.relu,
    "silu": F.silu,
    "swish": F.silu,
    "tanh": fw.tanh,
}


def _normal(config):
    # Hugging Face initializes Linear and Embedding weights N(0, initializer_range)
    return fw.ParamAttr(initializer=nn.initializer.Normal(0.0, config.initializer_range))


def _linear(config, n_in, n_out):
    return nn.Linear(n_in, n_out, weight_attr=_normal(config))


class BertEmbeddings(nn.Layer):
    """word + position + token-type (+ ERNIE task-type) embeddings, LayerNorm, dropout."""

    def __init__(self, config: BertConfig):
        super().__init__()
        h = config.hidden_size
        # No padding_idx: in PyTorch it only freezes that row's gradient, while a
        # Paddle-style padding_idx would also zero the output and change results for
        # checkpoints whose [PAD] row is not zero.
        self.word_embeddings = nn.Embedding(config.vocab_size, h, weight_attr=_normal(config))
        self.position_embeddings = nn.Embedding(config.max_position_embeddings, h,
                                                weight_attr=_normal(config))
        self.token_type_embeddings = nn.Embedding(config.type_vocab_size, h,
                                                  weight_attr=_normal(config))
        self.use_task_id = bool(getattr(config, "use_task_id", False))
        if self.use_task_id:
            self.task_type_embeddings = nn.Embedding(config.task_type_vocab_size, h,
                                                     weight_attr=_normal(config))
        self.LayerNorm = nn.LayerNorm(h, epsilon=config.layer_norm_eps)
        self.dropout = nn.Dropout(config.hidden_dropout_prob)

    def forward(self, input_ids, token_type_ids=None, position_ids=None, task_type_ids=None):
        b, n = input_ids.shape
        if position_ids is None:
            position_ids = fw.arange(n, dtype="int64").unsqueeze(0)
        x = self.word_embeddings(input_ids) + self.position_embeddings(position_ids)
        if token_type_ids is None:
            token_type_ids = fw.zeros([b, n], dtype="int64")
        x = x + self.token_type_embeddings(token_type_ids)
        if self.use_task_id:
            if task_type_ids is None:
                task_type_ids = fw.zeros([b, n], dtype="int64")
            x = x + self.task_type_embeddings(task_type_ids)
        return self.dropout(self.LayerNorm(x))


class BertSelfAttention(nn.Layer):
    """Multi-head scaled dot-product attention; ``query`` / ``key`` / ``value``."""

    def __init__(self, config: BertConfig):
        super().__init__()
        h = config.hidden_size
        self.num_attention_heads = config.num_attention_heads
        self.head_dim = config.head_dim
        self.query = _linear(config, h, h)
        self.key = _linear(config, h, h)
        self.value = _linear(config, h, h)
        self.attention_probs_dropout_prob = config.attention_probs_dropout_prob

    def forward(self, hidden_states, attn_mask=None):
        b, n, h = hidden_states.shape
        shape = [b, n, self.num_attention_heads, self.head_dim]
        q = self.query(hidden_states).reshape(shape)
        k = self.key(hidden_states).reshape(shape)
        v = self.value(hidden_states).reshape(shape)
        out = F.scaled_dot_product_attention(
            q, k, v, attn_mask=attn_mask,
            dropout_p=self.attention_probs_dropout_prob if self.training else 0.0,
            training=self.training)
        return out.reshape([b, n, h])


class BertSelfOutput(nn.Layer):
    """Attention output projection, dropout, residual add and LayerNorm."""

    def __init__(self, config: BertConfig):
        super().__init__()
        self.dense = _linear(config, config.hidden_size, config.hidden_size)
        self.LayerNorm = nn.LayerNorm(config.hidden_size, epsilon=config.layer_norm_eps)
        self.dropout = nn.Dropout(config.hidden_dropout_prob)

    def forward(self, hidden_states, input_tensor):
        return self.LayerNorm(self.dropout(self.dense(hidden_states)) + input_tensor)


class BertAttention(nn.Layer):
    def __init__(self, config: BertConfig):
        super().__init__()
        self.self = BertSelfAttention(config)  # HF's name: "attention.self.query"
        self.output = BertSelfOutput(config)

    def forward(self, hidden_states, attn_mask=None):
        return self.output(self.self(hidden_states, attn_mask), hidden_states)


class BertIntermediate(nn.Layer):
    def __init__(self, config: BertConfig):
        super().__init__()
        self.dense = _linear(config, config.hidden_size, config.intermediate_size)
        self._act = _ACTIVATIONS[config.hidden_act]

    def forward(self, hidden_states):
        return self._act(self.dense(hidden_states))


class BertOutput(nn.Layer):
    def __init__(self, config: BertConfig):
        super().__init__()
        self.dense = _linear(config, config.intermediate_size, config.hidden_size)
        self.LayerNorm = nn.LayerNorm(config.hidden_size, epsilon=config.layer_norm_eps)
        self.dropout = nn.Dropout(config.hidden_dropout_prob)

    def forward(self, hidden_states, input_tensor):
        return self.LayerNorm(self.dropout(self.dense(hidden_states)) + input_tensor)


class BertLayer(nn.Layer):
    """One post-LayerNorm encoder block: attention, then the feed-forward."""

    def __init__(self, config: BertConfig):
        super().__init__()
        self.attention = BertAttention(config)
        self.intermediate = BertIntermediate(config)
        self.output = BertOutput(config)

    def forward(self, hidden_states, attn_mask=None):
        a = self.attention(hidden_states, attn_mask)
        return self.output(self.intermediate(a), a)


class BertEncoder(nn.Layer):
    def __init__(self, config: BertConfig):
        super().__init__()
        self.layer = nn.LayerList([BertLayer(config) for _ in range(config.num_hidden_layers)])

    def forward(self, hidden_states, attn_mask=None):
        for layer in self.layer:
            hidden_states = layer(hidden_states, attn_mask)
        return hidden_states


class BertPooler(nn.Layer):
    """tanh(dense(first token)): BERT's sentence vector for next-sentence prediction."""

    def __init__(self, config: BertConfig):
        super().__init__()
        self.dense = _linear(config, config.hidden_size, config.hidden_size)

    def forward(self, hidden_states):
        return fw.tanh(self.dense(hidden_states[:, 0]))


def _as_ids(x, what, fn, limit=None, shape=None):
    """`x` (Tensor / array / nested list of ints) as an int64 Tensor [batch, seq],
    with the checks whose failure would otherwise read outside an embedding table."""
    arr = x.numpy() if isinstance(x, fw.Tensor) else np.asarray(x)
    if arr.ndim == 1:
        arr = arr[None]
    if arr.ndim != 2 or not (np.issubdtype(arr.dtype, np.integer) or arr.size == 0):
        raise ValueError(f"{fn}: {what} must be integer ids of shape [batch, seq], got shape "
                         f"{list(arr.shape)} dtype {arr.dtype}")
    if shape is not None and tuple(arr.shape) != tuple(shape):
        raise ValueError(f"{fn}: {what} has shape {list(arr.shape)}, input_ids has "
                         f"{list(shape)}")
    if limit is not None and arr.size and (arr.min() < 0 or arr.max() >= limit):
        raise ValueError(f"{fn}: {what} must lie in [0, {limit}), got values in "
                         f"[{arr.min()}, {arr.max()}]")
    return fw.to_tensor(arr.astype(np.int64))


class BertModel(nn.Layer):
    """BERT encoder (``transformers.BertModel``'s structure and parameter names).

    Args:
        config (BertConfig): the hyper-parameters (``BertConfig.from_dict`` reads a
            Hugging Face ``config.json``).
        add_pooling_layer (bool): build the ``pooler`` (tanh(dense(first token))).
            Default True; sentence-embedding checkpoints may have none.

    Forward args (all but input_ids keyword-only: Hugging Face passes the attention mask
    second, Paddle's BERT the token types, so a positional mask would be ambiguous):
        input_ids: int ids ``[batch, seq]`` (Tensor, array or nested lists).
        token_type_ids: segment ids, same shape; zeros when None.
        attention_mask: 1 (or True) for tokens to attend to, 0 for padding — the
            Hugging Face / tokenizer convention —, same shape; all ones when None.
        position_ids: positions, same shape; ``0 .. seq-1`` when None.

    Returns:
        tuple: ``(last_hidden_state [batch, seq, hidden_size], pooler_output
        [batch, hidden_size] or None)``, as Paddle's BERT returns
        ``(sequence_output, pooled_output)``.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> from fw.hub.text import BertConfig, BertModel
            >>> cfg = BertConfig(vocab_size=50, hidden_size=16, num_hidden_layers=1,
            ...                  num_attention_heads=2, intermediate_size=32)
            >>> seq, pooled = BertModel(cfg)([[2, 5, 7, 3]])
            >>> seq.shape, pooled.shape
            ([1, 4, 16], [1, 16])
    """

    config_class = BertConfig

    def __init__(self, config: BertConfig, add_pooling_layer: bool = True):
        super().__init__()
        if not isinstance(config, self.config_class):
            raise TypeError(f"{type(self).__name__}: config must be a "
                            f"{self.config_class.__name__}, got {type(config).__name__}")
        self.config = config
        self.embeddings = BertEmbeddings(config)
        self.encoder = BertEncoder(config)
        self.pooler = BertPooler(config) if add_pooling_layer else None

    def forward(self, input_ids, *, token_type_ids=None, attention_mask=None,
                position_ids=None, task_type_ids=None):
        fn = f"{type(self).__name__}.forward"
        cfg = self.config
        ids = _as_ids(input_ids, "input_ids", fn, cfg.vocab_size)
        shape = ids.shape
        if shape[1] > cfg.max_position_embeddings and position_ids is None:
            raise ValueError(f"{fn}: sequence length {shape[1]} exceeds "
                             f"max_position_embeddings={cfg.max_position_embeddings}; "
                             "truncate the input (the tokenizer's max_length)")
        if token_type_ids is not None:
            token_type_ids = _as_ids(token_type_ids, "token_type_ids", fn,
                                     cfg.type_vocab_size, shape)
        if position_ids is not None:
            position_ids = _as_ids(position_ids, "position_ids", fn,
                                   cfg.max_position_embeddings, shape)
        if task_type_ids is not None:
            if not self.embeddings.use_task_id:
                raise ValueError(f"{fn}: task_type_ids given but the config has "
                                 "use_task_id=False (no task-type embedding)")
            task_type_ids = _as_ids(task_type_ids, "task_type_ids", fn,
                                    cfg.task_type_vocab_size, shape)
        attn_mask = None
        if attention_mask is not None:
            attn_mask = _additive_mask(attention_mask, shape, fn)
        x = self.embeddings(ids, token_type_ids, position_ids, task_type_ids)
        x = self.encoder(x, attn_mask)
        return x, (self.pooler(x) if self.pooler is not None else None)

    @classmethod
    def from_pretrained(cls, model_dir, dtype="float32"):
        """Build from a Hugging Face model directory (``config.json`` + safetensors);
        see `fw.hub.text.from_pretrained`."""
        from fw.hub.text.weights import from_pretrained

        model = from_pretrained(model_dir, dtype=dtype)
        if not isinstance(model, cls):
            raise TypeError(f"{cls.__name__}.from_pretrained: {model_dir} holds a "
                            f"{type(model).__name__} (config model_type "
                            f"{model.config.model_type!r})")
        return model

    def save_pretrained(self, save_directory):
        """Write a Hugging Face folder (config.json + model.safetensors); see
        `fw.hub.text.save_pretrained`."""
        from fw.hub.text.weights import save_pretrained

        save_pretrained(self, save_directory)


def _additive_mask(attention_mask, shape, fn):
    """[batch, seq] 1/0 keep-mask -> float mask [batch, 1, 1, seq] added to the scores:
    0 where kept, the float32 minimum where padded (as Hugging Face does, so a padded
    key gets exactly zero weight without producing inf - inf)."""
    m = attention_mask.numpy() if isinstance(attention_mask, fw.Tensor) \
        else np.asarray(attention_mask)
    if m.ndim == 1:
        m = m[None]
    if tuple(m.shape) != tuple(shape):
        raise ValueError(f"{fn}: attention_mask has shape {list(m.shape)}, input_ids has "
                         f"{list(shape)}")
    add = np.where(m.astype(bool), 0.0, np.finfo(np.float32).min).astype(np.float32)
    return fw.to_tensor(add[:, None, None, :])


class ErnieModel(BertModel):
    """ERNIE encoder (``transformers.ErnieModel``): BERT's structure plus, when the
    config has ``use_task_id``, ``embeddings.task_type_embeddings`` added to the input
    embeddings (``task_type_ids``, zeros by default).

    Args:
        config (ErnieConfig): the hyper-parameters.
        add_pooling_layer (bool): build the ``pooler``. Default True.

    Returns:
        tuple: ``(last_hidden_state, pooler_output or None)`` from forward.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> from fw.hub.text import ErnieConfig, ErnieModel
            >>> cfg = ErnieConfig(vocab_size=50, hidden_size=16, num_hidden_layers=1,
            ...                   num_attention_heads=2, intermediate_size=32,
            ...                   use_task_id=True)
            >>> seq, _ = ErnieModel(cfg)([[2, 5, 7]], task_type_ids=[[0, 1, 2]])
            >>> seq.shape
            [1, 3, 16]
    """

    config_class = ErnieConfig
