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
        attn_dropout = dropout if attn_dropout is None else attn_dropout
        act_dropout = dropout if act_dropout is None else act_dropout
        self.normalize_before = normalize_before
        w = _param_attrs(weight_attr, 2)
        b = _param_attrs(bias_attr, 2)
        self.self_attn = MultiHeadAttention(d_model, nhead, attn_dropout, weight_attr=w[0],
                                            bias_attr=b[0])
        self.linear1 = Linear(d_model, dim_feedforward, w[1], b[1])
        self.dropout = Dropout(act_dropout, mode="upscale_in_train")
        self.linear2 = Linear(dim_feedforward, d_model, w[1], b[1])
        self.norm1 = LayerNorm(d_model, layer_norm_eps)
        self.norm2 = LayerNorm(d_model, layer_norm_eps)
        self.dropout1 = Dropout(dropout, mode="upscale_in_train")
        self.dropout2 = Dropout(dropout, mode="upscale_in_train")
        self.activation = _activation(activation)

    def forward(self, src, src_mask=None, cache=None):
        src_mask = _convert_attention_mask(src_mask, src.dtype)
        residual = src
        if self.normalize_before:
            src = self.norm1(src)
        if cache is None:
            src = self.self_attn(src, src, src, src_mask)
        else:
            src, cache = self.self_attn(src, src, src, src_mask, cache)
        src = residual + self.dropout1(src)
        if not self.normalize_before:
            src = self.norm1(src)
        residual = src
        if self.normalize_before:
            src = self.norm2(src)
        src = self.linear2(self.dropout(self.activation(self.linear1(src))))
        src = residual + self.dropout2(src)
        if not self.normalize_before:
            src = self.norm2(src)
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
        attn_dropout = dropout if attn_dropout is None else attn_dropout
        act_dropout = dropout if act_dropout is None else act_dropout
        self.normalize_before = normalize_before
        w = _param_attrs(weight_attr, 3)
        b = _param_attrs(bias_attr, 3)
        self.self_attn = MultiHeadAttention(d_model, nhead, attn_dropout, weight_attr=w[0],
                                            bias_attr=b[0])
        self.cross_attn = MultiHeadAttention(d_model, nhead, attn_dropout, weight_attr=w[1],
                                             bias_attr=b[1])
        self.linear1 = Linear(d_model, dim_feedforward, w[2], b[2])
        self.dropout = Dropout(act_dropout, mode="upscale_in_train")
        self.linear2 = Linear(dim_feedforward, d_model, w[2], b[2])
        self.norm1 = LayerNorm(d_model, layer_norm_eps)
        self.norm2 = LayerNorm(d_model, layer_norm_eps)
        self.norm3 = LayerNorm(d_model, layer_norm_eps)
        self.dropout1 = Dropout(dropout, mode="upscale_in_train")
        self.dropout2 = Dropout(dropout, mode="upscale_in_train")
        self.dropout3 = Dropout(dropout, mode="upscale_in_train")
        self.activation = _activation(activation)

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, cache=None):
        tgt_mask = _convert_attention_mask(tgt_mask, tgt.dtype)
        memory_mask = _convert_attention_mask(memory_mask, memory.dtype)
        residual = tgt
        if self.normalize_before:
            tgt = self.norm1(tgt)
        if cache is None:
            tgt = self.self_attn(tgt, tgt, tgt, tgt_mask, None)
        else:
            tgt, incremental = self.self_attn(tgt, tgt, tgt, tgt_mask, cache[0])
        tgt = residual + self.dropout1(tgt)
        if not self.normalize_before:
            tgt = self.norm1(tgt)
        residual = tgt
        if self.normalize_before:
            tgt = self.norm2(tgt)
        if cache is None:
            tgt = self.cross_attn(tgt, memory, memory, memory_mask, None)
        else:
            tgt, static = self.cross_attn(tgt, memory, memory, memory_mask, cache[1])
        tgt = residual + self.dropout2(tgt)
        if not self.normalize_before:
            tgt = self.norm2(tgt)
        residual = tgt
        if self.normalize_before:
            tgt = self.norm3(tgt)
        tgt = self.linear2(self.dropout(self.activation(self.linear1(tgt))))
        tgt = residual + self.dropout3(tgt)
        if not self.normalize_before:
            tgt = self.norm3(tgt)
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
        if isinstance(weight_attr, (list, tuple)):
            if len(weight_attr) == 1:
                enc_w = dec_w = weight_attr[0]
            elif len(weight_attr) == 2:
                enc_w, dec_w = weight_attr[0], weight_attr
            else:
                enc_w, dec_w = [weight_attr[0], weight_attr[-1]], weight_attr
        else:
            enc_w = dec_w = weight_attr
        if isinstance(bias_attr, (list, tuple)):
            if len(bias_attr) == 1:
                enc_b = dec_b = bias_attr[0]
            elif len(bias_attr) == 2:
                enc_b, dec_b = bias_attr[0], bias_attr
            else:
                enc_b, dec_b = [bias_attr[0], bias_attr[-1]], bias_attr
        else:
            enc_b = dec_b = bias_attr
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
