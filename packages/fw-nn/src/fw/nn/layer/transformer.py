"""Attention and Transformer layers with Paddle's signatures and cache semantics.

Masks (``attn_mask``, ``src_mask``, …) broadcast to ``[batch, num_heads, len_q,
len_k]``: a bool (or int) mask keeps True (non-zero) positions and blocks the
others (it becomes ``(mask - 1) * 1e9`` added to the scores); a float mask is
added to the scores as is (``-inf`` blocks).

`MultiHeadAttention` caches: ``Cache(k, v)`` grows by the new keys/values at each
incremental decoding step (self-attention); ``StaticCache(k, v)`` holds
precomputed keys/values of a fixed memory (cross-attention). Both hold
``[batch, num_heads, len, head_dim]`` tensors.
"""

from __future__ import annotations

import collections
import copy

import fw
from fw.core.errors import InvalidArgumentError
from fw.nn import functional as F
from fw.nn.layer.common import Dropout, Linear
from fw.nn.layer.container import LayerList
from fw.nn.layer.layers import Layer
from fw.nn.layer.norm import LayerNorm

__all__ = ["MultiHeadAttention", "TransformerEncoderLayer", "TransformerEncoder",
           "TransformerDecoderLayer", "TransformerDecoder", "Transformer"]


def _convert_attention_mask(attn_mask, dtype):
    """bool/int masks -> additive float masks (0 keeps, -1e9 blocks)."""
    if attn_mask is None:
        return None
    if attn_mask.dtype.is_floating_point:
        return attn_mask if attn_mask.dtype == dtype else attn_mask.astype(dtype)
    return (attn_mask.astype(dtype) - 1.0) * 1e9


def _param_attrs(attr, n):
    """Paddle's rule: one attr for every sublayer, or a list of `n` attrs."""
    if isinstance(attr, (list, tuple)):
        if len(attr) == 1:
            return [attr[0]] * n
        if len(attr) != n:
            raise InvalidArgumentError(f"expected 1 or {n} parameter attributes, got {len(attr)}")
        return list(attr)
    return [attr] * n


class MultiHeadAttention(Layer):
    """Multi-head scaled dot-product attention with input and output projections.

    Args:
        embed_dim: model width (query size and output size).
        num_heads: heads; must divide embed_dim.
        dropout: dropout on the attention weights while training.
        kdim, vdim: key/value input sizes (embed_dim by default).
        need_weights: also return the attention weights.
        weight_attr, bias_attr: `ParamAttr` of the four projections.

    ``forward(query, key=None, value=None, attn_mask=None, cache=None)``: key defaults
    to query, value to query. Returns ``out`` or a tuple ``(out[, weights][, cache])``.

    >>> import fw
    >>> mha = fw.nn.MultiHeadAttention(16, 2)
    >>> mha(fw.randn([2, 4, 16])).shape
    [2, 4, 16]
    """

    Cache = collections.namedtuple("Cache", ["k", "v"])
    StaticCache = collections.namedtuple("StaticCache", ["k", "v"])

    def __init__(self, embed_dim, num_heads, dropout=0.0, kdim=None, vdim=None,
                 need_weights=False, weight_attr=None, bias_attr=None):
        super().__init__()
        if embed_dim <= 0 or num_heads <= 0 or embed_dim % num_heads:
            raise InvalidArgumentError(f"MultiHeadAttention: num_heads ({num_heads}) must be "
                                       f"positive and divide embed_dim ({embed_dim})")
        self.embed_dim = embed_dim
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self.num_heads = num_heads
        self.dropout = dropout
        self.need_weights = need_weights
        self.head_dim = embed_dim // num_heads
        self.q_proj = Linear(embed_dim, embed_dim, weight_attr, bias_attr)
        self.k_proj = Linear(self.kdim, embed_dim, weight_attr, bias_attr)
        self.v_proj = Linear(self.vdim, embed_dim, weight_attr, bias_attr)
        self.out_proj = Linear(embed_dim, embed_dim, weight_attr, bias_attr)

    def _heads(self, x):
        return x.reshape([0, 0, self.num_heads, self.head_dim]).transpose([0, 2, 1, 3])

    def compute_kv(self, key, value):
        """Projected keys and values, ``[batch, num_heads, len, head_dim]``."""
        return self._heads(self.k_proj(key)), self._heads(self.v_proj(value))

    def gen_cache(self, key, value=None, type=Cache):  # noqa: A002
        """A cache for incremental decoding: ``StaticCache`` of the projected `key`/`value`
        (cross-attention memory); ``Cache`` with `key`/`value` as given, or empty (length
        0, batch of `key`) when value is None."""
        if type is MultiHeadAttention.StaticCache:
            k, v = self.compute_kv(key, key if value is None else value)
            return self.StaticCache(k, v)
        if value is None:
            b = key.shape[0]
            z = fw.zeros([b, self.num_heads, 0, self.head_dim], dtype=key.dtype)
            return self.Cache(z, z)
        return self.Cache(key, value)

    def forward(self, query, key=None, value=None, attn_mask=None, cache=None):
        key = query if key is None else key
        value = query if value is None else value
        q = self._heads(self.q_proj(query))
        if isinstance(cache, self.StaticCache):
            k, v = cache.k, cache.v
        else:
            k, v = self.compute_kv(key, value)
        if isinstance(cache, self.Cache):
            k = fw.concat([cache.k, k], axis=2)
            v = fw.concat([cache.v, v], axis=2)
            cache = self.Cache(k, v)
        scores = fw.matmul(q * (self.head_dim ** -0.5), k, transpose_y=True)
        mask = _convert_attention_mask(attn_mask, scores.dtype)
        if mask is not None:
            scores = scores + mask
        weights = F.softmax(scores, axis=-1)
        if self.dropout:
            weights = F.dropout(weights, self.dropout, training=self.training,
                                mode="upscale_in_train")
        out = fw.matmul(weights, v).transpose([0, 2, 1, 3])
        out = self.out_proj(out.reshape([0, 0, self.embed_dim]))
        outs = [out]
        if self.need_weights:
            outs.append(weights)
        if cache is not None:
            outs.append(cache)
        return out if len(outs) == 1 else tuple(outs)

    def extra_repr(self) -> str:
        return (f"embed_dim={self.embed_dim}, num_heads={self.num_heads}, "
                f"dropout={self.dropout}, need_weights={self.need_weights}")


def _activation(name):
    fn = getattr(F, name, None)
    if fn is None or not callable(fn):
        raise InvalidArgumentError(f"unknown activation {name!r}")
    return fn


# ---------------------------------------------------------------- encoder/decoder layer parts
def _build_layer(layer, n_attn, d_model, nhead, dim_feedforward, dropout, activation,
                 attn_dropout, act_dropout, normalize_before, weight_attr, bias_attr,
                 layer_norm_eps):
    """The sublayers of an encoder (``n_attn=1``) or decoder (``n_attn=2``) layer:
    ``self_attn`` [, ``cross_attn``], ``linear1``, ``dropout``, ``linear2``, ``norm1`` ..
    ``norm{n_attn+1}``, ``dropout1`` .. ``dropout{n_attn+1}``, ``activation``. They are
    created in this order, which fixes parameter names and initialisation draws.
    weight_attr/bias_attr: one attr, or one per attention plus one for the feed-forward."""
    attn_dropout = dropout if attn_dropout is None else attn_dropout
    act_dropout = dropout if act_dropout is None else act_dropout
    layer.normalize_before = normalize_before
    n = n_attn + 1
    w = _param_attrs(weight_attr, n)
    b = _param_attrs(bias_attr, n)
    for i, attr in enumerate(("self_attn", "cross_attn")[:n_attn]):
        setattr(layer, attr, MultiHeadAttention(d_model, nhead, attn_dropout, weight_attr=w[i],
                                                bias_attr=b[i]))
    layer.linear1 = Linear(d_model, dim_feedforward, w[-1], b[-1])
    layer.dropout = Dropout(act_dropout, mode="upscale_in_train")
    layer.linear2 = Linear(dim_feedforward, d_model, w[-1], b[-1])
    for i in range(1, n + 1):
        setattr(layer, f"norm{i}", LayerNorm(d_model, layer_norm_eps))
    for i in range(1, n + 1):
        setattr(layer, f"dropout{i}", Dropout(dropout, mode="upscale_in_train"))
    layer.activation = _activation(activation)


def _add_norm(layer, residual, x, dropout, norm):
    """The end of a residual block: ``residual + dropout(x)``, normalised unless the
    layer normalises before the block (pre-norm)."""
    x = residual + dropout(x)
    return x if layer.normalize_before else norm(x)


def _attention_block(layer, attn, x, kv, mask, cache, norm, dropout):
    """A residual attention block over `x` (self-attention when `kv` is None, else
    cross-attention over `kv`); returns ``(out, new cache)``, the cache None when
    `cache` is."""
    residual = x
    if layer.normalize_before:
        x = norm(x)
    kv = x if kv is None else kv
    if cache is None:
        x = attn(x, kv, kv, mask, None)
    else:
        x, cache = attn(x, kv, kv, mask, cache)
    return _add_norm(layer, residual, x, dropout, norm), cache


def _feed_forward_block(layer, x, norm, dropout):
    """The residual feed-forward block: linear1, activation, dropout, linear2."""
    residual = x
    if layer.normalize_before:
        x = norm(x)
    x = layer.linear2(layer.dropout(layer.activation(layer.linear1(x))))
    return _add_norm(layer, residual, x, dropout, norm)


class TransformerEncoderLayer(Layer):
    """Self-attention + feed-forward block (post-norm, or pre-norm with
    ``normalize_before``).

    Args:
        d_model, nhead, dim_feedforward: sizes.
        dropout: on the residual branches (and, by default, attention and activation).
        activation: name of a `fw.nn.functional` activation ("relu", "gelu", ...).
        attn_dropout, act_dropout: override `dropout` for attention weights / after the
            activation.
        normalize_before: LayerNorm before each block instead of after.
        weight_attr, bias_attr: one attr, or a list of 2 (attention, feed-forward).
        layer_norm_eps: LayerNorm epsilon.

    ``forward(src, src_mask=None, cache=None)``; with a cache also returns the new one.
    """

    def __init__(self, d_model, nhead, dim_feedforward, dropout=0.1, activation="relu",
                 attn_dropout=None, act_dropout=None, normalize_before=False, weight_attr=None,
                 bias_attr=None, layer_norm_eps=1e-5):
        self._config = {k: v for k, v in locals().items() if k not in ("self", "__class__")}
        super().__init__()
        _build_layer(self, 1, **self._config)

    def forward(self, src, src_mask=None, cache=None):
        src_mask = _convert_attention_mask(src_mask, src.dtype)
        src, cache = _attention_block(self, self.self_attn, src, None, src_mask, cache,
                                      self.norm1, self.dropout1)
        src = _feed_forward_block(self, src, self.norm2, self.dropout2)
        return src if cache is None else (src, cache)

    def gen_cache(self, src):
        """An empty incremental self-attention cache for `src`'s batch."""
        return self.self_attn.gen_cache(src, type=MultiHeadAttention.Cache)


def _clones(layer, n):
    """`layer` plus n-1 fresh layers of the same configuration (new parameters)."""
    out = [layer]
    for _ in range(n - 1):
        cfg = getattr(layer, "_config", None)
        out.append(type(layer)(**cfg) if cfg is not None else copy.deepcopy(layer))
    return out


class TransformerEncoder(Layer):
    """A stack of `num_layers` encoder layers (the first is `encoder_layer`, the others
    fresh copies of its configuration), then the optional `norm`."""

    def __init__(self, encoder_layer, num_layers, norm=None, enable_recompute=False):
        super().__init__()
        self.layers = LayerList(_clones(encoder_layer, num_layers))
        self.num_layers = num_layers
        self.norm = norm
        self.enable_recompute = enable_recompute

    def forward(self, src, src_mask=None, cache=None):
        src_mask = _convert_attention_mask(src_mask, src.dtype)
        out = src
        new_caches = []
        for i, layer in enumerate(self.layers):
            if cache is None:
                out = layer(out, src_mask)
            else:
                out, c = layer(out, src_mask, cache[i])
                new_caches.append(c)
        if self.norm is not None:
            out = self.norm(out)
        return out if cache is None else (out, new_caches)

    def gen_cache(self, src):
        return [layer.gen_cache(src) for layer in self.layers]


class TransformerDecoderLayer(Layer):
    """Self-attention, cross-attention over `memory`, and feed-forward.

    ``forward(tgt, memory, tgt_mask=None, memory_mask=None, cache=None)``; `cache` is
    ``(self-attention Cache, cross-attention StaticCache)`` as from `gen_cache`; with a
    cache the layer returns ``(out, new_cache)``. weight_attr/bias_attr: one attr or a
    list of 3 (self-attention, cross-attention, feed-forward).
    """

    def __init__(self, d_model, nhead, dim_feedforward, dropout=0.1, activation="relu",
                 attn_dropout=None, act_dropout=None, normalize_before=False, weight_attr=None,
                 bias_attr=None, layer_norm_eps=1e-5):
        self._config = {k: v for k, v in locals().items() if k not in ("self", "__class__")}
        super().__init__()
        _build_layer(self, 2, **self._config)

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, cache=None):
        tgt_mask = _convert_attention_mask(tgt_mask, tgt.dtype)
        memory_mask = _convert_attention_mask(memory_mask, memory.dtype)
        tgt, incremental = _attention_block(self, self.self_attn, tgt, None, tgt_mask,
                                            None if cache is None else cache[0], self.norm1,
                                            self.dropout1)
        tgt, static = _attention_block(self, self.cross_attn, tgt, memory, memory_mask,
                                       None if cache is None else cache[1], self.norm2,
                                       self.dropout2)
        tgt = _feed_forward_block(self, tgt, self.norm3, self.dropout3)
        return tgt if cache is None else (tgt, (incremental, static))

    def gen_cache(self, memory):
        """``(empty self-attention Cache, cross-attention StaticCache of memory)``."""
        incremental = self.self_attn.gen_cache(memory, type=MultiHeadAttention.Cache)
        static = self.cross_attn.gen_cache(memory, memory, type=MultiHeadAttention.StaticCache)
        return incremental, static


class TransformerDecoder(Layer):
    """A stack of `num_layers` decoder layers, then the optional `norm`."""

    def __init__(self, decoder_layer, num_layers, norm=None):
        super().__init__()
        self.layers = LayerList(_clones(decoder_layer, num_layers))
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, cache=None):
        tgt_mask = _convert_attention_mask(tgt_mask, tgt.dtype)
        memory_mask = _convert_attention_mask(memory_mask, memory.dtype)
        out = tgt
        new_caches = []
        for i, layer in enumerate(self.layers):
            if cache is None:
                out = layer(out, memory, tgt_mask, memory_mask, None)
            else:
                out, c = layer(out, memory, tgt_mask, memory_mask, cache[i])
                new_caches.append(c)
        if self.norm is not None:
            out = self.norm(out)
        return out if cache is None else (out, new_caches)

    def gen_cache(self, memory, do_zip=False):
        """One cache per layer; ``do_zip`` regroups them as (all incremental, all
        static)."""
        caches = [layer.gen_cache(memory) for layer in self.layers]
        if do_zip:
            caches = list(zip(*caches))
        return caches


def _encoder_decoder_attrs(attr):
    """Transformer's weight_attr/bias_attr split as Paddle does into (encoder layer's,
    decoder layer's): a single attr (or a list of one) goes to both; of a longer list
    the encoder gets the first (of two) or the first and last (of three), the decoder
    the whole list."""
    if isinstance(attr, (list, tuple)):
        if len(attr) == 1:
            return attr[0], attr[0]
        if len(attr) == 2:
            return attr[0], attr
        return [attr[0], attr[-1]], attr
    return attr, attr


class Transformer(Layer):
    """Encoder-decoder Transformer (Vaswani et al.) with final LayerNorms on both
    stacks.

    ``forward(src, tgt, src_mask=None, tgt_mask=None, memory_mask=None)`` returns the
    decoder output ``[batch, tgt_len, d_model]``.

    >>> import fw
    >>> t = fw.nn.Transformer(16, 2, 1, 1, 32)
    >>> t(fw.randn([2, 4, 16]), fw.randn([2, 6, 16])).shape
    [2, 6, 16]
    """

    def __init__(self, d_model=512, nhead=8, num_encoder_layers=6, num_decoder_layers=6,
                 dim_feedforward=2048, dropout=0.1, activation="relu", attn_dropout=None,
                 act_dropout=None, normalize_before=False, weight_attr=None, bias_attr=None,
                 custom_encoder=None, custom_decoder=None):
        super().__init__()
        enc_w, dec_w = _encoder_decoder_attrs(weight_attr)
        enc_b, dec_b = _encoder_decoder_attrs(bias_attr)
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            enc_layer = TransformerEncoderLayer(d_model, nhead, dim_feedforward, dropout,
                                                activation, attn_dropout, act_dropout,
                                                normalize_before, enc_w, enc_b)
            self.encoder = TransformerEncoder(enc_layer, num_encoder_layers, LayerNorm(d_model))
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            dec_layer = TransformerDecoderLayer(d_model, nhead, dim_feedforward, dropout,
                                                activation, attn_dropout, act_dropout,
                                                normalize_before, dec_w, dec_b)
            self.decoder = TransformerDecoder(dec_layer, num_decoder_layers, LayerNorm(d_model))
        self.d_model = d_model
        self.nhead = nhead

    def forward(self, src, tgt, src_mask=None, tgt_mask=None, memory_mask=None):
        src_mask = _convert_attention_mask(src_mask, src.dtype)
        memory = self.encoder(src, src_mask=src_mask)
        tgt_mask = _convert_attention_mask(tgt_mask, tgt.dtype)
        memory_mask = _convert_attention_mask(memory_mask, memory.dtype)
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask)

    @staticmethod
    def generate_square_subsequent_mask(length):
        """A ``[length, length]`` float mask: 0 on and below the diagonal, -inf above
        (position i may attend to positions <= i)."""
        if hasattr(length, "item"):
            length = int(length.item())
        keep = fw.tril(fw.ones([length, length], dtype="bool"))
        dt = fw.get_default_dtype()
        return fw.where(keep, fw.zeros([length, length], dtype=dt),
                        fw.full([length, length], float("-inf"), dt))
