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

    The query, key and value are projected, split into ``num_heads`` heads of size
    ``embed_dim / num_heads``, attended with ``softmax(q @ k^T / sqrt(head_dim) + mask) @ v``
    and merged through ``out_proj``. ``forward(query, key=None, value=None,
    attn_mask=None, cache=None)``: ``key`` and ``value`` each default to the query (so
    cross-attention passes both).
    It returns ``out``, or a tuple ``(out, weights)`` with ``need_weights`` and
    ``(..., new_cache)`` when a cache is given.

    Masks broadcast to ``[batch, num_heads, len_q, len_k]``: a bool (or int) mask keeps
    the True (non-zero) positions; a float mask is added to the attention scores
    (``-inf`` blocks a position).

    For incremental decoding, `gen_cache` makes a ``Cache`` (keys and values that grow
    at every step) or a ``StaticCache`` (precomputed keys and values of a fixed memory).

    Args:
        embed_dim (int): the model width (query size and output size).
        num_heads (int): the number of heads; must divide ``embed_dim``.
        dropout (float, optional): dropout on the attention weights while training.
            Default: 0.0.
        kdim (int, optional): the key feature size; ``embed_dim`` when None. Default: None.
        vdim (int, optional): the value feature size; ``embed_dim`` when None. Default: None.
        need_weights (bool, optional): also return the attention weights. Default: False.
        weight_attr (ParamAttr, optional): attributes of the four projection weights.
            Default: None.
        bias_attr (ParamAttr|bool, optional): attributes of their biases; False for none.
            Default: None.

    Shape:
        - query: ``[B, L_q, embed_dim]``; key: ``[B, L_k, kdim]``; value: ``[B, L_k, vdim]``.
        - output: ``[B, L_q, embed_dim]``; weights: ``[B, num_heads, L_q, L_k]``.

    Examples:
        >>> import fw
        >>> mha = fw.nn.MultiHeadAttention(embed_dim=16, num_heads=2)
        >>> x = fw.randn([2, 4, 16])
        >>> mha(x).shape
        [2, 4, 16]
        >>> causal = fw.tril(fw.ones([4, 4], dtype='bool'))
        >>> mha(x, attn_mask=causal).shape
        [2, 4, 16]
        >>> memory = fw.randn([2, 6, 16])
        >>> out, w = fw.nn.MultiHeadAttention(16, 2, need_weights=True)(x, memory, memory)
        >>> out.shape, w.shape
        ([2, 4, 16], [2, 2, 4, 6])
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
        """Project ``key`` and ``value`` and split them into heads.

        Args:
            key (Tensor): ``[B, L, kdim]``.
            value (Tensor): ``[B, L, vdim]``.

        Returns:
            tuple[Tensor, Tensor]: keys and values, each ``[B, num_heads, L, head_dim]``.

        Examples:
            >>> import fw
            >>> mha = fw.nn.MultiHeadAttention(16, 2)
            >>> k, v = mha.compute_kv(fw.ones([2, 5, 16]), fw.ones([2, 5, 16]))
            >>> k.shape
            [2, 2, 5, 8]
        """
        return self._heads(self.k_proj(key)), self._heads(self.v_proj(value))

    def gen_cache(self, key, value=None, type=Cache):  # noqa: A002
        """Make a cache for incremental decoding.

        With ``type=MultiHeadAttention.StaticCache`` the keys and values of ``key`` (and
        ``value``) are projected once, for cross-attention over a fixed memory. With the
        default ``Cache`` the given ``key``/``value`` are the cache, or, when ``value`` is
        None, an empty cache (length 0) with ``key``'s batch size; every forward with a
        ``Cache`` appends the new keys and values and returns the grown cache.

        Args:
            key (Tensor): the memory (StaticCache), or the batch reference / cached keys.
            value (Tensor, optional): the values; see above. Default: None.
            type (type, optional): ``MultiHeadAttention.Cache`` or
                ``MultiHeadAttention.StaticCache``. Default: MultiHeadAttention.Cache.

        Returns:
            Cache|StaticCache: a namedtuple ``(k, v)`` of ``[B, num_heads, L, head_dim]`` tensors.

        Examples:
            >>> import fw
            >>> mha = fw.nn.MultiHeadAttention(16, 2)
            >>> cache = mha.gen_cache(fw.ones([2, 1, 16]))
            >>> for step in range(3):
            ...     out, cache = mha(fw.randn([2, 1, 16]), cache=cache)
            >>> cache.k.shape
            [2, 2, 3, 8]
        """
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
    """One Transformer encoder layer: a self-attention block and a feed-forward block,
    each with a residual connection and a LayerNorm (after the block by default, before
    it with ``normalize_before``).

    ``forward(src, src_mask=None, cache=None)`` returns the output (and the new cache
    when one is given).

    Masks broadcast to ``[batch, num_heads, len_q, len_k]``: a bool (or int) mask keeps
    the True (non-zero) positions; a float mask is added to the attention scores
    (``-inf`` blocks a position).

    Args:
        d_model (int): the model width (input and output feature size).
        nhead (int): the number of attention heads; must divide ``d_model``.
        dim_feedforward (int): the hidden size of the feed-forward block.
        dropout (float, optional): dropout on the residual branches, and by default on the
            attention weights and after the activation. Default: 0.1.
        activation (str, optional): a `fw.nn.functional` activation name, e.g. ``"relu"``
            or ``"gelu"``. Default: "relu".
        attn_dropout (float, optional): dropout on the attention weights; ``dropout`` when
            None. Default: None.
        act_dropout (float, optional): dropout after the activation; ``dropout`` when None.
            Default: None.
        normalize_before (bool, optional): pre-norm (LayerNorm before each block) instead of
            post-norm. Default: False.
        weight_attr (ParamAttr|list, optional): one attr for every weight, or a list of 2
            (attention, feed-forward). Default: None.
        bias_attr (ParamAttr|list|bool, optional): the same for the biases. Default: None.
        layer_norm_eps (float, optional): the LayerNorm epsilon. Default: 1e-05.

    Shape:
        - src: ``[B, L, d_model]``; src_mask: broadcastable to ``[B, nhead, L, L]``.
        - output: ``[B, L, d_model]``.

    Examples:
        >>> import fw
        >>> layer = fw.nn.TransformerEncoderLayer(d_model=16, nhead=2, dim_feedforward=32)
        >>> layer(fw.randn([2, 5, 16])).shape
        [2, 5, 16]
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
        """An empty incremental self-attention cache with ``src``'s batch size.

        Args:
            src (Tensor): ``[B, L, d_model]``, used for its batch size.

        Returns:
            MultiHeadAttention.Cache: the empty cache.

        Examples:
            >>> import fw
            >>> layer = fw.nn.TransformerEncoderLayer(16, 2, 32)
            >>> layer.gen_cache(fw.ones([3, 1, 16])).k.shape
            [3, 2, 0, 8]
        """
        return self.self_attn.gen_cache(src, type=MultiHeadAttention.Cache)


def _clones(layer, n):
    """`layer` plus n-1 fresh layers of the same configuration (new parameters)."""
    out = [layer]
    for _ in range(n - 1):
        cfg = getattr(layer, "_config", None)
        out.append(type(layer)(**cfg) if cfg is not None else copy.deepcopy(layer))
    return out


class TransformerEncoder(Layer):
    """A stack of ``num_layers`` encoder layers followed by an optional norm.

    The first layer is ``encoder_layer`` itself, the others new layers of the same
    configuration (with their own parameters). ``forward(src, src_mask=None,
    cache=None)``.

    Args:
        encoder_layer (TransformerEncoderLayer): the first layer and the template of the
            others.
        num_layers (int): the number of layers.
        norm (Layer, optional): applied to the output, e.g. a LayerNorm. Default: None.
        enable_recompute (bool, optional): accepted for Paddle compatibility. Default: False.

    Shape:
        - src: ``[B, L, d_model]``; output: the same shape.

    Examples:
        >>> import fw
        >>> layer = fw.nn.TransformerEncoderLayer(16, 2, 32)
        >>> encoder = fw.nn.TransformerEncoder(layer, num_layers=3, norm=fw.nn.LayerNorm(16))
        >>> len(encoder.layers), encoder(fw.randn([2, 5, 16])).shape
        (3, [2, 5, 16])
    """

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
        """One empty incremental self-attention cache per layer, with ``src``'s batch size.

        Args:
            src (Tensor): ``[B, L, d_model]``, used for its batch size.

        Returns:
            list[MultiHeadAttention.Cache]: the caches.

        Examples:
            >>> import fw
            >>> enc = fw.nn.TransformerEncoder(fw.nn.TransformerEncoderLayer(16, 2, 32), 2)
            >>> caches = enc.gen_cache(fw.ones([3, 1, 16]))
            >>> len(caches), caches[0].k.shape
            (2, [3, 2, 0, 8])
        """
        return [layer.gen_cache(src) for layer in self.layers]


class TransformerDecoderLayer(Layer):
    """One Transformer decoder layer: self-attention over the target, cross-attention
    over the encoder output ``memory``, and a feed-forward block, each with a residual
    connection and a LayerNorm.

    ``forward(tgt, memory, tgt_mask=None, memory_mask=None, cache=None)``; ``cache`` is
    ``(Cache, StaticCache)`` as `gen_cache` makes it, and with a cache the layer returns
    ``(out, new_cache)``.

    Masks broadcast to ``[batch, num_heads, len_q, len_k]``: a bool (or int) mask keeps
    the True (non-zero) positions; a float mask is added to the attention scores
    (``-inf`` blocks a position).

    Args:
        d_model (int): the model width (input and output feature size).
        nhead (int): the number of attention heads; must divide ``d_model``.
        dim_feedforward (int): the hidden size of the feed-forward block.
        dropout (float, optional): dropout on the residual branches, and by default on the
            attention weights and after the activation. Default: 0.1.
        activation (str, optional): a `fw.nn.functional` activation name, e.g. ``"relu"``
            or ``"gelu"``. Default: "relu".
        attn_dropout (float, optional): dropout on the attention weights; ``dropout`` when
            None. Default: None.
        act_dropout (float, optional): dropout after the activation; ``dropout`` when None.
            Default: None.
        normalize_before (bool, optional): pre-norm (LayerNorm before each block) instead of
            post-norm. Default: False.
        weight_attr (ParamAttr|list, optional): one attr for every weight, or a list of 3
            (self-attention, cross-attention, feed-forward). Default: None.
        bias_attr (ParamAttr|list|bool, optional): the same for the biases. Default: None.
        layer_norm_eps (float, optional): the LayerNorm epsilon. Default: 1e-05.

    Shape:
        - tgt: ``[B, L_t, d_model]``; memory: ``[B, L_s, d_model]``.
        - output: ``[B, L_t, d_model]``.

    Examples:
        >>> import fw
        >>> layer = fw.nn.TransformerDecoderLayer(d_model=16, nhead=2, dim_feedforward=32)
        >>> tgt, memory = fw.randn([2, 4, 16]), fw.randn([2, 6, 16])
        >>> mask = fw.nn.Transformer.generate_square_subsequent_mask(4)
        >>> layer(tgt, memory, tgt_mask=mask).shape
        [2, 4, 16]
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
        """Caches for incremental decoding: an empty self-attention ``Cache`` and the
        cross-attention ``StaticCache`` of ``memory``.

        Args:
            memory (Tensor): the encoder output ``[B, L_s, d_model]``.

        Returns:
            tuple: ``(MultiHeadAttention.Cache, MultiHeadAttention.StaticCache)``.

        Examples:
            >>> import fw
            >>> layer = fw.nn.TransformerDecoderLayer(16, 2, 32)
            >>> memory = fw.randn([2, 6, 16])
            >>> cache = layer.gen_cache(memory)
            >>> out, cache = layer(fw.randn([2, 1, 16]), memory, cache=cache)
            >>> cache[0].k.shape, cache[1].k.shape
            ([2, 2, 1, 8], [2, 2, 6, 8])
        """
        incremental = self.self_attn.gen_cache(memory, type=MultiHeadAttention.Cache)
        static = self.cross_attn.gen_cache(memory, memory, type=MultiHeadAttention.StaticCache)
        return incremental, static


class TransformerDecoder(Layer):
    """A stack of ``num_layers`` decoder layers followed by an optional norm (the first
    layer is ``decoder_layer``, the others new layers of its configuration).
    ``forward(tgt, memory, tgt_mask=None, memory_mask=None, cache=None)``.

    Args:
        decoder_layer (TransformerDecoderLayer): the first layer and the template.
        num_layers (int): the number of layers.
        norm (Layer, optional): applied to the output. Default: None.

    Shape:
        - tgt: ``[B, L_t, d_model]``; memory: ``[B, L_s, d_model]``.
        - output: ``[B, L_t, d_model]``.

    Examples:
        >>> import fw
        >>> layer = fw.nn.TransformerDecoderLayer(16, 2, 32)
        >>> decoder = fw.nn.TransformerDecoder(layer, 2)
        >>> decoder(fw.randn([2, 4, 16]), fw.randn([2, 6, 16])).shape
        [2, 4, 16]
    """

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
        """One ``(Cache, StaticCache)`` pair per layer for incremental decoding;
        ``do_zip=True`` regroups them as ``(all Caches, all StaticCaches)``.

        Args:
            memory (Tensor): the encoder output ``[B, L_s, d_model]``.
            do_zip (bool, optional): regroup the caches. Default: False.

        Returns:
            list: the per-layer caches.

        Examples:
            >>> import fw
            >>> decoder = fw.nn.TransformerDecoder(fw.nn.TransformerDecoderLayer(16, 2, 32), 2)
            >>> len(decoder.gen_cache(fw.randn([2, 6, 16])))
            2
        """
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
    """The encoder-decoder Transformer of "Attention Is All You Need" (Vaswani et al.,
    2017), with a final LayerNorm after each stack.

    ``forward(src, tgt, src_mask=None, tgt_mask=None, memory_mask=None)`` encodes
    ``src`` and decodes ``tgt`` against it.

    Masks broadcast to ``[batch, num_heads, len_q, len_k]``: a bool (or int) mask keeps
    the True (non-zero) positions; a float mask is added to the attention scores
    (``-inf`` blocks a position).

    Args:
        d_model (int, optional): the model width. Default: 512.
        nhead (int, optional): the number of heads. Default: 8.
        num_encoder_layers (int, optional): encoder layers. Default: 6.
        num_decoder_layers (int, optional): decoder layers. Default: 6.
        dim_feedforward (int, optional): the feed-forward hidden size. Default: 2048.
        dropout (float, optional): the dropout rate. Default: 0.1.
        activation (str, optional): the feed-forward activation. Default: "relu".
        attn_dropout (float, optional): dropout on the attention weights. Default: None.
        act_dropout (float, optional): dropout after the activation. Default: None.
        normalize_before (bool, optional): pre-norm layers. Default: False.
        weight_attr (ParamAttr|list, optional): weight attributes, one or per block.
            Default: None.
        bias_attr (ParamAttr|list|bool, optional): bias attributes. Default: None.
        custom_encoder (Layer, optional): used instead of the built encoder. Default: None.
        custom_decoder (Layer, optional): used instead of the built decoder. Default: None.

    Shape:
        - src: ``[B, L_s, d_model]``; tgt: ``[B, L_t, d_model]``.
        - output: ``[B, L_t, d_model]``.

    Examples:
        >>> import fw
        >>> model = fw.nn.Transformer(d_model=16, nhead=2, num_encoder_layers=1,
        ...                        num_decoder_layers=1, dim_feedforward=32)
        >>> src, tgt = fw.randn([2, 5, 16]), fw.randn([2, 3, 16])
        >>> mask = model.generate_square_subsequent_mask(3)
        >>> model(src, tgt, tgt_mask=mask).shape
        [2, 3, 16]
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
        """A causal mask: ``[length, length]`` float, 0 on and below the diagonal and
        ``-inf`` above it, so position ``i`` attends only to positions ``<= i``.

        Args:
            length (int|Tensor): the sequence length.

        Returns:
            Tensor: the mask, in the default float dtype.

        Examples:
            >>> import fw
            >>> fw.nn.Transformer.generate_square_subsequent_mask(3).tolist()
            [[0.0, -inf, -inf], [0.0, 0.0, -inf], [0.0, 0.0, 0.0]]
        """
        if hasattr(length, "item"):
            length = int(length.item())
        keep = fw.tril(fw.ones([length, length], dtype="bool"))
        dt = fw.get_default_dtype()
        return fw.where(keep, fw.zeros([length, length], dtype=dt),
                        fw.full([length, length], float("-inf"), dt))
