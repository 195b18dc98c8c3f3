"""Megatron-style tensor-parallel layers (Paddle's ``fleet.meta_parallel``).

The splits (Shoeybi et al., 2019, "Megatron-LM", section 3):

- `ColumnParallelLinear`: the weight ``[in, out]`` is split by columns, rank r
  holds ``W[:, r*out/n:(r+1)*out/n]`` (and that block of the bias); the input is
  replicated; the output is the local block, or (``gather_output=True``) all
  blocks gathered.
- `RowParallelLinear`: the weight is split by rows, rank r holds
  ``W[r*in/n:(r+1)*in/n, :]``; the input is split along its last axis (or already
  is: ``input_is_parallel=True``, the output of a column-parallel layer); the
  partial products are all-reduced, then the (replicated) bias is added.
- `VocabParallelEmbedding`: the table ``[V, D]`` is split by rows (vocabulary
  ranges); ids outside my range look up zeros; the partial lookups are
  all-reduced.
- `ParallelCrossEntropy`: softmax cross-entropy over logits whose class axis is
  split like the vocabulary: the maximum, the sum of exponentials and the
  target's logit are all-reduced, so no rank ever holds the full logits.

Initialisation: a split parameter is drawn at its full (dense) shape with the
dense layer's initializer — the same random draws as `nn.Linear`/`nn.Embedding` —
and this rank keeps its block. So under the same seed a tensor-parallel model
starts *equal* to its dense counterpart (Paddle draws each block from a separate
per-rank generator instead; equality with the dense model is what fw's tests check).
`split_weight` / `split_bias` give rank r's block of a dense parameter, so a dense
model's weights load into the parallel one. With a model-parallel group of one
rank each layer is its dense counterpart.
"""

from __future__ import annotations

import numpy as np

import fw
import fw.nn.functional as F
from fw.autograd import PyLayer
from fw.core.tensor import wrap
from fw.distributed import _fleet_comm as comm
from fw.distributed.fleet.meta_parallel.mp_ops import (
    allreduce_mp,
    gather_mp,
    identity_to_mp,
    split_mp,
)
from fw.nn import Layer

__all__ = ["ColumnParallelLinear", "RowParallelLinear", "VocabParallelEmbedding",
           "ParallelCrossEntropy", "split_weight", "split_bias"]


def _mp_group(mp_group):
    if mp_group is not None:
        return mp_group
    from fw.distributed.fleet import fleet_base

    hcg = fleet_base._hcg_or_none()
    if hcg is None:
        return comm.self_group()
    return hcg.get_model_parallel_group()


def _block_param(full, block):
    """A parameter holding `block` (this rank's part of `full`) with `full`'s name
    and optimisation attributes."""
    from fw.nn.parameter import Parameter

    p = Parameter(block, requires_grad=not full.stop_gradient, name=full.name)
    for a in ("optimize_attr", "regularizer", "need_clip", "do_model_average"):
        if hasattr(full, a):
            setattr(p, a, getattr(full, a))
    return p


def _divide(n, k, layer, what):
    if n % k:
        raise ValueError(f"{layer}: {what} ({n}) must be divisible by the model-parallel "
                         f"degree ({k})")
    return n // k


def split_weight(dense, kind, rank, nranks):
    """Rank `rank`'s block of a dense weight (numpy) for a parallel layer of `kind`
    ``"column"`` (split the last axis) or ``"row"``/``"vocab"`` (split the first)."""
    a = np.asarray(dense)
    if kind == "column":
        k = a.shape[-1] // nranks
        return np.ascontiguousarray(a[..., rank * k:(rank + 1) * k])
    if kind in ("row", "vocab"):
        k = a.shape[0] // nranks
        return np.ascontiguousarray(a[rank * k:(rank + 1) * k])
    raise ValueError(f"split_weight: kind must be 'column', 'row' or 'vocab', got {kind!r}")


def split_bias(dense, kind, rank, nranks):
    """Rank `rank`'s part of a dense bias: a block for ``"column"``, all of it for
    ``"row"`` (the row-parallel bias is replicated)."""
    a = np.asarray(dense)
    if kind == "column":
        k = a.shape[-1] // nranks
        return np.ascontiguousarray(a[rank * k:(rank + 1) * k])
    return a.copy()


class ColumnParallelLinear(Layer):
    """``y = x W + b`` with `W` split by columns over the model-parallel group
    (Megatron's column-parallel linear; Paddle's ``fleet.meta_parallel``).

    Args:
        in_features (int): input features.
        out_features (int): output features (divisible by the model-parallel degree).
        weight_attr (ParamAttr, optional): the weight's attributes. Default: None.
        has_bias (bool, optional): add a bias (None: yes). Default: None.
        gather_output (bool, optional): all-gather the output columns (else each rank
            keeps its slice). Default: True.
        fuse_matmul_bias (bool, optional): accepted for Paddle's API. Default: False.
        mp_group (Group, optional): the model-parallel group; default fleet's.
        name (str, optional): unused. Default: None.

    Examples:
        >>> import fw
        >>> from fw.distributed.fleet.meta_parallel import ColumnParallelLinear
        >>> layer = ColumnParallelLinear(4, 6, gather_output=True)   # 1 rank: unsplit
        >>> layer(fw.ones([2, 4])).shape, layer.weight.shape
        ([2, 6], [4, 6])
    """

    def __init__(self, in_features, out_features, weight_attr=None, has_bias=None,
                 gather_output=True, fuse_matmul_bias=False, mp_group=None, name=None):
        super().__init__()
        self.model_parallel_group = _mp_group(mp_group)
        self.world_size = self.model_parallel_group.nranks
        self.is_mp = self.world_size > 1
        self.in_features = in_features
        self.out_features = out_features
        self.output_size_per_partition = _divide(out_features, self.world_size,
                                                 "ColumnParallelLinear", "out_features")
        self.gather_output = gather_output
        g = self.model_parallel_group
        w = self.create_parameter([in_features, out_features], attr=weight_attr)
        if self.is_mp:
            w = _block_param(w, split_weight(w._data, "column", g.rank, g.nranks))
        self.weight = w
        self.weight.is_distributed = self.is_mp
        self.weight.split_axis = 1
        if has_bias is None or has_bias:
            b = self.create_parameter([out_features], is_bias=True)
            if self.is_mp:
                b = _block_param(b, split_bias(b._data, "column", g.rank, g.nranks))
            self.bias = b
            self.bias.is_distributed = self.is_mp
            self.bias.split_axis = 0
        else:
            self.bias = None

    def forward(self, x):
        x = identity_to_mp(x, self.model_parallel_group)
        y = F.linear(x, self.weight, self.bias)
        if self.gather_output:
            y = gather_mp(y, self.model_parallel_group)
        return y


class RowParallelLinear(Layer):
    """``y = x W + b`` with `W` split by rows over the model-parallel group; the
    partial products are all-reduced.

    Args:
        in_features (int): input features (divisible by the model-parallel degree).
        out_features (int): output features.
        weight_attr (ParamAttr, optional): the weight's attributes. Default: None.
        has_bias (bool, optional): add a bias. Default: True.
        input_is_parallel (bool, optional): the input is already split along its last
            axis (the output of a ``ColumnParallelLinear(gather_output=False)``).
            Default: False.
        fuse_matmul_bias (bool, optional): accepted for Paddle's API. Default: False.
        mp_group (Group, optional): the model-parallel group; default fleet's.
        name (str, optional): unused. Default: None.

    Examples:
        >>> import fw
        >>> from fw.distributed.fleet.meta_parallel import RowParallelLinear
        >>> RowParallelLinear(6, 3)(fw.ones([2, 6])).shape
        [2, 3]
    """

    def __init__(self, in_features, out_features, weight_attr=None, has_bias=True,
                 input_is_parallel=False, fuse_matmul_bias=False, mp_group=None, name=None):
        super().__init__()
        self.model_parallel_group = _mp_group(mp_group)
        self.world_size = self.model_parallel_group.nranks
        self.is_mp = self.world_size > 1
        self.in_features = in_features
        self.out_features = out_features
        self.input_is_parallel = input_is_parallel
        self.input_size_per_partition = _divide(in_features, self.world_size,
                                                "RowParallelLinear", "in_features")
        g = self.model_parallel_group
        w = self.create_parameter([in_features, out_features], attr=weight_attr)
        if self.is_mp:
            w = _block_param(w, split_weight(w._data, "row", g.rank, g.nranks))
        self.weight = w
        self.weight.is_distributed = self.is_mp
        self.weight.split_axis = 0
        self.bias = self.create_parameter([out_features], is_bias=True) if has_bias else None

    def forward(self, x):
        if not self.input_is_parallel:
            x = split_mp(x, self.model_parallel_group)
        y = F.linear(x, self.weight)
        y = allreduce_mp(y, self.model_parallel_group)
        if self.bias is not None:
            y = y + self.bias
        return y


class VocabParallelEmbedding(Layer):
    """An embedding table split by vocabulary rows over the model-parallel group: each
    rank looks up the ids in its range and the results are all-reduced.

    Args:
        num_embeddings (int): the vocabulary size (divisible by the degree).
        embedding_dim (int): the vector size.
        weight_attr (ParamAttr, optional): the table's attributes. Default: None.
        mp_group (Group, optional): the model-parallel group; default fleet's.
        name (str, optional): unused. Default: None.

    Examples:
        >>> import fw
        >>> from fw.distributed.fleet.meta_parallel import VocabParallelEmbedding
        >>> VocabParallelEmbedding(10, 4)(fw.to_tensor([[1, 2]])).shape
        [1, 2, 4]
    """

    def __init__(self, num_embeddings, embedding_dim, weight_attr=None, mp_group=None,
                 name=None):
        super().__init__()
        self.model_parallel_group = _mp_group(mp_group)
        self.world_size = self.model_parallel_group.nranks
        self.rank = max(self.model_parallel_group.rank, 0)
        self.is_mp = self.world_size > 1
        self.num_embeddings = num_embeddings
        per = _divide(num_embeddings, self.world_size, "VocabParallelEmbedding",
                      "num_embeddings")  # rows per rank
        self.vocab_start_index = self.rank * per
        self.vocab_end_index = self.vocab_start_index + per
        from fw.nn.initializer import XavierUniform

        w = self.create_parameter([num_embeddings, embedding_dim], attr=weight_attr,
                                  default_initializer=XavierUniform())
        if self.is_mp:
            w = _block_param(w, split_weight(w._data, "vocab", self.rank, self.world_size))
        self.weight = w
        self.weight.is_distributed = self.is_mp
        self.weight.split_axis = 0

    def forward(self, x):
        if not self.is_mp:
            return F.embedding(x, self.weight)
        ids = x._data if hasattr(x, "_data") else np.asarray(x)
        if ids.dtype.kind not in "iu":
            raise TypeError(f"VocabParallelEmbedding: ids must be integers, got {ids.dtype}")
        if ids.size and (ids.min() < 0 or ids.max() >= self.num_embeddings):
            raise ValueError(f"VocabParallelEmbedding: ids must lie in [0, "
                             f"{self.num_embeddings}), got values in [{ids.min()}, "
                             f"{ids.max()}]")
        mine = (ids >= self.vocab_start_index) & (ids < self.vocab_end_index)
        local = np.where(mine, ids - self.vocab_start_index, 0)
        out = F.embedding(fw.to_tensor(local), self.weight)
        out = out * fw.to_tensor(mine[..., None].astype(out._data.dtype))
        return allreduce_mp(out, self.model_parallel_group)


class _ParallelCE(PyLayer):
    """Softmax cross-entropy of class-split logits; returns per-example losses."""

    @staticmethod
    def forward(ctx, logits, label, group, start, ignore_index):
        z = logits._data
        lab = label
        local_max = z.max(axis=-1).astype(z.dtype)
        gmax = np.ascontiguousarray(local_max)
        comm.all_reduce(gmax, op="max", group=group)
        e = np.exp(z - gmax[..., None])
        s = np.ascontiguousarray(e.sum(axis=-1))
        comm.all_reduce(s, group=group)
        k = z.shape[-1]
        mine = (lab >= start) & (lab < start + k)
        idx = np.where(mine, lab - start, 0)
        picked = np.take_along_axis(z, idx[..., None], axis=-1)[..., 0]
        tgt = np.ascontiguousarray(np.where(mine, picked, 0).astype(z.dtype))
        comm.all_reduce(tgt, group=group)
        valid = lab != ignore_index
        loss = np.where(valid, np.log(s) + gmax - tgt, 0).astype(z.dtype)
        ctx.softmax = e / s[..., None]
        ctx.idx, ctx.mine, ctx.valid = idx, mine, valid
        return wrap(loss[..., None])

    @staticmethod
    def backward(ctx, dy):
        g = ctx.softmax.copy()
        onehot = np.zeros_like(g)
        np.put_along_axis(onehot, ctx.idx[..., None], 1.0, axis=-1)
        g -= onehot * ctx.mine[..., None]
        g *= (dy._data[..., 0] * ctx.valid)[..., None]
        return wrap(g.astype(ctx.softmax.dtype))


class ParallelCrossEntropy(Layer):
    """Cross-entropy of logits split along the class axis (the output of a
    `ColumnParallelLinear` with ``gather_output=False``). ``forward(input, label)``
    returns the per-example loss with a trailing axis of 1 (Paddle's shape);
    examples whose label is `ignore_index` get 0.

    Args:
        mp_group (Group, optional): the model-parallel group; default fleet's.
        name (str, optional): unused. Default: None.
        ignore_index (int, optional): the label that contributes no loss. Default: -100.

    Examples:
        >>> import fw
        >>> from fw.distributed.fleet.meta_parallel import ParallelCrossEntropy
        >>> loss = ParallelCrossEntropy()(fw.randn([3, 5]), fw.to_tensor([[0], [1], [2]]))
        >>> loss.shape
        [3, 1]
    """

    def __init__(self, mp_group=None, name=None, ignore_index=-100):
        super().__init__()
        self.model_parallel_group = _mp_group(mp_group)
        self.world_size = self.model_parallel_group.nranks
        self.rank = max(self.model_parallel_group.rank, 0)
        self.ignore_index = ignore_index

    def forward(self, input, label):
        lab = label._data if hasattr(label, "_data") else np.asarray(label)
        if lab.ndim == input.ndim and lab.shape[-1] == 1:
            lab = lab[..., 0]
        if list(lab.shape) != list(input.shape[:-1]):
            raise ValueError(f"ParallelCrossEntropy: label shape {list(lab.shape)} does not "
                             f"match the logits' {list(input.shape)} (expected "
                             f"{list(input.shape[:-1])} or with a trailing 1)")
        if lab.dtype.kind not in "iu":
            raise TypeError(f"ParallelCrossEntropy: label must be integer, got {lab.dtype}")
        k = input.shape[-1]
        return _ParallelCE.apply(input, lab.astype(np.int64), self.model_parallel_group,
                                 self.rank * k, self.ignore_index)
